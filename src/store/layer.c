/* layer.c: one image layer blob read as a verified stream (layer_int.h):
 * media type, libarchive (gzip, tar), digest and size checked against the
 * descriptor (image-spec descriptor.md, layer.md). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "airlock/digest.h"
#include "airlock/error.h"
#include "layer_int.h"

#define LAYER_CHUNK 65536

struct al_layer {
	int fd;
	al_hasher *h;
	uint64_t nread;
	uint64_t limit; /* the descriptor's size: more is never needed */
	int rc;         /* our own failure in the read callback, if any */
	struct archive *a;
	struct archive_entry *ent;
	char ds[AL_DIGEST_STRMAX];
	uint8_t buf[LAYER_CHUNK];   /* compressed bytes for libarchive */
	uint8_t chunk[LAYER_CHUNK]; /* an entry's bytes for the caller */
};

static int type_ok(const char *mt)
{
	return mt != NULL && (strcmp(mt, AL_MT_OCI_LAYER_GZIP) == 0 ||
	                      strcmp(mt, AL_MT_OCI_LAYER) == 0 ||
	                      strcmp(mt, AL_MT_DOCKER_LAYER_GZIP) == 0 ||
	                      strcmp(mt, AL_MT_DOCKER_LAYER) == 0);
}

/* libarchive's read callback: the blob, hashed and bounded as it goes. */
static la_ssize_t layer_read_cb(struct archive *a, void *ud, const void **out)
{
	al_layer *l = ud;
	ssize_t r;

	do {
		r = read(l->fd, l->buf, sizeof(l->buf));
	} while (r < 0 && errno == EINTR);
	if (r < 0) {
		l->rc = al_error_errno(errno, "cannot read layer");
		archive_set_error(a, EIO, "read failed");
		return -1;
	}
	if ((uint64_t)r > l->limit - l->nread) {
		l->rc = AL_EVERIFY;
		archive_set_error(a, EIO,
		                  "layer is longer than its descriptor says");
		return -1;
	}
	l->nread += (uint64_t)r;
	if (al_hasher_update(l->h, l->buf, (size_t)r) < 0) {
		l->rc = AL_ENOMEM;
		archive_set_error(a, ENOMEM, "hash failed");
		return -1;
	}
	*out = l->buf;
	return (la_ssize_t)r;
}

/* Hash what libarchive left unread and compare with the descriptor. */
static int layer_verify(al_layer *l, const al_descriptor *d)
{
	char gs[AL_DIGEST_STRMAX];
	al_digest got;
	int rc;

	while (l->rc == 0) {
		ssize_t r = read(l->fd, l->buf, sizeof(l->buf));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return al_error_errno(errno, "cannot read layer '%s'",
			                      l->ds);
		if (r == 0)
			break;
		if ((uint64_t)r > l->limit - l->nread) {
			l->rc = AL_EVERIFY;
			break;
		}
		l->nread += (uint64_t)r;
		if ((rc = al_hasher_update(l->h, l->buf, (size_t)r)) < 0)
			return rc;
	}
	if (l->rc < 0 && l->rc != AL_EVERIFY)
		return l->rc;
	if (l->rc == AL_EVERIFY || l->nread != d->size)
		return al_error_set(AL_EVERIFY,
		                    "layer '%s' is not %llu bytes long", l->ds,
		                    (unsigned long long)d->size);
	if ((rc = al_hasher_final(l->h, &got)) < 0)
		return rc;
	if (!al_digest_equal(&got, &d->digest))
		return al_error_set(
		    AL_EVERIFY,
		    "digest mismatch for layer '%s': the bytes hash to '%s'",
		    l->ds, al_digest_str(&got, gs));
	return 0;
}

static void entry_of(struct archive_entry *ent, const char *path,
                     al_layer_entry *e)
{
	memset(e, 0, sizeof(*e));
	e->path = path;
	switch (archive_entry_filetype(ent)) {
	case AE_IFREG:
		e->type = AL_LAYER_REG;
		break;
	case AE_IFDIR:
		e->type = AL_LAYER_DIR;
		break;
	case AE_IFLNK:
		e->type = AL_LAYER_SYMLINK;
		break;
	default:
		e->type = AL_LAYER_OTHER;
		break;
	}
	e->hardlink = archive_entry_hardlink(ent) != NULL;
	if (archive_entry_size_is_set(ent) && archive_entry_size(ent) >= 0) {
		e->size_known = 1;
		e->size = (uint64_t)archive_entry_size(ent);
	}
}

