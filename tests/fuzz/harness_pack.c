/* harness_pack.c: the pack fuzz targets' common step: lay the input out as a pack directory and al_unpack it into a fresh store. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "airlock/error.h"
#include "airlock/pack.h"
#include "airlock/store.h"
#include "harness.h"

/* More volumes than this in one input are ignored (bounds the work). */
#define FUZZ_MAX_VOLUMES 8

/* First occurrence of needle in p[0..n), or NULL. */
static const uint8_t *find(const uint8_t *p, size_t n, const char *needle)
{
	size_t k = strlen(needle), i;

	if (k > n)
		return NULL;
	for (i = 0; i + k <= n; i++)
		if (p[i] == (uint8_t)needle[0] && memcmp(p + i, needle, k) == 0)
			return p + i;
	return NULL;
}

/* The manifest's "id" when it is a valid pack id, else "fz". */
static void pack_id(const uint8_t *p, size_t n, char id[AL_PACK_ID_MAX + 1])
{
	json_t *m = json_loadb((const char *)p, n, 0, NULL);
	const char *s = json_string_value(json_object_get(m, "id"));

	if (s != NULL && al_pack_id_valid(s))
		snprintf(id, AL_PACK_ID_MAX + 1, "%s", s);
	else
		snprintf(id, AL_PACK_ID_MAX + 1, "fz");
	json_decref(m);
}

static void write_part(const char *dir, const char *id, unsigned vol, const uint8_t *p, size_t n)
{
	char path[4096];
	int k;

	if (vol == 0)
		k = snprintf(path, sizeof(path), "%s/airlock-%s.json", dir, id);
	else
		k = snprintf(path, sizeof(path), "%s/airlock-%s-%04u.tar", dir, id, vol);
	if (k < 0 || (size_t)k >= sizeof(path))
		al_fuzz_fail("pack", "path too long");
	al_fuzz_write_file(path, p, n);
}

/* Nothing but the pack and store directories (and imageset's) may appear in the scratch directory: a hostile volume must not write elsewhere. */
static void check_no_escape(const char *target)
{
	DIR *d = opendir(al_fuzz_tmpdir());
	struct dirent *de;

	if (d == NULL)
		al_fuzz_fail(target, "cannot list the scratch directory");
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 || strcmp(de->d_name, "pack") == 0 ||
		    strcmp(de->d_name, "store") == 0 || strcmp(de->d_name, "imageset") == 0)
			continue;
		fprintf(stderr, "unexpected '%s' next to the store\n", de->d_name);
		al_fuzz_fail(target, "al_unpack wrote outside the store");
	}
	closedir(d);
}

/* The media are read-only to al_unpack: the pack directory holds exactly the nfiles written. */
static void check_media_untouched(const char *target, const char *packdir, unsigned nfiles)
{
	DIR *d = opendir(packdir);
	struct dirent *de;
	unsigned n = 0;

	if (d == NULL)
		al_fuzz_fail(target, "the pack directory is gone");
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			n++;
	closedir(d);
	if (n != nfiles)
		al_fuzz_fail(target, "al_unpack changed the pack directory");
}

void al_fuzz_unpack(const char *target, const uint8_t *data, size_t size)
{
	static const al_store_opts create = {.create = 1};
	const size_t seplen = strlen(AL_FUZZ_VOLUME_SEP);
	char id[AL_PACK_ID_MAX + 1];
	char *packdir, *storedir;
	const uint8_t *p = data, *sep;
	size_t n = size;
	unsigned vol = 0;
	al_store *s = NULL;
	al_unpack_result res = AL_UNPACK_RESULT_INIT;
	al_unpack_opts uopts = AL_UNPACK_OPTS_INIT;
	al_check_result chk = AL_CHECK_RESULT_INIT;
	int rc;

	al_fuzz_quiet();
	packdir = al_fuzz_fresh_dir("pack");
	storedir = al_fuzz_fresh_dir("store");
	sep = find(p, n, AL_FUZZ_VOLUME_SEP);
	pack_id(p, sep != NULL ? (size_t)(sep - p) : n, id);
	for (;;) {
		size_t part = sep != NULL ? (size_t)(sep - p) : n;
		write_part(packdir, id, vol, p, part);
		if (sep == NULL || ++vol > FUZZ_MAX_VOLUMES)
			break;
		p = sep + seplen;
		n -= part + seplen;
		sep = find(p, n, AL_FUZZ_VOLUME_SEP);
	}
	if (al_store_open(&s, storedir, &create) < 0)
		al_fuzz_fail(target, "cannot create a store");
	/* into the store itself, as before the quarantine: the store check
	 * below then sees what the import wrote */
	uopts.accept_untrusted = 1;
	rc = al_pack_unpack(s, packdir, &uopts, &res);
	al_fuzz_note(target, res.complete ? "al_unpack (complete)" : "al_unpack", rc);
	if (rc == 0 && res.complete && res.nmissing != 0)
		al_fuzz_fail(target, "complete import with missing volumes");
	if (rc == 0 && !res.complete && res.nmissing == 0)
		al_fuzz_fail(target, "incomplete import that names no missing volume");
	if (rc == 0 && res.complete) {
		memset(&chk, 0, sizeof(chk));
		(void)al_store_check(s, 0, NULL, NULL, &chk);
		if (chk.corrupt != 0)
			al_fuzz_fail(target, "a completed import left a corrupt blob in the store");
	}
	check_no_escape(target);
	check_media_untouched(target, packdir, vol + (vol > FUZZ_MAX_VOLUMES ? 0 : 1));
	al_unpack_result_clear(&res);
	al_error_clear();
	al_store_free(s);
	al_fuzz_rm_rf(storedir);
	al_fuzz_rm_rf(packdir);
	free(storedir);
	free(packdir);
}
