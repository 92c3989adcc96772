/* kres.h: cluster resources for the disconnected side: ImageDigestMirrorSet,
 * ImageTagMirrorSet, ImageContentSourcePolicy, signature ConfigMaps. */
#ifndef AIRLOCK_KRES_H
#define AIRLOCK_KRES_H

#include "common.h"
#include "buf.h"
#include "digest.h"

AL_BEGIN_DECL

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
/* Flag: only the ImageContentSourcePolicy (its own file, for a cluster
 * older than 4.13 that has no IDMS/ITMS); 8, clear of AL_KRES_JSON. */
#define AL_KRES_ICSP_ONLY 8

/*
 * 1 when s is a location the config.openshift.io/v1 ImageDigestMirrorSet
 * and ImageTagMirrorSet CRDs accept (openshift/api, config/v1
 * zz_generated.crd-manifests, imagedigestmirrorsets: the items pattern of
 * "mirrors", and with source also the "[*.]host" form of "source"):
 * HOST[:PORT][/PATH...], HOST dot-separated labels of letters, digits and
 * inner '-', PORT digits, each PATH component lower-case letters and
 * digits separated by '.', '_', '__' or dashes. al_kres_mirrorsets
 * refuses (AL_EINVAL) a map whose source or mirror is not one.
 */
AL_EXPORT int al_kres_location_valid(const char *s, int source);

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

/*
 * oc-mirror v2's mirror sets (clusterresources IDMS_ITMSGenerator,
 * generateIDMS, generateITMS, writeMirrorSet): one object per category,
 * named "idms-<category>-0" (tag: "itms-<category>-0"), categories in
 * the order release, operator, generic, each with the annotations
 * createdAt (created_at, RFC 3339), createdBy ("airlock") and
 * oc-mirror_version (airlock's version), and one entry per source
 * (sources sorted, mirrors in first-seen order, duplicates dropped);
 * every document preceded by "---", keys in the order sigs.k8s.io/yaml
 * writes them. maps[i] is in category categories[i] ("release",
 * "operator", "generic"); tag 0 writes the entries with by_digest (an
 * ImageDigestMirrorSet), tag 1 those with by_tag (an
 * ImageTagMirrorSet). Nothing is written when no entry qualifies.
 * AL_EINVAL for a location the CRDs refuse (al_kres_location_valid) or
 * an unknown category; AL_ELIMIT, AL_ENOMEM.
 */
AL_EXPORT int al_kres_mirrorsets_ocmirror(al_buf *out,
                                          const al_mirror_map *maps,
                                          const char *const *categories,
                                          size_t n, int tag,
                                          const char *created_at);

/* Flag for the signature ConfigMap functions: JSON (as `oc adm release
 * mirror` writes it) instead of YAML. */
#define AL_KRES_JSON 2

/* Where the cluster-version operator looks for release signatures. */
#define AL_KRES_SIGNATURE_NAMESPACE "openshift-config-managed"
#define AL_KRES_SIGNATURE_LABEL "release.openshift.io/verification-signatures"

/*
 * The signature ConfigMap of one release: apiVersion v1, kind ConfigMap,
 * metadata.name "sha256-<hex>", metadata.namespace
 * AL_KRES_SIGNATURE_NAMESPACE, metadata.labels {AL_KRES_SIGNATURE_LABEL:
 * ""}, binaryData {"sha256-<hex>-1": base64 of sigs[0], "-2": sigs[1],
 * ...} in the order given. n must be at least 1 and every signature
 * non-empty (AL_EINVAL); AL_ENOMEM.
 */
/*
 * Append that ConfigMap to out: one YAML document, or with AL_KRES_JSON
 * indented JSON and a newline. Errors as above, and AL_ELIMIT when out's
 * maximum is reached.
 */
AL_EXPORT int al_kres_signature_configmap(al_buf *out, const al_digest *release,
                                          const uint8_t *const *sigs,
                                          const size_t *lens, size_t n,
                                          int flags);

/*
 * The file name for that ConfigMap: "signature-sha256-<first 16 hex>.yaml"
 * (".json" with AL_KRES_JSON), one file per release so that a later
 * release never renumbers an earlier one's keys. Caller frees; NULL on
 * ENOMEM.
 */
AL_EXPORT char *al_kres_signature_configmap_filename(const al_digest *release,
                                                     int flags);

