/* test_opts_version.c: every public entry that takes a versioned options
 * struct refuses a version newer than the library's with AL_EINVAL before it
 * touches anything, and reads 0 (a zeroed struct) as version 1
 * (docs/architecture.md "Options structs (ABI)").
 * al-tier: quick */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "airlock/clock.h"
#include "airlock/cosign.h"
#include "airlock/error.h"
#include "airlock/graph.h"
#include "airlock/http.h"
#include "airlock/imageset.h"
#include "airlock/kube.h"
#include "airlock/mirror.h"
#include "airlock/pack.h"
#include "airlock/pgp.h"
#include "airlock/registry.h"
#include "airlock/serve.h"
#include "airlock/sig.h"
#include "airlock/store.h"
#include "airlock/transfer.h"
#include "airlock/update.h"
#include "airlock/update_graph.h"
#include "airlock/update_lease.h"
#include "al_test.h"

/* Nothing listens on port 1: an entry that reached the network answers
 * AL_ENET there, never AL_EINVAL. */
#define NOBODY_HOST "127.0.0.1:1"
#define NOBODY_URL "http://127.0.0.1:1"

/* What the cases share; made once. */
typedef struct env {
	const char *root; /* the suite's temporary directory */
	char scratch[1024];
	al_store *st;
	al_imageset *cfg;     /* no channel, no chart */
	al_pgp_keyring *kr;   /* empty */
	al_kube *kube;        /* a cluster at NOBODY_URL */
	al_cancel *cancelled; /* already set */
} env;

static env E;

static void path_in(char *out, size_t len, const char *name)
{
	snprintf(out, len, "%s/%s", E.root, name);
}

/* --- one call per entry: version v in the struct the entry takes ---- */

static int c_cosign_verify_sig(unsigned v)
{
	al_cosign_opts o = AL_COSIGN_OPTS_INIT;
	al_cosign_sig s;
	al_cosign_info info;

	memset(&s, 0, sizeof(s));
	memset(&info, 0, sizeof(info));
	o.version = v;
	return al_cosign_verify_sig(&info, &s, &o);
}

static int c_cosign_verify_bundle(unsigned v)
{
	al_cosign_opts o = AL_COSIGN_OPTS_INIT;
	al_cosign_info info;
	int rc;

	memset(&info, 0, sizeof(info));
	o.version = v;
	rc = al_cosign_verify_bundle(&info, (const uint8_t *)"{}", 2, NULL, 0,
	                             &o);
	al_cosign_info_clear(&info);
	return rc;
}

static int c_graph_resolve_imageset(unsigned v)
{
	al_graph_opts o = AL_GRAPH_OPTS_INIT;
	al_graph_selection sel;
	int rc;

	o.version = v;
	o.url = NOBODY_URL;
	rc = al_graph_resolve_imageset(E.cfg, &o, &sel);
	al_graph_selection_clear(&sel);
	return rc;
}

static int c_graph_image_from_dir(unsigned v)
{
	al_graph_image_opts o = AL_GRAPH_IMAGE_OPTS_INIT;
	al_graph_image_result res = AL_GRAPH_IMAGE_RESULT_INIT;
	char dir[1100];

	path_in(dir, sizeof(dir), "no-graph-data");
	o.version = v;
	return al_graph_image_from_dir(E.st, dir, &o, &res);
}

static int c_graph_image_build(unsigned v)
{
	al_graph_image_opts o = AL_GRAPH_IMAGE_OPTS_INIT;
	al_graph_image_result res = AL_GRAPH_IMAGE_RESULT_INIT;

	o.version = v;
	o.tmpdir = E.scratch; /* where its scratch tree would go */
	return al_graph_image_build(E.st, &o, &res);
}

static int c_http_new(unsigned v)
{
	al_http_opts o = AL_HTTP_OPTS_INIT;
	al_http *h = NULL;
	int rc;

	o.version = v;
	rc = al_http_new(&h, &o);
	al_http_free(h);
	return rc;
}

static int c_graph_fetch(unsigned v)
{
	al_http_opts o = AL_HTTP_OPTS_INIT;
	al_graph *g = NULL;
	int rc;

	o.version = v;
	o.max_retries = AL_HTTP_NO_RETRY;
	rc = al_graph_fetch(&g, NOBODY_URL, "stable-4.14", "amd64", &o,
	                    AL_DEADLINE_NONE);
	al_graph_free(g);
	return rc;
}

