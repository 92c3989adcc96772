/* clock.c: monotonic clock, deadlines, cancellation flags, durations, sizes and
 * backoff. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/rand.h>

#include "airlock/buf.h"
#include "airlock/clock.h"
#include "airlock/error.h"
#include "clock_int.h"

struct al_cancel {
	atomic_int flag;
};

static uint64_t system_now_ms(void *ctx)
{
	struct timespec ts;

	(void)ctx;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static uint64_t system_wall_ms(void *ctx)
{
	struct timespec ts;

	(void)ctx;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int system_sleep_ms(void *ctx, uint64_t ms, const al_cancel *c)
{
	uint64_t end = system_now_ms(ctx) + ms;

	for (;;) {
		struct timespec ts;
		uint64_t now = system_now_ms(ctx), step;

		if (al_cancel_is_set(c))
			return al_error_set(AL_ECANCELED, "cancelled");
		if (now >= end)
			return 0;
		/* Wake every 50 ms to notice cancellation promptly. */
		step = end - now < 50 ? end - now : 50;
		ts.tv_sec = (time_t)(step / 1000);
		ts.tv_nsec = (long)(step % 1000) * 1000000L;
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
			if (al_cancel_is_set(c))
				return al_error_set(AL_ECANCELED, "cancelled");
		}
	}
}

/* The virtual clock's state: its time, and the wall clock's offset. */
static _Atomic uint64_t virtual_now;
static _Atomic uint64_t virtual_wall_base;
static _Atomic uint64_t virtual_base;

static uint64_t virtual_now_ms(void *ctx)
{
	(void)ctx;
	return atomic_load(&virtual_now);
}

static uint64_t virtual_wall_ms(void *ctx)
{
	(void)ctx;
	return atomic_load(&virtual_wall_base) + atomic_load(&virtual_now) -
	       atomic_load(&virtual_base);
}

/* Move the clock to at least to (never back). */
static void virtual_move_to(uint64_t to)
{
	uint64_t cur = atomic_load(&virtual_now);

	while (cur < to &&
	       !atomic_compare_exchange_weak(&virtual_now, &cur, to))
		;
}

static int virtual_sleep_ms(void *ctx, uint64_t ms, const al_cancel *c)
{
	struct timespec ts = {0, 1000000L};
	uint64_t start = virtual_now_ms(ctx);

	if (al_cancel_is_set(c))
		return al_error_set(AL_ECANCELED, "cancelled");
	virtual_move_to(ms > UINT64_MAX - start ? UINT64_MAX : start + ms);
	/* One real millisecond, so that a loop that polls a real server
	 * between sleeps lets that server and the other threads run. */
	(void)nanosleep(&ts, NULL);
	if (al_cancel_is_set(c))
		return al_error_set(AL_ECANCELED, "cancelled");
	return 0;
}

static const al_clock_source system_source = {system_now_ms, system_wall_ms,
                                              system_sleep_ms, NULL};
static const al_clock_source virtual_source = {virtual_now_ms, virtual_wall_ms,
                                               virtual_sleep_ms, NULL};
static al_clock_source custom_source;
static const al_clock_source *_Atomic clock_source = &system_source;

void al_clock_set_source(const al_clock_source *src)
{
	if (src == NULL) {
		atomic_store(&clock_source, &system_source);
		return;
	}
	if (src == &virtual_source) {
		atomic_store(&clock_source, &virtual_source);
		return;
	}
	/* Point at the system clock while the copy is being made. */
	atomic_store(&clock_source, &system_source);
	custom_source = *src;
	atomic_store(&clock_source, &custom_source);
}

void al_clock_use_virtual(uint64_t start_ms, uint64_t wall_ms)
{
	atomic_store(&virtual_base, start_ms);
	atomic_store(&virtual_now, start_ms);
	atomic_store(&virtual_wall_base, wall_ms);
	al_clock_set_source(&virtual_source);
}

void al_clock_advance(uint64_t ms)
{
	uint64_t cur = atomic_load(&virtual_now);

	virtual_move_to(ms > UINT64_MAX - cur ? UINT64_MAX : cur + ms);
}

