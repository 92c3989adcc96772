/* test_pgp.c: pgp verifier tests on gpg-made fixtures and crafted packets. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <zlib.h>

#include <CUnit/CUnit.h>

#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/pgp.h"
#include "al_test.h"

#define GPG                                                                    \
	"gpg --batch --no-tty --quiet --pinentry-mode loopback --passphrase "  \
	"''"

static const char payload[] =
    "{\"critical\":{\"identity\":{\"docker-reference\":\"quay.io/example/"
    "release:4.16.0-x86_64\"},"
    "\"image\":{\"docker-manifest-digest\":\"sha256:"
    "6d8c2c3a0f0d5bd8c3f1b8cbd0e7f6c2a1b9d0e4f3a2b1c0d9e8f7a6b5c4d3e2\"},"
    "\"type\":\"atomic container "
    "signature\"},\"optional\":{\"creator\":\"airlock test\","
    "\"timestamp\":1700000000}}\n";

/* A file's bytes. */
typedef struct blob {
	uint8_t *p;
	size_t n;
} blob;

static struct fixtures {
	int ready; /* 1 ok, -1 gpg missing or failed */
	char home[600];
	char dir[600];
	uint64_t t0; /* when fixtures were made */
	char fpr_rsa4096[41], fpr_rsa2048[41], fpr_ed[41], fpr_p256[41],
	    fpr_p384[41], fpr_sub[41], fpr_subkey[41], fpr_old[41],
	    fpr_late[41], fpr_soft[41];
	blob kr_rsa4096, kr_rsa2048, kr_ed, kr_p256, kr_p256_ext, kr_p384,
	    kr_sub, kr_all, kr_armored, kr_rsa2048_revoked, kr_sub_revoked;
	blob kr_ed_asc, kr_rsa4096_asc;
	blob m_rsa4096, m_rsa2048_zip512, m_ed_zlib, m_p256_none, m_sub, m_sha1,
	    m_sigexp, m_two, m_p256_armor;
	blob m_p384, m_text, m_sha224;
	blob kr_sha1old, kr_sha1late, m_sha1old, m_sha1late, m_p256_late,
	    kr_soft, kr_soft_revoked, m_soft_before, m_soft_after;
} fx;

static void free_blob(blob *b)
{
	free(b->p);
	b->p = NULL;
	b->n = 0;
}

static int slurp(blob *out, const char *dir, const char *name)
{
	char path[1024];
	FILE *f;
	long sz;
	int n;

	n = snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -1;
	f = fopen(path, "rb");
	if (f == NULL)
		return -1;
	if (fseek(f, 0, SEEK_END) != 0 || (sz = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) != 0) {
		fclose(f);
		return -1;
	}
	out->p = malloc((size_t)sz + 1);
	out->n = (size_t)sz;
	if (out->p == NULL || fread(out->p, 1, out->n, f) != out->n) {
		fclose(f);
		free_blob(out);
		return -1;
	}
	fclose(f);
	return 0;
}

static int cat_blobs(blob *out, const blob *a, const blob *b)
{
	out->n = a->n + b->n;
	out->p = malloc(out->n + 1);
	if (out->p == NULL)
		return -1;
	memcpy(out->p, a->p, a->n);
	memcpy(out->p + a->n, b->p, b->n);
	return 0;
}

/* Fingerprint number idx (0 primary, 1 first subkey) of uid from colon listing.
 */
