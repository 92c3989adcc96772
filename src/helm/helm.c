/* helm.c: Helm chart versions, repository indexes, chart archives read
 * without running templates, and the Helm OCI artifact (docs/helm.md). */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "airlock/buf.h"
#include "airlock/clock.h"
#include "airlock/error.h"
#include "airlock/helm.h"
#include "json_int.h"
#include "airlock/ref.h"
#include "yaml_int.h"
#include "name_int.h"
#include "version_int.h"

/* ---- versions (Masterminds semver v3, NewVersion) ------------------------ */

/* Masterminds NewVersion through version.c's one parser. */
static int hv_parse(const char *s, al_semver *v)
{
	return s == NULL
	           ? -1
	           : al_semver_parse(v, s, strlen(s), AL_SEMVER_MASTERMINDS);
}

int al_helm_version_valid(const char *s)
{
	al_semver v;

	return s != NULL && strlen(s) <= 256 && hv_parse(s, &v) == 0;
}

int al_helm_version_compare(const char *a, const char *b)
{
	al_semver x, y;
	int va = hv_parse(a, &x) == 0, vb = hv_parse(b, &y) == 0;

	if (!va || !vb)
		return va - vb;
	return al_semver_cmp(&x, &y);
}

/* ---- index.yaml (repo.IndexFile) ---------------------------------------- */

static int push_str(char ***arr, size_t *n, const char *s, size_t len)
{
	char **p;
	char *d = al_strndup(s, len);

	if (d == NULL)
		return al_error_oom();
	p = realloc(*arr, (*n + 1) * sizeof(*p));
	if (p == NULL) {
		free(d);
		return al_error_oom();
	}
	p[(*n)++] = d;
	*arr = p;
	return 0;
}

/* The text of a scalar, whatever YAML type it resolves to (Helm's
 * strings are read as written: "version: 1.10" is "1.10"). */
static const char *scalar(const al_yaml_node *n)
{
	if (n == NULL || n->type != AL_YAML_SCALAR ||
	    strlen(n->value) != n->len)
		return NULL;
	return n->value;
}

/* A scalar that is a string, not null (a plain "~", "null" or ""). */
static const char *scalar_str(const al_yaml_node *n)
{
	const char *s = scalar(n);

	if (s == NULL)
		return NULL;
	if (n->plain &&
	    (s[0] == '\0' || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 ||
	     strcmp(s, "Null") == 0 || strcmp(s, "NULL") == 0))
		return NULL;
	return s;
}

static void entry_clear(al_helm_index_entry *e)
{
	size_t i;

	free(e->name);
	free(e->version);
	free(e->type);
	for (i = 0; i < e->nurls; i++)
		free(e->urls[i]);
	free(e->urls);
	free(e->digest);
	memset(e, 0, sizeof(*e));
}

void al_helm_index_clear(al_helm_index *ix)
{
	size_t i;

	if (ix == NULL)
		return;
	for (i = 0; i < ix->n; i++)
		entry_clear(&ix->entries[i]);
	free(ix->entries);
	memset(ix, 0, sizeof(*ix));
}

typedef struct sort_item {
	al_helm_index_entry e;
	size_t chart; /* position of the chart in entries: */
	size_t pos;   /* position in the file, for a stable order */
} sort_item;

/* Per chart in file order, newest first (sort.Reverse of
 * ChartVersions.Less: versions that do not parse last). */
static int item_cmp(const void *pa, const void *pb)
{
	const sort_item *a = pa, *b = pb;
	int c;

	if (a->chart != b->chart)
		return a->chart < b->chart ? -1 : 1;
	c = al_helm_version_compare(b->e.version, a->e.version);
	if (c != 0)
		return c;
	return a->pos < b->pos ? -1 : a->pos > b->pos;
}

static int index_entry_ok(const al_yaml_node *key, const al_yaml_node *m)
{
	const char *v = scalar_str(al_yaml_get(m, "version"));

	if (v == NULL || key->value == NULL ||
	    !al_name_ok(key->value, strlen(key->value), AL_NAME_COMPONENT, 0) ||
	    !al_name_ok(v, strlen(v), AL_NAME_FIELD, 0) ||
	    !al_helm_version_valid(v))
		return 0;
	return 1;
}

static int parse_entry(const al_yaml_node *key, const al_yaml_node *m,
                       al_helm_index_entry *e)
{
	const al_yaml_node *n;
	const char *s;
	size_t i;
	int rc;

	if ((e->name = al_strdup(key->value)) == NULL)
		return al_error_oom();
	if ((s = scalar_str(al_yaml_get(m, "version"))) != NULL &&
	    (e->version = al_strdup(s)) == NULL)
		return al_error_oom();
	if ((s = scalar_str(al_yaml_get(m, "type"))) != NULL &&
	    (e->type = al_strdup(s)) == NULL)
		return al_error_oom();
	if ((s = scalar_str(al_yaml_get(m, "digest"))) != NULL &&
	    (e->digest = al_strdup(s)) == NULL)
		return al_error_oom();
	n = al_yaml_get(m, "urls");
	if (n != NULL && n->type == AL_YAML_SEQ) {
		for (i = 0; i < n->n; i++) {
			if ((s = scalar_str(n->items[i])) == NULL)
				continue;
			if ((rc = push_str(&e->urls, &e->nurls, s, strlen(s))) <
			    0)
				return rc;
		}
	}
	return 0;
}

int al_helm_index_parse(al_helm_index *out, const uint8_t *p, size_t n,
                        const char *name)
{
	al_yaml_node **docs = NULL;
	size_t ndocs = 0, i, j, nitems = 0, cap = 0;
	const al_yaml_node *root, *entries;
	sort_item *items = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	if (n > AL_HELM_INDEX_MAX)
		return al_error_set(AL_ELIMIT, "%s is larger than %d bytes",
		                    name, AL_HELM_INDEX_MAX);
	if (n == 0)
		return al_error_set(AL_EPARSE, "%s: empty index", name);
	if ((rc = al_yaml_load(&docs, &ndocs, p, n, name)) < 0)
		goto out;
	if (ndocs != 1 || docs[0] == NULL || docs[0]->type != AL_YAML_MAP) {
		rc = al_error_set(AL_EPARSE,
		                  "%s: not a chart repository index (one "
		                  "mapping with apiVersion and entries)",
		                  name);
		goto out;
	}
	root = docs[0];
	if (scalar_str(al_yaml_get(root, "apiVersion")) == NULL) {
		rc = al_error_set(AL_EPARSE, "%s: no apiVersion in index file",
		                  name);
		goto out;
	}
	entries = al_yaml_get(root, "entries");
	if (entries != NULL && entries->type != AL_YAML_MAP &&
	    scalar_str(entries) != NULL) {
		rc = al_error_set(AL_EPARSE,
		                  "%s:%zu:%zu: entries must be a mapping", name,
		                  entries->line, entries->column);
		goto out;
	}
	for (i = 0;
	     entries != NULL && entries->type == AL_YAML_MAP && i < entries->n;
	     i++) {
		const al_yaml_node *vs = entries->items[i];

		if (vs->type != AL_YAML_SEQ)
			continue;
		for (j = 0; j < vs->n; j++) {
			const al_yaml_node *m = vs->items[j];

			/* loadIndex skips empty and invalid entries;
			 * ChartVersion.Validate makes the name one path
			 * component and the version semver (Helm's
			 * pkg/repo/index.go, chart Metadata.Validate): they
			 * become a store name, a tag and lines of mapping.txt
			 */
			if (m->type != AL_YAML_MAP ||
			    !index_entry_ok(entries->keys[i], m))
				continue;
			if (nitems == cap) {
				size_t nc = cap ? cap * 2 : 64;
				sort_item *g = realloc(items, nc * sizeof(*g));

				if (g == NULL) {
					rc = al_error_oom();
					goto out;
				}
				items = g;
				cap = nc;
			}
			memset(&items[nitems], 0, sizeof(items[nitems]));
			items[nitems].chart = i;
			items[nitems].pos = nitems;
			nitems++;
			if ((rc = parse_entry(entries->keys[i], m,
			                      &items[nitems - 1].e)) < 0)
				goto out;
		}
	}
	if (nitems > 0)
		qsort(items, nitems, sizeof(*items), item_cmp);
	out->entries = calloc(nitems + 1, sizeof(*out->entries));
	if (out->entries == NULL) {
		rc = al_error_oom();
		goto out;
	}
	for (i = 0; i < nitems; i++)
		out->entries[i] = items[i].e;
	out->n = nitems;
	nitems = 0;
out:
	for (i = 0; i < nitems; i++)
		entry_clear(&items[i].e);
	free(items);
	al_yaml_docs_free(docs, ndocs);
	if (rc < 0)
		al_helm_index_clear(out);
	return rc;
}

int al_helm_index_get(const al_helm_index *ix, const char *name,
                      const char *version, const al_helm_index_entry **out)
{
	al_buf have = AL_BUF_INIT(512);
	size_t i, count = 0;
	int any = version != NULL && version[0] != '\0';
	al_semver want, v;
	int rc;

	*out = NULL;
	if (any && hv_parse(version, &want) < 0)
		return al_error_set(AL_EINVAL, "'%s' is not a chart version",
		                    version);
	/* the exact text first (IndexFile.Get) */
	for (i = 0; any && i < ix->n; i++)
		if (strcmp(ix->entries[i].name, name) == 0 &&
		    strcmp(ix->entries[i].version, version) == 0) {
			*out = &ix->entries[i];
			return 0;
		}
	for (i = 0; i < ix->n; i++) {
		const al_helm_index_entry *e = &ix->entries[i];

		if (strcmp(e->name, name) != 0)
			continue;
		count++;
		if (have.len < 400)
			al_buf_printf(&have, "%s%s", have.len ? ", " : "",
			              e->version);
		if (hv_parse(e->version, &v) < 0)
			continue;
		/* "*" admits no prerelease; "=X" is equality */
		if (any ? al_semver_cmp(&v, &want) == 0 : v.pre == NULL) {
			*out = e;
			al_buf_free(&have);
			return 0;
		}
	}
	if (count == 0)
		rc = al_error_set(AL_ENOTFOUND,
		                  "chart '%s' is not in the repository index",
		                  name);
	else
		rc = al_error_set(AL_ENOTFOUND,
		                  "chart '%s' has no %s%s in the repository "
		                  "index (it has %s%s)",
		                  name, any ? "version " : "stable version",
		                  any ? version : "", al_buf_cstr(&have),
		                  have.len >= 400 ? ", ..." : "");
	al_buf_free(&have);
	return rc;
}

