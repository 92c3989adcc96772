/* test_registry.c: registry client vs docker-registry, TLS+htpasswd, tokens. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/CUnit.h>
#include <jansson.h>

#include "airlock/auth.h"
#include "airlock/buf.h"
#include "airlock/digest.h"
#include "airlock/error.h"
#include "airlock/http.h"
#include "airlock/log.h"
#include "airlock/registry.h"
#include "al_test.h"
#include "registry_int.h"

#define MAX_SERVERS 8

static pid_t server_pids[MAX_SERVERS];
static size_t nservers;

static void stop_servers(void)
{
	size_t i;

	for (i = 0; i < nservers; i++) {
		if (server_pids[i] > 0) {
			kill(server_pids[i], SIGTERM);
			waitpid(server_pids[i], NULL, 0);
			server_pids[i] = 0;
		}
	}
	nservers = 0;
}

static void remember_pid(pid_t pid)
{
	if (nservers == 0)
		atexit(stop_servers);
	if (nservers < MAX_SERVERS)
		server_pids[nservers++] = pid;
}

/* Run argv, wait, return the exit status (-1 if it did not exit normally). */
static int run(const char *const argv[])
{
	pid_t pid = fork();
	int st = 0;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static char *tool_path(const char *name)
{
	return al_sprintf("%s/tests/tools/%s", al_test_source_dir(), name);
}

/*
 * Start docker-registry through tests/tools/registry.sh in dir (with TLS
 * and htpasswd when tls is set). Writes "host:port" into addr. The
 * registry process outlives the bash wrapper; it is killed by PID at exit.
 */
static int start_docker_registry(const char *dir, int tls, char addr[64])
{
	static const char script[] =
	    "set -e; . \"$1\"; d=$2; mkdir -p \"$d\";"
	    "if [ \"$3\" = tls ]; then al_make_tls \"$d/tls\"; "
	    "al_make_htpasswd \"$d/htpasswd\" alice s3cret;"
	    " al_registry_start \"$d\" --htpasswd \"$d/htpasswd\" --tls "
	    "\"$d/tls/server.crt\" \"$d/tls/server.key\";"
	    "else al_registry_start \"$d\"; fi;"
	    "echo \"$AL_REGISTRY_PID $AL_REGISTRY_ADDR\" > \"$d/info\"";
	char *sh = tool_path("registry.sh"), *info = al_sprintf("%s/info", dir);
	const char *argv[] = {"bash",
	                      "-c",
	                      script,
	                      "registry-test",
	                      sh,
	                      dir,
	                      tls ? "tls" : "plain",
	                      NULL};
	FILE *f = NULL;
	long pid = 0;
	int rc = -1;

	if (sh == NULL || info == NULL)
		goto out;
	if (run(argv) != 0) {
		fprintf(stderr, "cannot start docker-registry in '%s'\n", dir);
		goto out;
	}
	f = fopen(info, "r");
	if (f == NULL || fscanf(f, "%ld %63s", &pid, addr) != 2 || pid <= 0)
		goto out;
	remember_pid((pid_t)pid);
	rc = 0;
out:
	if (f != NULL)
		fclose(f);
	free(sh);
	free(info);
	return rc;
}

/* Start tokenserver.py with extra args; addr gets "127.0.0.1:PORT". */
static int start_tokenserver(const char *dir, const char *user, char addr[64])
{
	char *py = tool_path("tokenserver.py"),
	     *pf = al_sprintf("%s/port", dir);
	const char *argv[] = {
	    "python3",    py,       "--port-file",
	    pf,           "--cuts", "4",
	    "--max-page", "2",      user != NULL ? "--user" : NULL,
	    user,         NULL};
	pid_t pid;
	FILE *f = NULL;
	int i, port = 0, rc = -1;

	if (py == NULL || pf == NULL)
		goto out;
	mkdir(dir, 0700);
	pid = fork();
	if (pid < 0)
		goto out;
	if (pid == 0) {
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	remember_pid(pid);
	for (i = 0; i < 100 && f == NULL; i++) {
		f = fopen(pf, "r");
		if (f == NULL)
			usleep(100 * 1000);
	}
	if (f == NULL || fscanf(f, "%d", &port) != 1 || port <= 0)
		goto out;
	snprintf(addr, 64, "127.0.0.1:%d", port);
	rc = 0;
out:
	if (f != NULL)
		fclose(f);
	free(py);
	free(pf);
	return rc;
}

static char plain_addr[64], tls_addr[64], token_addr[64];
static char *tls_dir;
static int plain_ok = -1, tls_ok = -1, token_ok = -1;

static int need_plain(void)
{
	if (plain_ok < 0) {
		char *d = al_sprintf("%s/plain", al_test_tmpdir());

		plain_ok =
		    d != NULL && start_docker_registry(d, 0, plain_addr) == 0;
		free(d);
	}
	CU_ASSERT(plain_ok == 1);
	return plain_ok == 1;
}

static int need_tls(void)
{
	if (tls_ok < 0) {
		tls_dir = al_sprintf("%s/tls", al_test_tmpdir());
		tls_ok = tls_dir != NULL &&
		         start_docker_registry(tls_dir, 1, tls_addr) == 0;
	}
	CU_ASSERT(tls_ok == 1);
	return tls_ok == 1;
}

static int need_token(void)
{
	if (token_ok < 0) {
		char *d = al_sprintf("%s/token", al_test_tmpdir());

		token_ok = d != NULL &&
		           start_tokenserver(d, "bob:hunter2", token_addr) == 0;
		free(d);
	}
	CU_ASSERT(token_ok == 1);
	return token_ok == 1;
}

/* An authfile with one entry; returns a loaded al_auth or NULL. */
static al_auth *auth_for(const char *host, const char *user, const char *pass)
{
	char *up = al_sprintf("%s:%s", user, pass);
	char *b64 = up != NULL
	                ? al_base64_encode((const uint8_t *)up, strlen(up))
	                : NULL;
	char *path =
	    al_sprintf("%s/auth-%s-%s.json", al_test_tmpdir(), user, pass);
	al_auth *a = NULL;
	FILE *f = path != NULL ? fopen(path, "w") : NULL;

	if (f != NULL && b64 != NULL) {
		fprintf(f, "{\"auths\": {\"%s\": {\"auth\": \"%s\"}}}\n", host,
		        b64);
		fclose(f);
		if (al_auth_new(&a, path) != 0)
			a = NULL;
	} else if (f != NULL) {
		fclose(f);
	}
	CU_ASSERT_PTR_NOT_NULL(a);
	free(up);
	free(b64);
	free(path);
	return a;
}

static al_registry *client(const char *addr, al_auth *auth, int insecure,
                           const char *ca_file, uint64_t chunk)
{
	al_registry_opts o = AL_REGISTRY_OPTS_INIT;
	al_registry *r = NULL;

	o.auth = auth;
	o.insecure = insecure;
	o.chunk_size = chunk;
	o.http.ca_file = ca_file;
	o.http.max_retries = 2;
	o.http.backoff_base_ms = 20;
	o.http.backoff_max_ms = 100;
	o.http.connect_timeout_ms = 5000;
	CU_ASSERT_EQUAL(al_registry_new(&r, addr, &o), 0);
	return r;
}

typedef struct mem_reader {
	const uint8_t *p;
	size_t n, pos;
} mem_reader;

static int mr_read(void *ud, uint8_t *p, size_t cap, size_t *got)
{
	mem_reader *m = ud;
	size_t k = m->n - m->pos < cap ? m->n - m->pos : cap;

	memcpy(p, m->p + m->pos, k);
	m->pos += k;
	*got = k;
	return 0;
}

static int mr_rewind(void *ud)
{
	((mem_reader *)ud)->pos = 0;
	return 0;
}

static void count_progress(void *ud, uint64_t n)
{
	*(uint64_t *)ud += n;
}

static uint8_t *random_bytes(size_t n)
{
	static unsigned state;
	uint8_t *p = malloc(n);
	size_t i;

	if (state == 0)
		state = al_test_seed() | 1u;
	for (i = 0; p != NULL && i < n; i++) {
		state = state * 1103515245u + 12345u;
		p[i] = (uint8_t)(state >> 16);
	}
	return p;
}

/* Upload n random bytes as a blob; *d receives the digest. Returns the bytes
 * (caller frees) or NULL. */
static uint8_t *push_random_blob(al_registry *r, const char *repo, size_t n,
                                 al_digest *d, uint64_t *progress)
{
	uint8_t *p = random_bytes(n);
	mem_reader m = {p, n, 0};
	al_reader rd = {mr_read, mr_rewind, &m};
	int rc;

	if (p == NULL)
		return NULL;
	CU_ASSERT_EQUAL(al_digest_bytes(d, AL_DIGEST_SHA256, p, n), 0);
	rc = al_registry_put_blob(r, repo, d, n, &rd,
	                          progress != NULL ? count_progress : NULL,
	                          progress);
	CU_ASSERT_EQUAL(rc, 0);
	if (rc != 0) {
		fprintf(stderr, "put_blob: %s\n", al_error_message());
		free(p);
		return NULL;
	}
	return p;
}

/* Fetch a blob and compare it with want. */
static void check_blob(al_registry *r, const char *repo, const al_digest *d,
                       const uint8_t *want, size_t n)
{
	al_buf got = AL_BUF_INIT(8 * AL_MIB);
	al_writer w = al_buf_writer(&got);
	uint64_t prog = 0;
	int rc, exists = 0;
	uint64_t size = 0;

	rc = al_registry_blob_exists(r, repo, d, &exists, &size);
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(exists, 1);
	CU_ASSERT_EQUAL(size, n);
	rc = al_registry_get_blob(r, repo, d, n, &w, 0, count_progress, &prog);
	CU_ASSERT_EQUAL(rc, 0);
	if (rc != 0)
		fprintf(stderr, "get_blob: %s\n", al_error_message());
	CU_ASSERT_EQUAL(got.len, n);
	CU_ASSERT(got.len == n && memcmp(got.ptr, want, n) == 0);
	CU_ASSERT(prog >= n);
	al_buf_free(&got);
}

/* A small OCI manifest referring to config and layer; caller frees. */
static char *make_manifest(const al_digest *config, size_t csize,
                           const al_digest *layer, size_t lsize)
{
	char c[AL_DIGEST_STRMAX], l[AL_DIGEST_STRMAX];

	return al_sprintf(
	    "{\"schemaVersion\":2,\"mediaType\":\"application/"
	    "vnd.oci.image.manifest.v1+json\","
	    "\"config\":{\"mediaType\":\"application/"
	    "vnd.oci.image.config.v1+json\",\"digest\":\"%s\",\"size\":%zu},"
	    "\"layers\":[{\"mediaType\":\"application/"
	    "vnd.oci.image.layer.v1.tar+gzip\",\"digest\":\"%s\",\"size\":%zu}]"
	    "}",
	    al_digest_str(config, c), csize, al_digest_str(layer, l), lsize);
}

/* Push config + layer + manifest under tag; *md receives the manifest digest.
 */
static int push_image(al_registry *r, const char *repo, const char *tag,
                      al_digest *md, char **manifest)
{
	al_digest cd, ld;
	uint8_t *config = push_random_blob(r, repo, 300, &cd, NULL);
	uint8_t *layer = push_random_blob(r, repo, 2000, &ld, NULL);
	char *m = NULL;
	int rc = -1;

	if (config == NULL || layer == NULL)
		goto out;
	m = make_manifest(&cd, 300, &ld, 2000);
	if (m == NULL)
		goto out;
	rc = al_registry_put_manifest(
	    r, repo, tag, (const uint8_t *)m, strlen(m),
	    "application/vnd.oci.image.manifest.v1+json");
	CU_ASSERT_EQUAL(rc, 0);
	if (rc != 0) {
		fprintf(stderr, "put_manifest: %s\n", al_error_message());
		goto out;
	}
	CU_ASSERT_EQUAL(al_digest_bytes(md, AL_DIGEST_SHA256, m, strlen(m)), 0);
	*manifest = m;
	m = NULL;
out:
	free(config);
	free(layer);
	free(m);
	return rc;
}

/* The core flow every registry must pass: blobs (one PUT and chunked),
 * manifests by tag and digest, tags. */
static void core_flow(al_registry *r, const char *repo)
{
	al_buf body = AL_BUF_INIT(AL_MANIFEST_MAX),
	       body2 = AL_BUF_INIT(AL_MANIFEST_MAX);
	al_digest small_d, big_d, md, got_d, got_d2, head_d;
	uint8_t *small = NULL, *big = NULL;
	char *manifest = NULL, *mt = NULL, *mt2 = NULL, **tags = NULL;
	char ds[AL_DIGEST_STRMAX];
	size_t ntags = 0, i;
	uint64_t prog = 0;
	int exists = 0, found_v1 = 0, found_v2 = 0;

	small = push_random_blob(r, repo, 1000, &small_d, &prog);
	CU_ASSERT_EQUAL(prog, 1000);
	if (small != NULL)
		check_blob(r, repo, &small_d, small, 1000);
	prog = 0;
	big = push_random_blob(r, repo, 300 * 1024, &big_d,
	                       &prog); /* 64 KiB chunks */
	CU_ASSERT_EQUAL(prog, 300 * 1024);
	if (big != NULL)
		check_blob(r, repo, &big_d, big, 300 * 1024);

	if (push_image(r, repo, "v1", &md, &manifest) != 0)
		goto out;
	CU_ASSERT_EQUAL(al_registry_put_manifest(
	                    r, repo, al_digest_str(&md, ds),
	                    (const uint8_t *)manifest, strlen(manifest),
	                    "application/vnd.oci.image.manifest.v1+json"),
	                0);
	CU_ASSERT_EQUAL(al_registry_put_manifest(
	                    r, repo, "v2", (const uint8_t *)manifest,
	                    strlen(manifest),
	                    "application/vnd.oci.image.manifest.v1+json"),
	                0);
	CU_ASSERT_EQUAL(
	    al_registry_get_manifest(r, repo, "v1", &body, &mt, &got_d), 0);
	CU_ASSERT_EQUAL(
	    al_registry_get_manifest(r, repo, ds, &body2, &mt2, &got_d2), 0);
	CU_ASSERT_EQUAL(body.len, strlen(manifest));
	CU_ASSERT(body.len == body2.len &&
	          memcmp(body.ptr, body2.ptr, body.len) == 0);
	CU_ASSERT(body.len == strlen(manifest) &&
	          memcmp(body.ptr, manifest, body.len) == 0);
	CU_ASSERT(al_digest_equal(&got_d, &md));
	CU_ASSERT(al_digest_equal(&got_d2, &md));
	CU_ASSERT(mt != NULL &&
	          strcmp(mt, "application/vnd.oci.image.manifest.v1+json") ==
	              0);
	CU_ASSERT(mt2 != NULL &&
	          strcmp(mt2, "application/vnd.oci.image.manifest.v1+json") ==
	              0);

	CU_ASSERT_EQUAL(
	    al_registry_head_manifest(r, repo, "v1", &exists, &head_d, NULL),
	    0);
	CU_ASSERT_EQUAL(exists, 1);
	CU_ASSERT(al_digest_equal(&head_d, &md));
	CU_ASSERT_EQUAL(
	    al_registry_head_manifest(r, repo, "nope", &exists, &head_d, NULL),
	    0);
	CU_ASSERT_EQUAL(exists, 0);

	CU_ASSERT_EQUAL(al_registry_list_tags(r, repo, &tags, &ntags), 0);
	for (i = 0; i < ntags; i++) {
		found_v1 |= strcmp(tags[i], "v1") == 0;
		found_v2 |= strcmp(tags[i], "v2") == 0;
		free(tags[i]);
	}
	free(tags);
	CU_ASSERT_EQUAL(ntags, 2);
	CU_ASSERT(found_v1 && found_v2);
out:
	free(small);
	free(big);
	free(manifest);
	free(mt);
	free(mt2);
	al_buf_free(&body);
	al_buf_free(&body2);
}

static void test_registry__core_flow_plain_registry(void)
{
	al_registry *r;

	if (!need_plain())
		return;
	/* plain http: reached through the insecure https -> http fallback */
	r = client(plain_addr, NULL, 1, NULL, 64 * 1024);
	if (r == NULL)
		return;
	core_flow(r, "airlock/core");
	CU_ASSERT_STRING_EQUAL(al_registry_host(r), plain_addr);
	al_registry_free(r);
}

static void test_registry__skopeo_reads_what_we_push(void)
{
	al_registry *r;
	al_digest md;
	char *manifest = NULL, *ref = NULL, *out = NULL, *cmd = NULL;
	al_buf got = AL_BUF_INIT(AL_MANIFEST_MAX);
	FILE *f;
	int st;

	if (!need_plain())
		return;
	r = client(plain_addr, NULL, 1, NULL, 0);
	if (r == NULL)
		return;
	if (push_image(r, "airlock/skopeo", "v1", &md, &manifest) != 0)
		goto out;
	/* an independent client sees the exact bytes we pushed */
	ref = al_sprintf("docker://%s/airlock/skopeo:v1", plain_addr);
	out = al_sprintf("%s/skopeo-raw.json", al_test_tmpdir());
	cmd = al_sprintf("skopeo inspect --raw --tls-verify=false '%s' > '%s'",
	                 ref, out);
	if (cmd == NULL)
		goto out;
	{
		const char *argv[] = {"sh", "-c", cmd, NULL};

		st = run(argv);
	}
	CU_ASSERT_EQUAL(st, 0);
	f = fopen(out, "rb");
	CU_ASSERT_PTR_NOT_NULL(f);
	if (f != NULL) {
		char chunk[4096];
		size_t n;

		while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0 &&
		       al_buf_append(&got, chunk, n) == 0)
			;
		fclose(f);
	}
	CU_ASSERT(got.len == strlen(manifest) &&
	          memcmp(got.ptr, manifest, got.len) == 0);
out:
	al_buf_free(&got);
	free(manifest);
	free(ref);
	free(out);
	free(cmd);
	al_registry_free(r);
}

static void test_registry__plain_http_needs_insecure(void)
{
	al_registry *r;
	int exists = 1;

	if (!need_plain())
		return;
	r = client(plain_addr, NULL, 0, NULL, 0);
	if (r == NULL)
		return;
	CU_ASSERT_EQUAL(al_registry_head_manifest(r, "airlock/core", "v1",
	                                          &exists, NULL, NULL),
	                AL_ENET);
	CU_ASSERT_EQUAL(exists, 1); /* untouched on failure */
	al_registry_free(r);
}

static void test_registry__unknown_manifest_is_enotfound(void)
{
	al_buf body = AL_BUF_INIT(AL_MANIFEST_MAX);
	al_registry *r;
	al_digest d;
	char *mt = NULL;

	if (!need_plain())
		return;
	r = client(plain_addr, NULL, 1, NULL, 0);
	if (r == NULL)
		return;
	CU_ASSERT_EQUAL(al_registry_get_manifest(r, "airlock/none",
	                                         "missing-tag", &body, &mt, &d),
	                AL_ENOTFOUND);
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(al_error_message(), "airlock/none:missing-tag"));
	CU_ASSERT_PTR_NULL(mt);
	CU_ASSERT_EQUAL(al_registry_get_manifest(r, "airlock/none", "bad/tag",
	                                         &body, &mt, &d),
	                AL_EINVAL);
	al_registry_free(r);
	al_buf_free(&body);
}

