/* test_pack.c: pack / unpack / inventory / keygen: round trips, deltas, signatures, resumption, hostile and broken media. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>
#include <CUnit/CUnit.h>

#include "store_int.h"
#include "pack_int.h"
#include "airlock.h"
#include "json_int.h"
#include "airlock/pack.h"
#include "al_test.h"

#define SIG_HEX "c8ead4fb44ce4df49f7fbf5b6732fe3c1c394188ee933af8e3243c2f23447807"

static unsigned counter;

static char *fresh(const char *what)
{
	return al_sprintf("%s/%s-%u", al_test_tmpdir(), what, ++counter);
}

static int copy_file(const char *from, const char *to)
{
	al_buf b = AL_BUF_INIT(64 * AL_MIB);
	int rc = al_fs_read_file(from, &b);

	if (rc == 0)
		rc = al_fs_write_atomic(to, b.ptr != NULL ? b.ptr : (const uint8_t *)"", b.len);
	al_buf_free(&b);
	return rc;
}

/* Copy a directory tree of regular files. */
static int copy_tree(const char *from, const char *to)
{
	DIR *d = opendir(from);
	struct dirent *e;
	int rc = 0;

	if (d == NULL || al_fs_mkdir_p(to, 0755) < 0) {
		if (d != NULL)
			closedir(d);
		return -1;
	}
	while (rc == 0 && (e = readdir(d)) != NULL) {
		char *a, *b;
		struct stat st;
		if (e->d_name[0] == '.')
			continue;
		a = al_path_join(from, e->d_name);
		b = al_path_join(to, e->d_name);
		if (a == NULL || b == NULL || lstat(a, &st) != 0)
			rc = -1;
		else if (S_ISDIR(st.st_mode))
			rc = copy_tree(a, b);
		else
			rc = copy_file(a, b);
		free(a);
		free(b);
	}
	closedir(d);
	return rc;
}

static void fill_random(uint8_t *p, size_t n, unsigned *seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(rand_r(seed) >> 7);
}

/* Store an image (config, one random layer, manifest) and name it. */
static int add_image(al_store *s, const char *name, size_t layer_size, unsigned seed)
{
	uint8_t *layer = malloc(layer_size);
	char cfg[128], man[1024], ch[AL_DIGEST_STRMAX], lh[AL_DIGEST_STRMAX];
	al_digest cd, ld, md;
	al_descriptor desc;
	int rc = -1, n;

	if (layer == NULL)
		return -1;
	fill_random(layer, layer_size, &seed);
	n = snprintf(cfg, sizeof(cfg), "{\"architecture\":\"amd64\",\"os\":\"linux\",\"seed\":%u}", seed);
	if (al_store_put_blob(s, layer, layer_size, &ld) < 0 || al_store_put_blob(s, (uint8_t *)cfg, (size_t)n, &cd) < 0)
		goto out;
	n = snprintf(man, sizeof(man),
		     "{\"schemaVersion\":2,\"mediaType\":\"%s\",\"config\":{\"mediaType\":\"%s\",\"digest\":\"%s\",\"size\":%zu},"
		     "\"layers\":[{\"mediaType\":\"%s\",\"digest\":\"%s\",\"size\":%zu}]}",
		     AL_MT_OCI_MANIFEST, AL_MT_OCI_CONFIG, al_digest_str(&cd, ch), strlen(cfg), AL_MT_OCI_LAYER_GZIP,
		     al_digest_str(&ld, lh), layer_size);
	if (al_store_put_blob(s, (uint8_t *)man, (size_t)n, &md) < 0)
		goto out;
	memset(&desc, 0, sizeof(desc));
	desc.media_type = (char *)AL_MT_OCI_MANIFEST;
	desc.digest = md;
	desc.size = (uint64_t)n;
	rc = al_store_tag(s, name, &desc);
out:
	free(layer);
	return rc;
}

/* A string for assertions: never NULL. */
#define STR(s) ((s) != NULL ? (s) : "(null)")

static int write_text(const char *dir, const char *rel, const char *text)
{
	char *p = al_path_join(dir, rel), *d;
	int rc;

	if (p == NULL)
		return -1;
	d = al_strdup(p);
	*strrchr(d, '/') = '\0';
	rc = al_fs_mkdir_p(d, 0755);
	if (rc == 0)
		rc = al_fs_write_atomic(p, text, strlen(text));
	free(d);
	free(p);
	return rc;
}

/*
 * The source store: the sample layout, a release signature, and an image
 * with a 300 KB layer (larger than a 64 KiB volume, so it is split).
 */
static char *make_source(void)
{
	char *src = fresh("src"), *layout = al_sprintf("%s/samples/layout", al_test_source_dir());
	al_store *s = NULL;
	json_t *rel = json_pack("{s:[{s:s}]}", "releases", "version", "4.14.1");
	int ok;

	ok = copy_tree(layout, src) == 0 && al_store_open(&s, src, NULL) == 0 &&
	     al_store_releases_save(s, rel) == 0 &&
	     write_text(src, "signatures/sha256=" SIG_HEX "/signature-1", "not really a signature\n") == 0 &&
	     add_image(s, "quay.io/airlock-test/big:1", 300000, 7) == 0;
	al_store_free(s);
	json_decref(rel);
	free(layout);
	CU_ASSERT(ok);
	return src;
}

/* "relpath sha256\n" for every blob and signature of a store, sorted. */
static char *store_listing(const char *store)
{
	al_buf out = AL_BUF_INIT(16 * AL_MIB);
	const char *subs[] = {"blobs/sha256", "blobs/sha512", "signatures"};
	size_t k;

	for (k = 0; k < 3; k++) {
		char *cmd = al_sprintf("cd '%s' && find %s -type f 2>/dev/null | LC_ALL=C sort | xargs -r sha256sum", store,
				       subs[k]);
		FILE *f = popen(cmd, "r");
		char line[512];
		while (f != NULL && fgets(line, sizeof(line), f) != NULL)
			al_buf_puts(&out, line);
		if (f != NULL)
			pclose(f);
		free(cmd);
	}
	return al_buf_detach(&out, NULL);
}

/* The index as name=digest lines, in file order. */
static char *index_listing(const char *store)
{
	al_store *s = NULL;
	al_store_opts ro = {.readonly = 1};
	al_store_image *imgs = NULL;
	al_buf out = AL_BUF_INIT(AL_MIB);
	size_t n = 0, i;
	char d[AL_DIGEST_STRMAX];

	if (al_store_open(&s, store, &ro) == 0 && al_store_list(s, &imgs, &n) == 0)
		for (i = 0; i < n; i++)
			al_buf_printf(&out, "%s=%s\n", imgs[i].name, al_digest_str(&imgs[i].desc.digest, d));
	al_store_images_free(imgs, n);
	al_store_free(s);
	return al_buf_detach(&out, NULL);
}

static int index_empty(const char *store)
{
	char *l = index_listing(store);
	int e = l != NULL && l[0] == '\0';

	free(l);
	return e;
}

static int nothing_stored(const char *store)
{
	char *l = store_listing(store);
	int e = l != NULL && l[0] == '\0';

	free(l);
	return e && index_empty(store);
}

static int do_pack(const char *store, const char *out, uint64_t volsize, const char *since, const char *have,
		   const char *key, al_pack_result *res)
{
	al_store *s = NULL;
	al_pack_opts o = AL_PACK_OPTS_INIT;
	int rc;

	o.volume_size = volsize;
	o.since = since;
	o.have_path = have;
	o.sign_key = key;
	if ((rc = al_store_open(&s, store, NULL)) < 0)
		return rc;
	rc = al_pack_write(s, out, &o, res);
	al_store_free(s);
	return rc;
}

static int do_unpack(const char *store, const char *dir, const char *trust, al_unpack_result *res)
{
	al_store *s = NULL;
	al_store_opts so = {.create = 1};
	al_unpack_opts o = AL_UNPACK_OPTS_INIT;
	int rc;

	o.trust_key = trust;
	o.accept_untrusted = trust == NULL; /* as before the quarantine */
	if ((rc = al_store_open(&s, store, &so)) < 0)
		return rc;
	rc = al_pack_unpack(s, dir, &o, res);
	al_store_free(s);
	return rc;
}

static int store_clean(const char *store)
{
	al_store *s = NULL;
	al_store_opts ro = {.readonly = 1};
	al_check_result r = AL_CHECK_RESULT_INIT;
	int rc;

	if ((rc = al_store_open(&s, store, &ro)) == 0)
		rc = al_store_check(s, 0, NULL, NULL, &r);
	al_store_free(s);
	return rc == 0 && r.missing == 0 && r.corrupt == 0 && r.invalid == 0 && r.images > 0;
}

static char *vol_path(const char *dir, const char *id, unsigned n)
{
	return al_sprintf("%s/airlock-%s-%04u.tar", dir, id, n);
}

static char *man_path(const char *dir, const char *id)
{
	return al_sprintf("%s/airlock-%s.json", dir, id);
}

static uint64_t file_size(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 ? (uint64_t)st.st_size : 0;
}

static int same_stores(const char *a, const char *b)
{
	char *la = store_listing(a), *lb = store_listing(b), *ia = index_listing(a), *ib = index_listing(b);
	int same = la != NULL && lb != NULL && ia != NULL && ib != NULL && strcmp(la, lb) == 0 && strcmp(ia, ib) == 0 &&
		   strlen(la) > 0 && strlen(ia) > 0;

	if (!same)
		fprintf(stderr, "\n--- %s\n%s%s--- %s\n%s%s", a, ia ? ia : "", la ? la : "", b, ib ? ib : "", lb ? lb : "");
	free(la);
	free(lb);
	free(ia);
	free(ib);
	return same;
}

static void test_pack__round_trip_split_across_volumes(void)
{
	char *src = make_source(), *out = fresh("out"), *dst = fresh("dst"), *p;
	al_pack_result pr = AL_PACK_RESULT_INIT;
	al_unpack_result ur = AL_UNPACK_RESULT_INIT;
	unsigned v;

	CU_ASSERT_EQUAL(do_pack(src, out, 64 * AL_KIB, NULL, NULL, NULL, &pr), 0);
	CU_ASSERT(pr.volumes >= 5); /* 300 KB layer over 64 KiB volumes */
	for (v = 1; v <= pr.volumes; v++) {
		p = vol_path(out, pr.id, v);
		CU_ASSERT(file_size(p) > 0 && file_size(p) <= 64 * AL_KIB);
		free(p);
	}
	p = vol_path(out, pr.id, (unsigned)pr.volumes + 1);
	CU_ASSERT_EQUAL(al_fs_exists(p), 0);
	free(p);
	CU_ASSERT_EQUAL(do_unpack(dst, out, NULL, &ur), 0);
	CU_ASSERT_EQUAL(ur.complete, 1);
	CU_ASSERT_EQUAL(ur.nmissing, 0);
	CU_ASSERT_EQUAL(ur.images_tagged, 8);
	CU_ASSERT(same_stores(src, dst));
	CU_ASSERT(store_clean(dst));
	/* the far side records the import; a rerun is a no-op */
	al_unpack_result_clear(&ur);
	CU_ASSERT_EQUAL(do_unpack(dst, out, NULL, &ur), 0);
	CU_ASSERT_EQUAL(ur.already, 1);
	al_unpack_result_clear(&ur);
	free(src);
	free(out);
	free(dst);
}

static void test_pack__volume_size_below_minimum_is_refused(void)
{
	char *src = make_source(), *out = fresh("out");

	CU_ASSERT_EQUAL(do_pack(src, out, 4096, NULL, NULL, NULL, NULL), AL_EINVAL);
	CU_ASSERT_EQUAL(al_fs_exists(out), 0);
	free(src);
	free(out);
}

