/* test_transfer.c: the transfer engine and mirror between OCI layouts (no network), and push naming. */
#include <stdlib.h>
#include <string.h>

#include "airlock.h"
#include "al_test.h"

static char *samples_layout(void)
{
	return al_sprintf("%s/samples/layout", al_test_source_dir());
}

static void test_transfer__push_target_drops_registry(void)
{
	char *repo = NULL, *ref = NULL;

	CU_ASSERT_EQUAL(al_push_target("quay.io/a/b:1.0", "mirror", &repo, &ref), 0);
	CU_ASSERT_STRING_EQUAL(repo, "mirror/a/b");
	CU_ASSERT_STRING_EQUAL(ref, "1.0");
	free(repo);
	free(ref);
	CU_ASSERT_EQUAL(al_push_target("quay.io/a/b@sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "", &repo, &ref), 0);
	CU_ASSERT_STRING_EQUAL(repo, "a/b");
	CU_ASSERT_STRING_EQUAL(ref, "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	free(repo);
	free(ref);
	CU_ASSERT_EQUAL(al_push_target("busybox", "p/q", &repo, &ref), 0);
	CU_ASSERT_STRING_EQUAL(repo, "p/q/library/busybox");
	CU_ASSERT_STRING_EQUAL(ref, "latest");
	free(repo);
	free(ref);
	CU_ASSERT(al_push_target("Not A Ref", "p", &repo, &ref) < 0);
}

static void collect(al_store *s, char ***names, al_digest **digests, size_t *n)
{
	al_store_image *imgs = NULL;
	size_t i;

	*n = 0;
	CU_ASSERT_EQUAL(al_store_list(s, &imgs, n), 0);
	*names = calloc(*n + 1, sizeof(char *));
	*digests = calloc(*n + 1, sizeof(al_digest));
	for (i = 0; i < *n; i++) {
		(*names)[i] = al_strdup(imgs[i].name);
		(*digests)[i] = imgs[i].desc.digest;
	}
	al_store_images_free(imgs, *n);
}

static void test_transfer__mirror_from_layout_then_rerun_is_free(void)
{
	char *layout = samples_layout();
	char *dst = al_path_join(al_test_tmpdir(), "mirror-store");
	const char *rel[] = {"quay.io/airlock-samples/release:4.14.1-x86_64"};
	al_imageset_source src = {NULL, NULL};
	al_store_opts so = {.create = 1};
	al_store *s = NULL;
	al_transfer_opts to = AL_TRANSFER_OPTS_INIT;
	al_mirror_report rep = AL_MIRROR_REPORT_INIT;
	al_check_result cr = AL_CHECK_RESULT_INIT;
	char *loc = al_sprintf("oci:%s", layout);
	int rc;

	src.location = loc;
	src.prefix = al_strdup("quay.io/airlock-samples");
	to.sources = &src;
	to.nsources = 1;
	to.parallel = 4;
	CU_ASSERT_EQUAL(al_store_open(&s, dst, &so), 0);
	rc = al_mirror(s, rel, 1, NULL, 0, &to, &rep);
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(rep.nreleases, 1);
	CU_ASSERT_STRING_EQUAL(rep.releases[0].version, "4.14.1");
	CU_ASSERT(rep.releases[0].components > 0);
	CU_ASSERT(rep.stats.blobs_transferred > 0);
	CU_ASSERT_EQUAL(rep.stats.images_failed, 0);
	al_mirror_report_clear(&rep);
	/* a rerun transfers nothing */
	rc = al_mirror(s, rel, 1, NULL, 0, &to, &rep);
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(rep.stats.blobs_transferred, 0);
	CU_ASSERT(rep.stats.blobs_present > 0);
	al_mirror_report_clear(&rep);
	CU_ASSERT_EQUAL(al_store_check(s, 0, NULL, NULL, &cr), 0);
	CU_ASSERT_EQUAL(cr.missing + cr.corrupt + cr.invalid + cr.unreferenced, 0);
	CU_ASSERT(cr.images >= 2);
	al_store_free(s);
	free(src.prefix);
	free(loc);
	free(layout);
	free(dst);
}

static void test_transfer__missing_image_fails_alone(void)
{
	char *layout = samples_layout();
	char *dst = al_path_join(al_test_tmpdir(), "partial-store");
	al_store_opts so = {.create = 1};
	al_store *s = NULL;
	al_transfer *t = NULL;
	al_imgref good = {0}, bad = {0};
	char *goodref = al_sprintf("oci:%s:quay.io/airlock-samples/release:4.14.1-x86_64", layout);
	char *badref = al_sprintf("oci:%s:no/such:image", layout);
	int gi, bi, st = 0;
	const char *msg = NULL;
	al_store_image found;

	CU_ASSERT_EQUAL(al_store_open(&s, dst, &so), 0);
	CU_ASSERT_EQUAL(al_transfer_new_to_store(&t, s, NULL), 0);
	CU_ASSERT_EQUAL(al_imgref_parse(&good, goodref), 0);
	CU_ASSERT_EQUAL(al_imgref_parse(&bad, badref), 0);
	gi = al_transfer_add(t, &good, "good");
	bi = al_transfer_add(t, &bad, "bad");
	CU_ASSERT(gi >= 0 && bi >= 0);
	CU_ASSERT(al_transfer_run(t, NULL) < 0);
	al_transfer_result(t, gi, &st, NULL, NULL, NULL);
	CU_ASSERT_EQUAL(st, 0);
	al_transfer_result(t, bi, &st, NULL, NULL, &msg);
	CU_ASSERT_EQUAL(st, AL_ENOTFOUND);
	if (st != AL_ENOTFOUND)
		printf("status %d: %s\n", st, msg);
	CU_ASSERT_PTR_NOT_NULL(strstr(msg, "no/such:image"));
	CU_ASSERT_EQUAL(al_store_find(s, "good", &found), 0);
	al_store_image_clear(&found);
	CU_ASSERT_EQUAL(al_store_find(s, "bad", &found), AL_ENOTFOUND);
	al_transfer_free(t);
	al_imgref_clear(&good);
	al_imgref_clear(&bad);
	al_store_free(s);
	free(goodref);
	free(badref);
	free(layout);
	free(dst);
}

static void test_transfer__copy_preserves_digests(void)
{
	char *layout = samples_layout();
	char *dst = al_path_join(al_test_tmpdir(), "copy-store");
	al_store_opts ro = {.readonly = 1}, so = {.create = 1};
	al_store *src = NULL, *s = NULL;
	al_transfer *t = NULL;
	char **names = NULL;
	al_digest *digests = NULL;
	size_t n = 0, i;

	CU_ASSERT_EQUAL(al_store_open(&src, layout, &ro), 0);
	CU_ASSERT_EQUAL(al_store_open(&s, dst, &so), 0);
	collect(src, &names, &digests, &n);
	CU_ASSERT(n > 0);
	CU_ASSERT_EQUAL(al_transfer_new_to_store(&t, s, NULL), 0);
	for (i = 0; i < n; i++)
		CU_ASSERT(al_transfer_add_from_store(t, src, names[i], names[i]) >= 0);
	CU_ASSERT_EQUAL(al_transfer_run(t, NULL), 0);
	for (i = 0; i < n; i++) {
		al_store_image img;
		CU_ASSERT_EQUAL(al_store_find(s, names[i], &img), 0);
		CU_ASSERT(al_digest_equal(&img.desc.digest, &digests[i]));
		al_store_image_clear(&img);
		free(names[i]);
	}
	free(names);
	free(digests);
	al_transfer_free(t);
	al_store_free(s);
	al_store_free(src);
	free(layout);
	free(dst);
}

/* A held image arrives (manifest and blobs stored) but is named only by
 * al_transfer_tag; a name it would replace stays until then. */
static void test_transfer__held_image_is_named_only_when_tagged(void)
{
	char *layout = samples_layout();
	char *dst = al_path_join(al_test_tmpdir(), "held-store");
	char *ref = al_sprintf("oci:%s:quay.io/airlock-samples/release:4.14.1-x86_64", layout);
	char *comp = al_sprintf("oci:%s:quay.io/airlock-samples/ocp-v4.0-art-dev@sha256:7026db9f135613885a678be3b2a287ad01a12e62f37c4c6754a01fb7dfdd9437", layout);
	al_store_opts so = {.create = 1};
	al_store *s = NULL;
	al_transfer *t = NULL, *t2 = NULL;
	al_imgref ir = {0}, ic = {0};
	al_store_image found;
	al_digest rd, cd;
	int i, c, st = -1;

	CU_ASSERT_EQUAL(al_store_open(&s, dst, &so), 0);
	CU_ASSERT_EQUAL(al_imgref_parse(&ir, ref), 0);
	CU_ASSERT_EQUAL(al_imgref_parse(&ic, comp), 0);
	/* "name" refers to the component first */
	CU_ASSERT_EQUAL(al_transfer_new_to_store(&t, s, NULL), 0);
	c = al_transfer_add(t, &ic, "name");
	CU_ASSERT_EQUAL(al_transfer_run(t, NULL), 0);
	al_transfer_result(t, c, &st, &cd, NULL, NULL);
	CU_ASSERT_EQUAL(st, 0);
	/* the release under the same name, held */
	CU_ASSERT_EQUAL(al_transfer_new_to_store(&t2, s, NULL), 0);
	i = al_transfer_add(t2, &ir, "name");
	CU_ASSERT(i >= 0);
	CU_ASSERT_EQUAL(al_transfer_tag(t2, i, NULL), AL_EINVAL); /* not run */
	CU_ASSERT_EQUAL(al_transfer_hold(t2, i), 0);
	CU_ASSERT_EQUAL(al_transfer_hold(t2, i + 1), AL_EINVAL);
	CU_ASSERT_EQUAL(al_transfer_run(t2, NULL), 0);
	al_transfer_result(t2, i, &st, &rd, NULL, NULL);
	CU_ASSERT_EQUAL(st, 0);
	CU_ASSERT_EQUAL(al_store_has_blob(s, &rd, NULL), 1);
	CU_ASSERT_EQUAL(al_store_find(s, "name", &found), 0);
	CU_ASSERT(al_digest_equal(&found.desc.digest, &cd));
	al_store_image_clear(&found);
	/* named on request: elsewhere, then under its own name */
	CU_ASSERT_EQUAL(al_transfer_tag(t2, i, "other"), 0);
	CU_ASSERT_EQUAL(al_store_find(s, "other", &found), 0);
	CU_ASSERT(al_digest_equal(&found.desc.digest, &rd));
	al_store_image_clear(&found);
	CU_ASSERT_EQUAL(al_store_find(s, "name", &found), 0);
	CU_ASSERT(al_digest_equal(&found.desc.digest, &cd));
	al_store_image_clear(&found);
	CU_ASSERT_EQUAL(al_transfer_tag(t2, i, NULL), 0);
	CU_ASSERT_EQUAL(al_store_find(s, "name", &found), 0);
	CU_ASSERT(al_digest_equal(&found.desc.digest, &rd));
	al_store_image_clear(&found);
	al_transfer_free(t);
	al_transfer_free(t2);
	al_imgref_clear(&ir);
	al_imgref_clear(&ic);
	al_store_free(s);
	free(ref);
	free(comp);
	free(layout);
	free(dst);
}

int main(void)
{
	CU_TestInfo tests[] = {
		{"test_transfer__push_target_drops_registry", test_transfer__push_target_drops_registry},
		{"test_transfer__mirror_from_layout_then_rerun_is_free", test_transfer__mirror_from_layout_then_rerun_is_free},
		{"test_transfer__missing_image_fails_alone", test_transfer__missing_image_fails_alone},
		{"test_transfer__copy_preserves_digests", test_transfer__copy_preserves_digests},
		{"test_transfer__held_image_is_named_only_when_tagged", test_transfer__held_image_is_named_only_when_tagged},
		CU_TEST_INFO_NULL,
	};
	return al_test_run("transfer", tests);
}
