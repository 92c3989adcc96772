/* fuzz_manifest.c: fuzz target for OCI/Docker manifests and indexes: al_manifest_parse with each media-type hint, and a descriptor round trip. */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "oci_int.h"
#include "airlock/error.h"
#include "airlock/oci.h"
#include "harness.h"

/* Every descriptor of a parsed manifest survives to_json -> from_json unchanged. */
static void round_trip(const al_descriptor *d, int platform_ok)
{
	al_descriptor back;
	json_t *j = al_descriptor_to_json(d);

	if (j == NULL)
		al_fuzz_fail("manifest", "al_descriptor_to_json failed");
	memset(&back, 0, sizeof(back));
	if (al_descriptor_from_json(&back, j, platform_ok, "round trip") < 0)
		al_fuzz_fail("manifest", "a parsed descriptor does not parse back from its JSON");
	if (!al_digest_equal(&back.digest, &d->digest) || back.size != d->size ||
	    strcmp(back.media_type, d->media_type) != 0)
		al_fuzz_fail("manifest", "descriptor changed in a JSON round trip");
	json_decref(j);
	al_descriptor_clear(&back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const hints[] = {
		NULL, AL_MT_OCI_MANIFEST, AL_MT_OCI_INDEX, AL_MT_DOCKER_MANIFEST, AL_MT_DOCKER_LIST,
	};
	al_manifest m;
	size_t h, i;

	al_fuzz_quiet();
	for (h = 0; h < sizeof(hints) / sizeof(hints[0]); h++) {
		memset(&m, 0, sizeof(m));
		int rc = al_manifest_parse(&m, data, size, hints[h], "fuzz input");
		al_fuzz_note("manifest", hints[h] != NULL ? hints[h] : "no hint", rc);
		if (rc < 0) {
			al_error_clear();
			continue;
		}
		if (m.media_type == NULL)
			al_fuzz_fail("manifest", "parsed manifest without a media type");
		if (m.is_index != al_media_type_is_index(m.media_type))
			al_fuzz_fail("manifest", "is_index disagrees with the media type");
		if (m.nlayers > AL_OCI_ENTRIES_MAX || m.nmanifests > AL_OCI_ENTRIES_MAX)
			al_fuzz_fail("manifest", "more entries than AL_OCI_ENTRIES_MAX");
		if (m.is_index) {
			for (i = 0; i < m.nmanifests; i++) {
				round_trip(&m.manifests[i], 1);
				(void)al_platform_match(&m.manifests[i], "linux/amd64");
				(void)al_platform_match(&m.manifests[i], "linux/arm/v7");
			}
		} else {
			round_trip(&m.config, 0);
			for (i = 0; i < m.nlayers; i++)
				round_trip(&m.layers[i], 0);
		}
		if (m.has_subject)
			round_trip(&m.subject, 0);
		al_manifest_clear(&m);
	}
	return 0;
}
