/* cli_mirror_retry.c: airlock mirror --retry FILE (fetch only the images a
 * failed-image list names) and the closing line naming the run's own list
 * (docs/lifecycle.md "Failed-image list and --retry"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_esc.h"
#include "cli_mirror_retry.h"

const char cli_mirror_retry_help[] =
    "\nFailed images (docs/lifecycle.md): a run where some images failed "
    "lists them\n"
    "in STORE/airlock/failed/mirror-DATE_TIME.txt (named on stdout).\n"
    "      --retry FILE         mirror only the images of that list, with "
    "the same\n"
    "                           checks; no RELEASE or --image with it; "
    "--config\n"
    "                           gives only options (sources, keys, "
    "platform), not\n"
    "                           content. A retried list of the store is "
    "removed:\n"
    "                           what still fails is in a new, shorter "
    "list\n";

static int push(const char ***v, size_t *n, const char *s)
{
	const char **g = realloc(*v, (*n + 1) * sizeof(*g));

	if (g == NULL)
		return -1;
	*v = g;
	(*v)[(*n)++] = s;
	return 0;
}

int cli_mirror_retry_prepare(cli_mirror_retry *r, al_mirror_opts *mo)
{
	size_t i;
	int rc;

	if (r->file == NULL)
		return EXIT_OK;
	if (mo->nreleases > 0 || mo->nimages > 0)
		return cli_usage_error(
		    "mirror",
		    "--retry takes its images from '%s': give "
		    "no RELEASE or --image with it",
		    r->file);
	if ((rc = al_mirror_failed_load(&r->list, &r->n, r->file)) < 0) {
		cli_error("%s", al_error_message());
		return rc == AL_ENOMEM ? EXIT_RUNTIME : EXIT_USAGE;
	}
	for (i = 0; i < r->n; i++) {
		const al_mirror_failure *f = &r->list[i];
		int release = strcmp(f->kind, "release") == 0;

		if ((release ? push(&r->releases, &r->nreleases, f->source)
		             : push(&r->images, &r->nimages, f->source)) < 0) {
			cli_error("out of memory");
			return EXIT_RUNTIME;
		}
	}
	mo->releases = r->releases;
	mo->nreleases = r->nreleases;
	mo->images = r->images;
	mo->nimages = r->nimages;
	/* the imageset says how to fetch, the list what */
	mo->flags |= AL_MIRROR_IMAGESET_OPTIONS_ONLY;
	return EXIT_OK;
}

int cli_mirror_retry_finish(const cli_mirror_retry *r, const char *store_path,
                            const al_mirror_result *res, int quiet)
{
	int code = EXIT_OK, rc;

	/* superseded: nothing failed, or the run's own list was written
	 * (when it could not be, the old one stays) */
	if (r->file != NULL && (res->ran || res->failed_list != NULL) &&
	    (res->report.nfailed == 0 ||
	     (res->failed_list != NULL &&
	      strcmp(res->failed_list, r->file) != 0)) &&
	    (rc = al_mirror_failed_retire(store_path, r->file)) < 0) {
		cli_error("%s", al_error_message());
		code = EXIT_RUNTIME;
	}
	if (res->failed_list != NULL && !quiet)
		printf("failed images listed in %s: fetch only them with "
		       "airlock mirror --retry %s --store %s\n",
		       cli_esc(res->failed_list), cli_esc(res->failed_list),
		       cli_esc(store_path));
	return code;
}

void cli_mirror_retry_clear(cli_mirror_retry *r)
{
	al_mirror_failures_free(r->list, r->n);
	free(r->releases);
	free(r->images);
	memset(r, 0, sizeof(*r));
}
