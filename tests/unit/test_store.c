/* test_store.c: unit tests for the on-disk store: layout, lock, blobs, index.json, check/gc, skopeo interop. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "store_int.h"
#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/store.h"
#include "al_test.h"

#define NAME1 "quay.io/airlock-samples/release:4.14.1"
#define NAME2 "quay.io/x/y@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static char *tmp_path(const char *name)
{
	char *p = al_sprintf("%s/%s", al_test_tmpdir(), name);

	if (p == NULL)
		abort();
	return p;
}

static al_store *open_store(const char *path, int create, int readonly)
{
	al_store_opts o = {.create = create, .readonly = readonly};
	al_store *s = NULL;
	int rc = al_store_open(&s, path, &o);

	if (rc != 0)
		printf("\nal_store_open('%s'): %s: %s\n", path, al_status_name(rc), al_error_message());
	return s;
}

static int count_dir(const char *path)
{
	char *cmd = al_sprintf("ls -A '%s' | wc -l", path);
	FILE *f;
	int n = -1;

	if (cmd == NULL)
		return -1;
	f = popen(cmd, "r");
	if (f != NULL) {
		if (fscanf(f, "%d", &n) != 1)
			n = -1;
		pclose(f);
	}
	free(cmd);
	return n;
}

static la_ssize_t buf_write_cb(struct archive *a, void *ud, const void *p, size_t n)
{
	(void)a;
	return al_buf_append(ud, p, n) == 0 ? (la_ssize_t)n : -1;
}

/* An uncompressed tar holding one file. */
static int make_tar(al_buf *out, const char *name, const char *content)
{
	struct archive *a = archive_write_new();
	struct archive_entry *e = archive_entry_new();
	int ok;

	archive_write_set_format_pax_restricted(a);
	archive_write_set_bytes_in_last_block(a, 1);
	ok = archive_write_open(a, out, NULL, buf_write_cb, NULL) == ARCHIVE_OK;
	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	archive_entry_set_size(e, (la_int64_t)strlen(content));
	ok = ok && archive_write_header(a, e) == ARCHIVE_OK;
	ok = ok && archive_write_data(a, content, strlen(content)) == (la_ssize_t)strlen(content);
	ok = ok && archive_write_close(a) == ARCHIVE_OK;
	archive_entry_free(e);
	archive_write_free(a);
	return ok ? 0 : -1;
}

struct image {
	al_digest manifest, config, layer;
	al_descriptor desc;
};

/* Store a small runnable image (uncompressed layer, OCI config and
 * manifest) and tag it name. */
static int build_image(al_store *s, const char *name, const char *content, struct image *img)
{
	al_buf tar = AL_BUF_INIT(1 << 20);
	char ld[AL_DIGEST_STRMAX], cd[AL_DIGEST_STRMAX];
	char *config = NULL, *manifest = NULL;
	int rc = -1;

	memset(img, 0, sizeof(*img));
	if (make_tar(&tar, "hello.txt", content) < 0 || al_store_put_blob(s, tar.ptr, tar.len, &img->layer) < 0)
		goto out;
	al_digest_str(&img->layer, ld);
	config = al_sprintf("{\"architecture\":\"amd64\",\"os\":\"linux\",\"config\":{},"
			    "\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[\"%s\"]}}", ld);
	if (config == NULL || al_store_put_blob(s, (const uint8_t *)config, strlen(config), &img->config) < 0)
		goto out;
	al_digest_str(&img->config, cd);
	manifest = al_sprintf("{\"schemaVersion\":2,\"mediaType\":\"%s\","
			      "\"config\":{\"mediaType\":\"%s\",\"digest\":\"%s\",\"size\":%zu},"
			      "\"layers\":[{\"mediaType\":\"%s\",\"digest\":\"%s\",\"size\":%zu}]}",
			      AL_MT_OCI_MANIFEST, AL_MT_OCI_CONFIG, cd, strlen(config), AL_MT_OCI_LAYER, ld, tar.len);
	if (manifest == NULL || al_store_put_blob(s, (const uint8_t *)manifest, strlen(manifest), &img->manifest) < 0)
		goto out;
	img->desc.media_type = al_strdup(AL_MT_OCI_MANIFEST);
	img->desc.digest = img->manifest;
	img->desc.size = strlen(manifest);
	if (name != NULL && al_store_tag(s, name, &img->desc) < 0)
		goto out;
	rc = 0;
out:
	if (rc < 0)
		printf("\nbuild_image: %s\n", al_error_message());
	free(config);
	free(manifest);
	al_buf_free(&tar);
	return rc;
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
	fputc(c ^ 0x20, f);
	fclose(f);
}

static void test_store__create_open_reopen(void)
{
	char *path = tmp_path("create"), *foreign = tmp_path("foreign"), *p = NULL;
	al_buf b = AL_BUF_INIT(4096);
	al_store_opts bad = {.create = 1, .readonly = 1};
	al_store *s = open_store(path, 1, 0), *t = NULL;
	json_t *v;

	CU_ASSERT_PTR_NOT_NULL(s);
	if (s != NULL)
		CU_ASSERT_STRING_EQUAL(al_store_path(s), path);
	al_store_free(s);
	p = al_sprintf("%s/oci-layout", path);
	CU_ASSERT_EQUAL(al_fs_read_file(p, &b), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_buf_cstr(&b), "\"imageLayoutVersion\":\"1.0.0\""));
	free(p);
	al_buf_reset(&b);
	p = al_sprintf("%s/index.json", path);
	CU_ASSERT_EQUAL(al_fs_read_file(p, &b), 0);
	v = json_loads(al_buf_cstr(&b), 0, NULL);
	CU_ASSERT(json_is_array(json_object_get(v, "manifests")));
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(v, "schemaVersion")), 2);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(v, "mediaType")), AL_MT_OCI_INDEX);
	json_decref(v);
	free(p);
	p = al_sprintf("%s/blobs/sha256", path);
	CU_ASSERT_EQUAL(al_fs_exists(p), 1);
	free(p);
	p = al_sprintf("%s/signatures", path);
	CU_ASSERT_EQUAL(al_fs_exists(p), 1);
	free(p);
	p = al_sprintf("%s/airlock/lock", path);
	CU_ASSERT_EQUAL(al_fs_exists(p), 1);
	free(p);

	/* reopen without create, read-only too */
	s = open_store(path, 0, 0);
	CU_ASSERT_PTR_NOT_NULL(s);
	al_store_free(s);
	s = open_store(path, 0, 1);
	CU_ASSERT_PTR_NOT_NULL(s);
	al_store_free(s);

	/* not a layout: ENOTFOUND; a non-empty foreign directory is not taken */
	CU_ASSERT_EQUAL(al_store_open(&t, foreign, NULL), AL_ENOTFOUND);
	CU_ASSERT_EQUAL(al_fs_mkdir_p(foreign, 0755), 0);
	p = al_sprintf("%s/precious.txt", foreign);
	CU_ASSERT_EQUAL(al_fs_write_atomic(p, "x", 1), 0);
	free(p);
	CU_ASSERT_EQUAL(al_store_open(&t, foreign, &(al_store_opts){.create = 1}), AL_EEXIST);
	CU_ASSERT_EQUAL(al_store_open(&t, path, &bad), AL_EINVAL);
	CU_ASSERT_PTR_NULL(t);
	al_store_free(NULL);

	/* a broken index.json is AL_EPARSE */
	p = al_sprintf("%s/index.json", path);
	CU_ASSERT_EQUAL(al_fs_write_atomic(p, "{\"schemaVersion\":2,\"manifests\":[{\"mediaType\":\"x\"}]}", 51), 0);
	CU_ASSERT_EQUAL(al_store_open(&t, path, NULL), AL_EPARSE);
	CU_ASSERT_EQUAL(al_fs_write_atomic(p, "{\"schemaVersion\":2,\"schemaVersion\":2,\"manifests\":[]}", 52), 0);
	CU_ASSERT_EQUAL(al_store_open(&t, path, NULL), AL_EPARSE);
	free(p);
	al_buf_free(&b);
	free(path);
	free(foreign);
}

/* al_store_opts.version: INIT sets this header's, 0 reads as version 1, a
 * newer one is refused with a message naming the version and the store. */
static void test_store__opts_version(void)
{
	char *path = tmp_path("optsversion");
	al_store_opts init = AL_STORE_OPTS_INIT, o = AL_STORE_OPTS_INIT, zero;
	al_store *s = NULL;

	memset(&zero, 0, sizeof(zero));
	CU_ASSERT_EQUAL(init.version, AL_STORE_OPTS_VERSION);
	CU_ASSERT_EQUAL(init.create, 0);
	CU_ASSERT_EQUAL(init.readonly, 0);
	o.version = AL_STORE_OPTS_VERSION + 1;
	o.create = 1;
	CU_ASSERT_EQUAL(al_store_open(&s, path, &o), AL_EINVAL);
	CU_ASSERT_PTR_NULL(s);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "al_store_opts version 2 not supported"));
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), path));
	CU_ASSERT_EQUAL(al_fs_exists(path), 0); /* refused before anything is created */
	o.version = AL_STORE_OPTS_VERSION;
	CU_ASSERT_EQUAL(al_store_open(&s, path, &o), 0);
	al_store_free(s);
	s = NULL;
	CU_ASSERT_EQUAL(al_store_open(&s, path, &zero), 0);
	al_store_free(s);
	free(path);
}

static void test_store__second_writable_open_is_locked(void)
{
	char *path = tmp_path("locked");
	al_store *a = open_store(path, 1, 0), *b = NULL, *r;

	CU_ASSERT_PTR_NOT_NULL(a);
	CU_ASSERT_EQUAL(al_store_open(&b, path, NULL), AL_ELOCKED);
	CU_ASSERT_PTR_NULL(b);
	/* with a short wait it still fails, after waiting */
	CU_ASSERT_EQUAL(al_store_open(&b, path, &(al_store_opts){.lock_wait_ms = 100}), AL_ELOCKED);
	r = open_store(path, 0, 1);
	CU_ASSERT_PTR_NOT_NULL(r);
	al_store_free(r);
	al_store_free(a);
	b = open_store(path, 0, 0);
	CU_ASSERT_PTR_NOT_NULL(b);
	al_store_free(b);
	free(path);
}

