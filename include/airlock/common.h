/* common.h: export macro, version and the stream callback types every module
 * shares. */
#ifndef AIRLOCK_COMMON_H
#define AIRLOCK_COMMON_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define AL_EXPORT __attribute__((visibility("default")))
#else
#define AL_EXPORT
#endif

/* C++ sees the declarations with C linkage (libgit2's GIT_BEGIN_DECL). */
#ifdef __cplusplus
#define AL_BEGIN_DECL extern "C" {
#define AL_END_DECL }
#else
#define AL_BEGIN_DECL
#define AL_END_DECL
#endif

AL_BEGIN_DECL

#define AL_VERSION_MAJOR 0
#define AL_VERSION_MINOR 1
#define AL_VERSION_PATCH 0
#define AL_VERSION_STRING "0.1.0"

#define AL_KIB ((uint64_t)1024)
#define AL_MIB (AL_KIB * 1024)
#define AL_GIB (AL_MIB * 1024)

/*
 * A byte sink. write() consumes all n bytes or fails with a negative
 * al_status; reset() (may be NULL) discards everything written so far so a
 * transfer can restart from byte 0.
 */
typedef struct al_writer {
	int (*write)(void *ud, const uint8_t *p, size_t n);
	int (*reset)(void *ud);
	void *ud;
} al_writer;

/*
 * A byte source. read() stores up to cap bytes and their count in *got
 * (0 at end of stream) or fails with a negative al_status; rewind() (may be
 * NULL) restarts from byte 0 so a request body can be sent again.
 */
typedef struct al_reader {
	int (*read)(void *ud, uint8_t *p, size_t cap, size_t *got);
	int (*rewind)(void *ud);
	void *ud;
} al_reader;

/* The library version string ("0.1.0"). */
AL_EXPORT const char *al_version(void);

/*
 * Semantic-version precedence (semver.org 2.0.0, section 11): numeric
 * major.minor.patch compared as numbers (4.14.9 < 4.14.10), a version
 * with a pre-release sorts before the same version without one
 * (4.15.0-rc.1 < 4.15.0), pre-release identifiers compared one by one
 * (numeric < alphanumeric, numbers as numbers), build metadata ("+amd64")
 * ignored. A string that is not a semantic version sorts after every
 * valid one, and such strings compare bytewise among themselves, so
 * the order is total. Returns <0, 0 or >0.
 */
AL_EXPORT int al_version_compare(const char *a, const char *b);
/* 1 if s is a semantic version (MAJOR.MINOR.PATCH[-PRE][+BUILD]). */
AL_EXPORT int al_version_valid(const char *s);

AL_END_DECL

#endif
