/* pgp.c: OpenPGP packets, keyrings, verification on OpenSSL 3 and zlib. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/rsa.h>
#include <zlib.h>

#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/log.h"
#include "airlock/pgp.h"
#include "error_int.h"

/* Packet tags (RFC 4880 section 4.3). */
enum {
	TAG_SIG = 2,
	TAG_OPS = 4,
	TAG_SECRET_KEY = 5,
	TAG_PUBKEY = 6,
	TAG_SECRET_SUBKEY = 7,
	TAG_COMPRESSED = 8,
	TAG_MARKER = 10,
	TAG_LITERAL = 11,
	TAG_TRUST = 12,
	TAG_UID = 13,
	TAG_PUBSUBKEY = 14,
	TAG_UATTR = 17,
};

/* Public-key algorithms. */
enum {
	PK_RSA = 1,
	PK_RSA_E = 2,
	PK_RSA_S = 3,
	PK_ECDSA = 19,
	PK_EDDSA = 22,
	PK_ED25519 = 27,
};

/* Signature types. */
enum {
	SIG_BINARY = 0x00,
	SIG_TEXT = 0x01,
	SIG_CERT_FIRST = 0x10,
	SIG_CERT_LAST = 0x13,
	SIG_SUBKEY_BINDING = 0x18,
	SIG_PRIMARY_BINDING = 0x19,
	SIG_DIRECT_KEY = 0x1f,
	SIG_KEY_REVOCATION = 0x20,
	SIG_SUBKEY_REVOCATION = 0x28,
};

#define KEYFLAG_SIGN 0x02

/* 2023-02-01 00:00:00 UTC: SHA-1 self-signatures and bindings made before it
 * are still accepted (RFC 9580 9.5, what gpg and the CVO accept); never a
 * SHA-1 data signature. */
#define SHA1_KEYSIG_CUTOFF 1675209600u

/* Reasons for revocation (RFC 9580 5.2.3.31) that are "soft": the key was
 * superseded or retired, not compromised (RFC 9580 would keep signatures made
 * before the revocation; we do not, see key_valid_for). */
#define REVOKE_SUPERSEDED 1
#define REVOKE_RETIRED 3

/* ---------------------------------------------------------------- utils */

static uint32_t be32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) |
	       ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

static uint64_t be64(const uint8_t *p)
{
	return ((uint64_t)be32(p) << 32) | (uint64_t)be32(p + 4);
}

/* "2024-01-02 03:04:05 UTC" for messages. */
static const char *fmt_time(uint64_t t, char out[32])
{
	struct tm tm;
	time_t tt = (time_t)t;

	if (gmtime_r(&tt, &tm) == NULL ||
	    strftime(out, 32, "%Y-%m-%d %H:%M:%S UTC", &tm) == 0) {
		int n = snprintf(out, 32, "%" PRIu64, t);
		if (n < 0 || n >= 32)
			out[0] = '\0';
	}
	return out;
}

static void hex_upper(char *out, const uint8_t *p, size_t n)
{
	static const char digits[] = "0123456789ABCDEF";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 0xf];
	}
	out[2 * n] = '\0';
}

/* ------------------------------------------------------ hash algorithms */

typedef struct hash_info {
	int id;
	const char *name; /* as in messages and results */
	const char *ossl; /* OpenSSL name, NULL when refused */
} hash_info;

static const hash_info hashes[] = {
    {1, "MD5", NULL},
    {2, "SHA-1", NULL},
    {3, "RIPEMD-160", NULL},
    {8, "SHA256", "SHA256"},
    {9, "SHA384", "SHA384"},
    {10, "SHA512", "SHA512"},
    {11, "SHA224", "SHA224"},
    {12, "SHA3-256", "SHA3-256"},
    {14, "SHA3-512", "SHA3-512"},
};

/*
 * The hash for algorithm id, or an error: MD5 and SHA-1 have practical
 * collision attacks, so a signature over them proves nothing (AL_EVERIFY).
 * sha1_ok admits SHA-1 for revocations only: a forged revocation can only
 * take trust away, so honouring an old SHA-1 one fails closed.
 */
static int hash_lookup(const hash_info **out, int id, int sha1_ok)
{
	static const hash_info sha1 = {2, "SHA-1", "SHA1"};
	size_t i;

	if (id == 2 && sha1_ok) {
		*out = &sha1;
		return 0;
	}
	for (i = 0; i < sizeof(hashes) / sizeof(hashes[0]); i++) {
		if (hashes[i].id != id)
			continue;
		if (id == 1 || id == 2)
			return al_error_set(AL_EVERIFY,
			                    "hash algorithm %s is not accepted",
			                    hashes[i].name);
		if (hashes[i].ossl == NULL)
			return al_error_set(
			    AL_EUNSUPPORTED,
			    "hash algorithm %s is not supported",
			    hashes[i].name);
		*out = &hashes[i];
		return 0;
	}
	return al_error_set(AL_EUNSUPPORTED,
	                    "hash algorithm %d is not supported", id);
}

/* ------------------------------------------------------- packet framing */

/* One packet: body points into the input or into owned (partial lengths). */
typedef struct pkt {
	int tag;
	const uint8_t *body;
	size_t len;
	uint8_t *owned;
	size_t offset;
} pkt;

/* Read a new-format body length at p[*off]; *partial set for 224..254. */
static int new_len(const uint8_t *p, size_t n, size_t *off, size_t *len,
                   int *partial, size_t hdr)
{
	size_t o = *off;
	uint8_t b;

	if (o >= n)
		return al_error_set(AL_EPARSE, "truncated packet at offset %zu",
		                    hdr);
	b = p[o];
	*partial = 0;
	if (b < 192) {
		*len = b;
		o += 1;
	} else if (b < 224) {
		if (n - o < 2)
			return al_error_set(
			    AL_EPARSE, "truncated packet at offset %zu", hdr);
		*len = ((size_t)(b - 192) << 8) + p[o + 1] + 192;
		o += 2;
	} else if (b == 255) {
		if (n - o < 5)
			return al_error_set(
			    AL_EPARSE, "truncated packet at offset %zu", hdr);
		*len = be32(p + o + 1);
		o += 5;
	} else {
		*len = (size_t)1 << (b & 0x1f);
		*partial = 1;
		o += 1;
	}
	*off = o;
	return 0;
}

/*
 * Parse the packet at p[*off] (RFC 4880 4.2: old and new format headers,
 * partial body lengths reassembled, any first chunk size accepted as gpg
 * does). Returns 1 with *out filled, 0 at the end of input.
 */
static int pkt_next(pkt *out, const uint8_t *p, size_t n, size_t *off,
                    size_t max_body)
{
	size_t o = *off, hdr = *off, len = 0;
	al_buf acc = AL_BUF_INIT(max_body);
	int tag, partial = 0, rc;
	uint8_t b;

	if (o >= n)
		return 0;
	b = p[o++];
	if ((b & 0x80) == 0)
		return al_error_set(AL_EPARSE,
		                    "invalid packet header at offset %zu", hdr);
	if (b & 0x40) {
		tag = b & 0x3f;
		if ((rc = new_len(p, n, &o, &len, &partial, hdr)) < 0)
			return rc;
		if (partial && tag != TAG_COMPRESSED && tag != TAG_LITERAL)
			return al_error_set(AL_EPARSE,
			                    "partial body length not allowed "
			                    "for packet type %d at offset %zu",
			                    tag, hdr);
	} else {
		int lt = b & 3;
		tag = (b >> 2) & 0xf;
		if (lt == 3) {
			/* indeterminate: the rest of the input (gpg's
			 * compressed packets) */
			if (tag != TAG_COMPRESSED && tag != TAG_LITERAL)
				return al_error_set(
				    AL_EPARSE,
				    "indeterminate length not allowed for "
				    "packet type %d at offset %zu",
				    tag, hdr);
			len = n - o;
		} else {
			size_t k = (size_t)1 << lt, i;
			if (n - o < k)
				return al_error_set(
				    AL_EPARSE, "truncated packet at offset %zu",
				    hdr);
			for (i = 0; i < k; i++)
				len = (len << 8) | p[o + i];
			o += k;
		}
	}
	if (tag == 0)
		return al_error_set(
		    AL_EPARSE, "reserved packet type 0 at offset %zu", hdr);
	if (!partial) {
		if (len > n - o)
			return al_error_set(
			    AL_EPARSE, "truncated packet at offset %zu", hdr);
		if (len > max_body)
			return al_error_set(
			    AL_ELIMIT,
			    "packet at offset %zu is larger than %zu bytes",
			    hdr, max_body);
		memset(out, 0, sizeof(*out));
		out->tag = tag;
		out->body = p + o;
		out->len = len;
		out->offset = hdr;
		*off = o + len;
		return 1;
	}
	for (;;) {
		if (len > n - o) {
			rc = al_error_set(
			    AL_EPARSE, "truncated packet at offset %zu", hdr);
			goto out;
		}
		if ((rc = al_buf_append(&acc, p + o, len)) < 0) {
			if (rc == AL_ELIMIT)
				rc = al_error_set(AL_ELIMIT,
				                  "packet at offset %zu is "
				                  "larger than %zu bytes",
				                  hdr, max_body);
			goto out;
		}
		o += len;
		if (!partial)
			break;
		if ((rc = new_len(p, n, &o, &len, &partial, hdr)) < 0)
			goto out;
	}
	memset(out, 0, sizeof(*out));
	out->tag = tag;
	out->len = acc.len;
	out->offset = hdr;
	out->owned = acc.ptr != NULL ? acc.ptr : malloc(1);
	if (out->owned == NULL) {
		rc = al_error_oom();
		goto out;
	}
	out->body = out->owned;
	acc.ptr = NULL;
	*off = o;
	rc = 1;
out:
	al_buf_free(&acc);
	return rc;
}

/* An MPI (RFC 4880 3.2) at p[*off]: leading zero octets stripped. */
static int read_mpi(const uint8_t **mp, size_t *mlen, const uint8_t *p,
                    size_t n, size_t *off)
{
	size_t o = *off, bits, bytes;

	if (n - o < 2)
		return al_error_set(AL_EPARSE, "truncated MPI");
	bits = ((size_t)p[o] << 8) | p[o + 1];
	bytes = (bits + 7) / 8;
	o += 2;
	if (bytes > n - o)
		return al_error_set(AL_EPARSE, "truncated MPI");
	*mp = p + o;
	*mlen = bytes;
	while (*mlen > 0 && **mp == 0) {
		(*mp)++;
		(*mlen)--;
	}
	*off = o + bytes;
	return 0;
}

/* ------------------------------------------------------------ armor */

static uint32_t crc24(const uint8_t *p, size_t n)
{
	uint32_t crc = 0xB704CEu;
	size_t i;
	int j;

	for (i = 0; i < n; i++) {
		crc ^= (uint32_t)p[i] << 16;
		for (j = 0; j < 8; j++) {
			crc <<= 1;
			if (crc & 0x1000000u)
				crc ^= 0x1864CFBu;
		}
	}
	return crc & 0xFFFFFFu;
}

