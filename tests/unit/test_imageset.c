/* test_imageset.c: unit tests for ImageSetConfiguration loading: accepted
 * subset, refusals with positions. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "al_test.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/imageset.h"
#include "mirror_imageset.h"

#define HEAD                                                                   \
	"kind: ImageSetConfiguration\napiVersion: "                            \
	"mirror.openshift.io/v2alpha1\n"
#define D256                                                                   \
	"sha256:"                                                              \
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

/* Write text to <tmpdir>/name; caller frees the path. */
static char *write_cfg(const char *name, const char *text)
{
	char *path = al_path_join(al_test_tmpdir(), name);

	if (path != NULL && al_fs_write_atomic(path, text, strlen(text)) != 0) {
		free(path);
		return NULL;
	}
	return path;
}

/* Loading text must fail with want and a message containing needle
 * (a "%s" in needle is replaced by the file's path). */
static void check_bad(const char *text, int want, const char *needle)
{
	char *path = write_cfg("bad.yaml", text);
	char *full = NULL;
	al_imageset *cfg = NULL;
	int rc;

	CU_ASSERT_PTR_NOT_NULL(path);
	if (path == NULL)
		return;
	full = strstr(needle, "%s") != NULL
	           ? al_sprintf("%s%s", path, needle + 2)
	           : al_strdup(needle);
	rc = al_imageset_load(&cfg, path);
	CU_ASSERT_EQUAL(rc, want);
	CU_ASSERT_PTR_NULL(cfg);
	if (rc == 0)
		al_imageset_free(cfg);
	else if (full == NULL || strstr(al_error_message(), full) == NULL) {
		fprintf(stderr, "message lacks '%s': %s\n", full,
		        al_error_message());
		CU_FAIL("message");
	}
	free(full);
	free(path);
}

static void test_imageset__full_example(void)
{
	const char *dir = al_test_tmpdir();
	char *path = write_cfg(
	    "full.yaml", HEAD
	    "mirror:\n"
	    "  platform:\n"
	    "    release:\n"
	    "      - quay.io/openshift-release-dev/ocp-release:4.15.0-x86_64\n"
	    "      - quay.io/openshift-release-dev/ocp-release@" D256 "\n"
	    "    architectures: [amd64, arm64]\n"
	    "    graph: false\n"
	    "  additionalImages:\n"
	    "    - name: registry.example.com/ubi9/ubi:latest\n"
	    "    - name: busybox\n"
	    "airlock:\n"
	    "  sources:\n"
	    "    - prefix: quay.io/airlock-samples\n"
	    "      location: oci:samples/layout\n"
	    "    - prefix: registry.example.com\n"
	    "      location: docker://127.0.0.1:5000/mirror\n"
	    "    - prefix: localhost:5000/x\n"
	    "      location: \"oci:/abs/layout\"\n"
	    "  insecureRegistries:\n"
	    "    - 127.0.0.1:5000\n"
	    "    - localhost\n");
	al_imageset *cfg = NULL;
	char *want = al_sprintf("oci:%s/samples/layout", dir);
	char *real = realpath(dir, NULL);
	char *want_real = al_sprintf("oci:%s/samples/layout", real);

	CU_ASSERT_EQUAL_FATAL(al_imageset_load(&cfg, path), 0);
	CU_ASSERT_STRING_EQUAL(cfg->path, path);
	CU_ASSERT_EQUAL(cfg->nreleases, 2);
	CU_ASSERT_STRING_EQUAL(
	    cfg->releases[0],
	    "quay.io/openshift-release-dev/ocp-release:4.15.0-x86_64");
	CU_ASSERT_EQUAL(cfg->narchitectures, 2);
	CU_ASSERT_STRING_EQUAL(cfg->architectures[1], "arm64");
	CU_ASSERT_EQUAL(cfg->nadditional, 2);
	CU_ASSERT_STRING_EQUAL(cfg->additional[1], "busybox");
	CU_ASSERT_EQUAL(cfg->nsources, 3);
	CU_ASSERT_STRING_EQUAL(cfg->sources[0].prefix,
	                       "quay.io/airlock-samples");
	/* Relative oci: paths are made absolute against the file's directory.
	 */
	CU_ASSERT(strcmp(cfg->sources[0].location, want_real) == 0 ||
	          strcmp(cfg->sources[0].location, want) == 0);
	CU_ASSERT_STRING_EQUAL(cfg->sources[1].location,
	                       "docker://127.0.0.1:5000/mirror");
	CU_ASSERT_STRING_EQUAL(cfg->sources[2].location, "oci:/abs/layout");
	CU_ASSERT_EQUAL(cfg->ninsecure, 2);
	CU_ASSERT_STRING_EQUAL(cfg->insecure[0], "127.0.0.1:5000");
	al_imageset_free(cfg);
	al_imageset_free(NULL);
	free(want);
	free(want_real);
	free(real);
	free(path);
}

static void test_imageset__minimal_and_single_release(void)
{
	char *path =
	    write_cfg("min.yaml", HEAD
	              "mirror:\n  platform:\n    release: quay.io/a/b:1\n");
	al_imageset *cfg = NULL;

	CU_ASSERT_EQUAL_FATAL(al_imageset_load(&cfg, path), 0);
	CU_ASSERT_EQUAL(cfg->nreleases, 1);
	CU_ASSERT_STRING_EQUAL(cfg->releases[0], "quay.io/a/b:1");
	CU_ASSERT_EQUAL(cfg->nadditional, 0);
	CU_ASSERT_EQUAL(cfg->nsources, 0);
	al_imageset_free(cfg);
	free(path);
	path = write_cfg("empty.yaml", HEAD);
	cfg = NULL;
	CU_ASSERT_EQUAL(al_imageset_load(&cfg, path), 0);
	CU_ASSERT_PTR_NOT_NULL(cfg);
	al_imageset_free(cfg);
	free(path);
}

static void test_imageset__wrong_kind_or_api(void)
{
	check_bad("kind: Foo\napiVersion: mirror.openshift.io/v2alpha1\n",
	          AL_EPARSE,
	          "%s:1:7: kind must be ImageSetConfiguration, not 'Foo'");
	check_bad("apiVersion: mirror.openshift.io/v2alpha1\n", AL_EPARSE,
	          "missing 'kind");
	check_bad("kind: ImageSetConfiguration\n", AL_EPARSE,
	          "missing 'apiVersion");
	check_bad("kind: ImageSetConfiguration\napiVersion: "
	          "mirror.openshift.io/v1alpha1\n",
	          AL_EPARSE, "%s:2:13: apiVersion must be");
	check_bad("kind: ImageSetConfiguration\napiVersion: v1\n", AL_EPARSE,
	          "%s:2:13: apiVersion must be");
	check_bad("- a\n", AL_EPARSE,
	          "%s:1:1: expected an ImageSetConfiguration mapping");
	check_bad(HEAD "---\n- a\n", AL_EPARSE,
	          "%s:4:1: expected an ImageSetConfiguration mapping");
	check_bad("", AL_EPARSE, "expected one YAML document");
}

