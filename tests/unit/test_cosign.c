/* test_cosign.c: the cosign payload parser, RFC 6962 audit paths, key-based
 * signatures made by the openssl tool, bundle parsing; and, with --cases DIR,
 * agreement with @sigstore/verify over the cases sigstore_fixtures.js made. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/evp.h>

#include "al_test.h"
#include "airlock/buf.h"
#include "airlock/cosign.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/mirror.h"
#include "json_int.h"

#define DIGEST_A                                                               \
	"sha256:"                                                              \
	"6d8c2c3a0f0d5bd8c3f1b8cbd0e7f6c2a1b9d0e4f3a2b1c0d9e8f7a6b5c4d3e2"
#define DIGEST_B                                                               \
	"sha256:"                                                              \
	"1111111111111111111111111111111111111111111111111111111111111111"
#define REF_A "quay.io/example/release:4.16.0"

#define PAYLOAD(digest, ref, optional)                                         \
	"{\"critical\":{\"identity\":{\"docker-reference\":\"" ref             \
	"\"},\"image\":{\"docker-manifest-digest\":\"" digest                  \
	"\"},\"type\":\"cosign container image "                               \
	"signature\"},\"optional\":" optional "}"

static int parse(const char *s, al_sig_payload *pl)
{
	return al_cosign_payload_parse(pl, (const uint8_t *)s, strlen(s));
}

static void test_cosign__payload_parses_cosign_output(void)
{
	al_sig_payload pl;
	al_digest d;

	memset(&pl, 0, sizeof(pl));
	CU_ASSERT_EQUAL(parse(PAYLOAD(DIGEST_A, REF_A, "null"), &pl), 0);
	CU_ASSERT_EQUAL(al_digest_parse_str(&d, DIGEST_A), 0);
	CU_ASSERT(al_digest_equal(&pl.digest, &d));
	CU_ASSERT_STRING_EQUAL(pl.reference, REF_A);
	CU_ASSERT_PTR_NULL(pl.creator);
	CU_ASSERT_EQUAL(pl.has_timestamp, 0);
	al_sig_payload_clear(&pl);
	CU_ASSERT_EQUAL(
	    parse(PAYLOAD(DIGEST_A, REF_A,
	                  "{\"creator\":\"airlock\",\"timestamp\":1700000000,"
	                  "\"anything\":[1,2]}"),
	          &pl),
	    0);
	CU_ASSERT_STRING_EQUAL(pl.creator, "airlock");
	CU_ASSERT_EQUAL(pl.has_timestamp, 1);
	CU_ASSERT_EQUAL(pl.timestamp, 1700000000);
	al_sig_payload_clear(&pl);
}

static void test_cosign__payload_is_strict(void)
{
	static const char *const bad[] = {
	    /* optional is required (containers/image: exact fields) */
	    "{\"critical\":{\"identity\":{\"docker-reference\":\"" REF_A
	    "\"},\"image\":{\"docker-manifest-digest\":\"" DIGEST_A
	    "\"},\"type\":\"cosign container image signature\"}}",
	    /* the OpenPGP payload type */
	    "{\"critical\":{\"identity\":{\"docker-reference\":\"" REF_A
	    "\"},\"image\":{\"docker-manifest-digest\":\"" DIGEST_A
	    "\"},\"type\":\"atomic container signature\"},\"optional\":null}",
	    /* unknown critical member */
	    "{\"critical\":{\"identity\":{\"docker-reference\":\"" REF_A
	    "\"},\"image\":{\"docker-manifest-digest\":\"" DIGEST_A
	    "\"},\"type\":\"cosign container image signature\",\"x\":1},"
	    "\"optional\":null}",
	    /* unknown image member */
	    "{\"critical\":{\"identity\":{\"docker-reference\":\"" REF_A
	    "\"},\"image\":{\"docker-manifest-digest\":\"" DIGEST_A
	    "\",\"x\":1},\"type\":\"cosign container image signature\"},"
	    "\"optional\":null}",
	    /* duplicate key */
	    "{\"critical\":{\"identity\":{\"docker-reference\":\"" REF_A
	    "\"},\"image\":{\"docker-manifest-digest\":\"" DIGEST_A
	    "\",\"docker-manifest-digest\":\"" DIGEST_B
	    "\"},\"type\":\"cosign container image signature\"},"
	    "\"optional\":null}",
	    PAYLOAD(DIGEST_A, "", "null"),
	    PAYLOAD("sha256:abc", REF_A, "null"),
	    PAYLOAD(DIGEST_A, REF_A, "[]"),
	    PAYLOAD(DIGEST_A, REF_A, "{\"timestamp\":1.5}"),
	    PAYLOAD(DIGEST_A, REF_A, "{\"creator\":7}"),
	    "[]",
	    "",
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		al_sig_payload pl;
		int rc;

		memset(&pl, 0, sizeof(pl));
		rc = parse(bad[i], &pl);
		if (rc != AL_EPARSE)
			printf("case %zu: rc %d (%s)\n", i, rc,
			       al_error_message());
		CU_ASSERT_EQUAL(rc, AL_EPARSE);
	}
	{
		al_sig_payload pl;
		const char *extra =
		    "{\"critical\":{\"identity\":{\"docker-reference\":\"" REF_A
		    "\"},\"image\":{\"docker-manifest-digest\":\"" DIGEST_A
		    "\"},\"type\":\"cosign container image signature\"},"
		    "\"optional\":null,\"extra\":{}}";

		memset(&pl, 0, sizeof(pl));
		CU_ASSERT_EQUAL(parse(extra, &pl), AL_EPARSE);
		CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "extra"));
	}
}

static void test_cosign__payload_size_is_bounded(void)
{
	size_t n = AL_COSIGN_MAX_PAYLOAD + 1;
	uint8_t *big = malloc(n);
	al_sig_payload pl;

	CU_ASSERT_PTR_NOT_NULL_FATAL(big);
	memset(big, ' ', n);
	CU_ASSERT_EQUAL(al_cosign_payload_parse(&pl, big, n), AL_ELIMIT);
	free(big);
}

/* --- RFC 6962 ------------------------------------------------------- */

static void h_leaf(uint8_t out[32], uint32_t i)
{
	uint8_t buf[5] = {0, (uint8_t)(i >> 24), (uint8_t)(i >> 16),
	                  (uint8_t)(i >> 8), (uint8_t)i};

	EVP_Digest(buf, sizeof(buf), out, NULL, EVP_sha256(), NULL);
}

static void h_node(uint8_t out[32], const uint8_t l[32], const uint8_t r[32])
{
	uint8_t buf[65];

	buf[0] = 1;
	memcpy(buf + 1, l, 32);
	memcpy(buf + 33, r, 32);
	EVP_Digest(buf, sizeof(buf), out, NULL, EVP_sha256(), NULL);
}

static uint64_t split_point(uint64_t n)
{
	uint64_t k = 1;

	while (k * 2 < n)
		k *= 2;
	return k;
}

/* MTH(D[lo:lo+n]) as RFC 6962 section 2.1 defines it, recursively. */
static void mth(uint8_t out[32], uint64_t lo, uint64_t n)
{
	uint8_t l[32], r[32];
	uint64_t k;

	if (n == 1) {
		h_leaf(out, (uint32_t)lo);
		return;
	}
	k = split_point(n);
	mth(l, lo, k);
	mth(r, lo + k, n - k);
	h_node(out, l, r);
}

/* PATH(m, D[lo:lo+n]) (RFC 6962 section 2.1.1), appended to path. */
static void audit_path(uint8_t *path, size_t *np, uint64_t m, uint64_t lo,
                       uint64_t n)
{
	uint64_t k;

	if (n <= 1)
		return;
	k = split_point(n);
	if (m < k) {
		audit_path(path, np, m, lo, k);
		mth(path + 32 * (*np)++, lo + k, n - k);
	} else {
		audit_path(path, np, m - k, lo + k, n - k);
		mth(path + 32 * (*np)++, lo, k);
	}
}

static void test_cosign__merkle_paths_from_the_rfc_definition(void)
{
	uint8_t path[32 * 64], root[32], leaf[32];
	uint64_t n, m;
	size_t np;
	int bad = 0;

	for (n = 1; n <= 33; n++) {
		mth(root, 0, n);
		for (m = 0; m < n; m++) {
			np = 0;
			audit_path(path, &np, m, 0, n);
			h_leaf(leaf, (uint32_t)m);
			if (al_cosign_merkle_verify(leaf, m, n, path, np,
			                            root) != 0) {
				printf("n=%llu m=%llu: %s\n",
				       (unsigned long long)n,
				       (unsigned long long)m,
				       al_error_message());
				bad++;
			}
			/* every altered input is refused (a size claim alone
			 * is not: the signed checkpoint binds size to root) */
			if (np > 0) {
				path[0] ^= 1;
				if (al_cosign_merkle_verify(leaf, m, n, path,
				                            np, root) == 0)
					bad++;
				path[0] ^= 1;
				if (al_cosign_merkle_verify(leaf, m, n, path,
				                            np - 1, root) == 0)
					bad++;
			}
			if (al_cosign_merkle_verify(leaf, m, n, path, np + 1,
			                            root) == 0) {
				printf("n=%llu m=%llu: an extra hash passed\n",
				       (unsigned long long)n,
				       (unsigned long long)m);
				bad++;
			}
			if (n > 1 &&
			    al_cosign_merkle_verify(leaf, (m + 1) % n, n, path,
			                            np, root) == 0)
				bad++;
		}
	}
	CU_ASSERT_EQUAL(bad, 0);
	h_leaf(leaf, 0);
	CU_ASSERT_EQUAL(al_cosign_merkle_verify(leaf, 0, 0, NULL, 0, leaf),
	                AL_EVERIFY);
	CU_ASSERT_EQUAL(al_cosign_merkle_verify(leaf, 0, 1, NULL, 0, leaf), 0);
	CU_ASSERT_EQUAL(al_cosign_merkle_verify(leaf, 1, 1, NULL, 0, leaf),
	                AL_EVERIFY);
}