static int is_ws(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Find line bounds starting at *off; returns 0 at end of input. The line
 * excludes the newline and trailing whitespace. */
static int next_line(const uint8_t *p, size_t n, size_t *off,
                     const uint8_t **line, size_t *llen)
{
	size_t o = *off, e;

	if (o >= n)
		return 0;
	e = o;
	while (e < n && p[e] != '\n')
		e++;
	*line = p + o;
	*llen = e - o;
	while (*llen > 0 && is_ws((*line)[*llen - 1]))
		(*llen)--;
	*off = e < n ? e + 1 : e;
	return 1;
}

static int line_is(const uint8_t *line, size_t llen, const char *s)
{
	size_t k = strlen(s);

	return llen >= k && memcmp(line, s, k) == 0;
}

/*
 * Decode one ASCII-armor block of kind ("PUBLIC KEY BLOCK", "MESSAGE")
 * found at or after *off into out; *off moves past its END line. Returns 1
 * when a block was decoded, 0 when no further BEGIN line exists.
 */
static int armor_decode(al_buf *out, const uint8_t *p, size_t n, size_t *off,
                        const char *kind, const char *what)
{
	const uint8_t *line;
	size_t llen, o = *off;
	al_buf b64 = AL_BUF_INIT(n);
	al_buf bin = AL_BUF_INIT(out->max);
	int rc, in_headers = 1, have_crc = 0, found = 0, ended = 0;
	uint8_t crcbytes[3];
	char begin[64], end[64];

	rc = snprintf(begin, sizeof(begin), "-----BEGIN PGP %s-----", kind);
	if (rc < 0 || (size_t)rc >= sizeof(begin))
		return al_error_set(AL_EINVAL, "armor kind too long");
	rc = snprintf(end, sizeof(end), "-----END PGP %s-----", kind);
	if (rc < 0 || (size_t)rc >= sizeof(end))
		return al_error_set(AL_EINVAL, "armor kind too long");
	while (next_line(p, n, &o, &line, &llen)) {
		while (llen > 0 && is_ws(line[0])) {
			line++;
			llen--;
		}
		if (line_is(line, llen, begin)) {
			found = 1;
			break;
		}
		if (line_is(line, llen, "-----BEGIN PGP ")) {
			rc = al_error_set(AL_EPARSE,
			                  "'%s': unexpected armor block '%.*s'",
			                  what, (int)(llen > 60 ? 60 : llen),
			                  (const char *)line);
			goto out;
		}
	}
	if (!found) {
		rc = 0;
		goto out;
	}
	while (next_line(p, n, &o, &line, &llen)) {
		if (in_headers) {
			if (llen == 0) {
				in_headers = 0;
				continue;
			}
			if (memchr(line, ':', llen) != NULL &&
			    !line_is(line, llen, "-----")) {
				continue;
			}
			in_headers = 0;
		}
		if (line_is(line, llen, end)) {
			ended = 1;
			break;
		}
		if (have_crc) {
			if (llen == 0)
				continue;
			rc = al_error_set(AL_EPARSE,
			                  "'%s': data after the armor checksum",
			                  what);
			goto out;
		}
		if (llen == 5 && line[0] == '=') {
			al_buf crc = AL_BUF_INIT(3);
			rc = al_base64_decode(&crc, (const char *)line + 1, 4);
			if (rc == 0 && crc.len != 3)
				rc = al_error_set(AL_EPARSE,
				                  "bad checksum line");
			if (rc == 0)
				memcpy(crcbytes, crc.ptr, 3);
			al_buf_free(&crc);
			if (rc < 0) {
				rc = al_error_set(
				    AL_EPARSE,
				    "'%s': invalid armor checksum line", what);
				goto out;
			}
			have_crc = 1;
			continue;
		}
		if ((rc = al_buf_append(&b64, line, llen)) < 0)
			goto out;
	}
	if (!ended) {
		rc = al_error_set(AL_EPARSE, "'%s': armor has no END line",
		                  what);
		goto out;
	}
	{
		size_t i, j = 0;
		for (i = 0; i < b64.len; i++)
			if (!is_ws(b64.ptr[i]))
				b64.ptr[j++] = b64.ptr[i];
		b64.len = j;
	}
	if ((rc = al_base64_decode(&bin, b64.len ? (const char *)b64.ptr : "",
	                           b64.len)) < 0) {
		if (rc != AL_ELIMIT)
			rc = al_error_set(
			    AL_EPARSE, "'%s': invalid base64 in armor", what);
		goto out;
	}
	if (have_crc) {
		uint32_t want = ((uint32_t)crcbytes[0] << 16) |
		                ((uint32_t)crcbytes[1] << 8) | crcbytes[2];
		if (crc24(bin.ptr != NULL ? bin.ptr : (const uint8_t *)"",
		          bin.len) != want) {
			rc = al_error_set(
			    AL_EPARSE, "'%s': armor checksum mismatch", what);
			goto out;
		}
	}
	if ((rc = al_buf_append(out,
	                        bin.ptr != NULL ? bin.ptr : (const uint8_t *)"",
	                        bin.len)) < 0)
		goto out;
	*off = o;
	rc = 1;
out:
	al_buf_free(&b64);
	al_buf_free(&bin);
	return rc;
}

/* 1 if the input looks armored (first non-blank byte is not a packet tag). */
static int looks_armored(const uint8_t *p, size_t n)
{
	size_t i = 0;

	while (i < n && is_ws(p[i]))
		i++;
	return i < n && (p[i] & 0x80) == 0;
}

/* ------------------------------------------------------------- keys */

/*
 * The self-signature (primary key) or binding (subkey) that decides a key's
 * expiry and flags: of all that verified, the most recent (RFC 9580
 * 5.2.3.10); bind_better() breaks ties so that the choice never depends on
 * the order keys were read in.
 */
typedef struct pgp_bind {
	int ok;          /* one verified */
	uint64_t at;     /* its creation time */
	uint32_t expire; /* key expiry, seconds after key creation, 0 never */
	int has_flags;
	uint8_t flags;
	int hash;      /* its hash algorithm (2: SHA-1, for warnings) */
	int backsig;   /* subkeys: a valid 0x19 back-signature */
	char uid[96];  /* primary keys: the user ID it certifies, printable */
	char src[160]; /* the input it came from (messages only) */
} pgp_bind;

typedef struct pgp_key {
	int algo;
	uint32_t created;
	uint8_t fpr[20];
	uint64_t keyid;
	uint8_t *body; /* key packet body, for hashing */
	size_t body_len;
	EVP_PKEY *pkey; /* NULL for algorithms we cannot verify with */
	int rsa_bytes;  /* modulus size for RSA */
	size_t primary; /* index of the primary key (itself for a primary) */
	int is_sub;
	pgp_bind b;
	int revoked;          /* a hard revocation verified */
	int soft_revoked;     /* a soft one (superseded, retired) verified */
	uint64_t soft_rev_at; /* the earliest soft revocation's time */
	char *src;            /* the first input it was read from (messages) */
	char reject[128];     /* why a self-signature / binding was refused */
	char why[256];        /* why the key is unusable, for messages */
} pgp_key;

struct al_pgp_keyring {
	pgp_key *keys;
	size_t n, cap;
	unsigned flags;
	char **warn; /* warnings about the keys, rebuilt by every add */
	size_t nwarn;
};

static void key_clear(pgp_key *k)
{
	free(k->body);
	free(k->src);
	EVP_PKEY_free(k->pkey);
	memset(k, 0, sizeof(*k));
}

static const uint8_t oid_p256[] = {0x2A, 0x86, 0x48, 0xCE,
                                   0x3D, 0x03, 0x01, 0x07};
static const uint8_t oid_p384[] = {0x2B, 0x81, 0x04, 0x00, 0x22};
static const uint8_t oid_p521[] = {0x2B, 0x81, 0x04, 0x00, 0x23};
static const uint8_t oid_ed25519[] = {0x2B, 0x06, 0x01, 0x04, 0x01,
                                      0xDA, 0x47, 0x0F, 0x01};

static int oid_eq(const uint8_t *p, size_t n, const uint8_t *oid, size_t olen)
{
	return n == olen && memcmp(p, oid, n) == 0;
}

static int pkey_rsa(EVP_PKEY **out, const uint8_t *np, size_t nlen,
                    const uint8_t *ep, size_t elen)
{
	OSSL_PARAM_BLD *bld = NULL;
	OSSL_PARAM *params = NULL;
	EVP_PKEY_CTX *ctx = NULL;
	BIGNUM *bn_n = NULL, *bn_e = NULL;
	EVP_PKEY *pkey = NULL;
	int rc;

	if (nlen * 8 < 2048 || nlen * 8 > 8192) {
		rc = al_error_set(
		    AL_EUNSUPPORTED,
		    "RSA key of %zu bits is not accepted (2048 to 8192)",
		    nlen * 8);
		goto out;
	}
	if (elen == 0 || elen > 8) {
		rc = al_error_set(AL_EPARSE, "invalid RSA public exponent");
		goto out;
	}
	bn_n = BN_bin2bn(np, (int)nlen, NULL);
	bn_e = BN_bin2bn(ep, (int)elen, NULL);
	bld = OSSL_PARAM_BLD_new();
	if (bn_n == NULL || bn_e == NULL || bld == NULL ||
	    !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, bn_n) ||
	    !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, bn_e) ||
	    (params = OSSL_PARAM_BLD_to_param(bld)) == NULL ||
	    (ctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL)) == NULL ||
	    EVP_PKEY_fromdata_init(ctx) <= 0 ||
	    EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) <= 0) {
		rc = al_error_openssl(AL_EPARSE, "cannot load RSA public key");
		goto out;
	}
	*out = pkey;
	pkey = NULL;
	rc = 0;
out:
	EVP_PKEY_free(pkey);
	EVP_PKEY_CTX_free(ctx);
	OSSL_PARAM_free(params);
	OSSL_PARAM_BLD_free(bld);
	BN_free(bn_n);
	BN_free(bn_e);
	return rc;
}

static int pkey_ec(EVP_PKEY **out, const char *group, size_t field,
                   const uint8_t *pt, size_t ptlen)
{
	OSSL_PARAM_BLD *bld = NULL;
	OSSL_PARAM *params = NULL;
	EVP_PKEY_CTX *ctx = NULL;
	EVP_PKEY *pkey = NULL;
	int rc;

	if (ptlen != 1 + 2 * field || pt[0] != 0x04) {
		rc = al_error_set(AL_EPARSE, "invalid %s public point", group);
		goto out;
	}
	bld = OSSL_PARAM_BLD_new();
	if (bld == NULL ||
	    !OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME,
	                                     group, 0) ||
	    !OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, pt,
	                                      ptlen) ||
	    (params = OSSL_PARAM_BLD_to_param(bld)) == NULL ||
	    (ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL)) == NULL ||
	    EVP_PKEY_fromdata_init(ctx) <= 0 ||
	    EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) <= 0) {
		rc = al_error_openssl(AL_EPARSE, "cannot load %s public key",
		                      group);
		goto out;
	}
	*out = pkey;
	pkey = NULL;
	rc = 0;
