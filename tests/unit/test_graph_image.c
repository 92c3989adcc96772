/* test_graph_image.c: the graph-data image (digests, diff_ids, tar order and
 * fields, reproducibility, base images) and the UpdateService resource. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "al_test.h"
#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/graph.h"
#include "airlock/kres.h"
#include "airlock/store.h"
#include "json_int.h"
#include "yaml_int.h"

static char *mkpath(const char *a, const char *b)
{
	return al_sprintf("%s/%s", a, b);
}

static void put(const char *dir, const char *rel, const char *text)
{
	char *p = mkpath(dir, rel);

	CU_ASSERT_PTR_NOT_NULL(p);
	if (p != NULL)
		CU_ASSERT_EQUAL(al_fs_write_atomic(p, text, strlen(text)), 0);
	free(p);
}

/* A small cincinnati-graph-data tree in a new directory. */
static char *make_tree(const char *name)
{
	char *dir = mkpath(al_test_tmpdir(), name), *p;

	if (dir == NULL)
		return NULL;
	p = mkpath(dir, "channels");
	CU_ASSERT_EQUAL(al_fs_mkdir_p(p, 0755), 0);
	free(p);
	p = mkpath(dir, "blocked-edges");
	CU_ASSERT_EQUAL(al_fs_mkdir_p(p, 0755), 0);
	free(p);
	p = mkpath(dir, "airlock/graph");
	CU_ASSERT_EQUAL(al_fs_mkdir_p(p, 0755), 0);
	free(p);
	put(dir, "version", "1.2.0\n");
	put(dir, "channels/stable-4.14.yaml",
	    "name: stable-4.14\nversions:\n- 4.14.1\n");
	put(dir, "channels/fast-4.14.yaml", "name: fast-4.14\nversions: []\n");
	put(dir, "airlock/graph/stable-4.14-amd64.json",
	    "{\"nodes\":[],\"edges\":[]}\n");
	return dir;
}

static al_store *new_store(const char *name)
{
	al_store_opts so = {.create = 1};
	al_store *s = NULL;
	char *p = mkpath(al_test_tmpdir(), name);

	if (p != NULL)
		CU_ASSERT_EQUAL(al_store_open(&s, p, &so), 0);
	free(p);
	return s;
}

static json_t *read_json(al_store *s, const al_digest *d)
{
	al_buf b = AL_BUF_INIT(1 << 20);
	json_t *j = NULL;

	CU_ASSERT_EQUAL(al_store_read_blob(s, d, &b), 0);
	CU_ASSERT_EQUAL(al_json_parse(&j, b.ptr, b.len, "blob"), 0);
	al_buf_free(&b);
	return j;
}

static int digest_of(const json_t *o, const char *key, al_digest *d)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s != NULL ? al_digest_parse_str(d, s) : -1;
}

static int gunzip(const al_buf *in, al_buf *out)
{
	z_stream zs;
	uint8_t chunk[16384];
	int zr, rc = 0;

	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, 15 + 16) != Z_OK)
		return -1;
	zs.next_in = in->ptr;
	zs.avail_in = (uInt)in->len;
	do {
		zs.next_out = chunk;
		zs.avail_out = sizeof(chunk);
		zr = inflate(&zs, Z_NO_FLUSH);
		if (zr != Z_OK && zr != Z_STREAM_END) {
			rc = -1;
			break;
		}
		if (al_buf_append(out, chunk, sizeof(chunk) - zs.avail_out) <
		    0) {
			rc = -1;
			break;
		}
	} while (zr != Z_STREAM_END);
	inflateEnd(&zs);
	return rc;
}

/* An octal tar field (digits, then NUL or space); -1 if malformed. */
static long octal(const uint8_t *f, size_t n)
{
	long v = 0;
	size_t i;

	for (i = 0; i < n && f[i] >= '0' && f[i] <= '7'; i++)
		v = v * 8 + (f[i] - '0');
	if (i == 0 || (i < n && f[i] != '\0' && f[i] != ' '))
		return -1;
	return v;
}

/* Names of the tar's entries, one per line, with a check of every
 * header's owner, time and checksum. */
