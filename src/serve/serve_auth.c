/* serve_auth.c: airlock serve's credentials: htpasswd files ({SHA}, $apr1$,
 * $5$, $6$ checked on OpenSSL alone, bcrypt by bcrypt.c) and bearer token
 * files (only SHA-256 of each token kept), compared in constant time, with
 * the hashing bounded in cost and concurrency (docs/serve.md). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "bcrypt.h"
#include "serve_int.h"

#define AUTH_FILE_MAX (4u << 20)
#define AUTH_USERS_MAX 10000u
#define AUTH_USER_MAX 256u
#define AUTH_PASS_MAX 1024u
#define AUTH_HEADER_MAX 4096u
#define SALT_MAX 16u
/* Answered Authorization headers, as their SHA-256: a client sends the
 * same header with every request, and a hash costs thousands of rounds
 * (bcrypt at cost 10: 3e8 instructions). The file is read once, so an
 * answer stays true while the server runs: accepted headers (AUTH_CACHE)
 * and refused ones (AUTH_REFUSED, so that a client retrying a wrong
 * password costs one hash) are kept until pushed out by newer ones. */
#define AUTH_CACHE 32u
#define AUTH_REFUSED 64u
/* Password hashes computed at once, whatever the number of worker threads
 * and requests: a flood of wrong passwords takes at most this many CPUs;
 * the other requests wait for a slot without spinning. */
#define AUTH_HASHING 2u
/* The highest bcrypt cost an htpasswd line may have: 2^12 rounds, about
 * 1.2e9 instructions, a few tenths of a second per check (cost 31, which
 * the format allows, would take days). Every usual default is at most 12:
 * htpasswd -B 5, Go 10, Python's and Ruby's bcrypt 12. */
#define AUTH_BCRYPT_COST_MAX 12u
/* SHA-crypt rounds (Drepper, "Unix crypt using SHA-256 and SHA-512"). */
#define ROUNDS_DEFAULT 5000ul
#define ROUNDS_MIN 1000ul
#define ROUNDS_MAX 999999999ul

typedef enum hash_kind {
	H_SHA1,
	H_APR1,
	H_SHA256C,
	H_SHA512C,
	H_BCRYPT
} hash_kind;

typedef struct user {
	char *name;
	char *hash; /* the whole htpasswd field */
	hash_kind kind;
} user;

struct al_serve_auth {
	user *users;
	size_t nusers;
	unsigned char (*tokens)[32]; /* SHA-256 of each bearer token */
	size_t ntokens;
	pthread_mutex_t lock; /* the rings and the hashing slots */
	pthread_cond_t slot_free;
	unsigned hashing;
	unsigned char cache[AUTH_CACHE][32];
	size_t ncache, next;
	unsigned char refused[AUTH_REFUSED][32];
	size_t nrefused, next_refused;
};

static const char b64[] =
    "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/* crypt's base64: n characters of v, the low six bits first. */
static void to64(char **p, unsigned long v, int n)
{
	while (n-- > 0) {
		*(*p)++ = b64[v & 0x3f];
		v >>= 6;
	}
}

static int md(const EVP_MD *type, const void *const *parts, const size_t *lens,
              size_t nparts, unsigned char *out)
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	size_t i;
	int ok;

	ok = c != NULL && EVP_DigestInit_ex(c, type, NULL) == 1;
	for (i = 0; ok && i < nparts; i++)
		ok = EVP_DigestUpdate(c, parts[i], lens[i]) == 1;
	ok = ok && EVP_DigestFinal_ex(c, out, NULL) == 1;
	EVP_MD_CTX_free(c);
	return ok ? 0 : al_error_set(AL_ENOMEM, "hash failed");
}

/* The salt of "$magic$salt$..." (at most max characters, up to '$'). */
static size_t salt_len(const char *s, size_t max)
{
	size_t n = 0;

	while (n < max && s[n] != '\0' && s[n] != '$')
		n++;
	return n;
}