out:
	EVP_PKEY_free(pkey);
	EVP_PKEY_CTX_free(ctx);
	OSSL_PARAM_free(params);
	OSSL_PARAM_BLD_free(bld);
	return rc;
}

static int pkey_ed25519(EVP_PKEY **out, const uint8_t *pk)
{
	EVP_PKEY *pkey =
	    EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, pk, 32);

	if (pkey == NULL)
		return al_error_openssl(AL_EPARSE,
		                        "cannot load Ed25519 public key");
	*out = pkey;
	return 0;
}

/*
 * Parse a public (sub)key packet body into k: v4 only. Algorithms we do not
 * verify with are kept (pkey NULL) so their key IDs are known.
 */
static int key_parse(pgp_key *k, const uint8_t *p, size_t n)
{
	EVP_MD_CTX *md = NULL;
	uint8_t hdr[3];
	unsigned int flen = 0;
	size_t o = 6;
	int rc;

	memset(k, 0, sizeof(*k));
	if (n < 6)
		return al_error_set(AL_EPARSE, "truncated public key packet");
	if (p[0] != 4)
		return al_error_set(AL_EUNSUPPORTED,
		                    "version %d public keys are not supported",
		                    p[0]);
	if (n > 0xffff)
		return al_error_set(AL_EPARSE, "public key packet too large");
	k->created = be32(p + 1);
	k->algo = p[5];
	switch (k->algo) {
	case PK_RSA:
	case PK_RSA_S: {
		const uint8_t *np = NULL, *ep = NULL;
		size_t nl = 0, el = 0;
		if ((rc = read_mpi(&np, &nl, p, n, &o)) < 0 ||
		    (rc = read_mpi(&ep, &el, p, n, &o)) < 0)
			goto out;
		if ((rc = pkey_rsa(&k->pkey, np, nl, ep, el)) < 0)
			goto out;
		k->rsa_bytes = (int)nl;
		break;
	}
	case PK_ECDSA:
	case PK_EDDSA: {
		const uint8_t *oid, *pt;
		size_t olen, ptlen;
		if (o >= n || p[o] == 0 || p[o] == 0xff ||
		    (size_t)p[o] > n - o - 1) {
			rc = al_error_set(AL_EPARSE,
			                  "invalid curve OID in public key");
			goto out;
		}
		olen = p[o];
		oid = p + o + 1;
		o += 1 + olen;
		if ((rc = read_mpi(&pt, &ptlen, p, n, &o)) < 0)
			goto out;
		if (k->algo == PK_EDDSA) {
			if (!oid_eq(oid, olen, oid_ed25519,
			            sizeof(oid_ed25519))) {
				rc = al_error_set(AL_EUNSUPPORTED,
				                  "EdDSA curve is not "
				                  "supported (only Ed25519)");
				goto out;
			}
			if (ptlen != 33 || pt[0] != 0x40) {
				rc = al_error_set(
				    AL_EPARSE, "invalid Ed25519 public point");
				goto out;
			}
			rc = pkey_ed25519(&k->pkey, pt + 1);
		} else if (oid_eq(oid, olen, oid_p256, sizeof(oid_p256))) {
			rc = pkey_ec(&k->pkey, "P-256", 32, pt, ptlen);
		} else if (oid_eq(oid, olen, oid_p384, sizeof(oid_p384))) {
			rc = pkey_ec(&k->pkey, "P-384", 48, pt, ptlen);
		} else if (oid_eq(oid, olen, oid_p521, sizeof(oid_p521))) {
			rc = pkey_ec(&k->pkey, "P-521", 66, pt, ptlen);
		} else {
			rc = al_error_set(AL_EUNSUPPORTED,
			                  "ECDSA curve is not supported");
		}
		if (rc < 0)
			goto out;
		break;
	}
	case PK_ED25519:
		if (n - o < 32) {
			rc = al_error_set(AL_EPARSE,
			                  "truncated Ed25519 public key");
			goto out;
		}
		if ((rc = pkey_ed25519(&k->pkey, p + o)) < 0)
			goto out;
		break;
	default:
		break; /* encryption-only or unsupported: fingerprint only */
	}
	/* v4 fingerprint: SHA-1 over 0x99 || len16 || body (RFC 4880 12.2) */
	hdr[0] = 0x99;
	hdr[1] = (uint8_t)(n >> 8);
	hdr[2] = (uint8_t)n;
	md = EVP_MD_CTX_new();
	if (md == NULL || EVP_DigestInit_ex(md, EVP_sha1(), NULL) != 1 ||
	    EVP_DigestUpdate(md, hdr, 3) != 1 ||
	    EVP_DigestUpdate(md, p, n) != 1 ||
	    EVP_DigestFinal_ex(md, k->fpr, &flen) != 1 || flen != 20) {
		rc = al_error_openssl(AL_ENOMEM,
		                      "cannot compute key fingerprint");
		goto out;
	}
	k->keyid = be64(k->fpr + 12);
	k->body = malloc(n);
	if (k->body == NULL) {
		rc = al_error_oom();
		goto out;
	}
	memcpy(k->body, p, n);
	k->body_len = n;
	rc = 0;
out:
	EVP_MD_CTX_free(md);
	if (rc < 0) {
		EVP_PKEY_free(k->pkey);
		k->pkey = NULL;
	}
	return rc;
}

/* ------------------------------------------------------- signatures */

typedef struct pgp_sig {
	int version, type, pkalgo, hashalgo;
	uint64_t created;
	int has_created;
	uint32_t sig_expire;
	uint32_t key_expire;
	int has_key_expire;
	int has_issuer;
	uint64_t issuer;
	int has_issuer_fpr;
	uint8_t issuer_fpr[20];
	int has_flags;
	uint8_t flags;
	int has_reason;
	uint8_t reason; /* reason for revocation */
	const uint8_t *
	    hashed; /* v4: version..end of hashed subpackets; v3: type + time */
	size_t hashed_len;
	uint8_t left16[2];
	const uint8_t *m[2]; /* signature material */
	size_t mlen[2];
	const uint8_t *embedded; /* embedded signature (back-signature) */
	size_t embedded_len;
} pgp_sig;

/* Subpacket types we understand; a critical one outside this list makes
 * the signature invalid (RFC 4880 5.2.3.1). */
static int subpacket_known(int t)
{
	static const uint8_t known[] = {2,  3,  4,  7,  9,  11, 12, 16,
	                                21, 22, 23, 24, 25, 26, 27, 28,
	                                29, 30, 31, 32, 33, 34, 35, 39};
	size_t i;

	for (i = 0; i < sizeof(known); i++)
		if (known[i] == t)
			return 1;
	return 0;
}

static int parse_subpackets(pgp_sig *s, const uint8_t *p, size_t n, int hashed)
{
	size_t o = 0, len;

	while (o < n) {
		uint8_t b = p[o];
		const uint8_t *d;
		size_t dl;
		int t, crit;

		if (b < 192) {
			len = b;
			o += 1;
		} else if (b < 255) {
			if (n - o < 2)
				return al_error_set(
				    AL_EPARSE, "truncated signature subpacket");
			len = ((size_t)(b - 192) << 8) + p[o + 1] + 192;
			o += 2;
		} else {
			if (n - o < 5)
				return al_error_set(
				    AL_EPARSE, "truncated signature subpacket");
			len = be32(p + o + 1);
			o += 5;
		}
		if (len == 0 || len > n - o)
			return al_error_set(AL_EPARSE,
			                    "truncated signature subpacket");
		t = p[o] & 0x7f;
		crit = (p[o] & 0x80) != 0;
		d = p + o + 1;
		dl = len - 1;
		o += len;
		if (crit && !subpacket_known(t))
			return al_error_set(
			    AL_EUNSUPPORTED,
			    "signature has an unknown critical subpacket %d",
			    t);
		switch (t) {
		case 2:
			if (dl != 4)
				return al_error_set(
				    AL_EPARSE,
				    "invalid signature creation time");
			if (hashed) {
				s->created = be32(d);
				s->has_created = 1;
			}
			break;
		case 3:
			if (dl != 4)
				return al_error_set(
				    AL_EPARSE,
				    "invalid signature expiration time");
			if (hashed)
				s->sig_expire = be32(d);
			break;
		case 9:
			if (dl != 4)
				return al_error_set(
				    AL_EPARSE, "invalid key expiration time");
			if (hashed) {
				s->key_expire = be32(d);
				s->has_key_expire = 1;
			}
			break;
		case 16:
			/* may be unhashed: used to find the key, never trusted
			 * beyond that */
			if (dl != 8)
				return al_error_set(AL_EPARSE,
				                    "invalid issuer subpacket");
			if (!s->has_issuer || hashed) {
				s->issuer = be64(d);
				s->has_issuer = 1;
			}
			break;
		case 33:
			if (dl == 21 && d[0] == 4 &&
			    (!s->has_issuer_fpr || hashed)) {
				memcpy(s->issuer_fpr, d + 1, 20);
				s->has_issuer_fpr = 1;
			}
			break;
		case 27:
			if (hashed && dl >= 1) {
				s->flags = d[0];
				s->has_flags = 1;
			}
			break;
		case 29:
			if (hashed && dl >= 1) {
				s->reason = d[0];
				s->has_reason = 1;
			}
			break;
		case 32:
			/* gpg puts the back-signature in the unhashed area: it
			 * is itself a signature, verified before use */
			if (hashed || s->embedded == NULL) {
				s->embedded = d;
				s->embedded_len = dl;
			}
			break;
		default:
			break;
		}
	}
	return 0;
}

/* Parse a signature packet body (v3 or v4). */
static int sig_parse(pgp_sig *s, const uint8_t *p, size_t n)
{
	size_t o, hl, ul;
	int rc, i, nm;

	memset(s, 0, sizeof(*s));
	if (n < 1)
		return al_error_set(AL_EPARSE, "empty signature packet");
	s->version = p[0];
	if (s->version == 3 || s->version == 2) {
		/* RFC 4880 5.2.2: no subpackets; hashed = type + creation time
		 */
		if (n < 19 || p[1] != 5)
			return al_error_set(AL_EPARSE,
			                    "truncated v3 signature packet");
		s->version = 3;
		s->type = p[2];
		s->hashed = p + 2;
		s->hashed_len = 5;
		s->created = be32(p + 3);
		s->has_created = 1;
		s->issuer = be64(p + 7);
		s->has_issuer = 1;
		s->pkalgo = p[15];
		s->hashalgo = p[16];
		s->left16[0] = p[17];
		s->left16[1] = p[18];
		o = 19;
	} else if (s->version == 4) {
		if (n < 6)
			return al_error_set(AL_EPARSE,
			                    "truncated v4 signature packet");
		s->type = p[1];
		s->pkalgo = p[2];
		s->hashalgo = p[3];
		hl = ((size_t)p[4] << 8) | p[5];
		if (hl > n - 6)
			return al_error_set(AL_EPARSE,
			                    "truncated v4 signature packet");
		if ((rc = parse_subpackets(s, p + 6, hl, 1)) < 0)
			return rc;
		s->hashed = p;
		s->hashed_len = 6 + hl;
		o = 6 + hl;
		if (n - o < 2)
			return al_error_set(AL_EPARSE,
			                    "truncated v4 signature packet");
		ul = ((size_t)p[o] << 8) | p[o + 1];
		o += 2;
		if (ul > n - o)
			return al_error_set(AL_EPARSE,
			                    "truncated v4 signature packet");
		if ((rc = parse_subpackets(s, p + o, ul, 0)) < 0)
			return rc;
		o += ul;
		if (n - o < 2)
			return al_error_set(AL_EPARSE,
			                    "truncated v4 signature packet");
		s->left16[0] = p[o];
		s->left16[1] = p[o + 1];
		o += 2;
	} else {
		return al_error_set(AL_EUNSUPPORTED,
		                    "version %d signatures are not supported",
		                    s->version);
	}
	switch (s->pkalgo) {
	case PK_RSA:
	case PK_RSA_S:
		nm = 1;
		break;
	case PK_ECDSA:
	case PK_EDDSA:
		nm = 2;
		break;
	case PK_ED25519:
		if (n - o != 64)
			return al_error_set(AL_EPARSE,
			                    "invalid Ed25519 signature length");
		s->m[0] = p + o;
		s->mlen[0] = 64;
		return 0;
	default:
		return al_error_set(AL_EUNSUPPORTED,
		                    "public-key algorithm %d is not supported",
		                    s->pkalgo);
	}
	for (i = 0; i < nm; i++)
		if ((rc = read_mpi(&s->m[i], &s->mlen[i], p, n, &o)) < 0)
			return rc;
	if (o != n)
		return al_error_set(AL_EPARSE,
		                    "trailing bytes in signature packet");
	return 0;
}

