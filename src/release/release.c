/* release.c: release payloads: release-manifests/ (and manifests/) from
 * verified image layers (read through layer.c), image-references,
 * release-metadata. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/log.h"
#include "airlock/release.h"
#include "release_int.h"
#include "layer_int.h"
#include "store_cache_int.h"

#define RELEASE_FILES_MAX 100000 /* files in release-manifests/ */
#define RELEASE_DIR "release-manifests/"
#define CVO_DIR "manifests/" /* the CVO's own manifests (pkg/payload) */
#define WH_PREFIX ".wh."
#define WH_OPAQUE ".wh..wh..opq"

struct rfile {
	char *name;
	uint8_t *data;
	size_t len;
};

/* A set of files: the release so far, or what one layer adds. */
struct fileset {
	struct rfile *v;
	size_t n, cap;
	uint64_t total;
};

struct al_release {
	struct fileset files;
	struct fileset cvo; /* manifests/ */
	char *refs_name;    /* image-references metadata.name, may be NULL */
	json_t *meta;       /* release-metadata, may be NULL */
	al_release_component *comps;
	size_t ncomps;
	char *comp_text; /* the components' names and images, one block */
	const char *version;
};

/* What one layer does to release-manifests/. */
struct layer {
	struct fileset add;
	char **wh; /* names whited out */
	size_t nwh, capwh;
	int clear; /* opaque directory, or the directory itself deleted */
};

static void rfile_free(struct rfile *f)
{
	free(f->name);
	free(f->data);
	memset(f, 0, sizeof(*f));
}

static void fileset_clear(struct fileset *fs)
{
	size_t i;

	for (i = 0; i < fs->n; i++)
		rfile_free(&fs->v[i]);
	free(fs->v);
	memset(fs, 0, sizeof(*fs));
}

static void fileset_drop_all(struct fileset *fs)
{
	size_t i;

	for (i = 0; i < fs->n; i++)
		rfile_free(&fs->v[i]);
	fs->n = 0;
	fs->total = 0;
}

static long fileset_find(const struct fileset *fs, const char *name)
{
	size_t i;

	for (i = 0; i < fs->n; i++) {
		if (strcmp(fs->v[i].name, name) == 0)
			return (long)i;
	}
	return -1;
}

static void fileset_remove(struct fileset *fs, const char *name)
{
	long i = fileset_find(fs, name);

	if (i < 0)
		return;
	fs->total -= fs->v[i].len;
	rfile_free(&fs->v[i]);
	memmove(&fs->v[i], &fs->v[i + 1],
	        (fs->n - (size_t)i - 1) * sizeof(fs->v[0]));
	fs->n--;
}

/* Add or replace; takes ownership of f's contents on success. */
static int fileset_put(struct fileset *fs, struct rfile *f)
{
	long i = fileset_find(fs, f->name);

	if (i >= 0) {
		fs->total -= fs->v[i].len;
		rfile_free(&fs->v[i]);
		fs->v[i] = *f;
	} else {
		if (fs->n >= RELEASE_FILES_MAX)
			return al_error_set(
			    AL_ELIMIT,
			    "more than %d files in release-manifests/",
			    RELEASE_FILES_MAX);
		if (fs->n == fs->cap) {
			size_t ncap = fs->cap ? fs->cap * 2 : 64;
			struct rfile *nv = realloc(fs->v, ncap * sizeof(*nv));

			if (nv == NULL)
				return al_error_oom();
			fs->v = nv;
			fs->cap = ncap;
		}
		fs->v[fs->n++] = *f;
	}
	fs->total += f->len;
	memset(f, 0, sizeof(*f));
	return 0;
}

static void layer_clear(struct layer *l)
{
	size_t i;

	fileset_clear(&l->add);
	for (i = 0; i < l->nwh; i++)
		free(l->wh[i]);
	free(l->wh);
	memset(l, 0, sizeof(*l));
}

