/* fuzz_sigpayload.c: fuzz target for simple-signing payloads: al_sig_payload_parse, then al_sig_payload_check under every identity policy. */
#include <string.h>

#include "airlock/digest.h"
#include "airlock/error.h"
#include "airlock/ref.h"
#include "airlock/sig.h"
#include "harness.h"

#define SAMPLE_DIGEST "sha256:c8ead4fb44ce4df49f7fbf5b6732fe3c1c394188ee933af8e3243c2f23447807"
#define SAMPLE_REF "quay.io/airlock-samples/release:4.14.1-x86_64"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const al_sig_identity_policy policies[] = {
		AL_SIG_IDENTITY_EXACT, AL_SIG_IDENTITY_REPOSITORY, AL_SIG_IDENTITY_IGNORE,
	};
	al_sig_payload pl;
	al_digest release;
	al_ref ref;
	size_t i;
	int rc;

	al_fuzz_quiet();
	memset(&pl, 0, sizeof(pl));
	if (al_digest_parse_str(&release, SAMPLE_DIGEST) < 0)
		al_fuzz_fail("sigpayload", "the sample digest does not parse");
	rc = al_sig_payload_parse(&pl, data, size);
	al_fuzz_note("sigpayload", "parse", rc);
	if (rc < 0) {
		al_error_clear();
		return 0;
	}
	if (pl.reference == NULL)
		al_fuzz_fail("sigpayload", "parsed payload without a reference");
	for (i = 0; i < sizeof(policies) / sizeof(policies[0]); i++) {
		rc = al_sig_payload_check(&pl, &release, SAMPLE_REF, policies[i]);
		al_fuzz_note("sigpayload", al_sig_identity_policy_name(policies[i]), rc);
		/* its own digest and identity always match, when the identity parses */
		rc = al_sig_payload_check(&pl, &pl.digest, pl.reference, policies[i]);
		if (policies[i] == AL_SIG_IDENTITY_IGNORE && rc != 0)
			al_fuzz_fail("sigpayload", "a payload does not match its own digest under 'ignore'");
		if (rc != 0 && al_ref_parse(&ref, pl.reference) == 0) {
			al_ref_clear(&ref);
			al_fuzz_fail("sigpayload", "a payload does not match its own digest and identity");
		}
	}
	(void)al_sig_payload_check(&pl, &pl.digest, NULL, AL_SIG_IDENTITY_IGNORE);
	al_sig_payload_clear(&pl);
	al_error_clear();
	return 0;
}
