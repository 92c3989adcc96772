/* sig_int.h: the one simple-signing payload reader, shared by the OpenPGP
 * signatures (sig.c) and cosign's (cosign.c). */
#ifndef AL_SIG_INT_H
#define AL_SIG_INT_H

#include "airlock/sig.h"

/* What tells the two readings of the same JSON apart. */
typedef struct al_sig__payload_rules {
	const char *what; /* "signature payload": names the input in messages */
	const char *type; /* the one critical.type accepted */
	uint64_t max;     /* a longer input is AL_ELIMIT */
	/* 1: 'optional' must be there and may be null (sigstore's payload,
	 * containers/image's UntrustedSigstorePayload); 0: it may be absent
	 * and is an object when present (the OpenPGP payloads airlock's peers
	 * write, containers/image's untrustedSignature tolerates the same) */
	int optional_member;
} al_sig__payload_rules;

/*
 * Read a simple-signing payload as containers/image's strict
 * unmarshalling does (signature/internal's untrustedSignature and
 * UntrustedSigstorePayload strictUnmarshalJSON): duplicate keys refused,
 * exactly {critical, optional} at the top, exactly {type, image,
 * identity} in critical, {docker-manifest-digest} in image,
 * {docker-reference} in identity, each of the right JSON type; optional's
 * creator (string) and timestamp (integer) read, its other members
 * ignored. critical.type must be rules->type, the digest valid, the
 * reference not empty. *out is written only on success (caller clears it
 * with al_sig_payload_clear). AL_EPARSE, AL_ELIMIT, AL_ENOMEM.
 */
int al_sig__payload_read(al_sig_payload *out, const uint8_t *p, size_t n,
                         const al_sig__payload_rules *rules);

#endif
