/* update_precond.c: semantic versions and the Cluster Version Operator's
 * update preconditions (Upgradeable, Rollback, GiantHop), pure. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "airlock/update.h"
#include "update_int.h"
#include "airlock/buf.h"
#include "airlock/error.h"

typedef struct semver {
	unsigned long major, minor, patch;
	const char *pre; /* points into the string, up to '+' or end */
	size_t npre;
} semver;

static int num(const char **p, unsigned long *out)
{
	const char *s = *p;
	char *end = NULL;

	if (*s < '0' || *s > '9' || (s[0] == '0' && s[1] >= '0' && s[1] <= '9'))
		return -1;
	errno = 0;
	*out = strtoul(s, &end, 10);
	if (errno != 0 || end == s)
		return -1;
	*p = end;
	return 0;
}

static int semver_parse(const char *s, semver *v)
{
	const char *p = s;

	memset(v, 0, sizeof(*v));
	if (s == NULL || num(&p, &v->major) < 0 || *p++ != '.' ||
	    num(&p, &v->minor) < 0 || *p++ != '.' || num(&p, &v->patch) < 0)
		return -1;
	if (*p == '-') {
		p++;
		v->pre = p;
		while (*p != '\0' && *p != '+')
			p++;
		v->npre = (size_t)(p - v->pre);
		if (v->npre == 0)
			return -1;
	}
	if (*p == '+')
		p += strlen(p);
	return *p == '\0' ? 0 : -1;
}

static int is_numeric(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return n > 0;
}

/* SemVer 2.0.0 section 11: pre-release identifiers one by one. */
static int pre_cmp(const semver *a, const semver *b)
{
	const char *pa = a->pre, *pb = b->pre, *ea = a->pre + a->npre,
	           *eb = b->pre + b->npre;

	if (a->npre == 0 || b->npre == 0)
		return a->npre == b->npre ? 0 : a->npre == 0 ? 1 : -1;
	while (pa < ea && pb < eb) {
		const char *da = memchr(pa, '.', (size_t)(ea - pa)),
		           *db = memchr(pb, '.', (size_t)(eb - pb));
		size_t na = (size_t)((da != NULL ? da : ea) - pa),
		       nb = (size_t)((db != NULL ? db : eb) - pb);
		int an = is_numeric(pa, na), bn = is_numeric(pb, nb), c;

		if (an && bn) {
			/* numeric: by length (no leading zeros), then digits */
			c = na != nb ? (na < nb ? -1 : 1) : memcmp(pa, pb, na);
		} else if (an != bn) {
			c = an ? -1 : 1;
		} else {
			c = memcmp(pa, pb, na < nb ? na : nb);
			if (c == 0 && na != nb)
				c = na < nb ? -1 : 1;
		}
		if (c != 0)
			return c < 0 ? -1 : 1;
		pa += na + (da != NULL ? 1 : 0);
		pb += nb + (db != NULL ? 1 : 0);
		if ((da == NULL) != (db == NULL))
			return da == NULL ? -1 : 1;
		if (da == NULL)
			break;
	}
	return 0;
}

static int vcmp(const semver *a, const semver *b)
{
	if (a->major != b->major)
		return a->major < b->major ? -1 : 1;
	if (a->minor != b->minor)
		return a->minor < b->minor ? -1 : 1;
	if (a->patch != b->patch)
		return a->patch < b->patch ? -1 : 1;
	return pre_cmp(a, b);
}

int al_update_semver_cmp(const char *a, const char *b, int *cmp)
{
	semver va, vb;

	if (semver_parse(a, &va) < 0)
		return al_error_set(AL_EPARSE, "'%s' is not a semantic version",
		                    a != NULL ? a : "");
	if (semver_parse(b, &vb) < 0)
		return al_error_set(AL_EPARSE, "'%s' is not a semantic version",
		                    b != NULL ? b : "");
	*cmp = vcmp(&va, &vb);
	return 0;
}