static void test_store__blob_writer_commit_mismatch_abort(void)
{
	static const uint8_t data[] = "the quick brown fox";
	char *path = tmp_path("writer"), *tmpdir = tmp_path("writer/blobs/.tmp");
	al_store *s = open_store(path, 1, 0);
	al_blob_writer *w = NULL;
	al_digest d, other;
	al_writer wr;
	uint64_t size = 0;

	if (s == NULL) {
		CU_FAIL("no store");
		goto out;
	}
	al_digest_bytes(&d, AL_DIGEST_SHA256, data, sizeof(data) - 1);
	al_digest_bytes(&other, AL_DIGEST_SHA256, "x", 1);

	/* good, through the al_writer with a reset in the middle */
	CU_ASSERT_EQUAL(al_store_blob_begin(s, &d, sizeof(data) - 1, &w), 0);
	wr = al_blob_writer_as_writer(w);
	CU_ASSERT_EQUAL(wr.write(wr.ud, (const uint8_t *)"garbage", 7), 0);
	CU_ASSERT_EQUAL(count_dir(tmpdir), 1);
	CU_ASSERT_EQUAL(wr.reset(wr.ud), 0);
	CU_ASSERT_EQUAL(wr.write(wr.ud, data, 4), 0);
	CU_ASSERT_EQUAL(al_blob_writer_write(w, data + 4, sizeof(data) - 5), 0);
	CU_ASSERT_EQUAL(al_store_has_blob(s, &d, NULL), 0);
	CU_ASSERT_EQUAL(al_blob_writer_commit(w), 0);
	CU_ASSERT_EQUAL(al_store_has_blob(s, &d, &size), 1);
	CU_ASSERT_EQUAL(size, sizeof(data) - 1);
	CU_ASSERT_EQUAL(count_dir(tmpdir), 0);

	/* wrong digest */
	CU_ASSERT_EQUAL(al_store_blob_begin(s, &other, 0, &w), 0);
	CU_ASSERT_EQUAL(al_blob_writer_write(w, data, 5), 0);
	CU_ASSERT_EQUAL(al_blob_writer_commit(w), AL_EVERIFY);
	CU_ASSERT_EQUAL(al_store_has_blob(s, &other, NULL), 0);
	CU_ASSERT_EQUAL(count_dir(tmpdir), 0);

	/* wrong size: short, and too long (refused as it arrives) */
	CU_ASSERT_EQUAL(al_store_blob_begin(s, &d, sizeof(data), &w), 0);
	CU_ASSERT_EQUAL(al_blob_writer_write(w, data, sizeof(data) - 1), 0);
	CU_ASSERT_EQUAL(al_blob_writer_commit(w), AL_EVERIFY);
	CU_ASSERT_EQUAL(al_store_blob_begin(s, &other, 3, &w), 0);
	CU_ASSERT_EQUAL(al_blob_writer_write(w, data, 4), AL_EVERIFY);
	al_blob_writer_abort(w);

	/* abort leaves nothing */
	CU_ASSERT_EQUAL(al_store_blob_begin(s, &other, 1, &w), 0);
	CU_ASSERT_EQUAL(al_blob_writer_write(w, (const uint8_t *)"x", 1), 0);
	al_blob_writer_abort(w);
	al_blob_writer_abort(NULL);
	CU_ASSERT_EQUAL(al_store_has_blob(s, &other, NULL), 0);
	CU_ASSERT_EQUAL(count_dir(tmpdir), 0);
out:
	al_store_free(s);
	free(tmpdir);
	free(path);
}

/* A blob whose digest is not known in advance: stored under the SHA-256
 * of its bytes, which commit returns; an expected size is refused; an
 * abort leaves nothing. */
static void test_store__blob_writer_learns_digest(void)
{
	static const uint8_t data[] = "made here, not received";
	char *path = tmp_path("learn"), *tmpdir = tmp_path("learn/blobs/.tmp");
	al_store *s = open_store(path, 1, 0);
	al_blob_writer *w = NULL;
	al_digest d, got;
	uint64_t size = 0;

	if (s == NULL) {
		CU_FAIL("no store");
		goto out;
	}
	al_digest_bytes(&d, AL_DIGEST_SHA256, data, sizeof(data) - 1);
	memset(&got, 0, sizeof(got));

	CU_ASSERT_EQUAL(al_store_blob_begin(s, NULL, 5, &w), AL_EINVAL);
	CU_ASSERT_EQUAL(al_store_blob_begin(s, NULL, 0, &w), 0);
	CU_ASSERT_EQUAL(al_blob_writer_write(w, data, 4), 0);
	CU_ASSERT_EQUAL(al_blob_writer_write(w, data + 4, sizeof(data) - 5), 0);
	CU_ASSERT_EQUAL(al_store_has_blob(s, &d, NULL), 0);
	CU_ASSERT_EQUAL(al_blob_writer_commit_digest(w, &got), 0);
	CU_ASSERT(al_digest_equal(&got, &d));
	CU_ASSERT_EQUAL(al_store_has_blob(s, &d, &size), 1);
	CU_ASSERT_EQUAL(size, sizeof(data) - 1);
	CU_ASSERT_EQUAL(count_dir(tmpdir), 0);

	CU_ASSERT_EQUAL(al_store_blob_begin(s, NULL, 0, &w), 0);
	CU_ASSERT_EQUAL(al_blob_writer_write(w, (const uint8_t *)"x", 1), 0);
	CU_ASSERT_EQUAL(count_dir(tmpdir), 1);
	al_blob_writer_abort(w);
	al_digest_bytes(&d, AL_DIGEST_SHA256, "x", 1);
	CU_ASSERT_EQUAL(al_store_has_blob(s, &d, NULL), 0);
	CU_ASSERT_EQUAL(count_dir(tmpdir), 0);
out:
	al_store_free(s);
	free(tmpdir);
	free(path);
}

/* Writes hashed on a worker thread: the same digest checks, large writes
 * hashed off-thread and small ones inline; batch commit + one dir sync. */
static void test_store__blob_writer_hash_worker_and_batch_commit(void)
{
	enum { N = (1 << 20) + 12345 };
	char *path = tmp_path("hw"), *tmpdir = tmp_path("hw/blobs/.tmp");
	al_store *s = open_store(path, 1, 0);
	al_hash_worker *hw = NULL;
	al_blob_writer *w = NULL;
	uint8_t *data = malloc(N);
	al_digest d, other;
	uint64_t size = 0;
	size_t i;

	if (s == NULL || data == NULL || al_hash_worker_new(&hw) != 0) {
		CU_FAIL("setup");
		goto out;
	}
	for (i = 0; i < N; i++)
		data[i] = (uint8_t)(i ^ (i >> 9));
	al_digest_bytes(&d, AL_DIGEST_SHA256, data, N);
	al_digest_bytes(&other, AL_DIGEST_SHA256, "x", 1);

	CU_ASSERT_EQUAL(al_store_blob_begin(s, &d, N, &w), 0);
	al_blob_writer_use_hash_worker(w, hw);
	CU_ASSERT_EQUAL(al_blob_writer_write(w, data, 100), 0); /* inline */
	CU_ASSERT_EQUAL(al_blob_writer_write(w, data + 100, N - 100 - 7), 0); /* worker */
	CU_ASSERT_EQUAL(al_blob_writer_write(w, data + N - 7, 7), 0);
	al_blob_writer_start_writeback(w);
	CU_ASSERT_EQUAL(al_blob_writer_commit_nodirsync(w), 0);
	CU_ASSERT_EQUAL(al_store_sync_blob_dir(s, AL_DIGEST_SHA256), 0);
	CU_ASSERT_EQUAL(al_store_has_blob(s, &d, &size), 1);
	CU_ASSERT_EQUAL(size, N);

	/* the worker's hash is checked like any other */
	CU_ASSERT_EQUAL(al_store_blob_begin(s, &other, 0, &w), 0);
	al_blob_writer_use_hash_worker(w, hw);
	CU_ASSERT_EQUAL(al_blob_writer_write(w, data, N), 0);
	CU_ASSERT_EQUAL(al_blob_writer_commit_nodirsync(w), AL_EVERIFY);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "digest mismatch"));
	CU_ASSERT_EQUAL(al_store_has_blob(s, &other, NULL), 0);
	CU_ASSERT_EQUAL(count_dir(tmpdir), 0);
out:
	al_hash_worker_free(hw);
	al_store_free(s);
	free(data);
	free(tmpdir);
	free(path);
}

