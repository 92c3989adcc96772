/* test_kres.c: unit tests for IDMS / ITMS / ICSP emission, checked by loading the YAML back. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "al_test.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/digest.h"
#include "json_int.h"
#include "airlock/kres.h"
#include "yaml_int.h"

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

#define SIG_HEX                                                                \
	"6d8c2c3a0f0d5bd8c3f1b8cbd0e7f6c2a1b9d0e4f3a2b1c0d9e8f7a6b5c4d3e2"

/* Two "signatures" covering every byte value. */
static void sig_samples(uint8_t a[256], uint8_t b[100], const uint8_t *ptrs[2],
                        size_t lens[2])
{
	size_t i;

	for (i = 0; i < 256; i++)
		a[i] = (uint8_t)(255 - i);
	for (i = 0; i < 100; i++)
		b[i] = (uint8_t)(i * 7);
	ptrs[0] = a;
	ptrs[1] = b;
	lens[0] = 256;
	lens[1] = 100;
}

/* Check a parsed ConfigMap field by field and its data byte for byte. */
static void check_configmap(const json_t *cm, const uint8_t *const *ptrs,
                            const size_t *lens, size_t n)
{
	const json_t *md = json_object_get(cm, "metadata");
	const json_t *bin = json_object_get(cm, "binaryData");
	const json_t *labels = json_object_get(md, "labels");
	size_t i;

	CU_ASSERT_STRING_EQUAL(al_json_str(cm, "apiVersion"), "v1");
	CU_ASSERT_STRING_EQUAL(al_json_str(cm, "kind"), "ConfigMap");
	CU_ASSERT_STRING_EQUAL(al_json_str(md, "name"), "sha256-" SIG_HEX);
	CU_ASSERT_STRING_EQUAL(al_json_str(md, "namespace"),
	                       "openshift-config-managed");
	CU_ASSERT_EQUAL(json_object_size(labels), 1);
	CU_ASSERT_STRING_EQUAL(
	    al_json_str(labels, "release.openshift.io/verification-signatures"),
	    "");
	CU_ASSERT_EQUAL(json_object_size(cm), 4);
	CU_ASSERT_EQUAL(json_object_size(bin), n);
	for (i = 0; i < n; i++) {
		char key[128];
		const char *v;
		al_buf raw = AL_BUF_INIT(1 << 16);

		snprintf(key, sizeof(key), "sha256-%s-%zu", SIG_HEX, i + 1);
		v = al_json_str(bin, key);
		CU_ASSERT_PTR_NOT_NULL(v);
		if (v == NULL)
			continue;
		CU_ASSERT_EQUAL(al_base64_decode(&raw, v, strlen(v)), 0);
		CU_ASSERT(raw.len == lens[i] &&
		          memcmp(raw.ptr, ptrs[i], lens[i]) == 0);
		al_buf_free(&raw);
	}
}

/* kubectl parses the file offline (annotate --local needs no cluster; create
 * --dry-run=client still asks a server for discovery) and gives back the
 * same object; skipped with a note when kubectl is missing. */
static void kubectl_accepts(const char *path, const uint8_t *const *ptrs,
                            const size_t *lens, size_t n)
{
	char cmd[2048], outpath[1100];
	json_t *got = NULL;

	if (system("command -v kubectl >/dev/null 2>&1") != 0) {
		al_test_skip("kubectl not on PATH: the kubectl check");
		return;
	}
	snprintf(outpath, sizeof(outpath), "%s.kubectl.json", path);
	snprintf(
	    cmd, sizeof(cmd),
	    "kubectl annotate --local -o json -f '%s' airlock.test/checked=1 "
	    "> '%s' 2>/dev/null",
	    path, outpath);
	CU_ASSERT_EQUAL(system(cmd), 0);
	CU_ASSERT_EQUAL(al_json_load_file(&got, outpath, 1 << 20), 0);
	if (got != NULL) {
		json_object_del(json_object_get(got, "metadata"),
		                "annotations");
		check_configmap(got, ptrs, lens, n);
	}
	json_decref(got);
}

