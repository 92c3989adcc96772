/* test_graph.c: version order, graph parsing, fetching from a loopback graph
 * server (faults, deadlines), selection, the store and the graph data. */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store_int.h"
#include "graph_int.h"
#include "al_test.h"
#include "airlock/buf.h"
#include "airlock/clock.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/graph.h"
#include "json_int.h"
#include "version_int.h"
#include "clock_int.h"
#include "airlock/store.h"

static struct {
	int tried;
	pid_t pid;
	int port;
	char base[128];
} srv;

static void stop_server(void)
{
	if (srv.pid > 0) {
		kill(srv.pid, SIGTERM);
		waitpid(srv.pid, NULL, 0);
		srv.pid = 0;
	}
}

/* Start tests/tools/graphserver.py once; NULL when it cannot run. */
static const char *server(void)
{
	char script[1200], portfile[1200];
	al_buf b = AL_BUF_INIT(64);
	int i;

	if (srv.tried)
		return srv.port > 0 ? srv.base : NULL;
	srv.tried = 1;
	snprintf(script, sizeof(script), "%s/tests/tools/graphserver.py",
	         al_test_source_dir());
	snprintf(portfile, sizeof(portfile), "%s/graph-port", al_test_tmpdir());
	srv.pid = fork();
	if (srv.pid < 0)
		return NULL;
	if (srv.pid == 0) {
		execlp("python3", "python3", script, "--port-file", portfile,
		       (char *)NULL);
		_exit(127);
	}
	atexit(stop_server);
	for (i = 0; i < 200; i++) {
		if (al_fs_read_file(portfile, &b) == 0) {
			srv.port = (int)strtol(al_buf_cstr(&b), NULL, 10);
			break;
		}
		if (waitpid(srv.pid, NULL, WNOHANG) == srv.pid) {
			srv.pid = 0;
			break;
		}
		usleep(50 * 1000);
	}
	al_buf_free(&b);
	if (srv.port <= 0) {
		fprintf(stderr, "graphserver.py did not start\n");
		return NULL;
	}
	snprintf(srv.base, sizeof(srv.base), "http://127.0.0.1:%d", srv.port);
	return srv.base;
}

/* Fast retries so fault tests stay short. */
static al_http_opts fast_http(void)
{
	al_http_opts o = AL_HTTP_OPTS_INIT;

	o.backoff_base_ms = 20;
	o.backoff_max_ms = 100;
	o.max_retries = 2;
	o.connect_timeout_ms = 2000;
	return o;
}

static al_graph *fetch(const char *mode, const char *channel, const char *arch)
{
	al_http_opts o = fast_http();
	al_graph *g = NULL;
	char *base;
	const char *b = server();
	int rc;

	CU_ASSERT_PTR_NOT_NULL(b);
	if (b == NULL)
		return NULL;
	base = al_sprintf("%s%s", b, mode);
	rc = al_graph_fetch(&g, base, channel, arch, &o, al_deadline_in(10000));
	if (rc != 0)
		fprintf(stderr, "fetch %s: %s\n", channel, al_error_message());
	CU_ASSERT_EQUAL(rc, 0);
	free(base);
	return g;
}

/* The selected versions joined by ' '. Caller frees. */
static char *joined(const al_graph *g, const size_t *idx, size_t n)
{
	al_buf b = AL_BUF_INIT(4096);
	size_t i;

	for (i = 0; i < n; i++)
		al_buf_printf(&b, "%s%s", i > 0 ? " " : "",
		              g->nodes[idx[i]].version);
	return al_buf_detach(&b, NULL);
}

static void check_select(const al_graph *g, const char *min, const char *max,
                         int shortest, int cond, const char *want)
{
	size_t *idx = NULL, n = 0;
	char *got;
	int rc;

	rc = al_graph_select(g, min, max, shortest, cond, &idx, &n);
	CU_ASSERT_EQUAL(rc, 0);
	if (rc != 0) {
		fprintf(stderr, "select: %s\n", al_error_message());
		return;
	}
	got = joined(g, idx, n);
	if (got == NULL || strcmp(got, want) != 0) {
		fprintf(stderr, "selected '%s', want '%s'\n", got, want);
		CU_FAIL("selection");
	}
	free(got);
	free(idx);
}

static void check_select_fails(const al_graph *g, const char *min,
                               const char *max, int shortest, int want,
                               const char *needle)
{
	size_t *idx = NULL, n = 0;
	int rc = al_graph_select(g, min, max, shortest, 1, &idx, &n);

	CU_ASSERT_EQUAL(rc, want);
	CU_ASSERT_PTR_NULL(idx);
	if (strstr(al_error_message(), needle) == NULL) {
		fprintf(stderr, "message lacks '%s': %s\n", needle,
		        al_error_message());
		CU_FAIL("message");
	}
	free(idx);
}

