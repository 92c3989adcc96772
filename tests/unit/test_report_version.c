/* test_report_version.c: every public entry that fills a versioned report
 * or result struct refuses a version newer than the library's with
 * AL_EINVAL before it writes anything (the struct, the disk), reads 0 (a
 * zeroed struct) as version 1, and leaves the caller's version field as it
 * was; every INIT macro sets its version (docs/architecture.md "Options
 * structs (ABI)", reports and results).
 * al-tier: quick */
#include <dirent.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "airlock/catalog.h"
#include "airlock/cosign.h"
#include "airlock/delete.h"
#include "airlock/error.h"
#include "airlock/graph.h"
#include "airlock/imageset.h"
#include "airlock/mirror.h"
#include "airlock/pack.h"
#include "airlock/pgp.h"
#include "airlock/sig.h"
#include "airlock/store.h"
#include "airlock/transfer.h"
#include "airlock/update.h"
#include "al_test.h"

/* Nothing listens on port 1. */
#define NOBODY_HOST "127.0.0.1:1"

typedef struct env {
	const char *root;
	char scratch[1024];
	al_store *st;
	al_imageset *cfg; /* nothing to mirror */
	al_pgp_keyring *kr;
	unsigned calls; /* a fresh output directory per call */
} env;

static env E;

static void path_in(char *out, size_t len, const char *name)
{
	snprintf(out, len, "%s/%s", E.root, name);
}

static void fresh_dir(char *out, size_t len, const char *what)
{
	snprintf(out, len, "%s/%s-%u", E.scratch, what, E.calls++);
}

/* --- one call per entry, into the struct at r ------------------------ */

static int c_mirror(void *r)
{
	return al_mirror(E.st, NULL, 0, NULL, 0, NULL, r);
}

static int c_mirror_signed(void *r)
{
	return al_mirror_signed(E.st, NULL, 0, NULL, 0, NULL, NULL, r);
}

static int c_mirror_helm(void *r)
{
	al_transfer_opts o = AL_TRANSFER_OPTS_INIT;

	return al_mirror_helm(E.st, E.cfg, &o, r);
}

static void k_mirror_report(void *r)
{
	al_mirror_report_clear(r);
}

static int c_mirror_run(void *r)
{
	al_mirror_opts o = AL_MIRROR_OPTS_INIT;

	/* nothing to mirror: refused after the check */
	return al_mirror_run(E.st, E.cfg, &o, r);
}

static void k_mirror_result(void *r)
{
	al_mirror_result_clear(r);
}

static int c_push_store(void *r)
{
	al_push_opts o = AL_PUSH_OPTS_INIT;

	o.registry = NOBODY_HOST; /* an empty store pushes nothing */
	return al_push_store(E.st, &o, r);
}

static void k_push_result(void *r)
{
	al_push_result_clear(r);
}

static int c_pack_write(void *r)
{
	char out[1100];

	fresh_dir(out, sizeof(out), "pack");
	return al_pack_write(E.st, out, NULL, r);
}

static int c_pack_unpack(void *r)
{
	char dir[1100];

	path_in(dir, sizeof(dir), "no-media");
	return al_pack_unpack(E.st, dir, NULL, r);
}

static int c_unpack(void *r)
{
	char dir[1100];

	path_in(dir, sizeof(dir), "no-media");
	return al_unpack(E.st, dir, NULL, r);
}

static int c_pack_promote(void *r)
{
	al_unpack_opts o = AL_UNPACK_OPTS_INIT;

	o.accept_untrusted = 1;
	return al_pack_promote(E.st, "20260101T000000Z-0001", &o, r);
}

static void k_unpack_result(void *r)
{
	al_unpack_result_clear(r);
}

static int c_delete_run(void *r)
{
	static const char *const names[] = {"example.com/no/such:image"};
	al_delete_opts o = AL_DELETE_OPTS_INIT;

	o.images = names;
	o.nimages = 1;
	o.dry_run = 1;
	return al_delete_run(E.st, &o, r);
}

static void k_delete_result(void *r)
{
	al_delete_result_clear(r);
}

static int c_update_run(void *r)
{
	al_update_opts o = AL_UPDATE_OPTS_INIT;

	o.store = E.st;
	o.target = "9.9.9";
	o.dry_run = 1;
	return al_update_run(&o, r);
}

