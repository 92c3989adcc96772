/* pgp.h: OpenPGP keyrings and signed-message verification (RFC 4880). */
#ifndef AIRLOCK_PGP_H
#define AIRLOCK_PGP_H

#include "common.h"
#include "buf.h"

AL_BEGIN_DECL

/*
 * Bounds applied to every input; anything beyond them is AL_ELIMIT:
 * the size of one keyring file, the keys (primary keys and subkeys) in a
 * keyring, the packets in one keyring file, the size of a signed message
 * as given, the decompressed / reassembled data of a message, the packets
 * in a message (all levels), and how deep compressed data packets nest.
 */
#define AL_PGP_MAX_KEYRING_BYTES (16 * AL_MIB)
#define AL_PGP_MAX_KEYS 4096
#define AL_PGP_MAX_KEYRING_PACKETS 100000
#define AL_PGP_MAX_MESSAGE_BYTES (16 * AL_MIB)
#define AL_PGP_MAX_LITERAL_BYTES (16 * AL_MIB)
#define AL_PGP_MAX_MESSAGE_PACKETS 64
#define AL_PGP_MAX_NESTING 2

/*
 * A set of trusted OpenPGP public keys (v4 keys: RSA, ECDSA P-256/384/521,
 * EdDSA Ed25519 as algorithm 22 or 27). Self-signatures, subkey bindings,
 * back-signatures and revocations are verified when a key is added. Copies
 * of one key (in one input or in several) are merged as gpg merges them:
 * the union of their verified self-signatures, subkeys and revocations, so
 * the result never depends on the order of the inputs. Expiry is evaluated
 * at verification time against the signature's creation time (RFC 9580),
 * and also against the caller's 'now' with AL_PGP_STRICT_EXPIRY.
 * Immutable once loaded: al_pgp_verify() may be called from several threads
 * on one keyring; adding keys and setting flags is not thread-safe.
 */
typedef struct al_pgp_keyring al_pgp_keyring;

/* An empty keyring. Free with al_pgp_keyring_free(). AL_ENOMEM. */
AL_EXPORT int al_pgp_keyring_new(al_pgp_keyring **out);

/*
 * Add the keys in p[0..n) (a binary keyring, or one or more ASCII-armored
 * "PGP PUBLIC KEY BLOCK"s; armor headers are tolerated, a CRC24 line is
 * checked when present). what names the source in messages (a path).
 * Keys whose self-signatures do not verify are kept but unusable (a
 * verification by them fails with a message saying which hash or check
 * failed). SHA-1 self-signatures and bindings are accepted when made before
 * 2023-02-01 (with a warning, see below); MD5 never. A key already in kr
 * is merged with the new copy. Primary keys we
 * cannot verify with (v3/v5/v6, DSA, RSA under 2048 bits) are skipped with
 * their subkeys; subkeys of other algorithms (encryption-only ones) are
 * kept for their key IDs only.
 * Errors: AL_EPARSE (malformed packet, bad armor or CRC, no public key
 * found, a secret key given), AL_EUNSUPPORTED (only keys we cannot use:
 * v3/v5/v6, DSA, RSA under 2048 bits), AL_ELIMIT (a bound above),
 * AL_ENOMEM. On failure the keyring is left as it was before the call
 * (except that AL_ENOMEM while rebuilding the warnings may leave them
 * incomplete).
 */
AL_EXPORT int al_pgp_keyring_add(al_pgp_keyring *kr, const uint8_t *p, size_t n,
                                 const char *what);

/*
 * Keyring flags. AL_PGP_STRICT_EXPIRY: besides being valid when it made the
 * signature, the key must not be expired at verification time.
 */
#define AL_PGP_STRICT_EXPIRY 0x1u

/* Replace kr's flags (0 by default). NULL is a no-op. */
AL_EXPORT void al_pgp_keyring_set_flags(al_pgp_keyring *kr, unsigned flags);

/*
 * Warnings about the keys as loaded, rebuilt by every al_pgp_keyring_add:
 * a key accepted only through a SHA-1 self-signature or binding made before
 * 2023-02-01 (naming the key, its user ID and its input), a key that is not
 * usable and why (which hash or check refused its self-signature). The
 * library never prints: callers show them. Strings are borrowed from kr and
 * live until the next add or the free. Index past the count: NULL.
 */