/* Feed data into the hash, as-is or canonicalised to CRLF line ends (0x01). */
static int hash_data(EVP_MD_CTX *md, const uint8_t *p, size_t n, int text)
{
	size_t i, start = 0;

	if (!text)
		return EVP_DigestUpdate(md, p, n) == 1 ? 0 : -1;
	for (i = 0; i < n; i++) {
		if (p[i] != '\n' || (i > 0 && p[i - 1] == '\r'))
			continue;
		if (EVP_DigestUpdate(md, p + start, i - start) != 1 ||
		    EVP_DigestUpdate(md, "\r\n", 2) != 1)
			return -1;
		start = i + 1;
	}
	return EVP_DigestUpdate(md, p + start, n - start) == 1 ? 0 : -1;
}

static int hash_key(EVP_MD_CTX *md, const pgp_key *k)
{
	uint8_t hdr[3] = {0x99, (uint8_t)(k->body_len >> 8),
	                  (uint8_t)k->body_len};

	return EVP_DigestUpdate(md, hdr, 3) == 1 &&
	               EVP_DigestUpdate(md, k->body, k->body_len) == 1
	           ? 0
	           : -1;
}

/*
 * Start hashing for s: checks the hash algorithm (MD5 refused, SHA-1 only
 * when sha1_ok).
 */
static int hash_begin(EVP_MD_CTX **out, const pgp_sig *s, const hash_info **hi,
                      int sha1_ok)
{
	EVP_MD_CTX *md = NULL;
	EVP_MD *alg = NULL;
	int rc;

	if ((rc = hash_lookup(hi, s->hashalgo, sha1_ok)) < 0)
		return rc;
	alg = EVP_MD_fetch(NULL, (*hi)->ossl, NULL);
	md = EVP_MD_CTX_new();
	if (alg == NULL || md == NULL ||
	    EVP_DigestInit_ex(md, alg, NULL) != 1) {
		rc = al_error_openssl(AL_EUNSUPPORTED,
		                      "hash algorithm %s is not available",
		                      (*hi)->name);
		EVP_MD_CTX_free(md);
		EVP_MD_free(alg);
		return rc;
	}
	EVP_MD_free(alg);
	*out = md;
	return 0;
}

/* Append the signature's hashed part and trailer (RFC 4880 5.2.4) and finish.
 */
static int hash_finish(EVP_MD_CTX *md, const pgp_sig *s, uint8_t *out,
                       size_t *outlen)
{
	unsigned int len = 0;
	uint8_t trailer[6];

	if (EVP_DigestUpdate(md, s->hashed, s->hashed_len) != 1)
		goto out;
	if (s->version == 4) {
		trailer[0] = 4;
		trailer[1] = 0xff;
		trailer[2] = (uint8_t)(s->hashed_len >> 24);
		trailer[3] = (uint8_t)(s->hashed_len >> 16);
		trailer[4] = (uint8_t)(s->hashed_len >> 8);
		trailer[5] = (uint8_t)s->hashed_len;
		if (EVP_DigestUpdate(md, trailer, 6) != 1)
			goto out;
	}
	if (EVP_DigestFinal_ex(md, out, &len) != 1)
		goto out;
	*outlen = len;
	return 0;
out:
	return al_error_openssl(AL_ENOMEM, "hashing failed");
}

/* 1 when the signature material verifies over hash with key k, 0 when not. */
static int verify_raw(const pgp_key *k, const pgp_sig *s, const hash_info *hi,
                      const uint8_t *hash, size_t hlen)
{
	EVP_PKEY_CTX *ctx = NULL;
	EVP_MD_CTX *mdctx = NULL;
	EVP_MD *md = NULL;
	ECDSA_SIG *es = NULL;
	BIGNUM *r = NULL, *sv = NULL;
	uint8_t *der = NULL, buf[1024];
	int ok = 0, dlen;

	if (k->pkey == NULL || hlen < 2 || hash[0] != s->left16[0] ||
	    hash[1] != s->left16[1])
		goto out;
	switch (s->pkalgo) {
	case PK_RSA:
	case PK_RSA_S:
		if ((k->algo != PK_RSA && k->algo != PK_RSA_S) ||
		    k->rsa_bytes <= 0 || (size_t)k->rsa_bytes > sizeof(buf) ||
		    s->mlen[0] > (size_t)k->rsa_bytes)
			goto out;
		/* the MPI drops leading zeros: left-pad to the modulus size */
		memset(buf, 0, sizeof(buf));
		memcpy(buf + (size_t)k->rsa_bytes - s->mlen[0], s->m[0],
		       s->mlen[0]);
		md = EVP_MD_fetch(NULL, hi->ossl, NULL);
		ctx = EVP_PKEY_CTX_new_from_pkey(NULL, k->pkey, NULL);
		if (md == NULL || ctx == NULL ||
		    EVP_PKEY_verify_init(ctx) <= 0 ||
		    EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) <= 0 ||
		    EVP_PKEY_CTX_set_signature_md(ctx, md) <= 0)
			goto out;
		ok = EVP_PKEY_verify(ctx, buf, (size_t)k->rsa_bytes, hash,
		                     hlen) == 1;
		break;
	case PK_ECDSA:
		if (k->algo != PK_ECDSA || s->mlen[0] == 0 || s->mlen[1] == 0 ||
		    s->mlen[0] > 66 || s->mlen[1] > 66)
			goto out;
		es = ECDSA_SIG_new();
		r = BN_bin2bn(s->m[0], (int)s->mlen[0], NULL);
		sv = BN_bin2bn(s->m[1], (int)s->mlen[1], NULL);
		if (es == NULL || r == NULL || sv == NULL ||
		    ECDSA_SIG_set0(es, r, sv) != 1)
			goto out;
		r = sv = NULL;
		dlen = i2d_ECDSA_SIG(es, &der);
		ctx = EVP_PKEY_CTX_new_from_pkey(NULL, k->pkey, NULL);
		if (dlen <= 0 || ctx == NULL || EVP_PKEY_verify_init(ctx) <= 0)
			goto out;
		ok = EVP_PKEY_verify(ctx, der, (size_t)dlen, hash, hlen) == 1;
		break;
	case PK_EDDSA:
	case PK_ED25519:
		if (k->algo != PK_EDDSA && k->algo != PK_ED25519)
			goto out;
		memset(buf, 0, 64);
		if (s->pkalgo == PK_ED25519) {
			memcpy(buf, s->m[0], 64);
		} else {
			if (s->mlen[0] > 32 || s->mlen[1] > 32)
				goto out;
			memcpy(buf + 32 - s->mlen[0], s->m[0], s->mlen[0]);
			memcpy(buf + 64 - s->mlen[1], s->m[1], s->mlen[1]);
		}
		mdctx = EVP_MD_CTX_new();
		if (mdctx == NULL ||
		    EVP_DigestVerifyInit(mdctx, NULL, NULL, NULL, k->pkey) != 1)
			goto out;
		ok = EVP_DigestVerify(mdctx, buf, 64, hash, hlen) == 1;
		break;
	default:
		break;
	}
out:
	ERR_clear_error();
	OPENSSL_free(der);
	ECDSA_SIG_free(es);
	BN_free(r);
	BN_free(sv);
	EVP_PKEY_CTX_free(ctx);
	EVP_MD_CTX_free(mdctx);
	EVP_MD_free(md);
	return ok;
}

/* printf into a fixed buffer, truncating; NULL buf is a no-op. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void
set_why(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (buf == NULL || n == 0)
		return;
	va_start(ap, fmt);
	k = vsnprintf(buf, n, fmt, ap);
	va_end(ap);
	if (k < 0)
		buf[0] = '\0';
}

/*
 * Verify a key signature s by signer over primary [+ subkey | + uid].
 * Returns 1 valid, 0 invalid or unusable (weak hash...), <0 on a real error.
 * On 0, why[0..whylen) (may be NULL) says which hash or check failed;
 * kind names the signature in it ("self-signature", "binding signature").
 * SHA-1 is admitted for revocations (a forged one can only take trust away)
 * and for self-signatures and bindings made before SHA1_KEYSIG_CUTOFF.
 */
static int verify_keysig(const pgp_sig *s, const pgp_key *signer,
                         const pgp_key *primary, const pgp_key *sub,
                         const uint8_t *uid, size_t uidlen, const char *kind,
                         char *why, size_t whylen)
{
	const hash_info *hi;
	EVP_MD_CTX *md = NULL;
	uint8_t hash[EVP_MAX_MD_SIZE];
	size_t hlen = 0;
	char tb[32];
	int rc, sha1_ok = s->type == SIG_KEY_REVOCATION ||
	                  s->type == SIG_SUBKEY_REVOCATION ||
	                  (s->has_created && s->created < SHA1_KEYSIG_CUTOFF);

	if (hash_begin(&md, s, &hi, sha1_ok) < 0) {
		if (s->hashalgo == 2)
			set_why(
			    why, whylen,
			    "its %s uses SHA-1 and was made on %s (SHA-1 is "
			    "accepted only before 2023-02-01)",
			    kind, fmt_time(s->created, tb));
		else
			set_why(why, whylen, "its %s: %s", kind,
			        al_error_message());
		al_log_debug("pgp: ignoring key signature: %s",
		             al_error_message());
		al_error_clear();
		return 0;
	}
	if (hash_key(md, primary) < 0 ||
	    (sub != NULL && hash_key(md, sub) < 0)) {
		rc = al_error_openssl(AL_ENOMEM, "hashing failed");
		goto out;
	}
	if (uid != NULL) {
		uint8_t hdr[5] = {0xB4, (uint8_t)(uidlen >> 24),
		                  (uint8_t)(uidlen >> 16),
		                  (uint8_t)(uidlen >> 8), (uint8_t)uidlen};
		/* v3 certifications hash the user ID without the header */
		if ((s->version == 4 && EVP_DigestUpdate(md, hdr, 5) != 1) ||
		    EVP_DigestUpdate(md, uid, uidlen) != 1) {
			rc = al_error_openssl(AL_ENOMEM, "hashing failed");
			goto out;
		}
	}
	if ((rc = hash_finish(md, s, hash, &hlen)) < 0)
		goto out;
	rc = verify_raw(signer, s, hi, hash, hlen);
	if (rc == 0)
		set_why(why, whylen, "its %s %s does not verify", hi->name,
		        kind);
out:
	EVP_MD_CTX_free(md);
	return rc;
}