static void test_pack__volumes_in_any_order_over_several_runs(void)
{
	char *src = make_source(), *out = fresh("out"), *dst = fresh("dst"), *in = fresh("in"), *a, *b;
	al_pack_result pr = AL_PACK_RESULT_INIT;
	al_unpack_result ur = AL_UNPACK_RESULT_INIT;
	unsigned v;
	int rc;

	if ((do_pack(src, out, 64 * AL_KIB, NULL, NULL, NULL, &pr)) != 0) {
		CU_FAIL("do_pack(src, out, 64 * AL_KIB, NULL, NULL, NULL, &pr)");
		goto out;
	}
	CU_ASSERT_EQUAL(al_fs_mkdir_p(in, 0755), 0);
	/* first disk: the manifest and the last volume */
	a = man_path(out, pr.id);
	b = man_path(in, pr.id);
	CU_ASSERT_EQUAL(copy_file(a, b), 0);
	free(a);
	free(b);
	for (v = (unsigned)pr.volumes; v >= 1; v--) {
		a = vol_path(out, pr.id, v);
		b = vol_path(in, pr.id, v);
		CU_ASSERT_EQUAL(rename(a, b), 0);
		free(a);
		free(b);
		al_unpack_result_clear(&ur);
		rc = do_unpack(dst, in, NULL, &ur);
		CU_ASSERT_EQUAL(rc, 0);
		CU_ASSERT_EQUAL(ur.complete, v == 1);
		CU_ASSERT_EQUAL(ur.nmissing, v - 1);
		if (v > 1 && ur.nmissing > 0) {
			/* the missing volumes are named, lowest first */
			char want[128];
			snprintf(want, sizeof(want), "airlock-%s-0001.tar", pr.id);
			CU_ASSERT_STRING_EQUAL(ur.missing[0], want);
			CU_ASSERT(index_empty(dst));
		}
		/* later disks carry no manifest: the store remembered it */
		if (v == (unsigned)pr.volumes) {
			b = man_path(in, pr.id);
			CU_ASSERT_EQUAL(unlink(b), 0);
			free(b);
		}
		/* each disk is removed after its run */
		b = vol_path(in, pr.id, v);
		if (v > 1)
			unlink(b);
		free(b);
	}
	CU_ASSERT(same_stores(src, dst));
	CU_ASSERT(store_clean(dst));
out:
	al_unpack_result_clear(&ur);
	free(src);
	free(out);
	free(dst);
	free(in);
}

static void test_pack__delta_since_carries_only_new_and_matches_full(void)
{
	char *src = make_source(), *o1 = fresh("out"), *o2 = fresh("out"), *o3 = fresh("out");
	char *far = fresh("far"), *full = fresh("full");
	al_pack_result p1 = AL_PACK_RESULT_INIT, p2 = AL_PACK_RESULT_INIT, p3 = AL_PACK_RESULT_INIT;
	al_unpack_result ur = AL_UNPACK_RESULT_INIT;
	al_store *s = NULL;

	if ((do_pack(src, o1, 0, NULL, NULL, NULL, &p1)) != 0) {
		CU_FAIL("do_pack(src, o1, 0, NULL, NULL, NULL, &p1)");
		goto out;
	}
	if ((al_store_open(&s, src, NULL)) != 0) {
		CU_FAIL("al_store_open(&s, src, NULL)");
		goto out;
	}
	CU_ASSERT_EQUAL(add_image(s, "quay.io/airlock-test/new:2", 5000, 11), 0);
	al_store_free(s);
	CU_ASSERT_EQUAL(write_text(src, "signatures/sha256=" SIG_HEX "/signature-2", "second\n"), 0);
	CU_ASSERT_EQUAL(do_pack(src, o2, 0, p1.id, NULL, NULL, &p2), 0);
	/* new: layer, config, manifest, signature-2; plus index.json and releases.json */
	CU_ASSERT_EQUAL(p2.entries, 6);
	CU_ASSERT_EQUAL(p2.skipped, p1.entries - 2);
	CU_ASSERT_EQUAL(do_unpack(far, o1, NULL, &ur), 0);
	al_unpack_result_clear(&ur);
	CU_ASSERT_EQUAL(do_unpack(far, o2, NULL, &ur), 0);
	CU_ASSERT_EQUAL(ur.complete, 1);
	CU_ASSERT_EQUAL(ur.images_incomplete, 0);
	al_unpack_result_clear(&ur);
	CU_ASSERT_EQUAL(do_pack(src, o3, 0, NULL, NULL, NULL, &p3), 0);
	CU_ASSERT_EQUAL(do_unpack(full, o3, NULL, &ur), 0);
	al_unpack_result_clear(&ur);
	CU_ASSERT(same_stores(far, full));
	CU_ASSERT(same_stores(src, far));
	CU_ASSERT(store_clean(far));
out:
	free(src);
	free(o1);
	free(o2);
	free(o3);
	free(far);
	free(full);
}

static void test_pack__delta_have_packs_exactly_what_the_inventory_lacks(void)
{
	char *src = make_source(), *o1 = fresh("out"), *o2 = fresh("out"), *far = fresh("far");
	char *inv = al_sprintf("%s/inventory-%u.json", al_test_tmpdir(), ++counter);
	al_pack_result p1 = AL_PACK_RESULT_INIT, p2 = AL_PACK_RESULT_INIT;
	al_unpack_result ur = AL_UNPACK_RESULT_INIT;
	al_store *s = NULL;
	json_t *j = NULL;

	if ((do_pack(src, o1, 0, NULL, NULL, NULL, &p1)) != 0) {
		CU_FAIL("do_pack(src, o1, 0, NULL, NULL, NULL, &p1)");
		goto out;
	}
	CU_ASSERT_EQUAL(do_unpack(far, o1, NULL, &ur), 0);
	al_unpack_result_clear(&ur);
	if ((al_store_open(&s, src, NULL)) != 0) {
		CU_FAIL("al_store_open(&s, src, NULL)");
		goto out;
	}
	CU_ASSERT_EQUAL(add_image(s, "quay.io/airlock-test/new:3", 7000, 12), 0);
	al_store_free(s);
	/* the inventory of the far side, as 'airlock inventory' writes it */
	if ((al_store_open(&s, far, NULL)) != 0) {
		CU_FAIL("al_store_open(&s, far, NULL)");
		goto out;
	}
	CU_ASSERT_EQUAL(al_pack__inventory_json(s, &j), 0);
	al_store_free(s);
	CU_ASSERT_EQUAL(json_array_size(json_object_get(j, "packs")), 1);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_array_get(json_object_get(j, "packs"), 0)), p1.id);
	/* imported untrusted: its signature is listed as such, not among
	 * the signatures a --have pack leaves out */
	CU_ASSERT_EQUAL(json_array_size(json_object_get(j, "signatures")), 0);
	CU_ASSERT_EQUAL(json_array_size(json_object_get(json_object_get(j, "untrusted"), "signatures")), 1);
	CU_ASSERT_EQUAL(al_json_save_file(inv, j, 1), 0);
	json_decref(j);
	CU_ASSERT_EQUAL(do_pack(src, o2, 0, NULL, inv, NULL, &p2), 0);
	/* layer, config, manifest, the signature again, index.json, releases.json */
	CU_ASSERT_EQUAL(p2.entries, 6);
	CU_ASSERT_EQUAL(do_unpack(far, o2, NULL, &ur), 0);
	CU_ASSERT_EQUAL(ur.complete, 1);
	CU_ASSERT_EQUAL(ur.entries_imported, 5);
	al_unpack_result_clear(&ur);
	CU_ASSERT(same_stores(src, far));
	CU_ASSERT(store_clean(far));
out:
	free(src);
	free(o1);
	free(o2);
	free(far);
	free(inv);
}

static void test_pack__delta_without_its_base_is_refused(void)
{
	char *src = make_source(), *o1 = fresh("out"), *o2 = fresh("out"), *far = fresh("far");
	al_pack_result p1 = AL_PACK_RESULT_INIT, p2 = AL_PACK_RESULT_INIT;
	al_unpack_result ur = AL_UNPACK_RESULT_INIT;
	int rc;

	if ((do_pack(src, o1, 0, NULL, NULL, NULL, &p1)) != 0) {
		CU_FAIL("do_pack(src, o1, 0, NULL, NULL, NULL, &p1)");
		goto out;
	}
	if ((do_pack(src, o2, 0, p1.id, NULL, NULL, &p2)) != 0) {
		CU_FAIL("do_pack(src, o2, 0, p1.id, NULL, NULL, &p2)");
		goto out;
	}
	rc = do_unpack(far, o2, NULL, &ur);
	CU_ASSERT_EQUAL(rc, AL_ENOTFOUND);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), p1.id));
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "never imported"));
	CU_ASSERT(index_empty(far));
	al_unpack_result_clear(&ur);
	/* unknown --since */
	CU_ASSERT_EQUAL(do_pack(src, o2, 0, "no-such-pack", NULL, NULL, NULL), AL_ENOTFOUND);
out:
	free(src);
	free(o1);
	free(o2);
	free(far);
}

static void test_pack__signed_pack_verifies_and_bad_signatures_import_nothing(void)
{
	char *src = make_source(), *out = fresh("out"), *keys = fresh("key"), *other = fresh("key");
	char *key = al_sprintf("%s.key", keys), *pub = al_sprintf("%s.pub", keys), *opub = al_sprintf("%s.pub", other);
	char *far = NULL, *m = NULL, *sig = NULL;
	al_pack_result pr = AL_PACK_RESULT_INIT;
	al_unpack_result ur = AL_UNPACK_RESULT_INIT;
	struct stat st;
	al_buf b = AL_BUF_INIT(AL_MIB);
	uint8_t saved;

	if ((al_pack_keygen(keys)) != 0) {
		CU_FAIL("al_pack_keygen(keys)");
		goto out;
	}
	CU_ASSERT_EQUAL(stat(key, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0600);
	CU_ASSERT_EQUAL(al_pack_keygen(keys), AL_EEXIST);
	CU_ASSERT_EQUAL(al_pack_keygen(other), 0);
	if ((do_pack(src, out, 0, NULL, NULL, key, &pr)) != 0) {
		CU_FAIL("do_pack(src, out, 0, NULL, NULL, key, &pr)");
		goto out;
	}
	m = man_path(out, pr.id);
	sig = al_sprintf("%s.sig", m);
	CU_ASSERT_EQUAL(file_size(sig), 64);

	far = fresh("far");
	CU_ASSERT_EQUAL(do_unpack(far, out, opub, &ur), AL_EVERIFY);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "does not verify"));
	CU_ASSERT(al_fs_exists(far) != 1 || nothing_stored(far));
	al_unpack_result_clear(&ur);
	free(far);

	/* a manifest changed after signing */
	CU_ASSERT_EQUAL(al_fs_read_file(m, &b), 0);
	saved = b.ptr[b.len - 3];
	b.ptr[b.len - 3] = saved == ' ' ? '\t' : ' ';
	CU_ASSERT_EQUAL(al_fs_write_atomic(m, b.ptr, b.len), 0);
	far = fresh("far");
	CU_ASSERT_EQUAL(do_unpack(far, out, pub, &ur), AL_EVERIFY);
	CU_ASSERT(al_fs_exists(far) != 1 || nothing_stored(far));
	al_unpack_result_clear(&ur);
	free(far);
	b.ptr[b.len - 3] = saved;
	CU_ASSERT_EQUAL(al_fs_write_atomic(m, b.ptr, b.len), 0);

	far = fresh("far");
	CU_ASSERT_EQUAL(do_unpack(far, out, pub, &ur), 0);
	CU_ASSERT_EQUAL(ur.complete, 1);
	CU_ASSERT(same_stores(src, far));
	al_unpack_result_clear(&ur);
	free(far);

	/* unsigned with --trust */
	CU_ASSERT_EQUAL(unlink(sig), 0);
	far = fresh("far");
	CU_ASSERT_EQUAL(do_unpack(far, out, pub, &ur), AL_EVERIFY);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "not signed"));
	CU_ASSERT(al_fs_exists(far) != 1 || nothing_stored(far));
	al_unpack_result_clear(&ur);
	free(far);
out:
	al_buf_free(&b);
	free(m);
	free(sig);
	free(src);
	free(out);
	free(keys);
	free(other);
	free(key);
	free(pub);
	free(opub);
}

/* ---- store metadata and blobs pack must refuse to carry -------------- */

/* 1 if dir holds no manifest and no volume (or does not exist). */
static int no_pack_in(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int none = 1;

	if (d == NULL)
		return 1;
	while ((e = readdir(d)) != NULL)
		if (al_str_startswith(e->d_name, "airlock-") || al_str_endswith(e->d_name, ".tar") ||
		    al_str_endswith(e->d_name, ".tmp"))
			none = 0;
	closedir(d);
	return none;
}

