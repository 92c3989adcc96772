/* version.c: semantic-version validity and precedence (al_version_compare,
 * al_version_valid), used by graph selection and imageset checks. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "airlock/common.h"

typedef struct semver {
	uint64_t num[3];
	const char *pre; /* pre-release identifiers, NULL if none */
	size_t prelen;
} semver;

static int is_alnum_dash(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z') || c == '-';
}

/* Dot-separated non-empty [0-9A-Za-z-] identifiers in s[0..n). */
static int valid_idents(const char *s, size_t n)
{
	size_t i, run = 0;

	if (n == 0)
		return 0;
	for (i = 0; i < n; i++) {
		if (s[i] == '.') {
			if (run == 0)
				return 0;
			run = 0;
		} else if (is_alnum_dash(s[i])) {
			run++;
		} else {
			return 0;
		}
	}
	return run > 0;
}

static int semver_parse(const char *s, semver *v)
{
	const char *p = s, *end;
	int i;

	if (s == NULL)
		return -1;
	for (i = 0; i < 3; i++) {
		uint64_t n = 0;
		const char *start = p;

		while (*p >= '0' && *p <= '9') {
			if (n > (UINT64_MAX - 9) / 10)
				return -1;
			n = n * 10 + (uint64_t)(*p - '0');
			p++;
		}
		if (p == start)
			return -1;
		v->num[i] = n;
		if (i < 2) {
			if (*p != '.')
				return -1;
			p++;
		}
	}
	v->pre = NULL;
	v->prelen = 0;
	if (*p == '-') {
		p++;
		end = strchr(p, '+');
		if (end == NULL)
			end = p + strlen(p);
		if (!valid_idents(p, (size_t)(end - p)))
			return -1;
		v->pre = p;
		v->prelen = (size_t)(end - p);
		p = end;
	}
	if (*p == '+') {
		p++;
		if (!valid_idents(p, strlen(p)))
			return -1;
		p += strlen(p);
	}
	return *p == '\0' ? 0 : -1;
}

/* 1 if s parses as MAJOR.MINOR.PATCH[-PRE][+BUILD] (semver 2.0.0). */
int al_version_valid(const char *s)
{
	semver v;

	return semver_parse(s, &v) == 0;
}

static int all_digits(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return n > 0;
}

/* One pre-release identifier against another (semver 11.4). */
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
		return memcmp(a, b, an);
	}
	if (da != db)
		return da ? -1 : 1;
	c = memcmp(a, b, an < bn ? an : bn);
	if (c != 0)
		return c;
	return an < bn ? -1 : (an > bn ? 1 : 0);
}

static int pre_cmp(const semver *a, const semver *b)
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

/* Semver precedence; invalid strings after valid ones, bytewise (common.h). */
int al_version_compare(const char *a, const char *b)
{
	semver va, vb;
	int oka, okb, i, c;

	oka = semver_parse(a, &va) == 0;
	okb = semver_parse(b, &vb) == 0;
	if (!oka || !okb) {
		if (oka != okb)
			return oka ? -1 : 1;
		c = strcmp(a != NULL ? a : "", b != NULL ? b : "");
		return c < 0 ? -1 : (c > 0 ? 1 : 0);
	}
	for (i = 0; i < 3; i++)
		if (va.num[i] != vb.num[i])
			return va.num[i] < vb.num[i] ? -1 : 1;
	c = pre_cmp(&va, &vb);
	return c < 0 ? -1 : (c > 0 ? 1 : 0);
}
