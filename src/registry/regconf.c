/* regconf.c: containers-registries.conf(5) v2 in a strict TOML subset,
 * drop-in merging, and pull sources (mirrors, prefixes, blocked). */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/log.h"
#include "airlock/regconf.h"

#define REGCONF_FILE_MAX (1024 * 1024)
#define REGCONF_DEPTH_MAX 8
#define REGCONF_DROPINS_MAX 1024

enum { PULL_ALL = 0, PULL_DIGEST = 1, PULL_TAG = 2 };

typedef struct rc_endpoint {
	char *location;
	int insecure;
	int pull; /* PULL_*: mirrors only */
	int pull_set;
} rc_endpoint;

typedef struct rc_registry {
	char *prefix;
	rc_endpoint ep;
	rc_endpoint *mirrors;
	size_t nmirrors;
	int blocked;
	int by_digest_only; /* mirror-by-digest-only */
	char *origin;       /* "file:line" of its [[registry]] */
} rc_registry;

struct al_regconf {
	rc_registry *regs;
	size_t nregs;
	char **search; /* unqualified-search-registries */
	size_t nsearch;
	int search_set;
	char *search_origin;
	al_buf files; /* "A, B" */
};

/* ---- the TOML subset ---- */

typedef enum { TV_STR, TV_BOOL, TV_ARR, TV_TAB } tv_type;

typedef struct tv {
	tv_type t;
	char *s;
	int b;
	struct tv *v; /* TV_ARR items, TV_TAB values */
	char **k;     /* TV_TAB keys */
	size_t n;
} tv;

static void tv_clear(tv *x)
{
	size_t i;

	if (x == NULL)
		return;
	free(x->s);
	for (i = 0; i < x->n; i++) {
		tv_clear(&x->v[i]);
		if (x->k != NULL)
			free(x->k[i]);
	}
	free(x->v);
	free(x->k);
	memset(x, 0, sizeof(*x));
}

typedef enum { CTX_TOP, CTX_REGISTRY, CTX_MIRROR, CTX_ALIASES } ctx_kind;

typedef struct parser {
	const char *name;
	const char *p, *end;
	int line;
	al_regconf *c;
	ctx_kind ctx;
	char **seen; /* keys of the current table (duplicates refused) */
	size_t nseen;
} parser;

static int perr(const parser *ps, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* AL_EPARSE "'FILE': line N: ..." */
static int perr(const parser *ps, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	if (vsnprintf(msg, sizeof(msg), fmt, ap) < 0)
		msg[0] = '\0';
	va_end(ap);
	return al_error_set(AL_EPARSE, "'%s': line %d: %s", ps->name, ps->line,
	                    msg);
}

static void skip_ws(parser *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t'))
		ps->p++;
}

static void skip_comment(parser *ps)
{
	if (ps->p < ps->end && *ps->p == '#')
		while (ps->p < ps->end && *ps->p != '\n')
			ps->p++;
}

/* Whitespace, newlines and comments (inside arrays, between lines). */
static void skip_all(parser *ps)
{
	for (;;) {
		skip_ws(ps);
		skip_comment(ps);
		if (ps->p < ps->end && *ps->p == '\r' && ps->p + 1 < ps->end &&
		    ps->p[1] == '\n')
			ps->p++;
		if (ps->p < ps->end && *ps->p == '\n') {
			ps->p++;
			ps->line++;
			continue;
		}
		return;
	}
}

/* After a value or header: blanks, a comment, then a newline or EOF. */
static int end_of_line(parser *ps)
{
	skip_ws(ps);
	skip_comment(ps);
	if (ps->p < ps->end && *ps->p == '\r')
		ps->p++;
	if (ps->p >= ps->end)
		return 0;
	if (*ps->p != '\n')
		return perr(ps, "unexpected text after the value");
	ps->p++;
	ps->line++;
	return 0;
}

static int put_utf8(al_buf *b, unsigned long cp)
{
	char u[4];
	size_t n;

	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | (cp >> 6));
		u[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | (cp >> 12));
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | (cp >> 18));
		u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	return al_buf_append(b, u, n);
}

