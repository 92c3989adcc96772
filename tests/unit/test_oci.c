/* test_oci.c: unit tests for strict OCI / Docker schema2 manifest and index parsing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oci_int.h"
#include "airlock/error.h"
#include "airlock/oci.h"
#include "al_test.h"

#define H1 "sha256:1111111111111111111111111111111111111111111111111111111111111111"
#define H2 "sha256:2222222222222222222222222222222222222222222222222222222222222222"
#define H3 "sha256:3333333333333333333333333333333333333333333333333333333333333333"

static int parse(al_manifest *m, const char *json, const char *hint)
{
	return al_manifest_parse(m, (const uint8_t *)json, strlen(json), hint, "test manifest");
}

/* The status of parsing json (the manifest is released). */
static int status(const char *json, const char *hint)
{
	al_manifest m;
	int rc;

	memset(&m, 0, sizeof(m));
	rc = parse(&m, json, hint);
	al_manifest_clear(&m);
	return rc;
}

static void test_oci__parses_oci_manifest(void)
{
	const char *j = "{\"schemaVersion\":2,\"mediaType\":\"" AL_MT_OCI_MANIFEST "\","
			"\"config\":{\"mediaType\":\"" AL_MT_OCI_CONFIG "\",\"digest\":\"" H1 "\",\"size\":7},"
			"\"layers\":[{\"mediaType\":\"" AL_MT_OCI_LAYER_GZIP "\",\"digest\":\"" H2 "\",\"size\":100,"
			"\"annotations\":{\"a\":\"b\"}},"
			"{\"mediaType\":\"" AL_MT_OCI_LAYER "\",\"digest\":\"" H3 "\",\"size\":0,\"urls\":[\"http://x\"]}],"
			"\"artifactType\":\"application/x-test\","
			"\"subject\":{\"mediaType\":\"" AL_MT_OCI_MANIFEST "\",\"digest\":\"" H1 "\",\"size\":5}}";
	al_manifest m;
	al_digest d;

	memset(&m, 0, sizeof(m));
	CU_ASSERT_EQUAL(parse(&m, j, NULL), 0);
	CU_ASSERT_STRING_EQUAL(m.media_type, AL_MT_OCI_MANIFEST);
	CU_ASSERT_EQUAL(m.is_index, 0);
	CU_ASSERT_STRING_EQUAL(m.config.media_type, AL_MT_OCI_CONFIG);
	CU_ASSERT_EQUAL(m.config.size, 7);
	al_digest_parse_str(&d, H1);
	CU_ASSERT(al_digest_equal(&m.config.digest, &d));
	CU_ASSERT_EQUAL(m.nlayers, 2);
	if (m.nlayers == 2) {
		CU_ASSERT_EQUAL(m.layers[0].size, 100);
		CU_ASSERT_STRING_EQUAL(m.layers[1].media_type, AL_MT_OCI_LAYER);
		CU_ASSERT_EQUAL(m.layers[1].size, 0);
	}
	CU_ASSERT_EQUAL(m.has_subject, 1);
	CU_ASSERT_EQUAL(m.subject.size, 5);
	CU_ASSERT_PTR_NOT_NULL(m.artifact_type);
	if (m.artifact_type != NULL)
		CU_ASSERT_STRING_EQUAL(m.artifact_type, "application/x-test");
	al_manifest_clear(&m);
	al_manifest_clear(NULL);
}

static void test_oci__parses_docker_manifest(void)
{
	const char *j = "{\"schemaVersion\":2,\"mediaType\":\"" AL_MT_DOCKER_MANIFEST "\","
			"\"config\":{\"mediaType\":\"" AL_MT_DOCKER_CONFIG "\",\"digest\":\"" H1 "\",\"size\":7},"
			"\"layers\":[{\"mediaType\":\"" AL_MT_DOCKER_LAYER_GZIP "\",\"digest\":\"" H2 "\",\"size\":1}]}";
	al_manifest m;

	memset(&m, 0, sizeof(m));
	CU_ASSERT_EQUAL(parse(&m, j, AL_MT_OCI_MANIFEST), 0);
	/* the body's mediaType wins over the hint */
	CU_ASSERT_STRING_EQUAL(m.media_type, AL_MT_DOCKER_MANIFEST);
	CU_ASSERT_EQUAL(m.nlayers, 1);
	CU_ASSERT_EQUAL(m.has_subject, 0);
	CU_ASSERT_PTR_NULL(m.artifact_type);
	al_manifest_clear(&m);
}