int al_helm_resolve_url(const char *repo_url, const char *ref, char **out)
{
	const char *q, *colon = strchr(ref, ':'), *slash = strchr(ref, '/');
	char *base = NULL;
	size_t bl;

	*out = NULL;
	/* absolute: a scheme before any '/' */
	if (colon != NULL && (slash == NULL || colon < slash) && colon > ref) {
		*out = al_strdup(ref);
		goto done;
	}
	q = strchr(repo_url, '?');
	bl = q != NULL ? (size_t)(q - repo_url) : strlen(repo_url);
	while (bl > 0 && repo_url[bl - 1] == '/')
		bl--;
	if (ref[0] == '/') {
		/* host-relative: keep scheme://host */
		const char *h = strstr(repo_url, "://");
		const char *e = h != NULL ? strchr(h + 3, '/') : NULL;
		size_t hl = e != NULL && (size_t)(e - repo_url) < bl
		                ? (size_t)(e - repo_url)
		                : bl;

		base = al_strndup(repo_url, hl);
		*out = base != NULL
		           ? al_sprintf("%s%s%s", base, ref, q != NULL ? q : "")
		           : NULL;
	} else {
		const char *r = ref;

		while (r[0] == '.' && r[1] == '/')
			r += 2;
		base = al_strndup(repo_url, bl);
		*out = base != NULL
		           ? al_sprintf("%s/%s%s", base, r, q != NULL ? q : "")
		           : NULL;
	}
	free(base);
done:
	return *out != NULL ? 0 : al_error_oom();
}

char *al_helm_tag(const char *version)
{
	char *t = al_strdup(version), *p;

	for (p = t; p != NULL && *p != '\0'; p++)
		if (*p == '+')
			*p = '_';
	return t;
}

/* ---- chart archives ------------------------------------------------------ */

typedef struct hfile {
	char *chart; /* "" for the chart itself, "charts/sub/" for a subchart */
	char *rel;   /* "values.yaml", "templates/x.yaml", "charts/y.tgz" */
	uint8_t *data;
	size_t len;
	int64_t mtime;
} hfile;

typedef struct hset {
	hfile *v;
	size_t n, cap;
	uint64_t total; /* decompressed bytes of every file read or skipped */
	const char *what;
} hset;

static void hset_free(hset *h)
{
	size_t i;

	for (i = 0; i < h->n; i++) {
		free(h->v[i].chart);
		free(h->v[i].rel);
		free(h->v[i].data);
	}
	free(h->v);
	memset(h, 0, sizeof(*h));
}

/* The byte source libarchive reads: an fd, or memory. */
typedef struct hsrc {
	int fd;
	const uint8_t *mem;
	size_t memlen, off;
	uint64_t nread;
	int rc;
	uint8_t buf[65536];
} hsrc;

static la_ssize_t src_read(struct archive *a, void *ud, const void **out)
{
	hsrc *s = ud;
	ssize_t r;

	if (s->mem != NULL) {
		size_t n = s->memlen - s->off;

		if (n > sizeof(s->buf))
			n = sizeof(s->buf);
		*out = s->mem + s->off;
		s->off += n;
		return (la_ssize_t)n;
	}
	do {
		r = read(s->fd, s->buf, sizeof(s->buf));
	} while (r < 0 && errno == EINTR);
	if (r < 0) {
		s->rc = al_error_errno(errno, "cannot read the chart archive");
		archive_set_error(a, EIO, "read failed");
		return -1;
	}
	s->nread += (uint64_t)r;
	if (s->nread > AL_HELM_ARCHIVE_MAX) {
		s->rc = AL_ELIMIT;
		archive_set_error(a, EFBIG, "archive too large");
		return -1;
	}
	*out = s->buf;
	return (la_ssize_t)r;
}

/*
 * Where an entry of a chart archive goes, as Helm's loader checks it
 * (pkg/chart/loader/archive: "chart illegally contains absolute paths",
 * "illegally references parent directory", "illegally contains content
 * outside the base directory"): *top is the first component, *rel the
 * rest; *rel NULL for the top directory itself. Caller frees both.
 */
static int entry_path(const char *path, int dir, const char *what, char **top,
                      char **rel)
{
	al_buf b = AL_BUF_INIT(4096);
	const char *p = path, *e;
	size_t ncomp = 0;
	int rc = 0;

	*top = *rel = NULL;
	if (path[0] == '/' || path[0] == '\\')
		return al_error_set(AL_EPARSE,
		                    "%s: chart illegally contains absolute "
		                    "paths ('%.200s')",
		                    what, path);
	if (strchr(path, '\\') != NULL || strlen(path) > 4000)
		return al_error_set(AL_EPARSE,
		                    "%s: chart contains illegally named files "
		                    "('%.200s')",
		                    what, path);
	for (; *p != '\0'; p = *e != '\0' ? e + 1 : e) {
		size_t n;

		e = strchr(p, '/');
		if (e == NULL)
			e = p + strlen(p);
		n = (size_t)(e - p);
		if (n == 0 || (n == 1 && p[0] == '.'))
			continue;
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			rc = al_error_set(
			    AL_EPARSE,
			    "%s: chart illegally references parent "
			    "directory ('%.200s')",
			    what, path);
			goto out;
		}
		if (ncomp == 0) {
			if ((*top = al_strndup(p, n)) == NULL) {
				rc = al_error_oom();
				goto out;
			}
		} else if ((b.len > 0 && (rc = al_buf_puts(&b, "/")) < 0) ||
		           (rc = al_buf_append(&b, p, n)) < 0) {
			goto out;
		}
		ncomp++;
	}
	if (ncomp == 0 || (ncomp == 1 && !dir)) {
		rc =
		    al_error_set(AL_EPARSE,
		                 "%s: chart illegally contains content outside "
		                 "the base directory ('%.200s')",
		                 what, path);
		goto out;
	}
	if (ncomp > 1 && (*rel = al_strdup(al_buf_cstr(&b))) == NULL)
		rc = al_error_oom();
out:
	al_buf_free(&b);
	if (rc < 0) {
		free(*top);
		free(*rel);
		*top = *rel = NULL;
	}
	return rc;
}

/* A file of the chart we read: Chart.yaml, values.yaml, templates, and
 * packed subcharts. */
static int wanted(const char *rel)
{
	if (strcmp(rel, "Chart.yaml") == 0 || strcmp(rel, "values.yaml") == 0)
		return 1;
	if (al_str_startswith(rel, "templates/"))
		return al_str_endswith(rel, ".yaml") ||
		       al_str_endswith(rel, ".yml") ||
		       al_str_endswith(rel, ".tpl");
	if (al_str_startswith(rel, "charts/") && strchr(rel + 7, '/') == NULL)
		return al_str_endswith(rel, ".tgz");
	return 0;
}

/* "charts/a/charts/b/values.yaml" -> chart "charts/a/charts/b/", rel
 * "values.yaml"; depth counts the subchart levels. */
static void split_chart(const char *rel, size_t *chart_len, unsigned *depth)
{
	size_t off = 0;

	*depth = 0;
	for (;;) {
		const char *p = rel + off, *sl;

		if (!al_str_startswith(p, "charts/"))
			break;
		sl = strchr(p + 7, '/');
		if (sl == NULL)
			break;
		off = (size_t)(sl - rel) + 1;
		(*depth)++;
	}
	*chart_len = off;
}

static int read_entry(struct archive *a, struct archive_entry *ent, hset *h,
                      const char *shown, al_buf *b)
{
	uint8_t chunk[65536];

	al_buf_reset(b);
	for (;;) {
		la_ssize_t r = archive_read_data(a, chunk, sizeof(chunk));
		int rc;

		if (r == 0)
			break;
		if (r < 0)
			return al_error_set(AL_EPARSE,
			                    "%s: cannot read '%s': %s", h->what,
			                    shown,
			                    archive_error_string(a) != NULL
			                        ? archive_error_string(a)
			                        : "unknown error");
		h->total += (uint64_t)r;
		if (h->total > AL_HELM_CHART_MAX)
			return al_error_set(AL_ELIMIT,
			                    "%s: the chart is larger than %d "
			                    "bytes decompressed",
			                    h->what, AL_HELM_CHART_MAX);
		rc = al_buf_append(b, chunk, (size_t)r);
		if (rc == AL_ELIMIT)
			return al_error_set(AL_ELIMIT,
			                    "%s: '%s' is larger than %d bytes",
			                    h->what, shown, AL_HELM_FILE_MAX);
		if (rc < 0)
			return rc;
	}
	(void)ent;
	return 0;
}

/*
 * Read one archive into h. base: "" for the chart archive itself (its
 * top directory is the chart), "P/charts/" for a packed subchart (its top
 * directory names the subchart). depth: subchart levels above.
 */
