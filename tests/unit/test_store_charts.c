/* test_store_charts.c: unit tests for the typed Helm chart records
 * (airlock/releases.json "charts"): put, replace by name, images sorted
 * and deduplicated, the catalogs kept beside them, the merge on import,
 * the inventory entries and refusals of ill-typed records. */
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

static void fill(al_store_chart *c, const char *name, const char *digest,
                 char **images, size_t n)
{
	memset(c, 0, sizeof(*c));
	c->name = (char *)name;
	CU_ASSERT_EQUAL(al_digest_parse_str(&c->digest, digest), 0);
	c->has_digest = 1;
	c->chart = (char *)"podinfo";
	c->version = (char *)"5.0.0";
	c->app_version = (char *)"5.0.0";
	c->source = (char *)"/site/charts/podinfo";
	c->unresolved = 1;
	c->images = images;
	c->nimages = n;
}

static int parse(json_t **out, const char *text)
{
	return al_json_parse(out, (const uint8_t *)text, strlen(text), "pack");
}

static void test_put_list_replace(void)
{
	al_store *s = open_store("put");
	char i1[] = "docker.io/library/redis:6.0.1",
	     i2[] = "ghcr.io/stefanprodan/podinfo:5.0.0";
	/* unsorted, one twice */
	char *imgs[] = {i2, i1, i2};
	al_store_chart c, *list = NULL;
	al_store_catalog cat, *cats = NULL;
	size_t n = 0, nc = 0;

	if (s == NULL)
		return;
	CU_ASSERT_EQUAL(al_store_charts_list(s, &list, &n), 0);
	CU_ASSERT_EQUAL(n, 0);
	al_store_charts_free(list, n);
	/* a catalog record beside: kept */
	memset(&cat, 0, sizeof(cat));
	cat.name = (char *)"quay.io/example/catalog:v1";
	CU_ASSERT_EQUAL(al_digest_parse_str(&cat.digest, D2), 0);
	cat.has_digest = 1;
	cat.packages = cat.bundles = -1;
	CU_ASSERT_EQUAL(al_store_catalog_put(s, &cat), 0);
	fill(&c, "charts/podinfo:5.0.0", D1, imgs, 3);
	CU_ASSERT_EQUAL(al_store_chart_put(s, &c), 0);
	fill(&c, "charts/demo:0.2.0", D2, NULL, 0);
	c.chart = (char *)"demo";
	c.version = (char *)"0.2.0";
	c.app_version = NULL;
	c.unresolved = -1;
	CU_ASSERT_EQUAL(al_store_chart_put(s, &c), 0);
	/* the same name again replaces its record */
	fill(&c, "charts/podinfo:5.0.0", D2, imgs, 2);
	c.unresolved = 0;
	CU_ASSERT_EQUAL(al_store_chart_put(s, &c), 0);
	CU_ASSERT_EQUAL(al_store_charts_list(s, &list, &n), 0);
	CU_ASSERT_EQUAL(n, 2);
	if (n == 2) {
		char ds[AL_DIGEST_STRMAX];

		CU_ASSERT_STRING_EQUAL(list[0].name, "charts/podinfo:5.0.0");
		CU_ASSERT_STRING_EQUAL(al_digest_str(&list[0].digest, ds), D2);
		CU_ASSERT_EQUAL(list[0].unresolved, 0);
		CU_ASSERT_STRING_EQUAL(list[0].source, "/site/charts/podinfo");
		CU_ASSERT_EQUAL(list[0].nimages, 2);
		if (list[0].nimages == 2) {
			CU_ASSERT_STRING_EQUAL(list[0].images[0], i1);
			CU_ASSERT_STRING_EQUAL(list[0].images[1], i2);
		}
		CU_ASSERT_STRING_EQUAL(list[1].chart, "demo");
		CU_ASSERT_PTR_NULL(list[1].app_version);
		CU_ASSERT_EQUAL(list[1].unresolved, -1);
		CU_ASSERT_EQUAL(list[1].nimages, 0);
	}
	al_store_charts_free(list, n);
	/* deduplicated on the way in: the first record had 3 entries */
	fill(&c, "charts/podinfo:5.0.0", D1, imgs, 3);
	CU_ASSERT_EQUAL(al_store_chart_put(s, &c), 0);
	CU_ASSERT_EQUAL(al_store_charts_list(s, &list, &n), 0);
	CU_ASSERT_EQUAL(n > 0 ? list[0].nimages : 0, 2);
	al_store_charts_free(list, n);
	CU_ASSERT_EQUAL(al_store_catalogs_list(s, &cats, &nc), 0);
	CU_ASSERT_EQUAL(nc, 1);
	al_store_catalogs_free(cats, nc);
	fill(&c, "x", D1, NULL, 0);
	c.has_digest = 0;
	CU_ASSERT_EQUAL(al_store_chart_put(s, &c), AL_EINVAL);
	al_store_free(s);
}