static void test_imageset__unknown_fields_with_position(void)
{
	check_bad(HEAD "mirrors: {}\n", AL_EPARSE,
	          "%s:3:1: unknown field 'mirrors' in ImageSetConfiguration");
	check_bad(HEAD "mirror:\n  platform:\n    relase: x\n", AL_EPARSE,
	          "%s:5:5: unknown field 'relase' in mirror.platform");
	check_bad(HEAD
	          "mirror:\n  additionalImages:\n  - name: a\n    tag: b\n",
	          AL_EPARSE,
	          "%s:6:5: unknown field 'tag' in mirror.additionalImages[]");
	check_bad(HEAD "airlock:\n  source: []\n", AL_EPARSE,
	          "%s:4:3: unknown field 'source' in airlock");
	check_bad(HEAD "airlock:\n  sources:\n  - prefix: quay.io\n    "
	               "location: oci:x\n    extra: 1\n",
	          AL_EPARSE, "unknown field 'extra' in airlock.sources[]");
}

static void test_imageset__unsupported_features(void)
{
	check_bad(HEAD "mirror:\n  platform:\n    channels:\n    - name: "
	               "stable-4.15\n      blockedVersions: []\n",
	          AL_EUNSUPPORTED,
	          "%s:7:7: 'blockedVersions' in mirror.platform.channels[] is "
	          "not supported");
	check_bad(HEAD "mirror:\n  operators: []\n", AL_EUNSUPPORTED,
	          "%s:4:3: 'operators' in mirror is not supported");
	/* mirror.helm.local[].platforms is checked as oc-mirror checks it */
	check_bad(HEAD "mirror:\n  helm:\n    local:\n    - name: a\n"
	               "      path: a.tgz\n      platforms: [{os: linux}]\n",
	          AL_EPARSE,
	          "mirror.helm.local[].platforms[] needs 'os' and "
	          "'architecture'");
	check_bad(HEAD "storageConfig:\n  local: {path: x}\n", AL_EPARSE,
	          "%s:3:1: 'storageConfig' is a field of "
	          "mirror.openshift.io/v1alpha2, not of v2alpha1");
}

static void test_imageset__type_errors(void)
{
	check_bad(HEAD "mirror: []\n", AL_EPARSE,
	          "%s:3:9: mirror must be a mapping");
	check_bad(HEAD "mirror:\n  platform:\n    release: 4.15\n", AL_EPARSE,
	          "%s:5:14: mirror.platform.release must be a string");
	check_bad(HEAD "mirror:\n  platform:\n    release: {a: b}\n", AL_EPARSE,
	          "mirror.platform.release must be a string or a list");
	check_bad(HEAD "mirror:\n  platform:\n    architectures: amd64\n",
	          AL_EPARSE, "architectures must be a list");
	check_bad(HEAD "mirror:\n  platform:\n    architectures: [x86_64]\n",
	          AL_EPARSE, "%s:5:21: unknown architecture 'x86_64'");
	check_bad(HEAD "mirror:\n  platform:\n    graph: \"false\"\n",
	          AL_EPARSE, "graph must be true or false");
	check_bad(HEAD "mirror:\n  additionalImages:\n  - quay.io/a\n",
	          AL_EPARSE,
	          "%s:5:5: mirror.additionalImages[] must be a mapping");
	check_bad(HEAD "mirror:\n  additionalImages:\n  - {}\n", AL_EPARSE,
	          "needs 'name'");
	check_bad(HEAD "mirror:\n  additionalImages:\n  - name: \"\"\n",
	          AL_EPARSE, "must be a non-empty string");
	check_bad(HEAD "airlock:\n  insecureRegistries: localhost\n", AL_EPARSE,
	          "insecureRegistries must be a list");
}

static void test_imageset__invalid_references(void)
{
	check_bad(HEAD
	          "mirror:\n  additionalImages:\n  - name: quay.io/Upper/x\n",
	          AL_EPARSE,
	          "%s:5:11: invalid reference 'quay.io/Upper/x': repository "
	          "name must be lowercase");
	check_bad(
	    HEAD
	    "mirror:\n  platform:\n    release: [\"quay.io/a@sha256:12\"]\n",
	    AL_EPARSE, "%s:5:15: invalid reference");
	check_bad(HEAD "mirror:\n  platform:\n    release: \"quay.io/a:\"\n",
	          AL_EPARSE, "bad tag");
}

static void test_imageset__sources_validation(void)
{
	check_bad(HEAD "airlock:\n  sources:\n  - prefix: quay.io\n    "
	               "location: /plain/path\n",
	          AL_EPARSE,
	          "%s:6:15: airlock.sources[].location must start with 'oci:' "
	          "or 'docker://'");
	check_bad(HEAD "airlock:\n  sources:\n  - prefix: quay.io\n    "
	               "location: \"oci:\"\n",
	          AL_EPARSE, "empty OCI layout path");
	check_bad(HEAD "airlock:\n  sources:\n  - prefix: quay.io\n    "
	               "location: \"oci:/l:quay.io/x:1\"\n",
	          AL_EPARSE,
	          "%s:6:15: airlock.sources[].location must name an OCI layout "
	          "directory without ':NAME'");
	check_bad(HEAD "airlock:\n  sources:\n  - prefix: quay.io\n    "
	               "location: docker://Bad_Host/x\n",
	          AL_EPARSE, "not a valid registry or repository prefix");
	check_bad(HEAD "airlock:\n  sources:\n  - prefix: airlock-samples\n    "
	               "location: oci:x\n",
	          AL_EPARSE,
	          "%s:5:13: airlock.sources[].prefix must start with a "
	          "registry host");
	check_bad(HEAD "airlock:\n  sources:\n  - prefix: quay.io/a:tag\n    "
	               "location: oci:x\n",
	          AL_EPARSE, "not a valid registry or repository prefix");
	check_bad(HEAD "airlock:\n  sources:\n  - prefix: quay.io\n", AL_EPARSE,
	          "needs 'prefix' and 'location'");
	check_bad(HEAD "airlock:\n  sources:\n  - {prefix: quay.io, location: "
	               "oci:a}\n  - {prefix: quay.io, location: oci:b}\n",
	          AL_EPARSE, "duplicate airlock.sources[].prefix 'quay.io'");
	check_bad(HEAD "airlock:\n  insecureRegistries: [\"quay.io/x\"]\n",
	          AL_EPARSE, "must be a host[:port]");
}