/* A basic ("...") or literal ('...') one-line string. */
static int parse_string(parser *ps, char **out)
{
	al_buf b = AL_BUF_INIT(64 * 1024);
	char q = *ps->p;
	int rc = 0;

	if (ps->end - ps->p >= 3 && ps->p[1] == q && ps->p[2] == q)
		return perr(ps, "multi-line strings are not supported");
	ps->p++;
	for (;;) {
		unsigned char ch;

		if (ps->p >= ps->end || *ps->p == '\n') {
			rc = perr(ps, "unterminated string");
			goto out;
		}
		ch = (unsigned char)*ps->p;
		if (ch == (unsigned char)q) {
			ps->p++;
			break;
		}
		if ((ch < 0x20 && ch != '\t') || ch == 0x7f) {
			rc = perr(ps, "control character in a string");
			goto out;
		}
		if (q == '"' && ch == '\\') {
			char e;
			unsigned long cp = 0;
			int len = 0, i;

			ps->p++;
			e = ps->p < ps->end ? *ps->p : '\0';
			ps->p++;
			switch (e) {
			case '"':
			case '\\':
				rc = al_buf_append(&b, &e, 1);
				break;
			case 'b':
				rc = al_buf_append(&b, "\b", 1);
				break;
			case 't':
				rc = al_buf_append(&b, "\t", 1);
				break;
			case 'n':
				rc = al_buf_append(&b, "\n", 1);
				break;
			case 'f':
				rc = al_buf_append(&b, "\f", 1);
				break;
			case 'r':
				rc = al_buf_append(&b, "\r", 1);
				break;
			case 'u':
				len = 4;
				break;
			case 'U':
				len = 8;
				break;
			default:
				rc = perr(ps, "unknown escape in a string");
				goto out;
			}
			for (i = 0; i < len; i++, ps->p++) {
				char h = ps->p < ps->end ? *ps->p : '\0';
				int d = h >= '0' && h <= '9'   ? h - '0'
				        : h >= 'a' && h <= 'f' ? h - 'a' + 10
				        : h >= 'A' && h <= 'F' ? h - 'A' + 10
				                               : -1;
				if (d < 0) {
					rc = perr(ps, "bad \\u escape");
					goto out;
				}
				cp = cp * 16 + (unsigned long)d;
			}
			if (len > 0) {
				if (cp > 0x10ffff ||
				    (cp >= 0xd800 && cp <= 0xdfff) || cp == 0) {
					rc = perr(ps, "bad \\u escape");
					goto out;
				}
				rc = put_utf8(&b, cp);
			}
			if (rc < 0) {
				rc = perr(ps, "string too long");
				goto out;
			}
			continue;
		}
		if (al_buf_append(&b, ps->p, 1) < 0) {
			rc = perr(ps, "string too long");
			goto out;
		}
		ps->p++;
	}
	*out = al_buf_detach(&b, NULL);
	if (*out == NULL)
		rc = al_error_set(AL_ENOMEM, "out of memory");
out:
	al_buf_free(&b);
	return rc;
}

static int is_bare(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9') || ch == '_' || ch == '-';
}

/* A bare or quoted key; a dotted key is refused. */
static int parse_key(parser *ps, char **out)
{
	const char *s = ps->p;
	int rc;

	if (ps->p < ps->end && (*ps->p == '"' || *ps->p == '\'')) {
		if ((rc = parse_string(ps, out)) < 0)
			return rc;
	} else {
		while (ps->p < ps->end && is_bare(*ps->p))
			ps->p++;
		if (ps->p == s)
			return perr(ps, "expected a key");
		if ((*out = al_strndup(s, (size_t)(ps->p - s))) == NULL)
			return al_error_set(AL_ENOMEM, "out of memory");
	}
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == '.') {
		free(*out);
		*out = NULL;
		return perr(ps, "dotted keys are not supported");
	}
	return 0;
}

static int tv_push(tv *arr, tv *item, char *key)
{
	tv *nv;
	char **nk;

	nv = realloc(arr->v, (arr->n + 1) * sizeof(*nv));
	if (nv == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	arr->v = nv;
	if (arr->t == TV_TAB) {
		nk = realloc(arr->k, (arr->n + 1) * sizeof(*nk));
		if (nk == NULL)
			return al_error_set(AL_ENOMEM, "out of memory");
		arr->k = nk;
		arr->k[arr->n] = key;
	}
	arr->v[arr->n++] = *item;
	memset(item, 0, sizeof(*item));
	return 0;
}

static int parse_value(parser *ps, tv *out, int depth)
{
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (depth > REGCONF_DEPTH_MAX)
		return perr(ps, "values nested too deeply");
	if (ps->p >= ps->end || *ps->p == '\n')
		return perr(ps, "missing value");
	if (*ps->p == '"' || *ps->p == '\'') {
		out->t = TV_STR;
		return parse_string(ps, &out->s);
	}
	if (ps->end - ps->p >= 4 && memcmp(ps->p, "true", 4) == 0 &&
	    (ps->end - ps->p == 4 || !is_bare(ps->p[4]))) {
		out->t = TV_BOOL;
		out->b = 1;
		ps->p += 4;
		return 0;
	}
	if (ps->end - ps->p >= 5 && memcmp(ps->p, "false", 5) == 0 &&
	    (ps->end - ps->p == 5 || !is_bare(ps->p[5]))) {
		out->t = TV_BOOL;
		ps->p += 5;
		return 0;
	}
	if (*ps->p == '[') {
		out->t = TV_ARR;
		ps->p++;
		for (;;) {
			tv item;

			skip_all(ps);
			if (ps->p < ps->end && *ps->p == ']') {
				ps->p++;
				return 0;
			}
			if ((rc = parse_value(ps, &item, depth + 1)) < 0 ||
			    (rc = tv_push(out, &item, NULL)) < 0) {
				tv_clear(&item);
				goto fail;
			}
			skip_all(ps);
			if (ps->p < ps->end && *ps->p == ',') {
				ps->p++;
				continue;
			}
			if (ps->p < ps->end && *ps->p == ']') {
				ps->p++;
				return 0;
			}
			rc = perr(ps, "expected ',' or ']' in an array");
			goto fail;
		}
	}
	if (*ps->p == '{') {
		out->t = TV_TAB;
		ps->p++;
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == '}') {
			ps->p++;
			return 0;
		}
		for (;;) {
			char *key = NULL;
			tv item;
			size_t i;

			skip_ws(ps);
			if ((rc = parse_key(ps, &key)) < 0)
				goto fail;
			for (i = 0; i < out->n; i++)
				if (strcmp(out->k[i], key) == 0) {
					rc =
					    perr(ps, "duplicate key '%s'", key);
					free(key);
					goto fail;
				}
			if (ps->p >= ps->end || *ps->p != '=') {
				free(key);
				rc = perr(ps, "expected '=' after a key");
				goto fail;
			}
			ps->p++;
			skip_ws(ps);
			if ((rc = parse_value(ps, &item, depth + 1)) < 0) {
				free(key);
				goto fail;
			}
			if ((rc = tv_push(out, &item, key)) < 0) {
				free(key);
				tv_clear(&item);
				goto fail;
			}
			skip_ws(ps);
			if (ps->p < ps->end && *ps->p == ',') {
				ps->p++;
				continue;
			}
			if (ps->p < ps->end && *ps->p == '}') {
				ps->p++;
				return 0;
			}
			rc = perr(ps, "expected ',' or '}' in an inline table");
			goto fail;
		}
	}
	return perr(ps, "unsupported value (registries.conf takes strings, "
	                "booleans, arrays and inline tables)");
fail:
	tv_clear(out);
	return rc;
}

