/* transfer_push.c: al_push_store: every image of a store into a registry under
 * the push mapping, recorded in airlock/pushes.json (airlock push, mirror
 * --to).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "airlock/buf.h"
#include "airlock/clock.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/log.h"
#include "airlock/layout.h"
#include "airlock/store.h"
#include "airlock/transfer.h"
#include "store_push_int.h"
#include "error_int.h"
#include "array_int.h"

void al_push_result_clear(al_push_result *r)
{
	size_t i;

	if (r == NULL)
		return;
	for (i = 0; i < r->nimages; i++) {
		free(r->images[i].source);
		free(r->images[i].destination);
		free(r->images[i].by_digest);
		free(r->images[i].message);
	}
	free(r->images);
	free(r->record_message);
	free(r->message);
	AL_RESULT_ZERO_STATS(r);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * Whether the store holds "REPO:TAG" beside "REPO@DIGEST" (names sorted).
 * A "sha256-<hex>" tag of the store is the referrers index of the image
 * with that digest (distribution-spec 1.1 tag schema, docs/cosign.md):
 * giving the image itself that tag would hide its referrers from a
 * registry without the referrers API.
 */
static int tag_taken(const char *const *sorted, size_t n, const char *name,
                     const char *tag)
{
	const char *at = strchr(name, '@');
	char *key;
	int found;

	if (at == NULL || sorted == NULL)
		return 0;
	if ((key = al_sprintf("%.*s:%s", (int)(at - name), name, tag)) == NULL)
		return 1; /* out of memory: fall back to the digest */
	found = bsearch(&key, sorted, n, sizeof(*sorted), cmp_str) != NULL;
	free(key);
	return found;
}

int al_push_target_layout_at(const al_layout *l, const char *name, size_t place,
                             const char *prefix, unsigned max_nested,
                             char **repo, char **ref)
{
	char *prepo = NULL, *ptag = NULL, *placed;
	int rc;

	if ((rc = al_layout_place_at(l, name, place, &prepo, &ptag)) < 0)
		return rc;
	if (rc == 0 && place > 0)
		return al_error_set(AL_ENOTFOUND,
		                    "'%s' has no place %zu in the layout", name,
		                    place);
	if (rc == 0)
		return al_push_target_nested(name, prefix, max_nested, repo,
		                             ref);
	/* the same mapping as any other image, from the placed name (the
	 * host is dropped by al_push_target) */
	placed = al_sprintf("localhost/%s:%s", prepo, ptag);
	free(prepo);
	free(ptag);
	if (placed == NULL)
		return al_error_oom();
	rc = al_push_target_nested(placed, prefix, max_nested, repo, ref);
	free(placed);
	return rc;
}

int al_push_target_layout(const al_layout *l, const char *name,
                          const char *prefix, unsigned max_nested, char **repo,
                          char **ref)
{
	return al_push_target_layout_at(l, name, 0, prefix, max_nested, repo,
	                                ref);
}

size_t al_push_target_count(const al_layout *l, const char *name)
{
	size_t n = al_layout_place_count(l, name);

	return n > 0 ? n : 1;
}

/* The destination of one store image into img (destination, by_digest),
 * or a negative status (said). */
static int dest_of(al_push_image *img, const al_layout *l, size_t place,
                   const char *prefix, unsigned nested, int digest_tags,
                   const char *const *sorted, size_t nsorted)
{
	const char *name = img->source;
	char *repo = NULL, *ref = NULL, *tag = NULL;
	int rc;

	if ((rc = al_push_target_layout_at(l, name, place, prefix, nested,
	                                   &repo, &ref)) < 0)
		return al_error_wrap(rc, "skipping '%s'", name);
	if (al_str_startswith(ref, "sha256:") ||
	    al_str_startswith(ref, "sha512:")) {
		/* pushed under the digest-derived tag: the registry stores
		 * the same manifest (same digest) and keeps it tagged */
		if (digest_tags && (tag = al_push_digest_tag(ref)) != NULL &&
		    !tag_taken(sorted, nsorted, name, tag))
			img->destination = al_sprintf("%s:%s", repo, tag);
		else
			img->destination = al_sprintf("%s@%s", repo, ref);
		img->by_digest = al_sprintf("%s@%s", repo, ref);
		rc = img->destination == NULL || img->by_digest == NULL
		         ? al_error_set(AL_ENOMEM, "out of memory")
		         : 0;
	} else {
		img->destination = al_sprintf("%s:%s", repo, ref);
		rc = img->destination == NULL
		         ? al_error_set(AL_ENOMEM, "out of memory")
		         : 0;
	}
	free(repo);
	free(ref);
	free(tag);
	return rc;
}

