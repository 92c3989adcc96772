/* serve_int.h (internal): the name table airlock serve answers from
 * (serve_table.c) and the certificate maker (serve_cert.c). */
#ifndef AL_SERVE_INT_H
#define AL_SERVE_INT_H

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
} al_serve_tag;

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
} al_serve_table;

/* Open the store at path read-only and read its names. */
int al_serve__table_new(al_serve_table **out, const char *path);
void al_serve__table_free(al_serve_table *t);
/* 1 for "sha256:" and 64 lowercase hex digits, else 0. */
int al_serve__digest_valid(const char *s);
int al_serve__has_repo(const al_serve_table *t, const char *repo);
/* NULL when repo serves no such manifest. */
const al_serve_man *al_serve__find_man(const al_serve_table *t,
                                       const char *repo, const char *digest);
const al_serve_man *al_serve__find_tag(const al_serve_table *t,
                                       const char *repo, const char *tag);
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

#endif
