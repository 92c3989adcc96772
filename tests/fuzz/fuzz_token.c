/* fuzz_token.c: fuzz target for token-server answers: al_auth__parse_token (src/registry/auth_int.h), and what it promises about the token it returns. */
#include <stdlib.h>
#include <string.h>

#include "airlock/error.h"
#include "harness.h"
#include "auth_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *tok = NULL;
	uint64_t ttl = 0;
	size_t i, n;
	int rc;

	al_fuzz_quiet();
	rc = al_auth__parse_token(data, size, "https://fuzz/token", &tok, &ttl);
	al_fuzz_note("token", "al_auth__parse_token", rc);
	if (rc < 0) {
		if (tok != NULL)
			al_fuzz_fail("token", "a refused answer returned a token");
		al_error_clear();
		return 0;
	}
	if (tok == NULL)
		al_fuzz_fail("token", "success without a token");
	n = strlen(tok);
	if (n == 0 || n > 64 * 1024)
		al_fuzz_fail("token", "empty or oversized token accepted");
	/* it becomes "Authorization: Bearer <token>": one header line */
	for (i = 0; i < n; i++) {
		if ((unsigned char)tok[i] < 0x21 || (unsigned char)tok[i] > 0x7e)
			al_fuzz_fail("token", "token with a control, blank or "
			                      "non-ASCII byte accepted");
	}
	if (ttl == 0 || ttl > 24 * 3600)
		al_fuzz_fail("token", "lifetime outside 1 s .. 1 day");
	free(tok);
	return 0;
}
