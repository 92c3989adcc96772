/* test_cosign_root.c: trusted_root.json validity windows, Rekor v2
 * checkpoints and embedded SCTs, on real bundles and trusted roots of
 * sigstore-conformance (tests/fixtures/sigstore-conformance): each rule
 * refuses a root or bundle changed in that one point, next to the
 * unchanged control that verifies. */
/* al-tier: quick */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "al_test.h"
#include "airlock/buf.h"
#include "airlock/cosign.h"
#include "airlock/error.h"
#include "airlock/fs.h"

#define ISSUER "https://token.actions.githubusercontent.com"

/* A change made to the trusted root (or the bundle) before verifying. */
typedef void (*edit_fn)(json_t *root, json_t *bundle);

static char *case_path(const char *name, const char *file)
{
	static char buf[4][1200];
	static int next;
	char *b = buf[next++ % 4];

	snprintf(b, sizeof(buf[0]),
	         "%s/tests/fixtures/sigstore-conformance/%s%s%s",
	         al_test_source_dir(), name, *name != '\0' ? "/" : "", file);
	return b;
}

static json_t *load(const char *path)
{
	json_t *j = json_load_file(path, 0, NULL);

	CU_ASSERT_PTR_NOT_NULL(j);
	return j;
}

/* Verify case NAME's bundle over a.txt against its trusted root (or the
 * public-good one), after edit: the status, or 1000 when the root itself
 * was refused (the status is then in *root_rc). */
static int run_case(const char *name, const char *root_file, edit_fn edit,
                    int *root_rc)
{
	char dir[64];
	json_t *root, *bundle;
	char *rtext = NULL, *btext = NULL;
	al_buf art = AL_BUF_INIT(1 << 20);
	al_cosign_trust *t = NULL;
	al_cosign_opts o = AL_COSIGN_OPTS_INIT;
	al_cosign_info info;
	int rc;

	snprintf(dir, sizeof(dir), "cases/%s", name);
	root = load(root_file != NULL ? case_path("", root_file)
	                              : case_path(dir, "trusted_root.json"));
	bundle = load(case_path(dir, "bundle.sigstore.json"));
	CU_ASSERT_EQUAL_FATAL(
	    al_fs_read_file(case_path("cases", "a.txt"), &art), 0);
	if (edit != NULL)
		edit(root, bundle);
	rtext = json_dumps(root, 0);
	btext = json_dumps(bundle, 0);
	memset(&info, 0, sizeof(info));
	CU_ASSERT_EQUAL_FATAL(al_cosign_trust_new(&t), 0);
	*root_rc = al_cosign_trust_add_trusted_root(
	    t, (const uint8_t *)rtext, strlen(rtext), "trusted root");
	if (*root_rc < 0) {
		rc = 1000;
		goto out;
	}
	CU_ASSERT_EQUAL(al_cosign_trust_set_identity(t, ISSUER, NULL), 0);
	o.trust = t;
	rc = al_cosign_verify_bundle(&info, (const uint8_t *)btext,
	                             strlen(btext), art.ptr, art.len, &o);
	if (rc == 0)
		rc = al_cosign_check_blob(&info, art.ptr, art.len);
	if (rc != 0 && getenv("AL_TEST_VERBOSE") != NULL)
		printf("  %s: %s\n", name, al_error_message());
out:
	al_cosign_info_clear(&info);
	al_cosign_trust_free(t);
	free(rtext);
	free(btext);
	json_decref(root);
	json_decref(bundle);
	al_buf_free(&art);
	return rc;
}

static json_t *path_get(json_t *j, const char *list, size_t i, const char *k1,
                        const char *k2)
{
	json_t *v = json_array_get(json_object_get(j, list), i);

	if (k1 != NULL)
		v = json_object_get(v, k1);
	if (k2 != NULL)
		v = json_object_get(v, k2);
	CU_ASSERT_PTR_NOT_NULL(v);
	return v;
}

/* happy-path-v0.1: integrated time 1689177396 = 2023-07-12T15:56:36Z */
static void tlog_end_at_time(json_t *r, json_t *b)
{
	(void)b;
	json_object_set_new(path_get(r, "tlogs", 0, "publicKey", "validFor"),
	                    "end", json_string("2023-07-12T15:56:36Z"));
}

