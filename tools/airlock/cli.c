/* cli.c: common flags, diagnostics, exit codes, signals and the terminal
 * progress line. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static al_cancel *signal_cancel;

static void on_signal(int sig)
{
	al_cancel_set(signal_cancel);
	/* A second signal ends the process the default way. */
	signal(sig, SIG_DFL);
}

/* Every diagnostic goes through here: the text (error messages carry
 * registry answers, tar entry names, references) is printed escaped, so a
 * hostile server can neither forge an "airlock:" line nor drive the
 * terminal. */
static void vmsg(const char *kind, const char *fmt, va_list ap)
{
	char msg[4096], safe[4 * sizeof(msg)];
	int n;

	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	if (n < 0)
		msg[0] = '\0';
	al_str_escape(safe, sizeof(safe), msg, strlen(msg));
	fprintf(stderr, "airlock: %s: %s\n", kind, safe);
}

void cli_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("error", fmt, ap);
	va_end(ap);
}

void cli_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("warning", fmt, ap);
	va_end(ap);
}

void cli_event(const char *line)
{
	char safe[8192];

	al_str_escape(safe, sizeof(safe), line, strlen(line));
	fprintf(stderr, "%s\n", safe);
}

int cli_exit_code(int rc)
{
	switch (rc) {
	case AL_OK:
		return EXIT_OK;
	case AL_EVERIFY:
		return EXIT_VERIFY;
	case AL_EINVAL:
		return EXIT_USAGE;
	default:
		return EXIT_RUNTIME;
	}
}

int cli_fail(int rc, const char *fmt, ...)
{
	char ctx[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(ctx, sizeof(ctx), fmt, ap);
	va_end(ap);
	if (n < 0)
		ctx[0] = '\0';
	if (al_error_message()[0] != '\0')
		cli_error("%s: %s", ctx, al_error_message());
	else
		cli_error("%s", ctx);
	return cli_exit_code(rc);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("error", fmt, ap);
	va_end(ap);
	fprintf(stderr, "try 'airlock %s --help'\n", cmd);
	return EXIT_USAGE;
}

void cli_common_init(cli_common *c)
{
	memset(c, 0, sizeof(*c));
	c->tls_verify = 1;
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
		if (strcmp(arg, "json") == 0)
			c->log_json = 1;
		else if (strcmp(arg, "text") == 0)
			c->log_json = 0;
		else {
			cli_error("--log-format takes text or json, not '%s'",
			          arg);
			return -1;
		}
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

static void json_escape_to(FILE *f, const char *s)
{
	for (; *s != '\0'; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
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
		fprintf(stderr, "{\"level\":\"%s\",\"msg\":\"", names[level]);
		json_escape_to(stderr, msg);
		fputs("\"}\n", stderr);
		return;
	}
	if (level == AL_LOG_INFO)
		fprintf(stderr, "%s\n", msg);
	else
		fprintf(stderr, "airlock: %s: %s\n", names[level], msg);
}

int cli_common_start(cli_common *c)
{
	struct sigaction sa;
	const char *ci = getenv("CI");
	int rc;

	c->started = 1;
	al_log_set_handler(log_handler, c);
	al_log_set_level(c->verbose ? AL_LOG_DEBUG
	                            : (c->quiet ? AL_LOG_WARN : AL_LOG_INFO));
	c->progress_tty = !c->quiet && !c->log_json && isatty(STDERR_FILENO) &&
	                  (ci == NULL || ci[0] == '\0');
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
	if ((rc = al_http_global_init()) < 0)
		return cli_fail(rc, "cannot initialise libcurl");
	if ((rc = al_auth_new(&c->auth, c->authfile)) < 0)
		return cli_fail(rc, "cannot load credentials");
	return EXIT_OK;
}

void cli_common_finish(cli_common *c)
{
	if (!c->started)
		return;
	cli_progress_done(c);
	al_auth_free(c->auth);
	c->auth = NULL;
	signal_cancel = NULL;
	al_cancel_free(c->cancel);
	c->cancel = NULL;
	al_http_global_cleanup();
}

void cli_transfer_opts(cli_common *c, al_transfer_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->parallel = c->parallel;
	o->all_insecure = !c->tls_verify;
	o->registry.auth = c->auth;
	o->registry.http.ca_file = c->ca_file;
	o->registry.http.proxy = c->proxy;
	if (c->timeout_ms > 0) {
		/* --timeout D (docs/http.md "Bounds"): a connection that does
		 * not connect, answer or move data for D fails; a document
		 * (manifest, token, tag page) or an error body that is not
		 * complete within D fails; a blob that keeps flowing at the
		 * minimum rate is never cut. Two retries: a request for a
		 * document ends within 3 x D. */
		o->registry.http.connect_timeout_ms = c->timeout_ms;
		o->registry.http.low_speed_time_ms = c->timeout_ms;
		o->registry.http.doc_timeout_ms = c->timeout_ms;
		o->registry.http.max_retries = 2;
	}
	o->registry.http.cancel = c->cancel;
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
