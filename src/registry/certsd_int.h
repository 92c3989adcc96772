/* certsd_int.h: per-registry TLS files from certs.d directories
 * (containers-certs.d(5)) and CA directories; library-internal. */
#ifndef AIRLOCK_CERTSD_INT_H
#define AIRLOCK_CERTSD_INT_H

#include "airlock/buf.h"

/* Bounds: one CA file, all the CA bytes of one client, files per dir. */
#define AL_CERTS_FILE_MAX (1024 * 1024)
#define AL_CERTS_TOTAL_MAX (16 * 1024 * 1024)
#define AL_CERTS_DIR_FILES_MAX 4096

/* The per-host bases searched by default, in order (containers/image
 * docker_client.go dockerCertDir; "~" is $HOME). $AIRLOCK_CERTS_D, a
 * ':'-separated list, replaces them (tests, hosts with another layout). */
#define AL_CERTS_D_DEFAULT                                                     \
	"~/.config/containers/certs.d:/etc/containers/certs.d:"                \
	"/etc/docker/certs.d"

typedef struct al_certs_host {
	char *dir;         /* the certs.d directory used; NULL: none exists */
	al_buf ca_pem;     /* every *.crt of dir, concatenated */
	char *client_cert; /* the first *.cert (name order), or NULL */
	char *client_key;  /* its *.key */
	unsigned npairs;   /* client pairs found (only the first is used) */
} al_certs_host;

/*
 * The TLS files for a registry reached at hostport ("127.0.0.1:5000",
 * "quay.io"): the first of BASE/hostport that exists for BASE in
 * $AIRLOCK_CERTS_D or AL_CERTS_D_DEFAULT, read as containers/image's
 * tlsclientconfig.SetupCertificates does: "*.crt" are CA certificates
 * added to the trusted ones, "*.cert" a client certificate whose key
 * must be the same name with ".key", and a ".key" needs its ".cert"
 * (AL_EINVAL naming both, as containers/image refuses them). No
 * directory is fine (out->dir NULL). Unreadable files are AL_EIO, bounds
 * AL_ELIMIT. Clear *out with al_certs_host_clear (also after a failure).
 */
int al_certs_for_host(const char *hostport, al_certs_host *out);
/*
 * The TLS files of dir itself, read as al_certs_for_host reads a certs.d
 * host directory, for every registry (skopeo's and podman's --cert-dir,
 * containers/image SystemContext.DockerCertPath, which replaces the
 * certs.d lookup). A missing dir is AL_ENOTFOUND, a file AL_EINVAL, both
 * naming it. Clear *out with al_certs_host_clear (also after a failure).
 */
int al_certs_for_dir(const char *dir, al_certs_host *out);
void al_certs_host_clear(al_certs_host *c);

/* Append the regular file at path (symlinks followed), then a newline, to
 * out: at most AL_CERTS_FILE_MAX bytes (AL_ELIMIT), AL_ENOTFOUND when it
 * does not exist, AL_EIO otherwise. */
int al_certs_read_file(const char *path, al_buf *out);

/*
 * Append every regular file of each directory of dirs (':'-separated, as
 * $SSL_CERT_DIR; missing directories skipped) to out, as Go's
 * crypto/x509 reads SSL_CERT_DIR: certificates need no hashed names.
 * Bounded by AL_CERTS_FILE_MAX per file and out->max.
 */
int al_certs_read_dirs(const char *dirs, al_buf *out);

#endif
