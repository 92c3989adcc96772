/* update_quantity.c: resource quantities ("500m", "1Gi", "1.5e3") parsed
 * and compared by value as k8s.io/apimachinery's resource.Quantity does
 * (ParseQuantity, Cmp), in exact decimal arithmetic, pure. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "update_int.h"
#include "airlock/error.h"

/* quantity.go maxInt64Factors: the digits an int64 always holds. */
#define MAX_INT64_FACTORS 18

/* Formats of quantity.go. */
enum { FMT_DECIMAL_SI, FMT_BINARY_SI, FMT_DECIMAL_EXPONENT };

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* The pieces parseQuantityString cuts str into: the sign, value (the
 * signed number as written, for inf.Dec.SetString), num (leading zeros
 * stripped, "0" when none is left), denom and the suffix. -1 for
 * ErrFormatWrong. */
typedef struct qparts {
	int positive;
	const char *value, *num, *denom, *suffix;
	size_t value_len, num_len, denom_len, suffix_len;
} qparts;

static int parse_string(qparts *p, const char *s, size_t end)
{
	size_t pos = 0, i, start;

	memset(p, 0, sizeof(*p));
	p->positive = 1;
	p->value = p->num = p->denom = p->suffix = s;
	if (pos < end && (s[0] == '-' || s[0] == '+')) {
		p->positive = s[0] == '+';
		pos++;
	}
	/* leading zeros: a string of nothing else is 0 (its sign dropped) */
	while (pos < end && s[pos] == '0')
		pos++;
	if (pos >= end) {
		p->num = p->value = "0";
		p->num_len = p->value_len = 1;
		return 0;
	}
	for (i = pos; i < end && is_digit(s[i]); i++)
		;
	p->num = s + pos;
	p->num_len = i - pos;
	if (i >= end) {
		p->value_len = end;
		return 0;
	}
	pos = i;
	if (p->num_len == 0) {
		p->num = "0";
		p->num_len = 1;
	}
	if (s[pos] == '.') {
		pos++;
		for (i = pos; i < end && is_digit(s[i]); i++)
			;
		p->denom = s + pos;
		p->denom_len = i - pos;
		if (i >= end) {
			p->value_len = end;
			return 0;
		}
		pos = i;
	}
	p->value_len = pos;
	start = pos;
	p->suffix = s + start;
	while (pos < end && strchr("eEinumkKMGTP", s[pos]) != NULL)
		pos++;
	if (pos < end && (s[pos] == '-' || s[pos] == '+'))
		pos++;
	while (pos < end && is_digit(s[pos]))
		pos++;
	if (pos < end)
		return -1;
	p->suffix_len = end - start;
	return 0;
}

/* strconv.ParseInt(s, 10, 64): optional sign, at least one digit, no
 * overflow. */