static void k_update_result(void *r)
{
	al_update_result_clear(r);
}

static int c_store_check(void *r)
{
	return al_store_check(E.st, 0, NULL, NULL, r);
}

static int c_store_check_roots(void *r)
{
	return al_store_check_roots(E.st, 0, NULL, 0, NULL, NULL, r);
}

static int c_mirror_check(void *r)
{
	return al_mirror_check(E.st, 0, NULL, NULL, r);
}

static int c_catalog_run(void *r)
{
	al_catalog_run_opts o = AL_CATALOG_RUN_OPTS_INIT;

	o.mode = AL_CATALOG_RUN_LIST;
	return al_catalog_run(E.st, NULL, &o, r);
}

static void k_catalog_run_report(void *r)
{
	al_catalog_run_report_clear(r);
}

static int c_cosign_carry(void *r)
{
	al_transfer_opts o = AL_TRANSFER_OPTS_INIT;

	return al_cosign_carry(E.st, NULL, 0, AL_COSIGN_FIND_DEFAULT, &o, r);
}

static void k_cosign_carry_report(void *r)
{
	al_cosign_carry_report_clear(r);
}

static int c_cosign_check_store(void *r)
{
	/* an empty store: no image for the policy to decide */
	return al_cosign_check_store(E.st, NULL, NULL, 0, r);
}

static int c_cosign_check_store_root(void *r)
{
	return al_cosign_check_store_root(E.st, (const uint8_t *)"{}", 2,
	                                  "root", NULL, 0, r);
}

static void k_cosign_store_report(void *r)
{
	al_cosign_store_report_clear(r);
}

static int c_graph_write_data(void *r)
{
	char out[1100];

	fresh_dir(out, sizeof(out), "graph-data");
	return al_graph_write_data(E.st, out, r);
}

static int c_graph_image_from_dir(void *r)
{
	char dir[1100];

	path_in(dir, sizeof(dir), "no-graph-data");
	return al_graph_image_from_dir(E.st, dir, NULL, r);
}

static int c_graph_image_build(void *r)
{
	al_graph_image_opts o = AL_GRAPH_IMAGE_OPTS_INIT;

	o.tmpdir = E.scratch;
	return al_graph_image_build(E.st, &o, r);
}

static int c_sig_fetch(void *r)
{
	al_sig_fetch_opts o = AL_SIG_FETCH_OPTS_INIT;
	al_digest d;

	memset(&d, 0, sizeof(d));
	o.keyring = E.kr; /* no source: bad options, after the check */
	return al_sig_fetch(r, &d, NULL, &o);
}

static int c_sig_fetch_release(void *r)
{
	al_sig_fetch_opts o = AL_SIG_FETCH_OPTS_INIT;
	al_digest d;

	memset(&d, 0, sizeof(d));
	o.keyring = E.kr;
	return al_sig_fetch_release(E.st, &d, NULL, &o, r);
}

static void k_sig_fetch_result(void *r)
{
	al_sig_fetch_result_clear(r);
}

static int c_pgp_verify(void *r)
{
	return al_pgp_verify(r, NULL, E.kr, (const uint8_t *)"x", 1, 0);
}

static int c_transfer_run(void *r)
{
	al_transfer *t = NULL;
	int rc;

	if ((rc = al_transfer_new_to_store(&t, E.st, NULL)) < 0)
		return rc;
	rc = al_transfer_run(t, r);
	al_transfer_free(t);
	return rc;
}

typedef struct rcase {
	const char *entry;
	const char *type;   /* the struct's type name */
	unsigned supported; /* its AL_<NAME>_VERSION */
	size_t size;        /* sizeof the struct */
	size_t voff;        /* offsetof its version field */
	int (*call)(void *r);
	void (*clear)(void *r); /* its *_clear, NULL when none */
	int zero;               /* what version 0 gives here */
} rcase;

#define RC(entry, type, field, VER, call, clear, zero)                         \
	{                                                                      \
#entry, #type, VER, sizeof(type), offsetof(type, field), call, \
		    clear, zero                                                \
	}

