/* store.h: the on-disk store: an OCI image layout with content-addressed blobs,
 * index, locks, check and gc. */
#ifndef AIRLOCK_STORE_H
#define AIRLOCK_STORE_H

#include "common.h"
#include "buf.h"
#include "digest.h"
#include "oci.h"

AL_BEGIN_DECL

/*
 * Thread safety: one al_store may be shared by threads. has_blob,
 * blob_path, blob_open, read_blob, put_blob, blob_begin (and each writer
 * used by one thread at a time), list, find, tag, untag, releases_load,
 * releases_save, the typed release and pack record calls and the
 * signature calls are thread-safe: index.json is cached in memory under
 * one mutex and rewritten atomically, releases.json is read, changed and
 * written under it, signatures are numbered under their own. open/free are not
 * (free only after every other call returned). check may run while writers are
 * active; it then leaves blobs/.tmp alone, but gc may remove a blob that a
 * worker committed and has not tagged yet, so do not gc while mirroring.
 *
 * Layout (docs/store.md):
 *   oci-layout, index.json, blobs/sha256/<hex>, signatures/,
 *   airlock/releases.json, airlock/packs/, airlock/lock, blobs/.tmp/
 * Any OCI image layout (e.g. one written by skopeo) opens as a store.
 */
typedef struct al_store al_store;

/* The version of al_store_opts this header describes (see
 * AL_STORE_OPTS_INIT). */
#define AL_STORE_OPTS_VERSION 1

/*
 * How to open a store. Start from AL_STORE_OPTS_INIT (or a zeroed struct)
 * and set fields by name: al_store_opts o = AL_STORE_OPTS_INIT;
 * o.readonly = 1. Fields are only ever added at the end, after version.
 * version is AL_STORE_OPTS_VERSION of the header the caller was built with
 * (0, a zeroed struct, reads as version 1); al_store_open reads only the
 * fields of the version it is given and refuses (AL_EINVAL) a version newer
 * than its own.
 */
typedef struct al_store_opts {
	int create;   /* create the layout if path is missing or empty */
	int readonly; /* no lock, no writes (AL_EINVAL on write calls) */
	uint64_t lock_wait_ms; /* wait for another process's lock; 0 = fail at
	                          once (AL_ELOCKED) */
	/* version 1: the fields above. The version follows them so that
	 * their layout is the one callers have always had. */
	unsigned version;
} al_store_opts;

#define AL_STORE_OPTS_INIT                                                     \
	{                                                                      \
		.version = AL_STORE_OPTS_VERSION                               \
	}

/*
 * Open (and with opts->create, create) the store at path (opts may be
 * NULL: writable, no create, no wait). create accepts a missing or empty
 * directory, or one an interrupted create left; any other directory
 * without oci-layout is AL_EEXIST. A writable
 * store holds an exclusive lock on STORE/airlock/lock until freed, so two
 * processes never write one store. Stale temporary files left by a killed
 * process are removed. AL_ENOTFOUND if path is not a layout (and not
 * create), AL_EPARSE for a bad oci-layout or index.json, AL_ELOCKED;
 * AL_EINVAL for an opts->version newer than AL_STORE_OPTS_VERSION.
 */
AL_EXPORT int al_store_open(al_store **out, const char *path,
                            const al_store_opts *opts);
AL_EXPORT void al_store_free(al_store *s);
/* Borrowed, lives as long as s. */
AL_EXPORT const char *al_store_path(const al_store *s);

/* 1 if the blob file exists (not re-hashed: blobs are only ever renamed
 * into place after their digest matched), 0 if not. *size may be NULL. */
AL_EXPORT int al_store_has_blob(al_store *s, const al_digest *d,
                                uint64_t *size);
/* "STORE/blobs/<algo>/<hex>". Caller frees. */
AL_EXPORT char *al_store_blob_path(const al_store *s, const al_digest *d);
/* Open a blob for reading (O_NOFOLLOW). Caller closes *fd. */
AL_EXPORT int al_store_blob_open(al_store *s, const al_digest *d, int *fd,
                                 uint64_t *size);
/* Read a whole blob (bounded by out->max), re-hashed: AL_EVERIFY if the
 * bytes do not match d. For manifests and configs. */
