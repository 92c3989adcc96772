/* test_release.c: unit tests for release payload reading: layers, whiteouts, image-references, release-metadata, bounds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <archive.h>
#include <archive_entry.h>

#include "release_int.h"
#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/release.h"
#include "airlock/store.h"
#include "al_test.h"

#define REFS_OK "{\"kind\":\"ImageStream\",\"apiVersion\":\"image.openshift.io/v1\"," \
	"\"metadata\":{\"name\":\"4.14.0-from-refs\"},\"spec\":{\"tags\":[" \
	"{\"name\":\"cli\",\"from\":{\"kind\":\"DockerImage\",\"name\":\"quay.io/r/cli@sha256:aa\"}}," \
	"{\"name\":\"skip\",\"from\":{\"kind\":\"ImageStreamTag\",\"name\":\"x:y\"}}," \
	"{\"name\":\"etcd\",\"from\":{\"kind\":\"DockerImage\",\"name\":\"quay.io/r/etcd@sha256:bb\"}}]}}"
#define META_OK "{\"kind\":\"cincinnati-metadata-v0\",\"version\":\"4.14.1\"," \
	"\"previous\":[\"4.13.9\",\"4.14.0\"],\"metadata\":{\"url\":\"https://example.invalid/errata\"}}"

/* One tar entry: type 'f' file, 'd' directory, 'l' symlink. size_t
 * len 0 means strlen(data); a non-NULL big gives len bytes of 'x'. */
struct entry {
	const char *path;
	char type;
	const char *data;
	size_t big;
};

static la_ssize_t buf_write_cb(struct archive *a, void *ud, const void *p, size_t n)
{
	(void)a;
	return al_buf_append(ud, p, n) == 0 ? (la_ssize_t)n : -1;
}

static int make_layer(al_buf *out, int gzip, const struct entry *e, size_t n)
{
	struct archive *a = archive_write_new();
	struct archive_entry *ae = archive_entry_new();
	char *big = NULL;
	size_t i;
	int ok;

	if (gzip)
		archive_write_add_filter_gzip(a);
	archive_write_set_format_pax_restricted(a);
	archive_write_set_bytes_in_last_block(a, 1);
	ok = archive_write_open(a, out, NULL, buf_write_cb, NULL) == ARCHIVE_OK;
	for (i = 0; ok && i < n; i++) {
		const char *data = e[i].data != NULL ? e[i].data : "";
		size_t len = strlen(data);

		if (e[i].big > 0) {
			big = malloc(e[i].big);
			if (big == NULL)
				break;
			memset(big, 'x', e[i].big);
			data = big;
			len = e[i].big;
		}
		archive_entry_clear(ae);
		archive_entry_set_pathname(ae, e[i].path);
		archive_entry_set_perm(ae, 0644);
		if (e[i].type == 'd') {
			archive_entry_set_filetype(ae, AE_IFDIR);
			archive_entry_set_perm(ae, 0755);
			len = 0;
		} else if (e[i].type == 'l') {
			archive_entry_set_filetype(ae, AE_IFLNK);
			archive_entry_set_symlink(ae, data);
			len = 0;
		} else {
			archive_entry_set_filetype(ae, AE_IFREG);
		}
		archive_entry_set_size(ae, (la_int64_t)len);
		ok = archive_write_header(a, ae) == ARCHIVE_OK;
		if (ok && len > 0)
			ok = archive_write_data(a, data, len) == (la_ssize_t)len;
		free(big);
		big = NULL;
	}
	ok = ok && i == n && archive_write_close(a) == ARCHIVE_OK;
	archive_entry_free(ae);
	archive_write_free(a);
	return ok ? 0 : -1;
}

struct layer_spec {
	int gzip;
	const struct entry *e;
	size_t n;
};

struct built {
	al_digest manifest;
	al_digest layers[4];
	size_t sizes[4];
	size_t nmanifest;
};

/* Store layers, a config and an image manifest; *b receives digests. */
static int build_release(al_store *s, const struct layer_spec *ls, size_t nl, struct built *b)
{
	al_buf m = AL_BUF_INIT(1 << 20);
	static const char config[] = "{\"architecture\":\"amd64\",\"os\":\"linux\",\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[]}}";
	char ds[AL_DIGEST_STRMAX];
	al_digest cd;
	size_t i;
	int rc = -1;

	memset(b, 0, sizeof(*b));
	if (al_store_put_blob(s, (const uint8_t *)config, sizeof(config) - 1, &cd) < 0)
		goto out;
	al_buf_printf(&m, "{\"schemaVersion\":2,\"mediaType\":\"%s\",\"config\":{\"mediaType\":\"%s\",\"digest\":\"%s\",\"size\":%zu},\"layers\":[",
		      AL_MT_OCI_MANIFEST, AL_MT_OCI_CONFIG, al_digest_str(&cd, ds), sizeof(config) - 1);
	for (i = 0; i < nl && i < 4; i++) {
		al_buf l = AL_BUF_INIT(64 << 20);

		if (make_layer(&l, ls[i].gzip, ls[i].e, ls[i].n) < 0 || al_store_put_blob(s, l.ptr, l.len, &b->layers[i]) < 0) {
			al_buf_free(&l);
			goto out;
		}
		b->sizes[i] = l.len;
		al_buf_printf(&m, "%s{\"mediaType\":\"%s\",\"digest\":\"%s\",\"size\":%zu}", i > 0 ? "," : "",
			      ls[i].gzip ? AL_MT_OCI_LAYER_GZIP : AL_MT_OCI_LAYER, al_digest_str(&b->layers[i], ds), l.len);
		al_buf_free(&l);
	}
	if (al_buf_puts(&m, "]}") < 0 || al_store_put_blob(s, m.ptr, m.len, &b->manifest) < 0)
		goto out;
	b->nmanifest = m.len;
	rc = 0;
out:
	if (rc < 0)
		printf("\nbuild_release: %s\n", al_error_message());
	al_buf_free(&m);
	return rc;
}