static const rcase cases[] = {
    RC(al_mirror, al_mirror_report, version, AL_MIRROR_REPORT_VERSION, c_mirror,
       k_mirror_report, 0),
    RC(al_mirror_signed, al_mirror_report, version, AL_MIRROR_REPORT_VERSION,
       c_mirror_signed, k_mirror_report, 0),
    RC(al_mirror_helm, al_mirror_report, version, AL_MIRROR_REPORT_VERSION,
       c_mirror_helm, k_mirror_report, 0),
    RC(al_mirror_run, al_mirror_result, version, AL_MIRROR_RESULT_VERSION,
       c_mirror_run, k_mirror_result, AL_EINVAL),
    RC(al_push_store, al_push_result, version, AL_PUSH_RESULT_VERSION,
       c_push_store, k_push_result, 0),
    RC(al_pack_write, al_pack_result, version, AL_PACK_RESULT_VERSION,
       c_pack_write, NULL, 0),
    RC(al_pack_unpack, al_unpack_result, version, AL_UNPACK_RESULT_VERSION,
       c_pack_unpack, k_unpack_result, AL_ENOTFOUND),
    RC(al_unpack, al_unpack_result, version, AL_UNPACK_RESULT_VERSION, c_unpack,
       k_unpack_result, AL_ENOTFOUND),
    RC(al_pack_promote, al_unpack_result, version, AL_UNPACK_RESULT_VERSION,
       c_pack_promote, k_unpack_result, AL_ENOTFOUND),
    RC(al_delete_run, al_delete_result, version, AL_DELETE_RESULT_VERSION,
       c_delete_run, k_delete_result, AL_EINVAL),
    RC(al_update_run, al_update_result, result_version,
       AL_UPDATE_RESULT_VERSION, c_update_run, k_update_result, AL_ENOTFOUND),
    RC(al_store_check, al_check_result, version, AL_CHECK_RESULT_VERSION,
       c_store_check, NULL, 0),
    RC(al_store_check_roots, al_check_result, version, AL_CHECK_RESULT_VERSION,
       c_store_check_roots, NULL, 0),
    RC(al_mirror_check, al_check_result, version, AL_CHECK_RESULT_VERSION,
       c_mirror_check, NULL, 0),
    RC(al_catalog_run, al_catalog_run_report, version,
       AL_CATALOG_RUN_REPORT_VERSION, c_catalog_run, k_catalog_run_report, 0),
    RC(al_cosign_carry, al_cosign_carry_report, version,
       AL_COSIGN_CARRY_REPORT_VERSION, c_cosign_carry, k_cosign_carry_report,
       0),
    RC(al_cosign_check_store, al_cosign_store_report, version,
       AL_COSIGN_STORE_REPORT_VERSION, c_cosign_check_store,
       k_cosign_store_report, 0),
    RC(al_cosign_check_store_root, al_cosign_store_report, version,
       AL_COSIGN_STORE_REPORT_VERSION, c_cosign_check_store_root,
       k_cosign_store_report, AL_EPARSE),
    RC(al_graph_write_data, al_graph_data_report, version,
       AL_GRAPH_DATA_REPORT_VERSION, c_graph_write_data, NULL, AL_ENOTFOUND),
    RC(al_graph_image_from_dir, al_graph_image_result, version,
       AL_GRAPH_IMAGE_RESULT_VERSION, c_graph_image_from_dir, NULL,
       AL_ENOTFOUND),
    RC(al_graph_image_build, al_graph_image_result, version,
       AL_GRAPH_IMAGE_RESULT_VERSION, c_graph_image_build, NULL, AL_ENOTFOUND),
    RC(al_sig_fetch, al_sig_fetch_result, version, AL_SIG_FETCH_RESULT_VERSION,
       c_sig_fetch, k_sig_fetch_result, AL_EINVAL),
    RC(al_sig_fetch_release, al_sig_fetch_result, version,
       AL_SIG_FETCH_RESULT_VERSION, c_sig_fetch_release, k_sig_fetch_result,
       AL_EINVAL),
    RC(al_pgp_verify, al_pgp_result, version, AL_PGP_RESULT_VERSION,
       c_pgp_verify, NULL, AL_EPARSE),
    RC(al_transfer_run, al_transfer_stats, version, AL_TRANSFER_STATS_VERSION,
       c_transfer_run, NULL, 0),
};

