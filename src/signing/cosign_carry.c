/* cosign_carry.c: copying the sigstore attachments of mirrored images (cosign
 * tags, referrers) from their source registries into the store, with the
 * referrers tag-schema index a registry without the referrers API needs. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "airlock/cosign.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/log.h"
#include "json_int.h"
#include "airlock/oci.h"
#include "array_int.h"
#include "cosign_int.h"
#include "error_int.h"

void al_cosign_carry_report_clear(al_cosign_carry_report *r)
{
	if (r == NULL)
		return;
	free(r->first_error);
	AL_RESULT_ZERO(r);
}

static void note_failure(al_cosign_carry_report *r, int rc, int *worst,
                         const char *what)
{
	r->failed++;
	if (r->first_error == NULL)
		r->first_error = al_sprintf("%s: %s", what, al_error_message());
	if (*worst == 0 || (rc < 0 && rc > *worst))
		*worst = rc;
}

int al__cosign_is_attachment_tag(const char *tag)
{
	size_t i;

	if (tag == NULL || strncmp(tag, "sha256-", 7) != 0 ||
	    strlen(tag) < 7 + 64)
		return 0;
	for (i = 7; i < 7 + 64; i++) {
		if (!((tag[i] >= '0' && tag[i] <= '9') ||
		      (tag[i] >= 'a' && tag[i] <= 'f')))
			return 0;
	}
	return tag[71] == '\0' || strcmp(tag + 71, ".sig") == 0 ||
	       strcmp(tag + 71, ".att") == 0 || strcmp(tag + 71, ".sbom") == 0;
}

int al__cosign_is_artifact(al_store *s, const al_descriptor *d)
{
	al_buf b = AL_BUF_INIT(AL_MANIFEST_MAX);
	json_t *j = NULL;
	int yes = 0;

	if (al_store_read_blob(s, &d->digest, &b) == 0 &&
	    al_json_parse(&j, b.ptr, b.len, "manifest") == 0)
		yes = json_object_get(j, "subject") != NULL ||
		      json_object_get(j, "artifactType") != NULL;
	json_decref(j);
	al_buf_free(&b);
	al_error_clear();
	return yes;
}

static int host_insecure(const al_transfer_opts *o, const char *host)
{
	const char *const *h;

	if (o->all_insecure)
		return 1;
	for (h = o->insecure_hosts; h != NULL && *h != NULL; h++) {
		if (strcmp(*h, host) == 0)
			return 1;
	}
	return 0;
}

/* The opts->sources entry name is read through (transfer.h), or NULL. */
static const al_imageset_source *remapped(const al_transfer_opts *o,
                                          const char *name)
{
	size_t i, n;

	for (i = 0; i < o->nsources; i++) {
		const char *p = o->sources[i].prefix;

		if (p == NULL || o->sources[i].location == NULL)
			continue;
		n = strlen(p);
		if (strncmp(name, p, n) == 0 &&
		    (name[n] == '\0' || name[n] == '/' || name[n] == ':' ||
		     name[n] == '@'))
			return &o->sources[i];
	}
	return NULL;
}

/* One worker's registry client, kept from job to job while the host
 * stays the same (a new client per image is a new connection and a new
 * token per image). */
typedef struct carry_conn {
	al_registry *reg;
	char *host;
	int insecure;
} carry_conn;

static void carry_conn_clear(carry_conn *c)
{
	al_registry_free(c->reg);
	free(c->host);
	memset(c, 0, sizeof(*c));
}