/* The one parser, in each peer's dialect (src/util/version_int.h). */
static void test_graph__semver_dialects(void)
{
	static const struct {
		const char *s;
		int release, blang, tolerant, masterminds;
	} cases[] = {
	    {"1.2.3", 1, 1, 1, 1},
	    {"1.2.3-rc.1+build.5", 1, 1, 1, 1},
	    {"v1.2.3", 0, 0, 1, 1},
	    {"V1.2.3", 0, 0, 1, 0},
	    {"1.2", 0, 0, 1, 1},
	    {"1", 0, 0, 1, 1},
	    {" 1.2.3 ", 0, 0, 1, 0},
	    {"01.2.3", 1, 0, 0, 1},
	    {"1.2.3-01", 1, 0, 0, 0},
	    {"1.2.3-", 0, 0, 0, 0},
	    {"1.2.3+", 0, 0, 0, 0},
	    {"1.2.3-a..b", 0, 0, 0, 0},
	    {"1.2.3.4", 0, 0, 0, 0},
	    {"1.2.", 0, 0, 0, 0},
	    {"v", 0, 0, 0, 0},
	    {"", 0, 0, 0, 0},
	    {"18446744073709551616.0.0", 0, 0, 0, 0},
	};
	al_semver a, b;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *s = cases[i].s;
		size_t n = strlen(s);

		CU_ASSERT_EQUAL(al_semver_parse(&a, s, n, AL_SEMVER_RELEASE) ==
		                    0,
		                cases[i].release);
		CU_ASSERT_EQUAL(al_semver_parse(&a, s, n, AL_SEMVER_BLANG) == 0,
		                cases[i].blang);
		CU_ASSERT_EQUAL(
		    al_semver_parse(&a, s, n, AL_SEMVER_BLANG_TOLERANT) == 0,
		    cases[i].tolerant);
		CU_ASSERT_EQUAL(
		    al_semver_parse(&a, s, n, AL_SEMVER_MASTERMINDS) == 0,
		    cases[i].masterminds);
	}
	/* the short forms are x.0.0; precedence ignores build metadata */
	CU_ASSERT_EQUAL(al_semver_parse(&a, "v1.2", 4, AL_SEMVER_MASTERMINDS),
	                0);
	CU_ASSERT_EQUAL(al_semver_parse(&b, "1.2.0+x", 7, AL_SEMVER_BLANG), 0);
	CU_ASSERT_EQUAL(al_semver_cmp(&a, &b), 0);
	/* semver 2.0 item 11 */
	CU_ASSERT_EQUAL(al_semver_parse(&a, "1.0.0-alpha.10", 14, 0), 0);
	CU_ASSERT_EQUAL(al_semver_parse(&b, "1.0.0-alpha.9", 13, 0), 0);
	CU_ASSERT_EQUAL(al_semver_cmp(&a, &b), 1);
	CU_ASSERT_EQUAL(al_semver_parse(&b, "1.0.0-alpha.beta", 16, 0), 0);
	CU_ASSERT_EQUAL(al_semver_cmp(&a, &b), -1);
	CU_ASSERT_EQUAL(al_semver_parse(&b, "1.0.0", 5, 0), 0);
	CU_ASSERT_EQUAL(al_semver_cmp(&a, &b), -1);
}

static void test_graph__version_order(void)
{
	static const char *const sorted[] = {
	    "1.0.0-alpha",  "1.0.0-alpha.1", "1.0.0-alpha.beta",
	    "1.0.0-beta",   "1.0.0-beta.2",  "1.0.0-beta.11",
	    "1.0.0-rc.1",   "1.0.0",         "4.14.9",
	    "4.14.10",      "4.15.0-rc.1",   "4.15.0-rc.2",
	    "4.15.0-rc.10", "4.15.0",        "4.15.1",
	    "10.0.0",       "garbage",       NULL};
	size_t i, j;

	for (i = 0; sorted[i] != NULL; i++) {
		for (j = 0; sorted[j] != NULL; j++) {
			int c = al_version_compare(sorted[i], sorted[j]);
			int want = i < j ? -1 : (i > j ? 1 : 0);

			if (c != want) {
				fprintf(stderr, "%s vs %s: %d, want %d\n",
				        sorted[i], sorted[j], c, want);
				CU_FAIL("order");
			}
		}
	}
	CU_ASSERT_EQUAL(al_version_compare("4.14.1+amd64", "4.14.1"), 0);
	CU_ASSERT_EQUAL(al_version_compare("4.14.01", "4.14.1"), 0);
	CU_ASSERT(al_version_valid("4.15.0-rc.1+s390x"));
	CU_ASSERT(!al_version_valid("4.15"));
	CU_ASSERT(!al_version_valid("4.15.0-"));
	CU_ASSERT(!al_version_valid("4.15.0-rc..1"));
	CU_ASSERT(!al_version_valid("v4.15.0"));
	CU_ASSERT(!al_version_valid(""));
	CU_ASSERT(al_version_compare("b", "a") > 0);
}

static void check_parse_fails(const char *doc, int want, const char *needle)
{
	al_graph *g = NULL;
	int rc =
	    al_graph_parse(&g, (const uint8_t *)doc, strlen(doc), "t.json");

	CU_ASSERT_EQUAL(rc, want);
	CU_ASSERT_PTR_NULL(g);
	al_graph_free(g);
	if (strstr(al_error_message(), needle) == NULL) {
		fprintf(stderr, "message lacks '%s': %s\n", needle,
		        al_error_message());
		CU_FAIL("message");
	}
}

