/* serve_int.h (internal): the name table airlock serve answers from
 * (serve_table.c), credentials (serve_auth.c), the push side
 * (serve_push.c) and the certificate maker (serve_cert.c). */
#ifndef AL_SERVE_INT_H
#define AL_SERVE_INT_H

#include <pthread.h>
#include <sys/stat.h>

#include <microhttpd.h>

#include "airlock/buf.h"
#include "airlock/serve.h"
#include "airlock/store.h"

/* One manifest a repository serves by digest (sorted by repo, digest). */
typedef struct al_serve_man {
	char *repo;
	char digest[72]; /* "sha256:<64 hex>" */
	char *media_type;
	uint64_t size;
	char *artifact_type; /* artifactType, else config.mediaType; or NULL */
	char subject[72];    /* subject digest, or "" */
} al_serve_man;

/* One tag (sorted by repo, tag). */
typedef struct al_serve_tag {
	char *repo;
	char *tag;
	char digest[72];
	char *name; /* the index.json name it comes from; NULL for the
	               "sha256-<hex>" tag of a digest-named entry */
} al_serve_tag;

/* One child of an index (what a repository serves by digest under it). */
typedef struct al_serve_kid {
	char digest[72];
	char *media_type;
	uint64_t size;
	char *artifact_type;
} al_serve_kid;

/* What one top-level manifest says (its bytes never change for its
 * digest, so a rebuilt table takes it from the previous one instead of
 * reading the manifest again). Sorted by digest. */
typedef struct al_serve_info {
	char digest[72];
	char *artifact_type; /* artifactType, else config.mediaType; or NULL */
	char subject[72];
	al_serve_kid *kids;
	size_t nkids;
} al_serve_info;

/*
 * A snapshot of the store's names: the read-only store it was read from,
 * and what each repository serves. Shared by requests through refs (the
 * server's lock); never changed once built.
 */
typedef struct al_serve_table {
	unsigned refs;
	al_store *store;
	al_serve_man *mans;
	size_t nmans, cap_mans;
	al_serve_tag *tags;
	size_t ntags, cap_tags;
	char **repos; /* borrowed from mans, sorted, unique */
	size_t nrepos;
	al_serve_info *infos;
	size_t ninfos, cap_infos;
	int serve_untrusted; /* marked content served too */
} al_serve_table;

/* Open the store at path read-only and read its names; what prev (may be
 * NULL) learnt from a manifest is taken from it, not read again. Without
 * serve_untrusted, a name an untrusted import set (a live tag mark of
 * airlock/untrusted.json) is left out. */
int al_serve__table_new(al_serve_table **out, const char *path,
                        const al_serve_table *prev, int serve_untrusted);
void al_serve__table_free(al_serve_table *t);
/* 1 for "sha256:" and 64 lowercase hex digits, else 0. */
int al_serve__digest_valid(const char *s);
int al_serve__has_repo(const al_serve_table *t, const char *repo);
/* NULL when repo serves no such manifest. */
const al_serve_man *al_serve__find_man(const al_serve_table *t,
                                       const char *repo, const char *digest);
const al_serve_man *al_serve__find_tag(const al_serve_table *t,
                                       const char *repo, const char *tag);
/* The index.json name behind repo's real tag (not a "sha256-<hex>" one),
 * borrowed from t; NULL when there is none. */
const char *al_serve__tag_name(const al_serve_table *t, const char *repo,
                               const char *tag);
/* Index of repo's first tag after last (NULL: its first); *end one past
 * its last. */
size_t al_serve__tags_from(const al_serve_table *t, const char *repo,
                           const char *last, size_t *end);

/*
 * One Range header value against a blob of size bytes: "bytes=A-B",
 * "bytes=A-", "bytes=-N" (RFC 9110 14.1.2). 1 and [*off, *off + *len) when
 * satisfiable, 0 when not (past the end, "-0"), -1 when malformed (other
 * units, several ranges, B < A, overflow).
 */
int al_serve__parse_range(const char *s, uint64_t size, uint64_t *off,
                          uint64_t *len);

/* ---- credentials (serve_auth.c) ---- */

typedef struct al_serve_auth al_serve_auth;

/*
 * Read an htpasswd file (lines "user:hash": {SHA}, $apr1$, $5$, $6$, and
 * bcrypt's $2y$, $2b$, $2a$) and a token file (lines of bearer tokens, or
 * "sha256:<hex>" of one; only SHA-256 of each token is kept); either may
 * be NULL, not both. Any other hash format is AL_EUNSUPPORTED naming
 * FILE:LINE, a malformed bcrypt hash AL_EPARSE, a bcrypt cost above 12
 * AL_ELIMIT; no credential at all: AL_EINVAL.
 */
int al_serve__auth_load(al_serve_auth **out, const char *htpasswd,
                        const char *token_file);
void al_serve__auth_free(al_serve_auth *a);
int al_serve__auth_has_basic(const al_serve_auth *a);
int al_serve__auth_has_bearer(const al_serve_auth *a);
/* 1 when an Authorization header value ("Basic ...", "Bearer ...") holds
 * credentials of a; 0 otherwise (also for a == NULL or value == NULL).
 * Thread-safe; at most two password hashes run at once (a caller may wait
 * for a slot), and a header answered before is answered from memory. */