static int layer_whiteout(struct layer *l, const char *name)
{
	if (l->nwh >= RELEASE_FILES_MAX)
		return al_error_set(AL_ELIMIT,
		                    "more than %d whiteouts in one layer",
		                    RELEASE_FILES_MAX);
	if (l->nwh == l->capwh) {
		size_t ncap = l->capwh ? l->capwh * 2 : 16;
		char **nv = realloc(l->wh, ncap * sizeof(*nv));

		if (nv == NULL)
			return al_error_oom();
		l->wh = nv;
		l->capwh = ncap;
	}
	l->wh[l->nwh] = al_strdup(name);
	if (l->wh[l->nwh] == NULL)
		return al_error_oom();
	l->nwh++;
	return 0;
}

void al_release_free(al_release *r)
{
	if (r == NULL)
		return;
	fileset_clear(&r->files);
	fileset_clear(&r->cvo);
	free(r->comps);
	free(r->comp_text);
	free(r->refs_name);
	json_decref(r->meta);
	free(r);
}

enum ekind { E_NONE, E_FILE, E_WHITEOUT, E_CLEAR };

/* What an archive path means for directory dir ("release-manifests/" or
 * "manifests/"); *name borrowed. */
static enum ekind classify(const char *path, const char *dir, const char **name)
{
	const char *rest;
	size_t dl = strlen(dir);

	if (strncmp(path, "./", 2) == 0)
		path += 2;
	else if (path[0] == '/')
		path += 1;
	if ((strncmp(path, WH_PREFIX, strlen(WH_PREFIX)) == 0 &&
	     strncmp(path + strlen(WH_PREFIX), dir, dl - 1) == 0 &&
	     path[strlen(WH_PREFIX) + dl - 1] == '\0') ||
	    strcmp(path, WH_OPAQUE) == 0)
		return E_CLEAR;
	if (strncmp(path, dir, dl) != 0)
		return E_NONE;
	rest = path + dl;
	if (rest[0] == '\0' || strchr(rest, '/') != NULL)
		return E_NONE;
	if (strcmp(rest, WH_OPAQUE) == 0)
		return E_CLEAR;
	if (strncmp(rest, WH_PREFIX, strlen(WH_PREFIX)) == 0) {
		*name = rest + strlen(WH_PREFIX);
		return (*name)[0] != '\0' ? E_WHITEOUT : E_NONE;
	}
	if (strcmp(rest, ".") == 0 || strcmp(rest, "..") == 0)
		return E_NONE;
	*name = rest;
	return E_FILE;
}

static int read_entry(al_layer *ly, const al_layer_entry *e, const char *name,
                      const char *ds, struct rfile *out)
{
	al_buf b = AL_BUF_INIT(AL_RELEASE_FILE_MAX);
	struct rfile f;
	int rc;

	memset(&f, 0, sizeof(f));
	rc = al_layer_read(ly, e, &b);
	if (rc == AL_ELIMIT) {
		rc = al_error_set(
		    AL_ELIMIT,
		    "release-manifests/%s in layer '%s' is larger than "
		    "%llu bytes",
		    name, ds, (unsigned long long)AL_RELEASE_FILE_MAX);
		goto out;
	}
	if (rc == 1) {
		rc = al_error_set(
		    AL_EPARSE, "layer '%s': reading release-manifests/%s: %s",
		    ds, name, al_layer_error(ly));
		goto out;
	}
	if (rc < 0)
		goto out;
	f.name = al_strdup(name);
	if (f.name == NULL) {
		rc = al_error_oom();
		goto out;
	}
	f.len = b.len;
	f.data = (uint8_t *)al_buf_detach(&b, NULL);
	if (f.data == NULL) {
		rc = al_error_oom();
		goto out;
	}
	*out = f;
	memset(&f, 0, sizeof(f));
out:
	rfile_free(&f);
	al_buf_free(&b);
	return rc;
}

/* The two directories one layer changes. */
struct scan {
	struct layer *rl; /* release-manifests/ */
	struct layer *cl; /* manifests/ */
};

/* One entry of a layer into sc->rl or sc->cl (an al_layer_fn). Returns our
 * own error, or 1 when libarchive failed (al_layer_walk decides between
 * EVERIFY and EPARSE once the digest is known). */
