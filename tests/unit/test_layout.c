/* test_layout.c: oc-mirror v2's layout rules (src/transfer/layout.c) and its mirror
 * sets (src/release/kres_ocmirror.c), against oc-mirror's own test cases
 * (internal/pkg/clusterresources/clusterresources_test.go,
 * tests/data/ocmirror-resources). */
/* al-tier: quick */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "airlock/buf.h"
#include "airlock/catalog.h"
#include "airlock/digest.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/kres.h"
#include "airlock/layout.h"
#include "airlock/transfer.h"
#include "al_test.h"

static void test_layout__parse(void)
{
	al_layout_kind k = AL_LAYOUT_SOURCE;

	CU_ASSERT_EQUAL(al_layout_parse("oc-mirror", &k), 0);
	CU_ASSERT_EQUAL(k, AL_LAYOUT_OC_MIRROR);
	CU_ASSERT_EQUAL(al_layout_parse("source", &k), 0);
	CU_ASSERT_EQUAL(k, AL_LAYOUT_SOURCE);
	CU_ASSERT_EQUAL(al_layout_parse("Source", &k), AL_EINVAL);
	CU_ASSERT_EQUAL(al_layout_parse("", &k), AL_EINVAL);
	CU_ASSERT_EQUAL(al_layout_parse(NULL, &k), AL_EINVAL);
	CU_ASSERT_STRING_EQUAL(al_layout_name(AL_LAYOUT_OC_MIRROR),
	                       "oc-mirror");
	CU_ASSERT_STRING_EQUAL(al_layout_category_name(AL_LAYOUT_RELEASE),
	                       "release");
	CU_ASSERT_STRING_EQUAL(al_layout_category_name(AL_LAYOUT_CATALOG),
	                       "operator");
	CU_ASSERT_STRING_EQUAL(al_layout_category_name(AL_LAYOUT_GENERIC),
	                       "generic");
}

/* prepareTag: the release's tag, or its digest's hex (OCPBUGS-44033). */
static void test_layout__release_tag(void)
{
	char *t = NULL;

	CU_ASSERT_EQUAL(al_layout_release_tag(
	                    "quay.io/openshift-release-dev/ocp-release:4.14.38-"
	                    "x86_64",
	                    &t),
	                0);
	CU_ASSERT_STRING_EQUAL(t, "4.14.38-x86_64");
	free(t);
	t = NULL;
	CU_ASSERT_EQUAL(
	    al_layout_release_tag(
	        "registry.ci.openshift.org/ocp/release@sha256:"
	        "0fb444ec9bb1b01f06dd387519f0fe5b4168e2d09a015697a26534fc156"
	        "5c5e7",
	        &t),
	    0);
	CU_ASSERT_STRING_EQUAL(t, "0fb444ec9bb1b01f06dd387519f0fe5b4168e2d09a0"
	                          "15697a26534fc1565c5e7");
	free(t);
	t = NULL;
	CU_ASSERT_EQUAL(al_layout_release_tag("Not A Ref", &t), AL_EPARSE);
	CU_ASSERT_PTR_NULL(t);
}

