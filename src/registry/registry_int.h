/* registry_int.h: the registry module's parsers of header values, for the
 * unit and fuzz builds (not installed, not part of the API). */
#ifndef AIRLOCK_REGISTRY_INT_H
#define AIRLOCK_REGISTRY_INT_H

#include <stdint.h>

/* A Content-Length style size: decimal digits only (no sign, blank or
 * trailing byte), at most INT64_MAX. 0 and *out set, or -1 (*out
 * untouched). */
int al_registry__parse_size(const char *s, uint64_t *out);

/* START of a Content-Range "bytes START-END/TOTAL", or -1. */
int64_t al_registry__content_range_start(const char *v);

/* The target of a Link header's rel="next" entry, or NULL. Caller frees. */
char *al_registry__link_next(const char *v);

#endif