static void test_store__put_read_blob_detects_corruption(void)
{
	static const char data[] = "{\"hello\":\"world\"}";
	char *path = tmp_path("putread"), *bp = NULL;
	al_store *s = open_store(path, 1, 0), *ro = NULL;
	al_buf b = AL_BUF_INIT(1024), small = AL_BUF_INIT(4);
	al_digest d, missing;
	int fd = -1;
	uint64_t size = 0;

	if (s == NULL) {
		CU_FAIL("no store");
		goto out;
	}
	CU_ASSERT_EQUAL(al_store_put_blob(s, (const uint8_t *)data, strlen(data), &d), 0);
	CU_ASSERT_EQUAL(al_store_put_blob(s, (const uint8_t *)data, strlen(data), NULL), 0);
	CU_ASSERT_EQUAL(al_store_read_blob(s, &d, &b), 0);
	CU_ASSERT_EQUAL(b.len, strlen(data));
	CU_ASSERT_STRING_EQUAL(al_buf_cstr(&b), data);
	CU_ASSERT_EQUAL(al_store_read_blob(s, &d, &small), AL_ELIMIT);
	CU_ASSERT_EQUAL(al_store_blob_open(s, &d, &fd, &size), 0);
	CU_ASSERT(fd >= 0);
	CU_ASSERT_EQUAL(size, strlen(data));
	if (fd >= 0)
		close(fd);
	bp = al_store_blob_path(s, &d);
	CU_ASSERT_PTR_NOT_NULL(strstr(bp, "/blobs/sha256/"));

	/* flip a byte on disk: reading is AL_EVERIFY and leaves out alone */
	flip_byte(bp, 3);
	al_buf_reset(&b);
	al_buf_append(&b, "keep", 4);
	CU_ASSERT_EQUAL(al_store_read_blob(s, &d, &b), AL_EVERIFY);
	CU_ASSERT_STRING_EQUAL(al_buf_cstr(&b), "keep");
	/* a blob that is absent */
	al_digest_bytes(&missing, AL_DIGEST_SHA256, "nope", 4);
	CU_ASSERT_EQUAL(al_store_read_blob(s, &missing, &b), AL_ENOTFOUND);
	CU_ASSERT_EQUAL(al_store_blob_open(s, &missing, &fd, NULL), AL_ENOTFOUND);
	CU_ASSERT_EQUAL(al_store_has_blob(s, &missing, NULL), 0);

	/* read-only stores refuse writes */
	al_store_free(s);
	s = NULL;
	ro = open_store(path, 0, 1);
	CU_ASSERT_PTR_NOT_NULL(ro);
	if (ro != NULL)
		CU_ASSERT_EQUAL(al_store_put_blob(ro, (const uint8_t *)"a", 1, NULL), AL_EINVAL);
out:
	al_store_free(ro);
	al_store_free(s);
	al_buf_free(&b);
	al_buf_free(&small);
	free(bp);
	free(path);
}

static void test_store__tag_untag_list_find_persist(void)
{
	char *path = tmp_path("tags"), *ip = NULL;
	al_store *s = open_store(path, 1, 0);
	struct image a, b;
	al_store_image *imgs = NULL, one;
	al_descriptor ghost;
	al_buf raw = AL_BUF_INIT(1 << 20);
	size_t n = 0;

	memset(&one, 0, sizeof(one));
	memset(&ghost, 0, sizeof(ghost));
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	if (s == NULL || build_image(s, NULL, "aaa\n", &a) < 0 || build_image(s, NULL, "bbb\n", &b) < 0) {
		CU_FAIL("setup");
		goto out;
	}
	CU_ASSERT_EQUAL(al_store_tag(s, NAME1, &a.desc), 0);
	CU_ASSERT_EQUAL(al_store_tag(s, NAME2, &b.desc), 0);
	CU_ASSERT_EQUAL(al_store_tag(s, "third", &a.desc), 0);
	/* replacing keeps the position */
	CU_ASSERT_EQUAL(al_store_tag(s, NAME1, &b.desc), 0);
	/* refused: empty name, manifest not stored */
	CU_ASSERT_EQUAL(al_store_tag(s, "", &a.desc), AL_EINVAL);
	ghost.media_type = al_strdup(AL_MT_OCI_MANIFEST);
	al_digest_bytes(&ghost.digest, AL_DIGEST_SHA256, "ghost", 5);
	ghost.size = 5;
	CU_ASSERT_EQUAL(al_store_tag(s, "ghost", &ghost), AL_ENOTFOUND);
	al_store_free(s);

	s = open_store(path, 0, 0);
	if (s == NULL) {
		CU_FAIL("reopen");
		goto out;
	}
	CU_ASSERT_EQUAL(al_store_list(s, &imgs, &n), 0);
	CU_ASSERT_EQUAL(n, 3);
	if (n == 3) {
		CU_ASSERT_STRING_EQUAL(imgs[0].name, NAME1);
		CU_ASSERT(al_digest_equal(&imgs[0].desc.digest, &b.manifest));
		CU_ASSERT_STRING_EQUAL(imgs[1].name, NAME2);
		CU_ASSERT_STRING_EQUAL(imgs[2].name, "third");
		CU_ASSERT(al_digest_equal(&imgs[2].desc.digest, &a.manifest));
		CU_ASSERT_STRING_EQUAL(imgs[2].desc.media_type, AL_MT_OCI_MANIFEST);
		CU_ASSERT_EQUAL(imgs[2].desc.size, a.desc.size);
	}
	al_store_images_free(imgs, n);
	CU_ASSERT_EQUAL(al_store_find(s, NAME2, &one), 0);
	CU_ASSERT(al_digest_equal(&one.desc.digest, &b.manifest));
	al_store_image_clear(&one);
	CU_ASSERT_EQUAL(al_store_untag(s, NAME2), 0);
	CU_ASSERT_EQUAL(al_store_untag(s, NAME2), AL_ENOTFOUND);
	CU_ASSERT_EQUAL(al_store_find(s, NAME2, &one), AL_ENOTFOUND);
	al_store_free(s);

	/* what skopeo reads: the annotation in index.json on disk */
	ip = al_sprintf("%s/index.json", path);
	CU_ASSERT_EQUAL(al_fs_read_file(ip, &raw), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_buf_cstr(&raw), "\"org.opencontainers.image.ref.name\":\"" NAME1 "\""));
	CU_ASSERT_PTR_NULL(strstr(al_buf_cstr(&raw), NAME2));

	s = open_store(path, 0, 1);
	CU_ASSERT_PTR_NOT_NULL(s);
	if (s != NULL) {
		CU_ASSERT_EQUAL(al_store_list(s, &imgs, &n), 0);
		CU_ASSERT_EQUAL(n, 2);
		al_store_images_free(imgs, n);
		CU_ASSERT_EQUAL(al_store_tag(s, "x", &a.desc), AL_EINVAL);
		CU_ASSERT_EQUAL(al_store_untag(s, "third"), AL_EINVAL);
	}
out:
	al_store_free(s);
	al_descriptor_clear(&a.desc);
	al_descriptor_clear(&b.desc);
	al_descriptor_clear(&ghost);
	al_buf_free(&raw);
	free(ip);
	free(path);
}

static void test_store__releases_load_save(void)
{
	char *path = tmp_path("releases"), *rp = NULL;
	al_store *s = open_store(path, 1, 0);
	json_t *v = NULL, *bad = json_object();

	if (s == NULL) {
		CU_FAIL("no store");
		goto out;
	}
	CU_ASSERT_EQUAL(al_store_releases_load(s, &v), 0);
	CU_ASSERT_EQUAL(json_array_size(json_object_get(v, "releases")), 0);
	json_array_append_new(json_object_get(v, "releases"), json_pack("{s:s,s:i}", "version", "4.14.1", "components", 3));
	CU_ASSERT_EQUAL(al_store_releases_save(s, v), 0);
	CU_ASSERT_EQUAL(al_store_releases_save(s, bad), AL_EINVAL);
	json_decref(v);
	v = NULL;
	al_store_free(s);
	s = open_store(path, 0, 1);
	if (s == NULL) {
		CU_FAIL("reopen");
		goto out;
	}
	CU_ASSERT_EQUAL(al_store_releases_load(s, &v), 0);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_array_get(json_object_get(v, "releases"), 0), "version")), "4.14.1");
	json_decref(v);
	v = NULL;
	rp = al_sprintf("%s/airlock/releases.json", path);
	al_fs_write_atomic(rp, "{\"releases\":[],\"releases\":[]}", 29);
	CU_ASSERT_EQUAL(al_store_releases_load(s, &v), AL_EPARSE);
	CU_ASSERT_PTR_NULL(v);
out:
	json_decref(bad);
	al_store_free(s);
	free(rp);
	free(path);
}

/* A child tags in a loop and is killed at a random moment; index.json
 * must always parse afterwards (temp + rename, never a torn write). */
static void test_store__index_survives_kill9(void)
{
	char *path = tmp_path("kill9");
	al_store *s = open_store(path, 1, 0);
	struct image img;
	unsigned seed = al_test_seed();
	int iter, bad = 0, ok_opens = 0;
	size_t most = 0;

	memset(&img, 0, sizeof(img));
	if (s == NULL || build_image(s, "seed", "k\n", &img) < 0) {
		CU_FAIL("setup");
		al_store_free(s);
		free(path);
		return;
	}
	al_store_free(s);
	srand(seed);
	for (iter = 0; iter < 12; iter++) {
		int pfd[2];
		pid_t pid;
		struct timespec ts;
		struct pollfd pw;
		al_store_image *imgs = NULL;
		size_t n = 0;
		char b;

		if (pipe(pfd) != 0) {
			CU_FAIL("pipe");
			break;
		}
		pid = fork();
		if (pid < 0) {
			CU_FAIL("fork");
			close(pfd[0]);
			close(pfd[1]);
			break;
		}
		if (pid == 0) {
			al_store *c = NULL;
			al_store_opts o = {.lock_wait_ms = 5000};
			char name[64];
			int i;

			if (al_store_open(&c, path, &o) != 0)
				_exit(2);
			close(pfd[0]);
			for (i = 0;; i++) {
				snprintf(name, sizeof(name), "name-%d", i % 40);
				if (al_store_tag(c, name, &img.desc) != 0)
					_exit(3);
				/* two tags are in: the parent may kill now */
				if (i == 1 && write(pfd[1], "x", 1) != 1)
					_exit(4);
			}
		}
		/* kill at a random moment after the child's second tag, not
		 * after a time it may not have had on a loaded machine */
		close(pfd[1]);
		pw.fd = pfd[0];
		pw.events = POLLIN;
		if (poll(&pw, 1, 120000) != 1 || read(pfd[0], &b, 1) != 1)
			CU_FAIL("the child tagged twice");
		close(pfd[0]);
		ts.tv_sec = 0;
		ts.tv_nsec = (long)(rand() % 60) * 1000000L;
		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		s = open_store(path, 0, 1);
		if (s == NULL) {
			bad++;
			continue;
		}
		if (al_store_list(s, &imgs, &n) == 0 && n >= 1)
			ok_opens++;
		if (n > most)
			most = n;
		al_store_images_free(imgs, n);
		al_store_free(s);
	}
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT_EQUAL(ok_opens, iter);
	/* every child was killed after its second tag */
	CU_ASSERT(most >= 2);
	/* the next writable open sweeps the killed writers' temp files */
	s = open_store(path, 0, 0);
	CU_ASSERT_PTR_NOT_NULL(s);
	al_store_free(s);
	{
		char *cmd = al_sprintf("ls -A '%s' '%s/blobs/.tmp' '%s/airlock' | grep -c '^\\.tmp-'", path, path, path);
		FILE *f = popen(cmd, "r");
		int left = -1;

		if (f != NULL) {
			if (fscanf(f, "%d", &left) != 1)
				left = -1;
			pclose(f);
		}
		CU_ASSERT_EQUAL(left, 0);
		free(cmd);
	}
	al_descriptor_clear(&img.desc);
	free(path);
}

