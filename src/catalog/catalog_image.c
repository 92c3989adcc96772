/* catalog_image.c: catalog images: the FBC directory from verified layers
 * (read through layer.c; whiteouts here), and the rebuilt image with a
 * filtered catalog. */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "airlock/error.h"
#include "json_int.h"
#include "airlock/log.h"
#include "catalog_int.h"
#include "layer_int.h"
#include "array_int.h"

#define CONFIG_MAX (16 * AL_MIB)
#define WH ".wh."
#define WH_OPQ ".wh..wh..opq"
#define IGNORE_FILE ".indexignore"

/* Files this large wait for parsing in the catalog's scratch file
 * (catalog_spool.c) rather than in memory. */
#define SPOOL_MIN (64 * 1024)

struct cfile {
	char *path;    /* relative to the FBC directory */
	uint8_t *data; /* NULL when empty or spooled */
	size_t len;
	int spooled; /* the bytes are in the scratch file, at off */
	uint64_t off;
};

struct cset {
	struct cfile *v;
	size_t n, cap;
	uint64_t total;
};

struct clayer {
	struct cset add;
	char **rm; /* whited-out paths (files or directories) */
	size_t nrm, caprm;
	char **opq; /* opaque directories ("" = the FBC directory) */
	size_t nopq, capopq;
	int clear; /* the FBC directory or an ancestor was removed */
};

static void cset_clear(struct cset *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		free(s->v[i].path);
		free(s->v[i].data);
	}
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static void clayer_clear(struct clayer *l)
{
	cset_clear(&l->add);
	al__strv_free(l->rm, l->nrm);
	al__strv_free(l->opq, l->nopq);
	memset(l, 0, sizeof(*l));
}

static int strv_push(char ***v, size_t *n, size_t *cap, const char *s)
{
	if (*n >= AL_CATALOG_FILES_MAX)
		return al_error_set(AL_ELIMIT,
		                    "more than %d whiteouts in a "
		                    "layer",
		                    AL_CATALOG_FILES_MAX);
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 8;
		char **nv = realloc(*v, ncap * sizeof(*nv));

		if (nv == NULL)
			return al_error_oom();
		*v = nv;
		*cap = ncap;
	}
	(*v)[*n] = al_strdup(s);
	if ((*v)[*n] == NULL)
		return al_error_oom();
	(*n)++;
	return 0;
}

/* path equals dir or lies below it ("" is the root of everything). */
static int under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 0)
		return 1;
	return strncmp(path, dir, n) == 0 &&
	       (path[n] == '\0' || path[n] == '/');
}

/* Drop lower files under rel ("" = all). */
static void cset_remove_under(struct cset *s, const char *rel)
{
	size_t i, w = 0;

	for (i = 0; i < s->n; i++) {
		if (under(s->v[i].path, rel)) {
			s->total -= s->v[i].len;
			free(s->v[i].path);
			free(s->v[i].data);
			continue;
		}
		s->v[w++] = s->v[i];
	}
	s->n = w;
}

/* Merge add (sorted, unique) over s (sorted, unique): add wins. */
static int cset_merge(struct cset *s, struct cset *add)
{
	struct cfile *nv;
	size_t i = 0, j = 0, k = 0;

	if (add->n == 0)
		return 0;
	if (s->n + add->n > AL_CATALOG_FILES_MAX)
		return al_error_set(AL_ELIMIT, "catalog has more than %d files",
		                    AL_CATALOG_FILES_MAX);
	nv = calloc(s->n + add->n, sizeof(*nv));
	if (nv == NULL)
		return al_error_oom();
	while (i < s->n || j < add->n) {
		int d = i == s->n     ? 1
		        : j == add->n ? -1
		                      : strcmp(s->v[i].path, add->v[j].path);

		if (d < 0) {
			nv[k++] = s->v[i++];
		} else {
			if (d == 0) {
				s->total -= s->v[i].len;
				free(s->v[i].path);
				free(s->v[i].data);
				i++;
			}
			s->total += add->v[j].len;
			nv[k++] = add->v[j++];
		}
	}
	free(s->v);
	s->v = nv;
	s->n = k;
	s->cap = s->n + add->n;
	free(add->v);
	memset(add, 0, sizeof(*add));
	if (s->total > AL_CATALOG_TOTAL_MAX)
		return al_error_set(AL_ELIMIT,
		                    "catalog files are larger than %llu bytes",
		                    (unsigned long long)AL_CATALOG_TOTAL_MAX);
	return 0;
}

/* "./a/b/" -> "a/b" in place. */
static char *norm(char *p)
{
	size_t n;

	while (p[0] == '.' && p[1] == '/')
		p += 2;
	while (p[0] == '/')
		p++;
	n = strlen(p);
	while (n > 0 && p[n - 1] == '/')
		p[--n] = '\0';
	if (strcmp(p, ".") == 0)
		p[0] = '\0';
	return p;
}

static const char *rel_of(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 0)
		return path;
	return path[n] == '/' ? path + n + 1 : path + n;
}

/* Appending an entry's bytes to the scratch file. */
struct spool_sink {
	struct cat_spool *sp;
	uint64_t first; /* where the entry starts */
	int started;
};

static int spool_sink_fn(void *ud, const uint8_t *p, size_t n)
{
	struct spool_sink *k = ud;
	uint64_t off = 0;
	int rc = cat_spool_put(k->sp, p, n, &off);

	if (rc == 0 && !k->started) {
		k->first = off;
		k->started = 1;
	}
	return rc;
}

/* A regular file's bytes: straight to the scratch file when the header
 * says it is large (spool set), else into memory. */
static int read_file_entry(al_layer *ly, const al_layer_entry *e,
                           const char *path, const char *ds,
                           struct cat_spool *spool, struct cfile *out)
{
	al_buf b = AL_BUF_INIT(AL_CATALOG_FILE_MAX);
	int rc;

	if (spool != NULL && e->size_known && e->size >= SPOOL_MIN) {
		struct spool_sink k = {spool, 0, 0};
		uint64_t n;

		rc = al_layer_read_to(ly, e, AL_CATALOG_FILE_MAX, spool_sink_fn,
		                      &k, &n);
		if (rc == 0) {
			out->len = (size_t)n;
			out->off = k.first;
			out->spooled = n > 0;
			return 0;
		}
	} else {
		rc = al_layer_read(ly, e, &b);
	}

