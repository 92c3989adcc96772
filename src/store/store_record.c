/* store_record.c: the bottom of the store's metadata: record members read
 * and written one way (al_store__member_*), and the named records of
 * airlock/releases.json driven by their kind's table (al_store__kind,
 * store_int.h): one reader, writer, list, put, merge and inventory for every
 * kind ("catalogs" of store_catalogs.c, "charts" of store_charts.c). It
 * calls store.c (the document's load and locked edit) and nothing above. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "airlock/buf.h"
#include "airlock/digest.h"
#include "airlock/error.h"
#include "json_int.h"
#include "name_int.h"
#include "airlock/store.h"
#include "store_int.h"

/* The field f of the record at rec. */
/* a record name from a pack: one field of a line, bounded */
#define RECORD_NAME_MAX 1024

#define FIELD(rec, f, type) ((type *)(void *)((unsigned char *)(rec) + (f)))
#define CFIELD(rec, f, type)                                                   \
	((type const *)(const void *)((const unsigned char *)(rec) + (f)))

/* --- record members ------------------------------------------------------ */

int al_store__member_dup(char **out, const json_t *e, const char *key)
{
	const char *v = al_json_str(e, key);

	*out = NULL;
	if (v != NULL && (*out = al_strdup(v)) == NULL)
		return al_error_oom();
	return 0;
}

int al_store__member_strv(char ***out, size_t *n, const json_t *arr,
                          const char *member)
{
	size_t i;

	*out = NULL;
	*n = 0;
	if (json_array_size(arr) == 0)
		return 0;
	if ((*out = calloc(json_array_size(arr), sizeof(char *))) == NULL)
		return al_error_oom();
	for (i = 0; i < json_array_size(arr); i++) {
		const json_t *e = json_array_get(arr, i);
		const char *v = member != NULL ? al_json_str(e, member)
		                               : json_string_value(e);

		if (v == NULL)
			continue;
		if (((*out)[*n] = al_strdup(v)) == NULL)
			return al_error_oom();
		(*n)++;
	}
	return 0;
}

int al_store__member_set(json_t *o, const char *key, const char *v)
{
	if (v == NULL)
		return 0;
	return json_object_set_new(o, key, json_string(v)) == 0
	           ? 0
	           : al_error_oom();
}

/* --- one typed record, field by field ------------------------------------ */

void al_store__record_clear(const al_store__kind *k, void *rec)
{
	size_t i, j;

	if (rec == NULL)
		return;
	for (i = 0; i < k->nfields; i++) {
		const al_store__field *f = &k->fields[i];

		if (f->type == AL_STORE__STR) {
			free(*FIELD(rec, f->off, char *));
		} else if (f->type == AL_STORE__STRV ||
		           f->type == AL_STORE__STRV_SORTED) {
			char **v = *FIELD(rec, f->off, char **);

			for (j = 0;
			     v != NULL && j < *FIELD(rec, f->aux, size_t); j++)
				free(v[j]);
			free(v);
		}
	}
	memset(rec, 0, k->size);
	for (i = 0; i < k->nfields; i++)
		if (k->fields[i].type == AL_STORE__COUNT)
			*FIELD(rec, k->fields[i].off, long long) = -1;
}

void al_store__records_free(const al_store__kind *k, void *list, size_t n)
{
	size_t i;

	if (list == NULL)
		return;
	for (i = 0; i < n; i++)
		al_store__record_clear(k, (unsigned char *)list + i * k->size);
	free(list);
}

/* The record e of kind k into rec (cleared first; on failure cleared
 * again). A digest that does not parse, or a count that is no integer
 * >= 0, reads as missing: the record still lists. */
