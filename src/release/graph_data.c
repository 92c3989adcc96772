/* graph_data.c: the update-service graph data of what a store holds
 * (al_graph_write_data): channels, blocked edges, restricted graphs. */
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

static int is_alnum_dash(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z') || c == '-';
}

typedef struct chan_entry {
	char *name;
	al_graph__strlist versions;
} chan_entry;

typedef struct block_entry {
	char *to;    /* version, or version+arch */
	char *risk;  /* NULL: not in the upstream graph */
	json_t *obj; /* the risk (borrowed reference held) */
	al_graph__strlist from;
} block_entry;

typedef struct data_ctx {
	chan_entry *chans;
	size_t nchans;
	block_entry *blocks;
	size_t nblocks;
	al_graph__strlist allowed;  /* "arch|from|to" */
	al_graph__strlist archvers; /* "arch|version" of mirrored nodes */
	al_graph__strlist arches;
	al_graph__strlist all_versions;
} data_ctx;

static void data_free(data_ctx *d)
{
	size_t i;

	for (i = 0; i < d->nchans; i++) {
		free(d->chans[i].name);
		al_graph__strlist_free(&d->chans[i].versions);
	}
	for (i = 0; i < d->nblocks; i++) {
		free(d->blocks[i].to);
		free(d->blocks[i].risk);
		json_decref(d->blocks[i].obj);
		al_graph__strlist_free(&d->blocks[i].from);
	}
	free(d->chans);
	free(d->blocks);
	al_graph__strlist_free(&d->allowed);
	al_graph__strlist_free(&d->archvers);
	al_graph__strlist_free(&d->arches);
	al_graph__strlist_free(&d->all_versions);
}

static int chan_add(data_ctx *d, const char *name, const char *version)
{
	chan_entry *p;
	size_t i;

	for (i = 0; i < d->nchans; i++)
		if (strcmp(d->chans[i].name, name) == 0)
			goto found;
	p = realloc(d->chans, (d->nchans + 1) * sizeof(*p));
	if (p == NULL)
		return al_error_oom();
	d->chans = p;
	memset(&p[i], 0, sizeof(p[i]));
	if ((p[i].name = al_strdup(name)) == NULL)
		return al_error_oom();
	d->nchans++;
found:
	if (version == NULL)
		return 0;
	return al_graph__strlist_add(&d->chans[i].versions, version);
}

static int block_add(data_ctx *d, const char *to, const char *risk, json_t *obj,
                     const char *from)
{
	block_entry *p;
	size_t i;

	for (i = 0; i < d->nblocks; i++) {
		if (strcmp(d->blocks[i].to, to) != 0)
			continue;
		if ((risk == NULL) != (d->blocks[i].risk == NULL))
			continue;
		if (risk == NULL || strcmp(risk, d->blocks[i].risk) == 0)
			goto found;
	}
	p = realloc(d->blocks, (d->nblocks + 1) * sizeof(*p));
	if (p == NULL)
		return al_error_oom();
	d->blocks = p;
	memset(&p[i], 0, sizeof(p[i]));
	d->nblocks++;
	p[i].to = al_strdup(to);
	p[i].risk = risk != NULL ? al_strdup(risk) : NULL;
	p[i].obj = json_incref(obj);
	if (p[i].to == NULL || (risk != NULL && p[i].risk == NULL))
		return al_error_oom();
found:
	return al_graph__strlist_add(&d->blocks[i].from, from);
}

/* "sha256:..." part of a pull spec, or NULL. */
static const char *payload_digest(const char *payload)
{
	const char *at = strrchr(payload, '@');

	return at != NULL ? at + 1 : NULL;
}

static int is_mirrored(const al_store_release *list, size_t n,
                       const al_graph_node *node)
{
	const char *dg = payload_digest(node->payload), *s;
	size_t i;

	for (i = 0; i < n; i++) {
		s = list[i].digest_text;
		if (dg != NULL && s != NULL && strcmp(s, dg) == 0)
			return 1;
		s = list[i].version;
		if (s != NULL && strcmp(s, node->version) == 0)
			return 1;
	}
	return 0;
}

