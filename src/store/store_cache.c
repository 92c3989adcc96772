/* store_cache.c: the store's advisory cache, STORE/airlock/cache/<kind>-
 * <algo>-<hex>[_<variant>].json: entries keyed by a blob of the store,
 * written by the process holding the store's lock, removed by gc once
 * their blob went (gc: store.c; the names: store_cache_name.c;
 * docs/store.md "The cache"). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/log.h"
#include "store_cache_int.h"

static char *entry_path(al_store *s, const char *kind, const al_digest *key,
                        const char *variant)
{
	char name[AL_STORE_CACHE_NAME_MAX];

	if (!al_store__cache_entry_name(name, kind, key, variant))
		return NULL;
	return al_sprintf("%s/%s/%s", al_store_path(s), AL_STORE_CACHE_DIR,
	                  name);
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
	dir = al_path_join(al_store_path(s), AL_STORE_CACHE_DIR);
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
