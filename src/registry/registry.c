/* registry.c: OCI distribution client: manifests, blobs, uploads, tags. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>
#include <openssl/crypto.h>

#include "airlock/registry.h"
#include "airlock/error.h"
#include "airlock/log.h"
#include "certsd_int.h"
#include "name_int.h"
#include "registry_int.h"
#include "error_int.h"

#define DEFAULT_CHUNK (16 * AL_MIB)
#define TAGS_BODY_MAX (16 * AL_MIB)
#define TAGS_MAX_PAGES 10000
#define TAGS_MAX (1024 * 1024)
#define BLOB_ATTEMPTS 3
#define MAX_HDRS 8

struct al_registry {
	char *host;         /* as given: messages, auth lookups */
	char *endpoint;     /* host:port the requests go to (docker.io:
	                       registry-1.docker.io) */
	const char *scheme; /* "https", or "http" after a TLS failure on an
	                       insecure registry */
	int scheme_known;
	int insecure;
	uint64_t chunk_size;
	al_http *http;
	al_auth *auth;             /* borrowed or own_auth */
	al_auth *own_auth;         /* anonymous, when opts->auth is NULL */
	const al_regconf *regconf; /* borrowed; NULL: none */
	const char *insecure_hosts[2];
};

/* Repository names as the distribution grammar allows (lowercase path
 * components). */
static int valid_repo(const char *s)
{
	size_t i, n = s != NULL ? strlen(s) : 0;

	if (n == 0 || n > 255 || s[0] == '/' || s[n - 1] == '/')
		return 0;
	for (i = 0; i < n; i++) {
		char c = s[i];

		if (!(islower((unsigned char)c) || isdigit((unsigned char)c) ||
		      c == '.' || c == '_' || c == '-' || c == '/'))
			return 0;
		if (c == '/' && s[i + 1] == '/')
			return 0;
		if (c == '.' && s[i + 1] == '.')
			return 0;
	}
	return 1;
}

/* A tag ([A-Za-z0-9_][A-Za-z0-9_.-]{0,127}) or a digest; *d set for a digest.
 */
static int parse_ref(const char *ref, al_digest *d, int *is_digest)
{
	size_t i, n = ref != NULL ? strlen(ref) : 0;

	if (n == 0)
		return 0;
	if (strchr(ref, ':') != NULL) {
		*is_digest = 1;
		return al_digest_parse_str(d, ref) == 0;
	}
	*is_digest = 0;
	if (n > 128 || ref[0] == '.' || ref[0] == '-')
		return 0;
	for (i = 0; i < n; i++) {
		if (!(isalnum((unsigned char)ref[i]) || ref[i] == '_' ||
		      ref[i] == '.' || ref[i] == '-'))
			return 0;
	}
	return 1;
}

