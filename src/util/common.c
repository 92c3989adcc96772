/* common.c: what include/airlock/common.h declares beside the semantic
 * versions (those are version.c's): the library's version string. */
#include "airlock/common.h"

const char *al_version(void)
{
	return AL_VERSION_STRING;
}