static void test_oci__parses_indexes_with_platforms(void)
{
	const char *oci = "{\"schemaVersion\":2,\"manifests\":["
			  "{\"mediaType\":\"" AL_MT_OCI_MANIFEST "\",\"digest\":\"" H1 "\",\"size\":10,"
			  "\"platform\":{\"architecture\":\"amd64\",\"os\":\"linux\"}},"
			  "{\"mediaType\":\"" AL_MT_OCI_MANIFEST "\",\"digest\":\"" H2 "\",\"size\":11,"
			  "\"platform\":{\"architecture\":\"arm64\",\"os\":\"linux\",\"variant\":\"v8\"}},"
			  "{\"mediaType\":\"" AL_MT_OCI_MANIFEST "\",\"digest\":\"" H3 "\",\"size\":12,"
			  "\"artifactType\":\"application/x-sig\"}]}";
	const char *docker = "{\"schemaVersion\":2,\"mediaType\":\"" AL_MT_DOCKER_LIST "\",\"manifests\":["
			     "{\"mediaType\":\"" AL_MT_DOCKER_MANIFEST "\",\"digest\":\"" H1 "\",\"size\":10,"
			     "\"platform\":{\"architecture\":\"s390x\",\"os\":\"linux\"}}]}";
	al_manifest m;

	memset(&m, 0, sizeof(m));
	/* no mediaType, no hint: "manifests" makes it an OCI index */
	CU_ASSERT_EQUAL(parse(&m, oci, NULL), 0);
	CU_ASSERT_EQUAL(m.is_index, 1);
	CU_ASSERT_STRING_EQUAL(m.media_type, AL_MT_OCI_INDEX);
	CU_ASSERT_EQUAL(m.nmanifests, 3);
	if (m.nmanifests == 3) {
		CU_ASSERT(al_platform_match(&m.manifests[0], "linux/amd64"));
		CU_ASSERT(!al_platform_match(&m.manifests[0], "linux/arm64"));
		CU_ASSERT(!al_platform_match(&m.manifests[0], "linux/amd64/v2"));
		CU_ASSERT(al_platform_match(&m.manifests[1], "linux/arm64"));
		CU_ASSERT(al_platform_match(&m.manifests[1], "linux/arm64/v8"));
		CU_ASSERT(!al_platform_match(&m.manifests[1], "linux/arm64/v7"));
		CU_ASSERT(!al_platform_match(&m.manifests[1], "windows/arm64"));
		CU_ASSERT(!al_platform_match(&m.manifests[2], "linux/amd64"));
		CU_ASSERT_STRING_EQUAL(m.manifests[2].artifact_type, "application/x-sig");
		CU_ASSERT_STRING_EQUAL(m.manifests[1].variant, "v8");
	}
	al_manifest_clear(&m);
	CU_ASSERT_EQUAL(parse(&m, docker, NULL), 0);
	CU_ASSERT_EQUAL(m.is_index, 1);
	CU_ASSERT_STRING_EQUAL(m.media_type, AL_MT_DOCKER_LIST);
	al_manifest_clear(&m);
}

static void test_oci__uses_hint_without_body_media_type(void)
{
	const char *j = "{\"schemaVersion\":2,"
			"\"config\":{\"mediaType\":\"" AL_MT_DOCKER_CONFIG "\",\"digest\":\"" H1 "\",\"size\":7},"
			"\"layers\":[]}";
	al_manifest m;

	memset(&m, 0, sizeof(m));
	CU_ASSERT_EQUAL(parse(&m, j, AL_MT_DOCKER_MANIFEST), 0);
	CU_ASSERT_STRING_EQUAL(m.media_type, AL_MT_DOCKER_MANIFEST);
	al_manifest_clear(&m);
	/* a generic Content-Type is no hint */
	CU_ASSERT_EQUAL(parse(&m, j, "application/json"), 0);
	CU_ASSERT_STRING_EQUAL(m.media_type, AL_MT_OCI_MANIFEST);
	al_manifest_clear(&m);
}

