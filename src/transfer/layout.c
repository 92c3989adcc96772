/* layout.c: oc-mirror v2's registry layout (releases and components under
 * openshift/release-images and openshift/release) or the source paths, and
 * the categories and scopes of mirror sets (oc-mirror v2
 * internal/pkg/release/local_stored_collector.go and
 * internal/pkg/clusterresources/clusterresources.go; docs/push.md). */
#include <stdlib.h>
#include <string.h>

#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/layout.h"
#include "airlock/ref.h"
#include "airlock/release.h"
#include "airlock/store.h"
#include "array_int.h"

typedef struct entry {
	char *name; /* the store image name */
	al_layout_category cat;
	char *repo; /* NULL: the source path */
	char *tag;
	size_t order; /* insertion order: the first record wins */
} entry;

struct al_layout {
	al_layout_kind kind;
	entry *e;
	size_t n, cap;
};

int al_layout_parse(const char *s, al_layout_kind *out)
{
	if (s != NULL && strcmp(s, "oc-mirror") == 0) {
		*out = AL_LAYOUT_OC_MIRROR;
		return 0;
	}
	if (s != NULL && strcmp(s, "source") == 0) {
		*out = AL_LAYOUT_SOURCE;
		return 0;
	}
	return al_error_set(AL_EINVAL,
	                    "layout '%s' is neither 'oc-mirror' nor 'source'",
	                    s != NULL ? s : "");
}

const char *al_layout_name(al_layout_kind kind)
{
	return kind == AL_LAYOUT_SOURCE ? "source" : "oc-mirror";
}

const char *al_layout_category_name(al_layout_category c)
{
	switch (c) {
	case AL_LAYOUT_RELEASE:
		return "release";
	case AL_LAYOUT_OPERATOR:
	case AL_LAYOUT_CATALOG:
		return "operator";
	case AL_LAYOUT_GENERIC:
		break;
	}
	return "generic";
}

int al_layout_release_tag(const char *release, char **out)
{
	al_ref r = {0};
	const char *colon;
	char *t;
	int rc;

	if ((rc = al_ref_parse(&r, release)) < 0)
		return rc;
	if (r.tag != NULL)
		t = al_strdup(r.tag);
	else if (r.digest != NULL && (colon = strchr(r.digest, ':')) != NULL)
		/* oc-mirror's ImageSpec.Digest is the hex alone */
		t = al_strdup(colon + 1);
	else
		t = al_strdup("latest");
	al_ref_clear(&r);
	if (t == NULL)
		return al_error_oom();
	*out = t;
	return 0;
}

/* "HOST/NS/REPO" -> "HOST/NS"; "HOST/REPO" -> "HOST" (namespaceScope). */
static char *namespace_of(const char *name)
{
	const char *slash = strrchr(name, '/');

	return al_strndup(name, (size_t)(slash - name));
}

int al_layout_scope(const char *src, const char *dst, int force_repository,
                    char **src_scope, char **dst_scope)
{
	const char *sp, *dp;
	char *a, *b;
	size_t ls, ld;

	if (src == NULL || dst == NULL || (sp = strchr(src, '/')) == NULL ||
	    (dp = strchr(dst, '/')) == NULL)
		return al_error_set(
		    AL_EINVAL, "mirror scope: '%s' or '%s' is not HOST/PATH",
		    src != NULL ? src : "", dst != NULL ? dst : "");
	/* PathComponent: the path after the registry host */
	sp++;
	dp++;
	ls = strlen(sp);
	ld = strlen(dp);
	if (!force_repository && ld >= ls && strcmp(dp + ld - ls, sp) == 0) {
		a = namespace_of(src);
		b = namespace_of(dst);
	} else {
		a = al_strdup(src);
		b = al_strdup(dst);
	}
	if (a == NULL || b == NULL) {
		free(a);
		free(b);
		return al_error_oom();
	}
	*src_scope = a;
	*dst_scope = b;
	return 0;
}

