/* test_mirror_catalogs.c: al_mirror_run with mirror.operators[]: the per-catalog result, the store record, a catalog whose image fails, check roots. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "airlock.h"
#include "airlock/catalog.h"
#include "al_test.h"

/* A layout with two generated catalogs whose images are real
 * (mkcatalog.py --images), and an imageset reading it through
 * airlock.sources; NULL when python3 is missing (skipped). */
static char *make_imageset(const char *sub, const char *extra_sh)
{
	char *dir = al_sprintf("%s/%s", al_test_tmpdir(), sub);
	char *isc = al_sprintf("%s/%s.yaml", al_test_tmpdir(), sub);
	FILE *f;

	if (al_test_sh("command -v python3 >/dev/null") != 0) {
		al_test_skip("python3 missing: mirror.operators tests");
		free(dir);
		free(isc);
		return NULL;
	}
	CU_ASSERT_EQUAL(
	    al_test_sh("python3 %s/tests/tools/mkcatalog.py %s "
	               "quay.io/example/catalog:v1 --images >/dev/null && "
	               "python3 %s/tests/tools/mkcatalog.py %s "
	               "quay.io/example/big-catalog:v1 --bundles 4 --images "
	               ">/dev/null %s",
	               al_test_source_dir(), dir, al_test_source_dir(), dir,
	               extra_sh),
	    0);
	f = fopen(isc, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fprintf(f,
	        "kind: ImageSetConfiguration\n"
	        "apiVersion: mirror.openshift.io/v2alpha1\n"
	        "mirror:\n"
	        "  operators:\n"
	        "    - catalog: docker://quay.io/example/catalog:v1\n"
	        "      targetTag: v1-filtered\n"
	        "      packages:\n"
	        "        - name: alpha\n"
	        "    - catalog: quay.io/example/big-catalog:v1\n"
	        "      targetCatalog: mirror/big\n"
	        "      packages:\n"
	        "        - name: big\n"
	        "airlock:\n"
	        "  sources:\n"
	        "    - prefix: quay.io/example\n"
	        "      location: oci:%s\n",
	        dir);
	CU_ASSERT_EQUAL(fclose(f), 0);
	free(dir);
	return isc;
}

static int run(const char *isc, const char *store, al_mirror_result *res,
               al_store **sp)
{
	al_imageset *cfg = NULL;
	al_mirror_opts mo = AL_MIRROR_OPTS_INIT;
	al_transfer_opts to = AL_TRANSFER_OPTS_INIT;
	al_store_opts so = AL_STORE_OPTS_INIT;
	char *dst = al_path_join(al_test_tmpdir(), store);
	int rc;

	to.parallel = 3;
	mo.transfer = &to;
	so.create = 1;
	CU_ASSERT_EQUAL(al_imageset_load_ex(&cfg, isc, AL_IMAGESET_OPERATORS),
	                0);
	CU_ASSERT_EQUAL(al_store_open(sp, dst, &so), 0);
	/* no release: no keyring, no --allow-unsigned needed */
	rc = al_mirror_run(*sp, cfg, &mo, res);
	al_imageset_free(cfg);
	free(dst);
	return rc;
}

static void test_mirror_catalogs__two_catalogs(void)
{
	char *isc = make_imageset("two", "");
	al_mirror_result res = AL_MIRROR_RESULT_INIT;
	al_store_catalog *list = NULL;
	al_store *s = NULL;
	size_t n = 0;
	int rc;

	if (isc == NULL)
		return;
	rc = run(isc, "two-store", &res, &s);
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT(res.ran);
	CU_ASSERT_EQUAL(res.ncatalogs, 2);
	CU_ASSERT_EQUAL(res.catalogs_mirrored, 2);
	CU_ASSERT_EQUAL(res.report.nerrors, 0);
	if (res.ncatalogs == 2) {
		const al_mirror_catalog *a = &res.catalogs[0],
		                        *b = &res.catalogs[1];

		CU_ASSERT_STRING_EQUAL(a->source_name,
		                       "quay.io/example/catalog:v1");
		CU_ASSERT_STRING_EQUAL(a->target_name,
		                       "quay.io/example/catalog:v1-filtered");
		/* alpha's heads 1.3.0 and 2.0.0-rc.1, beta 1.1.0 as a
		 * dependency: 3 bundles; bundle + operator each and the
		 * shared kube-rbac-proxy: 7 images */
		CU_ASSERT_EQUAL(a->packages, 2);
		CU_ASSERT_EQUAL(a->bundles, 3);
		CU_ASSERT_EQUAL(a->images, 7);
		CU_ASSERT_EQUAL(a->status, 0);
		/* big: the head 1.0.3 only: bundle, operator, 3 operands */
		CU_ASSERT_STRING_EQUAL(b->target_name, "quay.io/mirror/big:v1");
		CU_ASSERT_EQUAL(b->bundles, 1);
		CU_ASSERT_EQUAL(b->images, 5);
	}
	/* 2 catalogs + 12 images, each once */
	CU_ASSERT_EQUAL(res.images, 14);
	CU_ASSERT_EQUAL(al_store_catalogs_list(s, &list, &n), 0);
	CU_ASSERT_EQUAL(n, 2);
	if (n == 2 && res.ncatalogs == 2) {
		CU_ASSERT_EQUAL(memcmp(&list[0].digest, &res.catalogs[0].digest,
		                       sizeof(al_digest)),
		                0);
		CU_ASSERT_EQUAL(list[0].nimages, 7);
		CU_ASSERT_EQUAL(list[1].nimages, 5);
		CU_ASSERT_STRING_EQUAL(list[1].target_repo, "mirror/big");
	}
	al_store_catalogs_free(list, n);
	al_mirror_result_clear(&res);
	CU_ASSERT_EQUAL(res.ncatalogs, 0);
	CU_ASSERT_PTR_NULL(res.catalogs);
	al_store_free(s);
	/* a rerun: the same digests, nothing transferred */
	rc = run(isc, "two-store", &res, &s);
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(res.report.stats.blobs_transferred, 0);
	CU_ASSERT_EQUAL(res.catalogs_mirrored, 2);
	al_mirror_result_clear(&res);
	al_store_free(s);
	free(isc);
}

static void count_check(void *ud, al_check_kind kind, const char *what,
                        const char *detail)
{
	size_t *n = ud;

	(void)what;
	if (kind == AL_CHECK_MISSING && detail != NULL &&
	    strstr(detail, "of catalog quay.io/mirror/big:v1") != NULL)
		(*n)++;
}

/* Remove the manifest blobs of the images whose name contains pat from
 * the layout dir. */
static void remove_images(const char *dir, const char *pat)
{
	CU_ASSERT_EQUAL(
	    al_test_sh("python3 - '%s' '%s' <<'PY'\n"
	               "import json, os, sys\n"
	               "d, pat = sys.argv[1], sys.argv[2]\n"
	               "for m in json.load(open(d + '/index.json'))['manifests']:\n"
	               "    n = m.get('annotations', {}).get("
	               "'org.opencontainers.image.ref.name', '')\n"
	               "    p = d + '/blobs/sha256/' + m['digest'][7:]\n"
	               "    if pat in n and os.path.exists(p):\n"
	               "        os.remove(p)\n"
	               "PY",
	               dir, pat),
	    0);
}

static void test_mirror_catalogs__failed_image_fails_its_catalog(void)
{
	char *isc = make_imageset("broken", "");
	char *src = al_path_join(al_test_tmpdir(), "broken");
	al_mirror_result res = AL_MIRROR_RESULT_INIT;
	al_store_catalog *list = NULL;
	al_store_image img;
	al_check_result cr = AL_CHECK_RESULT_INIT;
	al_store *s = NULL;
	size_t n = 0, missing = 0;
	int rc;

	memset(&img, 0, sizeof(img));
	if (isc == NULL) {
		free(src);
		return;
	}
	remove_images(src, "big-operand-1");
	rc = run(isc, "broken-store", &res, &s);
	CU_ASSERT(rc < 0);
	CU_ASSERT_EQUAL(res.ncatalogs, 2);
	CU_ASSERT_EQUAL(res.catalogs_mirrored, 1);
	if (res.ncatalogs == 2) {
		CU_ASSERT_EQUAL(res.catalogs[0].status, 0);
		CU_ASSERT(res.catalogs[1].status < 0);
		CU_ASSERT_EQUAL(res.catalogs[1].images_failed, 1);
		CU_ASSERT_PTR_NOT_NULL(res.catalogs[1].message);
	}
	/* the failed catalog is neither named nor recorded */
	CU_ASSERT_EQUAL(al_store_find(s, "quay.io/mirror/big:v1", &img),
	                AL_ENOTFOUND);
	al_store_image_clear(&img);
	CU_ASSERT_EQUAL(al_store_catalogs_list(s, &list, &n), 0);
	CU_ASSERT_EQUAL(n, 1);
	al_store_catalogs_free(list, n);
	al_mirror_result_clear(&res);
	al_store_free(s);
	s = NULL;

	/* check: a recorded catalog's image is a root, reported with its
	 * catalog when its manifest is gone */
	free(isc);
	isc = make_imageset("roots-src", "");
	if (isc != NULL) {
		char *st = al_path_join(al_test_tmpdir(), "roots2");
		al_store_opts so = AL_STORE_OPTS_INIT;

		CU_ASSERT_EQUAL(run(isc, "roots2", &res, &s), 0);
		al_mirror_result_clear(&res);
		al_store_free(s);
		s = NULL;
		remove_images(st, "big-operand-2");
		so.readonly = 1;
		CU_ASSERT_EQUAL(al_store_open(&s, st, &so), 0);
		memset(&cr, 0, sizeof(cr));
		if (s != NULL)
			al_mirror_check(s, 0, count_check, &missing, &cr);
		CU_ASSERT_EQUAL(missing, 1);
		al_store_free(s);
		free(st);
	}
	free(isc);
	free(src);
}

int main(void)
{
	CU_TestInfo tests[] = {
	    {"two_catalogs", test_mirror_catalogs__two_catalogs},
	    {"failed_image_fails_its_catalog",
	     test_mirror_catalogs__failed_image_fails_its_catalog},
	    CU_TEST_INFO_NULL,
	};

	return al_test_run("mirror_catalogs", tests);
}
