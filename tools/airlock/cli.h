/* cli.h: what every airlock command shares: common flags, diagnostics, exit
 * codes, progress display. */
#ifndef AIRLOCK_CLI_H
#define AIRLOCK_CLI_H

#include <getopt.h>
#include <stdio.h>

#include "airlock.h"

/* Exit codes (docs/commands.md). */
#define EXIT_OK 0
#define EXIT_VERIFY 1
#define EXIT_USAGE 2
#define EXIT_RUNTIME 3

/* Option ids of the common flags (above any short option character). */
enum {
	OPT_AUTHFILE = 1000,
	OPT_TLS_VERIFY,
	OPT_CA_FILE,
	OPT_PROXY,
	OPT_PARALLEL,
	OPT_TIMEOUT,
	OPT_LOG_FORMAT,
	OPT_QUIET,
	OPT_VERBOSE,
	OPT_HELP,
	OPT_COMMAND_BASE = 1100, /* command-specific long options start here */
};

/* The common long options; commands append theirs before the terminator. */
#define CLI_COMMON_OPTIONS                                                     \
	{"authfile", required_argument, NULL, OPT_AUTHFILE},                   \
	    {"tls-verify", required_argument, NULL, OPT_TLS_VERIFY},           \
	    {"ca-file", required_argument, NULL, OPT_CA_FILE},                 \
	    {"proxy", required_argument, NULL, OPT_PROXY},                     \
	    {"parallel", required_argument, NULL, OPT_PARALLEL},               \
	    {"timeout", required_argument, NULL, OPT_TIMEOUT},                 \
	    {"log-format", required_argument, NULL, OPT_LOG_FORMAT},           \
	    {"quiet", no_argument, NULL, 'q'},                                 \
	    {"verbose", no_argument, NULL, 'v'},                               \
	{                                                                      \
		"help", no_argument, NULL, 'h'                                 \
	}

#define CLI_COMMON_HELP                                                        \
	"Common options:\n"                                                    \
	"      --authfile FILE      registry credentials (containers "         \
	"auth.json, docker\n"                                                  \
	"                           config.json or a pull secret); default: "  \
	"$REGISTRY_AUTH_FILE,\n"                                               \
	"                           $XDG_RUNTIME_DIR/containers/auth.json, "   \
	"~/.docker/config.json\n"                                              \
	"      --tls-verify=false   do not verify registry TLS certificates "  \
	"and allow plain\n"                                                    \
	"                           HTTP when a registry does not speak TLS\n" \
	"      --ca-file FILE       extra CA certificates (PEM) for "          \
	"registries\n"                                                         \
	"      --proxy URL          HTTP(S) proxy (default: https_proxy / "    \
	"no_proxy env)\n"                                                      \
	"      --parallel N         concurrent transfers (default 8)\n"        \
	"      --timeout D          fail a connection that does not connect "  \
	"or move\n"                                                            \
	"                           data for D (e.g. 10s, 2m), or a manifest " \
	"not received\n"                                                       \
	"                           within D; retry at most twice (default: "  \
	"10s to\n"                                                             \
	"                           connect, 30s without data, four "          \
	"retries)\n"                                                           \
	"      --log-format=FMT     text (default) or json\n"                  \
	"  -q, --quiet              only errors\n"                             \
	"  -v, --verbose            debug output\n"                            \
	"  -h, --help               this help\n"

typedef struct cli_common {
	const char *authfile;
	int tls_verify; /* 1 unless --tls-verify=false */
	const char *ca_file;
	const char *proxy;
	unsigned parallel;
	uint64_t timeout_ms;
	int quiet;
	int verbose;
	int log_json;
	al_auth *auth;
	al_cancel *cancel;
	int started; /* cli_common_start ran */
	/* progress display state */
	int progress_tty;
	int progress_shown;
} cli_common;

/* Initialise defaults. */
void cli_common_init(cli_common *c);
/*
 * Handle a common option returned by getopt_long. Returns 1 if handled,
 * 0 if not a common option, -1 after printing a usage error.
 */
int cli_common_option(cli_common *c, int opt, const char *arg);
/* Install log handler, signal handlers (SIGINT/SIGTERM cancel), curl init,
 * credentials. Returns an exit code (EXIT_OK to go on). */
int cli_common_start(cli_common *c);
void cli_common_finish(cli_common *c);
/* Fill transfer options from the common flags. */
void cli_transfer_opts(cli_common *c, al_transfer_opts *o);

/* "airlock: error: ..." on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print one line of progress or event text to stderr, escaped like every
 * diagnostic (it may carry server data). */
void cli_event(const char *line);
/* Print "airlock: error: <context>: <al_error_message()>" and map rc. */
int cli_fail(int rc, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Map an al_status to an exit code (AL_EVERIFY -> 1, usage -> 2, else 3). */
int cli_exit_code(int rc);
/* Usage error: message plus "try 'airlock CMD --help'", returns EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Progress callback for al_transfer_opts.progress (ud: cli_common*). */
void cli_progress(const al_progress_info *info, void *ud);
/* End the progress line if one is shown. */
void cli_progress_done(cli_common *c);

/* Human-readable byte count ("1.5 GiB") into buf. */
const char *cli_bytes(uint64_t n, char *buf, size_t len);

/* The commands. */
int cmd_mirror(int argc, char **argv);
int cmd_push(int argc, char **argv);
int cmd_copy(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_mirrorsets(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_configmaps(int argc, char **argv);

#endif
