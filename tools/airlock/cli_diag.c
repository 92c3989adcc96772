/* cli_diag.c: the bottom of the command line (cli_diag.h): every
 * diagnostic line on stderr, text or JSON, escaped and with advice; the
 * exit-code map; failures many images share said once. */
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "airlock.h"
#include "cli_diag.h"
#include "cli_hint.h"

/* --log-format=json seen: every stderr line is a JSON object */
static int log_json_mode;
/* the --json document's sink for errors and warnings (cli_json.c) */
static cli_note_fn note_sink;

/* Every diagnostic goes through here: the text (error messages carry
 * registry answers, tar entry names, references) is printed escaped, so a
 * hostile server can neither forge an "airlock:" line nor drive the
 * terminal. */
static void vmsg(const char *kind, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

static void vmsg(const char *kind, const char *fmt, va_list ap)
{
	char msg[4096], safe[4 * sizeof(msg)];
	int n;

	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	if (n < 0)
		msg[0] = '\0';
	al_str_escape(safe, sizeof(safe), msg, strlen(msg));
	cli_hint_append(safe, sizeof(safe)); /* cli_hint.c: what to do */
	if (note_sink != NULL)
		note_sink(kind, safe); /* the --json document (cli_json.c) */
	if (log_json_mode)
		cli_log_line(stderr, kind, safe, NULL);
	else
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
	if (log_json_mode)
		cli_log_line(stderr, "info", safe, NULL);
	else
		fprintf(stderr, "%s\n", safe);
}

int cli_log_json(void)
{
	return log_json_mode;
}

void cli_set_log_json(int on)
{
	log_json_mode = on;
}

void cli_set_note(cli_note_fn fn)
{
	note_sink = fn;
}

/* The exit-code map: one row per status whose exit differs from 3. */
static const struct exit_row {
	int status;
	unsigned char work;  /* the command's work */
	unsigned char input; /* a configuration file the user named */
} exit_map[] = {
    {AL_OK, EXIT_OK, EXIT_OK},
    {AL_EVERIFY, EXIT_VERIFY, EXIT_VERIFY},
    {AL_EUNSUPPORTED, EXIT_VERIFY, EXIT_USAGE},
    {AL_EINVAL, EXIT_RUNTIME, EXIT_USAGE},
    {AL_EPARSE, EXIT_RUNTIME, EXIT_USAGE},
    {AL_ENOTFOUND, EXIT_RUNTIME, EXIT_USAGE},
    {AL_ELIMIT, EXIT_RUNTIME, EXIT_USAGE},
};

static const struct exit_row *exit_row_of(int rc)
{
	size_t i;

	for (i = 0; i < sizeof(exit_map) / sizeof(exit_map[0]); i++)
		if (exit_map[i].status == rc)
			return &exit_map[i];
	return NULL;
}

int cli_exit_code(int rc)
{
	const struct exit_row *r = exit_row_of(rc);

	return r != NULL ? r->work : EXIT_RUNTIME;
}

int cli_input_exit_code(int rc)
{
	const struct exit_row *r = exit_row_of(rc);

	return r != NULL ? r->input : EXIT_RUNTIME;
}

static int exit_rank(int code)
{
	switch (code) {
	case EXIT_OK:
		return 0;
	case EXIT_RUNTIME:
		return 1;
	case EXIT_USAGE:
		return 2;
	case EXIT_VERIFY:
		return 3;
	default:
		return 1;
	}
}

int cli_worst(int a, int b)
{
	return exit_rank(b) > exit_rank(a) ? b : a;
}

static void fail_message(const char *fmt, va_list ap)
    __attribute__((format(printf, 1, 0)));

static void fail_message(const char *fmt, va_list ap)
{
	char ctx[1024];
	const char *msg;
	int n;

	n = vsnprintf(ctx, sizeof(ctx), fmt, ap);
	if (n < 0)
		ctx[0] = '\0';
	msg = cli_join_subject(ctx, al_error_message());
	if (msg[0] != '\0')
		cli_error("%s: %s", ctx, msg);
	else
		cli_error("%s", ctx);
}

int cli_fail(int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fail_message(fmt, ap);
	va_end(ap);
	return cli_exit_code(rc);
}

int cli_input_fail(int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fail_message(fmt, ap);
	va_end(ap);
	return cli_input_exit_code(rc);
}

void cli_usage_hint(const char *cmd)
{
	char hint[128];

	snprintf(hint, sizeof(hint), "try 'airlock %s --help'", cmd);
	if (log_json_mode)
		cli_log_line(stderr, "info", hint, NULL);
	else
		fprintf(stderr, "%s\n", hint);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("error", fmt, ap);
	va_end(ap);
	cli_usage_hint(cmd);
	return EXIT_USAGE;
}

json_t *cli_str_json(const char *s)
{
	json_t *v;
	char *safe;
	size_t n, cap;

	if (s == NULL)
		return json_null();
	n = strlen(s);
	v = json_stringn(s, n);
	if (v != NULL)
		return v;
	/* not UTF-8: the escaped form (ASCII escapes for what is invalid) */
	if (n > (SIZE_MAX - 1) / 4)
		return NULL;
	cap = 4 * n + 1;
	if ((safe = malloc(cap)) == NULL)
		return NULL;
	al_str_escape(safe, cap, s, n);
	v = json_string(safe);
	free(safe);
	return v;
}

/* What the transport said, without the image and the URL: the text after
 * "attempt(s): " (http.c's retry wrapper), else NULL (nothing shared). */
static const char *reason_of(const char *msg)
{
	const char *p = strstr(msg, "attempt(s): ");

	return p != NULL ? p + strlen("attempt(s): ") : NULL;
}

size_t cli_report_failures(const char *const *msgs, size_t n)
{
	unsigned char *done;
	size_t i, j, lines = 0;

	if (n == 0)
		return 0;
	if ((done = calloc(n, 1)) == NULL) {
		for (i = 0; i < n; i++)
			cli_error("%s", msgs[i]);
		return n;
	}
	for (i = 0; i < n; i++) {
		const char *r = reason_of(msgs[i]);
		size_t same = 1;

		if (done[i])
			continue;
		done[i] = 1;
		for (j = i + 1; r != NULL && j < n; j++) {
			const char *rj = reason_of(msgs[j]);

			if (!done[j] && rj != NULL && strcmp(r, rj) == 0) {
				done[j] = 1;
				same++;
			}
		}
		if (same == 1)
			cli_error("%s", msgs[i]);
		else
			cli_error("%zu images failed the same way: %s (the "
			          "first: %s)",
			          same, r, msgs[i]);
		lines++;
	}
	free(done);
	return lines;
}

/* "YYYY-MM-DDTHH:MM:SS.mmmZ" of the wall clock into out. */
static void wall_time(char out[32])
{
	uint64_t ms = al_clock_wall_ms();
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	char base[24];

	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm) == 0) {
		snprintf(out, 32, "1970-01-01T00:00:00.000Z");
		return;
	}
	snprintf(out, 32, "%s.%03uZ", base, (unsigned)(ms % 1000));
}

void cli_log_line(FILE *f, const char *level, const char *msg, const char *hint)
{
	char now[32];
	json_t *o = json_object();
	char *text = NULL;

	wall_time(now);
	if (o != NULL &&
	    json_object_set_new(o, "level", json_string(level)) == 0 &&
	    json_object_set_new(o, "msg", cli_str_json(msg)) == 0 &&
	    json_object_set_new(o, "time", json_string(now)) == 0 &&
	    (hint == NULL ||
	     json_object_set_new(o, "hint", cli_str_json(hint)) == 0))
		text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (text == NULL) {
		fprintf(f, "{\"level\":\"error\",\"msg\":\"out of memory\"}\n");
		return;
	}
	fprintf(f, "%s\n", text);
	free(text);
}
