/* mirror_helm.h: the mirror.helm step as al_mirror_plan_run calls it
 * (src/mirror_helm.c), keeping the images the charts use for the sigstore
 * step. Not installed. */
#ifndef AL_MIRROR_HELM_H
#define AL_MIRROR_HELM_H

#include "airlock/mirror.h"

/* al_mirror_helm into res->report, with the images the charts use (as
 * mirrored) in res->chart_images (replacing what was there). */
int al_mirror__helm(al_store *s, const al_imageset *cfg,
                    const al_transfer_opts *to, al_mirror_result *res);
/* Free res->chart_images (al_mirror_result_clear calls it). */
void al_mirror__helm_clear(al_mirror_result *res);

#endif