static int add(al_layout *l, const char *name, al_layout_category cat,
               const char *repo, const char *tag)
{
	entry *e;

	if (l->n == l->cap) {
		entry *ne =
		    al__array_grow(l->e, &l->cap, l->n + 1, sizeof(*ne));

		if (ne == NULL)
			return al_error_oom();
		l->e = ne;
	}
	e = &l->e[l->n];
	memset(e, 0, sizeof(*e));
	e->name = al_strdup(name);
	e->repo = repo != NULL ? al_strdup(repo) : NULL;
	e->tag = tag != NULL ? al_strdup(tag) : NULL;
	e->cat = cat;
	e->order = l->n;
	l->n++;
	if (e->name == NULL || (repo != NULL && e->repo == NULL) ||
	    (tag != NULL && e->tag == NULL))
		return al_error_oom();
	return 0;
}

static int cmp_entry(const void *a, const void *b)
{
	const entry *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c != 0)
		return c;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* The release named release and, with r, its components (prepareTag:
 * <release tag>-<component name>), appended unsorted. */
static int put_release(al_layout *l, const char *release, const al_release *r)
{
	char *rtag = NULL, *ctag = NULL, *cached = NULL;
	al_ref ref = {0};
	size_t i, n;
	int rc;

	if ((rc = al_layout_release_tag(release, &rtag)) < 0)
		return rc;
	/* a release imported from oc-mirror's archives sits where its cache
	 * put it, HOST/openshift/release-images:<tag>, and its components
	 * at HOST/openshift/release:<tag>-<name> (pack_ocmirror.c): those
	 * names are its components too */
	if (al_ref_parse(&ref, release) == 0 && ref.registry != NULL &&
	    ref.repository != NULL &&
	    strcmp(ref.repository, AL_LAYOUT_RELEASE_REPO) == 0 &&
	    (cached = al_strdup(ref.registry)) == NULL) {
		al_ref_clear(&ref);
		free(rtag);
		return al_error_oom();
	}
	al_ref_clear(&ref);
	al_error_clear();
	if ((rc = add(l, release, AL_LAYOUT_RELEASE, AL_LAYOUT_RELEASE_REPO,
	              rtag)) < 0)
		goto out;
	n = r != NULL ? al_release_component_count(r) : 0;
	for (i = 0; i < n; i++) {
		const al_release_component *c = al_release_component_at(r, i);

		if ((ctag = al_sprintf("%s-%s", rtag, c->name)) == NULL) {
			rc = al_error_oom();
			goto out;
		}
		if ((rc = add(l, c->image, AL_LAYOUT_RELEASE,
		              AL_LAYOUT_COMPONENT_REPO, ctag)) < 0)
			goto out;
		if (cached != NULL) {
			char *cn = al_sprintf("%s/%s:%s", cached,
			                      AL_LAYOUT_COMPONENT_REPO, ctag);

			rc = cn != NULL ? add(l, cn, AL_LAYOUT_RELEASE,
			                      AL_LAYOUT_COMPONENT_REPO, ctag)
			                : al_error_oom();
			free(cn);
			if (rc < 0)
				goto out;
		}
		free(ctag);
		ctag = NULL;
	}
out:
	free(rtag);
	free(ctag);
	free(cached);
	return rc;
}

/* 1 when e repeats a place kept[0..n) already gives its name. */
static int same_place(const entry *kept, size_t n, const entry *e)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(kept[i].repo, e->repo) == 0 &&
		    strcmp(kept[i].tag, e->tag) == 0)
			return 1;
	return 0;
}

/* Sort by name, then by the order the records came in (releases before
 * catalogs, in the order they were added). A name's first record gives
 * its category; a name placed by its first record keeps every further
 * distinct place (a component that two releases reference, or one
 * release under two component names: prepareM2DCopyBatch makes a copy
 * per release and name, compareByOriginSourceDest keeps each
 * destination), a record that places nothing adds nothing to it. */
