/* cmd_catalogs.c: airlock catalogs: a table of the operator catalogs a store
 * records (airlock/releases.json "catalogs"), and one of its Helm charts
 * ("charts"); the CatalogSource / ClusterCatalog resources 'airlock
 * mirrorsets' writes for the catalogs. */
#include <stdlib.h>
#include <string.h>

#include "airlock/catalog.h"
#include "airlock/helm.h"
#include "cli_esc.h"
#include "cli.h"
#include "cmd.h"
#include "cmd_catalogs.h"

enum { OPT_STORE = OPT_COMMAND_BASE };

static const char catalogs_help[] =
    "usage: airlock catalogs --store DIR\n"
    "\n"
    "List the operator catalogs 'airlock mirror' recorded in the store\n"
    "(mirror.operators[] of an ImageSetConfiguration; airlock/releases.json\n"
    "\"catalogs\"), sorted by name:\n"
    "  NAME  DIGEST  PACKAGES  BUNDLES  IMAGES  PACK  SOURCE\n"
    "NAME is the rebuilt catalog's store name (REGISTRY/(targetCatalog|"
    "repository):\n"
    "(targetTag|tag)), DIGEST its manifest, PACKAGES and BUNDLES what the "
    "filter\n"
    "selected, IMAGES the bundle and related images mirrored with it, PACK "
    "the packs\n"
    "that carried the catalog (or -), SOURCE the catalog as the imageset "
    "named it.\n"
    "When the store records Helm charts (mirror.helm), a second table "
    "follows\n"
    "(after an empty line; alone when there are charts and no catalogs):\n"
    "  CHART  VERSION  DIGEST  IMAGES  UNRESOLVED  PACK  NAME  SOURCE\n"
    "IMAGES the images found in the chart, UNRESOLVED the image fields that "
    "could\n"
    "not be read without templates, NAME the store name, SOURCE the archive "
    "URL,\n"
    "local path or oci:// reference.\n"
    "PACK reads 'untrusted' for a record an import no key verified wrote "
    "(unpack\n"
    "--accept-untrusted; airlock check names the pack); 'airlock "
    "mirrorsets' leaves\n"
    "such a catalog out.\n"
    "\n"
    "Options:\n"
    "      --store DIR   the store\n" CLI_LOCAL_HELP "\n"
    "Exit status: 0 success, 2 usage error, 3 the store cannot be read.\n";

/* 1 when the record named name of kind (AL_STORE_UNTRUSTED_CATALOG or
 * _CHART) is one an untrusted import wrote (al_store_untrusted_list: the
 * marks whose record the store still holds as it was written). */
static int untrusted_record(const al_store_untrusted *u, size_t nu, int kind,
                            const char *name)
{
	size_t i;

	for (i = 0; name != NULL && i < nu; i++)
		if (u[i].kind == kind && strcmp(u[i].name, name) == 0)
			return 1;
	return 0;
}

static int cmp_catalog(const void *a, const void *b)
{
	const al_store_catalog *x = a, *y = b;

	return strcmp(x->name != NULL ? x->name : "",
	              y->name != NULL ? y->name : "");
}

static char *packs_of(const al_store_pack *packs, size_t n,
                      const al_store_catalog *c)
{
	al_buf b = AL_BUF_INIT(64 * 1024);
	size_t i;

	for (i = 0; c->has_digest && i < n; i++)
		if (al_store_pack_carries(&packs[i], &c->digest))
			al_buf_printf(&b, "%s%s", b.len > 0 ? "," : "",
			              packs[i].id);
	if (b.len == 0)
		al_buf_puts(&b, "-");
	return al_buf_detach(&b, NULL);
}

static int cmp_chart(const void *a, const void *b)
{
	const al_store_chart *x = a, *y = b;
	int c = strcmp(x->chart != NULL ? x->chart : "",
	               y->chart != NULL ? y->chart : "");

	if (c != 0)
		return c;
	c = al_helm_version_compare(x->version != NULL ? x->version : "",
	                            y->version != NULL ? y->version : "");
	return c != 0 ? c
	              : strcmp(x->name != NULL ? x->name : "",
	                       y->name != NULL ? y->name : "");
}

static char *chart_packs(const al_store_pack *packs, size_t n,
                         const al_store_chart *c)
{
	al_buf b = AL_BUF_INIT(64 * 1024);
	size_t i;

	for (i = 0; c->has_digest && i < n; i++)
		if (al_store_pack_carries(&packs[i], &c->digest))
			al_buf_printf(&b, "%s%s", b.len > 0 ? "," : "",
			              packs[i].id);
	if (b.len == 0)
		al_buf_puts(&b, "-");
	return al_buf_detach(&b, NULL);
}

