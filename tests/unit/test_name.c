/* test_name.c: the checks on names from fetched content (src/registry/name.c) and a
 * property test feeding hostile names through every line writer and parser
 * entry point: no output gains a line, no name that could leave a directory
 * survives. */
/* al-tier: quick */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "airlock/buf.h"
#include "airlock/catalog.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/helm.h"
#include "airlock/mirror.h"
#include "airlock/mirror_plan.h"
#include "mirror_failed.h"
#include "name_int.h"
#include "al_test.h"

#define ROUNDS 400

static const char *const pieces[] = {
    "\n",
    "\r",
    "\x1b[31m",
    "\x01",
    "\x7f",
    "=",
    " ",
    "\t",
    "..",
    "/",
    "\\",
    "a",
    "1.0.0",
    "quay.io/attacker/evil:1",
    "MIRROR/x:4.14.1",
    ".",
};
#define NPIECES (sizeof(pieces) / sizeof(pieces[0]))

static unsigned rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return (*s >> 16) & 0x7fff;
}

/* A name of 1..6 pieces, sometimes very long. */
static void hostile(char *out, size_t cap, unsigned *s)
{
	size_t k = 1 + rnd(s) % 6, i;

	out[0] = '\0';
	for (i = 0; i < k; i++)
		strncat(out, pieces[rnd(s) % NPIECES], cap - strlen(out) - 1);
	if (rnd(s) % 10 == 0)
		while (strlen(out) + 1 < cap)
			strncat(out, "a", cap - strlen(out) - 1);
}

static int has_control(const char *s, size_t n, int allow_tab)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '\n' || (allow_tab && c == '\t'))
			continue;
		if (c < 0x20 || c == 0x7f)
			return 1;
	}
	return 0;
}

static size_t count_lines(const al_buf *b)
{
	size_t i, n = 0;

	for (i = 0; i < b->len; i++)
		n += b->ptr[i] == '\n';
	return n;
}

static void test_name__kinds(void)
{
	CU_ASSERT_TRUE(al_name_ok("demo", 4, AL_NAME_COMPONENT, 0));
	CU_ASSERT_FALSE(al_name_ok("..", 2, AL_NAME_COMPONENT, 0));
	CU_ASSERT_FALSE(al_name_ok(".", 1, AL_NAME_COMPONENT, 0));
	CU_ASSERT_FALSE(al_name_ok("../../evil", 10, AL_NAME_COMPONENT, 0));
	CU_ASSERT_FALSE(al_name_ok("a\\b", 3, AL_NAME_COMPONENT, 0));
	CU_ASSERT_TRUE(al_name_ok("a..b", 4, AL_NAME_COMPONENT, 0));
	CU_ASSERT_FALSE(al_name_ok("e\nsc", 4, AL_NAME_TEXT, 0));
	CU_ASSERT_FALSE(al_name_ok("x\x1b[", 3, AL_NAME_TEXT, 0));
	CU_ASSERT_FALSE(al_name_ok("", 0, AL_NAME_TEXT, 0));
	CU_ASSERT_FALSE(al_name_ok("a\0b", 3, AL_NAME_TEXT, 0));
	CU_ASSERT_TRUE(al_name_ok("a b", 3, AL_NAME_TEXT, 0));
	CU_ASSERT_FALSE(al_name_ok("a b", 3, AL_NAME_FIELD, 0));
	CU_ASSERT_FALSE(al_name_ok("a=b", 3, AL_NAME_FIELD, 0));
	CU_ASSERT_TRUE(al_name_ok("quay.io/a/b:1", 13, AL_NAME_FIELD, 0));
	CU_ASSERT_TRUE(al_name_ok("v1.2_3-x", 8, AL_NAME_TAG, 0));
	CU_ASSERT_FALSE(al_name_ok(".v1", 3, AL_NAME_TAG, 0));
	CU_ASSERT_FALSE(al_name_ok("a/b", 3, AL_NAME_TAG, 0));
	CU_ASSERT_FALSE(al_name_ok("abcd", 4, AL_NAME_TEXT, 3));
	CU_ASSERT_EQUAL(al_name_check("chart name", "a\nb", AL_NAME_TEXT, 0),
	                AL_EPARSE);
	/* the message never carries the raw byte */
	CU_ASSERT_PTR_NULL(strchr(al_error_message(), '\n'));
}