/* c's client for host, made when c holds another host's. */
static int carry_conn_for(carry_conn *c, const char *host, int insecure,
                          const al_registry_opts *base)
{
	al_registry_opts ro = *base;
	int rc;

	if (c->reg != NULL && c->insecure == insecure &&
	    strcmp(c->host, host) == 0)
		return 0;
	carry_conn_clear(c);
	ro.insecure = insecure;
	if ((c->host = al_strdup(host)) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	if ((rc = al_registry_new(&c->reg, host, &ro)) < 0) {
		carry_conn_clear(c);
		return rc;
	}
	c->insecure = insecure;
	return 0;
}

/* An OCI layout that airlock.sources reads from, opened once per run and
 * shared by the workers (al_store reads are thread-safe): opening it per
 * image parsed its whole index.json per image, O(images^2). */
typedef struct carry_layout {
	char *dir;
	al_store *st;
} carry_layout;

#define CARRY_LAYOUTS_MAX 64

/*
 * The referrer manifest's own annotations onto its descriptor e in the
 * referrers index, as a registry's referrers API lists them and as a
 * client updating the tag schema writes them (distribution-spec 1.1
 * "Listing Referrers", "Pushing Manifests with Subject"): cosign puts
 * dev.sigstore.bundle.content, dev.sigstore.bundle.predicateType and
 * org.opencontainers.image.created there (cosign specs/BUNDLE_SPEC.md
 * "Annotations") to tell its bundles apart without fetching each.
 * Annotations that are not an object of strings are left out.
 */
static int copy_annotations(json_t *e, const al_cosign_artifact *a)
{
	json_t *m = NULL, *ann, *v, *out = NULL;
	const char *k;
	int rc = 0;

	if ((rc = al_json_parse(&m, a->manifest, a->manifest_len, "referrer")) <
	    0) {
		al_error_clear();
		return rc == AL_ENOMEM ? rc : 0; /* nothing to copy */
	}
	ann = json_object_get(m, "annotations");
	if (!json_is_object(ann) || json_object_size(ann) == 0)
		goto out;
	json_object_foreach(ann, k, v)
	{
		if (!json_is_string(v))
			goto out;
	}
	if ((out = json_deep_copy(ann)) == NULL ||
	    json_object_set_new(e, "annotations", out) < 0)
		rc = al_error_set(AL_ENOMEM, "out of memory");
out:
	json_decref(m);
	return rc;
}

/* Write the referrers index of one image into the store. */
static int write_index(al_store *s, const char *base, const al_digest *image,
                       const al_cosign_found *f)
{
	json_t *idx = NULL, *list = NULL, *e;
	al_descriptor desc;
	char ds[AL_DIGEST_STRMAX], hex[AL_DIGEST_STRMAX];
	char *body = NULL, *name = NULL;
	size_t i;
	int rc;

	memset(&desc, 0, sizeof(desc));
	if ((list = json_array()) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	for (i = 0; i < f->n; i++) {
		const al_cosign_artifact *a = &f->items[i];
		al_store_image have;
		char *nm;
		int found;

		if (a->kind != AL_COSIGN_KIND_REFERRER)
			continue;
		/* only what arrived: the index must not name a missing
		 * manifest */
		memset(&have, 0, sizeof(have));
		nm = al_sprintf("%s@%s", base, al_digest_str(&a->digest, ds));
		found = nm != NULL && al_store_find(s, nm, &have) == 0;
		free(nm);
		al_store_image_clear(&have);
		al_error_clear();
		if (!found)
			continue;
		e = json_pack("{s:s,s:s,s:I}", "mediaType",
		              a->media_type != NULL ? a->media_type
		                                    : AL_MT_OCI_MANIFEST,
		              "digest", al_digest_str(&a->digest, ds), "size",
		              (json_int_t)a->manifest_len);
		if (e == NULL ||
		    (a->artifact_type != NULL &&
		     json_object_set_new(e, "artifactType",
		                         json_string(a->artifact_type)) < 0) ||
		    copy_annotations(e, a) < 0) {
			json_decref(e);
			json_decref(list);
			return al_error_set(AL_ENOMEM, "out of memory");
		}
		if (json_array_append_new(list, e) < 0) {
			json_decref(list);
			return al_error_set(AL_ENOMEM, "out of memory");
		}
	}
	if (json_array_size(list) == 0) {
		json_decref(list);
		return 0;
	}
	idx = json_pack("{s:i,s:s,s:o}", "schemaVersion", 2, "mediaType",
	                AL_MT_OCI_INDEX, "manifests", list);
	if (idx == NULL || (body = json_dumps(idx, JSON_COMPACT)) == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = al_store_put_blob(s, (const uint8_t *)body, strlen(body),
	                            &desc.digest)) < 0)
		goto out;
	desc.size = strlen(body);
	desc.media_type = (char *)AL_MT_OCI_INDEX;
	al_digest_hex(image, hex);
	if ((name = al_sprintf("%s:%s-%s", base,
	                       al_digest_algo_name(image->algo), hex)) ==
	    NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = al_store_tag(s, name, &desc)) < 0)
		goto out;
	/* the index names its referrers from now on: one store image, so
	 * push sends the children before the index in one piece (pushed as
	 * separate images too, the index could race its own children) */
	for (i = 0; i < f->n; i++) {
		const al_cosign_artifact *a = &f->items[i];
		char *nm;

		if (a->kind != AL_COSIGN_KIND_REFERRER)
			continue;
		nm = al_sprintf("%s@%s", base, al_digest_str(&a->digest, ds));
		if (nm != NULL)
			(void)al_store_untag(s, nm);
		free(nm);
		al_error_clear();
	}
out:
	free(name);
	free(body);
	json_decref(idx);
	return rc;
}