/* Write rel (relative to the store) with text into a source store; pack must refuse it (exit 1) naming what. */
static void expect_store_refused(const char *rel, const char *text, const char *what)
{
	char *src = make_source(), *out = fresh("out");
	al_pack_result pr = AL_PACK_RESULT_INIT;
	int rc;

	CU_ASSERT_EQUAL(write_text(src, rel, text), 0);
	rc = do_pack(src, out, 64 * AL_KIB, NULL, NULL, NULL, &pr);
	CU_ASSERT_EQUAL(rc, AL_EVERIFY);
	if (strstr(al_error_message(), what) == NULL)
		fprintf(stderr, "\nunexpected message: %s\n", al_error_message());
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), what));
	CU_ASSERT(no_pack_in(out));
	free(src);
	free(out);
}

static void test_pack__refuses_truncated_releases_json(void)
{
	expect_store_refused("airlock/releases.json", "{\"releases\": [{\"version\": \"4.1", "airlock/releases.json");
}

static void test_pack__refuses_ill_typed_releases_json(void)
{
	expect_store_refused("airlock/releases.json", "{\"releases\": {\"version\": \"4.14.1\"}}", "airlock/releases.json");
}

static void test_pack__refuses_release_that_is_not_an_object(void)
{
	expect_store_refused("airlock/releases.json", "{\"releases\": [\"4.14.1\"]}", "releases[0]");
}

static void test_pack__refuses_releases_json_that_is_an_array(void)
{
	expect_store_refused("airlock/releases.json", "[]", "airlock/releases.json");
}

static void test_pack__refuses_damaged_pack_sequence(void)
{
	expect_store_refused("airlock/pack-sequence", "12x\n", "airlock/pack-sequence");
}

static void test_pack__refuses_blobs_of_an_unknown_algorithm(void)
{
	expect_store_refused("blobs/blake3/0123456789abcdef", "x", "blobs/blake3");
}

static void test_pack__refuses_misnamed_file_among_blobs(void)
{
	expect_store_refused("blobs/sha256/README", "not a blob", "blobs/sha256/README");
}

static void test_pack__refuses_misnamed_file_among_sha512_blobs(void)
{
	expect_store_refused("blobs/sha512/" SIG_HEX, "a sha256-long name", "blobs/sha512/" SIG_HEX);
}

static void test_pack__refuses_damaged_since_record(void)
{
	char *src = make_source(), *o1 = fresh("out"), *o2 = fresh("out"), *rec = NULL;
	al_pack_result pr = AL_PACK_RESULT_INIT;

	if (do_pack(src, o1, 0, NULL, NULL, NULL, &pr) != 0) {
		CU_FAIL("do_pack");
		goto out;
	}
	rec = al_sprintf("%s/airlock/packs/%s.json", src, pr.id);
	CU_ASSERT_EQUAL(truncate(rec, 20), 0);
	CU_ASSERT_EQUAL(do_pack(src, o2, 0, pr.id, NULL, NULL, NULL), AL_EVERIFY);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), rec));
	CU_ASSERT(no_pack_in(o2));
out:
	free(rec);
	free(src);
	free(o1);
	free(o2);
}

/* ---- sha512 blobs ------------------------------------------------------ */

/* An image whose layer is a sha512 blob (written through the store's blob writer). */
static int add_sha512_image(al_store *s, const char *name, size_t layer_size, unsigned seed, al_digest *layer)
{
	uint8_t *data = malloc(layer_size);
	char cfg[128], man[1024], ch[AL_DIGEST_STRMAX], lh[AL_DIGEST_STRMAX];
	al_blob_writer *w = NULL;
	al_digest cd, md;
	al_descriptor desc;
	int rc = -1, n;

	if (data == NULL)
		return -1;
	fill_random(data, layer_size, &seed);
	if (al_digest_bytes(layer, AL_DIGEST_SHA512, data, layer_size) < 0 ||
	    al_store_blob_begin(s, layer, layer_size, &w) < 0 || al_blob_writer_write(w, data, layer_size) < 0 ||
	    al_blob_writer_commit(w) < 0)
		goto out;
	n = snprintf(cfg, sizeof(cfg), "{\"architecture\":\"amd64\",\"os\":\"linux\",\"sha512\":%u}", seed);
	if (al_store_put_blob(s, (uint8_t *)cfg, (size_t)n, &cd) < 0)
		goto out;
	n = snprintf(man, sizeof(man),
		     "{\"schemaVersion\":2,\"mediaType\":\"%s\",\"config\":{\"mediaType\":\"%s\",\"digest\":\"%s\",\"size\":%zu},"
		     "\"layers\":[{\"mediaType\":\"%s\",\"digest\":\"%s\",\"size\":%zu}]}",
		     AL_MT_OCI_MANIFEST, AL_MT_OCI_CONFIG, al_digest_str(&cd, ch), strlen(cfg), AL_MT_OCI_LAYER_GZIP,
		     al_digest_str(layer, lh), layer_size);
	if (al_store_put_blob(s, (uint8_t *)man, (size_t)n, &md) < 0)
		goto out;
	memset(&desc, 0, sizeof(desc));
	desc.media_type = (char *)AL_MT_OCI_MANIFEST;
	desc.digest = md;
	desc.size = (uint64_t)n;
	rc = al_store_tag(s, name, &desc);
out:
	free(data);
	return rc;
}

static void test_pack__sha512_blobs_round_trip_and_are_verified_with_sha512(void)
{
	char *src = make_source(), *out = fresh("out"), *dst = fresh("dst"), *bad = fresh("dst"), *o2 = fresh("out");
	char *p = NULL, *path = NULL, hex[AL_DIGEST_STRMAX], hex2[AL_DIGEST_STRMAX];
	al_pack_result pr = AL_PACK_RESULT_INIT;
	al_unpack_result ur = AL_UNPACK_RESULT_INIT;
	al_store *s = NULL;
	al_digest big, small;
	json_t *m = NULL, *e;
	size_t i, found = 0;

	if (al_store_open(&s, src, NULL) != 0) {
		CU_FAIL("al_store_open");
		goto out;
	}
	/* one split across 64 KiB volumes, one whole */
	CU_ASSERT_EQUAL(add_sha512_image(s, "quay.io/airlock-test/sha512:big", 200000, 21, &big), 0);
	CU_ASSERT_EQUAL(add_sha512_image(s, "quay.io/airlock-test/sha512:small", 3000, 22, &small), 0);
	al_store_free(s);
	al_digest_hex(&big, hex);
	al_digest_hex(&small, hex2);
	CU_ASSERT_EQUAL(do_pack(src, out, 64 * AL_KIB, NULL, NULL, NULL, &pr), 0);
	CU_ASSERT_EQUAL(pr.skipped, 0);
	p = man_path(out, pr.id);
	CU_ASSERT_EQUAL(al_json_load_file(&m, p, 64 * AL_MIB), 0);
	json_array_foreach(json_object_get(m, "entries"), i, e)
	{
		const char *ep = al_json_str(e, "path");
		if (ep != NULL && al_str_startswith(ep, "blobs/sha512/")) {
			found++;
			CU_ASSERT_STRING_EQUAL(STR(al_json_str(e, "sha512")), ep + 13);
			CU_ASSERT_PTR_NULL(json_object_get(e, "sha256"));
		}
	}
	CU_ASSERT_EQUAL(found, 2);
	CU_ASSERT_EQUAL(do_unpack(dst, out, NULL, &ur), 0);
	CU_ASSERT_EQUAL(ur.complete, 1);
	CU_ASSERT_EQUAL(ur.images_incomplete, 0);
	CU_ASSERT_EQUAL(ur.images_tagged, 10);
	CU_ASSERT(same_stores(src, dst));
	CU_ASSERT(store_clean(dst));
	path = al_sprintf("%s/blobs/sha512/%s", dst, hex);
	CU_ASSERT_EQUAL(file_size(path), 200000);
	al_unpack_result_clear(&ur);

	/* deltas know sha512 blobs: --since and --have leave them out */
	{
		char *o3 = fresh("out"), *o4 = fresh("out"), *inv = fresh("inv.json"), want[AL_DIGEST_STRMAX + 8];
		al_pack_result p3 = AL_PACK_RESULT_INIT, p4 = AL_PACK_RESULT_INIT;
		json_t *j = NULL, *v;
		size_t k, listed = 0;
		CU_ASSERT_EQUAL(do_pack(src, o3, 0, pr.id, NULL, NULL, &p3), 0);
		CU_ASSERT_EQUAL(p3.entries, 2); /* index.json and releases.json */
		if (al_store_open(&s, dst, NULL) == 0) {
			CU_ASSERT_EQUAL(al_pack__inventory_json(s, &j), 0);
			al_store_free(s);
		}
		snprintf(want, sizeof(want), "sha512:%s", hex);
		json_array_foreach(json_object_get(j, "blobs"), k, v)
			listed += strcmp(json_string_value(v), want) == 0;
		CU_ASSERT_EQUAL(listed, 1);
		CU_ASSERT_EQUAL(al_json_save_file(inv, j, 1), 0);
		CU_ASSERT_EQUAL(do_pack(src, o4, 0, NULL, inv, NULL, &p4), 0);
		/* index.json, releases.json, and the signature an untrusted
		 * import wrote (not among the inventory's "signatures") */
		CU_ASSERT_EQUAL(p4.entries, 3);
		json_decref(j);
		free(o3);
		free(o4);
		free(inv);
	}

	/* a sha512 blob whose bytes changed on the staging disk: the far side hashes it with SHA-512 */
	free(path);
	path = al_sprintf("%s/blobs/sha512/%s", src, hex2);
	{
		FILE *f = fopen(path, "r+b");
		CU_ASSERT_PTR_NOT_NULL(f);
		if (f != NULL) {
			fputc('!', f);
			fclose(f);
		}
	}
	CU_ASSERT_EQUAL(do_pack(src, o2, 0, NULL, NULL, NULL, &pr), 0);
	CU_ASSERT_EQUAL(do_unpack(bad, o2, NULL, &ur), AL_EVERIFY);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "digest mismatch"));
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), hex2));
	CU_ASSERT(index_empty(bad));
out:
	al_unpack_result_clear(&ur);
	json_decref(m);
	free(p);
	free(path);
	free(src);
	free(out);
	free(o2);
	free(dst);
	free(bad);
}

/* ---- trust: forged and replayed packs before and after a trusted one ---- */

/* Replace every occurrence of from by to (same length) in b. */
static void replace_all(al_buf *b, const char *from, const char *to)
{
	size_t n = strlen(from), i;

	for (i = 0; b->len >= n && i + n <= b->len; i++)
		if (memcmp(b->ptr + i, from, n) == 0)
			memcpy(b->ptr + i, to, n);
}

/*
 * A forged pack: the pack from/from_id copied to dir to under the id to_id
 * (manifest, volume labels and names rewritten, same lengths), without its
 * signature. What an attacker with a writable stick can make.
 */
static int forge_pack(const char *from, const char *from_id, const char *to, const char *to_id)
{
	DIR *d = opendir(from);
	struct dirent *e;
	int rc = 0;

	if (d == NULL || strlen(from_id) != strlen(to_id) || al_fs_mkdir_p(to, 0755) < 0) {
		if (d != NULL)
			closedir(d);
		return -1;
	}
	while (rc == 0 && (e = readdir(d)) != NULL) {
		char prefix[AL_PACK_ID_MAX + 16], *a, *b, *name;
		al_buf buf = AL_BUF_INIT(64 * AL_MIB);
		snprintf(prefix, sizeof(prefix), "airlock-%s", from_id);
		if (!al_str_startswith(e->d_name, prefix) || al_str_endswith(e->d_name, ".sig"))
			continue;
		name = al_sprintf("airlock-%s%s", to_id, e->d_name + strlen(prefix));
		a = al_path_join(from, e->d_name);
		b = al_path_join(to, name);
		rc = al_fs_read_file(a, &buf);
		if (rc == 0) {
			replace_all(&buf, from_id, to_id);
			rc = al_fs_write_atomic(b, buf.ptr, buf.len);
		}
		al_buf_free(&buf);
		free(name);
		free(a);
		free(b);
	}
	closedir(d);
	return rc;
}

