/* cli_json.c: the --json result document of a command (docs/json.md); the
 * JSON form of log lines is cli_diag.c's. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli_diag.h"
#include "cli_json.h"

/* One command runs per process: the open document is process state, used
 * from the main thread only (log lines from worker threads never touch
 * it). */
static json_t *doc;
static int doc_failed;

static void set_new(json_t *obj, const char *key, json_t *v)
{
	if (obj == NULL || v == NULL || json_object_set_new(obj, key, v) < 0)
		doc_failed = 1;
}

void cli_json_set_str(json_t *obj, const char *key, const char *s)
{
	set_new(obj, key, cli_str_json(s));
}

void cli_json_set_u64(json_t *obj, const char *key, uint64_t v)
{
	/* json_int_t is long long: past it, saturate (never negative) */
	set_new(
	    obj, key,
	    json_integer(v > (uint64_t)LLONG_MAX ? LLONG_MAX : (json_int_t)v));
}

void cli_json_set_int(json_t *obj, const char *key, long long v)
{
	set_new(obj, key, json_integer(v));
}

void cli_json_set_bool(json_t *obj, const char *key, int v)
{
	set_new(obj, key, json_boolean(v));
}

void cli_json_set_digest(json_t *obj, const char *key, const al_digest *d)
{
	char s[AL_DIGEST_STRMAX];

	if (d == NULL) {
		set_new(obj, key, json_null());
		return;
	}
	set_new(obj, key, json_string(al_digest_str(d, s)));
}

json_t *cli_json_set_array(json_t *obj, const char *key)
{
	json_t *a = json_array();

	if (a == NULL || obj == NULL || json_object_set_new(obj, key, a) < 0) {
		doc_failed = 1;
		return NULL;
	}
	return a;
}

json_t *cli_json_set_object(json_t *obj, const char *key)
{
	json_t *o = json_object();

	if (o == NULL || obj == NULL || json_object_set_new(obj, key, o) < 0) {
		doc_failed = 1;
		return NULL;
	}
	return o;
}

json_t *cli_json_append_object(json_t *arr)
{
	json_t *o = json_object();

	if (o == NULL || arr == NULL || json_array_append_new(arr, o) < 0) {
		doc_failed = 1;
		return NULL;
	}
	return o;
}

void cli_json_append_str(json_t *arr, const char *s)
{
	json_t *v = cli_str_json(s);

	if (v == NULL || arr == NULL || json_array_append_new(arr, v) < 0)
		doc_failed = 1;
}

void cli_json_set_stats(json_t *obj, const char *key,
                        const al_transfer_stats *st)
{
	json_t *o = cli_json_set_object(obj, key);

	cli_json_set_u64(o, "images", st->images);
	cli_json_set_u64(o, "images_failed", st->images_failed);
	cli_json_set_u64(o, "images_unchanged", st->images_unchanged);
	cli_json_set_u64(o, "blobs_transferred", st->blobs_transferred);
	cli_json_set_u64(o, "bytes_transferred", st->bytes_transferred);
	cli_json_set_u64(o, "blobs_present", st->blobs_present);
	cli_json_set_u64(o, "bytes_present", st->bytes_present);
	cli_json_set_u64(o, "manifests", st->manifests);
	cli_json_set_u64(o, "elapsed_ms", st->elapsed_ms);
}

/* Each diagnostic while a document is open (cli_set_note): kind "error"
 * or "warning". */
static void doc_note(const char *kind, const char *msg)
{
	const char *key = strcmp(kind, "error") == 0 ? "errors" : "warnings";
	json_t *arr;

	if (doc == NULL)
		return;
	arr = json_object_get(doc, key);
	if (arr == NULL)
		arr = cli_json_set_array(doc, key);
	cli_json_append_str(arr, msg);
}

int cli_json_begin(const char *command)
{
	char schema[96];

	json_decref(doc);
	doc_failed = 0;
	doc = json_object();
	if (doc == NULL || snprintf(schema, sizeof(schema), "airlock.%s/v1",
	                            command) >= (int)sizeof(schema)) {
		json_decref(doc);
		doc = NULL;
		cli_error("out of memory");
		return -1;
	}
	cli_json_set_str(doc, "schema", schema);
	cli_set_note(doc_note);
	return 0;
}

int cli_json_active(void)
{
	return doc != NULL;
}

json_t *cli_json_root(void)
{
	return doc;
}

int cli_json_finish(int code)
{
	char *text = NULL;
	json_t *d = doc;
	int failed;

	if (d == NULL)
		return code;
	doc = NULL;
	cli_set_note(NULL);
	cli_json_set_int(d, "exit", code);
	failed = doc_failed;
	if (!failed)
		text = json_dumps(d, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(d);
	if (text == NULL) {
		cli_error("cannot build the JSON result: out of memory");
		return code == EXIT_OK ? EXIT_RUNTIME : code;
	}
	if (fputs(text, stdout) == EOF || fputc('\n', stdout) == EOF) {
		free(text);
		/* main.c's flush check says why */
		return code;
	}
	free(text);
	return code;
}