/* attemptNamespaceScope on the cases oc-mirror's tests expect. */
static void test_layout__scope(void)
{
	static const char *const cases[][4] = {
	    /* the destination ends with the source path: namespaces */
	    {"quay.io/openshift-community-operators/cockroachdb",
	     "myregistry/mynamespace/openshift-community-operators/cockroachdb",
	     "quay.io/openshift-community-operators",
	     "myregistry/mynamespace/openshift-community-operators"},
	    /* a repository at the root of its registry: the registry */
	    {"registry.redhat.io/ubi8-minimal",
	     "myregistry/mynamespace/ubi8-minimal", "registry.redhat.io",
	     "myregistry/mynamespace"},
	    /* release components: openshift/release, whole repositories */
	    {"quay.io/openshift-release-dev/ocp-v4.0-art-dev",
	     "myregistry/mynamespace/openshift/release",
	     "quay.io/openshift-release-dev/ocp-v4.0-art-dev",
	     "myregistry/mynamespace/openshift/release"},
	    /* OCPBUGS-47688: "release" in the destination path */
	    {"quay.io/openshift-release-dev/ocp-release",
	     "myregistry/openshift-release-dev/ocp-release/openshift/"
	     "release-images",
	     "quay.io/openshift-release-dev/ocp-release",
	     "myregistry/openshift-release-dev/ocp-release/openshift/"
	     "release-images"},
	    /* --max-nested-paths joined the path: whole repositories */
	    {"quay.io/cockroachdb/cockroach-helm-operator",
	     "myregistry/mynamespace/cockroachdb-cockroach-helm-operator",
	     "quay.io/cockroachdb/cockroach-helm-operator",
	     "myregistry/mynamespace/cockroachdb-cockroach-helm-operator"},
	};
	size_t i;
	char *s = NULL, *d = NULL;

	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		CU_ASSERT_EQUAL(
		    al_layout_scope(cases[i][0], cases[i][1], 0, &s, &d), 0);
		CU_ASSERT_STRING_EQUAL(s, cases[i][2]);
		CU_ASSERT_STRING_EQUAL(d, cases[i][3]);
		free(s);
		free(d);
		s = d = NULL;
	}
	/* repositoryScope when forced */
	CU_ASSERT_EQUAL(al_layout_scope(cases[0][0], cases[0][1], 1, &s, &d),
	                0);
	CU_ASSERT_STRING_EQUAL(s, cases[0][0]);
	CU_ASSERT_STRING_EQUAL(d, cases[0][1]);
	free(s);
	free(d);
	s = d = NULL;
	CU_ASSERT_EQUAL(al_layout_scope("noslash", "a/b", 0, &s, &d),
	                AL_EINVAL);
}

/* Replace the values of the three annotations as the fixtures do. */
static char *normalise(const char *in)
{
	al_buf b = AL_BUF_INIT(1 << 20);
	const char *p = in, *nl;

	while (*p != '\0') {
		nl = strchr(p, '\n');
		if (nl == NULL)
			nl = p + strlen(p);
		if (strncmp(p, "    createdAt: ", 15) == 0)
			al_buf_puts(&b, "    createdAt: \"CREATED_AT\"");
		else if (strncmp(p, "    createdBy: ", 15) == 0)
			al_buf_puts(&b, "    createdBy: CREATED_BY");
		else if (strncmp(p, "    oc-mirror_version: ", 23) == 0)
			al_buf_puts(&b, "    oc-mirror_version: VERSION");
		else
			al_buf_append(&b, p, (size_t)(nl - p));
		if (*nl == '\n') {
			al_buf_puts(&b, "\n");
			nl++;
		}
		p = nl;
	}
	return al_buf_detach(&b, NULL);
}

/* TestGenerateIDMS "tags and digests" (imageListMixed) through the scope
 * and the writer, compared with tests/data/ocmirror-resources. */
