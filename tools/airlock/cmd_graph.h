/* cmd_graph.h: the graph and releases commands (update-service graph data,
 * table of mirrored releases). */
#ifndef AIRLOCK_CMD_GRAPH_H
#define AIRLOCK_CMD_GRAPH_H

/* airlock graph: resolve channels of an ImageSetConfiguration, save their
 * graphs into a store, or write the update-service graph data. */
int cmd_graph(int argc, char **argv);
/* airlock releases: a table of the releases a store holds. */
int cmd_releases(int argc, char **argv);

#endif
