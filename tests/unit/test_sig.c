/* test_sig.c: simple-signing payload checks and signature verification against
 * keys and signatures gpg makes at test time. */
#define _GNU_SOURCE /* memmem */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <unistd.h>

#include <jansson.h>

#include "al_test.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/sig.h"

#define GPG                                                                    \
	"gpg --batch --no-tty --quiet --pinentry-mode loopback --passphrase "  \
	"''"

#define DIGEST_A                                                               \
	"sha256:"                                                              \
	"6d8c2c3a0f0d5bd8c3f1b8cbd0e7f6c2a1b9d0e4f3a2b1c0d9e8f7a6b5c4d3e2"
#define DIGEST_B                                                               \
	"sha256:"                                                              \
	"1111111111111111111111111111111111111111111111111111111111111111"
#define REF_A "quay.io/example/release:4.14.1-x86_64"

typedef struct blob {
	uint8_t *p;
	size_t n;
} blob;

static struct fixtures {
	int ready; /* 0 not tried, 1 ok, -1 failed or gpg missing */
	char dir[600];
	char home[700];
	char fpr_rsa[41], fpr_ed[41];
	al_pgp_keyring *kr; /* RSA (binary) + Ed25519 (armored) */
	al_pgp_keyring *kr_other;
	unsigned seq;
} fx;

static int slurp(blob *out, const char *path)
{
	al_buf b = AL_BUF_INIT(16 * 1024 * 1024);
	FILE *f = fopen(path, "rb");
	uint8_t chunk[4096];
	size_t got;

	if (f == NULL)
		return -1;
	while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		if (al_buf_append(&b, chunk, got) != 0) {
			fclose(f);
			al_buf_free(&b);
			return -1;
		}
	}
	fclose(f);
	out->p = (uint8_t *)al_buf_detach(&b, &out->n);
	return out->p != NULL ? 0 : -1;
}

static int spit(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	if (f == NULL)
		return -1;
	if (fwrite(p, 1, n, f) != n) {
		fclose(f);
		return -1;
	}
	return fclose(f) == 0 ? 0 : -1;
}

static int read_fpr(char out[41], const char *uid)
{
	char path[800];
	blob b = {NULL, 0};
	int ok;

	snprintf(path, sizeof(path), "%s/fpr.txt", fx.dir);
	if (al_test_sh("GNUPGHOME=%s " GPG
	               " --with-colons --list-keys '%s' | awk -F: "
	               "'/^fpr/{print $10; exit}' > %s",
	               fx.home, uid, path) != 0 ||
	    slurp(&b, path) != 0)
		return -1;
	ok = b.n >= 40;
	if (ok) {
		memcpy(out, b.p, 40);
		out[40] = '\0';
	}
	free(b.p);
	return ok ? 0 : -1;
}

static int load_keyring(al_pgp_keyring **kr, const char *name)
{
	char path[800];
	blob b = {NULL, 0};
	int rc;

	snprintf(path, sizeof(path), "%s/%s", fx.dir, name);
	if (slurp(&b, path) != 0)
		return -1;
	rc = *kr == NULL ? al_pgp_keyring_load(kr, b.p, b.n, path)
	                 : al_pgp_keyring_add(*kr, b.p, b.n, path);
	free(b.p);
	return rc;
}

static void stop_agent(void)
{
	if (fx.home[0] != '\0')
		al_test_sh("GNUPGHOME=%s gpgconf --kill all >/dev/null 2>&1",
		           fx.home);
	al_pgp_keyring_free(fx.kr);
	al_pgp_keyring_free(fx.kr_other);
}

#define G(...) al_test_sh("cd %s && GNUPGHOME=%s " GPG " " __VA_ARGS__)

static int make_fixtures(void)
{
	const char *d, *h;

	if (system("command -v gpg >/dev/null 2>&1") != 0) {
		al_test_skip("gpg not found: the signature tests");
		return -1;
	}
	snprintf(fx.dir, sizeof(fx.dir), "%s", al_test_tmpdir());
	snprintf(fx.home, sizeof(fx.home), "%s/gnupg", fx.dir);
	if (mkdir(fx.home, 0700) != 0)
		return -1;
	atexit(stop_agent);
	d = fx.dir;
	h = fx.home;
	if (G("--quick-gen-key 'Sig RSA <rsa@example.test>' rsa2048 sign never",
	      d, h) ||
	    G("--quick-gen-key 'Sig Ed <ed@example.test>' ed25519 sign never",
	      d, h) ||
	    G("--quick-gen-key 'Other <other@example.test>' ed25519 sign never",
	      d, h) ||
	    G("--export rsa@example.test > kr_rsa", d, h) ||
	    G("--export --armor ed@example.test > kr_ed.asc", d, h) ||
	    G("--export other@example.test > kr_other", d, h))
		return -1;
	if (read_fpr(fx.fpr_rsa, "rsa@example.test") ||
	    read_fpr(fx.fpr_ed, "ed@example.test"))
		return -1;
	if (load_keyring(&fx.kr, "kr_rsa") ||
	    load_keyring(&fx.kr, "kr_ed.asc") ||
	    load_keyring(&fx.kr_other, "kr_other")) {
		fprintf(stderr, "keyring: %s\n", al_error_message());
		return -1;
	}
	return 0;
}

static int have_fixtures(void)
{
	if (fx.ready == 0)
		fx.ready = make_fixtures() == 0 ? 1 : -1;
	if (fx.ready < 0 && system("command -v gpg >/dev/null 2>&1") == 0)
		CU_FAIL("gpg is installed but making the fixtures failed");
	return fx.ready > 0;
}

