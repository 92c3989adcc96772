/* mirror_graph.c: mirror.platform.graph: true: the graph-data image built
 * at the end of a mirror run (docs/graph.md). */
#include <stdlib.h>
#include <string.h>

#include "airlock/error.h"
#include "airlock/graph.h"
#include "airlock/log.h"
#include "mirror_graph.h"
#include "mirror_int.h"

/* "linux/<arch>" of the one architecture asked for, else linux/amd64. */
static char *platform_of(const al_imageset *cfg)
{
	if (cfg->narchitectures == 1 &&
	    strcmp(cfg->architectures[0], "multi") != 0)
		return al_sprintf("linux/%s", cfg->architectures[0]);
	return al_strdup("linux/amd64");
}

int al_mirror__graph_image(al_store *s, const al_imageset *cfg,
                           al_mirror_result *res, int rc)
{
	al_graph_image_opts o = AL_GRAPH_IMAGE_OPTS_INIT;
	al_graph_image_result r = AL_GRAPH_IMAGE_RESULT_INIT;
	al_store_image base;
	al_store_release *rels = NULL;
	size_t nrels = 0;
	char ds[AL_DIGEST_STRMAX], *platform = NULL, *msg = NULL;
	int r2;

	if (s == NULL || cfg == NULL || !cfg->graph || res == NULL || !res->ran)
		return rc;
	memset(&base, 0, sizeof(base));
	if ((platform = platform_of(cfg)) == NULL) {
		r2 = al_error_set(AL_ENOMEM, "out of memory");
		goto fail;
	}
	o.platform = platform;
	if ((r2 = al_store_releases_list(s, &rels, &nrels)) < 0)
		goto fail;
	al_store_releases_free(rels, nrels);
	if (nrels == 0) {
		r2 = al_error_set(AL_ENOTFOUND,
		                  "the store holds no release to describe "
		                  "(mirror.platform.release or channels)");
		goto fail;
	}
	if (al_store_find(s, AL_GRAPH_IMAGE_BASE, &base) == 0) {
		o.base = AL_GRAPH_IMAGE_BASE;
	} else {
		al_error_clear();
		al_log_warn("graph image: %s is not in the store: the image "
		            "holds the graph data alone, and its command "
		            "(/bin/bash) does not run as the update service's "
		            "init container; add it to mirror.additionalImages "
		            "to build on it",
		            AL_GRAPH_IMAGE_BASE);
	}
	al_store_image_clear(&base);
	if ((r2 = al_graph_image_build(s, &o, &r)) < 0)
		goto fail;
	al_log_info("graph image %s: %s (%zu channels, %zu versions, "
	            "%zu blocked edges)",
	            AL_GRAPH_IMAGE_NAME, al_digest_str(&r.manifest.digest, ds),
	            r.data.channels, r.data.versions, r.data.blocked_edges);
	res->has_graph_image = 1;
	res->graph_image = r.manifest.digest;
	if (r.data.channels == 0)
		al_log_warn("graph image: no channel lists a mirrored release "
		            "(mirror.platform.release alone): the update "
		            "service will serve no channel; select releases "
		            "with mirror.platform.channels");
	al_descriptor_clear(&r.manifest);
	free(platform);
	return rc;
fail:
	msg = al_sprintf("building the graph image (mirror.platform.graph): "
	                 "%s",
	                 al_error_message());
	if (msg == NULL || al_mirror__report_error(&res->report, msg) < 0)
		r2 = AL_ENOMEM;
	free(msg);
	free(platform);
	return rc < 0 ? rc : r2;
}
