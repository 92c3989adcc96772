/* http.c: the libcurl client: timeouts, retries with backoff and Retry-After,
 * own redirects, resumable downloads, cancellation. */
#include <ctype.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "airlock/buf.h"
#include "airlock/clock.h"
#include "airlock/error.h"
#include "airlock/http.h"
#include "airlock/log.h"
#include "certsd_int.h"
#include "http_int.h"
#include "clock_int.h"
#include "error_int.h"

#define HTTP_DEFAULT_CONNECT_MS 10000
#define HTTP_DEFAULT_LOW_SPEED_MS 30000
#define HTTP_DEFAULT_RETRIES 4
#define HTTP_DEFAULT_BACKOFF_BASE_MS 250
#define HTTP_DEFAULT_BACKOFF_MAX_MS 20000
#define HTTP_MAX_REDIRECTS 5
#define HTTP_DEFAULT_DOC_MS 60000
/* How early curl's timer may fire before our deadline (classify_failure). */
#define HTTP_CAPPED_SLACK_MS 250
#define HTTP_DEFAULT_MIN_SPEED 1024
#define HTTP_MAX_HEADERS 256
#define HTTP_MAX_HEADER_BYTES (256 * 1024)
#define HTTP_ERROR_BODY_MAX (64 * 1024)
/* A non-2xx or redirect body past this is hostile: the call fails. */
#define HTTP_ERROR_BODY_LIMIT (1024 * 1024)
#define HTTP_POLL_MS 100
#define HTTP_SAFE_URL_MAX 512

/* The PEM bytes of the trusted CAs, read-only once made and shared by
 * the clients that hold a reference. */
typedef struct ca_blob {
	atomic_size_t refs;
	size_t len;
	uint8_t bytes[];
} ca_blob;

static ca_blob *ca_blob_ref(ca_blob *b)
{
	if (b != NULL)
		atomic_fetch_add(&b->refs, 1);
	return b;
}

static void ca_blob_unref(ca_blob *b)
{
	if (b != NULL && atomic_fetch_sub(&b->refs, 1) == 1)
		free(b);
}

struct al_http {
	CURLM *multi; /* owns the connection cache, reused across requests */
	CURL *easy;
	char *ca_file;
	char *client_cert;
	char *client_key;
	char *proxy;
	char *no_proxy;
	char *user_agent;
	char **insecure; /* NULL-terminated copy of opts->insecure_hosts */
	int tls_verify_off;
	uint64_t connect_ms;
	uint64_t low_speed_ms;
	uint64_t request_ms;
	unsigned max_retries;
	uint64_t backoff_base_ms;
	uint64_t backoff_max_ms;
	uint64_t doc_ms;
	uint64_t min_speed_bps;
	int no_plain_auth;
	al_cancel *cancel;
	char errbuf[CURL_ERROR_SIZE];
	/* the trusted CAs when more than one file's worth (ca_setup),
	 * shared with the other clients of the process (ca_cache) */
	struct ca_blob *ca;
	/* ca_build's inputs, kept by ca_setup until the first https request:
	 * a client that only ever speaks plain http reads no CA file */
	int ca_pending;
	char *ca_base;     /* the bundle file, or NULL */
	uint8_t *ca_extra; /* al_http_opts.ca_pem, copied */
	size_t ca_extra_len;
	char *ca_path; /* $SSL_CERT_DIR, as curl's CAPATH */
	/* the system's CAs are curl's default CA directory only (ca_setup) */
	int ca_system_dir;
};

/* State of one al_http_do call, shared with the curl callbacks. */
struct xfer {
	al_http *h;
	const al_http_req *req;
	al_http_resp *resp;
	/* the current URL without userinfo or query, for messages */
	char safe_url[HTTP_SAFE_URL_MAX];
	/* this attempt's answer */
	long status;
	int headers_done;
	int body_2xx; /* the body goes to the sink / body_out */
	int follow;   /* a redirect we follow: its body is dropped */
	int follow_allowed;
	int is_head;
	size_t hdr_bytes;     /* header bytes of this attempt (1xx included) */
	uint64_t side_bytes;  /* body bytes of a non-2xx / redirect answer */
	uint64_t side_end_ms; /* its body must end by then (0: not yet set) */
	uint64_t range_from;  /* "Range: bytes=<range_from>-" sent (0: none) */
	/* across attempts */
	uint64_t given;   /* bytes given to the sink / body_out */
	size_t out_start; /* body_out length before the call */
	int err;          /* al_status from a callback; message already set */
	int canceled;
	int doc;              /* answer kept in memory: bounded in time */
	int capped;           /* curl's total timeout is the deadline's rest */
	int own_timeout;      /* run_transfer ended the attempt (stall...) */
	al_deadline deadline; /* req->deadline, or earlier for a document */
	/* request body */
	int send_body;
	size_t body_pos;
	uint64_t sent; /* reader bytes handed to curl, ever */
};

static long ms_to_long(uint64_t ms)
{
	return ms > (uint64_t)LONG_MAX ? LONG_MAX : (long)ms;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* Copy url into out without userinfo, query or fragment: signed redirect
 * URLs carry credentials in the query. */
static void url_redact(const char *url, char *out, size_t cap)
{
	const char *p = url, *auth, *at, *end;
	size_t alen, n = 0;
	int w;

	if (cap == 0)
		return;
	out[0] = '\0';
	if (url == NULL)
		return;
	auth = strstr(url, "://");
	if (auth != NULL) {
		auth += 3;
		alen = strcspn(auth, "/?#");
		at = NULL;
		for (end = auth; end < auth + alen; end++) {
			if (*end == '@')
				at = end;
		}
		w = snprintf(out, cap, "%.*s", (int)(auth - url), url);
		if (w < 0 || (size_t)w >= cap)
			return;
		n = (size_t)w;
		p = at != NULL ? at + 1 : auth;
	}
	alen = strcspn(p, "?#");
	w = snprintf(out + n, cap - n, "%.*s%s", (int)min_u64(alen, INT_MAX), p,
	             p[alen] != '\0' ? "?..." : "");
	if (w < 0)
		out[n] = '\0';
}

/* scheme, host and port (default port filled in) of url; caller frees. */
static int url_origin(const char *url, char **scheme, char **host, char **port)
{
	CURLU *u = curl_url();
	char *s = NULL, *ho = NULL, *po = NULL;
	int rc = AL_EINVAL;

	if (u == NULL)
		return al_error_set(AL_ENOMEM, "out of memory parsing a URL");
	if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &s, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &ho, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_PORT, &po, CURLU_DEFAULT_PORT) !=
	        CURLUE_OK)
		goto out;
	*scheme = s;
	*host = ho;
	*port = po;
	s = ho = po = NULL;
	rc = 0;
out:
	curl_free(s);
	curl_free(ho);
	curl_free(po);
	curl_url_cleanup(u);
	return rc;
}

/* 1 when a and b share scheme, host and port; 0 otherwise (also when
 * either cannot be parsed, so credentials are dropped in doubt). */
static int same_origin(const char *a, const char *b)
{
	char *s1 = NULL, *h1 = NULL, *p1 = NULL, *s2 = NULL, *h2 = NULL,
	     *p2 = NULL;
	int same = 0;

	if (url_origin(a, &s1, &h1, &p1) == 0 &&
	    url_origin(b, &s2, &h2, &p2) == 0)
		same = strcasecmp(s1, s2) == 0 && strcasecmp(h1, h2) == 0 &&
		       strcmp(p1, p2) == 0;
	curl_free(s1);
	curl_free(h1);
	curl_free(p1);
	curl_free(s2);
	curl_free(h2);
	curl_free(p2);
	al_error_clear();
	return same;
}

/* 1 if url's scheme is http or https. */
static int url_is_http(const char *url)
{
	char *s = NULL, *ho = NULL, *po = NULL;
	int ok = 0;

	if (url_origin(url, &s, &ho, &po) == 0)
		ok = strcasecmp(s, "http") == 0 || strcasecmp(s, "https") == 0;
	curl_free(s);
	curl_free(ho);
	curl_free(po);
	return ok;
}

/* 1 if url's "host[:port]" is listed in h->insecure ("host" matches any port).
 */
static int host_is_insecure(const al_http *h, const char *url)
{
	char *s = NULL, *ho = NULL, *po = NULL, **e;
	int hit = 0;

	if (h->insecure == NULL || url_origin(url, &s, &ho, &po) != 0)
		goto out;
	for (e = h->insecure; *e != NULL && !hit; e++) {
		const char *entry = *e, *colon;
		size_t hlen;

		if (entry[0] == '[') {
			const char *rb = strchr(entry, ']');

			if (rb == NULL)
				continue;
			hlen = (size_t)(rb - entry) + 1;
			colon = rb[1] == ':' ? rb + 1 : NULL;
		} else {
			colon = strrchr(entry, ':');
			hlen = colon != NULL ? (size_t)(colon - entry)
			                     : strlen(entry);
		}
		if (strlen(ho) != hlen || strncasecmp(ho, entry, hlen) != 0)
			continue;
		hit = colon == NULL || strcmp(colon + 1, po) == 0;
	}
out:
	curl_free(s);
	curl_free(ho);
	curl_free(po);
	al_error_clear();
	return hit;
}

