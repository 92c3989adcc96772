/* serve.c: al_serve_run: the store as an OCI distribution registry (pull side)
 * and as the CVO's HTTP signature store, on libmicrohttpd (docs/serve.md). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <microhttpd.h>
#include <openssl/crypto.h>

#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/serve.h"
#include "json_int.h"
#include "serve_int.h"
#include "error_int.h"

/* Bounds (docs/serve.md "Limits"). */
#define CONN_MEMORY (32u << 10) /* per connection: request line + headers */
#define MANIFEST_MAX (4u << 20)
#define SIGNATURE_MAX (64u << 10)
#define PAGE_MAX 1000u /* tags or repositories in one answer */
#define TLS_FILE_MAX (1u << 20)
#define REFRESH_MS 1000u

static enum MHD_Result send_dumped(struct MHD_Connection *c,
                                   al_serve_request *rq, json_t *doc,
                                   const char *content_type, const char *link)
{
	char *body = al_json_dump(doc, 0);
	struct MHD_Response *r;
	size_t len;

	json_decref(doc);
	if (body == NULL)
		return al_serve__send_error(c, rq, 500, "UNKNOWN",
		                            "out of memory");
	len = strlen(body);
	r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (r == NULL) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", content_type);
	if (link != NULL)
		MHD_add_response_header(r, "Link", link);
	return al_serve__send(c, rq, 200, r, len);
}

/* n from ?n= (absent: PAGE_MAX; at most PAGE_MAX); -1 when not a number. */
static long page_size(struct MHD_Connection *c)
{
	const char *s =
	    MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "n");
	long v = 0;
	size_t i;

	if (s == NULL)
		return PAGE_MAX;
	if (s[0] == '\0' || strlen(s) > 9)
		return -1;
	for (i = 0; s[i] != '\0'; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v > (long)PAGE_MAX ? (long)PAGE_MAX : v;
}

/* ---- /v2/ ---- */

static enum MHD_Result catalog(struct MHD_Connection *c, al_serve_request *rq,
                               const al_serve_table *t)
{
	const char *last =
	    MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "last");
	long n = page_size(c);
	json_t *doc = json_object(), *arr = json_array();
	size_t i = 0, k = 0;
	char *link = NULL;
	enum MHD_Result ok;

	if (n < 0) {
		json_decref(doc);
		json_decref(arr);
		return al_serve__send_error(c, rq, 400,
		                            "PAGINATION_NUMBER_INVALID",
		                            "n is not a number");
	}
	if (doc == NULL || arr == NULL ||
	    json_object_set_new(doc, "repositories", arr) < 0) {
		json_decref(doc);
		return al_serve__send_error(c, rq, 500, "UNKNOWN",
		                            "out of memory");
	}
	while (last != NULL && i < t->nrepos && strcmp(t->repos[i], last) <= 0)
		i++;
	for (; i < t->nrepos && k < (size_t)n; i++, k++)
		json_array_append_new(arr, json_string(t->repos[i]));
	if (i < t->nrepos && k > 0)
		link = al_sprintf("</v2/_catalog?n=%ld&last=%s>; rel=\"next\"",
		                  n, t->repos[i - 1]);
	ok = send_dumped(c, rq, doc, "application/json", link);
	free(link);
	return ok;
}

