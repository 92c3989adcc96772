/* cmd_pack.h: the removable-media commands (pack, unpack, inventory, keygen)
 * for main.c's dispatch table. */
#ifndef AIRLOCK_CMD_PACK_H
#define AIRLOCK_CMD_PACK_H

int cmd_pack(int argc, char **argv);
int cmd_unpack(int argc, char **argv);
int cmd_inventory(int argc, char **argv);
int cmd_keygen(int argc, char **argv);

#endif
