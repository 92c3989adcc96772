/* cmd_mirror.c: airlock mirror: releases, component images and additional
 * images into a store. */
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

static int push_str(const char ***list, size_t *n, const char *s)
{
	const char **grown = realloc(*list, (*n + 1) * sizeof(*grown));

	if (grown == NULL)
		return -1;
	*list = grown;
	(*list)[(*n)++] = s;
	return 0;
}

/* A refusal of the inputs (al_mirror_plan_new, or result.refused). */
static int refusal(int rc)
{
	if (rc == AL_EINVAL)
		return cli_usage_error("mirror", "%s", al_error_message());
	cli_error("%s", al_error_message());
	return EXIT_USAGE;
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
	const char *config = NULL, *store_path = NULL;
	const char **keyrings = NULL, **sigstores = NULL, **images = NULL;
	size_t nkeyrings = 0, nsigstores = 0, nimages = 0;
	al_mirror_opts mo = AL_MIRROR_OPTS_INIT;
	al_mirror_plan *plan = NULL;
	al_mirror_result res;
	al_imageset *cfg = NULL;
	al_store *store = NULL;
	al_store_opts so = AL_STORE_OPTS_INIT;
	al_transfer_opts to;
	char bytes[32];
	size_t i;
	int opt, rc, code = EXIT_OK;
	/* output options (cli_mirror_out.c) */
	const char *cr_dir = NULL, *cr_registry = NULL;
	char *cr_default = NULL;
	int json = 0, cr_ocm = 0, cr_icsp = 0;
	al_mirror_lifecycle lc = AL_MIRROR_LIFECYCLE_INIT;
	cli_mirror_to mt;             /* --to (cli_push.c) */
	cli_mirror_retry retry = {0}; /* --retry FILE (cli_mirror_retry.c) */
	/* --dest-tls-verify=false: the --to registry only */
	const char *dest_insecure[2] = {NULL, NULL};
	int dest_tls_off = 0, handled = 0;

	/* oc-mirror's forms (file://DIR, --from, --workspace, ...): run as
	 * airlock's own commands (cli_ocmirror.c) */
	code = cli_ocmirror_mirror(argc, argv, longopts, &handled);
	if (handled)
		return code;
	memset(&res, 0, sizeof(res));
	memset(&mt, 0, sizeof(mt));
	cli_common_init(&c);
	so.create = 1;
	optind = 1;
	while ((opt = cli_getopt(&c, "mirror", argc, argv, "c:h", longopts)) !=
	       -1) {
		switch (opt) {
		case 'h':
			fputs(mirror_help, stdout);
			fputs(mirror_help_sigstore, stdout);
			fputs(mirror_help_output, stdout);
			fputs(cli_mirror_lifecycle_help, stdout);
			fputs(cli_mirror_to_help, stdout);
			fputs(cli_mirror_retry_help, stdout);
			fputs(mirror_help_ocm, stdout);
			fputs("\n", stdout);
			fputs(mirror_help_sig, stdout);
			return EXIT_OK;
		case 'c':
			config = optarg;
			break;
		case OPT_STORE:
			store_path = optarg;
			break;
		case OPT_IMAGE:
			if (push_str(&images, &nimages, optarg) < 0)
				goto oom;
			break;
		case OPT_PLATFORM:
			mo.platform = optarg;
			break;
		case OPT_GRAPH_URL:
			mo.graph_url = optarg;
			break;
		case OPT_GRAPH_FILE:
			mo.graph_file = optarg;
			break;
		case OPT_KEYRING:
			if (push_str(&keyrings, &nkeyrings, optarg) < 0)
				goto oom;
			break;
		case OPT_SIG_STORE:
			if (push_str(&sigstores, &nsigstores, optarg) < 0)
				goto oom;
			break;
		case OPT_SIG_TIMEOUT:
			mo.signature_timeout = optarg;
			break;
		case OPT_IDENTITY_POLICY:
			mo.identity_policy = optarg;
			break;
		case OPT_ALLOW_UNSIGNED:
			mo.flags |= AL_MIRROR_ALLOW_UNSIGNED;
			break;
		case OPT_REQUIRE_ALL:
			mo.flags |= AL_MIRROR_REQUIRE_ALL;
			break;
		case OPT_STRICT_EXPIRY:
			mo.keyring_flags |= AL_PGP_STRICT_EXPIRY;
			break;
		case OPT_NO_DEFAULT_KEYS:
			mo.flags |= AL_MIRROR_NO_DEFAULT_KEYS;
			break;
		case OPT_NO_DEFAULT_STORE:
			mo.flags |= AL_MIRROR_NO_DEFAULT_STORE;
			break;
		case OPT_SIGSTORE:
			/* the default since sigstore carrying is on */
			break;
		case OPT_SIGSTORE_POLICY:
			mo.sigstore_policy = optarg;
			break;
		case OPT_TRUSTED_ROOT:
			mo.sigstore_trusted_root = optarg;
			break;
		case OPT_NO_SIGSTORE:
			mo.flags |= AL_MIRROR_NO_SIGSTORE;
			break;
		case OPT_SIGSTORE_ATTACH:
			if (cli_parse_attachments(&mo.sigstore_find, optarg) <
			    0) {
				code = cli_usage_error(
				    "mirror",
				    "--sigstore-attachments takes a list of "
				    "sig, att, sbom, referrers, not '%s'",
				    optarg);
				goto out;
			}
			break;
		case OPT_JSON:
			json = 1;
			break;
		case OPT_CLUSTER_RESOURCES:
			cr_dir = optarg;
			break;
		case OPT_CR_REGISTRY:
			cr_registry = optarg;
			break;
		case OPT_CR_OC_MIRROR_NAMES:
			cr_ocm = 1;
			break;
		case OPT_CR_ICSP:
			cr_icsp = 1;
			break;
		case CLI_OPT_RETRY:
			retry.file = optarg;
			break;
		case OPT_DEST_TLS_VERIFY:
			if (optarg == NULL || strcmp(optarg, "true") == 0) {
				dest_tls_off = 0;
			} else if (strcmp(optarg, "false") == 0) {
				dest_tls_off = 1;
			} else {
				code = cli_usage_error(
				    "mirror",
				    "--dest-tls-verify takes true or false, "
				    "not '%s'",
				    optarg);
				goto out;
			}
			break;
		default:
			if (cli_mirror_lifecycle_option(&lc, opt, optarg) ||
			    cli_mirror_to_option(&mt, opt, optarg))
				break;
			/* cli_getopt said what was wrong */
			code = EXIT_USAGE;
			goto out;
		}
	}
	if (json && cli_json_begin("mirror") < 0) {
		code = EXIT_RUNTIME;
		goto out;
	}
	if (cr_dir == NULL && (cr_registry != NULL || cr_ocm || cr_icsp)) {
		code = cli_usage_error(
		    "mirror", "--registry, --icsp and --oc-mirror-names "
		              "go with --cluster-resources DIR");
		goto out;
	}
	/* every output option before any network work (cli_resources.c) */
	if ((code = cli_mirror_check_outputs(cr_dir, cr_registry,
	                                     lc.dry_run_dir)) != EXIT_OK ||
	    (code = cli_mirror_to_setup(&mt)) != EXIT_OK)
		goto out;
	if (dest_tls_off && mt.push.registry == NULL) {
		code = cli_usage_error("mirror", "--dest-tls-verify goes with "
		                                 "--to docker://HOST/PREFIX");
		goto out;
	}
	if (config != NULL && (rc = al_imageset_load_ex(
	                           &cfg, config, AL_IMAGESET_OPERATORS)) < 0) {
		cli_error("%s", al_error_message());
		code = EXIT_USAGE;
		goto out;
	}
	/* oc-mirror v1's storageConfig.local.path is the store */
	if (store_path == NULL && cfg != NULL)
		store_path = cfg->store_path;
	if (store_path == NULL) {
		code = cli_usage_error("mirror", "--store DIR is required");
		goto out;
	}
	if ((code = cli_mirror_check_args((const char *const *)argv + optind,
	                                  (size_t)(argc - optind), images,
	                                  nimages, cfg)) != EXIT_OK)
		goto out;
	mo.releases = (const char *const *)argv + optind;
	mo.nreleases = (size_t)(argc - optind);
	mo.images = images;
	mo.nimages = nimages;
	mo.keyrings = keyrings;
	mo.nkeyrings = nkeyrings;
	mo.signature_stores = sigstores;
	mo.nsignature_stores = nsigstores;
	if ((code = cli_mirror_retry_prepare(&retry, &mo)) != EXIT_OK)
		goto out;
	if ((code = cli_common_start(&c)) != EXIT_OK)
		goto out;
	cli_transfer_opts(&c, &to);
	if (dest_tls_off) {
		/* as oc-mirror's --dest-tls-verify=false: that registry only */
		dest_insecure[0] = mt.host;
		to.insecure_hosts = dest_insecure;
	}
	mo.transfer = &to;
	mo.lifecycle = &lc;
	if (mt.push.registry != NULL) {
		/* --to: pushed after the mirror; a dry run maps to it */
		mo.push = &mt.push;
		mo.push_result = &mt.result;
		lc.to = mt.dest;
		lc.layout = mt.push.layout;
		lc.max_nested = mt.push.max_nested;
	}
	if ((rc = al_mirror_plan_new(&plan, cfg, &mo)) < 0) {
		code = refusal(rc);
		goto out;
	}
	if ((rc = al_store_open(&store, store_path, &so)) < 0) {
		code = cli_fail(rc, "cannot open store '%s'", store_path);
		goto out;
	}
	rc = al_mirror_plan_run(plan, store, &res);
	cli_progress_done(&c);
	if (res.refused) {
		code = refusal(rc);
		goto out;
	}
	if (lc.dry_run && rc == 0 && lc.plan != NULL) {
		code = cli_mirror_dry_run_report(&c, &lc);
		goto out;
	}
	if (!res.ran) {
		cli_error("%s", al_error_message());
		code = cli_worst(
		    cli_exit_code(rc),
		    cli_mirror_retry_finish(&retry, store_path, &res, json));
		goto out;
	}
	/* errors many images share are one line (cli_hint.c) */
	cli_report_failures((const char *const *)res.report.errors,
	                    res.report.nerrors);
	if (json)
		cli_mirror_json(&res, store_path);
	/* mirror to mirror: the cluster resources always, as oc-mirror
	 * writes them into its workspace (executor.go RunMirrorToMirror,
	 * generateClusterResources); STORE/airlock/cluster-resources when no
	 * directory is given */
	if (cr_dir == NULL && mt.push.registry != NULL &&
	    cli_ocm_resources_dest(mt.dest) &&
	    (cr_default = cli_cr_default_dir(store)) != NULL) {
		cr_dir = cr_default;
		cr_registry = mt.dest;
	}
	if (cr_dir != NULL)
		code = cli_worst(
		    code, cli_mirror_cluster_resources(
		              store, cr_dir, cr_registry, mt.push.max_nested,
		              mt.push.layout, cr_icsp, cr_ocm, c.quiet || json,
		              json ? cli_json_set_array(cli_json_root(),
		                                        "cluster_resources")
		                   : NULL));
	if (!json) {
		printf(
		    "mirrored %zu releases, %zu images: transferred %llu blobs "
		    "(%llu bytes), %llu blobs already present\n",
		    res.releases_mirrored, res.images,
		    (unsigned long long)res.report.stats.blobs_transferred,
		    (unsigned long long)res.report.stats.bytes_transferred,
		    (unsigned long long)res.report.stats.blobs_present);
		/* mirror.operators[]: one line per catalog (docs/operators.md)
		 */
		cli_mirror_catalog_lines(&res);
	}
	code = cli_worst(code, cli_mirror_to_report(&mt, store_path, json));
	code = cli_worst(
	    code, cli_mirror_retry_finish(&retry, store_path, &res, json));
	cli_info(
	    &c, "%s transferred in %.1f s",
	    cli_bytes(res.report.stats.bytes_transferred, bytes, sizeof(bytes)),
	    (double)res.report.stats.elapsed_ms / 1000.0);
	/* the worst status over the run and each release (docs/commands.md) */
	code = cli_worst(code, cli_exit_code(rc));
	for (i = 0; i < res.report.nreleases; i++)
		code = cli_worst(code,
		                 cli_exit_code(res.report.releases[i].status));
	goto out;
oom:
	cli_error("out of memory");
	code = EXIT_RUNTIME;
out:
	al_mirror_result_clear(&res);
	al_mirror_lifecycle_clear(&lc);
	cli_mirror_to_clear(&mt);
	cli_mirror_retry_clear(&retry);
	al_mirror_plan_free(plan);
	free(cr_default);
	al_store_free(store);
	al_imageset_free(cfg);
	free(keyrings);
	free(sigstores);
	free(images);
	cli_common_finish(&c);
	return code;
}
