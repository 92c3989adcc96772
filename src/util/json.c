/* json.c: strict JSON on jansson: duplicate keys and trailing data refused,
 * errors with line and column. */
#include <stdlib.h>
#include <string.h>

#include "json_int.h"
#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/fs.h"

/*
 * Parse p[0..n) as exactly one JSON value (see json_int.h). jansson's EOF
 * check stays on, so anything after the value is an error; NUL bytes are
 * refused because JSON_ALLOW_NUL is not given.
 */
int al_json_parse(json_t **out, const uint8_t *p, size_t n, const char *what)
{
	json_error_t err;
	json_t *v;

	if (what == NULL)
		what = "JSON";
	if (p == NULL && n > 0)
		return al_error_set(AL_EINVAL, "%s: no input", what);
	/* jansson leaves err unset when an early allocation fails */
	memset(&err, 0, sizeof(err));
	v = json_loadb((const char *)(p != NULL ? p : (const uint8_t *)""), n,
	               JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &err);
	if (v == NULL) {
		/* jansson states every input error; one with no text is a
		 * failed allocation it did not name (tests/unit/test_oom.c) */
		if (json_error_code(&err) == json_error_out_of_memory ||
		    err.text[0] == '\0')
			return al_error_set(
			    AL_ENOMEM, "%s: out of memory parsing JSON", what);
		return al_error_set(AL_EPARSE, "%s: line %d, column %d: %s",
		                    what, err.line, err.column, err.text);
	}
	*out = v;
	return 0;
}

/* Read path (at most max bytes: AL_ELIMIT) and parse it; errors name path. */
int al_json_load_file(json_t **out, const char *path, size_t max)
{
	al_buf b = AL_BUF_INIT(max);
	int rc;

	rc = al_fs_read_file(path, &b);
	if (rc == AL_ELIMIT) {
		rc = al_error_set(AL_ELIMIT, "'%s' is larger than %zu bytes",
		                  path, max);
		goto out;
	}
	if (rc < 0)
		goto out;
	rc = al_json_parse(out, b.ptr, b.len, path);
out:
	al_buf_free(&b);
	return rc;
}

/* Serialise v (any value, not only objects); caller frees; NULL on failure. */
char *al_json_dump(const json_t *v, int indent)
{
	size_t flags = JSON_PRESERVE_ORDER | JSON_ENCODE_ANY;

	if (v == NULL)
		return NULL;
	if (indent > 0)
		flags |= JSON_INDENT(indent > 31 ? 31 : indent);
	else
		flags |= JSON_COMPACT;
	return json_dumps(v, flags);
}

/* Write v with a trailing newline to path atomically (fs.h). */
int al_json_save_file(const char *path, const json_t *v, int indent)
{
	char *s = al_json_dump(v, indent);
	char *line = NULL;
	int rc;

	if (s == NULL)
		return al_error_set(AL_ENOMEM, "cannot serialise JSON for '%s'",
		                    path);
	line = al_sprintf("%s\n", s);
	if (line == NULL) {
		rc = al_error_set(AL_ENOMEM, "cannot serialise JSON for '%s'",
		                  path);
		goto out;
	}
	rc = al_fs_write_atomic(path, line, strlen(line));
out:
	free(line);
	free(s);
	return rc;
}

/* Borrowed string value of obj[key], NULL when absent or not a string. */
const char *al_json_str(const json_t *obj, const char *key)
{
	const json_t *v;

	if (obj == NULL || !json_is_object(obj))
		return NULL;
	v = json_object_get(obj, key);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

int al_json_only_members(const json_t *obj, const char *what, const char *where,
                         const char *const *allowed, int require_all)
{
	const char *key, *dot = where[0] != '\0' ? "." : "";
	json_t *v;
	size_t i;

	json_object_foreach((json_t *)obj, key, v)
	{
		(void)v;
		for (i = 0; allowed[i] != NULL; i++)
			if (strcmp(allowed[i], key) == 0)
				break;
		if (allowed[i] == NULL)
			return al_error_set(AL_EPARSE,
			                    "%s: unknown field '%s%s%s'", what,
			                    where, dot, key);
	}
	for (i = 0; require_all && allowed[i] != NULL; i++)
		if (json_object_get(obj, allowed[i]) == NULL)
			return al_error_set(AL_EPARSE,
			                    "%s: missing field '%s%s%s'", what,
			                    where, dot, allowed[i]);
	return 0;
}

json_t *al_json_copy(json_t *v)
{
	json_t *c = json_copy(v);

	if (c != NULL &&
	    (json_is_object(v)  ? json_object_size(c) != json_object_size(v)
	     : json_is_array(v) ? json_array_size(c) != json_array_size(v)
	                        : 0)) {
		json_decref(c);
		return NULL;
	}
	return c;
}