static al_store *new_store(const char *name)
{
	char *p = al_sprintf("%s/%s", al_test_tmpdir(), name);
	al_store_opts o = {.create = 1};
	al_store *s = NULL;

	if (al_store_open(&s, p, &o) < 0)
		printf("\nstore: %s\n", al_error_message());
	free(p);
	return s;
}

static const struct entry base_layer[] = {
	{"release-manifests/", 'd', NULL, 0},
	{"release-manifests/image-references", 'f', REFS_OK, 0},
	{"release-manifests/release-metadata", 'f', META_OK, 0},
	{"./release-manifests/0000_10_a.yaml", 'f', "a: 1\n", 0},
	{"/release-manifests/0000_20_b.yaml", 'f', "b: 1\n", 0},
	{"release-manifests/sub/ignored.yaml", 'f', "no\n", 0},
	{"release-manifests/link", 'l', "/etc/passwd", 0},
	{"etc/passwd", 'f', "root:x:0:0\n", 0},
	{"release-manifests-not/x", 'f', "no\n", 0},
};

static const struct entry upper_layer[] = {
	{"release-manifests/.wh.0000_20_b.yaml", 'f', NULL, 0},
	{"release-manifests/0000_10_a.yaml", 'f', "a: 2\n", 0},
	{"release-manifests/0000_30_c.yaml", 'f', "c: 1\n", 0},
};

static void test_release__reads_layers_with_whiteouts(void)
{
	struct layer_spec ls[] = {{1, base_layer, 9}, {0, upper_layer, 3}};
	al_store *s = new_store("rel");
	al_release *r = NULL;
	struct built b;
	const al_release_component *c;
	const uint8_t *data;
	size_t len = 0;
	char *dir = al_sprintf("%s/extracted", al_test_tmpdir()), *fp = NULL;
	al_buf f = AL_BUF_INIT(1024);

	if (s == NULL || build_release(s, ls, 2, &b) < 0) {
		CU_FAIL("setup");
		goto out;
	}
	if (al_release_open(&r, s, &b.manifest, NULL) != 0) {
		printf("\n%s\n", al_error_message());
		CU_FAIL("al_release_open");
		goto out;
	}
	CU_ASSERT_STRING_EQUAL(al_release_version(r), "4.14.1");
	CU_ASSERT_PTR_NOT_NULL(al_release_metadata(r));
	CU_ASSERT_EQUAL(json_array_size(json_object_get(al_release_metadata(r), "previous")), 2);
	CU_ASSERT_EQUAL(al_release_component_count(r), 2);
	c = al_release_component_at(r, 0);
	CU_ASSERT(c != NULL && strcmp(c->name, "cli") == 0 && strcmp(c->image, "quay.io/r/cli@sha256:aa") == 0);
	c = al_release_component_at(r, 1);
	CU_ASSERT(c != NULL && strcmp(c->name, "etcd") == 0 && strcmp(c->image, "quay.io/r/etcd@sha256:bb") == 0);
	CU_ASSERT_PTR_NULL(al_release_component_at(r, 2));
	CU_ASSERT_EQUAL(al_release_file_count(r), 4);
	if (al_release_file_count(r) == 4) {
		CU_ASSERT_STRING_EQUAL(al_release_file_name(r, 0), "0000_10_a.yaml");
		CU_ASSERT_STRING_EQUAL(al_release_file_name(r, 1), "0000_30_c.yaml");
		CU_ASSERT_STRING_EQUAL(al_release_file_name(r, 2), "image-references");
		CU_ASSERT_STRING_EQUAL(al_release_file_name(r, 3), "release-metadata");
		data = al_release_file_data(r, 0, &len);
		CU_ASSERT(len == 5 && memcmp(data, "a: 2\n", 5) == 0);
	}
	CU_ASSERT_PTR_NULL(al_release_file_name(r, 4));
	CU_ASSERT_EQUAL(al_release_extract(r, dir), 0);
	fp = al_sprintf("%s/0000_30_c.yaml", dir);
	CU_ASSERT_EQUAL(al_fs_read_file(fp, &f), 0);
	CU_ASSERT_STRING_EQUAL(al_buf_cstr(&f), "c: 1\n");
	free(fp);
	fp = al_sprintf("%s/0000_20_b.yaml", dir);
	CU_ASSERT_EQUAL(al_fs_exists(fp), 0);
	free(fp);
	fp = al_sprintf("%s/link", dir);
	CU_ASSERT_EQUAL(al_fs_exists(fp), 0);
out:
	al_release_free(r);
	al_release_free(NULL);
	al_store_free(s);
	al_buf_free(&f);
	free(fp);
	free(dir);
}

