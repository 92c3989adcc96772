/* cmd_imageset.c: airlock imageset check: whether `airlock mirror --config`
 * accepts ImageSetConfiguration files, and what it makes of them. */
#include <stdlib.h>
#include <string.h>

#include "cli_esc.h"
#include "cli.h"
#include "cmd.h"

/* What `airlock mirror --config` loads with (cmd_mirror.c): keep equal. */
#define CHECK_FLAGS AL_IMAGESET_OPERATORS

static const char imageset_help[] =
    "usage: airlock imageset check FILE...\n"
    "\n"
    "Load each ImageSetConfiguration as 'airlock mirror --config' does "
    "and say\n"
    "whether it is accepted (oc-mirror's mirror.openshift.io/v2alpha1 and "
    "v1alpha2,\n"
    "docs/imageset.md). An accepted file prints one line on stdout:\n"
    "  FILE: accepted: APIVERSION, N releases, N channels, N additional "
    "images, ...\n"
    "and its notes (what airlock reads differently from oc-mirror) as "
    "warnings;\n"
    "a refused one prints the reason with its line and column on stderr. "
    "A\n"
    "DeleteImageSetConfiguration is loaded as 'airlock delete --config' "
    "does.\n"
    "Nothing is fetched.\n"
    "\n"
    "Options:\n" CLI_LOCAL_HELP "\n"
    "Exit status: 0 every file accepted, 2 a file refused or missing (or "
    "a usage\n"
    "error), 3 a file could not be read.\n";

static void summary(const char *path, const al_imageset *cfg)
{
	al_buf b = AL_BUF_INIT(16 * 1024);
	size_t i;

	al_buf_printf(&b,
	              "%s: accepted: %s, %zu releases, %zu channels, %zu "
	              "additional images",
	              path,
	              cfg->api_version == 1 ? "mirror.openshift.io/v1alpha2"
	                                    : "mirror.openshift.io/v2alpha1",
	              cfg->nreleases, cfg->nchannels, cfg->nadditional);
	if (cfg->noperators > 0)
		al_buf_printf(&b, ", %zu operator catalogs", cfg->noperators);
	if (cfg->nhelm_repos > 0)
		al_buf_printf(&b, ", %zu helm repositories", cfg->nhelm_repos);
	if (cfg->nhelm_local > 0)
		al_buf_printf(&b, ", %zu local helm charts", cfg->nhelm_local);
	if (cfg->nblocked > 0)
		al_buf_printf(&b, ", %zu blocked", cfg->nblocked);
	if (cfg->kubevirt)
		al_buf_puts(&b, ", kubeVirtContainer");
	for (i = 0; i < cfg->nplatforms; i++)
		al_buf_printf(&b, "%s%s", i == 0 ? ", platforms " : ",",
		              cfg->platforms[i]);
	for (i = 0; i < cfg->narchitectures; i++)
		al_buf_printf(&b, "%s%s", i == 0 ? ", architectures " : ",",
		              cfg->architectures[i]);
	if (cfg->archive_size > 0)
		al_buf_printf(&b, ", pack --volume-size %lluG",
		              (unsigned long long)(cfg->archive_size / AL_GIB));
	if (cfg->store_path != NULL)
		al_buf_printf(&b, ", store %s", cfg->store_path);
	if (cfg->ndocuments > 1)
		al_buf_printf(&b, ", %zu documents", cfg->ndocuments);
	if (cfg->graph)
		al_buf_puts(&b, ", graph image");
	if (b.ptr != NULL)
		printf("%s\n", cli_esc((const char *)b.ptr));
	al_buf_free(&b);
}

/* A DeleteImageSetConfiguration: what `airlock delete --config` makes of
 * it (docs/commands/delete.md). */
static void delete_summary(const char *path, const al_delete_config *d)
{
	al_buf b = AL_BUF_INIT(16 * 1024);
	const al_imageset *ct = d->content;
	size_t i, withpk = 0;

	for (i = 0; ct != NULL && i < ct->noperators; i++)
		withpk += ct->operators[i].npackages > 0;
	al_buf_printf(&b,
	              "%s: accepted: DeleteImageSetConfiguration %s, %zu "
	              "releases, %zu channels, %zu additional images",
	              path,
	              d->api_version == 1 ? "mirror.openshift.io/v1alpha2"
	                                  : "mirror.openshift.io/v2alpha1",
	              d->nreleases, d->nchannels, d->nimages);
	if (d->ncatalogs > 0)
		al_buf_printf(&b, ", %zu operator catalogs (%zu by package)",
		              d->ncatalogs, withpk);
	if (ct != NULL && ct->nhelm_repos > 0)
		al_buf_printf(&b, ", %zu helm repositories", ct->nhelm_repos);
	if (ct != NULL && ct->nhelm_local > 0)
		al_buf_printf(&b, ", %zu local helm charts", ct->nhelm_local);
	if (d->graph)
		al_buf_puts(&b, ", graph image");
	if (d->nsamples > 0)
		al_buf_printf(&b, ", %zu samples", d->nsamples);
	if (b.ptr != NULL)
		printf("%s\n", cli_esc((const char *)b.ptr));
	al_buf_free(&b);
}

static int check(cli_common *c, const char *path)
{
	al_imageset *cfg = NULL;
	al_delete_config *dc = NULL;
	size_t i;
	int rc, kind = 0;

	if (al_imageset_file_kind(path, &kind) == 0 &&
	    kind == AL_IMAGESET_KIND_DELETE) {
		if ((rc = al_delete_config_load(&dc, path)) < 0)
			return rc == AL_EPARSE || rc == AL_EUNSUPPORTED ||
			               rc == AL_ELIMIT
			           ? cli_input_fail(rc, "'%s' is refused", path)
			           : cli_input_fail(rc, "cannot read '%s'",
			                            path);
		delete_summary(path, dc);
		al_delete_config_free(dc);
		return EXIT_OK;
	}

	if ((rc = al_imageset_load_ex(&cfg, path, CHECK_FLAGS)) < 0)
		return rc == AL_EPARSE || rc == AL_EUNSUPPORTED ||
		               rc == AL_ELIMIT
		           ? cli_input_fail(rc, "'%s' is refused", path)
		           : cli_input_fail(rc, "cannot read '%s'", path);
	summary(path, cfg);
	for (i = 0; !c->quiet && i < cfg->nnotes; i++)
		cli_warn("%s", cfg->notes[i]);
	al_imageset_free(cfg);
	return EXIT_OK;
}

int cmd_imageset(int argc, char **argv)
{
	static const struct option longopts[] = {
	    CLI_LOCAL_OPTIONS,
	    {NULL, 0, NULL, 0},
	};
	cli_common c;
	int opt, code = EXIT_OK;

	cli_common_init(&c);
	optind = 1;
	while ((opt = cli_getopt(&c, "imageset", argc, argv, "h", longopts)) !=
	       -1) {
		switch (opt) {
		case 'h':
			fputs(imageset_help, stdout);
			return EXIT_OK;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind >= argc)
		return cli_usage_error("imageset", "want 'check FILE...'");
	if (strcmp(argv[optind], "check") != 0)
		return cli_usage_error("imageset",
		                       "unknown subcommand '%s' (want check)",
		                       argv[optind]);
	if (++optind >= argc)
		return cli_usage_error("imageset", "check needs FILE...");
	cli_log_start(&c);
	for (; optind < argc; optind++)
		code = cli_worst(code, check(&c, argv[optind]));
	return code;
}