/* Names are journalled (airlock/index.journal) and index.json rewritten in
 * batches: a writer that dies before writing index.json loses no name, a
 * torn last record is dropped, a damaged one before it is refused with its
 * line, and a record whose manifest the store lacks is dropped. */
static void test_store__index_journal_replayed_after_kill(void)
{
	char *path = tmp_path("journal"), *ip = NULL, *jp = NULL;
	al_store *s = open_store(path, 1, 0);
	struct image img;
	al_store_image *imgs = NULL;
	al_buf raw = AL_BUF_INIT(1 << 20);
	size_t n = 0;
	pid_t pid;
	int status = 0, fd, rc;

	memset(&img, 0, sizeof(img));
	ip = al_sprintf("%s/index.json", path);
	jp = al_sprintf("%s/airlock/index.journal", path);
	if (s == NULL || ip == NULL || jp == NULL ||
	    build_image(s, "seed", "j\n", &img) < 0) {
		CU_FAIL("setup");
		goto out;
	}
	al_store_free(s);
	s = NULL;
	pid = fork();
	if (pid == 0) {
		al_store *c = NULL;
		char name[64];
		int i;

		if (al_store_open(&c, path, NULL) != 0)
			_exit(2);
		for (i = 0; i < 100; i++) {
			snprintf(name, sizeof(name), "j-%d", i);
			if (al_store_tag(c, name, &img.desc) != 0)
				_exit(3);
		}
		_exit(0); /* as a kill -9 would: no flush, no free */
	}
	CU_ASSERT(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* the child never wrote index.json: the names are in the journal only */
	CU_ASSERT_EQUAL(al_fs_read_file(ip, &raw), 0);
	CU_ASSERT_PTR_NULL(strstr(al_buf_cstr(&raw), "\"j-99\""));
	/* a read-only open applies the journal in memory */
	s = open_store(path, 0, 1);
	CU_ASSERT_PTR_NOT_NULL(s);
	if (s != NULL && al_store_list(s, &imgs, &n) == 0) {
		CU_ASSERT_EQUAL(n, 101); /* and "seed" */
		al_store_images_free(imgs, n);
	}
	al_store_free(s);
	/* a writable open writes index.json and empties the journal */
	s = open_store(path, 0, 0);
	CU_ASSERT_PTR_NOT_NULL(s);
	al_store_free(s);
	s = NULL;
	al_buf_reset(&raw);
	CU_ASSERT_EQUAL(al_fs_read_file(ip, &raw), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_buf_cstr(&raw), "\"j-99\""));
	al_buf_reset(&raw);
	CU_ASSERT_EQUAL(al_fs_read_file(jp, &raw), 0);
	CU_ASSERT_EQUAL(raw.len, 0);

	/* a torn last record (a power loss mid-write) is dropped */
	fd = open(jp, O_WRONLY | O_APPEND);
	CU_ASSERT(fd >= 0 && write(fd, "{\"op\":\"tag\",\"en", 16) == 16);
	if (fd >= 0)
		close(fd);
	s = open_store(path, 0, 0);
	CU_ASSERT_PTR_NOT_NULL(s);
	if (s != NULL && al_store_list(s, &imgs, &n) == 0) {
		CU_ASSERT_EQUAL(n, 101); /* and "seed" */
		al_store_images_free(imgs, n);
	}
	al_store_free(s);
	s = NULL;

	/* a record naming a manifest the store lacks is dropped */
	fd = open(jp, O_WRONLY | O_APPEND);
	{
		const char *rec = "{\"op\":\"tag\",\"entry\":{\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\","
		                  "\"digest\":\"sha256:0000000000000000000000000000000000000000000000000000000000000000\",\"size\":2,"
		                  "\"annotations\":{\"org.opencontainers.image.ref.name\":\"ghost\"}}}\n";
		CU_ASSERT(fd >= 0 && write(fd, rec, strlen(rec)) == (ssize_t)strlen(rec));
	}
	if (fd >= 0)
		close(fd);
	s = open_store(path, 0, 0);
	CU_ASSERT_PTR_NOT_NULL(s);
	if (s != NULL) {
		al_store_image one;

		memset(&one, 0, sizeof(one));
		CU_ASSERT_EQUAL(al_store_find(s, "ghost", &one), AL_ENOTFOUND);
	}
	al_store_free(s);
	s = NULL;

	/* damage before the last line is refused, naming the line */
	fd = open(jp, O_WRONLY | O_APPEND);
	CU_ASSERT(fd >= 0 && write(fd, "garbage\n{}\n", 12) == 12);
	if (fd >= 0)
		close(fd);
	{
		al_store *t = NULL;

		rc = al_store_open(&t, path, NULL);
		CU_ASSERT_EQUAL(rc, AL_EPARSE);
		CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "index.journal' line 1"));
		al_store_free(t);
	}
out:
	al_store_free(s);
	al_descriptor_clear(&img.desc);
	al_buf_free(&raw);
	free(ip);
	free(jp);
	free(path);
}

static void test_store__stale_temp_removed_at_open(void)
{
	char *path = tmp_path("stale"), *t1 = NULL, *t2 = NULL;
	al_store *s = open_store(path, 1, 0);

	al_store_free(s);
	t1 = al_sprintf("%s/blobs/.tmp/.tmp-deadbeefdeadbeef", path);
	t2 = al_sprintf("%s/.tmp-0011223344556677", path);
	CU_ASSERT_EQUAL(al_fs_write_atomic(t1, "partial", 7), 0);
	CU_ASSERT_EQUAL(al_fs_write_atomic(t2, "{\"sch", 5), 0);
	/* a reader never touches them */
	s = open_store(path, 0, 1);
	al_store_free(s);
	CU_ASSERT_EQUAL(al_fs_exists(t1), 1);
	s = open_store(path, 0, 0);
	CU_ASSERT_PTR_NOT_NULL(s);
	al_store_free(s);
	CU_ASSERT_EQUAL(al_fs_exists(t1), 0);
	CU_ASSERT_EQUAL(al_fs_exists(t2), 0);
	free(t1);
	free(t2);
	free(path);
}

struct seen {
	int n[6];
	char log[4096];
	size_t len;
};

static void on_check(void *ud, al_check_kind kind, const char *what, const char *detail)
{
	struct seen *s = ud;
	int k;

	if ((int)kind >= 0 && (int)kind < 6)
		s->n[kind]++;
	if (kind == AL_CHECK_OK)
		return;
	k = snprintf(s->log + s->len, sizeof(s->log) - s->len, "%d %s (%s)\n", (int)kind, what, detail);
	if (k > 0 && (size_t)k < sizeof(s->log) - s->len)
		s->len += (size_t)k;
}