/* Sign json with the key of uid and extra gpg options (default gpg --sign:
 * compressed, binary). */
static int sign_opts(blob *out, const char *uid, const char *json,
                     const char *opts)
{
	char in[800], sig[800];
	unsigned k = ++fx.seq;

	snprintf(in, sizeof(in), "%s/payload-%u.json", fx.dir, k);
	snprintf(sig, sizeof(sig), "%s/payload-%u.sig", fx.dir, k);
	if (spit(in, json, strlen(json)) != 0 ||
	    al_test_sh("GNUPGHOME=%s " GPG " %s -u %s -o %s --sign %s", fx.home,
	               opts, uid, sig, in) != 0)
		return -1;
	return slurp(out, sig);
}

static int sign(blob *out, const char *uid, const char *json)
{
	return sign_opts(out, uid, json, "");
}

/* A payload for digest and ref, with extra text spliced into critical. */
static char *payload(const char *digest, const char *ref,
                     const char *critical_extra)
{
	return al_sprintf(
	    "{\"critical\":{\"type\":\"atomic container signature\","
	    "\"image\":{\"docker-manifest-digest\":\"%s\"},"
	    "\"identity\":{\"docker-reference\":\"%s\"}%s},"
	    "\"optional\":{\"creator\":\"airlock "
	    "test\",\"timestamp\":1700000000,\"extra\":[1,2]}}",
	    digest, ref, critical_extra);
}

static int parse_str(al_sig_payload *pl, const char *s)
{
	return al_sig_payload_parse(pl, (const uint8_t *)s, strlen(s));
}

static int contains(const char *hay, const char *needle)
{
	int ok = strstr(hay, needle) != NULL;

	if (!ok)
		fprintf(stderr, "\n'%s' not in '%s'\n", needle, hay);
	return ok;
}

static void test_sig__payload_parses_fields(void)
{
	char *json = payload(DIGEST_A, REF_A, "");
	al_sig_payload pl;
	al_digest want;

	CU_ASSERT_EQUAL(al_digest_parse_str(&want, DIGEST_A), 0);
	CU_ASSERT_EQUAL(parse_str(&pl, json), 0);
	CU_ASSERT(al_digest_equal(&pl.digest, &want));
	CU_ASSERT_STRING_EQUAL(pl.reference, REF_A);
	CU_ASSERT_STRING_EQUAL(pl.creator, "airlock test");
	CU_ASSERT_EQUAL(pl.has_timestamp, 1);
	CU_ASSERT_EQUAL(pl.timestamp, 1700000000);
	al_sig_payload_clear(&pl);
	al_sig_payload_clear(NULL);
	free(json);
	/* optional is optional, and so are its members */
	CU_ASSERT_EQUAL(parse_str(&pl, "{\"critical\":{\"type\":\"atomic "
	                               "container signature\",\"image\":"
	                               "{\"docker-manifest-digest\":\"" DIGEST_A
	                               "\"},\"identity\":"
	                               "{\"docker-reference\":\"x/y\"}}}"),
	                0);
	CU_ASSERT_PTR_NULL(pl.creator);
	CU_ASSERT_EQUAL(pl.has_timestamp, 0);
	al_sig_payload_clear(&pl);
}

static void test_sig__payload_rejects_unknown_critical_fields(void)
{
	al_sig_payload pl;
	char *json;

	json = payload(DIGEST_A, REF_A, ",\"foo\":1");
	CU_ASSERT_EQUAL(parse_str(&pl, json), AL_EPARSE);
	CU_ASSERT(contains(al_error_message(), "'critical.foo'"));
	free(json);
	CU_ASSERT_EQUAL(parse_str(&pl, "{\"critical\":{\"type\":\"atomic "
	                               "container signature\",\"image\":"
	                               "{\"docker-manifest-digest\":\"" DIGEST_A
	                               "\",\"size\":3},\"identity\":"
	                               "{\"docker-reference\":\"x/y\"}}}"),
	                AL_EPARSE);
	CU_ASSERT(contains(al_error_message(), "'critical.image.size'"));
	CU_ASSERT_EQUAL(
	    parse_str(&pl, "{\"critical\":{\"type\":\"atomic container "
	                   "signature\",\"image\":"
	                   "{\"docker-manifest-digest\":\"" DIGEST_A
	                   "\"},\"identity\":"
	                   "{\"docker-reference\":\"x/y\",\"tag\":\"a\"}}}"),
	    AL_EPARSE);
	CU_ASSERT(contains(al_error_message(), "'critical.identity.tag'"));
	CU_ASSERT_EQUAL(
	    parse_str(&pl, "{\"critical\":{\"type\":\"atomic container "
	                   "signature\",\"image\":"
	                   "{\"docker-manifest-digest\":\"" DIGEST_A
	                   "\"},\"identity\":"
	                   "{\"docker-reference\":\"x/y\"}},\"extra\":{}}"),
	    AL_EPARSE);
	CU_ASSERT(contains(al_error_message(), "'extra'"));
}