AL_EXPORT size_t al_pgp_keyring_warning_count(const al_pgp_keyring *kr);
AL_EXPORT const char *al_pgp_keyring_warning(const al_pgp_keyring *kr,
                                             size_t i);

/* al_pgp_keyring_new() + al_pgp_keyring_add(). */
AL_EXPORT int al_pgp_keyring_load(al_pgp_keyring **out, const uint8_t *p,
                                  size_t n, const char *what);

/* Number of keys (primary keys and subkeys) in the keyring. */
AL_EXPORT size_t al_pgp_keyring_count(const al_pgp_keyring *kr);

/* NULL is a no-op. */
AL_EXPORT void al_pgp_keyring_free(al_pgp_keyring *kr);

/* The version of al_pgp_result this header describes. */
#define AL_PGP_RESULT_VERSION 1

/*
 * What a successful verification found. Plain data, no ownership.
 * fingerprint is the signing key's (a primary key or a subkey), uppercase
 * hex; primary_fingerprint its primary key's (the same for a primary).
 * Algorithms are RFC 4880 ids: pubkey_algo 1 RSA, 19 ECDSA, 22/27 EdDSA;
 * hash_algo 8 SHA256, 9 SHA384, 10 SHA512, 11 SHA224 (hash_name is a
 * static string such as "SHA256"). Times are Unix seconds; expires is 0
 * when the signature does not expire.
 */
typedef struct al_pgp_result {
	/* AL_PGP_RESULT_VERSION of the caller's header, set by
	 * AL_PGP_RESULT_INIT (0, a zeroed struct, reads as 1; a newer one is
	 * AL_EINVAL, nothing written): the library writes no field past it */
	unsigned version;
	char fingerprint[41];
	char primary_fingerprint[41];
	uint64_t key_id; /* signing key's 64-bit key ID */
	int sig_version; /* 3 or 4 */
	int sig_type;    /* 0x00 binary or 0x01 text */
	int pubkey_algo;
	int hash_algo;
	const char *hash_name;
	uint64_t created;
	uint64_t expires;
} al_pgp_result;

/* Every other field zero / NULL; set the version by name. */
#define AL_PGP_RESULT_INIT                                                     \
	{                                                                      \
		.version = AL_PGP_RESULT_VERSION                               \
	}

/*
 * Verify the OpenPGP signed message msg[0..n) (binary or ASCII-armored
 * "PGP MESSAGE"): optionally compressed (ZIP, ZLIB, uncompressed; nesting
 * at most AL_PGP_MAX_NESTING), holding a one-pass signature (optional),
 * exactly one literal data packet and exactly one signature packet (v3 or
 * v4). now is the current time in Unix seconds (0: the system clock); it
 * decides signature expiry (and key expiry with AL_PGP_STRICT_EXPIRY).
 *
 * Returns 0 only when every check passed; only then is *out written (may
 * be NULL) and the literal data appended to literal_out (may be NULL;
 * AL_ELIMIT if it does not fit, literal_out then unchanged).
 * Errors worth branching on:
 *   AL_EVERIFY       the content is bad: unknown signer ("signed by unknown
 *                    key 0x<16 hex>", the key looked up: by issuer
 *                    fingerprint when present), issuer fingerprint and key
 *                    ID naming different keys, bad signature, SHA-1/MD5
 *                    hash, a key expired before the signature was made
 *                    (or expired at now, with AL_PGP_STRICT_EXPIRY), a
 *                    revoked key (any reason, whenever it signed), expired
 *                    signature, more than one signature, trailing data
 *   AL_EPARSE        malformed or truncated packets ("truncated packet at
 *                    offset N"), not a signed message
 *   AL_EUNSUPPORTED  valid but unsupported (BZIP2, unknown algorithms)
 *   AL_ELIMIT        a bound above (zip bombs, too many packets)
 * Thread-safe for a shared keyring.
 */
AL_EXPORT int al_pgp_verify(al_pgp_result *out, al_buf *literal_out,
                            const al_pgp_keyring *kr, const uint8_t *msg,
                            size_t n, uint64_t now);

AL_END_DECL

#endif
