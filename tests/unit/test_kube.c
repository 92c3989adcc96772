/* test_kube.c: CUnit suite for the kube client against tests/tools/kubeserver.py on loopback. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "airlock/buf.h"
#include "airlock/clock.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/http.h"
#include "json_int.h"
#include "kube_int.h"
#include "airlock/kube.h"
#include "al_test.h"

#define TOKEN "s3cr3t-t0ken"
#define MAXSRV 64

/* Every server started, stopped at exit even when a test failed. */
static pid_t all_pids[MAXSRV];
static int nall;
static int certs_made = -1;

typedef struct srv {
	pid_t pid;
	int port;
	int tls;
	char url[64];
} srv;

static void stop_all(void)
{
	int i;

	for (i = 0; i < nall; i++) {
		if (all_pids[i] > 0) {
			kill(all_pids[i], SIGTERM);
			waitpid(all_pids[i], NULL, 0);
			all_pids[i] = -1;
		}
	}
}

static const char *tmp_path(char *buf, size_t cap, const char *name)
{
	int n = snprintf(buf, cap, "%s/%s", al_test_tmpdir(), name);

	if (n < 0 || (size_t)n >= cap)
		abort();
	return buf;
}

static int write_text(const char *path, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int write_text(const char *path, const char *fmt, ...)
{
	va_list ap;
	FILE *f = fopen(path, "w");
	int rc;

	if (f == NULL)
		return -1;
	va_start(ap, fmt);
	rc = vfprintf(f, fmt, ap) < 0 ? -1 : 0;
	va_end(ap);
	if (fclose(f) != 0)
		rc = -1;
	return rc;
}

/* A CA, a server certificate for 127.0.0.1 and a client certificate,
 * all signed by the CA (openssl command line), in the test directory. */
static int make_certs(void)
{
	char cmd[8192];
	int n;

	if (certs_made >= 0)
		return certs_made == 1 ? 0 : -1;
	certs_made = 0;
	n = snprintf(
	    cmd, sizeof(cmd),
	    "( cd '%s' && E='-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 "
	    "-nodes' && "
	    "openssl req -x509 $E -keyout ca.key -out ca.pem -days 2 "
	    "-subj /CN=kube-test-ca && "
	    "openssl req $E -keyout srv.key -out srv.csr -subj /CN=127.0.0.1 "
	    "&& printf 'subjectAltName=IP:127.0.0.1\\n' > srv.ext && "
	    "openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key "
	    "-CAcreateserial -out srv.pem -days 2 -extfile srv.ext && "
	    "openssl req $E -keyout cli.key -out cli.csr -subj /CN=airlock && "
	    "openssl x509 -req -in cli.csr -CA ca.pem -CAkey ca.key "
	    "-CAcreateserial -out cli.pem -days 2 ) >/dev/null 2>&1",
	    al_test_tmpdir());
	if (n < 0 || (size_t)n >= sizeof(cmd))
		return -1;
	if (system(cmd) != 0) {
		fprintf(stderr, "cannot make test certificates with openssl\n");
		return -1;
	}
	certs_made = 1;
	return 0;
}

/* Start kubeserver.py with extra arguments (NULL-terminated list). */
static int srv_start(srv *s, const char *const *extra)
{
	char script[4096], portfile[4096], logfile[4096];
	static int seq;
	const char *argv[32];
	int n, i, a = 0;
	pid_t pid;

	memset(s, 0, sizeof(*s));
	s->pid = -1;
	seq++;
	n = snprintf(script, sizeof(script), "%s/tests/tools/kubeserver.py",
	             al_test_source_dir());
	if (n < 0 || (size_t)n >= sizeof(script))
		return -1;
	n = snprintf(portfile, sizeof(portfile), "%s/ks-%d.port",
	             al_test_tmpdir(), seq);
	if (n < 0 || (size_t)n >= sizeof(portfile))
		return -1;
	n = snprintf(logfile, sizeof(logfile), "%s/ks-%d.log", al_test_tmpdir(),
	             seq);
	if (n < 0 || (size_t)n >= sizeof(logfile))
		return -1;
	argv[a++] = "python3";
	argv[a++] = script;
	argv[a++] = "--port-file";
	argv[a++] = portfile;
	argv[a++] = "--co-delay";
	argv[a++] = "0.1";
	for (i = 0; extra != NULL && extra[i] != NULL && a < 30; i++) {
		if (strcmp(extra[i], "--tls") == 0)
			s->tls = 1;
		argv[a++] = extra[i];
	}
	argv[a] = NULL;
	if (nall >= MAXSRV)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open("/dev/null", O_RDWR);
		int log = open(logfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() == 1)
			_exit(1);
		if (fd >= 0) {
			dup2(fd, STDIN_FILENO);
			dup2(fd, STDOUT_FILENO);
			close(fd);
		}
		if (log >= 0) {
			dup2(log, STDERR_FILENO);
			close(log);
		}
		execvp("python3", (char *const *)argv);
		_exit(127);
	}
	if (nall == 0)
		atexit(stop_all);
	all_pids[nall++] = pid;
	s->pid = pid;
	for (i = 0; i < 200; i++) {
		FILE *f = fopen(portfile, "r");

		if (f != NULL) {
			int ok = fscanf(f, "%d", &s->port) == 1;

			fclose(f);
			if (ok) {
				snprintf(s->url, sizeof(s->url),
				         "%s://127.0.0.1:%d",
				         s->tls ? "https" : "http", s->port);
				return 0;
			}
		}
		if (waitpid(pid, NULL, WNOHANG) == pid) {
			all_pids[nall - 1] = -1;
			break;
		}
		usleep(50 * 1000);
	}
	fprintf(stderr, "kubeserver did not start, see %s\n", logfile);
	return -1;
}

static void srv_stop(srv *s)
{
	int i;

	if (s->pid <= 0)
		return;
	kill(s->pid, SIGTERM);
	waitpid(s->pid, NULL, 0);
	for (i = 0; i < nall; i++)
		if (all_pids[i] == s->pid)
			all_pids[i] = -1;
	s->pid = -1;
}

/* A control call; returns the parsed answer or NULL. */
static json_t *control(const srv *s, const char *method, const char *path,
                       const char *body)
{
	al_http_opts o = AL_HTTP_OPTS_INIT;
	al_http *h = NULL;
	al_http_req req;
	al_http_resp resp = AL_HTTP_RESP_INIT;
	al_buf out = AL_BUF_INIT(16 * 1024 * 1024);
	const char *hdrs[] = {"Content-Type: application/json", NULL};
	char url[512];
	json_t *j = NULL;

	o.tls_verify_off = 1;
	o.max_retries = AL_HTTP_NO_RETRY;
	memset(&req, 0, sizeof(req));
	snprintf(url, sizeof(url), "%s%s", s->url, path);
	req.method = method;
	req.url = url;
	req.headers = hdrs;
	if (body != NULL) {
		req.body = (const uint8_t *)body;
		req.body_len = strlen(body);
	}
	req.body_out = &out;
	req.deadline = al_deadline_in(10000);
	if (al_http_new(&h, &o) == 0 && al_http_do(h, &req, &resp) == 0 &&
	    resp.status == 200)
		al_json_parse(&j, out.ptr, out.len, url);
	al_http_resp_clear(&resp);
	al_http_free(h);
	al_buf_free(&out);
	return j;
}

static int add_fault(const srv *s, const char *json)
{
	json_t *j = control(s, "POST", "/_control/fault", json);
	int ok = j != NULL;

	json_decref(j);
	return ok ? 0 : -1;
}

