/* fuzz_volume.c: fuzz target for tar volumes: a pack manifest and its volumes (split by AL_FUZZ_VOLUME_SEP lines), imported with al_unpack into a fresh store. */
#include "harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a few small volumes are enough to reach every entry check */
	if (size > 1024 * 1024)
		return 0;
	al_fuzz_unpack("volume", data, size);
	return 0;
}
