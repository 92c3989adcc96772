/* cli_hint.h: diagnostics that say what to do: hints for known transport
 * failures and the habits of other tools' command lines (docs/commands.md,
 * "Errors"). Below every diagnostic: it prints nothing itself. */
#ifndef AIRLOCK_CLI_HINT_H
#define AIRLOCK_CLI_HINT_H

#include <stddef.h>

/*
 * The advice for an error message, or NULL: a TLS handshake answered in
 * plain HTTP ("use --tls-verify=false for HTTP registries"), a certificate
 * signed by an unknown CA (--ca-file, certs.d), a host name that does not
 * resolve. Used by every diagnostic (cli_diag.c).
 */
const char *cli_hint_for(const char *msg);

/* Append "; <advice>" of cli_hint_for to the NUL-terminated msg (cap
 * bytes), when it fits. */
void cli_hint_append(char *msg, size_t cap);

/*
 * Join "ctx: msg" without saying anything twice: drops trailing ':' and
 * blanks of ctx (in place) and returns msg past its leading ones, and
 * past "'X' is " / "'X': " when ctx ends with the same quoted subject
 * 'X' ("cannot open store 'S'" + "'S' is not a store" -> "... 'S': not a
 * store"). Borrowed from msg.
 */
const char *cli_join_subject(char *ctx, const char *msg);

/*
 * The refusal for a `mirror` argument that is a habit of another tool,
 * or NULL: a docker:// destination without tag or digest (oc-mirror's
 * mirror-to-mirror: pushing is `airlock push`), file:// (oc-mirror's
 * mirror-to-disk: --store DIR). Written into buf.
 */
const char *cli_mirror_arg_refusal(const char *arg, char *buf, size_t cap);

/*
 * 1 when an image reference names no registry (a bare "extra-tag" or
 * "library/busybox:1"): docker's default of docker.io is a guess airlock
 * does not make for what it will later push.
 */
int cli_ref_is_bare(const char *ref);

#endif
