/* name_int.h: the checks every name read from fetched content passes where it
 * enters (chart names and versions, catalog package, channel and bundle names,
 * registry tags, annotation values), before it becomes a path, a reference,
 * a tag or a line of any output (docs/security.md). */
#ifndef AL_NAME_INT_H
#define AL_NAME_INT_H

#include <stddef.h>

/* Longest name accepted from fetched content (a DNS name is 253; a tag 128;
 * Helm and FBC names are far shorter in practice). */
#define AL_NAME_MAX 253

/* What a name may be. */
enum {
	/* Printable text: no C0 control byte, no DEL, nonempty. */
	AL_NAME_TEXT = 0,
	/* One path component: TEXT, no '/' or '\\', not "." or "..". */
	AL_NAME_COMPONENT = 1,
	/* A field of a line-oriented output (KEY=VALUE, TAB-separated):
	 * TEXT and no space, '=' or TAB. */
	AL_NAME_FIELD = 2,
	/* An OCI tag: [A-Za-z0-9_][A-Za-z0-9._-]{0,127} (distribution spec,
	 * "Pulling manifests"). */
	AL_NAME_TAG = 3,
};

/* 1 when the n bytes at s are a name of the given kind no longer than max
 * (AL_NAME_MAX when max is 0), else 0. NULL is never a name. */
int al_name_ok(const char *s, size_t n, int kind, size_t max);

/* al_name_ok on a C string; when it is not, set AL_EPARSE "WHAT 'ESCAPED' is
 * not a valid ..." (the name escaped, cut to a printable length) and return
 * it. */
int al_name_check(const char *what, const char *s, int kind, size_t max);

#endif
