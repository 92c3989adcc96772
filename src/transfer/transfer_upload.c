/* transfer_upload.c: a chunked blob upload that survives a failed request
 * and a killed run: the session (its Location and the bytes the registry
 * acknowledged) is kept in a file, and the next attempt asks the registry
 * where the session stands and continues from there (docs/push.md
 * "Resuming an upload"). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/log.h"
#include "json_int.h"
#include "store_int.h"
#include "transfer_upload_int.h"

/* A session file is a few hundred bytes; anything larger is not ours. */
#define SESSION_FILE_MAX (64 * 1024)
/* Failed chunks one upload survives before it gives up (each one asks
 * the registry for the session's status, or starts a new session). */
#define UPLOAD_FAILURES_MAX 4
/* Session files kept in a state directory (docs/store.md "Atomicity and
 * crashes"): a new one beyond this makes the oldest unheld one go. */
#define UPLOAD_SESSIONS_MAX 64

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

/* A session file, held: fd carries an exclusive flock for as long as the
 * upload uses it, so that `check --gc` (and another process uploading the
 * same blob) leave it alone. path NULL: no file (none wanted, or another
 * upload holds it): the session lives in memory only. */
typedef struct session {
	char *path;
	int fd;
	int saved; /* the file holds a session written by this upload */
} session;

/* Open and lock the session file at path (taken). A file held by another
 * upload, or one that cannot be opened, leaves s without a file: this
 * upload then keeps its session in memory only. */
static void session_open(session *s, char *path, const char *dir)
{
	int i;

	s->path = NULL;
	s->fd = -1;
	s->saved = 0;
	if (path == NULL)
		return;
	if (al_fs_exists(path) != 1)
		al_store__make_room(dir, UPLOAD_SESSIONS_MAX, "upload session");
	/* a gc that removed the file between open and flock: open again */
	for (i = 0; i < 3; i++) {
		struct stat held, now;
		int fd =
		    open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);

		if (fd < 0)
			break;
		if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
			al_log_debug("upload: '%s' is in use by another "
			             "upload: this one is not kept",
			             path);
			close(fd);
			break;
		}
		if (fstat(fd, &held) == 0 && S_ISREG(held.st_mode) &&
		    stat(path, &now) == 0 && now.st_ino == held.st_ino &&
		    now.st_dev == held.st_dev) {
			s->path = path;
			s->fd = fd;
			return;
		}
		close(fd);
	}
	free(path);
}

/* Release the file: one that holds no session of this upload (made and
 * never written) is removed first. */
static void session_close(session *s)
{
	if (s->fd >= 0) {
		struct stat st;

		if (!s->saved && fstat(s->fd, &st) == 0 && st.st_size == 0)
			(void)unlink(s->path);
		close(s->fd);
	}
	free(s->path);
	s->path = NULL;
	s->fd = -1;
}

/* The session the file names for this very blob, or 0 with *location
 * NULL (none, or a file that is not one: ignored, replaced later). */