/* mapping.txt and missing.txt: one line per entry whatever the names. */
static void test_name__plan_lines_hold(void)
{
	unsigned seed = al_test_seed();
	const char *dir = al_test_tmpdir();
	char name[300], src[400], *path = NULL;
	al_buf b = AL_BUF_INIT(1 << 20);
	al_plan *p = NULL;
	int r, written = 0;

	for (r = 0; r < ROUNDS; r++) {
		al_buf_free(&b);
		b = (al_buf)AL_BUF_INIT(1 << 20);
		CU_ASSERT_EQUAL_FATAL(al_plan_new(&p), 0);
		hostile(name, sizeof(name), &seed);
		snprintf(src, sizeof(src), "quay.io/a/b:%s", name);
		CU_ASSERT_EQUAL(al_plan_add_failed(p, "image", "quay.io/ok:1",
		                                   "", AL_ENET, "x"),
		                0);
		CU_ASSERT_EQUAL(
		    al_plan_add_failed(p, "chart", src, name, AL_ENET, name),
		    0);
		if (al_plan_write(p, dir) == 0) {
			written++;
			free(path);
			path = al_path_join(dir, "mapping.txt");
			CU_ASSERT_EQUAL(al_fs_read_file(path, &b), 0);
			/* the entry without a destination is not mapped */
			CU_ASSERT_EQUAL(count_lines(&b), 1);
			CU_ASSERT_PTR_NULL(
			    strstr(al_buf_cstr(&b), "quay.io/ok:1="));
			al_buf_free(&b);
			b = (al_buf)AL_BUF_INIT(1 << 20);
			free(path);
			path = al_path_join(dir, "missing.txt");
			CU_ASSERT_EQUAL(al_fs_read_file(path, &b), 0);
			CU_ASSERT_EQUAL(count_lines(&b), 2);
			CU_ASSERT_FALSE(
			    has_control((const char *)b.ptr, b.len, 0));
		}
		al_plan_free(p);
		p = NULL;
	}
	CU_ASSERT(written > 0); /* some names are harmless */
	free(path);
	al_buf_free(&b);
}

/* The failed-image list: what reads back is at most what went in, every
 * line of the file free of control bytes but TAB. */
static void test_name__failed_list_lines_hold(void)
{
	unsigned seed = al_test_seed() + 1;
	const char *dir = al_test_tmpdir();
	char name[300], src[400], *path = NULL, *store;
	al_buf b = AL_BUF_INIT(1 << 20);
	al_mirror_failure *v = NULL;
	size_t n = 0;
	int r;

	store = al_path_join(dir, "fstore");
	CU_ASSERT_PTR_NOT_NULL_FATAL(store);
	for (r = 0; r < ROUNDS / 4; r++) {
		al_mirror_result res = AL_MIRROR_RESULT_INIT;

		hostile(name, sizeof(name), &seed);
		snprintf(src, sizeof(src), "quay.io/a/b:%s", name);
		CU_ASSERT_EQUAL(al_mirror__report_failed(&res.report,
		                                         "chart-image", src,
		                                         NULL, AL_ENET, name),
		                0);
		CU_ASSERT_EQUAL(al_mirror_failed_write(&res, store, &path), 0);
		al_buf_free(&b);
		b = (al_buf)AL_BUF_INIT(1 << 20);
		if (path != NULL) {
			CU_ASSERT_EQUAL(al_fs_read_file(path, &b), 0);
			CU_ASSERT_FALSE(
			    has_control((const char *)b.ptr, b.len, 1));
			CU_ASSERT_EQUAL(al_mirror_failed_load(&v, &n, path), 0);
			CU_ASSERT(n <= 1);
			if (n == 1)
				CU_ASSERT_STRING_EQUAL(v[0].source, src);
			al_mirror_failures_free(v, n);
			v = NULL;
			(void)al_mirror_failed_retire(store, path);
			free(path);
			path = NULL;
		}
		al_mirror_result_clear(&res);
	}
	al_buf_free(&b);
	free(store);
}

static void json_str(al_buf *b, const char *s)
{
	size_t i;

	(void)al_buf_puts(b, "\"");
	for (i = 0; s[i] != '\0'; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c == 0x7f || c == '"' || c == '\\')
			(void)al_buf_printf(b, "\\u%04x", c);
		else
			(void)al_buf_append(b, s + i, 1);
	}
	(void)al_buf_puts(b, "\"");
}

/* A Helm index: every entry that survives is a path component and a
 * version that is one field of a line. */
