/* transfer_upload.c: a chunked blob upload that survives a failed request
 * and a killed run: the session (its Location and the bytes the registry
 * acknowledged) is kept in a file, and the next attempt asks the registry
 * where the session stands and continues from there (docs/push.md
 * "Resuming an upload"). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/log.h"
#include "json_int.h"
#include "transfer_upload_int.h"

/* A session file is a few hundred bytes; anything larger is not ours. */
#define SESSION_FILE_MAX (64 * 1024)
/* Failed chunks one upload survives before it gives up (each one asks
 * the registry for the session's status, or starts a new session). */
#define UPLOAD_FAILURES_MAX 4

/* The bytes [start, start + len) of a file, read with pread: the upload
 * streams from the blob file at any offset, one buffer at a time. */
typedef struct window {
	int fd;
	uint64_t start, len, done;
} window;

static int window_read(void *ud, uint8_t *p, size_t cap, size_t *got)
{
	window *w = ud;
	uint64_t left = w->len - w->done;
	size_t want = cap < left ? cap : (size_t)left;
	ssize_t n;

	*got = 0;
	if (want == 0)
		return 0;
	do {
		n = pread(w->fd, p, want, (off_t)(w->start + w->done));
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return al_error_set(AL_EIO, "cannot read the blob: %s",
		                    strerror(errno));
	if (n == 0)
		return al_error_set(AL_EIO,
		                    "the blob file ended %llu bytes "
		                    "early",
		                    (unsigned long long)left);
	w->done += (uint64_t)n;
	*got = (size_t)n;
	return 0;
}

static int window_rewind(void *ud)
{
	((window *)ud)->done = 0;
	return 0;
}

/* The session file of (host, repo, digest) under dir. Caller frees. */
static char *session_path(const char *dir, const char *host, const char *repo,
                          const al_digest *d)
{
	char ds[AL_DIGEST_STRMAX], hex[AL_DIGEST_STRMAX], name[160];
	al_digest key;
	char *id;
	int rc, n;

	al_digest_str(d, ds);
	if ((id = al_sprintf("%s\n%s\n%s", host, repo, ds)) == NULL)
		return NULL;
	rc = al_digest_bytes(&key, AL_DIGEST_SHA256, id, strlen(id));
	free(id);
	if (rc < 0)
		return NULL;
	al_digest_hex(&key, hex);
	n = snprintf(name, sizeof(name), "%.32s.json", hex);
	if (n < 0 || (size_t)n >= sizeof(name))
		return NULL;
	return al_path_join(dir, name);
}

/* The session a file names for this very blob, or 0 with *location
 * NULL (none, or a file that is not one: ignored, replaced later). */
static int session_load(const char *path, const char *host, const char *repo,
                        const al_digest *d, uint64_t size, char **location,
                        uint64_t *offset)
{
	char ds[AL_DIGEST_STRMAX];
	json_t *doc = NULL;
	const char *loc;
	json_int_t off;

	*location = NULL;
	*offset = 0;
	if (path == NULL || al_fs_exists(path) != 1)
		return 0;
	if (al_json_load_file(&doc, path, SESSION_FILE_MAX) < 0) {
		al_log_debug("upload: ignoring '%s': %s", path,
		             al_error_message());
		al_error_clear();
		return 0;
	}
	al_digest_str(d, ds);
	loc = al_json_str(doc, "location");
	off = json_integer_value(json_object_get(doc, "offset"));
	if (loc != NULL && al_json_str(doc, "registry") != NULL &&
	    strcmp(al_json_str(doc, "registry"), host) == 0 &&
	    al_json_str(doc, "repository") != NULL &&
	    strcmp(al_json_str(doc, "repository"), repo) == 0 &&
	    al_json_str(doc, "digest") != NULL &&
	    strcmp(al_json_str(doc, "digest"), ds) == 0 &&
	    json_integer_value(json_object_get(doc, "size")) ==
	        (json_int_t)size &&
	    off >= 0 && (uint64_t)off <= size) {
		if ((*location = al_strdup(loc)) == NULL) {
			json_decref(doc);
			return al_error_set(AL_ENOMEM, "out of memory");
		}
		*offset = (uint64_t)off;
	}
	json_decref(doc);
	return 0;
}

/* Keep the session: the registry acknowledged offset bytes at location.
 * A file that cannot be written costs only the resume: logged. */
static void session_save(const char *path, const char *host, const char *repo,
                         const al_digest *d, uint64_t size,
                         const char *location, uint64_t offset)
{
	char ds[AL_DIGEST_STRMAX];
	json_t *doc;

	if (path == NULL)
		return;
	doc = json_pack("{s:i, s:s, s:s, s:s, s:I, s:s, s:I}", "airlockUpload",
	                1, "registry", host, "repository", repo, "digest",
	                al_digest_str(d, ds), "size", (json_int_t)size,
	                "location", location, "offset", (json_int_t)offset);
	if (doc == NULL || al_json_save_file(path, doc, 2) < 0) {
		al_log_debug(
		    "upload: cannot keep the session in '%s': %s", path,
		    doc == NULL ? "out of memory" : al_error_message());
		al_error_clear();
	}
	json_decref(doc);
}

static void session_drop(const char *path)
{
	if (path != NULL && unlink(path) != 0 && errno != ENOENT)
		al_log_debug("upload: cannot remove '%s': %s", path,
		             strerror(errno));
}

/* Ask the registry where the session stands: 0 and *offset, or a
 * negative status when it is gone (a new session is needed). */
static int session_status(al_registry *reg, const char *repo, char **location,
                          uint64_t size, uint64_t *offset)
{
	uint64_t have = 0;
	int rc;

	if ((rc = al_registry_upload_status(reg, repo, location, &have)) < 0)
		return rc;
	if (have > size)
		return al_error_set(AL_EPROTO,
		                    "the upload session holds %llu bytes of a "
		                    "%llu byte blob",
		                    (unsigned long long)have,
		                    (unsigned long long)size);
	*offset = have;
	return 0;
}

/* Failures that another request cannot mend. */
static int fatal(int rc)
{
	return rc == AL_ECANCELED || rc == AL_ENOMEM || rc == AL_EAUTH ||
	       rc == AL_EINVAL || rc == AL_ETIMEOUT;
}

int al_transfer__upload(const al_transfer_upload *u,
                        al_transfer_upload_info *info)
{
	char *path = NULL, *loc = NULL;
	uint64_t offset = 0, chunk = u->chunk_size, counted = 0;
	const char *host = al_registry_host(u->reg);
	unsigned failures = 0;
	int fresh = 0;
	window win;
	al_reader rd;
	int rc = 0;

	memset(info, 0, sizeof(*info));
	if (chunk == 0 || u->size == 0)
		return al_error_set(AL_EINVAL, "al_transfer__upload: no size");
	if (u->state_dir != NULL) {
		if (al_fs_mkdir_p(u->state_dir, 0700) < 0) {
			al_log_debug("upload: no session directory: %s",
			             al_error_message());
			al_error_clear();
		} else if ((path = session_path(u->state_dir, host, u->repo,
		                                u->digest)) == NULL) {
			return al_error_set(AL_ENOMEM, "out of memory");
		}
	}
	if ((rc = session_load(path, host, u->repo, u->digest, u->size, &loc,
	                       &offset)) < 0)
		goto out;
	if (loc != NULL) {
		/* a session an earlier run left: the registry says how far it
		 * got (it may hold more than the file says, or have dropped
		 * the session) */
		if (session_status(u->reg, u->repo, &loc, u->size, &offset) ==
		    0) {
			info->resumed_at = offset;
			info->resumed = 1;
			al_log_debug(
			    "upload: %s continues at byte %llu of %llu", path,
			    (unsigned long long)offset,
			    (unsigned long long)u->size);
		} else {
			al_log_debug("upload: the kept session is unusable "
			             "(%s), starting over",
			             al_error_message());
			al_error_clear();
			info->restarted++;
			free(loc);
			loc = NULL;
			offset = 0;
		}
	}
	if (loc == NULL) {
		if ((rc = al_registry_upload_start(u->reg, u->repo, &loc)) < 0)
			goto out;
		offset = 0;
		session_save(path, host, u->repo, u->digest, u->size, loc, 0);
	}
	if (u->progress != NULL && offset > 0)
		u->progress(u->progress_ud, offset);
	counted = offset;
	for (;;) {
		while (offset < u->size) {
			uint64_t len =
			    u->size - offset < chunk ? u->size - offset : chunk;

			if (u->cancel != NULL && al_cancel_is_set(u->cancel)) {
				rc = al_error_set(AL_ECANCELED, "cancelled");
				goto out;
			}
			memset(&win, 0, sizeof(win));
			win.fd = u->fd;
			win.start = offset;
			win.len = len;
			rd.read = window_read;
			rd.rewind = window_rewind;
			rd.ud = &win;
			rc = al_registry_upload_chunk(u->reg, u->repo, &loc,
			                              offset, len, &rd);
			if (rc == 0) {
				offset += len;
				session_save(path, host, u->repo, u->digest,
				             u->size, loc, offset);
				if (u->progress != NULL && offset > counted) {
					u->progress(u->progress_ud,
					            offset - counted);
					counted = offset;
				}
				continue;
			}
			if (fatal(rc) || ++failures > UPLOAD_FAILURES_MAX)
				goto out;
			/* Resuming an upload (distribution-spec, end-13): ask
			 * the session's status and go on from there; a session
			 * the registry dropped or refuses is begun again. */
			al_log_debug(
			    "upload: chunk at byte %llu failed (%s), asking "
			    "the session's status",
			    (unsigned long long)offset, al_error_message());
			al_error_clear();
			if (session_status(u->reg, u->repo, &loc, u->size,
			                   &offset) == 0) {
				info->resumed = 1;
				session_save(path, host, u->repo, u->digest,
				             u->size, loc, offset);
				continue;
			}
			al_log_debug("upload: session gone (%s), starting over",
			             al_error_message());
			al_error_clear();
			info->restarted++;
			free(loc);
			loc = NULL;
			if ((rc = al_registry_upload_start(u->reg, u->repo,
			                                   &loc)) < 0)
				goto out;
			offset = 0;
			session_save(path, host, u->repo, u->digest, u->size,
			             loc, 0);
		}
		rc = al_registry_upload_finish(u->reg, u->repo, loc, u->digest);
		/* done, or bytes the registry will not take under this
		 * digest: the session is of no further use either way */
		if (rc == 0 || rc == AL_EPROTO)
			session_drop(path);
		if (rc != AL_EPROTO || !info->resumed || fresh)
			break;
		/* A continued session whose bytes do not make the digest may
		 * have taken a cut chunk's bytes after its status was asked
		 * (distribution writes what a request brought when the
		 * request ends): once more from a new session. */
		al_log_debug("upload: the continued session failed (%s), "
		             "starting over",
		             al_error_message());
		al_error_clear();
		fresh = 1;
		info->restarted++;
		free(loc);
		loc = NULL;
		if ((rc = al_registry_upload_start(u->reg, u->repo, &loc)) < 0)
			goto out;
		offset = 0;
		session_save(path, host, u->repo, u->digest, u->size, loc, 0);
	}
out:
	free(path);
	free(loc);
	return rc;
}

void al_transfer__upload_forget(const char *state_dir, const char *host,
                                const char *repo, const al_digest *d)
{
	char *path;

	if (state_dir == NULL)
		return;
	path = session_path(state_dir, host, repo, d);
	session_drop(path);
	free(path);
}
