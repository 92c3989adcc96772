/* bcrypt.c: bcrypt password hashes: EksBlowfish (Provos and Mazieres, "A
 * Future-Adaptable Password Scheme", 1999) over Blowfish (Schneier, 1993),
 * whose starting tables are pi's hexadecimal digits, computed here. */
#include <pthread.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/crypto.h>

#include "airlock/error.h"
#include "bcrypt.h"

#define BF_ROUNDS 16
#define BF_P (BF_ROUNDS + 2)
#define BF_WORDS (BF_P + 4 * 256)
/* Fractional bits of pi the tables take, and the bits computed below
 * them so that the truncation of each series term (at most one unit per
 * term, fewer than 2^14 terms) cannot reach a kept bit. */
#define PI_BITS (BF_WORDS * 32)
#define PI_GUARD 64
#define SALT_BYTES 16
#define HASH_BYTES 23 /* of the 24 encrypted: the formats' own truncation */
#define KEY_MAX 72    /* 18 words of the P-array */

typedef struct bf_state {
	uint32_t p[BF_P];
	uint32_t s[4][256];
} bf_state;

static const char b64[] =
    "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/* ---- pi ---- */

static uint32_t pi_words[BF_WORDS];
static int pi_status = AL_ENOMEM;
static pthread_once_t pi_once = PTHREAD_ONCE_INIT;

/* r = atan(1/x) * 2^bits, by its series sum (-1)^k / ((2k+1) x^(2k+1)),
 * each term truncated. */
static int atan_inv(BIGNUM *r, BN_ULONG x, int bits, BN_CTX *ctx)
{
	BIGNUM *t, *term;
	BN_ULONG k;
	int ok;

	BN_CTX_start(ctx);
	t = BN_CTX_get(ctx);
	term = BN_CTX_get(ctx);
	ok = term != NULL && BN_one(t) && BN_lshift(t, t, bits) &&
	     BN_div_word(t, x) != (BN_ULONG)-1;
	BN_zero(r);
	for (k = 0; ok && !BN_is_zero(t); k++) {
		ok = BN_copy(term, t) != NULL &&
		     BN_div_word(term, 2 * k + 1) != (BN_ULONG)-1 &&
		     ((k & 1) ? BN_sub(r, r, term) : BN_add(r, r, term)) &&
		     BN_div_word(t, x * x) != (BN_ULONG)-1;
	}
	BN_CTX_end(ctx);
	return ok;
}

/* pi = 16 atan(1/5) - 4 atan(1/239) (Machin, 1706), in fixed point; its
 * fractional part's first PI_BITS bits, as big-endian 32-bit words. */
static void pi_make(void)
{
	BN_CTX *ctx = BN_CTX_new();
	BIGNUM *a = NULL, *b = NULL;
	unsigned char bytes[PI_BITS / 8];
	size_t i;
	int ok;

	ok = ctx != NULL && (a = BN_new()) != NULL && (b = BN_new()) != NULL &&
	     atan_inv(a, 5, PI_BITS + PI_GUARD, ctx) &&
	     atan_inv(b, 239, PI_BITS + PI_GUARD, ctx) && BN_mul_word(a, 16) &&
	     BN_mul_word(b, 4) && BN_sub(a, a, b) &&
	     BN_rshift(a, a, PI_GUARD) && BN_mask_bits(a, PI_BITS) &&
	     BN_bn2binpad(a, bytes, sizeof(bytes)) == (int)sizeof(bytes);
	for (i = 0; ok && i < BF_WORDS; i++)
		pi_words[i] = (uint32_t)bytes[4 * i] << 24 |
		              (uint32_t)bytes[4 * i + 1] << 16 |
		              (uint32_t)bytes[4 * i + 2] << 8 |
		              bytes[4 * i + 3];
	/* the published start of the P-array and end of the fourth S-box
	 * (Schneier's reference tables): a wrong series fails here */
	if (ok && pi_words[0] == 0x243F6A88u && pi_words[1] == 0x85A308D3u &&
	    pi_words[2] == 0x13198A2Eu && pi_words[3] == 0x03707344u &&
	    pi_words[BF_WORDS - 1] == 0x3AC372E6u)
		pi_status = 0;
	BN_free(a);
	BN_free(b);
	BN_CTX_free(ctx);
}

int al_bcrypt__pi_words(const uint32_t **out)
{
	pthread_once(&pi_once, pi_make);
	if (pi_status < 0)
		return al_error_set(AL_ENOMEM, "cannot compute Blowfish's "
		                               "tables (pi's digits)");
	*out = pi_words;
	return 0;
}

