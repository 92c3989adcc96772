/* catalog.c: the file-based catalog model: parsing JSON/YAML FBC files,
 * indexing and validation, rendering, the image list. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "airlock/catalog.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/ref.h"
#include "json_int.h"
#include "yaml_int.h"
#include "catalog_int.h"
#include "name_int.h"

#define S_PACKAGE "olm.package"
#define S_CHANNEL "olm.channel"
#define S_BUNDLE "olm.bundle"
#define S_DEPRECATIONS "olm.deprecations"

int al_catalog_new(al_catalog **out)
{
	al_catalog *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return al_error_oom();
	c->raw_packages = json_array();
	c->raw_channels = json_array();
	c->raw_bundles = json_array();
	c->raw_deprecations = json_array();
	c->raw_others = json_array();
	c->global = json_array();
	if (c->raw_packages == NULL || c->raw_channels == NULL ||
	    c->raw_bundles == NULL || c->raw_deprecations == NULL ||
	    c->raw_others == NULL || c->global == NULL) {
		al_catalog_free(c);
		return al_error_oom();
	}
	*out = c;
	return 0;
}

static void package_clear(struct cat_package *p)
{
	size_t i, j;

	for (i = 0; i < p->nchannels; i++) {
		struct cat_channel *ch = &p->channels[i];

		for (j = 0; j < ch->nentries; j++)
			cat_range_clear(&ch->entries[j].range);
		free(ch->entries);
		free(ch->byname);
	}
	free(p->channels);
	for (i = 0; i < p->nbundles; i++) {
		struct cat_bundle *b = &p->bundles[i];

		for (j = 0; j < b->npkgreqs; j++)
			cat_range_clear(&b->pkgreqs[j].range);
		free(b->pkgreqs);
		free(b->gvks);
		free(b->gvkreqs);
	}
	free(p->bundles);
	json_decref(p->others);
}

void al_catalog_free(al_catalog *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i < c->npackages; i++)
		package_clear(&c->packages[i]);
	free(c->packages);
	json_decref(c->raw_packages);
	json_decref(c->raw_channels);
	json_decref(c->raw_bundles);
	json_decref(c->raw_deprecations);
	json_decref(c->raw_others);
	json_decref(c->global);
	json_decref(c->unresolved_list);
	cat_spool_unref(c->spool);
	free(c);
}

void cat_use_spool(al_catalog *c, struct cat_spool *sp)
{
	cat_spool_unref(c->spool);
	c->spool = cat_spool_ref(sp);
}

/* Property types whose values are opaque here and large in real catalogs
 * (a bundle's manifests, base64; its CSV's description and icon). */
static int bulky_type(const char *t)
{
	return t != NULL && (strcmp(t, "olm.bundle.object") == 0 ||
	                     strcmp(t, "olm.csv.metadata") == 0);
}

/* Move the bulky property values of a just-read bundle to the spool. */
static int spill_bulky(al_catalog *c, json_t *obj)
{
	const char *schema = al_json_str(obj, "schema");
	json_t *props, *pr;
	size_t i;
	int rc;

	if (c->spool == NULL || schema == NULL || strcmp(schema, S_BUNDLE) != 0)
		return 0;
	props = json_object_get(obj, "properties");
	json_array_foreach(props, i, pr)
	{
		json_t *v = json_object_get(pr, "value"), *ph;

		if (v == NULL || !bulky_type(al_json_str(pr, "type")))
			continue;
		if ((rc = cat_spool_spill(c->spool, v, &ph)) < 0)
			return rc;
		if (json_object_set_new(pr, "value", ph) < 0)
			return al_error_oom();
	}
	return 0;
}

int cat_add_object(al_catalog *c, json_t *obj, const char *where)
{
	const char *schema;
	json_t *dst;

	if (c->finished)
		return al_error_set(AL_EINVAL, "catalog already finished");
	if (!json_is_object(obj))
		return al_error_set(AL_EPARSE, "%s: not an object", where);
	schema = al_json_str(obj, "schema");
	if (schema == NULL || schema[0] == '\0')
		return al_error_set(AL_EPARSE,
		                    "%s: object is missing root schema field",
		                    where);
	if (c->nobjects >= AL_CATALOG_OBJECTS_MAX)
		return al_error_set(AL_ELIMIT,
		                    "catalog has more than %d objects",
		                    AL_CATALOG_OBJECTS_MAX);
	if (strcmp(schema, S_PACKAGE) == 0)
		dst = c->raw_packages;
	else if (strcmp(schema, S_CHANNEL) == 0)
		dst = c->raw_channels;
	else if (strcmp(schema, S_BUNDLE) == 0)
		dst = c->raw_bundles;
	else if (strcmp(schema, S_DEPRECATIONS) == 0)
		dst = c->raw_deprecations;
	else
		dst = c->raw_others;
	if (json_array_append(dst, obj) < 0)
		return al_error_oom();
	c->nobjects++;
	return 0;
}

/*
 * Object k of a JSON stream, as json_load* left it (v, err): added to the
 * catalog (v's reference is dropped either way), *used the bytes it took.
 */
static int take_object(al_catalog *c, const char *path, size_t k, json_t *v,
                       const json_error_t *err, size_t *used)
{
	char where[1200];
	int rc;

	if (v == NULL) {
		if (json_error_code(err) == json_error_out_of_memory)
			return al_error_oom();
		return al_error_set(AL_EPARSE,
		                    "%s: object %zu: line %d, column %d "
		                    "of the object: %s",
		                    path, k, err->line, err->column, err->text);
	}
	if (err->position <= 0) {
		json_decref(v);
		return al_error_set(AL_EPARSE, "%s: object %zu: no bytes", path,
		                    k);
	}
	*used = (size_t)err->position;
	snprintf(where, sizeof(where), "%s: object %zu", path, k);
	rc = spill_bulky(c, v);
	if (rc == 0)
		rc = cat_add_object(c, v, where);
	json_decref(v);
	return rc;
}