/* --- keys made by the openssl tool ------------------------------------ */

static int slurp(al_buf *b, const char *path)
{
	al_buf_init(b, 4 * 1024 * 1024);
	return al_fs_read_file(path, b);
}

static int have_openssl(void)
{
	return system("command -v openssl >/dev/null 2>&1") == 0;
}

/* key NAME made with openssl GENARGS; the payload signed into NAME.sig
 * (base64). */
static int make_key(const char *dir, const char *name, const char *gen, int ed)
{
	if (al_test_sh("cd %s && openssl %s -out %s.key 2>/dev/null && "
	               "openssl pkey -in %s.key -pubout -out %s.pub",
	               dir, gen, name, name, name) != 0)
		return -1;
	if (ed)
		return al_test_sh(
		    "cd %s && openssl pkeyutl -sign -rawin -inkey "
		    "%s.key -in payload.json | base64 -w0 > %s.sig",
		    dir, name, name);
	return al_test_sh("cd %s && openssl dgst -sha256 -sign %s.key "
	                  "payload.json | base64 -w0 > %s.sig",
	                  dir, name, name);
}

static int verify_with(const char *dir, const char *keyname,
                       const char *signame, const char *payload_file,
                       al_cosign_info *info)
{
	char path[1024];
	al_cosign_trust *t = NULL;
	al_buf sig, pl;
	al_cosign_sig s;
	al_cosign_opts o = AL_COSIGN_OPTS_INIT;
	int rc;

	memset(&s, 0, sizeof(s));
	snprintf(path, sizeof(path), "%s/%s.sig", dir, signame);
	if (slurp(&sig, path) < 0)
		return -100;
	snprintf(path, sizeof(path), "%s/%s", dir, payload_file);
	if (slurp(&pl, path) < 0) {
		al_buf_free(&sig);
		return -100;
	}
	snprintf(path, sizeof(path), "%s/%s.pub", dir, keyname);
	if ((rc = al_cosign_trust_new(&t)) < 0 ||
	    (rc = al_cosign_trust_add_keys_file(t, path)) < 0)
		goto out;
	s.payload = pl.ptr;
	s.payload_len = pl.len;
	s.signature = al_buf_cstr(&sig);
	o.trust = t;
	rc = al_cosign_verify_sig(info, &s, &o);
out:
	al_cosign_trust_free(t);
	al_buf_free(&sig);
	al_buf_free(&pl);
	return rc;
}

static void test_cosign__key_based_signatures_by_openssl(void)
{
	static const struct {
		const char *name, *gen;
		int ed;
	} keys[] = {
	    {"p256", "ecparam -name prime256v1 -genkey -noout", 0},
	    {"p384", "ecparam -name secp384r1 -genkey -noout", 0},
	    {"p521", "ecparam -name secp521r1 -genkey -noout", 0},
	    {"ed25519", "genpkey -algorithm ed25519", 1},
	    {"rsa2048", "genpkey -algorithm rsa -pkeyopt rsa_keygen_bits:2048",
	     0},
	};
	char dir[512];
	al_cosign_info info;
	al_digest a, b;
	size_t i;

	if (!have_openssl()) {
		printf("openssl not found: skipping\n");
		return;
	}
	snprintf(dir, sizeof(dir), "%s/keys", al_test_tmpdir());
	CU_ASSERT_EQUAL_FATAL(al_fs_mkdir_p(dir, 0700), 0);
	CU_ASSERT_EQUAL_FATAL(
	    al_test_sh("cd %s && printf '%%s' '" PAYLOAD(
	                   DIGEST_A, REF_A,
	                   "null") "' > "
	                           "payload.json && printf '%%s' '" PAYLOAD(
	                               DIGEST_B, REF_A, "null") "' > "
	                                                        "other.json",
	               dir),
	    0);
	CU_ASSERT_EQUAL(al_digest_parse_str(&a, DIGEST_A), 0);
	CU_ASSERT_EQUAL(al_digest_parse_str(&b, DIGEST_B), 0);
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		int rc;

		CU_ASSERT_EQUAL_FATAL(
		    make_key(dir, keys[i].name, keys[i].gen, keys[i].ed), 0);
		memset(&info, 0, sizeof(info));
		rc = verify_with(dir, keys[i].name, keys[i].name,
		                 "payload.json", &info);
		if (rc != 0)
			printf("%s: %s\n", keys[i].name, al_error_message());
		CU_ASSERT_EQUAL(rc, 0);
		CU_ASSERT_EQUAL(info.keyless, 0);
		CU_ASSERT_EQUAL(info.has_payload, 1);
		CU_ASSERT_EQUAL(strlen(info.key_id), 64);
		CU_ASSERT_EQUAL(al_cosign_check_image(&info, &a, REF_A,
		                                      AL_SIG_IDENTITY_EXACT),
		                0);
		/* the signature names image A, not B */
		CU_ASSERT_EQUAL(al_cosign_check_image(&info, &b, REF_A,
		                                      AL_SIG_IDENTITY_EXACT),
		                AL_EVERIFY);
		CU_ASSERT_EQUAL(
		    al_cosign_check_image(&info, &a, "quay.io/example/other",
		                          AL_SIG_IDENTITY_REPOSITORY),
		    AL_EVERIFY);
		al_cosign_info_clear(&info);
		/* the same signature over another payload */
		CU_ASSERT_EQUAL(verify_with(dir, keys[i].name, keys[i].name,
		                            "other.json", NULL),
		                AL_EVERIFY);
	}
	/* wrong key */
	CU_ASSERT_EQUAL(verify_with(dir, "p256", "p384", "payload.json", NULL),
	                AL_EVERIFY);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "trusted keys"));
	CU_ASSERT_EQUAL(
	    verify_with(dir, "ed25519", "rsa2048", "payload.json", NULL),
	    AL_EVERIFY);
	/* P-384 hashed with SHA-384: cosign and sigstore-js use SHA-256 */
	CU_ASSERT_EQUAL(al_test_sh("cd %s && openssl dgst -sha384 -sign "
	                           "p384.key payload.json | base64 -w0 > "
	                           "p384s.sig",
	                           dir),
	                0);
	CU_ASSERT_EQUAL(verify_with(dir, "p384", "p384s", "payload.json", NULL),
	                AL_EVERIFY);
}

static void test_cosign__trust_refuses_weak_or_wrong_keys(void)
{
	char dir[512], path[600];
	al_cosign_trust *t = NULL;
	al_buf b;

	if (!have_openssl()) {
		printf("openssl not found: skipping\n");
		return;
	}
	snprintf(dir, sizeof(dir), "%s/weak", al_test_tmpdir());
	CU_ASSERT_EQUAL_FATAL(al_fs_mkdir_p(dir, 0700), 0);
	CU_ASSERT_EQUAL_FATAL(
	    al_test_sh("cd %s && openssl genpkey -algorithm rsa -pkeyopt "
	               "rsa_keygen_bits:1024 2>/dev/null | openssl pkey "
	               "-pubout -out rsa1024.pub && openssl ecparam -name "
	               "secp256k1 -genkey -noout 2>/dev/null | openssl pkey "
	               "-pubout -out k1.pub && openssl req -x509 -newkey "
	               "ed25519 -nodes -keyout ca.key -subj /CN=ca -days 1 "
	               "-out ca.pem 2>/dev/null && printf 'nothing\\n' > "
	               "empty.pem",
	               dir),
	    0);
	CU_ASSERT_EQUAL_FATAL(al_cosign_trust_new(&t), 0);
	snprintf(path, sizeof(path), "%s/rsa1024.pub", dir);
	CU_ASSERT_EQUAL(al_cosign_trust_add_keys_file(t, path),
	                AL_EUNSUPPORTED);
	snprintf(path, sizeof(path), "%s/k1.pub", dir);
	CU_ASSERT_EQUAL(al_cosign_trust_add_keys_file(t, path),
	                AL_EUNSUPPORTED);
	snprintf(path, sizeof(path), "%s/ca.pem", dir);
	CU_ASSERT_EQUAL(al_cosign_trust_add_keys_file(t, path), AL_EPARSE);
	CU_ASSERT_EQUAL(al_cosign_trust_add_fulcio_file(t, path), 0);
	snprintf(path, sizeof(path), "%s/empty.pem", dir);
	CU_ASSERT_EQUAL(al_cosign_trust_add_keys_file(t, path), AL_EPARSE);
	snprintf(path, sizeof(path), "%s/missing.pem", dir);
	CU_ASSERT_EQUAL(al_cosign_trust_add_keys_file(t, path), AL_ENOTFOUND);
	{
		size_t k, f, r;

		al_cosign_trust_counts(t, &k, &f, &r);
		CU_ASSERT_EQUAL(k, 0);
		CU_ASSERT_EQUAL(f, 1);
		CU_ASSERT_EQUAL(r, 0);
	}
	/* keyless with no identity to require */
	snprintf(path, sizeof(path), "%s/ca.pem", dir);
	CU_ASSERT_EQUAL_FATAL(slurp(&b, path), 0);
	{
		al_cosign_sig s;
		al_cosign_opts o = AL_COSIGN_OPTS_INIT;

		memset(&s, 0, sizeof(s));
		s.payload = (const uint8_t *)"{}";
		s.payload_len = 2;
		s.signature = "AAAA";
		s.certificate = al_buf_cstr(&b);
		o.trust = t;
		/* the signature check comes first and fails */
		CU_ASSERT_EQUAL(al_cosign_verify_sig(NULL, &s, &o), AL_EVERIFY);
		s.signature = NULL;
		CU_ASSERT_EQUAL(al_cosign_verify_sig(NULL, &s, &o), AL_EVERIFY);
	}
	al_buf_free(&b);
	al_cosign_trust_free(t);
	al_cosign_trust_free(NULL);
}