static int scan_entry(void *ud, al_layer *ly, const al_layer_entry *e)
{
	const struct scan *sc = ud;
	const char *ds = al_layer_name(ly), *name = NULL, *cname = NULL;
	struct layer *l = sc->rl, *cl = sc->cl;
	enum ekind k, kc;
	struct rfile f;
	int rc;

	k = classify(e->path, RELEASE_DIR, &name);
	kc = classify(e->path, CVO_DIR, &cname);
	if (kc == E_CLEAR) {
		/* manifests/ cleared (or everything, at the root) */
		cl->clear = 1;
	} else if (kc != E_NONE) {
		l = cl;
		k = kc;
		name = cname;
	}
	if (k == E_CLEAR) {
		/* Lower layers' files go; this layer's own stay. */
		l->clear = 1;
	} else if (k == E_WHITEOUT) {
		if ((rc = layer_whiteout(l, name)) < 0)
			return rc;
	} else if (k == E_FILE) {
		if (e->type != AL_LAYER_REG || e->hardlink) {
			al_log_debug("release: layer '%s': skipping "
			             "non-regular '%s'",
			             ds, e->path);
			return 0;
		}
		if ((rc = read_entry(ly, e, name, ds, &f)) < 0)
			return rc;
		if ((rc = fileset_put(&l->add, &f)) < 0) {
			rfile_free(&f);
			return rc;
		}
		if (l->add.total > AL_RELEASE_TOTAL_MAX)
			return al_error_set(
			    AL_ELIMIT,
			    "release-manifests/ is larger than %llu bytes",
			    (unsigned long long)AL_RELEASE_TOTAL_MAX);
	}
	return 0;
}

/* Read one verified layer (al_layer_walk) and apply it over r->files
 * and r->cvo. */
/*
 * The layers this process has read and found to hold nothing under
 * release-manifests/ or manifests/: the base layers, most of a release
 * image's bytes. A release opened again (a mirror opens one up to three
 * times: plan, sigstore step, images; a push twice) reads only the layers
 * that can matter. A digest names its content, so the answer never
 * changes; the blob must still be in the store (al_store_has_blob: blobs
 * are renamed into place only after their digest matched). Bounded: once
 * full, no more are remembered.
 */
#define BARE_LAYERS_MAX 1024
static pthread_mutex_t bare_lock = PTHREAD_MUTEX_INITIALIZER;
static al_digest bare_layers[BARE_LAYERS_MAX];
static size_t nbare_layers;

static int bare_known(al_store *s, const al_digest *d)
{
	size_t i;
	int found = 0;

	pthread_mutex_lock(&bare_lock);
	for (i = 0; i < nbare_layers && !found; i++)
		found = al_digest_equal(&bare_layers[i], d);
	pthread_mutex_unlock(&bare_lock);
	return found && al_store_has_blob(s, d, NULL) == 1;
}

static int layer_is_bare(const struct layer *l)
{
	return l->add.n == 0 && l->nwh == 0 && !l->clear;
}

static void bare_remember(const al_digest *d)
{
	pthread_mutex_lock(&bare_lock);
	if (nbare_layers < BARE_LAYERS_MAX)
		bare_layers[nbare_layers++] = *d;
	pthread_mutex_unlock(&bare_lock);
}

/* Apply layer d over r; *bare (may be NULL) tells whether it holds
 * nothing under either directory. */
