/* sig_keyring.c: trusted keys from the forms clusters ship them in (key
 * files, directories, cluster-update-keys ConfigMaps), and the shipped Red
 * Hat defaults (release keys, signature store). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>
#include <yaml.h>

#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "json_int.h"
#include "airlock/pgp.h"
#include "airlock/ref.h"
#include "airlock/sig.h"
#include "yaml_int.h"

/* src/keys/redhat-release.asc, compiled in by CMake (src/keys/embed.cmake). */
extern const uint8_t al_default_keys_data[];
extern const size_t al_default_keys_len;

/* Files read from one directory, at most. */
#define MAX_DIR_FILES 1024

#define CM_KEY_PREFIX "verifier-public-key-"

int al_sig_keyring_add_defaults(al_pgp_keyring *kr)
{
	if (kr == NULL)
		return al_error_set(AL_EINVAL, "no keyring");
	return al_pgp_keyring_add(kr, al_default_keys_data, al_default_keys_len,
	                          "airlock's Red Hat release keys");
}

int al_sig_is_redhat_release(const char *reference)
{
	al_ref r;
	char *name = NULL;
	int yes;

	if (reference == NULL)
		return 0;
	if (al_str_startswith(reference, "docker://"))
		reference += strlen("docker://");
	memset(&r, 0, sizeof(r));
	if (al_ref_parse(&r, reference) < 0) {
		al_error_clear();
		return 0;
	}
	name = al_ref_name(&r);
	yes = name != NULL &&
	      al_str_startswith(name, AL_SIG_REDHAT_RELEASE_PREFIX) &&
	      strlen(name) > strlen(AL_SIG_REDHAT_RELEASE_PREFIX);
	free(name);
	al_ref_clear(&r);
	return yes;
}

int al_sig_any_redhat_release(const char *const *refs, size_t n)
{
	size_t i;

	for (i = 0; refs != NULL && i < n; i++)
		if (al_sig_is_redhat_release(refs[i]))
			return 1;
	return 0;
}

int al_sig_sources_add_redhat(al_sig_source *sources, size_t *n, size_t cap)
{
	const char *url = al_sig_redhat_store();
	size_t i;

	if (sources == NULL || n == NULL || *n >= cap)
		return 0;
	for (i = 0; i < *n; i++)
		if (sources[i].location != NULL &&
		    strcmp(sources[i].location, url) == 0)
			return 0;
	if (al_sig_source_parse(&sources[*n], url) < 0) {
		al_error_clear();
		return 0;
	}
	(*n)++;
	return 1;
}

const char *al_sig_redhat_store(void)
{
	const char *env = getenv("AIRLOCK_REDHAT_SIGNATURE_STORE");

	return env != NULL && env[0] != '\0' ? env : AL_SIG_REDHAT_STORE;
}

/* Add the verifier-public-key-* data of the ConfigMaps in doc (a ConfigMap
 * or a List of them); *found counts the keys added. */
static int cm_keys(al_pgp_keyring *kr, const json_t *doc, const char *path,
                   size_t *found)
{
	const char *kind = al_json_str(doc, "kind"), *key;
	json_t *items, *item, *data, *v;
	char *what;
	size_t i;
	int rc;

	if (kind != NULL && strcmp(kind, "List") == 0) {
		items = json_object_get(doc, "items");
		json_array_foreach(items, i, item)
		{
			if ((rc = cm_keys(kr, item, path, found)) < 0)
				return rc;
		}
		return 0;
	}
	if (kind == NULL || strcmp(kind, "ConfigMap") != 0)
		return 0;
	data = json_object_get(doc, "data");
	if (data != NULL && !json_is_object(data))
		return al_error_set(AL_EPARSE, "'%s': data is not a map", path);
	json_object_foreach(data, key, v)
	{
		if (!al_str_startswith(key, CM_KEY_PREFIX))
			continue;
		if (!json_is_string(v))
			return al_error_set(AL_EPARSE,
			                    "'%s': data '%s' is not a string",
			                    path, key);
		if ((what = al_sprintf("%s: %s", path, key)) == NULL)
			return al_error_set(AL_ENOMEM, "out of memory");
		rc = al_pgp_keyring_add(kr,
		                        (const uint8_t *)json_string_value(v),
		                        json_string_length(v), what);
		free(what);
		if (rc < 0)
			return rc;
		(*found)++;
	}
	return 0;
}

