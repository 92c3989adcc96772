/* mirror_plan_int.h: what the plan list (src/mirror/mirror_plan.c) offers the
 * planner (mirror_preflight.c) beyond include/airlock/mirror_plan.h. */
#ifndef AIRLOCK_MIRROR_PLAN_INT_H
#define AIRLOCK_MIRROR_PLAN_INT_H

#include "airlock/mirror_plan.h"

/* The last entry of kind and source fails after all (a catalog that
 * resolved but could not be read or filtered): status and message set,
 * counted as failed and missing. 0 when there is no such entry;
 * AL_ENOMEM. */
int al_plan__mark_failed(al_plan *p, const char *kind, const char *source,
                         int status, const char *message);

/* One more destination of the last entry (a component two releases
 * share: one tag per release, oc-mirror's mapping line per copy): a new
 * entry with its kind, source, size and presence but counted in no
 * total (the image is one). AL_EINVAL when the plan is empty, AL_ENOMEM. */
int al_plan__add_place(al_plan *p, const char *destination);

#endif