/* How many logged requests have this method and path. */
static int count_requests(const srv *s, const char *method, const char *path)
{
	json_t *j = control(s, "GET", "/_control/log", NULL), *e;
	size_t i;
	int n = 0;

	if (j == NULL)
		return -1;
	json_array_foreach(json_object_get(j, "requests"), i, e)
	{
		const char *m = al_json_str(e, "method");
		const char *p = al_json_str(e, "path");

		if (m != NULL && p != NULL && strcmp(m, method) == 0 &&
		    strcmp(p, path) == 0)
			n++;
	}
	json_decref(j);
	return n;
}

/* A kubeconfig with one cluster at server and a user section (may be
 * ""), written to name; returns its path in buf. */
static const char *kubeconfig(char *buf, size_t cap, const char *name,
                              const char *server, const char *cluster_extra,
                              const char *user)
{
	tmp_path(buf, cap, name);
	if (write_text(buf,
	               "apiVersion: v1\n"
	               "kind: Config\n"
	               "current-context: main\n"
	               "clusters:\n"
	               "- name: c1\n"
	               "  cluster:\n"
	               "    server: %s\n"
	               "%s"
	               "contexts:\n"
	               "- name: main\n"
	               "  context:\n"
	               "    cluster: c1\n"
	               "    user: u1\n"
	               "users:\n"
	               "- name: u1\n"
	               "  user:\n"
	               "%s",
	               server, cluster_extra, user) != 0)
		abort();
	return buf;
}

static int new_client(al_kube **k, const char *cfg)
{
	al_kube_opts o = AL_KUBE_OPTS_INIT;

	o.kubeconfig = cfg;
	o.http.backoff_base_ms = 20;
	o.http.backoff_max_ms = 2000; /* also caps Retry-After */
	return al_kube_new(k, &o);
}

static json_t *configmap(const char *name, const char *value)
{
	return json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}, s:{s:s}}",
	                 "apiVersion", "v1", "kind", "ConfigMap", "metadata",
	                 "name", name, "namespace", "default", "labels", "app",
	                 "airlock", "data", "value", value);
}

static const char *rv_of(const json_t *o)
{
	return al_json_str(json_object_get(o, "metadata"), "resourceVersion");
}

/* ---- kubeconfig ------------------------------------------------------- */

#define INSECURE "    insecure-skip-tls-verify: true\n"

/* An HTTPS server requiring TOKEN (tokens never travel over http). */
static int tls_token_server(srv *s, char *cert, char *key)
{
	const char *extra[] = {"--tls", cert, key, "--token", TOKEN, NULL};

	if (make_certs() != 0)
		return -1;
	tmp_path(cert, 4096, "srv.pem");
	tmp_path(key, 4096, "srv.key");
	return srv_start(s, extra);
}

static void test_kube__token_never_sent_over_http(void)
{
	const char *extra[] = {"--token", TOKEN, NULL};
	char cfg[4096];
	srv s;
	al_kube *k = NULL;
	json_t *ns = NULL;

	CU_ASSERT_EQUAL_FATAL(srv_start(&s, extra), 0);
	kubeconfig(cfg, sizeof(cfg), "httptoken.yaml", s.url, "",
	           "    token: " TOKEN "\n");
	CU_ASSERT_EQUAL(new_client(&k, cfg), 0);
	if (k != NULL)
		CU_ASSERT_EQUAL(al_kube_get(k, "v1", "Namespace", NULL,
		                            "default", &ns,
		                            al_deadline_in(10000)),
		                AL_EAUTH);
	json_decref(ns);
	al_kube_free(k);
	srv_stop(&s);
}

static void test_kube__kubeconfig_token(void)
{
	char cfg[4096], sc[4096], sk[4096];
	srv s;
	al_kube *k = NULL;
	json_t *ns = NULL;

	CU_ASSERT_EQUAL_FATAL(tls_token_server(&s, sc, sk), 0);
	kubeconfig(cfg, sizeof(cfg), "token.yaml", s.url, INSECURE,
	           "    token: " TOKEN "\n");
	CU_ASSERT_EQUAL(new_client(&k, cfg), 0);
	if (k != NULL) {
		CU_ASSERT_STRING_EQUAL(al_kube_server(k), s.url);
		CU_ASSERT_STRING_EQUAL(al_kube_namespace(k), "default");
		CU_ASSERT_EQUAL(al_kube_get(k, "v1", "Namespace", NULL,
		                            "kube-system", &ns,
		                            al_deadline_in(10000)),
		                0);
		CU_ASSERT_STRING_EQUAL(
		    al_json_str(json_object_get(ns, "metadata"), "name"),
		    "kube-system");
	}
	json_decref(ns);
	al_kube_free(k);
	srv_stop(&s);
}

static void test_kube__kubeconfig_token_file_relative(void)
{
	char cfg[4096], sc[4096], sk[4096], tok[4096];
	srv s;
	al_kube *k = NULL;
	json_t *ns = NULL;

	CU_ASSERT_EQUAL_FATAL(tls_token_server(&s, sc, sk), 0);
	write_text(tmp_path(tok, sizeof(tok), "tokfile"), "  %s\n", TOKEN);
	/* relative to the kubeconfig's directory, not the cwd */
	kubeconfig(cfg, sizeof(cfg), "tokfile.yaml", s.url, INSECURE,
	           "    tokenFile: tokfile\n");
	CU_ASSERT_EQUAL(new_client(&k, cfg), 0);
	if (k != NULL)
		CU_ASSERT_EQUAL(al_kube_get(k, "v1", "Namespace", NULL,
		                            "default", &ns,
		                            al_deadline_in(10000)),
		                0);
	json_decref(ns);
	al_kube_free(k);
	srv_stop(&s);
}

static void test_kube__rotated_token_file_is_reread(void)
{
	char cfg[4096], tok[4096], sc[4096], sk[4096];
	srv s;
	al_kube *k = NULL;
	json_t *ns = NULL;

	CU_ASSERT_EQUAL_FATAL(tls_token_server(&s, sc, sk), 0);
	write_text(tmp_path(tok, sizeof(tok), "rotating"), "old-token\n");
	kubeconfig(cfg, sizeof(cfg), "rotating.yaml", s.url, INSECURE,
	           "    tokenFile: rotating\n");
	CU_ASSERT_EQUAL(new_client(&k, cfg), 0);
	/* the token rotates after the client was made */
	write_text(tok, "%s\n", TOKEN);
	if (k != NULL) {
		CU_ASSERT_EQUAL(al_kube_get(k, "v1", "Namespace", NULL,
		                            "default", &ns,
		                            al_deadline_in(10000)),
		                0);
		/* one 401 with the old token, then the new one */
		CU_ASSERT_EQUAL(count_requests(&s, "GET", "/api/v1"), 2);
	}
	json_decref(ns);
	ns = NULL;
	al_kube_free(k);
	k = NULL;
	/* a file holding a wrong token that does not change: AL_EAUTH, no
	 * second request */
	write_text(tok, "stale-token\n");
	CU_ASSERT_EQUAL(new_client(&k, cfg), 0);
	if (k != NULL) {
		CU_ASSERT_EQUAL(al_kube_get(k, "v1", "Namespace", NULL,
		                            "kube-system", &ns,
		                            al_deadline_in(10000)),
		                AL_EAUTH);
		CU_ASSERT_EQUAL(count_requests(&s, "GET", "/api/v1"), 3);
	}
	json_decref(ns);
	al_kube_free(k);
	srv_stop(&s);
}

