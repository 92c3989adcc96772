/* cli_resources.h: where push put a store's images (the destination, its
 * check against the cluster's CRD patterns, the store's push record) and
 * the cluster resources that follow from it: mirror sets, ICSP, signature
 * ConfigMaps, a cluster-resources/ directory (docs/push.md). */
#ifndef AIRLOCK_CLI_RESOURCES_H
#define AIRLOCK_CLI_RESOURCES_H

#include <jansson.h>

#include "airlock.h"
#include "cli_cr_file.h"

/*
 * Split a destination "[docker://]HOST[:PORT][/PREFIX]" (trailing '/'
 * dropped) into *host and *prefix (caller frees both). Returns 0; -1 when
 * it has no host (nothing allocated); -2 when HOST[:PORT][/PREFIX] is not
 * a location the ImageDigestMirrorSet CRD accepts (al_kres_location_valid:
 * an upper-case path, a bad port...), also with nothing allocated.
 */
int cli_dest_parse(const char *s, char **host, char **prefix);

/* --layout VALUE into *out (push, mirror, mirrorsets); EXIT_OK or a usage
 * error for cmd (said). NULL: the default, oc-mirror's. */
int cli_parse_layout(const char *cmd, const char *value, al_layout_kind *out);

/* --max-nested-paths N: 1 to 32 into *out; -1 otherwise. */
int cli_parse_nested(const char *arg, unsigned *out);

/*
 * The mirror sets of the store's images pushed to HOST/PREFIX (dest,
 * without docker://) with max_nested (--max-nested-paths) under layout
 * (oc-mirror's: its objects per category, namespace scopes, catalogs left
 * out, name unused; source: one object named name): IDMS and ITMS
 * appended to sets, and when icsp is not NULL the ImageContentSourcePolicy
 * alone appended to icsp. The names an untrusted import set are left out
 * (push leaves them out) unless untrusted. Prints its errors; returns an
 * exit status.
 */
int cli_mirror_sets(al_store *store, const char *dest, unsigned max_nested,
                    al_layout_kind layout, const char *name, int untrusted,
                    al_buf *sets, al_buf *icsp);

/* The destination of the store's last push ("HOST[/PREFIX]", caller
 * frees), its max_nested_paths and its layout, saying on stderr that it
 * was taken from the record. NULL (said) when the store records none. */
char *cli_dest_from_record(al_store *store, const char *cmd,
                           unsigned *max_nested, al_layout_kind *layout);

/* Add the signature ConfigMap of one release to cms (cmd_configmaps.c);
 * when it is not added, *code is set (EXIT_VERIFY: no signatures) and the
 * reason said on stderr (a release without signatures: only with
 * strict). */
void cli_release_configmap(al_store *s, const al_store_release *rel,
                           al_kres_configmaps *cms, int strict, int *code);

/*
 * oc-mirror v2's one signature ConfigMap (clusterresources
 * GenerateSignatureConfigMap: mirrored-release-signatures, the first
 * signature of each release, keys sha256-<hex>-<n> numbered in list
 * order) of the releases of list wanted (want[i] set; want NULL: all),
 * appended as YAML to yaml and as JSON to json (either may be NULL).
 * Nothing is appended when no release has a signature. A wanted release
 * without signatures is left out; with strict, it is also said and the
 * status is EXIT_VERIFY (the others written). Returns an exit status.
 */
int cli_ocmirror_configmap(al_store *store, const al_store_release *list,
                           size_t n, const int *want, int strict, al_buf *yaml,
                           al_buf *json);

/*
 * Write DIR/: the ImageDigestMirrorSet and ImageTagMirrorSet
 * (idms-airlock.yaml, itms-airlock.yaml; oc-mirror: idms-oc-mirror.yaml,
 * itms-oc-mirror.yaml), with icsp the ImageContentSourcePolicy alone
 * (icsp-airlock.yaml; oc-mirror v1: imageContentSourcePolicy.yaml), and
 * one signature ConfigMap per release with signatures
 * (signature-sha256-<16 hex>.yaml; oc-mirror: all of them in
 * signature-configmap.yaml and, as a v1 List, signature-configmap.json).
 * Each file written is appended to files (a JSON array, may be NULL) and,
 * unless quiet, named on stderr. Returns an exit status.
 */
int cli_cluster_resources(al_store *store, const cli_cr_opts *o, json_t *files);

/*
 * mirror --cluster-resources DIR [--registry DEST]: as above, to DEST (its
 * images placed with max_nested, --to's --max-nested-paths) or else to
 * the store's last push; with neither, only the signature
 * ConfigMaps (the mirror sets need a destination: said). prune: as
 * cli_cr_opts.prune (the default directory, cli_cr_default_dir). Returns
 * an exit status.
 */
int cli_mirror_cluster_resources(al_store *store, const char *dir,
                                 const char *registry, unsigned max_nested,
                                 al_layout_kind layout, int icsp,
                                 int oc_mirror_names, int quiet, int prune,
                                 json_t *files);

/*
 * Empty dir of the files an earlier run wrote, creating it if missing, as
 * oc-mirror v2 empties working-dir/cluster-resources before each run
 * (executor.go setupWorkingDir): for directories airlock owns only (the
 * store's, below, and DIR/working-dir/cluster-resources of oc-mirror's
 * forms), never for a --cluster-resources DIR given. Subdirectories stay.
 * Returns an exit status (said).
 */
int cli_cr_clean_dir(const char *dir);

/*
 * Where push and mirror --to write the cluster resources when not given
 * --cluster-resources, as oc-mirror always writes them into its
 * workspace: STORE/airlock/cluster-resources (beside STORE/airlock/
 * dry-run), made if missing. Its writers set cli_cr_opts.prune: the files
 * of an earlier run that this one does not write again are removed after
 * it, so the directory ends as oc-mirror's emptied one does, while a file
 * with the same resource stays as it was. Caller frees. NULL when it
 * cannot be had (said as a warning: the push itself stands).
 */
char *cli_cr_default_dir(al_store *store);

/* 1 when the cluster resources can name dest (cli_dest_parse accepts
 * it); else 0, said as a warning: the default resources of push and
 * mirror --to are then left out. */
int cli_ocm_resources_dest(const char *dest);

/*
 * Output options, checked before any network work (a bad value must not
 * cost a whole mirror or push first). Each returns EXIT_OK, or EXIT_USAGE
 * having said which option and value are wrong.
 *
 * cli_check_registry_opt: value (may be NULL: nothing to check) is a
 * destination cli_dest_parse accepts (the ImageDigestMirrorSet CRD
 * pattern). cli_check_out_dir: dir (may be NULL) is a directory this
 * process may write into, or can be created: its nearest existing
 * ancestor is one. cli_mirror_check_outputs: mirror's --registry,
 * --cluster-resources DIR and --dry-run=DIR.
 */
int cli_check_registry_opt(const char *cmd, const char *opt, const char *value);
int cli_check_out_dir(const char *cmd, const char *opt, const char *dir);
int cli_mirror_check_outputs(const char *cr_dir, const char *cr_registry,
                             const char *dry_run_dir);

#endif