static void test_imageset__yaml_errors_carry_path(void)
{
	check_bad(HEAD "mirror:\n  platform: {}\n  platform: {}\n", AL_EPARSE,
	          "%s:5:3: duplicate key 'platform'");
	check_bad(HEAD "mirror: &m {}\n", AL_EPARSE,
	          "anchors are not supported");
	check_bad(HEAD "mirror:\n\tplatform: {}\n", AL_EPARSE, "%s:4:");
}

static void test_imageset__missing_and_oversized_file(void)
{
	al_imageset *cfg = NULL;
	char *path = al_path_join(al_test_tmpdir(), "nope.yaml");
	char *big = malloc(AL_IMAGESET_MAX_BYTES + 2);
	char *bigpath;

	CU_ASSERT_EQUAL(al_imageset_load(&cfg, path), AL_ENOTFOUND);
	CU_ASSERT_PTR_NULL(cfg);
	free(path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(big);
	memset(big, '#', AL_IMAGESET_MAX_BYTES + 1);
	big[AL_IMAGESET_MAX_BYTES + 1] = '\0';
	bigpath = write_cfg("big.yaml", big);
	CU_ASSERT_EQUAL(al_imageset_load(&cfg, bigpath), AL_ELIMIT);
	CU_ASSERT_PTR_NULL(cfg);
	free(bigpath);
	free(big);
}

static void test_imageset__relative_config_path(void)
{
	/* A config named relative to the working directory resolves oci:
	 * against its own directory. */
	char *sub = al_path_join(al_test_tmpdir(), "sub");
	char *cwd = getcwd(NULL, 0);
	char *path;
	al_imageset *cfg = NULL;
	const char *text = HEAD "airlock:\n  sources:\n  - {prefix: quay.io, "
	                        "location: \"oci:../lay\"}\n";

	CU_ASSERT_EQUAL_FATAL(al_fs_mkdir_p(sub, 0755), 0);
	path = al_path_join(sub, "c.yaml");
	CU_ASSERT_EQUAL(al_fs_write_atomic(path, text, strlen(text)), 0);
	CU_ASSERT_EQUAL(chdir(al_test_tmpdir()), 0);
	CU_ASSERT_EQUAL(al_imageset_load(&cfg, "sub/c.yaml"), 0);
	if (cfg != NULL && cfg->nsources == 1) {
		CU_ASSERT(cfg->sources[0].location[4] == '/');
		CU_ASSERT(
		    al_str_endswith(cfg->sources[0].location, "/sub/../lay"));
	} else {
		CU_FAIL("load");
	}
	al_imageset_free(cfg);
	CU_ASSERT_EQUAL(chdir(cwd), 0);
	free(cwd);
	free(path);
	free(sub);
}

static void test_imageset__bundled_sample(void)
{
	char *path =
	    al_path_join(al_test_source_dir(), "samples/imageset.yaml");
	char *layout = al_path_join(al_test_source_dir(), "samples/layout");
	char *real = layout != NULL ? realpath(layout, NULL) : NULL;
	char *want = al_sprintf("oci:%s", real != NULL ? real : "?");
	al_imageset *cfg = NULL;
	int rc = al_imageset_load(&cfg, path);

	CU_ASSERT_EQUAL(rc, 0);
	if (rc == 0) {
		CU_ASSERT_EQUAL(cfg->nreleases, 1);
		CU_ASSERT_EQUAL(cfg->nadditional, 1);
		CU_ASSERT_EQUAL(cfg->nsources, 1);
		if (cfg->nsources == 1) {
			CU_ASSERT_STRING_EQUAL(cfg->sources[0].prefix,
			                       "quay.io/airlock-samples");
			/* The directory is resolved with realpath, the last
			 * part is kept. */
			CU_ASSERT_STRING_EQUAL(cfg->sources[0].location, want);
		}
	} else {
		fprintf(stderr, "%s\n", al_error_message());
	}
	al_imageset_free(cfg);
	free(want);
	free(real);
	free(layout);
	free(path);
}

static void test_imageset__channels(void)
{
	char *path =
	    write_cfg("channels.yaml", HEAD "mirror:\n"
	                                    "  platform:\n"
	                                    "    channels:\n"
	                                    "    - name: stable-4.14\n"
	                                    "      minVersion: 4.14.9\n"
	                                    "      maxVersion: 4.14.10\n"
	                                    "      shortestPath: true\n"
	                                    "    - name: okd-4.15\n"
	                                    "      type: okd\n"
	                                    "      full: true\n"
	                                    "    architectures: [amd64]\n"
	                                    "airlock:\n"
	                                    "  graph:\n"
	                                    "    url: http://127.0.0.1:1/api\n"
	                                    "    excludeConditional: true\n");
	al_imageset *cfg = NULL;

	CU_ASSERT_PTR_NOT_NULL(path);
	CU_ASSERT_EQUAL(al_imageset_load(&cfg, path), 0);
	if (cfg != NULL) {
		CU_ASSERT_EQUAL(cfg->nchannels, 2);
		CU_ASSERT_EQUAL(cfg->nreleases, 0);
		if (cfg->nchannels == 2) {
			CU_ASSERT_STRING_EQUAL(cfg->channels[0].name,
			                       "stable-4.14");
			CU_ASSERT_STRING_EQUAL(cfg->channels[0].min_version,
			                       "4.14.9");
			CU_ASSERT_STRING_EQUAL(cfg->channels[0].max_version,
			                       "4.14.10");
			CU_ASSERT_EQUAL(cfg->channels[0].shortest_path, 1);
			CU_ASSERT_EQUAL(cfg->channels[0].okd, 0);
			CU_ASSERT_EQUAL(cfg->channels[1].okd, 1);
			CU_ASSERT_EQUAL(cfg->channels[1].full, 1);
			CU_ASSERT_PTR_NULL(cfg->channels[1].min_version);
		}
		CU_ASSERT_STRING_EQUAL(cfg->graph_url,
		                       "http://127.0.0.1:1/api");
		CU_ASSERT_EQUAL(cfg->graph_exclude_conditional, 1);
	}
	al_imageset_free(cfg);
	free(path);
}

static void test_imageset__channel_errors(void)
{
	check_bad(HEAD "mirror:\n  platform:\n    channels:\n    - minVersion: "
	               "4.14.1\n",
	          AL_EPARSE, "%s:6:7: mirror.platform.channels[] needs 'name'");
	check_bad(HEAD "mirror:\n  platform:\n    channels:\n    - name: a\n"
	               "      minVersion: 4.15\n",
	          AL_EPARSE,
	          "minVersion must be a full version like 4.15.3, "
	          "not '4.15'");
	check_bad(HEAD "mirror:\n  platform:\n    channels:\n    - name: a\n"
	               "      minVersion: 4.15.2\n      maxVersion: 4.15.1\n",
	          AL_EPARSE,
	          "minVersion 4.15.2 is higher than maxVersion 4.15.1 in "
	          "channel 'a'");
	check_bad(HEAD "mirror:\n  platform:\n    channels:\n    - name: a\n"
	               "      type: rhel\n",
	          AL_EPARSE, "%s:7:13: unknown channel type 'rhel'");
	check_bad(HEAD "mirror:\n  platform:\n    channels:\n    - name: a/b\n",
	          AL_EPARSE, "invalid channel name 'a/b'");
	check_bad(HEAD "mirror:\n  platform:\n    channels:\n    - name: a\n"
	               "      shortestPath: yes\n",
	          AL_EPARSE, "shortestPath must be true or false");
	check_bad(HEAD "mirror:\n  platform:\n    channels:\n    - name: a\n"
	               "    - name: b\n    - name: a\n      full: true\n",
	          AL_EPARSE,
	          "%s:8:7: duplicate release channel 'a' (oc-mirror refuses it "
	          "too)");
	check_bad(HEAD "airlock:\n  graph:\n    url: ftp://x\n", AL_EPARSE,
	          "%s:5:10: airlock.graph.url must start with http://");
	check_bad(HEAD "airlock:\n  graph:\n    urls: x\n", AL_EPARSE,
	          "unknown field 'urls' in airlock.graph");
}

#define HEAD_V1                                                                \
	"kind: ImageSetConfiguration\napiVersion: "                            \
	"mirror.openshift.io/v1alpha2\n"

/* Load text that must be accepted; NULL (and a test failure) if not. */
static al_imageset *load_ok(const char *name, const char *text)
{
	char *path = write_cfg(name, text);
	al_imageset *cfg = NULL;
	int rc;

	CU_ASSERT_PTR_NOT_NULL(path);
	if (path == NULL)
		return NULL;
	rc = al_imageset_load(&cfg, path);
	CU_ASSERT_EQUAL(rc, 0);
	if (rc < 0)
		fprintf(stderr, "%s: %s\n", name, al_error_message());
	free(path);
	return cfg;
}

/* mirror.platform.graph: true is read (the graph-data image,
 * docs/graph.md); false and absent leave it off. */
static void test_imageset__platform_graph(void)
{
	al_imageset *cfg;

	cfg = load_ok("graph-true.yaml",
	              HEAD "mirror:\n  platform:\n    graph: true\n");
	CU_ASSERT(cfg != NULL && cfg->graph == 1);
	al_imageset_free(cfg);
	cfg = load_ok("graph-false.yaml",
	              HEAD "mirror:\n  platform:\n    graph: false\n");
	CU_ASSERT(cfg != NULL && cfg->graph == 0);
	al_imageset_free(cfg);
	cfg = load_ok("graph-v1.yaml",
	              HEAD_V1 "storageConfig:\n  local: {path: x}\n"
	                      "mirror:\n  platform:\n    graph: true\n");
	CU_ASSERT(cfg != NULL && cfg->graph == 1);
	al_imageset_free(cfg);
}

static int has_note(const al_imageset *cfg, const char *needle)
{
	size_t i;

	for (i = 0; i < cfg->nnotes; i++)
		if (strstr(cfg->notes[i], needle) != NULL)
			return 1;
	return 0;
}

/* oc-mirror v1's format: channels, archiveSize, storageConfig.local (the
 * store, relative to the file), blockedImages, samples. */
static void test_imageset__v1alpha2_mapped(void)
{
	al_imageset *cfg = load_ok(
	    "v1.yaml", HEAD_V1 "archiveSize: 4\n"
	                       "storageConfig:\n"
	                       "  local:\n"
	                       "    path: ./metadata\n"
	                       "mirror:\n"
	                       "  platform:\n"
	                       "    architectures: [amd64]\n"
	                       "    channels:\n"
	                       "    - name: stable-4.15\n"
	                       "      minVersion: 4.15.1\n"
	                       "      maxVersion: 4.15.3\n"
	                       "    graph: false\n"
	                       "  additionalImages:\n"
	                       "  - name: registry.redhat.io/ubi9/ubi:latest\n"
	                       "  blockedImages:\n"
	                       "  - name: alpine\n"
	                       "  - name: ^blocked-registry.com\n"
	                       "  samples:\n"
	                       "  - name: ruby\n");
	char *want = al_path_join(al_test_tmpdir(), "metadata");

	if (cfg != NULL) {
		CU_ASSERT_EQUAL(cfg->api_version, 1);
		CU_ASSERT_EQUAL(cfg->archive_size, 4 * AL_GIB);
		CU_ASSERT_PTR_NOT_NULL(cfg->store_path);
		if (cfg->store_path != NULL && want != NULL)
			CU_ASSERT_STRING_EQUAL(cfg->store_path, want);
		CU_ASSERT_EQUAL(cfg->nchannels, 1);
		CU_ASSERT_EQUAL(cfg->nadditional, 1);
		CU_ASSERT_EQUAL(cfg->nblocked, 2);
		CU_ASSERT_EQUAL(cfg->nsamples, 1);
		CU_ASSERT(has_note(cfg, "mirror.samples: sample images are not "
		                        "mirrored"));
		CU_ASSERT(has_note(cfg, ":21:3: "));
	}
	al_imageset_free(cfg);
	free(want);
}

/* What each version does not have is refused with its position. */
static void test_imageset__v1alpha2_refusals(void)
{
	check_bad(HEAD_V1 "mirror:\n  platform:\n    release: quay.io/a:1\n",
	          AL_EPARSE,
	          "%s:5:5: 'release' in mirror.platform is a field of "
	          "mirror.openshift.io/v2alpha1, not of v1alpha2");
	check_bad(HEAD_V1 "mirror:\n  platform:\n    kubeVirtContainer: true\n",
	          AL_EPARSE, "%s:5:5: 'kubeVirtContainer' in mirror.platform");
	check_bad(HEAD_V1
	          "mirror:\n  additionalImages:\n  - name: quay.io/a:1\n"
	          "    targetTag: b\n",
	          AL_EPARSE,
	          "%s:6:5: 'targetTag' in mirror.additionalImages[] "
	          "is a field of mirror.openshift.io/v2alpha1");
	check_bad(HEAD_V1 "storageConfig:\n  registry:\n    imageURL: "
	                  "localhost:5000/metadata:latest\n    skipTLS: true\n",
	          AL_EUNSUPPORTED,
	          "%s:5:5: storageConfig.registry is not supported");
	check_bad(HEAD_V1 "storageConfig:\n  local: {}\n", AL_EPARSE,
	          "%s:4:10: storageConfig.local needs 'path'");
	check_bad(HEAD_V1 "storageConfig:\n  locale: {path: x}\n", AL_EPARSE,
	          "%s:4:3: unknown field 'locale' in storageConfig");
	check_bad(HEAD_V1 "archiveSize: 0\n", AL_EPARSE,
	          "%s:3:14: archiveSize must be between 1 and 1048576");
	check_bad(HEAD_V1 "archiveSize: -2\n", AL_EPARSE,
	          "%s:3:14: archiveSize must be between");
	check_bad(HEAD "archiveSize: 4G\n", AL_EPARSE,
	          "%s:3:14: archiveSize must be a whole number of GiB");
	check_bad(HEAD "archiveSize: 2.5\n", AL_EPARSE,
	          "archiveSize must be a whole number of GiB");
	/* both spellings in one mapping: the other one is a typo */
	check_bad(HEAD "mirror:\n  additionalImages: []\n"
	               "  additionalimages: []\n",
	          AL_EPARSE,
	          "%s:5:3: unknown field 'additionalimages' in mirror: the "
	          "field is spelled 'additionalImages'");
}

/* oc-mirror's Go decoder matches field names ignoring case, so its own
 * tests/unit/testdata/config/valid.yaml spells additionalimages and
 * blockedimages: read as oc-mirror reads them, with a note each. */
static void test_imageset__field_names_in_another_case(void)
{
	al_imageset *cfg =
	    load_ok("case.yaml", HEAD "mirror:\n"
	                              "  additionalimages:\n"
	                              "  - name: registry.example.com/a:1\n"
	                              "  BlockedImages:\n"
	                              "  - Name: ^registry.example.com/b\n");

	if (cfg == NULL)
		return;
	CU_ASSERT_EQUAL(cfg->nadditional, 1);
	CU_ASSERT_EQUAL(cfg->nblocked, 1);
	CU_ASSERT_TRUE(has_note(cfg, "'additionalimages' read as "
	                             "'additionalImages'"));
	CU_ASSERT_TRUE(has_note(cfg, "'Name' read as 'name'"));
	al_imageset_free(cfg);
}

/* operators[].platforms and helm charts[].platforms (oc-mirror's sparse
 * manifest configurations, isc-sparse-full.yaml): accepted with a note
 * that whole indexes are copied; minVersion above maxVersion refused at
 * load (oc-mirror's isc-operator-invalid-version-range.yaml). */
static void test_imageset__operator_platforms_and_ranges(void)
{
	static const char ok[] =
	    HEAD "mirror:\n"
	         "  operators:\n"
	         "  - catalog: quay.io/oc-mirror/oc-mirror-dev:test-catalog\n"
	         "    packages:\n"
	         "    - name: foo\n"
	         "    platforms:\n"
	         "    - os: linux\n"
	         "      architecture: amd64\n"
	         "  helm:\n"
	         "    repositories:\n"
	         "    - name: podinfo\n"
	         "      url: https://stefanprodan.github.io/podinfo\n"
	         "      charts:\n"
	         "      - name: podinfo\n"
	         "        version: 5.0.0\n"
	         "        platforms:\n"
	         "        - {os: linux, architecture: arm64}\n";
	static const char bad[] =
	    HEAD "mirror:\n"
	         "  operators:\n"
	         "  - catalog: quay.io/oc-mirror/oc-mirror-dev:test-catalog\n"
	         "    packages:\n"
	         "    - name: foo\n"
	         "      channels:\n"
	         "      - name: beta\n"
	         "        minVersion: '0.3.1'\n"
	         "        maxVersion: '0.2.0'\n";
	char *path = write_cfg("ops.yaml", ok);
	al_imageset *cfg = NULL;

	CU_ASSERT_PTR_NOT_NULL_FATAL(path);
	CU_ASSERT_EQUAL(al_imageset_load_ex(&cfg, path, AL_IMAGESET_OPERATORS),
	                0);
	free(path);
	if (cfg != NULL) {
		CU_ASSERT_EQUAL(cfg->noperators, 1);
		CU_ASSERT_TRUE(has_note(cfg, "mirror.operators[].platforms: "
		                             "airlock copies every platform"));
		CU_ASSERT_TRUE(has_note(cfg, "charts[].platforms: airlock "
		                             "copies every platform"));
		al_imageset_free(cfg);
	}
	cfg = NULL;
	path = write_cfg("range.yaml", bad);
	CU_ASSERT_PTR_NOT_NULL_FATAL(path);
	CU_ASSERT_EQUAL(al_imageset_load_ex(&cfg, path, AL_IMAGESET_OPERATORS),
	                AL_EPARSE);
	CU_ASSERT_PTR_NULL(cfg);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(),
	                              ":10:21: packages[].channels[]: "
	                              "minVersion 0.3.1 is greater than "
	                              "maxVersion 0.2.0"));
	al_imageset_free(cfg);
	free(path);
}

