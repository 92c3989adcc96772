/* test_buf.c: the bounded buffer, string helpers and base64. */
#include <stdlib.h>
#include <string.h>

#include "airlock/buf.h"
#include "airlock/error.h"
#include "al_test.h"

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
		CU_TEST_INFO_NULL,
	};
	return al_test_run("buf", tests);
}
