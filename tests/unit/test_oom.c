/* test_oom.c: allocation-failure injection: library entry points run with
 * the 1st, 2nd, 3rd, ... allocation failing (and, in a second pass, every
 * allocation from the Nth on) until they succeed; each failure must return
 * an error, never crash, and release everything (checked by the hook's
 * allocation balance, and by LeakSanitizer in the sanitizer build). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "airlock.h"
#include "airlock/catalog.h"
#include "airlock/cosign.h"
#include "airlock/helm.h"
#include "airlock/sig.h"
#include "al_test.h"
#include "oom_inject.h"

/* More allocations than any of these entry points makes. */
#define OOM_MAX_STEPS 20000

/* What an entry point returns when it succeeded with a wrong result. */
#define OOM_WRONG (-1000)

/* One entry point: run it, check what it made (OOM_WRONG if that differs
 * from the run without failures) and release it; an al_status. */
typedef int (*oom_fn)(void *ud);

/* Set: a failure must give AL_ENOMEM (or a success with the right
 * result), never another status: a verifier that says "refused" for "out
 * of memory" sends an operator chasing a bad signature. */
static int oom_nomem_only;

/* Run fn with allocation n failing, n = 1, 2, ... until a run makes fewer
 * than n allocations (it then succeeded with every allocation granted). */
static void oom_sweep(const char *what, oom_fn fn, void *ud, int persistent)
{
	unsigned long n, failed, nomem = 0, other = 0, recovered = 0;
	unsigned long wrong = 0, by_status[32];
	size_t k;
	int rc, leaked = 0;
	long bal;

	memset(by_status, 0, sizeof(by_status));
	/* a run with no failure first: it must succeed, and lazily built
	 * state (if any) is then in place before the balance is counted */
	rc = fn(ud);
	CU_ASSERT_EQUAL(rc, 0);
	if (rc != 0) {
		printf("%s: fails without injection: %s\n", what,
		       al_error_message());
		return;
	}
	for (n = 1; n <= OOM_MAX_STEPS; n++) {
		oom_arm(n, persistent);
		rc = fn(ud);
		failed = oom_disarm();
		bal = oom_balance();
		if (bal != 0 && leaked++ < 5)
			printf("%s: allocation %lu failed: %ld allocations "
			       "not freed\n",
			       what, n, bal);
		CU_ASSERT_EQUAL(bal, 0);
		if (failed == 0) {
			CU_ASSERT_EQUAL(rc, 0);
			break;
		}
		if (rc == OOM_WRONG && wrong++ < 5)
			printf("%s: allocation %lu failed: succeeded with a "
			       "wrong result\n",
			       what, n);
		CU_ASSERT_NOT_EQUAL(rc, OOM_WRONG);
		if (oom_nomem_only && rc < 0 && rc != AL_ENOMEM) {
			printf("%s: allocation %lu failed: %s, not AL_ENOMEM: "
			       "%s\n",
			       what, n, al_status_name(rc), al_error_message());
			CU_FAIL("an allocation failure reported as another "
			        "status");
		}
		if (rc == AL_ENOMEM)
			nomem++;
		else if (rc < 0)
			other++;
		if (rc < 0 && -rc < 32)
			by_status[-rc]++;
		if (rc < 0 && rc != AL_ENOMEM && getenv("OOM_DEBUG") != NULL)
			printf("  %lu: %s: %s\n", n, al_status_name(rc),
			       al_error_message());
		else
			recovered++;
	}
	/* a success despite a failed allocation (an abandoned attempt at
	 * another format, a best-effort message) is fine when the result is
	 * the same, which each entry point checks */
	CU_ASSERT(n <= OOM_MAX_STEPS);
	printf("%s%s: %lu allocations; failures gave AL_ENOMEM %lu times, "
	       "another error %lu, success %lu\n",
	       what, persistent ? " (persistent)" : "", n - 1, nomem, other,
	       recovered);
	for (k = 1; k < 32; k++)
		if (by_status[k] > 0 && k != (size_t)-AL_ENOMEM)
			printf("  %s %lu\n", al_status_name(-(int)k),
			       by_status[k]);
}

static void oom_both(const char *what, oom_fn fn, void *ud)
{
	oom_sweep(what, fn, ud, 0);
	oom_sweep(what, fn, ud, 1);
}

/* tests/data/redhat/NAME (static buffer). */
static const char *rh_path(const char *name)
{
	static char buf[2][1024];
	static int next;
	char *b = buf[next++ % 2];
	int k = snprintf(b, sizeof(buf[0]), "%s/tests/data/redhat/%s",
	                 al_test_source_dir(), name);

	return k > 0 && (size_t)k < sizeof(buf[0]) ? b : "";
}

