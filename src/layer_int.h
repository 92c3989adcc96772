/* layer_int.h: writing one reproducible image layer in memory (a POSIX tar
 * with fixed owner, time and modes, then gzip), shared by the catalog
 * rebuild (src/catalog_image.c) and the graph-data image
 * (src/graph_image.c); library internal. */
#ifndef AIRLOCK_LAYER_INT_H
#define AIRLOCK_LAYER_INT_H

#include <jansson.h>

#include "airlock/buf.h"
#include "airlock/digest.h"

/*
 * Append one tar entry to tar: a directory when dir is 1 (path should end
 * in '/', data ignored), else a regular file holding data (NULL: empty).
 * Owner 0/0, mtime 0, mode 0755 (directories) or 0644 (files); a path
 * over 100 bytes gets a pax "path" record. AL_ELIMIT when tar->max is
 * reached or the path is over 1,500 bytes.
 */
int al_layer_tar_entry(al_buf *tar, const char *path, int dir,
                       const al_buf *data);
/* The two zero blocks that end a tar archive. */
int al_layer_tar_end(al_buf *tar);
/* gzip of in appended to out (no file name, mtime 0, level 6): the same
 * bytes for the same input. */
int al_layer_gzip(const al_buf *in, al_buf *out);
/* {"mediaType", "digest", "size"}: a new reference, NULL on ENOMEM. */
json_t *al_layer_desc_json(const char *media_type, const al_digest *d,
                           uint64_t size);

#endif
