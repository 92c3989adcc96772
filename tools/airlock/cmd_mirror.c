/* cmd_mirror.c: airlock mirror: releases, component images and additional
 * images into a store. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"
#include "cmd_verify_image.h"
#include "cli_hint.h"
#include "cli_json.h"
#include "cli_mirror_out.h"
#include "cli_push.h"
#include "cli_resources.h"
#include "cmd_lifecycle.h"
#include "cli_mirror_retry.h"
#include "cli_ocmirror.h"

enum {
	OPT_CONFIG = OPT_COMMAND_BASE,
	OPT_STORE,
	OPT_IMAGE,
	OPT_PLATFORM,
	OPT_GRAPH_URL,
	OPT_GRAPH_FILE,
	OPT_KEYRING,
	OPT_SIG_STORE,
	OPT_SIG_TIMEOUT,
	OPT_IDENTITY_POLICY,
	OPT_ALLOW_UNSIGNED,
	OPT_REQUIRE_ALL,
	OPT_STRICT_EXPIRY,
	OPT_NO_DEFAULT_KEYS,
	OPT_NO_DEFAULT_STORE,
	OPT_SIGSTORE,
	OPT_SIGSTORE_POLICY,
	OPT_NO_SIGSTORE,
	OPT_SIGSTORE_ATTACH,
	OPT_DEST_TLS_VERIFY,
	OPT_TRUSTED_ROOT
};

/* Output options (cli_mirror_out.c, cli_resources.c): values of their
 * own, clear of the list above. */
enum {
	OPT_CLUSTER_RESOURCES = OPT_COMMAND_BASE + 60,
	OPT_CR_REGISTRY,
	OPT_CR_OC_MIRROR_NAMES,
	OPT_CR_ICSP,
};

static const char mirror_help_output[] =
    "\nOutput:\n" CLI_JSON_HELP
    "      --cluster-resources DIR  write IDMS, ITMS and the signature "
    "ConfigMaps\n"
    "                           into DIR (mirror sets for --registry, else "
    "the\n"
    "                           store's last push)\n"
    "      --registry DEST      with --cluster-resources: where the images "
    "are pushed\n"
    "      --icsp               with --cluster-resources: also the "
    "ImageContentSourcePolicy\n"
    "      --oc-mirror-names    with --cluster-resources: oc-mirror's file "
    "names\n";

static const char mirror_help_ocm[] =
    "\noc-mirror v2's forms (docs/coming-from-oc-mirror.md), run as airlock's "
    "own\ncommands on a store (--store, else "
    "$OC_MIRROR_CACHE|--cache-dir|$HOME/.oc-mirror/airlock-store):\n"
    "  airlock mirror -c ISC file://DIR     mirror, then pack into DIR (a "
    "delta since\n"
    "                           the last pack, or the last before --since "
    "yyyy-MM-dd)\n"
    "  airlock mirror -c ISC --from file://DIR docker://REG  unpack DIR "
    "(a pack or\n"
    "                           oc-mirror archives), push to REG, cluster "
    "resources in\n"
    "                           DIR/working-dir/cluster-resources\n"
    "  airlock mirror -c ISC --workspace file://DIR docker://REG  mirror "
    "--to REG,\n"
    "                           cluster resources in "
    "DIR/working-dir/cluster-resources\n"
    "      --v2                 accepted and ignored\n"
    "      --dest-tls-verify=false  do not verify TLS of (and allow plain "
    "HTTP to)\n"
    "                           the --to registry only\n";

static const char mirror_help_sigstore[] =
    "\nSigstore (cosign) signatures (docs/cosign.md):\n"
    "By default each mirrored image's sha256-<hex>.sig tag and OCI "
    "referrers\n"
    "(sigstore bundles) are carried from its source into the store, "
    "digests kept;\n"
    "an image without any is normal (counted).\n"
    "      --no-sigstore        do not carry them\n"
    "      --sigstore           accepted for compatibility (the default)\n"
    "      --sigstore-attachments LIST  what to carry: sig,att,sbom,referrers\n"
    "                           (default sig,referrers)\n"
    "      --sigstore-policy F  check every mirrored image against "
    "the\n"
    "                           ClusterImagePolicy / ImagePolicy file F; "
    "refused\n"
    "                           images fail the mirror (exit 1) unless "
    "--allow-unsigned\n"
    "      --trusted-root F     check the carried signatures against the "
    "Sigstore\n"
    "                           trusted_root.json F (exit 1 when none of "
    "an image's\n"
    "                           verifies), then keep F in the store for "
    "pack\n";

