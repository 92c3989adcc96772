/* fs.c: atomic writes (temp + fsync + rename), bounded reads, temporary files
 * and flock locks. */
#define _GNU_SOURCE /* sync_file_range */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/rand.h>

#include "airlock/clock.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "clock_int.h"

struct al_tmpfile {
	int fd;
	char *path;
	char *dir;
	uint64_t size;
	uint64_t wb; /* bytes handed to write-back so far */
};

struct al_lock {
	int fd;
	char *path;
};

char *al_path_join(const char *a, const char *b)
{
	size_t la = strlen(a);

	while (la > 1 && a[la - 1] == '/')
		la--;
	while (*b == '/')
		b++;
	if (la == 0)
		return al_strdup(b);
	return al_sprintf("%.*s/%s", (int)la, a, b);
}

int al_fs_mkdir_p(const char *path, mode_t mode)
{
	char *copy = al_strdup(path), *p;
	int rc = 0;

	if (copy == NULL)
		return al_error_oom();
	for (p = copy + 1;; p++) {
		if (*p == '/' || *p == '\0') {
			char saved = *p;
			*p = '\0';
			if (mkdir(copy, mode) != 0 && errno != EEXIST) {
				rc = al_error_errno(
				    errno, "cannot create directory '%s'",
				    copy);
				goto out;
			}
			*p = saved;
			if (saved == '\0')
				break;
		}
	}
	{
		struct stat st;
		if (stat(path, &st) != 0) {
			rc = al_error_errno(
			    errno, "cannot create directory '%s'", path);
			goto out;
		}
		if (!S_ISDIR(st.st_mode)) {
			rc = al_error_set(AL_EEXIST,
			                  "'%s' exists and is not a directory",
			                  path);
			goto out;
		}
	}
out:
	free(copy);
	return rc;
}

int al_fs_exists(const char *path)
{
	struct stat st;

	if (lstat(path, &st) == 0)
		return 1;
	if (errno == ENOENT || errno == ENOTDIR)
		return 0;
	return al_error_errno(errno, "cannot stat '%s'", path);
}

int al_fs_fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc = 0;

	if (fd < 0)
		return al_error_errno(errno, "cannot open directory '%s'", dir);
	if (fsync(fd) != 0 && errno != EINVAL)
		rc = al_error_errno(errno, "cannot sync directory '%s'", dir);
	close(fd);
	return rc;
}

static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (slash == NULL)
		return al_strdup(".");
	if (slash == path)
		return al_strdup("/");
	return al_strndup(path, (size_t)(slash - path));
}

