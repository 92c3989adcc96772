/* cli_cr_file.c: a cluster-resources file written atomically, recorded in
 * the --json list and named on stderr (cli_cr_file.h). */
#include <stdlib.h>

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