static void settle(al_layout *l)
{
	size_t i, k, first = 0;

	if (l->n == 0)
		return;
	qsort(l->e, l->n, sizeof(*l->e), cmp_entry);
	for (i = 1, k = 1; i < l->n; i++) {
		entry *e = &l->e[i];

		if (strcmp(e->name, l->e[k - 1].name) != 0) {
			first = k;
			l->e[k++] = *e;
			continue;
		}
		if (l->e[first].repo != NULL && e->repo != NULL &&
		    !same_place(&l->e[first], k - first, e)) {
			e->cat = l->e[first].cat;
			l->e[k++] = *e;
			continue;
		}
		free(e->name);
		free(e->repo);
		free(e->tag);
	}
	l->n = k;
	/* the order of a later addition follows every earlier one */
	for (i = 0; i < l->n; i++)
		l->e[i].order = i;
}

/*
 * A release whose record names its source, not a store name: an
 * oc-mirror archive's release, stored under the cache's name
 * (HOST/openshift/release-images:<tag>) with its source as origin
 * (pack_ocmirror.c). Each store name of that manifest whose origin is
 * the source is placed as the release, with its components; the source
 * too (push and the UpdateService look the record's source up). None:
 * the release image is not in this store (a partial import), its
 * components stay where their names put them.
 */
static int add_release_by_origin(al_layout *l, al_store *s,
                                 const al_store_release *rel)
{
	al_store_image *imgs = NULL;
	al_release *r = NULL;
	size_t n = 0, i, found = 0;
	int rc;

	if ((rc = al_store_list(s, &imgs, &n)) < 0)
		return rc;
	for (i = 0; i < n && rc == 0; i++) {
		char *origin = NULL;
		int same;

		if (imgs[i].name[0] == '\0' ||
		    !al_digest_equal(&imgs[i].desc.digest, &rel->digest) ||
		    al_store_origin(s, imgs[i].name, &origin) != 1) {
			al_error_clear();
			continue;
		}
		same = strcmp(origin, rel->source) == 0;
		free(origin);
		if (!same)
			continue;
		if (found++ == 0 && (rc = al_release_open(&r, s, &rel->digest,
		                                          rel->platform)) < 0) {
			if (rc != AL_ENOTFOUND)
				break;
			al_error_clear();
			rc = 0;
		}
		rc = put_release(l, imgs[i].name, r);
	}
	if (rc == 0)
		rc = put_release(l, rel->source, r);
	al_release_free(r);
	al_store_images_free(imgs, n);
	return rc;
}

/* One release record: the release and its components. */
static int add_release(al_layout *l, al_store *s, const al_store_release *rel)
{
	al_release *r = NULL;
	al_store_image img;
	int rc;

	memset(&img, 0, sizeof(img));
	if (rel->source == NULL || !rel->has_digest)
		return 0; /* nothing names it in the store */
	if ((rc = al_store_find(s, rel->source, &img)) == AL_ENOTFOUND) {
		al_error_clear();
		return add_release_by_origin(l, s, rel);
	}
	if (rc < 0)
		goto out;
	if ((rc = al_release_open(&r, s, &rel->digest, rel->platform)) < 0) {
		if (rc != AL_ENOTFOUND)
			goto out;
		al_error_clear();
	}
	rc = put_release(l, rel->source, r);
out:
	al_store_image_clear(&img);
	al_release_free(r);
	return rc;
}

int al_layout_new(al_layout **out, al_layout_kind kind)
{
	al_layout *l = calloc(1, sizeof(*l));

	if (l == NULL)
		return al_error_oom();
	l->kind = kind;
	*out = l;
	return 0;
}