static void test_sig__payload_rejects_malformed(void)
{
	al_sig_payload pl;
	char *json;

	/* duplicate keys: a second digest must never win silently */
	json = al_sprintf(
	    "{\"critical\":{\"type\":\"atomic container signature\",\"image\":"
	    "{\"docker-manifest-digest\":\"%s\",\"docker-manifest-digest\":\"%"
	    "s\"},"
	    "\"identity\":{\"docker-reference\":\"x/y\"}}}",
	    DIGEST_A, DIGEST_B);
	CU_ASSERT_EQUAL(parse_str(&pl, json), AL_EPARSE);
	CU_ASSERT(contains(al_error_message(), "duplicate"));
	free(json);
	json = payload(DIGEST_A, REF_A, "");
	memcpy(strstr(json, "atomic"), "Atomic", 6);
	CU_ASSERT_EQUAL(parse_str(&pl, json), AL_EPARSE);
	CU_ASSERT(contains(al_error_message(), "type"));
	free(json);
	json = payload("sha256:abc", REF_A, "");
	CU_ASSERT_EQUAL(parse_str(&pl, json), AL_EPARSE);
	CU_ASSERT(contains(al_error_message(), "docker-manifest-digest"));
	free(json);
	CU_ASSERT_EQUAL(
	    parse_str(&pl, "{\"critical\":{\"type\":\"atomic container "
	                   "signature\",\"image\":{}"
	                   ",\"identity\":{\"docker-reference\":\"x/y\"}}}"),
	    AL_EPARSE);
	CU_ASSERT(
	    contains(al_error_message(),
	             "missing field 'critical.image.docker-manifest-digest'"));
	CU_ASSERT_EQUAL(
	    parse_str(&pl, "{\"critical\":{\"type\":\"atomic container "
	                   "signature\",\"image\":"
	                   "{\"docker-manifest-digest\":\"" DIGEST_A
	                   "\"},\"identity\":"
	                   "{\"docker-reference\":\"x/"
	                   "y\"}},\"optional\":{\"timestamp\":\"now\"}}"),
	    AL_EPARSE);
	CU_ASSERT_EQUAL(parse_str(&pl, "[1]"), AL_EPARSE);
	CU_ASSERT_EQUAL(parse_str(&pl, "{\"critical\":"), AL_EPARSE);
}

static void test_sig__payload_size_is_bounded(void)
{
	size_t n = AL_SIG_MAX_PAYLOAD + 1;
	char *big = malloc(n);
	al_sig_payload pl;

	CU_ASSERT_PTR_NOT_NULL_FATAL(big);
	memset(big, ' ', n);
	big[0] = '{';
	big[n - 1] = '}';
	CU_ASSERT_EQUAL(al_sig_payload_parse(&pl, (const uint8_t *)big, n),
	                AL_ELIMIT);
	free(big);
}

static void test_sig__identity_policies(void)
{
	char *json = payload(DIGEST_A, REF_A, "");
	al_sig_payload pl;
	al_digest a, b;
	al_sig_identity_policy p;

	CU_ASSERT_EQUAL(al_digest_parse_str(&a, DIGEST_A), 0);
	CU_ASSERT_EQUAL(al_digest_parse_str(&b, DIGEST_B), 0);
	CU_ASSERT_EQUAL_FATAL(parse_str(&pl, json), 0);
	free(json);
	CU_ASSERT_EQUAL(
	    al_sig_payload_check(&pl, &a, REF_A, AL_SIG_IDENTITY_EXACT), 0);
	/* the same reference spelled differently normalises to the same */
	CU_ASSERT_EQUAL(al_sig_payload_check(
	                    &pl, &a, "quay.io/example/release:4.14.1-x86_64",
	                    AL_SIG_IDENTITY_EXACT),
	                0);
	/* by digest: not exact, but the same repository */
	CU_ASSERT_EQUAL(
	    al_sig_payload_check(&pl, &a, "quay.io/example/release@" DIGEST_A,
	                         AL_SIG_IDENTITY_EXACT),
	    AL_EVERIFY);
	CU_ASSERT(contains(al_error_message(), "identity mismatch"));
	CU_ASSERT_EQUAL(
	    al_sig_payload_check(&pl, &a, "quay.io/example/release@" DIGEST_A,
	                         AL_SIG_IDENTITY_REPOSITORY),
	    0);
	CU_ASSERT_EQUAL(al_sig_payload_check(&pl, &a,
	                                     "quay.io/example/release:4.15.0",
	                                     AL_SIG_IDENTITY_REPOSITORY),
	                0);
	CU_ASSERT_EQUAL(
	    al_sig_payload_check(&pl, &a, "quay.io/example/other:4.14.1-x86_64",
	                         AL_SIG_IDENTITY_REPOSITORY),
	    AL_EVERIFY);
	CU_ASSERT(contains(al_error_message(), "identity mismatch"));
	CU_ASSERT_EQUAL(
	    al_sig_payload_check(&pl, &a,
	                         "mirror.local/example/release:4.14.1-x86_64",
	                         AL_SIG_IDENTITY_REPOSITORY),
	    AL_EVERIFY);
	CU_ASSERT_EQUAL(al_sig_payload_check(&pl, &a, "anything.else/x:1",
	                                     AL_SIG_IDENTITY_IGNORE),
	                0);
	CU_ASSERT_EQUAL(
	    al_sig_payload_check(&pl, &a, NULL, AL_SIG_IDENTITY_IGNORE), 0);
	CU_ASSERT_EQUAL(
	    al_sig_payload_check(&pl, &a, NULL, AL_SIG_IDENTITY_EXACT),
	    AL_EINVAL);
	/* the digest is checked under every policy */
	CU_ASSERT_EQUAL(
	    al_sig_payload_check(&pl, &b, NULL, AL_SIG_IDENTITY_IGNORE),
	    AL_EVERIFY);
	CU_ASSERT(contains(al_error_message(),
	                   "digest mismatch: signature is for " DIGEST_A));
	al_sig_payload_clear(&pl);
	CU_ASSERT_EQUAL(al_sig_identity_policy_parse(&p, "repository"), 0);
	CU_ASSERT_EQUAL(p, AL_SIG_IDENTITY_REPOSITORY);
	CU_ASSERT_EQUAL(al_sig_identity_policy_parse(&p, "loose"), AL_EINVAL);
	CU_ASSERT_STRING_EQUAL(
	    al_sig_identity_policy_name(AL_SIG_IDENTITY_IGNORE), "ignore");
}