static void test_release__opaque_whiteout_clears_lower_layers(void)
{
	static const struct entry opq[] = {
		{"release-manifests/.wh..wh..opq", 'f', NULL, 0},
		{"release-manifests/image-references", 'f', REFS_OK, 0},
		{"release-manifests/0000_50_new.yaml", 'f', "n\n", 0},
	};
	struct layer_spec ls[] = {{1, base_layer, 9}, {1, opq, 3}};
	al_store *s = new_store("opaque");
	al_release *r = NULL;
	struct built b;

	if (s == NULL || build_release(s, ls, 2, &b) < 0) {
		CU_FAIL("setup");
		goto out;
	}
	CU_ASSERT_EQUAL(al_release_open(&r, s, &b.manifest, NULL), 0);
	if (r != NULL) {
		CU_ASSERT_EQUAL(al_release_file_count(r), 2);
		CU_ASSERT_STRING_EQUAL(al_release_file_name(r, 0), "0000_50_new.yaml");
		/* release-metadata went with the lower layer: metadata.name */
		CU_ASSERT_STRING_EQUAL(al_release_version(r), "4.14.0-from-refs");
		CU_ASSERT_PTR_NULL(al_release_metadata(r));
	}
out:
	al_release_free(r);
	al_store_free(s);
}

static void test_release__reads_cvo_manifests_dir_with_whiteouts(void)
{
	static const struct entry lower[] = {
		{"release-manifests/image-references", 'f', REFS_OK, 0},
		{"release-manifests/0000_10_a.yaml", 'f', "a: 1\n", 0},
		{"manifests/", 'd', NULL, 0},
		{"manifests/0000_00_cvo_00_ns.yaml", 'f', "ns: 1\n", 0},
		{"./manifests/0000_00_cvo_30_deployment.yaml", 'f', "d: 1\n", 0},
		{"manifests/0000_90_cvo_00_gone.yaml", 'f', "g: 1\n", 0},
		{"manifests/sub/ignored.yaml", 'f', "no\n", 0},
		{"other-manifests/x.yaml", 'f', "no\n", 0},
	};
	static const struct entry upper[] = {
		{"manifests/.wh.0000_90_cvo_00_gone.yaml", 'f', NULL, 0},
		{"manifests/0000_00_cvo_30_deployment.yaml", 'f', "d: 2\n", 0},
	};
	static const struct entry opq[] = {
		{"manifests/.wh..wh..opq", 'f', NULL, 0},
		{"manifests/0000_00_cvo_99_only.yaml", 'f', "o\n", 0},
	};
	struct layer_spec ls[] = {{1, lower, 8}, {0, upper, 2}};
	struct layer_spec ls2[] = {{1, lower, 8}, {0, opq, 2}};
	al_store *s = new_store("cvo");
	al_release *r = NULL;
	struct built b;
	const uint8_t *data;
	size_t len = 0;

	if (s == NULL || build_release(s, ls, 2, &b) < 0) {
		CU_FAIL("setup");
		goto out;
	}
	CU_ASSERT_EQUAL(al_release_open(&r, s, &b.manifest, NULL), 0);
	if (r != NULL) {
		/* release-manifests/ is not affected */
		CU_ASSERT_EQUAL(al_release_file_count(r), 2);
		CU_ASSERT_EQUAL(al_release_cvo_file_count(r), 2);
		if (al_release_cvo_file_count(r) == 2) {
			CU_ASSERT_STRING_EQUAL(al_release_cvo_file_name(r, 0), "0000_00_cvo_00_ns.yaml");
			CU_ASSERT_STRING_EQUAL(al_release_cvo_file_name(r, 1), "0000_00_cvo_30_deployment.yaml");
			data = al_release_cvo_file_data(r, 1, &len);
			CU_ASSERT(len == 5 && memcmp(data, "d: 2\n", 5) == 0);
		}
		CU_ASSERT_PTR_NULL(al_release_cvo_file_name(r, 2));
		CU_ASSERT_PTR_NULL(al_release_cvo_file_data(r, 2, &len));
	}
	al_release_free(r);
	r = NULL;
	/* an opaque marker in manifests/ clears only manifests/ */
	if (build_release(s, ls2, 2, &b) < 0) {
		CU_FAIL("setup 2");
		goto out;
	}
	CU_ASSERT_EQUAL(al_release_open(&r, s, &b.manifest, NULL), 0);
	if (r != NULL) {
		CU_ASSERT_EQUAL(al_release_file_count(r), 2);
		CU_ASSERT_EQUAL(al_release_cvo_file_count(r), 1);
		if (al_release_cvo_file_count(r) == 1)
			CU_ASSERT_STRING_EQUAL(al_release_cvo_file_name(r, 0), "0000_00_cvo_99_only.yaml");
	}
out:
	al_release_free(r);
	al_store_free(s);
}