static int tar_names(const al_buf *tar, al_buf *names)
{
	size_t off = 0;

	while (off + 512 <= tar->len) {
		const uint8_t *h = tar->ptr + off;
		long size, sum = 0, want;
		size_t i;

		if (h[0] == '\0')
			return 0;
		for (i = 0; i < 512; i++)
			sum += (i >= 148 && i < 156) ? ' ' : h[i];
		want = octal(h + 148, 8);
		size = octal(h + 124, 12);
		if (sum != want || size < 0 ||
		    memcmp(h + 108, "0000000", 7) != 0 ||
		    memcmp(h + 116, "0000000", 7) != 0 ||
		    memcmp(h + 136, "00000000000", 11) != 0 ||
		    memcmp(h + 257, "ustar", 5) != 0)
			return -1;
		al_buf_printf(names, "%.100s %c %.7s\n", (const char *)h,
		              h[156], (const char *)h + 100);
		off += 512 + ((size_t)size + 511) / 512 * 512;
	}
	return -1;
}

static void test_graph_image__digests_and_diff_ids(void)
{
	char *dir = make_tree("tree1");
	al_store *s = new_store("store1");
	al_graph_image_result r = AL_GRAPH_IMAGE_RESULT_INIT;
	al_store_image img;
	json_t *m = NULL, *cfg = NULL, *layers, *l;
	al_buf blob = AL_BUF_INIT(1 << 20), tar = AL_BUF_INIT(1 << 20);
	al_buf names = AL_BUF_INIT(1 << 16);
	al_digest d, cd, diff;
	const char *want_names =
	    "var/ 5 0000755\n"
	    "var/lib/ 5 0000755\n"
	    "var/lib/cincinnati-graph-data/ 5 0000755\n"
	    "var/lib/cincinnati-graph-data/airlock/ 5 0000755\n"
	    "var/lib/cincinnati-graph-data/airlock/graph/ 5 0000755\n"
	    "var/lib/cincinnati-graph-data/airlock/graph/"
	    "stable-4.14-amd64.json "
	    "0 0000644\n"
	    "var/lib/cincinnati-graph-data/blocked-edges/ 5 0000755\n"
	    "var/lib/cincinnati-graph-data/channels/ 5 0000755\n"
	    "var/lib/cincinnati-graph-data/channels/fast-4.14.yaml 0 0000644\n"
	    "var/lib/cincinnati-graph-data/channels/stable-4.14.yaml 0 "
	    "0000644\n"
	    "var/lib/cincinnati-graph-data/version 0 0000644\n";

	memset(&img, 0, sizeof(img));
	if (dir == NULL || s == NULL)
		goto out;
	CU_ASSERT_EQUAL(al_graph_image_from_dir(s, dir, NULL, &r), 0);
	CU_ASSERT_EQUAL(r.entries, 11);
	CU_ASSERT_STRING_EQUAL(r.manifest.media_type, AL_MT_OCI_MANIFEST);
	/* tagged under oc-mirror's name */
	CU_ASSERT_EQUAL(al_store_find(s, AL_GRAPH_IMAGE_NAME, &img), 0);
	CU_ASSERT(al_digest_equal(&img.desc.digest, &r.manifest.digest));
	m = read_json(s, &r.manifest.digest);
	if (m == NULL)
		goto out;
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(m, "schemaVersion")),
	                2);
	CU_ASSERT_STRING_EQUAL(al_json_str(m, "mediaType"), AL_MT_OCI_MANIFEST);
	layers = json_object_get(m, "layers");
	CU_ASSERT_EQUAL(json_array_size(layers), 1);
	l = json_array_get(layers, 0);
	CU_ASSERT_STRING_EQUAL(al_json_str(l, "mediaType"),
	                       AL_MT_OCI_LAYER_GZIP);
	CU_ASSERT_EQUAL(digest_of(l, "digest", &d), 0);
	CU_ASSERT(al_digest_equal(&d, &r.layer));
	CU_ASSERT_EQUAL(
	    (uint64_t)json_integer_value(json_object_get(l, "size")),
	    r.layer_size);
	/* the layer blob: its digest re-hashed by read_blob, its tar's
	 * SHA-256 is the diff_id */
	CU_ASSERT_EQUAL(al_store_read_blob(s, &r.layer, &blob), 0);
	CU_ASSERT_EQUAL(blob.len, r.layer_size);
	CU_ASSERT_EQUAL(gunzip(&blob, &tar), 0);
	CU_ASSERT_EQUAL(
	    al_digest_bytes(&diff, AL_DIGEST_SHA256, tar.ptr, tar.len), 0);
	CU_ASSERT(al_digest_equal(&diff, &r.diff_id));
	CU_ASSERT_EQUAL(tar.len % 512, 0);
	CU_ASSERT_EQUAL(tar_names(&tar, &names), 0);
	CU_ASSERT_STRING_EQUAL(al_buf_cstr(&names), want_names);
	/* the config: diff_ids, rootfs type, history, oc-mirror's Cmd */
	CU_ASSERT_EQUAL(digest_of(json_object_get(m, "config"), "digest", &cd),
	                0);
	cfg = read_json(s, &cd);
	if (cfg == NULL)
		goto out;
	{
		json_t *rootfs = json_object_get(cfg, "rootfs");
		json_t *ids = json_object_get(rootfs, "diff_ids");
		json_t *cmd =
		    json_object_get(json_object_get(cfg, "config"), "Cmd");
		al_digest id;

		CU_ASSERT_STRING_EQUAL(al_json_str(rootfs, "type"), "layers");
		CU_ASSERT_EQUAL(json_array_size(ids), 1);
		CU_ASSERT_EQUAL(
		    al_digest_parse_str(
		        &id, json_string_value(json_array_get(ids, 0))),
		    0);
		CU_ASSERT(al_digest_equal(&id, &r.diff_id));
		CU_ASSERT_EQUAL(
		    json_array_size(json_object_get(cfg, "history")), 1);
		CU_ASSERT_STRING_EQUAL(al_json_str(cfg, "architecture"),
		                       "amd64");
		CU_ASSERT_STRING_EQUAL(al_json_str(cfg, "os"), "linux");
		CU_ASSERT_EQUAL(json_array_size(cmd), 3);
		CU_ASSERT_STRING_EQUAL(
		    json_string_value(json_array_get(cmd, 2)),
		    "exec cp -rp /var/lib/cincinnati-graph-data/* "
		    "/var/lib/cincinnati/graph-data");
	}