/* ---- the registries.conf schema ---- */

static int want_str(parser *ps, const char *key, const tv *v, char **dst)
{
	if (v->t != TV_STR)
		return perr(ps, "'%s' must be a string", key);
	free(*dst);
	*dst = al_strdup(v->s);
	return *dst != NULL ? 0 : al_error_set(AL_ENOMEM, "out of memory");
}

static int want_bool(parser *ps, const char *key, const tv *v, int *dst)
{
	if (v->t != TV_BOOL)
		return perr(ps, "'%s' must be true or false", key);
	*dst = v->b;
	return 0;
}

static int set_pull(parser *ps, const tv *v, rc_endpoint *ep)
{
	if (v->t != TV_STR)
		return perr(ps, "'pull-from-mirror' must be a string");
	if (strcmp(v->s, "all") == 0 || v->s[0] == '\0')
		ep->pull = PULL_ALL;
	else if (strcmp(v->s, "digest-only") == 0)
		ep->pull = PULL_DIGEST;
	else if (strcmp(v->s, "tag-only") == 0)
		ep->pull = PULL_TAG;
	else
		return perr(ps,
		            "unsupported pull-from-mirror value '%s' (all, "
		            "digest-only or tag-only)",
		            v->s);
	ep->pull_set = v->s[0] != '\0';
	return 0;
}

static void unknown_key(const parser *ps, const char *where, const char *key)
{
	/* containers/image decodes what it knows and ignores the rest */
	al_log_warn("'%s': line %d: unknown key '%s'%s%s: ignored", ps->name,
	            ps->line, key, where[0] != '\0' ? " in " : "", where);
}

static int mirror_key(parser *ps, rc_endpoint *m, const char *key, const tv *v)
{
	if (strcmp(key, "location") == 0)
		return want_str(ps, key, v, &m->location);
	if (strcmp(key, "insecure") == 0)
		return want_bool(ps, key, v, &m->insecure);
	if (strcmp(key, "pull-from-mirror") == 0)
		return set_pull(ps, v, m);
	unknown_key(ps, "[[registry.mirror]]", key);
	return 0;
}

static rc_registry *last_reg(parser *ps)
{
	return &ps->c->regs[ps->c->nregs - 1];
}

