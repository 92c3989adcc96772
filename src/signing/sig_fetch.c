/* sig_fetch.c: signatures from HTTP stores, and bounded concurrent retrieval
 * and verification from many sources. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "airlock/sig.h"
#include "airlock/error.h"
#include "airlock/log.h"
#include "clock_int.h"
#include "error_int.h"

#define SIG_DEFAULT_BUDGET_MS 30000
#define SIG_DEFAULT_REQUEST_MS 10000
#define SIG_DEFAULT_CONNECT_MS 5000
#define SIG_DEFAULT_LOW_SPEED_MS 5000
#define SIG_DEFAULT_RETRIES 1
#define SIG_WAIT_SLICE_MS 100

/* url without userinfo and query, for messages (which must not carry
 * credentials); caller frees; NULL on ENOMEM. */
static char *redact(const char *url)
{
	const char *host = strstr(url, "://"), *at, *slash;
	size_t qlen = strcspn(url, "?#");

	if (host == NULL)
		return al_strndup(url, qlen);
	host += 3;
	slash = host + strcspn(host, "/?#");
	at = memchr(host, '@', (size_t)(slash - host));
	if (at == NULL)
		return al_strndup(url, qlen);
	return al_sprintf("%.*s%.*s", (int)(host - url), url,
	                  (int)(url + qlen - (at + 1)), at + 1);
}