/* ---------------------------------------------------------- keyring */

int al_pgp_keyring_new(al_pgp_keyring **out)
{
	al_pgp_keyring *kr = calloc(1, sizeof(*kr));

	if (kr == NULL)
		return al_error_oom();
	*out = kr;
	return 0;
}

static void warn_clear(al_pgp_keyring *kr)
{
	size_t i;

	for (i = 0; i < kr->nwarn; i++)
		free(kr->warn[i]);
	free(kr->warn);
	kr->warn = NULL;
	kr->nwarn = 0;
}

void al_pgp_keyring_free(al_pgp_keyring *kr)
{
	size_t i;

	if (kr == NULL)
		return;
	for (i = 0; i < kr->n; i++)
		key_clear(&kr->keys[i]);
	free(kr->keys);
	warn_clear(kr);
	free(kr);
}

size_t al_pgp_keyring_count(const al_pgp_keyring *kr)
{
	return kr != NULL ? kr->n : 0;
}

void al_pgp_keyring_set_flags(al_pgp_keyring *kr, unsigned flags)
{
	if (kr != NULL)
		kr->flags = flags;
}

size_t al_pgp_keyring_warning_count(const al_pgp_keyring *kr)
{
	return kr != NULL ? kr->nwarn : 0;
}

const char *al_pgp_keyring_warning(const al_pgp_keyring *kr, size_t i)
{
	return kr != NULL && i < kr->nwarn ? kr->warn[i] : NULL;
}

static int kr_reserve(al_pgp_keyring *kr, size_t more)
{
	size_t cap;
	pgp_key *nk;

	if (more > AL_PGP_MAX_KEYS || kr->n > AL_PGP_MAX_KEYS - more)
		return al_error_set(AL_ELIMIT,
		                    "keyring holds more than %d keys",
		                    AL_PGP_MAX_KEYS);
	if (kr->n + more <= kr->cap)
		return 0;
	cap = kr->cap ? kr->cap : 8;
	while (cap < kr->n + more)
		cap *= 2;
	nk = realloc(kr->keys, cap * sizeof(*nk));
	if (nk == NULL)
		return al_error_oom();
	kr->keys = nk;
	kr->cap = cap;
	return 0;
}

static int kr_push(al_pgp_keyring *kr, pgp_key *k)
{
	int rc;

	if ((rc = kr_reserve(kr, 1)) < 0)
		return rc;
	kr->keys[kr->n++] = *k;
	memset(k, 0, sizeof(*k));
	return 0;
}

/*
 * 1 when binding a should replace b: the more recent one wins (RFC 9580
 * 5.2.3.10); equal times are decided by fixed preferences (not SHA-1, a
 * back-signature, the longer validity, then the bytes) so that merged copies
 * give the same key whatever their order.
 */
static int bind_better(const pgp_bind *a, const pgp_bind *b)
{
	if (!a->ok || !b->ok)
		return a->ok && !b->ok;
	if (a->at != b->at)
		return a->at > b->at;
	if ((a->hash == 2) != (b->hash == 2))
		return b->hash == 2;
	if (a->backsig != b->backsig)
		return a->backsig;
	if (a->expire != b->expire)
		return a->expire == 0 ||
		       (b->expire != 0 && a->expire > b->expire);
	if (a->has_flags != b->has_flags)
		return a->has_flags < b->has_flags;
	if (a->flags != b->flags)
		return a->flags > b->flags;
	return strcmp(a->uid, b->uid) < 0;
}

/* Record a verified self-signature or binding s (with its back-signature
 * status and the user ID it certifies, may be NULL). */
static void key_bind(pgp_key *k, const pgp_sig *s, int backsig,
                     const uint8_t *uid, size_t uidlen, const char *src)
{
	pgp_bind b;
	size_t i, n = 0;

	memset(&b, 0, sizeof(b));
	b.ok = 1;
	b.at = s->created;
	b.expire = s->has_key_expire ? s->key_expire : 0;
	b.has_flags = s->has_flags;
	b.flags = s->flags;
	b.hash = s->hashalgo;
	b.backsig = backsig;
	/* untrusted bytes: keep them printable for messages */
	for (i = 0; uid != NULL && i < uidlen && n + 1 < sizeof(b.uid); i++)
		b.uid[n++] = uid[i] >= 0x20 && uid[i] < 0x7f && uid[i] != '"'
		                 ? (char)uid[i]
		                 : '?';
	b.uid[n] = '\0';
	set_why(b.src, sizeof(b.src), "%s", src != NULL ? src : "keyring");
	if (bind_better(&b, &k->b))
		k->b = b;
}

/* Record a verified revocation; its reason (RFC 9580 5.2.3.31) only changes
 * the message: key_valid_for() refuses the key either way. */
static void key_revoke(pgp_key *k, const pgp_sig *s)
{
	if (s->has_reason &&
	    (s->reason == REVOKE_SUPERSEDED || s->reason == REVOKE_RETIRED)) {
		if (!k->soft_revoked || s->created < k->soft_rev_at)
			k->soft_rev_at = s->created;
		k->soft_revoked = 1;
		return;
	}
	k->revoked = 1;
}

/* Keep the first reason a self-signature of a not yet valid key was refused.
 */
static void key_reject(pgp_key *k, const char *why)
{
	if (!k->b.ok && k->reject[0] == '\0')
		set_why(k->reject, sizeof(k->reject), "%s", why);
}

/* The issuer, when named, must be the expected key. */
static int sig_from(const pgp_sig *s, const pgp_key *k)
{
	if (s->has_issuer_fpr && memcmp(s->issuer_fpr, k->fpr, 20) != 0)
		return 0;
	if (s->has_issuer && s->issuer != k->keyid)
		return 0;
	return 1;
}

/* Handle one signature packet of a transferable public key. */
static int kr_keysig(al_pgp_keyring *kr, size_t prim, size_t sub,
                     const uint8_t *uid, size_t uidlen, const pgp_sig *s)
{
	pgp_key *pk = &kr->keys[prim];
	pgp_key *sk = sub != (size_t)-1 ? &kr->keys[sub] : NULL;
	char why[128];
	int rc;

	why[0] = '\0';
	if (s->type == SIG_KEY_REVOCATION) {
		if (!sig_from(s, pk))
			return 0;
		if ((rc = verify_keysig(s, pk, pk, NULL, NULL, 0, "revocation",
		                        NULL, 0)) < 0)
			return rc;
		if (rc == 1)
			key_revoke(pk, s);
		return 0;
	}
	if (s->type == SIG_DIRECT_KEY && sk == NULL && uid == NULL) {
		if (!sig_from(s, pk) || s->version != 4)
			return 0;
		if ((rc = verify_keysig(s, pk, pk, NULL, NULL, 0,
		                        "direct-key signature", why,
		                        sizeof(why))) < 0)
			return rc;
		if (rc == 1)
			key_bind(pk, s, 0, NULL, 0, pk->src);
		else
			key_reject(pk, why);
		return 0;
	}
	if (s->type >= SIG_CERT_FIRST && s->type <= SIG_CERT_LAST &&
	    uid != NULL) {
		if (!sig_from(s, pk) || !s->has_created)
			return 0; /* a third-party certification: not our
			             business */
		if ((rc = verify_keysig(s, pk, pk, NULL, uid, uidlen,
		                        "self-signature", why, sizeof(why))) <
		    0)
			return rc;
		if (rc == 1)
			key_bind(pk, s, 0, uid, uidlen, pk->src);
		else
			key_reject(pk, why);
		return 0;
	}
	if (sk == NULL)
		return 0;
	if (s->type == SIG_SUBKEY_REVOCATION) {
		if (!sig_from(s, pk))
			return 0;
		if ((rc = verify_keysig(s, pk, pk, sk, NULL, 0, "revocation",
		                        NULL, 0)) < 0)
			return rc;
		if (rc == 1)
			key_revoke(sk, s);
		return 0;
	}
	if (s->type == SIG_SUBKEY_BINDING) {
		pgp_sig back;
		int backok = 0;

		if (!sig_from(s, pk) || !s->has_created)
			return 0;
		if ((rc = verify_keysig(s, pk, pk, sk, NULL, 0,
		                        "binding signature", why,
		                        sizeof(why))) < 0)
			return rc;
		if (rc != 1) {
			key_reject(sk, why);
			return 0;
		}
		if (s->embedded != NULL) {
			/* the 0x19 back-signature: the subkey agrees to act for
			 * the primary */
			if (sig_parse(&back, s->embedded, s->embedded_len) ==
			        0 &&
			    back.type == SIG_PRIMARY_BINDING &&
			    sig_from(&back, sk)) {
				if ((rc = verify_keysig(&back, sk, pk, sk, NULL,
				                        0, "back-signature",
				                        NULL, 0)) < 0)
					return rc;
				backok = rc == 1;
			}
			al_error_clear();
		}
		key_bind(sk, s, backok, NULL, 0, pk->src);
	}
	return 0;
}

/* Where kr_add_binary stands in a keyring's packet sequence: the primary
 * key and subkey that signatures bind (kr indexes, (size_t)-1 for none), the
 * user ID they certify, whether a user attribute is open, whether the
 * current key is skipped, and how many primary keys were taken. */
typedef struct kr_walk {
	size_t npk, prim, sub, uidlen;
	const uint8_t *uid;
	int in_uattr, skip;
} kr_walk;

/* A public key or subkey packet: parsed and pushed onto kr, or skipped
 * (with its subkeys, for a primary) when its algorithm or version is not
 * supported. */
