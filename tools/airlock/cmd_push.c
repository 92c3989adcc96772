/* cmd_push.c: airlock push: every image of a store into a registry, manifest
 * bytes (digests) preserved. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_hint.h"
#include "cli_json.h"
#include "cli_push.h"
#include "cli_resources.h"
#include "cmd.h"

enum {
	OPT_STORE = OPT_COMMAND_BASE,
	OPT_MAX_NESTED,
	OPT_NO_DIGEST_TAGS,
	OPT_NO_RECORD,
	OPT_RECHECK,
	OPT_CLUSTER_RESOURCES,
	OPT_OC_MIRROR_NAMES,
	OPT_ICSP,
	OPT_LAYOUT,
	OPT_PUSH_UNTRUSTED
};

static const char push_help[] =
    "usage: airlock push --store DIR [OPTIONS] docker://HOST[:PORT][/PREFIX]\n"
    "\n"
    "Push every image of the store into the registry HOST. An image mirrored "
    "from\n"
    "REGISTRY/REPO goes to HOST/PREFIX/REPO, under the same tag; an image "
    "mirrored\n"
    "by digest (a release component) keeps its digest and gets the tag "
    "sha256-<hex>\n"
    "so that a registry's garbage collection of untagged manifests keeps "
    "it.\n"
    "Manifests are sent byte for byte so digests do not change. Blobs the "
    "registry\n"
    "already has are skipped (HEAD), blobs already pushed to another "
    "repository in\n"
    "this run are mounted. The destination is recorded in the store "
    "(airlock/pushes.json)\n"
    "for 'airlock mirrorsets'. See docs/push.md.\n"
    "\n"
    "Options:\n"
    "      --store DIR          the store to read (opened read-only; only\n"
    "                           airlock/pushes.json is written)\n"
    "      --max-nested-paths N  at most N path components per repository "
    "(registries\n"
    "                           that limit depth): the rest is joined with "
    "'-'\n"
    "      --no-digest-tags     push digest-referenced images by digest "
    "only\n"
    "      --layout L           oc-mirror (default): a release at\n"
    "                           openshift/release-images:<tag>, its "
    "components at\n"
    "                           openshift/release:<tag>-<name>; source: "
    "every image\n"
    "                           at its source path\n"
    "      --no-record          do not record the push in the store\n"
    "      --recheck            check every blob of images an earlier push "
    "left\n"
    "      --push-untrusted     also push the names an untrusted import set "
    "(unpack\n"
    "                           --accept-untrusted; airlock check lists "
    "them), left\n"
    "                           out otherwise with a warning\n";

/* the rest of the help (one string would pass C99's 4095 bytes) */
static const char push_help2[] =
    "      --cluster-resources DIR  also write IDMS, ITMS and signature "
    "ConfigMaps\n"
    "                           for this destination into DIR, and the "
    "catalogs'\n"
    "                           CatalogSource/ClusterCatalog and the "
    "UpdateService\n"
    "                           (with a graph image) when the store has "
    "them\n"
    "      --icsp               with --cluster-resources: also the "
    "ImageContentSourcePolicy,\n"
    "                           in its own file\n"
    "      --oc-mirror-names    with --cluster-resources: oc-mirror's file "
    "names\n"
    "                           (idms-oc-mirror.yaml, itms-oc-mirror.yaml, "
    "imageContentSourcePolicy.yaml,\n"
    "                           signature-configmap.yaml and "
    "signature-configmap.json)\n" CLI_JSON_HELP CLI_COMMON_HELP "\n"
    "Output: one summary line on stdout:\n"
    "  pushed I images: uploaded B blobs (N bytes), X blobs already present or "
    "mounted\n"
    "Exit status: 0 all pushed, 1 an image failed verification (a digest did "
    "not\n"
    "match) or is of a kind airlock does not support, 2 usage error, 3 "
    "runtime\n"
    "error (every image is attempted).\n";

/* The options of airlock push. */
typedef struct push_args {
	const char *store_path, *crdir, *layout_arg;
	unsigned nested;
	int json, digest_tags, record, recheck, ocm_names, icsp, untrusted;
} push_args;