static int bundle(const char *json)
{
	al_cosign_trust *t = NULL;
	al_cosign_opts o = AL_COSIGN_OPTS_INIT;
	int rc;

	if (al_cosign_trust_new(&t) < 0)
		return -100;
	o.trust = t;
	rc = al_cosign_verify_bundle(NULL, (const uint8_t *)json, strlen(json),
	                             (const uint8_t *)"x", 1, &o);
	al_cosign_trust_free(t);
	return rc;
}

static void test_cosign__bundle_shape_is_checked(void)
{
	CU_ASSERT_EQUAL(bundle("{"), AL_EVERIFY);
	CU_ASSERT_EQUAL(bundle("{\"mediaType\":\"application/"
	                       "vnd.dev.sigstore.bundle.v9+json\"}"),
	                AL_EUNSUPPORTED);
	CU_ASSERT_EQUAL(bundle("{\"mediaType\":\"application/"
	                       "vnd.dev.sigstore.bundle.v0.3+json\"}"),
	                AL_EVERIFY);
	CU_ASSERT_EQUAL(
	    bundle(
	        "{\"mediaType\":\"application/"
	        "vnd.dev.sigstore.bundle.v0.3+json\",\"verificationMaterial\":"
	        "{\"publicKey\":{\"hint\":\"x\"},\"certificate\":{"
	        "\"rawBytes\":\"AA==\"}},\"messageSignature\":{}}"),
	    AL_EVERIFY);
	CU_ASSERT_EQUAL(
	    bundle(
	        "{\"mediaType\":\"application/"
	        "vnd.dev.sigstore.bundle.v0.3+json\",\"verificationMaterial\":"
	        "{\"publicKey\":{\"hint\":\"x\"}}}"),
	    AL_EVERIFY);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "neither"));
	CU_ASSERT_EQUAL(
	    bundle(
	        "{\"mediaType\":\"application/"
	        "vnd.dev.sigstore.bundle.v0.3+json\",\"verificationMaterial\":"
	        "{\"x509CertificateChain\":{\"certificates\":[]}}}"),
	    AL_EVERIFY);
	/* a key-based bundle, and no key trusted */
	CU_ASSERT_EQUAL(
	    bundle(
	        "{\"mediaType\":\"application/"
	        "vnd.dev.sigstore.bundle.v0.3+json\",\"verificationMaterial\":"
	        "{\"publicKey\":{\"hint\":\"x\"},\"tlogEntries\":[]},"
	        "\"messageSignature\":{\"signature\":\"AAAA\"}}"),
	    AL_EINVAL);
	{
		size_t n = AL_COSIGN_MAX_BUNDLE + 1;
		char *big = malloc(n + 1);
		al_cosign_trust *t = NULL;
		al_cosign_opts o = AL_COSIGN_OPTS_INIT;

		CU_ASSERT_PTR_NOT_NULL_FATAL(big);
		memset(big, ' ', n);
		big[n] = '\0';
		CU_ASSERT_EQUAL(al_cosign_trust_new(&t), 0);
		o.trust = t;
		CU_ASSERT_EQUAL(al_cosign_verify_bundle(NULL, (uint8_t *)big, n,
		                                        NULL, 0, &o),
		                AL_ELIMIT);
		al_cosign_trust_free(t);
		free(big);
	}
}

/* --- cluster policy --------------------------------------------------- */

static void test_cosign__identity_matches_like_containers_image(void)
{
	static const struct {
		al_cosign_match m;
		const char *img, *sig, *a1, *a2;
		int want;
	} cases[] = {
	    /* MatchRepoDigestOrExact: digest -> same repository; tag ->
	     * the same tag; a name-only signature never */
	    {AL_COSIGN_MATCH_REPO_DIGEST_OR_EXACT, "quay.io/a/b@" DIGEST_A,
	     "quay.io/a/b:1", NULL, NULL, 1},
	    {AL_COSIGN_MATCH_REPO_DIGEST_OR_EXACT, "quay.io/a/b@" DIGEST_A,
	     "quay.io/a/b", NULL, NULL, 0},
	    {AL_COSIGN_MATCH_REPO_DIGEST_OR_EXACT, "quay.io/a/b@" DIGEST_A,
	     "quay.io/a/c:1", NULL, NULL, 0},
	    {AL_COSIGN_MATCH_REPO_DIGEST_OR_EXACT, "quay.io/a/b:1",
	     "quay.io/a/b:1", NULL, NULL, 1},
	    {AL_COSIGN_MATCH_REPO_DIGEST_OR_EXACT, "quay.io/a/b:1",
	     "quay.io/a/b:2", NULL, NULL, 0},
	    {AL_COSIGN_MATCH_REPO_DIGEST_OR_EXACT, "quay.io/a/b", "quay.io/a/b",
	     NULL, NULL, 0},
	    {AL_COSIGN_MATCH_REPO_DIGEST_OR_EXACT, "busybox:1",
	     "docker.io/library/busybox:1", NULL, NULL, 1},
	    {AL_COSIGN_MATCH_REPOSITORY, "quay.io/a/b@" DIGEST_A, "quay.io/a/b",
	     NULL, NULL, 1},
	    {AL_COSIGN_MATCH_REPOSITORY, "quay.io/a/b:1", "quay.io/a/b:9", NULL,
	     NULL, 1},
	    {AL_COSIGN_MATCH_REPOSITORY, "quay.io/a/b", "quay.io/a/bc", NULL,
	     NULL, 0},
	    {AL_COSIGN_MATCH_EXACT_REPOSITORY, "mirror.local/x/y@" DIGEST_A,
	     "quay.io/a/b", "quay.io/a/b", NULL, 1},
	    {AL_COSIGN_MATCH_EXACT_REPOSITORY, "mirror.local/x/y@" DIGEST_A,
	     "quay.io/a/c", "quay.io/a/b", NULL, 0},
	    /* RemapIdentity: the mirror's name mapped back to the source */
	    {AL_COSIGN_MATCH_REMAP_IDENTITY,
	     "mirror.local:5000/ocp/release@" DIGEST_A,
	     "quay.io/openshift-release-dev/release:4.16",
	     "mirror.local:5000/ocp", "quay.io/openshift-release-dev", 1},
	    {AL_COSIGN_MATCH_REMAP_IDENTITY,
	     "mirror.local:5000/ocpx/release@" DIGEST_A,
	     "quay.io/openshift-release-dev/release:4.16",
	     "mirror.local:5000/ocp", "quay.io/openshift-release-dev", 0},
	    {AL_COSIGN_MATCH_REMAP_IDENTITY,
	     "mirror.local:5000/ocp/release:4.16",
	     "quay.io/openshift-release-dev/release:4.16",
	     "mirror.local:5000/ocp", "quay.io/openshift-release-dev", 1},
	    {AL_COSIGN_MATCH_REMAP_IDENTITY, "other.io/x/release:4.16",
	     "other.io/x/release:4.16", "mirror.local:5000/ocp",
	     "quay.io/openshift-release-dev", 1},
	    {AL_COSIGN_MATCH_REPOSITORY, "quay.io/a/b", "not a reference", NULL,
	     NULL, 0},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int got = al_cosign_identity_matches(cases[i].m, cases[i].img,
		                                     cases[i].sig, cases[i].a1,
		                                     cases[i].a2);
		if (got != cases[i].want)
			printf("case %zu: %s vs %s: %d\n", i, cases[i].img,
			       cases[i].sig, got);
		CU_ASSERT_EQUAL(got, cases[i].want);
	}
}

static char *b64_file(const char *path)
{
	al_buf b;
	char *s;

	if (slurp(&b, path) < 0)
		return NULL;
	s = al_base64_encode(b.ptr, b.len);
	al_buf_free(&b);
	return s;
}

static int load_policy(al_cosign_policy **out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int load_policy(al_cosign_policy **out, const char *fmt, ...)
{
	char text[16384];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(text))
		return -100;
	return al_cosign_policy_load(out, (const uint8_t *)text, (size_t)n,
	                             "test.yaml");
}

#define CIP_HEAD                                                               \
	"apiVersion: config.openshift.io/v1\nkind: ClusterImagePolicy\n"       \
	"metadata:\n  name: %s\nspec:\n"