static void test_kube__wrong_token_is_eauth(void)
{
	char cfg[4096], sc[4096], sk[4096];
	srv s;
	al_kube *k = NULL;
	json_t *ns = NULL;

	CU_ASSERT_EQUAL_FATAL(tls_token_server(&s, sc, sk), 0);
	kubeconfig(cfg, sizeof(cfg), "wrongtok.yaml", s.url, INSECURE,
	           "    token: not-the-token\n");
	CU_ASSERT_EQUAL(new_client(&k, cfg), 0);
	if (k != NULL) {
		CU_ASSERT_EQUAL(al_kube_get(k, "v1", "Namespace", NULL,
		                            "default", &ns,
		                            al_deadline_in(10000)),
		                AL_EAUTH);
		CU_ASSERT_PTR_NULL(ns);
		/* the token never appears in messages */
		CU_ASSERT_PTR_NULL(strstr(al_error_message(), "not-the-token"));
		/* 401 is not retried: one discovery request only */
		CU_ASSERT_EQUAL(count_requests(&s, "GET", "/api/v1"), 1);
	}
	json_decref(ns);
	al_kube_free(k);
	srv_stop(&s);
}

static void test_kube__context_selection(void)
{
	char cfg[4096];
	al_kube_opts o = AL_KUBE_OPTS_INIT;
	al_kube *k = NULL;

	tmp_path(cfg, sizeof(cfg), "contexts.yaml");
	write_text(cfg, "apiVersion: v1\n"
	                "kind: Config\n"
	                "current-context: one\n"
	                "clusters:\n"
	                "- name: c1\n"
	                "  cluster: {server: 'http://127.0.0.1:1'}\n"
	                "- name: c2\n"
	                "  cluster: {server: 'https://127.0.0.1:2/'}\n"
	                "contexts:\n"
	                "- name: one\n"
	                "  context: {cluster: c1, user: u}\n"
	                "- name: two\n"
	                "  context: {cluster: c2, user: u, namespace: ops}\n"
	                "users:\n"
	                "- name: u\n"
	                "  user: {token: abc}\n");
	o.kubeconfig = cfg;
	CU_ASSERT_EQUAL(al_kube_new(&k, &o), 0);
	if (k != NULL) {
		CU_ASSERT_STRING_EQUAL(al_kube_server(k), "http://127.0.0.1:1");
		CU_ASSERT_STRING_EQUAL(al_kube_namespace(k), "default");
	}
	al_kube_free(k);
	k = NULL;
	o.context = "two";
	CU_ASSERT_EQUAL(al_kube_new(&k, &o), 0);
	if (k != NULL) {
		CU_ASSERT_STRING_EQUAL(al_kube_server(k),
		                       "https://127.0.0.1:2");
		CU_ASSERT_STRING_EQUAL(al_kube_namespace(k), "ops");
	}
	al_kube_free(k);
	k = NULL;
	o.server = "http://127.0.0.1:3";
	CU_ASSERT_EQUAL(al_kube_new(&k, &o), 0);
	if (k != NULL)
		CU_ASSERT_STRING_EQUAL(al_kube_server(k), "http://127.0.0.1:3");
	al_kube_free(k);
	k = NULL;
	o.server = NULL;
	o.context = "three";
	CU_ASSERT_EQUAL(al_kube_new(&k, &o), AL_ENOTFOUND);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "three"));
	CU_ASSERT_PTR_NULL(k);
}

static void test_kube__missing_kubeconfig(void)
{
	char cfg[4096];
	al_kube_opts o = AL_KUBE_OPTS_INIT;
	al_kube *k = NULL;

	o.kubeconfig = tmp_path(cfg, sizeof(cfg), "does-not-exist.yaml");
	CU_ASSERT_EQUAL(al_kube_new(&k, &o), AL_ENOTFOUND);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "does-not-exist"));
	CU_ASSERT_PTR_NULL(k);
}

static void test_kube__malformed_yaml_names_position(void)
{
	char cfg[4096];
	al_kube_opts o = AL_KUBE_OPTS_INIT;
	al_kube *k = NULL;

	tmp_path(cfg, sizeof(cfg), "bad.yaml");
	write_text(cfg, "apiVersion: v1\n"
	                "clusters:\n"
	                "  - name: [unclosed\n"
	                "current-context: x\n");
	o.kubeconfig = cfg;
	CU_ASSERT_EQUAL(al_kube_new(&k, &o), AL_EPARSE);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "bad.yaml:"));
	CU_ASSERT_PTR_NULL(k);
	/* well-formed YAML, wrong shape */
	write_text(cfg, "current-context: main\n"
	                "contexts:\n"
	                "- name: main\n"
	                "  context: {cluster: nope}\n");
	CU_ASSERT_EQUAL(al_kube_new(&k, &o), AL_EPARSE);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "bad.yaml"));
	CU_ASSERT_PTR_NULL(k);
}

static void test_kube__incluster_config(void)
{
	char dir[4096], p[4096];
	al_kube_opts o = AL_KUBE_OPTS_INIT;
	al_kube *k = NULL;
	const char *old_kc = getenv("KUBECONFIG"), *old_home = getenv("HOME");
	char *save_kc = old_kc != NULL ? al_strdup(old_kc) : NULL;
	char *save_home = old_home != NULL ? al_strdup(old_home) : NULL;

	tmp_path(dir, sizeof(dir), "sa");
	mkdir(dir, 0700);
	write_text(tmp_path(p, sizeof(p), "sa/token"), "%s\n", TOKEN);
	write_text(tmp_path(p, sizeof(p), "sa/namespace"), "airlock-ns");
	setenv("AIRLOCK_KUBE_SA_DIR", dir, 1);
	setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	unsetenv("KUBECONFIG");
	setenv("HOME", dir, 1); /* no .kube/config there */
	CU_ASSERT_EQUAL(al_kube_new(&k, &o), 0);
	if (k != NULL) {
		CU_ASSERT_STRING_EQUAL(al_kube_server(k),
		                       "https://10.0.0.1:443");
		CU_ASSERT_STRING_EQUAL(al_kube_namespace(k), "airlock-ns");
	}
	al_kube_free(k);
	k = NULL;
	unsetenv("KUBERNETES_SERVICE_HOST");
	CU_ASSERT_EQUAL(al_kube_new(&k, &o), AL_ENOTFOUND);
	CU_ASSERT_PTR_NULL(k);
	/* no configuration at all, but a server: used without credentials */
	o.server = "http://127.0.0.1:9";
	CU_ASSERT_EQUAL(al_kube_new(&k, &o), 0);
	if (k != NULL)
		CU_ASSERT_STRING_EQUAL(al_kube_server(k), "http://127.0.0.1:9");
	al_kube_free(k);
	k = NULL;
	unsetenv("AIRLOCK_KUBE_SA_DIR");
	unsetenv("KUBERNETES_SERVICE_PORT");
	if (save_kc != NULL)
		setenv("KUBECONFIG", save_kc, 1);
	if (save_home != NULL)
		setenv("HOME", save_home, 1);
	free(save_kc);
	free(save_home);
}

/* ---- TLS -------------------------------------------------------------- */

static char *b64_file(const char *name)
{
	char p[4096];
	al_buf b = AL_BUF_INIT(1024 * 1024);
	char *out = NULL;

	if (al_fs_read_file(tmp_path(p, sizeof(p), name), &b) == 0)
		out = al_base64_encode(b.ptr, b.len);
	al_buf_free(&b);
	return out;
}