static int get_fpr(char out[41], const char *uid, int idx)
{
	blob b = {NULL, 0};
	char *line, *save = NULL;
	int seen = 0, rc = -1;

	if (al_test_sh("GNUPGHOME=%s " GPG
	               " --with-colons --list-keys '%s' > %s/colons.txt",
	               fx.home, uid, fx.dir) != 0 ||
	    slurp(&b, fx.dir, "colons.txt") != 0)
		return -1;
	b.p[b.n] = 0;
	for (line = strtok_r((char *)b.p, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		char *f = line;
		int i;
		if (strncmp(line, "fpr:", 4) != 0)
			continue;
		if (seen++ != idx)
			continue;
		for (i = 0; i < 9 && f != NULL; i++) {
			f = strchr(f, ':');
			if (f != NULL)
				f++;
		}
		if (f != NULL && strlen(f) >= 40) {
			memcpy(out, f, 40);
			out[40] = 0;
			rc = 0;
		}
		break;
	}
	free_blob(&b);
	return rc;
}

static void stop_agent(void)
{
	if (fx.home[0] != '\0')
		al_test_sh("GNUPGHOME=%s gpgconf --kill all >/dev/null 2>&1",
		           fx.home);
}

static int write_file(const char *name, const void *p, size_t n)
{
	char path[1024];
	FILE *f;
	int k;

	k = snprintf(path, sizeof(path), "%s/%s", fx.dir, name);
	if (k < 0 || (size_t)k >= sizeof(path) ||
	    (f = fopen(path, "wb")) == NULL)
		return -1;
	if (fwrite(p, 1, n, f) != n) {
		fclose(f);
		return -1;
	}
	return fclose(f) == 0 ? 0 : -1;
}

#define G(...) al_test_sh("cd %s && GNUPGHOME=%s " GPG " " __VA_ARGS__)

static int make_fixtures(void)
{
	const char *d = fx.dir, *h = fx.home;
	int k;

	if (system("command -v gpg >/dev/null 2>&1") != 0) {
		al_test_skip("gpg not found: the gpg-made fixtures");
		return -1;
	}
	k = snprintf(fx.dir, sizeof(fx.dir), "%s", al_test_tmpdir());
	if (k < 0 || (size_t)k >= sizeof(fx.dir))
		return -1;
	k = snprintf(fx.home, sizeof(fx.home), "%s/gnupg", fx.dir);
	if (k < 0 || (size_t)k >= sizeof(fx.home) || mkdir(fx.home, 0700) != 0)
		return -1;
	atexit(stop_agent);
	fx.t0 = (uint64_t)time(NULL);
	if (write_file("payload.json", payload, strlen(payload)) != 0)
		return -1;
	/* keys: RSA 4096, RSA 2048, Ed25519, P-256 (expires in a year), Ed25519
	 * with a signing subkey */
	if (G("%s --quick-gen-key 'RSA4096 <rsa4096@example.test>' rsa4096 "
	      "sign never",
	      d, h, "") ||
	    G("%s --quick-gen-key 'RSA2048 <rsa2048@example.test>' rsa2048 "
	      "sign never",
	      d, h, "") ||
	    G("%s --quick-gen-key 'Ed <ed@example.test>' ed25519 sign never", d,
	      h, "") ||
	    G("%s --quick-gen-key 'P256 <p256@example.test>' nistp256 sign 1y",
	      d, h, "") ||
	    G("%s --quick-gen-key 'P384 <p384@example.test>' nistp384 sign "
	      "never",
	      d, h, "") ||
	    G("%s --quick-gen-key 'Sub <sub@example.test>' ed25519 cert never",
	      d, h, ""))
		return -1;
	if (get_fpr(fx.fpr_rsa4096, "rsa4096@example.test", 0) ||
	    get_fpr(fx.fpr_rsa2048, "rsa2048@example.test", 0) ||
	    get_fpr(fx.fpr_ed, "ed@example.test", 0) ||
	    get_fpr(fx.fpr_p256, "p256@example.test", 0) ||
	    get_fpr(fx.fpr_p384, "p384@example.test", 0) ||
	    get_fpr(fx.fpr_sub, "sub@example.test", 0))
		return -1;
	if (G("--quick-add-key %s ed25519 sign never", d, h, fx.fpr_sub) ||
	    get_fpr(fx.fpr_subkey, "sub@example.test", 1))
		return -1;
	/* keyrings */
	if (G("--export rsa4096@example.test > kr_rsa4096", d, h) ||
	    G("--export rsa2048@example.test > kr_rsa2048", d, h) ||
	    G("--export ed@example.test > kr_ed", d, h) ||
	    G("--export p256@example.test > kr_p256", d, h) ||
	    G("--export sub@example.test > kr_sub", d, h) ||
	    G("--export > kr_all", d, h) ||
	    G("--export p384@example.test > kr_p384", d, h) ||
	    G("--export --armor ed@example.test > kr_ed_asc", d, h) ||
	    G("--export --armor rsa4096@example.test > kr_rsa4096_asc", d, h) ||
	    G("--export --armor > kr_armored", d, h))
		return -1;
	/* messages */
	if (G("-u rsa4096@example.test -o m_rsa4096 --sign payload.json", d,
	      h) ||
	    G("-u rsa2048@example.test --compress-algo zip --digest-algo "
	      "SHA512 -o m_rsa2048_zip512 --sign payload.json",
	      d, h) ||
	    G("-u ed@example.test --compress-algo zlib -o m_ed_zlib --sign "
	      "payload.json",
	      d, h) ||
	    G("-u p256@example.test --compress-algo none --digest-algo SHA256 "
	      "-o m_p256_none --sign payload.json",
	      d, h) ||
	    G("-u p256@example.test --armor -o m_p256_armor --sign "
	      "payload.json",
	      d, h) ||
	    G("-u sub@example.test -o m_sub --sign payload.json", d, h) ||
	    G("-u rsa2048@example.test --digest-algo SHA1 -o m_sha1 --sign "
	      "payload.json 2>/dev/null",
	      d, h) ||
	    G("-u ed@example.test --default-sig-expire 1d -o m_sigexp --sign "
	      "payload.json",
	      d, h) ||
	    G("-u p384@example.test --digest-algo SHA384 -o m_p384 --sign "
	      "payload.json",
	      d, h) ||
	    G("-u ed@example.test --textmode -o m_text --sign payload.json", d,
	      h) ||
	    G("-u rsa2048@example.test -u ed@example.test -o m_two --sign "
	      "payload.json",
	      d, h))
		return -1;
	/* a newer self-signature extends the P-256 key's expiry (made
	 * "tomorrow" so it is the most recent) */
	if (G("--faked-system-time %llu --quick-set-expire %s 3y 2>/dev/null",
	      d, h, (unsigned long long)(fx.t0 + 86400), fx.fpr_p256) ||
	    G("--faked-system-time %llu --export p256@example.test > "
	      "kr_p256_ext 2>/dev/null",
	      d, h, (unsigned long long)(fx.t0 + 86400)))
		return -1;
	/* revoke RSA 2048 with the revocation certificate gpg made at
	 * generation */
	if (al_test_sh(
	        "sed 's/^:-----BEGIN/-----BEGIN/' %s/openpgp-revocs.d/%s.rev > "
	        "%s/rsa2048.rev",
	        h, fx.fpr_rsa2048, d) ||
	    G("--import rsa2048.rev 2>/dev/null", d, h) ||
	    G("--export rsa2048@example.test > kr_rsa2048_revoked", d, h))
		return -1;
	/* revoke the signing subkey (0x28) through --edit-key */
	if (G("-u rsa4096@example.test --digest-algo SHA224 -o m_sha224 --sign "
	      "payload.json",
	      d, h) ||
	    al_test_sh("printf 'key 1\\nrevkey\\ny\\n0\\n\\ny\\nsave\\n' | "
	               "GNUPGHOME=%s " GPG " --command-fd 0 --edit-key %s "
	               ">/dev/null 2>&1",
	               h, fx.fpr_sub) ||
	    G("--export sub@example.test > kr_sub_revoked", d, h))
		return -1;
	/* SHA-1 self-signatures made before and after 2023-02-01 (gpg
	 * --cert-digest-algo SHA1 at a faked time); a signature made two years
	 * on with the extended P-256 key (after the old copy expired); an
	 * Ed25519 key revoked as "superseded" one day on, with signatures
	 * made before and after that */
	if (G("--faked-system-time 20200101T000000 --cert-digest-algo SHA1 "
	      "--quick-gen-key 'Old <old@example.test>' rsa2048 sign never "
	      "2>/dev/null",
	      d, h) ||
	    G("--faked-system-time 20240301T000000 --cert-digest-algo SHA1 "
	      "--quick-gen-key 'Late <late@example.test>' rsa2048 sign never "
	      "2>/dev/null",
	      d, h) ||
	    G("--quick-gen-key 'Soft <soft@example.test>' ed25519 sign never",
	      d, h) ||
	    get_fpr(fx.fpr_old, "old@example.test", 0) ||
	    get_fpr(fx.fpr_late, "late@example.test", 0) ||
	    get_fpr(fx.fpr_soft, "soft@example.test", 0) ||
	    G("--export old@example.test > kr_sha1old", d, h) ||
	    G("--export late@example.test > kr_sha1late", d, h) ||
	    G("-u old@example.test --digest-algo SHA256 -o m_sha1old --sign "
	      "payload.json",
	      d, h) ||
	    G("-u late@example.test --digest-algo SHA256 -o m_sha1late --sign "
	      "payload.json 2>/dev/null",
	      d, h) ||
	    G("--faked-system-time %llu -u p256@example.test -o m_p256_late "
	      "--sign payload.json 2>/dev/null",
	      d, h, (unsigned long long)(fx.t0 + 2 * 366 * 86400)) ||
	    G("--export soft@example.test > kr_soft", d, h) ||
	    G("-u soft@example.test -o m_soft_before --sign payload.json", d,
	      h) ||
	    G("--faked-system-time %llu -u soft@example.test -o m_soft_after "
	      "--sign payload.json 2>/dev/null",
	      d, h, (unsigned long long)(fx.t0 + 2 * 86400)) ||
	    al_test_sh("cd %s && printf 'y\\n2\\n\\ny\\n' | GNUPGHOME=%s gpg "
	               "--no-tty --pinentry-mode loopback --passphrase '' "
	               "--command-fd 0 --faked-system-time %llu --armor -o "
	               "soft.rev --gen-revoke %s >/dev/null 2>&1",
	               d, h, (unsigned long long)(fx.t0 + 86400),
	               fx.fpr_soft) ||
	    G("--import soft.rev 2>/dev/null", d, h) ||
	    G("--export soft@example.test > kr_soft_revoked", d, h))
		return -1;
	if (slurp(&fx.kr_sha1old, d, "kr_sha1old") ||
	    slurp(&fx.kr_sha1late, d, "kr_sha1late") ||
	    slurp(&fx.m_sha1old, d, "m_sha1old") ||
	    slurp(&fx.m_sha1late, d, "m_sha1late") ||
	    slurp(&fx.m_p256_late, d, "m_p256_late") ||
	    slurp(&fx.kr_soft, d, "kr_soft") ||
	    slurp(&fx.kr_soft_revoked, d, "kr_soft_revoked") ||
	    slurp(&fx.m_soft_before, d, "m_soft_before") ||
	    slurp(&fx.m_soft_after, d, "m_soft_after"))
		return -1;
	if (slurp(&fx.kr_rsa4096, d, "kr_rsa4096") ||
	    slurp(&fx.kr_rsa2048, d, "kr_rsa2048") ||
	    slurp(&fx.kr_ed, d, "kr_ed") || slurp(&fx.kr_p256, d, "kr_p256") ||
	    slurp(&fx.kr_p256_ext, d, "kr_p256_ext") ||
	    slurp(&fx.kr_sub, d, "kr_sub") || slurp(&fx.kr_all, d, "kr_all") ||
	    slurp(&fx.kr_armored, d, "kr_armored") ||
	    slurp(&fx.kr_rsa2048_revoked, d, "kr_rsa2048_revoked") ||
	    slurp(&fx.m_rsa4096, d, "m_rsa4096") ||
	    slurp(&fx.m_rsa2048_zip512, d, "m_rsa2048_zip512") ||
	    slurp(&fx.m_ed_zlib, d, "m_ed_zlib") ||
	    slurp(&fx.m_p256_none, d, "m_p256_none") ||
	    slurp(&fx.m_p256_armor, d, "m_p256_armor") ||
	    slurp(&fx.m_sub, d, "m_sub") || slurp(&fx.m_sha1, d, "m_sha1") ||
	    slurp(&fx.m_sigexp, d, "m_sigexp") ||
	    slurp(&fx.m_two, d, "m_two") || slurp(&fx.kr_p384, d, "kr_p384") ||
	    slurp(&fx.kr_ed_asc, d, "kr_ed_asc") ||
	    slurp(&fx.kr_rsa4096_asc, d, "kr_rsa4096_asc") ||
	    slurp(&fx.m_p384, d, "m_p384") || slurp(&fx.m_text, d, "m_text") ||
	    slurp(&fx.kr_sub_revoked, d, "kr_sub_revoked") ||
	    slurp(&fx.m_sha224, d, "m_sha224"))
		return -1;
	return 0;
}

static void free_fixtures(void)
{
	blob *all[] = {&fx.kr_rsa4096,
	               &fx.kr_rsa2048,
	               &fx.kr_ed,
	               &fx.kr_p256,
	               &fx.kr_p256_ext,
	               &fx.kr_sub,
	               &fx.kr_all,
	               &fx.kr_armored,
	               &fx.kr_rsa2048_revoked,
	               &fx.m_rsa4096,
	               &fx.m_rsa2048_zip512,
	               &fx.m_ed_zlib,
	               &fx.m_p256_none,
	               &fx.m_sub,
	               &fx.m_sha1,
	               &fx.m_sigexp,
	               &fx.m_two,
	               &fx.m_p256_armor,
	               &fx.kr_p384,
	               &fx.kr_ed_asc,
	               &fx.kr_rsa4096_asc,
	               &fx.m_p384,
	               &fx.m_text,
	               &fx.kr_sub_revoked,
	               &fx.m_sha224,
	               &fx.kr_sha1old,
	               &fx.kr_sha1late,
	               &fx.m_sha1old,
	               &fx.m_sha1late,
	               &fx.m_p256_late,
	               &fx.kr_soft,
	               &fx.kr_soft_revoked,
	               &fx.m_soft_before,
	               &fx.m_soft_after};
	size_t i;

	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		free_blob(all[i]);
}

/* 1 when gpg fixtures are there; 0 (test skipped, said once) otherwise. */
static int have_fx(void)
{
	if (fx.ready == 0) {
		fx.ready = make_fixtures() == 0 ? 1 : -1;
		atexit(free_fixtures);
		if (fx.ready < 0 &&
		    system("command -v gpg >/dev/null 2>&1") == 0)
			CU_FAIL(
			    "gpg is installed but making the fixtures failed");
	}
	return fx.ready > 0;
}

/* Load keyring bytes (with keyring flags), verify msg; returns the status;
 * lit gets the literal. */
static int verify_flags(const blob *kr_bytes, unsigned flags, const uint8_t *m,
                        size_t n, uint64_t now, al_buf *lit, al_pgp_result *res)
{
	al_pgp_keyring *kr = NULL;
	int rc;

	rc = al_pgp_keyring_load(&kr, kr_bytes->p, kr_bytes->n, "test keyring");
	if (rc < 0) {
		fprintf(stderr, "keyring load failed: %s\n",
		        al_error_message());
		return 1000 + rc;
	}
	al_pgp_keyring_set_flags(kr, flags);
	rc = al_pgp_verify(res, lit, kr, m, n, now);
	al_pgp_keyring_free(kr);
	return rc;
}

static int verify_with(const blob *kr_bytes, const uint8_t *m, size_t n,
                       uint64_t now, al_buf *lit, al_pgp_result *res)
{
	return verify_flags(kr_bytes, 0, m, n, now, lit, res);
}

/* First occurrence of needle in p[0..n) or NULL (memmem is a GNU extension). */
static uint8_t *find_bytes(uint8_t *p, size_t n, const char *needle, size_t k)
{
	size_t i;

	for (i = 0; k <= n && i <= n - k; i++)
		if (memcmp(p + i, needle, k) == 0)
			return p + i;
	return NULL;
}

static int msg_contains(const char *s)
{
	return strstr(al_error_message(), s) != NULL;
}

/* Valid message: accepted with exactly the payload bytes. */
static void check_ok(const blob *kr, const blob *m, uint64_t now,
                     const char *want_fpr, int want_hash)
{
	al_buf lit = AL_BUF_INIT(1 << 20);
	al_pgp_result res = AL_PGP_RESULT_INIT;
	int rc;

	rc = verify_with(kr, m->p, m->n, now, &lit, &res);
	if (rc != 0)
		fprintf(stderr, "verify failed: %s\n", al_error_message());
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(lit.len, strlen(payload));
	CU_ASSERT(lit.len == strlen(payload) &&
	          memcmp(lit.ptr, payload, lit.len) == 0);
	if (want_fpr != NULL)
		CU_ASSERT_STRING_EQUAL(res.fingerprint, want_fpr);
	if (want_hash != 0)
		CU_ASSERT_EQUAL(res.hash_algo, want_hash);
	if (rc == 0) {
		CU_ASSERT_EQUAL(res.sig_version, 4);
		CU_ASSERT(res.created >= fx.t0 - 5 &&
		          res.created <= (uint64_t)time(NULL) + 5);
	}
	al_buf_free(&lit);
}

/* Failing message: the exact code, a message containing want, no literal
 * written. */
static void check_fail(const blob *kr, const uint8_t *m, size_t n, uint64_t now,
                       int want_rc, const char *want)
{
	al_buf lit = AL_BUF_INIT(1 << 20);
	int rc = verify_with(kr, m, n, now, &lit, NULL);

	if (rc != want_rc || (want != NULL && !msg_contains(want)))
		fprintf(stderr, "got %d '%s', wanted %d '%s'\n", rc,
		        al_error_message(), want_rc, want ? want : "");
	CU_ASSERT_EQUAL(rc, want_rc);
	if (want != NULL)
		CU_ASSERT(msg_contains(want));
	CU_ASSERT_EQUAL(lit.len, 0);
	al_buf_free(&lit);
}

static void test_pgp__accepts_rsa4096_default_compression(void)
{
	if (!have_fx())
		return;
	check_ok(&fx.kr_rsa4096, &fx.m_rsa4096, 0, fx.fpr_rsa4096, 0);
}

static void test_pgp__accepts_rsa2048_zip_sha512(void)
{
	if (!have_fx())
		return;
	check_ok(&fx.kr_rsa2048, &fx.m_rsa2048_zip512, 0, fx.fpr_rsa2048, 10);
}

static void test_pgp__accepts_ed25519_zlib(void)
{
	if (!have_fx())
		return;
	check_ok(&fx.kr_ed, &fx.m_ed_zlib, 0, fx.fpr_ed, 0);
}

static void test_pgp__accepts_p256_uncompressed_sha256(void)
{
	if (!have_fx())
		return;
	check_ok(&fx.kr_p256, &fx.m_p256_none, 0, fx.fpr_p256, 8);
}

static void test_pgp__accepts_armored_message(void)
{
	if (!have_fx())
		return;
	check_ok(&fx.kr_p256, &fx.m_p256_armor, 0, fx.fpr_p256, 0);
}

static void test_pgp__accepts_any_key_of_a_multi_key_keyring(void)
{
	if (!have_fx())
		return;
	check_ok(&fx.kr_all, &fx.m_rsa4096, 0, fx.fpr_rsa4096, 0);
	check_ok(&fx.kr_all, &fx.m_ed_zlib, 0, fx.fpr_ed, 0);
	check_ok(&fx.kr_armored, &fx.m_p256_none, 0, fx.fpr_p256, 0);
	check_ok(&fx.kr_armored, &fx.m_rsa2048_zip512, 0, fx.fpr_rsa2048, 0);
}

static void test_pgp__keyring_add_accumulates_files(void)
{
	al_pgp_keyring *kr = NULL;
	al_buf lit = AL_BUF_INIT(1 << 20);

	if (!have_fx())
		return;
	CU_ASSERT_EQUAL(al_pgp_keyring_load(&kr, fx.kr_ed.p, fx.kr_ed.n, "ed"),
	                0);
	CU_ASSERT_EQUAL(
	    al_pgp_verify(NULL, &lit, kr, fx.m_rsa4096.p, fx.m_rsa4096.n, 0),
	    AL_EVERIFY);
	CU_ASSERT_EQUAL(
	    al_pgp_keyring_add(kr, fx.kr_rsa4096.p, fx.kr_rsa4096.n, "rsa"), 0);
	CU_ASSERT_EQUAL(al_pgp_keyring_count(kr), 2);
	CU_ASSERT_EQUAL(
	    al_pgp_verify(NULL, &lit, kr, fx.m_rsa4096.p, fx.m_rsa4096.n, 0),
	    0);
	CU_ASSERT_EQUAL(
	    al_pgp_verify(NULL, &lit, kr, fx.m_ed_zlib.p, fx.m_ed_zlib.n, 0),
	    0);
	CU_ASSERT_EQUAL(lit.len, 2 * strlen(payload));
	al_pgp_keyring_free(kr);
	al_buf_free(&lit);
}

static void test_pgp__accepts_signing_subkey(void)
{
	al_buf lit = AL_BUF_INIT(1 << 20);
	al_pgp_result res = AL_PGP_RESULT_INIT;
	int rc;

	if (!have_fx())
		return;
	rc = verify_with(&fx.kr_sub, fx.m_sub.p, fx.m_sub.n, 0, &lit, &res);
	CU_ASSERT_EQUAL(rc, 0);
	if (rc == 0) {
		CU_ASSERT_STRING_EQUAL(res.fingerprint, fx.fpr_subkey);
		CU_ASSERT_STRING_EQUAL(res.primary_fingerprint, fx.fpr_sub);
	}
	CU_ASSERT(lit.len == strlen(payload) &&
	          memcmp(lit.ptr, payload, lit.len) == 0);
	al_buf_free(&lit);
}

/* The bytes of m with the first occurrence of the payload's "quay.io" changed.
 */
static void test_pgp__rejects_tampered_payload(void)
{
	blob m = {NULL, 0};
	uint8_t *hit;

	if (!have_fx())
		return;
	m.n = fx.m_p256_none.n;
	m.p = malloc(m.n);
	CU_ASSERT_PTR_NOT_NULL(m.p);
	if (m.p == NULL)
		return;
	memcpy(m.p, fx.m_p256_none.p, m.n);
	hit = find_bytes(m.p, m.n, "quay.io", 7);
	CU_ASSERT_PTR_NOT_NULL(hit);
	if (hit != NULL) {
		hit[0] = 'Q';
		check_fail(&fx.kr_p256, m.p, m.n, 0, AL_EVERIFY,
		           "bad signature by key 0x");
	}
	free_blob(&m);
}

static void test_pgp__rejects_unknown_key(void)
{
	char want[64];

	if (!have_fx())
		return;
	snprintf(want, sizeof(want), "signed by unknown key 0x%.16s",
	         fx.fpr_rsa2048 + 24);
	check_fail(&fx.kr_ed, fx.m_rsa2048_zip512.p, fx.m_rsa2048_zip512.n, 0,
	           AL_EVERIFY, want);
}

static void test_pgp__rejects_sha1(void)
{
	if (!have_fx())
		return;
	check_fail(&fx.kr_rsa2048, fx.m_sha1.p, fx.m_sha1.n, 0, AL_EVERIFY,
	           "hash algorithm SHA-1 is not accepted");
}

/* Like check_fail, with keyring flags. */
static void check_fail_flags(const blob *kr, unsigned flags, const blob *m,
                             uint64_t now, int want_rc, const char *want)
{
	al_buf lit = AL_BUF_INIT(1 << 20);
	int rc = verify_flags(kr, flags, m->p, m->n, now, &lit, NULL);

	if (rc != want_rc || (want != NULL && !msg_contains(want)))
		fprintf(stderr, "got %d '%s', wanted %d '%s'\n", rc,
		        al_error_message(), want_rc, want ? want : "");
	CU_ASSERT_EQUAL(rc, want_rc);
	if (want != NULL)
		CU_ASSERT(msg_contains(want));
	CU_ASSERT_EQUAL(lit.len, 0);
	al_buf_free(&lit);
}

/* RFC 9580: a signature made while the key was valid stays valid after the
 * key expired; --strict-expiry (AL_PGP_STRICT_EXPIRY) refuses it. */
static void test_pgp__expiry_is_judged_at_signing_time(void)
{
	al_buf lit = AL_BUF_INIT(1 << 20);
	char want[64];

	if (!have_fx())
		return;
	/* signed at t0, the key expired at t0 + 1y: valid two years on */
	check_ok(&fx.kr_p256, &fx.m_p256_none, fx.t0 + 2 * 366 * 86400, NULL,
	         0);
	CU_ASSERT_EQUAL(verify_flags(&fx.kr_p256, AL_PGP_STRICT_EXPIRY,
	                             fx.m_p256_none.p, fx.m_p256_none.n,
	                             fx.t0 + 300 * 86400, &lit, NULL),
	                0);
	snprintf(want, sizeof(want), "key 0x%.16s expired on ",
	         fx.fpr_p256 + 24);
	check_fail_flags(&fx.kr_p256, AL_PGP_STRICT_EXPIRY, &fx.m_p256_none,
	                 fx.t0 + 2 * 366 * 86400, AL_EVERIFY, want);
	CU_ASSERT(msg_contains("strict expiry"));
	/* signed at t0 + 2y: after this copy's expiry, whatever now is */
	check_fail_flags(&fx.kr_p256, 0, &fx.m_p256_late, fx.t0 + 100,
	                 AL_EVERIFY, "before it made this signature");
	check_fail_flags(&fx.kr_p256, 0, &fx.m_p256_late,
	                 fx.t0 + 2 * 366 * 86400 + 100, AL_EVERIFY, want);
	al_buf_free(&lit);
}

static void test_pgp__key_expiry_from_most_recent_self_signature(void)
{
	al_buf lit = AL_BUF_INIT(1 << 20);

	if (!have_fx())
		return;
	/* the extended key (3 years from tomorrow) is valid where the old one
	 * expired */
	CU_ASSERT_EQUAL(verify_flags(&fx.kr_p256_ext, 0, fx.m_p256_late.p,
	                             fx.m_p256_late.n,
	                             fx.t0 + 2 * 366 * 86400 + 100, &lit, NULL),
	                0);
	CU_ASSERT_EQUAL(verify_flags(&fx.kr_p256_ext, AL_PGP_STRICT_EXPIRY,
	                             fx.m_p256_none.p, fx.m_p256_none.n,
	                             fx.t0 + 2 * 366 * 86400, &lit, NULL),
	                0);
	check_fail_flags(&fx.kr_p256_ext, AL_PGP_STRICT_EXPIRY, &fx.m_p256_none,
	                 fx.t0 + 5 * 366 * 86400, AL_EVERIFY, "expired on");
	al_buf_free(&lit);
}

/* Load a then b into one keyring (or one file when b is NULL); verify m. */
static int verify_two(const blob *a, const blob *b, const blob *m, uint64_t now,
                      size_t *count, size_t *warnings)
{
	al_pgp_keyring *kr = NULL;
	int rc;

	if ((rc = al_pgp_keyring_load(&kr, a->p, a->n, "first")) < 0)
		return 1000 + rc;
	if (b != NULL &&
	    (rc = al_pgp_keyring_add(kr, b->p, b->n, "second")) < 0) {
		al_pgp_keyring_free(kr);
		return 1000 + rc;
	}
	rc = al_pgp_verify(NULL, NULL, kr, m->p, m->n, now);
	if (count != NULL)
		*count = al_pgp_keyring_count(kr);
	if (warnings != NULL)
		*warnings = al_pgp_keyring_warning_count(kr);
	al_pgp_keyring_free(kr);
	return rc;
}

/* Copies of one key merge (gpg's union of self-signatures): the newest
 * self-signature decides, whatever the order of files or of copies in one
 * file. */
static void test_pgp__copies_of_a_key_merge_in_any_order(void)
{
	uint64_t now = fx.t0 + 2 * 366 * 86400 + 100;
	blob both = {NULL, 0};
	size_t count = 0;

	if (!have_fx())
		return;
	CU_ASSERT_EQUAL(verify_two(&fx.kr_p256, &fx.kr_p256_ext,
	                           &fx.m_p256_late, now, &count, NULL),
	                0);
	CU_ASSERT_EQUAL(count, 1);
	CU_ASSERT_EQUAL(verify_two(&fx.kr_p256_ext, &fx.kr_p256,
	                           &fx.m_p256_late, now, &count, NULL),
	                0);
	CU_ASSERT_EQUAL(count, 1);
	/* stale and fresh copies in one file, both orders */
	both.n = fx.kr_p256.n + fx.kr_p256_ext.n;
	both.p = malloc(both.n);
	if (both.p == NULL) {
		CU_FAIL("out of memory");
		return;
	}
	memcpy(both.p, fx.kr_p256.p, fx.kr_p256.n);
	memcpy(both.p + fx.kr_p256.n, fx.kr_p256_ext.p, fx.kr_p256_ext.n);
	CU_ASSERT_EQUAL(
	    verify_two(&both, NULL, &fx.m_p256_late, now, &count, NULL), 0);
	CU_ASSERT_EQUAL(count, 1);
	memcpy(both.p, fx.kr_p256_ext.p, fx.kr_p256_ext.n);
	memcpy(both.p + fx.kr_p256_ext.n, fx.kr_p256.p, fx.kr_p256.n);
	CU_ASSERT_EQUAL(
	    verify_two(&both, NULL, &fx.m_p256_late, now, &count, NULL), 0);
	CU_ASSERT_EQUAL(count, 1);
	free_blob(&both);
	/* a subkey and a revocation in either copy count */
	CU_ASSERT_EQUAL(verify_two(&fx.kr_rsa2048_revoked, &fx.kr_rsa2048,
	                           &fx.m_rsa2048_zip512, 0, &count, NULL),
	                AL_EVERIFY);
	CU_ASSERT(msg_contains("is revoked"));
	CU_ASSERT_EQUAL(count, 1);
	CU_ASSERT_EQUAL(verify_two(&fx.kr_sub_revoked, &fx.kr_sub, &fx.m_sub, 0,
	                           &count, NULL),
	                AL_EVERIFY);
	CU_ASSERT(msg_contains("is revoked"));
	CU_ASSERT_EQUAL(count, 2);
}

/* A warning that contains every one of a..c (c may be NULL). */
static int has_warning(const al_pgp_keyring *kr, const char *a, const char *b,
                       const char *c)
{
	size_t i;

	for (i = 0; i < al_pgp_keyring_warning_count(kr); i++) {
		const char *w = al_pgp_keyring_warning(kr, i);
		if (strstr(w, a) != NULL && strstr(w, b) != NULL &&
		    (c == NULL || strstr(w, c) != NULL))
			return 1;
	}
	return 0;
}

/* SHA-1 self-signatures made before 2023-02-01 are accepted with a warning
 * naming the key; later ones are refused saying why; SHA-1 data
 * signatures never verify. */
static void test_pgp__sha1_self_signatures_before_2023(void)
{
	al_pgp_keyring *kr = NULL;

	if (!have_fx())
		return;
	CU_ASSERT_EQUAL(al_pgp_keyring_load(&kr, fx.kr_sha1old.p,
	                                    fx.kr_sha1old.n, "old.gpg"),
	                0);
	CU_ASSERT_EQUAL(
	    al_pgp_verify(NULL, NULL, kr, fx.m_sha1old.p, fx.m_sha1old.n, 0),
	    0);
	CU_ASSERT(has_warning(kr, fx.fpr_old, "SHA-1 self-signature",
	                      "old@example.test"));
	CU_ASSERT(has_warning(kr, "'old.gpg'", "2020-01-01", NULL));
	al_pgp_keyring_free(kr);
	kr = NULL;
	CU_ASSERT_EQUAL(al_pgp_keyring_load(&kr, fx.kr_sha1late.p,
	                                    fx.kr_sha1late.n, "late.gpg"),
	                0);
	CU_ASSERT_EQUAL(
	    al_pgp_verify(NULL, NULL, kr, fx.m_sha1late.p, fx.m_sha1late.n, 0),
	    AL_EVERIFY);
	CU_ASSERT(msg_contains("has no valid self-signature: its "
	                       "self-signature uses SHA-1 and was made on "
	                       "2024-03-01"));
	CU_ASSERT(has_warning(kr, fx.fpr_late, "is not usable", "SHA-1"));
	al_pgp_keyring_free(kr);
	/* a SHA-1 data signature by a key with a good self-signature */
	check_fail(&fx.kr_rsa2048, fx.m_sha1.p, fx.m_sha1.n, 0, AL_EVERIFY,
	           "hash algorithm SHA-1 is not accepted");
}

/* A key revoked as superseded (a soft reason, RFC 9580 5.2.3.31) is refused
 * for signatures made before the revocation too, as x/crypto/openpgp (the
 * cluster's verifier) refuses every revoked key; the message says which. */
static void test_pgp__soft_revocation_refuses_older_signatures(void)
{
	al_buf lit = AL_BUF_INIT(1 << 20);
	char want[64];

	if (!have_fx())
		return;
	snprintf(want, sizeof(want), "key 0x%.16s is revoked (superseded",
	         fx.fpr_soft + 24);
	check_fail_flags(&fx.kr_soft_revoked, 0, &fx.m_soft_before, 0,
	                 AL_EVERIFY, want);
	check_fail_flags(&fx.kr_soft_revoked, 0, &fx.m_soft_after, 0,
	                 AL_EVERIFY, want);
	/* in either order with the unrevoked copy */
	CU_ASSERT_EQUAL(verify_two(&fx.kr_soft, &fx.kr_soft_revoked,
	                           &fx.m_soft_before, 0, NULL, NULL),
	                AL_EVERIFY);
	CU_ASSERT_EQUAL(verify_two(&fx.kr_soft_revoked, &fx.kr_soft,
	                           &fx.m_soft_before, 0, NULL, NULL),
	                AL_EVERIFY);
	/* the unrevoked copy alone verifies both */
	CU_ASSERT_EQUAL(verify_flags(&fx.kr_soft, 0, fx.m_soft_before.p,
	                             fx.m_soft_before.n, 0, &lit, NULL),
	                0);
	CU_ASSERT_EQUAL(verify_flags(&fx.kr_soft, 0, fx.m_soft_after.p,
	                             fx.m_soft_after.n, 0, &lit, NULL),
	                0);
	al_buf_free(&lit);
}

/* tests/data/redhat/NAME into b. */
static int redhat_fixture(blob *b, const char *name)
{
	char dir[1024];
	int k = snprintf(dir, sizeof(dir), "%s/tests/data/redhat",
	                 al_test_source_dir());

	if (k < 0 || (size_t)k >= sizeof(dir) || slurp(b, dir, name) != 0) {
		CU_FAIL("missing fixture under tests/data/redhat");
		return -1;
	}
	return 0;
}

/* The Red Hat release key as library-go and oc-mirror copy it (SHA-1
 * self-signature, 2009) and as cluster-update-keys ships it (SHA-256):
 * each verifies the real 4.15.0 signature, and so do both together in
 * either order. */
static void test_pgp__redhat_release_key_as_copied(void)
{
	blob lg = {NULL, 0}, cuk = {NULL, 0}, ocm = {NULL, 0}, s415 = {NULL, 0},
	     v3 = {NULL, 0};
	al_pgp_keyring *kr = NULL;
	al_pgp_result res = AL_PGP_RESULT_INIT;
	size_t count = 0, nwarn = 0;

	if (redhat_fixture(&lg, "library-go-redhat.txt") ||
	    redhat_fixture(&cuk, "verifier-public-key-redhat-release") ||
	    redhat_fixture(&ocm, "oc-mirror-custom-ocp-sig-key.asc") ||
	    redhat_fixture(&s415, "ocp-release-4.15.0-x86_64.sig") ||
	    redhat_fixture(&v3, "rhel7-7.6-v3.sig"))
		goto out;
	CU_ASSERT_EQUAL(al_pgp_keyring_load(&kr, lg.p, lg.n, "redhat.txt"), 0);
	CU_ASSERT_EQUAL(al_pgp_verify(&res, NULL, kr, s415.p, s415.n, 0), 0);
	CU_ASSERT_STRING_EQUAL(res.fingerprint,
	                       "567E347AD0044ADE55BA8A5F199E2F91FD431D51");
	CU_ASSERT_EQUAL(res.sig_version, 4);
	CU_ASSERT(has_warning(kr, "567E347AD0044ADE55BA8A5F199E2F91FD431D51",
	                      "SHA-1 self-signature", "release key 2"));
	CU_ASSERT_EQUAL(al_pgp_verify(&res, NULL, kr, v3.p, v3.n, 0), 0);
	CU_ASSERT_EQUAL(res.sig_version, 3);
	al_pgp_keyring_free(kr);
	kr = NULL;
	CU_ASSERT_EQUAL(verify_two(&cuk, NULL, &s415, 0, &count, &nwarn), 0);
	CU_ASSERT_EQUAL(nwarn, 0);
	CU_ASSERT_EQUAL(verify_two(&lg, &cuk, &s415, 0, &count, &nwarn), 0);
	CU_ASSERT_EQUAL(count, 1);
	CU_ASSERT_EQUAL(nwarn, 0); /* the SHA-256 copy decides */
	CU_ASSERT_EQUAL(verify_two(&cuk, &lg, &s415, 0, &count, &nwarn), 0);
	CU_ASSERT_EQUAL(count, 1);
	CU_ASSERT_EQUAL(nwarn, 0);
	/* oc-mirror's copy: release key 2 and beta key 2, both SHA-1 */
	CU_ASSERT_EQUAL(verify_two(&ocm, NULL, &s415, 0, &count, &nwarn), 0);
	CU_ASSERT_EQUAL(count, 2);
	CU_ASSERT_EQUAL(nwarn, 2);
	CU_ASSERT_EQUAL(verify_two(&ocm, &cuk, &s415, 0, &count, &nwarn), 0);
	CU_ASSERT_EQUAL(nwarn, 1); /* beta key 2 still SHA-1 only */
out:
	free_blob(&lg);
	free_blob(&cuk);
	free_blob(&ocm);
	free_blob(&s415);
	free_blob(&v3);
}

static void test_pgp__rejects_expired_signature(void)
{
	if (!have_fx())
		return;
	check_ok(&fx.kr_ed, &fx.m_sigexp, 0, fx.fpr_ed, 0);
	check_fail(&fx.kr_ed, fx.m_sigexp.p, fx.m_sigexp.n, fx.t0 + 2 * 86400,
	           AL_EVERIFY, "signature expired on ");
}

static void test_pgp__rejects_revoked_key(void)
{
	char want[64];

	if (!have_fx())
		return;
	snprintf(want, sizeof(want), "key 0x%.16s is revoked",
	         fx.fpr_rsa2048 + 24);
	check_fail(&fx.kr_rsa2048_revoked, fx.m_rsa2048_zip512.p,
	           fx.m_rsa2048_zip512.n, 0, AL_EVERIFY, want);
}

static void test_pgp__rejects_two_signatures(void)
{
	if (!have_fx())
		return;
	check_fail(&fx.kr_all, fx.m_two.p, fx.m_two.n, 0, AL_EVERIFY,
	           "message has 2 signature packets");
}

static void test_pgp__rejects_trailing_garbage(void)
{
	static const uint8_t junk[] = "\x00\x01junk after the message";
	const blob *ms[] = {&fx.m_rsa4096, &fx.m_p256_none, &fx.m_ed_zlib};
	blob j = {(uint8_t *)(uintptr_t)junk, sizeof(junk) - 1}, m;
	size_t i;

	if (!have_fx())
		return;
	for (i = 0; i < 3; i++) {
		if (cat_blobs(&m, ms[i], &j) != 0)
			continue;
		check_fail(&fx.kr_all, m.p, m.n, 0, AL_EVERIFY,
		           "trailing data after the message");
		free_blob(&m);
		/* a second complete message is trailing data too */
		if (cat_blobs(&m, ms[i], ms[i]) != 0)
			continue;
		check_fail(&fx.kr_all, m.p, m.n, 0, AL_EVERIFY,
		           "trailing data after the message");
		free_blob(&m);
	}
}

static void test_pgp__rejects_truncated_messages(void)
{
	const blob *ms[] = {&fx.m_rsa4096, &fx.m_p256_none, &fx.m_ed_zlib};
	size_t i, j;

	if (!have_fx())
		return;
	for (i = 0; i < 3; i++) {
		const blob *m = ms[i];
		size_t cuts[] = {1,         2,        3,
		                 10,        m->n / 4, m->n / 2,
		                 m->n - 40, m->n - 2, m->n - 1};
		for (j = 0; j < sizeof(cuts) / sizeof(cuts[0]); j++)
			check_fail(&fx.kr_all, m->p, cuts[j], 0, AL_EPARSE,
			           NULL);
	}
	/* cut at every byte of the uncompressed message: never accepted, never
	 * a crash */
	for (j = 1; j < fx.m_p256_none.n; j++) {
		int rc = verify_with(&fx.kr_p256, fx.m_p256_none.p, j, 0, NULL,
		                     NULL);
		CU_ASSERT(rc == AL_EPARSE);
		if (rc != AL_EPARSE)
			fprintf(stderr, "cut at %zu: %d %s\n", j, rc,
			        al_error_message());
	}
	check_fail(&fx.kr_all, fx.m_p256_none.p, 0, 0, AL_EPARSE, NULL);
}

static void test_pgp__truncated_packet_names_offset(void)
{
	if (!have_fx())
		return;
	check_fail(&fx.kr_p256, fx.m_p256_none.p, fx.m_p256_none.n - 1, 0,
	           AL_EPARSE, "truncated packet at offset ");
}

static void test_pgp__armored_keyring_bad_crc_refused(void)
{
	al_pgp_keyring *kr = NULL;
	blob b = {NULL, 0};
	char *crc = NULL, *p;
	int rc;

	if (!have_fx())
		return;
	if (cat_blobs(&b, &fx.kr_armored,
	              &(blob){(uint8_t *)(uintptr_t) "", 0}) != 0)
		return;
	b.p[b.n] = 0;
	for (p = (char *)b.p; (p = strstr(p, "\n=")) != NULL; p++) {
		if (strlen(p) > 6 && p[6] == '\n') {
			crc = p + 2;
			break;
		}
	}
	CU_ASSERT_PTR_NOT_NULL(crc);
	if (crc != NULL) {
		crc[0] = crc[0] == 'A' ? 'B' : 'A';
		rc = al_pgp_keyring_load(&kr, b.p, b.n, "bad.asc");
		CU_ASSERT_EQUAL(rc, AL_EPARSE);
		CU_ASSERT(msg_contains("checksum"));
		CU_ASSERT(msg_contains("bad.asc"));
		CU_ASSERT_PTR_NULL(kr);
	}
	free_blob(&b);
}

static void test_pgp__keyring_rejects_garbage(void)
{
	al_pgp_keyring *kr = NULL;
	static const uint8_t bin[] = {0x99, 0x01};

	CU_ASSERT_EQUAL(
	    al_pgp_keyring_load(&kr, (const uint8_t *)"hello world\n", 12, "x"),
	    AL_EPARSE);
	CU_ASSERT_EQUAL(al_pgp_keyring_load(&kr, bin, sizeof(bin), "x"),
	                AL_EPARSE);
	CU_ASSERT(msg_contains("truncated packet at offset 0"));
	CU_ASSERT_PTR_NULL(kr);
}

static void test_pgp__keyring_of_unsupported_keys_refused(void)
{
	al_pgp_keyring *kr = NULL;
	/* a v5 key, then a v4 DSA key (algorithm 17): nothing we can verify
	 * with */
	static const uint8_t v5[] = {0xC6, 0x0A, 5, 0x60, 0, 0,
	                             0,    22,   0, 0,    0, 0};
	static const uint8_t dsa[] = {0xC6, 0x08, 4, 0x60, 0, 0, 0, 17, 0, 1};

	CU_ASSERT_EQUAL(al_pgp_keyring_load(&kr, v5, sizeof(v5), "v5.gpg"),
	                AL_EUNSUPPORTED);
	CU_ASSERT(msg_contains("no supported public key"));
	CU_ASSERT_EQUAL(al_pgp_keyring_load(&kr, dsa, sizeof(dsa), "dsa.gpg"),
	                AL_EUNSUPPORTED);
	CU_ASSERT_PTR_NULL(kr);
}

/* ------------------------------------------------- crafted packets */

static int put_new_pkt(al_buf *b, int tag, const uint8_t *body, size_t len)
{
	uint8_t h[6] = {(uint8_t)(0xC0 | tag), 0xFF,
	                (uint8_t)(len >> 24),  (uint8_t)(len >> 16),
	                (uint8_t)(len >> 8),   (uint8_t)len};

	if (al_buf_append(b, h, 6) < 0 || al_buf_append(b, body, len) < 0)
		return -1;
	return 0;
}

static int put_mpi(al_buf *b, const uint8_t *p, size_t n)
{
	uint8_t h[2];
	size_t bits;
	int i;

	while (n > 0 && p[0] == 0) {
		p++;
		n--;
	}
	bits = n * 8;
	for (i = 7; n > 0 && i >= 0 && !(p[0] & (1u << i)); i--)
		bits--;
	h[0] = (uint8_t)(bits >> 8);
	h[1] = (uint8_t)bits;
	return al_buf_append(b, h, 2) < 0 || al_buf_append(b, p, n) < 0 ? -1
	                                                                : 0;
}

static int put_be32(al_buf *b, uint32_t v)
{
	uint8_t x[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16),
	                (uint8_t)(v >> 8), (uint8_t)v};

	return al_buf_append(b, x, 4);
}

