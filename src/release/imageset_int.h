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

/*
 * oc-mirror reads its files with Go's encoding/json, which matches a key
 * to a field ignoring case ("additionalimages" is additionalImages). Walk
 * doc (not the "airlock" section, airlock's own) and rename in place every
 * map key that is an oc-mirror field name in another case, unless the map
 * has that spelling too; each rename appends "FILE:LINE:COLUMN: ..." to
 * *notes. The tree must come from al_yaml_load (keys are writable).
 */
struct al_yaml_node;
int al_imageset__fold_keys(struct al_yaml_node *doc, const char *path,
                           char ***notes, size_t *nnotes);

/*
 * A DeleteImageSetConfiguration's delete.operators and delete.helm, read
 * as mirror.operators and mirror.helm are (same fields, checks and notes;
 * messages name them mirror.operators[] and mirror.helm), into a new
 * imageset holding only them. api: 2 v2alpha1, 1 v1alpha2. Caller frees
 * with al_imageset_free.
 */
int al_imageset__load_parts(al_imageset **out,
                            const struct al_yaml_node *section,
                            const char *path, int api);

#endif