static void tlog_end_before_time(json_t *r, json_t *b)
{
	(void)b;
	json_object_set_new(path_get(r, "tlogs", 0, "publicKey", "validFor"),
	                    "end", json_string("2023-07-12T15:56:35.999Z"));
}

static void tlog_start_after_time(json_t *r, json_t *b)
{
	(void)b;
	json_object_set_new(path_get(r, "tlogs", 0, "publicKey", "validFor"),
	                    "start", json_string("2023-07-12T16:56:37+01:00"));
}

static void tlog_no_start(json_t *r, json_t *b)
{
	(void)b;
	json_object_del(path_get(r, "tlogs", 0, "publicKey", "validFor"),
	                "start");
}

static void tlog_end_null(json_t *r, json_t *b)
{
	(void)b;
	json_object_set_new(path_get(r, "tlogs", 0, "publicKey", "validFor"),
	                    "end", json_null());
}

/* A root's windows: closed intervals, a start required, an end
 * optional; the Rekor key must be valid at the integrated time. */
static void test_cosign_root__validity_windows(void)
{
	int rrc = 0;
	const char *pg = "trusted-root-public-good.json";

	CU_ASSERT_EQUAL(run_case("happy-path-v0.1", pg, NULL, &rrc), 0);
	CU_ASSERT_EQUAL(run_case("happy-path-v0.1", pg, tlog_end_at_time, &rrc),
	                0);
	CU_ASSERT_EQUAL(run_case("happy-path-v0.1", pg, tlog_end_null, &rrc),
	                0);
	CU_ASSERT_EQUAL(
	    run_case("happy-path-v0.1", pg, tlog_end_before_time, &rrc),
	    AL_EVERIFY);
	/* 16:56:37+01:00 is 15:56:37Z, a second after the entry */
	CU_ASSERT_EQUAL(
	    run_case("happy-path-v0.1", pg, tlog_start_after_time, &rrc),
	    AL_EVERIFY);
	CU_ASSERT_EQUAL(run_case("happy-path-v0.1", pg, tlog_no_start, &rrc),
	                1000);
	CU_ASSERT_EQUAL(rrc, AL_EPARSE);
}

/* rekor2-happy-path: the timestamp's genTime is 2025-06-12T12:02:20Z */
static void tsa_end_at_time(json_t *r, json_t *b)
{
	(void)b;
	json_object_set_new(
	    json_object_get(
	        json_array_get(json_object_get(r, "timestampAuthorities"), 0),
	        "validFor"),
	    "end", json_string("2025-06-12T12:02:20Z"));
}

static void tsa_end_before_time(json_t *r, json_t *b)
{
	(void)b;
	json_object_set_new(
	    json_object_get(
	        json_array_get(json_object_get(r, "timestampAuthorities"), 0),
	        "validFor"),
	    "end", json_string("2025-06-12T12:02:19Z"));
}

/* the Rekor v2 log's key ends before the signed time */
static void v2_log_end_before_time(json_t *r, json_t *b)
{
	(void)b;
	json_object_set_new(path_get(r, "tlogs", 1, "publicKey", "validFor"),
	                    "end", json_string("2025-06-12T12:02:19Z"));
}

/* the Fulcio CA's window ends before the signed time */
static void ca_end_before_time(json_t *r, json_t *b)
{
	(void)b;
	json_object_set_new(
	    json_object_get(
	        json_array_get(json_object_get(r, "certificateAuthorities"), 0),
	        "validFor"),
	    "end", json_string("2025-06-12T12:02:19Z"));
}

static void test_cosign_root__signed_time_windows(void)
{
	int rrc = 0;

	CU_ASSERT_EQUAL(run_case("rekor2-happy-path", NULL, NULL, &rrc), 0);
	CU_ASSERT_EQUAL(
	    run_case("rekor2-happy-path", NULL, tsa_end_at_time, &rrc), 0);
	CU_ASSERT_EQUAL(
	    run_case("rekor2-happy-path", NULL, tsa_end_before_time, &rrc),
	    AL_EVERIFY);
	CU_ASSERT_EQUAL(
	    run_case("rekor2-happy-path", NULL, v2_log_end_before_time, &rrc),
	    AL_EVERIFY);
	CU_ASSERT_EQUAL(
	    run_case("rekor2-happy-path", NULL, ca_end_before_time, &rrc),
	    AL_EVERIFY);
}