static void test_kube__tls_with_ca_data(void)
{
	char cfg[4096], srvcert[4096], srvkey[4096], extra_c[8192];
	const char *extra[] = {"--tls",   srvcert, srvkey,
	                       "--token", TOKEN,   NULL};
	srv s;
	al_kube *k = NULL;
	json_t *ns = NULL;
	char *ca = NULL;
	int rc;

	CU_ASSERT_EQUAL_FATAL(make_certs(), 0);
	tmp_path(srvcert, sizeof(srvcert), "srv.pem");
	tmp_path(srvkey, sizeof(srvkey), "srv.key");
	CU_ASSERT_EQUAL_FATAL(srv_start(&s, extra), 0);
	ca = b64_file("ca.pem");
	CU_ASSERT_PTR_NOT_NULL(ca);
	/* without the CA: a TLS failure, not retried until the deadline */
	kubeconfig(cfg, sizeof(cfg), "noca.yaml", s.url, "",
	           "    token: " TOKEN "\n");
	CU_ASSERT_EQUAL(new_client(&k, cfg), 0);
	if (k != NULL) {
		uint64_t t0;

		/* on the virtual clock: retries until the deadline would
		 * show as 20 s of backoff, whatever the machine's load */
		al_clock_use_virtual(1000, 0);
		t0 = al_clock_now_ms();
		rc = al_kube_get(k, "v1", "Namespace", NULL, "default", &ns,
		                 al_deadline_in(20000));
		CU_ASSERT_EQUAL(rc, AL_ENET);
		CU_ASSERT(al_clock_now_ms() - t0 < 5000);
		al_clock_set_source(NULL);
	}
	al_kube_free(k);
	k = NULL;
	/* with certificate-authority-data */
	snprintf(extra_c, sizeof(extra_c),
	         "    certificate-authority-data: %s\n", ca != NULL ? ca : "");
	kubeconfig(cfg, sizeof(cfg), "cadata.yaml", s.url, extra_c,
	           "    token: " TOKEN "\n");
	CU_ASSERT_EQUAL(new_client(&k, cfg), 0);
	if (k != NULL)
		CU_ASSERT_EQUAL(al_kube_get(k, "v1", "Namespace", NULL,
		                            "default", &ns,
		                            al_deadline_in(10000)),
		                0);
	json_decref(ns);
	ns = NULL;
	al_kube_free(k);
	k = NULL;
	/* with a certificate-authority file, relative */
	kubeconfig(cfg, sizeof(cfg), "cafile.yaml", s.url,
	           "    certificate-authority: ca.pem\n",
	           "    token: " TOKEN "\n");
	CU_ASSERT_EQUAL(new_client(&k, cfg), 0);
	if (k != NULL)
		CU_ASSERT_EQUAL(al_kube_get(k, "v1", "Namespace", NULL,
		                            "default", &ns,
		                            al_deadline_in(10000)),
		                0);
	json_decref(ns);
	ns = NULL;
	al_kube_free(k);
	k = NULL;
	/* insecure-skip-tls-verify */
	kubeconfig(cfg, sizeof(cfg), "insecure.yaml", s.url,
	           "    insecure-skip-tls-verify: true\n",
	           "    token: " TOKEN "\n");
	CU_ASSERT_EQUAL(new_client(&k, cfg), 0);
	if (k != NULL)
		CU_ASSERT_EQUAL(al_kube_get(k, "v1", "Namespace", NULL,
		                            "default", &ns,
		                            al_deadline_in(10000)),
		                0);
	json_decref(ns);
	al_kube_free(k);
	free(ca);
	srv_stop(&s);
}

/* Files named airlock-kube-* in dir, and whether all are mode 0600. */
static int private_files(const char *dir, int *all_private)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	*all_private = 1;
	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		char p[4096];
		struct stat st;

		if (strncmp(e->d_name, "airlock-kube-", 13) != 0)
			continue;
		n++;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		if (stat(p, &st) != 0 || (st.st_mode & 0777) != 0600)
			*all_private = 0;
	}
	closedir(d);
	return n;
}

static void test_kube__client_certificate_data(void)
{
	char cfg[4096], srvcert[4096], srvkey[4096], ca[4096], tdir[4096];
	char cx[8192], ux[16384];
	const char *extra[] = {"--tls", srvcert,       srvkey, "--token",
	                       TOKEN,   "--client-ca", ca,     NULL};
	const char *old_tmp = getenv("TMPDIR");
	char *save_tmp = old_tmp != NULL ? al_strdup(old_tmp) : NULL;
	char *cad = NULL, *certd = NULL, *keyd = NULL;
	srv s;
	al_kube *k = NULL;
	json_t *ns = NULL;
	int priv = 0;

	CU_ASSERT_EQUAL_FATAL(make_certs(), 0);
	tmp_path(srvcert, sizeof(srvcert), "srv.pem");
	tmp_path(srvkey, sizeof(srvkey), "srv.key");
	tmp_path(ca, sizeof(ca), "ca.pem");
	CU_ASSERT_EQUAL_FATAL(srv_start(&s, extra), 0);
	cad = b64_file("ca.pem");
	certd = b64_file("cli.pem");
	keyd = b64_file("cli.key");
	snprintf(cx, sizeof(cx), "    certificate-authority-data: %s\n",
	         cad != NULL ? cad : "");
	snprintf(ux, sizeof(ux),
	         "    client-certificate-data: %s\n"
	         "    client-key-data: %s\n",
	         certd != NULL ? certd : "", keyd != NULL ? keyd : "");
	kubeconfig(cfg, sizeof(cfg), "clientcert.yaml", s.url, cx, ux);
	tmp_path(tdir, sizeof(tdir), "privtmp");
	mkdir(tdir, 0700);
	setenv("TMPDIR", tdir, 1);
	/* by default the data lives in memory files: nothing in TMPDIR,
	 * so a kill -9 leaves nothing behind */
	CU_ASSERT_EQUAL(new_client(&k, cfg), 0);
	CU_ASSERT_EQUAL(private_files(tdir, &priv), 0);
	if (k != NULL)
		CU_ASSERT_EQUAL(al_kube_get(k, "v1", "Namespace", NULL,
		                            "default", &ns,
		                            al_deadline_in(10000)),
		                0);
	json_decref(ns);
	ns = NULL;
	al_kube_free(k);
	k = NULL;
	/* the fallback (no memfd): private files */
	setenv("AIRLOCK_KUBE_NO_MEMFD", "1", 1);
	CU_ASSERT_EQUAL(new_client(&k, cfg), 0);
	unsetenv("AIRLOCK_KUBE_NO_MEMFD");
	/* CA, certificate and key were written as private files */
	CU_ASSERT_EQUAL(private_files(tdir, &priv), 3);
	CU_ASSERT_EQUAL(priv, 1);
	if (k != NULL)
		CU_ASSERT_EQUAL(al_kube_get(k, "v1", "Namespace", NULL,
		                            "default", &ns,
		                            al_deadline_in(10000)),
		                0);
	al_kube_free(k);
	/* and removed by al_kube_free */
	CU_ASSERT_EQUAL(private_files(tdir, &priv), 0);
	if (save_tmp != NULL)
		setenv("TMPDIR", save_tmp, 1);
	else
		unsetenv("TMPDIR");
	/* without the client certificate (and no token): refused */
	k = NULL;
	kubeconfig(cfg, sizeof(cfg), "nocert.yaml", s.url, cx, "    {}\n");
	CU_ASSERT_EQUAL(new_client(&k, cfg), 0);
	if (k != NULL)
		CU_ASSERT_EQUAL(al_kube_get(k, "v1", "Namespace", NULL,
		                            "default", &ns,
		                            al_deadline_in(10000)),
		                AL_EAUTH);
	al_kube_free(k);
	json_decref(ns);
	free(save_tmp);
	free(cad);
	free(certd);
	free(keyd);
	srv_stop(&s);
}

