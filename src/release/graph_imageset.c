/* graph_imageset.c: the releases an ImageSetConfiguration's channels select
 * (al_graph_resolve_imageset), and the string lists graph code shares. */
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

void al_graph__strlist_free(al_graph__strlist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

int al_graph__strlist_has(const al_graph__strlist *l, const char *s)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i], s) == 0)
			return 1;
	return 0;
}

/* Append s unless present. */
int al_graph__strlist_add(al_graph__strlist *l, const char *s)
{
	char **p, *dup;

	if (al_graph__strlist_has(l, s))
		return 0;
	if (l->n >= SIZE_MAX / sizeof(*p) - 1)
		return al_error_oom();
	dup = al_strdup(s);
	p = dup != NULL ? realloc(l->v, (l->n + 1) * sizeof(*p)) : NULL;
	if (p == NULL) {
		free(dup);
		return al_error_oom();
	}
	p[l->n++] = dup;
	l->v = p;
	return 0;
}

void al_graph__sort_versions(al_graph__strlist *l)
{
	size_t i, j;
	char *t;

	for (i = 1; i < l->n; i++) {
		t = l->v[i];
		for (j = i; j > 0 && al_version_compare(l->v[j - 1], t) > 0;
		     j--)
			l->v[j] = l->v[j - 1];
		l->v[j] = t;
	}
}

/* Free what sel holds and zero it; NULL is a no-op. */
void al_graph_selection_clear(al_graph_selection *sel)
{
	size_t i, j;

	if (sel == NULL)
		return;
	for (i = 0; i < sel->nreleases; i++) {
		al_graph_release *r = &sel->releases[i];

		free(r->version);
		free(r->payload);
		free(r->arch);
		for (j = 0; j < r->nchannels; j++)
			free(r->channels[j]);
		free(r->channels);
	}
	for (i = 0; i < sel->ngraphs; i++)
		al_graph_free(sel->graphs[i]);
	free(sel->releases);
	free(sel->graphs);
	memset(sel, 0, sizeof(*sel));
}

static int is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The graph of channel/arch, read once per resolve. */
static int get_graph(al_graph_selection *sel, const al_imageset *cfg,
                     const al_graph_opts *opts, const char *channel,
                     const char *arch, const al_graph **out)
{
	al_graph *g = NULL, **p;
	char *path = NULL;
	const char *url;
	size_t i;
	int rc;

	for (i = 0; i < sel->ngraphs; i++) {
		if (strcmp(sel->graphs[i]->channel, channel) == 0 &&
		    strcmp(sel->graphs[i]->arch, arch) == 0) {
			*out = sel->graphs[i];
			return 0;
		}
	}
	if ((rc = al_graph__check_name(channel, "channel")) < 0 ||
	    (rc = al_graph__check_name(arch, "architecture")) < 0)
		return rc;
	if (opts->graph_file != NULL) {
		if (is_dir(opts->graph_file)) {
			path = al_sprintf("%s/%s-%s.json", opts->graph_file,
			                  channel, arch);
			if (path == NULL)
				return al_error_oom();
			rc = al_graph_load_file(&g, path);
			free(path);
		} else {
			rc = al_graph_load_file(&g, opts->graph_file);
		}
		if (rc < 0)
			return rc;
		free(g->channel);
		free(g->arch);
		g->channel = al_strdup(channel);
		g->arch = al_strdup(arch);
		if (g->channel == NULL || g->arch == NULL) {
			al_graph_free(g);
			return al_error_oom();
		}
	} else {
		url = opts->url != NULL        ? opts->url
		      : cfg->graph_url != NULL ? cfg->graph_url
		                               : AL_GRAPH_DEFAULT_URL;
		if ((rc = al_graph_fetch(&g, url, channel, arch, opts->http,
		                         opts->deadline)) < 0)
			return rc;
	}
	p = realloc(sel->graphs, (sel->ngraphs + 1) * sizeof(*p));
	if (p == NULL) {
		al_graph_free(g);
		return al_error_oom();
	}
	sel->graphs = p;
	p[sel->ngraphs++] = g;
	*out = g;
	return 0;
}