static const char mirror_help[] =
    "usage: airlock mirror [--config IMAGESET.yaml] --store DIR [OPTIONS] "
    "[RELEASE...]\n"
    "\n"
    "Pull each release image, every component image its "
    "release-manifests/image-references\n"
    "names, and any additional images into the store DIR (an OCI image layout, "
    "created if\n"
    "missing). Blobs are shared across images and releases and fetched once; a "
    "rerun\n"
    "fetches only what is missing. Interrupting is safe: rerun to continue.\n"
    "\n"
    "RELEASE is an image reference: docker://REGISTRY/REPO:TAG, "
    "REGISTRY/REPO@sha256:...,\n"
    "or oci:PATH:NAME for a release in a local OCI layout.\n"
    "\n"
    "Options:\n"
    "  -c, --config FILE        ImageSetConfiguration "
    "(mirror.openshift.io/v2alpha1):\n"
    "                           mirror.platform.release, "
    "mirror.additionalImages,\n"
    "                           mirror.operators (operator catalogs, "
    "docs/operators.md) and\n"
    "                           airlock.sources (read a registry prefix from a "
    "local\n"
    "                           layout or another registry); see "
    "docs/imageset.md\n"
    "      --store DIR          the store to fill (required, unless the "
    "imageset's\n"
    "                           storageConfig.local.path names it)\n"
    "      --image REF          an additional image (repeatable)\n"
    "      --platform OS/ARCH   from multi-platform images take only this "
    "platform\n"
    "                           (default: every platform)\n"
    "      --graph-url URL      update service for mirror.platform.channels "
    "(default:\n"
    "                           airlock.graph.url, else the public OpenShift "
    "service)\n"
    "      --graph-file PATH    read channel graphs from a file or a directory "
    "of\n"
    "                           <channel>-<arch>.json instead (e.g. "
    "STORE/airlock/graph)\n"
    "\n";

/* Split in two: C11 compilers need not take longer strings. */
static const char mirror_help_sig[] =
    "Release signatures (docs/signatures.md): each release's signatures are "
    "fetched\n"
    "from the signature stores (and STORE/signatures) within the signature "
    "timeout,\n"
    "verified against the trusted keys, and saved in STORE/signatures. A "
    "release\n"
    "without a verified signature is refused unless --allow-unsigned.\n"
    "      --keyring PATH       trusted OpenPGP public keys: a key file, a "
    "directory of\n"
    "                           them or a cluster-update-keys ConfigMap "
    "(repeatable;\n"
    "                           also airlock.signatures.keyrings). "
    "Default for releases\n"
    "                           under quay.io/openshift-release-dev: the "
    "shipped Red Hat\n"
    "                           release keys\n"
    "      --no-default-keys    do not use the shipped Red Hat keys\n"
    "      --no-default-store   do not also query Red Hat's signature store "
    "for releases\n"
    "                           under quay.io/openshift-release-dev\n"
    "      --strict-expiry      also refuse keys that are expired now\n"
    "      --signature-store L  an http(s):// signature store, a directory in "
    "the same\n"
    "                           layout, or a ConfigMap file (repeatable; also\n"
    "                           airlock.signatures.stores)\n"
    "      --signature-timeout D  total time for one release's signatures "
    "(default 30s)\n"
    "      --identity-policy P  exact, repository (default) or ignore: how the "
    "signed\n"
    "                           docker-reference must match the release "
    "reference\n"
    "      --require-all        every signature store (and STORE/signatures) "
    "must\n"
    "                           give a verified signature, not just the first "
    "one\n"
    "      --allow-unsigned     mirror releases whose signatures do not verify "
    "(or\n"
    "                           with no keyring at all), recorded as "
    "unverified\n" CLI_COMMON_HELP "\n"
    "Output: one summary line on stdout:\n"
    "  mirrored R releases, I images: transferred B blobs (N bytes), X blobs "
    "already present\n"
    "Exit status: 0 all mirrored, 1 verification failed, 2 usage or "
    "configuration error,\n"
    "3 runtime error (every image is attempted; the errors are listed on "
    "stderr).\n";

