/* test_cosign_strict.c: keyless certificates, chains and log entries made
 * here with OpenSSL, each refused as containers/image's signature package
 * refuses it, next to the valid control that differs only in that point. */
/* al-tier: quick */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ts.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "al_test.h"
#include "airlock/buf.h"
#include "airlock/cosign.h"
#include "airlock/error.h"

#define ISSUER "https://issuer.example"
#define EMAIL "signer@example.com"
#define REF "quay.io/example/app:1"
#define DIGEST                                                                 \
	"sha256:"                                                              \
	"6d8c2c3a0f0d5bd8c3f1b8cbd0e7f6c2a1b9d0e4f3a2b1c0d9e8f7a6b5c4d3e2"
#define SET_TIME 1700000000LL

static const char payload[] =
    "{\"critical\":{\"identity\":{\"docker-reference\":\"" REF
    "\"},\"image\":{\"docker-manifest-digest\":\"" DIGEST
    "\"},\"type\":\"cosign container image signature\"},\"optional\":null}";

static EVP_PKEY *new_key(void)
{
	return EVP_EC_gen("P-256");
}

/* set when a certificate could not be made as asked */
static int broken;

/* How a certificate is made. */
typedef struct spec {
	const char *eku;   /* extendedKeyUsage value, NULL for none */
	int ca;            /* basicConstraints CA:TRUE */
	const char *v1;    /* .1.1 raw value, NULL for none */
	const uint8_t *v2; /* .1.8 DER value, NULL for none */
	size_t v2len;
	long serial;
	long long not_before, not_after; /* 0: 2020 and 2040 */
	int tsa;                         /* a timestamping certificate */
} spec;

static void add_ext(X509 *c, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *e;

	X509V3_set_ctx(&ctx, issuer, c, NULL, NULL, 0);
	e = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	if (e == NULL)
		broken = 1;
	else
		X509_add_ext(c, e, -1);
	X509_EXTENSION_free(e);
}

static void add_raw(X509 *c, const char *oid, const uint8_t *p, size_t n)
{
	ASN1_OBJECT *obj = OBJ_txt2obj(oid, 1);
	ASN1_OCTET_STRING *os = ASN1_OCTET_STRING_new();
	X509_EXTENSION *e;

	ASN1_OCTET_STRING_set(os, p, (int)n);
	e = X509_EXTENSION_create_by_OBJ(NULL, obj, 0, os);
	if (e == NULL)
		broken = 1;
	else
		X509_add_ext(c, e, -1);
	X509_EXTENSION_free(e);
	ASN1_OCTET_STRING_free(os);
	ASN1_OBJECT_free(obj);
}

/* A certificate for key k, named cn, signed by issuer (NULL: itself)
 * with ikey, valid 2020 to 2040. */
static X509 *make_cert(EVP_PKEY *k, const char *cn, X509 *issuer,
                       EVP_PKEY *ikey, const spec *s)
{
	X509 *c = X509_new();
	X509_NAME *name = X509_NAME_new();

	X509_set_version(c, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(c), s->serial + 1);
	ASN1_TIME_set(X509_getm_notBefore(c),
	              (time_t)(s->not_before ? s->not_before : 1577836800));
	ASN1_TIME_set(X509_getm_notAfter(c),
	              (time_t)(s->not_after ? s->not_after : 2208988800LL));
	X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
	                           (const unsigned char *)cn, -1, -1, 0);
	X509_set_subject_name(c, name);
	X509_set_issuer_name(c, issuer != NULL ? X509_get_subject_name(issuer)
	                                       : name);
	X509_set_pubkey(c, k);
	if (s->ca) {
		add_ext(c, issuer != NULL ? issuer : c, NID_basic_constraints,
		        "critical,CA:TRUE");
		add_ext(c, issuer != NULL ? issuer : c, NID_key_usage,
		        "critical,keyCertSign,cRLSign");
		add_ext(c, c, NID_subject_key_identifier, "hash");
	} else if (s->tsa) {
		add_ext(c, issuer, NID_key_usage, "critical,digitalSignature");
		add_ext(c, issuer, NID_ext_key_usage, "critical,timeStamping");
	} else {
		add_ext(c, issuer, NID_key_usage, "critical,digitalSignature");
		add_ext(c, issuer, NID_subject_alt_name, "email:" EMAIL);
	}
	if (issuer != NULL)
		add_ext(c, issuer, NID_authority_key_identifier,
		        "keyid:always");
	if (s->eku != NULL)
		add_ext(c, issuer != NULL ? issuer : c, NID_ext_key_usage,
		        s->eku);
	if (s->v1 != NULL)
		add_raw(c, "1.3.6.1.4.1.57264.1.1", (const uint8_t *)s->v1,
		        strlen(s->v1));
	if (s->v2 != NULL)
		add_raw(c, "1.3.6.1.4.1.57264.1.8", s->v2, s->v2len);
	X509_sign(c, ikey, EVP_sha256());
	X509_NAME_free(name);
	return c;
}

