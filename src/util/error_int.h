/* error_int.h: error helpers the modules share and the API does not export. */
#ifndef AL_ERROR_INT_H
#define AL_ERROR_INT_H

/*
 * The first check of every entry that takes a versioned options struct
 * (docs/architecture.md "Options structs (ABI)"): 0 when version, the
 * struct's leading field, is at most supported (the AL_<NAME>_OPTS_VERSION
 * this library was built with; 0, a zeroed struct, reads as 1), else
 * AL_EINVAL with a message naming the struct ("al_http_opts version 2 is
 * newer than this library's (1)"). name is the struct's type name.
 */
int al_opts_version_check(const char *name, unsigned version,
                          unsigned supported);

/*
 * The same for a versioned report or result struct an entry fills
 * (AL_<NAME>_VERSION): checked first, before the entry writes anything
 * into it, so a refused one is left exactly as the caller gave it
 * ("al_push_result version 2 is newer than this library's (1)"). A NULL
 * report (where an entry allows one) passes.
 */
#define AL_RESULT_VERSION_CHECK(name, p, field, supported)                     \
	((p) == NULL ? 0 : al_opts_version_check(name, (p)->field, supported))

/*
 * Zero the report *p, keeping its version field: an entry or a *_clear
 * that resets a report leaves the version its caller set. The _STATS form
 * also keeps the version of an embedded al_transfer_stats member stats.
 * The caller includes <string.h>.
 */
#define AL_RESULT_ZERO_KEEP(p, field)                                          \
	do {                                                                   \
		const unsigned al__ver = (p)->field;                           \
		memset((p), 0, sizeof(*(p)));                                  \
		(p)->field = al__ver;                                          \
	} while (0)
#define AL_RESULT_ZERO(p) AL_RESULT_ZERO_KEEP(p, version)
#define AL_RESULT_ZERO_STATS(p)                                                \
	do {                                                                   \
		const unsigned al__sver = (p)->stats.version;                  \
		AL_RESULT_ZERO_KEEP(p, version);                               \
		(p)->stats.version = al__sver;                                 \
	} while (0)

#endif