int al_layout_add_release(al_layout *l, const char *release,
                          const al_release *r)
{
	size_t before;
	int rc;

	if (l == NULL || release == NULL)
		return al_error_set(AL_EINVAL, "layout: no release");
	before = l->n;
	if ((rc = put_release(l, release, r)) < 0) {
		/* what this call added goes: the layout stays as it was */
		while (l->n > before) {
			l->n--;
			free(l->e[l->n].name);
			free(l->e[l->n].repo);
			free(l->e[l->n].tag);
		}
		return rc;
	}
	settle(l);
	return 0;
}

int al_layout_open(al_layout **out, al_store *s, al_layout_kind kind)
{
	al_layout *l = NULL;
	al_store_release *rels = NULL;
	al_store_catalog *cats = NULL;
	size_t nrels = 0, ncats = 0, i, j;
	int rc;

	if ((rc = al_layout_new(&l, kind)) < 0)
		return rc;
	if ((rc = al_store_releases_list(s, &rels, &nrels)) < 0 ||
	    (rc = al_store_catalogs_list(s, &cats, &ncats)) < 0)
		goto out;
	for (i = 0; i < nrels; i++)
		if ((rc = add_release(l, s, &rels[i])) < 0)
			goto out;
	for (i = 0; i < ncats; i++) {
		if ((cats[i].name != NULL &&
		     (rc = add(l, cats[i].name, AL_LAYOUT_CATALOG, NULL,
		               NULL)) < 0) ||
		    (cats[i].source_name != NULL &&
		     (rc = add(l, cats[i].source_name, AL_LAYOUT_CATALOG, NULL,
		               NULL)) < 0))
			goto out;
		for (j = 0; j < cats[i].nimages; j++)
			if ((rc = add(l, cats[i].images[j], AL_LAYOUT_OPERATOR,
			              NULL, NULL)) < 0)
				goto out;
	}
	settle(l);
	*out = l;
	l = NULL;
out:
	al_store_releases_free(rels, nrels);
	al_store_catalogs_free(cats, ncats);
	al_layout_free(l);
	return rc;
}

void al_layout_free(al_layout *l)
{
	size_t i;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++) {
		free(l->e[i].name);
		free(l->e[i].repo);
		free(l->e[i].tag);
	}
	free(l->e);
	free(l);
}

al_layout_kind al_layout_kind_of(const al_layout *l)
{
	return l != NULL ? l->kind : AL_LAYOUT_SOURCE;
}

/* The first entry of name (its places follow it), or NULL. */
static const entry *lookup(const al_layout *l, const char *name)
{
	size_t lo = 0, hi, mid;

	if (l == NULL || name == NULL)
		return NULL;
	hi = l->n;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (strcmp(l->e[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < l->n && strcmp(l->e[lo].name, name) == 0 ? &l->e[lo] : NULL;
}

al_layout_category al_layout_category_of(const al_layout *l, const char *name)
{
	const entry *e = lookup(l, name);

	return e != NULL ? e->cat : AL_LAYOUT_GENERIC;
}

size_t al_layout_place_count(const al_layout *l, const char *name)
{
	const entry *e, *end;
	size_t n = 0;

	if (l == NULL || l->kind != AL_LAYOUT_OC_MIRROR ||
	    (e = lookup(l, name)) == NULL)
		return 0;
	for (end = l->e + l->n; e < end && strcmp(e->name, name) == 0; e++)
		n += e->repo != NULL;
	return n;
}

int al_layout_place_at(const al_layout *l, const char *name, size_t place,
                       char **repo, char **tag)
{
	const entry *e;
	char *r, *t;

	if (place >= al_layout_place_count(l, name))
		return 0;
	/* the places of a name are its first entries: settle keeps no
	 * placeless entry after a place */
	e = lookup(l, name) + place;
	r = al_strdup(e->repo);
	t = al_strdup(e->tag);
	if (r == NULL || t == NULL) {
		free(r);
		free(t);
		return al_error_oom();
	}
	*repo = r;
	*tag = t;
	return 1;
}

int al_layout_place(const al_layout *l, const char *name, char **repo,
                    char **tag)
{
	return al_layout_place_at(l, name, 0, repo, tag);
}
