/* test_mirror_failed.c: the failed-image list: what a run writes, what the parser takes back and what it refuses (FILE:LINE), including hostile bytes and the bounds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/mirror.h"
#include "mirror_failed.h"
#include "al_test.h"

#define H AL_MIRROR_FAILED_HEADER "\n"
#define D1 "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
#define REF1 "quay.io/a/b@" D1

static int parse(const char *text, al_mirror_failure **v, size_t *n)
{
	return al_mirror_failed_parse(v, n, "L", (const uint8_t *)text,
	                              strlen(text));
}

static void test_mirror_failed__parses_entries_and_skips_comments(void)
{
	al_mirror_failure *v = NULL;
	size_t n = 0;
	char ds[AL_DIGEST_STRMAX];

	CU_ASSERT_EQUAL(parse(H "# error: x\nrelease\tquay.io/r/rel:4.1\t" D1 "\n"
	                        "\n"
	                        "image\t" REF1 "\t-\n"
	                        "catalog-image\toci:/tmp/x:y\n"
	                        "image\t" REF1 "\t-\n"
	                        "chart-image\tdocker://quay.io/c/d:1",
	                      &v, &n),
	                0);
	CU_ASSERT_EQUAL(n, 4); /* the duplicate kept once */
	if (n == 4) {
		CU_ASSERT_STRING_EQUAL(v[0].kind, "release");
		CU_ASSERT_STRING_EQUAL(v[0].source, "quay.io/r/rel:4.1");
		CU_ASSERT(v[0].has_digest);
		CU_ASSERT_STRING_EQUAL(al_digest_str(&v[0].digest, ds), D1);
		CU_ASSERT_STRING_EQUAL(v[1].kind, "image");
		CU_ASSERT_FALSE(v[1].has_digest);
		CU_ASSERT_STRING_EQUAL(v[2].source, "oci:/tmp/x:y");
		CU_ASSERT_STRING_EQUAL(v[3].kind, "chart-image");
	}
	al_mirror_failures_free(v, n);
}

/* Each refusal names the list and the line. */
static void refused(const char *text, size_t len, int code, const char *want)
{
	al_mirror_failure *v = NULL;
	size_t n = 0;
	int rc = al_mirror_failed_parse(&v, &n, "L", (const uint8_t *)text, len);

	CU_ASSERT_EQUAL(rc, code);
	CU_ASSERT_PTR_NULL(v);
	if (strstr(al_error_message(), want) == NULL) {
		printf("\n  got '%s', wanted '%s'\n", al_error_message(), want);
		CU_FAIL("message");
	}
}

static void test_mirror_failed__refuses_with_file_and_line(void)
{
	static const char nul[] = H "image\tquay.io/a/b:1\0x\t-\n";

	refused("image\t" REF1 "\n", 19, AL_EPARSE, "L:1: not a failed-image list");
	refused("", 0, AL_EPARSE, "L:1: empty");
	refused(H "# nothing\n", strlen(H "# nothing\n"), AL_EPARSE,
	        "L: the list names no image");
	refused(H "image\t" REF1 "\n# \x1b[31m\n", strlen(H "image\t" REF1 "\n# \x1b[31m\n"),
	        AL_EPARSE, "L:3: control character 0x1b");
	refused(nul, sizeof(nul) - 1, AL_EPARSE, "L:2: control character 0x00");
	refused(H "image\tquay.io/a/b:1\r\n", strlen(H "image\tquay.io/a/b:1\r\n"),
	        AL_EPARSE, "L:2: control character 0x0d");
	refused(H "image\tquay.io/a/b:1\x7f\n", strlen(H "image\tquay.io/a/b:1\x7f\n"),
	        AL_EPARSE, "L:2: control character 0x7f");
	refused(H "layer\t" REF1 "\n", strlen(H "layer\t" REF1 "\n"), AL_EPARSE,
	        "L:2: unknown kind 'layer'");
	refused(H "image " REF1 "\n", strlen(H "image " REF1 "\n"), AL_EPARSE,
	        "L:2: not KIND<TAB>REFERENCE");
	refused(H "image\t\t-\n", strlen(H "image\t\t-\n"), AL_EPARSE,
	        "L:2: the reference is empty");
	refused(H "image\tNot/A/Ref!!\n", strlen(H "image\tNot/A/Ref!!\n"), AL_EPARSE,
	        "L:2:");
	refused(H "image\tftp://x/y\n", strlen(H "image\tftp://x/y\n"), AL_EPARSE, "L:2:");
	refused(H "image\t" REF1 "\tsha256:0\n", strlen(H "image\t" REF1 "\tsha256:0\n"),
	        AL_EPARSE, "L:2: the digest");
	refused(H "image\t" REF1 "\t-\tx\n", strlen(H "image\t" REF1 "\t-\tx\n"), AL_EPARSE,
	        "L:2: more than three columns");
}

