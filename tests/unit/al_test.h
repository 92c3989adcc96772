/* al_test.h: shared helpers for the CUnit suites (one suite per module). */
#ifndef AL_TEST_H
#define AL_TEST_H

#include <stddef.h>

#include <CUnit/CUnit.h>

/*
 * Register tests (a CU_TestInfo array ending in CU_TEST_INFO_NULL) as one
 * suite named suite, run them with the basic interface, print a summary,
 * and return main's exit status: 1 if a test failed, 77 if none failed but
 * one was skipped (al_test_skip), 0 otherwise.
 */
int al_test_run(const char *suite, CU_TestInfo *tests);

/* Record that part of the suite cannot run here (a tool is missing) and
 * print why. A suite with skips and no failure exits 77, which ctest
 * reports as skipped (SKIP_RETURN_CODE), never as passed. */
void al_test_skip(const char *why);

/* A fresh directory under $TMPDIR (or /tmp), removed recursively at exit
 * unless AL_TEST_KEEP is set. Never NULL (aborts the test program when it
 * cannot be created). */
const char *al_test_tmpdir(void);

/* Every path under dir with its size (0 for a directory), one per line,
 * appended to the string out (of len bytes, truncated there): what is on
 * disk, for a test that checks a call wrote nothing. */
void al_test_tree(const char *dir, char *out, size_t len);

/* Write text to path (created or truncated); 0, or -1 when it cannot. */
int al_test_write_file(const char *path, const char *text);

/* The source tree ($AL_SOURCE_DIR, set by ctest; "." otherwise). */
const char *al_test_source_dir(void);

/* Run a shell command built printf-style (at most 8 KiB); returns
 * system()'s status and prints the command when it failed. */
int al_test_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* An upper bound for a real duration of ms in a test of the timing tier
 * (names with __timing_, never run under sanitizers): room for a loaded
 * machine, so that only a real fault (a missed timeout, a wait for the
 * next one) can exceed it. */
#define AL_TEST_LOADED_MS(ms) ((ms) * 3 + 3000)

/* Seed for randomised tests: $AL_TEST_SEED or time-based; printed once. */
unsigned al_test_seed(void);

#endif
