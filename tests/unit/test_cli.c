/* test_cli.c: the command line's shared parts (tools/airlock/cli.c): the
 * exit-code map, the worst-status rule, and the getopt step every command
 * uses (common flags, option suggestions). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../tools/airlock/cli.c"
#include "../../tools/airlock/cli_diag.c"
#include "../../tools/airlock/cli_json.c"
#include "../../tools/airlock/cli_hint.c"
#include "al_test.h"

/* Every status of include/airlock/error.h. */
static const int all_statuses[] = {
    AL_OK,     AL_EINVAL,  AL_ENOMEM,       AL_ENOTFOUND,
    AL_EIO,    AL_ENET,    AL_ETIMEOUT,     AL_ECANCELED,
    AL_EPARSE, AL_ELIMIT,  AL_EVERIFY,      AL_EAUTH,
    AL_EEXIST, AL_ELOCKED, AL_EUNSUPPORTED, AL_EPROTO,
};
#define NSTATUSES (sizeof(all_statuses) / sizeof(all_statuses[0]))

static void test_cli__exit_map_for_work(void)
{
	size_t i;

	CU_ASSERT_EQUAL(cli_exit_code(AL_OK), EXIT_OK);
	CU_ASSERT_EQUAL(cli_exit_code(AL_EVERIFY), EXIT_VERIFY);
	/* a well-formed signature of an unsupported kind is not accepted */
	CU_ASSERT_EQUAL(cli_exit_code(AL_EUNSUPPORTED), EXIT_VERIFY);
	/* the command checked its arguments: a refusal now is at run time */
	CU_ASSERT_EQUAL(cli_exit_code(AL_EINVAL), EXIT_RUNTIME);
	for (i = 0; i < NSTATUSES; i++) {
		int rc = all_statuses[i], code = cli_exit_code(rc);

		if (rc != AL_OK && rc != AL_EVERIFY && rc != AL_EUNSUPPORTED)
			CU_ASSERT_EQUAL(code, EXIT_RUNTIME);
		/* exit 2 is only ever the command's own usage check */
		CU_ASSERT_NOT_EQUAL(code, EXIT_USAGE);
	}
	/* a status this build does not know is a runtime error */
	CU_ASSERT_EQUAL(cli_exit_code(-99), EXIT_RUNTIME);
}

static void test_cli__exit_map_for_configuration(void)
{
	CU_ASSERT_EQUAL(cli_input_exit_code(AL_OK), EXIT_OK);
	CU_ASSERT_EQUAL(cli_input_exit_code(AL_EPARSE), EXIT_USAGE);
	CU_ASSERT_EQUAL(cli_input_exit_code(AL_ENOTFOUND), EXIT_USAGE);
	CU_ASSERT_EQUAL(cli_input_exit_code(AL_EINVAL), EXIT_USAGE);
	CU_ASSERT_EQUAL(cli_input_exit_code(AL_ELIMIT), EXIT_USAGE);
	CU_ASSERT_EQUAL(cli_input_exit_code(AL_EUNSUPPORTED), EXIT_USAGE);
	CU_ASSERT_EQUAL(cli_input_exit_code(AL_EVERIFY), EXIT_VERIFY);
	CU_ASSERT_EQUAL(cli_input_exit_code(AL_ENOMEM), EXIT_RUNTIME);
	CU_ASSERT_EQUAL(cli_input_exit_code(AL_EIO), EXIT_RUNTIME);
}

static void test_cli__worst_ranks_verify_usage_runtime_ok(void)
{
	static const int order[] = {EXIT_OK, EXIT_RUNTIME, EXIT_USAGE,
	                            EXIT_VERIFY};
	size_t i, j;

	for (i = 0; i < 4; i++) {
		for (j = 0; j < 4; j++) {
			int w = cli_worst(order[i], order[j]);

			CU_ASSERT_EQUAL(w, order[i > j ? i : j]);
			/* the order of the items does not matter */
			CU_ASSERT_EQUAL(w, cli_worst(order[j], order[i]));
		}
	}
	CU_ASSERT_EQUAL(
	    cli_worst(cli_worst(EXIT_RUNTIME, EXIT_VERIFY), EXIT_USAGE),
	    EXIT_VERIFY);
}

static const struct option test_longopts[] = {
    {"store", required_argument, NULL, 1100},
    {"keyring", required_argument, NULL, 1101},
    {"signature-store", required_argument, NULL, 1102},
    {"signature-timeout", required_argument, NULL, 1103},
    {"gc", no_argument, NULL, 1104},
    CLI_LOCAL_OPTIONS,
    {NULL, 0, NULL, 0},
};

static void test_cli__nearest_option(void)
{
	const char *n;

	n = cli_nearest_option("kerying", test_longopts);
	CU_ASSERT(n != NULL && strcmp(n, "keyring") == 0);
	n = cli_nearest_option("stroe", test_longopts);
	CU_ASSERT(n != NULL && strcmp(n, "store") == 0);
	n = cli_nearest_option("signature-timout", test_longopts);
	CU_ASSERT(n != NULL && strcmp(n, "signature-timeout") == 0);
	n = cli_nearest_option("verbos", test_longopts);
	CU_ASSERT(n != NULL && strcmp(n, "verbose") == 0);
	CU_ASSERT_PTR_NULL(cli_nearest_option("frobnicate", test_longopts));
	CU_ASSERT_PTR_NULL(cli_nearest_option("x", test_longopts));
	/* longer than the distance table: no suggestion, no overflow */
	CU_ASSERT_PTR_NULL(cli_nearest_option(
	    "a-very-long-option-name-that-is-nothing-like-any-of-them",
	    test_longopts));
}

