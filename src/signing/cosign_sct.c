/* cosign_sct.c: signed certificate timestamps (RFC 6962) embedded in a
 * Fulcio certificate, checked against the CT log keys of a trusted root. */
#include <stdlib.h>
#include <string.h>

#include <openssl/ct.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "airlock/buf.h"
#include "airlock/error.h"
#include "cosign_int.h"

/* The TBSCertificate of leaf without its SCT list extension: what the log
 * signed as the precertificate (RFC 6962 section 3.2). */
static int precert_tbs(uint8_t **out, int *len, X509 *leaf)
{
	X509 *dup = X509_dup(leaf);
	int idx;

	if (dup == NULL)
		return al_error_oom();
	idx = X509_get_ext_by_NID(dup, NID_ct_precert_scts, -1);
	if (idx >= 0)
		X509_EXTENSION_free(X509_delete_ext(dup, idx));
	*out = NULL;
	*len = i2d_re_X509_tbs(dup, out);
	X509_free(dup);
	if (*len <= 0)
		return al_error_openssl(AL_ENOMEM, "re-encoding the "
		                                   "certificate");
	return 0;
}

static int put_be(al_buf *b, uint64_t v, int n)
{
	uint8_t tmp[8];
	int i;

	for (i = 0; i < n; i++)
		tmp[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
	return al_buf_append(b, tmp, (size_t)n);
}

/* RFC 6962 section 3.2 digitally-signed struct of a v1 SCT over a
 * precertificate entry. */
static int signed_data(al_buf *msg, const SCT *sct, const uint8_t ikh[32],
                       const uint8_t *tbs, int tbslen)
{
	unsigned char *ext = NULL;
	size_t elen = SCT_get0_extensions(sct, &ext);
	int rc;

	if ((rc = put_be(msg, 0, 1)) < 0 || /* sct_version v1 */
	    (rc = put_be(msg, 0, 1)) < 0 || /* certificate_timestamp */
	    (rc = put_be(msg, SCT_get_timestamp(sct), 8)) < 0 ||
	    (rc = put_be(msg, 1, 2)) < 0 || /* precert_entry */
	    (rc = al_buf_append(msg, ikh, 32)) < 0 ||
	    (rc = put_be(msg, (uint64_t)tbslen, 3)) < 0 ||
	    (rc = al_buf_append(msg, tbs, (size_t)tbslen)) < 0 ||
	    (rc = put_be(msg, elen, 2)) < 0 ||
	    (elen > 0 && (rc = al_buf_append(msg, ext, elen)) < 0))
		return rc;
	return 0;
}

int al__cosign_sct_verify(const al_cosign_trust *t, X509 *leaf, X509 *issuer)
{
	STACK_OF(SCT) *scts = NULL;
	al_buf msg = AL_BUF_INIT(64 * 1024);
	uint8_t *tbs = NULL, *spki = NULL, ikh[32];
	unsigned int ikhlen = 0;
	int tbslen = 0, spkilen, n, i, rc, crit = 0;
	size_t verified = 0, j;

	if (t->nct == 0)
		return 0;
	if (issuer == NULL)
		return al_error_set(AL_EVERIFY, "certificate transparency: "
		                                "the certificate's issuer is "
		                                "unknown");
	scts = X509_get_ext_d2i(leaf, NID_ct_precert_scts, &crit, NULL);
	if (scts == NULL) {
		rc = crit == -1 ? al_error_set(AL_EVERIFY,
		                               "certificate transparency: the "
		                               "certificate embeds no SCT")
		                : al_error_openssl(AL_EVERIFY,
		                                   "certificate transparency: "
		                                   "malformed SCT list");
		goto out;
	}
	if ((spkilen = i2d_X509_PUBKEY(X509_get_X509_PUBKEY(issuer), &spki)) <=
	        0 ||
	    EVP_Digest(spki, (size_t)spkilen, ikh, &ikhlen, EVP_sha256(),
	               NULL) != 1 ||
	    (rc = precert_tbs(&tbs, &tbslen, leaf)) < 0) {
		rc = al_error_openssl(AL_ENOMEM, "certificate transparency");
		goto out;
	}
	n = sk_SCT_num(scts);
	for (i = 0; i < n && verified == 0; i++) {
		const SCT *sct = sk_SCT_value(scts, i);
		unsigned char *id = NULL, *sig = NULL;
		size_t idlen = SCT_get0_log_id(sct, &id);
		size_t siglen = SCT_get0_signature(sct, &sig);

		if (SCT_get_version(sct) != SCT_VERSION_V1 || idlen != 32 ||
		    siglen == 0)
			continue;
		for (j = 0; j < t->nct; j++) {
			if (memcmp(t->ct[j].id, id, 32) != 0)
				continue;
			al_buf_reset(&msg);
			if ((rc = signed_data(&msg, sct, ikh, tbs, tbslen)) < 0)
				goto out;
			if (al__cosign_sig_ok(t->ct[j].pkey, msg.ptr, msg.len,
			                      sig, siglen))
				verified++;
		}
	}
	/* sigstore-go VerifySignedCertificateTimestamp: at least one SCT
	 * by a log of the trusted root */
	rc = verified > 0
	         ? 0
	         : al_error_set(AL_EVERIFY,
	                        "certificate transparency: none of the %d "
	                        "embedded SCTs verifies with a trusted CT "
	                        "log key",
	                        n);
out:
	ERR_clear_error();
	OPENSSL_free(tbs);
	OPENSSL_free(spki);
	SCT_LIST_free(scts);
	al_buf_free(&msg);
	return rc;
}
