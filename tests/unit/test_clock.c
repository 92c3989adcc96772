/* test_clock.c: deadlines, cancellation, duration and size parsing, backoff bounds. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "airlock/clock.h"
#include "airlock/error.h"
#include "al_test.h"

static void test_clock__parses_durations(void)
{
	uint64_t ms = 0;

	CU_ASSERT_EQUAL(al_parse_duration("30s", &ms), 0);
	CU_ASSERT_EQUAL(ms, 30000);
	CU_ASSERT_EQUAL(al_parse_duration("2m", &ms), 0);
	CU_ASSERT_EQUAL(ms, 120000);
	CU_ASSERT_EQUAL(al_parse_duration("1h30m", &ms), 0);
	CU_ASSERT_EQUAL(ms, 5400000);
	CU_ASSERT_EQUAL(al_parse_duration("500ms", &ms), 0);
	CU_ASSERT_EQUAL(ms, 500);
	CU_ASSERT_EQUAL(al_parse_duration("1.5s", &ms), 0);
	CU_ASSERT_EQUAL(ms, 1500);
	CU_ASSERT_EQUAL(al_parse_duration("7", &ms), 0);
	CU_ASSERT_EQUAL(ms, 7000);
}

static void test_clock__rejects_bad_durations(void)
{
	uint64_t ms = 0;

	CU_ASSERT_EQUAL(al_parse_duration("", &ms), AL_EPARSE);
	CU_ASSERT_EQUAL(al_parse_duration("5x", &ms), AL_EPARSE);
	CU_ASSERT_EQUAL(al_parse_duration("-1s", &ms), AL_EPARSE);
	CU_ASSERT_EQUAL(al_parse_duration("s", &ms), AL_EPARSE);
	CU_ASSERT_EQUAL(al_parse_duration("1s2", &ms), AL_EPARSE);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "'1s2'"));
	/* strtod's blanks, signs, hex floats and infinities */
	CU_ASSERT_EQUAL(al_parse_duration(" 5s", &ms), AL_EPARSE);
	CU_ASSERT_EQUAL(al_parse_duration("5s 3m", &ms), AL_EPARSE);
	CU_ASSERT_EQUAL(al_parse_duration("+5s", &ms), AL_EPARSE);
	CU_ASSERT_EQUAL(al_parse_duration("0x10s", &ms), AL_EPARSE);
	CU_ASSERT_EQUAL(al_parse_duration("infs", &ms), AL_EPARSE);
}

static void test_clock__parses_sizes(void)
{
	uint64_t b = 0;

	CU_ASSERT_EQUAL(al_parse_size("4G", &b), 0);
	CU_ASSERT_EQUAL(b, 4ull << 30);
	CU_ASSERT_EQUAL(al_parse_size("700MiB", &b), 0);
	CU_ASSERT_EQUAL(b, 700ull << 20);
	CU_ASSERT_EQUAL(al_parse_size("1024", &b), 0);
	CU_ASSERT_EQUAL(b, 1024);
	CU_ASSERT_EQUAL(al_parse_size("12Q", &b), AL_EPARSE);
	CU_ASSERT_EQUAL(al_parse_size("G", &b), AL_EPARSE);
	CU_ASSERT_EQUAL(al_parse_size("99999999999999999999T", &b), AL_EPARSE);
}

static void test_clock__deadlines(void)
{
	al_deadline none = AL_DEADLINE_NONE, soon = al_deadline_in(50), later = al_deadline_in(100000);

	CU_ASSERT(!al_deadline_expired(none));
	CU_ASSERT_EQUAL(al_deadline_remaining_ms(none), UINT64_MAX);
	CU_ASSERT_EQUAL(al_deadline_min(none, soon).end_ms, soon.end_ms);
	CU_ASSERT_EQUAL(al_deadline_min(later, soon).end_ms, soon.end_ms);
	CU_ASSERT(!al_deadline_expired(soon));
	al_sleep_ms(60, NULL);
	CU_ASSERT(al_deadline_expired(soon));
	CU_ASSERT_EQUAL(al_deadline_remaining_ms(soon), 0);
}

static void test_clock__backoff_stays_in_bounds(void)
{
	unsigned attempt;
	int i;

	for (attempt = 0; attempt < 12; attempt++) {
		for (i = 0; i < 50; i++) {
			uint64_t v = al_backoff_ms(attempt, 200, 5000);
			uint64_t cap = 200ull << attempt;
			if (cap > 5000)
				cap = 5000;
			CU_ASSERT(v >= 100);
			CU_ASSERT(v <= cap);
		}
	}
}

static void *cancel_later(void *arg)
{
	al_sleep_ms(100, NULL);
	al_cancel_set(arg);
	return NULL;
}

static void test_clock__sleep_wakes_on_cancel(void)
{
	al_cancel *c = NULL;
	pthread_t th;

	CU_ASSERT_EQUAL(al_cancel_new(&c), 0);
	CU_ASSERT(!al_cancel_is_set(c));
	CU_ASSERT(!al_cancel_is_set(NULL));
	pthread_create(&th, NULL, cancel_later, c);
	/* An hour: only the cancellation can end it, however busy the
	 * machine (no bound on the time it took). */
	CU_ASSERT_EQUAL(al_sleep_ms(3600000, c), AL_ECANCELED);
	pthread_join(th, NULL);
	CU_ASSERT(al_cancel_is_set(c));
	al_cancel_free(c);
}

/* A 40-minute deadline on the virtual clock: reached by the sleeps that
 * lead to it, in no real time. */