static const char manifest_json[] =
    "{\"schemaVersion\":2,"
    "\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\","
    "\"config\":{\"mediaType\":\"application/vnd.oci.image.config.v1+json\","
    "\"digest\":\"sha256:"
    "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a\","
    "\"size\":2},"
    "\"layers\":[{\"mediaType\":"
    "\"application/vnd.oci.image.layer.v1.tar+gzip\","
    "\"digest\":\"sha256:"
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\","
    "\"size\":0,\"urls\":[\"https://example.com/l\"],"
    "\"annotations\":{\"a\":\"b\"}}],"
    "\"annotations\":{\"org.opencontainers.image.ref.name\":\"x\"}}";

static int run_manifest(void *ud)
{
	al_manifest m;
	int rc;

	(void)ud;
	memset(&m, 0, sizeof(m));
	rc = al_manifest_parse(&m, (const uint8_t *)manifest_json,
	                       strlen(manifest_json), NULL, "oom manifest");
	if (rc == 0 &&
	    (m.is_index || m.nlayers != 1 || m.layers[0].media_type == NULL))
		rc = OOM_WRONG;
	al_manifest_clear(&m);
	return rc;
}

static void test_oom__manifest_parse(void)
{
	oom_both("al_manifest_parse", run_manifest, NULL);
}

static const char imageset_yaml[] =
    "kind: ImageSetConfiguration\n"
    "apiVersion: mirror.openshift.io/v2alpha1\n"
    "mirror:\n"
    "  platform:\n"
    "    architectures: [amd64]\n"
    "    release: quay.io/openshift-release-dev/ocp-release:4.15.0-x86_64\n"
    "    channels:\n"
    "      - name: stable-4.15\n"
    "        minVersion: 4.15.0\n"
    "        maxVersion: 4.15.3\n"
    "  additionalImages:\n"
    "    - name: registry.example.com/ns/app:1.0\n"
    "    - name: registry.example.com/ns/tool@sha256:"
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n";

static int run_imageset(void *ud)
{
	al_imageset *cfg = NULL;
	int rc = al_imageset_load(&cfg, ud);

	if (rc == 0 && (cfg->nreleases != 1 || cfg->nadditional != 2 ||
	                cfg->nchannels != 1 || cfg->narchitectures != 1))
		rc = OOM_WRONG;
	al_imageset_free(cfg);
	return rc;
}

static void test_oom__imageset_load(void)
{
	static char path[1024];

	snprintf(path, sizeof(path), "%s/imageset.yaml", al_test_tmpdir());
	CU_ASSERT_EQUAL(
	    al_fs_write_atomic(path, imageset_yaml, strlen(imageset_yaml)), 0);
	oom_both("al_imageset_load", run_imageset, path);
}

static const char payload_json[] =
    "{\"critical\":{\"type\":\"atomic container signature\","
    "\"image\":{\"docker-manifest-digest\":\"sha256:"
    "0da6316466d60a3a4535d5fed3589feb0391989982fba59d47d4c729912d6363\"},"
    "\"identity\":{\"docker-reference\":"
    "\"quay.io/openshift-release-dev/ocp-release:4.15.0-x86_64\"}},"
    "\"optional\":{\"creator\":\"oom test\",\"timestamp\":1708939412}}";

static int run_payload(void *ud)
{
	al_sig_payload pl;
	int rc;

	(void)ud;
	memset(&pl, 0, sizeof(pl));
	rc = al_sig_payload_parse(&pl, (const uint8_t *)payload_json,
	                          strlen(payload_json));
	if (rc == 0 && (pl.creator == NULL || !pl.has_timestamp))
		rc = OOM_WRONG;
	al_sig_payload_clear(&pl);
	return rc;
}

static void test_oom__signature_payload_parse(void)
{
	oom_both("al_sig_payload_parse", run_payload, NULL);
}

static int run_keyring(void *ud)
{
	const char *paths[2];
	al_pgp_keyring *kr = NULL;
	int rc;

	(void)ud;
	paths[0] = rh_path("oc-mirror-custom-ocp-sig-key.asc");
	paths[1] = rh_path("cluster-update-keys-configmap.yaml");
	rc = al_sig_keyring_load_paths(&kr, paths, 2, 0);
	/* both release keys, and no key dropped with a warning */
	if (rc == 0 && (al_pgp_keyring_count(kr) != 2 ||
	                al_pgp_keyring_warning_count(kr) != 0))
		rc = OOM_WRONG;
	al_pgp_keyring_free(kr);
	return rc;
}

