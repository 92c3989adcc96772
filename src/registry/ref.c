/* ref.c: docker image references (distribution/reference grammar, docker.io
 * normalisation) and transports. */
#include <stdlib.h>
#include <string.h>

#include "airlock/ref.h"
#include "airlock/buf.h"
#include "airlock/digest.h"
#include "airlock/error.h"

/* distribution/reference: NameTotalLengthMax. */
#define REF_NAME_MAX 255
/* Name, ':', 128-char tag, '@', longest digest, with room to spare. */
#define REF_INPUT_MAX 1024
#define REF_TAG_MAX 128

static int is_lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static int is_alnum(char c)
{
	return is_lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

static int is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	       (c >= 'A' && c <= 'F');
}

int al_ref_path_component_valid(const char *s, size_t n)
{
	size_t i = 0;

	if (n == 0 || !is_lower_alnum(s[0]))
		return 0;
	while (i < n) {
		while (i < n && is_lower_alnum(s[i]))
			i++;
		if (i == n)
			return 1;
		/* A separator, which must be followed by an alphanumeric. */
		if (s[i] == '.') {
			i++;
		} else if (s[i] == '_') {
			i++;
			if (i < n && s[i] == '_')
				i++;
		} else if (s[i] == '-') {
			while (i < n && s[i] == '-')
				i++;
		} else {
			return 0;
		}
		if (i == n || !is_lower_alnum(s[i]))
			return 0;
	}
	return 1;
}

/* [a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9] */
static int domain_component_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
		return 0;
	for (i = 1; i + 1 < n; i++) {
		if (!is_alnum(s[i]) && s[i] != '-')
			return 0;
	}
	return 1;
}

/*
 * host[:port] where host is domain-component('.'domain-component)* or an
 * IPv6 address in brackets, port is digits.
 */
static int domain_ok(const char *s, size_t n)
{
	size_t hostlen = n, i, start;
	const char *colon = NULL;
	int ncolons = 0;

	if (n == 0)
		return 0;
	if (s[0] == '[') {
		const char *close = memchr(s, ']', n);

		if (close == NULL)
			return 0;
		hostlen = (size_t)(close - s) + 1;
		if (hostlen < 4)
			return 0;
		for (i = 1; i + 1 < hostlen; i++) {
			if (s[i] == ':')
				ncolons++;
			else if (!is_hex(s[i]) && s[i] != '.')
				return 0;
		}
		if (ncolons < 2)
			return 0;
		if (hostlen < n && s[hostlen] != ':')
			return 0;
	} else {
		colon = memchr(s, ':', n);
		if (colon != NULL)
			hostlen = (size_t)(colon - s);
		start = 0;
		for (i = 0; i <= hostlen; i++) {
			if (i == hostlen || s[i] == '.') {
				if (!domain_component_ok(s + start, i - start))
					return 0;
				start = i + 1;
			}
		}
	}
	if (hostlen < n) {
		/* ":port" */
		if (hostlen + 1 == n)
			return 0;
		for (i = hostlen + 1; i < n; i++) {
			if (s[i] < '0' || s[i] > '9')
				return 0;
		}
	}
	return 1;
}

/* [\w][\w.-]{0,127} */
static int tag_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > REF_TAG_MAX)
		return 0;
	if (!is_alnum(s[0]) && s[0] != '_')
		return 0;
	for (i = 1; i < n; i++) {
		if (!is_alnum(s[i]) && s[i] != '_' && s[i] != '.' &&
		    s[i] != '-')
			return 0;
	}
	return 1;
}

static int has_upper(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (s[i] >= 'A' && s[i] <= 'Z')
			return 1;
	}
	return 0;
}

/*
 * Parse s (NUL-terminated) into out: see ref.h. The message always quotes
 * the whole input so the user can find it.
 */
