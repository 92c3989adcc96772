/* test_serve_auth.c: unit tests for airlock serve's credentials (htpasswd
 * hashes, bearer tokens) and the push side's grammar checks (names, tags,
 * Content-Range). */
/* al-tier: quick */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "airlock/buf.h"
#include "airlock/error.h"
#include "serve_int.h"
#include "al_test.h"

/*
 * Vectors: "openssl passwd -apr1 / -5 / -6 -salt S PW" (OpenSSL 3.0, its
 * own implementations of the algorithms); the $5$ saltstring one is also
 * the first test vector of Drepper's "Unix crypt using SHA-256 and
 * SHA-512". The htpasswd lines below were made by Apache's htpasswd 2.4
 * (-s, -m, -2, -5, -B).
 */
static void check_hash(int (*fn)(const char *, const char *, char *, size_t),
                       const char *pw, const char *setting, const char *want)
{
	char out[256];

	memset(out, 0, sizeof(out));
	CU_ASSERT_EQUAL(fn(pw, setting, out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, want);
}

static void test_serve_auth__apr1_matches_openssl(void)
{
	check_hash(al_serve__apr1, "correct horse", "$apr1$rC1Tx9gV$",
	           "$apr1$rC1Tx9gV$rKpF0kmGxOJI/F7fXqrX1/");
	/* the setting may be the whole hash */
	check_hash(al_serve__apr1, "correct horse",
	           "$apr1$rC1Tx9gV$rKpF0kmGxOJI/F7fXqrX1/",
	           "$apr1$rC1Tx9gV$rKpF0kmGxOJI/F7fXqrX1/");
	check_hash(al_serve__apr1, "", "$apr1$a$",
	           "$apr1$a$lsAcX0kKaMIVmrCtUuk5b0");
}

static void test_serve_auth__sha_crypt_matches_openssl(void)
{
	check_hash(al_serve__sha_crypt, "Hello world!", "$5$saltstring$",
	           "$5$saltstring$5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5");
	check_hash(al_serve__sha_crypt, "Hello world!", "$6$saltstring$",
	           "$6$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/"
	           "O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1");
	/* custom rounds; a salt past 16 characters is cut */
	check_hash(al_serve__sha_crypt, "Hello world!",
	           "$5$rounds=10000$saltstringsaltstring$",
	           "$5$rounds=10000$saltstringsaltst$"
	           "3xv.VbSHBb41AL9AvLeujZkZRBAwqFMz2.opqey6IcA");
	/* a password longer than the hash */
	check_hash(al_serve__sha_crypt,
	           "a very much longer password that exceeds sixty-four bytes "
	           "of length for sure, yes",
	           "$6$toolongsaltstring0123$",
	           "$6$toolongsaltstrin$9V4wV9v8CbCnChDjY.2Imt1rRziyTPnuUUwpqhH"
	           "ZoDbEdbWAi4qnlo7X4CL1mbEXrlYiWEiwHZ29K9KTyNP170");
}

static char *write_file(const char *name, const char *text)
{
	char *path = al_sprintf("%s/%s", al_test_tmpdir(), name);
	FILE *f = path != NULL ? fopen(path, "w") : NULL;

	if (f != NULL) {
		fputs(text, f);
		fclose(f);
	}
	return path;
}

/* "Basic " and base64 of user:pw. Caller frees. */
static char *basic(const char *user, const char *pw)
{
	char *up = al_sprintf("%s:%s", user, pw), *b = NULL, *h = NULL;

	if (up != NULL)
		b = al_base64_encode((const uint8_t *)up, strlen(up));
	if (b != NULL)
		h = al_sprintf("Basic %s", b);
	free(up);
	free(b);
	return h;
}

static int try_basic(al_serve_auth *a, const char *user, const char *pw)
{
	char *h = basic(user, pw);
	int ok = al_serve__auth_check(a, h);

	free(h);
	return ok;
}

static void test_serve_auth__htpasswd_lines_of_every_format(void)
{
	char *path = write_file(
	    "htpasswd",
	    "# users\n"
	    "alice:{SHA}/vNB+F2HQ559kaLUZbmHHvZrXpg=\n"
	    "bob:$apr1$IUqMIBhg$FHv6hfzs8q.gjDpTQEGyd/\r\n"
	    "carol:$5$NvePbPL1p1gubLdZ$YCaDbKpm7uPDP/"
	    ".4zMMYQAbST57xPTfe7R5HfeTauSB\n"
	    "\n"
	    "dave:$6$sfjdaJeRuTFv3M5j$fZy4RqzqBfMP2rUGxuVsyb10hR607HKVqc0qcJ1j"
	    "6l5c6aMgeAIKfQT4qN4lqpe06TXWdW6M8RA6c9YsO0Qsh0\n");
	al_serve_auth *a = NULL;

	CU_ASSERT_EQUAL(al_serve__auth_load(&a, path, NULL), 0);
	CU_ASSERT_TRUE(a != NULL && al_serve__auth_has_basic(a));
	CU_ASSERT_TRUE(a != NULL && !al_serve__auth_has_bearer(a));
	CU_ASSERT_TRUE(try_basic(a, "alice", "s3cret"));
	CU_ASSERT_TRUE(try_basic(a, "bob", "p\xc3\xa4ssword"));
	CU_ASSERT_TRUE(try_basic(a, "carol", "pw5"));
	CU_ASSERT_TRUE(try_basic(a, "dave", "pw6"));
	/* twice: the second answer comes from the cache of accepted ones */
	CU_ASSERT_TRUE(try_basic(a, "dave", "pw6"));
	CU_ASSERT_FALSE(try_basic(a, "alice", "s3cre"));
	CU_ASSERT_FALSE(try_basic(a, "bob", "pw6"));
	CU_ASSERT_FALSE(try_basic(a, "dave", "pw5"));
	CU_ASSERT_FALSE(try_basic(a, "mallory", "s3cret"));
	CU_ASSERT_FALSE(try_basic(a, "alice:s3cret", ""));
	CU_ASSERT_FALSE(al_serve__auth_check(a, NULL));
	CU_ASSERT_FALSE(al_serve__auth_check(a, "Basic"));
	CU_ASSERT_FALSE(al_serve__auth_check(a, "Basic !!!!"));
	CU_ASSERT_FALSE(al_serve__auth_check(a, "Bearer s3cret"));
	al_serve__auth_free(a);
	free(path);
}

static void test_serve_auth__bcrypt_lines(void)
{
	/* htpasswd -nbB -C 4 alice 'correct horse' and -C 5 bob 'b0b:with
	 * colon' (Apache 2.4.71); carol's is Go's TestBcryptingIsCorrect */
	char *path = write_file(
	    "bcrypt",
	    "alice:$2y$04$wRz5FseuFwZTBB3XvSAYZ."
	    "QlL2mDSRnPDiRfoyxU4PPOh68BMHjta\n"
	    "bob:$2y$05$FL54pATa4FZE7CLK44VDq.277/bWFWwoD2eA18fNz6ewyFXAm.0Aq\n"
	    "carol:$2a$10$XajjQvNhvvRt5GSeFk1xFeyqRrsxkhBkUiQeg0dt."
	    "wU1qD4aFDcga\n"
	    "dave:{SHA}/vNB+F2HQ559kaLUZbmHHvZrXpg=\n");
	al_serve_auth *a = NULL;
	int i;

	CU_ASSERT_EQUAL(al_serve__auth_load(&a, path, NULL), 0);
	CU_ASSERT_TRUE(try_basic(a, "alice", "correct horse"));
	CU_ASSERT_TRUE(try_basic(a, "bob", "b0b:with colon"));
	CU_ASSERT_TRUE(try_basic(a, "carol", "allmine"));
	CU_ASSERT_TRUE(try_basic(a, "dave", "s3cret"));
	/* wrong ones stay wrong when asked again (answered from memory the
	 * second time), and do not spoil the right one */
	for (i = 0; i < 3; i++) {
		CU_ASSERT_FALSE(try_basic(a, "alice", "correct horsE"));
		CU_ASSERT_FALSE(try_basic(a, "alice", "allmine"));
		CU_ASSERT_FALSE(try_basic(a, "carol", "correct horse"));
		CU_ASSERT_FALSE(try_basic(a, "mallory", "correct horse"));
		CU_ASSERT_TRUE(try_basic(a, "alice", "correct horse"));
	}
	al_serve__auth_free(a);
	free(path);
}

static void test_serve_auth__bad_lines_refused_with_file_and_line(void)
{
	char *path = write_file(
	    "cost13", "alice:{SHA}/vNB+F2HQ559kaLUZbmHHvZrXpg=\n"
	              "eve:$2y$13$jT3FrvQUt/"
	              "EHhKpz4g214OHSSHtZmFB8yYfG8h3oeimSum2VNXenC\n");
	char *where = al_sprintf("%s:2", path);
	al_serve_auth *a = NULL;

	/* a cost above the bound (12) stops the start */
	CU_ASSERT_EQUAL(al_serve__auth_load(&a, path, NULL), AL_ELIMIT);
	CU_ASSERT_PTR_NULL(a);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), where));
	free(where);
	free(path);
	/* so does a bcrypt hash cut short, or $2x$ (crypt_blowfish's buggy
	 * variant) */
	path = write_file("short", "# x\neve:$2y$05$jT3FrvQUt/EHhKpz4g214O\n");
	where = al_sprintf("%s:2", path);
	CU_ASSERT_EQUAL(al_serve__auth_load(&a, path, NULL), AL_EPARSE);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), where));
	free(where);
	free(path);
	path =
	    write_file("2x", "eve:$2x$05$jT3FrvQUt/"
	                     "EHhKpz4g214OHSSHtZmFB8yYfG8h3oeimSum2VNXenC\n");
	CU_ASSERT_EQUAL(al_serve__auth_load(&a, path, NULL), AL_EUNSUPPORTED);
	free(path);
	/* a DES crypt line (htpasswd -d) is no better */
	path = write_file("des", "x:rqXexS6ZhobKA\n");
	CU_ASSERT_EQUAL(al_serve__auth_load(&a, path, NULL), AL_EUNSUPPORTED);
	free(path);
	path = write_file("empty", "# nobody\n");
	CU_ASSERT_EQUAL(al_serve__auth_load(&a, path, NULL), AL_EINVAL);
	free(path);
}