	if (rc == AL_ELIMIT) {
		rc = al_error_set(AL_ELIMIT,
		                  "'%s' in layer '%s' is larger than %llu "
		                  "bytes",
		                  path, ds,
		                  (unsigned long long)AL_CATALOG_FILE_MAX);
		goto out;
	}
	if (rc !=
	    0) /* < 0, or 1: libarchive failed (EVERIFY or EPARSE later) */
		goto out;
	out->len = b.len;
	out->data = b.len > 0 ? (uint8_t *)al_buf_detach(&b, NULL) : NULL;
	if (b.len > 0 && out->data == NULL)
		rc = al_error_oom();
out:
	al_buf_free(&b);
	return rc;
}

/* What scan_entry needs besides the entry. */
struct scan {
	const char *dir; /* the FBC directory */
	struct clayer *l;
	struct cat_spool *spool; /* NULL: files stay in memory */
};

/* A large file's bytes go to the scratch file (.indexignore files stay:
 * ignored() reads them from memory). */
static int spool_file(struct cat_spool *sp, struct cfile *f, const char *base)
{
	int rc;

	if (sp == NULL || f->spooled || f->len < SPOOL_MIN ||
	    strcmp(base, IGNORE_FILE) == 0)
		return 0;
	if ((rc = cat_spool_put(sp, f->data, f->len, &f->off)) < 0)
		return rc;
	free(f->data);
	f->data = NULL;
	f->spooled = 1;
	return 0;
}

/* One entry of a layer, for the FBC directory dir (an al_layer_fn). */
static int scan_entry(void *ud, al_layer *ly, const al_layer_entry *e)
{
	const struct scan *sc = ud;
	const char *dir = sc->dir, *ds = al_layer_name(ly);
	struct clayer *l = sc->l;
	char *copy = al_strdup(e->path), *path, *base;
	char *parent;
	int rc = 0;

	if (copy == NULL)
		return al_error_oom();
	path = norm(copy);
	base = strrchr(path, '/');
	parent = path;
	if (base != NULL) {
		*base++ = '\0';
	} else {
		base = path;
		parent = (char *)"";
	}
	if (strcmp(base, WH_OPQ) == 0) {
		/* parent's lower contents go */
		if (under(dir, parent))
			l->clear = 1;
		else if (under(parent, dir))
			rc = strv_push(&l->opq, &l->nopq, &l->capopq,
			               rel_of(parent, dir));
		goto out;
	}
	if (strncmp(base, WH, strlen(WH)) == 0) {
		char *target = parent[0] != '\0' ? al_sprintf("%s/%s", parent,
		                                              base + strlen(WH))
		                                 : al_strdup(base + strlen(WH));

		if (target == NULL) {
			rc = al_error_oom();
			goto out;
		}
		if (under(dir, target))
			l->clear = 1;
		else if (under(target, dir))
			rc = strv_push(&l->rm, &l->nrm, &l->caprm,
			               rel_of(target, dir));
		free(target);
		goto out;
	}
	if (base != path)
		base[-1] = '/';
	if (!under(path, dir) || strcmp(path, dir) == 0)
		goto out;
	switch (e->type) {
	case AL_LAYER_DIR:
		break;
	case AL_LAYER_REG: {
		struct cfile f;

		if (e->hardlink) {
			rc = al_error_set(
			    AL_EUNSUPPORTED,
			    "layer '%s': '%s' is a hard link; links "
			    "in the catalog directory are not "
			    "supported",
			    ds, path);
			break;
		}
		memset(&f, 0, sizeof(f));
		if ((rc = read_file_entry(
		         ly, e, path, ds,
		         strcmp(base, IGNORE_FILE) != 0 ? sc->spool : NULL,
		         &f)) != 0)
			break;
		if ((rc = spool_file(sc->spool, &f, base)) < 0) {
			free(f.data);
			break;
		}
		f.path = al_strdup(rel_of(path, dir));
		if (f.path == NULL || l->add.n >= AL_CATALOG_FILES_MAX) {
			free(f.path);
			free(f.data);
			rc = f.path == NULL
			         ? al_error_oom()
			         : al_error_set(AL_ELIMIT,
			                        "more than %d catalog files",
			                        AL_CATALOG_FILES_MAX);
			break;
		}
		if (l->add.n == l->add.cap) {
			size_t ncap = l->add.cap ? l->add.cap * 2 : 64;
			struct cfile *nv =
			    realloc(l->add.v, ncap * sizeof(*nv));

			if (nv == NULL) {
				free(f.path);
				free(f.data);
				rc = al_error_oom();
				break;
			}
			l->add.v = nv;
			l->add.cap = ncap;
		}
		l->add.v[l->add.n++] = f;
		l->add.total += f.len;
		if (l->add.total > AL_CATALOG_TOTAL_MAX)
			rc = al_error_set(
			    AL_ELIMIT,
			    "catalog files are larger than %llu "
			    "bytes",
			    (unsigned long long)AL_CATALOG_TOTAL_MAX);
		break;
	}
	case AL_LAYER_SYMLINK:
		rc = al_error_set(
		    AL_EUNSUPPORTED,
		    "layer '%s': '%s' is a symbolic link; links in "
		    "the catalog directory are not supported",
		    ds, path);
		break;
	default:
		al_log_debug("catalog: layer '%s': skipping special file '%s'",
		             ds, path);
		break;
	}
out:
	free(copy);
	return rc;
}

/* Sort a layer's files; a path given twice in one layer: the last wins. */
static void dedupe_sorted(struct cset *s)
{
	size_t i, w = 0;

	for (i = 0; i < s->n; i++) {
		if (w > 0 && strcmp(s->v[w - 1].path, s->v[i].path) == 0) {
			s->total -= s->v[w - 1].len;
			free(s->v[w - 1].path);
			free(s->v[w - 1].data);
			s->v[w - 1] = s->v[i];
			continue;
		}
		s->v[w++] = s->v[i];
	}
	s->n = w;
}

