/* mirror_sigstore.h: the sigstore step of the mirror workflow
 * (src/mirror/mirror_sigstore.c), hooked into al_mirror_plan_run. Not
 * installed. */
#ifndef AL_MIRROR_SIGSTORE_H
#define AL_MIRROR_SIGSTORE_H

#include "airlock/mirror.h"

typedef struct al_mirror__sigstore al_mirror__sigstore;

/*
 * From opts (al_mirror_opts version 2 and later): *out NULL when the step
 * is off (AL_MIRROR_NO_SIGSTORE), else what it needs, with the policy
 * file (sigstore_policy) read and checked now, before any store or
 * network: a policy that does not load is AL_EINVAL or the loader's code
 * naming the file.
 */
int al_mirror__sigstore_prepare(al_mirror__sigstore **out,
                                const al_mirror_opts *opts);
void al_mirror__sigstore_free(al_mirror__sigstore *ss);

/*
 * After the images of a run arrived: carry the sigstore attachments of
 * every image the run mirrored (the releases of res->report, their
 * components, images; the source catalogs of res->catalogs, their bundle
 * and related images; res->chart_images) from its source into store
 * (al_cosign_carry), then
 * check them against the policy (al_cosign_check_store, verdicts saved in
 * STORE/airlock/sigstore.json). Fills res->sigstore, appends failures
 * to res->report.errors and returns rc or a worse status: a failed lookup
 * its own code, a policy refusal AL_EVERIFY (a warning under
 * allow_unsigned). ss NULL: returns rc.
 */
int al_mirror__sigstore_run(al_mirror__sigstore *ss, al_store *store,
                            const al_transfer_opts *to,
                            const char *const *images, size_t nimages,
                            int allow_unsigned, al_mirror_result *res, int rc);

#endif
