/* pack.h: removable media: pack a store into tar volumes, verify and import
 * them, inventories, Ed25519 keys. */
#ifndef AIRLOCK_PACK_H
#define AIRLOCK_PACK_H

#include "common.h"
#include "clock.h"
#include "log.h"
#include "store.h"

AL_BEGIN_DECL

/*
 * Formats (docs/pack.md): a pack is a manifest "airlock-<id>.json" (with
 * an optional detached Ed25519 signature "airlock-<id>.json.sig", 64 raw
 * bytes) and volumes "airlock-<id>-0001.tar", ... (POSIX pax/ustar, plain
 * files only). Volume entries are named after their place in the store
 * ("blobs/sha256/<hex>", "signatures/sha256=<hex>/signature-<n>",
 * "index.json", "airlock/releases.json"); a blob split across volumes is
 * carried as "<path>.part-0001", ...; each volume starts with the label
 * "airlock-volume.json" ({"pack": id, "volume": n}).
 *
 * Thread safety: none of these functions share state; each call uses its
 * store as the store's own rules allow (one writer process per store).
 */

/* Pack ids: [A-Za-z0-9-], at most this many bytes (plus NUL). */
#define AL_PACK_ID_MAX 64
/* Default and smallest volume size. */
#define AL_PACK_VOLUME_DEFAULT (4 * AL_GIB - 1)
#define AL_PACK_VOLUME_MIN (64 * AL_KIB)
/* Bounds on what unpack reads from media. */
#define AL_PACK_MANIFEST_MAX (64 * AL_MIB)
#define AL_PACK_META_MAX (64 * AL_MIB)     /* index.json, releases.json */
#define AL_PACK_SIGFILE_MAX (256 * AL_KIB) /* signatures/.../signature-<n> */
#define AL_PACK_INVENTORY_MAX (256 * AL_MIB)

/* The version of al_pack_opts this header describes. */
#define AL_PACK_OPTS_VERSION 1

typedef struct al_pack_opts {
	/* AL_PACK_OPTS_VERSION of the caller's header (0, a zeroed struct,
	 * reads as 1; a newer one is AL_EINVAL) */
	unsigned version;
	uint64_t
	    volume_size; /* bytes per volume file; 0: AL_PACK_VOLUME_DEFAULT */
	const char
	    *since; /* delta against this earlier pack of the store, or NULL */
	const char *have_path; /* delta against this inventory (al_inventory),
	                          or NULL */
	const char
	    *sign_key; /* PEM Ed25519 private key: write the .sig, or NULL */
	al_progress_fn
	    progress; /* may be NULL; called from the calling thread */
	void *progress_ud;
	const al_cancel
	    *cancel; /* polled between chunks (AL_ECANCELED), may be NULL */
	/* 1: do not refuse (AL_EIO) a pack that needs more bytes than the
	 * output directory's file system has free (docs/lifecycle.md) */
	int no_space_check;
} al_pack_opts;

/* Every other field zero / NULL: the defaults; set fields by name. */
#define AL_PACK_OPTS_INIT                                                      \
	{                                                                      \
		.version = AL_PACK_OPTS_VERSION                                \
	}

/* The version of al_pack_result this header describes. */
#define AL_PACK_RESULT_VERSION 1

/* What al_pack_write did: plain data, nothing to free. */
typedef struct al_pack_result {
	/* AL_PACK_RESULT_VERSION of the caller's header, set by
	 * AL_PACK_RESULT_INIT (0, a zeroed struct, reads as 1; a newer one is
	 * AL_EINVAL, nothing written): the library writes no field past it */
	unsigned version;
	char id[AL_PACK_ID_MAX + 1];
	uint64_t volumes;
	uint64_t entries; /* files carried (a split blob counts once) */
	uint64_t bytes;   /* payload bytes carried */
	uint64_t skipped; /* files left out because the far side has them */
	uint64_t elapsed_ms;
	/* signatures, names of index.json and release records left out
	 * because an import no key verified wrote them (docs/security.md
	 * "Marks of untrusted imports") */
	uint64_t untrusted;
} al_pack_result;

/* Every other field zero / NULL; set the version by name. */
#define AL_PACK_RESULT_INIT                                                    \
	{                                                                      \
		.version = AL_PACK_RESULT_VERSION                              \
	}

