/* layer_int.h (internal): one image layer blob of the store read as a
 * stream: its media type checked, its bytes hashed and bounded by its
 * descriptor as libarchive pulls them (gzip or plain tar), its entries
 * handed one by one to the caller. Used by release.c (release-manifests/,
 * manifests/) and catalog_image.c (the FBC directory); what an entry means
 * (whiteouts, which directory, links, path checks) stays with them. */
#ifndef AL_LAYER_INT_H
#define AL_LAYER_INT_H

#include <stdint.h>

#include <jansson.h>
#include <zlib.h>

#include "airlock/buf.h"
#include "airlock/digest.h"
#include "airlock/oci.h"
#include "airlock/store.h"

/* The layer being walked (valid during al_layer_walk). */
typedef struct al_layer al_layer;

/* al_layer_entry.type */
enum {
	AL_LAYER_OTHER = 0, /* devices, fifos, sockets */
	AL_LAYER_REG,       /* a regular file (or a hard link: .hardlink) */
	AL_LAYER_DIR,
	AL_LAYER_SYMLINK
};

typedef struct al_layer_entry {
	const char *path; /* as the archive names it; never NULL */
	int type;
	int hardlink;   /* the entry is a hard link to an earlier one */
	int size_known; /* the tar header gives the size */
	uint64_t size;
} al_layer_entry;

/*
 * Called for each entry. Returns 0 to go on, < 0 (an error set) to stop
 * with it, or 1 to stop because libarchive failed (al_layer_read's 1):
 * al_layer_walk then decides between AL_EVERIFY and AL_EPARSE.
 */
typedef int (*al_layer_fn)(void *ud, al_layer *l, const al_layer_entry *e);

/*
 * Walk the layer d of s: a gzip or plain tar media type (anything else is
 * AL_EUNSUPPORTED), streamed from the blob through libarchive in bounded
 * buffers, entries in archive order. The digest decides first: bytes that
 * do not hash to d->digest, or more or fewer than d->size, are AL_EVERIFY
 * whatever libarchive or fn made of them; then fn's error; then a stream
 * libarchive cannot read is AL_EPARSE ("layer 'DIGEST' is not a readable
 * tar stream: ..."). AL_ENOMEM from fn stops at once.
 */
int al_layer_walk(al_store *s, const al_descriptor *d, al_layer_fn fn,
                  void *ud);

/* The layer's digest as text, for messages. */
const char *al_layer_name(const al_layer *l);

/*
 * The current entry's bytes appended to b, never past b->max: AL_ELIMIT
 * (no message: the caller words it) when the header's size or the bytes
 * exceed it; 1 when libarchive failed to read them (al_layer_error says
 * why); AL_ENOMEM. A size the header gives is allocated at once.
 */
int al_layer_read(al_layer *l, const al_layer_entry *e, al_buf *b);

/*
 * The same as a stream: the current entry's bytes handed to fn in chunks
 * (fn returns 0 or an error, which stops the read and is returned), at
 * most max of them (AL_ELIMIT, no message, past it); *n receives the
 * count. 1 when libarchive failed.
 */
int al_layer_read_to(al_layer *l, const al_layer_entry *e, uint64_t max,
                     int (*fn)(void *ud, const uint8_t *p, size_t n), void *ud,
                     uint64_t *n);
/* libarchive's message for its last failure (never NULL). */
const char *al_layer_error(const al_layer *l);

/* Writing one reproducible image layer (a POSIX tar with fixed owner,
 * time and modes, then gzip: layer_write.c), shared by the catalog rebuild
 * (catalog_image.c, which streams its tar) and the graph-data image
 * (graph_image.c, which builds it in memory). */

#define AL_LAYER_TAR_BLOCK 512

/*
 * What comes before an entry's data on w: a pax "path" record for a path
 * over 100 bytes, then the header of a directory (dir 1) or of a regular
 * file of len bytes. The data and al_layer_tar_pad follow. AL_ELIMIT for a
 * path too long for one record.
 */
int al_layer_tar_start(const al_writer *w, const char *path, int dir,
                       uint64_t len);
/* al_layer_tar_start for the path fmt makes. */
int al_layer_tar_named(const al_writer *w, int dir, uint64_t len,
                       const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Zeros from the end of len data bytes to the end of their last block. */
int al_layer_tar_pad(const al_writer *w, uint64_t len);
/* deflate set up for a gzip layer (level 6, gzip wrapper, no name, mtime
 * 0): the same bytes for the same tar, however its input is split. */
int al_layer_gzip_init(z_stream *zs);

/*
 * Append one tar entry to tar: a directory when dir is 1 (path should end
 * in '/', data ignored), else a regular file holding data (NULL: empty).
 * Owner 0/0, mtime 0, mode 0755 (directories) or 0644 (files); a path
 * over 100 bytes gets a pax "path" record. AL_ELIMIT when tar->max is
 * reached or the path is over 1,500 bytes.
 */
int al_layer_tar_entry(al_buf *tar, const char *path, int dir,
                       const al_buf *data);
/* The two zero blocks that end a tar archive. */
int al_layer_tar_end(al_buf *tar);
/* gzip of in appended to out (no file name, mtime 0, level 6): the same
 * bytes for the same input. */
int al_layer_gzip(const al_buf *in, al_buf *out);
/* {"mediaType", "digest", "size"}: a new reference, NULL on ENOMEM. */
json_t *al_layer_desc_json(const char *media_type, const al_digest *d,
                           uint64_t size);

#endif