/* Everything the command line gives: the library's options and the
 * CLI's own output and lifecycle options. */
typedef struct mirror_args {
	const char *config, *store_path;
	const char **keyrings, **sigstores, **images;
	size_t nkeyrings, nsigstores, nimages;
	al_mirror_opts mo;
	/* output options (cli_mirror_out.c) */
	const char *cr_dir, *cr_registry;
	int json, cr_ocm, cr_icsp;
	al_mirror_lifecycle lc;
	cli_mirror_to mt;       /* --to (cli_push.c) */
	cli_mirror_retry retry; /* --retry FILE (cli_mirror_retry.c) */
	/* --dest-tls-verify=false: the --to registry only */
	int dest_tls_off;
} mirror_args;

/* How a plain option sets its field of mirror_args. */
typedef enum {
	SET_STR,    /* the value, at off */
	SET_ON,     /* 1, at off (an int) */
	SET_FLAG,   /* bit into mo.flags */
	SET_KFLAG,  /* bit into mo.keyring_flags */
	PUSH_LIST,  /* appended to the list at off, its count at noff */
	SET_NOTHING /* accepted, does nothing */
} opt_kind;

static const struct mirror_opt {
	int opt;
	opt_kind kind;
	size_t off, noff;
	unsigned bit;
} mirror_opts[] = {
    {'c', SET_STR, offsetof(mirror_args, config), 0, 0},
    {OPT_STORE, SET_STR, offsetof(mirror_args, store_path), 0, 0},
    {OPT_IMAGE, PUSH_LIST, offsetof(mirror_args, images),
     offsetof(mirror_args, nimages), 0},
    {OPT_KEYRING, PUSH_LIST, offsetof(mirror_args, keyrings),
     offsetof(mirror_args, nkeyrings), 0},
    {OPT_SIG_STORE, PUSH_LIST, offsetof(mirror_args, sigstores),
     offsetof(mirror_args, nsigstores), 0},
    {OPT_PLATFORM, SET_STR, offsetof(mirror_args, mo.platform), 0, 0},
    {OPT_GRAPH_URL, SET_STR, offsetof(mirror_args, mo.graph_url), 0, 0},
    {OPT_GRAPH_FILE, SET_STR, offsetof(mirror_args, mo.graph_file), 0, 0},
    {OPT_SIG_TIMEOUT, SET_STR, offsetof(mirror_args, mo.signature_timeout), 0,
     0},
    {OPT_IDENTITY_POLICY, SET_STR, offsetof(mirror_args, mo.identity_policy), 0,
     0},
    {OPT_SIGSTORE_POLICY, SET_STR, offsetof(mirror_args, mo.sigstore_policy), 0,
     0},
    {OPT_TRUSTED_ROOT, SET_STR, offsetof(mirror_args, mo.sigstore_trusted_root),
     0, 0},
    {OPT_ALLOW_UNSIGNED, SET_FLAG, 0, 0, AL_MIRROR_ALLOW_UNSIGNED},
    {OPT_REQUIRE_ALL, SET_FLAG, 0, 0, AL_MIRROR_REQUIRE_ALL},
    {OPT_NO_DEFAULT_KEYS, SET_FLAG, 0, 0, AL_MIRROR_NO_DEFAULT_KEYS},
    {OPT_NO_DEFAULT_STORE, SET_FLAG, 0, 0, AL_MIRROR_NO_DEFAULT_STORE},
    {OPT_NO_SIGSTORE, SET_FLAG, 0, 0, AL_MIRROR_NO_SIGSTORE},
    {OPT_STRICT_EXPIRY, SET_KFLAG, 0, 0, AL_PGP_STRICT_EXPIRY},
    /* the default since sigstore carrying is on */
    {OPT_SIGSTORE, SET_NOTHING, 0, 0, 0},
    {OPT_JSON, SET_ON, offsetof(mirror_args, json), 0, 0},
    {OPT_CLUSTER_RESOURCES, SET_STR, offsetof(mirror_args, cr_dir), 0, 0},
    {OPT_CR_REGISTRY, SET_STR, offsetof(mirror_args, cr_registry), 0, 0},
    {OPT_CR_OC_MIRROR_NAMES, SET_ON, offsetof(mirror_args, cr_ocm), 0, 0},
    {OPT_CR_ICSP, SET_ON, offsetof(mirror_args, cr_icsp), 0, 0},
    {CLI_OPT_RETRY, SET_STR, offsetof(mirror_args, retry.file), 0, 0},
};