AL_EXPORT int al_store_read_blob(al_store *s, const al_digest *d, al_buf *out);
/* Store bytes as a blob (atomic; no-op if present). *out may be NULL. */
AL_EXPORT int al_store_put_blob(al_store *s, const uint8_t *p, size_t n,
                                al_digest *out);

/*
 * Streaming blob writer: a temporary file under blobs/.tmp that is hashed
 * as it is written. Thread-safe across different writers (one writer per
 * thread). Commit checks size (when expected_size > 0) and digest,
 * fsyncs and renames into place: AL_EVERIFY on mismatch, the temporary
 * file removed either way. expected NULL writes a blob whose digest is
 * not known in advance (content made here, not received): a SHA-256 blob
 * stored under the digest of the bytes written, which
 * al_blob_writer_commit_digest returns; expected_size must then be 0.
 */
typedef struct al_blob_writer al_blob_writer;
AL_EXPORT int al_store_blob_begin(al_store *s, const al_digest *expected,
                                  uint64_t expected_size, al_blob_writer **out);
/*
 * al_store_blob_begin for a blob whose digest and size are known, written
 * to blobs/.partial/<algo>-<hex> so that an interrupted download survives
 * (a failed attempt, a cut connection, kill -9): a partial file left
 * there is re-hashed and *offset receives its length, the bytes the
 * caller need not fetch again (0: start at the beginning). Abort keeps the
 * file when it holds at least 1 MiB; commit verifies the whole blob as
 * always and renames it into place, or removes it when it does not
 * verify; reset truncates it. Blobs under 1 MiB, a partial held by
 * another writer (flock), and expected NULL: al_store_blob_begin, *offset
 * 0. At most 32 partial files are kept (the oldest gives way); check
 * lists them as UNREFERENCED and gc removes them.
 */
AL_EXPORT int al_store_blob_resume(al_store *s, const al_digest *expected,
                                   uint64_t expected_size, al_blob_writer **out,
                                   uint64_t *offset);
/* An al_writer (write + reset) feeding w. */
AL_EXPORT al_writer al_blob_writer_as_writer(al_blob_writer *w);
AL_EXPORT int al_blob_writer_write(al_blob_writer *w, const uint8_t *p,
                                   size_t n);
/*
 * Hash writes of at least AL_HASH_WORKER_MIN bytes on hw while the calling
 * thread writes them to the temporary file (hw is borrowed: it must outlive
 * the writer's last write, and serve one writer at a time).
 */
#define AL_HASH_WORKER_MIN (64u << 10)
AL_EXPORT void al_blob_writer_use_hash_worker(al_blob_writer *w,
                                              al_hash_worker *hw);
AL_EXPORT int al_blob_writer_reset(al_blob_writer *w);
/* Verify and rename into place; frees w in all cases. */
AL_EXPORT int al_blob_writer_commit(al_blob_writer *w);
/* The same, and *out (may be NULL; written only on success) receives the
 * blob's digest: for a writer begun with expected NULL, the only way to
 * learn it. */
AL_EXPORT int al_blob_writer_commit_digest(al_blob_writer *w, al_digest *out);
/*
 * For committing many blobs in a row: the same, without the fsync of the
 * blobs directory; al_store_sync_blob_dir after the batch, and nothing may
 * record these blobs as present before it returned.
 */
AL_EXPORT int al_blob_writer_commit_nodirsync(al_blob_writer *w);
AL_EXPORT int al_store_sync_blob_dir(al_store *s, al_digest_algo algo);
/* Everything is written: start write-back now, so that the fsync at
 * commit finds the data on its way to the disk. */
AL_EXPORT void al_blob_writer_start_writeback(al_blob_writer *w);
/* Discard; NULL is a no-op. */
AL_EXPORT void al_blob_writer_abort(al_blob_writer *w);

/* An image named in index.json. */
typedef struct al_store_image {
	char *name;         /* org.opencontainers.image.ref.name; "" for an
	                     * entry without one (layouts written by others) */
	al_descriptor desc; /* the manifest or index */
} al_store_image;

