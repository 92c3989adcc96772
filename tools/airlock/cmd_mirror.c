/* cmd_mirror.c: airlock mirror: releases, component images and additional
 * images into a store. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"
#include "cmd_verify_image.h"

enum {
	OPT_CONFIG = OPT_COMMAND_BASE,
	OPT_STORE,
	OPT_IMAGE,
	OPT_PLATFORM,
	OPT_GRAPH_URL,
	OPT_GRAPH_FILE,
	OPT_KEYRING,
	OPT_SIG_STORE,
	OPT_SIG_TIMEOUT,
	OPT_IDENTITY_POLICY,
	OPT_ALLOW_UNSIGNED,
	OPT_REQUIRE_ALL,
	OPT_STRICT_EXPIRY,
	OPT_NO_DEFAULT_KEYS,
	OPT_NO_DEFAULT_STORE,
	OPT_SIGSTORE,
	OPT_SIGSTORE_POLICY
};

static const char mirror_help_sigstore[] =
    "\nSigstore (cosign) signatures (docs/cosign.md):\n"
    "      --sigstore           also carry each image's sha256-<hex>.sig tag "
    "and OCI\n"
    "                           referrers from its source into the store\n"
    "      --sigstore-policy F  --sigstore, then check every image against "
    "the\n"
    "                           ClusterImagePolicy / ImagePolicy file F; "
    "refused\n"
    "                           images fail the mirror (exit 1) unless "
    "--allow-unsigned\n";

static const char mirror_help[] =
    "usage: airlock mirror [--config IMAGESET.yaml] --store DIR [OPTIONS] "
    "[RELEASE...]\n"
    "\n"
    "Pull each release image, every component image its "
    "release-manifests/image-references\n"
    "names, and any additional images into the store DIR (an OCI image layout, "
    "created if\n"
    "missing). Blobs are shared across images and releases and fetched once; a "
    "rerun\n"
    "fetches only what is missing. Interrupting is safe: rerun to continue.\n"
    "\n"
    "RELEASE is an image reference: docker://REGISTRY/REPO:TAG, "
    "REGISTRY/REPO@sha256:...,\n"
    "or oci:PATH:NAME for a release in a local OCI layout.\n"
    "\n"
    "Options:\n"
    "  -c, --config FILE        ImageSetConfiguration "
    "(mirror.openshift.io/v2alpha1):\n"
    "                           mirror.platform.release, "
    "mirror.additionalImages and\n"
    "                           airlock.sources (read a registry prefix from a "
    "local\n"
    "                           layout or another registry); see "
    "docs/imageset.md\n"
    "      --store DIR          the store to fill (required)\n"
    "      --image REF          an additional image (repeatable)\n"
    "      --platform OS/ARCH   from multi-platform images take only this "
    "platform\n"
    "                           (default: every platform)\n"
    "      --graph-url URL      update service for mirror.platform.channels "
    "(default:\n"
    "                           airlock.graph.url, else the public OpenShift "
    "service)\n"
    "      --graph-file PATH    read channel graphs from a file or a directory "
    "of\n"
    "                           <channel>-<arch>.json instead (e.g. "
    "STORE/airlock/graph)\n"
    "\n";

/* Split in two: C11 compilers need not take longer strings. */
static const char mirror_help_sig[] =
    "Release signatures (docs/signatures.md): each release's signatures are "
    "fetched\n"
    "from the signature stores (and STORE/signatures) within the signature "
    "timeout,\n"
    "verified against the trusted keys, and saved in STORE/signatures. A "
    "release\n"
    "without a verified signature is refused unless --allow-unsigned.\n"
    "      --keyring PATH       trusted OpenPGP public keys: a key file, a "
    "directory of\n"
    "                           them or a cluster-update-keys ConfigMap "
    "(repeatable;\n"
    "                           also airlock.signatures.keyrings). "
    "Default for releases\n"
    "                           under quay.io/openshift-release-dev: the "
    "shipped Red Hat\n"
    "                           release keys\n"
    "      --no-default-keys    do not use the shipped Red Hat keys\n"
    "      --no-default-store   do not also query Red Hat's signature store "
    "for releases\n"
    "                           under quay.io/openshift-release-dev\n"
    "      --strict-expiry      also refuse keys that are expired now\n"
    "      --signature-store L  an http(s):// signature store, a directory in "
    "the same\n"
    "                           layout, or a ConfigMap file (repeatable; also\n"
    "                           airlock.signatures.stores)\n"
    "      --signature-timeout D  total time for one release's signatures "
    "(default 30s)\n"
    "      --identity-policy P  exact, repository (default) or ignore: how the "
    "signed\n"
    "                           docker-reference must match the release "
    "reference\n"
    "      --require-all        every signature store (and STORE/signatures) "
    "must\n"
    "                           give a verified signature, not just the first "
    "one\n"
    "      --allow-unsigned     mirror releases whose signatures do not verify "
    "(or\n"
    "                           with no keyring at all), recorded as "
    "unverified\n" CLI_COMMON_HELP "\n"
    "Output: one summary line on stdout:\n"
    "  mirrored R releases, I images: transferred B blobs (N bytes), X blobs "
    "already present\n"
    "Exit status: 0 all mirrored, 1 verification failed, 2 usage or "
    "configuration error,\n"
    "3 runtime error (every image is attempted; the errors are listed on "
    "stderr).\n";