/* Sign payload json with uid and verify it for DIGEST_A / REF_A under policy.
 */
static int sign_verify(al_sig_info *info, const char *uid, const char *json,
                       const al_pgp_keyring *kr, al_sig_identity_policy policy,
                       const char *ref)
{
	al_sig_verify_opts vo = AL_SIG_VERIFY_OPTS_INIT;
	blob s = {NULL, 0};
	al_digest a;
	int rc;

	vo.keyring = kr;
	vo.policy = policy;
	vo.reference = ref;
	if (al_digest_parse_str(&a, DIGEST_A) != 0 || sign(&s, uid, json) != 0)
		return -100;
	rc = al_sig_verify(info, s.p, s.n, &a, &vo);
	free(s.p);
	return rc;
}

static void test_sig__verify_accepts_valid_signatures(void)
{
	char *json = payload(DIGEST_A, REF_A, "");
	al_sig_info info;

	if (!have_fixtures()) {
		free(json);
		return;
	}
	memset(&info, 0, sizeof(info));
	CU_ASSERT_EQUAL(sign_verify(&info, "rsa@example.test", json, fx.kr,
	                            AL_SIG_IDENTITY_EXACT, REF_A),
	                0);
	CU_ASSERT_STRING_EQUAL(info.fingerprint, fx.fpr_rsa);
	CU_ASSERT_STRING_EQUAL(info.primary_fingerprint, fx.fpr_rsa);
	CU_ASSERT_STRING_EQUAL(info.creator, "airlock test");
	CU_ASSERT_STRING_EQUAL(info.reference, REF_A);
	CU_ASSERT_EQUAL(info.timestamp, 1700000000);
	CU_ASSERT(info.signed_at > 1700000000);
	al_sig_info_clear(&info);
	CU_ASSERT_EQUAL(sign_verify(&info, "ed@example.test", json, fx.kr,
	                            AL_SIG_IDENTITY_EXACT, REF_A),
	                0);
	CU_ASSERT_STRING_EQUAL(info.fingerprint, fx.fpr_ed);
	al_sig_info_clear(&info);
	al_sig_info_clear(NULL);
	free(json);
}

static void test_sig__verify_refuses_wrong_digest(void)
{
	char *json = payload(DIGEST_B, REF_A, "");

	if (have_fixtures()) {
		CU_ASSERT_EQUAL(sign_verify(NULL, "ed@example.test", json,
		                            fx.kr, AL_SIG_IDENTITY_IGNORE,
		                            NULL),
		                AL_EVERIFY);
		CU_ASSERT(
		    contains(al_error_message(),
		             "digest mismatch: signature is for " DIGEST_B));
	}
	free(json);
}

static void test_sig__verify_identity_exact_and_repository(void)
{
	char *json =
	    payload(DIGEST_A, "quay.io/example/release:4.14.0-x86_64", "");

	if (have_fixtures()) {
		CU_ASSERT_EQUAL(sign_verify(NULL, "ed@example.test", json,
		                            fx.kr, AL_SIG_IDENTITY_EXACT,
		                            REF_A),
		                AL_EVERIFY);
		CU_ASSERT(contains(al_error_message(), "identity mismatch"));
		CU_ASSERT_EQUAL(sign_verify(NULL, "ed@example.test", json,
		                            fx.kr, AL_SIG_IDENTITY_REPOSITORY,
		                            REF_A),
		                0);
		CU_ASSERT_EQUAL(
		    sign_verify(NULL, "ed@example.test", json, fx.kr,
		                AL_SIG_IDENTITY_REPOSITORY,
		                "quay.io/other/release:4.14.1-x86_64"),
		    AL_EVERIFY);
		CU_ASSERT(contains(al_error_message(), "identity mismatch"));
	}
	free(json);
}

static void test_sig__verify_refuses_bad_payloads(void)
{
	char *unknown = payload(DIGEST_A, REF_A, ",\"foo\":\"bar\"");
	char *dup = al_sprintf(
	    "{\"critical\":{\"type\":\"atomic container signature\",\"image\":"
	    "{\"docker-manifest-digest\":\"%s\",\"docker-manifest-digest\":\"%"
	    "s\"},"
	    "\"identity\":{\"docker-reference\":\"%s\"}},\"optional\":{}}",
	    DIGEST_B, DIGEST_A, REF_A);

	if (have_fixtures()) {
		CU_ASSERT_EQUAL(sign_verify(NULL, "rsa@example.test", unknown,
		                            fx.kr, AL_SIG_IDENTITY_EXACT,
		                            REF_A),
		                AL_EVERIFY);
		CU_ASSERT(
		    contains(al_error_message(), "invalid signature payload"));
		CU_ASSERT(contains(al_error_message(),
		                   "unknown field 'critical.foo'"));
		CU_ASSERT_EQUAL(sign_verify(NULL, "rsa@example.test", dup,
		                            fx.kr, AL_SIG_IDENTITY_EXACT,
		                            REF_A),
		                AL_EVERIFY);
		CU_ASSERT(
		    contains(al_error_message(), "invalid signature payload"));
		CU_ASSERT(contains(al_error_message(), "duplicate"));
	}
	free(unknown);
	free(dup);
}

/* A refusal of tampered content: bad (AL_EVERIFY) or, when tampering
 * produced a well-formed packet of an unaccepted kind, AL_EUNSUPPORTED. */
