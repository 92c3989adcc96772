/* test_auth.c: auth files, key normalisation, challenges, token cache. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "airlock/auth.h"
#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/clock.h"
#include "airlock/http.h"
#include "al_test.h"
#include "auth_int.h"

static char *write_file(const char *name, const char *content)
{
	char *path = al_sprintf("%s/%s", al_test_tmpdir(), name);
	char *dir, *slash;
	FILE *f;

	CU_ASSERT_PTR_NOT_NULL(path);
	if (path == NULL)
		return NULL;
	dir = al_strdup(path);
	/* create parent directories under the temp dir */
	for (slash = dir + strlen(al_test_tmpdir()) + 1;
	     (slash = strchr(slash, '/')) != NULL; slash++) {
		*slash = '\0';
		mkdir(dir, 0700);
		*slash = '/';
	}
	free(dir);
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL(f);
	if (f != NULL) {
		fputs(content, f);
		fclose(f);
	}
	return path;
}

/* Lookup and compare; returns the status. */
static int expect_cred(al_auth *a, const char *reg, const char *repo,
                       const char *user, const char *pass)
{
	char *u = NULL, *p = NULL;
	int rc = al_auth_lookup(a, reg, repo, &u, &p);

	if (rc == 0) {
		CU_ASSERT_STRING_EQUAL(u, user);
		CU_ASSERT_STRING_EQUAL(p, pass);
		if (strcmp(u, user) != 0)
			fprintf(stderr,
			        "lookup %s/%s: got user '%s', want '%s'\n", reg,
			        repo ? repo : "", u, user);
	}
	free(u);
	free(p);
	return rc;
}

static void clear_env(void)
{
	unsetenv("REGISTRY_AUTH_FILE");
	unsetenv("XDG_RUNTIME_DIR");
	unsetenv("XDG_CONFIG_HOME");
	unsetenv("DOCKER_CONFIG");
}

static void test_auth__parses_base64_and_username_forms(void)
{
	/* "dTE6cDE6eA==" is base64("u1:p1:x"): the password keeps its colon */
	char *path = write_file("forms.json",
	                        "{\"auths\": {"
	                        "\"reg.example\": {\"auth\": \"dTE6cDE6eA==\"},"
	                        "\"other.example:5000\": {\"username\": "
	                        "\"u2\", \"password\": \"p2\"},"
	                        "\"helper.example\": {}"
	                        "}, \"credHelpers\": {\"x\": \"y\"}}");
	al_auth *a = NULL;

	CU_ASSERT_EQUAL(al_auth_new(&a, path), 0);
	CU_ASSERT_EQUAL(expect_cred(a, "reg.example", "ns/repo", "u1", "p1:x"),
	                0);
	CU_ASSERT_EQUAL(expect_cred(a, "other.example:5000", NULL, "u2", "p2"),
	                0);
	CU_ASSERT_EQUAL(expect_cred(a, "helper.example", "a/b", "", ""),
	                AL_ENOTFOUND);
	CU_ASSERT_EQUAL(expect_cred(a, "other.example", "a/b", "", ""),
	                AL_ENOTFOUND);
	al_auth_free(a);
	free(path);
}

static void test_auth__normalises_url_keys_and_docker_io(void)
{
	/* dXNlcjpwYXNz = user:pass, ZDpo = d:h, aDpw = h:p */
	char *path = write_file(
	    "urls.json",
	    "{\"auths\": {"
	    "\"https://index.docker.io/v1/\": {\"auth\": \"ZDpo\"},"
	    "\"http://reg.example:5000/v2/\": {\"auth\": \"dXNlcjpwYXNz\"},"
	    "\"https://quay.io\": {\"auth\": \"aDpw\"}"
	    "}}");
	al_auth *a = NULL;
	char *k;

	CU_ASSERT_EQUAL(al_auth_new(&a, path), 0);
	CU_ASSERT_EQUAL(
	    expect_cred(a, "docker.io", "library/busybox", "d", "h"), 0);
	CU_ASSERT_EQUAL(
	    expect_cred(a, "index.docker.io", "library/busybox", "d", "h"), 0);
	CU_ASSERT_EQUAL(
	    expect_cred(a, "reg.example:5000", "x/y", "user", "pass"), 0);
	CU_ASSERT_EQUAL(expect_cred(a, "quay.io", "x/y", "h", "p"), 0);
	al_auth_free(a);
	free(path);

	k = al_auth_normalize_key("https://registry-1.docker.io/v2/");
	CU_ASSERT_STRING_EQUAL(k, "docker.io");
	free(k);
	k = al_auth_normalize_key("index.docker.io/library/busybox");
	CU_ASSERT_STRING_EQUAL(k, "docker.io/library/busybox");
	free(k);
	k = al_auth_normalize_key("http://127.0.0.1:5000/");
	CU_ASSERT_STRING_EQUAL(k, "127.0.0.1:5000");
	free(k);
	k = al_auth_normalize_key("myindex.docker.io.example");
	CU_ASSERT_STRING_EQUAL(k, "myindex.docker.io.example");
	free(k);
}

static void test_auth__most_specific_repo_key_wins(void)
{
	/* aDpo = h:h, bjpu = n:n, cjpy = r:r */
	char *path = write_file("specific.json",
	                        "{\"auths\": {"
	                        "\"quay.io/ns/repo\": {\"auth\": \"cjpy\"},"
	                        "\"quay.io\": {\"auth\": \"aDpo\"},"
	                        "\"quay.io/ns\": {\"auth\": \"bjpu\"}"
	                        "}}");
	al_auth *a = NULL;

	CU_ASSERT_EQUAL(al_auth_new(&a, path), 0);
	CU_ASSERT_EQUAL(expect_cred(a, "quay.io", "ns/repo", "r", "r"), 0);
	CU_ASSERT_EQUAL(expect_cred(a, "quay.io", "ns/repo/sub", "r", "r"), 0);
	CU_ASSERT_EQUAL(expect_cred(a, "quay.io", "ns/other", "n", "n"), 0);
	CU_ASSERT_EQUAL(expect_cred(a, "quay.io", "ns/repository", "n", "n"),
	                0);
	CU_ASSERT_EQUAL(expect_cred(a, "quay.io", "nsx/repo", "h", "h"), 0);
	CU_ASSERT_EQUAL(expect_cred(a, "quay.io", NULL, "h", "h"), 0);
	CU_ASSERT_EQUAL(expect_cred(a, "quay.io.evil", "ns/repo", "", ""),
	                AL_ENOTFOUND);
	al_auth_free(a);
	free(path);
}