int al_tmpfile_new(al_tmpfile **out, const char *dir)
{
	al_tmpfile *t = NULL;
	unsigned char rnd[8];
	int rc = 0, i;

	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return al_error_oom();
	t->fd = -1;
	t->dir = al_strdup(dir);
	if (t->dir == NULL) {
		rc = al_error_oom();
		goto out;
	}
	for (i = 0; i < 16; i++) {
		if (RAND_bytes(rnd, sizeof(rnd)) != 1) {
			rc = al_error_openssl(
			    AL_EIO, "no randomness for a temporary file name");
			goto out;
		}
		free(t->path);
		t->path = al_sprintf("%s/.tmp-%02x%02x%02x%02x%02x%02x%02x%02x",
		                     dir, rnd[0], rnd[1], rnd[2], rnd[3],
		                     rnd[4], rnd[5], rnd[6], rnd[7]);
		if (t->path == NULL) {
			rc = al_error_oom();
			goto out;
		}
		t->fd = open(
		    t->path,
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (t->fd >= 0)
			break;
		if (errno != EEXIST) {
			rc = al_error_errno(
			    errno, "cannot create temporary file in '%s'", dir);
			goto out;
		}
	}
	if (t->fd < 0) {
		rc = al_error_set(AL_EIO,
		                  "cannot create temporary file in '%s'", dir);
		goto out;
	}
	*out = t;
	t = NULL;
out:
	al_tmpfile_free(t);
	return rc;
}

int al_tmpfile_open_partial(al_tmpfile **out, const char *path)
{
	al_tmpfile *t = NULL;
	struct stat st;
	off_t end;
	int rc = 0;

	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return al_error_oom();
	t->path = al_strdup(path);
	t->dir = dir_of(path);
	if (t->path == NULL || t->dir == NULL) {
		rc = al_error_oom();
		goto out;
	}
	t->fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (t->fd < 0) {
		rc = al_error_errno(errno, "cannot open '%s'", path);
		goto out;
	}
	if (flock(t->fd, LOCK_EX | LOCK_NB) != 0) {
		rc = errno == EWOULDBLOCK
		         ? al_error_set(AL_ELOCKED, "'%s' is in use", path)
		         : al_error_errno(errno, "cannot lock '%s'", path);
		goto out;
	}
	if (fstat(t->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		rc = al_error_set(AL_EIO, "'%s' is not a regular file", path);
		goto out;
	}
	if ((end = lseek(t->fd, 0, SEEK_END)) < 0) {
		rc = al_error_errno(errno, "cannot seek '%s'", path);
		goto out;
	}
	t->size = (uint64_t)end;
	t->wb = t->size;
	*out = t;
	t = NULL;
out:
	if (t != NULL && t->fd >= 0) {
		/* not ours to remove: another writer holds it, or it is not
		 * a file */
		close(t->fd);
		t->fd = -1;
		free(t->path);
		t->path = NULL;
	}
	al_tmpfile_free(t);
	return rc;
}

int al_tmpfile_fd(const al_tmpfile *t)
{
	return t->fd;
}

void al_tmpfile_keep(al_tmpfile *t)
{
	if (t == NULL)
		return;
	free(t->path);
	t->path = NULL;
	al_tmpfile_free(t);
}

int al_tmpfile_write(al_tmpfile *t, const void *p, size_t n)
{
	const uint8_t *q = p;

	while (n > 0) {
		ssize_t w = write(t->fd, q, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return al_error_errno(errno, "cannot write '%s'",
			                      t->path);
		}
		q += w;
		n -= (size_t)w;
		t->size += (uint64_t)w;
	}
	if (t->size - t->wb >= AL_WRITEBACK_CHUNK)
		al_tmpfile_start_writeback(t);
	return 0;
}

void al_fd_start_writeback(int fd, uint64_t off, uint64_t len)
{
#ifdef SYNC_FILE_RANGE_WRITE
	/* Only a hint: an error here shows again, and is reported, at fsync. */
	(void)sync_file_range(fd, (off_t)off, (off_t)len,
	                      SYNC_FILE_RANGE_WRITE);
#else
	(void)fd;
	(void)off;
	(void)len;
#endif
}

int al_tmpfile_truncate(al_tmpfile *t)
{
	if (ftruncate(t->fd, 0) != 0 || lseek(t->fd, 0, SEEK_SET) != 0)
		return al_error_errno(errno, "cannot truncate '%s'", t->path);
	t->size = 0;
	t->wb = 0;
	return 0;
}

uint64_t al_tmpfile_size(const al_tmpfile *t)
{
	return t->size;
}

const char *al_tmpfile_path(const al_tmpfile *t)
{
	return t->path;
}

static int tmpfile_commit(al_tmpfile *t, const char *path, int sync_dir)
{
	char *dir = NULL;
	int rc = 0;

	if (fsync(t->fd) != 0) {
		rc = al_error_errno(errno, "cannot sync '%s'", t->path);
		goto out;
	}
	if (close(t->fd) != 0) {
		t->fd = -1;
		rc = al_error_errno(errno, "cannot close '%s'", t->path);
		goto out;
	}
	t->fd = -1;
	if (rename(t->path, path) != 0) {
		rc = al_error_errno(errno, "cannot rename '%s' to '%s'",
		                    t->path, path);
		goto out;
	}
	free(t->path);
	t->path = NULL;
	if (!sync_dir)
		goto out;
	dir = dir_of(path);
	if (dir == NULL) {
		rc = al_error_oom();
		goto out;
	}
	rc = al_fs_fsync_dir(dir);
out:
	free(dir);
	al_tmpfile_free(t);
	return rc;
}

int al_tmpfile_commit(al_tmpfile *t, const char *path)
{
	return tmpfile_commit(t, path, 1);
}

int al_tmpfile_commit_nodirsync(al_tmpfile *t, const char *path)
{
	return tmpfile_commit(t, path, 0);
}

void al_tmpfile_start_writeback(al_tmpfile *t)
{
	if (t->size > t->wb) {
		al_fd_start_writeback(t->fd, t->wb, t->size - t->wb);
		t->wb = t->size;
	}
}

void al_tmpfile_free(al_tmpfile *t)
{
	if (t == NULL)
		return;
	if (t->fd >= 0)
		close(t->fd);
	if (t->path != NULL)
		unlink(t->path);
	free(t->path);
	free(t->dir);
	free(t);
}

/* 1 when path is a regular file holding exactly data (len bytes), read
 * through a bounded buffer; 0 otherwise (no error is left set). */
static int holds_exactly(const char *path, const void *data, size_t len)
{
	unsigned char buf[16384];
	const unsigned char *p = data;
	struct stat st;
	size_t done = 0;
	int fd, same;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	same = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	       (uint64_t)st.st_size == (uint64_t)len;
	while (same && done < len) {
		size_t want =
		    len - done < sizeof(buf) ? len - done : sizeof(buf);
		ssize_t r = read(fd, buf, want);

		if (r < 0 && errno == EINTR)
			continue;
		same = r > 0 && memcmp(buf, p + done, (size_t)r) == 0;
		done += r > 0 ? (size_t)r : 0;
	}
	close(fd);
	return same;
}

int al_fs_write_atomic(const char *path, const void *data, size_t len)
{
	al_tmpfile *t = NULL;
	char *dir = dir_of(path);
	int rc;

	if (dir == NULL)
		return al_error_oom();
	/* A file that already holds these bytes is left as it is: an
	 * unchanged rerun rewrites (and syncs) nothing. The writer that put
	 * them there synced them (this function, or a copy of it). */
	if (holds_exactly(path, data, len)) {
		free(dir);
		return 0;
	}
	if ((rc = al_tmpfile_new(&t, dir)) < 0)
		goto out;
	if ((rc = al_tmpfile_write(t, data, len)) < 0)
		goto out;
	rc = al_tmpfile_commit(t, path);
	t = NULL;
out:
	al_tmpfile_free(t);
	free(dir);
	return rc;
}

int al_fs_open_regular(int *fd_out, const char *path, struct stat *st_out)
{
	struct stat st;
	int fd, fl;

	/* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
	 * writer, and a device may block in open; the type is checked on the
	 * open descriptor, so nothing can be swapped in between. */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return al_error_errno(errno, "cannot open '%s'", path);
	if (fstat(fd, &st) != 0) {
		int e = errno;
		close(fd);
		return al_error_errno(e, "cannot stat '%s'", path);
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return al_error_set(AL_EIO, "'%s' is not a regular file (%s)",
		                    path,
		                    S_ISFIFO(st.st_mode)  ? "a FIFO"
		                    : S_ISCHR(st.st_mode) ? "a character device"
		                    : S_ISBLK(st.st_mode) ? "a block device"
		                    : S_ISDIR(st.st_mode) ? "a directory"
		                    : S_ISSOCK(st.st_mode) ? "a socket"
		                                           : "another type");
	}
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
		int e = errno;
		close(fd);
		return al_error_errno(e, "cannot open '%s'", path);
	}
	if (st_out != NULL)
		*st_out = st;
	*fd_out = fd;
	return 0;
}

int al_fs_read_file(const char *path, al_buf *out)
{
	uint8_t chunk[16384];
	struct stat st;
	int fd, rc = 0;

	if ((rc = al_fs_open_regular(&fd, path, &st)) < 0)
		return rc;
	if ((uint64_t)st.st_size > out->max) {
		rc = al_error_set(AL_ELIMIT, "'%s' is larger than %zu bytes",
		                  path, out->max);
		goto out;
	}
	/* the whole file in one allocation of its size (it may still grow) */
	if ((rc = al_buf_reserve(out, (size_t)st.st_size)) < 0)
		goto out;
	for (;;) {
		size_t r;
		if ((rc = al_fd_read(fd, chunk, sizeof(chunk), &r, path)) < 0)
			goto out;
		if (r == 0)
			break;
		if ((rc = al_buf_append(out, chunk, r)) < 0) {
			rc = al_error_wrap(rc, "reading '%s'", path);
			goto out;
		}
	}
	if (out->ptr == NULL)
		rc = al_buf_append(out, "", 0);
out:
	close(fd);
	return rc;
}

int al_lock_acquire(al_lock **out, const char *path, uint64_t wait_ms)
{
	al_lock *l = NULL;
	uint64_t end = al__real_now_ms() + wait_ms;
	int rc = 0;

	l = calloc(1, sizeof(*l));
	if (l == NULL)
		return al_error_oom();
	l->fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (l->fd < 0) {
		rc = al_error_errno(errno, "cannot open lock file '%s'", path);
		goto out;
	}
	for (;;) {
		if (flock(l->fd, LOCK_EX | LOCK_NB) == 0)
			break;
		if (errno != EWOULDBLOCK && errno != EINTR) {
			rc = al_error_errno(errno, "cannot lock '%s'", path);
			goto out;
		}
		if (al__real_now_ms() >= end) {
			rc = al_error_set(AL_ELOCKED,
			                  "'%s' is locked by another process",
			                  path);
			goto out;
		}
		al__real_sleep_ms(50);
	}
	l->path = al_strdup(path);
	*out = l;
	l = NULL;
out:
	al_lock_free(l);
	return rc;
}

void al_lock_free(al_lock *l)
{
	if (l == NULL)
		return;
	if (l->fd >= 0)
		close(l->fd);
	free(l->path);
	free(l);
}

int al_fd_read(int fd, void *p, size_t cap, size_t *got, const char *what)
{
	for (;;) {
		ssize_t r = read(fd, p, cap);
		if (r >= 0) {
			*got = (size_t)r;
			return 0;
		}
		if (errno != EINTR)
			return al_error_errno(errno, "cannot read '%s'", what);
	}
}

static int fd_read(void *ud, uint8_t *p, size_t cap, size_t *got)
{
	return al_fd_read(*(int *)ud, p, cap, got, "file");
}

static int fd_rewind(void *ud)
{
	int fd = *(int *)ud;

	if (lseek(fd, 0, SEEK_SET) != 0)
		return al_error_errno(errno, "cannot rewind");
	return 0;
}

al_reader al_fd_reader(int *fd)
{
	al_reader r = {fd_read, fd_rewind, fd};

	return r;
}
