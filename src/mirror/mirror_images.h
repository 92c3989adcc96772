/* mirror_images.h: the image engine of the mirror workflow
 * (src/mirror/mirror_images.c), which the faces al_mirror and al_mirror_signed
 * (mirror_face.c) and the steps (mirror_run.c, mirror_helm.c,
 * mirror_imageset.c) call; it calls none of them. Not installed. */
#ifndef AL_MIRROR_IMAGES_H
#define AL_MIRROR_IMAGES_H

#include "airlock/mirror.h"

/*
 * Mirror releases (each release image, its signatures when sig is not
 * NULL, its component images) and additional images into s through one
 * transfer with opts; name and record each release whose signature and
 * components all arrived. report is reset and filled (errors, failed
 * images, statistics). sig NULL: signatures are not checked and releases
 * are recorded as unchecked (al_mirror); sig without a keyring and
 * without allow_unsigned is AL_EINVAL when there are releases
 * (al_mirror_signed). Returns 0 or the worst status (al_mirror__worse).
 */
int al_mirror__run_images(al_store *s, const char *const *releases,
                          size_t nreleases, const char *const *additional,
                          size_t nadditional, const al_transfer_opts *opts,
                          const al_mirror_sig_opts *sig,
                          al_mirror_report *report);

#endif
