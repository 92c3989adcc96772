/* cmd_catalog.c: airlock catalog: filter the operator catalogs of an
 * ImageSetConfiguration that are in a store, rebuild them, list images. */
#include <stdlib.h>
#include <string.h>

#include "airlock/catalog.h"
#include "airlock/imageset.h"
#include "cli_esc.h"
#include "cli.h"
#include "cli_resources.h"
#include "cmd.h"

enum {
	OPT_STORE = OPT_COMMAND_BASE,
	OPT_CONFIG,
	OPT_FBC,
	OPT_RESOURCES,
	OPT_REGISTRY,
	OPT_PLATFORM,
	OPT_DRY_RUN,
	OPT_MIRROR,
};

static const char catalog_help[] =
    "usage: airlock catalog filter --store DIR --config IMAGESET [options]\n"
    "       airlock catalog list --store DIR [--platform OS/ARCH]\n"
    "\n"
    "For each mirror.operators[] entry of IMAGESET whose catalog image is "
    "in the store\n"
    "(or, with --mirror, fetched first from docker:// or an oci: layout): "
    "read its\n"
    "file-based catalog from the image layers, select what the entry asks "
    "for\n"
    "(packages, channels, versions, bundles, full, dependencies, as oc-mirror "
    "v2 does;\n"
    "docs/operators.md), rebuild the catalog image with only the selection "
    "and tag it\n"
    "in the store as REGISTRY/(targetCatalog|repository):(targetTag|tag). "
    "Prints every\n"
    "image the selection needs (bundle images and related images), one per "
    "line,\n"
    "sorted.\n"
    "\n"
    "'list' prints every operator catalog of the store: NAME DIGEST fbc\n"
    "packages=N bundles=M, or NAME DIGEST sqlite (not supported).\n"
    "\n"
    "Options:\n"
    "      --store DIR         the store holding the catalog images\n"
    "      --config FILE       the ImageSetConfiguration\n"
    "      --fbc DIR           also write each filtered catalog as "
    "DIR/<name>/<package>/catalog.json\n"
    "      --resources DIR     write CatalogSource and ClusterCatalog YAML "
    "there\n"
    "      --registry HOST[:PORT][/PREFIX]\n"
    "                          where the catalogs will be pushed (for "
    "--resources)\n"
    "      --platform OS/ARCH  read the catalog from this platform's image and "
    "rebuild\n"
    "                          only it (default: read linux/amd64, rebuild "
    "every\n"
    "                          platform of a multi-arch catalog)\n"
    "      --dry-run           filter and list, rebuild nothing\n"
    "      --mirror            fetch each catalog image into the store "
    "first, and\n"
    "                          mirror every image the selection needs into "
    "it\n"
    "                          (the transfer engine of 'airlock mirror': "
    "deduplicated,\n"
    "                          --parallel, airlock.sources and "
    "insecureRegistries)\n" CLI_COMMON_HELP "\n"
    "Exit status: 0 done, 1 a catalog of a kind airlock does not support "
    "(SQLite)\n"
    "or content that failed verification, 2 usage or configuration error, "
    "3 runtime\n"
    "error.\n";

/* What the events of one run come to: the worst exit status. */
typedef struct cat_state {
	cli_common *cc;
	int code;
} cat_state;

static void transferred(const cli_common *cc, const al_catalog_run_event *ev)
{
	char b[32];

	if (cc->quiet)
		return;
	fprintf(stderr,
	        "airlock: %s: %llu images, %llu blobs transferred (%s), "
	        "%llu already present\n",
	        ev->subject, (unsigned long long)ev->stats->images,
	        (unsigned long long)ev->stats->blobs_transferred,
	        cli_bytes(ev->stats->bytes_transferred, b, sizeof(b)),
	        (unsigned long long)ev->stats->blobs_present);
}