static void test_registry__tampered_blob_is_everify(void)
{
	al_buf got = AL_BUF_INIT(AL_MIB);
	al_writer w = al_buf_writer(&got);
	al_registry *r;
	al_digest d, other;
	uint8_t *p;
	char hex[AL_DIGEST_STRMAX];
	char *path = NULL;
	FILE *f;
	int exists = 0;

	if (!need_plain())
		return;
	r = client(plain_addr, NULL, 1, NULL, 0);
	if (r == NULL)
		return;
	p = push_random_blob(r, "airlock/tamper", 4096, &d, NULL);
	if (p == NULL)
		goto out;
	/* a wrong size is caught even without hashing */
	CU_ASSERT_EQUAL(al_registry_get_blob(r, "airlock/tamper", &d, 4095, &w,
	                                     AL_BLOB_NOVERIFY, NULL, NULL),
	                AL_EVERIFY);
	al_buf_reset(&got);
	/* a blob whose stored bytes changed (same length) fails the digest
	 * check */
	al_digest_hex(&d, hex);
	path = al_sprintf(
	    "%s/plain/data/docker/registry/v2/blobs/sha256/%.2s/%s/data",
	    al_test_tmpdir(), hex, hex);
	f = path != NULL ? fopen(path, "r+b") : NULL;
	CU_ASSERT_PTR_NOT_NULL(f);
	if (f == NULL)
		goto out;
	fputc(p[0] ^ 0xff, f);
	fclose(f);
	CU_ASSERT_EQUAL(al_registry_get_blob(r, "airlock/tamper", &d, 4096, &w,
	                                     0, NULL, NULL),
	                AL_EVERIFY);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), hex));
	/* and a digest the registry does not have is not found */
	CU_ASSERT_EQUAL(al_digest_bytes(&other, AL_DIGEST_SHA256, "nothing", 7),
	                0);
	al_buf_reset(&got);
	CU_ASSERT_EQUAL(al_registry_get_blob(r, "airlock/tamper", &other, 0, &w,
	                                     0, NULL, NULL),
	                AL_ENOTFOUND);
	CU_ASSERT_EQUAL(
	    al_registry_blob_exists(r, "airlock/tamper", &other, &exists, NULL),
	    0);
	CU_ASSERT_EQUAL(exists, 0);
