/* cli_hint.c: advice appended to known failures, other tools' habits
 * refused with the airlock way; the text only (cli_diag.c prints). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "airlock.h"
#include "cli_hint.h"

static const struct hint {
	const char *needle;
	const char *advice;
} hints[] = {
    /* OpenSSL reading an HTTP answer as a TLS record */
    {"wrong version number",
     "the registry answered in plain HTTP: use --tls-verify=false for HTTP "
     "registries"},
    {"packet length too long",
     "the registry answered in plain HTTP: use --tls-verify=false for HTTP "
     "registries"},
    {"http request",
     "the registry answered in plain HTTP: use --tls-verify=false for HTTP "
     "registries"},
    {"unable to get local issuer certificate",
     "its CA is not trusted: give --ca-file CA.pem, or put the CA in "
     "/etc/containers/certs.d/HOST[:PORT]/ca.crt"},
    {"self-signed certificate",
     "its CA is not trusted: give --ca-file CA.pem, or put the CA in "
     "/etc/containers/certs.d/HOST[:PORT]/ca.crt"},
    {"self signed certificate",
     "its CA is not trusted: give --ca-file CA.pem, or put the CA in "
     "/etc/containers/certs.d/HOST[:PORT]/ca.crt"},
    {"unable to get issuer certificate",
     "its CA is not trusted: give --ca-file CA.pem, or put the CA in "
     "/etc/containers/certs.d/HOST[:PORT]/ca.crt"},
    {"Could not resolve host", "check the host name (and --proxy / no_proxy)"},
};

const char *cli_hint_for(const char *msg)
{
	size_t i;

	if (msg == NULL)
		return NULL;
	for (i = 0; i < sizeof(hints) / sizeof(hints[0]); i++)
		if (strstr(msg, hints[i].needle) != NULL &&
		    strstr(msg, hints[i].advice) == NULL)
			return hints[i].advice;
	return NULL;
}

void cli_hint_append(char *msg, size_t cap)
{
	const char *h = cli_hint_for(msg);
	size_t n = strlen(msg);

	if (h != NULL && n + 2 + strlen(h) < cap)
		snprintf(msg + n, cap - n, "; %s", h);
}

const char *cli_join_subject(char *ctx, const char *msg)
{
	size_t n = strlen(ctx), qlen;
	const char *q;

	while (n > 0 && (ctx[n - 1] == ' ' || ctx[n - 1] == ':'))
		ctx[--n] = '\0';
	while (*msg == ':' || *msg == ' ')
		msg++;
	/* the quoted subject at the end of ctx: '...' */
	if (n < 2 || ctx[n - 1] != '\'')
		return msg;
	q = ctx + n - 2;
	while (q > ctx && *q != '\'')
		q--;
	if (*q != '\'')
		return msg;
	qlen = (size_t)(ctx + n - q);
	if (strncmp(msg, q, qlen) != 0)
		return msg;
	if (strncmp(msg + qlen, " is ", 4) == 0)
		return msg + qlen + 4;
	if (strncmp(msg + qlen, ": ", 2) == 0)
		return msg + qlen + 2;
	return msg;
}

const char *cli_mirror_arg_refusal(const char *arg, char *buf, size_t cap)
{
	const char *p, *last;

	if (al_str_startswith(arg, "file://")) {
		snprintf(buf, cap,
		         "'%s' is an oc-mirror destination: airlock mirror "
		         "fills the store named by --store DIR (then 'airlock "
		         "pack' writes it to media)",
		         arg);
		return buf;
	}
	if (!al_str_startswith(arg, "docker://"))
		return NULL;
	p = arg + strlen("docker://");
	last = strrchr(p, '/');
	last = last != NULL ? last + 1 : p;
	/* a release names a tag or a digest; a bare registry path is a
	 * destination */
	if (strchr(last, '@') != NULL || strchr(last, ':') != NULL)
		if (strchr(p, '/') != NULL)
			return NULL;
	snprintf(buf, cap,
	         "'%s' names no release (no tag or digest): to push into a "
	         "registry as well, give it as the destination: 'airlock "
	         "mirror --store DIR --to %s ...' (mirror to mirror through "
	         "the store; or mirror, then 'airlock push --store DIR %s')",
	         arg, arg, arg);
	return buf;
}

int cli_ref_is_bare(const char *ref)
{
	const char *p = ref, *slash;
	size_t n;

	if (al_str_startswith(p, "docker://"))
		p += strlen("docker://");
	else if (al_str_startswith(p, "oci:") || strstr(p, "://") != NULL)
		return 0;
	slash = strchr(p, '/');
	if (slash == NULL)
		return 1;
	n = (size_t)(slash - p);
	/* docker's rule for a registry host: a '.' or ':' in the first
	 * component, or localhost */
	if (memchr(p, '.', n) != NULL || memchr(p, ':', n) != NULL)
		return 0;
	if (n == strlen("localhost") && strncmp(p, "localhost", n) == 0)
		return 0;
	return 1;
}
