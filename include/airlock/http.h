/* http.h: libcurl client with timeouts, retries with backoff and Retry-After,
 * safe redirects, cancellation. */
#ifndef AIRLOCK_HTTP_H
#define AIRLOCK_HTTP_H

#include "common.h"
#include "buf.h"
#include "clock.h"

AL_BEGIN_DECL

/* The version of al_http_opts this header describes. */
#define AL_HTTP_OPTS_VERSION 1

/* Client settings. Initialise from AL_HTTP_OPTS_INIT, then set what you
 * need by name; zero fields take the defaults noted. Strings are copied by
 * al_http_new. */
typedef struct al_http_opts {
	/* AL_HTTP_OPTS_VERSION of the caller's header (0, a zeroed struct,
	 * reads as 1; a newer one is AL_EINVAL) */
	unsigned version;
	const char
	    *ca_file; /* extra CA bundle (PEM); replaces curl's default bundle
	                 file, the system CA directory stays trusted */
	int tls_verify_off; /* 1: skip TLS verification for every host */
	const char *const *insecure_hosts; /* NULL-terminated "host[:port]" with
	                                      TLS verification off */
	const char *proxy;           /* overrides https_proxy/http_proxy env */
	const char *no_proxy;        /* overrides no_proxy env */
	uint64_t connect_timeout_ms; /* default 10000 */
	uint64_t low_speed_time_ms; /* abort when no byte moves for this long (a
	                               stall); default 30000 */
	uint64_t request_timeout_ms; /* one attempt, whole; default 0 = none
	                                (bounds big downloads too) */
	unsigned
	    max_retries; /* default 4 (so 5 attempts); AL_HTTP_NO_RETRY for 0 */
	uint64_t backoff_base_ms; /* default 250 */
	uint64_t backoff_max_ms;  /* default 20000; also caps Retry-After */
	const char *user_agent;   /* default "airlock/<version>" */
	al_cancel *cancel; /* borrowed; polled during transfers and sleeps */
	/* TLS client authentication (added for kube): a PEM certificate
	 * file and its PEM private key file (client_key NULL: the key is in
	 * client_cert). Ignored when client_cert is NULL. */
	const char *client_cert;
	const char *client_key;
	/* 1: refuse (AL_EPROTO, naming the URL) to send an "Authorization:"
	 * header over plain http to a host that is not insecure
	 * (tls_verify_off / insecure_hosts). Registries set it: a server
	 * must not be able to pull credentials into clear text. */
	int no_plain_auth;
	/* Small documents (docs/http.md "Bounds"): an attempt whose answer
	 * is kept in memory (no sink and no reader: manifests, tokens, tag
	 * pages, HEADs) must end within this, all its attempts within
	 * (max_retries + 1) times this; the body of a non-2xx or redirect
	 * answer must end within this after its headers. Default 60000. */
	uint64_t doc_timeout_ms;
	/* Minimum rate once bytes flow: a transfer that moves fewer than
	 * min_speed_bps * low_speed_time_ms / 1000 bytes in one window of
	 * low_speed_time_ms is aborted as too slow. Default 1024; set 1 to
	 * keep only the stall rule. */
	uint64_t min_speed_bps;
	/* Extra trusted CA certificates (PEM, ca_pem_len bytes; copied),
	 * added to ca_file or the default bundle: a registry's certs.d
	 * "*.crt" files (docs/http.md "Proxy and CA handling"). */
	const uint8_t *ca_pem;
	size_t ca_pem_len;
} al_http_opts;

/* Every other field zero / NULL: the defaults; set fields by name. */
#define AL_HTTP_OPTS_INIT                                                      \
	{                                                                      \
		.version = AL_HTTP_OPTS_VERSION                                \
	}

#define AL_HTTP_NO_RETRY ((unsigned)-1)

typedef struct al_http al_http;

/*
 * A client (one curl easy handle, so connections are reused across
 * requests). Not thread-safe: use one per thread. opts may be NULL (all
 * defaults). Errors: AL_ENOMEM. Free with al_http_free (NULL is a no-op).
 * docs/http.md describes timeouts, retries, redirects, proxy and CA use.
 */
AL_EXPORT int al_http_new(al_http **out, const al_http_opts *opts);
AL_EXPORT void al_http_free(al_http *h);

typedef struct al_http_req {
	const char *method; /* "GET" (default), "HEAD", "PUT", "POST", "PATCH",
	                       "DELETE" */
	const char *url;
	const char *const
	    *headers; /* "Name: value" lines, NULL-terminated, may be NULL */
	/* Request body: body/body_len, or reader (with body_size, -1 for
	 * chunked). A reader without rewind is not retried once sent. */
	const uint8_t *body;
	size_t body_len;
	const al_reader *reader;
	int64_t body_size;
	/* Response body of a 2xx answer goes to sink when set, else into
	 * body_out (bounded by its max: AL_ELIMIT). Non-2xx bodies are kept
	 * (first 64 KiB) in al_http_resp.error_body, never in the sink. */
	const al_writer *sink;
	al_buf *body_out;
	/* Resume: after a failure mid-body with bytes already given to the
	 * sink, retry with "Range: bytes=<given>-"; a 206 continues the sink,
	 * a 200 calls sink->reset first (no reset: AL_EPROTO). A caller that
	 * sends its own "Range:" header leaves resumable at 0. */
	int resumable;
	int no_redirect; /* 1: return 3xx as is (Location in the headers) */
	al_deadline deadline; /* bounds all attempts and backoff sleeps */
	/* With resumable and a sink that holds resume_from bytes already
	 * (a partial download kept from an earlier attempt): the first
	 * attempt asks "Range: bytes=<resume_from>-" too, under the same
	 * rules. resume_total (0: not checked) is the whole body's length: a
	 * 206 whose Content-Range names another total is AL_EPROTO. */
	uint64_t resume_from;
	uint64_t resume_total;
} al_http_req;

