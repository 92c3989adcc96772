/* imageset_int.h: the loader's helpers kept in their own files;
 * library-internal. */
#ifndef AIRLOCK_IMAGESET_INT_H
#define AIRLOCK_IMAGESET_INT_H

#include "airlock/imageset.h"

/* Append the pair (ref, name) to cfg->additional_renames (copied, the
 * array kept NULL-terminated). */
int al_imageset__add_rename(al_imageset *cfg, const char *ref,
                            const char *name);
/* Free cfg->additional_renames; NULL is a no-op. */
void al_imageset__free_renames(al_imageset *cfg);

#endif
