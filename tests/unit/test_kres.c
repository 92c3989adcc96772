/* test_kres.c: unit tests for IDMS / ITMS / ICSP emission, checked by loading the YAML back. */
#include <stdlib.h>
#include <string.h>

#include "al_test.h"
#include "airlock/error.h"
#include "airlock/json.h"
#include "airlock/kres.h"
#include "airlock/yaml.h"

/* Load out back as JSON documents into a JSON array; NULL on failure. */
static json_t *load_back(const al_buf *out)
{
	al_yaml_node **docs = NULL;
	size_t n = 0, i;
	json_t *arr = json_array(), *j;

	if (al_yaml_load(&docs, &n, out->ptr, out->len, "kres") != 0) {
		fprintf(stderr, "reload: %s\n", al_error_message());
		json_decref(arr);
		return NULL;
	}
	for (i = 0; i < n; i++) {
		if (al_yaml_to_json(&j, docs[i]) != 0) {
			json_decref(arr);
			arr = NULL;
			break;
		}
		json_array_append_new(arr, j);
	}
	al_yaml_docs_free(docs, n);
	return arr;
}

/* Compare docs with the expected JSON text. */
static void check_docs(const json_t *got, const char *want_text)
{
	json_t *want = NULL;

	CU_ASSERT_EQUAL_FATAL(al_json_parse(&want, (const uint8_t *)want_text,
	                                    strlen(want_text), "want"),
	                      0);
	if (!json_equal(got, want)) {
		char *g = al_json_dump(got, 2);

		fprintf(stderr, "got %s\nwant %s\n", g, want_text);
		free(g);
		CU_FAIL("documents differ");
	}
	json_decref(want);
}

static const al_mirror_map sample[] = {
    {"quay.io/openshift-release-dev/ocp-v4.0-art-dev",
     "reg.local:5000/ocp/ocp-v4.0-art-dev", 1, 0},
    {"quay.io/openshift-release-dev/ocp-release",
     "reg.local:5000/ocp/ocp-release", 1, 1},
    {"docker.io/library/busybox", "reg.local:5000/ocp/library/busybox", 0, 1},
    /* A duplicate merges; a second mirror of the same source is added. */
    {"quay.io/openshift-release-dev/ocp-release",
     "reg.local:5000/ocp/ocp-release", 1, 0},
    {"quay.io/openshift-release-dev/ocp-release", "backup.local/ocp-release", 1,
     0},
    {"quay.io/unused", "reg.local:5000/unused", 0, 0},
};

static void test_kres__idms_itms_icsp_structure(void)
{
	al_buf out = AL_BUF_INIT(1 << 16);
	json_t *docs;

	CU_ASSERT_EQUAL(al_kres_mirrorsets(&out, sample,
	                                   sizeof(sample) / sizeof(sample[0]),
	                                   "airlock", AL_KRES_ICSP),
	                0);
	docs = load_back(&out);
	CU_ASSERT_PTR_NOT_NULL(docs);
	check_docs(
	    docs,
	    "["
	    "{\"apiVersion\":\"config.openshift.io/"
	    "v1\",\"kind\":\"ImageDigestMirrorSet\","
	    " \"metadata\":{\"name\":\"airlock\"},\"spec\":{"
	    "\"imageDigestMirrors\":["
	    "  "
	    "{\"source\":\"quay.io/openshift-release-dev/"
	    "ocp-release\",\"mirrors\":[\"reg.local:5000/ocp/"
	    "ocp-release\",\"backup.local/ocp-release\"]},"
	    "  "
	    "{\"source\":\"quay.io/openshift-release-dev/"
	    "ocp-v4.0-art-dev\",\"mirrors\":[\"reg.local:5000/ocp/"
	    "ocp-v4.0-art-dev\"]}]}},"
	    "{\"apiVersion\":\"config.openshift.io/"
	    "v1\",\"kind\":\"ImageTagMirrorSet\","
	    " \"metadata\":{\"name\":\"airlock\"},\"spec\":{"
	    "\"imageTagMirrors\":["
	    "  "
	    "{\"source\":\"docker.io/library/"
	    "busybox\",\"mirrors\":[\"reg.local:5000/ocp/library/busybox\"]},"
	    "  "
	    "{\"source\":\"quay.io/openshift-release-dev/"
	    "ocp-release\",\"mirrors\":[\"reg.local:5000/ocp/"
	    "ocp-release\",\"backup.local/ocp-release\"]}]}},"
	    "{\"apiVersion\":\"operator.openshift.io/"
	    "v1alpha1\",\"kind\":\"ImageContentSourcePolicy\","
	    " \"metadata\":{\"name\":\"airlock\"},\"spec\":{"
	    "\"repositoryDigestMirrors\":["
	    "  "
	    "{\"source\":\"quay.io/openshift-release-dev/"
	    "ocp-release\",\"mirrors\":[\"reg.local:5000/ocp/"
	    "ocp-release\",\"backup.local/ocp-release\"]},"
	    "  "
	    "{\"source\":\"quay.io/openshift-release-dev/"
	    "ocp-v4.0-art-dev\",\"mirrors\":[\"reg.local:5000/ocp/"
	    "ocp-v4.0-art-dev\"]}]}}"
	    "]");
	/* Three documents separated by "---". */
	{
		const char *p = al_buf_cstr(&out);
		int seps = 0;

		while ((p = strstr(p, "\n---\n")) != NULL) {
			seps++;
			p++;
		}
		CU_ASSERT_EQUAL(seps, 2);
		CU_ASSERT(al_str_startswith(
		    al_buf_cstr(&out), "apiVersion: config.openshift.io/v1\n"));
	}
	json_decref(docs);
	al_buf_free(&out);
}