/* ---- Blowfish ---- */

static uint32_t bf_f(const bf_state *st, uint32_t x)
{
	return ((st->s[0][x >> 24] + st->s[1][(x >> 16) & 0xff]) ^
	        st->s[2][(x >> 8) & 0xff]) +
	       st->s[3][x & 0xff];
}

/* One block, the 16 rounds of Feistel network, in place. */
static void bf_encrypt(const bf_state *st, uint32_t *xl, uint32_t *xr)
{
	uint32_t l = *xl ^ st->p[0], r = *xr;
	int i;

	for (i = 1; i <= BF_ROUNDS; i += 2) {
		r ^= bf_f(st, l) ^ st->p[i];
		l ^= bf_f(st, r) ^ st->p[i + 1];
	}
	*xl = r ^ st->p[BF_P - 1];
	*xr = l;
}

/* The next big-endian word of data, read cyclically from *j. */
static uint32_t stream_word(const uint8_t *data, size_t len, size_t *j)
{
	uint32_t w = 0;
	int i;

	for (i = 0; i < 4; i++) {
		if (*j >= len)
			*j = 0;
		w = w << 8 | data[(*j)++];
	}
	return w;
}

/* ExpandKey(state, salt, key) of the paper; salt NULL is the zero salt
 * (the loop's ExpandKey(state, 0, key)). */
static void bf_expand(bf_state *st, const uint8_t *salt, const uint8_t *key,
                      size_t keylen)
{
	uint32_t l = 0, r = 0, *w = st->p;
	size_t i, j = 0;

	for (i = 0; i < BF_P; i++)
		st->p[i] ^= stream_word(key, keylen, &j);
	j = 0;
	/* the P-array and the S-boxes are contiguous words in the struct's
	 * order, rewritten two at a time by the running encryption */
	for (i = 0; i < BF_WORDS; i += 2) {
		if (salt != NULL) {
			l ^= stream_word(salt, SALT_BYTES, &j);
			r ^= stream_word(salt, SALT_BYTES, &j);
		}
		bf_encrypt(st, &l, &r);
		if (i < BF_P) {
			w[i] = l;
			w[i + 1] = r;
		} else {
			st->s[(i - BF_P) / 256][(i - BF_P) % 256] = l;
			st->s[(i - BF_P) / 256][(i - BF_P) % 256 + 1] = r;
		}
	}
}

/* ---- the format ---- */

static int b64_value(char c)
{
	const char *p = c != '\0' ? strchr(b64, c) : NULL;

	return p != NULL ? (int)(p - b64) : -1;
}

/* n bytes into bcrypt's base64 (no padding). */
static void b64_encode(char *out, const uint8_t *in, size_t n)
{
	size_t i;

	for (i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16;

		if (i + 1 < n)
			v |= (uint32_t)in[i + 1] << 8;
		if (i + 2 < n)
			v |= in[i + 2];
		*out++ = b64[v >> 18];
		*out++ = b64[(v >> 12) & 0x3f];
		if (i + 1 < n)
			*out++ = b64[(v >> 6) & 0x3f];
		if (i + 2 < n)
			*out++ = b64[v & 0x3f];
	}
}

/* The n bytes that the characters of s (all in the alphabet, enough of
 * them) encode; bits past the last whole byte are ignored, as OpenBSD's
 * decode_base64 and Go's base64 (not strict) do. */
static void b64_decode(uint8_t *out, size_t n, const char *s)
{
	uint32_t acc = 0;
	int bits = 0;
	size_t k = 0;

	while (k < n) {
		acc = acc << 6 | (uint32_t)b64_value(*s++);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[k++] = (uint8_t)(acc >> bits);
		}
	}
}

static int all_b64(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (b64_value(s[i]) < 0)
			return 0;
	return 1;
}

/* The setting's prefix: "$2a$", "$2b$" or "$2y$", two digits of cost in
 * range, "$", 22 salt characters. */
static int setting_ok(const char *s, unsigned *cost)
{
	unsigned c;

	if (s[0] != '$' || s[1] != '2' ||
	    (s[2] != 'a' && s[2] != 'b' && s[2] != 'y') || s[3] != '$' ||
	    s[4] < '0' || s[4] > '9' || s[5] < '0' || s[5] > '9' || s[6] != '$')
		return 0;
	c = (unsigned)(s[4] - '0') * 10 + (unsigned)(s[5] - '0');
	if (c < AL_BCRYPT_COST_MIN || c > AL_BCRYPT_COST_MAX ||
	    strnlen(s + 7, 22) != 22 || !all_b64(s + 7, 22))
		return 0;
	*cost = c;
	return 1;
}

