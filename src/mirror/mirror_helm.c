/* mirror_helm.c: the mirror.helm step of a mirror run: chart repositories'
 * index.yaml, chart archives (HTTP or oci://) and local charts into the
 * store as Helm OCI artifacts, and the images they use through the
 * transfer engine (docs/helm.md). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "airlock/buf.h"
#include "airlock/clock.h"
#include "airlock/error.h"
#include "airlock/helm.h"
#include "airlock/http.h"
#include "airlock/log.h"
#include "airlock/mirror.h"
#include "airlock/oci.h"
#include "airlock/ref.h"
#include "airlock/registry.h"
#include "airlock/store.h"
#include "mirror_helm.h"
#include "mirror_images.h"
#include "mirror_int.h"
#include "error_int.h"

typedef struct hm {
	al_store *store;
	const al_transfer_opts *to;
	al_mirror_report *report;
	al_http *http;
	char **images; /* to mirror, owned, deduplicated */
	size_t nimages;
	char **oci; /* oci:// charts stored (their registry names), owned */
	size_t noci;
	size_t charts, unresolved;
	int rc; /* worst status */
	/* mirror --dry-run and the space check: plan, store nothing */
	al_mirror__helm_plan_ctx *plan;
	const char *cur; /* what a failure is about, for the plan */
} hm;

