/* cosign_tsa.c: RFC 3161 timestamp tokens (a sigstore bundle's
 * timestampVerificationData) verified with OpenSSL's TS API. */
#include <string.h>
#include <time.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pkcs7.h>
#include <openssl/ts.h>
#include <openssl/x509.h>

#include "airlock/error.h"
#include "cosign_int.h"

/* genTime as Unix seconds. */
static int gen_time(int64_t *out, const ASN1_GENERALIZEDTIME *g)
{
	struct tm tm;
	time_t t;

	memset(&tm, 0, sizeof(tm));
	if (g == NULL || ASN1_TIME_to_tm(g, &tm) != 1)
		return -1;
	t = timegm(&tm);
	if (t == (time_t)-1)
		return -1;
	*out = (int64_t)t;
	return 0;
}

int al__cosign_tsa_verify(const al_cosign_trust *t, const uint8_t *der,
                          size_t n, const uint8_t *sig, size_t siglen,
                          int64_t *at)
{
	const unsigned char *p = der;
	PKCS7 *token = NULL;
	TS_RESP *resp = NULL;
	TS_TST_INFO *tst = NULL;
	TS_VERIFY_CTX *ctx = NULL;
	X509_STORE *store = NULL;
	STACK_OF(X509) *certs = NULL;
	unsigned char *imprint = NULL;
	unsigned int ilen = 0;
	int64_t when = 0;
	size_t i;
	int rc;

	if (t->ntsa == 0)
		return al_error_set(AL_EINVAL,
		                    "an RFC 3161 timestamp, and no "
		                    "timestamp authority is trusted");
	if (n > 64 * 1024) {
		rc = al_error_set(AL_EVERIFY, "RFC 3161 timestamp over 64 KiB");
		goto out;
	}
	/* protobuf-specs: the TSA's response as returned (TimeStampResp,
	 * status granted); a bare TimeStampToken is accepted too */
	if ((resp = d2i_TS_RESP(NULL, &p, (long)n)) != NULL && p == der + n) {
		long st = ASN1_INTEGER_get(
		    TS_STATUS_INFO_get0_status(TS_RESP_get_status_info(resp)));

		if (st != 0 && st != 1) {
			rc = al_error_set(AL_EVERIFY,
			                  "RFC 3161 timestamp response with "
			                  "status %ld (not granted)",
			                  st);
			goto out;
		}
		token = PKCS7_dup(TS_RESP_get_token(resp));
	} else {
		ERR_clear_error();
		p = der;
		token = d2i_PKCS7(NULL, &p, (long)n);
		if (token != NULL && p != der + n) {
			PKCS7_free(token);
			token = NULL;
		}
	}
	if (token == NULL || (tst = PKCS7_to_TS_TST_INFO(token)) == NULL) {
		rc = al_error_openssl(AL_EVERIFY, "malformed RFC 3161 "
		                                  "timestamp token");
		goto out;
	}
	if (gen_time(&when, TS_TST_INFO_get_time(tst)) < 0) {
		rc = al_error_set(AL_EVERIFY, "RFC 3161 timestamp without a "
		                              "usable genTime");
		goto out;
	}
	if ((imprint = OPENSSL_malloc(EVP_MAX_MD_SIZE)) == NULL ||
	    EVP_Digest(sig, siglen, imprint, &ilen, EVP_sha256(), NULL) != 1 ||
	    (store = X509_STORE_new()) == NULL ||
	    (certs = sk_X509_new_null()) == NULL ||
	    (ctx = TS_VERIFY_CTX_new()) == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	/* only the authorities whose trusted-root window holds genTime
	 * (sigstore-go VerifySignedTimestamp, TimeRange closed) */
	for (i = 0; i < t->ntsa; i++) {
		if (!al__cosign_win_has(&t->tsa_win[i], when))
			continue;
		if (X509_STORE_add_cert(store, t->tsa[i]) != 1 ||
		    !sk_X509_push(certs, X509_dup(t->tsa[i]))) {
			rc = al_error_openssl(AL_ENOMEM, "TSA certificates");
			goto out;
		}
	}
	if (sk_X509_num(certs) == 0) {
		rc = al_error_set(AL_EVERIFY,
		                  "RFC 3161 timestamp at %lld: no trusted "
		                  "timestamp authority is valid then (trusted "
		                  "root validFor)",
		                  (long long)when);
		goto out;
	}
	/* the configured chain is the trust (sigstore-js TrustMaterial
	 * timestampAuthorities): any of it ends a chain, checked at the
	 * token's own time */
	X509_VERIFY_PARAM_set_flags(X509_STORE_get0_param(store),
	                            X509_V_FLAG_PARTIAL_CHAIN);
	X509_VERIFY_PARAM_set_time(X509_STORE_get0_param(store), (time_t)when);
	TS_VERIFY_CTX_set_flags(ctx, TS_VFY_SIGNATURE | TS_VFY_IMPRINT |
	                                 TS_VFY_VERSION);
	/* the context owns imprint, store and certs from here */
	TS_VERIFY_CTX_set_imprint(ctx, imprint, (long)ilen);
	imprint = NULL;
	TS_VERIFY_CTX_set_store(ctx, store);
	store = NULL;
	TS_VERIFY_CTX_set_certs(ctx, certs);
	certs = NULL;
	if (TS_RESP_verify_token(ctx, token) != 1) {
		rc = al_error_openssl(AL_EVERIFY,
		                      "RFC 3161 timestamp does not verify");
		goto out;
	}
	*at = when;
	rc = 0;
out:
	ERR_clear_error();
	TS_VERIFY_CTX_free(ctx);
	OPENSSL_free(imprint);
	X509_STORE_free(store);
	sk_X509_pop_free(certs, X509_free);
	TS_TST_INFO_free(tst);
	PKCS7_free(token);
	TS_RESP_free(resp);
	return rc;
}
