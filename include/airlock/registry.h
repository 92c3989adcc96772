/* registry.h: OCI distribution client: manifests, streamed digest-checked
 * blobs, uploads, mounts, tags. */
#ifndef AIRLOCK_REGISTRY_H
#define AIRLOCK_REGISTRY_H

#include "common.h"
#include "buf.h"
#include "digest.h"
#include "http.h"
#include "auth.h"
#include "regconf.h"

AL_BEGIN_DECL

/* Bound on manifest size (as containers/image: 4 MiB). */
#define AL_MANIFEST_MAX (4 * AL_MIB)

/* The Accept list for manifests: OCI manifest and index, Docker schema2
 * manifest and manifest list. */
#define AL_MANIFEST_ACCEPT                                                     \
	"application/vnd.oci.image.manifest.v1+json, "                         \
	"application/vnd.oci.image.index.v1+json, "                            \
	"application/vnd.docker.distribution.manifest.v2+json, "               \
	"application/vnd.docker.distribution.manifest.list.v2+json"

/* The version of al_registry_opts this header describes. */
#define AL_REGISTRY_OPTS_VERSION 1

typedef struct al_registry_opts {
	/* AL_REGISTRY_OPTS_VERSION of the caller's header (0, a zeroed struct,
	 * reads as 1; a newer one is AL_EINVAL) */
	unsigned version;
	al_http_opts
	    http;      /* per-request timeouts, retries, proxy, CA, cancel */
	al_auth *auth; /* shared, borrowed; NULL = anonymous */
	/* 1: this registry is insecure (--tls-verify=false): TLS is not
	 * verified, and plain http:// is used if the TLS handshake fails
	 * (as containers/image does). Loopback registries are not special. */
	int insecure;
	uint64_t chunk_size; /* upload chunk size; default 16 MiB; blobs
	                      * up to this size go in one PUT */
	/* A directory of TLS files (".crt" CAs, a ".cert" and ".key"
	 * client pair) used for every registry instead of its certs.d
	 * directory
	 * (--cert-dir, containers/image DockerCertPath); NULL: certs.d. */
	const char *cert_dir;
	/* registries.conf (borrowed; NULL: none), the policy gate of every
	 * request (docs/security.md): a host it blocks is refused by
	 * al_registry_new, a blocked "host/namespace" prefix by each request
	 * to a repository under it (AL_EAUTH naming the file, nothing sent);
	 * insecure = true for the host acts as insecure above. */
	const al_regconf *regconf;
} al_registry_opts;

/* Every other field zero / NULL: the defaults; set fields by name. */
#define AL_REGISTRY_OPTS_INIT                                                  \
	{                                                                      \
		.version = AL_REGISTRY_OPTS_VERSION, .http = AL_HTTP_OPTS_INIT \
	}

/*
 * A client for one registry host ("quay.io", "127.0.0.1:5000").
 * Not thread-safe: one per worker thread (they share opts->auth).
 * Every error message names the URL or "host/repo@digest" concerned.
 * host "docker.io" (or "index.docker.io") is reached at
 * registry-1.docker.io; al_registry_host returns host as given.
 * opts->auth NULL: anonymous (Bearer tokens still requested as needed).
 */
typedef struct al_registry al_registry;
AL_EXPORT int al_registry_new(al_registry **out, const char *host,
                              const al_registry_opts *opts);
AL_EXPORT void al_registry_free(al_registry *r);
AL_EXPORT const char *al_registry_host(const al_registry *r);

/*
 * GET a manifest by tag or digest. body (bounded by its max, at most
 * AL_MANIFEST_MAX) receives the exact bytes; *media_type (caller frees)
 * the Content-Type (or the body's mediaType when the server sends a
 * generic one); *digest the sha256 of the bytes. When ref is a digest the
 * bytes must match it (AL_EVERIFY otherwise). AL_ENOTFOUND on 404 /
 * MANIFEST_UNKNOWN, AL_EAUTH on 401/403 after the challenge.
 */
AL_EXPORT int al_registry_get_manifest(al_registry *r, const char *repo,
                                       const char *ref, al_buf *body,
                                       char **media_type, al_digest *digest);

/* HEAD a manifest: *exists 1/0; digest from Docker-Content-Digest when
 * present (else digest->len == 0). media_type may be NULL. */
AL_EXPORT int al_registry_head_manifest(al_registry *r, const char *repo,
                                        const char *ref, int *exists,
                                        al_digest *digest, char **media_type);

/* PUT manifest bytes under ref (tag or digest) with Content-Type
 * media_type. The bytes are sent unchanged so the digest is preserved. */
AL_EXPORT int al_registry_put_manifest(al_registry *r, const char *repo,
                                       const char *ref, const uint8_t *p,
                                       size_t n, const char *media_type);

/* HEAD a blob: *exists 1/0, *size when known (may be NULL). */
AL_EXPORT int al_registry_blob_exists(al_registry *r, const char *repo,
                                      const al_digest *d, int *exists,
                                      uint64_t *size);

#define AL_BLOB_NOVERIFY 1 /* the sink verifies the digest itself */

/*
 * Stream a blob into sink (follows redirects to object storage without
 * Authorization; a resumed transfer asks the registry again for a fresh
 * redirect URL and continues with Range). Unless flags has
 * AL_BLOB_NOVERIFY the bytes are hashed and AL_EVERIFY is returned on a
 * digest or size mismatch (size 0 = unknown). progress (may be NULL) is
 * called with the byte count of each chunk delivered.
 */