out:
	json_decref(m);
	json_decref(cfg);
	al_descriptor_clear(&r.manifest);
	al_store_image_clear(&img);
	al_buf_free(&blob);
	al_buf_free(&tar);
	al_buf_free(&names);
	al_store_free(s);
	free(dir);
}

static void test_graph_image__reproducible(void)
{
	char *a = make_tree("tree2a"), *b = make_tree("tree2b");
	al_store *s1 = new_store("store2a"), *s2 = new_store("store2b");
	al_graph_image_result r1 = AL_GRAPH_IMAGE_RESULT_INIT, r2 = AL_GRAPH_IMAGE_RESULT_INIT, r3 = AL_GRAPH_IMAGE_RESULT_INIT;
	al_graph_image_opts o = AL_GRAPH_IMAGE_OPTS_INIT;

	if (a == NULL || b == NULL || s1 == NULL || s2 == NULL)
		goto out;
	CU_ASSERT_EQUAL(al_graph_image_from_dir(s1, a, NULL, &r1), 0);
	CU_ASSERT_EQUAL(al_graph_image_from_dir(s2, b, NULL, &r2), 0);
	/* same tree, other directory and store: same bytes */
	CU_ASSERT(al_digest_equal(&r1.manifest.digest, &r2.manifest.digest));
	CU_ASSERT(al_digest_equal(&r1.layer, &r2.layer));
	/* one byte changed: another layer, another image */
	put(b, "version", "1.2.1\n");
	o.name = "localhost/openshift/graph-image:other";
	CU_ASSERT_EQUAL(al_graph_image_from_dir(s2, b, &o, &r3), 0);
	CU_ASSERT(!al_digest_equal(&r1.diff_id, &r3.diff_id));
	CU_ASSERT(!al_digest_equal(&r1.manifest.digest, &r3.manifest.digest));
out:
	al_descriptor_clear(&r1.manifest);
	al_descriptor_clear(&r2.manifest);
	al_descriptor_clear(&r3.manifest);
	al_store_free(s1);
	al_store_free(s2);
	free(a);
	free(b);
}

