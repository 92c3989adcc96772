/* test_update_quantity.c: resource quantities compared by value as k8s.io/apimachinery's resource.Quantity does,
 * with apimachinery's own cases (tests/data/k8s-quantity/cases.json), and the merge rules that use them. */
/* al-tier: quick */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "al_test.h"
#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "json_int.h"
#include "update_int.h"

static json_t *cases(void)
{
	char *path = al_path_join(al_test_source_dir(), "tests/data/k8s-quantity/cases.json");
	json_t *doc = NULL;

	if (path == NULL || al_json_load_file(&doc, path, 1 << 20) != 0)
		doc = NULL;
	free(path);
	return doc;
}

static int parse(al_update_qty *q, const char *s)
{
	return al_update_qty_parse(q, s, strlen(s));
}

/* -2 when a does not parse, -3 when b does not, else Cmp. */
static int cmp(const char *a, const char *b)
{
	al_update_qty qa, qb;

	if (parse(&qa, a) < 0)
		return -2;
	if (parse(&qb, b) < 0)
		return -3;
	return al_update_qty_cmp(&qa, &qb);
}

/* TestQuantityParse (each input, "-" input and "+" input against its
 * expected value), TestQuantityString (canonical and alternate forms),
 * TestQuantityParseEmit, TestParseQuantity (wantAsDec and canonical),
 * TestParseQuantityString: each pair is one value. */
static void test_update_quantity__apimachinery_values(void)
{
	json_t *doc = cases(), *e;
	size_t i, failed = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
	CU_ASSERT_TRUE(json_array_size(json_object_get(doc, "equal")) >= 400);
	json_array_foreach(json_object_get(doc, "equal"), i, e)
	{
		const char *a = json_string_value(json_array_get(e, 0)), *b = json_string_value(json_array_get(e, 1));
		int c = cmp(a, b), r = cmp(b, a);

		if (c != 0 || r != 0) {
			fprintf(stderr, "%s: '%s' vs '%s': %d %d\n", json_string_value(json_array_get(e, 2)), a, b,
				c, r);
			failed++;
		}
	}
	CU_ASSERT_EQUAL(failed, 0);
	json_decref(doc);
}

/* TestQuantityCmp, TestQuantityCmpInt64AndDec (both orders). */
static void test_update_quantity__apimachinery_cmp(void)
{
	json_t *doc = cases(), *e;
	size_t i, failed = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
	CU_ASSERT_TRUE(json_array_size(json_object_get(doc, "cmp")) >= 20);
	json_array_foreach(json_object_get(doc, "cmp"), i, e)
	{
		const char *a = json_string_value(json_array_get(e, 0)), *b = json_string_value(json_array_get(e, 1));
		int want = (int)json_integer_value(json_array_get(e, 2));

		if (cmp(a, b) != want || cmp(b, a) != -want) {
			fprintf(stderr, "cmp '%s' '%s': %d, want %d\n", a, b, cmp(a, b), want);
			failed++;
		}
	}
	CU_ASSERT_EQUAL(failed, 0);
	json_decref(doc);
}

/* TestQuantityParse's invalid strings and the empty string. */
static void test_update_quantity__apimachinery_invalid(void)
{
	json_t *doc = cases(), *e;
	size_t i;
	al_update_qty q;

	CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
	CU_ASSERT_TRUE(json_array_size(json_object_get(doc, "invalid")) >= 10);
	json_array_foreach(json_object_get(doc, "invalid"), i, e)
	{
		const char *s = json_string_value(e);
		int rc = parse(&q, s);

		if (rc != AL_EPARSE)
			fprintf(stderr, "'%s' parsed (%d)\n", s, rc);
		CU_ASSERT_EQUAL(rc, AL_EPARSE);
	}
	al_error_clear();
	json_decref(doc);
}

/* TestJSONWhitespace: Quantity.UnmarshalJSON reads numbers and strings
 * with white space around them. */
static void test_update_quantity__json_forms(void)
{
	json_t *doc = cases(), *e;
	size_t i;

	CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
	CU_ASSERT_TRUE(json_array_size(json_object_get(doc, "json_equal")) >= 8);
	json_array_foreach(json_object_get(doc, "json_equal"), i, e)
	{
		json_t *a = json_loads(json_string_value(json_array_get(e, 0)), JSON_DECODE_ANY, NULL);
		json_t *b = json_string(json_string_value(json_array_get(e, 1)));

		CU_ASSERT_PTR_NOT_NULL(a);
		CU_ASSERT_EQUAL(al_update_qty_json_equal(a, b), 1);
		json_decref(a);
		json_decref(b);
	}
	json_decref(doc);
	/* a YAML 0.5 or 1 is a JSON number; floats as Go prints them */
	{
		json_t *half = json_real(0.5), *one = json_integer(1), *tenth = json_real(0.1);
		json_t *s500m = json_string("500m"), *s1000m = json_string("1000m"), *s100m = json_string("100m");
		json_t *word = json_string("a"), *t = json_true();

		CU_ASSERT_EQUAL(al_update_qty_json_equal(half, s500m), 1);
		CU_ASSERT_EQUAL(al_update_qty_json_equal(one, s1000m), 1);
		CU_ASSERT_EQUAL(al_update_qty_json_equal(tenth, s100m), 1);
		CU_ASSERT_EQUAL(al_update_qty_json_equal(one, s500m), 0);
		CU_ASSERT_EQUAL(al_update_qty_json_equal(word, s500m), -1);
		CU_ASSERT_EQUAL(al_update_qty_json_equal(t, s500m), -1);
		json_decref(half);
		json_decref(one);
		json_decref(tenth);
		json_decref(s500m);
		json_decref(s1000m);
		json_decref(s100m);
		json_decref(word);
		json_decref(t);
	}
}