static int read_archive(hset *h, hsrc *s, const char *base, unsigned depth)
{
	struct archive *a = NULL;
	struct archive_entry *ent;
	al_buf b = AL_BUF_INIT(AL_HELM_FILE_MAX);
	char *top = NULL, *rel = NULL;
	int rc = 0, nfiles = 0;

	a = archive_read_new();
	if (a == NULL)
		return al_error_oom();
	archive_read_support_filter_gzip(a);
	archive_read_support_format_tar(a);
	if (archive_read_open(a, s, NULL, src_read, NULL) != ARCHIVE_OK) {
		rc = s->rc < 0 ? s->rc
		               : al_error_set(AL_EPARSE,
		                              "%s: not a gzip-compressed tar "
		                              "archive: %s",
		                              h->what,
		                              archive_error_string(a) != NULL
		                                  ? archive_error_string(a)
		                                  : "unknown error");
		goto out;
	}
	for (;;) {
		int r = archive_read_next_header(a, &ent);
		const char *path;
		size_t clen;
		unsigned d;
		int type;

		if (r == ARCHIVE_EOF)
			break;
		if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
			rc = s->rc < 0
			         ? s->rc
			         : al_error_set(
			               AL_EPARSE,
			               "%s: not a readable chart archive: %s",
			               h->what,
			               archive_error_string(a) != NULL
			                   ? archive_error_string(a)
			                   : "unknown error");
			goto out;
		}
		path = archive_entry_pathname(ent);
		if (path == NULL)
			continue;
		type = (int)archive_entry_filetype(ent);
		/* pax_global_header and the like are not chart files */
		if (type != AE_IFREG && type != AE_IFDIR)
			continue;
		free(top);
		free(rel);
		if ((rc = entry_path(path, type == AE_IFDIR, h->what, &top,
		                     &rel)) < 0)
			goto out;
		if (type == AE_IFDIR || rel == NULL)
			continue;
		if (archive_entry_size_is_set(ent) &&
		    archive_entry_size(ent) > AL_HELM_FILE_MAX) {
			rc = al_error_set(AL_ELIMIT,
			                  "%s: '%s' is larger than %d bytes",
			                  h->what, path, AL_HELM_FILE_MAX);
			goto out;
		}
		nfiles++;
		split_chart(rel, &clen, &d);
		if (depth + d > AL_HELM_NEST_MAX || !wanted(rel + clen)) {
			if (archive_entry_size_is_set(ent))
				h->total += (uint64_t)archive_entry_size(ent);
			if (h->total > AL_HELM_CHART_MAX) {
				rc = al_error_set(
				    AL_ELIMIT,
				    "%s: the chart is larger than %d "
				    "bytes decompressed",
				    h->what, AL_HELM_CHART_MAX);
				goto out;
			}
			archive_read_data_skip(a);
			continue;
		}
		if ((rc = read_entry(a, ent, h, path, &b)) < 0)
			goto out;
		if (h->n == h->cap) {
			size_t nc = h->cap ? h->cap * 2 : 16;
			hfile *g = realloc(h->v, nc * sizeof(*g));

			if (g == NULL) {
				rc = al_error_oom();
				goto out;
			}
			h->v = g;
			h->cap = nc;
		}
		memset(&h->v[h->n], 0, sizeof(h->v[h->n]));
		h->v[h->n].chart = depth == 0 ? al_strndup(rel, clen)
		                              : al_sprintf("%s%s/%.*s", base,
		                                           top, (int)clen, rel);
		h->v[h->n].rel = al_strdup(rel + clen);
		h->v[h->n].mtime = (int64_t)archive_entry_mtime(ent);
		h->v[h->n].len = b.len;
		h->v[h->n].data = (uint8_t *)al_buf_detach(&b, NULL);
		h->n++;
		if (h->v[h->n - 1].chart == NULL ||
		    h->v[h->n - 1].rel == NULL || h->v[h->n - 1].data == NULL) {
			rc = al_error_oom();
			goto out;
		}
		al_buf_init(&b, AL_HELM_FILE_MAX);
	}
	if (nfiles == 0)
		rc = al_error_set(AL_EPARSE, "%s: the chart archive is empty",
		                  h->what);
out:
	free(top);
	free(rel);
	al_buf_free(&b);
	archive_read_free(a);
	return rc;
}

/* ---- images ------------------------------------------------------------ */

typedef struct imgs {
	al_helm_image *v;
	size_t n;
} imgs;

static int imgs_add(imgs *l, const char *ref, const char *source, int dedupe)
{
	al_helm_image *g;
	size_t i;

	for (i = 0; dedupe && i < l->n; i++)
		if (strcmp(l->v[i].ref, ref) == 0)
			return 0;
	g = realloc(l->v, (l->n + 1) * sizeof(*g));
	if (g == NULL)
		return al_error_oom();
	l->v = g;
	g[l->n].ref = al_strdup(ref);
	g[l->n].source = al_strdup(source);
	if (g[l->n].ref == NULL || g[l->n].source == NULL) {
		free(g[l->n].ref);
		free(g[l->n].source);
		return al_error_oom();
	}
	l->n++;
	return 0;
}

static void imgs_free(al_helm_image *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].ref);
		free(v[i].source);
	}
	free(v);
}

/* The context of one chart (or subchart) being searched. */
typedef struct cctx {
	al_helm_chart *out;
	imgs found, unresolved;
	const char *chart;       /* prefix, "" or "charts/sub/" */
	const char *app_version; /* of this (sub)chart */
	const char *version;
	const char *name;
	const al_yaml_node *values; /* root of values.yaml, or NULL */
	int *off; /* set by term: a value read under a block whose values
	             say enabled: false */
} cctx;

/* An image reference found in the chart: normalised (no tag and no
 * digest is ":latest", as the kubelet pulls it), or unresolved when it
 * does not parse. */
static int found_ref(cctx *c, const char *text, const char *source)
{
	al_ref r;
	char *s = NULL, *why = NULL;
	int rc = 0;

	while (*text == ' ' || *text == '\t')
		text++;
	if (text[0] == '\0')
		return 0;
	if (strstr(text, "{{") != NULL) {
		why = al_sprintf("%s (a template)", source);
		rc = why != NULL ? imgs_add(&c->unresolved, text, why, 0)
		                 : al_error_oom();
		free(why);
		return rc;
	}
	if (strlen(text) > 1024 || (rc = al_ref_parse(&r, text)) < 0) {
		if (rc == AL_ENOMEM)
			return rc;
		al_error_clear();
		why = al_sprintf("%s (not an image reference)", source);
		rc = why != NULL ? imgs_add(&c->unresolved, text, why, 0)
		                 : al_error_oom();
		free(why);
		return rc;
	}
	if (r.tag == NULL && r.digest == NULL &&
	    (r.tag = al_strdup("latest")) == NULL) {
		al_ref_clear(&r);
		return al_error_oom();
	}
	s = al_ref_string(&r);
	al_ref_clear(&r);
	if (s == NULL)
		return al_error_oom();
	rc = imgs_add(&c->found, s, source, 1);
	free(s);
	return rc;
}

static int unresolved(cctx *c, const char *text, const char *source)
{
	char cut[204];
	size_t n = strlen(text);

	if (n > 200) {
		memcpy(cut, text, 200);
		memcpy(cut + 200, "...", 4);
		text = cut;
	}
	return imgs_add(&c->unresolved, text, source, 0);
}

static int key_is(const al_yaml_node *k, const char *s)
{
	return k->len == strlen(s) && memcmp(k->value, s, k->len) == 0;
}

/* "image" or "...Image" (initImage, sidecarImage). */
static int image_key(const al_yaml_node *k)
{
	return key_is(k, "image") ||
	       (k->len > 5 && memcmp(k->value + k->len - 5, "Image", 5) == 0);
}

/* A string that is not empty ("tag: \"\"" is no tag). */
static const char *nonempty(const al_yaml_node *n)
{
	const char *s = scalar_str(n);

	return s != NULL && s[0] != '\0' ? s : NULL;
}

/*
 * An image in values: a string "repo:tag", or a map with repository and
 * optionally registry, tag, digest (as common charts write it). A map
 * with a repository but neither tag nor digest is listed as unresolved
 * (its template picks the tag, often .Chart.AppVersion: the template
 * lines say which); a map without repository is not an image.
 */
static int values_image(cctx *c, const al_yaml_node *v, const char *where,
                        int must)
{
	const char *repo, *reg, *tag, *dig;
	char *src = NULL, *ref = NULL;
	int rc = 0;

	if (v->type == AL_YAML_SCALAR) {
		const char *s = scalar_str(v);

		if (s == NULL) {
			if (must &&
			    (src = al_sprintf("%s (empty)", where)) != NULL)
				rc = unresolved(c, "", src);
			free(src);
			return rc;
		}
		src = al_sprintf("%s", where);
		rc = src != NULL ? found_ref(c, s, src) : al_error_oom();
		free(src);
		return rc;
	}
	if (v->type != AL_YAML_MAP) {
		if (!must)
			return 0;
		src = al_sprintf("%s (a list, not an image)", where);
		rc = src != NULL ? unresolved(c, "", src) : al_error_oom();
		free(src);
		return rc;
	}
	repo = nonempty(al_yaml_get(v, "repository"));
	reg = nonempty(al_yaml_get(v, "registry"));
	tag = nonempty(al_yaml_get(v, "tag"));
	dig = nonempty(al_yaml_get(v, "digest"));
	/* {registry, image, tag}: the registry says where the image is */
	if (repo == NULL && reg != NULL)
		repo = nonempty(al_yaml_get(v, "image"));
	if (repo == NULL) {
		if (!must && tag == NULL && reg == NULL && dig == NULL)
			return 0;
		src = al_sprintf("%s (a map without repository)", where);
		rc = src != NULL ? unresolved(c, "", src) : al_error_oom();
		free(src);
		return rc;
	}
	if (tag == NULL && dig == NULL) {
		/* the template decides (often .Chart.AppVersion): do not
		 * guess */
		src =
		    al_sprintf("%s (repository without tag or digest)", where);
		rc = src != NULL ? unresolved(c, repo, src) : al_error_oom();
		free(src);
		return rc;
	}
	src = al_sprintf("%s", where);
	ref = al_sprintf("%s%s%s%s%s%s%s", reg != NULL ? reg : "",
	                 reg != NULL ? "/" : "", repo, tag != NULL ? ":" : "",
	                 tag != NULL ? tag : "", dig != NULL ? "@" : "",
	                 dig != NULL ? dig : "");
	if (src == NULL || ref == NULL)
		rc = al_error_oom();
	else
		rc = found_ref(c, ref, src);
	free(src);
	free(ref);
	return rc;
}

static const al_yaml_node *map_get_n(const al_yaml_node *m, const char *k,
                                     size_t len);

/* A plain false (YAML 1.2 core schema), as Helm's values read it. */
static int yaml_false(const al_yaml_node *n)
{
	return n != NULL && n->type == AL_YAML_SCALAR && n->plain &&
	       (strcmp(n->value, "false") == 0 ||
	        strcmp(n->value, "False") == 0 ||
	        strcmp(n->value, "FALSE") == 0);
}

