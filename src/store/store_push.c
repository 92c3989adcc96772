/* store_push.c: push records (STORE/airlock/pushes.json): where `airlock
 * push` put the store's images, read by mirrorsets, configmaps and the
 * cluster-resources writer so the destination is not retyped. */
#include <stdlib.h>
#include <string.h>

#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "json_int.h"
#include "airlock/store.h"
#include "store_push_int.h"

#define PUSHES_FILE_MAX (4 * 1024 * 1024)

void al_store_push_clear(al_store_push *p)
{
	if (p == NULL)
		return;
	free(p->registry);
	free(p->prefix);
	free(p->time);
	memset(p, 0, sizeof(*p));
}

/* The record file at path ({"<version_key>": 1, "<member>": [] or {}}), or
 * a new empty one when there is none (al_fs_exists 0). A file that is not
 * one is an error (AL_EPARSE), never overwritten silently by a load. */
static int record_load(const char *path, size_t max, const char *version_key,
                       const char *member, int array, const char *what,
                       json_t **out)
{
	json_t *doc = NULL, *m;
	int rc;

	if (al_fs_exists(path) == 0) {
		doc = json_pack(array ? "{s:i, s:[]}" : "{s:i, s:{}}",
		                version_key, 1, member);
		if (doc == NULL)
			return al_error_set(AL_ENOMEM, "out of memory");
		*out = doc;
		return 0;
	}
	if ((rc = al_json_load_file(&doc, path, max)) < 0)
		return rc;
	m = json_is_object(doc) ? json_object_get(doc, member) : NULL;
	if (array ? !json_is_array(m) : !json_is_object(m)) {
		json_decref(doc);
		return al_error_set(AL_EPARSE,
		                    "'%s' is not a %s ({\"%s\": %s})", path,
		                    what, member, array ? "[...]" : "{...}");
	}
	*out = doc;
	return 0;
}

/* The push record document at path, or a new empty one. */
static int pushes_load(const char *path, json_t **out)
{
	return record_load(path, PUSHES_FILE_MAX, "airlockPushes", "pushes", 1,
	                   "push record file", out);
}

int al_store_push_put(al_store *s, const al_store_push *rec)
{
	char *dir = NULL, *path = NULL, *lockp = NULL;
	al_lock *lock = NULL;
	json_t *doc = NULL, *arr, *o = NULL;
	int rc;

	if (rec == NULL || rec->registry == NULL || rec->registry[0] == '\0')
		return al_error_set(AL_EINVAL,
		                    "a push record needs a registry");
	dir = al_path_join(al_store_path(s), "airlock");
	path = al_path_join(al_store_path(s), "airlock/pushes.json");
	lockp = al_path_join(al_store_path(s), "airlock/pushes.lock");
	if (dir == NULL || path == NULL || lockp == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = al_fs_mkdir_p(dir, 0755)) < 0 ||
	    (rc = al_lock_acquire(&lock, lockp, 10000)) < 0 ||
	    (rc = pushes_load(path, &doc)) < 0)
		goto out;
	o = json_pack(
	    "{s:s, s:s, s:s, s:I, s:I, s:I, s:b, s:s}", "registry",
	    rec->registry, "prefix", rec->prefix != NULL ? rec->prefix : "",
	    "time", rec->time != NULL ? rec->time : "", "images",
	    (json_int_t)rec->images, "failed", (json_int_t)rec->failed,
	    "maxNestedPaths", (json_int_t)rec->max_nested_paths, "digestTags",
	    rec->digest_tags != 0, "layout",
	    rec->source_layout ? "source" : "oc-mirror");
	arr = json_object_get(doc, "pushes");
	if (o == NULL || json_array_append_new(arr, o) < 0) {
		o = NULL;
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	o = NULL;
	while (json_array_size(arr) > AL_STORE_PUSHES_MAX)
		json_array_remove(arr, 0);
	rc = al_json_save_file(path, doc, 2);
out:
	json_decref(o);
	json_decref(doc);
	al_lock_free(lock);
	free(dir);
	free(path);
	free(lockp);
	return rc;
}

static int dup_str(char **out, const json_t *o, const char *key)
{
	const char *v = al_json_str(o, key);

	*out = al_strdup(v != NULL ? v : "");
	return *out == NULL ? al_error_set(AL_ENOMEM, "out of memory") : 0;
}