static void test_oom__keyring_load(void)
{
	oom_both("al_sig_keyring_load_paths", run_keyring, NULL);
}

/* A keyring, then the real 4.15.0 release signature verified with it. */
static int run_verify(void *ud)
{
	const char *path = rh_path("verifier-public-key-redhat-release");
	al_buf sig = AL_BUF_INIT(AL_SIG_MAX_BYTES);
	al_pgp_keyring *kr = NULL;
	al_sig_verify_opts vo = AL_SIG_VERIFY_OPTS_INIT;
	al_sig_info info;
	al_digest d;
	int rc;

	(void)ud;
	memset(&info, 0, sizeof(info));
	if ((rc = al_sig_keyring_load_paths(&kr, &path, 1, 0)) < 0)
		goto out;
	if ((rc = al_fs_read_file(rh_path("ocp-release-4.15.0-x86_64.sig"),
	                          &sig)) < 0)
		goto out;
	if ((rc = al_digest_parse_str(
	         &d, "sha256:0da6316466d60a3a4535d5fed3589feb0391989982fba59d"
	             "47d4c729912d6363")) < 0)
		goto out;
	vo.keyring = kr;
	vo.policy = AL_SIG_IDENTITY_EXACT;
	vo.reference =
	    "quay.io/openshift-release-dev/ocp-release:4.15.0-x86_64";
	rc = al_sig_verify(&info, sig.ptr, sig.len, &d, &vo);
	if (rc == 0 && (info.reference == NULL || info.fingerprint[0] == '\0'))
		rc = OOM_WRONG;
out:
	al_sig_info_clear(&info);
	al_buf_free(&sig);
	al_pgp_keyring_free(kr);
	return rc;
}

static void test_oom__signature_verify(void)
{
	oom_both("al_sig_verify", run_verify, NULL);
}

/* Create a store in a fresh directory each run, write a blob and read
 * the releases back. */
static int run_store_create(void *ud)
{
	static unsigned long serial;
	const al_store_opts so = {.create = 1};
	al_store *s = NULL;
	char path[1024];
	int rc;

	snprintf(path, sizeof(path), "%s/%s-%lu", al_test_tmpdir(),
	         (const char *)ud, serial++);
	rc = al_store_open(&s, path, &so);
	al_store_free(s);
	if (rc == 0) {
		char lay[1100];

		snprintf(lay, sizeof(lay), "%s/oci-layout", path);
		if (al_fs_exists(lay) != 1)
			rc = OOM_WRONG;
	}
	return rc;
}

static int run_store_open(void *ud)
{
	const al_store_opts so = {.readonly = 1};
	al_store *s = NULL;
	al_store_image *imgs = NULL;
	size_t n = 0;
	int rc;

	if ((rc = al_store_open(&s, ud, &so)) == 0)
		rc = al_store_list(s, &imgs, &n);
	/* the sample layout holds images: an empty list is a lost one */
	if (rc == 0 && n == 0)
		rc = OOM_WRONG;
	al_store_images_free(imgs, n);
	al_store_free(s);
	return rc;
}

static void test_oom__store_open(void)
{
	static char path[1024], prefix[] = "created";

	oom_both("al_store_open (create)", run_store_create, prefix);
	snprintf(path, sizeof(path), "%s/samples/layout", al_test_source_dir());
	oom_both("al_store_open + al_store_list", run_store_open, path);
}

/*
 * al_catalog_rebuild of a mkcatalog.py image: a failure anywhere (the
 * layer is streamed to a blob writer) leaves nothing in blobs/.tmp. The
 * result is not compared with the run without failures: jansson (2.14)
 * goes on after a failed allocation in places (load.c's lex_save drops
 * the character, dump.c ignores a key that could not be written), so a
 * run can succeed with another config; that is not the layer's doing.
 */
struct rebuild {
	al_store *s;
	al_catalog *c;
	al_digest base;
	char tmp[1100];
};

static int run_rebuild(void *ud)
{
	struct rebuild *r = ud;
	al_descriptor nd;
	struct dirent *e;
	DIR *dir;
	int rc;

	memset(&nd, 0, sizeof(nd));
	rc = al_catalog_rebuild(r->s, &r->base, NULL, r->c, NULL, &nd);
	al_descriptor_clear(&nd);
	/* opendir's own allocations are libc's, not the hook's */
	dir = opendir(r->tmp);
	while (dir != NULL && (e = readdir(dir)) != NULL) {
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			rc = OOM_WRONG;
	}
	if (dir != NULL)
		closedir(dir);
	return rc;
}