out:
	free(p);
	free(path);
	al_buf_free(&got);
	al_registry_free(r);
}

static void test_registry__tampered_manifest_is_everify(void)
{
	al_buf body = AL_BUF_INIT(AL_MANIFEST_MAX);
	al_registry *r;
	al_digest md, d;
	char hex[AL_DIGEST_STRMAX], ds[AL_DIGEST_STRMAX];
	char *manifest = NULL, *path = NULL, *mt = NULL;
	const char *pos;
	FILE *f;

	if (!need_plain())
		return;
	r = client(plain_addr, NULL, 1, NULL, 0);
	if (r == NULL)
		return;
	if (push_image(r, "airlock/mtamper", "v1", &md, &manifest) != 0)
		goto out;
	/* the registry keeps manifests as blobs: change the config size
	 * 300 -> 301 (still valid JSON of the same length) */
	al_digest_hex(&md, hex);
	path = al_sprintf(
	    "%s/plain/data/docker/registry/v2/blobs/sha256/%.2s/%s/data",
	    al_test_tmpdir(), hex, hex);
	pos = strstr(manifest, "\"size\":300");
	CU_ASSERT_PTR_NOT_NULL(pos);
	f = path != NULL && pos != NULL ? fopen(path, "r+b") : NULL;
	CU_ASSERT_PTR_NOT_NULL(f);
	if (f == NULL)
		goto out;
	fseek(f, (long)(pos - manifest) + 9, SEEK_SET);
	fputc('1', f);
	fclose(f);
	CU_ASSERT_EQUAL(al_registry_get_manifest(r, "airlock/mtamper",
	                                         al_digest_str(&md, ds), &body,
	                                         &mt, &d),
	                AL_EVERIFY);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), ds));
	/* by tag: the bytes no longer match Docker-Content-Digest */
	CU_ASSERT_EQUAL(al_registry_get_manifest(r, "airlock/mtamper", "v1",
	                                         &body, &mt, &d),
	                AL_EVERIFY);
	CU_ASSERT_PTR_NULL(mt);
	CU_ASSERT_EQUAL(body.len, 0);