/* A crafted key (RSA 2048 or Ed25519 as RFC 9580 algorithm 27) and what the
 * tests need of it. */
typedef struct crafted {
	int algo;
	EVP_PKEY *pkey;
	al_buf keyring;
	uint8_t fpr[20];
	uint8_t keyid[8];
	uint32_t created;
} crafted;

static int rsa_sign(EVP_PKEY *pkey, const uint8_t *hash, size_t hlen,
                    uint8_t *sig, size_t *siglen)
{
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
	int ok = ctx != NULL && EVP_PKEY_sign_init(ctx) > 0 &&
	         EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) > 0 &&
	         EVP_PKEY_CTX_set_signature_md(ctx, EVP_sha256()) > 0 &&
	         EVP_PKEY_sign(ctx, sig, siglen, hash, hlen) > 0;

	EVP_PKEY_CTX_free(ctx);
	return ok ? 0 : -1;
}

/* Append the signature material over a SHA-256 hash: an MPI for RSA, 64 raw
 * bytes for Ed25519. */
static int put_sig_material(al_buf *b, const crafted *c, const uint8_t hash[32],
                            size_t *mpilen)
{
	uint8_t s[512];
	size_t slen = sizeof(s), i;
	EVP_MD_CTX *md;
	int ok;

	if (c->algo == 1) {
		if (rsa_sign(c->pkey, hash, 32, s, &slen) != 0)
			return -1;
		for (i = 0; i < slen && s[i] == 0; i++)
			;
		if (mpilen != NULL)
			*mpilen = slen - i;
		return put_mpi(b, s, slen);
	}
	if (c->algo == 19) {
		EVP_PKEY_CTX *ctx =
		    EVP_PKEY_CTX_new_from_pkey(NULL, c->pkey, NULL);
		const BIGNUM *r = NULL, *sv = NULL;
		const uint8_t *q = s;
		ECDSA_SIG *es = NULL;
		uint8_t rb[80], sb[80];
		int rl, sl;

		ok = ctx != NULL && EVP_PKEY_sign_init(ctx) > 0 &&
		     EVP_PKEY_sign(ctx, s, &slen, hash, 32) > 0 &&
		     (es = d2i_ECDSA_SIG(NULL, &q, (long)slen)) != NULL;
		EVP_PKEY_CTX_free(ctx);
		if (ok) {
			ECDSA_SIG_get0(es, &r, &sv);
			rl = BN_bn2bin(r, rb);
			sl = BN_bn2bin(sv, sb);
			ok = put_mpi(b, rb, (size_t)rl) == 0 &&
			     put_mpi(b, sb, (size_t)sl) == 0;
		}
		ECDSA_SIG_free(es);
		return ok ? 0 : -1;
	}
	md = EVP_MD_CTX_new();
	ok = md != NULL &&
	     EVP_DigestSignInit(md, NULL, NULL, NULL, c->pkey) == 1 &&
	     EVP_DigestSign(md, s, &slen, hash, 32) == 1 && slen == 64;
	EVP_MD_CTX_free(md);
	return ok ? al_buf_append(b, s, 64) : -1;
}