/* v2alpha1's platform fields, additionalImages refusals, blockedImages. */
static void test_imageset__v2alpha1_fields(void)
{
	al_imageset *cfg = load_ok(
	    "v2.yaml", HEAD "archiveSize: 8\n"
	                    "mirror:\n"
	                    "  platform:\n"
	                    "    kubeVirtContainer: true\n"
	                    "    platforms:\n"
	                    "    - os: linux\n"
	                    "      architecture: arm64\n"
	                    "    channels:\n"
	                    "    - name: stable-4.16\n"
	                    "  blockedImages:\n"
	                    "  - name: \"(aws|gcp|azure|ibm|openstack)\"\n");

	if (cfg != NULL) {
		CU_ASSERT_EQUAL(cfg->api_version, 2);
		CU_ASSERT_EQUAL(cfg->archive_size, 8 * AL_GIB);
		CU_ASSERT_EQUAL(cfg->kubevirt, 1);
		CU_ASSERT_EQUAL(cfg->nplatforms, 1);
		if (cfg->nplatforms == 1)
			CU_ASSERT_STRING_EQUAL(cfg->platforms[0],
			                       "linux/arm64");
		CU_ASSERT_EQUAL(cfg->nblocked, 1);
		CU_ASSERT_PTR_NULL(cfg->store_path);
		CU_ASSERT_EQUAL(cfg->nnotes, 0);
	}
	al_imageset_free(cfg);
	cfg = load_ok("v2b.yaml",
	              HEAD "mirror:\n  platform:\n    platforms:\n"
	                   "    - {os: linux, architecture: amd64}\n"
	                   "    - {os: linux, architecture: s390x}\n");
	if (cfg != NULL) {
		CU_ASSERT_EQUAL(cfg->nplatforms, 2);
		CU_ASSERT(has_note(cfg, "%s:5:5: ") ||
		          has_note(cfg, "names several platforms"));
	}
	al_imageset_free(cfg);
	check_bad(HEAD "mirror:\n  platform:\n    architectures: [amd64]\n"
	               "    platforms:\n    - {os: linux, architecture: "
	               "amd64}\n",
	          AL_EPARSE,
	          "%s:7:5: mirror.platform.platforms and "
	          "mirror.platform.architectures cannot be used together");
	check_bad(HEAD "mirror:\n  platform:\n    platforms:\n    - {os: linux}"
	               "\n",
	          AL_EPARSE,
	          "%s:6:7: mirror.platform.platforms[] needs 'os' and "
	          "'architecture'");
	check_bad(HEAD "mirror:\n  platform:\n    platforms:\n    - {os: "
	               "linux, architecture: amd64, variant: v8}\n",
	          AL_EPARSE,
	          "unknown field 'variant' in mirror.platform.platforms[]");
	check_bad(HEAD "mirror:\n  platform:\n    kubeVirtContainer: yes\n",
	          AL_EPARSE,
	          "%s:5:24: mirror.platform.kubeVirtContainer must be true or "
	          "false");
	check_bad(HEAD "mirror:\n  additionalImages:\n  - name: quay.io/a:1\n"
	               "    targetRepo: \"invalid:@tag\"\n",
	          AL_EPARSE,
	          "%s:6:17: targetRepo 'invalid:@tag' of 'quay.io/a:1' is not "
	          "a repository path");
	check_bad(HEAD "mirror:\n  additionalImages:\n  - name: quay.io/a:1\n"
	               "    targetTag: \"bad tag\"\n",
	          AL_EPARSE, "%s:6:16: targetRepo/targetTag of 'quay.io/a:1'");
	cfg = load_ok("v2t.yaml", HEAD "mirror:\n  additionalImages:\n"
	                               "  - name: quay.io/a/b:1\n"
	                               "    targetRepo: ubi-repo\n"
	                               "    targetTag: ubi-v9\n"
	                               "  - name: quay.io/a/c:2\n"
	                               "  - name: quay.io/a/d@" D256 "\n"
	                               "    targetTag: tag-1\n");
	if (cfg != NULL) {
		const char *const *rn =
		    (const char *const *)cfg->additional_renames;
		CU_ASSERT_EQUAL(cfg->nadditional, 3);
		CU_ASSERT_EQUAL(cfg->nadditional_renames, 2);
		CU_ASSERT_PTR_NULL(al_imageset_rename_of(rn, "quay.io/a/c:2"));
		CU_ASSERT_STRING_EQUAL(
		    al_imageset_rename_of(rn, "quay.io/a/b:1"),
		    "quay.io/ubi-repo:ubi-v9");
		CU_ASSERT_STRING_EQUAL(
		    al_imageset_rename_of(rn, "quay.io/a/d@" D256),
		    "quay.io/a/d:tag-1");
	}
	al_imageset_free(cfg);
	/* oc-mirror v1alpha2 has no targetRepo */
	check_bad("kind: ImageSetConfiguration\napiVersion: "
	          "mirror.openshift.io/v1alpha2\nmirror:\n  additionalImages:"
	          "\n  - name: quay.io/a:1\n    targetRepo: b/c\n",
	          AL_EPARSE, "is a field of mirror.openshift.io/v2alpha1");
	cfg =
	    load_ok("v2c.yaml", HEAD "mirror:\n  additionalImages:\n"
	                             "  - name: quay.io/a:1\n"
	                             "  - name: quay.io/a:2\n"
	                             "    platforms:\n"
	                             "    - {os: linux, architecture: amd64}\n"
	                             "  - name: quay.io/a:3\n"
	                             "    platforms:\n"
	                             "    - {os: linux, architecture: amd64}\n"
	                             "    - {os: linux, architecture: arm64}\n"
	                             "  - name: quay.io/a:4\n"
	                             "    platforms: []\n");
	if (cfg != NULL) {
		CU_ASSERT_EQUAL(cfg->nadditional, 4);
		CU_ASSERT_PTR_NOT_NULL(cfg->additional_platforms);
		if (cfg->additional_platforms != NULL) {
			CU_ASSERT_PTR_NULL(cfg->additional_platforms[0]);
			CU_ASSERT_STRING_EQUAL(cfg->additional_platforms[1],
			                       "linux/amd64");
			CU_ASSERT_PTR_NULL(cfg->additional_platforms[2]);
			CU_ASSERT_PTR_NULL(cfg->additional_platforms[3]);
		}
		CU_ASSERT(has_note(cfg, ":11:5: mirror.additionalImages[]."
		                        "platforms names several platforms: "
		                        "airlock mirrors the whole index of "
		                        "quay.io/a:3"));
		CU_ASSERT_EQUAL(al_mirror__own_platform_count(cfg), 1);
	}
	al_imageset_free(cfg);
	check_bad(HEAD "mirror:\n  additionalImages:\n  - name: quay.io/a:1\n"
	               "    platforms: [linux/amd64]\n",
	          AL_EPARSE,
	          "%s:6:17: mirror.additionalImages[].platforms[] must be a "
	          "mapping with 'os' and 'architecture'");
	check_bad(HEAD "mirror:\n  blockedImages:\n  - name: \"a(b\"\n",
	          AL_EPARSE,
	          "%s:5:11: blocked image 'a(b': invalid regular expression");
	check_bad(HEAD "mirror:\n  blockedImages:\n  - name: \"(?i)ubi\"\n",
	          AL_EUNSUPPORTED,
	          "%s:5:11: mirror.blockedImages[].name uses Go regexp syntax");
	check_bad(HEAD "mirror:\n  blockedImages:\n  - ubi\n", AL_EPARSE,
	          "%s:5:5: mirror.blockedImages must be a list of mappings");
	check_bad(HEAD "mirror:\n  samples:\n  - {name: ruby, tag: x}\n",
	          AL_EPARSE, "unknown field 'tag' in mirror.samples");
}

