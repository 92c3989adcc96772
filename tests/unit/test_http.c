/* test_http.c: CUnit suite for the http module against
 * tests/tools/faultserver.py on loopback. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/sha.h>

#include "airlock/buf.h"
#include "airlock/clock.h"
#include "airlock/error.h"
#include "airlock/http.h"
#include "airlock/log.h"
#include "al_test.h"
#include "clock_int.h"
#include "http_int.h"

/* Server 0: the main one; 1: another origin (port), also used as a proxy;
 * 2: HTTPS with a self-signed certificate (cert_path). */
#define NSRV 3
static pid_t srv_pid[NSRV] = {-1, -1, -1};
static int srv_port[NSRV];
static int srv_failed[NSRV];
static char cert_path[4096];
static char key_path[4096];

static void stop_servers(void)
{
	int i;

	for (i = 0; i < NSRV; i++) {
		if (srv_pid[i] > 0) {
			kill(srv_pid[i], SIGTERM);
			waitpid(srv_pid[i], NULL, 0);
			srv_pid[i] = -1;
		}
	}
}

/* A self-signed EC certificate for 127.0.0.1 (openssl command line). */
static int make_cert(void)
{
	char cmd[10000];
	int n;

	n = snprintf(cert_path, sizeof(cert_path), "%s/cert.pem",
	             al_test_tmpdir());
	if (n < 0 || (size_t)n >= sizeof(cert_path))
		return -1;
	n = snprintf(key_path, sizeof(key_path), "%s/key.pem",
	             al_test_tmpdir());
	if (n < 0 || (size_t)n >= sizeof(key_path))
		return -1;
	n = snprintf(cmd, sizeof(cmd),
	             "openssl req -x509 -newkey ec -pkeyopt "
	             "ec_paramgen_curve:prime256v1 -nodes "
	             "-keyout '%s' -out '%s' -days 2 -subj /CN=127.0.0.1 "
	             "-addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1",
	             key_path, cert_path);
	if (n < 0 || (size_t)n >= sizeof(cmd))
		return -1;
	return system(cmd) == 0 ? 0 : -1;
}

static int start_server(int idx)
{
	char script[4096], portfile[4096], logfile[4096], line[512];
	int n, i;
	pid_t pid;
	FILE *lf;

	if (srv_pid[idx] > 0)
		return 0;
	if (srv_failed[idx])
		return -1;
	srv_failed[idx] = 1;
	n = snprintf(script, sizeof(script), "%s/tests/tools/faultserver.py",
	             al_test_source_dir());
	if (n < 0 || (size_t)n >= sizeof(script))
		return -1;
	n = snprintf(portfile, sizeof(portfile), "%s/port-%d", al_test_tmpdir(),
	             idx);
	if (n < 0 || (size_t)n >= sizeof(portfile))
		return -1;
	unlink(portfile);
	n = snprintf(logfile, sizeof(logfile), "%s/faultserver-%d.log",
	             al_test_tmpdir(), idx);
	if (n < 0 || (size_t)n >= sizeof(logfile))
		return -1;
	if (idx == 2 && make_cert() != 0) {
		fprintf(stderr,
		        "cannot make a test certificate with openssl\n");
		return -1;
	}
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open("/dev/null", O_RDWR);
		int log = open(logfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		/* Die with the test (even on a crash, when atexit does not
		 * run), and do not hold ctest's output pipe open. */
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
		if (idx == 2)
			execlp("python3", "python3", script, "--port-file",
			       portfile, "--tls-cert", cert_path, "--tls-key",
			       key_path, (char *)NULL);
		else
			execlp("python3", "python3", script, "--port-file",
			       portfile, (char *)NULL);
		_exit(127);
	}
	srv_pid[idx] = pid;
	{
		static int registered;

		if (!registered)
			atexit(stop_servers);
		registered = 1;
	}
	for (i = 0; i < 200; i++) {
		FILE *f = fopen(portfile, "r");

		if (f != NULL) {
			int ok = fscanf(f, "%d", &srv_port[idx]) == 1;

			fclose(f);
			if (ok) {
				srv_failed[idx] = 0;
				return 0;
			}
		}
		if (waitpid(pid, NULL, WNOHANG) == pid) {
			srv_pid[idx] = -1;
			break;
		}
		usleep(50 * 1000);
	}
	fprintf(stderr, "faultserver did not start (%s)\n", script);
	lf = fopen(logfile, "r");
	while (lf != NULL && fgets(line, sizeof(line), lf) != NULL)
		fputs(line, stderr);
	if (lf != NULL)
		fclose(lf);
	return -1;
}

/* "http(s)://127.0.0.1:<port>/<path>" of server idx (started on demand). */
static const char *url_of(int idx, const char *path)
{
	static char url[4][2048];
	static int slot;
	char *u = url[slot++ % 4];
	int n;

	if (start_server(idx) != 0)
		return "http://127.0.0.1:1/server-did-not-start";
	n = snprintf(u, sizeof(url[0]), "%s://127.0.0.1:%d%s",
	             idx == 2 ? "https" : "http", srv_port[idx], path);
	if (n < 0 || (size_t)n >= sizeof(url[0]))
		return "http://127.0.0.1:1/url-too-long";
	return u;
}

static const char *url(const char *path)
{
	return url_of(0, path);
}

static al_http *client(unsigned retries, uint64_t request_timeout_ms)
{
	al_http_opts o = AL_HTTP_OPTS_INIT;
	al_http *h = NULL;

	o.max_retries = retries;
	o.request_timeout_ms = request_timeout_ms;
	o.connect_timeout_ms = 2000;
	o.low_speed_time_ms = 1000;
	o.backoff_base_ms = 20;
	o.backoff_max_ms = 200;
	if (al_http_new(&h, &o) != 0)
		return NULL;
	return h;
}

/* snprintf that fails the current test on truncation. */
static void sfmt(char *buf, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void sfmt(char *buf, size_t cap, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, cap, fmt, ap);
	va_end(ap);
	CU_ASSERT(n >= 0 && (size_t)n < cap);
}

static int pattern_ok(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (p[i] != (uint8_t)(i % 251))
			return 0;
	}
	return 1;
}

/* A sink that checks the pattern as bytes arrive and counts resets. */
struct check_sink {
	uint64_t n;
	int bad;
	int resets;
	int writes;
};

static int check_write(void *ud, const uint8_t *p, size_t n)
{
	struct check_sink *s = ud;
	size_t i;

	for (i = 0; i < n; i++) {
		if (p[i] != (uint8_t)((s->n + i) % 251))
			s->bad = 1;
	}
	s->n += n;
	s->writes++;
	return 0;
}

static int check_reset(void *ud)
{
	struct check_sink *s = ud;

	s->n = 0;
	s->resets++;
	return 0;
}

/* A reader over memory, optionally without rewind. */
struct mem_reader {
	const uint8_t *p;
	size_t len;
	size_t pos;
	int rewinds;
};

static int mem_read(void *ud, uint8_t *p, size_t cap, size_t *got)
{
	struct mem_reader *r = ud;
	size_t n = r->len - r->pos;

	if (n > cap)
		n = cap;
	memcpy(p, r->p + r->pos, n);
	r->pos += n;
	*got = n;
	return 0;
}

static int mem_rewind(void *ud)
{
	struct mem_reader *r = ud;

	r->pos = 0;
	r->rewinds++;
	return 0;
}

static void test_http__get_into_body_out(void)
{
	al_http *h = client(0, 5000);
	al_buf body = AL_BUF_INIT(1 << 20);
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;
	int rc;

	CU_ASSERT_PTR_NOT_NULL(h);
	req.url = url("/ok/1000");
	req.body_out = &body;
	rc = al_http_do(h, &req, &resp);
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(resp.status, 200);
	CU_ASSERT_EQUAL(body.len, 1000);
	CU_ASSERT_EQUAL(resp.body_bytes, 1000);
	CU_ASSERT_EQUAL(resp.attempts, 1);
	CU_ASSERT(body.ptr != NULL && pattern_ok(body.ptr, body.len));
	CU_ASSERT_STRING_EQUAL(
	    al_http_resp_header(&resp, "content-length")
	        ? al_http_resp_header(&resp, "content-length")
	        : "",
	    "1000");
	CU_ASSERT_STRING_EQUAL(resp.effective_url ? resp.effective_url : "",
	                       url("/ok/1000"));
	/* A second request on the same client works (connection reuse). */
	al_buf_reset(&body);
	req.url = url("/ok/10");
	rc = al_http_do(h, &req, &resp);
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(body.len, 10);
	al_http_resp_clear(&resp);
	al_buf_free(&body);
	al_http_free(h);
}