static void test_cosign__policy_reads_the_cluster_form_strictly(void)
{
	char dir[512], path[600];
	al_cosign_policy *p = NULL;
	char *key = NULL;

	if (!have_openssl()) {
		printf("openssl not found: skipping\n");
		return;
	}
	snprintf(dir, sizeof(dir), "%s/pol", al_test_tmpdir());
	CU_ASSERT_EQUAL_FATAL(al_fs_mkdir_p(dir, 0700), 0);
	CU_ASSERT_EQUAL_FATAL(
	    al_test_sh("cd %s && openssl ecparam -name prime256v1 -genkey "
	               "-noout -out k.key && openssl pkey -in k.key -pubout "
	               "-out k.pub",
	               dir),
	    0);
	snprintf(path, sizeof(path), "%s/k.pub", dir);
	CU_ASSERT_PTR_NOT_NULL_FATAL(key = b64_file(path));
	CU_ASSERT_EQUAL(load_policy(&p,
	                            CIP_HEAD
	                            "  scopes: [quay.io/example]\n"
	                            "  policy:\n    rootOfTrust:\n"
	                            "      policyType: PublicKey\n"
	                            "      publicKey:\n        keyData: %s\n"
	                            "    signedIdentity:\n"
	                            "      matchPolicy: MatchRepository\n"
	                            "---\napiVersion: v1\nkind: ConfigMap\n"
	                            "metadata: {name: x}\n",
	                            "a", key),
	                0);
	CU_ASSERT_EQUAL(al_cosign_policy_count(p), 1);
	al_cosign_policy_free(p);
	p = NULL;
	/* a List of two, v1alpha1 and an ImagePolicy */
	CU_ASSERT_EQUAL(
	    load_policy(&p,
	                "apiVersion: v1\nkind: List\nitems:\n"
	                "- apiVersion: config.openshift.io/v1alpha1\n"
	                "  kind: ClusterImagePolicy\n  metadata: {name: a}\n"
	                "  spec:\n    scopes: [quay.io]\n    policy:\n"
	                "      rootOfTrust: {policyType: PublicKey, "
	                "publicKey: {keyData: %s}}\n"
	                "- apiVersion: config.openshift.io/v1\n"
	                "  kind: ImagePolicy\n  metadata: {name: b, "
	                "namespace: ns}\n"
	                "  spec:\n    scopes: [quay.io]\n    policy:\n"
	                "      rootOfTrust: {policyType: PublicKey, "
	                "publicKey: {keyData: %s}}\n",
	                key, key),
	    0);
	CU_ASSERT_EQUAL(al_cosign_policy_count(p), 2);
	al_cosign_policy_free(p);
	p = NULL;
	/* refusals, each naming what is wrong */
	CU_ASSERT_EQUAL(load_policy(&p,
	                            CIP_HEAD "  scopes: [quay.io]\n"
	                                     "  policy:\n    rootOfTrust:\n"
	                                     "      policyType: PublicKey\n"
	                                     "      publicKey:\n"
	                                     "        keyData: %s\n"
	                                     "        keyPath: /x\n",
	                            "a", key),
	                AL_EPARSE);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "keyPath"));
	CU_ASSERT_EQUAL(load_policy(&p,
	                            CIP_HEAD
	                            "  scopes: [quay.io]\n"
	                            "  policy:\n    rootOfTrust:\n"
	                            "      policyType: FulcioCAWithRekor\n"
	                            "      publicKey:\n        keyData: %s\n",
	                            "a", key),
	                AL_EPARSE);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "policyType"));
	CU_ASSERT_EQUAL(load_policy(&p,
	                            CIP_HEAD
	                            "  scopes: []\n"
	                            "  policy:\n    rootOfTrust:\n"
	                            "      policyType: PublicKey\n"
	                            "      publicKey:\n        keyData: %s\n",
	                            "a", key),
	                AL_EPARSE);
	CU_ASSERT_EQUAL(load_policy(&p,
	                            CIP_HEAD "  scopes: [quay.io]\n"
	                                     "  policy:\n    rootOfTrust:\n"
	                                     "      policyType: PublicKey\n"
	                                     "      publicKey:\n"
	                                     "        keyData: '!!!'\n",
	                            "a"),
	                AL_EPARSE);
	CU_ASSERT_EQUAL(load_policy(&p,
	                            CIP_HEAD "  scopes: [quay.io]\n"
	                                     "  policy:\n    rootOfTrust:\n"
	                                     "      policyType: PublicKey\n"
	                                     "      publicKey:\n"
	                                     "        keyData: %s\n"
	                                     "    signedIdentity:\n"
	                                     "      matchPolicy: "
	                                     "ExactRepository\n",
	                            "a", key),
	                AL_EPARSE);
	CU_ASSERT_EQUAL(
	    load_policy(&p, "apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n"),
	    AL_ENOTFOUND);
	CU_ASSERT_EQUAL(
	    load_policy(&p, "apiVersion: config.openshift.io/v2\nkind: "
	                    "ClusterImagePolicy\nmetadata: {name: a}\n"),
	    AL_EPARSE);
	free(key);
}

/* A policy with scopes and identity around a key, checked against a
 * signature made by openssl over a payload naming ref. */
static void test_cosign__policy_check_scopes_identity_digest(void)
{
	char dir[512], path[600];
	al_cosign_policy *p = NULL;
	al_cosign_verdict v;
	al_cosign_candidate cand;
	al_cosign_sig sig;
	al_buf pl, sg;
	al_digest a, b;
	char *key = NULL, *other = NULL;

	if (!have_openssl()) {
		printf("openssl not found: skipping\n");
		return;
	}
	snprintf(dir, sizeof(dir), "%s/polcheck", al_test_tmpdir());
	CU_ASSERT_EQUAL_FATAL(al_fs_mkdir_p(dir, 0700), 0);
	CU_ASSERT_EQUAL_FATAL(
	    al_test_sh("cd %s && printf '%%s' '" PAYLOAD(
	                   DIGEST_A, "quay.io/example/release",
	                   "null") "' > payload.json",
	               dir),
	    0);
	CU_ASSERT_EQUAL_FATAL(
	    make_key(dir, "k", "ecparam -name prime256v1 -genkey -noout", 0),
	    0);
	CU_ASSERT_EQUAL_FATAL(
	    make_key(dir, "o", "ecparam -name prime256v1 -genkey -noout", 0),
	    0);
	snprintf(path, sizeof(path), "%s/k.pub", dir);
	CU_ASSERT_PTR_NOT_NULL_FATAL(key = b64_file(path));
	snprintf(path, sizeof(path), "%s/o.pub", dir);
	CU_ASSERT_PTR_NOT_NULL_FATAL(other = b64_file(path));
	snprintf(path, sizeof(path), "%s/payload.json", dir);
	CU_ASSERT_EQUAL_FATAL(slurp(&pl, path), 0);
	snprintf(path, sizeof(path), "%s/k.sig", dir);
	CU_ASSERT_EQUAL_FATAL(slurp(&sg, path), 0);
	memset(&sig, 0, sizeof(sig));
	sig.payload = pl.ptr;
	sig.payload_len = pl.len;
	sig.signature = al_buf_cstr(&sg);
	memset(&cand, 0, sizeof(cand));
	cand.sig = &sig;
	CU_ASSERT_EQUAL(al_digest_parse_str(&a, DIGEST_A), 0);
	CU_ASSERT_EQUAL(al_digest_parse_str(&b, DIGEST_B), 0);
	/* quay.io/example (this key, by repository) is more specific than
	 * *.io (another key); quay.io/example/other has its own */
	CU_ASSERT_EQUAL_FATAL(
	    load_policy(&p,
	                CIP_HEAD
	                "  scopes: [quay.io/example]\n  policy:\n"
	                "    rootOfTrust: {policyType: PublicKey, "
	                "publicKey: {keyData: %s}}\n"
	                "    signedIdentity: {matchPolicy: "
	                "MatchRepository}\n---\n" CIP_HEAD
	                "  scopes: ['*.io', quay.io/example/other]\n"
	                "  policy:\n    rootOfTrust: {policyType: PublicKey, "
	                "publicKey: {keyData: %s}}\n",
	                "by-key", key, "other", other),
	    0);
	memset(&v, 0, sizeof(v));
	CU_ASSERT_EQUAL(
	    al_cosign_policy_check(&v, p, "quay.io/example/release@" DIGEST_A,
	                           &a, &cand, 1),
	    0);
	CU_ASSERT_EQUAL(v.covered, 1);
	CU_ASSERT_STRING_EQUAL(v.scope, "quay.io/example");
	CU_ASSERT_STRING_EQUAL(v.policy, "ClusterImagePolicy/by-key");
	al_cosign_verdict_clear(&v);
	/* the signature names image A */
	CU_ASSERT_EQUAL(
	    al_cosign_policy_check(&v, p, "quay.io/example/release@" DIGEST_B,
	                           &b, &cand, 1),
	    AL_EVERIFY);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "digest mismatch"));
	/* another repository under the same scope: identity */
	CU_ASSERT_EQUAL(
	    al_cosign_policy_check(&v, p, "quay.io/example/tools@" DIGEST_A, &a,
	                           &cand, 1),
	    AL_EVERIFY);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "identity"));
	/* the *.io scope wants the other key */
	CU_ASSERT_EQUAL(al_cosign_policy_check(&v, p, "docker.io/x/y@" DIGEST_A,
	                                       &a, &cand, 1),
	                AL_EVERIFY);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "*.io"));
	CU_ASSERT_EQUAL(
	    al_cosign_policy_check(&v, p, "quay.io/example/other@" DIGEST_A, &a,
	                           &cand, 1),
	    AL_EVERIFY);
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(al_error_message(), "quay.io/example/other"));
	/* no scope: not covered */
	CU_ASSERT_EQUAL(al_cosign_policy_check(
	                    &v, p, "mirror.local/x@" DIGEST_A, &a, &cand, 1),
	                0);
	CU_ASSERT_EQUAL(v.covered, 0);
	al_cosign_verdict_clear(&v);
	/* covered and no signature at all */
	CU_ASSERT_EQUAL(
	    al_cosign_policy_check(&v, p, "quay.io/example/release@" DIGEST_A,
	                           &a, NULL, 0),
	    AL_EVERIFY);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "no signature"));
	al_cosign_policy_free(p);
	p = NULL;
	/* the default MatchRepoDigestOrExact refuses cosign's name-only
	 * identity, as containers/image does */
	CU_ASSERT_EQUAL_FATAL(
	    load_policy(&p,
	                CIP_HEAD "  scopes: [quay.io/example]\n  policy:\n"
	                         "    rootOfTrust: {policyType: PublicKey, "
	                         "publicKey: {keyData: %s}}\n",
	                "default", key),
	    0);
	CU_ASSERT_EQUAL(
	    al_cosign_policy_check(&v, p, "quay.io/example/release@" DIGEST_A,
	                           &a, &cand, 1),
	    AL_EVERIFY);
	al_cosign_policy_free(p);
	al_buf_free(&pl);
	al_buf_free(&sg);
	free(key);
	free(other);
}

