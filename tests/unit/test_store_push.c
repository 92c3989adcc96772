/* test_store_push.c: unit tests for the pushed-images record
 * (airlock/pushed.json, store_push.c): empty without a file, entries per
 * registry, set and drop in one update, ill-formed entries left out, a
 * file that is not a record refused. */
/* al-tier: quick */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/store.h"
#include "store_push_int.h"
#include "al_test.h"

#define D1                                                                     \
	"sha256:"                                                              \
	"1111111111111111111111111111111111111111111111111111111111111111"
#define D2                                                                     \
	"sha256:"                                                              \
	"2222222222222222222222222222222222222222222222222222222222222222"

static al_store *open_store(const char *name)
{
	al_store_opts o = {.create = 1};
	char *p = al_sprintf("%s/%s", al_test_tmpdir(), name);
	al_store *s = NULL;

	if (p == NULL)
		abort();
	CU_ASSERT_EQUAL(al_store_open(&s, p, &o), 0);
	free(p);
	return s;
}

static const char *entry(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static void test_store_push__empty_without_a_record(void)
{
	al_store *s = open_store("empty");
	json_t *got = NULL;

	if (s == NULL)
		return;
	CU_ASSERT_EQUAL(al_store__pushed_get(s, "reg:5000", &got), 0);
	CU_ASSERT_TRUE(json_is_object(got));
	CU_ASSERT_EQUAL(json_object_size(got), 0);
	json_decref(got);
	al_store_free(s);
}

static void test_store_push__set_drop_per_registry(void)
{
	al_store *s = open_store("setdrop");
	json_t *set = json_pack("{s:s, s:s}", "m/a:1", D1, "m/b:1", D2);
	json_t *set2 = json_pack("{s:s}", "m/c:1", D2);
	json_t *drop = json_pack("{s:b}", "m/a:1", 1);
	json_t *got = NULL;

	if (s == NULL || set == NULL || set2 == NULL || drop == NULL)
		goto out;
	CU_ASSERT_EQUAL(al_store__pushed_update(s, "reg:5000", set, NULL), 0);
	CU_ASSERT_EQUAL(al_store__pushed_update(s, "other", set, NULL), 0);
	/* a later push: m/a failed there, m/c is new, m/b stays */
	CU_ASSERT_EQUAL(al_store__pushed_update(s, "reg:5000", set2, drop), 0);
	CU_ASSERT_EQUAL(al_store__pushed_get(s, "reg:5000", &got), 0);
	CU_ASSERT_EQUAL(json_object_size(got), 2);
	CU_ASSERT_PTR_NULL(entry(got, "m/a:1"));
	CU_ASSERT_STRING_EQUAL(entry(got, "m/b:1"), D2);
	CU_ASSERT_STRING_EQUAL(entry(got, "m/c:1"), D2);
	json_decref(got);
	got = NULL;
	/* another registry keeps its own */
	CU_ASSERT_EQUAL(al_store__pushed_get(s, "other", &got), 0);
	CU_ASSERT_EQUAL(json_object_size(got), 2);
	CU_ASSERT_STRING_EQUAL(entry(got, "m/a:1"), D1);
out:
	json_decref(got);
	json_decref(set);
	json_decref(set2);
	json_decref(drop);
	al_store_free(s);
}

static void test_store_push__ill_formed_entries_left_out(void)
{
	al_store *s = open_store("illformed");
	json_t *got = NULL;

	if (s == NULL)
		return;
	CU_ASSERT_EQUAL(
	    al_test_sh("mkdir -p '%s/airlock' && printf '%%s' "
	               "'{\"registries\": {\"r\": {\"m/a:1\": 5, \"m/b:1\": "
	               "\"%s\"}}}' >'%s/airlock/pushed.json'",
	               al_store_path(s), D1, al_store_path(s)),
	    0);
	CU_ASSERT_EQUAL(al_store__pushed_get(s, "r", &got), 0);
	CU_ASSERT_EQUAL(json_object_size(got), 1);
	CU_ASSERT_STRING_EQUAL(entry(got, "m/b:1"), D1);
	json_decref(got);
	al_store_free(s);
}

static void test_store_push__not_a_record_is_eparse(void)
{
	al_store *s = open_store("notrecord");
	json_t *got = NULL, *set = json_pack("{s:s}", "m/a:1", D1);

	if (s == NULL || set == NULL)
		goto out;
	CU_ASSERT_EQUAL(al_test_sh("mkdir -p '%s/airlock' && printf '[1]' "
	                           ">'%s/airlock/pushed.json'",
	                           al_store_path(s), al_store_path(s)),
	                0);
	CU_ASSERT_EQUAL(al_store__pushed_get(s, "r", &got), AL_EPARSE);
	/* never overwritten by an update either */
	CU_ASSERT_EQUAL(al_store__pushed_update(s, "r", set, NULL), AL_EPARSE);
	CU_ASSERT_EQUAL(
	    al_test_sh("grep -qx '\\[1\\]' '%s/airlock/pushed.json'",
	               al_store_path(s)),
	    0);
out:
	json_decref(got);
	json_decref(set);
	al_store_free(s);
}

int main(void)
{
	CU_TestInfo tests[] = {
	    {"test_store_push__empty_without_a_record",
	     test_store_push__empty_without_a_record},
	    {"test_store_push__set_drop_per_registry",
	     test_store_push__set_drop_per_registry},
	    {"test_store_push__ill_formed_entries_left_out",
	     test_store_push__ill_formed_entries_left_out},
	    {"test_store_push__not_a_record_is_eparse",
	     test_store_push__not_a_record_is_eparse},
	    CU_TEST_INFO_NULL,
	};
	return al_test_run("store_push", tests);
}