static int add_failure(al_buf *b, int *n, const char *name, const char *reason,
                       const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* One failed check, in precondition.Summarize's words. */
static int add_failure(al_buf *b, int *n, const char *name, const char *reason,
                       const char *fmt, ...)
{
	char m[1024];
	va_list ap;
	int w;

	va_start(ap, fmt);
	w = vsnprintf(m, sizeof(m), fmt, ap);
	va_end(ap);
	if (w < 0)
		m[0] = '\0';
	(*n)++;
	return al_buf_printf(b,
	                     "\n* Precondition \"%s\" failed because of "
	                     "\"%s\": %s",
	                     name, reason, m);
}

int al_update_check_preconditions(const char *current, const char *target,
                                  const al_update_blocker *bl, size_t nb,
                                  char **msg)
{
	al_buf b = AL_BUF_INIT(64 * 1024);
	semver cur, tgt;
	int n = 0, rc = 0;
	size_t i;

	*msg = NULL;
	if (current == NULL || current[0] == '\0' ||
	    semver_parse(current, &cur) < 0)
		return 0;
	if (semver_parse(target, &tgt) < 0) {
		rc = add_failure(&b, &n, "ClusterVersionUpgradeable",
		                 "InvalidDesiredVersion",
		                 "'%s' is not a semantic version",
		                 target != NULL ? target : "");
		goto done;
	}
	/* upgradeable.go: only moving to another minor (or major) is
	 * blocked; a patch update, or not moving forward, passes. */
	if (vcmp(&tgt, &cur) > 0 &&
	    (tgt.major != cur.major || tgt.minor != cur.minor)) {
		for (i = 0; i < nb && rc == 0; i++) {
			const char *r = bl[i].reason != NULL && bl[i].reason[0]
			                    ? bl[i].reason
			                    : "Unknown";
			const char *m =
			    bl[i].message != NULL ? bl[i].message : "";

			if (strcmp(bl[i].kind, "ClusterOperator") == 0)
				rc = add_failure(
				    &b, &n, "ClusterVersionUpgradeable",
				    "ClusterOperatorNotUpgradeable",
				    "Cluster operator %s should not be "
				    "upgraded "
				    "between minor versions: Upgradeable=False "
				    "(%s): %s",
				    bl[i].name, r, m);
			else
				rc = add_failure(
				    &b, &n, "ClusterVersionUpgradeable", r,
				    "%s %s says Upgradeable=False: %s",
				    bl[i].kind, bl[i].name, m);
		}
	}
	/* rollback.go (stricter: see al_update_check_preconditions) */
	if (rc == 0 && vcmp(&tgt, &cur) < 0)
		rc = add_failure(
		    &b, &n, "ClusterVersionRollback", "LowDesiredVersion",
		    "%s is less than the current target %s, and "
		    "airlock refuses every downgrade unless forced",
		    target, current);
	/* gianthop.go */
	if (rc == 0 && tgt.major > cur.major &&
	    !(tgt.major == 5 && cur.major == 4 && tgt.minor == 0))
		rc = add_failure(
		    &b, &n, "ClusterVersionGiantHop", "MajorVersionUpdate",
		    "%s has a larger major version than the current "
		    "target %s (%lu > %lu), and only updates within "
		    "the current major version are supported.",
		    target, current, tgt.major, cur.major);
	else if (rc == 0 && tgt.major == cur.major && tgt.minor > cur.minor + 1)
		rc = add_failure(
		    &b, &n, "ClusterVersionGiantHop",
		    "MultipleMinorVersionsUpdate",
		    "%s is more than one minor version beyond the current "
		    "target %s (%lu.%lu > %lu.(%lu+1)), and only updates "
		    "within "
		    "the current minor version or to the next minor version "
		    "are supported.",
		    target, current, tgt.major, tgt.minor, cur.major,
		    cur.minor);
done:
	if (rc < 0) {
		al_buf_free(&b);
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	if (n == 0) {
		al_buf_free(&b);
		return 0;
	}
	if (n == 1)
		*msg = al_strdup(al_buf_cstr(&b) + 3); /* "\n* " */
	else
		*msg = al_sprintf("Multiple precondition checks failed:%s",
		                  al_buf_cstr(&b));
	al_buf_free(&b);
	if (*msg == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	return n;
}
