/* cli_cr_file.h: what the cluster-resources writers share, below them:
 * their options and the one way a resource file is written (atomically,
 * recorded, named). cli_resources.c and cli_resources_osus.c both write
 * through it, so neither calls back into the other. */
#ifndef AIRLOCK_CLI_CR_FILE_H
#define AIRLOCK_CLI_CR_FILE_H

#include <jansson.h>

#include "airlock.h"

/* What cli_cluster_resources writes. */
typedef struct cli_cr_opts {
	const char *dir;       /* the directory, created if missing */
	const char *dest;      /* "HOST[:PORT][/PREFIX]" images went to */
	unsigned max_nested;   /* --max-nested-paths */
	al_layout_kind layout; /* --layout: oc-mirror's also means its
	                          file names and mirror-set objects */
	int icsp;              /* also the ImageContentSourcePolicy, alone */
	int oc_mirror_names;   /* oc-mirror v2's file names */
	int quiet;
	int untrusted; /* push --push-untrusted: map the names an untrusted
	                  import set too (left out otherwise) */
	/* after a whole run, remove the files of dir that it did not write
	 * (cli_cluster_resources): a file that holds the same resource again
	 * is kept as it is, not rewritten (cli_cr_put_file) */
	int prune;
	json_t *written; /* the file names written, or NULL: set by
	                    cli_cluster_resources when prune is */
} cli_cr_opts;

/* Write b to DIR/file atomically (unless the file holds b already, but
 * for its "createdAt:" lines), append its path to files (may be NULL) and
 * its name to o->written (may be NULL), and name it on stderr unless
 * quiet. Returns an exit status. */
int cli_cr_put_file(const cli_cr_opts *o, const char *file, const al_buf *b,
                    json_t *files);

/*
 * Where push put the store image name under dest ("HOST[:PORT][/PREFIX]")
 * with max_nested and layout l (NULL: source paths), as "HOST/REPO" in
 * *repo and a tag or digest in *ref (caller frees both): the one mapping,
 * al_push_target_layout, given the prefix alone as push gives it, so that
 * --max-nested-paths counts the same path components as push did.
 * Errors as al_push_target.
 */
int cli_cr_target(const al_layout *l, const char *name, const char *dest,
                  unsigned max_nested, char **repo, char **ref);
/* cli_cr_target of place number place (al_push_target_layout_at): a
 * component two releases share has a place per release. */
int cli_cr_target_at(const al_layout *l, const char *name, size_t place,
                     const char *dest, unsigned max_nested, char **repo,
                     char **ref);

#endif