/* A stream of JSON objects, as encoding/json's Decoder reads them. */
static int add_json_stream(al_catalog *c, const char *path, const uint8_t *p,
                           size_t n)
{
	size_t off = 0, k = 0;

	for (;;) {
		json_error_t err;
		size_t used = 0;
		json_t *v;
		int rc;

		while (off < n && (p[off] == ' ' || p[off] == '\t' ||
		                   p[off] == '\n' || p[off] == '\r'))
			off++;
		if (off == n)
			return 0;
		k++;
		v = json_loadb((const char *)p + off, n - off,
		               JSON_REJECT_DUPLICATES | JSON_DISABLE_EOF_CHECK,
		               &err);
		if ((rc = take_object(c, path, k, v, &err, &used)) < 0)
			return rc;
		off += used;
	}
}

static int add_yaml_stream(al_catalog *c, const char *path, const uint8_t *p,
                           size_t n)
{
	al_yaml_node **docs = NULL;
	size_t ndocs = 0, i;
	char where[1200];
	int rc;

	if ((rc = al_yaml_load(&docs, &ndocs, p, n, path)) < 0)
		return rc;
	for (i = 0; i < ndocs && rc == 0; i++) {
		json_t *v = NULL;

		/* empty documents ("---" alone) carry nothing */
		if (docs[i]->type == AL_YAML_SCALAR && docs[i]->len == 0)
			continue;
		if ((rc = al_yaml_to_json(&v, docs[i])) < 0) {
			rc = al_error_wrap(rc, "%s", path);
			break;
		}
		snprintf(where, sizeof(where), "%s:%zu", path, docs[i]->line);
		rc = spill_bulky(c, v);
		if (rc == 0)
			rc = cat_add_object(c, v, where);
		json_decref(v);
	}
	al_yaml_docs_free(docs, ndocs);
	return rc;
}

/* The bounds every file counts against, and the count. */
static int count_file(al_catalog *c, const char *path, size_t n)
{
	if (n > AL_CATALOG_FILE_MAX)
		return al_error_set(AL_ELIMIT, "%s is larger than %llu bytes",
		                    path,
		                    (unsigned long long)AL_CATALOG_FILE_MAX);
	if (c->nfiles >= AL_CATALOG_FILES_MAX)
		return al_error_set(AL_ELIMIT, "catalog has more than %d files",
		                    AL_CATALOG_FILES_MAX);
	if (c->total + n > AL_CATALOG_TOTAL_MAX)
		return al_error_set(AL_ELIMIT,
		                    "catalog files are larger than %llu bytes",
		                    (unsigned long long)AL_CATALOG_TOTAL_MAX);
	c->nfiles++;
	c->total += n;
	return 0;
}