static void test_auth__missing_default_file_is_ok(void)
{
	char *home = al_sprintf("%s/emptyhome", al_test_tmpdir());
	al_auth *a = NULL;

	mkdir(home, 0700);
	clear_env();
	setenv("HOME", home, 1);
	CU_ASSERT_EQUAL(al_auth_new(&a, NULL), 0);
	CU_ASSERT_EQUAL(expect_cred(a, "quay.io", "a/b", "", ""), AL_ENOTFOUND);
	al_auth_free(a);
	free(home);
}

static void test_auth__explicit_missing_file_is_an_error(void)
{
	char *path = al_sprintf("%s/does-not-exist.json", al_test_tmpdir());
	al_auth *a = NULL;

	CU_ASSERT_EQUAL(al_auth_new(&a, path), AL_ENOTFOUND);
	CU_ASSERT_PTR_NULL(a);
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(al_error_message(), "does-not-exist.json"));
	free(path);
}

static void test_auth__rejects_duplicate_keys(void)
{
	char *path = write_file(
	    "dup.json", "{\"auths\": {\"quay.io\": {\"auth\": \"aDpo\"},\n"
	                "\"quay.io\": {\"auth\": \"bjpu\"}}}");
	al_auth *a = NULL;

	CU_ASSERT_EQUAL(al_auth_new(&a, path), AL_EPARSE);
	CU_ASSERT_PTR_NULL(a);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "dup.json"));
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "line 2"));
	free(path);
}

static void test_auth__malformed_base64_names_the_file(void)
{
	char *path = write_file(
	    "bad64.json",
	    "{\"auths\": {\"quay.io\": {\"auth\": \"!!not base64!!\"}}}");
	char *path2 = write_file(
	    "nocolon.json",
	    "{\"auths\": {\"quay.io\": {\"auth\": \"bm9jb2xvbg==\"}}}");
	char *path3 = write_file("notjson.json", "{\"auths\": ");
	al_auth *a = NULL;

	CU_ASSERT_EQUAL(al_auth_new(&a, path), AL_EPARSE);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "bad64.json"));
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "quay.io"));
	CU_ASSERT_EQUAL(al_auth_new(&a, path2), AL_EPARSE);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "nocolon.json"));
	CU_ASSERT_EQUAL(al_auth_new(&a, path3), AL_EPARSE);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "notjson.json"));
	CU_ASSERT_PTR_NULL(a);
	free(path);
	free(path2);
	free(path3);
}

static void test_auth__default_file_precedence(void)
{
	/* aDpo = h:h (docker config), eDp4 = x:x (XDG), cjpy = r:r
	 * (REGISTRY_AUTH_FILE) */
	char *home = al_sprintf("%s/home", al_test_tmpdir());
	char *docker =
	    write_file("home/.docker/config.json",
	               "{\"auths\": {\"quay.io\": {\"auth\": \"aDpo\"}}}");
	char *xdg = al_sprintf("%s/xdg", al_test_tmpdir());
	char *xdgfile =
	    write_file("xdg/containers/auth.json",
	               "{\"auths\": {\"quay.io\": {\"auth\": \"eDp4\"}}}");
	char *raf = write_file(
	    "raf.json", "{\"auths\": {\"quay.io\": {\"auth\": \"cjpy\"}}}");
	char *missing = al_sprintf("%s/missing.json", al_test_tmpdir());
	al_auth *a = NULL;

	clear_env();
	setenv("HOME", home, 1);
	CU_ASSERT_EQUAL(al_auth_new(&a, NULL), 0);
	CU_ASSERT_EQUAL(expect_cred(a, "quay.io", "a/b", "h", "h"), 0);
	al_auth_free(a);
	a = NULL;

	setenv("XDG_RUNTIME_DIR", xdg, 1);
	CU_ASSERT_EQUAL(al_auth_new(&a, NULL), 0);
	CU_ASSERT_EQUAL(expect_cred(a, "quay.io", "a/b", "x", "x"), 0);
	al_auth_free(a);
	a = NULL;

	setenv("REGISTRY_AUTH_FILE", raf, 1);
	CU_ASSERT_EQUAL(al_auth_new(&a, NULL), 0);
	CU_ASSERT_EQUAL(expect_cred(a, "quay.io", "a/b", "r", "r"), 0);
	al_auth_free(a);
	a = NULL;

	/* skopeo 1.9.3 (--debug, measured): $REGISTRY_AUTH_FILE takes the
	 * place of $XDG_RUNTIME_DIR's file and the other files follow it;
	 * one that does not exist gives nothing and the search goes on to
	 * ~/.docker/config.json */
	setenv("REGISTRY_AUTH_FILE", missing, 1);
	CU_ASSERT_EQUAL(al_auth_new(&a, NULL), 0);
	CU_ASSERT_EQUAL(expect_cred(a, "quay.io", "a/b", "h", "h"), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_auth_sources(a), "missing.json"));
	CU_ASSERT_PTR_NOT_NULL(strstr(al_auth_sources(a), "config.json"));
	CU_ASSERT_PTR_NULL(strstr(al_auth_sources(a), "xdg/containers"));
	al_auth_free(a);
	a = NULL;

	/* --authfile overrides all of them */
	CU_ASSERT_EQUAL(al_auth_new(&a, docker), 0);
	CU_ASSERT_EQUAL(expect_cred(a, "quay.io", "a/b", "h", "h"), 0);
	al_auth_free(a);
	clear_env();
	free(home);
	free(docker);
	free(xdg);
	free(xdgfile);
	free(raf);
	free(missing);
}

