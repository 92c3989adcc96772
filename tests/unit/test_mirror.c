/* test_mirror.c: al_mirror_run, the whole mirror workflow an embedding
 * program calls (options merged with an imageset, refusals, the result). */
#include <stdlib.h>
#include <string.h>

#include "airlock.h"
#include "al_test.h"

static const char *const sample_release[] = {
    "quay.io/airlock-samples/release:4.14.1-x86_64"};

static void test_mirror__run_from_layout_fills_result(void)
{
	char *layout = al_sprintf("%s/samples/layout", al_test_source_dir());
	char *dst = al_path_join(al_test_tmpdir(), "run-store");
	char *loc = al_sprintf("oci:%s", layout);
	char prefix[] = "quay.io/airlock-samples";
	al_imageset_source src = {prefix, loc};
	al_imageset cfg;
	al_store_opts so = AL_STORE_OPTS_INIT;
	al_transfer_opts to = AL_TRANSFER_OPTS_INIT;
	al_mirror_opts mo = AL_MIRROR_OPTS_INIT;
	al_mirror_result res = AL_MIRROR_RESULT_INIT;
	al_store *s = NULL;
	int rc;

	memset(&cfg, 0, sizeof(cfg));
	cfg.sources = &src;
	cfg.nsources = 1;
	to.parallel = 2;
	mo.releases = sample_release;
	mo.nreleases = 1;
	mo.flags = AL_MIRROR_ALLOW_UNSIGNED | AL_MIRROR_NO_DEFAULT_KEYS;
	mo.transfer = &to;
	so.create = 1;
	CU_ASSERT_EQUAL(al_store_open(&s, dst, &so), 0);
	rc = al_mirror_run(s, &cfg, &mo, &res);
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(res.refused, 0);
	CU_ASSERT(res.ran);
	CU_ASSERT_EQUAL(res.releases_mirrored, 1);
	CU_ASSERT(res.images > 1);
	CU_ASSERT(res.report.stats.bytes_transferred > 0);
	CU_ASSERT_EQUAL(res.report.nerrors, 0);
	al_mirror_result_clear(&res);
	/* a rerun transfers nothing and mirrors the same */
	rc = al_mirror_run(s, &cfg, &mo, &res);
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(res.releases_mirrored, 1);
	CU_ASSERT_EQUAL(res.report.stats.blobs_transferred, 0);
	al_mirror_result_clear(&res);
	al_store_free(s);
	free(loc);
	free(dst);
	free(layout);
}

static void test_mirror__refusals_touch_no_store(void)
{
	al_mirror_opts mo = AL_MIRROR_OPTS_INIT;
	al_mirror_plan *plan = NULL;
	const char *const other[] = {"example.com/a/release:1"};

	/* nothing to mirror */
	CU_ASSERT_EQUAL(al_mirror_plan_new(&plan, NULL, &mo), AL_EINVAL);
	CU_ASSERT(strstr(al_error_message(), "nothing to mirror") != NULL);
	CU_ASSERT_PTR_NULL(plan);
	/* a release not Red Hat's and no keys */
	mo.releases = other;
	mo.nreleases = 1;
	CU_ASSERT_EQUAL(al_mirror_plan_new(&plan, NULL, &mo), AL_EINVAL);
	CU_ASSERT(strstr(al_error_message(), "no trusted keys") != NULL);
	/* a bad identity policy names it */
	mo.flags = AL_MIRROR_ALLOW_UNSIGNED;
	mo.identity_policy = "loose";
	CU_ASSERT_EQUAL(al_mirror_plan_new(&plan, NULL, &mo), AL_EINVAL);
	CU_ASSERT(strstr(al_error_message(), "'loose'") != NULL);
	mo.identity_policy = NULL;
	mo.signature_timeout = "0s";
	CU_ASSERT_EQUAL(al_mirror_plan_new(&plan, NULL, &mo), AL_EINVAL);
	mo.signature_timeout = NULL;
	/* a missing keyring file is the keyring's error, naming it */
	mo.keyrings = (const char *const[]){"/nonexistent/keys.gpg"};
	mo.nkeyrings = 1;
	CU_ASSERT(al_mirror_plan_new(&plan, NULL, &mo) < 0);
	CU_ASSERT(strstr(al_error_message(), "/nonexistent/keys.gpg") != NULL);
	CU_ASSERT_PTR_NULL(plan);
	mo.nkeyrings = 0;
	/* a plan that makes sense */
	CU_ASSERT_EQUAL(al_mirror_plan_new(&plan, NULL, &mo), 0);
	CU_ASSERT_PTR_NOT_NULL(plan);
	al_mirror_plan_free(plan);
	al_mirror_plan_free(NULL);
}

