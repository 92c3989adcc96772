/* ref.h: image references (registry/repo[:tag][@digest]) and transports
 * (docker://, oci:). */
#ifndef AIRLOCK_REF_H
#define AIRLOCK_REF_H

#include "common.h"

AL_BEGIN_DECL

/* Thread safety: every function here is reentrant; distinct objects may be
 * used from different threads at once. */

/*
 * A parsed, normalised docker reference. All strings are owned.
 * registry: "docker.io", "quay.io", "127.0.0.1:5000", "[::1]:5000"
 * repository: "library/busybox", "openshift-release-dev/ocp-release"
 * tag: NULL when absent; digest: "sha256:<hex>" or NULL when absent.
 */
typedef struct al_ref {
	char *registry;
	char *repository;
	char *tag;
	char *digest;
} al_ref;

/*
 * Parse a docker reference as the distribution reference grammar does:
 * a first component containing '.' or ':' or equal to "localhost" is the
 * registry, else docker.io; a single-component docker.io repository gets
 * "library/"; "index.docker.io" becomes "docker.io". Uppercase in the
 * repository, empty components, bad tags (>128 chars, bad chars) and
 * malformed digests are AL_EPARSE with a message naming the input.
 * No default tag is added: callers decide ("latest" when neither).
 * The normalised name (registry/repository) is at most 255 characters
 * and the input at most 1024 bytes, so al_ref_string() of a parsed
 * reference always parses again to the same reference. A well-formed
 * digest of another algorithm (md5:...) is AL_EPARSE too.
 */
AL_EXPORT int al_ref_parse(al_ref *out, const char *s);
/* 1 when s[0..n) is one repository path component of the distribution
 * reference grammar, [a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*, else 0. */
AL_EXPORT int al_ref_path_component_valid(const char *s, size_t n);
/* Free r's strings and zero it; NULL is a no-op. */
AL_EXPORT void al_ref_clear(al_ref *r);
/* Deep copy (*out written only on success); AL_ENOMEM. */
AL_EXPORT int al_ref_copy(al_ref *out, const al_ref *in);
/* "registry/repository[:tag][@digest]". Caller frees. */
AL_EXPORT char *al_ref_string(const al_ref *r);
/* "registry/repository". Caller frees. */
AL_EXPORT char *al_ref_name(const al_ref *r);

typedef enum al_transport {
	AL_TRANSPORT_DOCKER = 1, /* docker://ref (registry) */
	AL_TRANSPORT_OCI = 2,    /* oci:path[:name] (OCI image layout) */
} al_transport;

/*
 * An image location with its transport.
 * DOCKER: ref is set. OCI: path is the layout directory, name is the
 * index.json org.opencontainers.image.ref.name to select (NULL: the only
 * image), and name may itself be a docker reference string.
 */
typedef struct al_imgref {
	al_transport transport;
	al_ref ref;
	char *path;
	char *name;
} al_imgref;

/*
 * Parse "docker://REF", "oci:PATH[:NAME]" or a bare REF (docker). For
 * oci:, the path ends at the first ':' (as containers/image does); an
 * empty NAME ("oci:/dir:") means none, an empty PATH is AL_EPARSE, and
 * so is any other "xxx://" transport. NAME is not validated. Clear *out
 * with al_imgref_clear.
 */
AL_EXPORT int al_imgref_parse(al_imgref *out, const char *s);
AL_EXPORT void al_imgref_clear(al_imgref *r);
/* The canonical string form with transport prefix. Caller frees. */
AL_EXPORT char *al_imgref_string(const al_imgref *r);

AL_END_DECL

#endif
