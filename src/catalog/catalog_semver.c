/* catalog_semver.c: semantic versions and blang/semver-style ranges for
 * skipRange, olm.package.required and oc-mirror's min/max versions. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "airlock/buf.h"
#include "airlock/error.h"
#include "catalog_int.h"

/* blang/semver Parse, or ParseTolerant (version.c's one parser). */
int cat_semver_parse(cat_semver *out, const char *s, size_t n, int tolerant)
{
	return al_semver_parse(out, s, n,
	                       tolerant ? AL_SEMVER_BLANG_TOLERANT
	                                : AL_SEMVER_BLANG) < 0
	           ? AL_EPARSE
	           : 0;
}

int cat_semver_cmp(const cat_semver *a, const cat_semver *b)
{
	return al_semver_cmp(a, b);
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
			return al_error_oom();
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
		return al_error_oom();
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
		return al_error_oom();
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
			if (rc != AL_ENOMEM)
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
		return al_error_oom();
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