static int push_str(const char ***list, size_t *n, const char *s)
{
	const char **grown = realloc(*list, (*n + 1) * sizeof(*grown));

	if (grown == NULL)
		return -1;
	*list = grown;
	(*list)[(*n)++] = s;
	return 0;
}

/*
 * The trusted keys (keyrings, or the shipped Red Hat keys when there are
 * none) and the signature sources, with one spare slot for Red Hat's store.
 */
static int load_trust(al_pgp_keyring **kr, al_sig_source **sources,
                      const char **keyrings, size_t nkeyrings, unsigned kflags,
                      const char **sigstores, size_t nsigstores,
                      al_mirror_sig_opts *sig)
{
	size_t i;

	int rc;

	if ((rc = al_sig_keyring_load_paths(kr, keyrings, nkeyrings, kflags)) <
	    0)
		return cli_input_fail(rc, "cannot load the trusted keys");
	for (i = 0; i < al_pgp_keyring_warning_count(*kr); i++)
		cli_warn("%s", al_pgp_keyring_warning(*kr, i));
	if ((*sources = calloc(nsigstores + 1, sizeof(**sources))) == NULL) {
		cli_error("out of memory");
		return EXIT_RUNTIME;
	}
	for (i = 0; i < nsigstores; i++) {
		if (al_sig_source_parse(&(*sources)[i], sigstores[i]) < 0)
			return cli_usage_error(
			    "mirror", "signature store '%s': %s", sigstores[i],
			    al_error_message());
	}
	sig->keyring = *kr;
	sig->sources = *sources;
	sig->nsources = nsigstores;
	return EXIT_OK;
}

