/* graph_image.c: the update service's graph-data image: the
 * cincinnati-graph-data tree as one reproducible layer, written into the
 * store as an OCI image (docs/graph.md). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/graph.h"
#include "json_int.h"
#include "layer_int.h"
#include "error_int.h"

#define GRAPH_LAYER_MAX (256 * AL_MIB)
#define GRAPH_FILE_MAX (64 * AL_MIB)
#define GRAPH_ENTRIES_MAX 100000
#define GRAPH_DEPTH_MAX 16
#define GRAPH_CONFIG_MAX (16 * AL_MIB)

/* One path of the tree, relative to its root; directories end in '/'. */
typedef struct entries {
	char **v;
	size_t n, cap;
} entries;

static void entries_free(entries *e)
{
	size_t i;

	for (i = 0; i < e->n; i++)
		free(e->v[i]);
	free(e->v);
	memset(e, 0, sizeof(*e));
}

static int entries_add(entries *e, char *s)
{
	if (s == NULL)
		return al_error_oom();
	if (e->n >= GRAPH_ENTRIES_MAX) {
		free(s);
		return al_error_set(AL_ELIMIT,
		                    "the graph data has more than "
		                    "%d entries",
		                    GRAPH_ENTRIES_MAX);
	}
	if (e->n == e->cap) {
		size_t cap = e->cap ? 2 * e->cap : 64;
		char **v = realloc(e->v, cap * sizeof(*v));

		if (v == NULL) {
			free(s);
			return al_error_oom();
		}
		e->v = v;
		e->cap = cap;
	}
	e->v[e->n++] = s;
	return 0;
}