static json_t *import_record(const char *store, const char *id)
{
	char *p = al_sprintf("%s/airlock/imported/%s.json", store, id);
	json_t *j = NULL;

	if (al_json_load_file(&j, p, AL_MIB) < 0)
		j = NULL;
	free(p);
	return j;
}

static char *file_sha256(const char *path)
{
	al_digest d;
	char hex[AL_DIGEST_STRMAX];

	if (al_digest_file(&d, AL_DIGEST_SHA256, path, NULL) < 0)
		return NULL;
	return al_strdup(al_digest_hex(&d, hex));
}

/* The digest of tag name in store, as a string ("" when absent). */
static char *tag_of(const char *store, const char *name)
{
	al_store *s = NULL;
	al_store_opts ro = {.readonly = 1};
	al_store_image img;
	char d[AL_DIGEST_STRMAX] = "";

	memset(&img, 0, sizeof(img));
	if (al_store_open(&s, store, &ro) == 0 && al_store_find(s, name, &img) == 0)
		al_digest_str(&img.desc.digest, d);
	al_store_image_clear(&img);
	al_store_free(s);
	return al_strdup(d);
}

typedef struct trust_fixture {
	char *keys, *key, *pub;
	char *src, *real;        /* the staging store and its signed pack */
	char real_id[AL_PACK_ID_MAX + 1];
	char *evil, *forged;     /* another store's pack, forged under real_id */
} trust_fixture;

#define BIG "quay.io/airlock-test/big:1"

static int trust_setup(trust_fixture *f)
{
	char *eout;
	al_pack_result pr = AL_PACK_RESULT_INIT;
	al_store *s = NULL;
	int ok;

	memset(f, 0, sizeof(*f));
	f->keys = fresh("key");
	f->key = al_sprintf("%s.key", f->keys);
	f->pub = al_sprintf("%s.pub", f->keys);
	f->src = make_source();
	f->real = fresh("real");
	f->evil = make_source();
	f->forged = fresh("forged");
	eout = fresh("evilout");
	/* the evil store: other bytes under the same tag, and another signature-1 of the same release */
	ok = al_pack_keygen(f->keys) == 0 && do_pack(f->src, f->real, 64 * AL_KIB, NULL, NULL, f->key, &pr) == 0;
	if (ok)
		memcpy(f->real_id, pr.id, sizeof(f->real_id));
	ok = ok && al_store_open(&s, f->evil, NULL) == 0 && add_image(s, BIG, 300000, 666) == 0;
	al_store_free(s);
	ok = ok && write_text(f->evil, "signatures/sha256=" SIG_HEX "/signature-1", "forged signature\n") == 0 &&
	     do_pack(f->evil, eout, 64 * AL_KIB, NULL, NULL, NULL, &pr) == 0 && forge_pack(eout, pr.id, f->forged, f->real_id) == 0;
	free(eout);
	return ok ? 0 : -1;
}

static void trust_teardown(trust_fixture *f)
{
	free(f->keys);
	free(f->key);
	free(f->pub);
	free(f->src);
	free(f->real);
	free(f->evil);
	free(f->forged);
}

/* Unpack without trust_key and without accept_untrusted. */
static int unpack_quarantine(const char *store, const char *dir, al_unpack_result *res)
{
	al_store *s = NULL;
	al_store_opts so = {.create = 1};
	int rc;

	if ((rc = al_store_open(&s, store, &so)) < 0)
		return rc;
	rc = al_pack_unpack(s, dir, NULL, res);
	al_store_free(s);
	return rc;
}

static int with_store(const char *store, const char *id, const char *trust, int op, al_unpack_result *res)
{
	al_store *s = NULL;
	al_unpack_opts o = AL_UNPACK_OPTS_INIT;
	int rc;

	o.trust_key = trust;
	if ((rc = al_store_open(&s, store, NULL)) < 0)
		return rc;
	rc = op == 0 ? al_pack_promote(s, id, &o, res) : al_pack_drop(s, id);
	al_store_free(s);
	return rc;
}

static size_t quarantined_count(const char *store)
{
	al_store *s = NULL;
	al_store_opts ro = {.readonly = 1};
	al_quarantined *q = NULL;
	size_t n = 0;

	if (al_store_open(&s, store, &ro) < 0 || al_pack_quarantine_list(s, &q, &n) < 0)
		n = (size_t)-1;
	al_pack_quarantine_list_free(q, n == (size_t)-1 ? 0 : n);
	al_store_free(s);
	return n;
}

/* Issue 24 item 4: the forged pack (another signature-1, the tag on other
 * bytes) unpacked without trust lands in the quarantine: the store's tag,
 * signature and index stay as the trusted import left them. */
static void test_pack__untrusted_import_is_quarantined(void)
{
	trust_fixture f;
	al_unpack_result ur = AL_UNPACK_RESULT_INIT;
	char *far = fresh("far"), *before = NULL, *after = NULL, *sig = NULL;

	if (trust_setup(&f) != 0) {
		CU_FAIL("trust_setup");
		goto out;
	}
	CU_ASSERT_EQUAL(do_unpack(far, f.real, f.pub, &ur), 0);
	al_unpack_result_clear(&ur);
	before = tag_of(far, BIG);
	CU_ASSERT_EQUAL(unpack_quarantine(far, f.forged, &ur), 0);
	CU_ASSERT_TRUE(ur.quarantined);
	CU_ASSERT_TRUE(ur.complete);
	al_unpack_result_clear(&ur);
	after = tag_of(far, BIG);
	CU_ASSERT_PTR_NOT_NULL(before);
	CU_ASSERT_PTR_NOT_NULL(after);
	if (before != NULL && after != NULL)
		CU_ASSERT_STRING_EQUAL(before, after);
	sig = al_sprintf("%s/signatures/sha256=" SIG_HEX "/signature-2", far);
	CU_ASSERT_EQUAL(al_fs_exists(sig), 0);
	/* held in the quarantine, listed */
	CU_ASSERT_EQUAL(quarantined_count(far), 1);
out:
	free(sig);
	free(before);
	free(after);
	free(far);
	trust_teardown(&f);
}

/* Promotion verifies the saved manifest with the key; drop removes. */
static void test_pack__promote_needs_the_signing_key(void)
{
	trust_fixture f;
	al_unpack_result ur = AL_UNPACK_RESULT_INIT;
	char *far = fresh("far"), *far2 = fresh("far"), *got = NULL, *want = NULL, *other = fresh("otherkey"), *opub = NULL;

	if (trust_setup(&f) != 0 || al_pack_keygen(other) != 0) {
		CU_FAIL("trust_setup");
		goto out;
	}
	opub = al_sprintf("%s.pub", other);
	CU_ASSERT_EQUAL(unpack_quarantine(far, f.real, &ur), 0);
	CU_ASSERT_TRUE(ur.quarantined);
	al_unpack_result_clear(&ur);
	CU_ASSERT_EQUAL(quarantined_count(far), 1);
	got = tag_of(far, BIG);
	CU_ASSERT_STRING_EQUAL(got != NULL ? got : "?", ""); /* not in the store */
	free(got);
	CU_ASSERT_EQUAL(with_store(far, f.real_id, NULL, 0, &ur), AL_EINVAL);
	al_unpack_result_clear(&ur);
	CU_ASSERT_EQUAL(with_store(far, f.real_id, opub, 0, &ur), AL_EVERIFY);
	al_unpack_result_clear(&ur);
	CU_ASSERT_EQUAL(quarantined_count(far), 1);
	CU_ASSERT_EQUAL(with_store(far, f.real_id, f.pub, 0, &ur), 0);
	CU_ASSERT_TRUE(ur.complete);
	al_unpack_result_clear(&ur);
	CU_ASSERT_EQUAL(quarantined_count(far), 0);
	got = tag_of(far, BIG);
	want = tag_of(f.src, BIG);
	CU_ASSERT_PTR_NOT_NULL(got);
	if (got != NULL && want != NULL)
		CU_ASSERT_STRING_EQUAL(got, want);
	CU_ASSERT_EQUAL(store_clean(far), 1);
	/* drop */
	CU_ASSERT_EQUAL(unpack_quarantine(far2, f.forged, &ur), 0);
	al_unpack_result_clear(&ur);
	CU_ASSERT_EQUAL(with_store(far2, f.real_id, NULL, 1, NULL), 0);
	CU_ASSERT_EQUAL(quarantined_count(far2), 0);
	CU_ASSERT_EQUAL(with_store(far2, f.real_id, NULL, 1, NULL), AL_ENOTFOUND);
	CU_ASSERT_EQUAL(with_store(far2, "../x", NULL, 1, NULL), AL_EINVAL);
out:
	free(got);
	free(want);
	free(opub);
	free(other);
	free(far);
	free(far2);
	trust_teardown(&f);
}

static void test_pack__untrusted_forged_pack_does_not_preempt_a_trusted_one(void)
{
	trust_fixture f;
	al_unpack_result ur = AL_UNPACK_RESULT_INIT;
	char *far = fresh("far"), *want = NULL, *got = NULL, *m = NULL, *mhex = NULL;
	json_t *rec = NULL;

	if (trust_setup(&f) != 0) {
		CU_FAIL("trust_setup");
		goto out;
	}
	/* the forged pack imports without --trust, under the real pack's id */
	CU_ASSERT_EQUAL(do_unpack(far, f.forged, NULL, &ur), 0);
	CU_ASSERT_EQUAL(ur.complete, 1);
	al_unpack_result_clear(&ur);
	/* with --trust the forged manifest is refused... */
	CU_ASSERT_EQUAL(do_unpack(far, f.forged, f.pub, &ur), AL_EVERIFY);
	al_unpack_result_clear(&ur);
	/* ...and the real pack is not "already imported": it imports, and its tags win */
	CU_ASSERT_EQUAL(do_unpack(far, f.real, f.pub, &ur), 0);
	CU_ASSERT_EQUAL(ur.already, 0);
	CU_ASSERT_EQUAL(ur.complete, 1);
	al_unpack_result_clear(&ur);
	want = tag_of(f.src, BIG);
	got = tag_of(far, BIG);
	CU_ASSERT_STRING_EQUAL(got, want);
	/* the record: which manifest, trusted, by which key */
	rec = import_record(far, f.real_id);
	m = man_path(f.real, f.real_id);
	mhex = file_sha256(m);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(rec, "airlockImport")), 1);
	CU_ASSERT_STRING_EQUAL(STR(al_json_str(rec, "id")), f.real_id);
	CU_ASSERT_STRING_EQUAL(STR(al_json_str(rec, "manifestSha256")), STR(mhex));
	CU_ASSERT(json_is_true(json_object_get(rec, "trusted")));
	CU_ASSERT(al_str_startswith(al_json_str(rec, "key") ? al_json_str(rec, "key") : "", "sha256:"));
	CU_ASSERT(json_integer_value(json_object_get(rec, "sequence")) > 0);
	/* now it is imported: trusted or not, a rerun is a no-op */
	CU_ASSERT_EQUAL(do_unpack(far, f.real, f.pub, &ur), 0);
	CU_ASSERT_EQUAL(ur.already, 1);
	al_unpack_result_clear(&ur);
	CU_ASSERT_EQUAL(do_unpack(far, f.real, NULL, &ur), 0);
	CU_ASSERT_EQUAL(ur.already, 1);
out:
	al_unpack_result_clear(&ur);
	json_decref(rec);
	free(m);
	free(mhex);
	free(want);
	free(got);
	free(far);
	trust_teardown(&f);
}

/* Number of marks al_store_untrusted_list gives for store, -1 on error. */
static long untrusted_marks(const char *store, int kind)
{
	al_store *s = NULL;
	al_store_opts ro = {.readonly = 1};
	al_store_untrusted *v = NULL;
	size_t n = 0, i;
	long k = 0;

	if (al_store_open(&s, store, &ro) < 0)
		return -1;
	if (al_store_untrusted_list(s, &v, &n) < 0)
		k = -1;
	for (i = 0; i < n && k >= 0; i++)
		k += v[i].kind == kind;
	al_store_untrusted_free(v, n);
	al_store_free(s);
	return k;
}

