/* yaml_int.h (internal): libyaml loader into a positioned node tree,
 * YAML<->JSON, multi-document emitter. */
#ifndef AL_YAML_INT_H
#define AL_YAML_INT_H

#include <jansson.h>
#include "airlock/common.h"
#include "airlock/buf.h"

/* Thread safety: every function here is reentrant; distinct objects may be
 * used from different threads at once. */

typedef enum al_yaml_type {
	AL_YAML_SCALAR = 1,
	AL_YAML_MAP = 2,
	AL_YAML_SEQ = 3,
} al_yaml_type;

/*
 * A node. line and column are 1-based positions of the node's start.
 * SCALAR: value (NUL-terminated, len bytes), plain != 0 when unquoted
 * (so "true" quoted is a string, true plain a boolean).
 * MAP: n key/value pairs in keys[i], items[i] (keys are scalars).
 * SEQ: n items in items[i].
 */
typedef struct al_yaml_node al_yaml_node;
struct al_yaml_node {
	al_yaml_type type;
	size_t line;
	size_t column;
	char *value;
	size_t len;
	int plain;
	size_t n;
	al_yaml_node **keys;
	al_yaml_node **items;
};

/* Loader bounds: input bytes, nesting depth, nodes per stream. */
#define AL_YAML_MAX_INPUT (64 * 1024 * 1024)
#define AL_YAML_MAX_DEPTH 64
#define AL_YAML_MAX_NODES 500000

/*
 * Load every document of a YAML stream. Aliases/anchors, duplicate map
 * keys, non-scalar keys and inputs over the size bound are refused
 * (AL_EPARSE / AL_ELIMIT) with "<name>:<line>:<column>: reason".
 * Tags other than !!str, !!seq, !!map and "!" are refused too. An empty
 * stream gives *ndocs == 0 (*docs NULL); "---" alone a plain "" scalar.
 * Caller frees with al_yaml_docs_free.
 */
int al_yaml_load(al_yaml_node ***docs, size_t *ndocs, const uint8_t *p,
                 size_t n, const char *name);
/*
 * al_yaml_load, except that a map may name a key twice and the later one
 * wins (al_yaml_to_json keeps the last). This is how Kubernetes' decoders
 * (sigs.k8s.io/yaml over go-yaml v2, not strict) read cluster manifests,
 * and real release payloads rely on it (cluster-update-keys' ConfigMap
 * names metadata.namespace twice). For cluster manifests only.
 */
int al_yaml_load_lenient(al_yaml_node ***docs, size_t *ndocs, const uint8_t *p,
                         size_t n, const char *name);
void al_yaml_docs_free(al_yaml_node **docs, size_t ndocs);
void al_yaml_node_free(al_yaml_node *n);

/* Borrowed value of key in a MAP node, or NULL. */
const al_yaml_node *al_yaml_get(const al_yaml_node *map, const char *key);

/*
 * Convert to JSON with YAML 1.2 core schema resolution of plain scalars
 * (null, true/false, integers, floats; everything else a string). A NULL
 * node is JSON null. AL_EPARSE "line:column: reason" for integers out of
 * range and .inf/.nan, which JSON cannot carry. Caller owns *out.
 */
int al_yaml_to_json(json_t **out, const al_yaml_node *n);

/*
 * Append docs to out as a YAML stream ("---" between documents) with
 * libyaml's emitter, block style, keys in insertion order; strings that
 * would resolve to another type ("true", "1", "", and YAML 1.1's "yes",
 * "on", ...) are quoted, so al_yaml_load + al_yaml_to_json gives back the
 * same JSON. AL_ELIMIT when out's maximum is reached.
 */
int al_yaml_emit_json(al_buf *out, json_t *const *docs, size_t ndocs);

#endif