static int kr_on_key(al_pgp_keyring *kr, kr_walk *w, const pkt *pk,
                     const char *what)
{
	pgp_key k;
	int rc;

	memset(&k, 0, sizeof(k));
	w->uid = NULL;
	w->in_uattr = 0;
	w->sub = (size_t)-1;
	if (pk->tag == TAG_PUBSUBKEY && (w->prim == (size_t)-1 || w->skip)) {
		w->skip = 1;
		return 0;
	}
	rc = key_parse(&k, pk->body, pk->len);
	if (rc == 0 && pk->tag == TAG_PUBKEY && k.pkey == NULL) {
		/* a primary key must be able to check its own
		 * self-signatures */
		key_clear(&k);
		rc = al_error_set(AL_EUNSUPPORTED,
		                  "public-key algorithm %d is not supported",
		                  pk->body[5]);
	}
	if (rc == AL_EUNSUPPORTED) {
		/* keep going: a v3/v5/v6 key or a weak RSA key is just not
		 * usable */
		al_log_debug("pgp: '%s': skipping key at offset %zu: %s", what,
		             pk->offset, al_error_message());
		al_error_clear();
		if (pk->tag == TAG_PUBKEY) {
			w->skip = 1;
			w->prim = (size_t)-1;
		}
		return 0;
	}
	if (rc < 0)
		return al_error_wrap(rc, "'%s': key at offset %zu: ", what,
		                     pk->offset);
	k.is_sub = pk->tag == TAG_PUBSUBKEY;
	if (pk->tag == TAG_PUBKEY && (k.src = al_strdup(what)) == NULL) {
		key_clear(&k);
		return al_error_oom();
	}
	if (pk->tag == TAG_PUBKEY) {
		w->skip = 0;
		k.primary = kr->n;
		w->prim = kr->n;
		w->npk++;
	} else {
		k.primary = w->prim;
		w->sub = kr->n;
	}
	if ((rc = kr_push(kr, &k)) < 0) {
		key_clear(&k);
		return rc;
	}
	return 0;
}

/* A signature packet on the current key, subkey or user ID: bound by
 * kr_keysig; one that cannot be parsed is ignored, noted on the key it may
 * have been meant for. */
static int kr_on_sig(al_pgp_keyring *kr, const kr_walk *w, const pkt *pk,
                     const char *what)
{
	pgp_sig s;
	char why[128];

	if (w->skip || w->prim == (size_t)-1 || w->in_uattr)
		return 0;
	if (sig_parse(&s, pk->body, pk->len) < 0) {
		al_log_debug("pgp: '%s': ignoring signature at offset %zu: %s",
		             what, pk->offset, al_error_message());
		/* the key's own self-signature, maybe: if the key ends up
		 * unusable, this may be why */
		set_why(why, sizeof(why),
		        "a signature on it at offset %zu cannot be used: %s",
		        pk->offset, al_error_message());
		key_reject(&kr->keys[w->sub != (size_t)-1 ? w->sub : w->prim],
		           why);
		al_error_clear();
		return 0;
	}
	return kr_keysig(kr, w->prim, w->sub, w->uid, w->uidlen, &s);
}

/* One packet of a keyring, by its tag. */
static int kr_on_packet(al_pgp_keyring *kr, kr_walk *w, const pkt *pk,
                        const char *what)
{
	switch (pk->tag) {
	case TAG_PUBKEY:
	case TAG_PUBSUBKEY:
		return kr_on_key(kr, w, pk, what);
	case TAG_UID:
		w->uid = pk->body;
		w->uidlen = pk->len;
		w->in_uattr = 0;
		return 0;
	case TAG_UATTR:
		w->uid = NULL;
		w->in_uattr = 1;
		return 0;
	case TAG_SIG:
		return kr_on_sig(kr, w, pk, what);
	case TAG_TRUST:
	case TAG_MARKER:
		return 0;
	case TAG_SECRET_KEY:
	case TAG_SECRET_SUBKEY:
		return al_error_set(AL_EPARSE,
		                    "'%s': secret key packet at offset "
		                    "%zu: give public keys only",
		                    what, pk->offset);
	default:
		return al_error_set(AL_EPARSE,
		                    "'%s': unexpected packet type %d at "
		                    "offset %zu in a keyring",
		                    what, pk->tag, pk->offset);
	}
}

static int kr_add_binary(al_pgp_keyring *kr, const uint8_t *p, size_t n,
                         const char *what)
{
	size_t off = 0, count = 0;
	kr_walk w = {0, (size_t)-1, (size_t)-1, 0, NULL, 0, 0};
	int rc = 0;
	pkt pk;

	memset(&pk, 0, sizeof(pk));
	for (;;) {
		free(pk.owned);
		memset(&pk, 0, sizeof(pk));
		if ((rc = pkt_next(&pk, p, n, &off, AL_PGP_MAX_KEYRING_BYTES)) <
		    0) {
			rc = al_error_wrap(rc, "'%s': ", what);
			goto out;
		}
		if (rc == 0)
			break;
		if (++count > AL_PGP_MAX_KEYRING_PACKETS) {
			rc = al_error_set(AL_ELIMIT,
			                  "'%s': more than %d packets", what,
			                  AL_PGP_MAX_KEYRING_PACKETS);
			goto out;
		}
		if ((rc = kr_on_packet(kr, &w, &pk, what)) < 0)
			goto out;
	}
	rc = w.npk == 0 && !w.skip
	         ? al_error_set(AL_EPARSE, "'%s': no public key found", what)
	         : 0;
out:
	free(pk.owned);
	return rc;
}

/* Two copies of one key: the same fingerprint and the same key packet
 * (fingerprints are SHA-1: equal bytes are required before state is shared).
 */
static int same_key(const pgp_key *a, const pgp_key *b)
{
	return a->is_sub == b->is_sub && memcmp(a->fpr, b->fpr, 20) == 0 &&
	       a->body_len == b->body_len &&
	       memcmp(a->body, b->body, a->body_len) == 0;
}

/* The copy of k (and, for a subkey, under the primary at index primary) in
 * keys[0..n), or (size_t)-1. */
static size_t kr_find(const pgp_key *keys, size_t n, const pgp_key *k,
                      size_t primary)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (same_key(&keys[i], k) &&
		    (!k->is_sub || keys[i].primary == primary))
			return i;
	return (size_t)-1;
}

/* Fold copy 'from' of a key into 'into' as gpg merges copies: the union of
 * their verified self-signatures (the best one decides) and revocations. */
static void key_merge(pgp_key *into, const pgp_key *from)
{
	if (bind_better(&from->b, &into->b))
		into->b = from->b;
	into->revoked |= from->revoked;
	if (from->soft_revoked &&
	    (!into->soft_revoked || from->soft_rev_at < into->soft_rev_at)) {
		into->soft_revoked = 1;
		into->soft_rev_at = from->soft_rev_at;
	}
	if (into->reject[0] == '\0')
		memcpy(into->reject, from->reject, sizeof(into->reject));
}

/*
 * Move the keys of tmp (one input, as parsed) into kr, merging each key
 * that kr already holds (same fingerprint; a subkey under the same primary)
 * and the copies within tmp. Fails (AL_ELIMIT, AL_ENOMEM) before changing
 * kr, or not at all.
 */
static int kr_merge(al_pgp_keyring *kr, al_pgp_keyring *tmp)
{
	size_t *map = NULL, i, j, nnew = 0, base = kr->n;
	int rc;

	if (tmp->n == 0)
		return 0;
	if ((map = calloc(tmp->n, sizeof(*map))) == NULL)
		return al_error_oom();
	/* where each key of tmp goes: an existing entry, or a new one */
	for (i = 0; i < tmp->n; i++) {
		const pgp_key *k = &tmp->keys[i];
		size_t prim = k->is_sub ? map[k->primary] : 0;

		j = kr_find(kr->keys, base, k, prim);
		if (j == (size_t)-1) {
			size_t e;
			for (e = 0; e < i; e++) {
				const pgp_key *o = &tmp->keys[e];
				if (same_key(o, k) &&
				    (!k->is_sub || map[o->primary] == prim)) {
					j = map[e];
					break;
				}
			}
		}
		if (j == (size_t)-1)
			j = base + nnew++;
		map[i] = j;
	}
	if ((rc = kr_reserve(kr, nnew)) < 0)
		goto out;
	for (i = 0; i < tmp->n; i++) {
		pgp_key *k = &tmp->keys[i];
		if (map[i] < kr->n) {
			key_merge(&kr->keys[map[i]], k);
			continue;
		}
		k->primary = k->is_sub ? map[k->primary] : map[i];
		kr->keys[kr->n++] = *k;
		memset(k, 0, sizeof(*k));
	}
	rc = 0;
out:
	free(map);
	return rc;
}

static int warn_add(al_pgp_keyring *kr, char *msg)
{
	char **grown;

	if (msg == NULL)
		return al_error_oom();
	grown = realloc(kr->warn, (kr->nwarn + 1) * sizeof(*grown));
	if (grown == NULL) {
		free(msg);
		return al_error_oom();
	}
	kr->warn = grown;
	kr->warn[kr->nwarn++] = msg;
	return 0;
}

/*
 * Say why each key is unusable (for messages at verify time) and rebuild the
 * warnings: keys that are unusable, and keys valid only through a SHA-1
 * self-signature or binding (accepted because it predates 2023-02-01).
 */
static int kr_finish(al_pgp_keyring *kr)
{
	char fpr[41], tb[32];
	size_t i;
	int rc;

	warn_clear(kr);
	for (i = 0; i < kr->n; i++) {
		pgp_key *k = &kr->keys[i];
		const pgp_key *pk = &kr->keys[k->primary];
		const char *src = pk->src != NULL ? pk->src : "keyring";

		hex_upper(fpr, k->fpr, 20);
		k->why[0] = '\0';
		if (!k->b.ok) {
			set_why(k->why, sizeof(k->why),
			        "%s 0x%016" PRIX64 " has no valid %s%s%s",
			        k->is_sub ? "subkey" : "key", k->keyid,
			        k->is_sub ? "binding signature"
			                  : "self-signature",
			        k->reject[0] ? ": " : "", k->reject);
			al_log_debug("pgp: %s", k->why);
			/* encryption subkeys never sign: not worth a warning */
			if (k->pkey == NULL)
				continue;
			rc = warn_add(kr, al_sprintf("key %s from '%s' is not "
			                             "usable: %s",
			                             fpr, src, k->why));
		} else if (k->b.hash == 2) {
			rc = warn_add(
			    kr, al_sprintf(
			            "%s %s%s%s%s from '%s': accepted with a "
			            "SHA-1 %s made on %s (SHA-1 %ss are "
			            "accepted when made before 2023-02-01; "
			            "SHA-1 data signatures never are)",
			            k->is_sub ? "subkey" : "key", fpr,
			            pk->b.uid[0] ? " \"" : "", pk->b.uid,
			            pk->b.uid[0] ? "\"" : "", k->b.src,
			            k->is_sub ? "binding" : "self-signature",
			            fmt_time(k->b.at, tb),
			            k->is_sub ? "binding" : "self-signature"));
		} else {
			continue;
		}
		if (rc < 0)
			return rc;
	}
	return 0;
}