static void test_kres__output_is_stable_under_input_order(void)
{
	al_mirror_map rev[sizeof(sample) / sizeof(sample[0])];
	size_t n = sizeof(sample) / sizeof(sample[0]), i;
	al_buf a = AL_BUF_INIT(1 << 16), b = AL_BUF_INIT(1 << 16);

	/* sample[0..3] reversed: the same sources and mirrors in another
	 * order give the same bytes, since entries are sorted by source. */
	for (i = 0; i < n; i++)
		rev[i] = sample[n - 1 - i];
	CU_ASSERT_EQUAL(al_kres_mirrorsets(&a, sample, 4, "x", 0), 0);
	CU_ASSERT_EQUAL(al_kres_mirrorsets(&b, rev + 2, 4, "x", 0), 0);
	CU_ASSERT_STRING_EQUAL(al_buf_cstr(&a), al_buf_cstr(&b));
	CU_ASSERT_PTR_NULL(strstr(al_buf_cstr(&a), "ImageContentSourcePolicy"));
	al_buf_free(&a);
	al_buf_free(&b);
}

static void test_kres__omits_empty_resources(void)
{
	al_mirror_map tag_only[] = {{"quay.io/a", "m/a", 0, 1}};
	al_mirror_map digest_only[] = {{"quay.io/a", "m/a", 1, 0}};
	al_buf out = AL_BUF_INIT(1 << 16);
	json_t *docs;

	CU_ASSERT_EQUAL(
	    al_kres_mirrorsets(&out, tag_only, 1, "n", AL_KRES_ICSP), 0);
	docs = load_back(&out);
	CU_ASSERT_EQUAL(json_array_size(docs), 1);
	CU_ASSERT_STRING_EQUAL(al_json_str(json_array_get(docs, 0), "kind"),
	                       "ImageTagMirrorSet");
	json_decref(docs);
	al_buf_reset(&out);

	CU_ASSERT_EQUAL(al_kres_mirrorsets(&out, digest_only, 1, "n", 0), 0);
	docs = load_back(&out);
	CU_ASSERT_EQUAL(json_array_size(docs), 1);
	CU_ASSERT_STRING_EQUAL(al_json_str(json_array_get(docs, 0), "kind"),
	                       "ImageDigestMirrorSet");
	json_decref(docs);
	al_buf_reset(&out);

	CU_ASSERT_EQUAL(al_kres_mirrorsets(&out, NULL, 0, "n", AL_KRES_ICSP),
	                0);
	CU_ASSERT_EQUAL(out.len, 0);
	al_buf_free(&out);
}

static void test_kres__rejects_bad_input(void)
{
	al_mirror_map empty_src[] = {{"", "m/a", 1, 0}};
	al_mirror_map null_mirror[] = {{"quay.io/a", NULL, 1, 0}};
	al_buf out = AL_BUF_INIT(64);

	CU_ASSERT_EQUAL(al_kres_mirrorsets(&out, empty_src, 1, "n", 0),
	                AL_EINVAL);
	CU_ASSERT_EQUAL(al_kres_mirrorsets(&out, null_mirror, 1, "n", 0),
	                AL_EINVAL);
	CU_ASSERT_EQUAL(al_kres_mirrorsets(&out, sample, 1, "Bad_Name", 0),
	                AL_EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "'Bad_Name'"));
	CU_ASSERT_EQUAL(al_kres_mirrorsets(&out, sample, 1, "", 0), AL_EINVAL);
	CU_ASSERT_EQUAL(al_kres_mirrorsets(&out, sample, 1, NULL, 0),
	                AL_EINVAL);
	CU_ASSERT_EQUAL(out.len, 0);
	/* Too small an output buffer. */
	CU_ASSERT_EQUAL(
	    al_kres_mirrorsets(&out, sample, 6, "airlock", AL_KRES_ICSP),
	    AL_ELIMIT);
	al_buf_free(&out);
}

static void test_kres__appends_to_existing_content(void)
{
	al_buf out = AL_BUF_INIT(1 << 16);

	CU_ASSERT_EQUAL(al_buf_puts(&out, "# generated by airlock\n"), 0);
	CU_ASSERT_EQUAL(al_kres_mirrorsets(&out, sample, 1, "airlock", 0), 0);
	CU_ASSERT(al_str_startswith(
	    al_buf_cstr(&out),
	    "# generated by airlock\napiVersion: config.openshift.io/v1\nkind: "
	    "ImageDigestMirrorSet\n"));
	al_buf_free(&out);
}

int main(void)
{
	CU_TestInfo tests[] = {
	    {"test_kres__idms_itms_icsp_structure",
	     test_kres__idms_itms_icsp_structure},
	    {"test_kres__output_is_stable_under_input_order",
	     test_kres__output_is_stable_under_input_order},
	    {"test_kres__omits_empty_resources",
	     test_kres__omits_empty_resources},
	    {"test_kres__rejects_bad_input", test_kres__rejects_bad_input},
	    {"test_kres__appends_to_existing_content",
	     test_kres__appends_to_existing_content},
	    CU_TEST_INFO_NULL,
	};

	return al_test_run("kres", tests);
}
