/* test_verify_image.c: al_verify_image_run (src/signing/verify_image.c) and
 * al_catalog_run (src/catalog/catalog_run.c) as entries: versioned options, what
 * each mode refuses, events instead of output.
 * al-tier: quick */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "airlock/catalog.h"
#include "airlock/delete.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/sig.h"
#include "airlock/verify_image.h"
#include "al_test.h"

/* What the events of a run were. */
typedef struct seen {
	size_t n, wrote, bad, failed;
	char last[512];
} seen;

static void on_vi(void *ud, const al_verify_image_event *ev)
{
	seen *s = ud;

	s->n++;
	if (ev->kind == AL_VERIFY_IMAGE_EV_WROTE) {
		s->wrote++;
		snprintf(s->last, sizeof(s->last), "%s", ev->subject);
	} else if (ev->kind == AL_VERIFY_IMAGE_EV_BAD_ARGUMENT) {
		s->bad++;
	} else if (ev->kind == AL_VERIFY_IMAGE_EV_FAILED) {
		s->failed++;
	}
}

static void test_verify_image__refuses_newer_opts_version(void)
{
	al_verify_image_opts o = AL_VERIFY_IMAGE_OPTS_INIT;
	const char *img = "docker://127.0.0.1:1/a@sha256:"
	                  "00000000000000000000000000000000"
	                  "00000000000000000000000000000000";
	seen s;

	memset(&s, 0, sizeof(s));
	o.on_event = on_vi;
	o.ud = &s;
	o.version = AL_VERIFY_IMAGE_OPTS_VERSION + 1;
	CU_ASSERT_EQUAL(al_verify_image_run(&o, &img, 1), AL_EINVAL);
	CU_ASSERT_EQUAL(s.n, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "newer"));
	CU_ASSERT_EQUAL(al_verify_image_run(NULL, &img, 1), AL_EINVAL);
}

static void test_verify_image__zeroed_opts_read_as_version_1(void)
{
	al_verify_image_opts o;
	const char *mirror = "mirror.example:5000/ns";
	char dir[1024], want[1200];
	seen s;

	memset(&o, 0, sizeof(o));
	memset(&s, 0, sizeof(s));
	snprintf(dir, sizeof(dir), "%s/vi-config", al_test_tmpdir());
	o.mode = AL_VERIFY_IMAGE_WRITE_CONFIG;
	o.config_dir = dir;
	o.mirrors = &mirror;
	o.nmirrors = 1;
	o.on_event = on_vi;
	o.ud = &s;
	CU_ASSERT_EQUAL(al_verify_image_run(&o, NULL, 0), 0);
	/* no key: registries.d only, said by one event, on disk */
	CU_ASSERT_EQUAL(s.wrote, 1);
	snprintf(want, sizeof(want), "%s/registries.d/airlock-sigstore.yaml",
	         dir);
	CU_ASSERT_STRING_EQUAL(s.last, want);
	CU_ASSERT_EQUAL(al_fs_exists(want), 1);
}

static void test_verify_image__modes_refuse_missing_inputs(void)
{
	al_verify_image_opts o = AL_VERIFY_IMAGE_OPTS_INIT;
	seen s;

	memset(&s, 0, sizeof(s));
	o.on_event = on_vi;
	o.ud = &s;
	/* no image and no bundle */
	CU_ASSERT_EQUAL(al_verify_image_run(&o, NULL, 0), AL_EINVAL);
	o.mode = AL_VERIFY_IMAGE_WRITE_CONFIG; /* no directory, no mirror */
	CU_ASSERT_EQUAL(al_verify_image_run(&o, NULL, 0), AL_EINVAL);
	o.mode = AL_VERIFY_IMAGE_CARRY; /* no store */
	CU_ASSERT_EQUAL(al_verify_image_run(&o, NULL, 0), AL_EINVAL);
	o.mode = (al_verify_image_mode)42;
	CU_ASSERT_EQUAL(al_verify_image_run(&o, NULL, 0), AL_EINVAL);
	CU_ASSERT_EQUAL(s.n, 0);
}

static void test_verify_image__bad_image_is_an_event(void)
{
	al_verify_image_opts o = AL_VERIFY_IMAGE_OPTS_INIT;
	const char *imgs[] = {"oci:/nowhere", "docker://127.0.0.1:1/a@bad"};
	char key[1024];
	seen s;

	memset(&s, 0, sizeof(s));
	snprintf(key, sizeof(key),
	         "%s/tests/fixtures/containers-image-cosign/cosign.pub",
	         al_test_source_dir());
	o.keys = (const char *const[]){key};
	o.nkeys = 1;
	o.on_event = on_vi;
	o.ud = &s;
	CU_ASSERT_EQUAL(al_verify_image_run(&o, imgs, 2), 0);
	/* each image ends in one outcome; neither reached a network */
	CU_ASSERT_EQUAL(s.bad + s.failed, 2);
	CU_ASSERT_EQUAL(s.n, 2);
	/* an unreadable key: one INPUT_FAILED outcome, no image looked at */
	memset(&s, 0, sizeof(s));
	snprintf(key, sizeof(key), "%s/no-such.pub", al_test_tmpdir());
	CU_ASSERT_EQUAL(al_verify_image_run(&o, imgs, 2), 0);
	CU_ASSERT_EQUAL(s.n, 1);
	CU_ASSERT_EQUAL(s.bad + s.failed, 0);
}

