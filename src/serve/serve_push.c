/* serve_push.c: airlock serve's push side (OCI distribution spec "Pushing
 * blobs", "Pushing manifests"): upload sessions streamed into the store's
 * blob writer, manifests recorded in index.json under the push names. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/rand.h>

#include "airlock/error.h"
#include "airlock/oci.h"
#include "airlock/transfer.h"
#include "serve_int.h"
#include "store_int.h"

#define MANIFEST_MAX (4u << 20)
/* Manifest bodies held in memory at once, by all requests. */
#define MANIFEST_BUDGET (64u << 20)
#define BLOB_MAX_DEFAULT (64ull << 30)
#define UPLOADS_DEFAULT 32u
#define UPLOAD_IDLE_DEFAULT_S 600u
#define REPO_MAX 255u

struct al_serve_upload {
	char id[33]; /* 32 lowercase hex digits: never a path */
	char *repo;
	al_blob_writer *w;
	uint64_t written;
	uint64_t last_ms;
	int busy; /* held by one request */
};

static uint64_t blob_max(const al_serve_server *sv)
{
	return sv->o->max_blob ? sv->o->max_blob : BLOB_MAX_DEFAULT;
}

/* ---- names ---- */

static int lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

int al_serve__repo_valid(const char *s)
{
	size_t n = strlen(s), i = 0;

	if (n == 0 || n > REPO_MAX)
		return 0;
	/* [a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*(\/[a-z0-9]+(...)*)* */
	while (i < n) {
		if (!lower_alnum(s[i]))
			return 0;
		while (i < n && lower_alnum(s[i]))
			i++;
		if (i == n)
			return 1;
		if (s[i] == '/') {
			i++;
			continue;
		}
		if (s[i] == '.')
			i++;
		else if (s[i] == '_')
			i += s[i + 1] == '_' ? 2 : 1;
		else if (s[i] == '-')
			while (s[i] == '-')
				i++;
		else
			return 0;
		if (i == n || !lower_alnum(s[i]))
			return 0;
	}
	return 0; /* a trailing '/' */
}

int al_serve__tag_valid(const char *s)
{
	size_t i;

	/* [a-zA-Z0-9_][a-zA-Z0-9._-]{0,127} */
	for (i = 0; s[i] != '\0'; i++) {
		char c = s[i];
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		         (c >= '0' && c <= '9') || c == '_' ||
		         (i > 0 && (c == '.' || c == '-'));

		if (!ok || i >= 128)
			return 0;
	}
	return i > 0;
}

static int parse_u64(const char **s, uint64_t *v)
{
	const char *p = *s;

	*v = 0;
	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (*v > (UINT64_MAX - 9) / 10)
			return -1;
		*v = *v * 10 + (uint64_t)(*p - '0');
	}
	*s = p;
	return 0;
}

int al_serve__parse_content_range(const char *s, uint64_t *first,
                                  uint64_t *last)
{
	uint64_t total;

	if (strncmp(s, "bytes ", 6) == 0)
		s += 6;
	else if (strncmp(s, "bytes=", 6) == 0)
		s += 6;
	if (parse_u64(&s, first) < 0 || *s++ != '-' || parse_u64(&s, last) < 0)
		return -1;
	if (*s == '/') {
		s++;
		if (!(s[0] == '*' && s[1] == '\0') &&
		    (parse_u64(&s, &total) < 0 || *s != '\0' || total <= *last))
			return -1;
		if (s[0] == '*')
			s++;
	}
	if (*s != '\0' || *last < *first)
		return -1;
	return 0;
}

/* ---- answers ---- */

/* An empty answer with a Location, a Docker-Content-Digest and the
 * Range and Docker-Upload-UUID of a session (each may be NULL). */
static struct MHD_Response *empty(const char *location, const char *digest,
                                  const al_serve_upload *up)
{
	struct MHD_Response *r =
	    MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
	char range[64];

	if (r == NULL)
		return NULL;
	if (location != NULL)
		MHD_add_response_header(r, "Location", location);
	if (digest != NULL)
		MHD_add_response_header(r, "Docker-Content-Digest", digest);
	if (up != NULL) {
		/* the bytes received so far, inclusive; "0-0" for none, as
		 * docker distribution answers */
		snprintf(range, sizeof(range), "0-%" PRIu64,
		         up->written > 0 ? up->written - 1 : 0);
		MHD_add_response_header(r, "Range", range);
		MHD_add_response_header(r, "Docker-Upload-UUID", up->id);
	}
	return r;
}