static int refused(int rc)
{
	return rc == AL_EVERIFY || rc == AL_EUNSUPPORTED;
}

static void test_sig__verify_refuses_wrong_key_and_tampering(void)
{
	char *json = payload(DIGEST_A, REF_A, "");
	al_sig_verify_opts vo = AL_SIG_VERIFY_OPTS_INIT;
	blob s = {NULL, 0};
	al_digest a;

	vo.policy = AL_SIG_IDENTITY_EXACT;
	vo.reference = REF_A;
	if (!have_fixtures() || sign(&s, "rsa@example.test", json) != 0) {
		free(json);
		return;
	}
	CU_ASSERT_EQUAL(al_digest_parse_str(&a, DIGEST_A), 0);
	vo.keyring = fx.kr_other;
	CU_ASSERT_EQUAL(al_sig_verify(NULL, s.p, s.n, &a, &vo), AL_EVERIFY);
	CU_ASSERT(contains(al_error_message(), "unknown key"));
	vo.keyring = fx.kr;
	CU_ASSERT_EQUAL(al_sig_verify(NULL, s.p, s.n, &a, &vo), 0);
	/* inside the message: whatever breaks, it is refused as bad content
	 * (AL_EVERIFY), or, when the flipped bit made a well-formed packet
	 * of a kind airlock does not accept (an unknown critical subpacket:
	 * gpg refuses it too, RFC 9580 5.2.3.7), AL_EUNSUPPORTED; both are
	 * exit 1. The signature is made anew each run, so the flip lands
	 * somewhere else each time. */
	s.p[s.n / 2] ^= 0x40;
	CU_ASSERT(refused(al_sig_verify(NULL, s.p, s.n, &a, &vo)));
	s.p[s.n / 2] ^= 0x40;
	s.p[s.n - 1] ^= 0x01;
	CU_ASSERT(refused(al_sig_verify(NULL, s.p, s.n, &a, &vo)));
	s.p[s.n - 1] ^= 0x01;
	/* truncated */
	CU_ASSERT(refused(al_sig_verify(NULL, s.p, s.n - 20, &a, &vo)));
	/* not a signature at all */
	CU_ASSERT_EQUAL(
	    al_sig_verify(NULL, (const uint8_t *)json, strlen(json), &a, &vo),
	    AL_EVERIFY);
	CU_ASSERT_EQUAL(al_sig_verify(NULL, s.p, 0, &a, &vo), AL_EVERIFY);
	/* no expected reference under exact: a usage error, not bad content */
	vo.reference = NULL;
	CU_ASSERT_EQUAL(al_sig_verify(NULL, s.p, s.n, &a, &vo), AL_EINVAL);
	free(s.p);
	free(json);
}

static void test_sig__verify_refuses_tampered_uncompressed(void)
{
	char *json = payload(DIGEST_A, REF_A, "");
	al_sig_verify_opts vo = AL_SIG_VERIFY_OPTS_INIT;
	blob s = {NULL, 0};
	uint8_t *at;
	al_digest a;

	vo.policy = AL_SIG_IDENTITY_EXACT;
	vo.reference = REF_A;
	if (!have_fixtures() || sign_opts(&s, "rsa@example.test", json,
	                                  "--compress-algo none") != 0) {
		free(json);
		return;
	}
	vo.keyring = fx.kr;
	CU_ASSERT_EQUAL(al_digest_parse_str(&a, DIGEST_A), 0);
	CU_ASSERT_EQUAL(al_sig_verify(NULL, s.p, s.n, &a, &vo), 0);
	/* the last byte belongs to the RSA signature value */
	s.p[s.n - 1] ^= 0x01;
	CU_ASSERT_EQUAL(al_sig_verify(NULL, s.p, s.n, &a, &vo), AL_EVERIFY);
	CU_ASSERT(contains(al_error_message(), "bad signature"));
	s.p[s.n - 1] ^= 0x01;
	/* the signed payload itself: the creator "airlock test" becomes
	 * "airlock tesT" */
	at = memmem(s.p, s.n, "airlock test", 12);
	CU_ASSERT_PTR_NOT_NULL(at);
	if (at != NULL) {
		at[11] = 'T';
		CU_ASSERT_EQUAL(al_sig_verify(NULL, s.p, s.n, &a, &vo),
		                AL_EVERIFY);
		CU_ASSERT(contains(al_error_message(), "bad signature"));
	}
	free(s.p);
	free(json);
}

static void test_sig__verify_list_first_good_and_all_reasons(void)
{
	char *good = payload(DIGEST_A, REF_A, "");
	char *wrong = payload(DIGEST_B, REF_A, "");
	al_sig_verify_opts vo = AL_SIG_VERIFY_OPTS_INIT;
	al_sig_list l = AL_SIG_LIST_INIT;
	blob g = {NULL, 0}, w = {NULL, 0}, o = {NULL, 0};
	al_sig_info info;
	size_t which = 99;
	al_digest a;

	vo.policy = AL_SIG_IDENTITY_EXACT;
	vo.reference = REF_A;
	if (!have_fixtures() || sign(&g, "ed@example.test", good) ||
	    sign(&w, "ed@example.test", wrong) ||
	    sign(&o, "other@example.test", good))
		goto out;
	vo.keyring = fx.kr;
	CU_ASSERT_EQUAL(al_digest_parse_str(&a, DIGEST_A), 0);
	CU_ASSERT_EQUAL(al_sig_verify_list(NULL, NULL, &l, &a, &vo),
	                AL_ENOTFOUND);
	CU_ASSERT_EQUAL(al_sig_list_add(&l, w.p, w.n), 0);
	CU_ASSERT_EQUAL(al_sig_list_add(&l, o.p, o.n), 0);
	CU_ASSERT_EQUAL(al_sig_verify_list(NULL, &which, &l, &a, &vo),
	                AL_EVERIFY);
	CU_ASSERT(contains(al_error_message(), "signature-1: digest mismatch"));
	CU_ASSERT(contains(al_error_message(), "signature-2: "));
	CU_ASSERT(contains(al_error_message(), "unknown key"));
	CU_ASSERT_EQUAL(which, 99);
	CU_ASSERT_EQUAL(al_sig_list_add(&l, g.p, g.n), 0);
	memset(&info, 0, sizeof(info));
	CU_ASSERT_EQUAL(al_sig_verify_list(&info, &which, &l, &a, &vo), 0);
	CU_ASSERT_EQUAL(which, 2);
	CU_ASSERT_STRING_EQUAL(info.fingerprint, fx.fpr_ed);
	al_sig_info_clear(&info);
out:
	al_sig_list_clear(&l);
	free(g.p);
	free(w.p);
	free(o.p);
	free(good);
	free(wrong);
}

