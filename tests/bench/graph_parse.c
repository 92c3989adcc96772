/* graph_parse.c: benchmark: al_graph_parse of one update-graph file against
 * json_loadb (jansson alone, the same flags) of the same bytes. */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "airlock/error.h"
#include "airlock/graph.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : (x > y ? 1 : 0);
}

/* Seconds for one al_graph_parse of p (the graph freed after). */
static double time_airlock(const uint8_t *p, size_t n, size_t *nodes)
{
	al_graph *g = NULL;
	double t0 = now_s(), t;

	if (al_graph_parse(&g, p, n, "bench") < 0) {
		fprintf(stderr, "graph_parse: %s\n", al_error_message());
		exit(1);
	}
	t = now_s() - t0;
	*nodes = g->nnodes;
	al_graph_free(g);
	return t;
}

/* Seconds for one json_loadb of p with al_json_parse's flags. */
static double time_jansson(const uint8_t *p, size_t n)
{
	json_error_t err;
	json_t *v;
	double t0 = now_s(), t;

	v = json_loadb((const char *)p, n,
	               JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &err);
	if (v == NULL) {
		fprintf(stderr, "graph_parse: jansson: %s\n", err.text);
		exit(1);
	}
	t = now_s() - t0;
	json_decref(v);
	return t;
}

int main(int argc, char **argv)
{
	FILE *f;
	uint8_t *p;
	long len;
	size_t n, nodes = 0, i, pairs;
	double *ratio, *ta, *tj;
	char *end = NULL;

	if (argc != 3) {
		fprintf(stderr, "usage: graph_parse GRAPH.json PAIRS\n");
		return 2;
	}
	pairs = (size_t)strtoul(argv[2], &end, 10);
	if (end == argv[2] || *end != '\0' || pairs < 1 || pairs > 1000) {
		fprintf(stderr, "graph_parse: PAIRS must be 1..1000\n");
		return 2;
	}
	f = fopen(argv[1], "rb");
	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) != 0) {
		perror(argv[1]);
		return 1;
	}
	n = (size_t)len;
	p = malloc(n + 1);
	ratio = calloc(pairs, sizeof(*ratio));
	ta = calloc(pairs, sizeof(*ta));
	tj = calloc(pairs, sizeof(*tj));
	if (p == NULL || ratio == NULL || ta == NULL || tj == NULL ||
	    fread(p, 1, n, f) != n) {
		fprintf(stderr, "graph_parse: cannot read %s\n", argv[1]);
		return 1;
	}
	fclose(f);
	/* interleaved: A B A B ..., so that drift hits both alike */
	for (i = 0; i < pairs; i++) {
		ta[i] = time_airlock(p, n, &nodes);
		tj[i] = time_jansson(p, n);
		ratio[i] = ta[i] / tj[i];
		printf("pair %zu: al_graph_parse %.3f s, jansson %.3f s, ratio "
		       "%.2f\n",
		       i + 1, ta[i], tj[i], ratio[i]);
	}
	qsort(ratio, pairs, sizeof(*ratio), cmp_double);
	qsort(ta, pairs, sizeof(*ta), cmp_double);
	qsort(tj, pairs, sizeof(*tj), cmp_double);
	printf("%zu nodes, %zu bytes, %zu pairs: al_graph_parse median %.3f s, "
	       "jansson median %.3f s\n",
	       nodes, n, pairs, ta[pairs / 2], tj[pairs / 2]);
	printf("ratio al_graph_parse / jansson: median %.2f (range %.2f .. "
	       "%.2f)\n",
	       ratio[pairs / 2], ratio[0], ratio[pairs - 1]);
	free(p);
	free(ratio);
	free(ta);
	free(tj);
	return 0;
}
