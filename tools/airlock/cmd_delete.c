/* cmd_delete.c: airlock delete: releases and images out of a store, and
 * their manifests out of a registry (docs/commands/delete.md,
 * docs/store.md "Deleting"). */
#include <stdlib.h>
#include <string.h>

#include "cli_esc.h"
#include "cli.h"
#include "cli_resources.h"
#include "cmd.h"

enum {
	OPT_STORE = OPT_COMMAND_BASE,
	OPT_IMAGE,
	OPT_STATE,
	OPT_FORCE,
	OPT_DRY_RUN,
	OPT_REGISTRY,
	OPT_LAYOUT
};

static const char delete_help[] =
    "usage: airlock delete --store DIR [OPTIONS] [RELEASE...]\n"
    "       airlock delete --store DIR --config DELETE.yaml [OPTIONS]\n"
    "\n"
    "Remove releases (by version or digest) and images (by name or digest) "
    "from the\n"
    "store: their names, release records and signatures, the components no "
    "kept\n"
    "release uses, their sigstore attachments and referrers, and then every "
    "blob\n"
    "nothing kept references (a gc). With --registry, delete their manifests "
    "there\n"
    "first (indexes before their children); the registry's own garbage "
    "collection\n"
    "then frees the blobs. See docs/commands/delete.md.\n"
    "\n"
    "Options:\n"
    "      --store DIR          the store\n"
    "  -c, --config FILE        a DeleteImageSetConfiguration "
    "(mirror.openshift.io/v2alpha1,\n"
    "                           delete.platform.release / channels, "
    "additionalImages,\n"
    "                           operators[].catalog)\n"
    "      --image NAME         an image by index.json name or digest "
    "(repeatable);\n"
    "                           a release's image deletes the release\n"
    "      --state FILE         an 'airlock update --state' file: the "
    "releases it holds\n"
    "                           on to (desired, running) are refused "
    "(repeatable)\n"
    "      --force              delete them anyway\n"
    "      --dry-run            say what would go and how many bytes it "
    "frees; change\n"
    "                           nothing\n"
    "      --registry docker://HOST[:PORT]/PREFIX\n"
    "                           also delete the manifests where 'airlock "
    "push' put them\n"
    "      --layout L           with --registry: how push placed them, "
    "oc-mirror (releases\n"
    "                           at openshift/release-images, components at\n"
    "                           openshift/release) or source (source "
    "paths); default:\n"
    "                           the store's last push to that registry, else "
    "oc-mirror\n" CLI_COMMON_HELP "\n"
    "Output: a line per release, image and registry manifest, then:\n"
    "  deleted R releases, N names: freed B blobs (X bytes, SIZE)\n"
    "Exit status: 0 deleted, 2 usage or configuration error, 3 runtime "
    "error (a\n"
    "release a cluster record holds on to, a name that matches nothing, "
    "the registry).\n";

static int push_str(const char ***list, size_t *n, const char *s)
{
	const char **grown = realloc(*list, (*n + 1) * sizeof(*grown));

	if (grown == NULL)
		return -1;
	*list = grown;
	(*list)[(*n)++] = s;
	return 0;
}

/* What al_delete_run did (or would do), and what the registry keeps. */
static void print_result(const cli_common *c, const al_delete_opts *o,
                         const al_delete_result *res)
{
	char b[32];
	size_t i;

	for (i = 0; i < res->nreleases; i++)
		printf("%s release %s\n",
		       o->dry_run ? "would delete" : "deleted",
		       cli_esc(res->releases[i]));
	for (i = 0; i < res->nnames; i++)
		printf("%s name %s\n", o->dry_run ? "would delete" : "deleted",
		       cli_esc(res->names[i]));
	for (i = 0; i < res->nregistry_manifests; i++)
		printf("%s manifest %s\n",
		       o->dry_run ? "would delete" : "deleted",
		       cli_esc(res->registry_manifests[i]));
	printf("%s %zu releases, %zu names: %s %llu blobs (%llu bytes, %s)\n",
	       o->dry_run ? "would delete" : "deleted", res->nreleases,
	       res->nnames, o->dry_run ? "would free" : "freed",
	       (unsigned long long)res->blobs_freed,
	       (unsigned long long)res->bytes_freed,
	       cli_bytes(res->bytes_freed, b, sizeof(b)));
	if (o->registry != NULL && !o->dry_run &&
	    res->nregistry_manifests > 0 &&
	    res->registry_gone == res->nregistry_manifests)
		cli_warn("none of the %zu manifests was in %s: is that where "
		         "'airlock push' put this store?",
		         res->nregistry_manifests, o->registry);
	if (o->registry != NULL && !o->dry_run && !c->quiet)
		fprintf(stderr,
		        "airlock: deleted %zu manifests from the registry (%zu "
		        "were gone already); its blobs stay until the "
		        "registry's own garbage collection runs (docker-"
		        "registry garbage-collect CONFIG; quay and Harbor: "
		        "their scheduled gc)\n",
		        res->nregistry_manifests - res->registry_gone,
		        res->registry_gone);
}

