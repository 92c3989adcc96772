/* store_charts.c: the store's Helm chart records, typed: the "charts" array
 * of airlock/releases.json (beside "releases" and "catalogs"). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "airlock/error.h"
#include "json_int.h"
#include "airlock/store.h"
#include "store_int.h"

static int oom(void)
{
	return al_error_set(AL_ENOMEM, "out of memory");
}

void al_store_chart_clear(al_store_chart *c)
{
	size_t i;

	if (c == NULL)
		return;
	free(c->name);
	free(c->chart);
	free(c->version);
	free(c->app_version);
	free(c->source);
	free(c->mirrored);
	for (i = 0; i < c->nimages; i++)
		free(c->images[i]);
	free(c->images);
	memset(c, 0, sizeof(*c));
	c->unresolved = -1;
}

void al_store_charts_free(al_store_chart *list, size_t n)
{
	size_t i;

	if (list == NULL)
		return;
	for (i = 0; i < n; i++)
		al_store_chart_clear(&list[i]);
	free(list);
}

static int dup_member(char **out, const json_t *e, const char *key)
{
	const char *v = al_json_str(e, key);

	*out = NULL;
	if (v != NULL && (*out = al_strdup(v)) == NULL)
		return oom();
	return 0;
}

static int chart_from_json(al_store_chart *c, const json_t *e)
{
	const json_t *imgs = json_object_get(e, "images");
	const json_t *u = json_object_get(e, "unresolved");
	const char *d;
	size_t i;
	int rc;

	memset(c, 0, sizeof(*c));
	c->unresolved = json_is_integer(u) && json_integer_value(u) >= 0
	                    ? (long long)json_integer_value(u)
	                    : -1;
	if ((rc = dup_member(&c->name, e, "name")) < 0 ||
	    (rc = dup_member(&c->chart, e, "chart")) < 0 ||
	    (rc = dup_member(&c->version, e, "version")) < 0 ||
	    (rc = dup_member(&c->app_version, e, "appVersion")) < 0 ||
	    (rc = dup_member(&c->source, e, "source")) < 0 ||
	    (rc = dup_member(&c->mirrored, e, "mirrored")) < 0)
		goto fail;
	d = al_json_str(e, "digest");
	c->has_digest = d != NULL && al_digest_parse_str(&c->digest, d) == 0;
	al_error_clear();
	if (json_array_size(imgs) > 0 &&
	    (c->images = calloc(json_array_size(imgs), sizeof(char *))) ==
	        NULL) {
		rc = oom();
		goto fail;
	}
	for (i = 0; i < json_array_size(imgs); i++) {
		const char *s = json_string_value(json_array_get(imgs, i));

		if (s == NULL)
			continue;
		if ((c->images[c->nimages] = al_strdup(s)) == NULL) {
			rc = oom();
			goto fail;
		}
		c->nimages++;
	}
	return 0;
fail:
	al_store_chart_clear(c);
	return rc;
}

int al_store_charts_list(al_store *s, al_store_chart **out, size_t *n)
{
	json_t *doc = NULL;
	const json_t *list, *e;
	al_store_chart *v = NULL;
	size_t i, cnt = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = al_store_releases_load(s, &doc)) < 0)
		return rc;
	list = json_object_get(doc, "charts");
	if (list != NULL && !json_is_array(list)) {
		rc = al_error_set(AL_EPARSE,
		                  "'%s/airlock/releases.json': \"charts\" is "
		                  "not an array",
		                  al_store_path(s));
		goto out;
	}
	if ((v = calloc(json_array_size(list) + 1, sizeof(*v))) == NULL) {
		rc = oom();
		goto out;
	}
	json_array_foreach(list, i, e)
	{
		if (!json_is_object(e)) {
			rc = al_error_set(AL_EPARSE,
			                  "'%s/airlock/releases.json': "
			                  "charts[%zu] is not an object",
			                  al_store_path(s), i);
			goto out;
		}
		if ((rc = chart_from_json(&v[cnt], e)) < 0)
			goto out;
		cnt++;
	}
	*out = v;
	*n = cnt;
	v = NULL;
out:
	al_store_charts_free(v, cnt);
	json_decref(doc);
	return rc;
}

static int set_str(json_t *o, const char *key, const char *v)
{
	if (v == NULL)
		return 0;
	return json_object_set_new(o, key, json_string(v)) == 0 ? 0 : oom();
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The record of c as JSON (members in a fixed order, images sorted). */
static int chart_to_json(const al_store_chart *c, json_t **out)
{
	char ds[AL_DIGEST_STRMAX];
	json_t *o = json_object(), *imgs = json_array();
	char **sorted = NULL;
	size_t i;
	int rc;

	if (o == NULL || imgs == NULL ||
	    (c->nimages > 0 &&
	     (sorted = calloc(c->nimages, sizeof(*sorted))) == NULL)) {
		rc = oom();
		goto fail;
	}
	al_digest_str(&c->digest, ds);
	if ((rc = set_str(o, "name", c->name)) < 0 ||
	    (rc = set_str(o, "digest", ds)) < 0 ||
	    (rc = set_str(o, "chart", c->chart)) < 0 ||
	    (rc = set_str(o, "version", c->version)) < 0 ||
	    (rc = set_str(o, "appVersion", c->app_version)) < 0 ||
	    (rc = set_str(o, "source", c->source)) < 0 ||
	    (rc = set_str(o, "mirrored", c->mirrored)) < 0)
		goto fail;
	if (c->unresolved >= 0 &&
	    json_object_set_new(o, "unresolved", json_integer(c->unresolved)) !=
	        0) {
		rc = oom();
		goto fail;
	}
	for (i = 0; i < c->nimages; i++)
		sorted[i] = c->images[i];
	if (c->nimages > 1)
		qsort(sorted, c->nimages, sizeof(*sorted), cmp_str);
	for (i = 0; i < c->nimages; i++)
		if ((i == 0 || strcmp(sorted[i], sorted[i - 1]) != 0) &&
		    json_array_append_new(imgs, json_string(sorted[i])) != 0) {
			rc = oom();
			goto fail;
		}
	if (json_object_set_new(o, "images", imgs) != 0) {
		imgs = NULL;
		rc = oom();
		goto fail;
	}
	free(sorted);
	*out = o;
	return 0;
fail:
	free(sorted);
	json_decref(imgs);
	json_decref(o);
	return rc;
}

