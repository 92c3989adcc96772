/* store_cache_name.c: the file names of the store's cache entries
 * (STORE/airlock/cache/<kind>-<algo>-<hex>[_<variant>].json), made and
 * read back; below store.c, whose gc reads them, and store_cache.c, which
 * reads and writes the entries (docs/store.md "The cache"). */
#include <stdio.h>
#include <string.h>

#include "store_cache_int.h"

static int kind_ok(const char *kind)
{
	size_t i;

	for (i = 0; kind[i] != '\0'; i++)
		if (kind[i] < 'a' || kind[i] > 'z')
			return 0;
	return i > 0 && i <= 32;
}

int al_store__cache_entry_name(char out[AL_STORE_CACHE_NAME_MAX],
                               const char *kind, const al_digest *key,
                               const char *variant)
{
	char hex[AL_DIGEST_STRMAX];
	size_t i, n;
	int len;

	if (!kind_ok(kind))
		return 0;
	len = snprintf(out, AL_STORE_CACHE_NAME_MAX, "%s-%s-%s", kind,
	               al_digest_algo_name(key->algo), al_digest_hex(key, hex));
	if (len < 0 || len >= AL_STORE_CACHE_NAME_MAX)
		return 0;
	n = (size_t)len;
	if (variant != NULL) {
		if (variant[0] == '\0' ||
		    n + 1 + strlen(variant) + 6 >= AL_STORE_CACHE_NAME_MAX)
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
	if (n + 6 >= AL_STORE_CACHE_NAME_MAX)
		return 0;
	memcpy(out + n, ".json", 6);
	return 1;
}

int al_store__cache_entry_key(const char *name, al_digest *key)
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