static void test_store__check_reports_exactly_and_gc_removes(void)
{
	char *path = tmp_path("check"), *p = NULL, *sigdir = NULL;
	al_store *s = open_store(path, 1, 0);
	struct image a, b, c;
	al_check_result res = AL_CHECK_RESULT_INIT;
	struct seen seen;
	al_descriptor bad;
	al_digest junk, badm;
	char ds[AL_DIGEST_STRMAX];
	static const char badjson[] = "{\"schemaVersion\":2,\"config\":7}";

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&c, 0, sizeof(c));
	memset(&bad, 0, sizeof(bad));
	if (s == NULL || build_image(s, "a", "aaa\n", &a) < 0 || build_image(s, "b", "bbb\n", &b) < 0 ||
	    build_image(s, "c", "ccc\n", &c) < 0) {
		CU_FAIL("setup");
		goto out;
	}
	/* a clean store */
	memset(&seen, 0, sizeof(seen));
	CU_ASSERT_EQUAL(al_store_check(s, 0, on_check, &seen, &res), 0);
	CU_ASSERT_EQUAL(res.images, 3);
	CU_ASSERT_EQUAL(res.blobs_checked, 9);
	CU_ASSERT_EQUAL(res.missing + res.corrupt + res.invalid + res.unreferenced + res.removed, 0);
	CU_ASSERT_EQUAL(seen.n[AL_CHECK_OK], 9);

	/* damage: a's layer missing, b's config corrupt, one unreferenced
	 * blob, one unparsable manifest, one stale temp, a bad signature */
	p = al_store_blob_path(s, &a.layer);
	unlink(p);
	free(p);
	p = al_store_blob_path(s, &b.config);
	flip_byte(p, 2);
	free(p);
	CU_ASSERT_EQUAL(al_store_put_blob(s, (const uint8_t *)"orphan", 6, &junk), 0);
	CU_ASSERT_EQUAL(al_store_put_blob(s, (const uint8_t *)badjson, sizeof(badjson) - 1, &badm), 0);
	bad.media_type = al_strdup(AL_MT_OCI_MANIFEST);
	bad.digest = badm;
	bad.size = sizeof(badjson) - 1;
	CU_ASSERT_EQUAL(al_store_tag(s, "broken", &bad), 0);
	p = al_sprintf("%s/blobs/.tmp/.tmp-0000000000000001", path);
	al_fs_write_atomic(p, "part", 4);
	free(p);
	al_digest_hex(&a.manifest, ds);
	sigdir = al_sprintf("%s/signatures/sha256=%s", path, ds);
	al_fs_mkdir_p(sigdir, 0755);
	p = al_sprintf("%s/signature-1", sigdir);
	al_fs_write_atomic(p, "sig", 3);
	free(p);
	p = al_sprintf("%s/signature-2", sigdir);
	CU_ASSERT_EQUAL(symlink("/etc/passwd", p), 0);
	free(p);
	p = al_sprintf("%s/.tmp-00000000000000aa", sigdir);
	al_fs_write_atomic(p, "half a sig", 10);
	free(p);

	memset(&seen, 0, sizeof(seen));
	CU_ASSERT_EQUAL(al_store_check(s, 0, on_check, &seen, &res), 0);
	CU_ASSERT_EQUAL(res.images, 4);
	CU_ASSERT_EQUAL(res.missing, 1);
	CU_ASSERT_EQUAL(res.corrupt, 1);
	CU_ASSERT_EQUAL(res.unreferenced, 1);
	CU_ASSERT_EQUAL(res.invalid, 2); /* the manifest and the symlinked signature */
	CU_ASSERT_EQUAL(res.removed, 0);
	CU_ASSERT_EQUAL(seen.n[AL_CHECK_MISSING], 1);
	CU_ASSERT_EQUAL(seen.n[AL_CHECK_CORRUPT], 1);
	CU_ASSERT_EQUAL(seen.n[AL_CHECK_UNREFERENCED], 1);
	al_digest_str(&a.layer, ds);
	CU_ASSERT_PTR_NOT_NULL(strstr(seen.log, ds));
	al_digest_str(&b.config, ds);
	CU_ASSERT_PTR_NOT_NULL(strstr(seen.log, ds));
	al_digest_str(&junk, ds);
	CU_ASSERT_PTR_NOT_NULL(strstr(seen.log, ds));
	al_digest_str(&badm, ds);
	CU_ASSERT_PTR_NOT_NULL(strstr(seen.log, ds));
	CU_ASSERT_PTR_NOT_NULL(strstr(seen.log, "signature-2"));
	/* the quick mode sees the size change only: nothing here */
	CU_ASSERT_EQUAL(al_store_check(s, AL_STORE_CHECK_QUICK, NULL, NULL, &res), 0);
	CU_ASSERT_EQUAL(res.corrupt, 0);
	CU_ASSERT_EQUAL(res.missing, 1);

	/* gc: the corrupt blob, the orphan and the two temp files go */
	memset(&seen, 0, sizeof(seen));
	CU_ASSERT_EQUAL(al_store_check(s, AL_STORE_CHECK_GC, on_check, &seen, &res), 0);
	CU_ASSERT_EQUAL(res.removed, 4);
	CU_ASSERT_EQUAL(seen.n[AL_CHECK_REMOVED], 4);
	CU_ASSERT_EQUAL(al_store_has_blob(s, &junk, NULL), 0);
	CU_ASSERT_EQUAL(al_store_has_blob(s, &b.config, NULL), 0);
	CU_ASSERT_EQUAL(al_store_has_blob(s, &c.layer, NULL), 1);
	/* afterwards: the corrupt blob is now missing, so a rerun refetches it */
	CU_ASSERT_EQUAL(al_store_check(s, 0, NULL, NULL, &res), 0);
	CU_ASSERT_EQUAL(res.missing, 2);
	CU_ASSERT_EQUAL(res.corrupt, 0);
	CU_ASSERT_EQUAL(res.unreferenced, 0);
	CU_ASSERT_EQUAL(res.removed, 0);
	CU_ASSERT_EQUAL(res.blobs_checked, 8); /* 4 manifests, 2 configs, 2 layers */
out:
	al_store_free(s);
	al_descriptor_clear(&a.desc);
	al_descriptor_clear(&b.desc);
	al_descriptor_clear(&c.desc);
	al_descriptor_clear(&bad);
	free(sigdir);
	free(path);
}

/* Run argv with stdout to outfile; the exit status, or -1. */
static int run(const char *const argv[], const char *outfile)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open(outfile, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd >= 0) {
			dup2(fd, 1);
			close(fd);
		}
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static void test_store__skopeo_reads_and_writes_layouts(void)
{
	char *path = tmp_path("skopeo"), *copy = tmp_path("skopeo-copy"), *out = tmp_path("skopeo.out");
	char *src = NULL, *dst = NULL, *cpy = NULL;
	char ds[AL_DIGEST_STRMAX];
	al_store *s = NULL;
	al_buf b = AL_BUF_INIT(1 << 20);
	struct image img, other;
	al_check_result res = AL_CHECK_RESULT_INIT;
	al_store_image found;

	memset(&img, 0, sizeof(img));
	memset(&other, 0, sizeof(other));
	memset(&found, 0, sizeof(found));
	if (access("/usr/bin/skopeo", X_OK) != 0) {
		printf("\nskopeo is not installed: skipped\n");
		goto out;
	}
	s = open_store(path, 1, 0);
	if (s == NULL || build_image(s, NAME1, "skopeo\n", &img) < 0 || build_image(s, "other", "o\n", &other) < 0) {
		CU_FAIL("setup");
		goto out;
	}
	al_store_free(s);
	s = NULL;
	src = al_sprintf("oci:%s:%s", path, NAME1);
	{
		const char *argv[] = {"skopeo", "inspect", src, NULL};

		CU_ASSERT_EQUAL(run(argv, out), 0);
	}
	CU_ASSERT_EQUAL(al_fs_read_file(out, &b), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_buf_cstr(&b), al_digest_str(&img.manifest, ds)));
	CU_ASSERT_PTR_NOT_NULL(strstr(al_buf_cstr(&b), al_digest_str(&img.layer, ds)));

	/* a layout skopeo writes opens as a store and checks clean */
	dst = al_sprintf("oci:%s:copied/name:1", copy);
	{
		const char *argv[] = {"skopeo", "--insecure-policy", "copy", "-q", src, dst, NULL};

		CU_ASSERT_EQUAL(run(argv, out), 0);
	}
	s = open_store(copy, 0, 0);
	CU_ASSERT_PTR_NOT_NULL(s);
	if (s != NULL) {
		CU_ASSERT_EQUAL(al_store_find(s, "copied/name:1", &found), 0);
		CU_ASSERT_EQUAL(al_store_check(s, 0, NULL, NULL, &res), 0);
		CU_ASSERT_EQUAL(res.images, 1);
		CU_ASSERT_EQUAL(res.blobs_checked, 3);
		CU_ASSERT_EQUAL(res.missing + res.corrupt + res.invalid + res.unreferenced, 0);
		/* and skopeo reads it back after we tagged into it */
		CU_ASSERT_EQUAL(al_store_tag(s, "again", &found.desc), 0);
		al_store_free(s);
		s = NULL;
		cpy = al_sprintf("oci:%s:again", copy);
		{
			const char *argv[] = {"skopeo", "inspect", cpy, NULL};

			CU_ASSERT_EQUAL(run(argv, out), 0);
		}
	}
out:
	al_store_image_clear(&found);
	al_store_free(s);
	al_descriptor_clear(&img.desc);
	al_descriptor_clear(&other.desc);
	al_buf_free(&b);
	free(src);
	free(dst);
	free(cpy);
	free(out);
	free(copy);
	free(path);
}

struct worker {
	al_store *s;
	int id;
	int rc;
};

static void *worker_main(void *ud)
{
	struct worker *w = ud;
	char name[32], content[32];
	struct image img;
	int i;

	w->rc = 0;
	for (i = 0; i < 5 && w->rc == 0; i++) {
		snprintf(name, sizeof(name), "t%d-%d", w->id, i);
		snprintf(content, sizeof(content), "%d/%d\n", w->id, i);
		w->rc = build_image(w->s, name, content, &img);
		al_descriptor_clear(&img.desc);
	}
	return NULL;
}

static void test_store__threads_write_and_tag_concurrently(void)
{
	char *path = tmp_path("threads");
	al_store *s = open_store(path, 1, 0);
	struct worker w[4];
	pthread_t th[4];
	al_check_result res = AL_CHECK_RESULT_INIT;
	al_store_image *imgs = NULL;
	size_t n = 0;
	int i, started = 0;

	if (s == NULL) {
		CU_FAIL("no store");
		free(path);
		return;
	}
	for (i = 0; i < 4; i++) {
		w[i].s = s;
		w[i].id = i;
		w[i].rc = -1;
		if (pthread_create(&th[i], NULL, worker_main, &w[i]) == 0)
			started++;
	}
	for (i = 0; i < started; i++) {
		pthread_join(th[i], NULL);
		CU_ASSERT_EQUAL(w[i].rc, 0);
	}
	CU_ASSERT_EQUAL(started, 4);
	al_store_free(s);
	s = open_store(path, 0, 1);
	if (s != NULL) {
		CU_ASSERT_EQUAL(al_store_list(s, &imgs, &n), 0);
		CU_ASSERT_EQUAL(n, 20);
		al_store_images_free(imgs, n);
		CU_ASSERT_EQUAL(al_store_check(s, 0, NULL, NULL, &res), 0);
		CU_ASSERT_EQUAL(res.blobs_checked, 60);
		CU_ASSERT_EQUAL(res.missing + res.corrupt + res.invalid + res.unreferenced, 0);
	}
	al_store_free(s);
	free(path);
}

/* Counts findings of one kind whose detail contains a string. */
typedef struct find_ctx {
	al_check_kind kind;
	const char *needle;
	int hits;
} find_ctx;