static void test_mirror__newer_opts_version_is_refused(void)
{
	al_mirror_opts mo = AL_MIRROR_OPTS_INIT;
	al_mirror_result res = AL_MIRROR_RESULT_INIT;

	CU_ASSERT_EQUAL(mo.version, AL_MIRROR_OPTS_VERSION);
	mo.version = AL_MIRROR_OPTS_VERSION + 1;
	mo.releases = sample_release;
	mo.nreleases = 1;
	CU_ASSERT_EQUAL(al_mirror_run(NULL, NULL, &mo, &res), AL_EINVAL);
	CU_ASSERT(res.refused);
	CU_ASSERT(strstr(al_error_message(), "version") != NULL);
	al_mirror_result_clear(&res);
}

static void test_mirror__push_needs_registry_and_result(void)
{
	al_mirror_opts mo = AL_MIRROR_OPTS_INIT;
	al_mirror_plan *plan = NULL;
	al_push_opts po = AL_PUSH_OPTS_INIT;
	al_push_result pr = AL_PUSH_RESULT_INIT;

	mo.releases = sample_release;
	mo.nreleases = 1;
	mo.flags = AL_MIRROR_ALLOW_UNSIGNED;
	mo.push = &po;
	/* no registry, then no push_result: refused before any store */
	mo.push_result = &pr;
	CU_ASSERT_EQUAL(al_mirror_plan_new(&plan, NULL, &mo), AL_EINVAL);
	CU_ASSERT(strstr(al_error_message(), "registry") != NULL);
	po.registry = "127.0.0.1:5000";
	mo.push_result = NULL;
	CU_ASSERT_EQUAL(al_mirror_plan_new(&plan, NULL, &mo), AL_EINVAL);
	CU_ASSERT_PTR_NULL(plan);
	mo.push_result = &pr;
	CU_ASSERT_EQUAL(al_mirror_plan_new(&plan, NULL, &mo), 0);
	al_mirror_plan_free(plan);
	plan = NULL;
	/* a version 3 caller's struct ends before push: never read */
	mo.version = 3;
	mo.push_result = NULL;
	CU_ASSERT_EQUAL(al_mirror_plan_new(&plan, NULL, &mo), 0);
	al_mirror_plan_free(plan);
	/* al_push_store itself wants a registry */
	po.registry = NULL;
	CU_ASSERT_EQUAL(al_push_store(NULL, &po, &pr), AL_EINVAL);
	al_push_result_clear(&pr);
	al_push_result_clear(NULL);
}

int main(void)
{
	CU_TestInfo tests[] = {
	    {"test_mirror__run_from_layout_fills_result",
	     test_mirror__run_from_layout_fills_result},
	    {"test_mirror__refusals_touch_no_store",
	     test_mirror__refusals_touch_no_store},
	    {"test_mirror__newer_opts_version_is_refused",
	     test_mirror__newer_opts_version_is_refused},
	    {"test_mirror__push_needs_registry_and_result",
	     test_mirror__push_needs_registry_and_result},
	    CU_TEST_INFO_NULL,
	};
	return al_test_run("mirror", tests);
}