out:
	free(manifest);
	free(path);
	free(mt);
	al_buf_free(&body);
	al_registry_free(r);
}

static void test_registry__mount_between_repos(void)
{
	al_registry *r;
	al_digest d, missing;
	uint8_t *p;
	int mounted = -1, exists = 0;

	if (!need_plain())
		return;
	r = client(plain_addr, NULL, 1, NULL, 0);
	if (r == NULL)
		return;
	p = push_random_blob(r, "airlock/src", 5000, &d, NULL);
	if (p != NULL) {
		CU_ASSERT_EQUAL(al_registry_mount_blob(r, "airlock/dst",
		                                       "airlock/src", &d,
		                                       &mounted),
		                0);
		CU_ASSERT_EQUAL(mounted, 1);
		CU_ASSERT_EQUAL(al_registry_blob_exists(r, "airlock/dst", &d,
		                                        &exists, NULL),
		                0);
		CU_ASSERT_EQUAL(exists, 1);
		check_blob(r, "airlock/dst", &d, p, 5000);
	}
	/* docker-registry answers 202 with an open session for a missing blob
	 */
	mounted = -1;
	CU_ASSERT_EQUAL(
	    al_digest_bytes(&missing, AL_DIGEST_SHA256, "absent", 6), 0);
	CU_ASSERT_EQUAL(al_registry_mount_blob(r, "airlock/dst", "airlock/src",
	                                       &missing, &mounted),
	                0);
	CU_ASSERT_EQUAL(mounted, 0);
	free(p);
	al_registry_free(r);
}

/* An upload session step by step (al_registry_upload_*): its status
 * says how many bytes it holds, a chunk continues from there, the blob
 * verifies; a cancelled session's status is AL_ENOTFOUND. */
