/* test_json.c: unit tests for the strict JSON wrapper: duplicates, trailing
 * data, positions, files. */
#include <stdlib.h>
#include <string.h>

#include "al_test.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "json_int.h"

/* Parse text; expect rc; when rc < 0, the message must contain needle. */
static void check_parse(const char *text, size_t n, int want,
                        const char *needle)
{
	json_t *v = NULL;
	int rc = al_json_parse(&v, (const uint8_t *)text, n, "test.json");

	CU_ASSERT_EQUAL(rc, want);
	if (rc == 0) {
		CU_ASSERT_PTR_NOT_NULL(v);
		json_decref(v);
		return;
	}
	CU_ASSERT_PTR_NULL(v);
	if (needle != NULL && strstr(al_error_message(), needle) == NULL) {
		fprintf(stderr, "message lacks '%s': %s\n", needle,
		        al_error_message());
		CU_FAIL("message");
	}
}

static void test_json__parses_values(void)
{
	json_t *v = NULL;
	const char *t = "{\"a\": \"x\", \"b\": [1, 2.5, true, null]}";

	CU_ASSERT_EQUAL_FATAL(
	    al_json_parse(&v, (const uint8_t *)t, strlen(t), "t"), 0);
	CU_ASSERT_STRING_EQUAL(al_json_str(v, "a"), "x");
	CU_ASSERT_PTR_NULL(al_json_str(v, "b"));
	CU_ASSERT_PTR_NULL(al_json_str(v, "missing"));
	CU_ASSERT_EQUAL(json_array_size(json_object_get(v, "b")), 4);
	json_decref(v);
	check_parse("42", 2, 0, NULL);
	check_parse("\"s\"", 3, 0, NULL);
	CU_ASSERT_PTR_NULL(al_json_str(NULL, "a"));
}

static void test_json__rejects_duplicate_keys_with_position(void)
{
	check_parse("{\n  \"a\": 1,\n  \"a\": 2\n}", 21, AL_EPARSE,
	            "test.json: line 3, column");
	check_parse("{\"a\": 1, \"a\": 2}", 16, AL_EPARSE,
	            "duplicate object key");
	check_parse("{\"o\": {\"k\": 1, \"k\": 1}}", 24, AL_EPARSE,
	            "duplicate");
}

static void test_json__rejects_trailing_data(void)
{
	check_parse("{} {}", 5, AL_EPARSE, "test.json: line 1, column");
	check_parse("[1]x", 4, AL_EPARSE, "end of file expected");
	check_parse("{}\n\n", 4, 0, NULL);
}

static void test_json__rejects_nul_bytes(void)
{
	check_parse("\"a\0b\"", 5, AL_EPARSE, "test.json");
	check_parse("{}\0", 3, AL_EPARSE, "test.json");
}

static void test_json__error_positions(void)
{
	check_parse("{\n\"a\": tru\n}", 12, AL_EPARSE,
	            "test.json: line 2, column");
	check_parse("", 0, AL_EPARSE, "test.json: line 1, column 0");
	check_parse("[1,\n2,\n,]", 9, AL_EPARSE, "line 3, column 1");
	check_parse("{\"a\":", 5, AL_EPARSE, "test.json");
}

static void test_json__rejects_deep_nesting(void)
{
	char deep[5000];

	memset(deep, '[', 2500);
	memset(deep + 2500, ']', 2500);
	check_parse(deep, sizeof(deep), AL_EPARSE, "maximum parsing depth");
}

static void test_json__file_round_trip(void)
{
	const char *dir = al_test_tmpdir();
	char *path = al_path_join(dir, "rt.json");
	char *big = al_path_join(dir, "big.json");
	json_t *v = json_pack("{s:s, s:[i,i], s:{s:b}}", "z", "first", "a", 1,
	                      2, "m", "t", 1);
	json_t *w = NULL;
	char *s;
	al_buf b = AL_BUF_INIT(1024);

	CU_ASSERT_EQUAL(al_json_save_file(path, v, 2), 0);
	CU_ASSERT_EQUAL(al_fs_read_file(path, &b), 0);
	/* Insertion order is kept and the file ends with a newline. */
	CU_ASSERT_PTR_NOT_NULL(strstr(al_buf_cstr(&b), "\"z\": \"first\""));
	CU_ASSERT(b.len > 0 && b.ptr[b.len - 1] == '\n');
	CU_ASSERT(strstr(al_buf_cstr(&b), "\"z\"") <
	          strstr(al_buf_cstr(&b), "\"a\""));
	CU_ASSERT_EQUAL(al_json_load_file(&w, path, 1024), 0);
	CU_ASSERT(json_equal(v, w));
	s = al_json_dump(w, 0);
	CU_ASSERT_STRING_EQUAL(
	    s, "{\"z\":\"first\",\"a\":[1,2],\"m\":{\"t\":true}}");
	free(s);
	json_decref(w);
	w = NULL;
	CU_ASSERT_EQUAL(al_json_load_file(&w, path, 10), AL_ELIMIT);
	CU_ASSERT_PTR_NULL(w);
	CU_ASSERT_EQUAL(al_json_load_file(&w, big, 1024), AL_ENOTFOUND);
	CU_ASSERT_EQUAL(al_fs_write_atomic(big, "{\n\"a\":1,\n\"a\":1}", 15),
	                0);
	CU_ASSERT_EQUAL(al_json_load_file(&w, big, 1024), AL_EPARSE);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "big.json: line 3"));
	CU_ASSERT_PTR_NULL(al_json_dump(NULL, 0));
	al_buf_free(&b);
	json_decref(v);
	free(path);
	free(big);
}

static void test_json__only_members(void)
{
	static const char *const allowed[] = {"a", "b", NULL};
	json_t *v = NULL;

	CU_ASSERT_EQUAL(al_json_parse(&v, (const uint8_t *)"{\"a\":1}", 7, "t"),
	                0);
	/* a subset is enough unless every member is required */
	CU_ASSERT_EQUAL(al_json_only_members(v, "doc", "", allowed, 0), 0);
	CU_ASSERT_EQUAL(al_json_only_members(v, "doc", "x", allowed, 1),
	                AL_EPARSE);
	CU_ASSERT_STRING_EQUAL(al_error_message(), "doc: missing field 'x.b'");
	CU_ASSERT_EQUAL(json_object_set_new(v, "b", json_true()), 0);
	CU_ASSERT_EQUAL(al_json_only_members(v, "doc", "x", allowed, 1), 0);
	CU_ASSERT_EQUAL(json_object_set_new(v, "c", json_true()), 0);
	CU_ASSERT_EQUAL(al_json_only_members(v, "doc", "", allowed, 0),
	                AL_EPARSE);
	CU_ASSERT_STRING_EQUAL(al_error_message(), "doc: unknown field 'c'");
	json_decref(v);
}

int main(void)
{
	CU_TestInfo tests[] = {
	    {"test_json__parses_values", test_json__parses_values},
	    {"test_json__rejects_duplicate_keys_with_position",
	     test_json__rejects_duplicate_keys_with_position},
	    {"test_json__rejects_trailing_data",
	     test_json__rejects_trailing_data},
	    {"test_json__rejects_nul_bytes", test_json__rejects_nul_bytes},
	    {"test_json__error_positions", test_json__error_positions},
	    {"test_json__rejects_deep_nesting",
	     test_json__rejects_deep_nesting},
	    {"test_json__file_round_trip", test_json__file_round_trip},
	    {"test_json__only_members", test_json__only_members},
	    CU_TEST_INFO_NULL,
	};

	return al_test_run("json", tests);
}