/* Every directory and regular file under root/rel ("" = root itself). */
static int walk(const char *root, const char *rel, int depth, entries *e)
{
	char *dir = rel[0] != '\0' ? al_path_join(root, rel) : al_strdup(root);
	DIR *dh = NULL;
	struct dirent *de;
	int rc = 0;

	if (dir == NULL)
		return al_error_oom();
	if (depth > GRAPH_DEPTH_MAX) {
		rc = al_error_set(AL_ELIMIT, "'%s' is nested too deep", dir);
		goto out;
	}
	if ((dh = opendir(dir)) == NULL) {
		rc = al_error_errno(errno, "cannot read '%s'", dir);
		goto out;
	}
	while (rc == 0 && (errno = 0, de = readdir(dh)) != NULL) {
		struct stat st;
		char *path, *sub;

		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		sub = rel[0] != '\0' ? al_sprintf("%s/%s", rel, de->d_name)
		                     : al_strdup(de->d_name);
		path = sub != NULL ? al_path_join(root, sub) : NULL;
		if (path == NULL) {
			free(sub);
			rc = al_error_oom();
			break;
		}
		if (lstat(path, &st) < 0) {
			rc = al_error_errno(errno, "cannot stat '%s'", path);
		} else if (S_ISDIR(st.st_mode)) {
			rc = entries_add(e, al_sprintf("%s/", sub));
			if (rc == 0)
				rc = walk(root, sub, depth + 1, e);
		} else if (S_ISREG(st.st_mode)) {
			rc = entries_add(e, al_strdup(sub));
		} else {
			rc = al_error_set(AL_EUNSUPPORTED,
			                  "'%s' is not a regular file or a "
			                  "directory",
			                  path);
		}
		free(path);
		free(sub);
	}
	if (rc == 0 && de == NULL && errno != 0)
		rc = al_error_errno(errno, "cannot read '%s'", dir);
out:
	if (dh != NULL)
		closedir(dh);
	free(dir);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * The layer's tar: the parents of AL_GRAPH_IMAGE_DATA_DIR, the directory,
 * then the tree in byte order of its paths (a directory before what it
 * holds), so the bytes depend on the tree alone.
 */
static int build_tar(const char *dir, al_buf *tar, size_t *count)
{
	/* the last is AL_GRAPH_IMAGE_DATA_DIR, relative, as a directory */
	static const char *const parents[] = {"var/", "var/lib/",
	                                      "var/lib/cincinnati-graph-data/"};
	al_buf data = AL_BUF_INIT(GRAPH_FILE_MAX);
	entries e;
	char *name = NULL, *path = NULL;
	size_t i;
	int rc = 0;

	memset(&e, 0, sizeof(e));
	if ((rc = walk(dir, "", 0, &e)) < 0)
		goto out;
	if (e.n > 1)
		qsort(e.v, e.n, sizeof(*e.v), cmp_str);
	for (i = 0; i < sizeof(parents) / sizeof(parents[0]); i++)
		if ((rc = al_layer_tar_entry(tar, parents[i], 1, NULL)) < 0)
			goto out;
	for (i = 0; i < e.n; i++) {
		size_t n = strlen(e.v[i]);
		int isdir = n > 0 && e.v[i][n - 1] == '/';

		name = al_sprintf("%s%s", parents[2], e.v[i]);
		if (name == NULL) {
			rc = al_error_oom();
			goto out;
		}
		al_buf_reset(&data);
		if (!isdir) {
			path = al_path_join(dir, e.v[i]);
			if (path == NULL) {
				rc = al_error_oom();
				goto out;
			}
			if ((rc = al_fs_read_file(path, &data)) < 0)
				goto out;
		}
		if ((rc = al_layer_tar_entry(tar, name, isdir,
		                             isdir ? NULL : &data)) < 0)
			goto out;
		free(name);
		free(path);
		name = path = NULL;
	}
	if ((rc = al_layer_tar_end(tar)) < 0)
		goto out;
	*count = e.n + sizeof(parents) / sizeof(parents[0]);
out:
	if (rc == AL_ELIMIT && tar->len + 2048 > tar->max)
		rc = al_error_set(AL_ELIMIT,
		                  "the graph-data layer is larger than %llu "
		                  "bytes",
		                  (unsigned long long)tar->max);
	free(name);
	free(path);
	al_buf_free(&data);
	entries_free(&e);
	return rc;
}

static const char *oci_layer_type(const char *mt)
{
	if (strcmp(mt, AL_MT_DOCKER_LAYER_GZIP) == 0)
		return AL_MT_OCI_LAYER_GZIP;
	if (strcmp(mt, AL_MT_DOCKER_LAYER) == 0)
		return AL_MT_OCI_LAYER;
	return mt;
}

/* "os/arch[/variant]" -> the config's os and architecture. */
static int split_platform(const char *platform, char **os, char **arch)
{
	const char *slash = strchr(platform, '/'), *end;

	if (slash == NULL || slash == platform || slash[1] == '\0')
		return al_error_set(AL_EINVAL, "platform '%s' is not os/arch",
		                    platform);
	end = strchr(slash + 1, '/');
	*os = al_strndup(platform, (size_t)(slash - platform));
	*arch = end != NULL ? al_strndup(slash + 1, (size_t)(end - slash - 1))
	                    : al_strdup(slash + 1);
	if (*os == NULL || *arch == NULL) {
		free(*os);
		free(*arch);
		*os = *arch = NULL;
		return al_error_oom();
	}
	return 0;
}

/* The base image's manifest and config (a copy to change), or a new
 * config without layers. */
static int base_config(al_store *s, const al_graph_image_opts *o,
                       const char *platform, al_manifest *m, json_t **cfg)
{
	al_store_image img;
	al_buf b = AL_BUF_INIT(GRAPH_CONFIG_MAX);
	char ds[AL_DIGEST_STRMAX], *os = NULL, *arch = NULL;
	json_t *c = NULL;
	int rc;

	memset(&img, 0, sizeof(img));
	if (o->base == NULL) {
		if ((rc = split_platform(platform, &os, &arch)) < 0)
			return rc;
		c = json_pack("{s:s, s:s, s:{}, s:{s:s, s:[]}, s:[]}",
		              "architecture", arch, "os", os, "config",
		              "rootfs", "type", "layers", "diff_ids",
		              "history");
		free(os);
		free(arch);
		if (c == NULL)
			return al_error_oom();
		*cfg = c;
		return 0;
	}
	if ((rc = al_store_find(s, o->base, &img)) < 0)
		return al_error_wrap(rc, "graph image base '%s'", o->base);
	if ((rc = al_store_image_manifest(s, &img.desc.digest, platform,
	                                  "graph image base", m)) < 0)
		goto out;
	al_digest_str(&m->config.digest, ds);
	if ((rc = al_store_read_blob(s, &m->config.digest, &b)) < 0 ||
	    (rc = al_json_parse(&c, b.ptr, b.len, ds)) < 0)
		goto out;
	if (!json_is_object(c) ||
	    !json_is_array(
	        json_object_get(json_object_get(c, "rootfs"), "diff_ids")) ||
	    json_array_size(json_object_get(json_object_get(c, "rootfs"),
	                                    "diff_ids")) != m->nlayers) {
		rc = al_error_set(AL_EPARSE,
		                  "image config '%s' of '%s' has no "
		                  "rootfs.diff_ids for its %zu layers",
		                  ds, o->base, m->nlayers);
		goto out;
	}
	if (!json_is_object(json_object_get(c, "config")) &&
	    json_object_set_new(c, "config", json_object()) < 0) {
		rc = al_error_oom();
		goto out;
	}
	if (!json_is_array(json_object_get(c, "history")) &&
	    json_object_set_new(c, "history", json_array()) < 0) {
		rc = al_error_oom();
		goto out;
	}
	*cfg = c;
	c = NULL;
out:
	json_decref(c);
	al_store_image_clear(&img);
	al_buf_free(&b);
	return rc;
}

/* The config of the new image: the layer's diff_id, its history line and
 * oc-mirror's command. */
static int finish_config(json_t *cfg, const al_digest *diff)
{
	char ds[AL_DIGEST_STRMAX];
	json_t *cmd, *c = json_object_get(cfg, "config");

	/* oc-mirror v2 (CreateGraphImage): the init container's command */
	cmd = json_pack("[s, s, s]", "/bin/bash", "-c",
	                "exec cp -rp " AL_GRAPH_IMAGE_DATA_DIR
	                "/* " AL_GRAPH_IMAGE_MOUNT);
	if (cmd == NULL || json_object_set_new(c, "Cmd", cmd) < 0 ||
	    json_object_set_new(cfg, "author", json_string("airlock")) < 0 ||
	    json_array_append_new(
	        json_object_get(json_object_get(cfg, "rootfs"), "diff_ids"),
	        json_string(al_digest_str(diff, ds))) < 0 ||
	    json_array_append_new(
	        json_object_get(cfg, "history"),
	        json_pack("{s:s, s:s}", "created_by",
	                  "airlock: graph data in " AL_GRAPH_IMAGE_DATA_DIR,
	                  "comment",
	                  "cincinnati-graph-data of the mirrored releases "
	                  "(airlock graph -o)")) < 0)
		return al_error_oom();
	return 0;
}

static int put_json(al_store *s, json_t *doc, al_digest *d, size_t *len)
{
	char *text = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER);
	int rc;

	if (text == NULL)
		return al_error_oom();
	*len = strlen(text);
	rc = al_store_put_blob(s, (const uint8_t *)text, *len, d);
	free(text);
	return rc;
}