int al_pgp_keyring_add(al_pgp_keyring *kr, const uint8_t *p, size_t n,
                       const char *what)
{
	al_buf bin = AL_BUF_INIT(AL_PGP_MAX_KEYRING_BYTES);
	al_pgp_keyring tmp;
	size_t off = 0, i;
	int rc, blocks = 0;

	memset(&tmp, 0, sizeof(tmp));
	if (kr == NULL || (p == NULL && n > 0))
		return al_error_set(AL_EINVAL, "invalid argument");
	if (what == NULL)
		what = "keyring";
	if (n > AL_PGP_MAX_KEYRING_BYTES)
		return al_error_set(AL_ELIMIT,
		                    "'%s': keyring larger than %zu bytes", what,
		                    (size_t)AL_PGP_MAX_KEYRING_BYTES);
	/* parse into a keyring of its own, then merge: on failure kr is as
	 * it was */
	if (!looks_armored(p, n)) {
		rc = kr_add_binary(&tmp, p, n, what);
		goto out;
	}
	for (;;) {
		al_buf_reset(&bin);
		rc = armor_decode(&bin, p, n, &off, "PUBLIC KEY BLOCK", what);
		if (rc < 0)
			goto out;
		if (rc == 0)
			break;
		blocks++;
		if ((rc = kr_add_binary(&tmp, bin.ptr, bin.len, what)) < 0)
			goto out;
	}
	rc = blocks > 0 ? 0
	                : al_error_set(AL_EPARSE,
	                               "'%s': neither an OpenPGP keyring nor a "
	                               "PGP PUBLIC KEY BLOCK",
	                               what);
out:
	if (rc == 0 && tmp.n == 0)
		rc = al_error_set(
		    AL_EUNSUPPORTED,
		    "'%s': no supported public key (v4 RSA, ECDSA or EdDSA)",
		    what);
	if (rc == 0)
		rc = kr_merge(kr, &tmp);
	if (rc == 0)
		rc = kr_finish(kr);
	for (i = 0; i < tmp.n; i++)
		key_clear(&tmp.keys[i]);
	free(tmp.keys);
	al_buf_free(&bin);
	return rc;
}

int al_pgp_keyring_load(al_pgp_keyring **out, const uint8_t *p, size_t n,
                        const char *what)
{
	al_pgp_keyring *kr = NULL;
	int rc;

	if ((rc = al_pgp_keyring_new(&kr)) < 0)
		return rc;
	if ((rc = al_pgp_keyring_add(kr, p, n, what)) < 0) {
		al_pgp_keyring_free(kr);
		return rc;
	}
	*out = kr;
	return 0;
}

/* ---------------------------------------------------------- messages */

typedef struct msg_state {
	pkt pk[AL_PGP_MAX_MESSAGE_PACKETS];
	size_t n;
	uint8_t
	    *owned[AL_PGP_MAX_MESSAGE_PACKETS + 4]; /* decompressed buffers */
	size_t nowned;
	size_t inflated; /* total decompressed bytes */
	int nops, nlit, nsig_before, nsig_after;
} msg_state;

static void msg_free(msg_state *ms)
{
	size_t i;

	for (i = 0; i < ms->n; i++)
		free(ms->pk[i].owned);
	for (i = 0; i < ms->nowned; i++)
		free(ms->owned[i]);
}

/* Once the literal and its signatures are there, anything else is trailing
 * data. */
static int msg_complete(const msg_state *ms)
{
	if (ms->nlit == 0)
		return 0;
	if (ms->nops > 0)
		return ms->nsig_after >= ms->nops;
	return ms->nsig_before > 0 || ms->nsig_after > 0;
}

static int inflate_body(msg_state *ms, const uint8_t *p, size_t n, int algo,
                        uint8_t **out, size_t *outlen)
{
	z_stream zs;
	al_buf acc = AL_BUF_INIT(AL_PGP_MAX_LITERAL_BYTES);
	uint8_t chunk[16384];
	size_t budget = AL_PGP_MAX_LITERAL_BYTES - ms->inflated;
	int zrc, rc, done = 0;

	memset(&zs, 0, sizeof(zs));
	/* RFC 4880 9.3: ZIP is raw deflate (RFC 1951), ZLIB has the RFC 1950
	 * wrapper */
	if (inflateInit2(&zs, algo == 1 ? -15 : 15) != Z_OK)
		return al_error_set(AL_ENOMEM, "cannot initialise zlib");
	zs.next_in = (Bytef *)(uintptr_t)p;
	while (!done) {
		size_t feed = n > UINT32_MAX ? UINT32_MAX : n;
		if (zs.avail_in == 0 && feed > 0) {
			zs.avail_in = (uInt)feed;
			n -= feed;
		}
		zs.next_out = chunk;
		zs.avail_out = sizeof(chunk);
		zrc = inflate(&zs, Z_NO_FLUSH);
		if (zrc == Z_STREAM_END) {
			done = 1;
		} else if (zrc == Z_BUF_ERROR ||
		           (zrc == Z_OK && zs.avail_in == 0 && n == 0 &&
		            zs.avail_out != 0)) {
			rc = al_error_set(AL_EPARSE,
			                  "truncated compressed data");
			goto out;
		} else if (zrc != Z_OK) {
			rc = al_error_set(
			    AL_EPARSE, "invalid compressed data: %s",
			    zs.msg != NULL ? zs.msg : "zlib error");
			goto out;
		}
		if (sizeof(chunk) - zs.avail_out > budget - acc.len) {
			rc = al_error_set(
			    AL_ELIMIT,
			    "compressed data expands beyond %zu bytes",
			    (size_t)AL_PGP_MAX_LITERAL_BYTES);
			goto out;
		}
		if ((rc = al_buf_append(&acc, chunk,
		                        sizeof(chunk) - zs.avail_out)) < 0)
			goto out;
	}
	if (zs.avail_in > 0 || n > 0) {
		/* an indeterminate-length packet would otherwise hide appended
		 * bytes */
		rc =
		    al_error_set(AL_EVERIFY, "trailing data after the message");
		goto out;
	}
	ms->inflated += acc.len;
	*outlen = acc.len;
	*out = acc.ptr != NULL ? acc.ptr : malloc(1);
	if (*out == NULL) {
		rc = al_error_oom();
		goto out;
	}
	acc.ptr = NULL;
	rc = 0;
out:
	inflateEnd(&zs);
	al_buf_free(&acc);
	return rc;
}

/* Collect the packets of p[0..n), expanding compressed packets in place. */
static int msg_collect(msg_state *ms, const uint8_t *p, size_t n, int depth)
{
	size_t off = 0;
	int rc;

	for (;;) {
		pkt pk;

		if (off < n && msg_complete(ms))
			return al_error_set(AL_EVERIFY,
			                    "trailing data after the message");
		if ((rc = pkt_next(&pk, p, n, &off, AL_PGP_MAX_LITERAL_BYTES)) <
		    0)
			return depth > 0
			           ? al_error_wrap(rc, "in compressed data: ")
			           : rc;
		if (rc == 0)
			return 0;
		if (pk.tag == TAG_MARKER) {
			free(pk.owned);
			continue;
		}
		if (ms->n >= AL_PGP_MAX_MESSAGE_PACKETS) {
			free(pk.owned);
			return al_error_set(AL_ELIMIT,
			                    "message has more than %d packets",
			                    AL_PGP_MAX_MESSAGE_PACKETS);
		}
		ms->pk[ms->n++] = pk;
		switch (pk.tag) {
		case TAG_COMPRESSED: {
			uint8_t *data = NULL;
			size_t dlen = 0;
			if (depth >= AL_PGP_MAX_NESTING)
				return al_error_set(
				    AL_ELIMIT,
				    "compressed data nested more than %d deep",
				    AL_PGP_MAX_NESTING);
			if (pk.len < 1)
				return al_error_set(AL_EPARSE,
				                    "empty compressed data "
				                    "packet at offset %zu",
				                    pk.offset);
			if (pk.body[0] == 0) {
				if ((rc = msg_collect(ms, pk.body + 1,
				                      pk.len - 1, depth + 1)) <
				    0)
					return rc;
				break;
			}
			if (pk.body[0] == 3)
				return al_error_set(
				    AL_EUNSUPPORTED,
				    "BZIP2 compressed data is not supported");
			if (pk.body[0] != 1 && pk.body[0] != 2)
				return al_error_set(
				    AL_EUNSUPPORTED,
				    "compression algorithm %d is not supported",
				    pk.body[0]);
			if (ms->nowned >=
			    sizeof(ms->owned) / sizeof(ms->owned[0]))
				return al_error_set(
				    AL_ELIMIT,
				    "too many compressed data packets");
			if ((rc = inflate_body(ms, pk.body + 1, pk.len - 1,
			                       pk.body[0], &data, &dlen)) < 0)
				return rc;
			ms->owned[ms->nowned++] = data;
			if ((rc = msg_collect(ms, data, dlen, depth + 1)) < 0)
				return rc;
			break;
		}
		case TAG_OPS:
			if (ms->nlit > 0)
				return al_error_set(
				    AL_EPARSE,
				    "one-pass signature after literal data");
			ms->nops++;
			break;
		case TAG_LITERAL:
			ms->nlit++;
			if (ms->nlit > 1)
				return al_error_set(AL_EPARSE,
				                    "message has more than one "
				                    "literal data packet");
			break;
		case TAG_SIG:
			if (ms->nlit > 0)
				ms->nsig_after++;
			else
				ms->nsig_before++;
			break;
		default:
			return al_error_set(AL_EPARSE,
			                    "unexpected packet type %d at "
			                    "offset %zu in a signed message",
			                    pk.tag, pk.offset);
		}
	}
}

/*
 * Whether key k could make signature s. RFC 9580 5.2.3.13 semantics for
 * expiry: a key's expiry is compared with the signature's creation time, so
 * a release signed while the key was valid stays valid after the key
 * expired. Any revocation refuses every signature, also a soft one
 * (superseded, retired) that RFC 9580 5.2.3.31 would let keep older
 * signatures: golang.org/x/crypto/openpgp, the cluster's verifier, skips
 * every revoked key (KeysByIdUsage), and a release airlock accepts must be
 * one the cluster accepts. AL_PGP_STRICT_EXPIRY adds: the key must not be
 * expired at now.
 */
static int key_valid_for(const pgp_key *k, const pgp_sig *s, uint64_t now,
                         unsigned flags)
{
	const char *what = k->is_sub ? "subkey" : "key";
	uint64_t end = (uint64_t)k->created + k->b.expire;
	char tb[32], tb2[32];

	if (k->revoked)
		return al_error_set(AL_EVERIFY,
		                    "%s 0x%016" PRIX64 " is revoked", what,
		                    k->keyid);
	if (k->soft_revoked)
		return al_error_set(
		    AL_EVERIFY,
		    "%s 0x%016" PRIX64 " is revoked (superseded "
		    "or retired on %s: refused for every "
		    "signature, as the cluster's verifier does)",
		    what, k->keyid, fmt_time(k->soft_rev_at, tb));
	if (k->b.expire != 0 && end <= s->created)
		return al_error_set(AL_EVERIFY,
		                    "%s 0x%016" PRIX64 " expired on %s, before "
		                    "it made this signature (%s)",
		                    what, k->keyid, fmt_time(end, tb),
		                    fmt_time(s->created, tb2));
	if (k->b.expire != 0 && end <= now &&
	    (flags & AL_PGP_STRICT_EXPIRY) != 0)
		return al_error_set(AL_EVERIFY,
		                    "%s 0x%016" PRIX64 " expired on %s (strict "
		                    "expiry: the key must be valid now)",
		                    what, k->keyid, fmt_time(end, tb));
	if (s->created < k->created)
		return al_error_set(AL_EVERIFY,
		                    "signature predates %s 0x%016" PRIX64, what,
		                    k->keyid);
	return 0;
}

