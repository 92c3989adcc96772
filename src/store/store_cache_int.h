/* store_cache_int.h: the store's advisory cache (STORE/airlock/cache/):
 * what a process learned from the store's content, kept so that the next
 * process does not learn it again; for the library's modules, not
 * installed (docs/store.md "The cache"). */
#ifndef AL_STORE_CACHE_INT_H
#define AL_STORE_CACHE_INT_H

#include "airlock/buf.h"
#include "airlock/digest.h"
#include "airlock/store.h"

/* The largest cache entry read or written. */
#define AL_STORE_CACHE_MAX (1024 * 1024)

/*
 * The entry of kind (lowercase letters) for content key (a digest the
 * store holds as a blob) and variant (NULL, or a platform such as
 * "linux/arm64/v8": letters, digits, '.', '_', '-' and '/'), read into out
 * (bounded by AL_STORE_CACHE_MAX). An entry is advice: its reader checks
 * it against the content it describes and reads the content itself when
 * the entry is wrong. Returns 1 when read, 0 when there is none or it
 * cannot be read (a debug line says why), AL_ENOMEM. Thread-safe.
 */
int al_store__cache_get(al_store *s, const char *kind, const al_digest *key,
                        const char *variant, al_buf *out);

/*
 * Write that entry (temporary file, fsync, rename: a reader sees the old
 * entry or the new one). On a read-only store nothing is written and 0 is
 * returned: only the process holding the store's lock writes. Errors are
 * returned as usual; callers may ignore them, an entry being advice.
 */
int al_store__cache_put(al_store *s, const char *kind, const al_digest *key,
                        const char *variant, const uint8_t *data, size_t len);

/*
 * gc: remove every entry whose key blob the store no longer holds (its
 * release went), and names that are not entries. *removed (may be NULL)
 * gets how many files went. Only under the store's lock (al_store_check
 * with AL_STORE_CHECK_GC); a missing airlock/cache/ is 0.
 */
int al_store__cache_gc(al_store *s, size_t *removed);

/* 1 when s was opened writable (it holds the store's lock), else 0.
 * Defined in store.c. */
int al_store__writable(const al_store *s);

#endif
