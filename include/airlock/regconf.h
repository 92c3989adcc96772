/* regconf.h: containers-registries.conf(5) (version 2): where images are
 * pulled from (mirrors, prefixes), blocked and insecure registries. */
#ifndef AIRLOCK_REGCONF_H
#define AIRLOCK_REGCONF_H

#include "common.h"
#include "ref.h"

AL_BEGIN_DECL

/*
 * The registries configuration as containers/image reads it
 * (pkg/sysregistriesv2), docs/registry.md "registries.conf". Immutable
 * once loaded: thread-safe to share.
 */
typedef struct al_regconf al_regconf;

/* The default file and drop-in directory (containers/image paths_common.go). */
#define AL_REGCONF_PATH "/etc/containers/registries.conf"
#define AL_REGCONF_DIR "/etc/containers/registries.conf.d"

/*
 * Load the configuration. path != NULL: that file (must exist), with the
 * drop-in directories below. path NULL: $CONTAINERS_REGISTRIES_CONF, else
 * $REGISTRIES_CONFIG_PATH (must exist), else
 * ~/.config/containers/registries.conf when it exists (then only
 * ~/.config/containers/registries.conf.d is read beside it), else
 * AL_REGCONF_PATH (missing: an empty configuration). Then each "*.conf" of
 * AL_REGCONF_DIR and ~/.config/containers/registries.conf.d, in name
 * order, merged over it ([[registry]] entries replace those of the same
 * prefix; unqualified-search-registries replaces the list).
 * The files are a subset of TOML: what it cannot read, and what
 * containers/image refuses, is AL_EPARSE naming file:line; unknown keys
 * are logged as warnings and ignored (containers/image ignores them).
 * Version 1 files ([registries.search] ...) are refused. Free with
 * al_regconf_free.
 */
AL_EXPORT int al_regconf_load(al_regconf **out, const char *path);

/* Parse n bytes of one file's text; name is used in messages. For tests
 * and fuzzing: no drop-ins. */
AL_EXPORT int al_regconf_parse(al_regconf **out, const char *name,
                               const char *text, size_t n);
/* NULL is a no-op. */
AL_EXPORT void al_regconf_free(al_regconf *c);

/* The files read, "A, B" (borrowed; "" when none): for messages. */
AL_EXPORT const char *al_regconf_files(const al_regconf *c);

/* One place to pull an image from. */
typedef struct al_regconf_source {
	char *registry;   /* "mirror.example:5000" */
	char *repository; /* "ns/repo" on it */
	int insecure;     /* insecure = true for that location */
	int mirror;       /* 1: a [[registry.mirror]], 0: the location */
} al_regconf_source;

/*
 * Where ref is pulled from, in the order to try
 * (Registry.PullSourcesFromReference): the mirrors of the [[registry]]
 * whose prefix matches ref longest (refMatchingPrefix, "*.example.com"
 * subdomain prefixes included) that apply (pull-from-mirror "digest-only"
 * only for references by digest, "tag-only" only for tags,
 * mirror-by-digest-only for all mirrors), then the registry's location; ref
 * rewritten from the prefix to each location. No matching entry: ref
 * itself. A blocked registry is AL_EAUTH naming the file that blocks it.
 * c may be NULL (ref itself). Free with al_regconf_sources_free.
 */
AL_EXPORT int al_regconf_pull_sources(const al_regconf *c, const al_ref *ref,
                                      al_regconf_source **out, size_t *n);
AL_EXPORT void al_regconf_sources_free(al_regconf_source *s, size_t n);

/*
 * What the configuration says about a registry host (a push destination,
 * as containers/image newDockerClient asks): *insecure (may be NULL) set
 * from the entry whose prefix matches host; AL_EAUTH when it is blocked.
 * c may be NULL.
 */
AL_EXPORT int al_regconf_host(const al_regconf *c, const char *host,
                              int *insecure);

/*
 * Release references are never resolved through
 * unqualified-search-registries: when ref (a reference as the user wrote
 * it, "docker://" allowed) has no registry part (no '.' or ':' in its first
 * component, not "localhost") and the configuration lists such registries,
 * AL_EINVAL with a message that says so and names the file. 0 otherwise
 * (c may be NULL).
 */
AL_EXPORT int al_regconf_check_release_ref(const al_regconf *c,
                                           const char *ref);

AL_END_DECL

#endif