struct seqfile {
	struct cfile f;
	size_t seq;
};

static int seq_cmp(const void *a, const void *b)
{
	const struct seqfile *x = a, *y = b;
	int d = strcmp(x->f.path, y->f.path);

	if (d != 0)
		return d;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Stable sort by path (order within the layer kept for equal paths). */
static int sort_layer(struct cset *s)
{
	struct seqfile *t;
	size_t i;

	if (s->n < 2)
		return 0;
	t = calloc(s->n, sizeof(*t));
	if (t == NULL)
		return al_error_oom();
	for (i = 0; i < s->n; i++) {
		t[i].f = s->v[i];
		t[i].seq = i;
	}
	qsort(t, s->n, sizeof(*t), seq_cmp);
	for (i = 0; i < s->n; i++)
		s->v[i] = t[i].f;
	free(t);
	dedupe_sorted(s);
	return 0;
}

/* Read one verified layer (al_layer_walk) and apply it over files. */
static int apply_layer(struct cset *files, al_store *s, const al_descriptor *d,
                       const char *dir, struct cat_spool *spool)
{
	struct clayer l;
	struct scan sc;
	size_t i;
	int rc;

	memset(&l, 0, sizeof(l));
	sc.dir = dir;
	sc.l = &l;
	sc.spool = spool;
	if ((rc = al_layer_walk(s, d, scan_entry, &sc)) < 0)
		goto out;
	/* whiteouts apply to lower layers only (image-spec layer.md) */
	if (l.clear)
		cset_remove_under(files, "");
	for (i = 0; i < l.nopq; i++) {
		if (l.opq[i][0] == '\0') {
			cset_remove_under(files, "");
		} else {
			/* the directory's contents, not the directory */
			char *p = al_sprintf("%s/", l.opq[i]);
			size_t k, w = 0;

			if (p == NULL) {
				rc = al_error_oom();
				goto out;
			}
			for (k = 0; k < files->n; k++) {
				if (al_str_startswith(files->v[k].path, p)) {
					files->total -= files->v[k].len;
					free(files->v[k].path);
					free(files->v[k].data);
					continue;
				}
				files->v[w++] = files->v[k];
			}
			files->n = w;
			free(p);
		}
	}
	for (i = 0; i < l.nrm; i++)
		cset_remove_under(files, l.rm[i]);
	if ((rc = sort_layer(&l.add)) < 0)
		goto out;
	rc = cset_merge(files, &l.add);
out:
	clayer_clear(&l);
	return rc;
}

static int load_config(al_store *s, const al_manifest *m, json_t **out)
{
	al_buf b = AL_BUF_INIT(CONFIG_MAX);
	char ds[AL_DIGEST_STRMAX];
	int rc;

	al_digest_str(&m->config.digest, ds);
	if ((rc = al_store_read_blob(s, &m->config.digest, &b)) == 0)
		rc = al_json_parse(out, b.ptr, b.len, ds);
	if (rc == 0 && !json_is_object(*out)) {
		json_decref(*out);
		*out = NULL;
		rc = al_error_set(AL_EPARSE,
		                  "image config '%s' is not an "
		                  "object",
		                  ds);
	}
	al_buf_free(&b);
	return rc;
}

/* The FBC directory from the labels, normalised. Caller frees. */
static int configs_dir_of(const json_t *cfg, char **out)
{
	const json_t *labels =
	    json_object_get(json_object_get(cfg, "config"), "Labels");
	const char *dir = al_json_str(labels, AL_CATALOG_LABEL);
	const char *db = al_json_str(labels, AL_CATALOG_DB_LABEL);
	char *copy, *n;

	if (dir == NULL && db != NULL)
		return al_error_set(
		    AL_EUNSUPPORTED,
		    "this is a SQLite-based catalog (label %s=%s, "
		    "OpenShift 4.10 and earlier): only "
		    "file-based catalogs are supported; use a "
		    "catalog for OpenShift 4.11 or later, or "
		    "migrate it with 'opm migrate'",
		    AL_CATALOG_DB_LABEL, db);
	if (dir == NULL)
		return al_error_set(
		    AL_EPARSE, "not an operator catalog image: no %s label",
		    AL_CATALOG_LABEL);
	copy = al_strdup(dir);
	if (copy == NULL)
		return al_error_oom();
	n = al_strdup(norm(copy));
	free(copy);
	if (n == NULL)
		return al_error_oom();
	if (strstr(n, "..") != NULL) {
		free(n);
		return al_error_set(AL_EPARSE, "catalog label %s has '..'",
		                    AL_CATALOG_LABEL);
	}
	*out = n;
	return 0;
}

/* .indexignore: gitignore-style patterns relative to the file's own
 * directory (declcfg's walkFiles); supported here: plain globs, a
 * leading '/' anchoring, comments. Negations ("!") are refused. */
static int ignored(const struct cset *files, const char *path, int *out)
{
	size_t i;

	*out = 0;
	for (i = 0; i < files->n && !*out; i++) {
		const struct cfile *f = &files->v[i];
		const char *slash = strrchr(f->path, '/');
		size_t dl = slash != NULL ? (size_t)(slash - f->path) : 0;
		const char *rel, *p, *end, *base;

		if (strcmp(slash != NULL ? slash + 1 : f->path, IGNORE_FILE) !=
		    0)
			continue;
		if (dl > 0 &&
		    (strncmp(path, f->path, dl) != 0 || path[dl] != '/'))
			continue;
		rel = dl > 0 ? path + dl + 1 : path;
		base = strrchr(rel, '/') != NULL ? strrchr(rel, '/') + 1 : rel;
		p = (const char *)f->data;
		end = p + f->len;
		while (p != NULL && p < end && !*out) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t n =
			    nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
			char pat[1024];

			while (n > 0 && (p[n - 1] == '\r' || p[n - 1] == ' '))
				n--;
			if (n > 0 && n < sizeof(pat) && p[0] != '#') {
				memcpy(pat, p, n);
				pat[n] = '\0';
				if (pat[0] == '!')
					return al_error_set(
					    AL_EUNSUPPORTED,
					    "%s: negated patterns are not "
					    "supported",
					    f->path);
				if (pat[n - 1] == '/')
					pat[--n] = '\0';
				if (pat[0] == '/') {
					*out = fnmatch(pat + 1, rel,
					               FNM_PATHNAME) == 0;
				} else if (strchr(pat, '/') != NULL) {
					*out = fnmatch(pat, rel,
					               FNM_PATHNAME) == 0;
				} else {
					const char *q = rel;

					/* any path component, or below it */
					*out = fnmatch(pat, base, 0) == 0;
					while (!*out && q != NULL) {
						const char *e = strchr(q, '/');
						char comp[1024];
						size_t cl =
						    e != NULL ? (size_t)(e - q)
						              : strlen(q);

						if (cl < sizeof(comp)) {
							memcpy(comp, q, cl);
							comp[cl] = '\0';
							*out =
							    fnmatch(pat, comp,
							            0) == 0;
						}
						q = e != NULL ? e + 1 : NULL;
					}
				}
			}
			p = nl != NULL ? nl + 1 : NULL;
		}
	}
	return 0;
}

