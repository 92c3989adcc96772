/* store_int.h: the store's internals shared by its own files (store.c,
 * store_record.c, store_meta.c, store_catalogs.c, store_charts.c) and the
 * library modules that import another store's metadata (pack_unpack.c). Not
 * installed. */
#ifndef AL_STORE_INT_H
#define AL_STORE_INT_H

#include <stddef.h>

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

/*
 * Commit a writer begun with expected NULL (al_store_blob_begin) as the
 * blob expected, which the bytes written must hash to (verified before
 * the rename, as al_blob_writer_commit does): for uploads whose digest
 * the client names only at the end (airlock serve). A writer begun with
 * a digest: expected must be that digest. Frees w in all cases;
 * AL_EVERIFY on a mismatch (nothing renamed into place).
 */
int al_store__blob_commit_as(al_blob_writer *w, const al_digest *expected);

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

/* --- files kept to resume (partial downloads, upload sessions) --- */

/* Remove path unless a writer or an upload holds its flock (the lock held
 * while it goes). 1 removed, 0 kept. */
int al_store__unlink_unheld(const char *path);
/* Before a new file is made in dir: when it holds max files or more,
 * remove the oldest that no one holds (what names it in the log). */
void al_store__make_room(const char *dir, size_t max, const char *what);

/* --- release records of untrusted imports (store_untrusted.c) --- */

/* The hex SHA-256 of rec's canonical JSON (keys sorted, compact): what a
 * release record is marked by. */
int al_store__record_sha256(const json_t *rec, char hex[65]);
/* An untrusted import about to merge other (a pack's releases.json):
 * mark each of its release records the store does not hold already,
 * before the merge writes them. */
int al_store__untrusted_releases_mark(al_store *s, const json_t *other,
                                      const char *pack);
/* A trusted import about to merge other: every marked record of a
 * release other records (and other does not hold as it is) leaves
 * releases.json, then the marks of those releases go. */
int al_store__untrusted_releases_vouch(al_store *s, const json_t *other);
/* An untrusted import about to merge other: the "sigstore" records of
 * other whose name the store holds a record of leave other, so that the
 * store keeps its trusted root (docs/security.md "Marks of untrusted
 * imports"); the rest are then marked as catalogs and charts are. */
int al_store__untrusted_sigstore_keep(al_store *s, json_t *other);
/* The same for the named records of other ("catalogs", "charts",
 * "sigstore"): mark,
 * before the merge, each the store does not hold already (by its name and
 * the SHA-256 of its canonical JSON); vouch, after a trusted import's merge
 * replaced the store's record of each name other holds, by clearing every
 * mark of those names. */
int al_store__untrusted_records_mark(al_store *s, const json_t *other,
                                     const char *pack);
int al_store__untrusted_records_vouch(al_store *s, const json_t *other);

/*
 * Merge the "releases" of other (the releases.json of a pack being
 * imported, named what in messages) into the store's: each record not
 * already there (the same JSON) is appended. AL_EPARSE when other has no
 * "releases" array.
 */
int al_store__releases_import(al_store *s, const json_t *other,
                              const char *what);

/* Record members, read and written one way by the store's metadata files
 * (store_record.c). al_store__member_dup: *out a copy of e's string member
 * key, NULL when it is missing or not a string. al_store__member_strv: the
 * strings of arr (member NULL), or the string member of its objects, as a
 * new vector *out of *n (elements without one skipped; NULL, 0 for none);
 * on AL_ENOMEM *out holds what was copied, *n of them, for the caller's
 * clear. al_store__member_set: o[key] = v, nothing when v is NULL.
 * AL_ENOMEM. */
int al_store__member_dup(char **out, const json_t *e, const char *key);
int al_store__member_strv(char ***out, size_t *n, const json_t *arr,
                          const char *member);
int al_store__member_set(json_t *o, const char *key, const char *v);

/*
 * Named records: the arrays of airlock/releases.json whose objects each
 * have a unique "name". A kind is a table: its array, its typed C record
 * and how each member maps onto a field of that record. The kinds describe
 * themselves (al_store__catalog_kind in store_catalogs.c,
 * al_store__chart_kind in store_charts.c); store_record.c reads, writes,
 * lists, merges and inventories every kind from its table, and store_meta.c
 * drives the import and the inventory over all of them.
 */
typedef enum al_store__field_type {
	AL_STORE__STR,        /* char * at off: a string member */
	AL_STORE__DIGEST,     /* al_digest at off, int "has" flag at aux */
	AL_STORE__COUNT,      /* long long at off: an integer >= 0, -1 none */
	AL_STORE__STRV,       /* char ** at off, size_t count at aux */
	AL_STORE__STRV_SORTED /* the same, written sorted, each string once */
} al_store__field_type;

