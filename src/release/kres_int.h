/* kres_int.h (internal): the jansson forms of the cluster resources. */
#ifndef AL_KRES_INT_H
#define AL_KRES_INT_H

#include <jansson.h>
#include "airlock/kres.h"

/*
 * The signature ConfigMap of one release (kres.h,
 * al_kres_signature_configmap) as a JSON object. Caller owns *out
 * (json_decref). AL_EINVAL, AL_ENOMEM.
 */
int al_kres_signature_configmap_json(json_t **out, const al_digest *release,
                                     const uint8_t *const *sigs,
                                     const size_t *lens, size_t n);

#endif
