/* mirror_imageset.h: the mirror workflow's hooks for the oc-mirror fields of
 * an ImageSetConfiguration (src/mirror/mirror_imageset.c); library internal. */
#ifndef AL_MIRROR_IMAGESET_H
#define AL_MIRROR_IMAGESET_H

#include "airlock/imageset.h"
#include "airlock/mirror.h"

/*
 * At plan time: log cfg->notes as warnings, drop the releases and images
 * that match mirror.blockedImages (a warning each), and return the
 * platform to mirror: opts_platform when given, else
 * mirror.platform.platforms' one entry (NULL, every entry, for several),
 * NULL for architectures [multi], else platform (what the plan chose).
 */
const char *al_mirror__imageset_plan(const al_imageset *cfg,
                                     const char *platform,
                                     const char *opts_platform,
                                     const char **releases, size_t *nreleases,
                                     const char **images, size_t *nimages);

/* The additional images mirrored with their own platform after the rest
 * (additionalImages[].platforms with one entry, not blocked): the plan
 * has something to mirror when there are any. */
size_t al_mirror__own_platform_count(const al_imageset *cfg);

/*
 * After the releases were mirrored: warn for each requested architecture
 * a mirrored release does not provide; with kubeVirtContainer, mirror the
 * KubeVirt image(s) each release names (not blocked ones), mirror the
 * additional images that have their own platform, merge what
 * happened into report; record archiveSize for pack. Returns 0 or the
 * worst status; failures are also in report->errors.
 */
int al_mirror__imageset_after(const al_imageset *cfg, al_store *s,
                              const al_transfer_opts *to,
                              al_mirror_report *report);

/*
 * The KubeVirt image references (images.kubevirt.digest-ref) for the
 * architecture keys ("x86_64", "s390x") in the bootimages ConfigMap
 * p[0..len): its data.stream is JSON (oc-mirror
 * InstallerBootableImages). Keys without one are skipped. AL_EPARSE
 * naming what for another document. Caller frees (*out)[i] and *out.
 */
int al_mirror__kubevirt_refs(const uint8_t *p, size_t len, const char *what,
                             const char *const *keys, size_t nkeys, char ***out,
                             size_t *nout);

#endif
