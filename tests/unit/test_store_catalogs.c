/* test_store_catalogs.c: unit tests for the typed operator catalog records (airlock/releases.json "catalogs"), their merge on import, and pack records naming sha256 blobs by bare hex. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"
#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "json_int.h"
#include "airlock/store.h"
#include "al_test.h"

#define D1 "sha256:1111111111111111111111111111111111111111111111111111111111111111"
#define D2 "sha256:2222222222222222222222222222222222222222222222222222222222222222"
#define D3 "sha256:3333333333333333333333333333333333333333333333333333333333333333"

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

static void fill(al_store_catalog *c, const char *name, const char *digest,
                 char **images, size_t n)
{
	memset(c, 0, sizeof(*c));
	c->name = (char *)name;
	CU_ASSERT_EQUAL(al_digest_parse_str(&c->digest, digest), 0);
	c->has_digest = 1;
	c->source = (char *)"docker://quay.io/example/catalog:v1";
	c->source_name = (char *)"quay.io/example/catalog:v1";
	CU_ASSERT_EQUAL(al_digest_parse_str(&c->source_digest, D3), 0);
	c->has_source_digest = 1;
	c->target_repo = (char *)"example/catalog";
	c->target_tag = (char *)"v1-filtered";
	c->packages = 2;
	c->bundles = 3;
	c->images = images;
	c->nimages = n;
}

static void test_store_catalogs__put_list_replace(void)
{
	al_store *s = open_store("put");
	char i1[] = "quay.io/example/a@" D1, i2[] = "quay.io/example/b@" D2;
	char *imgs[] = {i1, i2};
	al_store_catalog c, *list = NULL;
	al_store_release *rels = NULL;
	size_t n = 0, nr = 0;

	if (s == NULL)
		return;
	/* none recorded: an empty list, not an error */
	CU_ASSERT_EQUAL(al_store_catalogs_list(s, &list, &n), 0);
	CU_ASSERT_EQUAL(n, 0);
	al_store_catalogs_free(list, n);
	fill(&c, "quay.io/example/catalog:v1-filtered", D1, imgs, 2);
	CU_ASSERT_EQUAL(al_store_catalog_put(s, &c), 0);
	fill(&c, "quay.io/mirror/big:v1", D2, imgs, 1);
	CU_ASSERT_EQUAL(al_store_catalog_put(s, &c), 0);
	/* the same name again replaces its record */
	fill(&c, "quay.io/example/catalog:v1-filtered", D2, imgs, 1);
	c.bundles = 4;
	CU_ASSERT_EQUAL(al_store_catalog_put(s, &c), 0);
	CU_ASSERT_EQUAL(al_store_catalogs_list(s, &list, &n), 0);
	CU_ASSERT_EQUAL(n, 2);
	if (n == 2) {
		char ds[AL_DIGEST_STRMAX];

		CU_ASSERT_STRING_EQUAL(list[0].name,
		                       "quay.io/example/catalog:v1-filtered");
		CU_ASSERT_STRING_EQUAL(al_digest_str(&list[0].digest, ds), D2);
		CU_ASSERT_EQUAL(list[0].bundles, 4);
		CU_ASSERT_EQUAL(list[0].packages, 2);
		CU_ASSERT_EQUAL(list[0].nimages, 1);
		CU_ASSERT_TRUE(list[0].has_source_digest);
		CU_ASSERT_STRING_EQUAL(list[0].target_tag, "v1-filtered");
		CU_ASSERT_STRING_EQUAL(list[1].name, "quay.io/mirror/big:v1");
	}
	al_store_catalogs_free(list, n);
	/* the releases are untouched (and still parse) */
	CU_ASSERT_EQUAL(al_store_releases_list(s, &rels, &nr), 0);
	CU_ASSERT_EQUAL(nr, 0);
	al_store_releases_free(rels, nr);
	/* a record needs a name and a digest */
	fill(&c, "x", D1, NULL, 0);
	c.has_digest = 0;
	CU_ASSERT_EQUAL(al_store_catalog_put(s, &c), AL_EINVAL);
	al_store_free(s);
}

