/* graph_int.h: the JSON (jansson) side of update graphs, for the library's
 * own modules and white-box tests; not installed. */
#ifndef AL_GRAPH_INT_H
#define AL_GRAPH_INT_H

#include <stdint.h>

#include <jansson.h>

#include "airlock/graph.h"

/* The json_t behind an al_graph_json (the same object). */
static inline json_t *al_graph__json(const al_graph_json *v)
{
	return (json_t *)(void *)(uintptr_t)v;
}

static inline al_graph_json *al_graph__opaque(json_t *v)
{
	return (al_graph_json *)(void *)v;
}

/* The graph as a Cincinnati JSON document with an "airlock" member
 * holding channel and arch when known. Caller owns (json_decref). NULL on
 * allocation failure. */
json_t *al_graph_to_json(const al_graph *g);

#endif
