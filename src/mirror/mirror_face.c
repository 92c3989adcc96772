/* mirror_face.c: the public faces al_mirror and al_mirror_signed, each a
 * call of the image engine (al_mirror__run_images, mirror_images.c) as
 * curl's easy.c is a face over multi.c; the engine never calls them. */
#include <stddef.h>

#include "airlock/mirror.h"
#include "mirror_images.h"
#include "error_int.h"

/* The engine zeroes the report: the versions the caller set stay. */
static int run_images(al_store *s, const char *const *releases,
                      size_t nreleases, const char *const *additional,
                      size_t nadditional, const al_transfer_opts *opts,
                      const al_mirror_sig_opts *sig, al_mirror_report *report)
{
	unsigned v, sv;
	int rc;

	if (report == NULL)
		return al_mirror__run_images(s, releases, nreleases, additional,
		                             nadditional, opts, sig, report);
	v = report->version;
	sv = report->stats.version;
	rc = al_mirror__run_images(s, releases, nreleases, additional,
	                           nadditional, opts, sig, report);
	report->version = v;
	report->stats.version = sv;
	return rc;
}

int al_mirror(al_store *s, const char *const *releases, size_t nreleases,
              const char *const *additional, size_t nadditional,
              const al_transfer_opts *opts, al_mirror_report *report)
{
	return al_mirror_signed(s, releases, nreleases, additional, nadditional,
	                        opts, NULL, report);
}

int al_mirror_signed(al_store *s, const char *const *releases, size_t nreleases,
                     const char *const *additional, size_t nadditional,
                     const al_transfer_opts *opts,
                     const al_mirror_sig_opts *sig, al_mirror_report *report)
{
	int rc;

	if ((rc = AL_RESULT_VERSION_CHECK("al_mirror_report", report, version,
	                                  AL_MIRROR_REPORT_VERSION)) < 0)
		return rc;
	if (opts != NULL &&
	    (rc = al_opts_version_check("al_transfer_opts", opts->version,
	                                AL_TRANSFER_OPTS_VERSION)) < 0)
		return rc;
	if (sig != NULL &&
	    (rc = al_opts_version_check("al_mirror_sig_opts", sig->version,
	                                AL_MIRROR_SIG_OPTS_VERSION)) < 0)
		return rc;
	return run_images(s, releases, nreleases, additional, nadditional, opts,
	                  sig, report);
}