static void test_layout__mirrorsets_like_ocmirror(void)
{
	/* origin, destination, category, by digest, by tag (the catalog
	 * and graph images are left out before, as cli_resources.c does) */
	static const struct {
		const char *src, *dst, *cat;
		int digest, tag;
	} in[] = {
	    {"gcr.io/kubebuilder/kube-rbac-proxy",
	     "myregistry/mynamespace/kubebuilder/kube-rbac-proxy", "operator",
	     0, 1},
	    {"quay.io/cockroachdb/cockroach-helm-operator",
	     "myregistry/mynamespace/cockroachdb/cockroach-helm-operator",
	     "operator", 0, 1},
	    {"quay.io/helmoperators/cockroachdb",
	     "myregistry/mynamespace/helmoperators/cockroachdb", "operator", 0,
	     1},
	    {"quay.io/helmoperators/cockroachdb",
	     "myregistry/mynamespace/helmoperators/cockroachdb", "operator", 0,
	     1},
	    {"quay.io/openshift-community-operators/cockroachdb",
	     "myregistry/mynamespace/openshift-community-operators/cockroachdb",
	     "operator", 1, 0},
	    {"quay.io/openshift-community-operators/cockroachdb",
	     "myregistry/mynamespace/openshift-community-operators/cockroachdb",
	     "operator", 1, 0},
	    {"registry.redhat.io/ubi8-minimal",
	     "myregistry/mynamespace/ubi8-minimal", "operator", 1, 0},
	    {"registry.redhat.io/ubi8/ubi", "myregistry/mynamespace/ubi8/ubi",
	     "generic", 0, 1},
	    {"quay.io/openshift-release-dev/ocp-v4.0-art-dev",
	     "myregistry/mynamespace/openshift-release-dev/ocp-v4.0-art-dev",
	     "release", 1, 0},
	    {"quay.io/openshift-release-dev/ocp-v4.0-art-dev",
	     "myregistry/mynamespace/openshift-release-dev/ocp-v4.0-art-dev",
	     "release", 1, 0},
	};
	enum { N = sizeof(in) / sizeof(*in) };
	al_mirror_map maps[N];
	const char *cats[N];
	char *strs[2 * N];
	al_buf out = AL_BUF_INIT(1 << 20), want = AL_BUF_INIT(1 << 20);
	char *path, *got = NULL;
	size_t i;

	memset(maps, 0, sizeof(maps));
	memset(strs, 0, sizeof(strs));
	for (i = 0; i < N; i++) {
		CU_ASSERT_EQUAL(al_layout_scope(in[i].src, in[i].dst, 0,
		                                &strs[2 * i], &strs[2 * i + 1]),
		                0);
		maps[i].source = strs[2 * i];
		maps[i].mirror = strs[2 * i + 1];
		maps[i].by_digest = in[i].digest;
		maps[i].by_tag = in[i].tag;
		cats[i] = in[i].cat;
	}
	CU_ASSERT_EQUAL(al_kres_mirrorsets_ocmirror(&out, maps, cats, N, 0,
	                                            "2024-01-02T03:04:05Z"),
	                0);
	CU_ASSERT_EQUAL(al_buf_puts(&out, ""), 0);
	path = al_sprintf("%s/tests/data/ocmirror-resources/idms-mixed.yaml",
	                  al_test_source_dir());
	CU_ASSERT_EQUAL(al_fs_read_file(path, &want), 0);
	CU_ASSERT_EQUAL(al_buf_puts(&want, ""), 0);
	if (out.ptr != NULL)
		got = normalise((const char *)out.ptr);
	CU_ASSERT_PTR_NOT_NULL(got);
	if (got != NULL && want.ptr != NULL &&
	    strcmp(got, (const char *)want.ptr) != 0) {
		fprintf(stderr, "got:\n%s\nwant:\n%s\n", got,
		        (const char *)want.ptr);
		CU_FAIL("IDMS differs from oc-mirror's expected objects");
	}
	CU_ASSERT(strstr((const char *)out.ptr,
	                 "    createdAt: \"2024-01-02T03:04:05Z\"\n") != NULL);
	/* the ITMS: tag-only images, operator then generic */
	al_buf_reset(&out);
	CU_ASSERT_EQUAL(al_kres_mirrorsets_ocmirror(&out, maps, cats, N, 1,
	                                            "2024-01-02T03:04:05Z"),
	                0);
	CU_ASSERT_EQUAL(al_buf_puts(&out, ""), 0);
	CU_ASSERT(strstr((const char *)out.ptr, "  name: itms-operator-0\n") !=
	          NULL);
	CU_ASSERT(strstr((const char *)out.ptr, "  name: itms-generic-0\n") !=
	          NULL);
	CU_ASSERT(strstr((const char *)out.ptr, "itms-release-0") == NULL);
	CU_ASSERT(strstr((const char *)out.ptr,
	                 "  - mirrors:\n    - myregistry/mynamespace/ubi8\n"
	                 "    source: registry.redhat.io/ubi8\n") != NULL);
	/* an unknown category and a location the CRD refuses */
	al_buf_reset(&out);
	cats[0] = "catalog";
	CU_ASSERT_EQUAL(al_kres_mirrorsets_ocmirror(&out, maps, cats, N, 0,
	                                            "2024-01-02T03:04:05Z"),
	                AL_EINVAL);
	cats[0] = "operator";
	maps[0].mirror = "MyRegistry/UPPER";
	CU_ASSERT_EQUAL(al_kres_mirrorsets_ocmirror(&out, maps, cats, N, 0,
	                                            "2024-01-02T03:04:05Z"),
	                AL_EINVAL);
	for (i = 0; i < 2 * N; i++)
		free(strs[i]);
	free(got);
	free(path);
	al_buf_free(&out);
	al_buf_free(&want);
}