static void test_oci__rejects_malformed(void)
{
#define CFG "\"config\":{\"mediaType\":\"" AL_MT_OCI_CONFIG "\",\"digest\":\"" H1 "\",\"size\":7}"
#define MT "\"mediaType\":\"" AL_MT_OCI_MANIFEST "\""
	static const struct {
		const char *json;
		int want;
	} cases[] = {
		{"", AL_EPARSE},
		{"[]", AL_EPARSE},
		{"{\"schemaVersion\":2," MT "," CFG ",\"layers\":[]", AL_EPARSE},
		{"{\"schemaVersion\":2," MT "," CFG ",\"layers\":[]} x", AL_EPARSE},
		{"{\"schemaVersion\":2,\"schemaVersion\":2," MT "," CFG ",\"layers\":[]}", AL_EPARSE},
		{"{" MT "," CFG ",\"layers\":[]}", AL_EPARSE},
		{"{\"schemaVersion\":3," MT "," CFG ",\"layers\":[]}", AL_EPARSE},
		{"{\"schemaVersion\":\"2\"," MT "," CFG ",\"layers\":[]}", AL_EPARSE},
		{"{\"schemaVersion\":2," MT ",\"layers\":[]}", AL_EPARSE},
		{"{\"schemaVersion\":2," MT "," CFG "}", AL_EPARSE},
		{"{\"schemaVersion\":2," MT "," CFG ",\"layers\":{}}", AL_EPARSE},
		{"{\"schemaVersion\":2," MT ",\"config\":{\"mediaType\":\"x\",\"size\":7},\"layers\":[]}", AL_EPARSE},
		{"{\"schemaVersion\":2," MT ",\"config\":{\"mediaType\":\"x\",\"digest\":\"" H1 "\"},\"layers\":[]}", AL_EPARSE},
		{"{\"schemaVersion\":2," MT ",\"config\":{\"digest\":\"" H1 "\",\"size\":7},\"layers\":[]}", AL_EPARSE},
		{"{\"schemaVersion\":2," MT ",\"config\":{\"mediaType\":\"x\",\"digest\":\"" H1 "\",\"size\":-1},\"layers\":[]}", AL_EPARSE},
		{"{\"schemaVersion\":2," MT ",\"config\":{\"mediaType\":\"x\",\"digest\":\"" H1 "\",\"size\":1.5},\"layers\":[]}", AL_EPARSE},
		{"{\"schemaVersion\":2," MT ",\"config\":{\"mediaType\":\"x\",\"digest\":\"sha256:abc\",\"size\":1},\"layers\":[]}", AL_EPARSE},
		{"{\"schemaVersion\":2," MT ",\"config\":{\"mediaType\":\"x\",\"digest\":\"SHA256:1111\",\"size\":1},\"layers\":[]}", AL_EPARSE},
		{"{\"schemaVersion\":2," MT ",\"config\":{\"mediaType\":\"x\",\"digest\":\"sha256:111111111111111111111111111111111111111111111111111111111111111G\",\"size\":1},\"layers\":[]}", AL_EPARSE},
		{"{\"schemaVersion\":2," MT ",\"config\":{\"mediaType\":\"x\",\"digest\":\"" H1 "\",\"digest\":\"" H2 "\",\"size\":1},\"layers\":[]}", AL_EPARSE},
		{"{\"schemaVersion\":2," MT "," CFG ",\"layers\":[{\"mediaType\":\"x\",\"digest\":\"" H1 "\",\"size\":1,\"annotations\":{\"a\":1}}]}", AL_EPARSE},
		{"{\"schemaVersion\":2," MT "," CFG ",\"layers\":[{\"mediaType\":\"x\",\"digest\":\"" H1 "\",\"size\":1,\"urls\":\"x\"}]}", AL_EPARSE},
		{"{\"schemaVersion\":2," MT "," CFG ",\"layers\":[{\"mediaType\":\"x\",\"digest\":\"" H1 "\",\"size\":1,\"platform\":{\"os\":\"linux\",\"architecture\":\"amd64\"}}]}", AL_EPARSE},
		{"{\"schemaVersion\":2," MT "," CFG ",\"layers\":[7]}", AL_EPARSE},
		{"{\"schemaVersion\":2," MT "," CFG ",\"layers\":[],\"artifactType\":5}", AL_EPARSE},
		{"{\"schemaVersion\":2," MT "," CFG ",\"layers\":[],\"subject\":{\"mediaType\":\"x\"}}", AL_EPARSE},
		{"{\"schemaVersion\":2," MT "," CFG ",\"layers\":[],\"manifests\":[]}", AL_EPARSE},
		{"{\"schemaVersion\":2,\"mediaType\":\"" AL_MT_OCI_INDEX "\"," CFG ",\"manifests\":[]}", AL_EPARSE},
		{"{\"schemaVersion\":2,\"mediaType\":\"" AL_MT_OCI_INDEX "\"}", AL_EPARSE},
		{"{\"schemaVersion\":2,\"mediaType\":\"" AL_MT_OCI_INDEX "\",\"manifests\":[{\"mediaType\":\"x\",\"digest\":\"" H1 "\",\"size\":1,\"platform\":{\"os\":\"linux\"}}]}", AL_EPARSE},
		{"{\"schemaVersion\":2,\"mediaType\":\"" AL_MT_OCI_INDEX "\",\"manifests\":[{\"mediaType\":\"x\",\"digest\":\"" H1 "\",\"size\":1,\"platform\":\"linux/amd64\"}]}", AL_EPARSE},
		{"{\"schemaVersion\":2,\"mediaType\":7," CFG ",\"layers\":[]}", AL_EPARSE},
		{"{\"schemaVersion\":2}", AL_EPARSE},
		{"{\"schemaVersion\":1,\"name\":\"x\",\"fsLayers\":[]}", AL_EUNSUPPORTED},
		{"{\"schemaVersion\":2,\"mediaType\":\"" AL_MT_DOCKER_SCHEMA1_SIGNED "\"," CFG ",\"layers\":[]}", AL_EUNSUPPORTED},
		{"{\"schemaVersion\":2,\"mediaType\":\"application/x-unknown\"," CFG ",\"layers\":[]}", AL_EUNSUPPORTED},
		{"{\"schemaVersion\":2," MT ",\"config\":{\"mediaType\":\"x\",\"digest\":\"md5:1111\",\"size\":1},\"layers\":[]}", AL_EUNSUPPORTED},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = status(cases[i].json, NULL);

		if (rc != cases[i].want)
			printf("\ncase %zu: got %s (%s), want %s\n", i, al_status_name(rc), al_error_message(), al_status_name(cases[i].want));
		CU_ASSERT_EQUAL(rc, cases[i].want);
	}
	/* an error message names the source and the field */
	CU_ASSERT_EQUAL(status("{\"schemaVersion\":2," MT ",\"config\":{\"mediaType\":\"x\",\"size\":7},\"layers\":[]}", NULL), AL_EPARSE);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "test manifest"));
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "config"));
#undef CFG
#undef MT
}

