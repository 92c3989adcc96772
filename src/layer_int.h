/* layer_int.h (internal): one image layer blob of the store read as a
 * stream: its media type checked, its bytes hashed and bounded by its
 * descriptor as libarchive pulls them (gzip or plain tar), its entries
 * handed one by one to the caller. Used by release.c (release-manifests/,
 * manifests/) and catalog_image.c (the FBC directory); what an entry means
 * (whiteouts, which directory, links, path checks) stays with them. */
#ifndef AL_LAYER_INT_H
#define AL_LAYER_INT_H

#include <stdint.h>

#include "airlock/buf.h"
#include "airlock/oci.h"
#include "airlock/store.h"

/* The layer being walked (valid during al_layer_walk). */
typedef struct al_layer al_layer;

/* al_layer_entry.type */
enum {
	AL_LAYER_OTHER = 0, /* devices, fifos, sockets */
	AL_LAYER_REG,       /* a regular file (or a hard link: .hardlink) */
	AL_LAYER_DIR,
	AL_LAYER_SYMLINK
};

typedef struct al_layer_entry {
	const char *path; /* as the archive names it; never NULL */
	int type;
	int hardlink;   /* the entry is a hard link to an earlier one */
	int size_known; /* the tar header gives the size */
	uint64_t size;
} al_layer_entry;

/*
 * Called for each entry. Returns 0 to go on, < 0 (an error set) to stop
 * with it, or 1 to stop because libarchive failed (al_layer_read's 1):
 * al_layer_walk then decides between AL_EVERIFY and AL_EPARSE.
 */
typedef int (*al_layer_fn)(void *ud, al_layer *l, const al_layer_entry *e);

/*
 * Walk the layer d of s: a gzip or plain tar media type (anything else is
 * AL_EUNSUPPORTED), streamed from the blob through libarchive in bounded
 * buffers, entries in archive order. The digest decides first: bytes that
 * do not hash to d->digest, or more or fewer than d->size, are AL_EVERIFY
 * whatever libarchive or fn made of them; then fn's error; then a stream
 * libarchive cannot read is AL_EPARSE ("layer 'DIGEST' is not a readable
 * tar stream: ..."). AL_ENOMEM from fn stops at once.
 */
int al_layer_walk(al_store *s, const al_descriptor *d, al_layer_fn fn,
                  void *ud);

/* The layer's digest as text, for messages. */
const char *al_layer_name(const al_layer *l);

/*
 * The current entry's bytes appended to b, never past b->max: AL_ELIMIT
 * (no message: the caller words it) when the header's size or the bytes
 * exceed it; 1 when libarchive failed to read them (al_layer_error says
 * why); AL_ENOMEM. A size the header gives is allocated at once.
 */
int al_layer_read(al_layer *l, const al_layer_entry *e, al_buf *b);

/* libarchive's message for its last failure (never NULL). */
const char *al_layer_error(const al_layer *l);

#endif