static int parse_int64(const char *s, size_t len, int64_t *out)
{
	uint64_t v = 0, lim;
	size_t i = 0;
	int neg = 0;

	if (i < len && (s[i] == '+' || s[i] == '-'))
		neg = s[i++] == '-';
	if (i >= len)
		return -1;
	lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; i < len; i++) {
		if (!is_digit(s[i]) || v > (lim - (uint64_t)(s[i] - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}

/* suffix.go interpret: base, exponent and format of a suffix. */
static int interpret(const char *s, size_t len, int *base, int32_t *exp,
                     int *fmt)
{
	static const struct {
		const char *s;
		int base;
		int32_t exp;
	} tab[] = {{"", 10, 0},   {"n", 10, -9}, {"u", 10, -6}, {"m", 10, -3},
	           {"k", 10, 3},  {"M", 10, 6},  {"G", 10, 9},  {"T", 10, 12},
	           {"P", 10, 15}, {"E", 10, 18}, {"Ki", 2, 10}, {"Mi", 2, 20},
	           {"Gi", 2, 30}, {"Ti", 2, 40}, {"Pi", 2, 50}, {"Ei", 2, 60}};
	size_t i;
	int64_t v;

	for (i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (strlen(tab[i].s) == len && memcmp(tab[i].s, s, len) == 0) {
			*base = tab[i].base;
			*exp = tab[i].exp;
			*fmt =
			    tab[i].base == 2 ? FMT_BINARY_SI : FMT_DECIMAL_SI;
			return 0;
		}
	if (len > 1 && (s[0] == 'e' || s[0] == 'E') &&
	    parse_int64(s + 1, len - 1, &v) == 0) {
		*base = 10;
		/* int32(parsed): Go keeps the low 32 bits */
		*exp = (int32_t)(uint32_t)(uint64_t)v;
		*fmt = FMT_DECIMAL_EXPONENT;
		return 0;
	}
	return -1;
}

/* The magnitude as decimal digits d[0..n) (most significant first) times
 * 10^e, normalised: no leading or trailing zeros, n == 0 for zero. */
static void normalise(al_update_qty *q)
{
	size_t lead = 0;

	while (lead < q->ndig && q->dig[lead] == 0)
		lead++;
	if (lead > 0) {
		memmove(q->dig, q->dig + lead, q->ndig - lead);
		q->ndig -= lead;
	}
	while (q->ndig > 0 && q->dig[q->ndig - 1] == 0) {
		q->ndig--;
		q->exp++;
	}
	if (q->ndig == 0) {
		q->exp = 0;
		q->sign = 0;
	}
}

/* Magnitude times 2 (room for one more digit is checked by the caller's
 * bound on the input). */
static void times_two(al_update_qty *q)
{
	size_t i;
	int carry = 0;

	for (i = q->ndig; i-- > 0;) {
		int v = q->dig[i] * 2 + carry;

		q->dig[i] = (unsigned char)(v % 10);
		carry = v / 10;
	}
	if (carry) {
		memmove(q->dig + 1, q->dig, q->ndig);
		q->dig[0] = (unsigned char)carry;
		q->ndig++;
	}
}

/* Add one unit of the last digit (a carry may add a digit in front). */
static void add_one_ulp(al_update_qty *q)
{
	size_t i = q->ndig;

	while (i-- > 0) {
		if (q->dig[i] < 9) {
			q->dig[i]++;
			return;
		}
		q->dig[i] = 0;
	}
	memmove(q->dig + 1, q->dig, q->ndig);
	q->dig[0] = 1;
	q->ndig++;
}

/* inf.Dec.Round(amount, 9, inf.RoundUp) on the magnitude: digits below
 * 10^-9 dropped, and when any of them was not zero the rest is one nano
 * larger ("if you want some resources, you should get some"). */
static void round_up_nano(al_update_qty *q)
{
	int64_t drop;
	size_t keep, i;
	int rest = 0;

	if (q->ndig == 0 || q->exp >= -9)
		return;
	drop = -9 - q->exp;
	if ((uint64_t)drop >= q->ndig) {
		q->dig[0] = 1;
		q->ndig = 1;
		q->exp = -9;
		return;
	}
	keep = q->ndig - (size_t)drop;
	for (i = keep; i < q->ndig; i++)
		rest |= q->dig[i] != 0;
	q->ndig = keep;
	q->exp = -9;
	if (rest)
		add_one_ulp(q);
}

/* Magnitude comparison of two normalised non-zero values. */
static int cmp_mag(const al_update_qty *a, const al_update_qty *b)
{
	int64_t oa = (int64_t)a->ndig + a->exp, ob = (int64_t)b->ndig + b->exp;
	size_t i, n = a->ndig < b->ndig ? a->ndig : b->ndig;

	if (oa != ob)
		return oa < ob ? -1 : 1;
	for (i = 0; i < n; i++)
		if (a->dig[i] != b->dig[i])
			return a->dig[i] < b->dig[i] ? -1 : 1;
	if (a->ndig == b->ndig)
		return 0;
	return a->ndig < b->ndig ? -1 : 1;
}

/* Load digits of num then denom into q (exponent e), normalised. */
static void load_digits(al_update_qty *q, const qparts *p, int64_t e)
{
	size_t i;

	q->ndig = 0;
	for (i = 0; i < p->num_len; i++)
		q->dig[q->ndig++] = (unsigned char)(p->num[i] - '0');
	for (i = 0; i < p->denom_len; i++)
		q->dig[q->ndig++] = (unsigned char)(p->denom[i] - '0');
	q->exp = e;
	q->sign = 1;
	normalise(q);
}

/* The fast path of ParseQuantity: 1 when it takes the value (exact in an
 * int64 times a power of ten), 0 when the general path must. */
static int fast_path(al_update_qty *q, const qparts *p, int32_t exponent,
                     int fmt)
{
	int32_t precision, scale = 0;
	int64_t mantissa = 1, value = 0, result;
	size_t i;

	if (fmt == FMT_BINARY_SI) {
		if (exponent < 0 || p->denom_len != 0)
			return 0;
		mantissa = (int64_t)1 << exponent;
		precision = 15 - (int32_t)p->num_len -
		            (int32_t)((float)exponent * 3 / 10) - 1;
	} else {
		scale = exponent;
		precision =
		    MAX_INT64_FACTORS - (int32_t)(p->num_len + p->denom_len);
	}
	if (precision < 0)
		return 0;
	scale = (int32_t)((uint32_t)scale - (uint32_t)p->denom_len);
	if (scale < -9)
		return 0;
	for (i = 0; i < p->num_len; i++)
		value = value * 10 + (p->num[i] - '0');
	for (i = 0; i < p->denom_len; i++)
		value = value * 10 + (p->denom[i] - '0');
	if (__builtin_mul_overflow(value, mantissa, &result))
		return 0;
	/* result * 10^scale, exactly */
	q->ndig = 0;
	for (i = 0; result > 0; result /= 10)
		q->dig[q->ndig++] = (unsigned char)(result % 10);
	for (i = 0; i < q->ndig / 2; i++) {
		unsigned char t = q->dig[i];

		q->dig[i] = q->dig[q->ndig - 1 - i];
		q->dig[q->ndig - 1 - i] = t;
	}
	q->exp = scale;
	q->sign = p->positive ? 1 : -1;
	normalise(q);
	return 1;
}

/* ParseQuantity: 0, -1 for a string it refuses, -2 for one longer than
 * airlock reads. */
static int qty_parse(al_update_qty *out, const char *s, size_t len)
{
	/* maxAllowed: 2^63-1 */
	static const al_update_qty max_allowed = {
	    .sign = 1,
	    .exp = 0,
	    .ndig = 19,
	    .dig = {9, 2, 2, 3, 3, 7, 2, 0, 3, 6, 8, 5, 4, 7, 7, 5, 8, 0, 7}};
	al_update_qty q;
	qparts p;
	int base, fmt, sign;
	int32_t exponent, inf_scale;
	size_t i;
	int digits = 0;

	memset(&q, 0, sizeof(q));
	if (len == 0)
		return -1;
	if (len > AL_UPDATE_QTY_MAX_LEN)
		return -2;
	if (len == 1 && s[0] == '0') {
		*out = q;
		return 0;
	}
	if (parse_string(&p, s, len) < 0)
		return -1;
	if (interpret(p.suffix, p.suffix_len, &base, &exponent, &fmt) < 0)
		return -1;
	if (fast_path(&q, &p, exponent, fmt)) {
		*out = q;
		return 0;
	}
	/* the general path: inf.Dec.SetString(value) needs a digit */
	for (i = 0; i < p.value_len; i++)
		digits |= is_digit(p.value[i]);
	if (!digits)
		return -1;
	/* amount.SetScale(len(denom) + -exponent) in inf.Scale (int32) */
	inf_scale = (int32_t)((uint32_t)p.denom_len -
	                      (base == 10 ? (uint32_t)exponent : 0));
	load_digits(&q, &p, -(int64_t)inf_scale);
	if (base == 2)
		for (i = 0; i < (size_t)exponent && q.ndig > 0; i++)
			times_two(&q);
	sign = p.positive ? 1 : -1;
	normalise(&q);
	round_up_nano(&q);
	normalise(&q);
	if (fmt == FMT_BINARY_SI && q.ndig > 0 && cmp_mag(&q, &max_allowed) > 0)
		q = max_allowed;
	q.sign = q.ndig > 0 ? sign : 0;
	*out = q;
	return 0;
}

int al_update_qty_parse(al_update_qty *out, const char *s, size_t len)
{
	int rc = qty_parse(out, s, len);

	if (rc == -2)
		return al_error_set(AL_ELIMIT, "quantity longer than %d bytes",
		                    AL_UPDATE_QTY_MAX_LEN);
	if (rc < 0)
		return al_error_set(AL_EPARSE, "quantity '%.*s' does not parse",
		                    (int)len, s);
	return 0;
}

int al_update_qty_cmp(const al_update_qty *a, const al_update_qty *b)
{
	int m;

	if (a->sign != b->sign)
		return a->sign < b->sign ? -1 : 1;
	if (a->sign == 0)
		return 0;
	m = cmp_mag(a, b);
	return a->sign > 0 ? m : -m;
}

/* The text a JSON value gives Quantity.UnmarshalJSON: a string without
 * its surrounding white space, an integer, or a real as Go writes a
 * float64 (the shortest digits that read back the same). */
static int qty_text(const json_t *v, char *buf, size_t cap, const char **s,
                    size_t *len)
{
	if (json_is_string(v)) {
		const char *t = json_string_value(v);
		size_t n = json_string_length(v);

		while (n > 0 && strchr(" \t\n\v\f\r", t[0]) != NULL) {
			t++;
			n--;
		}
		while (n > 0 && strchr(" \t\n\v\f\r", t[n - 1]) != NULL)
			n--;
		*s = t;
		*len = n;
		return 0;
	}
	if (json_is_integer(v)) {
		int n = snprintf(buf, cap, "%" JSON_INTEGER_FORMAT,
		                 json_integer_value(v));

		if (n < 0 || (size_t)n >= cap)
			return -1;
		*s = buf;
		*len = (size_t)n;
		return 0;
	}
	if (json_is_real(v)) {
		double d = json_real_value(v);
		int p, n = -1;
		char *end;

		for (p = 1; p <= 17; p++) {
			n = snprintf(buf, cap, "%.*e", p - 1, d);
			if (n < 0 || (size_t)n >= cap)
				return -1;
			errno = 0;
			if (strtod(buf, &end) == d && *end == '\0')
				break;
		}
		*s = buf;
		*len = (size_t)n;
		return 0;
	}
	return -1;
}

int al_update_qty_json_equal(const json_t *a, const json_t *b)
{
	char ba[64], bb[64];
	const char *sa, *sb;
	size_t la, lb;
	al_update_qty qa, qb;

	if (qty_text(a, ba, sizeof(ba), &sa, &la) < 0 ||
	    qty_text(b, bb, sizeof(bb), &sb, &lb) < 0 ||
	    qty_parse(&qa, sa, la) < 0 || qty_parse(&qb, sb, lb) < 0)
		return -1;
	return al_update_qty_cmp(&qa, &qb) == 0;
}
