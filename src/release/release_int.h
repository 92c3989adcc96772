/* release_int.h: the parsed release-metadata document (jansson), for the
 * library's own modules and white-box tests; not installed. */
#ifndef AL_RELEASE_INT_H
#define AL_RELEASE_INT_H

#include <jansson.h>

#include "airlock/release.h"

/* release-metadata as parsed (borrowed, may be NULL if absent). */
const json_t *al_release_metadata(const al_release *r);

#endif