static void test_cosign__emitted_config_reads_back(void)
{
	static const char *const locs[] = {
	    "mirror.local:5000/ocp", "mirror.local:5000/ocp", "a.example.com"};
	static const char *const bad[] = {"mirror.local/x:tag"};
	static const char pem[] =
	    "-----BEGIN PUBLIC KEY-----\n"
	    "MCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n"
	    "-----END PUBLIC KEY-----\n";
	al_buf out = AL_BUF_INIT(65536);
	al_cosign_policy_spec sp;
	al_cosign_policy *p = NULL;

	CU_ASSERT_EQUAL(al_cosign_emit_registries_d(&out, locs, 3), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_buf_cstr(&out),
	                              "docker:\n  a.example.com:\n    "
	                              "use-sigstore-attachments: true\n  "
	                              "mirror.local:5000/ocp:\n"));
	CU_ASSERT_EQUAL(al_cosign_emit_registries_d(&out, bad, 1), AL_EINVAL);
	CU_ASSERT_EQUAL(al_cosign_emit_registries_d(&out, NULL, 0), AL_EINVAL);
	al_buf_reset(&out);
	memset(&sp, 0, sizeof(sp));
	sp.name = "p";
	sp.scopes = locs;
	sp.nscopes = 1;
	sp.key_pem = (const uint8_t *)pem;
	sp.key_len = strlen(pem);
	sp.match = AL_COSIGN_MATCH_REMAP_IDENTITY;
	CU_ASSERT_EQUAL(al_cosign_emit_policy(&out, &sp), AL_EINVAL);
	sp.arg1 = "mirror.local:5000/ocp";
	sp.arg2 = "quay.io/openshift-release-dev";
	CU_ASSERT_EQUAL(al_cosign_emit_policy(&out, &sp), 0);
	CU_ASSERT_EQUAL(al_cosign_policy_load(&p, out.ptr, out.len, "emitted"),
	                0);
	CU_ASSERT_EQUAL(al_cosign_policy_count(p), 1);
	al_cosign_policy_free(p);
	p = NULL;
	/* keyless: a Fulcio CA and Rekor key need issuer and email */
	al_buf_reset(&out);
	sp.key_pem = NULL;
	sp.fulcio_pem = (const uint8_t *)pem;
	sp.fulcio_len = strlen(pem);
	sp.rekor_pem = (const uint8_t *)pem;
	sp.rekor_len = strlen(pem);
	sp.match = AL_COSIGN_MATCH_REPOSITORY;
	CU_ASSERT_EQUAL(al_cosign_emit_policy(&out, &sp), AL_EINVAL);
	sp.oidc_issuer = "https://issuer.test";
	sp.signed_email = "a@b.test";
	CU_ASSERT_EQUAL(al_cosign_emit_policy(&out, &sp), 0);
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(al_buf_cstr(&out), "policyType: FulcioCAWithRekor"));
	/* the "CA" here is a key, which the loader refuses as a CA */
	CU_ASSERT_EQUAL(al_cosign_policy_load(&p, out.ptr, out.len, "emitted"),
	                AL_EPARSE);
	al_buf_free(&out);
}

/* opts may be NULL (the header says: the defaults): a store with nothing
 * to look up is carried without a lookup and without a crash (the
 * lookups read opts->parallel whatever the number of jobs). */
static void test_cosign__carry_without_opts(void)
{
	char dir[512];
	al_store *st = NULL;
	al_store_opts so = {.create = 1};
	al_cosign_carry_report rep = AL_COSIGN_CARRY_REPORT_INIT;

	snprintf(dir, sizeof(dir), "%s/carry-noopts", al_test_tmpdir());
	CU_ASSERT_EQUAL_FATAL(al_store_open(&st, dir, &so), 0);
	CU_ASSERT_EQUAL(
	    al_cosign_carry(st, NULL, 0, AL_COSIGN_FIND_DEFAULT, NULL, &rep),
	    0);
	CU_ASSERT_EQUAL(rep.images, 0);
	CU_ASSERT_EQUAL(rep.failed, 0);
	al_cosign_carry_report_clear(&rep);
	al_store_free(st);
}

/* Images read through airlock.sources have their attachments looked up
 * where the source points (here an OCI layout, no network); attachment
 * tags are not images. */
static void test_cosign__carry_follows_sources_and_skips_attachments(void)
{
	static const char manifest[] =
	    "{\"schemaVersion\":2,\"mediaType\":\"application/"
	    "vnd.oci.image.manifest.v1+json\",\"config\":{\"mediaType\":"
	    "\"application/vnd.oci.image.config.v1+json\",\"digest\":"
	    "\"sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61"
	    "caaff8a\",\"size\":2},\"layers\":[]}";
	static const char sigman[] =
	    "{\"schemaVersion\":2,\"mediaType\":\"application/"
	    "vnd.oci.image.manifest.v1+json\",\"config\":{\"mediaType\":"
	    "\"application/vnd.oci.image.config.v1+json\",\"digest\":"
	    "\"sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61"
	    "caaff8a\",\"size\":2},\"layers\":[],\"annotations\":{\"x\":"
	    "\"sig\"}}";
	char dir[512], srcdir[512], signame[256], hex[AL_DIGEST_STRMAX];
	al_store *st = NULL, *src = NULL;
	al_store_opts so = {.create = 1};
	al_descriptor d, sd;
	al_store_image img;
	char loc[600];
	al_imageset_source source = {(char *)"quay.io/example", loc};
	al_transfer_opts to;
	al_cosign_carry_report rep = AL_COSIGN_CARRY_REPORT_INIT;

	snprintf(dir, sizeof(dir), "%s/carry-store", al_test_tmpdir());
	snprintf(srcdir, sizeof(srcdir), "%s/carry-src", al_test_tmpdir());
	snprintf(loc, sizeof(loc), "oci:%s", srcdir);
	CU_ASSERT_EQUAL_FATAL(al_store_open(&st, dir, &so), 0);
	CU_ASSERT_EQUAL_FATAL(al_store_open(&src, srcdir, &so), 0);
	memset(&d, 0, sizeof(d));
	memset(&sd, 0, sizeof(sd));
	d.media_type = sd.media_type =
	    (char *)"application/vnd.oci.image.manifest.v1+json";
	d.size = strlen(manifest);
	sd.size = strlen(sigman);
	CU_ASSERT_EQUAL(al_store_put_blob(st, (const uint8_t *)"{}", 2, NULL),
	                0);
	CU_ASSERT_EQUAL(al_store_put_blob(st, (const uint8_t *)manifest,
	                                  strlen(manifest), &d.digest),
	                0);
	CU_ASSERT_EQUAL(al_store_put_blob(src, (const uint8_t *)"{}", 2, NULL),
	                0);
	CU_ASSERT_EQUAL(al_store_put_blob(src, (const uint8_t *)manifest,
	                                  strlen(manifest), NULL),
	                0);
	CU_ASSERT_EQUAL(al_store_put_blob(src, (const uint8_t *)sigman,
	                                  strlen(sigman), &sd.digest),
	                0);
	snprintf(signame, sizeof(signame), "quay.io/example/app:sha256-%s.sig",
	         al_digest_hex(&d.digest, hex));
	CU_ASSERT_EQUAL(al_store_tag(st, "quay.io/example/app:v1", &d), 0);
	CU_ASSERT_EQUAL(al_store_tag(src, "quay.io/example/app:v1", &d), 0);
	CU_ASSERT_EQUAL(al_store_tag(src, signame, &sd), 0);
	/* an attachment tag in the destination is not an image to sign */
	CU_ASSERT_EQUAL(
	    al_store_tag(st,
	                 "quay.io/example/app:sha256-"
	                 "0000000000000000000000000000000000000000000000000000"
	                 "000000000000.sig",
	                 &d),
	    0);
	al_store_free(src);
	to = (al_transfer_opts)AL_TRANSFER_OPTS_INIT;
	to.sources = &source;
	to.nsources = 1;
	memset(&rep, 0, sizeof(rep));
	CU_ASSERT_EQUAL(
	    al_cosign_carry(st, NULL, 0, AL_COSIGN_FIND_DEFAULT, &to, &rep), 0);
	if (rep.first_error != NULL)
		printf("%s\n", rep.first_error);
	CU_ASSERT_EQUAL(rep.images, 1);
	CU_ASSERT_EQUAL(rep.remapped, 1);
	CU_ASSERT_EQUAL(rep.artifacts, 1);
	CU_ASSERT_EQUAL(rep.failed, 0);
	memset(&img, 0, sizeof(img));
	CU_ASSERT_EQUAL(al_store_find(st, signame, &img), 0);
	CU_ASSERT(al_digest_equal(&img.desc.digest, &sd.digest));
	al_store_image_clear(&img);
	al_cosign_carry_report_clear(&rep);
	al_store_free(st);
}