static enum MHD_Result tags_list(struct MHD_Connection *c, al_serve_request *rq,
                                 const al_serve_table *t, const char *repo)
{
	const char *last =
	    MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "last");
	long n = page_size(c);
	json_t *doc = json_object(), *arr = json_array();
	size_t i, end, k = 0;
	char *link = NULL;
	enum MHD_Result ok;

	if (n < 0) {
		json_decref(doc);
		json_decref(arr);
		return al_serve__send_error(c, rq, 400,
		                            "PAGINATION_NUMBER_INVALID",
		                            "n is not a number");
	}
	if (doc == NULL || arr == NULL ||
	    json_object_set_new(doc, "name", json_string(repo)) < 0 ||
	    json_object_set_new(doc, "tags", arr) < 0) {
		json_decref(doc);
		return al_serve__send_error(c, rq, 500, "UNKNOWN",
		                            "out of memory");
	}
	for (i = al_serve__tags_from(t, repo, last, &end);
	     i < end && k < (size_t)n; i++, k++)
		json_array_append_new(arr, json_string(t->tags[i].tag));
	if (i < end && k > 0)
		link = al_sprintf("</v2/%s/tags/list?n=%ld&last=%s>; "
		                  "rel=\"next\"",
		                  repo, n, t->tags[i - 1].tag);
	ok = send_dumped(c, rq, doc, "application/json", link);
	free(link);
	return ok;
}

/* OCI distribution spec 1.1, "Listing Referrers": an image index of the
 * repository's manifests whose subject is digest. */
static enum MHD_Result referrers(struct MHD_Connection *c, al_serve_request *rq,
                                 const al_serve_table *t, const char *repo,
                                 const char *digest)
{
	const char *want = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
	                                               "artifactType");
	json_t *doc, *arr = json_array();
	size_t i;
	enum MHD_Result ok;

	if (!al_serve__digest_valid(digest)) {
		json_decref(arr);
		return al_serve__send_error(c, rq, 400, "DIGEST_INVALID",
		                            "not a sha256 digest");
	}
	doc = json_pack("{s:i,s:s,s:o}", "schemaVersion", 2, "mediaType",
	                "application/vnd.oci.image.index.v1+json", "manifests",
	                arr);
	if (doc == NULL)
		return al_serve__send_error(c, rq, 500, "UNKNOWN",
		                            "out of memory");
	for (i = 0; i < t->nmans; i++) {
		const al_serve_man *m = &t->mans[i];
		json_t *d;

		if (strcmp(m->repo, repo) != 0 ||
		    strcmp(m->subject, digest) != 0)
			continue;
		if (want != NULL && (m->artifact_type == NULL ||
		                     strcmp(m->artifact_type, want) != 0))
			continue;
		d = json_pack("{s:s,s:s,s:I}", "mediaType", m->media_type,
		              "digest", m->digest, "size", (json_int_t)m->size);
		if (d != NULL && m->artifact_type != NULL)
			json_object_set_new(d, "artifactType",
			                    json_string(m->artifact_type));
		json_array_append_new(arr, d);
	}
	if (want != NULL) {
		char *body = al_json_dump(doc, 0);
		struct MHD_Response *r;
		size_t len;

		json_decref(doc);
		if (body == NULL)
			return al_serve__send_error(c, rq, 500, "UNKNOWN",
			                            "out of memory");
		len = strlen(body);
		r = MHD_create_response_from_buffer(len, body,
		                                    MHD_RESPMEM_MUST_FREE);
		if (r == NULL) {
			free(body);
			return MHD_NO;
		}
		MHD_add_response_header(
		    r, "Content-Type",
		    "application/vnd.oci.image.index.v1+json");
		MHD_add_response_header(r, "OCI-Filters-Applied",
		                        "artifactType");
		return al_serve__send(c, rq, 200, r, len);
	}
	ok = send_dumped(c, rq, doc, "application/vnd.oci.image.index.v1+json",
	                 NULL);
	return ok;
}

static enum MHD_Result manifest(struct MHD_Connection *c, al_serve_request *rq,
                                const al_serve_table *t, const char *repo,
                                const char *ref)
{
	const al_serve_man *m = strchr(ref, ':') != NULL
	                            ? al_serve__find_man(t, repo, ref)
	                            : al_serve__find_tag(t, repo, ref);
	al_buf b = AL_BUF_INIT(MANIFEST_MAX);
	struct MHD_Response *r;
	al_digest d;
	size_t len;

	if (m == NULL)
		return al_serve__send_error(c, rq, 404, "MANIFEST_UNKNOWN",
		                            "manifest unknown");
	/* re-hashed: a damaged blob is never served as the digest */
	if (al_digest_parse_str(&d, m->digest) < 0 ||
	    al_store_read_blob(t->store, &d, &b) < 0) {
		al_buf_free(&b);
		return al_serve__send_error(
		    c, rq, 500, "UNKNOWN",
		    "manifest cannot be read from the store");
	}
	len = b.len;
	r = MHD_create_response_from_buffer(len, b.ptr, MHD_RESPMEM_MUST_COPY);
	al_buf_free(&b);
	if (r == NULL)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", m->media_type);
	MHD_add_response_header(r, "Docker-Content-Digest", m->digest);
	return al_serve__send(c, rq, 200, r, len);
}

