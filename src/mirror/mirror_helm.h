/* mirror_helm.h: the mirror.helm step as al_mirror_plan_run calls it
 * (src/mirror/mirror_helm.c), keeping the images the charts use for the
 * sigstore step. Not installed. */
#ifndef AL_MIRROR_HELM_H
#define AL_MIRROR_HELM_H

#include "airlock/mirror.h"
#include "airlock/mirror_plan.h"

/* al_mirror_helm into res->report, with the images the charts use (as
 * mirrored) in res->chart_images (replacing what was there). */
int al_mirror__helm(al_store *s, const al_imageset *cfg,
                    const al_transfer_opts *to, al_mirror_result *res);
/* Free res->chart_images (al_mirror_result_clear calls it). */
void al_mirror__helm_clear(al_mirror_result *res);

/*
 * The plan of the step (mirror --dry-run and the space check,
 * src/mirror/mirror_preflight.c): each chart is resolved as the step would (the
 * repository's index.yaml read, the archive downloaded into a temporary
 * file and checked against the index digest, a local chart read or
 * packaged, an oci:// chart resolved, then fetched into the store held,
 * without a name) and becomes a "chart" entry of plan: the archive,
 * config and manifest the step would store under charts/NAME:TAG (an
 * oci:// chart: its own manifests and blobs under its reference). No
 * chart is stored or recorded. A chart that fails is a failed entry. The
 * images the charts use are left in images (owned; queue them into the
 * plan as the step mirrors them).
 */
typedef struct al_mirror__helm_plan_ctx {
	al_plan *plan;
	/* the destination of store name name in mapping.txt (caller frees) */
	char *(*dest)(void *ud, const char *name);
	void *ud;
	/* out */
	char **images;
	size_t nimages;
	uint64_t prefetched, prefetched_blobs; /* oci:// charts fetched */
} al_mirror__helm_plan_ctx;

/* 0, or AL_ENOMEM (the charts' failures are entries of the plan). */
int al_mirror__helm_plan(al_store *s, const al_imageset *cfg,
                         const al_transfer_opts *to,
                         al_mirror__helm_plan_ctx *hp);
/* Free hp->images. */
void al_mirror__helm_plan_clear(al_mirror__helm_plan_ctx *hp);

#endif
