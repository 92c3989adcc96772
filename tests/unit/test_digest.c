/* test_digest.c: digest parsing/formatting and streaming SHA-256/512 against known vectors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "airlock/digest.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/buf.h"
#include "al_test.h"

#define ABC256 "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
#define EMPTY256 "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

static void test_digest__parses_and_formats(void)
{
	al_digest d;
	char s[AL_DIGEST_STRMAX];

	CU_ASSERT_EQUAL(al_digest_parse_str(&d, ABC256), 0);
	CU_ASSERT_EQUAL(d.algo, AL_DIGEST_SHA256);
	CU_ASSERT_EQUAL(d.len, 32);
	CU_ASSERT_STRING_EQUAL(al_digest_str(&d, s), ABC256);
	CU_ASSERT_STRING_EQUAL(al_digest_hex(&d, s), ABC256 + 7);
}

static void test_digest__rejects_uppercase_hex(void)
{
	al_digest d;

	CU_ASSERT_EQUAL(al_digest_parse_str(&d, "sha256:BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD"), AL_EPARSE);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "lowercase"));
}

static void test_digest__rejects_malformed(void)
{
	al_digest d;

	CU_ASSERT_EQUAL(al_digest_parse_str(&d, "sha256:abc"), AL_EPARSE);
	CU_ASSERT_EQUAL(al_digest_parse_str(&d, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"), AL_EPARSE);
	CU_ASSERT_EQUAL(al_digest_parse_str(&d, ":ba78"), AL_EPARSE);
	CU_ASSERT_EQUAL(al_digest_parse_str(&d, ""), AL_EPARSE);
	CU_ASSERT_EQUAL(al_digest_parse_str(&d, "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad0"), AL_EPARSE);
	CU_ASSERT_EQUAL(al_digest_parse_str(&d, "md5:d41d8cd98f00b204e9800998ecf8427e"), AL_EUNSUPPORTED);
	CU_ASSERT_EQUAL(al_digest_parse_str(&d, "SHA256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"), AL_EPARSE);
}

static void test_digest__one_shot_and_streaming_agree(void)
{
	al_digest a, b, e;
	al_hasher *h = NULL;
	char s[AL_DIGEST_STRMAX];

	CU_ASSERT_EQUAL(al_digest_bytes(&a, AL_DIGEST_SHA256, "abc", 3), 0);
	CU_ASSERT_STRING_EQUAL(al_digest_str(&a, s), ABC256);
	CU_ASSERT_EQUAL(al_hasher_new(&h, AL_DIGEST_SHA256), 0);
	al_hasher_update(h, "a", 1);
	al_hasher_update(h, "bc", 2);
	CU_ASSERT_EQUAL(al_hasher_final(h, &b), 0);
	CU_ASSERT(al_digest_equal(&a, &b));
	/* the hasher is reusable after final */
	CU_ASSERT_EQUAL(al_hasher_final(h, &e), 0);
	CU_ASSERT_STRING_EQUAL(al_digest_str(&e, s), EMPTY256);
	al_hasher_free(h);
	al_hasher_free(NULL);
}

static void test_digest__sha512_vector(void)
{
	al_digest d, p;
	char s[AL_DIGEST_STRMAX];

	CU_ASSERT_EQUAL(al_digest_bytes(&d, AL_DIGEST_SHA512, "abc", 3), 0);
	al_digest_str(&d, s);
	CU_ASSERT_STRING_EQUAL(s, "sha512:ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f");
	CU_ASSERT_EQUAL(al_digest_parse_str(&p, s), 0);
	CU_ASSERT(al_digest_equal(&d, &p));
}

static void test_digest__file_streams_and_counts(void)
{
	char *path = al_path_join(al_test_tmpdir(), "digest-file");
	uint8_t *data = malloc(1000003);
	al_digest a, b;
	uint64_t size = 0;
	size_t i;

	for (i = 0; i < 1000003; i++)
		data[i] = (uint8_t)(i * 31 + 7);
	CU_ASSERT_EQUAL(al_fs_write_atomic(path, data, 1000003), 0);
	CU_ASSERT_EQUAL(al_digest_file(&a, AL_DIGEST_SHA256, path, &size), 0);
	CU_ASSERT_EQUAL(size, 1000003);
	al_digest_bytes(&b, AL_DIGEST_SHA256, data, 1000003);
	CU_ASSERT(al_digest_equal(&a, &b));
	CU_ASSERT_EQUAL(al_digest_file(&a, AL_DIGEST_SHA256, "/nonexistent/x", NULL), AL_ENOTFOUND);
	free(data);
	free(path);
}

/* The worker's digest of chunks equals the one-shot digest; a second
 * submit before wait is refused; the worker is reusable across hashers. */
static void test_digest__hash_worker_matches_one_shot(void)
{
	enum { N = 3 << 20, CHUNK = 300000 };
	uint8_t *data = malloc(N);
	al_hash_worker *hw = NULL;
	al_hasher *h = NULL;
	al_digest a, b;
	size_t i, off;
	int round;

	CU_ASSERT_PTR_NOT_NULL_FATAL(data);
	for (i = 0; i < N; i++)
		data[i] = (uint8_t)(i * 131 + (i >> 11));
	CU_ASSERT_EQUAL_FATAL(al_hash_worker_new(&hw), 0);
	CU_ASSERT_EQUAL_FATAL(al_hasher_new(&h, AL_DIGEST_SHA256), 0);
	al_digest_bytes(&b, AL_DIGEST_SHA256, data, N);
	for (round = 0; round < 2; round++) {
		for (off = 0; off < N; off += CHUNK) {
			size_t n = N - off < CHUNK ? N - off : CHUNK;
			CU_ASSERT_EQUAL(al_hash_worker_submit(hw, h, data + off, n), 0);
			if (off == 0)
				CU_ASSERT_EQUAL(al_hash_worker_submit(hw, h, data, 1), AL_EINVAL);
			CU_ASSERT_EQUAL(al_hash_worker_wait(hw), 0);
		}
		CU_ASSERT_EQUAL(al_hasher_final(h, &a), 0);
		CU_ASSERT(al_digest_equal(&a, &b));
	}
	/* waiting with nothing submitted returns at once */
	CU_ASSERT_EQUAL(al_hash_worker_wait(hw), 0);
	al_hasher_free(h);
	al_hash_worker_free(hw);
	al_hash_worker_free(NULL);
	free(data);
}

int main(void)
{
	CU_TestInfo tests[] = {
		{"test_digest__parses_and_formats", test_digest__parses_and_formats},
		{"test_digest__rejects_uppercase_hex", test_digest__rejects_uppercase_hex},
		{"test_digest__rejects_malformed", test_digest__rejects_malformed},
		{"test_digest__one_shot_and_streaming_agree", test_digest__one_shot_and_streaming_agree},
		{"test_digest__sha512_vector", test_digest__sha512_vector},
		{"test_digest__file_streams_and_counts", test_digest__file_streams_and_counts},
		{"test_digest__hash_worker_matches_one_shot", test_digest__hash_worker_matches_one_shot},
		CU_TEST_INFO_NULL,
	};
	return al_test_run("digest", tests);
}