/* One verifier-public-key-* entry of a YAML document. */
typedef struct cm_kv {
	char *key;
	char *val;
	size_t len;
} cm_kv;

static void kv_clear(cm_kv *kv, size_t *n)
{
	size_t i;

	for (i = 0; i < *n; i++) {
		free(kv[i].key);
		free(kv[i].val);
	}
	*n = 0;
}

/*
 * The ConfigMaps of a YAML stream, read with libyaml events rather than
 * al_yaml_load: the manifest cluster-update-keys ships names
 * metadata.namespace twice, which Kubernetes' decoder takes (the last one
 * wins) and a strict loader refuses. Only top-level "kind" and the scalar
 * entries of top-level "data" matter; everything else is skipped.
 */
static int cm_yaml(al_pgp_keyring *kr, const uint8_t *p, size_t n,
                   const char *path, size_t *found)
{
	enum { T_OTHER, T_KIND, T_DATA } top = T_OTHER;
	yaml_parser_t ps;
	yaml_event_t ev;
	cm_kv *kv = NULL;
	size_t nkv = 0, i, depth = 0;
	char *dkey = NULL, *what = NULL;
	int rc = 0, done = 0, top_key = 0, in_data = 0, data_key = 0, is_cm = 0;

	if (!yaml_parser_initialize(&ps))
		return al_error_set(AL_ENOMEM, "out of memory");
	yaml_parser_set_input_string(&ps, p, n);
	while (!done && rc == 0) {
		if (!yaml_parser_parse(&ps, &ev)) {
			rc = al_error_set(
			    AL_EPARSE,
			    "'%s' is neither an OpenPGP key nor a "
			    "ConfigMap: %zu:%zu: %s",
			    path, ps.problem_mark.line + 1,
			    ps.problem_mark.column + 1,
			    ps.problem != NULL ? ps.problem : "invalid YAML");
			break;
		}
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		case YAML_DOCUMENT_START_EVENT:
			depth = 0;
			is_cm = in_data = 0;
			top = T_OTHER;
			kv_clear(kv, &nkv);
			break;
		case YAML_DOCUMENT_END_EVENT:
			for (i = 0; is_cm && i < nkv && rc == 0; i++) {
				if (!al_str_startswith(kv[i].key,
				                       CM_KEY_PREFIX))
					continue;
				free(what);
				what = al_sprintf("%s: %s", path, kv[i].key);
				if (what == NULL) {
					rc = al_error_set(AL_ENOMEM,
					                  "out of memory");
					break;
				}
				rc = al_pgp_keyring_add(
				    kr, (const uint8_t *)kv[i].val, kv[i].len,
				    what);
				if (rc == 0)
					(*found)++;
			}
			kv_clear(kv, &nkv);
			break;
		case YAML_MAPPING_START_EVENT:
		case YAML_SEQUENCE_START_EVENT:
			depth++;
			if (depth == 1 && ev.type == YAML_MAPPING_START_EVENT)
				top_key = 1;
			if (depth == 2 && top == T_DATA && !top_key &&
			    ev.type == YAML_MAPPING_START_EVENT) {
				in_data = 1;
				data_key = 1;
			}
			break;
		case YAML_MAPPING_END_EVENT:
		case YAML_SEQUENCE_END_EVENT:
			if (depth > 0)
				depth--;
			if (depth == 1) {
				top_key = 1;
				in_data = 0;
			} else if (depth == 2 && in_data) {
				data_key = 1; /* a nested value: skipped */
				free(dkey);
				dkey = NULL;
			}
			break;
		case YAML_SCALAR_EVENT:
		case YAML_ALIAS_EVENT: {
			const char *v = ev.type == YAML_SCALAR_EVENT
			                    ? (const char *)ev.data.scalar.value
			                    : "";
			size_t vl = ev.type == YAML_SCALAR_EVENT
			                ? ev.data.scalar.length
			                : 0;
			if (depth == 1 && top_key) {
				top = strcmp(v, "kind") == 0   ? T_KIND
				      : strcmp(v, "data") == 0 ? T_DATA
				                               : T_OTHER;
				top_key = 0;
			} else if (depth == 1) {
				if (top == T_KIND)
					is_cm = strcmp(v, "ConfigMap") == 0;
				top_key = 1;
			} else if (depth == 2 && in_data && data_key) {
				free(dkey);
				if ((dkey = al_strdup(v)) == NULL)
					rc = al_error_set(AL_ENOMEM,
					                  "out of memory");
				data_key = 0;
			} else if (depth == 2 && in_data) {
				cm_kv *grown =
				    realloc(kv, (nkv + 1) * sizeof(*grown));
				char *val = malloc(vl + 1);
				if (grown != NULL)
					kv = grown;
				if (grown == NULL || val == NULL ||
				    dkey == NULL) {
					free(val);
					rc = al_error_set(AL_ENOMEM,
					                  "out of memory");
				} else {
					memcpy(val, v, vl);
					val[vl] = '\0';
					kv[nkv].key = dkey;
					kv[nkv].val = val;
					kv[nkv].len = vl;
					nkv++;
					dkey = NULL;
				}
				data_key = 1;
			}
			break;
		}
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	kv_clear(kv, &nkv);
	free(kv);
	free(dkey);
	free(what);
	yaml_parser_delete(&ps);
	return rc;
}

/*
 * The ConfigMaps (or Lists of them) of a YAML stream through the strict
 * loader. Returns 0 when the stream loaded (keys added, *found counted),
 * 1 when the strict loader or the conversion refused it (nothing added),
 * or a negative status when adding a key failed.
 */
static int yaml_docs(al_pgp_keyring *kr, const uint8_t *p, size_t n,
                     const char *path, size_t *found)
{
	al_yaml_node **ydocs = NULL;
	json_t **docs = NULL;
	size_t nydocs = 0, i;
	int rc = 0;

	if (al_yaml_load(&ydocs, &nydocs, p, n, path) < 0)
		return 1;
	if (nydocs > 0 && (docs = calloc(nydocs, sizeof(*docs))) == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < nydocs; i++) {
		if (al_yaml_to_json(&docs[i], ydocs[i]) < 0) {
			rc = 1;
			goto out;
		}
	}
	for (i = 0; i < nydocs && rc == 0; i++)
		rc = cm_keys(kr, docs[i], path, found);
out:
	for (i = 0; docs != NULL && i < nydocs; i++)
		json_decref(docs[i]);
	free(docs);
	al_yaml_docs_free(ydocs, nydocs);
	return rc;
}

/* 1 when a line of p[0..n) starts with "-----BEGIN PGP" (an armored key,
 * maybe after gpg's listing, as library-go's redhat.txt has it; in a
 * ConfigMap the armor is indented). */
static int has_armor_line(const uint8_t *p, size_t n)
{
	static const char begin[] = "-----BEGIN PGP";
	size_t i, k = sizeof(begin) - 1;

	for (i = 0; i + k <= n; i++) {
		if ((i == 0 || p[i - 1] == '\n') &&
		    memcmp(p + i, begin, k) == 0)
			return 1;
	}
	return 0;
}

/* p[0..n) as read from path: OpenPGP keys (armored or binary) or ConfigMap
 * YAML / JSON whose data verifier-public-key-* hold armored keys (as
 * openshift/cluster-update-keys ships them and library-go reads them). */
static int add_bytes(al_pgp_keyring *kr, const uint8_t *p, size_t n,
                     const char *path)
{
	size_t i = 0, found = 0;
	json_t *doc = NULL;
	int rc = 0;

	while (i < n &&
	       (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n'))
		i++;
	if (i == n)
		return al_error_set(AL_EPARSE, "'%s' is empty", path);
	if ((p[i] & 0x80) != 0 || has_armor_line(p, n))
		return al_pgp_keyring_add(kr, p, n, path);
	if (p[i] == '{') {
		if ((rc = al_json_parse(&doc, p, n, path)) == 0)
			rc = cm_keys(kr, doc, path, &found);
	} else if ((rc = yaml_docs(kr, p, n, path, &found)) == 1) {
		/* not for the strict loader (the committed manifest's
		 * duplicate key): the tolerant reader, from scratch */
		al_error_clear();
		found = 0;
		rc = cm_yaml(kr, p, n, path, &found);
	}
	if (rc == 0 && found == 0)
		rc = al_error_set(AL_EPARSE,
		                  "'%s' is neither an OpenPGP key nor a "
		                  "ConfigMap with " CM_KEY_PREFIX "* data",
		                  path);
	json_decref(doc);
	return rc;
}

/* One file, symlinks followed (a mounted ConfigMap is symlinks into
 * ..data/): the user named it, or it is in a directory the user named. */
static int add_file(al_pgp_keyring *kr, const char *path)
{
	al_buf data = AL_BUF_INIT(AL_PGP_MAX_KEYRING_BYTES);
	char real[PATH_MAX];
	int rc;

	if (realpath(path, real) == NULL)
		return al_error_set(errno == ENOENT ? AL_ENOTFOUND : AL_EIO,
		                    "cannot read keyring '%s': %s", path,
		                    strerror(errno));
	rc = al_fs_read_file(real, &data);
	if (rc == AL_ELIMIT)
		rc = al_error_set(AL_ELIMIT,
		                  "keyring '%s' is larger than %zu bytes", path,
		                  (size_t)AL_PGP_MAX_KEYRING_BYTES);
	else if (rc < 0)
		rc = al_error_wrap(rc, "cannot read keyring '%s': ", path);
	else
		rc = add_bytes(kr, data.ptr, data.len, path);
	al_buf_free(&data);
	return rc;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Every key file of dir, in name order: hidden names (a mounted ConfigMap's
 * ..data) and subdirectories are skipped; when a file is named
 * verifier-public-key-* the directory is a mounted cluster-update-keys
 * ConfigMap and only those are keys (store-* hold URLs).
 */
static int add_dir(al_pgp_keyring *kr, const char *dir)
{
	DIR *d = NULL;
	struct dirent *e;
	char **names = NULL, *path = NULL;
	size_t n = 0, i, nread = 0;
	int rc = 0, cm = 0;

	if ((d = opendir(dir)) == NULL)
		return al_error_set(AL_EIO,
		                    "cannot read keyring directory "
		                    "'%s': %s",
		                    dir, strerror(errno));
	while ((e = readdir(d)) != NULL) {
		char **grown;
		if (e->d_name[0] == '.')
			continue;
		if (n == MAX_DIR_FILES) {
			rc = al_error_set(AL_ELIMIT,
			                  "keyring directory '%s' has more "
			                  "than %d files",
			                  dir, MAX_DIR_FILES);
			goto out;
		}
		grown = realloc(names, (n + 1) * sizeof(*grown));
		if (grown == NULL ||
		    (grown[n] = al_strdup(e->d_name)) == NULL) {
			if (grown != NULL)
				names = grown;
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		names = grown;
		cm |= al_str_startswith(names[n], CM_KEY_PREFIX);
		n++;
	}
	if (n > 1)
		qsort(names, n, sizeof(*names), name_cmp);
	for (i = 0; i < n; i++) {
		struct stat st;
		if (cm && !al_str_startswith(names[i], CM_KEY_PREFIX))
			continue;
		free(path);
		if ((path = al_path_join(dir, names[i])) == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		if ((rc = add_file(kr, path)) < 0)
			goto out;
		nread++;
	}
	if (nread == 0)
		rc = al_error_set(AL_ENOTFOUND,
		                  "keyring directory '%s' holds no key file",
		                  dir);
out:
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(path);
	closedir(d);
	return rc;
}

int al_sig_keyring_add_path(al_pgp_keyring *kr, const char *path)
{
	struct stat st;

	if (kr == NULL || path == NULL || path[0] == '\0')
		return al_error_set(AL_EINVAL, "no keyring path");
	if (stat(path, &st) != 0)
		return al_error_set(errno == ENOENT ? AL_ENOTFOUND : AL_EIO,
		                    "cannot read keyring '%s': %s", path,
		                    strerror(errno));
	if (S_ISDIR(st.st_mode))
		return add_dir(kr, path);
	return add_file(kr, path);
}

int al_sig_keyring_load_paths(al_pgp_keyring **out, const char *const *paths,
                              size_t n, unsigned flags)
{
	al_pgp_keyring *kr = NULL;
	size_t i;
	int rc;

	if (out == NULL || (paths == NULL && n > 0))
		return al_error_set(AL_EINVAL, "invalid argument");
	if ((rc = al_pgp_keyring_new(&kr)) < 0)
		return rc;
	al_pgp_keyring_set_flags(kr, flags);
	for (i = 0; i < n; i++) {
		if ((rc = al_sig_keyring_add_path(kr, paths[i])) < 0)
			goto out;
	}
	if (n == 0 && (rc = al_sig_keyring_add_defaults(kr)) < 0)
		goto out;
	*out = kr;
	kr = NULL;
	rc = 0;
out:
	al_pgp_keyring_free(kr);
	return rc;
}