static void test_auth__parses_bearer_challenge(void)
{
	al_auth_params p;

	memset(&p, 0, sizeof(p));
	CU_ASSERT_EQUAL(
	    al_auth_parse_challenge(
	        &p, "Bearer "
	            "realm=\"https://auth.example/"
	            "token\",service=\"registry.example\","
	            "scope=\"repository:a/b:pull,push repository:c:pull\""),
	    0);
	CU_ASSERT_STRING_EQUAL(p.scheme, "Bearer");
	CU_ASSERT_STRING_EQUAL(p.realm, "https://auth.example/token");
	CU_ASSERT_STRING_EQUAL(p.service, "registry.example");
	CU_ASSERT_STRING_EQUAL(p.scope,
	                       "repository:a/b:pull,push repository:c:pull");
	al_auth_params_clear(&p);

	/* escapes, odd spacing, case-insensitive names, unknown params, token
	 * values */
	CU_ASSERT_EQUAL(al_auth_parse_challenge(
	                    &p, "  bearer  Realm = \"https://a/t?x=\\\"1\\\\\" "
	                        ", error=\"invalid_token\","
	                        " SERVICE=svc.example ,"),
	                0);
	CU_ASSERT_STRING_EQUAL(p.scheme, "bearer");
	CU_ASSERT_STRING_EQUAL(p.realm, "https://a/t?x=\"1\\");
	CU_ASSERT_STRING_EQUAL(p.service, "svc.example");
	CU_ASSERT_PTR_NULL(p.scope);
	al_auth_params_clear(&p);

	CU_ASSERT_EQUAL(
	    al_auth_parse_challenge(&p, "Basic realm=\"Registry Realm\""), 0);
	CU_ASSERT_STRING_EQUAL(p.scheme, "Basic");
	CU_ASSERT_STRING_EQUAL(p.realm, "Registry Realm");
	al_auth_params_clear(&p);

	CU_ASSERT_EQUAL(al_auth_parse_challenge(&p, "Basic"), 0);
	CU_ASSERT_PTR_NULL(p.realm);
	al_auth_params_clear(&p);
}

static void test_auth__rejects_bad_challenges(void)
{
	al_auth_params p;

	memset(&p, 0, sizeof(p));
	CU_ASSERT_EQUAL(
	    al_auth_parse_challenge(&p, "Bearer realm=\"https://a/t"),
	    AL_EPARSE);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "unterminated"));
	CU_ASSERT_EQUAL(al_auth_parse_challenge(&p, "Bearer realm"), AL_EPARSE);
	CU_ASSERT_EQUAL(al_auth_parse_challenge(&p, ""), AL_EPARSE);
	CU_ASSERT_EQUAL(
	    al_auth_parse_challenge(&p, "Bearer realm=\"a\" service=\"b\""),
	    AL_EPARSE);
	CU_ASSERT_EQUAL(al_auth_parse_challenge(&p, NULL), AL_EPARSE);
	CU_ASSERT_PTR_NULL(p.scheme);
}

static void test_auth__basic_challenge_builds_and_caches_header(void)
{
	char *path = write_file(
	    "basic.json",
	    "{\"auths\": {\"127.0.0.1:5000\": {\"username\": \"alice\", "
	    "\"password\": \"s3cret\"}}}");
	al_auth *a = NULL, *anon = NULL;
	char *h = NULL;

	CU_ASSERT_EQUAL(al_auth_new(&a, path), 0);
	CU_ASSERT_EQUAL(
	    al_auth_cached(a, "127.0.0.1:5000", "x", "repository:x:pull", &h),
	    AL_ENOTFOUND);
	CU_ASSERT_EQUAL(al_auth_challenge(a, NULL, "127.0.0.1:5000", "x",
	                                  "Basic realm=\"r\"",
	                                  "repository:x:pull", &h),
	                0);
	/* base64("alice:s3cret") */
	CU_ASSERT_STRING_EQUAL(h, "Authorization: Basic YWxpY2U6czNjcmV0");
	free(h);
	h = NULL;
	/* Basic credentials hold for every scope of the registry */
	CU_ASSERT_EQUAL(al_auth_cached(a, "127.0.0.1:5000", "y",
	                               "repository:y:pull,push", &h),
	                0);
	CU_ASSERT_STRING_EQUAL(h, "Authorization: Basic YWxpY2U6czNjcmV0");
	free(h);
	h = NULL;
	CU_ASSERT_EQUAL(
	    al_auth_cached(a, "127.0.0.1:5001", "y", "repository:y:pull", &h),
	    AL_ENOTFOUND);
	al_auth_invalidate(a, "127.0.0.1:5000", "x", "repository:x:pull");
	CU_ASSERT_EQUAL(
	    al_auth_cached(a, "127.0.0.1:5000", "x", "repository:x:pull", &h),
	    AL_ENOTFOUND);
	CU_ASSERT_EQUAL(al_auth_challenge(a, NULL, "127.0.0.1:5000", "x",
	                                  "Negotiate", NULL, &h),
	                AL_EUNSUPPORTED);
	al_auth_free(a);

	CU_ASSERT_EQUAL(al_auth_new_anonymous(&anon), 0);
	CU_ASSERT_EQUAL(al_auth_challenge(anon, NULL, "127.0.0.1:5000", "x",
	                                  "Basic realm=\"r\"", NULL, &h),
	                AL_EAUTH);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "127.0.0.1:5000"));
	CU_ASSERT_PTR_NULL(h);
	al_auth_free(anon);
	al_auth_free(NULL);
	free(path);
}

struct worker {
	al_auth *a;
	int id;
	int failures;
};

static void *auth_worker(void *ud)
{
	struct worker *w = ud;
	char scope[64], *h = NULL;
	int i, rc;

	for (i = 0; i < 300; i++) {
		snprintf(scope, sizeof(scope), "repository:r%d:pull",
		         (w->id + i) % 7);
		rc = al_auth_challenge(w->a, NULL, "127.0.0.1:5000", "r",
		                       "Basic realm=\"x\"", scope, &h);
		if (rc != 0 || h == NULL ||
		    strcmp(h, "Authorization: Basic YWxpY2U6czNjcmV0") != 0)
			w->failures++;
		free(h);
		h = NULL;
		rc = al_auth_cached(w->a, "127.0.0.1:5000", "r", scope, &h);
		if (rc != 0 && rc != AL_ENOTFOUND)
			w->failures++;
		free(h);
		h = NULL;
		if (i % 5 == 0)
			al_auth_invalidate(w->a, "127.0.0.1:5000", "r", scope);
	}
	return NULL;
}

static void test_auth__shared_between_threads(void)
{
	char *path = write_file(
	    "threads.json",
	    "{\"auths\": {\"127.0.0.1:5000\": {\"username\": \"alice\", "
	    "\"password\": \"s3cret\"}}}");
	struct worker w[4];
	pthread_t t[4];
	al_auth *a = NULL;
	int i, started[4] = {0, 0, 0, 0};

	CU_ASSERT_EQUAL(al_auth_new(&a, path), 0);
	for (i = 0; a != NULL && i < 4; i++) {
		w[i].a = a;
		w[i].id = i;
		w[i].failures = 0;
		started[i] =
		    pthread_create(&t[i], NULL, auth_worker, &w[i]) == 0;
		CU_ASSERT(started[i]);
	}
	for (i = 0; i < 4; i++) {
		if (started[i]) {
			pthread_join(t[i], NULL);
			CU_ASSERT_EQUAL(w[i].failures, 0);
		}
	}
	al_auth_free(a);
	free(path);
}