/* blockedImages match as oc-mirror's regexp.MatchString: unanchored,
 * against the reference without transport or its normalised form. */
/* The destination name of targetRepo/targetTag: oc-mirror v2's
 * resolveTargetRepoTag and buildMirrorToDiskPaths, case by case. */
static void test_imageset__target_name_mapping(void)
{
	static const struct {
		const char *ref, *repo, *tag, *want;
	} cases[] = {
	    /* targetRepo replaces the path, the registry and tag stay */
	    {"quay.io/a/b:1", "custom-ns/my-ubi8", NULL,
	     "quay.io/custom-ns/my-ubi8:1"},
	    /* targetTag only */
	    {"quay.io/a/b:1", NULL, "v8", "quay.io/a/b:v8"},
	    {"quay.io/a/b:1", "x", "y", "quay.io/x:y"},
	    /* by digest: the digest stays unless a targetTag names it */
	    {"quay.io/a/b@" D256, "x/y", NULL, "quay.io/x/y@" D256},
	    {"quay.io/a/b@" D256, NULL, "tag-1", "quay.io/a/b:tag-1"},
	    /* tag and digest: named by the tag (fetched by the digest) */
	    {"quay.io/a/b:1@" D256, "x", NULL, "quay.io/x:1"},
	    /* neither tag nor digest: latest */
	    {"registry.local:5000/a/b", "c", NULL,
	     "registry.local:5000/c:latest"},
	    /* oc-mirror's separators */
	    {"quay.io/a/b:1", "a__b/c.d/e---f", NULL,
	     "quay.io/a__b/c.d/e---f:1"},
	};
	static const char *const bad_repos[] = {
	    "invalid:@tag", "Upper", "a//b", "/a",       "a/", "a..b",
	    "a___b",        "-a",    "a-",   "a@sha256", "",
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *name = NULL;
		int rc = al_imageset_target_name(&name, cases[i].ref,
		                                 cases[i].repo, cases[i].tag);
		CU_ASSERT_EQUAL(rc, 0);
		if (name == NULL || strcmp(name, cases[i].want) != 0) {
			fprintf(stderr, "%s + (%s, %s): got %s, want %s\n",
			        cases[i].ref,
			        cases[i].repo ? cases[i].repo : "-",
			        cases[i].tag ? cases[i].tag : "-",
			        name ? name : "NULL", cases[i].want);
			CU_FAIL("target name");
		}
		free(name);
	}
	for (i = 0; i < sizeof(bad_repos) / sizeof(bad_repos[0]); i++) {
		if (al_imageset_target_repo_valid(bad_repos[i])) {
			fprintf(stderr, "accepted '%s'\n", bad_repos[i]);
			CU_FAIL("bad targetRepo accepted");
		}
	}
	{
		char *name = (char *)"x";
		/* neither given: no rename */
		CU_ASSERT_EQUAL(
		    al_imageset_target_name(&name, "quay.io/a:1", NULL, ""), 0);
		CU_ASSERT_PTR_NULL(name);
		CU_ASSERT_EQUAL(al_imageset_target_name(&name, "quay.io/a:1",
		                                        NULL, "bad tag"),
		                AL_EPARSE);
		CU_ASSERT_PTR_NULL(name);
	}
}