/* A source layout holding quay.io/example/app:v1 and its ".sig"; *img and
 * *sig get their digests. */
static int make_signed_layout(const char *dir, al_digest *img, al_digest *sig)
{
	static const char manifest[] =
	    "{\"schemaVersion\":2,\"mediaType\":\"application/"
	    "vnd.oci.image.manifest.v1+json\",\"config\":{\"mediaType\":"
	    "\"application/vnd.oci.image.config.v1+json\",\"digest\":"
	    "\"sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61"
	    "caaff8a\",\"size\":2},\"layers\":[]}";
	static const char sigman[] =
	    "{\"schemaVersion\":2,\"mediaType\":\"application/"
	    "vnd.oci.image.manifest.v1+json\",\"config\":{\"mediaType\":"
	    "\"application/vnd.oci.image.config.v1+json\",\"digest\":"
	    "\"sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61"
	    "caaff8a\",\"size\":2},\"layers\":[],\"annotations\":{\"x\":"
	    "\"sig\"}}";
	al_store_opts so = {.create = 1};
	al_store *src = NULL;
	al_descriptor d, sd;
	char name[256], hex[AL_DIGEST_STRMAX];
	int rc;

	memset(&d, 0, sizeof(d));
	memset(&sd, 0, sizeof(sd));
	d.media_type = sd.media_type =
	    (char *)"application/vnd.oci.image.manifest.v1+json";
	d.size = strlen(manifest);
	sd.size = strlen(sigman);
	if ((rc = al_store_open(&src, dir, &so)) < 0)
		return rc;
	if ((rc = al_store_put_blob(src, (const uint8_t *)"{}", 2, NULL)) ==
	        0 &&
	    (rc = al_store_put_blob(src, (const uint8_t *)manifest,
	                            strlen(manifest), &d.digest)) == 0 &&
	    (rc = al_store_put_blob(src, (const uint8_t *)sigman,
	                            strlen(sigman), &sd.digest)) == 0 &&
	    (rc = al_store_tag(src, "quay.io/example/app:v1", &d)) == 0) {
		snprintf(name, sizeof(name),
		         "quay.io/example/app:sha256-%s.sig",
		         al_digest_hex(&d.digest, hex));
		rc = al_store_tag(src, name, &sd);
	}
	*img = d.digest;
	*sig = sd.digest;
	al_store_free(src);
	return rc;
}

/* al_mirror_run carries the signatures of the images it mirrored, by
 * default: here from an OCI layout through airlock.sources (no network);
 * an image of an earlier run is not looked up (its registry does not
 * exist); AL_MIRROR_NO_SIGSTORE turns it off; a policy with it off is a
 * refusal; version 1 options never read the version 2 fields. */
static void test_cosign__mirror_run_carries_by_default(void)
{
	static const char *const images[] = {"quay.io/example/app:v1"};
	char dir[512], dir2[512], srcdir[512], cfgpath[512];
	char signame[256], hex[AL_DIGEST_STRMAX];
	al_store *st = NULL, *st2 = NULL;
	al_store_opts so = {.create = 1};
	al_imageset *cfg = NULL;
	al_mirror_opts mo = AL_MIRROR_OPTS_INIT;
	al_mirror_result res = AL_MIRROR_RESULT_INIT;
	al_store_image img;
	al_digest id, sd;
	al_descriptor other;
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/mr-store", al_test_tmpdir());
	snprintf(dir2, sizeof(dir2), "%s/mr-store2", al_test_tmpdir());
	snprintf(srcdir, sizeof(srcdir), "%s/mr-src", al_test_tmpdir());
	snprintf(cfgpath, sizeof(cfgpath), "%s/mr.yaml", al_test_tmpdir());
	CU_ASSERT_EQUAL_FATAL(make_signed_layout(srcdir, &id, &sd), 0);
	f = fopen(cfgpath, "w");
	CU_ASSERT_FATAL(f != NULL);
	fprintf(f,
	        "kind: ImageSetConfiguration\n"
	        "apiVersion: mirror.openshift.io/v2alpha1\n"
	        "airlock:\n  sources:\n  - prefix: quay.io/example\n"
	        "    location: \"oci:%s\"\n",
	        srcdir);
	fclose(f);
	CU_ASSERT_EQUAL_FATAL(al_imageset_load(&cfg, cfgpath), 0);
	CU_ASSERT_EQUAL_FATAL(al_store_open(&st, dir, &so), 0);
	/* an image of an earlier run, at a registry that does not resolve */
	memset(&other, 0, sizeof(other));
	other.media_type = (char *)"application/vnd.oci.image.manifest.v1+json";
	other.size = 2;
	CU_ASSERT_EQUAL(
	    al_store_put_blob(st, (const uint8_t *)"{}", 2, &other.digest), 0);
	CU_ASSERT_EQUAL(al_store_tag(st, "nowhere.invalid/x:v1", &other), 0);
	mo.images = images;
	mo.nimages = 1;
	/* no keyring: al_mirror_signed wants one even for images alone */
	mo.flags = AL_MIRROR_ALLOW_UNSIGNED;
	CU_ASSERT_EQUAL(al_mirror_run(st, cfg, &mo, &res), 0);
	if (res.report.nerrors > 0)
		printf("%s\n", res.report.errors[0]);
	CU_ASSERT_EQUAL(res.sigstore.ran, 1);
	CU_ASSERT_EQUAL(res.sigstore.images, 1);
	CU_ASSERT_EQUAL(res.sigstore.artifacts, 1);
	CU_ASSERT_EQUAL(res.sigstore.unsigned_images, 0);
	CU_ASSERT_EQUAL(res.sigstore.failed, 0);
	snprintf(signame, sizeof(signame), "quay.io/example/app:sha256-%s.sig",
	         al_digest_hex(&id, hex));
	memset(&img, 0, sizeof(img));
	CU_ASSERT_EQUAL(al_store_find(st, signame, &img), 0);
	CU_ASSERT(al_digest_equal(&img.desc.digest, &sd));
	al_store_image_clear(&img);
	al_mirror_result_clear(&res);

	/* off */
	CU_ASSERT_EQUAL_FATAL(al_store_open(&st2, dir2, &so), 0);
	mo.flags = AL_MIRROR_ALLOW_UNSIGNED | AL_MIRROR_NO_SIGSTORE;
	CU_ASSERT_EQUAL(al_mirror_run(st2, cfg, &mo, &res), 0);
	CU_ASSERT_EQUAL(res.sigstore.ran, 0);
	CU_ASSERT_EQUAL(al_store_find(st2, signame, &img), AL_ENOTFOUND);
	al_store_image_clear(&img);
	al_error_clear();
	al_mirror_result_clear(&res);
	mo.sigstore_policy = "/nonexistent/policy.yaml";
	CU_ASSERT_EQUAL(al_mirror_run(st2, cfg, &mo, &res), AL_EINVAL);
	CU_ASSERT_EQUAL(res.refused, 1);
	al_mirror_result_clear(&res);
	/* on, with a policy that does not load: refused before anything */
	mo.flags = AL_MIRROR_ALLOW_UNSIGNED;
	CU_ASSERT(al_mirror_run(st2, cfg, &mo, &res) < 0);
	CU_ASSERT_EQUAL(res.refused, 1);
	CU_ASSERT_EQUAL(res.ran, 0);
	al_mirror_result_clear(&res);
	/* a version 1 caller: sigstore_policy is not read, carrying is on */
	mo.version = 1;
	CU_ASSERT_EQUAL(al_mirror_run(st2, cfg, &mo, &res), 0);
	CU_ASSERT_EQUAL(res.sigstore.artifacts, 1);
	CU_ASSERT_EQUAL(res.sigstore.policy_checked, 0);
	al_mirror_result_clear(&res);
	al_error_clear();
	al_imageset_free(cfg);
	al_store_free(st);
	al_store_free(st2);
}

/* A FulcioCAWithRekor policy accepts the real cosign keyless signature of
 * containers/image's fixtures, and refuses it for another email. */
