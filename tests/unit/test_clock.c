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
	uint64_t start;

	CU_ASSERT_EQUAL(al_cancel_new(&c), 0);
	CU_ASSERT(!al_cancel_is_set(c));
	CU_ASSERT(!al_cancel_is_set(NULL));
	pthread_create(&th, NULL, cancel_later, c);
	start = al_clock_now_ms();
	CU_ASSERT_EQUAL(al_sleep_ms(10000, c), AL_ECANCELED);
	CU_ASSERT(al_clock_now_ms() - start < 2000);
	pthread_join(th, NULL);
	CU_ASSERT(al_cancel_is_set(c));
	al_cancel_free(c);
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
		CU_TEST_INFO_NULL,
	};
	return al_test_run("clock", tests);
}
