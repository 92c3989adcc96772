/* cli_mirror_retry.h: airlock mirror --retry FILE and the failed-image
 * list a run writes, kept out of cmd_mirror.c (docs/lifecycle.md). */
#ifndef AIRLOCK_CLI_MIRROR_RETRY_H
#define AIRLOCK_CLI_MIRROR_RETRY_H

#include "cli.h"

/* mirror's help lines for --retry */
extern const char cli_mirror_retry_help[];

#define CLI_OPT_RETRY 1190
#define CLI_MIRROR_RETRY_OPTION                                                \
	{                                                                      \
		"retry", required_argument, NULL, CLI_OPT_RETRY                \
	}

/* --retry FILE: the list read, and the references handed to the run */
typedef struct cli_mirror_retry {
	const char *file; /* NULL: no --retry */
	al_mirror_failure *list;
	size_t n;
	const char **releases, **images;
	size_t nreleases, nimages;
} cli_mirror_retry;

/*
 * With r->file set: refuse RELEASE arguments and --image next to it
 * (mo->nreleases, mo->nimages), read the list (a bad one is refused
 * naming FILE:LINE), and point mo at its references: release lines as
 * releases, the others as images. With an imageset, only its options
 * are used (AL_MIRROR_IMAGESET_OPTIONS_ONLY). Returns EXIT_OK, or
 * EXIT_USAGE / EXIT_RUNTIME (said on stderr). No --retry: EXIT_OK.
 */
int cli_mirror_retry_prepare(cli_mirror_retry *r, al_mirror_opts *mo);

/*
 * After a run that ran (or wrote a list: none of its images resolved):
 * a retried list of this store is retired when nothing failed or the
 * run wrote its own list; unless quiet, one stdout line
 * names the run's failed-image list and how to retry it. Returns an
 * exit status (EXIT_RUNTIME when the old list cannot be removed).
 */
int cli_mirror_retry_finish(const cli_mirror_retry *r, const char *store_path,
                            const al_mirror_result *res, int quiet);

void cli_mirror_retry_clear(cli_mirror_retry *r);

#endif