AL_EXPORT void al_store_image_clear(al_store_image *img);
AL_EXPORT void al_store_images_free(al_store_image *imgs, size_t n);

/* Every entry of index.json, in file order. Caller frees with
 * al_store_images_free. */
AL_EXPORT int al_store_list(al_store *s, al_store_image **out, size_t *n);
/* The entry named name: AL_ENOTFOUND if none. */
AL_EXPORT int al_store_find(al_store *s, const char *name, al_store_image *out);
/* The image manifest at digest, through an index when it is one: the
 * entry matching platform ("os/arch[/variant]"), or the only entry. what
 * ("release", "catalog") names the image in errors. Caller clears *out.
 * AL_ENOTFOUND: no entry for platform; AL_EUNSUPPORTED: nested index. */
AL_EXPORT int al_store_image_manifest(al_store *s, const al_digest *digest,
                                      const char *platform, const char *what,
                                      al_manifest *out);

/*
 * Add or replace (same name) index entries and rewrite index.json
 * atomically. The caller must have stored every blob the manifest
 * references first (so index.json never names incomplete images); the
 * manifest blob itself must be present (AL_ENOTFOUND otherwise). The
 * entry is {"mediaType","digest","size"[,"artifactType"][,"platform"],
 * "annotations":{"org.opencontainers.image.ref.name": name}}; a
 * replaced entry keeps its position. name: any non-empty string of at
 * most 4096 bytes (AL_EINVAL). Read-only store: AL_EINVAL.
 */
AL_EXPORT int al_store_tag(al_store *s, const char *name,
                           const al_descriptor *desc);
/* Remove the entry named name (AL_ENOTFOUND if none). index.json is
 * rewritten at once. */
AL_EXPORT int al_store_untag(al_store *s, const char *name);
/*
 * Record on the entry named name the reference it was mirrored from when
 * that differs from name (AL_ANNOT_ORIGIN, imageset targetRepo /
 * targetTag); NULL origin removes it. Journalled as al_store_tag is; a
 * later al_store_tag of name drops it. AL_ENOTFOUND: no such entry.
 */
AL_EXPORT int al_store_set_origin(al_store *s, const char *name,
                                  const char *origin);
/* 1 and *out (caller frees) when the entry named name has an origin, 0
 * and *out NULL when not; AL_ENOTFOUND: no such entry. */
AL_EXPORT int al_store_origin(al_store *s, const char *name, char **out);
/*
 * Names are journalled: al_store_tag appends one line to
 * STORE/airlock/index.journal and index.json is rewritten (atomically)
 * once per 512 names or a second after the first unwritten one, and by
 * al_store_flush, al_store_untag, al_store_releases_save and
 * al_store_free. Opening a store applies a journal a killed writer left
 * (docs/store.md). Blob directories are fsynced in the same batches,
 * before index.json names what they hold. al_store_flush writes now;
 * errors: AL_EIO (the journal keeps the names for the next open).
 */
AL_EXPORT int al_store_flush(al_store *s);

/* --- releases: airlock/releases.json, typed ----------------------------- */

/* al_store_release.verified */
enum {
	AL_STORE_UNCHECKED = -1, /* signatures not checked (no keyring) */
	AL_STORE_UNVERIFIED = 0, /* checked, none verified (--allow-unsigned) */
	AL_STORE_VERIFIED = 1,   /* a trusted key verified it */
};

/*
 * One release the store records (docs/store.md, "releases.json"). Strings
 * are owned by the struct (al_store_release_clear frees them) and NULL
 * when the record has no such member.
 */
typedef struct al_store_release {
	char *version;     /* from release-metadata */
	al_digest digest;  /* the release image manifest */
	int has_digest;    /* 0: the record's "digest" is missing or invalid */
	char *digest_text; /* "digest" as recorded (NULL when missing) */
	char *source;      /* the reference it was mirrored from */
	long long components; /* images in image-references, -1 unknown */
	char *platform;       /* "os/arch" when only one was mirrored */
	char *mirrored;       /* ISO 8601 UTC time of the last mirror */
	int verified;         /* AL_STORE_VERIFIED, _UNVERIFIED, _UNCHECKED */
	char *verified_by;    /* fingerprint of the key that verified it */
	char **channels;      /* update channels it was selected from */
	size_t nchannels;
} al_store_release;

