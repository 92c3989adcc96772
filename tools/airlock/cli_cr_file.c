/* cli_cr_file.c: a cluster-resources file written atomically, recorded in
 * the --json list and named on stderr (cli_cr_file.h). */
#include <stdlib.h>
#include <string.h>

#include "cli_cr_file.h"
#include "cli_diag.h"

/* 1 when line (len bytes, no newline) is a YAML "createdAt:" line. */
static int created_at_line(const char *line, size_t len)
{
	size_t i = 0;

	while (i < len && line[i] == ' ')
		i++;
	return len - i >= 10 && memcmp(line + i, "createdAt:", 10) == 0;
}

/*
 * 1 when the file at path holds b's lines, but for "createdAt:" lines
 * (the annotation that says when a resource was made): such a resource is
 * unchanged, and keeps the file, and the time, it already has, so that an
 * unchanged rerun writes (and syncs) nothing.
 */
static int same_but_created_at(const char *path, const al_buf *b)
{
	al_buf old = AL_BUF_INIT(b->len + 1024);
	const char *p, *q, *pe, *qe;
	int same = 1;

	if (al_fs_read_file(path, &old) < 0) {
		al_error_clear();
		al_buf_free(&old);
		return 0;
	}
	p = old.ptr != NULL ? (const char *)old.ptr : "";
	pe = p + old.len;
	q = b->ptr != NULL ? (const char *)b->ptr : "";
	qe = q + b->len;
	while (same && (p < pe || q < qe)) {
		const char *pn = memchr(p, '\n', (size_t)(pe - p));
		const char *qn = memchr(q, '\n', (size_t)(qe - q));
		size_t pl = (size_t)((pn != NULL ? pn : pe) - p);
		size_t ql = (size_t)((qn != NULL ? qn : qe) - q);

		same = (pl == ql && memcmp(p, q, pl) == 0) ||
		       (created_at_line(p, pl) && created_at_line(q, ql));
		same = same && (pn == NULL) == (qn == NULL);
		p = pn != NULL ? pn + 1 : pe;
		q = qn != NULL ? qn + 1 : qe;
	}
	al_buf_free(&old);
	return same;
}

/* Write b to DIR/file (atomically, unless the file holds it already but
 * for its creation time), record and name it. */
int cli_cr_put_file(const cli_cr_opts *o, const char *file, const al_buf *b,
                    json_t *files)
{
	char *path = al_path_join(o->dir, file);
	int rc = 0;

	if (path == NULL)
		return cli_fail(AL_ENOMEM, "out of memory");
	if (!same_but_created_at(path, b))
		rc = al_fs_write_atomic(
		    path, b->ptr != NULL ? b->ptr : (const uint8_t *)"",
		    b->len);
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
	/* a name not kept here would be pruned (cli_cluster_resources):
	 * failing keeps every file */
	if (o->written != NULL &&
	    json_array_append_new(o->written, json_string(file)) != 0)
		return cli_fail(AL_ENOMEM, "out of memory");
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