/* The charts table (sorted by chart, then version). */
static int chart_table(const al_store_chart *rows, size_t n,
                       const al_store_pack *packs, size_t npacks,
                       const al_store_untrusted *u, size_t nu)
{
	size_t i, wc = 5, wv = 7, wp = 4, wn = 4;
	char **pks = calloc(n + 1, sizeof(*pks));

	if (pks == NULL) {
		cli_error("out of memory");
		return EXIT_RUNTIME;
	}
	for (i = 0; i < n; i++) {
		if (rows[i].chart != NULL && strlen(rows[i].chart) > wc)
			wc = strlen(rows[i].chart);
		if (rows[i].version != NULL && strlen(rows[i].version) > wv)
			wv = strlen(rows[i].version);
		if (rows[i].name != NULL && strlen(rows[i].name) > wn)
			wn = strlen(rows[i].name);
		pks[i] = untrusted_record(u, nu, AL_STORE_UNTRUSTED_CHART,
		                          rows[i].name)
		             ? al_strdup("untrusted")
		             : chart_packs(packs, npacks, &rows[i]);
		if (pks[i] != NULL && strlen(pks[i]) > wp)
			wp = strlen(pks[i]);
	}
	printf("%-*s  %-*s  %-71s  %6s  %10s  %-*s  %-*s  %s\n", (int)wc,
	       "CHART", (int)wv, "VERSION", "DIGEST", "IMAGES", "UNRESOLVED",
	       (int)wp, "PACK", (int)wn, "NAME", "SOURCE");
	for (i = 0; i < n; i++) {
		const al_store_chart *c = &rows[i];
		char ds[AL_DIGEST_STRMAX], ub[32];

		snprintf(ub, sizeof(ub), "%lld", c->unresolved);
		printf("%-*s  %-*s  %-71s  %6zu  %10s  %-*s  %-*s  %s\n",
		       (int)wc, c->chart != NULL ? c->chart : "-", (int)wv,
		       c->version != NULL ? c->version : "-",
		       c->has_digest ? al_digest_str(&c->digest, ds) : "-",
		       c->nimages, c->unresolved >= 0 ? ub : "-", (int)wp,
		       pks[i] != NULL ? pks[i] : "-", (int)wn,
		       c->name != NULL ? c->name : "-",
		       c->source != NULL ? c->source : "-");
	}
	for (i = 0; i < n; i++)
		free(pks[i]);
	free(pks);
	return EXIT_OK;
}

static int table(const char *store_path)
{
	al_store *store = NULL;
	al_store_opts so = AL_STORE_OPTS_INIT;
	al_store_catalog *rows = NULL;
	al_store_chart *charts = NULL;
	al_store_pack *packs = NULL;
	al_store_untrusted *u = NULL;
	size_t n = 0, npacks = 0, ncharts = 0, nu = 0, i, wn = 4, wp = 4;
	char **pks = NULL;
	int rc, code = EXIT_OK;

	so.readonly = 1;
	if ((rc = al_store_open(&store, store_path, &so)) < 0)
		return cli_fail(rc, "cannot open store '%s'", store_path);
	if ((rc = al_store_catalogs_list(store, &rows, &n)) < 0 ||
	    (rc = al_store_charts_list(store, &charts, &ncharts)) < 0 ||
	    (rc = al_store_packs_list(store, &packs, &npacks)) < 0 ||
	    (rc = al_store_untrusted_list(store, &u, &nu)) < 0) {
		cli_fail(rc, "cannot read store '%s'", store_path);
		code = EXIT_RUNTIME;
		goto out;
	}
	if (n > 1)
		qsort(rows, n, sizeof(*rows), cmp_catalog);
	if ((pks = calloc(n + 1, sizeof(*pks))) == NULL) {
		cli_error("out of memory");
		code = EXIT_RUNTIME;
		goto out;
	}
	for (i = 0; i < n; i++) {
		/* widths of what is printed: the escaped text */
		if (rows[i].name != NULL && strlen(cli_esc(rows[i].name)) > wn)
			wn = strlen(cli_esc(rows[i].name));
		/* a record an untrusted import wrote says so instead */
		pks[i] = untrusted_record(u, nu, AL_STORE_UNTRUSTED_CATALOG,
		                          rows[i].name)
		             ? al_strdup("untrusted")
		             : packs_of(packs, npacks, &rows[i]);
		if (pks[i] != NULL && strlen(cli_esc(pks[i])) > wp)
			wp = strlen(cli_esc(pks[i]));
	}
	if (n == 0 && ncharts > 0)
		goto charts;
	printf("%-*s  %-71s  %8s  %7s  %6s  %-*s  %s\n", (int)wn, "NAME",
	       "DIGEST", "PACKAGES", "BUNDLES", "IMAGES", (int)wp, "PACK",
	       "SOURCE");
	for (i = 0; i < n; i++) {
		const al_store_catalog *c = &rows[i];
		char ds[AL_DIGEST_STRMAX], pb[32], bb[32];

		snprintf(pb, sizeof(pb), "%lld", c->packages);
		snprintf(bb, sizeof(bb), "%lld", c->bundles);
		printf("%-*s  %-71s  %8s  %7s  %6zu  %-*s  %s\n", (int)wn,
		       cli_esc(c->name),
		       c->has_digest ? al_digest_str(&c->digest, ds) : "-",
		       c->packages >= 0 ? pb : "-", c->bundles >= 0 ? bb : "-",
		       c->nimages, (int)wp, cli_esc(pks[i]),
		       cli_esc(c->source));
	}
	if (ncharts > 0)
		putchar('\n');
charts:
	if (ncharts > 1)
		qsort(charts, ncharts, sizeof(*charts), cmp_chart);
	if (ncharts > 0)
		code = chart_table(charts, ncharts, packs, npacks, u, nu);
	if (fflush(stdout) != 0) {
		cli_error("cannot write to stdout");
		code = EXIT_RUNTIME;
	}
out:
	for (i = 0; pks != NULL && i < n; i++)
		free(pks[i]);
	free(pks);
	al_store_packs_free(packs, npacks);
	al_store_untrusted_free(u, nu);
	al_store_catalogs_free(rows, n);
	al_store_charts_free(charts, ncharts);
	al_store_free(store);
	return code;
}

