/* fuzz_cosign_policy.c: fuzz target for ClusterImagePolicy / ImagePolicy input: al_cosign_policy_load, then a check of an unsigned image against what loaded. */
#include <string.h>

#include "airlock/cosign.h"
#include "airlock/error.h"
#include "harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	al_cosign_policy *p = NULL;
	al_cosign_verdict v;
	al_digest d;
	int rc;

	al_fuzz_quiet();
	rc = al_cosign_policy_load(&p, data, size, "fuzz.yaml");
	al_fuzz_note("cosign_policy", "load", rc);
	if (rc < 0) {
		al_error_clear();
		return 0;
	}
	if (al_cosign_policy_count(p) == 0)
		al_fuzz_fail("cosign_policy", "a loaded policy set is empty");
	memset(&v, 0, sizeof(v));
	memset(&d, 0, sizeof(d));
	d.algo = AL_DIGEST_SHA256;
	d.len = 32;
	rc = al_cosign_policy_check(&v, p, "quay.io/example/release@sha256:0000000000000000000000000000000000000000000000000000000000000000", &d, NULL, 0);
	/* without a signature, an image is accepted only when no scope covers it */
	if (rc == 0 && v.covered)
		al_fuzz_fail("cosign_policy", "an unsigned image was accepted");
	al_cosign_verdict_clear(&v);
	al_cosign_policy_free(p);
	al_error_clear();
	return 0;
}
