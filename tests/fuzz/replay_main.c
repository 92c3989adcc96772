/* replay_main.c: runs a fuzz target's LLVMFuzzerTestOneInput over every file of the corpus directories given (the ordinary builds' regression check). */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"

/* Inputs above this are a corpus mistake, not something to replay. */
#define REPLAY_MAX_INPUT (4 * 1024 * 1024)

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Read path whole into *out (malloc'd, at least 1 byte allocated). */
static int read_input(const char *path, uint8_t **out, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *p = NULL;
	size_t n = 0, cap = 0;
	int rc = -1;

	if (f == NULL) {
		fprintf(stderr, "replay: cannot open '%s': %s\n", path, strerror(errno));
		return -1;
	}
	for (;;) {
		size_t got;
		if (n == cap) {
			uint8_t *g;
			if (cap >= REPLAY_MAX_INPUT) {
				fprintf(stderr, "replay: '%s' is over %d bytes\n", path, REPLAY_MAX_INPUT);
				goto out;
			}
			cap = cap ? cap * 2 : 4096;
			g = realloc(p, cap);
			if (g == NULL) {
				fprintf(stderr, "replay: out of memory reading '%s'\n", path);
				goto out;
			}
			p = g;
		}
		got = fread(p + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		fprintf(stderr, "replay: cannot read '%s'\n", path);
		goto out;
	}
	/* an exact-size copy so that ASan sees reads past the input's end */
	{
		uint8_t *exact = malloc(n ? n : 1);
		if (exact == NULL)
			goto out;
		if (n)
			memcpy(exact, p, n);
		*out = exact;
		*len = n;
	}
	rc = 0;
out:
	free(p);
	fclose(f);
	return rc;
}

static int replay_file(const char *path)
{
	uint8_t *data = NULL;
	size_t len = 0;

	if (read_input(path, &data, &len) != 0)
		return -1;
	printf("replay: %s (%zu bytes)\n", path, len);
	fflush(stdout);
	LLVMFuzzerTestOneInput(data, len);
	free(data);
	return 0;
}

/* Replay every regular file of dir in name order; returns the count or -1. */
static long replay_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0, i;
	long count = 0;

	if (d == NULL) {
		fprintf(stderr, "replay: cannot open directory '%s': %s\n", dir, strerror(errno));
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if (n == cap) {
			char **g;
			cap = cap ? cap * 2 : 64;
			g = realloc(names, cap * sizeof(*g));
			if (g == NULL) {
				count = -1;
				goto out;
			}
			names = g;
		}
		if ((names[n] = strdup(de->d_name)) == NULL) {
			count = -1;
			goto out;
		}
		n++;
	}
	if (n > 1)
		qsort(names, n, sizeof(*names), cmp_names);
	for (i = 0; i < n && count >= 0; i++) {
		size_t len = strlen(dir) + strlen(names[i]) + 2;
		char *path = malloc(len);
		struct stat st;
		int k;
		if (path == NULL) {
			count = -1;
			break;
		}
		k = snprintf(path, len, "%s/%s", dir, names[i]);
		if (k < 0 || (size_t)k >= len || stat(path, &st) != 0) {
			free(path);
			count = -1;
			break;
		}
		if (S_ISREG(st.st_mode)) {
			if (replay_file(path) != 0)
				count = -1;
			else
				count++;
		}
		free(path);
	}
out:
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
	return count;
}

int main(int argc, char **argv)
{
	long total = 0;
	int i;

	if (argc < 2) {
		fprintf(stderr, "usage: %s CORPUS-DIR|FILE...\n", argv[0]);
		return 2;
	}
	for (i = 1; i < argc; i++) {
		struct stat st;
		long k;
		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "replay: cannot stat '%s': %s\n", argv[i], strerror(errno));
			return 1;
		}
		if (S_ISDIR(st.st_mode)) {
			k = replay_dir(argv[i]);
		} else {
			k = replay_file(argv[i]) == 0 ? 1 : -1;
		}
		if (k < 0)
			return 1;
		total += k;
	}
	if (total == 0) {
		/* an empty corpus would make the regression check one that cannot fail */
		fprintf(stderr, "replay: no input found\n");
		return 1;
	}
	printf("replay: %ld inputs, no crash\n", total);
	return 0;
}