int al_bcrypt_parse(const char *hash, unsigned *cost)
{
	unsigned c;

	if (hash == NULL || strnlen(hash, AL_BCRYPT_LEN + 1) != AL_BCRYPT_LEN ||
	    !setting_ok(hash, &c) ||
	    !all_b64(hash + AL_BCRYPT_SETTING_LEN,
	             AL_BCRYPT_LEN - AL_BCRYPT_SETTING_LEN))
		return al_error_set(AL_EPARSE,
		                    "not a bcrypt hash ($2a$, $2b$ or $2y$, "
		                    "cost 04..31, 53 characters of salt and "
		                    "hash)");
	*cost = c;
	return 0;
}

int al_bcrypt_hash(const uint8_t *pw, size_t pwlen, const char *setting,
                   char *out, size_t cap)
{
	/* "OrpheanBeholderScryDoubt", the text encrypted 64 times */
	static const uint8_t magic[24] = {
	    'O', 'r', 'p', 'h', 'e', 'a', 'n', 'B', 'e', 'h', 'o', 'l',
	    'd', 'e', 'r', 'S', 'c', 'r', 'y', 'D', 'o', 'u', 'b', 't'};
	const uint32_t *init;
	uint8_t key[KEY_MAX + 1], salt[SALT_BYTES], ctext[24];
	uint32_t cdata[6];
	size_t keylen, i, j;
	uint64_t rounds, n;
	bf_state st;
	unsigned cost;
	int rc;

	if (setting == NULL || !setting_ok(setting, &cost))
		return al_error_set(AL_EPARSE, "not a bcrypt setting");
	if (cap < AL_BCRYPT_LEN + 1)
		return al_error_set(AL_EINVAL, "buffer too small");
	if ((rc = al_bcrypt__pi_words(&init)) < 0)
		return rc;
	/* the key: at most 72 bytes of the password and its NUL, read
	 * cyclically; past 71 bytes the NUL is never reached */
	keylen = pwlen < KEY_MAX ? pwlen : KEY_MAX;
	if (keylen > 0)
		memcpy(key, pw, keylen);
	key[keylen++] = 0;
	b64_decode(salt, sizeof(salt), setting + 7);

	memcpy(st.p, init, sizeof(st.p));
	memcpy(st.s, init + BF_P, sizeof(st.s));
	bf_expand(&st, salt, key, keylen);
	rounds = (uint64_t)1 << cost;
	for (n = 0; n < rounds; n++) {
		bf_expand(&st, NULL, key, keylen);
		bf_expand(&st, NULL, salt, sizeof(salt));
	}
	for (i = 0, j = 0; i < 6; i++)
		cdata[i] = stream_word(magic, sizeof(magic), &j);
	for (n = 0; n < 64; n++)
		for (i = 0; i < 6; i += 2)
			bf_encrypt(&st, &cdata[i], &cdata[i + 1]);
	for (i = 0; i < 6; i++) {
		ctext[4 * i] = (uint8_t)(cdata[i] >> 24);
		ctext[4 * i + 1] = (uint8_t)(cdata[i] >> 16);
		ctext[4 * i + 2] = (uint8_t)(cdata[i] >> 8);
		ctext[4 * i + 3] = (uint8_t)cdata[i];
	}
	memcpy(out, setting, AL_BCRYPT_SETTING_LEN);
	b64_encode(out + AL_BCRYPT_SETTING_LEN, ctext, HASH_BYTES);
	out[AL_BCRYPT_LEN] = '\0';
	OPENSSL_cleanse(&st, sizeof(st));
	OPENSSL_cleanse(key, sizeof(key));
	OPENSSL_cleanse(cdata, sizeof(cdata));
	OPENSSL_cleanse(ctext, sizeof(ctext));
	return 0;
}

int al_bcrypt_check(const char *hash, const uint8_t *pw, size_t pwlen)
{
	char got[AL_BCRYPT_LEN + 1];
	unsigned cost;
	int rc;

	if ((rc = al_bcrypt_parse(hash, &cost)) < 0 ||
	    (rc = al_bcrypt_hash(pw, pwlen, hash, got, sizeof(got))) < 0)
		return rc;
	rc = CRYPTO_memcmp(got, hash, AL_BCRYPT_LEN) == 0;
	OPENSSL_cleanse(got, sizeof(got));
	return rc;
}