static enum MHD_Result send_empty(struct MHD_Connection *c,
                                  al_serve_request *rq, unsigned status,
                                  const char *location, const char *digest)
{
	return al_serve__send(c, rq, status, empty(location, digest, NULL), 0);
}

static void upload_release(al_serve_server *sv, al_serve_upload *up);

/* status (202, 204, 416) with the session's Location, Range and UUID; the
 * session is released before the answer goes out, so that the client's
 * next request, which may come before this one is logged, finds it
 * free. */
static enum MHD_Result send_session(al_serve_server *sv,
                                    struct MHD_Connection *c,
                                    al_serve_request *rq, unsigned status)
{
	al_serve_upload *up = rq->up;
	char *loc = al_sprintf("/v2/%s/blobs/uploads/%s", up->repo, up->id);
	struct MHD_Response *r = loc != NULL ? empty(loc, NULL, up) : NULL;

	free(loc);
	if (r == NULL)
		return al_serve__send_error(c, rq, 500, "UNKNOWN",
		                            "out of memory");
	rq->up = NULL;
	upload_release(sv, up);
	return al_serve__send(c, rq, status, r, 0);
}

static enum MHD_Result send_created(struct MHD_Connection *c,
                                    al_serve_request *rq, const char *repo,
                                    const char *kind, const char *digest)
{
	char *loc = al_sprintf("/v2/%s/%s/%s", repo, kind, digest);
	enum MHD_Result ok;

	if (loc == NULL)
		return al_serve__send_error(c, rq, 500, "UNKNOWN",
		                            "out of memory");
	ok = send_empty(c, rq, 201, loc, digest);
	free(loc);
	return ok;
}

/* ---- upload sessions ---- */

static void upload_free(al_serve_upload *up)
{
	if (up == NULL)
		return;
	al_blob_writer_abort(up->w); /* its temporary file removed */
	free(up->repo);
	free(up);
}

/* A new session for repo, held by the caller: NULL and *status when the
 * bound is reached (429) or on failure (500). */
static al_serve_upload *upload_new(al_serve_server *sv, const char *repo,
                                   unsigned *status)
{
	unsigned max =
	    sv->o->max_uploads ? sv->o->max_uploads : UPLOADS_DEFAULT;
	al_serve_upload *up = calloc(1, sizeof(*up)), **grown;
	unsigned char rnd[16];
	size_t i;

	*status = 500;
	if (up == NULL || (up->repo = al_strdup(repo)) == NULL ||
	    RAND_bytes(rnd, sizeof(rnd)) != 1)
		goto fail;
	for (i = 0; i < sizeof(rnd); i++)
		snprintf(up->id + 2 * i, 3, "%02x", rnd[i]);
	if (al_store_blob_begin(sv->store, NULL, 0, &up->w) < 0) {
		al_error_clear();
		goto fail;
	}
	up->busy = 1;
	up->last_ms = al_clock_now_ms();
	pthread_mutex_lock(&sv->lock);
	if (sv->nuploads >= max) {
		pthread_mutex_unlock(&sv->lock);
		*status = 429;
		goto fail;
	}
	grown = realloc(sv->uploads, (sv->nuploads + 1) * sizeof(*grown));
	if (grown == NULL) {
		pthread_mutex_unlock(&sv->lock);
		goto fail;
	}
	sv->uploads = grown;
	sv->uploads[sv->nuploads++] = up;
	pthread_mutex_unlock(&sv->lock);
	return up;
fail:
	upload_free(up);
	return NULL;
}

/* The session id of repo, now held by the caller: NULL and *status 404
 * (unknown, or another repository's) or 409 (held by another request). */
