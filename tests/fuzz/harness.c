/* harness.c: scratch directories and file helpers for the fuzz targets (harness code: it aborts on its own failures). */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "airlock/error.h"
#include "airlock/log.h"
#include "harness.h"

static char *tmpdir;

static void harness_fail(const char *what, const char *path)
{
	fprintf(stderr, "fuzz harness: %s '%s': %s\n", what, path, strerror(errno));
	abort();
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	if (remove(path) != 0 && errno != ENOENT)
		fprintf(stderr, "fuzz harness: cannot remove '%s': %s\n", path, strerror(errno));
	return 0;
}

void al_fuzz_rm_rf(const char *path)
{
	struct stat st;

	if (lstat(path, &st) != 0)
		return;
	if (!S_ISDIR(st.st_mode)) {
		(void)remove(path);
		return;
	}
	(void)nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void cleanup(void)
{
	if (tmpdir == NULL)
		return;
	if (getenv("AL_FUZZ_KEEP") == NULL)
		al_fuzz_rm_rf(tmpdir);
	free(tmpdir);
	tmpdir = NULL;
}

const char *al_fuzz_tmpdir(void)
{
	const char *base = getenv("AL_FUZZ_TMPDIR");
	char path[4096];
	int k;

	if (tmpdir != NULL)
		return tmpdir;
	if (base == NULL || base[0] == '\0')
		base = getenv("TMPDIR");
	if (base == NULL || base[0] == '\0')
		base = "/tmp";
	k = snprintf(path, sizeof(path), "%s/airlock-fuzz-XXXXXX", base);
	if (k < 0 || (size_t)k >= sizeof(path)) {
		errno = ENAMETOOLONG;
		harness_fail("bad TMPDIR", base);
	}
	if (mkdtemp(path) == NULL)
		harness_fail("cannot create a directory like", path);
	tmpdir = strdup(path);
	if (tmpdir == NULL)
		harness_fail("out of memory for", path);
	atexit(cleanup);
	return tmpdir;
}

void al_fuzz_write_file(const char *path, const uint8_t *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	size_t off = 0;

	if (fd < 0)
		harness_fail("cannot create", path);
	while (off < n) {
		ssize_t w = write(fd, p + off, n - off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			harness_fail("cannot write", path);
		}
		off += (size_t)w;
	}
	if (close(fd) != 0)
		harness_fail("cannot close", path);
}

char *al_fuzz_fresh_dir(const char *tag)
{
	const char *base = al_fuzz_tmpdir();
	size_t len = strlen(base) + strlen(tag) + 2;
	char *path = malloc(len);
	int k;

	if (path == NULL)
		harness_fail("out of memory for", tag);
	k = snprintf(path, len, "%s/%s", base, tag);
	if (k < 0 || (size_t)k >= len)
		harness_fail("path too long for", tag);
	al_fuzz_rm_rf(path);
	if (mkdir(path, 0755) != 0)
		harness_fail("cannot create", path);
	return path;
}

void al_fuzz_quiet(void)
{
	static int done;

	if (done)
		return;
	done = 1;
	al_log_set_handler(NULL, NULL);
	al_log_set_level(AL_LOG_ERROR);
}

void al_fuzz_fail(const char *target, const char *what)
{
	fprintf(stderr, "fuzz_%s: property violated: %s\n", target, what);
	abort();
}

void al_fuzz_read_file(const char *path, uint8_t **out, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *p;
	long size = -1;

	if (f == NULL)
		harness_fail("cannot open", path);
	if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || size > 16L * 1024 * 1024 ||
	    fseek(f, 0, SEEK_SET) != 0)
		harness_fail("cannot size", path);
	p = malloc((size_t)size + 1);
	if (p == NULL)
		harness_fail("out of memory for", path);
	if (fread(p, 1, (size_t)size, f) != (size_t)size)
		harness_fail("cannot read", path);
	fclose(f);
	*out = p;
	*len = (size_t)size;
}

void al_fuzz_note(const char *target, const char *step, int rc)
{
	static int debug = -1;

	if (debug < 0)
		debug = getenv("AL_FUZZ_DEBUG") != NULL;
	if (!debug)
		return;
	fprintf(stderr, "fuzz_%s: %s: %d (%s)\n", target, step, rc, rc < 0 ? al_error_message() : "ok");
}