int al_http_origin_compare(const char *a, const char *b)
{
	char *s1 = NULL, *h1 = NULL, *p1 = NULL, *s2 = NULL, *h2 = NULL,
	     *p2 = NULL;
	int rel = AL_HTTP_ORIGIN_OTHER;

	if (a != NULL && b != NULL && url_origin(a, &s1, &h1, &p1) == 0 &&
	    url_origin(b, &s2, &h2, &p2) == 0 && strcasecmp(h1, h2) == 0 &&
	    strcmp(p1, p2) == 0)
		rel = strcasecmp(s1, s2) == 0 ? AL_HTTP_ORIGIN_SAME
		                              : AL_HTTP_ORIGIN_SCHEME;
	curl_free(s1);
	curl_free(h1);
	curl_free(p1);
	curl_free(s2);
	curl_free(h2);
	curl_free(p2);
	al_error_clear();
	return rel;
}

int al_http_plain_allowed(const al_http *h, const char *url)
{
	if (h == NULL || url == NULL)
		return 0;
	return h->tls_verify_off || host_is_insecure(h, url);
}

int al_http_value_ok(const char *v, size_t n)
{
	size_t i;

	if (v == NULL)
		return 0;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)v[i];

		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return 0;
	}
	return 1;
}

/* 1 when url holds a byte that has no place in a URL on the wire (controls,
 * space, DEL): a Location or realm built to smuggle a header line. */
static int url_has_ctl(const char *url)
{
	for (; *url != '\0'; url++) {
		unsigned char c = (unsigned char)*url;

		if (c <= 0x20 || c == 0x7f)
			return 1;
	}
	return 0;
}

/* 1 if url uses plain http. */
static int url_is_plain(const char *url)
{
	return strncasecmp(url, "http://", 7) == 0;
}

/* 1 if the request headers (not dropped) carry an Authorization line. */
static int has_auth(const al_http_req *req)
{
	const char *const *hp;

	for (hp = req->headers; hp != NULL && *hp != NULL; hp++) {
		if (strncasecmp(*hp, "Authorization:", 14) == 0)
			return 1;
	}
	return 0;
}

static int is_retryable_status(long status)
{
	return status == 408 || status == 429 || status == 500 ||
	       status == 502 || status == 503 || status == 504;
}

static int is_redirect_status(long status)
{
	return status == 301 || status == 302 || status == 303 ||
	       status == 307 || status == 308;
}

static int header_is(const char *line, const char *name)
{
	size_t n = strlen(name);

	return strncasecmp(line, name, n) == 0 && line[n] == ':';
}

static void headers_clear(al_http_resp *resp)
{
	size_t i;

	for (i = 0; i < resp->nhdr; i++) {
		free(resp->hdr_names[i]);
		free(resp->hdr_values[i]);
	}
	free(resp->hdr_names);
	free(resp->hdr_values);
	resp->hdr_names = NULL;
	resp->hdr_values = NULL;
	resp->nhdr = 0;
}

static int headers_add(al_http_resp *resp, const char *name, size_t nlen,
                       const char *value, size_t vlen)
{
	char **names, **values, *n, *v;

	if (resp->nhdr >= HTTP_MAX_HEADERS)
		return AL_ELIMIT;
	names = realloc(resp->hdr_names, (resp->nhdr + 1) * sizeof(*names));
	if (names == NULL)
		return AL_ENOMEM;
	resp->hdr_names = names;
	values = realloc(resp->hdr_values, (resp->nhdr + 1) * sizeof(*values));
	if (values == NULL)
		return AL_ENOMEM;
	resp->hdr_values = values;
	n = al_strndup(name, nlen);
	v = al_strndup(value, vlen);
	if (n == NULL || v == NULL) {
		free(n);
		free(v);
		return AL_ENOMEM;
	}
	resp->hdr_names[resp->nhdr] = n;
	resp->hdr_values[resp->nhdr] = v;
	resp->nhdr++;
	return 0;
}

/* Parse "bytes <start>-<end>/<total|*>": start, and total (0 for "*" or
 * none given); -1 if unparsable. */
static int content_range_parse(const char *v, uint64_t *start, uint64_t *total)
{
	uint64_t s = 0, t = 0;
	int any = 0;

	if (v == NULL || strncasecmp(v, "bytes ", 6) != 0)
		return -1;
	v += 6;
	while (*v == ' ')
		v++;
	for (; isdigit((unsigned char)*v); v++) {
		if (s > (UINT64_MAX - 9) / 10)
			return -1;
		s = s * 10 + (uint64_t)(*v - '0');
		any = 1;
	}
	if (!any || *v != '-')
		return -1;
	*start = s;
	*total = 0;
	v = strchr(v, '/');
	if (v == NULL || v[1] == '*')
		return 0;
	for (v++, any = 0; isdigit((unsigned char)*v); v++) {
		if (t > (UINT64_MAX - 9) / 10)
			return -1;
		t = t * 10 + (uint64_t)(*v - '0');
		any = 1;
	}
	if (!any)
		return -1;
	*total = t;
	return 0;
}

/* Drop what this call gave to the sink so the body can restart at byte 0. */
static int body_restart(struct xfer *x)
{
	const al_http_req *req = x->req;

	if (x->given == 0)
		return 0;
	if (req->sink != NULL) {
		int rc;

		if (req->sink->reset == NULL)
			return al_error_set(AL_EPROTO,
			                    "'%s' ignored the range request "
			                    "and the sink cannot restart",
			                    x->safe_url);
		rc = req->sink->reset(req->sink->ud);
		if (rc < 0)
			return rc;
	} else if (req->body_out != NULL && req->body_out->len > x->out_start) {
		req->body_out->len = x->out_start;
		if (req->body_out->ptr != NULL)
			req->body_out->ptr[x->out_start] = '\0';
	}
	x->given = 0;
	return 0;
}

/* The headers of a final (non-1xx) answer are complete: decide where the
 * body goes, and check a resumed answer. */
static int on_headers_done(struct xfer *x)
{
	al_http_resp *resp = x->resp;
	uint64_t start, total;

	if (is_redirect_status(x->status) && x->follow_allowed &&
	    al_http_resp_header(resp, "Location") != NULL) {
		x->follow = 1;
		return 0;
	}
	if (x->status / 100 != 2 || x->is_head)
		return 0;
	x->body_2xx = 1;
	if (x->range_from == 0)
		return 0;
	if (x->status == 206) {
		if (content_range_parse(
		        al_http_resp_header(resp, "Content-Range"), &start,
		        &total) != 0 ||
		    start != x->range_from ||
		    (x->req->resume_total > 0 && total > 0 &&
		     total != x->req->resume_total))
			return al_error_set(
			    AL_EPROTO,
			    "resuming '%s' at byte %llu: the server answered "
			    "Content-Range '%s'",
			    x->safe_url, (unsigned long long)x->range_from,
			    al_http_resp_header(resp, "Content-Range") != NULL
			        ? al_http_resp_header(resp, "Content-Range")
			        : "(none)");
		return 0;
	}
	/* A 200 to a range request is the whole body again. */
	al_log_debug(
	    "http: '%s' ignored the range request, restarting the body",
	    x->safe_url);
	return body_restart(x);
}

long al_http__status_code(const char *buf, size_t len)
{
	long code = 0;
	size_t i;

	if (len < 5 || memcmp(buf, "HTTP/", 5) != 0)
		return -1;
	for (i = 5; i < len && buf[i] != ' '; i++)
		;
	for (i++; i < len && isdigit((unsigned char)buf[i]) && code < 1000; i++)
		code = code * 10 + (buf[i] - '0');
	return code;
}

int al_http__split_header(const char *buf, size_t len, size_t *name_len,
                          size_t *value_off, size_t *value_len)
{
	const char *colon;
	size_t vs, i;

	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
		len--;
	if (len == 0)
		return AL_HTTP_HDR_END;
	if (buf[0] == ' ' || buf[0] == '\t')
		return AL_HTTP_HDR_SKIP; /* obsolete line folding: ignored */
	/* RFC 9110 5.5: CR, LF or NUL inside a field are grounds to reject
	 * the message; so is any other control: nothing built from a header
	 * value may smuggle a line into a later request or a message. */
	if (!al_http_value_ok(buf, len))
		return AL_HTTP_HDR_BAD;
	colon = memchr(buf, ':', len);
	if (colon == NULL)
		return AL_HTTP_HDR_SKIP;
	for (i = 0; buf + i < colon; i++) {
		if (buf[i] == ' ' || buf[i] == '\t')
			return AL_HTTP_HDR_SKIP; /* not a field name: ignored */
	}
	vs = (size_t)(colon - buf) + 1;
	while (vs < len && (buf[vs] == ' ' || buf[vs] == '\t'))
		vs++;
	while (len > vs && (buf[len - 1] == ' ' || buf[len - 1] == '\t'))
		len--;
	*name_len = (size_t)(colon - buf);
	*value_off = vs;
	*value_len = len - vs;
	return AL_HTTP_HDR_FIELD;
}