static void test_graph__parse_rejects_malformed(void)
{
	const char *ok =
	    "{\"nodes\":[{\"version\":\"4.1.0\",\"payload\":\"p0\"},"
	    "{\"version\":\"4.1.1\",\"payload\":\"p1\","
	    "\"metadata\":{\"a\":\"b\"}}],\"edges\":[[0,1]],"
	    "\"conditionalEdges\":[{\"edges\":[{\"from\":\"4.0.0\","
	    "\"to\":\"4.1.1\"}],\"risks\":[]}]}";
	al_graph *g = NULL;

	CU_ASSERT_EQUAL(
	    al_graph_parse(&g, (const uint8_t *)ok, strlen(ok), "t"), 0);
	if (g != NULL) {
		CU_ASSERT_EQUAL(g->nnodes, 2);
		CU_ASSERT_EQUAL(g->nedges, 1);
		CU_ASSERT_EQUAL(g->ncond, 0); /* names a version outside */
		CU_ASSERT_STRING_EQUAL(
		    al_json_str(al_graph__json(g->nodes[1].metadata), "a"),
		    "b");
		CU_ASSERT_PTR_NULL(g->channel);
	}
	al_graph_free(g);
	check_parse_fails("[]", AL_EPARSE, "t.json: expected a JSON object");
	check_parse_fails("{\"nodes\":{}}", AL_EPARSE,
	                  "\"nodes\" must be a list");
	check_parse_fails("{\"nodes\":[{\"version\":\"4.1.0\"}]}", AL_EPARSE,
	                  "node 0 needs \"version\" and \"payload\"");
	check_parse_fails(
	    "{\"nodes\":[{\"version\":\"4.1.0\",\"payload\":\"a\"},"
	    "{\"version\":\"4.1.0\",\"payload\":\"b\"}]}",
	    AL_EPARSE, "version '4.1.0' appears twice");
	check_parse_fails(
	    "{\"nodes\":[{\"version\":\"4.1.0\",\"payload\":\"a\"}],"
	    "\"edges\":[[0,1]]}",
	    AL_EPARSE, "edge 0 must be a pair of node indices");
	check_parse_fails(
	    "{\"nodes\":[],\"edges\":[],\"conditionalEdges\":[{}]}", AL_EPARSE,
	    "conditional edge 0 needs");
	check_parse_fails("{\"nodes\":[], \"nodes\":[]}", AL_EPARSE, "t.json");
}

static void test_graph__fetch_recorded_shape(void)
{
	al_graph *g = fetch("", "stable-4.14", "amd64");
	size_t i;

	if (g == NULL)
		return;
	CU_ASSERT_EQUAL(g->nnodes, 5);
	CU_ASSERT_EQUAL(g->nedges, 7);
	CU_ASSERT_EQUAL(g->ncond, 1);
	CU_ASSERT_STRING_EQUAL(g->channel, "stable-4.14");
	CU_ASSERT_STRING_EQUAL(g->arch, "amd64");
	CU_ASSERT_EQUAL(al_graph_find(g, "4.14.9", &i), 0);
	if (g->ncond == 1) {
		CU_ASSERT_STRING_EQUAL(g->nodes[g->cond[0].from].version,
		                       "4.14.1");
		CU_ASSERT_STRING_EQUAL(g->nodes[g->cond[0].to].version,
		                       "4.14.9");
		CU_ASSERT_STRING_EQUAL(
		    al_json_str(
		        json_array_get(al_graph__json(g->cond[0].risks), 0),
		        "name"),
		    "ExampleRisk");
	}
	CU_ASSERT(strstr(g->nodes[0].payload, "@sha256:") != NULL);
	CU_ASSERT_PTR_NOT_NULL(
	    al_json_str(al_graph__json(g->nodes[0].metadata), "url"));
	al_graph_free(g);
}

static void test_graph__select_range(void)
{
	al_graph *g = fetch("", "stable-4.14", "amd64");
	al_graph *c = fetch("", "candidate-4.15", "amd64");

	if (g != NULL) {
		check_select(g, "4.14.2", "4.14.10", 0, 1,
		             "4.14.2 4.14.5 4.14.9 4.14.10");
		check_select(g, NULL, NULL, 0, 1,
		             "4.14.1 4.14.2 4.14.5 4.14.9 4.14.10");
		check_select(g, "4.14.9", NULL, 0, 1, "4.14.9 4.14.10");
		check_select(g, "4.14.5", "4.14.5", 0, 1, "4.14.5");
	}
	if (c != NULL)
		check_select(c, "4.15.0-rc.1", "4.15.0", 0, 1,
		             "4.15.0-rc.1 4.15.0-rc.2 4.15.0");
	al_graph_free(g);
	al_graph_free(c);
}

static void test_graph__select_shortest_path(void)
{
	al_graph *g = fetch("", "stable-4.14", "amd64");
	al_graph *c = fetch("", "candidate-4.15", "amd64");

	if (g != NULL) {
		/* the conditional update 4.14.1 -> 4.14.9 ties with
		 * 4.14.1 -> 4.14.5; the higher release wins */
		check_select(g, "4.14.1", "4.14.10", 1, 1,
		             "4.14.1 4.14.9 4.14.10");
		check_select(g, "4.14.1", "4.14.10", 1, 0,
		             "4.14.1 4.14.5 4.14.10");
		check_select(g, "4.14.2", "4.14.9", 1, 1, "4.14.2 4.14.9");
		check_select(g, "4.14.9", "4.14.9", 1, 1, "4.14.9");
	}
	if (c != NULL) {
		check_select(c, "4.14.10", "4.15.0", 1, 1,
		             "4.14.10 4.15.0-rc.1 4.15.0-rc.2 4.15.0");
		check_select(c, "4.14.10", "4.15.1", 1, 1, "4.14.10 4.15.1");
	}
	al_graph_free(g);
	al_graph_free(c);
}