int cmd_delete(int argc, char **argv)
{
	static const struct option longopts[] = {
	    CLI_COMMON_OPTIONS,
	    {"store", required_argument, NULL, OPT_STORE},
	    {"config", required_argument, NULL, 'c'},
	    {"image", required_argument, NULL, OPT_IMAGE},
	    {"state", required_argument, NULL, OPT_STATE},
	    {"force", no_argument, NULL, OPT_FORCE},
	    {"dry-run", no_argument, NULL, OPT_DRY_RUN},
	    {"registry", required_argument, NULL, OPT_REGISTRY},
	    {"layout", required_argument, NULL, OPT_LAYOUT},
	    {NULL, 0, NULL, 0},
	};
	cli_common c;
	al_delete_opts o = AL_DELETE_OPTS_INIT;
	al_delete_result res = AL_DELETE_RESULT_INIT;
	al_delete_config *cfg = NULL;
	al_store *store = NULL;
	al_store_opts so = AL_STORE_OPTS_INIT;
	al_transfer_opts to;
	const char *store_path = NULL, *config = NULL, *layout = NULL;
	const char **images = NULL, **states = NULL;
	size_t nimages = 0, nstates = 0;
	int opt, rc, code = EXIT_OK;

	cli_common_init(&c);
	optind = 1;
	while ((opt = cli_getopt(&c, "delete", argc, argv, "c:h", longopts)) !=
	       -1) {
		switch (opt) {
		case 'h':
			fputs(delete_help, stdout);
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
		case OPT_STATE:
			if (push_str(&states, &nstates, optarg) < 0)
				goto oom;
			break;
		case OPT_FORCE:
			o.force = 1;
			break;
		case OPT_DRY_RUN:
			o.dry_run = 1;
			break;
		case OPT_REGISTRY:
			if (!al_str_startswith(optarg, "docker://")) {
				code = cli_usage_error(
				    "delete",
				    "--registry takes docker://HOST[:PORT]/"
				    "PREFIX, not '%s'",
				    optarg);
				goto out;
			}
			o.registry = optarg;
			break;
		case OPT_LAYOUT:
			layout = optarg;
			break;
		default:
			code = EXIT_USAGE;
			goto out;
		}
	}
	if (store_path == NULL) {
		code = cli_usage_error("delete", "--store DIR is required");
		goto out;
	}
	if (layout != NULL) {
		if (o.registry == NULL) {
			code = cli_usage_error("delete", "--layout goes with "
			                                 "--registry");
			goto out;
		}
		if ((code = cli_parse_layout("delete", layout, &o.layout)) !=
		    EXIT_OK)
			goto out;
		o.layout_given = 1;
	}
	if (optind >= argc && nimages == 0 && config == NULL) {
		code = cli_usage_error("delete",
		                       "nothing to delete: give RELEASE, "
		                       "--image or --config");
		goto out;
	}
	if (config != NULL && (rc = al_delete_config_load(&cfg, config)) < 0) {
		/* the message names the file (and line) already */
		cli_error("%s", al_error_message());
		code = cli_input_exit_code(rc);
		goto out;
	}
	o.releases = (const char *const *)argv + optind;
	o.nreleases = (size_t)(argc - optind);
	o.images = images;
	o.nimages = nimages;
	o.config = cfg;
	o.state_files = states;
	o.nstate_files = nstates;
	if (o.registry == NULL)
		c.offline = 1;
	if ((code = cli_common_start(&c)) != EXIT_OK)
		goto out;
	if (o.registry != NULL) {
		cli_transfer_opts(&c, &to);
		o.transfer = &to;
	}
	so.readonly = o.dry_run;
	if ((rc = al_store_open(&store, store_path, &so)) < 0) {
		code = cli_fail(rc, "cannot open store '%s'", store_path);
		goto out;
	}
	rc = al_delete_run(store, &o, &res);
	if (rc < 0) {
		code =
		    cli_fail(rc, "cannot delete from store '%s'", store_path);
		goto out;
	}
	print_result(&c, &o, &res);
	goto out;
oom:
	cli_error("out of memory");
	code = EXIT_RUNTIME;
out:
	al_delete_result_clear(&res);
	al_delete_config_free(cfg);
	al_store_free(store);
	free(images);
	free(states);
	cli_common_finish(&c);
	return code;
}