static int push_str(const char ***list, size_t *n, const char *s)
{
	const char **grown = realloc(*list, (*n + 1) * sizeof(*grown));

	if (grown == NULL)
		return -1;
	*list = grown;
	(*list)[(*n)++] = s;
	return 0;
}

/* A plain option from the table: 1 when it was one (*rc: 0, or -1 out
 * of memory), 0 when not. */
static int table_option(mirror_args *a, int opt, const char *arg, int *rc)
{
	char *base = (char *)a;
	size_t i;

	*rc = 0;
	for (i = 0; i < sizeof(mirror_opts) / sizeof(mirror_opts[0]); i++) {
		const struct mirror_opt *m = &mirror_opts[i];

		if (m->opt != opt)
			continue;
		switch (m->kind) {
		case SET_STR:
			*(const char **)(void *)(base + m->off) = arg;
			break;
		case SET_ON:
			*(int *)(void *)(base + m->off) = 1;
			break;
		case SET_FLAG:
			a->mo.flags |= m->bit;
			break;
		case SET_KFLAG:
			a->mo.keyring_flags |= m->bit;
			break;
		case PUSH_LIST:
			*rc = push_str((const char ***)(void *)(base + m->off),
			               (size_t *)(void *)(base + m->noff), arg);
			break;
		case SET_NOTHING:
			break;
		}
		return 1;
	}
	return 0;
}

static void print_help(void)
{
	fputs(mirror_help, stdout);
	fputs(mirror_help_sigstore, stdout);
	fputs(mirror_help_output, stdout);
	fputs(cli_mirror_lifecycle_help, stdout);
	fputs(cli_mirror_to_help, stdout);
	fputs(cli_mirror_retry_help, stdout);
	fputs(mirror_help_ocm, stdout);
	fputs("\n", stdout);
	fputs(mirror_help_sig, stdout);
}

/* An option the table does not hold; an exit status (EXIT_OK: taken). */
static int other_option(mirror_args *a, int opt, const char *arg)
{
	if (opt == OPT_SIGSTORE_ATTACH) {
		if (cli_parse_attachments(&a->mo.sigstore_find, arg) < 0)
			return cli_usage_error(
			    "mirror",
			    "--sigstore-attachments takes a list of "
			    "sig, att, sbom, referrers, not '%s'",
			    arg);
		return EXIT_OK;
	}
	if (opt == OPT_DEST_TLS_VERIFY) {
		if (arg == NULL || strcmp(arg, "true") == 0)
			a->dest_tls_off = 0;
		else if (strcmp(arg, "false") == 0)
			a->dest_tls_off = 1;
		else
			return cli_usage_error(
			    "mirror",
			    "--dest-tls-verify takes true or false, not '%s'",
			    arg);
		return EXIT_OK;
	}
	if (cli_mirror_lifecycle_option(&a->lc, opt, arg) ||
	    cli_mirror_to_option(&a->mt, opt, arg))
		return EXIT_OK;
	/* cli_getopt said what was wrong */
	return EXIT_USAGE;
}