AL_EXPORT void al_store_release_clear(al_store_release *r);
AL_EXPORT void al_store_releases_free(al_store_release *list, size_t n);

/*
 * Every recorded release, in file order (a missing file: none). Caller
 * frees with al_store_releases_free. AL_EPARSE (naming the file) when
 * releases.json does not parse or is not {"releases": [...]}.
 */
AL_EXPORT int al_store_releases_list(al_store *s, al_store_release **out,
                                     size_t *n);

/*
 * The release whose version or digest ("sha256:...") is key; the first
 * in file order when several share a version. AL_ENOTFOUND naming the
 * file when none. Caller clears *out (written only on success).
 */
AL_EXPORT int al_store_release_find(al_store *s, const char *key,
                                    al_store_release *out);

/* al_store_release_put flags */
enum {
	/* only update an existing record: AL_ENOTFOUND when there is none */
	AL_STORE_RELEASE_EXISTING = 1u << 0,
};

/*
 * Add rel (rel->has_digest required) or update the record of the same
 * digest, under the store's lock (read, change and write are one step):
 * members set in rel (non-NULL strings, components >= 0, verified other
 * than AL_STORE_UNCHECKED) replace the recorded ones, the others and any
 * member this API does not know are kept, channels are a union. A record
 * once verified is never downgraded to unverified: then *kept_verified
 * (may be NULL) is set to 1 and the verification stays. Read-only store:
 * AL_EINVAL.
 */
AL_EXPORT int al_store_release_put(al_store *s, const al_store_release *rel,
                                   unsigned flags, int *kept_verified);

/* --- catalogs: the "catalogs" array of airlock/releases.json, typed ------ */

/*
 * One operator catalog the store records (docs/store.md, "catalogs"): what
 * 'airlock mirror' made of one mirror.operators[] entry. Kept in
 * airlock/releases.json beside "releases", so that every pack (full or
 * delta) carries it and unpack merges it. Strings are owned (NULL when
 * the record lacks them).
 */
typedef struct al_store_catalog {
	char *name;        /* store name of the rebuilt catalog (the key) */
	al_digest digest;  /* the rebuilt catalog's manifest */
	int has_digest;    /* 0: "digest" missing or invalid */
	char *source;      /* the catalog as the imageset names it */
	char *source_name; /* store name of the catalog as fetched */
	al_digest source_digest; /* the fetched catalog's manifest */
	int has_source_digest;
	char *target_repo;  /* targetCatalog, or the source repository */
	char *target_tag;   /* targetTag, or the source tag */
	char *platform;     /* "os/arch" when only one was mirrored */
	char *mirrored;     /* ISO 8601 UTC time of the last mirror */
	long long packages; /* in the selection, -1 unknown */
	long long bundles;  /* in the selection, -1 unknown */
	char **images;      /* bundle and related images, sorted */
	size_t nimages;
} al_store_catalog;

AL_EXPORT void al_store_catalog_clear(al_store_catalog *c);
AL_EXPORT void al_store_catalogs_free(al_store_catalog *list, size_t n);

/*
 * Every recorded catalog, in file order (none when releases.json is
 * missing or has no "catalogs"). Caller frees with
 * al_store_catalogs_free. AL_EPARSE naming the file when "catalogs" is
 * not an array of objects.
 */
AL_EXPORT int al_store_catalogs_list(al_store *s, al_store_catalog **out,
                                     size_t *n);

/*
 * Add c (c->name and c->has_digest required) or replace the record of
 * the same name, under the store's lock. Read-only store: AL_EINVAL.
 */
AL_EXPORT int al_store_catalog_put(al_store *s, const al_store_catalog *c);

/* --- signatures/<algo>=<hex>/signature-<n> ----------------------------- */

/*
 * The directory holding the signatures of release
 * (STORE/signatures/sha256=<hex>), or STORE/signatures for release
 * NULL: the layout containers/image's sigstore "file" stores use
 * (docs/signatures.md). Caller frees; NULL on allocation failure.
 */
