/* fuzz_cosign_bundle.c: fuzz target for sigstore bundles and cosign tag-scheme annotations: al_cosign_verify_bundle and al_cosign_verify_sig with a fixed trust (a key, a Rekor key, an identity) over arbitrary input, which must never verify. */
#include <string.h>

#include <openssl/evp.h>
#include <openssl/pem.h>

#include "airlock/cosign.h"
#include "airlock/error.h"
#include "harness.h"

static al_cosign_trust *trust;

static void add_generated(int rekor)
{
	EVP_PKEY *k = EVP_EC_gen("P-256");
	BIO *b = BIO_new(BIO_s_mem());
	char *p = NULL;
	long n;

	if (k == NULL || b == NULL || PEM_write_bio_PUBKEY(b, k) != 1)
		al_fuzz_fail("cosign_bundle", "cannot make a key");
	n = BIO_get_mem_data(b, &p);
	if ((rekor ? al_cosign_trust_add_rekor(trust, (const uint8_t *)p, (size_t)n, "key")
	           : al_cosign_trust_add_keys(trust, (const uint8_t *)p, (size_t)n, "key")) < 0)
		al_fuzz_fail("cosign_bundle", "cannot add a key");
	BIO_free(b);
	EVP_PKEY_free(k);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	al_cosign_opts o = AL_COSIGN_OPTS_INIT;
	al_cosign_info info;
	al_cosign_sig s;
	char *text;
	int rc;

	al_fuzz_quiet();
	if (trust == NULL) {
		if (al_cosign_trust_new(&trust) < 0)
			al_fuzz_fail("cosign_bundle", "no trust");
		add_generated(0);
		add_generated(1);
		if (al_cosign_trust_set_identity(trust, "https://issuer.test", "a@b.test") < 0)
			al_fuzz_fail("cosign_bundle", "no identity");
	}
	memset(&info, 0, sizeof(info));
	o.trust = trust;
	/* no key in the input is trusted: nothing may verify */
	rc = al_cosign_verify_bundle(&info, data, size, (const uint8_t *)"artifact", 8, &o);
	al_fuzz_note("cosign_bundle", "bundle", rc);
	if (rc == 0)
		al_fuzz_fail("cosign_bundle", "an untrusted bundle verified");
	al_error_clear();
	/* the same bytes as the Rekor bundle annotation of a tag signature */
	if ((text = malloc(size + 1)) == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	memset(&s, 0, sizeof(s));
	s.payload = data;
	s.payload_len = size;
	s.signature = "MEUCIQ==";
	s.bundle = text;
	o.require_tlog = 1;
	rc = al_cosign_verify_sig(NULL, &s, &o);
	if (rc == 0)
		al_fuzz_fail("cosign_bundle", "an untrusted signature verified");
	free(text);
	al_error_clear();
	return 0;
}