typedef struct many_arg {
	al_serve_auth *a;
	int wrong, right;
} many_arg;

static void *many_checks(void *p)
{
	many_arg *m = p;
	char pw[32];
	int i;

	for (i = 0; i < 6; i++) {
		snprintf(pw, sizeof(pw), "wrong %d", i);
		m->wrong += try_basic(m->a, "alice", pw);
		m->right += try_basic(m->a, "alice", "correct horse");
	}
	return NULL;
}

static void test_serve_auth__concurrent_checks(void)
{
	char *path = write_file("many", "alice:$2y$04$wRz5FseuFwZTBB3XvSAYZ."
	                                "QlL2mDSRnPDiRfoyxU4PPOh68BMHjta\n");
	al_serve_auth *a = NULL;
	many_arg m[6];
	pthread_t t[6];
	int i, started[6];

	CU_ASSERT_EQUAL_FATAL(al_serve__auth_load(&a, path, NULL), 0);
	/* more threads than hashing slots: each waits its turn */
	for (i = 0; i < 6; i++) {
		m[i].a = a;
		m[i].wrong = m[i].right = 0;
		started[i] =
		    pthread_create(&t[i], NULL, many_checks, &m[i]) == 0;
	}
	for (i = 0; i < 6; i++) {
		CU_ASSERT_TRUE(started[i]);
		if (started[i])
			pthread_join(t[i], NULL);
		CU_ASSERT_EQUAL(m[i].wrong, 0);
		CU_ASSERT_EQUAL(m[i].right, started[i] ? 6 : 0);
	}
	al_serve__auth_free(a);
	free(path);
}