static int c_kube_new(unsigned v)
{
	al_kube_opts o = AL_KUBE_OPTS_INIT;
	al_kube *k = NULL;
	char cfg[1100];
	int rc;

	path_in(cfg, sizeof(cfg), "no-kubeconfig");
	o.version = v;
	o.kubeconfig = cfg;
	rc = al_kube_new(&k, &o);
	al_kube_free(k);
	return rc;
}

static int c_mirror(unsigned v)
{
	al_transfer_opts o = AL_TRANSFER_OPTS_INIT;
	al_mirror_report rep = AL_MIRROR_REPORT_INIT;
	int rc;

	o.version = v;
	rc = al_mirror(E.st, NULL, 0, NULL, 0, &o, &rep);
	al_mirror_report_clear(&rep);
	return rc;
}

static int c_mirror_signed(unsigned v)
{
	al_transfer_opts o = AL_TRANSFER_OPTS_INIT;
	al_mirror_sig_opts sig = AL_MIRROR_SIG_OPTS_INIT;
	al_mirror_report rep = AL_MIRROR_REPORT_INIT;
	int rc;

	sig.version = v;
	rc = al_mirror_signed(E.st, NULL, 0, NULL, 0, &o, &sig, &rep);
	al_mirror_report_clear(&rep);
	return rc;
}

static int c_mirror_helm(unsigned v)
{
	al_transfer_opts o = AL_TRANSFER_OPTS_INIT;
	al_mirror_report rep = AL_MIRROR_REPORT_INIT;
	int rc;

	o.version = v;
	rc = al_mirror_helm(E.st, E.cfg, &o, &rep);
	al_mirror_report_clear(&rep);
	return rc;
}

static int c_pack_write(unsigned v)
{
	al_pack_opts o = AL_PACK_OPTS_INIT;
	al_pack_result res = AL_PACK_RESULT_INIT;
	char out[1100];

	snprintf(out, sizeof(out), "%s/pack", E.scratch);
	o.version = v;
	return al_pack_write(E.st, out, &o, &res);
}

static int unpack_call(unsigned v, int old_name)
{
	al_unpack_opts o = AL_UNPACK_OPTS_INIT;
	al_unpack_result res = AL_UNPACK_RESULT_INIT;
	char dir[1100];
	int rc;

	path_in(dir, sizeof(dir), "no-media");
	o.version = v;
	rc = old_name ? al_unpack(E.st, dir, &o, &res)
	              : al_pack_unpack(E.st, dir, &o, &res);
	al_unpack_result_clear(&res);
	return rc;
}

static int c_pack_unpack(unsigned v)
{
	return unpack_call(v, 0);
}

static int c_unpack(unsigned v)
{
	return unpack_call(v, 1);
}

static int c_pack_promote(unsigned v)
{
	al_unpack_opts o = AL_UNPACK_OPTS_INIT;
	al_unpack_result res = AL_UNPACK_RESULT_INIT;
	int rc;

	o.version = v;
	o.accept_untrusted = 1;
	rc = al_pack_promote(E.st, "20260101T000000Z-0001", &o, &res);
	al_unpack_result_clear(&res);
	return rc;
}

static int c_registry_new(unsigned v)
{
	al_registry_opts o = AL_REGISTRY_OPTS_INIT;
	al_registry *r = NULL;
	int rc;

	o.version = v;
	rc = al_registry_new(&r, NOBODY_HOST, &o);
	al_registry_free(r);
	return rc;
}

static int c_serve_run(unsigned v)
{
	al_serve_opts o = AL_SERVE_OPTS_INIT;
	char store[1100];

	path_in(store, sizeof(store), "no-store");
	o.version = v;
	o.store = store;
	o.listen = "127.0.0.1:0";
	o.cancel = E.cancelled;
	return al_serve_run(&o);
}

static int c_sig_verify(unsigned v)
{
	al_sig_verify_opts o = AL_SIG_VERIFY_OPTS_INIT;
	al_sig_info info;
	al_digest d;

	memset(&info, 0, sizeof(info));
	memset(&d, 0, sizeof(d));
	o.version = v;
	o.keyring = E.kr;
	o.policy = AL_SIG_IDENTITY_IGNORE;
	return al_sig_verify(&info, (const uint8_t *)"x", 1, &d, &o);
}