static void test_oom__catalog_rebuild(void)
{
	struct rebuild r;
	al_store_image img;
	char layout[1024];

	memset(&r, 0, sizeof(r));
	memset(&img, 0, sizeof(img));
	if (al_test_sh("command -v python3 >/dev/null") != 0) {
		al_test_skip("python3 missing: no catalog image to rebuild");
		return;
	}
	snprintf(layout, sizeof(layout), "%s/catalog", al_test_tmpdir());
	snprintf(r.tmp, sizeof(r.tmp), "%s/blobs/.tmp", layout);
	if (al_test_sh("python3 %s/tests/tools/mkcatalog.py %s cat:1 "
	               ">/dev/null",
	               al_test_source_dir(), layout) != 0 ||
	    al_store_open(&r.s, layout, NULL) != 0 ||
	    al_store_find(r.s, "cat:1", &img) != 0 ||
	    al_catalog_open_image(&r.c, NULL, r.s, &img.desc.digest, NULL) !=
	        0) {
		CU_FAIL("cannot make the catalog image");
		goto out;
	}
	r.base = img.desc.digest;
	oom_both("al_catalog_rebuild", run_rebuild, &r);
out:
	al_store_image_clear(&img);
	al_catalog_free(r.c);
	al_store_free(r.s);
}

/*
 * A result checked against the run without failures: what a run made is
 * described as text (with the hook paused: the description's own
 * allocations are not under test) and compared with the first run's.
 */
struct same {
	char *want; /* the first run's description */
};

/* 0 when desc (taken, may be NULL) is what the first run described, else
 * OOM_WRONG; the first call keeps it. */
static int same_as_first(struct same *sm, char *desc)
{
	int rc = 0;

	if (desc == NULL)
		rc = OOM_WRONG;
	else if (sm->want == NULL) {
		sm->want = desc;
		desc = NULL;
	} else if (strcmp(sm->want, desc) != 0) {
		if (getenv("OOM_DEBUG") != NULL)
			printf("want:\n%s\ngot:\n%s\n", sm->want, desc);
		rc = OOM_WRONG;
	}
	free(desc);
	return rc;
}

/* The filter test's catalog: bar's channel, where the kept head gains
 * "skips" for an entry it reached by skipRange (emit_channel). */
static const char filter_catalog[] =
    "{\"schema\":\"olm.package\",\"name\":\"bar\",\"defaultChannel\":"
    "\"stable\"}\n"
    "{\"schema\":\"olm.channel\",\"package\":\"bar\",\"name\":\"stable\","
    "\"entries\":[{\"name\":\"bar.v1.0.0\"},"
    "{\"name\":\"bar.v1.0.5\",\"replaces\":\"bar.v1.0.0\"},"
    "{\"name\":\"bar.v1.1.0\",\"replaces\":\"bar.v1.0.0\","
    "\"skipRange\":\">=1.0.0 <1.1.0\"},"
    "{\"name\":\"bar.v1.2.0\",\"replaces\":\"bar.v1.1.0\","
    "\"skips\":[\"bar.v1.0.5\"]}]}\n";

struct filter_run {
	struct same sm;
	al_catalog *in;
};

static int run_filter(void *ud)
{
	struct filter_run *fr = ud;
	al_catalog_channel_filter cf = {"stable", "1.0.1", "1.0.9"};
	al_catalog_package_filter pf = {
	    .name = "bar", .channels = &cf, .nchannels = 1};
	al_catalog_filter f = {.packages = &pf, .npackages = 1};
	al_buf b = AL_BUF_INIT(1 << 20);
	al_catalog *out = NULL;
	char *sum = NULL;
	int rc;

	rc = al_catalog_filter_apply(&out, fr->in, &f);
	oom_pause(1);
	/* the input is valid: any other failure blames it for memory (as
	 * emit_channel did: a channel without its skips, refused as "not
	 * valid") */
	if (rc < 0 && rc != AL_ENOMEM) {
		if (getenv("OOM_DEBUG") != NULL)
			printf("  not AL_ENOMEM: %s\n", al_error_message());
		rc = OOM_WRONG;
	}
	if (rc == 0) {
		sum = al_catalog_summary(out);
		if (sum == NULL || al_buf_puts(&b, sum) < 0 ||
		    al_catalog_render_package(out, 0, &b) < 0)
			rc = OOM_WRONG;
		else
			rc = same_as_first(&fr->sm, al_strdup(al_buf_cstr(&b)));
	}
	free(sum);
	al_buf_free(&b);
	al_catalog_free(out);
	oom_pause(0);
	return rc;
}

