/* test_delete_config.c: unit tests for DeleteImageSetConfiguration loading
 * (al_delete_config_load): the accepted subset, refusals with positions. */
#include <stdlib.h>
#include <string.h>

#include "al_test.h"
#include "airlock/delete.h"
#include "airlock/error.h"
#include "airlock/fs.h"

#define HEAD                                                                   \
	"kind: DeleteImageSetConfiguration\napiVersion: "                      \
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

/* Loading text must fail with want and a message containing needle (a
 * leading "%s" in needle stands for the file's path). */
static void check_bad(const char *text, int want, const char *needle)
{
	char *path = write_cfg("bad.yaml", text);
	char *full = NULL;
	al_delete_config *cfg = NULL;
	int rc;

	CU_ASSERT_PTR_NOT_NULL(path);
	if (path == NULL)
		return;
	full = strncmp(needle, "%s", 2) == 0
	           ? al_sprintf("%s%s", path, needle + 2)
	           : al_strdup(needle);
	rc = al_delete_config_load(&cfg, path);
	CU_ASSERT_EQUAL(rc, want);
	CU_ASSERT_PTR_NULL(cfg);
	if (rc == 0)
		al_delete_config_free(cfg);
	else if (full == NULL || strstr(al_error_message(), full) == NULL) {
		fprintf(stderr, "message lacks '%s': %s\n",
		        full != NULL ? full : "(null)", al_error_message());
		CU_FAIL("message");
	}
	free(full);
	free(path);
}

static void test_delete_config__full(void)
{
	char *path = write_cfg(
	    "full.yaml", HEAD
	    "delete:\n"
	    "  platform:\n"
	    "    release: quay.io/openshift-release-dev/ocp-release@" D256 "\n"
	    "    channels:\n"
	    "    - name: stable-4.14\n"
	    "      type: ocp\n"
	    "      minVersion: 4.14.1\n"
	    "      maxVersion: 4.14.3\n"
	    "    - name: fast-4.15\n"
	    "      full: true\n"
	    "      shortestPath: false\n"
	    "    architectures: [amd64]\n"
	    "    graph: false\n"
	    "  additionalImages:\n"
	    "  - name: registry.example.com/ubi9/ubi:latest\n"
	    "  - name: " D256 "\n"
	    "  operators:\n"
	    "  - catalog: "
	    "registry.redhat.io/redhat/redhat-operator-index:v4.14\n");
	al_delete_config *cfg = NULL;

	CU_ASSERT_PTR_NOT_NULL_FATAL(path);
	CU_ASSERT_EQUAL_FATAL(al_delete_config_load(&cfg, path), 0);
	CU_ASSERT_STRING_EQUAL(cfg->path, path);
	CU_ASSERT_EQUAL_FATAL(cfg->nreleases, 1);
	CU_ASSERT_STRING_EQUAL(
	    cfg->releases[0],
	    "quay.io/openshift-release-dev/ocp-release@" D256);
	CU_ASSERT_EQUAL_FATAL(cfg->nchannels, 2);
	CU_ASSERT_STRING_EQUAL(cfg->channels[0].name, "stable-4.14");
	CU_ASSERT_STRING_EQUAL(cfg->channels[0].min_version, "4.14.1");
	CU_ASSERT_STRING_EQUAL(cfg->channels[0].max_version, "4.14.3");
	CU_ASSERT_STRING_EQUAL(cfg->channels[1].name, "fast-4.15");
	CU_ASSERT_PTR_NULL(cfg->channels[1].min_version);
	CU_ASSERT_PTR_NULL(cfg->channels[1].max_version);
	CU_ASSERT_EQUAL_FATAL(cfg->narchitectures, 1);
	CU_ASSERT_STRING_EQUAL(cfg->architectures[0], "amd64");
	CU_ASSERT_EQUAL(cfg->graph, 0);
	CU_ASSERT_EQUAL_FATAL(cfg->nimages, 2);
	CU_ASSERT_STRING_EQUAL(cfg->images[0],
	                       "registry.example.com/ubi9/ubi:latest");
	CU_ASSERT_STRING_EQUAL(cfg->images[1], D256);
	CU_ASSERT_EQUAL_FATAL(cfg->ncatalogs, 1);
	CU_ASSERT_STRING_EQUAL(
	    cfg->catalogs[0],
	    "registry.redhat.io/redhat/redhat-operator-index:v4.14");
	al_delete_config_free(cfg);
	free(path);
}

