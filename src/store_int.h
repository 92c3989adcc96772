/* store_int.h: the store's internals shared by its own files (store.c,
 * store_meta.c, store_catalogs.c) and the library modules that import another
 * store's metadata (pack_unpack.c). Not installed. */
#ifndef AL_STORE_INT_H
#define AL_STORE_INT_H

#include <jansson.h>

#include "airlock/store.h"

/*
 * What a tag resolved to earlier in this process (key: "HOST/REPO:TAG" as
 * the transfer asked it), kept in memory for the store's lifetime so that
 * a second transfer into the same store (the space plan, then the run)
 * does not ask the registry again: the run copies what the plan saw.
 * Thread-safe. get: 1 and *d when known, else 0.
 */
int al_store__resolved_put(al_store *s, const char *key, const al_digest *d);
int al_store__resolved_get(al_store *s, const char *key, al_digest *d);

/* airlock/releases.json ({"releases": [...]}) as the raw document (a
 * missing file loads as {"releases": []}); the store's own readers and
 * white-box tests. Everything else uses the typed al_store_release* calls
 * of store.h. */
int al_store_releases_load(al_store *s, json_t **out);

/* Write v ({"releases": [...]}, else AL_EINVAL) as airlock/releases.json,
 * atomically, after what it names is synced. Read-only store: AL_EINVAL.
 * White-box tests use it to lay out records. */
int al_store_releases_save(al_store *s, const json_t *v);

/* Change doc ({"releases": [...]}) in place: 0 to write it back, 1 to
 * leave the file as it was, negative to fail. */
typedef int (*al_store__releases_edit_fn)(json_t *doc, void *ud);

/*
 * Read airlock/releases.json (a missing file is an empty list), let edit
 * change it and write it back atomically, all under the store's lock.
 * Read-only store: AL_EINVAL.
 */
int al_store__releases_edit(al_store *s, al_store__releases_edit_fn edit,
                            void *ud);

/*
 * Merge the "releases" of other (the releases.json of a pack being
 * imported, named what in messages) into the store's: each record not
 * already there (the same JSON) is appended. AL_EPARSE when other has no
 * "releases" array.
 */
int al_store__releases_import(al_store *s, const json_t *other,
                              const char *what);

/* Merge other's "catalogs" records into doc (a releases.json document),
 * each replacing the record of the same name (store_catalogs.c). */
int al_store__catalogs_merge(json_t *doc, const json_t *other,
                             const char *what);
/* Set inv's "catalogs" to [{"name","digest"}] of every recorded catalog
 * (for 'airlock inventory'); a store whose records do not read gets
 * none (check reports it). */
int al_store__catalogs_inventory(al_store *s, json_t *inv);
/* The same for the "charts" records (store_charts.c): merge, replacing
 * the record of the same name, and inv's "charts" [{"name","digest",
 * "chart","version"}]. */
int al_store__charts_merge(json_t *doc, const json_t *other, const char *what);
int al_store__charts_inventory(al_store *s, json_t *inv);

/* Record members, for the typed records of store_meta.c,
 * store_catalogs.c and store_charts.c. al_store__member_dup: *out a copy of e's
 * string member key, NULL when it is missing or not a string.
 * al_store__member_strv: the strings of arr (member NULL), or the string member
 * of its objects, as a new vector *out of *n (elements without one skipped;
 * NULL, 0 for none); on AL_ENOMEM *out holds what was copied, *n of them, for
 * the caller's clear. al_store__member_set: o[key] = v, nothing when v is NULL.
 * AL_ENOMEM. */
int al_store__member_dup(char **out, const json_t *e, const char *key);
int al_store__member_strv(char ***out, size_t *n, const json_t *arr,
                          const char *member);
int al_store__member_set(json_t *o, const char *key, const char *v);

/* Named records: the arrays of airlock/releases.json whose objects each
 * have a unique "name" ("catalogs" of store_catalogs.c, "charts" of
 * store_charts.c), shared by their typed readers and writers. */
typedef int (*al_store__record_read_fn)(void *elem, const json_t *e);
typedef void (*al_store__record_clear_fn)(void *elem);
/* Every object of the array key, through read into a new vector *out of *n
 * elements of size elem (zeroed, one spare); a missing array is none.
 * AL_EPARSE naming releases.json when key is not an array of objects; on
 * failure what was read is cleared with clear and nothing is returned. */
int al_store__records_list(al_store *s, const char *key, size_t elem,
                           al_store__record_read_fn read,
                           al_store__record_clear_fn clear, void **out,
                           size_t *n);
/* In doc, replace the record of array key named like e, or append e (a new
 * reference is taken; the array is created when missing). */
int al_store__record_put(json_t *doc, const char *key, json_t *e);
/* al_store__record_put under the store's lock, written back atomically. */
int al_store__record_save(al_store *s, const char *key, json_t *e);
/* Merge other's key records (a pack's releases.json, named what in
 * messages) into doc, each replacing the record of the same name: the far
 * side's record of a name is the newer one. */
int al_store__records_merge(json_t *doc, const json_t *other, const char *key,
                            const char *what);

/* Write the record of pack id (its JSON, compact, a trailing newline) as
 * airlock/packs/<id>.json, atomically, creating airlock/packs/. */
int al_store__pack_record_save(al_store *s, const char *id, const json_t *rec);

#endif