/* The checkpoint of a Rekor v2 log is signed by its origin, the host of
 * the trusted root's baseUrl. */
static void v2_log_other_host(json_t *r, json_t *b)
{
	(void)b;
	json_object_set_new(
	    json_array_get(json_object_get(r, "tlogs"), 1), "baseUrl",
	    json_string("https://log2025-alpha2.rekor.sigstage.dev"));
}

/* A witness line naming the log with another key hint is ignored; a line
 * with the log's name and hint that does not verify is refused. */
static void set_checkpoint(json_t *b, const char *extra, int corrupt)
{
	json_t *cp = json_object_get(
	    json_object_get(
	        json_array_get(
	            json_object_get(json_object_get(b, "verificationMaterial"),
	                            "tlogEntries"),
	            0),
	        "inclusionProof"),
	    "checkpoint");
	const char *env = json_string_value(json_object_get(cp, "envelope"));
	char buf[4096];

	CU_ASSERT_FATAL(env != NULL && strlen(env) + strlen(extra) < 4000);
	snprintf(buf, sizeof(buf), "%s%s", env, extra);
	if (corrupt) {
		/* a character of the log's own signature, changed */
		char *sig = strstr(buf, "sigstage.dev 8w1amd");

		CU_ASSERT_PTR_NOT_NULL_FATAL(sig);
		sig[strlen("sigstage.dev 8w1amd") + 4] ^= 1;
	}
	json_object_set_new(cp, "envelope", json_string(buf));
}

static void witness_same_name(json_t *r, json_t *b)
{
	(void)r;
	set_checkpoint(b,
	               "\xe2\x80\x94 log2025-alpha1.rekor.sigstage.dev "
	               "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n",
	               0);
}

static void log_sig_corrupt(json_t *r, json_t *b)
{
	(void)r;
	set_checkpoint(b, "", 1);
}

static void test_cosign_root__rekor_v2_checkpoint(void)
{
	int rrc = 0;

	CU_ASSERT_EQUAL(
	    run_case("rekor2-happy-path", NULL, witness_same_name, &rrc), 0);
	CU_ASSERT_EQUAL(
	    run_case("rekor2-happy-path", NULL, v2_log_other_host, &rrc),
	    AL_EVERIFY);
	CU_ASSERT_EQUAL(
	    run_case("rekor2-happy-path", NULL, log_sig_corrupt, &rrc),
	    AL_EVERIFY);
}

/* Embedded SCTs: verified with the root's CT log keys; without CT logs
 * nothing is checked; a CT log under the right log ID with another key
 * refuses. */
static void no_ctlogs(json_t *r, json_t *b)
{
	(void)b;
	json_object_set_new(r, "ctlogs", json_array());
}

static void ctlog_other_key(json_t *r, json_t *b)
{
	json_t *logs = json_object_get(r, "ctlogs");
	json_t *rekor = path_get(r, "tlogs", 0, "publicKey", "rawBytes");
	size_t i;

	(void)b;
	for (i = 0; i < json_array_size(logs); i++)
		json_object_set(
		    json_object_get(json_array_get(logs, i), "publicKey"),
		    "rawBytes", rekor);
}

static void test_cosign_root__embedded_scts(void)
{
	int rrc = 0;
	const char *pg = "trusted-root-public-good.json";

	CU_ASSERT_EQUAL(run_case("happy-path-v0.3", pg, NULL, &rrc), 0);
	CU_ASSERT_EQUAL(run_case("happy-path-v0.3", pg, no_ctlogs, &rrc), 0);
	CU_ASSERT_EQUAL(run_case("happy-path-v0.3", pg, ctlog_other_key, &rrc),
	                AL_EVERIFY);
}

int main(void)
{
	CU_TestInfo tests[] = {
	    {"validity_windows", test_cosign_root__validity_windows},
	    {"signed_time_windows", test_cosign_root__signed_time_windows},
	    {"rekor_v2_checkpoint", test_cosign_root__rekor_v2_checkpoint},
	    {"embedded_scts", test_cosign_root__embedded_scts},
	    CU_TEST_INFO_NULL,
	};

	return al_test_run("cosign_root", tests);
}