/* One image whose attachments are looked up, and what was found. */
typedef struct carry_job {
	size_t img;       /* index into the store's image list */
	char *base;       /* REGISTRY/REPO */
	al_digest digest; /* the image's manifest digest */
	al_cosign_found found;
	int rc;      /* 0 or the lookup's status */
	char *error; /* its message (al_error is per thread) */
} carry_job;

/* Registries whose referrers API answered "none" (404 and the like): a
 * registry with the API never does (distribution-spec 1.1), so the others
 * of the run go straight to the tag schema. */
#define CARRY_NO_API_MAX 64
#define CARRY_THREADS_DEFAULT 16 /* transfer.c DEFAULT_PARALLEL */

typedef struct carry_pool {
	carry_job *jobs;
	size_t njobs, next;
	unsigned what;
	const al_transfer_opts *opts;
	pthread_mutex_t lock;
	char no_api[CARRY_NO_API_MAX][256];
	size_t nno_api;
	carry_layout layouts[CARRY_LAYOUTS_MAX]; /* under lock */
	size_t nlayouts;
	/* "REGISTRY/REPO" -> its tags (an object used as a set), null when
	 * the listing failed (each tag is asked then), false while a worker
	 * lists it (the others wait on cond); under lock */
	json_t *repos;
	pthread_cond_t cond;
} carry_pool;

/*
 * The tags of base's repository, listed once per run however many of its
 * images are looked up (al_registry_list_tags, paginated): the signature
 * tags of each image are then asked only when they exist. NULL when the
 * listing failed: the lookups ask for each tag as before. Borrowed from
 * p->repos, which lives until every lookup is done.
 */
static const json_t *repo_tags(carry_pool *p, al_registry *reg,
                               const char *repo, const char *base)
{
	json_t *v, *set = NULL;
	char **tags = NULL;
	size_t n = 0, i;

	pthread_mutex_lock(&p->lock);
	while ((v = json_object_get(p->repos, base)) != NULL &&
	       json_is_false(v))
		pthread_cond_wait(&p->cond, &p->lock);
	if (v != NULL || json_object_set_new(p->repos, base, json_false())) {
		pthread_mutex_unlock(&p->lock);
		return json_is_object(v) ? v : NULL;
	}
	pthread_mutex_unlock(&p->lock);
	if (al_registry_list_tags(reg, repo, &tags, &n) == 0 &&
	    (set = json_object()) != NULL) {
		for (i = 0; i < n && set != NULL; i++)
			if (json_object_set_new(set, tags[i], json_true()) !=
			    0) {
				json_decref(set);
				set = NULL;
			}
	} else {
		al_log_debug("sigstore: cannot list the tags of '%s' (%s): "
		             "asking for each signature tag",
		             base, al_error_message());
	}
	al_error_clear();
	for (i = 0; i < n; i++)
		free(tags[i]);
	free(tags);
	pthread_mutex_lock(&p->lock);
	/* set stays alive in p->repos: the returned pointer is borrowed */
	if (json_object_set_new(p->repos, base,
	                        set != NULL ? set : json_null()) != 0)
		set = NULL;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	return set;
}

/* p's layout dir, opened at its first use (under p->lock: the others
 * wait for it rather than open it too). */
static int pool_layout(carry_pool *p, const char *dir, al_store **out)
{
	al_store_opts so = {.readonly = 1};
	carry_layout *l;
	size_t i;
	int rc = 0;

	pthread_mutex_lock(&p->lock);
	for (i = 0; i < p->nlayouts; i++)
		if (strcmp(p->layouts[i].dir, dir) == 0) {
			*out = p->layouts[i].st;
			goto out;
		}
	if (p->nlayouts == CARRY_LAYOUTS_MAX) {
		rc = al_error_set(AL_ELIMIT, "more than %d OCI layout sources",
		                  CARRY_LAYOUTS_MAX);
		goto out;
	}
	l = &p->layouts[p->nlayouts];
	if ((l->dir = al_strdup(dir)) == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = al_store_open(&l->st, dir, &so)) < 0) {
		free(l->dir);
		l->dir = NULL;
		goto out;
	}
	p->nlayouts++;
	*out = l->st;
