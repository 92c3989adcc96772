/* fuzz_imageset.c: fuzz target for YAML: al_yaml_load, YAML -> JSON -> YAML round trips, and al_imageset_load on the input as a file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/imageset.h"
#include "yaml_int.h"
#include "harness.h"

/* The loader takes up to 1 MiB; fuzz inputs stay far below. */
#define FUZZ_YAML_MAX (256 * 1024)

/* al_yaml_emit_json promises that load + to_json gives back the same JSON. */
static void round_trip(al_yaml_node **docs, size_t ndocs)
{
	json_t **js = NULL;
	al_yaml_node **again = NULL;
	size_t nagain = 0, i, nj = 0;
	al_buf out = AL_BUF_INIT(16 * AL_MIB);

	js = calloc(ndocs ? ndocs : 1, sizeof(*js));
	if (js == NULL)
		return;
	for (i = 0; i < ndocs; i++) {
		if (al_yaml_to_json(&js[i], docs[i]) < 0) {
			al_error_clear();
			goto out; /* integers out of range, .inf: JSON cannot carry them */
		}
		nj++;
	}
	if (al_yaml_emit_json(&out, js, ndocs) < 0) {
		al_error_clear();
		goto out;
	}
	if (al_yaml_load(&again, &nagain, out.ptr, out.len, "emitted") < 0)
		al_fuzz_fail("imageset", "emitted YAML does not load again");
	if (nagain != ndocs)
		al_fuzz_fail("imageset", "emitted YAML has another number of documents");
	for (i = 0; i < ndocs; i++) {
		json_t *j = NULL;
		if (al_yaml_to_json(&j, again[i]) < 0)
			al_fuzz_fail("imageset", "emitted YAML does not convert to JSON again");
		if (!json_equal(j, js[i]))
			al_fuzz_fail("imageset", "YAML -> JSON -> YAML -> JSON changed the value");
		json_decref(j);
	}
out:
	for (i = 0; i < nj; i++)
		json_decref(js[i]);
	free(js);
	al_yaml_docs_free(again, nagain);
	al_buf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *path;
	al_yaml_node **docs = NULL;
	size_t ndocs = 0;
	al_imageset *cfg = NULL;
	int rc;

	if (size > FUZZ_YAML_MAX)
		return 0;
	al_fuzz_quiet();
	rc = al_yaml_load(&docs, &ndocs, data, size, "fuzz input");
	al_fuzz_note("imageset", "al_yaml_load", rc);
	if (rc == 0) {
		round_trip(docs, ndocs);
		al_yaml_docs_free(docs, ndocs);
	}
	al_error_clear();

	/* relative paths in the file (oci:layout, keyrings) resolve against this directory */
	if (path == NULL) {
		char *dir = al_fuzz_fresh_dir("imageset");
		size_t len = strlen(dir) + sizeof("/imageset.yaml");
		path = malloc(len);
		if (path == NULL || snprintf(path, len, "%s/imageset.yaml", dir) < 0)
			al_fuzz_fail("imageset", "out of memory");
		free(dir);
	}
	al_fuzz_write_file(path, data, size);
	rc = al_imageset_load(&cfg, path);
	al_fuzz_note("imageset", "al_imageset_load", rc);
	if (rc == 0) {
		if (cfg->path == NULL || strcmp(cfg->path, path) != 0)
			al_fuzz_fail("imageset", "loaded configuration does not name its file");
		al_imageset_free(cfg);
	}
	al_error_clear();
	return 0;
}