static char *pem_of(X509 *c)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *p, *out;
	long n;

	PEM_write_bio_X509(b, c);
	n = BIO_get_mem_data(b, &p);
	out = al_strndup(p, (size_t)n);
	BIO_free(b);
	return out;
}

static char *pem_of_key(EVP_PKEY *k)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *p, *out;
	long n;

	PEM_write_bio_PUBKEY(b, k);
	n = BIO_get_mem_data(b, &p);
	out = al_strndup(p, (size_t)n);
	BIO_free(b);
	return out;
}

static char *b64(const void *p, size_t n)
{
	return al_base64_encode(p, n);
}

/* ECDSA SHA-256 signature of p[0..n) with k, base64. */
static char *sign_b64(EVP_PKEY *k, const void *p, size_t n, uint8_t *raw,
                      size_t *rawlen)
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	uint8_t sig[256];
	size_t slen = sizeof(sig);

	EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, k);
	EVP_DigestSign(md, sig, &slen, p, n);
	EVP_MD_CTX_free(md);
	if (raw != NULL) {
		memcpy(raw, sig, slen);
		*rawlen = slen;
	}
	return b64(sig, slen);
}

static void hex(char *out, const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", p[i]);
}

/* The test's world: a root, an intermediate, a leaf key, a Rekor key. */
static struct world {
	EVP_PKEY *root_key, *int_key, *leaf_key, *rekor_key, *other_key;
	X509 *root, *other_root;
	char *root_pem, *rekor_pem;
} w;

static int setup(void)
{
	spec ca = {NULL, 1, NULL, NULL, 0, 0, 0, 0, 0};

	w.root_key = new_key();
	w.int_key = new_key();
	w.leaf_key = new_key();
	w.rekor_key = new_key();
	w.other_key = new_key();
	w.root = make_cert(w.root_key, "root", NULL, w.root_key, &ca);
	w.other_root = make_cert(w.other_key, "root", NULL, w.other_key, &ca);
	w.root_pem = pem_of(w.root);
	w.rekor_pem = pem_of_key(w.rekor_key);
	return broken || w.root_pem == NULL || w.rekor_pem == NULL;
}

static int teardown(void)
{
	EVP_PKEY_free(w.root_key);
	EVP_PKEY_free(w.int_key);
	EVP_PKEY_free(w.leaf_key);
	EVP_PKEY_free(w.rekor_key);
	EVP_PKEY_free(w.other_key);
	X509_free(w.root);
	X509_free(w.other_root);
	free(w.root_pem);
	free(w.rekor_pem);
	return 0;
}

/* A hashedrekord 0.0.1 entry naming logged (base64 of the PEM in the
 * body) and the signature, signed by the Rekor key: base64 body, base64
 * SET and the hex log ID (caller frees each). */