static void test_name__helm_index_keeps_only_names(void)
{
	unsigned seed = al_test_seed() + 2;
	char name[300], ver[300];
	int r;

	for (r = 0; r < ROUNDS; r++) {
		al_buf b = AL_BUF_INIT(1 << 20);
		al_helm_index ix;
		size_t i;

		hostile(name, sizeof(name), &seed);
		hostile(ver, sizeof(ver), &seed);
		if (rnd(&seed) % 3 == 0)
			snprintf(ver, sizeof(ver), "1.0.%u", rnd(&seed) % 9);
		(void)al_buf_puts(&b,
		                  "{\"apiVersion\": \"v1\", \"entries\": {");
		json_str(&b, name);
		(void)al_buf_puts(&b, ": [{\"version\": ");
		json_str(&b, ver);
		(void)al_buf_puts(&b,
		                  "}], \"ok\": [{\"version\": \"1.0.0\"}]}}");
		CU_ASSERT_EQUAL(al_helm_index_parse(&ix, b.ptr, b.len, "ix"),
		                0);
		CU_ASSERT(ix.n >= 1);
		for (i = 0; i < ix.n; i++) {
			CU_ASSERT_TRUE(al_name_ok(ix.entries[i].name,
			                          strlen(ix.entries[i].name),
			                          AL_NAME_COMPONENT, 0));
			CU_ASSERT_TRUE(al_name_ok(ix.entries[i].version,
			                          strlen(ix.entries[i].version),
			                          AL_NAME_FIELD, 0));
		}
		al_helm_index_clear(&ix);
		al_buf_free(&b);
	}
}

/* One package, channel and bundle named pkg, ch and bundle: 0 when the
 * catalog takes it, else the error. */
static int parse_catalog(const char *pkg, const char *ch, const char *bundle)
{
	al_catalog *c = NULL;
	json_t *o[3];
	al_buf doc = AL_BUF_INIT(1 << 16);
	size_t i;
	int rc;

	o[0] = json_pack("{s:s, s:s, s:s}", "schema", "olm.package", "name", pkg, "defaultChannel", ch);
	o[1] = json_pack("{s:s, s:s, s:s, s:[{s:s}]}", "schema", "olm.channel", "package", pkg, "name", ch,
	                 "entries", "name", bundle);
	o[2] = json_pack("{s:s, s:s, s:s, s:s, s:[{s:s, s:{s:s, s:s}}]}", "schema", "olm.bundle", "package", pkg,
	                 "name", bundle, "image",
	                 "quay.io/x/b@sha256:0000000000000000000000000000000000000000000000000000000000000000",
	                 "properties", "type", "olm.package", "value", "packageName", pkg, "version", "1.0.0");
	for (i = 0; i < 3; i++) {
		char *t = o[i] != NULL ? json_dumps(o[i], JSON_COMPACT) : NULL;
		if (t != NULL)
			(void)al_buf_printf(&doc, "%s\n", t);
		free(t);
		json_decref(o[i]);
	}
	rc = al_catalog_new(&c);
	if (rc == 0)
		rc = al_catalog_add_file(c, "test", doc.ptr, doc.len);
	if (rc == 0)
		rc = al_catalog_finish(c);
	al_catalog_free(c);
	al_buf_free(&doc);
	return rc;
}

/* FBC names are checked where the catalog is read: a package name is one
 * path component, channel and bundle names one field of a line. */
static void test_name__catalog_names_checked(void)
{
	CU_ASSERT_EQUAL(parse_catalog("etcd", "stable", "etcd.v1.0.0"), 0);
	CU_ASSERT_EQUAL(parse_catalog("../../evil", "stable", "e.v1"), AL_EPARSE);
	CU_ASSERT_EQUAL(parse_catalog("a\\b", "stable", "e.v1"), AL_EPARSE);
	CU_ASSERT_EQUAL(parse_catalog("e\x1b[31m", "stable", "e.v1"), AL_EPARSE);
	CU_ASSERT_EQUAL(parse_catalog("etcd", "stable\nquay.io/evil:1=MIRROR/x:1", "e.v1"), AL_EPARSE);
	CU_ASSERT_EQUAL(parse_catalog("etcd", "stable v1", "e.v1"), AL_EPARSE);
	CU_ASSERT_EQUAL(parse_catalog("etcd", "stable", "e=v1"), AL_EPARSE);
	CU_ASSERT_EQUAL(parse_catalog("etcd", "stable", "e\tv1"), AL_EPARSE);
	CU_ASSERT_EQUAL(parse_catalog("etcd", "stable", "e.v1\r"), AL_EPARSE);
	/* the refusal names the object without the raw byte */
	CU_ASSERT_EQUAL(parse_catalog("etcd", "stable", "e.v1\nx"), AL_EPARSE);
	CU_ASSERT_PTR_NULL(strchr(al_error_message(), '\n'));
	al_error_clear();
}

int main(void)
{
	CU_TestInfo tests[] = {
	    {"test_name__kinds", test_name__kinds},
	    {"test_name__plan_lines_hold", test_name__plan_lines_hold},
	    {"test_name__failed_list_lines_hold",
	     test_name__failed_list_lines_hold},
	    {"test_name__helm_index_keeps_only_names",
	     test_name__helm_index_keeps_only_names},
	    {"test_name__catalog_names_checked",
	     test_name__catalog_names_checked},
	    CU_TEST_INFO_NULL,
	};
	return al_test_run("name", tests);
}