static void test_kres__signature_configmap_yaml(void)
{
	uint8_t a[256], b[100];
	const uint8_t *ptrs[2];
	size_t lens[2];
	al_buf out = AL_BUF_INIT(1 << 20);
	json_t *docs;
	al_digest d;
	char *name, *path;

	sig_samples(a, b, ptrs, lens);
	CU_ASSERT_EQUAL_FATAL(al_digest_parse_str(&d, "sha256:" SIG_HEX), 0);
	CU_ASSERT_EQUAL(al_kres_signature_configmap(&out, &d, ptrs, lens, 2, 0),
	                0);
	docs = load_back(&out);
	CU_ASSERT_EQUAL(json_array_size(docs), 1);
	if (json_array_size(docs) == 1)
		check_configmap(json_array_get(docs, 0), ptrs, lens, 2);
	json_decref(docs);
	name = al_kres_signature_configmap_filename(&d, 0);
	CU_ASSERT_STRING_EQUAL(name, "signature-sha256-6d8c2c3a0f0d5bd8.yaml");
	path = al_sprintf("%s/%s", al_test_tmpdir(), name);
	CU_ASSERT_EQUAL(al_fs_write_atomic(path, out.ptr, out.len), 0);
	kubectl_accepts(path, ptrs, lens, 2);
	free(name);
	free(path);
	al_buf_free(&out);
}

static void test_kres__signature_configmap_json(void)
{
	uint8_t a[256], b[100];
	const uint8_t *ptrs[2];
	size_t lens[2];
	al_buf out = AL_BUF_INIT(1 << 20);
	json_t *cm = NULL;
	al_digest d;
	char *name, *path;

	sig_samples(a, b, ptrs, lens);
	CU_ASSERT_EQUAL_FATAL(al_digest_parse_str(&d, "sha256:" SIG_HEX), 0);
	CU_ASSERT_EQUAL(
	    al_kres_signature_configmap(&out, &d, ptrs, lens, 2, AL_KRES_JSON),
	    0);
	CU_ASSERT(al_str_endswith(al_buf_cstr(&out), "}\n"));
	CU_ASSERT_EQUAL(al_json_parse(&cm, out.ptr, out.len, "cm"), 0);
	if (cm != NULL)
		check_configmap(cm, ptrs, lens, 2);
	json_decref(cm);
	name = al_kres_signature_configmap_filename(&d, AL_KRES_JSON);
	CU_ASSERT_STRING_EQUAL(name, "signature-sha256-6d8c2c3a0f0d5bd8.json");
	path = al_sprintf("%s/%s", al_test_tmpdir(), name);
	CU_ASSERT_EQUAL(al_fs_write_atomic(path, out.ptr, out.len), 0);
	kubectl_accepts(path, ptrs, lens, 2);
	free(name);
	free(path);
	al_buf_free(&out);
}

static void test_kres__signature_configmap_rejects_bad_input(void)
{
	uint8_t a[256], b[100];
	const uint8_t *ptrs[2];
	size_t lens[2];
	al_buf out = AL_BUF_INIT(64);
	al_digest d;

	sig_samples(a, b, ptrs, lens);
	CU_ASSERT_EQUAL_FATAL(al_digest_parse_str(&d, "sha256:" SIG_HEX), 0);
	CU_ASSERT_EQUAL(al_kres_signature_configmap(&out, &d, ptrs, lens, 0, 0),
	                AL_EINVAL);
	lens[1] = 0;
	CU_ASSERT_EQUAL(al_kres_signature_configmap(&out, &d, ptrs, lens, 2, 0),
	                AL_EINVAL);
	lens[1] = 100;
	/* 64 bytes cannot hold it */
	CU_ASSERT_EQUAL(al_kres_signature_configmap(&out, &d, ptrs, lens, 2, 0),
	                AL_ELIMIT);
	al_buf_free(&out);
}

/* A list of ConfigMaps: each one written alone is al_kres_signature_configmap's
 * bytes; the stream is one YAML document each or one v1 List; a refused
 * release is not added. */
