/* cmd_push.c: airlock push: every image of a store into a registry, manifest
 * bytes (digests) preserved. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli_hint.h"
#include "cli_json.h"
#include "cli_resources.h"
#include "cmd.h"

enum {
	OPT_STORE = OPT_COMMAND_BASE,
	OPT_MAX_NESTED,
	OPT_NO_DIGEST_TAGS,
	OPT_NO_RECORD,
	OPT_CLUSTER_RESOURCES,
	OPT_OC_MIRROR_NAMES,
	OPT_ICSP
};

static const char push_help[] =
    "usage: airlock push --store DIR [OPTIONS] docker://HOST[:PORT][/PREFIX]\n"
    "\n"
    "Push every image of the store into the registry HOST. An image mirrored "
    "from\n"
    "REGISTRY/REPO goes to HOST/PREFIX/REPO, under the same tag; an image "
    "mirrored\n"
    "by digest (a release component) keeps its digest and gets the tag "
    "sha256-<hex>\n"
    "so that a registry's garbage collection of untagged manifests keeps "
    "it.\n"
    "Manifests are sent byte for byte so digests do not change. Blobs the "
    "registry\n"
    "already has are skipped (HEAD), blobs already pushed to another "
    "repository in\n"
    "this run are mounted. The destination is recorded in the store "
    "(airlock/pushes.json)\n"
    "for 'airlock mirrorsets'. See docs/push.md.\n"
    "\n"
    "Options:\n"
    "      --store DIR          the store to read (opened read-only; only\n"
    "                           airlock/pushes.json is written)\n"
    "      --max-nested-paths N  at most N path components per repository "
    "(registries\n"
    "                           that limit depth): the rest is joined with "
    "'-'\n"
    "      --no-digest-tags     push digest-referenced images by digest "
    "only\n"
    "      --no-record          do not record the push in the store\n"
    "      --cluster-resources DIR  also write IDMS, ITMS and signature "
    "ConfigMaps\n"
    "                           for this destination into DIR, and the "
    "catalogs'\n"
    "                           CatalogSource/ClusterCatalog and the "
    "UpdateService\n"
    "                           (with a graph image) when the store has "
    "them\n"
    "      --icsp               with --cluster-resources: also the "
    "ImageContentSourcePolicy,\n"
    "                           in its own file\n"
    "      --oc-mirror-names    with --cluster-resources: oc-mirror's file "
    "names\n"
    "                           (idms-oc-mirror.yaml, itms-oc-mirror.yaml, "
    "imageContentSourcePolicy.yaml,\n"
    "                           signature-configmap.yaml and "
    "signature-configmap.json)\n" CLI_JSON_HELP CLI_COMMON_HELP "\n"
    "Output: one summary line on stdout:\n"
    "  pushed I images: uploaded B blobs (N bytes), X blobs already present or "
    "mounted\n"
    "Exit status: 0 all pushed, 1 an image failed verification (a digest did "
    "not\n"
    "match) or is of a kind airlock does not support, 2 usage error, 3 "
    "runtime\n"
    "error (every image is attempted).\n";

static char *utc_now(void)
{
	char buf[32];
	time_t now = time(NULL);
	struct tm tm;

	if (gmtime_r(&now, &tm) == NULL ||
	    strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		return al_strdup("");
	return al_strdup(buf);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * Whether the store holds "REPO:TAG" beside "REPO@DIGEST" (names sorted).
 * A "sha256-<hex>" tag of the store is the referrers index of the image
 * with that digest (distribution-spec 1.1 tag schema, docs/cosign.md):
 * giving the image itself that tag would hide its referrers from a
 * registry without the referrers API.
 */
static int tag_taken(const char *const *sorted, size_t n, const char *name,
                     const char *tag)
{
	const char *at = strchr(name, '@');
	char *key;
	int found;

	if (at == NULL || sorted == NULL)
		return 0;
	if ((key = al_sprintf("%.*s:%s", (int)(at - name), name, tag)) == NULL)
		return 1; /* out of memory: fall back to the digest */
	found = bsearch(&key, sorted, n, sizeof(*sorted), cmp_str) != NULL;
	free(key);
	return found;
}

/* The destination reference of one store image, or NULL (said). */
static char *dest_of(const char *name, const char *prefix, unsigned nested,
                     int digest_tags, const char *const *sorted, size_t nsorted,
                     char **digest_ref)
{
	char *repo = NULL, *ref = NULL, *dst = NULL, *tag = NULL;
	int rc;

	*digest_ref = NULL;
	if ((rc = al_push_target_nested(name, prefix, nested, &repo, &ref)) <
	    0) {
		cli_fail(rc, "skipping '%s'", name);
		return NULL;
	}
	if (al_str_startswith(ref, "sha256:") ||
	    al_str_startswith(ref, "sha512:")) {
		/* pushed under the digest-derived tag: the registry stores
		 * the same manifest (same digest) and keeps it tagged */
		if (digest_tags && (tag = al_push_digest_tag(ref)) != NULL &&
		    !tag_taken(sorted, nsorted, name, tag))
			dst = al_sprintf("%s:%s", repo, tag);
		else
			dst = al_sprintf("%s@%s", repo, ref);
		*digest_ref = al_sprintf("%s@%s", repo, ref);
	} else {
		dst = al_sprintf("%s:%s", repo, ref);
	}
	if (dst == NULL)
		cli_error("out of memory");
	free(repo);
	free(ref);
	free(tag);
	return dst;
}