/* A bounded text buffer for big_graph: a write that does not fit marks
 * it failed. */
typedef struct gbuf {
	char *p;
	size_t cap, off;
	int failed;
} gbuf;

static void put(gbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void put(gbuf *b, const char *fmt, ...)
{
	va_list ap;
	int w;

	if (b->failed)
		return;
	va_start(ap, fmt);
	w = vsnprintf(b->p + b->off, b->cap - b->off, fmt, ap);
	va_end(ap);
	if (w < 0 || (size_t)w >= b->cap - b->off)
		b->failed = 1;
	else
		b->off += (size_t)w;
}

/* A graph of n nodes "1.<i/1000>.<i%1000>" in a chain, conditional edges
 * from node 0 to every 1000th node (and one to a version not in the
 * graph), node dup_at (if < n) repeating the version of node dup_of.
 * Caller frees; NULL when it did not fit. */
static char *big_graph(size_t n, size_t dup_at, size_t dup_of, size_t *len)
{
	gbuf b = {NULL, 0, 0, 0};
	size_t i;

	b.cap = n * 120 + 4096;
	b.p = malloc(b.cap);
	if (b.p == NULL)
		return NULL;
	put(&b, "{\"nodes\":[");
	for (i = 0; i < n; i++) {
		size_t v = i == dup_at ? dup_of : i;
		put(&b,
		    "%s{\"version\":\"1.%zu.%zu\",\"payload\":\"example.com/"
		    "r@%zu\"}",
		    i ? "," : "", v / 1000, v % 1000, i);
	}
	put(&b, "],\"edges\":[");
	for (i = 0; i + 1 < n; i++)
		put(&b, "%s[%zu,%zu]", i ? "," : "", i, i + 1);
	put(&b, "],\"conditionalEdges\":[{\"edges\":[");
	for (i = 1000; i < n; i += 1000)
		put(&b, "{\"from\":\"1.0.0\",\"to\":\"1.%zu.%zu\"},", i / 1000,
		    i % 1000);
	put(&b, "{\"from\":\"1.0.0\",\"to\":\"9.9.9\"}],\"risks\":[]}]}");
	if (b.failed) {
		free(b.p);
		return NULL;
	}
	*len = b.off;
	return b.p;
}

/* 200k nodes (the limit): parsed, duplicates found, lookups right. The
 * quadratic duplicate check took 17 s for 60k nodes; the time is printed,
 * tests/bench/graph_parse.sh measures it against jansson alone. */
static void test_graph__parse_200k_nodes(void)
{
	const size_t n = 200000;
	al_graph *g = NULL;
	size_t len = 0, *idx = NULL, nidx = 0;
	char *doc = big_graph(n, n, 0, &len);
	uint64_t t0;

	CU_ASSERT_PTR_NOT_NULL(doc);
	if (doc == NULL)
		return;
	t0 = al_clock_now_ms();
	CU_ASSERT_EQUAL(al_graph_parse(&g, (const uint8_t *)doc, len, "big"),
	                0);
	printf("\n  200k-node graph (%zu bytes) parsed in %llu ms\n", len,
	       (unsigned long long)(al_clock_now_ms() - t0));
	if (g != NULL) {
		CU_ASSERT_EQUAL(g->nnodes, n);
		CU_ASSERT_EQUAL(g->nedges, n - 1);
		/* every 1000th node, not the one outside the graph */
		CU_ASSERT_EQUAL(g->ncond, n / 1000 - 1);
		if (g->ncond == n / 1000 - 1) {
			CU_ASSERT_EQUAL(g->cond[0].from, 0);
			CU_ASSERT_EQUAL(g->cond[0].to, 1000);
			CU_ASSERT_EQUAL(g->cond[g->ncond - 1].to, n - 1000);
		}
		/* shortest path over a conditional edge: two releases */
		CU_ASSERT_EQUAL(
		    al_graph_select(g, "1.0.0", "1.199.0", 1, 1, &idx, &nidx),
		    0);
		CU_ASSERT_EQUAL(nidx, 2);
		if (nidx == 2) {
			CU_ASSERT_EQUAL(idx[0], 0);
			CU_ASSERT_EQUAL(idx[1], n - 1000);
		}
		free(idx);
	}
	al_graph_free(g);
	free(doc);
	/* the last node repeats a version in the middle */
	doc = big_graph(n, n - 1, 123456, &len);
	CU_ASSERT_PTR_NOT_NULL(doc);
	g = NULL;
	if (doc != NULL) {
		CU_ASSERT_EQUAL(
		    al_graph_parse(&g, (const uint8_t *)doc, len, "big"),
		    AL_EPARSE);
		CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(),
		                              "version '1.123.456' appears "
		                              "twice"));
		CU_ASSERT_PTR_NULL(g);
	}
	free(doc);
}

