/* error_int.h: error helpers the modules share and the API does not export. */
#ifndef AL_ERROR_INT_H
#define AL_ERROR_INT_H

/*
 * The first check of every entry that takes a versioned options struct
 * (docs/architecture.md "Options structs (ABI)"): 0 when version, the
 * struct's leading field, is at most supported (the AL_<NAME>_OPTS_VERSION
 * this library was built with; 0, a zeroed struct, reads as 1), else
 * AL_EINVAL with a message naming the struct ("al_http_opts version 2 is
 * newer than this library's (1)"). name is the struct's type name.
 */
int al_opts_version_check(const char *name, unsigned version,
                          unsigned supported);

#endif