/* A key with a user ID and a v4 positive self-signature (SHA-256, flags
 * certify+sign). */
static int craft_key(crafted *c, int algo)
{
	al_buf body = AL_BUF_INIT(4096), uid = AL_BUF_INIT(256),
	       hashed = AL_BUF_INIT(256), sig = AL_BUF_INIT(4096);
	BIGNUM *n = NULL, *e = NULL;
	uint8_t nb[512], eb[16], hash[32], hdr[5];
	size_t nl, el;
	unsigned int fl = 0, hl = 0;
	EVP_MD_CTX *md = NULL;
	int rc = -1;
	static const char uidtxt[] = "Crafted <crafted@example.test>";

	memset(c, 0, sizeof(*c));
	c->algo = algo;
	al_buf_init(&c->keyring, 1 << 16);
	c->created = (uint32_t)time(NULL) - 3600;
	if (al_buf_append(&body, "\x04", 1) || put_be32(&body, c->created))
		goto out;
	if (algo == 1) {
		c->pkey = EVP_RSA_gen(2048);
		if (c->pkey == NULL ||
		    !EVP_PKEY_get_bn_param(c->pkey, OSSL_PKEY_PARAM_RSA_N,
		                           &n) ||
		    !EVP_PKEY_get_bn_param(c->pkey, OSSL_PKEY_PARAM_RSA_E, &e))
			goto out;
		nl = (size_t)BN_bn2bin(n, nb);
		el = (size_t)BN_bn2bin(e, eb);
		if (al_buf_append(&body, "\x01", 1) || put_mpi(&body, nb, nl) ||
		    put_mpi(&body, eb, el))
			goto out;
	} else if (algo == 19) {
		static const uint8_t oid[] = {5, 0x2B, 0x81, 0x04, 0x00, 0x23};
		c->pkey = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-521");
		if (c->pkey == NULL ||
		    !EVP_PKEY_get_octet_string_param(c->pkey,
		                                     OSSL_PKEY_PARAM_PUB_KEY,
		                                     nb, sizeof(nb), &nl) ||
		    al_buf_append(&body, "\x13", 1) ||
		    al_buf_append(&body, oid, sizeof(oid)) ||
		    put_mpi(&body, nb, nl))
			goto out;
	} else {
		nl = 32;
		c->pkey = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
		if (c->pkey == NULL ||
		    EVP_PKEY_get_raw_public_key(c->pkey, nb, &nl) != 1 ||
		    nl != 32 || al_buf_append(&body, "\x1b", 1) ||
		    al_buf_append(&body, nb, 32))
			goto out;
	}
	hdr[0] = 0x99;
	hdr[1] = (uint8_t)(body.len >> 8);
	hdr[2] = (uint8_t)body.len;
	md = EVP_MD_CTX_new();
	if (md == NULL || !EVP_DigestInit_ex(md, EVP_sha1(), NULL) ||
	    !EVP_DigestUpdate(md, hdr, 3) ||
	    !EVP_DigestUpdate(md, body.ptr, body.len) ||
	    !EVP_DigestFinal_ex(md, c->fpr, &fl))
		goto out;
	memcpy(c->keyid, c->fpr + 12, 8);
	if (al_buf_puts(&uid, uidtxt))
		goto out;
	/* hashed part: v4, 0x13, algo, SHA256, subpackets: creation time, key
	 * flags (certify+sign) */
	hdr[0] = (uint8_t)algo;
	if (al_buf_append(&hashed, "\x04\x13", 2) ||
	    al_buf_append(&hashed, hdr, 1) ||
	    al_buf_append(&hashed, "\x08\x00\x09\x05\x02", 5) ||
	    put_be32(&hashed, c->created) ||
	    al_buf_append(&hashed, "\x02\x1b\x03", 3))
		goto out;
	hdr[0] = 0x99;
	if (!EVP_DigestInit_ex(md, EVP_sha256(), NULL) ||
	    !EVP_DigestUpdate(md, hdr, 3) ||
	    !EVP_DigestUpdate(md, body.ptr, body.len))
		goto out;
	hdr[0] = 0xB4;
	hdr[1] = 0;
	hdr[2] = 0;
	hdr[3] = 0;
	hdr[4] = (uint8_t)uid.len;
	if (!EVP_DigestUpdate(md, hdr, 5) ||
	    !EVP_DigestUpdate(md, uid.ptr, uid.len) ||
	    !EVP_DigestUpdate(md, hashed.ptr, hashed.len) ||
	    !EVP_DigestUpdate(md, "\x04\xff\x00\x00\x00", 5))
		goto out;
	hdr[0] = (uint8_t)hashed.len;
	if (!EVP_DigestUpdate(md, hdr, 1) || !EVP_DigestFinal_ex(md, hash, &hl))
		goto out;
	/* unhashed: issuer key ID */
	if (al_buf_append(&sig, hashed.ptr, hashed.len) ||
	    al_buf_append(&sig, "\x00\x0a\x09\x10", 4) ||
	    al_buf_append(&sig, c->keyid, 8) || al_buf_append(&sig, hash, 2) ||
	    put_sig_material(&sig, c, hash, NULL))
		goto out;
	if (put_new_pkt(&c->keyring, 6, body.ptr, body.len) ||
	    put_new_pkt(&c->keyring, 13, uid.ptr, uid.len) ||
	    put_new_pkt(&c->keyring, 2, sig.ptr, sig.len))
		goto out;
	rc = 0;
out:
	EVP_MD_CTX_free(md);
	BN_free(n);
	BN_free(e);
	al_buf_free(&body);
	al_buf_free(&uid);
	al_buf_free(&hashed);
	al_buf_free(&sig);
	return rc;
}