static void test_http__body_out_limit(void)
{
	al_http *h = client(0, 5000);
	al_buf body = AL_BUF_INIT(100);
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;
	int rc;

	req.url = url("/ok/1000");
	req.body_out = &body;
	rc = al_http_do(h, &req, &resp);
	CU_ASSERT_EQUAL(rc, AL_ELIMIT);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "/ok/1000"));
	CU_ASSERT(body.len <= 100);
	al_http_resp_clear(&resp);
	al_buf_free(&body);
	al_http_free(h);
}

static void test_http__sink_gets_exact_bytes(void)
{
	al_http *h = client(0, 5000);
	struct check_sink s = {0};
	al_writer w = {check_write, check_reset, &s};
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;

	req.url = url("/ok/300000");
	req.sink = &w;
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), 0);
	CU_ASSERT_EQUAL(resp.status, 200);
	CU_ASSERT_EQUAL(s.n, 300000);
	CU_ASSERT_EQUAL(s.bad, 0);
	CU_ASSERT_EQUAL(s.resets, 0);
	CU_ASSERT_EQUAL(resp.body_bytes, 300000);
	al_http_resp_clear(&resp);
	al_http_free(h);
}

static void test_http__404_is_a_status_with_error_body(void)
{
	al_http *h = client(3, 5000);
	struct check_sink s = {0};
	al_writer w = {check_write, check_reset, &s};
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;

	req.url = url("/no/such/thing");
	req.sink = &w;
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), 0);
	CU_ASSERT_EQUAL(resp.status, 404);
	CU_ASSERT_EQUAL(resp.attempts, 1);
	CU_ASSERT_STRING_EQUAL(al_buf_cstr(&resp.error_body), "not found\n");
	CU_ASSERT_EQUAL(s.writes, 0);
	al_http_resp_clear(&resp);
	al_http_free(h);
}

static void test_http__500_twice_then_200(void)
{
	al_http *h = client(4, 5000);
	al_buf body = AL_BUF_INIT(4096);
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;

	req.url = url("/status/500?times=2");
	req.body_out = &body;
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), 0);
	CU_ASSERT_EQUAL(resp.status, 200);
	CU_ASSERT_EQUAL(resp.attempts, 3);
	CU_ASSERT_STRING_EQUAL(al_buf_cstr(&body), "ok\n");
	CU_ASSERT_EQUAL(resp.error_body.len, 0);
	al_http_resp_clear(&resp);
	al_buf_free(&body);
	al_http_free(h);
}

static void test_http__retry_after_is_honoured(void)
{
	al_http_opts o = AL_HTTP_OPTS_INIT;
	al_http *h = NULL;
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;
	uint64_t t0, el;

	o.max_retries = 2;
	o.backoff_base_ms = 10;
	o.backoff_max_ms = 5000;
	CU_ASSERT_EQUAL(al_http_new(&h, &o), 0);
	req.url = url("/retry-after/1?times=1");
	al_clock_use_virtual(1000, 0);
	t0 = al_clock_now_ms();
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), 0);
	el = al_clock_now_ms() - t0;
	CU_ASSERT_EQUAL(resp.status, 200);
	CU_ASSERT_EQUAL(resp.attempts, 2);
	/* on the virtual clock: the Retry-After of 1 s, exactly */
	CU_ASSERT_EQUAL(el, 1000);
	al_http_resp_clear(&resp);
	al_http_free(h);
	al_clock_set_source(NULL);
}

static void test_http__retry_after_capped_by_backoff_max(void)
{
	al_http *h = client(2, 5000); /* backoff_max 200 ms */
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;
	uint64_t t0, el;

	req.url = url("/retry-after/30?times=1&date=1");
	al_clock_use_virtual(1000, 0);
	t0 = al_clock_now_ms();
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), 0);
	el = al_clock_now_ms() - t0;
	CU_ASSERT_EQUAL(resp.status, 200);
	CU_ASSERT_EQUAL(resp.attempts, 2);
	/* on the virtual clock: Retry-After 30 s capped by backoff_max */
	CU_ASSERT(el <= 200);
	al_http_resp_clear(&resp);
	al_http_free(h);
	al_clock_set_source(NULL);
}

static void test_http__retries_exhausted_returns_status(void)
{
	al_http *h = client(2, 5000);
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;

	req.url = url("/status/503");
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), 0);
	CU_ASSERT_EQUAL(resp.status, 503);
	CU_ASSERT_EQUAL(resp.attempts, 3);
	CU_ASSERT_STRING_EQUAL(al_buf_cstr(&resp.error_body), "status 503\n");
	al_http_resp_clear(&resp);
	al_http_free(h);
}

static void test_http__no_retry_option(void)
{
	al_http *h = client(AL_HTTP_NO_RETRY, 5000);
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;

	req.url = url("/status/502");
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), 0);
	CU_ASSERT_EQUAL(resp.status, 502);
	CU_ASSERT_EQUAL(resp.attempts, 1);
	al_http_resp_clear(&resp);
	al_http_free(h);
}

static void test_http__timing_hang_times_out(void)
{
	al_http *h = client(AL_HTTP_NO_RETRY, 500);
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;
	uint64_t t0, el;
	int rc;

	req.url = url("/hang");
	t0 = al_clock_now_ms();
	rc = al_http_do(h, &req, &resp);
	el = al_clock_now_ms() - t0;
	CU_ASSERT_EQUAL(rc, AL_ETIMEOUT);
	CU_ASSERT(el >= 450 && el < AL_TEST_LOADED_MS(2000));
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "/hang"));
	al_http_resp_clear(&resp);
	al_http_free(h);
}

static void test_http__timing_stall_mid_body_aborts(void)
{
	al_http *h =
	    client(AL_HTTP_NO_RETRY, 0); /* only the low-speed limit (1 s) */
	struct check_sink s = {0};
	al_writer w = {check_write, check_reset, &s};
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;
	uint64_t t0, el;
	int rc;

	req.url = url("/stall/1000/10");
	req.sink = &w;
	t0 = al_clock_now_ms();
	rc = al_http_do(h, &req, &resp);
	el = al_clock_now_ms() - t0;
	CU_ASSERT_EQUAL(rc, AL_ETIMEOUT);
	if (!(el >= 900 && el < AL_TEST_LOADED_MS(4000)))
		fprintf(stderr, "stall took %llu ms\n", (unsigned long long)el);
	CU_ASSERT(el >= 900 && el < AL_TEST_LOADED_MS(4000));
	CU_ASSERT_EQUAL(s.n, 10);
	al_http_resp_clear(&resp);
	al_http_free(h);
}

static void test_http__reset_fails_after_retries(void)
{
	al_http *h = client(2, 5000);
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;
	uint64_t t0, el;
	int rc;

	req.url = url("/reset/0");
	al_clock_use_virtual(1000, 0);
	t0 = al_clock_now_ms();
	rc = al_http_do(h, &req, &resp);
	el = al_clock_now_ms() - t0;
	CU_ASSERT_EQUAL(rc, AL_ENET);
	CU_ASSERT_EQUAL(resp.attempts, 3);
	/* on the virtual clock: two backoffs of at most backoff_max */
	CU_ASSERT(el <= 2 * 200);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "/reset/0"));
	al_http_resp_clear(&resp);
	al_http_free(h);
	al_clock_set_source(NULL);
}

static void test_http__connection_refused_is_enet(void)
{
	al_http *h = client(1, 5000);
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;
	int rc;

	/* Port 1 on loopback: nothing listens there. */
	req.url = "http://user:hunter2@127.0.0.1:1/x?token=sekrit";
	rc = al_http_do(h, &req, &resp);
	CU_ASSERT_EQUAL(rc, AL_ENET);
	CU_ASSERT_EQUAL(resp.attempts, 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "127.0.0.1:1/x"));
	CU_ASSERT_PTR_NULL(strstr(al_error_message(), "hunter2"));
	CU_ASSERT_PTR_NULL(strstr(al_error_message(), "sekrit"));
	al_http_resp_clear(&resp);
	al_http_free(h);
}

static void test_http__resumes_flaky_body_with_range(void)
{
	al_http *h = client(3, 5000);
	struct check_sink s = {0};
	al_writer w = {check_write, NULL, &s}; /* no reset: must resume */
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;

	req.url = url("/flaky-body/200000");
	req.sink = &w;
	req.resumable = 1;
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), 0);
	CU_ASSERT_EQUAL(resp.status, 206);
	CU_ASSERT(resp.attempts > 1);
	CU_ASSERT_EQUAL(s.n, 200000);
	CU_ASSERT_EQUAL(s.bad, 0);
	CU_ASSERT_EQUAL(resp.body_bytes, 200000);
	al_http_resp_clear(&resp);
	al_http_free(h);
}