static void fail(hm *m, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Record an error in the report (the run goes on with the next chart). */
static void fail(hm *m, int rc, const char *fmt, ...)
{
	va_list ap;

	if (m->rc == 0 || rc == AL_ENOMEM)
		m->rc = rc;
	va_start(ap, fmt);
	if (m->plan != NULL) {
		/* a failed entry of the plan: listed in mapping.txt and
		 * missing.txt, its message printed by the dry run */
		char msg[2048];
		int n = vsnprintf(msg, sizeof(msg), fmt, ap);

		if (n < 0)
			msg[0] = '\0';
		if (al_plan_add_failed(m->plan->plan, "chart",
		                       m->cur != NULL ? m->cur : "", "", rc,
		                       msg) < 0)
			m->rc = AL_ENOMEM;
	} else {
		(void)al_mirror__report_verrorf(m->report, fmt, ap);
	}
	va_end(ap);
}

int al_mirror_helm_wanted(const al_imageset *cfg)
{
	return cfg != NULL && (cfg->nhelm_repos > 0 || cfg->nhelm_local > 0);
}

/* "scheme://host[:port]/..." -> "host[:port]" (caller frees). */
static char *url_host(const char *url)
{
	const char *h = strstr(url, "://"), *e;

	if (h == NULL)
		return NULL;
	h += 3;
	e = h + strcspn(h, "/?#");
	if (memchr(h, '@', (size_t)(e - h)) != NULL)
		h = (const char *)memchr(h, '@', (size_t)(e - h)) + 1;
	return al_strndup(h, (size_t)(e - h));
}

/*
 * GET url into body or sink. A 401 is answered once with the
 * credentials of the auth file for the URL's host (as for a registry:
 * Basic, or a Bearer token from the realm).
 */
static int http_get(hm *m, const char *url, al_buf *body, const al_writer *sink)
{
	al_http_resp resp = AL_HTTP_RESP_INIT;
	al_http_req req;
	const char *hdrs[2] = {NULL, NULL};
	char *auth = NULL, *host = NULL;
	int rc, attempt;

	for (attempt = 0; attempt < 2; attempt++) {
		const char *www;

		memset(&req, 0, sizeof(req));
		req.url = url;
		req.headers = hdrs;
		req.body_out = body;
		req.sink = sink;
		req.resumable = sink != NULL && sink->reset != NULL;
		if ((rc = al_http_do(m->http, &req, &resp)) < 0)
			goto out;
		if (resp.status >= 200 && resp.status < 300)
			goto out;
		www = al_http_resp_header(&resp, "WWW-Authenticate");
		if (resp.status != 401 || attempt > 0 || www == NULL ||
		    m->to->registry.auth == NULL)
			break;
		if ((host = url_host(url)) == NULL) {
			rc = al_error_set(AL_EINVAL, "'%s' is not a URL", url);
			goto out;
		}
		if ((rc = al_auth_challenge_url(m->to->registry.auth, m->http,
		                                host, NULL, www, NULL, url,
		                                &auth)) < 0)
			goto out;
		hdrs[0] = auth;
	}
	rc =
	    al_error_set(resp.status == 404 ? AL_ENOTFOUND
	                 : resp.status == 401 || resp.status == 403 ? AL_EAUTH
	                                                            : AL_EPROTO,
	                 "GET %s: HTTP status %ld", url, resp.status);
out:
	if (auth != NULL) {
		memset(auth, 0, strlen(auth));
		free(auth);
	}
	free(host);
	al_http_resp_clear(&resp);
	return rc;
}

static int add_image(hm *m, const char *ref)
{
	char **g;
	size_t i;

	for (i = 0; i < m->nimages; i++)
		if (strcmp(m->images[i], ref) == 0)
			return 0;
	g = realloc(m->images, (m->nimages + 1) * sizeof(*g));
	if (g == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	m->images = g;
	if ((g[m->nimages] = al_strdup(ref)) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	m->nimages++;
	return 0;
}

/* The chart's images to mirror; what could not be resolved to the log. */
static int take_images(hm *m, const al_helm_chart *ch, const char *where)
{
	size_t i;
	int rc;

	for (i = 0; i < ch->nimages; i++)
		if ((rc = add_image(m, ch->images[i].ref)) < 0)
			return rc;
	for (i = 0; i < ch->nunresolved; i++)
		al_log_warn("helm: %s: image not resolved: %s%s%s", where,
		            ch->unresolved[i].source,
		            ch->unresolved[i].ref[0] != '\0' ? ": " : "",
		            ch->unresolved[i].ref);
	m->unresolved += ch->nunresolved;
	al_log_info("helm: %s: %zu images, %zu not resolved", where,
	            ch->nimages, ch->nunresolved);
	return 0;
}

/* Name chart (whose archive blob is archive/size, in the store) as a Helm
 * OCI artifact: config blob, manifest blob, index entry. */
static int store_artifact(hm *m, const al_helm_chart *ch,
                          const al_digest *archive, uint64_t size,
                          const char *name)
{
	al_buf man = AL_BUF_INIT(AL_HELM_FILE_MAX * 4);
	al_descriptor d;
	al_store_image old;
	al_digest cfg;
	char ds[AL_DIGEST_STRMAX], os[AL_DIGEST_STRMAX];
	int rc;

	memset(&d, 0, sizeof(d));
	memset(&old, 0, sizeof(old));
	if ((rc = al_store_put_blob(m->store, (const uint8_t *)ch->config,
	                            strlen(ch->config), &cfg)) < 0 ||
	    (rc = al_helm_manifest(&man, ch, &cfg, strlen(ch->config), archive,
	                           size)) < 0 ||
	    (rc = al_store_put_blob(m->store, man.ptr, man.len, &d.digest)) < 0)
		goto out;
	d.media_type = (char *)AL_MT_OCI_MANIFEST;
	d.size = man.len;
	if (al_store_find(m->store, name, &old) == 0 &&
	    !al_digest_equal(&old.desc.digest, &d.digest))
		al_log_warn("helm: '%s' was %s and now names %s", name,
		            al_digest_str(&old.desc.digest, os),
		            al_digest_str(&d.digest, ds));
	al_error_clear();
	if ((rc = al_store_tag(m->store, name, &d)) < 0)
		goto out;
	m->charts++;
	al_log_info("helm: chart %s %s stored as '%s' (%s)", ch->name,
	            ch->version, name, al_digest_str(&d.digest, ds));
out:
	al_store_image_clear(&old);
	al_buf_free(&man);
	return rc;
}

/* An anonymous temporary file. */
static int tmp_fd(int *fd)
{
	const char *dir = getenv("TMPDIR");
	char *path = al_sprintf("%s/airlock-chart-XXXXXX",
	                        dir != NULL && dir[0] != '\0' ? dir : "/tmp");

	if (path == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	*fd = mkstemp(path);
	if (*fd < 0) {
		int rc = al_error_errno(errno, "cannot create '%s'", path);

		free(path);
		return rc;
	}
	unlink(path);
	free(path);
	return 0;
}

typedef struct fsink {
	int fd;
	uint64_t n;
	al_hasher *h;
} fsink;

static int fsink_write(void *ud, const uint8_t *p, size_t n)
{
	fsink *f = ud;

	if (f->n + n > AL_HELM_ARCHIVE_MAX)
		return al_error_set(AL_ELIMIT,
		                    "the chart archive is larger than %d bytes",
		                    AL_HELM_ARCHIVE_MAX);
	f->n += n;
	if (al_hasher_update(f->h, p, n) < 0)
		return al_error_set(AL_ENOMEM, "out of memory");
	while (n > 0) {
		ssize_t w = write(f->fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return al_error_errno(errno, "cannot write a temporary "
			                             "file");
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int fsink_reset(void *ud)
{
	fsink *f = ud;
	al_hasher *h = NULL;
	int rc;

	if (ftruncate(f->fd, 0) < 0 || lseek(f->fd, 0, SEEK_SET) < 0)
		return al_error_errno(errno, "cannot rewind a temporary file");
	if ((rc = al_hasher_new(&h, AL_DIGEST_SHA256)) < 0)
		return rc;
	al_hasher_free(f->h);
	f->h = h;
	f->n = 0;
	return 0;
}

/* fd (at any offset) into the store as a blob of digest d. */
static int fd_to_store(hm *m, int fd, const al_digest *d, uint64_t size)
{
	al_blob_writer *w = NULL;
	uint8_t buf[65536];
	int rc;

	if (al_store_has_blob(m->store, d, NULL) == 1)
		return 0;
	if (lseek(fd, 0, SEEK_SET) < 0)
		return al_error_errno(errno, "cannot rewind the chart archive");
	if ((rc = al_store_blob_begin(m->store, d, size, &w)) < 0)
		return rc;
	for (;;) {
		ssize_t r = read(fd, buf, sizeof(buf));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			al_blob_writer_abort(w);
			return al_error_errno(errno,
			                      "cannot read the chart archive");
		}
		if (r == 0)
			break;
		if ((rc = al_blob_writer_write(w, buf, (size_t)r)) < 0) {
			al_blob_writer_abort(w);
			return rc;
		}
	}
	return al_blob_writer_commit(w);
}

/* The store's record of the chart named name (airlock/releases.json
 * "charts", docs/helm.md), so that catalogs, inventory, packs and unpack
 * list it as a chart and not only as an image. */
static int record_chart(hm *m, const al_helm_chart *ch, const char *name,
                        const char *source)
{
	al_store_chart rec;
	al_store_image img;
	size_t i;
	int rc;

	memset(&rec, 0, sizeof(rec));
	memset(&img, 0, sizeof(img));
	if ((rc = al_store_find(m->store, name, &img)) < 0)
		return rc;
	rec.name = (char *)name;
	rec.digest = img.desc.digest;
	rec.has_digest = 1;
	rec.chart = ch->name;
	rec.version = ch->version;
	rec.app_version = ch->app_version;
	rec.source = (char *)source;
	rec.unresolved = (long long)ch->nunresolved;
	if ((rec.mirrored = al_clock_rfc3339_now()) == NULL ||
	    (ch->nimages > 0 &&
	     (rec.images = calloc(ch->nimages, sizeof(char *))) == NULL)) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < ch->nimages; i++)
		rec.images[i] = ch->images[i].ref;
	rec.nimages = ch->nimages;
	rc = al_store_chart_put(m->store, &rec);
out:
	free(rec.mirrored);
	free(rec.images);
	al_store_image_clear(&img);
	return rc;
}

/* The plan's entry of a chart archive (d, size) to be stored as name:
 * the archive, the config and the manifest store_artifact would write. */
static int plan_chart(hm *m, const al_helm_chart *ch, const al_digest *d,
                      uint64_t size, const char *name, const char *source)
{
	al_buf man = AL_BUF_INIT(AL_HELM_FILE_MAX * 4);
	al_descriptor blobs[2];
	char *dest = NULL;
	int rc;

	memset(blobs, 0, sizeof(blobs));
	blobs[0].digest = *d;
	blobs[0].size = size;
	blobs[1].size = strlen(ch->config);
	if ((rc = al_digest_bytes(&blobs[1].digest, AL_DIGEST_SHA256,
	                          ch->config, strlen(ch->config))) < 0 ||
	    (rc = al_helm_manifest(&man, ch, &blobs[1].digest, blobs[1].size, d,
	                           size)) < 0)
		goto out;
	if ((dest = m->plan->dest(m->plan->ud, name)) == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	rc = al_plan_add(m->plan->plan, "chart", source, dest, m->store,
	                 man.len, blobs, 2);
	m->charts++;
out:
	free(dest);
	al_buf_free(&man);
	return rc;
}

/* Scan the archive in fd, store it and name it charts/NAME:TAG (plan
 * mode: only its plan entry and its images). */
static int chart_from_fd(hm *m, int fd, const al_digest *d, uint64_t size,
                         const char *const *paths, size_t npaths,
                         const char *what)
{
	al_helm_chart ch;
	char *name = NULL, *tag = NULL, *where = NULL;
	int rc;

	memset(&ch, 0, sizeof(ch));
	if (lseek(fd, 0, SEEK_SET) < 0)
		return al_error_errno(errno, "cannot rewind the chart archive");
	if ((rc = al_helm_chart_read(&ch, fd, paths, npaths, what)) < 0)
		goto out;
	tag = al_helm_tag(ch.version);
	name = tag != NULL ? al_sprintf("charts/%s:%s", ch.name, tag) : NULL;
	where = al_sprintf("chart %s %s", ch.name, ch.version);
	if (name == NULL || where == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	if (m->plan != NULL) {
		if ((rc = plan_chart(m, &ch, d, size, name, what)) == 0)
			rc = take_images(m, &ch, where);
		goto out;
	}
	if ((rc = fd_to_store(m, fd, d, size)) < 0 ||
	    (rc = store_artifact(m, &ch, d, size, name)) < 0 ||
	    (rc = take_images(m, &ch, where)) < 0 ||
	    (rc = record_chart(m, &ch, name, what)) < 0)
		goto out;
out:
	free(name);
	free(tag);
	free(where);
	al_helm_chart_clear(&ch);
	return rc;
}

static int hex_digest(al_digest *d, const char *hex)
{
	char *s = al_sprintf("sha256:%s", hex);
	int rc;

	if (s == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	rc = al_digest_parse_str(d, s);
	free(s);
	return rc;
}

/* One chart version of an HTTP repository: download, verify against the
 * index digest, store. */
static int http_chart(hm *m, const al_imageset_helm_repo *r,
                      const al_helm_index_entry *e,
                      const al_imageset_helm_chart *want)
{
	fsink f;
	al_writer w;
	al_digest d, idx;
	char *url = NULL, *what = NULL;
	char ds[AL_DIGEST_STRMAX];
	int rc;

	memset(&f, 0, sizeof(f));
	f.fd = -1;
	if (e->nurls == 0)
		return al_error_set(
		    AL_EPARSE, "chart %s %s of repository '%s' has no urls",
		    e->name, e->version, r->name);
	if ((rc = al_helm_resolve_url(r->url, e->urls[0], &url)) < 0)
		return rc;
	if (al_str_startswith(url, "oci://")) {
		rc = al_error_set(AL_EUNSUPPORTED,
		                  "chart %s %s: the index points to '%s': name "
		                  "an oci:// repository instead",
		                  e->name, e->version, url);
		goto out;
	}
	if (!al_str_startswith(url, "http://") &&
	    !al_str_startswith(url, "https://")) {
		rc = al_error_set(AL_EUNSUPPORTED,
		                  "chart %s %s: '%s' is not an http(s) URL",
		                  e->name, e->version, url);
		goto out;
	}
	what = al_sprintf("%s", url);
	if (what == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = tmp_fd(&f.fd)) < 0 ||
	    (rc = al_hasher_new(&f.h, AL_DIGEST_SHA256)) < 0)
		goto out;
	w.write = fsink_write;
	w.reset = fsink_reset;
	w.ud = &f;
	if ((rc = http_get(m, url, NULL, &w)) < 0 ||
	    (rc = al_hasher_final(f.h, &d)) < 0)
		goto out;
	if (e->digest != NULL) {
		if (hex_digest(&idx, e->digest) < 0) {
			rc =
			    al_error_set(AL_EPARSE,
			                 "chart %s %s: index digest '%.80s' is "
			                 "not a sha256",
			                 e->name, e->version, e->digest);
			goto out;
		}
		if (!al_digest_equal(&idx, &d)) {
			rc = al_error_set(
			    AL_EVERIFY,
			    "%s: the archive hashes to %s, the index "
			    "says sha256:%s",
			    url, al_digest_str(&d, ds), e->digest);
			goto out;
		}
	}
	rc = chart_from_fd(m, f.fd, &d, f.n,
	                   want != NULL ? (const char *const *)want->image_paths
	                                : NULL,
	                   want != NULL ? want->nimage_paths : 0, what);
out:
	if (f.fd >= 0)
		close(f.fd);
	al_hasher_free(f.h);
	free(url);
	free(what);
	return rc;
}

static int http_repo(hm *m, const al_imageset_helm_repo *r)
{
	al_buf body = AL_BUF_INIT(AL_HELM_INDEX_MAX);
	al_helm_index ix;
	char *url = NULL;
	size_t i;
	int rc;

	memset(&ix, 0, sizeof(ix));
	/* repo.ChartRepository.DownloadIndexFile: URL + "/index.yaml" */
	if ((rc = al_helm_resolve_url(r->url, "index.yaml", &url)) < 0)
		goto out;
	if ((rc = http_get(m, url, &body, NULL)) < 0) {
		if (rc == AL_ELIMIT)
			rc = al_error_set(AL_ELIMIT,
			                  "%s is larger than %d bytes", url,
			                  AL_HELM_INDEX_MAX);
		goto out;
	}
	if ((rc = al_helm_index_parse(&ix, body.ptr, body.len, url)) < 0)
		goto out;
	if (r->all_charts) {
		for (i = 0; i < ix.n; i++) {
			const al_helm_index_entry *e = &ix.entries[i];

			if (e->type != NULL && strcmp(e->type, "library") == 0)
				continue;
			if ((rc = http_chart(m, r, e, NULL)) < 0)
				fail(m, rc, "helm repository %s: %s", r->name,
				     al_error_message());
		}
		goto out;
	}
	for (i = 0; i < r->ncharts; i++) {
		const al_imageset_helm_chart *c = &r->charts[i];
		const al_helm_index_entry *e;

		if ((rc = al_helm_index_get(&ix, c->name, c->version, &e)) <
		        0 ||
		    (rc = http_chart(m, r, e, c)) < 0)
			fail(m, rc, "helm repository %s: %s", r->name,
			     al_error_message());
	}
	rc = 0;
out:
	al_helm_index_clear(&ix);
	al_buf_free(&body);
	free(url);
	return rc;
}

/* Helm's Tags + GetTagMatchingVersionOrConstraint("*"): the highest tag
 * that is a version without prerelease ('_' read as '+'). */
static int latest_tag(hm *m, const al_ref *base, const char *chart, char **out)
{
	al_registry_opts ro = m->to->registry;
	al_registry *reg = NULL;
	char **tags = NULL, *repo = NULL, *best = NULL;
	size_t ntags = 0, i;
	int rc;

	ro.http.insecure_hosts = m->to->insecure_hosts;
	ro.insecure = m->to->all_insecure;
	for (i = 0;
	     m->to->insecure_hosts != NULL && m->to->insecure_hosts[i] != NULL;
	     i++)
		if (strcmp(m->to->insecure_hosts[i], base->registry) == 0)
			ro.insecure = 1;
	repo = al_sprintf("%s%s%s", base->repository,
	                  base->repository[0] != '\0' ? "/" : "", chart);
	if (repo == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	if ((rc = al_registry_new(&reg, base->registry, &ro)) < 0 ||
	    (rc = al_registry_list_tags(reg, repo, &tags, &ntags)) < 0)
		goto out;
	for (i = 0; i < ntags; i++) {
		char *v = al_strdup(tags[i]), *p;

		if (v == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		for (p = v; *p != '\0'; p++)
			if (*p == '_')
				*p = '+';
		if (al_helm_version_valid(v) &&
		    strcspn(v, "-+") == strcspn(v, "+") &&
		    (best == NULL || al_helm_version_compare(v, best) > 0)) {
			free(best);
			best = v;
		} else {
			free(v);
		}
	}
	if (best == NULL) {
		rc = al_error_set(AL_ENOTFOUND,
		                  "%s/%s has no tag that is a stable chart "
		                  "version",
		                  base->registry, repo);
		goto out;
	}
	*out = best;
	best = NULL;
out:
	for (i = 0; i < ntags; i++)
		free(tags[i]);
	free(tags);
	free(best);
	free(repo);
	al_registry_free(reg);
	return rc;
}

/* Plan mode, an oci:// chart: its resolution becomes the plan entry. */
typedef struct oci_plan {
	hm *m;
	const char *source, *name;
	int status;
} oci_plan;

static int on_oci_resolved(void *ud, int image, int status, const char *message,
                           const al_descriptor *top, uint64_t manifest_bytes,
                           const al_descriptor *blobs, size_t nblobs)
{
	oci_plan *op = ud;
	char *dest;
	int rc;

	(void)image;
	(void)top;
	if (status < 0) {
		op->status =
		    al_error_set(status, "%s", message != NULL ? message : "");
		return 0;
	}
	if ((dest = op->m->plan->dest(op->m->plan->ud, op->name)) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	rc = al_plan_add(op->m->plan->plan, "chart", op->source, dest,
	                 op->m->store, manifest_bytes, blobs, nblobs);
	free(dest);
	return rc;
}

/*
 * Plan mode, an oci:// chart: resolved into the plan (manifests only),
 * then fetched into the store held, without a name (as the plan does for
 * release and catalog images: its chart layer must be read to find the
 * images), its top manifest in *d.
 */
static int plan_oci(hm *m, const al_imgref *src, const char *ref, al_digest *d)
{
	al_transfer *t = NULL;
	al_transfer_stats st = AL_TRANSFER_STATS_INIT;
	oci_plan op;
	const char *msg = NULL;
	int rc, idx, status = 0;

	memset(&op, 0, sizeof(op));
	op.m = m;
	op.name = ref;
	if ((op.source = al_imgref_string(src)) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	if ((rc = al_transfer_new_to_store(&t, m->store, m->to)) < 0)
		goto out;
	if ((idx = al_transfer_add(t, src, ref)) < 0) {
		rc = idx;
		goto out;
	}
	if ((rc = al_transfer_resolve(t, on_oci_resolved, &op)) < 0)
		goto out;
	if (op.status < 0) {
		rc = op.status;
		goto out;
	}
	al_transfer_free(t);
	t = NULL;
	if ((rc = al_transfer_new_to_store(&t, m->store, m->to)) < 0)
		goto out;
	if ((idx = al_transfer_add(t, src, ref)) < 0) {
		rc = idx;
		goto out;
	}
	if ((rc = al_transfer_hold(t, idx)) < 0)
		goto out;
	al_transfer_run(t, &st);
	m->plan->prefetched += st.bytes_transferred;
	m->plan->prefetched_blobs += st.blobs_transferred;
	al_transfer_result(t, idx, &status, d, NULL, &msg);
	rc =
	    status < 0 ? al_error_set(status, "%s", msg != NULL ? msg : "") : 0;
out:
	free((char *)(uintptr_t)op.source);
	al_transfer_free(t);
	return rc;
}

/* An oci:// chart: through the transfer engine into the store under its
 * own reference, then read from its chart layer. */
static int oci_chart(hm *m, const al_imageset_helm_repo *r,
                     const al_imageset_helm_chart *c)
{
	al_transfer *t = NULL;
	al_imgref src;
	al_ref base;
	al_store_image img;
	al_manifest man;
	al_helm_chart ch;
	char *version = NULL, *tag = NULL, *ref = NULL;
	char *where = NULL;
	const al_descriptor *layer = NULL;
	const char *msg = NULL;
	int rc, idx, st = 0, fd = -1;
	size_t i;

	memset(&src, 0, sizeof(src));
	memset(&base, 0, sizeof(base));
	memset(&img, 0, sizeof(img));
	memset(&man, 0, sizeof(man));
	memset(&ch, 0, sizeof(ch));
	/* oci://HOST[/NAMESPACE]: the chart is HOST/NAMESPACE/NAME:TAG */
	{
		const char *h = r->url + strlen("oci://");
		size_t hl = strcspn(h, "/"), nl;

		base.registry = al_strndup(h, hl);
		h += hl;
		while (*h == '/')
			h++;
		nl = strlen(h);
		while (nl > 0 && h[nl - 1] == '/')
			nl--;
		base.repository = al_strndup(h, nl);
		if (base.registry == NULL || base.repository == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
	}
	if (c->version != NULL)
		version = al_strdup(c->version);
	else if ((rc = latest_tag(m, &base, c->name, &version)) < 0)
		goto out;
	if (version == NULL || (tag = al_helm_tag(version)) == NULL ||
	    (ref = al_sprintf("%s/%s%s%s:%s", base.registry, base.repository,
	                      base.repository[0] != '\0' ? "/" : "", c->name,
	                      tag)) == NULL ||
	    (where = al_sprintf("chart %s %s", c->name, version)) == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = al_imgref_parse(&src, ref)) < 0)
		goto out;
	if (m->plan != NULL) {
		if ((rc = plan_oci(m, &src, ref, &img.desc.digest)) < 0)
			goto out;
	} else {
		if ((rc = al_transfer_new_to_store(&t, m->store, m->to)) < 0)
			goto out;
		if ((idx = al_transfer_add(t, &src, ref)) < 0) {
			rc = idx;
			goto out;
		}
		al_transfer_run(t, &m->report->stats);
		al_transfer_result(t, idx, &st, NULL, NULL, &msg);
		if (st < 0) {
			rc = al_error_set(st, "%s", msg != NULL ? msg : "");
			goto out;
		}
		if ((rc = al_store_find(m->store, ref, &img)) < 0)
			goto out;
	}
	if ((rc = al_store_image_manifest(m->store, &img.desc.digest, NULL,
	                                  "chart", &man)) < 0)
		goto out;
	if (man.config.media_type == NULL ||
	    strcmp(man.config.media_type, AL_HELM_CONFIG_MT) != 0) {
		rc = al_error_set(
		    AL_EPARSE,
		    "%s is not a Helm chart (config media type "
		    "'%s')",
		    ref, man.config.media_type ? man.config.media_type : "");
		goto out;
	}
	for (i = 0; i < man.nlayers; i++)
		if (man.layers[i].media_type != NULL &&
		    (strcmp(man.layers[i].media_type, AL_HELM_CHART_MT) == 0 ||
		     strcmp(man.layers[i].media_type,
		            AL_HELM_LEGACY_CHART_MT) == 0))
			layer = &man.layers[i];
	if (layer == NULL) {
		rc = al_error_set(AL_EPARSE, "%s has no chart layer", ref);
		goto out;
	}
	if ((rc = al_store_blob_open(m->store, &layer->digest, &fd, NULL)) <
	        0 ||
	    (rc = al_helm_chart_read(&ch, fd,
	                             (const char *const *)c->image_paths,
	                             c->nimage_paths, ref)) < 0)
		goto out;
	m->charts++;
	al_log_info("helm: chart %s %s %s '%s'", ch.name, ch.version,
	            m->plan != NULL ? "read (held, unnamed) from" : "stored as",
	            ref);
	if ((rc = take_images(m, &ch, where)) == 0 && m->plan == NULL) {
		char *src_ref = al_sprintf("oci://%s", ref);

		char **g = realloc(m->oci, (m->noci + 1) * sizeof(*g));

		rc = src_ref != NULL ? record_chart(m, &ch, ref, src_ref)
		                     : al_error_set(AL_ENOMEM, "out of memory");
		free(src_ref);
		if (g != NULL)
			m->oci = g;
		if (rc == 0 &&
		    (g == NULL || (g[m->noci] = al_strdup(ref)) == NULL))
			rc = al_error_set(AL_ENOMEM, "out of memory");
		if (rc == 0)
			m->noci++;
	}
out:
	if (fd >= 0)
		close(fd);
	al_helm_chart_clear(&ch);
	al_manifest_clear(&man);
	al_store_image_clear(&img);
	al_transfer_free(t);
	al_imgref_clear(&src);
	al_ref_clear(&base);
	free(version);
	free(tag);
	free(ref);
	free(where);
	return rc;
}

/* The sha256 of fd's content from the start, and its size. */
static int hash_fd(int fd, al_digest *d, uint64_t *size)
{
	al_hasher *h = NULL;
	uint8_t buf[65536];
	int rc;

	*size = 0;
	if (lseek(fd, 0, SEEK_SET) < 0)
		return al_error_errno(errno, "cannot rewind the chart archive");
	if ((rc = al_hasher_new(&h, AL_DIGEST_SHA256)) < 0)
		return rc;
	for (;;) {
		ssize_t r = read(fd, buf, sizeof(buf));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = al_error_errno(errno,
			                    "cannot read the chart archive");
			goto out;
		}
		if (r == 0)
			break;
		*size += (uint64_t)r;
		if ((rc = al_hasher_update(h, buf, (size_t)r)) < 0)
			goto out;
	}
	rc = al_hasher_final(h, d);
out:
	al_hasher_free(h);
	return rc;
}

/*
 * A local chart (oc-mirror getHelmImagesFromLocalChart -> getImages ->
 * Helm's loader.Load): a directory is loaded as a chart directory
 * (packaged here as `helm package` would, then stored like an archive),
 * anything else as a chart archive.
 */
static int local_chart(hm *m, const al_imageset_helm_chart *c)
{
	al_digest d;
	uint64_t size = 0;
	struct stat st;
	int fd, rc;

	if (stat(c->path, &st) == 0 && S_ISDIR(st.st_mode)) {
		if ((rc = tmp_fd(&fd)) < 0)
			return rc;
		if ((rc = al_helm_package_dir(c->path, fd)) < 0 ||
		    (rc = hash_fd(fd, &d, &size)) < 0)
			goto out;
		if (size > AL_HELM_ARCHIVE_MAX) {
			rc =
			    al_error_set(AL_ELIMIT,
			                 "helm local chart '%s': '%s' packages "
			                 "to more than %d bytes",
			                 c->name, c->path, AL_HELM_ARCHIVE_MAX);
			goto out;
		}
		al_log_info("helm: chart directory '%s' packaged (%llu bytes)",
		            c->path, (unsigned long long)size);
		rc = chart_from_fd(m, fd, &d, size,
		                   (const char *const *)c->image_paths,
		                   c->nimage_paths, c->path);
		goto out;
	}
	fd = open(c->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return al_error_errno(errno,
		                      "helm local chart '%s': cannot "
		                      "open '%s'",
		                      c->name, c->path);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return al_error_set(AL_EUNSUPPORTED,
		                    "helm local chart '%s': '%s' is neither a "
		                    "chart directory nor a chart archive",
		                    c->name, c->path);
	}
	if ((uint64_t)st.st_size > AL_HELM_ARCHIVE_MAX) {
		close(fd);
		return al_error_set(AL_ELIMIT, "'%s' is larger than %d bytes",
		                    c->path, AL_HELM_ARCHIVE_MAX);
	}
	if ((rc = al_digest_file(&d, AL_DIGEST_SHA256, c->path, &size)) == 0)
		rc = chart_from_fd(m, fd, &d, size,
		                   (const char *const *)c->image_paths,
		                   c->nimage_paths, c->path);
out:
	close(fd);
	return rc;
}

/* The step; the images to mirror moved to *imgs (may be NULL). With
 * plan, only the plan entries of the charts and their images. */
static int helm_run(al_store *s, const al_imageset *cfg,
                    const al_transfer_opts *to, al_mirror_report *report,
                    char ***imgs, size_t *nimgs, al_mirror__helm_plan_ctx *plan)
{
	al_http_opts ho;
	al_mirror_report rep = AL_MIRROR_REPORT_INIT;
	hm m;
	size_t i, j;
	int rc;

	if (!al_mirror_helm_wanted(cfg))
		return 0;
	memset(&m, 0, sizeof(m));
	m.store = s;
	m.to = to;
	m.report = report;
	m.plan = plan;
	ho = to->registry.http;
	ho.insecure_hosts = to->insecure_hosts;
	ho.tls_verify_off = ho.tls_verify_off || to->all_insecure;
	ho.no_plain_auth = 1;
	if (to->cancel != NULL)
		ho.cancel = to->cancel;
	if ((rc = al_http_new(&m.http, &ho)) < 0)
		return rc;
	for (i = 0; i < cfg->nhelm_local; i++) {
		m.cur = cfg->helm_local[i].path;
		if ((rc = local_chart(&m, &cfg->helm_local[i])) < 0)
			fail(&m, rc, "helm: %s", al_error_message());
	}
	for (i = 0; i < cfg->nhelm_repos; i++) {
		const al_imageset_helm_repo *r = &cfg->helm_repos[i];

		m.cur = r->url;
		if (!al_str_startswith(r->url, "oci://")) {
			if ((rc = http_repo(&m, r)) < 0)
				fail(&m, rc, "helm repository %s: %s", r->name,
				     al_error_message());
			continue;
		}
		for (j = 0; j < r->ncharts; j++)
			if ((rc = oci_chart(&m, r, &r->charts[j])) < 0)
				fail(&m, rc, "helm repository %s: %s", r->name,
				     al_error_message());
	}
	al_log_info("helm: %zu charts, %zu images to mirror, %zu image "
	            "fields not resolved",
	            m.charts, m.nimages, m.unresolved);
	if (m.nimages > 0 && plan == NULL) {
		rc = al_mirror__run_images(s, NULL, 0,
		                           (const char *const *)m.images,
		                           m.nimages, to, NULL, &rep);
		/* the failed-image list: these are the charts' images */
		(void)al_mirror__report_merge(report, &rep, "chart-image");
		if (rc < 0 && m.rc == 0)
			m.rc = rc;
	}
	al_mirror_report_clear(&rep);
	/* for the sigstore step: the images, and the oci:// charts, which
	 * are images of their registry (a chart from index.yaml or a
	 * directory has no source image to look up) */
	for (i = 0; imgs != NULL && i < m.noci; i++) {
		if ((rc = add_image(&m, m.oci[i])) < 0) {
			fail(&m, rc, "helm: %s", al_error_message());
			break;
		}
	}
	if (imgs != NULL) {
		*imgs = m.images;
		*nimgs = m.nimages;
		m.images = NULL;
		m.nimages = 0;
	}
	for (i = 0; i < m.noci; i++)
		free(m.oci[i]);
	free(m.oci);
	for (i = 0; i < m.nimages; i++)
		free(m.images[i]);
	free(m.images);
	al_http_free(m.http);
	return m.rc;
}

int al_mirror_helm(al_store *s, const al_imageset *cfg,
                   const al_transfer_opts *to, al_mirror_report *report)
{
	int rc;

	if ((rc = AL_RESULT_VERSION_CHECK("al_mirror_report", report, version,
	                                  AL_MIRROR_REPORT_VERSION)) < 0)
		return rc;
	if (to != NULL &&
	    (rc = al_opts_version_check("al_transfer_opts", to->version,
	                                AL_TRANSFER_OPTS_VERSION)) < 0)
		return rc;
	return helm_run(s, cfg, to, report, NULL, NULL, NULL);
}

int al_mirror__helm(al_store *s, const al_imageset *cfg,
                    const al_transfer_opts *to, al_mirror_result *res)
{
	al_mirror__helm_clear(res);
	return helm_run(s, cfg, to, &res->report, &res->chart_images,
	                &res->nchart_images, NULL);
}

int al_mirror__helm_plan(al_store *s, const al_imageset *cfg,
                         const al_transfer_opts *to,
                         al_mirror__helm_plan_ctx *hp)
{
	al_mirror_report rep = AL_MIRROR_REPORT_INIT;
	int rc;

	if (hp == NULL || hp->plan == NULL || hp->dest == NULL)
		return al_error_set(AL_EINVAL, "al_mirror__helm_plan: NULL");
	rc = helm_run(s, cfg, to, &rep, &hp->images, &hp->nimages, hp);
	al_mirror_report_clear(&rep);
	/* the failures are entries of the plan; only running out of memory
	 * fails the plan */
	return rc == AL_ENOMEM ? rc : 0;
}

void al_mirror__helm_plan_clear(al_mirror__helm_plan_ctx *hp)
{
	size_t i;

	if (hp == NULL)
		return;
	for (i = 0; i < hp->nimages; i++)
		free(hp->images[i]);
	free(hp->images);
	hp->images = NULL;
	hp->nimages = 0;
}

void al_mirror__helm_clear(al_mirror_result *res)
{
	size_t i;

	if (res == NULL)
		return;
	for (i = 0; i < res->nchart_images; i++)
		free(res->chart_images[i]);
	free(res->chart_images);
	res->chart_images = NULL;
	res->nchart_images = 0;
}