static void test_mirror_failed__bounds(void)
{
	size_t big = AL_MIRROR_FAILED_MAX_BYTES + 1, i;
	char *p = malloc(big);
	al_buf b = AL_BUF_INIT(AL_MIRROR_FAILED_MAX_BYTES);
	al_mirror_failure *v = NULL;
	size_t n = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	memset(p, '#', big);
	memcpy(p, H, strlen(H));
	refused(p, big, AL_ELIMIT, "L: larger than");
	/* a line past AL_MIRROR_FAILED_MAX_LINE */
	memset(p, 'a', big);
	memcpy(p, H, strlen(H));
	refused(p, strlen(H) + AL_MIRROR_FAILED_MAX_LINE + 1, AL_ELIMIT,
	        "L:2: line longer than");
	free(p);
	/* more entries than AL_MIRROR_FAILED_MAX_ENTRIES */
	CU_ASSERT_EQUAL(al_buf_puts(&b, H), 0);
	for (i = 0; i <= AL_MIRROR_FAILED_MAX_ENTRIES; i++)
		if (al_buf_printf(&b, "image\tq.io/a/b:%zu\n", i) < 0)
			break;
	CU_ASSERT_EQUAL(al_mirror_failed_parse(&v, &n, "L", b.ptr, b.len), AL_ELIMIT);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "more than 100000 images"));
	al_buf_free(&b);
}