static void test_graph_image__refuses_symlinks(void)
{
	char *dir = make_tree("tree3"), *link = NULL;
	al_store *s = new_store("store3");
	al_graph_image_result r = AL_GRAPH_IMAGE_RESULT_INIT;
	al_store_image img;

	memset(&img, 0, sizeof(img));
	if (dir == NULL || s == NULL)
		goto out;
	link = mkpath(dir, "channels/evil.yaml");
	CU_ASSERT_EQUAL(symlink("/etc/passwd", link), 0);
	CU_ASSERT_EQUAL(al_graph_image_from_dir(s, dir, NULL, &r),
	                AL_EUNSUPPORTED);
	CU_ASSERT(strstr(al_error_message(), "evil.yaml") != NULL);
	/* nothing named */
	CU_ASSERT_EQUAL(al_store_find(s, AL_GRAPH_IMAGE_NAME, &img),
	                AL_ENOTFOUND);
out:
	al_store_image_clear(&img);
	al_store_free(s);
	free(link);
	free(dir);
}

/* A one-layer base image tagged AL_GRAPH_IMAGE_BASE; ndiff diff_ids. */
static int put_base(al_store *s, int ndiff)
{
	static const uint8_t layer[] = "not really a layer";
	char ds[AL_DIGEST_STRMAX], cs[AL_DIGEST_STRMAX], *ctext, *mtext;
	al_digest ld, cd;
	al_descriptor desc;
	int rc;

	memset(&desc, 0, sizeof(desc));
	if ((rc = al_store_put_blob(s, layer, sizeof(layer), &ld)) < 0)
		return rc;
	al_digest_str(&ld, ds);
	ctext = al_sprintf("{\"architecture\":\"amd64\",\"os\":\"linux\","
	                   "\"config\":{\"Env\":[\"PATH=/usr/bin\"]},"
	                   "\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[%s]},"
	                   "\"history\":[{\"created_by\":\"base\"}]}",
	                   ndiff == 1 ? "\"sha256:"
	                                "00000000000000000000000000000000000000"
	                                "00000000000000000000000000\""
	                              : "");
	if (ctext == NULL)
		return AL_ENOMEM;
	rc = al_store_put_blob(s, (const uint8_t *)ctext, strlen(ctext), &cd);
	al_digest_str(&cd, cs);
	mtext = rc == 0
	            ? al_sprintf("{\"schemaVersion\":2,\"mediaType\":\"%s\","
	                         "\"config\":{\"mediaType\":\"%s\","
	                         "\"digest\":\"%s\",\"size\":%zu},"
	                         "\"layers\":[{\"mediaType\":\"%s\","
	                         "\"digest\":\"%s\",\"size\":%zu}]}",
	                         AL_MT_DOCKER_MANIFEST, AL_MT_DOCKER_CONFIG, cs,
	                         strlen(ctext), AL_MT_DOCKER_LAYER_GZIP, ds,
	                         sizeof(layer))
	            : NULL;
	free(ctext);
	if (mtext == NULL)
		return rc < 0 ? rc : AL_ENOMEM;
	rc = al_store_put_blob(s, (const uint8_t *)mtext, strlen(mtext),
	                       &desc.digest);
	desc.size = strlen(mtext);
	desc.media_type = (char *)(uintptr_t)AL_MT_DOCKER_MANIFEST;
	free(mtext);
	if (rc == 0)
		rc = al_store_tag(s, AL_GRAPH_IMAGE_BASE, &desc);
	return rc;
}

