/* mirror_failed.c: the failed-image list of a mirror run: recorded in the
 * report, written under STORE/airlock/failed, read back by
 * `airlock mirror --retry FILE` (docs/lifecycle.md). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/mirror.h"
#include "airlock/mirror_plan.h"
#include "airlock/ref.h"
#include "mirror_failed.h"

/* Where a store keeps its lists, under the store directory. */
#define FAILED_DIR "airlock/failed"
/* Longest reference written or read, as al_ref_parse bounds them. */
#define REF_MAX 1024
/* Longest error message written (longer ones are cut). */
#define MESSAGE_MAX 1000

static const char *const kinds[] = AL_MIRROR_FAILED_KINDS;
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

const al_imageset *al_mirror__options_view(al_imageset *v,
                                           const al_imageset *cfg)
{
	if (cfg == NULL)
		return NULL;
	memset(v, 0, sizeof(*v));
	/* how to fetch */
	v->sources = cfg->sources;
	v->nsources = cfg->nsources;
	v->insecure = cfg->insecure;
	v->ninsecure = cfg->ninsecure;
	v->additional_renames = cfg->additional_renames;
	v->nadditional_renames = cfg->nadditional_renames;
	/* which platform */
	v->architectures = cfg->architectures;
	v->narchitectures = cfg->narchitectures;
	v->platforms = cfg->platforms;
	v->nplatforms = cfg->nplatforms;
	/* how to verify, what never to mirror */
	v->keyrings = cfg->keyrings;
	v->nkeyrings = cfg->nkeyrings;
	v->signature_stores = cfg->signature_stores;
	v->nsignature_stores = cfg->nsignature_stores;
	v->identity_policy = cfg->identity_policy;
	v->signature_timeout = cfg->signature_timeout;
	v->blocked = cfg->blocked;
	v->nblocked = cfg->nblocked;
	/* where it came from */
	v->path = cfg->path;
	v->api_version = cfg->api_version;
	v->ndocuments = cfg->ndocuments;
	v->store_path = cfg->store_path;
	v->archive_size = cfg->archive_size;
	return v;
}

/* --- writing ----------------------------------------------------------- */

static int is_control(unsigned char c)
{
	return (c < 0x20 && c != '\t') || c == 0x7f;
}

/* s with control characters (and tabs) as '?', cut at max bytes. */
static int put_clean(al_buf *b, const char *s, size_t max)
{
	size_t i, n = strlen(s);
	int rc = 0;

	if (n > max)
		n = max;
	for (i = 0; i < n && rc == 0; i++) {
		char c = (char)((unsigned char)s[i] < 0x20 ||
		                        (unsigned char)s[i] == 0x7f
		                    ? '?'
		                    : s[i]);
		rc = al_buf_append(b, &c, 1);
	}
	if (rc == 0 && strlen(s) > max)
		rc = al_buf_puts(b, "...");
	return rc;
}