static void test_registry__upload_session_status_and_resume(void)
{
	al_registry *r;
	al_digest d;
	char *loc = NULL, *gone = NULL;
	uint8_t *p;
	uint64_t offset = 99;
	mem_reader m1, m2;
	al_reader rd1 = {mr_read, mr_rewind, &m1},
	          rd2 = {mr_read, mr_rewind, &m2};
	int exists = 0;

	if (!need_plain())
		return;
	r = client(plain_addr, NULL, 1, NULL, 0);
	if (r == NULL)
		return;
	p = random_bytes(3000);
	if (p == NULL) {
		al_registry_free(r);
		return;
	}
	CU_ASSERT_EQUAL(al_digest_bytes(&d, AL_DIGEST_SHA256, p, 3000), 0);
	CU_ASSERT_EQUAL(al_registry_upload_start(r, "airlock/sess", &loc), 0);
	CU_ASSERT_PTR_NOT_NULL(loc);
	if (loc == NULL)
		goto out;
	CU_ASSERT_EQUAL(
	    al_registry_upload_status(r, "airlock/sess", &loc, &offset), 0);
	CU_ASSERT_EQUAL(offset, 0);
	m1 = (mem_reader){p, 1000, 0};
	CU_ASSERT_EQUAL(
	    al_registry_upload_chunk(r, "airlock/sess", &loc, 0, 1000, &rd1),
	    0);
	/* what a rerun does: ask, then continue from the answer */
	CU_ASSERT_EQUAL(
	    al_registry_upload_status(r, "airlock/sess", &loc, &offset), 0);
	CU_ASSERT_EQUAL(offset, 1000);
	m2 = (mem_reader){p + 1000, 2000, 0};
	CU_ASSERT_EQUAL(al_registry_upload_chunk(r, "airlock/sess", &loc,
	                                         offset, 2000, &rd2),
	                0);
	CU_ASSERT_EQUAL(al_registry_upload_finish(r, "airlock/sess", loc, &d),
	                0);
	CU_ASSERT_EQUAL(
	    al_registry_blob_exists(r, "airlock/sess", &d, &exists, NULL), 0);
	CU_ASSERT_EQUAL(exists, 1);
	check_blob(r, "airlock/sess", &d, p, 3000);
	/* a session the registry no longer has */
	CU_ASSERT_EQUAL(al_registry_upload_start(r, "airlock/sess", &gone), 0);
	if (gone != NULL) {
		al_http_resp resp = AL_HTTP_RESP_INIT;
		al_http_req req;
		al_http *h = NULL;

		memset(&req, 0, sizeof(req));
		req.method = "DELETE";
		req.url = gone;
		CU_ASSERT_EQUAL(al_http_new(&h, NULL), 0);
		if (h != NULL)
			CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), 0);
		CU_ASSERT_EQUAL(resp.status, 204);
		al_http_resp_clear(&resp);
		al_http_free(h);
		CU_ASSERT_EQUAL(al_registry_upload_status(r, "airlock/sess",
		                                          &gone, &offset),
		                AL_ENOTFOUND);
	}
out:
	free(gone);
	free(loc);
	free(p);
	al_registry_free(r);
}

static void test_registry__tls_htpasswd_flow(void)
{
	al_registry *r;
	al_auth *a;
	char *ca;

	if (!need_tls())
		return;
	a = auth_for(tls_addr, "alice", "s3cret");
	ca = al_sprintf("%s/tls/ca.crt", tls_dir);
	r = a != NULL ? client(tls_addr, a, 0, ca, 64 * 1024) : NULL;
	if (r != NULL)
		core_flow(r, "secure/core");
	al_registry_free(r);
	al_auth_free(a);
	free(ca);
}

static void test_registry__tls_wrong_password_is_eauth(void)
{
	al_buf body = AL_BUF_INIT(AL_MANIFEST_MAX);
	al_registry *r = NULL;
	al_auth *a, *anon = NULL;
	al_digest d;
	char *ca, *mt = NULL;

	if (!need_tls())
		return;
	a = auth_for(tls_addr, "alice", "wrong");
	ca = al_sprintf("%s/tls/ca.crt", tls_dir);
	if (a != NULL)
		r = client(tls_addr, a, 0, ca, 0);
	if (r != NULL) {
		CU_ASSERT_EQUAL(al_registry_get_manifest(r, "secure/core", "v1",
		                                         &body, &mt, &d),
		                AL_EAUTH);
		CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), tls_addr));
	}
	al_registry_free(r);
	r = NULL;
	/* no credentials at all */
	CU_ASSERT_EQUAL(al_auth_new_anonymous(&anon), 0);
	if (anon != NULL)
		r = client(tls_addr, anon, 0, ca, 0);
	if (r != NULL)
		CU_ASSERT_EQUAL(al_registry_get_manifest(r, "secure/core", "v1",
		                                         &body, &mt, &d),
		                AL_EAUTH);
	CU_ASSERT_PTR_NULL(mt);
	al_registry_free(r);
	al_auth_free(anon);
	al_auth_free(a);
	free(ca);
	al_buf_free(&body);
}

/* 1 if needle occurs in s, ignoring case. */
static int contains_ci(const char *s, const char *needle)
{
	size_t n = strlen(needle);

	for (; *s != '\0'; s++) {
		if (strncasecmp(s, needle, n) == 0)
			return 1;
	}
	return 0;
}

static void test_registry__tls_without_ca_is_enet(void)
{
	al_registry *r;
	al_auth *a;
	const char *msg;
	int exists = 0;

	if (!need_tls())
		return;
	a = auth_for(tls_addr, "alice", "s3cret");
	r = a != NULL ? client(tls_addr, a, 0, NULL, 0) : NULL;
	if (r != NULL) {
		CU_ASSERT_EQUAL(al_registry_head_manifest(r, "secure/core",
		                                          "v1", &exists, NULL,
		                                          NULL),
		                AL_ENET);
		msg = al_error_message();
		CU_ASSERT(contains_ci(msg, "certificate") ||
		          contains_ci(msg, "TLS") || contains_ci(msg, "SSL"));
		CU_ASSERT_PTR_NOT_NULL(strstr(msg, tls_addr));
	}
	al_registry_free(r);
	/* --tls-verify=false: the same registry works without the CA */
	r = a != NULL ? client(tls_addr, a, 1, NULL, 0) : NULL;
	if (r != NULL) {
		CU_ASSERT_EQUAL(al_registry_head_manifest(r, "secure/core",
		                                          "v1", &exists, NULL,
		                                          NULL),
		                0);
		CU_ASSERT_EQUAL(exists, 1);
	}
	al_registry_free(r);
	al_auth_free(a);
}

/* GET /stats from the token server; -1 when unavailable. */
static long token_stat(const char *name)
{
	al_http_opts o = AL_HTTP_OPTS_INIT;
	al_http *h = NULL;
	al_http_req req;
	al_http_resp resp = AL_HTTP_RESP_INIT;
	al_buf body = AL_BUF_INIT(64 * 1024);
	char *url = al_sprintf("http://%s/stats", token_addr);
	json_t *root = NULL;
	long v = -1;

	memset(&req, 0, sizeof(req));
	req.url = url;
	req.body_out = &body;
	if (url != NULL && al_http_new(&h, &o) == 0 &&
	    al_http_do(h, &req, &resp) == 0 && resp.status == 200) {
		root = json_loadb((const char *)body.ptr, body.len, 0, NULL);
		if (json_is_integer(json_object_get(root, name)))
			v = (long)json_integer_value(
			    json_object_get(root, name));
	}
	json_decref(root);
	al_http_resp_clear(&resp);
	al_http_free(h);
	al_buf_free(&body);
	free(url);
	return v;
}