/* A file name part: anything outside [A-Za-z0-9._+-] becomes '_'. */
static char *safe_part(const char *s)
{
	char *r = al_strdup(s);
	size_t i;

	for (i = 0; r != NULL && r[i] != '\0'; i++)
		if (!is_alnum_dash(r[i]) && r[i] != '.' && r[i] != '_' &&
		    r[i] != '+')
			r[i] = '_';
	if (r != NULL && r[0] == '.')
		r[0] = '_';
	return r;
}

/* The graph restricted to mirrored nodes; records channel versions,
 * allowed updates and conditional risks in d. */
static int restrict_graph(data_ctx *d, const al_graph *g,
                          const al_store_release *list, size_t nlist,
                          al_graph **out)
{
	al_graph *r = NULL;
	size_t *map = NULL, i, j, k;
	const size_t none = (size_t)-1;
	char *key = NULL;
	int rc = 0;

	r = calloc(1, sizeof(*r));
	map = malloc((g->nnodes + 1) * sizeof(*map));
	if (r == NULL || map == NULL) {
		rc = al_error_oom();
		goto out;
	}
	r->channel = al_strdup(g->channel);
	r->arch = al_strdup(g->arch);
	r->nodes = calloc(g->nnodes + 1, sizeof(*r->nodes));
	r->edges = calloc(g->nedges + 1, sizeof(*r->edges));
	r->cond = calloc(g->ncond + 1, sizeof(*r->cond));
	if (r->channel == NULL || r->arch == NULL || r->nodes == NULL ||
	    r->edges == NULL || r->cond == NULL) {
		rc = al_error_oom();
		goto out;
	}
	if ((rc = chan_add(d, g->channel, NULL)) < 0 ||
	    (rc = al_graph__strlist_add(&d->arches, g->arch)) < 0)
		goto out;
	for (i = 0; i < g->nnodes; i++) {
		map[i] = none;
		if (!is_mirrored(list, nlist, &g->nodes[i]))
			continue;
		map[i] = r->nnodes;
		r->nodes[r->nnodes].version = al_strdup(g->nodes[i].version);
		r->nodes[r->nnodes].payload = al_strdup(g->nodes[i].payload);
		r->nodes[r->nnodes].metadata = al_graph__opaque(
		    json_incref(al_graph__json(g->nodes[i].metadata)));
		r->nnodes++;
		if (r->nodes[r->nnodes - 1].version == NULL ||
		    r->nodes[r->nnodes - 1].payload == NULL) {
			rc = al_error_oom();
			goto out;
		}
		key = al_sprintf("%s|%s", g->arch, g->nodes[i].version);
		if (key == NULL) {
			rc = al_error_oom();
			goto out;
		}
		if ((rc = chan_add(d, g->channel, g->nodes[i].version)) < 0 ||
		    (rc = al_graph__strlist_add(&d->archvers, key)) < 0 ||
		    (rc = al_graph__strlist_add(&d->all_versions,
		                                g->nodes[i].version)) < 0)
			goto out;
		free(key);
		key = NULL;
	}
	for (k = 0; k < g->nedges + g->ncond; k++) {
		int is_cond = k >= g->nedges;
		size_t f =
		    is_cond ? g->cond[k - g->nedges].from : g->edges[k].from;
		size_t t = is_cond ? g->cond[k - g->nedges].to : g->edges[k].to;

		if (map[f] == none || map[t] == none)
			continue;
		key = al_sprintf("%s|%s|%s", g->arch, g->nodes[f].version,
		                 g->nodes[t].version);
		if (key == NULL) {
			rc = al_error_oom();
			goto out;
		}
		if ((rc = al_graph__strlist_add(&d->allowed, key)) < 0)
			goto out;
		free(key);
		key = NULL;
		if (!is_cond) {
			r->edges[r->nedges].from = map[f];
			r->edges[r->nedges].to = map[t];
			r->nedges++;
			continue;
		}
		r->cond[r->ncond].from = map[f];
		r->cond[r->ncond].to = map[t];
		r->cond[r->ncond].risks = al_graph__opaque(
		    json_incref(al_graph__json(g->cond[k - g->nedges].risks)));
		r->ncond++;
		for (j = 0; j < json_array_size(al_graph__json(
		                    g->cond[k - g->nedges].risks));
		     j++) {
			json_t *risk = json_array_get(
			    al_graph__json(g->cond[k - g->nedges].risks), j);
			const char *name = al_json_str(risk, "name");

			if (!json_is_object(risk))
				continue;
			if ((rc = block_add(d, g->nodes[t].version,
			                    name != NULL ? name : "risk", risk,
			                    g->nodes[f].version)) < 0)
				goto out;
		}
	}
	*out = r;
	r = NULL;
out:
	free(key);
	free(map);
	al_graph_free(r);
	return rc;
}

