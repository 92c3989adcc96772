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

/* Where the entries are, under the store's root. */
#define AL_STORE_CACHE_DIR "airlock/cache"
#define AL_STORE_CACHE_NAME_MAX 256

/* The file name of an entry into out, or 0 when kind or variant cannot
 * name one (then there is no entry). A variant's '/' becomes '-'. */
int al_store__cache_entry_name(char out[AL_STORE_CACHE_NAME_MAX],
                               const char *kind, const al_digest *key,
                               const char *variant);
/* The key digest an entry's file name carries, or 0 when name is not an
 * entry's (store.c's gc removes those). */
int al_store__cache_entry_key(const char *name, al_digest *key);

/* 1 when s was opened writable (it holds the store's lock), else 0.
 * Defined in store.c. */
int al_store__writable(const al_store *s);

#endif