int al_serve__apr1(const char *pw, const char *setting, char *out, size_t cap)
{
	static const char magic[] = "$apr1$";
	const EVP_MD *m5 = EVP_md5();
	unsigned char fin[16];
	size_t pl = strlen(pw), sl, i;
	EVP_MD_CTX *c = NULL;
	const char *salt;
	char *p;
	int rc = AL_ENOMEM;

	if (strncmp(setting, magic, 6) != 0)
		return al_error_set(AL_EINVAL, "not an $apr1$ hash");
	salt = setting + 6;
	sl = salt_len(salt, 8);
	if (cap < 6 + sl + 1 + 22 + 1)
		return al_error_set(AL_EINVAL, "buffer too small");
	{
		const void *parts[] = {pw, salt, pw};
		const size_t lens[] = {pl, sl, pl};

		if (md(m5, parts, lens, 3, fin) < 0)
			goto out;
	}
	if ((c = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestInit_ex(c, m5, NULL) != 1 ||
	    EVP_DigestUpdate(c, pw, pl) != 1 ||
	    EVP_DigestUpdate(c, magic, 6) != 1 ||
	    EVP_DigestUpdate(c, salt, sl) != 1)
		goto out;
	for (i = pl; i > 0; i -= i > 16 ? 16 : i)
		if (EVP_DigestUpdate(c, fin, i > 16 ? 16 : i) != 1)
			goto out;
	/* one bit of the length at a time: a zero byte or the first
	 * character of the password */
	for (i = pl; i != 0; i >>= 1)
		if (EVP_DigestUpdate(c, (i & 1) ? (const void *)"" : pw, 1) !=
		    1)
			goto out;
	if (EVP_DigestFinal_ex(c, fin, NULL) != 1)
		goto out;
	for (i = 0; i < 1000; i++) {
		const void *parts[4];
		size_t lens[4], k = 0;

		parts[k] = (i & 1) ? (const void *)pw : fin;
		lens[k++] = (i & 1) ? pl : 16;
		if (i % 3) {
			parts[k] = salt;
			lens[k++] = sl;
		}
		if (i % 7) {
			parts[k] = pw;
			lens[k++] = pl;
		}
		parts[k] = (i & 1) ? (const void *)fin : pw;
		lens[k++] = (i & 1) ? 16 : pl;
		if (md(m5, parts, lens, k, fin) < 0)
			goto out;
	}
	memcpy(out, magic, 6);
	memcpy(out + 6, salt, sl);
	p = out + 6 + sl;
	*p++ = '$';
	to64(&p,
	     ((unsigned long)fin[0] << 16) | ((unsigned long)fin[6] << 8) |
	         fin[12],
	     4);
	to64(&p,
	     ((unsigned long)fin[1] << 16) | ((unsigned long)fin[7] << 8) |
	         fin[13],
	     4);
	to64(&p,
	     ((unsigned long)fin[2] << 16) | ((unsigned long)fin[8] << 8) |
	         fin[14],
	     4);
	to64(&p,
	     ((unsigned long)fin[3] << 16) | ((unsigned long)fin[9] << 8) |
	         fin[15],
	     4);
	to64(&p,
	     ((unsigned long)fin[4] << 16) | ((unsigned long)fin[10] << 8) |
	         fin[5],
	     4);
	to64(&p, fin[11], 2);
	*p = '\0';
	rc = 0;
out:
	EVP_MD_CTX_free(c);
	OPENSSL_cleanse(fin, sizeof(fin));
	if (rc < 0)
		return al_error_set(rc, "hash failed");
	return 0;
}

/* Byte order of SHA-crypt's output, three bytes per group of four
 * characters (the last group shorter). */
static const unsigned char perm256[] = {
    0,  10, 20, 21, 1,  11, 12, 22, 2,  3,  13, 23, 24, 4,  14, 15,
    25, 5,  6,  16, 26, 27, 7,  17, 18, 28, 8,  9,  19, 29, 31, 30};
static const unsigned char perm512[] = {
    0,  21, 42, 22, 43, 1,  44, 2,  23, 3,  24, 45, 25, 46, 4,  47,
    5,  26, 6,  27, 48, 28, 49, 7,  50, 8,  29, 9,  30, 51, 31, 52,
    10, 53, 11, 32, 12, 33, 54, 34, 55, 13, 56, 14, 35, 15, 36, 57,
    37, 58, 16, 59, 17, 38, 18, 39, 60, 40, 61, 19, 62, 20, 41, 63};

/* hl bytes of src repeated to n bytes, as one update. */
static int update_repeat(EVP_MD_CTX *c, const unsigned char *src, size_t hl,
                         size_t n)
{
	for (; n >= hl; n -= hl)
		if (EVP_DigestUpdate(c, src, hl) != 1)
			return -1;
	return EVP_DigestUpdate(c, src, n) == 1 ? 0 : -1;
}

int al_serve__sha_crypt(const char *pw, const char *setting, char *out,
                        size_t cap)
{
	int is512 = strncmp(setting, "$6$", 3) == 0;
	const EVP_MD *h = is512 ? EVP_sha512() : EVP_sha256();
	size_t hl = is512 ? 64 : 32, pl = strlen(pw), sl, i, n;
	unsigned char a[64], b[64], dp[64], ds[64];
	unsigned long rounds = ROUNDS_DEFAULT;
	int custom = 0, rc = AL_ENOMEM;
	const char *salt = setting + 3;
	EVP_MD_CTX *c = NULL;
	char *p;

	if (!is512 && strncmp(setting, "$5$", 3) != 0)
		return al_error_set(AL_EINVAL, "not a $5$ or $6$ hash");
	if (strncmp(salt, "rounds=", 7) == 0) {
		char *end;

		errno = 0;
		rounds = strtoul(salt + 7, &end, 10);
		if (errno != 0 || end == salt + 7 || *end != '$')
			return al_error_set(AL_EINVAL, "bad rounds=");
		rounds = rounds < ROUNDS_MIN   ? ROUNDS_MIN
		         : rounds > ROUNDS_MAX ? ROUNDS_MAX
		                               : rounds;
		salt = end + 1;
		custom = 1;
	}
	sl = salt_len(salt, SALT_MAX);
	if (cap < 3 + 20 + sl + 1 + 86 + 1)
		return al_error_set(AL_EINVAL, "buffer too small");
	if ((c = EVP_MD_CTX_new()) == NULL)
		goto out;
	/* B = H(pw salt pw) */
	if (EVP_DigestInit_ex(c, h, NULL) != 1 ||
	    EVP_DigestUpdate(c, pw, pl) != 1 ||
	    EVP_DigestUpdate(c, salt, sl) != 1 ||
	    EVP_DigestUpdate(c, pw, pl) != 1 ||
	    EVP_DigestFinal_ex(c, b, NULL) != 1)
		goto out;
	/* A = H(pw salt B-repeated-to-|pw| bits-of-|pw|) */
	if (EVP_DigestInit_ex(c, h, NULL) != 1 ||
	    EVP_DigestUpdate(c, pw, pl) != 1 ||
	    EVP_DigestUpdate(c, salt, sl) != 1 ||
	    update_repeat(c, b, hl, pl) < 0)
		goto out;
	for (n = pl; n > 0; n >>= 1)
		if (EVP_DigestUpdate(c, (n & 1) ? (const void *)b : pw,
		                     (n & 1) ? hl : pl) != 1)
			goto out;
	if (EVP_DigestFinal_ex(c, a, NULL) != 1)
		goto out;
	/* DP = H(pw repeated |pw| times), DS = H(salt repeated 16 + A[0]) */
	if (EVP_DigestInit_ex(c, h, NULL) != 1)
		goto out;
	for (i = 0; i < pl; i++)
		if (EVP_DigestUpdate(c, pw, pl) != 1)
			goto out;
	if (EVP_DigestFinal_ex(c, dp, NULL) != 1 ||
	    EVP_DigestInit_ex(c, h, NULL) != 1)
		goto out;
	for (i = 0; i < 16u + a[0]; i++)
		if (EVP_DigestUpdate(c, salt, sl) != 1)
			goto out;
	if (EVP_DigestFinal_ex(c, ds, NULL) != 1)
		goto out;
	for (i = 0; i < rounds; i++) {
		if (EVP_DigestInit_ex(c, h, NULL) != 1 ||
		    ((i & 1)
		         ? update_repeat(c, dp, hl, pl)
		         : (EVP_DigestUpdate(c, a, hl) == 1 ? 0 : -1)) < 0 ||
		    ((i % 3) && update_repeat(c, ds, hl, sl) < 0) ||
		    ((i % 7) && update_repeat(c, dp, hl, pl) < 0) ||
		    ((i & 1) ? (EVP_DigestUpdate(c, a, hl) == 1 ? 0 : -1)
		             : update_repeat(c, dp, hl, pl)) < 0 ||
		    EVP_DigestFinal_ex(c, a, NULL) != 1)
			goto out;
	}
	p = out;
	memcpy(p, setting, 3);
	p += 3;
	if (custom)
		p += snprintf(p, 20, "rounds=%lu$", rounds);
	memcpy(p, salt, sl);
	p += sl;
	*p++ = '$';
	{
		const unsigned char *pm = is512 ? perm512 : perm256;
		size_t np = is512 ? sizeof(perm512) : sizeof(perm256);

		for (i = 0; i + 3 <= np; i += 3)
			to64(&p,
			     ((unsigned long)a[pm[i]] << 16) |
			         ((unsigned long)a[pm[i + 1]] << 8) |
			         a[pm[i + 2]],
			     4);
		if (np - i == 2)
			to64(&p, ((unsigned long)a[pm[i]] << 8) | a[pm[i + 1]],
			     3);
		else
			to64(&p, a[pm[i]], 2);
	}
	*p = '\0';
	rc = 0;
out:
	EVP_MD_CTX_free(c);
	OPENSSL_cleanse(a, sizeof(a));
	OPENSSL_cleanse(b, sizeof(b));
	OPENSSL_cleanse(dp, sizeof(dp));
	OPENSSL_cleanse(ds, sizeof(ds));
	if (rc < 0)
		return al_error_set(rc, "hash failed");
	return 0;
}

/* "{SHA}" and base64 of SHA-1(pw), as Apache's htpasswd -s writes it. */
static int sha1_field(const char *pw, char *out, size_t cap)
{
	unsigned char d[SHA_DIGEST_LENGTH];
	char *e;
	int rc = 0;

	SHA1((const unsigned char *)pw, strlen(pw), d);
	if ((e = al_base64_encode(d, sizeof(d))) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	if (snprintf(out, cap, "{SHA}%s", e) >= (int)cap)
		rc = al_error_set(AL_EINVAL, "buffer too small");
	free(e);
	return rc;
}

/* 1 when pw matches the stored field, compared in constant time. */
static int user_match(const user *u, const char *pw)
{
	char got[256];
	size_t n;
	int rc, ok;

	if (u->kind == H_BCRYPT) {
		rc = al_bcrypt_check(u->hash, (const uint8_t *)pw, strlen(pw));
		if (rc < 0)
			al_error_clear();
		return rc == 1;
	}
	switch (u->kind) {
	case H_SHA1:
		rc = sha1_field(pw, got, sizeof(got));
		break;
	case H_APR1:
		rc = al_serve__apr1(pw, u->hash, got, sizeof(got));
		break;
	default:
		rc = al_serve__sha_crypt(pw, u->hash, got, sizeof(got));
		break;
	}
	if (rc < 0) {
		al_error_clear();
		return 0;
	}
	n = strlen(got);
	ok = n == strlen(u->hash) && CRYPTO_memcmp(got, u->hash, n) == 0;
	OPENSSL_cleanse(got, sizeof(got));
	return ok;
}

void al_serve__auth_free(al_serve_auth *a)
{
	size_t i;

	if (a == NULL)
		return;
	for (i = 0; i < a->nusers; i++) {
		free(a->users[i].name);
		OPENSSL_cleanse(a->users[i].hash, strlen(a->users[i].hash));
		free(a->users[i].hash);
	}
	free(a->users);
	if (a->tokens != NULL)
		OPENSSL_cleanse(a->tokens, a->ntokens * 32);
	free(a->tokens);
	OPENSSL_cleanse(a->cache, sizeof(a->cache));
	OPENSSL_cleanse(a->refused, sizeof(a->refused));
	pthread_cond_destroy(&a->slot_free);
	pthread_mutex_destroy(&a->lock);
	free(a);
}

/* Lines of a file, each without its newline (and a trailing CR); fn sees
 * each non-empty line that is not a comment with its number. */
static int each_line(const char *path,
                     int (*fn)(al_serve_auth *a, const char *path,
                               unsigned line, char *s),
                     al_serve_auth *a)
{
	al_buf b = AL_BUF_INIT(AUTH_FILE_MAX);
	char *s, *nl;
	unsigned line = 0;
	int rc;

	if ((rc = al_fs_read_file(path, &b)) < 0)
		goto out;
	if ((rc = al_buf_append(&b, (const uint8_t *)"\n", 1)) < 0)
		goto out;
	b.ptr[b.len - 1] = '\0';
	for (s = (char *)b.ptr; s < (char *)b.ptr + b.len - 1; s = nl + 1) {
		line++;
		if ((nl = strchr(s, '\n')) == NULL)
			nl = (char *)b.ptr + b.len - 1;
		*nl = '\0';
		if (nl > s && nl[-1] == '\r')
			nl[-1] = '\0';
		if (s[0] == '\0' || s[0] == '#')
			continue;
		if ((rc = fn(a, path, line, s)) < 0)
			goto out;
	}
out:
	if (b.ptr != NULL)
		OPENSSL_cleanse(b.ptr, b.len);
	al_buf_free(&b);
	return rc;
}

static int htpasswd_line(al_serve_auth *a, const char *path, unsigned line,
                         char *s)
{
	char *colon = strchr(s, ':'), *hash;
	user *grown, *u;
	hash_kind kind;

	if (colon == NULL || colon == s || (size_t)(colon - s) > AUTH_USER_MAX)
		return al_error_set(AL_EPARSE, "%s:%u: not 'user:hash'", path,
		                    line);
	*colon = '\0';
	hash = colon + 1;
	if (strncmp(hash, "{SHA}", 5) == 0 && strlen(hash) == 5 + 28)
		kind = H_SHA1;
	else if (strncmp(hash, "$apr1$", 6) == 0 && strchr(hash + 6, '$'))
		kind = H_APR1;
	else if (strncmp(hash, "$5$", 3) == 0 && strchr(hash + 3, '$'))
		kind = H_SHA256C;
	else if (strncmp(hash, "$6$", 3) == 0 && strchr(hash + 3, '$'))
		kind = H_SHA512C;
	else if (strncmp(hash, "$2y$", 4) == 0 ||
	         strncmp(hash, "$2a$", 4) == 0 ||
	         strncmp(hash, "$2b$", 4) == 0) {
		unsigned cost;

		if (al_bcrypt_parse(hash, &cost) < 0)
			return al_error_set(AL_EPARSE,
			                    "%s:%u: user '%s': not a bcrypt "
			                    "hash (60 characters, cost 04..31)",
			                    path, line, s);
		if (cost > AUTH_BCRYPT_COST_MAX)
			return al_error_set(
			    AL_ELIMIT,
			    "%s:%u: user '%s': bcrypt cost %u is above %u, "
			    "which would let wrong passwords hold the CPUs; "
			    "make the line with 'htpasswd -B -C %u' or lower",
			    path, line, s, cost, AUTH_BCRYPT_COST_MAX,
			    AUTH_BCRYPT_COST_MAX);
		kind = H_BCRYPT;
	} else
		return al_error_set(AL_EUNSUPPORTED,
		                    "%s:%u: user '%s': hash format not "
		                    "supported (use $2y$, $apr1$, $5$, $6$ or "
		                    "{SHA})",
		                    path, line, s);
	if (a->nusers >= AUTH_USERS_MAX)
		return al_error_set(AL_ELIMIT, "%s: more than %u users", path,
		                    AUTH_USERS_MAX);
	if ((grown = realloc(a->users, (a->nusers + 1) * sizeof(*grown))) ==
	    NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	a->users = grown;
	u = &a->users[a->nusers];
	u->name = al_strdup(s);
	u->hash = al_strdup(hash);
	u->kind = kind;
	if (u->name == NULL || u->hash == NULL) {
		free(u->name);
		free(u->hash);
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	a->nusers++;
	return 0;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9'   ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	                              : -1;
}

static int token_line(al_serve_auth *a, const char *path, unsigned line,
                      char *s)
{
	unsigned char(*grown)[32];
	unsigned char h[32];
	size_t n = strlen(s), i;

	if (a->ntokens >= AUTH_USERS_MAX)
		return al_error_set(AL_ELIMIT, "%s: more than %u tokens", path,
		                    AUTH_USERS_MAX);
	if (strncmp(s, "sha256:", 7) == 0) {
		if (n != 7 + 64)
			return al_error_set(AL_EPARSE,
			                    "%s:%u: 'sha256:' wants 64 "
			                    "lowercase hex digits",
			                    path, line);
		for (i = 0; i < 32; i++) {
			int hi = hexval(s[7 + 2 * i]),
			    lo = hexval(s[8 + 2 * i]);

			if (hi < 0 || lo < 0)
				return al_error_set(AL_EPARSE,
				                    "%s:%u: 'sha256:' wants "
				                    "64 lowercase hex digits",
				                    path, line);
			h[i] = (unsigned char)(hi << 4 | lo);
		}
	} else {
		if (n < 16 || strpbrk(s, " \t") != NULL)
			return al_error_set(AL_EPARSE,
			                    "%s:%u: a token is at least 16 "
			                    "characters, without blanks",
			                    path, line);
		SHA256((const unsigned char *)s, n, h);
	}
	if ((grown = realloc(a->tokens, (a->ntokens + 1) * sizeof(*grown))) ==
	    NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	a->tokens = grown;
	memcpy(a->tokens[a->ntokens++], h, 32);
	return 0;
}

int al_serve__auth_load(al_serve_auth **out, const char *htpasswd,
                        const char *token_file)
{
	al_serve_auth *a = calloc(1, sizeof(*a));
	int rc = 0;

	if (a == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->slot_free, NULL);
	if (htpasswd != NULL &&
	    (rc = each_line(htpasswd, htpasswd_line, a)) < 0) {
		rc = al_error_wrap(rc, "htpasswd file '%s'", htpasswd);
		goto out;
	}
	if (token_file != NULL &&
	    (rc = each_line(token_file, token_line, a)) < 0) {
		rc = al_error_wrap(rc, "token file '%s'", token_file);
		goto out;
	}
	if (a->nusers == 0 && a->ntokens == 0) {
		rc = al_error_set(
		    AL_EINVAL, "no credentials in the htpasswd or token file");
		goto out;
	}
	*out = a;
	a = NULL;
out:
	al_serve__auth_free(a);
	return rc;
}

int al_serve__auth_has_basic(const al_serve_auth *a)
{
	return a->nusers > 0;
}

int al_serve__auth_has_bearer(const al_serve_auth *a)
{
	return a->ntokens > 0;
}

/* 1 when h is among the accepted headers, 0 among the refused, -1 when
 * not seen. Called with a->lock held. */
static int cache_find(const al_serve_auth *a, const unsigned char *h)
{
	size_t i;
	int yes = 0, no = 0;

	for (i = 0; i < a->ncache; i++)
		yes |= CRYPTO_memcmp(a->cache[i], h, 32) == 0;
	for (i = 0; i < a->nrefused; i++)
		no |= CRYPTO_memcmp(a->refused[i], h, 32) == 0;
	return yes ? 1 : no ? 0 : -1;
}

static int cache_has(al_serve_auth *a, const unsigned char *h)
{
	int r;

	pthread_mutex_lock(&a->lock);
	r = cache_find(a, h);
	pthread_mutex_unlock(&a->lock);
	return r;
}

/* Remember the answer ok for h. Called with a->lock held. */
static void cache_add(al_serve_auth *a, const unsigned char *h, int ok)
{
	if (ok) {
		memcpy(a->cache[a->next], h, 32);
		a->next = (a->next + 1) % AUTH_CACHE;
		if (a->ncache < AUTH_CACHE)
			a->ncache++;
	} else {
		memcpy(a->refused[a->next_refused], h, 32);
		a->next_refused = (a->next_refused + 1) % AUTH_REFUSED;
		if (a->nrefused < AUTH_REFUSED)
			a->nrefused++;
	}
}

static int check_basic(const al_serve_auth *a, const char *b64v)
{
	al_buf b = AL_BUF_INIT(AUTH_USER_MAX + 1 + AUTH_PASS_MAX + 1);
	char *colon, *name;
	size_t i;
	int ok = 0, found = 0;

	if (al_base64_decode(&b, b64v, strlen(b64v)) < 0 ||
	    al_buf_append(&b, (const uint8_t *)"", 1) < 0) {
		al_error_clear();
		goto out;
	}
	name = (char *)b.ptr;
	if (strlen(name) != b.len - 1 || (colon = strchr(name, ':')) == NULL)
		goto out;
	*colon = '\0';
	for (i = 0; i < a->nusers; i++) {
		if (strcmp(a->users[i].name, name) != 0)
			continue;
		found = 1;
		ok = user_match(&a->users[i], colon + 1);
		break;
	}
	/* an unknown user costs a hash too, so that timing does not tell
	 * which names exist */
	if (!found && a->nusers > 0)
		(void)user_match(&a->users[0], colon + 1);
out:
	if (b.ptr != NULL)
		OPENSSL_cleanse(b.ptr, b.len);
	al_buf_free(&b);
	return ok;
}

static int check_bearer(const al_serve_auth *a, const char *tok)
{
	unsigned char h[32];
	size_t i;
	int hit = 0;

	SHA256((const unsigned char *)tok, strlen(tok), h);
	for (i = 0; i < a->ntokens; i++)
		hit |= CRYPTO_memcmp(a->tokens[i], h, 32) == 0;
	OPENSSL_cleanse(h, sizeof(h));
	return hit;
}

/* check_basic in one of the AUTH_HASHING slots, unless another thread
 * answered the same header while this one waited for it. */
static int check_basic_slot(al_serve_auth *a, const char *v,
                            const unsigned char *h)
{
	int ok;

	pthread_mutex_lock(&a->lock);
	while (a->hashing >= AUTH_HASHING)
		pthread_cond_wait(&a->slot_free, &a->lock);
	ok = cache_find(a, h);
	if (ok >= 0) {
		pthread_mutex_unlock(&a->lock);
		return ok;
	}
	a->hashing++;
	pthread_mutex_unlock(&a->lock);
	ok = check_basic(a, v);
	pthread_mutex_lock(&a->lock);
	cache_add(a, h, ok);
	a->hashing--;
	pthread_cond_broadcast(&a->slot_free);
	pthread_mutex_unlock(&a->lock);
	return ok;
}

int al_serve__auth_check(al_serve_auth *a, const char *authorization)
{
	unsigned char h[32];
	const char *v;
	int ok = 0;

	if (a == NULL || authorization == NULL ||
	    strlen(authorization) > AUTH_HEADER_MAX)
		return 0;
	SHA256((const unsigned char *)authorization, strlen(authorization), h);
	if ((ok = cache_has(a, h)) >= 0)
		goto out;
	ok = 0;
	if (strncasecmp(authorization, "Basic ", 6) == 0) {
		for (v = authorization + 6; *v == ' '; v++)
			;
		ok = a->nusers > 0 && check_basic_slot(a, v, h);
	} else if (strncasecmp(authorization, "Bearer ", 7) == 0) {
		for (v = authorization + 7; *v == ' '; v++)
			;
		ok = a->ntokens > 0 && v[0] != '\0' && check_bearer(a, v);
		if (ok) {
			pthread_mutex_lock(&a->lock);
			cache_add(a, h, 1);
			pthread_mutex_unlock(&a->lock);
		}
	}
out:
	OPENSSL_cleanse(h, sizeof(h));
	return ok;
}
