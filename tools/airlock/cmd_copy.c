/* cmd_copy.c: airlock copy: one image between docker:// and oci: locations. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"

enum { OPT_PLATFORM = OPT_COMMAND_BASE, OPT_ALL };

static const char copy_help[] =
    "usage: airlock copy [OPTIONS] SRC DST\n"
    "\n"
    "Copy one image (every platform of a multi-platform image unless "
    "--platform)\n"
    "between a registry and an OCI image layout, digest-verified, manifests "
    "unchanged.\n"
    "\n"
    "Locations:\n"
    "  docker://REGISTRY/REPO[:TAG|@DIGEST]   an image in a registry\n"
    "  oci:PATH[:NAME]                        an OCI image layout; NAME is the "
    "index\n"
    "                                         annotation "
    "org.opencontainers.image.ref.name\n"
    "                                         (default for DST: the source "
    "reference)\n"
    "Supported: docker -> oci, oci -> docker, oci -> oci. For registry to "
    "registry,\n"
    "copy through a layout (two steps) or use 'airlock mirror' then 'airlock "
    "push'.\n"
    "\n"
    "Options:\n"
    "      --platform OS/ARCH[/VARIANT]  copy only that platform of an index\n"
    "      --all                         copy every platform (the "
    "default)\n" CLI_COMMON_HELP "\n"
    "Exit status: 0 copied, 1 the image failed verification (a digest did "
    "not match)\nor is of a kind airlock does not support, 2 usage error, 3 "
    "runtime error.\n";

int cmd_copy(int argc, char **argv)
{
	static const struct option longopts[] = {
	    CLI_COMMON_OPTIONS,
	    {"platform", required_argument, NULL, OPT_PLATFORM},
	    {"all", no_argument, NULL, OPT_ALL},
	    {NULL, 0, NULL, 0},
	};
	cli_common c;
	const char *platform = NULL;
	al_imgref src = {0}, dst = {0};
	al_store *store = NULL;
	al_store_opts so = {.create = 1};
	al_transfer *t = NULL;
	al_transfer_opts to;
	al_transfer_stats stats = AL_TRANSFER_STATS_INIT;
	char *dst_name = NULL;
	int opt, rc, code = EXIT_OK, idx, st;
	const char *msg;
	al_digest d;

	cli_common_init(&c);
	optind = 1;
	while ((opt = cli_getopt(&c, "copy", argc, argv, "h", longopts)) !=
	       -1) {
		switch (opt) {
		case 'h':
			fputs(copy_help, stdout);
			return EXIT_OK;
		case OPT_PLATFORM:
			platform = optarg;
			break;
		case OPT_ALL:
			platform = NULL;
			break;
		default:
			return EXIT_USAGE;
		}
	}
	if (argc - optind != 2)
		return cli_usage_error("copy", "give SRC and DST");
	if (al_imgref_parse(&src, argv[optind]) < 0 ||
	    al_imgref_parse(&dst, argv[optind + 1]) < 0) {
		code = cli_usage_error("copy", "%s", al_error_message());
		goto out;
	}
	if (src.transport == AL_TRANSPORT_DOCKER &&
	    dst.transport == AL_TRANSPORT_DOCKER) {
		code = cli_usage_error("copy",
		                       "registry to registry copies are not "
		                       "supported: copy into oci:DIR first");
		goto out;
	}
	if ((code = cli_common_start(&c)) != EXIT_OK)
		goto out;
	cli_transfer_opts(&c, &to);
	to.platform = platform;
	if (dst.transport == AL_TRANSPORT_OCI) {
		if ((rc = al_store_open(&store, dst.path, &so)) < 0) {
			code = cli_fail(rc, "cannot open OCI layout '%s'",
			                dst.path);
			goto out;
		}
		if (dst.name != NULL)
			dst_name = al_strdup(dst.name);
		else if (src.transport == AL_TRANSPORT_DOCKER)
			dst_name = al_ref_string(&src.ref);
		else
			dst_name =
			    al_strdup(src.name != NULL ? src.name : "latest");
		rc = al_transfer_new_to_store(&t, store, &to);
	} else {
		const char *ref =
		    dst.ref.digest != NULL
		        ? dst.ref.digest
		        : (dst.ref.tag != NULL ? dst.ref.tag : "latest");
		dst_name = al_sprintf("%s%s%s", dst.ref.repository,
		                      dst.ref.digest != NULL ? "@" : ":", ref);
		rc = al_transfer_new_to_registry(&t, dst.ref.registry, &to);
	}
	if (rc < 0 || dst_name == NULL) {
		code = cli_fail(rc < 0 ? rc : AL_ENOMEM, "cannot copy to '%s'",
		                argv[optind + 1]);
		goto out;
	}
	if ((idx = al_transfer_add(t, &src, dst_name)) < 0) {
		code = cli_fail(idx, "cannot copy '%s'", argv[optind]);
		goto out;
	}
	rc = al_transfer_run(t, &stats);
	cli_progress_done(&c);
	al_transfer_result(t, idx, &st, &d, NULL, &msg);
	if (st < 0) {
		cli_error("%s", msg);
		code = cli_exit_code(st);
		goto out;
	}
	if (!c.quiet) {
		char ds[AL_DIGEST_STRMAX], b[32];
		fprintf(stderr,
		        "copied %s: %llu blobs transferred (%s), %llu already "
		        "present\n",
		        al_digest_str(&d, ds),
		        (unsigned long long)stats.blobs_transferred,
		        cli_bytes(stats.bytes_transferred, b, sizeof(b)),
		        (unsigned long long)stats.blobs_present);
	}
	{
		char ds[AL_DIGEST_STRMAX];
		printf("%s\n", al_digest_str(&d, ds));
	}
	(void)rc;
out:
	al_transfer_free(t);
	al_store_free(store);
	al_imgref_clear(&src);
	al_imgref_clear(&dst);
	free(dst_name);
	cli_common_finish(&c);
	return code;
}