static void test_kres__signature_configmap_list(void)
{
	uint8_t a[256], b[100];
	const uint8_t *ptrs[2];
	size_t lens[2], i;
	al_buf one = AL_BUF_INIT(1 << 20), want = AL_BUF_INIT(1 << 20);
	al_buf all = AL_BUF_INIT(1 << 20);
	al_kres_configmaps *c = NULL;
	json_t *docs, *list = NULL;
	al_digest d[2];
	char *name;
	int flags;

	sig_samples(a, b, ptrs, lens);
	CU_ASSERT_EQUAL_FATAL(al_digest_parse_str(&d[0], "sha256:" SIG_HEX), 0);
	d[1] = d[0];
	d[1].bytes[0] ^= 1;
	CU_ASSERT_EQUAL_FATAL(al_kres_configmaps_new(&c), 0);
	CU_ASSERT_EQUAL(al_kres_configmaps_add(c, &d[0], ptrs, lens, 2), 0);
	CU_ASSERT_EQUAL(al_kres_configmaps_add(c, &d[1], ptrs, lens, 0),
	                AL_EINVAL);
	CU_ASSERT_EQUAL(al_kres_configmaps_add(c, &d[1], ptrs, lens, 1), 0);
	CU_ASSERT_EQUAL(al_kres_configmaps_count(c), 2);
	CU_ASSERT_EQUAL(al_kres_configmaps_write_one(c, 2, &one, 0), AL_EINVAL);
	CU_ASSERT_PTR_NULL(al_kres_configmaps_filename(c, 2, 0));
	for (flags = 0; flags <= AL_KRES_JSON; flags += AL_KRES_JSON) {
		for (i = 0; i < 2; i++) {
			al_buf_reset(&one);
			al_buf_reset(&want);
			CU_ASSERT_EQUAL(
			    al_kres_configmaps_write_one(c, i, &one, flags), 0);
			CU_ASSERT_EQUAL(al_kres_signature_configmap(
			                    &want, &d[i], ptrs, lens, 2 - i, flags),
			                0);
			CU_ASSERT(one.len == want.len &&
			          memcmp(one.ptr, want.ptr, one.len) == 0);
			name = al_kres_configmaps_filename(c, i, flags);
			CU_ASSERT_PTR_NOT_NULL(name);
			CU_ASSERT(name != NULL &&
			          al_str_endswith(name, flags ? ".json" : ".yaml"));
			free(name);
		}
	}
	CU_ASSERT_EQUAL(al_kres_configmaps_write(c, &all, 0), 0);
	docs = load_back(&all);
	CU_ASSERT_EQUAL(json_array_size(docs), 2);
	if (json_array_size(docs) == 2)
		check_configmap(json_array_get(docs, 0), ptrs, lens, 2);
	json_decref(docs);
	al_buf_reset(&all);
	CU_ASSERT_EQUAL(al_kres_configmaps_write(c, &all, AL_KRES_JSON), 0);
	CU_ASSERT(al_str_endswith(al_buf_cstr(&all), "}\n"));
	CU_ASSERT_EQUAL(al_json_parse(&list, all.ptr, all.len, "list"), 0);
	CU_ASSERT_STRING_EQUAL(al_json_str(list, "kind"), "List");
	CU_ASSERT_STRING_EQUAL(al_json_str(list, "apiVersion"), "v1");
	CU_ASSERT_EQUAL(json_array_size(json_object_get(list, "items")), 2);
	if (json_array_size(json_object_get(list, "items")) == 2)
		check_configmap(json_array_get(json_object_get(list, "items"), 0),
		                ptrs, lens, 2);
	json_decref(list);
	al_kres_configmaps_free(c);
	al_kres_configmaps_free(NULL);
	al_buf_free(&one);
	al_buf_free(&want);
	al_buf_free(&all);
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
	    {"test_kres__signature_configmap_yaml",
	     test_kres__signature_configmap_yaml},
	    {"test_kres__signature_configmap_json",
	     test_kres__signature_configmap_json},
	    {"test_kres__signature_configmap_list",
	     test_kres__signature_configmap_list},
	    {"test_kres__signature_configmap_rejects_bad_input",
	     test_kres__signature_configmap_rejects_bad_input},
	    CU_TEST_INFO_NULL,
	};

	return al_test_run("kres", tests);
}