static int yaml_true(const al_yaml_node *n)
{
	return n != NULL && n->type == AL_YAML_SCALAR && n->plain &&
	       (strcmp(n->value, "true") == 0 ||
	        strcmp(n->value, "True") == 0 || strcmp(n->value, "TRUE") == 0);
}

static int walk_values(cctx *c, const al_yaml_node *n, al_buf *path,
                       unsigned depth)
{
	size_t i, keep = path->len;
	int rc;

	if (depth > AL_YAML_MAX_DEPTH)
		return 0;
	if (n->type == AL_YAML_SEQ) {
		for (i = 0; i < n->n; i++) {
			path->len = keep;
			if ((rc = al_buf_printf(path, "[%zu]", i)) < 0 ||
			    (rc = walk_values(c, n->items[i], path,
			                      depth + 1)) < 0)
				return rc;
		}
		path->len = keep;
		if (path->ptr != NULL)
			path->ptr[keep] = '\0';
		return 0;
	}
	if (n->type != AL_YAML_MAP)
		return 0;
	/* a block its own values turn off (metrics: {enabled: false,
	 * image: ...}): its templates render nothing with the chart's
	 * values, so oc-mirror (engine.Render in getHelmTemplates) finds no
	 * image there */
	if (depth > 0 && yaml_false(map_get_n(n, "enabled", 7)))
		return 0;
	for (i = 0; i < n->n; i++) {
		const al_yaml_node *k = n->keys[i], *v = n->items[i];

		path->len = keep;
		if ((rc = al_buf_printf(path, "%s%.*s", keep ? "." : "",
		                        (int)k->len, k->value)) < 0)
			return rc;
		if (image_key(k)) {
			char *where =
			    al_sprintf("%svalues.yaml:%zu %s", c->chart,
			               k->line, al_buf_cstr(path));

			if (where == NULL)
				return al_error_oom();
			rc = values_image(c, v, where, 0);
			free(where);
			if (rc < 0)
				return rc;
			/* what is inside an image map is its parts, not
			 * other images ({image: ingress-nginx/controller}
			 * there has no registry to go with) */
			continue;
		}
		if ((rc = walk_values(c, v, path, depth + 1)) < 0)
			return rc;
	}
	path->len = keep;
	if (path->ptr != NULL)
		path->ptr[keep] = '\0';
	return 0;
}

/* One segment of a path: a key, "[N]" or "[*]". */
typedef struct seg {
	const char *key;
	size_t len;
	int index; /* -1: key; -2: [*]; else the index */
} seg;

#define SEG_MAX 64

static int parse_path(const char *p, seg *segs, size_t *nsegs)
{
	size_t n = strlen(p), i = 0, k = 0;

	if (n >= 2 && p[0] == '{' && p[n - 1] == '}') {
		p++;
		n -= 2;
	}
	if (n > 0 && p[0] == '.') {
		p++;
		n--;
	}
	while (i < n) {
		if (k >= SEG_MAX)
			return -1;
		if (p[i] == '[') {
			size_t j = i + 1;

			while (j < n && p[j] != ']')
				j++;
			if (j >= n)
				return -1;
			if (j == i + 2 && p[i + 1] == '*') {
				segs[k].index = -2;
			} else {
				char buf[16];
				char *end;
				long v;

				if (j - i - 1 == 0 || j - i - 1 >= sizeof(buf))
					return -1;
				memcpy(buf, p + i + 1, j - i - 1);
				buf[j - i - 1] = '\0';
				errno = 0;
				v = strtol(buf, &end, 10);
				if (errno != 0 || *end != '\0' || v < 0 ||
				    v > INT_MAX)
					return -1;
				segs[k].index = (int)v;
			}
			k++;
			i = j + 1;
			if (i < n && p[i] == '.')
				i++;
			continue;
		}
		segs[k].key = p + i;
		segs[k].index = -1;
		while (i < n && p[i] != '.' && p[i] != '[')
			i++;
		segs[k].len = (size_t)(p + i - segs[k].key);
		if (segs[k].len == 0)
			return -1;
		k++;
		if (i < n && p[i] == '.')
			i++;
	}
	*nsegs = k;
	return k > 0 ? 0 : -1;
}

static const al_yaml_node *map_get_n(const al_yaml_node *m, const char *k,
                                     size_t len)
{
	size_t i;

	if (m == NULL || m->type != AL_YAML_MAP)
		return NULL;
	for (i = 0; i < m->n; i++)
		if (m->keys[i]->len == len &&
		    memcmp(m->keys[i]->value, k, len) == 0)
			return m->items[i];
	return NULL;
}

/* Every node the path reaches from n, given to values_image. */
static int eval_segs(cctx *c, const al_yaml_node *n, const seg *s, size_t ns,
                     const char *where, size_t *hits)
{
	size_t i;
	int rc;

	if (n == NULL)
		return 0;
	if (ns == 0) {
		(*hits)++;
		return values_image(c, n, where, 1);
	}
	if (s->index == -1)
		return eval_segs(c, map_get_n(n, s->key, s->len), s + 1, ns - 1,
		                 where, hits);
	if (n->type != AL_YAML_SEQ)
		return 0;
	if (s->index >= 0)
		return (size_t)s->index < n->n
		           ? eval_segs(c, n->items[s->index], s + 1, ns - 1,
		                       where, hits)
		           : 0;
	for (i = 0; i < n->n; i++)
		if ((rc = eval_segs(c, n->items[i], s + 1, ns - 1, where,
		                    hits)) < 0)
			return rc;
	return 0;
}

static int image_path(cctx *c, const char *path)
{
	seg segs[SEG_MAX];
	size_t ns = 0, hits = 0;
	char *where;
	int rc;

	where = al_sprintf("imagePaths %s in values.yaml", path);
	if (where == NULL)
		return al_error_oom();
	if (parse_path(path, segs, &ns) < 0) {
		rc = unresolved(c, path, "imagePaths (not a plain path)");
		free(where);
		return rc;
	}
	rc = eval_segs(c, c->values, segs, ns, where, &hits);
	if (rc == 0 && hits == 0)
		rc = unresolved(c, path,
		                "imagePaths: matches nothing in values.yaml");
	free(where);
	return rc;
}

/* ---- templates: image: lines with simple actions ------------------------ */

typedef struct tok {
	const char *p;
	size_t n;
	int str; /* a "..." literal (p, n without the quotes) */
} tok;

#define TOK_MAX 32

/* The value of one term: 0 with *out set (borrowed or in buf), 1 when it
 * cannot be known without running the template. */
static int term(const cctx *c, const tok *t, const char **out, size_t *len)
{
	static const char vals[] = ".Values.";
	const char *p = t->p;
	size_t n = t->n;

	if (t->str) {
		*out = p;
		*len = n;
		return 0;
	}
	if (n > 1 && p[0] == '$' && p[1] == '.') {
		p++;
		n--;
	}
	if (n == strlen(".Chart.AppVersion") &&
	    memcmp(p, ".Chart.AppVersion", n) == 0) {
		*out = c->app_version != NULL ? c->app_version : "";
		*len = strlen(*out);
		return 0;
	}
	if (n == strlen(".Chart.Version") &&
	    memcmp(p, ".Chart.Version", n) == 0) {
		*out = c->version != NULL ? c->version : "";
		*len = strlen(*out);
		return 0;
	}
	if (n == strlen(".Chart.Name") && memcmp(p, ".Chart.Name", n) == 0) {
		*out = c->name != NULL ? c->name : "";
		*len = strlen(*out);
		return 0;
	}
	if (n > sizeof(vals) - 1 && memcmp(p, vals, sizeof(vals) - 1) == 0) {
		const al_yaml_node *v = c->values;
		const char *k = p + sizeof(vals) - 1, *e = p + n;

		while (k < e) {
			const char *d = memchr(k, '.', (size_t)(e - k));

			if (d == NULL)
				d = e;
			if (d == k)
				return 1;
			if (v != c->values && c->off != NULL &&
			    yaml_false(map_get_n(v, "enabled", 7)))
				*c->off = 1;
			v = map_get_n(v, k, (size_t)(d - k));
			if (v == NULL)
				break;
			k = d < e ? d + 1 : e;
		}
		if (v == NULL) {
			*out = ""; /* missing: empty for default */
			*len = 0;
			return 0;
		}
		if (v->type != AL_YAML_SCALAR)
			return 1;
		*out = scalar_str(v) != NULL ? v->value : "";
		*len = strlen(*out);
		return 0;
	}
	return 1;
}

static int tokenize(const char *p, size_t n, tok *t, size_t *nt)
{
	size_t i = 0, k = 0;

	while (i < n) {
		if (p[i] == ' ' || p[i] == '\t') {
			i++;
			continue;
		}
		if (k >= TOK_MAX)
			return 1;
		if (p[i] == '"') {
			size_t j = i + 1;

			while (j < n && p[j] != '"' && p[j] != '\\')
				j++;
			if (j >= n || p[j] != '"')
				return 1;
			t[k].p = p + i + 1;
			t[k].n = j - i - 1;
			t[k].str = 1;
			k++;
			i = j + 1;
			continue;
		}
		if (p[i] == '|' || p[i] == '(' || p[i] == ')') {
			t[k].p = p + i;
			t[k].n = 1;
			t[k].str = 0;
			k++;
			i++;
			continue;
		}
		if (p[i] == '`' || p[i] == '\'' || p[i] == ':' || p[i] == '=')
			return 1; /* raw strings, characters, variables */
		t[k].p = p + i;
		t[k].str = 0;
		while (i < n && p[i] != ' ' && p[i] != '\t' && p[i] != '|' &&
		       p[i] != '(' && p[i] != ')')
			i++;
		t[k].n = (size_t)(p + i - t[k].p);
		k++;
	}
	*nt = k;
	return 0;
}

static int word(const tok *t, const char *w)
{
	return !t->str && t->n == strlen(w) && memcmp(t->p, w, t->n) == 0;
}

static int pipeline(const cctx *c, const tok *t, size_t nt, al_buf *out,
                    unsigned depth);

