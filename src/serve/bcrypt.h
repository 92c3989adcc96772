/* bcrypt.h (internal): bcrypt password hashes ("$2a$", "$2b$", "$2y$"), as
 * OpenBSD's bcrypt(3) and Go's golang.org/x/crypto/bcrypt compute them
 * (docs/serve.md "Credentials"). */
#ifndef AL_BCRYPT_H
#define AL_BCRYPT_H

#include <stddef.h>
#include <stdint.h>

/* The cost range of the format (log2 of the key-schedule rounds), as
 * OpenBSD and Go accept it. */
#define AL_BCRYPT_COST_MIN 4u
#define AL_BCRYPT_COST_MAX 31u
/* "$2b$10$" + 22 characters of salt + 31 of hash. */
#define AL_BCRYPT_LEN 60u
/* "$2b$10$" + 22 characters of salt: what al_bcrypt_hash reads. */
#define AL_BCRYPT_SETTING_LEN 29u

/*
 * Check the form of a whole bcrypt hash: "$2a$", "$2b$" or "$2y$", two
 * decimal digits of cost in 4..31, "$", 22 characters of salt and 31 of
 * hash in bcrypt's base64 alphabet, nothing after. 0 and *cost set, or
 * AL_EPARSE (*cost untouched). "$2$" and "$2x$" (crypt_blowfish's
 * sign-extension bug) are refused. Thread-safe.
 */
int al_bcrypt_parse(const char *hash, unsigned *cost);

/*
 * bcrypt of the password bytes pw[0..pwlen) (the first 72 bytes of pw
 * followed by a zero byte are the key, as in OpenBSD's "$2b$" and Go for
 * every variant) with the variant, cost and salt of setting (its first
 * 29 characters; a whole hash may be given). Writes the 60-character hash
 * and a NUL into out (cap >= 61): the setting's own characters, then the
 * 31 of the hash. AL_EPARSE for a bad setting, AL_EINVAL for a small
 * out, AL_ENOMEM when the Blowfish tables could not be made. Takes
 * 2^cost key-schedule rounds: the caller bounds cost. Thread-safe.
 */
int al_bcrypt_hash(const uint8_t *pw, size_t pwlen, const char *setting,
                   char *out, size_t cap);

/*
 * 1 when pw hashes to the whole hash (compared in constant time), 0 when
 * not, or a negative code as al_bcrypt_hash. Thread-safe.
 */
int al_bcrypt_check(const char *hash, const uint8_t *pw, size_t pwlen);

/*
 * The 1042 words Blowfish starts from (the 18 of the P-array, then the
 * four S-boxes of 256): the hexadecimal digits of pi's fractional part,
 * computed once per process with OpenSSL's BIGNUM by Machin's formula and
 * checked against their published first and last words. 0 and *out set,
 * or AL_ENOMEM. Thread-safe.
 */
int al_bcrypt__pi_words(const uint32_t **out);

#endif
