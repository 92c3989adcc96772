/* fuzz_packmanifest.c: fuzz target for pack manifests: the input is airlock-<id>.json of a pack directory without volumes, imported with al_unpack. */
#include "harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* manifests are small; large inputs only slow the fuzzer down */
	if (size > 256 * 1024)
		return 0;
	al_fuzz_unpack("packmanifest", data, size);
	return 0;
}