int al_serve__parse_range(const char *s, uint64_t size, uint64_t *off,
                          uint64_t *len)
{
	uint64_t a = 0, b = 0;
	int has_a = 0, has_b = 0;

	if (strncmp(s, "bytes=", 6) != 0)
		return -1;
	s += 6;
	for (; *s >= '0' && *s <= '9'; s++, has_a = 1) {
		if (a > (UINT64_MAX - 9) / 10)
			return -1;
		a = a * 10 + (uint64_t)(*s - '0');
	}
	if (*s++ != '-')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++, has_b = 1) {
		if (b > (UINT64_MAX - 9) / 10)
			return -1;
		b = b * 10 + (uint64_t)(*s - '0');
	}
	if (*s != '\0' || (!has_a && !has_b))
		return -1; /* several ranges are refused too */
	if (!has_a) {
		if (b == 0 || size == 0)
			return 0;
		*off = b >= size ? 0 : size - b;
		*len = size - *off;
		return 1;
	}
	if (has_b && b < a)
		return -1;
	if (a >= size)
		return 0;
	*off = a;
	*len = (has_b && b < size ? b + 1 : size) - a;
	return 1;
}

static enum MHD_Result blob(struct MHD_Connection *c, al_serve_request *rq,
                            const al_serve_table *t, const char *digest)
{
	const char *range =
	    MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Range");
	uint64_t size = 0, off = 0, len;
	struct MHD_Response *r;
	char cr[96];
	al_digest d;
	int fd = -1, rs = 1;
	unsigned status = 200;

	if (!al_serve__digest_valid(digest) ||
	    al_digest_parse_str(&d, digest) < 0)
		return al_serve__send_error(c, rq, 400, "DIGEST_INVALID",
		                            "not a sha256 digest");
	if (al_store_blob_open(t->store, &d, &fd, &size) < 0)
		return al_serve__send_error(c, rq, 404, "BLOB_UNKNOWN",
		                            "blob unknown");
	len = size;
	if (range != NULL) {
		if ((rs = al_serve__parse_range(range, size, &off, &len)) <=
		    0) {
			close(fd);
			snprintf(cr, sizeof(cr), "bytes */%" PRIu64, size);
			r = MHD_create_response_from_buffer(
			    0, NULL, MHD_RESPMEM_PERSISTENT);
			if (r != NULL)
				MHD_add_response_header(r, "Content-Range", cr);
			return al_serve__send(c, rq, 416, r, 0);
		}
		status = 206;
		snprintf(cr, sizeof(cr),
		         "bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64, off,
		         off + len - 1, size);
	}
	/* zero-copy: libmicrohttpd sends a plain-HTTP fd with sendfile */
	r = MHD_create_response_from_fd_at_offset64(len, fd, off);
	if (r == NULL) {
		close(fd);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", "application/octet-stream");
	MHD_add_response_header(r, "Docker-Content-Digest", digest);
	MHD_add_response_header(r, "Accept-Ranges", "bytes");
	if (status == 206)
		MHD_add_response_header(r, "Content-Range", cr);
	return al_serve__send(c, rq, status, r, len);
}

/* /v2/<name>/<kind>/<ref>: name is only ever compared with the table. */
static enum MHD_Result v2(struct MHD_Connection *c, al_serve_request *rq,
                          const al_serve_table *t, const char *rest,
                          int any_repo_blobs)
{
	static const char *const kinds[] = {"/manifests/", "/blobs/",
	                                    "/referrers/", "/tags/list"};
	const char *hit = NULL, *p;
	char *repo;
	size_t k, which = 0;
	enum MHD_Result ok;

	if (rest[0] == '\0')
		return al_serve__send_json(c, rq, 200, "{}");
	if (strcmp(rest, "_catalog") == 0)
		return catalog(c, rq, t);
	for (k = 0; k < 4; k++) {
		/* the last occurrence: a repository may hold the words */
		for (p = rest; (p = strstr(p, kinds[k])) != NULL; p++)
			if (hit == NULL || p > hit) {
				hit = p;
				which = k;
			}
	}
	if (hit == NULL || hit == rest)
		return al_serve__send_error(c, rq, 404, "NAME_UNKNOWN",
		                            "not a registry path");
	if ((repo = al_strndup(rest, (size_t)(hit - rest))) == NULL)
		return al_serve__send_error(c, rq, 500, "UNKNOWN",
		                            "out of memory");
	p = hit + strlen(kinds[which]);
	/* with push on, a blob is found under any valid name, so that a
	 * client pushing a new repository skips the blobs the store has */
	if (which == 1 && any_repo_blobs && al_serve__repo_valid(repo))
		ok = blob(c, rq, t, p);
	else if (!al_serve__has_repo(t, repo))
		ok = al_serve__send_error(
		    c, rq, 404, "NAME_UNKNOWN",
		    "repository name not known to registry");
	else if (which == 3)
		ok = p[0] == '\0'
		         ? tags_list(c, rq, t, repo)
		         : al_serve__send_error(c, rq, 404, "NAME_UNKNOWN",
		                                "not a registry path");
	else if (which == 2)
		ok = referrers(c, rq, t, repo, p);
	else if (which == 1)
		ok = blob(c, rq, t, p);
	else
		ok = manifest(c, rq, t, repo, p);
	free(repo);
	return ok;
}

/*
 * The bytes of signature n of release d as served: signature-<k> of the
 * store in order, those an untrusted import wrote (marked in
 * airlock/untrusted.json) left out unless t->serve_untrusted, so that the
 * rest keep a gapless numbering (the CVO reads signature-1, -2, ... up to
 * the first 404: cluster-version-operator pkg/verify/store/sigstore).
 * 0 and *b filled, or negative when there is no such signature.
 */
static int signature_bytes(const al_serve_table *t, const al_digest *d,
                           unsigned long n, al_buf *b)
{
	char *dir = al_store_signature_dir(t->store, d), *path = NULL;
	unsigned long k, seen = 0;
	int rc = AL_ENOTFOUND;

	if (dir == NULL)
		return AL_ENOMEM;
	for (k = 1; k <= 9999 && seen < n; k++) {
		free(path);
		al_buf_reset(b);
		if ((path = al_sprintf("%s/signature-%lu", dir, k)) == NULL) {
			rc = AL_ENOMEM;
			break;
		}
		if (al_fs_read_file(path, b) < 0) {
			rc = AL_ENOTFOUND; /* the end of the list */
			break;
		}
		if (!t->serve_untrusted &&
		    al_store_signature_untrusted(
		        t->store, d,
		        b->ptr != NULL ? b->ptr : (const uint8_t *)"",
		        b->len) != 0)
			continue; /* marked (or the marks unreadable) */
		if (++seen == n)
			rc = 0;
	}
	al_error_clear();
	free(path);
	free(dir);
	return rc;
}

/* /signatures/sha256=<hex>/signature-<N>: the CVO's HTTP signature store
 * layout (docs/signatures.md). */
static enum MHD_Result signature(struct MHD_Connection *c, al_serve_request *rq,
                                 const al_serve_table *t, const char *rest)
{
	al_buf b = AL_BUF_INIT(SIGNATURE_MAX);
	struct MHD_Response *r;
	unsigned long n = 0;
	char ds[80];
	const char *p;
	al_digest d;
	size_t len;

	if (strncmp(rest, "sha256=", 7) != 0 || strlen(rest) < 7 + 64 ||
	    strncmp(rest + 71, "/signature-", 11) != 0)
		goto notfound;
	snprintf(ds, sizeof(ds), "sha256:%.64s", rest + 7);
	p = rest + 82;
	if (!al_serve__digest_valid(ds) || p[0] < '1' || p[0] > '9' ||
	    strlen(p) > 6)
		goto notfound;
	for (; *p != '\0'; p++) {
		if (*p < '0' || *p > '9')
			goto notfound;
		n = n * 10 + (unsigned long)(*p - '0');
	}
	if (al_digest_parse_str(&d, ds) < 0 ||
	    signature_bytes(t, &d, n, &b) < 0)
		goto notfound;
	len = b.len;
	r = MHD_create_response_from_buffer(
	    len, b.ptr != NULL ? (void *)b.ptr : (void *)"",
	    MHD_RESPMEM_MUST_COPY);
	al_buf_free(&b);
	if (r == NULL)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", "application/octet-stream");
	return al_serve__send(c, rq, 200, r, (uint64_t)len);
notfound:
	al_error_clear();
	al_buf_free(&b);
	return al_serve__send_error(c, rq, 404, "NOT_FOUND",
	                            "no such signature");
}

static void remote_of(struct MHD_Connection *c, char *out, size_t cap)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci != NULL ? ci->client_addr : NULL;

	out[0] = '\0';
	if (sa == NULL)
		return;
	if (sa->sa_family == AF_INET)
		inet_ntop(
		    AF_INET,
		    &((const struct sockaddr_in *)(const void *)sa)->sin_addr,
		    out, (socklen_t)cap);
	else if (sa->sa_family == AF_INET6)
		inet_ntop(
		    AF_INET6,
		    &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr,
		    out, (socklen_t)cap);
}