/* oc-mirror v2's one signature ConfigMap (clusterresources const.go). */
#define AL_KRES_OCMIRROR_CONFIGMAP "mirrored-release-signatures"

/*
 * oc-mirror v2's signature ConfigMap (clusterresources
 * GenerateSignatureConfigMap): one ConfigMap AL_KRES_OCMIRROR_CONFIGMAP in
 * AL_KRES_SIGNATURE_NAMESPACE, labelled AL_KRES_SIGNATURE_LABEL, with the
 * annotations createdAt (created_at), createdBy ("airlock") and
 * oc-mirror_version, and one signature per release: binaryData
 * "sha256-<hex of releases[i]>-<i + 1>" = base64 of sigs[i]. YAML as
 * sigs.k8s.io/yaml writes it (keys sorted; signature-configmap.yaml), or
 * with AL_KRES_JSON compact JSON in Go's field order, without a newline
 * (json.Marshal; signature-configmap.json). n at least 1 and every
 * signature non-empty (AL_EINVAL); AL_ELIMIT, AL_ENOMEM.
 */
AL_EXPORT int al_kres_signatures_ocmirror(al_buf *out,
                                          const al_digest *releases,
                                          const uint8_t *const *sigs,
                                          const size_t *lens, size_t n,
                                          int flags, const char *created_at);

/*
 * A list of signature ConfigMaps, for writing many releases' ConfigMaps
 * one at a time or as one stream. Not thread-safe: one thread at a time
 * per list.
 */
typedef struct al_kres_configmaps al_kres_configmaps;

/* An empty list. Free with al_kres_configmaps_free. AL_ENOMEM. */
AL_EXPORT int al_kres_configmaps_new(al_kres_configmaps **out);
AL_EXPORT void al_kres_configmaps_free(al_kres_configmaps *c);

/* Add the ConfigMap of one release (as al_kres_signature_configmap builds
 * it; same errors, and nothing is added on error). */
AL_EXPORT int al_kres_configmaps_add(al_kres_configmaps *c,
                                     const al_digest *release,
                                     const uint8_t *const *sigs,
                                     const size_t *lens, size_t n);

/* How many ConfigMaps the list holds. */
AL_EXPORT size_t al_kres_configmaps_count(const al_kres_configmaps *c);

/* Append the i-th ConfigMap (0-based, in the order added) to out exactly
 * as al_kres_signature_configmap writes it with flags. AL_EINVAL (i out of
 * range), AL_ELIMIT, AL_ENOMEM. */
AL_EXPORT int al_kres_configmaps_write_one(const al_kres_configmaps *c,
                                           size_t i, al_buf *out, int flags);

/* The file name of the i-th ConfigMap (al_kres_signature_configmap_filename
 * of its release). Caller frees; NULL when i is out of range or on ENOMEM. */
AL_EXPORT char *al_kres_configmaps_filename(const al_kres_configmaps *c,
                                            size_t i, int flags);

/*
 * Append every ConfigMap of the list to out as one stream: a YAML stream
 * of one document each, or with AL_KRES_JSON one indented v1 List
 * ({"apiVersion": "v1", "kind": "List", "items": [...]}) and a newline, as
 * `oc adm release mirror` writes it. AL_ELIMIT when out's maximum is
 * reached, AL_ENOMEM.
 */
AL_EXPORT int al_kres_configmaps_write(const al_kres_configmaps *c, al_buf *out,
                                       int flags);

/*
 * Append an UpdateService (updateservice.operator.openshift.io/v1, the
 * OpenShift Update Service operator's resource) to out as one YAML
 * document: metadata.name name, spec.replicas replicas (>= 1),
 * spec.releases the repository the release images were pushed to
 * ("HOST[:PORT]/PATH", no tag or digest) and spec.graphDataImage the
 * pushed graph-data image, as oc-mirror v2's UpdateServiceGenerator
 * writes it, in namespace AL_KRES_UPDATESERVICE_NAMESPACE. AL_EINVAL for an
 * empty argument, a releases with a tag or digest, replicas < 1;
 * AL_ELIMIT, AL_ENOMEM.
 */
#define AL_KRES_UPDATESERVICE_NAMESPACE "openshift-update-service"
AL_EXPORT int al_kres_updateservice(al_buf *out, const char *name,
                                    const char *releases,
                                    const char *graph_image, int replicas);

AL_END_DECL

#endif