/* Run cli_getopt over argv until it ends or fails; the last result, the
 * command options seen (as a string of their last digits) and stderr. */
static int run_getopt(cli_common *c, char **argv, char *seen, size_t seenlen,
                      char *err, size_t errlen)
{
	char path[1024];
	FILE *f;
	int argc = 0, opt, saved;
	size_t k = 0, n;

	while (argv[argc] != NULL)
		argc++;
	snprintf(path, sizeof(path), "%s/stderr", al_test_tmpdir());
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	if ((f = fopen(path, "w")) != NULL) {
		dup2(fileno(f), STDERR_FILENO);
		fclose(f);
	}
	cli_common_init(c);
	optind = 1;
	while ((opt = cli_getopt(c, "test", argc, argv, "o:h",
	                         test_longopts)) >= 0) {
		if (k + 1 < seenlen)
			seen[k++] = opt == 'o' || opt == 'h'
			                ? (char)opt
			                : "0123456789"[opt % 10];
	}
	seen[k] = '\0';
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	err[0] = '\0';
	if ((f = fopen(path, "r")) != NULL) {
		n = fread(err, 1, errlen - 1, f);
		err[n] = '\0';
		fclose(f);
	}
	return opt;
}

static void test_cli__getopt_handles_common_flags(void)
{
	char a0[] = "test", a1[] = "-qv", a2[] = "--log-format=json",
	     a3[] = "--store", a4[] = "S", a5[] = "-o", a6[] = "O",
	     a7[] = "--gc";
	char *argv[] = {a0, a1, a2, a3, a4, a5, a6, a7, NULL};
	char seen[16], err[1024];
	cli_common c;

	CU_ASSERT_EQUAL(
	    run_getopt(&c, argv, seen, sizeof(seen), err, sizeof(err)), -1);
	/* the command sees only its own options, in order */
	CU_ASSERT_STRING_EQUAL(seen, "0o4");
	CU_ASSERT(c.quiet && c.verbose && c.log_json);
	CU_ASSERT_STRING_EQUAL(err, "");
}

static void test_cli__getopt_suggests_the_nearest_option(void)
{
	char a0[] = "test", a1[] = "--kerying", a2[] = "x";
	char *argv[] = {a0, a1, a2, NULL};
	char seen[16], err[1024];
	cli_common c;

	CU_ASSERT_EQUAL(
	    run_getopt(&c, argv, seen, sizeof(seen), err, sizeof(err)),
	    CLI_OPT_USAGE);
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(err, "airlock: error: unknown option '--kerying'; did you "
	                "mean '--keyring'?\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "try 'airlock test --help'"));
}

static void test_cli__getopt_usage_errors(void)
{
	char a0[] = "test", s1[] = "--store", q1[] = "--quiet=yes",
	     z1[] = "-qZ", m1[] = "--signature", l1[] = "--log-format=xml",
	     o1[] = "-o";
	char *missing[] = {a0, s1, NULL};
	char *novalue[] = {a0, q1, NULL};
	char *shortopt[] = {a0, z1, NULL};
	char *ambiguous[] = {a0, m1, NULL};
	char *badvalue[] = {a0, l1, NULL};
	char *shortmissing[] = {a0, o1, NULL};
	char seen[16], err[1024];
	cli_common c;

	CU_ASSERT_EQUAL(
	    run_getopt(&c, missing, seen, sizeof(seen), err, sizeof(err)),
	    CLI_OPT_USAGE);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "option '--store' needs a value"));
	CU_ASSERT_EQUAL(
	    run_getopt(&c, novalue, seen, sizeof(seen), err, sizeof(err)),
	    CLI_OPT_USAGE);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "option '--quiet' takes no value"));
	CU_ASSERT_EQUAL(
	    run_getopt(&c, shortopt, seen, sizeof(seen), err, sizeof(err)),
	    CLI_OPT_USAGE);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "unknown option '-Z'"));
	CU_ASSERT_EQUAL(
	    run_getopt(&c, ambiguous, seen, sizeof(seen), err, sizeof(err)),
	    CLI_OPT_USAGE);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "'--signature' is ambiguous"));
	CU_ASSERT_EQUAL(
	    run_getopt(&c, badvalue, seen, sizeof(seen), err, sizeof(err)),
	    CLI_OPT_USAGE);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "not 'xml'"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "try 'airlock test --help'"));
	CU_ASSERT_EQUAL(
	    run_getopt(&c, shortmissing, seen, sizeof(seen), err, sizeof(err)),
	    CLI_OPT_USAGE);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "option '-o' needs a value"));
}

int main(void)
{
	CU_TestInfo tests[] = {
	    {"exit_map_for_work", test_cli__exit_map_for_work},
	    {"exit_map_for_configuration",
	     test_cli__exit_map_for_configuration},
	    {"worst_ranks_verify_usage_runtime_ok",
	     test_cli__worst_ranks_verify_usage_runtime_ok},
	    {"nearest_option", test_cli__nearest_option},
	    {"getopt_handles_common_flags",
	     test_cli__getopt_handles_common_flags},
	    {"getopt_suggests_the_nearest_option",
	     test_cli__getopt_suggests_the_nearest_option},
	    {"getopt_usage_errors", test_cli__getopt_usage_errors},
	    CU_TEST_INFO_NULL,
	};

	return al_test_run("cli", tests);
}
