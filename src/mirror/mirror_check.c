/* mirror_check.c: al_mirror_check, the store check over what the mirror
 * recorded: the roots are every recorded release's components and every
 * recorded operator catalog with its images. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/mirror.h"
#include "airlock/ref.h"
#include "airlock/release.h"
#include "airlock/store.h"
#include "array_int.h"
#include "error_int.h"

/* The roots of al_mirror_check; the list owns each root's from. */
typedef struct root_list {
	al_store_root *v;
	size_t n, cap;
} root_list;

/* Append digest d needed by from (taken: freed on failure, NULL is
 * AL_ENOMEM). AL_ENOMEM. */
static int roots_add(root_list *l, const al_digest *d, char *from)
{
	al_store_root *g;

	if (from == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	if ((g = al__array_grow(l->v, &l->cap, l->n + 1, sizeof(*g))) == NULL) {
		free(from);
		return AL_ENOMEM;
	}
	l->v = g;
	l->v[l->n].digest = *d;
	l->v[l->n].from = from;
	l->n++;
	return 0;
}

static void roots_clear(root_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free((char *)(uintptr_t)l->v[i].from);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* Component roots of one recorded release (none when it cannot be read:
 * the walk reports what it lacks). */
static int component_roots(al_store *s, const al_store_release *e,
                           root_list *roots)
{
	const char *d = e->digest_text;
	const char *v = e->version;
	al_release *r = NULL;
	size_t j, n;
	int rc = 0;

	if (!e->has_digest || al_store_has_blob(s, &e->digest, NULL) != 1 ||
	    al_release_open(&r, s, &e->digest, e->platform) < 0) {
		al_error_clear();
		return 0;
	}
	n = al_release_component_count(r);
	for (j = 0; j < n; j++) {
		const al_release_component *c = al_release_component_at(r, j);
		al_ref ref = {0};
		al_digest cd;

		if (al_ref_parse(&ref, c->image) < 0 || ref.digest == NULL ||
		    al_digest_parse_str(&cd, ref.digest) < 0) {
			al_ref_clear(&ref);
			al_error_clear();
			continue; /* by tag: nothing fixed to keep */
		}
		al_ref_clear(&ref);
		rc = roots_add(
		    roots, &cd,
		    al_sprintf("component %s (%s) of release %s (%s) "
		               "recorded in airlock/releases.json",
		               c->name, c->image, v != NULL ? v : "?", d));
		if (rc < 0)
			break;
	}
	al_release_free(r);
	return rc;
}

/* Every recorded catalog (rebuilt and source manifests) and every image
 * it names by digest, appended to roots. */
static int catalog_roots(al_store *s, root_list *roots)
{
	al_store_catalog *list = NULL;
	size_t n = 0, i, j;
	int rc = 0;

	/* an unreadable releases.json is reported by the store check */
	if (al_store_catalogs_list(s, &list, &n) < 0) {
		al_error_clear();
		return 0;
	}
	for (i = 0; rc == 0 && i < n; i++) {
		const al_store_catalog *c = &list[i];
		char ds[AL_DIGEST_STRMAX];
		const char *name = c->name != NULL ? c->name : "?";

		if (c->has_digest)
			rc = roots_add(
			    roots, &c->digest,
			    al_sprintf("catalog %s (%s) recorded in "
			               "airlock/releases.json",
			               name, al_digest_str(&c->digest, ds)));
		if (rc == 0 && c->has_source_digest)
			rc = roots_add(
			    roots, &c->source_digest,
			    al_sprintf("the source of catalog %s (%s)", name,
			               c->source_name != NULL ? c->source_name
			                                      : "?"));
		for (j = 0; rc == 0 && j < c->nimages; j++) {
			al_ref r;
			al_digest d;

			memset(&r, 0, sizeof(r));
			if (al_ref_parse(&r, c->images[j]) == 0 &&
			    r.digest != NULL &&
			    al_digest_parse_str(&d, r.digest) == 0)
				rc = roots_add(
				    roots, &d,
				    al_sprintf("image %s of catalog %s",
				               c->images[j], name));
			al_ref_clear(&r);
			al_error_clear();
		}
	}
	al_store_catalogs_free(list, n);
	return rc;
}

int al_mirror_check(al_store *s, int flags, al_check_fn fn, void *ud,
                    al_check_result *res)
{
	al_store_release *list = NULL;
	root_list rl = {0};
	size_t nlist = 0, i;
	int rc = 0;

	if ((rc = AL_RESULT_VERSION_CHECK("al_check_result", res, version,
	                                  AL_CHECK_RESULT_VERSION)) < 0)
		return rc;
	/* An unreadable releases.json is reported by the store check. */
	if (al_store_releases_list(s, &list, &nlist) == 0) {
		for (i = 0; rc == 0 && i < nlist; i++)
			rc = component_roots(s, &list[i], &rl);
	}
	al_error_clear();
	/* operator catalogs recorded in releases.json */
	if (rc == 0)
		rc = catalog_roots(s, &rl);
	if (rc == 0)
		rc = al_store_check_roots(s, flags, rl.v, rl.n, fn, ud, res);
	roots_clear(&rl);
	al_store_releases_free(list, nlist);
	return rc;
}