int al_sig_http_read(al_sig_list *out, al_http *h, const char *base,
                     const al_digest *d, unsigned max, al_deadline dl)
{
	al_buf body = AL_BUF_INIT(AL_SIG_MAX_BYTES);
	al_http_resp resp = AL_HTTP_RESP_INIT;
	char hex[AL_DIGEST_STRMAX];
	char *url = NULL, *shown = NULL;
	size_t blen;
	unsigned k;
	int rc = 0;

	if (out == NULL || h == NULL || base == NULL || d == NULL)
		return al_error_set(AL_EINVAL,
		                    "no client, store URL or digest");
	if (max == 0)
		max = AL_SIG_DEFAULT_MAX_PER_STORE;
	if (max > AL_SIG_MAX_PER_STORE)
		max = AL_SIG_MAX_PER_STORE;
	blen = strlen(base);
	while (blen > 0 && base[blen - 1] == '/')
		blen--;
	if (blen > 4096)
		return al_error_set(AL_EINVAL,
		                    "signature store URL is too long");
	al_digest_hex(d, hex);
	for (k = 1; k <= max; k++) {
		al_http_req req;

		memset(&req, 0, sizeof(req));
		free(url);
		free(shown);
		url = al_sprintf("%.*s/%s=%s/signature-%u", (int)blen, base,
		                 al_digest_algo_name(d->algo), hex, k);
		shown = url != NULL ? redact(url) : NULL;
		if (url == NULL || shown == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		al_buf_reset(&body);
		req.method = "GET";
		req.url = url;
		req.body_out = &body;
		req.deadline = dl;
		rc = al_http_do(h, &req, &resp);
		if (rc == AL_ELIMIT) {
			rc = al_error_set(
			    AL_ELIMIT,
			    "signature '%s' exceeds the %llu byte limit", shown,
			    (unsigned long long)AL_SIG_MAX_BYTES);
			goto out;
		}
		if (rc < 0)
			goto out;
		/* the layout ends the list at the first missing number */
		if (resp.status == 404)
			break;
		if (resp.status < 200 || resp.status > 299) {
			rc = al_error_set(
			    AL_EPROTO,
			    "signature store answered HTTP %ld for '%s'",
			    resp.status, shown);
			goto out;
		}
		if (body.len == 0) {
			rc = al_error_set(AL_EPROTO, "empty signature at '%s'",
			                  shown);
			goto out;
		}
		if ((rc = al_sig_list_add(out, body.ptr, body.len)) < 0)
			goto out;
		al_log_debug("signature %u of %s from '%s' (%zu bytes)", k, hex,
		             shown, body.len);
	}
	rc = 0;
out:
	al_http_resp_clear(&resp);
	al_buf_free(&resp.error_body);
	al_buf_free(&body);
	free(url);
	free(shown);
	return rc;
}

const char *al_sig_store_status_name(al_sig_store_status s)
{
	switch (s) {
	case AL_SIG_STORE_OK:
		return "ok";
	case AL_SIG_STORE_NOT_FOUND:
		return "not found";
	case AL_SIG_STORE_INVALID:
		return "invalid";
	case AL_SIG_STORE_TIMEOUT:
		return "timed out";
	case AL_SIG_STORE_ERROR:
		return "error";
	case AL_SIG_STORE_SKIPPED:
		return "skipped";
	}
	return "unknown";
}

/* What the workers share; one lock guards running and the flags. */
typedef struct fetch_shared {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	size_t running;
	int budget_expired;
	int caller_canceled;
	al_cancel *stop; /* set to stop every worker's transfers */
} fetch_shared;

/* One source's worker: its inputs, and results only it writes until joined. */
typedef struct worker {
	pthread_t tid;
	int started;
	fetch_shared *sh;
	const al_sig_source *src;
	const al_sig_fetch_opts *opts;
	const al_digest *release;
	const char *reference;
	al_deadline dl;
	uint64_t t0;
	al_sig_store_result res;
	al_sig_list found;
	al_sig_info
	    *infos; /* per found signature; fingerprint[0] != 0 when verified */
} worker;

static int fetch_http(worker *w)
{
	const al_sig_fetch_opts *o = w->opts;
	al_http_opts ho;
	al_http *h = NULL;
	int rc;

	if (o->http != NULL)
		ho = *o->http;
	else
		ho = (al_http_opts)AL_HTTP_OPTS_INIT;
	ho.connect_timeout_ms = o->connect_timeout_ms != 0
	                            ? o->connect_timeout_ms
	                            : SIG_DEFAULT_CONNECT_MS;
	ho.low_speed_time_ms = o->low_speed_time_ms != 0
	                           ? o->low_speed_time_ms
	                           : SIG_DEFAULT_LOW_SPEED_MS;
	ho.request_timeout_ms = o->request_timeout_ms != 0
	                            ? o->request_timeout_ms
	                            : SIG_DEFAULT_REQUEST_MS;
	ho.max_retries =
	    o->max_retries != 0 ? o->max_retries : SIG_DEFAULT_RETRIES;
	if (ho.backoff_max_ms == 0 || ho.backoff_max_ms > 2000)
		ho.backoff_max_ms = 2000;
	ho.cancel = w->sh->stop;
	if (w->src->ca_pem != NULL) {
		ho.ca_pem = w->src->ca_pem;
		ho.ca_pem_len = w->src->ca_pem_len;
	}
	if ((rc = al_http_new(&h, &ho)) < 0)
		return rc;
	rc = al_sig_http_read(&w->found, h, w->src->location, w->release,
	                      o->max_per_store, w->dl);
	al_http_free(h);
	return rc;
}

static void *worker_main(void *arg)
{
	worker *w = arg;
	const al_sig_fetch_opts *o = w->opts;
	al_sig_verify_opts vo = AL_SIG_VERIFY_OPTS_INIT;
	al_buf reasons = AL_BUF_INIT(8 * 1024);
	char *fetch_msg = NULL;
	char ds[AL_DIGEST_STRMAX];
	int rc, budget, canceled;
	size_t i;

	switch (w->src->kind) {
	case AL_SIG_SOURCE_HTTP:
		rc = fetch_http(w);
		break;
	case AL_SIG_SOURCE_DIR:
		rc = al_sig_dir_read(&w->found, w->src->location, w->release,
		                     o->max_per_store);
		break;
	case AL_SIG_SOURCE_CONFIGMAP:
		rc = al_sig_configmap_load(&w->found, w->src->location,
		                           w->release);
		break;
	default:
		rc = al_error_set(AL_EINVAL,
		                  "unknown kind of signature source '%s'",
		                  w->src->location);
		break;
	}
	if (rc < 0)
		fetch_msg = al_strdup(al_error_message());
	vo.keyring = o->keyring;
	vo.policy = o->policy;
	vo.reference = w->reference;
	vo.now = o->now;
	if (w->found.n > 0)
		w->infos = calloc(w->found.n, sizeof(*w->infos));
	for (i = 0; i < w->found.n && w->infos != NULL; i++) {
		int vr = al_sig_verify(&w->infos[i], w->found.items[i].data,
		                       w->found.items[i].len, w->release, &vo);

		if (vr == 0) {
			w->res.nverified++;
			/* enough: stop the other stores */
			if (!o->require_all)
				al_cancel_set(w->sh->stop);
			continue;
		}
		(void)al_buf_printf(&reasons, "%ssignature-%zu: %s",
		                    reasons.len > 0 ? "; " : "", i + 1,
		                    al_error_message());
	}
	w->res.nfound = w->found.n;
	w->res.elapsed_ms = al_clock_now_ms() - w->t0;
	pthread_mutex_lock(&w->sh->mu);
	budget = w->sh->budget_expired;
	canceled = w->sh->caller_canceled;
	pthread_mutex_unlock(&w->sh->mu);
	if (w->found.n > 0 && w->infos == NULL) {
		w->res.status = AL_SIG_STORE_ERROR;
		w->res.code = AL_ENOMEM;
		w->res.message = al_strdup("out of memory");
	} else if (w->res.nverified > 0) {
		w->res.status = AL_SIG_STORE_OK;
	} else if (rc == AL_ETIMEOUT || (rc == AL_ECANCELED && budget)) {
		w->res.status = AL_SIG_STORE_TIMEOUT;
		w->res.code = AL_ETIMEOUT;
		w->res.message = al_sprintf(
		    "timed out after %.1fs%s%s%s%s",
		    (double)w->res.elapsed_ms / 1000.0,
		    rc == AL_ETIMEOUT && fetch_msg != NULL ? ": " : "",
		    rc == AL_ETIMEOUT && fetch_msg != NULL ? fetch_msg : "",
		    reasons.len > 0 ? "; before that " : "",
		    al_buf_cstr(&reasons));
	} else if (rc == AL_ECANCELED) {
		w->res.status = AL_SIG_STORE_SKIPPED;
		w->res.code = AL_ECANCELED;
		w->res.message =
		    al_strdup(canceled ? "cancelled"
		                       : "stopped: a signature from another "
		                         "store verified first");
	} else if (rc < 0) {
		w->res.status = AL_SIG_STORE_ERROR;
		w->res.code = rc;
		w->res.message = al_sprintf(
		    "%s%s%s",
		    fetch_msg != NULL ? fetch_msg : al_status_name(rc),
		    reasons.len > 0 ? "; before that " : "",
		    al_buf_cstr(&reasons));
	} else if (w->found.n == 0) {
		w->res.status = AL_SIG_STORE_NOT_FOUND;
		w->res.code = AL_ENOTFOUND;
		w->res.message = al_sprintf("has no signature for %s",
		                            al_digest_str(w->release, ds));
	} else {
		w->res.status = AL_SIG_STORE_INVALID;
		w->res.code = AL_EVERIFY;
		w->res.message = al_strdup(al_buf_cstr(&reasons));
	}
	free(fetch_msg);
	al_buf_free(&reasons);
	pthread_mutex_lock(&w->sh->mu);
	w->sh->running--;
	pthread_cond_signal(&w->sh->cv);
	pthread_mutex_unlock(&w->sh->mu);
	return NULL;
}

void al_sig_fetch_result_clear(al_sig_fetch_result *res)
{
	size_t i;

	if (res == NULL)
		return;
	for (i = 0; i < res->nstores; i++) {
		free(res->stores[i].location);
		free(res->stores[i].message);
	}
	free(res->stores);
	for (i = 0; i < res->nsigs; i++) {
		free(res->sigs[i].data);
		al_sig_info_clear(&res->sigs[i].info);
	}
	free(res->sigs);
	AL_RESULT_ZERO(res);
}

/* Wait until every worker finished, stopping them when the budget ends
 * or the caller cancels. */
static void wait_workers(fetch_shared *sh, al_deadline dl, al_cancel *caller)
{
	size_t last_running;
	uint64_t idle_since;

	pthread_mutex_lock(&sh->mu);
	last_running = sh->running;
	idle_since = al__real_now_ms();
	while (sh->running > 0) {
		uint64_t slice = al_deadline_remaining_ms(dl);

		if (slice > SIG_WAIT_SLICE_MS)
			slice = SIG_WAIT_SLICE_MS;
		if (slice == 0)
			slice = 10;
		(void)al__cond_wait_ms(&sh->cv, &sh->mu, slice);
		if (sh->running == 0)
			break;
		if (sh->running != last_running) {
			last_running = sh->running;
			idle_since = al__real_now_ms();
		}
		/* Workers stuck on real I/O move no clock: on the virtual
		 * clock the budget is reached once none has finished for a
		 * while (docs/testing.md). */
		al__clock_idle(al__real_now_ms() - idle_since, dl);
		if (!sh->budget_expired && al_deadline_expired(dl)) {
			sh->budget_expired = 1;
			al_cancel_set(sh->stop);
		}
		if (!sh->caller_canceled && al_cancel_is_set(caller)) {
			sh->caller_canceled = 1;
			al_cancel_set(sh->stop);
		}
	}
	pthread_mutex_unlock(&sh->mu);
}

/* Move the verified signatures of w into res (identical bytes once). */
static int collect_verified(al_sig_fetch_result *res, worker *w, size_t store)
{
	size_t i, j;

	for (i = 0; i < w->found.n; i++) {
		al_sig_verified *grown, *v;
		int dup = 0;

		if (w->infos == NULL || w->infos[i].fingerprint[0] == '\0')
			continue;
		for (j = 0; j < res->nsigs && !dup; j++)
			dup = res->sigs[j].len == w->found.items[i].len &&
			      memcmp(res->sigs[j].data, w->found.items[i].data,
			             res->sigs[j].len) == 0;
		if (dup)
			continue;
		grown = realloc(res->sigs, (res->nsigs + 1) * sizeof(*grown));
		if (grown == NULL)
			return al_error_set(
			    AL_ENOMEM, "out of memory collecting signatures");
		res->sigs = grown;
		v = &res->sigs[res->nsigs++];
		v->data = w->found.items[i].data;
		v->len = w->found.items[i].len;
		v->store = store;
		v->info = w->infos[i];
		w->found.items[i].data = NULL;
		w->found.items[i].len = 0;
		memset(&w->infos[i], 0, sizeof(w->infos[i]));
	}
	return 0;
}

/* The return code and message summing up every store. */
static int summarise(const al_sig_fetch_result *res, const al_digest *release,
                     const al_sig_fetch_opts *o, int caller_canceled)
{
	al_buf msg = AL_BUF_INIT(16 * 1024);
	char ds[AL_DIGEST_STRMAX];
	int code = 0, have_invalid = 0, have_timeout = 0, first_error = 0;
	size_t i, nok = 0, nnotfound = 0;

	for (i = 0; i < res->nstores; i++) {
		const al_sig_store_result *r = &res->stores[i];

		switch (r->status) {
		case AL_SIG_STORE_OK:
			nok++;
			break;
		case AL_SIG_STORE_NOT_FOUND:
			nnotfound++;
			break;
		case AL_SIG_STORE_INVALID:
			have_invalid = 1;
			break;
		case AL_SIG_STORE_TIMEOUT:
			have_timeout = 1;
			break;
		case AL_SIG_STORE_ERROR:
			if (first_error == 0)
				first_error = r->code != 0 ? r->code : AL_EIO;
			break;
		case AL_SIG_STORE_SKIPPED:
			break;
		}
	}
	if (o->require_all ? nok == res->nstores : nok > 0)
		return 0;
	if (have_invalid)
		code = AL_EVERIFY;
	else if (caller_canceled)
		code = AL_ECANCELED;
	else if (have_timeout)
		code = AL_ETIMEOUT;
	else if (first_error != 0)
		code = first_error;
	else if (nnotfound > 0)
		code = AL_ENOTFOUND;
	else
		code = AL_EVERIFY;
	(void)al_buf_printf(&msg, "no %ssignature for %s verified",
	                    o->require_all ? "complete set of " : "",
	                    al_digest_str(release, ds));
	for (i = 0; i < res->nstores; i++) {
		const al_sig_store_result *r = &res->stores[i];

		if (r->status == AL_SIG_STORE_OK && !o->require_all)
			continue;
		(void)al_buf_printf(&msg, "; signature store '%s' %s",
		                    r->location,
		                    r->status == AL_SIG_STORE_OK ? "ok"
		                    : r->message != NULL         ? r->message
		                                                 : "");
	}
	code = al_error_set(code, "%s", al_buf_cstr(&msg));
	al_buf_free(&msg);
	return code;
}

/* What al_sig_fetch refuses before any work. */
static int check_args(const al_digest *release, const char *reference,
                      const al_sig_fetch_opts *opts)
{
	int rc;

	if (opts != NULL &&
	    (rc = al_opts_version_check("al_sig_fetch_opts", opts->version,
	                                AL_SIG_FETCH_OPTS_VERSION)) < 0)
		return rc;
	if (release == NULL || opts == NULL || opts->keyring == NULL ||
	    opts->nsources == 0 || opts->sources == NULL)
		return al_error_set(AL_EINVAL, "signature retrieval needs a "
		                               "digest, a keyring and sources");
	if (opts->policy != AL_SIG_IDENTITY_IGNORE &&
	    (reference == NULL || reference[0] == '\0'))
		return al_error_set(
		    AL_EINVAL,
		    "no expected identity given for identity policy '%s'",
		    al_sig_identity_policy_name(opts->policy));
	if (opts->nsources > AL_SIG_MAX_SOURCES)
		return al_error_set(AL_EINVAL,
		                    "%zu signature sources given, at most %d",
		                    opts->nsources, AL_SIG_MAX_SOURCES);
	return 0;
}

/* The lock and the condition variable (on the monotonic clock) the
 * workers and the waiter share. */
static int sync_init(fetch_shared *sh)
{
	pthread_condattr_t ca;

	if (pthread_condattr_init(&ca) != 0)
		return al_error_set(AL_ENOMEM,
		                    "cannot initialise a condition variable");
	if (pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 ||
	    pthread_mutex_init(&sh->mu, NULL) != 0) {
		pthread_condattr_destroy(&ca);
		return al_error_set(AL_ENOMEM, "cannot initialise a lock");
	}
	if (pthread_cond_init(&sh->cv, &ca) != 0) {
		pthread_condattr_destroy(&ca);
		pthread_mutex_destroy(&sh->mu);
		return al_error_set(AL_ENOMEM,
		                    "cannot initialise a condition variable");
	}
	pthread_condattr_destroy(&ca);
	return 0;
}

int al_sig_fetch(al_sig_fetch_result *res, const al_digest *release,
                 const char *reference, const al_sig_fetch_opts *opts)
{
	fetch_shared sh;
	worker *ws = NULL;
	al_deadline dl;
	uint64_t t0 = al_clock_now_ms(), budget;
	size_t i;
	int rc, have_sync = 0;

	if (res == NULL)
		return al_error_set(AL_EINVAL, "no result to fill");
	if ((rc = AL_RESULT_VERSION_CHECK("al_sig_fetch_result", res, version,
	                                  AL_SIG_FETCH_RESULT_VERSION)) < 0)
		return rc;
	al_sig_fetch_result_clear(res);
	if ((rc = check_args(release, reference, opts)) < 0)
		return rc;
	memset(&sh, 0, sizeof(sh));
	budget = opts->budget_ms != 0 ? opts->budget_ms : SIG_DEFAULT_BUDGET_MS;
	dl = al_deadline_in(budget);
	res->stores = calloc(opts->nsources, sizeof(*res->stores));
	ws = calloc(opts->nsources, sizeof(*ws));
	if (res->stores == NULL || ws == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	res->nstores = opts->nsources;
	for (i = 0; i < opts->nsources; i++) {
		res->stores[i].location =
		    opts->sources[i].location == NULL ? al_strdup("")
		    : opts->sources[i].kind == AL_SIG_SOURCE_HTTP
		        ? redact(opts->sources[i].location)
		        : al_strdup(opts->sources[i].location);
		if (res->stores[i].location == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
	}
	if ((rc = al_cancel_new(&sh.stop)) < 0)
		goto out;
	if ((rc = sync_init(&sh)) < 0)
		goto out;
	have_sync = 1;
	for (i = 0; i < opts->nsources; i++) {
		worker *w = &ws[i];

		w->sh = &sh;
		w->src = &opts->sources[i];
		w->opts = opts;
		w->release = release;
		w->reference = reference;
		w->dl = dl;
		w->t0 = t0;
		if (w->src->location == NULL) {
			w->res.status = AL_SIG_STORE_ERROR;
			w->res.code = AL_EINVAL;
			w->res.message = al_strdup("no location");
			continue;
		}
		pthread_mutex_lock(&sh.mu);
		sh.running++;
		pthread_mutex_unlock(&sh.mu);
		if (pthread_create(&w->tid, NULL, worker_main, w) != 0) {
			pthread_mutex_lock(&sh.mu);
			sh.running--;
			pthread_mutex_unlock(&sh.mu);
			w->res.status = AL_SIG_STORE_ERROR;
			w->res.code = AL_ENOMEM;
			w->res.message = al_strdup("cannot start a thread");
			continue;
		}
		w->started = 1;
	}
	wait_workers(&sh, dl, opts->cancel);
	for (i = 0; i < opts->nsources; i++) {
		if (ws[i].started)
			pthread_join(ws[i].tid, NULL);
	}
	res->budget_expired = sh.budget_expired || al_deadline_expired(dl);
	res->elapsed_ms = al_clock_now_ms() - t0;
	for (i = 0; i < opts->nsources; i++) {
		al_sig_store_result *r = &res->stores[i];

		r->status = ws[i].res.status;
		r->code = ws[i].res.code;
		r->nfound = ws[i].res.nfound;
		r->nverified = ws[i].res.nverified;
		r->elapsed_ms = ws[i].res.elapsed_ms;
		r->message = ws[i].res.message;
		ws[i].res.message = NULL;
		if (r->status != AL_SIG_STORE_OK && r->message == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		if ((rc = collect_verified(res, &ws[i], i)) < 0)
			goto out;
		al_log_debug("signature store '%s': %s (%zu found, %zu "
		             "verified, %llu ms)%s%s",
		             r->location, al_sig_store_status_name(r->status),
		             r->nfound, r->nverified,
		             (unsigned long long)r->elapsed_ms,
		             r->message != NULL ? ": " : "",
		             r->message != NULL ? r->message : "");
	}
	rc = summarise(res, release, opts, sh.caller_canceled);
out:
	for (i = 0; ws != NULL && i < opts->nsources; i++) {
		size_t j;

		for (j = 0; ws[i].infos != NULL && j < ws[i].found.n; j++)
			al_sig_info_clear(&ws[i].infos[j]);
		free(ws[i].infos);
		al_sig_list_clear(&ws[i].found);
		free(ws[i].res.message);
	}
	free(ws);
	if (have_sync) {
		pthread_cond_destroy(&sh.cv);
		pthread_mutex_destroy(&sh.mu);
	}
	al_cancel_free(sh.stop);
	return rc;
}

int al_sig_fetch_release(al_store *s, const al_digest *release,
                         const char *release_ref, const al_sig_fetch_opts *opts,
                         al_sig_fetch_result *res)
{
	char ds[AL_DIGEST_STRMAX];
	size_t i;
	int rc, src;

	if ((rc = AL_RESULT_VERSION_CHECK("al_sig_fetch_result", res, version,
	                                  AL_SIG_FETCH_RESULT_VERSION)) < 0)
		return rc;
	if (s == NULL)
		return al_error_set(AL_EINVAL,
		                    "no store to save signatures into");
	rc = al_sig_fetch(res, release, release_ref, opts);
	if (res == NULL || res->nsigs == 0)
		return rc;
	for (i = 0; i < res->nsigs; i++) {
		unsigned k = 0;

		if ((src = al_sig_store_save(s, release, res->sigs[i].data,
		                             res->sigs[i].len, &k)) < 0)
			return al_error_wrap(src, "saving a signature of %s",
			                     al_digest_str(release, ds));
	}
	return rc;
}