static void on_find(void *ud, al_check_kind kind, const char *what,
                    const char *detail)
{
	find_ctx *c = ud;

	(void)what;
	if (kind == c->kind && detail != NULL && strstr(detail, c->needle))
		c->hits++;
}

/* A release recorded in releases.json is a root: gc keeps it without an
 * index name, and its missing manifest is reported naming it. An index
 * entry that is not a manifest is invalid. */
static void test_store__recorded_release_is_a_root(void)
{
	char *dir = al_path_join(al_test_tmpdir(), "roots");
	al_store_opts so = {.create = 1};
	al_store *s = NULL;
	al_digest md, cd, ld;
	al_descriptor d;
	al_check_result res = AL_CHECK_RESULT_INIT;
	find_ctx fc;
	char buf[512], ds[AL_DIGEST_STRMAX];
	json_t *rel;
	char *path = NULL;
	const char *cfg = "{\"architecture\":\"amd64\",\"os\":\"linux\"}";
	const char *layer = "layer bytes";
	int n;

	CU_ASSERT_EQUAL(al_store_open(&s, dir, &so), 0);
	CU_ASSERT_EQUAL(al_store_put_blob(s, (const uint8_t *)cfg, strlen(cfg), &cd), 0);
	CU_ASSERT_EQUAL(al_store_put_blob(s, (const uint8_t *)layer, strlen(layer), &ld), 0);
	{
		char cs[AL_DIGEST_STRMAX], ls[AL_DIGEST_STRMAX];
		n = snprintf(buf, sizeof(buf),
		             "{\"schemaVersion\":2,\"mediaType\":\"%s\","
		             "\"config\":{\"mediaType\":\"application/vnd.oci.image.config.v1+json\",\"digest\":\"%s\",\"size\":%zu},"
		             "\"layers\":[{\"mediaType\":\"application/vnd.oci.image.layer.v1.tar\",\"digest\":\"%s\",\"size\":%zu}]}",
		             AL_MT_OCI_MANIFEST, al_digest_str(&cd, cs), strlen(cfg),
		             al_digest_str(&ld, ls), strlen(layer));
	}
	CU_ASSERT(n > 0 && (size_t)n < sizeof(buf));
	CU_ASSERT_EQUAL(al_store_put_blob(s, (const uint8_t *)buf, (size_t)n, &md), 0);
	al_digest_str(&md, ds);
	rel = json_pack("{s:[{s:s,s:s},{s:s}]}", "releases", "version", "9.9.9",
	                "digest", ds, "version", "no digest: nothing to check");
	CU_ASSERT_EQUAL(al_store_releases_save(s, rel), 0);
	json_decref(rel);
	/* no index entry at all: gc keeps the release */
	CU_ASSERT_EQUAL(al_store_check(s, AL_STORE_CHECK_GC, NULL, NULL, &res), 0);
	CU_ASSERT_EQUAL(res.removed, 0);
	CU_ASSERT_EQUAL(res.unreferenced + res.missing + res.invalid, 0);
	CU_ASSERT_EQUAL(res.blobs_checked, 3);
	CU_ASSERT_EQUAL(al_store_has_blob(s, &md, NULL), 1);
	CU_ASSERT_EQUAL(al_store_has_blob(s, &ld, NULL), 1);
	/* a layer named in index.json is not an image */
	memset(&d, 0, sizeof(d));
	d.digest = ld;
	d.size = strlen(layer);
	d.media_type = (char *)"application/vnd.oci.image.layer.v1.tar";
	CU_ASSERT_EQUAL(al_store_tag(s, "a/layer:x", &d), 0);
	fc.kind = AL_CHECK_INVALID;
	fc.needle = "index.json entry 'a/layer:x' has media type";
	fc.hits = 0;
	memset(&res, 0, sizeof(res));
	CU_ASSERT_EQUAL(al_store_check(s, 0, on_find, &fc, &res), 0);
	CU_ASSERT_EQUAL(res.invalid, 1);
	CU_ASSERT_EQUAL(fc.hits, 1);
	CU_ASSERT_EQUAL(al_store_untag(s, "a/layer:x"), 0);
	/* a record naming the release's config (met first as a config) */
	{
		char cs[AL_DIGEST_STRMAX];
		rel = json_pack("{s:[{s:s,s:s},{s:s,s:s}]}", "releases",
		                "version", "9.9.9", "digest", ds, "version",
		                "8.8.8", "digest", al_digest_str(&cd, cs));
		CU_ASSERT_EQUAL(al_store_releases_save(s, rel), 0);
		json_decref(rel);
	}
	fc.kind = AL_CHECK_INVALID;
	fc.needle = "referenced by 'release 8.8.8";
	fc.hits = 0;
	memset(&res, 0, sizeof(res));
	CU_ASSERT_EQUAL(al_store_check(s, 0, on_find, &fc, &res), 0);
	CU_ASSERT_EQUAL(res.invalid, 1);
	CU_ASSERT_EQUAL(fc.hits, 1);
	/* the release manifest gone: missing, naming the release */
	path = al_store_blob_path(s, &md);
	CU_ASSERT_EQUAL(unlink(path), 0);
	fc.kind = AL_CHECK_MISSING;
	fc.needle = "manifest of release 9.9.9";
	fc.hits = 0;
	memset(&res, 0, sizeof(res));
	CU_ASSERT_EQUAL(al_store_check(s, 0, on_find, &fc, &res), 0);
	CU_ASSERT_EQUAL(res.missing, 1);
	CU_ASSERT_EQUAL(fc.hits, 1);
	/* and the config record, now walked first, is no manifest either */
	CU_ASSERT_EQUAL(res.invalid, 1);
	free(path);
	al_store_free(s);
	free(dir);
}

static char *read_text(const char *path)
{
	al_buf b = AL_BUF_INIT(1 << 20);

	if (al_fs_read_file(path, &b) < 0 || al_buf_puts(&b, "") < 0) {
		al_buf_free(&b);
		return NULL;
	}
	return al_buf_detach(&b, NULL);
}

static const char REL_A[] = "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

static void test_store__release_records_typed(void)
{
	char *path = tmp_path("typed-releases");
	al_store *s = open_store(path, 1, 0);
	al_store_release r, got, *list = NULL;
	char c_stable[] = "stable-4.14", c_fast[] = "fast-4.14";
	char *chans1[] = {c_stable}, *chans2[] = {c_fast, c_stable};
	char vb[] = "0123456789ABCDEF0123456789ABCDEF01234567";
	char *txt = NULL, *rp = NULL;
	size_t n = 0;
	int kept = -1;

	if (s == NULL) {
		CU_FAIL("no store");
		goto out;
	}
	memset(&r, 0, sizeof(r));
	CU_ASSERT_EQUAL(al_store_releases_list(s, &list, &n), 0);
	CU_ASSERT_EQUAL(n, 0);
	al_store_releases_free(list, n);
	/* no digest: refused */
	CU_ASSERT_EQUAL(al_store_release_put(s, &r, 0, NULL), AL_EINVAL);
	CU_ASSERT_EQUAL(al_digest_parse_str(&r.digest, REL_A), 0);
	r.has_digest = 1;
	r.components = -1;
	r.verified = AL_STORE_UNCHECKED;
	/* channels of a release not recorded: AL_ENOTFOUND, nothing written */
	r.channels = chans1;
	r.nchannels = 1;
	CU_ASSERT_EQUAL(al_store_release_put(s, &r, AL_STORE_RELEASE_EXISTING, NULL), AL_ENOTFOUND);
	r.channels = NULL;
	r.nchannels = 0;
	r.version = (char *)"4.14.1";
	r.source = (char *)"quay.io/a/release:4.14.1";
	r.components = 3;
	r.verified = AL_STORE_VERIFIED;
	r.verified_by = vb;
	CU_ASSERT_EQUAL(al_store_release_put(s, &r, 0, &kept), 0);
	CU_ASSERT_EQUAL(kept, 0);
	/* a later unverified run keeps the verification */
	r.verified = AL_STORE_UNVERIFIED;
	r.verified_by = NULL;
	r.components = 4;
	CU_ASSERT_EQUAL(al_store_release_put(s, &r, 0, &kept), 0);
	CU_ASSERT_EQUAL(kept, 1);
	/* channels are a union */
	r.version = NULL;
	r.source = NULL;
	r.components = -1;
	r.verified = AL_STORE_UNCHECKED;
	r.channels = chans1;
	r.nchannels = 1;
	CU_ASSERT_EQUAL(al_store_release_put(s, &r, AL_STORE_RELEASE_EXISTING, NULL), 0);
	r.channels = chans2;
	r.nchannels = 2;
	CU_ASSERT_EQUAL(al_store_release_put(s, &r, AL_STORE_RELEASE_EXISTING, NULL), 0);
	/* by version and by digest */
	CU_ASSERT_EQUAL(al_store_release_find(s, "4.14.1", &got), 0);
	CU_ASSERT_EQUAL(got.verified, AL_STORE_VERIFIED);
	CU_ASSERT_STRING_EQUAL(got.verified_by != NULL ? got.verified_by : "", vb);
	CU_ASSERT_EQUAL(got.components, 4);
	CU_ASSERT_STRING_EQUAL(got.source != NULL ? got.source : "", "quay.io/a/release:4.14.1");
	CU_ASSERT_EQUAL(got.nchannels, 2);
	CU_ASSERT(got.has_digest);
	al_store_release_clear(&got);
	CU_ASSERT_EQUAL(al_store_release_find(s, REL_A, &got), 0);
	CU_ASSERT_STRING_EQUAL(got.version != NULL ? got.version : "", "4.14.1");
	al_store_release_clear(&got);
	CU_ASSERT_EQUAL(al_store_release_find(s, "4.99.0", &got), AL_ENOTFOUND);
	CU_ASSERT(strstr(al_error_message(), "4.99.0") != NULL);
	/* on disk: one record, the names docs/store.md gives */
	rp = al_sprintf("%s/airlock/releases.json", path);
	txt = rp != NULL ? read_text(rp) : NULL;
	CU_ASSERT(txt != NULL && strstr(txt, "\"verifiedBy\": \"0123456789ABCDEF") != NULL);
	CU_ASSERT(txt != NULL && strstr(txt, "\"channels\"") != NULL);
	CU_ASSERT(txt != NULL && strstr(txt, "fast-4.14") != NULL);
	CU_ASSERT(txt != NULL && strstr(strstr(txt, REL_A) + 1, REL_A) == NULL);
out:
	free(txt);
	free(rp);
	al_store_free(s);
	free(path);
}