static void test_http__resume_answered_200_resets_sink(void)
{
	al_http *h = client(3, 5000);
	struct check_sink s = {0};
	al_writer w = {check_write, check_reset, &s};
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;

	req.url = url("/flaky-body/100000?norange=1");
	req.sink = &w;
	req.resumable = 1;
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), 0);
	CU_ASSERT_EQUAL(resp.status, 200);
	CU_ASSERT_EQUAL(resp.attempts, 2);
	CU_ASSERT_EQUAL(s.resets, 1);
	CU_ASSERT_EQUAL(s.n, 100000);
	CU_ASSERT_EQUAL(s.bad, 0);
	/* Without reset, a 200 to the range request is an error. */
	memset(&s, 0, sizeof(s));
	w.reset = NULL;
	req.url = url("/flaky-body/60000?norange=1");
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), AL_EPROTO);
	CU_ASSERT_EQUAL(resp.attempts, 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "range"));
	al_http_resp_clear(&resp);
	al_http_free(h);
}

static void test_http__non_resumable_restarts_body_out(void)
{
	al_http *h = client(3, 5000);
	al_buf body = AL_BUF_INIT(1 << 20);
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;

	req.url = url("/flaky-body/50000");
	req.body_out = &body;
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), 0);
	CU_ASSERT_EQUAL(resp.status, 200);
	CU_ASSERT_EQUAL(resp.attempts, 2);
	CU_ASSERT_EQUAL(body.len, 50000);
	CU_ASSERT(body.ptr != NULL && pattern_ok(body.ptr, body.len));
	al_http_resp_clear(&resp);
	al_buf_free(&body);
	al_http_free(h);
}

/* GET path with "Authorization: Bearer secret"; the body echoed back. */
static int get_echo_auth(const char *u, char *out, size_t cap, long *status)
{
	const char *const hdrs[] = {"Authorization: Bearer secret", NULL};
	al_http *h = client(0, 5000);
	al_buf body = AL_BUF_INIT(4096);
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;
	int rc;

	req.url = u;
	req.headers = hdrs;
	req.body_out = &body;
	rc = al_http_do(h, &req, &resp);
	sfmt(out, cap, "%s", al_buf_cstr(&body));
	*status = resp.status;
	al_http_resp_clear(&resp);
	al_buf_free(&body);
	al_http_free(h);
	return rc;
}

static void test_http__redirect_same_origin_keeps_authorization(void)
{
	char got[256];
	long status = 0;

	CU_ASSERT_EQUAL(get_echo_auth(url("/redirect?to=/echo-auth"), got,
	                              sizeof(got), &status),
	                0);
	CU_ASSERT_EQUAL(status, 200);
	CU_ASSERT_STRING_EQUAL(got, "Bearer secret");
	CU_ASSERT_EQUAL(
	    get_echo_auth(url("/echo-auth"), got, sizeof(got), &status), 0);
	CU_ASSERT_STRING_EQUAL(got, "Bearer secret");
}

static void test_http__redirect_elsewhere_drops_authorization(void)
{
	char target[2048], path[2100], got[256];
	long status = 0;

	/* Another port. */
	sfmt(target, sizeof(target), "%s", url_of(1, "/echo-auth"));
	sfmt(path, sizeof(path), "/redirect?to=%s", target);
	CU_ASSERT_EQUAL(get_echo_auth(url(path), got, sizeof(got), &status), 0);
	CU_ASSERT_EQUAL(status, 200);
	CU_ASSERT_STRING_EQUAL(got, "none");
	/* Another host name for the same address. */
	sfmt(path, sizeof(path), "/redirect?to=http://localhost:%d/echo-auth",
	     srv_port[0]);
	CU_ASSERT_EQUAL(get_echo_auth(url(path), got, sizeof(got), &status), 0);
	CU_ASSERT_EQUAL(status, 200);
	CU_ASSERT_STRING_EQUAL(got, "none");
	/* Leaving and coming back does not bring the credentials back. */
	sfmt(path, sizeof(path),
	     "/redirect?to=http://127.0.0.1:%d/redirect%%3Fto%%3D/echo-auth",
	     srv_port[1]);
	CU_ASSERT_EQUAL(get_echo_auth(url(path), got, sizeof(got), &status), 0);
	CU_ASSERT_EQUAL(status, 200);
	CU_ASSERT_STRING_EQUAL(got, "none");
}

static void test_http__redirect_limit_and_no_redirect(void)
{
	al_http *h = client(0, 5000);
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;

	req.url = url("/redirect-n/4"); /* 5 redirects: allowed */
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), 0);
	CU_ASSERT_EQUAL(resp.status, 200);
	CU_ASSERT_EQUAL(resp.attempts, 6);
	CU_ASSERT_PTR_NOT_NULL(resp.effective_url &&
	                       strstr(resp.effective_url, "/ok/16"));
	req.url = url("/redirect-n/5"); /* 6 redirects: refused */
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), AL_EPROTO);
	req.url = url("/redirect-n/5");
	req.no_redirect = 1;
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), 0);
	CU_ASSERT_EQUAL(resp.status, 302);
	CU_ASSERT_STRING_EQUAL(al_http_resp_header(&resp, "location")
	                           ? al_http_resp_header(&resp, "location")
	                           : "",
	                       "/redirect-n/4");
	al_http_resp_clear(&resp);
	al_http_free(h);
}

static void test_http__redirect_303_turns_post_into_get(void)
{
	al_http *h = client(0, 5000);
	al_buf body = AL_BUF_INIT(65536);
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;

	req.method = "POST";
	req.body = (const uint8_t *)"hello";
	req.body_len = 5;
	req.body_out = &body;
	req.url = url("/redirect?code=303&to=/echo");
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), 0);
	CU_ASSERT_EQUAL(resp.status, 200);
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(al_buf_cstr(&body), "\"method\": \"GET\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(al_buf_cstr(&body), "\"body_len\": 0"));
	al_buf_reset(&body);
	req.url = url("/redirect?code=307&to=/echo");
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), 0);
	CU_ASSERT_EQUAL(resp.status, 200);
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(al_buf_cstr(&body), "\"method\": \"POST\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(al_buf_cstr(&body), "\"body_len\": 5"));
	al_http_resp_clear(&resp);
	al_buf_free(&body);
	al_http_free(h);
}

struct canceler {
	al_cancel *c;
	unsigned ms;
};

static void *cancel_later(void *arg)
{
	struct canceler *k = arg;

	usleep(k->ms * 1000);
	al_cancel_set(k->c);
	return NULL;
}

static void test_http__timing_cancel_ends_a_hang(void)
{
	al_http_opts o = AL_HTTP_OPTS_INIT;
	al_http *h = NULL;
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;
	struct canceler k = {NULL, 300};
	pthread_t t;
	uint64_t t0, el;
	int rc;

	CU_ASSERT_EQUAL(al_cancel_new(&k.c), 0);
	o.cancel = k.c;
	CU_ASSERT_EQUAL(al_http_new(&h, &o), 0);
	req.url = url("/hang");
	t0 = al_clock_now_ms();
	CU_ASSERT_EQUAL(pthread_create(&t, NULL, cancel_later, &k), 0);
	rc = al_http_do(h, &req, &resp);
	el = al_clock_now_ms() - t0;
	pthread_join(t, NULL);
	CU_ASSERT_EQUAL(rc, AL_ECANCELED);
	CU_ASSERT(el >= 250 && el < AL_TEST_LOADED_MS(1500));
	/* Cancelled also during a backoff sleep. */
	req.url = url("/status/503");
	t0 = al_clock_now_ms();
	rc = al_http_do(h, &req, &resp);
	CU_ASSERT_EQUAL(rc, AL_ECANCELED);
	CU_ASSERT(al_clock_now_ms() - t0 < AL_TEST_LOADED_MS(1000));
	al_http_resp_clear(&resp);
	al_http_free(h);
	al_cancel_free(k.c);
}

static void test_http__timing_cancel_during_backoff(void)
{
	al_http_opts o = AL_HTTP_OPTS_INIT;
	al_http *h = NULL;
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;
	struct canceler k = {NULL, 400};
	pthread_t t;
	uint64_t t0, el;
	int rc;

	CU_ASSERT_EQUAL(al_cancel_new(&k.c), 0);
	o.cancel = k.c;
	o.max_retries = 3;
	o.backoff_base_ms = 10000;
	o.backoff_max_ms = 10000;
	CU_ASSERT_EQUAL(al_http_new(&h, &o), 0);
	req.url = url("/status/503");
	t0 = al_clock_now_ms();
	CU_ASSERT_EQUAL(pthread_create(&t, NULL, cancel_later, &k), 0);
	rc = al_http_do(h, &req, &resp);
	el = al_clock_now_ms() - t0;
	pthread_join(t, NULL);
	CU_ASSERT_EQUAL(rc, AL_ECANCELED);
	CU_ASSERT_EQUAL(resp.attempts, 1);
	CU_ASSERT(el >= 350 && el < AL_TEST_LOADED_MS(1500));
	al_http_resp_clear(&resp);
	al_http_free(h);
	al_cancel_free(k.c);
}

