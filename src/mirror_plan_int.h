/* mirror_plan_int.h: what the plan list (src/mirror_plan.c) offers the
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

#endif