int al_serve__auth_check(al_serve_auth *a, const char *value);
/* crypt of pw with the setting (salt) of an "$apr1$" or "$5$"/"$6$"
 * hash into out (cap bytes): the whole hash string. */
int al_serve__apr1(const char *pw, const char *setting, char *out, size_t cap);
int al_serve__sha_crypt(const char *pw, const char *setting, char *out,
                        size_t cap);

/* ---- the server, shared by serve.c and serve_push.c ---- */

typedef struct al_serve_upload al_serve_upload;

typedef struct al_serve_server {
	const al_serve_opts *o;
	pthread_mutex_t lock; /* table, access log, uploads, manifest bytes */
	al_serve_table *table;
	pthread_mutex_t refresh_lock; /* index_st, marks_st, table rebuilds */
	struct stat index_st;
	struct stat marks_st; /* airlock/untrusted.json (zero: none) */
	al_store *store;      /* writable, with push only */
	al_serve_auth *auth;
	al_serve_upload **uploads;
	size_t nuploads;
	uint64_t manifest_bytes; /* manifest bodies held in memory */
} al_serve_server;

/* What a push request is doing (al_serve_request.push). */
enum {
	AL_SERVE_PUSH_NONE = 0,
	AL_SERVE_PUSH_BLOB,     /* appending to an upload session */
	AL_SERVE_PUSH_MANIFEST, /* reading a manifest body */
};

/* One request, from the first call to the completion callback. */
typedef struct al_serve_request {
	uint64_t start_ms;
	unsigned status;
	uint64_t bytes;
	char method[16];
	char remote[64];
	char *path;
	/* push (serve_push.c) */
	int push;
	al_serve_upload *up; /* the session this request holds */
	uint64_t range_end;  /* PATCH/PUT with Content-Range: end offset + 1 */
	int commit;          /* PUT or POST ?digest=: commit at the end */
	char digest[72];     /* the digest to commit as */
	char *repo, *ref;    /* manifest PUT */
	char *content_type;
	al_buf body;       /* manifest body */
	uint64_t reserved; /* of al_serve_server.manifest_bytes */
} al_serve_request;

/* Responses (serve_base.c). Each records status and length in rq. */
enum MHD_Result al_serve__send(struct MHD_Connection *c, al_serve_request *rq,
                               unsigned status, struct MHD_Response *r,
                               uint64_t len);
enum MHD_Result al_serve__send_json(struct MHD_Connection *c,
                                    al_serve_request *rq, unsigned status,
                                    const char *body);
enum MHD_Result al_serve__send_error(struct MHD_Connection *c,
                                     al_serve_request *rq, unsigned status,
                                     const char *code, const char *message);
/* The name table (serve_base.c): index.json's stat, a reference to the
 * current table and its release, and reading index.json again now if it
 * changed (a manifest was pushed). */
int al_serve__index_stat(const char *store, struct stat *st);
/* stat of the store's airlock/untrusted.json; all zero when there is
 * none (the marks of untrusted imports decide which names are served). */
void al_serve__marks_stat(const char *store, struct stat *st);
void al_serve__refresh(al_serve_server *sv);
al_serve_table *al_serve__table_get(al_serve_server *sv);
void al_serve__table_put(al_serve_server *sv, al_serve_table *t);

/* The distribution spec's name and tag grammars ("Pulling manifests"):
 * 1 when valid, else 0. */
int al_serve__repo_valid(const char *s);
int al_serve__tag_valid(const char *s);
/*
 * A Content-Range of an upload chunk: "A-B" (the distribution spec) or
 * "bytes A-B[/N]". 0 and *first, *last; -1 when malformed or B < A.
 */
int al_serve__parse_content_range(const char *s, uint64_t *first,
                                  uint64_t *last);

/*
 * The push side (serve_push.c), for requests that write: POST, PATCH, PUT,
 * DELETE, and GET/HEAD of an upload session, on /v2/ (rest: the path
 * after "/v2/"). begin: on the first call, after the credentials were
 * checked; answers at once what can be refused before the body. data:
 * each piece of the body (MHD_NO ends the connection). finish: once the
 * body is whole. done: from the completion callback, whatever happened.
 */
enum MHD_Result al_serve__push_begin(al_serve_server *sv,
                                     struct MHD_Connection *c,
                                     al_serve_request *rq, const char *method,
                                     const char *rest);
enum MHD_Result al_serve__push_data(al_serve_server *sv, al_serve_request *rq,
                                    const char *p, size_t n);
enum MHD_Result al_serve__push_finish(al_serve_server *sv,
                                      struct MHD_Connection *c,
                                      al_serve_request *rq);
void al_serve__push_done(al_serve_server *sv, al_serve_request *rq);
/* Abort sessions idle past the upload timeout (all of them: all != 0),
 * their temporary files removed. */
void al_serve__uploads_expire(al_serve_server *sv, int all);

#endif