static pid_t token_pid;
static char token_addr[64];

static void stop_tokenserver(void)
{
	if (token_pid > 0) {
		kill(token_pid, SIGTERM);
		waitpid(token_pid, NULL, 0);
		token_pid = 0;
	}
}

/* tokenserver.py requiring bob:pw, answering {"token"} valid 31 s (cached 1 s).
 */
static int need_tokenserver(void)
{
	static int ok = -1;
	char *py, *dir, *pf;
	FILE *f = NULL;
	int i, port = 0;

	if (ok >= 0)
		return ok;
	ok = 0;
	py = al_sprintf("%s/tests/tools/tokenserver.py", al_test_source_dir());
	dir = al_sprintf("%s/tokenserver", al_test_tmpdir());
	pf = al_sprintf("%s/port", dir != NULL ? dir : "");
	if (py != NULL && dir != NULL && pf != NULL && mkdir(dir, 0700) == 0) {
		const char *argv[] = {"python3",
		                      py,
		                      "--port-file",
		                      pf,
		                      "--user",
		                      "bob:pw",
		                      "--token-field",
		                      "token",
		                      "--expires-in",
		                      "31",
		                      NULL};

		token_pid = fork();
		if (token_pid == 0) {
			execvp(argv[0], (char *const *)argv);
			_exit(127);
		}
		if (token_pid > 0) {
			atexit(stop_tokenserver);
			for (i = 0; i < 100 && f == NULL; i++) {
				f = fopen(pf, "r");
				if (f == NULL)
					usleep(100 * 1000);
			}
		}
	}
	if (f != NULL && fscanf(f, "%d", &port) == 1 && port > 0) {
		snprintf(token_addr, sizeof(token_addr), "127.0.0.1:%d", port);
		ok = 1;
	}
	if (f != NULL)
		fclose(f);
	free(py);
	free(dir);
	free(pf);
	CU_ASSERT_EQUAL(ok, 1);
	return ok;
}

static void test_auth__bearer_token_fetch_cache_and_expiry(void)
{
	al_http_opts o = AL_HTTP_OPTS_INIT;
	al_http *h = NULL;
	al_auth *a = NULL, *anon = NULL;
	char *path = NULL, *chal = NULL, *hdr = NULL, *cached = NULL,
	     *json = NULL, *reg_url = NULL;
	const char *insecure[2] = {NULL, NULL};
	const char *scope = "repository:a/b:pull";

	if (!need_tokenserver())
		return;
	o.max_retries = AL_HTTP_NO_RETRY;
	/* the token server speaks plain http: the user marked it insecure
	 * (an insecure registry, --tls-verify=false) */
	insecure[0] = token_addr;
	o.insecure_hosts = insecure;
	CU_ASSERT_EQUAL(al_http_new(&h, &o), 0);
	reg_url = al_sprintf("http://%s/v2/a/b/manifests/latest", token_addr);
	/* base64("bob:pw") = Ym9iOnB3 */
	json =
	    al_sprintf("{\"auths\": {\"http://%s\": {\"auth\": \"Ym9iOnB3\"}}}",
	               token_addr);
	path = json != NULL ? write_file("bearer.json", json) : NULL;
	chal =
	    al_sprintf("Bearer "
	               "realm=\"http://%s/"
	               "token\",service=\"airlock-tokenserver\",scope=\"%s\"",
	               token_addr, scope);
	if (h == NULL || path == NULL || chal == NULL || reg_url == NULL ||
	    al_auth_new(&a, path) != 0)
		goto out;
	CU_ASSERT_EQUAL(al_auth_challenge_url(a, h, token_addr, "a/b", chal,
	                                      scope, reg_url, &hdr),
	                0);
	CU_ASSERT(hdr != NULL &&
	          al_str_startswith(hdr, "Authorization: Bearer tok-"));
	CU_ASSERT_EQUAL(al_auth_cached(a, token_addr, "a/b", scope, &cached),
	                0);
	CU_ASSERT(hdr != NULL && cached != NULL && strcmp(hdr, cached) == 0);
	free(cached);
	cached = NULL;
	CU_ASSERT_EQUAL(al_auth_cached(a, token_addr, "a/b",
	                               "repository:a/b:pull,push", &cached),
	                AL_ENOTFOUND);
	/* expires_in 31 s minus the 30 s margin: gone after a second */
	usleep(1100 * 1000);
	CU_ASSERT_EQUAL(al_auth_cached(a, token_addr, "a/b", scope, &cached),
	                AL_ENOTFOUND);
	free(hdr);
	hdr = NULL;
	CU_ASSERT_EQUAL(al_auth_challenge_url(a, h, token_addr, "a/b", chal,
	                                      scope, reg_url, &hdr),
	                0);
	al_auth_invalidate(a, token_addr, "a/b", scope);
	CU_ASSERT_EQUAL(al_auth_cached(a, token_addr, "a/b", scope, &cached),
	                AL_ENOTFOUND);
	free(hdr);
	hdr = NULL;

	/* the token server wants credentials: an anonymous request is refused
	 */
	CU_ASSERT_EQUAL(al_auth_new_anonymous(&anon), 0);
	if (anon != NULL) {
		CU_ASSERT_EQUAL(al_auth_challenge_url(anon, h, token_addr,
		                                      "a/b", chal, scope,
		                                      reg_url, &hdr),
		                AL_EAUTH);
		CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "/token"));
		CU_ASSERT_PTR_NULL(hdr);
	}
	/* a Bearer challenge needs an http(s) realm */
	CU_ASSERT_EQUAL(al_auth_challenge(a, h, token_addr, "a/b",
	                                  "Bearer service=\"x\"", scope, &hdr),
	                AL_EPARSE);
	CU_ASSERT_EQUAL(al_auth_challenge(a, h, token_addr, "a/b",
	                                  "Bearer realm=\"file:///etc/passwd\"",
	                                  scope, &hdr),
	                AL_EPARSE);
	CU_ASSERT_PTR_NULL(hdr);
