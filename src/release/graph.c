/* graph.c: update-graph documents (parse, fetch, load, save) and release
 * selection between versions. Versions: version.c; imageset channels:
 * graph_imageset.c; update-service graph data: graph_data.c. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "airlock/graph.h"
#include "graph_int.h"
#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "json_int.h"
#include "airlock/log.h"
#include "yaml_int.h"
#include "error_int.h"

#define MAX_NODES 200000
#define MAX_EDGES 4000000

static int is_alnum_dash(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z') || c == '-';
}

/* ---------------------------------------------------------------- graphs */

/* Free g and everything it owns; NULL is a no-op. */
void al_graph_free(al_graph *g)
{
	size_t i;

	if (g == NULL)
		return;
	for (i = 0; i < g->nnodes; i++) {
		free(g->nodes[i].version);
		free(g->nodes[i].payload);
		json_decref(al_graph__json(g->nodes[i].metadata));
	}
	for (i = 0; i < g->ncond; i++)
		json_decref(al_graph__json(g->cond[i].risks));
	free(g->nodes);
	free(g->edges);
	free(g->cond);
	free(g->channel);
	free(g->arch);
	free(g);
}

/* Index of version in g; AL_ENOTFOUND naming the version and channel. */
int al_graph_find(const al_graph *g, const char *version, size_t *idx)
{
	size_t i;

	for (i = 0; version != NULL && i < g->nnodes; i++) {
		if (strcmp(g->nodes[i].version, version) == 0) {
			*idx = i;
			return 0;
		}
	}
	return al_error_set(AL_ENOTFOUND, "version '%s' is not in channel '%s'",
	                    version != NULL ? version : "(none)",
	                    g->channel != NULL ? g->channel : "(unknown)");
}

/* Node indices sorted by version bytes (strcmp), for duplicate detection
 * and lookups while a document is parsed: O(n log n) however many nodes
 * and conditional edges it lists. */
typedef struct ver_index {
	const char *version;
	size_t node;
} ver_index;

static int ver_index_cmp(const void *a, const void *b)
{
	const ver_index *x = a, *y = b;
	int c = strcmp(x->version, y->version);

	if (c != 0)
		return c;
	return x->node < y->node ? -1 : (x->node > y->node ? 1 : 0);
}