static void test_graph__select_errors(void)
{
	al_graph *g = fetch("", "stable-4.14", "amd64");
	al_graph *s = fetch("", "stable-4.15", "amd64");
	al_graph *e = fetch("", "empty-4.16", "amd64");

	if (g != NULL) {
		check_select_fails(g, "4.14.3", "4.14.10", 0, AL_ENOTFOUND,
		                   "version '4.14.3' is not in channel "
		                   "'stable-4.14'");
		check_select_fails(g, "4.14.1", "4.15.0", 1, AL_ENOTFOUND,
		                   "version '4.15.0' is not in channel "
		                   "'stable-4.14'");
		check_select_fails(
		    g, "4.14.10", "4.14.9", 0, AL_EINVAL,
		    "minVersion 4.14.10 is higher than "
		    "maxVersion 4.14.9 in channel 'stable-4.14'");
	}
	if (s != NULL)
		check_select_fails(s, "4.14.10", "4.15.0", 1, AL_ENOTFOUND,
		                   "no update path from 4.14.10 to 4.15.0 in "
		                   "channel 'stable-4.15'");
	if (e != NULL) {
		CU_ASSERT_EQUAL(e->nnodes, 0);
		check_select_fails(e, NULL, NULL, 0, AL_ENOTFOUND,
		                   "channel 'empty-4.16' has no releases");
	}
	al_graph_free(g);
	al_graph_free(s);
	al_graph_free(e);
}

static void test_graph__hanging_server_bounded(void)
{
	al_http_opts o = fast_http();
	const char *b = server();
	al_graph *g = NULL;
	char *base;
	uint64_t t0, elapsed;
	int rc;

	CU_ASSERT_PTR_NOT_NULL(b);
	if (b == NULL)
		return;
	base = al_sprintf("%s/hang", b);
	/* On the virtual clock, and the server never answers: the budget is
	 * reached as soon as the fetch has waited a moment, whatever the
	 * machine's load (docs/testing.md). */
	al_clock_use_virtual(1000, 0);
	al__clock_set_idle_ms(100);
	t0 = al_clock_now_ms();
	rc = al_graph_fetch(&g, base, "stable-4.14", "amd64", &o,
	                    al_deadline_in(1500));
	elapsed = al_clock_now_ms() - t0;
	al__clock_set_idle_ms(0);
	al_clock_set_source(NULL);
	CU_ASSERT_EQUAL(rc, AL_ETIMEOUT);
	CU_ASSERT_PTR_NULL(g);
	CU_ASSERT(elapsed <= 1500);
	CU_ASSERT(strstr(al_error_message(), "channel 'stable-4.14'") != NULL);
	printf("hanging graph server: gave up after %llu ms (budget 1500)\n",
	       (unsigned long long)elapsed);
	al_graph_free(g);
	free(base);
}

static void test_graph__server_errors_and_retries(void)
{
	al_http_opts o = fast_http();
	const char *b = server();
	al_graph *g = NULL;
	char *base = NULL;
	uint64_t t0;
	int rc;

	CU_ASSERT_PTR_NOT_NULL(b);
	if (b == NULL)
		return;
	base = al_sprintf("%s/500", b);
	rc = al_graph_fetch(&g, base, "stable-4.14", "amd64", &o,
	                    al_deadline_in(5000));
	CU_ASSERT_EQUAL(rc, AL_EPROTO);
	CU_ASSERT(strstr(al_error_message(), "HTTP 500") != NULL);
	CU_ASSERT(strstr(al_error_message(), "channel 'stable-4.14'") != NULL);
	al_graph_free(g);
	g = NULL;
	free(base);
	/* flaky: the first answer is 500, the retry succeeds */
	base = al_sprintf("%s/flaky", b);
	rc = al_graph_fetch(&g, base, "stable-4.15", "amd64", &o,
	                    al_deadline_in(5000));
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT(g != NULL && g->nnodes == 4);
	al_graph_free(g);
	g = NULL;
	free(base);
	/* slow: answers within the budget */
	base = al_sprintf("%s/slow", b);
	t0 = al_clock_now_ms();
	rc = al_graph_fetch(&g, base, "stable-4.15", "amd64", &o,
	                    al_deadline_in(5000));
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT(al_clock_now_ms() - t0 >= 900);
	al_graph_free(g);
	g = NULL;
	free(base);
	/* bad arguments never reach the network */
	CU_ASSERT_EQUAL(
	    al_graph_fetch(&g, b, "a/b", "amd64", &o, AL_DEADLINE_NONE),
	    AL_EINVAL);
	CU_ASSERT_EQUAL(
	    al_graph_fetch(&g, "ftp://x", "a", "amd64", &o, AL_DEADLINE_NONE),
	    AL_EINVAL);
	CU_ASSERT_PTR_NULL(g);
}

