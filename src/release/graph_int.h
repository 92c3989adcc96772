/* graph_int.h: graph internals shared by graph.c, graph_imageset.c,
 * graph_data.c and white-box tests (the JSON side of graphs, string
 * lists); not installed. */
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

/* What graph.c, graph_imageset.c and graph_data.c share. */
typedef struct al_graph__strlist {
	char **v;
	size_t n;
} al_graph__strlist;

void al_graph__strlist_free(al_graph__strlist *l);
int al_graph__strlist_has(const al_graph__strlist *l, const char *s);
/* Add a copy of s unless it is there already. */
int al_graph__strlist_add(al_graph__strlist *l, const char *s);
/* Sort by al_version_compare. */
void al_graph__sort_versions(al_graph__strlist *l);
/* AL_EINVAL unless s is [A-Za-z0-9._-]+ (what names it). */
int al_graph__check_name(const char *s, const char *what);
/* STORE/airlock/graph; caller frees. */
char *al_graph__dir(al_store *s);

#endif