/* "from" regex matching exactly the given versions: "4[.]14[.]1|...". */
static char *from_regex(const al_graph__strlist *froms)
{
	al_buf b = AL_BUF_INIT(16 * 1024 * 1024);
	size_t i, j;
	int rc = 0;

	for (i = 0; i < froms->n && rc == 0; i++) {
		if (i > 0)
			rc = al_buf_puts(&b, "|");
		for (j = 0; froms->v[i][j] != '\0' && rc == 0; j++) {
			char c = froms->v[i][j];

			if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
			    (c >= 'A' && c <= 'Z') || c == '-')
				rc = al_buf_append(&b, &c, 1);
			else
				rc = al_buf_printf(&b, "[%c]", c);
		}
	}
	if (rc < 0) {
		al_buf_free(&b);
		return NULL;
	}
	if (froms->n > 1) {
		char *r = al_sprintf("(%s)", al_buf_cstr(&b));

		al_buf_free(&b);
		return r;
	}
	return al_buf_detach(&b, NULL);
}

static int write_yaml(const char *path, json_t *doc)
{
	al_buf b = AL_BUF_INIT(64 * 1024 * 1024);
	int rc;

	if ((rc = al_yaml_emit_json(&b, &doc, 1)) == 0)
		rc = al_fs_write_atomic(
		    path, b.ptr != NULL ? (const void *)b.ptr : "", b.len);
	al_buf_free(&b);
	return rc;
}

static int write_channels(data_ctx *d, const char *outdir,
                          al_graph_data_report *rep)
{
	char *dir = al_path_join(outdir, "channels"), *name = NULL,
	     *path = NULL;
	json_t *doc = NULL, *vers;
	size_t i, j;
	int rc;

	if (dir == NULL)
		return al_error_oom();
	if ((rc = al_fs_mkdir_p(dir, 0755)) < 0)
		goto out;
	for (i = 0; i < d->nchans; i++) {
		al_graph__sort_versions(&d->chans[i].versions);
		doc = json_pack("{s:s, s:[]}", "name", d->chans[i].name,
		                "versions");
		name = safe_part(d->chans[i].name);
		path =
		    name != NULL ? al_sprintf("%s/%s.yaml", dir, name) : NULL;
		if (doc == NULL || path == NULL) {
			rc = al_error_oom();
			goto out;
		}
		vers = json_object_get(doc, "versions");
		for (j = 0; j < d->chans[i].versions.n; j++)
			if (json_array_append_new(
			        vers, json_string(d->chans[i].versions.v[j])) <
			    0) {
				rc = al_error_oom();
				goto out;
			}
		if ((rc = write_yaml(path, doc)) < 0)
			goto out;
		rep->channels++;
		json_decref(doc);
		doc = NULL;
		free(name);
		free(path);
		name = path = NULL;
	}
out:
	json_decref(doc);
	free(name);
	free(path);
	free(dir);
	return rc;
}

/* Updates between mirrored releases of one architecture that no saved
 * graph has: the cluster-side service would otherwise offer them when
 * the release images' own metadata lists them. */