static void test_imageset__blocked_matching(void)
{
	al_imageset *cfg = load_ok(
	    "blocked.yaml", HEAD "mirror:\n"
	                         "  blockedImages:\n"
	                         "  - name: registry.redhat.io/ubi8/ubi:fake\n"
	                         "  - name: ^docker.io/library/alpine\n"
	                         "  - name: \"(aws|gcp)\"\n");
	const char *pat = NULL;

	if (cfg == NULL)
		return;
	CU_ASSERT(
	    al_imageset_blocked(cfg, "registry.redhat.io/ubi8/ubi:fake", &pat));
	CU_ASSERT_PTR_NOT_NULL(pat);
	CU_ASSERT(al_imageset_blocked(
	    cfg, "docker://registry.redhat.io/ubi8/ubi:fake", NULL));
	CU_ASSERT(
	    !al_imageset_blocked(cfg, "registry.redhat.io/ubi8/ubi:8.9", NULL));
	/* "alpine" is docker.io/library/alpine:latest normalised */
	CU_ASSERT(al_imageset_blocked(cfg, "alpine", NULL));
	CU_ASSERT(!al_imageset_blocked(cfg, "quay.io/library/alpine", NULL));
	CU_ASSERT(al_imageset_blocked(
	    cfg, "quay.io/openshift-release-dev/aws-ebs-csi:1", NULL));
	CU_ASSERT(!al_imageset_blocked(NULL, "alpine", NULL));
	al_imageset_free(cfg);
}

