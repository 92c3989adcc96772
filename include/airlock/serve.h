/* serve.h: a store served as an OCI distribution registry (pull side) and as
 * the Cluster Version Operator's HTTP signature store (docs/serve.md). */
#ifndef AIRLOCK_SERVE_H
#define AIRLOCK_SERVE_H

#include "common.h"
#include "clock.h"

/* The version of al_serve_opts this header describes. */
#define AL_SERVE_OPTS_VERSION 1

/*
 * How al_serve_run serves a store. Start from AL_SERVE_OPTS_INIT and set
 * fields by name; every pointer is borrowed for the whole run. Fields are
 * only added at the end.
 */
typedef struct al_serve_opts {
	/* AL_SERVE_OPTS_VERSION of the caller's header (0, a zeroed struct,
	 * reads as 1; a newer one is AL_EINVAL) */
	unsigned version;
	const char *store;    /* the store directory (opened read-only) */
	const char *listen;   /* "ADDR:PORT" (IPv4 or "[IPv6]"); PORT 0 picks a
	                         free port, reported to ready */
	const char *tls_cert; /* PEM certificate chain, or NULL: plain HTTP */
	const char *tls_key;  /* PEM private key (with tls_cert) */
	unsigned max_connections; /* at once; 0: 256 */
	unsigned per_ip;          /* at once from one address; 0: 64 */
	unsigned idle_timeout_s;  /* a connection silent this long is closed
	                             (slow clients); 0: 30 */
	unsigned threads;         /* worker threads; 0: 4 */
	/* Called once listening, with the bound address ("127.0.0.1:5000"). */
	void (*ready)(void *ud, const char *addr);
	/* One JSON object per request (no newline), from worker threads
	 * under a lock: the access log. NULL: none. */
	void (*access)(void *ud, const char *line);
	void *ud;
	const al_cancel *cancel; /* set: stop (SIGTERM); required */
	/* Push (docs/serve.md "Push"): off unless allow_push, which needs
	 * htpasswd or token_file; the store is then opened writable (its
	 * lock held while serving). */
	int allow_push;
	const char *htpasswd; /* "user:hash" lines ({SHA}, $apr1$, $5$, $6$) */
	const char *token_file; /* bearer tokens, or "sha256:<hex>" of them */
	int auth_pull;          /* credentials for pulls too */
	uint64_t max_blob;      /* bytes of one upload; 0: 64 GiB */
	unsigned max_uploads;   /* upload sessions open at once; 0: 32 */
	unsigned upload_timeout_s; /* a session idle this long is dropped;
	                              0: 600 */
	/* 1: serve what an import no key verified wrote (marked signatures
	 * and names, docs/security.md "Marks of untrusted imports"); 0 (the
	 * default): the signature store and the registry leave them out */
	int serve_untrusted;
} al_serve_opts;

#define AL_SERVE_OPTS_INIT                                                     \
	{                                                                      \
		.version = AL_SERVE_OPTS_VERSION                               \
	}

/*
 * Serve until o->cancel is set, then stop accepting, finish the requests
 * in flight and return 0. The store is opened read-only; its index.json
 * is read into a table of repositories, tags and manifests (the names
 * al_push_target gives each image) and read again when it changes.
 * Errors before serving: AL_EINVAL (options; an htpasswd or token file
 * that cannot be used, e.g. a bcrypt line, naming FILE:LINE),
 * AL_ENOTFOUND / AL_EPARSE (store), AL_ELOCKED (push: another process
 * writes the store), AL_EIO (cannot listen, TLS files).
 *
 * With allow_push the store is opened writable: blobs are uploaded into
 * its blob writer and renamed into place only once their digest
 * verified, manifests are recorded in index.json (journalled, flushed at
 * once) under the name the push mapping serves them by.
 */
AL_EXPORT int al_serve_run(const al_serve_opts *o);

/*
 * Make DIR/ca.crt, DIR/ca.key (a self-signed CA, EC P-256, 10 years) and
 * DIR/server.crt, DIR/server.key (signed by it, for the names and
 * addresses in hosts: DNS names or IP literals, at least one). Keys are
 * written mode 0600; existing files are AL_EEXIST. *ca_path (caller
 * frees) is DIR/ca.crt, for the cluster's trust bundle.
 */
AL_EXPORT int al_serve_make_cert(const char *dir, const char *const *hosts,
                                 size_t nhosts, char **ca_path);

#endif