/* GenerateSignatureConfigMap: one ConfigMap, a key per release counting
 * from 1, keys sorted as Go writes a map. */
static void test_layout__signature_configmap_like_ocmirror(void)
{
	al_digest d[2];
	const uint8_t *sigs[2] = {(const uint8_t *)"sig-a",
	                          (const uint8_t *)"sig-b"};
	size_t lens[2] = {5, 5};
	al_buf b = AL_BUF_INIT(1 << 16);
	const char *y;
	char *want;

	CU_ASSERT_EQUAL(
	    al_digest_parse_str(&d[0], "sha256:"
	                               "ffff00000000000000000000000000000000000"
	                               "0000000000000000000000000"),
	    0);
	CU_ASSERT_EQUAL(
	    al_digest_parse_str(&d[1], "sha256:"
	                               "000000000000000000000000000000000000000"
	                               "0000000000000000000000000"),
	    0);
	CU_ASSERT_EQUAL(al_kres_signatures_ocmirror(&b, d, sigs, lens, 2, 0,
	                                            "2024-01-02T03:04:05Z"),
	                0);
	CU_ASSERT_EQUAL(al_buf_puts(&b, ""), 0);
	y = (const char *)b.ptr;
	want = al_sprintf(
	    "apiVersion: v1\nbinaryData:\n  "
	    "sha256-"
	    "0000000000000000000000000000000000000000000000000000000000000000-"
	    "2: c2lnLWI=\n  "
	    "sha256-"
	    "ffff000000000000000000000000000000000000000000000000000000000000-"
	    "1: c2lnLWE=\nkind: ConfigMap\nmetadata:\n  annotations:\n    "
	    "createdAt: \"2024-01-02T03:04:05Z\"\n    createdBy: airlock\n    "
	    "oc-mirror_version: %s\n",
	    al_version());
	CU_ASSERT(y != NULL && want != NULL &&
	          strncmp(y, want, strlen(want)) == 0);
	free(want);
	CU_ASSERT(y != NULL &&
	          strstr(y, "  name: mirrored-release-signatures\n"
	                    "  namespace: openshift-config-managed\n") != NULL);
	al_buf_reset(&b);
	CU_ASSERT_EQUAL(al_kres_signatures_ocmirror(&b, d, sigs, lens, 1,
	                                            AL_KRES_JSON,
	                                            "2024-01-02T03:04:05Z"),
	                0);
	CU_ASSERT_EQUAL(al_buf_puts(&b, ""), 0);
	CU_ASSERT(b.ptr != NULL &&
	          strncmp((const char *)b.ptr,
	                  "{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\","
	                  "\"metadata\":{\"name\":\"mirrored-release-"
	                  "signatures\"",
	                  60) == 0);
	CU_ASSERT(b.ptr != NULL &&
	          al_str_endswith((const char *)b.ptr, "-1\":\"c2lnLWE=\"}}"));
	lens[1] = 0;
	CU_ASSERT_EQUAL(al_kres_signatures_ocmirror(&b, d, sigs, lens, 2, 0,
	                                            "2024-01-02T03:04:05Z"),
	                AL_EINVAL);
	CU_ASSERT_EQUAL(al_kres_signatures_ocmirror(&b, d, sigs, lens, 0, 0,
	                                            "2024-01-02T03:04:05Z"),
	                AL_EINVAL);
	al_buf_free(&b);
}

/* Compare out (normalised) with tests/data/ocmirror-resources/file. */
static void same_as_fixture(al_buf *out, const char *file)
{
	al_buf want = AL_BUF_INIT(1 << 20);
	char *path = al_sprintf("%s/tests/data/ocmirror-resources/%s",
	                        al_test_source_dir(), file);
	char *got = NULL;

	CU_ASSERT_EQUAL(al_buf_puts(out, ""), 0);
	CU_ASSERT_EQUAL(al_fs_read_file(path, &want), 0);
	CU_ASSERT_EQUAL(al_buf_puts(&want, ""), 0);
	if (out->ptr != NULL)
		got = normalise((const char *)out->ptr);
	CU_ASSERT(got != NULL && want.ptr != NULL &&
	          strcmp(got, (const char *)want.ptr) == 0);
	if (got != NULL && want.ptr != NULL &&
	    strcmp(got, (const char *)want.ptr) != 0)
		fprintf(stderr, "%s: got:\n%s\n", file, got);
	free(got);
	free(path);
	al_buf_free(&want);
}