static void test_http__timing_deadline_bounds_all_attempts(void)
{
	al_http *h = client(10, 300);
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;
	uint64_t t0, el;
	int rc;

	req.url = url("/hang");
	req.deadline = al_deadline_in(1200);
	t0 = al_clock_now_ms();
	rc = al_http_do(h, &req, &resp);
	el = al_clock_now_ms() - t0;
	CU_ASSERT_EQUAL(rc, AL_ETIMEOUT);
	CU_ASSERT(resp.attempts >= 2);
	CU_ASSERT(el >= 1000 && el < AL_TEST_LOADED_MS(3000));
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "deadline"));
	al_http_resp_clear(&resp);
	al_http_free(h);
}

/* The per-attempt timeout fires first and the backoff before the next
 * attempt would outlive the deadline: the error names the deadline. */
static void test_http__deadline_leaves_no_time_to_retry(void)
{
	al_http_opts o = AL_HTTP_OPTS_INIT;
	al_http *h = NULL;
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;
	uint64_t t0, el;

	o.max_retries = 3;
	o.request_timeout_ms = 300;
	o.connect_timeout_ms = 2000;
	o.low_speed_time_ms = 1000;
	o.backoff_base_ms = 5000;
	o.backoff_max_ms = 5000;
	CU_ASSERT_EQUAL(al_http_new(&h, &o), 0);
	req.url = url("/hang");
	al_clock_use_virtual(1000, 0);
	/* the server never answers: no need to wait long to call it a hang */
	al__clock_set_idle_ms(100);
	req.deadline = al_deadline_in(1200);
	t0 = al_clock_now_ms();
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), AL_ETIMEOUT);
	el = al_clock_now_ms() - t0;
	CU_ASSERT_EQUAL(resp.attempts, 1);
	/* on the virtual clock: the hang reaches the attempt's 300 ms */
	CU_ASSERT_EQUAL(el, 300);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "deadline"));
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "no time left"));
	al_http_resp_clear(&resp);
	al_http_free(h);
	al__clock_set_idle_ms(0);
	al_clock_set_source(NULL);
}

static void test_http__deadline_stops_retry_after_sleep(void)
{
	al_http_opts o = AL_HTTP_OPTS_INIT;
	al_http *h = NULL;
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;
	uint64_t t0, el;

	o.max_retries = 3;
	o.backoff_max_ms = 60000;
	CU_ASSERT_EQUAL(al_http_new(&h, &o), 0);
	req.url = url("/retry-after/30?times=5");
	al_clock_use_virtual(1000, 0);
	req.deadline = al_deadline_in(2000);
	t0 = al_clock_now_ms();
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), 0);
	el = al_clock_now_ms() - t0;
	CU_ASSERT_EQUAL(resp.status, 429);
	CU_ASSERT_EQUAL(resp.attempts, 1);
	/* on the virtual clock: a Retry-After past the deadline is not
	 * slept at all */
	CU_ASSERT_EQUAL(el, 0);
	al_http_resp_clear(&resp);
	al_http_free(h);
	al_clock_set_source(NULL);
}

static void upload_blob(uint8_t *p, size_t n, char *hex)
{
	uint8_t md[SHA256_DIGEST_LENGTH];
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)((i * 7 + 3) & 0xff);
	SHA256(p, n, md);
	for (i = 0; i < sizeof(md); i++)
		sfmt(hex + 2 * i, 3, "%02x", md[i]);
}

static void test_http__upload_reader_rewound_after_500(void)
{
	static uint8_t data[70000];
	char hex[65], expect[128];
	struct mem_reader r = {data, sizeof(data), 0, 0};
	al_reader rd = {mem_read, mem_rewind, &r};
	al_http *h = client(3, 5000);
	al_buf body = AL_BUF_INIT(4096);
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;

	upload_blob(data, sizeof(data), hex);
	req.method = "PUT";
	req.url = url("/upload?fail=1");
	req.reader = &rd;
	req.body_size = (int64_t)sizeof(data);
	req.body_out = &body;
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), 0);
	CU_ASSERT_EQUAL(resp.status, 201);
	CU_ASSERT_EQUAL(resp.attempts, 2);
	CU_ASSERT_EQUAL(r.rewinds, 1);
	sfmt(expect, sizeof(expect), "{\"bytes\": %zu, \"sha256\": \"%s\"}",
	     sizeof(data), hex);
	CU_ASSERT_STRING_EQUAL(al_buf_cstr(&body), expect);
	/* An in-memory body is resent as well. */
	al_buf_reset(&body);
	memset(&req, 0, sizeof(req));
	req.method = "POST";
	req.url = url("/upload/mem?fail=2");
	req.body = data;
	req.body_len = sizeof(data);
	req.body_out = &body;
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), 0);
	CU_ASSERT_EQUAL(resp.status, 201);
	CU_ASSERT_EQUAL(resp.attempts, 3);
	CU_ASSERT_STRING_EQUAL(al_buf_cstr(&body), expect);
	/* Chunked (size unknown) works too. */
	req.body = NULL;
	req.body_len = 0;
	req.reader = &rd;
	al_buf_reset(&body);
	r.pos = 0;
	req.method = "PATCH";
	req.url = url("/upload");
	req.body_size = -1;
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), 0);
	CU_ASSERT_EQUAL(resp.status, 201);
	CU_ASSERT_STRING_EQUAL(al_buf_cstr(&body), expect);
	al_http_resp_clear(&resp);
	al_buf_free(&body);
	al_http_free(h);
}

static void test_http__upload_without_rewind_not_retried(void)
{
	static uint8_t data[5000];
	char hex[65];
	struct mem_reader r = {data, sizeof(data), 0, 0};
	al_reader rd = {mem_read, NULL, &r};
	al_http *h = client(3, 5000);
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;

	upload_blob(data, sizeof(data), hex);
	req.method = "PUT";
	req.url = url("/upload/norewind?fail=1");
	req.reader = &rd;
	req.body_size = (int64_t)sizeof(data);
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), 0);
	CU_ASSERT_EQUAL(resp.status, 500);
	CU_ASSERT_EQUAL(resp.attempts, 1);
	al_http_resp_clear(&resp);
	al_http_free(h);
}

static void test_http__empty_put_sends_content_length_0(void)
{
	al_http *h = client(0, 5000);
	al_buf body = AL_BUF_INIT(65536);
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;
	const char *const hdrs[] = {"X-Test: 1", NULL};

	req.method = "PUT";
	req.url = url("/echo");
	req.body_out = &body;
	req.headers = hdrs;
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), 0);
	CU_ASSERT_EQUAL(resp.status, 200);
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(al_buf_cstr(&body), "\"method\": \"PUT\""));
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(al_buf_cstr(&body), "[\"Content-Length\", \"0\"]"));
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(al_buf_cstr(&body), "[\"X-Test\", \"1\"]"));
	CU_ASSERT_PTR_NULL(strstr(al_buf_cstr(&body), "Expect"));
	CU_ASSERT_PTR_NULL(strstr(al_buf_cstr(&body), "Content-Type"));
	al_buf_reset(&body);
	req.method = "POST";
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), 0);
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(al_buf_cstr(&body), "\"method\": \"POST\""));
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(al_buf_cstr(&body), "[\"Content-Length\", \"0\"]"));
	al_buf_reset(&body);
	req.method = "DELETE";
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), 0);
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(al_buf_cstr(&body), "\"method\": \"DELETE\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(al_buf_cstr(&body), "airlock/"));
	al_http_resp_clear(&resp);
	al_buf_free(&body);
	al_http_free(h);
}

static void test_http__timing_head_has_no_body(void)
{
	al_http *h = client(0, 5000);
	struct check_sink s = {0};
	al_writer w = {check_write, check_reset, &s};
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;
	uint64_t t0;

	req.method = "HEAD";
	req.url = url("/ok/5000");
	req.sink = &w;
	t0 = al_clock_now_ms();
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), 0);
	CU_ASSERT(al_clock_now_ms() - t0 < AL_TEST_LOADED_MS(1500));
	CU_ASSERT_EQUAL(resp.status, 200);
	CU_ASSERT_EQUAL(s.n, 0);
	CU_ASSERT_STRING_EQUAL(
	    al_http_resp_header(&resp, "Content-Length")
	        ? al_http_resp_header(&resp, "Content-Length")
	        : "",
	    "5000");
	al_http_resp_clear(&resp);
	al_http_free(h);
}