static void test_clock__virtual_deadline_of_forty_minutes(void)
{
	al_deadline d;
	uint64_t wall0;

	al_clock_use_virtual(5000, 1796360400000ULL);
	CU_ASSERT(al_clock_is_virtual());
	CU_ASSERT_EQUAL(al_clock_now_ms(), 5000);
	wall0 = al_clock_wall_ms();
	CU_ASSERT_EQUAL(wall0, 1796360400000ULL);
	d = al_deadline_in(40 * 60 * 1000);
	CU_ASSERT_EQUAL(al_deadline_remaining_ms(d), 40 * 60 * 1000);
	CU_ASSERT_EQUAL(al_sleep_ms(40 * 60 * 1000 - 1, NULL), 0);
	CU_ASSERT(!al_deadline_expired(d));
	CU_ASSERT_EQUAL(al_deadline_remaining_ms(d), 1);
	CU_ASSERT_EQUAL(al_sleep_ms(1, NULL), 0);
	CU_ASSERT(al_deadline_expired(d));
	CU_ASSERT_EQUAL(al_deadline_remaining_ms(d), 0);
	CU_ASSERT_EQUAL(al_clock_wall_ms() - wall0, 40 * 60 * 1000);
	al_clock_advance(500);
	CU_ASSERT_EQUAL(al_clock_now_ms(), 5000 + 40 * 60 * 1000 + 500);
	/* a sleep or an advance of nothing moves nothing (it once moved the
	 * clock to its end: every deadline at once) */
	CU_ASSERT_EQUAL(al_sleep_ms(0, NULL), 0);
	al_clock_advance(0);
	CU_ASSERT_EQUAL(al_clock_now_ms(), 5000 + 40 * 60 * 1000 + 500);
	al_clock_advance(UINT64_MAX);
	CU_ASSERT_EQUAL(al_clock_now_ms(), UINT64_MAX);
	al_clock_set_source(NULL);
	CU_ASSERT(!al_clock_is_virtual());
}

static void *sleep_minute(void *arg)
{
	(void)arg;
	al_sleep_ms(60000, NULL);
	return NULL;
}

/* Sleeps that overlap in several threads end at the latest of their ends:
 * eight threads sleeping a minute move the clock by at most eight minutes
 * and at least one, never less. */
static void test_clock__virtual_sleeps_overlap(void)
{
	pthread_t th[8];
	uint64_t moved;
	size_t i;

	al_clock_use_virtual(0, 0);
	for (i = 0; i < 8; i++)
		CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, sleep_minute, NULL), 0);
	for (i = 0; i < 8; i++)
		pthread_join(th[i], NULL);
	moved = al_clock_now_ms();
	CU_ASSERT(moved >= 60000 && moved <= 8 * 60000);
	/* a sleep on a cancelled flag does not move the clock */
	{
		al_cancel *c = NULL;

		CU_ASSERT_EQUAL(al_cancel_new(&c), 0);
		al_cancel_set(c);
		CU_ASSERT_EQUAL(al_sleep_ms(1000, c), AL_ECANCELED);
		CU_ASSERT_EQUAL(al_clock_now_ms(), moved);
		al_cancel_free(c);
	}
	al_clock_set_source(NULL);
}

static uint64_t fixed_now(void *ctx)
{
	return *(uint64_t *)ctx;
}

static int fixed_sleep(void *ctx, uint64_t ms, const al_cancel *c)
{
	(void)c;
	*(uint64_t *)ctx += ms;
	return 0;
}

/* A source of the caller's own: every reading and sleep goes through it. */
static void test_clock__custom_source(void)
{
	uint64_t t = 42;
	al_clock_source src = {fixed_now, fixed_now, fixed_sleep, &t};
	al_deadline d;

	al_clock_set_source(&src);
	CU_ASSERT_EQUAL(al_clock_now_ms(), 42);
	CU_ASSERT_EQUAL(al_clock_wall_ms(), 42);
	d = al_deadline_in(100);
	CU_ASSERT_EQUAL(al_sleep_ms(100, NULL), 0);
	CU_ASSERT_EQUAL(t, 142);
	CU_ASSERT(al_deadline_expired(d));
	al_clock_set_source(NULL);
}

static void test_clock__rfc3339(void)
{
	char b[AL_RFC3339_LEN];
	char *now;

	al_clock_rfc3339(b, 0);
	CU_ASSERT_STRING_EQUAL(b, "1970-01-01T00:00:00Z");
	/* 2026-12-04T05:00:00Z, milliseconds dropped */
	al_clock_rfc3339(b, 1796360400999ULL);
	CU_ASSERT_STRING_EQUAL(b, "2026-12-04T05:00:00Z");
	now = al_clock_rfc3339_now();
	CU_ASSERT_PTR_NOT_NULL_FATAL(now);
	CU_ASSERT_EQUAL(strlen(now), AL_RFC3339_LEN - 1);
	CU_ASSERT_EQUAL(now[AL_RFC3339_LEN - 2], 'Z');
	free(now);
}

int main(void)
{
	CU_TestInfo tests[] = {
		{"test_clock__parses_durations", test_clock__parses_durations},
		{"test_clock__rejects_bad_durations", test_clock__rejects_bad_durations},
		{"test_clock__parses_sizes", test_clock__parses_sizes},
		{"test_clock__deadlines", test_clock__deadlines},
		{"test_clock__rfc3339", test_clock__rfc3339},
		{"test_clock__backoff_stays_in_bounds", test_clock__backoff_stays_in_bounds},
		{"test_clock__sleep_wakes_on_cancel", test_clock__sleep_wakes_on_cancel},
		{"test_clock__virtual_deadline_of_forty_minutes", test_clock__virtual_deadline_of_forty_minutes},
		{"test_clock__virtual_sleeps_overlap", test_clock__virtual_sleeps_overlap},
		{"test_clock__custom_source", test_clock__custom_source},
		CU_TEST_INFO_NULL,
	};
	return al_test_run("clock", tests);
}