AL_EXPORT char *al_store_signature_dir(const al_store *s,
                                       const al_digest *release);

/*
 * Save one signature of release (p, n bytes, n <= max_bytes) as the next
 * signature-<k>, or find the same bytes already saved; *index (may be
 * NULL) gets k. Numbering is one step under the store's lock (thread-safe
 * for one store; the store's file lock serialises processes). AL_ELIMIT
 * when max_count signatures are there already; AL_EINVAL for a read-only
 * store. sig.h's al_sig_store_save checks and calls it.
 */
AL_EXPORT int al_store_signature_add(al_store *s, const al_digest *release,
                                     const uint8_t *p, size_t n,
                                     size_t max_bytes, unsigned max_count,
                                     unsigned *index);

/* --- marks of untrusted imports: airlock/untrusted.json --------------- */

/*
 * What an import that no key verified (unpack --accept-untrusted) wrote
 * into the store, so that nothing treats it as vouched for
 * (docs/security.md "Untrusted imports"). A signature is marked by its
 * release and the SHA-256 of its bytes (whatever signature-<n> holds
 * them), a tag (or a name by digest, REPO@sha256:...) by its name and
 * the digest the import gave it (a name tagged again elsewhere is no
 * longer marked), a release record of releases.json by its release and
 * the SHA-256 of its canonical JSON (keys sorted, compact), a catalog,
 * chart or sigstore record by its name and the SHA-256 of its canonical
 * JSON.
 */
typedef enum al_store_untrusted_kind {
	AL_STORE_UNTRUSTED_SIGNATURE = 1,
	AL_STORE_UNTRUSTED_TAG = 2,
	AL_STORE_UNTRUSTED_RELEASE = 3,
	AL_STORE_UNTRUSTED_CATALOG = 4, /* a "catalogs" record */
	AL_STORE_UNTRUSTED_CHART = 5,   /* a "charts" record */
	AL_STORE_UNTRUSTED_SIGSTORE = 6 /* a "sigstore" record (the kept
	                                   Sigstore trusted root) */
} al_store_untrusted_kind;

typedef struct al_store_untrusted {
	int kind;         /* al_store_untrusted_kind */
	al_digest digest; /* SIGNATURE, RELEASE: the release; TAG: the
	                     manifest; CATALOG, CHART (listings): the
	                     record's digest (zero when it has none) */
	char sha256[65];  /* SIGNATURE: hex SHA-256 of its bytes; RELEASE,
	                     CATALOG, CHART: of the record; TAG: "" */
	char *name;       /* TAG: the name; RELEASE (listings): the record's
	                     version; CATALOG, CHART: the record's name;
	                     SIGNATURE: NULL */
	char *pack;       /* the pack id of the import that wrote it */
	char *path;       /* listings: the signature file ("signatures/...") */
} al_store_untrusted;

/*
 * Record marks v[0..n) in airlock/untrusted.json (atomically, before the
 * caller writes what they mark, so that a crash never leaves an unmarked
 * file); a tag mark replaces that name's mark. Not thread-safe: the
 * importer is the store's one writer. AL_EVERIFY when the file is damaged.
 */
AL_EXPORT int al_store_untrusted_mark(al_store *s, const al_store_untrusted *v,
                                      size_t n);
/* Remove the marks of v[0..n) (signatures by release and SHA-256, tags by
 * name, catalog and chart records by name and SHA-256; pack and digest
 * of a tag ignored): what a trusted import vouched for. No marks file:
 * nothing written. */
AL_EXPORT int al_store_untrusted_clear(al_store *s, const al_store_untrusted *v,
                                       size_t n);
/* 1 when the signature bytes p[0..n) of release are marked, 0 if not. */
AL_EXPORT int al_store_signature_untrusted(al_store *s,
                                           const al_digest *release,
                                           const uint8_t *p, size_t n);
/* The marks that still apply: signatures some signature-<n> holds (path
 * set), names that still name the marked digest, release, catalog and
 * chart records releases.json still holds (the same JSON). Free with
 * al_store_untrusted_free. */
AL_EXPORT int al_store_untrusted_list(al_store *s, al_store_untrusted **out,
                                      size_t *n);