static size_t header_cb(char *buf, size_t size, size_t nitems, void *ud)
{
	struct xfer *x = ud;
	size_t n = size * nitems, nlen = 0, vs = 0, vlen = 0;
	long code;
	int rc;

	if (x->err != 0)
		return 0;
	code = al_http__status_code(buf, n);
	if (code >= 0) {
		headers_clear(x->resp);
		x->status = code;
		x->headers_done = 0;
	}
	/* counted over the whole attempt: an endless run of 1xx answers
	 * must not keep it alive either */
	x->hdr_bytes += n;
	if (x->hdr_bytes > HTTP_MAX_HEADER_BYTES) {
		x->err = al_error_set(AL_ELIMIT,
		                      "the response headers from '%s' exceed "
		                      "%d bytes",
		                      x->safe_url, HTTP_MAX_HEADER_BYTES);
		return 0;
	}
	rc = al_http__split_header(buf, n, &nlen, &vs, &vlen);
	if (code >= 0 || rc == AL_HTTP_HDR_SKIP)
		return n;
	if (rc == AL_HTTP_HDR_BAD) {
		x->err = al_error_set(AL_EPROTO,
		                      "a response header from '%s' contains a "
		                      "control character",
		                      x->safe_url);
		return 0;
	}
	if (rc == AL_HTTP_HDR_END) {
		if (x->status >= 100 && x->status < 200)
			return n;
		x->headers_done = 1;
		rc = on_headers_done(x);
		if (rc < 0) {
			x->err = rc;
			return 0;
		}
		return n;
	}
	rc = headers_add(x->resp, buf, nlen, buf + vs, vlen);
	if (rc == AL_ELIMIT) {
		x->err = al_error_set(AL_ELIMIT,
		                      "more than %d response headers from '%s'",
		                      HTTP_MAX_HEADERS, x->safe_url);
		return 0;
	}
	if (rc < 0) {
		x->err = al_error_set(
		    AL_ENOMEM, "out of memory storing the headers of '%s'",
		    x->safe_url);
		return 0;
	}
	return n;
}

static size_t write_cb(char *p, size_t size, size_t nmemb, void *ud)
{
	struct xfer *x = ud;
	const al_http_req *req = x->req;
	size_t n = size * nmemb;
	int rc;

	if (x->err != 0)
		return 0;
	if (x->follow || !x->body_2xx) {
		/* A hostile server must not keep a call alive with an
		 * endless error or redirect body. */
		x->side_bytes += n;
		if (x->side_bytes > HTTP_ERROR_BODY_LIMIT) {
			x->err = al_error_set(
			    AL_ELIMIT,
			    "the HTTP %ld answer from '%s' has a body larger "
			    "than %d bytes",
			    x->status, x->safe_url, HTTP_ERROR_BODY_LIMIT);
			return 0;
		}
	}
	if (x->follow)
		return n;
	if (!x->body_2xx) {
		al_buf *eb = &x->resp->error_body;
		size_t room = eb->max > eb->len ? eb->max - eb->len : 0;

		if (room > 0 && al_buf_append(eb, p, n < room ? n : room) < 0)
			al_error_clear(); /* the error body is best effort */
		return n;
	}
	if (req->sink != NULL) {
		rc = req->sink->write(req->sink->ud, (const uint8_t *)p, n);
		if (rc < 0) {
			x->err = rc;
			return 0;
		}
	} else if (req->body_out != NULL) {
		rc = al_buf_append(req->body_out, p, n);
		if (rc == AL_ELIMIT) {
			x->resp->body_overflow = 1;
			x->err = al_error_set(
			    AL_ELIMIT,
			    "the response body of '%s' exceeds %zu bytes",
			    x->safe_url, req->body_out->max);
			return 0;
		}
		if (rc < 0) {
			x->err = al_error_set(
			    rc, "cannot store the response body of '%s'",
			    x->safe_url);
			return 0;
		}
	}
	x->given += n;
	return n;
}

static size_t read_cb(char *p, size_t size, size_t nitems, void *ud)
{
	struct xfer *x = ud;
	const al_http_req *req = x->req;
	size_t cap = size * nitems, got = 0;
	int rc;

	if (x->err != 0)
		return CURL_READFUNC_ABORT;
	if (req->reader != NULL) {
		rc =
		    req->reader->read(req->reader->ud, (uint8_t *)p, cap, &got);
		if (rc < 0) {
			x->err = rc;
			return CURL_READFUNC_ABORT;
		}
		if (got > cap) {
			x->err = al_error_set(
			    AL_EINVAL,
			    "request body reader for '%s' overran its buffer",
			    x->safe_url);
			return CURL_READFUNC_ABORT;
		}
		x->sent += got;
		return got;
	}
	if (req->body == NULL || x->body_pos >= req->body_len)
		return 0;
	got = req->body_len - x->body_pos;
	if (got > cap)
		got = cap;
	memcpy(p, req->body + x->body_pos, got);
	x->body_pos += got;
	return got;
}

static int xferinfo_cb(void *ud, curl_off_t dltotal, curl_off_t dlnow,
                       curl_off_t ultotal, curl_off_t ulnow)
{
	struct xfer *x = ud;

	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	if (al_cancel_is_set(x->h->cancel)) {
		x->canceled = 1;
		return 1;
	}
	return 0;
}

/* Bytes moved so far in this transfer (headers and body, both ways). */
static uint64_t transfer_progress(CURL *e)
{
	curl_off_t dl = 0, ul = 0;
	long hdr = 0;

	curl_easy_getinfo(e, CURLINFO_SIZE_DOWNLOAD_T, &dl);
	curl_easy_getinfo(e, CURLINFO_SIZE_UPLOAD_T, &ul);
	curl_easy_getinfo(e, CURLINFO_HEADER_SIZE, &hdr);
	return (uint64_t)(dl > 0 ? dl : 0) + (uint64_t)(ul > 0 ? ul : 0) +
	       (uint64_t)(hdr > 0 ? hdr : 0);
}