/* The marks file on its own: a signature mark applies while some
 * signature-<n> holds its bytes, a tag mark while the name names its
 * digest; clear removes, the last clear removes the file; a damaged file
 * is refused. */
static void test_pack__untrusted_marks_follow_the_files(void)
{
	char *st = fresh("marks"), *path = NULL;
	al_store *s = NULL;
	al_store_opts so = {.create = 1};
	al_store_untrusted m[2], *v = NULL;
	al_store_image img;
	al_digest rel;
	size_t n = 0;

	memset(m, 0, sizeof(m));
	memset(&img, 0, sizeof(img));
	if (al_store_open(&s, st, &so) != 0 || add_image(s, "quay.io/airlock-test/x:1", 100, 3) != 0 ||
	    al_store_find(s, "quay.io/airlock-test/x:1", &img) != 0 ||
	    al_digest_parse_str(&rel, "sha256:" SIG_HEX) != 0) {
		CU_FAIL("setup");
		goto out;
	}
	m[0].kind = AL_STORE_UNTRUSTED_SIGNATURE;
	m[0].digest = rel;
	{
		al_digest d;
		char hex[AL_DIGEST_STRMAX];
		CU_ASSERT_EQUAL(al_digest_bytes(&d, AL_DIGEST_SHA256, "forged\n", 7), 0);
		memcpy(m[0].sha256, al_digest_hex(&d, hex), 65);
	}
	m[0].pack = (char *)"p1";
	m[1].kind = AL_STORE_UNTRUSTED_TAG;
	m[1].digest = img.desc.digest;
	m[1].name = (char *)"quay.io/airlock-test/x:1";
	m[1].pack = (char *)"p1";
	CU_ASSERT_EQUAL(al_store_untrusted_mark(s, m, 2), 0);
	/* no file holds the signature's bytes yet: only the tag applies */
	CU_ASSERT_EQUAL(al_store_untrusted_list(s, &v, &n), 0);
	CU_ASSERT_EQUAL(n, 1);
	if (n == 1)
		CU_ASSERT_EQUAL(v[0].kind, AL_STORE_UNTRUSTED_TAG);
	al_store_untrusted_free(v, n);
	CU_ASSERT_EQUAL(write_text(st, "signatures/sha256=" SIG_HEX "/signature-1", "genuine\n"), 0);
	CU_ASSERT_EQUAL(write_text(st, "signatures/sha256=" SIG_HEX "/signature-2", "forged\n"), 0);
	CU_ASSERT_EQUAL(al_store_signature_untrusted(s, &rel, (const uint8_t *)"forged\n", 7), 1);
	CU_ASSERT_EQUAL(al_store_signature_untrusted(s, &rel, (const uint8_t *)"genuine\n", 8), 0);
	CU_ASSERT_EQUAL(al_store_untrusted_list(s, &v, &n), 0);
	CU_ASSERT_EQUAL(n, 2);
	if (n == 2 && v[0].kind == AL_STORE_UNTRUSTED_SIGNATURE)
		CU_ASSERT_STRING_EQUAL(STR(v[0].path), "signatures/sha256=" SIG_HEX "/signature-2");
	al_store_untrusted_free(v, n);
	/* the name tagged elsewhere: its mark no longer applies */
	CU_ASSERT_EQUAL(add_image(s, "quay.io/airlock-test/x:1", 100, 4), 0);
	CU_ASSERT_EQUAL(al_store_untrusted_list(s, &v, &n), 0);
	CU_ASSERT_EQUAL(n, 1);
	al_store_untrusted_free(v, n);
	/* cleared: the file goes with the last mark */
	CU_ASSERT_EQUAL(al_store_untrusted_clear(s, m, 2), 0);
	path = al_sprintf("%s/airlock/untrusted.json", st);
	CU_ASSERT_EQUAL(al_fs_exists(path), 0);
	CU_ASSERT_EQUAL(al_store_signature_untrusted(s, &rel, (const uint8_t *)"forged\n", 7), 0);
	/* damaged: refused, never read as "no marks" */
	CU_ASSERT_EQUAL(al_fs_write_atomic(path, "{\"airlockUntrusted\":1,\"signatures\":[{}]}", 40), 0);
	CU_ASSERT_EQUAL(al_store_signature_untrusted(s, &rel, (const uint8_t *)"forged\n", 7), AL_EVERIFY);
	CU_ASSERT_EQUAL(al_store_untrusted_list(s, &v, &n), AL_EVERIFY);
	al_error_clear();
out:
	al_store_image_clear(&img);
	al_store_free(s);
	free(path);
	free(st);
}

/* Release records of untrusted imports (issue 24): a record the store
 * holds already is not marked, a new one (a forged version of the same
 * release) is, and listed while releases.json holds it; a trusted
 * document recording that release takes the marked record out of
 * releases.json, keeps the genuine one, and clears the mark. */
static void test_pack__untrusted_release_records_marked_and_vouched(void)
{
	char *st = fresh("relmarks"), *path = NULL;
	al_store *s = NULL;
	al_store_opts so = {.create = 1};
	al_store_untrusted *v = NULL;
	json_t *genuine = NULL, *forged = NULL, *doc = NULL;
	size_t n = 0;

	genuine = json_pack("{s:[{s:s, s:s}]}", "releases", "version", "4.14.1", "digest", "sha256:" SIG_HEX);
	forged = json_pack("{s:[{s:s, s:s}, {s:s, s:s}]}", "releases", "version", "4.14.1", "digest",
	                   "sha256:" SIG_HEX, "version", "6.6.6", "digest", "sha256:" SIG_HEX);
	if (genuine == NULL || forged == NULL || al_store_open(&s, st, &so) != 0 ||
	    al_store__releases_import(s, genuine, "the genuine pack") != 0) {
		CU_FAIL("setup");
		goto out;
	}
	CU_ASSERT_EQUAL(al_store__untrusted_releases_mark(s, forged, "p-forged"), 0);
	CU_ASSERT_EQUAL(al_store__releases_import(s, forged, "the forged pack"), 0);
	CU_ASSERT_EQUAL(al_store_untrusted_list(s, &v, &n), 0);
	CU_ASSERT_EQUAL(n, 1);
	if (n == 1) {
		CU_ASSERT_EQUAL(v[0].kind, AL_STORE_UNTRUSTED_RELEASE);
		CU_ASSERT_STRING_EQUAL(STR(v[0].name), "6.6.6");
		CU_ASSERT_STRING_EQUAL(STR(v[0].pack), "p-forged");
	}
	al_store_untrusted_free(v, n);
	v = NULL;
	CU_ASSERT_EQUAL(al_store__untrusted_releases_vouch(s, genuine), 0);
	CU_ASSERT_EQUAL(al_store_releases_load(s, &doc), 0);
	CU_ASSERT_EQUAL(json_array_size(json_object_get(doc, "releases")), 1);
	CU_ASSERT_STRING_EQUAL(STR(al_json_str(json_array_get(json_object_get(doc, "releases"), 0), "version")),
	                       "4.14.1");
	path = al_sprintf("%s/airlock/untrusted.json", st);
	CU_ASSERT_EQUAL(al_fs_exists(path), 0);
out:
	json_decref(doc);
	json_decref(genuine);
	json_decref(forged);
	al_store_free(s);
	free(path);
	free(st);
}

/* Issue 24: a forged signature-1 written by an --accept-untrusted import
 * is marked; the genuine pack with --trust replaces it (no forged byte
 * beside the real one) and clears the marks; a signature file nobody
 * marked (another writer's) is still never replaced. */
static void test_pack__forged_signature_file_never_blocks_a_trusted_pack(void)
{
	trust_fixture f;
	al_unpack_result ur = AL_UNPACK_RESULT_INIT;
	char *far = fresh("far"), *far2 = fresh("far"), *one = NULL, *two = NULL, *marks = NULL;
	al_buf b = AL_BUF_INIT(AL_MIB);

	if (trust_setup(&f) != 0) {
		CU_FAIL("trust_setup");
		goto out;
	}
	CU_ASSERT_EQUAL(do_unpack(far, f.forged, NULL, &ur), 0);
	al_unpack_result_clear(&ur);
	/* the untrusted import marked the signature and the moved tag */
	CU_ASSERT_EQUAL(untrusted_marks(far, AL_STORE_UNTRUSTED_SIGNATURE), 1);
	CU_ASSERT_TRUE(untrusted_marks(far, AL_STORE_UNTRUSTED_TAG) >= 1);
	CU_ASSERT_EQUAL(do_unpack(far, f.real, f.pub, &ur), 0);
	CU_ASSERT_EQUAL(ur.complete, 1);
	al_unpack_result_clear(&ur);
	/* replaced in place: the real signature is signature-1, alone */
	one = al_sprintf("%s/signatures/sha256=" SIG_HEX "/signature-1", far);
	two = al_sprintf("%s/signatures/sha256=" SIG_HEX "/signature-2", far);
	CU_ASSERT_EQUAL(al_fs_read_file(one, &b), 0);
	CU_ASSERT_STRING_EQUAL(al_buf_cstr(&b), "not really a signature\n");
	CU_ASSERT_EQUAL(al_fs_exists(two), 0);
	CU_ASSERT_EQUAL(untrusted_marks(far, AL_STORE_UNTRUSTED_SIGNATURE), 0);
	CU_ASSERT_EQUAL(untrusted_marks(far, AL_STORE_UNTRUSTED_TAG), 0);
	marks = al_sprintf("%s/airlock/untrusted.json", far);
	CU_ASSERT_EQUAL(al_fs_exists(marks), 0);

	/* and the signature is found in place the next time */
	CU_ASSERT_EQUAL(do_unpack(far, f.real, f.pub, &ur), 0);
	CU_ASSERT_EQUAL(ur.already, 1);
	al_unpack_result_clear(&ur);

	/* an unmarked file under the name (not an import's): kept, the real
	 * one added next to it */
	CU_ASSERT_EQUAL(do_unpack(far2, f.forged, NULL, &ur), 0);
	al_unpack_result_clear(&ur);
	free(marks);
	marks = al_sprintf("%s/airlock/untrusted.json", far2);
	CU_ASSERT_EQUAL(unlink(marks), 0);
	CU_ASSERT_EQUAL(do_unpack(far2, f.real, f.pub, &ur), 0);
	al_unpack_result_clear(&ur);
	free(one);
	free(two);
	one = al_sprintf("%s/signatures/sha256=" SIG_HEX "/signature-1", far2);
	two = al_sprintf("%s/signatures/sha256=" SIG_HEX "/signature-2", far2);
	al_buf_reset(&b);
	CU_ASSERT_EQUAL(al_fs_read_file(one, &b), 0);
	CU_ASSERT_STRING_EQUAL(al_buf_cstr(&b), "forged signature\n");
	al_buf_reset(&b);
	CU_ASSERT_EQUAL(al_fs_read_file(two, &b), 0);
	CU_ASSERT_STRING_EQUAL(al_buf_cstr(&b), "not really a signature\n");
out:
	al_unpack_result_clear(&ur);
	al_buf_free(&b);
	free(marks);
	free(one);
	free(two);
	free(far);
	free(far2);
	trust_teardown(&f);
}

