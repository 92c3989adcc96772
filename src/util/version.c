/* version.c: the library's one semantic-version parser and precedence
 * (al_semver_parse in the dialects of version_int.h), and the release
 * versions' al_version_valid / al_version_compare. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "airlock/common.h"
#include "version_int.h"

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int is_ident(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z') || c == '-';
}

/* A number of MAJOR.MINOR.PATCH at *pp; without zeros, none of "01". */
static int parse_num(const char **pp, const char *end, int zeros, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;

	if (p == end || !is_digit(*p))
		return -1;
	if (!zeros && *p == '0' && p + 1 < end && is_digit(p[1]))
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

/* Dot-separated non-empty identifiers in p[0..end); numeric ones without
 * leading zeros unless zeros. */
static int valid_idents(const char *p, const char *end, int zeros)
{
	if (p == end)
		return 0;
	for (;;) {
		const char *q = p;
		int digits = 1;

		while (q < end && *q != '.') {
			if (!is_ident(*q))
				return 0;
			digits &= is_digit(*q);
			q++;
		}
		if (q == p)
			return 0;
		if (!zeros && digits && *p == '0' && q - p > 1)
			return 0;
		if (q == end)
			return 1;
		p = q + 1;
	}
}

int al_semver_parse(al_semver *out, const char *s, size_t n, unsigned flags)
{
	const char *p = s, *end = s + n, *plus;
	int zeros = (flags & AL_SEMVER_CORE_ZEROS) != 0;
	al_semver v;

	if (s == NULL)
		return -1;
	memset(&v, 0, sizeof(v));
	if (flags & AL_SEMVER_TRIM) {
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
			end--;
	}
	if (p < end &&
	    ((*p == 'v' && (flags & (AL_SEMVER_V | AL_SEMVER_V_ANYCASE))) ||
	     (*p == 'V' && (flags & AL_SEMVER_V_ANYCASE))))
		p++;
	if (parse_num(&p, end, zeros, &v.major) < 0)
		return -1;
	if (p < end && *p == '.') {
		p++;
		if (parse_num(&p, end, zeros, &v.minor) < 0)
			return -1;
		if (p < end && *p == '.') {
			p++;
			if (parse_num(&p, end, zeros, &v.patch) < 0)
				return -1;
		} else if (!(flags & AL_SEMVER_SHORT)) {
			return -1;
		}
	} else if (!(flags & AL_SEMVER_SHORT)) {
		return -1;
	}
	plus = memchr(p, '+', (size_t)(end - p));
	if (p < end && *p == '-') {
		const char *pre = p + 1;

		p = plus != NULL ? plus : end;
		if (!valid_idents(pre, p, (flags & AL_SEMVER_PRE_ZEROS) != 0))
			return -1;
		v.pre = pre;
		v.prelen = (size_t)(p - pre);
	}
	if (p < end && *p == '+') {
		if (!valid_idents(p + 1, end, 1))
			return -1;
		p = end;
	}
	if (p != end)
		return -1;
	*out = v;
	return 0;
}

static int all_digits(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!is_digit(s[i]))
			return 0;
	return n > 0;
}

/* One pre-release identifier against another (semver 2.0 item 11.4):
 * numbers by value, below alphanumerics, which compare in ASCII order. */
static int ident_cmp(const char *a, size_t an, const char *b, size_t bn)
{
	int da = all_digits(a, an), db = all_digits(b, bn), c;

	if (da && db) {
		while (an > 1 && *a == '0') {
			a++;
			an--;
		}
		while (bn > 1 && *b == '0') {
			b++;
			bn--;
		}
		if (an != bn)
			return an < bn ? -1 : 1;
		c = memcmp(a, b, an);
		return c < 0 ? -1 : (c > 0 ? 1 : 0);
	}
	if (da != db)
		return da ? -1 : 1;
	c = memcmp(a, b, an < bn ? an : bn);
	if (c != 0)
		return c < 0 ? -1 : 1;
	return an < bn ? -1 : (an > bn ? 1 : 0);
}

static int pre_cmp(const al_semver *a, const al_semver *b)
{
	const char *pa = a->pre, *pb = b->pre, *ea, *eb;

	if (pa == NULL || pb == NULL)
		return pa == pb ? 0 : (pa == NULL ? 1 : -1);
	/* only now: NULL + 0 is undefined behaviour (clang's UBSan says so) */
	ea = pa + a->prelen;
	eb = pb + b->prelen;
	while (pa < ea && pb < eb) {
		const char *na = memchr(pa, '.', (size_t)(ea - pa));
		const char *nb = memchr(pb, '.', (size_t)(eb - pb));
		int c;

		if (na == NULL)
			na = ea;
		if (nb == NULL)
			nb = eb;
		c = ident_cmp(pa, (size_t)(na - pa), pb, (size_t)(nb - pb));
		if (c != 0)
			return c;
		pa = na < ea ? na + 1 : ea;
		pb = nb < eb ? nb + 1 : eb;
	}
	if (pa < ea)
		return 1;
	if (pb < eb)
		return -1;
	return 0;
}

int al_semver_cmp(const al_semver *a, const al_semver *b)
{
	if (a->major != b->major)
		return a->major < b->major ? -1 : 1;
	if (a->minor != b->minor)
		return a->minor < b->minor ? -1 : 1;
	if (a->patch != b->patch)
		return a->patch < b->patch ? -1 : 1;
	return pre_cmp(a, b);
}

/* 1 if s parses as MAJOR.MINOR.PATCH[-PRE][+BUILD] (semver 2.0.0). */
int al_version_valid(const char *s)
{
	al_semver v;

	return s != NULL &&
	       al_semver_parse(&v, s, strlen(s), AL_SEMVER_RELEASE) == 0;
}

/* Semver precedence; invalid strings after valid ones, bytewise (common.h). */
int al_version_compare(const char *a, const char *b)
{
	al_semver va, vb;
	int oka, okb, c;

	oka = a != NULL &&
	      al_semver_parse(&va, a, strlen(a), AL_SEMVER_RELEASE) == 0;
	okb = b != NULL &&
	      al_semver_parse(&vb, b, strlen(b), AL_SEMVER_RELEASE) == 0;
	if (!oka || !okb) {
		if (oka != okb)
			return oka ? -1 : 1;
		c = strcmp(a != NULL ? a : "", b != NULL ? b : "");
		return c < 0 ? -1 : (c > 0 ? 1 : 0);
	}
	return al_semver_cmp(&va, &vb);
}