static void test_release__index_picks_platform(void)
{
	static const struct entry arm[] = {
		{"release-manifests/image-references", 'f', REFS_OK, 0},
		{"release-manifests/arch", 'f', "arm64", 0},
	};
	static const struct entry amd[] = {
		{"release-manifests/image-references", 'f', REFS_OK, 0},
		{"release-manifests/arch", 'f', "amd64", 0},
	};
	struct layer_spec la[] = {{1, arm, 2}}, lb[] = {{1, amd, 2}};
	al_store *s = new_store("index");
	al_release *r = NULL;
	struct built ba, bb;
	al_buf idx = AL_BUF_INIT(4096);
	char d1[AL_DIGEST_STRMAX], d2[AL_DIGEST_STRMAX];
	al_digest id;
	const uint8_t *data;
	size_t len = 0;

	if (s == NULL || build_release(s, la, 1, &ba) < 0 || build_release(s, lb, 1, &bb) < 0) {
		CU_FAIL("setup");
		goto out;
	}
	al_buf_printf(&idx, "{\"schemaVersion\":2,\"mediaType\":\"%s\",\"manifests\":["
		      "{\"mediaType\":\"%s\",\"digest\":\"%s\",\"size\":%zu,\"platform\":{\"os\":\"linux\",\"architecture\":\"arm64\"}},"
		      "{\"mediaType\":\"%s\",\"digest\":\"%s\",\"size\":%zu,\"platform\":{\"os\":\"linux\",\"architecture\":\"amd64\"}}]}",
		      AL_MT_OCI_INDEX, AL_MT_OCI_MANIFEST, al_digest_str(&ba.manifest, d1), ba.nmanifest,
		      AL_MT_OCI_MANIFEST, al_digest_str(&bb.manifest, d2), bb.nmanifest);
	CU_ASSERT_EQUAL(al_store_put_blob(s, idx.ptr, idx.len, &id), 0);
	CU_ASSERT_EQUAL(al_release_open(&r, s, &id, NULL), 0);
	if (r != NULL) {
		data = al_release_file_data(r, 0, &len);
		CU_ASSERT(len == 5 && memcmp(data, "amd64", 5) == 0);
	}
	al_release_free(r);
	r = NULL;
	CU_ASSERT_EQUAL(al_release_open(&r, s, &id, "linux/arm64"), 0);
	if (r != NULL) {
		data = al_release_file_data(r, 0, &len);
		CU_ASSERT(len == 5 && memcmp(data, "arm64", 5) == 0);
	}
	al_release_free(r);
	r = NULL;
	CU_ASSERT_EQUAL(al_release_open(&r, s, &id, "linux/s390x"), AL_ENOTFOUND);
	CU_ASSERT_PTR_NULL(r);
out:
	al_buf_free(&idx);
	al_store_free(s);
}

static void flip_byte(const char *path, long off)
{
	FILE *f = fopen(path, "r+b");
	int c;

	if (f == NULL)
		return;
	fseek(f, off, SEEK_SET);
	c = fgetc(f);
	fseek(f, off, SEEK_SET);
	fputc(c ^ 0x01, f);
	fclose(f);
}

static void test_release__wrong_layer_digest_is_everify(void)
{
	struct layer_spec gz[] = {{1, base_layer, 9}}, plain[] = {{0, base_layer, 9}};
	al_store *s = new_store("verify");
	al_release *r = NULL;
	struct built b1, b2;
	char *p = NULL;

	if (s == NULL || build_release(s, gz, 1, &b1) < 0 || build_release(s, plain, 1, &b2) < 0) {
		CU_FAIL("setup");
		goto out;
	}
	/* a byte inside the gzip stream: libarchive would choke, but the
	 * digest speaks first */
	p = al_store_blob_path(s, &b1.layers[0]);
	flip_byte(p, (long)b1.sizes[0] / 2);
	CU_ASSERT_EQUAL(al_release_open(&r, s, &b1.manifest, NULL), AL_EVERIFY);
	al_release_free(r);
	r = NULL;
	free(p);
	/* a byte of a file's content in a plain tar: parses fine, still refused */
	p = al_store_blob_path(s, &b2.layers[0]);
	flip_byte(p, 1024 + 3 * 512 + 10);
	CU_ASSERT_EQUAL(al_release_open(&r, s, &b2.manifest, NULL), AL_EVERIFY);
	al_release_free(r);
	r = NULL;
	free(p);
	/* a missing layer */
	p = al_store_blob_path(s, &b2.layers[0]);
	unlink(p);
	CU_ASSERT_EQUAL(al_release_open(&r, s, &b2.manifest, NULL), AL_ENOTFOUND);
	CU_ASSERT_PTR_NULL(r);
out:
	al_release_free(r);
	free(p);
	al_store_free(s);
}