/* One option; EXIT_OK when taken, else the exit status. */
static int push_option(push_args *a, int opt, const char *arg)
{
	switch (opt) {
	case OPT_STORE:
		a->store_path = arg;
		break;
	case OPT_MAX_NESTED:
		if (cli_parse_nested(arg, &a->nested) < 0)
			return cli_usage_error(
			    "push",
			    "--max-nested-paths takes a number from 1 "
			    "to 32, not '%s'",
			    arg);
		break;
	case OPT_NO_DIGEST_TAGS:
		a->digest_tags = 0;
		break;
	case OPT_NO_RECORD:
		a->record = 0;
		break;
	case OPT_RECHECK:
		a->recheck = 1;
		break;
	case OPT_PUSH_UNTRUSTED:
		a->untrusted = 1;
		break;
	case OPT_CLUSTER_RESOURCES:
		a->crdir = arg;
		break;
	case OPT_OC_MIRROR_NAMES:
		a->ocm_names = 1;
		break;
	case OPT_LAYOUT:
		a->layout_arg = arg;
		break;
	case OPT_ICSP:
		a->icsp = 1;
		break;
	case OPT_JSON:
		a->json = 1;
		break;
	default:
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

int cmd_push(int argc, char **argv)
{
	static const struct option longopts[] = {
	    CLI_COMMON_OPTIONS,
	    {"store", required_argument, NULL, OPT_STORE},
	    {"max-nested-paths", required_argument, NULL, OPT_MAX_NESTED},
	    {"no-digest-tags", no_argument, NULL, OPT_NO_DIGEST_TAGS},
	    {"no-record", no_argument, NULL, OPT_NO_RECORD},
	    {"recheck", no_argument, NULL, OPT_RECHECK},
	    {"push-untrusted", no_argument, NULL, OPT_PUSH_UNTRUSTED},
	    {"cluster-resources", required_argument, NULL,
	     OPT_CLUSTER_RESOURCES},
	    {"oc-mirror-names", no_argument, NULL, OPT_OC_MIRROR_NAMES},
	    {"icsp", no_argument, NULL, OPT_ICSP},
	    {"layout", required_argument, NULL, OPT_LAYOUT},
	    CLI_JSON_OPTION,
	    {NULL, 0, NULL, 0},
	};
	cli_common c;
	push_args a = {.digest_tags = 1, .record = 1};
	const char *store_path, *crdir;
	char *crdefault = NULL;
	char *host = NULL, *prefix = NULL, *dest = NULL;
	al_store *store = NULL;
	al_store_opts so = {.readonly = 1};
	al_transfer_opts to;
	al_push_opts po = AL_PUSH_OPTS_INIT;
	al_push_result res = AL_PUSH_RESULT_INIT;
	json_t *jimgs = NULL;
	al_layout_kind layout = AL_LAYOUT_OC_MIRROR;
	int opt, code = EXIT_OK, json, rc;

	memset(&res, 0, sizeof(res));
	cli_common_init(&c);
	optind = 1;
	while ((opt = cli_getopt(&c, "push", argc, argv, "h", longopts)) !=
	       -1) {
		if (opt == 'h') {
			fputs(push_help, stdout);
			fputs(push_help2, stdout);
			return EXIT_OK;
		}
		if ((code = push_option(&a, opt, optarg)) != EXIT_OK)
			return code;
	}
	store_path = a.store_path;
	crdir = a.crdir;
	json = a.json;
	if (json && cli_json_begin("push") < 0)
		return EXIT_RUNTIME;
	if (store_path == NULL)
		return cli_usage_error("push", "--store DIR is required");
	if (argc - optind != 1)
		return cli_usage_error("push", "give exactly one destination "
		                               "docker://HOST[:PORT][/PREFIX]");
	if ((a.ocm_names || a.icsp) && crdir == NULL)
		return cli_usage_error("push", "--oc-mirror-names and --icsp "
		                               "go with --cluster-resources "
		                               "DIR");
	if ((code = cli_push_dest("push", argv[optind], &host, &prefix)) !=
	    EXIT_OK)
		return code;
	dest = prefix[0] != '\0' ? al_sprintf("%s/%s", host, prefix)
	                         : al_strdup(host);
	if (dest == NULL) {
		code = cli_fail(AL_ENOMEM, "out of memory");
		goto out;
	}
	if ((code = cli_parse_layout("push", a.layout_arg, &layout)) != EXIT_OK)
		goto out;
	/* before the push, not after it (cli_resources.c) */
	if ((code = cli_check_out_dir("push", "--cluster-resources", crdir)) !=
	    EXIT_OK)
		goto out;
	if ((code = cli_common_start(&c)) != EXIT_OK)
		goto out;
	if ((rc = al_store_open(&store, store_path, &so)) < 0) {
		code = cli_fail(rc, "cannot open store '%s'", store_path);
		goto out;
	}
	cli_transfer_opts(&c, &to);
	po.registry = host;
	po.prefix = prefix;
	po.max_nested = a.nested;
	po.layout = layout;
	po.flags = (a.digest_tags ? 0 : AL_PUSH_NO_DIGEST_TAGS) |
	           (a.record ? 0 : AL_PUSH_NO_RECORD) |
	           (a.recheck ? AL_PUSH_RECHECK : 0) |
	           (a.untrusted ? AL_PUSH_UNTRUSTED : 0);
	po.transfer = &to;
	al_push_store(store, &po, &res);
	cli_progress_done(&c);
	if (json && res.ran) {
		cli_json_set_str(cli_json_root(), "store", store_path);
		cli_json_set_str(cli_json_root(), "registry", host);
		cli_json_set_str(cli_json_root(), "prefix", prefix);
		jimgs = cli_json_set_array(cli_json_root(), "images");
	}
	code = cli_push_report(&res, host, store_path, jimgs);
	if (!res.ran)
		goto out;
	if (json)
		cli_json_set_stats(cli_json_root(), "stats", &res.stats);
	else
		cli_push_summary(&res, NULL);
	/* disk to mirror: the cluster resources always, as oc-mirror writes
	 * them into its workspace (executor.go RunDiskToMirror,
	 * generateClusterResources); STORE/airlock/cluster-resources when
	 * no directory is given */
	if (crdir == NULL && cli_ocm_resources_dest(dest) &&
	    (crdefault = cli_cr_default_dir(store)) != NULL)
		crdir = crdefault;
	if (crdir != NULL) {
		cli_cr_opts co;
		json_t *files = json ? cli_json_set_array(cli_json_root(),
		                                          "cluster_resources")
		                     : NULL;

		memset(&co, 0, sizeof(co));
		co.dir = crdir;
		co.dest = dest;
		co.max_nested = a.nested;
		co.layout = layout;
		co.icsp = a.icsp;
		co.oc_mirror_names = a.ocm_names;
		co.quiet = c.quiet || json;
		co.untrusted = a.untrusted;
		co.prune = crdefault != NULL;
		code =
		    cli_worst(code, cli_cluster_resources(store, &co, files));
	}
out:
	al_push_result_clear(&res);
	al_store_free(store);
	free(crdefault);
	free(host);
	free(prefix);
	free(dest);
	cli_common_finish(&c);
	return code;
}