static al_serve_upload *upload_take(al_serve_server *sv, const char *repo,
                                    const char *id, unsigned *status)
{
	al_serve_upload *up = NULL;
	size_t i;

	*status = 404;
	pthread_mutex_lock(&sv->lock);
	for (i = 0; i < sv->nuploads; i++) {
		if (strcmp(sv->uploads[i]->id, id) != 0 ||
		    strcmp(sv->uploads[i]->repo, repo) != 0)
			continue;
		if (sv->uploads[i]->busy) {
			*status = 409;
			break;
		}
		up = sv->uploads[i];
		up->busy = 1;
		break;
	}
	pthread_mutex_unlock(&sv->lock);
	return up;
}

/* Take up out of the table (the caller then owns it). */
static void upload_remove(al_serve_server *sv, al_serve_upload *up)
{
	size_t i;

	pthread_mutex_lock(&sv->lock);
	for (i = 0; i < sv->nuploads; i++)
		if (sv->uploads[i] == up) {
			sv->uploads[i] = sv->uploads[--sv->nuploads];
			break;
		}
	pthread_mutex_unlock(&sv->lock);
}

static void upload_release(al_serve_server *sv, al_serve_upload *up)
{
	pthread_mutex_lock(&sv->lock);
	up->busy = 0;
	up->last_ms = al_clock_now_ms();
	pthread_mutex_unlock(&sv->lock);
}

void al_serve__uploads_expire(al_serve_server *sv, int all)
{
	uint64_t idle = (uint64_t)(sv->o->upload_timeout_s
	                               ? sv->o->upload_timeout_s
	                               : UPLOAD_IDLE_DEFAULT_S) *
	                1000u,
	         now = al_clock_now_ms();
	al_serve_upload *gone[16];
	size_t i, n;

	do {
		n = 0;
		pthread_mutex_lock(&sv->lock);
		for (i = 0; i < sv->nuploads && n < 16;) {
			al_serve_upload *up = sv->uploads[i];

			if (all || (!up->busy && now - up->last_ms >= idle)) {
				gone[n++] = up;
				sv->uploads[i] = sv->uploads[--sv->nuploads];
				continue;
			}
			i++;
		}
		pthread_mutex_unlock(&sv->lock);
		for (i = 0; i < n; i++)
			upload_free(gone[i]);
	} while (n == 16);
	if (all) {
		free(sv->uploads);
		sv->uploads = NULL;
	}
}

/* ---- blob requests ---- */

static const char *header(struct MHD_Connection *c, const char *name)
{
	return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}

static const char *arg(struct MHD_Connection *c, const char *name)
{
	return MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, name);
}

/* The body length announced, or UINT64_MAX (chunked, or none given). */
static uint64_t content_length(struct MHD_Connection *c)
{
	const char *s = header(c, "Content-Length");
	uint64_t v;

	if (s == NULL || parse_u64(&s, &v) < 0 || *s != '\0')
		return UINT64_MAX;
	return v;
}

/* Checks of a chunk before its body is read: Content-Range at the
 * session's offset, the size bound. 0 to go on, else the answer sent. */
static int chunk_check(al_serve_server *sv, struct MHD_Connection *c,
                       al_serve_request *rq, enum MHD_Result *ans)
{
	const char *cr = header(c, "Content-Range");
	uint64_t len = content_length(c), first, last;

	rq->range_end = UINT64_MAX;
	if (cr != NULL) {
		/* distribution spec: a chunk out of order is 416 with the
		 * session's Range */
		if (al_serve__parse_content_range(cr, &first, &last) < 0 ||
		    first != rq->up->written ||
		    (len != UINT64_MAX && len != last - first + 1)) {
			*ans = send_session(sv, c, rq, 416);
			return 1;
		}
		rq->range_end = last + 1;
	}
	if ((len != UINT64_MAX && len > blob_max(sv) - rq->up->written) ||
	    (rq->range_end != UINT64_MAX && rq->range_end > blob_max(sv))) {
		*ans = al_serve__send_error(c, rq, 413, "SIZE_INVALID",
		                            "the blob is larger than this "
		                            "registry accepts");
		return 1;
	}
	return 0;
}

/* PUT's or POST's ?digest=: sha256 only (the store's blob writer). */
static int digest_arg(struct MHD_Connection *c, al_serve_request *rq)
{
	const char *d = arg(c, "digest");

	if (d == NULL || !al_serve__digest_valid(d))
		return -1;
	memcpy(rq->digest, d, 72);
	rq->commit = 1;
	return 0;
}