static int record_read(const al_store__kind *k, void *rec, const json_t *e)
{
	size_t i;
	int rc = 0;

	memset(rec, 0, k->size);
	for (i = 0; rc == 0 && i < k->nfields; i++) {
		const al_store__field *f = &k->fields[i];
		const json_t *v = json_object_get(e, f->member);

		switch (f->type) {
		case AL_STORE__STR:
			rc = al_store__member_dup(FIELD(rec, f->off, char *), e,
			                          f->member);
			break;
		case AL_STORE__DIGEST:
			*FIELD(rec, f->aux, int) =
			    json_is_string(v) &&
			    al_digest_parse_str(FIELD(rec, f->off, al_digest),
			                        json_string_value(v)) == 0;
			al_error_clear();
			break;
		case AL_STORE__COUNT:
			*FIELD(rec, f->off, long long) =
			    json_is_integer(v) && json_integer_value(v) >= 0
			        ? (long long)json_integer_value(v)
			        : -1;
			break;
		case AL_STORE__STRV:
		case AL_STORE__STRV_SORTED:
			rc = al_store__member_strv(FIELD(rec, f->off, char **),
			                           FIELD(rec, f->aux, size_t),
			                           v, NULL);
			break;
		}
	}
	if (rc < 0)
		al_store__record_clear(k, rec);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* v[0..n) as a JSON array; sorted: in byte order, each string once. */
static int strv_json(char *const *v, size_t n, int sorted, json_t **out)
{
	json_t *arr = json_array();
	char **s = NULL;
	size_t i;
	int rc = 0;

	if (arr == NULL ||
	    (sorted && n > 0 && (s = calloc(n, sizeof(*s))) == NULL)) {
		rc = al_error_oom();
		goto out;
	}
	if (s != NULL) {
		memcpy(s, v, n * sizeof(*s));
		qsort(s, n, sizeof(*s), cmp_str);
		v = s;
	}
	for (i = 0; i < n; i++) {
		if (sorted && i > 0 && strcmp(v[i], v[i - 1]) == 0)
			continue;
		if (json_array_append_new(arr, json_string(v[i])) != 0) {
			rc = al_error_oom();
			goto out;
		}
	}
	*out = arr;
	arr = NULL;
out:
	free(s);
	json_decref(arr);
	return rc;
}

/* The record rec of kind k as JSON, its members in the table's order;
 * only: the fields flagged so (AL_STORE__LISTED), a missing string as
 * null. */
static int record_json(const al_store__kind *k, const void *rec, unsigned only,
                       json_t **out)
{
	json_t *o = json_object(), *arr = NULL;
	char ds[AL_DIGEST_STRMAX];
	size_t i;
	int rc = 0;

	if (o == NULL)
		return al_error_oom();
	for (i = 0; rc == 0 && i < k->nfields; i++) {
		const al_store__field *f = &k->fields[i];
		const char *s;
		long long c;

		if ((f->flags & only) != only)
			continue;
		switch (f->type) {
		case AL_STORE__STR:
			s = *CFIELD(rec, f->off, char *);
			if (s == NULL && only != 0)
				rc = json_object_set_new(o, f->member,
				                         json_null()) == 0
				         ? 0
				         : al_error_oom();
			else
				rc = al_store__member_set(o, f->member, s);
			break;
		case AL_STORE__DIGEST:
			if (*CFIELD(rec, f->aux, int))
				rc = al_store__member_set(
				    o, f->member,
				    al_digest_str(
				        CFIELD(rec, f->off, al_digest), ds));
			break;
		case AL_STORE__COUNT:
			c = *CFIELD(rec, f->off, long long);
			if (c >= 0 && json_object_set_new(o, f->member,
			                                  json_integer(c)) != 0)
				rc = al_error_oom();
			break;
		case AL_STORE__STRV:
		case AL_STORE__STRV_SORTED:
			if ((rc = strv_json(*CFIELD(rec, f->off, char **),
			                    *CFIELD(rec, f->aux, size_t),
			                    f->type == AL_STORE__STRV_SORTED,
			                    &arr)) == 0 &&
			    json_object_set_new(o, f->member, arr) != 0)
				rc = al_error_oom();
			arr = NULL;
			break;
		}
	}
	if (rc < 0) {
		json_decref(o);
		return rc;
	}
	*out = o;
	return 0;
}

/* Whether rec has every field its kind flags AL_STORE__KEY. */
static int record_keyed(const al_store__kind *k, const void *rec)
{
	size_t i;

	for (i = 0; i < k->nfields; i++) {
		const al_store__field *f = &k->fields[i];

		if (!(f->flags & AL_STORE__KEY))
			continue;
		if (f->type == AL_STORE__STR &&
		    *CFIELD(rec, f->off, char *) == NULL)
			return 0;
		if (f->type == AL_STORE__DIGEST && !*CFIELD(rec, f->aux, int))
			return 0;
	}
	return 1;
}

/* --- the named records of airlock/releases.json --------------------------- */

int al_store__records_list(al_store *s, const al_store__kind *k, void **out,
                           size_t *n)
{
	json_t *doc = NULL;
	const json_t *list, *e;
	unsigned char *v = NULL;
	size_t i, cnt = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = al_store_releases_load(s, &doc)) < 0)
		return rc;
	list = json_object_get(doc, k->key);
	if (list != NULL && !json_is_array(list)) {
		rc = al_error_set(AL_EPARSE,
		                  "'%s/airlock/releases.json': \"%s\" is not "
		                  "an array",
		                  al_store_path(s), k->key);
		goto out;
	}
	if ((v = calloc(json_array_size(list) + 1, k->size)) == NULL) {
		rc = al_error_oom();
		goto out;
	}
	json_array_foreach(list, i, e)
	{
		if (!json_is_object(e)) {
			rc = al_error_set(AL_EPARSE,
			                  "'%s/airlock/releases.json': "
			                  "%s[%zu] is not an object",
			                  al_store_path(s), k->key, i);
			goto out;
		}
		if ((rc = record_read(k, v + cnt * k->size, e)) < 0)
			goto out;
		cnt++;
	}
	*out = v;
	*n = cnt;
	v = NULL;
