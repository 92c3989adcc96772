/* helper_test.c: the shared CUnit runner, temporary directories and seeds for the unit suites. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <stdarg.h>
#include <fnmatch.h>
#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

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

/* The program's arguments, handed by glibc to every initialiser in
 * .init_array (as to main), so that al_test_run can take test names
 * without a change to each suite's main. */
static int saved_argc;
static char **saved_argv;

static void save_args(int argc, char **argv, char **envp)
{
	(void)envp;
	saved_argc = argc;
	saved_argv = argv;
}

__attribute__((section(".init_array"), used)) static void (*save_args_ptr)(int, char **, char **) = save_args;

/* A test of the timing tier (it measures real time): its name holds
 * "__timing_", or begins with "timing_" where a suite registers short
 * names. */
static int is_timing(const char *name)
{
	return strstr(name, "__timing_") != NULL || strncmp(name, "timing_", 7) == 0;
}

/* name matches pattern: a glob (fnmatch) on the whole name or on the part
 * after the suite's "test_<module>__" prefix, or a substring of the name. */
static int name_matches(const char *name, const char *pattern)
{
	const char *shortname = strstr(name, "__");

	if (fnmatch(pattern, name, 0) == 0)
		return 1;
	if (shortname != NULL && fnmatch(pattern, shortname + 2, 0) == 0)
		return 1;
	return strpbrk(pattern, "*?[") == NULL && strstr(name, pattern) != NULL;
}

static void usage(const char *prog, const char *suite, const CU_TestInfo *tests)
{
	printf("usage: %s [-l] [NAME|PATTERN...]\n"
	       "  Runs the tests of suite %s: all of them but the timing tier (names\n"
	       "  with __timing_) by default; AL_TEST_TIER=timing runs only those, and\n"
	       "  AL_TEST_TIER=all both. Names are matched whole, without their\n"
	       "  test_<module>__ prefix, as shell globs, or as substrings.\n"
	       "  -l lists the tests.\n",
	       prog, suite);
	(void)tests;
}

/* Which tests run: the names on the command line, else the tier asked for
 * by AL_TEST_TIER (quick, the default: every test outside the timing
 * tier; timing; all). */
static int selected(const char *name, int npat, char **pats, const char *tier)
{
	int i;

	if (npat > 0) {
		for (i = 0; i < npat; i++)
			if (name_matches(name, pats[i]))
				return 1;
		return 0;
	}
	if (strcmp(tier, "all") == 0)
		return 1;
	if (strcmp(tier, "timing") == 0)
		return is_timing(name);
	return !is_timing(name);
}

int al_test_run(const char *suite, CU_TestInfo *tests)
{
	CU_SuiteInfo suites[] = {
		{suite, NULL, NULL, NULL, NULL, NULL},
		CU_SUITE_INFO_NULL,
	};
	const char *tier = getenv("AL_TEST_TIER");
	CU_TestInfo *chosen;
	char **pats = saved_argc > 1 ? saved_argv + 1 : NULL;
	int npat = saved_argc > 1 ? saved_argc - 1 : 0, list = 0;
	size_t n = 0, k = 0, i;
	unsigned failed;

	if (tier == NULL || tier[0] == '\0')
		tier = "quick";
	if (npat > 0 && strcmp(pats[0], "-l") == 0) {
		list = 1;
		pats++;
		npat--;
	} else if (npat > 0 && (strcmp(pats[0], "-h") == 0 || strcmp(pats[0], "--help") == 0)) {
		usage(saved_argv[0], suite, tests);
		return 0;
	}
	while (tests[n].pName != NULL)
		n++;
	chosen = calloc(n + 1, sizeof(*chosen));
	if (chosen == NULL)
		return 1;
	for (i = 0; i < n; i++) {
		if (!selected(tests[i].pName, npat, pats, tier))
			continue;
		if (list)
			printf("%s%s\n", tests[i].pName, is_timing(tests[i].pName) ? " (timing)" : "");
		chosen[k++] = tests[i];
	}
	if (list) {
		free(chosen);
		return 0;
	}
	if (k == 0 && npat > 0) {
		fprintf(stderr, "no test of suite %s matches", suite);
		for (i = 0; i < (size_t)npat; i++)
			fprintf(stderr, " '%s'", pats[i]);
		fprintf(stderr, " (-l lists them)\n");
		free(chosen);
		return 1;
	}
	if (k == 0) {
		printf("suite %s has no test in tier %s\n", suite, tier);
		free(chosen);
		return 77;
	}
	suites[0].pTests = chosen;
	if (CU_initialize_registry() != CUE_SUCCESS) {
		free(chosen);
		return 1;
	}
	if (CU_register_suites(suites) != CUE_SUCCESS) {
		fprintf(stderr, "cannot register suite %s: %s\n", suite, CU_get_error_msg());
		CU_cleanup_registry();
		free(chosen);
		return 1;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	if (CU_basic_run_tests() != CUE_SUCCESS) {
		fprintf(stderr, "CUnit error: %s\n", CU_get_error_msg());
		CU_cleanup_registry();
		free(chosen);
		return 1;
	}
	failed = CU_get_number_of_tests_failed();
	CU_cleanup_registry();
	free(chosen);
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

void al_test_tree(const char *dir, char *out, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		char p[2048];
		struct stat sb;
		size_t used = strlen(out);

		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		if (lstat(p, &sb) != 0)
			continue;
		snprintf(out + used, len - used, "%s %lld\n", p,
		         S_ISDIR(sb.st_mode) ? 0LL : (long long)sb.st_size);
		if (S_ISDIR(sb.st_mode))
			al_test_tree(p, out, len);
	}
	closedir(d);
}

int al_test_write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f == NULL)
		return -1;
	fputs(text, f);
	return fclose(f);
}
