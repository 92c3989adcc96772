/* kres_updateservice.c: the UpdateService resource that points the
 * OpenShift Update Service at the mirrored releases and graph data
 * (docs/graph.md). */
#include <string.h>

#include "airlock/error.h"
#include "airlock/kres.h"
#include "yaml_int.h"

/* A repository has no tag or digest: no '@', no ':' after the last '/'. */
static int bare_repository(const char *s)
{
	const char *slash = strrchr(s, '/');

	return slash != NULL && slash[1] != '\0' && strchr(s, '@') == NULL &&
	       strchr(slash, ':') == NULL;
}

int al_kres_updateservice(al_buf *out, const char *name, const char *releases,
                          const char *graph_image, int replicas)
{
	json_t *doc;
	int rc;

	if (out == NULL || name == NULL || releases == NULL ||
	    graph_image == NULL || name[0] == '\0' || graph_image[0] == '\0')
		return al_error_set(AL_EINVAL, "UpdateService: no name, "
		                               "releases or graph image");
	if (!bare_repository(releases))
		return al_error_set(AL_EINVAL,
		                    "UpdateService: releases '%s' is not a "
		                    "repository (HOST/PATH without a tag or "
		                    "digest)",
		                    releases);
	if (replicas < 1)
		return al_error_set(AL_EINVAL,
		                    "UpdateService: replicas %d is below 1",
		                    replicas);
	/* the operator's namespace, as oc-mirror v2 writes it since
	 * OCPBUGS-61001 (clusterresources updateServiceDefaultNamespace) */
	doc = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:i, s:s, s:s}}",
	                "apiVersion", "updateservice.operator.openshift.io/v1",
	                "kind", "UpdateService", "metadata", "name", name,
	                "namespace", AL_KRES_UPDATESERVICE_NAMESPACE, "spec",
	                "replicas", replicas, "releases", releases,
	                "graphDataImage", graph_image);
	if (doc == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	rc = al_yaml_emit_json(out, &doc, 1);
	json_decref(doc);
	return rc;
}
