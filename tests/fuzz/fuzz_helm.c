/* fuzz_helm.c: fuzz target for Helm inputs: al_helm_index_parse (and
 * al_helm_index_get on what it gives), al_helm_chart_read_mem (the input
 * as a chart archive), al_helm_version_valid / compare. */
#include <stdlib.h>
#include <string.h>

#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/helm.h"
#include "harness.h"

#define FUZZ_HELM_MAX (1024 * 1024)

static void index_checks(const uint8_t *data, size_t size)
{
	const al_helm_index_entry *e = NULL;
	al_helm_index ix;
	size_t i;

	if (al_helm_index_parse(&ix, data, size, "fuzz") < 0) {
		al_error_clear();
		return;
	}
	for (i = 0; i + 1 < ix.n; i++) {
		/* per chart, newest first */
		if (strcmp(ix.entries[i].name, ix.entries[i + 1].name) == 0 &&
		    al_helm_version_compare(ix.entries[i].version,
		                            ix.entries[i + 1].version) < 0)
			al_fuzz_fail("helm", "index versions not newest first");
	}
	for (i = 0; i < ix.n && i < 16; i++) {
		if (al_helm_index_get(&ix, ix.entries[i].name, NULL, &e) == 0 &&
		    (e == NULL ||
		     strcspn(e->version, "-+") != strcspn(e->version, "+") ||
		     !al_helm_version_valid(e->version)))
			al_fuzz_fail("helm", "latest stable is a prerelease");
		al_error_clear();
		if (al_helm_version_valid(ix.entries[i].version) &&
		    (al_helm_index_get(&ix, ix.entries[i].name,
		                       ix.entries[i].version, &e) < 0 ||
		     e == NULL ||
		     al_helm_version_compare(e->version,
		                             ix.entries[i].version) != 0))
			al_fuzz_fail("helm", "an exact version is not found");
		al_error_clear();
	}
	al_helm_index_clear(&ix);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const paths[] = {"{.image}", ".a[*].b", "x.y[0]"};
	al_helm_chart c;
	char v[64];
	size_t i;

	al_fuzz_quiet();
	if (size > FUZZ_HELM_MAX)
		return 0;
	index_checks(data, size);
	if (al_helm_chart_read_mem(&c, data, size, paths, 3, "fuzz") == 0) {
		if (c.name == NULL || c.version == NULL || c.config == NULL)
			al_fuzz_fail("helm", "a read chart lacks name, version "
			                     "or config");
		for (i = 0; i < c.nimages; i++)
			if (c.images[i].ref == NULL ||
			    strstr(c.images[i].ref, "{{") != NULL)
				al_fuzz_fail("helm", "a template became an "
				                     "image");
		al_helm_chart_clear(&c);
	}
	al_error_clear();
	/* the first line as a version */
	for (i = 0; i < size && i + 1 < sizeof(v) && data[i] != '\n'; i++)
		v[i] = data[i] != '\0' ? (char)data[i] : 'x';
	v[i] = '\0';
	if (al_helm_version_valid(v) && al_helm_version_compare(v, v) != 0)
		al_fuzz_fail("helm", "a version differs from itself");
	return 0;
}
