/* cli.c: common flags, the getopt step, signals, the library's log handler
 * and the terminal progress line; diagnostics and exit codes are
 * cli_diag.c's. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

static al_cancel *signal_cancel;

static void on_signal(int sig)
{
	al_cancel_set(signal_cancel);
	/* A second signal ends the process the default way. */
	signal(sig, SIG_DFL);
}

void cli_info(const cli_common *c, const char *fmt, ...)
{
	char line[4096];
	va_list ap;
	int n;

	if (c != NULL && c->quiet)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		line[0] = '\0';
	cli_event(line);
}

void cli_common_init(cli_common *c)
{
	memset(c, 0, sizeof(*c));
	c->tls_verify = 1;
	cli_set_log_json(0); /* until this command's --log-format */
}

static int parse_bool(const char *s, int *out)
{
	if (strcmp(s, "true") == 0 || strcmp(s, "1") == 0 ||
	    strcmp(s, "yes") == 0) {
		*out = 1;
		return 0;
	}
	if (strcmp(s, "false") == 0 || strcmp(s, "0") == 0 ||
	    strcmp(s, "no") == 0) {
		*out = 0;
		return 0;
	}
	return -1;
}

int cli_common_option(cli_common *c, int opt, const char *arg)
{
	switch (opt) {
	case OPT_AUTHFILE:
		c->authfile = arg;
		return 1;
	case OPT_TLS_VERIFY:
		if (parse_bool(arg, &c->tls_verify) < 0) {
			cli_error("--tls-verify takes true or false, not '%s'",
			          arg);
			return -1;
		}
		return 1;
	case OPT_CA_FILE:
		c->ca_file = arg;
		return 1;
	case OPT_CERT_DIR: {
		struct stat st;

		/* refused now: containers/image would skip a missing one, and
		 * a typo would then fall back to the system CAs unnoticed */
		if (stat(arg, &st) != 0 || !S_ISDIR(st.st_mode)) {
			cli_error("--cert-dir '%s' is not a directory", arg);
			return -1;
		}
		c->cert_dir = arg;
		return 1;
	}
	case OPT_PROXY:
		c->proxy = arg;
		return 1;
	case OPT_PARALLEL: {
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(arg, &end, 10);
		if (*arg < '0' || *arg > '9' || *end != '\0' || errno != 0 ||
		    v < 1 || v > 64) {
			cli_error(
			    "--parallel takes a number from 1 to 64, not '%s'",
			    arg);
			return -1;
		}
		c->parallel = (unsigned)v;
		return 1;
	}
	case OPT_TIMEOUT:
		if (al_parse_duration(arg, &c->timeout_ms) < 0) {
			cli_error("--timeout: %s", al_error_message());
			return -1;
		}
		return 1;
	case OPT_LOG_FORMAT:
		if (strcmp(arg, "json") != 0 && strcmp(arg, "text") != 0) {
			cli_error("--log-format takes text or json, not '%s'",
			          arg);
			return -1;
		}
		c->log_json = strcmp(arg, "json") == 0;
		cli_set_log_json(c->log_json);
		return 1;
	case 'q':
		c->quiet = 1;
		return 1;
	case 'v':
		c->verbose = 1;
		return 1;
	default:
		return 0;
	}
}

/* Optimal string alignment distance (a transposition costs 1), capped:
 * small names only, so a fixed table serves. */