AL_EXPORT void al_store_untrusted_free(al_store_untrusted *v, size_t n);

/* --- pack records: airlock/packs/<id>.json ------------------------------ */

/* What one pack this store wrote carried (for --since and listings). */
typedef struct al_store_pack {
	char *id;
	char *created;     /* ISO 8601 UTC */
	uint64_t sequence; /* grows with every pack the store writes */
	char *base;        /* the --since pack, NULL for a full pack */
	uint64_t volumes;
	char **blobs; /* "sha256:<hex>" / "sha512:<hex>" it carried or the far
	                 side had */
	size_t nblobs;
	char **signatures;       /* paths under signatures/ */
	char **signature_sha256; /* hex SHA-256 of each, parallel to
	                            signatures (NULL entries: unknown) */
	size_t nsignatures;
} al_store_pack;

/*
 * Every pack record, sorted by id (no airlock/packs/: none). Caller frees
 * with al_store_packs_free. A record that does not parse is AL_EVERIFY
 * ("store metadata ... is damaged") naming it.
 */
/* STORE/airlock/packs/<id>.json (id not checked here); caller frees; NULL
 * on allocation failure. */
AL_EXPORT char *al_store_pack_record_path(const al_store *s, const char *id);

AL_EXPORT int al_store_packs_list(al_store *s, al_store_pack **out, size_t *n);
AL_EXPORT void al_store_packs_free(al_store_pack *list, size_t n);

/*
 * Write rec as airlock/packs/<rec->id>.json (atomic, airlock/packs/
 * created): {"airlockPackRecord":1,"id","created","sequence","base"
 * (null for a full pack),"volumes","blobs":[...],"signatures":[{"path",
 * "sha256"}]}. rec->id must be a file name (no '/', no leading '.':
 * AL_EINVAL); pack.h's al_pack_id_valid is the caller's check.
 */
AL_EXPORT int al_store_pack_put(al_store *s, const al_store_pack *rec);
/* Free what p holds and zero it; NULL is a no-op. */
AL_EXPORT void al_store_pack_clear(al_store_pack *p);

/* 1 when the pack carried the release image d (its manifest blob, or a
 * signature of it), else 0. */
AL_EXPORT int al_store_pack_carries(const al_store_pack *p, const al_digest *d);

/*
 * What the store keeps so that an interrupted transfer continues where it
 * stopped (docs/store.md "Atomicity and crashes"): a partial download
 * (blobs/.partial/<algo>-<hex>, at most 32) or a push's upload session
 * (airlock/uploads/<id>.json, at most 64). Each is held with an flock by
 * the airlock using it; gc removes only those nobody holds.
 */
typedef enum al_store_kept_kind {
	AL_STORE_KEPT_DOWNLOAD = 1, /* the first bytes of a blob */
	AL_STORE_KEPT_UPLOAD = 2,   /* where a registry's upload session is */
} al_store_kept_kind;

typedef struct al_store_kept {
	al_store_kept_kind kind;
	char *path;     /* the file */
	uint64_t bytes; /* the file's size: what it takes in the store */
	uint64_t age_s; /* seconds since it was last written */
	int in_use;     /* an airlock holds it now */
	/* the blob ("sha256:..."), NULL when the file does not say */
	char *digest;
	/* an upload session: "REGISTRY/REPOSITORY" it goes to (NULL when the
	 * file is not a session), and the bytes the registry acknowledged
	 * (done) of the blob's size */
	char *target;
	uint64_t done, size;
} al_store_kept;

/* The partial downloads and upload sessions of s, oldest first (*n may be
 * 0). Works on a read-only store. Free with al_store_kept_free. */
AL_EXPORT int al_store_kept_list(al_store *s, al_store_kept **out, size_t *n);
/* NULL is a no-op. */
AL_EXPORT void al_store_kept_free(al_store_kept *v, size_t n);

typedef enum al_check_kind {
	AL_CHECK_OK = 0,      /* informational: a verified item */
	AL_CHECK_MISSING = 1, /* referenced blob absent */
	AL_CHECK_CORRUPT = 2, /* blob bytes do not match the name/digest */
	AL_CHECK_INVALID = 3, /* manifest/index/layout file cannot be parsed */
	AL_CHECK_UNREFERENCED = 4, /* blob reachable from no index entry */
	AL_CHECK_REMOVED = 5,      /* gc removed it */
} al_check_kind;