static void test_store_catalogs__import_merges_by_name(void)
{
	al_store *s = open_store("import");
	char i1[] = "quay.io/example/a@" D1;
	char *imgs[] = {i1};
	al_store_catalog c, *list = NULL;
	json_t *other = NULL;
	size_t n = 0;

	if (s == NULL)
		return;
	fill(&c, "quay.io/example/catalog:v1-filtered", D1, imgs, 1);
	CU_ASSERT_EQUAL(al_store_catalog_put(s, &c), 0);
	/* a pack's releases.json: one record of the same name (newer),
	 * one new */
	CU_ASSERT_EQUAL(
	    al_json_parse(&other,
	                  (const uint8_t *)"{\"releases\":[],\"catalogs\":["
	                                   "{\"name\":\"quay.io/example/catalog:v1-filtered\",\"digest\":\"" D2 "\"},"
	                                   "{\"name\":\"quay.io/example/catalog:v2-filtered\",\"digest\":\"" D3 "\",\"images\":[\"quay.io/example/a@" D1 "\"]}]}",
	                  strlen("{\"releases\":[],\"catalogs\":["
	                         "{\"name\":\"quay.io/example/catalog:v1-filtered\",\"digest\":\"" D2 "\"},"
	                         "{\"name\":\"quay.io/example/catalog:v2-filtered\",\"digest\":\"" D3 "\",\"images\":[\"quay.io/example/a@" D1 "\"]}]}"),
	                  "pack"),
	    0);
	CU_ASSERT_EQUAL(al_store__releases_import(s, other, "pack 'p'"), 0);
	CU_ASSERT_EQUAL(al_store_catalogs_list(s, &list, &n), 0);
	CU_ASSERT_EQUAL(n, 2);
	if (n == 2) {
		char ds[AL_DIGEST_STRMAX];

		CU_ASSERT_STRING_EQUAL(al_digest_str(&list[0].digest, ds), D2);
		CU_ASSERT_STRING_EQUAL(list[1].name,
		                       "quay.io/example/catalog:v2-filtered");
		CU_ASSERT_EQUAL(list[1].nimages, 1);
		CU_ASSERT_EQUAL(list[1].packages, -1);
	}
	al_store_catalogs_free(list, n);
	json_decref(other);
	/* ill-typed catalogs in a pack are refused */
	CU_ASSERT_EQUAL(al_json_parse(&other,
	                              (const uint8_t *)"{\"releases\":[],\"catalogs\":{}}",
	                              strlen("{\"releases\":[],\"catalogs\":{}}"),
	                              "pack"),
	                0);
	CU_ASSERT_EQUAL(al_store__releases_import(s, other, "pack 'q'"),
	                AL_EPARSE);
	json_decref(other);
	al_store_free(s);
}

static void test_store_catalogs__damaged_catalogs_refused(void)
{
	al_store *s = open_store("damaged");
	al_store_catalog *list = NULL;
	size_t n = 0;
	char *p;

	if (s == NULL)
		return;
	p = al_sprintf("%s/airlock/releases.json", al_store_path(s));
	CU_ASSERT_EQUAL(al_fs_mkdir_p(al_store_path(s), 0755), 0);
	CU_ASSERT_EQUAL(al_test_sh("mkdir -p '%s/airlock' && printf '%%s' "
	                           "'{\"releases\":[],\"catalogs\":[1]}' > '%s'",
	                           al_store_path(s), p),
	                0);
	CU_ASSERT_EQUAL(al_store_catalogs_list(s, &list, &n), AL_EPARSE);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "catalogs[0]"));
	free(p);
	al_store_free(s);
}

/* pack records name sha256 blobs by bare hex (pack_write.c): a pack that
 * carried a catalog's manifest carries it */
static void test_store_catalogs__pack_carries_bare_hex(void)
{
	al_store_pack p;
	char b1[] = "1111111111111111111111111111111111111111111111111111111111111111";
	char *blobs[] = {b1};
	al_digest d, other;

	memset(&p, 0, sizeof(p));
	p.blobs = blobs;
	p.nblobs = 1;
	CU_ASSERT_EQUAL(al_digest_parse_str(&d, D1), 0);
	CU_ASSERT_EQUAL(al_digest_parse_str(&other, D2), 0);
	CU_ASSERT_EQUAL(al_store_pack_carries(&p, &d), 1);
	CU_ASSERT_EQUAL(al_store_pack_carries(&p, &other), 0);
}

/* Parse the JSON text t into *out (a pack's releases.json). */
static void parse(json_t **out, const char *t)
{
	CU_ASSERT_EQUAL(al_json_parse(out, (const uint8_t *)t, strlen(t), "pack"),
	                0);
}

/* How many marks of kind al_store_untrusted_list gives, -1 on error. */
static long count_marks(al_store *s, int kind, const char *name)
{
	al_store_untrusted *v = NULL;
	size_t n = 0, i;
	long c = 0;

	if (al_store_untrusted_list(s, &v, &n) < 0)
		return -1;
	for (i = 0; i < n; i++)
		if (v[i].kind == kind && strcmp(v[i].name, name) == 0)
			c++;
	al_store_untrusted_free(v, n);
	return c;
}

/* docs/security.md "Marks of untrusted imports": catalog and chart records
 * an untrusted import writes are marked by name and content in a marks
 * file written before catalogs and charts were marked (kept readable), a
 * record the store holds as it is is not, and a trusted import's record
 * of the name clears the mark. */