out:
	pthread_mutex_unlock(&p->lock);
	return rc;
}

/*
 * Where the attachments of the image named base (registry/repository) are
 * looked up: its registry, or what airlock.sources puts in its place
 * (docker://HOST/NS: the same rest under HOST/NS; oci:DIR: the layout,
 * where images keep their full names). The source borrows conn's client
 * or a layout of the pool's; *repo_out (caller frees) is what it borrows
 * of the repository name.
 */
static int open_source(al_cosign_source **src, carry_conn *conn, carry_pool *p,
                       char **repo_out, const char *base,
                       const al_transfer_opts *opts)
{
	const al_imageset_source *m = remapped(opts, base);
	al_store *layout = NULL;
	al_ref r;
	char *where = NULL;
	int rc;

	memset(&r, 0, sizeof(r));
	if (m != NULL && al_str_startswith(m->location, "oci:")) {
		if ((rc = pool_layout(p, m->location + 4, &layout)) < 0)
			return rc;
		return al_cosign_source_store(src, layout, base);
	}
	if (m != NULL && al_str_startswith(m->location, "docker://"))
		where = al_sprintf("%s%s", m->location + 9,
		                   base + strlen(m->prefix));
	else if (m != NULL)
		return al_error_set(AL_EUNSUPPORTED,
		                    "source location '%s' for '%s'",
		                    m->location, base);
	else
		where = al_strdup(base);
	if (where == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	rc = al_ref_parse(&r, where);
	free(where);
	if (rc < 0)
		return rc;
	if ((rc = carry_conn_for(conn, r.registry,
	                         host_insecure(opts, r.registry),
	                         &opts->registry)) == 0) {
		*repo_out = r.repository;
		r.repository = NULL;
		rc = al_cosign_source_registry(src, conn->reg, *repo_out);
	}
	al_ref_clear(&r);
	return rc;
}

/* The registry host of base (up to the first '/'). */
static size_t host_len(const char *base)
{
	const char *slash = strchr(base, '/');

	return slash != NULL ? (size_t)(slash - base) : strlen(base);
}

/* Under p->lock. */
static int no_api_locked(const carry_pool *p, const char *base)
{
	size_t i, n = host_len(base);

	for (i = 0; i < p->nno_api; i++)
		if (strlen(p->no_api[i]) == n &&
		    strncmp(p->no_api[i], base, n) == 0)
			return 1;
	return 0;
}

static void carry_one(carry_pool *p, carry_conn *conn, carry_job *j)
{
	al_cosign_source *src = NULL;
	char *repo = NULL;
	unsigned what = p->what;
	size_t n = host_len(j->base);

	pthread_mutex_lock(&p->lock);
	if (no_api_locked(p, j->base))
		what |= AL_COSIGN__FIND_NO_API;
	pthread_mutex_unlock(&p->lock);
	j->rc = open_source(&src, conn, p, &repo, j->base, p->opts);
	/* a registry source: its tags listed once, not asked one by one */
	if (j->rc == 0 && repo != NULL && p->repos != NULL &&
	    ((what & (AL_COSIGN_FIND_SIG | AL_COSIGN_FIND_ATT |
	              AL_COSIGN_FIND_SBOM)) != 0 ||
	     ((what & AL_COSIGN_FIND_REFERRERS) != 0 &&
	      (what & AL_COSIGN__FIND_NO_API) != 0)))
		al_cosign__source_known_tags(
		    src, repo_tags(p, conn->reg, repo, j->base));
	if (j->rc == 0)
		j->rc = al_cosign_discover(&j->found, src, &j->digest, what);
	if (j->rc < 0) {
		j->error = al_strdup(al_error_message());
	} else if (repo != NULL && (what & AL_COSIGN_FIND_REFERRERS) != 0 &&
	           (what & AL_COSIGN__FIND_NO_API) == 0 &&
	           !j->found.referrers_api && n < sizeof(p->no_api[0])) {
		pthread_mutex_lock(&p->lock);
		if (p->nno_api < CARRY_NO_API_MAX &&
		    !no_api_locked(p, j->base)) {
			memcpy(p->no_api[p->nno_api], j->base, n);
			p->no_api[p->nno_api][n] = '\0';
			p->nno_api++;
		}
		pthread_mutex_unlock(&p->lock);
	}
	al_error_clear();
	al_cosign_source_free(src);
	free(repo);
}

/* Take jobs until none is left, with conn's client (cleared at the
 * end). */
static void carry_jobs(carry_pool *p, carry_conn *conn)
{
	for (;;) {
		carry_job *j = NULL;

		pthread_mutex_lock(&p->lock);
		if (p->next < p->njobs)
			j = &p->jobs[p->next++];
		pthread_mutex_unlock(&p->lock);
		if (j == NULL)
			break;
		carry_one(p, conn, j);
	}
	carry_conn_clear(conn);
}

static void *carry_worker(void *arg)
{
	carry_conn conn;

	memset(&conn, 0, sizeof(conn));
	carry_jobs(arg, &conn);
	return NULL;
}

/* Look every job up, opts->parallel at a time (the lookups are round
 * trips to the sources; the copies go through one transfer after). */
static int carry_lookups(carry_pool *p)
{
	pthread_t th[64];
	size_t nth =
	    p->opts->parallel != 0 ? p->opts->parallel : CARRY_THREADS_DEFAULT;
	size_t i, started = 0;
	carry_conn conn;

	memset(&conn, 0, sizeof(conn));
	if (nth > sizeof(th) / sizeof(th[0]))
		nth = sizeof(th) / sizeof(th[0]);
	if (nth > p->njobs)
		nth = p->njobs;
	if (pthread_mutex_init(&p->lock, NULL) != 0)
		return al_error_set(AL_ENOMEM, "cannot create a mutex");
	if (pthread_cond_init(&p->cond, NULL) != 0) {
		pthread_mutex_destroy(&p->lock);
		return al_error_set(AL_ENOMEM, "cannot create a condition");
	}
	/* NULL (out of memory): every tag asked, as before */
	p->repos = json_object();
	/* the first lookup alone: it learns whether the registry has the
	 * referrers API before the others ask */
	if (p->njobs > 0) {
		p->next = 1;
		carry_one(p, &conn, &p->jobs[0]);
	}
	for (i = 1; i < nth; i++) {
		if (pthread_create(&th[started], NULL, carry_worker, p) != 0)
			break;
		started++;
	}
	/* this thread works too (all of it if none started), with the
	 * first lookup's client rather than a new one */
	carry_jobs(p, &conn);
	for (i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	json_decref(p->repos);
	p->repos = NULL;
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	return 0;
}

static void pool_layouts_free(carry_pool *p)
{
	size_t i;

	for (i = 0; i < p->nlayouts; i++) {
		al_store_free(p->layouts[i].st);
		free(p->layouts[i].dir);
	}
	p->nlayouts = 0;
}

/* Queue the artifacts found for job j into t: each from the registry by
 * digest into the store, under its tag (tag-scheme artifacts) or by
 * digest (referrers); a failure is counted in report. */
static void queue_found(al_transfer *t, const carry_job *j,
                        al_cosign_carry_report *report, int *worst)
{
	size_t k;
	int rc;

	for (k = 0; k < j->found.n; k++) {
		const al_cosign_artifact *a = &j->found.items[k];
		char ds[AL_DIGEST_STRMAX];
		char *src_s = NULL, *dst = NULL;
		al_imgref ir;

		memset(&ir, 0, sizeof(ir));
		al_digest_str(&a->digest, ds);
		rc = 0;
		src_s = al_sprintf("docker://%s@%s", j->base, ds);
		dst = a->tag != NULL ? al_sprintf("%s:%s", j->base, a->tag)
		                     : al_sprintf("%s@%s", j->base, ds);
		if (src_s == NULL || dst == NULL ||
		    (rc = al_imgref_parse(&ir, src_s)) < 0 ||
		    (rc = al_transfer_add(t, &ir, dst)) < 0) {
			if (rc == 0)
				rc = al_error_set(AL_ENOMEM, "out of memory");
			note_failure(report, rc, worst,
			             dst != NULL ? dst : j->base);
		} else {
			report->artifacts++;
		}
		al_imgref_clear(&ir);
		free(src_s);
		free(dst);
	}
}

/* The transfer settings of a call that gives none. */
static const al_transfer_opts carry_defaults = AL_TRANSFER_OPTS_INIT;

int al_cosign_carry(al_store *s, const char *const *names, size_t n,
                    unsigned what, const al_transfer_opts *opts,
                    al_cosign_carry_report *report)
{
	al_store_image *imgs = NULL;
	size_t nimgs = 0, i, k;
	al_transfer *t = NULL;
	json_t *wanted_set = NULL; /* names, as a set: O(1) per image */
	carry_pool pool;
	int rc, worst = 0;

	if ((rc = AL_RESULT_VERSION_CHECK("al_cosign_carry_report", report,
	                                  version,
	                                  AL_COSIGN_CARRY_REPORT_VERSION)) < 0)
		return rc;
	AL_RESULT_ZERO(report);
	if (opts != NULL &&
	    (rc = al_opts_version_check("al_transfer_opts", opts->version,
	                                AL_TRANSFER_OPTS_VERSION)) < 0)
		return rc;
	if (opts == NULL)
		opts = &carry_defaults; /* the lookups read opts throughout */
	memset(&pool, 0, sizeof(pool));
	pool.what = what;
	pool.opts = opts;
	if ((rc = al_store_list(s, &imgs, &nimgs)) < 0)
		return rc;
	if (names != NULL) {
		if ((wanted_set = json_object()) == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		for (k = 0; k < n; k++)
			if (names[k] != NULL &&
			    json_object_set_new(wanted_set, names[k],
			                        json_true()) < 0) {
				rc = al_error_set(AL_ENOMEM, "out of memory");
				goto out;
			}
	}
	if ((rc = al_transfer_new_to_store(&t, s, opts)) < 0)
		goto out;
	if ((pool.jobs = calloc(nimgs + 1, sizeof(*pool.jobs))) == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	/* which store images: the ones asked for that are not attachments */
	for (i = 0; i < nimgs; i++) {
		carry_job *j = &pool.jobs[pool.njobs];
		al_ref r;
		int wanted = wanted_set == NULL ||
		             json_object_get(wanted_set, imgs[i].name) != NULL;

		memset(&r, 0, sizeof(r));
		if (!wanted || imgs[i].name[0] == '\0' ||
		    al_ref_parse(&r, imgs[i].name) < 0) {
			al_error_clear();
			continue;
		}
		if (al__cosign_is_attachment_tag(r.tag) ||
		    al__cosign_is_artifact(s, &imgs[i].desc)) {
			al_ref_clear(&r);
			continue;
		}
		report->images++;
		if (remapped(opts, imgs[i].name) != NULL)
			report->remapped++;
		j->img = i;
		j->digest = imgs[i].desc.digest;
		j->base = al_ref_name(&r);
		al_ref_clear(&r);
		if (j->base == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		pool.njobs++;
	}
	if ((rc = carry_lookups(&pool)) < 0)
		goto out;
	for (i = 0; i < pool.njobs; i++) {
		carry_job *j = &pool.jobs[i];

		if (j->rc < 0) {
			al_error_set(j->rc, "%s",
			             j->error != NULL ? j->error : "");
			note_failure(report, j->rc, &worst, imgs[j->img].name);
			continue;
		}
		report->skipped += j->found.skipped;
		report->unsigned_images += j->found.n == 0;
		queue_found(t, j, report, &worst);
	}
	if ((rc = al_transfer_run(t, NULL)) < 0) {
		report->failed++;
		if (report->first_error == NULL)
			report->first_error = al_strdup(al_error_message());
		if (worst == 0)
			worst = rc;
	}
	for (i = 0; i < pool.njobs; i++) {
		carry_job *j = &pool.jobs[i];
		size_t refs = 0;

		for (k = 0; k < j->found.n; k++)
			refs +=
			    j->found.items[k].kind == AL_COSIGN_KIND_REFERRER;
		if (j->rc < 0 || refs == 0)
			continue;
		if ((rc = write_index(s, j->base, &j->digest, &j->found)) < 0)
			note_failure(report, rc, &worst, imgs[j->img].name);
		else
			report->indexes++;
	}
	rc = worst;
out:
	for (i = 0; pool.jobs != NULL && i < pool.njobs; i++) {
		al_cosign_found_clear(&pool.jobs[i].found);
		free(pool.jobs[i].base);
		free(pool.jobs[i].error);
	}
	free(pool.jobs);
	pool_layouts_free(&pool);
	json_decref(wanted_set);
	al_transfer_free(t);
	al_store_images_free(imgs, nimgs);
	return rc;
}