int al_graph_image_from_dir(al_store *s, const char *dir,
                            const al_graph_image_opts *opts,
                            al_graph_image_result *out)
{
	static const al_graph_image_opts defaults = AL_GRAPH_IMAGE_OPTS_INIT;
	const al_graph_image_opts *o = opts != NULL ? opts : &defaults;
	const char *platform, *name;
	al_buf tar = AL_BUF_INIT(GRAPH_LAYER_MAX);
	al_buf gz = AL_BUF_INIT(GRAPH_LAYER_MAX + 64 * AL_MIB);
	al_graph_image_result r = AL_GRAPH_IMAGE_RESULT_INIT;
	al_manifest m;
	json_t *cfg = NULL, *man = NULL, *layers = NULL;
	al_digest cfgd;
	size_t cfglen = 0, manlen = 0, i;
	int rc;

	if ((rc = AL_RESULT_VERSION_CHECK("al_graph_image_result", out, version,
	                                  AL_GRAPH_IMAGE_RESULT_VERSION)) < 0 ||
	    (rc = al_opts_version_check("al_graph_image_opts", o->version,
	                                AL_GRAPH_IMAGE_OPTS_VERSION)) < 0)
		return rc;
	platform = o->platform != NULL ? o->platform : "linux/amd64";
	name = o->name != NULL ? o->name : AL_GRAPH_IMAGE_NAME;
	memset(&m, 0, sizeof(m));
	if (s == NULL || dir == NULL || out == NULL)
		return al_error_set(AL_EINVAL, "no store or directory");
	if ((rc = base_config(s, o, platform, &m, &cfg)) < 0 ||
	    (rc = build_tar(dir, &tar, &r.entries)) < 0 ||
	    (rc = al_digest_bytes(&r.diff_id, AL_DIGEST_SHA256, tar.ptr,
	                          tar.len)) < 0 ||
	    (rc = al_layer_gzip(&tar, &gz)) < 0 ||
	    (rc = al_store_put_blob(s, gz.ptr, gz.len, &r.layer)) < 0 ||
	    (rc = finish_config(cfg, &r.diff_id)) < 0 ||
	    (rc = put_json(s, cfg, &cfgd, &cfglen)) < 0)
		goto out;
	r.layer_size = gz.len;
	if ((layers = json_array()) == NULL) {
		rc = al_error_oom();
		goto out;
	}
	for (i = 0; i < m.nlayers; i++)
		if (json_array_append_new(
		        layers, al_layer_desc_json(
		                    oci_layer_type(m.layers[i].media_type),
		                    &m.layers[i].digest, m.layers[i].size)) <
		    0) {
			rc = al_error_oom();
			goto out;
		}
	if (json_array_append_new(layers,
	                          al_layer_desc_json(AL_MT_OCI_LAYER_GZIP,
	                                             &r.layer, gz.len)) < 0) {
		rc = al_error_oom();
		goto out;
	}
	man = json_pack("{s:i, s:s, s:o, s:O}", "schemaVersion", 2, "mediaType",
	                AL_MT_OCI_MANIFEST, "config",
	                al_layer_desc_json(AL_MT_OCI_CONFIG, &cfgd, cfglen),
	                "layers", layers);
	if (man == NULL) {
		rc = al_error_oom();
		goto out;
	}
	if ((rc = put_json(s, man, &r.manifest.digest, &manlen)) < 0)
		goto out;
	r.manifest.size = manlen;
	if ((r.manifest.media_type = al_strdup(AL_MT_OCI_MANIFEST)) == NULL) {
		rc = al_error_oom();
		goto out;
	}
	if ((rc = al_store_tag(s, name, &r.manifest)) < 0)
		goto out;
	r.version = out->version;
	r.data.version = out->data.version;
	*out = r;
	memset(&r, 0, sizeof(r));
out:
	al_descriptor_clear(&r.manifest);
	al_manifest_clear(&m);
	json_decref(cfg);
	json_decref(man);
	json_decref(layers);
	al_buf_free(&tar);
	al_buf_free(&gz);
	return rc;
}