typedef struct al_http_resp {
	long status;         /* final HTTP status (after redirects) */
	char *effective_url; /* after redirects */
	al_buf error_body;   /* body of a non-2xx answer, bounded */
	uint64_t
	    body_bytes;    /* bytes given to sink/body_out (with resume_from) */
	unsigned attempts; /* how many requests were made */
	/* internal header storage; read with al_http_resp_header */
	char **hdr_names;
	char **hdr_values;
	size_t nhdr;
	/* 1 when the call failed with AL_ELIMIT because body_out was full
	 * (not because of too many headers or an oversized error body) */
	int body_overflow;
} al_http_resp;

#define AL_HTTP_RESP_INIT                                                      \
	{                                                                      \
		0, NULL, AL_BUF_INIT(64 * 1024), 0, 0, NULL, NULL, 0, 0        \
	}

/*
 * Perform req. Returns 0 whenever an HTTP answer was received (any
 * status: inspect resp->status), so callers decide what 404 or 401 mean.
 * Retried automatically (with exponential backoff + jitter, honouring
 * Retry-After in seconds or HTTP-date, capped by backoff_max_ms and the
 * deadline): connection failures, resets, timeouts, stalls (low speed),
 * and statuses 408, 429, 500, 502, 503, 504; never DNS or TLS failures
 * (a TLS handshake failure returns AL_ENET after one attempt). When retries are
 * exhausted on a retryable status, returns 0 with that status. A retry that
 * would sleep past the deadline is not made (the last status or error is
 * returned). Retries ask the original URL again. Redirects
 * (301/302/303/307/308, at most 5) are followed by this module, not curl, and
 * every "Authorization:" header is dropped as soon as a redirect leaves the
 * original scheme, host or port (and stays dropped for that chain). 303 (and
 * 301/302 after POST) continue as GET without body. Errors: AL_ENET
 * (connect/TLS/reset/DNS, with curl's text and the URL), AL_ETIMEOUT (deadline
 * or per-attempt/stall timeout, naming the URL), AL_ECANCELED, AL_ELIMIT
 * (body_out full), AL_EPROTO (more than 5 redirects, a resumed 206 whose
 * Content-Range does not start where asked), AL_EINVAL (not an http(s) URL), or
 * the sink's / reader's error unchanged. Messages never contain header values,
 * URL userinfo or query strings. resp must be initialised (AL_HTTP_RESP_INIT or
 * a previous call) and is cleared first; free with al_http_resp_clear.
 * resp->body_bytes is set also on failure.
 */
AL_EXPORT int al_http_do(al_http *h, const al_http_req *req,
                         al_http_resp *resp);
/* Free what resp holds and zero it (error_body keeps its max); resp stays
 * usable for another al_http_do. NULL is a no-op. */
AL_EXPORT void al_http_resp_clear(al_http_resp *resp);
/* Last value of a response header (case-insensitive), borrowed, or NULL. */
AL_EXPORT const char *al_http_resp_header(const al_http_resp *resp,
                                          const char *name);

/* Parse Retry-After (delta-seconds or HTTP-date: IMF-fixdate, RFC 850 or
 * asctime form) into ms from now (0 for a date in the past; a huge delta
 * saturates); AL_EPARSE if neither, *ms untouched. Thread-safe. */
AL_EXPORT int al_http_parse_retry_after(const char *value, uint64_t *ms);

/* How two URLs' origins relate (al_http_origin_compare). Ports are
 * compared with the scheme's default filled in; host names literally
 * (case-insensitive), so "localhost" and "127.0.0.1" differ. */
#define AL_HTTP_ORIGIN_SAME 0   /* scheme, host and port equal */
#define AL_HTTP_ORIGIN_SCHEME 1 /* host and port equal, scheme differs */
#define AL_HTTP_ORIGIN_OTHER 2  /* another host or port, or unparsable */
AL_EXPORT int al_http_origin_compare(const char *a, const char *b);

/* 1 when the user allowed plain http / unverified TLS for url on this
 * client (tls_verify_off, or url's host[:port] in insecure_hosts): the
 * only case where credentials may travel over plain http. */
AL_EXPORT int al_http_plain_allowed(const al_http *h, const char *url);

/* 1 when the n bytes at v may go into an HTTP header value: no control
 * character but HTAB (so no CR, LF, NUL or ESC), no DEL. Thread-safe. */
AL_EXPORT int al_http_value_ok(const char *v, size_t n);

/* Process-wide libcurl init; call once from main before threads. */
AL_EXPORT int al_http_global_init(void);
AL_EXPORT void al_http_global_cleanup(void);

AL_END_DECL

#endif