/* TestCatalogSourceGenerator, TestClusterCatalogGenerator. */
static void test_layout__catalog_resources_like_ocmirror(void)
{
	const char *img =
	    "myregistry/mynamespace/redhat/redhat-operator-index:v4.15";
	char *cs = al_catalog_resource_name("cs", img);
	char *cc = al_catalog_resource_name("cc", img);
	al_buf b = AL_BUF_INIT(1 << 16);

	CU_ASSERT_PTR_NOT_NULL(cs);
	CU_ASSERT_PTR_NOT_NULL(cc);
	if (cs != NULL && cc != NULL) {
		CU_ASSERT_STRING_EQUAL(cs, "cs-redhat-operator-index-v4-15");
		CU_ASSERT_EQUAL(al_catalog_source_yaml_ocmirror(
		                    &b, cs, img, "2024-01-02T03:04:05Z"),
		                0);
		same_as_fixture(&b, "cs-redhat-operator-index-v4-15.yaml");
		al_buf_reset(&b);
		CU_ASSERT_EQUAL(al_cluster_catalog_yaml_ocmirror(
		                    &b, cc, img, "2024-01-02T03:04:05Z"),
		                0);
		same_as_fixture(&b, "cc-redhat-operator-index-v4-15.yaml");
	}
	al_buf_reset(&b);
	CU_ASSERT_EQUAL(al_catalog_source_yaml_ocmirror(&b, "a: b", img,
	                                                "2024-01-02T03:04:05Z"),
	                AL_EINVAL);
	CU_ASSERT_EQUAL(
	    al_cluster_catalog_yaml_ocmirror(&b, "cc-x", "", "2024"),
	    AL_EINVAL);
	free(cs);
	free(cc);
	al_buf_free(&b);
}

/* A layout filled before the store records anything (mirror --dry-run):
 * the release placed as al_layout_open places a record (prepareTag, the
 * hex of a digest without a tag), a name added twice keeping its first
 * place, the source layout placing nothing. */
static void test_layout__add_release_places_like_a_record(void)
{
	const char *rel = "quay.io/openshift-release-dev/ocp-release:4.16.0-"
	                  "x86_64";
	const char *pinned =
	    "quay.io/ocp/release@sha256:"
	    "0fb444ec9bb1b01f06dd387519f0fe5b4168e2d09a015697a26534fc1565c5e7";
	al_layout *l = NULL, *src = NULL;
	char *repo = NULL, *tag = NULL;

	CU_ASSERT_EQUAL(al_layout_new(&l, AL_LAYOUT_OC_MIRROR), 0);
	CU_ASSERT_EQUAL(al_layout_place(l, rel, &repo, &tag), 0);
	CU_ASSERT_EQUAL(al_layout_add_release(l, rel, NULL), 0);
	CU_ASSERT_EQUAL(al_layout_add_release(l, pinned, NULL), 0);
	CU_ASSERT_EQUAL(al_layout_add_release(l, rel, NULL), 0);
	CU_ASSERT_EQUAL(al_layout_add_release(l, "not a ref!", NULL),
	                AL_EPARSE);
	CU_ASSERT_EQUAL(al_layout_category_of(l, rel), AL_LAYOUT_RELEASE);
	CU_ASSERT_EQUAL(al_layout_category_of(l, "quay.io/x/y:1"),
	                AL_LAYOUT_GENERIC);
	if (al_layout_place(l, rel, &repo, &tag) == 1) {
		CU_ASSERT_STRING_EQUAL(repo, AL_LAYOUT_RELEASE_REPO);
		CU_ASSERT_STRING_EQUAL(tag, "4.16.0-x86_64");
	} else {
		CU_FAIL("the release is not placed");
	}
	free(repo);
	free(tag);
	repo = tag = NULL;
	if (al_layout_place(l, pinned, &repo, &tag) == 1) {
		CU_ASSERT_STRING_EQUAL(tag,
		                       "0fb444ec9bb1b01f06dd387519f0fe5b416"
		                       "8e2d09a015697a26534fc1565c5e7");
	} else {
		CU_FAIL("the pinned release is not placed");
	}
	free(repo);
	free(tag);
	repo = tag = NULL;
	CU_ASSERT_EQUAL(al_layout_new(&src, AL_LAYOUT_SOURCE), 0);
	CU_ASSERT_EQUAL(al_layout_add_release(src, rel, NULL), 0);
	CU_ASSERT_EQUAL(al_layout_place(src, rel, &repo, &tag), 0);
	CU_ASSERT_PTR_NULL(repo);
	al_layout_free(l);
	al_layout_free(src);
}

