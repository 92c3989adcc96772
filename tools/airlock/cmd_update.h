/* cmd_update.h: the 'airlock update' command (applies a release payload from
 * the store to a cluster). */
#ifndef AIRLOCK_CMD_UPDATE_H
#define AIRLOCK_CMD_UPDATE_H

/* airlock update --store DIR --to VERSION|sha256:DIGEST [...]; exit 0 done,
 * 1 refused (not verified), 2 usage, 3 the update failed (retry). */
int cmd_update(int argc, char **argv);

#endif