out:
	CU_ASSERT_PTR_NOT_NULL(a);
	free(hdr);
	free(cached);
	free(json);
	free(path);
	free(chal);
	free(reg_url);
	al_auth_free(a);
	al_auth_free(anon);
	al_http_free(h);
}

/* Where a token request may go: an http realm only for a registry reached
 * over plain http, and with credentials only to an insecure host. */
static void test_auth__refuses_plain_http_realms(void)
{
	al_http_opts o = AL_HTTP_OPTS_INIT;
	al_http *strict = NULL, *lax = NULL;
	al_auth *a = NULL;
	const char *insecure[2] = {NULL, NULL};
	char *path = NULL, *chal = NULL, *hdr = NULL, *json = NULL,
	     *plain_url = NULL, *tls_url = NULL;
	const char *scope = "repository:a/b:pull";

	if (!need_tokenserver())
		return;
	o.max_retries = AL_HTTP_NO_RETRY;
	CU_ASSERT_EQUAL(al_http_new(&strict, &o), 0);
	insecure[0] = token_addr;
	o.insecure_hosts = insecure;
	CU_ASSERT_EQUAL(al_http_new(&lax, &o), 0);
	json = al_sprintf("{\"auths\": {\"%s\": {\"auth\": \"Ym9iOnB3\"}}}",
	                  token_addr);
	path = json != NULL ? write_file("realm.json", json) : NULL;
	chal = al_sprintf("Bearer realm=\"http://%s/token\","
	                  "service=\"airlock-tokenserver\"",
	                  token_addr);
	plain_url = al_sprintf("http://%s/v2/", token_addr);
	tls_url = al_sprintf("https://%s/v2/", token_addr);
	if (strict == NULL || lax == NULL || path == NULL || chal == NULL ||
	    plain_url == NULL || tls_url == NULL || al_auth_new(&a, path) != 0)
		goto out;
	/* an https registry naming an http realm */
	CU_ASSERT_EQUAL(al_auth_challenge_url(a, lax, token_addr, "a/b", chal,
	                                      scope, tls_url, &hdr),
	                AL_EAUTH);
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(al_error_message(), "plain-http token realm"));
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "/token"));
	/* no request URL: treated as https */
	CU_ASSERT_EQUAL(
	    al_auth_challenge(a, lax, token_addr, "a/b", chal, scope, &hdr),
	    AL_EAUTH);
	/* a plain-http registry, but the realm's host is not insecure on
	 * this client: the credentials stay home */
	CU_ASSERT_EQUAL(al_auth_challenge_url(a, strict, token_addr, "a/b",
	                                      chal, scope, plain_url, &hdr),
	                AL_EAUTH);
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(al_error_message(), "refusing to send the credentials"));
	CU_ASSERT_PTR_NULL(hdr);
	/* the same with the host insecure: allowed */
	CU_ASSERT_EQUAL(al_auth_challenge_url(a, lax, token_addr, "a/b", chal,
	                                      scope, plain_url, &hdr),
	                0);
out:
	free(hdr);
	free(json);
	free(path);
	free(chal);
	free(plain_url);
	free(tls_url);
	al_auth_free(a);
	al_http_free(strict);
	al_http_free(lax);
}

/* A token server handing out tokens that would inject a header line or
 * reach a terminal: refused, nothing cached. */
static void test_auth__refuses_hostile_tokens(void)
{
	/* (a NUL is refused by the JSON parser already: AL_EPARSE) */
	static const char *const kinds[] = {"crlf", "lf", "esc", "space",
	                                    "utf8"};
	al_http_opts o = AL_HTTP_OPTS_INIT;
	al_http *h = NULL;
	al_auth *a = NULL;
	const char *insecure[2] = {NULL, NULL};
	char *path = NULL, *chal = NULL, *hdr = NULL, *json = NULL,
	     *plain_url = NULL;
	const char *scope = "repository:a/b:pull";
	size_t i;

	if (!need_tokenserver())
		return;
	o.max_retries = AL_HTTP_NO_RETRY;
	insecure[0] = token_addr;
	o.insecure_hosts = insecure;
	CU_ASSERT_EQUAL(al_http_new(&h, &o), 0);
	json = al_sprintf("{\"auths\": {\"%s\": {\"auth\": \"Ym9iOnB3\"}}}",
	                  token_addr);
	path = json != NULL ? write_file("hostile.json", json) : NULL;
	plain_url = al_sprintf("http://%s/v2/", token_addr);
	if (h == NULL || path == NULL || plain_url == NULL ||
	    al_auth_new(&a, path) != 0)
		goto out;
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		free(chal);
		chal = al_sprintf("Bearer realm=\"http://%s/token?bad=%s\","
		                  "service=\"airlock-tokenserver\"",
		                  token_addr, kinds[i]);
		if (chal == NULL)
			break;
		CU_ASSERT_EQUAL(al_auth_challenge_url(a, h, token_addr, "a/b",
		                                      chal, scope, plain_url,
		                                      &hdr),
		                AL_EPROTO);
		CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "token"));
		CU_ASSERT_PTR_NULL(hdr);
		CU_ASSERT_EQUAL(
		    al_auth_cached(a, token_addr, "a/b", scope, &hdr),
		    AL_ENOTFOUND);
		free(hdr);
		hdr = NULL;
	}
out:
	free(hdr);
	free(json);
	free(path);
	free(chal);
	free(plain_url);
	al_auth_free(a);
	al_http_free(h);
}

/* The token-answer parser on its own (the fuzz target fuzz_token drives
 * the same function). */