/* Print one event of al_catalog_run; keep the worst exit status. */
static void on_event(void *ud, const al_catalog_run_event *ev)
{
	cat_state *st = ud;
	char ds[AL_DIGEST_STRMAX];

	al_digest_str(&ev->digest, ds);
	switch (ev->kind) {
	case AL_CATALOG_RUN_EV_FAILED:
		(void)cli_fail(ev->status, "%s", ev->subject);
		break;
	case AL_CATALOG_RUN_EV_ERROR:
		if (ev->subject != NULL)
			cli_error("%s: %s", ev->subject, ev->message);
		else
			cli_error("%s", ev->message);
		break;
	case AL_CATALOG_RUN_EV_WARNING:
		cli_warn("%s", ev->message);
		break;
	case AL_CATALOG_RUN_EV_TRANSFER_END:
		cli_progress_done(st->cc);
		break;
	case AL_CATALOG_RUN_EV_TRANSFERRED:
		transferred(st->cc, ev);
		break;
	case AL_CATALOG_RUN_EV_REBUILT:
		fprintf(stderr,
		        "airlock: catalog '%s': %zu packages, %zu "
		        "bundles -> '%s' (%s)\n",
		        ev->subject, ev->packages, ev->bundles, ev->target, ds);
		break;
	case AL_CATALOG_RUN_EV_LISTED:
		if (ev->sqlite)
			printf("%s %s sqlite (not supported)\n",
			       cli_esc(ev->subject), ds);
		else
			printf("%s %s fbc packages=%zu bundles=%zu\n",
			       cli_esc(ev->subject), ds, ev->packages,
			       ev->bundles);
		break;
	case AL_CATALOG_RUN_EV_DONE:
		if (ev->status < 0)
			st->code = cli_worst(
			    st->code, ev->input
			                  ? cli_input_exit_code(ev->status)
			                  : cli_exit_code(ev->status));
		break;
	}
}

/* Run the library's catalog over store; print the images; an exit
 * status. */
static int run(cli_common *cc, al_store *store, const al_imageset *cfg,
               al_catalog_run_opts *o)
{
	cat_state st = {.cc = cc, .code = EXIT_OK};
	al_catalog_run_report rep = AL_CATALOG_RUN_REPORT_INIT;
	size_t i;
	int rc;

	o->on_event = on_event;
	o->ud = &st;
	rc = al_catalog_run(store, cfg, o, &rep);
	if (rc < 0 && st.code == EXIT_OK)
		st.code = cli_fail(rc, "catalog");
	for (i = 0; i < rep.nimages; i++) {
		if (printf("%s\n", cli_esc(rep.images[i])) < 0)
			st.code = EXIT_RUNTIME;
	}
	al_catalog_run_report_clear(&rep);
	if (rc < 0 && o->mode == AL_CATALOG_RUN_FILTER)
		return st.code;
	if (fflush(stdout) != 0) {
		cli_error("cannot write to stdout");
		st.code = EXIT_RUNTIME;
	}
	return st.code;
}

/* The checks of the options before any work; an exit status. */
static int check_opts(const al_catalog_run_opts *o, const char *store_path,
                      const char *config, int nargs, const char *arg)
{
	int code;

	if (store_path == NULL || config == NULL)
		return cli_usage_error("catalog",
		                       "--store DIR and --config FILE are "
		                       "required");
	if (nargs != 0)
		return cli_usage_error("catalog", "unexpected argument '%s'",
		                       arg);
	if (o->mirror && o->dry_run)
		return cli_usage_error(
		    "catalog", "--mirror and --dry-run exclude each other");
	if ((o->resources == NULL) != (o->registry == NULL))
		return cli_usage_error("catalog", "--resources and --registry "
		                                  "go together");
	/* output options before any network work (cli_resources.c) */
	if ((code = cli_check_registry_opt("catalog", "--registry",
	                                   o->registry)) != EXIT_OK ||
	    (code = cli_check_out_dir("catalog", "--resources",
	                              o->resources)) != EXIT_OK ||
	    (code = cli_check_out_dir("catalog", "--fbc", o->fbc)) != EXIT_OK)
		return code;
	return EXIT_OK;
}

/* airlock catalog list: the catalogs of a store. */
static int list(cli_common *cc, const char *store_path, al_catalog_run_opts *o)
{
	al_store_opts so = AL_STORE_OPTS_INIT;
	al_store *store = NULL;
	int rc, code;

	if (store_path == NULL)
		return cli_usage_error("catalog", "--store DIR is required");
	so.readonly = 1;
	if ((rc = al_store_open(&store, store_path, &so)) < 0)
		return cli_fail(rc, "cannot open store '%s'", store_path);
	o->mode = AL_CATALOG_RUN_LIST;
	code = run(cc, store, NULL, o);
	al_store_free(store);
	return code;
}

