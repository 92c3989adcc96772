/* mirror_graph.h: the mirror workflow's hook for mirror.platform.graph
 * (src/mirror/mirror_graph.c); library internal. */
#ifndef AL_MIRROR_GRAPH_H
#define AL_MIRROR_GRAPH_H

#include "airlock/imageset.h"
#include "airlock/mirror.h"
#include "airlock/store.h"

/*
 * After the releases were mirrored and the channels' graphs saved: with
 * cfg->graph, build the graph-data image from what the store holds
 * (al_graph_image_build) and tag it AL_GRAPH_IMAGE_NAME, on
 * AL_GRAPH_IMAGE_BASE when the store holds that image. Nothing when the
 * transfer did not run (a dry run, a refusal). A failure is added to
 * res->report.errors; returns rc, or the failure when rc is 0.
 */
int al_mirror__graph_image(al_store *s, const al_imageset *cfg,
                           al_mirror_result *res, int rc);

#endif
