/* helper_test.c: the shared CUnit runner, temporary directories and seeds for the unit suites. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <stdarg.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include "al_test.h"

static char tmpdir_path[4096];

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void remove_tmpdir(void)
{
	if (tmpdir_path[0] != '\0' && getenv("AL_TEST_KEEP") == NULL)
		nftw(tmpdir_path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

const char *al_test_tmpdir(void)
{
	const char *base;
	int n;

	if (tmpdir_path[0] != '\0')
		return tmpdir_path;
	base = getenv("TMPDIR");
	if (base == NULL || base[0] == '\0')
		base = "/tmp";
	n = snprintf(tmpdir_path, sizeof(tmpdir_path), "%s/al-test-XXXXXX", base);
	if (n < 0 || (size_t)n >= sizeof(tmpdir_path) || mkdtemp(tmpdir_path) == NULL) {
		fprintf(stderr, "cannot create a temporary directory under '%s': %s\n", base, strerror(errno));
		abort();
	}
	atexit(remove_tmpdir);
	return tmpdir_path;
}

const char *al_test_source_dir(void)
{
	const char *s = getenv("AL_SOURCE_DIR");

	return (s != NULL && s[0] != '\0') ? s : ".";
}

unsigned al_test_seed(void)
{
	static unsigned seed;
	static int have;
	const char *s;

	if (have)
		return seed;
	s = getenv("AL_TEST_SEED");
	if (s != NULL && s[0] != '\0')
		seed = (unsigned)strtoul(s, NULL, 10);
	else
		seed = (unsigned)time(NULL) ^ (unsigned)getpid();
	have = 1;
	printf("random seed: %u (set AL_TEST_SEED=%u to repeat)\n", seed, seed);
	return seed;
}

static unsigned skipped;

void al_test_skip(const char *why)
{
	skipped++;
	printf("SKIP: %s\n", why);
}

int al_test_run(const char *suite, CU_TestInfo *tests)
{
	CU_SuiteInfo suites[] = {
		{suite, NULL, NULL, NULL, NULL, tests},
		CU_SUITE_INFO_NULL,
	};
	unsigned failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	if (CU_register_suites(suites) != CUE_SUCCESS) {
		fprintf(stderr, "cannot register suite %s: %s\n", suite, CU_get_error_msg());
		CU_cleanup_registry();
		return 1;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	if (CU_basic_run_tests() != CUE_SUCCESS) {
		fprintf(stderr, "CUnit error: %s\n", CU_get_error_msg());
		CU_cleanup_registry();
		return 1;
	}
	failed = CU_get_number_of_tests_failed();
	CU_cleanup_registry();
	if (failed > 0)
		return 1;
	if (skipped > 0) {
		printf("%u part(s) of suite %s skipped\n", skipped, suite);
		return 77;
	}
	return 0;
}

int al_test_sh(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	int n, rc;

	va_start(ap, fmt);
	n = vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(cmd))
		return -1;
	rc = system(cmd);
	if (rc != 0)
		fprintf(stderr, "command failed (%d): %s\n", rc, cmd);
	return rc;
}
