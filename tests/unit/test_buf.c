/* test_buf.c: the bounded buffer, string helpers and base64. */
#include <stdlib.h>
#include <string.h>

#include "airlock/buf.h"
#include "airlock/error.h"
#include "al_test.h"
#include "array_int.h"

static void test_buf__append_and_cstr(void)
{
	al_buf b = AL_BUF_INIT(64);

	CU_ASSERT_STRING_EQUAL(al_buf_cstr(&b), "");
	CU_ASSERT_EQUAL(al_buf_puts(&b, "hello"), 0);
	CU_ASSERT_EQUAL(al_buf_printf(&b, " %d", 42), 0);
	CU_ASSERT_EQUAL(b.len, 8);
	CU_ASSERT_STRING_EQUAL(al_buf_cstr(&b), "hello 42");
	al_buf_free(&b);
}

static void test_buf__refuses_growth_past_max(void)
{
	al_buf b = AL_BUF_INIT(10);

	CU_ASSERT_EQUAL(al_buf_append(&b, "0123456789", 10), 0);
	CU_ASSERT_EQUAL(al_buf_append(&b, "x", 1), AL_ELIMIT);
	CU_ASSERT_EQUAL(b.len, 10);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "10 bytes"));
	CU_ASSERT_EQUAL(al_buf_printf(&b, "%s", "y"), AL_ELIMIT);
	al_buf_free(&b);
}

static void test_buf__detach_transfers_ownership(void)
{
	al_buf b = AL_BUF_INIT(100);
	size_t len = 0;
	char *p;

	al_buf_puts(&b, "abc");
	p = al_buf_detach(&b, &len);
	CU_ASSERT_STRING_EQUAL(p, "abc");
	CU_ASSERT_EQUAL(len, 3);
	CU_ASSERT_PTR_NULL(b.ptr);
	CU_ASSERT_EQUAL(b.len, 0);
	free(p);
	p = al_buf_detach(&b, &len);
	CU_ASSERT_PTR_NOT_NULL(p);
	CU_ASSERT_EQUAL(len, 0);
	free(p);
}

static void test_buf__base64_round_trip(void)
{
	const char *vec[][2] = {{"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"},
				{"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"}};
	size_t i;

	for (i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
		char *enc = al_base64_encode((const uint8_t *)vec[i][0], strlen(vec[i][0]));
		al_buf dec = AL_BUF_INIT(64);
		CU_ASSERT_STRING_EQUAL(enc, vec[i][1]);
		CU_ASSERT_EQUAL(al_base64_decode(&dec, vec[i][1], strlen(vec[i][1])), 0);
		CU_ASSERT_EQUAL(dec.len, strlen(vec[i][0]));
		CU_ASSERT(dec.len == 0 || memcmp(dec.ptr, vec[i][0], dec.len) == 0);
		free(enc);
		al_buf_free(&dec);
	}
}

static void test_buf__base64_rejects_garbage(void)
{
	al_buf dec = AL_BUF_INIT(64);

	CU_ASSERT_EQUAL(al_base64_decode(&dec, "Zm9v!", 5), AL_EPARSE);
	CU_ASSERT_EQUAL(al_base64_decode(&dec, "Z", 1), AL_EPARSE);
	al_buf_free(&dec);
}

static void test_buf__string_helpers(void)
{
	char *s = al_sprintf("%s-%03d", "a", 7);

	CU_ASSERT_STRING_EQUAL(s, "a-007");
	CU_ASSERT(al_str_startswith(s, "a-"));
	CU_ASSERT(!al_str_startswith(s, "b"));
	CU_ASSERT(al_str_endswith(s, "007"));
	CU_ASSERT(!al_str_endswith("7", "007"));
	CU_ASSERT_PTR_NULL(al_strdup(NULL));
	free(s);
}

static void test_buf__writer_appends_and_resets(void)
{
	al_buf b = AL_BUF_INIT(16);
	al_writer w = al_buf_writer(&b);

	CU_ASSERT_EQUAL(w.write(w.ud, (const uint8_t *)"abc", 3), 0);
	CU_ASSERT_EQUAL(w.reset(w.ud), 0);
	CU_ASSERT_EQUAL(w.write(w.ud, (const uint8_t *)"xy", 2), 0);
	CU_ASSERT_STRING_EQUAL(al_buf_cstr(&b), "xy");
	CU_ASSERT_EQUAL(w.write(w.ud, (const uint8_t *)"0123456789abcdef", 16), AL_ELIMIT);
	al_buf_free(&b);
}

static void test_buf__escape_keeps_printable_utf8(void)
{
	char out[256];
	const char *s = "caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x93\xa6 back\\slash";

	CU_ASSERT_EQUAL(al_str_escape(out, sizeof(out), s, strlen(s)),
	                strlen(s));
	CU_ASSERT_STRING_EQUAL(out, s);
	CU_ASSERT_EQUAL(al_str_needs_escape(s, strlen(s)), 0);
}