static void test_store__pack_records_typed(void)
{
	char *path = tmp_path("typed-packs");
	al_store *s = open_store(path, 1, 0);
	al_store_pack *packs = NULL;
	al_digest d, other;
	size_t n = 0;

	if (s == NULL) {
		CU_FAIL("no store");
		goto out;
	}
	CU_ASSERT_EQUAL(al_store_packs_list(s, &packs, &n), 0);
	CU_ASSERT_EQUAL(n, 0);
	al_store_packs_free(packs, n);
	packs = NULL;
	CU_ASSERT_EQUAL(al_test_sh("mkdir -p '%s/airlock/packs' && "
	                           "printf '%%s' '{\"airlockPackRecord\":1,\"id\":\"p2\",\"created\":\"2026-01-01T00:00:00Z\",\"sequence\":7,\"base\":\"p1\",\"volumes\":1,\"blobs\":[],\"signatures\":[{\"path\":\"signatures/sha256=%s/signature-1\",\"sha256\":\"00\"}]}' > '%s/airlock/packs/p2.json' && "
	                           "printf '%%s' '{\"airlockPackRecord\":1,\"id\":\"p1\",\"created\":\"2026-01-01T00:00:00Z\",\"sequence\":6,\"base\":null,\"volumes\":2,\"blobs\":[\"%s\"],\"signatures\":[]}' > '%s/airlock/packs/p1.json'",
	                           path, REL_A + 7, path, REL_A, path), 0);
	CU_ASSERT_EQUAL(al_digest_parse_str(&d, REL_A), 0);
	CU_ASSERT_EQUAL(al_digest_parse_str(&other, "sha256:0000000000000000000000000000000000000000000000000000000000000000"), 0);
	CU_ASSERT_EQUAL(al_store_packs_list(s, &packs, &n), 0);
	CU_ASSERT_EQUAL(n, 2);
	if (n == 2) {
		CU_ASSERT_STRING_EQUAL(packs[0].id, "p1");
		CU_ASSERT_PTR_NULL(packs[0].base);
		CU_ASSERT_EQUAL(packs[0].volumes, 2);
		CU_ASSERT_STRING_EQUAL(packs[1].base != NULL ? packs[1].base : "", "p1");
		CU_ASSERT_EQUAL(packs[1].sequence, 7);
		CU_ASSERT_EQUAL(al_store_pack_carries(&packs[0], &d), 1);
		CU_ASSERT_EQUAL(al_store_pack_carries(&packs[1], &d), 1);
		CU_ASSERT_EQUAL(al_store_pack_carries(&packs[0], &other), 0);
	}
	al_store_packs_free(packs, n);
	/* a record the store writes reads back the same */
	{
		char id[] = "p0", cr[] = "2026-01-02T00:00:00Z", bl[] = "sha256:00";
		char sp[] = "signatures/sha256=00/signature-1", sh[] = "ab";
		char *blv[] = {bl}, *spv[] = {sp}, *shv[] = {sh};
		al_store_pack w, *back = NULL;
		size_t nb = 0;

		memset(&w, 0, sizeof(w));
		w.id = id;
		w.created = cr;
		w.sequence = 5;
		w.volumes = 3;
		w.blobs = blv;
		w.nblobs = 1;
		w.signatures = spv;
		w.signature_sha256 = shv;
		w.nsignatures = 1;
		CU_ASSERT_EQUAL(al_store_pack_put(s, &w), 0);
		w.id = sp;
		CU_ASSERT_EQUAL(al_store_pack_put(s, &w), AL_EINVAL);
		CU_ASSERT_EQUAL(al_store_packs_list(s, &back, &nb), 0);
		CU_ASSERT_EQUAL(nb, 3);
		if (nb == 3) {
			CU_ASSERT_STRING_EQUAL(back[0].id, "p0");
			CU_ASSERT_EQUAL(back[0].sequence, 5);
			CU_ASSERT_EQUAL(back[0].volumes, 3);
			CU_ASSERT_PTR_NULL(back[0].base);
			CU_ASSERT(back[0].nblobs == 1 && strcmp(back[0].blobs[0], bl) == 0);
			CU_ASSERT(back[0].nsignatures == 1 && strcmp(back[0].signature_sha256[0], "ab") == 0);
		}
		al_store_packs_free(back, nb);
	}
	/* a damaged record is named */
	CU_ASSERT_EQUAL(al_test_sh("printf '{' > '%s/airlock/packs/p3.json'", path), 0);
	CU_ASSERT_EQUAL(al_store_packs_list(s, &packs, &n), AL_EVERIFY);
	CU_ASSERT(strstr(al_error_message(), "p3.json") != NULL);
out:
	al_store_free(s);
	free(path);
}

static void test_store__owns_signature_layout(void)
{
	char *path = tmp_path("sig-layout");
	al_store *s = open_store(path, 1, 0), *ro = NULL;
	al_digest d;
	char *dir = NULL, *root = NULL, *want = NULL;
	unsigned k = 0;

	if (s == NULL) {
		CU_FAIL("no store");
		goto out;
	}
	CU_ASSERT_EQUAL(al_digest_parse_str(&d, REL_A), 0);
	dir = al_store_signature_dir(s, &d);
	root = al_store_signature_dir(s, NULL);
	want = al_sprintf("%s/signatures/sha256=%s", path, REL_A + 7);
	CU_ASSERT(dir != NULL && want != NULL && strcmp(dir, want) == 0);
	CU_ASSERT(root != NULL && al_str_endswith(root, "/signatures"));
	CU_ASSERT_EQUAL(al_store_signature_add(s, &d, (const uint8_t *)"one", 3, 16, 2, &k), 0);
	CU_ASSERT_EQUAL(k, 1);
	CU_ASSERT_EQUAL(al_store_signature_add(s, &d, (const uint8_t *)"two", 3, 16, 2, &k), 0);
	CU_ASSERT_EQUAL(k, 2);
	/* the same bytes keep their number, a third is over the limit */
	CU_ASSERT_EQUAL(al_store_signature_add(s, &d, (const uint8_t *)"one", 3, 16, 2, &k), 0);
	CU_ASSERT_EQUAL(k, 1);
	CU_ASSERT_EQUAL(al_store_signature_add(s, &d, (const uint8_t *)"six", 3, 16, 2, &k), AL_ELIMIT);
	CU_ASSERT_EQUAL(al_test_sh("test \"$(cat '%s/signature-2')\" = two", dir), 0);
	al_store_free(s);
	s = NULL;
	ro = open_store(path, 0, 1);
	CU_ASSERT(ro != NULL && al_store_signature_add(ro, &d, (const uint8_t *)"x", 1, 16, 4, NULL) == AL_EINVAL);
out:
	al_store_free(ro);
	al_store_free(s);
	free(want);
	free(root);
	free(dir);
	free(path);
}

/* Partial downloads: a writer begun with al_store_blob_resume keeps what
 * it wrote (1 MiB or more) in blobs/.partial on abort, across a reopen;
 * the next one continues after it and verifies the whole blob; bytes that
 * do not verify are removed at commit; small blobs keep nothing; a
 * partial held by another writer is not shared; check lists partials and
 * gc removes them. */