/* 1 when source reads back as an entry (see al_mirror_failed_parse). */
static int retryable(const char *source)
{
	al_imgref ir = {0};
	size_t i, n = strlen(source);
	int ok;

	if (n == 0 || n > REF_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if (is_control((unsigned char)source[i]) || source[i] == '\t')
			return 0;
	ok = al_imgref_parse(&ir, source) == 0;
	al_imgref_clear(&ir);
	if (!ok)
		al_error_clear();
	return ok;
}

static int cmp_failure(const al_mirror_failure *a, const al_mirror_failure *b)
{
	int c = strcmp(a->kind, b->kind);

	return c != 0 ? c : strcmp(a->source, b->source);
}

/* an entry and its place, so that sorting needs no shared state */
typedef struct placed {
	const al_mirror_failure *f;
	size_t i;
} placed;

static int cmp_placed(const void *a, const void *b)
{
	const placed *x = a, *y = b;
	int c = cmp_failure(x->f, y->f);

	return c != 0 ? c : (x->i > y->i) - (x->i < y->i);
}

/*
 * *dup (caller frees): dup[i] is 1 when v[i] repeats the kind and source
 * of an earlier entry. O(n log n), so that the bound on entries is not a
 * bound on time.
 */
static int mark_dups(const al_mirror_failure *v, size_t n, unsigned char **dup)
{
	placed *pl = NULL;
	unsigned char *d = NULL;
	size_t i;

	if ((pl = calloc(n + 1, sizeof(*pl))) == NULL ||
	    (d = calloc(n + 1, 1)) == NULL) {
		free(pl);
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	for (i = 0; i < n; i++) {
		pl[i].f = &v[i];
		pl[i].i = i;
	}
	qsort(pl, n, sizeof(*pl), cmp_placed);
	for (i = 1; i < n; i++)
		if (cmp_failure(pl[i - 1].f, pl[i].f) == 0)
			d[pl[i].i] = 1;
	free(pl);
	*dup = d;
	return 0;
}

static int put_entry(al_buf *b, const al_mirror_failure *f, size_t *entries)
{
	char ds[AL_DIGEST_STRMAX];
	int rc;

	if (!retryable(f->source)) {
		if ((rc = al_buf_puts(b, "# not retryable (not an image "
		                         "reference): ")) < 0 ||
		    (rc = put_clean(b, f->source, MESSAGE_MAX)) < 0 ||
		    (rc = al_buf_puts(b, "\n")) < 0)
			return rc;
		return 0;
	}
	if ((rc = al_buf_puts(b, "# error: ")) < 0 ||
	    (rc = put_clean(
	         b, f->message != NULL ? f->message : al_status_name(f->status),
	         MESSAGE_MAX)) < 0 ||
	    (rc = al_buf_printf(b, "\n%s\t%s\t%s\n", f->kind, f->source,
	                        f->has_digest ? al_digest_str(&f->digest, ds)
	                                      : "-")) < 0)
		return rc;
	(*entries)++;
	return 0;
}

static int format_list(al_buf *b, const al_mirror_result *res,
                       const char *store_path, size_t *entries)
{
	const al_mirror_report *r = &res->report;
	unsigned char *dup = NULL;
	char when[32];
	struct tm tm;
	time_t now = time(NULL);
	size_t i, k;
	int rc;

	if (gmtime_r(&now, &tm) == NULL ||
	    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		when[0] = '\0';
	if ((rc = al_buf_printf(b,
	                        "%s\n"
	                        "# written %s by airlock mirror, store ",
	                        AL_MIRROR_FAILED_HEADER, when)) < 0 ||
	    (rc = put_clean(b, store_path, REF_MAX)) < 0 ||
	    (rc = al_buf_puts(
	         b, "\n"
	            "# these images failed; fetch only them with:\n"
	            "#   airlock mirror --retry THIS-FILE --store STORE\n"
	            "# each entry: KIND<TAB>REFERENCE<TAB>DIGEST (- when "
	            "the run did not\n"
	            "# learn it), after a '# error:' line; kinds: release, "
	            "image,\n"
	            "# catalog-image, chart-image (docs/lifecycle.md)\n")) < 0)
		return rc;
	for (i = 0; i < res->ncatalogs; i++) {
		const al_mirror_catalog *c = &res->catalogs[i];
		if (c->status == 0)
			continue;
		if ((rc = al_buf_puts(b, "# not retried: catalog ")) < 0 ||
		    (rc = put_clean(b, c->source != NULL ? c->source : "",
		                    REF_MAX)) < 0 ||
		    (rc = al_buf_puts(b, " (a retry fetches its images listed "
		                         "here; rerun airlock mirror --config "
		                         "to rebuild and name it)\n")) < 0)
			return rc;
	}
	if ((rc = mark_dups(r->failed, r->nfailed, &dup)) < 0)
		return rc;
	for (k = 0; k < NKINDS && rc == 0; k++)
		for (i = 0; i < r->nfailed && rc == 0; i++) {
			const al_mirror_failure *f = &r->failed[i];
			if (strcmp(f->kind, kinds[k]) != 0 || dup[i])
				continue;
			rc = put_entry(b, f, entries);
		}
	free(dup);
	return rc;
}

/* STORE/airlock/failed/mirror-YYYYMMDD_HHMMSS[-N].txt, not existing. */
static int list_path(const char *dir, char **out)
{
	char stamp[32];
	struct tm tm;
	time_t now = time(NULL);
	int n;

	if (gmtime_r(&now, &tm) == NULL ||
	    strftime(stamp, sizeof(stamp), "%Y%m%d_%H%M%S", &tm) == 0)
		return al_error_set(AL_EIO, "cannot read the clock");
	for (n = 0; n < 100; n++) {
		char *p =
		    n == 0 ? al_sprintf("%s/mirror-%s.txt", dir, stamp)
		           : al_sprintf("%s/mirror-%s-%d.txt", dir, stamp, n);
		int e;

		if (p == NULL)
			return al_error_set(AL_ENOMEM, "out of memory");
		if ((e = al_fs_exists(p)) == 0) {
			*out = p;
			return 0;
		}
		free(p);
		if (e < 0)
			return e;
	}
	return al_error_set(AL_EIO, "'%s': too many lists written at %s", dir,
	                    stamp);
}

int al_mirror_failed_write(const al_mirror_result *res, const char *store_path,
                           char **path_out)
{
	al_buf b = AL_BUF_INIT(AL_MIRROR_FAILED_MAX_BYTES);
	char *dir = NULL, *path = NULL;
	size_t entries = 0;
	int rc;

	if (path_out != NULL)
		*path_out = NULL;
	if (res == NULL || store_path == NULL || path_out == NULL)
		return al_error_set(AL_EINVAL, "al_mirror_failed_write: NULL");
	if (res->report.nfailed == 0)
		return 0;
	if ((rc = format_list(&b, res, store_path, &entries)) < 0) {
		rc = al_error_wrap(rc, "the failed-image list");
		goto out;
	}
	if (entries == 0) /* nothing a retry could read */
		goto out;
	if ((dir = al_path_join(store_path, FAILED_DIR)) == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = al_fs_mkdir_p(dir, 0755)) < 0 ||
	    (rc = list_path(dir, &path)) < 0 ||
	    (rc = al_fs_write_atomic(path, b.ptr, b.len)) < 0) {
		rc = al_error_wrap(rc,
		                   "cannot write the failed-image list in "
		                   "'%s'",
		                   dir);
		goto out;
	}
	*path_out = path;
	path = NULL;
out:
	al_buf_free(&b);
	free(dir);
	free(path);
	return rc;
}

/* --- reading ----------------------------------------------------------- */

static int known_kind(const uint8_t *p, size_t n, const char **kind)
{
	size_t k;

	for (k = 0; k < NKINDS; k++)
		if (strlen(kinds[k]) == n && memcmp(kinds[k], p, n) == 0) {
			*kind = kinds[k];
			return 1;
		}
	return 0;
}

/* One entry line (no control characters, not a comment) into r. */
static int parse_entry(al_mirror_report *r, const char *name, size_t line,
                       const uint8_t *p, size_t n)
{
	const uint8_t *t1 = memchr(p, '\t', n), *t2 = NULL;
	const uint8_t *ref, *dg = NULL;
	size_t nref, ndg = 0;
	const char *kind = NULL;
	char refs[REF_MAX + 1];
	al_imgref ir = {0};
	al_digest d;
	int rc;

	memset(&d, 0, sizeof(d));
	if (t1 == NULL)
		return al_error_set(
		    AL_EPARSE, "%s:%zu: not KIND<TAB>REFERENCE[<TAB>DIGEST]",
		    name, line);
	if (!known_kind(p, (size_t)(t1 - p), &kind))
		return al_error_set(AL_EPARSE,
		                    "%s:%zu: unknown kind '%.*s' (release, "
		                    "image, catalog-image or chart-image)",
		                    name, line,
		                    (int)((size_t)(t1 - p) > 64 ? 64 : t1 - p),
		                    (const char *)p);
	ref = t1 + 1;
	t2 = memchr(ref, '\t', n - (size_t)(ref - p));
	nref = t2 != NULL ? (size_t)(t2 - ref) : n - (size_t)(ref - p);
	if (t2 != NULL) {
		dg = t2 + 1;
		ndg = n - (size_t)(dg - p);
		if (memchr(dg, '\t', ndg) != NULL)
			return al_error_set(AL_EPARSE,
			                    "%s:%zu: more than three columns",
			                    name, line);
	}
	if (nref == 0 || nref > REF_MAX)
		return al_error_set(AL_EPARSE,
		                    "%s:%zu: the reference is empty or longer "
		                    "than %d bytes",
		                    name, line, REF_MAX);
	memcpy(refs, ref, nref);
	refs[nref] = '\0';
	if ((rc = al_imgref_parse(&ir, refs)) < 0)
		return al_error_wrap(rc, "%s:%zu", name, line);
	al_imgref_clear(&ir);
	if (dg != NULL && !(ndg == 1 && dg[0] == '-') &&
	    (rc = al_digest_parse(&d, (const char *)dg, ndg)) < 0)
		return al_error_wrap(AL_EPARSE, "%s:%zu: the digest", name,
		                     line);
	if (r->nfailed >= AL_MIRROR_FAILED_MAX_ENTRIES)
		return al_error_set(AL_ELIMIT, "%s:%zu: more than %d images",
		                    name, line, AL_MIRROR_FAILED_MAX_ENTRIES);
	return al_mirror__report_failed(r, kind, refs, &d, AL_EIO, NULL);
}

int al_mirror_failed_parse(al_mirror_failure **out, size_t *n, const char *name,
                           const uint8_t *p, size_t len)
{
	al_mirror_report r = AL_MIRROR_REPORT_INIT;
	unsigned char *dup = NULL;
	size_t pos = 0, line = 0, hlen = strlen(AL_MIRROR_FAILED_HEADER), i, k;
	int rc = 0;

	if (out == NULL || n == NULL || (p == NULL && len > 0))
		return al_error_set(AL_EINVAL, "al_mirror_failed_parse: NULL");
	if (name == NULL)
		name = "failed-image list";
	if (len > AL_MIRROR_FAILED_MAX_BYTES)
		return al_error_set(AL_ELIMIT, "%s: larger than %u bytes", name,
		                    AL_MIRROR_FAILED_MAX_BYTES);
	if (len == 0)
		return al_error_set(
		    AL_EPARSE, "%s:1: empty: not a failed-image list", name);
	while (pos < len) {
		const uint8_t *nl = memchr(p + pos, '\n', len - pos);
		size_t end = nl != NULL ? (size_t)(nl - p) : len;
		size_t ll = end - pos;
		const uint8_t *l = p + pos;

		line++;
		pos = end + 1;
		if (ll > AL_MIRROR_FAILED_MAX_LINE) {
			rc = al_error_set(
			    AL_ELIMIT, "%s:%zu: line longer than %d bytes",
			    name, line, AL_MIRROR_FAILED_MAX_LINE);
			goto out;
		}
		for (i = 0; i < ll; i++)
			if (is_control(l[i])) {
				rc = al_error_set(
				    AL_EPARSE,
				    "%s:%zu: control character 0x%02x", name,
				    line, l[i]);
				goto out;
			}
		if (line == 1) {
			if (ll != hlen ||
			    memcmp(l, AL_MIRROR_FAILED_HEADER, hlen) != 0) {
				rc = al_error_set(
				    AL_EPARSE,
				    "%s:1: not a failed-image list "
				    "(the first line is not '%s')",
				    name, AL_MIRROR_FAILED_HEADER);
				goto out;
			}
			continue;
		}
		if (ll == 0 || l[0] == '#')
			continue;
		if ((rc = parse_entry(&r, name, line, l, ll)) < 0)
			goto out;
	}
	if (r.nfailed == 0) {
		rc = al_error_set(AL_EPARSE, "%s: the list names no image",
		                  name);
		goto out;
	}
	/* duplicates kept once, the first in place */
	if ((rc = mark_dups(r.failed, r.nfailed, &dup)) < 0)
		goto out;
	for (i = 0, k = 0; i < r.nfailed; i++) {
		if (dup[i])
			al_mirror__failure_clear(&r.failed[i]);
		else
			r.failed[k++] = r.failed[i];
	}
	r.nfailed = k;
	*out = r.failed;
	*n = r.nfailed;
	r.failed = NULL;
	r.nfailed = 0;
out:
	free(dup);
	al_mirror_failures_free(r.failed, r.nfailed);
	return rc;
}

int al_mirror_failed_load(al_mirror_failure **out, size_t *n, const char *path)
{
	al_buf b = AL_BUF_INIT(AL_MIRROR_FAILED_MAX_BYTES);
	int rc;

	if (path == NULL)
		return al_error_set(AL_EINVAL, "al_mirror_failed_load: NULL");
	if ((rc = al_fs_read_file(path, &b)) < 0) {
		if (rc == AL_ELIMIT)
			rc = al_error_set(AL_ELIMIT,
			                  "%s: larger than %u bytes: not a "
			                  "failed-image list",
			                  path, AL_MIRROR_FAILED_MAX_BYTES);
		else
			rc = al_error_wrap(rc, "cannot read the failed-image "
			                       "list");
		goto out;
	}
	rc = al_mirror_failed_parse(out, n, path, b.ptr, b.len);
out:
	al_buf_free(&b);
	return rc;
}

int al_mirror_failed_retire(const char *store_path, const char *path)
{
	char a[PATH_MAX], d[PATH_MAX];
	char *dir = NULL, *parent = NULL, *slash;
	int rc = 0;

	if (store_path == NULL || path == NULL)
		return al_error_set(AL_EINVAL, "al_mirror_failed_retire: NULL");
	if ((dir = al_path_join(store_path, FAILED_DIR)) == NULL ||
	    (parent = al_strdup(path)) == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	slash = strrchr(parent, '/');
	if (slash == NULL) {
		free(parent);
		parent = al_strdup(".");
		if (parent == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
	} else if (slash == parent) {
		slash[1] = '\0';
	} else {
		*slash = '\0';
	}
	/* either missing: the list is not the store's */
	if (realpath(dir, d) == NULL || realpath(parent, a) == NULL ||
	    strcmp(a, d) != 0)
		goto out;
	if (unlink(path) < 0 && errno != ENOENT) {
		rc = al_error_errno(errno, "cannot remove '%s'", path);
		goto out;
	}
	rc = 1;
out:
	free(dir);
	free(parent);
	return rc;
}

int al_mirror__failed_from_plan(const struct al_mirror_lifecycle *lc,
                                al_mirror_result *res, const char *store_path)
{
	const al_plan_entry *e;
	char saved[1024];
	size_t i, n;
	int rc = 0;

	if (lc == NULL || lc->plan == NULL || res == NULL ||
	    (n = al_plan_count(lc->plan)) == 0)
		return 0;
	for (i = 0; i < n; i++)
		if ((e = al_plan_entry_at(lc->plan, i)) == NULL ||
		    e->status == 0)
			return 0;
	snprintf(saved, sizeof(saved), "%s", al_error_message());
	for (i = 0; i < n && rc == 0; i++) {
		e = al_plan_entry_at(lc->plan, i);
		rc = al_mirror__report_failed(
		    &res->report,
		    strcmp(e->kind, "release") == 0 ? "release" : "image",
		    e->source, NULL, e->status, e->message);
	}
	if (rc == 0)
		rc = al_mirror_failed_write(res, store_path, &res->failed_list);
	al_error_set(AL_EIO, "%s", saved);
	return rc;
}