enum {
	AL_STORE__KEY = 1u << 0,   /* required by put, and by the inventory */
	AL_STORE__LISTED = 1u << 1 /* in the inventory (a missing one null) */
};

typedef struct al_store__field {
	const char *member; /* the JSON member */
	al_store__field_type type;
	unsigned flags; /* AL_STORE__KEY, AL_STORE__LISTED */
	size_t off;     /* offsetof the field in the typed record */
	size_t aux;     /* offsetof its flag or count (DIGEST, STRV) */
} al_store__field;

typedef struct al_store__kind {
	const char *key;  /* the array of releases.json: "catalogs" */
	const char *what; /* one record in messages: "catalog" */
	size_t size;      /* sizeof the typed record */
	const al_store__field *fields; /* in the order a record is written */
	size_t nfields;
} al_store__kind;

/* Table rows for the typed record T: a string, a digest with its "has"
 * flag, a count, a string vector with its count (type AL_STORE__STRV or
 * AL_STORE__STRV_SORTED). */
#define AL_STORE__S(T, member, flags, f)                                       \
	{                                                                      \
		member, AL_STORE__STR, flags, offsetof(T, f), 0                \
	}
#define AL_STORE__D(T, member, flags, f, has)                                  \
	{                                                                      \
		member, AL_STORE__DIGEST, flags, offsetof(T, f),               \
		    offsetof(T, has)                                           \
	}
#define AL_STORE__N(T, member, f)                                              \
	{                                                                      \
		member, AL_STORE__COUNT, 0, offsetof(T, f), 0                  \
	}
#define AL_STORE__V(T, member, type, f, n)                                     \
	{                                                                      \
		member, type, 0, offsetof(T, f), offsetof(T, n)                \
	}

extern const al_store__kind al_store__catalog_kind; /* store_catalogs.c */
extern const al_store__kind al_store__chart_kind;   /* store_charts.c */

/* One record of the "sigstore" array (store_sigstore.c): trust material
 * kept with the store so that pack carries it under its signed manifest,
 * today the Sigstore trusted root ("trusted-root") verification used. */
typedef struct al_store__sigstore_trust {
	char *name;       /* "trusted-root", the key */
	al_digest digest; /* SHA-256 of content */
	int has_digest;
	char *media_type; /* application/vnd.dev.sigstore.trustedroot+json */
	char *source;     /* where it was read from */
	char *kept;       /* ISO 8601 UTC time it was kept */
	char *content;    /* the file's text, exactly as read */
} al_store__sigstore_trust;
extern const al_store__kind al_store__sigstore_kind; /* store_sigstore.c */

/* Free what rec owns and zero it (counts -1); NULL is a no-op. */
void al_store__record_clear(const al_store__kind *k, void *rec);
/* Clear list[0..n) and free list; NULL is a no-op. */
void al_store__records_free(const al_store__kind *k, void *list, size_t n);
/* Every record of kind k, in file order, as a new vector *out of *n typed
 * records (one spare, zeroed); a missing array is none. AL_EPARSE naming
 * releases.json when the array is not an array of objects. */
int al_store__records_list(al_store *s, const al_store__kind *k, void **out,
                           size_t *n);
/* Add rec (its AL_STORE__KEY fields set, else AL_EINVAL) or replace the
 * record of the same name, under the store's lock, written back
 * atomically. Read-only store: AL_EINVAL. */
int al_store__record_put(al_store *s, const al_store__kind *k, const void *rec);
/* Merge other's records of kind k (a pack's releases.json, named what in
 * messages) into doc, each replacing the record of the same name: the far
 * side's record of a name is the newer one. AL_EPARSE when other's array
 * is not an array of named objects. */
int al_store__records_merge(json_t *doc, const json_t *other,
                            const al_store__kind *k, const char *what);
/* Set inv[k->key] to the AL_STORE__LISTED members of every record that
 * has its keys (for 'airlock inventory'); a store whose records do not
 * read gets none (check reports it). */
int al_store__records_inventory(al_store *s, const al_store__kind *k,
                                json_t *inv);
/* The same for every kind, in the order of store_meta.c's table. */
int al_store__kinds_inventory(al_store *s, json_t *inv);

/* Write the record of pack id (its JSON, compact, a trailing newline) as
 * airlock/packs/<id>.json, atomically, creating airlock/packs/. */
int al_store__pack_record_save(al_store *s, const char *id, const json_t *rec);

#endif