static void test_buf__escape_controls_and_sequences(void)
{
	static const struct {
		const char *in;
		size_t n;
		const char *out;
	} cases[] = {
	    {"a\nairlock: error: forged", 24,
	     "a\\x0aairlock: error: forged"},
	    {"\x1b[31mred\x1b[0m", 12, "\\x1b[31mred\\x1b[0m"},
	    {"tab\there\r", 9, "tab\\x09here\\x0d"},
	    {"nul\0x", 5, "nul\\x00x"},
	    {"del\x7f", 4, "del\\x7f"},
	    /* C1 CSI, raw and as UTF-8 */
	    {"\x9b" "2J", 3, "\\x9b2J"},
	    {"\xc2\x9b" "2J", 4, "\\xc2\\x9b2J"},
	    /* overlong '/', a surrogate, past U+10FFFF, truncated, stray
	     * continuation */
	    {"\xc0\xaf", 2, "\\xc0\\xaf"},
	    {"\xed\xa0\x80", 3, "\\xed\\xa0\\x80"},
	    {"\xf4\x90\x80\x80", 4, "\\xf4\\x90\\x80\\x80"},
	    {"\xe2\x9c", 2, "\\xe2\\x9c"},
	    {"\x80z", 2, "\\x80z"},
	    /* U+2028 line separator, U+202E right-to-left override */
	    {"\xe2\x80\xa8", 3, "\\xe2\\x80\\xa8"},
	    {"\xe2\x80\xaetxt", 6, "\\xe2\\x80\\xaetxt"},
	};
	char out[256], again[256];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = al_str_escape(out, sizeof(out), cases[i].in,
		                         cases[i].n);

		CU_ASSERT_EQUAL(n, strlen(cases[i].out));
		CU_ASSERT_STRING_EQUAL(out, cases[i].out);
		CU_ASSERT_EQUAL(al_str_needs_escape(cases[i].in, cases[i].n),
		                1);
		/* escaping twice changes nothing */
		al_str_escape(again, sizeof(again), out, strlen(out));
		CU_ASSERT_STRING_EQUAL(again, out);
	}
}

static void test_buf__escape_truncates_at_a_boundary(void)
{
	char out[8];
	al_buf b = AL_BUF_INIT(6);

	/* "ab" + 4-byte escape does not fit in 7 chars + NUL after "abcd" */
	CU_ASSERT_EQUAL(al_str_escape(out, sizeof(out), "abcd\n", 5), 4);
	CU_ASSERT_STRING_EQUAL(out, "abcd");
	CU_ASSERT_EQUAL(al_str_escape(out, sizeof(out), "\xc3\xa9\xc3\xa9"
	                                                "\xc3\xa9\xc3\xa9",
	                              8),
	                6);
	CU_ASSERT_STRING_EQUAL(out, "\xc3\xa9\xc3\xa9\xc3\xa9");
	CU_ASSERT_EQUAL(al_str_escape(out, 1, "abc", 3), 0);
	CU_ASSERT_STRING_EQUAL(out, "");
	CU_ASSERT_EQUAL(al_buf_append_escaped(&b, "a\x1b", 2), 0);
	CU_ASSERT_STRING_EQUAL(al_buf_cstr(&b), "a\\x1b");
	CU_ASSERT_EQUAL(al_buf_append_escaped(&b, "\n", 1), AL_ELIMIT);
	CU_ASSERT_STRING_EQUAL(al_buf_cstr(&b), "a\\x1b");
	al_buf_free(&b);
}

/* the capacity doubles: n appends move the array O(log n) times */
static void test_buf__array_grows_by_doubling(void)
{
	size_t *v = NULL, cap = 0, i, moves = 0;

	for (i = 0; i < 100000; i++) {
		size_t before = cap;
		size_t *g = al__array_grow(v, &cap, i + 1, sizeof(*v));

		CU_ASSERT_PTR_NOT_NULL_FATAL(g);
		if (cap != before)
			moves++;
		v = g;
		v[i] = i;
		CU_ASSERT_TRUE_FATAL(cap >= i + 1 && cap <= 2 * (i + 1));
	}
	CU_ASSERT_EQUAL(moves, 18); /* 1, 2, 4, ... 131072 */
	for (i = 0; i < 100000; i++)
		if (v[i] != i)
			break;
	CU_ASSERT_EQUAL(i, 100000);
	/* room already there: the same array, capacity unchanged */
	CU_ASSERT_PTR_EQUAL(al__array_grow(v, &cap, 5, sizeof(*v)), v);
	free(v);
	/* a size that overflows is refused, the array untouched */
	v = NULL;
	cap = 0;
	CU_ASSERT_PTR_NULL(al__array_grow(v, &cap, SIZE_MAX / 2, 4));
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "out of memory"));
	CU_ASSERT_EQUAL(cap, 0);
}

int main(void)
{
	CU_TestInfo tests[] = {
		{"test_buf__append_and_cstr", test_buf__append_and_cstr},
		{"test_buf__refuses_growth_past_max", test_buf__refuses_growth_past_max},
		{"test_buf__detach_transfers_ownership", test_buf__detach_transfers_ownership},
		{"test_buf__base64_round_trip", test_buf__base64_round_trip},
		{"test_buf__base64_rejects_garbage", test_buf__base64_rejects_garbage},
		{"test_buf__string_helpers", test_buf__string_helpers},
		{"test_buf__writer_appends_and_resets", test_buf__writer_appends_and_resets},
		{"test_buf__escape_keeps_printable_utf8", test_buf__escape_keeps_printable_utf8},
		{"test_buf__escape_controls_and_sequences", test_buf__escape_controls_and_sequences},
		{"test_buf__escape_truncates_at_a_boundary", test_buf__escape_truncates_at_a_boundary},
		{"test_buf__array_grows_by_doubling", test_buf__array_grows_by_doubling},
		CU_TEST_INFO_NULL,
	};
	return al_test_run("buf", tests);
}