static void test_graph_image__on_a_base(void)
{
	char *dir = make_tree("tree4");
	al_store *s = new_store("store4"), *s2 = new_store("store4b");
	al_graph_image_result r = AL_GRAPH_IMAGE_RESULT_INIT;
	al_graph_image_opts o = AL_GRAPH_IMAGE_OPTS_INIT;
	json_t *m = NULL, *cfg = NULL;
	al_digest cd;

	if (dir == NULL || s == NULL || s2 == NULL)
		goto out;
	o.base = AL_GRAPH_IMAGE_BASE;
	/* not in the store */
	CU_ASSERT_EQUAL(al_graph_image_from_dir(s, dir, &o, &r), AL_ENOTFOUND);
	CU_ASSERT(strstr(al_error_message(), AL_GRAPH_IMAGE_BASE) != NULL);
	CU_ASSERT_EQUAL(put_base(s, 1), 0);
	CU_ASSERT_EQUAL(al_graph_image_from_dir(s, dir, &o, &r), 0);
	m = read_json(s, &r.manifest.digest);
	if (m == NULL)
		goto out;
	/* base layer first (as an OCI layer), the graph data on top */
	CU_ASSERT_EQUAL(json_array_size(json_object_get(m, "layers")), 2);
	CU_ASSERT_STRING_EQUAL(
	    al_json_str(json_array_get(json_object_get(m, "layers"), 0),
	                "mediaType"),
	    AL_MT_OCI_LAYER_GZIP);
	CU_ASSERT_EQUAL(digest_of(json_object_get(m, "config"), "digest", &cd),
	                0);
	cfg = read_json(s, &cd);
	if (cfg == NULL)
		goto out;
	CU_ASSERT_EQUAL(json_array_size(json_object_get(
	                    json_object_get(cfg, "rootfs"), "diff_ids")),
	                2);
	CU_ASSERT_EQUAL(json_array_size(json_object_get(cfg, "history")), 2);
	/* the base's settings kept, the command replaced */
	CU_ASSERT_EQUAL(json_array_size(json_object_get(
	                    json_object_get(cfg, "config"), "Env")),
	                1);
	CU_ASSERT_EQUAL(json_array_size(json_object_get(
	                    json_object_get(cfg, "config"), "Cmd")),
	                3);
	/* a base config whose diff_ids do not match its layers */
	al_descriptor_clear(&r.manifest);
	CU_ASSERT_EQUAL(put_base(s2, 0), 0);
	CU_ASSERT_EQUAL(al_graph_image_from_dir(s2, dir, &o, &r), AL_EPARSE);
	CU_ASSERT(strstr(al_error_message(), "diff_ids") != NULL);
out:
	json_decref(m);
	json_decref(cfg);
	al_descriptor_clear(&r.manifest);
	al_store_free(s);
	al_store_free(s2);
	free(dir);
}

static void test_graph_image__build_from_store(void)
{
	al_store *s = new_store("store5");
	al_graph_image_result r = AL_GRAPH_IMAGE_RESULT_INIT;
	al_store_release rel;
	char *tmp = mkpath(al_test_tmpdir(), "scratch5");

	memset(&rel, 0, sizeof(rel));
	if (s == NULL || tmp == NULL)
		goto out;
	CU_ASSERT_EQUAL(al_fs_mkdir_p(tmp, 0755), 0);
	{
		al_graph_image_opts o = AL_GRAPH_IMAGE_OPTS_INIT;

		o.tmpdir = tmp;
		/* no release: nothing to describe */
		CU_ASSERT_EQUAL(al_graph_image_build(s, &o, &r), AL_ENOTFOUND);
		rel.version = (char *)"4.14.1";
		rel.has_digest = 1;
		rel.components = -1;
		rel.verified = AL_STORE_UNCHECKED;
		CU_ASSERT_EQUAL(al_digest_bytes(&rel.digest, AL_DIGEST_SHA256,
		                                (const uint8_t *)"x", 1),
		                0);
		CU_ASSERT_EQUAL(al_store_release_put(s, &rel, 0, NULL), 0);
		CU_ASSERT_EQUAL(al_graph_image_build(s, &o, &r), 0);
		CU_ASSERT(r.entries >= 7); /* 3 parents, version, 3 dirs */
	}
	/* the scratch tree is gone */
	CU_ASSERT_EQUAL(al_test_sh("test -z \"$(ls -A '%s')\"", tmp), 0);
out:
	al_descriptor_clear(&r.manifest);
	al_store_free(s);
	free(tmp);
}

/* Structural openAPIV3Schema check (types, required, no unknown field,
 * minimum, int32): 1 when v conforms, else 0 with the path on stderr. */