/* Several documents: the union, notes say so; scalars must agree. */
static void test_imageset__several_documents(void)
{
	al_imageset *cfg = load_ok("multi.yaml", HEAD_V1
	                           "archiveSize: 2\n"
	                           "mirror:\n"
	                           "  additionalImages:\n"
	                           "  - name: quay.io/a/b:1\n"
	                           "---\n" HEAD "archiveSize: 2\n"
	                           "mirror:\n"
	                           "  platform:\n"
	                           "    release: quay.io/a/release:4.15.0\n"
	                           "  additionalImages:\n"
	                           "  - name: quay.io/a/c:1\n");

	if (cfg != NULL) {
		CU_ASSERT_EQUAL(cfg->ndocuments, 2);
		CU_ASSERT_EQUAL(cfg->nadditional, 2);
		CU_ASSERT_EQUAL(cfg->nreleases, 1);
		CU_ASSERT_EQUAL(cfg->archive_size, 2 * AL_GIB);
		CU_ASSERT(
		    has_note(cfg, ":8:1: the file holds 2 YAML documents"));
	}
	al_imageset_free(cfg);
	check_bad(HEAD "archiveSize: 2\n---\n" HEAD "archiveSize: 3\n",
	          AL_EPARSE,
	          "%s:7:14: archiveSize differs from an earlier document's");
	check_bad(HEAD "---\n" HEAD
	               "mirror:\n  helm:\n    local:\n    - name: a\n"
	               "      path: a.tgz\n      version: 1.0.0\n",
	          AL_EUNSUPPORTED, "%s:11:7: 'version' in mirror.helm.local[]");
	check_bad(HEAD "---\nkind: Foo\n", AL_EPARSE,
	          "%s:4:7: kind must be ImageSetConfiguration");
}