static void test_pack__staged_parts_are_rehashed_before_reuse(void)
{
	trust_fixture f;
	al_unpack_result ur = AL_UNPACK_RESULT_INIT;
	char *far = fresh("far"), *part = fresh("part"), *dir = NULL, *a = NULL, *b = NULL, *stage = NULL;
	json_t *m = NULL, *e;
	size_t i;
	const char *hex = NULL;

	if (trust_setup(&f) != 0) {
		CU_FAIL("trust_setup");
		goto out;
	}
	/* the big layer is split: stage its first parts from volumes 1-2 only */
	dir = fresh("two");
	CU_ASSERT_EQUAL(al_fs_mkdir_p(dir, 0755), 0);
	a = man_path(f.real, f.real_id);
	CU_ASSERT_EQUAL(al_json_load_file(&m, a, 64 * AL_MIB), 0);
	json_array_foreach(json_object_get(m, "entries"), i, e)
		if (json_object_get(e, "parts") != NULL)
			hex = al_json_str(e, "sha256");
	CU_ASSERT_PTR_NOT_NULL(hex);
	b = man_path(dir, f.real_id);
	CU_ASSERT_EQUAL(copy_file(a, b), 0);
	free(a);
	free(b);
	for (i = 1; i <= 2; i++) {
		a = vol_path(f.real, f.real_id, (unsigned)i);
		b = vol_path(dir, f.real_id, (unsigned)i);
		CU_ASSERT_EQUAL(copy_file(a, b), 0);
		free(a);
		free(b);
	}
	a = b = NULL;
	CU_ASSERT_EQUAL(do_unpack(far, dir, NULL, &ur), 0);
	CU_ASSERT_EQUAL(ur.complete, 0);
	al_unpack_result_clear(&ur);
	/* a staged part with the right size and other bytes (what another manifest of this pack id staged) */
	stage = al_sprintf("%s/airlock/unpack/%s/part-%s-0001", far, f.real_id, hex != NULL ? hex : "");
	CU_ASSERT(file_size(stage) > 0);
	{
		FILE *fp = fopen(stage, "r+b");
		CU_ASSERT_PTR_NOT_NULL(fp);
		if (fp != NULL) {
			fputs("poisoned", fp);
			fclose(fp);
		}
	}
	/* the whole pack, trusted: the part is hashed, found wrong, and read again */
	CU_ASSERT_EQUAL(do_unpack(far, f.real, f.pub, &ur), 0);
	if (ur.complete != 1)
		fprintf(stderr, "\nunpack: %s\n", al_error_message());
	CU_ASSERT_EQUAL(ur.complete, 1);
	CU_ASSERT(same_stores(f.src, far));
out:
	al_unpack_result_clear(&ur);
	json_decref(m);
	free(stage);
	free(dir);
	free(part);
	free(far);
	trust_teardown(&f);
}

static void test_pack__volumes_only_after_an_untrusted_import_ask_for_the_manifest(void)
{
	trust_fixture f;
	al_unpack_result ur = AL_UNPACK_RESULT_INIT;
	char *far = fresh("far"), *dir = fresh("vols"), *a = NULL, *b = NULL;
	unsigned v;

	if (trust_setup(&f) != 0) {
		CU_FAIL("trust_setup");
		goto out;
	}
	CU_ASSERT_EQUAL(do_unpack(far, f.forged, NULL, &ur), 0);
	al_unpack_result_clear(&ur);
	CU_ASSERT_EQUAL(al_fs_mkdir_p(dir, 0755), 0);
	for (v = 1; v <= 20; v++) {
		a = vol_path(f.real, f.real_id, v);
		b = vol_path(dir, f.real_id, v);
		if (file_size(a) > 0)
			CU_ASSERT_EQUAL(copy_file(a, b), 0);
		free(a);
		free(b);
	}
	a = b = NULL;
	CU_ASSERT_EQUAL(do_unpack(far, dir, f.pub, &ur), AL_ENOTFOUND);
	CU_ASSERT_EQUAL(ur.already, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "without --trust"));
out:
	al_unpack_result_clear(&ur);
	free(far);
	free(dir);
	trust_teardown(&f);
}

static void test_pack__forged_pack_after_a_trusted_one_does_not_stick(void)
{
	trust_fixture f;
	al_unpack_result ur = AL_UNPACK_RESULT_INIT;
	char *far = fresh("far"), *want = NULL, *got = NULL;
	json_t *rec = NULL;

	if (trust_setup(&f) != 0) {
		CU_FAIL("trust_setup");
		goto out;
	}
	CU_ASSERT_EQUAL(do_unpack(far, f.real, f.pub, &ur), 0);
	al_unpack_result_clear(&ur);
	/* an untrusted import of another manifest under the same id: the record now says so */
	CU_ASSERT_EQUAL(do_unpack(far, f.forged, NULL, &ur), 0);
	CU_ASSERT_EQUAL(ur.already, 0);
	al_unpack_result_clear(&ur);
	rec = import_record(far, f.real_id);
	CU_ASSERT(json_is_false(json_object_get(rec, "trusted")));
	CU_ASSERT(json_is_null(json_object_get(rec, "key")));
	/* so the trusted pack is not "already imported": it imports again and its tags win */
	CU_ASSERT_EQUAL(do_unpack(far, f.real, f.pub, &ur), 0);
	CU_ASSERT_EQUAL(ur.already, 0);
	CU_ASSERT_EQUAL(ur.complete, 1);
	want = tag_of(f.src, BIG);
	got = tag_of(far, BIG);
	CU_ASSERT_STRING_EQUAL(got, want);
out:
	al_unpack_result_clear(&ur);
	json_decref(rec);
	free(want);
	free(got);
	free(far);
	trust_teardown(&f);
}

static void test_pack__failed_pack_leaves_no_volume_behind(void)
{
	char *src = make_source(), *out = fresh("out"), *key = fresh("notakey");

	/* the signature is made after the volumes: a bad key fails the pack then */
	CU_ASSERT_EQUAL(al_fs_write_atomic(key, "not a key\n", 10), 0);
	CU_ASSERT_EQUAL(do_pack(src, out, 64 * AL_KIB, NULL, NULL, key, NULL), AL_EPARSE);
	CU_ASSERT(no_pack_in(out));
	free(src);
	free(out);
	free(key);
}

/* Set the "sequence" of a pack manifest (removed when seq < 0), unsigned afterwards. */
static int set_sequence(const char *dir, const char *id, long long seq)
{
	char *p = man_path(dir, id), *sig = al_sprintf("%s.sig", p);
	json_t *m = NULL;
	int rc = al_json_load_file(&m, p, 64 * AL_MIB);

	if (rc == 0)
		rc = seq < 0 ? json_object_del(m, "sequence") : json_object_set_new(m, "sequence", json_integer(seq));
	if (rc == 0)
		rc = al_json_save_file(p, m, 1);
	unlink(sig);
	json_decref(m);
	free(p);
	free(sig);
	return rc;
}

static void test_pack__replayed_older_signed_pack_does_not_roll_tags_back(void)
{
	trust_fixture f;
	al_unpack_result ur = AL_UNPACK_RESULT_INIT;
	al_pack_result p2 = AL_PACK_RESULT_INIT;
	al_store *s = NULL;
	char *o2 = fresh("newer"), *old0 = fresh("seq0"), *far = fresh("far"), *far2 = fresh("far"), *far3 = fresh("far");
	char *old_d = NULL, *new_d = NULL, *now = NULL;
	al_unpack_opts o = AL_UNPACK_OPTS_INIT;

	if (trust_setup(&f) != 0) {
		CU_FAIL("trust_setup");
		goto out;
	}
	old_d = tag_of(f.src, BIG);
	/* a newer pack of the same staging store moves the tag */
	if (al_store_open(&s, f.src, NULL) != 0 || add_image(s, BIG, 300000, 8) != 0) {
		al_store_free(s);
		CU_FAIL("retag");
		goto out;
	}
	al_store_free(s);
	new_d = tag_of(f.src, BIG);
	CU_ASSERT_STRING_NOT_EQUAL(old_d, new_d);
	CU_ASSERT_EQUAL(do_pack(f.src, o2, 64 * AL_KIB, NULL, NULL, f.key, &p2), 0);
	CU_ASSERT_EQUAL(do_unpack(far, o2, f.pub, &ur), 0);
	al_unpack_result_clear(&ur);

	/* the older pack, validly signed, replayed after the newer one: refused, naming tag and digests */
	CU_ASSERT_EQUAL(do_unpack(far, f.real, f.pub, &ur), AL_EVERIFY);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "'" BIG "'"));
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), old_d));
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), new_d));
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), p2.id));
	al_unpack_result_clear(&ur);
	now = tag_of(far, BIG);
	CU_ASSERT_STRING_EQUAL(now, new_d);
	free(now);

	/* a manifest without "sequence" (an older airlock's) is sequence 0: refused too, also untrusted */
	CU_ASSERT_EQUAL(forge_pack(f.real, f.real_id, old0, f.real_id), 0);
	CU_ASSERT_EQUAL(set_sequence(old0, f.real_id, -1), 0);
	CU_ASSERT_EQUAL(do_unpack(far, old0, NULL, &ur), AL_EVERIFY);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "sequence 0"));
	al_unpack_result_clear(&ur);
	now = tag_of(far, BIG);
	CU_ASSERT_STRING_EQUAL(now, new_d);
	free(now);

	/* an untrusted pack with a huge sequence does not hold a trusted key's packs back */
	CU_ASSERT_EQUAL(set_sequence(f.forged, f.real_id, 9000000000000000LL), 0);
	CU_ASSERT_EQUAL(do_unpack(far2, f.forged, NULL, &ur), 0);
	al_unpack_result_clear(&ur);
	CU_ASSERT_EQUAL(do_unpack(far2, o2, f.pub, &ur), 0);
	al_unpack_result_clear(&ur);
	now = tag_of(far2, BIG);
	CU_ASSERT_STRING_EQUAL(now, new_d);
	free(now);

	/* older, then newer, then the older again: already imported, nothing moves */
	CU_ASSERT_EQUAL(do_unpack(far3, f.real, f.pub, &ur), 0);
	al_unpack_result_clear(&ur);
	CU_ASSERT_EQUAL(do_unpack(far3, o2, f.pub, &ur), 0);
	al_unpack_result_clear(&ur);
	CU_ASSERT_EQUAL(do_unpack(far3, f.real, f.pub, &ur), 0);
	CU_ASSERT_EQUAL(ur.already, 1);
	al_unpack_result_clear(&ur);
	now = tag_of(far3, BIG);
	CU_ASSERT_STRING_EQUAL(now, new_d);
	free(now);

	/* with --allow-rollback the operator may */
	o.trust_key = f.pub;
	o.allow_rollback = 1;
	if (al_store_open(&s, far, NULL) == 0) {
		CU_ASSERT_EQUAL(al_pack_unpack(s, f.real, &o, &ur), 0);
		CU_ASSERT_EQUAL(ur.complete, 1);
	}
	al_store_free(s);
	al_unpack_result_clear(&ur);
	now = tag_of(far, BIG);
	CU_ASSERT_STRING_EQUAL(now, old_d);
	free(now);
out:
	al_unpack_result_clear(&ur);
	free(old_d);
	free(new_d);
	free(o2);
	free(old0);
	free(far);
	free(far2);
	free(far3);
	trust_teardown(&f);
}

/* ---- hostile and broken media ---------------------------------------- */

enum hostile {
	H_TRAVERSAL,
	H_ABSOLUTE,
	H_SYMLINK,
	H_HARDLINK,
	H_DEVICE,
	H_UNLISTED,
	H_DUPLICATE,
	H_OVERSIZED,
	H_FLIPPED,
	H_OTHER_PACK,
};

/*
 * Rewrite volume 1 of a pack with libarchive, changing the first blob
 * entry (or what follows it) as mode says.
 */