/* A private file left by a process that died (kill -9 with the fallback)
 * is removed by the next client that writes one; a live process's file and
 * other names are left alone. */
static void test_kube__stale_private_files_are_removed(void)
{
	char cfg[8192], tdir[2048], dead[4096], live[4096], other[4096];
	char ux[8192];
	const char *old_tmp = getenv("TMPDIR");
	char *save_tmp = old_tmp != NULL ? al_strdup(old_tmp) : NULL;
	char *keyd = NULL, *certd = NULL;
	al_kube *k = NULL;
	pid_t child;
	FILE *f;
	int priv = 0;

	CU_ASSERT_EQUAL_FATAL(make_certs(), 0);
	tmp_path(tdir, sizeof(tdir), "staletmp");
	mkdir(tdir, 0700);
	child = fork();
	if (child == 0)
		_exit(0);
	CU_ASSERT_FATAL(child > 0);
	waitpid(child, NULL, 0);
	snprintf(dead, sizeof(dead), "%s/airlock-kube-%ld-AbCdEf", tdir,
	         (long)child);
	snprintf(live, sizeof(live), "%s/airlock-kube-%ld-GhIjKl", tdir,
	         (long)getppid());
	snprintf(other, sizeof(other), "%s/airlock-kube-notapid", tdir);
	f = fopen(dead, "w");
	if (f != NULL)
		fclose(f);
	f = fopen(live, "w");
	if (f != NULL)
		fclose(f);
	f = fopen(other, "w");
	if (f != NULL)
		fclose(f);
	certd = b64_file("cli.pem");
	keyd = b64_file("cli.key");
	snprintf(ux, sizeof(ux),
	         "    client-certificate-data: %s\n"
	         "    client-key-data: %s\n",
	         certd != NULL ? certd : "", keyd != NULL ? keyd : "");
	kubeconfig(cfg, sizeof(cfg), "stale.yaml", "https://127.0.0.1:1", "",
	           ux);
	setenv("TMPDIR", tdir, 1);
	setenv("AIRLOCK_KUBE_NO_MEMFD", "1", 1);
	CU_ASSERT_EQUAL(new_client(&k, cfg), 0);
	unsetenv("AIRLOCK_KUBE_NO_MEMFD");
	CU_ASSERT_NOT_EQUAL(access(dead, F_OK), 0);
	CU_ASSERT_EQUAL(access(live, F_OK), 0);
	CU_ASSERT_EQUAL(access(other, F_OK), 0);
	/* the live one, the other name and this client's two */
	CU_ASSERT_EQUAL(private_files(tdir, &priv), 4);
	al_kube_free(k);
	CU_ASSERT_EQUAL(private_files(tdir, &priv), 2);
	if (save_tmp != NULL)
		setenv("TMPDIR", save_tmp, 1);
	else
		unsetenv("TMPDIR");
	free(save_tmp);
	free(certd);
	free(keyd);
}

/* ---- API -------------------------------------------------------------- */

/* create and replace are compare-and-swap: a 409 comes back at once as
 * AL_EEXIST (never retried), as leader election needs. */
static void test_kube__create_and_replace_do_not_retry_conflicts(void)
{
	char cfg[4096];
	srv s;
	al_kube *k = NULL;
	json_t *cm = NULL, *got = NULL, *stale = NULL;
	al_deadline dl = al_deadline_in(20000);
	const char *path = "/api/v1/namespaces/default/configmaps/cas";

	CU_ASSERT_EQUAL_FATAL(srv_start(&s, NULL), 0);
	kubeconfig(cfg, sizeof(cfg), "cas.yaml", s.url, "", "    {}\n");
	CU_ASSERT_EQUAL(new_client(&k, cfg), 0);
	if (k == NULL)
		goto out;
	cm = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s}}", "apiVersion", "v1",
	               "kind", "ConfigMap", "metadata", "name", "cas",
	               "namespace", "default", "data", "a", "1");
	CU_ASSERT_EQUAL(al_kube_create(k, cm, &got, dl), 0);
	CU_ASSERT_EQUAL(al_kube_create(k, cm, NULL, dl), AL_EEXIST);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "409"));
	CU_ASSERT_EQUAL(count_requests(&s, "POST",
	                               "/api/v1/namespaces/default/configmaps"),
	                2);
	/* replace with the current resourceVersion: accepted */
	stale = json_deep_copy(got);
	json_object_set_new(json_object_get(got, "data"), "a",
	                    json_string("2"));
	CU_ASSERT_EQUAL(al_kube_replace(k, got, NULL, dl), 0);
	/* with the old one: a conflict, once */
	CU_ASSERT_EQUAL(al_kube_replace(k, stale, NULL, dl), AL_EEXIST);
	CU_ASSERT_EQUAL(count_requests(&s, "PUT", path), 2);
	json_decref(got);
	got = NULL;
	CU_ASSERT_EQUAL(al_kube_get(k, "v1", "ConfigMap", "default", "cas",
	                            &got, dl),
	                0);
	CU_ASSERT_STRING_EQUAL(
	    al_json_str(json_object_get(got, "data"), "a") != NULL
	        ? al_json_str(json_object_get(got, "data"), "a")
	        : "",
	    "2");
out:
	json_decref(cm);
	json_decref(got);
	json_decref(stale);
	al_kube_free(k);
	srv_stop(&s);
}

static void test_kube__discovery_is_cached(void)
{
	char cfg[4096];
	srv s;
	al_kube *k = NULL;
	al_kube_resource r;
	json_t *crd = NULL;
	al_deadline dl = al_deadline_in(20000);

	memset(&r, 0, sizeof(r));
	CU_ASSERT_EQUAL_FATAL(srv_start(&s, NULL), 0);
	kubeconfig(cfg, sizeof(cfg), "disc.yaml", s.url, "", "    {}\n");
	CU_ASSERT_EQUAL(new_client(&k, cfg), 0);
	if (k == NULL)
		goto out;
	CU_ASSERT_EQUAL(al_kube_discover(k, "apps/v1", "Deployment", &r, dl),
	                0);
	CU_ASSERT_STRING_EQUAL(r.plural, "deployments");
	CU_ASSERT_STRING_EQUAL(r.group_version, "apps/v1");
	CU_ASSERT_EQUAL(r.namespaced, 1);
	CU_ASSERT_EQUAL(r.has_status, 1);
	al_kube_resource_clear(&r);
	CU_ASSERT_EQUAL(al_kube_discover(k, "apps/v1", "DaemonSet", &r, dl), 0);
	al_kube_resource_clear(&r);
	CU_ASSERT_EQUAL(al_kube_discover(k, "v1", "Namespace", &r, dl), 0);
	CU_ASSERT_EQUAL(r.namespaced, 0);
	al_kube_resource_clear(&r);
	CU_ASSERT_EQUAL(al_kube_discover(k, "v1", "ConfigMap", &r, dl), 0);
	CU_ASSERT_EQUAL(r.has_status, 0);
	al_kube_resource_clear(&r);
	CU_ASSERT_EQUAL(count_requests(&s, "GET", "/apis/apps/v1"), 1);
	CU_ASSERT_EQUAL(count_requests(&s, "GET", "/api/v1"), 1);
	/* a kind missing from a cached group-version: asked again, once */
	CU_ASSERT_EQUAL(al_kube_discover(k, "apps/v1", "StatefulSet", &r, dl),
	                AL_ENOTFOUND);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "StatefulSet"));
	CU_ASSERT_EQUAL(count_requests(&s, "GET", "/apis/apps/v1"), 2);
	/* an unknown group-version */
	CU_ASSERT_EQUAL(al_kube_discover(k, "nope.io/v9", "X", &r, dl),
	                AL_ENOTFOUND);
	/* a CRD applied later defines a kind in a new group */
	crd = json_loads(
	    "{\"apiVersion\":\"apiextensions.k8s.io/v1\","
	    "\"kind\":\"CustomResourceDefinition\","
	    "\"metadata\":{\"name\":\"widgets.example.io\"},"
	    "\"spec\":{\"group\":\"example.io\",\"scope\":\"Namespaced\","
	    "\"names\":{\"kind\":\"Widget\",\"plural\":\"widgets\"},"
	    "\"versions\":[{\"name\":\"v1\",\"served\":true,\"storage\":true,"
	    "\"subresources\":{\"status\":{}}}]}}",
	    0, NULL);
	CU_ASSERT_EQUAL(al_kube_apply(k, crd, NULL, dl), 0);
	CU_ASSERT_EQUAL(al_kube_discover(k, "example.io/v1", "Widget", &r, dl),
	                0);
	CU_ASSERT_EQUAL(r.has_status, 1);
	al_kube_resource_clear(&r);