/* Set h->errbuf (curl's error text slot) to a message of ours. */
static void set_errbuf(al_http *h, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void set_errbuf(al_http *h, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(h->errbuf, sizeof(h->errbuf), fmt, ap);
	va_end(ap);
	if (n < 0)
		h->errbuf[0] = '\0';
}

/* Run the easy handle to completion on the multi handle, polling for
 * cancellation every HTTP_POLL_MS. Aborted here (docs/http.md "Bounds"):
 * a transfer that moves no byte for low_speed_ms (curl's own low-speed
 * check averages over a 5 s window and reacts several seconds late); one
 * that moves less than the minimum rate over a window of low_speed_ms once
 * bytes flow (a drip keeps a stall check happy forever); a document
 * attempt past doc_ms; a non-2xx or redirect body not done doc_ms after
 * its headers. */
static CURLcode run_transfer(al_http *h, struct xfer *x)
{
	CURLcode res = CURLE_FAILED_INIT;
	CURLMsg *msg;
	int running = 1, left;
	uint64_t moved = 0, now, start = al_clock_now_ms(), last_move = start,
	         cur;
	uint64_t win_start = 0, win_bytes = 0, win_min;
	uint64_t real_move = al__real_now_ms();
	al_deadline attempt_end =
	    h->request_ms != 0
	        ? al_deadline_min(x->deadline, al_deadline_in(h->request_ms))
	        : x->deadline;

	win_min = h->min_speed_bps > UINT64_MAX / h->low_speed_ms
	              ? UINT64_MAX / 1000
	              : h->min_speed_bps * h->low_speed_ms / 1000;
	x->own_timeout = 0;

	if (curl_multi_add_handle(h->multi, h->easy) != CURLM_OK)
		return CURLE_FAILED_INIT;
	for (;;) {
		if (curl_multi_perform(h->multi, &running) != CURLM_OK)
			break;
		if (running == 0)
			break;
		if (al_cancel_is_set(h->cancel)) {
			x->canceled = 1;
			res = CURLE_ABORTED_BY_CALLBACK;
			break;
		}
		now = al_clock_now_ms();
		cur = transfer_progress(h->easy);
		if (!al__clock_is_system()) {
			/* curl's timer is real time: on another clock the
			 * deadline is ours to enforce, and on the virtual one
			 * a hang reaches it (docs/testing.md) */
			if (cur != moved)
				real_move = al__real_now_ms();
			al__clock_idle(al__real_now_ms() - real_move,
			               attempt_end);
			if (al_deadline_expired(attempt_end)) {
				set_errbuf(h, "timed out after %llu ms",
				           (unsigned long long)(now - start));
				res = CURLE_OPERATION_TIMEDOUT;
				break;
			}
		}
		if (cur != moved) {
			moved = cur;
			last_move = now;
		} else if (now - last_move >= h->low_speed_ms) {
			set_errbuf(h, "stalled: no data for %llu ms",
			           (unsigned long long)(now - last_move));
			res = CURLE_OPERATION_TIMEDOUT;
			x->own_timeout = 1;
			break;
		}
		if (win_start == 0 && cur > 0) {
			win_start = now;
			win_bytes = cur;
		} else if (win_start != 0 &&
		           now - win_start >= h->low_speed_ms) {
			if (cur - win_bytes < win_min) {
				set_errbuf(
				    h,
				    "too slow: %llu bytes in %llu ms "
				    "(the minimum is %llu bytes/s)",
				    (unsigned long long)(cur - win_bytes),
				    (unsigned long long)(now - win_start),
				    (unsigned long long)h->min_speed_bps);
				res = CURLE_OPERATION_TIMEDOUT;
				x->own_timeout = 1;
				break;
			}
			win_start = now;
			win_bytes = cur;
		}
		if (x->doc && now - start >= h->doc_ms) {
			set_errbuf(h,
			           "the answer did not complete within %llu ms",
			           (unsigned long long)h->doc_ms);
			res = CURLE_OPERATION_TIMEDOUT;
			x->own_timeout = 1;
			break;
		}
		if (x->headers_done && !x->body_2xx && !x->is_head) {
			if (x->side_end_ms == 0)
				x->side_end_ms = now + h->doc_ms;
			else if (now >= x->side_end_ms) {
				set_errbuf(
				    h,
				    "the body of the HTTP %ld answer did "
				    "not complete within %llu ms",
				    x->status, (unsigned long long)h->doc_ms);
				res = CURLE_OPERATION_TIMEDOUT;
				x->own_timeout = 1;
				break;
			}
		}
		if (curl_multi_poll(h->multi, NULL, 0, HTTP_POLL_MS, NULL) !=
		    CURLM_OK)
			break;
	}
	while ((msg = curl_multi_info_read(h->multi, &left)) != NULL) {
		if (msg->msg == CURLMSG_DONE && msg->easy_handle == h->easy)
			res = msg->data.result;
	}
	curl_multi_remove_handle(h->multi, h->easy);
	return res;
}

static struct curl_slist *build_headers(const struct xfer *x, int drop_auth)
{
	struct curl_slist *list = NULL, *tmp;
	const char *const *hp;
	char range[64];
	int have_expect = 0, n;

	for (hp = x->req->headers; hp != NULL && *hp != NULL; hp++) {
		if (drop_auth && header_is(*hp, "Authorization"))
			continue;
		if (x->range_from > 0 && header_is(*hp, "Range"))
			continue;
		if (header_is(*hp, "Expect"))
			have_expect = 1;
		tmp = curl_slist_append(list, *hp);
		if (tmp == NULL)
			goto fail;
		list = tmp;
	}
	/* "Expect: 100-continue" costs a round trip (1 s on some servers). */
	if (!have_expect) {
		tmp = curl_slist_append(list, "Expect:");
		if (tmp == NULL)
			goto fail;
		list = tmp;
	}
	if (x->range_from > 0) {
		n = snprintf(range, sizeof(range), "Range: bytes=%llu-",
		             (unsigned long long)x->range_from);
		if (n < 0 || (size_t)n >= sizeof(range))
			goto fail;
		tmp = curl_slist_append(list, range);
		if (tmp == NULL)
			goto fail;
		list = tmp;
	}
	return list;
fail:
	curl_slist_free_all(list);
	return NULL;
}

static int ca_build(al_http *h);

/* Set every option for one attempt on a freshly reset easy handle. */
static int setup_attempt(al_http *h, struct xfer *x, const char *url,
                         const char *method, struct curl_slist *hdrs)
{
	const al_http_req *req = x->req;
	CURL *e = h->easy;
	/* On a clock other than the system's, the deadline and the request's
	 * time are ours to enforce (run_transfer): curl's timer is real. */
	uint64_t remaining = al__clock_is_system()
	                         ? al_deadline_remaining_ms(x->deadline)
	                         : UINT64_MAX;
	uint64_t total = h->request_ms != 0 && al__clock_is_system()
	                     ? min_u64(h->request_ms, remaining)
	                     : remaining;
	uint64_t connect = min_u64(h->connect_ms, remaining);

	x->capped = remaining != UINT64_MAX && total == remaining;
	/* curl's own check is only a backstop, 5 s behind ours (see
	 * run_transfer), so a stall is reported with our message. */
	uint64_t low = (h->low_speed_ms + 999) / 1000 + 5;
	int bad = 0, rc, verify;

	curl_easy_reset(e);
	h->errbuf[0] = '\0';
	bad |= curl_easy_setopt(e, CURLOPT_URL, url) != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_ERRORBUFFER, h->errbuf) != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L) != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https") !=
	       CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L) != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L) != CURLE_OK;
	/* A proxy's "200 Connection established" is not the answer. */
	bad |= curl_easy_setopt(e, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1L) !=
	       CURLE_OK;
	bad |=
	    curl_easy_setopt(e, CURLOPT_USERAGENT, h->user_agent) != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_HTTPHEADER, hdrs) != CURLE_OK;
	bad |=
	    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, header_cb) != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_HEADERDATA, x) != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, write_cb) != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_WRITEDATA, x) != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L) != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, xferinfo_cb) !=
	       CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_XFERINFODATA, x) != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
	                        ms_to_long(connect != 0 ? connect : 1)) !=
	       CURLE_OK;
	if (total != UINT64_MAX)
		bad |= curl_easy_setopt(e, CURLOPT_TIMEOUT_MS,
		                        ms_to_long(total != 0 ? total : 1)) !=
		       CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L) != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME,
	                        ms_to_long(low != 0 ? low : 1)) != CURLE_OK;
	/* The trusted CAs, for https with verification only: a plain-http
	 * request, or one that checks no certificate (--tls-verify=false,
	 * an insecure host), has no use for them, and a blob of a whole
	 * $SSL_CERT_DIR costs every request that is given it. */
	verify = strncasecmp(url, "https://", 8) == 0 && !h->tls_verify_off &&
	         !host_is_insecure(h, url);
	if (!verify) {
		/* nothing */
	} else if (h->ca_pending && (rc = ca_build(h)) < 0) {
		return rc;
	} else if (h->ca != NULL) {
		struct curl_blob blob = {h->ca->bytes, h->ca->len,
		                         CURL_BLOB_NOCOPY};

		bad |=
		    curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &blob) != CURLE_OK;
	} else if (h->ca_file != NULL) {
		bad |=
		    curl_easy_setopt(e, CURLOPT_CAINFO, h->ca_file) != CURLE_OK;
	} else if (h->ca_system_dir) {
		bad |= curl_easy_setopt(e, CURLOPT_CAINFO, NULL) != CURLE_OK;
	}
	if (h->ca_path != NULL && verify)
		bad |=
		    curl_easy_setopt(e, CURLOPT_CAPATH, h->ca_path) != CURLE_OK;
	if (h->client_cert != NULL) {
		bad |= curl_easy_setopt(e, CURLOPT_SSLCERT, h->client_cert) !=
		       CURLE_OK;
		bad |= curl_easy_setopt(e, CURLOPT_SSLKEY, h->client_key) !=
		       CURLE_OK;
	}
	if (h->proxy != NULL)
		bad |= curl_easy_setopt(e, CURLOPT_PROXY, h->proxy) != CURLE_OK;
	if (h->no_proxy != NULL)
		bad |= curl_easy_setopt(e, CURLOPT_NOPROXY, h->no_proxy) !=
		       CURLE_OK;
	if (!verify && strncasecmp(url, "https://", 8) == 0) {
		bad |=
		    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L) != CURLE_OK;
		bad |=
		    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L) != CURLE_OK;
	}
	if (strcmp(method, "HEAD") == 0) {
		bad |= curl_easy_setopt(e, CURLOPT_NOBODY, 1L) != CURLE_OK;
	} else if (x->send_body) {
		curl_off_t size;

		if (req->reader != NULL)
			size = req->body_size >= 0 ? (curl_off_t)req->body_size
			                           : -1;
		else
			size = (curl_off_t)req->body_len;
		/* UPLOAD sends "Content-Length: 0" for an empty body, which
		 * docker-registry needs, and never a form Content-Type. */
		bad |= curl_easy_setopt(e, CURLOPT_UPLOAD, 1L) != CURLE_OK;
		bad |= curl_easy_setopt(e, CURLOPT_READFUNCTION, read_cb) !=
		       CURLE_OK;
		bad |= curl_easy_setopt(e, CURLOPT_READDATA, x) != CURLE_OK;
		bad |= curl_easy_setopt(e, CURLOPT_INFILESIZE_LARGE, size) !=
		       CURLE_OK;
		if (strcmp(method, "PUT") != 0)
			bad |= curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST,
			                        method) != CURLE_OK;
	} else if (strcmp(method, "GET") == 0) {
		bad |= curl_easy_setopt(e, CURLOPT_HTTPGET, 1L) != CURLE_OK;
	} else {
		bad |= curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method) !=
		       CURLE_OK;
	}
	if (bad)
		return al_error_set(AL_EINVAL,
		                    "cannot set up the request %s '%s'", method,
		                    x->safe_url);
	return 0;
}