static void test_import_and_inventory(void)
{
	al_store *s = open_store("import");
	al_store_chart c, *list = NULL;
	json_t *other = NULL, *inv = json_object();
	size_t n = 0;

	if (s == NULL || inv == NULL)
		return;
	fill(&c, "charts/podinfo:5.0.0", D1, NULL, 0);
	CU_ASSERT_EQUAL(al_store_chart_put(s, &c), 0);
	CU_ASSERT_EQUAL(
	    parse(&other, "{\"releases\":[],\"charts\":["
	                  "{\"name\":\"charts/podinfo:5.0.0\",\"digest\":\"" D2
	                  "\",\"chart\":\"podinfo\",\"version\":\"5.0.0\"},"
	                  "{\"name\":\"charts/demo:0.2.0\",\"digest\":\"" D1
	                  "\",\"chart\":\"demo\",\"version\":\"0.2.0\","
	                  "\"images\":[\"a:1\"]}]}"),
	    0);
	CU_ASSERT_EQUAL(al_store__releases_import(s, other, "pack 'p'"), 0);
	json_decref(other);
	CU_ASSERT_EQUAL(al_store_charts_list(s, &list, &n), 0);
	CU_ASSERT_EQUAL(n, 2);
	if (n == 2) {
		char ds[AL_DIGEST_STRMAX];

		/* the pack's record of a name is the newer one */
		CU_ASSERT_STRING_EQUAL(al_digest_str(&list[0].digest, ds), D2);
		CU_ASSERT_PTR_NULL(list[0].source);
		CU_ASSERT_STRING_EQUAL(list[1].name, "charts/demo:0.2.0");
		CU_ASSERT_EQUAL(list[1].nimages, 1);
	}
	al_store_charts_free(list, n);
	CU_ASSERT_EQUAL(
	    al_store__records_inventory(s, &al_store__chart_kind, inv), 0);
	{
		char *txt = json_dumps(inv, JSON_COMPACT);

		CU_ASSERT_STRING_EQUAL(
		    txt ? txt : "",
		    "{\"charts\":[{\"name\":\"charts/podinfo:5.0.0\","
		    "\"digest\":\"" D2 "\",\"chart\":\"podinfo\","
		    "\"version\":\"5.0.0\"},{\"name\":\"charts/demo:0.2.0\","
		    "\"digest\":\"" D1 "\",\"chart\":\"demo\","
		    "\"version\":\"0.2.0\"}]}");
		free(txt);
	}
	json_decref(inv);
	/* ill-typed charts in a pack are refused */
	CU_ASSERT_EQUAL(parse(&other, "{\"releases\":[],\"charts\":{}}"), 0);
	CU_ASSERT_EQUAL(al_store__releases_import(s, other, "pack 'q'"),
	                AL_EPARSE);
	json_decref(other);
	CU_ASSERT_EQUAL(parse(&other, "{\"releases\":[],\"charts\":[{}]}"), 0);
	CU_ASSERT_EQUAL(al_store__releases_import(s, other, "pack 'r'"),
	                AL_EPARSE);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "charts[0]"));
	json_decref(other);
	al_store_free(s);
}

static void test_damaged_refused(void)
{
	al_store *s = open_store("damaged");
	al_store_chart *list = NULL;
	size_t n = 0;

	if (s == NULL)
		return;
	CU_ASSERT_EQUAL(al_test_sh("mkdir -p '%s/airlock' && printf '%%s' "
	                           "'{\"releases\":[],\"charts\":[1]}' > "
	                           "'%s/airlock/releases.json'",
	                           al_store_path(s), al_store_path(s)),
	                0);
	CU_ASSERT_EQUAL(al_store_charts_list(s, &list, &n), AL_EPARSE);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "charts[0]"));
	al_store_free(s);
}

int main(void)
{
	CU_TestInfo tests[] = {
	    {"put_list_replace", test_put_list_replace},
	    {"import_and_inventory", test_import_and_inventory},
	    {"damaged_refused", test_damaged_refused},
	    CU_TEST_INFO_NULL,
	};

	return al_test_run("store_charts", tests);
}