/* Validity of signing key k (and its primary) for s at time now. */
static int key_usable(const al_pgp_keyring *kr, const pgp_key *k,
                      const pgp_sig *s, uint64_t now)
{
	const pgp_key *pk = &kr->keys[k->primary];
	int rc;

	if (!pk->b.ok)
		return al_error_set(AL_EVERIFY, "%s", pk->why);
	if (!k->b.ok)
		return al_error_set(AL_EVERIFY, "%s", k->why);
	if ((rc = key_valid_for(pk, s, now, kr->flags)) < 0)
		return rc;
	if (k != pk && (rc = key_valid_for(k, s, now, kr->flags)) < 0)
		return rc;
	if (k->b.has_flags && !(k->b.flags & KEYFLAG_SIGN))
		return al_error_set(AL_EVERIFY,
		                    "key 0x%016" PRIX64 " is not a signing key",
		                    k->keyid);
	if (k != pk && !k->b.backsig)
		return al_error_set(AL_EVERIFY,
		                    "signing subkey 0x%016" PRIX64
		                    " has no valid back-signature",
		                    k->keyid);
	return 0;
}

/* An armored message decoded into armored (data and dlen point into it), or
 * a binary one passed through: nothing may follow the armor. */
static int msg_dearmor(al_buf *armored, const uint8_t *msg, size_t n,
                       const uint8_t **data, size_t *dlen)
{
	size_t off = 0;
	int rc;

	*data = msg;
	*dlen = n;
	if (!looks_armored(msg, n))
		return 0;
	if ((rc = armor_decode(armored, msg, n, &off, "MESSAGE", "message")) <
	    0)
		return rc;
	if (rc == 0)
		return al_error_set(AL_EPARSE, "not an OpenPGP message");
	for (; off < n; off++)
		if (!is_ws(msg[off]))
			return al_error_set(AL_EVERIFY,
			                    "trailing data after the message");
	*data = armored->ptr;
	*dlen = armored->len;
	return 0;
}

/* The packets of a signed message: one literal data packet and one
 * signature, either after the data or announced by one one-pass signature
 * before it. */
static int msg_layout(const msg_state *ms, const pkt **lit, const pkt **sigp,
                      const pkt **ops)
{
	int nsig = ms->nsig_before + ms->nsig_after;
	size_t i;

	if (nsig > 1)
		return al_error_set(AL_EVERIFY,
		                    "message has %d signature packets", nsig);
	*lit = *sigp = *ops = NULL;
	for (i = 0; i < ms->n; i++) {
		if (ms->pk[i].tag == TAG_LITERAL)
			*lit = &ms->pk[i];
		else if (ms->pk[i].tag == TAG_SIG)
			*sigp = &ms->pk[i];
		else if (ms->pk[i].tag == TAG_OPS)
			*ops = &ms->pk[i];
	}
	if (*lit == NULL)
		return al_error_set(AL_EPARSE,
		                    "message has no literal data packet");
	if (*sigp == NULL)
		return al_error_set(AL_EPARSE,
		                    "message has no signature packet");
	if (ms->nops > 1 || (*ops != NULL && ms->nsig_after != 1))
		return al_error_set(
		    AL_EPARSE,
		    "one-pass signature without its signature packet");
	if (*ops == NULL && ms->nsig_before != 1)
		return al_error_set(AL_EPARSE,
		                    "signature packet after literal "
		                    "data without a one-pass signature");
	return 0;
}

/* The data of a literal data packet: format, name length, name, date
 * (RFC 4880 5.9), then the data. */
static int literal_data(const pkt *lit, const uint8_t **ld, size_t *ldlen)
{
	if (lit->len < 6 || (size_t)lit->body[1] > lit->len - 6)
		return al_error_set(
		    AL_EPARSE, "truncated literal data packet at offset %zu",
		    lit->offset);
	*ld = lit->body + 6 + lit->body[1];
	*ldlen = lit->len - 6 - lit->body[1];
	return 0;
}

/* s is a document signature with a creation time, and the one-pass
 * signature (if any) announced it. */
static int sig_document_check(const pgp_sig *s, const pkt *ops)
{
	/* one-pass signature: version 3, type, hash, pk algo, key ID, nested */
	if (ops != NULL &&
	    (ops->len != 13 || ops->body[0] != 3 || ops->body[1] != s->type ||
	     ops->body[2] != s->hashalgo || ops->body[3] != s->pkalgo ||
	     (s->has_issuer && be64(ops->body + 4) != s->issuer)))
		return al_error_set(AL_EPARSE,
		                    "one-pass signature does not match "
		                    "the signature packet");
	if (s->type != SIG_BINARY && s->type != SIG_TEXT)
		return al_error_set(
		    AL_EVERIFY,
		    "signature type 0x%02x is not a document signature",
		    s->type);
	if (!s->has_created)
		return al_error_set(AL_EPARSE,
		                    "signature has no hashed creation time");
	return 0;
}

/* The key of kr that made s over hash: looked up by the issuer fingerprint
 * when there is one (it names one key), else by the key ID; the two must
 * agree. */
static int find_signer(const pgp_key **signer, const al_pgp_keyring *kr,
                       const pgp_sig *s, const hash_info *hi,
                       const uint8_t *hash, size_t hlen)
{
	uint64_t looked;
	int tried = 0;
	size_t i;

	if (!s->has_issuer && !s->has_issuer_fpr)
		return al_error_set(AL_EVERIFY,
		                    "signature names no issuer key");
	looked = s->has_issuer_fpr ? be64(s->issuer_fpr + 12) : s->issuer;
	if (s->has_issuer && s->has_issuer_fpr && s->issuer != looked) {
		char fpr[41];
		int known = 0;
		for (i = 0; i < kr->n; i++)
			known |=
			    memcmp(kr->keys[i].fpr, s->issuer_fpr, 20) == 0;
		hex_upper(fpr, s->issuer_fpr, 20);
		return al_error_set(
		    AL_EVERIFY,
		    "signature names two issuers: looked up key "
		    "0x%016" PRIX64 " (%s) by its issuer "
		    "fingerprint %s, but its issuer key ID is "
		    "0x%016" PRIX64,
		    looked, known ? "in the keyring" : "not in the keyring",
		    fpr, s->issuer);
	}
	for (i = 0; i < kr->n; i++) {
		const pgp_key *k = &kr->keys[i];
		if (s->has_issuer_fpr ? memcmp(k->fpr, s->issuer_fpr, 20) != 0
		                      : k->keyid != s->issuer)
			continue;
		tried++;
		if (verify_raw(k, s, hi, hash, hlen) == 1) {
			*signer = k;
			return 0;
		}
	}
	return al_error_set(AL_EVERIFY,
	                    tried ? "bad signature by key 0x%016" PRIX64
	                          : "signed by unknown key 0x%016" PRIX64,
	                    looked);
}

/* What al_pgp_verify reports about a good signature. */
static void result_fill(al_pgp_result *out, const al_pgp_keyring *kr,
                        const pgp_key *signer, const pgp_sig *s,
                        const hash_info *hi)
{
	AL_RESULT_ZERO(out);
	hex_upper(out->fingerprint, signer->fpr, 20);
	hex_upper(out->primary_fingerprint, kr->keys[signer->primary].fpr, 20);
	out->key_id = signer->keyid;
	out->sig_version = s->version;
	out->sig_type = s->type;
	out->pubkey_algo = s->pkalgo;
	out->hash_algo = s->hashalgo;
	out->hash_name = hi->name;
	out->created = s->created;
	out->expires = s->sig_expire != 0 ? s->created + s->sig_expire : 0;
}

int al_pgp_verify(al_pgp_result *out, al_buf *literal_out,
                  const al_pgp_keyring *kr, const uint8_t *msg, size_t n,
                  uint64_t now)
{
	msg_state *ms = NULL;
	al_buf armored = AL_BUF_INIT(AL_PGP_MAX_MESSAGE_BYTES);
	const uint8_t *data = msg, *ld = NULL;
	const pkt *lit = NULL, *sigp = NULL, *ops = NULL;
	size_t dlen = n, ldlen = 0, hlen = 0;
	const hash_info *hi = NULL;
	EVP_MD_CTX *md = NULL;
	uint8_t hash[EVP_MAX_MD_SIZE];
	const pgp_key *signer = NULL;
	pgp_sig s;
	int rc;
	char tb[32];

	if ((rc = AL_RESULT_VERSION_CHECK("al_pgp_result", out, version,
	                                  AL_PGP_RESULT_VERSION)) < 0)
		return rc;
	if (kr == NULL || (msg == NULL && n > 0))
		return al_error_set(AL_EINVAL, "invalid argument");
	if (now == 0)
		now = (uint64_t)time(NULL);
	if (n > AL_PGP_MAX_MESSAGE_BYTES)
		return al_error_set(AL_ELIMIT,
		                    "signed message larger than %zu bytes",
		                    (size_t)AL_PGP_MAX_MESSAGE_BYTES);
	if (n == 0)
		return al_error_set(AL_EPARSE, "empty signed message");
	if ((rc = msg_dearmor(&armored, msg, n, &data, &dlen)) < 0)
		goto out;
	ms = calloc(1, sizeof(*ms));
	if (ms == NULL) {
		rc = al_error_oom();
		goto out;
	}
	if ((rc = msg_collect(ms, data, dlen, 0)) < 0 ||
	    (rc = msg_layout(ms, &lit, &sigp, &ops)) < 0 ||
	    (rc = literal_data(lit, &ld, &ldlen)) < 0 ||
	    (rc = sig_parse(&s, sigp->body, sigp->len)) < 0 ||
	    (rc = sig_document_check(&s, ops)) < 0)
		goto out;
	/* a data signature: never SHA-1, whatever its date */
	if ((rc = hash_begin(&md, &s, &hi, 0)) < 0)
		goto out;
	if (hash_data(md, ld, ldlen, s.type == SIG_TEXT) < 0 ||
	    (rc = hash_finish(md, &s, hash, &hlen)) < 0) {
		rc =
		    rc < 0 ? rc : al_error_openssl(AL_ENOMEM, "hashing failed");
		goto out;
	}
	if ((rc = find_signer(&signer, kr, &s, hi, hash, hlen)) < 0 ||
	    (rc = key_usable(kr, signer, &s, now)) < 0)
		goto out;
	if (s.sig_expire != 0 && s.created + s.sig_expire <= now) {
		rc = al_error_set(AL_EVERIFY, "signature expired on %s",
		                  fmt_time(s.created + s.sig_expire, tb));
		goto out;
	}
	if (literal_out != NULL &&
	    (rc = al_buf_append(literal_out, ld, ldlen)) < 0)
		goto out;
	if (out != NULL)
		result_fill(out, kr, signer, &s, hi);
	rc = 0;
out:
	EVP_MD_CTX_free(md);
	if (ms != NULL) {
		msg_free(ms);
		free(ms);
	}
	al_buf_free(&armored);
	return rc;
}