static int conforms(const json_t *schema, const json_t *v, const char *path)
{
	const char *type = al_json_str(schema, "type"), *k;
	json_t *props = json_object_get(schema, "properties"), *x;
	json_t *min = json_object_get(schema, "minimum");
	size_t i;
	char sub[256];

	if (type != NULL &&
	    ((strcmp(type, "object") == 0 && !json_is_object(v)) ||
	     (strcmp(type, "string") == 0 && !json_is_string(v)) ||
	     (strcmp(type, "integer") == 0 && !json_is_integer(v)))) {
		fprintf(stderr, "%s: not of type %s\n", path, type);
		return 0;
	}
	if (json_is_integer(v) &&
	    ((min != NULL && json_integer_value(v) < json_integer_value(min)) ||
	     (al_json_str(schema, "format") != NULL &&
	      strcmp(al_json_str(schema, "format"), "int32") == 0 &&
	      (json_integer_value(v) > 2147483647 ||
	       json_integer_value(v) < -2147483647 - 1)))) {
		fprintf(stderr, "%s: out of range\n", path);
		return 0;
	}
	json_array_foreach(json_object_get(schema, "required"), i, x)
	{
		if (json_object_get(v, json_string_value(x)) == NULL) {
			fprintf(stderr, "%s: '%s' missing\n", path,
			        json_string_value(x));
			return 0;
		}
	}
	if (!json_is_object(v) || props == NULL)
		return 1;
	json_object_foreach((json_t *)v, k, x)
	{
		json_t *ps = json_object_get(props, k);

		snprintf(sub, sizeof(sub), "%s.%s", path, k);
		if (ps == NULL) {
			fprintf(stderr, "%s: not in the schema\n", sub);
			return 0;
		}
		if (!conforms(ps, x, sub))
			return 0;
	}
	return 1;
}

/* The v1 schema of the cincinnati-operator CRD in tests/fixtures. */
static json_t *updateservice_schema(void)
{
	char *p = al_sprintf("%s/tests/fixtures/cincinnati-operator/"
	                     "updateservice.operator.openshift.io_"
	                     "updateservices.yaml",
	                     al_test_source_dir());
	al_buf b = AL_BUF_INIT(1 << 20);
	al_yaml_node **docs = NULL;
	size_t nd = 0, i;
	json_t *crd = NULL, *v, *out = NULL;

	if (p != NULL && al_fs_read_file(p, &b) == 0 &&
	    al_yaml_load(&docs, &nd, b.ptr, b.len, p) == 0 && nd == 1 &&
	    al_yaml_to_json(&crd, docs[0]) == 0)
		json_array_foreach(
		    json_object_get(json_object_get(crd, "spec"), "versions"),
		    i, v)
		{
			if (out == NULL && al_json_str(v, "name") != NULL &&
			    strcmp(al_json_str(v, "name"), "v1") == 0)
				out = json_incref(json_object_get(
				    json_object_get(v, "schema"),
				    "openAPIV3Schema"));
		}
	json_decref(crd);
	al_yaml_docs_free(docs, nd);
	al_buf_free(&b);
	free(p);
	return out;
}

static void test_graph_image__updateservice_resource(void)
{
	al_buf b = AL_BUF_INIT(1 << 16);
	al_yaml_node **docs = NULL;
	size_t nd = 0;
	json_t *j = NULL, *spec, *schema;

	CU_ASSERT_EQUAL(
	    al_kres_updateservice(
	        &b, "update-service-airlock",
	        "mirror.example:5000/ocp/openshift-release-dev/"
	        "ocp-release",
	        "mirror.example:5000/ocp/openshift/graph-image:latest", 2),
	    0);
	CU_ASSERT_EQUAL(al_yaml_load(&docs, &nd, b.ptr, b.len, "out"), 0);
	CU_ASSERT_EQUAL(nd, 1);
	if (nd == 1)
		CU_ASSERT_EQUAL(al_yaml_to_json(&j, docs[0]), 0);
	CU_ASSERT_STRING_EQUAL(al_json_str(j, "apiVersion"),
	                       "updateservice.operator.openshift.io/v1");
	CU_ASSERT_STRING_EQUAL(al_json_str(j, "kind"), "UpdateService");
	/* oc-mirror v2's namespace (OCPBUGS-61001) */
	CU_ASSERT_STRING_EQUAL(
	    al_json_str(json_object_get(j, "metadata"), "namespace"),
	    "openshift-update-service");
	spec = json_object_get(j, "spec");
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(spec, "replicas")),
	                2);
	CU_ASSERT_STRING_EQUAL(al_json_str(spec, "releases"),
	                       "mirror.example:5000/ocp/openshift-release-dev/"
	                       "ocp-release");
	CU_ASSERT_STRING_EQUAL(
	    al_json_str(spec, "graphDataImage"),
	    "mirror.example:5000/ocp/openshift/graph-image:latest");
	CU_ASSERT_EQUAL(json_object_size(spec), 3);
	/* against the operator's CRD, and the check can fail */
	schema = updateservice_schema();
	CU_ASSERT_PTR_NOT_NULL(schema);
	if (schema != NULL && j != NULL) {
		json_t *bad = json_deep_copy(j);

		CU_ASSERT(conforms(schema, j, "UpdateService"));
		json_object_set_new(json_object_get(bad, "spec"), "replicas",
		                    json_integer(0));
		CU_ASSERT(!conforms(schema, bad, "UpdateService(bad)"));
		json_decref(bad);
		bad = json_deep_copy(j);
		json_object_del(json_object_get(bad, "spec"), "releases");
		CU_ASSERT(!conforms(schema, bad, "UpdateService(bad)"));
		json_decref(bad);
		bad = json_deep_copy(j);
		json_object_set_new(json_object_get(bad, "spec"), "release",
		                    json_string("x/y"));
		CU_ASSERT(!conforms(schema, bad, "UpdateService(bad)"));
		json_decref(bad);
	}
	json_decref(schema);
	/* the refusals */
	al_buf_reset(&b);
	CU_ASSERT_EQUAL(
	    al_kres_updateservice(&b, "u", "r.example/a/b:4.14", "g", 2),
	    AL_EINVAL);
	CU_ASSERT_EQUAL(
	    al_kres_updateservice(&b, "u", "r.example/a/b@sha256:00", "g", 2),
	    AL_EINVAL);
	CU_ASSERT_EQUAL(al_kres_updateservice(&b, "u", "r.example/a", "g", 0),
	                AL_EINVAL);
	CU_ASSERT_EQUAL(al_kres_updateservice(&b, "", "r.example/a", "g", 1),
	                AL_EINVAL);
	CU_ASSERT_EQUAL(al_kres_updateservice(&b, "u", "r.example/a", "", 1),
	                AL_EINVAL);
	CU_ASSERT_EQUAL(b.len, 0);
	json_decref(j);
	al_yaml_docs_free(docs, nd);
	al_buf_free(&b);
}