static void test_delete_config__release_forms(void)
{
	char *path = write_cfg("list.yaml", HEAD "delete:\n"
	                                         "  platform:\n"
	                                         "    release:\n"
	                                         "    - 4.14.1\n"
	                                         "    - " D256 "\n");
	al_delete_config *cfg = NULL;

	CU_ASSERT_PTR_NOT_NULL_FATAL(path);
	CU_ASSERT_EQUAL_FATAL(al_delete_config_load(&cfg, path), 0);
	CU_ASSERT_EQUAL_FATAL(cfg->nreleases, 2);
	CU_ASSERT_STRING_EQUAL(cfg->releases[0], "4.14.1");
	CU_ASSERT_STRING_EQUAL(cfg->releases[1], D256);
	CU_ASSERT_EQUAL(cfg->nimages + cfg->ncatalogs + cfg->nchannels, 0);
	al_delete_config_free(cfg);
	free(path);

	/* an empty delete: is a valid (if useless) document */
	path = write_cfg("empty.yaml", HEAD "delete: {}\n");
	cfg = NULL;
	CU_ASSERT_PTR_NOT_NULL_FATAL(path);
	CU_ASSERT_EQUAL_FATAL(al_delete_config_load(&cfg, path), 0);
	CU_ASSERT_EQUAL(cfg->nreleases + cfg->nimages, 0);
	al_delete_config_free(cfg);
	free(path);
	al_delete_config_free(NULL);
}

static void test_delete_config__unsupported_with_position(void)
{
	check_bad(HEAD "delete:\n"
	               "  platform:\n"
	               "    kubeVirtContainer: true\n",
	          AL_EUNSUPPORTED,
	          "%s:5:5: 'kubeVirtContainer' in delete.platform is not");
	/* the content is checked as mirror.operators is */
	check_bad(HEAD "delete:\n"
	               "  operators:\n"
	               "  - catalog: registry.example.com/index:v1\n"
	               "    packages:\n"
	               "    - name: foo\n"
	               "      minVersion: 2.0.0\n"
	               "      maxVersion: 1.0.0\n",
	          AL_EPARSE, "minVersion 2.0.0 is greater than maxVersion");
	check_bad(HEAD "delete:\n"
	               "  helm:\n"
	               "    repositories:\n"
	               "    - name: x\n"
	               "      url: https://charts.example.com\n"
	               "      chart: []\n",
	          AL_EPARSE, "%s:8:7: unknown field 'chart'");
}

/* What oc-mirror's delete configurations use beyond whole catalogs:
 * packages, targetCatalog/targetTag, helm, samples, graph: true,
 * v1alpha2 and field names in another case (oc-mirror's
 * tests/unit/testdata/config/valid-delete.yaml, delete-config-79217.yaml,
 * delete-config-77061.yaml). */
static void test_delete_config__ocmirror_fields(void)
{
	char *path = write_cfg(
	    "oc.yaml", "apiVersion: mirror.openshift.io/v1alpha2\n"
	               "kind: DeleteImageSetConfiguration\n"
	               "delete:\n"
	               "  platform:\n"
	               "    graph: true\n"
	               "  operators:\n"
	               "  - catalog: oci:///tmp/case79217/index\n"
	               "    targetCatalog: ocicatalog73452\n"
	               "    targetTag: v16\n"
	               "    full: true\n"
	               "    packages:\n"
	               "    - name: cluster-kube-descheduler-operator\n"
	               "      channels:\n"
	               "      - name: stable\n"
	               "  samples:\n"
	               "  - name: ruby\n"
	               "  additionalimages:\n"
	               "  - name: registry.example.com/ubi8/ubi:latest\n"
	               "  helm:\n"
	               "    repositories:\n"
	               "    - name: podinfo\n"
	               "      url: https://stefanprodan.github.io/podinfo\n"
	               "      charts:\n"
	               "      - name: podinfo\n"
	               "        version: 5.0.0\n"
	               "    - name: sbo\n"
	               "      url: https://charts.example.com/sbo/\n");
	al_delete_config *cfg = NULL;
	const al_imageset_operator *op;

	CU_ASSERT_PTR_NOT_NULL_FATAL(path);
	CU_ASSERT_EQUAL(al_delete_config_load(&cfg, path), 0);
	free(path);
	if (cfg == NULL)
		return;
	CU_ASSERT_EQUAL(cfg->api_version, 1);
	CU_ASSERT_TRUE(cfg->graph);
	CU_ASSERT_EQUAL(cfg->nsamples, 1);
	CU_ASSERT_EQUAL(cfg->nimages, 1);
	CU_ASSERT_EQUAL(cfg->ncatalogs, 1);
	CU_ASSERT_STRING_EQUAL(cfg->catalogs[0], "oci:///tmp/case79217/index");
	CU_ASSERT_PTR_NOT_NULL(cfg->content);
	if (cfg->content != NULL && cfg->content->noperators == 1) {
		op = &cfg->content->operators[0];
		CU_ASSERT_STRING_EQUAL(op->target_catalog, "ocicatalog73452");
		CU_ASSERT_STRING_EQUAL(op->target_tag, "v16");
		CU_ASSERT_EQUAL(op->npackages, 1);
		CU_ASSERT_EQUAL(cfg->content->nhelm_repos, 2);
	} else {
		CU_FAIL("delete.operators not read");
	}
	al_delete_config_free(cfg);
}