#define NEAR_MAX 40
static size_t osa_distance(const char *a, const char *b)
{
	size_t d[NEAR_MAX + 1][NEAR_MAX + 1];
	size_t la = strlen(a), lb = strlen(b), i, j;

	if (la > NEAR_MAX || lb > NEAR_MAX)
		return SIZE_MAX;
	for (i = 0; i <= la; i++)
		d[i][0] = i;
	for (j = 0; j <= lb; j++)
		d[0][j] = j;
	for (i = 1; i <= la; i++) {
		for (j = 1; j <= lb; j++) {
			size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
			size_t v = d[i - 1][j] + 1;

			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (d[i - 1][j - 1] + cost < v)
				v = d[i - 1][j - 1] + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	}
	return d[la][lb];
}

const char *cli_nearest_option(const char *name, const struct option *longopts)
{
	const char *best = NULL;
	size_t best_d = SIZE_MAX, limit, i;

	/* a third of the name, at least 1 and at most 3 edits: close enough
	 * to be a slip, far enough not to suggest nonsense */
	limit = strlen(name) / 3;
	if (limit < 1)
		limit = 1;
	if (limit > 3)
		limit = 3;
	for (i = 0; longopts[i].name != NULL; i++) {
		size_t d = osa_distance(name, longopts[i].name);

		if (d < best_d) {
			best_d = d;
			best = longopts[i].name;
		}
	}
	return best_d <= limit ? best : NULL;
}

/* The long option named exactly name (len bytes), or NULL. */
static const struct option *long_named(const struct option *longopts,
                                       const char *name, size_t len)
{
	size_t i;

	for (i = 0; longopts[i].name != NULL; i++)
		if (strlen(longopts[i].name) == len &&
		    strncmp(longopts[i].name, name, len) == 0)
			return &longopts[i];
	return NULL;
}

/* getopt_long said '?' or ':': say why, as a usage error of cmd. */
static void bad_option(const char *cmd, int opt, const char *arg,
                       const struct option *longopts)
{
	char name[64];
	const char *eq, *near;
	size_t len, i, nprefix = 0;

	if (arg == NULL || strncmp(arg, "--", 2) != 0 ||
	    (opt == '?' && optopt != 0 && strchr(arg, '=') == NULL)) {
		/* a short option */
		if (opt == ':')
			cli_usage_error(cmd, "option '-%c' needs a value",
			                optopt);
		else
			cli_usage_error(cmd, "unknown option '-%c'", optopt);
		return;
	}
	arg += 2;
	eq = strchr(arg, '=');
	len = eq != NULL ? (size_t)(eq - arg) : strlen(arg);
	snprintf(name, sizeof(name), "%.*s", (int)len, arg);
	if (opt == ':') {
		cli_usage_error(cmd, "option '--%s' needs a value", name);
		return;
	}
	if (long_named(longopts, arg, len) != NULL) {
		cli_usage_error(cmd, "option '--%s' takes no value", name);
		return;
	}
	for (i = 0; longopts[i].name != NULL; i++)
		if (strncmp(longopts[i].name, arg, len) == 0)
			nprefix++;
	if (nprefix > 1) {
		cli_usage_error(cmd, "option '--%s' is ambiguous", name);
		return;
	}
	near = cli_nearest_option(name, longopts);
	if (near != NULL)
		cli_usage_error(cmd,
		                "unknown option '--%s'; did you mean '--%s'?",
		                name, near);
	else
		cli_usage_error(cmd, "unknown option '--%s'", name);
}

int cli_getopt(cli_common *c, const char *cmd, int argc, char **argv,
               const char *shortopts, const struct option *longopts)
{
	char spec[64];
	int opt, r;

	/* -q and -v for every command; a leading ':' makes getopt tell a
	 * missing value (':') from an unknown option ('?'); we print both
	 * messages ourselves */
	if (snprintf(spec, sizeof(spec), ":qv%s", shortopts) >=
	    (int)sizeof(spec))
		return CLI_OPT_USAGE;
	opterr = 0;
	for (;;) {
		opt = getopt_long(argc, argv, spec, longopts, NULL);
		if (opt == -1)
			return -1;
		if (opt == '?' || opt == ':') {
			bad_option(cmd, opt,
			           optind > 0 && optind <= argc
			               ? argv[optind - 1]
			               : NULL,
			           longopts);
			return CLI_OPT_USAGE;
		}
		r = cli_common_option(c, opt, optarg);
		if (r < 0) {
			cli_usage_hint(cmd);
			return CLI_OPT_USAGE;
		}
		if (r == 0)
			return opt;
	}
}

static void log_handler(al_log_level level, const char *raw, void *ud)
{
	static const char *names[] = {"error", "warning", "info", "debug"};
	cli_common *c = ud;
	char msg[8192];

	/* al_log escapes already; a message that reaches here another way is
	 * escaped too (escaping twice changes nothing). */
	al_str_escape(msg, sizeof(msg), raw, strlen(raw));
	cli_progress_done(c);
	if (c->log_json) {
		cli_log_line(stderr, names[level], msg, NULL);
		return;
	}
	if (level == AL_LOG_INFO)
		fprintf(stderr, "%s\n", msg);
	else
		fprintf(stderr, "airlock: %s: %s\n", names[level], msg);
}

void cli_log_start(cli_common *c)
{
	const char *ci = getenv("CI");

	al_log_set_handler(log_handler, c);
	al_log_set_level(c->verbose ? AL_LOG_DEBUG
	                            : (c->quiet ? AL_LOG_WARN : AL_LOG_INFO));
	c->progress_tty = !c->quiet && !c->log_json && isatty(STDERR_FILENO) &&
	                  (ci == NULL || ci[0] == '\0');
}

int cli_common_start(cli_common *c)
{
	struct sigaction sa;
	int rc;

	c->started = 1;
	cli_log_start(c);
	if (al_cancel_new(&c->cancel) < 0) {
		cli_error("out of memory");
		return EXIT_RUNTIME;
	}
	signal_cancel = c->cancel;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (c->offline)
		return EXIT_OK;
	if ((rc = al_http_global_init()) < 0)
		return cli_fail(rc, "cannot initialise libcurl");
	if ((rc = al_auth_new(&c->auth, c->authfile)) < 0)
		return cli_fail(rc, "cannot load credentials");
	if ((rc = al_regconf_load(&c->regconf, NULL)) < 0)
		return cli_fail(rc, "cannot read the registries configuration");
	return EXIT_OK;
}

void cli_common_finish(cli_common *c)
{
	if (!c->started)
		return;
	cli_progress_done(c);
	al_auth_free(c->auth);
	c->auth = NULL;
	al_regconf_free(c->regconf);
	c->regconf = NULL;
	signal_cancel = NULL;
	al_cancel_free(c->cancel);
	c->cancel = NULL;
	if (!c->offline)
		al_http_global_cleanup();
}

void cli_registry_opts(cli_common *c, al_registry_opts *ro)
{
	*ro = (al_registry_opts)AL_REGISTRY_OPTS_INIT;
	ro->auth = c->auth;
	ro->regconf = c->regconf;
	ro->http.ca_file = c->ca_file;
	ro->cert_dir = c->cert_dir;
	ro->http.proxy = c->proxy;
	if (c->timeout_ms > 0) {
		/* --timeout D (docs/http.md "Bounds"): a connection that does
		 * not connect, answer or move data for D fails; a document
		 * (manifest, token, tag page) or an error body that is not
		 * complete within D fails; a blob that keeps flowing at the
		 * minimum rate is never cut. Two retries: a request for a
		 * document ends within 3 x D. */
		ro->http.connect_timeout_ms = c->timeout_ms;
		ro->http.low_speed_time_ms = c->timeout_ms;
		ro->http.doc_timeout_ms = c->timeout_ms;
		ro->http.max_retries = 2;
	}
	ro->http.cancel = c->cancel;
}

void cli_transfer_opts(cli_common *c, al_transfer_opts *o)
{
	*o = (al_transfer_opts)AL_TRANSFER_OPTS_INIT;
	o->parallel = c->parallel;
	o->all_insecure = !c->tls_verify;
	cli_registry_opts(c, &o->registry);
	o->cancel = c->cancel;
	o->progress = cli_progress;
	o->progress_ud = c;
}

const char *cli_bytes(uint64_t n, char *buf, size_t len)
{
	static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	double v = (double)n;
	int u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%llu B", (unsigned long long)n);
	else
		snprintf(buf, len, "%.1f %s", v, units[u]);
	return buf;
}

void cli_progress(const al_progress_info *info, void *ud)
{
	cli_common *c = ud;
	char done[32], total[32], rate[32];
	double secs = (double)info->elapsed_ms / 1000.0;
	uint64_t bps =
	    secs > 0.2 ? (uint64_t)((double)info->bytes_done / secs) : 0;

	if (!c->progress_tty)
		return;
	cli_bytes(info->bytes_done, done, sizeof(done));
	cli_bytes(info->bytes_total, total, sizeof(total));
	cli_bytes(bps, rate, sizeof(rate));
	fprintf(stderr, "\r\033[K%-9s %llu/%llu  %s / %s  %s/s",
	        info->phase != NULL ? info->phase : "",
	        (unsigned long long)info->items_done,
	        (unsigned long long)info->items_total, done, total, rate);
	if (bps > 0 && info->bytes_total > info->bytes_done) {
		uint64_t eta = (info->bytes_total - info->bytes_done) / bps;
		fprintf(stderr, "  ETA %llu:%02llu",
		        (unsigned long long)(eta / 60),
		        (unsigned long long)(eta % 60));
	}
	fflush(stderr);
	c->progress_shown = 1;
}

void cli_progress_done(cli_common *c)
{
	if (c != NULL && c->progress_shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		c->progress_shown = 0;
	}
}
