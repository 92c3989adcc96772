/* cli_cr_file.c: a cluster-resources file written atomically, recorded in
 * the --json list and named on stderr (cli_cr_file.h). */
#include <stdlib.h>
#include <string.h>

#include "cli_cr_file.h"
#include "cli_diag.h"

/* Write b to DIR/file (atomically), record and name it. */
int cli_cr_put_file(const cli_cr_opts *o, const char *file, const al_buf *b,
                    json_t *files)
{
	char *path = al_path_join(o->dir, file);
	int rc;

	if (path == NULL)
		return cli_fail(AL_ENOMEM, "out of memory");
	rc = al_fs_write_atomic(
	    path, b->ptr != NULL ? b->ptr : (const uint8_t *)"", b->len);
	if (rc < 0) {
		rc = cli_fail(rc, "cannot write '%s'", path);
		free(path);
		return rc;
	}
	if (files != NULL)
		json_array_append_new(files, json_string(path));
	if (!o->quiet)
		cli_event(path);
	free(path);
	return EXIT_OK;
}

int cli_cr_target(const al_layout *l, const char *name, const char *dest,
                  unsigned max_nested, char **repo, char **ref)
{
	return cli_cr_target_at(l, name, 0, dest, max_nested, repo, ref);
}

int cli_cr_target_at(const al_layout *l, const char *name, size_t place,
                     const char *dest, unsigned max_nested, char **repo,
                     char **ref)
{
	const char *slash = strchr(dest, '/');
	char *host = slash != NULL ? al_strndup(dest, (size_t)(slash - dest))
	                           : al_strdup(dest);
	char *r = NULL, *f = NULL, *full;
	int rc;

	if (host == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	if ((rc = al_push_target_layout_at(l, name, place,
	                                   slash != NULL ? slash + 1 : "",
	                                   max_nested, &r, &f)) < 0) {
		free(host);
		return rc;
	}
	full = al_sprintf("%s/%s", host, r);
	free(host);
	free(r);
	if (full == NULL) {
		free(f);
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	*repo = full;
	*ref = f;
	return 0;
}