int al_store_push_last(al_store *s, al_store_push *out)
{
	char *path = al_path_join(al_store_path(s), "airlock/pushes.json");
	json_t *doc = NULL, *arr, *last;
	al_store_push p;
	json_int_t v;
	int rc;

	memset(&p, 0, sizeof(p));
	if (path == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	if (!al_fs_exists(path)) {
		rc = al_error_set(AL_ENOTFOUND,
		                  "store '%s' records no push (airlock push "
		                  "writes airlock/pushes.json)",
		                  al_store_path(s));
		goto out;
	}
	if ((rc = pushes_load(path, &doc)) < 0)
		goto out;
	arr = json_object_get(doc, "pushes");
	last = json_array_get(arr, json_array_size(arr) - 1);
	if (json_array_size(arr) == 0 || !json_is_object(last) ||
	    al_json_str(last, "registry") == NULL ||
	    al_json_str(last, "registry")[0] == '\0') {
		rc = json_array_size(arr) == 0
		         ? al_error_set(AL_ENOTFOUND,
		                        "store '%s' records no push",
		                        al_store_path(s))
		         : al_error_set(AL_EPARSE,
		                        "'%s': the last push record has no "
		                        "registry",
		                        path);
		goto out;
	}
	if ((rc = dup_str(&p.registry, last, "registry")) < 0 ||
	    (rc = dup_str(&p.prefix, last, "prefix")) < 0 ||
	    (rc = dup_str(&p.time, last, "time")) < 0)
		goto out;
	v = json_integer_value(json_object_get(last, "images"));
	p.images = v > 0 ? (uint64_t)v : 0;
	v = json_integer_value(json_object_get(last, "failed"));
	p.failed = v > 0 ? (uint64_t)v : 0;
	v = json_integer_value(json_object_get(last, "maxNestedPaths"));
	p.max_nested_paths = v > 0 && v < 1000 ? (unsigned)v : 0;
	p.digest_tags = json_is_true(json_object_get(last, "digestTags"));
	/* a record without "layout" predates layouts: source paths */
	p.source_layout =
	    json_object_get(last, "layout") == NULL ||
	    !json_is_string(json_object_get(last, "layout")) ||
	    strcmp(json_string_value(json_object_get(last, "layout")),
	           "oc-mirror") != 0;
	*out = p;
	memset(&p, 0, sizeof(p));
out:
	al_store_push_clear(&p);
	json_decref(doc);
	free(path);
	return rc;
}

/* ---- what each registry holds (airlock/pushed.json) ---- */

/* 10,000 images at ~200 bytes an entry is 2 MiB. */
#define PUSHED_FILE_MAX (64 * 1024 * 1024)

static char *pushed_path(al_store *s, const char *leaf)
{
	char *rel = al_sprintf("airlock/%s", leaf);
	char *p = rel != NULL ? al_path_join(al_store_path(s), rel) : NULL;

	free(rel);
	return p;
}

/* The pushed-images document at path ({"airlockPushed": 1, "registries":
 * {}}), or a new one. */
static int pushed_load(const char *path, json_t **out)
{
	return record_load(path, PUSHED_FILE_MAX, "airlockPushed", "registries",
	                   0, "pushed-images record", out);
}

int al_store__pushed_get(al_store *s, const char *registry, json_t **out)
{
	char *path = pushed_path(s, "pushed.json");
	json_t *doc = NULL, *reg, *res = NULL, *v;
	const char *k;
	int rc;

	if (path == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	if ((rc = pushed_load(path, &doc)) < 0)
		goto out;
	if ((res = json_object()) == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	reg = json_object_get(json_object_get(doc, "registries"), registry);
	/* only well-formed entries: a digest string per destination */
	json_object_foreach(reg, k, v)
	{
		if (json_is_string(v) && json_object_set(res, k, v) != 0) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
	}
	*out = res;
	res = NULL;
out:
	json_decref(res);
	json_decref(doc);
	free(path);
	return rc;
}

int al_store__pushed_update(al_store *s, const char *registry,
                            const json_t *set, const json_t *drop)
{
	char *dir = NULL, *path = NULL, *lockp = NULL;
	al_lock *lock = NULL;
	json_t *doc = NULL, *regs, *reg, *v;
	const char *k;
	int rc;

	if (registry == NULL || registry[0] == '\0')
		return al_error_set(AL_EINVAL,
		                    "a pushed-images record needs a registry");
	dir = al_path_join(al_store_path(s), "airlock");
	path = pushed_path(s, "pushed.json");
	lockp = pushed_path(s, "pushes.lock");
	if (dir == NULL || path == NULL || lockp == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = al_fs_mkdir_p(dir, 0755)) < 0 ||
	    (rc = al_lock_acquire(&lock, lockp, 10000)) < 0 ||
	    (rc = pushed_load(path, &doc)) < 0)
		goto out;
	regs = json_object_get(doc, "registries");
	reg = json_object_get(regs, registry);
	if (!json_is_object(reg)) {
		if ((reg = json_object()) == NULL ||
		    json_object_set_new(regs, registry, reg) != 0) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
	}
	json_object_foreach((json_t *)drop, k, v)
	{
		json_object_del(reg, k);
	}
	json_object_foreach((json_t *)set, k, v)
	{
		if (json_object_set(reg, k, v) != 0) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
	}
	rc = al_json_save_file(path, doc, 1);
out:
	json_decref(doc);
	al_lock_free(lock);
	free(dir);
	free(path);
	free(lockp);
	return rc;
}
