/* cli.h: what every airlock command shares: common flags, progress display,
 * and (cli_diag.h) diagnostics and exit codes. */
#ifndef AIRLOCK_CLI_H
#define AIRLOCK_CLI_H

#include <getopt.h>
#include <stdio.h>

#include "airlock.h"
#include "cli_diag.h"

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
	OPT_CERT_DIR,
	OPT_COMMAND_BASE = 1100, /* command-specific long options start here */
};

/* The long options every command takes (-q, -v, --log-format, -h);
 * commands list theirs before or after and end with {NULL, 0, NULL, 0}. */
#define CLI_LOCAL_OPTIONS                                                      \
	{"log-format", required_argument, NULL, OPT_LOG_FORMAT},               \
	    {"quiet", no_argument, NULL, 'q'},                                 \
	    {"verbose", no_argument, NULL, 'v'},                               \
	{                                                                      \
		"help", no_argument, NULL, 'h'                                 \
	}

/* The network options of the commands that talk to registries. */
#define CLI_NET_OPTIONS                                                        \
	{"authfile", required_argument, NULL, OPT_AUTHFILE},                   \
	    {"tls-verify", required_argument, NULL, OPT_TLS_VERIFY},           \
	    {"ca-file", required_argument, NULL, OPT_CA_FILE},                 \
	    {"cert-dir", required_argument, NULL, OPT_CERT_DIR},               \
	    {"proxy", required_argument, NULL, OPT_PROXY},                     \
	    {"parallel", required_argument, NULL, OPT_PARALLEL},               \
	{                                                                      \
		"timeout", required_argument, NULL, OPT_TIMEOUT                \
	}

/* Both: what mirror, push, copy and graph take. */
#define CLI_COMMON_OPTIONS CLI_NET_OPTIONS, CLI_LOCAL_OPTIONS

/* Help lines of CLI_LOCAL_OPTIONS (CLI_LOG_HELP: without -q, for commands
 * that say what their -q leaves out). */
#define CLI_LOG_HELP                                                           \
	"      --log-format=FMT     log lines as text (default) or json\n"     \
	"  -v, --verbose            debug output (the library's debug log)\n"  \
	"  -h, --help               this help\n"
#define CLI_LOCAL_HELP "  -q, --quiet              only errors\n" CLI_LOG_HELP

#define CLI_COMMON_HELP                                                        \
	"Common options:\n"                                                    \
	"      --authfile FILE      registry credentials (containers "         \
	"auth.json, docker\n"                                                  \
	"                           config.json or a pull secret); default: "  \
	"$REGISTRY_AUTH_FILE\n"                                                \
	"                           alone when it exists, else in turn "       \
	"$XDG_RUNTIME_DIR/\n"                                                  \
	"                           containers/auth.json (or "                 \
	"/run/containers/UID/auth.json),\n"                                    \
	"                           $XDG_CONFIG_HOME/containers/auth.json "    \
	"(~/.config/...),\n"                                                   \
	"                           $DOCKER_CONFIG/config.json "               \
	"(~/.docker/config.json),\n"                                           \
	"                           ~/.dockercfg\n"                            \
	"      --tls-verify=false   do not verify registry TLS certificates "  \
	"and allow plain\n"                                                    \
	"                           HTTP when a registry does not speak TLS\n" \
	"      --ca-file FILE       extra CA certificates (PEM) for "          \
	"registries\n"                                                         \
	"      --cert-dir DIR       TLS files for every registry: *.crt CAs, " \
	"a *.cert/*.key\n"                                                     \
	"                           client pair (as in certs.d/HOST, which "   \
	"it "                                                                  \
	"replaces)\n"                                                          \
	"      --proxy URL          HTTP(S) proxy (default: https_proxy / "    \
	"no_proxy env)\n"                                                      \
	"      --parallel N         concurrent transfers (default 16)\n"       \
	"      --timeout D          fail a connection that does not connect "  \
	"or move\n"                                                            \
	"                           data for D (e.g. 10s, 2m), or a manifest " \
	"not received\n"                                                       \
	"                           within D; retry at most twice (default: "  \
	"10s to\n"                                                             \
	"                           connect, 30s without data, four "          \
	"retries)\n" CLI_LOCAL_HELP

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
	int offline; /* set before cli_common_start: no libcurl, no
	                credentials (pack, unpack) */
	/* progress display state */
	int progress_tty;
	int progress_shown;
	/* registries.conf (docs/registry.md), loaded by cli_common_start
	 * for commands that reach registries */
	al_regconf *regconf;
	const char *cert_dir; /* --cert-dir */
} cli_common;

/* Initialise defaults. */
void cli_common_init(cli_common *c);
/*
 * Handle a common option returned by getopt_long. Returns 1 if handled,
 * 0 if not a common option, -1 after printing a usage error.
 */
int cli_common_option(cli_common *c, int opt, const char *arg);
/*
 * The one getopt loop step of every command: getopt_long over argv,
 * handling the common options itself. Returns the next command option
 * (including 'h'), -1 at the end, or CLI_OPT_USAGE after printing a usage
 * error for command cmd: an unknown option (with the nearest known one:
 * "did you mean '--keyring'?"), an ambiguous abbreviation, a missing or
 * unexpected value, a bad common option value.
 */
#define CLI_OPT_USAGE (-2)
int cli_getopt(cli_common *c, const char *cmd, int argc, char **argv,
               const char *shortopts, const struct option *longopts);
/* The long option of longopts nearest to the unknown name (without "--"),
 * or NULL when none is close (test hook for cli_getopt's suggestion). */
const char *cli_nearest_option(const char *name, const struct option *longopts);
/* Install log handler, signal handlers (SIGINT/SIGTERM cancel), curl init,
 * credentials (the last two not when c->offline). Returns an exit code
 * (EXIT_OK to go on). */
int cli_common_start(cli_common *c);
/* For commands that need no network: only the log handler and level
 * (-q, -v, --log-format); signals keep their default action. */
void cli_log_start(cli_common *c);
void cli_common_finish(cli_common *c);
/* Registry client options from the common flags: auth, TLS files, proxy,
 * timeouts, cancel and registries.conf (the policy gate every request
 * passes, docs/security.md). Every command that makes a registry client
 * starts from these. */
void cli_registry_opts(cli_common *c, al_registry_opts *ro);
/* Fill transfer options from the common flags (registry: the above). */
void cli_transfer_opts(cli_common *c, al_transfer_opts *o);

/* A closing summary or note on stderr (not under -q): a plain line, or a
 * JSON log line under --log-format=json. */
void cli_info(const cli_common *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Progress callback for al_transfer_opts.progress (ud: cli_common*). */
void cli_progress(const al_progress_info *info, void *ud);
/* End the progress line if one is shown. */
void cli_progress_done(cli_common *c);

/* Human-readable byte count ("1.5 GiB") into buf. */
const char *cli_bytes(uint64_t n, char *buf, size_t len);

#endif
