/* cmd.h: the airlock commands, one per cmd_<name>.c, for main.c's dispatch
 * table. Each takes argv from the command name on and returns an exit
 * status (docs/commands.md). */
#ifndef AIRLOCK_CMD_H
#define AIRLOCK_CMD_H

int cmd_mirror(int argc, char **argv);
int cmd_push(int argc, char **argv);
int cmd_copy(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_mirrorsets(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_configmaps(int argc, char **argv);
/* airlock graph: resolve channels of an ImageSetConfiguration, save their
 * graphs into a store, or write the update-service graph data. */
int cmd_graph(int argc, char **argv);
/* airlock releases: a table of the releases a store holds. */
int cmd_releases(int argc, char **argv);
/* The removable-media commands. */
int cmd_pack(int argc, char **argv);
int cmd_unpack(int argc, char **argv);
int cmd_inventory(int argc, char **argv);
int cmd_keygen(int argc, char **argv);
/* airlock catalog: operator catalogs (docs/commands/catalog.md). */
int cmd_catalog(int argc, char **argv);
/* airlock verify-image: sigstore signatures of store images against an
 * image policy. */
int cmd_verify_image(int argc, char **argv);
/* airlock update --store DIR --to VERSION|sha256:DIGEST [...]; exit 0 done,
 * 1 refused (not verified), 2 usage, 3 the update failed (retry). */
int cmd_update(int argc, char **argv);
/* airlock imageset check FILE...: whether mirror --config accepts them. */
int cmd_imageset(int argc, char **argv);
/* cmd_delete.c (docs/lifecycle.md) */
int cmd_delete(int argc, char **argv);
/* airlock serve: the store as a registry and signature store
 * (docs/serve.md). */
int cmd_serve(int argc, char **argv);

#endif
