/* cmd_push.c: airlock push: every image of a store into a registry, manifest
 * bytes (digests) preserved. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"

enum { OPT_STORE = OPT_COMMAND_BASE };

static const char push_help[] =
    "usage: airlock push --store DIR [OPTIONS] docker://HOST[:PORT][/PREFIX]\n"
    "\n"
    "Push every image of the store into the registry HOST. An image mirrored "
    "from\n"
    "REGISTRY/REPO goes to HOST/PREFIX/REPO, under the same tag, or by digest "
    "when it\n"
    "was referenced by digest; manifests are sent byte for byte so digests do "
    "not change.\n"
    "Blobs the registry already has are skipped (HEAD), blobs already pushed "
    "to another\n"
    "repository in this run are mounted. See docs/push.md for the repository "
    "layout, and\n"
    "'airlock mirrorsets' for the matching ImageDigestMirrorSet / "
    "ImageTagMirrorSet.\n"
    "\n"
    "Options:\n"
    "      --store DIR          the store to read (opened "
    "read-only)\n" CLI_COMMON_HELP "\n"
    "Output: one summary line on stdout:\n"
    "  pushed I images: uploaded B blobs (N bytes), X blobs already present or "
    "mounted\n"
    "Exit status: 0 all pushed, 2 usage error, 3 runtime error (every image is "
    "attempted).\n";

/* Split "docker://HOST[:PORT][/PREFIX]". */
static int parse_target(const char *s, char **host, char **prefix)
{
	const char *p, *slash;

	if (!al_str_startswith(s, "docker://"))
		return -1;
	p = s + strlen("docker://");
	slash = strchr(p, '/');
	if (slash == p || *p == '\0')
		return -1;
	*host =
	    slash != NULL ? al_strndup(p, (size_t)(slash - p)) : al_strdup(p);
	*prefix = al_strdup(slash != NULL ? slash + 1 : "");
	if (*host == NULL || *prefix == NULL)
		return -1;
	{
		size_t n = strlen(*prefix);
		while (n > 0 && (*prefix)[n - 1] == '/')
			(*prefix)[--n] = '\0';
	}
	return 0;
}

int cmd_push(int argc, char **argv)
{
	static const struct option longopts[] = {
	    CLI_COMMON_OPTIONS,
	    {"store", required_argument, NULL, OPT_STORE},
	    {NULL, 0, NULL, 0},
	};
	cli_common c;
	const char *store_path = NULL;
	char *host = NULL, *prefix = NULL;
	al_store *store = NULL;
	al_store_opts so = {.readonly = 1};
	al_store_image *imgs = NULL;
	size_t nimgs = 0, i;
	al_transfer *t = NULL;
	al_transfer_opts to;
	al_transfer_stats stats;
	int opt, rc, code = EXIT_OK;

	memset(&stats, 0, sizeof(stats));
	cli_common_init(&c);
	optind = 1;
	while ((opt = cli_getopt(&c, "push", argc, argv, "h", longopts)) !=
	       -1) {
		switch (opt) {
		case 'h':
			fputs(push_help, stdout);
			return EXIT_OK;
		case OPT_STORE:
			store_path = optarg;
			break;
		default:
			return EXIT_USAGE;
		}
	}
	if (store_path == NULL)
		return cli_usage_error("push", "--store DIR is required");
	if (argc - optind != 1)
		return cli_usage_error("push", "give exactly one destination "
		                               "docker://HOST[:PORT][/PREFIX]");
	if (parse_target(argv[optind], &host, &prefix) < 0) {
		free(host);
		free(prefix);
		return cli_usage_error(
		    "push",
		    "destination '%s' is not docker://HOST[:PORT][/PREFIX]",
		    argv[optind]);
	}
	if ((code = cli_common_start(&c)) != EXIT_OK)
		goto out;
	if ((rc = al_store_open(&store, store_path, &so)) < 0) {
		code = cli_fail(rc, "cannot open store '%s'", store_path);
		goto out;
	}
	if ((rc = al_store_list(store, &imgs, &nimgs)) < 0) {
		code = cli_fail(rc, "cannot read store '%s'", store_path);
		goto out;
	}
	cli_transfer_opts(&c, &to);
	if ((rc = al_transfer_new_to_registry(&t, host, &to)) < 0) {
		code = cli_fail(rc, "cannot push to '%s'", host);
		goto out;
	}
	for (i = 0; i < nimgs; i++) {
		char *repo = NULL, *ref = NULL, *dst = NULL;
		if ((rc = al_push_target(imgs[i].name, prefix, &repo, &ref)) <
		    0) {
			code = cli_worst(
			    code, cli_fail(rc, "skipping '%s'", imgs[i].name));
			continue;
		}
		dst = al_sprintf("%s%s%s", repo,
		                 al_str_startswith(ref, "sha256:") ? "@" : ":",
		                 ref);
		free(repo);
		free(ref);
		if (dst == NULL)
			rc = al_error_set(AL_ENOMEM, "out of memory");
		else
			rc = al_transfer_add_from_store(t, store, imgs[i].name,
			                                dst);
		if (rc < 0)
			code = cli_worst(code, cli_fail(rc, "cannot queue '%s'",
			                                imgs[i].name));
		free(dst);
	}
	rc = al_transfer_run(t, &stats);
	cli_progress_done(&c);
	for (i = 0; i < al_transfer_count(t); i++) {
		const char *msg;
		int st;
		al_transfer_result(t, (int)i, &st, NULL, NULL, &msg);
		if (st < 0) {
			cli_error("%s", msg);
			code = cli_worst(code, cli_exit_code(st));
		}
	}
	printf("pushed %llu images: uploaded %llu blobs (%llu bytes), %llu "
	       "blobs already present or mounted\n",
	       (unsigned long long)stats.images,
	       (unsigned long long)stats.blobs_transferred,
	       (unsigned long long)stats.bytes_transferred,
	       (unsigned long long)stats.blobs_present);
	code = cli_worst(code, cli_exit_code(rc));
out:
	al_transfer_free(t);
	al_store_images_free(imgs, nimgs);
	al_store_free(store);
	free(host);
	free(prefix);
	cli_common_finish(&c);
	return code;
}