static int setup(void)
{
	al_store_opts so = AL_STORE_OPTS_INIT;
	char p[1100];

	E.root = al_test_tmpdir();
	snprintf(E.scratch, sizeof(E.scratch), "%s/scratch", E.root);
	if (mkdir(E.scratch, 0755) != 0)
		return -1;
	path_in(p, sizeof(p), "store");
	so.create = 1;
	if (al_store_open(&E.st, p, &so) < 0)
		return -1;
	path_in(p, sizeof(p), "imageset.yaml");
	if (al_test_write_file(p, "kind: ImageSetConfiguration\n"
	                  "apiVersion: mirror.openshift.io/v2alpha1\n"
	                  "mirror:\n"
	                  "  additionalImages: []\n") != 0 ||
	    al_imageset_load(&E.cfg, p) < 0 || al_pgp_keyring_new(&E.kr) < 0)
		return -1;
	return 0;
}

static void teardown(void)
{
	al_pgp_keyring_free(E.kr);
	al_imageset_free(E.cfg);
	al_store_free(E.st);
	memset(&E, 0, sizeof(E));
}

static unsigned version_at(const unsigned char *buf, size_t off)
{
	unsigned v;

	memcpy(&v, buf + off, sizeof(v));
	return v;
}

static void set_version(unsigned char *buf, size_t off, unsigned v)
{
	memcpy(buf + off, &v, sizeof(v));
}

/* A newer version: AL_EINVAL naming the struct, not one byte of it
 * written (it holds a pattern no entry would write, pointers included),
 * nothing on disk changed. */
static void newer(const rcase *c)
{
	unsigned char buf[4096], was[4096];
	static char before[65536], after[65536];
	char want[160];
	int rc;

	snprintf(want, sizeof(want), "%s version %u is newer", c->type,
	         c->supported + 1);
	memset(buf, 0xa5, c->size);
	set_version(buf, c->voff, c->supported + 1);
	memcpy(was, buf, c->size);
	before[0] = after[0] = '\0';
	al_test_tree(E.root, before, sizeof(before));
	al_error_clear();
	rc = c->call(buf);
	al_test_tree(E.root, after, sizeof(after));
	if (rc != AL_EINVAL || strstr(al_error_message(), want) == NULL ||
	    memcmp(buf, was, c->size) != 0 || strcmp(before, after) != 0) {
		fprintf(stderr, "%s with %s version %u: %d (%s)%s%s\n",
		        c->entry, c->type, c->supported + 1, rc,
		        al_error_message(),
		        memcmp(buf, was, c->size) != 0 ? " struct written" : "",
		        strcmp(before, after) != 0 ? " disk changed" : "");
		CU_FAIL("a newer report version was not refused first");
	}
}

/* Version v (0 or the header's): the entry runs as far as its own
 * answer, and the version field is the caller's after the entry and
 * after its *_clear. */
static void runs(const rcase *c, unsigned v)
{
	unsigned char buf[4096];
	int rc;

	memset(buf, 0, c->size);
	set_version(buf, c->voff, v);
	al_error_clear();
	rc = c->call(buf);
	if (rc != c->zero || strstr(al_error_message(), "is newer") != NULL) {
		fprintf(stderr, "%s with %s version %u: %d (%s)\n", c->entry,
		        c->type, v, rc, al_error_message());
		CU_FAIL("the entry did not run with a known version");
	}
	if (version_at(buf, c->voff) != v) {
		fprintf(stderr, "%s: %s version %u became %u\n", c->entry,
		        c->type, v, version_at(buf, c->voff));
		CU_FAIL("the entry did not keep the caller's version");
	}
	if (c->clear != NULL) {
		c->clear(buf);
		if (version_at(buf, c->voff) != v) {
			fprintf(stderr, "%s clear: version %u became %u\n",
			        c->type, v, version_at(buf, c->voff));
			CU_FAIL("the clear did not keep the caller's version");
		}
	}
}

static void test_report_version__newer_refused_zero_reads_as_1(void)
{
	size_t i;

	if (setup() != 0) {
		CU_FAIL("setup");
		teardown();
		return;
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CU_ASSERT_FATAL(cases[i].size <= 4096);
		newer(&cases[i]);
		runs(&cases[i], 0);
		runs(&cases[i], cases[i].supported);
	}
	teardown();
}

