/* kres.h: cluster resources for the disconnected side: ImageDigestMirrorSet, ImageTagMirrorSet, ImageContentSourcePolicy. */
#ifndef AIRLOCK_KRES_H
#define AIRLOCK_KRES_H

#include "common.h"
#include "buf.h"

/* Thread safety: every function here is reentrant; distinct objects may be
 * used from different threads at once. */

/* One source repository and where push put it. */
typedef struct al_mirror_map {
	/* "quay.io/openshift-release-dev/ocp-release" */
	const char *source;
	/* "registry.local:5000/prefix/openshift-release-dev/ocp-release" */
	const char *mirror;
	int by_digest; /* some image of source is referenced by digest */
	int by_tag;    /* some image of source is referenced by tag */
} al_mirror_map;

/* Flag: also the legacy operator.openshift.io/v1alpha1
 * ImageContentSourcePolicy. */
#define AL_KRES_ICSP 1

/*
 * Append to out a YAML stream of: one config.openshift.io/v1
 * ImageDigestMirrorSet (spec.imageDigestMirrors: one entry per source
 * with by_digest, sorted by source) and one ImageTagMirrorSet
 * (spec.imageTagMirrors, by_tag), each omitted when it would be empty,
 * and with AL_KRES_ICSP one ImageContentSourcePolicy
 * (spec.repositoryDigestMirrors). name is metadata.name (e.g.
 * "airlock"). Duplicated sources are merged: one entry per source, its
 * mirrors deduplicated in first-seen order, by_digest/by_tag or-ed. The
 * ICSP lists the by_digest sources only (it cannot redirect tags). With
 * no source to list, nothing is appended and 0 is returned.
 * AL_EINVAL: NULL/empty source or mirror, name not a DNS subdomain;
 * AL_ELIMIT: out's maximum reached (out may then hold a partial stream).
 */
AL_EXPORT int al_kres_mirrorsets(al_buf *out, const al_mirror_map *maps,
                                 size_t n, const char *name, int flags);

#endif