typedef struct cat_seen {
	size_t n, done;
} cat_seen;

static void on_cat(void *ud, const al_catalog_run_event *ev)
{
	cat_seen *s = ud;

	s->n++;
	if (ev->kind == AL_CATALOG_RUN_EV_DONE)
		s->done++;
}

static void test_verify_image__catalog_run_versions_and_list(void)
{
	al_catalog_run_opts o = AL_CATALOG_RUN_OPTS_INIT;
	al_store_opts so = AL_STORE_OPTS_INIT;
	al_catalog_run_report rep = AL_CATALOG_RUN_REPORT_INIT;
	al_store *st = NULL;
	char dir[1024];
	cat_seen s;

	memset(&s, 0, sizeof(s));
	snprintf(dir, sizeof(dir), "%s/cr-store", al_test_tmpdir());
	so.create = 1;
	CU_ASSERT_EQUAL(al_store_open(&st, dir, &so), 0);
	if (st == NULL)
		return;
	o.on_event = on_cat;
	o.ud = &s;
	o.version = AL_CATALOG_RUN_OPTS_VERSION + 1;
	CU_ASSERT_EQUAL(al_catalog_run(st, NULL, &o, &rep), AL_EINVAL);
	CU_ASSERT_EQUAL(rep.nimages, 0);
	o.version = AL_CATALOG_RUN_OPTS_VERSION;
	/* FILTER needs an imageset */
	CU_ASSERT_EQUAL(al_catalog_run(st, NULL, &o, &rep), AL_EINVAL);
	CU_ASSERT_EQUAL(s.n, 0);
	/* an empty store lists nothing, and says nothing failed */
	o.version = 0;
	o.mode = AL_CATALOG_RUN_LIST;
	CU_ASSERT_EQUAL(al_catalog_run(st, NULL, &o, &rep), 0);
	CU_ASSERT_EQUAL(s.n, 0);
	al_catalog_run_report_clear(&rep);
	al_store_free(st);
}

/* The other entries whose options gained a version (docs/architecture.md
 * "Options structs"). */
static void test_verify_image__sig_fetch_and_delete_refuse_newer_versions(void)
{
	al_sig_fetch_opts fo = AL_SIG_FETCH_OPTS_INIT;
	al_sig_fetch_result fr = AL_SIG_FETCH_RESULT_INIT;
	al_delete_opts dopt = AL_DELETE_OPTS_INIT;
	al_delete_result dr = AL_DELETE_RESULT_INIT;
	al_store_opts so = AL_STORE_OPTS_INIT;
	al_store *st = NULL;
	al_digest d;
	const char *rel = "4.0.0";
	char dir[1024];

	memset(&d, 0, sizeof(d));
	CU_ASSERT_EQUAL(fo.version, AL_SIG_FETCH_OPTS_VERSION);
	fo.version = AL_SIG_FETCH_OPTS_VERSION + 1;
	CU_ASSERT_EQUAL(al_sig_fetch(&fr, &d, "x", &fo), AL_EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "newer"));
	al_sig_fetch_result_clear(&fr);
	snprintf(dir, sizeof(dir), "%s/del-store", al_test_tmpdir());
	so.create = 1;
	CU_ASSERT_EQUAL(al_store_open(&st, dir, &so), 0);
	if (st == NULL)
		return;
	CU_ASSERT_EQUAL(dopt.version, AL_DELETE_OPTS_VERSION);
	dopt.version = AL_DELETE_OPTS_VERSION + 1;
	dopt.releases = &rel;
	dopt.nreleases = 1;
	CU_ASSERT_EQUAL(al_delete_run(st, &dopt, &dr), AL_EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "newer"));
	al_delete_result_clear(&dr);
	al_store_free(st);
}

int main(void)
{
	static CU_TestInfo tests[] = {
	    {"refuses_newer_opts_version",
	     test_verify_image__refuses_newer_opts_version},
	    {"zeroed_opts_read_as_version_1",
	     test_verify_image__zeroed_opts_read_as_version_1},
	    {"modes_refuse_missing_inputs",
	     test_verify_image__modes_refuse_missing_inputs},
	    {"bad_image_is_an_event", test_verify_image__bad_image_is_an_event},
	    {"catalog_run_versions_and_list",
	     test_verify_image__catalog_run_versions_and_list},
	    {"sig_fetch_and_delete_refuse_newer_versions",
	     test_verify_image__sig_fetch_and_delete_refuse_newer_versions},
	    CU_TEST_INFO_NULL,
	};

	return al_test_run("verify_image", tests);
}
