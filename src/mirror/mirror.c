/* mirror.c: the report of a mirror, the bottom of the mirror workflow: the
 * error list, the one worst-status rule, the failed images and the merge
 * of a step's report into the run's (src/mirror/mirror_int.h). The types are
 * those of include/airlock/mirror.h. Calls nothing of mirror above it. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/mirror.h"
#include "array_int.h"
#include "mirror_int.h"
#include "error_int.h"

void al_mirror_report_clear(al_mirror_report *report)
{
	size_t i;

	if (report == NULL)
		return;
	for (i = 0; i < report->nreleases; i++) {
		free(report->releases[i].source);
		free(report->releases[i].version);
		free(report->releases[i].message);
		free(report->releases[i].pulled_from);
	}
	free(report->releases);
	for (i = 0; i < report->nerrors; i++)
		free(report->errors[i]);
	free(report->errors);
	al_mirror_failures_free(report->failed, report->nfailed);
	AL_RESULT_ZERO_STATS(report);
}

int al_mirror__report_error(al_mirror_report *report, const char *msg)
{
	char **grown = al__array_grow_n(report->errors, report->nerrors,
	                                report->nerrors + 1, sizeof(*grown));

	if (grown == NULL)
		return AL_ENOMEM;
	report->errors = grown;
	report->errors[report->nerrors] = al_strdup(msg);
	if (report->errors[report->nerrors] == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	report->nerrors++;
	return 0;
}

int al_mirror__report_verrorf(al_mirror_report *r, const char *fmt, va_list ap)
{
	char msg[2048];

	if (vsnprintf(msg, sizeof(msg), fmt, ap) < 0)
		msg[0] = '\0';
	return al_mirror__report_error(r, msg);
}

int al_mirror__report_errorf(al_mirror_report *r, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = al_mirror__report_verrorf(r, fmt, ap);
	va_end(ap);
	return rc;
}

int al_mirror__worse(int a, int b)
{
	if (a == 0)
		return b;
	if (b == 0)
		return a;
	/* verification failures outrank runtime errors for the exit code */
	if (b == AL_EVERIFY)
		return b;
	return a;
}

void al_mirror__failure_clear(al_mirror_failure *f)
{
	free(f->kind);
	free(f->source);
	free(f->message);
	memset(f, 0, sizeof(*f));
}

void al_mirror_failures_free(al_mirror_failure *v, size_t n)
{
	size_t i;

	for (i = 0; v != NULL && i < n; i++)
		al_mirror__failure_clear(&v[i]);
	free(v);
}

static int grow(al_mirror_report *r, size_t more)
{
	al_mirror_failure *g;

	if (more > SIZE_MAX / sizeof(*g) - r->nfailed)
		return al_error_set(AL_ENOMEM, "out of memory");
	g = al__array_grow_n(r->failed, r->nfailed, r->nfailed + more,
	                     sizeof(*g));
	if (g == NULL)
		return AL_ENOMEM;
	r->failed = g;
	return 0;
}

int al_mirror__report_failed(al_mirror_report *r, const char *kind,
                             const char *source, const al_digest *digest,
                             int status, const char *message)
{
	al_mirror_failure f;
	int rc;

	memset(&f, 0, sizeof(f));
	if (r == NULL || kind == NULL || source == NULL)
		return al_error_set(AL_EINVAL,
		                    "al_mirror__report_failed: NULL");
	if ((rc = grow(r, 1)) < 0)
		return rc;
	f.kind = al_strdup(kind);
	f.source = al_strdup(source);
	f.message = message != NULL ? al_strdup(message) : NULL;
	if (f.kind == NULL || f.source == NULL ||
	    (message != NULL && f.message == NULL)) {
		al_mirror__failure_clear(&f);
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	if (digest != NULL && digest->len > 0) {
		f.digest = *digest;
		f.has_digest = 1;
	}
	f.status = status;
	r->failed[r->nfailed++] = f;
	return 0;
}

int al_mirror__failures_move(al_mirror_report *to, al_mirror_report *from,
                             const char *kind)
{
	size_t i;
	int rc;

	if (from->nfailed == 0)
		return 0;
	if ((rc = grow(to, from->nfailed)) < 0)
		return rc;
	for (i = 0; i < from->nfailed; i++) {
		al_mirror_failure f = from->failed[i];
		char *k = NULL;

		if (kind != NULL && (k = al_strdup(kind)) == NULL) {
			/* what was moved is gone from from */
			memmove(from->failed, from->failed + i,
			        (from->nfailed - i) * sizeof(*from->failed));
			from->nfailed -= i;
			return al_error_set(AL_ENOMEM, "out of memory");
		}
		if (k != NULL) {
			free(f.kind);
			f.kind = k;
		}
		to->failed[to->nfailed++] = f;
	}
	free(from->failed);
	from->failed = NULL;
	from->nfailed = 0;
	return 0;
}

int al_mirror__report_merge(al_mirror_report *to, al_mirror_report *from,
                            const char *kind)
{
	al_transfer_stats *a = &to->stats, *b = &from->stats;
	char **g;
	size_t i;

	a->images += b->images;
	a->images_failed += b->images_failed;
	a->blobs_transferred += b->blobs_transferred;
	a->bytes_transferred += b->bytes_transferred;
	a->blobs_present += b->blobs_present;
	a->bytes_present += b->bytes_present;
	a->manifests += b->manifests;
	a->elapsed_ms += b->elapsed_ms;
	to->additional += from->additional;
	to->additional_failed += from->additional_failed;
	if (from->nerrors > 0) {
		g = al__array_grow_n(to->errors, to->nerrors,
		                     to->nerrors + from->nerrors, sizeof(*g));
		if (g == NULL)
			return AL_ENOMEM;
		to->errors = g;
		for (i = 0; i < from->nerrors; i++) {
			g[to->nerrors++] = from->errors[i];
			from->errors[i] = NULL;
		}
		from->nerrors = 0;
	}
	return al_mirror__failures_move(to, from, kind);
}