static void test_http__parse_retry_after(void)
{
	char date[64];
	time_t now = time(NULL) + 30;
	struct tm tm;
	uint64_t ms = 12345;

	CU_ASSERT_EQUAL(al_http_parse_retry_after("5", &ms), 0);
	CU_ASSERT_EQUAL(ms, 5000);
	CU_ASSERT_EQUAL(al_http_parse_retry_after(" 0 ", &ms), 0);
	CU_ASSERT_EQUAL(ms, 0);
	gmtime_r(&now, &tm);
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
	CU_ASSERT_EQUAL(al_http_parse_retry_after(date, &ms), 0);
	CU_ASSERT(ms >= 27000 && ms <= 31000);
	CU_ASSERT_EQUAL(
	    al_http_parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", &ms), 0);
	CU_ASSERT_EQUAL(ms, 0);
	CU_ASSERT_EQUAL(
	    al_http_parse_retry_after("Sunday, 06-Nov-94 08:49:37 GMT", &ms),
	    0);
	CU_ASSERT_EQUAL(
	    al_http_parse_retry_after("Sun Nov  6 08:49:37 1994", &ms), 0);
	ms = 777;
	CU_ASSERT_EQUAL(al_http_parse_retry_after("soon", &ms), AL_EPARSE);
	CU_ASSERT_EQUAL(al_http_parse_retry_after("5s", &ms), AL_EPARSE);
	CU_ASSERT_EQUAL(al_http_parse_retry_after("", &ms), AL_EPARSE);
	CU_ASSERT_EQUAL(al_http_parse_retry_after("-1", &ms), AL_EPARSE);
	CU_ASSERT_EQUAL(
	    al_http_parse_retry_after("Sun, 06 Nov 1994 08:49:37 PST", &ms),
	    AL_EPARSE);
	CU_ASSERT_EQUAL(
	    al_http_parse_retry_after("Sun, 32 Nov 1994 08:49:37 GMT", &ms),
	    AL_EPARSE);
	CU_ASSERT_EQUAL(ms, 777);
	CU_ASSERT_EQUAL(
	    al_http_parse_retry_after("99999999999999999999999", &ms), 0);
	CU_ASSERT(ms > 1000ULL * 1000 * 1000);
}

static void test_http__rejects_bad_urls(void)
{
	al_http *h = client(0, 5000);
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;

	req.url = "ftp://127.0.0.1/x";
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), AL_EINVAL);
	req.url = "not a url";
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), AL_EINVAL);
	req.url = NULL;
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), AL_EINVAL);
	al_http_resp_clear(&resp);
	al_http_free(h);
	al_http_free(NULL);
	al_http_resp_clear(NULL);
}

static void test_http__error_body_is_bounded(void)
{
	al_http *h = client(0, 5000);
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;

	req.url = url("/status/404?size=100000");
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), 0);
	CU_ASSERT_EQUAL(resp.status, 404);
	CU_ASSERT_EQUAL(resp.error_body.len, 64 * 1024);
	CU_ASSERT(resp.error_body.ptr != NULL &&
	          pattern_ok(resp.error_body.ptr, resp.error_body.len));
	CU_ASSERT_EQUAL(resp.body_bytes, 0);
	al_http_resp_clear(&resp);
	al_http_free(h);
}

static void test_http__header_last_value_wins(void)
{
	al_http *h = client(0, 5000);
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;
	const char *v;

	req.url = url("/headers?h=X-Dup:1&h=Other:%20spaced%20&h=x-dup:2");
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), 0);
	v = al_http_resp_header(&resp, "X-DUP");
	CU_ASSERT_STRING_EQUAL(v != NULL ? v : "", "2");
	v = al_http_resp_header(&resp, "other");
	CU_ASSERT_STRING_EQUAL(v != NULL ? v : "", "spaced");
	CU_ASSERT_PTR_NULL(al_http_resp_header(&resp, "X-Missing"));
	CU_ASSERT_PTR_NULL(al_http_resp_header(&resp, "X-Du"));
	al_http_resp_clear(&resp);
	al_http_free(h);
}

static int failing_write(void *ud, const uint8_t *p, size_t n)
{
	(void)ud;
	(void)p;
	(void)n;
	return al_error_set(AL_EIO, "test sink: disk full");
}

static int failing_read(void *ud, uint8_t *p, size_t cap, size_t *got)
{
	(void)ud;
	(void)p;
	(void)cap;
	(void)got;
	return al_error_set(AL_EIO, "test reader: bad sector");
}

static void test_http__sink_and_reader_errors_unchanged(void)
{
	al_http *h = client(3, 5000);
	al_writer w = {failing_write, NULL, NULL};
	al_reader rd = {failing_read, NULL, NULL};
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;

	req.url = url("/ok/1000");
	req.sink = &w;
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), AL_EIO);
	CU_ASSERT_STRING_EQUAL(al_error_message(), "test sink: disk full");
	CU_ASSERT_EQUAL(resp.attempts, 1);
	memset(&req, 0, sizeof(req));
	req.method = "PUT";
	req.url = url("/upload");
	req.reader = &rd;
	req.body_size = 100;
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), AL_EIO);
	CU_ASSERT_STRING_EQUAL(al_error_message(), "test reader: bad sector");
	CU_ASSERT_EQUAL(resp.attempts, 1);
	al_http_resp_clear(&resp);
	al_http_free(h);
}

static void test_http__resume_checks_content_range(void)
{
	al_http *h = client(3, 5000);
	struct check_sink s = {0};
	al_writer w = {check_write, check_reset, &s};
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;

	req.url = url("/flaky-body/40000?badrange=1");
	req.sink = &w;
	req.resumable = 1;
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), AL_EPROTO);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "Content-Range"));
	CU_ASSERT_EQUAL(resp.attempts, 2);
	CU_ASSERT_EQUAL(s.n, 20000);
	al_http_resp_clear(&resp);
	al_http_free(h);
}

static void test_http__mid_body_failure_without_reset_not_retried(void)
{
	al_http *h = client(3, 5000);
	struct check_sink s = {0};
	al_writer w = {check_write, NULL, &s};
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;

	req.url = url("/flaky-body/30000");
	req.sink = &w;
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), AL_ENET);
	CU_ASSERT_EQUAL(resp.attempts, 1);
	CU_ASSERT_EQUAL(s.n, 15000);
	CU_ASSERT_EQUAL(resp.body_bytes, 15000);
	al_http_resp_clear(&resp);
	al_http_free(h);
}

/* A client like client() with the bounds of docs/http.md "Bounds" set. */
static al_http *bounded_client(unsigned retries, uint64_t doc_ms,
                               uint64_t min_speed)
{
	al_http_opts o = AL_HTTP_OPTS_INIT;
	al_http *h = NULL;

	o.max_retries = retries;
	o.connect_timeout_ms = 2000;
	o.low_speed_time_ms = 1000;
	o.backoff_base_ms = 20;
	o.backoff_max_ms = 200;
	o.doc_timeout_ms = doc_ms;
	o.min_speed_bps = min_speed;
	if (al_http_new(&h, &o) != 0)
		return NULL;
	return h;
}

/* A sink that keeps nothing. */
static int null_write(void *ud, const uint8_t *p, size_t n)
{
	(void)ud;
	(void)p;
	(void)n;
	return 0;
}

static void test_http__timing_slow_but_moving_is_not_a_stall(void)
{
	/* stall after 1 s; a minimum rate of 1 B/s keeps only that rule */
	al_http *h = bounded_client(AL_HTTP_NO_RETRY, 0, 1);
	al_buf body = AL_BUF_INIT(100);
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;

	req.url = url("/slowdrip/8/200");
	req.body_out = &body;
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), 0);
	CU_ASSERT_EQUAL(resp.status, 200);
	CU_ASSERT_EQUAL(body.len, 8);
	al_http_resp_clear(&resp);
	al_buf_free(&body);
	al_http_free(h);
}

/* "peer_port": N from an /echo answer, or -1. */
static long echo_field(const al_buf *b, const char *field)
{
	const char *p = strstr(al_buf_cstr(b), field);

	return p != NULL ? strtol(p + strlen(field), NULL, 10) : -1;
}