/*
 * The names an untrusted import set that still name what it gave them
 * (al_store_untrusted_list: tags and names by digest), sorted, into
 * *out (strings owned: free each and the array); docs/security.md
 * "Marks of untrusted imports".
 */
static int marked_names(al_store *s, char ***out, size_t *n)
{
	al_store_untrusted *v = NULL;
	char **names = NULL;
	size_t nv = 0, i, m = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = al_store_untrusted_list(s, &v, &nv)) < 0)
		return rc;
	if ((names = calloc(nv + 1, sizeof(*names))) == NULL) {
		rc = al_error_oom();
		goto out;
	}
	for (i = 0; i < nv; i++) {
		if (v[i].kind != AL_STORE_UNTRUSTED_TAG || v[i].name == NULL)
			continue;
		names[m++] = v[i].name;
		v[i].name = NULL; /* moved */
	}
	qsort(names, m, sizeof(*names), cmp_str);
	*out = names;
	*n = m;
	names = NULL;
out:
	free(names);
	al_store_untrusted_free(v, nv);
	return rc;
}

/* Mark img failed with the current error message. */
static int fail_image(al_push_image *img, int rc)
{
	free(img->message);
	img->status = rc;
	img->message = al_strdup(al_error_message());
	return rc == AL_ENOMEM || img->message == NULL ? AL_ENOMEM : 0;
}

/* Append the push to the store's record (a failure is kept in r). */
static void record(al_store *s, const al_push_opts *o, al_push_result *r)
{
	al_store_push p;
	int rc;

	memset(&p, 0, sizeof(p));
	p.registry = (char *)o->registry;
	p.prefix = (char *)(o->prefix != NULL ? o->prefix : "");
	p.time = al_clock_rfc3339_now();
	p.images = r->stats.images;
	p.failed = r->failed;
	p.max_nested_paths = o->max_nested;
	p.digest_tags = !(o->flags & AL_PUSH_NO_DIGEST_TAGS);
	p.source_layout = o->layout == AL_LAYOUT_SOURCE;
	if ((rc = al_store_push_put(s, &p)) < 0) {
		r->record_status = rc;
		r->record_message = al_strdup(al_error_message());
	} else {
		r->recorded = 1;
	}
	free(p.time);
}

/*
 * What the registry held after the push, into airlock/pushed.json: every
 * image pushed or confirmed is recorded at its destination with its
 * digest, every image that failed is forgotten (its destination may hold
 * anything now). A failure to write is logged (debug: a read-only
 * medium fails the push record too, and that is what the caller warns
 * of): the next push then asks the registry more, nothing worse.
 */
static void record_pushed(al_store *s, const al_push_opts *o,
                          const al_push_result *r)
{
	json_t *set = json_object(), *drop = json_object();
	char ds[AL_DIGEST_STRMAX];
	size_t i;
	int rc = 0;

	if (set == NULL || drop == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < r->nimages && rc == 0; i++) {
		const al_push_image *img = &r->images[i];

		if (!img->queued || img->destination == NULL)
			continue;
		if (img->status == 0)
			rc = json_object_set_new(
			    set, img->destination,
			    json_string(al_digest_str(&img->digest, ds)));
		else
			rc = json_object_set_new(drop, img->destination,
			                         json_true());
		if (rc != 0)
			rc = al_error_set(AL_ENOMEM, "out of memory");
	}
	if (rc == 0)
		rc = al_store__pushed_update(s, o->registry, set, drop);
out:
	if (rc < 0) {
		al_log_debug("push: cannot record what '%s' holds in '%s': %s",
		             o->registry, al_store_path(s), al_error_message());
		al_error_clear();
	}
	json_decref(set);
	json_decref(drop);
}

/* The digest pushed.json records at dest, into *d: 1, else 0. */
static int recorded_digest(const json_t *pushed, const char *dest, al_digest *d)
{
	const char *v = json_string_value(json_object_get(pushed, dest));

	return v != NULL && al_digest_parse_str(d, v) == 0;
}

/* Worse of two statuses: the first failure wins, AL_EVERIFY over others
 * (a verification failure is what the caller most needs to see). */
static int worst(int a, int b)
{
	if (a == AL_EVERIFY || b == AL_EVERIFY)
		return AL_EVERIFY;
	return a < 0 ? a : b;
}

/* Each queued destination's outcome into r (status, digest, message,
 * r->failed), *worst_rc the worst status met; 0, or AL_ENOMEM. */