static void test_release__oversize_file_is_elimit(void)
{
	static const struct entry big[] = {
		{"release-manifests/image-references", 'f', REFS_OK, 0},
		{"release-manifests/huge.yaml", 'f', NULL, AL_RELEASE_FILE_MAX + 1},
	};
	static const struct entry fits[] = {
		{"release-manifests/image-references", 'f', REFS_OK, 0},
		{"release-manifests/huge.yaml", 'f', NULL, AL_RELEASE_FILE_MAX},
	};
	struct layer_spec l1[] = {{1, big, 2}}, l2[] = {{1, fits, 2}};
	al_store *s = new_store("limit");
	al_release *r = NULL;
	struct built b;

	if (s == NULL || build_release(s, l1, 1, &b) < 0) {
		CU_FAIL("setup");
		goto out;
	}
	CU_ASSERT_EQUAL(al_release_open(&r, s, &b.manifest, NULL), AL_ELIMIT);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "huge.yaml"));
	if (build_release(s, l2, 1, &b) < 0) {
		CU_FAIL("setup");
		goto out;
	}
	CU_ASSERT_EQUAL(al_release_open(&r, s, &b.manifest, NULL), 0);
	al_release_free(r);
out:
	al_store_free(s);
}

/* The status of opening a one-layer release holding refs and meta. */
static int open_with(al_store *s, const char *refs, const char *meta)
{
	struct entry e[2] = {{"release-manifests/image-references", 'f', refs, 0},
			     {"release-manifests/release-metadata", 'f', meta, 0}};
	struct layer_spec ls[] = {{1, e, meta != NULL ? 2 : 1}};
	al_release *r = NULL;
	struct built b;
	int rc;

	if (refs == NULL) {
		e[0] = e[1];
		ls[0].n = 1;
	}
	if (build_release(s, ls, 1, &b) < 0)
		return 1;
	rc = al_release_open(&r, s, &b.manifest, NULL);
	al_release_free(r);
	return rc;
}

static void test_release__strict_image_references_and_metadata(void)
{
	al_store *s = new_store("strict");

	if (s == NULL) {
		CU_FAIL("setup");
		return;
	}
	CU_ASSERT_EQUAL(open_with(s, REFS_OK, META_OK), 0);
	CU_ASSERT_EQUAL(open_with(s, REFS_OK, NULL), 0);
	/* duplicate keys */
	CU_ASSERT_EQUAL(open_with(s, "{\"kind\":\"ImageStream\",\"kind\":\"ImageStream\",\"spec\":{\"tags\":[]},\"metadata\":{\"name\":\"1\"}}", NULL), AL_EPARSE);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "image-references"));
	CU_ASSERT_EQUAL(open_with(s, "{\"kind\":\"ImageStream\",\"metadata\":{\"name\":\"1\"},\"spec\":{\"tags\":["
				     "{\"name\":\"a\",\"name\":\"b\",\"from\":{\"kind\":\"DockerImage\",\"name\":\"x\"}}]}}", NULL), AL_EPARSE);
	/* a tag without from.name names the tag */
	CU_ASSERT_EQUAL(open_with(s, "{\"kind\":\"ImageStream\",\"metadata\":{\"name\":\"1\"},\"spec\":{\"tags\":["
				     "{\"name\":\"machine-os\",\"from\":{\"kind\":\"DockerImage\"}}]}}", NULL), AL_EPARSE);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "machine-os"));
	/* a tag without from, twice the same tag, wrong kind */
	CU_ASSERT_EQUAL(open_with(s, "{\"kind\":\"ImageStream\",\"metadata\":{\"name\":\"1\"},\"spec\":{\"tags\":[{\"name\":\"a\"}]}}", NULL), AL_EPARSE);
	CU_ASSERT_EQUAL(open_with(s, "{\"kind\":\"ImageStream\",\"metadata\":{\"name\":\"1\"},\"spec\":{\"tags\":["
				     "{\"name\":\"a\",\"from\":{\"kind\":\"DockerImage\",\"name\":\"x\"}},"
				     "{\"name\":\"a\",\"from\":{\"kind\":\"DockerImage\",\"name\":\"y\"}}]}}", NULL), AL_EPARSE);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "tag 'a' appears twice"));
	CU_ASSERT_EQUAL(open_with(s, "{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"1\"},\"spec\":{\"tags\":[]}}", NULL), AL_EPARSE);
	CU_ASSERT_EQUAL(open_with(s, "not json", NULL), AL_EPARSE);
	/* no image-references at all; no version anywhere */
	CU_ASSERT_EQUAL(open_with(s, NULL, META_OK), AL_EPARSE);
	CU_ASSERT_EQUAL(open_with(s, "{\"kind\":\"ImageStream\",\"spec\":{\"tags\":[]}}", NULL), AL_EPARSE);
	/* release-metadata: wrong kind, no version, bad previous, duplicate keys */
	CU_ASSERT_EQUAL(open_with(s, REFS_OK, "{\"kind\":\"x\",\"version\":\"1\"}"), AL_EPARSE);
	CU_ASSERT_EQUAL(open_with(s, REFS_OK, "{\"kind\":\"cincinnati-metadata-v0\"}"), AL_EPARSE);
	CU_ASSERT_EQUAL(open_with(s, REFS_OK, "{\"kind\":\"cincinnati-metadata-v0\",\"version\":\"1\",\"previous\":[1]}"), AL_EPARSE);
	CU_ASSERT_EQUAL(open_with(s, REFS_OK, "{\"kind\":\"cincinnati-metadata-v0\",\"version\":\"1\",\"version\":\"2\"}"), AL_EPARSE);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "release-metadata"));
	al_store_free(s);
}