int al_registry_new(al_registry **out, const char *host,
                    const al_registry_opts *opts)
{
	al_registry *r = NULL;
	al_http_opts hopts = AL_HTTP_OPTS_INIT;
	al_certs_host certs;
	size_t i;
	int rc;

	memset(&certs, 0, sizeof(certs));
	if (out == NULL || host == NULL || host[0] == '\0')
		return al_error_set(AL_EINVAL,
		                    "al_registry_new: missing registry host");
	if (opts != NULL &&
	    (rc = al_opts_version_check("al_registry_opts", opts->version,
	                                AL_REGISTRY_OPTS_VERSION)) < 0)
		return rc;
	for (i = 0; host[i] != '\0'; i++) {
		if (host[i] == '/' || host[i] == '@' || host[i] == '?' ||
		    host[i] == '#' || isspace((unsigned char)host[i]) ||
		    !isprint((unsigned char)host[i]))
			return al_error_set(AL_EINVAL,
			                    "invalid registry host '%s'", host);
	}
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	r->host = al_strdup(host);
	/* Docker Hub's API does not live at its reference name */
	if (strcmp(host, "docker.io") == 0 ||
	    strcmp(host, "index.docker.io") == 0)
		r->endpoint = al_strdup("registry-1.docker.io");
	else
		r->endpoint = al_strdup(host);
	if (r->host == NULL || r->endpoint == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	r->scheme = "https";
	if (opts != NULL) {
		hopts = opts->http;
		r->insecure = opts->insecure;
		r->chunk_size = opts->chunk_size;
		r->auth = opts->auth;
		r->regconf = opts->regconf;
	}
	/* the policy gate (docs/security.md): a blocked host gets no client,
	 * so no request (containers/image newDockerClient) */
	if (r->regconf != NULL) {
		int ins = 0;

		if ((rc = al_regconf_host(r->regconf, r->host, &ins)) < 0)
			goto out;
		r->insecure |= ins;
	}
	if (r->chunk_size == 0)
		r->chunk_size = DEFAULT_CHUNK;
	/* credentials never go over plain http unless the user asked for
	 * plain http to this registry */
	hopts.no_plain_auth = 1;
	if (r->insecure) {
		r->insecure_hosts[0] = r->endpoint;
		r->insecure_hosts[1] = NULL;
		hopts.insecure_hosts = r->insecure_hosts;
	}
	if (r->auth == NULL) {
		rc = al_auth_new_anonymous(&r->own_auth);
		if (rc != 0)
			goto out;
		r->auth = r->own_auth;
	}
	/* certs.d for this host (containers/image newDockerClient:
	 * dockerCertDir + tlsclientconfig.SetupCertificates) */
	if (opts != NULL && opts->cert_dir != NULL)
		rc = al_certs_for_dir(opts->cert_dir, &certs);
	else
		rc = al_certs_for_host(r->endpoint, &certs);
	if (rc != 0) {
		rc = al_error_wrap(rc, "registry '%s': TLS files", r->host);
		goto out;
	}
	if (certs.ca_pem.len > 0) {
		hopts.ca_pem = certs.ca_pem.ptr;
		hopts.ca_pem_len = certs.ca_pem.len;
	}
	if (certs.client_cert != NULL && hopts.client_cert == NULL) {
		hopts.client_cert = certs.client_cert;
		hopts.client_key = certs.client_key;
	}
	rc = al_http_new(&r->http, &hopts);
	if (rc != 0)
		goto out;
	*out = r;
	r = NULL;
out:
	al_certs_host_clear(&certs);
	al_registry_free(r);
	return rc;
}

void al_registry_free(al_registry *r)
{
	if (r == NULL)
		return;
	al_http_free(r->http);
	al_auth_free(r->own_auth);
	free(r->host);
	free(r->endpoint);
	free(r);
}

const char *al_registry_host(const al_registry *r)
{
	return r != NULL ? r->host : NULL;
}

/* "scheme://host" + path, or url itself when absolute. Caller frees. */
static char *make_url(const al_registry *r, const char *path_or_url)
{
	if (path_or_url[0] == '/')
		return al_sprintf("%s://%s%s", r->scheme, r->endpoint,
		                  path_or_url);
	return al_strdup(path_or_url);
}

static int64_t content_range_start(const char *v);
static char *link_next(const char *v);

#define REG_SAME 0      /* the registry's origin */
#define REG_DOWNGRADE 1 /* its host and port over plain http, not allowed */
#define REG_OTHER 2     /* somewhere else (object storage, ...) */

/*
 * How url relates to the registry (docs/http.md "Where credentials go").
 * Scheme, host and port are compared: a plain-http URL on the registry's
 * host and port is the registry only when the user asked for plain http
 * to it (insecure); else it is a downgrade. An https URL on the host and
 * port of a registry reached over plain http is the registry (an upgrade).
 */
static int reg_origin(const al_registry *r, const char *url)
{
	char *base = al_sprintf("%s://%s/", r->scheme, r->endpoint);
	int rel;

	if (base == NULL)
		return REG_OTHER;
	rel = al_http_origin_compare(base, url);
	free(base);
	if (rel == AL_HTTP_ORIGIN_SAME)
		return REG_SAME;
	if (rel == AL_HTTP_ORIGIN_SCHEME) {
		if (strncasecmp(url, "https://", 8) == 0 || r->insecure)
			return REG_SAME;
		return REG_DOWNGRADE;
	}
	return REG_OTHER;
}

/* 1 when url is on this registry (the only place an Authorization header may
 * go). */
static int on_registry(const al_registry *r, const char *url)
{
	return reg_origin(r, url) == REG_SAME;
}

/* 1 when a URL taken from an answer (Location, Link) has no control
 * character or space: it is sent back in a request line. */
static int url_text_ok(const char *u)
{
	for (; *u != '\0'; u++) {
		if ((unsigned char)*u <= 0x20 || (unsigned char)*u == 0x7f)
			return 0;
	}
	return 1;
}

/*
 * Resolve a Location or Link target against the registry base: absolute
 * URLs are kept, "/path" gets scheme://host. Caller frees.
 */
static char *resolve(const al_registry *r, const char *loc)
{
	if (al_str_startswith(loc, "https://") ||
	    al_str_startswith(loc, "http://"))
		return al_strdup(loc);
	if (loc[0] == '/')
		return al_sprintf("%s://%s%s", r->scheme, r->endpoint, loc);
	return al_sprintf("%s://%s/%s", r->scheme, r->endpoint, loc);
}

/* Bounded copy of registry-supplied text for messages, control characters
 * and escape sequences escaped (buf.h al_str_escape). */
static void clean_text(char *dst, size_t cap, const char *src)
{
	al_str_escape(dst, cap, src, strlen(src));
}

/* Turn a non-success answer into an error naming what. */
static int reg_fail(const al_http_resp *resp, const char *what)
{
	json_t *root = NULL, *errs, *e0;
	const char *code = NULL, *msg = NULL;
	char cmsg[320] = "", ccode[64] = "";
	int rc;

	if (resp->error_body.len > 0)
		root = json_loadb((const char *)resp->error_body.ptr,
		                  resp->error_body.len, 0, NULL);
	errs = json_is_object(root) ? json_object_get(root, "errors") : NULL;
	e0 = json_is_array(errs) ? json_array_get(errs, 0) : NULL;
	if (json_is_object(e0)) {
		if (json_is_string(json_object_get(e0, "code")))
			code = json_string_value(json_object_get(e0, "code"));
		if (json_is_string(json_object_get(e0, "message")))
			msg = json_string_value(json_object_get(e0, "message"));
	}
	if (code != NULL)
		clean_text(ccode, sizeof(ccode), code);
	if (msg != NULL)
		clean_text(cmsg, sizeof(cmsg), msg);
	if (code != NULL) {
		if (strcmp(code, "MANIFEST_UNKNOWN") == 0 ||
		    strcmp(code, "BLOB_UNKNOWN") == 0 ||
		    strcmp(code, "NAME_UNKNOWN") == 0 ||
		    strcmp(code, "BLOB_UPLOAD_UNKNOWN") == 0)
			rc = AL_ENOTFOUND;
		else if (strcmp(code, "UNAUTHORIZED") == 0 ||
		         strcmp(code, "DENIED") == 0)
			rc = AL_EAUTH;
		else
			rc = AL_EPROTO;
		rc = al_error_set(rc, "'%s': %s: %s (HTTP %ld)", what, ccode,
		                  cmsg[0] != '\0' ? cmsg : "no message",
		                  resp->status);
	} else if (resp->status == 404) {
		rc = al_error_set(AL_ENOTFOUND, "'%s': not found (HTTP 404)",
		                  what);
	} else if (resp->status == 401 || resp->status == 403) {
		rc = al_error_set(AL_EAUTH, "'%s': access denied (HTTP %ld)",
		                  what, resp->status);
	} else {
		rc = al_error_set(AL_EPROTO, "'%s': unexpected HTTP %ld", what,
		                  resp->status);
	}
	json_decref(root);
	return rc;
}

static int rewind_body(const al_http_req *req)
{
	if (req->reader == NULL)
		return 0;
	if (req->reader->rewind == NULL)
		return al_error_set(
		    AL_EIO, "cannot resend '%s': the body cannot be rewound",
		    req->url);
	return req->reader->rewind(req->reader->ud);
}

/*
 * A final 401 when no credentials were found for the registry: say where
 * they were looked for (docs/registry.md "Credentials"). 0 when some
 * exist (the caller reports the refusal).
 */
static int no_credentials_hint(al_registry *r, const char *repo)
{
	char *u = NULL, *p = NULL;
	const char *src = al_auth_sources(r->auth);
	int rc = al_auth_lookup(r->auth, r->host, repo, &u, &p);

	if (u != NULL)
		OPENSSL_cleanse(u, strlen(u));
	if (p != NULL)
		OPENSSL_cleanse(p, strlen(p));
	free(u);
	free(p);
	if (rc != AL_ENOTFOUND) {
		al_error_clear();
		return 0;
	}
	return al_error_set(AL_EAUTH,
	                    "'%s/%s': the registry requires credentials (HTTP "
	                    "401) and none were found for '%s' (searched: %s)",
	                    r->host, repo, r->host,
	                    src[0] != '\0' ? src : "no credentials file");
}

/*
 * The policy gate of one request (docs/security.md): registries.conf
 * blocks a prefix "host/namespace[/repo]" that repo is under (the host
 * itself was checked by al_registry_new). Every request passes here.
 */
static int policy_gate(const al_registry *r, const char *repo)
{
	char *name;
	int rc;

	if (r->regconf == NULL || repo == NULL || repo[0] == '\0')
		return 0;
	if ((name = al_sprintf("%s/%s", r->host, repo)) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	rc = al_regconf_host(r->regconf, name, NULL);
	free(name);
	return rc;
}

/*
 * Perform one registry request: path_or_url relative to the registry or
 * absolute (upload locations), extra headers (NULL-terminated, at most
 * MAX_HDRS - 2). Adds a cached Authorization header, answers one 401
 * challenge and retries, and on an insecure registry falls back to
 * http:// once when the TLS connection fails. 0 when an HTTP answer
 * arrived (any status).
 */
static int reg_do(al_registry *r, const char *repo, int push,
                  const char *path_or_url, const char *const *extra,
                  al_http_req *req, al_http_resp *resp)
{
	const char *hdrs[MAX_HDRS];
	char *scope = NULL, *auth = NULL, *url = NULL;
	const char *www;
	size_t nh = 0, i;
	int rc, tries, used_cache = 0, fell_back = 0;

	scope =
	    al_sprintf("repository:%s:%s", repo, push ? "pull,push" : "pull");
	url = make_url(r, path_or_url);
	if (scope == NULL || url == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; extra != NULL && extra[i] != NULL && nh < MAX_HDRS - 2; i++)
		hdrs[nh++] = extra[i];
	if ((rc = policy_gate(r, repo)) < 0)
		goto out;
	if (reg_origin(r, url) == REG_DOWNGRADE) {
		/* e.g. an upload Location: the credentials would follow it
		 * in clear text */
		rc = al_error_set(
		    AL_EPROTO,
		    "registry '%s' (https) sent the plain-http URL "
		    "'%.*s' on its own host and port: refusing the "
		    "downgrade (--tls-verify=false allows plain "
		    "http to this registry)",
		    r->host, (int)strcspn(url, "?"), url);
		goto out;
	}
	if (on_registry(r, url) &&
	    al_auth_cached(r->auth, r->host, repo, scope, &auth) == 0)
		used_cache = 1;
	al_error_clear();
	for (tries = 0; tries < 3; tries++) {
		size_t n = nh;

		if (auth != NULL && on_registry(r, url))
			hdrs[n++] = auth;
		hdrs[n] = NULL;
		req->url = url;
		req->headers = hdrs;
		/* the query may hold upload state: leave it out of logs */
		al_log_debug("registry: %s %.*s",
		             req->method != NULL ? req->method : "GET",
		             (int)strcspn(url, "?"), url);
		rc = al_http_do(r->http, req, resp);
		if (rc == AL_ENET && r->insecure && !r->scheme_known &&
		    !fell_back && al_str_startswith(url, "https://") &&
		    on_registry(r, url) &&
		    resp->body_bytes == req->resume_from) {
			char *alt = al_sprintf("http://%s", url + 8);

			if (alt == NULL) {
				rc = al_error_set(AL_ENOMEM, "out of memory");
				goto out;
			}
			al_log_debug("registry: TLS to '%s' failed (%s), "
			             "trying plain http (insecure registry)",
			             r->host, al_error_message());
			free(url);
			url = alt;
			r->scheme = "http";
			fell_back = 1;
			rc = rewind_body(req);
			if (rc != 0)
				goto out;
			al_http_resp_clear(resp);
			continue;
		}
		if (rc != 0 && fell_back && !r->scheme_known) {
			/* neither TLS nor plain http: stay with https for later
			 * calls */
			r->scheme = "https";
			rc = al_error_wrap(
			    rc, "registry '%s' (no TLS; over plain http)",
			    r->host);
		}
		if (rc != 0)
			goto out;
		if (on_registry(r, url))
			r->scheme_known = 1;
		if (resp->status != 401)
			break;
		www = al_http_resp_header(resp, "WWW-Authenticate");
		if (www == NULL || !on_registry(r, url) ||
		    (auth != NULL && !used_cache))
			break; /* refused with fresh credentials: the caller
			          reports it */
		if (used_cache) {
			al_auth_invalidate(r->auth, r->host, repo, scope);
			used_cache = 0;
		}
		if (auth != NULL) {
			OPENSSL_cleanse(auth, strlen(auth));
			free(auth);
			auth = NULL;
		}
		rc = al_auth_challenge_url(r->auth, r->http, r->host, repo, www,
		                           scope, url, &auth);
		if (rc != 0) {
			rc = al_error_wrap(rc, "'%.*s'", (int)strcspn(url, "?"),
			                   url);
			goto out;
		}
		rc = rewind_body(req);
		if (rc != 0)
			goto out;
		al_http_resp_clear(resp);
	}
	if (rc == 0 && resp->status == 401 && on_registry(r, url))
		rc = no_credentials_hint(r, repo);
out:
	req->url = NULL;
	req->headers = NULL;
	if (auth != NULL) {
		OPENSSL_cleanse(auth, strlen(auth));
		free(auth);
	}
	free(scope);
	free(url);
	return rc;
}

/* Content-Type without parameters, trimmed; caller frees. */
static char *bare_type(const char *ct)
{
	size_t n;

	if (ct == NULL)
		return al_strdup("");
	while (*ct == ' ')
		ct++;
	n = strcspn(ct, "; \t");
	return al_strndup(ct, n);
}

static int is_generic_type(const char *t)
{
	return t[0] == '\0' || strcasecmp(t, "application/json") == 0 ||
	       strcasecmp(t, "text/plain") == 0 ||
	       strcasecmp(t, "application/octet-stream") == 0 ||
	       strcasecmp(t, "binary/octet-stream") == 0;
}

/* The media type a manifest declares (or implies by its shape); caller frees.
 */
static char *body_media_type(const uint8_t *p, size_t n)
{
	json_t *root = json_loadb((const char *)p, n, 0, NULL);
	char *mt = NULL;

	if (json_is_object(root)) {
		json_t *v = json_object_get(root, "mediaType");

		if (json_is_string(v))
			mt = al_strdup(json_string_value(v));
		else if (json_object_get(root, "manifests") != NULL)
			mt = al_strdup(
			    "application/vnd.oci.image.index.v1+json");
		else if (json_object_get(root, "config") != NULL ||
		         json_object_get(root, "layers") != NULL)
			mt = al_strdup(
			    "application/vnd.oci.image.manifest.v1+json");
	}
	json_decref(root);
	return mt;
}

static char *manifest_what(const al_registry *r, const char *repo,
                           const char *ref, int is_digest)
{
	return al_sprintf("%s/%s%s%s", r->host, repo, is_digest ? "@" : ":",
	                  ref);
}

int al_registry_get_manifest(al_registry *r, const char *repo, const char *ref,
                             al_buf *body, char **media_type, al_digest *digest)
{
	al_buf tmp = AL_BUF_INIT(AL_MANIFEST_MAX);
	al_http_resp resp = AL_HTTP_RESP_INIT;
	al_http_req req;
	al_digest want, got, dcd;
	const char *hdrs[] = {"Accept: " AL_MANIFEST_ACCEPT, NULL};
	const char *h;
	char *what = NULL, *path = NULL, *mt = NULL;
	int rc, is_digest = 0;

	if (r == NULL || body == NULL || digest == NULL)
		return al_error_set(
		    AL_EINVAL, "al_registry_get_manifest: missing argument");
	if (!valid_repo(repo) || !parse_ref(ref, &want, &is_digest))
		return al_error_set(
		    AL_EINVAL, "invalid manifest reference '%s/%s:%s'", r->host,
		    repo != NULL ? repo : "", ref != NULL ? ref : "");
	if (body->max > 0 && body->max < tmp.max)
		tmp.max = body->max;
	what = manifest_what(r, repo, ref, is_digest);
	path = al_sprintf("/v2/%s/manifests/%s", repo, ref);
	if (what == NULL || path == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	memset(&req, 0, sizeof(req));
	req.method = "GET";
	req.body_out = &tmp;
	rc = reg_do(r, repo, 0, path, hdrs, &req, &resp);
	if (rc == AL_ELIMIT && resp.body_overflow) {
		rc = al_error_set(AL_ELIMIT,
		                  "manifest '%s' is larger than %zu bytes",
		                  what, tmp.max);
		goto out;
	}
	if (rc != 0)
		goto out;
	if (resp.status != 200) {
		rc = reg_fail(&resp, what);
		goto out;
	}
	rc = al_digest_bytes(&got, is_digest ? want.algo : AL_DIGEST_SHA256,
	                     tmp.ptr != NULL ? tmp.ptr : (const uint8_t *)"",
	                     tmp.len);
	if (rc != 0)
		goto out;
	if (is_digest && !al_digest_equal(&got, &want)) {
		char gs[AL_DIGEST_STRMAX];

		rc = al_error_set(AL_EVERIFY,
		                  "manifest '%s': content has digest %s", what,
		                  al_digest_str(&got, gs));
		goto out;
	}
	h = al_http_resp_header(&resp, "Docker-Content-Digest");
	if (h != NULL && al_digest_parse_str(&dcd, h) == 0 &&
	    dcd.algo == got.algo && !al_digest_equal(&dcd, &got)) {
		char gs[AL_DIGEST_STRMAX];

		rc = al_error_set(AL_EVERIFY,
		                  "manifest '%s': content has digest %s but "
		                  "the registry announced %.80s",
		                  what, al_digest_str(&got, gs), h);
		goto out;
	}
	mt = bare_type(al_http_resp_header(&resp, "Content-Type"));
	if (mt == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	if (is_generic_type(mt)) {
		char *bm = body_media_type(
		    tmp.ptr != NULL ? tmp.ptr : (const uint8_t *)"", tmp.len);

		if (bm != NULL) {
			free(mt);
			mt = bm;
		}
	}
	al_buf_reset(body);
	rc = al_buf_append(
	    body, tmp.ptr != NULL ? tmp.ptr : (const uint8_t *)"", tmp.len);
	if (rc != 0) {
		rc = al_error_set(rc, "manifest '%s' does not fit the buffer",
		                  what);
		goto out;
	}
	*digest = got;
	if (media_type != NULL) {
		*media_type = mt;
		mt = NULL;
	}
out:
	al_buf_free(&tmp);
	al_http_resp_clear(&resp);
	free(what);
	free(path);
	free(mt);
	return rc;
}

int al_registry_head_manifest(al_registry *r, const char *repo, const char *ref,
                              int *exists, al_digest *digest, char **media_type)
{
	al_http_resp resp = AL_HTTP_RESP_INIT;
	al_http_req req;
	al_digest want, dcd;
	const char *hdrs[] = {"Accept: " AL_MANIFEST_ACCEPT, NULL};
	const char *h;
	char *what = NULL, *path = NULL, *mt = NULL;
	int rc, is_digest = 0;

	if (r == NULL || exists == NULL)
		return al_error_set(
		    AL_EINVAL, "al_registry_head_manifest: missing argument");
	if (!valid_repo(repo) || !parse_ref(ref, &want, &is_digest))
		return al_error_set(
		    AL_EINVAL, "invalid manifest reference '%s/%s:%s'", r->host,
		    repo != NULL ? repo : "", ref != NULL ? ref : "");
	what = manifest_what(r, repo, ref, is_digest);
	path = al_sprintf("/v2/%s/manifests/%s", repo, ref);
	if (what == NULL || path == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	memset(&req, 0, sizeof(req));
	req.method = "HEAD";
	rc = reg_do(r, repo, 0, path, hdrs, &req, &resp);
	if (rc != 0)
		goto out;
	if (resp.status == 404) {
		*exists = 0;
		if (digest != NULL)
			memset(digest, 0, sizeof(*digest));
		goto out;
	}
	if (resp.status != 200) {
		rc = reg_fail(&resp, what);
		goto out;
	}
	memset(&dcd, 0, sizeof(dcd));
	h = al_http_resp_header(&resp, "Docker-Content-Digest");
	if (h != NULL && al_digest_parse_str(&dcd, h) != 0) {
		rc = al_error_set(
		    AL_EPROTO,
		    "manifest '%s': invalid Docker-Content-Digest '%.80s'",
		    what, h);
		goto out;
	}
	if (h != NULL && is_digest && dcd.algo == want.algo &&
	    !al_digest_equal(&dcd, &want)) {
		rc = al_error_set(
		    AL_EVERIFY,
		    "manifest '%s': the registry announced digest %.80s", what,
		    h);
		goto out;
	}
	if (media_type != NULL) {
		mt = bare_type(al_http_resp_header(&resp, "Content-Type"));
		if (mt == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		*media_type = mt;
		mt = NULL;
	}
	*exists = 1;
	if (digest != NULL)
		*digest = dcd;
out:
	al_http_resp_clear(&resp);
	free(what);
	free(path);
	free(mt);
	return rc;
}

int al_registry_put_manifest(al_registry *r, const char *repo, const char *ref,
                             const uint8_t *p, size_t n, const char *media_type)
{
	al_http_resp resp = AL_HTTP_RESP_INIT;
	al_http_req req;
	al_digest want, got, dcd;
	const char *hdrs[2] = {NULL, NULL};
	const char *h;
	char *what = NULL, *path = NULL, *ct = NULL;
	int rc, is_digest = 0;

	if (r == NULL || p == NULL || media_type == NULL ||
	    media_type[0] == '\0')
		return al_error_set(
		    AL_EINVAL, "al_registry_put_manifest: missing argument");
	if (!valid_repo(repo) || !parse_ref(ref, &want, &is_digest))
		return al_error_set(
		    AL_EINVAL, "invalid manifest reference '%s/%s:%s'", r->host,
		    repo != NULL ? repo : "", ref != NULL ? ref : "");
	if (n > AL_MANIFEST_MAX)
		return al_error_set(
		    AL_ELIMIT,
		    "manifest for '%s/%s' is larger than %" PRIu64 " bytes",
		    r->host, repo, (uint64_t)AL_MANIFEST_MAX);
	if (strpbrk(media_type, "\r\n") != NULL)
		return al_error_set(AL_EINVAL, "invalid media type for '%s/%s'",
		                    r->host, repo);
	what = manifest_what(r, repo, ref, is_digest);
	path = al_sprintf("/v2/%s/manifests/%s", repo, ref);
	ct = al_sprintf("Content-Type: %s", media_type);
	if (what == NULL || path == NULL || ct == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	rc = al_digest_bytes(&got, is_digest ? want.algo : AL_DIGEST_SHA256, p,
	                     n);
	if (rc != 0)
		goto out;
	if (is_digest && !al_digest_equal(&got, &want)) {
		char gs[AL_DIGEST_STRMAX];

		rc = al_error_set(AL_EVERIFY, "manifest for '%s' has digest %s",
		                  what, al_digest_str(&got, gs));
		goto out;
	}
	hdrs[0] = ct;
	memset(&req, 0, sizeof(req));
	req.method = "PUT";
	req.body = p;
	req.body_len = n;
	rc = reg_do(r, repo, 1, path, hdrs, &req, &resp);
	if (rc != 0)
		goto out;
	if (resp.status < 200 || resp.status > 299) {
		rc = reg_fail(&resp, what);
		goto out;
	}
	h = al_http_resp_header(&resp, "Docker-Content-Digest");
	if (h != NULL && al_digest_parse_str(&dcd, h) == 0 &&
	    dcd.algo == got.algo && !al_digest_equal(&dcd, &got)) {
		rc = al_error_set(AL_EPROTO,
		                  "registry stored manifest '%s' under digest "
		                  "%.80s (sent content differs)",
		                  what, h);
		goto out;
	}
out:
	al_http_resp_clear(&resp);
	free(what);
	free(path);
	free(ct);
	return rc;
}

static char *blob_what(const al_registry *r, const char *repo,
                       const al_digest *d)
{
	char ds[AL_DIGEST_STRMAX];

	return al_sprintf("%s/%s@%s", r->host, repo, al_digest_str(d, ds));
}

int al_registry_blob_exists(al_registry *r, const char *repo,
                            const al_digest *d, int *exists, uint64_t *size)
{
	al_http_resp resp = AL_HTTP_RESP_INIT;
	al_http_req req;
	char ds[AL_DIGEST_STRMAX];
	char *what = NULL, *path = NULL;
	const char *cl;
	int rc;

	if (r == NULL || d == NULL || exists == NULL)
		return al_error_set(
		    AL_EINVAL, "al_registry_blob_exists: missing argument");
	if (!valid_repo(repo))
		return al_error_set(AL_EINVAL, "invalid repository '%s/%s'",
		                    r->host, repo != NULL ? repo : "");
	what = blob_what(r, repo, d);
	path = al_sprintf("/v2/%s/blobs/%s", repo, al_digest_str(d, ds));
	if (what == NULL || path == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	memset(&req, 0, sizeof(req));
	req.method = "HEAD";
	rc = reg_do(r, repo, 0, path, NULL, &req, &resp);
	if (rc != 0)
		goto out;
	if (resp.status == 404) {
		*exists = 0;
		goto out;
	}
	if (resp.status != 200) {
		rc = reg_fail(&resp, what);
		goto out;
	}
	if (size != NULL) {
		cl = al_http_resp_header(&resp, "Content-Length");
		if (cl == NULL || al_registry__parse_size(cl, size) != 0)
			*size = 0;
	}
	*exists = 1;
out:
	al_http_resp_clear(&resp);
	free(what);
	free(path);
	return rc;
}

/* The hashing, counting, size-bounding sink between the http module and the
 * caller's sink. */
typedef struct blob_sink {
	const al_writer *sink;
	al_hasher *hasher; /* NULL with AL_BLOB_NOVERIFY */
	uint64_t count;
	uint64_t size;
	void (*progress)(void *ud, uint64_t n);
	void *progress_ud;
	const char *what;
} blob_sink;

static int bs_write(void *ud, const uint8_t *p, size_t n)
{
	blob_sink *bs = ud;
	int rc;

	if (bs->size > 0 && (n > bs->size || bs->count > bs->size - n))
		return al_error_set(AL_EVERIFY,
		                    "blob '%s': more than the expected %" PRIu64
		                    " bytes",
		                    bs->what, bs->size);
	if (bs->hasher != NULL) {
		rc = al_hasher_update(bs->hasher, p, n);
		if (rc != 0)
			return rc;
	}
	rc = bs->sink->write(bs->sink->ud, p, n);
	if (rc != 0)
		return rc;
	bs->count += n;
	if (bs->progress != NULL)
		bs->progress(bs->progress_ud, n);
	return 0;
}

static int bs_reset(void *ud)
{
	blob_sink *bs = ud;
	al_digest scratch;
	int rc;

	if (bs->sink->reset == NULL)
		return al_error_set(AL_EIO,
		                    "blob '%s': transfer restarted and the "
		                    "sink cannot be reset",
		                    bs->what);
	rc = bs->sink->reset(bs->sink->ud);
	if (rc != 0)
		return rc;
	if (bs->hasher != NULL) {
		rc = al_hasher_final(bs->hasher,
		                     &scratch); /* resets the hasher */
		if (rc != 0)
			return rc;
	}
	bs->count = 0;
	return 0;
}

int al_registry__parse_size(const char *s, uint64_t *out)
{
	char *end = NULL;
	unsigned long long v;

	/* strtoull takes "-5" (as a huge number), " 5" and "+5": digits
	 * only, and nothing after them */
	if (s == NULL || !isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v > INT64_MAX)
		return -1;
	*out = (uint64_t)v;
	return 0;
}

int64_t al_registry__content_range_start(const char *v)
{
	return content_range_start(v);
}

char *al_registry__link_next(const char *v)
{
	return link_next(v);
}

/* Start offset of a "bytes START-END/TOTAL" Content-Range; -1 if unparsable. */
static int64_t content_range_start(const char *v)
{
	char *end = NULL;
	unsigned long long s;

	if (v == NULL || strncasecmp(v, "bytes ", 6) != 0 ||
	    !isdigit((unsigned char)v[6]))
		return -1;
	errno = 0;
	s = strtoull(v + 6, &end, 10);
	if (errno != 0 || end == v + 6 || *end != '-' || s > INT64_MAX)
		return -1;
	return (int64_t)s;
}

int al_registry_get_blob(al_registry *r, const char *repo, const al_digest *d,
                         uint64_t size, const al_writer *sink, int flags,
                         void (*progress)(void *ud, uint64_t n),
                         void *progress_ud)
{
	return al_registry_get_blob_from(r, repo, d, size, 0, sink, flags,
	                                 progress, progress_ud);
}

int al_registry_get_blob_from(al_registry *r, const char *repo,
                              const al_digest *d, uint64_t size,
                              uint64_t offset, const al_writer *sink, int flags,
                              void (*progress)(void *ud, uint64_t n),
                              void *progress_ud)
{
	al_http_resp resp = AL_HTTP_RESP_INIT;
	al_http_req req;
	blob_sink bs;
	al_writer w;
	al_digest got;
	char ds[AL_DIGEST_STRMAX];
	char *what = NULL, *path = NULL;
	int rc = 0, attempt;

	if (r == NULL || d == NULL || sink == NULL || sink->write == NULL)
		return al_error_set(AL_EINVAL,
		                    "al_registry_get_blob: missing argument");
	if (offset > 0 && (!(flags & AL_BLOB_NOVERIFY) || sink->reset == NULL ||
	                   size == 0 || offset >= size))
		return al_error_set(AL_EINVAL,
		                    "al_registry_get_blob_from: a resumed "
		                    "download needs a known size above the "
		                    "offset, AL_BLOB_NOVERIFY and a sink that "
		                    "can reset");
	if (!valid_repo(repo))
		return al_error_set(AL_EINVAL, "invalid repository '%s/%s'",
		                    r->host, repo != NULL ? repo : "");
	memset(&bs, 0, sizeof(bs));
	what = blob_what(r, repo, d);
	path = al_sprintf("/v2/%s/blobs/%s", repo, al_digest_str(d, ds));
	if (what == NULL || path == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	bs.sink = sink;
	bs.size = size;
	bs.count = offset;
	bs.progress = progress;
	bs.progress_ud = progress_ud;
	bs.what = what;
	if (!(flags & AL_BLOB_NOVERIFY)) {
		rc = al_hasher_new(&bs.hasher, d->algo);
		if (rc != 0)
			goto out;
	}
	w.write = bs_write;
	w.reset = bs_reset;
	w.ud = &bs;
	for (attempt = 0; attempt < BLOB_ATTEMPTS; attempt++) {
		uint64_t from = bs.count;

		/* Each attempt goes through the registry again (a redirect
		 * URL may have expired) and continues what the sink holds:
		 * the http module sends the Range, restarts the sink on a
		 * 200 and refuses a 206 that starts elsewhere or names
		 * another length (AL_EPROTO: start over). */
		if (from > 0)
			al_log_debug("registry: resuming '%s' at byte %" PRIu64,
			             what, from);
		memset(&req, 0, sizeof(req));
		req.method = "GET";
		req.sink = &w;
		req.resumable = 1;
		req.resume_from = from;
		req.resume_total = size;
		al_http_resp_clear(&resp);
		rc = reg_do(r, repo, 0, path, NULL, &req, &resp);
		if (rc != 0) {
			if ((rc == AL_ENET || rc == AL_ETIMEOUT) &&
			    bs.count > 0 && attempt + 1 < BLOB_ATTEMPTS)
				continue;
			if (rc == AL_EPROTO && from > 0 &&
			    attempt + 1 < BLOB_ATTEMPTS) {
				al_log_debug(
				    "registry: '%s' answered the "
				    "range wrongly (%s), starting over",
				    what, al_error_message());
				if ((rc = bs_reset(&bs)) != 0)
					goto out;
				continue;
			}
			goto out;
		}
		if (resp.status == 200 || resp.status == 206)
			break;
		if (bs.count > 0 &&
		    (resp.status == 403 || resp.status == 400 ||
		     resp.status == 410 || resp.status == 416) &&
		    attempt + 1 < BLOB_ATTEMPTS) {
			if (resp.status == 416) {
				rc = bs_reset(&bs);
				if (rc != 0)
					goto out;
			}
			continue;
		}
		rc = reg_fail(&resp, what);
		goto out;
	}
	if (attempt == BLOB_ATTEMPTS) {
		rc = al_error_set(
		    AL_EPROTO,
		    "blob '%s': transfer did not complete after %d attempts",
		    what, BLOB_ATTEMPTS);
		goto out;
	}
	if (size > 0 && bs.count != size) {
		rc = al_error_set(AL_EVERIFY,
		                  "blob '%s': got %" PRIu64
		                  " bytes, expected %" PRIu64,
		                  what, bs.count, size);
		goto out;
	}
	if (bs.hasher != NULL) {
		rc = al_hasher_final(bs.hasher, &got);
		if (rc != 0)
			goto out;
		if (!al_digest_equal(&got, d)) {
			char gs[AL_DIGEST_STRMAX];

			rc = al_error_set(AL_EVERIFY,
			                  "blob '%s': content has digest %s",
			                  what, al_digest_str(&got, gs));
			goto out;
		}
	}
out:
	al_hasher_free(bs.hasher);
	al_http_resp_clear(&resp);
	free(what);
	free(path);
	return rc;
}

/* A window [start, start+len) of the caller's reader, for one upload request.
 */
typedef struct part_reader {
	const al_reader *src;
	uint64_t start;
	uint64_t len;
	uint64_t done;
	const char *what;
} part_reader;

static int pr_read(void *ud, uint8_t *p, size_t cap, size_t *got)
{
	part_reader *pr = ud;
	uint64_t left = pr->len - pr->done;
	size_t want = cap, g = 0;
	int rc;

	if (left == 0) {
		*got = 0;
		return 0;
	}
	if (want > left)
		want = (size_t)left;
	rc = pr->src->read(pr->src->ud, p, want, &g);
	if (rc != 0)
		return rc;
	if (g == 0 || g > want)
		return al_error_set(AL_EIO,
		                    "blob '%s': the source ended %" PRIu64
		                    " bytes early",
		                    pr->what, left);
	pr->done += g;
	*got = g;
	return 0;
}

static int pr_rewind(void *ud)
{
	part_reader *pr = ud;
	uint8_t scratch[16384];
	uint64_t skip = pr->start;
	int rc;

	if (pr->src->rewind == NULL)
		return al_error_set(
		    AL_EIO,
		    "blob '%s': the source cannot be rewound for a retry",
		    pr->what);
	rc = pr->src->rewind(pr->src->ud);
	if (rc != 0)
		return rc;
	while (skip > 0) {
		size_t want = skip < sizeof(scratch) ? (size_t)skip
		                                     : sizeof(scratch),
		       g = 0;

		rc = pr->src->read(pr->src->ud, scratch, want, &g);
		if (rc != 0)
			return rc;
		if (g == 0 || g > want)
			return al_error_set(
			    AL_EIO, "blob '%s': the source ended while seeking",
			    pr->what);
		skip -= g;
	}
	pr->done = 0;
	return 0;
}

static int location_of(const al_registry *r, const al_http_resp *resp,
                       const char *what, char **loc)
{
	const char *h = al_http_resp_header(resp, "Location");
	char *u;

	if (h == NULL || h[0] == '\0')
		return al_error_set(
		    AL_EPROTO, "'%s': upload answer (HTTP %ld) has no Location",
		    what, resp->status);
	if (!url_text_ok(h))
		return al_error_set(AL_EPROTO,
		                    "'%s': the upload Location contains a "
		                    "control character or a space",
		                    what);
	u = resolve(r, h);
	if (u == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	free(*loc);
	*loc = u;
	return 0;
}

int al_registry_put_blob(al_registry *r, const char *repo, const al_digest *d,
                         uint64_t size, const al_reader *reader,
                         void (*progress)(void *ud, uint64_t n),
                         void *progress_ud)
{
	al_http_resp resp = AL_HTTP_RESP_INIT;
	al_http_req req;
	part_reader pr;
	al_reader rd;
	char ds[AL_DIGEST_STRMAX], crange[64];
	const char *hdrs[3] = {NULL, NULL, NULL};
	char *what = NULL, *path = NULL, *loc = NULL, *url = NULL;
	uint64_t offset = 0;
	int rc, n;

	if (r == NULL || d == NULL || reader == NULL || reader->read == NULL)
		return al_error_set(AL_EINVAL,
		                    "al_registry_put_blob: missing argument");
	if (!valid_repo(repo))
		return al_error_set(AL_EINVAL, "invalid repository '%s/%s'",
		                    r->host, repo != NULL ? repo : "");
	if (size > INT64_MAX)
		return al_error_set(AL_ELIMIT, "blob too large");
	what = blob_what(r, repo, d);
	path = al_sprintf("/v2/%s/blobs/uploads/", repo);
	if (what == NULL || path == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	al_digest_str(d, ds);
	memset(&req, 0, sizeof(req));
	req.method = "POST";
	req.body = (const uint8_t *)"";
	req.body_len = 0;
	rc = reg_do(r, repo, 1, path, NULL, &req, &resp);
	if (rc != 0)
		goto out;
	if (resp.status == 201)
		goto out; /* the registry already has it */
	if (resp.status != 202) {
		rc = reg_fail(&resp, what);
		goto out;
	}
	rc = location_of(r, &resp, what, &loc);
	if (rc != 0)
		goto out;
	memset(&pr, 0, sizeof(pr));
	pr.src = reader;
	pr.what = what;
	rd.read = pr_read;
	rd.rewind = pr_rewind;
	rd.ud = &pr;
	hdrs[0] = "Content-Type: application/octet-stream";
	if (size > r->chunk_size) {
		while (offset < size) {
			uint64_t len = size - offset < r->chunk_size
			                   ? size - offset
			                   : r->chunk_size;

			n = snprintf(crange, sizeof(crange),
			             "Content-Range: %" PRIu64 "-%" PRIu64,
			             offset, offset + len - 1);
			if (n < 0 || (size_t)n >= sizeof(crange)) {
				rc = al_error_set(AL_EINVAL,
				                  "content range too long");
				goto out;
			}
			hdrs[1] = crange;
			pr.start = offset;
			pr.len = len;
			pr.done = 0;
			memset(&req, 0, sizeof(req));
			req.method = "PATCH";
			req.reader = &rd;
			req.body_size = (int64_t)len;
			al_http_resp_clear(&resp);
			rc = reg_do(r, repo, 1, loc, hdrs, &req, &resp);
			if (rc != 0)
				goto out;
			if (resp.status != 202) {
				rc = reg_fail(&resp, what);
				goto out;
			}
			rc = location_of(r, &resp, what, &loc);
			if (rc != 0)
				goto out;
			offset += len;
			if (progress != NULL)
				progress(progress_ud, len);
		}
	}
	url = al_sprintf("%s%sdigest=%s", loc,
	                 strchr(loc, '?') != NULL ? "&" : "?", ds);
	if (url == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	hdrs[1] = NULL;
	memset(&req, 0, sizeof(req));
	req.method = "PUT";
	if (size > r->chunk_size) {
		req.body = (const uint8_t *)"";
		req.body_len = 0;
	} else {
		pr.start = 0;
		pr.len = size;
		pr.done = 0;
		req.reader = &rd;
		req.body_size = (int64_t)size;
	}
	al_http_resp_clear(&resp);
	rc = reg_do(r, repo, 1, url, hdrs, &req, &resp);
	if (rc != 0)
		goto out;
	if (resp.status == 404 && resp.attempts > 1) {
		int have = 0;
		uint64_t have_size = 0;

		/* An earlier attempt's answer was lost after the registry
		 * finished the upload (its session is then gone, 404): the
		 * blob may be there, with its digest and size. */
		if (al_registry_blob_exists(r, repo, d, &have, &have_size) ==
		        0 &&
		    have && have_size == size) {
			al_log_debug(
			    "registry: %s: upload finished by an earlier "
			    "attempt",
			    what);
			resp.status = 201;
		}
	}
	if (resp.status < 200 || resp.status > 299 || resp.status == 202) {
		rc = reg_fail(&resp, what);
		goto out;
	}
	if (progress != NULL && size <= r->chunk_size)
		progress(progress_ud, size);
out:
	al_http_resp_clear(&resp);
	free(what);
	free(path);
	free(loc);
	free(url);
	return rc;
}

/* ---- upload sessions, step by step (distribution-spec "Pushing a blob
 * in chunks": POST, PATCH with Content-Range, GET for the status, PUT
 * ?digest=) ---- */

int al_registry_upload_start(al_registry *r, const char *repo, char **location)
{
	al_http_resp resp = AL_HTTP_RESP_INIT;
	al_http_req req;
	char *path = NULL, *loc = NULL;
	int rc;

	if (r == NULL || location == NULL)
		return al_error_set(
		    AL_EINVAL, "al_registry_upload_start: missing argument");
	if (!valid_repo(repo))
		return al_error_set(AL_EINVAL, "invalid repository '%s/%s'",
		                    r->host, repo != NULL ? repo : "");
	if ((path = al_sprintf("/v2/%s/blobs/uploads/", repo)) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	memset(&req, 0, sizeof(req));
	req.method = "POST";
	req.body = (const uint8_t *)"";
	req.body_len = 0;
	if ((rc = reg_do(r, repo, 1, path, NULL, &req, &resp)) != 0)
		goto out;
	if (resp.status != 202) {
		rc = reg_fail(&resp, path);
		goto out;
	}
	if ((rc = location_of(r, &resp, path, &loc)) != 0)
		goto out;
	*location = loc;
	loc = NULL;
out:
	al_http_resp_clear(&resp);
	free(path);
	free(loc);
	return rc;
}

/* The bytes a "Range: 0-<end>" answer says the session holds: end + 1,
 * or 0 for "0-0" (distribution answers that for an empty session); -1
 * when the value is not of that form. */
static int64_t upload_range_size(const char *v)
{
	uint64_t end = 0;
	const char *dash;

	if (v == NULL)
		return -1;
	if (strncmp(v, "bytes=", 6) == 0)
		v += 6;
	if (strncmp(v, "0-", 2) != 0)
		return -1;
	dash = v + 1;
	if (al_registry__parse_size(dash + 1, &end) != 0 || end >= INT64_MAX)
		return -1;
	return end == 0 ? 0 : (int64_t)end + 1;
}

int al_registry_upload_status(al_registry *r, const char *repo, char **location,
                              uint64_t *offset)
{
	al_http_resp resp = AL_HTTP_RESP_INIT;
	al_http_req req;
	int64_t have;
	int rc;

	if (r == NULL || location == NULL || *location == NULL ||
	    offset == NULL)
		return al_error_set(
		    AL_EINVAL, "al_registry_upload_status: missing argument");
	if (!valid_repo(repo))
		return al_error_set(AL_EINVAL, "invalid repository '%s/%s'",
		                    r->host, repo != NULL ? repo : "");
	if (!on_registry(r, *location))
		return al_error_set(
		    AL_EINVAL, "an upload session is not on '%s'", r->host);
	memset(&req, 0, sizeof(req));
	req.method = "GET";
	if ((rc = reg_do(r, repo, 1, *location, NULL, &req, &resp)) != 0)
		goto out;
	if (resp.status == 404 || resp.status == 400 || resp.status == 416) {
		/* gone (BLOB_UPLOAD_UNKNOWN), or its state no longer
		 * matches what the registry holds (distribution:
		 * BLOB_UPLOAD_INVALID, RANGE_INVALID) */
		reg_fail(&resp, "upload session");
		rc = al_error_set(AL_ENOTFOUND,
		                  "upload session on '%s' is gone (HTTP %ld)",
		                  r->host, resp.status);
		goto out;
	}
	if (resp.status != 204 && resp.status != 200) {
		rc = reg_fail(&resp, "upload session");
		goto out;
	}
	have = upload_range_size(al_http_resp_header(&resp, "Range"));
	if (have < 0) {
		rc = al_error_set(AL_EPROTO,
		                  "upload session on '%s': no usable Range in "
		                  "the status answer",
		                  r->host);
		goto out;
	}
	if (al_http_resp_header(&resp, "Location") != NULL &&
	    (rc = location_of(r, &resp, "upload session", location)) != 0)
		goto out;
	*offset = (uint64_t)have;
out:
	al_http_resp_clear(&resp);
	return rc;
}

int al_registry_upload_chunk(al_registry *r, const char *repo, char **location,
                             uint64_t offset, uint64_t len,
                             const al_reader *reader)
{
	al_http_resp resp = AL_HTTP_RESP_INIT;
	al_http_req req;
	char crange[64];
	const char *hdrs[3] = {"Content-Type: application/octet-stream", NULL,
	                       NULL};
	int rc, n;

	if (r == NULL || location == NULL || *location == NULL ||
	    reader == NULL || reader->read == NULL || len == 0 ||
	    len > INT64_MAX || offset > INT64_MAX - len)
		return al_error_set(AL_EINVAL,
		                    "al_registry_upload_chunk: bad argument");
	if (!valid_repo(repo))
		return al_error_set(AL_EINVAL, "invalid repository '%s/%s'",
		                    r->host, repo != NULL ? repo : "");
	if (!on_registry(r, *location))
		return al_error_set(
		    AL_EINVAL, "an upload session is not on '%s'", r->host);
	n = snprintf(crange, sizeof(crange),
	             "Content-Range: %" PRIu64 "-%" PRIu64, offset,
	             offset + len - 1);
	if (n < 0 || (size_t)n >= sizeof(crange))
		return al_error_set(AL_EINVAL, "content range too long");
	hdrs[1] = crange;
	memset(&req, 0, sizeof(req));
	req.method = "PATCH";
	req.reader = reader;
	req.body_size = (int64_t)len;
	if ((rc = reg_do(r, repo, 1, *location, hdrs, &req, &resp)) != 0)
		goto out;
	if (resp.status != 202) {
		rc = reg_fail(&resp, "upload session");
		goto out;
	}
	rc = location_of(r, &resp, "upload session", location);
out:
	al_http_resp_clear(&resp);
	return rc;
}

int al_registry_upload_finish(al_registry *r, const char *repo,
                              const char *location, const al_digest *d)
{
	al_http_resp resp = AL_HTTP_RESP_INIT;
	al_http_req req;
	char ds[AL_DIGEST_STRMAX];
	char *url = NULL, *what = NULL;
	int rc;

	if (r == NULL || location == NULL || d == NULL)
		return al_error_set(
		    AL_EINVAL, "al_registry_upload_finish: missing argument");
	if (!valid_repo(repo))
		return al_error_set(AL_EINVAL, "invalid repository '%s/%s'",
		                    r->host, repo != NULL ? repo : "");
	if (!on_registry(r, location))
		return al_error_set(
		    AL_EINVAL, "an upload session is not on '%s'", r->host);
	al_digest_str(d, ds);
	url = al_sprintf("%s%sdigest=%s", location,
	                 strchr(location, '?') != NULL ? "&" : "?", ds);
	what = blob_what(r, repo, d);
	if (url == NULL || what == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	memset(&req, 0, sizeof(req));
	req.method = "PUT";
	req.body = (const uint8_t *)"";
	req.body_len = 0;
	if ((rc = reg_do(r, repo, 1, url, NULL, &req, &resp)) != 0)
		goto out;
	if (resp.status < 200 || resp.status > 299 || resp.status == 202)
		rc = reg_fail(&resp, what);
out:
	al_http_resp_clear(&resp);
	free(url);
	free(what);
	return rc;
}

int al_registry_mount_blob(al_registry *r, const char *repo,
                           const char *from_repo, const al_digest *d,
                           int *mounted)
{
	al_http_resp resp = AL_HTTP_RESP_INIT;
	al_http_req req;
	char ds[AL_DIGEST_STRMAX];
	char *what = NULL, *path = NULL, *loc = NULL;
	int rc;

	if (r == NULL || d == NULL || mounted == NULL)
		return al_error_set(AL_EINVAL,
		                    "al_registry_mount_blob: missing argument");
	if (!valid_repo(repo) || !valid_repo(from_repo))
		return al_error_set(AL_EINVAL,
		                    "invalid repository for a mount on '%s'",
		                    r->host);
	what = blob_what(r, repo, d);
	path = al_sprintf("/v2/%s/blobs/uploads/?mount=%s&from=%s", repo,
	                  al_digest_str(d, ds), from_repo);
	if (what == NULL || path == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	memset(&req, 0, sizeof(req));
	req.method = "POST";
	req.body = (const uint8_t *)"";
	req.body_len = 0;
	rc = reg_do(r, repo, 1, path, NULL, &req, &resp);
	if (rc != 0)
		goto out;
	if (resp.status == 201) {
		*mounted = 1;
		goto out;
	}
	if (resp.status != 202) {
		rc = reg_fail(&resp, what);
		goto out;
	}
	/* an upload session was opened instead: cancel it (best effort) */
	if (location_of(r, &resp, what, &loc) == 0) {
		al_http_resp_clear(&resp);
		memset(&req, 0, sizeof(req));
		req.method = "DELETE";
		if (reg_do(r, repo, 1, loc, NULL, &req, &resp) != 0 ||
		    (resp.status != 204 && resp.status != 200 &&
		     resp.status != 202))
			al_log_debug("registry: could not cancel the upload "
			             "session of '%s'",
			             what);
	}
	al_error_clear();
	rc = 0;
	*mounted = 0;
out:
	al_http_resp_clear(&resp);
	free(what);
	free(path);
	free(loc);
	return rc;
}

/* The target of a Link header's rel="next" entry, or NULL. Caller frees. */
static char *link_next(const char *v)
{
	while (v != NULL && *v != '\0') {
		const char *lt = strchr(v, '<'), *gt, *end;

		if (lt == NULL)
			return NULL;
		gt = strchr(lt, '>');
		if (gt == NULL)
			return NULL;
		end = strchr(gt, ',');
		if (end == NULL)
			end = gt + strlen(gt);
		{
			const char *rel = strstr(gt, "rel=");

			if (rel != NULL && rel < end &&
			    (strncmp(rel + 4, "\"next\"", 6) == 0 ||
			     strncmp(rel + 4, "next", 4) == 0))
				return al_strndup(lt + 1,
				                  (size_t)(gt - lt - 1));
		}
		v = end;
	}
	return NULL;
}

/* The tags gathered over the pages of one listing. */
typedef struct tag_list {
	char **v;
	size_t n, cap;
} tag_list;

/* One page of a tag listing (body, JSON {"tags": [...]}) appended to l:
 * every tag a string in the spec's grammar (a tag becomes a reference, a
 * chart version and a line of mapping.txt), at most TAGS_MAX in all. */
static int tags_page_add(tag_list *l, const al_buf *body, const char *what)
{
	json_t *root, *arr, *v;
	json_error_t jerr;
	size_t i;
	int rc = 0;

	root = json_loadb(
	    (const char *)(body->ptr != NULL ? body->ptr : (const uint8_t *)""),
	    body->len, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(root)) {
		rc = al_error_set(AL_EPROTO,
		                  "tags of '%s': invalid JSON answer", what);
		goto out;
	}
	arr = json_object_get(root, "tags");
	if (arr != NULL && !json_is_null(arr) && !json_is_array(arr)) {
		rc = al_error_set(
		    AL_EPROTO, "tags of '%s': \"tags\" is not an array", what);
		goto out;
	}
	json_array_foreach(arr, i, v)
	{
		char *t;

		if (!json_is_string(v)) {
			rc = al_error_set(AL_EPROTO,
			                  "tags of '%s': a tag is not a string",
			                  what);
			goto out;
		}
		if (!al_name_ok(json_string_value(v), json_string_length(v),
		                AL_NAME_TAG, 0)) {
			rc = al_error_set(AL_EPROTO,
			                  "tags of '%s': a tag is not "
			                  "a valid tag",
			                  what);
			goto out;
		}
		if (l->n >= TAGS_MAX) {
			rc = al_error_set(AL_ELIMIT,
			                  "tags of '%s': more than %d tags",
			                  what, TAGS_MAX);
			goto out;
		}
		if (l->n == l->cap) {
			size_t nc = l->cap == 0 ? 64 : l->cap * 2;
			char **nl = realloc(l->v, nc * sizeof(*nl));

			if (nl == NULL) {
				rc = al_error_set(AL_ENOMEM, "out of memory");
				goto out;
			}
			l->v = nl;
			l->cap = nc;
		}
		t = al_strdup(json_string_value(v));
		if (t == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		l->v[l->n++] = t;
	}
out:
	json_decref(root);
	return rc;
}

/* The next page of a listing from the answer's Link header (*url NULL on
 * the last page): a link with a control character or a space, or one that
 * leaves the registry, is refused. */
static int tags_next(al_registry *r, const al_http_resp *resp, const char *what,
                     char **url)
{
	char *next = link_next(al_http_resp_header(resp, "Link"));

	*url = NULL;
	if (next == NULL)
		return 0;
	if (!url_text_ok(next)) {
		free(next);
		return al_error_set(AL_EPROTO,
		                    "tags of '%s': the pagination link "
		                    "contains a control character or a space",
		                    what);
	}
	*url = resolve(r, next);
	free(next);
	if (*url == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	if (!on_registry(r, *url))
		return al_error_set(AL_EPROTO,
		                    "tags of '%s': pagination "
		                    "link leaves the registry",
		                    what);
	return 0;
}

int al_registry_list_tags(al_registry *r, const char *repo, char ***tags,
                          size_t *ntags)
{
	al_buf body = AL_BUF_INIT(TAGS_BODY_MAX);
	al_http_resp resp = AL_HTTP_RESP_INIT;
	al_http_req req;
	tag_list l = {NULL, 0, 0};
	char *url = NULL, *what = NULL;
	size_t i, pages = 0;
	int rc = 0;

	if (r == NULL || tags == NULL || ntags == NULL)
		return al_error_set(AL_EINVAL,
		                    "al_registry_list_tags: missing argument");
	if (!valid_repo(repo))
		return al_error_set(AL_EINVAL, "invalid repository '%s/%s'",
		                    r->host, repo != NULL ? repo : "");
	what = al_sprintf("%s/%s", r->host, repo);
	url = al_sprintf("/v2/%s/tags/list?n=1000", repo);
	if (what == NULL || url == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	while (url != NULL) {
		if (++pages > TAGS_MAX_PAGES) {
			rc = al_error_set(AL_ELIMIT,
			                  "tags of '%s': more than %d pages",
			                  what, TAGS_MAX_PAGES);
			goto out;
		}
		al_buf_reset(&body);
		al_http_resp_clear(&resp);
		memset(&req, 0, sizeof(req));
		req.method = "GET";
		req.body_out = &body;
		rc = reg_do(r, repo, 0, url, NULL, &req, &resp);
		if (rc == AL_ELIMIT && resp.body_overflow)
			rc = al_error_set(
			    AL_ELIMIT,
			    "tags of '%s': page larger than %zu bytes", what,
			    body.max);
		if (rc != 0)
			goto out;
		if (resp.status != 200) {
			rc = reg_fail(&resp, what);
			goto out;
		}
		free(url);
		url = NULL;
		if ((rc = tags_page_add(&l, &body, what)) < 0 ||
		    (rc = tags_next(r, &resp, what, &url)) < 0)
			goto out;
	}
	*tags = l.v;
	*ntags = l.n;
	l.v = NULL;
	l.n = 0;
out:
	for (i = 0; i < l.n; i++)
		free(l.v[i]);
	free(l.v);
	al_buf_free(&body);
	al_http_resp_clear(&resp);
	free(url);
	free(what);
	return rc;
}

int al_registry_get_referrers(al_registry *r, const char *repo,
                              const al_digest *subject,
                              const char *artifact_type, al_buf *body)
{
	al_http_resp resp = AL_HTTP_RESP_INIT;
	al_http_req req;
	const char *hdrs[] = {"Accept: " AL_MT_REFERRERS_INDEX, NULL};
	char ds[AL_DIGEST_STRMAX];
	char *path = NULL, *what = NULL;
	int rc;

	if (r == NULL || subject == NULL || body == NULL || !valid_repo(repo))
		return al_error_set(AL_EINVAL,
		                    "al_registry_get_referrers: bad argument");
	al_digest_str(subject, ds);
	/* artifactType is a media type: no character of it needs escaping
	 * but '+', which a query decodes as a space */
	if (artifact_type != NULL && strchr(artifact_type, '&') == NULL &&
	    strchr(artifact_type, '#') == NULL) {
		al_buf q = AL_BUF_INIT(1024);
		const char *c;

		for (c = artifact_type; *c != '\0'; c++) {
			if ((rc = *c == '+' ? al_buf_puts(&q, "%2B")
			                    : al_buf_append(&q, c, 1)) < 0)
				break;
		}
		path = al_sprintf("/v2/%s/referrers/%s?artifactType=%s", repo,
		                  ds, al_buf_cstr(&q));
		al_buf_free(&q);
	} else {
		path = al_sprintf("/v2/%s/referrers/%s", repo, ds);
	}
	what = al_sprintf("%s/%s referrers of %s", r->host, repo, ds);
	if (path == NULL || what == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	memset(&req, 0, sizeof(req));
	req.method = "GET";
	req.body_out = body;
	if ((rc = reg_do(r, repo, 0, path, hdrs, &req, &resp)) != 0)
		goto out;
	/* distribution 2.8 has no referrers API: a plain-text 404; others
	 * answer 400, 405, 406 or 501 for a path they do not know */
	if (resp.status == 404 || resp.status == 400 || resp.status == 405 ||
	    resp.status == 406 || resp.status == 501) {
		rc = al_error_set(AL_ENOTFOUND, "'%s': no referrers API", what);
		goto out;
	}
	if (resp.status != 200) {
		rc = reg_fail(&resp, what);
		goto out;
	}
	rc = 0;
out:
	al_http_resp_clear(&resp);
	free(path);
	free(what);
	return rc;
}

int al_registry_delete_manifest(al_registry *r, const char *repo,
                                const al_digest *digest, int *deleted)
{
	al_http_resp resp = AL_HTTP_RESP_INIT;
	al_http_req req;
	char ds[AL_DIGEST_STRMAX];
	char *what = NULL, *path = NULL;
	int rc;

	if (r == NULL || digest == NULL || !valid_repo(repo))
		return al_error_set(
		    AL_EINVAL, "al_registry_delete_manifest: bad argument");
	if (deleted != NULL)
		*deleted = 0;
	al_digest_str(digest, ds);
	what = manifest_what(r, repo, ds, 1);
	path = al_sprintf("/v2/%s/manifests/%s", repo, ds);
	if (what == NULL || path == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	memset(&req, 0, sizeof(req));
	req.method = "DELETE";
	if ((rc = reg_do(r, repo, 1, path, NULL, &req, &resp)) != 0)
		goto out;
	if (resp.status == 202 || resp.status == 200 || resp.status == 204) {
		if (deleted != NULL)
			*deleted = 1;
		goto out;
	}
	if (resp.status == 404)
		goto out; /* gone already: a rerun after an interruption */
	if (resp.status == 405) {
		rc = al_error_set(AL_EPROTO,
		                  "'%s': the registry does not allow deleting "
		                  "manifests (HTTP 405; docker-registry: "
		                  "REGISTRY_STORAGE_DELETE_ENABLED=true)",
		                  what);
		goto out;
	}
	rc = reg_fail(&resp, what);
	if (rc == AL_ENOTFOUND)
		rc = 0;
out:
	al_http_resp_clear(&resp);
	free(what);
	free(path);
	return rc;
}