static int add_not_in_graph(data_ctx *d)
{
	size_t a, i, j;
	char *key = NULL, *to = NULL;
	int rc = 0;

	for (a = 0; a < d->arches.n; a++) {
		const char *arch = d->arches.v[a];

		for (i = 0; i < d->all_versions.n; i++) {
			const char *vt = d->all_versions.v[i];

			key = al_sprintf("%s|%s", arch, vt);
			if (key == NULL)
				return al_error_oom();
			if (!al_graph__strlist_has(&d->archvers, key) ||
			    !al_version_valid(vt)) {
				free(key);
				key = NULL;
				continue;
			}
			free(key);
			key = NULL;
			for (j = 0; j < d->all_versions.n; j++) {
				const char *vf = d->all_versions.v[j];

				if (al_version_compare(vf, vt) >= 0 ||
				    !al_version_valid(vf))
					continue;
				key = al_sprintf("%s|%s", arch, vf);
				if (key == NULL)
					return al_error_oom();
				rc = al_graph__strlist_has(&d->archvers, key);
				free(key);
				key = al_sprintf("%s|%s|%s", arch, vf, vt);
				if (key == NULL)
					return al_error_oom();
				if (rc == 1 &&
				    !al_graph__strlist_has(&d->allowed, key)) {
					to = al_sprintf("%s+%s", vt, arch);
					rc = to != NULL ? block_add(d, to, NULL,
					                            NULL, vf)
					                : al_error_oom();
					free(to);
					to = NULL;
					if (rc < 0) {
						free(key);
						return rc;
					}
				}
				rc = 0;
				free(key);
				key = NULL;
			}
		}
	}
	return rc;
}

static int write_blocks(data_ctx *d, const char *outdir,
                        al_graph_data_report *rep)
{
	char *dir = al_path_join(outdir, "blocked-edges");
	char *to = NULL, *risk = NULL, *path = NULL, *re = NULL;
	json_t *doc = NULL;
	const char *k;
	json_t *v;
	size_t i;
	int rc;

	if (dir == NULL)
		return al_error_oom();
	if ((rc = al_fs_mkdir_p(dir, 0755)) < 0)
		goto out;
	for (i = 0; i < d->nblocks; i++) {
		block_entry *b = &d->blocks[i];

		al_graph__sort_versions(&b->from);
		re = from_regex(&b->from);
		to = safe_part(b->to);
		risk = safe_part(b->risk != NULL ? b->risk
		                                 : "airlock-not-in-graph");
		path = (to != NULL && risk != NULL)
		           ? al_sprintf("%s/%s-%s.yaml", dir, to, risk)
		           : NULL;
		doc = json_pack("{s:s, s:s?}", "to", b->to, "from", re);
		if (re == NULL || path == NULL || doc == NULL) {
			rc = al_error_oom();
			goto out;
		}
		/* a conditional risk keeps url, name, message and
		 * matchingRules: the service then serves it as a
		 * conditional update instead of blocking it */
		json_object_foreach(b->obj, k, v)
		{
			if (strcmp(k, "to") == 0 || strcmp(k, "from") == 0)
				continue;
			if (json_object_set(doc, k, v) < 0) {
				rc = al_error_oom();
				goto out;
			}
		}
		if ((rc = write_yaml(path, doc)) < 0)
			goto out;
		rep->blocked_edges++;
		json_decref(doc);
		doc = NULL;
		free(re);
		free(to);
		free(risk);
		free(path);
		re = to = risk = path = NULL;
	}
out:
	json_decref(doc);
	free(re);
	free(to);
	free(risk);
	free(path);
	free(dir);
	return rc;
}