/*
 * One-pass signature + literal + v4 binary signature over data by c, with
 * extra hashed subpackets and hash algorithm id hash_id written into the
 * packet (the material is always over SHA-256: tests of refused hashes
 * never get to it).
 */
static int craft_v4_message(al_buf *out, const crafted *c, const uint8_t *data,
                            size_t n, const uint8_t *extra, size_t extra_len,
                            int hash_id)
{
	al_buf lit = AL_BUF_INIT(1 << 20), sig = AL_BUF_INIT(4096),
	       hashed = AL_BUF_INIT(1024);
	uint8_t hash[32], ops[13] = {3, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1},
	                  h[6];
	unsigned int hl = 0;
	size_t sublen = 6 + 23 + extra_len;
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	int rc = -1;

	ops[2] = (uint8_t)hash_id;
	ops[3] = (uint8_t)c->algo;
	memcpy(ops + 4, c->keyid, 8);
	h[0] = 4;
	h[1] = 0;
	h[2] = (uint8_t)c->algo;
	h[3] = (uint8_t)hash_id;
	h[4] = (uint8_t)(sublen >> 8);
	h[5] = (uint8_t)sublen;
	if (al_buf_append(&hashed, h, 6) ||
	    al_buf_append(&hashed, "\x05\x02", 2) ||
	    put_be32(&hashed, (uint32_t)time(NULL) - 60) ||
	    al_buf_append(&hashed, "\x16\x21\x04", 3) ||
	    al_buf_append(&hashed, c->fpr, 20) ||
	    (extra_len > 0 && al_buf_append(&hashed, extra, extra_len)))
		goto out;
	h[0] = 4;
	h[1] = 0xff;
	h[2] = 0;
	h[3] = 0;
	h[4] = (uint8_t)(hashed.len >> 8);
	h[5] = (uint8_t)hashed.len;
	if (md == NULL || !EVP_DigestInit_ex(md, EVP_sha256(), NULL) ||
	    !EVP_DigestUpdate(md, data, n) ||
	    !EVP_DigestUpdate(md, hashed.ptr, hashed.len) ||
	    !EVP_DigestUpdate(md, h, 6) || !EVP_DigestFinal_ex(md, hash, &hl))
		goto out;
	if (al_buf_append(&lit, "b\x00\x00\x00\x00\x00", 6) ||
	    al_buf_append(&lit, data, n))
		goto out;
	if (al_buf_append(&sig, hashed.ptr, hashed.len) ||
	    al_buf_append(&sig, "\x00\x0a\x09\x10", 4) ||
	    al_buf_append(&sig, c->keyid, 8) || al_buf_append(&sig, hash, 2) ||
	    put_sig_material(&sig, c, hash, NULL))
		goto out;
	if (put_new_pkt(out, 4, ops, 13) ||
	    put_new_pkt(out, 11, lit.ptr, lit.len) ||
	    put_new_pkt(out, 2, sig.ptr, sig.len))
		goto out;
	rc = 0;
out:
	EVP_MD_CTX_free(md);
	al_buf_free(&lit);
	al_buf_free(&sig);
	al_buf_free(&hashed);
	return rc;
}

static void crafted_free(crafted *c)
{
	EVP_PKEY_free(c->pkey);
	al_buf_free(&c->keyring);
}

/*
 * One-pass signature + literal + V3 signature over data (Red Hat's layout),
 * appended to out. *mpilen receives the signature MPI's byte length.
 */
static int craft_v3_message(al_buf *out, const crafted *c, const uint8_t *data,
                            size_t n, size_t *mpilen)
{
	al_buf lit = AL_BUF_INIT(1 << 20), sig = AL_BUF_INIT(4096);
	uint8_t hash[32], ops[13] = {3, 0, 8, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1},
	                  tail[5];
	unsigned int hl = 0;
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	int rc = -1;

	tail[0] = 0x00;
	tail[1] = (uint8_t)(c->created >> 24);
	tail[2] = (uint8_t)(c->created >> 16);
	tail[3] = (uint8_t)(c->created >> 8);
	tail[4] = (uint8_t)c->created;
	/* V3: hash(data || sigtype || creation time) */
	if (md == NULL || !EVP_DigestInit_ex(md, EVP_sha256(), NULL) ||
	    !EVP_DigestUpdate(md, data, n) || !EVP_DigestUpdate(md, tail, 5) ||
	    !EVP_DigestFinal_ex(md, hash, &hl))
		goto out;
	memcpy(ops + 4, c->keyid, 8);
	if (al_buf_append(&lit, "b\x00\x00\x00\x00\x00", 6) ||
	    al_buf_append(&lit, data, n))
		goto out;
	if (al_buf_append(&sig, "\x03\x05", 2) ||
	    al_buf_append(&sig, tail, 5) || al_buf_append(&sig, c->keyid, 8) ||
	    al_buf_append(&sig, "\x01\x08", 2) ||
	    al_buf_append(&sig, hash, 2) ||
	    put_sig_material(&sig, c, hash, mpilen))
		goto out;
	if (put_new_pkt(out, 4, ops, 13) ||
	    put_new_pkt(out, 11, lit.ptr, lit.len) ||
	    put_new_pkt(out, 2, sig.ptr, sig.len))
		goto out;
	rc = 0;
out:
	EVP_MD_CTX_free(md);
	al_buf_free(&lit);
	al_buf_free(&sig);
	return rc;
}

static int verify_raw_kr(const al_buf *krb, const uint8_t *m, size_t n,
                         al_buf *lit, al_pgp_result *res)
{
	blob b = {krb->ptr, krb->len};

	return verify_with(&b, m, n, 0, lit, res);
}

static void test_pgp__accepts_v3_signature_with_short_mpi(void)
{
	crafted c;
	al_buf msg = AL_BUF_INIT(1 << 20), lit = AL_BUF_INIT(1 << 20);
	char data[64];
	size_t mpilen = 256;
	al_pgp_result res = AL_PGP_RESULT_INIT;
	int i, rc, k;

	if (craft_key(&c, 1) != 0) {
		CU_FAIL("cannot craft an RSA key");
		crafted_free(&c);
		return;
	}
	/* about one RSA 2048 signature in 256 is shorter than the modulus */
	for (i = 0; i < 4096 && mpilen == 256; i++) {
		k = snprintf(data, sizeof(data), "{\"payload\":%d}", i);
		al_buf_reset(&msg);
		if (k < 0 || craft_v3_message(&msg, &c, (const uint8_t *)data,
		                              (size_t)k, &mpilen) != 0)
			break;
	}
	CU_ASSERT(mpilen < 256);
	rc = verify_raw_kr(&c.keyring, msg.ptr, msg.len, &lit, &res);
	if (rc != 0)
		fprintf(stderr, "v3: %s\n", al_error_message());
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(res.sig_version, 3);
	CU_ASSERT_EQUAL(res.created, c.created);
	CU_ASSERT(lit.len == strlen(data) &&
	          memcmp(lit.ptr, data, lit.len) == 0);
	/* tampered */
	if (msg.len > 40) {
		uint8_t *hit = find_bytes(msg.ptr, msg.len, "payload", 7);
		if (hit != NULL) {
			hit[0] = 'P';
			al_buf_reset(&lit);
			CU_ASSERT_EQUAL(verify_raw_kr(&c.keyring, msg.ptr,
			                              msg.len, &lit, NULL),
			                AL_EVERIFY);
			CU_ASSERT(msg_contains("bad signature by key 0x"));
			CU_ASSERT_EQUAL(lit.len, 0);
		}
	}
	al_buf_free(&msg);
	al_buf_free(&lit);
	crafted_free(&c);
}

/* Wrap inner in a compressed data packet of algorithm algo (0 none, 1 ZIP, 2
 * ZLIB). */