static void test_registry__bearer_token_flow_and_cache(void)
{
	al_buf body = AL_BUF_INIT(AL_MANIFEST_MAX);
	al_registry *r = NULL;
	al_auth *a;
	al_digest md, d, bd;
	uint8_t *blob = NULL;
	char *manifest = NULL, *mt = NULL, **tags = NULL;
	char tag[32];
	size_t ntags = 0, i;
	int k, exists = 0;

	if (!need_token())
		return;
	a = auth_for(token_addr, "bob", "hunter2");
	if (a != NULL)
		r = client(token_addr, a, 1, NULL, 64 * 1024);
	if (r == NULL)
		goto out;
	/* push scope: one token for the blob uploads and the manifests */
	blob = push_random_blob(r, "bearer/app", 200 * 1024, &bd, NULL);
	if (push_image(r, "bearer/app", "t0", &md, &manifest) != 0)
		goto out;
	for (k = 1; k < 5; k++) {
		snprintf(tag, sizeof(tag), "t%d", k);
		CU_ASSERT_EQUAL(
		    al_registry_put_manifest(
		        r, "bearer/app", tag, (const uint8_t *)manifest,
		        strlen(manifest),
		        "application/vnd.oci.image.manifest.v1+json"),
		    0);
	}
	/* pull scope: one more token for everything below */
	for (k = 0; k < 3; k++) {
		al_buf_reset(&body);
		free(mt);
		mt = NULL;
		CU_ASSERT_EQUAL(al_registry_get_manifest(r, "bearer/app", "t1",
		                                         &body, &mt, &d),
		                0);
		CU_ASSERT(al_digest_equal(&d, &md));
	}
	CU_ASSERT_EQUAL(
	    al_registry_head_manifest(r, "bearer/app", "t2", &exists, &d, NULL),
	    0);
	CU_ASSERT_EQUAL(exists, 1);
	/* blobs redirect to one-shot storage URLs on another origin; the
	 * first four transfers are cut half-way: the http module resumes
	 * three times (max_retries 2) through the registry, then gives up,
	 * and get_blob resumes with its own Range request, cut once more,
	 * then completes; Authorization never reaches the storage */
	if (blob != NULL)
		check_blob(r, "bearer/app", &bd, blob, 200 * 1024);
	/* five tags, two per page: Link pagination */
	CU_ASSERT_EQUAL(al_registry_list_tags(r, "bearer/app", &tags, &ntags),
	                0);
	CU_ASSERT_EQUAL(ntags, 5);
	for (i = 0; i < ntags; i++) {
		snprintf(tag, sizeof(tag), "t%zu", i);
		CU_ASSERT_STRING_EQUAL(tags[i], tag);
		free(tags[i]);
	}
	free(tags);
	CU_ASSERT_EQUAL(token_stat("token_calls"), 2);
	CU_ASSERT_EQUAL(token_stat("unauthorized"), 2);
	CU_ASSERT_EQUAL(token_stat("leaked_auth"), 0);
	CU_ASSERT_EQUAL(token_stat("storage_gets"), 5);
out:
	free(blob);
	free(manifest);
	free(mt);
	al_buf_free(&body);
	al_registry_free(r);
	al_auth_free(a);
}

static void test_registry__bearer_refused_is_eauth(void)
{
	al_buf body = AL_BUF_INIT(AL_MANIFEST_MAX);
	al_registry *r = NULL;
	al_auth *a;
	al_digest d;
	char *mt = NULL;

	if (!need_token())
		return;
	a = auth_for(token_addr, "bob", "not-it");
	if (a != NULL)
		r = client(token_addr, a, 1, NULL, 0);
	if (r != NULL) {
		CU_ASSERT_EQUAL(al_registry_get_manifest(r, "bearer/app", "t1",
		                                         &body, &mt, &d),
		                AL_EAUTH);
		CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "token"));
	}
	al_registry_free(r);
	al_auth_free(a);
	al_buf_free(&body);
}

static void log_to_stderr(al_log_level level, const char *msg, void *ud)
{
	(void)level;
	(void)ud;
	fprintf(stderr, "log: %s\n", msg);
}

/* tests/tools/hostileregistry.py (TLS and plain http on one port) with a
 * certificate made by openssl for 127.0.0.1. */
static char hostile_addr[64], hostile_cert[4096];
static int hostile_ok = -1;

static int need_hostile(void)
{
	char *dir = NULL, *py = NULL, *pf = NULL, *key = NULL, *cmd = NULL;
	FILE *f = NULL;
	pid_t pid;
	int i, port = 0, n;

	if (hostile_ok >= 0)
		goto done;
	hostile_ok = 0;
	dir = al_sprintf("%s/hostile", al_test_tmpdir());
	py = tool_path("hostileregistry.py");
	if (dir == NULL || py == NULL || mkdir(dir, 0700) != 0)
		goto out;
	pf = al_sprintf("%s/port", dir);
	key = al_sprintf("%s/key.pem", dir);
	n = snprintf(hostile_cert, sizeof(hostile_cert), "%s/cert.pem", dir);
	cmd = al_sprintf("openssl req -x509 -newkey ec -pkeyopt "
	                 "ec_paramgen_curve:prime256v1 -nodes -keyout '%s' "
	                 "-out '%s' -days 2 -subj /CN=127.0.0.1 -addext "
	                 "subjectAltName=IP:127.0.0.1 >/dev/null 2>&1",
	                 key != NULL ? key : "", hostile_cert);
	if (pf == NULL || key == NULL || cmd == NULL || n < 0 ||
	    (size_t)n >= sizeof(hostile_cert) || system(cmd) != 0)
		goto out;
	pid = fork();
	if (pid < 0)
		goto out;
	if (pid == 0) {
		execlp("python3", "python3", py, "--port-file", pf,
		       "--tls-cert", hostile_cert, "--tls-key", key,
		       (char *)NULL);
		_exit(127);
	}
	remember_pid(pid);
	for (i = 0; i < 100 && f == NULL; i++) {
		f = fopen(pf, "r");
		if (f == NULL)
			usleep(100 * 1000);
	}
	if (f == NULL || fscanf(f, "%d", &port) != 1 || port <= 0)
		goto out;
	snprintf(hostile_addr, sizeof(hostile_addr), "127.0.0.1:%d", port);
	hostile_ok = 1;
out:
	if (f != NULL)
		fclose(f);
	free(dir);
	free(py);
	free(pf);
	free(key);
	free(cmd);
done:
	CU_ASSERT(hostile_ok == 1);
	return hostile_ok == 1;
}

