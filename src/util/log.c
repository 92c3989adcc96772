/* log.c: the process-wide log handler and level. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "airlock/buf.h"
#include "airlock/log.h"

static al_log_fn log_fn;
static void *log_ud;
static al_log_level log_level = AL_LOG_INFO;

void al_log_set_handler(al_log_fn fn, void *ud)
{
	log_fn = fn;
	log_ud = ud;
}

void al_log_set_level(al_log_level level)
{
	log_level = level;
}

al_log_level al_log_get_level(void)
{
	return log_level;
}

void al_log(al_log_level level, const char *fmt, ...)
{
	char msg[2048], safe[4 * sizeof(msg)];
	va_list ap;
	int n;

	if (log_fn == NULL || level > log_level)
		return;
	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	/* Messages carry server-supplied text (tar entry names, registry
	 * errors, references): a handler never sees a control character or
	 * an escape sequence that could forge a line or drive a terminal. */
	al_str_escape(safe, sizeof(safe), msg, strlen(msg));
	log_fn(level, safe, log_ud);
}