static int c_sig_verify_list(unsigned v)
{
	al_sig_verify_opts o = AL_SIG_VERIFY_OPTS_INIT;
	al_sig_list l = AL_SIG_LIST_INIT;
	al_sig_info info;
	al_digest d;

	memset(&info, 0, sizeof(info));
	memset(&d, 0, sizeof(d));
	o.version = v;
	o.keyring = E.kr;
	return al_sig_verify_list(&info, NULL, &l, &d, &o);
}

static int c_transfer_new_to_store(unsigned v)
{
	al_transfer_opts o = AL_TRANSFER_OPTS_INIT;
	al_transfer *t = NULL;
	int rc;

	o.version = v;
	rc = al_transfer_new_to_store(&t, E.st, &o);
	al_transfer_free(t);
	return rc;
}

static int c_transfer_new_to_registry(unsigned v)
{
	al_transfer_opts o = AL_TRANSFER_OPTS_INIT;
	al_transfer *t = NULL;
	int rc;

	o.version = v;
	rc = al_transfer_new_to_registry(&t, NOBODY_HOST, &o);
	al_transfer_free(t);
	return rc;
}

static int c_cosign_carry(unsigned v)
{
	al_transfer_opts o = AL_TRANSFER_OPTS_INIT;
	al_cosign_carry_report rep = AL_COSIGN_CARRY_REPORT_INIT;
	int rc;

	o.version = v;
	rc = al_cosign_carry(E.st, NULL, 0, AL_COSIGN_FIND_DEFAULT, &o, &rep);
	al_cosign_carry_report_clear(&rep);
	return rc;
}

static int c_push_store(unsigned v)
{
	al_push_opts o = AL_PUSH_OPTS_INIT;
	al_push_result res = AL_PUSH_RESULT_INIT;
	int rc;

	o.version = v;
	o.registry = NOBODY_HOST;
	rc = al_push_store(E.st, &o, &res);
	al_push_result_clear(&res);
	return rc;
}

static int graph_build_call(unsigned v, int two)
{
	al_update_load_opts o = AL_UPDATE_LOAD_OPTS_INIT;
	al_update_graph *g = NULL;
	int rc;

	o.version = v;
	o.release_version = "4.14.2";
	rc = two ? al_update_graph_build2(&g, NULL, 0, NULL, 0, &o)
	         : al_update_graph_build(&g, NULL, 0, &o);
	al_update_graph_free(g);
	return rc;
}

static int c_update_graph_build(unsigned v)
{
	return graph_build_call(v, 0);
}

static int c_update_graph_build2(unsigned v)
{
	return graph_build_call(v, 1);
}

static int c_update_graph_from_release(unsigned v)
{
	al_update_load_opts o = AL_UPDATE_LOAD_OPTS_INIT;
	al_update_graph *g = NULL;

	/* no release: version 0 gets as far as the missing argument */
	o.version = v;
	return al_update_graph_from_release(&g, NULL, &o);
}

static int c_update_lease_acquire(unsigned v)
{
	al_update_lease_opts o = AL_UPDATE_LEASE_OPTS_INIT;
	al_update_lease *l = NULL;
	int rc;

	o.version = v;
	o.cancel = E.cancelled; /* version 0 stops before its first request */
	rc = al_update_lease_acquire(&l, E.kube, &o);
	if (l != NULL)
		al_update_lease_release(l);
	return rc;
}

static int c_update_run(unsigned v)
{
	al_update_opts o = AL_UPDATE_OPTS_INIT;
	al_update_result res = AL_UPDATE_RESULT_INIT;
	int rc;

	o.version = v;
	o.store = E.st;
	o.target = "9.9.9";
	o.dry_run = 1;
	rc = al_update_run(&o, &res);
	al_update_result_clear(&res);
	return rc;
}

typedef struct vcase {
	const char *entry;
	const char *opts;   /* the struct's type name */
	unsigned supported; /* its AL_<NAME>_OPTS_VERSION */
	int (*call)(unsigned version);
	int zero; /* what version 0 gives here */
} vcase;