static int contains(const al_buf *b, const char *needle)
{
	size_t n = strlen(needle), i;

	for (i = 0; i + n <= b->len; i++)
		if (memcmp(b->ptr + i, needle, n) == 0)
			return 1;
	return 0;
}

/* A path over the 100 bytes of a ustar name gets a pax "path" record. */
static void test_graph_image__long_names(void)
{
	char *dir = make_tree("tree6"), *rel = NULL, *want = NULL;
	al_store *s = new_store("store6");
	al_graph_image_result r = AL_GRAPH_IMAGE_RESULT_INIT;
	al_buf blob = AL_BUF_INIT(1 << 20), tar = AL_BUF_INIT(1 << 20);
	char name[121];

	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	if (dir == NULL || s == NULL)
		goto out;
	rel = al_sprintf("blocked-edges/%s.yaml", name);
	want = al_sprintf("path=var/lib/cincinnati-graph-data/%s\n", rel);
	if (rel == NULL || want == NULL)
		goto out;
	put(dir, rel, "to: 4.14.2\nfrom: 4[.]14[.]1\n");
	CU_ASSERT_EQUAL(al_graph_image_from_dir(s, dir, NULL, &r), 0);
	CU_ASSERT_EQUAL(al_store_read_blob(s, &r.layer, &blob), 0);
	CU_ASSERT_EQUAL(gunzip(&blob, &tar), 0);
	CU_ASSERT(contains(&tar, want));
	CU_ASSERT(contains(&tar, "././@PaxHeader"));
out:
	al_descriptor_clear(&r.manifest);
	al_buf_free(&blob);
	al_buf_free(&tar);
	al_store_free(s);
	free(rel);
	free(want);
	free(dir);
}

int main(void)
{
	CU_TestInfo tests[] = {
	    {"test_graph_image__digests_and_diff_ids",
	     test_graph_image__digests_and_diff_ids},
	    {"test_graph_image__reproducible", test_graph_image__reproducible},
	    {"test_graph_image__long_names", test_graph_image__long_names},
	    {"test_graph_image__refuses_symlinks",
	     test_graph_image__refuses_symlinks},
	    {"test_graph_image__on_a_base", test_graph_image__on_a_base},
	    {"test_graph_image__build_from_store",
	     test_graph_image__build_from_store},
	    {"test_graph_image__updateservice_resource",
	     test_graph_image__updateservice_resource},
	    CU_TEST_INFO_NULL,
	};

	return al_test_run("graph_image", tests);
}