static void test_serve_auth__bearer_tokens_hashed(void)
{
	/* a token, and the SHA-256 of another one (presenting the hash itself
	 * is no token) */
	char *path = write_file(
	    "tokens",
	    "first-token-0123456789\n"
	    "sha256:"
	    "d7d6dc9b7d7b59e5d81b3b3b3a0f0b2b6c3c8b5f1b0c1e6a2e8f1b7c8d1e0f3a"
	    "\n");
	char *short_path = write_file("short", "tooshort\n");
	char *bad_hex = write_file("badhex", "sha256:XYZ\n");
	al_serve_auth *a = NULL;

	CU_ASSERT_EQUAL(al_serve__auth_load(&a, NULL, path), 0);
	CU_ASSERT_TRUE(a != NULL && al_serve__auth_has_bearer(a));
	CU_ASSERT_TRUE(
	    al_serve__auth_check(a, "Bearer first-token-0123456789"));
	CU_ASSERT_TRUE(
	    al_serve__auth_check(a, "bearer first-token-0123456789"));
	CU_ASSERT_FALSE(
	    al_serve__auth_check(a, "Bearer first-token-012345678"));
	CU_ASSERT_FALSE(al_serve__auth_check(a, "Bearer "));
	CU_ASSERT_FALSE(
	    al_serve__auth_check(a, "Bearer sha256:"
	                            "d7d6dc9b7d7b59e5d81b3b3b3a0f0b2b6c3c8b5f1b"
	                            "0c1e6a2e8f1b7c8d1e0f3a"));
	CU_ASSERT_FALSE(al_serve__auth_check(a, "Basic Zmlyc3Q6eA=="));
	al_serve__auth_free(a);
	a = NULL;
	CU_ASSERT_EQUAL(al_serve__auth_load(&a, NULL, short_path), AL_EPARSE);
	CU_ASSERT_EQUAL(al_serve__auth_load(&a, NULL, bad_hex), AL_EPARSE);
	CU_ASSERT_PTR_NULL(a);
	free(path);
	free(short_path);
	free(bad_hex);
}