static void test_graph__file_source_and_store(void)
{
	al_graph *g = fetch("", "stable-4.14", "amd64");
	al_graph *f = NULL, *s2 = NULL;
	al_store *st = NULL;
	al_store_opts so = {.create = 1};
	char *path = al_path_join(al_test_tmpdir(), "g.json");
	char *sdir = al_path_join(al_test_tmpdir(), "store-fs");
	char *saved = NULL;
	json_t *doc = NULL;

	if (g == NULL || path == NULL || sdir == NULL)
		goto out;
	doc = al_graph_to_json(g);
	CU_ASSERT_EQUAL(al_json_save_file(path, doc, 1), 0);
	CU_ASSERT_EQUAL(al_graph_load_file(&f, path), 0);
	if (f != NULL) {
		CU_ASSERT_EQUAL(f->nnodes, g->nnodes);
		CU_ASSERT_EQUAL(f->nedges, g->nedges);
		CU_ASSERT_EQUAL(f->ncond, g->ncond);
		CU_ASSERT_STRING_EQUAL(f->channel, "stable-4.14");
		check_select(f, "4.14.1", "4.14.10", 1, 1,
		             "4.14.1 4.14.9 4.14.10");
	}
	CU_ASSERT_EQUAL(al_graph_load_file(&s2, "/nonexistent/g.json"),
	                AL_ENOTFOUND);
	CU_ASSERT(strstr(al_error_message(), "/nonexistent/g.json") != NULL);
	CU_ASSERT_EQUAL(al_store_open(&st, sdir, &so), 0);
	if (st == NULL)
		goto out;
	CU_ASSERT_EQUAL(al_graph_save_to_store(st, g), 0);
	saved = al_sprintf("%s/airlock/graph/stable-4.14-amd64.json", sdir);
	CU_ASSERT_EQUAL(al_fs_exists(saved), 1);
	CU_ASSERT_EQUAL(
	    al_graph_load_from_store(&s2, st, "stable-4.14", "amd64"), 0);
	CU_ASSERT(s2 != NULL && s2->nnodes == 5 && s2->ncond == 1);
	al_graph_free(s2);
	s2 = NULL;
	CU_ASSERT_EQUAL(al_graph_load_from_store(&s2, st, "fast-4.14", "amd64"),
	                AL_ENOTFOUND);
	CU_ASSERT(strstr(al_error_message(), "'fast-4.14'") != NULL);
out:
	al_store_free(st);
	json_decref(doc);
	al_graph_free(g);
	al_graph_free(f);
	al_graph_free(s2);
	free(path);
	free(sdir);
	free(saved);
}

static char *write_text(const char *name, const char *text)
{
	char *path = al_path_join(al_test_tmpdir(), name);

	if (path != NULL && al_fs_write_atomic(path, text, strlen(text)) != 0) {
		free(path);
		return NULL;
	}
	return path;
}

static const al_graph_release *find_rel(const al_graph_selection *sel,
                                        const char *version, const char *arch)
{
	size_t i;

	for (i = 0; i < sel->nreleases; i++)
		if (strcmp(sel->releases[i].version, version) == 0 &&
		    strcmp(sel->releases[i].arch, arch) == 0)
			return &sel->releases[i];
	return NULL;
}

static void test_graph__resolve_imageset(void)
{
	const char *b = server();
	char *yaml = NULL, *path = NULL;
	al_imageset *cfg = NULL;
	al_graph_selection sel;
	al_graph_opts opts = AL_GRAPH_OPTS_INIT;
	al_http_opts ho = fast_http();
	const al_graph_release *r;
	int rc;

	memset(&sel, 0, sizeof(sel));
	CU_ASSERT_PTR_NOT_NULL(b);
	if (b == NULL)
		return;
	yaml = al_sprintf("kind: ImageSetConfiguration\n"
	                  "apiVersion: mirror.openshift.io/v2alpha1\n"
	                  "mirror:\n"
	                  "  platform:\n"
	                  "    architectures: [amd64, arm64]\n"
	                  "    channels:\n"
	                  "    - name: stable-4.14\n"
	                  "      minVersion: 4.14.9\n"
	                  "      maxVersion: 4.14.10\n"
	                  "    - name: stable-4.15\n"
	                  "      minVersion: 4.14.9\n"
	                  "      maxVersion: 4.15.1\n"
	                  "      shortestPath: true\n"
	                  "    - name: candidate-4.15\n"
	                  "airlock:\n"
	                  "  graph:\n"
	                  "    url: %s\n",
	                  b);
	path = yaml != NULL ? write_text("channels.yaml", yaml) : NULL;
	CU_ASSERT_EQUAL(al_imageset_load(&cfg, path), 0);
	if (cfg == NULL)
		goto out;
	opts.http = &ho;
	opts.deadline = al_deadline_in(10000);
	rc = al_graph_resolve_imageset(cfg, &opts, &sel);
	if (rc != 0)
		fprintf(stderr, "resolve: %s\n", al_error_message());
	CU_ASSERT_EQUAL(rc, 0);
	/* per arch: 4.14.9, 4.14.10 (stable-4.14 and stable-4.15), 4.15.0?
	 * no: the shortest path 4.14.9 -> 4.15.1 is 4.14.9 4.14.10 4.15.1
	 * or 4.14.9 4.15.0 4.15.1 (the higher step wins: 4.15.0);
	 * candidate-4.15 without bounds: only its latest, 4.15.1 */
	CU_ASSERT_EQUAL(sel.nreleases, 8);
	CU_ASSERT_EQUAL(sel.ngraphs, 6);
	r = find_rel(&sel, "4.14.10", "amd64");
	CU_ASSERT(r != NULL && r->nchannels == 1 &&
	          strcmp(r->channels[0], "stable-4.14") == 0);
	r = find_rel(&sel, "4.14.9", "arm64");
	CU_ASSERT(r != NULL && r->nchannels == 2);
	r = find_rel(&sel, "4.15.1", "amd64");
	CU_ASSERT(r != NULL && r->nchannels == 2 &&
	          strcmp(r->channels[0], "stable-4.15") == 0 &&
	          strcmp(r->channels[1], "candidate-4.15") == 0);
	CU_ASSERT(r != NULL && strstr(r->payload, "@sha256:") != NULL);
	CU_ASSERT_PTR_NOT_NULL(find_rel(&sel, "4.15.0", "arm64"));
	CU_ASSERT_PTR_NULL(find_rel(&sel, "4.14.5", "amd64"));
	if (sel.nreleases == 8) {
		CU_ASSERT_STRING_EQUAL(sel.releases[0].arch, "amd64");
		CU_ASSERT_STRING_EQUAL(sel.releases[0].version, "4.14.9");
		CU_ASSERT_STRING_EQUAL(sel.releases[3].version, "4.15.1");
	}
	al_graph_selection_clear(&sel);
	/* a channel range naming a release the channel lacks */
	free(cfg->channels[0].min_version);
	cfg->channels[0].min_version = al_strdup("4.14.3");
	CU_ASSERT_EQUAL(al_graph_resolve_imageset(cfg, &opts, &sel),
	                AL_ENOTFOUND);
	CU_ASSERT(strstr(al_error_message(),
	                 "version '4.14.3' is not in channel 'stable-4.14'") !=
	          NULL);
	al_graph_selection_clear(&sel);
	al_graph_selection_clear(NULL);
out:
	al_graph_selection_clear(&sel);
	al_imageset_free(cfg);
	free(yaml);
	free(path);
}

