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

/* How long a credential helper may run (docs/registry.md). */
#define AL_AUTH_HELPER_TIMEOUT_MS 10000
/* Its answer on stdout is bounded to this. */
#define AL_AUTH_HELPER_OUT_MAX (64 * 1024)

struct al_auth;

/*
 * Run "docker-credential-<helper> get" (found on $PATH, no shell) with
 * server on its stdin, as docker-credential-helpers' client does; its
 * stdout must be {"ServerURL", "Username", "Secret"}. At most timeout_ms
 * (then the helper is killed: AL_ETIMEOUT) and AL_AUTH_HELPER_OUT_MAX
 * bytes of output (AL_ELIMIT). AL_ENOTFOUND when it answers "credentials
 * not found" (exit status non-zero), or answers the "<token>" user of an
 * identity token (not supported); AL_EINVAL for a helper name that is not
 * [A-Za-z0-9._-]; AL_EAUTH when it fails otherwise (its message, escaped,
 * is in ours). *user and *pass (caller wipes and frees) only on success.
 * Thread-safe.
 */
int al_auth__run_helper(const char *helper, const char *server,
                        uint64_t timeout_ms, char **user, char **pass);

/* Tests: bound credential helpers to ms instead of the default. */
void al_auth__set_helper_timeout_ms(struct al_auth *a, uint64_t ms);

#endif
