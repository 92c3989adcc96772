/* fuzz_catalog.c: fuzz target for FBC parsing: al_catalog_add_file + finish on the input, then filter, render and parse back. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "airlock/buf.h"
#include "airlock/catalog.h"
#include "airlock/error.h"
#include "harness.h"

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
	    al_catalog_finish(c) < 0)
		goto out;
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