static void rekor_entry(const char *logged, const uint8_t *sig, size_t siglen,
                        char **body64, char **set, char idhex[65])
{
	uint8_t dg[32], id[32];
	char dhex[65], *body = NULL, *sig64 = NULL, *key64 = NULL;
	char *canon = NULL;
	unsigned char *der = NULL;
	int dlen;

	EVP_Digest(payload, strlen(payload), dg, NULL, EVP_sha256(), NULL);
	hex(dhex, dg, 32);
	dlen = i2d_PUBKEY(w.rekor_key, &der);
	EVP_Digest(der, (size_t)dlen, id, NULL, EVP_sha256(), NULL);
	OPENSSL_free(der);
	hex(idhex, id, 32);
	sig64 = b64(sig, siglen);
	key64 = b64(logged, strlen(logged));
	body = al_sprintf(
	    "{\"apiVersion\":\"0.0.1\",\"kind\":\"hashedrekord\",\"spec\":{"
	    "\"data\":{\"hash\":{\"algorithm\":\"sha256\",\"value\":\"%s\"}},"
	    "\"signature\":{\"content\":\"%s\",\"publicKey\":{\"content\":"
	    "\"%s\"}}}}",
	    dhex, sig64, key64);
	*body64 = b64(body, strlen(body));
	canon = al_sprintf("{\"body\":\"%s\",\"integratedTime\":%lld,"
	                   "\"logID\":\"%s\",\"logIndex\":7}",
	                   *body64, SET_TIME, idhex);
	*set = sign_b64(w.rekor_key, canon, strlen(canon), NULL, NULL);
	free(body);
	free(sig64);
	free(key64);
	free(canon);
}

/* The Rekor bundle annotation of a tag-scheme signature. */
static char *rekor_bundle(const char *logged, const uint8_t *sig, size_t siglen)
{
	char idhex[65], *body64 = NULL, *set = NULL, *out;

	rekor_entry(logged, sig, siglen, &body64, &set, idhex);
	out = al_sprintf("{\"SignedEntryTimestamp\":\"%s\",\"Payload\":{"
	                 "\"body\":\"%s\",\"integratedTime\":%lld,"
	                 "\"logIndex\":7,\"logID\":\"%s\"}}",
	                 set, body64, SET_TIME, idhex);
	free(body64);
	free(set);
	return out;
}

/* One keyless case: leaf (signed by signer with skey), the chain
 * annotation (may be NULL), what the log entry names (NULL: the leaf),
 * trust anchors PEM. Returns al_cosign_verify_sig's code. */
static int keyless(X509 *leaf, const char *chain, const char *logged,
                   const char *anchors)
{
	al_cosign_trust *t = NULL;
	al_cosign_info info;
	al_cosign_opts o = AL_COSIGN_OPTS_INIT;
	al_cosign_sig s;
	uint8_t raw[256];
	size_t rawlen = 0;
	char *leaf_pem = pem_of(leaf);
	char *sig =
	    sign_b64(w.leaf_key, payload, strlen(payload), raw, &rawlen);
	char *bundle =
	    rekor_bundle(logged != NULL ? logged : leaf_pem, raw, rawlen);
	int rc;

	memset(&info, 0, sizeof(info));
	memset(&s, 0, sizeof(s));
	CU_ASSERT_EQUAL(al_cosign_trust_new(&t), 0);
	CU_ASSERT_EQUAL(al_cosign_trust_add_fulcio(t, (const uint8_t *)anchors,
	                                           strlen(anchors), "anchors"),
	                0);
	CU_ASSERT_EQUAL(al_cosign_trust_add_rekor(t,
	                                          (const uint8_t *)w.rekor_pem,
	                                          strlen(w.rekor_pem), "rekor"),
	                0);
	CU_ASSERT_EQUAL(al_cosign_trust_set_identity(t, ISSUER, EMAIL), 0);
	o.trust = t;
	s.payload = (const uint8_t *)payload;
	s.payload_len = strlen(payload);
	s.signature = sig;
	s.certificate = leaf_pem;
	s.chain = chain;
	s.bundle = bundle;
	CU_ASSERT_FALSE(broken);
	rc = al_cosign_verify_sig(&info, &s, &o);
	if (rc != 0)
		printf("\n  refused: %s", al_error_message());
	al_cosign_info_clear(&info);
	al_cosign_trust_free(t);
	free(leaf_pem);
	free(sig);
	free(bundle);
	return rc;
}