/* Exactness where a double would fail: values that differ in the 20th
 * digit or beyond 2^63, and the binary cap. */
static void test_update_quantity__exact_beyond_int64(void)
{
	al_update_qty q;
	char big[300];

	CU_ASSERT_EQUAL(cmp("1Gi", "1024Mi"), 0);
	CU_ASSERT_EQUAL(cmp("0.5", "500m"), 0);
	CU_ASSERT_EQUAL(cmp("1000m", "1"), 0);
	CU_ASSERT_EQUAL(cmp("1e3", "1k"), 0);
	CU_ASSERT_EQUAL(cmp("100000000000000000001", "100000000000000000000"), 1);
	CU_ASSERT_EQUAL(cmp("12345678901234567890123", "12345678901234567890.123k"), 0);
	CU_ASSERT_EQUAL(cmp("9223372036854775808", "9223372036854775807"), 1);
	/* BinarySI is capped at 2^63-1, DecimalSI is not */
	CU_ASSERT_EQUAL(cmp("16Ei", "8Ei"), 0);
	CU_ASSERT_EQUAL(cmp("10E", "9223372036854775807"), 1);
	CU_ASSERT_EQUAL(cmp("1e1000", "1e999"), 1);
	CU_ASSERT_EQUAL(cmp("1e-1000", "1n"), 0);
	CU_ASSERT_EQUAL(cmp("-1e-1000", "-1n"), 0);
	CU_ASSERT_EQUAL(cmp("0.9999999999", "1"), 0);
	CU_ASSERT_EQUAL(cmp("-2", "1"), -1);
	memset(big, '9', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	CU_ASSERT_EQUAL(parse(&q, big), AL_ELIMIT);
	al_error_clear();
}

/* The merge (lib/resourcemerge ensureResourceRequirements, ensureVolumes)
 * compares quantities by value: nothing is modified when the live object
 * says 1Gi / 500m / 1 and the manifest 1024Mi / 0.5 / 1000m; a different
 * value is written. Quantities elsewhere (an env value) stay strings. */
#define REQ_FMT\
	    "{\"metadata\":{\"name\":\"d\"},\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\","\
	    "\"env\":[{\"name\":\"MEM\",\"value\":\"%s\"}],\"resources\":{\"requests\":{\"memory\":\"1024Mi\","\
	    "\"cpu\":%s},\"limits\":{\"cpu\":\"1000m\"}}}],\"volumes\":[{\"name\":\"v\",\"emptyDir\":{\"sizeLimit\":"\
	    "\"%s\"}}]}}}}"

static void test_update_quantity__merge_compares_by_value(void)
{
	const char *live_s =
	    "{\"metadata\":{\"name\":\"d\"},\"spec\":{\"replicas\":1,\"selector\":{},\"strategy\":{\"type\":"
	    "\"RollingUpdate\",\"rollingUpdate\":{\"maxUnavailable\":\"25%\",\"maxSurge\":\"25%\"}},\"template\":{"
	    "\"spec\":{\"dnsPolicy\":\"ClusterFirst\",\"terminationGracePeriodSeconds\":30,\"containers\":[{\"name\":"
	    "\"c\",\"env\":[{\"name\":\"MEM\",\"value\":\"1Gi\"}],\"resources\":{\"requests\":{\"memory\":\"1Gi\","
	    "\"cpu\":\"500m\"},\"limits\":{\"cpu\":\"1\"}}}],\"volumes\":[{\"name\":\"v\",\"emptyDir\":{\"sizeLimit\":"
	    "\"1Gi\"}}]}}}}";
	static const struct {
		const char *env, *cpu, *size;
		int modified;
	} rows[] = {
	    {"1Gi", "0.5", "1024Mi", 0},
	    {"1Gi", "\"0.5\"", "1024Mi", 0},
	    {"1Gi", "\"500m\"", "1073741824", 0},
	    {"1024Mi", "0.5", "1Gi", 1},   /* an env value is a string */
	    {"1Gi", "\"501m\"", "1Gi", 1}, /* a different quantity */
	    {"1Gi", "0.5", "1G", 1},
	    /* a quantity 0 is not an absent one (a map entry) */
	    {"1Gi", "\"500m\",\"ephemeral-storage\":0", "1Gi", 1},
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		json_t *live = json_loads(live_s, 0, NULL), *req;
		char *txt = al_sprintf(REQ_FMT, rows[i].env, rows[i].cpu, rows[i].size);
		int modified = -1;

		req = txt != NULL ? json_loads(txt, 0, NULL) : NULL;
		CU_ASSERT_PTR_NOT_NULL(live);
		CU_ASSERT_PTR_NOT_NULL(req);
		CU_ASSERT_EQUAL(al_update_merge_live(live, req, "apps", "Deployment", &modified), 0);
		if (modified != rows[i].modified)
			fprintf(stderr, "row %zu: modified %d\n", i, modified);
		CU_ASSERT_EQUAL(modified, rows[i].modified);
		free(txt);
		json_decref(live);
		json_decref(req);
	}
}

static CU_TestInfo tests[] = {
	{"test_update_quantity__apimachinery_values", test_update_quantity__apimachinery_values},
	{"test_update_quantity__apimachinery_cmp", test_update_quantity__apimachinery_cmp},
	{"test_update_quantity__apimachinery_invalid", test_update_quantity__apimachinery_invalid},
	{"test_update_quantity__json_forms", test_update_quantity__json_forms},
	{"test_update_quantity__exact_beyond_int64", test_update_quantity__exact_beyond_int64},
	{"test_update_quantity__merge_compares_by_value", test_update_quantity__merge_compares_by_value},
	CU_TEST_INFO_NULL,
};

int main(void)
{
	return al_test_run("update_quantity", tests);
}