static void test_sig__signature_size_is_bounded(void)
{
	al_sig_verify_opts vo = AL_SIG_VERIFY_OPTS_INIT;
	size_t n = AL_SIG_MAX_BYTES + 1;
	uint8_t *big = calloc(1, n);
	al_sig_list l = AL_SIG_LIST_INIT;
	al_digest a;

	vo.policy = AL_SIG_IDENTITY_IGNORE;
	vo.reference = NULL;
	CU_ASSERT_PTR_NOT_NULL_FATAL(big);
	CU_ASSERT_EQUAL(al_digest_parse_str(&a, DIGEST_A), 0);
	if (al_pgp_keyring_new((al_pgp_keyring **)&vo.keyring) == 0) {
		CU_ASSERT_EQUAL(al_sig_verify(NULL, big, n, &a, &vo),
		                AL_ELIMIT);
		al_pgp_keyring_free((al_pgp_keyring *)vo.keyring);
	}
	CU_ASSERT_EQUAL(al_sig_list_add(&l, big, n), AL_ELIMIT);
	CU_ASSERT_EQUAL(al_sig_list_add(&l, big, n - 1), 0);
	CU_ASSERT_EQUAL(l.n, 1);
	CU_ASSERT_EQUAL(al_sig_list_add(&l, big, 0), AL_EINVAL);
	al_sig_list_clear(&l);
	al_sig_list_clear(NULL);
	free(big);
}

/* library-go's verifyAtomicContainerSignature: "signature must have an
 * identity", whatever the policy. */
static void test_sig__empty_identity_refused_under_every_policy(void)
{
	static const al_sig_identity_policy pols[] = {
	    AL_SIG_IDENTITY_EXACT, AL_SIG_IDENTITY_REPOSITORY,
	    AL_SIG_IDENTITY_IGNORE};
	char *json = payload(DIGEST_A, "", "");
	al_sig_payload pl;
	size_t i;

	CU_ASSERT_EQUAL(parse_str(&pl, json), AL_EPARSE);
	CU_ASSERT(contains(al_error_message(), "docker-reference is empty"));
	if (have_fixtures()) {
		for (i = 0; i < sizeof(pols) / sizeof(pols[0]); i++) {
			CU_ASSERT_EQUAL(sign_verify(NULL, "rsa@example.test",
			                            json, fx.kr, pols[i],
			                            REF_A),
			                AL_EVERIFY);
			CU_ASSERT(contains(al_error_message(),
			                   "docker-reference is empty"));
		}
	}
	free(json);
}

#define RH_DIGEST                                                              \
	"sha256:"                                                              \
	"0da6316466d60a3a4535d5fed3589feb0391989982fba59d47d4c729912d6363"
#define RH_REF "quay.io/openshift-release-dev/ocp-release:4.15.0-x86_64"

/* tests/data/redhat/name (static buffer). */
static const char *rh_path(const char *name)
{
	static char buf[4][1024];
	static int next;
	char *b = buf[next++ % 4];
	int k = snprintf(b, sizeof(buf[0]), "%s/tests/data/redhat/%s",
	                 al_test_source_dir(), name);

	return k > 0 && (size_t)k < sizeof(buf[0]) ? b : "";
}

/* Load paths into a keyring and verify the real 4.15.0 signature with it:
 * the al_status of the load (or of the verification); *count the keys. */
static int rh_verify(const char *const *paths, size_t n, size_t *count)
{
	al_buf sig = AL_BUF_INIT(AL_SIG_MAX_BYTES);
	al_pgp_keyring *kr = NULL;
	al_sig_verify_opts vo = AL_SIG_VERIFY_OPTS_INIT;
	al_digest d;
	int rc;

	if ((rc = al_sig_keyring_load_paths(&kr, paths, n, 0)) < 0)
		return rc;
	if (count != NULL)
		*count = al_pgp_keyring_count(kr);
	vo.keyring = kr;
	vo.policy = AL_SIG_IDENTITY_EXACT;
	vo.reference = RH_REF;
	if ((rc = al_fs_read_file(rh_path("ocp-release-4.15.0-x86_64.sig"),
	                          &sig)) == 0 &&
	    (rc = al_digest_parse_str(&d, RH_DIGEST)) == 0)
		rc = al_sig_verify(NULL, sig.ptr, sig.len, &d, &vo);
	al_buf_free(&sig);
	al_pgp_keyring_free(kr);
	return rc;
}

static int put(const char *path, const char *text)
{
	return al_fs_write_atomic(path, text, strlen(text));
}