out:
	json_decref(crd);
	al_kube_free(k);
	srv_stop(&s);
}

static void test_kube__apply_creates_then_updates(void)
{
	char cfg[4096];
	srv s;
	al_kube *k = NULL;
	json_t *cm = NULL, *r1 = NULL, *r2 = NULL, *got = NULL, *list = NULL;
	al_deadline dl = al_deadline_in(20000);
	char rv1[32] = "";

	CU_ASSERT_EQUAL_FATAL(srv_start(&s, NULL), 0);
	kubeconfig(cfg, sizeof(cfg), "apply.yaml", s.url, "", "    {}\n");
	CU_ASSERT_EQUAL(new_client(&k, cfg), 0);
	if (k == NULL)
		goto out;
	cm = configmap("cm1", "one");
	CU_ASSERT_EQUAL(al_kube_apply(k, cm, &r1, dl), 0);
	CU_ASSERT_PTR_NOT_NULL(rv_of(r1));
	if (rv_of(r1) != NULL)
		snprintf(rv1, sizeof(rv1), "%s", rv_of(r1));
	json_decref(cm);
	cm = configmap("cm1", "two");
	CU_ASSERT_EQUAL(al_kube_apply(k, cm, &r2, dl), 0);
	CU_ASSERT_PTR_NOT_NULL(rv_of(r2));
	if (rv_of(r2) != NULL)
		CU_ASSERT_STRING_NOT_EQUAL(rv_of(r2), rv1);
	CU_ASSERT_EQUAL(
	    al_kube_get(k, "v1", "ConfigMap", "default", "cm1", &got, dl), 0);
	CU_ASSERT_STRING_EQUAL(
	    al_json_str(json_object_get(got, "data"), "value"), "two");
	/* the field manager and the apply content type reached the server */
	{
		json_t *log = control(&s, "GET", "/_control/log", NULL), *e;
		size_t i;
		int seen = 0;

		json_array_foreach(json_object_get(log, "requests"), i, e)
		{
			const char *m = al_json_str(e, "method");

			if (m == NULL || strcmp(m, "PATCH") != 0)
				continue;
			seen++;
			CU_ASSERT_STRING_EQUAL(al_json_str(e, "field_manager"),
			                       "airlock");
			CU_ASSERT_STRING_EQUAL(al_json_str(e, "content_type"),
			                       "application/apply-patch+yaml");
		}
		CU_ASSERT_EQUAL(seen, 2);
		json_decref(log);
	}
	/* get of a missing object */
	json_decref(got);
	got = NULL;
	CU_ASSERT_EQUAL(
	    al_kube_get(k, "v1", "ConfigMap", "default", "nope", &got, dl),
	    AL_ENOTFOUND);
	CU_ASSERT_PTR_NULL(got);
	/* list with a label selector */
	json_decref(cm);
	cm = configmap("cm2", "x");
	json_object_set_new(
	    json_object_get(json_object_get(cm, "metadata"), "labels"), "app",
	    json_string("other"));
	CU_ASSERT_EQUAL(al_kube_apply(k, cm, NULL, dl), 0);
	CU_ASSERT_EQUAL(al_kube_list(k, "v1", "ConfigMap", "default",
	                             "app=airlock", &list, dl),
	                0);
	CU_ASSERT_EQUAL(json_array_size(json_object_get(list, "items")), 1);
	json_decref(list);
	list = NULL;
	CU_ASSERT_EQUAL(
	    al_kube_list(k, "v1", "ConfigMap", NULL, NULL, &list, dl), 0);
	CU_ASSERT_EQUAL(json_array_size(json_object_get(list, "items")), 2);
	/* a namespaced object in a namespace that does not exist */
	json_object_set_new(json_object_get(cm, "metadata"), "namespace",
	                    json_string("missing-ns"));
	CU_ASSERT_EQUAL(al_kube_apply(k, cm, NULL, dl), AL_ENOTFOUND);
	/* an object without a name */
	json_object_del(json_object_get(cm, "metadata"), "name");
	CU_ASSERT_EQUAL(al_kube_apply(k, cm, NULL, dl), AL_EINVAL);
out:
	json_decref(cm);
	json_decref(r1);
	json_decref(r2);
	json_decref(got);
	json_decref(list);
	al_kube_free(k);
	srv_stop(&s);
}

static void test_kube__status_apply(void)
{
	char cfg[4096];
	srv s;
	al_kube *k = NULL;
	json_t *cv = NULL, *st = NULL, *got = NULL, *cm = NULL;
	al_deadline dl = al_deadline_in(20000);

	CU_ASSERT_EQUAL_FATAL(srv_start(&s, NULL), 0);
	kubeconfig(cfg, sizeof(cfg), "status.yaml", s.url, "", "    {}\n");
	CU_ASSERT_EQUAL(new_client(&k, cfg), 0);
	if (k == NULL)
		goto out;
	cv = json_loads("{\"apiVersion\":\"config.openshift.io/v1\","
	                "\"kind\":\"ClusterVersion\","
	                "\"metadata\":{\"name\":\"version\"},"
	                "\"spec\":{\"channel\":\"stable-4.16\"}}",
	                0, NULL);
	st = json_loads("{\"apiVersion\":\"config.openshift.io/v1\","
	                "\"kind\":\"ClusterVersion\","
	                "\"metadata\":{\"name\":\"version\"},"
	                "\"status\":{\"desired\":{\"version\":\"4.16.1\"}}}",
	                0, NULL);
	CU_ASSERT_EQUAL(al_kube_apply(k, cv, NULL, dl), 0);
	CU_ASSERT_EQUAL(al_kube_apply_status(k, st, NULL, dl), 0);
	CU_ASSERT_EQUAL(count_requests(&s, "PATCH",
	                               "/apis/config.openshift.io/v1/"
	                               "clusterversions/version/status"),
	                1);
	CU_ASSERT_EQUAL(al_kube_get(k, "config.openshift.io/v1",
	                            "ClusterVersion", NULL, "version", &got,
	                            dl),
	                0);
	CU_ASSERT_STRING_EQUAL(
	    al_json_str(
	        json_object_get(json_object_get(got, "status"), "desired"),
	        "version"),
	    "4.16.1");
	CU_ASSERT_STRING_EQUAL(
	    al_json_str(json_object_get(got, "spec"), "channel"),
	    "stable-4.16");
	/* a kind without a status subresource */
	cm = configmap("nostatus", "x");
	CU_ASSERT_EQUAL(al_kube_apply_status(k, cm, NULL, dl), AL_EUNSUPPORTED);
out:
	json_decref(cv);
	json_decref(st);
	json_decref(got);
	json_decref(cm);
	al_kube_free(k);
	srv_stop(&s);
}