static enum MHD_Result post_upload(al_serve_server *sv,
                                   struct MHD_Connection *c,
                                   al_serve_request *rq, const char *repo)
{
	const char *mount = arg(c, "mount"), *from = arg(c, "from");
	const char *digest = arg(c, "digest");
	unsigned status;
	enum MHD_Result ans;
	al_digest d;

	/* cross-repository mount: the store is one trust domain, so a blob
	 * it holds is mountable from anywhere, with or without from (spec
	 * 1.1 lets a registry mount without it); otherwise an upload (202) */
	if (mount != NULL && al_serve__digest_valid(mount) &&
	    (from == NULL || al_serve__repo_valid(from)) &&
	    al_digest_parse_str(&d, mount) == 0 &&
	    al_store_has_blob(sv->store, &d, NULL) == 1)
		return send_created(c, rq, repo, "blobs", mount);
	al_error_clear();
	if (digest != NULL && digest_arg(c, rq) < 0)
		return al_serve__send_error(c, rq, 400, "DIGEST_INVALID",
		                            "not a sha256 digest");
	if ((rq->up = upload_new(sv, repo, &status)) == NULL)
		return status == 429
		           ? al_serve__send_error(c, rq, 429, "TOOMANYREQUESTS",
		                                  "too many uploads open")
		           : al_serve__send_error(c, rq, 500, "UNKNOWN",
		                                  "cannot start an upload");
	if (chunk_check(sv, c, rq, &ans))
		return ans;
	rq->push = AL_SERVE_PUSH_BLOB;
	return MHD_YES;
}

static enum MHD_Result session_request(al_serve_server *sv,
                                       struct MHD_Connection *c,
                                       al_serve_request *rq, const char *method,
                                       const char *repo, const char *id)
{
	enum MHD_Result ans;
	unsigned status;

	if ((rq->up = upload_take(sv, repo, id, &status)) == NULL)
		return al_serve__send_error(
		    c, rq, status,
		    status == 409 ? "BLOB_UPLOAD_INVALID"
		                  : "BLOB_UPLOAD_UNKNOWN",
		    status == 409 ? "the upload is in use by another request"
		                  : "upload unknown");
	if (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0)
		return send_session(sv, c, rq, 204);
	if (strcmp(method, "DELETE") == 0) {
		al_serve_upload *up = rq->up;

		rq->up = NULL;
		upload_remove(sv, up);
		upload_free(up);
		return send_empty(c, rq, 204, NULL, NULL);
	}
	if (strcmp(method, "PUT") == 0 && digest_arg(c, rq) < 0)
		return al_serve__send_error(c, rq, 400, "DIGEST_INVALID",
		                            "not a sha256 digest");
	if (strcmp(method, "PUT") != 0 && strcmp(method, "PATCH") != 0)
		return al_serve__send_error(c, rq, 405, "UNSUPPORTED",
		                            "method not allowed here");
	if (chunk_check(sv, c, rq, &ans))
		return ans;
	rq->push = AL_SERVE_PUSH_BLOB;
	return MHD_YES;
}

static enum MHD_Result
blob_finish(al_serve_server *sv, struct MHD_Connection *c, al_serve_request *rq)
{
	al_serve_upload *up = rq->up;
	enum MHD_Result ok;
	al_digest d;
	int rc;

	if (rq->range_end != UINT64_MAX && up->written != rq->range_end)
		return send_session(sv, c, rq, 416);
	if (!rq->commit)
		return send_session(sv, c, rq, 202);
	/* the session ends here, verified or not (spec: a failed PUT
	 * leaves nothing behind) */
	rq->up = NULL;
	upload_remove(sv, up);
	if (al_digest_parse_str(&d, rq->digest) < 0) {
		upload_free(up);
		return al_serve__send_error(c, rq, 400, "DIGEST_INVALID",
		                            "not a sha256 digest");
	}
	rc = al_store__blob_commit_as(up->w, &d);
	up->w = NULL;
	if (rc < 0) {
		al_error_clear();
		ok = rc == AL_EVERIFY
		         ? al_serve__send_error(c, rq, 400, "DIGEST_INVALID",
		                                "the bytes do not match the "
		                                "digest")
		         : al_serve__send_error(c, rq, 500, "UNKNOWN",
		                                "the blob cannot be stored");
	} else {
		ok = send_created(c, rq, up->repo, "blobs", rq->digest);
	}
	upload_free(up);
	return ok;
}

