/* cosign.c: the cosign simple-signing payload, the trust store (keys, Fulcio
 * anchors, Rekor keys), signature checks on OpenSSL 3 EVP and Fulcio
 * certificates. */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/asn1.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "airlock/cosign.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "json_int.h"
#include "cosign_int.h"
#include "name_int.h"
#include "sig_int.h"

/* Longest certificate identity or issuer taken (SAN email, URI, DNS name;
 * the OIDC issuer URL): they are matched, shown and recorded. */
#define CERT_NAME_MAX 4096

/* --- payload -------------------------------------------------------- */

int al_cosign_payload_parse(al_sig_payload *out, const uint8_t *p, size_t n)
{
	/* containers/image's UntrustedSigstorePayload: 'optional' is one of
	 * the exact fields, null allowed */
	static const al_sig__payload_rules rules = {
	    .what = "cosign payload",
	    .type = AL_COSIGN_PAYLOAD_TYPE,
	    .max = AL_COSIGN_MAX_PAYLOAD,
	    .optional_member = 1,
	};

	return al_sig__payload_read(out, p, n, &rules);
}

/* --- keys and PEM --------------------------------------------------- */

static _Thread_local int cosign_oom;

void al__cosign_oom_note(void)
{
	cosign_oom = 1;
}

int al__cosign_oom_take(void)
{
	int was = cosign_oom;

	cosign_oom = 0;
	return was;
}

int al__cosign_b64(al_buf *out, const char *s, size_t n)
{
	int rc = al_base64_decode(out, s, n);

	if (rc == AL_ENOMEM)
		al__cosign_oom_note();
	return rc;
}

void al__cosign_hex(char *out, const uint8_t *p, size_t n)
{
	static const char hx[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = hx[p[i] >> 4];
		out[2 * i + 1] = hx[p[i] & 15];
	}
	out[2 * n] = '\0';
}

int al__cosign_key_id(uint8_t id[32], EVP_PKEY *k)
{
	unsigned char *der = NULL;
	unsigned int mdlen = 0;
	int len = i2d_PUBKEY(k, &der);
	int ok;

	if (len <= 0)
		return al_error_openssl(AL_EPARSE,
		                        "cannot encode a public key");
	ok = EVP_Digest(der, (size_t)len, id, &mdlen, EVP_sha256(), NULL);
	OPENSSL_free(der);
	if (ok != 1 || mdlen != 32)
		return al_error_openssl(AL_ENOMEM, "SHA-256 failed");
	return 0;
}

/* 0 when k is a kind of key sigstore signs with. */
static int key_supported(EVP_PKEY *k, const char *what)
{
	char group[64];
	size_t glen = 0;

	switch (EVP_PKEY_get_base_id(k)) {
	case EVP_PKEY_ED25519:
		return 0;
	case EVP_PKEY_RSA:
		if (EVP_PKEY_get_bits(k) < 2048)
			return al_error_set(AL_EUNSUPPORTED,
			                    "%s: RSA key of %d bits (at least "
			                    "2048 needed)",
			                    what, EVP_PKEY_get_bits(k));
		return 0;
	case EVP_PKEY_EC:
		if (EVP_PKEY_get_group_name(k, group, sizeof(group), &glen) !=
		    1)
			break;
		if (strcmp(group, "prime256v1") == 0 ||
		    strcmp(group, "secp384r1") == 0 ||
		    strcmp(group, "secp521r1") == 0)
			return 0;
		return al_error_set(AL_EUNSUPPORTED,
		                    "%s: unsupported elliptic curve '%s'", what,
		                    group);
	default:
		break;
	}
	ERR_clear_error();
	return al_error_set(AL_EUNSUPPORTED, "%s: unsupported public key type",
	                    what);
}

int al__cosign_sig_ok(EVP_PKEY *k, const uint8_t *msg, size_t mlen,
                      const uint8_t *sig, size_t slen)
{
	const EVP_MD *md = NULL;
	EVP_MD_CTX *ctx;
	int ok = 0;

	/* ECDSA is SHA-256 whatever the curve: cosign loads every verifier
	 * with crypto.SHA256, and sigstore-js verifies with Node's default
	 * digest (SHA-256); Ed25519 is pure (no prehash). */
	switch (EVP_PKEY_get_base_id(k)) {
	case EVP_PKEY_ED25519:
		break;
	case EVP_PKEY_RSA:
	case EVP_PKEY_EC:
		md = EVP_sha256();
		break;
	default:
		return 0;
	}
	if ((ctx = EVP_MD_CTX_new()) == NULL)
		return 0;
	if (EVP_DigestVerifyInit(ctx, NULL, md, NULL, k) == 1 &&
	    EVP_DigestVerify(ctx, sig, slen, msg, mlen) == 1)
		ok = 1;
	EVP_MD_CTX_free(ctx);
	ERR_clear_error();
	return ok;
}
/* Call fn for every PEM block of pem[0..n). */
typedef int (*pem_fn)(void *ud, const char *name, const uint8_t *der, long len,
                      const char *what);