static int collect_results(al_transfer *t, const int *queued, al_push_result *r,
                           int *worst_rc)
{
	size_t i;

	for (i = 0; i < r->nimages; i++) {
		al_push_image *img = &r->images[i];
		const char *msg = "";
		int st = AL_EINVAL;

		if (queued[i] < 0) {
			r->failed++;
			continue;
		}
		al_transfer_result(t, queued[i], &st, &img->digest, NULL, &msg);
		img->status = st;
		if (st == 0)
			continue;
		r->failed++;
		*worst_rc = worst(*worst_rc, st);
		if ((img->message = al_strdup(msg)) == NULL)
			return al_error_set(AL_ENOMEM, "out of memory");
	}
	return 0;
}

/* What queue_places needs of al_push_store's run. */
struct push_queue {
	al_store *s;
	const al_push_opts *o;
	al_push_result *r;
	al_transfer *t;
	al_layout *layout;
	json_t *pushed;      /* the push record of this registry, or NULL */
	const char *prefix;  /* o->prefix or "" */
	const char **sorted; /* the store's names, sorted, for tag_taken */
	size_t nimgs;
	int *queued; /* per destination: its transfer image, or -1 */
	size_t ndest;
};

/*
 * Queue one destination per place the layout gives the store's image
 * name, from *j on (advanced past them): r->images[*j] filled, queued to
 * the transfer, expected at the digest the push record gives. A place
 * that cannot be queued is a failed image (its status folded into
 * *worst_rc); only an allocation failure is returned.
 */
static int queue_places(struct push_queue *q, const char *name, size_t *j,
                        int *worst_rc)
{
	size_t k, n = al_push_target_count(q->layout, name);
	int rc;

	for (k = 0; k < n && *j < q->ndest; k++, (*j)++) {
		al_push_image *img = &q->r->images[*j];
		al_digest was;

		q->queued[*j] = -1;
		q->r->nimages = *j + 1;
		if ((img->source = al_strdup(name)) == NULL)
			return al_error_set(AL_ENOMEM, "out of memory");
		rc = dest_of(img, q->layout, k, q->prefix, q->o->max_nested,
		             !(q->o->flags & AL_PUSH_NO_DIGEST_TAGS),
		             (const char *const *)q->sorted, q->nimgs);
		if (rc == 0) {
			rc = al_transfer_add_from_store(q->t, q->s, name,
			                                img->destination);
			if (rc < 0)
				rc = al_error_wrap(rc, "cannot queue '%s'",
				                   name);
		}
		if (rc < 0) {
			*worst_rc = worst(*worst_rc, rc);
			if ((rc = fail_image(img, rc)) < 0)
				return rc;
			continue;
		}
		q->queued[*j] = (int)al_transfer_count(q->t) - 1;
		img->queued = 1;
		if (recorded_digest(q->pushed, img->destination, &was) &&
		    (rc = al_transfer_expect(q->t, q->queued[*j], &was)) < 0)
			return rc;
	}
	return 0;
}

/*
 * One destination per place the layout gives an image (a component two
 * releases share: one tag per release), each its own transfer image
 * (al_transfer_add_from_store queues one destination): r->images and
 * *queued sized for them (*ndest), and *sorted the store's names, sorted,
 * for tag_taken.
 */