/*
 * Write the store's blobs (every file under blobs/sha256/ and
 * blobs/sha512/), signatures, index.json and airlock/releases.json into
 * outdir (created if missing)
 * as volumes of at most volume_size bytes each, then the manifest (and
 * with sign_key its signature), and record the pack in
 * STORE/airlock/packs/<id>.json for later --since deltas. A blob larger
 * than the room left in a volume is split across volumes. Volumes are
 * written as temporary files, fsynced, and renamed when complete.
 * since and have_path are exclusive (AL_EINVAL). The manifest carries a
 * "sequence" that grows with every pack of the store (reserved in
 * STORE/airlock/pack-sequence). Everything carried is checked before the
 * first volume is written: AL_EVERIFY, naming the file, for store metadata
 * that does not parse (releases.json, index.json, the since record,
 * pack-sequence) and for anything under blobs/ that is not a sha256 or
 * sha512 blob named by its digest (nothing is left out silently).
 * AL_ENOTFOUND: unknown since id or missing key/inventory; AL_EPARSE: bad
 * inventory or key; AL_EINVAL: volume_size below AL_PACK_VOLUME_MIN. On
 * any failure the volumes and signature this call wrote are removed.
 * What an import no key verified wrote (marked signatures, names of
 * index.json and release records, al_store_untrusted_list) is left out,
 * counted in res->untrusted (docs/security.md "Marks of untrusted
 * imports"): a signed pack vouches only for what the store trusts.
 * *res (may be NULL) is written only on success.
 */
AL_EXPORT int al_pack_write(al_store *s, const char *outdir,
                            const al_pack_opts *opts, al_pack_result *res);

/* The version of al_unpack_opts this header describes. */
#define AL_UNPACK_OPTS_VERSION 1

typedef struct al_unpack_opts {
	/* AL_UNPACK_OPTS_VERSION of the caller's header (0, a zeroed struct,
	 * reads as 1; a newer one is AL_EINVAL) */
	unsigned version;
	const char *trust_key;   /* PEM Ed25519 public key: the pack must be
	                            signed by it */
	al_progress_fn progress; /* may be NULL */
	void *progress_ud;
	const al_cancel *cancel; /* may be NULL */
	int allow_rollback; /* 1: a pack older (by sequence) than one imported
	                       before may move tags back (docs/pack.md) */
	/* 1: do not refuse (AL_EIO) an import that needs more bytes than the
	 * store's file system has free (docs/lifecycle.md) */
	int no_space_check;
	/* 1: a pack that no trust_key verified is imported into the store
	 * itself (recorded untrusted), as it was before quarantine; 0 (the
	 * default): it goes to the store's quarantine (al_pack_promote) */
	int accept_untrusted;
} al_unpack_opts;

/* Every other field zero / NULL: the defaults; set fields by name. */
#define AL_UNPACK_OPTS_INIT                                                    \
	{                                                                      \
		.version = AL_UNPACK_OPTS_VERSION                              \
	}

/* The version of al_unpack_result this header describes. */
#define AL_UNPACK_RESULT_VERSION 1

typedef struct al_unpack_result {
	/* AL_UNPACK_RESULT_VERSION of the caller's header, set by
	 * AL_UNPACK_RESULT_INIT (0, a zeroed struct, reads as 1; a newer one is
	 * AL_EINVAL, nothing written): the library writes no field past it */
	unsigned version;
	char id[AL_PACK_ID_MAX + 1];
	int complete; /* 1: every entry imported and the index updated */
	int already;  /* 1: the pack had been imported before */
	uint64_t volumes_total;
	uint64_t volumes_read;     /* volumes read in this run */
	uint64_t entries_imported; /* written in this run */
	uint64_t entries_present;  /* already in the store (skipped) */
	uint64_t bytes;            /* payload bytes written in this run */
	uint64_t images_tagged;
	uint64_t images_incomplete; /* named in the pack's index but missing
	                               blobs (delta without its base) */
	char **missing; /* volume file names still needed (NULL-free array of
	                   nmissing) */
	size_t nmissing;
	int quarantined; /* 1: imported into the quarantine, not the store */
} al_unpack_result;

/* Every other field zero / NULL; set the version by name. */
#define AL_UNPACK_RESULT_INIT                                                  \
	{                                                                      \
		.version = AL_UNPACK_RESULT_VERSION                            \
	}