int al_ref_parse(al_ref *out, const char *s)
{
	al_ref r = {NULL, NULL, NULL, NULL};
	al_digest d;
	const char *at, *end, *slash, *lastslash, *colon, *path;
	size_t len, namelen, domlen, pathlen, i, start;
	const char *dom;
	int rc;

	if (s == NULL || s[0] == '\0')
		return al_error_set(AL_EPARSE, "invalid reference '': empty");
	len = strnlen(s, REF_INPUT_MAX + 1);
	if (len > REF_INPUT_MAX)
		return al_error_set(
		    AL_EPARSE,
		    "invalid reference '%.64s...': longer than %d bytes", s,
		    REF_INPUT_MAX);

	at = strchr(s, '@');
	end = at != NULL ? at : s + len;
	if (at != NULL) {
		rc = al_digest_parse(&d, at + 1, len - (size_t)(at + 1 - s));
		if (rc < 0)
			return al_error_set(
			    AL_EPARSE,
			    "invalid reference '%s': bad digest '%s' (want "
			    "sha256:<64 hex> or sha512:<128 hex>)",
			    s, at + 1);
	}
	/* The tag is after the last ':' that follows the last '/'. */
	lastslash = NULL;
	for (i = 0; s + i < end; i++) {
		if (s[i] == '/')
			lastslash = s + i;
	}
	colon = NULL;
	for (i = lastslash != NULL ? (size_t)(lastslash - s) : 0; s + i < end;
	     i++) {
		if (s[i] == ':')
			colon = s + i;
	}
	if (colon != NULL) {
		size_t taglen = (size_t)(end - colon - 1);

		if (!tag_ok(colon + 1, taglen))
			return al_error_set(
			    AL_EPARSE,
			    "invalid reference '%s': bad tag '%.*s' (want "
			    "[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})",
			    s, (int)(taglen > 200 ? 200 : taglen), colon + 1);
		end = colon;
	}
	namelen = (size_t)(end - s);
	if (namelen == 0)
		return al_error_set(AL_EPARSE,
		                    "invalid reference '%s': empty name", s);
	if (namelen > REF_NAME_MAX)
		return al_error_set(
		    AL_EPARSE,
		    "invalid reference '%s': name longer than %d characters", s,
		    REF_NAME_MAX);

	/* Domain: the first component when it looks like a host. */
	slash = memchr(s, '/', namelen);
	dom = "docker.io";
	domlen = strlen(dom);
	path = s;
	if (slash != NULL) {
		size_t flen = (size_t)(slash - s);

		if (memchr(s, '.', flen) != NULL ||
		    memchr(s, ':', flen) != NULL ||
		    (flen == 9 && memcmp(s, "localhost", 9) == 0) ||
		    has_upper(s, flen)) {
			if (!domain_ok(s, flen))
				return al_error_set(AL_EPARSE,
				                    "invalid reference '%s': "
				                    "bad registry '%.*s'",
				                    s, (int)flen, s);
			dom = s;
			domlen = flen;
			path = slash + 1;
		}
	}
	pathlen = (size_t)(end - path);
	if (has_upper(path, pathlen))
		return al_error_set(
		    AL_EPARSE,
		    "invalid reference '%s': repository name must be lowercase",
		    s);
	start = 0;
	for (i = 0; i <= pathlen; i++) {
		if (i == pathlen || path[i] == '/') {
			if (!al_ref_path_component_valid(path + start,
			                                 i - start))
				return al_error_set(
				    AL_EPARSE,
				    "invalid reference '%s': bad repository "
				    "component '%.*s'",
				    s, (int)(i - start), path + start);
			start = i + 1;
		}
	}

	if (domlen == 15 && memcmp(dom, "index.docker.io", 15) == 0) {
		dom = "docker.io";
		domlen = 9;
	}
	r.registry = al_strndup(dom, domlen);
	if (domlen == 9 && memcmp(dom, "docker.io", 9) == 0 &&
	    memchr(path, '/', pathlen) == NULL)
		r.repository = al_sprintf("library/%.*s", (int)pathlen, path);
	else
		r.repository = al_strndup(path, pathlen);
	if (colon != NULL)
		r.tag =
		    al_strndup(colon + 1, (size_t)((at != NULL ? at : s + len) -
		                                   colon - 1));
	if (at != NULL)
		r.digest = al_strdup(at + 1);
	if (r.registry == NULL || r.repository == NULL ||
	    (colon != NULL && r.tag == NULL) ||
	    (at != NULL && r.digest == NULL)) {
		al_ref_clear(&r);
		return al_error_set(AL_ENOMEM,
		                    "out of memory parsing reference '%s'", s);
	}
	/* As distribution does, the bound holds for the normalised name, so
	 * al_ref_string() output always parses again. */
	if (strlen(r.registry) + 1 + strlen(r.repository) > REF_NAME_MAX) {
		al_ref_clear(&r);
		return al_error_set(
		    AL_EPARSE,
		    "invalid reference '%s': name longer than %d characters", s,
		    REF_NAME_MAX);
	}
	*out = r;
	return 0;
}

/* Free the strings of r and zero it; r may be NULL. */
void al_ref_clear(al_ref *r)
{
	if (r == NULL)
		return;
	free(r->registry);
	free(r->repository);
	free(r->tag);
	free(r->digest);
	memset(r, 0, sizeof(*r));
}