/* Keyrings in the forms clusters ship: key files (with gpg's listing
 * before the armor), the cluster-update-keys ConfigMap as committed (with
 * its duplicate namespace), a directory, a mounted ConfigMap (symlinks into
 * ..data, store-* URLs beside the keys), JSON; and the shipped defaults. */
static void test_sig__keyring_paths_in_every_form(void)
{
	const char *tmp = al_test_tmpdir();
	char dir[1024], mnt[1024], empty[1024], junk[1024], json[1024];
	const char *p[3];
	al_buf key = AL_BUF_INIT(1 << 20);
	json_t *cm = NULL;
	char *dumped = NULL;
	size_t count = 0;

	snprintf(dir, sizeof(dir), "%s/keys", tmp);
	snprintf(mnt, sizeof(mnt), "%s/mounted", tmp);
	snprintf(empty, sizeof(empty), "%s/empty", tmp);
	snprintf(junk, sizeof(junk), "%s/junk.txt", tmp);
	snprintf(json, sizeof(json), "%s/cm.json", tmp);
	p[0] = rh_path("library-go-redhat.txt");
	CU_ASSERT_EQUAL(rh_verify(p, 1, &count), 0);
	CU_ASSERT_EQUAL(count, 1);
	p[0] = rh_path("cluster-update-keys-configmap.yaml");
	CU_ASSERT_EQUAL(rh_verify(p, 1, &count), 0);
	CU_ASSERT_EQUAL(count, 2); /* release key 2 and beta key 2 */
	p[0] = rh_path("verifier-public-key-redhat-release");
	p[1] = rh_path("library-go-redhat.txt");
	CU_ASSERT_EQUAL(rh_verify(p, 2, &count), 0);
	CU_ASSERT_EQUAL(count, 1); /* merged */
	/* a directory of both copies */
	CU_ASSERT_EQUAL(
	    al_test_sh("mkdir -p %s && cp %s %s %s/", dir,
	               rh_path("library-go-redhat.txt"),
	               rh_path("verifier-public-key-redhat-release"), dir),
	    0);
	p[0] = dir;
	CU_ASSERT_EQUAL(rh_verify(p, 1, &count), 0);
	CU_ASSERT_EQUAL(count, 1);
	/* a mounted ConfigMap: only verifier-public-key-* are keys */
	CU_ASSERT_EQUAL(
	    al_test_sh("mkdir -p %s/..2026_01_01 && "
	               "cp %s %s/..2026_01_01/verifier-public-key-redhat && "
	               "echo https://mirror.example/sigs > "
	               "%s/..2026_01_01/store-openshift-official-release && "
	               "cd %s && ln -s ..2026_01_01 ..data && "
	               "ln -s ..data/verifier-public-key-redhat . && "
	               "ln -s ..data/store-openshift-official-release .",
	               mnt, rh_path("verifier-public-key-redhat-release"), mnt,
	               mnt, mnt),
	    0);
	p[0] = mnt;
	CU_ASSERT_EQUAL(rh_verify(p, 1, &count), 0);
	CU_ASSERT_EQUAL(count, 1);
	/* the same ConfigMap as JSON (oc get -o json) */
	CU_ASSERT_EQUAL(
	    al_fs_read_file(rh_path("verifier-public-key-redhat-release"),
	                    &key),
	    0);
	cm = json_pack(
	    "{s:s, s:s, s:{s:s}, s:{s:s%}}", "apiVersion", "v1", "kind",
	    "ConfigMap", "metadata", "name", "release-verification", "data",
	    "verifier-public-key-redhat", (const char *)key.ptr, key.len);
	dumped = cm != NULL ? json_dumps(cm, 0) : NULL;
	CU_ASSERT_PTR_NOT_NULL(dumped);
	if (dumped != NULL) {
		CU_ASSERT_EQUAL(put(json, dumped), 0);
		p[0] = json;
		CU_ASSERT_EQUAL(rh_verify(p, 1, &count), 0);
	}
	/* a v1 List of ConfigMaps in YAML (oc get -o yaml of several) */
	{
		char list[1024], *text = NULL;
		size_t i, k = 0;
		char *ind = malloc(key.len * 2 + 16);
		snprintf(list, sizeof(list), "%s/list.yaml", tmp);
		if (ind != NULL) {
			/* the armor as a literal block, indented 8 */
			for (i = 0; i < key.len; i++) {
				if (i == 0 || key.ptr[i - 1] == '\n') {
					memcpy(ind + k, "        ", 8);
					k += 8;
				}
				ind[k++] = (char)key.ptr[i];
				if (k + 10 > key.len * 2 + 16)
					break;
			}
			ind[k] = '\0';
			text =
			    al_sprintf("apiVersion: v1\nkind: List\nitems:\n"
			               "- apiVersion: v1\n  kind: ConfigMap\n"
			               "  data:\n    verifier-public-key-a: "
			               "|\n%s",
			               ind);
		}
		CU_ASSERT_PTR_NOT_NULL(text);
		if (text != NULL) {
			CU_ASSERT_EQUAL(put(list, text), 0);
			p[0] = list;
			CU_ASSERT_EQUAL(rh_verify(p, 1, &count), 0);
		}
		free(text);
		free(ind);
	}
	/* what is none of these */
	CU_ASSERT_EQUAL(put(junk, "kind: Secret\ndata:\n  x: y\n"), 0);
	p[0] = junk;
	CU_ASSERT_EQUAL(rh_verify(p, 1, NULL), AL_EPARSE);
	CU_ASSERT(contains(al_error_message(), junk));
	CU_ASSERT(contains(al_error_message(), "verifier-public-key-*"));
	CU_ASSERT_EQUAL(mkdir(empty, 0700), 0);
	p[0] = empty;
	CU_ASSERT_EQUAL(rh_verify(p, 1, NULL), AL_ENOTFOUND);
	CU_ASSERT(contains(al_error_message(), "holds no key file"));
	p[0] = "/nonexistent/keys.gpg";
	CU_ASSERT_EQUAL(rh_verify(p, 1, NULL), AL_ENOTFOUND);
	CU_ASSERT(contains(al_error_message(), "/nonexistent/keys.gpg"));
	/* no paths: the shipped Red Hat keys */
	CU_ASSERT_EQUAL(rh_verify(NULL, 0, &count), 0);
	CU_ASSERT_EQUAL(count, 2);
	free(dumped);
	json_decref(cm);
	al_buf_free(&key);
}