static void test_http__reuses_connections(void)
{
	al_http *h = client(0, 5000);
	al_buf body = AL_BUF_INIT(65536);
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;
	long p1, p2;

	req.url = url("/echo");
	req.body_out = &body;
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), 0);
	p1 = echo_field(&body, "\"peer_port\": ");
	al_buf_reset(&body);
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), 0);
	p2 = echo_field(&body, "\"peer_port\": ");
	CU_ASSERT(p1 > 0);
	CU_ASSERT_EQUAL(p1, p2);
	al_http_resp_clear(&resp);
	al_buf_free(&body);
	al_http_free(h);
}

static void test_http__proxy_option_and_no_proxy(void)
{
	al_http_opts o = AL_HTTP_OPTS_INIT;
	al_http *h = NULL;
	al_buf body = AL_BUF_INIT(65536);
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;
	char proxy[128];
	const char *target = url("/echo");

	sfmt(proxy, sizeof(proxy), "http://127.0.0.1:%d",
	     start_server(1) == 0 ? srv_port[1] : 1);
	o.proxy = proxy;
	o.max_retries = AL_HTTP_NO_RETRY;
	CU_ASSERT_EQUAL(al_http_new(&h, &o), 0);
	req.url = target;
	req.body_out = &body;
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_buf_cstr(&body), "\"proxied\": true"));
	al_http_free(h);
	h = NULL;
	/* no_proxy bypasses it. */
	o.no_proxy = "127.0.0.1";
	CU_ASSERT_EQUAL(al_http_new(&h, &o), 0);
	al_buf_reset(&body);
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), 0);
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(al_buf_cstr(&body), "\"proxied\": false"));
	al_http_free(h);
	h = NULL;
	/* Without the option, the environment is used. */
	setenv("http_proxy", proxy, 1);
	CU_ASSERT_EQUAL(al_http_new(&h, NULL), 0);
	al_buf_reset(&body);
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_buf_cstr(&body), "\"proxied\": true"));
	unsetenv("http_proxy");
	al_http_resp_clear(&resp);
	al_buf_free(&body);
	al_http_free(h);
}

static int get_tls(const char *u, const char *ca, int verify_off,
                   const char *const *insecure, long *status)
{
	al_http_opts o = AL_HTTP_OPTS_INIT;
	al_http *h = NULL;
	al_buf body = AL_BUF_INIT(65536);
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;
	int rc;

	o.ca_file = ca;
	o.tls_verify_off = verify_off;
	o.insecure_hosts = insecure;
	o.max_retries = 2;
	o.backoff_base_ms = 10;
	rc = al_http_new(&h, &o);
	if (rc == 0) {
		req.url = u;
		req.body_out = &body;
		rc = al_http_do(h, &req, &resp);
		*status = resp.status;
		if (rc == 0 && body.len != 10)
			rc = -1000;
		if (rc != 0 && rc != -1000 && resp.attempts != 1)
			rc = -1001; /* TLS failures are not retried */
	}
	al_http_resp_clear(&resp);
	al_buf_free(&body);
	al_http_free(h);
	return rc;
}

static void test_http__tls_ca_file_and_insecure_hosts(void)
{
	char u[2048], exact[64], other[64];
	const char *hosts_exact[] = {exact, NULL};
	const char *hosts_any_port[] = {"127.0.0.1", NULL};
	const char *hosts_other[] = {other, "localhost", NULL};
	long status = 0;
	int rc;

	sfmt(u, sizeof(u), "%s", url_of(2, "/ok/10"));
	sfmt(exact, sizeof(exact), "127.0.0.1:%d", srv_port[2]);
	sfmt(other, sizeof(other), "127.0.0.1:%d", srv_port[2] + 1);
	rc = get_tls(u, NULL, 0, NULL, &status);
	CU_ASSERT_EQUAL(rc, AL_ENET);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "127.0.0.1"));
	CU_ASSERT_EQUAL(get_tls(u, cert_path, 0, NULL, &status), 0);
	CU_ASSERT_EQUAL(status, 200);
	CU_ASSERT_EQUAL(get_tls(u, NULL, 1, NULL, &status), 0);
	CU_ASSERT_EQUAL(get_tls(u, NULL, 0, hosts_exact, &status), 0);
	CU_ASSERT_EQUAL(get_tls(u, NULL, 0, hosts_any_port, &status), 0);
	CU_ASSERT_EQUAL(get_tls(u, NULL, 0, hosts_other, &status), AL_ENET);
}

/*
 * $SSL_CERT_DIR: its files are trusted (Go's system pool), read at a
 * client's first https request only, so that plain http never reads them:
 * a directory whose file is over the bound fails https with the file's
 * name, and leaves plain http alone. Clients of one process share what
 * was read (ca_cache): the second client sees the first one's CAs.
 */
static void test_http__ssl_cert_dir_read_at_first_https(void)
{
	char good[4096], bad[4096], path[4200], cmd[9000], line[1025];
	long status = 0;
	char *saved = getenv("SSL_CERT_DIR") != NULL
	                  ? strdup(getenv("SSL_CERT_DIR"))
	                  : NULL;
	FILE *f;
	size_t i;

	const char *tls = url_of(2, "/ok/10"); /* starts it: cert_path */

	sfmt(good, sizeof(good), "%s/certdir-good", al_test_tmpdir());
	sfmt(bad, sizeof(bad), "%s/certdir-bad", al_test_tmpdir());
	sfmt(cmd, sizeof(cmd), "mkdir -p '%s' '%s' && cp '%s' '%s/ca.pem'",
	     good, bad, cert_path, good);
	CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
	sfmt(path, sizeof(path), "%s/huge.pem", bad);
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	memset(line, '#', sizeof(line) - 2);
	line[sizeof(line) - 2] = '\n';
	line[sizeof(line) - 1] = '\0';
	for (i = 0; i < 1100; i++) /* 1.1 MiB: past AL_CERTS_FILE_MAX */
		fputs(line, f);
	CU_ASSERT_EQUAL(fclose(f), 0);

	CU_ASSERT_EQUAL(setenv("SSL_CERT_DIR", bad, 1), 0);
	CU_ASSERT_EQUAL(get_tls(url("/ok/10"), NULL, 0, NULL, &status), 0);
	CU_ASSERT_NOT_EQUAL(get_tls(tls, NULL, 0, NULL, &status), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "huge.pem"));

	CU_ASSERT_EQUAL(setenv("SSL_CERT_DIR", good, 1), 0);
	CU_ASSERT_EQUAL(get_tls(tls, NULL, 0, NULL, &status), 0);
	/* a second client, from what the first one read */
	CU_ASSERT_EQUAL(get_tls(tls, NULL, 0, NULL, &status), 0);

	if (saved != NULL)
		setenv("SSL_CERT_DIR", saved, 1);
	else
		unsetenv("SSL_CERT_DIR");
	free(saved);
}

static void test_http__https_to_http_redirect_drops_authorization(void)
{
	const char *const hdrs[] = {"Authorization: Basic dXNlcjpwYXNz", NULL};
	char path[2100];
	al_http_opts o = AL_HTTP_OPTS_INIT;
	al_http *h = NULL;
	al_buf body = AL_BUF_INIT(4096);
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;

	sfmt(path, sizeof(path), "/redirect?to=%s", url("/echo-auth"));
	req.url = url_of(2, path);
	o.ca_file = cert_path;
	CU_ASSERT_EQUAL(al_http_new(&h, &o), 0);
	req.headers = hdrs;
	req.body_out = &body;
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), 0);
	CU_ASSERT_EQUAL(resp.status, 200);
	CU_ASSERT_STRING_EQUAL(al_buf_cstr(&body), "none");
	/* Same origin over TLS keeps it. */
	al_buf_reset(&body);
	req.url = url_of(2, "/redirect?to=/echo-auth");
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), 0);
	CU_ASSERT_STRING_EQUAL(al_buf_cstr(&body), "Basic dXNlcjpwYXNz");
	al_http_resp_clear(&resp);
	al_buf_free(&body);
	al_http_free(h);
}

/* A blob that keeps moving, but below the minimum rate, is cut after one
 * window (low_speed_time_ms), not kept alive by each byte. */
static void test_http__timing_drip_below_minimum_rate_is_cut(void)
{
	al_http *h = bounded_client(AL_HTTP_NO_RETRY, 0, 0); /* 1 KiB/s */
	al_writer w = {null_write, NULL, NULL};
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;
	uint64_t t0 = al_clock_now_ms(), el;

	req.url = url("/slowdrip/100000/20");
	req.sink = &w;
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), AL_ETIMEOUT);
	el = al_clock_now_ms() - t0;
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "too slow"));
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "/slowdrip/"));
	/* one window of 1 s after the first byte, plus polling */
	CU_ASSERT(el < AL_TEST_LOADED_MS(3000));
	al_http_resp_clear(&resp);
	al_http_free(h);
}