static void test_oom__catalog_filter(void)
{
	static const char *const bundles[] = {"1.0.0", "1.0.5", "1.1.0",
	                                      "1.2.0"};
	struct filter_run fr;
	al_buf b = AL_BUF_INIT(1 << 20);
	size_t i;
	int ok;

	memset(&fr, 0, sizeof(fr));
	ok = al_buf_puts(&b, filter_catalog) == 0;
	for (i = 0; i < sizeof(bundles) / sizeof(bundles[0]); i++)
		ok = ok &&
		     al_buf_printf(
		         &b,
		         "{\"schema\":\"olm.bundle\",\"name\":\"bar.v%s\","
		         "\"package\":\"bar\",\"image\":\"quay.io/t/bar:v%s\","
		         "\"properties\":[{\"type\":\"olm.package\",\"value\":"
		         "{\"packageName\":\"bar\",\"version\":\"%s\"}}]}\n",
		         bundles[i], bundles[i], bundles[i]) == 0;
	ok = ok && al_catalog_new(&fr.in) == 0 &&
	     al_catalog_add_file(fr.in, "catalog.json", b.ptr, b.len) == 0 &&
	     al_catalog_finish(fr.in) == 0;
	CU_ASSERT(ok);
	if (ok) {
		oom_both("al_catalog_filter_apply", run_filter, &fr);
		/* the description held what the sweep compared: the skips */
		CU_ASSERT(fr.sm.want != NULL &&
		          strstr(fr.sm.want, "\"bar.v1.0.5\"") != NULL &&
		          strstr(fr.sm.want, "\"skips\"") != NULL);
	}
	free(fr.sm.want);
	al_buf_free(&b);
	al_catalog_free(fr.in);
}

struct helm_run {
	struct same sm;
	al_buf data;
};

static int run_helm_index(void *ud)
{
	struct helm_run *hr = ud;
	al_helm_index ix;
	al_buf b = AL_BUF_INIT(1 << 20);
	size_t i, k;
	int rc;

	memset(&ix, 0, sizeof(ix));
	rc = al_helm_index_parse(&ix, hr->data.ptr, hr->data.len, "index.yaml");
	oom_pause(1);
	for (i = 0; rc == 0 && i < ix.n; i++) {
		const al_helm_index_entry *e = &ix.entries[i];

		if (al_buf_printf(&b, "%s %s %s %s", e->name, e->version,
		                  e->type != NULL ? e->type : "-",
		                  e->digest != NULL ? e->digest : "-") < 0)
			rc = OOM_WRONG;
		for (k = 0; rc == 0 && k < e->nurls; k++)
			if (al_buf_printf(&b, " %s", e->urls[k]) < 0)
				rc = OOM_WRONG;
		if (rc == 0 && al_buf_puts(&b, "\n") < 0)
			rc = OOM_WRONG;
	}
	if (rc == 0)
		rc = same_as_first(&hr->sm, al_strdup(al_buf_cstr(&b)));
	al_buf_free(&b);
	al_helm_index_clear(&ix);
	oom_pause(0);
	return rc;
}

static int run_helm_chart(void *ud)
{
	static const char *const paths[] = {"{.image.repository}"};
	struct helm_run *hr = ud;
	al_helm_chart c;
	al_buf b = AL_BUF_INIT(1 << 20);
	size_t i;
	int rc;

	memset(&c, 0, sizeof(c));
	rc = al_helm_chart_read_mem(&c, hr->data.ptr, hr->data.len, paths, 1,
	                            "podinfo");
	oom_pause(1);
	if (rc == 0 &&
	    al_buf_printf(&b, "%s %s %s %d %s\n", c.name, c.version,
	                  c.app_version != NULL ? c.app_version : "-",
	                  c.library, c.config) < 0)
		rc = OOM_WRONG;
	for (i = 0; rc == 0 && i < c.nimages; i++)
		if (al_buf_printf(&b, "image %s %s\n", c.images[i].ref,
		                  c.images[i].source) < 0)
			rc = OOM_WRONG;
	for (i = 0; rc == 0 && i < c.nunresolved; i++)
		if (al_buf_printf(&b, "unresolved %s %s\n", c.unresolved[i].ref,
		                  c.unresolved[i].source) < 0)
			rc = OOM_WRONG;
	if (rc == 0)
		rc = same_as_first(&hr->sm, al_strdup(al_buf_cstr(&b)));
	al_buf_free(&b);
	al_helm_chart_clear(&c);
	oom_pause(0);
	return rc;
}

