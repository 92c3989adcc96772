/* cmd_catalog.h: the catalog command (operator catalogs). */
#ifndef AIRLOCK_CMD_CATALOG_H
#define AIRLOCK_CMD_CATALOG_H

int cmd_catalog(int argc, char **argv);

#endif