/* A leaf under the root directly, with the given issuer extensions. */
static X509 *leaf_with(const char *v1, const uint8_t *v2, size_t v2len)
{
	spec s = {"codeSigning", 0, v1, v2, v2len, 10, 0, 0, 0};

	return make_cert(w.leaf_key, "leaf", w.root, w.root_key, &s);
}

/* DER UTF8String of ISSUER, with extra bytes after it. */
static size_t utf8_der(uint8_t *out, const char *v, const char *extra)
{
	size_t n = strlen(v), e = extra != NULL ? strlen(extra) : 0;

	out[0] = 0x0c;
	out[1] = (uint8_t)n;
	memcpy(out + 2, v, n);
	if (e > 0)
		memcpy(out + 2 + n, extra, e);
	return 2 + n + e;
}

/* containers/image fulcioIssuerInCertificate */
static void test_cosign_strict__oidc_issuer_extensions(void)
{
	uint8_t der[128];
	size_t n;
	X509 *c;

	/* controls: v2 alone, v1 alone, both equal */
	n = utf8_der(der, ISSUER, NULL);
	c = leaf_with(NULL, der, n);
	CU_ASSERT_EQUAL(keyless(c, NULL, NULL, w.root_pem), 0);
	X509_free(c);
	c = leaf_with(ISSUER, NULL, 0);
	CU_ASSERT_EQUAL(keyless(c, NULL, NULL, w.root_pem), 0);
	X509_free(c);
	c = leaf_with(ISSUER, der, n);
	CU_ASSERT_EQUAL(keyless(c, NULL, NULL, w.root_pem), 0);
	X509_free(c);
	/* the two differ (v2 is the wanted issuer) */
	c = leaf_with("https://other.example", der, n);
	CU_ASSERT_EQUAL(keyless(c, NULL, NULL, w.root_pem), AL_EVERIFY);
	X509_free(c);
	/* v2 with trailing data, even with v1 naming the issuer */
	n = utf8_der(der, ISSUER, "xx");
	c = leaf_with(NULL, der, n);
	CU_ASSERT_EQUAL(keyless(c, NULL, NULL, w.root_pem), AL_EVERIFY);
	X509_free(c);
	c = leaf_with(ISSUER, der, n);
	CU_ASSERT_EQUAL(keyless(c, NULL, NULL, w.root_pem), AL_EVERIFY);
	X509_free(c);
	/* v2 not DER (the raw issuer), v1 naming the issuer */
	c = leaf_with(ISSUER, (const uint8_t *)ISSUER, strlen(ISSUER));
	CU_ASSERT_EQUAL(keyless(c, NULL, NULL, w.root_pem), AL_EVERIFY);
	X509_free(c);
	/* neither */
	c = leaf_with(NULL, NULL, 0);
	CU_ASSERT_EQUAL(keyless(c, NULL, NULL, w.root_pem), AL_EVERIFY);
	X509_free(c);
}

/* A leaf under an intermediate whose EKU is eku; the intermediate is in
 * the chain annotation, before the root. */
static int under_intermediate(const char *eku)
{
	spec is = {eku, 1, NULL, NULL, 0, 20, 0, 0, 0};
	uint8_t der[128];
	size_t n = utf8_der(der, ISSUER, NULL);
	spec ls = {"codeSigning", 0, NULL, der, n, 21, 0, 0, 0};
	X509 *inter =
	    make_cert(w.int_key, "intermediate", w.root, w.root_key, &is);
	X509 *leaf = make_cert(w.leaf_key, "leaf", inter, w.int_key, &ls);
	char *ip = pem_of(inter);
	char *chain = al_sprintf("%s%s", ip, w.root_pem);
	int rc = keyless(leaf, chain, NULL, w.root_pem);

	free(ip);
	free(chain);
	X509_free(inter);
	X509_free(leaf);
	return rc;
}