/* archiveSize recorded in a store, read back for pack. */
static void test_imageset__archive_size_for_pack(void)
{
	al_imageset *cfg = load_ok("arch.yaml", HEAD "archiveSize: 3\n");
	char *store = al_path_join(al_test_tmpdir(), "defaults-store");
	char *adir = al_path_join(store, "airlock");
	char *file = al_path_join(adir, "defaults.json");
	uint64_t v = 1;

	CU_ASSERT_EQUAL(mkdir(store, 0755), 0);
	CU_ASSERT_EQUAL(mkdir(adir, 0755), 0);
	CU_ASSERT_EQUAL(al_imageset_pack_volume_default(store, &v), 0);
	CU_ASSERT_EQUAL(v, 0);
	if (cfg != NULL) {
		CU_ASSERT_EQUAL(al_imageset_record_defaults(cfg, store), 0);
		CU_ASSERT_EQUAL(al_imageset_pack_volume_default(store, &v), 0);
		CU_ASSERT_EQUAL(v, 3 * AL_GIB);
	}
	CU_ASSERT_EQUAL(
	    al_fs_write_atomic(file, "{\"packVolumeSize\": \"4G\"}", 25), 0);
	CU_ASSERT_EQUAL(al_imageset_pack_volume_default(store, &v), AL_EPARSE);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "defaults.json"));
	al_imageset_free(cfg);
	free(file);
	free(adir);
	free(store);
}

/* The KubeVirt image as oc-mirror getKubeVirtImages finds it, in the
 * coreos-bootimages ConfigMap of oc-mirror's test data. */
static void test_imageset__kubevirt_from_bootimages(void)
{
	char *path = al_sprintf("%s/tests/fixtures/oc-mirror-bootimages/"
	                        "0000_50_installer_coreos-bootimages.yaml",
	                        al_test_source_dir());
	const char *x86[] = {"x86_64"}, *both[] = {"x86_64", "s390x"},
	           *arm[] = {"aarch64"};
	al_buf b = AL_BUF_INIT(1024 * 1024);
	char **refs = NULL;
	size_t n = 0, i;

	CU_ASSERT_EQUAL(al_fs_read_file(path, &b), 0);
	CU_ASSERT_EQUAL(al_mirror__kubevirt_refs(b.ptr, b.len, "bootimages",
	                                         x86, 1, &refs, &n),
	                0);
	CU_ASSERT_EQUAL(n, 1);
	if (n == 1)
		CU_ASSERT_STRING_EQUAL(
		    refs[0],
		    "quay.io/openshift-release-dev/ocp-v4.0-art-dev@"
		    "sha256:729265d5ef6ed6a45bcd55c46877e3acb9eae3f49c7"
		    "8cd795d5b53aa85e3775b");
	for (i = 0; i < n; i++)
		free(refs[i]);
	free(refs);
	CU_ASSERT_EQUAL(al_mirror__kubevirt_refs(b.ptr, b.len, "bootimages",
	                                         both, 2, &refs, &n),
	                0);
	CU_ASSERT_EQUAL(n, 2);
	for (i = 0; i < n; i++)
		free(refs[i]);
	free(refs);
	/* aarch64 carries no kubevirt image */
	CU_ASSERT_EQUAL(al_mirror__kubevirt_refs(b.ptr, b.len, "bootimages",
	                                         arm, 1, &refs, &n),
	                0);
	CU_ASSERT_EQUAL(n, 0);
	free(refs);
	CU_ASSERT_EQUAL(al_mirror__kubevirt_refs(
	                    (const uint8_t *)"kind: ConfigMap\ndata: {}\n", 25,
	                    "cm", x86, 1, &refs, &n),
	                AL_EPARSE);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "cm: not a ConfigMap "
	                                                  "with data.stream"));
	al_buf_free(&b);
	free(path);
}

int main(void)
{
	CU_TestInfo tests[] = {
	    {"test_imageset__platform_graph", test_imageset__platform_graph},
	    {"test_imageset__full_example", test_imageset__full_example},
	    {"test_imageset__channels", test_imageset__channels},
	    {"test_imageset__channel_errors", test_imageset__channel_errors},
	    {"test_imageset__minimal_and_single_release",
	     test_imageset__minimal_and_single_release},
	    {"test_imageset__wrong_kind_or_api",
	     test_imageset__wrong_kind_or_api},
	    {"test_imageset__unknown_fields_with_position",
	     test_imageset__unknown_fields_with_position},
	    {"test_imageset__unsupported_features",
	     test_imageset__unsupported_features},
	    {"test_imageset__type_errors", test_imageset__type_errors},
	    {"test_imageset__invalid_references",
	     test_imageset__invalid_references},
	    {"test_imageset__sources_validation",
	     test_imageset__sources_validation},
	    {"test_imageset__yaml_errors_carry_path",
	     test_imageset__yaml_errors_carry_path},
	    {"test_imageset__missing_and_oversized_file",
	     test_imageset__missing_and_oversized_file},
	    {"test_imageset__relative_config_path",
	     test_imageset__relative_config_path},
	    {"test_imageset__bundled_sample", test_imageset__bundled_sample},
	    {"test_imageset__v1alpha2_mapped", test_imageset__v1alpha2_mapped},
	    {"test_imageset__v1alpha2_refusals",
	     test_imageset__v1alpha2_refusals},
	    {"test_imageset__field_names_in_another_case",
	     test_imageset__field_names_in_another_case},
	    {"test_imageset__operator_platforms_and_ranges",
	     test_imageset__operator_platforms_and_ranges},
	    {"test_imageset__v2alpha1_fields", test_imageset__v2alpha1_fields},
	    {"test_imageset__blocked_matching",
	     test_imageset__blocked_matching},
	    {"test_imageset__target_name_mapping",
	     test_imageset__target_name_mapping},
	    {"test_imageset__several_documents",
	     test_imageset__several_documents},
	    {"test_imageset__archive_size_for_pack",
	     test_imageset__archive_size_for_pack},
	    {"test_imageset__kubevirt_from_bootimages",
	     test_imageset__kubevirt_from_bootimages},
	    CU_TEST_INFO_NULL,
	};

	return al_test_run("imageset", tests);
}