static void test_cosign__policy_fulcio_with_real_cosign_signature(void)
{
	const char *src = al_test_source_dir();
	char path[1024], *ca = NULL, *rk = NULL, *yaml = NULL;
	al_buf raw, man;
	json_t *j = NULL;
	al_buf payload = AL_BUF_INIT(65536);
	al_cosign_sig sig;
	al_cosign_candidate cand;
	al_cosign_policy *p = NULL;
	al_cosign_verdict v;
	al_digest d;
	char ds[AL_DIGEST_STRMAX], ref[512];
	const json_t *ann;
	int pass;

	snprintf(path, sizeof(path),
	         "%s/tests/fixtures/containers-image-cosign/fulcio_v1.crt.pem",
	         src);
	ca = b64_file(path);
	snprintf(path, sizeof(path),
	         "%s/tests/fixtures/containers-image-cosign/rekor.pub", src);
	rk = b64_file(path);
	snprintf(path, sizeof(path),
	         "%s/tests/fixtures/containers-image-cosign/"
	         "dir-img-cosign-fulcio-rekor-valid/signature-1",
	         src);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ca);
	CU_ASSERT_PTR_NOT_NULL_FATAL(rk);
	CU_ASSERT_EQUAL_FATAL(slurp(&raw, path), 0);
	snprintf(path, sizeof(path),
	         "%s/tests/fixtures/containers-image-cosign/"
	         "dir-img-cosign-fulcio-rekor-valid/manifest.json",
	         src);
	CU_ASSERT_EQUAL_FATAL(slurp(&man, path), 0);
	CU_ASSERT_EQUAL(al_digest_bytes(&d, AL_DIGEST_SHA256, man.ptr, man.len),
	                0);
	/* "\0sigstore-json\n" + {"mimeType","payload","annotations"} */
	CU_ASSERT_FATAL(raw.len > 15 &&
	                memcmp(raw.ptr, "\0sigstore-json\n", 15) == 0);
	CU_ASSERT_EQUAL_FATAL(
	    al_json_parse(&j, raw.ptr + 15, raw.len - 15, "signature-1"), 0);
	CU_ASSERT_EQUAL(al_base64_decode(&payload, al_json_str(j, "payload"),
	                                 strlen(al_json_str(j, "payload"))),
	                0);
	ann = json_object_get(j, "annotations");
	memset(&sig, 0, sizeof(sig));
	sig.payload = payload.ptr;
	sig.payload_len = payload.len;
	sig.signature = al_json_str(ann, AL_COSIGN_ANN_SIGNATURE);
	sig.certificate = al_json_str(ann, AL_COSIGN_ANN_CERTIFICATE);
	sig.chain = al_json_str(ann, AL_COSIGN_ANN_CHAIN);
	sig.bundle = al_json_str(ann, AL_COSIGN_ANN_BUNDLE);
	memset(&cand, 0, sizeof(cand));
	cand.sig = &sig;
	snprintf(ref, sizeof(ref),
	         "192.168.64.2:5000/cosign-signed/"
	         "fulcio-rekor-1@%s",
	         al_digest_str(&d, ds));
	for (pass = 0; pass < 2; pass++) {
		yaml = al_sprintf(
		    "apiVersion: config.openshift.io/v1\n"
		    "kind: ClusterImagePolicy\nmetadata: {name: fulcio}\n"
		    "spec:\n  scopes: [192.168.64.2:5000/cosign-signed]\n"
		    "  policy:\n    rootOfTrust:\n"
		    "      policyType: FulcioCAWithRekor\n"
		    "      fulcioCAWithRekor:\n        fulcioCAData: %s\n"
		    "        rekorKeyData: %s\n        fulcioSubject:\n"
		    "          oidcIssuer: https://github.com/login/oauth\n"
		    "          signedEmail: %s\n"
		    "    signedIdentity: {matchPolicy: MatchRepository}\n",
		    ca, rk, pass == 0 ? "mitr@redhat.com" : "x@example.com");
		CU_ASSERT_PTR_NOT_NULL_FATAL(yaml);
		CU_ASSERT_EQUAL(al_cosign_policy_load(&p, (uint8_t *)yaml,
		                                      strlen(yaml),
		                                      "fulcio.yaml"),
		                0);
		memset(&v, 0, sizeof(v));
		if (pass == 0) {
			int rc =
			    al_cosign_policy_check(&v, p, ref, &d, &cand, 1);

			if (rc != 0)
				printf("%s\n", al_error_message());
			CU_ASSERT_EQUAL(rc, 0);
			CU_ASSERT_EQUAL(v.covered, 1);
			CU_ASSERT_EQUAL(v.info.keyless, 1);
			CU_ASSERT(v.info.subject != NULL &&
			          strcmp(v.info.subject, "mitr@redhat.com") ==
			              0);
		} else {
			CU_ASSERT_EQUAL(
			    al_cosign_policy_check(&v, p, ref, &d, &cand, 1),
			    AL_EVERIFY);
			CU_ASSERT_PTR_NOT_NULL(
			    strstr(al_error_message(), "identity mismatch"));
		}
		al_cosign_verdict_clear(&v);
		al_cosign_policy_free(p);
		p = NULL;
		free(yaml);
	}
	json_decref(j);
	al_buf_free(&payload);
	al_buf_free(&raw);
	al_buf_free(&man);
	free(ca);
	free(rk);
}

/* --- agreement with @sigstore/verify ---------------------------------- */

static int add_files(al_cosign_trust *t, const char *dir, const json_t *arr,
                     int (*fn)(al_cosign_trust *, const char *))
{
	char path[1024];
	size_t i;
	json_t *v;
	int rc;

	json_array_foreach(arr, i, v)
	{
		snprintf(path, sizeof(path), "%s/%s", dir,
		         json_string_value(v));
		if ((rc = fn(t, path)) < 0)
			return rc;
	}
	return 0;
}

static char *file_text(const char *dir, const char *name)
{
	char path[1024];
	al_buf b;

	if (name == NULL)
		return NULL;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (slurp(&b, path) < 0)
		return NULL;
	return al_buf_detach(&b, NULL);
}

/* Run one case; 0 when airlock and the peer (or the case's expectation)
 * agree. */
static int run_case(const char *dir, const json_t *c, const al_digest *img,
                    const char *ref)
{
	const char *name = al_json_str(c, "name");
	const char *peer = al_json_str(c, "peer");
	const char *expect = al_json_str(c, "expect");
	const json_t *sig = json_object_get(c, "sig");
	al_cosign_trust *t = NULL;
	al_cosign_info info;
	al_cosign_opts o = AL_COSIGN_OPTS_INIT;
	char *files[5] = {NULL, NULL, NULL, NULL, NULL};
	size_t i, alen = 0;
	al_digest own;
	int rc, want_ok, got_ok, image_rc = 0;

	memset(&info, 0, sizeof(info));
	want_ok = expect != NULL ? strcmp(expect, "ok") == 0
	                         : (peer != NULL && strcmp(peer, "ok") == 0);
	if ((rc = al_cosign_trust_new(&t)) < 0 ||
	    (rc = add_files(t, dir, json_object_get(c, "keys"),
	                    al_cosign_trust_add_keys_file)) < 0 ||
	    (rc = add_files(t, dir, json_object_get(c, "fulcio"),
	                    al_cosign_trust_add_fulcio_file)) < 0 ||
	    (rc = add_files(t, dir, json_object_get(c, "rekor"),
	                    al_cosign_trust_add_rekor_file)) < 0 ||
	    (rc = add_files(t, dir, json_object_get(c, "tsa"),
	                    al_cosign_trust_add_tsa_file)) < 0 ||
	    (rc = al_cosign_trust_set_identity(
	         t, al_json_str(c, "issuer"), al_json_str(c, "subject"))) < 0 ||
	    (al_json_str(c, "pki_email") != NULL &&
	     (rc = al_cosign_trust_set_pki(t, al_json_str(c, "pki_email"),
	                                   NULL)) < 0)) {
		printf("FAIL %s: trust: %s\n", name, al_error_message());
		al_cosign_trust_free(t);
		return 1;
	}
	o.trust = t;
	o.require_tlog = json_is_true(json_object_get(c, "require_tlog"));
	if (sig != NULL) {
		al_cosign_sig s;

		memset(&s, 0, sizeof(s));
		files[0] = file_text(dir, al_json_str(sig, "payload"));
		files[1] = file_text(dir, al_json_str(sig, "signature"));
		files[2] = file_text(dir, al_json_str(sig, "certificate"));
		files[3] = file_text(dir, al_json_str(sig, "chain"));
		files[4] = file_text(dir, al_json_str(sig, "bundle"));
		s.payload = (const uint8_t *)files[0];
		s.payload_len = files[0] != NULL ? strlen(files[0]) : 0;
		s.signature = files[1];
		s.certificate = files[2];
		s.chain = files[3];
		s.bundle = files[4];
		rc = al_cosign_verify_sig(&info, &s, &o);
	} else {
		files[0] = file_text(dir, al_json_str(c, "bundle"));
		files[1] = file_text(dir, al_json_str(c, "artifact"));
		if (files[1] != NULL)
			alen = strlen(files[1]);
		rc = al_cosign_verify_bundle(
		    &info, (const uint8_t *)files[0],
		    files[0] != NULL ? strlen(files[0]) : 0,
		    (const uint8_t *)files[1], alen, &o);
	}
	got_ok = rc == 0;
	/* a refusal must be for the reason the case is about, not an
	 * earlier parse error that hides it */
	if (!got_ok && al_json_str(c, "reason") != NULL &&
	    strstr(al_error_message(), al_json_str(c, "reason")) == NULL)
		image_rc = -2;
	/* a case may name its own image (fixtures made elsewhere) */
	if (al_json_str(c, "digest") != NULL &&
	    al_digest_parse_str(&own, al_json_str(c, "digest")) == 0)
		img = &own;
	if (al_json_str(c, "reference") != NULL)
		ref = al_json_str(c, "reference");
	if (got_ok && al_json_str(c, "expect_image") != NULL &&
	    strcmp(al_json_str(c, "expect_image"), "fail") == 0) {
		/* a good signature shown with another image's manifest */
		image_rc =
		    al_cosign_check_image(&info, img, ref,
		                          AL_SIG_IDENTITY_EXACT) == AL_EVERIFY
		        ? 0
		        : -1;
	} else if (got_ok) {
		/* what it vouches for is this image, and not another */
		al_digest other;

		image_rc = al_cosign_check_image(&info, img, ref,
		                                 AL_SIG_IDENTITY_EXACT);
		memset(&other, 0, sizeof(other));
		other = *img;
		other.bytes[0] ^= 1;
		if (image_rc == 0 &&
		    al_cosign_check_image(&info, &other, ref,
		                          AL_SIG_IDENTITY_EXACT) != AL_EVERIFY)
			image_rc = -1;
	}
	printf("%s %s: airlock %s%s%s, peer %s%s%s\n",
	       got_ok == want_ok && image_rc == 0 ? "ok  " : "FAIL", name,
	       got_ok ? "ok" : "refused: ", got_ok ? "" : al_error_message(),
	       image_rc == -2  ? " (not the expected reason)"
	       : image_rc != 0 ? " (image check failed)"
	                       : "",
	       peer != NULL ? peer : "(not asked)",
	       al_json_str(c, "peer_note") != NULL ? "; expected: " : "",
	       al_json_str(c, "peer_note") != NULL ? al_json_str(c, "peer_note")
	                                           : "");
	al_cosign_info_clear(&info);
	for (i = 0; i < 5; i++)
		free(files[i]);
	al_cosign_trust_free(t);
	return got_ok == want_ok && image_rc == 0 ? 0 : 1;
}