/* 401 with a challenge (distribution spec "Authentication"; docker
 * registry: Basic for its htpasswd users, Bearer for token auth). */
static enum MHD_Result unauthorized(al_serve_server *sv,
                                    struct MHD_Connection *c,
                                    al_serve_request *rq)
{
	static const char body[] = "{\"errors\":[{\"code\":\"UNAUTHORIZED\","
	                           "\"message\":\"authentication "
	                           "required\"}]}";
	struct MHD_Response *r = MHD_create_response_from_buffer(
	    strlen(body), (void *)body, MHD_RESPMEM_PERSISTENT);

	if (r == NULL)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", "application/json");
	/* one challenge: clients answer the first they know (containers/
	 * image) or prefer Bearer (airlock's own, which then asks the realm
	 * for a token); with an htpasswd file that is Basic, and bearer
	 * clients send their token unasked */
	if (sv->auth != NULL && al_serve__auth_has_basic(sv->auth))
		MHD_add_response_header(r, "WWW-Authenticate",
		                        "Basic realm=\"airlock\"");
	else if (sv->auth != NULL && al_serve__auth_has_bearer(sv->auth))
		MHD_add_response_header(
		    r, "WWW-Authenticate",
		    "Bearer realm=\"airlock\",service=\"airlock\"");
	return al_serve__send(c, rq, 401, r, strlen(body));
}