static int wrap_compressed(al_buf *out, const uint8_t *inner, size_t n,
                           int algo)
{
	al_buf body = AL_BUF_INIT(64 << 20);
	uint8_t a = (uint8_t)algo;
	z_stream zs;
	uint8_t *z = NULL;
	size_t cap = compressBound((uLong)n) + 64;
	int rc = -1;

	if (al_buf_append(&body, &a, 1))
		goto out;
	if (algo == 0) {
		if (al_buf_append(&body, inner, n))
			goto out;
	} else {
		memset(&zs, 0, sizeof(zs));
		z = malloc(cap);
		if (z == NULL ||
		    deflateInit2(&zs, 9, Z_DEFLATED, algo == 1 ? -15 : 15, 8,
		                 Z_DEFAULT_STRATEGY) != Z_OK)
			goto out;
		zs.next_in = (Bytef *)(uintptr_t)inner;
		zs.avail_in = (uInt)n;
		zs.next_out = z;
		zs.avail_out = (uInt)cap;
		if (deflate(&zs, Z_FINISH) != Z_STREAM_END) {
			deflateEnd(&zs);
			goto out;
		}
		deflateEnd(&zs);
		if (al_buf_append(&body, z, zs.total_out))
			goto out;
	}
	rc = put_new_pkt(out, 8, body.ptr, body.len);
out:
	free(z);
	al_buf_free(&body);
	return rc;
}

static void test_pgp__compression_nesting_bombs_and_bzip2(void)
{
	crafted c;
	al_buf inner = AL_BUF_INIT(1 << 20), l1 = AL_BUF_INIT(1 << 20),
	       l2 = AL_BUF_INIT(1 << 20), l3 = AL_BUF_INIT(1 << 20),
	       bomb = AL_BUF_INIT(1 << 20), lit = AL_BUF_INIT(1 << 20);
	static const char data[] = "{\"nested\":true}";
	uint8_t *zeros = NULL;
	size_t mpilen;
	static const uint8_t bz[] = {0xC8, 0x05, 0x03, 'B', 'Z', 'h', '9'};

	if (craft_key(&c, 1) != 0 ||
	    craft_v3_message(&inner, &c, (const uint8_t *)data, strlen(data),
	                     &mpilen) != 0) {
		CU_FAIL("cannot craft a message");
		goto out;
	}
	/* ZIP inside ZLIB: two levels are fine */
	CU_ASSERT_EQUAL(wrap_compressed(&l1, inner.ptr, inner.len, 1), 0);
	CU_ASSERT_EQUAL(wrap_compressed(&l2, l1.ptr, l1.len, 2), 0);
	CU_ASSERT_EQUAL(verify_raw_kr(&c.keyring, l1.ptr, l1.len, &lit, NULL),
	                0);
	CU_ASSERT_EQUAL(verify_raw_kr(&c.keyring, l2.ptr, l2.len, &lit, NULL),
	                0);
	CU_ASSERT_EQUAL(lit.len, 2 * strlen(data));
	al_buf_reset(&lit);
	/* three levels are refused */
	CU_ASSERT_EQUAL(wrap_compressed(&l3, l2.ptr, l2.len, 0), 0);
	CU_ASSERT_EQUAL(verify_raw_kr(&c.keyring, l3.ptr, l3.len, &lit, NULL),
	                AL_ELIMIT);
	CU_ASSERT(msg_contains("nested"));
	/* 17 MiB of zeros deflates to a few KiB: refused before it is all in
	 * memory */
	zeros = calloc(1, 17 << 20);
	CU_ASSERT_PTR_NOT_NULL(zeros);
	if (zeros != NULL) {
		CU_ASSERT_EQUAL(wrap_compressed(&bomb, zeros, 17 << 20, 2), 0);
		CU_ASSERT(bomb.len < 100000);
		CU_ASSERT_EQUAL(
		    verify_raw_kr(&c.keyring, bomb.ptr, bomb.len, &lit, NULL),
		    AL_ELIMIT);
	}
	CU_ASSERT_EQUAL(verify_raw_kr(&c.keyring, bz, sizeof(bz), &lit, NULL),
	                AL_EUNSUPPORTED);
	CU_ASSERT(msg_contains("BZIP2"));
	/* a compressed stream cut short */
	if (l2.len > 20) {
		l2.ptr[5] = (uint8_t)(l2.len - 6 - 8);
		CU_ASSERT_EQUAL(
		    verify_raw_kr(&c.keyring, l2.ptr, l2.len - 8, &lit, NULL),
		    AL_EPARSE);
	}
	CU_ASSERT_EQUAL(lit.len, 0);
out:
	free(zeros);
	al_buf_free(&inner);
	al_buf_free(&l1);
	al_buf_free(&l2);
	al_buf_free(&l3);
	al_buf_free(&bomb);
	al_buf_free(&lit);
	crafted_free(&c);
}

/* Parse one packet header of a definite length (test helper). */
static int pkt_hdr(const uint8_t *p, size_t n, size_t off, int *tag,
                   size_t *hlen, size_t *blen)
{
	uint8_t b;

	if (off >= n)
		return -1;
	b = p[off];
	if (b & 0x40) {
		*tag = b & 0x3f;
		if (off + 1 >= n)
			return -1;
		if (p[off + 1] < 192) {
			*blen = p[off + 1];
			*hlen = 2;
		} else if (p[off + 1] < 224) {
			*blen = ((size_t)(p[off + 1] - 192) << 8) + p[off + 2] +
			        192;
			*hlen = 3;
		} else if (p[off + 1] == 255) {
			*blen = ((size_t)p[off + 2] << 24) |
			        ((size_t)p[off + 3] << 16) |
			        ((size_t)p[off + 4] << 8) | p[off + 5];
			*hlen = 6;
		} else {
			return -1;
		}
	} else {
		int lt = b & 3;
		size_t k, i;
		*tag = (b >> 2) & 0xf;
		if (lt == 3)
			return -1;
		k = (size_t)1 << lt;
		*blen = 0;
		for (i = 0; i < k; i++)
			*blen = (*blen << 8) | p[off + 1 + i];
		*hlen = 1 + k;
	}
	return off + *hlen + *blen <= n ? 0 : -1;
}

static void test_pgp__accepts_partial_lengths_with_small_first_chunk(void)
{
	const blob *m = &fx.m_p256_none;
	al_buf out = AL_BUF_INIT(1 << 20), lit = AL_BUF_INIT(1 << 20);
	al_buf z = AL_BUF_INIT(1 << 20), zp = AL_BUF_INIT(1 << 20);
	size_t off = 0, hlen, blen;
	int tag, found = 0;

	if (!have_fx())
		return;
	while (off < m->n) {
		if (pkt_hdr(m->p, m->n, off, &tag, &hlen, &blen) != 0) {
			CU_FAIL("cannot parse gpg's uncompressed message");
			goto out;
		}
		if (tag == 11 && blen > 32 + 64) {
			/* 32-byte and 64-byte partial chunks, then the rest
			 * with a definite length */
			const uint8_t *b = m->p + off + hlen;
			uint8_t h[3] = {0xCB, 0xE5, 0};
			size_t rest = blen - 96;
			uint8_t r[5] = {0xFF, (uint8_t)(rest >> 24),
			                (uint8_t)(rest >> 16),
			                (uint8_t)(rest >> 8), (uint8_t)rest};
			al_buf_append(&out, h, 2);
			al_buf_append(&out, b, 32);
			h[0] = 0xE6;
			al_buf_append(&out, h, 1);
			al_buf_append(&out, b + 32, 64);
			al_buf_append(&out, r, 5);
			al_buf_append(&out, b + 96, rest);
			found = 1;
		} else {
			al_buf_append(&out, m->p + off, hlen + blen);
		}
		off += hlen + blen;
	}
	CU_ASSERT(found);
	CU_ASSERT_EQUAL(
	    verify_with(&fx.kr_p256, out.ptr, out.len, 0, &lit, NULL), 0);
	CU_ASSERT(lit.len == strlen(payload) &&
	          memcmp(lit.ptr, payload, lit.len) == 0);
	/* a partial body whose last chunk is missing */
	al_buf_reset(&lit);
	CU_ASSERT_EQUAL(verify_with(&fx.kr_p256, out.ptr, 60, 0, &lit, NULL),
	                AL_EPARSE);
	CU_ASSERT_EQUAL(lit.len, 0);
	/* as Go writes it: a ZLIB compressed packet, itself in partial
	 * chunks (16 bytes first), around the partial literal */
	if (wrap_compressed(&z, out.ptr, out.len, 2) == 0 && z.len > 6 + 16) {
		const uint8_t *zb = z.ptr + 6;
		size_t rest = z.len - 6 - 16;
		uint8_t h[6] = {0xC8,
		                0xE4,
		                0xFF,
		                (uint8_t)(rest >> 24),
		                (uint8_t)(rest >> 16),
		                (uint8_t)(rest >> 8)};
		uint8_t last = (uint8_t)rest;
		al_buf_append(&zp, h, 2);
		al_buf_append(&zp, zb, 16);
		al_buf_append(&zp, h + 2, 4);
		al_buf_append(&zp, &last, 1);
		al_buf_append(&zp, zb + 16, rest);
		CU_ASSERT_EQUAL(
		    verify_with(&fx.kr_p256, zp.ptr, zp.len, 0, &lit, NULL), 0);
		CU_ASSERT(lit.len == strlen(payload) &&
		          memcmp(lit.ptr, payload, lit.len) == 0);
	} else {
		CU_FAIL("cannot compress");
	}
out:
	al_buf_free(&out);
	al_buf_free(&lit);
	al_buf_free(&z);
	al_buf_free(&zp);
}

static void test_pgp__literal_out_limit_leaves_buffer_unchanged(void)
{
	al_buf small = AL_BUF_INIT(16);
	int rc;

	if (!have_fx())
		return;
	rc = verify_with(&fx.kr_ed, fx.m_ed_zlib.p, fx.m_ed_zlib.n, 0, &small,
	                 NULL);
	CU_ASSERT_EQUAL(rc, AL_ELIMIT);
	CU_ASSERT_EQUAL(small.len, 0);
	al_buf_free(&small);
}

static void test_pgp__accepts_p384_sha384(void)
{
	if (!have_fx())
		return;
	check_ok(&fx.kr_p384, &fx.m_p384, 0, fx.fpr_p384, 9);
}

static void test_pgp__accepts_text_signature(void)
{
	al_buf lit = AL_BUF_INIT(1 << 20);
	al_pgp_result res = AL_PGP_RESULT_INIT;
	int rc;

	if (!have_fx())
		return;
	rc = verify_with(&fx.kr_ed, fx.m_text.p, fx.m_text.n, 0, &lit, &res);
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(res.sig_type, 1);
	/* gpg stores text with CRLF line ends; the literal comes back as stored
	 */
	CU_ASSERT(lit.len == strlen(payload) + 1 &&
	          memcmp(lit.ptr, payload, strlen(payload) - 1) == 0 &&
	          memcmp(lit.ptr + strlen(payload) - 1, "\r\n", 2) == 0);
	al_buf_free(&lit);
}

static void test_pgp__accepts_concatenated_armored_keys(void)
{
	blob both = {NULL, 0};

	if (!have_fx())
		return;
	if (cat_blobs(&both, &fx.kr_ed_asc, &fx.kr_rsa4096_asc) != 0)
		return;
	check_ok(&both, &fx.m_ed_zlib, 0, fx.fpr_ed, 0);
	check_ok(&both, &fx.m_rsa4096, 0, fx.fpr_rsa4096, 0);
	free_blob(&both);
}

static void test_pgp__armored_message_bad_crc_refused(void)
{
	blob m = {NULL, 0};
	char *p, *crc = NULL;

	if (!have_fx())
		return;
	if (cat_blobs(&m, &fx.m_p256_armor,
	              &(blob){(uint8_t *)(uintptr_t) "", 0}) != 0)
		return;
	m.p[m.n] = 0;
	for (p = (char *)m.p; (p = strstr(p, "\n=")) != NULL; p++) {
		if (strlen(p) > 6 && p[6] == '\n') {
			crc = p + 2;
			break;
		}
	}
	CU_ASSERT_PTR_NOT_NULL(crc);
	if (crc != NULL) {
		crc[1] = crc[1] == 'A' ? 'B' : 'A';
		check_fail(&fx.kr_p256, m.p, m.n, 0, AL_EPARSE, "checksum");
	}
	free_blob(&m);
}

/* Offset of the body of the idx-th packet of type tag in b, and its length. */
static int find_pkt(const blob *b, int want, int idx, size_t *body, size_t *len)
{
	size_t off = 0, hlen, blen;
	int tag;

	while (off < b->n &&
	       pkt_hdr(b->p, b->n, off, &tag, &hlen, &blen) == 0) {
		if (tag == want && idx-- == 0) {
			*body = off + hlen;
			*len = blen;
			return 0;
		}
		off += hlen + blen;
	}
	return -1;
}

/* kr_sub with one byte flipped at body offset (from the start, or from the end
 * if negative) of the idx-th signature. */
