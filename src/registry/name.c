/* name.c: names read from fetched content checked where they enter (see
 * name_int.h and docs/security.md). */
#include <string.h>

#include "airlock/buf.h"
#include "airlock/error.h"
#include "name_int.h"

static int is_control(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

static int tag_char(unsigned char c, int first)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '_')
		return 1;
	return !first && (c == '.' || c == '-');
}

int al_name_ok(const char *s, size_t n, int kind, size_t max)
{
	size_t i;

	if (max == 0)
		max = AL_NAME_MAX;
	if (s == NULL || n == 0 || n > max)
		return 0;
	if (kind == AL_NAME_TAG) {
		if (n > 128)
			return 0;
		for (i = 0; i < n; i++)
			if (!tag_char((unsigned char)s[i], i == 0))
				return 0;
		return 1;
	}
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\0' || is_control(c))
			return 0;
		if (kind == AL_NAME_COMPONENT && (c == '/' || c == '\\'))
			return 0;
		if (kind == AL_NAME_FIELD && (c == ' ' || c == '='))
			return 0;
	}
	if (kind == AL_NAME_COMPONENT &&
	    ((n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.')))
		return 0;
	return 1;
}

int al_name_check(const char *what, const char *s, int kind, size_t max)
{
	static const char *const kinds[] = {"name", "path component", "field",
	                                    "tag"};
	char shown[4 * 64 + 1];
	size_t n;

	if (s != NULL && al_name_ok(s, strlen(s), kind, max))
		return 0;
	n = s != NULL ? strlen(s) : 0;
	al_str_escape(shown, sizeof(shown), s != NULL ? s : "",
	              n > 64 ? 64 : n);
	return al_error_set(AL_EPARSE, "%s '%s%s' is not a valid %s", what,
	                    shown, n > 64 ? "..." : "",
	                    kind >= 0 && kind <= AL_NAME_TAG ? kinds[kind]
	                                                     : "name");
}