/* The entries, one by one: 0 at the end, 1 when libarchive failed, or
 * fn's own result. */
static int walk_entries(al_layer *l, al_layer_fn fn, void *ud)
{
	for (;;) {
		al_layer_entry e;
		const char *path;
		int r = archive_read_next_header(l->a, &l->ent);

		if (r == ARCHIVE_EOF)
			return 0;
		if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
			return 1;
		path = archive_entry_pathname(l->ent);
		if (path == NULL)
			continue;
		entry_of(l->ent, path, &e);
		if ((r = fn(ud, l, &e)) != 0)
			return r;
	}
}

int al_layer_walk(al_store *s, const al_descriptor *d, al_layer_fn fn, void *ud)
{
	char ds[AL_DIGEST_STRMAX];
	al_layer *l = NULL;
	int rc, arc = 0;

	al_digest_str(&d->digest, ds);
	if (!type_ok(d->media_type))
		return al_error_set(
		    AL_EUNSUPPORTED,
		    "layer '%s': media type '%s' is not supported", ds,
		    d->media_type != NULL ? d->media_type : "");
	l = calloc(1, sizeof(*l));
	if (l == NULL)
		return al_error_oom();
	l->fd = -1;
	l->limit = d->size;
	memcpy(l->ds, ds, sizeof(ds));
	if ((rc = al_hasher_new(&l->h, d->digest.algo)) < 0 ||
	    (rc = al_store_blob_open(s, &d->digest, &l->fd, NULL)) < 0)
		goto out;
	if ((l->a = archive_read_new()) == NULL) {
		rc = al_error_oom();
		goto out;
	}
	archive_read_support_filter_gzip(l->a);
	archive_read_support_format_tar(l->a);
	archive_read_support_format_empty(l->a);
	if (archive_read_open(l->a, l, NULL, layer_read_cb, NULL) != ARCHIVE_OK)
		arc = 1;
	else
		arc = walk_entries(l, fn, ud);
	if (arc == AL_ENOMEM) {
		rc = arc;
		goto out;
	}
	/* The digest decides first: bad bytes are AL_EVERIFY whatever
	 * libarchive (or a bound) made of them. */
	if ((rc = layer_verify(l, d)) < 0)
		goto out;
	if (arc < 0) {
		rc = arc;
		goto out;
	}
	if (arc > 0)
		rc = al_error_set(AL_EPARSE,
		                  "layer '%s' is not a readable tar stream: %s",
		                  ds, al_layer_error(l));
out:
	if (l->a != NULL)
		archive_read_free(l->a);
	if (l->fd >= 0)
		close(l->fd);
	al_hasher_free(l->h);
	free(l);
	return rc;
}

const char *al_layer_name(const al_layer *l)
{
	return l->ds;
}

const char *al_layer_error(const al_layer *l)
{
	const char *m = l->a != NULL ? archive_error_string(l->a) : NULL;

	return m != NULL ? m : "unknown error";
}

int al_layer_read_to(al_layer *l, const al_layer_entry *e, uint64_t max,
                     int (*fn)(void *ud, const uint8_t *p, size_t n), void *ud,
                     uint64_t *n)
{
	int rc;

	*n = 0;
	if (e->size_known && e->size > max)
		return AL_ELIMIT;
	for (;;) {
		la_ssize_t r =
		    archive_read_data(l->a, l->chunk, sizeof(l->chunk));

		if (r == 0)
			return 0;
		if (r < 0)
			return 1;
		if ((uint64_t)r > max - *n)
			return AL_ELIMIT;
		if ((rc = fn(ud, l->chunk, (size_t)r)) < 0)
			return rc;
		*n += (uint64_t)r;
	}
}

static int buf_sink(void *ud, const uint8_t *p, size_t n)
{
	return al_buf_append(ud, p, n);
}

int al_layer_read(al_layer *l, const al_layer_entry *e, al_buf *b)
{
	uint64_t n;
	int rc;

	if (e->size_known) {
		if (e->size > (uint64_t)b->max)
			return AL_ELIMIT;
		/* one allocation of the size the tar header gives */
		if ((rc = al_buf_reserve(b, (size_t)e->size)) < 0)
			return rc;
	}
	return al_layer_read_to(l, e, UINT64_MAX, buf_sink, b, &n);
}