static void test_kube__cluster_operator_reports_version(void)
{
	char cfg[4096];
	srv s;
	al_kube *k = NULL;
	json_t *co = NULL, *got = NULL;
	al_deadline dl = al_deadline_in(20000);
	const char *ver = NULL;
	int i;

	CU_ASSERT_EQUAL_FATAL(srv_start(&s, NULL), 0);
	kubeconfig(cfg, sizeof(cfg), "co.yaml", s.url, "", "    {}\n");
	CU_ASSERT_EQUAL(new_client(&k, cfg), 0);
	if (k == NULL)
		goto out;
	co = json_loads("{\"apiVersion\":\"config.openshift.io/v1\","
	                "\"kind\":\"ClusterOperator\","
	                "\"metadata\":{\"name\":\"etcd\"},"
	                "\"status\":{\"versions\":[{\"name\":\"operator\","
	                "\"version\":\"4.16.1\"}]}}",
	                0, NULL);
	CU_ASSERT_EQUAL(al_kube_apply(k, co, NULL, dl), 0);
	for (i = 0; i < 100 && ver == NULL; i++) {
		json_decref(got);
		got = NULL;
		if (al_kube_get(k, "config.openshift.io/v1", "ClusterOperator",
		                NULL, "etcd", &got, dl) != 0)
			break;
		ver = al_json_str(
		    json_array_get(
		        json_object_get(json_object_get(got, "status"),
		                        "versions"),
		        0),
		    "version");
		if (ver == NULL)
			usleep(50 * 1000);
	}
	CU_ASSERT_PTR_NOT_NULL(ver);
	if (ver != NULL)
		CU_ASSERT_STRING_EQUAL(ver, "4.16.1");
out:
	json_decref(co);
	json_decref(got);
	al_kube_free(k);
	srv_stop(&s);
}

static void test_kube__retries_409_429_500_then_success(void)
{
	static const char *const faults[] = {
	    "{\"path\":\"/configmaps/r409$\",\"method\":\"PATCH\","
	    "\"status\":409,\"times\":2}",
	    "{\"path\":\"/configmaps/r429$\",\"method\":\"PATCH\","
	    "\"status\":429,\"retry_after\":1,\"times\":1}",
	    "{\"path\":\"/configmaps/r500$\",\"method\":\"PATCH\","
	    "\"status\":500,\"times\":3}",
	};
	static const char *const names[] = {"r409", "r429", "r500"};
	static const int expect[] = {3, 2, 4};
	char cfg[4096], path[256];
	srv s;
	al_kube *k = NULL;
	json_t *cm = NULL;
	size_t i;

	CU_ASSERT_EQUAL_FATAL(srv_start(&s, NULL), 0);
	kubeconfig(cfg, sizeof(cfg), "retry.yaml", s.url, "", "    {}\n");
	CU_ASSERT_EQUAL(new_client(&k, cfg), 0);
	for (i = 0; k != NULL && i < 3; i++) {
		uint64_t t0 = al_clock_now_ms();

		CU_ASSERT_EQUAL(add_fault(&s, faults[i]), 0);
		cm = configmap(names[i], "v");
		CU_ASSERT_EQUAL(
		    al_kube_apply(k, cm, NULL, al_deadline_in(20000)), 0);
		json_decref(cm);
		snprintf(path, sizeof(path),
		         "/api/v1/namespaces/default/configmaps/%s", names[i]);
		CU_ASSERT_EQUAL(count_requests(&s, "PATCH", path), expect[i]);
		if (i == 1) /* Retry-After: 1 was honoured */
			CU_ASSERT(al_clock_now_ms() - t0 >= 900);
	}
	/* without a deadline: bounded by max_retries */
	if (k != NULL) {
		al_kube_opts o = AL_KUBE_OPTS_INIT;

		al_kube_free(k);
		k = NULL;
		o.kubeconfig = cfg;
		o.http.max_retries = 2;
		o.http.backoff_base_ms = 10;
		o.http.backoff_max_ms = 20;
		CU_ASSERT_EQUAL(al_kube_new(&k, &o), 0);
		CU_ASSERT_EQUAL(add_fault(&s,
		                          "{\"path\":\"/configmaps/always$\","
		                          "\"status\":503}"),
		                0);
		cm = configmap("always", "v");
		CU_ASSERT_EQUAL(al_kube_apply(k, cm, NULL, AL_DEADLINE_NONE),
		                AL_EPROTO);
		CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "503"));
		json_decref(cm);
		CU_ASSERT_EQUAL(
		    count_requests(
		        &s, "PATCH",
		        "/api/v1/namespaces/default/configmaps/always"),
		    3);
		/* a 4xx that is not retryable */
		CU_ASSERT_EQUAL(add_fault(&s, "{\"path\":\"/configmaps/bad$\","
		                              "\"status\":422}"),
		                0);
		cm = configmap("bad", "v");
		CU_ASSERT_EQUAL(
		    al_kube_apply(k, cm, NULL, al_deadline_in(10000)),
		    AL_EPROTO);
		json_decref(cm);
		CU_ASSERT_EQUAL(
		    count_requests(&s, "PATCH",
		                   "/api/v1/namespaces/default/configmaps/bad"),
		    1);
	}
	al_kube_free(k);
	srv_stop(&s);
}

static void test_kube__hang_bounded_by_deadline(void)
{
	char cfg[4096];
	srv s;
	al_kube *k = NULL;
	json_t *got = NULL, *cm = NULL;
	uint64_t t0;

	CU_ASSERT_EQUAL_FATAL(srv_start(&s, NULL), 0);
	kubeconfig(cfg, sizeof(cfg), "hang.yaml", s.url, "", "    {}\n");
	CU_ASSERT_EQUAL(new_client(&k, cfg), 0);
	if (k != NULL) {
		CU_ASSERT_EQUAL(add_fault(&s, "{\"path\":\"/configmaps/\","
		                              "\"hang\":true}"),
		                0);
		t0 = al_clock_now_ms();
		CU_ASSERT_EQUAL(al_kube_get(k, "v1", "ConfigMap", "default",
		                            "x", &got, al_deadline_in(1500)),
		                AL_ETIMEOUT);
		CU_ASSERT(al_clock_now_ms() - t0 >= 1400);
		CU_ASSERT(al_clock_now_ms() - t0 < 4000);
		/* connection resets are retried */
		json_decref(
		    control(&s, "POST", "/_control/faults/clear", "{}"));
		CU_ASSERT_EQUAL(add_fault(&s, "{\"path\":\"/configmaps/rst$\","
		                              "\"reset\":true,\"times\":2}"),
		                0);
		cm = configmap("rst", "v");
		CU_ASSERT_EQUAL(
		    al_kube_apply(k, cm, NULL, al_deadline_in(10000)), 0);
		CU_ASSERT_EQUAL(
		    count_requests(&s, "PATCH",
		                   "/api/v1/namespaces/default/configmaps/rst"),
		    3);
	}
	json_decref(got);
	json_decref(cm);
	al_kube_free(k);
	srv_stop(&s);
}

