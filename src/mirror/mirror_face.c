/* mirror_face.c: the public faces al_mirror and al_mirror_signed, each a
 * call of the image engine (al_mirror__run_images, mirror_images.c) as
 * curl's easy.c is a face over multi.c; the engine never calls them. */
#include <stddef.h>

#include "airlock/mirror.h"
#include "mirror_images.h"

int al_mirror(al_store *s, const char *const *releases, size_t nreleases,
              const char *const *additional, size_t nadditional,
              const al_transfer_opts *opts, al_mirror_report *report)
{
	return al_mirror__run_images(s, releases, nreleases, additional,
	                             nadditional, opts, NULL, report);
}

int al_mirror_signed(al_store *s, const char *const *releases, size_t nreleases,
                     const char *const *additional, size_t nadditional,
                     const al_transfer_opts *opts,
                     const al_mirror_sig_opts *sig, al_mirror_report *report)
{
	return al_mirror__run_images(s, releases, nreleases, additional,
	                             nadditional, opts, sig, report);
}