static void test_oom__helm_index_and_chart(void)
{
	struct helm_run hr;
	char path[1024];

	memset(&hr, 0, sizeof(hr));
	hr.data = (al_buf)AL_BUF_INIT(1 << 24);
	snprintf(path, sizeof(path), "%s/tests/data/helm/repo/index.yaml",
	         al_test_source_dir());
	CU_ASSERT_EQUAL(al_fs_read_file(path, &hr.data), 0);
	oom_both("al_helm_index_parse", run_helm_index, &hr);
	CU_ASSERT(hr.sm.want != NULL &&
	          strstr(hr.sm.want, "service-binding-operator 1.4.1") != NULL);
	free(hr.sm.want);
	memset(&hr.sm, 0, sizeof(hr.sm));
	al_buf_free(&hr.data);
	hr.data = (al_buf)AL_BUF_INIT(1 << 24);
	snprintf(path, sizeof(path), "%s/tests/data/helm/podinfo-5.0.0.tgz",
	         al_test_source_dir());
	CU_ASSERT_EQUAL(al_fs_read_file(path, &hr.data), 0);
	oom_both("al_helm_chart_read_mem", run_helm_chart, &hr);
	CU_ASSERT(hr.sm.want != NULL && strstr(hr.sm.want, "image ") != NULL);
	free(hr.sm.want);
	al_buf_free(&hr.data);
}

static const char cosign_payload_json[] =
    "{\"critical\":{\"identity\":{\"docker-reference\":"
    "\"quay.io/example/release:4.16.0\"},\"image\":"
    "{\"docker-manifest-digest\":\"sha256:"
    "0da6316466d60a3a4535d5fed3589feb0391989982fba59d47d4c729912d6363\"},"
    "\"type\":\"cosign container image signature\"},"
    "\"optional\":{\"creator\":\"oom test\",\"timestamp\":1700000000}}";

static int run_cosign_payload(void *ud)
{
	al_sig_payload pl;
	int rc;

	(void)ud;
	memset(&pl, 0, sizeof(pl));
	rc = al_cosign_payload_parse(&pl, (const uint8_t *)cosign_payload_json,
	                             strlen(cosign_payload_json));
	if (rc == 0 &&
	    (pl.reference == NULL ||
	     strcmp(pl.reference, "quay.io/example/release:4.16.0") != 0 ||
	     pl.creator == NULL || strcmp(pl.creator, "oom test") != 0 ||
	     !pl.has_timestamp))
		rc = OOM_WRONG;
	al_sig_payload_clear(&pl);
	return rc;
}

/* containers/image's real keyless signature (Fulcio certificate, Rekor
 * bundle annotation), as in test_cosign's policy test. */
struct cosign_run {
	al_cosign_trust *t;
	al_buf raw, payload;
	json_t *j;
	al_cosign_sig sig;
};

static int run_cosign_verify(void *ud)
{
	struct cosign_run *cr = ud;
	al_cosign_info info;
	al_cosign_opts o = AL_COSIGN_OPTS_INIT;
	int rc;

	memset(&info, 0, sizeof(info));
	o.trust = cr->t;
	o.require_tlog = 1;
	rc = al_cosign_verify_sig(&info, &cr->sig, &o);
	if (rc == 0 && (!info.keyless || !info.tlog_verified ||
	                !info.has_time || info.subject == NULL ||
	                strcmp(info.subject, "mitr@redhat.com") != 0 ||
	                info.issuer == NULL || !info.has_payload ||
	                info.payload.reference == NULL))
		rc = OOM_WRONG;
	al_cosign_info_clear(&info);
	return rc;
}