static void test_store__resume_partial_download(void)
{
	const size_t len = 3u << 20, cut = 2u << 20;
	char *path = tmp_path("resume");
	char *pdir = tmp_path("resume/blobs/.partial");
	uint8_t *data = malloc(len), *junk = malloc(cut);
	al_store *s = open_store(path, 1, 0);
	al_blob_writer *w = NULL, *w2 = NULL;
	al_check_result res = AL_CHECK_RESULT_INIT;
	al_digest d, small;
	uint64_t off = 99, off2 = 99;
	size_t i;

	if (s == NULL || data == NULL || junk == NULL) {
		CU_FAIL("setup");
		goto out;
	}
	for (i = 0; i < len; i++)
		data[i] = (uint8_t)(i * 2654435761u >> 13);
	for (i = 0; i < cut; i++)
		junk[i] = (uint8_t)~data[i];
	al_digest_bytes(&d, AL_DIGEST_SHA256, data, len);

	/* interrupted at 2 of 3 MiB: kept, and survives a reopen */
	CU_ASSERT_EQUAL(al_store_blob_resume(s, &d, len, &w, &off), 0);
	CU_ASSERT_EQUAL(off, 0);
	CU_ASSERT_EQUAL(al_blob_writer_write(w, data, cut), 0);
	al_blob_writer_abort(w);
	CU_ASSERT_EQUAL(count_dir(pdir), 1);
	al_store_free(s);
	s = open_store(path, 0, 0);
	if (s == NULL) {
		CU_FAIL("reopen");
		goto out;
	}
	CU_ASSERT_EQUAL(count_dir(pdir), 1);
	CU_ASSERT_EQUAL(al_store_check(s, 0, NULL, NULL, &res), 0);
	CU_ASSERT_EQUAL(res.unreferenced, 1);

	/* a second writer while the first holds it: starts afresh */
	CU_ASSERT_EQUAL(al_store_blob_resume(s, &d, len, &w, &off), 0);
	CU_ASSERT_EQUAL(off, cut);
	CU_ASSERT_EQUAL(al_store_blob_resume(s, &d, len, &w2, &off2), 0);
	CU_ASSERT_EQUAL(off2, 0);
	al_blob_writer_abort(w2);
	/* the first continues and completes */
	CU_ASSERT_EQUAL(al_blob_writer_write(w, data + cut, len - cut), 0);
	CU_ASSERT_EQUAL(al_blob_writer_commit(w), 0);
	CU_ASSERT_EQUAL(al_store_has_blob(s, &d, NULL), 1);
	CU_ASSERT_EQUAL(count_dir(pdir), 0);

	/* wrong partial bytes: continued, refused at commit, removed */
	{
		char *bp = al_store_blob_path(s, &d);
		CU_ASSERT_EQUAL(bp != NULL && unlink(bp) == 0, 1);
		free(bp);
	}
	CU_ASSERT_EQUAL(al_store_blob_resume(s, &d, len, &w, &off), 0);
	CU_ASSERT_EQUAL(al_blob_writer_write(w, junk, cut), 0);
	al_blob_writer_abort(w);
	CU_ASSERT_EQUAL(al_store_blob_resume(s, &d, len, &w, &off), 0);
	CU_ASSERT_EQUAL(off, cut);
	CU_ASSERT_EQUAL(al_blob_writer_write(w, data + cut, len - cut), 0);
	CU_ASSERT_EQUAL(al_blob_writer_commit(w), AL_EVERIFY);
	CU_ASSERT_EQUAL(al_store_has_blob(s, &d, NULL), 0);
	CU_ASSERT_EQUAL(count_dir(pdir), 0);
	CU_ASSERT_EQUAL(al_store_blob_resume(s, &d, len, &w, &off), 0);
	CU_ASSERT_EQUAL(off, 0);
	al_blob_writer_abort(w);

	/* a reset drops what was kept */
	CU_ASSERT_EQUAL(al_store_blob_resume(s, &d, len, &w, &off), 0);
	CU_ASSERT_EQUAL(al_blob_writer_write(w, data, cut), 0);
	CU_ASSERT_EQUAL(al_blob_writer_reset(w), 0);
	al_blob_writer_abort(w);
	CU_ASSERT_EQUAL(count_dir(pdir), 0);

	/* under 1 MiB: nothing kept */
	al_digest_bytes(&small, AL_DIGEST_SHA256, data, 4096);
	CU_ASSERT_EQUAL(al_store_blob_resume(s, &small, 4096, &w, &off), 0);
	CU_ASSERT_EQUAL(off, 0);
	CU_ASSERT_EQUAL(al_blob_writer_write(w, data, 100), 0);
	al_blob_writer_abort(w);
	CU_ASSERT_EQUAL(count_dir(pdir), 0);

	/* gc removes a partial */
	CU_ASSERT_EQUAL(al_store_blob_resume(s, &d, len, &w, &off), 0);
	CU_ASSERT_EQUAL(al_blob_writer_write(w, data, cut), 0);
	al_blob_writer_abort(w);
	CU_ASSERT_EQUAL(count_dir(pdir), 1);
	memset(&res, 0, sizeof(res));
	CU_ASSERT_EQUAL(al_store_check(s, AL_STORE_CHECK_GC, NULL, NULL, &res),
	                0);
	CU_ASSERT(res.removed >= 1);
	CU_ASSERT_EQUAL(count_dir(pdir), 0);
out:
	al_store_free(s);
	free(data);
	free(junk);
	free(pdir);
	free(path);
}

/* What is kept to resume: al_store_kept_list lists a partial download
 * (with its digest, size, whether a writer holds it) and an upload session
 * (where to, how far); gc removes what nobody holds and keeps the partial
 * a live writer holds and a session file whose flock is held. */
static void test_store__kept_listed_and_gc_keeps_held(void)
{
	const size_t len = 2u << 20, cut = 1u << 20;
	char *path = tmp_path("kept");
	char *up = tmp_path("kept/airlock/uploads");
	char *sess = tmp_path("kept/airlock/uploads/0123abcd.json");
	char *held = tmp_path("kept/airlock/uploads/4567cdef.json");
	uint8_t *data = malloc(len);
	al_store *s = open_store(path, 1, 0);
	al_blob_writer *w = NULL;
	al_store_kept *k = NULL;
	al_check_result res = AL_CHECK_RESULT_INIT;
	char ds[AL_DIGEST_STRMAX];
	size_t n = 0, i, downloads = 0, uploads = 0, busy = 0;
	uint64_t off = 0;
	int fd = -1;
	al_digest d;
	static const char doc[] =
	    "{\"airlockUpload\": 1, \"registry\": \"r.example:5000\", "
	    "\"repository\": \"a/b\", \"digest\": \"sha256:"
	    "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc\""
	    ", \"size\": 100, \"location\": \"http://r/x\", \"offset\": 40}\n";

	if (s == NULL || data == NULL || al_fs_mkdir_p(up, 0700) < 0 ||
	    al_fs_write_atomic(sess, doc, strlen(doc)) < 0 ||
	    al_fs_write_atomic(held, doc, strlen(doc)) < 0) {
		CU_FAIL("setup");
		goto out;
	}
	for (i = 0; i < len; i++)
		data[i] = (uint8_t)(i * 40503u >> 7);
	al_digest_bytes(&d, AL_DIGEST_SHA256, data, len);
	/* a writer holds a partial of 1 MiB */
	CU_ASSERT_EQUAL(al_store_blob_resume(s, &d, len, &w, &off), 0);
	CU_ASSERT_EQUAL(al_blob_writer_write(w, data, cut), 0);
	/* a push holds the second session */
	fd = open(held, O_RDONLY | O_CLOEXEC);
	CU_ASSERT(fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0);

	CU_ASSERT_EQUAL(al_store_kept_list(s, &k, &n), 0);
	CU_ASSERT_EQUAL(n, 3);
	for (i = 0; i < n; i++) {
		busy += k[i].in_use != 0;
		if (k[i].kind == AL_STORE_KEPT_DOWNLOAD) {
			downloads++;
			CU_ASSERT_STRING_EQUAL(k[i].digest,
			                       al_digest_str(&d, ds));
			CU_ASSERT_EQUAL(k[i].in_use, 1);
			continue;
		}
		uploads++;
		CU_ASSERT_STRING_EQUAL(k[i].target, "r.example:5000/a/b");
		CU_ASSERT_EQUAL(k[i].done, 40);
		CU_ASSERT_EQUAL(k[i].size, 100);
		CU_ASSERT_EQUAL(k[i].bytes, strlen(doc));
		CU_ASSERT_EQUAL(k[i].in_use, strcmp(k[i].path, held) == 0);
	}
	CU_ASSERT_EQUAL(downloads, 1);
	CU_ASSERT_EQUAL(uploads, 2);
	CU_ASSERT_EQUAL(busy, 2);
	al_store_kept_free(k, n);
	k = NULL;

	/* gc: the free session goes, the held ones stay */
	memset(&res, 0, sizeof(res));
	CU_ASSERT_EQUAL(al_store_check(s, AL_STORE_CHECK_GC, NULL, NULL, &res),
	                0);
	CU_ASSERT_EQUAL(res.removed, 1);
	CU_ASSERT_EQUAL(al_fs_exists(sess), 0);
	CU_ASSERT_EQUAL(al_fs_exists(held), 1);
	CU_ASSERT_EQUAL(al_store_kept_list(s, &k, &n), 0);
	CU_ASSERT_EQUAL(n, 2);
	al_store_kept_free(k, n);
	k = NULL;

	/* released: the next gc removes both */
	al_blob_writer_abort(w);
	w = NULL;
	close(fd);
	fd = -1;
	memset(&res, 0, sizeof(res));
	CU_ASSERT_EQUAL(al_store_check(s, AL_STORE_CHECK_GC, NULL, NULL, &res),
	                0);
	CU_ASSERT_EQUAL(res.removed, 2);
	CU_ASSERT_EQUAL(al_store_kept_list(s, &k, &n), 0);
	CU_ASSERT_EQUAL(n, 0);
out:
	al_store_kept_free(k, n);
	al_blob_writer_abort(w);
	if (fd >= 0)
		close(fd);
	al_store_free(s);
	free(data);
	free(held);
	free(sess);
	free(up);
	free(path);
}

int main(void)
{
	CU_TestInfo tests[] = {
		{"create_open_reopen", test_store__create_open_reopen},
		{"opts_version", test_store__opts_version},
		{"release_records_typed", test_store__release_records_typed},
		{"pack_records_typed", test_store__pack_records_typed},
		{"owns_signature_layout", test_store__owns_signature_layout},
		{"recorded_release_is_a_root", test_store__recorded_release_is_a_root},
		{"second_writable_open_is_locked", test_store__second_writable_open_is_locked},
		{"blob_writer_commit_mismatch_abort", test_store__blob_writer_commit_mismatch_abort},
		{"blob_writer_hash_worker_and_batch_commit", test_store__blob_writer_hash_worker_and_batch_commit},
		{"blob_writer_learns_digest", test_store__blob_writer_learns_digest},
		{"resume_partial_download", test_store__resume_partial_download},
		{"kept_listed_and_gc_keeps_held", test_store__kept_listed_and_gc_keeps_held},
		{"put_read_blob_detects_corruption", test_store__put_read_blob_detects_corruption},
		{"tag_untag_list_find_persist", test_store__tag_untag_list_find_persist},
		{"releases_load_save", test_store__releases_load_save},
		{"index_survives_kill9", test_store__index_survives_kill9},
		{"index_journal_replayed_after_kill", test_store__index_journal_replayed_after_kill},
		{"stale_temp_removed_at_open", test_store__stale_temp_removed_at_open},
		{"check_reports_exactly_and_gc_removes", test_store__check_reports_exactly_and_gc_removes},
		{"threads_write_and_tag_concurrently", test_store__threads_write_and_tag_concurrently},
		{"skopeo_reads_and_writes_layouts", test_store__skopeo_reads_and_writes_layouts},
		CU_TEST_INFO_NULL,
	};

	return al_test_run("store", tests);
}