/* The cincinnati-graph-data layout for the store's releases into outdir. */
int al_graph_write_data(al_store *s, const char *outdir,
                        al_graph_data_report *rep)
{
	al_graph_data_report dummy = AL_GRAPH_DATA_REPORT_INIT;
	data_ctx d;
	al_store_release *list = NULL;
	json_t *rj = NULL;
	char *gdir = NULL, *odir = NULL, *path = NULL, *opath = NULL;
	char *vpath = NULL;
	DIR *dh = NULL;
	struct dirent *de;
	al_graph *g = NULL, *r = NULL;
	size_t i, j, nlist = 0;
	int rc;

	if ((rc = AL_RESULT_VERSION_CHECK("al_graph_data_report", rep, version,
	                                  AL_GRAPH_DATA_REPORT_VERSION)) < 0)
		return rc;
	memset(&d, 0, sizeof(d));
	if (rep == NULL)
		rep = &dummy;
	AL_RESULT_ZERO(rep);
	if ((rc = al_store_releases_list(s, &list, &nlist)) < 0)
		return rc;
	if (nlist == 0) {
		rc = al_error_set(AL_ENOTFOUND,
		                  "the store '%s' holds no release",
		                  al_store_path(s));
		goto out;
	}
	gdir = al_graph__dir(s);
	odir = al_path_join(outdir, "airlock/graph");
	if (gdir == NULL || odir == NULL) {
		rc = al_error_oom();
		goto out;
	}
	if ((rc = al_fs_mkdir_p(odir, 0755)) < 0)
		goto out;
	dh = opendir(gdir);
	if (dh == NULL && errno != ENOENT) {
		rc = al_error_errno(errno, "cannot read '%s'", gdir);
		goto out;
	}
	while (dh != NULL && (de = readdir(dh)) != NULL) {
		if (de->d_name[0] == '.' ||
		    !al_str_endswith(de->d_name, ".json"))
			continue;
		path = al_path_join(gdir, de->d_name);
		if (path == NULL) {
			rc = al_error_oom();
			goto out;
		}
		if ((rc = al_graph_load_file(&g, path)) < 0)
			goto out;
		if (g->channel == NULL || g->arch == NULL ||
		    al_graph__check_name(g->channel, "channel") < 0 ||
		    al_graph__check_name(g->arch, "architecture") < 0) {
			rc = al_error_set(AL_EPARSE,
			                  "'%s': no valid \"airlock\": "
			                  "{\"channel\", \"arch\"}",
			                  path);
			goto out;
		}
		if ((rc = restrict_graph(&d, g, list, nlist, &r)) < 0)
			goto out;
		opath = al_sprintf("%s/%s-%s.json", odir, g->channel, g->arch);
		rj = al_graph_to_json(r);
		if (opath == NULL || rj == NULL) {
			rc = al_error_oom();
			goto out;
		}
		if ((rc = al_json_save_file(opath, rj, 1)) < 0)
			goto out;
		rep->graphs++;
		json_decref(rj);
		rj = NULL;
		free(opath);
		opath = NULL;
		al_graph_free(r);
		r = NULL;
		al_graph_free(g);
		g = NULL;
		free(path);
		path = NULL;
	}
	/* channels recorded by mirror for each release */
	for (i = 0; i < nlist; i++) {
		const char *ver = list[i].version;

		for (j = 0; ver != NULL && j < list[i].nchannels; j++) {
			const char *c = list[i].channels[j];

			if (al_graph__check_name(c, "channel") < 0)
				continue;
			if ((rc = chan_add(&d, c, ver)) < 0 ||
			    (rc = al_graph__strlist_add(&d.all_versions, ver)) <
			        0)
				goto out;
		}
	}
	al_error_clear();
	if ((rc = add_not_in_graph(&d)) < 0)
		goto out;
	if ((rc = write_channels(&d, outdir, rep)) < 0 ||
	    (rc = write_blocks(&d, outdir, rep)) < 0)
		goto out;
	/* schema version of the graph-data layout (major 1) */
	vpath = al_path_join(outdir, "version");
	if (vpath == NULL) {
		rc = al_error_oom();
		goto out;
	}
	if ((rc = al_fs_write_atomic(vpath, "1.2.0\n", 6)) < 0)
		goto out;
	rep->versions = d.all_versions.n;
out:
	if (dh != NULL)
		closedir(dh);
	json_decref(rj);
	al_store_releases_free(list, nlist);
	al_graph_free(g);
	al_graph_free(r);
	free(gdir);
	free(odir);
	free(path);
	free(opath);
	free(vpath);
	data_free(&d);
	return rc;
}
