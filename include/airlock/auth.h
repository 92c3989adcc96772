/* auth.h: registry credentials from auth files, and the Bearer/Basic challenge
 * flow with a token cache. */
#ifndef AIRLOCK_AUTH_H
#define AIRLOCK_AUTH_H

#include "common.h"
#include "http.h"

AL_BEGIN_DECL

/*
 * Credentials and tokens. Thread-safe (one internal lock): one al_auth is
 * shared by every worker. Credentials are never logged.
 */
typedef struct al_auth al_auth;

/*
 * Load credentials as containers/image (skopeo, podman) finds them
 * (docs/registry.md "Credentials"). authfile != NULL (--authfile): only
 * that file (must exist). Else $REGISTRY_AUTH_FILE alone when set (as
 * skopeo; missing: no credentials), else every one of
 * $XDG_RUNTIME_DIR/containers/auth.json (/run/containers/UID/auth.json),
 * $XDG_CONFIG_HOME/containers/auth.json (~/.config/containers/auth.json),
 * $DOCKER_CONFIG/config.json (~/.docker/config.json) and ~/.dockercfg,
 * searched in that order for each lookup: the first file with usable
 * credentials for the registry wins. Missing default files are fine.
 * Formats: {"auths": {KEY: {"auth": base64(user:pass)} |
 * {"username","password"}}, "credHelpers": {REGISTRY: NAME},
 * "credsStore": NAME} (containers auth.json, docker config.json, OpenShift
 * pull secret). KEY may be "host", "host/namespace[/repo]" (most specific
 * first), or a URL such as "https://index.docker.io/v1/". Helpers run as
 * "docker-credential-NAME get" when a lookup needs them. AL_EPARSE names
 * the file and position.
 */
AL_EXPORT int al_auth_new(al_auth **out, const char *authfile);
/* The files a lookup searches, "'A', 'B'" ("" for an anonymous al_auth):
 * borrowed, for messages such as "no credentials were found in ...". */
AL_EXPORT const char *al_auth_sources(const al_auth *a);
/* An al_auth without credentials (anonymous tokens only). */
AL_EXPORT int al_auth_new_anonymous(al_auth **out);
/* Wipes credentials and cached tokens; NULL is a no-op. */
AL_EXPORT void al_auth_free(al_auth *a);

/*
 * Normalise an auth-file key or registry name: strips "http://" /
 * "https://", a trailing "/", "/v1" or "/v2"; "index.docker.io" and
 * "registry-1.docker.io" become "docker.io". Caller frees; NULL on ENOMEM.
 */
AL_EXPORT char *al_auth_normalize_key(const char *key);

/* A parsed WWW-Authenticate challenge (the first one in the header). */
typedef struct al_auth_params {
	char *scheme;  /* "Bearer" or "Basic" as sent (compare
	                  case-insensitively) */
	char *realm;   /* NULL when absent */
	char *service; /* NULL when absent */
	char *scope;   /* NULL when absent */
} al_auth_params;

/*
 * Parse a WWW-Authenticate value: scheme, then comma-separated
 * name=token or name="quoted-string" (backslash escapes) parameters;
 * names are case-insensitive, unknown ones ignored. AL_EPARSE (naming
 * the header) on an unterminated quote, a missing '=' or an empty scheme.
 * Free with al_auth_params_clear.
 */
AL_EXPORT int al_auth_parse_challenge(al_auth_params *out,
                                      const char *www_authenticate);
AL_EXPORT void al_auth_params_clear(al_auth_params *p);

/* Credentials for registry/repository (repository may be NULL):
 * AL_ENOTFOUND when none. May run a credential helper (once per helper and
 * registry; its failure or timeout is returned). Caller frees *user,
 * *pass (and should wipe). */
AL_EXPORT int al_auth_lookup(al_auth *a, const char *registry,
                             const char *repository, char **user, char **pass);

/*
 * Answer a 401 challenge. www_authenticate is the header value;
 * scope like "repository:foo/bar:pull" (NULL for none). For Bearer, fetch
 * a token from the realm (GET realm?service=..&scope=.., Basic credentials
 * if any, anonymous otherwise) using h, cache it per (registry, scope)
 * until expires_in - 30 s. For Basic, build the header from credentials
 * (AL_EAUTH if none). *header receives "Authorization: ..." (caller frees).
 * AL_EAUTH when the token server refuses; AL_EPARSE on a bad challenge.
 * Every header is cached under the auth-file key or credential helper
 * that chose the credentials for registry/repository (al_auth_lookup;
 * anonymous is a key of its own): Bearer tokens per scope as well, Basic
 * headers for every scope of that key. A repository whose credentials
 * come from another key never gets it (docs/security.md).
 */
AL_EXPORT int al_auth_challenge(al_auth *a, al_http *h, const char *registry,
                                const char *repository,
                                const char *www_authenticate, const char *scope,
                                char **header);

/*
 * al_auth_challenge for a 401 answered to request_url (the registry URL the
 * challenge came from; NULL: treated as https). A Bearer realm must be
 * https, unless request_url is plain http (an insecure registry) and, when
 * credentials go with the token request, the realm's host is insecure on h
 * too (al_http_plain_allowed); otherwise AL_EAUTH naming the realm. A token
 * with a control character, space or non-ASCII byte is refused (AL_EPROTO):
 * it would become a header line. al_auth_challenge is this with
 * request_url NULL.
 */
AL_EXPORT int al_auth_challenge_url(al_auth *a, al_http *h,
                                    const char *registry,
                                    const char *repository,
                                    const char *www_authenticate,
                                    const char *scope, const char *request_url,
                                    char **header);

/* A cached "Authorization: ..." header still valid for (registry, scope)
 * and made with the credentials registry/repository would use now (the
 * same auth-file key or helper; repository may be NULL); AL_ENOTFOUND
 * otherwise, and when a credential helper not asked yet would decide
 * (none is run here). Caller frees. */
AL_EXPORT int al_auth_cached(al_auth *a, const char *registry,
                             const char *repository, const char *scope,
                             char **header);

/* Drop the cached headers for (registry, scope) made with the credentials
 * of registry/repository (after one was refused). */
AL_EXPORT void al_auth_invalidate(al_auth *a, const char *registry,
                                  const char *repository, const char *scope);

AL_END_DECL

#endif