static void test_oci__rejects_nul_and_schema1_hint(void)
{
	/* valid up to a trailing NUL byte */
	static const char j[] = "{\"schemaVersion\":2,\"config\":{\"mediaType\":\"x\",\"digest\":\"" H1 "\",\"size\":1},\"layers\":[]}";
	al_manifest m;

	memset(&m, 0, sizeof(m));
	CU_ASSERT_EQUAL(al_manifest_parse(&m, (const uint8_t *)j, sizeof(j) - 1, NULL, "nul"), 0);
	al_manifest_clear(&m);
	CU_ASSERT_EQUAL(al_manifest_parse(&m, (const uint8_t *)j, sizeof(j), NULL, "nul"), AL_EPARSE);
	CU_ASSERT_EQUAL(status("{\"schemaVersion\":2,\"config\":{},\"layers\":[]}", AL_MT_DOCKER_SCHEMA1), AL_EUNSUPPORTED);
}

static char *make_layers(size_t n)
{
	static const char head[] = "{\"schemaVersion\":2,\"mediaType\":\"" AL_MT_OCI_MANIFEST "\","
				   "\"config\":{\"mediaType\":\"x\",\"digest\":\"" H1 "\",\"size\":7},\"layers\":[";
	static const char item[] = "{\"mediaType\":\"x\",\"digest\":\"" H2 "\",\"size\":1},";
	size_t len = sizeof(head) + n * (sizeof(item) - 1) + 4;
	char *s = malloc(len), *p;
	size_t i;

	if (s == NULL)
		return NULL;
	memcpy(s, head, sizeof(head) - 1);
	p = s + sizeof(head) - 1;
	for (i = 0; i < n; i++) {
		memcpy(p, item, sizeof(item) - 1);
		p += sizeof(item) - 1;
	}
	if (n > 0)
		p--;
	memcpy(p, "]}", 3);
	return s;
}