/* Replace the entry of "charts" named like e, or append e (a new
 * reference is taken). */
static int put_entry(json_t *doc, json_t *e)
{
	json_t *list = json_object_get(doc, "charts");
	const char *name = al_json_str(e, "name");
	size_t i;

	if (list == NULL) {
		if ((list = json_array()) == NULL ||
		    json_object_set_new(doc, "charts", list) != 0)
			return oom();
	}
	if (!json_is_array(list))
		return al_error_set(AL_EPARSE, "airlock/releases.json: "
		                               "\"charts\" is not an array");
	for (i = 0; name != NULL && i < json_array_size(list); i++) {
		const char *n = al_json_str(json_array_get(list, i), "name");

		if (n != NULL && strcmp(n, name) == 0)
			return json_array_set(list, i, e) == 0 ? 0 : oom();
	}
	return json_array_append(list, e) == 0 ? 0 : oom();
}

static int put_edit(json_t *doc, void *ud)
{
	return put_entry(doc, ud);
}

int al_store_chart_put(al_store *s, const al_store_chart *c)
{
	json_t *e = NULL;
	int rc;

	if (c == NULL || c->name == NULL || !c->has_digest)
		return al_error_set(AL_EINVAL,
		                    "a chart record needs a name and a digest");
	if ((rc = chart_to_json(c, &e)) < 0)
		return rc;
	rc = al_store__releases_edit(s, put_edit, e);
	json_decref(e);
	return rc;
}

int al_store__charts_merge(json_t *doc, const json_t *other, const char *what)
{
	const json_t *pa = json_object_get(other, "charts"), *v;
	size_t i;
	int rc;

	if (pa == NULL)
		return 0;
	if (!json_is_array(pa))
		return al_error_set(
		    AL_EPARSE,
		    "airlock/releases.json of %s: \"charts\" is "
		    "not an array",
		    what);
	json_array_foreach(pa, i, v)
	{
		if (!json_is_object(v) || al_json_str(v, "name") == NULL)
			return al_error_set(AL_EPARSE,
			                    "airlock/releases.json of %s: "
			                    "charts[%zu] has no name",
			                    what, i);
		/* the far side's record is the newer one */
		if ((rc = put_entry(doc, (json_t *)(uintptr_t)v)) < 0)
			return rc;
	}
	return 0;
}

int al_store__charts_inventory(al_store *s, json_t *inv)
{
	al_store_chart *list = NULL;
	json_t *arr = json_array();
	size_t n = 0, i;
	int rc = 0;

	if (arr == NULL || json_object_set_new(inv, "charts", arr) != 0)
		return oom();
	if (al_store_charts_list(s, &list, &n) < 0) {
		al_error_clear();
		return 0;
	}
	for (i = 0; rc == 0 && i < n; i++) {
		char ds[AL_DIGEST_STRMAX];

		if (list[i].name == NULL || !list[i].has_digest)
			continue;
		if (json_array_append_new(
		        arr, json_pack("{s:s, s:s, s:s?, s:s?}", "name",
		                       list[i].name, "digest",
		                       al_digest_str(&list[i].digest, ds),
		                       "chart", list[i].chart, "version",
		                       list[i].version)) != 0)
			rc = oom();
	}
	al_store_charts_free(list, n);
	return rc;
}