int al_clock_is_virtual(void)
{
	return atomic_load(&clock_source) == &virtual_source;
}

uint64_t al_clock_now_ms(void)
{
	const al_clock_source *s = atomic_load(&clock_source);

	return s->now_ms(s->ctx);
}

uint64_t al_clock_wall_ms(void)
{
	const al_clock_source *s = atomic_load(&clock_source);

	return s->wall_ms(s->ctx);
}

uint64_t al__real_now_ms(void)
{
	return system_now_ms(NULL);
}

void al__real_sleep_ms(uint64_t ms)
{
	(void)system_sleep_ms(NULL, ms, NULL);
}

int al__clock_is_system(void)
{
	return atomic_load(&clock_source) == &system_source;
}

static _Atomic uint64_t virtual_idle_ms = AL__VIRTUAL_IDLE_MS;

void al__clock_set_idle_ms(uint64_t ms)
{
	atomic_store(&virtual_idle_ms, ms != 0 ? ms : AL__VIRTUAL_IDLE_MS);
}

void al__clock_idle(uint64_t idle_ms, al_deadline dl)
{
	if (idle_ms >= atomic_load(&virtual_idle_ms) && dl.end_ms != 0 &&
	    al_clock_is_virtual())
		virtual_move_to(dl.end_ms);
}

int al__cond_wait_ms(pthread_cond_t *cv, pthread_mutex_t *mu, uint64_t ms)
{
	struct timespec ts;

	/* A real wait: the condition is signalled by real work. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += (time_t)(ms / 1000);
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return pthread_cond_timedwait(cv, mu, &ts);
}

void al_clock_rfc3339(char out[AL_RFC3339_LEN], uint64_t wall_ms)
{
	time_t t = (time_t)(wall_ms / 1000);
	struct tm tm;

	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(out, AL_RFC3339_LEN, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		memcpy(out, "1970-01-01T00:00:00Z", AL_RFC3339_LEN);
}

char *al_clock_rfc3339_now(void)
{
	char b[AL_RFC3339_LEN];

	al_clock_rfc3339(b, al_clock_wall_ms());
	return al_strdup(b);
}

al_deadline al_deadline_in(uint64_t ms)
{
	al_deadline d = {0};

	if (ms == 0)
		return d;
	d.end_ms = al_clock_now_ms() + ms;
	return d;
}

al_deadline al_deadline_min(al_deadline a, al_deadline b)
{
	if (a.end_ms == 0)
		return b;
	if (b.end_ms == 0)
		return a;
	return a.end_ms < b.end_ms ? a : b;
}

int al_deadline_expired(al_deadline d)
{
	return d.end_ms != 0 && al_clock_now_ms() >= d.end_ms;
}

uint64_t al_deadline_remaining_ms(al_deadline d)
{
	uint64_t now;

	if (d.end_ms == 0)
		return UINT64_MAX;
	now = al_clock_now_ms();
	return now >= d.end_ms ? 0 : d.end_ms - now;
}

int al_cancel_new(al_cancel **out)
{
	al_cancel *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return al_error_oom();
	atomic_init(&c->flag, 0);
	*out = c;
	return 0;
}

void al_cancel_free(al_cancel *c)
{
	free(c);
}

void al_cancel_set(al_cancel *c)
{
	if (c != NULL)
		atomic_store(&c->flag, 1);
}

int al_cancel_is_set(const al_cancel *c)
{
	return c != NULL && atomic_load(&((al_cancel *)c)->flag) != 0;
}

int al_sleep_ms(uint64_t ms, const al_cancel *c)
{
	const al_clock_source *s = atomic_load(&clock_source);

	return s->sleep_ms(s->ctx, ms, c);
}

int al_wait_ms(uint64_t ms, const al_cancel *c)
{
	struct timespec ts = {0, 2000000L};
	uint64_t end;

	if (!al_clock_is_virtual())
		return al_sleep_ms(ms, c);
	end = al_clock_now_ms() + ms;
	for (;;) {
		if (al_cancel_is_set(c))
			return al_error_set(AL_ECANCELED, "cancelled");
		if (al_clock_now_ms() >= end)
			return 0;
		(void)nanosleep(&ts, NULL);
	}
}

int al_parse_duration(const char *s, uint64_t *ms)
{
	const char *p = s;
	double total = 0;
	int any = 0;

	if (s == NULL || *s == '\0')
		return al_error_set(AL_EPARSE, "empty duration");
	while (*p != '\0') {
		char *end;
		double v, mult;

		/* strtod also takes blanks, signs, hex and "inf": a duration
		 * starts each number with a digit or '.' */
		if (!isdigit((unsigned char)*p) && *p != '.')
			return al_error_set(AL_EPARSE,
			                    "invalid duration '%s' (expected "
			                    "e.g. 30s, 2m, 1h30m, 500ms)",
			                    s);
		errno = 0;
		v = strtod(p, &end);
		if (end == p || errno != 0 || v < 0 || !isfinite(v) ||
		    strspn(p, "0123456789.") != (size_t)(end - p))
			return al_error_set(AL_EPARSE,
			                    "invalid duration '%s' (expected "
			                    "e.g. 30s, 2m, 1h30m, 500ms)",
			                    s);
		p = end;
		if (strncmp(p, "ms", 2) == 0) {
			mult = 1;
			p += 2;
		} else if (*p == 's') {
			mult = 1000;
			p++;
		} else if (*p == 'm') {
			mult = 60000;
			p++;
		} else if (*p == 'h') {
			mult = 3600000;
			p++;
		} else if (*p == '\0' && !any) {
			mult = 1000;
		} else {
			return al_error_set(AL_EPARSE,
			                    "invalid duration '%s' (expected "
			                    "e.g. 30s, 2m, 1h30m, 500ms)",
			                    s);
		}
		total += v * mult;
		any = 1;
	}
	if (total > 1e15)
		return al_error_set(AL_EPARSE, "duration '%s' is too large", s);
	*ms = (uint64_t)total;
	return 0;
}