static int rewrite_volume(const char *from, const char *to, enum hostile mode)
{
	struct archive *in = archive_read_new(), *out = archive_write_new();
	struct archive_entry *e;
	uint8_t *data = NULL;
	int done = 0, rc = 0;

	archive_read_support_format_tar(in);
	archive_write_set_format_pax_restricted(out);
	if (archive_read_open_filename(in, from, 65536) != ARCHIVE_OK || archive_write_open_filename(out, to) != ARCHIVE_OK)
		rc = -1;
	while (rc == 0 && archive_read_next_header(in, &e) == ARCHIVE_OK) {
		size_t n = (size_t)archive_entry_size(e);
		struct archive_entry *x;
		data = realloc(data, n + 2);
		if (n > 0 && archive_read_data(in, data, n) != (la_ssize_t)n) {
			rc = -1;
			break;
		}
		if (mode == H_OTHER_PACK && strcmp(archive_entry_pathname(e), "airlock-volume.json") == 0) {
			const char *lab = "{\"pack\":\"20000101T000000Z-00000000\",\"volume\":1}\n";
			n = strlen(lab);
			memcpy(data, lab, n);
			archive_entry_set_size(e, (la_int64_t)n);
		}
		if (done || !al_str_startswith(archive_entry_pathname(e), "blobs/")) {
			archive_write_header(out, e);
			archive_write_data(out, data, n);
			continue;
		}
		done = 1;
		x = archive_entry_clone(e);
		switch (mode) {
		case H_TRAVERSAL:
			archive_entry_set_pathname(x, "../../evil");
			break;
		case H_ABSOLUTE:
			archive_entry_set_pathname(x, "/tmp/airlock-evil");
			break;
		case H_SYMLINK:
			archive_entry_set_filetype(x, AE_IFLNK);
			archive_entry_set_symlink(x, "/etc/passwd");
			archive_entry_set_size(x, 0);
			break;
		case H_HARDLINK:
			archive_entry_set_hardlink(x, "airlock-volume.json");
			archive_entry_set_size(x, 0);
			break;
		case H_DEVICE:
			archive_entry_set_filetype(x, AE_IFCHR);
			archive_entry_set_rdev(x, makedev(1, 3));
			archive_entry_set_size(x, 0);
			break;
		case H_UNLISTED:
			archive_entry_set_pathname(x, "blobs/sha256/0000000000000000000000000000000000000000000000000000000000000000");
			break;
		case H_DUPLICATE:
			archive_write_header(out, e);
			archive_write_data(out, data, n);
			break;
		case H_OVERSIZED:
			data[n] = 'x';
			archive_entry_set_size(x, (la_int64_t)(n + 1));
			n++;
			break;
		case H_FLIPPED:
			data[n / 2] ^= 0x10;
			break;
		case H_OTHER_PACK:
			break;
		}
		archive_write_header(out, x);
		if (archive_entry_size(x) > 0)
			archive_write_data(out, data, n);
		archive_entry_free(x);
	}
	archive_read_free(in);
	if (archive_write_close(out) != ARCHIVE_OK)
		rc = -1;
	archive_write_free(out);
	free(data);
	return done || mode == H_OTHER_PACK ? rc : -1;
}

/* A good pack shared by the hostile tests (one volume holds everything). */
static const char *good_pack(char *id)
{
	static char *out;
	static char saved[AL_PACK_ID_MAX + 1];
	al_pack_result pr = AL_PACK_RESULT_INIT;

	if (out == NULL) {
		char *src = make_source();
		out = fresh("good");
		if (do_pack(src, out, 0, NULL, NULL, NULL, &pr) == 0)
			memcpy(saved, pr.id, sizeof(saved));
		free(src);
	}
	memcpy(id, saved, sizeof(saved));
	return out;
}

/* Unpack a copy of the good pack whose volume 1 was made hostile; expect AL_EVERIFY naming volume and entry. */
static void expect_refused(enum hostile mode, const char *entry_word, const char *reason)
{
	char id[AL_PACK_ID_MAX + 1];
	const char *good = good_pack(id);
	char *dir = fresh("hostile"), *far = fresh("far"), *a = NULL, *b = NULL, *vol;
	al_unpack_result ur = AL_UNPACK_RESULT_INIT;
	int rc;

	if ((al_fs_mkdir_p(dir, 0755)) != 0) {
		CU_FAIL("al_fs_mkdir_p(dir, 0755)");
		goto out;
	}
	a = man_path(good, id);
	b = man_path(dir, id);
	CU_ASSERT_EQUAL(copy_file(a, b), 0);
	free(a);
	free(b);
	a = vol_path(good, id, 1);
	b = vol_path(dir, id, 1);
	CU_ASSERT_EQUAL(rewrite_volume(a, b, mode), 0);
	rc = do_unpack(far, dir, NULL, &ur);
	CU_ASSERT_EQUAL(rc, AL_EVERIFY);
	vol = al_sprintf("volume 'airlock-%s-0001.tar'", id);
	if (strstr(al_error_message(), vol) == NULL || strstr(al_error_message(), entry_word) == NULL ||
	    strstr(al_error_message(), reason) == NULL)
		fprintf(stderr, "\nunexpected message: %s\n", al_error_message());
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), vol));
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), entry_word));
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), reason));
	/* nothing outside the store, and no image named */
	CU_ASSERT_EQUAL(al_fs_exists("/tmp/airlock-evil"), 0);
	free(vol);
	vol = al_sprintf("%s/../evil", al_test_tmpdir());
	CU_ASSERT_EQUAL(al_fs_exists(vol), 0);
	CU_ASSERT(index_empty(far));
	free(vol);
out:
	al_unpack_result_clear(&ur);
	free(a);
	free(b);
	free(dir);
	free(far);
}

static void test_pack__refuses_path_traversal(void)
{
	expect_refused(H_TRAVERSAL, "entry '../../evil'", "path traversal");
}

static void test_pack__refuses_absolute_path(void)
{
	expect_refused(H_ABSOLUTE, "entry '/tmp/airlock-evil'", "absolute path");
}

static void test_pack__refuses_symlink(void)
{
	expect_refused(H_SYMLINK, "entry 'blobs/sha256/", "symbolic link");
}

static void test_pack__refuses_hard_link(void)
{
	expect_refused(H_HARDLINK, "entry 'blobs/sha256/", "hard link");
}

static void test_pack__refuses_device_node(void)
{
	expect_refused(H_DEVICE, "entry 'blobs/sha256/", "character device");
}

static void test_pack__refuses_entry_not_in_manifest(void)
{
	expect_refused(H_UNLISTED, "entry 'blobs/sha256/0000", "not in the pack manifest");
}

static void test_pack__refuses_duplicate_entry(void)
{
	expect_refused(H_DUPLICATE, "entry 'blobs/sha256/", "duplicate entry");
}

static void test_pack__refuses_oversized_entry(void)
{
	expect_refused(H_OVERSIZED, "entry 'blobs/sha256/", "oversized");
}

static void test_pack__refuses_flipped_bytes(void)
{
	expect_refused(H_FLIPPED, "entry 'blobs/sha256/", "digest");
}

static void test_pack__refuses_volume_of_another_pack(void)
{
	expect_refused(H_OTHER_PACK, "belongs to pack '20000101T000000Z-00000000'", "not to pack");
}

static void test_pack__refuses_truncated_volume(void)
{
	char id[AL_PACK_ID_MAX + 1];
	const char *good = good_pack(id);
	char *dir = fresh("trunc"), *far = fresh("far"), *a = NULL, *b = NULL;
	al_unpack_result ur = AL_UNPACK_RESULT_INIT;
	uint64_t size;

	if ((al_fs_mkdir_p(dir, 0755)) != 0) {
		CU_FAIL("al_fs_mkdir_p(dir, 0755)");
		goto out;
	}
	a = man_path(good, id);
	b = man_path(dir, id);
	CU_ASSERT_EQUAL(copy_file(a, b), 0);
	free(a);
	free(b);
	a = vol_path(good, id, 1);
	b = vol_path(dir, id, 1);
	CU_ASSERT_EQUAL(copy_file(a, b), 0);
	size = file_size(b);
	CU_ASSERT_EQUAL(truncate(b, (off_t)(size / 2 + 100)), 0);
	CU_ASSERT_EQUAL(do_unpack(far, dir, NULL, &ur), AL_EVERIFY);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "truncated"));
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "entry '"));
	CU_ASSERT(index_empty(far));
	al_unpack_result_clear(&ur);
	/* the full volume completes the import: nothing half-written was kept */
	CU_ASSERT_EQUAL(copy_file(a, b), 0);
	CU_ASSERT_EQUAL(do_unpack(far, dir, NULL, &ur), 0);
	CU_ASSERT_EQUAL(ur.complete, 1);
	CU_ASSERT(store_clean(far));
out:
	al_unpack_result_clear(&ur);
	free(a);
	free(b);
	free(dir);
	free(far);
}

static void test_pack__refuses_manifest_of_another_pack(void)
{
	char id[AL_PACK_ID_MAX + 1];
	const char *good = good_pack(id);
	char *dir = fresh("other"), *far = fresh("far"), *a = NULL, *b = NULL;
	const char *other = "20000101T000000Z-00000000";
	al_unpack_result ur = AL_UNPACK_RESULT_INIT;

	if ((al_fs_mkdir_p(dir, 0755)) != 0) {
		CU_FAIL("al_fs_mkdir_p(dir, 0755)");
		goto out;
	}
	a = man_path(good, id);
	b = man_path(dir, other);
	CU_ASSERT_EQUAL(copy_file(a, b), 0);
	CU_ASSERT_EQUAL(do_unpack(far, dir, NULL, &ur), AL_EVERIFY);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "another pack"));
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), id));
out:
	al_unpack_result_clear(&ur);
	free(a);
	free(b);
	free(dir);
	free(far);
}

/* A store that imported the good pack, then its import record (or its marks file) overwritten by text: unpack refuses it, naming it. */
static void expect_far_metadata_refused(int record, const char *text, const char *what)
{
	char id[AL_PACK_ID_MAX + 1], *far = fresh("far"), *other = fresh("other"), *path = NULL;
	const char *good = good_pack(id);
	al_unpack_result ur = AL_UNPACK_RESULT_INIT;

	CU_ASSERT_EQUAL(do_unpack(far, good, NULL, &ur), 0);
	al_unpack_result_clear(&ur);
	path = record ? al_sprintf("airlock/imported/%s.json", id) : al_strdup("airlock/pack-marks.json");
	CU_ASSERT_EQUAL(write_text(far, path, text), 0);
	/* the record is read for this pack; the marks for any pack not imported yet */
	if (!record)
		CU_ASSERT_EQUAL(forge_pack(good, id, other, "20000101T000000Z-00000001"), 0);
	CU_ASSERT_EQUAL(do_unpack(far, record ? good : other, NULL, &ur), AL_EVERIFY);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), what));
	al_unpack_result_clear(&ur);
	free(path);
	free(far);
	free(other);
}

static void test_pack__refuses_truncated_import_record(void)
{
	expect_far_metadata_refused(1, "{\"airlockImport\": 1, \"id\"", "import record");
}

static void test_pack__refuses_ill_typed_import_record(void)
{
	expect_far_metadata_refused(1, "{\"airlockImport\": 1, \"trusted\": \"yes\"}", "import record");
}

static void test_pack__refuses_damaged_pack_marks(void)
{
	expect_far_metadata_refused(0, "{\"airlockPackMarks\": 1, \"keys\": []}", "pack-marks.json");
}

/* ---- FIFOs and devices given as media ---------------------------------- */

/* Unpack dir into a fresh store in a child; 1 if it returned within 10 s (its status in *code). */
static int unpack_returns_promptly(const char *dir, int *code, char *msg, size_t msglen)
{
	char *far = fresh("far");
	int fds[2], status = 0, i, done = 0;
	pid_t pid;

	msg[0] = '\0';
	if (pipe(fds) != 0) {
		free(far);
		return 0;
	}
	pid = fork();
	if (pid == 0) {
		al_unpack_result ur = AL_UNPACK_RESULT_INIT;
		int rc;
		close(fds[0]);
		rc = do_unpack(far, dir, NULL, &ur);
		if (write(fds[1], al_error_message(), strlen(al_error_message())) < 0)
			_exit(99);
		_exit(-rc & 0xff);
	}
	close(fds[1]);
	for (i = 0; pid > 0 && i < 1000 && !done; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			done = 1;
		else
			usleep(10000);
	}
	if (pid > 0 && !done) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	} else if (done) {
		ssize_t n = read(fds[0], msg, msglen - 1);
		msg[n > 0 ? n : 0] = '\0';
		*code = WIFEXITED(status) ? -WEXITSTATUS(status) : 1;
	}
	close(fds[0]);
	free(far);
	return done;
}

/* A copy of the good pack in which name (the manifest or volume 1) is a FIFO. */
static void expect_fifo_refused(int manifest)
{
	char id[AL_PACK_ID_MAX + 1], msg[1024];
	const char *good = good_pack(id);
	char *dir = fresh("fifo"), *a = man_path(good, id), *b = man_path(dir, id);
	char *va = vol_path(good, id, 1), *vb = vol_path(dir, id, 1);
	int code = 0;

	CU_ASSERT_EQUAL(al_fs_mkdir_p(dir, 0755), 0);
	if (manifest) {
		CU_ASSERT_EQUAL(mkfifo(b, 0644), 0);
		CU_ASSERT_EQUAL(copy_file(va, vb), 0);
	} else {
		CU_ASSERT_EQUAL(copy_file(a, b), 0);
		CU_ASSERT_EQUAL(mkfifo(vb, 0644), 0);
	}
	CU_ASSERT(unpack_returns_promptly(dir, &code, msg, sizeof(msg)));
	CU_ASSERT_EQUAL(code, AL_EVERIFY);
	if (strstr(msg, "a FIFO") == NULL)
		fprintf(stderr, "\nunexpected message: %s\n", msg);
	CU_ASSERT_PTR_NOT_NULL(strstr(msg, "a FIFO"));
	CU_ASSERT_PTR_NOT_NULL(strstr(msg, manifest ? b : vb));
	free(dir);
	free(a);
	free(b);
	free(va);
	free(vb);
}