static int apply_layer(al_release *r, al_store *s, const al_descriptor *d,
                       uint8_t *bare)
{
	struct layer l, lc;
	struct scan sc;
	size_t i;
	int rc;

	if (bare != NULL)
		*bare = 1;
	if (bare_known(s, &d->digest))
		return 0;
	memset(&l, 0, sizeof(l));
	memset(&lc, 0, sizeof(lc));
	sc.rl = &l;
	sc.cl = &lc;
	if ((rc = al_layer_walk(s, d, scan_entry, &sc)) < 0)
		goto out;
	if (layer_is_bare(&l) && layer_is_bare(&lc)) {
		bare_remember(&d->digest);
		goto out;
	}
	if (bare != NULL)
		*bare = 0;
	if (l.clear)
		fileset_drop_all(&r->files);
	for (i = 0; i < l.nwh; i++)
		fileset_remove(&r->files, l.wh[i]);
	for (i = 0; i < l.add.n; i++) {
		if ((rc = fileset_put(&r->files, &l.add.v[i])) < 0)
			goto out;
	}
	if (r->files.total > AL_RELEASE_TOTAL_MAX)
		rc = al_error_set(
		    AL_ELIMIT, "release-manifests/ is larger than %llu bytes",
		    (unsigned long long)AL_RELEASE_TOTAL_MAX);
	if (rc == 0 && lc.clear)
		fileset_drop_all(&r->cvo);
	for (i = 0; rc == 0 && i < lc.nwh; i++)
		fileset_remove(&r->cvo, lc.wh[i]);
	for (i = 0; rc == 0 && i < lc.add.n; i++)
		rc = fileset_put(&r->cvo, &lc.add.v[i]);
	if (rc == 0 && r->cvo.total > AL_RELEASE_TOTAL_MAX)
		rc = al_error_set(AL_ELIMIT,
		                  "manifests/ is larger than %llu bytes",
		                  (unsigned long long)AL_RELEASE_TOTAL_MAX);
out:
	layer_clear(&l);
	layer_clear(&lc);
	return rc;
}

static int cmp_files(const void *a, const void *b)
{
	return strcmp(((const struct rfile *)a)->name,
	              ((const struct rfile *)b)->name);
}

static int parse_json_file(json_t **out, const struct rfile *f)
{
	json_error_t jerr;
	json_t *v;

	v = json_loadb((const char *)f->data, f->len, JSON_REJECT_DUPLICATES,
	               &jerr);
	if (v == NULL)
		return al_error_set(
		    AL_EPARSE, "release-manifests/%s: line %d, column %d: %s",
		    f->name, jerr.line, jerr.column, jerr.text);
	if (!json_is_object(v)) {
		json_decref(v);
		return al_error_set(AL_EPARSE,
		                    "release-manifests/%s: not a JSON object",
		                    f->name);
	}
	*out = v;
	return 0;
}

