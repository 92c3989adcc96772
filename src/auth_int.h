/* auth_int.h: the auth module's token-answer parser, for the unit and fuzz
 * builds (not installed, not part of the API). */
#ifndef AIRLOCK_AUTH_INT_H
#define AIRLOCK_AUTH_INT_H

#include <stddef.h>
#include <stdint.h>

/*
 * Parse a token server's JSON answer (n bytes at p): "token", else
 * "access_token" (a non-empty string of visible ASCII, at most 64 KiB), and
 * "expires_in" (seconds; absent, not a positive integer: 60; capped at one
 * day). *token (caller frees and should wipe) and *ttl_s are written only
 * on success. realm names the server in messages. AL_EPARSE (not a JSON
 * object), AL_EPROTO (no token, a refused byte), AL_ENOMEM. Thread-safe.
 */
int al_auth__parse_token(const uint8_t *p, size_t n, const char *realm,
                         char **token, uint64_t *ttl_s);

#endif
