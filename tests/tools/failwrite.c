/* failwrite.c: LD_PRELOAD shim for tests: writes under a directory fail with ENOSPC after a byte budget, or opens there fail with EACCES. */
/*
 * Build: cc -shared -fPIC -o failwrite.so failwrite.c -ldl
 * Environment:
 *   AL_FAIL_DIR    absolute directory; only files under it are affected
 *   AL_FAIL_MODE   "enospc" (default): write(), pwrite() and writev() on
 *                  such files succeed for AL_FAIL_BYTES bytes in total
 *                  (whole process), then fail with ENOSPC, and fsync()
 *                  on them fails with ENOSPC once the budget is spent;
 *                  "eacces": open()/openat() of such paths for writing or
 *                  creating, mkdir() of a new directory and rename() into
 *                  it fail with EACCES,
 *                  and opening a file there for reading fails with EACCES
 *                  when its name contains AL_FAIL_READ (when set);
 *                  "eread": only that last rule (reads denied, writes allowed)
 *   AL_FAIL_BYTES  the ENOSPC budget (default 0)
 * Used by tests/integration/test_fault_disk.sh when no small tmpfs can be
 * mounted; glibc's own stdio writes bypass it (airlock writes with write()).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* The libc function we shadow (POSIX guarantees a function pointer fits
 * in the void * dlsym returns; memcpy keeps ISO C's -Wpedantic quiet). */
static void next_symbol(void *fnp, size_t n, const char *name)
{
	void *sym = dlsym(RTLD_NEXT, name);

	memcpy(fnp, &sym, n);
}
static long long spent;

static int under_dir(const char *path)
{
	const char *dir = getenv("AL_FAIL_DIR");
	char abs[PATH_MAX];
	size_t n;

	if (!dir || !*dir || !path)
		return 0;
	if (path[0] != '/') {
		char cwd[PATH_MAX];
		int w;
		if (!getcwd(cwd, sizeof(cwd)))
			return 0;
		w = snprintf(abs, sizeof(abs), "%s/%s", cwd, path);
		if (w < 0 || (size_t)w >= sizeof(abs))
			return 0;
		path = abs;
	}
	n = strlen(dir);
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

static int fd_under_dir(int fd)
{
	char link[64], path[PATH_MAX];
	ssize_t r;
	int w = snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);

	if (w < 0 || (size_t)w >= sizeof(link))
		return 0;
	r = readlink(link, path, sizeof(path) - 1);
	if (r <= 0)
		return 0;
	path[r] = '\0';
	return under_dir(path);
}

static int mode_is(const char *m)
{
	const char *v = getenv("AL_FAIL_MODE");
	if (!v)
		v = "enospc";
	return strcmp(v, m) == 0;
}

/* How many of n bytes may be written to fd (0 and errno set: none). */
static size_t budget(int fd, size_t n)
{
	const char *b;
	long long limit, left;

	if (!mode_is("enospc") || !fd_under_dir(fd))
		return n;
	b = getenv("AL_FAIL_BYTES");
	limit = b ? strtoll(b, NULL, 10) : 0;
	pthread_mutex_lock(&lock);
	left = limit - spent;
	if (left <= 0) {
		pthread_mutex_unlock(&lock);
		errno = ENOSPC;
		return 0;
	}
	if ((long long)n > left)
		n = (size_t)left;
	spent += (long long)n;
	pthread_mutex_unlock(&lock);
	return n;
}

ssize_t write(int fd, const void *p, size_t n)
{
	static ssize_t (*real)(int, const void *, size_t);
	size_t ok;

	if (!real)
		next_symbol(&real, sizeof(real), "write");
	if (n == 0)
		return real(fd, p, n);
	ok = budget(fd, n);
	if (ok == 0)
		return -1;
	return real(fd, p, ok);
}

ssize_t pwrite(int fd, const void *p, size_t n, off_t off)
{
	static ssize_t (*real)(int, const void *, size_t, off_t);
	size_t ok;

	if (!real)
		next_symbol(&real, sizeof(real), "pwrite");
	if (n == 0)
		return real(fd, p, n, off);
	ok = budget(fd, n);
	if (ok == 0)
		return -1;
	return real(fd, p, ok, off);
}

ssize_t pwrite64(int fd, const void *p, size_t n, off_t off)
{
	return pwrite(fd, p, n, off);
}

ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	static ssize_t (*real)(int, const struct iovec *, int);
	size_t total = 0;
	int i;

	if (!real)
		next_symbol(&real, sizeof(real), "writev");
	for (i = 0; i < cnt; i++)
		total += iov[i].iov_len;
	if (total > 0 && mode_is("enospc") && fd_under_dir(fd)) {
		/* Simplest honest behaviour: all or nothing. */
		const char *b = getenv("AL_FAIL_BYTES");
		long long limit = b ? strtoll(b, NULL, 10) : 0;
		pthread_mutex_lock(&lock);
		if (spent + (long long)total > limit) {
			spent = limit;
			pthread_mutex_unlock(&lock);
			errno = ENOSPC;
			return -1;
		}
		spent += (long long)total;
		pthread_mutex_unlock(&lock);
	}
	return real(fd, iov, cnt);
}

int fsync(int fd)
{
	static int (*real)(int);
	const char *b;

	if (!real)
		next_symbol(&real, sizeof(real), "fsync");
	if (mode_is("enospc") && fd_under_dir(fd)) {
		b = getenv("AL_FAIL_BYTES");
		pthread_mutex_lock(&lock);
		if (spent >= (b ? strtoll(b, NULL, 10) : 0)) {
			pthread_mutex_unlock(&lock);
			errno = ENOSPC;
			return -1;
		}
		pthread_mutex_unlock(&lock);
	}
	return real(fd);
}

static int deny_open(const char *path, int flags)
{
	const char *r;

	if ((!mode_is("eacces") && !mode_is("eread")) || !under_dir(path))
		return 0;
	if (mode_is("eacces") && (flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)) != 0)
		return 1;
	r = getenv("AL_FAIL_READ");
	return r && *r && strstr(path, r) != NULL;
}

int open(const char *path, int flags, ...)
{
	static int (*real)(const char *, int, ...);
	mode_t mode = 0;

	if (!real)
		next_symbol(&real, sizeof(real), "open");
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	if (deny_open(path, flags)) {
		errno = EACCES;
		return -1;
	}
	return real(path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
	mode_t mode = 0;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	return open(path, flags, mode);
}

int openat(int dirfd, const char *path, int flags, ...)
{
	static int (*real)(int, const char *, int, ...);
	mode_t mode = 0;

	if (!real)
		next_symbol(&real, sizeof(real), "openat");
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	if ((dirfd == AT_FDCWD || path[0] == '/') && deny_open(path, flags)) {
		errno = EACCES;
		return -1;
	}
	return real(dirfd, path, flags, mode);
}

int mkdir(const char *path, mode_t mode)
{
	static int (*real)(const char *, mode_t);

	if (!real)
		next_symbol(&real, sizeof(real), "mkdir");
	/* The kernel says EEXIST before it checks write permission. */
	if (mode_is("eacces") && under_dir(path) && access(path, F_OK) != 0) {
		errno = EACCES;
		return -1;
	}
	return real(path, mode);
}

int rename(const char *from, const char *to)
{
	static int (*real)(const char *, const char *);

	if (!real)
		next_symbol(&real, sizeof(real), "rename");
	if (mode_is("eacces") && under_dir(to)) {
		errno = EACCES;
		return -1;
	}
	return real(from, to);
}