int cmd_mirror(int argc, char **argv)
{
	static const struct option longopts[] = {
	    CLI_COMMON_OPTIONS,
	    {"config", required_argument, NULL, 'c'},
	    {"store", required_argument, NULL, OPT_STORE},
	    {"image", required_argument, NULL, OPT_IMAGE},
	    {"platform", required_argument, NULL, OPT_PLATFORM},
	    {"graph-url", required_argument, NULL, OPT_GRAPH_URL},
	    {"graph-file", required_argument, NULL, OPT_GRAPH_FILE},
	    {"keyring", required_argument, NULL, OPT_KEYRING},
	    {"signature-store", required_argument, NULL, OPT_SIG_STORE},
	    {"signature-timeout", required_argument, NULL, OPT_SIG_TIMEOUT},
	    {"identity-policy", required_argument, NULL, OPT_IDENTITY_POLICY},
	    {"allow-unsigned", no_argument, NULL, OPT_ALLOW_UNSIGNED},
	    {"require-all", no_argument, NULL, OPT_REQUIRE_ALL},
	    {"strict-expiry", no_argument, NULL, OPT_STRICT_EXPIRY},
	    {"no-default-keys", no_argument, NULL, OPT_NO_DEFAULT_KEYS},
	    {"no-default-store", no_argument, NULL, OPT_NO_DEFAULT_STORE},
	    {"sigstore", no_argument, NULL, OPT_SIGSTORE},
	    {"sigstore-policy", required_argument, NULL, OPT_SIGSTORE_POLICY},
	    {NULL, 0, NULL, 0},
	};
	cli_common c;
	const char *config = NULL, *store_path = NULL, *platform = NULL;
	const char *graph_url = NULL, *graph_file = NULL;
	const char **keyrings = NULL, **sigstores = NULL;
	size_t nkeyrings = 0, nsigstores = 0;
	const char *sig_timeout = NULL, *identity_policy = NULL;
	int allow_unsigned = 0, require_all = 0, no_default_keys = 0,
	    no_default_store = 0, want_defaults = 0;
	unsigned kflags = 0;
	al_pgp_keyring *kr = NULL;
	al_sig_source *sources = NULL;
	al_mirror_sig_opts sig;
	al_graph_selection sel;
	size_t first_channel_release = 0;
	const char **releases = NULL, **images = NULL, **insecure = NULL;
	size_t nreleases = 0, nimages = 0, ninsecure = 0, i, nimg_total = 0,
	       nrel_ok = 0;
	al_imageset *cfg = NULL;
	al_store *store = NULL;
	al_store_opts so = {.create = 1};
	al_transfer_opts to;
	al_mirror_report report;
	char platbuf[64];
	char bytes[32];
	int opt, rc, code = EXIT_OK, sigstore = 0;
	const char *sigstore_policy = NULL;

	memset(&report, 0, sizeof(report));
	memset(&sel, 0, sizeof(sel));
	cli_common_init(&c);
	optind = 1;
	while ((opt = cli_getopt(&c, "mirror", argc, argv, "c:h", longopts)) !=
	       -1) {
		switch (opt) {
		case 'h':
			fputs(mirror_help, stdout);
			fputs(mirror_help_sigstore, stdout);
			fputs("\n", stdout);
			fputs(mirror_help_sig, stdout);
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
		case OPT_GRAPH_URL:
			graph_url = optarg;
			break;
		case OPT_GRAPH_FILE:
			graph_file = optarg;
			break;
		case OPT_KEYRING:
			if (push_str(&keyrings, &nkeyrings, optarg) < 0)
				return EXIT_RUNTIME;
			break;
		case OPT_SIG_STORE:
			if (push_str(&sigstores, &nsigstores, optarg) < 0)
				return EXIT_RUNTIME;
			break;
		case OPT_SIG_TIMEOUT:
			sig_timeout = optarg;
			break;
		case OPT_IDENTITY_POLICY:
			identity_policy = optarg;
			break;
		case OPT_ALLOW_UNSIGNED:
			allow_unsigned = 1;
			break;
		case OPT_REQUIRE_ALL:
			require_all = 1;
			break;
		case OPT_STRICT_EXPIRY:
			kflags |= AL_PGP_STRICT_EXPIRY;
			break;
		case OPT_NO_DEFAULT_KEYS:
			no_default_keys = 1;
			break;
		case OPT_NO_DEFAULT_STORE:
			no_default_store = 1;
			break;
		case OPT_SIGSTORE:
			sigstore = 1;
			break;
		case OPT_SIGSTORE_POLICY:
			sigstore = 1;
			sigstore_policy = optarg;
			break;
		default:
			free(images);
			return EXIT_USAGE;
		}
	}
	if (store_path == NULL) {
		free(images);
		return cli_usage_error("mirror", "--store DIR is required");
	}
	if (config != NULL) {
		if ((rc = al_imageset_load(&cfg, config)) < 0) {
			code = cli_input_fail(rc, "cannot load '%s'", config);
			goto out;
		}
		for (i = 0; i < cfg->nreleases; i++)
			if (push_str(&releases, &nreleases, cfg->releases[i]) <
			    0)
				goto oom;
		for (i = 0; i < cfg->nadditional; i++)
			if (push_str(&images, &nimages, cfg->additional[i]) < 0)
				goto oom;
		for (i = 0; i < cfg->ninsecure; i++)
			if (push_str(&insecure, &ninsecure, cfg->insecure[i]) <
			    0)
				goto oom;
		for (i = 0; i < cfg->nkeyrings; i++)
			if (push_str(&keyrings, &nkeyrings, cfg->keyrings[i]) <
			    0)
				goto oom;
		for (i = 0; i < cfg->nsignature_stores; i++)
			if (push_str(&sigstores, &nsigstores,
			             cfg->signature_stores[i]) < 0)
				goto oom;
		if (sig_timeout == NULL)
			sig_timeout = cfg->signature_timeout;
		if (identity_policy == NULL)
			identity_policy = cfg->identity_policy;
		if (platform == NULL && cfg->narchitectures == 1) {
			snprintf(platbuf, sizeof(platbuf), "linux/%s",
			         cfg->architectures[0]);
			platform = platbuf;
		}
	}
	for (i = (size_t)optind; i < (size_t)argc; i++)
		if (push_str(&releases, &nreleases, argv[i]) < 0)
			goto oom;
	if (nreleases == 0 && nimages == 0 &&
	    (cfg == NULL || cfg->nchannels == 0)) {
		code = cli_usage_error(
		    "mirror",
		    "nothing to mirror: give RELEASE references or --config");
		goto out;
	}
	if (push_str(&insecure, &ninsecure, NULL) < 0)
		goto oom;
	memset(&sig, 0, sizeof(sig));
	sig.policy = AL_SIG_IDENTITY_REPOSITORY;
	if (identity_policy != NULL &&
	    al_sig_identity_policy_parse(&sig.policy, identity_policy) < 0) {
		code = cli_usage_error("mirror",
		                       "--identity-policy takes exact, "
		                       "repository or ignore, not '%s'",
		                       identity_policy);
		goto out;
	}
	if (sig_timeout != NULL &&
	    (al_parse_duration(sig_timeout, &sig.budget_ms) < 0 ||
	     sig.budget_ms == 0)) {
		code = cli_usage_error("mirror", "signature timeout: %s",
		                       al_error_message());
		goto out;
	}
	/* Red Hat's releases (named, or from channels of the update service)
	 * are checked against the shipped keys when no keyring is given */
	if (nkeyrings == 0 && !no_default_keys)
		want_defaults = (cfg != NULL && cfg->nchannels > 0) ||
		                al_sig_any_redhat_release(releases, nreleases);
	if (nkeyrings == 0 && !want_defaults && !allow_unsigned &&
	    (nreleases > 0 || (cfg != NULL && cfg->nchannels > 0))) {
		code = cli_usage_error(
		    "mirror",
		    "no trusted keys to verify release signatures: give "
		    "--keyring "
		    "(or airlock.signatures.keyrings), or --allow-unsigned");
		goto out;
	}
	if ((code = cli_common_start(&c)) != EXIT_OK)
		goto out;
	/* the shipped keys for channels wait until the channels named their
	 * releases: another update service's are not Red Hat's */
	if ((nkeyrings > 0 || (want_defaults && al_sig_any_redhat_release(
	                                            releases, nreleases))) &&
	    (code = load_trust(&kr, &sources, keyrings, nkeyrings, kflags,
	                       sigstores, nsigstores, &sig)) != EXIT_OK)
		goto out;
	sig.allow_unsigned = allow_unsigned;
	sig.require_all = require_all;
	if ((rc = al_store_open(&store, store_path, &so)) < 0) {
		code = cli_fail(rc, "cannot open store '%s'", store_path);
		goto out;
	}
	cli_transfer_opts(&c, &to);
	if (cfg != NULL && cfg->nchannels > 0) {
		/* Channels: ask the update graph which releases are in range.
		 */
		al_graph_opts go;
		memset(&go, 0, sizeof(go));
		go.url = graph_url;
		go.graph_file = graph_file;
		go.http = &to.registry.http;
		if ((rc = al_graph_resolve_imageset(cfg, &go, &sel)) < 0) {
			code = cli_fail(
			    rc, "cannot resolve the channels of '%s'", config);
			goto out;
		}
		first_channel_release = nreleases;
		for (i = 0; i < sel.nreleases; i++)
			if (push_str(&releases, &nreleases,
			             sel.releases[i].payload) < 0)
				goto oom;
		if (!c.quiet)
			fprintf(stderr, "channels: %zu releases selected\n",
			        sel.nreleases);
	}
	if (nreleases == 0 && nimages == 0) {
		code = cli_usage_error(
		    "mirror",
		    "nothing to mirror: the channels selected no release");
		goto out;
	}
	if (kr == NULL && want_defaults &&
	    al_sig_any_redhat_release(releases, nreleases) &&
	    (code = load_trust(&kr, &sources, keyrings, nkeyrings, kflags,
	                       sigstores, nsigstores, &sig)) != EXIT_OK)
		goto out;
	if (kr == NULL && !allow_unsigned && nreleases > 0) {
		code = cli_usage_error(
		    "mirror", "no trusted keys for releases not under "
		              "quay.io/openshift-release-dev: give --keyring "
		              "(or airlock.signatures.keyrings), or "
		              "--allow-unsigned");
		goto out;
	}
	to.platform = platform;
	to.insecure_hosts = insecure;
	if (cfg != NULL) {
		to.sources = cfg->sources;
		to.nsources = cfg->nsources;
	}
	sig.http = &to.registry.http;
	if (kr != NULL && !no_default_store) {
		/* Red Hat's published signature store, besides the configured
		 * ones, when a release is Red Hat's (docs/signatures.md) */
		if (al_sig_any_redhat_release(releases, nreleases))
			al_sig_sources_add_redhat(sources, &sig.nsources,
			                          nsigstores + 1);
	}
	if (kr == NULL && nreleases > 0)
		al_log_warn("release signatures are not checked (no "
		            "--keyring): releases are recorded as unverified");
	rc = al_mirror_signed(store, releases, nreleases, images, nimages, &to,
	                      &sig, &report);
	cli_progress_done(&c);
	/* a refusal before any image (no keyring, no --allow-unsigned) */
	if (rc < 0 && report.nerrors == 0)
		cli_error("%s", al_error_message());
	if (sigstore) {
		/* cmd_sigstore.c: carry cosign tags and referrers, check the
		 * policy (docs/cosign.md) */
		int r2 = cli_mirror_sigstore(&c, store, &to, sigstore_policy,
		                             allow_unsigned);
		code = cli_worst(code, cli_exit_code(r2));
	}
	for (i = 0; i < sel.nreleases; i++) {
		al_mirror_release *rel =
		    &report.releases[first_channel_release + i];
		int r2;
		if (rel->status != 0)
			continue;
		r2 = al_mirror_record_channels(
		    store, &rel->digest,
		    (const char *const *)sel.releases[i].channels,
		    sel.releases[i].nchannels);
		if (r2 < 0)
			code = cli_worst(
			    code, cli_fail(r2, "recording channels of %s",
			                   rel->source));
	}
	for (i = 0; i < sel.ngraphs; i++) {
		int r2 = al_graph_save_to_store(store, sel.graphs[i]);
		if (r2 < 0)
			code = cli_worst(
			    code, cli_fail(r2, "saving the update graph"));
	}
	for (i = 0; i < report.nerrors; i++)
		cli_error("%s", report.errors[i]);
	nimg_total = (size_t)report.stats.images;
	for (i = 0; i < report.nreleases; i++)
		nrel_ok += report.releases[i].status == 0;
	printf("mirrored %zu releases, %zu images: transferred %llu blobs "
	       "(%llu bytes), %llu blobs already present\n",
	       nrel_ok, nimg_total,
	       (unsigned long long)report.stats.blobs_transferred,
	       (unsigned long long)report.stats.bytes_transferred,
	       (unsigned long long)report.stats.blobs_present);
	if (!c.quiet)
		fprintf(stderr, "%s transferred in %.1f s\n",
		        cli_bytes(report.stats.bytes_transferred, bytes,
		                  sizeof(bytes)),
		        (double)report.stats.elapsed_ms / 1000.0);
	/* the worst status over the run and each release (docs/commands.md) */
	code = cli_worst(code, cli_exit_code(rc));
	for (i = 0; i < report.nreleases; i++)
		code =
		    cli_worst(code, cli_exit_code(report.releases[i].status));
	goto out;
oom:
	cli_error("out of memory");
	code = EXIT_RUNTIME;
out:
	al_pgp_keyring_free(kr);
	free(sources);
	free(keyrings);
	free(sigstores);
	al_graph_selection_clear(&sel);
	al_mirror_report_clear(&report);
	al_store_free(store);
	al_imageset_free(cfg);
	free(releases);
	free(images);
	free(insecure);
	cli_common_finish(&c);
	return code;
}