static int find_sorted(const ver_index *vi, size_t n, const char *version,
                       size_t *idx)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(vi[mid].version, version);
		if (c == 0) {
			*idx = vi[mid].node;
			return 0;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* Nodes of the document into g; *sorted (caller frees) indexes them. */
static int parse_nodes(al_graph *g, const json_t *nodes, const char *what,
                       ver_index **sorted)
{
	size_t i, n = json_array_size(nodes);
	const json_t *node, *md;
	const char *ver, *pay;
	ver_index *vi;

	if (!json_is_array(nodes))
		return al_error_set(AL_EPARSE, "%s: \"nodes\" must be a list",
		                    what);
	if (n > MAX_NODES)
		return al_error_set(AL_ELIMIT, "%s: more than %d nodes", what,
		                    MAX_NODES);
	g->nodes = calloc(n + 1, sizeof(*g->nodes));
	vi = calloc(n + 1, sizeof(*vi));
	if (g->nodes == NULL || vi == NULL) {
		free(vi);
		return al_error_oom();
	}
	*sorted = vi;
	for (i = 0; i < n; i++) {
		node = json_array_get(nodes, i);
		ver = al_json_str(node, "version");
		pay = al_json_str(node, "payload");
		if (ver == NULL || pay == NULL || ver[0] == '\0' ||
		    pay[0] == '\0')
			return al_error_set(
			    AL_EPARSE,
			    "%s: node %zu needs \"version\" and "
			    "\"payload\" strings",
			    what, i);
		md = json_object_get(node, "metadata");
		if (md != NULL && !json_is_object(md))
			return al_error_set(AL_EPARSE,
			                    "%s: metadata of '%s' must be an "
			                    "object",
			                    what, ver);
		g->nodes[i].version = al_strdup(ver);
		g->nodes[i].payload = al_strdup(pay);
		g->nodes[i].metadata = al_graph__opaque(
		    md != NULL ? json_incref((json_t *)md) : json_object());
		g->nnodes++;
		if (g->nodes[i].version == NULL ||
		    g->nodes[i].payload == NULL || g->nodes[i].metadata == NULL)
			return al_error_oom();
		vi[i].version = g->nodes[i].version;
		vi[i].node = i;
	}
	/* Sorted by version then position: the first repeat in the sorted
	 * order is reported, the one named by the earliest second copy. */
	qsort(vi, n, sizeof(*vi), ver_index_cmp);
	{
		size_t dup = n;
		for (i = 1; i < n; i++)
			if (strcmp(vi[i - 1].version, vi[i].version) == 0 &&
			    (dup == n || vi[i].node < vi[dup].node))
				dup = i;
		if (dup != n)
			return al_error_set(AL_EPARSE,
			                    "%s: version '%s' appears twice",
			                    what, vi[dup].version);
	}
	return 0;
}

static int parse_edges(al_graph *g, const json_t *edges, const char *what)
{
	size_t i, n = json_array_size(edges);
	const json_t *e, *a, *b;

	if (edges == NULL)
		return 0;
	if (!json_is_array(edges))
		return al_error_set(AL_EPARSE, "%s: \"edges\" must be a list",
		                    what);
	if (n > MAX_EDGES)
		return al_error_set(AL_ELIMIT, "%s: more than %d edges", what,
		                    MAX_EDGES);
	g->edges = calloc(n + 1, sizeof(*g->edges));
	if (g->edges == NULL)
		return al_error_oom();
	for (i = 0; i < n; i++) {
		e = json_array_get(edges, i);
		a = json_array_get(e, 0);
		b = json_array_get(e, 1);
		if (!json_is_array(e) || json_array_size(e) != 2 ||
		    !json_is_integer(a) || !json_is_integer(b) ||
		    json_integer_value(a) < 0 || json_integer_value(b) < 0 ||
		    (uint64_t)json_integer_value(a) >= g->nnodes ||
		    (uint64_t)json_integer_value(b) >= g->nnodes)
			return al_error_set(
			    AL_EPARSE,
			    "%s: edge %zu must be a pair of node "
			    "indices below %zu",
			    what, i, g->nnodes);
		g->edges[i].from = (size_t)json_integer_value(a);
		g->edges[i].to = (size_t)json_integer_value(b);
		g->nedges++;
	}
	return 0;
}

static int add_cond(al_graph *g, size_t from, size_t to, json_t *risks)
{
	al_graph_cond_edge *p;

	if (g->ncond >= MAX_EDGES)
		return al_error_set(AL_ELIMIT, "more than %d conditional edges",
		                    MAX_EDGES);
	/* doubling: a long list of conditional edges stays linear */
	if (g->ncond == 0 ||
	    (g->ncond >= 16 && (g->ncond & (g->ncond - 1)) == 0)) {
		size_t cap = g->ncond == 0 ? 16 : g->ncond * 2;
		p = realloc(g->cond, cap * sizeof(*p));
		if (p == NULL)
			return al_error_oom();
		g->cond = p;
	}
	p = g->cond;
	p[g->ncond].from = from;
	p[g->ncond].to = to;
	p[g->ncond].risks = al_graph__opaque(json_incref(risks));
	g->ncond++;
	return 0;
}

static int parse_cond(al_graph *g, const json_t *list, const char *what,
                      const ver_index *vi)
{
	size_t i, j, from, to;
	const json_t *ce, *edges, *e, *risks;
	const char *f, *t;
	int rc;

	if (list == NULL)
		return 0;
	if (!json_is_array(list))
		return al_error_set(
		    AL_EPARSE, "%s: \"conditionalEdges\" must be a list", what);
	for (i = 0; i < json_array_size(list); i++) {
		ce = json_array_get(list, i);
		edges = json_object_get(ce, "edges");
		risks = json_object_get(ce, "risks");
		if (!json_is_array(edges) || !json_is_array(risks))
			return al_error_set(AL_EPARSE,
			                    "%s: conditional edge %zu needs "
			                    "\"edges\" and \"risks\" lists",
			                    what, i);
		for (j = 0; j < json_array_size(edges); j++) {
			e = json_array_get(edges, j);
			f = al_json_str(e, "from");
			t = al_json_str(e, "to");
			if (f == NULL || t == NULL)
				return al_error_set(
				    AL_EPARSE,
				    "%s: conditional edge %zu needs \"from\" "
				    "and \"to\" versions",
				    what, i);
			if (find_sorted(vi, g->nnodes, f, &from) < 0 ||
			    find_sorted(vi, g->nnodes, t, &to) < 0) {
				al_log_debug("%s: conditional edge %s -> %s "
				             "names a release outside the "
				             "graph; ignored",
				             what, f, t);
				continue;
			}
			if ((rc = add_cond(g, from, to, (json_t *)risks)) < 0)
				return rc;
		}
	}
	return 0;
}

/* Parse an update-service graph document (see graph.h for what is refused). */
int al_graph_parse(al_graph **out, const uint8_t *p, size_t n, const char *what)
{
	json_t *doc = NULL;
	const json_t *al;
	al_graph *g = NULL;
	ver_index *vi = NULL;
	const char *s;
	int rc;

	if (what == NULL)
		what = "update graph";
	if (n > AL_GRAPH_MAX_BYTES)
		return al_error_set(AL_ELIMIT, "%s: larger than %d bytes", what,
		                    AL_GRAPH_MAX_BYTES);
	if ((rc = al_json_parse(&doc, p, n, what)) < 0)
		return rc;
	if (!json_is_object(doc)) {
		rc =
		    al_error_set(AL_EPARSE, "%s: expected a JSON object", what);
		goto out;
	}
	g = calloc(1, sizeof(*g));
	if (g == NULL) {
		rc = al_error_oom();
		goto out;
	}
	if ((rc = parse_nodes(g, json_object_get(doc, "nodes"), what, &vi)) <
	        0 ||
	    (rc = parse_edges(g, json_object_get(doc, "edges"), what)) < 0 ||
	    (rc = parse_cond(g, json_object_get(doc, "conditionalEdges"), what,
	                     vi)) < 0)
		goto out;
	al = json_object_get(doc, "airlock");
	if ((s = al_json_str(al, "channel")) != NULL &&
	    (g->channel = al_strdup(s)) == NULL) {
		rc = al_error_oom();
		goto out;
	}
	if ((s = al_json_str(al, "arch")) != NULL &&
	    (g->arch = al_strdup(s)) == NULL) {
		rc = al_error_oom();
		goto out;
	}
	*out = g;
	g = NULL;
out:
	free(vi);
	al_graph_free(g);
	json_decref(doc);
	return rc;
}

/* Read and parse a graph file of at most AL_GRAPH_MAX_BYTES. */
int al_graph_load_file(al_graph **out, const char *path)
{
	al_buf b = AL_BUF_INIT(AL_GRAPH_MAX_BYTES);
	int rc;

	rc = al_fs_read_file(path, &b);
	if (rc == AL_ELIMIT)
		rc = al_error_set(AL_ELIMIT, "'%s' is larger than %d bytes",
		                  path, AL_GRAPH_MAX_BYTES);
	if (rc == AL_ENOTFOUND)
		rc = al_error_set(AL_ENOTFOUND, "graph file '%s' not found",
		                  path);
	if (rc == 0)
		rc = al_graph_parse(out, b.ptr, b.len, path);
	al_buf_free(&b);
	return rc;
}

/* g as update-service JSON plus "airlock": {channel, arch}; NULL on ENOMEM. */
json_t *al_graph_to_json(const al_graph *g)
{
	json_t *doc = NULL, *nodes, *edges, *cond, *node, *e, *al;
	size_t i;

	doc = json_object();
	nodes = json_array();
	edges = json_array();
	cond = json_array();
	if (doc == NULL || nodes == NULL || edges == NULL || cond == NULL ||
	    json_object_set_new(doc, "nodes", nodes) < 0 ||
	    json_object_set_new(doc, "edges", edges) < 0 ||
	    json_object_set_new(doc, "conditionalEdges", cond) < 0)
		goto fail;
	for (i = 0; i < g->nnodes; i++) {
		node =
		    json_pack("{s:s, s:s, s:O}", "version", g->nodes[i].version,
		              "payload", g->nodes[i].payload, "metadata",
		              al_graph__json(g->nodes[i].metadata));
		if (node == NULL || json_array_append_new(nodes, node) < 0)
			goto fail;
	}
	for (i = 0; i < g->nedges; i++) {
		e = json_pack("[I, I]", (json_int_t)g->edges[i].from,
		              (json_int_t)g->edges[i].to);
		if (e == NULL || json_array_append_new(edges, e) < 0)
			goto fail;
	}
	for (i = 0; i < g->ncond; i++) {
		e = json_pack("{s:[{s:s, s:s}], s:O}", "edges", "from",
		              g->nodes[g->cond[i].from].version, "to",
		              g->nodes[g->cond[i].to].version, "risks",
		              al_graph__json(g->cond[i].risks));
		if (e == NULL || json_array_append_new(cond, e) < 0)
			goto fail;
	}
	if (g->channel != NULL || g->arch != NULL) {
		al = json_pack("{s:s?, s:s?}", "channel", g->channel, "arch",
		               g->arch);
		if (al == NULL || json_object_set_new(doc, "airlock", al) < 0)
			goto fail;
	}
	return doc;
fail:
	json_decref(doc);
	return NULL;
}

/* Channel and architecture names end up in URLs and file names. */
int al_graph__check_name(const char *s, const char *what)
{
	size_t i;

	if (s == NULL || s[0] == '\0' || strlen(s) > 128)
		return al_error_set(AL_EINVAL, "%s must be 1 to 128 characters",
		                    what);
	for (i = 0; s[i] != '\0'; i++)
		if (!is_alnum_dash(s[i]) && s[i] != '.' && s[i] != '_')
			return al_error_set(AL_EINVAL,
			                    "%s '%s' may only hold letters, "
			                    "digits, '.', '_' and '-'",
			                    what, s);
	if (s[0] == '.')
		return al_error_set(AL_EINVAL,
		                    "%s '%s' must not start with '.'", what, s);
	return 0;
}

/* GET <base>/graph?channel=&arch= within the deadline; *out only on success. */
int al_graph_fetch(al_graph **out, const char *base_url, const char *channel,
                   const char *arch, const al_http_opts *http,
                   al_deadline deadline)
{
	static const char *const headers[] = {"Accept: application/json", NULL};
	al_http *h = NULL;
	al_http_req req;
	al_http_resp resp = AL_HTTP_RESP_INIT;
	al_buf body = AL_BUF_INIT(AL_GRAPH_MAX_BYTES);
	al_graph *g = NULL;
	char *base = NULL, *url = NULL, *what = NULL;
	size_t len;
	int rc;

	if (http != NULL &&
	    (rc = al_opts_version_check("al_http_opts", http->version,
	                                AL_HTTP_OPTS_VERSION)) < 0)
		return rc;
	if ((rc = al_graph__check_name(channel, "channel")) < 0 ||
	    (rc = al_graph__check_name(arch, "architecture")) < 0)
		return rc;
	if (base_url == NULL || (!al_str_startswith(base_url, "http://") &&
	                         !al_str_startswith(base_url, "https://")))
		return al_error_set(AL_EINVAL,
		                    "update service URL '%s' must start with "
		                    "http:// or https://",
		                    base_url != NULL ? base_url : "");
	len = strlen(base_url);
	while (len > 0 && base_url[len - 1] == '/')
		len--;
	base = al_strndup(base_url, len);
	url = base != NULL ? al_sprintf("%s/graph?channel=%s&arch=%s", base,
	                                channel, arch)
	                   : NULL;
	what = al_sprintf("update graph of channel '%s' (%s) from '%s/graph'",
	                  channel, arch, base != NULL ? base : "");
	if (url == NULL || what == NULL) {
		rc = al_error_oom();
		goto out;
	}
	if (deadline.end_ms == 0)
		deadline = al_deadline_in(AL_GRAPH_DEFAULT_TIMEOUT_MS);
	if ((rc = al_http_new(&h, http)) < 0)
		goto out;
	memset(&req, 0, sizeof(req));
	req.method = "GET";
	req.url = url;
	req.headers = headers;
	req.body_out = &body;
	req.deadline = deadline;
	rc = al_http_do(h, &req, &resp);
	if (rc == AL_ELIMIT)
		rc = al_error_set(AL_ELIMIT, "%s: larger than %d bytes", what,
		                  AL_GRAPH_MAX_BYTES);
	else if (rc < 0)
		rc = al_error_wrap(rc, "%s", what);
	if (rc < 0)
		goto out;
	if (resp.status != 200) {
		rc =
		    al_error_set(AL_EPROTO, "%s: the service answered HTTP %ld",
		                 what, resp.status);
		goto out;
	}
	if ((rc = al_graph_parse(&g, body.ptr, body.len, what)) < 0)
		goto out;
	free(g->channel);
	free(g->arch);
	g->channel = al_strdup(channel);
	g->arch = al_strdup(arch);
	if (g->channel == NULL || g->arch == NULL) {
		rc = al_error_oom();
		goto out;
	}
	al_log_debug("%s: %zu releases, %zu updates, %zu conditional", what,
	             g->nnodes, g->nedges, g->ncond);
	*out = g;
	g = NULL;
out:
	al_graph_free(g);
	al_http_resp_clear(&resp);
	al_http_free(h);
	al_buf_free(&body);
	free(base);
	free(url);
	free(what);
	return rc;
}

/* ---------------------------------------------------------------- selection */

typedef struct by_version {
	const char *version;
	size_t idx;
} by_version;

static int by_version_cmp(const void *a, const void *b)
{
	const by_version *x = a, *y = b;
	int c = al_version_compare(x->version, y->version);

	if (c != 0)
		return c;
	return x->idx < y->idx ? -1 : (x->idx > y->idx ? 1 : 0);
}

/* Sort node indices by version precedence (ties by index): O(n log n). */
static int sort_indices(const al_graph *g, size_t *idx, size_t n)
{
	by_version *v;
	size_t i;

	if (n < 2)
		return 0;
	v = malloc(n * sizeof(*v));
	if (v == NULL)
		return al_error_oom();
	for (i = 0; i < n; i++) {
		v[i].version = g->nodes[idx[i]].version;
		v[i].idx = idx[i];
	}
	qsort(v, n, sizeof(*v), by_version_cmp);
	for (i = 0; i < n; i++)
		idx[i] = v[i].idx;
	free(v);
	return 0;
}

static const char *chan(const al_graph *g)
{
	return g->channel != NULL ? g->channel : "(unknown)";
}

/* Edge i of g's plain edges followed (cond) by its conditional ones. */
static void edge_at(const al_graph *g, size_t i, size_t *f, size_t *t)
{
	if (i < g->nedges) {
		*f = g->edges[i].from;
		*t = g->edges[i].to;
	} else {
		*f = g->cond[i - g->nedges].from;
		*t = g->cond[i - g->nedges].to;
	}
}

/*
 * Adjacency in compressed rows: for each node v, the edges whose end
 * (by_to: "to", else "from") is v are adj[start[v] .. start[v + 1]),
 * holding the other end. O(V + E) to build and to walk.
 */
static int adjacency(const al_graph *g, size_t ne, int by_to, size_t **start,
                     size_t **adj)
{
	size_t *st = calloc(g->nnodes + 2, sizeof(*st));
	size_t *a = malloc((ne + 1) * sizeof(*a));
	size_t i, f, t;

	if (st == NULL || a == NULL) {
		free(st);
		free(a);
		return al_error_oom();
	}
	for (i = 0; i < ne; i++) {
		edge_at(g, i, &f, &t);
		st[(by_to ? t : f) + 2]++;
	}
	for (i = 2; i < g->nnodes + 2; i++)
		st[i] += st[i - 1];
	for (i = 0; i < ne; i++) {
		edge_at(g, i, &f, &t);
		a[st[(by_to ? t : f) + 1]++] = by_to ? f : t;
	}
	*start = st;
	*adj = a;
	return 0;
}

/* Reverse BFS from max over edges inside [lo, hi]: dist[i] = updates to max. */
static int shortest(const al_graph *g, size_t lo_i, size_t hi_i, int cond,
                    size_t **out, size_t *nout)
{
	const char *lo = g->nodes[lo_i].version, *hi = g->nodes[hi_i].version;
	size_t *dist = NULL, *queue = NULL, *path = NULL;
	size_t *rstart = NULL, *radj = NULL, *fstart = NULL, *fadj = NULL;
	size_t qh = 0, qt = 0, i, v, cur, best, npath = 0;
	size_t ne = g->nedges + (cond ? g->ncond : 0);
	const size_t inf = (size_t)-1;
	int rc = 0;

	dist = malloc((g->nnodes + 1) * sizeof(*dist));
	queue = malloc((g->nnodes + 1) * sizeof(*queue));
	path = malloc((g->nnodes + 1) * sizeof(*path));
	if (dist == NULL || queue == NULL || path == NULL) {
		rc = al_error_oom();
		goto out;
	}
	if ((rc = adjacency(g, ne, 1, &rstart, &radj)) < 0 ||
	    (rc = adjacency(g, ne, 0, &fstart, &fadj)) < 0)
		goto out;
	for (i = 0; i < g->nnodes; i++)
		dist[i] = inf;
	dist[hi_i] = 0;
	queue[qt++] = hi_i;
	while (qh < qt) {
		v = queue[qh++];
		for (i = rstart[v]; i < rstart[v + 1]; i++) {
			size_t f = radj[i];
			if (dist[f] != inf)
				continue;
			if (al_version_compare(g->nodes[f].version, lo) < 0 ||
			    al_version_compare(g->nodes[f].version, hi) > 0)
				continue;
			dist[f] = dist[v] + 1;
			queue[qt++] = f;
		}
	}
	if (dist[lo_i] == inf) {
		rc = al_error_set(
		    AL_ENOTFOUND,
		    "no update path from %s to %s in channel '%s'%s", lo, hi,
		    chan(g), cond ? "" : " without conditional updates");
		goto out;
	}
	/* Walk forward, taking the highest next release at each step. */
	cur = lo_i;
	path[npath++] = cur;
	while (cur != hi_i) {
		best = inf;
		for (i = fstart[cur]; i < fstart[cur + 1]; i++) {
			size_t t = fadj[i];
			if (dist[t] == inf || dist[t] + 1 != dist[cur])
				continue;
			if (best == inf ||
			    al_version_compare(g->nodes[t].version,
			                       g->nodes[best].version) > 0)
				best = t;
		}
		cur = best;
		path[npath++] = cur;
	}
	if ((rc = sort_indices(g, path, npath)) < 0)
		goto out;
	*out = path;
	*nout = npath;
	path = NULL;
out:
	free(rstart);
	free(radj);
	free(fstart);
	free(fadj);
	free(dist);
	free(queue);
	free(path);
	return rc;
}

/* Releases of g in [min, max], or on a shortest path; *idx only on success. */
int al_graph_select(const al_graph *g, const char *min, const char *max,
                    int shortest_path, int include_conditional, size_t **idx,
                    size_t *n)
{
	size_t lo_i = 0, hi_i = 0, i, cnt = 0;
	size_t *sel = NULL;
	int rc;

	if (g->nnodes == 0)
		return al_error_set(AL_ENOTFOUND,
		                    "channel '%s' has no releases", chan(g));
	for (i = 1; i < g->nnodes; i++) {
		if (al_version_compare(g->nodes[i].version,
		                       g->nodes[lo_i].version) < 0)
			lo_i = i;
		if (al_version_compare(g->nodes[i].version,
		                       g->nodes[hi_i].version) > 0)
			hi_i = i;
	}
	if (min != NULL && (rc = al_graph_find(g, min, &lo_i)) < 0)
		return rc;
	if (max != NULL && (rc = al_graph_find(g, max, &hi_i)) < 0)
		return rc;
	if (al_version_compare(g->nodes[lo_i].version, g->nodes[hi_i].version) >
	    0)
		return al_error_set(
		    AL_EINVAL,
		    "minVersion %s is higher than maxVersion %s "
		    "in channel '%s'",
		    g->nodes[lo_i].version, g->nodes[hi_i].version, chan(g));
	if (shortest_path)
		return shortest(g, lo_i, hi_i, include_conditional, idx, n);
	sel = malloc((g->nnodes + 1) * sizeof(*sel));
	if (sel == NULL)
		return al_error_oom();
	for (i = 0; i < g->nnodes; i++) {
		if (al_version_compare(g->nodes[i].version,
		                       g->nodes[lo_i].version) >= 0 &&
		    al_version_compare(g->nodes[i].version,
		                       g->nodes[hi_i].version) <= 0)
			sel[cnt++] = i;
	}
	if ((rc = sort_indices(g, sel, cnt)) < 0) {
		free(sel);
		return rc;
	}
	*idx = sel;
	*n = cnt;
	return 0;
}

/* ---------------------------------------------------------------- store */

char *al_graph__dir(al_store *s)
{
	return al_path_join(al_store_path(s), "airlock/graph");
}

static char *graph_path(al_store *s, const char *channel, const char *arch)
{
	char *dir = al_graph__dir(s), *p = NULL;

	if (dir != NULL)
		p = al_sprintf("%s/%s-%s.json", dir, channel, arch);
	free(dir);
	return p;
}

/* Atomically write STORE/airlock/graph/<channel>-<arch>.json. */
int al_graph_save_to_store(al_store *s, const al_graph *g)
{
	char *dir = NULL, *path = NULL;
	json_t *doc = NULL;
	int rc;

	if ((rc = al_graph__check_name(g->channel, "channel")) < 0 ||
	    (rc = al_graph__check_name(g->arch, "architecture")) < 0)
		return rc;
	dir = al_graph__dir(s);
	path = graph_path(s, g->channel, g->arch);
	doc = al_graph_to_json(g);
	if (dir == NULL || path == NULL || doc == NULL) {
		rc = al_error_oom();
		goto out;
	}
	if ((rc = al_fs_mkdir_p(dir, 0755)) < 0)
		goto out;
	rc = al_json_save_file(path, doc, 1);
out:
	json_decref(doc);
	free(dir);
	free(path);
	return rc;
}

/* Load STORE/airlock/graph/<channel>-<arch>.json; AL_ENOTFOUND if absent. */
int al_graph_load_from_store(al_graph **out, al_store *s, const char *channel,
                             const char *arch)
{
	char *path = NULL;
	al_graph *g = NULL;
	int rc;

	if ((rc = al_graph__check_name(channel, "channel")) < 0 ||
	    (rc = al_graph__check_name(arch, "architecture")) < 0)
		return rc;
	path = graph_path(s, channel, arch);
	if (path == NULL)
		return al_error_oom();
	rc = al_graph_load_file(&g, path);
	if (rc == AL_ENOTFOUND)
		rc = al_error_set(
		    AL_ENOTFOUND,
		    "the store holds no graph of channel '%s' (%s)", channel,
		    arch);
	if (rc == 0 && (g->channel == NULL || g->arch == NULL)) {
		free(g->channel);
		free(g->arch);
		g->channel = al_strdup(channel);
		g->arch = al_strdup(arch);
		if (g->channel == NULL || g->arch == NULL)
			rc = al_error_oom();
	}
	if (rc == 0) {
		*out = g;
		g = NULL;
	}
	al_graph_free(g);
	free(path);
	return rc;
}