/* Requests the hostile registry saw on its plain-http side, and how many
 * of them carried an Authorization header; -1 when /_log fails. */
static int hostile_plain_requests(int *with_auth)
{
	al_http *h = NULL;
	al_buf body = AL_BUF_INIT(1024 * 1024);
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;
	char *u = al_sprintf("http://%s/_log", hostile_addr);
	json_t *root = NULL, *e;
	size_t i;
	int n = -1;

	*with_auth = 0;
	if (u == NULL || al_http_new(&h, NULL) != 0)
		goto out;
	req.url = u;
	req.body_out = &body;
	if (al_http_do(h, &req, &resp) != 0 || resp.status != 200)
		goto out;
	root = json_loadb((const char *)body.ptr, body.len, 0, NULL);
	if (!json_is_array(root))
		goto out;
	n = 0;
	json_array_foreach(root, i, e)
	{
		if (strcmp(json_string_value(json_object_get(e, "side")),
		           "plain") != 0)
			continue;
		n++;
		if (json_is_true(json_object_get(e, "auth")))
			(*with_auth)++;
	}
out:
	json_decref(root);
	al_http_resp_clear(&resp);
	al_buf_free(&body);
	al_http_free(h);
	free(u);
	return n;
}

static void hostile_reset(void)
{
	al_http *h = NULL;
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;
	char *u = al_sprintf("http://%s/_reset", hostile_addr);

	if (u != NULL && al_http_new(&h, NULL) == 0) {
		req.url = u;
		CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), 0);
	}
	al_http_resp_clear(&resp);
	al_http_free(h);
	free(u);
}

/* A verified-TLS registry whose upload Location says http:// on its own
 * host and port: refused, naming the URL; the credentials never reach the
 * plain side. With --tls-verify=false (insecure) the user asked for plain
 * http: allowed. */
static void test_registry__upload_location_downgrade_refused(void)
{
	static const uint8_t blob[] = "hostile";
	al_registry *r = NULL;
	al_auth *a = NULL;
	al_digest d;
	mem_reader m = {blob, sizeof(blob) - 1, 0};
	al_reader rd = {mr_read, mr_rewind, &m};
	char *want = NULL;
	int plain, with_auth;

	if (!need_hostile())
		return;
	hostile_reset();
	a = auth_for(hostile_addr, "airlock", "s3cret");
	CU_ASSERT_EQUAL(al_digest_bytes(&d, AL_DIGEST_SHA256, blob, m.n), 0);
	if (a != NULL)
		r = client(hostile_addr, a, 0, hostile_cert, 0);
	want = al_sprintf("http://%s/v2/downgrade/x/blobs/uploads/u1",
	                  hostile_addr);
	if (r != NULL && want != NULL) {
		CU_ASSERT_EQUAL(al_registry_put_blob(r, "downgrade/x", &d, m.n,
		                                     &rd, NULL, NULL),
		                AL_EPROTO);
		CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), want));
		CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "downgrade"));
	}
	plain = hostile_plain_requests(&with_auth);
	CU_ASSERT_EQUAL(plain, 0);
	CU_ASSERT_EQUAL(with_auth, 0);
	al_registry_free(r);
	r = NULL;

	/* insecure: plain http to this registry was asked for */
	m.pos = 0;
	if (a != NULL)
		r = client(hostile_addr, a, 1, NULL, 0);
	if (r != NULL)
		CU_ASSERT_EQUAL(al_registry_put_blob(r, "downgrade/x", &d, m.n,
		                                     &rd, NULL, NULL),
		                0);
	plain = hostile_plain_requests(&with_auth);
	CU_ASSERT(plain >= 1);
	CU_ASSERT_EQUAL(with_auth, plain);
	al_registry_free(r);
	al_auth_free(a);
	free(want);
}

/* A redirect from the TLS side to http:// on the same host and port, with
 * credentials: refused by the http module, nothing sent in clear text. */
static void test_registry__redirect_downgrade_refused(void)
{
	al_buf body = AL_BUF_INIT(AL_MANIFEST_MAX);
	al_registry *r = NULL;
	al_auth *a = NULL;
	al_digest d;
	char *mt = NULL;
	int plain, with_auth;

	if (!need_hostile())
		return;
	hostile_reset();
	a = auth_for(hostile_addr, "airlock", "s3cret");
	if (a != NULL)
		r = client(hostile_addr, a, 0, hostile_cert, 0);
	if (r != NULL) {
		CU_ASSERT_EQUAL(al_registry_get_manifest(r, "redirect/x", "v1",
		                                         &body, &mt, &d),
		                AL_EPROTO);
		CU_ASSERT_PTR_NOT_NULL(
		    strstr(al_error_message(), "redirects to plain http"));
	}
	plain = hostile_plain_requests(&with_auth);
	CU_ASSERT_EQUAL(plain, 0);
	CU_ASSERT_EQUAL(with_auth, 0);
	al_registry_free(r);
	al_auth_free(a);
	al_buf_free(&body);
}

/* An https registry naming a plain-http Bearer realm: refused before any
 * token request (the credentials would go with it). */
static void test_registry__http_realm_refused_for_https_registry(void)
{
	al_buf body = AL_BUF_INIT(AL_MANIFEST_MAX);
	al_registry *r = NULL;
	al_auth *a = NULL;
	al_digest d;
	char *mt = NULL;
	int plain, with_auth;

	if (!need_hostile())
		return;
	hostile_reset();
	a = auth_for(hostile_addr, "airlock", "s3cret");
	if (a != NULL)
		r = client(hostile_addr, a, 0, hostile_cert, 0);
	if (r != NULL) {
		CU_ASSERT_EQUAL(al_registry_get_manifest(r, "realm/x", "v1",
		                                         &body, &mt, &d),
		                AL_EAUTH);
		CU_ASSERT_PTR_NOT_NULL(
		    strstr(al_error_message(), "plain-http token realm"));
	}
	plain = hostile_plain_requests(&with_auth);
	CU_ASSERT_EQUAL(plain, 0);
	al_registry_free(r);
	al_auth_free(a);
	al_buf_free(&body);
}

/* Thousands of headers: the message is about headers, not the manifest
 * size; a registry's error text reaches the message escaped. */