/* Go's x509.Verify with KeyUsages CodeSigning */
static void test_cosign_strict__chain_allows_code_signing(void)
{
	CU_ASSERT_EQUAL(under_intermediate(NULL), 0);
	CU_ASSERT_EQUAL(under_intermediate("codeSigning"), 0);
	CU_ASSERT_EQUAL(under_intermediate("anyExtendedKeyUsage"), 0);
	CU_ASSERT_EQUAL(under_intermediate("codeSigning,serverAuth"), 0);
	CU_ASSERT_EQUAL(under_intermediate("serverAuth"), AL_EVERIFY);
	CU_ASSERT_EQUAL(under_intermediate("emailProtection"), AL_EVERIFY);
}

/* the chain annotation's last certificate is the root */
static void test_cosign_strict__chain_annotation_ends_at_a_trusted_root(void)
{
	spec is = {NULL, 1, NULL, NULL, 0, 30, 0, 0, 0};
	uint8_t der[128];
	size_t n = utf8_der(der, ISSUER, NULL);
	spec ls = {"codeSigning", 0, NULL, der, n, 31, 0, 0, 0};
	X509 *inter =
	    make_cert(w.int_key, "intermediate", w.root, w.root_key, &is);
	X509 *leaf = make_cert(w.leaf_key, "leaf", inter, w.int_key, &ls);
	char *ip = pem_of(inter);
	char *other = pem_of(w.other_root);
	char *good = al_sprintf("%s%s", ip, w.root_pem);
	char *bad_root = al_sprintf("%s%s", ip, other);
	char *both = al_sprintf("%s%s", w.root_pem, ip);

	/* control: intermediate, then the trusted root */
	CU_ASSERT_EQUAL(keyless(leaf, good, NULL, w.root_pem), 0);
	/* the last one is not a trusted root */
	CU_ASSERT_EQUAL(keyless(leaf, bad_root, NULL, w.root_pem), AL_EVERIFY);
	/* the intermediate alone is taken as the root, and it is not
	 * trusted: before, every certificate was an intermediate */
	CU_ASSERT_EQUAL(keyless(leaf, ip, NULL, w.root_pem), AL_EVERIFY);
	/* the root last but anchors holding both: still fine */
	CU_ASSERT_EQUAL(keyless(leaf, good, NULL, both), 0);
	free(ip);
	free(other);
	free(good);
	free(bad_root);
	free(both);
	X509_free(inter);
	X509_free(leaf);
}

/* containers/image VerifyRekorSET: the exact certificate bytes */
static void test_cosign_strict__log_entry_names_the_exact_certificate(void)
{
	uint8_t der[128];
	size_t n = utf8_der(der, ISSUER, NULL);
	spec s1 = {"codeSigning", 0, NULL, der, n, 40, 0, 0, 0};
	spec s2 = {"codeSigning", 0, NULL, der, n, 41, 0, 0, 0};
	X509 *leaf = make_cert(w.leaf_key, "leaf", w.root, w.root_key, &s1);
	X509 *twin = make_cert(w.leaf_key, "leaf", w.root, w.root_key, &s2);
	char *twin_pem = pem_of(twin), *key_pem = pem_of_key(w.leaf_key);
	char *leaf_pem = pem_of(leaf);
	char *trailing = al_sprintf("%sjunk", leaf_pem);

	CU_ASSERT_EQUAL(keyless(leaf, NULL, leaf_pem, w.root_pem), 0);
	/* same key, another certificate */
	CU_ASSERT_EQUAL(keyless(leaf, NULL, twin_pem, w.root_pem), AL_EVERIFY);
	/* the bare key of the certificate */
	CU_ASSERT_EQUAL(keyless(leaf, NULL, key_pem, w.root_pem), AL_EVERIFY);
	/* the certificate with something after it */
	CU_ASSERT_EQUAL(keyless(leaf, NULL, trailing, w.root_pem), AL_EVERIFY);
	free(twin_pem);
	free(key_pem);
	free(leaf_pem);
	free(trailing);
	X509_free(leaf);
	X509_free(twin);
}