static const vcase cases[] = {
    {"al_cosign_verify_sig", "al_cosign_opts", AL_COSIGN_OPTS_VERSION,
     c_cosign_verify_sig, AL_EVERIFY},
    {"al_cosign_verify_bundle", "al_cosign_opts", AL_COSIGN_OPTS_VERSION,
     c_cosign_verify_bundle, AL_EVERIFY},
    {"al_graph_resolve_imageset", "al_graph_opts", AL_GRAPH_OPTS_VERSION,
     c_graph_resolve_imageset, 0},
    {"al_graph_image_from_dir", "al_graph_image_opts",
     AL_GRAPH_IMAGE_OPTS_VERSION, c_graph_image_from_dir, AL_ENOTFOUND},
    {"al_graph_image_build", "al_graph_image_opts", AL_GRAPH_IMAGE_OPTS_VERSION,
     c_graph_image_build, AL_ENOTFOUND},
    {"al_http_new", "al_http_opts", AL_HTTP_OPTS_VERSION, c_http_new, 0},
    {"al_graph_fetch", "al_http_opts", AL_HTTP_OPTS_VERSION, c_graph_fetch,
     AL_ENET},
    {"al_kube_new", "al_kube_opts", AL_KUBE_OPTS_VERSION, c_kube_new,
     AL_ENOTFOUND},
    {"al_mirror", "al_transfer_opts", AL_TRANSFER_OPTS_VERSION, c_mirror, 0},
    {"al_mirror_signed", "al_mirror_sig_opts", AL_MIRROR_SIG_OPTS_VERSION,
     c_mirror_signed, 0},
    {"al_mirror_helm", "al_transfer_opts", AL_TRANSFER_OPTS_VERSION,
     c_mirror_helm, 0},
    {"al_pack_write", "al_pack_opts", AL_PACK_OPTS_VERSION, c_pack_write, 0},
    {"al_pack_unpack", "al_unpack_opts", AL_UNPACK_OPTS_VERSION, c_pack_unpack,
     AL_ENOTFOUND},
    {"al_unpack", "al_unpack_opts", AL_UNPACK_OPTS_VERSION, c_unpack,
     AL_ENOTFOUND},
    {"al_pack_promote", "al_unpack_opts", AL_UNPACK_OPTS_VERSION,
     c_pack_promote, AL_ENOTFOUND},
    {"al_registry_new", "al_registry_opts", AL_REGISTRY_OPTS_VERSION,
     c_registry_new, 0},
    {"al_serve_run", "al_serve_opts", AL_SERVE_OPTS_VERSION, c_serve_run,
     AL_ENOTFOUND},
    {"al_sig_verify", "al_sig_verify_opts", AL_SIG_VERIFY_OPTS_VERSION,
     c_sig_verify, AL_EVERIFY},
    {"al_sig_verify_list", "al_sig_verify_opts", AL_SIG_VERIFY_OPTS_VERSION,
     c_sig_verify_list, AL_ENOTFOUND},
    {"al_transfer_new_to_store", "al_transfer_opts", AL_TRANSFER_OPTS_VERSION,
     c_transfer_new_to_store, 0},
    {"al_transfer_new_to_registry", "al_transfer_opts",
     AL_TRANSFER_OPTS_VERSION, c_transfer_new_to_registry, 0},
    {"al_cosign_carry", "al_transfer_opts", AL_TRANSFER_OPTS_VERSION,
     c_cosign_carry, 0},
    {"al_push_store", "al_push_opts", AL_PUSH_OPTS_VERSION, c_push_store, 0},
    {"al_update_graph_build", "al_update_load_opts",
     AL_UPDATE_LOAD_OPTS_VERSION, c_update_graph_build, AL_EPARSE},
    {"al_update_graph_build2", "al_update_load_opts",
     AL_UPDATE_LOAD_OPTS_VERSION, c_update_graph_build2, AL_EPARSE},
    {"al_update_graph_from_release", "al_update_load_opts",
     AL_UPDATE_LOAD_OPTS_VERSION, c_update_graph_from_release, AL_EINVAL},
    {"al_update_lease_acquire", "al_update_lease_opts",
     AL_UPDATE_LEASE_OPTS_VERSION, c_update_lease_acquire, AL_ECANCELED},
    {"al_update_run", "al_update_opts", AL_UPDATE_OPTS_VERSION, c_update_run,
     AL_ENOTFOUND},
};