/* A document dripped faster than the minimum rate still ends: each
 * attempt within doc_timeout_ms, all within (retries + 1) times that. */
static void test_http__timing_document_has_a_total_deadline(void)
{
	al_http *h = bounded_client(2, 700, 1);
	al_buf body = AL_BUF_INIT(4096);
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;
	uint64_t t0 = al_clock_now_ms(), el;

	req.url = url("/slowdrip/1000/50");
	req.body_out = &body;
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), AL_ETIMEOUT);
	el = al_clock_now_ms() - t0;
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "/slowdrip/1000/50"));
	/* the third attempt runs into the call's deadline */
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "deadline exceeded"));
	CU_ASSERT_EQUAL(resp.attempts, 3);
	/* the documented bound: 3 x 700 ms (and a little for polling) */
	CU_ASSERT(el >= 2000 && el < AL_TEST_LOADED_MS(2100 + 400));
	al_http_resp_clear(&resp);
	al_buf_free(&body);
	al_http_free(h);
}

/* Endless error and redirect bodies end at the byte cap with an error
 * naming the URL; dripped ones at the time cap, also for a sink request
 * (a blob GET answered 404). */
static void test_http__timing_endless_error_bodies_end(void)
{
	al_http *h = bounded_client(AL_HTTP_NO_RETRY, 800, 1);
	al_writer w = {null_write, NULL, NULL};
	al_buf body = AL_BUF_INIT(4096);
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;
	uint64_t t0, el;

	req.url = url("/endless/404");
	req.body_out = &body;
	t0 = al_clock_now_ms();
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), AL_ELIMIT);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "/endless/404"));
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "HTTP 404"));
	CU_ASSERT_EQUAL(resp.body_overflow, 0);
	CU_ASSERT(al_clock_now_ms() - t0 < AL_TEST_LOADED_MS(2000));

	req.url = url("/endless/302?to=/ok/16");
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), AL_ELIMIT);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "HTTP 302"));

	req.url = url("/drip-status/404/50");
	req.body_out = NULL;
	req.sink = &w;
	t0 = al_clock_now_ms();
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), AL_ETIMEOUT);
	el = al_clock_now_ms() - t0;
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "/drip-status/404"));
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "HTTP 404"));
	CU_ASSERT(el >= 700 && el < AL_TEST_LOADED_MS(800 + 600));
	al_http_resp_clear(&resp);
	al_buf_free(&body);
	al_http_free(h);
}

/* Thousands of headers, or a few huge ones: a message about headers, and
 * body_overflow stays 0 so callers do not blame the body. */
static void test_http__header_count_and_size_are_bounded(void)
{
	al_http *h = client(AL_HTTP_NO_RETRY, 5000);
	al_buf body = AL_BUF_INIT(4096);
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;

	req.body_out = &body;
	req.url = url("/many-headers/200");
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), 0);
	CU_ASSERT_STRING_EQUAL(al_http_resp_header(&resp, "X-Many-199"), "v");
	req.url = url("/many-headers/5000");
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), AL_ELIMIT);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "response headers"));
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "/many-headers/"));
	CU_ASSERT_EQUAL(resp.body_overflow, 0);
	req.url = url("/big-headers/40/8000");
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), AL_ELIMIT);
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(al_error_message(), "response headers from"));
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "exceed"));
	CU_ASSERT_EQUAL(resp.body_overflow, 0);
	/* interim answers count too: an endless run of them ends */
	req.url = url("/endless-1xx");
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), AL_ELIMIT);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "exceed"));
	/* a body past body_out's max says so */
	req.url = url("/ok/5000");
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), AL_ELIMIT);
	CU_ASSERT_EQUAL(resp.body_overflow, 1);
	al_http_resp_clear(&resp);
	al_buf_free(&body);
	al_http_free(h);
}

/* A response header carrying a control character (a bare CR, an ESC) is
 * refused: its value could end up in a request line or a message. */
static void test_http__header_with_control_character_refused(void)
{
	al_http *h = client(AL_HTTP_NO_RETRY, 5000);
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;

	req.url = url("/headers?h=X-Evil:a%1B%5B2Jb");
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), AL_EPROTO);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "control character"));
	req.url = url("/headers?h=Location:/ok/1%0DX-Injected:%20yes");
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), AL_EPROTO);
	req.url = url("/headers?h=X-Fine:a%09b");
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), 0);
	CU_ASSERT_STRING_EQUAL(al_http_resp_header(&resp, "X-Fine"), "a\tb");
	al_http_resp_clear(&resp);
	al_http_free(h);
}

/* Nothing the caller built from server data adds a request line. */
static void test_http__request_header_injection_refused(void)
{
	const char *const hdrs[] = {"Authorization: Bearer t\r\nX-Injected: 1",
	                            NULL};
	al_http *h = client(AL_HTTP_NO_RETRY, 5000);
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;

	req.url = url("/echo");
	req.headers = hdrs;
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), AL_EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "control character"));
	CU_ASSERT_EQUAL(resp.attempts, 0);
	req.headers = NULL;
	req.url = url("/echo\r\nX-Injected: 1");
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), AL_EINVAL);
	req.url = url("/ok/1 HTTP/1.0");
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), AL_EINVAL);
	al_http_resp_clear(&resp);
	al_http_free(h);
}

/* no_plain_auth: an Authorization header never goes over plain http to a
 * host the user did not mark insecure. */
static void test_http__no_plain_auth_refuses_clear_text_credentials(void)
{
	const char *const hdrs[] = {"Authorization: Basic dXNlcjpwYXNz", NULL};
	const char *insecure[2] = {NULL, NULL};
	char host[64];
	al_http_opts o = AL_HTTP_OPTS_INIT;
	al_http *h = NULL, *lax = NULL;
	al_buf body = AL_BUF_INIT(4096);
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;

	o.max_retries = AL_HTTP_NO_RETRY;
	o.no_plain_auth = 1;
	CU_ASSERT_EQUAL(al_http_new(&h, &o), 0);
	req.url = url("/echo-auth");
	req.headers = hdrs;
	req.body_out = &body;
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), AL_EPROTO);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "plain http"));
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "/echo-auth"));
	CU_ASSERT_EQUAL(resp.attempts, 0);
	/* without credentials the request goes */
	req.headers = NULL;
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), 0);
	CU_ASSERT_STRING_EQUAL(al_buf_cstr(&body), "none");
	/* an insecure host may have them */
	sfmt(host, sizeof(host), "127.0.0.1:%d", srv_port[0]);
	insecure[0] = host;
	o.insecure_hosts = insecure;
	CU_ASSERT_EQUAL(al_http_new(&lax, &o), 0);
	req.headers = hdrs;
	al_buf_reset(&body);
	CU_ASSERT_EQUAL(al_http_do(lax, &req, &resp), 0);
	CU_ASSERT_STRING_EQUAL(al_buf_cstr(&body), "Basic dXNlcjpwYXNz");
	CU_ASSERT_EQUAL(al_http_plain_allowed(lax, req.url), 1);
	CU_ASSERT_EQUAL(al_http_plain_allowed(h, req.url), 0);
	al_http_resp_clear(&resp);
	al_buf_free(&body);
	al_http_free(h);
	al_http_free(lax);
}

/* https -> http on the same host and port with credentials is refused,
 * naming both URLs. */
static void test_http__same_host_downgrade_redirect_refused(void)
{
	const char *const hdrs[] = {"Authorization: Basic dXNlcjpwYXNz", NULL};
	char path[2100];
	al_http_opts o = AL_HTTP_OPTS_INIT;
	al_http *h = NULL;
	al_buf body = AL_BUF_INIT(4096);
	al_http_req req = {0};
	al_http_resp resp = AL_HTTP_RESP_INIT;

	(void)url_of(2, "/");
	sfmt(path, sizeof(path), "/redirect?to=http://127.0.0.1:%d/echo-auth",
	     srv_port[2]);
	req.url = url_of(2, path);
	o.ca_file = cert_path;
	o.max_retries = AL_HTTP_NO_RETRY;
	CU_ASSERT_EQUAL(al_http_new(&h, &o), 0);
	req.headers = hdrs;
	req.body_out = &body;
	CU_ASSERT_EQUAL(al_http_do(h, &req, &resp), AL_EPROTO);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "plain http"));
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "/echo-auth"));
	CU_ASSERT_EQUAL(resp.attempts, 1);
	al_http_resp_clear(&resp);
	al_buf_free(&body);
	al_http_free(h);
}