/*
 * Import the pack in dir into the store. dir holds the manifest and any
 * subset of the volumes; when it holds no manifest, the manifest that an
 * earlier run of the same pack saved in the store (airlock/unpack/<id>/)
 * is used, found by the volume names. With trust_key the manifest's
 * signature must verify (AL_EVERIFY, nothing imported; an unsigned pack
 * is refused too). Then each volume present is streamed: every entry's
 * digest (SHA-256, or SHA-512 for a sha512 blob) is checked before it
 * becomes visible in the store; the store's index is updated last, only
 * when every entry of the pack is present, and only with images whose
 * every blob is in the store.
 *
 * Trust (docs/pack.md): STORE/airlock/imported/<id>.json records which
 * manifest (its SHA-256) was imported, its sequence, and the key that
 * verified it (or none). A pack is "already imported" (res->already, a
 * no-op) only for the same manifest bytes imported with at least this
 * run's trust. A pack whose sequence is below the highest one imported
 * before (by the same key with trust_key; by any pack without) that would
 * move a tag to another digest is refused (AL_EVERIFY, naming the tag and
 * both digests) unless allow_rollback. An index entry that names a blob
 * other than an image manifest or index is refused (AL_EVERIFY). A
 * manifest, signature or volume that is not a regular file (a FIFO, a
 * device) is refused (AL_EVERIFY) without blocking.
 *
 * Returns 0 when every volume given was read, also when volumes are still
 * missing (res->complete == 0, res->missing names them; a later run with
 * them completes the import). Hostile or damaged media: AL_EVERIFY
 * (digest mismatch, bad signature, an entry or volume that does not
 * belong to the pack, a symlink, hard link or device, a path escaping
 * the store, a duplicate or oversized entry, a truncated volume) with a
 * message naming the volume and entry; AL_ENOTFOUND for a delta whose
 * base pack was never imported into the store itself (also when it is
 * only quarantined: nothing written); AL_EPARSE for a malformed manifest.
 * Quarantine (docs/security.md "Untrusted imports"): without trust_key
 * (and without accept_untrusted) nothing of the pack reaches the store
 * itself. It is imported, with the same checks, into a store of its own,
 * STORE/airlock/quarantine/<id>/store, with the pack's manifest, signature,
 * index.json and releases.json kept in STORE/airlock/quarantine/<id>/pack
 * (res->quarantined). No command reads it there; al_pack_promote moves it
 * into the store once its signature verifies, al_pack_drop removes it. A
 * quarantine holding another manifest of the same id is AL_EEXIST (drop
 * it first). A trusted import of pack id removes its quarantine.
 *
 * Safe to interrupt anywhere: a rerun continues and trusts nothing
 * half-written. *res (may be NULL) is filled in on success and on
 * failure (clear it with al_unpack_result_clear).
 */
AL_EXPORT int al_pack_unpack(al_store *s, const char *dir,
                             const al_unpack_opts *opts, al_unpack_result *res);
/* The former name of al_pack_unpack, kept until its callers move. */
AL_EXPORT int al_unpack(al_store *s, const char *dir,
                        const al_unpack_opts *opts, al_unpack_result *res);
/* Free what r holds and zero it; NULL is a no-op. */
AL_EXPORT void al_unpack_result_clear(al_unpack_result *r);

/*
 * Promote the quarantined pack id into the store: its saved manifest must
 * verify with opts->trust_key (AL_EVERIFY, the quarantine kept), unless
 * opts->accept_untrusted (then recorded untrusted); without either,
 * AL_EINVAL. Each entry is taken from the quarantine and checked against
 * the manifest again, then imported as al_pack_unpack does (rollback and
 * index rules included); the quarantine is removed once the import is
 * complete. AL_ENOTFOUND when nothing of id is quarantined, AL_EVERIFY
 * when its import was never completed or an entry is missing.
 */
AL_EXPORT int al_pack_promote(al_store *s, const char *id,
                              const al_unpack_opts *opts,
                              al_unpack_result *res);
/* Remove the quarantined pack id (AL_ENOTFOUND if there is none). */
AL_EXPORT int al_pack_drop(al_store *s, const char *id);

/* A quarantined pack, for check and inventory. */
typedef struct al_quarantined {
	char id[AL_PACK_ID_MAX + 1];
	int complete;  /* its import into the quarantine completed */
	int signed_;   /* it came with a manifest signature */
	char **images; /* the names its index gives (nimages) */
	size_t nimages;
} al_quarantined;
/* Every quarantined pack of the store, by id; *out NULL when none. */
AL_EXPORT int al_pack_quarantine_list(al_store *s, al_quarantined **out,
                                      size_t *n);
AL_EXPORT void al_pack_quarantine_list_free(al_quarantined *v, size_t n);

/*
 * What the store holds, for --have on the staging side:
 * {"airlockInventory":1,"created":"...","tool":"airlock 0.1.0",
 *  "blobs":["sha256:...",...],
 *  "signatures":[{"path":"signatures/sha256=<hex>/signature-1","sha256":"<hex>"},...],
 *  "packs":["<id>",...]} (packs imported into this store).
 * The document, indented, with a trailing newline (what `airlock
 * inventory` writes) in *json (NUL-terminated, *len bytes, len may be
 * NULL); the caller frees it. *json written only on success.
 */
AL_EXPORT int al_pack_inventory(al_store *s, char **json, size_t *len);

/*
 * Make an Ed25519 key pair: "<prefix>.key" (PKCS#8 PEM, mode 0600) and
 * "<prefix>.pub" (SubjectPublicKeyInfo PEM). Existing files are not
 * overwritten (AL_EEXIST).
 */
AL_EXPORT int al_pack_keygen(const char *prefix);

/* 1 if id is a well-formed pack id. */
AL_EXPORT int al_pack_id_valid(const char *id);

AL_END_DECL

#endif