static int alloc_dests(al_push_result *r, al_layout *layout,
                       const al_store_image *imgs, size_t nimgs, size_t *ndest,
                       int **queued, const char ***sorted)
{
	size_t i;

	for (i = 0; i < nimgs; i++) {
		size_t k = al_push_target_count(layout, imgs[i].name);

		if (*ndest > SIZE_MAX / sizeof(*r->images) - k - 1)
			return al_error_set(AL_ENOMEM, "out of memory");
		*ndest += k;
	}
	r->images = calloc(*ndest + 1, sizeof(*r->images));
	*queued = calloc(*ndest + 1, sizeof(**queued));
	*sorted = calloc(nimgs + 1, sizeof(**sorted));
	if (r->images == NULL || *queued == NULL || *sorted == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	for (i = 0; i < nimgs; i++)
		(*sorted)[i] = imgs[i].name;
	qsort(*sorted, nimgs, sizeof(**sorted), cmp_str);
	return 0;
}

int al_push_store(al_store *s, const al_push_opts *o, al_push_result *r)
{
	al_transfer_opts to = AL_TRANSFER_OPTS_INIT;
	al_transfer *t = NULL;
	al_layout *layout = NULL;
	al_store_image *imgs = NULL;
	json_t *pushed = NULL;
	char *upload_dir = NULL;
	char **marked = NULL;
	size_t nmarked = 0, left_out = 0;
	const char **sorted = NULL;
	const char *prefix;
	int *queued = NULL;
	size_t nimgs = 0, ndest = 0, i, j;
	struct push_queue q;
	int rc = 0, worst_rc = 0;

	if (r == NULL || s == NULL || o == NULL)
		return al_error_set(AL_EINVAL, "al_push_store: no registry");
	if ((rc = AL_RESULT_VERSION_CHECK("al_push_result", r, version,
	                                  AL_PUSH_RESULT_VERSION)) < 0)
		return rc;
	AL_RESULT_ZERO_STATS(r);
	if ((rc = al_opts_version_check("al_push_opts", o->version,
	                                AL_PUSH_OPTS_VERSION)) < 0)
		return rc;
	if (o->registry == NULL || o->registry[0] == '\0')
		return al_error_set(AL_EINVAL, "al_push_store: no registry");
	prefix = o->prefix != NULL ? o->prefix : "";
	if (o->transfer != NULL)
		to = *o->transfer;
	if ((rc = al_store_list(s, &imgs, &nimgs)) < 0) {
		rc = al_error_wrap(rc, "cannot read store '%s'",
		                   al_store_path(s));
		goto out;
	}
	/* docs/security.md "Marks of untrusted imports": what no key
	 * vouched for stays in the store unless the caller asks for it */
	if (!(o->flags & AL_PUSH_UNTRUSTED) &&
	    (rc = marked_names(s, &marked, &nmarked)) < 0) {
		rc = al_error_wrap(rc,
		                   "cannot read the untrusted marks of "
		                   "store '%s'",
		                   al_store_path(s));
		goto out;
	}
	if (o->layout != AL_LAYOUT_SOURCE &&
	    (rc = al_layout_open(&layout, s, o->layout)) < 0) {
		rc = al_error_wrap(rc, "cannot read the records of store '%s'",
		                   al_store_path(s));
		goto out;
	}
	if ((rc = al_transfer_new_to_registry(&t, o->registry, &to)) < 0) {
		rc = al_error_wrap(rc, "cannot push to '%s'", o->registry);
		goto out;
	}
	/* What earlier pushes left at this registry: confirmed with one HEAD
	 * per image instead of asked blob by blob. A record that cannot be
	 * read costs only those requests. */
	if (!(o->flags & (AL_PUSH_RECHECK | AL_PUSH_NO_RECORD)) &&
	    al_store__pushed_get(s, o->registry, &pushed) < 0) {
		al_log_warn("push: ignoring what '%s' records of earlier "
		            "pushes: %s",
		            al_store_path(s), al_error_message());
		al_error_clear();
	}
	if (!(o->flags & AL_PUSH_NO_RECORD)) {
		upload_dir = al_path_join(al_store_path(s), "airlock/uploads");
		if (upload_dir == NULL ||
		    (rc = al_transfer_set_upload_dir(t, upload_dir)) < 0) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
	}
	if ((rc = alloc_dests(r, layout, imgs, nimgs, &ndest, &queued,
	                      &sorted)) < 0)
		goto out;
	q = (struct push_queue){s,      o,      r,     t,      layout, pushed,
	                        prefix, sorted, nimgs, queued, ndest};
	for (i = 0, j = 0; i < nimgs; i++) {
		const char *key = imgs[i].name;

		if (nmarked > 0 && bsearch(&key, marked, nmarked,
		                           sizeof(*marked), cmp_str) != NULL) {
			/* not queued, not in the result: the push record
			 * and the cluster resources name none of it */
			al_log_debug("push: leaving out '%s': set by an "
			             "untrusted import",
			             key);
			left_out++;
			continue;
		}
		if ((rc = queue_places(&q, key, &j, &worst_rc)) < 0)
			goto out;
	}
	if (left_out > 0)
		al_log_warn("push: %zu name(s) set by an untrusted import left "
		            "out (airlock check lists them; --push-untrusted "
		            "pushes them)",
		            left_out);
	rc = al_transfer_run(t, &r->stats);
	r->ran = 1;
	worst_rc = worst(worst_rc, rc);
	if ((rc = collect_results(t, queued, r, &worst_rc)) < 0)
		goto out;
	if (!(o->flags & AL_PUSH_NO_RECORD))
		record_pushed(s, o, r);
	if (!(o->flags & AL_PUSH_NO_RECORD) && r->stats.images > 0)
		record(s, o, r);
	rc = worst_rc;
	if (rc < 0)
		al_error_set(rc, "%zu of %zu images not pushed to '%s'",
		             r->failed, r->nimages, o->registry);
out:
	r->status = rc;
	if (rc < 0)
		r->message = al_strdup(al_error_message());
	free(queued);
	free(sorted);
	al__strv_free(marked, nmarked);
	free(upload_dir);
	json_decref(pushed);
	al_transfer_free(t);
	al_layout_free(layout);
	al_store_images_free(imgs, nimgs);
	return rc;
}