/* rm -r of the scratch tree this file made (bounded depth). */
static void remove_tree(const char *path, int depth)
{
	DIR *dh;
	struct dirent *de;

	if (depth > GRAPH_DEPTH_MAX + 1 || (dh = opendir(path)) == NULL)
		return;
	while ((de = readdir(dh)) != NULL) {
		struct stat st;
		char *sub;

		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if ((sub = al_path_join(path, de->d_name)) == NULL)
			continue;
		if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode))
			remove_tree(sub, depth + 1);
		else
			(void)unlink(sub);
		free(sub);
	}
	closedir(dh);
	(void)rmdir(path);
}

int al_graph_image_build(al_store *s, const al_graph_image_opts *opts,
                         al_graph_image_result *out)
{
	const char *base;
	al_graph_data_report rep = AL_GRAPH_DATA_REPORT_INIT;
	char *tmp;
	int rc;

	if ((rc = AL_RESULT_VERSION_CHECK("al_graph_image_result", out, version,
	                                  AL_GRAPH_IMAGE_RESULT_VERSION)) < 0)
		return rc;
	if (opts != NULL &&
	    (rc = al_opts_version_check("al_graph_image_opts", opts->version,
	                                AL_GRAPH_IMAGE_OPTS_VERSION)) < 0)
		return rc;
	if (s == NULL || out == NULL)
		return al_error_set(AL_EINVAL, "no store");
	base = opts != NULL && opts->tmpdir != NULL ? opts->tmpdir
	                                            : getenv("TMPDIR");
	if (base == NULL || base[0] == '\0')
		base = "/tmp";
	tmp = al_sprintf("%s/airlock-graph-XXXXXX", base);
	if (tmp == NULL)
		return al_error_oom();
	if (mkdtemp(tmp) == NULL) {
		rc = al_error_errno(errno, "cannot create a directory in '%s'",
		                    base);
		free(tmp);
		return rc;
	}
	rc = al_graph_write_data(s, tmp, &rep);
	if (rc == 0)
		rc = al_graph_image_from_dir(s, tmp, opts, out);
	if (rc == 0)
		out->data = rep;
	remove_tree(tmp, 0);
	free(tmp);
	return rc;
}