static int authorized(al_serve_server *sv, struct MHD_Connection *c)
{
	return al_serve__auth_check(
	    sv->auth,
	    MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization"));
}

/* A pull that needs credentials: every one with --auth-pull but the
 * signature store (the CVO sends none; signatures are public and signed),
 * and the API check when push is on, so that clients that ask it first
 * (containers/image) learn the challenge for their pushes. */
static int pull_needs_auth(const al_serve_server *sv, const char *url)
{
	if (sv->o->auth_pull)
		return strncmp(url, "/signatures/", 12) != 0;
	return sv->o->allow_push &&
	       (strcmp(url, "/v2/") == 0 || strcmp(url, "/v2") == 0);
}

static enum MHD_Result first_call(al_serve_server *sv, struct MHD_Connection *c,
                                  al_serve_request *rq, const char *url,
                                  const char *method)
{
	int read = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
	int upload = strncmp(url, "/v2/", 4) == 0 &&
	             strstr(url, "/blobs/uploads/") != NULL;

	/* refused before any body is read: the connection closes */
	if (!read && !sv->o->allow_push)
		return al_serve__send_error(c, rq, 405, "UNSUPPORTED",
		                            "this registry is read-only");
	if (!read || (upload && sv->o->allow_push)) {
		if (!authorized(sv, c))
			return unauthorized(sv, c, rq);
		if (strncmp(url, "/v2/", 4) != 0)
			return al_serve__send_error(c, rq, 405, "UNSUPPORTED",
			                            "method not allowed here");
		return al_serve__push_begin(sv, c, rq, method, url + 4);
	}
	if (pull_needs_auth(sv, url) && !authorized(sv, c))
		return unauthorized(sv, c, rq);
	/* answered on the next call, once the request is whole
	 * (an answer now would close a kept-alive connection) */
	return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
                                  const char *url, const char *method,
                                  const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
	al_serve_server *sv = cls;
	al_serve_request *rq = *con_cls;
	al_serve_table *t;
	enum MHD_Result ok;

	(void)version;
	if (rq == NULL) {
		if ((rq = calloc(1, sizeof(*rq))) == NULL)
			return MHD_NO;
		*con_cls = rq;
		rq->start_ms = al_clock_now_ms();
		snprintf(rq->method, sizeof(rq->method), "%s", method);
		remote_of(c, rq->remote, sizeof(rq->remote));
		rq->path =
		    al_strndup(url, strlen(url) > 2048 ? 2048 : strlen(url));
		return first_call(sv, c, rq, url, method);
	}
	if (*upload_data_size != 0) {
		size_t n = *upload_data_size;

		/* a body on GET, or after an answer: dropped unread */
		*upload_data_size = 0;
		if (rq->push != AL_SERVE_PUSH_NONE && rq->status == 0)
			return al_serve__push_data(sv, rq, upload_data, n);
		return MHD_YES;
	}
	if (rq->status != 0)
		return MHD_YES;
	if (rq->push != AL_SERVE_PUSH_NONE)
		return al_serve__push_finish(sv, c, rq);
	t = al_serve__table_get(sv);
	if (strncmp(url, "/v2/", 4) == 0)
		ok = v2(c, rq, t, url + 4, sv->o->allow_push);
	else if (strcmp(url, "/v2") == 0)
		ok = v2(c, rq, t, "", sv->o->allow_push);
	else if (strncmp(url, "/signatures/", 12) == 0)
		ok = signature(c, rq, t, url + 12);
	else
		ok = al_serve__send_error(c, rq, 404, "NOT_FOUND", "not found");
	al_serve__table_put(sv, t);
	return ok;
}

/* The access log line, once the response is sent (or the client left). */
static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
	al_serve_server *sv = cls;
	al_serve_request *rq = *con_cls;
	char when[AL_RFC3339_LEN];
	json_t *line;
	char *text;

	(void)c;
	if (rq == NULL)
		return;
	*con_cls = NULL;
	if (sv->o->access != NULL) {
		al_clock_rfc3339(when, al_clock_wall_ms());
		line = json_pack(
		    "{s:s,s:s,s:s,s:s?,s:i,s:I,s:I,s:b}", "time", when,
		    "remote", rq->remote, "method", rq->method, "path",
		    rq->path, "status", (int)rq->status, "bytes",
		    (json_int_t)rq->bytes, "ms",
		    (json_int_t)(al_clock_now_ms() - rq->start_ms), "completed",
		    toe == MHD_REQUEST_TERMINATED_COMPLETED_OK);
		if (line != NULL && (text = al_json_dump(line, 0)) != NULL) {
			pthread_mutex_lock(&sv->lock);
			sv->o->access(sv->o->ud, text);
			pthread_mutex_unlock(&sv->lock);
			free(text);
		}
		json_decref(line);
	}
	al_serve__push_done(sv, rq);
	free(rq->path);
	free(rq);
}

