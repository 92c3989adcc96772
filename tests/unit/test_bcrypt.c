/* test_bcrypt.c: unit tests for bcrypt ($2a$, $2b$, $2y$): Blowfish's
 * tables from pi, known answers of Go, libxcrypt and Apache's htpasswd,
 * the form of a hash, the 72-byte key. */
/* al-tier: quick */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "airlock/error.h"
#include "bcrypt.h"
#include "al_test.h"

static int check(const char *hash, const char *pw)
{
	return al_bcrypt_check(hash, (const uint8_t *)pw, strlen(pw));
}

static void test_bcrypt__pi_tables(void)
{
	const uint32_t *w = NULL;

	CU_ASSERT_EQUAL(al_bcrypt__pi_words(&w), 0);
	if (w == NULL)
		return;
	/* Schneier's P-array starts with pi's first fractional hex digits;
	 * the first S-box with the words after the 18 of P; the fourth ends
	 * with 0x3AC372E6 */
	CU_ASSERT_EQUAL(w[0], 0x243F6A88u);
	CU_ASSERT_EQUAL(w[1], 0x85A308D3u);
	CU_ASSERT_EQUAL(w[17], 0x8979FB1Bu);
	CU_ASSERT_EQUAL(w[18], 0xD1310BA6u);
	CU_ASSERT_EQUAL(w[19], 0x98DFB5ACu);
	CU_ASSERT_EQUAL(w[18 + 256], 0x4B7A70E9u);
	CU_ASSERT_EQUAL(w[1041], 0x3AC372E6u);
}

static void test_bcrypt__go_vectors(void)
{
	char out[AL_BCRYPT_LEN + 1];
	const char *lp =
	    "012345678901234567890123456789012345678901234567890123456";

	CU_ASSERT_EQUAL(al_bcrypt_hash((const uint8_t *)"allmine", 7,
	                               "$2a$10$XajjQvNhvvRt5GSeFk1xFe", out,
	                               sizeof(out)),
	                0);
	CU_ASSERT_STRING_EQUAL(
	    out,
	    "$2a$10$XajjQvNhvvRt5GSeFk1xFeyqRrsxkhBkUiQeg0dt.wU1qD4aFDcga");
	CU_ASSERT_EQUAL(
	    check(
	        "$2a$10$XajjQvNhvvRt5GSeFk1xFe5l47dONXg781AmZtd869sO8zfsHuw7C",
	        lp),
	    1);
	CU_ASSERT_EQUAL(
	    check(
	        "$2a$10$XajjQvNhvvRt5GSeFk1xFeyqRrsxkhBkUiQeg0dt.wU1qD4aFDcga",
	        "allmina"),
	    0);
}

static int hexval(char c)
{
	return c >= '0' && c <= '9'   ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	                              : -1;
}

static void test_bcrypt__libxcrypt_vectors(void)
{
	char *path = NULL, line[1024];
	uint8_t pw[400];
	FILE *f;
	int n = 0, bad = 0, other = 0;

	path = malloc(strlen(al_test_source_dir()) + 64);
	CU_ASSERT_PTR_NOT_NULL_FATAL(path);
	snprintf(path, strlen(al_test_source_dir()) + 64,
	         "%s/tests/fixtures/bcrypt/libxcrypt-cost4.tsv",
	         al_test_source_dir());
	f = fopen(path, "r");
	CU_ASSERT_PTR_NOT_NULL(f);
	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		char *tab = strchr(line, '\t');
		size_t len, i;

		if (line[0] == '#' || tab == NULL)
			continue;
		*tab = '\0';
		len = strcspn(tab + 1, "\r\n") / 2;
		if (len > sizeof(pw)) {
			bad++;
			continue;
		}
		for (i = 0; i < len; i++)
			pw[i] = (uint8_t)(hexval(tab[1 + 2 * i]) << 4 |
			                  hexval(tab[2 + 2 * i]));
		n++;
		if (al_bcrypt_check(line, pw, len) != 1) {
			printf("\nno match: %s\n", line);
			bad++;
		}
		/* one byte changed: no match */
		if (len > 0) {
			pw[len - 1] ^= 1;
			other += al_bcrypt_check(line, pw, len) != 0;
		}
	}
	if (f != NULL)
		fclose(f);
	CU_ASSERT_EQUAL(n, 548);
	CU_ASSERT_EQUAL(bad, 0);
	/* a changed byte past the 72nd is no change: those are the only
	 * matches expected here */
	CU_ASSERT_TRUE(other > 0 && other < 60);
	free(path);
}

static void test_bcrypt__htpasswd_lines(void)
{
	/* htpasswd -nbB -C 4 alice 'correct horse', -C 5 bob 'b0b:with
	 * colon' (Apache 2.4.71, Debian 12) */
	CU_ASSERT_EQUAL(check("$2y$04$wRz5FseuFwZTBB3XvSAYZ."
	                      "QlL2mDSRnPDiRfoyxU4PPOh68BMHjta",
	                      "correct horse"),
	                1);
	CU_ASSERT_EQUAL(check("$2y$05$FL54pATa4FZE7CLK44VDq."
	                      "277/bWFWwoD2eA18fNz6ewyFXAm.0Aq",
	                      "b0b:with colon"),
	                1);
	CU_ASSERT_EQUAL(check("$2y$04$wRz5FseuFwZTBB3XvSAYZ."
	                      "QlL2mDSRnPDiRfoyxU4PPOh68BMHjta",
	                      "correct horsE"),
	                0);
	CU_ASSERT_EQUAL(check("$2y$04$wRz5FseuFwZTBB3XvSAYZ."
	                      "QlL2mDSRnPDiRfoyxU4PPOh68BMHjta",
	                      ""),
	                0);
}