/* what: "sha256:..." or a path; detail: which image referenced it / why. */
typedef void (*al_check_fn)(void *ud, al_check_kind kind, const char *what,
                            const char *detail);

/* The version of al_check_result this header describes. */
#define AL_CHECK_RESULT_VERSION 1

/* What al_store_check counted: plain data, nothing to free. */
typedef struct al_check_result {
	/* AL_CHECK_RESULT_VERSION of the caller's header, set by
	 * AL_CHECK_RESULT_INIT (0, a zeroed struct, reads as 1; a newer one is
	 * AL_EINVAL, nothing written): the library writes no field past it */
	unsigned version;
	uint64_t images;
	uint64_t blobs_checked;
	uint64_t bytes_checked;
	uint64_t missing;
	uint64_t corrupt;
	uint64_t invalid;
	uint64_t unreferenced;
	uint64_t removed;
	uint64_t bytes_removed;
} al_check_result;

/* Every other field zero / NULL; set the version by name. */
#define AL_CHECK_RESULT_INIT                                                   \
	{                                                                      \
		.version = AL_CHECK_RESULT_VERSION                             \
	}

/* remove unreferenced blobs and stale temp files */
#define AL_STORE_CHECK_GC 1
#define AL_STORE_CHECK_QUICK 2 /* sizes only, no re-hashing */

/*
 * Walk index.json -> indexes -> manifests -> config/layers (and
 * signatures/), re-hash every blob, report each problem through fn
 * (may be NULL) and count them in *res. Returns 0 when the walk ran
 * (inspect res), negative when it could not run. Corrupt blobs are
 * reported, never silently deleted, except with AL_STORE_CHECK_GC, where
 * a corrupt blob is removed so that a rerun fetches it again.
 *
 * Each blob is hashed once however many images share it. AL_CHECK_OK is
 * reported once per verified blob. MISSING: a referenced blob is absent
 * (non-distributable layers excepted). CORRUPT: its bytes do not hash to
 * its name (QUICK: its size differs from the descriptor). INVALID: a
 * manifest blob that does not parse, a descriptor size that disagrees
 * with a verified blob, a bad entry under signatures/ (not
 * sha256=<hex>/signature-<n>, not a regular file, empty or over 256 KiB),
 * an unreadable airlock/releases.json, an index.json entry whose media
 * type is not a manifest or index (a layer, a config: images are
 * manifests). UNREFERENCED: a file under blobs/ that no index entry and
 * no recorded release (airlock/releases.json) reaches. Recorded releases
 * are roots: a release whose index name is gone is still checked, and gc
 * keeps it. GC removes unreferenced and corrupt blobs
 * and stale temporary files (REMOVED, counted in removed/bytes_removed;
 * temp files are not counted as unreferenced). Subjects of referrers are
 * not followed. GC on a read-only store: AL_EINVAL.
 */
AL_EXPORT int al_store_check(al_store *s, int flags, al_check_fn fn, void *ud,
                             al_check_result *res);

/* A blob something outside index.json needs, by digest alone. */
typedef struct al_store_root {
	al_digest digest;
	const char *from; /* who needs it, for messages ("component cli of
	                     release 4.14.1 (sha256:...)") */
} al_store_root;

/*
 * al_store_check with more roots: every blob reachable from roots[] is
 * checked like an index entry's and never removed by gc. Each root's
 * manifest is read for its media type (a root that is not a manifest or
 * index is INVALID); a missing root is MISSING "manifest of FROM", and a
 * root whose blobs the index walk found missing or corrupt is reported
 * again "needed by FROM" (counted once). al_store_check itself adds the
 * manifest of every release recorded in airlock/releases.json;
 * al_mirror_check (mirror.h) adds their component images too.
 */
AL_EXPORT int al_store_check_roots(al_store *s, int flags,
                                   const al_store_root *roots, size_t nroots,
                                   al_check_fn fn, void *ud,
                                   al_check_result *res);

