/* fuzz_pgp.c: fuzz target for OpenPGP parsing: keyrings (binary/armored), signed-message verification against the sample release key, and KEYRING + separator + MESSAGE pairs. */
#include <stdlib.h>
#include <string.h>

#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/pgp.h"
#include "harness.h"

#ifndef AL_FUZZ_SAMPLES
#error "build with -DAL_FUZZ_SAMPLES=\"<source>/samples\""
#endif

/* Splits an input into a keyring and a message verified with it. */
#define MESSAGE_SEP "\n--airlock-fuzz-message--\n"

/* A fixed point in time after the sample key and signature were made. */
#define FUZZ_NOW 1800000000u

static al_pgp_keyring *sample_kr;
static uint8_t *sample_sig;
static size_t sample_sig_len;

static void release_samples(void)
{
	al_pgp_keyring_free(sample_kr);
	sample_kr = NULL;
	free(sample_sig);
	sample_sig = NULL;
}

/* The sample release key and its signature, loaded once. */
static void load_samples(void)
{
	uint8_t *key = NULL;
	size_t keylen = 0;

	if (sample_kr != NULL)
		return;
	al_fuzz_quiet();
	al_fuzz_read_file(AL_FUZZ_SAMPLES "/keys/release.gpg", &key, &keylen);
	if (al_pgp_keyring_load(&sample_kr, key, keylen, "sample key") < 0)
		al_fuzz_fail("pgp", "the sample keyring does not load");
	free(key);
	al_fuzz_read_file(AL_FUZZ_SAMPLES "/signatures/sha256=c8ead4fb44ce4df49f7fbf5b6732fe3c1c394188ee933af8e3243c2f23447807/signature-1",
			  &sample_sig, &sample_sig_len);
	atexit(release_samples);
}

/* First occurrence of MESSAGE_SEP in p[0..n), or n. */
static size_t find_sep(const uint8_t *p, size_t n)
{
	size_t k = sizeof(MESSAGE_SEP) - 1, i;

	for (i = 0; i + k <= n; i++)
		if (memcmp(p + i, MESSAGE_SEP, k) == 0)
			return i;
	return n;
}

/* KEYRING MESSAGE_SEP MESSAGE: the message verified with the keyring (other key algorithms than the sample's). */
static void keyring_and_message(const uint8_t *data, size_t size)
{
	size_t cut = find_sep(data, size), k = sizeof(MESSAGE_SEP) - 1;
	al_pgp_keyring *kr = NULL;
	al_pgp_result res = AL_PGP_RESULT_INIT;
	int rc;

	if (cut == size)
		return;
	rc = al_pgp_keyring_load(&kr, data, cut, "fuzz keyring");
	al_fuzz_note("pgp", "keyring part", rc);
	if (rc == 0) {
		rc = al_pgp_verify(&res, NULL, kr, data + cut + k, size - cut - k, FUZZ_NOW);
		al_fuzz_note("pgp", "message part with the keyring part", rc);
	}
	al_pgp_keyring_free(kr);
	al_error_clear();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	al_pgp_keyring *kr = NULL;
	al_pgp_result res = AL_PGP_RESULT_INIT;
	al_buf lit = AL_BUF_INIT(AL_PGP_MAX_LITERAL_BYTES);
	int rc;

	load_samples();

	/* the input as a signed message, verified with the sample key */
	rc = al_pgp_verify(&res, &lit, sample_kr, data, size, FUZZ_NOW);
	al_fuzz_note("pgp", "verify with the sample key", rc);
	if (rc == 0) {
		if (res.sig_version != 3 && res.sig_version != 4)
			al_fuzz_fail("pgp", "verified a signature of a version other than 3 or 4");
		if (strlen(res.fingerprint) != 40)
			al_fuzz_fail("pgp", "verified without a 40-hex fingerprint");
	} else if (lit.len != 0) {
		al_fuzz_fail("pgp", "literal data appended by a failed verification");
	}
	al_buf_free(&lit);
	al_error_clear();

	/* the input as a keyring; if it loads, verify the sample signature with it */
	rc = al_pgp_keyring_load(&kr, data, size, "fuzz input");
	al_fuzz_note("pgp", "keyring", rc);
	if (rc == 0) {
		if (al_pgp_keyring_count(kr) > AL_PGP_MAX_KEYS)
			al_fuzz_fail("pgp", "more keys than AL_PGP_MAX_KEYS");
		rc = al_pgp_verify(&res, NULL, kr, sample_sig, sample_sig_len, FUZZ_NOW);
		al_fuzz_note("pgp", "sample signature with the input keyring", rc);
		/* and the input as a message against its own keys */
		(void)al_pgp_verify(&res, NULL, kr, data, size, FUZZ_NOW);
	}
	al_pgp_keyring_free(kr);
	al_error_clear();

	keyring_and_message(data, size);
	return 0;
}