static void test_sig__redhat_defaults(void)
{
	CU_ASSERT_EQUAL(al_sig_is_redhat_release(RH_REF), 1);
	CU_ASSERT_EQUAL(al_sig_is_redhat_release("docker://" RH_REF), 1);
	CU_ASSERT_EQUAL(
	    al_sig_is_redhat_release(
	        "quay.io/openshift-release-dev/ocp-v4.0-art-dev@" RH_DIGEST),
	    1);
	CU_ASSERT_EQUAL(
	    al_sig_is_redhat_release("quay.io/openshift-release-dev-x/r:1"), 0);
	CU_ASSERT_EQUAL(al_sig_is_redhat_release("quay.io/other/ocp-release:1"),
	                0);
	CU_ASSERT_EQUAL(al_sig_is_redhat_release(
	                    "registry.example/openshift-release-dev/r:1"),
	                0);
	CU_ASSERT_EQUAL(al_sig_is_redhat_release("Not A Reference"), 0);
	CU_ASSERT_EQUAL(al_sig_is_redhat_release(NULL), 0);
	CU_ASSERT_EQUAL(unsetenv("AIRLOCK_REDHAT_SIGNATURE_STORE"), 0);
	CU_ASSERT_STRING_EQUAL(al_sig_redhat_store(),
	                       "https://mirror.openshift.com/pub/openshift-v4/"
	                       "signatures/openshift/release");
	CU_ASSERT_EQUAL(setenv("AIRLOCK_REDHAT_SIGNATURE_STORE",
	                       "http://127.0.0.1:1/sigs", 1),
	                0);
	CU_ASSERT_STRING_EQUAL(al_sig_redhat_store(),
	                       "http://127.0.0.1:1/sigs");
	{
		const char *refs[] = {"quay.io/example/r:1", RH_REF};
		al_sig_source src[3] = {0};
		size_t n = 0;

		CU_ASSERT_EQUAL(al_sig_any_redhat_release(refs, 1), 0);
		CU_ASSERT_EQUAL(al_sig_any_redhat_release(refs, 2), 1);
		CU_ASSERT_EQUAL(al_sig_source_parse(&src[n++], "http://a/s"),
		                0);
		CU_ASSERT_EQUAL(al_sig_sources_add_redhat(src, &n, 3), 1);
		CU_ASSERT_EQUAL(n, 2);
		CU_ASSERT_EQUAL(src[1].kind, AL_SIG_SOURCE_HTTP);
		CU_ASSERT_STRING_EQUAL(src[1].location,
		                       "http://127.0.0.1:1/sigs");
		/* once only, and never past the capacity */
		CU_ASSERT_EQUAL(al_sig_sources_add_redhat(src, &n, 3), 0);
		CU_ASSERT_EQUAL(n, 2);
		n = 1;
		CU_ASSERT_EQUAL(al_sig_sources_add_redhat(src, &n, 1), 0);
		CU_ASSERT_EQUAL(n, 1);
	}
	CU_ASSERT_EQUAL(unsetenv("AIRLOCK_REDHAT_SIGNATURE_STORE"), 0);
}

int main(void)
{
	CU_TestInfo tests[] = {
	    {"payload_parses_fields", test_sig__payload_parses_fields},
	    {"payload_rejects_unknown_critical_fields",
	     test_sig__payload_rejects_unknown_critical_fields},
	    {"payload_rejects_malformed", test_sig__payload_rejects_malformed},
	    {"payload_size_is_bounded", test_sig__payload_size_is_bounded},
	    {"identity_policies", test_sig__identity_policies},
	    {"verify_accepts_valid_signatures",
	     test_sig__verify_accepts_valid_signatures},
	    {"verify_refuses_wrong_digest",
	     test_sig__verify_refuses_wrong_digest},
	    {"verify_identity_exact_and_repository",
	     test_sig__verify_identity_exact_and_repository},
	    {"verify_refuses_bad_payloads",
	     test_sig__verify_refuses_bad_payloads},
	    {"verify_refuses_wrong_key_and_tampering",
	     test_sig__verify_refuses_wrong_key_and_tampering},
	    {"verify_refuses_tampered_uncompressed",
	     test_sig__verify_refuses_tampered_uncompressed},
	    {"verify_list_first_good_and_all_reasons",
	     test_sig__verify_list_first_good_and_all_reasons},
	    {"signature_size_is_bounded", test_sig__signature_size_is_bounded},
	    {"empty_identity_refused_under_every_policy",
	     test_sig__empty_identity_refused_under_every_policy},
	    {"keyring_paths_in_every_form",
	     test_sig__keyring_paths_in_every_form},
	    {"redhat_defaults", test_sig__redhat_defaults},
	    CU_TEST_INFO_NULL,
	};

	return al_test_run("sig", tests);
}