static void test_oom__cosign_payload_and_signature(void)
{
	struct cosign_run cr;
	char dir[1024], path[1100];
	const json_t *ann;

	oom_spare_jansson(1);
	oom_both("al_cosign_payload_parse", run_cosign_payload, NULL);
	memset(&cr, 0, sizeof(cr));
	cr.raw = (al_buf)AL_BUF_INIT(1 << 20);
	cr.payload = (al_buf)AL_BUF_INIT(1 << 20);
	snprintf(dir, sizeof(dir), "%s/tests/fixtures/containers-image-cosign",
	         al_test_source_dir());
	snprintf(path, sizeof(path),
	         "%s/dir-img-cosign-fulcio-rekor-valid/signature-1", dir);
	if (al_fs_read_file(path, &cr.raw) != 0 || cr.raw.len <= 15 ||
	    (cr.j = json_loadb((const char *)cr.raw.ptr + 15, cr.raw.len - 15,
	                       0, NULL)) == NULL ||
	    (ann = json_object_get(cr.j, "annotations")) == NULL ||
	    al_base64_decode(
	        &cr.payload,
	        json_string_value(json_object_get(cr.j, "payload")),
	        strlen(json_string_value(json_object_get(cr.j, "payload")))) !=
	        0 ||
	    al_cosign_trust_new(&cr.t) != 0) {
		CU_FAIL("cannot read the cosign fixture");
		goto out;
	}
	snprintf(path, sizeof(path), "%s/fulcio_v1.crt.pem", dir);
	CU_ASSERT_EQUAL(al_cosign_trust_add_fulcio_file(cr.t, path), 0);
	snprintf(path, sizeof(path), "%s/rekor.pub", dir);
	CU_ASSERT_EQUAL(al_cosign_trust_add_rekor_file(cr.t, path), 0);
	CU_ASSERT_EQUAL(
	    al_cosign_trust_set_identity(cr.t, "https://github.com/login/oauth",
	                                 "mitr@redhat.com"),
	    0);
	cr.sig.payload = cr.payload.ptr;
	cr.sig.payload_len = cr.payload.len;
	cr.sig.signature =
	    json_string_value(json_object_get(ann, AL_COSIGN_ANN_SIGNATURE));
	cr.sig.certificate =
	    json_string_value(json_object_get(ann, AL_COSIGN_ANN_CERTIFICATE));
	cr.sig.chain =
	    json_string_value(json_object_get(ann, AL_COSIGN_ANN_CHAIN));
	cr.sig.bundle =
	    json_string_value(json_object_get(ann, AL_COSIGN_ANN_BUNDLE));
	oom_both("al_cosign_verify_sig (Fulcio, Rekor bundle)",
	         run_cosign_verify, &cr);
out:
	oom_spare_jansson(0);
	al_cosign_trust_free(cr.t);
	json_decref(cr.j);
	al_buf_free(&cr.raw);
	al_buf_free(&cr.payload);
}

/* A Rekor v2 bundle (hashedrekord 0.0.2, inclusion proof to a C2SP
 * checkpoint, RFC 3161 timestamp, embedded SCTs) verified against its
 * trusted_root.json, from the sigstore-conformance fixtures: every
 * allocation failure, in loading the root or in verifying, is AL_ENOMEM. */
struct bundle_run {
	al_buf root, bundle, artifact;
};

static int run_cosign_bundle(void *ud)
{
	struct bundle_run *br = ud;
	al_cosign_trust *t = NULL;
	al_cosign_info info;
	al_cosign_opts o = AL_COSIGN_OPTS_INIT;
	int rc;

	memset(&info, 0, sizeof(info));
	if ((rc = al_cosign_trust_new(&t)) < 0 ||
	    (rc = al_cosign_trust_add_trusted_root(t, br->root.ptr,
	                                           br->root.len, "root")) < 0 ||
	    (rc = al_cosign_trust_set_identity(
	         t, "https://token.actions.githubusercontent.com", NULL)) < 0)
		goto out;
	o.trust = t;
	rc = al_cosign_verify_bundle(&info, br->bundle.ptr, br->bundle.len,
	                             br->artifact.ptr, br->artifact.len, &o);
	if (rc == 0)
		rc = al_cosign_check_blob(&info, br->artifact.ptr,
		                          br->artifact.len);
	if (rc == 0 && (!info.keyless || !info.tlog_verified ||
	                !info.tsa_time || info.issuer == NULL))
		rc = OOM_WRONG;
out:
	al_cosign_info_clear(&info);
	al_cosign_trust_free(t);
	return rc;
}

static void test_oom__cosign_bundle_rekor_v2(void)
{
	struct bundle_run br;
	char dir[1024], path[1200];

	br.root = (al_buf)AL_BUF_INIT(1 << 20);
	br.bundle = (al_buf)AL_BUF_INIT(1 << 20);
	br.artifact = (al_buf)AL_BUF_INIT(1 << 20);
	snprintf(dir, sizeof(dir),
	         "%s/tests/fixtures/sigstore-conformance/cases",
	         al_test_source_dir());
	snprintf(path, sizeof(path), "%s/rekor2-happy-path/trusted_root.json",
	         dir);
	CU_ASSERT_EQUAL_FATAL(al_fs_read_file(path, &br.root), 0);
	snprintf(path, sizeof(path),
	         "%s/rekor2-happy-path/bundle.sigstore.json", dir);
	CU_ASSERT_EQUAL_FATAL(al_fs_read_file(path, &br.bundle), 0);
	snprintf(path, sizeof(path), "%s/a.txt", dir);
	CU_ASSERT_EQUAL_FATAL(al_fs_read_file(path, &br.artifact), 0);
	/* jansson's parser reports some failed allocations as syntax
	 * errors, or drops bytes: its allocations are spared, as in the
	 * other cosign sweep */
	oom_spare_jansson(1);
	oom_nomem_only = 1;
	oom_both("al_cosign_verify_bundle (Rekor v2, trusted root)",
	         run_cosign_bundle, &br);
	oom_nomem_only = 0;
	oom_spare_jansson(0);
	al_buf_free(&br.root);
	al_buf_free(&br.bundle);
	al_buf_free(&br.artifact);
}

