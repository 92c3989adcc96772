/* cli_resources_osus.c: the operator catalog and update-service files of a
 * cluster-resources directory (push and mirror --cluster-resources;
 * docs/graph.md, docs/operators.md). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_esc.h"
#include "cli_resources_osus.h"
#include "cmd_catalogs.h"
#include "airlock/catalog.h"

#define OSUS_MAX_OUTPUT (1 * AL_MIB)

/* "REPO:TAG" or "REPO@DIGEST" of a store name where push puts it. */
static int pushed_ref(const char *name, const cli_cr_opts *o, char **repo,
                      char **image)
{
	char *ref = NULL;
	int rc;

	*repo = *image = NULL;
	if ((rc = cli_cr_target(NULL, name, o->dest, o->max_nested, repo,
	                        &ref)) < 0)
		return rc;
	*image = al_sprintf("%s%s%s", *repo,
	                    strchr(ref, ':') != NULL ? "@" : ":", ref);
	free(ref);
	if (*image == NULL) {
		free(*repo);
		*repo = NULL;
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	return 0;
}

/* One CatalogSource and one ClusterCatalog file per recorded catalog, named
 * like the resources (oc-mirror v2: cs-<name>.yaml, cc-<name>.yaml). */
static int write_catalogs(al_store *store, const cli_cr_opts *o, json_t *files)
{
	al_store_catalog *rows = NULL;
	al_buf b = AL_BUF_INIT(OSUS_MAX_OUTPUT);
	char *now = NULL;
	size_t n = 0, i;
	int rc, code = EXIT_OK;

	if ((rc = al_store_catalogs_list(store, &rows, &n)) < 0)
		return cli_fail(rc, "cannot read the catalogs of store '%s'",
		                al_store_path(store));
	if (o->layout == AL_LAYOUT_OC_MIRROR &&
	    (now = al_clock_rfc3339_now()) == NULL) {
		al_store_catalogs_free(rows, n);
		return cli_fail(AL_ENOMEM, "out of memory");
	}
	for (i = 0; i < n; i++) {
		char *repo = NULL, *image = NULL, *cs = NULL, *cc = NULL;
		char *file = NULL;

		if (rows[i].name == NULL)
			continue;
		/* docs/security.md "Marks of untrusted imports": a catalog
		 * record no key vouched for points no cluster at an image */
		rc = cli_record_untrusted(store, AL_STORE_UNTRUSTED_CATALOG,
		                          rows[i].name);
		if (rc != 0) {
			if (rc < 0)
				code = cli_worst(
				    code, cli_fail(rc,
				                   "cannot read the untrusted "
				                   "marks of store '%s'",
				                   al_store_path(store)));
			else
				cli_warn(
				    "catalog %s: its record was written by "
				    "an untrusted import, left out (airlock "
				    "check lists it)",
				    rows[i].name);
			continue;
		}
		if ((rc = pushed_ref(rows[i].name, o, &repo, &image)) < 0) {
			code = cli_worst(code, cli_fail(rc, "cannot map '%s'",
			                                rows[i].name));
			continue;
		}
		cs = al_catalog_resource_name("cs", image);
		cc = al_catalog_resource_name("cc", image);
		al_buf_reset(&b);
		if (cs == NULL || cc == NULL)
			rc = al_error_set(AL_ENOMEM, "out of memory");
		else if (now != NULL)
			/* oc-mirror's layout: its annotations and key order */
			rc =
			    al_catalog_source_yaml_ocmirror(&b, cs, image, now);
		else
			rc = al_catalog_source_yaml(&b, cs, image, NULL);
		if (rc == 0 && (file = al_sprintf("%s.yaml", cs)) == NULL)
			rc = al_error_set(AL_ENOMEM, "out of memory");
		if (rc == 0) {
			code = cli_worst(code,
			                 cli_cr_put_file(o, file, &b, files));
			free(file);
			file = NULL;
			al_buf_reset(&b);
			rc = now != NULL
			         ? al_cluster_catalog_yaml_ocmirror(&b, cc,
			                                            image, now)
			         : al_cluster_catalog_yaml(&b, cc, image);
		}
		if (rc == 0 && (file = al_sprintf("%s.yaml", cc)) == NULL)
			rc = al_error_set(AL_ENOMEM, "out of memory");
		if (rc == 0)
			code = cli_worst(code,
			                 cli_cr_put_file(o, file, &b, files));
		else
			code = cli_worst(code,
			                 cli_fail(rc,
			                          "cannot write the resources "
			                          "of catalog '%s'",
			                          rows[i].name));
		free(file);
		free(repo);
		free(image);
		free(cs);
		free(cc);
	}
	al_store_catalogs_free(rows, n);
	al_buf_free(&b);
	free(now);
	return code;
}

/* The repository the store's releases were pushed to: the first in
 * releases.json order (the UpdateService names one); NULL and *code set
 * when none maps. */
static char *release_repository(al_store *store, const cli_cr_opts *o,
                                int *code)
{
	al_store_release *list = NULL;
	al_layout *l = NULL;
	size_t n = 0, i, others = 0;
	char *first = NULL;
	int rc;

	if ((rc = al_store_releases_list(store, &list, &n)) < 0 ||
	    (rc = al_layout_open(&l, store, o->layout)) < 0) {
		*code = cli_fail(rc, "cannot read the releases of store '%s'",
		                 al_store_path(store));
		al_store_releases_free(list, n);
		return NULL;
	}
	for (i = 0; i < n; i++) {
		char *repo = NULL, *ref = NULL;

		/* where push put it (oc-mirror's layout: its
		 * openshift/release-images, UpdateServiceGenerator) */
		if (list[i].source == NULL ||
		    cli_cr_target(l, list[i].source, o->dest, o->max_nested,
		                  &repo, &ref) < 0) {
			al_error_clear();
			continue;
		}
		free(ref);
		if (first == NULL) {
			first = repo;
			continue;
		}
		others += strcmp(first, repo) != 0;
		free(repo);
	}
	al_layout_free(l);
	al_store_releases_free(list, n);
	if (first == NULL) {
		cli_error("the store '%s' holds a graph image but no release "
		          "that maps to '%s': no UpdateService written",
		          al_store_path(store), o->dest);
		*code = EXIT_RUNTIME;
	} else if (others > 0) {
		cli_warn("the UpdateService serves the releases of '%s' only: "
		         "%zu release(s) were pushed to other repositories",
		         first, others);
	}
	return first;
}

/* updateService.yaml (oc-mirror) or updateservice-airlock.yaml, when the
 * store holds the graph-data image. */
static int write_updateservice(al_store *store, const cli_cr_opts *o,
                               json_t *files)
{
	al_store_image img;
	al_buf b = AL_BUF_INIT(OSUS_MAX_OUTPUT);
	char *repo = NULL, *image = NULL, *releases = NULL;
	int rc, code = EXIT_OK;

	memset(&img, 0, sizeof(img));
	if (al_store_find(store, AL_GRAPH_IMAGE_NAME, &img) < 0) {
		al_error_clear();
		return EXIT_OK; /* no mirror.platform.graph */
	}
	al_store_image_clear(&img);
	if ((rc = pushed_ref(AL_GRAPH_IMAGE_NAME, o, &repo, &image)) < 0) {
		code = cli_fail(rc, "cannot map '%s'", AL_GRAPH_IMAGE_NAME);
		goto out;
	}
	if ((releases = release_repository(store, o, &code)) == NULL)
		goto out;
	/* oc-mirror v2's name and replica count (UpdateServiceGenerator) */
	if ((rc = al_kres_updateservice(&b,
	                                o->oc_mirror_names
	                                    ? "update-service-oc-mirror"
	                                    : "update-service-airlock",
	                                releases, image, 2)) < 0) {
		code = cli_fail(rc, "cannot write the UpdateService");
		goto out;
	}
	code =
	    cli_cr_put_file(o,
	                    o->oc_mirror_names ? "updateService.yaml"
	                                       : "updateservice-airlock.yaml",
	                    &b, files);
out:
	free(repo);
	free(image);
	free(releases);
	al_buf_free(&b);
	return code;
}

int cli_cr_catalogs_osus(al_store *store, const cli_cr_opts *o, json_t *files)
{
	int code = write_catalogs(store, o, files);

	return cli_worst(code, write_updateservice(store, o, files));
}