static void test_graph__resolve_from_graph_files(void)
{
	al_graph *g = fetch("", "stable-4.14", "amd64");
	char *dir = al_path_join(al_test_tmpdir(), "graphs");
	char *gpath = NULL, *cpath = NULL;
	json_t *doc = NULL;
	al_imageset *cfg = NULL;
	al_graph_selection sel;
	al_graph_opts opts = AL_GRAPH_OPTS_INIT;

	memset(&sel, 0, sizeof(sel));
	if (g == NULL || dir == NULL)
		goto out;
	CU_ASSERT_EQUAL(al_fs_mkdir_p(dir, 0755), 0);
	gpath = al_sprintf("%s/stable-4.14-amd64.json", dir);
	doc = al_graph_to_json(g);
	CU_ASSERT_EQUAL(al_json_save_file(gpath, doc, 0), 0);
	cpath = write_text("files.yaml",
	                   "kind: ImageSetConfiguration\n"
	                   "apiVersion: mirror.openshift.io/v2alpha1\n"
	                   "mirror:\n"
	                   "  platform:\n"
	                   "    channels:\n"
	                   "    - name: stable-4.14\n"
	                   "      minVersion: 4.14.1\n"
	                   "      shortestPath: true\n"
	                   "airlock:\n"
	                   "  graph:\n"
	                   "    url: http://127.0.0.1:9/never-contacted\n"
	                   "    excludeConditional: true\n");
	CU_ASSERT_EQUAL(al_imageset_load(&cfg, cpath), 0);
	if (cfg == NULL)
		goto out;
	/* a directory of <channel>-<arch>.json */
	opts.graph_file = dir;
	CU_ASSERT_EQUAL(al_graph_resolve_imageset(cfg, &opts, &sel), 0);
	CU_ASSERT_EQUAL(sel.nreleases, 3);
	CU_ASSERT_PTR_NOT_NULL(find_rel(&sel, "4.14.5", "amd64"));
	CU_ASSERT_PTR_NULL(find_rel(&sel, "4.14.9", "amd64"));
	al_graph_selection_clear(&sel);
	/* one file for every channel */
	opts.graph_file = gpath;
	CU_ASSERT_EQUAL(al_graph_resolve_imageset(cfg, &opts, &sel), 0);
	CU_ASSERT_EQUAL(sel.nreleases, 3);
	al_graph_selection_clear(&sel);
	/* a directory without that channel */
	free(cfg->channels[0].name);
	cfg->channels[0].name = al_strdup("fast-4.14");
	opts.graph_file = dir;
	CU_ASSERT_EQUAL(al_graph_resolve_imageset(cfg, &opts, &sel),
	                AL_ENOTFOUND);
	CU_ASSERT(strstr(al_error_message(), "fast-4.14-amd64.json") != NULL);
out:
	al_graph_selection_clear(&sel);
	al_imageset_free(cfg);
	json_decref(doc);
	al_graph_free(g);
	free(dir);
	free(gpath);
	free(cpath);
}

static char *slurp(const char *path)
{
	al_buf b = AL_BUF_INIT(1024 * 1024);

	if (al_fs_read_file(path, &b) != 0) {
		al_buf_free(&b);
		return NULL;
	}
	return al_buf_detach(&b, NULL);
}

static void expect_file(const char *dir, const char *rel, const char *needle)
{
	char *p = al_sprintf("%s/%s", dir, rel);
	char *text = p != NULL ? slurp(p) : NULL;

	if (text == NULL || strstr(text, needle) == NULL) {
		fprintf(stderr, "%s: lacks '%s':\n%s\n", rel, needle,
		        text != NULL ? text : "(missing)");
		CU_FAIL("graph data file");
	}
	free(text);
	free(p);
}

