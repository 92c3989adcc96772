/* update_lease.h: the updater's cluster-side lock, a
 * coordination.k8s.io/v1 Lease held as client-go's leader election holds
 * it (src/update/update_lease.c). Included by update.h. */
#ifndef AIRLOCK_UPDATE_LEASE_H
#define AIRLOCK_UPDATE_LEASE_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "clock.h"
#include "kube.h"

AL_BEGIN_DECL

#define AL_UPDATE_LEASE_NAMESPACE "kube-system"
#define AL_UPDATE_LEASE_NAME "airlock-update"

typedef struct al_update_lease al_update_lease;

/* The version of al_update_lease_opts this header describes. */
#define AL_UPDATE_LEASE_OPTS_VERSION 1

typedef struct al_update_lease_opts {
	/* AL_UPDATE_LEASE_OPTS_VERSION of the caller's header (0, a zeroed
	 * struct, reads as 1; a newer one is AL_EINVAL) */
	unsigned version;
	const char *ns;       /* NULL: AL_UPDATE_LEASE_NAMESPACE */
	const char *name;     /* NULL: AL_UPDATE_LEASE_NAME */
	const char *identity; /* NULL: "<hostname>_<random uuid>" */
	uint64_t duration_ms; /* leaseDurationSeconds; 0: 60 s (at least 2 s) */
	uint64_t wait_ms;     /* wait for another holder this long; 0: refuse */
	const al_cancel *cancel; /* borrowed, may be NULL */
} al_update_lease_opts;

/* Every other field zero / NULL: the defaults; set fields by name. */
#define AL_UPDATE_LEASE_OPTS_INIT                                              \
	{                                                                      \
		.version = AL_UPDATE_LEASE_OPTS_VERSION                        \
	}

/*
 * Acquire the coordination.k8s.io/v1 Lease as client-go's leader
 * election does (tryAcquireOrRenew): create it when absent; take it when
 * its holder is empty, is us, or has not renewed it for a whole
 * leaseDurationSeconds while we watched (or its renewTime is older than
 * twice that by the wall clock); every write conditional on the
 * resourceVersion read (a 409 means re-read and decide again). Then a
 * thread renews it every duration/3 until al_update_lease_release.
 * Errors: AL_ELOCKED another holder kept it for wait_ms (the message
 * names its identity), AL_ECANCELED, kube errors (AL_ENOTFOUND when the
 * cluster serves no Lease kind or the namespace does not exist).
 * Thread-safe: al_update_lease_lost may be called from any thread.
 */
AL_EXPORT int al_update_lease_acquire(al_update_lease **out, al_kube *k,
                                      const al_update_lease_opts *o);

/* Borrowed: our holderIdentity. */
AL_EXPORT const char *al_update_lease_identity(const al_update_lease *l);

/* 1 when the lease was lost (another holder took it, or it could not be
 * renewed for 2/3 of its duration); why (may be NULL) gets the reason. */
AL_EXPORT int al_update_lease_lost(al_update_lease *l, char *why, size_t cap);

/* Stop renewing and release (holderIdentity "", conditional on our last
 * write; a lease someone else took is left alone), then free. NULL is a
 * no-op. Returns the release's error (the lease expires anyway). */
AL_EXPORT int al_update_lease_release(al_update_lease *l);

AL_END_DECL

#endif
