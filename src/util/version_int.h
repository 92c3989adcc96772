/* version_int.h: the one semantic-version parser of the library, in the
 * dialects of the peers airlock follows (src/util/version.c); internal. */
#ifndef AIRLOCK_VERSION_INT_H
#define AIRLOCK_VERSION_INT_H

#include <stddef.h>
#include <stdint.h>

/* A parsed version; pre borrows from the parsed string. */
typedef struct al_semver {
	uint64_t major, minor, patch;
	const char *pre; /* prerelease identifiers, NULL when none */
	size_t prelen;
} al_semver;

/* What a dialect allows beyond MAJOR.MINOR.PATCH[-PRE][+BUILD]. */
enum {
	AL_SEMVER_TRIM = 1u << 0,       /* blanks around the version */
	AL_SEMVER_V = 1u << 1,          /* a leading 'v' */
	AL_SEMVER_V_ANYCASE = 1u << 2,  /* a leading 'v' or 'V' */
	AL_SEMVER_SHORT = 1u << 3,      /* MINOR, PATCH missing: 0 */
	AL_SEMVER_CORE_ZEROS = 1u << 4, /* "01" in MAJOR.MINOR.PATCH */
	AL_SEMVER_PRE_ZEROS = 1u << 5   /* "01" as a prerelease identifier */
};

/* Release versions (al_version_valid): semver 2.0 syntax, leading zeros
 * tolerated as the update graph has always been read. */
#define AL_SEMVER_RELEASE (AL_SEMVER_CORE_ZEROS | AL_SEMVER_PRE_ZEROS)
/* blang/semver Parse (operator-registry, OLM) */
#define AL_SEMVER_BLANG 0u
/* blang/semver ParseTolerant (oc-mirror's minVersion/maxVersion) */
#define AL_SEMVER_BLANG_TOLERANT                                               \
	(AL_SEMVER_TRIM | AL_SEMVER_V_ANYCASE | AL_SEMVER_SHORT)
/* Masterminds/semver v3 NewVersion (Helm) */
#define AL_SEMVER_MASTERMINDS                                                  \
	(AL_SEMVER_V | AL_SEMVER_SHORT | AL_SEMVER_CORE_ZEROS)

/* Parse s[0..n) in the dialect flags; 0, or -1 when it is not a version
 * (*out untouched). Identifiers are [0-9A-Za-z-]+, dot-separated. */
int al_semver_parse(al_semver *out, const char *s, size_t n, unsigned flags);

/* Precedence (semver 2.0 item 11; build metadata ignored): -1, 0, 1. */
int al_semver_cmp(const al_semver *a, const al_semver *b);

#endif
