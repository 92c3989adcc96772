/* store_cache.c: the store's advisory cache, STORE/airlock/cache/<kind>-
 * <algo>-<hex>[_<variant>].json: entries keyed by a blob of the store,
 * written by the process holding the store's lock, removed by gc once
 * their blob went (docs/store.md "The cache"). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/log.h"
#include "store_cache_int.h"

#define CACHE_DIR "airlock/cache"
#define CACHE_NAME_MAX 256

static int kind_ok(const char *kind)
{
	size_t i;

	for (i = 0; kind[i] != '\0'; i++)
		if (kind[i] < 'a' || kind[i] > 'z')
			return 0;
	return i > 0 && i <= 32;
}

/* The file name of an entry into out, or 0 when kind or variant cannot
 * name one (then there is no entry). A variant's '/' becomes '-'. */
static int entry_name(char out[CACHE_NAME_MAX], const char *kind,
                      const al_digest *key, const char *variant)
{
	char hex[AL_DIGEST_STRMAX];
	size_t i, n;
	int len;

	if (!kind_ok(kind))
		return 0;
	len = snprintf(out, CACHE_NAME_MAX, "%s-%s-%s", kind,
	               al_digest_algo_name(key->algo), al_digest_hex(key, hex));
	if (len < 0 || len >= CACHE_NAME_MAX)
		return 0;
	n = (size_t)len;
	if (variant != NULL) {
		if (variant[0] == '\0' ||
		    n + 1 + strlen(variant) + 6 >= CACHE_NAME_MAX)
			return 0;
		out[n++] = '_';
		for (i = 0; variant[i] != '\0'; i++) {
			char c = variant[i];

			if (c == '/')
				c = '-';
			else if (!((c >= 'a' && c <= 'z') ||
			           (c >= 'A' && c <= 'Z') ||
			           (c >= '0' && c <= '9') || c == '.' ||
			           c == '_' || c == '-'))
				return 0;
			out[n++] = c;
		}
	}
	if (n + 6 >= CACHE_NAME_MAX)
		return 0;
	memcpy(out + n, ".json", 6);
	return 1;
}

/* The key digest an entry's file name carries, or 0 when name is not an
 * entry's. */
static int entry_key(const char *name, al_digest *key)
{
	const char *p = name, *algo, *hex;
	char ds[AL_DIGEST_STRMAX];
	size_t n;

	while (*p >= 'a' && *p <= 'z')
		p++;
	if (p == name || *p != '-')
		return 0;
	algo = ++p;
	while ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9'))
		p++;
	if (p == algo || *p != '-')
		return 0;
	hex = ++p;
	while ((*p >= 'a' && *p <= 'f') || (*p >= '0' && *p <= '9'))
		p++;
	if (*p != '_' && strcmp(p, ".json") != 0)
		return 0;
	if (*p == '_' && (strlen(p) < 7 || strcmp(p + strlen(p) - 5, ".json")))
		return 0;
	n = (size_t)(hex - 1 - algo) + 1 + (size_t)(p - hex);
	if (n >= sizeof(ds))
		return 0;
	memcpy(ds, algo, (size_t)(hex - 1 - algo));
	ds[hex - 1 - algo] = ':';
	memcpy(ds + (hex - algo), hex, (size_t)(p - hex));
	ds[n] = '\0';
	return al_digest_parse_str(key, ds) == 0;
}

static char *entry_path(al_store *s, const char *kind, const al_digest *key,
                        const char *variant)
{
	char name[CACHE_NAME_MAX];

	if (!entry_name(name, kind, key, variant))
		return NULL;
	return al_sprintf("%s/%s/%s", al_store_path(s), CACHE_DIR, name);
}

int al_store__cache_get(al_store *s, const char *kind, const al_digest *key,
                        const char *variant, al_buf *out)
{
	char *p = entry_path(s, kind, key, variant);
	int rc;

	if (p == NULL)
		return 0;
	al_buf_reset(out);
	rc = al_fs_read_file(p, out);
	if (rc == AL_ENOMEM) {
		free(p);
		return rc;
	}
	if (rc < 0) {
		if (rc != AL_ENOTFOUND)
			al_log_debug("cache: '%s' not used: %s", p,
			             al_error_message());
		al_error_clear();
		al_buf_reset(out);
		rc = 0;
	} else {
		rc = 1;
	}
	free(p);
	return rc;
}

int al_store__cache_put(al_store *s, const char *kind, const al_digest *key,
                        const char *variant, const uint8_t *data, size_t len)
{
	char *dir = NULL, *p = NULL;
	int rc = 0;

	if (!al_store__writable(s))
		return 0;
	if (len > AL_STORE_CACHE_MAX)
		return al_error_set(AL_ELIMIT,
		                    "cache entry of %zu bytes: more than %d",
		                    len, AL_STORE_CACHE_MAX);
	if ((p = entry_path(s, kind, key, variant)) == NULL)
		return 0;
	dir = al_path_join(al_store_path(s), CACHE_DIR);
	if (dir == NULL) {
		rc = al_error_oom();
		goto out;
	}
	if ((rc = al_fs_mkdir_p(dir, 0755)) < 0)
		goto out;
	rc = al_fs_write_atomic(p, data, len);
out:
	free(dir);
	free(p);
	return rc;
}

int al_store__cache_gc(al_store *s, size_t *removed)
{
	char *dir = al_path_join(al_store_path(s), CACHE_DIR);
	size_t n = 0;
	struct dirent *de;
	DIR *d;
	int rc = 0;

	if (dir == NULL)
		return al_error_oom();
	if ((d = opendir(dir)) == NULL) {
		if (errno != ENOENT)
			rc = al_error_errno(errno, "cannot open '%s'", dir);
		goto out;
	}
	while ((de = readdir(d)) != NULL) {
		al_digest key;
		char *p;
		int held = 0;

		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		/* Temporary files of a killed writer, and what is no entry:
		 * gc runs under the store's lock, so no writer is live. */
		if (entry_key(de->d_name, &key) &&
		    (held = al_store_has_blob(s, &key, NULL)) < 0) {
			rc = held;
			break;
		}
		if (held)
			continue;
		if ((p = al_path_join(dir, de->d_name)) == NULL) {
			rc = al_error_oom();
			break;
		}
		if (unlink(p) == 0)
			n++;
		else if (errno != ENOENT)
			al_log_debug("cache: cannot remove '%s': %s", p,
			             strerror(errno));
		free(p);
	}
	closedir(d);
out:
	if (removed != NULL)
		*removed = n;
	free(dir);
	return rc;
}
