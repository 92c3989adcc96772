/* al_test.h: shared helpers for the CUnit suites (one suite per module). */
#ifndef AL_TEST_H
#define AL_TEST_H

#include <CUnit/CUnit.h>

/*
 * Register tests (a CU_TestInfo array ending in CU_TEST_INFO_NULL) as one
 * suite named suite, run them with the basic interface, print a summary,
 * and return the number of failed tests (use it as main's exit status).
 */
int al_test_run(const char *suite, CU_TestInfo *tests);

/* A fresh directory under $TMPDIR (or /tmp), removed recursively at exit
 * unless AL_TEST_KEEP is set. Never NULL (aborts the test program when it
 * cannot be created). */
const char *al_test_tmpdir(void);

/* The source tree ($AL_SOURCE_DIR, set by ctest; "." otherwise). */
const char *al_test_source_dir(void);

/* Run a shell command built printf-style (at most 8 KiB); returns
 * system()'s status and prints the command when it failed. */
int al_test_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Seed for randomised tests: $AL_TEST_SEED or time-based; printed once. */
unsigned al_test_seed(void);

#endif