static int pem_each(const uint8_t *pem, size_t n, const char *what, pem_fn fn,
                    void *ud)
{
	BIO *bio = NULL;
	char *name = NULL, *header = NULL;
	unsigned char *data = NULL;
	long len = 0;
	int rc = 0, blocks = 0;

	if (n > AL_COSIGN_MAX_PEM)
		return al_error_set(AL_ELIMIT, "%s: more than %llu bytes", what,
		                    (unsigned long long)AL_COSIGN_MAX_PEM);
	if ((bio = BIO_new_mem_buf(pem, (int)n)) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	for (;;) {
		if (PEM_read_bio(bio, &name, &header, &data, &len) != 1) {
			unsigned long e = ERR_peek_last_error();

			if (ERR_GET_REASON(e) == PEM_R_NO_START_LINE &&
			    blocks > 0) {
				ERR_clear_error();
				break;
			}
			rc = al_error_openssl(AL_EPARSE, "%s: %s", what,
			                      blocks > 0 ? "malformed PEM block"
			                                 : "no PEM block");
			goto out;
		}
		blocks++;
		rc = fn(ud, name, data, len, what);
		OPENSSL_free(name);
		OPENSSL_free(header);
		OPENSSL_free(data);
		name = header = NULL;
		data = NULL;
		if (rc < 0)
			goto out;
	}
out:
	OPENSSL_free(name);
	OPENSSL_free(header);
	OPENSSL_free(data);
	BIO_free(bio);
	return rc;
}

int al_cosign_trust_new(al_cosign_trust **out)
{
	al_cosign_trust *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	*out = t;
	return 0;
}

void al_cosign_trust_free(al_cosign_trust *t)
{
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; i < t->nkeys; i++)
		EVP_PKEY_free(t->keys[i].pkey);
	for (i = 0; i < t->nrekor; i++)
		EVP_PKEY_free(t->rekor[i].pkey);
	for (i = 0; i < t->nfulcio; i++)
		X509_free(t->fulcio[i]);
	for (i = 0; i < t->ntsa; i++)
		X509_free(t->tsa[i]);
	for (i = 0; i < t->nct; i++)
		EVP_PKEY_free(t->ct[i].pkey);
	free(t->ct);
	free(t->tsa);
	free(t->tsa_win);
	free(t->fulcio_win);
	free(t->keys);
	free(t->rekor);
	free(t->fulcio);
	free(t->issuer);
	free(t->subject);
	free(t->pki_email);
	free(t->pki_hostname);
	free(t);
}

