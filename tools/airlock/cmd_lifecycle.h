/* cmd_lifecycle.h: the lifecycle parts of airlock mirror (--dry-run, the
 * free-space check), kept out of cmd_mirror.c (docs/lifecycle.md). */
#ifndef AIRLOCK_CMD_LIFECYCLE_H
#define AIRLOCK_CMD_LIFECYCLE_H

#include "cli.h"

/* mirror's help lines for the options below */
extern const char cli_mirror_lifecycle_help[];

/*
 * Options of mirror handled here: --dry-run[=DIR], --no-space-check.
 * Returns 1 when opt was one of them (lc updated), 0 when not.
 */
int cli_mirror_lifecycle_option(al_mirror_lifecycle *lc, int opt,
                                const char *arg);

/* Print the summary of a dry run (lc filled by al_mirror_plan_run) and
 * return its exit code: 0, or 3 when an image did not resolve or the
 * selection does not fit. */
int cli_mirror_dry_run_report(const cli_common *c,
                              const al_mirror_lifecycle *lc);

#define CLI_OPT_DRY_RUN 1180
#define CLI_OPT_NO_SPACE_CHECK 1181
#define CLI_MIRROR_LIFECYCLE_OPTIONS                                           \
	{"dry-run", optional_argument, NULL, CLI_OPT_DRY_RUN},                 \
	{                                                                      \
		"no-space-check", no_argument, NULL, CLI_OPT_NO_SPACE_CHECK    \
	}

#endif