/* --- push records (airlock/pushes.json, src/store/store_push.c) -------------
 */

/* Where `airlock push` put the store's images, one record per push. */
typedef struct al_store_push {
	char *registry;            /* "host[:port]" */
	char *prefix;              /* repository prefix, "" for none */
	char *time;                /* ISO 8601 UTC, when the push ended */
	uint64_t images;           /* images pushed */
	uint64_t failed;           /* images that failed */
	unsigned max_nested_paths; /* --max-nested-paths, 0: no limit */
	int digest_tags;           /* component images also got a tag */
	int source_layout; /* 1: images at their source paths (push --layout
	                      source, or a record older than layouts); 0:
	                      oc-mirror's layout ("layout" in the record) */
} al_store_push;

/* Free what p holds and zero it; NULL is a no-op. */
AL_EXPORT void al_store_push_clear(al_store_push *p);

/*
 * Append rec to STORE/airlock/pushes.json ({"airlockPushes":1,"pushes":
 * [...]}, the newest last, at most AL_STORE_PUSHES_MAX kept). Written
 * even on a store opened read-only: it is the one file push writes
 * (docs/push.md), under a lock (airlock/pushes.lock) so that two pushes
 * never lose each other's record. AL_EINVAL without registry.
 */
#define AL_STORE_PUSHES_MAX 100
AL_EXPORT int al_store_push_put(al_store *s, const al_store_push *rec);

/*
 * The newest push record into *out (cleared by the caller, written only on
 * success). AL_ENOTFOUND when the store records no push; AL_EPARSE naming
 * the file when it does not parse.
 */
AL_EXPORT int al_store_push_last(al_store *s, al_store_push *out);

/* --- removal (airlock delete, docs/lifecycle.md) ------------------------ */

/* Remove every record of the release whose manifest digest is digest from
 * airlock/releases.json, under the store's lock. AL_ENOTFOUND when there
 * is none; read-only store: AL_EINVAL. */
AL_EXPORT int al_store_release_remove(al_store *s, const al_digest *digest);

/* Remove STORE/signatures/<algo>=<hex>/ and every signature in it (none
 * there: 0). Read-only store: AL_EINVAL. */
AL_EXPORT int al_store_signatures_remove(al_store *s, const al_digest *release);

/* --- charts: the "charts" array of airlock/releases.json, typed --------- */

/*
 * One Helm chart the store records (docs/helm.md "The store's record"):
 * what 'airlock mirror' stored for one chart of mirror.helm. Kept in
 * airlock/releases.json beside "releases" and "catalogs", so that every
 * pack carries it and unpack merges it. Strings are owned (NULL when the
 * record lacks them).
 */
typedef struct al_store_chart {
	char *name;           /* store name (charts/NAME:TAG, or the oci://
	                         reference's), the key */
	al_digest digest;     /* the chart artifact's manifest */
	int has_digest;       /* 0: "digest" missing or invalid */
	char *chart;          /* Chart.yaml name */
	char *version;        /* Chart.yaml version */
	char *app_version;    /* Chart.yaml appVersion */
	char *source;         /* archive URL, local path or oci:// reference */
	char *mirrored;       /* ISO 8601 UTC time of the last mirror */
	long long unresolved; /* image fields not resolved, -1 unknown */
	char **images;        /* the images found in the chart, sorted */
	size_t nimages;
} al_store_chart;

AL_EXPORT void al_store_chart_clear(al_store_chart *c);
AL_EXPORT void al_store_charts_free(al_store_chart *list, size_t n);

/*
 * Every recorded chart, in file order (none when releases.json is missing
 * or has no "charts"). Caller frees with al_store_charts_free. AL_EPARSE
 * naming the file when "charts" is not an array of objects.
 */
AL_EXPORT int al_store_charts_list(al_store *s, al_store_chart **out,
                                   size_t *n);

/*
 * Add c (c->name and c->has_digest required) or replace the record of the
 * same name, under the store's lock. Read-only store: AL_EINVAL.
 */
AL_EXPORT int al_store_chart_put(al_store *s, const al_store_chart *c);

AL_END_DECL

#endif