/* Places: a release added again keeps one place (the same repository and
 * tag), place numbers beyond the count are 0 with nothing set, and push's
 * count is at least 1 (an unplaced image has its source path). */
static void test_layout__places_counted_once_each(void)
{
	const char *rel = "quay.io/openshift-release-dev/ocp-release:4.16.0-"
	                  "x86_64";
	al_layout *l = NULL;
	char *repo = NULL, *tag = NULL, *ref = NULL;

	CU_ASSERT_EQUAL(al_layout_new(&l, AL_LAYOUT_OC_MIRROR), 0);
	CU_ASSERT_EQUAL(al_layout_place_count(l, rel), 0);
	CU_ASSERT_EQUAL(al_push_target_count(l, rel), 1);
	CU_ASSERT_EQUAL(al_layout_add_release(l, rel, NULL), 0);
	CU_ASSERT_EQUAL(al_layout_add_release(l, rel, NULL), 0);
	CU_ASSERT_EQUAL(al_layout_place_count(l, rel), 1);
	CU_ASSERT_EQUAL(al_push_target_count(l, rel), 1);
	CU_ASSERT_EQUAL(al_layout_place_at(l, rel, 1, &repo, &tag), 0);
	CU_ASSERT_PTR_NULL(repo);
	CU_ASSERT_EQUAL(al_layout_place_at(l, rel, 0, &repo, &tag), 1);
	if (repo != NULL && tag != NULL) {
		CU_ASSERT_STRING_EQUAL(repo, AL_LAYOUT_RELEASE_REPO);
		CU_ASSERT_STRING_EQUAL(tag, "4.16.0-x86_64");
	}
	free(repo);
	free(tag);
	repo = NULL;
	CU_ASSERT_EQUAL(
	    al_push_target_layout_at(l, rel, 0, "ocm", 0, &repo, &ref), 0);
	if (repo != NULL && ref != NULL) {
		CU_ASSERT_STRING_EQUAL(repo, "ocm/openshift/release-images");
		CU_ASSERT_STRING_EQUAL(ref, "4.16.0-x86_64");
	}
	free(repo);
	free(ref);
	repo = ref = NULL;
	CU_ASSERT_EQUAL(
	    al_push_target_layout_at(l, rel, 1, "ocm", 0, &repo, &ref),
	    AL_ENOTFOUND);
	CU_ASSERT_PTR_NULL(repo);
	al_error_clear();
	al_layout_free(l);
}

int main(void)
{
	CU_TestInfo tests[] = {
	    {"test_layout__parse", test_layout__parse},
	    {"test_layout__release_tag", test_layout__release_tag},
	    {"test_layout__scope", test_layout__scope},
	    {"test_layout__mirrorsets_like_ocmirror",
	     test_layout__mirrorsets_like_ocmirror},
	    {"test_layout__catalog_resources_like_ocmirror",
	     test_layout__catalog_resources_like_ocmirror},
	    {"test_layout__signature_configmap_like_ocmirror",
	     test_layout__signature_configmap_like_ocmirror},
	    {"test_layout__add_release_places_like_a_record",
	     test_layout__add_release_places_like_a_record},
	    {"test_layout__places_counted_once_each",
	     test_layout__places_counted_once_each},
	    CU_TEST_INFO_NULL,
	};
	return al_test_run("layout", tests);
}