/* The options that go together, checked before any network work, the
 * imageset loaded, the library's options completed; an exit status. */
static int check_args(mirror_args *a, al_imageset **cfg,
                      const char *const *releases, size_t nreleases)
{
	int code;

	if (a->json && cli_json_begin("mirror") < 0)
		return EXIT_RUNTIME;
	if (a->cr_dir == NULL &&
	    (a->cr_registry != NULL || a->cr_ocm || a->cr_icsp))
		return cli_usage_error(
		    "mirror", "--registry, --icsp and --oc-mirror-names "
		              "go with --cluster-resources DIR");
	/* every output option before any network work (cli_resources.c) */
	if ((code = cli_mirror_check_outputs(a->cr_dir, a->cr_registry,
	                                     a->lc.dry_run_dir)) != EXIT_OK ||
	    (code = cli_mirror_to_setup(&a->mt)) != EXIT_OK)
		return code;
	if (a->dest_tls_off && a->mt.push.registry == NULL)
		return cli_usage_error("mirror", "--dest-tls-verify goes with "
		                                 "--to docker://HOST/PREFIX");
	if (a->config != NULL &&
	    al_imageset_load_ex(cfg, a->config, AL_IMAGESET_OPERATORS) < 0) {
		cli_error("%s", al_error_message());
		return EXIT_USAGE;
	}
	/* oc-mirror v1's storageConfig.local.path is the store */
	if (a->store_path == NULL && *cfg != NULL)
		a->store_path = (*cfg)->store_path;
	if (a->store_path == NULL)
		return cli_usage_error("mirror", "--store DIR is required");
	if ((code = cli_mirror_check_args(releases, nreleases, a->images,
	                                  a->nimages, *cfg)) != EXIT_OK)
		return code;
	a->mo.releases = releases;
	a->mo.nreleases = nreleases;
	a->mo.images = a->images;
	a->mo.nimages = a->nimages;
	a->mo.keyrings = a->keyrings;
	a->mo.nkeyrings = a->nkeyrings;
	a->mo.signature_stores = a->sigstores;
	a->mo.nsignature_stores = a->nsigstores;
	return cli_mirror_retry_prepare(&a->retry, &a->mo);
}

/* A refusal of the inputs (al_mirror_plan_new, or result.refused). */
static int refusal(int rc)
{
	if (rc == AL_EINVAL)
		return cli_usage_error("mirror", "%s", al_error_message());
	cli_error("%s", al_error_message());
	return EXIT_USAGE;
}

/* What a run that ran says: failures, JSON, cluster resources, the
 * totals, --to and --retry; the worst exit status with code. */
static int report(cli_common *c, mirror_args *a, al_store *store,
                  const al_mirror_result *res, int rc, int code)
{
	const char *cr_dir = a->cr_dir, *cr_registry = a->cr_registry;
	char *cr_default = NULL;
	char bytes[32];
	size_t i;

	/* errors many images share are one line (cli_hint.c) */
	cli_report_failures((const char *const *)res->report.errors,
	                    res->report.nerrors);
	if (a->json)
		cli_mirror_json(res, a->store_path);
	/* mirror to mirror: the cluster resources always, as oc-mirror
	 * writes them into its workspace (executor.go RunMirrorToMirror,
	 * generateClusterResources); STORE/airlock/cluster-resources when no
	 * directory is given */
	if (cr_dir == NULL && a->mt.push.registry != NULL &&
	    cli_ocm_resources_dest(a->mt.dest) &&
	    (cr_default = cli_cr_default_dir(store)) != NULL) {
		cr_dir = cr_default;
		cr_registry = a->mt.dest;
	}
	if (cr_dir != NULL)
		code = cli_worst(
		    code, cli_mirror_cluster_resources(
		              store, cr_dir, cr_registry, a->mt.push.max_nested,
		              a->mt.push.layout, a->cr_icsp, a->cr_ocm,
		              c->quiet || a->json, cr_default != NULL,
		              a->json ? cli_json_set_array(cli_json_root(),
		                                           "cluster_resources")
		                      : NULL));
	free(cr_default);
	if (!a->json) {
		printf(
		    "mirrored %zu releases, %zu images: transferred %llu blobs "
		    "(%llu bytes), %llu blobs already present\n",
		    res->releases_mirrored, res->images,
		    (unsigned long long)res->report.stats.blobs_transferred,
		    (unsigned long long)res->report.stats.bytes_transferred,
		    (unsigned long long)res->report.stats.blobs_present);
		/* mirror.operators[]: one line per catalog (docs/operators.md)
		 */
		cli_mirror_catalog_lines(res);
	}
	code = cli_worst(code,
	                 cli_mirror_to_report(&a->mt, a->store_path, a->json));
	code = cli_worst(code, cli_mirror_retry_finish(&a->retry, a->store_path,
	                                               res, a->json));
	cli_info(c, "%s transferred in %.1f s",
	         cli_bytes(res->report.stats.bytes_transferred, bytes,
	                   sizeof(bytes)),
	         (double)res->report.stats.elapsed_ms / 1000.0);
	/* the worst status over the run and each release (docs/commands.md) */
	code = cli_worst(code, cli_exit_code(rc));
	for (i = 0; i < res->report.nreleases; i++)
		code = cli_worst(code,
		                 cli_exit_code(res->report.releases[i].status));
	return code;
}