/* Append b to out (b may be empty, with no storage): 0 or -1. */
static int cat(al_buf *out, const al_buf *b)
{
	if (b->len == 0)
		return 0;
	return al_buf_append(out, b->ptr, b->len) < 0 ? -1 : 0;
}

/* The matching ')' of the '(' at t[i], or nt. */
static size_t close_paren(const tok *t, size_t nt, size_t i)
{
	int d = 0;

	for (; i < nt; i++) {
		if (word(&t[i], "("))
			d++;
		else if (word(&t[i], ")") && --d == 0)
			return i;
	}
	return nt;
}

/* One argument at t[*i]: a term or a (pipeline). */
static int arg(const cctx *c, const tok *t, size_t nt, size_t *i, al_buf *v,
               unsigned depth)
{
	const char *s;
	size_t len;
	int rc;

	if (word(&t[*i], "(")) {
		size_t j = close_paren(t, nt, *i);

		if (j >= nt)
			return 1;
		rc = pipeline(c, t + *i + 1, j - *i - 1, v, depth + 1);
		*i = j + 1;
		return rc;
	}
	if (word(&t[*i], ")") || word(&t[*i], "|"))
		return 1;
	if ((rc = term(c, &t[*i], &s, &len)) != 0)
		return rc;
	(*i)++;
	return al_buf_append(v, s, len) < 0 ? -1 : 0;
}

#define ARG_MAX 8

/*
 * One command: a term, or default / printf (%s, %v) / quote / squote /
 * toString / trim / print with arguments, piped gives its last one.
 */
static int command(const cctx *c, const tok *t, size_t nt, const al_buf *piped,
                   al_buf *out, unsigned depth)
{
	al_buf args[ARG_MAX];
	size_t na = 0, i = 0, k, a;
	int fn, rc = 0;

	if (nt == 0)
		return 1;
	fn = word(&t[0], "default") || word(&t[0], "printf") ||
	     word(&t[0], "quote") || word(&t[0], "squote") ||
	     word(&t[0], "toString") || word(&t[0], "trim") ||
	     word(&t[0], "print");
	if (!fn) {
		if (piped != NULL)
			return 1;
		rc = arg(c, t, nt, &i, out, depth);
		return rc == 0 && i != nt ? 1 : rc;
	}
	for (k = 0; k < ARG_MAX; k++)
		al_buf_init(&args[k], 64 * 1024);
	for (i = 1; i < nt && rc == 0;) {
		if (na + (piped != NULL) >= ARG_MAX) {
			rc = 1;
			break;
		}
		rc = arg(c, t, nt, &i, &args[na++], depth);
	}
	if (rc == 0 && piped != NULL)
		rc = cat(&args[na++], piped);
	if (rc != 0)
		goto out;
	if (word(&t[0], "default")) {
		if (na != 2) {
			rc = 1;
			goto out;
		}
		rc = cat(out, &args[args[1].len > 0 ? 1 : 0]);
	} else if (word(&t[0], "printf")) {
		const al_buf *f = &args[0];

		for (i = 0, a = 1; na > 0 && i < f->len && rc == 0; i++) {
			if (f->ptr[i] != '%') {
				rc = al_buf_append(out, f->ptr + i, 1) < 0 ? -1
				                                           : 0;
				continue;
			}
			if (i + 1 >= f->len ||
			    (f->ptr[i + 1] != 's' && f->ptr[i + 1] != 'v') ||
			    a >= na) {
				rc = 1;
				break;
			}
			i++;
			rc = cat(out, &args[a++]);
		}
		if (rc == 0 && (na == 0 || a != na))
			rc = 1;
	} else {
		/* quote, squote, toString, trim: the text is the value */
		if (na != 1 && !word(&t[0], "print")) {
			rc = 1;
			goto out;
		}
		for (k = 0; k < na && rc == 0; k++)
			rc = cat(out, &args[k]);
	}
out:
	for (k = 0; k < ARG_MAX; k++)
		al_buf_free(&args[k]);
	return rc;
}

/* Commands separated by '|' at the top level, each piped into the next. */
static int pipeline(const cctx *c, const tok *t, size_t nt, al_buf *out,
                    unsigned depth)
{
	al_buf cur = AL_BUF_INIT(64 * 1024), next = AL_BUF_INIT(64 * 1024);
	size_t i, start = 0;
	int d = 0, first = 1, rc = 0;

	if (depth > 8 || nt == 0)
		return 1;
	for (i = 0; i <= nt && rc == 0; i++) {
		if (i < nt) {
			if (word(&t[i], "("))
				d++;
			else if (word(&t[i], ")"))
				d--;
			if (d != 0 || !word(&t[i], "|"))
				continue;
		}
		al_buf_reset(&next);
		rc = command(c, t + start, i - start, first ? NULL : &cur,
		             &next, depth);
		first = 0;
		start = i + 1;
		al_buf_reset(&cur);
		if (rc == 0)
			rc = cat(&cur, &next);
	}
	if (rc == 0)
		rc = cat(out, &cur);
	al_buf_free(&cur);
	al_buf_free(&next);
	return rc;
}

/* One {{ ... }} action: 0 with the text appended to out, 1 when only
 * running the template would tell, -1 out of memory. */
static int action(const cctx *c, const char *p, size_t n, al_buf *out)
{
	tok t[TOK_MAX];
	size_t nt = 0;

	if (tokenize(p, n, t, &nt) != 0 || nt == 0)
		return 1;
	return pipeline(c, t, nt, out, 0);
}

/* The value of an image: line with its actions done; 1 when it cannot be
 * known without running the template. */
static int expand(const cctx *c, const char *s, size_t n, al_buf *out)
{
	size_t i = 0;
	int rc;

	while (i < n) {
		const char *o = strstr(s + i, "{{");
		const char *e;
		size_t a, b;

		if (o == NULL || (size_t)(o - s) >= n) {
			return al_buf_append(out, s + i, n - i) < 0 ? -1 : 0;
		}
		if (al_buf_append(out, s + i, (size_t)(o - s) - i) < 0)
			return -1;
		e = strstr(o + 2, "}}");
		if (e == NULL || (size_t)(e - s) > n)
			return 1;
		a = (size_t)(o - s) + 2;
		b = (size_t)(e - s);
		if (a < b && s[a] == '-')
			a++;
		if (b > a && s[b - 1] == '-')
			b--;
		if (a < b && s[a] == '/') /* a template comment */
			return 1;
		if ((rc = action(c, s + a, b - a, out)) != 0)
			return rc;
		i = (size_t)(e - s) + 2;
	}
	return 0;
}

static int scan_template(cctx *c, const hfile *f)
{
	const char *p = (const char *)f->data, *end = p + f->len;
	al_buf val = AL_BUF_INIT(8192);
	size_t line = 0;
	int rc = 0, off = 0;

	while (p < end && rc == 0) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl != NULL ? nl : end, *q = p, *v;
		size_t vn;
		char *src;
		int x;

		line++;
		while (q < e && (*q == ' ' || *q == '\t'))
			q++;
		if (q + 1 < e && q[0] == '-' && q[1] == ' ') {
			q += 2;
			while (q < e && *q == ' ')
				q++;
		}
		p = nl != NULL ? nl + 1 : end;
		if ((size_t)(e - q) < 6 || memcmp(q, "image:", 6) != 0 ||
		    (q + 6 < e && q[6] != ' ' && q[6] != '\t' && q[6] != '\r'))
			continue;
		v = q + 6;
		while (v < e && (*v == ' ' || *v == '\t'))
			v++;
		vn = (size_t)(e - v);
		while (vn > 0 && (v[vn - 1] == ' ' || v[vn - 1] == '\r' ||
		                  v[vn - 1] == '\t'))
			vn--;
		if (vn == 0)
			continue;
		if (vn >= 2 && (v[0] == '"' || v[0] == '\'') &&
		    v[vn - 1] == v[0]) {
			v++;
			vn -= 2;
		} else {
			/* a trailing comment outside any action */
			const char *h = NULL;
			size_t k;
			int depth = 0;

			for (k = 0; k + 1 < vn; k++) {
				if (v[k] == '{' && v[k + 1] == '{')
					depth++;
				else if (v[k] == '}' && v[k + 1] == '}')
					depth--;
				else if (depth == 0 && v[k] == ' ' &&
				         v[k + 1] == '#') {
					h = v + k;
					break;
				}
			}
			if (h != NULL)
				vn = (size_t)(h - v);
		}
		src = al_sprintf("%s%s:%zu", c->chart, f->rel, line);
		if (src == NULL) {
			rc = al_error_oom();
			break;
		}
		al_buf_reset(&val);
		off = 0;
		c->off = &off;
		x = expand(c, v, vn, &val);
		c->off = NULL;
		if (x < 0) {
			rc = al_error_oom();
		} else if (off) {
			/* the image comes from a block its values turn off
			 * (redis: {enabled: false, repository: ...}): the
			 * template renders nothing there (oc-mirror:
			 * engine.Render with the chart's values) */
			rc = 0;
		} else if (x == 0 && val.len > 0) {
			char *txt = al_strndup((const char *)val.ptr, val.len);

			if (txt == NULL)
				rc = al_error_oom();
			else if (txt[0] == '"' || txt[0] == '\'')
				rc = unresolved(c, txt, src);
			else
				rc = found_ref(c, txt, src);
			free(txt);
		} else {
			char *txt = al_strndup(v, vn);

			rc = txt != NULL ? unresolved(c, txt, src)
			                 : al_error_oom();
			free(txt);
		}
		free(src);
	}
	al_buf_free(&val);
	return rc;
}

/* artifacthub.io/images: a YAML list of {name, image, whitelisted}. */
static int artifacthub(cctx *c, const char *text)
{
	al_yaml_node **docs = NULL;
	size_t ndocs = 0, i;
	char *src = al_sprintf("%sChart.yaml artifacthub.io/images", c->chart);
	int rc = 0;

	if (src == NULL)
		return al_error_oom();
	if ((rc = al_yaml_load(&docs, &ndocs, (const uint8_t *)text,
	                       strlen(text), "artifacthub.io/images")) ==
	    AL_ENOMEM)
		goto out;
	if (rc < 0 || ndocs != 1 || docs[0] == NULL ||
	    docs[0]->type != AL_YAML_SEQ) {
		al_error_clear();
		rc = unresolved(c, "",
		                "Chart.yaml artifacthub.io/images (not "
		                "a YAML list)");
		goto out;
	}
	for (i = 0; i < docs[0]->n && rc == 0; i++) {
		const char *img =
		    scalar_str(al_yaml_get(docs[0]->items[i], "image"));

		if (img != NULL)
			rc = found_ref(c, img, src);
	}
out:
	free(src);
	al_yaml_docs_free(docs, ndocs);
	return rc;
}