static int is_blank(int ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

int al_catalog_add_file(al_catalog *c, const char *path, const uint8_t *p,
                        size_t n)
{
	size_t i = 0;
	int rc;

	if (c == NULL || path == NULL || (p == NULL && n > 0))
		return al_error_set(AL_EINVAL, "no catalog or file");
	if ((rc = count_file(c, path, n)) < 0 || n == 0)
		return rc;
	if (memchr(p, '\0', n) != NULL)
		return al_error_set(AL_EPARSE, "%s: NUL byte in catalog file",
		                    path);
	while (i < n && is_blank(p[i]))
		i++;
	if (i < n && p[i] == '{')
		return add_json_stream(c, path, p, n);
	return add_yaml_stream(c, path, p, n);
}

/*
 * A JSON stream read from the scratch file through one chunk: each object
 * is parsed from where the previous one ended (jansson reads ahead; the
 * bytes it read past the object are handed to it again), so memory holds
 * one object and the chunk, whatever the file's size.
 */
#define CHUNK (64 * 1024)

struct sreader {
	struct cat_spool *sp;
	uint64_t end; /* the file's end in the scratch file */
	uint64_t pos; /* the next byte for jansson */
	uint8_t *chunk;
	uint64_t at; /* where chunk starts */
	size_t len;
	int failed; /* 1: a read failed (error set), 2: a NUL byte */
};

/* The byte at pos (-1 at the end or on a failed read). */
static int sreader_byte(struct sreader *r, uint64_t pos)
{
	if (pos >= r->end)
		return -1;
	if (pos < r->at || pos >= r->at + r->len) {
		size_t n =
		    r->end - pos < CHUNK ? (size_t)(r->end - pos) : CHUNK;

		if (cat_spool_read(r->sp, pos, n, r->chunk) < 0) {
			r->failed = 1;
			r->len = 0;
			return -1;
		}
		r->at = pos;
		r->len = n;
	}
	return r->chunk[pos - r->at];
}

static size_t sreader_cb(void *buf, size_t buflen, void *data)
{
	struct sreader *r = data;
	size_t n;

	if (sreader_byte(r, r->pos) < 0)
		return r->failed ? (size_t)-1 : 0;
	n = (size_t)(r->at + r->len - r->pos);
	if (n > buflen)
		n = buflen;
	memcpy(buf, r->chunk + (r->pos - r->at), n);
	if (memchr(buf, '\0', n) != NULL) {
		r->failed = 2;
		return (size_t)-1;
	}
	r->pos += n;
	return n;
}

static int add_json_spooled(al_catalog *c, const char *path, struct sreader *r,
                            uint64_t off)
{
	size_t k = 0;

	for (;;) {
		json_error_t err;
		size_t used = 0;
		json_t *v;
		int ch, rc;

		while ((ch = sreader_byte(r, off)) >= 0 && is_blank(ch))
			off++;
		if (r->failed)
			return AL_EIO;
		if (ch < 0)
			return 0;
		k++;
		r->pos = off;
		v = json_load_callback(
		    sreader_cb, r,
		    JSON_REJECT_DUPLICATES | JSON_DISABLE_EOF_CHECK, &err);
		if (r->failed == 1) {
			json_decref(v);
			return AL_EIO;
		}
		if (r->failed == 2) {
			json_decref(v);
			return al_error_set(
			    AL_EPARSE, "%s: NUL byte in catalog file", path);
		}
		if ((rc = take_object(c, path, k, v, &err, &used)) < 0)
			return rc;
		off += used;
	}
}

int cat_add_spooled_file(al_catalog *c, const char *path, struct cat_spool *sp,
                         uint64_t off, size_t n)
{
	struct sreader r;
	uint8_t *all;
	uint64_t i = off;
	int rc, ch;

	if ((rc = count_file(c, path, n)) < 0 || n == 0)
		return rc;
	memset(&r, 0, sizeof(r));
	r.sp = sp;
	r.end = off + n;
	if ((r.chunk = malloc(CHUNK)) == NULL)
		return al_error_oom();
	while ((ch = sreader_byte(&r, i)) >= 0 && is_blank(ch))
		i++;
	if (ch == '{') {
		rc = add_json_spooled(c, path, &r, off);
		free(r.chunk);
		return rc;
	}
	free(r.chunk);
	if (r.failed)
		return AL_EIO;
	/* YAML (or not a catalog file): libyaml reads it whole */
	if ((all = malloc(n)) == NULL)
		return al_error_oom();
	rc = cat_spool_read(sp, off, n, all);
	if (rc == 0 && memchr(all, '\0', n) != NULL)
		rc = al_error_set(AL_EPARSE, "%s: NUL byte in catalog file",
		                  path);
	if (rc == 0)
		rc = add_yaml_stream(c, path, all, n);
	free(all);
	return rc;
}

/* ---- indexing ------------------------------------------------------- */

static int cmp_pkg(const void *a, const void *b)
{
	return strcmp(((const struct cat_package *)a)->name,
	              ((const struct cat_package *)b)->name);
}

static int cmp_bundle(const void *a, const void *b)
{
	return strcmp(((const struct cat_bundle *)a)->name,
	              ((const struct cat_bundle *)b)->name);
}

static int cmp_channel(const void *a, const void *b)
{
	return strcmp(((const struct cat_channel *)a)->name,
	              ((const struct cat_channel *)b)->name);
}

long cat_find_package(const al_catalog *c, const char *name)
{
	size_t lo = 0, hi = c->npackages;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int d = strcmp(name, c->packages[mid].name);

		if (d == 0)
			return (long)mid;
		if (d < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
}

long cat_find_bundle(const struct cat_package *p, const char *name)
{
	size_t lo = 0, hi = p->nbundles;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int d = strcmp(name, p->bundles[mid].name);

		if (d == 0)
			return (long)mid;
		if (d < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
}

long cat_find_channel(const struct cat_package *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->nchannels; i++) {
		if (strcmp(p->channels[i].name, name) == 0)
			return (long)i;
	}
	return -1;
}

long cat_find_entry(const struct cat_channel *ch, const char *name)
{
	size_t lo = 0, hi = ch->nentries;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int d = strcmp(name, ch->entries[ch->byname[mid]].name);

		if (d == 0)
			return (long)ch->byname[mid];
		if (d < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
}

/*
 * The name o[key] of a catalog object, checked where it enters
 * (docs/security.md "Names from fetched content"): package names are one
 * path component (they become directories, declcfg.WriteFS), channel and
 * bundle names one field of a line (mapping, reports, KEY=VALUE outputs).
 */
static const char *name_of(const json_t *o, const char *key, const char *what,
                           int kind, int *rc)
{
	const char *s = al_json_str(o, key);

	if (s == NULL || s[0] == '\0') {
		*rc = al_error_set(AL_EPARSE, "%s: missing or empty '%s'", what,
		                   key);
		return NULL;
	}
	if (strlen(s) > AL_CATALOG_NAME_MAX) {
		*rc = al_error_set(AL_ELIMIT, "%s: '%s' longer than %d bytes",
		                   what, key, AL_CATALOG_NAME_MAX);
		return NULL;
	}
	/* package, channel and bundle names become directories, tags and
	 * lines of reports: no control byte, separator or path may reach
	 * them */
	if (!al_name_ok(s, strlen(s), kind, AL_CATALOG_NAME_MAX)) {
		*rc = al_name_check(what, s, kind, AL_CATALOG_NAME_MAX);
		return NULL;
	}
	return s;
}

/*
 * A bundle's image or related image: empty (OLM allows a related image
 * without one) or one field of a line (no control byte, space or '='),
 * before it is listed, mirrored or written to a mapping
 * (docs/security.md). Its grammar is al_ref_parse's, where it is mirrored:
 * a catalog is not refused for a reference it merely names.
 */
static int image_ok(const char *img, const char *what)
{
	char shown[4 * 64 + 1];
	size_t n;

	if (img == NULL || img[0] == '\0')
		return 0;
	n = strlen(img);
	if (al_name_ok(img, n, AL_NAME_FIELD, AL_CATALOG_NAME_MAX))
		return 0;
	al_str_escape(shown, sizeof(shown), img, n > 64 ? 64 : n);
	return al_error_set(AL_EPARSE, "%s: '%s%s' is not an image reference",
	                    what, shown, n > 64 ? "..." : "");
}

static struct cat_package *package_of(al_catalog *c, const json_t *o,
                                      const char *what, int *rc)
{
	const char *pn = name_of(o, "package", what, AL_NAME_COMPONENT, rc);
	long i;

	if (pn == NULL)
		return NULL;
	i = cat_find_package(c, pn);
	if (i < 0) {
		*rc = al_error_set(AL_EPARSE, "%s: package '%s' not found",
		                   what, pn);
		return NULL;
	}
	return &c->packages[i];
}

static int index_packages(al_catalog *c)
{
	size_t i, n = json_array_size(c->raw_packages);
	int rc = 0;

	c->packages = calloc(n > 0 ? n : 1, sizeof(*c->packages));
	if (c->packages == NULL)
		return al_error_oom();
	for (i = 0; i < n; i++) {
		json_t *o = json_array_get(c->raw_packages, i);
		struct cat_package *p = &c->packages[c->npackages];
		const char *dc;

		p->name = name_of(o, "name", "olm.package", AL_NAME_TEXT, &rc);
		if (p->name == NULL)
			return rc;
		/* the name becomes a directory (declcfg.WriteFS layout): one
		 * path component (AL_NAME_COMPONENT), not a whiteout or the
		 * global file's name */
		if (!al_name_ok(p->name, strlen(p->name), AL_NAME_COMPONENT,
		                AL_CATALOG_NAME_MAX) ||
		    strcmp(p->name, ".") == 0 || strcmp(p->name, "..") == 0 ||
		    strcmp(p->name, AL_CATALOG_GLOBAL_NAME) == 0 ||
		    strncmp(p->name, ".wh.", 4) == 0)
			return al_error_set(AL_EPARSE,
			                    "package name '%s' cannot be a "
			                    "directory name",
			                    p->name);
		p->obj = o;
		dc = al_json_str(o, "defaultChannel");
		p->default_channel = dc != NULL ? dc : "";
		p->others = json_array();
		if (p->others == NULL)
			return al_error_oom();
		c->npackages++;
	}
	qsort(c->packages, c->npackages, sizeof(*c->packages), cmp_pkg);
	for (i = 1; i < c->npackages; i++) {
		if (strcmp(c->packages[i - 1].name, c->packages[i].name) == 0)
			return al_error_set(AL_EPARSE,
			                    "package '%s' is defined twice",
			                    c->packages[i].name);
	}
	return 0;
}

static int grow(void **v, size_t *cap, size_t n, size_t size)
{
	void *nv;
	size_t ncap;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 8;
	nv = realloc(*v, ncap * size);
	if (nv == NULL)
		return al_error_oom();
	*v = nv;
	*cap = ncap;
	return 0;
}

static int parse_gvk(struct cat_gvk *g, const json_t *v, const char *what)
{
	g->group = al_json_str(v, "group");
	g->version = al_json_str(v, "version");
	g->kind = al_json_str(v, "kind");
	if (g->group == NULL || g->version == NULL || g->kind == NULL)
		return al_error_set(AL_EPARSE,
		                    "%s: gvk property needs group, version and "
		                    "kind strings",
		                    what);
	return 0;
}

/* properties[]: olm.package (exactly one), olm.gvk, olm.gvk.required,
 * olm.package.required; other property types are kept as they are. */
static int parse_properties(struct cat_bundle *b, const char *pkg,
                            const char *what)
{
	json_t *props = json_object_get(b->obj, "properties"), *pr;
	size_t i, capg = 0, capr = 0, capp = 0;
	int npkg = 0, rc;

	if (props != NULL && !json_is_array(props))
		return al_error_set(AL_EPARSE, "%s: properties is not a list",
		                    what);
	json_array_foreach(props, i, pr)
	{
		const char *type = al_json_str(pr, "type");
		json_t *v = json_object_get(pr, "value");

		if (type == NULL)
			return al_error_set(
			    AL_EPARSE, "%s: property %zu has no type", what, i);
		if (strcmp(type, "olm.package") == 0) {
			const char *pn = al_json_str(v, "packageName");
			const char *ver = al_json_str(v, "version");

			if (npkg++ > 0)
				return al_error_set(
				    AL_EPARSE,
				    "%s: more than one olm.package "
				    "property",
				    what);
			if (pn == NULL || ver == NULL)
				return al_error_set(
				    AL_EPARSE,
				    "%s: olm.package property needs "
				    "packageName and version",
				    what);
			if (strcmp(pn, pkg) != 0)
				return al_error_set(
				    AL_EPARSE,
				    "%s: olm.package property names package "
				    "'%s'",
				    what, pn);
			if (cat_semver_parse(&b->ver, ver, strlen(ver), 0) < 0)
				return al_error_set(AL_EPARSE,
				                    "%s: version '%s' is not a "
				                    "semantic version",
				                    what, ver);
			b->version = ver;
		} else if (strcmp(type, "olm.gvk") == 0) {
			if ((rc = grow((void **)&b->gvks, &capg, b->ngvks,
			               sizeof(*b->gvks))) < 0 ||
			    (rc = parse_gvk(&b->gvks[b->ngvks], v, what)) < 0)
				return rc;
			b->ngvks++;
		} else if (strcmp(type, "olm.gvk.required") == 0) {
			if ((rc = grow((void **)&b->gvkreqs, &capr, b->ngvkreqs,
			               sizeof(*b->gvkreqs))) < 0 ||
			    (rc = parse_gvk(&b->gvkreqs[b->ngvkreqs], v,
			                    what)) < 0)
				return rc;
			b->ngvkreqs++;
		} else if (strcmp(type, "olm.package.required") == 0) {
			struct cat_pkgreq *q;

			if ((rc = grow((void **)&b->pkgreqs, &capp, b->npkgreqs,
			               sizeof(*b->pkgreqs))) < 0)
				return rc;
			q = &b->pkgreqs[b->npkgreqs];
			memset(q, 0, sizeof(*q));
			q->package = al_json_str(v, "packageName");
			q->range_text = al_json_str(v, "versionRange");
			if (q->package == NULL || q->range_text == NULL)
				return al_error_set(
				    AL_EPARSE,
				    "%s: olm.package.required needs "
				    "packageName and versionRange",
				    what);
			if (cat_range_parse(&q->range, q->range_text) < 0)
				return al_error_set(
				    AL_EPARSE,
				    "%s: versionRange '%s' of '%s' "
				    "is not a version range",
				    what, q->range_text, q->package);
			b->npkgreqs++;
		}
	}
	if (npkg == 0)
		return al_error_set(AL_EPARSE, "%s: no olm.package property",
		                    what);
	return 0;
}

static int index_bundles(al_catalog *c)
{
	size_t i, n = json_array_size(c->raw_bundles);
	size_t *caps = NULL;
	char what[2200];
	int rc = 0;

	caps = calloc(c->npackages > 0 ? c->npackages : 1, sizeof(*caps));
	if (caps == NULL)
		return al_error_oom();
	for (i = 0; i < n; i++) {
		json_t *o = json_array_get(c->raw_bundles, i), *ri;
		struct cat_package *p = package_of(c, o, "olm.bundle", &rc);
		struct cat_bundle *b;
		const char *name, *img;

		if (p == NULL)
			goto out;
		name = name_of(o, "name", "olm.bundle", AL_NAME_FIELD, &rc);
		if (name == NULL)
			goto out;
		if ((rc = grow((void **)&p->bundles, &caps[p - c->packages],
		               p->nbundles, sizeof(*p->bundles))) < 0)
			goto out;
		b = &p->bundles[p->nbundles++];
		memset(b, 0, sizeof(*b));
		b->name = name;
		b->obj = o;
		c->nbundles++;
		snprintf(what, sizeof(what), "package '%s' bundle '%s'",
		         p->name, name);
		img = al_json_str(o, "image");
		b->image = img != NULL ? img : "";
		if ((rc = image_ok(img, what)) < 0)
			goto out;
		ri = json_object_get(o, "relatedImages");
		if (ri != NULL && !json_is_array(ri)) {
			rc = al_error_set(
			    AL_EPARSE, "%s: relatedImages is not a list", what);
			goto out;
		}
		{
			json_t *e;
			size_t k;
			json_array_foreach(ri, k, e)
			{
				if ((rc = image_ok(al_json_str(e, "image"),
				                   what)) < 0)
					goto out;
			}
		}
		if ((rc = parse_properties(b, p->name, what)) < 0)
			goto out;
	}
	for (i = 0; i < c->npackages; i++) {
		struct cat_package *p = &c->packages[i];
		size_t j;

		if (p->nbundles > 1)
			qsort(p->bundles, p->nbundles, sizeof(*p->bundles),
			      cmp_bundle);
		for (j = 1; j < p->nbundles; j++) {
			if (strcmp(p->bundles[j - 1].name,
			           p->bundles[j].name) == 0) {
				rc =
				    al_error_set(AL_EPARSE,
				                 "package '%s': bundle '%s' is "
				                 "defined twice",
				                 p->name, p->bundles[j].name);
				goto out;
			}
		}
	}
out:
	free(caps);
	return rc;
}

/* Exactly one head, no cycle: Kahn's algorithm over replaces and skips
 * edges inside the channel (model.Channel.Head and the topological check
 * of the mirror filter's newChannel). */
static int check_graph(const struct cat_package *p, struct cat_channel *ch)
{
	size_t *incoming = NULL, *queue = NULL, qh = 0, qt = 0, done = 0, i;
	long head = -1;
	int rc = 0, nheads = 0;

	incoming = calloc(ch->nentries, sizeof(*incoming));
	queue = calloc(ch->nentries, sizeof(*queue));
	if (incoming == NULL || queue == NULL) {
		rc = al_error_oom();
		goto out;
	}
	for (i = 0; i < ch->nentries; i++) {
		const struct cat_entry *e = &ch->entries[i];
		json_t *s;
		size_t k;
		long t;

		if (e->replaces != NULL &&
		    (t = cat_find_entry(ch, e->replaces)) >= 0)
			incoming[t]++;
		json_array_foreach(e->skips, k, s)
		{
			if ((t = cat_find_entry(ch, json_string_value(s))) >= 0)
				incoming[t]++;
		}
	}
	for (i = 0; i < ch->nentries; i++) {
		if (incoming[i] == 0) {
			if (nheads++ == 0)
				head = (long)i;
			queue[qt++] = i;
		}
	}
	if (nheads != 1) {
		rc = al_error_set(
		    AL_EPARSE, "package '%s' channel '%s': %s channel heads",
		    p->name, ch->name, nheads == 0 ? "no" : "multiple");
		goto out;
	}
	while (qh < qt) {
		const struct cat_entry *e = &ch->entries[queue[qh++]];
		json_t *s;
		size_t k;
		long t;

		done++;
		if (e->replaces != NULL &&
		    (t = cat_find_entry(ch, e->replaces)) >= 0 &&
		    --incoming[t] == 0)
			queue[qt++] = (size_t)t;
		json_array_foreach(e->skips, k, s)
		{
			t = cat_find_entry(ch, json_string_value(s));
			if (t >= 0 && --incoming[t] == 0)
				queue[qt++] = (size_t)t;
		}
	}
	if (done != ch->nentries) {
		rc = al_error_set(AL_EPARSE,
		                  "package '%s' channel '%s': a cycle in the "
		                  "upgrade graph",
		                  p->name, ch->name);
		goto out;
	}
	ch->head = head;
out:
	free(incoming);
	free(queue);
	return rc;
}

/* Sort entry indexes by name: qsort has no user pointer, and a merge sort
 * keeps this reentrant. */
static void sort_byname(const struct cat_channel *ch, size_t *v, size_t *tmp,
                        size_t n)
{
	size_t mid = n / 2, i = 0, j = mid, k = 0;

	if (n < 2)
		return;
	sort_byname(ch, v, tmp, mid);
	sort_byname(ch, v + mid, tmp, n - mid);
	while (i < mid && j < n) {
		if (strcmp(ch->entries[v[i]].name, ch->entries[v[j]].name) <= 0)
			tmp[k++] = v[i++];
		else
			tmp[k++] = v[j++];
	}
	while (i < mid)
		tmp[k++] = v[i++];
	while (j < n)
		tmp[k++] = v[j++];
	memcpy(v, tmp, n * sizeof(*v));
}

static int index_channel(struct cat_package *p, struct cat_channel *ch,
                         json_t *o)
{
	json_t *entries = json_object_get(o, "entries"), *e;
	size_t i, n, *tmp = NULL;
	int rc = 0;

	if (!json_is_array(entries))
		return al_error_set(AL_EPARSE,
		                    "package '%s' channel '%s': entries is not "
		                    "a list",
		                    p->name, ch->name);
	n = json_array_size(entries);
	ch->entries = calloc(n + 1, sizeof(*ch->entries));
	ch->byname = calloc(n + 1, sizeof(*ch->byname));
	tmp = calloc(n + 1, sizeof(*tmp));
	if (ch->entries == NULL || ch->byname == NULL || tmp == NULL) {
		rc = al_error_oom();
		goto out;
	}
	/* counted only once they exist: package_clear walks them */
	ch->nentries = n;
	if (ch->nentries == 0) {
		rc = al_error_set(AL_EPARSE,
		                  "package '%s' channel '%s' has no entries",
		                  p->name, ch->name);
		goto out;
	}
	json_array_foreach(entries, i, e)
	{
		struct cat_entry *en = &ch->entries[i];
		json_t *sk = json_object_get(e, "skips"), *s;
		size_t k;

		en->name = al_json_str(e, "name");
		if (en->name == NULL || en->name[0] == '\0') {
			rc =
			    al_error_set(AL_EPARSE,
			                 "package '%s' channel '%s': entry %zu "
			                 "has no name",
			                 p->name, ch->name, i);
			goto out;
		}
		en->replaces = al_json_str(e, "replaces");
		if (en->replaces != NULL && en->replaces[0] == '\0')
			en->replaces = NULL;
		if (sk != NULL && !json_is_array(sk)) {
			rc = al_error_set(
			    AL_EPARSE,
			    "package '%s' channel '%s' entry '%s': "
			    "skips is not a list",
			    p->name, ch->name, en->name);
			goto out;
		}
		json_array_foreach(sk, k, s)
		{
			if (!json_is_string(s)) {
				rc = al_error_set(
				    AL_EPARSE,
				    "package '%s' channel '%s' entry "
				    "'%s': skips holds a non-string",
				    p->name, ch->name, en->name);
				goto out;
			}
		}
		en->skips = sk;
		en->skip_range = al_json_str(e, "skipRange");
		if (en->skip_range != NULL && en->skip_range[0] != '\0') {
			if ((rc = cat_range_parse(&en->range,
			                          en->skip_range)) == AL_ENOMEM)
				goto out;
			if (rc < 0) {
				rc = al_error_set(
				    AL_EPARSE,
				    "package '%s' channel '%s' entry '%s': "
				    "skipRange '%s' is not a version range",
				    p->name, ch->name, en->name,
				    en->skip_range);
				goto out;
			}
			en->has_range = 1;
		}
		en->bundle = cat_find_bundle(p, en->name);
		if (en->bundle < 0) {
			rc = al_error_set(
			    AL_EPARSE,
			    "package '%s' channel '%s': entry '%s' "
			    "has no bundle",
			    p->name, ch->name, en->name);
			goto out;
		}
		ch->byname[i] = i;
	}
	sort_byname(ch, ch->byname, tmp, ch->nentries);
	for (i = 1; i < ch->nentries; i++) {
		if (strcmp(ch->entries[ch->byname[i - 1]].name,
		           ch->entries[ch->byname[i]].name) == 0) {
			rc = al_error_set(
			    AL_EPARSE,
			    "package '%s' channel '%s': duplicate "
			    "entry '%s'",
			    p->name, ch->name, ch->entries[ch->byname[i]].name);
			goto out;
		}
	}
	rc = check_graph(p, ch);
out:
	free(tmp);
	return rc;
}

static int index_channels(al_catalog *c)
{
	size_t i, n = json_array_size(c->raw_channels);
	size_t *caps = NULL;
	unsigned char *inchan = NULL;
	int rc = 0;

	caps = calloc(c->npackages > 0 ? c->npackages : 1, sizeof(*caps));
	if (caps == NULL)
		return al_error_oom();
	for (i = 0; i < n; i++) {
		json_t *o = json_array_get(c->raw_channels, i);
		struct cat_package *p = package_of(c, o, "olm.channel", &rc);
		struct cat_channel *ch;
		const char *name;

		if (p == NULL)
			goto out;
		name = name_of(o, "name", "olm.channel", AL_NAME_FIELD, &rc);
		if (name == NULL)
			goto out;
		if (cat_find_channel(p, name) >= 0) {
			rc = al_error_set(
			    AL_EPARSE,
			    "package '%s': channel '%s' is defined "
			    "twice",
			    p->name, name);
			goto out;
		}
		if ((rc = grow((void **)&p->channels, &caps[p - c->packages],
		               p->nchannels, sizeof(*p->channels))) < 0)
			goto out;
		ch = &p->channels[p->nchannels++];
		memset(ch, 0, sizeof(*ch));
		ch->name = name;
		ch->obj = o;
		if ((rc = index_channel(p, ch, o)) < 0)
			goto out;
	}
	for (i = 0; i < c->npackages; i++) {
		struct cat_package *p = &c->packages[i];
		size_t j, k;

		if (p->nchannels > 1)
			qsort(p->channels, p->nchannels, sizeof(*p->channels),
			      cmp_channel);
		if (p->default_channel[0] != '\0' &&
		    cat_find_channel(p, p->default_channel) < 0) {
			rc = al_error_set(AL_EPARSE,
			                  "package '%s': default channel '%s' "
			                  "does not exist",
			                  p->name, p->default_channel);
			goto out;
		}
		free(inchan);
		inchan = calloc(p->nbundles + 1, 1);
		if (inchan == NULL) {
			rc = al_error_oom();
			goto out;
		}
		for (j = 0; j < p->nchannels; j++) {
			for (k = 0; k < p->channels[j].nentries; k++)
				inchan[p->channels[j].entries[k].bundle] = 1;
		}
		for (j = 0; j < p->nbundles; j++) {
			if (!inchan[j]) {
				rc =
				    al_error_set(AL_EPARSE,
				                 "package '%s': bundle '%s' is "
				                 "not in any channel",
				                 p->name, p->bundles[j].name);
				goto out;
			}
		}
	}
out:
	free(inchan);
	free(caps);
	return rc;
}

static int index_rest(al_catalog *c)
{
	json_t *o;
	size_t i;
	int rc = 0;

	json_array_foreach(c->raw_deprecations, i, o)
	{
		struct cat_package *p =
		    package_of(c, o, "olm.deprecations", &rc);

		if (p == NULL)
			return rc;
		if (p->deprecations != NULL)
			return al_error_set(AL_EPARSE,
			                    "package '%s': more than one "
			                    "olm.deprecations",
			                    p->name);
		if (!json_is_array(json_object_get(o, "entries")))
			return al_error_set(AL_EPARSE,
			                    "package '%s': olm.deprecations "
			                    "entries is not a list",
			                    p->name);
		p->deprecations = o;
	}
	json_array_foreach(c->raw_others, i, o)
	{
		const char *pn = al_json_str(o, "package");
		json_t *dst = c->global;

		if (pn != NULL && pn[0] != '\0') {
			long k = cat_find_package(c, pn);

			if (k < 0)
				return al_error_set(
				    AL_EPARSE,
				    "schema '%s': package '%s' not "
				    "found",
				    al_json_str(o, "schema"), pn);
			dst = c->packages[k].others;
		}
		if (json_array_append(dst, o) < 0)
			return al_error_oom();
	}
	return 0;
}

int al_catalog_finish(al_catalog *c)
{
	int rc;

	if (c == NULL || c->finished)
		return al_error_set(AL_EINVAL, "catalog missing or finished");
	if ((rc = index_packages(c)) < 0 || (rc = index_bundles(c)) < 0 ||
	    (rc = index_channels(c)) < 0 || (rc = index_rest(c)) < 0)
		return rc;
	c->finished = 1;
	return 0;
}

size_t al_catalog_package_count(const al_catalog *c)
{
	return c->npackages;
}

const char *al_catalog_package_name(const al_catalog *c, size_t i)
{
	return i < c->npackages ? c->packages[i].name : NULL;
}

const char *al_catalog_default_channel(const al_catalog *c, size_t i)
{
	return i < c->npackages ? c->packages[i].default_channel : NULL;
}

size_t al_catalog_bundle_count(const al_catalog *c)
{
	return c->nbundles;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

char *al_catalog_summary(const al_catalog *c)
{
	al_buf b = AL_BUF_INIT(256 * AL_MIB);
	const char **names = NULL;
	size_t i, j, k;
	int rc = 0;

	for (i = 0; i < c->npackages && rc == 0; i++) {
		const struct cat_package *p = &c->packages[i];

		rc = al_buf_printf(&b, "package %s default=%s\n", p->name,
		                   p->default_channel);
		for (j = 0; j < p->nchannels && rc == 0; j++) {
			const struct cat_channel *ch = &p->channels[j];

			rc = al_buf_printf(
			    &b, "channel %s/%s head=%s entries=", p->name,
			    ch->name, ch->entries[ch->head].name);
			for (k = 0; k < ch->nentries && rc == 0; k++)
				rc = al_buf_printf(
				    &b, "%s%s", k ? "," : "",
				    ch->entries[ch->byname[k]].name);
			if (rc == 0)
				rc = al_buf_puts(&b, "\n");
		}
		if (rc == 0)
			rc = al_buf_printf(&b, "bundles %s:", p->name);
		for (j = 0; j < p->nbundles && rc == 0; j++)
			rc = al_buf_printf(&b, "%s%s", j ? "," : " ",
			                   p->bundles[j].name);
		if (rc == 0)
			rc = al_buf_puts(&b, "\n");
		if (p->deprecations != NULL && rc == 0) {
			json_t *es =
			    json_object_get(p->deprecations, "entries");
			json_t *e;

			rc = al_buf_printf(&b, "deprecations %s:", p->name);
			json_array_foreach(es, k, e)
			{
				json_t *r = json_object_get(e, "reference");
				const char *nm = al_json_str(r, "name");

				if (rc == 0)
					rc = al_buf_printf(
					    &b, "%s%s%s%s", k ? "," : " ",
					    al_json_str(r, "schema") != NULL
					        ? al_json_str(r, "schema")
					        : "?",
					    nm != NULL ? "/" : "",
					    nm != NULL ? nm : "");
			}
			if (rc == 0)
				rc = al_buf_puts(&b, "\n");
		}
	}
	free(names);
	if (rc < 0) {
		al_buf_free(&b);
		return NULL;
	}
	if (b.ptr == NULL)
		return al_strdup("");
	return al_buf_detach(&b, NULL);
}

/* ---- images ----------------------------------------------------------- */

void al_catalog_images_free(char **v, size_t n)
{
	size_t i;

	if (v == NULL)
		return;
	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static int push_str(char ***v, size_t *n, size_t *cap, const char *s)
{
	if (s == NULL || s[0] == '\0')
		return 0;
	if (grow((void **)v, cap, *n, sizeof(**v)) < 0)
		return AL_ENOMEM;
	(*v)[*n] = al_strdup(s);
	if ((*v)[*n] == NULL)
		return al_error_oom();
	(*n)++;
	return 0;
}

/*
 * A bundle or related image of the selection that names neither a tag
 * nor a digest: oc-mirror refuses the catalog ("tag and digest are
 * empty", OCPBUGS-33081; its integration test isc-operator-invalid-
 * images.yaml mirrors nothing of it) where a default tag would mirror
 * whatever :latest is that day. A reference that does not parse is left
 * to the copy, which reports it.
 */
static int image_pinned(const char *img, const char *pkg, const char *bundle)
{
	al_ref r;
	int none;

	if (img == NULL || img[0] == '\0')
		return 0;
	if (al_str_startswith(img, "docker://"))
		img += strlen("docker://");
	if (al_ref_parse(&r, img) < 0) {
		al_error_clear();
		return 0;
	}
	none = r.tag == NULL && r.digest == NULL;
	al_ref_clear(&r);
	if (none)
		return al_error_set(AL_EPARSE,
		                    "package '%s' bundle '%s': image '%s' has "
		                    "neither tag nor digest (oc-mirror refuses "
		                    "the catalog too, OCPBUGS-33081)",
		                    pkg, bundle, img);
	return 0;
}

int al_catalog_images(const al_catalog *c, char ***out, size_t *nout)
{
	char **v = NULL;
	size_t n = 0, cap = 0, i, j, k, w;
	int rc = 0;

	for (i = 0; i < c->npackages && rc == 0; i++) {
		const struct cat_package *p = &c->packages[i];

		for (j = 0; j < p->nbundles && rc == 0; j++) {
			const struct cat_bundle *b = &p->bundles[j];
			json_t *ri = json_object_get(b->obj, "relatedImages");
			json_t *e;

			if ((rc = image_pinned(b->image, p->name, b->name)) ==
			    0)
				rc = push_str(&v, &n, &cap, b->image);
			json_array_foreach(ri, k, e)
			{
				const char *img = al_json_str(e, "image");
				if (rc == 0)
					rc =
					    image_pinned(img, p->name, b->name);
				if (rc == 0)
					rc = push_str(&v, &n, &cap, img);
			}
		}
	}
	if (rc < 0) {
		al_catalog_images_free(v, n);
		return rc;
	}
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_str);
	for (i = 0, w = 0; i < n; i++) {
		if (w > 0 && strcmp(v[w - 1], v[i]) == 0) {
			free(v[i]);
			continue;
		}
		v[w++] = v[i];
	}
	*out = v;
	*nout = w;
	return 0;
}

/* ---- rendering -------------------------------------------------------- */

/* Where the rendered text goes, and the first error a sink returned. */
struct render {
	al_catalog_sink fn;
	void *ud;
	int rc;
};

/* The first failure sticks: jansson goes on after a failed write of an
 * object's key, and a later write that succeeds must not hide the hole. */
static int render_cb(const char *buf, size_t size, void *data)
{
	struct render *r = data;

	if (r->rc < 0 || (r->rc = r->fn(r->ud, buf, size)) < 0)
		return -1;
	return 0;
}

/* One object as declcfg.WriteJSON writes it: indented 4, then "\n". */
static int dump_obj(struct render *r, const json_t *o)
{
	if (json_dump_callback(o, render_cb, r,
	                       JSON_INDENT(4) | JSON_PRESERVE_ORDER) < 0 ||
	    r->rc < 0)
		return r->rc < 0 ? r->rc : al_error_oom();
	return r->fn(r->ud, "\n", 1);
}

/* A bundle with its spilled values back in place: a copy sharing every
 * other value with o (NULL: o has none). */
static int restored(struct cat_spool *sp, const json_t *o, json_t **out)
{
	json_t *props = json_object_get(o, "properties"), *np = NULL, *pr;
	size_t i;
	int rc = 0;

	*out = NULL;
	if (sp == NULL)
		return 0;
	json_array_foreach(props, i, pr)
	{
		json_t *v, *npr;

		if ((rc = cat_spool_restore(sp, json_object_get(pr, "value"),
		                            &v)) <= 0) {
			if (rc < 0)
				goto fail;
			continue;
		}
		if ((np == NULL && (np = al_json_copy(props)) == NULL) ||
		    (npr = al_json_copy(pr)) == NULL) {
			json_decref(v);
			goto nomem;
		}
		/* the _new calls take the reference even when they fail */
		if (json_object_set_new(npr, "value", v) < 0) {
			json_decref(npr);
			goto nomem;
		}
		if (json_array_set_new(np, i, npr) < 0)
			goto nomem;
	}
	if (np == NULL)
		return 0;
	if ((*out = al_json_copy((json_t *)o)) == NULL)
		goto nomem;
	if (json_object_set_new(*out, "properties", np) < 0) {
		np = NULL;
		goto nomem;
	}
	return 0;
nomem:
	rc = al_error_oom();
fail:
	json_decref(np);
	json_decref(*out);
	*out = NULL;
	return rc;
}

static int dump_bundle(struct render *r, struct cat_spool *sp, const json_t *o)
{
	json_t *full;
	int rc;

	if ((rc = restored(sp, o, &full)) < 0)
		return rc;
	rc = dump_obj(r, full != NULL ? full : o);
	json_decref(full);
	return rc;
}

int al_catalog_render_package_to(const al_catalog *c, size_t i,
                                 al_catalog_sink fn, void *ud)
{
	struct render r = {fn, ud, 0};
	const struct cat_package *p;
	json_t *o;
	size_t j;
	int rc;

	if (i >= c->npackages)
		return al_error_set(AL_EINVAL, "no package %zu", i);
	p = &c->packages[i];
	if ((rc = dump_obj(&r, p->obj)) < 0)
		return rc;
	for (j = 0; j < p->nchannels; j++) {
		if ((rc = dump_obj(&r, p->channels[j].obj)) < 0)
			return rc;
	}
	for (j = 0; j < p->nbundles; j++) {
		if ((rc = dump_bundle(&r, c->spool, p->bundles[j].obj)) < 0)
			return rc;
	}
	json_array_foreach(p->others, j, o)
	{
		if ((rc = dump_obj(&r, o)) < 0)
			return rc;
	}
	if (p->deprecations != NULL)
		return dump_obj(&r, p->deprecations);
	return 0;
}

int al_catalog_render_global_to(const al_catalog *c, al_catalog_sink fn,
                                void *ud)
{
	struct render r = {fn, ud, 0};
	json_t *o;
	size_t j;
	int rc;

	json_array_foreach(c->global, j, o)
	{
		if ((rc = dump_obj(&r, o)) < 0)
			return rc;
	}
	return json_array_size(c->global) > 0 ? 1 : 0;
}

static int buf_sink(void *ud, const char *p, size_t n)
{
	return al_buf_append(ud, p, n);
}

int al_catalog_render_package(const al_catalog *c, size_t i, al_buf *out)
{
	return al_catalog_render_package_to(c, i, buf_sink, out);
}

int al_catalog_render_global(const al_catalog *c, al_buf *out)
{
	return al_catalog_render_global_to(c, buf_sink, out);
}

/* Rendering into a new file through a 64 KiB buffer (jansson hands the
 * text over in small pieces). */
#define FILE_BUF (64 * 1024)

struct file_sink {
	al_tmpfile *t;
	al_buf b;
};

static int file_flush(struct file_sink *k)
{
	int rc = al_tmpfile_write(k->t, k->b.ptr, k->b.len);

	al_buf_reset(&k->b);
	return rc;
}

static int file_sink_fn(void *ud, const char *p, size_t n)
{
	struct file_sink *k = ud;
	int rc;

	if (k->b.len + n > FILE_BUF && (rc = file_flush(k)) < 0)
		return rc;
	if (n >= FILE_BUF)
		return al_tmpfile_write(k->t, p, n);
	return al_buf_append(&k->b, p, n);
}

/* DIR/name/catalog.json from package i (SIZE_MAX: the global objects),
 * rendered as a stream and committed atomically; nothing is written for
 * global objects when there are none. */
static int write_one(const al_catalog *c, size_t i, const char *dir,
                     const char *name)
{
	struct file_sink k = {NULL, AL_BUF_INIT(FILE_BUF)};
	char *sub = al_sprintf("%s/%s", dir, name);
	char *file = al_sprintf("%s/%s/catalog.json", dir, name);
	int rc;

	if (sub == NULL || file == NULL) {
		rc = al_error_oom();
		goto out;
	}
	if (i == SIZE_MAX && json_array_size(c->global) == 0) {
		rc = 0;
		goto out;
	}
	if ((rc = al_fs_mkdir_p(sub, 0755)) < 0 ||
	    (rc = al_tmpfile_new(&k.t, sub)) < 0)
		goto out;
	rc = i == SIZE_MAX
	         ? al_catalog_render_global_to(c, file_sink_fn, &k)
	         : al_catalog_render_package_to(c, i, file_sink_fn, &k);
	if (rc >= 0 && (rc = file_flush(&k)) == 0) {
		rc = al_tmpfile_commit(k.t, file); /* frees it */
		k.t = NULL;
	}
out:
	al_tmpfile_free(k.t);
	al_buf_free(&k.b);
	free(sub);
	free(file);
	return rc < 0 ? rc : 0;
}

int al_catalog_write_dir(const al_catalog *c, const char *dir)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < c->npackages && rc == 0; i++)
		rc = write_one(c, i, dir, c->packages[i].name);
	if (rc == 0)
		rc = write_one(c, SIZE_MAX, dir, AL_CATALOG_GLOBAL_NAME);
	return rc;
}