/* Plan, open the store, run; an exit status. */
static int run(cli_common *c, mirror_args *a, const al_imageset *cfg)
{
	const char *dest_insecure[2] = {NULL, NULL};
	al_mirror_plan *plan = NULL;
	al_mirror_result res = AL_MIRROR_RESULT_INIT;
	al_store *store = NULL;
	al_store_opts so = AL_STORE_OPTS_INIT;
	al_transfer_opts to;
	int rc, code = EXIT_OK;

	so.create = 1;
	cli_transfer_opts(c, &to);
	if (a->dest_tls_off) {
		/* as oc-mirror's --dest-tls-verify=false: that registry only */
		dest_insecure[0] = a->mt.host;
		to.insecure_hosts = dest_insecure;
	}
	a->mo.transfer = &to;
	a->mo.lifecycle = &a->lc;
	if (a->mt.push.registry != NULL) {
		/* --to: pushed after the mirror; a dry run maps to it */
		a->mo.push = &a->mt.push;
		a->mo.push_result = &a->mt.result;
		a->lc.to = a->mt.dest;
		a->lc.layout = a->mt.push.layout;
		a->lc.max_nested = a->mt.push.max_nested;
	}
	if ((rc = al_mirror_plan_new(&plan, cfg, &a->mo)) < 0) {
		code = refusal(rc);
		goto out;
	}
	if ((rc = al_store_open(&store, a->store_path, &so)) < 0) {
		code = cli_fail(rc, "cannot open store '%s'", a->store_path);
		goto out;
	}
	rc = al_mirror_plan_run(plan, store, &res);
	cli_progress_done(c);
	if (res.refused)
		code = refusal(rc);
	else if (a->lc.dry_run && rc == 0 && a->lc.plan != NULL)
		code = cli_mirror_dry_run_report(c, &a->lc);
	else if (!res.ran) {
		cli_error("%s", al_error_message());
		code = cli_worst(cli_exit_code(rc),
		                 cli_mirror_retry_finish(
		                     &a->retry, a->store_path, &res, a->json));
	} else
		code = report(c, a, store, &res, rc, code);
out:
	al_mirror_result_clear(&res);
	al_mirror_plan_free(plan);
	al_store_free(store);
	return code;
}

static void args_clear(mirror_args *a)
{
	al_mirror_lifecycle_clear(&a->lc);
	cli_mirror_to_clear(&a->mt);
	cli_mirror_retry_clear(&a->retry);
	free(a->keyrings);
	free(a->sigstores);
	free(a->images);
}