/* The trusted root kept in a store: put, get back byte for byte with its
 * digest, replaced by a later put, never replaced by a file that is not a
 * trusted root, refused once its text no longer matches its digest. */
static void test_cosign__store_keeps_the_trusted_root(void)
{
	char dir[512], path[1024];
	al_store *st = NULL, *ro = NULL;
	al_store_opts so = {.create = 1}, rso = {.readonly = 1};
	al_buf root = AL_BUF_INIT(AL_COSIGN_MAX_PEM);
	al_buf got = AL_BUF_INIT(AL_COSIGN_MAX_PEM);
	al_buf rel = AL_BUF_INIT(AL_MIB);
	al_cosign_trust *t = NULL;
	al_hasher *h = NULL;
	al_digest want, d;
	char *edited;

	snprintf(dir, sizeof(dir), "%s/keep-store", al_test_tmpdir());
	snprintf(path, sizeof(path),
	         "%s/tests/fixtures/sigstore-conformance/"
	         "trusted-root-public-good.json",
	         al_test_source_dir());
	CU_ASSERT_EQUAL_FATAL(al_fs_read_file(path, &root), 0);
	CU_ASSERT_EQUAL_FATAL(al_store_open(&st, dir, &so), 0);
	CU_ASSERT_EQUAL(al_cosign_store_root_get(st, &got, &d), AL_ENOTFOUND);
	CU_ASSERT_EQUAL(al_cosign_trust_new(&t), 0);
	CU_ASSERT_EQUAL(al_cosign_trust_add_store_root(t, st), AL_ENOTFOUND);

	CU_ASSERT_EQUAL(
	    al_cosign_store_root_put(st, root.ptr, root.len, "public-good"), 0);
	CU_ASSERT_EQUAL(al_cosign_store_root_get(st, &got, &d), 0);
	CU_ASSERT_EQUAL(got.len, root.len);
	CU_ASSERT(got.len == root.len &&
	          memcmp(got.ptr, root.ptr, root.len) == 0);
	CU_ASSERT_EQUAL(al_hasher_new(&h, AL_DIGEST_SHA256), 0);
	CU_ASSERT_EQUAL(al_hasher_update(h, root.ptr, root.len), 0);
	CU_ASSERT_EQUAL(al_hasher_final(h, &want), 0);
	al_hasher_free(h);
	CU_ASSERT(al_digest_equal(&d, &want));
	CU_ASSERT_EQUAL(al_cosign_trust_add_store_root(t, st), 0);

	/* not a trusted root: refused, the kept one stays */
	CU_ASSERT_EQUAL(al_cosign_store_root_put(
	                    st, (const uint8_t *)"{\"tlogs\": 1}", 12, "bad"),
	                AL_EPARSE);
	CU_ASSERT_EQUAL(
	    al_cosign_store_root_put(st, (const uint8_t *)"{}\0{}", 5, "nul"),
	    AL_EPARSE);
	CU_ASSERT_EQUAL(al_cosign_store_root_get(st, &got, &d), 0);
	CU_ASSERT(al_digest_equal(&d, &want));

	/* a later put replaces it: one record */
	CU_ASSERT_EQUAL(al_buf_append(&root, "\n", 1), 0);
	CU_ASSERT_EQUAL(
	    al_cosign_store_root_put(st, root.ptr, root.len, "public-good"), 0);
	CU_ASSERT_EQUAL(al_cosign_store_root_get(st, &got, &d), 0);
	CU_ASSERT_EQUAL(got.len, root.len);
	CU_ASSERT(!al_digest_equal(&d, &want));

	/* a read-only store keeps nothing */
	CU_ASSERT_EQUAL(al_store_open(&ro, dir, &rso), 0);
	CU_ASSERT_EQUAL(
	    al_cosign_store_root_put(ro, root.ptr, root.len, "public-good"),
	    AL_EINVAL);
	al_store_free(ro);
	al_store_free(st);
	st = NULL;

	/* the text edited behind the digest's back is refused */
	snprintf(path, sizeof(path), "%s/airlock/releases.json", dir);
	CU_ASSERT_EQUAL_FATAL(al_fs_read_file(path, &rel), 0);
	CU_ASSERT_EQUAL_FATAL(al_buf_append(&rel, "", 1), 0);
	CU_ASSERT_EQUAL(strstr((char *)rel.ptr, "\"trusted-root\"") != NULL, 1);
	edited = strstr((char *)rel.ptr, "rekor.sigstore.dev");
	CU_ASSERT_PTR_NOT_NULL_FATAL(edited);
	edited[0] = 'R';
	CU_ASSERT_EQUAL(al_fs_write_atomic(path, rel.ptr, rel.len - 1), 0);
	CU_ASSERT_EQUAL_FATAL(al_store_open(&st, dir, &so), 0);
	CU_ASSERT_EQUAL(al_cosign_store_root_get(st, &got, &d), AL_EVERIFY);
	al_store_free(st);
	al_cosign_trust_free(t);
	al_buf_free(&root);
	al_buf_free(&got);
	al_buf_free(&rel);
}

static int run_cases(const char *dir, const char *digest, const char *ref)
{
	char path[1024];
	json_t *cases = NULL, *c;
	al_digest img;
	size_t i;
	int failed = 0;

	snprintf(path, sizeof(path), "%s/cases.json", dir);
	if (al_json_load_file(&cases, path, 4 * 1024 * 1024) < 0 ||
	    al_digest_parse_str(&img, digest) < 0) {
		printf("FAIL cannot read %s: %s\n", path, al_error_message());
		return 1;
	}
	json_array_foreach(cases, i, c) failed += run_case(dir, c, &img, ref);
	printf("%zu cases, %d disagreements\n", json_array_size(cases), failed);
	json_decref(cases);
	return failed;
}

int main(int argc, char **argv)
{
	CU_TestInfo tests[] = {
	    {"payload_parses_cosign_output",
	     test_cosign__payload_parses_cosign_output},
	    {"payload_is_strict", test_cosign__payload_is_strict},
	    {"payload_size_is_bounded", test_cosign__payload_size_is_bounded},
	    {"merkle_paths_from_the_rfc_definition",
	     test_cosign__merkle_paths_from_the_rfc_definition},
	    {"key_based_signatures_by_openssl",
	     test_cosign__key_based_signatures_by_openssl},
	    {"trust_refuses_weak_or_wrong_keys",
	     test_cosign__trust_refuses_weak_or_wrong_keys},
	    {"bundle_shape_is_checked", test_cosign__bundle_shape_is_checked},
	    {"identity_matches_like_containers_image",
	     test_cosign__identity_matches_like_containers_image},
	    {"policy_reads_the_cluster_form_strictly",
	     test_cosign__policy_reads_the_cluster_form_strictly},
	    {"policy_check_scopes_identity_digest",
	     test_cosign__policy_check_scopes_identity_digest},
	    {"emitted_config_reads_back",
	     test_cosign__emitted_config_reads_back},
	    {"carry_follows_sources_and_skips_attachments",
	     test_cosign__carry_follows_sources_and_skips_attachments},
	    {"carry_without_opts", test_cosign__carry_without_opts},
	    {"policy_fulcio_with_real_cosign_signature",
	     test_cosign__policy_fulcio_with_real_cosign_signature},
	    {"mirror_run_carries_by_default",
	     test_cosign__mirror_run_carries_by_default},
	    {"store_keeps_the_trusted_root",
	     test_cosign__store_keeps_the_trusted_root},
	    CU_TEST_INFO_NULL,
	};

	/* test_cosign --cases DIR DIGEST REFERENCE: the agreement run of
	 * tests/integration/test_cosign_peer.sh */
	if (argc == 5 && strcmp(argv[1], "--cases") == 0)
		return run_cases(argv[2], argv[3], argv[4]) != 0;
	return al_test_run("cosign", tests);
}
