/* fuzz_catalog.c: fuzz target for FBC parsing: al_catalog_add_file + finish on the input, then filter, render and parse back; and the same file read through a scratch file (src/catalog/catalog_spool.c) must give the same catalog. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "airlock/buf.h"
#include "airlock/catalog.h"
#include "airlock/error.h"
#include "catalog_int.h"
#include "harness.h"

/*
 * The input as a catalog image's large file is read: from a scratch file,
 * a JSON stream one object at a time, bulky property values spilled. It
 * must succeed exactly when the in-memory read did, and then render every
 * package to the same bytes.
 */
static void spooled_same(const uint8_t *data, size_t size, int ok,
                         const al_catalog *mem)
{
	const char *tmp = getenv("TMPDIR");
	struct cat_spool *sp = NULL;
	al_catalog *c = NULL;
	al_buf b1 = AL_BUF_INIT(64 * AL_MIB), b2 = AL_BUF_INIT(64 * AL_MIB);
	uint64_t off = 0;
	size_t i;
	int sok;

	if (cat_spool_new(&sp, tmp != NULL && tmp[0] ? tmp : "/tmp") < 0 ||
	    (size > 0 && cat_spool_put(sp, data, size, &off) < 0) ||
	    al_catalog_new(&c) < 0)
		goto out; /* no scratch file here: nothing to compare */
	cat_use_spool(c, sp);
	sok = cat_add_spooled_file(c, "fuzz", sp, off, size) == 0 &&
	      al_catalog_finish(c) == 0;
	if (sok != ok)
		al_fuzz_fail("catalog", ok ? "the spooled read refused a catalog"
		                           : "the spooled read took a bad catalog");
	if (!ok || !sok)
		goto out;
	if (al_catalog_package_count(c) != al_catalog_package_count(mem))
		al_fuzz_fail("catalog", "the spooled read has other packages");
	for (i = 0; i < al_catalog_package_count(c); i++) {
		al_buf_reset(&b1);
		al_buf_reset(&b2);
		if (al_catalog_render_package(mem, i, &b1) < 0 ||
		    al_catalog_render_package(c, i, &b2) < 0)
			continue; /* over the render bound: both, or caught above */
		if (b1.len != b2.len || memcmp(b1.ptr, b2.ptr, b1.len) != 0)
			al_fuzz_fail("catalog",
			             "a spooled package renders differently");
	}
out:
	al_error_clear();
	al_buf_free(&b1);
	al_buf_free(&b2);
	al_catalog_free(c);
	cat_spool_unref(sp);
}

/* Properties: parsing never crashes; a catalog that finishes filters
 * (heads of everything) into a valid catalog; each rendered package
 * parses back into a catalog with the same summary. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	al_catalog *c = NULL, *f = NULL, *back = NULL;
	al_catalog_filter flt = {NULL, 0, 0, 0};
	al_buf b = AL_BUF_INIT(64 * AL_MIB);
	char *s1 = NULL, *s2 = NULL, **imgs = NULL;
	size_t i, n = 0;

	if (size > 1024 * 1024)
		return 0;
	if (al_catalog_new(&c) < 0)
		return 0;
	if (al_catalog_add_file(c, "fuzz", data, size) < 0 ||
	    al_catalog_finish(c) < 0) {
		spooled_same(data, size, 0, NULL);
		goto out;
	}
	spooled_same(data, size, 1, c);
	(void)al_catalog_images(c, &imgs, &n);
	if (al_catalog_filter_apply(&f, c, &flt) < 0)
		goto out;
	if (al_catalog_new(&back) < 0)
		goto out;
	for (i = 0; i < al_catalog_package_count(f); i++) {
		al_buf_reset(&b);
		if (al_catalog_render_package(f, i, &b) < 0)
			al_fuzz_fail("catalog", "a filtered package does not render");
		if (al_catalog_add_file(back, "rendered", b.ptr, b.len) < 0)
			al_fuzz_fail("catalog", "rendered JSON does not parse");
	}
	al_buf_reset(&b);
	if (al_catalog_render_global(f, &b) > 0 &&
	    al_catalog_add_file(back, "global", b.ptr, b.len) < 0)
		al_fuzz_fail("catalog", "rendered global objects do not parse");
	if (al_catalog_finish(back) < 0)
		al_fuzz_fail("catalog", "the rendered catalog is not valid");
	s1 = al_catalog_summary(f);
	s2 = al_catalog_summary(back);
	if (s1 != NULL && s2 != NULL && strcmp(s1, s2) != 0)
		al_fuzz_fail("catalog", "render + parse changed the catalog");
out:
	al_error_clear();
	al_catalog_images_free(imgs, n);
	free(s1);
	free(s2);
	al_buf_free(&b);
	al_catalog_free(back);
	al_catalog_free(f);
	al_catalog_free(c);
	return 0;
}
