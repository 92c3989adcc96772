/* store_charts.c: the store's Helm chart records, typed: the "charts" array
 * of airlock/releases.json (beside "releases" and "catalogs"). */
#include <stdlib.h>
#include <string.h>

#include "airlock/error.h"
#include "json_int.h"
#include "airlock/store.h"
#include "store_int.h"

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

static int chart_from_json(al_store_chart *c, const json_t *e)
{
	const json_t *imgs = json_object_get(e, "images");
	const json_t *u = json_object_get(e, "unresolved");
	const char *d;
	int rc;

	memset(c, 0, sizeof(*c));
	c->unresolved = json_is_integer(u) && json_integer_value(u) >= 0
	                    ? (long long)json_integer_value(u)
	                    : -1;
	if ((rc = al_store__member_dup(&c->name, e, "name")) < 0 ||
	    (rc = al_store__member_dup(&c->chart, e, "chart")) < 0 ||
	    (rc = al_store__member_dup(&c->version, e, "version")) < 0 ||
	    (rc = al_store__member_dup(&c->app_version, e, "appVersion")) < 0 ||
	    (rc = al_store__member_dup(&c->source, e, "source")) < 0 ||
	    (rc = al_store__member_dup(&c->mirrored, e, "mirrored")) < 0)
		goto fail;
	d = al_json_str(e, "digest");
	c->has_digest = d != NULL && al_digest_parse_str(&c->digest, d) == 0;
	al_error_clear();
	if ((rc = al_store__member_strv(&c->images, &c->nimages, imgs, NULL)) <
	    0)
		goto fail;
	return 0;
fail:
	al_store_chart_clear(c);
	return rc;
}

static int chart_read(void *elem, const json_t *e)
{
	return chart_from_json(elem, e);
}

static void chart_clear(void *elem)
{
	al_store_chart_clear(elem);
}

int al_store_charts_list(al_store *s, al_store_chart **out, size_t *n)
{
	void *v = NULL;
	int rc = al_store__records_list(s, "charts", sizeof(**out), chart_read,
	                                chart_clear, &v, n);

	*out = v;
	return rc;
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
		rc = al_error_oom();
		goto fail;
	}
	al_digest_str(&c->digest, ds);
	if ((rc = al_store__member_set(o, "name", c->name)) < 0 ||
	    (rc = al_store__member_set(o, "digest", ds)) < 0 ||
	    (rc = al_store__member_set(o, "chart", c->chart)) < 0 ||
	    (rc = al_store__member_set(o, "version", c->version)) < 0 ||
	    (rc = al_store__member_set(o, "appVersion", c->app_version)) < 0 ||
	    (rc = al_store__member_set(o, "source", c->source)) < 0 ||
	    (rc = al_store__member_set(o, "mirrored", c->mirrored)) < 0)
		goto fail;
	if (c->unresolved >= 0 &&
	    json_object_set_new(o, "unresolved", json_integer(c->unresolved)) !=
	        0) {
		rc = al_error_oom();
		goto fail;
	}
	for (i = 0; i < c->nimages; i++)
		sorted[i] = c->images[i];
	if (c->nimages > 1)
		qsort(sorted, c->nimages, sizeof(*sorted), cmp_str);
	for (i = 0; i < c->nimages; i++)
		if ((i == 0 || strcmp(sorted[i], sorted[i - 1]) != 0) &&
		    json_array_append_new(imgs, json_string(sorted[i])) != 0) {
			rc = al_error_oom();
			goto fail;
		}
	if (json_object_set_new(o, "images", imgs) != 0) {
		imgs = NULL;
		rc = al_error_oom();
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

int al_store_chart_put(al_store *s, const al_store_chart *c)
{
	json_t *e = NULL;
	int rc;

	if (c == NULL || c->name == NULL || !c->has_digest)
		return al_error_set(AL_EINVAL,
		                    "a chart record needs a name and a digest");
	if ((rc = chart_to_json(c, &e)) < 0)
		return rc;
	rc = al_store__record_save(s, "charts", e);
	json_decref(e);
	return rc;
}

int al_store__charts_merge(json_t *doc, const json_t *other, const char *what)
{
	return al_store__records_merge(doc, other, "charts", what);
}

int al_store__charts_inventory(al_store *s, json_t *inv)
{
	al_store_chart *list = NULL;
	json_t *arr = json_array();
	size_t n = 0, i;
	int rc = 0;

	if (arr == NULL || json_object_set_new(inv, "charts", arr) != 0)
		return al_error_oom();
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
			rc = al_error_oom();
	}
	al_store_charts_free(list, n);
	return rc;
}
