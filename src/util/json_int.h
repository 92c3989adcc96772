/* json_int.h (internal): strict JSON on jansson: duplicate keys rejected,
 * bounded input, positions in errors. */
#ifndef AL_JSON_INT_H
#define AL_JSON_INT_H

#include <jansson.h>
#include "airlock/common.h"

/* Thread safety: every function here is reentrant; distinct objects may be
 * used from different threads at once. */

/*
 * Parse p[0..n) as one JSON value. Duplicate object keys, trailing data,
 * NUL bytes and nesting deeper than jansson's limit are AL_EPARSE with
 * "<what>: line L, column C: reason". what names the source (a path,
 * a URL, "manifest sha256:..."). Caller owns *out (json_decref).
 */
int al_json_parse(json_t **out, const uint8_t *p, size_t n, const char *what);
/* Read and parse a file of at most max bytes (AL_ELIMIT beyond). */
int al_json_load_file(json_t **out, const char *path, size_t max);
/* Compact or indented (indent > 0) serialisation with keys in insertion
 * order. Caller frees. NULL on failure. */
char *al_json_dump(const json_t *v, int indent);
/* Serialise and write atomically (fs.h) with a trailing newline. */
int al_json_save_file(const char *path, const json_t *v, int indent);

/*
 * Refuse a member of obj whose name is not in allowed (NULL-terminated):
 * AL_EPARSE "<what>: unknown field '<where>.<key>'" (no "<where>." when
 * where is ""); with require_all, a missing one too ("missing field"). For
 * signed documents, where a field not understood must not be ignored.
 */
int al_json_only_members(const json_t *obj, const char *what, const char *where,
                         const char *const *allowed, int require_all);

/* Borrowed string member or NULL when missing or not a string. */
const char *al_json_str(const json_t *obj, const char *key);

/* json_copy (a shallow copy of an object or array, anything else as
 * json_copy gives it) that is NULL when memory ran out: jansson 2.14's
 * json_copy ignores a member it could not add and returns the rest. */
json_t *al_json_copy(json_t *v);

#endif