/* Deep copy in into out (written only on success). AL_ENOMEM. */
int al_ref_copy(al_ref *out, const al_ref *in)
{
	al_ref r = {NULL, NULL, NULL, NULL};

	r.registry = al_strdup(in->registry);
	r.repository = al_strdup(in->repository);
	r.tag = al_strdup(in->tag);
	r.digest = al_strdup(in->digest);
	if ((in->registry != NULL && r.registry == NULL) ||
	    (in->repository != NULL && r.repository == NULL) ||
	    (in->tag != NULL && r.tag == NULL) ||
	    (in->digest != NULL && r.digest == NULL)) {
		al_ref_clear(&r);
		return al_error_set(AL_ENOMEM,
		                    "out of memory copying a reference");
	}
	*out = r;
	return 0;
}

/* "registry/repository[:tag][@digest]"; caller frees; NULL on ENOMEM. */
char *al_ref_string(const al_ref *r)
{
	return al_sprintf(
	    "%s/%s%s%s%s%s", r->registry, r->repository,
	    r->tag != NULL ? ":" : "", r->tag != NULL ? r->tag : "",
	    r->digest != NULL ? "@" : "", r->digest != NULL ? r->digest : "");
}

/* "registry/repository"; caller frees; NULL on ENOMEM. */
char *al_ref_name(const al_ref *r)
{
	return al_sprintf("%s/%s", r->registry, r->repository);
}

/*
 * Parse a transport-qualified location (see ref.h). "oci:" with an empty
 * path and unknown "xxx://" transports are AL_EPARSE; an empty name after
 * the path ("oci:/dir:") means no name.
 */
int al_imgref_parse(al_imgref *out, const char *s)
{
	al_imgref r;
	const char *p, *colon;
	int rc;

	memset(&r, 0, sizeof(r));
	if (s == NULL || s[0] == '\0')
		return al_error_set(AL_EPARSE,
		                    "invalid image location '': empty");
	if (strnlen(s, REF_INPUT_MAX * 4 + 1) > REF_INPUT_MAX * 4)
		return al_error_set(
		    AL_EPARSE, "invalid image location '%.64s...': too long",
		    s);
	if (al_str_startswith(s, "docker://")) {
		rc = al_ref_parse(&r.ref, s + 9);
		if (rc < 0)
			return rc;
		r.transport = AL_TRANSPORT_DOCKER;
		*out = r;
		return 0;
	}
	if (al_str_startswith(s, "oci:")) {
		p = s + 4;
		colon = strchr(p, ':');
		if (colon == p || p[0] == '\0')
			return al_error_set(AL_EPARSE,
			                    "invalid image location '%s': "
			                    "empty OCI layout path",
			                    s);
		r.transport = AL_TRANSPORT_OCI;
		if (colon == NULL) {
			r.path = al_strdup(p);
			if (r.path == NULL)
				return al_error_set(
				    AL_ENOMEM, "out of memory parsing '%s'", s);
		} else {
			r.path = al_strndup(p, (size_t)(colon - p));
			if (colon[1] != '\0')
				r.name = al_strdup(colon + 1);
			if (r.path == NULL ||
			    (colon[1] != '\0' && r.name == NULL)) {
				al_imgref_clear(&r);
				return al_error_set(
				    AL_ENOMEM, "out of memory parsing '%s'", s);
			}
		}
		*out = r;
		return 0;
	}
	p = strstr(s, "://");
	if (p != NULL)
		return al_error_set(AL_EPARSE,
		                    "invalid image location '%s': unsupported "
		                    "transport '%.*s' (want docker:// or oci:)",
		                    s, (int)(p - s), s);
	rc = al_ref_parse(&r.ref, s);
	if (rc < 0)
		return rc;
	r.transport = AL_TRANSPORT_DOCKER;
	*out = r;
	return 0;
}

/* Free the strings of r and zero it; r may be NULL. */
void al_imgref_clear(al_imgref *r)
{
	if (r == NULL)
		return;
	al_ref_clear(&r->ref);
	free(r->path);
	free(r->name);
	memset(r, 0, sizeof(*r));
}

/* "docker://REF" or "oci:PATH[:NAME]"; caller frees; NULL on failure. */
char *al_imgref_string(const al_imgref *r)
{
	char *ref, *s;

	if (r->transport == AL_TRANSPORT_OCI)
		return al_sprintf("oci:%s%s%s", r->path,
		                  r->name != NULL ? ":" : "",
		                  r->name != NULL ? r->name : "");
	if (r->transport != AL_TRANSPORT_DOCKER)
		return NULL;
	ref = al_ref_string(&r->ref);
	if (ref == NULL)
		return NULL;
	s = al_sprintf("docker://%s", ref);
	free(ref);
	return s;
}