static void test_oci__bounds_entries_and_size(void)
{
	char *ok = make_layers(AL_OCI_ENTRIES_MAX), *over = make_layers(AL_OCI_ENTRIES_MAX + 1);
	uint8_t *big = calloc(1, AL_OCI_MANIFEST_MAX + 1);
	al_manifest m;

	memset(&m, 0, sizeof(m));
	CU_ASSERT_PTR_NOT_NULL(ok);
	CU_ASSERT_PTR_NOT_NULL(over);
	CU_ASSERT_PTR_NOT_NULL(big);
	if (ok != NULL)
		CU_ASSERT_EQUAL(status(ok, NULL), 0);
	if (over != NULL)
		CU_ASSERT_EQUAL(status(over, NULL), AL_ELIMIT);
	if (big != NULL)
		CU_ASSERT_EQUAL(al_manifest_parse(&m, big, AL_OCI_MANIFEST_MAX + 1, NULL, "big"), AL_ELIMIT);
	free(ok);
	free(over);
	free(big);
}

static void test_oci__descriptor_json_round_trip(void)
{
	const char *j = "{\"mediaType\":\"" AL_MT_OCI_MANIFEST "\",\"digest\":\"" H3 "\",\"size\":42,"
			"\"platform\":{\"architecture\":\"arm\",\"os\":\"linux\",\"variant\":\"v7\"}}";
	json_t *in = json_loads(j, 0, NULL), *out = NULL;
	al_descriptor d, d2, c;

	memset(&d, 0, sizeof(d));
	memset(&d2, 0, sizeof(d2));
	memset(&c, 0, sizeof(c));
	CU_ASSERT_EQUAL(al_descriptor_from_json(&d, in, 1, "t"), 0);
	CU_ASSERT_EQUAL(al_descriptor_from_json(&d2, in, 0, "t"), AL_EPARSE);
	CU_ASSERT_EQUAL(al_descriptor_copy(&c, &d), 0);
	out = al_descriptor_to_json(&c);
	CU_ASSERT_PTR_NOT_NULL(out);
	CU_ASSERT(json_equal(in, out));
	CU_ASSERT_STRING_EQUAL(c.variant, "v7");
	CU_ASSERT_EQUAL(c.size, 42);
	json_decref(in);
	json_decref(out);
	al_descriptor_clear(&d);
	al_descriptor_clear(&c);
	al_descriptor_clear(NULL);
	CU_ASSERT(al_media_type_is_manifest(AL_MT_DOCKER_LIST));
	CU_ASSERT(al_media_type_is_manifest(AL_MT_OCI_MANIFEST));
	CU_ASSERT(!al_media_type_is_manifest(AL_MT_OCI_CONFIG));
	CU_ASSERT(!al_media_type_is_manifest(NULL));
	CU_ASSERT(al_media_type_is_index(AL_MT_OCI_INDEX));
	CU_ASSERT(!al_media_type_is_index(AL_MT_DOCKER_MANIFEST));
}

int main(void)
{
	CU_TestInfo tests[] = {
		{"parses_oci_manifest", test_oci__parses_oci_manifest},
		{"parses_docker_manifest", test_oci__parses_docker_manifest},
		{"parses_indexes_with_platforms", test_oci__parses_indexes_with_platforms},
		{"uses_hint_without_body_media_type", test_oci__uses_hint_without_body_media_type},
		{"rejects_malformed", test_oci__rejects_malformed},
		{"rejects_nul_and_schema1_hint", test_oci__rejects_nul_and_schema1_hint},
		{"bounds_entries_and_size", test_oci__bounds_entries_and_size},
		{"descriptor_json_round_trip", test_oci__descriptor_json_round_trip},
		CU_TEST_INFO_NULL,
	};

	return al_test_run("oci", tests);
}