static void test_store_catalogs__untrusted_records_marked(void)
{
	al_store *s = open_store("untrusted");
	json_t *forged = NULL, *genuine = NULL, *doc = NULL;
	al_buf b = AL_BUF_INIT(1 << 20);
	char *p;

	if (s == NULL)
		return;
	p = al_sprintf("%s/airlock/untrusted.json", al_store_path(s));
	CU_ASSERT_EQUAL(al_fs_mkdir_p(al_store_path(s), 0755), 0);
	/* an older marks file: no "catalogs", no "charts" */
	CU_ASSERT_EQUAL(
	    al_test_sh("mkdir -p '%s/airlock' && printf '%%s' "
	               "'{\"airlockUntrusted\":1,\"signatures\":[],\"tags\":"
	               "[{\"name\":\"quay.io/x/y:1\",\"digest\":\"" D1
	               "\",\"pack\":\"old\"}],\"releases\":[]}' > '%s'",
	               al_store_path(s), p),
	    0);
	parse(&genuine, "{\"releases\":[],\"catalogs\":[{\"name\":\"cat:v1\","
	                "\"digest\":\"" D1 "\"}],\"charts\":[{\"name\":"
	                "\"charts/a:1\",\"digest\":\"" D2 "\"}]}");
	parse(&forged, "{\"releases\":[],\"catalogs\":[{\"name\":\"cat:v1\","
	               "\"digest\":\"" D1 "\"},{\"name\":\"cat:evil\","
	               "\"digest\":\"" D3 "\"}],\"charts\":[{\"name\":"
	               "\"charts/a:1\",\"digest\":\"" D3 "\"}]}");
	/* the genuine records first, then the forged import */
	CU_ASSERT_EQUAL(al_store__releases_import(s, genuine, "pack 'g'"), 0);
	CU_ASSERT_EQUAL(al_store__untrusted_records_mark(s, forged, "f"), 0);
	CU_ASSERT_EQUAL(al_store__releases_import(s, forged, "pack 'f'"), 0);
	/* cat:v1 is the store's own record, as it is: not marked */
	CU_ASSERT_EQUAL(count_marks(s, AL_STORE_UNTRUSTED_CATALOG, "cat:v1"), 0);
	CU_ASSERT_EQUAL(count_marks(s, AL_STORE_UNTRUSTED_CATALOG, "cat:evil"),
	                1);
	CU_ASSERT_EQUAL(count_marks(s, AL_STORE_UNTRUSTED_CHART, "charts/a:1"),
	                1);
	/* the older file's mark is kept as it was */
	CU_ASSERT_EQUAL(al_fs_read_file(p, &b), 0);
	CU_ASSERT_EQUAL(al_json_parse(&doc, b.ptr, b.len, p), 0);
	CU_ASSERT_EQUAL(json_array_size(json_object_get(doc, "tags")), 1);
	CU_ASSERT_EQUAL(json_array_size(json_object_get(doc, "catalogs")), 1);
	json_decref(doc);
	/* a trusted import of the genuine records replaces the chart and
	 * clears its mark; the forger's own catalog stays marked */
	CU_ASSERT_EQUAL(al_store__releases_import(s, genuine, "pack 'g'"), 0);
	CU_ASSERT_EQUAL(al_store__untrusted_records_vouch(s, genuine), 0);
	CU_ASSERT_EQUAL(count_marks(s, AL_STORE_UNTRUSTED_CHART, "charts/a:1"),
	                0);
	CU_ASSERT_EQUAL(count_marks(s, AL_STORE_UNTRUSTED_CATALOG, "cat:evil"),
	                1);
	/* a record of that name written since by anyone else: no longer
	 * marked, though its mark is still in the file */
	json_decref(forged);
	parse(&forged, "{\"releases\":[],\"catalogs\":[{\"name\":\"cat:evil\","
	               "\"digest\":\"" D1 "\"}]}");
	CU_ASSERT_EQUAL(al_store__releases_import(s, forged, "pack 'm'"), 0);
	CU_ASSERT_EQUAL(count_marks(s, AL_STORE_UNTRUSTED_CATALOG, "cat:evil"),
	                0);
	al_buf_free(&b);
	json_decref(forged);
	json_decref(genuine);
	free(p);
	al_store_free(s);
}

int main(void)
{
	CU_TestInfo tests[] = {
		{"put_list_replace", test_store_catalogs__put_list_replace},
		{"import_merges_by_name", test_store_catalogs__import_merges_by_name},
		{"damaged_catalogs_refused", test_store_catalogs__damaged_catalogs_refused},
		{"pack_carries_bare_hex", test_store_catalogs__pack_carries_bare_hex},
		{"untrusted_records_marked", test_store_catalogs__untrusted_records_marked},
		CU_TEST_INFO_NULL,
	};

	return al_test_run("store_catalogs", tests);
}
