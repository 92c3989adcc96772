/* mirror_plan.c: the plan of a mirror as a list (al_plan: what a mirror
 * would move, from manifests only), mapping.txt and missing.txt, and
 * free-space checks; include/airlock/mirror_plan.h. The planner that
 * fills it is mirror_preflight.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include <jansson.h>

#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/mirror_plan.h"
#include "name_int.h"
#include "mirror_plan_int.h"

/* longest SOURCE or DEST of a mapping line (al_ref_parse's bound) */
#define PLAN_FIELD_MAX 1024
/* mapping.txt and missing.txt are built in memory up to this size */
#define PLAN_TEXT_MAX (256 * AL_MIB)

struct al_plan {
	al_plan_entry *v;
	size_t n, cap;
	json_t *seen; /* "<digest>": true when present in the store */
	al_plan_totals totals;
};

int al_plan_new(al_plan **out)
{
	al_plan *p;

	if (out == NULL)
		return al_error_set(AL_EINVAL, "al_plan_new: NULL");
	if ((p = calloc(1, sizeof(*p))) == NULL ||
	    (p->seen = json_object()) == NULL) {
		free(p);
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	*out = p;
	return 0;
}

void al_plan_free(al_plan *p)
{
	size_t i;

	if (p == NULL)
		return;
	for (i = 0; i < p->n; i++) {
		free(p->v[i].kind);
		free(p->v[i].source);
		free(p->v[i].destination);
		free(p->v[i].message);
	}
	free(p->v);
	json_decref(p->seen);
	free(p);
}

static int push_entry(al_plan *p, const char *kind, const char *source,
                      const char *destination, al_plan_entry **out)
{
	al_plan_entry *e;

	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 32;
		al_plan_entry *grown = realloc(p->v, cap * sizeof(*grown));
		if (grown == NULL)
			return al_error_set(AL_ENOMEM, "out of memory");
		p->v = grown;
		p->cap = cap;
	}
	e = &p->v[p->n];
	memset(e, 0, sizeof(*e));
	e->kind = al_strdup(kind != NULL ? kind : "image");
	e->source = al_strdup(source != NULL ? source : "");
	e->destination = al_strdup(destination != NULL ? destination : "");
	if (e->kind == NULL || e->source == NULL || e->destination == NULL) {
		free(e->kind);
		free(e->source);
		free(e->destination);
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	p->n++;
	p->totals.images++;
	*out = e;
	return 0;
}

int al_plan_add(al_plan *p, const char *kind, const char *source,
                const char *destination, al_store *store,
                uint64_t manifest_bytes, const al_descriptor *blobs,
                size_t nblobs)
{
	al_plan_entry *e = NULL;
	size_t i;
	int rc;

	if (p == NULL || (nblobs > 0 && blobs == NULL))
		return al_error_set(AL_EINVAL, "al_plan_add: NULL");
	if ((rc = push_entry(p, kind, source, destination, &e)) < 0)
		return rc;
	e->size = manifest_bytes;
	e->present = 1;
	for (i = 0; i < nblobs; i++) {
		char ds[AL_DIGEST_STRMAX];
		json_t *v;
		int have;

		al_digest_str(&blobs[i].digest, ds);
		e->size += blobs[i].size;
		if ((v = json_object_get(p->seen, ds)) != NULL) {
			/* counted already: its presence then is its presence */
			have = json_is_true(v);
		} else {
			have = store != NULL &&
			       al_store_has_blob(store, &blobs[i].digest,
			                         NULL) == 1;
			if (json_object_set_new(p->seen, ds,
			                        json_boolean(have)) != 0)
				return al_error_set(AL_ENOMEM, "out of memory");
			p->totals.blobs++;
			p->totals.bytes += blobs[i].size;
			if (!have) {
				p->totals.blobs_missing++;
				p->totals.bytes_missing += blobs[i].size;
			}
		}
		if (!have) {
			e->missing += blobs[i].size;
			e->present = 0;
		}
	}
	p->totals.bytes += manifest_bytes;
	if (!e->present)
		p->totals.images_missing++;
	return 0;
}

int al_plan_add_failed(al_plan *p, const char *kind, const char *source,
                       const char *destination, int status, const char *message)
{
	al_plan_entry *e = NULL;
	int rc;

	if (p == NULL)
		return al_error_set(AL_EINVAL, "al_plan_add_failed: NULL");
	if ((rc = push_entry(p, kind, source, destination, &e)) < 0)
		return rc;
	e->status = status < 0 ? status : AL_EINVAL;
	if ((e->message = al_strdup(message != NULL ? message : "")) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	p->totals.images_failed++;
	p->totals.images_missing++;
	return 0;
}

int al_plan__add_place(al_plan *p, const char *destination)
{
	al_plan_entry *e = NULL, *last;
	size_t i;
	int rc;

	if (p == NULL || p->n == 0)
		return al_error_set(AL_EINVAL, "al_plan__add_place: no entry");
	i = p->n - 1;
	if ((rc = push_entry(p, p->v[i].kind, p->v[i].source, destination,
	                     &e)) < 0)
		return rc;
	last = &p->v[i]; /* push_entry may have moved the array */
	e->size = last->size;
	e->missing = last->missing;
	e->present = last->present;
	e->status = last->status;
	p->totals.images--;
	return 0;
}

int al_plan__mark_failed(al_plan *p, const char *kind, const char *source,
                         int status, const char *message)
{
	size_t i;

	for (i = p->n; i-- > 0;) {
		al_plan_entry *e = &p->v[i];
		char *m;

		if (strcmp(e->kind, kind) != 0 ||
		    strcmp(e->source, source) != 0)
			continue;
		if (e->status < 0)
			return 0;
		if ((m = al_strdup(message != NULL ? message : "")) == NULL)
			return al_error_set(AL_ENOMEM, "out of memory");
		free(e->message);
		e->message = m;
		e->status = status < 0 ? status : AL_EINVAL;
		p->totals.images_failed++;
		if (e->present)
			p->totals.images_missing++;
		e->present = 0;
		return 0;
	}
	return 0;
}

size_t al_plan_count(const al_plan *p)
{
	return p != NULL ? p->n : 0;
}

const al_plan_entry *al_plan_entry_at(const al_plan *p, size_t i)
{
	return p != NULL && i < p->n ? &p->v[i] : NULL;
}

void al_plan_get_totals(const al_plan *p, al_plan_totals *out)
{
	if (out == NULL)
		return;
	if (p == NULL) {
		memset(out, 0, sizeof(*out));
		return;
	}
	*out = p->totals;
}

/* A failed entry has no destination: empty is a field, a separator is not. */
static int plan_field_check(const char *what, const char *s)
{
	if (s == NULL || s[0] == '\0')
		return 0;
	return al_name_check(what, s, AL_NAME_FIELD, PLAN_FIELD_MAX);
}

static int write_list(const al_plan *p, const char *dir, const char *file,
                      int missing_only)
{
	al_buf b = AL_BUF_INIT(PLAN_TEXT_MAX);
	char *path = NULL;
	size_t i;
	int rc = 0;

	for (i = 0; i < p->n && rc == 0; i++) {
		const al_plan_entry *e = &p->v[i];
		if (missing_only && e->present && e->status == 0)
			continue;
		/* a refused entry has no destination: missing.txt lists it,
		 * mapping.txt (SOURCE=DEST for `oc image mirror -f`) not */
		if (!missing_only &&
		    (e->destination == NULL || e->destination[0] == '\0'))
			continue;
		/* `oc image mirror -f` reads one SOURCE=DEST a line: a field
		 * that could start another line or move the '=' is refused,
		 * whatever let it through */
		if ((rc = plan_field_check("mapping source", e->source)) < 0 ||
		    (rc = plan_field_check("mapping destination",
		                           e->destination)) < 0)
			break;
		rc = al_buf_printf(&b, "%s=%s\n", e->source, e->destination);
	}
	if (rc < 0)
		goto out;
	if ((path = al_path_join(dir, file)) == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	rc = al_fs_write_atomic(path, b.len > 0 ? b.ptr : (const void *)"",
	                        b.len);
out:
	free(path);
	al_buf_free(&b);
	return rc;
}

int al_plan_write(const al_plan *p, const char *dir)
{
	int rc;

	if (p == NULL || dir == NULL)
		return al_error_set(AL_EINVAL, "al_plan_write: NULL");
	if ((rc = al_fs_mkdir_p(dir, 0755)) < 0)
		return al_error_wrap(rc, "cannot create '%s'", dir);
	if ((rc = write_list(p, dir, "mapping.txt", 0)) < 0 ||
	    (rc = write_list(p, dir, "missing.txt", 1)) < 0)
		return rc;
	return 0;
}

int al_fs_free_space(const char *path, uint64_t *avail)
{
	struct statvfs sv;

	if (path == NULL || avail == NULL)
		return al_error_set(AL_EINVAL, "al_fs_free_space: NULL");
	if (statvfs(path, &sv) != 0)
		return al_error_errno(errno, "cannot statvfs '%s'", path);
	*avail = (uint64_t)sv.f_bavail * (uint64_t)sv.f_frsize;
	return 0;
}

int al_space_check(const char *path, uint64_t need, const char *what)
{
	uint64_t avail = 0;
	int rc;

	if ((rc = al_fs_free_space(path, &avail)) < 0)
		return rc;
	if (need > avail)
		return al_error_set(AL_EIO,
		                    "not enough space for %s on '%s': %llu "
		                    "bytes needed, %llu bytes free",
		                    what != NULL ? what : "the data", path,
		                    (unsigned long long)need,
		                    (unsigned long long)avail);
	return 0;
}

void al_mirror_lifecycle_clear(al_mirror_lifecycle *lc)
{
	if (lc == NULL)
		return;
	al_plan_free(lc->plan);
	lc->plan = NULL;
	free(lc->dir);
	lc->dir = NULL;
	lc->free = lc->need = lc->prefetched = lc->prefetched_blobs = 0;
	lc->signatures_missing = 0;
}
