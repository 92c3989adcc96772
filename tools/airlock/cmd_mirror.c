/* cmd_mirror.c: airlock mirror: releases, component images and additional images into a store. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum { OPT_CONFIG = OPT_COMMAND_BASE, OPT_STORE, OPT_IMAGE, OPT_PLATFORM };

static const char mirror_help[] =
	"usage: airlock mirror [--config IMAGESET.yaml] --store DIR [OPTIONS] [RELEASE...]\n"
	"\n"
	"Pull each release image, every component image its release-manifests/image-references\n"
	"names, and any additional images into the store DIR (an OCI image layout, created if\n"
	"missing). Blobs are shared across images and releases and fetched once; a rerun\n"
	"fetches only what is missing. Interrupting is safe: rerun to continue.\n"
	"\n"
	"RELEASE is an image reference: docker://REGISTRY/REPO:TAG, REGISTRY/REPO@sha256:...,\n"
	"or oci:PATH:NAME for a release in a local OCI layout.\n"
	"\n"
	"Options:\n"
	"  -c, --config FILE        ImageSetConfiguration (mirror.openshift.io/v2alpha1):\n"
	"                           mirror.platform.release, mirror.additionalImages and\n"
	"                           airlock.sources (read a registry prefix from a local\n"
	"                           layout or another registry); see docs/imageset.md\n"
	"      --store DIR          the store to fill (required)\n"
	"      --image REF          an additional image (repeatable)\n"
	"      --platform OS/ARCH   from multi-platform images take only this platform\n"
	"                           (default: every platform)\n"
	CLI_COMMON_HELP
	"\n"
	"Output: one summary line on stdout:\n"
	"  mirrored R releases, I images: transferred B blobs (N bytes), X blobs already present\n"
	"Exit status: 0 all mirrored, 1 verification failed, 2 usage or configuration error,\n"
	"3 runtime error (every image is attempted; the errors are listed on stderr).\n";

static int push_str(const char ***list, size_t *n, const char *s)
{
	const char **grown = realloc(*list, (*n + 1) * sizeof(*grown));

	if (grown == NULL)
		return -1;
	*list = grown;
	(*list)[(*n)++] = s;
	return 0;
}

int cmd_mirror(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_OPTIONS,
		{"config", required_argument, NULL, 'c'},
		{"store", required_argument, NULL, OPT_STORE},
		{"image", required_argument, NULL, OPT_IMAGE},
		{"platform", required_argument, NULL, OPT_PLATFORM},
		{NULL, 0, NULL, 0},
	};
	cli_common c;
	const char *config = NULL, *store_path = NULL, *platform = NULL;
	const char **releases = NULL, **images = NULL, **insecure = NULL;
	size_t nreleases = 0, nimages = 0, ninsecure = 0, i, nimg_total = 0, nrel_ok = 0;
	al_imageset *cfg = NULL;
	al_store *store = NULL;
	al_store_opts so = {1, 0, 0};
	al_transfer_opts to;
	al_mirror_report report;
	char platbuf[64];
	char bytes[32];
	int opt, rc, code = EXIT_OK;

	memset(&report, 0, sizeof(report));
	cli_common_init(&c);
	optind = 1;
	while ((opt = getopt_long(argc, argv, "c:qvh", longopts, NULL)) != -1) {
		int r = cli_common_option(&c, opt, optarg);
		if (r < 0)
			return cli_usage_error("mirror", "invalid option value");
		if (r > 0)
			continue;
		switch (opt) {
		case 'h':
			fputs(mirror_help, stdout);
			return EXIT_OK;
		case 'c':
			config = optarg;
			break;
		case OPT_STORE:
			store_path = optarg;
			break;
		case OPT_IMAGE:
			if (push_str(&images, &nimages, optarg) < 0)
				return EXIT_RUNTIME;
			break;
		case OPT_PLATFORM:
			platform = optarg;
			break;
		default:
			free(images);
			return cli_usage_error("mirror", "unknown option");
		}
	}
	if (store_path == NULL) {
		free(images);
		return cli_usage_error("mirror", "--store DIR is required");
	}
	if (config != NULL) {
		if ((rc = al_imageset_load(&cfg, config)) < 0) {
			cli_error("%s", al_error_message());
			code = EXIT_USAGE;
			goto out;
		}
		for (i = 0; i < cfg->nreleases; i++)
			if (push_str(&releases, &nreleases, cfg->releases[i]) < 0)
				goto oom;
		for (i = 0; i < cfg->nadditional; i++)
			if (push_str(&images, &nimages, cfg->additional[i]) < 0)
				goto oom;
		for (i = 0; i < cfg->ninsecure; i++)
			if (push_str(&insecure, &ninsecure, cfg->insecure[i]) < 0)
				goto oom;
		if (platform == NULL && cfg->narchitectures == 1) {
			snprintf(platbuf, sizeof(platbuf), "linux/%s", cfg->architectures[0]);
			platform = platbuf;
		}
	}
	for (i = (size_t)optind; i < (size_t)argc; i++)
		if (push_str(&releases, &nreleases, argv[i]) < 0)
			goto oom;
	if (nreleases == 0 && nimages == 0) {
		code = cli_usage_error("mirror", "nothing to mirror: give RELEASE references or --config");
		goto out;
	}
	if (push_str(&insecure, &ninsecure, NULL) < 0)
		goto oom;
	if ((code = cli_common_start(&c)) != EXIT_OK)
		goto out;
	if ((rc = al_store_open(&store, store_path, &so)) < 0) {
		code = cli_fail(rc, "cannot open store '%s'", store_path);
		goto out;
	}
	cli_transfer_opts(&c, &to);
	to.platform = platform;
	to.insecure_hosts = insecure;
	if (cfg != NULL) {
		to.sources = cfg->sources;
		to.nsources = cfg->nsources;
	}
	rc = al_mirror(store, releases, nreleases, images, nimages, &to, &report);
	cli_progress_done(&c);
	for (i = 0; i < report.nerrors; i++)
		cli_error("%s", report.errors[i]);
	nimg_total = (size_t)report.stats.images;
	for (i = 0; i < report.nreleases; i++)
		nrel_ok += report.releases[i].status == 0;
	printf("mirrored %zu releases, %zu images: transferred %llu blobs (%llu bytes), %llu blobs already present\n",
	       nrel_ok, nimg_total, (unsigned long long)report.stats.blobs_transferred,
	       (unsigned long long)report.stats.bytes_transferred,
	       (unsigned long long)report.stats.blobs_present);
	if (!c.quiet)
		fprintf(stderr, "%s transferred in %.1f s\n", cli_bytes(report.stats.bytes_transferred, bytes, sizeof(bytes)),
			(double)report.stats.elapsed_ms / 1000.0);
	if (rc < 0)
		code = al_cancel_is_set(c.cancel) ? EXIT_RUNTIME : cli_exit_code(rc);
	if (code == EXIT_USAGE)
		code = EXIT_RUNTIME;
	goto out;
oom:
	cli_error("out of memory");
	code = EXIT_RUNTIME;
out:
	al_mirror_report_clear(&report);
	al_store_free(store);
	al_imageset_free(cfg);
	free(releases);
	free(images);
	free(insecure);
	cli_common_finish(&c);
	return code;
}