int cmd_catalogs(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"store", required_argument, NULL, OPT_STORE},
	    CLI_LOCAL_OPTIONS,
	    {NULL, 0, NULL, 0},
	};
	const char *store_path = NULL;
	cli_common c;
	int opt;

	cli_common_init(&c);
	optind = 1;
	while ((opt = cli_getopt(&c, "catalogs", argc, argv, "h", longopts)) !=
	       -1) {
		switch (opt) {
		case 'h':
			fputs(catalogs_help, stdout);
			return EXIT_OK;
		case OPT_STORE:
			store_path = optarg;
			break;
		default:
			return EXIT_USAGE;
		}
	}
	if (store_path == NULL)
		return cli_usage_error("catalogs", "--store DIR is required");
	if (optind != argc)
		return cli_usage_error("catalogs", "unexpected argument '%s'",
		                       argv[optind]);
	cli_log_start(&c);
	return table(store_path);
}

int cli_record_untrusted(al_store *store, int kind, const char *name)
{
	al_store_untrusted *u = NULL;
	size_t nu = 0;
	int rc;

	if ((rc = al_store_untrusted_list(store, &u, &nu)) < 0)
		return rc;
	rc = untrusted_record(u, nu, kind, name);
	al_store_untrusted_free(u, nu);
	return rc;
}

int cli_catalog_resources(al_buf *out, al_store *store, const char *prefix)
{
	al_store_catalog *rows = NULL;
	al_store_untrusted *u = NULL;
	size_t n = 0, nu = 0, i;
	int rc, written = 0;

	if ((rc = al_store_catalogs_list(store, &rows, &n)) < 0 ||
	    (rc = al_store_untrusted_list(store, &u, &nu)) < 0)
		goto done;
	if (n > 1)
		qsort(rows, n, sizeof(*rows), cmp_catalog);
	for (i = 0; rc == 0 && i < n; i++) {
		char *repo = NULL, *ref = NULL, *image = NULL, *cs = NULL,
		     *cc = NULL;

		if (rows[i].name == NULL)
			continue;
		/* docs/security.md "Marks of untrusted imports": a catalog
		 * record no key vouched for points no cluster at an image */
		if (untrusted_record(u, nu, AL_STORE_UNTRUSTED_CATALOG,
		                     rows[i].name)) {
			cli_warn("catalog %s: its record was written by an "
			         "untrusted import, left out (airlock check "
			         "lists it)",
			         cli_esc(rows[i].name));
			continue;
		}
		/* where push put it: the one mapping (al_push_target) */
		if ((rc = al_push_target(rows[i].name, prefix, &repo, &ref)) <
		    0)
			break;
		image = al_sprintf("%s%s%s", repo,
		                   strchr(ref, ':') != NULL ? "@" : ":", ref);
		cs = al_catalog_resource_name("cs", image != NULL ? image : "");
		cc = al_catalog_resource_name("cc", image != NULL ? image : "");
		if (image == NULL || cs == NULL || cc == NULL)
			rc = al_error_set(AL_ENOMEM, "out of memory");
		if (rc == 0 && (rc = al_buf_puts(out, "---\n")) == 0 &&
		    (rc = al_catalog_source_yaml(out, cs, image, NULL)) == 0 &&
		    (rc = al_buf_puts(out, "---\n")) == 0 &&
		    (rc = al_cluster_catalog_yaml(out, cc, image)) == 0)
			written = 1;
		free(repo);
		free(ref);
		free(image);
		free(cs);
		free(cc);
	}
done:
	al_store_untrusted_free(u, nu);
	al_store_catalogs_free(rows, n);
	return rc < 0 ? rc : written;
}