static void check_sub_corrupted(int sig_idx, long where, const char *want)
{
	blob kr = {NULL, 0};
	size_t body, len;

	if (cat_blobs(&kr, &fx.kr_sub, &(blob){(uint8_t *)(uintptr_t) "", 0}) !=
	    0)
		return;
	CU_ASSERT_EQUAL(find_pkt(&kr, 2, sig_idx, &body, &len), 0);
	if (find_pkt(&kr, 2, sig_idx, &body, &len) == 0) {
		if (where < 0)
			kr.p[body + len - (size_t)(-where)] ^= 0x01;
		else
			kr.p[body + (size_t)where] ^= 0x01;
		check_fail(&kr, fx.m_sub.p, fx.m_sub.n, 0, AL_EVERIFY, want);
	}
	free_blob(&kr);
}

static void test_pgp__subkey_needs_valid_binding_and_back_signature(void)
{
	size_t body, len, hl, ul;
	char want[96];

	if (!have_fx())
		return;
	/* signature 0: the user ID self-signature; 1: the signing subkey's
	 * binding */
	snprintf(want, sizeof(want), "key 0x%.16s has no valid self-signature",
	         fx.fpr_sub + 24);
	check_sub_corrupted(0, -1, want);
	snprintf(want, sizeof(want),
	         "subkey 0x%.16s has no valid binding signature",
	         fx.fpr_subkey + 24);
	check_sub_corrupted(1, -1, want);
	/* the back-signature is the last unhashed subpacket: flip its last byte
	 */
	if (find_pkt(&fx.kr_sub, 2, 1, &body, &len) == 0) {
		hl = ((size_t)fx.kr_sub.p[body + 4] << 8) |
		     fx.kr_sub.p[body + 5];
		ul = ((size_t)fx.kr_sub.p[body + 6 + hl] << 8) |
		     fx.kr_sub.p[body + 7 + hl];
		snprintf(want, sizeof(want),
		         "signing subkey 0x%.16s has no valid back-signature",
		         fx.fpr_subkey + 24);
		check_sub_corrupted(1, (long)(6 + hl + 2 + ul - 1), want);
	}
}

static void test_pgp__accepts_ed25519_rfc9580_algorithm(void)
{
	crafted c;
	al_buf msg = AL_BUF_INIT(1 << 20), lit = AL_BUF_INIT(1 << 20);
	al_pgp_result res = AL_PGP_RESULT_INIT;
	static const char data[] = "{\"ed25519\":27}";
	int rc;

	if (craft_key(&c, 27) != 0 ||
	    craft_v4_message(&msg, &c, (const uint8_t *)data, strlen(data),
	                     NULL, 0, 8) != 0) {
		CU_FAIL("cannot craft an Ed25519 message");
		goto out;
	}
	rc = verify_raw_kr(&c.keyring, msg.ptr, msg.len, &lit, &res);
	if (rc != 0)
		fprintf(stderr, "ed25519/27: %s\n", al_error_message());
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(res.pubkey_algo, 27);
	CU_ASSERT(lit.len == strlen(data) &&
	          memcmp(lit.ptr, data, lit.len) == 0);
	msg.ptr[msg.len - 1] ^= 0x01;
	al_buf_reset(&lit);
	CU_ASSERT_EQUAL(verify_raw_kr(&c.keyring, msg.ptr, msg.len, &lit, NULL),
	                AL_EVERIFY);
	CU_ASSERT(msg_contains("bad signature"));
	CU_ASSERT_EQUAL(lit.len, 0);
out:
	al_buf_free(&msg);
	al_buf_free(&lit);
	crafted_free(&c);
}

static void test_pgp__accepts_ecdsa_p521(void)
{
	crafted c;
	al_buf msg = AL_BUF_INIT(1 << 20), lit = AL_BUF_INIT(1 << 20);
	al_pgp_result res = AL_PGP_RESULT_INIT;
	static const char data[] = "{\"p521\":true}";
	int rc;

	if (craft_key(&c, 19) != 0 ||
	    craft_v4_message(&msg, &c, (const uint8_t *)data, strlen(data),
	                     NULL, 0, 8) != 0) {
		CU_FAIL("cannot craft a P-521 message");
		goto out;
	}
	rc = verify_raw_kr(&c.keyring, msg.ptr, msg.len, &lit, &res);
	if (rc != 0)
		fprintf(stderr, "p521: %s\n", al_error_message());
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(res.pubkey_algo, 19);
	CU_ASSERT(lit.len == strlen(data) &&
	          memcmp(lit.ptr, data, lit.len) == 0);
	msg.ptr[msg.len - 1] ^= 0x01;
	al_buf_reset(&lit);
	CU_ASSERT_EQUAL(verify_raw_kr(&c.keyring, msg.ptr, msg.len, &lit, NULL),
	                AL_EVERIFY);
	CU_ASSERT_EQUAL(lit.len, 0);
out:
	al_buf_free(&msg);
	al_buf_free(&lit);
	crafted_free(&c);
}

static void test_pgp__subpackets_and_refused_hashes(void)
{
	crafted c;
	al_buf msg = AL_BUF_INIT(1 << 20), lit = AL_BUF_INIT(1 << 20);
	static const char data[] = "{\"subpackets\":1}";
	/* a critical notation (20): unknown to us, so the signature is in error
	 */
	static const uint8_t crit_notation[] = {
	    13, 0x80 | 20, 0x80, 0, 0, 0, 0, 1, 0, 1, 'a', '@', 'b', 'c'};
	/* critical but understood: signature expiration 0 (never) */
	static const uint8_t crit_known[] = {5, 0x80 | 3, 0, 0, 0, 0};
	/* non-critical unknown subpacket 100: ignored */
	static const uint8_t unknown[] = {3, 100, 'x', 'y'};
	/* signature expired 10 seconds after creation */
	static const uint8_t sigexp[] = {5, 3, 0, 0, 0, 10};

	if (craft_key(&c, 27) != 0) {
		CU_FAIL("cannot craft a key");
		goto out;
	}
	CU_ASSERT_EQUAL(craft_v4_message(&msg, &c, (const uint8_t *)data,
	                                 strlen(data), crit_notation,
	                                 sizeof(crit_notation), 8),
	                0);
	CU_ASSERT_EQUAL(verify_raw_kr(&c.keyring, msg.ptr, msg.len, &lit, NULL),
	                AL_EUNSUPPORTED);
	CU_ASSERT(msg_contains("critical subpacket 20"));
	al_buf_reset(&msg);
	CU_ASSERT_EQUAL(craft_v4_message(&msg, &c, (const uint8_t *)data,
	                                 strlen(data), crit_known,
	                                 sizeof(crit_known), 8),
	                0);
	CU_ASSERT_EQUAL(verify_raw_kr(&c.keyring, msg.ptr, msg.len, &lit, NULL),
	                0);
	al_buf_reset(&msg);
	CU_ASSERT_EQUAL(craft_v4_message(&msg, &c, (const uint8_t *)data,
	                                 strlen(data), unknown, sizeof(unknown),
	                                 8),
	                0);
	CU_ASSERT_EQUAL(verify_raw_kr(&c.keyring, msg.ptr, msg.len, &lit, NULL),
	                0);
	CU_ASSERT_EQUAL(lit.len, 2 * strlen(data));
	al_buf_reset(&lit);
	al_buf_reset(&msg);
	CU_ASSERT_EQUAL(craft_v4_message(&msg, &c, (const uint8_t *)data,
	                                 strlen(data), sigexp, sizeof(sigexp),
	                                 8),
	                0);
	CU_ASSERT_EQUAL(verify_raw_kr(&c.keyring, msg.ptr, msg.len, &lit, NULL),
	                AL_EVERIFY);
	CU_ASSERT(msg_contains("signature expired on "));
	al_buf_reset(&msg);
	CU_ASSERT_EQUAL(craft_v4_message(&msg, &c, (const uint8_t *)data,
	                                 strlen(data), NULL, 0, 1),
	                0);
	CU_ASSERT_EQUAL(verify_raw_kr(&c.keyring, msg.ptr, msg.len, &lit, NULL),
	                AL_EVERIFY);
	CU_ASSERT(msg_contains("hash algorithm MD5 is not accepted"));
	al_buf_reset(&msg);
	CU_ASSERT_EQUAL(craft_v4_message(&msg, &c, (const uint8_t *)data,
	                                 strlen(data), NULL, 0, 3),
	                0);
	CU_ASSERT_EQUAL(verify_raw_kr(&c.keyring, msg.ptr, msg.len, &lit, NULL),
	                AL_EUNSUPPORTED);
	CU_ASSERT_EQUAL(lit.len, 0);
out:
	al_buf_free(&msg);
	al_buf_free(&lit);
	crafted_free(&c);
}

/* The hashed issuer key ID names another key than the issuer fingerprint: the
 * message names the key that was looked up (by fingerprint), not the other. */
static void test_pgp__issuer_mismatch_names_the_key_looked_up(void)
{
	crafted c;
	al_buf msg = AL_BUF_INIT(1 << 20);
	static const char data[] = "{\"issuer\":1}";
	static const uint8_t other[] = {9,    16,   0x01, 0x23, 0x45,
	                                0x67, 0x89, 0xAB, 0xCD, 0xEF};
	char want[64];

	if (craft_key(&c, 27) != 0) {
		CU_FAIL("cannot craft a key");
		goto out;
	}
	CU_ASSERT_EQUAL(craft_v4_message(&msg, &c, (const uint8_t *)data,
	                                 strlen(data), other, sizeof(other), 8),
	                0);
	/* a one-pass signature would name the key too: keep signature +
	 * literal data (crafted packets have 6-byte headers) */
	if (msg.len > 19 + 12) {
		size_t llen =
		    6 + ((size_t)msg.ptr[21] << 24 | (size_t)msg.ptr[22] << 16 |
		         (size_t)msg.ptr[23] << 8 | msg.ptr[24]);
		if (19 + llen <= msg.len) {
			al_buf re = AL_BUF_INIT(1 << 20);
			CU_ASSERT_EQUAL(al_buf_append(&re, msg.ptr + 19 + llen,
			                              msg.len - 19 - llen),
			                0);
			CU_ASSERT_EQUAL(al_buf_append(&re, msg.ptr + 19, llen),
			                0);
			al_buf_free(&msg);
			msg = re;
		}
	}
	CU_ASSERT_EQUAL(verify_raw_kr(&c.keyring, msg.ptr, msg.len, NULL, NULL),
	                AL_EVERIFY);
	if (!msg_contains("looked up"))
		fprintf(stderr, "got '%s'\n", al_error_message());
	snprintf(want, sizeof(want),
	         "looked up key 0x%02X%02X%02X%02X%02X%02X%02X%02X (in the "
	         "keyring)",
	         c.keyid[0], c.keyid[1], c.keyid[2], c.keyid[3], c.keyid[4],
	         c.keyid[5], c.keyid[6], c.keyid[7]);
	CU_ASSERT(msg_contains(want));
	CU_ASSERT(msg_contains("issuer key ID is 0x0123456789ABCDEF"));
	CU_ASSERT(!msg_contains("unknown key 0x0123456789ABCDEF"));
out:
	al_buf_free(&msg);
	crafted_free(&c);
}

/* A self-signature that cannot be parsed (an unknown critical subpacket)
 * leaves the key unusable, and the message says why. */
static void test_pgp__unusable_self_signature_says_why(void)
{
	crafted c;
	al_buf msg = AL_BUF_INIT(1 << 20);
	al_pgp_keyring *kr = NULL;
	static const char data[] = "{\"why\":1}";
	uint8_t *flags;

	if (craft_key(&c, 27) != 0) {
		CU_FAIL("cannot craft a key");
		goto out;
	}
	CU_ASSERT_EQUAL(craft_v4_message(&msg, &c, (const uint8_t *)data,
	                                 strlen(data), NULL, 0, 8),
	                0);
	/* the self-signature's key flags subpacket becomes critical type 100 */
	flags = find_bytes(c.keyring.ptr, c.keyring.len, "\x02\x1b\x03", 3);
	CU_ASSERT_PTR_NOT_NULL(flags);
	if (flags == NULL)
		goto out;
	flags[1] = 0x80 | 100;
	CU_ASSERT_EQUAL(
	    al_pgp_keyring_load(&kr, c.keyring.ptr, c.keyring.len, "crit.gpg"),
	    0);
	CU_ASSERT_EQUAL(al_pgp_verify(NULL, NULL, kr, msg.ptr, msg.len, 0),
	                AL_EVERIFY);
	CU_ASSERT(msg_contains("has no valid self-signature: a signature on "
	                       "it at offset"));
	CU_ASSERT(msg_contains("unknown critical subpacket 100"));
	CU_ASSERT(has_warning(kr, "crit.gpg", "is not usable",
	                      "unknown critical subpacket 100"));
out:
	al_pgp_keyring_free(kr);
	al_buf_free(&msg);
	crafted_free(&c);
}

static void test_pgp__revocation_in_any_added_file_counts(void)
{
	al_pgp_keyring *kr = NULL;

	if (!have_fx())
		return;
	CU_ASSERT_EQUAL(
	    al_pgp_keyring_load(&kr, fx.kr_rsa2048.p, fx.kr_rsa2048.n, "old"),
	    0);
	CU_ASSERT_EQUAL(al_pgp_verify(NULL, NULL, kr, fx.m_rsa2048_zip512.p,
	                              fx.m_rsa2048_zip512.n, 0),
	                0);
	CU_ASSERT_EQUAL(al_pgp_keyring_add(kr, fx.kr_rsa2048_revoked.p,
	                                   fx.kr_rsa2048_revoked.n, "new"),
	                0);
	CU_ASSERT_EQUAL(al_pgp_verify(NULL, NULL, kr, fx.m_rsa2048_zip512.p,
	                              fx.m_rsa2048_zip512.n, 0),
	                AL_EVERIFY);
	CU_ASSERT(msg_contains("is revoked"));
	al_pgp_keyring_free(kr);
}

