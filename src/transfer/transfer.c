/* transfer.c: the image transfer engine: manifests resolved, blobs moved once
 * in parallel, images tagged last. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <unistd.h>

#include <jansson.h>

#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/log.h"
#include "airlock/oci.h"
#include "airlock/transfer.h"
#include "array_int.h"
#include "store_int.h"
#include "transfer_upload_int.h"
#include "error_int.h"

/* The default --parallel: the fastest setting of mirror and push measured
 * with a WAN-like round trip (tests/bench/mirror_latency.sh, 20 ms: 16
 * beat 8 by 6% for mirror and 13% for push; docs/performance.md), and near
 * oc-mirror v2's 4 images x 5 layers at once. */
#define DEFAULT_PARALLEL 16
#define MAX_PARALLEL 64
#define MAX_INDEX_DEPTH 2
#define IO_CHUNK (256 * 1024)
/* An index may list one child many times (or many indexes one child): each
 * distinct manifest is fetched once per image, and what is kept per
 * manifest is its digest and media type (transfer.h). */
#define IMAGE_MANIFESTS_MAX AL_TRANSFER_IMAGE_MANIFESTS_MAX
#define RUN_MANIFESTS_MAX AL_TRANSFER_RUN_MANIFESTS_MAX
#define IMAGE_BLOBS_MAX AL_TRANSFER_IMAGE_BLOBS_MAX
/* The registry client's upload chunk when its options name none
 * (registry.c DEFAULT_CHUNK): blobs larger go in resumable PATCHes. */
#define UPLOAD_CHUNK_DEFAULT (16 * AL_MIB)

typedef enum { EP_REGISTRY = 1, EP_LAYOUT = 2 } ep_kind;

/* Where images are read from: a registry host or an OCI layout. */
typedef struct endpoint {
	ep_kind kind;
	char *host; /* EP_REGISTRY: API host */
	int insecure;
	char *path; /* EP_LAYOUT */
	al_store *layout;
	int owns_layout;
} endpoint;

/* A manifest (or index) of an image. Its bytes are kept only when they
 * cannot be read again at finish: a store destination gets them at once,
 * a registry destination re-reads them from the source layout. */
typedef struct mfile {
	al_digest digest;
	char *media_type;
	uint8_t *data; /* NULL: stored, or re-read from the source layout */
	size_t len;
	int height; /* 0: an image manifest; an index: 1 + its highest child */
} mfile;

typedef struct image {
	int run;    /* run number that owns it */
	int queued; /* not yet run */
	int hold;   /* store destination: do not tag (al_transfer_hold) */
	endpoint *src;
	char *src_repo; /* registry repository */
	char *src_ref;  /* tag or digest (registry), or NULL */
	char *src_name; /* layout: index name, or NULL for the only image */
	char *display;  /* for messages */
	char *dst_name; /* store destination: index name */
	char *dst_repo; /* registry destination */
	char *dst_ref;
	int status;
	char *message;
	al_descriptor top; /* what gets tagged */
	mfile *manifests;  /* children first, the top manifest last */
	size_t nmanifests, cap_manifests;
	size_t *blobs; /* indexes into t->blobs */
	size_t nblobs;
	al_descriptor *pending; /* blob descriptors collected in phase A */
	size_t npending;
	size_t cap_pending;
	json_t *seen; /* phase A: "m:<digest>" manifests walked, "b:<digest>"
	                 blobs collected */
	size_t nseen_manifests;
	/* registries.conf pull sources (regconf_sources): mirrors first, the
	 * location last, tried in order in phase A; alt is the one in use */
	endpoint **alt_src;
	char **alt_repo;
	int *alt_mirror;
	size_t nalts, alt;
	char *pulled_from; /* "host/repo" of the mirror it came from */
	/* registry destination: the top manifest digest the push record
	 * says the destination holds (al_transfer_expect); present: one
	 * HEAD confirmed it, nothing more is sent for the image */
	int expect;
	al_digest expected;
	int present;
} image;

typedef struct blob {
	al_digest digest;
	uint64_t size;
	endpoint *src;
	char *src_repo;
	char *dst_repo; /* registry destination repository */
	int status;
	char *message;
	int done;
	int first; /* first blob with this digest at a registry destination */
	char *mount_from;
} blob;

typedef struct client {
	char *host;
	al_registry *reg;
} client;

typedef struct worker {
	al_transfer *t;
	client *clients;
	size_t nclients;
	uint8_t *iobuf;
} worker;

struct al_transfer {
	al_transfer_opts opts;
	al_registry_opts regopts;
	unsigned parallel;
	al_store *dst_store;
	char *dst_host;
	int dst_insecure;
	endpoint **endpoints;
	size_t nendpoints;
	image *images;
	size_t nimages, cap_images;
	json_t *image_index; /* al_transfer_add: image_key -> index */
	blob *blobs;
	size_t nblobs, cap_blobs;
	json_t *blob_index; /* find_or_add_blob */
	worker *workers;
	int run;
	atomic_size_t run_manifests; /* distinct manifests walked this run */
	pthread_mutex_t lock;        /* progress counters and stats */
	al_progress_info prog;
	uint64_t started_ms;
	uint64_t last_report_ms;
	al_transfer_stats stats;
	char *upload_dir;  /* al_transfer_set_upload_dir, or NULL */
	struct mput *puts; /* phase D to a registry (finish_registry) */
};

static int tag_in_store(al_transfer *t, const image *img, const char *name);
static int regconf_sources(al_transfer *t, const al_ref *ref, image *img);
static int regconf_resolve(al_transfer *t, worker *w, image *img,
                           const char *ref);

/* ---- small helpers ---- */

static int set_image_error(image *img, int rc)
{
	free(img->message);
	img->message = al_sprintf("%s: %s", img->display, al_error_message());
	img->status = rc;
	return rc;
}

static int host_insecure(const al_transfer *t, const char *host)
{
	const char *const *h;

	if (t->opts.all_insecure)
		return 1;
	for (h = t->opts.insecure_hosts; h != NULL && *h != NULL; h++)
		if (strcmp(*h, host) == 0)
			return 1;
	return 0;
}

/* The API host for a registry name (Docker Hub answers elsewhere). */
static const char *api_host(const char *registry)
{
	if (strcmp(registry, "docker.io") == 0)
		return "registry-1.docker.io";
	return registry;
}

static void report_progress(al_transfer *t, int force)
{
	uint64_t now;
	al_progress_info info;

	if (t->opts.progress == NULL)
		return;
	pthread_mutex_lock(&t->lock);
	now = al_clock_now_ms();
	if (!force && now - t->last_report_ms < 200) {
		pthread_mutex_unlock(&t->lock);
		return;
	}
	t->last_report_ms = now;
	t->prog.elapsed_ms = now - t->started_ms;
	info = t->prog;
	t->opts.progress(&info, t->opts.progress_ud);
	pthread_mutex_unlock(&t->lock);
}

static void add_progress_bytes(void *ud, uint64_t n)
{
	al_transfer *t = ud;

	pthread_mutex_lock(&t->lock);
	t->prog.bytes_done += n;
	pthread_mutex_unlock(&t->lock);
	report_progress(t, 0);
}

/* ---- endpoints ---- */

static void endpoint_free(endpoint *ep)
{
	if (ep == NULL)
		return;
	if (ep->owns_layout)
		al_store_free(ep->layout);
	free(ep->host);
	free(ep->path);
	free(ep);
}

