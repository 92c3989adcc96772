/* cmd_catalog.c: airlock catalog: filter the operator catalogs of an
 * ImageSetConfiguration that are in a store, rebuild them, list images. */
#include <stdlib.h>
#include <string.h>

#include "airlock/catalog.h"
#include "airlock/fs.h"
#include "airlock/imageset.h"
#include "airlock/ref.h"
#include "airlock/transfer.h"
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

static int write_resources(const char *dir, const char *registry,
                           const char *repo_path, const char *dst)
{
	const char *tag = strrchr(dst, ':');
	char *image = al_sprintf("%s/%s%s", registry, repo_path, tag);
	char *cs = al_catalog_resource_name("cs", image != NULL ? image : "");
	char *cc = al_catalog_resource_name("cc", image != NULL ? image : "");
	char *p1 = NULL, *p2 = NULL;
	al_buf b1 = AL_BUF_INIT(1 << 20), b2 = AL_BUF_INIT(1 << 20);
	int rc;

	if (image == NULL || cs == NULL || cc == NULL) {
		rc = AL_ENOMEM;
		goto out;
	}
	/* oc-mirror v2's file names: the resource name, ".yaml"
	 * (clusterresources generateCatalogSource, generateClusterCatalog) */
	p1 = al_sprintf("%s/%s.yaml", dir, cs);
	p2 = al_sprintf("%s/%s.yaml", dir, cc);
	if (p1 == NULL || p2 == NULL) {
		rc = AL_ENOMEM;
		goto out;
	}
	if ((rc = al_fs_mkdir_p(dir, 0755)) < 0 ||
	    (rc = al_catalog_source_yaml(&b1, cs, image, NULL)) < 0 ||
	    (rc = al_cluster_catalog_yaml(&b2, cc, image)) < 0 ||
	    (rc = al_fs_write_atomic(p1, b1.ptr, b1.len)) < 0 ||
	    (rc = al_fs_write_atomic(p2, b2.ptr, b2.len)) < 0)
		cli_fail(rc, "cannot write resources into '%s'", dir);
out:
	if (rc == AL_ENOMEM)
		cli_error("out of memory");
	free(image);
	free(cs);
	free(cc);
	free(p1);
	free(p2);
	al_buf_free(&b1);
	al_buf_free(&b2);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Run the transfer t over what is queued; report each failed image. */
static int run_transfer(al_transfer *t, cli_common *cc, const char *what)
{
	al_transfer_stats st;
	size_t i;
	int rc, worst = 0;

	memset(&st, 0, sizeof(st));
	rc = al_transfer_run(t, &st);
	cli_progress_done(cc);
	for (i = 0; rc < 0 && i < al_transfer_count(t); i++) {
		const char *msg = NULL;
		int status = 0;

		al_transfer_result(t, (int)i, &status, NULL, NULL, &msg);
		if (status < 0) {
			cli_error("%s: %s", what, msg != NULL ? msg : "");
			if (worst == 0 || status == AL_EVERIFY)
				worst = status;
		}
	}
	if (!cc->quiet) {
		char b[32];

		fprintf(
		    stderr,
		    "airlock: %s: %llu images, %llu blobs transferred (%s), "
		    "%llu already present\n",
		    what, (unsigned long long)st.images,
		    (unsigned long long)st.blobs_transferred,
		    cli_bytes(st.bytes_transferred, b, sizeof(b)),
		    (unsigned long long)st.blobs_present);
	}
	return rc < 0 ? (worst < 0 ? worst : rc) : 0;
}

/* Queue s (a docker reference, or oci:) for the store under dst_name
 * (NULL: its own name). */
static int queue_image(al_transfer *t, const char *s, const char *dst_name)
{
	char *with =
	    al_str_startswith(s, "docker://") || al_str_startswith(s, "oci:")
	        ? al_strdup(s)
	        : al_sprintf("docker://%s", s);
	al_imgref r;
	int rc;

	memset(&r, 0, sizeof(r));
	if (with == NULL)
		return AL_ENOMEM;
	rc = al_imgref_parse(&r, with);
	if (rc == 0)
		rc = al_transfer_add(t, &r, dst_name);
	if (rc < 0)
		cli_fail(rc, "cannot queue '%s'", s);
	al_imgref_clear(&r);
	free(with);
	return rc < 0 ? rc : 0;
}

/* One mirror.operators[] entry; appends its images to *all. t (may be
 * NULL): fetch the catalog and the images it needs into s. Returns an exit
 * status: a configuration asking for what the catalog lacks is a
 * configuration error (2), the rest goes through the exit-code map. */
static int do_one(al_store *s, const al_imageset *cfg,
                  const al_imageset_operator *op, const char *fbc,
                  const char *resources, const char *registry,
                  const char *platform, int dry_run, char ***all, size_t *nall,
                  al_transfer *t, cli_common *cc)
{
	al_catalog_selection *sel = NULL;
	char *src = NULL, *dst = NULL, *repo = NULL;
	size_t i;
	int rc, input = 0;

	if ((rc = al_catalog_names(op, &src, &dst, &repo)) < 0) {
		cli_fail(rc, "%s:%zu", cfg->path, op->line);
		goto out;
	}
	if (t != NULL) {
		/* the catalog image first: it may have moved since last time */
		if ((rc = queue_image(t, op->catalog, src)) < 0 ||
		    (rc = run_transfer(t, cc, op->catalog)) < 0)
			goto out;
	}
	if ((rc = al_catalog_select(&sel, s, op, platform, !dry_run)) < 0) {
		cli_fail(rc, "%s:%zu", cfg->path, op->line);
		if (rc == AL_ENOTFOUND) {
			al_store_image img;

			memset(&img, 0, sizeof(img));
			/* the catalog is there: the configuration asks for
			 * something it does not have */
			if (al_store_find(s, src, &img) == 0)
				input = 1;
			al_store_image_clear(&img);
		}
		goto out;
	}
	for (i = 0; i < al_catalog_unresolved_count(sel->filtered); i++)
		cli_warn("catalog '%s': %s", src,
		         al_catalog_unresolved_at(sel->filtered, i));
	{
		size_t ntag = 0, first = 0;

		/* catalogs name their images by digest; a tag can move */
		for (i = 0; i < sel->nimages; i++) {
			if (strchr(sel->images[i], '@') == NULL && ntag++ == 0)
				first = i;
		}
		if (ntag > 0)
			cli_warn(
			    "catalog '%s': %zu images are referenced by tag, "
			    "not digest (the first: '%s')",
			    src, ntag, sel->images[first]);
	}
	if (t != NULL) {
		char *what = al_sprintf("images of catalog '%s'", src);

		for (i = 0; i < sel->nimages && rc == 0; i++)
			rc = queue_image(t, sel->images[i], NULL);
		if (rc == 0)
			rc = run_transfer(t, cc, what != NULL ? what : src);
		free(what);
		if (rc < 0)
			goto out;
	}
	for (i = 0; i < sel->nimages; i++) {
		char **nv = realloc(*all, (*nall + 1) * sizeof(*nv));

		if (nv == NULL) {
			rc = AL_ENOMEM;
			cli_error("out of memory");
			goto out;
		}
		*all = nv;
		(*all)[(*nall)++] = sel->images[i];
		sel->images[i] = NULL;
	}
	if (fbc != NULL) {
		char *sub = al_catalog_resource_name("fbc", dst);
		char *d =
		    sub != NULL ? al_sprintf("%s/%s", fbc, sub + 4) : NULL;

		rc = d != NULL ? al_catalog_write_dir(sel->filtered, d)
		               : AL_ENOMEM;
		if (rc < 0)
			cli_fail(rc, "cannot write the catalog into '%s'", fbc);
		free(sub);
		free(d);
		if (rc < 0)
			goto out;
	}
	if (resources != NULL &&
	    (rc = write_resources(resources, registry, repo, dst)) < 0)
		goto out;
	if (!dry_run) {
		char ds[AL_DIGEST_STRMAX];

		fprintf(stderr,
		        "airlock: catalog '%s': %zu packages, %zu "
		        "bundles -> '%s' (%s)\n",
		        src, al_catalog_package_count(sel->filtered),
		        al_catalog_bundle_count(sel->filtered), dst,
		        al_digest_str(&sel->rebuilt.digest, ds));
	}
out:
	al_catalog_selection_free(sel);
	free(src);
	free(dst);
	free(repo);
	if (rc == 0)
		return EXIT_OK;
	return input ? cli_input_exit_code(rc) : cli_exit_code(rc);
}

/* airlock catalog list: the catalogs of a store. */
static int list_catalogs(al_store *store, const char *platform)
{
	al_store_image *imgs = NULL;
	size_t n = 0, i;
	int rc, code = EXIT_OK;

	if ((rc = al_store_list(store, &imgs, &n)) < 0)
		return cli_fail(rc, "cannot list the store");
	for (i = 0; i < n; i++) {
		char ds[AL_DIGEST_STRMAX];
		al_catalog *c = NULL;
		int kind = al_catalog_image_kind(store, &imgs[i].desc.digest,
		                                 platform);

		al_digest_str(&imgs[i].desc.digest, ds);
		if (kind == 2) {
			printf("%s %s sqlite (not supported)\n",
			       cli_esc(imgs[i].name), ds);
			continue;
		}
		if (kind != 1)
			continue;
		rc = al_catalog_open_image(&c, NULL, store,
		                           &imgs[i].desc.digest, platform);
		if (rc < 0) {
			code = cli_worst(
			    code, cli_fail(rc, "catalog '%s'", imgs[i].name));
			continue;
		}
		printf("%s %s fbc packages=%zu bundles=%zu\n",
		       cli_esc(imgs[i].name), ds, al_catalog_package_count(c),
		       al_catalog_bundle_count(c));
		al_catalog_free(c);
	}
	al_store_images_free(imgs, n);
	if (fflush(stdout) != 0) {
		cli_error("cannot write to stdout");
		code = EXIT_RUNTIME;
	}
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
	al_transfer_opts to;
	al_transfer *t = NULL;
	const char **insecure = NULL;
	int mirror = 0;
	const char *store_path = NULL, *config = NULL, *fbc = NULL;
	const char *resources = NULL, *registry = NULL, *platform = NULL;
	al_store_opts so = {.readonly = 0};
	al_imageset *cfg = NULL;
	al_store *store = NULL;
	char **all = NULL;
	size_t nall = 0, i;
	int opt, rc, dry_run = 0, list = 0, code = EXIT_OK;

	cli_common_init(&cc);

	if (argc >= 2 &&
	    (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		fputs(catalog_help, stdout);
		return EXIT_OK;
	}
	if (argc >= 2 && strcmp(argv[1], "list") == 0)
		list = 1;
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
			fbc = optarg;
			break;
		case OPT_RESOURCES:
			resources = optarg;
			break;
		case OPT_REGISTRY:
			registry = optarg;
			break;
		case OPT_PLATFORM:
			platform = optarg;
			break;
		case OPT_DRY_RUN:
			dry_run = 1;
			so.readonly = 1;
			break;
		case OPT_MIRROR:
			mirror = 1;
			break;
		default:
			return EXIT_USAGE;
		}
	}
	cli_log_start(&cc);
	if (list) {
		if (store_path == NULL)
			return cli_usage_error("catalog",
			                       "--store DIR is required");
		so.readonly = 1;
		if ((rc = al_store_open(&store, store_path, &so)) < 0) {
			return cli_fail(rc, "cannot open store '%s'",
			                store_path);
		}
		code = list_catalogs(store, platform);
		al_store_free(store);
		return code;
	}
	if (store_path == NULL || config == NULL)
		return cli_usage_error("catalog",
		                       "--store DIR and --config FILE are "
		                       "required");
	if (argc != optind)
		return cli_usage_error("catalog", "unexpected argument '%s'",
		                       argv[optind]);
	if (mirror && dry_run)
		return cli_usage_error(
		    "catalog", "--mirror and --dry-run exclude each other");
	if ((resources == NULL) != (registry == NULL))
		return cli_usage_error("catalog", "--resources and --registry "
		                                  "go together");
	/* output options before any network work (cli_resources.c) */
	if ((code = cli_check_registry_opt("catalog", "--registry",
	                                   registry)) != EXIT_OK ||
	    (code = cli_check_out_dir("catalog", "--resources", resources)) !=
	        EXIT_OK ||
	    (code = cli_check_out_dir("catalog", "--fbc", fbc)) != EXIT_OK)
		return code;
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
	so.create = mirror;
	if ((rc = al_store_open(&store, store_path, &so)) < 0) {
		code = cli_fail(rc, "cannot open store '%s'", store_path);
		goto out;
	}
	if (mirror) {
		if ((code = cli_common_start(&cc)) != EXIT_OK)
			goto out;
		cli_transfer_opts(&cc, &to);
		to.sources = cfg->sources;
		to.nsources = cfg->nsources;
		to.platform = NULL; /* every platform, as airlock mirror */
		insecure = calloc(cfg->ninsecure + 1, sizeof(*insecure));
		if (insecure == NULL) {
			cli_error("out of memory");
			code = EXIT_RUNTIME;
			goto out;
		}
		for (i = 0; i < cfg->ninsecure; i++)
			insecure[i] = cfg->insecure[i];
		to.insecure_hosts = insecure;
		if ((rc = al_transfer_new_to_store(&t, store, &to)) < 0) {
			code = cli_fail(rc, "cannot start the transfer");
			goto out;
		}
	}
	for (i = 0; i < cfg->noperators; i++) {
		rc = do_one(store, cfg, &cfg->operators[i], fbc, resources,
		            registry, platform, dry_run, &all, &nall, t, &cc);
		code = cli_worst(code, rc);
	}
	if (nall > 1)
		qsort(all, nall, sizeof(*all), cmp_str);
	for (i = 0; i < nall; i++) {
		if (i > 0 && strcmp(all[i], all[i - 1]) == 0)
			continue;
		if (printf("%s\n", cli_esc(all[i])) < 0)
			code = EXIT_RUNTIME;
	}
	if (fflush(stdout) != 0) {
		cli_error("cannot write to stdout");
		code = EXIT_RUNTIME;
	}
out:
	for (i = 0; i < nall; i++)
		free(all[i]);
	free(all);
	al_transfer_free(t);
	free(insecure);
	al_store_free(store);
	al_imageset_free(cfg);
	cli_common_finish(&cc);
	return code;
}