out:
	al_store__records_free(k, v, cnt);
	json_decref(doc);
	return rc;
}

/* In doc, replace the record of array key named like e, or append e (a new
 * reference is taken; the array is created when missing). */
static int doc_put(json_t *doc, const char *key, json_t *e)
{
	json_t *list = json_object_get(doc, key);
	const char *name = al_json_str(e, "name");
	size_t i;

	if (list == NULL) {
		if ((list = json_array()) == NULL ||
		    json_object_set_new(doc, key, list) != 0)
			return al_error_oom();
	}
	if (!json_is_array(list))
		return al_error_set(AL_EPARSE,
		                    "airlock/releases.json: \"%s\" is not an "
		                    "array",
		                    key);
	for (i = 0; name != NULL && i < json_array_size(list); i++) {
		const char *n = al_json_str(json_array_get(list, i), "name");

		if (n != NULL && strcmp(n, name) == 0)
			return json_array_set(list, i, e) == 0 ? 0
			                                       : al_error_oom();
	}
	return json_array_append(list, e) == 0 ? 0 : al_error_oom();
}

struct put_ctx {
	const char *key;
	json_t *e;
};

static int put_edit(json_t *doc, void *ud)
{
	const struct put_ctx *c = ud;

	return doc_put(doc, c->key, c->e);
}

int al_store__record_put(al_store *s, const al_store__kind *k, const void *rec)
{
	struct put_ctx c = {.key = k->key, .e = NULL};
	int rc;

	if (rec == NULL || !record_keyed(k, rec))
		return al_error_set(AL_EINVAL,
		                    "a %s record needs a name and a digest",
		                    k->what);
	if ((rc = record_json(k, rec, 0, &c.e)) < 0)
		return rc;
	rc = al_store__releases_edit(s, put_edit, &c);
	json_decref(c.e);
	return rc;
}

int al_store__records_merge(json_t *doc, const json_t *other,
                            const al_store__kind *k, const char *what)
{
	const json_t *pa = json_object_get(other, k->key), *v;
	size_t i;
	int rc;

	if (pa == NULL)
		return 0;
	if (!json_is_array(pa))
		return al_error_set(AL_EPARSE,
		                    "airlock/releases.json of %s: \"%s\" is "
		                    "not an array",
		                    what, k->key);
	json_array_foreach(pa, i, v)
	{
		if (!json_is_object(v) || al_json_str(v, "name") == NULL)
			return al_error_set(AL_EPARSE,
			                    "airlock/releases.json of %s: "
			                    "%s[%zu] has no name",
			                    what, k->key, i);
		/* a record's name comes from the far side: one field of a
		 * line, as the records this store writes itself
		 * (docs/security.md "Names from fetched content") */
		if ((rc = al_name_check("record name", al_json_str(v, "name"),
		                        AL_NAME_FIELD, RECORD_NAME_MAX)) < 0)
			return al_error_wrap(rc,
			                     "airlock/releases.json of %s: "
			                     "%s[%zu]",
			                     what, k->key, i);
		/* the far side's record of a name is the newer one */
		if ((rc = doc_put(doc, k->key, (json_t *)(uintptr_t)v)) < 0)
			return rc;
	}
	return 0;
}

int al_store__records_inventory(al_store *s, const al_store__kind *k,
                                json_t *inv)
{
	json_t *arr = json_array(), *e = NULL;
	void *list = NULL;
	size_t n = 0, i;
	int rc = 0;

	if (arr == NULL || json_object_set_new(inv, k->key, arr) != 0)
		return al_error_oom();
	if (al_store__records_list(s, k, &list, &n) < 0) {
		/* records that do not read: none listed (check reports it) */
		al_error_clear();
		return 0;
	}
	for (i = 0; rc == 0 && i < n; i++) {
		const void *rec = (const unsigned char *)list + i * k->size;

		if (!record_keyed(k, rec))
			continue;
		if ((rc = record_json(k, rec, AL_STORE__LISTED, &e)) == 0 &&
		    json_array_append_new(arr, e) != 0)
			rc = al_error_oom();
	}
	al_store__records_free(k, list, n);
	return rc;
}