/* ---- the daemon ---- */

static int parse_listen(const char *s, struct sockaddr_storage *ss)
{
	const char *colon = strrchr(s, ':');
	char host[64];
	unsigned long port;
	char *end;
	size_t hl;

	memset(ss, 0, sizeof(*ss));
	if (colon == NULL || colon == s || colon[1] == '\0')
		goto bad;
	hl = (size_t)(colon - s);
	if (s[0] == '[') {
		if (hl < 3 || s[hl - 1] != ']')
			goto bad;
		s++;
		hl -= 2;
	}
	if (hl >= sizeof(host))
		goto bad;
	memcpy(host, s, hl);
	host[hl] = '\0';
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno != 0 || *end != '\0' || port > 65535)
		goto bad;
	if (inet_pton(AF_INET, host, &((struct sockaddr_in *)ss)->sin_addr) ==
	    1) {
		((struct sockaddr_in *)ss)->sin_family = AF_INET;
		((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
		return 0;
	}
	if (inet_pton(AF_INET6, host,
	              &((struct sockaddr_in6 *)ss)->sin6_addr) == 1) {
		((struct sockaddr_in6 *)ss)->sin6_family = AF_INET6;
		((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
		return 0;
	}
bad:
	return al_error_set(AL_EINVAL,
	                    "--listen wants ADDR:PORT with an IP address");
}

static int read_pem(const char *path, char **out)
{
	al_buf b = AL_BUF_INIT(TLS_FILE_MAX);
	int rc;

	if ((rc = al_fs_read_file(path, &b)) < 0) {
		al_buf_free(&b);
		return al_error_wrap(rc, "cannot read '%s'", path);
	}
	if ((*out = al_strndup(b.ptr != NULL ? (const char *)b.ptr : "",
	                       b.len)) == NULL)
		rc = al_error_set(AL_ENOMEM, "out of memory");
	al_buf_free(&b);
	return rc;
}

int al_serve_run(const al_serve_opts *o)
{
	struct sockaddr_storage ss;
	struct MHD_Daemon *d = NULL;
	const union MHD_DaemonInfo *di;
	char *cert = NULL, *key = NULL, addr[80], host[64];
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL;
	al_serve_server sv;
	int rc, locked = 0;

	if (o != NULL &&
	    (rc = al_opts_version_check("al_serve_opts", o->version,
	                                AL_SERVE_OPTS_VERSION)) < 0)
		return rc;
	memset(&sv, 0, sizeof(sv));
	sv.o = o;
	if (o == NULL || o->store == NULL || o->listen == NULL ||
	    o->cancel == NULL || (o->tls_cert == NULL) != (o->tls_key == NULL))
		return al_error_set(AL_EINVAL, "serve: store, listen and "
		                               "cancel are required; TLS wants "
		                               "both a certificate and a key");
	if ((rc = parse_listen(o->listen, &ss)) < 0)
		return rc;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	if (o->tls_cert != NULL) {
		if ((rc = read_pem(o->tls_cert, &cert)) < 0 ||
		    (rc = read_pem(o->tls_key, &key)) < 0)
			goto out;
		flags |= MHD_USE_TLS;
	}
	if ((o->allow_push || o->auth_pull) && o->htpasswd == NULL &&
	    o->token_file == NULL) {
		rc = al_error_set(AL_EINVAL, "push and pull credentials need "
		                             "an htpasswd or a token file");
		goto out;
	}
	if ((o->htpasswd != NULL || o->token_file != NULL) &&
	    (rc = al_serve__auth_load(&sv.auth, o->htpasswd, o->token_file)) <
	        0) {
		/* a credential file the server cannot use is an option
		 * error, whatever the line (bcrypt: AL_EUNSUPPORTED) */
		char msg[512];

		snprintf(msg, sizeof(msg), "%s", al_error_message());
		rc = al_error_set(AL_EINVAL, "%s", msg);
		goto out;
	}
	if (o->allow_push) {
		al_store_opts so = AL_STORE_OPTS_INIT;

		/* writable: the store's lock is held while serving, so no
		 * mirror or unpack writes it meanwhile */
		if ((rc = al_store_open(&sv.store, o->store, &so)) < 0)
			goto out;
	}
	al_serve__marks_stat(o->store, &sv.marks_st);
	if ((rc = al_serve__index_stat(o->store, &sv.index_st)) < 0 &&
	    rc != AL_ENOMEM) {
		rc =
		    al_error_set(AL_ENOTFOUND, "'%s' is not a store", o->store);
		goto out;
	}
	if (rc < 0 || (rc = al_serve__table_new(&sv.table, o->store, NULL,
	                                        o->serve_untrusted)) < 0)
		goto out;
	pthread_mutex_init(&sv.lock, NULL);
	pthread_mutex_init(&sv.refresh_lock, NULL);
	locked = 1;
	d = MHD_start_daemon(
	    flags, 0, NULL, NULL, on_request, &sv, MHD_OPTION_SOCK_ADDR,
	    (struct sockaddr *)&ss, MHD_OPTION_CONNECTION_LIMIT,
	    (unsigned)(o->max_connections ? o->max_connections : 256),
	    MHD_OPTION_PER_IP_CONNECTION_LIMIT,
	    (unsigned)(o->per_ip ? o->per_ip : 64),
	    MHD_OPTION_CONNECTION_TIMEOUT,
	    (unsigned)(o->idle_timeout_s ? o->idle_timeout_s : 30),
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEMORY,
	    MHD_OPTION_THREAD_POOL_SIZE,
	    (unsigned)(o->threads ? o->threads : 4),
	    MHD_OPTION_NOTIFY_COMPLETED, on_completed, &sv,
	    cert != NULL ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, cert,
	    MHD_OPTION_HTTPS_MEM_KEY, key, MHD_OPTION_END);
	if (d == NULL) {
		rc = al_error_set(AL_EIO,
		                  "cannot serve on '%s' (address in "
		                  "use, or a bad TLS certificate or key)",
		                  o->listen);
		goto out;
	}
	di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	if (ss.ss_family == AF_INET)
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, host,
		          sizeof(host));
	else
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr,
		          host, sizeof(host));
	snprintf(addr, sizeof(addr),
	         ss.ss_family == AF_INET ? "%s:%u" : "[%s]:%u", host,
	         di != NULL ? (unsigned)di->port : 0u);
	if (o->ready != NULL)
		o->ready(o->ud, addr);
	while (!al_cancel_is_set(o->cancel)) {
		al_sleep_ms(REFRESH_MS, o->cancel);
		if (!al_cancel_is_set(o->cancel)) {
			al_serve__refresh(&sv);
			al_serve__uploads_expire(&sv, 0);
		}
	}
	rc = 0;
out:
	/* stops accepting, ends the connections and joins the workers */
	if (d != NULL)
		MHD_stop_daemon(d);
	/* uploads not finished: their temporary files go, no blob is
	 * half-written (blobs are renamed into place only once verified) */
	al_serve__uploads_expire(&sv, 1);
	if (sv.table != NULL)
		al_serve__table_free(sv.table);
	if (sv.store != NULL && al_store_flush(sv.store) < 0)
		al_error_clear();
	al_store_free(sv.store);
	al_serve__auth_free(sv.auth);
	if (locked) {
		pthread_mutex_destroy(&sv.lock);
		pthread_mutex_destroy(&sv.refresh_lock);
	}
	free(cert);
	if (key != NULL) {
		OPENSSL_cleanse(key, strlen(key));
		free(key);
	}
	return rc;
}
