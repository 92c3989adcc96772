/* oom_inject.c: the malloc/calloc/realloc/free wrappers (ld --wrap) that
 * fail the Nth allocation for tests/unit/test_oom.c, after SQLite's
 * test_malloc.c: one counter, armed around one call at a time. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "oom_inject.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);
void __wrap_free(void *p);

/* The library runs worker threads: one lock over the hook's state. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int armed, persistent, paused;
static int jansson_spared;           /* oom_spare_jansson */
static _Thread_local int in_jansson; /* inside json_alloc */
static unsigned long target;         /* the allocation that fails, 1-based */
static unsigned long seen;           /* allocations since oom_arm */
static unsigned long failed;

/* The blocks allocated while armed and not freed yet (open addressing;
 * a free of a block from elsewhere -- libc, libyaml -- is not counted). */
#define LIVE_SLOTS 65536
static void *live[LIVE_SLOTS];
static long nlive;
static void *const tomb = &nlive;

static size_t slot_of(const void *p)
{
	return (size_t)(((uintptr_t)p >> 4) * 2654435761u) % LIVE_SLOTS;
}

static void live_add(void *p)
{
	size_t i, k = slot_of(p);

	for (i = 0; i < LIVE_SLOTS; i++, k = (k + 1) % LIVE_SLOTS) {
		if (live[k] == NULL || live[k] == tomb) {
			live[k] = p;
			nlive++;
			return;
		}
	}
	abort(); /* more live blocks than a test makes */
}

static int live_remove(const void *p)
{
	size_t i, k = slot_of(p);

	for (i = 0; i < LIVE_SLOTS && live[k] != NULL;
	     i++, k = (k + 1) % LIVE_SLOTS) {
		if (live[k] == p) {
			live[k] = tomb;
			nlive--;
			return 1;
		}
	}
	return 0;
}

void oom_arm(unsigned long nth, int persist)
{
	pthread_mutex_lock(&mu);
	memset(live, 0, sizeof(live));
	nlive = 0;
	failed = 0;
	seen = 0;
	target = nth;
	persistent = persist;
	paused = 0;
	armed = 1;
	pthread_mutex_unlock(&mu);
}

unsigned long oom_disarm(void)
{
	unsigned long f;

	pthread_mutex_lock(&mu);
	armed = 0;
	f = failed;
	pthread_mutex_unlock(&mu);
	return f;
}

void oom_pause(int on)
{
	pthread_mutex_lock(&mu);
	paused = on;
	pthread_mutex_unlock(&mu);
}

void oom_spare_jansson(int on)
{
	pthread_mutex_lock(&mu);
	jansson_spared = on;
	pthread_mutex_unlock(&mu);
}

long oom_balance(void)
{
	long n;

	pthread_mutex_lock(&mu);
	n = nlive;
	pthread_mutex_unlock(&mu);
	return n;
}

/* 1 if this allocation is to fail (called with mu held). */
static int fail_now(void)
{
	if (!armed || paused || (in_jansson && jansson_spared))
		return 0;
	seen++;
	if (seen == target || (seen > target && persistent)) {
		failed++;
		return 1;
	}
	return 0;
}

void *__wrap_malloc(size_t n)
{
	void *p = NULL;

	pthread_mutex_lock(&mu);
	if (!fail_now()) {
		p = __real_malloc(n);
		if (p != NULL && armed)
			live_add(p);
	}
	pthread_mutex_unlock(&mu);
	return p;
}

void *__wrap_calloc(size_t n, size_t m)
{
	void *p = NULL;

	pthread_mutex_lock(&mu);
	if (!fail_now()) {
		p = __real_calloc(n, m);
		if (p != NULL && armed)
			live_add(p);
	}
	pthread_mutex_unlock(&mu);
	return p;
}

void *__wrap_realloc(void *p, size_t n)
{
	void *q = NULL;

	pthread_mutex_lock(&mu);
	if (!fail_now()) {
		q = __real_realloc(p, n);
		if (q != NULL && armed) {
			/* a block from before arming stays uncounted */
			if (p == NULL || live_remove(p))
				live_add(q);
		}
	}
	pthread_mutex_unlock(&mu);
	return q;
}

void __wrap_free(void *p)
{
	pthread_mutex_lock(&mu);
	if (p != NULL && armed)
		(void)live_remove(p);
	__real_free(p);
	pthread_mutex_unlock(&mu);
}

/* jansson allocates inside libjansson.so, which --wrap does not reach:
 * hand it functions of this program (whose malloc and free are wrapped). */
static void *json_alloc(size_t n)
{
	void *p;

	/* the wrapper by name: through malloc the compiler could drop the
	 * stores (no code it sees reads in_jansson across that call) */
	in_jansson = 1;
	p = __wrap_malloc(n);
	in_jansson = 0;
	return p;
}

static void json_release(void *p)
{
	free(p);
}

void oom_install_jansson(void)
{
	json_set_alloc_funcs(json_alloc, json_release);
}
