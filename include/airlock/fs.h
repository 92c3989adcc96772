/* fs.h: atomic file writes, bounded reads, temporary files, directory helpers
 * and locks. */
#ifndef AIRLOCK_FS_H
#define AIRLOCK_FS_H

#include <sys/types.h>
#include "common.h"
#include "buf.h"

AL_BEGIN_DECL

/* Join two path parts with one '/'. Caller frees; NULL on ENOMEM. */
AL_EXPORT char *al_path_join(const char *a, const char *b);
/* mkdir -p. */
AL_EXPORT int al_fs_mkdir_p(const char *path, mode_t mode);
/* 1 if path exists (lstat), 0 if not, negative on other errors. */
AL_EXPORT int al_fs_exists(const char *path);
/* fsync a directory (after a rename into it). */
AL_EXPORT int al_fs_fsync_dir(const char *dir);

/*
 * Write data to path atomically: temporary file in the same directory,
 * fsync, rename over path, fsync the directory. A crash at any point
 * leaves either the old or the new content. A regular file at path that
 * already holds exactly data is left as it is (no write, no sync).
 */
AL_EXPORT int al_fs_write_atomic(const char *path, const void *data,
                                 size_t len);

/* Read a whole regular file into out (bounded by out->max: AL_ELIMIT).
 * Opens with al_fs_open_regular; AL_ENOTFOUND if missing. */
AL_EXPORT int al_fs_read_file(const char *path, al_buf *out);

struct stat;
/*
 * Open a user-given input file for reading without ever blocking in open:
 * O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, fstat, then O_NONBLOCK is
 * cleared. A FIFO, device, directory or socket is refused at once (AL_EIO,
 * "'<path>' is not a regular file (a FIFO)"); a symlink fails (ELOOP);
 * AL_ENOTFOUND if missing. *st_out (may be NULL) gets the fstat. The
 * caller closes *fd_out.
 */
AL_EXPORT int al_fs_open_regular(int *fd_out, const char *path,
                                 struct stat *st_out);

/*
 * A temporary file for streaming writes, renamed into place on commit.
 * Not thread-safe: one writer per thread.
 */
typedef struct al_tmpfile al_tmpfile;
/* Create "<dir>/.tmp-<random>"; dir must exist. */
AL_EXPORT int al_tmpfile_new(al_tmpfile **out, const char *dir);
/*
 * Open (or create) path as a temporary file that continues what is in it:
 * writes append, al_tmpfile_size starts at its length. The file is locked
 * (flock) while t is open: AL_ELOCKED if another holder has it.
 * al_tmpfile_keep leaves it in place for a later open; al_tmpfile_free
 * removes it as usual.
 */
AL_EXPORT int al_tmpfile_open_partial(al_tmpfile **out, const char *path);
/* The descriptor (opened read-write by al_tmpfile_open_partial), borrowed. */
AL_EXPORT int al_tmpfile_fd(const al_tmpfile *t);
/* Close and free without removing the file. NULL is a no-op. */
AL_EXPORT void al_tmpfile_keep(al_tmpfile *t);
AL_EXPORT int al_tmpfile_write(al_tmpfile *t, const void *p, size_t n);
/* Truncate to 0 and rewind. */
AL_EXPORT int al_tmpfile_truncate(al_tmpfile *t);
AL_EXPORT uint64_t al_tmpfile_size(const al_tmpfile *t);
AL_EXPORT const char *al_tmpfile_path(const al_tmpfile *t);
/* fsync, close, rename to path, fsync the directory, free t (always). */
AL_EXPORT int al_tmpfile_commit(al_tmpfile *t, const char *path);
/*
 * al_tmpfile_commit without the directory fsync: for committing many files
 * into one directory, followed by one al_fs_fsync_dir. Until then the new
 * name may not survive a power failure: nothing may refer to it yet.
 */
AL_EXPORT int al_tmpfile_commit_nodirsync(al_tmpfile *t, const char *path);
/* Start write-back of what was written since the last hint (see
 * al_fd_start_writeback); al_tmpfile_write gives one every
 * AL_WRITEBACK_CHUNK bytes by itself. */
AL_EXPORT void al_tmpfile_start_writeback(al_tmpfile *t);
/* Close, unlink, free. NULL is a no-op. */
AL_EXPORT void al_tmpfile_free(al_tmpfile *t);

/*
 * An exclusive advisory lock (flock) on path, created if missing.
 * wait_ms == 0: fail at once with AL_ELOCKED if held; otherwise wait up to
 * wait_ms. Released by al_lock_free (or by process exit, even kill -9).
 */
typedef struct al_lock al_lock;
AL_EXPORT int al_lock_acquire(al_lock **out, const char *path,
                              uint64_t wait_ms);
AL_EXPORT void al_lock_free(al_lock *l);

/*
 * read(2) up to cap bytes into p, retrying on EINTR; *got is 0 at end of
 * file. On failure returns AL_EIO (or the errno mapping) with the message
 * "cannot read '<what>': <strerror>".
 */
/* Bytes written between two write-back hints (al_fd_start_writeback). */
#define AL_WRITEBACK_CHUNK (8u << 20)

/*
 * Start write-back of [off, off+len) of fd without waiting for it (Linux
 * sync_file_range), so that a later fsync finds most of the data on disk
 * already and the disk works while the caller goes on. A hint: no error.
 */
AL_EXPORT void al_fd_start_writeback(int fd, uint64_t off, uint64_t len);

AL_EXPORT int al_fd_read(int fd, void *p, size_t cap, size_t *got,
                         const char *what);

/* An al_reader over an open file descriptor (not closed by the reader). */
AL_EXPORT al_reader al_fd_reader(int *fd);

AL_END_DECL

#endif