static void test_delete_config__unknown_and_bad_fields(void)
{
	check_bad(HEAD "delete:\n"
	               "  platform:\n"
	               "    releases: 4.14.1\n",
	          AL_EPARSE,
	          "%s:5:5: unknown field 'releases' in delete.platform");
	check_bad(HEAD "mirror:\n"
	               "  platform: {}\n",
	          AL_EPARSE,
	          "%s:4:3: mirror: is not allowed in "
	          "DeleteImageSetConfiguration");
	check_bad(HEAD "delete:\n"
	               "  additionalImages:\n"
	               "  - name: a/b:c\n"
	               "    tag: x\n",
	          AL_EPARSE,
	          "%s:6:5: unknown field 'tag' in delete.additionalImages[]");
	check_bad(HEAD "delete:\n"
	               "  additionalImages:\n"
	               "  - {}\n",
	          AL_EPARSE, "%s:5:5: delete.additionalImages[] needs a name");
	check_bad(HEAD "delete:\n"
	               "  additionalImages: a/b:c\n",
	          AL_EPARSE,
	          "%s:4:21: delete.additionalImages[] must be a list");
	check_bad(HEAD "delete:\n"
	               "  platform:\n"
	               "    channels:\n"
	               "    - minVersion: 4.14.1\n",
	          AL_EPARSE, "delete.platform.channels[] needs a name");
	check_bad(HEAD "delete:\n"
	               "  platform:\n"
	               "    channels:\n"
	               "    - name: stable-4.14\n"
	               "      minVersion: four\n",
	          AL_EPARSE,
	          "minVersion and maxVersion must be semantic versions");
	check_bad(
	    HEAD "delete:\n"
	         "  platform:\n"
	         "    release: 4.14\n",
	    AL_EPARSE,
	    "%s:5:14: delete.platform.release must be a non-empty string");
	check_bad(HEAD "delete:\n"
	               "  platform:\n"
	               "    graph: maybe\n",
	          AL_EPARSE,
	          "%s:5:12: delete.platform.graph must be true or false");
	check_bad(HEAD "delete:\n"
	               "  platform:\n"
	               "    architectures: amd64\n",
	          AL_EPARSE, "delete.platform.architectures must be a list");
}

static void test_delete_config__header(void)
{
	/* a mirror configuration never deletes by accident (oc-mirror) */
	check_bad("kind: ImageSetConfiguration\n"
	          "apiVersion: mirror.openshift.io/v2alpha1\n"
	          "delete: {}\n",
	          AL_EPARSE,
	          "%s:1:7: kind must be DeleteImageSetConfiguration, not "
	          "ImageSetConfiguration");
	check_bad("kind: DeleteImageSetConfiguration\n"
	          "apiVersion: mirror.openshift.io/v1alpha1\n"
	          "delete: {}\n",
	          AL_EPARSE,
	          "%s:2:13: apiVersion must be mirror.openshift.io/v2alpha1 "
	          "or mirror.openshift.io/v1alpha2, not "
	          "mirror.openshift.io/v1alpha1");
	check_bad("apiVersion: mirror.openshift.io/v2alpha1\ndelete: {}\n",
	          AL_EPARSE, "missing 'kind: DeleteImageSetConfiguration'");
	check_bad(HEAD, AL_EPARSE, "missing 'delete:'");
	check_bad(HEAD "delete: {}\n---\n" HEAD "delete: {}\n", AL_EPARSE,
	          "expected one YAML document");
	check_bad("- a\n- b\n", AL_EPARSE, "expected one YAML document");
}

static void test_delete_config__missing_file(void)
{
	char *path = al_path_join(al_test_tmpdir(), "absent.yaml");
	al_delete_config *cfg = NULL;

	CU_ASSERT_PTR_NOT_NULL_FATAL(path);
	CU_ASSERT_EQUAL(al_delete_config_load(&cfg, path), AL_ENOTFOUND);
	CU_ASSERT_PTR_NULL(cfg);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "absent.yaml"));
	CU_ASSERT_EQUAL(al_delete_config_load(NULL, path), AL_EINVAL);
	CU_ASSERT_EQUAL(al_delete_config_load(&cfg, NULL), AL_EINVAL);
	free(path);
}

int main(void)
{
	CU_TestInfo tests[] = {
	    {"test_delete_config__full", test_delete_config__full},
	    {"test_delete_config__release_forms",
	     test_delete_config__release_forms},
	    {"test_delete_config__unsupported_with_position",
	     test_delete_config__unsupported_with_position},
	    {"test_delete_config__ocmirror_fields",
	     test_delete_config__ocmirror_fields},
	    {"test_delete_config__unknown_and_bad_fields",
	     test_delete_config__unknown_and_bad_fields},
	    {"test_delete_config__header", test_delete_config__header},
	    {"test_delete_config__missing_file",
	     test_delete_config__missing_file},
	    CU_TEST_INFO_NULL,
	};

	return al_test_run("delete_config", tests);
}
