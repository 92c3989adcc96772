/* digest.h: "algo:hex" content digests and streaming SHA-256/512 (OpenSSL EVP).
 */
#ifndef AIRLOCK_DIGEST_H
#define AIRLOCK_DIGEST_H

#include "common.h"

AL_BEGIN_DECL

typedef enum al_digest_algo {
	AL_DIGEST_SHA256 = 1,
	AL_DIGEST_SHA512 = 2,
} al_digest_algo;

/* "sha512:" + 128 hex + NUL */
#define AL_DIGEST_STRMAX 136

/* A digest value (copyable). len is 32 or 64. */
typedef struct al_digest {
	al_digest_algo algo;
	size_t len;
	uint8_t bytes[64];
} al_digest;

/*
 * Parse "sha256:<64 lowercase hex>" or "sha512:<128 lowercase hex>" from
 * (s, n). Uppercase hex, other algorithms, wrong lengths: AL_EPARSE (or
 * AL_EUNSUPPORTED for a well-formed unknown algorithm).
 */
AL_EXPORT int al_digest_parse(al_digest *out, const char *s, size_t n);
/* Parse a NUL-terminated string. */
AL_EXPORT int al_digest_parse_str(al_digest *out, const char *s);
/* Write "algo:hex" into out (AL_DIGEST_STRMAX bytes); returns out. */
AL_EXPORT char *al_digest_str(const al_digest *d, char out[AL_DIGEST_STRMAX]);
/* Write the hex part only into out; returns out. */
AL_EXPORT char *al_digest_hex(const al_digest *d, char out[AL_DIGEST_STRMAX]);
/* "sha256" / "sha512". */
AL_EXPORT const char *al_digest_algo_name(al_digest_algo algo);
AL_EXPORT int al_digest_equal(const al_digest *a, const al_digest *b);

/* Streaming hasher. Not thread-safe; one per stream. */
typedef struct al_hasher al_hasher;
AL_EXPORT int al_hasher_new(al_hasher **out, al_digest_algo algo);
AL_EXPORT int al_hasher_update(al_hasher *h, const void *p, size_t n);
/* Finish into out; the hasher is reset and reusable. */
AL_EXPORT int al_hasher_final(al_hasher *h, al_digest *out);
AL_EXPORT void al_hasher_free(al_hasher *h);

/*
 * A thread that hashes one buffer at a time while the caller does
 * something else with the same bytes (writes them to disk, say): submit,
 * work, wait. The buffer must stay valid and unchanged until wait
 * returns, and the hasher must not be used in between.
 */
typedef struct al_hash_worker al_hash_worker;
AL_EXPORT int al_hash_worker_new(al_hash_worker **out);
AL_EXPORT int al_hash_worker_submit(al_hash_worker *hw, al_hasher *h,
                                    const void *p, size_t n);
/* The submitted job's result (0, or its error as this thread's error). */
AL_EXPORT int al_hash_worker_wait(al_hash_worker *hw);
/* Stops and joins the thread; NULL is a no-op. */
AL_EXPORT void al_hash_worker_free(al_hash_worker *hw);

/* One-shot digest of a buffer. */
AL_EXPORT int al_digest_bytes(al_digest *out, al_digest_algo algo,
                              const void *p, size_t n);
/* Digest of a file, streamed through a bounded buffer; *size (may be NULL)
 * receives the byte count. */
AL_EXPORT int al_digest_file(al_digest *out, al_digest_algo algo,
                             const char *path, uint64_t *size);

AL_END_DECL

#endif