/* ---- manifests ---- */

static enum MHD_Result manifest_begin(al_serve_server *sv,
                                      struct MHD_Connection *c,
                                      al_serve_request *rq, const char *repo,
                                      const char *ref)
{
	const char *ct = header(c, "Content-Type");
	uint64_t len = content_length(c);

	if (!(strchr(ref, ':') != NULL ? al_serve__digest_valid(ref)
	                               : al_serve__tag_valid(ref)))
		return al_serve__send_error(c, rq, 400, "MANIFEST_INVALID",
		                            "not a tag or sha256 digest");
	if (len != UINT64_MAX && len > MANIFEST_MAX)
		return al_serve__send_error(c, rq, 413, "SIZE_INVALID",
		                            "manifest larger than 4 MiB");
	/* the media type without parameters ("; charset=utf-8") */
	if ((rq->repo = al_strdup(repo)) == NULL ||
	    (rq->ref = al_strdup(ref)) == NULL ||
	    (ct != NULL &&
	     (rq->content_type = al_strndup(ct, strcspn(ct, "; \t"))) == NULL))
		return al_serve__send_error(c, rq, 500, "UNKNOWN",
		                            "out of memory");
	rq->body.max = MANIFEST_MAX;
	(void)sv;
	rq->push = AL_SERVE_PUSH_MANIFEST;
	return MHD_YES;
}

/* MANIFEST_BLOB_UNKNOWN unless every blob and child the manifest names is
 * in the store (al_store_tag's rule: index.json never names an
 * incomplete image). Foreign layers, fetched from their URLs, aside. */
static int refs_present(al_serve_server *sv, const al_manifest *m)
{
	size_t i;

	if (m->is_index) {
		for (i = 0; i < m->nmanifests; i++)
			if (al_store_has_blob(
			        sv->store, &m->manifests[i].digest, NULL) != 1)
				return 0;
		return 1;
	}
	if (al_store_has_blob(sv->store, &m->config.digest, NULL) != 1)
		return 0;
	for (i = 0; i < m->nlayers; i++) {
		const char *mt = m->layers[i].media_type;

		if (mt != NULL && (strstr(mt, "nondistributable") != NULL ||
		                   strstr(mt, "foreign") != NULL))
			continue;
		if (al_store_has_blob(sv->store, &m->layers[i].digest, NULL) !=
		    1)
			return 0;
	}
	return 1;
}

/*
 * The index.json name for repo:ref (push mapping, al_push_target): the
 * entry that is served as that tag already, else "localhost/REPO:TAG" or
 * "localhost/REPO@DIGEST" (a registry host that al_push_target drops).
 * *name NULL when the digest is served in repo already (nothing to add).
 */