static void test_kube__delete(void)
{
	char cfg[4096];
	srv s;
	al_kube *k = NULL;
	json_t *cm = NULL, *got = NULL;
	al_deadline dl = al_deadline_in(20000);

	CU_ASSERT_EQUAL_FATAL(srv_start(&s, NULL), 0);
	kubeconfig(cfg, sizeof(cfg), "delete.yaml", s.url, "", "    {}\n");
	CU_ASSERT_EQUAL(new_client(&k, cfg), 0);
	if (k != NULL) {
		cm = configmap("doomed", "v");
		CU_ASSERT_EQUAL(al_kube_apply(k, cm, NULL, dl), 0);
		CU_ASSERT_EQUAL(al_kube_delete(k, "v1", "ConfigMap", "default",
		                               "doomed", dl),
		                0);
		CU_ASSERT_EQUAL(al_kube_get(k, "v1", "ConfigMap", "default",
		                            "doomed", &got, dl),
		                AL_ENOTFOUND);
		CU_ASSERT_EQUAL(al_kube_delete(k, "v1", "ConfigMap", "default",
		                               "doomed", dl),
		                AL_ENOTFOUND);
		CU_ASSERT_EQUAL(
		    al_kube_delete(k, "v1", "ConfigMap", "default", "../x", dl),
		    AL_EINVAL);
	}
	json_decref(cm);
	json_decref(got);
	al_kube_free(k);
	srv_stop(&s);
}

static void *cancel_later(void *arg)
{
	usleep(400 * 1000);
	al_cancel_set(arg);
	return NULL;
}

static void test_kube__cancel_stops_retries(void)
{
	char cfg[4096];
	srv s;
	al_kube_opts o = AL_KUBE_OPTS_INIT;
	al_kube *k = NULL;
	al_cancel *c = NULL;
	json_t *cm = NULL;
	pthread_t th;
	uint64_t t0;

	CU_ASSERT_EQUAL_FATAL(srv_start(&s, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(al_cancel_new(&c), 0);
	kubeconfig(cfg, sizeof(cfg), "cancel.yaml", s.url, "", "    {}\n");
	o.kubeconfig = cfg;
	o.http.cancel = c;
	o.http.backoff_base_ms = 200;
	o.http.backoff_max_ms = 1000;
	CU_ASSERT_EQUAL(al_kube_new(&k, &o), 0);
	CU_ASSERT_EQUAL(add_fault(&s, "{\"path\":\"/configmaps/\","
	                              "\"status\":503}"),
	                0);
	cm = configmap("never", "v");
	if (k != NULL && pthread_create(&th, NULL, cancel_later, c) == 0) {
		t0 = al_clock_now_ms();
		CU_ASSERT_EQUAL(
		    al_kube_apply(k, cm, NULL, al_deadline_in(30000)),
		    AL_ECANCELED);
		CU_ASSERT(al_clock_now_ms() - t0 < 3000);
		pthread_join(th, NULL);
	}
	json_decref(cm);
	al_kube_free(k);
	al_cancel_free(c);
	srv_stop(&s);
}

struct worker {
	al_kube *k;
	int id;
	int failures;
};

static void *apply_worker(void *arg)
{
	struct worker *w = arg;
	char name[64];
	int i;

	for (i = 0; i < 10; i++) {
		json_t *cm;

		snprintf(name, sizeof(name), "t%d-%d", w->id, i);
		cm = configmap(name, name);
		if (cm == NULL ||
		    al_kube_apply(w->k, cm, NULL, al_deadline_in(30000)) != 0)
			w->failures++;
		json_decref(cm);
	}
	return NULL;
}

static void test_kube__threads_apply_concurrently(void)
{
	char cfg[4096];
	srv s;
	al_kube *k = NULL;
	struct worker w[4];
	pthread_t th[4];
	json_t *list = NULL;
	int i, started[4] = {0, 0, 0, 0};

	CU_ASSERT_EQUAL_FATAL(srv_start(&s, NULL), 0);
	kubeconfig(cfg, sizeof(cfg), "threads.yaml", s.url, "", "    {}\n");
	CU_ASSERT_EQUAL(new_client(&k, cfg), 0);
	if (k != NULL) {
		/* some 500s on the way make the retry path concurrent too */
		CU_ASSERT_EQUAL(add_fault(&s, "{\"path\":\"/configmaps/t\","
		                              "\"status\":500,\"times\":6}"),
		                0);
		for (i = 0; i < 4; i++) {
			w[i].k = k;
			w[i].id = i;
			w[i].failures = 0;
			started[i] = pthread_create(&th[i], NULL, apply_worker,
			                            &w[i]) == 0;
			CU_ASSERT(started[i]);
		}
		for (i = 0; i < 4; i++) {
			if (started[i]) {
				pthread_join(th[i], NULL);
				CU_ASSERT_EQUAL(w[i].failures, 0);
			}
		}
		CU_ASSERT_EQUAL(al_kube_list(k, "v1", "ConfigMap", "default",
		                             "app=airlock", &list,
		                             al_deadline_in(10000)),
		                0);
		CU_ASSERT_EQUAL(json_array_size(json_object_get(list, "items")),
		                40);
	}
	json_decref(list);
	al_kube_free(k);
	srv_stop(&s);
}

int main(void)
{
	static CU_TestInfo tests[] = {
	    {"test_kube__kubeconfig_token", test_kube__kubeconfig_token},
	    {"test_kube__kubeconfig_token_file_relative",
	     test_kube__kubeconfig_token_file_relative},
	    {"test_kube__wrong_token_is_eauth",
	     test_kube__wrong_token_is_eauth},
	    {"test_kube__rotated_token_file_is_reread",
	     test_kube__rotated_token_file_is_reread},
	    {"test_kube__token_never_sent_over_http",
	     test_kube__token_never_sent_over_http},
	    {"test_kube__context_selection", test_kube__context_selection},
	    {"test_kube__missing_kubeconfig", test_kube__missing_kubeconfig},
	    {"test_kube__malformed_yaml_names_position",
	     test_kube__malformed_yaml_names_position},
	    {"test_kube__incluster_config", test_kube__incluster_config},
	    {"test_kube__tls_with_ca_data", test_kube__tls_with_ca_data},
	    {"test_kube__stale_private_files_are_removed",
	     test_kube__stale_private_files_are_removed},
	    {"test_kube__client_certificate_data",
	     test_kube__client_certificate_data},
	    {"test_kube__discovery_is_cached", test_kube__discovery_is_cached},
	    {"test_kube__create_and_replace_do_not_retry_conflicts",
	     test_kube__create_and_replace_do_not_retry_conflicts},
	    {"test_kube__apply_creates_then_updates",
	     test_kube__apply_creates_then_updates},
	    {"test_kube__status_apply", test_kube__status_apply},
	    {"test_kube__cluster_operator_reports_version",
	     test_kube__cluster_operator_reports_version},
	    {"test_kube__retries_409_429_500_then_success",
	     test_kube__retries_409_429_500_then_success},
	    {"test_kube__hang_bounded_by_deadline",
	     test_kube__hang_bounded_by_deadline},
	    {"test_kube__delete", test_kube__delete},
	    {"test_kube__cancel_stops_retries",
	     test_kube__cancel_stops_retries},
	    {"test_kube__threads_apply_concurrently",
	     test_kube__threads_apply_concurrently},
	    CU_TEST_INFO_NULL,
	};
	int rc;

	al_http_global_init();
	rc = al_test_run("kube", tests);
	stop_all();
	al_http_global_cleanup();
	return rc;
}
