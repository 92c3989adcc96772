/* layer_write.c: one reproducible image layer written by airlock (a POSIX
 * tar with fixed owner, time and modes, then gzip), for the catalog rebuild
 * (catalog_image.c) and the graph-data image (graph_image.c); the reader
 * of layers is layer.c. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <zlib.h>

#include "airlock/error.h"
#include "layer_int.h"

/* The largest pax "path" record: a path of up to about 1,600 bytes. */
#define LAYER_PAX_MAX (1024 + 600)

/*
 * A POSIX tar (pax) writer for the layers airlock builds (the rebuilt
 * catalog, the graph-data image): ustar headers, a pax
 * "path" record for names over 100 bytes, fixed owner (0/0), time (0) and
 * modes, two zero blocks at the end: every field is fixed here, so the
 * layer (and its digest) is byte-for-byte reproducible from its content
 * alone, whatever libarchive version would have written it.
 */
static void tar_octal(char *field, size_t width, uint64_t v)
{
	size_t i = width - 1;

	field[i] = '\0';
	while (i-- > 0) {
		field[i] = (char)('0' + (v & 7));
		v >>= 3;
	}
}

static int tar_header(const al_writer *w, const char *name, char type,
                      uint64_t size, unsigned mode)
{
	uint8_t h[AL_LAYER_TAR_BLOCK];
	unsigned sum = 0;
	size_t i, n = strlen(name);

	memset(h, 0, sizeof(h));
	memcpy(h, name, n < 100 ? n : 100);
	tar_octal((char *)h + 100, 8, mode);
	tar_octal((char *)h + 108, 8, 0);
	tar_octal((char *)h + 116, 8, 0);
	tar_octal((char *)h + 124, 12, size);
	tar_octal((char *)h + 136, 12, 0);
	memset(h + 148, ' ', 8);
	h[156] = (uint8_t)type;
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	for (i = 0; i < sizeof(h); i++)
		sum += h[i];
	tar_octal((char *)h + 148, 7, sum);
	h[155] = ' ';
	return w->write(w->ud, h, sizeof(h));
}

/* Zeros from the end of len data bytes to the end of their last block. */
int al_layer_tar_pad(const al_writer *w, uint64_t len)
{
	static const uint8_t zero[AL_LAYER_TAR_BLOCK];

	if (len % AL_LAYER_TAR_BLOCK == 0)
		return 0;
	return w->write(w->ud, zero,
	                AL_LAYER_TAR_BLOCK - len % AL_LAYER_TAR_BLOCK);
}

/*
 * What comes before an entry's data: a pax "path" record for a name over
 * 100 bytes, then the header of a directory (dir 1) or of a regular file
 * of len bytes. The data and tar_pad follow.
 */
int al_layer_tar_start(const al_writer *w, const char *path, int dir,
                       uint64_t len)
{
	size_t n = strlen(path);
	int rc;

	if (n > 100) {
		/* pax extended header: "<len> path=<path>\n", len counting
		 * itself */
		char rec[LAYER_PAX_MAX];
		size_t body = n + strlen(" path=\n"), digits = 1, total;
		int k;

		while (1) {
			size_t p10 = 1, j;

			for (j = 0; j < digits; j++)
				p10 *= 10;
			if (body + digits < p10)
				break;
			digits++;
		}
		total = body + digits;
		k = snprintf(rec, sizeof(rec), "%zu path=%s\n", total, path);
		if (k < 0 || (size_t)k != total)
			return al_error_set(AL_ELIMIT,
			                    "name '%.40s...' too long", path);
		if ((rc = tar_header(w, "././@PaxHeader", 'x', total, 0644)) <
		        0 ||
		    (rc = w->write(w->ud, (const uint8_t *)rec, total)) < 0 ||
		    (rc = al_layer_tar_pad(w, total)) < 0)
			return rc;
	}
	return tar_header(w, path, dir ? '5' : '0', dir ? 0 : len,
	                  dir ? 0755 : 0644);
}

int al_layer_tar_named(const al_writer *w, int dir, uint64_t len,
                       const char *fmt, ...)
{
	al_buf path = AL_BUF_INIT(64 * 1024); /* tar_start bounds it */
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = al_buf_vprintf(&path, fmt, ap);
	va_end(ap);
	if (rc == 0)
		rc = al_layer_tar_start(w, al_buf_cstr(&path), dir, len);
	al_buf_free(&path);
	return rc;
}

/* One entry whose data is at hand: a directory (dir 1, no data) or a
 * regular file of the n bytes at p. */
static int tar_entry(const al_writer *w, const char *path, int dir,
                     const uint8_t *p, size_t n)
{
	int rc;

	if (dir)
		n = 0;
	if ((rc = al_layer_tar_start(w, path, dir, n)) < 0)
		return rc;
	if (n > 0 && (rc = w->write(w->ud, p, n)) < 0)
		return rc;
	return al_layer_tar_pad(w, n);
}

/* deflate for a gzip layer: level 6, windowBits 15 + 16 (a gzip wrapper,
 * no name, mtime 0), memLevel 8. Shared by al_layer_gzip and the catalog's
 * layer stream, which must write the same bytes for the same tar. */
int al_layer_gzip_init(z_stream *zs)
{
	memset(zs, 0, sizeof(*zs));
	if (deflateInit2(zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return al_error_set(AL_ENOMEM, "cannot initialise zlib");
	return 0;
}

int al_layer_gzip(const al_buf *in, al_buf *out)
{
	z_stream zs;
	uint8_t chunk[65536];
	int zr, rc = 0;

	if ((rc = al_layer_gzip_init(&zs)) < 0)
		return rc;
	zs.next_in = in->ptr;
	zs.avail_in = (uInt)in->len;
	do {
		zs.next_out = chunk;
		zs.avail_out = sizeof(chunk);
		zr = deflate(&zs, Z_FINISH);
		if (zr == Z_STREAM_ERROR) {
			rc = al_error_set(AL_ENOMEM, "zlib failed");
			break;
		}
		if ((rc = al_buf_append(out, chunk,
		                        sizeof(chunk) - zs.avail_out)) < 0)
			break;
	} while (zr != Z_STREAM_END);
	deflateEnd(&zs);
	return rc;
}

int al_layer_tar_entry(al_buf *tar, const char *path, int dir,
                       const al_buf *data)
{
	al_writer w = al_buf_writer(tar);

	if (data == NULL)
		return tar_entry(&w, path, dir, NULL, 0);
	return tar_entry(&w, path, dir, data->ptr, data->len);
}

int al_layer_tar_end(al_buf *tar)
{
	static const uint8_t zero[2 * AL_LAYER_TAR_BLOCK];

	return al_buf_append(tar, zero, sizeof(zero));
}

json_t *al_layer_desc_json(const char *media_type, const al_digest *d,
                           uint64_t size)
{
	char ds[AL_DIGEST_STRMAX];

	return json_pack("{s:s, s:s, s:I}", "mediaType", media_type, "digest",
	                 al_digest_str(d, ds), "size", (json_int_t)size);
}