static int entry_name(al_serve_server *sv, const char *repo, const char *ref,
                      const char *digest, char **name)
{
	al_serve_table *t = al_serve__table_get(sv);
	const char *have = NULL;
	char *r = NULL, *f = NULL;
	int rc = 0, istag = strchr(ref, ':') == NULL;

	*name = NULL;
	if (istag)
		have = al_serve__tag_name(t, repo, ref);
	else if (al_serve__find_man(t, repo, digest) != NULL)
		goto out;
	*name = have != NULL ? al_strdup(have)
	                     : al_sprintf("localhost/%s%s%s", repo,
	                                  istag ? ":" : "@", ref);
	if (*name == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	/* the name must come back as repo and ref, or the image would not
	 * be served where it was pushed */
	if ((rc = al_push_target(*name, "", &r, &f)) < 0 ||
	    strcmp(r, repo) != 0 || strcmp(f, ref) != 0) {
		rc = al_error_set(AL_EINVAL,
		                  "'%s' is not a name this "
		                  "registry can record",
		                  repo);
		free(*name);
		*name = NULL;
	}
out:
	free(r);
	free(f);
	al_serve__table_put(sv, t);
	return rc;
}

/* 201 for a manifest; with a subject, OCI-Subject names it (distribution
 * spec 1.1 "Pushing Manifests with Subject"). */
static enum MHD_Result send_manifest_created(struct MHD_Connection *c,
                                             al_serve_request *rq,
                                             const char *digest,
                                             const al_manifest *m)
{
	char *loc = al_sprintf("/v2/%s/manifests/%s", rq->repo, digest);
	struct MHD_Response *r = loc != NULL ? empty(loc, digest, NULL) : NULL;
	char subj[AL_DIGEST_STRMAX];

	free(loc);
	if (r == NULL)
		return al_serve__send_error(c, rq, 500, "UNKNOWN",
		                            "out of memory");
	if (m->has_subject)
		MHD_add_response_header(
		    r, "OCI-Subject", al_digest_str(&m->subject.digest, subj));
	return al_serve__send(c, rq, 201, r, 0);
}

static enum MHD_Result manifest_finish(al_serve_server *sv,
                                       struct MHD_Connection *c,
                                       al_serve_request *rq)
{
	al_manifest m;
	al_descriptor desc;
	char ds[AL_DIGEST_STRMAX], *name = NULL;
	const char *mt;
	enum MHD_Result ok;
	int rc, have_m = 0;

	memset(&m, 0, sizeof(m));
	memset(&desc, 0, sizeof(desc));
	if (al_digest_bytes(&desc.digest, AL_DIGEST_SHA256,
	                    rq->body.ptr != NULL ? rq->body.ptr
	                                         : (const uint8_t *)"",
	                    rq->body.len) < 0) {
		ok = al_serve__send_error(c, rq, 500, "UNKNOWN",
		                          "cannot hash the manifest");
		goto out;
	}
	al_digest_str(&desc.digest, ds);
	if (strchr(rq->ref, ':') != NULL && strcmp(rq->ref, ds) != 0) {
		ok = al_serve__send_error(c, rq, 400, "DIGEST_INVALID",
		                          "the manifest does not match the "
		                          "digest");
		goto out;
	}
	if (al_manifest_parse(
	        &m, rq->body.ptr != NULL ? rq->body.ptr : (const uint8_t *)"",
	        rq->body.len, rq->content_type, "manifest") < 0) {
		ok = al_serve__send_error(c, rq, 400, "MANIFEST_INVALID",
		                          "not a manifest this registry takes");
		goto out;
	}
	have_m = 1;
	mt = m.media_type;
	/* a Content-Type naming another manifest type than the body's */
	if (rq->content_type != NULL &&
	    al_media_type_is_manifest(rq->content_type) &&
	    strcmp(rq->content_type, mt) != 0) {
		ok = al_serve__send_error(c, rq, 400, "MANIFEST_INVALID",
		                          "Content-Type and mediaType differ");
		goto out;
	}
	if (!refs_present(sv, &m)) {
		ok = al_serve__send_error(c, rq, 400, "MANIFEST_BLOB_UNKNOWN",
		                          "the manifest names a blob this "
		                          "registry does not have");
		goto out;
	}
	if ((rc = entry_name(sv, rq->repo, rq->ref, ds, &name)) < 0) {
		ok = al_serve__send_error(c, rq, 400, "NAME_INVALID",
		                          "not a name this registry records");
		goto out;
	}
	desc.media_type = (char *)mt;
	desc.size = rq->body.len;
	desc.artifact_type = m.artifact_type;
	if ((rc = al_store_put_blob(sv->store,
	                            rq->body.ptr != NULL ? rq->body.ptr
	                                                 : (const uint8_t *)"",
	                            rq->body.len, NULL)) < 0 ||
	    (name != NULL && (rc = al_store_tag(sv->store, name, &desc)) < 0) ||
	    (rc = al_store_flush(sv->store)) < 0) {
		ok = al_serve__send_error(c, rq, 500, "UNKNOWN",
		                          "the manifest cannot be stored");
		goto out;
	}
	/* served at once: the next request sees the new table */
	al_serve__refresh(sv);
	ok = send_manifest_created(c, rq, ds, &m);
out:
	al_error_clear();
	free(name);
	if (have_m)
		al_manifest_clear(&m);
	return ok;
}

/* ---- the faces serve.c calls ---- */

enum MHD_Result al_serve__push_begin(al_serve_server *sv,
                                     struct MHD_Connection *c,
                                     al_serve_request *rq, const char *method,
                                     const char *rest)
{
	const char *hit = NULL, *p;
	char *repo = NULL;
	enum MHD_Result ok;
	int man = 0;

	/* the last occurrence: a repository may hold the words */
	for (p = rest; (p = strstr(p, "/blobs/uploads/")) != NULL; p++)
		hit = p;
	if (hit == NULL) {
		for (p = rest; (p = strstr(p, "/manifests/")) != NULL; p++)
			hit = p;
		man = 1;
	}
	if (hit == NULL || hit == rest)
		return al_serve__send_error(c, rq, 405, "UNSUPPORTED",
		                            "method not allowed here");
	if ((repo = al_strndup(rest, (size_t)(hit - rest))) == NULL)
		return al_serve__send_error(c, rq, 500, "UNKNOWN",
		                            "out of memory");
	if (!al_serve__repo_valid(repo)) {
		ok = al_serve__send_error(c, rq, 400, "NAME_INVALID",
		                          "invalid repository name");
	} else if (man) {
		ok = strcmp(method, "PUT") != 0
		         ? al_serve__send_error(c, rq, 405, "UNSUPPORTED",
		                                "deleting is not offered")
		         : manifest_begin(sv, c, rq, repo,
		                          hit + strlen("/manifests/"));
	} else {
		p = hit + strlen("/blobs/uploads/");
		if (p[0] == '\0')
			ok = strcmp(method, "POST") == 0
			         ? post_upload(sv, c, rq, repo)
			         : al_serve__send_error(c, rq, 405,
			                                "UNSUPPORTED",
			                                "method not allowed "
			                                "here");
		else
			ok = session_request(sv, c, rq, method, repo, p);
	}
	free(repo);
	return ok;
}

enum MHD_Result al_serve__push_data(al_serve_server *sv, al_serve_request *rq,
                                    const char *p, size_t n)
{
	if (rq->push == AL_SERVE_PUSH_MANIFEST) {
		int over;

		pthread_mutex_lock(&sv->lock);
		over = sv->manifest_bytes + n > MANIFEST_BUDGET;
		if (!over) {
			sv->manifest_bytes += n;
			rq->reserved += n;
		}
		pthread_mutex_unlock(&sv->lock);
		/* past a bound half way through a body: the connection is
		 * closed (libmicrohttpd cannot answer before the body ends) */
		if (over || al_buf_append(&rq->body, p, n) < 0) {
			al_error_clear();
			return MHD_NO;
		}
		return MHD_YES;
	}
	if (rq->push != AL_SERVE_PUSH_BLOB || rq->up == NULL)
		return MHD_NO;
	if ((uint64_t)n > blob_max(sv) - rq->up->written ||
	    (rq->range_end != UINT64_MAX &&
	     (uint64_t)n > rq->range_end - rq->up->written))
		return MHD_NO;
	if (al_blob_writer_write(rq->up->w, (const uint8_t *)p, n) < 0) {
		al_error_clear();
		return MHD_NO;
	}
	rq->up->written += n;
	return MHD_YES;
}

enum MHD_Result al_serve__push_finish(al_serve_server *sv,
                                      struct MHD_Connection *c,
                                      al_serve_request *rq)
{
	if (rq->push == AL_SERVE_PUSH_MANIFEST)
		return manifest_finish(sv, c, rq);
	if (rq->push == AL_SERVE_PUSH_BLOB && rq->up != NULL)
		return blob_finish(sv, c, rq);
	return al_serve__send_error(c, rq, 500, "UNKNOWN", "lost upload");
}

void al_serve__push_done(al_serve_server *sv, al_serve_request *rq)
{
	if (rq->up != NULL) {
		/* a monolithic POST is no session to come back to */
		if (rq->commit) {
			upload_remove(sv, rq->up);
			upload_free(rq->up);
		} else {
			upload_release(sv, rq->up);
		}
		rq->up = NULL;
	}
	if (rq->reserved > 0) {
		pthread_mutex_lock(&sv->lock);
		sv->manifest_bytes -= rq->reserved;
		pthread_mutex_unlock(&sv->lock);
		rq->reserved = 0;
	}
	free(rq->repo);
	free(rq->ref);
	free(rq->content_type);
	al_buf_free(&rq->body);
	rq->repo = rq->ref = rq->content_type = NULL;
}