int al_cosign_trust_set_pki(al_cosign_trust *t, const char *email,
                            const char *hostname)
{
	char *e = NULL, *h = NULL;

	if (email == NULL && hostname == NULL)
		return al_error_set(AL_EINVAL, "a PKI trust needs an email or "
		                               "a hostname to require");
	if ((email != NULL && (e = al_strdup(email)) == NULL) ||
	    (hostname != NULL && (h = al_strdup(hostname)) == NULL)) {
		free(e);
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	free(t->pki_email);
	free(t->pki_hostname);
	t->pki_email = e;
	t->pki_hostname = h;
	t->pki = 1;
	return 0;
}

typedef struct key_add {
	cs_key **keys;
	size_t *n;
} key_add;

int al__cosign_add_key_der(cs_key **list, size_t *n, const uint8_t *der,
                           long len, const uint8_t *id, const cs_win *w,
                           const char *origin, const char *what)
{
	const unsigned char *p = der;
	EVP_PKEY *k = NULL;
	cs_key *grown;
	int rc;

	if (*n >= AL_COSIGN_MAX_TRUST)
		return al_error_set(AL_ELIMIT, "%s: more than %d keys", what,
		                    AL_COSIGN_MAX_TRUST);
	if (origin != NULL && strlen(origin) >= sizeof(grown->origin))
		return al_error_set(AL_EPARSE, "%s: log origin too long", what);
	if ((k = d2i_PUBKEY(NULL, &p, len)) == NULL || p != der + len) {
		EVP_PKEY_free(k);
		if (k == NULL && ERR_GET_REASON(ERR_peek_last_error()) ==
		                     ERR_R_MALLOC_FAILURE)
			return al_error_openssl(AL_ENOMEM, "out of memory");
		return al_error_openssl(AL_EPARSE, "%s: malformed public key",
		                        what);
	}
	if ((rc = key_supported(k, what)) < 0)
		goto fail;
	grown = realloc(*list, (*n + 1) * sizeof(**list));
	if (grown == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto fail;
	}
	*list = grown;
	memset(&grown[*n], 0, sizeof(grown[*n]));
	if (id != NULL)
		memcpy(grown[*n].id, id, 32);
	else if ((rc = al__cosign_key_id(grown[*n].id, k)) < 0)
		goto fail;
	grown[*n].win.from = w != NULL ? w->from : CS_FOREVER_FROM;
	grown[*n].win.until = w != NULL ? w->until : CS_FOREVER_UNTIL;
	if (origin != NULL)
		memcpy(grown[*n].origin, origin, strlen(origin) + 1);
	grown[*n].pkey = k;
	(*n)++;
	return 0;
fail:
	EVP_PKEY_free(k);
	return rc;
}

static int add_key_block(void *ud, const char *name, const uint8_t *der,
                         long len, const char *what)
{
	key_add *ka = ud;

	if (strcmp(name, "PUBLIC KEY") != 0)
		return al_error_set(AL_EPARSE,
		                    "%s: a '%s' PEM block where a PUBLIC KEY "
		                    "was expected",
		                    what, name);
	return al__cosign_add_key_der(ka->keys, ka->n, der, len, NULL, NULL,
	                              NULL, what);
}

int al_cosign_trust_add_keys(al_cosign_trust *t, const uint8_t *pem, size_t n,
                             const char *what)
{
	key_add ka = {&t->keys, &t->nkeys};

	return pem_each(pem, n, what, add_key_block, &ka);
}

int al_cosign_trust_add_rekor(al_cosign_trust *t, const uint8_t *pem, size_t n,
                              const char *what)
{
	key_add ka = {&t->rekor, &t->nrekor};

	return pem_each(pem, n, what, add_key_block, &ka);
}

typedef struct cert_add {
	X509 ***list;
	cs_win **win;
	size_t *n;
} cert_add;

int al__cosign_add_cert_der(X509 ***list, cs_win **win, size_t *n,
                            const uint8_t *der, long len, const cs_win *w,
                            const char *what)
{
	const unsigned char *p = der;
	X509 *c;
	X509 **grown;
	cs_win *wgrown;

	if (*n >= AL_COSIGN_MAX_TRUST)
		return al_error_set(AL_ELIMIT, "%s: more than %d certificates",
		                    what, AL_COSIGN_MAX_TRUST);
	if ((c = d2i_X509(NULL, &p, len)) == NULL || p != der + len) {
		X509_free(c);
		if (c == NULL && ERR_GET_REASON(ERR_peek_last_error()) ==
		                     ERR_R_MALLOC_FAILURE)
			return al_error_openssl(AL_ENOMEM, "out of memory");
		return al_error_openssl(AL_EPARSE, "%s: malformed certificate",
		                        what);
	}
	wgrown = realloc(*win, (*n + 1) * sizeof(*wgrown));
	if (wgrown == NULL) {
		X509_free(c);
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	*win = wgrown;
	wgrown[*n].from = w != NULL ? w->from : CS_FOREVER_FROM;
	wgrown[*n].until = w != NULL ? w->until : CS_FOREVER_UNTIL;
	grown = realloc(*list, (*n + 1) * sizeof(*grown));
	if (grown == NULL) {
		X509_free(c);
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	*list = grown;
	grown[(*n)++] = c;
	return 0;
}

static int add_cert_block(void *ud, const char *name, const uint8_t *der,
                          long len, const char *what)
{
	cert_add *ca = ud;

	if (strcmp(name, "CERTIFICATE") != 0)
		return al_error_set(AL_EPARSE,
		                    "%s: a '%s' PEM block where a CERTIFICATE "
		                    "was expected",
		                    what, name);
	return al__cosign_add_cert_der(ca->list, ca->win, ca->n, der, len, NULL,
	                               what);
}

int al_cosign_trust_add_fulcio(al_cosign_trust *t, const uint8_t *pem, size_t n,
                               const char *what)
{
	cert_add ca = {&t->fulcio, &t->fulcio_win, &t->nfulcio};

	return pem_each(pem, n, what, add_cert_block, &ca);
}

int al_cosign_trust_add_tsa(al_cosign_trust *t, const uint8_t *pem, size_t n,
                            const char *what)
{
	cert_add ca = {&t->tsa, &t->tsa_win, &t->ntsa};

	return pem_each(pem, n, what, add_cert_block, &ca);
}

typedef int (*add_fn)(al_cosign_trust *, const uint8_t *, size_t, const char *);

static int add_file(al_cosign_trust *t, const char *path, add_fn fn)
{
	al_buf b = AL_BUF_INIT(AL_COSIGN_MAX_PEM);
	int rc;

	if ((rc = al_fs_read_file(path, &b)) < 0)
		return rc;
	rc = fn(t, b.ptr, b.len, path);
	al_buf_free(&b);
	return rc;
}

int al_cosign_trust_add_keys_file(al_cosign_trust *t, const char *path)
{
	return add_file(t, path, al_cosign_trust_add_keys);
}

int al_cosign_trust_add_fulcio_file(al_cosign_trust *t, const char *path)
{
	return add_file(t, path, al_cosign_trust_add_fulcio);
}

int al_cosign_trust_add_rekor_file(al_cosign_trust *t, const char *path)
{
	return add_file(t, path, al_cosign_trust_add_rekor);
}

int al_cosign_trust_add_tsa_file(al_cosign_trust *t, const char *path)
{
	return add_file(t, path, al_cosign_trust_add_tsa);
}

int al_cosign_trust_set_identity(al_cosign_trust *t, const char *issuer,
                                 const char *subject)
{
	char *i = NULL, *s = NULL;

	if ((issuer != NULL && (i = al_strdup(issuer)) == NULL) ||
	    (subject != NULL && (s = al_strdup(subject)) == NULL)) {
		free(i);
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	free(t->issuer);
	free(t->subject);
	t->issuer = i;
	t->subject = s;
	return 0;
}

void al_cosign_trust_counts(const al_cosign_trust *t, size_t *keys,
                            size_t *fulcio, size_t *rekor)
{
	if (keys != NULL)
		*keys = t->nkeys;
	if (fulcio != NULL)
		*fulcio = t->nfulcio;
	if (rekor != NULL)
		*rekor = t->nrekor;
}

typedef struct certs_add {
	STACK_OF(X509) * sk;
} certs_add;

static int add_chain_block(void *ud, const char *name, const uint8_t *der,
                           long len, const char *what)
{
	certs_add *ca = ud;
	const unsigned char *p = der;
	X509 *c;

	if (strcmp(name, "CERTIFICATE") != 0)
		return al_error_set(AL_EVERIFY,
		                    "%s: a '%s' PEM block where a CERTIFICATE "
		                    "was expected",
		                    what, name);
	if (sk_X509_num(ca->sk) >= AL_COSIGN_MAX_TRUST)
		return al_error_set(AL_EVERIFY, "%s: too many certificates",
		                    what);
	if ((c = d2i_X509(NULL, &p, len)) == NULL || p != der + len) {
		X509_free(c);
		return al_error_openssl(AL_EVERIFY, "%s: malformed certificate",
		                        what);
	}
	if (sk_X509_push(ca->sk, c) <= 0) {
		X509_free(c);
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	return 0;
}

int al__cosign_pem_certs(STACK_OF(X509) * *out, const char *pem, size_t n,
                         const char *what)
{
	certs_add ca;
	int rc;

	if (*out == NULL && (*out = sk_X509_new_null()) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	ca.sk = *out;
	rc = pem_each((const uint8_t *)pem, n, what, add_chain_block, &ca);
	if (rc == AL_EPARSE)
		rc = AL_EVERIFY; /* signature material, not configuration */
	return rc;
}

typedef struct any_key {
	EVP_PKEY *k;
} any_key;

static int any_key_block(void *ud, const char *name, const uint8_t *der,
                         long len, const char *what)
{
	any_key *ak = ud;
	const unsigned char *p = der;
	X509 *c;

	if (ak->k != NULL)
		return al_error_set(AL_EVERIFY, "%s: more than one PEM block",
		                    what);
	if (strcmp(name, "PUBLIC KEY") == 0) {
		ak->k = d2i_PUBKEY(NULL, &p, len);
	} else if (strcmp(name, "CERTIFICATE") == 0) {
		if ((c = d2i_X509(NULL, &p, len)) != NULL) {
			ak->k = X509_get_pubkey(c);
			X509_free(c);
		}
	}
	if (ak->k == NULL)
		return al_error_openssl(
		    AL_EVERIFY, "%s: no key in a '%s' block", what, name);
	return 0;
}

int al__cosign_pem_any_key(EVP_PKEY **out, const uint8_t *pem, size_t n)
{
	any_key ak = {NULL};
	int rc =
	    pem_each(pem, n, "transparency log entry key", any_key_block, &ak);

	if (rc < 0) {
		EVP_PKEY_free(ak.k);
		return rc == AL_ENOMEM ? rc : AL_EVERIFY;
	}
	*out = ak.k;
	return 0;
}

/* --- Fulcio certificates ------------------------------------------- */

/* The value of the only extension oid of c into *os (borrowed), NULL when
 * absent; AL_EVERIFY when c holds it twice. */
static int cert_ext(ASN1_OCTET_STRING **os, X509 *c, const char *oid)
{
	ASN1_OBJECT *obj = OBJ_txt2obj(oid, 1);
	int pos, again;

	*os = NULL;
	if (obj == NULL)
		return al_error_openssl(AL_ENOMEM, "OBJ_txt2obj");
	pos = X509_get_ext_by_OBJ(c, obj, -1);
	again = pos >= 0 ? X509_get_ext_by_OBJ(c, obj, pos) : -1;
	ASN1_OBJECT_free(obj);
	if (again >= 0)
		return al_error_set(AL_EVERIFY,
		                    "certificate has a duplicate %s extension",
		                    oid);
	if (pos >= 0)
		*os = X509_EXTENSION_get_data(X509_get_ext(c, pos));
	return 0;
}

/*
 * The OIDC issuer of a Fulcio certificate into *out (caller frees): as
 * containers/image signature/fulcio_cert.go fulcioIssuerInCertificate,
 * .1.8 must be one DER UTF8String with nothing after it, the deprecated
 * .1.1 is the raw bytes, and when both are present they must be equal
 * (Fulcio docs/oid-info.md). AL_EVERIFY when absent or inconsistent.
 */
static int cert_issuer(char **out, X509 *c)
{
	ASN1_OCTET_STRING *v1 = NULL, *v2 = NULL;
	ASN1_UTF8STRING *u = NULL;
	const unsigned char *p;
	const uint8_t *val = NULL;
	size_t len = 0;
	int rc;

	if ((rc = cert_ext(&v1, c, "1.3.6.1.4.1.57264.1.1")) < 0 ||
	    (rc = cert_ext(&v2, c, "1.3.6.1.4.1.57264.1.8")) < 0)
		return rc;
	if (v2 != NULL) {
		long n = ASN1_STRING_length(v2);

		p = ASN1_STRING_get0_data(v2);
		u = d2i_ASN1_UTF8STRING(NULL, &p, n);
		ERR_clear_error();
		if (u == NULL) {
			rc = al_error_set(AL_EVERIFY,
			                  "invalid ASN.1 in the OIDC issuer "
			                  "(v2) extension");
			goto out;
		}
		if (p != ASN1_STRING_get0_data(v2) + n) {
			rc = al_error_set(AL_EVERIFY,
			                  "invalid ASN.1 in the OIDC issuer "
			                  "(v2) extension: trailing data");
			goto out;
		}
		val = ASN1_STRING_get0_data(u);
		len = (size_t)ASN1_STRING_length(u);
	}
	if (v1 != NULL) {
		const uint8_t *b = ASN1_STRING_get0_data(v1);
		size_t blen = (size_t)ASN1_STRING_length(v1);

		if (val != NULL && (blen != len || memcmp(b, val, len) != 0)) {
			rc = al_error_set(AL_EVERIFY,
			                  "inconsistent OIDC issuer extensions "
			                  "(v1 and v2 differ)");
			goto out;
		}
		val = b;
		len = blen;
	}
	if (val == NULL) {
		rc = al_error_set(AL_EVERIFY, "Fulcio certificate is missing "
		                              "the OIDC issuer extension");
		goto out;
	}
	if (memchr(val, 0, len) != NULL) {
		rc = al_error_set(AL_EVERIFY,
		                  "OIDC issuer extension holds a NUL byte");
		goto out;
	}
	/* it reaches records and output lines: text, bounded */
	if (!al_name_ok((const char *)val, len, AL_NAME_TEXT, CERT_NAME_MAX)) {
		rc = al_error_set(AL_EVERIFY,
		                  "OIDC issuer extension is not printable "
		                  "text (a control byte, or over %d bytes)",
		                  CERT_NAME_MAX);
		goto out;
	}
	if ((*out = al_strndup((const char *)val, len)) == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	rc = 0;
out:
	ASN1_UTF8STRING_free(u);
	return rc;
}

/* The SAN emails and URIs of c joined by ", " for messages, and whether
 * want (may be NULL: first one) is among them. */
static int cert_subject(X509 *c, const char *want, const char *want_dns,
                        int email_only, char **matched, al_buf *all)
{
	GENERAL_NAMES *names =
	    X509_get_ext_d2i(c, NID_subject_alt_name, NULL, NULL);
	int i, found = 0;

	for (i = 0; names != NULL && i < sk_GENERAL_NAME_num(names); i++) {
		GENERAL_NAME *gn = sk_GENERAL_NAME_value(names, i);
		ASN1_IA5STRING *s = NULL;
		char *v;

		if (gn->type == GEN_EMAIL)
			s = gn->d.rfc822Name;
		else if (gn->type == GEN_URI && want_dns == NULL && !email_only)
			s = gn->d.uniformResourceIdentifier;
		else if (gn->type == GEN_DNS && want_dns != NULL)
			s = gn->d.dNSName;
		/* a name with a NUL or control byte, or over CERT_NAME_MAX,
		 * is no identity: never matched, shown or recorded */
		if (s == NULL ||
		    !al_name_ok((const char *)ASN1_STRING_get0_data(s),
		                (size_t)ASN1_STRING_length(s), AL_NAME_TEXT,
		                CERT_NAME_MAX))
			continue;
		v = al_strndup((const char *)ASN1_STRING_get0_data(s),
		               (size_t)ASN1_STRING_length(s));
		if (v == NULL) {
			al__cosign_oom_note();
			break;
		}
		if (al_buf_printf(all, "%s'%s'", all->len > 0 ? ", " : "", v) ==
		    AL_ENOMEM)
			al__cosign_oom_note();
		if (!found && ((want == NULL && want_dns == NULL) ||
		               (want != NULL && gn->type != GEN_DNS &&
		                strcmp(v, want) == 0) ||
		               (want_dns != NULL && gn->type == GEN_DNS &&
		                strcmp(v, want_dns) == 0))) {
			found = 1;
			*matched = v;
		} else {
			free(v);
		}
	}
	GENERAL_NAMES_free(names);
	return found;
}

/*
 * Go's x509.Verify with KeyUsages {CodeSigning}, as containers/image
 * (fulcio_cert.go, pki_cert.go), cosign and sigstore-go call it: every
 * certificate of the verified chain, root included, that carries an
 * extended key usage extension must allow code signing or any usage.
 */
static int chain_code_signing(X509_STORE_CTX *ctx)
{
	STACK_OF(X509) *v = X509_STORE_CTX_get0_chain(ctx);
	int i;

	for (i = 0; i < sk_X509_num(v); i++) {
		X509 *c = sk_X509_value(v, i);
		uint32_t xku;

		if ((X509_get_extension_flags(c) & EXFLAG_XKUSAGE) == 0)
			continue;
		xku = X509_get_extended_key_usage(c);
		if ((xku & (XKU_CODE_SIGN | XKU_ANYEKU)) == 0)
			return al_error_set(
			    AL_EVERIFY,
			    "certificate %d of the chain does not allow code "
			    "signing (extended key usage)",
			    i);
	}
	return 0;
}

/*
 * The chain of leaf (untrusted intermediates chain) to a certificate
 * authority of t valid at the time at, for code signing, and with a
 * trusted root's CT logs its SCTs (sigstore-go VerifyLeafCertificate,
 * VerifySignedCertificateTimestamp). AL_EVERIFY with the reason.
 */
static int cert_chain(const al_cosign_trust *t, X509 *leaf,
                      STACK_OF(X509) * chain, int64_t at)
{
	X509_STORE *store = NULL;
	X509_STORE_CTX *ctx = NULL;
	X509_VERIFY_PARAM *param;
	size_t i, anchors = 0;
	int rc;

	if ((store = X509_STORE_new()) == NULL ||
	    (ctx = X509_STORE_CTX_new()) == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	/* only the certificate authorities whose trusted-root window holds
	 * the time (sigstore-go VerifyLeafCertificate, TimeRange closed) */
	for (i = 0; i < t->nfulcio; i++) {
		if (!al__cosign_win_has(&t->fulcio_win[i], at))
			continue;
		if (X509_STORE_add_cert(store, t->fulcio[i]) != 1) {
			rc = al_error_openssl(AL_ENOMEM, "X509_STORE_add_cert");
			goto out;
		}
		anchors++;
	}
	if (anchors == 0) {
		rc =
		    al_error_set(AL_EVERIFY,
		                 "no %s is valid at the time %lld (trusted "
		                 "root validFor)",
		                 t->pki ? "CA" : "Fulcio certificate authority",
		                 (long long)at);
		goto out;
	}
	if (X509_STORE_CTX_init(ctx, store, leaf, chain) != 1) {
		rc = al_error_openssl(AL_ENOMEM, "X509_STORE_CTX_init");
		goto out;
	}
	param = X509_STORE_CTX_get0_param(ctx);
	/* Every configured certificate is an anchor (Go's CertPool roots);
	 * the time is the log's, not ours: Fulcio certificates live ten
	 * minutes. */
	X509_VERIFY_PARAM_set_flags(param, X509_V_FLAG_PARTIAL_CHAIN |
	                                       X509_V_FLAG_X509_STRICT);
	X509_VERIFY_PARAM_set_time(param, (time_t)at);
	if (X509_verify_cert(ctx) != 1) {
		int err = X509_STORE_CTX_get_error(ctx);

		rc = al_error_set(AL_EVERIFY,
		                  "certificate does not verify against the "
		                  "%s at the %s %lld: %s",
		                  t->pki ? "CA roots" : "Fulcio roots",
		                  t->pki ? "time" : "log time", (long long)at,
		                  X509_verify_cert_error_string(err));
		ERR_clear_error();
		goto out;
	}
	if ((rc = chain_code_signing(ctx)) < 0)
		goto out;
	if (!t->pki && t->nct > 0) {
		STACK_OF(X509) *vc = X509_STORE_CTX_get0_chain(ctx);

		rc = al__cosign_sct_verify(
		    t, leaf, sk_X509_num(vc) > 1 ? sk_X509_value(vc, 1) : NULL);
	}
out:
	X509_STORE_CTX_free(ctx);
	X509_STORE_free(store);
	return rc;
}

/* BYOPKI: containers/image checks the SAN only (email or DNS name), no
 * Fulcio extension, no key usage. *subject: the matched name. */
static int pki_identity(const al_cosign_trust *t, X509 *leaf, char **subject)
{
	al_buf names = AL_BUF_INIT(4096);
	char *sub = NULL, *dns = NULL;
	int rc = 0;

	if (t->pki_email != NULL &&
	    !cert_subject(leaf, t->pki_email, NULL, 1, &sub, &names)) {
		rc = al_error_set(AL_EVERIFY,
		                  "certificate identity mismatch: want "
		                  "email '%s', certificate names %s",
		                  t->pki_email,
		                  names.len > 0 ? al_buf_cstr(&names) : "none");
		goto out;
	}
	al_buf_reset(&names);
	if (t->pki_hostname != NULL &&
	    !cert_subject(leaf, NULL, t->pki_hostname, 0, &dns, &names)) {
		rc = al_error_set(AL_EVERIFY,
		                  "certificate identity mismatch: want "
		                  "hostname '%s', certificate names %s",
		                  t->pki_hostname,
		                  names.len > 0 ? al_buf_cstr(&names) : "none");
		goto out;
	}
	*subject = sub != NULL ? sub : dns;
	if (sub != NULL)
		free(dns);
	sub = dns = NULL;
out:
	free(sub);
	free(dns);
	al_buf_free(&names);
	return rc;
}

/* A Fulcio certificate's identity: code signing, a SAN (t->subject, or
 * with none asked for the first), the OIDC issuer (t->issuer when set). */
static int fulcio_identity(const al_cosign_trust *t, X509 *leaf, char **subject,
                           char **issuer)
{
	al_buf names = AL_BUF_INIT(4096);
	char *sub = NULL, *iss = NULL;
	int rc;

	if ((X509_get_extension_flags(leaf) & EXFLAG_XKUSAGE) == 0 ||
	    (X509_get_extended_key_usage(leaf) & XKU_CODE_SIGN) == 0) {
		rc = al_error_set(
		    AL_EVERIFY, "certificate lacks the code signing key usage");
		goto out;
	}
	if (!cert_subject(leaf, t->subject, NULL, t->subject_email_only, &sub,
	                  &names)) {
		rc = al_error_set(AL_EVERIFY,
		                  t->subject != NULL
		                      ? "certificate identity mismatch: want "
		                        "'%s', certificate names %s"
		                      : "certificate names no identity%s%s",
		                  t->subject != NULL ? t->subject : "",
		                  names.len > 0 ? al_buf_cstr(&names) : "none");
		goto out;
	}
	/* containers/image refuses a certificate whose issuer extensions
	 * are missing or inconsistent whatever the policy asks for */
	if ((rc = cert_issuer(&iss, leaf)) < 0)
		goto out;
	if (t->issuer != NULL && strcmp(iss, t->issuer) != 0) {
		rc = al_error_set(AL_EVERIFY,
		                  "certificate issuer mismatch: want '%s', "
		                  "certificate names '%s'",
		                  t->issuer, iss);
		goto out;
	}
	*subject = sub;
	*issuer = iss;
	sub = iss = NULL;
	rc = 0;
out:
	free(sub);
	free(iss);
	al_buf_free(&names);
	return rc;
}

int al__cosign_cert_verify(const al_cosign_trust *t, X509 *leaf,
                           STACK_OF(X509) * chain, int64_t at, char **subject,
                           char **issuer)
{
	int rc;

	if (t->nfulcio == 0)
		return al_error_set(AL_EINVAL,
		                    "a keyless signature, and no Fulcio "
		                    "certificate is trusted");
	/* any_identity: a trusted-root check (al_cosign_check_store_root),
	 * which reports who signed and decides nothing on it */
	if (!t->pki && !t->any_identity && t->issuer == NULL &&
	    t->subject == NULL)
		return al_error_set(AL_EINVAL,
		                    "a keyless signature, and no identity "
		                    "(issuer or subject) to require");
	if ((rc = cert_chain(t, leaf, chain, at)) < 0)
		return rc;
	if (t->pki) {
		*issuer = NULL;
		return pki_identity(t, leaf, subject);
	}
	return fulcio_identity(t, leaf, subject, issuer);
}

/* --- results -------------------------------------------------------- */

void al_cosign_info_clear(al_cosign_info *info)
{
	if (info == NULL)
		return;
	free(info->subject);
	free(info->issuer);
	free(info->payload_type);
	free(info->dsse_payload);
	al_sig_payload_clear(&info->payload);
	memset(info, 0, sizeof(*info));
}

/* 0 when the in-toto statement p[0..n) names d among its subjects. */
static int intoto_names(const uint8_t *p, size_t n, const al_digest *d)
{
	char hex[AL_DIGEST_STRMAX];
	json_t *root = NULL, *subjects, *s;
	size_t i;
	int rc = AL_EVERIFY;

	if ((rc = al_json_parse(&root, p, n, "in-toto statement")) < 0)
		return rc == AL_ENOMEM
		           ? rc
		           : al_error_wrap(AL_EVERIFY,
		                           "invalid in-toto statement");
	rc = AL_EVERIFY;
	subjects = json_object_get(root, "subject");
	al_digest_hex(d, hex);
	json_array_foreach(subjects, i, s)
	{
		const char *v = al_json_str(json_object_get(s, "digest"),
		                            al_digest_algo_name(d->algo));

		if (v != NULL && strcmp(v, hex) == 0) {
			rc = 0;
			break;
		}
	}
	json_decref(root);
	if (rc < 0)
		return al_error_set(AL_EVERIFY,
		                    "digest mismatch: the in-toto statement "
		                    "does not name %s:%s",
		                    al_digest_algo_name(d->algo), hex);
	return 0;
}

int al_cosign_check_image(const al_cosign_info *info, const al_digest *digest,
                          const char *reference, al_sig_identity_policy policy)
{
	if (info->has_payload)
		return al_sig_payload_check(&info->payload, digest, reference,
		                            policy);
	if (info->payload_type != NULL &&
	    strcmp(info->payload_type, "application/vnd.in-toto+json") == 0)
		return intoto_names(info->dsse_payload, info->dsse_payload_len,
		                    digest);
	return al_error_set(AL_EVERIFY,
	                    "the signature vouches for no image (neither a "
	                    "cosign payload nor an in-toto statement)");
}

int al_cosign_check_blob(const al_cosign_info *info, const uint8_t *artifact,
                         size_t n)
{
	al_hasher *h = NULL;
	al_digest d;
	int rc;

	if (info->payload_type == NULL)
		return 0; /* a message signature: verified over artifact */
	if (strcmp(info->payload_type, "application/vnd.in-toto+json") != 0) {
		if (info->dsse_payload_len == n &&
		    (n == 0 || memcmp(info->dsse_payload, artifact, n) == 0))
			return 0;
		return al_error_set(AL_EVERIFY,
		                    "the DSSE payload (%s) is not the artifact",
		                    info->payload_type);
	}
	if ((rc = al_hasher_new(&h, AL_DIGEST_SHA256)) < 0 ||
	    (rc = al_hasher_update(h, artifact, n)) < 0 ||
	    (rc = al_hasher_final(h, &d)) < 0) {
		al_hasher_free(h);
		return rc;
	}
	al_hasher_free(h);
	return intoto_names(info->dsse_payload, info->dsse_payload_len, &d);
}