/* Map a curl failure to an al_status; *retry says whether another attempt
 * may succeed. */
static int classify(CURLcode res, int *retry)
{
	*retry = 0;
	switch (res) {
	case CURLE_OPERATION_TIMEDOUT:
		*retry = 1;
		return AL_ETIMEOUT;
	case CURLE_COULDNT_CONNECT:
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
	/* A reused connection died under an upload and curl, which cannot
	 * rewind our read callback itself, gave up: a fresh attempt resends
	 * the body from byte 0 (or is refused above for a reader without
	 * rewind). */
	case CURLE_SEND_FAIL_REWIND:
	/* URLs and redirect targets are checked to be http(s) before curl
	 * sees them, so this is a garbled answer ("Received HTTP/0.9 when
	 * not allowed", e.g. bytes left over by a wrong Content-Length on a
	 * reused connection): a network fault, not a usage error. */
	case CURLE_UNSUPPORTED_PROTOCOL:
		*retry = 1;
		return AL_ENET;
	case CURLE_URL_MALFORMAT:
		return AL_EINVAL;
	case CURLE_OUT_OF_MEMORY:
		return AL_ENOMEM;
	default:
		return AL_ENET;
	}
}

/* The delay before retry number retry (0-based): Retry-After when the
 * answer has one, else exponential backoff with full jitter. */
static uint64_t retry_delay(const al_http *h, const al_http_resp *resp,
                            unsigned retry, int use_header)
{
	const char *ra =
	    use_header ? al_http_resp_header(resp, "Retry-After") : NULL;
	uint64_t ms;

	if (ra != NULL && al_http_parse_retry_after(ra, &ms) == 0)
		return min_u64(ms, h->backoff_max_ms);
	al_error_clear();
	return al_backoff_ms(retry, h->backoff_base_ms, h->backoff_max_ms);
}

/* One al_http_do call: what its attempts share. */
struct call {
	al_http *h;
	const al_http_req *req;
	al_http_resp *resp;
	struct xfer x;
	char *url;          /* this attempt's URL (a redirect's target) */
	const char *method; /* this attempt's method (a 303 makes it GET) */
	int orig_send_body; /* the request as the caller made it sends one */
	int drop_auth;      /* a redirect left the original origin */
	unsigned retries, redirects;
};

static const char *req_method(const al_http_req *req)
{
	return req->method != NULL && req->method[0] != '\0' ? req->method
	                                                     : "GET";
}

/* The body was partly sent and cannot be sent again from byte 0. */
static int cannot_resend(const struct call *c)
{
	return c->x.send_body && c->req->reader != NULL && c->x.sent > 0 &&
	       c->req->reader->rewind == NULL;
}