static void test_auth__parses_token_answers(void)
{
	static const struct {
		const char *json;
		int rc;
		const char *token;
		uint64_t ttl;
	} cases[] = {
	    {"{\"token\":\"eyJ.a-b_c.d~+/=\",\"expires_in\":300}", 0,
	     "eyJ.a-b_c.d~+/=", 300},
	    {"{\"access_token\":\"t\"}", 0, "t", 60},
	    {"{\"token\":\"\",\"access_token\":\"u\",\"expires_in\":-4}", 0,
	     "u", 60},
	    {"{\"token\":\"t\",\"expires_in\":99999999999999}", 0, "t", 86400},
	    {"{\"token\":\"t\\r\\nX-Injected: yes\"}", AL_EPROTO, NULL, 0},
	    {"{\"token\":\"t\\u001b[31m\"}", AL_EPROTO, NULL, 0},
	    {"{\"token\":\"t\\u0000x\"}", AL_EPARSE, NULL, 0},
	    {"{\"token\":\"a b\"}", AL_EPROTO, NULL, 0},
	    {"{\"token\":\"\\u00e9\"}", AL_EPROTO, NULL, 0},
	    {"{\"token\":\"t\\u007f\"}", AL_EPROTO, NULL, 0},
	    {"{\"token\":5}", AL_EPROTO, NULL, 0},
	    {"[]", AL_EPARSE, NULL, 0},
	    {"{\"token\":\"a\",\"token\":\"b\"}", AL_EPARSE, NULL, 0},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *tok = NULL;
		uint64_t ttl = 7;
		int rc = al_auth__parse_token((const uint8_t *)cases[i].json,
		                              strlen(cases[i].json), "realm",
		                              &tok, &ttl);

		if (rc != cases[i].rc)
			fprintf(stderr, "case %zu: %s -> %d\n", i,
			        cases[i].json, rc);
		CU_ASSERT_EQUAL(rc, cases[i].rc);
		if (cases[i].token != NULL) {
			CU_ASSERT(tok != NULL &&
			          strcmp(tok, cases[i].token) == 0);
			CU_ASSERT_EQUAL(ttl, cases[i].ttl);
		} else {
			CU_ASSERT_PTR_NULL(tok);
			CU_ASSERT_EQUAL(ttl, 7);
		}
		free(tok);
	}
}

/* Challenges with control characters never parse (their parameters end
 * up in a URL and in messages). */
static void test_auth__challenge_refuses_control_characters(void)
{
	static const char *const bad[] = {
	    "Bearer realm=\"https://a/t\r\nX: y\"",
	    "Bearer realm=\"https://a/t\",service=\"s\x1b[2J\"",
	    "Bearer realm=\"https://a/t\",scope=\"x\ny\"",
	    "Bearer realm=\"https://a/t\x7f\"",
	};
	al_auth_params p = {NULL, NULL, NULL, NULL};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CU_ASSERT_EQUAL(al_auth_parse_challenge(&p, bad[i]), AL_EPARSE);
		CU_ASSERT_PTR_NULL(p.scheme);
		al_auth_params_clear(&p);
	}
	/* HTAB stays allowed */
	CU_ASSERT_EQUAL(
	    al_auth_parse_challenge(&p, "Bearer\trealm=\"https://a/t\""), 0);
	al_auth_params_clear(&p);
}

/* aDpo = h:h, eDp4 = x:x, Yzpj = c:c, ZDpk = d:d, bjpu = n:n */
static void test_auth__searches_every_file_in_skopeo_order(void)
{
	char *home = al_sprintf("%s/h2", al_test_tmpdir());
	char *xdg = al_sprintf("%s/h2run", al_test_tmpdir());
	char *dc = al_sprintf("%s/h2dc", al_test_tmpdir());
	char *f1 =
	    write_file("h2run/containers/auth.json",
	               "{\"auths\": {\"a.example\": {\"auth\": \"aDpo\"},"
	               "\"e.example\": {}}}");
	char *f2 =
	    write_file("h2/.config/containers/auth.json",
	               "{\"auths\": {\"b.example\": {\"auth\": \"eDp4\"},"
	               "\"e.example\": {\"auth\": \"eDp4\"}}}");
	char *f3 = write_file("h2dc/config.json",
	                      "{\"auths\": {\"c.example/ns\": {\"auth\": "
	                      "\"Yzpj\"}, \"a.example/ns/repo\": "
	                      "{\"auth\": \"bjpu\"}}}");
	char *f4 = write_file("h2/.docker/config.json",
	                      "{\"auths\": {\"f.example\": {\"auth\": "
	                      "\"aDpo\"}}}");
	char *f5 = write_file("h2/.dockercfg",
	                      "{\"https://d.example/v1/\": {\"auth\": "
	                      "\"ZDpk\"}}");
	al_auth *a = NULL;
	const char *src;

	clear_env();
	setenv("HOME", home, 1);
	setenv("XDG_RUNTIME_DIR", xdg, 1);
	setenv("DOCKER_CONFIG", dc, 1);
	CU_ASSERT_EQUAL(al_auth_new(&a, NULL), 0);
	/* each registry is found in the file that has it */
	CU_ASSERT_EQUAL(expect_cred(a, "a.example", "x/y", "h", "h"), 0);
	CU_ASSERT_EQUAL(expect_cred(a, "b.example", "x/y", "x", "x"), 0);
	CU_ASSERT_EQUAL(expect_cred(a, "c.example", "ns/y", "c", "c"), 0);
	CU_ASSERT_EQUAL(expect_cred(a, "c.example", "other/y", "", ""),
	                AL_ENOTFOUND);
	CU_ASSERT_EQUAL(expect_cred(a, "d.example", "x/y", "d", "d"), 0);
	/* an earlier file's host entry beats a later file's namespace */
	CU_ASSERT_EQUAL(expect_cred(a, "a.example", "ns/repo", "h", "h"), 0);
	/* an entry without credentials falls through to the next file */
	CU_ASSERT_EQUAL(expect_cred(a, "e.example", "x/y", "x", "x"), 0);
	/* $DOCKER_CONFIG replaces ~/.docker */
	CU_ASSERT_EQUAL(expect_cred(a, "f.example", "x/y", "", ""),
	                AL_ENOTFOUND);
	src = al_auth_sources(a);
	CU_ASSERT_PTR_NOT_NULL(strstr(src, "h2run/containers/auth.json"));
	CU_ASSERT_PTR_NOT_NULL(strstr(src, ".config/containers/auth.json"));
	CU_ASSERT_PTR_NOT_NULL(strstr(src, "h2dc/config.json"));
	CU_ASSERT_PTR_NOT_NULL(strstr(src, ".dockercfg"));
	CU_ASSERT_PTR_NULL(strstr(src, ".docker/config.json"));
	CU_ASSERT(strstr(src, "h2run") < strstr(src, ".config/") &&
	          strstr(src, ".config/") < strstr(src, "h2dc") &&
	          strstr(src, "h2dc") < strstr(src, ".dockercfg"));
	al_auth_free(a);
	a = NULL;

	/* without DOCKER_CONFIG: ~/.docker/config.json; XDG_CONFIG_HOME
	 * replaces ~/.config */
	unsetenv("DOCKER_CONFIG");
	setenv("XDG_CONFIG_HOME", dc, 1);
	CU_ASSERT_EQUAL(al_auth_new(&a, NULL), 0);
	CU_ASSERT_EQUAL(expect_cred(a, "f.example", "x/y", "h", "h"), 0);
	CU_ASSERT_EQUAL(expect_cred(a, "b.example", "x/y", "", ""),
	                AL_ENOTFOUND);
	al_auth_free(a);
	clear_env();
	free(home);
	free(xdg);
	free(dc);
	free(f1);
	free(f2);
	free(f3);
	free(f4);
	free(f5);
}