/* Each INIT macro sets its version, the embedded structs' included. */
static void test_report_version__init_macros_set_versions(void)
{
	al_mirror_report mr = AL_MIRROR_REPORT_INIT;
	al_mirror_result ms = AL_MIRROR_RESULT_INIT;
	al_transfer_stats ts = AL_TRANSFER_STATS_INIT;
	al_push_result pr = AL_PUSH_RESULT_INIT;
	al_pack_result pk = AL_PACK_RESULT_INIT;
	al_unpack_result up = AL_UNPACK_RESULT_INIT;
	al_delete_result dr = AL_DELETE_RESULT_INIT;
	al_update_result ur = AL_UPDATE_RESULT_INIT;
	al_check_result cr = AL_CHECK_RESULT_INIT;
	al_catalog_run_report cat = AL_CATALOG_RUN_REPORT_INIT;
	al_cosign_carry_report cc = AL_COSIGN_CARRY_REPORT_INIT;
	al_cosign_store_report cs = AL_COSIGN_STORE_REPORT_INIT;
	al_graph_data_report gd = AL_GRAPH_DATA_REPORT_INIT;
	al_graph_image_result gi = AL_GRAPH_IMAGE_RESULT_INIT;
	al_sig_fetch_result sf = AL_SIG_FETCH_RESULT_INIT;
	al_pgp_result pg = AL_PGP_RESULT_INIT;

	CU_ASSERT_EQUAL(mr.version, AL_MIRROR_REPORT_VERSION);
	CU_ASSERT_EQUAL(mr.stats.version, AL_TRANSFER_STATS_VERSION);
	CU_ASSERT_PTR_NULL(mr.errors);
	CU_ASSERT_EQUAL(ms.version, AL_MIRROR_RESULT_VERSION);
	CU_ASSERT_EQUAL(ms.report.version, AL_MIRROR_REPORT_VERSION);
	CU_ASSERT_EQUAL(ms.report.stats.version, AL_TRANSFER_STATS_VERSION);
	CU_ASSERT_EQUAL(ts.version, AL_TRANSFER_STATS_VERSION);
	CU_ASSERT_EQUAL(pr.version, AL_PUSH_RESULT_VERSION);
	CU_ASSERT_EQUAL(pr.stats.version, AL_TRANSFER_STATS_VERSION);
	CU_ASSERT_EQUAL(pk.version, AL_PACK_RESULT_VERSION);
	CU_ASSERT_EQUAL(up.version, AL_UNPACK_RESULT_VERSION);
	CU_ASSERT_EQUAL(dr.version, AL_DELETE_RESULT_VERSION);
	CU_ASSERT_EQUAL(ur.result_version, AL_UPDATE_RESULT_VERSION);
	CU_ASSERT_EQUAL(ur.outcome, AL_UPDATE_OUTCOME_FAILED);
	CU_ASSERT_PTR_NULL(ur.version);
	CU_ASSERT_EQUAL(cr.version, AL_CHECK_RESULT_VERSION);
	CU_ASSERT_EQUAL(cat.version, AL_CATALOG_RUN_REPORT_VERSION);
	CU_ASSERT_EQUAL(cc.version, AL_COSIGN_CARRY_REPORT_VERSION);
	CU_ASSERT_EQUAL(cs.version, AL_COSIGN_STORE_REPORT_VERSION);
	CU_ASSERT_EQUAL(gd.version, AL_GRAPH_DATA_REPORT_VERSION);
	CU_ASSERT_EQUAL(gi.version, AL_GRAPH_IMAGE_RESULT_VERSION);
	CU_ASSERT_EQUAL(gi.data.version, AL_GRAPH_DATA_REPORT_VERSION);
	CU_ASSERT_EQUAL(sf.version, AL_SIG_FETCH_RESULT_VERSION);
	CU_ASSERT_EQUAL(pg.version, AL_PGP_RESULT_VERSION);
	/* the version leads (al_update_result: result_version) */
	CU_ASSERT_EQUAL(offsetof(al_mirror_report, version), 0);
	CU_ASSERT_EQUAL(offsetof(al_update_result, result_version), 0);
	CU_ASSERT_EQUAL(offsetof(al_transfer_stats, version), 0);
}

int main(void)
{
	static CU_TestInfo tests[] = {
	    {"newer_refused_zero_reads_as_1",
	     test_report_version__newer_refused_zero_reads_as_1},
	    {"init_macros_set_versions",
	     test_report_version__init_macros_set_versions},
	    CU_TEST_INFO_NULL,
	};

	return al_test_run("report_version", tests);
}