static int add_mirror(rc_registry *r)
{
	rc_endpoint *n = realloc(r->mirrors, (r->nmirrors + 1) * sizeof(*n));

	if (n == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	r->mirrors = n;
	memset(&r->mirrors[r->nmirrors++], 0, sizeof(*n));
	return 0;
}

static int registry_key(parser *ps, const char *key, const tv *v)
{
	rc_registry *r = last_reg(ps);
	size_t i;
	int rc;

	if (strcmp(key, "location") == 0)
		return want_str(ps, key, v, &r->ep.location);
	if (strcmp(key, "prefix") == 0)
		return want_str(ps, key, v, &r->prefix);
	if (strcmp(key, "insecure") == 0)
		return want_bool(ps, key, v, &r->ep.insecure);
	if (strcmp(key, "blocked") == 0)
		return want_bool(ps, key, v, &r->blocked);
	if (strcmp(key, "mirror-by-digest-only") == 0)
		return want_bool(ps, key, v, &r->by_digest_only);
	if (strcmp(key, "pull-from-mirror") == 0) {
		if ((rc = set_pull(ps, v, &r->ep)) < 0)
			return rc;
		if (r->ep.pull_set)
			return perr(ps,
			            "pull-from-mirror must not be set for a "
			            "non-mirror registry (set it in "
			            "[[registry.mirror]])");
		return 0;
	}
	if (strcmp(key, "mirror") == 0) {
		/* mirror = [{location = "..."}, ...] */
		if (v->t != TV_ARR)
			return perr(ps, "'mirror' must be an array of tables");
		for (i = 0; i < v->n; i++) {
			const tv *t = &v->v[i];
			size_t j;

			if (t->t != TV_TAB)
				return perr(
				    ps, "'mirror' must be an array of tables");
			if ((rc = add_mirror(r)) < 0)
				return rc;
			for (j = 0; j < t->n; j++)
				if ((rc = mirror_key(
				         ps, &r->mirrors[r->nmirrors - 1],
				         t->k[j], &t->v[j])) < 0)
					return rc;
		}
		return 0;
	}
	unknown_key(ps, "[[registry]]", key);
	return 0;
}

static int top_key(parser *ps, const char *key, const tv *v)
{
	al_regconf *c = ps->c;
	size_t i;

	if (strcmp(key, "unqualified-search-registries") == 0) {
		if (v->t != TV_ARR)
			return perr(ps, "'%s' must be an array of strings",
			            key);
		c->search = calloc(v->n + 1, sizeof(char *));
		if (c->search == NULL)
			return al_error_set(AL_ENOMEM, "out of memory");
		for (i = 0; i < v->n; i++) {
			if (v->v[i].t != TV_STR)
				return perr(ps,
				            "'%s' must be an array of strings",
				            key);
			if ((c->search[c->nsearch++] = al_strdup(v->v[i].s)) ==
			    NULL)
				return al_error_set(AL_ENOMEM, "out of memory");
		}
		c->search_set = 1;
		return 0;
	}
	if (strcmp(key, "short-name-mode") == 0) {
		if (v->t != TV_STR || (strcmp(v->s, "enforcing") != 0 &&
		                       strcmp(v->s, "permissive") != 0 &&
		                       strcmp(v->s, "disabled") != 0))
			return perr(ps, "short-name-mode must be enforcing, "
			                "permissive or disabled");
		return 0; /* short names are never resolved for releases */
	}
	if (strcmp(key, "credential-helpers") == 0) {
		if (v->t != TV_ARR)
			return perr(ps, "'%s' must be an array of strings",
			            key);
		for (i = 0; i < v->n; i++)
			if (v->v[i].t != TV_STR ||
			    strcmp(v->v[i].s, "containers-auth.json") != 0)
				al_log_warn(
				    "'%s': line %d: credential-helpers "
				    "other than containers-auth.json are "
				    "not used by airlock (the auth files "
				    "and their credHelpers are)",
				    ps->name, ps->line);
		return 0;
	}
	if (strcmp(key, "additional-layer-store-auth-helper") == 0)
		return 0;
	if (strcmp(key, "registry") == 0 && v->t == TV_ARR)
		return perr(
		    ps, "write [[registry]] tables, not 'registry = [...]'");
	unknown_key(ps, "", key);
	return 0;
}

static void seen_clear(parser *ps)
{
	size_t i;

	for (i = 0; i < ps->nseen; i++)
		free(ps->seen[i]);
	free(ps->seen);
	ps->seen = NULL;
	ps->nseen = 0;
}

static int seen_add(parser *ps, char *key)
{
	char **n;
	size_t i;

	for (i = 0; i < ps->nseen; i++)
		if (strcmp(ps->seen[i], key) == 0) {
			int rc = perr(ps, "duplicate key '%s'", key);
			free(key);
			return rc;
		}
	n = realloc(ps->seen, (ps->nseen + 1) * sizeof(*n));
	if (n == NULL) {
		free(key);
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	ps->seen = n;
	ps->seen[ps->nseen++] = key;
	return 0;
}

static int add_registry(parser *ps)
{
	al_regconf *c = ps->c;
	rc_registry *n = realloc(c->regs, (c->nregs + 1) * sizeof(*n));

	if (n == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	c->regs = n;
	memset(&c->regs[c->nregs], 0, sizeof(*n));
	c->regs[c->nregs].origin = al_sprintf("%s:%d", ps->name, ps->line);
	c->nregs++;
	if (c->regs[c->nregs - 1].origin == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	return 0;
}

static int parse_header(parser *ps)
{
	int aot = ps->end - ps->p >= 2 && ps->p[1] == '[';
	const char *s;
	char name[64];
	size_t n;

	ps->p += aot ? 2 : 1;
	skip_ws(ps);
	s = ps->p;
	while (ps->p < ps->end && (is_bare(*ps->p) || *ps->p == '.'))
		ps->p++;
	n = (size_t)(ps->p - s);
	skip_ws(ps);
	if (n == 0 || n >= sizeof(name) || ps->p >= ps->end || *ps->p != ']' ||
	    (aot && (ps->end - ps->p < 2 || ps->p[1] != ']')))
		return perr(ps, "table headers must be [name] or [[name]] with "
		                "bare names");
	ps->p += aot ? 2 : 1;
	memcpy(name, s, n);
	name[n] = '\0';
	seen_clear(ps);
	if (aot && strcmp(name, "registry") == 0) {
		ps->ctx = CTX_REGISTRY;
		return add_registry(ps);
	}
	if (aot && strcmp(name, "registry.mirror") == 0) {
		if (ps->c->nregs == 0)
			return perr(ps, "[[registry.mirror]] before any "
			                "[[registry]]");
		ps->ctx = CTX_MIRROR;
		return add_mirror(last_reg(ps));
	}
	if (!aot && strcmp(name, "aliases") == 0) {
		ps->ctx = CTX_ALIASES;
		return 0;
	}
	if (strncmp(name, "registries", 10) == 0 &&
	    (name[10] == '\0' || name[10] == '.'))
		return perr(ps,
		            "[%s] is the version 1 format, which airlock does "
		            "not read: write [[registry]] tables "
		            "(containers-registries.conf(5))",
		            name);
	return perr(ps, "unsupported table [%s]", name);
}

static int parse_text(parser *ps)
{
	int rc = 0;

	ps->line = 1;
	for (;;) {
		char *key = NULL, *kcopy;
		tv v;

		skip_all(ps);
		if (ps->p >= ps->end)
			return 0;
		if (*ps->p == '[') {
			if ((rc = parse_header(ps)) < 0 ||
			    (rc = end_of_line(ps)) < 0)
				return rc;
			continue;
		}
		if ((rc = parse_key(ps, &key)) < 0)
			return rc;
		if (ps->p >= ps->end || *ps->p != '=') {
			free(key);
			return perr(ps, "expected '=' after a key");
		}
		ps->p++;
		skip_ws(ps);
		if ((kcopy = al_strdup(key)) == NULL) {
			free(key);
			return al_error_set(AL_ENOMEM, "out of memory");
		}
		if ((rc = seen_add(ps, kcopy)) < 0) {
			free(key);
			return rc;
		}
		if ((rc = parse_value(ps, &v, 0)) < 0) {
			free(key);
			return rc;
		}
		switch (ps->ctx) {
		case CTX_TOP:
			rc = top_key(ps, key, &v);
			break;
		case CTX_REGISTRY:
			rc = registry_key(ps, key, &v);
			break;
		case CTX_MIRROR: {
			rc_registry *r = last_reg(ps);

			rc = mirror_key(ps, &r->mirrors[r->nmirrors - 1], key,
			                &v);
			break;
		}
		case CTX_ALIASES:
			if (v.t != TV_STR)
				rc = perr(ps, "alias '%s' must be a string",
				          key);
			break;
		}
		tv_clear(&v);
		free(key);
		if (rc < 0 || (rc = end_of_line(ps)) < 0)
			return rc;
	}
}

/* ---- postProcessRegistries ---- */

/* parseLocation: no URI scheme, trailing '/' dropped. */
static int clean_location(const char *file, const char *origin, char **loc)
{
	size_t n;

	if (*loc == NULL)
		return 0;
	if (al_str_startswith(*loc, "http://") ||
	    al_str_startswith(*loc, "https://"))
		return al_error_set(AL_EPARSE,
		                    "'%s': invalid location '%s': URI schemes "
		                    "are not supported",
		                    origin != NULL ? origin : file, *loc);
	n = strlen(*loc);
	while (n > 0 && (*loc)[n - 1] == '/')
		(*loc)[--n] = '\0';
	return 0;
}

static void registry_clear(rc_registry *r)
{
	size_t i;

	free(r->prefix);
	free(r->ep.location);
	for (i = 0; i < r->nmirrors; i++)
		free(r->mirrors[i].location);
	free(r->mirrors);
	free(r->origin);
	memset(r, 0, sizeof(*r));
}

static int cmp_reg(const void *a, const void *b)
{
	return strcmp(((const rc_registry *)a)->prefix,
	              ((const rc_registry *)b)->prefix);
}

static int post_process(al_regconf *c, const char *file)
{
	size_t i, j, out;
	int rc;

	for (i = 0; i < c->nregs; i++) {
		rc_registry *r = &c->regs[i];
		const char *o = r->origin;

		if ((rc = clean_location(file, o, &r->ep.location)) < 0)
			return rc;
		if (r->ep.location == NULL &&
		    (r->ep.location = al_strdup("")) == NULL)
			return al_error_set(AL_ENOMEM, "out of memory");
		if (r->prefix == NULL) {
			if (r->ep.location[0] == '\0')
				return al_error_set(
				    AL_EPARSE,
				    "'%s': [[registry]] without "
				    "location or prefix",
				    o);
			if ((r->prefix = al_strdup(r->ep.location)) == NULL)
				return al_error_set(AL_ENOMEM, "out of memory");
		} else {
			if ((rc = clean_location(file, o, &r->prefix)) < 0)
				return rc;
			if (!al_str_startswith(r->prefix, "*.") &&
			    r->ep.location[0] == '\0')
				return al_error_set(
				    AL_EPARSE,
				    "'%s': location is unset and prefix '%s' "
				    "is not of the form *.example.com",
				    o, r->prefix);
		}
		if (al_str_startswith(r->prefix, "*.") &&
		    strpbrk(r->prefix, "/@:") != NULL)
			return al_error_set(
			    AL_EPARSE,
			    "'%s': wildcard prefix '%s' must be of "
			    "the form *.example.com",
			    o, r->prefix);
		for (j = 0; j < r->nmirrors; j++) {
			rc_endpoint *m = &r->mirrors[j];

			if ((rc = clean_location(file, o, &m->location)) < 0)
				return rc;
			if (m->location == NULL || m->location[0] == '\0')
				return al_error_set(
				    AL_EPARSE,
				    "'%s': a mirror of '%s' has no "
				    "location",
				    o, r->prefix);
			if (r->by_digest_only && m->pull_set)
				return al_error_set(
				    AL_EPARSE,
				    "'%s': mirror-by-digest-only for '%s' and "
				    "pull-from-mirror for its mirror '%s' "
				    "cannot be set together",
				    o, r->prefix, m->location);
		}
	}
	/* one location, one insecure and one blocked setting */
	for (i = 0; i < c->nregs; i++)
		for (j = i + 1; j < c->nregs; j++) {
			const rc_registry *a = &c->regs[i], *b = &c->regs[j];
			const char *ka = a->ep.location[0] != '\0'
			                     ? a->ep.location
			                     : a->prefix;
			const char *kb = b->ep.location[0] != '\0'
			                     ? b->ep.location
			                     : b->prefix;

			if (strcmp(ka, kb) != 0)
				continue;
			if (a->ep.insecure != b->ep.insecure ||
			    a->blocked != b->blocked)
				return al_error_set(
				    AL_EPARSE,
				    "'%s': registry '%s' is defined again "
				    "(first at %s) with a conflicting '%s' "
				    "setting",
				    b->origin, ka, a->origin,
				    a->ep.insecure != b->ep.insecure
				        ? "insecure"
				        : "blocked");
		}
	/* the first entry of a prefix wins; sorted by prefix */
	for (i = 0, out = 0; i < c->nregs; i++) {
		int dup = 0;

		for (j = 0; j < out && !dup; j++)
			dup = strcmp(c->regs[j].prefix, c->regs[i].prefix) == 0;
		if (dup) {
			registry_clear(&c->regs[i]);
			continue;
		}
		if (out != i) {
			c->regs[out] = c->regs[i];
			memset(&c->regs[i], 0, sizeof(c->regs[i]));
		}
		out++;
	}
	c->nregs = out;
	if (c->nregs > 1)
		qsort(c->regs, c->nregs, sizeof(*c->regs), cmp_reg);
	for (i = 0; i < c->nsearch; i++) {
		char **s = &c->search[i];
		const char *p;

		if ((rc = clean_location(file, NULL, s)) < 0)
			return rc;
		for (p = *s; *p != '\0'; p++)
			if (!(is_bare(*p) || *p == '.' || *p == ':' ||
			      *p == '[' || *p == ']'))
				break;
		if ((*s)[0] == '\0' || *p != '\0')
			return al_error_set(
			    AL_EPARSE,
			    "'%s': invalid "
			    "unqualified-search-registries entry "
			    "'%s'",
			    file, *s);
	}
	if (c->search_set && (c->search_origin = al_strdup(file)) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	return 0;
}

/* ---- loading ---- */

static int regconf_alloc(al_regconf **out)
{
	al_regconf *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	al_buf_init(&c->files, 64 * 1024);
	*out = c;
	return 0;
}

static void search_clear(al_regconf *c)
{
	size_t i;

	for (i = 0; i < c->nsearch; i++)
		free(c->search[i]);
	free(c->search);
	free(c->search_origin);
	c->search = NULL;
	c->nsearch = 0;
	c->search_origin = NULL;
	c->search_set = 0;
}

void al_regconf_free(al_regconf *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i < c->nregs; i++)
		registry_clear(&c->regs[i]);
	free(c->regs);
	search_clear(c);
	al_buf_free(&c->files);
	free(c);
}

int al_regconf_parse(al_regconf **out, const char *name, const char *text,
                     size_t n)
{
	al_regconf *c = NULL;
	parser ps;
	int rc;

	if ((rc = regconf_alloc(&c)) < 0)
		return rc;
	memset(&ps, 0, sizeof(ps));
	ps.name = name != NULL ? name : "registries.conf";
	ps.p = text != NULL ? text : "";
	ps.end = ps.p + (text != NULL ? n : 0);
	ps.c = c;
	ps.ctx = CTX_TOP;
	if (memchr(ps.p, '\0', (size_t)(ps.end - ps.p)) != NULL)
		rc = al_error_set(AL_EPARSE, "'%s': contains a NUL byte",
		                  ps.name);
	else
		rc = parse_text(&ps);
	seen_clear(&ps);
	if (rc == 0)
		rc = post_process(c, ps.name);
	if (rc == 0 && al_buf_puts(&c->files, ps.name) < 0)
		rc = al_error_set(AL_ENOMEM, "out of memory");
	if (rc < 0) {
		al_regconf_free(c);
		return rc;
	}
	*out = c;
	return 0;
}

static int parse_file(al_regconf **out, const char *path)
{
	al_buf data = AL_BUF_INIT(REGCONF_FILE_MAX);
	int rc;

	rc = al_fs_read_file(path, &data);
	if (rc == AL_ELIMIT)
		rc = al_error_set(AL_ELIMIT, "'%s' is larger than %d bytes",
		                  path, REGCONF_FILE_MAX);
	if (rc == 0)
		rc = al_regconf_parse(out, path, (const char *)data.ptr,
		                      data.len);
	al_buf_free(&data);
	return rc;
}

/* updateWithConfigurationFrom: registries replaced by prefix (kept sorted),
 * the search list replaced when the drop-in sets one. */
static int merge(al_regconf *c, al_regconf *d)
{
	size_t i, j;
	rc_registry *n;

	for (i = 0; i < d->nregs; i++) {
		for (j = 0; j < c->nregs; j++)
			if (strcmp(c->regs[j].prefix, d->regs[i].prefix) == 0)
				break;
		if (j < c->nregs) {
			registry_clear(&c->regs[j]);
			c->regs[j] = d->regs[i];
		} else {
			n = realloc(c->regs, (c->nregs + 1) * sizeof(*n));
			if (n == NULL)
				return al_error_set(AL_ENOMEM, "out of memory");
			c->regs = n;
			c->regs[c->nregs++] = d->regs[i];
		}
		memset(&d->regs[i], 0, sizeof(d->regs[i]));
	}
	d->nregs = 0;
	if (c->nregs > 1)
		qsort(c->regs, c->nregs, sizeof(*c->regs), cmp_reg);
	if (d->search_set) {
		search_clear(c);
		c->search = d->search;
		c->nsearch = d->nsearch;
		c->search_origin = d->search_origin;
		c->search_set = 1;
		d->search = NULL;
		d->nsearch = 0;
		d->search_origin = NULL;
	}
	if (al_buf_printf(&c->files, "%s%s", c->files.len > 0 ? ", " : "",
	                  al_buf_cstr(&d->files)) < 0)
		return al_error_set(AL_ENOMEM, "out of memory");
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every "*.conf" of dir, in name order, merged into c. */
static int merge_dir(al_regconf *c, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL, **g;
	size_t n = 0, i;
	int rc = 0;

	if (d == NULL) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		return al_error_set(AL_EIO, "cannot read '%s': %s", dir,
		                    strerror(errno));
	}
	while ((e = readdir(d)) != NULL) {
		char *path;
		struct stat st;

		if (!al_str_endswith(e->d_name, ".conf"))
			continue;
		if (n >= REGCONF_DROPINS_MAX) {
			rc = al_error_set(AL_ELIMIT,
			                  "'%s' has more than %d drop-in files",
			                  dir, REGCONF_DROPINS_MAX);
			break;
		}
		if ((path = al_sprintf("%s/%s", dir, e->d_name)) == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			break;
		}
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
			free(path);
			continue;
		}
		if ((g = realloc(names, (n + 1) * sizeof(*g))) == NULL) {
			free(path);
			rc = al_error_set(AL_ENOMEM, "out of memory");
			break;
		}
		names = g;
		names[n++] = path;
	}
	closedir(d);
	if (rc == 0 && n > 1)
		qsort(names, n, sizeof(*names), cmp_str);
	for (i = 0; i < n && rc == 0; i++) {
		al_regconf *dc = NULL;

		rc = parse_file(&dc, names[i]);
		if (rc == AL_ENOTFOUND) { /* removed since listed */
			al_error_clear();
			rc = 0;
			continue;
		}
		if (rc == 0)
			rc = merge(c, dc);
		al_regconf_free(dc);
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

static char *home_dir(void)
{
	const char *h = getenv("HOME");
	struct passwd pw, *res = NULL;
	char buf[4096];

	if (h != NULL && h[0] != '\0')
		return al_strdup(h);
	if (getpwuid_r(getuid(), &pw, buf, sizeof(buf), &res) == 0 &&
	    res != NULL && pw.pw_dir != NULL)
		return al_strdup(pw.pw_dir);
	return al_strdup("/");
}

int al_regconf_load(al_regconf **out, const char *path)
{
	const char *env = getenv("CONTAINERS_REGISTRIES_CONF");
	char *home = home_dir(), *user_file = NULL, *user_dir = NULL;
	const char *main_path = path, *sys_dir = AL_REGCONF_DIR;
	al_regconf *c = NULL;
	int explicit_path = 1, rc;

	if (home == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	user_file = al_sprintf("%s/.config/containers/registries.conf", home);
	user_dir = al_sprintf("%s/.config/containers/registries.conf.d", home);
	if (user_file == NULL || user_dir == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	if (main_path == NULL && env == NULL)
		env = getenv("REGISTRIES_CONFIG_PATH");
	if (main_path == NULL && env != NULL)
		main_path = env;
	if (main_path == NULL && al_fs_exists(user_file) == 1) {
		/* a per-user file: the system directory is not read */
		main_path = user_file;
		sys_dir = NULL;
	}
	if (main_path == NULL) {
		main_path = AL_REGCONF_PATH;
		explicit_path = 0;
	}
	rc = parse_file(&c, main_path);
	if (rc == AL_ENOTFOUND && !explicit_path) {
		al_error_clear();
		rc = regconf_alloc(&c);
	} else if (rc == AL_ENOTFOUND) {
		rc = al_error_set(
		    AL_ENOTFOUND,
		    "registries configuration '%s' does not exist", main_path);
	}
	if (rc < 0)
		goto out;
	if ((sys_dir != NULL && (rc = merge_dir(c, sys_dir)) < 0) ||
	    (rc = merge_dir(c, user_dir)) < 0)
		goto out;
	al_log_debug("registries.conf: %zu [[registry]] entries from %s",
	             c->nregs, al_buf_cstr(&c->files));
	*out = c;
	c = NULL;
out:
	al_regconf_free(c);
	free(home);
	free(user_file);
	free(user_dir);
	return rc;
}

const char *al_regconf_files(const al_regconf *c)
{
	return c != NULL ? al_buf_cstr(&c->files) : "";
}

/* ---- lookups ---- */

/* refMatchingSubdomainPrefix for "*.example.com". */
static long match_subdomain(const char *ref, const char *prefix)
{
	const char *suffix = prefix + 1, *hit = strstr(ref, suffix);
	size_t idx;

	if (hit == NULL)
		return -1;
	if (memchr(ref, '/', (size_t)(hit - ref)) != NULL)
		return -1;
	idx = (size_t)(hit - ref) + strlen(suffix);
	if (ref[idx] == '\0' || ref[idx] == ':' || ref[idx] == '/' ||
	    ref[idx] == '@')
		return (long)idx;
	return -1;
}

/* refMatchingPrefix: the length of ref matched by prefix, or -1. */
static long match_prefix(const char *ref, const char *prefix)
{
	size_t rl = strlen(ref), pl = strlen(prefix);
	char ch;

	if (al_str_startswith(prefix, "*."))
		return match_subdomain(ref, prefix);
	if (rl < pl || strncmp(ref, prefix, pl) != 0)
		return -1;
	if (rl == pl)
		return (long)pl;
	ch = ref[pl];
	/* as containers/image, "example.com:5000" matches "example.com" */
	return ch == ':' || ch == '/' || ch == '@' ? (long)pl : -1;
}

/* findRegistryWithParsedConfig: the longest matching prefix. */
static const rc_registry *find_registry(const al_regconf *c, const char *ref)
{
	const rc_registry *best = NULL;
	size_t bestlen = 0, i;

	for (i = 0; c != NULL && i < c->nregs; i++) {
		size_t l = strlen(c->regs[i].prefix);

		if (match_prefix(ref, c->regs[i].prefix) >= 0 && l > bestlen) {
			best = &c->regs[i];
			bestlen = l;
		}
	}
	return best;
}

void al_regconf_sources_free(al_regconf_source *s, size_t n)
{
	size_t i;

	for (i = 0; s != NULL && i < n; i++) {
		free(s[i].registry);
		free(s[i].repository);
	}
	free(s);
}

/* rewriteReference of name (registry/repository) onto ep. */
static int rewrite(const rc_registry *r, const rc_endpoint *ep,
                   const al_ref *ref, const char *name, int mirror,
                   al_regconf_source *out)
{
	al_ref nr = {0};
	char *nn;
	long pl;
	int rc;

	memset(out, 0, sizeof(*out));
	out->insecure = ep->insecure;
	out->mirror = mirror;
	if (ep->location[0] == '\0') {
		out->registry = al_strdup(ref->registry);
		out->repository = al_strdup(ref->repository);
		goto done;
	}
	pl = match_prefix(name, r->prefix);
	if (pl < 0)
		return al_error_set(AL_EINVAL,
		                    "invalid prefix '%s' for reference '%s'",
		                    r->prefix, name);
	nn = al_sprintf("%s%s", ep->location, name + pl);
	if (nn == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	rc = al_ref_parse(&nr, nn);
	if (rc < 0) {
		rc = al_error_wrap(rc, "'%s' rewritten for location '%s' (%s)",
		                   name, ep->location, r->origin);
		free(nn);
		return rc;
	}
	free(nn);
	out->registry = nr.registry;
	out->repository = nr.repository;
	nr.registry = nr.repository = NULL;
	al_ref_clear(&nr);
done:
	if (out->registry == NULL || out->repository == NULL) {
		free(out->registry);
		free(out->repository);
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	return 0;
}

int al_regconf_pull_sources(const al_regconf *c, const al_ref *ref,
                            al_regconf_source **out, size_t *n)
{
	const rc_registry *r;
	al_regconf_source *v = NULL;
	char *name = NULL;
	size_t cnt = 0, i;
	int by_digest, rc = 0;

	*out = NULL;
	*n = 0;
	if ((name = al_ref_name(ref)) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	r = find_registry(c, name);
	if (r != NULL && r->blocked) {
		rc = al_error_set(AL_EAUTH,
		                  "registry '%s' is blocked in %s (pulling "
		                  "'%s' refused)",
		                  r->prefix, r->origin, name);
		goto out;
	}
	v = calloc((r != NULL ? r->nmirrors : 0) + 1, sizeof(*v));
	if (v == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	if (r == NULL) {
		v[0].registry = al_strdup(ref->registry);
		v[0].repository = al_strdup(ref->repository);
		cnt = 1;
		if (v[0].registry == NULL || v[0].repository == NULL)
			rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	by_digest = ref->digest != NULL;
	for (i = 0; i < r->nmirrors && rc == 0; i++) {
		const rc_endpoint *m = &r->mirrors[i];

		if (r->by_digest_only && !by_digest)
			continue;
		if (m->pull == PULL_DIGEST && !by_digest)
			continue;
		if (m->pull == PULL_TAG && by_digest)
			continue;
		if ((rc = rewrite(r, m, ref, name, 1, &v[cnt])) == 0)
			cnt++;
	}
	if (rc == 0 && (rc = rewrite(r, &r->ep, ref, name, 0, &v[cnt])) == 0)
		cnt++;
out:
	free(name);
	if (rc < 0) {
		al_regconf_sources_free(v, cnt);
		return rc;
	}
	*out = v;
	*n = cnt;
	return 0;
}

int al_regconf_host(const al_regconf *c, const char *host, int *insecure)
{
	const rc_registry *r = find_registry(c, host);

	if (insecure != NULL)
		*insecure = r != NULL && r->ep.insecure;
	if (r != NULL && r->blocked)
		return al_error_set(AL_EAUTH, "registry '%s' is blocked in %s",
		                    host, r->origin);
	return 0;
}

int al_regconf_check_release_ref(const al_regconf *c, const char *ref)
{
	const char *s = ref, *slash;
	al_buf list = AL_BUF_INIT(4096);
	size_t n, i;
	int rc;

	if (c == NULL || ref == NULL || c->nsearch == 0)
		return 0;
	if (al_str_startswith(s, "docker://"))
		s += 9;
	else if (strstr(s, "://") != NULL || al_str_startswith(s, "oci:"))
		return 0;
	slash = strchr(s, '/');
	n = slash != NULL ? (size_t)(slash - s) : 0;
	if (slash != NULL &&
	    (memchr(s, '.', n) != NULL || memchr(s, ':', n) != NULL ||
	     (n == 9 && strncmp(s, "localhost", 9) == 0)))
		return 0;
	for (i = 0; i < c->nsearch; i++)
		if (al_buf_printf(&list, "%s%s", i > 0 ? ", " : "",
		                  c->search[i]) < 0)
			break;
	rc = al_error_set(AL_EINVAL,
	                  "'%s' names no registry: release references are "
	                  "not resolved through unqualified-search-registries "
	                  "(%s, from %s); write the full reference, e.g. "
	                  "%s/%s",
	                  ref, al_buf_cstr(&list),
	                  c->search_origin != NULL ? c->search_origin : "?",
	                  c->search[0], s);
	al_buf_free(&list);
	return rc;
}