/* A fake docker-credential-test on PATH: logs its argument and stdin,
 * answers by host (see the script). */
static char *helper_bin(void)
{
	char *bin = al_sprintf("%s/bin", al_test_tmpdir());
	char *script;
	const char *path = getenv("PATH");
	char *np;

	mkdir(bin, 0700);
	script = write_file(
	    "bin/docker-credential-test",
	    "#!/bin/sh\n"
	    "host=$(cat)\n"
	    "printf '%s %s\\n' \"$1\" \"$host\" >>\"$0.log\"\n"
	    "case $host in\n"
	    "slow.example) exec sleep 30 ;;\n"
	    "loud.example) yes '{}' | head -c 200000; exit 0 ;;\n"
	    "none.example) echo 'credentials not found in native keychain';"
	    " exit 1 ;;\n"
	    "bad.example) echo 'broken keyring'; exit 3 ;;\n"
	    "tok.example) echo '{\"Username\":\"<token>\",\"Secret\":\"t\"}';"
	    " exit 0 ;;\n"
	    "esac\n"
	    "printf '{\"ServerURL\":\"%s\",\"Username\":\"hu-%s\","
	    "\"Secret\":\"hp\"}' \"$host\" \"$host\"\n");
	chmod(script, 0700);
	np = al_sprintf("%s:%s", bin, path != NULL ? path : "/usr/bin:/bin");
	setenv("PATH", np, 1);
	free(np);
	free(script);
	return bin;
}

static void test_auth__runs_credential_helpers(void)
{
	char *bin = helper_bin();
	char *path = write_file(
	    "helpers.json",
	    "{\"auths\": {\"plain.example\": {\"auth\": \"aDpo\"},"
	    "\"store.example\": {}},"
	    "\"credHelpers\": {\"h.example\": \"test\", \"slow.example\": "
	    "\"test\", \"loud.example\": \"test\", \"none.example\": \"test\","
	    "\"bad.example\": \"test\", \"evil.example\": \"../../bin/sh\","
	    "\"tok.example\": \"test\"}}");
	char *path2 = write_file("store.json", "{\"auths\": {\"plain.example\":"
	                                       " {\"auth\": \"aDpo\"}},"
	                                       "\"credsStore\": \"test\"}");
	char *logf = al_sprintf("%s/docker-credential-test.log", bin);
	al_buf log = AL_BUF_INIT(4096);
	al_auth *a = NULL;
	uint64_t t0;
	int rc;

	CU_ASSERT_EQUAL(al_auth_new(&a, path), 0);
	CU_ASSERT_EQUAL(
	    expect_cred(a, "h.example", "ns/r", "hu-h.example", "hp"), 0);
	/* asked once per registry: the answer is kept */
	CU_ASSERT_EQUAL(
	    expect_cred(a, "h.example", "ns/other", "hu-h.example", "hp"), 0);
	CU_ASSERT_EQUAL(al_fs_read_file(logf, &log), 0);
	CU_ASSERT_STRING_EQUAL(al_buf_cstr(&log), "get h.example\n");
	CU_ASSERT_EQUAL(expect_cred(a, "plain.example", NULL, "h", "h"), 0);
	CU_ASSERT_EQUAL(expect_cred(a, "none.example", NULL, "", ""),
	                AL_ENOTFOUND);
	CU_ASSERT_EQUAL(expect_cred(a, "tok.example", NULL, "", ""),
	                AL_ENOTFOUND);
	CU_ASSERT_EQUAL(expect_cred(a, "bad.example", NULL, "", ""), AL_EAUTH);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "broken keyring"));
	CU_ASSERT_EQUAL(expect_cred(a, "evil.example", NULL, "", ""),
	                AL_EINVAL);
	CU_ASSERT_EQUAL(expect_cred(a, "loud.example", NULL, "", ""),
	                AL_ELIMIT);
	al_auth__set_helper_timeout_ms(a, 500);
	t0 = al_clock_now_ms();
	rc = expect_cred(a, "slow.example", NULL, "", "");
	CU_ASSERT_EQUAL(rc, AL_ETIMEOUT);
	CU_ASSERT(al_clock_now_ms() - t0 < 5000);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "killed"));
	al_auth_free(a);
	a = NULL;

	/* credsStore (docker CLI): for what the auths entries do not hold */
	CU_ASSERT_EQUAL(al_auth_new(&a, path2), 0);
	CU_ASSERT_EQUAL(expect_cred(a, "plain.example", NULL, "h", "h"), 0);
	CU_ASSERT_EQUAL(
	    expect_cred(a, "q.example", "a/b", "hu-q.example", "hp"), 0);
	al_auth_free(a);
	al_buf_free(&log);
	free(logf);
	free(path);
	free(path2);
	free(bin);
}

/* The header a Basic challenge gives for host/repo, and that header from
 * the cache for scope "repository:REPO:pull" (both must agree). NULL when
 * the challenge fails. */
static char *basic_for(al_auth *a, const char *host, const char *repo)
{
	char scope[128], *h = NULL, *c = NULL;

	snprintf(scope, sizeof(scope), "repository:%s:pull", repo);
	if (al_auth_challenge(a, NULL, host, repo, "Basic realm=\"r\"", scope,
	                      &h) != 0)
		return NULL;
	CU_ASSERT_EQUAL(al_auth_cached(a, host, repo, scope, &c), 0);
	CU_ASSERT(c != NULL && strcmp(c, h) == 0);
	free(c);
	return h;
}

/* One host, two tenants by path: each repository gets the credentials of
 * its own key, from the challenge and from the cache, and a repository
 * with none never gets a cached header of another key (issue 24). */