int cmd_mirror(int argc, char **argv)
{
	static const struct option longopts[] = {
	    CLI_COMMON_OPTIONS,
	    {"config", required_argument, NULL, 'c'},
	    {"store", required_argument, NULL, OPT_STORE},
	    {"image", required_argument, NULL, OPT_IMAGE},
	    {"platform", required_argument, NULL, OPT_PLATFORM},
	    {"graph-url", required_argument, NULL, OPT_GRAPH_URL},
	    {"graph-file", required_argument, NULL, OPT_GRAPH_FILE},
	    {"keyring", required_argument, NULL, OPT_KEYRING},
	    {"signature-store", required_argument, NULL, OPT_SIG_STORE},
	    {"signature-timeout", required_argument, NULL, OPT_SIG_TIMEOUT},
	    {"identity-policy", required_argument, NULL, OPT_IDENTITY_POLICY},
	    {"allow-unsigned", no_argument, NULL, OPT_ALLOW_UNSIGNED},
	    {"require-all", no_argument, NULL, OPT_REQUIRE_ALL},
	    {"strict-expiry", no_argument, NULL, OPT_STRICT_EXPIRY},
	    {"no-default-keys", no_argument, NULL, OPT_NO_DEFAULT_KEYS},
	    {"no-default-store", no_argument, NULL, OPT_NO_DEFAULT_STORE},
	    {"sigstore", no_argument, NULL, OPT_SIGSTORE},
	    {"sigstore-policy", required_argument, NULL, OPT_SIGSTORE_POLICY},
	    {"trusted-root", required_argument, NULL, OPT_TRUSTED_ROOT},
	    {"no-sigstore", no_argument, NULL, OPT_NO_SIGSTORE},
	    {"sigstore-attachments", required_argument, NULL,
	     OPT_SIGSTORE_ATTACH},
	    CLI_JSON_OPTION,
	    {"cluster-resources", required_argument, NULL,
	     OPT_CLUSTER_RESOURCES},
	    {"registry", required_argument, NULL, OPT_CR_REGISTRY},
	    {"oc-mirror-names", no_argument, NULL, OPT_CR_OC_MIRROR_NAMES},
	    {"icsp", no_argument, NULL, OPT_CR_ICSP},
	    CLI_MIRROR_LIFECYCLE_OPTIONS,
	    CLI_MIRROR_TO_OPTIONS,
	    CLI_MIRROR_RETRY_OPTION,
	    {"dest-tls-verify", optional_argument, NULL, OPT_DEST_TLS_VERIFY},
	    {NULL, 0, NULL, 0},
	};
	cli_common c;
	mirror_args a;
	al_mirror_opts mo_init = AL_MIRROR_OPTS_INIT;
	al_mirror_lifecycle lc_init = AL_MIRROR_LIFECYCLE_INIT;
	al_imageset *cfg = NULL;
	int opt, rc, code = EXIT_OK, handled = 0;

	/* oc-mirror's forms (file://DIR, --from, --workspace, ...): run as
	 * airlock's own commands (cli_ocmirror.c) */
	code = cli_ocmirror_mirror(argc, argv, longopts, &handled);
	if (handled)
		return code;
	memset(&a, 0, sizeof(a));
	a.mo = mo_init;
	a.lc = lc_init;
	cli_common_init(&c);
	optind = 1;
	while ((opt = cli_getopt(&c, "mirror", argc, argv, "c:h", longopts)) !=
	       -1) {
		if (opt == 'h') {
			print_help();
			return EXIT_OK;
		}
		if (table_option(&a, opt, optarg, &rc)) {
			if (rc < 0) {
				cli_error("out of memory");
				code = EXIT_RUNTIME;
				goto out;
			}
			continue;
		}
		if ((code = other_option(&a, opt, optarg)) != EXIT_OK)
			goto out;
	}
	if ((code = check_args(&a, &cfg, (const char *const *)argv + optind,
	                       (size_t)(argc - optind))) != EXIT_OK)
		goto out;
	if ((code = cli_common_start(&c)) != EXIT_OK)
		goto out;
	code = run(&c, &a, cfg);
out:
	args_clear(&a);
	al_imageset_free(cfg);
	cli_common_finish(&c);
	return code;
}