static void test_bcrypt__key_is_72_bytes(void)
{
	char h1[AL_BCRYPT_LEN + 1], h2[AL_BCRYPT_LEN + 1];
	uint8_t pw[100];
	const char *set = "$2b$04$abcdefghijklmnopqrstuu";

	memset(pw, 'x', sizeof(pw));
	/* bytes past the 72nd change nothing */
	CU_ASSERT_EQUAL(al_bcrypt_hash(pw, 72, set, h1, sizeof(h1)), 0);
	pw[72] = 'y';
	CU_ASSERT_EQUAL(al_bcrypt_hash(pw, 100, set, h2, sizeof(h2)), 0);
	CU_ASSERT_STRING_EQUAL(h1, h2);
	/* the 72nd does, and so does the NUL after 71 */
	pw[71] = 'y';
	CU_ASSERT_EQUAL(al_bcrypt_hash(pw, 72, set, h2, sizeof(h2)), 0);
	CU_ASSERT_STRING_NOT_EQUAL(h1, h2);
	pw[71] = 'x';
	CU_ASSERT_EQUAL(al_bcrypt_hash(pw, 71, set, h2, sizeof(h2)), 0);
	CU_ASSERT_STRING_NOT_EQUAL(h1, h2);
	/* the variant letter is echoed, the hash the same for all three */
	CU_ASSERT_EQUAL(al_bcrypt_hash(pw, 72, "$2y$04$abcdefghijklmnopqrstuu",
	                               h2, sizeof(h2)),
	                0);
	CU_ASSERT_STRING_EQUAL(h1 + 4, h2 + 4);
	CU_ASSERT_EQUAL(h2[2], 'y');
}

static void test_bcrypt__malformed_hashes_refused(void)
{
	static const char *const bad[] = {
	    /* Go's invalidTests */
	    "$2a$10$fooo",
	    "$2a",
	    "$3a$10$sssssssssssssssssssssshhhhhhhhhhhhhhhhhhhhhhhhhhhhhhh",
	    "%2a$10$sssssssssssssssssssssshhhhhhhhhhhhhhhhhhhhhhhhhhhhhhh",
	    "$2a$32$sssssssssssssssssssssshhhhhhhhhhhhhhhhhhhhhhhhhhhhhhh",
	    /* cost below 4, one digit, "$2$" and "$2x$", characters outside
	     * the alphabet, one character too many or too few */
	    "$2a$03$sssssssssssssssssssssshhhhhhhhhhhhhhhhhhhhhhhhhhhhhhh",
	    "$2a$4$ssssssssssssssssssssssshhhhhhhhhhhhhhhhhhhhhhhhhhhhhhh",
	    "$2$10$ssssssssssssssssssssssshhhhhhhhhhhhhhhhhhhhhhhhhhhhhhh",
	    "$2x$10$sssssssssssssssssssssshhhhhhhhhhhhhhhhhhhhhhhhhhhhhhh",
	    "$2b$10$sssssssssssssssssssss+hhhhhhhhhhhhhhhhhhhhhhhhhhhhhhh",
	    "$2b$10$sssssssssssssssssssssshhhhhhhhhhhhhhhhhhhhhhhhhhhhhh=",
	    "$2b$10$sssssssssssssssssssssshhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhh",
	    "$2b$10$sssssssssssssssssssssshhhhhhhhhhhhhhhhhhhhhhhhhhhhhh",
	};
	char out[AL_BCRYPT_LEN + 1];
	unsigned cost = 99;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CU_ASSERT_EQUAL(al_bcrypt_parse(bad[i], &cost), AL_EPARSE);
		CU_ASSERT_EQUAL(check(bad[i], "anything"), AL_EPARSE);
	}
	CU_ASSERT_EQUAL(cost, 99);
	CU_ASSERT_EQUAL(
	    al_bcrypt_parse(
	        "$2b$31$sssssssssssssssssssssshhhhhhhhhhhhhhhhhhhhhhhhhhhhhhh",
	        &cost),
	    0);
	CU_ASSERT_EQUAL(cost, 31);
	CU_ASSERT_EQUAL(al_bcrypt_hash((const uint8_t *)"x", 1,
	                               "$2b$04$abcdefghijklmnopqrstuu", out,
	                               AL_BCRYPT_LEN),
	                AL_EINVAL);
}

int main(void)
{
	CU_TestInfo tests[] = {
	    {"pi_tables", test_bcrypt__pi_tables},
	    {"go_vectors", test_bcrypt__go_vectors},
	    {"libxcrypt_vectors", test_bcrypt__libxcrypt_vectors},
	    {"htpasswd_lines", test_bcrypt__htpasswd_lines},
	    {"key_is_72_bytes", test_bcrypt__key_is_72_bytes},
	    {"malformed_hashes_refused", test_bcrypt__malformed_hashes_refused},
	    CU_TEST_INFO_NULL,
	};

	return al_test_run("bcrypt", tests);
}