/* ---- Chart.yaml -> Helm's OCI config ------------------------------------ */

static int set_str(json_t *o, const char *key, const al_yaml_node *n)
{
	const char *s = scalar_str(n);

	if (s == NULL || s[0] == '\0')
		return 0; /* omitempty */
	return json_object_set_new(o, key, json_string(s)) == 0
	           ? 0
	           : al_error_oom();
}

static int set_strs(json_t *o, const char *key, const al_yaml_node *n)
{
	json_t *a;
	size_t i;

	if (n == NULL || n->type != AL_YAML_SEQ || n->n == 0)
		return 0;
	if ((a = json_array()) == NULL)
		return al_error_oom();
	for (i = 0; i < n->n; i++) {
		const char *s = scalar(n->items[i]);

		if (json_array_append_new(a, json_string(s != NULL ? s : "")) <
		    0) {
			json_decref(a);
			return al_error_oom();
		}
	}
	return json_object_set_new(o, key, a) == 0 ? 0 : al_error_oom();
}

static int is_true(const al_yaml_node *n)
{
	return n != NULL && n->type == AL_YAML_SCALAR && n->plain &&
	       (strcmp(n->value, "true") == 0 ||
	        strcmp(n->value, "True") == 0 || strcmp(n->value, "TRUE") == 0);
}

static int key_cmp(const void *a, const void *b)
{
	const al_yaml_node *const *x = a, *const *y = b;

	return strcmp((*x)->value, (*y)->value);
}

/* The sequence n as key in o, one object per item filled by fill, when
 * there are any items (chart.Metadata's maintainers and dependencies). */
static int config_objects(json_t *o, const char *key, const al_yaml_node *n,
                          int (*fill)(json_t *, const al_yaml_node *))
{
	json_t *a;
	size_t i;
	int rc;

	if (n == NULL || n->type != AL_YAML_SEQ || n->n == 0)
		return 0;
	if ((a = json_array()) == NULL)
		return al_error_oom();
	for (i = 0; i < n->n; i++) {
		json_t *m = json_object();

		if (m == NULL || json_array_append_new(a, m) < 0) {
			json_decref(a);
			return al_error_oom();
		}
		if ((rc = fill(m, n->items[i])) < 0) {
			json_decref(a);
			return rc;
		}
	}
	if (json_object_set_new(o, key, a) < 0)
		return al_error_oom();
	return 0;
}

/* One chart.Maintainer (name, email, url) into m. */
static int config_maintainer(json_t *m, const al_yaml_node *x)
{
	int rc;

	if ((rc = set_str(m, "name", al_yaml_get(x, "name"))) < 0 ||
	    (rc = set_str(m, "email", al_yaml_get(x, "email"))) < 0)
		return rc;
	return set_str(m, "url", al_yaml_get(x, "url"));
}

/* chart.Metadata's annotations into o, keys sorted, when there are any. */
static int config_annotations(json_t *o, const al_yaml_node *n)
{
	const al_yaml_node **keys;
	json_t *m;
	size_t i;

	if (n == NULL || n->type != AL_YAML_MAP || n->n == 0)
		return 0;
	keys = calloc(n->n, sizeof(*keys));
	m = json_object();
	if (keys == NULL || m == NULL) {
		free(keys);
		json_decref(m);
		return al_error_oom();
	}
	for (i = 0; i < n->n; i++)
		keys[i] = n->keys[i];
	qsort(keys, n->n, sizeof(*keys), key_cmp);
	for (i = 0; i < n->n; i++) {
		const char *v = scalar(al_yaml_get(n, keys[i]->value));

		json_object_set_new(m, keys[i]->value,
		                    json_string(v != NULL ? v : ""));
	}
	free(keys);
	if (json_object_set_new(o, "annotations", m) < 0)
		return al_error_oom();
	return 0;
}

/* One chart.Dependency d into m, in the struct's order. */
static int config_dependency(json_t *m, const al_yaml_node *d)
{
	const char *repo = scalar(al_yaml_get(d, "repository"));
	const al_yaml_node *iv = al_yaml_get(d, "import-values");
	int rc;

	if ((rc = set_str(m, "name", al_yaml_get(d, "name"))) < 0 ||
	    (rc = set_str(m, "version", al_yaml_get(d, "version"))) < 0)
		return rc;
	/* repository has no omitempty */
	if (json_object_set_new(m, "repository",
	                        json_string(repo != NULL ? repo : "")) < 0)
		return al_error_oom();
	if ((rc = set_str(m, "condition", al_yaml_get(d, "condition"))) < 0 ||
	    (rc = set_strs(m, "tags", al_yaml_get(d, "tags"))) < 0)
		return rc;
	if (is_true(al_yaml_get(d, "enabled")) &&
	    json_object_set_new(m, "enabled", json_true()) < 0)
		return al_error_oom();
	if (iv != NULL && iv->type == AL_YAML_SEQ && iv->n > 0) {
		json_t *j = NULL;

		if (al_yaml_to_json(&j, iv) < 0)
			al_error_clear();
		else if (json_object_set_new(m, "import-values", j) < 0)
			return al_error_oom();
	}
	return set_str(m, "alias", al_yaml_get(d, "alias"));
}

/* dump into b as encoding/json writes it: <, > and & (and U+2028, U+2029)
 * escaped in strings; outside strings JSON has none of them. */
static int go_json_escape(al_buf *b, const char *dump)
{
	const char *p;
	int rc = 0;

	for (p = dump; *p != '\0' && rc == 0; p++) {
		if (*p == '<')
			rc = al_buf_puts(b, "\\u003c");
		else if (*p == '>')
			rc = al_buf_puts(b, "\\u003e");
		else if (*p == '&')
			rc = al_buf_puts(b, "\\u0026");
		else if ((unsigned char)p[0] == 0xe2 &&
		         (unsigned char)p[1] == 0x80 &&
		         ((unsigned char)p[2] == 0xa8 ||
		          (unsigned char)p[2] == 0xa9)) {
			rc = al_buf_puts(b, (unsigned char)p[2] == 0xa8
			                        ? "\\u2028"
			                        : "\\u2029");
			p += 2;
		} else
			rc = al_buf_append(b, p, 1);
	}
	return rc;
}

/* json.Marshal(chart.Metadata): fields in the struct's order, empty ones
 * left out, map keys sorted. */
static int helm_config(const al_yaml_node *ch, char **out)
{
	json_t *o = json_object();
	const al_yaml_node *n;
	al_buf b = AL_BUF_INIT(AL_HELM_FILE_MAX * 2);
	char *dump = NULL;
	int rc = 0;

	if (o == NULL)
		return al_error_oom();
	if ((rc = set_str(o, "name", al_yaml_get(ch, "name"))) < 0 ||
	    (rc = set_str(o, "home", al_yaml_get(ch, "home"))) < 0 ||
	    (rc = set_strs(o, "sources", al_yaml_get(ch, "sources"))) < 0 ||
	    (rc = set_str(o, "version", al_yaml_get(ch, "version"))) < 0 ||
	    (rc = set_str(o, "description", al_yaml_get(ch, "description"))) <
	        0 ||
	    (rc = set_strs(o, "keywords", al_yaml_get(ch, "keywords"))) < 0 ||
	    (rc = config_objects(o, "maintainers",
	                         al_yaml_get(ch, "maintainers"),
	                         config_maintainer)) < 0 ||
	    (rc = set_str(o, "icon", al_yaml_get(ch, "icon"))) < 0)
		goto out;
	n = al_yaml_get(ch, "apiVersion");
	if (scalar_str(n) != NULL)
		rc = set_str(o, "apiVersion", n);
	else if (json_object_set_new(o, "apiVersion", json_string("v1")) < 0)
		goto nomem;
	if (rc < 0 ||
	    (rc = set_str(o, "condition", al_yaml_get(ch, "condition"))) < 0 ||
	    (rc = set_str(o, "tags", al_yaml_get(ch, "tags"))) < 0 ||
	    (rc = set_str(o, "appVersion", al_yaml_get(ch, "appVersion"))) < 0)
		goto out;
	if (is_true(al_yaml_get(ch, "deprecated")) &&
	    json_object_set_new(o, "deprecated", json_true()) < 0)
		goto nomem;
	if ((rc = config_annotations(o, al_yaml_get(ch, "annotations"))) < 0 ||
	    (rc = set_str(o, "kubeVersion", al_yaml_get(ch, "kubeVersion"))) <
	        0 ||
	    (rc = config_objects(o, "dependencies",
	                         al_yaml_get(ch, "dependencies"),
	                         config_dependency)) < 0 ||
	    (rc = set_str(o, "type", al_yaml_get(ch, "type"))) < 0)
		goto out;
	dump = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (dump == NULL)
		goto nomem;
	if ((rc = go_json_escape(&b, dump)) < 0)
		goto out;
	if ((*out = al_strdup(al_buf_cstr(&b))) == NULL)
		goto nomem;
	goto out;
nomem:
	rc = al_error_oom();
out:
	free(dump);
	json_decref(o);
	al_buf_free(&b);
	return rc;
}

/* ---- one chart: Chart.yaml, values, templates -----------------------------
 */

static const hfile *find_file(const hset *h, const char *chart, const char *rel)
{
	size_t i;

	for (i = 0; i < h->n; i++)
		if (strcmp(h->v[i].chart, chart) == 0 &&
		    strcmp(h->v[i].rel, rel) == 0)
			return &h->v[i];
	return NULL;
}