/* airlock catalog filter, the options checked. */
static int filter(cli_common *cc, const char *store_path, const char *config,
                  al_catalog_run_opts *o)
{
	al_store_opts so = AL_STORE_OPTS_INIT;
	al_transfer_opts to;
	al_imageset *cfg = NULL;
	al_store *store = NULL;
	int rc, code = EXIT_OK;

	if ((rc = al_imageset_load_ex(&cfg, config, AL_IMAGESET_OPERATORS)) <
	    0) {
		code = cli_input_fail(rc, "cannot load '%s'", config);
		goto out;
	}
	if (cfg->noperators == 0) {
		cli_error("'%s' has no mirror.operators", config);
		code = EXIT_USAGE;
		goto out;
	}
	so.readonly = o->dry_run;
	so.create = o->mirror;
	if ((rc = al_store_open(&store, store_path, &so)) < 0) {
		code = cli_fail(rc, "cannot open store '%s'", store_path);
		goto out;
	}
	if (o->mirror) {
		if ((code = cli_common_start(cc)) != EXIT_OK)
			goto out;
		cli_transfer_opts(cc, &to);
		o->transfer = &to;
	}
	code = run(cc, store, cfg, o);
out:
	al_store_free(store);
	al_imageset_free(cfg);
	return code;
}

int cmd_catalog(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"store", required_argument, NULL, OPT_STORE},
	    {"config", required_argument, NULL, OPT_CONFIG},
	    {"fbc", required_argument, NULL, OPT_FBC},
	    {"resources", required_argument, NULL, OPT_RESOURCES},
	    {"registry", required_argument, NULL, OPT_REGISTRY},
	    {"platform", required_argument, NULL, OPT_PLATFORM},
	    {"dry-run", no_argument, NULL, OPT_DRY_RUN},
	    {"mirror", no_argument, NULL, OPT_MIRROR},
	    CLI_COMMON_OPTIONS,
	    {NULL, 0, NULL, 0},
	};
	cli_common cc;
	al_catalog_run_opts o = AL_CATALOG_RUN_OPTS_INIT;
	const char *store_path = NULL, *config = NULL;
	int opt, is_list = 0, code = EXIT_OK;

	cli_common_init(&cc);

	if (argc >= 2 &&
	    (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		fputs(catalog_help, stdout);
		return EXIT_OK;
	}
	if (argc >= 2 && strcmp(argv[1], "list") == 0)
		is_list = 1;
	else if (argc < 2 || strcmp(argv[1], "filter") != 0)
		return cli_usage_error("catalog",
		                       "the subcommand is 'filter' or 'list'");
	argc--;
	argv++;
	optind = 1;
	while ((opt = cli_getopt(&cc, "catalog", argc, argv, "h", longopts)) !=
	       -1) {
		switch (opt) {
		case 'h':
			fputs(catalog_help, stdout);
			return EXIT_OK;
		case OPT_STORE:
			store_path = optarg;
			break;
		case OPT_CONFIG:
			config = optarg;
			break;
		case OPT_FBC:
			o.fbc = optarg;
			break;
		case OPT_RESOURCES:
			o.resources = optarg;
			break;
		case OPT_REGISTRY:
			o.registry = optarg;
			break;
		case OPT_PLATFORM:
			o.platform = optarg;
			break;
		case OPT_DRY_RUN:
			o.dry_run = 1;
			break;
		case OPT_MIRROR:
			o.mirror = 1;
			break;
		default:
			return EXIT_USAGE;
		}
	}
	cli_log_start(&cc);
	if (is_list)
		return list(&cc, store_path, &o);
	if ((code = check_opts(&o, store_path, config, argc - optind,
	                       argv[optind])) != EXIT_OK)
		return code;
	code = filter(&cc, store_path, config, &o);
	cli_common_finish(&cc);
	return code;
}