/* The trusted root kept in a store, read back on the far side and loaded
 * as trust: every allocation failure is AL_ENOMEM, never "not kept" or
 * "does not match its digest". */
struct kept_run {
	al_store *st;
	al_buf root;
};

static int run_kept_root(void *ud)
{
	struct kept_run *kr = ud;
	al_buf got = AL_BUF_INIT(1 << 20);
	al_cosign_trust *t = NULL;
	al_digest d;
	int rc;

	if ((rc = al_cosign_store_root_get(kr->st, &got, &d)) < 0 ||
	    (rc = al_cosign_trust_new(&t)) < 0 ||
	    (rc = al_cosign_trust_add_store_root(t, kr->st)) < 0)
		goto out;
	if (got.len != kr->root.len ||
	    memcmp(got.ptr, kr->root.ptr, got.len) != 0)
		rc = OOM_WRONG;
out:
	al_cosign_trust_free(t);
	al_buf_free(&got);
	return rc;
}

static void test_oom__cosign_kept_trusted_root(void)
{
	struct kept_run kr;
	al_store_opts so = {.create = 1};
	char dir[1024], path[1200];

	memset(&kr, 0, sizeof(kr));
	kr.root = (al_buf)AL_BUF_INIT(1 << 20);
	snprintf(path, sizeof(path),
	         "%s/tests/fixtures/sigstore-conformance/"
	         "trusted-root-public-good.json",
	         al_test_source_dir());
	CU_ASSERT_EQUAL_FATAL(al_fs_read_file(path, &kr.root), 0);
	snprintf(dir, sizeof(dir), "%s/oom-kept-root", al_test_tmpdir());
	CU_ASSERT_EQUAL_FATAL(al_store_open(&kr.st, dir, &so), 0);
	CU_ASSERT_EQUAL_FATAL(
	    al_cosign_store_root_put(kr.st, kr.root.ptr, kr.root.len, "root"),
	    0);
	oom_spare_jansson(1);
	oom_nomem_only = 1;
	oom_both("al_cosign_store_root_get, al_cosign_trust_add_store_root",
	         run_kept_root, &kr);
	oom_nomem_only = 0;
	oom_spare_jansson(0);
	al_store_free(kr.st);
	al_buf_free(&kr.root);
}

/* al_error_oom sets its message without any allocation. */
static void test_oom__error_oom_allocates_nothing(void)
{
	int rc;

	oom_arm(1, 1);
	rc = al_error_oom();
	CU_ASSERT_EQUAL(oom_disarm(), 0);
	CU_ASSERT_EQUAL(rc, AL_ENOMEM);
	CU_ASSERT_STRING_EQUAL(al_error_message(), "out of memory");
}

int main(void)
{
	CU_TestInfo tests[] = {
	    {"manifest_parse", test_oom__manifest_parse},
	    {"imageset_load", test_oom__imageset_load},
	    {"signature_payload_parse", test_oom__signature_payload_parse},
	    {"keyring_load", test_oom__keyring_load},
	    {"signature_verify", test_oom__signature_verify},
	    {"store_open", test_oom__store_open},
	    {"catalog_rebuild", test_oom__catalog_rebuild},
	    {"catalog_filter", test_oom__catalog_filter},
	    {"helm_index_and_chart", test_oom__helm_index_and_chart},
	    {"cosign_payload_and_signature",
	     test_oom__cosign_payload_and_signature},
	    {"cosign_bundle_rekor_v2", test_oom__cosign_bundle_rekor_v2},
	    {"cosign_kept_trusted_root", test_oom__cosign_kept_trusted_root},
	    {"error_oom_allocates_nothing",
	     test_oom__error_oom_allocates_nothing},
	    CU_TEST_INFO_NULL,
	};

	oom_install_jansson();
	return al_test_run("oom", tests);
}
