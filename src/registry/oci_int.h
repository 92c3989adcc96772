/* oci_int.h: the JSON (jansson) side of OCI descriptors, for the library's
 * own modules and white-box tests; not installed (public headers expose
 * airlock types only). */
#ifndef AL_OCI_INT_H
#define AL_OCI_INT_H

#include <jansson.h>

#include "airlock/oci.h"

/*
 * Parse one descriptor object (mediaType, digest, size, optional
 * artifactType, urls, annotations and, when platform_ok, platform) with
 * the same strictness as al_manifest_parse. what names the source in
 * messages. *out is written only on success.
 */
int al_descriptor_from_json(al_descriptor *out, const json_t *obj,
                            int platform_ok, const char *what);
/* A new JSON object {"mediaType","digest","size"[,"artifactType"]
 * [,"platform"]} for d; NULL on allocation failure. Caller decrefs. */
json_t *al_descriptor_to_json(const al_descriptor *d);

#endif
