/* fakestatvfs.c: LD_PRELOAD shim for tests: statvfs() reports AL_FAKE_FREE
 * bytes available (the free-space checks of docs/lifecycle.md). */
/*
 * Build: cc -shared -fPIC -o fakestatvfs.so fakestatvfs.c -ldl
 * Environment:
 *   AL_FAKE_FREE   bytes to report as available (f_bavail * f_frsize);
 *                  unset: statvfs answers unchanged
 * Only the available-block count is changed; everything else is the real
 * file system's. Used by tests/integration/test_lifecycle_plan.sh.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/statvfs.h>

static void fake(struct statvfs *sv)
{
	const char *v = getenv("AL_FAKE_FREE");
	unsigned long long n;
	char *end = NULL;

	if (v == NULL || sv->f_frsize == 0)
		return;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno != 0 || end == v || *end != '\0')
		return;
	sv->f_bavail = (fsblkcnt_t)(n / sv->f_frsize);
}

int statvfs(const char *path, struct statvfs *sv)
{
	int (*real)(const char *, struct statvfs *) =
	    (int (*)(const char *, struct statvfs *))dlsym(RTLD_NEXT,
	                                                   "statvfs");
	int rc;

	if (real == NULL) {
		errno = ENOSYS;
		return -1;
	}
	rc = real(path, sv);
	if (rc == 0)
		fake(sv);
	return rc;
}

int statvfs64(const char *path, struct statvfs64 *sv)
{
	int (*real)(const char *, struct statvfs64 *) =
	    (int (*)(const char *, struct statvfs64 *))dlsym(RTLD_NEXT,
	                                                     "statvfs64");
	int rc;

	if (real == NULL) {
		errno = ENOSYS;
		return -1;
	}
	rc = real(path, sv);
	if (rc == 0)
		fake((struct statvfs *)sv);
	return rc;
}