static unsigned next_rand(unsigned *state)
{
	*state = *state * 1103515245u + 12345u;
	return (*state >> 16) & 0x7fff;
}

/* Random byte flips: never a crash, never different literal bytes, and no
 * success at all once a signed byte changed. */
static void test_pgp__mutated_inputs_fail_closed(void)
{
	const blob *ms[] = {&fx.m_rsa4096, &fx.m_p256_none, &fx.m_ed_zlib,
	                    &fx.m_sub};
	al_pgp_keyring *kr = NULL;
	al_buf lit = AL_BUF_INIT(1 << 20);
	unsigned st = al_test_seed();
	blob m = {NULL, 0};
	size_t i, j;
	int rc, accepted = 0, bad = 0;

	if (!have_fx())
		return;
	if (al_pgp_keyring_load(&kr, fx.kr_all.p, fx.kr_all.n, "all") != 0) {
		CU_FAIL("cannot load keyring");
		return;
	}
	for (i = 0; i < 4; i++) {
		for (j = 0; j < 150; j++) {
			if (cat_blobs(&m, ms[i],
			              &(blob){(uint8_t *)(uintptr_t) "", 0}) !=
			    0)
				break;
			m.p[next_rand(&st) % m.n] ^=
			    (uint8_t)(1u << (next_rand(&st) % 8));
			if (next_rand(&st) % 4 == 0)
				m.p[next_rand(&st) % m.n] =
				    (uint8_t)next_rand(&st);
			al_buf_reset(&lit);
			rc = al_pgp_verify(NULL, &lit, kr, m.p, m.n, 0);
			if (rc == 0) {
				accepted++;
				if (lit.len != strlen(payload) ||
				    memcmp(lit.ptr, payload, lit.len) != 0)
					bad++;
			} else if (lit.len != 0) {
				bad++;
			}
			free_blob(&m);
		}
	}
	/* flips in unsigned bytes (literal file name and date, unhashed
	 * subpackets) may still verify: but only ever with the payload */
	CU_ASSERT_EQUAL(bad, 0);
	printf("(%d of 600 mutations still verified) ", accepted);
	al_pgp_keyring_free(kr);
	kr = NULL;
	for (j = 0; j < 200; j++) {
		if (cat_blobs(&m, &fx.kr_sub,
		              &(blob){(uint8_t *)(uintptr_t) "", 0}) != 0)
			break;
		m.p[next_rand(&st) % m.n] ^=
		    (uint8_t)(1u << (next_rand(&st) % 8));
		rc = al_pgp_keyring_load(&kr, m.p, m.n, "mutated");
		if (rc == 0) {
			al_buf_reset(&lit);
			rc = al_pgp_verify(NULL, &lit, kr, fx.m_sub.p,
			                   fx.m_sub.n, 0);
			CU_ASSERT(rc != 0 ||
			          (lit.len == strlen(payload) &&
			           memcmp(lit.ptr, payload, lit.len) == 0));
			al_pgp_keyring_free(kr);
			kr = NULL;
		}
		free_blob(&m);
	}
	al_buf_free(&lit);
}

static void test_pgp__packet_order(void)
{
	crafted c;
	al_buf msg = AL_BUF_INIT(1 << 20), re = AL_BUF_INIT(1 << 20),
	       lit = AL_BUF_INIT(1 << 20);
	static const char data[] = "{\"order\":1}";
	size_t off[3], len[3], o = 0, hlen, blen;
	int tag, i;

	if (craft_key(&c, 27) != 0 ||
	    craft_v4_message(&msg, &c, (const uint8_t *)data, strlen(data),
	                     NULL, 0, 8) != 0) {
		CU_FAIL("cannot craft a message");
		goto out;
	}
	for (i = 0; i < 3; i++) {
		if (pkt_hdr(msg.ptr, msg.len, o, &tag, &hlen, &blen) != 0)
			break;
		off[i] = o;
		len[i] = hlen + blen;
		o += hlen + blen;
	}
	CU_ASSERT_EQUAL(i, 3);
	if (i != 3)
		goto out;
	/* signature + literal (no one-pass signature): the older layout */
	al_buf_append(&re, msg.ptr + off[2], len[2]);
	al_buf_append(&re, msg.ptr + off[1], len[1]);
	CU_ASSERT_EQUAL(verify_raw_kr(&c.keyring, re.ptr, re.len, &lit, NULL),
	                0);
	CU_ASSERT(lit.len == strlen(data));
	al_buf_reset(&lit);
	/* literal + signature without a one-pass signature */
	al_buf_reset(&re);
	al_buf_append(&re, msg.ptr + off[1], len[1]);
	al_buf_append(&re, msg.ptr + off[2], len[2]);
	CU_ASSERT_EQUAL(verify_raw_kr(&c.keyring, re.ptr, re.len, &lit, NULL),
	                AL_EPARSE);
	/* one-pass signature + literal, signature missing */
	al_buf_reset(&re);
	al_buf_append(&re, msg.ptr + off[0], len[0]);
	al_buf_append(&re, msg.ptr + off[1], len[1]);
	CU_ASSERT_EQUAL(verify_raw_kr(&c.keyring, re.ptr, re.len, &lit, NULL),
	                AL_EPARSE);
	CU_ASSERT(msg_contains("no signature packet"));
	/* literal alone */
	CU_ASSERT_EQUAL(
	    verify_raw_kr(&c.keyring, msg.ptr + off[1], len[1], &lit, NULL),
	    AL_EPARSE);
	CU_ASSERT_EQUAL(lit.len, 0);
out:
	al_buf_free(&msg);
	al_buf_free(&re);
	al_buf_free(&lit);
	crafted_free(&c);
}

static void test_pgp__null_arguments(void)
{
	al_pgp_keyring *kr = NULL;

	al_pgp_keyring_free(NULL);
	CU_ASSERT_EQUAL(al_pgp_keyring_count(NULL), 0);
	CU_ASSERT_EQUAL(
	    al_pgp_verify(NULL, NULL, NULL, (const uint8_t *)"x", 1, 0),
	    AL_EINVAL);
	CU_ASSERT_EQUAL(al_pgp_keyring_new(&kr), 0);
	CU_ASSERT_EQUAL(al_pgp_keyring_count(kr), 0);
	CU_ASSERT_EQUAL(al_pgp_verify(NULL, NULL, kr, NULL, 0, 0), AL_EPARSE);
	al_pgp_keyring_free(kr);
}

static void test_pgp__accepts_sha224(void)
{
	if (!have_fx())
		return;
	check_ok(&fx.kr_rsa4096, &fx.m_sha224, 0, fx.fpr_rsa4096, 11);
}

static void test_pgp__rejects_revoked_subkey(void)
{
	char want[64];

	if (!have_fx())
		return;
	snprintf(want, sizeof(want), "key 0x%.16s is revoked",
	         fx.fpr_subkey + 24);
	check_fail(&fx.kr_sub_revoked, fx.m_sub.p, fx.m_sub.n, 0, AL_EVERIFY,
	           want);
}

static void test_pgp__armor_headers_tolerated(void)
{
	blob b = {NULL, 0};
	const char *nl;
	static const char hdrs[] = "Version: GnuPG v2.0.22 (GNU/Linux)\n"
	                           "Comment: a comment: with colons\n";
	size_t at;

	if (!have_fx())
		return;
	nl = memchr(fx.kr_ed_asc.p, '\n', fx.kr_ed_asc.n);
	CU_ASSERT_PTR_NOT_NULL(nl);
	if (nl == NULL)
		return;
	at = (size_t)(nl - (const char *)fx.kr_ed_asc.p) + 1;
	b.n = fx.kr_ed_asc.n + sizeof(hdrs) - 1;
	b.p = malloc(b.n + 1);
	if (b.p == NULL)
		return;
	memcpy(b.p, fx.kr_ed_asc.p, at);
	memcpy(b.p + at, hdrs, sizeof(hdrs) - 1);
	memcpy(b.p + at + sizeof(hdrs) - 1, fx.kr_ed_asc.p + at,
	       fx.kr_ed_asc.n - at);
	check_ok(&b, &fx.m_ed_zlib, 0, fx.fpr_ed, 0);
	free_blob(&b);
}

static CU_TestInfo tests[] = {
    {"accepts_rsa4096_default_compression",
     test_pgp__accepts_rsa4096_default_compression},
    {"accepts_rsa2048_zip_sha512", test_pgp__accepts_rsa2048_zip_sha512},
    {"accepts_ed25519_zlib", test_pgp__accepts_ed25519_zlib},
    {"accepts_p256_uncompressed_sha256",
     test_pgp__accepts_p256_uncompressed_sha256},
    {"accepts_armored_message", test_pgp__accepts_armored_message},
    {"accepts_any_key_of_a_multi_key_keyring",
     test_pgp__accepts_any_key_of_a_multi_key_keyring},
    {"keyring_add_accumulates_files", test_pgp__keyring_add_accumulates_files},
    {"accepts_signing_subkey", test_pgp__accepts_signing_subkey},
    {"rejects_tampered_payload", test_pgp__rejects_tampered_payload},
    {"rejects_unknown_key", test_pgp__rejects_unknown_key},
    {"rejects_sha1", test_pgp__rejects_sha1},
    {"expiry_is_judged_at_signing_time",
     test_pgp__expiry_is_judged_at_signing_time},
    {"copies_of_a_key_merge_in_any_order",
     test_pgp__copies_of_a_key_merge_in_any_order},
    {"sha1_self_signatures_before_2023",
     test_pgp__sha1_self_signatures_before_2023},
    {"soft_revocation_refuses_older_signatures",
     test_pgp__soft_revocation_refuses_older_signatures},
    {"redhat_release_key_as_copied", test_pgp__redhat_release_key_as_copied},
    {"unusable_self_signature_says_why",
     test_pgp__unusable_self_signature_says_why},
    {"issuer_mismatch_names_the_key_looked_up",
     test_pgp__issuer_mismatch_names_the_key_looked_up},
    {"key_expiry_from_most_recent_self_signature",
     test_pgp__key_expiry_from_most_recent_self_signature},
    {"rejects_expired_signature", test_pgp__rejects_expired_signature},
    {"rejects_revoked_key", test_pgp__rejects_revoked_key},
    {"rejects_two_signatures", test_pgp__rejects_two_signatures},
    {"rejects_trailing_garbage", test_pgp__rejects_trailing_garbage},
    {"rejects_truncated_messages", test_pgp__rejects_truncated_messages},
    {"truncated_packet_names_offset", test_pgp__truncated_packet_names_offset},
    {"armored_keyring_bad_crc_refused",
     test_pgp__armored_keyring_bad_crc_refused},
    {"keyring_rejects_garbage", test_pgp__keyring_rejects_garbage},
    {"keyring_of_unsupported_keys_refused",
     test_pgp__keyring_of_unsupported_keys_refused},
    {"accepts_v3_signature_with_short_mpi",
     test_pgp__accepts_v3_signature_with_short_mpi},
    {"compression_nesting_bombs_and_bzip2",
     test_pgp__compression_nesting_bombs_and_bzip2},
    {"accepts_partial_lengths_with_small_first_chunk",
     test_pgp__accepts_partial_lengths_with_small_first_chunk},
    {"literal_out_limit_leaves_buffer_unchanged",
     test_pgp__literal_out_limit_leaves_buffer_unchanged},
    {"accepts_p384_sha384", test_pgp__accepts_p384_sha384},
    {"accepts_text_signature", test_pgp__accepts_text_signature},
    {"accepts_concatenated_armored_keys",
     test_pgp__accepts_concatenated_armored_keys},
    {"armored_message_bad_crc_refused",
     test_pgp__armored_message_bad_crc_refused},
    {"subkey_needs_valid_binding_and_back_signature",
     test_pgp__subkey_needs_valid_binding_and_back_signature},
    {"accepts_ed25519_rfc9580_algorithm",
     test_pgp__accepts_ed25519_rfc9580_algorithm},
    {"subpackets_and_refused_hashes", test_pgp__subpackets_and_refused_hashes},
    {"revocation_in_any_added_file_counts",
     test_pgp__revocation_in_any_added_file_counts},
    {"mutated_inputs_fail_closed", test_pgp__mutated_inputs_fail_closed},
    {"packet_order", test_pgp__packet_order},
    {"null_arguments", test_pgp__null_arguments},
    {"accepts_sha224", test_pgp__accepts_sha224},
    {"rejects_revoked_subkey", test_pgp__rejects_revoked_subkey},
    {"armor_headers_tolerated", test_pgp__armor_headers_tolerated},
    {"accepts_ecdsa_p521", test_pgp__accepts_ecdsa_p521},
    CU_TEST_INFO_NULL,
};

int main(void)
{
	return al_test_run("pgp", tests);
}