static void test_graph__write_data(void)
{
	al_graph *g = fetch("", "stable-4.14", "amd64");
	char *sdir = al_path_join(al_test_tmpdir(), "store-data");
	char *out = al_path_join(al_test_tmpdir(), "graph-data");
	al_store *st = NULL;
	al_store_opts so = {.create = 1};
	al_graph_data_report rep = AL_GRAPH_DATA_REPORT_INIT;
	json_t *rel = NULL;
	size_t i1, i9, i10;
	al_graph *r = NULL;
	char *rpath = NULL;

	if (g == NULL || sdir == NULL || out == NULL ||
	    al_graph_find(g, "4.14.1", &i1) != 0 ||
	    al_graph_find(g, "4.14.9", &i9) != 0 ||
	    al_graph_find(g, "4.14.10", &i10) != 0)
		goto out;
	CU_ASSERT_EQUAL(al_store_open(&st, sdir, &so), 0);
	if (st == NULL)
		goto out;
	CU_ASSERT_EQUAL(al_graph_write_data(st, out, &rep), AL_ENOTFOUND);
	/* 4.14.1 matched by digest, 4.14.9 by version, 4.14.10 by digest;
	 * 4.13.7 only through the channels mirror recorded */
	rel = json_pack(
	    "{s:[{s:s, s:s}, {s:s, s:s}, {s:s, s:s}, {s:s, s:s, s:[s]}]}",
	    "releases", "version", "4.14.1", "digest",
	    strchr(g->nodes[i1].payload, '@') + 1, "version", "4.14.9",
	    "digest", "sha256:00", "version", "4.14.10", "digest",
	    strchr(g->nodes[i10].payload, '@') + 1, "version", "4.13.7",
	    "digest", "sha256:11", "channels", "fast-4.14");
	CU_ASSERT_EQUAL(al_store_releases_save(st, rel), 0);
	CU_ASSERT_EQUAL(al_graph_save_to_store(st, g), 0);
	memset(&rep, 0, sizeof(rep));
	CU_ASSERT_EQUAL(al_graph_write_data(st, out, &rep), 0);
	CU_ASSERT_EQUAL(rep.channels, 2);
	CU_ASSERT_EQUAL(rep.graphs, 1);
	CU_ASSERT_EQUAL(rep.versions, 4);
	CU_ASSERT_EQUAL(rep.blocked_edges, 2);
	expect_file(out, "version", "1.");
	expect_file(out, "channels/stable-4.14.yaml",
	            "name: stable-4.14\nversions:\n- '4.14.1'\n- '4.14.9'\n- "
	            "'4.14.10'\n");
	expect_file(out, "channels/fast-4.14.yaml", "- '4.13.7'");
	expect_file(out, "blocked-edges/4.14.9-ExampleRisk.yaml",
	            "to: '4.14.9'");
	expect_file(out, "blocked-edges/4.14.9-ExampleRisk.yaml",
	            "from: 4[.]14[.]1\n");
	expect_file(out, "blocked-edges/4.14.9-ExampleRisk.yaml",
	            "name: ExampleRisk");
	expect_file(out, "blocked-edges/4.14.9-ExampleRisk.yaml",
	            "matchingRules:");
	expect_file(out,
	            "blocked-edges/4.14.10+amd64-airlock-not-in-graph.yaml",
	            "from: 4[.]14[.]1\n");
	rpath = al_sprintf("%s/airlock/graph/stable-4.14-amd64.json", out);
	CU_ASSERT_EQUAL(al_graph_load_file(&r, rpath), 0);
	if (r != NULL) {
		CU_ASSERT_EQUAL(r->nnodes, 3);
		CU_ASSERT_EQUAL(r->nedges, 1);
		CU_ASSERT_EQUAL(r->ncond, 1);
		check_select(r, NULL, NULL, 1, 1, "4.14.1 4.14.9 4.14.10");
	}
out:
	al_graph_free(r);
	json_decref(rel);
	al_store_free(st);
	al_graph_free(g);
	free(sdir);
	free(out);
	free(rpath);
}

int main(void)
{
	CU_TestInfo tests[] = {
	    {"test_graph__version_order", test_graph__version_order},
	    {"test_graph__semver_dialects", test_graph__semver_dialects},
	    {"test_graph__parse_rejects_malformed",
	     test_graph__parse_rejects_malformed},
	    {"test_graph__fetch_recorded_shape",
	     test_graph__fetch_recorded_shape},
	    {"test_graph__select_range", test_graph__select_range},
	    {"test_graph__select_shortest_path",
	     test_graph__select_shortest_path},
	    {"test_graph__select_errors", test_graph__select_errors},
	    {"test_graph__parse_200k_nodes", test_graph__parse_200k_nodes},
	    {"test_graph__hanging_server_bounded",
	     test_graph__hanging_server_bounded},
	    {"test_graph__server_errors_and_retries",
	     test_graph__server_errors_and_retries},
	    {"test_graph__file_source_and_store",
	     test_graph__file_source_and_store},
	    {"test_graph__resolve_imageset", test_graph__resolve_imageset},
	    {"test_graph__resolve_from_graph_files",
	     test_graph__resolve_from_graph_files},
	    {"test_graph__write_data", test_graph__write_data},
	    CU_TEST_INFO_NULL,
	};
	int rc = al_test_run("graph", tests);

	stop_server();
	return rc;
}