int al_parse_size(const char *s, uint64_t *bytes)
{
	char *end;
	unsigned long long v;
	uint64_t mult = 1;

	if (s == NULL || *s < '0' || *s > '9')
		return al_error_set(
		    AL_EPARSE,
		    "invalid size '%s' (expected e.g. 4G, 700M, 1024)",
		    s ? s : "");
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0)
		return al_error_set(AL_EPARSE, "invalid size '%s'", s);
	switch (*end) {
	case '\0':
		break;
	case 'k':
	case 'K':
		mult = AL_KIB;
		end++;
		break;
	case 'm':
	case 'M':
		mult = AL_MIB;
		end++;
		break;
	case 'g':
	case 'G':
		mult = AL_GIB;
		end++;
		break;
	case 't':
	case 'T':
		mult = AL_GIB * 1024;
		end++;
		break;
	default:
		return al_error_set(
		    AL_EPARSE,
		    "invalid size '%s' (expected e.g. 4G, 700M, 1024)", s);
	}
	if (mult > 1 && (strcmp(end, "iB") == 0 || strcmp(end, "B") == 0 ||
	                 strcmp(end, "ib") == 0))
		end += strlen(end);
	if (*end != '\0')
		return al_error_set(
		    AL_EPARSE,
		    "invalid size '%s' (expected e.g. 4G, 700M, 1024)", s);
	if (v > UINT64_MAX / mult)
		return al_error_set(AL_EPARSE, "size '%s' is too large", s);
	*bytes = (uint64_t)v * mult;
	return 0;
}

uint64_t al_backoff_ms(unsigned attempt, uint64_t base_ms, uint64_t max_ms)
{
	uint64_t cap = base_ms, lo, r = 0;
	unsigned i;

	for (i = 0; i < attempt && cap < max_ms; i++)
		cap = cap > UINT64_MAX / 2 ? UINT64_MAX : cap * 2;
	if (cap > max_ms)
		cap = max_ms;
	lo = base_ms / 2;
	if (lo > cap)
		lo = cap;
	if (RAND_bytes((unsigned char *)&r, sizeof(r)) != 1)
		r = (uint64_t)al_clock_now_ms() * 2654435761u;
	return lo + (cap > lo ? r % (cap - lo + 1) : 0);
}