static void test_auth__caches_per_key_never_across_scopes(void)
{
	char *bin = helper_bin();
	char *files = write_file(
	    "scopes.json",
	    "{\"auths\": {\"h.example/team-a\": {\"auth\": \"YWxpY2U6cGE=\"},"
	    "\"h.example/team-b\": {\"username\": \"bob\", \"password\": "
	    "\"pb\"}}}");
	char *store = write_file(
	    "scopes-store.json",
	    "{\"auths\": {\"q.example/team-a\": {\"auth\": \"YWxpY2U6cGE=\"}},"
	    "\"credsStore\": \"test\"}");
	const char *alice = "Authorization: Basic YWxpY2U6cGE=";
	const char *bob = "Authorization: Basic Ym9iOnBi";
	const char *helper = "Authorization: Basic aHUtcS5leGFtcGxlOmhw";
	al_auth *a = NULL;
	char *h = NULL;

	CU_ASSERT_EQUAL(al_auth_new(&a, files), 0);
	h = basic_for(a, "h.example", "team-a/app");
	CU_ASSERT(h != NULL && strcmp(h, alice) == 0);
	free(h);
	/* team-b's key was not used yet: nothing cached holds for it */
	CU_ASSERT_EQUAL(al_auth_cached(a, "h.example", "team-b/app",
	                               "repository:team-b/app:pull", &h),
	                AL_ENOTFOUND);
	h = basic_for(a, "h.example", "team-b/app");
	CU_ASSERT(h != NULL && strcmp(h, bob) == 0);
	free(h);
	/* the same key covers the namespace's other repositories */
	CU_ASSERT_EQUAL(al_auth_cached(a, "h.example", "team-a/other",
	                               "repository:team-a/other:pull", &h),
	                0);
	CU_ASSERT(h != NULL && strcmp(h, alice) == 0);
	free(h);
	h = NULL;
	/* no key for team-c: neither tenant's header */
	CU_ASSERT_EQUAL(al_auth_cached(a, "h.example", "team-c/app",
	                               "repository:team-c/app:pull", &h),
	                AL_ENOTFOUND);
	CU_ASSERT_EQUAL(al_auth_challenge(a, NULL, "h.example", "team-c/app",
	                                  "Basic realm=\"r\"", NULL, &h),
	                AL_EAUTH);
	/* invalidating team-b's header leaves team-a's */
	al_auth_invalidate(a, "h.example", "team-b/app", NULL);
	CU_ASSERT_EQUAL(al_auth_cached(a, "h.example", "team-b/app",
	                               "repository:team-b/app:pull", &h),
	                AL_ENOTFOUND);
	CU_ASSERT_EQUAL(al_auth_cached(a, "h.example", "team-a/app",
	                               "repository:team-a/app:pull", &h),
	                0);
	free(h);
	h = NULL;
	al_auth_free(a);
	a = NULL;

	/* an auths key and the credsStore on one host */
	CU_ASSERT_EQUAL(al_auth_new(&a, store), 0);
	h = basic_for(a, "q.example", "team-a/app");
	CU_ASSERT(h != NULL && strcmp(h, alice) == 0);
	free(h);
	CU_ASSERT_EQUAL(al_auth_cached(a, "q.example", "team-b/app",
	                               "repository:team-b/app:pull", &h),
	                AL_ENOTFOUND);
	h = basic_for(a, "q.example", "team-b/app");
	CU_ASSERT(h != NULL && strcmp(h, helper) == 0);
	free(h);
	h = NULL;
	CU_ASSERT_EQUAL(al_auth_cached(a, "q.example", "team-a/app",
	                               "repository:team-a/app:pull", &h),
	                0);
	CU_ASSERT(h != NULL && strcmp(h, alice) == 0);
	free(h);
	al_auth_free(a);
	free(files);
	free(store);
	free(bin);
}

static void test_auth__names_searched_files_when_none_found(void)
{
	char *path = write_file("onlyother.json",
	                        "{\"auths\": {\"o.example\": {\"auth\": "
	                        "\"aDpo\"}}}");
	al_auth *a = NULL;
	char *hdr = NULL;

	CU_ASSERT_EQUAL(al_auth_new(&a, path), 0);
	CU_ASSERT_EQUAL(al_auth_challenge(a, NULL, "q.example", "a/b",
	                                  "Basic realm=\"x\"", NULL, &hdr),
	                AL_EAUTH);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "onlyother.json"));
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "q.example"));
	al_auth_free(a);
	free(path);
}

int main(void)
{
	CU_TestInfo tests[] = {
	    {"test_auth__parses_base64_and_username_forms",
	     test_auth__parses_base64_and_username_forms},
	    {"test_auth__normalises_url_keys_and_docker_io",
	     test_auth__normalises_url_keys_and_docker_io},
	    {"test_auth__most_specific_repo_key_wins",
	     test_auth__most_specific_repo_key_wins},
	    {"test_auth__missing_default_file_is_ok",
	     test_auth__missing_default_file_is_ok},
	    {"test_auth__explicit_missing_file_is_an_error",
	     test_auth__explicit_missing_file_is_an_error},
	    {"test_auth__rejects_duplicate_keys",
	     test_auth__rejects_duplicate_keys},
	    {"test_auth__malformed_base64_names_the_file",
	     test_auth__malformed_base64_names_the_file},
	    {"test_auth__default_file_precedence",
	     test_auth__default_file_precedence},
	    {"test_auth__searches_every_file_in_skopeo_order",
	     test_auth__searches_every_file_in_skopeo_order},
	    {"test_auth__runs_credential_helpers",
	     test_auth__runs_credential_helpers},
	    {"test_auth__caches_per_key_never_across_scopes",
	     test_auth__caches_per_key_never_across_scopes},
	    {"test_auth__names_searched_files_when_none_found",
	     test_auth__names_searched_files_when_none_found},
	    {"test_auth__parses_bearer_challenge",
	     test_auth__parses_bearer_challenge},
	    {"test_auth__rejects_bad_challenges",
	     test_auth__rejects_bad_challenges},
	    {"test_auth__basic_challenge_builds_and_caches_header",
	     test_auth__basic_challenge_builds_and_caches_header},
	    {"test_auth__bearer_token_fetch_cache_and_expiry",
	     test_auth__bearer_token_fetch_cache_and_expiry},
	    {"test_auth__shared_between_threads",
	     test_auth__shared_between_threads},
	    {"test_auth__refuses_plain_http_realms",
	     test_auth__refuses_plain_http_realms},
	    {"test_auth__refuses_hostile_tokens",
	     test_auth__refuses_hostile_tokens},
	    {"test_auth__parses_token_answers",
	     test_auth__parses_token_answers},
	    {"test_auth__challenge_refuses_control_characters",
	     test_auth__challenge_refuses_control_characters},
	    CU_TEST_INFO_NULL,
	};

	return al_test_run("auth", tests);
}