static void test_registry__hostile_answers_give_precise_messages(void)
{
	al_buf body = AL_BUF_INIT(AL_MANIFEST_MAX);
	al_registry *r = NULL;
	al_digest d;
	char *mt = NULL;
	const char *msg;

	if (!need_hostile())
		return;
	r = client(hostile_addr, NULL, 0, hostile_cert, 0);
	if (r == NULL)
		return;
	CU_ASSERT_EQUAL(
	    al_registry_get_manifest(r, "manyheaders/x", "v1", &body, &mt, &d),
	    AL_ELIMIT);
	msg = al_error_message();
	CU_ASSERT_PTR_NOT_NULL(strstr(msg, "response headers"));
	CU_ASSERT_PTR_NULL(strstr(msg, "larger than"));
	CU_ASSERT_EQUAL(
	    al_registry_get_manifest(r, "forge/x", "error", &body, &mt, &d),
	    AL_ENOTFOUND);
	msg = al_error_message();
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(msg, "gone\\x0a airlock: error: forged\\x1b[31m red "
	                "\\x1b]0;owned\\x07"));
	CU_ASSERT_PTR_NULL(strchr(msg, '\n'));
	CU_ASSERT_PTR_NULL(strchr(msg, '\x1b'));
	CU_ASSERT_PTR_NULL(mt);
	al_registry_free(r);
	al_buf_free(&body);
}

static void test_registry__parse_size_refuses_signs_and_junk(void)
{
	static const char *const bad[] = {"-5",
	                                  " 5",
	                                  "+5",
	                                  "5x",
	                                  "",
	                                  "0x10",
	                                  "18446744073709551616",
	                                  "9223372036854775808"};
	uint64_t v = 42;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CU_ASSERT_EQUAL(al_registry__parse_size(bad[i], &v), -1);
		CU_ASSERT_EQUAL(v, 42);
	}
	CU_ASSERT_EQUAL(al_registry__parse_size("0", &v), 0);
	CU_ASSERT_EQUAL(v, 0);
	CU_ASSERT_EQUAL(al_registry__parse_size("9223372036854775807", &v), 0);
	CU_ASSERT_EQUAL(v, 9223372036854775807ULL);
	CU_ASSERT_EQUAL(al_registry__content_range_start("bytes -5-9/10"), -1);
	CU_ASSERT_EQUAL(al_registry__content_range_start("bytes 5-9/10"), 5);
	CU_ASSERT_EQUAL(
	    al_registry__content_range_start("bytes 99999999999999999999-"),
	    -1);
}

/* registries.conf is the client's own gate (docs/security.md): a blocked
 * host gets no client, a blocked namespace prefix no request. Port 1 has
 * no listener: a request that went out would be AL_ENET. */
static void test_registry__regconf_gate_refuses_before_sending(void)
{
	static const char host_conf[] = "[[registry]]\n"
	                                "location = \"127.0.0.1:1\"\n"
	                                "blocked = true\n";
	static const char ns_conf[] = "[[registry]]\n"
	                              "location = \"127.0.0.1:1/team-b\"\n"
	                              "blocked = true\n";
	al_regconf *hc = NULL, *nc = NULL;
	al_registry_opts ro = AL_REGISTRY_OPTS_INIT;
	al_registry *r = NULL;
	al_buf body = AL_BUF_INIT(AL_MANIFEST_MAX);
	char *mt = NULL;
	al_digest d;

	CU_ASSERT_EQUAL(
	    al_regconf_parse(&hc, "host.conf", host_conf, strlen(host_conf)),
	    0);
	CU_ASSERT_EQUAL(
	    al_regconf_parse(&nc, "ns.conf", ns_conf, strlen(ns_conf)), 0);
	ro.insecure = 1;
	ro.regconf = hc;
	CU_ASSERT_EQUAL(al_registry_new(&r, "127.0.0.1:1", &ro), AL_EAUTH);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "host.conf"));
	CU_ASSERT_PTR_NULL(r);
	ro.regconf = nc;
	CU_ASSERT_EQUAL(al_registry_new(&r, "127.0.0.1:1", &ro), 0);
	if (r != NULL) {
		CU_ASSERT_EQUAL(al_registry_get_manifest(r, "team-b/app", "1",
		                                         &body, &mt, &d),
		                AL_EAUTH);
		CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "ns.conf"));
		CU_ASSERT_EQUAL(al_registry_get_manifest(r, "team-a/app", "1",
		                                         &body, &mt, &d),
		                AL_ENET);
	}
	free(mt);
	al_buf_free(&body);
	al_registry_free(r);
	al_regconf_free(hc);
	al_regconf_free(nc);
}

int main(void)
{
	CU_TestInfo tests[] = {
	    {"test_registry__core_flow_plain_registry",
	     test_registry__core_flow_plain_registry},
	    {"test_registry__skopeo_reads_what_we_push",
	     test_registry__skopeo_reads_what_we_push},
	    {"test_registry__plain_http_needs_insecure",
	     test_registry__plain_http_needs_insecure},
	    {"test_registry__unknown_manifest_is_enotfound",
	     test_registry__unknown_manifest_is_enotfound},
	    {"test_registry__tampered_blob_is_everify",
	     test_registry__tampered_blob_is_everify},
	    {"test_registry__tampered_manifest_is_everify",
	     test_registry__tampered_manifest_is_everify},
	    {"test_registry__mount_between_repos",
	     test_registry__mount_between_repos},
	    {"test_registry__upload_session_status_and_resume",
	     test_registry__upload_session_status_and_resume},
	    {"test_registry__tls_htpasswd_flow",
	     test_registry__tls_htpasswd_flow},
	    {"test_registry__tls_wrong_password_is_eauth",
	     test_registry__tls_wrong_password_is_eauth},
	    {"test_registry__tls_without_ca_is_enet",
	     test_registry__tls_without_ca_is_enet},
	    {"test_registry__bearer_token_flow_and_cache",
	     test_registry__bearer_token_flow_and_cache},
	    {"test_registry__bearer_refused_is_eauth",
	     test_registry__bearer_refused_is_eauth},
	    {"test_registry__upload_location_downgrade_refused",
	     test_registry__upload_location_downgrade_refused},
	    {"test_registry__redirect_downgrade_refused",
	     test_registry__redirect_downgrade_refused},
	    {"test_registry__http_realm_refused_for_https_registry",
	     test_registry__http_realm_refused_for_https_registry},
	    {"test_registry__hostile_answers_give_precise_messages",
	     test_registry__hostile_answers_give_precise_messages},
	    {"test_registry__regconf_gate_refuses_before_sending",
	     test_registry__regconf_gate_refuses_before_sending},
	    {"test_registry__parse_size_refuses_signs_and_junk",
	     test_registry__parse_size_refuses_signs_and_junk},
	    CU_TEST_INFO_NULL,
	};
	int rc;

	al_http_global_init();
	if (getenv("AL_TEST_LOG") != NULL) {
		al_log_set_handler(log_to_stderr, NULL);
		al_log_set_level(AL_LOG_DEBUG);
	}
	rc = al_test_run("registry", tests);
	stop_servers();
	al_http_global_cleanup();
	return rc;
}
