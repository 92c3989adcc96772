/* test_sigstore.c: signature sources (directory, ConfigMap, HTTP), bounded concurrent retrieval against faulty stores, signatures in the store. */
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "al_test.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/http.h"
#include "airlock/kres.h"
#include "airlock/sig.h"

#define GPG                                                                    \
	"gpg --batch --no-tty --quiet --pinentry-mode loopback --passphrase "  \
	"''"

#define HEX_A "6d8c2c3a0f0d5bd8c3f1b8cbd0e7f6c2a1b9d0e4f3a2b1c0d9e8f7a6b5c4d3e2"
#define HEX_B "1111111111111111111111111111111111111111111111111111111111111111"
#define REF_A "quay.io/example/release:4.14.1-x86_64"

typedef struct blob {
	uint8_t *p;
	size_t n;
} blob;

static struct fixtures {
	int ready; /* 0 not tried, 1 ok, -1 failed or gpg missing */
	char dir[600];
	char home[700];
	char fpr[41];
	al_pgp_keyring *kr;
	blob good;  /* Ed25519 signature for HEX_A / REF_A */
	blob good2; /* another one (different creator) */
	blob wrong; /* signed for HEX_B */
	pid_t server;
	int port;
	char root[800]; /* the server's file root */
} fx;

static int slurp(blob *out, const char *path)
{
	al_buf b = AL_BUF_INIT(16 * 1024 * 1024);
	int rc = al_fs_read_file(path, &b);

	if (rc != 0) {
		al_buf_free(&b);
		return -1;
	}
	out->p = (uint8_t *)al_buf_detach(&b, &out->n);
	return 0;
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

static void cleanup(void)
{
	if (fx.server > 0) {
		kill(fx.server, SIGTERM);
		waitpid(fx.server, NULL, 0);
		fx.server = 0;
	}
	if (fx.home[0] != '\0')
		al_test_sh("GNUPGHOME=%s gpgconf --kill all >/dev/null 2>&1", fx.home);
	al_pgp_keyring_free(fx.kr);
	free(fx.good.p);
	free(fx.good2.p);
	free(fx.wrong.p);
}

static int sign(blob *out, const char *name, const char *hex,
                const char *creator)
{
	char *json = al_sprintf(
	    "{\"critical\":{\"type\":\"atomic container signature\","
	    "\"image\":{\"docker-manifest-digest\":\"sha256:%s\"},"
	    "\"identity\":{\"docker-reference\":\"%s\"}},"
	    "\"optional\":{\"creator\":\"%s\",\"timestamp\":1700000000}}",
	    hex, REF_A, creator);
	char in[800], sig[800];
	int rc = -1;

	snprintf(in, sizeof(in), "%s/%s.json", fx.dir, name);
	snprintf(sig, sizeof(sig), "%s/%s.sig", fx.dir, name);
	if (json != NULL && spit(in, json, strlen(json)) == 0 &&
	    al_test_sh("GNUPGHOME=%s " GPG " -u ed@example.test -o %s --sign %s",
	       fx.home, sig, in) == 0)
		rc = slurp(out, sig);
	free(json);
	return rc;
}

static int start_server(void)
{
	char script[1200], portfile[800];
	blob b = {NULL, 0};
	int i;

	snprintf(script, sizeof(script), "%s/tests/tools/sigserver.py",
	         al_test_source_dir());
	snprintf(portfile, sizeof(portfile), "%s/port", fx.dir);
	snprintf(fx.root, sizeof(fx.root), "%s/www", fx.dir);
	if (mkdir(fx.root, 0755) != 0)
		return -1;
	fx.server = fork();
	if (fx.server < 0)
		return -1;
	if (fx.server == 0) {
		execlp("python3", "python3", script, "--root", fx.root,
		       "--port-file", portfile, (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 200 && fx.port == 0; i++) {
		if (slurp(&b, portfile) == 0) {
			fx.port = (int)strtol((const char *)b.p, NULL, 10);
			free(b.p);
			break;
		}
		if (waitpid(fx.server, NULL, WNOHANG) == fx.server) {
			fx.server = 0;
			break;
		}
		usleep(50 * 1000);
	}
	return fx.port > 0 ? 0 : -1;
}

/* Write bytes to <dir>/sha256=<hex>/signature-<k>, creating directories. */
static int put_sig(const char *dir, const char *hex, unsigned k, const void *p,
                   size_t n)
{
	char *d = al_sprintf("%s/sha256=%s", dir, hex),
	     *f = al_sprintf("%s/sha256=%s/signature-%u", dir, hex, k);
	int rc = -1;

	if (d != NULL && f != NULL && al_fs_mkdir_p(d, 0755) == 0)
		rc = spit(f, p, n);
	free(d);
	free(f);
	return rc;
}

static int init(void)
{
	char www[900];

	if (fx.ready != 0)
		return fx.ready > 0;
	fx.ready = -1;
	snprintf(fx.dir, sizeof(fx.dir), "%s", al_test_tmpdir());
	snprintf(fx.home, sizeof(fx.home), "%s/gnupg", fx.dir);
	atexit(cleanup);
	if (system("command -v gpg >/dev/null 2>&1") != 0 ||
	    system("command -v python3 >/dev/null 2>&1") != 0) {
		al_test_skip("gpg or python3 not found: the signature store "
		             "tests");
		return 0;
	}
	if (mkdir(fx.home, 0700) != 0 ||
	    al_test_sh("GNUPGHOME=%s " GPG
	       " --quick-gen-key 'Ed <ed@example.test>' ed25519 sign never",
	       fx.home) != 0 ||
	    al_test_sh("GNUPGHOME=%s " GPG " --export ed@example.test > %s/kr", fx.home,
	       fx.dir) != 0 ||
	    al_test_sh("GNUPGHOME=%s " GPG " --with-colons --list-keys ed@example.test "
	       "| awk -F: '/^fpr/{print $10; exit}' "
	       "> %s/fpr",
	       fx.home, fx.dir) != 0)
		goto fail;
	{
		blob k = {NULL, 0}, f = {NULL, 0};
		char path[900];
		int rc;

		snprintf(path, sizeof(path), "%s/kr", fx.dir);
		if (slurp(&k, path) != 0)
			goto fail;
		rc = al_pgp_keyring_load(&fx.kr, k.p, k.n, path);
		free(k.p);
		snprintf(path, sizeof(path), "%s/fpr", fx.dir);
		if (rc != 0 || slurp(&f, path) != 0 || f.n < 40) {
			free(f.p);
			goto fail;
		}
		memcpy(fx.fpr, f.p, 40);
		free(f.p);
	}
	if (sign(&fx.good, "good", HEX_A, "one") ||
	    sign(&fx.good2, "good2", HEX_A, "two") ||
	    sign(&fx.wrong, "wrong", HEX_B, "three") || start_server() != 0)
		goto fail;
	/* good: one good signature; two: good, wrong, (gap), good2; bad: wrong
	 * only; alt: good2 */
	snprintf(www, sizeof(www), "%s/good", fx.root);
	if (put_sig(www, HEX_A, 1, fx.good.p, fx.good.n))
		goto fail;
	snprintf(www, sizeof(www), "%s/two", fx.root);
	if (put_sig(www, HEX_A, 1, fx.good.p, fx.good.n) ||
	    put_sig(www, HEX_A, 2, fx.wrong.p, fx.wrong.n) ||
	    put_sig(www, HEX_A, 4, fx.good2.p, fx.good2.n))
		goto fail;
	snprintf(www, sizeof(www), "%s/bad", fx.root);
	if (put_sig(www, HEX_A, 1, fx.wrong.p, fx.wrong.n))
		goto fail;
	snprintf(www, sizeof(www), "%s/alt", fx.root);
	if (put_sig(www, HEX_A, 1, fx.good2.p, fx.good2.n))
		goto fail;
	fx.ready = 1;
	return 1;
fail:
	CU_FAIL("gpg and python3 are installed but making the fixtures failed");
	return 0;
}

static char *url(const char *path)
{
	return al_sprintf("http://127.0.0.1:%d%s", fx.port, path);
}

static void digest_a(al_digest *d)
{
	CU_ASSERT_EQUAL(al_digest_parse_str(d, "sha256:" HEX_A), 0);
}

static int contains(const char *hay, const char *needle)
{
	int ok = hay != NULL && strstr(hay, needle) != NULL;

	if (!ok)
		fprintf(stderr, "\n'%s' not in '%s'\n", needle,
		        hay != NULL ? hay : "(null)");
	return ok;
}

static int blob_eq(const al_sig_blob *b, const void *p, size_t n)
{
	return b->len == n && memcmp(b->data, p, n) == 0;
}

/* The paths the server was asked for, one per line; caller frees. */
static char *server_log(void)
{
	al_http *h = NULL;
	al_buf body = AL_BUF_INIT(1024 * 1024);
	al_http_resp resp = AL_HTTP_RESP_INIT;
	al_http_req req;
	char *u = url("/_log"), *out = NULL;

	memset(&req, 0, sizeof(req));
	req.url = u;
	req.body_out = &body;
	if (u != NULL && al_http_new(&h, NULL) == 0 &&
	    al_http_do(h, &req, &resp) == 0 && resp.status == 200)
		out = al_buf_detach(&body, NULL);
	al_http_resp_clear(&resp);
	al_buf_free(&resp.error_body);
	al_buf_free(&body);
	al_http_free(h);
	free(u);
	return out;
}

static void test_sigstore__dir_reads_until_first_gap(void)
{
	char *dir = al_path_join(al_test_tmpdir(), "dirstore"), *link = NULL,
	     *target = NULL;
	al_sig_list l = AL_SIG_LIST_INIT;
	uint8_t *big = calloc(1, AL_SIG_MAX_BYTES + 1);
	al_digest a, b;

	CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
	CU_ASSERT_PTR_NOT_NULL_FATAL(big);
	digest_a(&a);
	CU_ASSERT_EQUAL(al_digest_parse_str(&b, "sha256:" HEX_B), 0);
	CU_ASSERT_EQUAL(put_sig(dir, HEX_A, 1, "one", 3), 0);
	CU_ASSERT_EQUAL(put_sig(dir, HEX_A, 2, "two", 3), 0);
	CU_ASSERT_EQUAL(put_sig(dir, HEX_A, 4, "four", 4), 0);
	CU_ASSERT_EQUAL(al_sig_dir_read(&l, dir, &a, 0), 0);
	CU_ASSERT_EQUAL(l.n, 2);
	if (l.n == 2) {
		CU_ASSERT(blob_eq(&l.items[0], "one", 3));
		CU_ASSERT(blob_eq(&l.items[1], "two", 3));
	}
	al_sig_list_clear(&l);
	CU_ASSERT_EQUAL(al_sig_dir_read(&l, dir, &a, 1), 0);
	CU_ASSERT_EQUAL(l.n, 1);
	al_sig_list_clear(&l);
	/* no directory for the digest: nothing, no error */
	CU_ASSERT_EQUAL(al_sig_dir_read(&l, dir, &b, 0), 0);
	CU_ASSERT_EQUAL(l.n, 0);
	/* a directory that is not there is a wrong source, not "no signatures" */
	CU_ASSERT_EQUAL(al_sig_dir_read(&l, "/nonexistent/airlock", &a, 0), AL_ENOTFOUND);
	CU_ASSERT(contains(al_error_message(), "/nonexistent/airlock"));
	/* bounded size */
	CU_ASSERT_EQUAL(put_sig(dir, HEX_B, 1, big, AL_SIG_MAX_BYTES + 1), 0);
	CU_ASSERT_EQUAL(al_sig_dir_read(&l, dir, &b, 0), AL_ELIMIT);
	al_sig_list_clear(&l);
	/* symlinks are not followed */
	link = al_sprintf("%s/sha256=%s/signature-3", dir, HEX_A);
	target = al_sprintf("%s/sha256=%s/signature-1", dir, HEX_A);
	CU_ASSERT_EQUAL(symlink(target, link), 0);
	CU_ASSERT(al_sig_dir_read(&l, dir, &a, 0) < 0);
	al_sig_list_clear(&l);
	free(link);
	free(target);
	free(big);
	free(dir);
}

static void test_sigstore__store_save_numbers_and_dedups(void)
{
	char *path = al_path_join(al_test_tmpdir(), "store1"), *f1 = NULL,
	     *f3 = NULL;
	al_store_opts so = {.create = 1};
	al_sig_list l = AL_SIG_LIST_INIT;
	al_store *s = NULL;
	unsigned k = 0;
	blob b = {NULL, 0};
	al_digest a;

	digest_a(&a);
	CU_ASSERT_EQUAL_FATAL(al_store_open(&s, path, &so), 0);
	CU_ASSERT_EQUAL(al_sig_store_save(s, &a, (const uint8_t *)"aaa", 3, &k),
	                0);
	CU_ASSERT_EQUAL(k, 1);
	CU_ASSERT_EQUAL(
	    al_sig_store_save(s, &a, (const uint8_t *)"bbbb", 4, &k), 0);
	CU_ASSERT_EQUAL(k, 2);
	CU_ASSERT_EQUAL(al_sig_store_save(s, &a, (const uint8_t *)"aaa", 3, &k),
	                0);
	CU_ASSERT_EQUAL(k, 1);
	CU_ASSERT_EQUAL(
	    al_sig_store_save(s, &a, (const uint8_t *)"cc", 2, NULL), 0);
	f1 = al_sprintf("%s/signatures/sha256=%s/signature-1", path, HEX_A);
	f3 = al_sprintf("%s/signatures/sha256=%s/signature-3", path, HEX_A);
	CU_ASSERT_EQUAL(slurp(&b, f1), 0);
	CU_ASSERT(b.n == 3 && memcmp(b.p, "aaa", 3) == 0);
	free(b.p);
	b.p = NULL;
	CU_ASSERT_EQUAL(slurp(&b, f3), 0);
	CU_ASSERT(b.n == 2 && memcmp(b.p, "cc", 2) == 0);
	free(b.p);
	CU_ASSERT_EQUAL(al_sig_store_load(s, &a, &l), 0);
	CU_ASSERT_EQUAL(l.n, 3);
	if (l.n == 3)
		CU_ASSERT(blob_eq(&l.items[1], "bbbb", 4));
	al_sig_list_clear(&l);
	CU_ASSERT_EQUAL(al_sig_store_save(s, &a, (const uint8_t *)"", 0, NULL),
	                AL_EINVAL);
	al_store_free(s);
	free(f1);
	free(f3);
	free(path);
}

/* One thread's saves: 5 distinct signatures tagged with its number. */
typedef struct saver {
	pthread_t tid;
	al_store *s;
	int id;
	int failed;
} saver;

static void *save_five(void *arg)
{
	saver *sv = arg;
	al_digest a;
	uint8_t sig[8];
	int k;

	if (al_digest_parse_str(&a, "sha256:" HEX_A) != 0) {
		sv->failed = 1;
		return NULL;
	}
	for (k = 0; k < 5; k++) {
		memset(sig, 0, sizeof(sig));
		sig[0] = (uint8_t)sv->id;
		sig[1] = (uint8_t)k;
		if (al_sig_store_save(sv->s, &a, sig, sizeof(sig), NULL) != 0)
			sv->failed = 1;
	}
	return NULL;
}

static void test_sigstore__store_save_is_thread_safe(void)
{
	char *path = al_path_join(al_test_tmpdir(), "store3");
	al_store_opts so = {.create = 1};
	al_sig_list l = AL_SIG_LIST_INIT;
	al_store *s = NULL;
	saver sv[4];
	int seen[4][5];
	size_t i;
	al_digest a;

	digest_a(&a);
	memset(seen, 0, sizeof(seen));
	CU_ASSERT_EQUAL_FATAL(al_store_open(&s, path, &so), 0);
	for (i = 0; i < 4; i++) {
		sv[i].s = s;
		sv[i].id = (int)i;
		sv[i].failed = 0;
		CU_ASSERT_EQUAL(
		    pthread_create(&sv[i].tid, NULL, save_five, &sv[i]), 0);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(sv[i].tid, NULL);
		CU_ASSERT_EQUAL(sv[i].failed, 0);
	}
	/* 20 files signature-1..20, each save once */
	CU_ASSERT_EQUAL(al_sig_store_load(s, &a, &l), 0);
	CU_ASSERT_EQUAL(l.n, 20);
	for (i = 0; i < l.n; i++) {
		const uint8_t *p = l.items[i].data;

		if (l.items[i].len == 8 && p[0] < 4 && p[1] < 5)
			seen[p[0]][p[1]]++;
	}
	for (i = 0; i < 20; i++)
		CU_ASSERT_EQUAL(seen[i / 5][i % 5], 1);
	al_sig_list_clear(&l);
	al_store_free(s);
	free(path);
}

/* Three signatures with every byte value. */
static void sample_sigs(uint8_t bufs[3][300], const uint8_t *ptrs[3],
                        size_t lens[3])
{
	size_t i, j;

	for (i = 0; i < 3; i++) {
		for (j = 0; j < 300; j++)
			bufs[i][j] = (uint8_t)((j * (i + 7) + i) & 0xff);
		ptrs[i] = bufs[i];
		lens[i] = 256 + i * 20;
	}
}

static void test_sigstore__configmap_roundtrip_yaml_and_json(void)
{
	uint8_t bufs[3][300];
	const uint8_t *ptrs[3];
	size_t lens[3], i;
	int flags[2] = {0, AL_KRES_JSON}, f;
	al_digest a, b;

	digest_a(&a);
	CU_ASSERT_EQUAL(al_digest_parse_str(&b, "sha256:" HEX_B), 0);
	sample_sigs(bufs, ptrs, lens);
	for (f = 0; f < 2; f++) {
		al_buf out = AL_BUF_INIT(1024 * 1024);
		al_sig_list l = AL_SIG_LIST_INIT;

		CU_ASSERT_EQUAL(al_kres_signature_configmap(&out, &a, ptrs,
		                                            lens, 3, flags[f]),
		                0);
		CU_ASSERT_EQUAL(
		    al_sig_configmap_parse(&l, out.ptr, out.len, "cm", &a), 0);
		CU_ASSERT_EQUAL(l.n, 3);
		for (i = 0; i < l.n && i < 3; i++)
			CU_ASSERT(blob_eq(&l.items[i], ptrs[i], lens[i]));
		al_sig_list_clear(&l);
		CU_ASSERT_EQUAL(
		    al_sig_configmap_parse(&l, out.ptr, out.len, "cm", &b), 0);
		CU_ASSERT_EQUAL(l.n, 0);
		al_buf_free(&out);
	}
}

static void test_sigstore__configmap_stream_and_list(void)
{
	static const char stream[] =
	    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sha256-" HEX_B
	    "\n"
	    "binaryData:\n  sha256-" HEX_B "-1: Yg==\n  sha256-" HEX_A
	    "-2: dHdv\n"
	    "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: x\n"
	    "data:\n  sha256-" HEX_A "-3: c2VjcmV0\n"
	    "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "
	    "sha256-" HEX_A "\n"
	    "binaryData:\n  sha256-" HEX_A "-10: dGVu\n  sha256-" HEX_A
	    "-1: b25l\n";
	static const char list[] =
	    "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[{"
	    "\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	    "\"metadata\":{\"name\":\"x\"},\"binaryData\":{\"sha256-" HEX_A
	    "-1\":\"b25l\"}},"
	    "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{"
	    "\"name\":\"y\"},"
	    "\"binaryData\":{\"sha256-" HEX_A "-2\":\"dHdv\"}}]}";
	al_sig_list l = AL_SIG_LIST_INIT;
	al_digest a;

	digest_a(&a);
	CU_ASSERT_EQUAL(al_sig_configmap_parse(&l, (const uint8_t *)stream,
	                                       strlen(stream), "stream", &a),
	                0);
	CU_ASSERT_EQUAL(l.n, 3);
	if (l.n == 3) {
		CU_ASSERT(blob_eq(&l.items[0], "one", 3));
		CU_ASSERT(blob_eq(&l.items[1], "two", 3));
		CU_ASSERT(blob_eq(&l.items[2], "ten", 3));
	}
	al_sig_list_clear(&l);
	CU_ASSERT_EQUAL(al_sig_configmap_parse(&l, (const uint8_t *)list,
	                                       strlen(list), "list", &a),
	                0);
	CU_ASSERT_EQUAL(l.n, 2);
	if (l.n == 2)
		CU_ASSERT(blob_eq(&l.items[1], "two", 3));
	al_sig_list_clear(&l);
}

static void test_sigstore__configmap_rejects_bad_entries(void)
{
	char *bad64 = al_sprintf(
	    "{\"kind\":\"ConfigMap\",\"binaryData\":{\"sha256-%s-1\":\"!!!\"}}",
	    HEX_A);
	char *badnum = al_sprintf("{\"kind\":\"ConfigMap\",\"binaryData\":{"
	                          "\"sha256-%s-x\":\"b25l\"}}",
	                          HEX_A);
	uint8_t *big = calloc(1, AL_SIG_MAX_BYTES + 3);
	char *b64 =
	    big != NULL ? al_base64_encode(big, AL_SIG_MAX_BYTES + 3) : NULL;
	char *toobig =
	    b64 != NULL ? al_sprintf("{\"kind\":\"ConfigMap\",\"binaryData\":{"
	                             "\"sha256-%s-1\":\"%s\"}}",
	                             HEX_A, b64)
	                : NULL;
	al_sig_list l = AL_SIG_LIST_INIT;
	al_digest a;

	digest_a(&a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(toobig);
	CU_ASSERT_EQUAL(al_sig_configmap_parse(&l, (const uint8_t *)bad64,
	                                       strlen(bad64), "cm", &a),
	                AL_EPARSE);
	CU_ASSERT(contains(al_error_message(), "base64"));
	CU_ASSERT_EQUAL(al_sig_configmap_parse(&l, (const uint8_t *)badnum,
	                                       strlen(badnum), "cm", &a),
	                AL_EPARSE);
	CU_ASSERT_EQUAL(al_sig_configmap_parse(&l, (const uint8_t *)toobig,
	                                       strlen(toobig), "cm", &a),
	                AL_ELIMIT);
	CU_ASSERT_EQUAL(
	    al_sig_configmap_parse(&l, (const uint8_t *)"a: [", 4, "cm", &a),
	    AL_EPARSE);
	CU_ASSERT_EQUAL(l.n, 0);
	al_sig_list_clear(&l);
	free(bad64);
	free(badnum);
	free(big);
	free(b64);
	free(toobig);
}

static void test_sigstore__source_kinds(void)
{
	al_sig_source src = {0};

	CU_ASSERT_EQUAL(
	    al_sig_source_parse(&src, "https://mirror.example/sigs"), 0);
	CU_ASSERT_EQUAL(src.kind, AL_SIG_SOURCE_HTTP);
	CU_ASSERT_EQUAL(al_sig_source_parse(&src, al_test_tmpdir()), 0);
	CU_ASSERT_EQUAL(src.kind, AL_SIG_SOURCE_DIR);
	CU_ASSERT_EQUAL(al_sig_source_parse(&src, "file:///"), 0);
	CU_ASSERT_EQUAL(src.kind, AL_SIG_SOURCE_DIR);
	CU_ASSERT_STRING_EQUAL(src.location, "/");
	CU_ASSERT_EQUAL(al_sig_source_parse(&src, "/nonexistent/cm.yaml"), 0);
	CU_ASSERT_EQUAL(src.kind, AL_SIG_SOURCE_CONFIGMAP);
	CU_ASSERT_EQUAL(al_sig_source_parse(&src, ""), AL_EINVAL);
}

static void test_sigstore__http_stops_at_first_404(void)
{
	char raw[900], *base = NULL, *log = NULL;
	uint8_t *big;
	al_sig_list l = AL_SIG_LIST_INIT;
	al_http *h = NULL;
	al_digest a;

	if (!init())
		return;
	digest_a(&a);
	snprintf(raw, sizeof(raw), "%s/raw", fx.root);
	CU_ASSERT_EQUAL(put_sig(raw, HEX_A, 1, "one", 3), 0);
	CU_ASSERT_EQUAL(put_sig(raw, HEX_A, 2, "two", 3), 0);
	CU_ASSERT_EQUAL(put_sig(raw, HEX_A, 4, "four", 4), 0);
	CU_ASSERT_EQUAL_FATAL(al_http_new(&h, NULL), 0);
	base = url("/files/raw/");
	CU_ASSERT_EQUAL(
	    al_sig_http_read(&l, h, base, &a, 0, al_deadline_in(10000)), 0);
	CU_ASSERT_EQUAL(l.n, 2);
	if (l.n == 2) {
		CU_ASSERT(blob_eq(&l.items[0], "one", 3));
		CU_ASSERT(blob_eq(&l.items[1], "two", 3));
	}
	al_sig_list_clear(&l);
	/* the maximum is a setting */
	free(base);
	base = url("/files/raw");
	CU_ASSERT_EQUAL(
	    al_sig_http_read(&l, h, base, &a, 1, al_deadline_in(10000)), 0);
	CU_ASSERT_EQUAL(l.n, 1);
	al_sig_list_clear(&l);
	/* a body over the bound; the message names the URL without credentials
	 */
	snprintf(raw, sizeof(raw), "%s/big", fx.root);
	big = calloc(1, AL_SIG_MAX_BYTES + 1);
	CU_ASSERT_EQUAL(put_sig(raw, HEX_A, 1, big, AL_SIG_MAX_BYTES + 1), 0);
	free(base);
	base = al_sprintf("http://user:secret@127.0.0.1:%d/files/big", fx.port);
	CU_ASSERT_EQUAL(
	    al_sig_http_read(&l, h, base, &a, 0, al_deadline_in(10000)),
	    AL_ELIMIT);
	CU_ASSERT(contains(al_error_message(), "127.0.0.1"));
	CU_ASSERT(strstr(al_error_message(), "secret") == NULL);
	CU_ASSERT_EQUAL(l.n, 0);
	free(big);
	log = server_log();
	CU_ASSERT(contains(log, "/files/raw/sha256=" HEX_A "/signature-3\n"));
	CU_ASSERT(log != NULL && strstr(log, "signature-4") == NULL);
	free(log);
	al_http_free(h);
	free(base);
}

/* Options for sources with the fixture keyring. */
static al_sig_fetch_opts fopts(const al_sig_source *src, size_t n,
                               uint64_t budget_ms)
{
	al_sig_fetch_opts o;

	memset(&o, 0, sizeof(o));
	o.sources = src;
	o.nsources = n;
	o.keyring = fx.kr;
	o.policy = AL_SIG_IDENTITY_EXACT;
	o.budget_ms = budget_ms;
	return o;
}

static void test_sigstore__fetch_verifies_from_good_store(void)
{
	al_sig_fetch_result res = AL_SIG_FETCH_RESULT_INIT;
	al_sig_source src[1] = {0};
	al_sig_fetch_opts o;
	char *u;
	al_digest a;

	if (!init())
		return;
	digest_a(&a);
	u = url("/files/good");
	src[0].kind = AL_SIG_SOURCE_HTTP;
	src[0].location = u;
	o = fopts(src, 1, 10000);
	CU_ASSERT_EQUAL(al_sig_fetch(&res, &a, REF_A, &o), 0);
	CU_ASSERT_EQUAL(res.nsigs, 1);
	CU_ASSERT_EQUAL(res.nstores, 1);
	if (res.nsigs == 1) {
		CU_ASSERT_STRING_EQUAL(res.sigs[0].info.fingerprint, fx.fpr);
		CU_ASSERT_STRING_EQUAL(res.sigs[0].info.creator, "one");
		CU_ASSERT(res.sigs[0].len == fx.good.n &&
		          memcmp(res.sigs[0].data, fx.good.p, fx.good.n) == 0);
	}
	if (res.nstores == 1) {
		CU_ASSERT_EQUAL(res.stores[0].status, AL_SIG_STORE_OK);
		CU_ASSERT_EQUAL(res.stores[0].nverified, 1);
		CU_ASSERT_STRING_EQUAL(res.stores[0].location, u);
	}
	al_sig_fetch_result_clear(&res);
	al_sig_fetch_result_clear(NULL);
	free(u);
}

static void test_sigstore__fetch_faulty_stores_bounded_by_budget(void)
{
	al_sig_fetch_result res = AL_SIG_FETCH_RESULT_INIT;
	char *hang = NULL, *stall = NULL, *reset = NULL;
	al_sig_source src[3] = {0};
	al_sig_fetch_opts o;
	uint64_t t0;
	al_digest a;
	int rc;

	if (!init())
		return;
	digest_a(&a);
	hang = url("/hang/x");
	stall = url("/stall/x");
	reset = url("/reset/x");
	src[0].kind = src[1].kind = src[2].kind = AL_SIG_SOURCE_HTTP;
	src[0].location = hang;
	src[1].location = stall;
	src[2].location = reset;
	o = fopts(src, 3, 2000);
	/* per-request bounds far above the budget: the budget must end it */
	o.request_timeout_ms = 60000;
	o.low_speed_time_ms = 60000;
	t0 = al_clock_now_ms();
	rc = al_sig_fetch(&res, &a, REF_A, &o);
	CU_ASSERT(al_clock_now_ms() - t0 < 2000 + 2500);
	CU_ASSERT_EQUAL(rc, AL_ETIMEOUT);
	CU_ASSERT(contains(al_error_message(), "signature store '"));
	CU_ASSERT(contains(al_error_message(), "/hang/x' timed out after"));
	CU_ASSERT_EQUAL(res.budget_expired, 1);
	CU_ASSERT_EQUAL(res.nsigs, 0);
	CU_ASSERT_EQUAL_FATAL(res.nstores, 3);
	CU_ASSERT_EQUAL(res.stores[0].status, AL_SIG_STORE_TIMEOUT);
	CU_ASSERT(contains(res.stores[0].message, "timed out after"));
	CU_ASSERT_EQUAL(res.stores[1].status, AL_SIG_STORE_TIMEOUT);
	CU_ASSERT_EQUAL(res.stores[2].status, AL_SIG_STORE_ERROR);
	CU_ASSERT_EQUAL(res.stores[2].code, AL_ENET);
	CU_ASSERT(res.stores[0].elapsed_ms >= 1500);
	al_sig_fetch_result_clear(&res);
	free(hang);
	free(stall);
	free(reset);
}

static void test_sigstore__fetch_good_store_wins_over_faulty_ones(void)
{
	al_sig_fetch_result res = AL_SIG_FETCH_RESULT_INIT;
	char *hang = NULL, *stall = NULL, *good = NULL;
	al_sig_source src[3] = {0};
	al_sig_fetch_opts o;
	uint64_t t0;
	al_digest a;

	if (!init())
		return;
	digest_a(&a);
	hang = url("/hang/x");
	stall = url("/stall/x");
	good = url("/files/good");
	src[0].kind = src[1].kind = src[2].kind = AL_SIG_SOURCE_HTTP;
	src[0].location = hang;
	src[1].location = stall;
	src[2].location = good;
	o = fopts(src, 3, 30000);
	o.request_timeout_ms = 60000;
	o.low_speed_time_ms = 60000;
	t0 = al_clock_now_ms();
	CU_ASSERT_EQUAL(al_sig_fetch(&res, &a, REF_A, &o), 0);
	CU_ASSERT(al_clock_now_ms() - t0 < 5000);
	CU_ASSERT_EQUAL(res.nsigs, 1);
	CU_ASSERT_EQUAL(res.budget_expired, 0);
	CU_ASSERT_EQUAL_FATAL(res.nstores, 3);
	CU_ASSERT_EQUAL(res.stores[0].status, AL_SIG_STORE_SKIPPED);
	CU_ASSERT_EQUAL(res.stores[1].status, AL_SIG_STORE_SKIPPED);
	CU_ASSERT_EQUAL(res.stores[2].status, AL_SIG_STORE_OK);
	if (res.nsigs == 1)
		CU_ASSERT_EQUAL(res.sigs[0].store, 2);
	al_sig_fetch_result_clear(&res);
	free(hang);
	free(stall);
	free(good);
}

static void test_sigstore__fetch_per_request_timeouts(void)
{
	al_sig_fetch_result res = AL_SIG_FETCH_RESULT_INIT;
	char *hang = url("/hang/y"), *stall = url("/stall/y");
	al_sig_source src[2] = {0};
	al_sig_fetch_opts o;
	uint64_t t0, dt;
	al_digest a;

	if (!init())
		goto out;
	digest_a(&a);
	src[0].kind = src[1].kind = AL_SIG_SOURCE_HTTP;
	src[0].location = hang;
	src[1].location = stall;
	o = fopts(src, 2, 30000);
	o.request_timeout_ms = 1500; /* bounds the hang */
	o.low_speed_time_ms = 1000;  /* bounds the stall */
	o.max_retries = AL_HTTP_NO_RETRY;
	t0 = al_clock_now_ms();
	CU_ASSERT_EQUAL(al_sig_fetch(&res, &a, REF_A, &o), AL_ETIMEOUT);
	dt = al_clock_now_ms() - t0;
	CU_ASSERT(dt < 6000);
	CU_ASSERT(dt >= 900);
	CU_ASSERT_EQUAL(res.budget_expired, 0);
	CU_ASSERT_EQUAL_FATAL(res.nstores, 2);
	CU_ASSERT_EQUAL(res.stores[0].status, AL_SIG_STORE_TIMEOUT);
	CU_ASSERT_EQUAL(res.stores[1].status, AL_SIG_STORE_TIMEOUT);
out:
	al_sig_fetch_result_clear(&res);
	free(hang);
	free(stall);
}

static void test_sigstore__fetch_caller_cancel(void)
{
	al_sig_fetch_result res = AL_SIG_FETCH_RESULT_INIT;
	char *hang = url("/hang/z");
	al_sig_source src[1] = {0};
	al_sig_fetch_opts o;
	al_cancel *c = NULL;
	uint64_t t0;
	al_digest a;

	if (!init() || al_cancel_new(&c) != 0)
		goto out;
	digest_a(&a);
	src[0].kind = AL_SIG_SOURCE_HTTP;
	src[0].location = hang;
	o = fopts(src, 1, 30000);
	o.cancel = c;
	al_cancel_set(c);
	t0 = al_clock_now_ms();
	CU_ASSERT_EQUAL(al_sig_fetch(&res, &a, REF_A, &o), AL_ECANCELED);
	CU_ASSERT(al_clock_now_ms() - t0 < 4000);
	if (res.nstores == 1)
		CU_ASSERT_EQUAL(res.stores[0].status, AL_SIG_STORE_SKIPPED);
out:
	al_sig_fetch_result_clear(&res);
	al_cancel_free(c);
	free(hang);
}

static void test_sigstore__fetch_outcomes_and_require_all(void)
{
	al_sig_fetch_result res = AL_SIG_FETCH_RESULT_INIT;
	char *bad = url("/files/bad"), *good = url("/files/good"),
	     *two = url("/files/two");
	char *empty = al_path_join(al_test_tmpdir(), "emptydir"),
	     *full = al_path_join(al_test_tmpdir(), "fulldir");
	al_sig_source src[2] = {0};
	al_sig_fetch_opts o;
	al_digest a;

	if (!init())
		goto out;
	digest_a(&a);
	CU_ASSERT_EQUAL(al_fs_mkdir_p(empty, 0755), 0);
	CU_ASSERT_EQUAL(put_sig(full, HEX_A, 1, fx.good.p, fx.good.n), 0);
	/* only a signature for another digest: bad content */
	src[0].kind = AL_SIG_SOURCE_HTTP;
	src[0].location = bad;
	o = fopts(src, 1, 10000);
	CU_ASSERT_EQUAL(al_sig_fetch(&res, &a, REF_A, &o), AL_EVERIFY);
	CU_ASSERT(contains(al_error_message(), "digest mismatch"));
	if (res.nstores == 1) {
		CU_ASSERT_EQUAL(res.stores[0].status, AL_SIG_STORE_INVALID);
		CU_ASSERT_EQUAL(res.stores[0].nfound, 1);
	}
	/* good, wrong, gap: two found, one verified */
	src[0].location = two;
	CU_ASSERT_EQUAL(al_sig_fetch(&res, &a, REF_A, &o), 0);
	if (res.nstores == 1) {
		CU_ASSERT_EQUAL(res.stores[0].nfound, 2);
		CU_ASSERT_EQUAL(res.stores[0].nverified, 1);
	}
	/* require_all: an empty directory store fails the set */
	src[0].location = good;
	src[1].kind = AL_SIG_SOURCE_DIR;
	src[1].location = empty;
	o = fopts(src, 2, 10000);
	o.require_all = 1;
	CU_ASSERT_EQUAL(al_sig_fetch(&res, &a, REF_A, &o), AL_ENOTFOUND);
	if (res.nstores == 2) {
		CU_ASSERT_EQUAL(res.stores[0].status, AL_SIG_STORE_OK);
		CU_ASSERT_EQUAL(res.stores[1].status, AL_SIG_STORE_NOT_FOUND);
	}
	CU_ASSERT(contains(al_error_message(), empty));
	/* both yield one: identical bytes are listed once */
	src[1].location = full;
	CU_ASSERT_EQUAL(al_sig_fetch(&res, &a, REF_A, &o), 0);
	CU_ASSERT_EQUAL(res.nsigs, 1);
	/* no keyring is a usage error */
	o.keyring = NULL;
	CU_ASSERT_EQUAL(al_sig_fetch(&res, &a, REF_A, &o), AL_EINVAL);
out:
	al_sig_fetch_result_clear(&res);
	free(bad);
	free(good);
	free(two);
	free(empty);
	free(full);
}

static void test_sigstore__fetch_from_configmap_file(void)
{
	al_sig_fetch_result res = AL_SIG_FETCH_RESULT_INIT;
	char *path = al_path_join(al_test_tmpdir(), "sigs.yaml");
	al_buf out = AL_BUF_INIT(1024 * 1024);
	al_sig_source src[1] = {0};
	al_sig_fetch_opts o;
	const uint8_t *ptrs[2];
	size_t lens[2];
	al_digest a;

	if (!init())
		goto out;
	digest_a(&a);
	ptrs[0] = fx.wrong.p;
	lens[0] = fx.wrong.n;
	ptrs[1] = fx.good2.p;
	lens[1] = fx.good2.n;
	CU_ASSERT_EQUAL(al_kres_signature_configmap(&out, &a, ptrs, lens, 2, 0),
	                0);
	CU_ASSERT_EQUAL(al_fs_write_atomic(path, out.ptr, out.len), 0);
	CU_ASSERT_EQUAL(al_sig_source_parse(&src[0], path), 0);
	CU_ASSERT_EQUAL(src[0].kind, AL_SIG_SOURCE_CONFIGMAP);
	o = fopts(src, 1, 10000);
	CU_ASSERT_EQUAL(al_sig_fetch(&res, &a, REF_A, &o), 0);
	CU_ASSERT_EQUAL(res.nsigs, 1);
	if (res.nsigs == 1)
		CU_ASSERT_STRING_EQUAL(res.sigs[0].info.creator, "two");
out:
	al_sig_fetch_result_clear(&res);
	al_buf_free(&out);
	free(path);
}

static void test_sigstore__fetch_release_saves_into_store(void)
{
	al_sig_fetch_result res = AL_SIG_FETCH_RESULT_INIT;
	char *good = url("/files/good"), *alt = url("/files/alt");
	char *path = al_path_join(al_test_tmpdir(), "store2"), *f1 = NULL,
	     *f2 = NULL, *f3 = NULL;
	al_store_opts so = {.create = 1};
	al_store *s = NULL;
	al_sig_source src[2] = {0};
	al_sig_fetch_opts o;
	blob b = {NULL, 0};
	al_digest a;

	if (!init() || al_store_open(&s, path, &so) != 0)
		goto out;
	digest_a(&a);
	src[0].kind = src[1].kind = AL_SIG_SOURCE_HTTP;
	src[0].location = good;
	src[1].location = alt;
	o = fopts(src, 2, 10000);
	o.require_all = 1;
	CU_ASSERT_EQUAL(al_sig_fetch_release(s, &a, REF_A, &o, &res), 0);
	CU_ASSERT_EQUAL(res.nsigs, 2);
	f1 = al_sprintf("%s/signatures/sha256=%s/signature-1", path, HEX_A);
	f2 = al_sprintf("%s/signatures/sha256=%s/signature-2", path, HEX_A);
	f3 = al_sprintf("%s/signatures/sha256=%s/signature-3", path, HEX_A);
	CU_ASSERT_EQUAL(slurp(&b, f1), 0);
	CU_ASSERT(b.p != NULL && b.n == fx.good.n &&
	          memcmp(b.p, fx.good.p, b.n) == 0);
	free(b.p);
	b.p = NULL;
	CU_ASSERT_EQUAL(slurp(&b, f2), 0);
	CU_ASSERT(b.p != NULL && b.n == fx.good2.n &&
	          memcmp(b.p, fx.good2.p, b.n) == 0);
	free(b.p);
	/* again: nothing new */
	CU_ASSERT_EQUAL(al_sig_fetch_release(s, &a, REF_A, &o, &res), 0);
	CU_ASSERT_EQUAL(al_fs_exists(f3), 0);
out:
	al_sig_fetch_result_clear(&res);
	al_store_free(s);
	free(good);
	free(alt);
	free(path);
	free(f1);
	free(f2);
	free(f3);
}

int main(void)
{
	CU_TestInfo tests[] = {
	    {"dir_reads_until_first_gap",
	     test_sigstore__dir_reads_until_first_gap},
	    {"store_save_numbers_and_dedups",
	     test_sigstore__store_save_numbers_and_dedups},
	    {"store_save_is_thread_safe",
	     test_sigstore__store_save_is_thread_safe},
	    {"configmap_roundtrip_yaml_and_json",
	     test_sigstore__configmap_roundtrip_yaml_and_json},
	    {"configmap_stream_and_list",
	     test_sigstore__configmap_stream_and_list},
	    {"configmap_rejects_bad_entries",
	     test_sigstore__configmap_rejects_bad_entries},
	    {"source_kinds", test_sigstore__source_kinds},
	    {"http_stops_at_first_404", test_sigstore__http_stops_at_first_404},
	    {"fetch_verifies_from_good_store",
	     test_sigstore__fetch_verifies_from_good_store},
	    {"fetch_faulty_stores_bounded_by_budget",
	     test_sigstore__fetch_faulty_stores_bounded_by_budget},
	    {"fetch_good_store_wins_over_faulty_ones",
	     test_sigstore__fetch_good_store_wins_over_faulty_ones},
	    {"fetch_per_request_timeouts",
	     test_sigstore__fetch_per_request_timeouts},
	    {"fetch_caller_cancel", test_sigstore__fetch_caller_cancel},
	    {"fetch_outcomes_and_require_all",
	     test_sigstore__fetch_outcomes_and_require_all},
	    {"fetch_from_configmap_file",
	     test_sigstore__fetch_from_configmap_file},
	    {"fetch_release_saves_into_store",
	     test_sigstore__fetch_release_saves_into_store},
	    CU_TEST_INFO_NULL,
	};
	int rc;

	if (al_http_global_init() != 0)
		return 1;
	rc = al_test_run("sigstore", tests);
	al_http_global_cleanup();
	return rc;
}
