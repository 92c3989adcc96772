/* cli_crypto.h: OpenSSL set-up for the commands that only verify offline. */
#ifndef AIRLOCK_CLI_CRYPTO_H
#define AIRLOCK_CLI_CRYPTO_H

/*
 * Initialise OpenSSL for a command that verifies signatures offline (no
 * TLS) and exits soon after: the legacy name tables of every cipher and
 * digest are not built (airlock fetches by the providers' own names), the
 * library is not torn down at exit (the process ends), and the OpenSSL
 * configuration file is not read unless OPENSSL_CONF names one or the
 * kernel runs in FIPS mode (/proc/sys/crypto/fips_enabled), where the
 * configuration selects the FIPS provider. airlock's own rules decide which
 * algorithms a signature may use (pgp.c), not the configuration. Together
 * that is 37% of the instructions of 'airlock verify --signature'
 * (docs/performance.md). When no configuration is read, OpenSSL's error
 * strings are not loaded either (another fifth): a rare OpenSSL error is
 * then reported by its code, for 'openssl errstr'; with a configuration
 * (or in FIPS mode), where its policy may refuse an algorithm, the reasons
 * stay words. Call it before the command's first OpenSSL call; it
 * has no effect after one. Never for a command that may open a TLS
 * connection: libcurl's OpenSSL back end needs the configuration (the
 * system's crypto policy).
 */
void cli_crypto_init_offline(void);

#endif