/* containers/image matchRepoDigestOrExactReferenceValues */
static void test_cosign_strict__repo_digest_or_exact_by_tag(void)
{
	const al_cosign_match m = AL_COSIGN_MATCH_REPO_DIGEST_OR_EXACT;

	CU_ASSERT_TRUE(al_cosign_identity_matches(m, "quay.io/a/b:1",
	                                          "quay.io/a/b:1", NULL, NULL));
	CU_ASSERT_FALSE(al_cosign_identity_matches(
	    m, "quay.io/a/b:1", "quay.io/a/b:2", NULL, NULL));
	CU_ASSERT_FALSE(al_cosign_identity_matches(
	    m, "quay.io/a/b:1", "quay.io/a/b@" DIGEST, NULL, NULL));
	/* by digest: the repository */
	CU_ASSERT_TRUE(al_cosign_identity_matches(m, "quay.io/a/b@" DIGEST,
	                                          "quay.io/a/b:2", NULL, NULL));
	/* a tag and a digest: the digest decides (reference.Canonical) */
	CU_ASSERT_TRUE(al_cosign_identity_matches(m, "quay.io/a/b:1@" DIGEST,
	                                          "quay.io/a/b:2", NULL, NULL));
	CU_ASSERT_FALSE(al_cosign_identity_matches(
	    m, "quay.io/a/b:1@" DIGEST, "quay.io/a/c:1", NULL, NULL));
}

/* --- RFC 3161 timestamps ------------------------------------------- */

static long long tsa_when;

static int fixed_time(TS_RESP_CTX *ctx, void *data, long *sec, long *usec)
{
	(void)ctx;
	(void)data;
	*sec = (long)tsa_when;
	*usec = 0;
	return 1;
}

/* A TimeStampResp over sig at time when, by tsa (key tkey), base64. */
static char *timestamp(X509 *tsa, EVP_PKEY *tkey, const uint8_t *sig,
                       size_t siglen, long long when)
{
	TS_REQ *req = TS_REQ_new();
	TS_MSG_IMPRINT *mi = TS_MSG_IMPRINT_new();
	X509_ALGOR *alg = X509_ALGOR_new();
	TS_RESP_CTX *ctx = TS_RESP_CTX_new();
	ASN1_OBJECT *policy = OBJ_txt2obj("1.3.6.1.4.1.57264.2", 1);
	TS_RESP *resp = NULL;
	BIO *in = BIO_new(BIO_s_mem());
	uint8_t dg[32];
	unsigned char *der = NULL;
	char *out = NULL;
	int n;

	EVP_Digest(sig, siglen, dg, NULL, EVP_sha256(), NULL);
	X509_ALGOR_set0(alg, OBJ_nid2obj(NID_sha256), V_ASN1_NULL, NULL);
	TS_MSG_IMPRINT_set_algo(mi, alg);
	TS_MSG_IMPRINT_set_msg(mi, dg, 32);
	TS_REQ_set_version(req, 1);
	TS_REQ_set_msg_imprint(req, mi);
	TS_REQ_set_cert_req(req, 1);
	i2d_TS_REQ_bio(in, req);
	TS_RESP_CTX_set_signer_cert(ctx, tsa);
	TS_RESP_CTX_set_signer_key(ctx, tkey);
	TS_RESP_CTX_set_def_policy(ctx, policy);
	TS_RESP_CTX_add_md(ctx, EVP_sha256());
	TS_RESP_CTX_set_signer_digest(ctx, EVP_sha256());
	tsa_when = when;
	TS_RESP_CTX_set_time_cb(ctx, fixed_time, NULL);
	resp = TS_RESP_create_response(ctx, in);
	if (resp != NULL && (n = i2d_TS_RESP(resp, &der)) > 0)
		out = b64(der, (size_t)n);
	else
		broken = 1;
	OPENSSL_free(der);
	TS_RESP_free(resp);
	BIO_free(in);
	ASN1_OBJECT_free(policy);
	TS_RESP_CTX_free(ctx);
	X509_ALGOR_free(alg);
	TS_MSG_IMPRINT_free(mi);
	TS_REQ_free(req);
	return out;
}

