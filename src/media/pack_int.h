/* pack_int.h: helpers shared by pack.c, pack_write.c and pack_unpack.c
 * (internal, not installed). */
#ifndef AIRLOCK_PACK_INT_H
#define AIRLOCK_PACK_INT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "airlock/buf.h"
#include "airlock/pack.h"
#include "airlock/store.h"

/* What a pack entry path names in the store. */
enum {
	AL_PK_NONE = 0,
	AL_PK_BLOB = 1,     /* blobs/sha256/<hex>, blobs/sha512/<hex> */
	AL_PK_SIG = 2,      /* signatures/sha256=<hex>/signature-<n> */
	AL_PK_INDEX = 3,    /* index.json */
	AL_PK_RELEASES = 4, /* airlock/releases.json */
};

#define AL_PACK_LABEL "airlock-volume.json"
#define AL_PACK_LABEL_MAX 4096
#define AL_PACK_SIGLEN 64
#define AL_PACK_CHUNK (1024 * 1024)

/* Hex of the longest digest (SHA-512) plus NUL. */
#define AL_PACK_HEX_MAX 129

/* Classify a store-relative path (AL_PK_NONE when it is none of the above). */
int al_pack__classify(const char *path);
/* 1 if s is exactly 64 lowercase hex digits. */
int al_pack__is_hex64(const char *s);

/* Deepest index nesting al_pack__image_complete follows. */
#define AL_PACK_IMAGE_DEPTH_MAX 8

/*
 * 1 when the manifest or index d (media_type NULL: read from the manifest)
 * and every blob it reaches, nondistributable layers aside, are in s; 0
 * otherwise (errors cleared). A descriptor of another media type is
 * complete when its blob is there. Used by both importers (pack_unpack.c,
 * pack_ocmirror.c) to name only whole images.
 */
int al_pack__image_complete(al_store *s, const al_digest *d,
                            const char *media_type, int depth);
/* The same, a blob counting as there when it is in s or in also (NULL:
 * s only): a delta imported into the quarantine completes its images
 * with its base's blobs in the store, read only. */
int al_pack__image_complete_in(al_store *s, al_store *also, const al_digest *d,
                               const char *media_type, int depth);
/* Read blob d from s, or from also when s lacks it and also is given. */
int al_pack__read_blob2(al_store *s, al_store *also, const al_digest *d,
                        al_buf *b);
/* 1 if s is exactly n lowercase hex digits. */
int al_pack__is_hex(const char *s, size_t n);
/* For a blob path "blobs/<algo>/<hex>": the algorithm (AL_DIGEST_SHA256 or
 * AL_DIGEST_SHA512), 0 for any other path. */
int al_pack__blob_algo(const char *path);
/* Read at most max bytes of the JSON file path (AL_ENOTFOUND if missing)
 * and, when it does not parse, refuse it as damaged store metadata:
 * AL_EVERIFY naming the file. */
int al_pack__load_store_json(json_t **out, const char *path, size_t max);
/* "sha256:<hex of the DER SubjectPublicKeyInfo>" of the PEM Ed25519 public
 * key in pubfile into out (at least 80 bytes). */
int al_pack__key_id(const char *pubfile, char *out, size_t len);
/* "YYYY-MM-DDTHH:MM:SSZ" of now into out (at least 32 bytes). */
void al_pack__timestamp(char *out, size_t len);
/* Ed25519 over msg with the PEM private key in keyfile. */
int al_pack__sign(const char *keyfile, const uint8_t *msg, size_t n,
                  uint8_t sig[AL_PACK_SIGLEN]);
/* AL_EVERIFY unless sig is an Ed25519 signature of msg by the PEM public key in
 * pubfile. */
int al_pack__verify(const char *pubfile, const uint8_t *msg, size_t n,
                    const uint8_t *sig, size_t siglen);
/* SHA-256 hex of p[0..n) into hex (65 bytes). */
int al_pack__sha256_hex(const void *p, size_t n, char hex[65]);

/* Sorted entry names of dir (no "." / ".."); a missing dir lists empty. Free
 * with al_pack__free_list. */
int al_pack__list_dir(const char *dir, char ***out, size_t *n);
void al_pack__free_list(char **v, size_t n);

/*
 * The one walk of STORE/signatures (root: the store path) that pack,
 * inventory and pack write share: fn(ud, "signatures/<d>/<f>", path) for
 * every regular file al_pack__classify calls a signature, in name order.
 * A directory entry that is not a directory is skipped (the store check
 * reports it); fn's negative return ends the walk with it.
 */
typedef int (*al_pack__sig_fn)(void *ud, const char *rel, const char *path);
int al_pack__walk_signatures(const char *root, al_pack__sig_fn fn, void *ud);

/* --- quarantine (pack_quarantine.c, docs/security.md) ---------------- */

/* "STORE/airlock/quarantine/<id>" (caller frees; NULL on OOM). */
char *al_pack__quarantine_root(al_store *s, const char *id);
/* Open (creating it) the quarantine store ROOT/store, writable. */
int al_pack__quarantine_open(const char *root, al_store **out);
/* Remove the tree at path without following links. */
int al_pack__rm_tree(const char *path);
/* Remove the quarantine root (and STORE/airlock/quarantine once empty). */
int al_pack__quarantine_remove(const char *root);
/* Remove what removals killed before their end left in parent
 * (STORE/airlock/quarantine/.gone-<id>), and parent once empty. */
int al_pack__quarantine_sweep(const char *parent);
/* al_pack_unpack, and with qsrc (a quarantine root) the promotion of what
 * it holds: entries come from there instead of volumes. */
int al_pack__unpack_run(al_store *s, const char *dir,
                        const al_unpack_opts *opts, al_unpack_result *res,
                        const char *qsrc);

/* al_pack_inventory's document as JSON (the caller decrefs). */
int al_pack__inventory_json(al_store *s, json_t **out);

/*
 * oc-mirror v2 archives (pack_ocmirror.c, docs/pack.md): 1 when dir holds
 * mirror_NNNNNN.tar files and no airlock pack (airlock-*), else 0.
 * al_pack__ocmirror_unpack imports them into s as al_pack_unpack does a
 * pack: every blob checked against its digest before it is visible,
 * hostile paths, links, devices and truncated archives refused
 * (AL_EVERIFY), the images named last ("localhost:55000/REPO:TAG", and
 * "...@sha256:..." for an untagged root manifest) when complete; a gap
 * in the numbering is a missing volume (res->missing, complete 0).
 */
int al_pack__ocmirror_detect(const char *dir);
struct al_unpack_opts;
struct al_unpack_result;
int al_pack__ocmirror_unpack(al_store *s, const char *dir,
                             const struct al_unpack_opts *opts,
                             struct al_unpack_result *res);

#endif
