/* cli_push.h: the registry destination shared by airlock push and mirror
 * --to: its parsing, its options, and the report of al_push_store. */
#ifndef AIRLOCK_CLI_PUSH_H
#define AIRLOCK_CLI_PUSH_H

#include <jansson.h>

#include "cli.h"

/*
 * Parse a destination "docker://HOST[:PORT][/PREFIX]" for cmd into *host
 * and *prefix (caller frees both). Returns EXIT_OK, or a usage error
 * (said, nothing allocated): not docker://, no host, or not a mirror
 * location a cluster accepts (the ImageDigestMirrorSet CRD pattern).
 */
int cli_push_dest(const char *cmd, const char *arg, char **host, char **prefix);

/*
 * Report an al_push_store result to host: a failure before any transfer
 * (r->ran 0) on one line, each image that could not be mapped or queued
 * on its own line, the transfer failures through cli_report_failures, a
 * record that could not be written as a warning; with jimages (a JSON
 * array) one object per image. Returns the exit status (the worst over
 * r->status and the images; 0 when all were pushed).
 */
int cli_push_report(const al_push_result *r, const char *host,
                    const char *store_path, json_t *jimages);

/* The summary line "pushed I images..." on stdout (to dest: appended
 * " to DEST" when not NULL). */
void cli_push_summary(const al_push_result *r, const char *dest);

/* mirror --to and its push options (kept out of cmd_mirror.c). */
typedef struct cli_mirror_to {
	const char *to;     /* --to docker://HOST[:PORT][/PREFIX] */
	const char *nested; /* --max-nested-paths N */
	int no_digest_tags; /* --no-digest-tags */
	const char *layout; /* --layout oc-mirror|source */
	/* set by cli_mirror_to_setup */
	char *host, *prefix, *dest; /* dest: "HOST[/PREFIX]" */
	al_push_opts push;
	al_push_result result;
} cli_mirror_to;

extern const char cli_mirror_to_help[];

/* 1 when opt is one of mirror's --to options (mt updated), else 0. */
int cli_mirror_to_option(cli_mirror_to *mt, int opt, const char *arg);

/*
 * Check the --to options and fill mt->push (registry, prefix, nested,
 * flags; transfer left to the caller). Returns EXIT_OK (also when --to
 * is not given: mt->push.registry stays NULL) or a usage error (said).
 */
int cli_mirror_to_setup(cli_mirror_to *mt);

/*
 * After the mirror: report the push (when --to was given and it ran),
 * the summary line unless json, the "push" member of the JSON document
 * when json. Returns the exit status of the push (0 when none).
 */
int cli_mirror_to_report(cli_mirror_to *mt, const char *store_path, int json);

void cli_mirror_to_clear(cli_mirror_to *mt);

#define CLI_OPT_TO 1200
#define CLI_OPT_TO_NESTED 1201
#define CLI_OPT_TO_NO_DIGEST_TAGS 1202
#define CLI_OPT_TO_LAYOUT 1203
#define CLI_MIRROR_TO_OPTIONS                                                  \
	{"to", required_argument, NULL, CLI_OPT_TO},                           \
	    {"max-nested-paths", required_argument, NULL, CLI_OPT_TO_NESTED},  \
	    {"no-digest-tags", no_argument, NULL, CLI_OPT_TO_NO_DIGEST_TAGS},  \
	{                                                                      \
		"layout", required_argument, NULL, CLI_OPT_TO_LAYOUT           \
	}

#endif