int al_catalog_image_kind(al_store *s, const al_digest *manifest,
                          const char *platform)
{
	al_manifest m;
	json_t *cfg = NULL;
	char *dir = NULL;
	int rc;

	memset(&m, 0, sizeof(m));
	if (platform == NULL)
		platform = "linux/amd64";
	if ((rc = al_store_image_manifest(s, manifest, platform, "catalog",
	                                  &m)) < 0 ||
	    (rc = load_config(s, &m, &cfg)) < 0)
		goto out;
	rc = configs_dir_of(cfg, &dir);
	if (rc == 0)
		rc = 1;
	else if (rc == AL_EPARSE &&
	         json_object_get(
	             json_object_get(json_object_get(cfg, "config"), "Labels"),
	             AL_CATALOG_LABEL) == NULL)
		rc = 0; /* no label: not a catalog */
	al_error_clear();
	if (rc == AL_EUNSUPPORTED)
		rc = 2;
out:
	free(dir);
	json_decref(cfg);
	al_manifest_clear(&m);
	return rc;
}

/*
 * The scratch file for a catalog read from s: in the store's blobs/.tmp
 * (the store's disk, where the space is; not /tmp, often memory), else in
 * $TMPDIR or /tmp for a store that cannot be written; NULL (everything in
 * memory, as before) when neither can be had.
 */
static struct cat_spool *open_spool(al_store *s)
{
	const char *tmp = getenv("TMPDIR");
	struct cat_spool *sp = NULL;
	char *dir = al_sprintf("%s/blobs/.tmp", al_store_path(s));

