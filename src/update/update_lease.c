/* update_lease.c: the updater's cluster-side lock: a coordination.k8s.io/v1
 * Lease acquired, renewed and released as client-go's leader election does. */
#define _GNU_SOURCE /* strptime, timegm */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/rand.h>

#include "airlock/update_lease.h"
#include "airlock/buf.h"
#include "airlock/error.h"
#include "json_int.h"
#include "kube_int.h"
#include "airlock/log.h"
#include "error_int.h"

#define LEASE_API "coordination.k8s.io/v1"
#define LEASE_KIND "Lease"
#define LEASE_DEFAULT_MS 60000
#define LEASE_MIN_MS 2000
#define LEASE_CALL_MS 10000 /* one lease request */
#define LEASE_POLL_MAX_MS 2000

struct al_update_lease {
	al_kube *kube;
	char *ns;
	char *name;
	char *identity;
	uint64_t duration_ms;
	json_t *obj; /* the lease as last written by us (resourceVersion) */
	pthread_mutex_t mu;
	pthread_t renewer;
	int renewing;
	al_cancel *stop;
	atomic_int lost;
	char why[512];
};

/* metav1.MicroTime: RFC 3339 with microseconds, UTC. */
static void micro_time(char out[40], uint64_t wall_ms)
{
	time_t t = (time_t)(wall_ms / 1000);
	struct tm tm;
	char base[32];

	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
		memcpy(base, "1970-01-01T00:00:00",
		       sizeof("1970-01-01T00:00:00"));
	snprintf(out, 40, "%s.%06uZ", base, (unsigned)(wall_ms % 1000) * 1000);
}

/* Wall-clock milliseconds of an RFC 3339 UTC time ("...Z", optional
 * fraction); 0 when it does not parse. */
static uint64_t parse_time_ms(const char *s)
{
	struct tm tm;
	const char *p;
	uint64_t frac = 0, scale = 1000;
	time_t t;

	if (s == NULL)
		return 0;
	memset(&tm, 0, sizeof(tm));
	p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (p == NULL)
		return 0;
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++) {
			if (scale > 1) {
				scale /= 10;
				frac += (uint64_t)(*p - '0') * scale;
			}
		}
	}
	if (strcmp(p, "Z") != 0)
		return 0;
	t = timegm(&tm);
	if (t < 0)
		return 0;
	return (uint64_t)t * 1000 + frac;
}

/* "<hostname>_<pid>_<uuid>": the CVO's leader election identity is
 * "<hostname>_<uuid>" (pkg/start createResourceLock); the pid is added so
 * that a run on the same host can tell that a holder was killed. */
static char *default_identity(void)
{
	unsigned char u[16];
	char host[256];

	if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "airlock");
	host[sizeof(host) - 1] = '\0';
	if (RAND_bytes(u, sizeof(u)) != 1)
		return NULL;
	u[6] = (unsigned char)((u[6] & 0x0f) | 0x40);
	u[8] = (unsigned char)((u[8] & 0x3f) | 0x80);
	return al_sprintf("%s_%ld_%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
	                  "%02x%02x%02x%02x%02x%02x",
	                  host, (long)getpid(), u[0], u[1], u[2], u[3], u[4],
	                  u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
	                  u[13], u[14], u[15]);
}

/* 1 when holder names a process of this host that no longer runs
 * ("<our hostname>_<pid>_..."): a run that was killed. */
