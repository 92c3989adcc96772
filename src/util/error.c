/* error.c: status names and the thread-local error message. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <openssl/err.h>

#include "airlock/error.h"
#include "error_int.h"

#define AL_ERRMSG_MAX 1024

static _Thread_local char errmsg[AL_ERRMSG_MAX];

/*
 * The out-of-memory message is preallocated and only pointed at, never
 * formatted or copied (libgit2's git_error_set_oom: reporting that memory
 * ran out must not need memory). While oommsg is set it is the message;
 * every other al_error_* call clears it.
 */
static const char oom_text[] = "out of memory";
static _Thread_local const char *oommsg;

static const char *current(void)
{
	return oommsg != NULL ? oommsg : errmsg;
}

/*
 * Format into a temporary, then copy: an argument may be
 * al_error_message() itself (al_error_set(rc, "x: %s",
 * al_error_message())), and formatting a buffer into itself is undefined
 * (glibc reads what it has just written: "x: x: ...").
 */
static void set_message(const char *fmt, va_list ap)
{
	char tmp[AL_ERRMSG_MAX];
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);

	if (n < 0)
		tmp[0] = '\0';
	memcpy(errmsg, tmp, sizeof(errmsg));
	oommsg = NULL;
}

static void append_message(const char *text)
{
	size_t len = strlen(errmsg);
	int n;

	if (len >= sizeof(errmsg) - 1)
		return;
	n = snprintf(errmsg + len, sizeof(errmsg) - len, ": %s", text);
	if (n < 0)
		errmsg[len] = '\0';
}

int al_error_set(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	set_message(fmt, ap);
	va_end(ap);
	return code;
}

int al_error_oom(void)
{
	oommsg = oom_text;
	return AL_ENOMEM;
}

int al_error_errno(int err, const char *fmt, ...)
{
	va_list ap;
	int code;

	va_start(ap, fmt);
	set_message(fmt, ap);
	va_end(ap);
	append_message(strerror(err));
	switch (err) {
	case ENOENT:
		code = AL_ENOTFOUND;
		break;
	case ENOMEM:
		code = AL_ENOMEM;
		break;
	case EEXIST:
		code = AL_EEXIST;
		break;
	case EINTR:
		code = AL_ECANCELED;
		break;
	default:
		code = AL_EIO;
		break;
	}
	return code;
}

int al_error_openssl(int code, const char *fmt, ...)
{
	char text[256];
	unsigned long e;
	va_list ap;

	va_start(ap, fmt);
	set_message(fmt, ap);
	va_end(ap);
	e = ERR_get_error();
	if (e != 0 && !ERR_SYSTEM_ERROR(e) &&
	    ERR_reason_error_string(e) == NULL) {
		/* no words for it: the program did not load OpenSSL's error
		 * strings (tools/airlock/cli_crypto.c), or the code is unknown;
		 * 'openssl errstr' has them (a system error is worded from
		 * errno below, strings or not) */
		(void)snprintf(text, sizeof(text),
		               "OpenSSL error %08lX ('openssl errstr %08lX')",
		               e, e);
		append_message(text);
	} else if (e != 0) {
		ERR_error_string_n(e, text, sizeof(text));
		append_message(text);
	}
	ERR_clear_error();
	return code;
}

int al_error_wrap(int code, const char *fmt, ...)
{
	char prefix[AL_ERRMSG_MAX];
	char old[AL_ERRMSG_MAX];
	va_list ap;
	int n;

	const char *o;
	size_t plen;

	va_start(ap, fmt);
	n = vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	if (n < 0)
		return code;
	/* the message may be the preallocated one, shorter than old */
	if (snprintf(old, sizeof(old), "%s", current()) < 0)
		old[0] = '\0';
	/* one separator between the two, whatever either brings: a prefix
	 * written "'%s': " or a message starting ": " never gives ": :" */
	plen = strlen(prefix);
	while (plen > 0 && (prefix[plen - 1] == ' ' || prefix[plen - 1] == ':'))
		prefix[--plen] = '\0';
	for (o = old; *o == ':' || *o == ' '; o++)
		;
	/* the message already names the subject first ("'X' is not a
	 * store"): the prefix would say it twice */
	if (plen > 0 && strncmp(o, prefix, plen) == 0)
		return code;
	oommsg = NULL;
	if (o[0] != '\0' && plen > 0)
		n = snprintf(errmsg, sizeof(errmsg), "%s: %s", prefix, o);
	else if (o[0] != '\0')
		n = snprintf(errmsg, sizeof(errmsg), "%s", o);
	else
		n = snprintf(errmsg, sizeof(errmsg), "%s", prefix);
	if (n < 0)
		errmsg[0] = '\0';
	return code;
}

const char *al_error_message(void)
{
	return current();
}

void al_error_clear(void)
{
	errmsg[0] = '\0';
	oommsg = NULL;
}

const char *al_status_name(int code)
{
	switch (code) {
	case AL_OK:
		return "AL_OK";
	case AL_EINVAL:
		return "AL_EINVAL";
	case AL_ENOMEM:
		return "AL_ENOMEM";
	case AL_ENOTFOUND:
		return "AL_ENOTFOUND";
	case AL_EIO:
		return "AL_EIO";
	case AL_ENET:
		return "AL_ENET";
	case AL_ETIMEOUT:
		return "AL_ETIMEOUT";
	case AL_ECANCELED:
		return "AL_ECANCELED";
	case AL_EPARSE:
		return "AL_EPARSE";
	case AL_ELIMIT:
		return "AL_ELIMIT";
	case AL_EVERIFY:
		return "AL_EVERIFY";
	case AL_EAUTH:
		return "AL_EAUTH";
	case AL_EEXIST:
		return "AL_EEXIST";
	case AL_ELOCKED:
		return "AL_ELOCKED";
	case AL_EUNSUPPORTED:
		return "AL_EUNSUPPORTED";
	case AL_EPROTO:
		return "AL_EPROTO";
	default:
		return "AL_E?";
	}
}

int al_opts_version_check(const char *name, unsigned version,
                          unsigned supported)
{
	if (version <= supported)
		return 0;
	return al_error_set(AL_EINVAL,
	                    "%s version %u is newer than this library's (%u)",
	                    name, version, supported);
}
