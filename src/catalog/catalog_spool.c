/* catalog_spool.c: an unnamed scratch file for a catalog being read: the
 * FBC files of its layers until they are parsed, and the bulky opaque
 * property values of its bundles (olm.bundle.object, olm.csv.metadata)
 * until a rebuilt catalog is rendered. Memory then follows the catalog's
 * structure, not its size (docs/operators.md, "Memory"). */
#define _GNU_SOURCE /* O_TMPFILE, mkostemp */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "airlock/error.h"
#include "airlock/log.h"
#include "array_int.h"
#include "catalog_int.h"

/* A value spilled to the file; token is what the tree holds in its
 * place (an integer: its index here, held by the table, so that no value
 * read from a catalog can be taken for it). */
struct spilled {
	json_t *token;
	uint64_t off;
	size_t len;
};

struct cat_spool {
	int fd;
	uint64_t size;
	unsigned refs;
	struct spilled *v;
	size_t n, cap;
	al_buf text; /* a restored value's text (reused) */
};

/* O_TMPFILE where the file system has it (the file never has a name),
 * else a named file removed at once. */
static int open_scratch(const char *dir)
{
	char *tmpl;
	int fd;

#ifdef O_TMPFILE
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR &&
	                errno != EINVAL && errno != ENOTSUP))
		return fd;
#endif
	tmpl = al_sprintf("%s/.tmp-catalog-XXXXXX", dir);
	if (tmpl == NULL) {
		errno = ENOMEM;
		return -1;
	}
	fd = mkostemp(tmpl, O_CLOEXEC);
	if (fd >= 0)
		unlink(tmpl);
	free(tmpl);
	return fd;
}

int cat_spool_new(struct cat_spool **out, const char *dir)
{
	struct cat_spool *sp;

	*out = NULL;
	sp = calloc(1, sizeof(*sp));
	if (sp == NULL)
		return al_error_oom();
	sp->fd = open_scratch(dir);
	if (sp->fd < 0) {
		int e = errno;

		free(sp);
		return al_error_errno(e, "cannot create a scratch file in '%s'",
		                      dir);
	}
	sp->refs = 1;
	al_buf_init(&sp->text, AL_CATALOG_FILE_MAX);
	*out = sp;
	return 0;
}

struct cat_spool *cat_spool_ref(struct cat_spool *sp)
{
	if (sp != NULL)
		sp->refs++;
	return sp;
}

void cat_spool_unref(struct cat_spool *sp)
{
	size_t i;

	if (sp == NULL || --sp->refs > 0)
		return;
	for (i = 0; i < sp->n; i++)
		json_decref(sp->v[i].token);
	free(sp->v);
	al_buf_free(&sp->text);
	close(sp->fd);
	free(sp);
}

int cat_spool_put(struct cat_spool *sp, const void *p, size_t n, uint64_t *off)
{
	const uint8_t *b = p;
	uint64_t at = sp->size;
	size_t done = 0;

	while (done < n) {
		ssize_t w =
		    pwrite(sp->fd, b + done, n - done, (off_t)(at + done));

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return al_error_errno(w < 0 ? errno : EIO,
			                      "cannot write the catalog's "
			                      "scratch file");
		done += (size_t)w;
	}
	sp->size += n;
	*off = at;
	return 0;
}

int cat_spool_read(struct cat_spool *sp, uint64_t off, size_t n, uint8_t *dst)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r =
		    pread(sp->fd, dst + done, n - done, (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return al_error_errno(r < 0 ? errno : EIO,
			                      "cannot read the catalog's "
			                      "scratch file");
		done += (size_t)r;
	}
	return 0;
}

int cat_spool_spill(struct cat_spool *sp, json_t *value, json_t **token)
{
	struct spilled *nv;
	char *text;
	size_t len;
	uint64_t off = 0;
	int rc;

	*token = NULL;
	nv = al__array_grow(sp->v, &sp->cap, sp->n + 1, sizeof(*nv));
	if (nv == NULL)
		return AL_ENOMEM;
	sp->v = nv;
	/* compact, in order: json_loadb gives back an equal value with its
	 * keys in the same order, so rendering is unchanged */
	text = json_dumps(value,
	                  JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
	if (text == NULL)
		return al_error_oom();
	len = strlen(text);
	rc = cat_spool_put(sp, text, len, &off);
	free(text);
	if (rc < 0)
		return rc;
	sp->v[sp->n].token = json_integer((json_int_t)sp->n);
	if (sp->v[sp->n].token == NULL)
		return al_error_oom();
	sp->v[sp->n].off = off;
	sp->v[sp->n].len = len;
	*token = json_incref(sp->v[sp->n].token);
	sp->n++;
	return 0;
}

int cat_spool_restore(struct cat_spool *sp, const json_t *v, json_t **out)
{
	const struct spilled *s;
	json_error_t err;
	json_int_t k;
	uint8_t *text;
	int rc;

	*out = NULL;
	if (sp == NULL || !json_is_integer(v))
		return 0;
	k = json_integer_value(v);
	if (k < 0 || (size_t)k >= sp->n || sp->v[k].token != v)
		return 0;
	s = &sp->v[k];
	al_buf_reset(&sp->text);
	if ((rc = al_buf_reserve(&sp->text, s->len)) < 0)
		return rc;
	text = sp->text.ptr;
	if ((rc = cat_spool_read(sp, s->off, s->len, text)) == 0) {
		*out = json_loadb((const char *)text, s->len, JSON_DECODE_ANY,
		                  &err);
		if (*out == NULL)
			rc = json_error_code(&err) == json_error_out_of_memory
			         ? al_error_oom()
			         : al_error_set(AL_EIO,
			                        "the catalog's scratch file "
			                        "changed: %s",
			                        err.text);
	}
	return rc < 0 ? rc : 1;
}