static void test_serve_auth__token_hash_line_accepts_its_token(void)
{
	/* the sha256: form of a token is that token's SHA-256, computed
	 * here with the library's digest */
	const char *tok = "0123456789abcdef-token-two";
	char ds[AL_DIGEST_STRMAX], *text, *path;
	al_serve_auth *a = NULL;
	al_digest d;

	CU_ASSERT_EQUAL(al_digest_bytes(&d, AL_DIGEST_SHA256,
	                                (const uint8_t *)tok, strlen(tok)),
	                0);
	al_digest_str(&d, ds);
	text = al_sprintf("%s\n", ds);
	path = write_file("tokhash", text);
	CU_ASSERT_EQUAL(al_serve__auth_load(&a, NULL, path), 0);
	CU_ASSERT_TRUE(
	    al_serve__auth_check(a, "Bearer 0123456789abcdef-token-two"));
	CU_ASSERT_FALSE(
	    al_serve__auth_check(a, "Bearer 0123456789abcdef-token-tw"));
	al_serve__auth_free(a);
	free(text);
	free(path);
}

static void test_serve_auth__names_tags_and_content_range(void)
{
	uint64_t a, b;

	CU_ASSERT_TRUE(al_serve__repo_valid("ns/repo"));
	CU_ASSERT_TRUE(al_serve__repo_valid("a/b.c/d__e/f-g--h/x"));
	CU_ASSERT_TRUE(al_serve__repo_valid("quay.io/ns/repo"));
	CU_ASSERT_FALSE(al_serve__repo_valid(""));
	CU_ASSERT_FALSE(al_serve__repo_valid(".."));
	CU_ASSERT_FALSE(al_serve__repo_valid("ns/../repo"));
	CU_ASSERT_FALSE(al_serve__repo_valid("ns/./repo"));
	CU_ASSERT_FALSE(al_serve__repo_valid("/ns"));
	CU_ASSERT_FALSE(al_serve__repo_valid("ns/"));
	CU_ASSERT_FALSE(al_serve__repo_valid("ns//repo"));
	CU_ASSERT_FALSE(al_serve__repo_valid("Ns/repo"));
	CU_ASSERT_FALSE(al_serve__repo_valid("ns/re___po"));
	CU_ASSERT_FALSE(al_serve__repo_valid("ns/repo-"));
	CU_ASSERT_FALSE(al_serve__repo_valid("ns/re%2fpo"));
	CU_ASSERT_TRUE(al_serve__tag_valid("v1.2_3-x"));
	CU_ASSERT_TRUE(al_serve__tag_valid("_x"));
	CU_ASSERT_FALSE(al_serve__tag_valid(".x"));
	CU_ASSERT_FALSE(al_serve__tag_valid("-x"));
	CU_ASSERT_FALSE(al_serve__tag_valid("a/b"));
	CU_ASSERT_FALSE(al_serve__tag_valid(""));
	CU_ASSERT_EQUAL(al_serve__parse_content_range("0-99", &a, &b), 0);
	CU_ASSERT_TRUE(a == 0 && b == 99);
	CU_ASSERT_EQUAL(
	    al_serve__parse_content_range("bytes 100-199/300", &a, &b), 0);
	CU_ASSERT_TRUE(a == 100 && b == 199);
	CU_ASSERT_EQUAL(al_serve__parse_content_range("bytes 5-9/*", &a, &b),
	                0);
	CU_ASSERT_EQUAL(al_serve__parse_content_range("9-5", &a, &b), -1);
	CU_ASSERT_EQUAL(al_serve__parse_content_range("-5", &a, &b), -1);
	CU_ASSERT_EQUAL(al_serve__parse_content_range("0-", &a, &b), -1);
	CU_ASSERT_EQUAL(al_serve__parse_content_range("0-9x", &a, &b), -1);
	CU_ASSERT_EQUAL(al_serve__parse_content_range("bytes 0-9/5", &a, &b),
	                -1);
	CU_ASSERT_EQUAL(
	    al_serve__parse_content_range("0-99999999999999999999", &a, &b),
	    -1);
}

int main(void)
{
	CU_TestInfo tests[] = {
	    {"apr1_matches_openssl", test_serve_auth__apr1_matches_openssl},
	    {"sha_crypt_matches_openssl",
	     test_serve_auth__sha_crypt_matches_openssl},
	    {"htpasswd_lines_of_every_format",
	     test_serve_auth__htpasswd_lines_of_every_format},
	    {"bcrypt_lines", test_serve_auth__bcrypt_lines},
	    {"bad_lines_refused_with_file_and_line",
	     test_serve_auth__bad_lines_refused_with_file_and_line},
	    {"concurrent_checks", test_serve_auth__concurrent_checks},
	    {"bearer_tokens_hashed", test_serve_auth__bearer_tokens_hashed},
	    {"token_hash_line_accepts_its_token",
	     test_serve_auth__token_hash_line_accepts_its_token},
	    {"names_tags_and_content_range",
	     test_serve_auth__names_tags_and_content_range},
	    CU_TEST_INFO_NULL,
	};

	return al_test_run("serve_auth", tests);
}