static void test_release__not_a_tar_is_eparse(void)
{
	al_store *s = new_store("nottar");
	al_release *r = NULL;
	al_buf m = AL_BUF_INIT(4096);
	static const char junk[] = "this is not a tar stream at all, just some text bytes that go on and on";
	static const char config[] = "{}";
	char d1[AL_DIGEST_STRMAX], d2[AL_DIGEST_STRMAX];
	al_digest ld, cd, md;

	if (s == NULL) {
		CU_FAIL("setup");
		return;
	}
	al_store_put_blob(s, (const uint8_t *)junk, sizeof(junk) - 1, &ld);
	al_store_put_blob(s, (const uint8_t *)config, 2, &cd);
	al_buf_printf(&m, "{\"schemaVersion\":2,\"mediaType\":\"%s\",\"config\":{\"mediaType\":\"%s\",\"digest\":\"%s\",\"size\":2},"
		      "\"layers\":[{\"mediaType\":\"%s\",\"digest\":\"%s\",\"size\":%zu}]}", AL_MT_OCI_MANIFEST, AL_MT_OCI_CONFIG,
		      al_digest_str(&cd, d1), AL_MT_OCI_LAYER, al_digest_str(&ld, d2), sizeof(junk) - 1);
	al_store_put_blob(s, m.ptr, m.len, &md);
	CU_ASSERT_EQUAL(al_release_open(&r, s, &md, NULL), AL_EPARSE);
	/* the descriptor claims a shorter layer than the blob: AL_EVERIFY */
	al_buf_reset(&m);
	al_buf_printf(&m, "{\"schemaVersion\":2,\"mediaType\":\"%s\",\"config\":{\"mediaType\":\"%s\",\"digest\":\"%s\",\"size\":2},"
		      "\"layers\":[{\"mediaType\":\"%s\",\"digest\":\"%s\",\"size\":%zu}]}", AL_MT_OCI_MANIFEST, AL_MT_OCI_CONFIG,
		      al_digest_str(&cd, d1), AL_MT_OCI_LAYER, al_digest_str(&ld, d2), sizeof(junk) - 5);
	al_store_put_blob(s, m.ptr, m.len, &md);
	CU_ASSERT_EQUAL(al_release_open(&r, s, &md, NULL), AL_EVERIFY);
	al_buf_free(&m);
	al_store_free(s);
}

/* A release written by another implementation (Python tarfile + gzip):
 * the test generator in tests/tools/mkrelease.py. */
static void test_release__reads_mkrelease_layout(void)
{
	char *script = al_sprintf("%s/tests/tools/mkrelease.py", al_test_source_dir());
	char *out = al_sprintf("%s/mkrelease", al_test_tmpdir());
	char *cmd = al_sprintf("python3 '%s' --out '%s' --components 4 --layer-size 100 --base-size 100 >/dev/null", script, out);
	al_store_opts o = {.readonly = 1};
	al_store *s = NULL;
	al_store_image img;
	al_release *r = NULL;

	memset(&img, 0, sizeof(img));
	if (access(script, R_OK) != 0) {
		printf("\n%s is missing: skipped\n", script);
		goto out;
	}
	CU_ASSERT_EQUAL(system(cmd), 0);
	CU_ASSERT_EQUAL(al_store_open(&s, out, &o), 0);
	if (s == NULL)
		goto out;
	CU_ASSERT_EQUAL(al_store_find(s, "quay.io/airlock-samples/release:4.14.1-x86_64", &img), 0);
	CU_ASSERT_EQUAL(al_release_open(&r, s, &img.desc.digest, NULL), 0);
	if (r != NULL) {
		CU_ASSERT_STRING_EQUAL(al_release_version(r), "4.14.1");
		CU_ASSERT_EQUAL(al_release_component_count(r), 4);
		CU_ASSERT_EQUAL(al_release_file_count(r), 6);
	}
out:
	al_release_free(r);
	al_store_image_clear(&img);
	al_store_free(s);
	free(cmd);
	free(out);
	free(script);
}

/* --- the release cache (docs/store.md "The cache") ---------------------- */

/* A base layer of its own per test: this process must never have read it
 * (it remembers bare layers for its lifetime). */
static int build_cached_release(al_store *s, const char *base_text, struct built *b)
{
	const struct entry base[] = {
		{"usr/", 'd', NULL, 0},
		{"usr/share/base.txt", 'f', base_text, 0},
		{"etc/os-release", 'f', "ID=test\n", 0},
	};
	struct layer_spec ls[] = {{1, base, 3}, {1, base_layer, 9}, {0, upper_layer, 3}};

	return build_release(s, ls, 3, b);
}