static int load_yaml(const hfile *f, const char *what, al_yaml_node ***docs,
                     size_t *ndocs)
{
	char *name = al_sprintf("%s: %s%s", what, f->chart, f->rel);
	int rc;

	if (name == NULL)
		return al_error_oom();
	/* charts are written for go-yaml, which lets a later key win */
	rc = al_yaml_load_lenient(docs, ndocs, f->data, f->len, name);
	free(name);
	return rc;
}

/*
 * A template that declares a Helm hook (the annotation helm.sh/hook: test,
 * pre-install, ...): releaseutil.SortManifests, which oc-mirror's
 * getHelmTemplates calls, sets hooks apart from the manifests it searches
 * for images, so a test pod's image is not mirrored.
 */
static int is_hook(const hfile *f)
{
	static const char key[] = "helm.sh/hook";
	const size_t kn = sizeof(key) - 1;
	size_t i;

	for (i = 0; f->data != NULL && i + kn < f->len; i++) {
		const uint8_t *q = f->data + i + kn;
		if (memcmp(f->data + i, key, kn) != 0)
			continue;
		if (*q == '"' || *q == '\'')
			q++;
		if (q < f->data + f->len && *q == ':')
			return 1;
	}
	return 0;
}

/* The value at a dotted path of values ("metrics.enabled"), or NULL. */
static const al_yaml_node *values_at(const al_yaml_node *v, const char *p,
                                     size_t n)
{
	const char *k = p, *e = p + n;

	while (v != NULL && k < e) {
		const char *d = memchr(k, '.', (size_t)(e - k));
		if (d == NULL)
			d = e;
		v = map_get_n(v, k, (size_t)(d - k));
		k = d < e ? d + 1 : e;
	}
	return v;
}

/*
 * 1 when the top chart's values turn subchart NAME off, as
 * chartutil.ProcessDependencies (processDependencyEnabled, which
 * oc-mirror's getHelmTemplates calls) decides: the first path of the
 * dependency's condition that holds a boolean decides; else its tags,
 * on when one of them is true in values "tags", off when none is and one
 * is false.
 */
static int subchart_disabled(const al_yaml_node *chart,
                             const al_yaml_node *values, const char *name,
                             size_t nlen)
{
	const al_yaml_node *deps = al_yaml_get(chart, "dependencies");
	size_t i, j;

	if (deps == NULL || deps->type != AL_YAML_SEQ || values == NULL)
		return 0;
	for (i = 0; i < deps->n; i++) {
		const al_yaml_node *d = deps->items[i], *cond, *tags, *tv;
		const char *dn, *alias;
		int on = 0, off = 0;

		if (d->type != AL_YAML_MAP)
			continue;
		dn = scalar_str(al_yaml_get(d, "name"));
		alias = scalar_str(al_yaml_get(d, "alias"));
		if (dn == NULL || strlen(dn) != nlen ||
		    memcmp(dn, name, nlen) != 0 || alias != NULL)
			continue;
		if ((cond = al_yaml_get(d, "condition")) != NULL &&
		    scalar_str(cond) != NULL) {
			const char *p = cond->value;
			while (*p != '\0') {
				size_t pn = strcspn(p, ",");
				const char *q = p;
				size_t qn = pn;
				const al_yaml_node *v;
				while (qn > 0 && *q == ' ')
					q++, qn--;
				while (qn > 0 && q[qn - 1] == ' ')
					qn--;
				v = values_at(values, q, qn);
				if (yaml_true(v))
					return 0;
				if (yaml_false(v))
					return 1;
				p += pn;
				if (*p == ',')
					p++;
			}
		}
		tags = al_yaml_get(d, "tags");
		tv = al_yaml_get(values, "tags");
		for (j = 0;
		     tags != NULL && tags->type == AL_YAML_SEQ && j < tags->n;
		     j++) {
			const char *t = scalar_str(tags->items[j]);
			const al_yaml_node *v =
			    t != NULL ? map_get_n(tv, t, strlen(t)) : NULL;
			on |= yaml_true(v);
			off |= yaml_false(v);
		}
		return !on && off;
	}
	return 0;
}

static int search_chart(al_helm_chart *out, cctx *c, const hset *h,
                        const char *const *paths, size_t npaths,
                        const char *what)
{
	const hfile *cf = find_file(h, c->chart, "Chart.yaml");
	const hfile *vf = find_file(h, c->chart, "values.yaml");
	al_yaml_node **cd = NULL, **vd = NULL;
	size_t ncd = 0, nvd = 0, i;
	al_buf path = AL_BUF_INIT(4096);
	const al_yaml_node *ch, *ann;
	int top = c->chart[0] == '\0', rc;

	if (cf == NULL) {
		if (top)
			return al_error_set(AL_EPARSE,
			                    "%s: the archive has no Chart.yaml",
			                    what);
		return 0; /* not a chart: a directory under charts/ */
	}
	if ((rc = load_yaml(cf, what, &cd, &ncd)) < 0)
		goto out;
	if (ncd != 1 || cd[0]->type != AL_YAML_MAP) {
		rc =
		    al_error_set(AL_EPARSE, "%s: %sChart.yaml is not a mapping",
		                 what, c->chart);
		goto out;
	}
	ch = cd[0];
	c->name = scalar_str(al_yaml_get(ch, "name"));
	c->version = scalar_str(al_yaml_get(ch, "version"));
	c->app_version = scalar_str(al_yaml_get(ch, "appVersion"));
	if (top) {
		const char *type = scalar_str(al_yaml_get(ch, "type"));

		if (c->name == NULL || c->version == NULL) {
			rc = al_error_set(
			    AL_EPARSE, "%s: Chart.yaml needs name and version",
			    what);
			goto out;
		}
		/* Metadata.Validate: the name is one path component, the
		 * version semver; both become a store name and a tag */
		if ((rc = al_name_check("chart name", c->name,
		                        AL_NAME_COMPONENT, 0)) < 0 ||
		    (rc = al_name_check("chart version", c->version,
		                        AL_NAME_FIELD, 0)) < 0)
			goto out;
		if (!al_helm_version_valid(c->version)) {
			rc = al_error_set(
			    AL_EPARSE, "%s: chart version is not semver", what);
			goto out;
		}
		if (c->app_version != NULL &&
		    (rc = al_name_check("chart appVersion", c->app_version,
		                        AL_NAME_TEXT, 0)) < 0)
			goto out;
		if ((out->name = al_strdup(c->name)) == NULL ||
		    (out->version = al_strdup(c->version)) == NULL ||
		    (c->app_version != NULL &&
		     (out->app_version = al_strdup(c->app_version)) == NULL)) {
			rc = al_error_oom();
			goto out;
		}
		out->library = type != NULL && strcmp(type, "library") == 0;
		out->created = cf->mtime;
		if ((rc = helm_config(ch, &out->config)) < 0)
			goto out;
	}
	if (vf != NULL) {
		/* a values.yaml Helm could not read either is noted; one
		 * this process could not hold fails the read (its images
		 * would be missing from a successful result) */
		if ((rc = load_yaml(vf, what, &vd, &nvd)) == AL_ENOMEM)
			goto out;
		if (rc < 0) {
			char *src = al_sprintf("%svalues.yaml (%s)", c->chart,
			                       al_error_message());

			al_error_clear();
			rc = src != NULL ? unresolved(c, "", src)
			                 : al_error_oom();
			free(src);
			if (rc < 0)
				goto out;
		} else if (nvd == 1 && vd[0]->type == AL_YAML_MAP) {
			c->values = vd[0];
		}
	}
	/* 1. imagePaths, 2. artifacthub.io/images, 3. values, 4. templates */
	for (i = 0; top && i < npaths; i++)
		if ((rc = image_path(c, paths[i])) < 0)
			goto out;
	ann = al_yaml_get(ch, "annotations");
	if (ann != NULL &&
	    scalar_str(al_yaml_get(ann, "artifacthub.io/images")) != NULL &&
	    (rc = artifacthub(
	         c, al_yaml_get(ann, "artifacthub.io/images")->value)) < 0)
		goto out;
	if (c->values != NULL && (rc = walk_values(c, c->values, &path, 0)) < 0)
		goto out;
	for (i = 0; i < h->n; i++)
		if (strcmp(h->v[i].chart, c->chart) == 0 &&
		    al_str_startswith(h->v[i].rel, "templates/") &&
		    !is_hook(&h->v[i]) && (rc = scan_template(c, &h->v[i])) < 0)
			goto out;
	rc = 0;
out:
	c->values = NULL;
	al_buf_free(&path);
	al_yaml_docs_free(cd, ncd);
	al_yaml_docs_free(vd, nvd);
	return rc;
}

static int chart_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The top chart's Chart.yaml and values.yaml (either may be missing or
 * not YAML: then nothing is turned off). */
static int top_parts(const hset *h, const char *what, al_yaml_node ***cd,
                     size_t *ncd, al_yaml_node ***vd, size_t *nvd)
{
	const hfile *cf = find_file(h, "", "Chart.yaml");
	const hfile *vf = find_file(h, "", "values.yaml");
	int rc;

	if (cf != NULL && (rc = load_yaml(cf, what, cd, ncd)) < 0) {
		if (rc == AL_ENOMEM)
			return rc;
		al_error_clear();
	}
	if (vf != NULL && (rc = load_yaml(vf, what, vd, nvd)) < 0) {
		if (rc == AL_ENOMEM)
			return rc;
		al_error_clear();
	}
	return 0;
}

/* 1 when chart ("charts/NAME/", or deeper under it) lies under a
 * subchart the top chart's values turn off. */
static int is_off(const al_yaml_node *chart, const al_yaml_node *values,
                  const char *prefix)
{
	const char *name = prefix + strlen("charts/");
	const char *slash;

	if (chart->type != AL_YAML_MAP || values == NULL ||
	    values->type != AL_YAML_MAP ||
	    !al_str_startswith(prefix, "charts/") ||
	    (slash = strchr(name, '/')) == NULL)
		return 0;
	return subchart_disabled(chart, values, name, (size_t)(slash - name));
}