static int holder_dead_here(const char *holder)
{
	char host[256], *end = NULL;
	size_t n;
	long pid;

	if (holder == NULL || gethostname(host, sizeof(host)) != 0)
		return 0;
	host[sizeof(host) - 1] = '\0';
	n = strlen(host);
	if (strncmp(holder, host, n) != 0 || holder[n] != '_')
		return 0;
	errno = 0;
	pid = strtol(holder + n + 1, &end, 10);
	if (errno != 0 || end == holder + n + 1 || *end != '_' || pid <= 0 ||
	    (pid_t)pid == getpid())
		return 0;
	return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* The spec this holder writes: acquireTime kept from have when we already
 * hold it, leaseTransitions bumped when the holder changes. */
static json_t *lease_object(const al_update_lease *l, const json_t *have,
                            const char *holder, uint64_t duration_ms)
{
	const json_t *hs = json_object_get(have, "spec");
	const char *old = al_json_str(hs, "holderIdentity"),
	           *acq = al_json_str(hs, "acquireTime"),
	           *rv = al_json_str(json_object_get(have, "metadata"),
	                             "resourceVersion");
	json_int_t trans =
	    json_integer_value(json_object_get(hs, "leaseTransitions"));
	char now[40];
	json_t *o, *md, *spec;
	int same = old != NULL && holder != NULL && strcmp(old, holder) == 0;

	micro_time(now, al_clock_wall_ms());
	if (have != NULL && !same && holder != NULL && holder[0] != '\0' &&
	    old != NULL && old[0] != '\0')
		trans++;
	o = json_pack("{s:s, s:s}", "apiVersion", LEASE_API, "kind",
	              LEASE_KIND);
	md = json_pack("{s:s, s:s}", "name", l->name, "namespace", l->ns);
	spec = json_pack("{s:s, s:I, s:s, s:s, s:I}", "holderIdentity", holder,
	                 "leaseDurationSeconds",
	                 (json_int_t)((duration_ms + 999) / 1000),
	                 "acquireTime", same && acq != NULL ? acq : now,
	                 "renewTime", now, "leaseTransitions", trans);
	if (o == NULL || md == NULL || spec == NULL) {
		json_decref(o);
		json_decref(md);
		json_decref(spec);
		return NULL;
	}
	if (rv != NULL)
		json_object_set_new(md, "resourceVersion", json_string(rv));
	json_object_set_new(o, "metadata", md);
	json_object_set_new(o, "spec", spec);
	return o;
}

static void set_lost(al_update_lease *l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void set_lost(al_update_lease *l, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&l->mu);
	if (!atomic_load(&l->lost)) {
		va_start(ap, fmt);
		vsnprintf(l->why, sizeof(l->why), fmt, ap);
		va_end(ap);
		atomic_store(&l->lost, 1);
	}
	pthread_mutex_unlock(&l->mu);
}

/*
 * Renew every duration/3 (client-go's RetryPeriod ratio) with a
 * resourceVersion-conditional PUT. A conflict means someone else wrote
 * the lease: re-read it; another holder means the lease is lost. Failing
 * to renew for 2/3 of the duration (client-go's RenewDeadline) means
 * lost too: by then another run may see it expire.
 */
static void *renew_main(void *arg)
{
	al_update_lease *l = arg;
	uint64_t period = l->duration_ms / 3, last_ok = al_clock_now_ms();
	int at_once = 0, was_at_once = 0;

	for (;;) {
		json_t *o = NULL, *got = NULL;
		int rc;

		if ((!at_once && al_wait_ms(period, l->stop) < 0) ||
		    al_cancel_is_set(l->stop))
			break;
		was_at_once = at_once;
		at_once = 0;
		pthread_mutex_lock(&l->mu);
		o = lease_object(l, l->obj, l->identity, l->duration_ms);
		pthread_mutex_unlock(&l->mu);
		if (o == NULL)
			continue;
		rc = al_kube_replace(l->kube, o, &got,
		                     al_deadline_in(LEASE_CALL_MS));
		json_decref(o);
		if (rc == AL_EEXIST) {
			rc = al_kube_get(l->kube, LEASE_API, LEASE_KIND, l->ns,
			                 l->name, &got,
			                 al_deadline_in(LEASE_CALL_MS));
			if (rc == 0) {
				const char *h =
				    al_json_str(json_object_get(got, "spec"),
				                "holderIdentity");

				if (h == NULL || strcmp(h, l->identity) != 0) {
					set_lost(
					    l, "lease %s/%s was taken by '%s'",
					    l->ns, l->name, h != NULL ? h : "");
					json_decref(got);
					break;
				}
				pthread_mutex_lock(&l->mu);
				json_decref(l->obj);
				l->obj = got;
				pthread_mutex_unlock(&l->mu);
				got = NULL;
				/* renew with the new version now (once) */
				at_once = !was_at_once;
				continue;
			}
		}
		if (rc == 0) {
			pthread_mutex_lock(&l->mu);
			json_decref(l->obj);
			l->obj = got;
			pthread_mutex_unlock(&l->mu);
			got = NULL;
			last_ok = al_clock_now_ms();
			period = l->duration_ms / 3;
			continue;
		}
		json_decref(got);
		al_log_warn("update: renewing lease %s/%s: %s", l->ns, l->name,
		            al_error_message());
		if (al_clock_now_ms() - last_ok >= l->duration_ms * 2 / 3) {
			set_lost(l,
			         "lease %s/%s not renewed for %.1fs (last "
			         "error: %s)",
			         l->ns, l->name,
			         (double)(al_clock_now_ms() - last_ok) / 1000.0,
			         al_error_message());
			break;
		}
		period = l->duration_ms / 10 > 0 ? l->duration_ms / 10 : 1;
	}
	return NULL;
}

static void lease_free(al_update_lease *l)
{
	if (l == NULL)
		return;
	json_decref(l->obj);
	al_cancel_free(l->stop);
	pthread_mutex_destroy(&l->mu);
	free(l->ns);
	free(l->name);
	free(l->identity);
	free(l);
}

/* A lease handle for o (defaults filled in), not yet holding anything. */
static int lease_new(al_update_lease **out, al_kube *k,
                     const al_update_lease_opts *o)
{
	al_update_lease *l = calloc(1, sizeof(*l));
	int rc;

	*out = NULL;
	if (l == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	pthread_mutex_init(&l->mu, NULL);
	l->kube = k;
	l->ns = al_strdup(o->ns != NULL ? o->ns : AL_UPDATE_LEASE_NAMESPACE);
	l->name = al_strdup(o->name != NULL ? o->name : AL_UPDATE_LEASE_NAME);
	l->identity =
	    o->identity != NULL ? al_strdup(o->identity) : default_identity();
	l->duration_ms =
	    o->duration_ms != 0 ? o->duration_ms : LEASE_DEFAULT_MS;
	if (l->duration_ms < LEASE_MIN_MS)
		l->duration_ms = LEASE_MIN_MS;
	if (l->ns == NULL || l->name == NULL || l->identity == NULL) {
		lease_free(l);
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	if ((rc = al_cancel_new(&l->stop)) < 0) {
		lease_free(l);
		return rc;
	}
	*out = l;
	return 0;
}

/* Write the lease as ours: created when have (the record read) is NULL,
 * else replaced conditionally on have's resourceVersion (holder: have's
 * holderIdentity, for the take-over message). 0 with l->obj the record
 * written; AL_EEXIST when another writer came first (read again, neither
 * wrapped nor retried here); other errors wrapped. */
static int lease_write(al_update_lease *l, const json_t *have,
                       const char *holder)
{
	json_t *want = lease_object(l, have, l->identity, l->duration_ms);
	json_t *got = NULL;
	int rc;

	if (want == NULL)
		rc = al_error_set(AL_ENOMEM, "out of memory");
	else if (have == NULL)
		rc = al_kube_create(l->kube, want, &got,
		                    al_deadline_in(LEASE_CALL_MS));
	else
		rc = al_kube_replace(l->kube, want, &got,
		                     al_deadline_in(LEASE_CALL_MS));
	json_decref(want);
	if (rc == AL_EEXIST)
		return rc;
	if (rc < 0)
		return al_error_wrap(rc, "%s lease %s/%s",
		                     have == NULL ? "creating" : "taking",
		                     l->ns, l->name);
	l->obj = got;
	if (holder != NULL && holder[0] != '\0' &&
	    strcmp(holder, l->identity) != 0)
		al_log_info("update: took over the expired "
		            "lease %s/%s from '%s'",
		            l->ns, l->name, holder);
	return 0;
}

int al_update_lease_acquire(al_update_lease **out, al_kube *k,
                            const al_update_lease_opts *o)
{
	static const al_update_lease_opts defaults = AL_UPDATE_LEASE_OPTS_INIT;
	al_update_lease *l = NULL;
	al_deadline wait_dl;
	char *seen_rv = NULL;
	uint64_t seen_at = 0;
	unsigned attempt = 0;
	int rc;

	if (o != NULL &&
	    (rc = al_opts_version_check("al_update_lease_opts", o->version,
	                                AL_UPDATE_LEASE_OPTS_VERSION)) < 0)
		return rc;
	if (out == NULL || k == NULL)
		return al_error_set(AL_EINVAL, "lease: no client");
	if (o == NULL)
		o = &defaults;
	if ((rc = lease_new(&l, k, o)) < 0)
		return rc;
	wait_dl = al_deadline_in(o->wait_ms != 0 ? o->wait_ms : 1);
	for (;; attempt++) {
		json_t *have = NULL;
		const json_t *spec;
		const char *holder, *rv;
		char holder_buf[256];
		uint64_t dur, renew, now_wall = al_clock_wall_ms(), left;

		if (al_cancel_is_set(o->cancel)) {
			rc = al_error_set(AL_ECANCELED,
			                  "cancelled waiting for lease %s/%s",
			                  l->ns, l->name);
			goto out;
		}
		rc = al_kube_get(k, LEASE_API, LEASE_KIND, l->ns, l->name,
		                 &have, al_deadline_in(LEASE_CALL_MS));
		if (rc == AL_ENOTFOUND &&
		    strstr(al_error_message(), "no kind") == NULL) {
			rc = lease_write(l, NULL, NULL);
			if (rc == 0)
				break;
			if (rc == AL_EEXIST)
				continue; /* another run created it first */
			goto out;
		}
		if (rc < 0) {
			rc = al_error_wrap(rc, "reading lease %s/%s", l->ns,
			                   l->name);
			goto out;
		}
		spec = json_object_get(have, "spec");
		holder = al_json_str(spec, "holderIdentity");
		/* a copy: have is released before the messages below */
		if (holder != NULL) {
			snprintf(holder_buf, sizeof(holder_buf), "%s", holder);
			holder = holder_buf;
		}
		rv = al_json_str(json_object_get(have, "metadata"),
		                 "resourceVersion");
		dur = (uint64_t)json_integer_value(
		          json_object_get(spec, "leaseDurationSeconds")) *
		      1000;
		renew = parse_time_ms(al_json_str(spec, "renewTime"));
		/* client-go judges expiry by its own clock: the record must
		 * stay unchanged for a whole duration while we watch it. A
		 * renewTime older than twice the duration by the wall clock
		 * is expired too (a run killed long ago), clock skew
		 * allowed for, and so is a holder on this host whose
		 * process is gone (killed: it cannot renew). */
		if (rv != NULL &&
		    (seen_rv == NULL || strcmp(seen_rv, rv) != 0)) {
			free(seen_rv);
			seen_rv = al_strdup(rv);
			seen_at = al_clock_now_ms();
		}
		if (holder != NULL && holder[0] != '\0' &&
		    strcmp(holder, l->identity) != 0 &&
		    al_clock_now_ms() - seen_at < dur &&
		    (renew == 0 || renew + 2 * dur > now_wall) &&
		    !holder_dead_here(holder)) {
			uint64_t age = renew != 0 && now_wall > renew
			                   ? now_wall - renew
			                   : 0;

			json_decref(have);
			if (al_deadline_expired(wait_dl)) {
				rc = al_error_set(
				    AL_ELOCKED,
				    "another updater holds the cluster lease "
				    "%s/%s: '%s' (renewed %.0fs ago, lease "
				    "%.0fs); wait for it or rerun with "
				    "--lock-wait",
				    l->ns, l->name, holder,
				    (double)age / 1000.0, (double)dur / 1000.0);
				goto out;
			}
			left = al_deadline_remaining_ms(wait_dl);
			if (attempt == 0)
				al_log_info("update: waiting for lease %s/%s "
				            "held by '%s'",
				            l->ns, l->name, holder);
			al_sleep_ms(
			    left < LEASE_POLL_MAX_MS ? left : LEASE_POLL_MAX_MS,
			    o->cancel);
			continue;
		}
		rc = lease_write(l, have, holder);
		json_decref(have);
		if (rc == 0)
			break;
		if (rc == AL_EEXIST)
			continue; /* someone wrote it between GET and PUT */
		goto out;
	}
	if (pthread_create(&l->renewer, NULL, renew_main, l) != 0) {
		rc = al_error_set(AL_ENOMEM, "cannot start the lease renewer");
		(void)al_update_lease_release(l);
		l = NULL;
		goto out;
	}
	l->renewing = 1;
	*out = l;
	l = NULL;
	rc = 0;
out:
	free(seen_rv);
	lease_free(l);
	return rc;
}

const char *al_update_lease_identity(const al_update_lease *l)
{
	return l != NULL ? l->identity : NULL;
}

int al_update_lease_lost(al_update_lease *l, char *why, size_t cap)
{
	int lost;

	if (l == NULL)
		return 0;
	lost = atomic_load(&l->lost);
	if (lost && why != NULL && cap > 0) {
		pthread_mutex_lock(&l->mu);
		snprintf(why, cap, "%s", l->why);
		pthread_mutex_unlock(&l->mu);
	}
	return lost;
}

int al_update_lease_release(al_update_lease *l)
{
	json_t *o = NULL;
	int rc = 0;

	if (l == NULL)
		return 0;
	al_cancel_set(l->stop);
	if (l->renewing)
		pthread_join(l->renewer, NULL);
	/* client-go's release: empty holder, 1 s duration, conditional on
	 * what we wrote last; someone else's lease is left alone. */
	if (!atomic_load(&l->lost) && l->obj != NULL) {
		o = lease_object(l, l->obj, "", 1000);
		rc = o == NULL ? al_error_set(AL_ENOMEM, "out of memory")
		               : al_kube_replace(l->kube, o, NULL,
		                                 al_deadline_in(LEASE_CALL_MS));
		if (rc < 0)
			rc = al_error_wrap(rc, "releasing lease %s/%s", l->ns,
			                   l->name);
	}
	json_decref(o);
	lease_free(l);
	return rc;
}