static void test_http__origin_compare(void)
{
	CU_ASSERT_EQUAL(
	    al_http_origin_compare("https://a:5000/x", "https://A:5000/y?z"),
	    AL_HTTP_ORIGIN_SAME);
	CU_ASSERT_EQUAL(
	    al_http_origin_compare("https://a/x", "https://a:443/y"),
	    AL_HTTP_ORIGIN_SAME);
	CU_ASSERT_EQUAL(
	    al_http_origin_compare("https://a:5000/", "http://a:5000/up"),
	    AL_HTTP_ORIGIN_SCHEME);
	CU_ASSERT_EQUAL(al_http_origin_compare("https://a/", "http://a/"),
	                AL_HTTP_ORIGIN_OTHER);
	CU_ASSERT_EQUAL(al_http_origin_compare("https://a:1/", "https://b:1/"),
	                AL_HTTP_ORIGIN_OTHER);
	CU_ASSERT_EQUAL(al_http_origin_compare("https://a:1/", "not a url"),
	                AL_HTTP_ORIGIN_OTHER);
	CU_ASSERT_EQUAL(al_http_value_ok("a\tb", 3), 1);
	CU_ASSERT_EQUAL(al_http_value_ok("a\rb", 3), 0);
	CU_ASSERT_EQUAL(al_http_value_ok("a\x7f", 2), 0);
	CU_ASSERT_EQUAL(al_http_value_ok("a\0b", 3), 0);
}

static void test_http__split_header_lines(void)
{
	size_t nl = 99, vo = 99, vl = 99;

	CU_ASSERT_EQUAL(
	    al_http__split_header("Name:  v a l \t\r\n", 16, &nl, &vo, &vl),
	    AL_HTTP_HDR_FIELD);
	CU_ASSERT_EQUAL(nl, 4);
	CU_ASSERT_EQUAL(vo, 7);
	CU_ASSERT_EQUAL(vl, 5);
	CU_ASSERT_EQUAL(al_http__split_header("\r\n", 2, &nl, &vo, &vl),
	                AL_HTTP_HDR_END);
	CU_ASSERT_EQUAL(al_http__split_header(" folded\r\n", 9, &nl, &vo, &vl),
	                AL_HTTP_HDR_SKIP);
	CU_ASSERT_EQUAL(al_http__split_header("nocolon\r\n", 9, &nl, &vo, &vl),
	                AL_HTTP_HDR_SKIP);
	CU_ASSERT_EQUAL(
	    al_http__split_header("Bad Name: v\r\n", 13, &nl, &vo, &vl),
	    AL_HTTP_HDR_SKIP);
	CU_ASSERT_EQUAL(al_http__split_header("N: a\rb\r\n", 8, &nl, &vo, &vl),
	                AL_HTTP_HDR_BAD);
	CU_ASSERT_EQUAL(
	    al_http__split_header("N: \x1b[2J\r\n", 9, &nl, &vo, &vl),
	    AL_HTTP_HDR_BAD);
	CU_ASSERT_EQUAL(al_http__status_code("HTTP/1.1 404 Not Found", 22),
	                404);
	CU_ASSERT_EQUAL(al_http__status_code("HTTP/2 200", 10), 200);
	CU_ASSERT_EQUAL(al_http__status_code("X-HTTP/1.1 200", 14), -1);
}

static CU_TestInfo tests[] = {
    {"get_into_body_out", test_http__get_into_body_out},
    {"body_out_limit", test_http__body_out_limit},
    {"sink_gets_exact_bytes", test_http__sink_gets_exact_bytes},
    {"404_is_a_status_with_error_body",
     test_http__404_is_a_status_with_error_body},
    {"500_twice_then_200", test_http__500_twice_then_200},
    {"retry_after_is_honoured", test_http__retry_after_is_honoured},
    {"retry_after_capped_by_backoff_max",
     test_http__retry_after_capped_by_backoff_max},
    {"retries_exhausted_returns_status",
     test_http__retries_exhausted_returns_status},
    {"no_retry_option", test_http__no_retry_option},
    {"timing_hang_times_out", test_http__timing_hang_times_out},
    {"timing_stall_mid_body_aborts", test_http__timing_stall_mid_body_aborts},
    {"reset_fails_after_retries", test_http__reset_fails_after_retries},
    {"connection_refused_is_enet", test_http__connection_refused_is_enet},
    {"resumes_flaky_body_with_range", test_http__resumes_flaky_body_with_range},
    {"resume_answered_200_resets_sink",
     test_http__resume_answered_200_resets_sink},
    {"non_resumable_restarts_body_out",
     test_http__non_resumable_restarts_body_out},
    {"redirect_same_origin_keeps_authorization",
     test_http__redirect_same_origin_keeps_authorization},
    {"redirect_elsewhere_drops_authorization",
     test_http__redirect_elsewhere_drops_authorization},
    {"redirect_limit_and_no_redirect",
     test_http__redirect_limit_and_no_redirect},
    {"redirect_303_turns_post_into_get",
     test_http__redirect_303_turns_post_into_get},
    {"timing_cancel_ends_a_hang", test_http__timing_cancel_ends_a_hang},
    {"ssl_cert_dir_read_at_first_https",
     test_http__ssl_cert_dir_read_at_first_https},
    {"timing_cancel_during_backoff", test_http__timing_cancel_during_backoff},
    {"timing_deadline_bounds_all_attempts",
     test_http__timing_deadline_bounds_all_attempts},
    {"deadline_leaves_no_time_to_retry",
     test_http__deadline_leaves_no_time_to_retry},
    {"deadline_stops_retry_after_sleep",
     test_http__deadline_stops_retry_after_sleep},
    {"upload_reader_rewound_after_500",
     test_http__upload_reader_rewound_after_500},
    {"upload_without_rewind_not_retried",
     test_http__upload_without_rewind_not_retried},
    {"empty_put_sends_content_length_0",
     test_http__empty_put_sends_content_length_0},
    {"timing_head_has_no_body", test_http__timing_head_has_no_body},
    {"parse_retry_after", test_http__parse_retry_after},
    {"rejects_bad_urls", test_http__rejects_bad_urls},
    {"error_body_is_bounded", test_http__error_body_is_bounded},
    {"header_last_value_wins", test_http__header_last_value_wins},
    {"sink_and_reader_errors_unchanged",
     test_http__sink_and_reader_errors_unchanged},
    {"resume_checks_content_range", test_http__resume_checks_content_range},
    {"mid_body_failure_without_reset_not_retried",
     test_http__mid_body_failure_without_reset_not_retried},
    {"timing_slow_but_moving_is_not_a_stall",
     test_http__timing_slow_but_moving_is_not_a_stall},
    {"reuses_connections", test_http__reuses_connections},
    {"proxy_option_and_no_proxy", test_http__proxy_option_and_no_proxy},
    {"tls_ca_file_and_insecure_hosts",
     test_http__tls_ca_file_and_insecure_hosts},
    {"https_to_http_redirect_drops_authorization",
     test_http__https_to_http_redirect_drops_authorization},
    {"timing_drip_below_minimum_rate_is_cut",
     test_http__timing_drip_below_minimum_rate_is_cut},
    {"timing_document_has_a_total_deadline",
     test_http__timing_document_has_a_total_deadline},
    {"timing_endless_error_bodies_end",
     test_http__timing_endless_error_bodies_end},
    {"header_count_and_size_are_bounded",
     test_http__header_count_and_size_are_bounded},
    {"header_with_control_character_refused",
     test_http__header_with_control_character_refused},
    {"request_header_injection_refused",
     test_http__request_header_injection_refused},
    {"no_plain_auth_refuses_clear_text_credentials",
     test_http__no_plain_auth_refuses_clear_text_credentials},
    {"same_host_downgrade_redirect_refused",
     test_http__same_host_downgrade_redirect_refused},
    {"origin_compare", test_http__origin_compare},
    {"split_header_lines", test_http__split_header_lines},
    CU_TEST_INFO_NULL,
};

static void log_to_stderr(al_log_level level, const char *msg, void *ud)
{
	(void)level;
	(void)ud;
	fprintf(stderr, "%s\n", msg);
}

int main(void)
{
	int rc;

	/* Loopback servers only: never route the tests through a proxy from
	 * the environment. */
	unsetenv("http_proxy");
	unsetenv("https_proxy");
	unsetenv("HTTPS_PROXY");
	unsetenv("all_proxy");
	unsetenv("ALL_PROXY");
	unsetenv("no_proxy");
	unsetenv("NO_PROXY");
	if (getenv("AL_TEST_DEBUG") != NULL) {
		al_log_set_handler(log_to_stderr, NULL);
		al_log_set_level(AL_LOG_DEBUG);
	}
	if (al_http_global_init() != 0)
		return 1;
	rc = al_test_run("http", tests);
	stop_servers();
	al_http_global_cleanup();
	return rc;
}
