/* cli_json.h: --json result documents on stdout and JSON log lines on
 * stderr (docs/json.md). */
#ifndef AIRLOCK_CLI_JSON_H
#define AIRLOCK_CLI_JSON_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "airlock.h"

/* Option id of --json (between the common ids and OPT_COMMAND_BASE). */
#define OPT_JSON 1090

/* The --json entry of a command's longopts, and its help line. */
#define CLI_JSON_OPTION                                                        \
	{                                                                      \
		"json", no_argument, NULL, OPT_JSON                            \
	}
#define CLI_JSON_HELP                                                          \
	"      --json               the result as one JSON document on "       \
	"stdout "                                                              \
	"(docs/json.md)\n"

/*
 * Start the result document of command ("airlock.<command>/v1") after the
 * command parsed its options with --json. While a document is open the
 * text results are not printed (cli_json_active), every error or warning
 * the command prints is also appended to its "errors" / "warnings", and
 * main.c's cli_json_finish writes it. Returns 0, -1 out of memory (said).
 */
int cli_json_begin(const char *command);
/* 1 when a --json document is open. */
int cli_json_active(void);
/* The open document (borrowed), NULL when none: commands add members. */
json_t *cli_json_root(void);
/*
 * Write the open document, if any, with "exit": code, to stdout (indented,
 * one trailing newline) and close it. Returns code, or EXIT_RUNTIME (3)
 * when code was 0 and the document could not be built or written.
 */
int cli_json_finish(int code);

/*
 * Members. A string that is not valid UTF-8 (server-supplied text) is
 * stored escaped (al_str_escape), NULL as JSON null. Allocation failures
 * are remembered and make cli_json_finish fail; callers need not check.
 */
void cli_json_set_str(json_t *obj, const char *key, const char *s);
void cli_json_set_u64(json_t *obj, const char *key, uint64_t v);
void cli_json_set_int(json_t *obj, const char *key, long long v);
void cli_json_set_bool(json_t *obj, const char *key, int v);
/* "sha256:<hex>", or null when d is NULL. */
void cli_json_set_digest(json_t *obj, const char *key, const al_digest *d);
/* A new array / object stored under key (borrowed; NULL on failure). */
json_t *cli_json_set_array(json_t *obj, const char *key);
json_t *cli_json_set_object(json_t *obj, const char *key);
/* A new object appended to arr (borrowed; NULL on failure). */
json_t *cli_json_append_object(json_t *arr);
void cli_json_append_str(json_t *arr, const char *s);
/* The transfer counters as an object under key. */
void cli_json_set_stats(json_t *obj, const char *key,
                        const al_transfer_stats *st);
#endif