/* A v0.1 bundle over the payload by leaf, logged at SET_TIME, with
 * timestamps at when[0..nwhen); verified with min_times. */
static int bundle_case(X509 *leaf, const long long *when, size_t nwhen,
                       size_t min_times)
{
	spec ts = {NULL, 0, NULL, NULL, 0, 50, 0, 0, 1};
	X509 *tsa = make_cert(w.int_key, "tsa", w.root, w.root_key, &ts);
	char *tsa_pem = pem_of(tsa), *leaf_pem = pem_of(leaf);
	char *tsa_chain = al_sprintf("%s%s", tsa_pem, w.root_pem);
	al_buf stamps = AL_BUF_INIT(1 << 20);
	al_cosign_trust *t = NULL;
	al_cosign_info info;
	al_cosign_opts o = AL_COSIGN_OPTS_INIT;
	uint8_t raw[256], id[32];
	unsigned char *der = NULL;
	size_t rawlen = 0, i;
	char idhex[65], *sig, *body64 = NULL, *set = NULL, *id64, *leaf64;
	char *bundle;
	int rc, n;

	sig = sign_b64(w.leaf_key, payload, strlen(payload), raw, &rawlen);
	rekor_entry(leaf_pem, raw, rawlen, &body64, &set, idhex);
	for (i = 0; i < 32; i++) {
		unsigned int x;

		sscanf(idhex + 2 * i, "%2x", &x);
		id[i] = (uint8_t)x;
	}
	id64 = b64(id, 32);
	n = i2d_X509(leaf, &der);
	leaf64 = b64(der, (size_t)n);
	OPENSSL_free(der);
	for (i = 0; i < nwhen; i++) {
		char *one = timestamp(tsa, w.int_key, raw, rawlen, when[i]);

		(void)al_buf_printf(&stamps, "%s{\"signedTimestamp\":\"%s\"}",
		                    i > 0 ? "," : "", one != NULL ? one : "");
		free(one);
	}
	bundle = al_sprintf(
	    "{\"mediaType\":\"application/vnd.dev.sigstore.bundle+json;"
	    "version=0.1\",\"verificationMaterial\":{\"x509CertificateChain\":"
	    "{\"certificates\":[{\"rawBytes\":\"%s\"}]},\"tlogEntries\":[{"
	    "\"logIndex\":\"7\",\"logId\":{\"keyId\":\"%s\"},"
	    "\"kindVersion\":{\"kind\":\"hashedrekord\",\"version\":"
	    "\"0.0.1\"},\"integratedTime\":\"%lld\",\"inclusionPromise\":{"
	    "\"signedEntryTimestamp\":\"%s\"},\"canonicalizedBody\":\"%s\"}],"
	    "\"timestampVerificationData\":{\"rfc3161Timestamps\":[%s]}},"
	    "\"messageSignature\":{\"signature\":\"%s\"}}",
	    leaf64, id64, SET_TIME, set, body64,
	    stamps.len > 0 ? al_buf_cstr(&stamps) : "", sig);
	memset(&info, 0, sizeof(info));
	CU_ASSERT_EQUAL(al_cosign_trust_new(&t), 0);
	CU_ASSERT_EQUAL(al_cosign_trust_add_fulcio(t,
	                                           (const uint8_t *)w.root_pem,
	                                           strlen(w.root_pem), "root"),
	                0);
	CU_ASSERT_EQUAL(al_cosign_trust_add_rekor(t,
	                                          (const uint8_t *)w.rekor_pem,
	                                          strlen(w.rekor_pem), "rekor"),
	                0);
	CU_ASSERT_EQUAL(al_cosign_trust_add_tsa(t, (const uint8_t *)tsa_chain,
	                                        strlen(tsa_chain), "tsa"),
	                0);
	CU_ASSERT_EQUAL(al_cosign_trust_set_identity(t, ISSUER, EMAIL), 0);
	o.trust = t;
	o.min_times = min_times;
	CU_ASSERT_FALSE(broken);
	rc = al_cosign_verify_bundle(&info, (const uint8_t *)bundle,
	                             strlen(bundle), (const uint8_t *)payload,
	                             strlen(payload), &o);
	if (rc != 0)
		printf("\n  refused: %s", al_error_message());
	else
		CU_ASSERT_EQUAL(info.tsa_time, nwhen > 0);
	al_cosign_info_clear(&info);
	al_cosign_trust_free(t);
	al_buf_free(&stamps);
	X509_free(tsa);
	free(tsa_pem);
	free(leaf_pem);
	free(tsa_chain);
	free(sig);
	free(body64);
	free(set);
	free(id64);
	free(leaf64);
	free(bundle);
	return rc;
}