static char *cache_entry_path(al_store *s, const al_digest *manifest)
{
	char hex[AL_DIGEST_STRMAX];

	return al_sprintf("%s/airlock/cache/release-sha256-%s_linux-amd64.json", al_store_path(s), al_digest_hex(manifest, hex));
}

/* Open the release in a child process, as a first run would. */
static int open_in_child(al_store *s, const al_digest *manifest)
{
	int status = 0;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		al_release *r = NULL;
		int rc = al_release_open(&r, s, manifest, NULL);

		al_release_free(r);
		_exit(rc == 0 ? 0 : 1);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* The payload reads as test_release__reads_layers_with_whiteouts's. */
static void check_whiteout_payload(const al_release *r)
{
	const uint8_t *data;
	size_t len = 0;

	CU_ASSERT_STRING_EQUAL(al_release_version(r), "4.14.1");
	CU_ASSERT_EQUAL(al_release_component_count(r), 2);
	CU_ASSERT_EQUAL(al_release_file_count(r), 4);
	CU_ASSERT_STRING_EQUAL(al_release_file_name(r, 0), "0000_10_a.yaml");
	data = al_release_file_data(r, 0, &len);
	CU_ASSERT(data != NULL && len == 5 && memcmp(data, "a: 2\n", 5) == 0);
	CU_ASSERT_STRING_EQUAL(al_release_file_name(r, 1), "0000_30_c.yaml");
}

/* Overwrite a blob's bytes in place (same size): reading it fails. */
static int spoil_blob(al_store *s, const al_digest *d, size_t size)
{
	char *p = al_store_blob_path(s, d);
	char *junk = malloc(size);
	FILE *f = NULL;
	int rc = -1;

	if (p == NULL || junk == NULL)
		goto out;
	memset(junk, 'x', size);
	chmod(p, 0644);
	if ((f = fopen(p, "r+b")) != NULL && fwrite(junk, 1, size, f) == size)
		rc = 0;
out:
	if (f != NULL && fclose(f) != 0)
		rc = -1;
	free(junk);
	free(p);
	return rc;
}

/* A second process reads the cache entry the first wrote and never opens
 * the base layer: spoiled after the first run, it would fail the read
 * (AL_EVERIFY) were it opened. */
static void test_release__second_process_skips_bare_layers(void)
{
	al_store *s = new_store("cache-skip");
	al_release *r = NULL;
	struct built b;
	char *entry = NULL;

	if (s == NULL || build_cached_release(s, "base of cache-skip\n", &b) < 0) {
		CU_FAIL("setup");
		goto out;
	}
	entry = cache_entry_path(s, &b.manifest);
	CU_ASSERT_EQUAL(al_fs_exists(entry), 0);
	CU_ASSERT_EQUAL(open_in_child(s, &b.manifest), 0);
	CU_ASSERT_EQUAL(al_fs_exists(entry), 1);
	CU_ASSERT_EQUAL(spoil_blob(s, &b.layers[0], b.sizes[0]), 0);
	if (al_release_open(&r, s, &b.manifest, NULL) != 0) {
		printf("\n%s\n", al_error_message());
		CU_FAIL("al_release_open read the base layer");
		goto out;
	}
	check_whiteout_payload(r);
	al_release_free(r);
	r = NULL;
	/* Without the entry the base layer is read, and refused. */
	CU_ASSERT_EQUAL(unlink(entry), 0);
	CU_ASSERT_EQUAL(al_release_open(&r, s, &b.manifest, NULL), AL_EVERIFY);
out:
	al_release_free(r);
	free(entry);
	al_store_free(s);
}

/* Rewrite the entry at path with edit applied; 0 on success. */
static int edit_entry(const char *path, void (*edit)(json_t *root))
{
	json_t *root = json_load_file(path, 0, NULL);
	int rc = -1;

	if (root == NULL)
		return -1;
	edit(root);
	chmod(path, 0644);
	if (json_dump_file(root, path, JSON_COMPACT) == 0)
		rc = 0;
	json_decref(root);
	return rc;
}

/* The entry says the payload is in the base layer and nowhere else. */
static void point_at_base(json_t *root)
{
	json_t *layers = json_object_get(root, "layers");
	size_t i;

	for (i = 0; i < json_array_size(layers); i++)
		json_object_set_new(json_array_get(layers, i), "payload", json_boolean(i == 0));
}

/* The entry names a layer the image does not have. */
static void name_other_layer(json_t *root)
{
	json_t *l = json_array_get(json_object_get(root, "layers"), 1);

	json_object_set_new(l, "digest", json_string("sha256:0000000000000000000000000000000000000000000000000000000000000000"));
	json_object_set_new(l, "payload", json_false());
}

/* A wrong entry is not trusted: every layer is read, the payload is the
 * right one, and the entry is written again as it should be. */
static void test_release__wrong_cache_entry_reads_every_layer(void)
{
	void (*edits[])(json_t *) = {point_at_base, name_other_layer};
	al_store *s = new_store("cache-wrong");
	al_release *r = NULL;
	al_buf good = AL_BUF_INIT(1 << 20), again = AL_BUF_INIT(1 << 20);
	struct built b;
	char *entry = NULL;
	size_t i;

	if (s == NULL || build_cached_release(s, "base of cache-wrong\n", &b) < 0) {
		CU_FAIL("setup");
		goto out;
	}
	entry = cache_entry_path(s, &b.manifest);
	CU_ASSERT_EQUAL(open_in_child(s, &b.manifest), 0);
	CU_ASSERT_EQUAL(al_fs_read_file(entry, &good), 0);
	/* the first run's entry: the payload in layers 1 and 2 */
	CU_ASSERT(strstr((const char *)good.ptr, "\"payload\":false") != NULL);
	for (i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
		CU_ASSERT_EQUAL(edit_entry(entry, edits[i]), 0);
		CU_ASSERT_EQUAL(al_release_open(&r, s, &b.manifest, NULL), 0);
		if (r != NULL)
			check_whiteout_payload(r);
		al_release_free(r);
		r = NULL;
		al_buf_reset(&again);
		CU_ASSERT_EQUAL(al_fs_read_file(entry, &again), 0);
		CU_ASSERT(again.len == good.len && memcmp(again.ptr, good.ptr, good.len) == 0);
	}
out:
	al_buf_free(&good);
	al_buf_free(&again);
	free(entry);
	al_store_free(s);
}

/* A read-only store keeps no entry; gc removes the entries of releases
 * that went and keeps the others'. */
static void test_release__cache_readonly_and_gc(void)
{
	char *path = al_sprintf("%s/cache-gc", al_test_tmpdir());
	al_store_opts ro = {.readonly = 1};
	al_store *s = new_store("cache-gc"), *rs = NULL;
	al_release *r = NULL;
	al_descriptor desc;
	al_check_result res = AL_CHECK_RESULT_INIT;
	struct built keep, gone;
	char *ek = NULL, *eg = NULL;

	memset(&desc, 0, sizeof(desc));
	if (s == NULL || build_cached_release(s, "base kept\n", &keep) < 0 || build_cached_release(s, "base gone\n", &gone) < 0) {
		CU_FAIL("setup");
		goto out;
	}
	ek = cache_entry_path(s, &keep.manifest);
	eg = cache_entry_path(s, &gone.manifest);
	CU_ASSERT_EQUAL(al_store_open(&rs, path, &ro), 0);
	if (rs != NULL) {
		CU_ASSERT_EQUAL(al_release_open(&r, rs, &keep.manifest, NULL), 0);
		al_release_free(r);
		r = NULL;
	}
	CU_ASSERT_EQUAL(al_fs_exists(ek), 0);
	CU_ASSERT_EQUAL(al_release_open(&r, s, &keep.manifest, NULL), 0);
	al_release_free(r);
	r = NULL;
	CU_ASSERT_EQUAL(al_release_open(&r, s, &gone.manifest, NULL), 0);
	al_release_free(r);
	r = NULL;
	CU_ASSERT_EQUAL(al_fs_exists(ek), 1);
	CU_ASSERT_EQUAL(al_fs_exists(eg), 1);
	desc.media_type = (char *)AL_MT_OCI_MANIFEST;
	desc.digest = keep.manifest;
	desc.size = keep.nmanifest;
	CU_ASSERT_EQUAL(al_store_tag(s, "example.com/release:kept", &desc), 0);
	memset(&res, 0, sizeof(res));
	CU_ASSERT_EQUAL(al_store_check(s, AL_STORE_CHECK_GC, NULL, NULL, &res), 0);
	CU_ASSERT_EQUAL(al_fs_exists(ek), 1);
	CU_ASSERT_EQUAL(al_fs_exists(eg), 0);
out:
	free(ek);
	free(eg);
	al_store_free(rs);
	al_store_free(s);
	free(path);
}

int main(void)
{
	CU_TestInfo tests[] = {
		{"reads_layers_with_whiteouts", test_release__reads_layers_with_whiteouts},
		{"opaque_whiteout_clears_lower_layers", test_release__opaque_whiteout_clears_lower_layers},
		{"reads_cvo_manifests_dir_with_whiteouts", test_release__reads_cvo_manifests_dir_with_whiteouts},
		{"index_picks_platform", test_release__index_picks_platform},
		{"wrong_layer_digest_is_everify", test_release__wrong_layer_digest_is_everify},
		{"oversize_file_is_elimit", test_release__oversize_file_is_elimit},
		{"strict_image_references_and_metadata", test_release__strict_image_references_and_metadata},
		{"not_a_tar_is_eparse", test_release__not_a_tar_is_eparse},
		{"reads_mkrelease_layout", test_release__reads_mkrelease_layout},
		{"second_process_skips_bare_layers", test_release__second_process_skips_bare_layers},
		{"wrong_cache_entry_reads_every_layer", test_release__wrong_cache_entry_reads_every_layer},
		{"cache_readonly_and_gc", test_release__cache_readonly_and_gc},
		CU_TEST_INFO_NULL,
	};

	return al_test_run("release", tests);
}