static int read_chart(al_helm_chart *out, hsrc *s, const char *const *paths,
                      size_t npaths, const char *what)
{
	hset h;
	cctx c;
	const char **charts = NULL;
	al_yaml_node **tops = NULL, **topv = NULL;
	size_t nch = 0, i, j, ntops = 0, ntopv = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&h, 0, sizeof(h));
	memset(&c, 0, sizeof(c));
	h.what = what;
	c.out = out;
	if ((rc = read_archive(&h, s, "", 0)) < 0)
		goto out;
	/* packed subcharts: charts/x.tgz, read in turn (the list grows) */
	for (i = 0; i < h.n; i++) {
		hfile *f = &h.v[i];
		hsrc *sub;
		char *base;
		unsigned d = 0;
		const char *p;

		if (!al_str_startswith(f->rel, "charts/") ||
		    !al_str_endswith(f->rel, ".tgz"))
			continue;
		for (p = f->chart; (p = strstr(p, "charts/")) != NULL; p += 7)
			d++;
		if (d + 1 > AL_HELM_NEST_MAX) {
			char *src_ = al_sprintf("%s%s (nested too deep)",
			                        f->chart, f->rel);

			rc = src_ != NULL ? imgs_add(&c.unresolved, "", src_, 0)
			                  : al_error_oom();
			free(src_);
			if (rc < 0)
				goto out;
			continue;
		}
		sub = calloc(1, sizeof(*sub));
		base = al_sprintf("%scharts/", f->chart);
		if (sub == NULL || base == NULL) {
			free(sub);
			free(base);
			rc = al_error_oom();
			goto out;
		}
		sub->fd = -1;
		sub->mem = f->data;
		sub->memlen = f->len;
		rc = read_archive(&h, sub, base, d + 1);
		f = &h.v[i]; /* h.v may have moved */
		free(sub);
		free(base);
		if (rc < 0)
			goto out;
		free(f->data);
		f->data = NULL;
		f->len = 0;
	}
	charts = calloc(h.n + 1, sizeof(*charts));
	if (charts == NULL) {
		rc = al_error_oom();
		goto out;
	}
	for (i = 0; i < h.n; i++) {
		for (j = 0; j < nch; j++)
			if (strcmp(charts[j], h.v[i].chart) == 0)
				break;
		if (j == nch)
			charts[nch++] = h.v[i].chart;
	}
	qsort(charts, nch, sizeof(*charts), chart_cmp);
	if (nch == 0 || charts[0][0] != '\0') {
		rc = al_error_set(AL_EPARSE,
		                  "%s: the archive has no Chart.yaml", what);
		goto out;
	}
	if ((rc = top_parts(&h, what, &tops, &ntops, &topv, &ntopv)) < 0)
		goto out;
	for (i = 0; i < nch; i++) {
		c.chart = charts[i];
		c.name = c.version = c.app_version = NULL;
		if (charts[i][0] != '\0' && ntops == 1 &&
		    is_off(tops[0], ntopv == 1 ? topv[0] : NULL, charts[i]))
			continue;
		if ((rc = search_chart(out, &c, &h, paths, npaths, what)) < 0)
			goto out;
	}
	out->images = c.found.v;
	out->nimages = c.found.n;
	out->unresolved = c.unresolved.v;
	out->nunresolved = c.unresolved.n;
	memset(&c.found, 0, sizeof(c.found));
	memset(&c.unresolved, 0, sizeof(c.unresolved));
out:
	al_yaml_docs_free(tops, ntops);
	al_yaml_docs_free(topv, ntopv);
	free(charts);
	imgs_free(c.found.v, c.found.n);
	imgs_free(c.unresolved.v, c.unresolved.n);
	hset_free(&h);
	if (rc < 0)
		al_helm_chart_clear(out);
	return rc;
}

int al_helm_chart_read(al_helm_chart *out, int fd,
                       const char *const *image_paths, size_t nimage_paths,
                       const char *what)
{
	hsrc *s = calloc(1, sizeof(*s));
	int rc;

	if (s == NULL)
		return al_error_oom();
	s->fd = fd;
	rc = read_chart(out, s, image_paths, nimage_paths, what);
	free(s);
	return rc;
}

int al_helm_chart_read_mem(al_helm_chart *out, const uint8_t *p, size_t n,
                           const char *const *image_paths, size_t nimage_paths,
                           const char *what)
{
	hsrc *s;
	int rc;

	if (n > AL_HELM_ARCHIVE_MAX)
		return al_error_set(AL_ELIMIT, "%s is larger than %d bytes",
		                    what, AL_HELM_ARCHIVE_MAX);
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return al_error_oom();
	s->fd = -1;
	s->mem = p;
	s->memlen = n;
	rc = read_chart(out, s, image_paths, nimage_paths, what);
	free(s);
	return rc;
}

void al_helm_chart_clear(al_helm_chart *c)
{
	if (c == NULL)
		return;
	free(c->name);
	free(c->version);
	free(c->app_version);
	free(c->config);
	imgs_free(c->images, c->nimages);
	imgs_free(c->unresolved, c->nunresolved);
	memset(c, 0, sizeof(*c));
}

/* ---- the OCI manifest of `helm push` ------------------------------------ */

static int ann_set(json_t *o, const char *k, const char *v)
{
	const char *p = v;

	if (v == NULL)
		return 0;
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	if (*p == '\0')
		return 0; /* addToMap: blank values are left out */
	return json_object_set_new(o, k, json_string(v)) == 0 ? 0
	                                                      : al_error_oom();
}

static int add_desc(json_t *o, const char *key, const char *mt,
                    const al_digest *d, uint64_t size)
{
	char ds[AL_DIGEST_STRMAX];
	json_t *j = json_pack("{s:s,s:s,s:I}", "mediaType", mt, "digest",
	                      al_digest_str(d, ds), "size", (json_int_t)size);

	if (j == NULL)
		return al_error_oom();
	if (key != NULL)
		return json_object_set_new(o, key, j) == 0 ? 0 : al_error_oom();
	return json_array_append_new(o, j) == 0 ? 0 : al_error_oom();
}

int al_helm_manifest(al_buf *out, const al_helm_chart *chart,
                     const al_digest *config, uint64_t config_size,
                     const al_digest *archive, uint64_t archive_size)
{
	json_t *meta = NULL, *m = NULL, *layers = NULL, *ann = NULL, *sorted;
	json_t *mt;
	al_buf authors = AL_BUF_INIT(64 * 1024);
	char created[32];
	const char *k;
	json_t *v;
	void *it;
	char *dump = NULL;
	size_t i;
	int rc = 0;

	if (chart->config == NULL ||
	    al_json_parse(&meta, (const uint8_t *)chart->config,
	                  strlen(chart->config), "chart config") < 0)
		return al_error_set(AL_EINVAL, "chart has no config");
	m = json_object();
	layers = json_array();
	ann = json_object();
	if (m == NULL || layers == NULL || ann == NULL)
		goto nomem;
	al_clock_rfc3339(created, (uint64_t)chart->created * 1000);
	/* generateChartOCIAnnotations */
	if ((rc = ann_set(ann, "org.opencontainers.image.description",
	                  al_json_str(meta, "description"))) < 0 ||
	    (rc = ann_set(ann, "org.opencontainers.image.title",
	                  al_json_str(meta, "name"))) < 0 ||
	    (rc = ann_set(ann, "org.opencontainers.image.version",
	                  al_json_str(meta, "version"))) < 0 ||
	    (rc = ann_set(ann, "org.opencontainers.image.url",
	                  al_json_str(meta, "home"))) < 0 ||
	    (rc = ann_set(ann, "org.opencontainers.image.created", created)) <
	        0)
		goto out;
	v = json_object_get(meta, "sources");
	if (json_array_size(v) > 0 &&
	    (rc = ann_set(ann, "org.opencontainers.image.source",
	                  json_string_value(json_array_get(v, 0)))) < 0)
		goto out;
	mt = json_object_get(meta, "maintainers");
	for (i = 0; i < json_array_size(mt); i++) {
		json_t *x = json_array_get(mt, i);
		const char *nm = al_json_str(x, "name");
		const char *em = al_json_str(x, "email");

		if (nm != NULL)
			al_buf_puts(&authors, nm);
		if (em != NULL)
			al_buf_printf(&authors, " (%s)", em);
		if (i + 1 < json_array_size(mt))
			al_buf_puts(&authors, ", ");
	}
	if (authors.len > 0 &&
	    (rc = ann_set(ann, "org.opencontainers.image.authors",
	                  al_buf_cstr(&authors))) < 0)
		goto out;
	/* the chart's annotations, but not over version and title */
	json_object_foreach(json_object_get(meta, "annotations"), k, v)
	{
		if (strcmp(k, "org.opencontainers.image.version") == 0 ||
		    strcmp(k, "org.opencontainers.image.title") == 0)
			continue;
		if (json_object_set(ann, k, v) < 0)
			goto nomem;
	}
	/* encoding/json writes map keys sorted */
	if ((sorted = json_object()) == NULL)
		goto nomem;
	{
		const char **keys =
		    calloc(json_object_size(ann) + 1, sizeof(*keys));
		size_t nk = 0;

		if (keys == NULL) {
			json_decref(sorted);
			goto nomem;
		}
		for (it = json_object_iter(ann); it != NULL;
		     it = json_object_iter_next(ann, it))
			keys[nk++] = json_object_iter_key(it);
		qsort(keys, nk, sizeof(*keys), chart_cmp);
		for (i = 0; i < nk; i++)
			json_object_set(sorted, keys[i],
			                json_object_get(ann, keys[i]));
		free(keys);
	}
	if (json_object_set_new(m, "schemaVersion", json_integer(2)) < 0 ||
	    (rc = add_desc(m, "config", AL_HELM_CONFIG_MT, config,
	                   config_size)) < 0 ||
	    (rc = add_desc(layers, NULL, AL_HELM_CHART_MT, archive,
	                   archive_size)) < 0 ||
	    json_object_set(m, "layers", layers) < 0 ||
	    json_object_set_new(m, "annotations", sorted) < 0)
		goto nomem;
	dump = json_dumps(m, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (dump == NULL)
		goto nomem;
	rc = al_buf_puts(out, dump);
	goto out;
nomem:
	rc = al_error_oom();
out:
	free(dump);
	al_buf_free(&authors);
	json_decref(meta);
	json_decref(m);
	json_decref(layers);
	json_decref(ann);
	return rc;
}