/* Sigstore client specification: a signed timestamp dates the signature,
 * the log's integrated time only where there is none; the certificate
 * must be valid at every verified time. */
static void test_cosign_strict__signed_timestamps_date_the_certificate(void)
{
	uint8_t der[128];
	size_t n = utf8_der(der, ISSUER, NULL);
	/* valid ten minutes around the log's time */
	spec shortlived = {"codeSigning",  0, NULL, der, n, 60, SET_TIME - 300,
	                   SET_TIME + 300, 0};
	spec longlived = {"codeSigning", 0, NULL, der, n, 61, 0, 0, 0};
	X509 *brief =
	    make_cert(w.leaf_key, "leaf", w.root, w.root_key, &shortlived);
	X509 *lasting =
	    make_cert(w.leaf_key, "leaf", w.root, w.root_key, &longlived);
	const long long inside[] = {SET_TIME + 10, SET_TIME + 20};
	const long long later[] = {SET_TIME + 86400};
	const long long mixed[] = {SET_TIME + 10, SET_TIME + 86400};

	/* controls: a timestamp inside, none at all (the log's time) */
	CU_ASSERT_EQUAL(bundle_case(brief, inside, 1, 0), 0);
	CU_ASSERT_EQUAL(bundle_case(brief, NULL, 0, 0), 0);
	CU_ASSERT_EQUAL(bundle_case(lasting, later, 1, 0), 0);
	/* a day after the certificate expired, though the log's time is
	 * inside: the timestamp wins */
	CU_ASSERT_EQUAL(bundle_case(brief, later, 1, 0), AL_EVERIFY);
	/* every verified time counts */
	CU_ASSERT_EQUAL(bundle_case(brief, mixed, 2, 0), AL_EVERIFY);
	/* a threshold of verified times */
	CU_ASSERT_EQUAL(bundle_case(lasting, inside, 2, 2), 0);
	CU_ASSERT_EQUAL(bundle_case(lasting, inside, 1, 2), AL_EVERIFY);
	/* the log's time alone is one time */
	CU_ASSERT_EQUAL(bundle_case(lasting, NULL, 0, 2), AL_EVERIFY);
	X509_free(brief);
	X509_free(lasting);
}

int main(void)
{
	CU_TestInfo tests[] = {
	    {"oidc_issuer_extensions",
	     test_cosign_strict__oidc_issuer_extensions},
	    {"chain_allows_code_signing",
	     test_cosign_strict__chain_allows_code_signing},
	    {"chain_annotation_ends_at_a_trusted_root",
	     test_cosign_strict__chain_annotation_ends_at_a_trusted_root},
	    {"log_entry_names_the_exact_certificate",
	     test_cosign_strict__log_entry_names_the_exact_certificate},
	    {"repo_digest_or_exact_by_tag",
	     test_cosign_strict__repo_digest_or_exact_by_tag},
	    {"signed_timestamps_date_the_certificate",
	     test_cosign_strict__signed_timestamps_date_the_certificate},
	    CU_TEST_INFO_NULL,
	};

	if (setup() != 0) {
		teardown();
		return 1;
	}
	{
		int rc = al_test_run("cosign_strict", tests);

		teardown();
		return rc;
	}
}