static int setup(void)
{
	al_store_opts so = AL_STORE_OPTS_INIT;
	al_kube_opts ko = AL_KUBE_OPTS_INIT;
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
	    al_imageset_load(&E.cfg, p) < 0)
		return -1;
	path_in(p, sizeof(p), "kubeconfig");
	if (al_test_write_file(p, "apiVersion: v1\nkind: Config\n"
	                  "clusters:\n- name: c\n  cluster:\n"
	                  "    server: " NOBODY_URL "\n"
	                  "users:\n- name: u\n  user: {}\n"
	                  "contexts:\n- name: x\n  context:\n"
	                  "    cluster: c\n    user: u\n"
	                  "current-context: x\n") != 0)
		return -1;
	ko.kubeconfig = p;
	if (al_kube_new(&E.kube, &ko) < 0 || al_pgp_keyring_new(&E.kr) < 0 ||
	    al_cancel_new(&E.cancelled) < 0)
		return -1;
	al_cancel_set(E.cancelled);
	return 0;
}

static void teardown(void)
{
	al_cancel_free(E.cancelled);
	al_pgp_keyring_free(E.kr);
	al_kube_free(E.kube);
	al_imageset_free(E.cfg);
	al_store_free(E.st);
	memset(&E, 0, sizeof(E));
}

/* A newer version: AL_EINVAL naming the struct, and nothing on disk
 * changed (no file created, no store record, no scratch tree); an entry
 * that had gone on would have answered otherwise (AL_ENET from port 1,
 * AL_ENOTFOUND, ...), as version 0 shows. */
static void test_opts_version__newer_refused_zero_reads_as_1(void)
{
	static char before[64 * 1024], after[64 * 1024];
	size_t i;

	if (setup() != 0) {
		CU_FAIL("setup");
		teardown();
		return;
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const vcase *c = &cases[i];
		char want[128];
		int rc;

		snprintf(want, sizeof(want), "%s version %u is newer", c->opts,
		         c->supported + 1);
		before[0] = after[0] = '\0';
		al_test_tree(E.root, before, sizeof(before));
		al_error_clear();
		rc = c->call(c->supported + 1);
		al_test_tree(E.root, after, sizeof(after));
		if (rc != AL_EINVAL ||
		    strstr(al_error_message(), want) == NULL ||
		    strcmp(before, after) != 0) {
			fprintf(stderr, "%s with %s version %u: %d (%s)\n",
			        c->entry, c->opts, c->supported + 1, rc,
			        al_error_message());
			CU_FAIL("a newer version was not refused first");
		}
		al_error_clear();
		rc = c->call(0);
		if (rc != c->zero || strstr(al_error_message(), want) != NULL) {
			fprintf(stderr, "%s with %s version 0: %d (%s)\n",
			        c->entry, c->opts, rc, al_error_message());
			CU_FAIL("version 0 did not read as version 1");
		}
	}
	teardown();
}

/* The INIT macros set the version, nested ones included. */
static void test_opts_version__init_macros_set_versions(void)
{
	al_transfer_opts to = AL_TRANSFER_OPTS_INIT;
	al_kube_opts ko = AL_KUBE_OPTS_INIT;
	al_update_load_opts lo = AL_UPDATE_LOAD_OPTS_INIT;
	al_serve_opts so = AL_SERVE_OPTS_INIT;

	CU_ASSERT_EQUAL(to.version, AL_TRANSFER_OPTS_VERSION);
	CU_ASSERT_EQUAL(to.registry.version, AL_REGISTRY_OPTS_VERSION);
	CU_ASSERT_EQUAL(to.registry.http.version, AL_HTTP_OPTS_VERSION);
	CU_ASSERT_EQUAL(ko.version, AL_KUBE_OPTS_VERSION);
	CU_ASSERT_EQUAL(ko.http.version, AL_HTTP_OPTS_VERSION);
	CU_ASSERT_EQUAL(lo.version, AL_UPDATE_LOAD_OPTS_VERSION);
	CU_ASSERT_PTR_NULL(lo.release_version);
	CU_ASSERT_EQUAL(so.version, AL_SERVE_OPTS_VERSION);
	CU_ASSERT_PTR_NULL(so.store);
}

int main(void)
{
	static CU_TestInfo tests[] = {
	    {"newer_refused_zero_reads_as_1",
	     test_opts_version__newer_refused_zero_reads_as_1},
	    {"init_macros_set_versions",
	     test_opts_version__init_macros_set_versions},
	    CU_TEST_INFO_NULL,
	};

	return al_test_run("opts_version", tests);
}