static int get_endpoint(al_transfer *t, ep_kind kind, const char *key,
                        al_store *layout, endpoint **out)
{
	endpoint *ep = NULL, **grown;
	size_t i;
	int rc = 0;

	for (i = 0; i < t->nendpoints; i++) {
		endpoint *e = t->endpoints[i];
		if (e->kind != kind)
			continue;
		if (kind == EP_REGISTRY && strcmp(e->host, key) == 0)
			goto found;
		if (kind == EP_LAYOUT && layout != NULL && e->layout == layout)
			goto found;
		if (kind == EP_LAYOUT && layout == NULL && e->path != NULL &&
		    strcmp(e->path, key) == 0)
			goto found;
		continue;
	found:
		*out = e;
		return 0;
	}
	ep = calloc(1, sizeof(*ep));
	if (ep == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	ep->kind = kind;
	if (kind == EP_REGISTRY) {
		ep->host = al_strdup(key);
		ep->insecure = host_insecure(t, key);
		if (ep->host == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
	} else if (layout != NULL) {
		ep->layout = layout;
		ep->path = al_strdup(al_store_path(layout));
	} else {
		al_store_opts so = {.readonly = 1};
		ep->path = al_strdup(key);
		if (ep->path == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		if ((rc = al_store_open(&ep->layout, key, &so)) < 0) {
			rc = al_error_wrap(rc, "cannot open OCI layout '%s'",
			                   key);
			goto out;
		}
		ep->owns_layout = 1;
	}
	grown = realloc(t->endpoints, (t->nendpoints + 1) * sizeof(*grown));
	if (grown == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	t->endpoints = grown;
	t->endpoints[t->nendpoints++] = ep;
	*out = ep;
	ep = NULL;
out:
	endpoint_free(ep);
	return rc;
}

/* ---- workers and registry clients ---- */

static int worker_client(worker *w, const char *host, int insecure,
                         al_registry **out)
{
	al_registry_opts ro;
	client *grown;
	al_registry *reg = NULL;
	size_t i;
	int rc;

	for (i = 0; i < w->nclients; i++) {
		if (strcmp(w->clients[i].host, host) == 0) {
			*out = w->clients[i].reg;
			return 0;
		}
	}
	ro = w->t->regopts;
	ro.insecure = insecure;
	if ((rc = al_registry_new(&reg, host, &ro)) < 0)
		return rc;
	grown = realloc(w->clients, (w->nclients + 1) * sizeof(*grown));
	if (grown == NULL) {
		al_registry_free(reg);
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	w->clients = grown;
	w->clients[w->nclients].host = al_strdup(host);
	if (w->clients[w->nclients].host == NULL) {
		al_registry_free(reg);
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	w->clients[w->nclients].reg = reg;
	w->nclients++;
	*out = reg;
	return 0;
}

static void worker_clear(worker *w)
{
	size_t i;

	for (i = 0; i < w->nclients; i++) {
		al_registry_free(w->clients[i].reg);
		free(w->clients[i].host);
	}
	free(w->clients);
	free(w->iobuf);
	w->clients = NULL;
	w->nclients = 0;
	w->iobuf = NULL;
}

typedef int (*job_fn)(al_transfer *t, worker *w, size_t job);

typedef struct pool {
	al_transfer *t;
	size_t *jobs;
	size_t njobs;
	atomic_size_t next;
	job_fn fn;
} pool;

typedef struct pool_thread {
	pool *p;
	worker *w;
} pool_thread;

static void *pool_main(void *arg)
{
	pool_thread *pt = arg;
	pool *p = pt->p;

	for (;;) {
		size_t i = atomic_fetch_add(&p->next, 1);
		if (i >= p->njobs)
			break;
		p->fn(p->t, pt->w, p->jobs[i]);
	}
	return NULL;
}

/* Run fn over jobs with up to t->parallel threads (each bound to one
 * persistent worker so connections are reused between phases). */
static int run_pool(al_transfer *t, size_t *jobs, size_t njobs, job_fn fn)
{
	pthread_t threads[MAX_PARALLEL];
	pool_thread pts[MAX_PARALLEL];
	pool p;
	unsigned n, i, started = 0;

	if (njobs == 0)
		return 0;
	p.t = t;
	p.jobs = jobs;
	p.njobs = njobs;
	atomic_init(&p.next, 0);
	p.fn = fn;
	n = t->parallel;
	if (n > njobs)
		n = (unsigned)njobs;
	if (n <= 1) {
		pts[0].p = &p;
		pts[0].w = &t->workers[0];
		pool_main(&pts[0]);
		return 0;
	}
	for (i = 0; i < n; i++) {
		pts[i].p = &p;
		pts[i].w = &t->workers[i];
		if (pthread_create(&threads[i], NULL, pool_main, &pts[i]) != 0)
			break;
		started++;
	}
	if (started == 0) {
		pts[0].p = &p;
		pts[0].w = &t->workers[0];
		pool_main(&pts[0]);
	}
	for (i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	return 0;
}

/* ---- construction ---- */

static int transfer_new(al_transfer **out, const al_transfer_opts *opts)
{
	al_transfer *t;
	unsigned i;
	int rc;

	if (opts != NULL &&
	    (rc = al_opts_version_check("al_transfer_opts", opts->version,
	                                AL_TRANSFER_OPTS_VERSION)) < 0)
		return rc;
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	if (opts != NULL)
		t->opts = *opts;
	t->parallel = t->opts.parallel ? t->opts.parallel : DEFAULT_PARALLEL;
	if (t->parallel > MAX_PARALLEL)
		t->parallel = MAX_PARALLEL;
	t->regopts = t->opts.registry;
	if (t->regopts.http.cancel == NULL)
		t->regopts.http.cancel = t->opts.cancel;
	t->workers = calloc(t->parallel, sizeof(*t->workers));
	if (t->workers == NULL) {
		free(t);
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	for (i = 0; i < t->parallel; i++)
		t->workers[i].t = t;
	pthread_mutex_init(&t->lock, NULL);
	*out = t;
	return 0;
}

int al_transfer_new_to_store(al_transfer **out, al_store *dst,
                             const al_transfer_opts *opts)
{
	al_transfer *t = NULL;
	int rc;

	if (dst == NULL)
		return al_error_set(AL_EINVAL, "no destination store");
	if ((rc = transfer_new(&t, opts)) < 0)
		return rc;
	t->dst_store = dst;
	*out = t;
	return 0;
}

int al_transfer_new_to_registry(al_transfer **out, const char *host,
                                const al_transfer_opts *opts)
{
	al_transfer *t = NULL;
	int rc;

	if (host == NULL || host[0] == '\0')
		return al_error_set(AL_EINVAL, "no destination registry");
	if ((rc = transfer_new(&t, opts)) < 0)
		return rc;
	t->dst_host = al_strdup(api_host(host));
	if (t->dst_host == NULL) {
		al_transfer_free(t);
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	t->dst_insecure = host_insecure(t, host);
	/* registries.conf (blocked, insecure): the registry client's gate */
	*out = t;
	return 0;
}

static void image_clear(image *img)
{
	size_t i;

	free(img->src_repo);
	free(img->src_ref);
	free(img->src_name);
	free(img->display);
	free(img->dst_name);
	free(img->dst_repo);
	free(img->dst_ref);
	free(img->message);
	al_descriptor_clear(&img->top);
	for (i = 0; i < img->nmanifests; i++) {
		free(img->manifests[i].media_type);
		free(img->manifests[i].data);
	}
	free(img->manifests);
	free(img->blobs);
	for (i = 0; i < img->npending; i++)
		al_descriptor_clear(&img->pending[i]);
	free(img->pending);
	json_decref(img->seen);
	for (i = 0; i < img->nalts; i++)
		free(img->alt_repo[i]);
	free(img->alt_src);
	free(img->alt_repo);
	free(img->alt_mirror);
	free(img->pulled_from);
}

void al_transfer_free(al_transfer *t)
{
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; i < t->parallel; i++)
		worker_clear(&t->workers[i]);
	free(t->workers);
	for (i = 0; i < t->nimages; i++)
		image_clear(&t->images[i]);
	free(t->images);
	json_decref(t->image_index);
	for (i = 0; i < t->nblobs; i++) {
		free(t->blobs[i].src_repo);
		free(t->blobs[i].dst_repo);
		free(t->blobs[i].message);
		free(t->blobs[i].mount_from);
	}
	free(t->blobs);
	json_decref(t->blob_index);
	for (i = 0; i < t->nendpoints; i++)
		endpoint_free(t->endpoints[i]);
	free(t->endpoints);
	free(t->upload_dir);
	free(t->dst_host);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

size_t al_transfer_count(const al_transfer *t)
{
	return t->nimages;
}

int al_transfer_result(const al_transfer *t, int idx, int *status,
                       al_digest *digest, const char **media_type,
                       const char **message)
{
	const image *img;

	if (idx < 0 || (size_t)idx >= t->nimages)
		return al_error_set(AL_EINVAL, "no image %d in this transfer",
		                    idx);
	img = &t->images[idx];
	if (status != NULL)
		*status = img->status;
	if (digest != NULL)
		*digest = img->top.digest;
	if (media_type != NULL)
		*media_type = img->top.media_type;
	if (message != NULL)
		*message = img->message != NULL ? img->message : "";
	return 0;
}

int al_transfer_expect(al_transfer *t, int idx, const al_digest *digest)
{
	if (idx < 0 || (size_t)idx >= t->nimages || digest == NULL)
		return al_error_set(AL_EINVAL, "no image %d in this transfer",
		                    idx);
	if (t->dst_store != NULL)
		return al_error_set(AL_EINVAL,
		                    "only a registry destination is expected "
		                    "to hold an image");
	t->images[idx].expect = 1;
	t->images[idx].expected = *digest;
	return 0;
}

int al_transfer_set_upload_dir(al_transfer *t, const char *dir)
{
	char *d = NULL;

	if (dir != NULL && (d = al_strdup(dir)) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	free(t->upload_dir);
	t->upload_dir = d;
	return 0;
}

int al_transfer_hold(al_transfer *t, int idx)
{
	if (idx < 0 || (size_t)idx >= t->nimages)
		return al_error_set(AL_EINVAL, "no image %d in this transfer",
		                    idx);
	if (t->dst_store == NULL)
		return al_error_set(AL_EINVAL,
		                    "only a store destination holds tags");
	t->images[idx].hold = 1;
	return 0;
}

int al_transfer_tag(al_transfer *t, int idx, const char *name)
{
	image *img;

	if (idx < 0 || (size_t)idx >= t->nimages)
		return al_error_set(AL_EINVAL, "no image %d in this transfer",
		                    idx);
	img = &t->images[idx];
	if (t->dst_store == NULL || img->queued || img->status < 0 ||
	    img->top.media_type == NULL)
		return al_error_set(AL_EINVAL,
		                    "image '%s' has not arrived in the store",
		                    img->display);
	return tag_in_store(t, img, name != NULL ? name : img->dst_name);
}

/* ---- queueing ---- */

int al_push_target(const char *name, const char *prefix, char **repo,
                   char **ref)
{
	al_ref r = {0};
	char *rp = NULL, *rf = NULL;
	int rc;

	if ((rc = al_ref_parse(&r, name)) < 0)
		return rc;
	if (prefix != NULL && prefix[0] != '\0')
		rp = al_sprintf("%s/%s", prefix, r.repository);
	else
		rp = al_strdup(r.repository);
	if (r.digest != NULL)
		rf = al_strdup(r.digest);
	else
		rf = al_strdup(r.tag != NULL ? r.tag : "latest");
	al_ref_clear(&r);
	if (rp == NULL || rf == NULL) {
		free(rp);
		free(rf);
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	*repo = rp;
	*ref = rf;
	return 0;
}

/* Join components past max_nested - 1 with '-' (see transfer.h). */
static char *nest_path(const char *path, unsigned max_nested)
{
	size_t ncomp = 1, i, seen = 0;
	char *out;

	for (i = 0; path[i] != '\0'; i++)
		if (path[i] == '/')
			ncomp++;
	if ((out = al_strdup(path)) == NULL || max_nested == 0 ||
	    ncomp <= max_nested)
		return out;
	for (i = 0; out[i] != '\0'; i++) {
		if (out[i] != '/')
			continue;
		seen++;
		/* the first max_nested - 1 separators stay */
		if (seen >= max_nested)
			out[i] = '-';
	}
	return out;
}

int al_push_target_nested(const char *name, const char *prefix,
                          unsigned max_nested, char **repo, char **ref)
{
	char *rp = NULL, *rf = NULL, *nested;
	int rc;

	if ((rc = al_push_target(name, prefix, &rp, &rf)) < 0)
		return rc;
	if (max_nested == 0) {
		*repo = rp;
		*ref = rf;
		return 0;
	}
	nested = nest_path(rp, max_nested);
	free(rp);
	if (nested == NULL) {
		free(rf);
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	*repo = nested;
	*ref = rf;
	return 0;
}

char *al_push_digest_tag(const char *digest)
{
	const char *colon = digest != NULL ? strchr(digest, ':') : NULL;
	char *tag;

	if (colon == NULL || colon == digest || colon[1] == '\0')
		return NULL;
	if ((tag = al_strdup(digest)) == NULL)
		return NULL;
	tag[colon - digest] = '-';
	/* a tag is at most 128 characters; oc-mirror keeps 127 */
	if (strlen(tag) > 127)
		tag[127] = '\0';
	return tag;
}

static int grow_images(al_transfer *t)
{
	image *grown = al__array_grow(t->images, &t->cap_images, t->nimages + 1,
	                              sizeof(*grown));

	if (grown == NULL)
		return AL_ENOMEM;
	t->images = grown;
	memset(&t->images[t->nimages], 0, sizeof(image));
	return 0;
}

/* Split "repo[:tag]" / "repo@digest" for a registry destination. */
static int split_dst(const char *dst, char **repo, char **ref)
{
	const char *at = strchr(dst, '@'), *colon;
	const char *slash = strrchr(dst, '/');

	if (at != NULL) {
		*repo = al_strndup(dst, (size_t)(at - dst));
		*ref = al_strdup(at + 1);
	} else {
		colon = strrchr(dst, ':');
		if (colon != NULL && (slash == NULL || colon > slash)) {
			*repo = al_strndup(dst, (size_t)(colon - dst));
			*ref = al_strdup(colon + 1);
		} else {
			*repo = al_strdup(dst);
			*ref = al_strdup("latest");
		}
	}
	if (*repo == NULL || *ref == NULL) {
		free(*repo);
		free(*ref);
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	return 0;
}

static int set_destination(al_transfer *t, image *img, const char *dst_name)
{
	if (t->dst_store != NULL) {
		img->dst_name =
		    al_strdup(dst_name != NULL ? dst_name : img->display);
		return img->dst_name != NULL
		           ? 0
		           : al_error_set(AL_ENOMEM, "out of memory");
	}
	if (dst_name == NULL)
		return al_error_set(AL_EINVAL,
		                    "no destination repository for '%s'",
		                    img->display);
	return split_dst(dst_name, &img->dst_repo, &img->dst_ref);
}

/* Apply opts->sources to a docker reference. */
static int map_source(al_transfer *t, const al_ref *ref, image *img)
{
	char *name = al_ref_name(ref), *full = al_ref_string(ref);
	size_t i;
	int rc = 0;

	if (name == NULL || full == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	img->display = full;
	full = NULL;
	for (i = 0; i < t->opts.nsources; i++) {
		const al_imageset_source *s = &t->opts.sources[i];
		size_t pl = strlen(s->prefix);
		const char *rest;

		if (strncmp(name, s->prefix, pl) != 0 ||
		    (name[pl] != '\0' && name[pl] != '/'))
			continue;
		rest = name + pl;
		if (al_str_startswith(s->location, "oci:")) {
			if ((rc = get_endpoint(t, EP_LAYOUT, s->location + 4,
			                       NULL, &img->src)) < 0)
				goto out;
			img->src_name = al_strdup(img->display);
			if (img->src_name == NULL)
				rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		if (al_str_startswith(s->location, "docker://")) {
			al_ref loc = {0};
			const char *l = s->location + 9;
			char *probe = al_sprintf("%s/x", l);
			const char *ns;

			if (probe == NULL) {
				rc = al_error_set(AL_ENOMEM, "out of memory");
				goto out;
			}
			rc = al_ref_parse(&loc, probe);
			free(probe);
			if (rc < 0) {
				rc = al_error_wrap(rc, "source location '%s'",
				                   s->location);
				goto out;
			}
			/* loc.repository is "<ns>/x": keep "<ns>" */
			ns = loc.repository;
			img->src_repo = al_sprintf(
			    "%.*s%s", (int)(strlen(ns) - 2), ns, rest);
			if (img->src_repo != NULL && img->src_repo[0] == '/')
				memmove(img->src_repo, img->src_repo + 1,
				        strlen(img->src_repo));
			rc =
			    get_endpoint(t, EP_REGISTRY, api_host(loc.registry),
			                 NULL, &img->src);
			al_ref_clear(&loc);
			if (rc < 0)
				goto out;
			img->src_ref = al_strdup(
			    ref->digest != NULL
			        ? ref->digest
			        : (ref->tag != NULL ? ref->tag : "latest"));
			if (img->src_repo == NULL || img->src_ref == NULL)
				rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		rc = al_error_set(
		    AL_EINVAL,
		    "source location '%s' must start with oci: or docker://",
		    s->location);
		goto out;
	}
	if (t->opts.registry.regconf != NULL) {
		rc = regconf_sources(t, ref, img);
		goto out;
	}
	if ((rc = get_endpoint(t, EP_REGISTRY, api_host(ref->registry), NULL,
	                       &img->src)) < 0)
		goto out;
	img->src_repo = al_strdup(ref->repository);
	img->src_ref = al_strdup(
	    ref->digest != NULL ? ref->digest
	                        : (ref->tag != NULL ? ref->tag : "latest"));
	if (img->src_repo == NULL || img->src_ref == NULL)
		rc = al_error_set(AL_ENOMEM, "out of memory");
out:
	free(name);
	free(full);
	return rc;
}

int al_transfer_add(al_transfer *t, const al_imgref *src, const char *dst_name)
{
	image *img;
	int rc;

	if ((rc = grow_images(t)) < 0)
		return rc;
	img = &t->images[t->nimages];
	img->queued = 1;
	if (src->transport == AL_TRANSPORT_OCI) {
		if ((rc = get_endpoint(t, EP_LAYOUT, src->path, NULL,
		                       &img->src)) < 0)
			goto fail;
		img->src_name = al_strdup(src->name);
		img->display = al_imgref_string(src);
		if (img->display == NULL ||
		    (src->name != NULL && img->src_name == NULL)) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto fail;
		}
	} else if ((rc = map_source(t, &src->ref, img)) < 0) {
		goto fail;
	}
	if ((rc = set_destination(t, img, dst_name)) < 0)
		goto fail;
	/* The same image asked for twice (image-references often name one
	 * digest under several tags) is transferred once: the same source
	 * endpoint and reference to the same destination. O(1) through
	 * t->image_index, so that a catalog of thousands adds in O(n). */
	{
		json_t *at;
		char *key = al_sprintf(
		    "%p\n%s\n%s\n%s\n%s", (void *)img->src, img->display,
		    img->dst_name != NULL ? img->dst_name : "",
		    img->dst_repo != NULL ? img->dst_repo : "",
		    img->dst_ref != NULL ? img->dst_ref : "");

		if (key == NULL || (t->image_index == NULL &&
		                    (t->image_index = json_object()) == NULL)) {
			free(key);
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto fail;
		}
		if ((at = json_object_get(t->image_index, key)) != NULL) {
			free(key);
			image_clear(img);
			memset(img, 0, sizeof(*img));
			return (int)json_integer_value(at);
		}
		rc = json_object_set_new(t->image_index, key,
		                         json_integer((json_int_t)t->nimages));
		free(key);
		if (rc != 0) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto fail;
		}
	}
	return (int)t->nimages++;
fail:
	image_clear(img);
	memset(img, 0, sizeof(*img));
	return rc;
}

int al_transfer_add_from_store(al_transfer *t, al_store *src_store,
                               const char *name, const char *dst_name)
{
	image *img;
	int rc;

	if ((rc = grow_images(t)) < 0)
		return rc;
	img = &t->images[t->nimages];
	img->queued = 1;
	if ((rc = get_endpoint(t, EP_LAYOUT, NULL, src_store, &img->src)) < 0)
		goto fail;
	img->src_name = al_strdup(name);
	img->display = al_strdup(name);
	if (img->src_name == NULL || img->display == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto fail;
	}
	if ((rc = set_destination(t, img, dst_name)) < 0)
		goto fail;
	return (int)t->nimages++;
fail:
	image_clear(img);
	memset(img, 0, sizeof(*img));
	return rc;
}

/* ---- phase A: manifests ---- */

/* 1 if the destination store has an index entry named img->dst_name. */
static int named_in_store(al_transfer *t, const image *img)
{
	al_store_image cur;

	if (al_store_find(t->dst_store, img->dst_name, &cur) != 0) {
		al_error_clear();
		return 0;
	}
	al_store_image_clear(&cur);
	return 1;
}

/* HEAD ref; 1 when the store holds the manifest of the digest the
 * registry announced (body, media type and digest set as a GET would),
 * 0 when it must be fetched. */
/*
 * A manifest read from the store, parsed without a hint: its media type
 * into *media_type and the parse itself into *pm, *have set, for
 * walk_manifest, whose own parse (hinted with that media type, which the
 * body gives or its shape decides alike) would give the same: an
 * unchanged rerun parses each manifest once. 0, or -1 when body is not a
 * manifest (error cleared; the caller asks the source).
 */
static int parsed_local(const al_buf *body, const char *what, char **media_type,
                        al_manifest *pm, int *have)
{
	al_manifest m;

	if (al_manifest_parse(&m, body->ptr, body->len, NULL, what) != 0) {
		al_error_clear();
		return -1;
	}
	if ((*media_type = al_strdup(m.media_type)) == NULL) {
		al_manifest_clear(&m);
		al_error_clear();
		return -1;
	}
	*pm = m;
	*have = 1;
	return 0;
}

static int head_from_store(al_transfer *t, al_registry *reg, const image *img,
                           const char *ref, al_buf *body, char **media_type,
                           al_digest *digest, al_manifest *pm, int *have)
{
	al_digest hd;
	int exists = 0;

	memset(&hd, 0, sizeof(hd));
	if (al_registry_head_manifest(reg, img->src_repo, ref, &exists, &hd,
	                              NULL) != 0 ||
	    !exists || al_store_has_blob(t->dst_store, &hd, NULL) != 1 ||
	    al_store_read_blob(t->dst_store, &hd, body) != 0)
		goto miss;
	if (parsed_local(body, ref, media_type, pm, have) < 0)
		goto miss;
	*digest = hd;
	return 1;
miss:
	al_buf_reset(body);
	al_error_clear();
	return 0;
}

/* ref's manifest into body, *media_type (may stay NULL for a layout
 * source) and *digest; when read from the store, also parsed into *pm
 * (*have set: walk_manifest uses it, see parsed_local). */
static int fetch_manifest(al_transfer *t, worker *w, image *img,
                          const char *ref, al_buf *body, char **media_type,
                          al_digest *digest, al_manifest *pm, int *have)
{
	endpoint *ep = img->src;
	al_digest want;
	int rc;

	/* A manifest asked for by digest that the destination store already
	 * holds is read locally (re-hashed): a rerun then costs no request
	 * for digest-pinned images such as release components. */
	if (t->dst_store != NULL && ref != NULL &&
	    al_str_startswith(ref, "sha256:") &&
	    al_digest_parse_str(&want, ref) == 0 &&
	    al_store_has_blob(t->dst_store, &want, NULL) == 1 &&
	    al_store_read_blob(t->dst_store, &want, body) == 0) {
		if (parsed_local(body, ref, media_type, pm, have) == 0) {
			*digest = want;
			return 0;
		}
		al_buf_reset(body);
	}
	if (ep->kind == EP_REGISTRY) {
		al_registry *reg;
		char *key = NULL;

		if ((rc = worker_client(w, ep->host, ep->insecure, &reg)) < 0)
			return rc;
		/* A tag this process resolved into the store already (the
		 * space plan before the run) is not asked again. */
		if (t->dst_store != NULL && ref != NULL &&
		    !al_str_startswith(ref, "sha256:") &&
		    (key = al_sprintf("%s/%s:%s", ep->host, img->src_repo,
		                      ref)) != NULL &&
		    al_store__resolved_get(t->dst_store, key, &want) == 1 &&
		    al_store_has_blob(t->dst_store, &want, NULL) == 1 &&
		    al_store_read_blob(t->dst_store, &want, body) == 0) {
			if (parsed_local(body, ref, media_type, pm, have) ==
			    0) {
				*digest = want;
				free(key);
				return 0;
			}
			al_buf_reset(body);
		}
		al_error_clear();
		/* An image the store named before: HEAD gives the tag's
		 * digest, and the manifest the store holds under it is read
		 * (re-hashed) instead of fetched. A first run GETs at once. */
		if (key != NULL && img->dst_name != NULL &&
		    named_in_store(t, img) &&
		    head_from_store(t, reg, img, ref, body, media_type, digest,
		                    pm, have) == 1) {
			rc = al_store__resolved_put(t->dst_store, key, digest);
			free(key);
			return rc;
		}
		al_error_clear();
		rc = al_registry_get_manifest(reg, img->src_repo, ref, body,
		                              media_type, digest);
		if (rc == 0 && key != NULL)
			rc = al_store__resolved_put(t->dst_store, key, digest);
		free(key);
		return rc;
	}
	/* OCI layout: by digest straight from blobs/, by name via index.json.
	 */
	{
		al_store_image found = {0};
		al_digest d;
		const char *at = ref != NULL ? strrchr(ref, '@') : NULL;
		char *mt = NULL;

		if (ref != NULL && al_str_startswith(ref, "sha256:") &&
		    al_digest_parse_str(&d, ref) == 0) {
			/* a child manifest by digest */
		} else if (ref == NULL) {
			al_store_image *all = NULL;
			size_t n = 0;
			if ((rc = al_store_list(ep->layout, &all, &n)) < 0)
				return rc;
			if (n != 1) {
				al_store_images_free(all, n);
				return al_error_set(
				    AL_EINVAL,
				    "OCI layout '%s' holds %zu images: name "
				    "one (oci:PATH:NAME)",
				    ep->path, n);
			}
			d = all[0].desc.digest;
			mt = al_strdup(all[0].desc.media_type);
			al_store_images_free(all, n);
		} else if ((rc = al_store_find(ep->layout, ref, &found)) == 0) {
			d = found.desc.digest;
			mt = al_strdup(found.desc.media_type);
			al_store_image_clear(&found);
		} else if (rc == AL_ENOTFOUND && at != NULL &&
		           al_digest_parse_str(&d, at + 1) == 0) {
			/* NAME@digest not indexed: the blob itself */
		} else {
			return al_error_set(AL_ENOTFOUND,
			                    "no image '%s' in OCI layout '%s'",
			                    ref, ep->path);
		}
		if ((rc = al_store_read_blob(ep->layout, &d, body)) < 0) {
			free(mt);
			return rc;
		}
		if (mt == NULL) {
			al_manifest m;
			if (al_manifest_parse(&m, body->ptr, body->len, NULL,
			                      ref != NULL ? ref : ep->path) ==
			    0) {
				mt = al_strdup(m.media_type);
				al_manifest_clear(&m);
			}
		}
		*media_type = mt;
		*digest = d;
		return 0;
	}
}

/*
 * Record a manifest of img (appended: children before their index). A
 * store destination gets the bytes now (so an image's state does not grow
 * with its manifests), unless they were just read from it (in_store: read
 * back and re-hashed, so they are there and whole); a registry
 * destination re-reads them from a layout source at finish and keeps
 * them only when the source is a registry.
 */
static int add_manifest(al_transfer *t, image *img, const al_digest *d,
                        const char *media_type, int height, al_buf *body,
                        int in_store)
{
	mfile *grown;
	mfile *m;
	int rc;

	if (t->dst_store != NULL && !in_store) {
		al_digest got;
		if ((rc = al_store_put_blob(t->dst_store, body->ptr, body->len,
		                            &got)) < 0)
			return rc;
		if (!al_digest_equal(&got, d))
			return al_error_set(AL_EVERIFY,
			                    "manifest digest changed while "
			                    "storing");
	}
	grown = al__array_grow(img->manifests, &img->cap_manifests,
	                       img->nmanifests + 1, sizeof(*grown));
	if (grown == NULL)
		return AL_ENOMEM;
	img->manifests = grown;
	m = &img->manifests[img->nmanifests];
	m->digest = *d;
	m->media_type = al_strdup(media_type);
	m->len = body->len;
	m->height = height;
	m->data = NULL;
	if (t->dst_store == NULL && img->src->kind == EP_REGISTRY)
		m->data = (uint8_t *)al_buf_detach(body, NULL);
	if (m->media_type == NULL ||
	    (t->dst_store == NULL && img->src->kind == EP_REGISTRY &&
	     m->data == NULL)) {
		free(m->media_type);
		free(m->data);
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	img->nmanifests++;
	return 0;
}

/* The height of a manifest of img recorded already (the last one recorded
 * with digest d), 0 if none is. */
static int height_of(const image *img, const al_digest *d)
{
	size_t i;

	for (i = img->nmanifests; i-- > 0;)
		if (al_digest_equal(&img->manifests[i].digest, d))
			return img->manifests[i].height;
	return 0;
}

/*
 * 1 if d was walked for img already (an index listing one child many
 * times, or two indexes sharing one), else 0 and d is now marked, within
 * the per-image and per-run bounds (AL_ELIMIT beyond them).
 */
static int seen_manifest(al_transfer *t, image *img, const al_digest *d)
{
	char ds[AL_DIGEST_STRMAX + 2];
	size_t n;

	ds[0] = 'm';
	ds[1] = ':';
	al_digest_str(d, ds + 2);
	if (img->seen == NULL && (img->seen = json_object()) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	if (json_object_get(img->seen, ds) != NULL)
		return 1;
	if (img->nseen_manifests >= IMAGE_MANIFESTS_MAX)
		return al_error_set(AL_ELIMIT,
		                    "more than %d distinct manifests in one "
		                    "image",
		                    IMAGE_MANIFESTS_MAX);
	n = atomic_fetch_add(&t->run_manifests, 1);
	if (n >= RUN_MANIFESTS_MAX)
		return al_error_set(AL_ELIMIT,
		                    "more than %d distinct manifests in one "
		                    "run",
		                    RUN_MANIFESTS_MAX);
	if (json_object_set_new(img->seen, ds, json_true()) != 0)
		return al_error_set(AL_ENOMEM, "out of memory");
	img->nseen_manifests++;
	return 0;
}

/* Collect a blob of img once (O(1) per descriptor, however many manifests
 * share it), within AL_TRANSFER_IMAGE_BLOBS_MAX distinct blobs. */
static int add_pending(image *img, const al_descriptor *d)
{
	char key[AL_DIGEST_STRMAX + 2];
	al_descriptor *grown;

	key[0] = 'b';
	key[1] = ':';
	al_digest_str(&d->digest, key + 2);
	if (img->seen == NULL && (img->seen = json_object()) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	if (json_object_get(img->seen, key) != NULL)
		return 0;
	if (img->npending >= IMAGE_BLOBS_MAX)
		return al_error_set(AL_ELIMIT,
		                    "more than %d distinct blobs in one image",
		                    IMAGE_BLOBS_MAX);
	grown = al__array_grow(img->pending, &img->cap_pending,
	                       img->npending + 1, sizeof(*grown));
	if (grown == NULL)
		return AL_ENOMEM;
	img->pending = grown;
	if (al_descriptor_copy(&img->pending[img->npending], d) < 0 ||
	    json_object_set_new(img->seen, key, json_true()) != 0)
		return al_error_set(AL_ENOMEM, "out of memory");
	img->npending++;
	return 0;
}

/* Fetch ref (a manifest or index), recurse into an index's children,
 * collect blobs; the manifest is appended after its children. */
static int walk_manifest(al_transfer *t, worker *w, image *img, const char *ref,
                         const char *expect_mt, int depth,
                         al_descriptor *desc_out)
{
	al_buf body = AL_BUF_INIT(AL_MANIFEST_MAX);
	al_manifest m = {0};
	char *mt = NULL;
	al_digest d;
	char ds[AL_DIGEST_STRMAX];
	size_t i;
	int rc, parsed = 0, height = 0, in_store;

	if (depth > MAX_INDEX_DEPTH)
		return al_error_set(AL_ELIMIT, "indexes nested deeper than %d",
		                    MAX_INDEX_DEPTH);
	if ((rc = fetch_manifest(t, w, img, ref, &body, &mt, &d, &m, &parsed)) <
	    0)
		goto out;
	/* the local parse is made only of what the store holds */
	in_store = parsed;
	al_digest_str(&d, ds);
	if (!parsed &&
	    (rc = al_manifest_parse(&m, body.ptr, body.len,
	                            mt != NULL ? mt : expect_mt, ds)) < 0)
		goto out;
	parsed = 1;
	if (m.is_index && t->opts.platform != NULL && depth == 0) {
		/* Pick one platform: the chosen manifest becomes the image. */
		for (i = 0; i < m.nmanifests; i++) {
			if (al_platform_match(&m.manifests[i],
			                      t->opts.platform)) {
				char cs[AL_DIGEST_STRMAX];
				al_digest_str(&m.manifests[i].digest, cs);
				rc = walk_manifest(t, w, img, cs,
				                   m.manifests[i].media_type,
				                   depth + 1, desc_out);
				goto out;
			}
		}
		rc = al_error_set(AL_ENOTFOUND,
		                  "no manifest for platform %s in index %s",
		                  t->opts.platform, ds);
		goto out;
	}
	if (m.is_index) {
		/* The index is complete only when each child is: the children
		 * are recorded before it, each distinct one once. */
		height = 1;
		for (i = 0; i < m.nmanifests; i++) {
			char cs[AL_DIGEST_STRMAX];
			al_descriptor child = {0};
			if ((rc = seen_manifest(t, img,
			                        &m.manifests[i].digest)) < 0)
				goto out;
			if (rc == 0) {
				al_digest_str(&m.manifests[i].digest, cs);
				rc = walk_manifest(t, w, img, cs,
				                   m.manifests[i].media_type,
				                   depth + 1, &child);
				al_descriptor_clear(&child);
				if (rc < 0)
					goto out;
			}
			if (height_of(img, &m.manifests[i].digest) >= height)
				height =
				    height_of(img, &m.manifests[i].digest) + 1;
		}
	} else {
		if ((rc = add_pending(img, &m.config)) < 0)
			goto out;
		for (i = 0; i < m.nlayers; i++)
			if ((rc = add_pending(img, &m.layers[i])) < 0)
				goto out;
	}
	desc_out->digest = d;
	desc_out->size = body.len;
	desc_out->media_type = al_strdup(m.media_type);
	if (desc_out->media_type == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	rc = add_manifest(t, img, &d, m.media_type, height, &body, in_store);
out:
	if (parsed)
		al_manifest_clear(&m);
	free(mt);
	al_buf_free(&body);
	return rc;
}

/*
 * A registry destination the push record says holds img's top manifest:
 * one HEAD of the destination reference confirms it (img->present), and
 * then the image needs nothing more. A registry stores a manifest only
 * once every blob and child manifest it names is there (distribution
 * verifies them on PUT), so the digest answers for the whole image, as
 * containers/image's OptimizeDestinationImageAlreadyExists takes it
 * (compareImageDestinationManifestEqual). Any other answer, or none,
 * leaves the image to the full push.
 */
static void confirm_present(al_transfer *t, worker *w, image *img)
{
	al_registry *reg;
	al_digest got;
	int exists = 0;

	img->present = 0;
	if (!al_digest_equal(&img->expected, &img->top.digest))
		return;
	memset(&got, 0, sizeof(got));
	if (worker_client(w, t->dst_host, t->dst_insecure, &reg) < 0 ||
	    al_registry_head_manifest(reg, img->dst_repo, img->dst_ref, &exists,
	                              &got, NULL) < 0) {
		al_log_debug("transfer: %s: cannot confirm the pushed "
		             "manifest (%s): pushing it",
		             img->display, al_error_message());
		al_error_clear();
		return;
	}
	img->present = exists && al_digest_equal(&got, &img->top.digest);
	if (!img->present)
		al_log_debug("transfer: %s: the destination holds %s: pushing "
		             "it",
		             img->display,
		             exists ? "another manifest" : "nothing");
}

static int job_resolve(al_transfer *t, worker *w, size_t idx)
{
	image *img = &t->images[idx];
	const char *ref =
	    img->src->kind == EP_REGISTRY ? img->src_ref : img->src_name;
	int rc;

	if (al_cancel_is_set(t->opts.cancel))
		return set_image_error(img,
		                       al_error_set(AL_ECANCELED, "cancelled"));
	al_descriptor_clear(&img->top);
	if (img->nalts > 1)
		rc = regconf_resolve(t, w, img, ref);
	else
		rc = walk_manifest(t, w, img, ref, NULL, 0, &img->top);
	if (rc < 0)
		return set_image_error(img, rc);
	if (t->dst_store == NULL && img->expect)
		confirm_present(t, w, img);
	pthread_mutex_lock(&t->lock);
	t->prog.items_done++;
	pthread_mutex_unlock(&t->lock);
	report_progress(t, 0);
	return 0;
}

/* ---- phase B: blob table ---- */

/* The blob table entry for d going to img's destination (one per digest,
 * per destination repository for a registry), added if new; found in
 * O(1) through t->blob_index ("<digest>": the first entry of that digest,
 * "<digest> <repo>": the entry for that repository). */
static int find_or_add_blob(al_transfer *t, const image *img,
                            const al_descriptor *d, size_t *out)
{
	const char *dst_repo = img->dst_repo;
	char ds[AL_DIGEST_STRMAX];
	char *key = NULL;
	json_t *v;
	blob *grown, *b;
	int seen_digest, rc = 0;

	al_digest_str(&d->digest, ds);
	if (t->blob_index == NULL && (t->blob_index = json_object()) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	seen_digest = json_object_get(t->blob_index, ds) != NULL;
	if (dst_repo != NULL &&
	    (key = al_sprintf("%s %s", ds, dst_repo)) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	v = json_object_get(t->blob_index, key != NULL ? key : ds);
	if (v != NULL) {
		*out = (size_t)json_integer_value(v);
		goto out;
	}
	if (t->nblobs == t->cap_blobs) {
		size_t cap = t->cap_blobs ? t->cap_blobs * 2 : 64;
		grown = realloc(t->blobs, cap * sizeof(*grown));
		if (grown == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		t->blobs = grown;
		t->cap_blobs = cap;
	}
	b = &t->blobs[t->nblobs];
	memset(b, 0, sizeof(*b));
	b->digest = d->digest;
	b->size = d->size;
	b->src = img->src;
	b->src_repo = al_strdup(img->src_repo);
	b->dst_repo = al_strdup(dst_repo);
	b->first = !seen_digest;
	if ((img->src_repo != NULL && b->src_repo == NULL) ||
	    (dst_repo != NULL && b->dst_repo == NULL) ||
	    (!seen_digest &&
	     json_object_set_new(t->blob_index, ds,
	                         json_integer((json_int_t)t->nblobs)) != 0) ||
	    (key != NULL &&
	     json_object_set_new(t->blob_index, key,
	                         json_integer((json_int_t)t->nblobs)) != 0)) {
		free(b->src_repo);
		free(b->dst_repo);
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	*out = t->nblobs++;
out:
	free(key);
	return rc;
}

/* ---- phase C: blobs ---- */

static int copy_fd_to_writer(al_transfer *t, worker *w, int fd,
                             const al_writer *sink)
{
	int rc;

	if (w->iobuf == NULL) {
		w->iobuf = malloc(IO_CHUNK);
		if (w->iobuf == NULL)
			return al_error_set(AL_ENOMEM, "out of memory");
	}
	for (;;) {
		size_t r;
		if ((rc = al_fd_read(fd, w->iobuf, IO_CHUNK, &r, "blob")) < 0)
			return rc;
		if (r == 0)
			return 0;
		if (al_cancel_is_set(t->opts.cancel))
			return al_error_set(AL_ECANCELED, "cancelled");
		if ((rc = sink->write(sink->ud, w->iobuf, r)) < 0)
			return rc;
		add_progress_bytes(t, r);
	}
}

/*
 * A registry blob into the store, continuing a partial download that an
 * earlier attempt or run left (al_store_blob_resume). A continued download
 * that does not verify, or that the server answered wrongly, starts once
 * more from byte 0: the partial bytes are what is suspect.
 */
static int registry_blob_to_store(al_transfer *t, worker *w, blob *b)
{
	al_blob_writer *bw = NULL;
	al_registry *reg;
	al_writer sink;
	uint64_t offset = 0;
	int rc, again = 1;

	if ((rc = worker_client(w, b->src->host, b->src->insecure, &reg)) < 0)
		return rc;
	for (;;) {
		if ((rc = al_store_blob_resume(t->dst_store, &b->digest,
		                               b->size, &bw, &offset)) < 0)
			return rc;
		if (offset > 0) {
			al_log_debug("transfer: blob continues at byte %llu of "
			             "%llu",
			             (unsigned long long)offset,
			             (unsigned long long)b->size);
			add_progress_bytes(t, offset);
		}
		sink = al_blob_writer_as_writer(bw);
		/* The store's writer hashes: no second pass in the client. */
		rc = al_registry_get_blob_from(
		    reg, b->src_repo, &b->digest, b->size, offset, &sink,
		    AL_BLOB_NOVERIFY, add_progress_bytes, t);
		if (rc == 0) {
			rc = al_blob_writer_commit(bw); /* frees bw */
			bw = NULL;
		} else if (offset > 0 &&
		           (rc == AL_EVERIFY || rc == AL_EPROTO)) {
			/* drop the suspect partial bytes */
			(void)al_blob_writer_reset(bw);
		}
		al_blob_writer_abort(bw);
		bw = NULL;
		if (rc == 0 || offset == 0 || !again ||
		    (rc != AL_EVERIFY && rc != AL_EPROTO))
			return rc;
		al_log_debug("transfer: continued blob failed (%s), starting "
		             "over",
		             al_error_message());
		al_error_clear();
		again = 0;
	}
}

static int blob_to_store(al_transfer *t, worker *w, blob *b)
{
	al_blob_writer *bw = NULL;
	al_writer sink;
	char ds[AL_DIGEST_STRMAX];
	int rc, fd = -1;

	if (al_store_has_blob(t->dst_store, &b->digest, NULL) == 1)
		return 1;
	if (b->src->kind == EP_REGISTRY) {
		rc = registry_blob_to_store(t, w, b);
		goto out;
	}
	if ((rc = al_store_blob_begin(t->dst_store, &b->digest, b->size, &bw)) <
	    0)
		goto out;
	sink = al_blob_writer_as_writer(bw);
	{
		uint64_t size = 0;
		if ((rc = al_store_blob_open(b->src->layout, &b->digest, &fd,
		                             &size)) < 0)
			goto out;
		rc = copy_fd_to_writer(t, w, fd, &sink);
	}
	if (rc < 0)
		goto out;
	rc = al_blob_writer_commit(bw);
	bw = NULL;
out:
	if (rc < 0)
		rc =
		    al_error_wrap(rc, "blob %s", al_digest_str(&b->digest, ds));
	if (fd >= 0)
		close(fd);
	al_blob_writer_abort(bw);
	return rc;
}

/* Blobs larger than this go in resumable PATCH chunks of this size. */
static uint64_t upload_chunk(const al_transfer *t)
{
	return t->regopts.chunk_size != 0 ? t->regopts.chunk_size
	                                  : UPLOAD_CHUNK_DEFAULT;
}

static int blob_to_registry(al_transfer *t, worker *w, blob *b)
{
	al_registry *reg;
	char ds[AL_DIGEST_STRMAX];
	int rc, exists = 0, mounted = 0, fd = -1;
	uint64_t size = 0;

	if ((rc = worker_client(w, t->dst_host, t->dst_insecure, &reg)) < 0)
		return rc;
	if ((rc = al_registry_blob_exists(reg, b->dst_repo, &b->digest, &exists,
	                                  NULL)) < 0)
		goto out;
	if (exists) {
		al_transfer__upload_forget(t->upload_dir, al_registry_host(reg),
		                           b->dst_repo, &b->digest);
		return 1;
	}
	if (b->mount_from != NULL) {
		if ((rc =
		         al_registry_mount_blob(reg, b->dst_repo, b->mount_from,
		                                &b->digest, &mounted)) < 0)
			goto out;
		if (mounted)
			return 1;
	}
	if (b->src->kind != EP_LAYOUT) {
		rc = al_error_set(AL_EUNSUPPORTED,
		                  "registry to registry copies are not "
		                  "supported: copy into an oci: layout first");
		goto out;
	}
	if ((rc = al_store_blob_open(b->src->layout, &b->digest, &fd, &size)) <
	    0)
		goto out;
	if (size > upload_chunk(t)) {
		al_transfer_upload u;
		al_transfer_upload_info info;

		memset(&u, 0, sizeof(u));
		u.reg = reg;
		u.repo = b->dst_repo;
		u.digest = &b->digest;
		u.size = size;
		u.fd = fd;
		u.chunk_size = upload_chunk(t);
		u.state_dir = t->upload_dir;
		u.cancel = t->opts.cancel;
		u.progress = add_progress_bytes;
		u.progress_ud = t;
		rc = al_transfer__upload(&u, &info);
	} else {
		al_reader rd = al_fd_reader(&fd);
		rc = al_registry_put_blob(reg, b->dst_repo, &b->digest, size,
		                          &rd, add_progress_bytes, t);
	}
out:
	if (rc < 0)
		rc =
		    al_error_wrap(rc, "blob %s", al_digest_str(&b->digest, ds));
	if (fd >= 0)
		close(fd);
	return rc;
}

static int job_blob(al_transfer *t, worker *w, size_t idx)
{
	blob *b = &t->blobs[idx];
	int rc;

	if (al_cancel_is_set(t->opts.cancel)) {
		b->status = al_error_set(AL_ECANCELED, "cancelled");
		b->message = al_strdup(al_error_message());
		b->done = 1;
		return b->status;
	}
	rc = t->dst_store != NULL ? blob_to_store(t, w, b)
	                          : blob_to_registry(t, w, b);
	pthread_mutex_lock(&t->lock);
	if (rc == 1) {
		t->stats.blobs_present++;
		t->stats.bytes_present += b->size;
		t->prog.bytes_skipped += b->size;
		t->prog.bytes_total -= b->size <= t->prog.bytes_total
		                           ? b->size
		                           : t->prog.bytes_total;
	} else if (rc == 0) {
		t->stats.blobs_transferred++;
		t->stats.bytes_transferred += b->size;
	}
	t->prog.items_done++;
	pthread_mutex_unlock(&t->lock);
	if (rc < 0) {
		b->status = rc;
		b->message = al_strdup(al_error_message());
	}
	b->done = 1;
	report_progress(t, 0);
	return rc < 0 ? rc : 0;
}

/* ---- phase D: manifests and tags ---- */

/* Name img's top manifest name in the destination store. An unchanged
 * entry is not rewritten: a rerun then costs no index.json rewrite (and
 * fsync) per image. */
static int tag_in_store(al_transfer *t, const image *img, const char *name)
{
	al_store_image cur;
	int same = 0;

	if (al_store_find(t->dst_store, name, &cur) == 0) {
		same = al_digest_equal(&cur.desc.digest, &img->top.digest) &&
		       cur.desc.size == img->top.size &&
		       cur.desc.media_type != NULL &&
		       img->top.media_type != NULL &&
		       strcmp(cur.desc.media_type, img->top.media_type) == 0;
		al_store_image_clear(&cur);
	}
	al_error_clear();
	if (same)
		return 0;
	return al_store_tag(t->dst_store, name, &img->top);
}

/* PUT one manifest of img to the destination registry: the top one under
 * the destination reference, the others by digest. Bytes not kept in
 * phase A are read again (re-hashed) from the source layout. */
static int put_manifest(al_registry *reg, const image *img, const mfile *m,
                        int top)
{
	al_buf b = AL_BUF_INIT(AL_MANIFEST_MAX);
	char ds[AL_DIGEST_STRMAX];
	const uint8_t *p = m->data;
	size_t n = m->len;
	int rc;

	al_digest_str(&m->digest, ds);
	if (p == NULL) {
		if ((rc = al_store_read_blob(img->src->layout, &m->digest,
		                             &b)) < 0)
			goto out;
		p = (const uint8_t *)b.ptr;
		n = b.len;
	}
	rc = al_registry_put_manifest(
	    reg, img->dst_repo, top ? img->dst_ref : ds, p, n, m->media_type);
out:
	al_buf_free(&b);
	return rc;
}

/* 0 when every blob of img arrived and the run goes on, else img's
 * error (set in img). */
static int image_ready(al_transfer *t, image *img)
{
	size_t i;

	if (img->status < 0)
		return img->status;
	for (i = 0; i < img->nblobs; i++) {
		blob *b = &t->blobs[img->blobs[i]];
		if (b->status < 0) {
			free(img->message);
			img->message =
			    al_sprintf("%s: %s", img->display,
			               b->message ? b->message : "blob failed");
			img->status = b->status;
			return b->status;
		}
	}
	if (al_cancel_is_set(t->opts.cancel))
		return set_image_error(img,
		                       al_error_set(AL_ECANCELED, "cancelled"));
	return 0;
}

/* Phase D to a store: the manifests were stored as they arrived
 * (add_manifest); the name goes on now. */
static int job_finish(al_transfer *t, worker *w, size_t idx)
{
	image *img = &t->images[idx];
	int rc;

	(void)w;
	if ((rc = image_ready(t, img)) < 0)
		return rc;
	if (!img->hold && (rc = tag_in_store(t, img, img->dst_name)) < 0)
		return set_image_error(img, rc);
	pthread_mutex_lock(&t->lock);
	t->stats.manifests += img->nmanifests;
	pthread_mutex_unlock(&t->lock);
	img->status = 0;
	return 0;
}

/* One manifest PUT of phase D to a registry: one reference in one
 * repository, sent once for every image that needs it. */
typedef struct mput {
	size_t img; /* the image whose manifest (and source) it sends */
	size_t m;   /* its index in that image's manifests */
	int top;    /* under the image's destination reference */
	int status;
	char *message;
} mput;

static int job_put(al_transfer *t, worker *w, size_t idx)
{
	mput *p = &t->puts[idx];
	const image *img = &t->images[p->img];
	al_registry *reg;
	int rc;

	if (al_cancel_is_set(t->opts.cancel))
		rc = al_error_set(AL_ECANCELED, "cancelled");
	else if ((rc = worker_client(w, t->dst_host, t->dst_insecure, &reg)) ==
	         0)
		rc = put_manifest(reg, img, &img->manifests[p->m], p->top);
	if (rc < 0) {
		p->status = rc;
		p->message = al_strdup(al_error_message());
		al_error_clear();
	}
	return rc;
}

/* The PUT of img's manifest m in the table (index: "repo ref" -> its
 * place), added if new; its place in *out. */
static int find_or_add_put(al_transfer *t, json_t *index, size_t *nputs,
                           size_t ii, size_t m, size_t *out)
{
	const image *img = &t->images[ii];
	int top = m + 1 == img->nmanifests;
	char ds[AL_DIGEST_STRMAX];
	char *key;
	json_t *v;
	int rc = 0;

	al_digest_str(&img->manifests[m].digest, ds);
	key = al_sprintf("%s %s", img->dst_repo, top ? img->dst_ref : ds);
	if (key == NULL)
		return al_error_oom();
	if ((v = json_object_get(index, key)) != NULL) {
		*out = (size_t)json_integer_value(v);
	} else if (json_object_set_new(index, key,
	                               json_integer((json_int_t)*nputs)) != 0) {
		rc = al_error_oom();
	} else {
		memset(&t->puts[*nputs], 0, sizeof(t->puts[*nputs]));
		t->puts[*nputs].img = ii;
		t->puts[*nputs].m = m;
		t->puts[*nputs].top = top;
		*out = (*nputs)++;
	}
	free(key);
	return rc;
}

/*
 * Phase D to a registry. A registry checks, when an index is PUT, that
 * each child is there, by reading what the child's own PUT wrote; and
 * docker-registry's filesystem driver rewrites that (truncates, then
 * writes) on every PUT of the child. Two images that share a child (two
 * tags of one index, or an index and one of its platforms named on its
 * own) must not PUT it while the other's index is checked: the check then
 * reads an empty file (DIGEST_INVALID). So each distinct reference goes
 * once, and by height: every image manifest first, then the indexes over
 * them, never a manifest while a manifest above it is sent.
 */
static void finish_registry(al_transfer *t, const size_t *jobs, size_t njobs)
{
	json_t *index = json_object();
	size_t **uses = calloc(njobs + 1, sizeof(*uses));
	size_t *hjobs = NULL, nputs = 0, total = 0, i, j, k;
	int h, maxh = 0, rc = 0;

	for (j = 0; j < njobs; j++) {
		image *img = &t->images[jobs[j]];
		if (image_ready(t, img) == 0 && !img->present)
			total += img->nmanifests;
	}
	t->puts = calloc(total + 1, sizeof(*t->puts));
	hjobs = calloc(total + 1, sizeof(*hjobs));
	if (index == NULL || uses == NULL || t->puts == NULL || hjobs == NULL)
		rc = al_error_oom();
	for (j = 0; j < njobs && rc == 0; j++) {
		image *img = &t->images[jobs[j]];
		if (img->status < 0)
			continue;
		if (img->present) {
			t->stats.images_unchanged++;
			continue;
		}
		if ((uses[j] = calloc(img->nmanifests + 1, sizeof(**uses))) ==
		    NULL) {
			rc = al_error_oom();
			break;
		}
		for (i = 0; i < img->nmanifests && rc == 0; i++) {
			rc = find_or_add_put(t, index, &nputs, jobs[j], i,
			                     &uses[j][i]);
			if (img->manifests[i].height > maxh)
				maxh = img->manifests[i].height;
		}
	}
	for (h = 0; h <= maxh && rc == 0; h++) {
		for (i = 0, k = 0; i < nputs; i++) {
			const image *img = &t->images[t->puts[i].img];
			if (img->manifests[t->puts[i].m].height == h)
				hjobs[k++] = i;
		}
		run_pool(t, hjobs, k, job_put);
	}
	for (j = 0; j < njobs; j++) {
		image *img = &t->images[jobs[j]];
		if (img->status < 0 || img->present)
			continue;
		if (rc < 0 || uses[j] == NULL) {
			set_image_error(img, rc < 0 ? rc : AL_ENOMEM);
			continue;
		}
		img->status = 0;
		for (i = 0; i < img->nmanifests && img->status == 0; i++) {
			const mput *p = &t->puts[uses[j][i]];
			if (p->status == 0)
				continue;
			free(img->message);
			img->message = al_sprintf(
			    "%s: %s", img->display,
			    p->message != NULL ? p->message : "out of memory");
			img->status = p->status;
		}
	}
	for (i = 0; i < nputs; i++) {
		if (rc == 0 && t->puts[i].status == 0)
			t->stats.manifests++;
		free(t->puts[i].message);
	}
	for (j = 0; uses != NULL && j < njobs; j++)
		free(uses[j]);
	free(uses);
	free(hjobs);
	free(t->puts);
	t->puts = NULL;
	json_decref(index);
}

/* ---- run ---- */

/* After phase A's results are used: the pending descriptors and the
 * manifests seen go (phase A of a later run starts afresh). */
static void drop_pending(image *img)
{
	size_t i;

	for (i = 0; i < img->npending; i++)
		al_descriptor_clear(&img->pending[i]);
	free(img->pending);
	img->pending = NULL;
	img->npending = 0;
	img->cap_pending = 0;
	json_decref(img->seen);
	img->seen = NULL;
}

/*
 * What al_transfer_run and al_transfer_resolve both begin with: a new run,
 * the queued images its jobs (*jobs, *njobs: indexes into t->images, the
 * caller frees *jobs), and phase A, their manifests resolved by the pool.
 */
static int start_run(al_transfer *t, size_t **jobs, size_t *njobs)
{
	size_t i;

	*njobs = 0;
	t->run++;
	atomic_store(&t->run_manifests, 0);
	memset(&t->prog, 0, sizeof(t->prog));
	if ((*jobs = calloc(t->nimages + 1, sizeof(**jobs))) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	for (i = 0; i < t->nimages; i++) {
		if (t->images[i].queued) {
			t->images[i].queued = 0;
			t->images[i].run = t->run;
			(*jobs)[(*njobs)++] = i;
		}
	}
	/* A: manifests */
	t->prog.phase = "manifests";
	t->prog.items_total = *njobs;
	run_pool(t, *jobs, *njobs, job_resolve);
	report_progress(t, 1);
	return 0;
}

int al_transfer_run(al_transfer *t, al_transfer_stats *stats)
{
	size_t *jobs = NULL, njobs = 0, i, j, first_blob = t->nblobs;
	uint64_t start = al_clock_now_ms();
	int rc = 0, worst = 0;

	if ((rc = AL_RESULT_VERSION_CHECK("al_transfer_stats", stats, version,
	                                  AL_TRANSFER_STATS_VERSION)) < 0)
		return rc;
	t->started_ms = start;
	memset(&t->stats, 0, sizeof(t->stats));
	if ((rc = start_run(t, &jobs, &njobs)) < 0)
		return rc;
	/* B: blob table (single-threaded) */
	for (j = 0; j < njobs; j++) {
		image *img = &t->images[jobs[j]];
		if (img->status < 0)
			continue;
		if (img->present) {
			drop_pending(img);
			continue;
		}
		img->blobs = calloc(img->npending + 1, sizeof(*img->blobs));
		if (img->blobs == NULL) {
			set_image_error(
			    img, al_error_set(AL_ENOMEM, "out of memory"));
			continue;
		}
		for (i = 0; i < img->npending; i++) {
			size_t bi = 0;
			if ((rc = find_or_add_blob(t, img, &img->pending[i],
			                           &bi)) < 0) {
				set_image_error(img, rc);
				break;
			}
			img->blobs[img->nblobs++] = bi;
		}
		drop_pending(img);
	}
	/* C: blobs, first occurrences of each digest, then mounts */
	{
		size_t nb = t->nblobs - first_blob, k = 0;
		size_t *bjobs = calloc(nb + 1, sizeof(*bjobs));
		if (bjobs == NULL) {
			free(jobs);
			return al_error_set(AL_ENOMEM, "out of memory");
		}
		t->prog.phase = "blobs";
		t->prog.items_done = 0;
		t->prog.items_total = nb;
		for (i = first_blob; i < t->nblobs; i++)
			t->prog.bytes_total += t->blobs[i].size;
		for (i = first_blob; i < t->nblobs; i++)
			if (t->blobs[i].first || t->dst_store != NULL)
				bjobs[k++] = i;
		run_pool(t, bjobs, k, job_blob);
		if (t->dst_store == NULL) {
			size_t k2 = 0;
			for (i = first_blob; i < t->nblobs; i++) {
				blob *b = &t->blobs[i];
				char ds[AL_DIGEST_STRMAX];
				json_t *v;
				if (b->first)
					continue;
				/* mount from the first entry of this digest */
				v = json_object_get(
				    t->blob_index,
				    al_digest_str(&b->digest, ds));
				j = v != NULL ? (size_t)json_integer_value(v)
				              : t->nblobs;
				if (j < t->nblobs && t->blobs[j].first &&
				    t->blobs[j].status == 0 && t->blobs[j].done)
					b->mount_from =
					    al_strdup(t->blobs[j].dst_repo);
				bjobs[k2++] = i;
			}
			run_pool(t, bjobs, k2, job_blob);
		}
		free(bjobs);
	}
	report_progress(t, 1);
	/* D: manifests and tags, only for images whose every blob arrived */
	t->prog.phase = "tags";
	if (t->dst_store != NULL)
		run_pool(t, jobs, njobs, job_finish);
	else
		finish_registry(t, jobs, njobs);
	for (j = 0; j < njobs; j++) {
		image *img = &t->images[jobs[j]];
		if (img->status < 0) {
			t->stats.images_failed++;
			if (worst == 0 || img->status == AL_ECANCELED)
				worst = img->status;
			if (img->message != NULL)
				al_log_debug("%s", img->message);
		} else {
			t->stats.images++;
		}
	}
	t->stats.elapsed_ms = al_clock_now_ms() - start;
	report_progress(t, 1);
	if (stats != NULL) {
		stats->images += t->stats.images;
		stats->images_failed += t->stats.images_failed;
		stats->blobs_transferred += t->stats.blobs_transferred;
		stats->bytes_transferred += t->stats.bytes_transferred;
		stats->blobs_present += t->stats.blobs_present;
		stats->bytes_present += t->stats.bytes_present;
		stats->manifests += t->stats.manifests;
		stats->images_unchanged += t->stats.images_unchanged;
		stats->elapsed_ms += t->stats.elapsed_ms;
	}
	free(jobs);
	if (worst < 0) {
		return al_error_set(worst, "%llu of %zu images failed",
		                    (unsigned long long)t->stats.images_failed,
		                    njobs);
	}
	return 0;
}

/* ---- registries.conf (docs/registry.md "registries.conf") ---- */

/*
 * The pull sources of a docker reference (al_regconf_pull_sources: the
 * mirrors that apply, then the location), each an endpoint of its own
 * made now, while images are queued on one thread. The first is used
 * until phase A says otherwise.
 */
static int regconf_sources(al_transfer *t, const al_ref *ref, image *img)
{
	al_regconf_source *src = NULL;
	size_t n = 0, i;
	int rc;

	if ((rc = al_regconf_pull_sources(t->opts.registry.regconf, ref, &src,
	                                  &n)) < 0)
		return rc;
	img->alt_src = calloc(n, sizeof(*img->alt_src));
	img->alt_repo = calloc(n, sizeof(*img->alt_repo));
	img->alt_mirror = calloc(n, sizeof(*img->alt_mirror));
	if (img->alt_src == NULL || img->alt_repo == NULL ||
	    img->alt_mirror == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		endpoint *ep;

		if ((rc = get_endpoint(t, EP_REGISTRY,
		                       api_host(src[i].registry), NULL, &ep)) <
		    0)
			goto out;
		if (src[i].insecure)
			ep->insecure = 1;
		img->alt_src[i] = ep;
		img->alt_mirror[i] = src[i].mirror;
		img->alt_repo[i] = src[i].repository;
		src[i].repository = NULL;
		img->nalts++;
	}
	img->src = img->alt_src[0];
	img->src_repo = al_strdup(img->alt_repo[0]);
	img->src_ref = al_strdup(
	    ref->digest != NULL ? ref->digest
	                        : (ref->tag != NULL ? ref->tag : "latest"));
	if (img->src_repo == NULL || img->src_ref == NULL)
		rc = al_error_set(AL_ENOMEM, "out of memory");
out:
	al_regconf_sources_free(src, n);
	return rc;
}

/* Forget what phase A collected from a source that failed. */
static void reset_phase_a(image *img)
{
	size_t i;

	for (i = 0; i < img->nmanifests; i++) {
		free(img->manifests[i].media_type);
		free(img->manifests[i].data);
	}
	img->nmanifests = 0;
	for (i = 0; i < img->npending; i++)
		al_descriptor_clear(&img->pending[i]);
	img->npending = 0;
	json_decref(img->seen);
	img->seen = NULL;
	img->nseen_manifests = 0;
	al_descriptor_clear(&img->top);
}

/*
 * containers/image newImageSource: each pull source in turn until one
 * gives the manifest; the image then comes from that one. When all fail,
 * the location's error, with the mirrors' errors after it.
 */
static int regconf_resolve(al_transfer *t, worker *w, image *img,
                           const char *ref)
{
	al_buf failed = AL_BUF_INIT(4096);
	char msg[512];
	int rc;

	for (;;) {
		rc = walk_manifest(t, w, img, ref, NULL, 0, &img->top);
		if (rc >= 0 || rc == AL_ECANCELED || img->alt + 1 >= img->nalts)
			break;
		snprintf(msg, sizeof(msg), "%s", al_error_message());
		al_log_info("'%s': mirror '%s/%s' failed (%s): trying the next "
		            "source",
		            img->display, img->src->host, img->src_repo, msg);
		al_buf_printf(&failed, "%s[%s/%s: %s]",
		              failed.len > 0 ? " " : "", img->src->host,
		              img->src_repo, msg);
		reset_phase_a(img);
		img->alt++;
		img->src = img->alt_src[img->alt];
		free(img->src_repo);
		if ((img->src_repo = al_strdup(img->alt_repo[img->alt])) ==
		    NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			break;
		}
	}
	if (rc < 0 && failed.len > 0 && rc != AL_ENOMEM) {
		snprintf(msg, sizeof(msg), "%s", al_error_message());
		rc = al_error_set(rc, "%s (mirrors also failed: %s)", msg,
		                  al_buf_cstr(&failed));
	}
	if (rc >= 0 && img->alt_mirror[img->alt]) {
		img->pulled_from =
		    al_sprintf("%s/%s", img->src->host, img->src_repo);
		al_log_info("'%s': pulled from mirror '%s' (registries.conf)",
		            img->display,
		            img->pulled_from != NULL ? img->pulled_from : "?");
	}
	al_buf_free(&failed);
	return rc;
}

const char *al_transfer_pulled_from(const al_transfer *t, int idx)
{
	if (t == NULL || idx < 0 || (size_t)idx >= t->nimages)
		return NULL;
	return t->images[idx].pulled_from;
}

/* ---- resolve only (mirror --dry-run, the free-space check) ---- */

int al_transfer_resolve(al_transfer *t, al_transfer_resolve_fn fn, void *ud)
{
	size_t *jobs = NULL, njobs = 0, i, j;
	int rc = 0;

	if (t == NULL || fn == NULL)
		return al_error_set(AL_EINVAL, "al_transfer_resolve: NULL");
	if ((rc = start_run(t, &jobs, &njobs)) < 0)
		return rc;
	for (j = 0; j < njobs; j++) {
		image *img = &t->images[jobs[j]];
		uint64_t mbytes = 0;
		for (i = 0; i < img->nmanifests; i++)
			mbytes += img->manifests[i].len;
		if (rc == 0)
			rc = fn(ud, (int)jobs[j], img->status,
			        img->status < 0 && img->message != NULL
			            ? img->message
			            : "",
			        img->status < 0 ? NULL : &img->top, mbytes,
			        img->pending, img->npending);
		drop_pending(img);
		/* resolved, not transferred: never tagged or reported done */
		if (img->status == 0) {
			free(img->message);
			img->message =
			    al_sprintf("%s: resolved only", img->display);
			img->status = AL_ECANCELED;
		}
	}
	free(jobs);
	return rc;
}