static const char *str_member(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

static int cmp_comp_name(const void *a, const void *b)
{
	const al_release_component *const *x = a, *const *y = b;

	return strcmp((*x)->name, (*y)->name);
}

/* A tag named twice: sorted, in O(n log n) (a release of a catalog's
 * size has tens of thousands). */
static int refuse_duplicate_tags(const al_release *r)
{
	const al_release_component **v;
	size_t i;
	int rc = 0;

	if (r->ncomps < 2)
		return 0;
	if ((v = malloc(r->ncomps * sizeof(*v))) == NULL)
		return al_error_oom();
	for (i = 0; i < r->ncomps; i++)
		v[i] = &r->comps[i];
	qsort(v, r->ncomps, sizeof(*v), cmp_comp_name);
	for (i = 1; i < r->ncomps && rc == 0; i++)
		if (strcmp(v[i - 1]->name, v[i]->name) == 0)
			rc = al_error_set(AL_EPARSE,
			                  "release-manifests/image-references: "
			                  "tag '%s' appears twice",
			                  v[i]->name);
	free(v);
	return rc;
}

/*
 * The components copied out of the parsed tree into one block, so that
 * the tree (several times the file's size) is freed at once rather than
 * kept for the release's life.
 */
static int own_components(al_release *r)
{
	size_t i, total = 0, n;
	char *p;

	for (i = 0; i < r->ncomps; i++)
		total +=
		    strlen(r->comps[i].name) + strlen(r->comps[i].image) + 2;
	if ((r->comp_text = malloc(total + 1)) == NULL)
		return al_error_oom();
	p = r->comp_text;
	for (i = 0; i < r->ncomps; i++) {
		n = strlen(r->comps[i].name) + 1;
		memcpy(p, r->comps[i].name, n);
		r->comps[i].name = p;
		p += n;
		n = strlen(r->comps[i].image) + 1;
		memcpy(p, r->comps[i].image, n);
		r->comps[i].image = p;
		p += n;
	}
	return 0;
}

static int parse_image_references(al_release *r, const struct rfile *f)
{
	json_t *root = NULL, *spec, *tags, *tag, *from;
	const char *kind, *mname;
	size_t i;
	int rc;

	if ((rc = parse_json_file(&root, f)) < 0)
		return rc;
	kind = str_member(root, "kind");
	if (kind == NULL || strcmp(kind, "ImageStream") != 0) {
		rc = al_error_set(AL_EPARSE,
		                  "release-manifests/image-references: kind is "
		                  "not \"ImageStream\"");
		goto out;
	}
	spec = json_object_get(root, "spec");
	tags = json_object_get(spec, "tags");
	if (!json_is_object(spec) || !json_is_array(tags)) {
		rc = al_error_set(
		    AL_EPARSE,
		    "release-manifests/image-references: no spec.tags array");
		goto out;
	}
	r->comps = calloc(json_array_size(tags) + 1, sizeof(*r->comps));
	if (r->comps == NULL) {
		rc = al_error_oom();
		goto out;
	}
	json_array_foreach(tags, i, tag)
	{
		const char *name = str_member(tag, "name"), *fk, *fn;

		if (!json_is_object(tag) || name == NULL || name[0] == '\0') {
			rc = al_error_set(AL_EPARSE,
			                  "release-manifests/image-references: "
			                  "spec.tags[%zu] has no name",
			                  i);
			goto out;
		}
		from = json_object_get(tag, "from");
		fk = str_member(from, "kind");
		fn = str_member(from, "name");
		if (!json_is_object(from) || fk == NULL) {
			rc = al_error_set(AL_EPARSE,
			                  "release-manifests/image-references: "
			                  "tag '%s' has no from.kind",
			                  name);
			goto out;
		}
		if (strcmp(fk, "DockerImage") != 0)
			continue;
		if (fn == NULL || fn[0] == '\0') {
			rc = al_error_set(AL_EPARSE,
			                  "release-manifests/image-references: "
			                  "tag '%s' has no from.name",
			                  name);
			goto out;
		}
		r->comps[r->ncomps].name = name;
		r->comps[r->ncomps].image = fn;
		r->ncomps++;
	}
	if ((rc = refuse_duplicate_tags(r)) < 0 || (rc = own_components(r)) < 0)
		goto out;
	mname = str_member(json_object_get(root, "metadata"), "name");
	if (mname != NULL && (r->refs_name = al_strdup(mname)) == NULL)
		rc = al_error_oom();
out:
	if (rc < 0)
		r->ncomps = 0; /* they pointed into root */
	json_decref(root);
	return rc;
}

static int parse_release_metadata(al_release *r, const struct rfile *f)
{
	json_t *root = NULL, *prev, *md, *e;
	const char *kind, *version;
	size_t i;
	int rc;

	if ((rc = parse_json_file(&root, f)) < 0)
		return rc;
	kind = str_member(root, "kind");
	version = str_member(root, "version");
	prev = json_object_get(root, "previous");
	md = json_object_get(root, "metadata");
	if (kind == NULL || strcmp(kind, "cincinnati-metadata-v0") != 0) {
		rc = al_error_set(AL_EPARSE,
		                  "release-manifests/release-metadata: kind is "
		                  "not \"cincinnati-metadata-v0\"");
		goto out;
	}
	if (version == NULL || version[0] == '\0') {
		rc = al_error_set(
		    AL_EPARSE,
		    "release-manifests/release-metadata: no version");
		goto out;
	}
	if (prev != NULL) {
		if (!json_is_array(prev)) {
			rc = al_error_set(AL_EPARSE,
			                  "release-manifests/release-metadata: "
			                  "'previous' is not an array");
			goto out;
		}
		json_array_foreach(prev, i, e)
		{
			if (!json_is_string(e)) {
				rc = al_error_set(
				    AL_EPARSE,
				    "release-manifests/release-metadata: "
				    "previous[%zu] is not a string",
				    i);
				goto out;
			}
		}
	}
	if (md != NULL && !json_is_object(md)) {
		rc = al_error_set(AL_EPARSE,
		                  "release-manifests/release-metadata: "
		                  "'metadata' is not an object");
		goto out;
	}
	r->meta = root;
	root = NULL;
out:
	json_decref(root);
	return rc;
}

/*
 * The release cache (docs/store.md "The cache"): which layers of a
 * release image hold its payload, and the payload's digest, so that a
 * later process reads only those layers instead of the whole image (the
 * base layers are most of its bytes). The entry is advice: it must name
 * the image's layers in order, the layers it calls bare must be in the
 * store, and what the other layers give must hash to its payload digest;
 * otherwise every layer is read as without it.
 */
#define CACHE_KIND "release"
#define CACHE_VERSION 1

static int hash_set(al_hasher *h, char tag, const struct fileset *fs)
{
	uint8_t n[8];
	size_t i, k;
	int rc;

	if ((rc = al_hasher_update(h, &tag, 1)) < 0)
		return rc;
	for (i = 0; i < fs->n; i++) {
		const struct rfile *f = &fs->v[i];

		for (k = 0; k < 8; k++)
			n[k] = (uint8_t)((uint64_t)f->len >> (8 * k));
		if ((rc = al_hasher_update(h, f->name, strlen(f->name) + 1)) <
		        0 ||
		    (rc = al_hasher_update(h, n, sizeof(n))) < 0 ||
		    (rc = al_hasher_update(h, f->data, f->len)) < 0)
			return rc;
	}
	return 0;
}

/* The digest of r's sorted files: release-manifests/ then manifests/,
 * each file's name (NUL-ended), length (8 bytes) and bytes. */
static int payload_digest(const al_release *r, al_digest *out)
{
	al_hasher *h = NULL;
	int rc;

	if ((rc = al_hasher_new(&h, AL_DIGEST_SHA256)) < 0)
		return rc;
	if ((rc = hash_set(h, 'R', &r->files)) == 0 &&
	    (rc = hash_set(h, 'C', &r->cvo)) == 0)
		rc = al_hasher_final(h, out);
	al_hasher_free(h);
	return rc;
}

/* The entry for (manifest, platform) checked against m: 1 and read[i]
 * (1: the payload is in layer i) and *payload when it fits, 0 when there
 * is none or it does not fit (a debug line says why), AL_ENOMEM. */
static int cache_load(al_store *s, const al_digest *manifest,
                      const char *platform, const al_manifest *m, uint8_t *read,
                      al_digest *payload)
{
	al_buf b = AL_BUF_INIT(AL_STORE_CACHE_MAX);
	char ds[AL_DIGEST_STRMAX];
	const char *why = NULL, *v;
	json_t *root = NULL, *layers, *e;
	json_error_t jerr;
	al_digest d;
	size_t i;
	int rc;

	if ((rc = al_store__cache_get(s, CACHE_KIND, manifest, platform, &b)) <=
	    0)
		goto out;
	rc = 0;
	root = json_loadb((const char *)b.ptr, b.len, JSON_REJECT_DUPLICATES,
	                  &jerr);
	layers = json_object_get(root, "layers");
	if (!json_is_object(root) ||
	    json_integer_value(json_object_get(root, "airlockReleaseCache")) !=
	        CACHE_VERSION) {
		why = "not a release cache entry of this version";
		goto out;
	}
	if ((v = str_member(root, "release")) == NULL ||
	    strcmp(v, al_digest_str(manifest, ds)) != 0 ||
	    (v = str_member(root, "platform")) == NULL ||
	    strcmp(v, platform) != 0) {
		why = "another release or platform";
		goto out;
	}
	if ((v = str_member(root, "payload")) == NULL ||
	    al_digest_parse_str(payload, v) < 0) {
		al_error_clear();
		why = "no payload digest";
		goto out;
	}
	if (!json_is_array(layers) || json_array_size(layers) != m->nlayers) {
		why = "not the image's layers";
		goto out;
	}
	json_array_foreach(layers, i, e)
	{
		json_t *p = json_object_get(e, "payload");

		v = str_member(e, "digest");
		if (v == NULL || al_digest_parse_str(&d, v) < 0 ||
		    !al_digest_equal(&d, &m->layers[i].digest) ||
		    !json_is_boolean(p)) {
			al_error_clear();
			why = "not the image's layers";
			goto out;
		}
		read[i] = json_is_true(p) ? 1 : 0;
		/* A bare layer is skipped only while it is in the store, as
		 * reading it would demand. */
		if (!read[i] && al_store_has_blob(s, &d, NULL) != 1) {
			al_error_clear();
			why = "a layer is missing from the store";
			goto out;
		}
	}
	rc = 1;
out:
	if (why != NULL)
		al_log_debug("release: cache entry for '%s' not used: %s",
		             al_digest_str(manifest, ds), why);
	json_decref(root);
	al_buf_free(&b);
	return rc;
}

/* Record which of m's layers held the payload (bare[i] 0) and its
 * digest; advice, so a failure is only logged. Read-only stores keep
 * nothing (al_store__cache_put). */
static void cache_save(al_store *s, const al_digest *manifest,
                       const char *platform, const al_manifest *m,
                       const uint8_t *bare, const al_digest *payload)
{
	char ds[AL_DIGEST_STRMAX];
	json_t *root = NULL, *layers;
	char *text = NULL;
	size_t i;
	int ok;

	if (!al_store__writable(s))
		return;
	root = json_object();
	layers = json_array();
	ok =
	    root != NULL && layers != NULL &&
	    json_object_set_new(root, "airlockReleaseCache",
	                        json_integer(CACHE_VERSION)) == 0 &&
	    json_object_set_new(root, "release",
	                        json_string(al_digest_str(manifest, ds))) ==
	        0 &&
	    json_object_set_new(root, "platform", json_string(platform)) == 0 &&
	    json_object_set_new(root, "payload",
	                        json_string(al_digest_str(payload, ds))) == 0;
	for (i = 0; ok && i < m->nlayers; i++)
		ok = json_array_append_new(
		         layers,
		         json_pack("{s:s, s:b}", "digest",
		                   al_digest_str(&m->layers[i].digest, ds),
		                   "payload", !bare[i])) == 0;
	if (ok) {
		ok = json_object_set_new(root, "layers", layers) == 0;
		layers = NULL;
	}
	if (ok)
		ok = (text = json_dumps(root, JSON_COMPACT)) != NULL;
	if (ok &&
	    al_store__cache_put(s, CACHE_KIND, manifest, platform,
	                        (const uint8_t *)text, strlen(text)) < 0) {
		al_log_debug("release: cache entry for '%s' not written: %s",
		             al_digest_str(manifest, ds), al_error_message());
		al_error_clear();
	}
	free(text);
	json_decref(layers);
	json_decref(root);
}

static void release_sort(al_release *r)
{
	if (r->files.n > 1)
		qsort(r->files.v, r->files.n, sizeof(r->files.v[0]), cmp_files);
	if (r->cvo.n > 1)
		qsort(r->cvo.v, r->cvo.n, sizeof(r->cvo.v[0]), cmp_files);
}

/* r's files from the layers the cache entry names: 1 when they give
 * its payload, 0 when not (r emptied: read every layer), AL_ENOMEM. */
static int read_cached(al_release *r, al_store *s, const al_digest *manifest,
                       const char *platform, const al_manifest *m,
                       uint8_t *read)
{
	char ds[AL_DIGEST_STRMAX];
	al_digest want, got;
	size_t i;
	int rc;

	if ((rc = cache_load(s, manifest, platform, m, read, &want)) <= 0)
		return rc;
	rc = 0;
	for (i = 0; rc == 0 && i < m->nlayers; i++)
		if (read[i])
			rc = apply_layer(r, s, &m->layers[i], NULL);
	if (rc == 0) {
		release_sort(r);
		rc = payload_digest(r, &got);
	}
	if (rc == AL_ENOMEM)
		return rc;
	if (rc == 0 && al_digest_equal(&got, &want))
		return 1;
	al_log_debug("release: cache entry for '%s' not used: %s",
	             al_digest_str(manifest, ds),
	             rc < 0 ? al_error_message()
	                    : "its layers do not give its payload");
	al_error_clear();
	fileset_clear(&r->files);
	fileset_clear(&r->cvo);
	return 0;
}

int al_release_open(al_release **out, al_store *s, const al_digest *manifest,
                    const char *platform)
{
	al_release *r = NULL;
	al_manifest m;
	const struct rfile *refs = NULL, *meta = NULL;
	uint8_t *flags = NULL;
	al_digest payload;
	size_t i;
	int rc, cached;

	memset(&m, 0, sizeof(m));
	if (platform == NULL)
		platform = "linux/amd64";
	if ((rc = al_store_image_manifest(s, manifest, platform, "release",
	                                  &m)) < 0)
		return rc;
	r = calloc(1, sizeof(*r));
	flags = calloc(m.nlayers + 1, 1);
	if (r == NULL || flags == NULL) {
		rc = al_error_oom();
		goto out;
	}
	if ((cached = read_cached(r, s, manifest, platform, &m, flags)) < 0) {
		rc = cached;
		goto out;
	}
	/* Without a fitting entry, every layer; flags[i] then says which
	 * were bare, for the entry written below. */
	for (i = 0; !cached && i < m.nlayers; i++) {
		if ((rc = apply_layer(r, s, &m.layers[i], &flags[i])) < 0)
			goto out;
	}
	if (!cached) {
		release_sort(r);
		if ((rc = payload_digest(r, &payload)) < 0)
			goto out;
	}
	for (i = 0; i < r->files.n; i++) {
		if (strcmp(r->files.v[i].name, "image-references") == 0)
			refs = &r->files.v[i];
		else if (strcmp(r->files.v[i].name, "release-metadata") == 0)
			meta = &r->files.v[i];
	}
	if (refs == NULL) {
		rc = al_error_set(
		    AL_EPARSE,
		    "release image has no release-manifests/image-references");
		goto out;
	}
	if ((rc = parse_image_references(r, refs)) < 0)
		goto out;
	if (meta != NULL && (rc = parse_release_metadata(r, meta)) < 0)
		goto out;
	if (r->meta != NULL)
		r->version = str_member(r->meta, "version");
	else
		r->version = r->refs_name;
	if (r->version == NULL || r->version[0] == '\0') {
		rc = al_error_set(
		    AL_EPARSE,
		    "release has no version: neither release-metadata nor "
		    "image-references metadata.name");
		goto out;
	}
	if (!cached)
		cache_save(s, manifest, platform, &m, flags, &payload);
	*out = r;
	r = NULL;
out:
	free(flags);
	al_manifest_clear(&m);
	al_release_free(r);
	return rc;
}

const char *al_release_version(const al_release *r)
{
	return r->version;
}

const json_t *al_release_metadata(const al_release *r)
{
	return r->meta;
}

size_t al_release_component_count(const al_release *r)
{
	return r->ncomps;
}

const al_release_component *al_release_component_at(const al_release *r,
                                                    size_t i)
{
	return i < r->ncomps ? &r->comps[i] : NULL;
}

size_t al_release_file_count(const al_release *r)
{
	return r->files.n;
}

const char *al_release_file_name(const al_release *r, size_t i)
{
	return i < r->files.n ? r->files.v[i].name : NULL;
}

const uint8_t *al_release_file_data(const al_release *r, size_t i, size_t *len)
{
	if (i >= r->files.n)
		return NULL;
	if (len != NULL)
		*len = r->files.v[i].len;
	return r->files.v[i].data;
}

size_t al_release_cvo_file_count(const al_release *r)
{
	return r->cvo.n;
}

const char *al_release_cvo_file_name(const al_release *r, size_t i)
{
	return i < r->cvo.n ? r->cvo.v[i].name : NULL;
}

const uint8_t *al_release_cvo_file_data(const al_release *r, size_t i,
                                        size_t *len)
{
	if (i >= r->cvo.n)
		return NULL;
	if (len != NULL)
		*len = r->cvo.v[i].len;
	return r->cvo.v[i].data;
}

int al_release_extract(const al_release *r, const char *dir)
{
	size_t i;
	int rc;

	if ((rc = al_fs_mkdir_p(dir, 0755)) < 0)
		return rc;
	for (i = 0; i < r->files.n; i++) {
		char *p = al_path_join(dir, r->files.v[i].name);

		if (p == NULL)
			return al_error_oom();
		rc = al_fs_write_atomic(p, r->files.v[i].data,
		                        r->files.v[i].len);
		free(p);
		if (rc < 0)
			return rc;
	}
	return 0;
}
