/* cli_diag.h: the bottom of the command line: exit codes and every
 * diagnostic line on stderr (escaped, with advice, as text or as a JSON log
 * line). Every other file of tools/airlock may use it; it uses nothing of
 * them but the advice table of cli_hint.c (docs/commands.md, "Errors" and
 * "Exit status"). */
#ifndef AIRLOCK_CLI_DIAG_H
#define AIRLOCK_CLI_DIAG_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

/* Exit codes (docs/commands.md). */
#define EXIT_OK 0
#define EXIT_VERIFY 1
#define EXIT_USAGE 2
#define EXIT_RUNTIME 3

/* "airlock: error: ..." on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print one line of progress or event text to stderr, escaped like every
 * diagnostic (it may carry server data). */
void cli_event(const char *line);
/* 1 under --log-format=json; cli_set_log_json: set by the common flags
 * (cli.c), 0 until a command's --log-format. */
int cli_log_json(void);
void cli_set_log_json(int on);

/*
 * Where each error and warning goes besides stderr: fn(kind, msg) with kind
 * "error" or "warning" and the escaped message, for the --json result
 * document (cli_json.c sets it while a document is open); NULL: nowhere.
 */
typedef void (*cli_note_fn)(const char *kind, const char *msg);
void cli_set_note(cli_note_fn fn);

/*
 * One JSON log line on f: {"level":...,"msg":...,"time":"<RFC 3339 UTC>"}
 * plus "hint" when hint is not NULL (docs/json.md). Thread-safe (one
 * fprintf per line).
 */
void cli_log_line(FILE *f, const char *level, const char *msg,
                  const char *hint);
/* A JSON string of s, escaped (al_str_escape) when it is not valid UTF-8;
 * JSON null for NULL (new reference, NULL on failure). */
json_t *cli_str_json(const char *s);

/*
 * The exit-code map (docs/commands.md, "Exit status"), the only place that
 * turns a library status into an exit status:
 *   cli_exit_code: the command's work. AL_OK -> 0; AL_EVERIFY and
 *     AL_EUNSUPPORTED (content of a kind airlock cannot check) -> 1;
 *     everything else -> 3 (AL_EINVAL too: the command checked its
 *     arguments, so a refusal now is the library's, at run time).
 *   cli_input_exit_code: loading a file the user named as configuration
 *     (an ImageSetConfiguration, a keyring): what does not parse, does not
 *     exist or is not supported -> 2; AL_ENOMEM, AL_EIO, ... -> 3.
 * Exit 2 otherwise comes only from the command's own checks
 * (cli_usage_error, cli_getopt).
 */
int cli_exit_code(int rc);
int cli_input_exit_code(int rc);
/* The worst of two exit statuses, for commands given many items: 1
 * (verification failed) outranks 2 (usage), which outranks 3 (runtime),
 * which outranks 0 -- the status a rerun is least likely to change wins. */
int cli_worst(int a, int b);
/* Print "airlock: error: <context>: <al_error_message()>" and return
 * cli_exit_code(rc) (cli_input_fail: cli_input_exit_code(rc)). */
int cli_fail(int rc, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int cli_input_fail(int rc, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Usage error: message plus "try 'airlock CMD --help'", returns EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The "try 'airlock CMD --help'" line alone. */
void cli_usage_hint(const char *cmd);

/*
 * Print the n messages of failed images: each on its own line, except
 * that messages sharing one reason (what the transport said, after the
 * image and URL) are printed once, with their count and the first
 * message in full. Returns the number of lines printed.
 */
size_t cli_report_failures(const char *const *msgs, size_t n);

#endif