static int add_release(al_graph_selection *sel, const al_graph_node *node,
                       const char *arch, const char *channel)
{
	al_graph_release *r = NULL, *p;
	char **c;
	size_t i;

	for (i = 0; i < sel->nreleases; i++)
		if (strcmp(sel->releases[i].payload, node->payload) == 0)
			r = &sel->releases[i];
	if (r == NULL) {
		p = realloc(sel->releases, (sel->nreleases + 1) * sizeof(*p));
		if (p == NULL)
			return al_error_oom();
		sel->releases = p;
		r = &p[sel->nreleases];
		memset(r, 0, sizeof(*r));
		sel->nreleases++;
		r->version = al_strdup(node->version);
		r->payload = al_strdup(node->payload);
		r->arch = al_strdup(arch);
		if (r->version == NULL || r->payload == NULL || r->arch == NULL)
			return al_error_oom();
	}
	for (i = 0; i < r->nchannels; i++)
		if (strcmp(r->channels[i], channel) == 0)
			return 0;
	c = realloc(r->channels, (r->nchannels + 1) * sizeof(*c));
	if (c == NULL)
		return al_error_oom();
	r->channels = c;
	if ((c[r->nchannels] = al_strdup(channel)) == NULL)
		return al_error_oom();
	r->nchannels++;
	return 0;
}

static int cmp_release(const void *a, const void *b)
{
	const al_graph_release *x = a, *y = b;
	int c = strcmp(x->arch, y->arch);

	return c != 0 ? c : al_version_compare(x->version, y->version);
}

/* Releases to mirror for every channel and architecture of cfg (graph.h). */
int al_graph_resolve_imageset(const al_imageset *cfg, const al_graph_opts *opts,
                              al_graph_selection *out)
{
	static const char *const default_arch[] = {"amd64"};
	/* mirror.platform.platforms: the multi payload (oc-mirror
	 * cincinnati.go sets Arch "multi" for them) */
	static const char *const multi_arch[] = {"multi"};
	static const al_graph_opts no_opts = AL_GRAPH_OPTS_INIT;
	const char *const *arches = default_arch;
	size_t narch = 1, i, a, k, *idx = NULL, n = 0;
	const al_graph *g = NULL;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (opts != NULL &&
	    (rc = al_opts_version_check("al_graph_opts", opts->version,
	                                AL_GRAPH_OPTS_VERSION)) < 0)
		return rc;
	if (opts == NULL)
		opts = &no_opts;
	if (cfg->narchitectures > 0) {
		arches = (const char *const *)cfg->architectures;
		narch = cfg->narchitectures;
	} else if (cfg->nplatforms > 0) {
		arches = multi_arch;
	}
	for (i = 0; i < cfg->nchannels; i++) {
		const al_imageset_channel *ch = &cfg->channels[i];
		const char *min = ch->min_version;

		for (a = 0; a < narch; a++) {
			if ((rc = get_graph(out, cfg, opts, ch->name, arches[a],
			                    &g)) < 0)
				return rc;
			if (min == NULL && !ch->full) {
				/* neither bound and not full: only the latest
				 */
				if (ch->max_version != NULL)
					min = ch->max_version;
			}
			if (min == NULL && !ch->full && g->nnodes > 0) {
				size_t hi = 0;

				for (k = 1; k < g->nnodes; k++)
					if (al_version_compare(
					        g->nodes[k].version,
					        g->nodes[hi].version) > 0)
						hi = k;
				min = g->nodes[hi].version;
			}
			rc = al_graph_select(
			    g, min, ch->max_version, ch->shortest_path,
			    !cfg->graph_exclude_conditional, &idx, &n);
			if (rc < 0)
				return rc;
			for (k = 0; k < n && rc == 0; k++)
				rc = add_release(out, &g->nodes[idx[k]],
				                 arches[a], ch->name);
			free(idx);
			idx = NULL;
			if (rc < 0)
				return rc;
			al_log_debug("channel '%s' (%s): %zu releases selected",
			             ch->name, arches[a], n);
			min = ch->min_version;
		}
	}
	if (out->nreleases > 1)
		qsort(out->releases, out->nreleases, sizeof(*out->releases),
		      cmp_release);
	return 0;
}