static void test_pack__refuses_fifo_volume_without_blocking(void)
{
	expect_fifo_refused(0);
}

static void test_pack__refuses_fifo_manifest_without_blocking(void)
{
	expect_fifo_refused(1);
}

/* ---- an index entry naming a non-manifest blob -------------------------- */

/* A source store whose index names a blob that is not a manifest, under media type mt (NULL: the manifest type). */
static void expect_index_entry_refused(const char *mt, const char *reason)
{
	char *src = make_source(), *out = fresh("out"), *far = fresh("far");
	uint8_t layer[4096];
	unsigned seed = 5;
	al_store *s = NULL;
	al_descriptor desc;
	al_unpack_result ur = AL_UNPACK_RESULT_INIT;
	al_pack_result pr = AL_PACK_RESULT_INIT;

	memset(&desc, 0, sizeof(desc));
	fill_random(layer, sizeof(layer), &seed);
	if (al_store_open(&s, src, NULL) != 0 || al_store_put_blob(s, layer, sizeof(layer), &desc.digest) != 0) {
		al_store_free(s);
		CU_FAIL("store");
		goto out;
	}
	desc.media_type = (char *)(mt != NULL ? mt : AL_MT_OCI_MANIFEST);
	desc.size = sizeof(layer);
	CU_ASSERT_EQUAL(al_store_tag(s, "quay.io/airlock-test/not-a-manifest:1", &desc), 0);
	al_store_free(s);
	CU_ASSERT_EQUAL(do_pack(src, out, 0, NULL, NULL, NULL, &pr), 0);
	CU_ASSERT_EQUAL(do_unpack(far, out, NULL, &ur), AL_EVERIFY);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "quay.io/airlock-test/not-a-manifest:1"));
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), reason));
	CU_ASSERT(index_empty(far));
out:
	al_unpack_result_clear(&ur);
	free(src);
	free(out);
	free(far);
}

static void test_pack__refuses_index_entry_naming_a_layer_blob(void)
{
	expect_index_entry_refused(NULL, "not an image manifest or index");
}

static void test_pack__refuses_index_entry_with_a_layer_media_type(void)
{
	expect_index_entry_refused(AL_MT_OCI_LAYER_GZIP, "not an image manifest or index");
}

/* kill -9 an unpack at random moments; each rerun must finish with a clean store. */
static void test_pack__kill9_during_unpack_then_rerun_is_clean(void)
{
	char *src = make_source(), *out = fresh("out");
	al_pack_result pr = AL_PACK_RESULT_INIT;
	al_store *s = NULL;
	unsigned seed = al_test_seed(), round;

	if ((al_store_open(&s, src, NULL)) != 0) {
		CU_FAIL("al_store_open(&s, src, NULL)");
		goto out;
	}
	CU_ASSERT_EQUAL(add_image(s, "quay.io/airlock-test/huge:1", 6 * 1024 * 1024, 3), 0);
	al_store_free(s);
	if ((do_pack(src, out, 2 * AL_MIB, NULL, NULL, NULL, &pr)) != 0) {
		CU_FAIL("do_pack(src, out, 2 * AL_MIB, NULL, NULL, NULL, &pr)");
		goto out;
	}
	for (round = 0; round < 4; round++) {
		char *far = fresh("far");
		al_unpack_result ur = AL_UNPACK_RESULT_INIT;
		unsigned kills = 0;
		int rc = -1, attempt;

		for (attempt = 0; attempt < 6; attempt++) {
			unsigned delay_us = (unsigned)(rand_r(&seed) % 60000);
			pid_t pid = fork();
			int status = 0;
			if (pid == 0) {
				al_unpack_result cr = AL_UNPACK_RESULT_INIT;
				rc = do_unpack(far, out, NULL, &cr);
				_exit(rc == 0 && cr.complete ? 0 : 1);
			}
			if (pid < 0) {
				CU_FAIL("fork");
				break;
			}
			usleep(delay_us);
			if (kill(pid, SIGKILL) == 0)
				kills++;
			waitpid(pid, &status, 0);
			printf("[round %u: kill -9 after %u us%s] ", round, delay_us,
			       WIFSIGNALED(status) ? "" : ", had finished");
		}
		rc = do_unpack(far, out, NULL, &ur);
		if (rc != 0)
			fprintf(stderr, "\nrerun after kill -9: %s\n", al_error_message());
		CU_ASSERT_EQUAL(rc, 0);
		CU_ASSERT_EQUAL(ur.complete, 1);
		CU_ASSERT(same_stores(src, far));
		CU_ASSERT(store_clean(far));
		CU_ASSERT(kills > 0);
		al_unpack_result_clear(&ur);
		free(far);
	}
out:
	free(src);
	free(out);
}

static void test_pack__inventory_lists_blobs_signatures_and_packs(void)
{
	char *src = make_source();
	al_store *s = NULL;
	json_t *j = NULL, *v;
	size_t i, found = 0;

	if ((al_store_open(&s, src, NULL)) != 0) {
		CU_FAIL("al_store_open(&s, src, NULL)");
		goto out;
	}
	CU_ASSERT_EQUAL(al_pack__inventory_json(s, &j), 0);
	al_store_free(s);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(j, "airlockInventory")), 1);
	CU_ASSERT_EQUAL(json_array_size(json_object_get(j, "packs")), 0);
	json_array_foreach(json_object_get(j, "blobs"), i, v)
		found += strcmp(json_string_value(v), "sha256:" SIG_HEX) == 0;
	CU_ASSERT_EQUAL(found, 1);
	CU_ASSERT_EQUAL(json_array_size(json_object_get(j, "blobs")), 25);
	CU_ASSERT_STRING_EQUAL(al_json_str(json_array_get(json_object_get(j, "signatures"), 0), "path"),
			       "signatures/sha256=" SIG_HEX "/signature-1");
out:
	json_decref(j);
	free(src);
}

int main(void)
{
	CU_TestInfo tests[] = {
		{"test_pack__round_trip_split_across_volumes", test_pack__round_trip_split_across_volumes},
		{"test_pack__volume_size_below_minimum_is_refused", test_pack__volume_size_below_minimum_is_refused},
		{"test_pack__volumes_in_any_order_over_several_runs", test_pack__volumes_in_any_order_over_several_runs},
		{"test_pack__delta_since_carries_only_new_and_matches_full", test_pack__delta_since_carries_only_new_and_matches_full},
		{"test_pack__delta_have_packs_exactly_what_the_inventory_lacks", test_pack__delta_have_packs_exactly_what_the_inventory_lacks},
		{"test_pack__delta_without_its_base_is_refused", test_pack__delta_without_its_base_is_refused},
		{"test_pack__signed_pack_verifies_and_bad_signatures_import_nothing", test_pack__signed_pack_verifies_and_bad_signatures_import_nothing},
		{"test_pack__refuses_truncated_releases_json", test_pack__refuses_truncated_releases_json},
		{"test_pack__refuses_ill_typed_releases_json", test_pack__refuses_ill_typed_releases_json},
		{"test_pack__refuses_release_that_is_not_an_object", test_pack__refuses_release_that_is_not_an_object},
		{"test_pack__refuses_releases_json_that_is_an_array", test_pack__refuses_releases_json_that_is_an_array},
		{"test_pack__refuses_damaged_pack_sequence", test_pack__refuses_damaged_pack_sequence},
		{"test_pack__refuses_blobs_of_an_unknown_algorithm", test_pack__refuses_blobs_of_an_unknown_algorithm},
		{"test_pack__refuses_misnamed_file_among_blobs", test_pack__refuses_misnamed_file_among_blobs},
		{"test_pack__refuses_misnamed_file_among_sha512_blobs", test_pack__refuses_misnamed_file_among_sha512_blobs},
		{"test_pack__refuses_damaged_since_record", test_pack__refuses_damaged_since_record},
		{"test_pack__sha512_blobs_round_trip_and_are_verified_with_sha512", test_pack__sha512_blobs_round_trip_and_are_verified_with_sha512},
		{"test_pack__untrusted_forged_pack_does_not_preempt_a_trusted_one", test_pack__untrusted_forged_pack_does_not_preempt_a_trusted_one},
		{"test_pack__forged_signature_file_never_blocks_a_trusted_pack", test_pack__forged_signature_file_never_blocks_a_trusted_pack},
		{"test_pack__staged_parts_are_rehashed_before_reuse", test_pack__staged_parts_are_rehashed_before_reuse},
		{"test_pack__volumes_only_after_an_untrusted_import_ask_for_the_manifest", test_pack__volumes_only_after_an_untrusted_import_ask_for_the_manifest},
		{"test_pack__replayed_older_signed_pack_does_not_roll_tags_back", test_pack__replayed_older_signed_pack_does_not_roll_tags_back},
		{"test_pack__forged_pack_after_a_trusted_one_does_not_stick", test_pack__forged_pack_after_a_trusted_one_does_not_stick},
		{"test_pack__failed_pack_leaves_no_volume_behind", test_pack__failed_pack_leaves_no_volume_behind},
		{"test_pack__refuses_truncated_import_record", test_pack__refuses_truncated_import_record},
		{"test_pack__refuses_ill_typed_import_record", test_pack__refuses_ill_typed_import_record},
		{"test_pack__refuses_damaged_pack_marks", test_pack__refuses_damaged_pack_marks},
		{"test_pack__refuses_path_traversal", test_pack__refuses_path_traversal},
		{"test_pack__refuses_absolute_path", test_pack__refuses_absolute_path},
		{"test_pack__refuses_symlink", test_pack__refuses_symlink},
		{"test_pack__refuses_hard_link", test_pack__refuses_hard_link},
		{"test_pack__refuses_device_node", test_pack__refuses_device_node},
		{"test_pack__refuses_entry_not_in_manifest", test_pack__refuses_entry_not_in_manifest},
		{"test_pack__refuses_duplicate_entry", test_pack__refuses_duplicate_entry},
		{"test_pack__refuses_oversized_entry", test_pack__refuses_oversized_entry},
		{"test_pack__refuses_flipped_bytes", test_pack__refuses_flipped_bytes},
		{"test_pack__refuses_volume_of_another_pack", test_pack__refuses_volume_of_another_pack},
		{"test_pack__refuses_truncated_volume", test_pack__refuses_truncated_volume},
		{"test_pack__refuses_manifest_of_another_pack", test_pack__refuses_manifest_of_another_pack},
		{"test_pack__refuses_fifo_volume_without_blocking", test_pack__refuses_fifo_volume_without_blocking},
		{"test_pack__refuses_fifo_manifest_without_blocking", test_pack__refuses_fifo_manifest_without_blocking},
		{"test_pack__refuses_index_entry_naming_a_layer_blob", test_pack__refuses_index_entry_naming_a_layer_blob},
		{"test_pack__refuses_index_entry_with_a_layer_media_type", test_pack__refuses_index_entry_with_a_layer_media_type},
		{"test_pack__kill9_during_unpack_then_rerun_is_clean", test_pack__kill9_during_unpack_then_rerun_is_clean},
		{"test_pack__inventory_lists_blobs_signatures_and_packs", test_pack__inventory_lists_blobs_signatures_and_packs},
		{"test_pack__untrusted_import_is_quarantined", test_pack__untrusted_import_is_quarantined},
		{"test_pack__promote_needs_the_signing_key", test_pack__promote_needs_the_signing_key},
		{"test_pack__untrusted_marks_follow_the_files", test_pack__untrusted_marks_follow_the_files},
		{"test_pack__untrusted_release_records_marked_and_vouched",
		 test_pack__untrusted_release_records_marked_and_vouched},
		CU_TEST_INFO_NULL,
	};

	return al_test_run("pack", tests);
}
