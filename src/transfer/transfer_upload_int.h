/* transfer_upload_int.h: the transfer engine's resumable blob upload
 * (transfer_upload.c), for transfer.c and the unit tests; not installed. */
#ifndef AIRLOCK_TRANSFER_UPLOAD_INT_H
#define AIRLOCK_TRANSFER_UPLOAD_INT_H

#include "airlock/clock.h"
#include "airlock/digest.h"
#include "airlock/registry.h"

/* One blob to upload; every pointer borrowed. */
typedef struct al_transfer_upload {
	al_registry *reg;
	const char *repo;
	const al_digest *digest;
	uint64_t size;       /* > 0 */
	int fd;              /* the blob file, read with pread */
	uint64_t chunk_size; /* bytes per PATCH, > 0 */
	/* where sessions are kept across runs (created 0700 when missing);
	 * NULL: within this call only */
	const char *state_dir;
	al_cancel *cancel; /* may be NULL */
	void (*progress)(void *ud, uint64_t n);
	void *progress_ud;
} al_transfer_upload;

typedef struct al_transfer_upload_info {
	int resumed;         /* a session was continued (kept or retried) */
	uint64_t resumed_at; /* the byte a kept session continued at */
	unsigned restarted;  /* sessions begun again from byte 0 */
} al_transfer_upload_info;

/*
 * Upload u->size bytes of u->fd in PATCH chunks (POST, PATCH..., PUT
 * ?digest=). A session kept in u->state_dir for this registry,
 * repository and digest is continued where the registry says it stands
 * (GET); after each acknowledged chunk the session is kept again, and it
 * is removed once the registry took the blob. A chunk that fails asks
 * the status and goes on from there, or begins a new session when the
 * registry dropped the old one (at most 4 failed chunks). 0 once the
 * registry confirmed the blob (201); the registry verifies the digest.
 */
int al_transfer__upload(const al_transfer_upload *u,
                        al_transfer_upload_info *info);

/* The registry holds the blob already (HEAD, a mount): a session kept
 * for it in state_dir (NULL: none) is of no further use and removed. */
void al_transfer__upload_forget(const char *state_dir, const char *host,
                                const char *repo, const al_digest *d);

#endif
