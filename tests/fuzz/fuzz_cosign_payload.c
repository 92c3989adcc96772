/* fuzz_cosign_payload.c: fuzz target for cosign simple-signing payloads: al_cosign_payload_parse, then the identity match policies against the parsed identity. */
#include <string.h>

#include "airlock/cosign.h"
#include "airlock/error.h"
#include "harness.h"

#define SAMPLE_REF "quay.io/airlock-samples/release@sha256:c8ead4fb44ce4df49f7fbf5b6732fe3c1c394188ee933af8e3243c2f23447807"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const al_cosign_match matches[] = {
		AL_COSIGN_MATCH_REPO_DIGEST_OR_EXACT, AL_COSIGN_MATCH_REPOSITORY,
		AL_COSIGN_MATCH_EXACT_REPOSITORY, AL_COSIGN_MATCH_REMAP_IDENTITY,
	};
	al_sig_payload pl;
	size_t i;
	int rc;

	al_fuzz_quiet();
	memset(&pl, 0, sizeof(pl));
	rc = al_cosign_payload_parse(&pl, data, size);
	al_fuzz_note("cosign_payload", "parse", rc);
	if (rc < 0) {
		al_error_clear();
		return 0;
	}
	if (pl.reference == NULL || pl.reference[0] == '\0')
		al_fuzz_fail("cosign_payload", "parsed payload without a reference");
	for (i = 0; i < sizeof(matches) / sizeof(matches[0]); i++) {
		rc = al_cosign_identity_matches(matches[i], SAMPLE_REF, pl.reference,
		                                "quay.io/airlock-samples", "quay.io/other");
		if (rc != 0 && rc != 1)
			al_fuzz_fail("cosign_payload", "identity match is not 0 or 1");
	}
	al_sig_payload_clear(&pl);
	al_error_clear();
	return 0;
}