	if (dir != NULL && cat_spool_new(&sp, dir) < 0 &&
	    cat_spool_new(&sp, tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp") <
	        0) {
		al_log_debug("catalog: no scratch file (%s): the catalog is "
		             "held in memory",
		             al_error_message());
		sp = NULL;
	}
	al_error_clear();
	free(dir);
	return sp;
}

int al_catalog_open_image(al_catalog **out, char **configs_dir, al_store *s,
                          const al_digest *manifest, const char *platform)
{
	struct cat_spool *spool = NULL;
	struct cset files;
	al_manifest m;
	al_catalog *c = NULL;
	json_t *cfg = NULL;
	char *dir = NULL;
	size_t i;
	int rc;

	memset(&files, 0, sizeof(files));
	memset(&m, 0, sizeof(m));
	if (platform == NULL)
		platform = "linux/amd64";
	if ((rc = al_store_image_manifest(s, manifest, platform, "catalog",
	                                  &m)) < 0 ||
	    (rc = load_config(s, &m, &cfg)) < 0 ||
	    (rc = configs_dir_of(cfg, &dir)) < 0)
		goto out;
	spool = open_spool(s);
	for (i = 0; i < m.nlayers; i++) {
		if ((rc = apply_layer(&files, s, &m.layers[i], dir, spool)) < 0)
			goto out;
	}
	if ((rc = al_catalog_new(&c)) < 0)
		goto out;
	if (spool != NULL)
		cat_use_spool(c, spool);
	for (i = 0; i < files.n; i++) {
		struct cfile *f = &files.v[i];
		const char *base = strrchr(f->path, '/');
		char *where;
		int ig;

		base = base != NULL ? base + 1 : f->path;
		if (strcmp(base, IGNORE_FILE) == 0)
			continue;
		if ((rc = ignored(&files, f->path, &ig)) < 0)
			goto out;
		if (ig)
			continue;
		where = al_sprintf("%s%s%s", dir, dir[0] ? "/" : "", f->path);
		if (where == NULL) {
			rc = al_error_oom();
			goto out;
		}
		if (f->spooled)
			rc = cat_add_spooled_file(c, where, spool, f->off,
			                          f->len);
		else
			rc = al_catalog_add_file(c, where, f->data, f->len);
		free(where);
		/* parsed: its bytes are not needed any more */
		free(f->data);
		f->data = NULL;
		if (rc < 0)
			goto out;
	}
	if ((rc = al_catalog_finish(c)) < 0)
		goto out;
	if (configs_dir != NULL) {
		*configs_dir = dir;
		dir = NULL;
	}
	*out = c;
	c = NULL;
out:
	al_catalog_free(c);
	cat_spool_unref(spool);
	cset_clear(&files);
	al_manifest_clear(&m);
	json_decref(cfg);
	free(dir);
	return rc;
}

/* ---- rebuilding ------------------------------------------------------ */

/* Package names become directory names: one safe path component. */
static int safe_component(const char *s)
{
	return s[0] != '\0' && strchr(s, '/') == NULL && strcmp(s, ".") != 0 &&
	       strcmp(s, "..") != 0 && !al_str_startswith(s, WH);
}

/* The largest tar the rebuilt layer may be (the catalog, its headers and
 * whiteouts), and the buffers it goes through. */
#define LAYER_MAX ((uint64_t)AL_CATALOG_TOTAL_MAX + 64 * AL_MIB)
#define LAYER_CHUNK (64 * 1024)

/*
 * The rebuilt layer on its way to the store: the tar gathered a chunk at a
 * time, hashed (the diff ID) and deflated, the gzip bytes written to a blob
 * writer, so that memory does not grow with the catalog. deflate's output
 * does not depend on how its input is split while it is not flushed: the
 * bytes are those al_layer_gzip writes for the whole tar.
 *
 * The first error sticks (rc): jansson ignores a failed write of an object
 * key and goes on dumping (dump.c), so every later write must fail too for
 * the rendering to end in that error rather than in a layer with a hole.
 */
struct layer_out {
	al_blob_writer *w;
	al_hasher *h; /* SHA-256 of the tar */
	z_stream zs;
	int zinit, rc;
	uint64_t tar_len, gz_len;
	size_t nin;
	uint8_t in[LAYER_CHUNK], out[LAYER_CHUNK];
};

/* Hash and deflate what in[] holds; Z_FINISH ends the gzip stream. */
static int layer_flush(struct layer_out *lo, int flush)
{
	int zr, rc;

	if ((rc = al_hasher_update(lo->h, lo->in, lo->nin)) < 0)
		return rc;
	lo->zs.next_in = lo->in;
	lo->zs.avail_in = (uInt)lo->nin;
	lo->nin = 0;
	do {
		size_t have;

		lo->zs.next_out = lo->out;
		lo->zs.avail_out = sizeof(lo->out);
		zr = deflate(&lo->zs, flush);
		if (zr == Z_STREAM_ERROR)
			return al_error_set(AL_ENOMEM, "zlib failed");
		have = sizeof(lo->out) - lo->zs.avail_out;
		if (have > LAYER_MAX - lo->gz_len)
			return al_error_set(AL_ELIMIT,
			                    "the compressed catalog layer is "
			                    "larger than %llu bytes",
			                    (unsigned long long)LAYER_MAX);
		if (have > 0 &&
		    (rc = al_blob_writer_write(lo->w, lo->out, have)) < 0)
			return rc;
		lo->gz_len += have;
	} while (flush == Z_FINISH ? zr != Z_STREAM_END
	                           : lo->zs.avail_out == 0);
	return 0;
}

/* The tar's bytes (an al_writer write function). */
static int layer_write(void *ud, const uint8_t *p, size_t n)
{
	struct layer_out *lo = ud;
	int rc;

	if (lo->rc < 0)
		return lo->rc;
	if (n > LAYER_MAX - lo->tar_len)
		return lo->rc = al_error_set(
		           AL_ELIMIT,
		           "the catalog layer is larger than %llu bytes",
		           (unsigned long long)LAYER_MAX);
	lo->tar_len += n;
	while (n > 0) {
		size_t k = sizeof(lo->in) - lo->nin;

		if (k > n)
			k = n;
		memcpy(lo->in + lo->nin, p, k);
		lo->nin += k;
		p += k;
		n -= k;
		if (lo->nin == sizeof(lo->in) &&
		    (rc = layer_flush(lo, Z_NO_FLUSH)) < 0)
			return lo->rc = rc;
	}
	return 0;
}

/* The first pass over a catalog.json: its size, for the tar header (the
 * first error sticks, as in struct layer_out). */
struct count {
	const char *name;
	uint64_t n, max;
	int layer; /* max is what the layer has room for, not the file limit */
	int rc;
};

static int count_sink(void *ud, const char *p, size_t n)
{
	struct count *cn = ud;

	(void)p;
	if (cn->rc < 0)
		return cn->rc;
	if (n > cn->max - cn->n && cn->layer)
		return cn->rc = al_error_set(
		           AL_ELIMIT,
		           "the catalog layer is larger than %llu bytes",
		           (unsigned long long)LAYER_MAX);
	if (n > cn->max - cn->n)
		return cn->rc = al_error_set(
		           AL_ELIMIT,
		           "the catalog of package '%s' is larger than %llu "
		           "bytes",
		           cn->name, (unsigned long long)AL_CATALOG_TOTAL_MAX);
	cn->n += n;
	return 0;
}

/* The second pass: the same bytes into the layer, no more than counted. */
struct body {
	struct layer_out *lo;
	uint64_t left;
};

static int body_sink(void *ud, const char *p, size_t n)
{
	struct body *b = ud;

	if (b->lo->rc < 0)
		return b->lo->rc;
	if (n > b->left)
		return b->lo->rc = al_error_set(
		           AL_EINVAL,
		           "internal error: a catalog rendered to more bytes "
		           "than it did the first time");
	b->left -= n;
	return layer_write(b->lo, (const uint8_t *)p, n);
}

/* With a scratch file (a catalog read from an image): the one rendering,
 * counted as the first pass is, into the scratch file through a chunk;
 * the layer then copies it from there. */
struct spooled {
	struct count cn;
	struct cat_spool *sp;
	al_buf b;     /* bytes not yet in the scratch file (a chunk, or one
	               * larger piece) */
	uint64_t off; /* where the rendering starts there */
	int started;
};

static int spooled_flush(struct spooled *sd)
{
	uint64_t off = 0;
	int rc;

	if (sd->b.len == 0)
		return 0;
	if ((rc = cat_spool_put(sd->sp, sd->b.ptr, sd->b.len, &off)) < 0)
		return sd->cn.rc = rc;
	if (!sd->started) {
		sd->off = off;
		sd->started = 1;
	}
	al_buf_reset(&sd->b);
	return 0;
}

static int spooled_sink(void *ud, const char *p, size_t n)
{
	struct spooled *sd = ud;
	int rc;

	if ((rc = count_sink(&sd->cn, p, n)) < 0)
		return rc;
	/* the puts append, so where the chunks end does not matter */
	if ((rc = al_buf_append(&sd->b, p, n)) < 0)
		return sd->cn.rc = rc;
	return sd->b.len >= LAYER_CHUNK ? spooled_flush(sd) : 0;
}

/* n bytes at off in the scratch file into the layer. */
static int copy_spooled(struct layer_out *lo, struct cat_spool *sp,
                        uint64_t off, uint64_t n)
{
	uint8_t *chunk = malloc(LAYER_CHUNK);
	int rc = chunk == NULL ? al_error_oom() : 0;

	while (rc == 0 && n > 0) {
		size_t k = n < LAYER_CHUNK ? (size_t)n : LAYER_CHUNK;

		if ((rc = cat_spool_read(sp, off, k, chunk)) == 0)
			rc = layer_write(lo, chunk, k);
		off += k;
		n -= k;
	}
	free(chunk);
	return rc;
}

/* Package i, or the objects of no package for i == c->npackages. */
static int render(const al_catalog *c, size_t i, al_catalog_sink fn, void *ud)
{
	if (i < c->npackages)
		return al_catalog_render_package_to(c, i, fn, ud);
	return al_catalog_render_global_to(c, fn, ud);
}

/*
 * DIR/NAME/ and DIR/NAME/catalog.json for package i, or for the objects
 * of no package when i is c->npackages (nothing when there are none). A
 * tar header holds the size of the data that follows it: a catalog with a
 * scratch file renders the package once into it and the layer copies it
 * from there (a rendering puts every spilled value back: doing it twice
 * cost a third of the rebuild); one without renders it twice, counted
 * then written (rendering is deterministic; a second rendering of another
 * size is an internal error, not a corrupt layer).
 */
static int tar_package(struct layer_out *lo, const al_catalog *c, size_t i,
                       const char *dir)
{
	const char *name =
	    i < c->npackages ? c->packages[i].name : AL_CATALOG_GLOBAL_NAME;
	al_writer w = {layer_write, NULL, lo};
	struct spooled sd = {{name, 0, AL_CATALOG_TOTAL_MAX, 0, 0},
	                     c->spool,
	                     AL_BUF_INIT(AL_CATALOG_TOTAL_MAX),
	                     0,
	                     0};
	struct count cn = sd.cn;
	struct body b = {lo, 0};
	int rc;

	if (LAYER_MAX - lo->tar_len < cn.max) {
		cn.max = LAYER_MAX - lo->tar_len;
		cn.layer = 1;
	}
	if (c->spool != NULL) {
		sd.cn = cn;
		rc = render(c, i, spooled_sink, &sd);
		if (rc >= 0)
			rc = spooled_flush(&sd);
		al_buf_free(&sd.b);
		cn = sd.cn;
	} else {
		rc = render(c, i, count_sink, &cn);
	}
	if (rc >= 0 && cn.rc < 0)
		rc = cn.rc; /* what a dropped error would have hidden */
	if (rc < 0 || (i == c->npackages && rc == 0))
		return rc;
	if (!safe_component(name))
		return al_error_set(AL_EUNSUPPORTED,
		                    "package name '%s' cannot be a "
		                    "directory name",
		                    name);
	if ((rc = al_layer_tar_named(&w, 1, 0, "%s/%s/", dir, name)) < 0 ||
	    (rc = al_layer_tar_named(&w, 0, cn.n, "%s/%s/catalog.json", dir,
	                             name)) < 0)
		goto out;
	if (c->spool != NULL) {
		if ((rc = copy_spooled(lo, c->spool, sd.off, cn.n)) == 0)
			rc = al_layer_tar_pad(&w, cn.n);
		goto out;
	}
	b.left = cn.n;
	rc = render(c, i, body_sink, &b);
	if (rc >= 0 && lo->rc < 0)
		rc = lo->rc;
	if (rc < 0)
		goto out;
	if (b.left != 0) {
		rc = al_error_set(AL_EINVAL,
		                  "internal error: package '%s' rendered to "
		                  "%llu bytes, then to fewer",
		                  name, (unsigned long long)cn.n);
		goto out;
	}
	rc = al_layer_tar_pad(&w, cn.n);
out:
	return rc;
}

/* The layer's tar: the directory, an opaque whiteout, every package, the
 * whiteout of opm's cache (cache, or NULL), the end. */
static int build_tar(struct layer_out *lo, const al_catalog *c, const char *dir,
                     const char *cache)
{
	static const uint8_t zero[2 * AL_LAYER_TAR_BLOCK];
	al_writer w = {layer_write, NULL, lo};
	size_t i;
	int rc;

	/* the directory itself: later layers' directories win their mode;
	 * then hide every file the lower layers had in it */
	if ((rc = al_layer_tar_named(&w, 1, 0, "%s/", dir)) < 0 ||
	    (rc = al_layer_tar_named(&w, 0, 0, "%s/%s", dir, WH_OPQ)) < 0)
		return rc;
	for (i = 0; i <= c->npackages; i++) {
		if ((rc = tar_package(lo, c, i, dir)) < 0)
			return rc;
	}
	if (cache != NULL) {
		const char *slash = strrchr(cache, '/');

		rc = slash != NULL
		         ? al_layer_tar_named(&w, 0, 0, "%.*s/%s%s",
		                              (int)(slash - cache), cache, WH,
		                              slash + 1)
		         : al_layer_tar_named(&w, 0, 0, "%s%s", WH, cache);
		if (rc < 0)
			return rc;
	}
	return layer_write(lo, zero, sizeof(zero));
}

/*
 * Write the rebuilt layer (build_tar, gzipped) to s as it is made: *layer
 * and *size receive the gzip blob's digest and size, *diff the SHA-256 of
 * the tar (its diff ID). On failure the blob writer is aborted: nothing is
 * left in the store.
 */
static int write_layer(al_store *s, const al_catalog *c, const char *dir,
                       const char *cache, al_digest *layer, uint64_t *size,
                       al_digest *diff)
{
	struct layer_out *lo = calloc(1, sizeof(*lo));
	al_digest ld, dd;
	int rc;

	if (lo == NULL)
		return al_error_oom();
	if ((rc = al_layer_gzip_init(&lo->zs)) < 0)
		goto out;
	lo->zinit = 1;
	if ((rc = al_hasher_new(&lo->h, AL_DIGEST_SHA256)) < 0 ||
	    (rc = al_store_blob_begin(s, NULL, 0, &lo->w)) < 0 ||
	    (rc = build_tar(lo, c, dir, cache)) < 0 ||
	    (rc = layer_flush(lo, Z_FINISH)) < 0 ||
	    (rc = al_hasher_final(lo->h, &dd)) < 0)
		goto out;
	rc = al_blob_writer_commit_digest(lo->w, &ld);
	lo->w = NULL; /* commit frees it, whatever it returns */
	if (rc < 0)
		goto out;
	*layer = ld;
	*size = lo->gz_len;
	*diff = dd;
out:
	al_blob_writer_abort(lo->w);
	if (lo->zinit)
		deflateEnd(&lo->zs);
	al_hasher_free(lo->h);
	free(lo);
	return rc;
}

/*
 * opm's serving cache: find --cache-dir in the config's Cmd or
 * Entrypoint, remove it and any --cache-enforce-integrity so that opm
 * serve builds its cache at start (see docs/operators.md for why it is
 * not rebuilt here). *cache receives the normalised directory (caller
 * frees) or NULL when the image has none.
 */
static int drop_cache_flags(json_t *cfg, char **cache)
{
	static const char *const keys[] = {"Cmd", "Entrypoint"};
	json_t *cc = json_object_get(cfg, "config");
	size_t k;

	*cache = NULL;
	for (k = 0; k < 2; k++) {
		json_t *arr = json_object_get(cc, keys[k]);
		size_t i = 0;

		if (!json_is_array(arr))
			continue;
		while (i < json_array_size(arr)) {
			const char *a =
			    json_string_value(json_array_get(arr, i));
			const char *val = NULL;
			size_t drop = 0;

			if (a == NULL) {
				i++;
				continue;
			}
			if (strcmp(a, "--cache-dir") == 0) {
				val = json_string_value(
				    json_array_get(arr, i + 1));
				drop = val != NULL ? 2 : 1;
			} else if (al_str_startswith(a, "--cache-dir=")) {
				val = a + strlen("--cache-dir=");
				drop = 1;
			} else if (strcmp(a, "--cache-enforce-integrity") ==
			               0 ||
			           al_str_startswith(
			               a, "--cache-enforce-integrity=")) {
				drop = 1;
			}
			if (val != NULL && *cache == NULL && val[0] != '\0') {
				char *copy = al_strdup(val);

				if (copy == NULL)
					return al_error_oom();
				*cache = al_strdup(norm(copy));
				free(copy);
				if (*cache == NULL)
					return al_error_oom();
				if ((*cache)[0] == '\0' ||
				    strstr(*cache, "..") != NULL) {
					free(*cache);
					*cache = NULL;
				}
			}
			if (drop == 0) {
				i++;
				continue;
			}
			while (drop-- > 0)
				json_array_remove(arr, i);
		}
	}
	return 0;
}

static const char *oci_layer_type(const char *mt)
{
	if (strcmp(mt, AL_MT_DOCKER_LAYER_GZIP) == 0)
		return AL_MT_OCI_LAYER_GZIP;
	if (strcmp(mt, AL_MT_DOCKER_LAYER) == 0)
		return AL_MT_OCI_LAYER;
	return mt;
}

/* Rebuild one image manifest (base, or the platform entry of an index);
 * writes the blobs, tags nothing. */
static int rebuild_one(al_store *s, const al_digest *base, const char *platform,
                       const al_catalog *c, al_descriptor *out)
{
	char ds[AL_DIGEST_STRMAX], *dir = NULL, *cache = NULL;
	char *cfgtext = NULL, *mtext = NULL;
	json_t *cfg = NULL, *ncfg = NULL, *man = NULL, *layers = NULL;
	json_t *rootfs, *diffs, *hist;
	al_digest diff, layer, cfgd, mand;
	al_descriptor d;
	al_manifest m;
	uint64_t layer_size = 0;
	size_t i;
	int rc;

	memset(&m, 0, sizeof(m));
	memset(&d, 0, sizeof(d));
	if ((rc = al_store_image_manifest(s, base, platform, "catalog", &m)) <
	        0 ||
	    (rc = load_config(s, &m, &cfg)) < 0 ||
	    (rc = configs_dir_of(cfg, &dir)) < 0)
		goto out;
	if (dir[0] == '\0') {
		rc = al_error_set(AL_EUNSUPPORTED,
		                  "the catalog directory is the image root; "
		                  "rebuilding it is not supported");
		goto out;
	}
	ncfg = json_deep_copy(cfg);
	if (ncfg == NULL) {
		rc = al_error_oom();
		goto out;
	}
	if ((rc = drop_cache_flags(ncfg, &cache)) < 0 ||
	    (rc = write_layer(s, c, dir, cache, &layer, &layer_size, &diff)) <
	        0)
		goto out;
	rootfs = json_object_get(ncfg, "rootfs");
	diffs = json_object_get(rootfs, "diff_ids");
	if (!json_is_array(diffs) || json_array_size(diffs) != m.nlayers) {
		rc = al_error_set(AL_EPARSE,
		                  "image config has no rootfs.diff_ids for its "
		                  "%zu layers",
		                  m.nlayers);
		goto out;
	}
	hist = json_object_get(ncfg, "history");
	if (hist == NULL) {
		hist = json_array();
		if (hist == NULL ||
		    json_object_set_new(ncfg, "history", hist) < 0) {
			rc = al_error_oom();
			goto out;
		}
	}
	if (!json_is_array(hist) ||
	    json_array_append_new(diffs,
	                          json_string(al_digest_str(&diff, ds))) < 0 ||
	    json_array_append_new(
	        hist, json_pack("{s:s, s:s}", "created_by",
	                        "airlock catalog rebuild", "comment",
	                        "filtered file-based catalog; opm serve cache "
	                        "removed, built at start")) < 0) {
		rc = al_error_set(AL_EPARSE, "image config history is not a "
		                             "list");
		goto out;
	}
	cfgtext = json_dumps(ncfg, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (cfgtext == NULL) {
		rc = al_error_oom();
		goto out;
	}
	if ((rc = al_store_put_blob(s, (const uint8_t *)cfgtext,
	                            strlen(cfgtext), &cfgd)) < 0)
		goto out;
	layers = json_array();
	if (layers == NULL) {
		rc = al_error_oom();
		goto out;
	}
	for (i = 0; i < m.nlayers; i++) {
		if (json_array_append_new(
		        layers, al_layer_desc_json(
		                    oci_layer_type(m.layers[i].media_type),
		                    &m.layers[i].digest, m.layers[i].size)) <
		    0) {
			rc = al_error_oom();
			goto out;
		}
	}
	if (json_array_append_new(layers,
	                          al_layer_desc_json(AL_MT_OCI_LAYER_GZIP,
	                                             &layer, layer_size)) < 0) {
		rc = al_error_oom();
		goto out;
	}
	man = json_pack(
	    "{s:i, s:s, s:o, s:O}", "schemaVersion", 2, "mediaType",
	    AL_MT_OCI_MANIFEST, "config",
	    al_layer_desc_json(AL_MT_OCI_CONFIG, &cfgd, strlen(cfgtext)),
	    "layers", layers);
	mtext = man != NULL
	            ? json_dumps(man, JSON_COMPACT | JSON_PRESERVE_ORDER)
	            : NULL;
	if (mtext == NULL) {
		rc = al_error_oom();
		goto out;
	}
	if ((rc = al_store_put_blob(s, (const uint8_t *)mtext, strlen(mtext),
	                            &mand)) < 0)
		goto out;
	d.media_type = al_strdup(AL_MT_OCI_MANIFEST);
	if (d.media_type == NULL) {
		rc = al_error_oom();
		goto out;
	}
	d.digest = mand;
	d.size = strlen(mtext);
	*out = d;
	memset(&d, 0, sizeof(d));
out:
	al_descriptor_clear(&d);
	al_manifest_clear(&m);
	json_decref(cfg);
	json_decref(ncfg);
	json_decref(man);
	json_decref(layers);
	free(cfgtext);
	free(mtext);
	free(dir);
	free(cache);
	return rc;
}

/* An index of the rebuilt platform images (attestation entries, platform
 * "unknown", are left out: they describe the old images). */
static int rebuild_index(al_store *s, const al_manifest *idx,
                         const al_catalog *c, al_descriptor *out)
{
	json_t *mans = json_array(), *doc = NULL;
	char ds[AL_DIGEST_STRMAX], *text = NULL;
	al_descriptor d;
	al_digest id;
	size_t i;
	int rc = 0;

	memset(&d, 0, sizeof(d));
	if (mans == NULL)
		return al_error_oom();
	for (i = 0; i < idx->nmanifests; i++) {
		const al_descriptor *e = &idx->manifests[i];
		al_descriptor nd;
		json_t *ent, *plat;

		memset(&nd, 0, sizeof(nd));
		if (e->os != NULL && strcmp(e->os, "unknown") == 0)
			continue;
		if (al_media_type_is_index(e->media_type)) {
			rc = al_error_set(
			    AL_EUNSUPPORTED,
			    "catalog index entry '%s' is itself an "
			    "index",
			    al_digest_str(&e->digest, ds));
			goto out;
		}
		if ((rc = rebuild_one(s, &e->digest, "linux/amd64", c, &nd)) <
		    0) {
			rc = al_error_wrap(rc, "platform %s/%s",
			                   e->os != NULL ? e->os : "?",
			                   e->arch != NULL ? e->arch : "?");
			goto out;
		}
		ent =
		    al_layer_desc_json(AL_MT_OCI_MANIFEST, &nd.digest, nd.size);
		al_descriptor_clear(&nd);
		plat = e->os != NULL || e->arch != NULL
		           ? json_pack("{s:s, s:s}", "architecture",
		                       e->arch != NULL ? e->arch : "", "os",
		                       e->os != NULL ? e->os : "")
		           : NULL;
		if (plat != NULL && e->variant != NULL)
			json_object_set_new(plat, "variant",
			                    json_string(e->variant));
		if (ent == NULL ||
		    (plat != NULL &&
		     json_object_set_new(ent, "platform", plat) < 0) ||
		    json_array_append_new(mans, ent) < 0) {
			rc = al_error_oom();
			goto out;
		}
	}
	if (json_array_size(mans) == 0) {
		rc = al_error_set(AL_EPARSE, "the catalog index has no image");
		goto out;
	}
	doc = json_pack("{s:i, s:s, s:O}", "schemaVersion", 2, "mediaType",
	                AL_MT_OCI_INDEX, "manifests", mans);
	text = doc != NULL ? json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER)
	                   : NULL;
	if (text == NULL) {
		rc = al_error_oom();
		goto out;
	}
	if ((rc = al_store_put_blob(s, (const uint8_t *)text, strlen(text),
	                            &id)) < 0)
		goto out;
	d.media_type = al_strdup(AL_MT_OCI_INDEX);
	if (d.media_type == NULL) {
		rc = al_error_oom();
		goto out;
	}
	d.digest = id;
	d.size = strlen(text);
	*out = d;
	memset(&d, 0, sizeof(d));
out:
	al_descriptor_clear(&d);
	json_decref(doc);
	json_decref(mans);
	free(text);
	return rc;
}

int al_catalog_rebuild(al_store *s, const al_digest *base, const char *platform,
                       const al_catalog *c, const char *name,
                       al_descriptor *out)
{
	al_buf b = AL_BUF_INIT(AL_OCI_MANIFEST_MAX);
	char ds[AL_DIGEST_STRMAX];
	al_descriptor d;
	al_manifest m;
	int rc;

	memset(&m, 0, sizeof(m));
	memset(&d, 0, sizeof(d));
	if (s == NULL || base == NULL || c == NULL || out == NULL ||
	    !c->finished)
		return al_error_set(AL_EINVAL, "no store, image or catalog");
	al_digest_str(base, ds);
	if ((rc = al_store_read_blob(s, base, &b)) < 0 ||
	    (rc = al_manifest_parse(&m, b.ptr, b.len, NULL, ds)) < 0)
		goto out;
	if (m.is_index && platform == NULL)
		rc = rebuild_index(s, &m, c, &d);
	else
		rc = rebuild_one(s, base,
		                 platform != NULL ? platform : "linux/amd64", c,
		                 &d);
	if (rc < 0)
		goto out;
	if (name != NULL && (rc = al_store_tag(s, name, &d)) < 0)
		goto out;
	*out = d;
	memset(&d, 0, sizeof(d));
out:
	al_descriptor_clear(&d);
	al_manifest_clear(&m);
	al_buf_free(&b);
	return rc;
}