AL_EXPORT int al_registry_get_blob(al_registry *r, const char *repo,
                                   const al_digest *d, uint64_t size,
                                   const al_writer *sink, int flags,
                                   void (*progress)(void *ud, uint64_t n),
                                   void *progress_ud);
/*
 * al_registry_get_blob continuing a partial download: sink holds the
 * blob's first offset bytes already (a partial file kept from an earlier
 * attempt or run), the first request asks "Range: bytes=<offset>-". A
 * server that ignores the range (200), answers another start or another
 * total length, or 416, makes it start over: sink->reset, then the whole
 * blob. offset > 0 needs size > offset, AL_BLOB_NOVERIFY (the sink hashes
 * the whole blob, prefix included) and a sink with reset (AL_EINVAL).
 */
AL_EXPORT int al_registry_get_blob_from(al_registry *r, const char *repo,
                                        const al_digest *d, uint64_t size,
                                        uint64_t offset, const al_writer *sink,
                                        int flags,
                                        void (*progress)(void *ud, uint64_t n),
                                        void *progress_ud);

/*
 * Upload a blob of size bytes from reader (must support rewind for
 * retries): POST an upload session, then one PUT with the body for blobs
 * up to chunk_size, else PATCH chunks and a final PUT ?digest=. (A
 * "monolithic POST ?digest=" is not relied on: docker-registry 2.8 answers
 * 202 and ignores the body.) Returns 0 once the registry confirmed the
 * blob (201, or it already existed).
 */
AL_EXPORT int al_registry_put_blob(al_registry *r, const char *repo,
                                   const al_digest *d, uint64_t size,
                                   const al_reader *reader,
                                   void (*progress)(void *ud, uint64_t n),
                                   void *progress_ud);

/*
 * An upload session step by step, for a caller that keeps the session
 * across failures and runs (a resumable push, docs/push.md). location is
 * the session's absolute URL (caller frees); every answer that names a
 * new one replaces *location.
 *
 * al_registry_upload_start: POST a session (202), *location set.
 * al_registry_upload_status: GET the session (distribution-spec "Pushing
 * a blob in chunks", end-13): *offset is how many bytes it holds (its
 * Range "0-<end>"). AL_ENOTFOUND when the session is gone (404) or no
 * longer usable (400, 416: distribution refuses a session whose bytes
 * passed the offset its state token records, as after a chunk cut in
 * the middle): start a new one.
 * al_registry_upload_chunk: PATCH the bytes [offset, offset + len) read
 * from reader, with Content-Range (202). A reader without rewind is not
 * sent twice: after a failure, ask the status.
 * al_registry_upload_finish: PUT ?digest= with no body (201): the
 * registry checks the digest of the bytes it holds.
 */
AL_EXPORT int al_registry_upload_start(al_registry *r, const char *repo,
                                       char **location);
AL_EXPORT int al_registry_upload_status(al_registry *r, const char *repo,
                                        char **location, uint64_t *offset);
AL_EXPORT int al_registry_upload_chunk(al_registry *r, const char *repo,
                                       char **location, uint64_t offset,
                                       uint64_t len, const al_reader *reader);
AL_EXPORT int al_registry_upload_finish(al_registry *r, const char *repo,
                                        const char *location,
                                        const al_digest *d);

/* Cross-repository mount: POST ?mount=&from=. *mounted = 1 on 201. A 202
 * (registry opened an upload session instead) is cancelled and gives
 * *mounted = 0 so the caller uploads. */
AL_EXPORT int al_registry_mount_blob(al_registry *r, const char *repo,
                                     const char *from_repo, const al_digest *d,
                                     int *mounted);

/* All tags of repo (follows Link pagination; unsorted as the registry
 * sends them). Caller frees each tag and the array. */
AL_EXPORT int al_registry_list_tags(al_registry *r, const char *repo,
                                    char ***tags, size_t *ntags);

/* Media type of the referrers API answer (an OCI image index). */
#define AL_MT_REFERRERS_INDEX "application/vnd.oci.image.index.v1+json"

/*
 * GET /v2/<repo>/referrers/<subject> (OCI distribution-spec 1.1), with
 * ?artifactType= when artifact_type is not NULL (a registry may ignore the
 * filter: check each descriptor). body (bounded by its max) receives the
 * index bytes. AL_ENOTFOUND when the registry has no referrers API (404,
 * and 400, 405, 406 or 501 as some registries answer an unknown path):
 * fall back to the "sha256-<hex>" tag schema.
 */
AL_EXPORT int al_registry_get_referrers(al_registry *r, const char *repo,
                                        const al_digest *subject,
                                        const char *artifact_type,
                                        al_buf *body);

/*
 * DELETE /v2/<repo>/manifests/<digest> (distribution-spec "Deleting
 * manifests"): *deleted (may be NULL) is 1 on 202, 0 when the registry no
 * longer has it (404, MANIFEST_UNKNOWN: deleting twice is not an error).
 * The registry removes every tag of the manifest; its blobs stay until
 * the registry's own garbage collection runs. AL_EPROTO on 405
 * (deletes disabled), AL_EAUTH on 401/403.
 */
AL_EXPORT int al_registry_delete_manifest(al_registry *r, const char *repo,
                                          const al_digest *digest,
                                          int *deleted);

AL_END_DECL

#endif