static void test_mirror_failed__writes_what_it_reads_back(void)
{
	const char *dir = al_test_tmpdir();
	al_mirror_result res = AL_MIRROR_RESULT_INIT;
	al_mirror_catalog cat;
	al_mirror_failure *v = NULL;
	al_digest d;
	al_buf b = AL_BUF_INIT(1 << 20);
	char *path = NULL, *path2 = NULL, *store = al_path_join(dir, "store");
	size_t n = 0;

	memset(&cat, 0, sizeof(cat));
	CU_ASSERT_PTR_NOT_NULL_FATAL(store);
	/* nothing failed: nothing written */
	CU_ASSERT_EQUAL(al_mirror_failed_write(&res, store, &path), 0);
	CU_ASSERT_PTR_NULL(path);
	CU_ASSERT_EQUAL(al_fs_exists(store), 0);
	CU_ASSERT_EQUAL(al_digest_parse_str(&d, D1), 0);
	CU_ASSERT_EQUAL(al_mirror__report_failed(&res.report, "chart-image", "quay.io/c/d:1", NULL, AL_ENET, "reset\nby peer\x1b[2J"), 0);
	CU_ASSERT_EQUAL(al_mirror__report_failed(&res.report, "release", "quay.io/r/rel:4.1", &d, AL_EIO, "component failed"), 0);
	CU_ASSERT_EQUAL(al_mirror__report_failed(&res.report, "catalog-image", REF1, NULL, AL_EIO, "x"), 0);
	CU_ASSERT_EQUAL(al_mirror__report_failed(&res.report, "catalog-image", REF1, NULL, AL_EIO, "again"), 0);
	CU_ASSERT_EQUAL(al_mirror__report_failed(&res.report, "catalog-image", "not a\nreference", NULL, AL_EPARSE, "y"), 0);
	cat.source = (char *)"quay.io/cat/index:v1";
	cat.status = AL_EIO;
	res.catalogs = &cat;
	res.ncatalogs = 1;
	CU_ASSERT_EQUAL(al_mirror_failed_write(&res, store, &path), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(path);
	CU_ASSERT_PTR_NOT_NULL(strstr(path, "/store/airlock/failed/mirror-"));
	CU_ASSERT_EQUAL(al_fs_read_file(path, &b), 0);
	/* control characters of a message never reach the file */
	CU_ASSERT_PTR_NULL(strchr((const char *)b.ptr, '\x1b'));
	CU_ASSERT_PTR_NOT_NULL(strstr((const char *)b.ptr, "# error: reset?by peer?[2J\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr((const char *)b.ptr, "# not retried: catalog quay.io/cat/index:v1"));
	CU_ASSERT_PTR_NOT_NULL(strstr((const char *)b.ptr, "# not retryable (not an image reference): not a?reference\n"));
	/* releases first, then images, catalog images, chart images */
	CU_ASSERT_PTR_NOT_NULL(strstr((const char *)b.ptr, "release\tquay.io/r/rel:4.1\t" D1 "\n"));
	CU_ASSERT(strstr((const char *)b.ptr, "release\t") < strstr((const char *)b.ptr, "catalog-image\t"));
	CU_ASSERT(strstr((const char *)b.ptr, "catalog-image\t") < strstr((const char *)b.ptr, "chart-image\t"));
	CU_ASSERT_EQUAL(al_mirror_failed_load(&v, &n, path), 0);
	CU_ASSERT_EQUAL(n, 3);
	al_mirror_failures_free(v, n);
	/* a second list in the same second gets a name of its own */
	CU_ASSERT_EQUAL(al_mirror_failed_write(&res, store, &path2), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(path2);
	CU_ASSERT(strcmp(path, path2) != 0);
	CU_ASSERT_EQUAL(al_fs_exists(path), 1);
	/* retiring: the store's list goes, a list elsewhere stays */
	CU_ASSERT_EQUAL(al_mirror_failed_retire(store, path), 1);
	CU_ASSERT_EQUAL(al_fs_exists(path), 0);
	CU_ASSERT_EQUAL(al_test_sh("cp '%s' '%s/elsewhere.txt'", path2, dir), 0);
	free(path);
	path = al_path_join(dir, "elsewhere.txt");
	CU_ASSERT_EQUAL(al_mirror_failed_retire(store, path), 0);
	CU_ASSERT_EQUAL(al_fs_exists(path), 1);
	res.catalogs = NULL;
	res.ncatalogs = 0;
	al_mirror_result_clear(&res);
	al_buf_free(&b);
	free(path);
	free(path2);
	free(store);
}

/* Helm's and the imageset's sub-runs hand their failures to the run. */
static void test_mirror_failed__moved_failures_take_their_kind(void)
{
	al_mirror_report to = AL_MIRROR_REPORT_INIT, from = AL_MIRROR_REPORT_INIT;

	CU_ASSERT_EQUAL(al_mirror__report_failed(&to, "image", "q.io/a/b:1", NULL, AL_EIO, "x"), 0);
	CU_ASSERT_EQUAL(al_mirror__report_failed(&from, "image", "q.io/c/d:1", NULL, AL_ENET, "y"), 0);
	CU_ASSERT_EQUAL(al_mirror__report_failed(&from, "image", "q.io/e/f:1", NULL, AL_ENET, NULL), 0);
	CU_ASSERT_EQUAL(al_mirror__failures_move(&to, &from, "chart-image"), 0);
	CU_ASSERT_EQUAL(from.nfailed, 0);
	CU_ASSERT_EQUAL_FATAL(to.nfailed, 3);
	CU_ASSERT_STRING_EQUAL(to.failed[0].kind, "image");
	CU_ASSERT_STRING_EQUAL(to.failed[1].kind, "chart-image");
	CU_ASSERT_STRING_EQUAL(to.failed[2].source, "q.io/e/f:1");
	CU_ASSERT_PTR_NULL(to.failed[2].message);
	CU_ASSERT_EQUAL(to.failed[2].status, AL_ENET);
	al_mirror_report_clear(&to);
	al_mirror_report_clear(&from);
}

/* --retry --config: the imageset's options, none of its content. */
static void test_mirror_failed__options_view_keeps_no_content(void)
{
	al_imageset cfg, view;
	char r0[] = "q.io/r/r:1", a0[] = "q.io/a/b:1", i0[] = "h:5000";
	char *rel[] = {r0}, *add[] = {a0}, *ins[] = {i0};

	memset(&cfg, 0, sizeof(cfg));
	cfg.releases = rel;
	cfg.nreleases = 1;
	cfg.additional = add;
	cfg.nadditional = 1;
	cfg.insecure = ins;
	cfg.ninsecure = 1;
	cfg.kubevirt = 1;
	cfg.graph = 1;
	CU_ASSERT_PTR_NULL(al_mirror__options_view(&view, NULL));
	CU_ASSERT_PTR_EQUAL(al_mirror__options_view(&view, &cfg), &view);
	CU_ASSERT_EQUAL(view.nreleases, 0);
	CU_ASSERT_EQUAL(view.nadditional, 0);
	CU_ASSERT_EQUAL(view.noperators, 0);
	CU_ASSERT_EQUAL(view.nchannels, 0);
	CU_ASSERT_EQUAL(view.nhelm_repos + view.nhelm_local, 0);
	CU_ASSERT_FALSE(view.kubevirt || view.graph);
	CU_ASSERT_EQUAL(view.ninsecure, 1);
	CU_ASSERT_PTR_EQUAL(view.insecure, cfg.insecure);
}

int main(void)
{
	CU_TestInfo tests[] = {
		{"test_mirror_failed__parses_entries_and_skips_comments", test_mirror_failed__parses_entries_and_skips_comments},
		{"test_mirror_failed__refuses_with_file_and_line", test_mirror_failed__refuses_with_file_and_line},
		{"test_mirror_failed__bounds", test_mirror_failed__bounds},
		{"test_mirror_failed__writes_what_it_reads_back", test_mirror_failed__writes_what_it_reads_back},
		{"test_mirror_failed__moved_failures_take_their_kind", test_mirror_failed__moved_failures_take_their_kind},
		{"test_mirror_failed__options_view_keeps_no_content", test_mirror_failed__options_view_keeps_no_content},
		CU_TEST_INFO_NULL,
	};
	return al_test_run("mirror_failed", tests);
}