int cmd_push(int argc, char **argv)
{
	static const struct option longopts[] = {
	    CLI_COMMON_OPTIONS,
	    {"store", required_argument, NULL, OPT_STORE},
	    {"max-nested-paths", required_argument, NULL, OPT_MAX_NESTED},
	    {"no-digest-tags", no_argument, NULL, OPT_NO_DIGEST_TAGS},
	    {"no-record", no_argument, NULL, OPT_NO_RECORD},
	    {"cluster-resources", required_argument, NULL,
	     OPT_CLUSTER_RESOURCES},
	    {"oc-mirror-names", no_argument, NULL, OPT_OC_MIRROR_NAMES},
	    {"icsp", no_argument, NULL, OPT_ICSP},
	    CLI_JSON_OPTION,
	    {NULL, 0, NULL, 0},
	};
	cli_common c;
	const char *store_path = NULL, *crdir = NULL;
	char *host = NULL, *prefix = NULL, *dest = NULL;
	al_store *store = NULL;
	al_store_opts so = {.readonly = 1};
	al_store_image *imgs = NULL;
	size_t nimgs = 0, i, nfail = 0;
	al_transfer *t = NULL;
	al_transfer_opts to;
	al_transfer_stats stats;
	const char **fails = NULL, **sorted = NULL;
	json_t *jimgs = NULL;
	unsigned nested = 0;
	int opt, rc, code = EXIT_OK, json = 0, digest_tags = 1, record = 1;
	int ocm_names = 0, icsp = 0, *queued = NULL;
	char **dsts = NULL, **dref = NULL;

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
		case OPT_MAX_NESTED:
			if (cli_parse_nested(optarg, &nested) < 0)
				return cli_usage_error(
				    "push",
				    "--max-nested-paths takes a number from 1 "
				    "to 32, not '%s'",
				    optarg);
			break;
		case OPT_NO_DIGEST_TAGS:
			digest_tags = 0;
			break;
		case OPT_NO_RECORD:
			record = 0;
			break;
		case OPT_CLUSTER_RESOURCES:
			crdir = optarg;
			break;
		case OPT_OC_MIRROR_NAMES:
			ocm_names = 1;
			break;
		case OPT_ICSP:
			icsp = 1;
			break;
		case OPT_JSON:
			json = 1;
			break;
		default:
			return EXIT_USAGE;
		}
	}
	if (json && cli_json_begin("push") < 0)
		return EXIT_RUNTIME;
	if (store_path == NULL)
		return cli_usage_error("push", "--store DIR is required");
	if (argc - optind != 1)
		return cli_usage_error("push", "give exactly one destination "
		                               "docker://HOST[:PORT][/PREFIX]");
	if ((ocm_names || icsp) && crdir == NULL)
		return cli_usage_error("push", "--oc-mirror-names and --icsp "
		                               "go with --cluster-resources "
		                               "DIR");
	if (!al_str_startswith(argv[optind], "docker://"))
		return cli_usage_error(
		    "push",
		    "destination '%s' is not docker://HOST[:PORT][/PREFIX]",
		    argv[optind]);
	rc = cli_dest_parse(argv[optind], &host, &prefix);
	if (rc == -1)
		return cli_usage_error(
		    "push",
		    "destination '%s' is not docker://HOST[:PORT][/PREFIX]",
		    argv[optind]);
	if (rc == -2)
		/* a cluster could never pull from there by mirror sets */
		return cli_usage_error(
		    "push",
		    "destination '%s' is not a mirror location a cluster "
		    "accepts: HOST[:PORT][/PATH] with a lower-case PATH (the "
		    "ImageDigestMirrorSet CRD pattern)",
		    argv[optind]);
	dest = prefix[0] != '\0' ? al_sprintf("%s/%s", host, prefix)
	                         : al_strdup(host);
	if (dest == NULL) {
		code = cli_fail(AL_ENOMEM, "out of memory");
		goto out;
	}
	/* before the push, not after it (cli_resources.c) */
	if ((code = cli_check_out_dir("push", "--cluster-resources", crdir)) !=
	    EXIT_OK)
		goto out;
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
	dsts = calloc(nimgs + 1, sizeof(*dsts));
	dref = calloc(nimgs + 1, sizeof(*dref));
	queued = calloc(nimgs + 1, sizeof(*queued));
	fails = calloc(nimgs + 1, sizeof(*fails));
	if (dsts == NULL || dref == NULL || queued == NULL || fails == NULL) {
		code = cli_fail(AL_ENOMEM, "out of memory");
		goto out;
	}
	/* store names, sorted, for tag_taken */
	if ((sorted = calloc(nimgs + 1, sizeof(*sorted))) == NULL) {
		code = cli_fail(AL_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < nimgs; i++)
		sorted[i] = imgs[i].name;
	qsort(sorted, nimgs, sizeof(*sorted), cmp_str);
	for (i = 0; i < nimgs; i++) {
		queued[i] = -1;
		dsts[i] = dest_of(imgs[i].name, prefix, nested, digest_tags,
		                  sorted, nimgs, &dref[i]);
		if (dsts[i] == NULL) {
			code = cli_worst(code, EXIT_RUNTIME);
			continue;
		}
		rc =
		    al_transfer_add_from_store(t, store, imgs[i].name, dsts[i]);
		if (rc < 0)
			code = cli_worst(code, cli_fail(rc, "cannot queue '%s'",
			                                imgs[i].name));
		else
			queued[i] = (int)al_transfer_count(t) - 1;
	}
	rc = al_transfer_run(t, &stats);
	cli_progress_done(&c);
	if (json) {
		cli_json_set_str(cli_json_root(), "store", store_path);
		cli_json_set_str(cli_json_root(), "registry", host);
		cli_json_set_str(cli_json_root(), "prefix", prefix);
		jimgs = cli_json_set_array(cli_json_root(), "images");
	}
	for (i = 0; i < nimgs; i++) {
		const char *msg = "";
		al_digest d;
		int st = AL_EINVAL, have_digest = 0;
		json_t *o;

		if (queued[i] >= 0) {
			al_transfer_result(t, queued[i], &st, &d, NULL, &msg);
			have_digest = st == 0;
		}
		if (st < 0 && queued[i] >= 0) {
			fails[nfail++] = msg;
			code = cli_worst(code, cli_exit_code(st));
		}
		if (!json)
			continue;
		o = cli_json_append_object(jimgs);
		cli_json_set_str(o, "source", imgs[i].name);
		{
			char *full = dsts[i] != NULL
			                 ? al_sprintf("%s/%s", host, dsts[i])
			                 : NULL;
			char *fulld = dref[i] != NULL
			                  ? al_sprintf("%s/%s", host, dref[i])
			                  : NULL;

			cli_json_set_str(o, "destination", full);
			cli_json_set_str(o, "by_digest", fulld);
			free(full);
			free(fulld);
		}
		cli_json_set_digest(o, "digest", have_digest ? &d : NULL);
		cli_json_set_str(o, "status", st == 0 ? "pushed" : "failed");
		if (st != 0)
			cli_json_set_str(o, "error",
			                 queued[i] >= 0 ? msg : "not queued");
	}
	/* a failure every image shares (the registry unreachable, TLS) is
	 * one line with its count */
	cli_report_failures(fails, nfail);
	if (json) {
		cli_json_set_stats(cli_json_root(), "stats", &stats);
	} else {
		printf("pushed %llu images: uploaded %llu blobs (%llu bytes), "
		       "%llu blobs already present or mounted\n",
		       (unsigned long long)stats.images,
		       (unsigned long long)stats.blobs_transferred,
		       (unsigned long long)stats.bytes_transferred,
		       (unsigned long long)stats.blobs_present);
	}
	code = cli_worst(code, cli_exit_code(rc));
	if (record && stats.images > 0) {
		al_store_push p;

		memset(&p, 0, sizeof(p));
		p.registry = host;
		p.prefix = prefix;
		p.time = utc_now();
		p.images = stats.images;
		p.failed = nfail;
		p.max_nested_paths = nested;
		p.digest_tags = digest_tags;
		if ((rc = al_store_push_put(store, &p)) < 0)
			/* a read-only medium: the push itself is done */
			cli_warn("cannot record the push in '%s': %s "
			         "(mirrorsets will need --registry)",
			         store_path, al_error_message());
		free(p.time);
	}
	if (crdir != NULL) {
		cli_cr_opts co;
		json_t *files = json ? cli_json_set_array(cli_json_root(),
		                                          "cluster_resources")
		                     : NULL;

		memset(&co, 0, sizeof(co));
		co.dir = crdir;
		co.dest = dest;
		co.max_nested = nested;
		co.icsp = icsp;
		co.oc_mirror_names = ocm_names;
		co.quiet = c.quiet || json;
		code =
		    cli_worst(code, cli_cluster_resources(store, &co, files));
	}
out:
	if (dsts != NULL)
		for (i = 0; i < nimgs; i++) {
			free(dsts[i]);
			free(dref[i]);
		}
	free(dsts);
	free(dref);
	free(queued);
	free(fails);
	free(sorted);
	al_transfer_free(t);
	al_store_images_free(imgs, nimgs);
	al_store_free(store);
	free(host);
	free(prefix);
	free(dest);
	cli_common_finish(&c);
	return code;
}
