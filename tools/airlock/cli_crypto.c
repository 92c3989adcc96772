/* cli_crypto.c: OpenSSL set-up for the commands that only verify offline. */
#include <openssl/crypto.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli_crypto.h"

/* The kernel's FIPS mode: "1" in /proc/sys/crypto/fips_enabled. */
static int fips_kernel(void)
{
	FILE *f = fopen("/proc/sys/crypto/fips_enabled", "r");
	int ch;

	if (f == NULL)
		return 0;
	ch = fgetc(f);
	(void)fclose(f);
	return ch == '1';
}

void cli_crypto_init_offline(void)
{
	uint64_t opts = OPENSSL_INIT_NO_ADD_ALL_CIPHERS |
	                OPENSSL_INIT_NO_ADD_ALL_DIGESTS |
	                OPENSSL_INIT_NO_ATEXIT;

	/* Without a configuration, OpenSSL refuses nothing airlock asks
	 * for, and its error strings (a fifth of the instructions of a
	 * 'verify --signature' process) go unloaded: a rare error then names
	 * the OpenSSL code for 'openssl errstr' (src/util/error.c). With one,
	 * or in FIPS mode, where the policy may refuse an algorithm, the
	 * reasons stay words. */
	if (getenv("OPENSSL_CONF") == NULL && !fips_kernel())
		opts |= OPENSSL_INIT_NO_LOAD_CONFIG |
		        OPENSSL_INIT_NO_LOAD_CRYPTO_STRINGS;
	/* a failure here shows again, with its reason, at the first
	 * OpenSSL call of the command */
	(void)OPENSSL_init_crypto(opts, NULL);
}
