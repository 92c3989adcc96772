/* catalog_semver.c: semantic versions and blang/semver-style ranges for
 * skipRange, olm.package.required and oc-mirror's min/max versions. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "airlock/buf.h"
#include "airlock/error.h"
#include "catalog_int.h"

static int is_digit(char ch)
{
	return ch >= '0' && ch <= '9';
}

static int is_ident(char ch)
{
	return is_digit(ch) || (ch >= 'a' && ch <= 'z') ||
	       (ch >= 'A' && ch <= 'Z') || ch == '-';
}

/* A numeric field without leading zeros (semver 2.0 item 2). */
static int parse_num(const char **pp, const char *end, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;

	if (p == end || !is_digit(*p))
		return -1;
	if (*p == '0' && p + 1 < end && is_digit(p[1]))
		return -1;
	for (; p < end && is_digit(*p); p++) {
		if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	*pp = p;
	*out = v;
	return 0;
}

/* Dot-separated identifiers [0-9A-Za-z-]+, numeric ones without leading
 * zeros when numeric_check. */
static int check_idents(const char *p, const char *end, int numeric_check)
{
	const char *start = p;

	if (p == end)
		return -1;
	while (p <= end) {
		const char *q = p;
		int alldigit = 1;

		while (q < end && *q != '.') {
			if (!is_ident(*q))
				return -1;
			if (!is_digit(*q))
				alldigit = 0;
			q++;
		}
		if (q == p)
			return -1;
		if (numeric_check && alldigit && *p == '0' && q - p > 1)
			return -1;
		if (q == end)
			break;
		p = q + 1;
	}
	(void)start;
	return 0;
}

/*
 * Strict: MAJOR.MINOR.PATCH[-PRE][+BUILD] (blang semver.Parse).
 * Tolerant (semver.ParseTolerant): surrounding blanks and a leading 'v'
 * dropped, missing MINOR or PATCH taken as 0.
 */
int cat_semver_parse(cat_semver *out, const char *s, size_t n, int tolerant)
{
	const char *p = s, *end = s + n, *pre = NULL, *plus;
	cat_semver v;

	memset(&v, 0, sizeof(v));
	if (tolerant) {
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
			end--;
		if (p < end && (*p == 'v' || *p == 'V'))
			p++;
	}
	if (parse_num(&p, end, &v.major) < 0)
		return AL_EPARSE;
	if (p < end && *p == '.') {
		p++;
		if (parse_num(&p, end, &v.minor) < 0)
			return AL_EPARSE;
		if (p < end && *p == '.') {
			p++;
			if (parse_num(&p, end, &v.patch) < 0)
				return AL_EPARSE;
		} else if (!tolerant) {
			return AL_EPARSE;
		}
	} else if (!tolerant) {
		return AL_EPARSE;
	}
	plus = memchr(p, '+', (size_t)(end - p));
	if (p < end && *p == '-') {
		pre = p + 1;
		p = plus != NULL ? plus : end;
		if (check_idents(pre, p, 1) < 0)
			return AL_EPARSE;
		v.pre = pre;
		v.prelen = (size_t)(p - pre);
	}
	if (p < end && *p == '+') {
		if (check_idents(p + 1, end, 0) < 0)
			return AL_EPARSE;
		p = end;
	}
	if (p != end)
		return AL_EPARSE;
	*out = v;
	return 0;
}

/* Compare prerelease identifier lists (semver 2.0 item 11). */
static int cmp_pre(const cat_semver *a, const cat_semver *b)
{
	const char *pa = a->pre, *ea = a->pre + a->prelen;
	const char *pb = b->pre, *eb = b->pre + b->prelen;

	if (a->pre == NULL || b->pre == NULL) {
		if (a->pre == NULL && b->pre == NULL)
			return 0;
		return a->pre == NULL ? 1 : -1;
	}
	for (;;) {
		const char *qa = pa, *qb = pb;
		int na = 1, nb = 1;
		size_t la, lb;
		int c;

		if (pa >= ea || pb >= eb)
			return pa >= ea ? (pb >= eb ? 0 : -1) : 1;
		while (qa < ea && *qa != '.') {
			na &= is_digit(*qa);
			qa++;
		}
		while (qb < eb && *qb != '.') {
			nb &= is_digit(*qb);
			qb++;
		}
		la = (size_t)(qa - pa);
		lb = (size_t)(qb - pb);
		if (na && nb) {
			if (la != lb)
				return la < lb ? -1 : 1;
			c = memcmp(pa, pb, la);
		} else if (na || nb) {
			return na ? -1 : 1;
		} else {
			c = memcmp(pa, pb, la < lb ? la : lb);
			if (c == 0 && la != lb)
				c = la < lb ? -1 : 1;
		}
		if (c != 0)
			return c < 0 ? -1 : 1;
		pa = qa < ea ? qa + 1 : qa;
		pb = qb < eb ? qb + 1 : qb;
	}
}

int cat_semver_cmp(const cat_semver *a, const cat_semver *b)
{
	if (a->major != b->major)
		return a->major < b->major ? -1 : 1;
	if (a->minor != b->minor)
		return a->minor < b->minor ? -1 : 1;
	if (a->patch != b->patch)
		return a->patch < b->patch ? -1 : 1;
	return cmp_pre(a, b);
}

void cat_range_clear(cat_range *r)
{
	if (r == NULL)
		return;
	free(r->text);
	free(r->cmps);
	free(r->group_end);
	memset(r, 0, sizeof(*r));
}

static int push_cmp(cat_range *r, size_t *cap, enum cat_op op,
                    const cat_semver *v)
{
	if (r->ncmps == *cap) {
		size_t ncap = *cap ? *cap * 2 : 4;
		struct cat_cmp *nv = realloc(r->cmps, ncap * sizeof(*nv));

		if (nv == NULL)
			return al_error_set(AL_ENOMEM, "out of memory");
		r->cmps = nv;
		*cap = ncap;
	}
	r->cmps[r->ncmps].op = op;
	r->cmps[r->ncmps].v = *v;
	r->ncmps++;
	return 0;
}

static int end_group(cat_range *r)
{
	size_t *nv = realloc(r->group_end, (r->ngroups + 1) * sizeof(*nv));

	if (nv == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	r->group_end = nv;
	r->group_end[r->ngroups++] = r->ncmps;
	return 0;
}

/*
 * One comparator token (operator already split off into op): a version,
 * possibly with "x"/"X"/"*" wildcards as blang's expandWildcardVersion:
 * "1.2.x" is >=1.2.0 <1.3.0, ">1.2.x" is >=1.3.0, "<=1.2.x" is <1.3.0.
 */
static int add_token(cat_range *r, size_t *cap, enum cat_op op, const char *p,
                     size_t n)
{
	cat_semver v, hi;
	const char *d1, *d2;
	int wild = 0; /* 1: minor wild, 2: patch wild */

	d1 = memchr(p, '.', n);
	d2 = d1 != NULL ? memchr(d1 + 1, '.', n - (size_t)(d1 + 1 - p)) : NULL;
	if (d1 != NULL && d1 + 2 == p + n && strchr("xX*", d1[1]) != NULL)
		wild = 1;
	else if (d2 != NULL && d2 + 2 == p + n && strchr("xX*", d2[1]) != NULL)
		wild = 2;
	if (!wild) {
		if (cat_semver_parse(&v, p, n, 0) < 0)
			return AL_EPARSE;
		return push_cmp(r, cap, op, &v);
	}
	memset(&v, 0, sizeof(v));
	if (cat_semver_parse(&v, p, (size_t)((wild == 1 ? d1 : d2) - p), 1) < 0)
		return AL_EPARSE;
	hi = v;
	if (wild == 1) {
		hi.major++;
		hi.minor = 0;
	} else {
		hi.minor++;
	}
	hi.patch = 0;
	switch (op) {
	case OP_EQ:
		if (push_cmp(r, cap, OP_GE, &v) < 0)
			return AL_ENOMEM;
		return push_cmp(r, cap, OP_LT, &hi);
	case OP_GT:
		return push_cmp(r, cap, OP_GE, &hi);
	case OP_GE:
		return push_cmp(r, cap, OP_GE, &v);
	case OP_LT:
		return push_cmp(r, cap, OP_LT, &v);
	case OP_LE:
		return push_cmp(r, cap, OP_LT, &hi);
	case OP_NE:
		return AL_EPARSE;
	}
	return AL_EPARSE;
}

static size_t op_len(const char *p, size_t n, enum cat_op *op)
{
	if (n >= 2 && p[0] == '>' && p[1] == '=')
		return *op = OP_GE, 2;
	if (n >= 2 && p[0] == '<' && p[1] == '=')
		return *op = OP_LE, 2;
	if (n >= 2 && p[0] == '!' && p[1] == '=')
		return *op = OP_NE, 2;
	if (n >= 2 && p[0] == '=' && p[1] == '=')
		return *op = OP_EQ, 2;
	if (n >= 1 && p[0] == '>')
		return *op = OP_GT, 1;
	if (n >= 1 && p[0] == '<')
		return *op = OP_LT, 1;
	if (n >= 1 && p[0] == '=')
		return *op = OP_EQ, 1;
	*op = OP_EQ;
	return 0;
}

int cat_range_parse(cat_range *out, const char *s)
{
	cat_range r;
	size_t cap = 0, n;
	const char *p, *end;
	int rc = 0, ntok = 0;

	memset(&r, 0, sizeof(r));
	if (s == NULL)
		return AL_EPARSE;
	r.text = al_strdup(s);
	if (r.text == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	p = r.text;
	end = r.text + strlen(r.text);
	while (p < end) {
		const char *q;
		enum cat_op op;
		size_t ol;

		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p == end)
			break;
		if (end - p >= 2 && p[0] == '|' && p[1] == '|') {
			if (ntok == 0) {
				rc = AL_EPARSE;
				goto out;
			}
			if ((rc = end_group(&r)) < 0)
				goto out;
			ntok = 0;
			p += 2;
			continue;
		}
		ol = op_len(p, (size_t)(end - p), &op);
		p += ol;
		/* blang accepts ">= 1.2.3": the operator alone, then the
		 * version */
		while (ol > 0 && p < end && (*p == ' ' || *p == '\t'))
			p++;
		q = p;
		while (q < end && *q != ' ' && *q != '\t' && *q != '|')
			q++;
		n = (size_t)(q - p);
		if (n == 0 || (rc = add_token(&r, &cap, op, p, n)) < 0) {
			rc = AL_EPARSE;
			goto out;
		}
		ntok++;
		p = q;
	}
	if (ntok == 0) {
		rc = AL_EPARSE;
		goto out;
	}
	if ((rc = end_group(&r)) < 0)
		goto out;
	*out = r;
	memset(&r, 0, sizeof(r));
out:
	cat_range_clear(&r);
	return rc;
}

int cat_range_minmax(cat_range *out, const char *min, const char *max)
{
	cat_range r;
	cat_semver v;
	size_t cap = 0, lmin;
	int rc = 0;

	memset(&r, 0, sizeof(r));
	lmin = min != NULL ? strlen(min) : 0;
	r.text =
	    al_sprintf("%s|%s", min != NULL ? min : "", max != NULL ? max : "");
	if (r.text == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	r.prerelease_strict = 1;
	if (min != NULL && min[0] != '\0') {
		if (cat_semver_parse(&v, r.text, lmin, 1) < 0) {
			rc = AL_EPARSE;
			goto out;
		}
		if ((rc = push_cmp(&r, &cap, OP_GE, &v)) < 0)
			goto out;
	}
	if (max != NULL && max[0] != '\0') {
		const char *m = r.text + lmin + 1;

		if (cat_semver_parse(&v, m, strlen(m), 1) < 0) {
			rc = AL_EPARSE;
			goto out;
		}
		if ((rc = push_cmp(&r, &cap, OP_LE, &v)) < 0)
			goto out;
	}
	if ((rc = end_group(&r)) < 0)
		goto out;
	*out = r;
	memset(&r, 0, sizeof(r));
out:
	cat_range_clear(&r);
	return rc;
}

static int cmp_ok(const struct cat_cmp *c, const cat_semver *v, int strict)
{
	int d;

	if (strict && v->pre != NULL && c->v.pre == NULL)
		return 0;
	d = cat_semver_cmp(v, &c->v);
	switch (c->op) {
	case OP_EQ:
		return d == 0;
	case OP_NE:
		return d != 0;
	case OP_GT:
		return d > 0;
	case OP_GE:
		return d >= 0;
	case OP_LT:
		return d < 0;
	case OP_LE:
		return d <= 0;
	}
	return 0;
}

int cat_range_match(const cat_range *r, const cat_semver *v)
{
	size_t g, i, start = 0;

	for (g = 0; g < r->ngroups; g++) {
		int ok = 1;

		for (i = start; i < r->group_end[g] && ok; i++)
			ok = cmp_ok(&r->cmps[i], v, r->prerelease_strict);
		if (ok)
			return 1;
		start = r->group_end[g];
	}
	return 0;
}

int al_catalog_semver_match(const char *range, const char *v)
{
	cat_range r;
	cat_semver sv;
	int m;

	if (range == NULL || v == NULL)
		return al_error_set(AL_EINVAL, "no range or version");
	if (cat_semver_parse(&sv, v, strlen(v), 0) < 0)
		return al_error_set(AL_EPARSE, "'%s' is not a semantic version",
		                    v);
	if (cat_range_parse(&r, range) < 0)
		return al_error_set(AL_EPARSE, "'%s' is not a version range",
		                    range);
	m = cat_range_match(&r, &sv);
	cat_range_clear(&r);
	return m;
}

int al_catalog_semver_cmp(const char *a, const char *b, int *err)
{
	cat_semver va, vb;

	if (err != NULL)
		*err = 0;
	if (a == NULL || b == NULL ||
	    cat_semver_parse(&va, a, strlen(a), 0) < 0 ||
	    cat_semver_parse(&vb, b, strlen(b), 0) < 0) {
		if (err != NULL)
			*err = 1;
		return 0;
	}
	return cat_semver_cmp(&va, &vb);
}

int al_catalog_version_valid(const char *s)
{
	cat_semver v;

	return s != NULL && cat_semver_parse(&v, s, strlen(s), 1) == 0;
}