/* Check the request and set up what every attempt shares. */
static int call_start(struct call *c, al_http *h, const al_http_req *req,
                      al_http_resp *resp)
{
	struct xfer *x = &c->x;
	const char *const *hp;

	memset(c, 0, sizeof(*c));
	c->h = h;
	c->req = req;
	c->resp = resp;
	x->h = h;
	x->req = req;
	x->resp = resp;
	x->out_start = req->body_out != NULL ? req->body_out->len : 0;
	/* the sink holds resume_from bytes already: the first attempt asks
	 * for the rest */
	if (req->resumable && req->sink != NULL)
		x->given = req->resume_from;
	c->method = req_method(req);
	c->orig_send_body = req->reader != NULL || req->body != NULL ||
	                    strcmp(c->method, "PUT") == 0 ||
	                    strcmp(c->method, "POST") == 0 ||
	                    strcmp(c->method, "PATCH") == 0;
	x->send_body = c->orig_send_body;
	if ((c->url = al_strdup(req->url)) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory copying a URL");
	url_redact(c->url, x->safe_url, sizeof(x->safe_url));
	if (!url_is_http(c->url))
		return al_error_set(AL_EINVAL, "not an http(s) URL: '%s'",
		                    x->safe_url);
	if (url_has_ctl(c->url))
		return al_error_set(
		    AL_EINVAL,
		    "refusing the URL '%s': it contains a control "
		    "character or a space",
		    x->safe_url);
	for (hp = req->headers; hp != NULL && *hp != NULL; hp++) {
		/* a value built from server data (a token, a Location) must
		 * not add a line to the request */
		if (!al_http_value_ok(*hp, strlen(*hp)))
			return al_error_set(AL_EINVAL,
			                    "refusing to send a request header "
			                    "with a control character to '%s'",
			                    x->safe_url);
	}
	/* Documents are bounded in time, all attempts included. */
	x->doc = req->sink == NULL && req->reader == NULL;
	x->deadline = req->deadline;
	if (x->doc)
		x->deadline = al_deadline_min(
		    x->deadline,
		    al_deadline_in(h->doc_ms * ((uint64_t)h->max_retries + 1)));
	return 0;
}

/* Before an attempt: still wanted and in time, the request body back at
 * byte 0 (resend), the attempt's answer state reset. */
static int attempt_start(struct call *c)
{
	struct xfer *x = &c->x;
	const al_http_req *req = c->req;
	int rc;

	if (al_cancel_is_set(c->h->cancel))
		return al_error_set(AL_ECANCELED, "%s '%s' cancelled",
		                    c->method, x->safe_url);
	if (al_deadline_expired(x->deadline))
		return al_error_set(
		    AL_ETIMEOUT,
		    "deadline exceeded for %s '%s' after %u attempt(s)",
		    c->method, x->safe_url, c->resp->attempts);
	/* A fresh attempt: a request body starts again at byte 0. */
	if (x->send_body && req->reader != NULL && x->sent > 0) {
		if (req->reader->rewind == NULL)
			return al_error_set(
			    AL_EINVAL,
			    "cannot send the body of %s '%s' again: "
			    "the reader has no rewind",
			    c->method, x->safe_url);
		if ((rc = req->reader->rewind(req->reader->ud)) < 0)
			return rc;
		x->sent = 0;
	}
	x->body_pos = 0;
	x->status = 0;
	x->headers_done = 0;
	x->body_2xx = 0;
	x->follow = 0;
	x->follow_allowed = !req->no_redirect;
	x->is_head = strcmp(c->method, "HEAD") == 0;
	x->hdr_bytes = 0;
	x->side_bytes = 0;
	x->side_end_ms = 0;
	x->range_from = req->resumable ? x->given : 0;
	if (c->h->no_plain_auth && !c->drop_auth && has_auth(req) &&
	    url_is_plain(c->url) && !al_http_plain_allowed(c->h, c->url))
		return al_error_set(AL_EPROTO,
		                    "refusing to send credentials over "
		                    "plain http to '%s' (not an insecure "
		                    "host)",
		                    x->safe_url);
	return 0;
}

/* An attempt a callback ended: cancelled, or its error. */
static int attempt_aborted(struct call *c, CURLcode res, long status)
{
	struct xfer *x = &c->x;

	if (x->canceled || (res == CURLE_ABORTED_BY_CALLBACK && x->err == 0)) {
		al_log_debug("http: %s %s cancelled (attempt %u)", c->method,
		             x->safe_url, c->resp->attempts);
		return al_error_set(AL_ECANCELED, "%s '%s' cancelled",
		                    c->method, x->safe_url);
	}
	if (x->err != 0) {
		al_log_debug("http: %s %s -> %ld (attempt %u): %s", c->method,
		             x->safe_url, status, c->resp->attempts,
		             al_error_message());
		return x->err;
	}
	return 0;
}

/*
 * The redirect decision for an answer the transfer marked to follow: 1
 * followed (c->url, method and credentials set for the next attempt), 0
 * not followed (the answer is final: no Location, or a body that cannot
 * be sent again), negative refused (too many, not http(s), a downgrade
 * to plain http with credentials).
 */
static int redirect_follow(struct call *c, long status)
{
	struct xfer *x = &c->x;
	const al_http_req *req = c->req;
	char *loc = NULL;

	if (curl_easy_getinfo(c->h->easy, CURLINFO_REDIRECT_URL, &loc) !=
	        CURLE_OK ||
	    loc == NULL)
		return 0;
	if (c->redirects >= HTTP_MAX_REDIRECTS)
		return al_error_set(AL_EPROTO,
		                    "too many redirects (more than %d) "
		                    "from '%s'",
		                    HTTP_MAX_REDIRECTS, x->safe_url);
	if (!url_is_http(loc) || url_has_ctl(loc)) {
		al_error_clear();
		return al_error_set(AL_EPROTO,
		                    "'%s' redirects to a non-http(s) URL",
		                    x->safe_url);
	}
	/* https -> http on the same host and port with credentials: a
	 * downgrade, refused (dropping them would hide the attack). */
	if (!c->drop_auth && has_auth(req) && url_is_plain(loc) &&
	    !url_is_plain(c->url) &&
	    al_http_origin_compare(req->url, loc) == AL_HTTP_ORIGIN_SCHEME &&
	    !al_http_plain_allowed(c->h, loc)) {
		char safe_loc[HTTP_SAFE_URL_MAX];

		url_redact(loc, safe_loc, sizeof(safe_loc));
		return al_error_set(AL_EPROTO,
		                    "'%s' redirects to plain http on "
		                    "the same host and port ('%s'): "
		                    "refusing to send credentials in "
		                    "clear text",
		                    x->safe_url, safe_loc);
	}
	al_log_debug("http: %s %s -> %ld (attempt %u), redirect %u", c->method,
	             x->safe_url, status, c->resp->attempts, c->redirects + 1);
	if ((status == 303 && !x->is_head) ||
	    ((status == 301 || status == 302) &&
	     strcmp(c->method, "POST") == 0)) {
		c->method = "GET";
		x->send_body = 0;
	}
	if (cannot_resend(c)) {
		al_log_debug("http: %s %s -> %ld: cannot send the body "
		             "again, not following",
		             c->method, x->safe_url, status);
		return 0;
	}
	/* Credentials never follow a redirect that leaves the original
	 * scheme, host or port (signed storage URLs). */
	if (!c->drop_auth && !same_origin(req->url, loc))
		c->drop_auth = 1;
	free(c->url);
	if ((c->url = al_strdup(loc)) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory copying a URL");
	c->redirects++;
	if (c->drop_auth)
		al_log_debug("http: redirect left the original origin, "
		             "Authorization dropped");
	url_redact(c->url, x->safe_url, sizeof(x->safe_url));
	return 1;
}

/* The retry decision for an answer (status): 1 ask again after *delay,
 * 0 the answer is final (not retryable, no retries or time left, a body
 * that cannot be sent again). */
static int status_retry(struct call *c, long status, uint64_t *delay)
{
	struct xfer *x = &c->x;

	if (!is_retryable_status(status) || c->retries >= c->h->max_retries ||
	    cannot_resend(c))
		return 0;
	*delay = retry_delay(c->h, c->resp, c->retries, 1);
	if (*delay >= al_deadline_remaining_ms(x->deadline)) {
		al_log_debug("http: %s %s -> %ld (attempt %u), no time left "
		             "to retry",
		             c->method, x->safe_url, status, c->resp->attempts);
		return 0;
	}
	al_log_debug("http: %s %s -> %ld (attempt %u), retrying in %llu ms",
	             c->method, x->safe_url, status, c->resp->attempts,
	             (unsigned long long)*delay);
	return 1;
}

/* The retry decision for a transfer that failed (res): 1 try again after
 * *delay (a received body restarted when it cannot resume), negative the
 * failure is final (its message set). */
static int failure_retry(struct call *c, CURLcode res, uint64_t *delay)
{
	struct xfer *x = &c->x;
	const al_http_req *req = c->req;
	const char *errtext =
	    c->h->errbuf[0] != '\0' ? c->h->errbuf : curl_easy_strerror(res);
	int retry, code, rc;

	code = classify(res, &retry);
	/* curl's timer may fire a few ms before ours: a curl timeout set from
	 * the deadline's rest is the deadline, once that rest is (nearly)
	 * spent. A connect timeout (connect_ms) that fires with time left is
	 * an attempt that failed, retried as any other. */
	if (code == AL_ETIMEOUT &&
	    (al_deadline_expired(x->deadline) ||
	     (x->capped && !x->own_timeout &&
	      al_deadline_remaining_ms(x->deadline) <= HTTP_CAPPED_SLACK_MS))) {
		al_log_debug("http: %s %s failed (attempt %u): %s, deadline "
		             "exceeded",
		             c->method, x->safe_url, c->resp->attempts,
		             errtext);
		return al_error_set(AL_ETIMEOUT,
		                    "deadline exceeded for %s '%s' after %u "
		                    "attempt(s): %s",
		                    c->method, x->safe_url, c->resp->attempts,
		                    errtext);
	}
	if (c->retries >= c->h->max_retries || cannot_resend(c))
		retry = 0;
	/* a body partly given to a sink that cannot start again */
	if (x->given > 0 && !req->resumable && req->sink != NULL &&
	    req->sink->reset == NULL)
		retry = 0;
	*delay = retry ? retry_delay(c->h, c->resp, c->retries, 0) : 0;
	if (retry && *delay >= al_deadline_remaining_ms(x->deadline))
		/* Another attempt was due but the deadline leaves no time
		 * for it: the deadline is what ended the request. */
		return al_error_set(code,
		                    "deadline exceeded for %s '%s' after %u "
		                    "attempt(s), no time left to retry: %s",
		                    c->method, x->safe_url, c->resp->attempts,
		                    errtext);
	if (!retry) {
		al_log_debug("http: %s %s failed (attempt %u): %s", c->method,
		             x->safe_url, c->resp->attempts, errtext);
		return al_error_set(
		    code, "%s '%s' failed after %u attempt(s): %s%s", c->method,
		    x->safe_url, c->resp->attempts,
		    code == AL_ETIMEOUT ? "timed out: " : "", errtext);
	}
	al_log_debug("http: %s %s failed (attempt %u): %s, retrying in %llu "
	             "ms",
	             c->method, x->safe_url, c->resp->attempts, errtext,
	             (unsigned long long)*delay);
	if (x->given > 0 && !req->resumable && (rc = body_restart(x)) < 0)
		return rc;
	return 1;
}

/* Wait before the next attempt, which asks the original URL again: a
 * redirect target may be a signed URL that has expired meanwhile. */
static int retry_wait(struct call *c, uint64_t delay)
{
	struct xfer *x = &c->x;

	if (al_sleep_ms(delay, c->h->cancel) != 0)
		return al_error_set(AL_ECANCELED, "%s '%s' cancelled",
		                    c->method, x->safe_url);
	c->retries++;
	if (c->redirects == 0)
		return 0;
	free(c->url);
	if ((c->url = al_strdup(c->req->url)) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory copying a URL");
	url_redact(c->url, x->safe_url, sizeof(x->safe_url));
	c->method = req_method(c->req);
	x->send_body = c->orig_send_body;
	c->drop_auth = 0;
	c->redirects = 0;
	return 0;
}

int al_http_do(al_http *h, const al_http_req *req, al_http_resp *resp)
{
	struct call c;
	struct curl_slist *hdrs = NULL;
	CURLcode res;
	long status = 0;
	uint64_t delay;
	int rc;

	if (resp == NULL)
		return al_error_set(AL_EINVAL, "al_http_do: no response");
	al_http_resp_clear(resp);
	if (h == NULL || req == NULL || req->url == NULL)
		return al_error_set(AL_EINVAL,
		                    "al_http_do: no client, request or URL");
	if ((rc = call_start(&c, h, req, resp)) < 0)
		goto out;
	for (;;) {
		if ((rc = attempt_start(&c)) < 0)
			goto out;
		headers_clear(resp);
		al_buf_reset(&resp->error_body);
		curl_slist_free_all(hdrs);
		if ((hdrs = build_headers(&c.x, c.drop_auth)) == NULL) {
			rc = al_error_set(
			    AL_ENOMEM,
			    "out of memory building the headers of '%s'",
			    c.x.safe_url);
			goto out;
		}
		if ((rc = setup_attempt(h, &c.x, c.url, c.method, hdrs)) < 0)
			goto out;
		resp->attempts++;
		res = run_transfer(h, &c.x);
		status = 0;
		curl_easy_getinfo(h->easy, CURLINFO_RESPONSE_CODE, &status);
		if ((rc = attempt_aborted(&c, res, status)) < 0)
			goto out;
		if (res == CURLE_OK && c.x.follow) {
			if ((rc = redirect_follow(&c, status)) < 0)
				goto out;
			if (rc == 1)
				continue;
			break;
		}
		delay = 0;
		rc = res == CURLE_OK ? status_retry(&c, status, &delay)
		                     : failure_retry(&c, res, &delay);
		if (rc < 0)
			goto out;
		if (rc == 0)
			break;
		if ((rc = retry_wait(&c, delay)) < 0)
			goto out;
	}
	al_log_debug("http: %s %s -> %ld (attempt %u)", c.method, c.x.safe_url,
	             status, resp->attempts);
	resp->status = status;
	resp->effective_url = c.url;
	c.url = NULL;
	rc = 0;
out:
	resp->body_bytes = c.x.given;
	curl_slist_free_all(hdrs);
	free(c.url);
	return rc;
}

void al_http_resp_clear(al_http_resp *resp)
{
	if (resp == NULL)
		return;
	headers_clear(resp);
	free(resp->effective_url);
	resp->effective_url = NULL;
	al_buf_free(&resp->error_body);
	if (resp->error_body.max == 0)
		resp->error_body.max = HTTP_ERROR_BODY_MAX;
	resp->status = 0;
	resp->body_overflow = 0;
	resp->body_bytes = 0;
	resp->attempts = 0;
}

const char *al_http_resp_header(const al_http_resp *resp, const char *name)
{
	size_t i;

	if (resp == NULL || name == NULL)
		return NULL;
	for (i = resp->nhdr; i > 0; i--) {
		if (strcasecmp(resp->hdr_names[i - 1], name) == 0)
			return resp->hdr_values[i - 1];
	}
	return NULL;
}

/* Seconds since the epoch of a broken-down UTC time (no timegm in C11). */
static int64_t utc_seconds(int year, int mon, int mday, int hour, int min,
                           int sec)
{
	static const int cum[12] = {0,   31,  59,  90,  120, 151,
	                            181, 212, 243, 273, 304, 334};
	int64_t y = year, days;

	days = (y - 1970) * 365 + ((y - 1969) / 4) - ((y - 1901) / 100) +
	       ((y - 1601) / 400);
	days += cum[mon];
	if (mon > 1 && ((year % 4 == 0 && year % 100 != 0) || year % 400 == 0))
		days++;
	days += mday - 1;
	return ((days * 24 + hour) * 60 + min) * 60 + sec;
}

static int month_index(const char *s)
{
	static const char *const names[12] = {"Jan", "Feb", "Mar", "Apr",
	                                      "May", "Jun", "Jul", "Aug",
	                                      "Sep", "Oct", "Nov", "Dec"};
	int i;

	for (i = 0; i < 12; i++) {
		if (strncmp(s, names[i], 3) == 0)
			return i;
	}
	return -1;
}

/* Parse the three HTTP-date forms of RFC 9110 section 5.6.7 into seconds
 * since the epoch. */
static int parse_http_date(const char *v, int64_t *out)
{
	char wk[16], mon[4], zone[4];
	int d, y, hh, mm, ss, m, consumed = 0;

	/* IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT */
	if (sscanf(v, "%15[A-Za-z], %2d %3s %4d %2d:%2d:%2d %3s%n", wk, &d, mon,
	           &y, &hh, &mm, &ss, zone, &consumed) == 8 &&
	    strlen(wk) == 3) {
		/* fall through to the checks below */
	} else if (sscanf(v, "%15[A-Za-z], %2d-%3s-%2d %2d:%2d:%2d %3s%n", wk,
	                  &d, mon, &y, &hh, &mm, &ss, zone, &consumed) == 8) {
		/* RFC 850: Sunday, 06-Nov-94 08:49:37 GMT */
		y += y < 70 ? 2000 : 1900;
	} else if (sscanf(v, "%3s %3s %2d %2d:%2d:%2d %4d%n", wk, mon, &d, &hh,
	                  &mm, &ss, &y, &consumed) == 7) {
		/* asctime: Sun Nov  6 08:49:37 1994 */
		memcpy(zone, "GMT", 4);
	} else {
		return -1;
	}
	while (v[consumed] == ' ' || v[consumed] == '\t')
		consumed++;
	m = month_index(mon);
	if (v[consumed] != '\0' || strcmp(zone, "GMT") != 0 || m < 0 || d < 1 ||
	    d > 31 || y < 1970 || y > 9999 || hh > 23 || mm > 59 || ss > 60 ||
	    hh < 0 || mm < 0 || ss < 0)
		return -1;
	*out = utc_seconds(y, m, d, hh, mm, ss);
	return 0;
}

int al_http_parse_retry_after(const char *value, uint64_t *ms)
{
	const char *p = value;
	uint64_t secs = 0;
	int64_t when, now;

	if (value == NULL)
		return al_error_set(AL_EPARSE, "empty Retry-After");
	while (*p == ' ' || *p == '\t')
		p++;
	if (isdigit((unsigned char)*p)) {
		for (; isdigit((unsigned char)*p); p++) {
			if (secs < UINT64_MAX / 10000)
				secs = secs * 10 + (uint64_t)(*p - '0');
		}
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p != '\0')
			return al_error_set(
			    AL_EPARSE, "invalid Retry-After '%.64s'", value);
		*ms = secs >= UINT64_MAX / 10000 ? UINT64_MAX : secs * 1000;
		return 0;
	}
	if (parse_http_date(p, &when) != 0)
		return al_error_set(AL_EPARSE, "invalid Retry-After '%.64s'",
		                    value);
	now = (int64_t)(al_clock_wall_ms() / 1000);
	*ms = when > now ? (uint64_t)(when - now) * 1000 : 0;
	return 0;
}

/* Copy the strings of opts into h; 0 or AL_ENOMEM (no message). */
static int copy_opts(al_http *h, const al_http_opts *opts)
{
	size_t n = 0, i;

	if ((opts->ca_file != NULL &&
	     (h->ca_file = al_strdup(opts->ca_file)) == NULL) ||
	    (opts->client_cert != NULL &&
	     (h->client_cert = al_strdup(opts->client_cert)) == NULL) ||
	    (opts->client_key != NULL &&
	     (h->client_key = al_strdup(opts->client_key)) == NULL) ||
	    (opts->proxy != NULL &&
	     (h->proxy = al_strdup(opts->proxy)) == NULL) ||
	    (opts->no_proxy != NULL &&
	     (h->no_proxy = al_strdup(opts->no_proxy)) == NULL))
		return AL_ENOMEM;
	h->user_agent =
	    al_strdup(opts->user_agent != NULL ? opts->user_agent
	                                       : "airlock/" AL_VERSION_STRING);
	if (h->user_agent == NULL)
		return AL_ENOMEM;
	if (opts->insecure_hosts == NULL)
		return 0;
	while (opts->insecure_hosts[n] != NULL)
		n++;
	h->insecure = calloc(n + 1, sizeof(*h->insecure));
	if (h->insecure == NULL)
		return AL_ENOMEM;
	for (i = 0; i < n; i++) {
		h->insecure[i] = al_strdup(opts->insecure_hosts[i]);
		if (h->insecure[i] == NULL)
			return AL_ENOMEM;
	}
	return 0;
}

/* 1 when the system's CAs can be curl's default CA directory alone: no
 * bundle named (ca_file, $SSL_CERT_FILE), no $SSL_CERT_DIR, and curl has a
 * default directory that exists (ca_setup). */
static int system_ca_dir(al_http *h)
{
	char *dir = NULL;
	struct stat st;

	if (h->ca_file != NULL || h->ca_path != NULL)
		return 0;
	if (curl_easy_getinfo(h->easy, CURLINFO_CAPATH, &dir) != CURLE_OK ||
	    dir == NULL || dir[0] == '\0')
		return 0;
	return stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
}

/*
 * The CA blob ca_setup last assembled, kept for the process. Each worker of
 * a transfer has a client of its own per registry, and each would read the
 * bundle and every $SSL_CERT_DIR file again: an unchanged rerun of a
 * 151-image release (11 clients) opened the 140 files of /etc/ssl/certs
 * 1,540 times. The key is what the blob is made of: the bundle's path, the
 * directories and the caller's own PEM bytes (al_http_opts.ca_pem).
 */
static pthread_mutex_t ca_cache_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
	char *base, *dirs;
	uint8_t *extra;
	size_t extra_len;
	ca_blob *blob; /* NULL: the key makes no blob */
	int set;
} ca_cache;

static int same_str(const char *a, const char *b)
{
	return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0;
}

/* 1 with h->ca set from the kept blob when its key matches, else 0. */
static int ca_cache_get(al_http *h)
{
	size_t n = h->ca_extra_len;
	int hit;

	pthread_mutex_lock(&ca_cache_mu);
	hit = ca_cache.set && same_str(ca_cache.base, h->ca_base) &&
	      same_str(ca_cache.dirs, h->ca_path) && ca_cache.extra_len == n &&
	      (n == 0 || memcmp(ca_cache.extra, h->ca_extra, n) == 0);
	if (hit)
		h->ca = ca_blob_ref(ca_cache.blob);
	pthread_mutex_unlock(&ca_cache_mu);
	return hit;
}

static void ca_cache_clear(void)
{
	free(ca_cache.base);
	free(ca_cache.dirs);
	free(ca_cache.extra);
	ca_blob_unref(ca_cache.blob);
	memset(&ca_cache, 0, sizeof(ca_cache));
}

/* Keep h's blob under its key (best effort: out of memory keeps none). */
static void ca_cache_put(const al_http *h)
{
	const char *base = h->ca_base;
	size_t n = h->ca_extra_len;

	pthread_mutex_lock(&ca_cache_mu);
	ca_cache_clear();
	ca_cache.base = base != NULL ? al_strdup(base) : NULL;
	ca_cache.dirs = h->ca_path != NULL ? al_strdup(h->ca_path) : NULL;
	ca_cache.extra = n > 0 ? malloc(n) : NULL;
	if ((base != NULL && ca_cache.base == NULL) ||
	    (h->ca_path != NULL && ca_cache.dirs == NULL) ||
	    (n > 0 && ca_cache.extra == NULL)) {
		ca_cache_clear();
	} else {
		if (n > 0)
			memcpy(ca_cache.extra, h->ca_extra, n);
		ca_cache.extra_len = n;
		ca_cache.blob = ca_blob_ref(h->ca);
		ca_cache.set = 1;
	}
	pthread_mutex_unlock(&ca_cache_mu);
}

/*
 * The trusted CAs, as Go's crypto/x509 system pool plus a registry's
 * certs.d (containers/image tlsclientconfig): $SSL_CERT_FILE stands for
 * the default bundle file unless opts->ca_file is set; $SSL_CERT_DIR
 * replaces the CA directory (curl's CAPATH, ':'-separated) and its files
 * are read as they are (Go needs no hashed names). When certificates come
 * from more than one file, they go to curl as one blob: the bundle file
 * (ca_file, $SSL_CERT_FILE or curl's default), then opts->ca_pem, then
 * the $SSL_CERT_DIR files. Runs once per client, after the easy handle.
 *
 * The system's CAs: when no bundle is named and $SSL_CERT_DIR is unset,
 * they are curl's default CA directory alone (Debian's /etc/ssl/certs,
 * which update-ca-certificates fills with the bundle's certificates under
 * their subject-hash names), not its default bundle: OpenSSL looks a
 * directory up by the issuer's hash and reads only the certificates a
 * chain needs, while a bundle is parsed whole, 140 certificates, for every
 * client (a file) or every connection (a blob). That parse was most of the
 * CPU time of a TLS push with 16 workers (docs/http.md, "Trusted CAs").
 * curl without a default directory keeps its default bundle.
 */
static int ca_setup(al_http *h, const al_http_opts *opts)
{
	const char *envf = getenv("SSL_CERT_FILE");
	const char *envd = getenv("SSL_CERT_DIR");
	size_t extra = opts->ca_pem != NULL ? opts->ca_pem_len : 0;
	char *deflt = NULL;
	const char *base;

	if (h->ca_file == NULL && envf != NULL && envf[0] != '\0') {
		if (access(envf, R_OK) == 0) {
			if ((h->ca_file = al_strdup(envf)) == NULL)
				return al_error_set(AL_ENOMEM, "out of memory");
		} else {
			al_log_warn("$SSL_CERT_FILE names '%s', which cannot "
			            "be read: using the default CA bundle",
			            envf);
		}
	}
	if (envd != NULL && envd[0] != '\0' &&
	    (h->ca_path = al_strdup(envd)) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	h->ca_system_dir = system_ca_dir(h);
	if (extra == 0 && h->ca_path == NULL)
		return 0;
	base = h->ca_file;
	if (base == NULL && !h->ca_system_dir &&
	    curl_easy_getinfo(h->easy, CURLINFO_CAINFO, &deflt) == CURLE_OK)
		base = deflt;
	if ((base != NULL && (h->ca_base = al_strdup(base)) == NULL) ||
	    (extra > 0 && (h->ca_extra = malloc(extra)) == NULL))
		return al_error_set(AL_ENOMEM, "out of memory");
	if (extra > 0) {
		memcpy(h->ca_extra, opts->ca_pem, extra);
		h->ca_extra_len = extra;
	}
	h->ca_pending = 1;
	return 0;
}

/* The blob ca_setup left pending, at h's first https request: taken from
 * ca_cache, or read and kept there. */
static int ca_build(al_http *h)
{
	al_buf pem = AL_BUF_INIT(AL_CERTS_TOTAL_MAX);
	int rc = 0;

	if (ca_cache_get(h)) {
		h->ca_pending = 0;
		return 0;
	}
	if (h->ca_base != NULL &&
	    (rc = al_certs_read_file(h->ca_base, &pem)) < 0 &&
	    (rc != AL_ENOTFOUND ||
	     (h->ca_file != NULL && strcmp(h->ca_base, h->ca_file) == 0)))
		goto out;
	if (rc < 0)
		al_error_clear();
	rc = 0;
	if (h->ca_extra_len > 0 &&
	    al_buf_append(&pem, h->ca_extra, h->ca_extra_len) < 0) {
		rc = al_error_set(AL_ELIMIT, "CA certificates too large");
		goto out;
	}
	if (h->ca_path != NULL &&
	    (rc = al_certs_read_dirs(h->ca_path, &pem)) < 0)
		goto out;
	if (pem.len > 0) {
		if ((h->ca = malloc(sizeof(*h->ca) + pem.len)) == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		atomic_init(&h->ca->refs, 1);
		h->ca->len = pem.len;
		memcpy(h->ca->bytes, pem.ptr, pem.len);
	}
	ca_cache_put(h);
	h->ca_pending = 0;
out:
	al_buf_free(&pem);
	return rc;
}

int al_http_new(al_http **out, const al_http_opts *opts)
{
	static const al_http_opts defaults = AL_HTTP_OPTS_INIT;
	al_http *h = NULL;
	int rc = 0;

	if (out == NULL)
		return al_error_set(AL_EINVAL, "al_http_new: no output");
	if (opts != NULL &&
	    (rc = al_opts_version_check("al_http_opts", opts->version,
	                                AL_HTTP_OPTS_VERSION)) < 0)
		return rc;
	if (opts == NULL)
		opts = &defaults;
	h = calloc(1, sizeof(*h));
	if (h == NULL)
		return al_error_set(AL_ENOMEM,
		                    "out of memory creating an HTTP client");
	h->tls_verify_off = opts->tls_verify_off != 0;
	h->connect_ms = opts->connect_timeout_ms != 0 ? opts->connect_timeout_ms
	                                              : HTTP_DEFAULT_CONNECT_MS;
	h->low_speed_ms = opts->low_speed_time_ms != 0
	                      ? opts->low_speed_time_ms
	                      : HTTP_DEFAULT_LOW_SPEED_MS;
	h->request_ms = opts->request_timeout_ms;
	if (opts->max_retries == AL_HTTP_NO_RETRY)
		h->max_retries = 0;
	else
		h->max_retries = opts->max_retries != 0 ? opts->max_retries
		                                        : HTTP_DEFAULT_RETRIES;
	h->backoff_base_ms = opts->backoff_base_ms != 0
	                         ? opts->backoff_base_ms
	                         : HTTP_DEFAULT_BACKOFF_BASE_MS;
	h->backoff_max_ms = opts->backoff_max_ms != 0
	                        ? opts->backoff_max_ms
	                        : HTTP_DEFAULT_BACKOFF_MAX_MS;
	h->doc_ms = opts->doc_timeout_ms != 0 ? opts->doc_timeout_ms
	                                      : HTTP_DEFAULT_DOC_MS;
	h->min_speed_bps = opts->min_speed_bps != 0 ? opts->min_speed_bps
	                                            : HTTP_DEFAULT_MIN_SPEED;
	h->no_plain_auth = opts->no_plain_auth != 0;
	h->cancel = opts->cancel;
	if (copy_opts(h, opts) != 0) {
		rc = al_error_set(AL_ENOMEM,
		                  "out of memory creating an HTTP client");
		goto out;
	}
	h->multi = curl_multi_init();
	h->easy = curl_easy_init();
	if (h->multi == NULL || h->easy == NULL) {
		rc = al_error_set(AL_ENOMEM, "cannot create a libcurl handle");
		goto out;
	}
	if ((rc = ca_setup(h, opts)) < 0)
		goto out;
	*out = h;
	h = NULL;
out:
	al_http_free(h);
	return rc;
}

void al_http_free(al_http *h)
{
	char **e;

	if (h == NULL)
		return;
	if (h->easy != NULL)
		curl_easy_cleanup(h->easy);
	if (h->multi != NULL)
		curl_multi_cleanup(h->multi);
	for (e = h->insecure; e != NULL && *e != NULL; e++)
		free(*e);
	free(h->insecure);
	free(h->ca_file);
	ca_blob_unref(h->ca);
	free(h->ca_base);
	free(h->ca_extra);
	free(h->ca_path);
	free(h->client_cert);
	free(h->client_key);
	free(h->proxy);
	free(h->no_proxy);
	free(h->user_agent);
	free(h);
}

int al_http_global_init(void)
{
	CURLcode res = curl_global_init(CURL_GLOBAL_DEFAULT);

	if (res != CURLE_OK)
		return al_error_set(AL_ENET, "cannot initialise libcurl: %s",
		                    curl_easy_strerror(res));
	return 0;
}

void al_http_global_cleanup(void)
{
	pthread_mutex_lock(&ca_cache_mu);
	ca_cache_clear();
	pthread_mutex_unlock(&ca_cache_mu);
	curl_global_cleanup();
}
