/* harness.h: what every fuzz target shares: the libFuzzer entry points and scratch-directory helpers. */
#ifndef AL_FUZZ_HARNESS_H
#define AL_FUZZ_HARNESS_H

#include <stddef.h>
#include <stdint.h>

/*
 * The libFuzzer entry point each fuzz_<target>.c defines. Called once per
 * input, by libFuzzer (-DAL_FUZZ=ON, clang) or by replay_main.c (every
 * build) for each file of tests/fuzz/corpus/<target>/. Returns 0.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * A scratch directory private to this process, created on first use
 * under $AL_FUZZ_TMPDIR, $TMPDIR or /tmp (in that order; run-fuzzer.sh
 * points AL_FUZZ_TMPDIR at /dev/shm: the pack targets fsync a lot) and
 * removed recursively at exit (kept when AL_FUZZ_KEEP is set). Never NULL:
 * the harness aborts when it cannot be created (a harness failure, not a
 * finding).
 */
const char *al_fuzz_tmpdir(void);

/* Write p[0..n) to path (created or truncated). Aborts on failure. */
void al_fuzz_write_file(const char *path, const uint8_t *p, size_t n);

/* Remove path recursively (a file or a directory); a missing path is fine. */
void al_fuzz_rm_rf(const char *path);

/* A fresh, empty directory under al_fuzz_tmpdir() named after tag; an
 * earlier one of the same tag is removed first. Caller frees. */
char *al_fuzz_fresh_dir(const char *tag);

/* A property the target checks did not hold: print what and abort (the
 * fuzzer records the input as a crash). */
void al_fuzz_fail(const char *target, const char *what) __attribute__((noreturn));

/* Read path (a file of the source tree named at build time) whole into
 * *out (malloc'd) and *len; aborts on failure. */
void al_fuzz_read_file(const char *path, uint8_t **out, size_t *len);

/* With AL_FUZZ_DEBUG set, print "target: step: rc (message)" to stderr,
 * to see how deep an input gets; otherwise nothing. */
void al_fuzz_note(const char *target, const char *step, int rc);

/* Route library log messages nowhere (once per process). */
void al_fuzz_quiet(void);

/*
 * The pack targets' common step: data is a pack manifest (JSON), then
 * optionally volumes, each after a line "--airlock-fuzz-volume--"
 * (AL_FUZZ_VOLUME_SEP). The pack id is taken from the manifest's "id"
 * when it is a valid pack id ("fz" otherwise); the manifest is written as
 * airlock-<id>.json and volume k as airlock-<id>-<kkkk>.tar into a fresh
 * directory, and al_unpack imports them into a fresh store. After a
 * successful import the store is checked (al_store_check). target names
 * the caller in property failures.
 */
#define AL_FUZZ_VOLUME_SEP "\n--airlock-fuzz-volume--\n"
void al_fuzz_unpack(const char *target, const uint8_t *data, size_t size);

#endif