static int session_load(const session *s, const char *host, const char *repo,
                        const al_digest *d, uint64_t size, char **location,
                        uint64_t *offset)
{
	char ds[AL_DIGEST_STRMAX];
	json_t *doc = NULL;
	json_error_t jerr;
	const char *loc;
	json_int_t off;
	char *text = NULL;
	ssize_t n;

	*location = NULL;
	*offset = 0;
	if (s->fd < 0)
		return 0;
	if ((text = malloc(SESSION_FILE_MAX)) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	do {
		n = pread(s->fd, text, SESSION_FILE_MAX, 0);
	} while (n < 0 && errno == EINTR);
	/* empty (new), unreadable or larger than a session: not one */
	if (n > 0 && n < SESSION_FILE_MAX)
		doc =
		    json_loadb(text, (size_t)n, JSON_REJECT_DUPLICATES, &jerr);
	free(text);
	if (doc == NULL) {
		if (n != 0)
			al_log_debug("upload: ignoring '%s': not a session",
			             s->path);
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
 * Written in place on the held file (the lock stays with it; a rename
 * would leave it on the old file): the new text, then the length. A kill
 * between the two leaves text jansson refuses, which costs only the
 * resume, as does a file that cannot be written (logged). */
static void session_save(session *s, const char *host, const char *repo,
                         const al_digest *d, uint64_t size,
                         const char *location, uint64_t offset)
{
	char ds[AL_DIGEST_STRMAX];
	json_t *doc;
	char *text = NULL;
	size_t len = 0;
	ssize_t n = -1;

	if (s->fd < 0)
		return;
	doc = json_pack("{s:i, s:s, s:s, s:s, s:I, s:s, s:I}", "airlockUpload",
	                1, "registry", host, "repository", repo, "digest",
	                al_digest_str(d, ds), "size", (json_int_t)size,
	                "location", location, "offset", (json_int_t)offset);
	if (doc != NULL)
		text = json_dumps(doc, JSON_INDENT(2));
	json_decref(doc);
	if (text != NULL) {
		len = strlen(text);
		text[len] = '\n'; /* json_dumps leaves room: its NUL */
		do {
			n = pwrite(s->fd, text, len + 1, 0);
		} while (n < 0 && errno == EINTR);
	}
	if (n == (ssize_t)(len + 1) && ftruncate(s->fd, (off_t)(len + 1)) == 0)
		s->saved = 1;
	else
		al_log_debug("upload: cannot keep the session in '%s': %s",
		             s->path,
		             text == NULL ? "out of memory" : strerror(errno));
	free(text);
}

/* The session is of no further use: its file goes (still held, so no
 * other upload takes it up meanwhile). */
static void session_drop(session *s)
{
	if (s->fd < 0)
		return;
	if (unlink(s->path) != 0 && errno != ENOENT)
		al_log_debug("upload: cannot remove '%s': %s", s->path,
		             strerror(errno));
	s->saved = 1; /* nothing left to tidy */
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

/* A new upload session for u, kept in ss: *loc its location (the one
 * before freed), *offset 0. */
static int start_session(const al_transfer_upload *u, session *ss,
                         const char *host, char **loc, uint64_t *offset)
{
	int rc;

	free(*loc);
	*loc = NULL;
	*offset = 0;
	if ((rc = al_registry_upload_start(u->reg, u->repo, loc)) < 0)
		return rc;
	session_save(ss, host, u->repo, u->digest, u->size, *loc, 0);
	return 0;
}

int al_transfer__upload(const al_transfer_upload *u,
                        al_transfer_upload_info *info)
{
	session ss = {NULL, -1, 0};
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
		session_open(&ss, path, u->state_dir);
		path = NULL;
	}
	if ((rc = session_load(&ss, host, u->repo, u->digest, u->size, &loc,
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
			    "upload: %s continues at byte %llu of %llu",
			    ss.path, (unsigned long long)offset,
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
	if (loc == NULL &&
	    (rc = start_session(u, &ss, host, &loc, &offset)) < 0)
		goto out;
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
				session_save(&ss, host, u->repo, u->digest,
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
				session_save(&ss, host, u->repo, u->digest,
				             u->size, loc, offset);
				continue;
			}
			al_log_debug("upload: session gone (%s), starting over",
			             al_error_message());
			al_error_clear();
			info->restarted++;
			if ((rc = start_session(u, &ss, host, &loc, &offset)) <
			    0)
				goto out;
		}
		rc = al_registry_upload_finish(u->reg, u->repo, loc, u->digest);
		/* done, or bytes the registry will not take under this
		 * digest: the session is of no further use either way */
		if (rc == 0 || rc == AL_EPROTO)
			session_drop(&ss);
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
		if ((rc = start_session(u, &ss, host, &loc, &offset)) < 0)
			goto out;
	}
out:
	session_close(&ss);
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
	/* one another upload holds is its business */
	if (path != NULL && al_fs_exists(path) == 1)
		(void)al_store__unlink_unheld(path);
	free(path);
}
