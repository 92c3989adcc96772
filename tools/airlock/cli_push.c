/* cli_push.c: the registry destination shared by airlock push and mirror
 * --to (docs/push.md, docs/lifecycle.md "Mirror to mirror"). */
#include <stdlib.h>
#include <string.h>

#include "cli_push.h"
#include "cli_resources.h"
#include "cli_hint.h"
#include "cli_json.h"
#include "cli_resources.h"

int cli_push_dest(const char *cmd, const char *arg, char **host, char **prefix)
{
	int rc;

	if (!al_str_startswith(arg, "docker://"))
		return cli_usage_error(
		    cmd,
		    "destination '%s' is not docker://HOST[:PORT][/PREFIX]",
		    arg);
	rc = cli_dest_parse(arg, host, prefix);
	if (rc == -1)
		return cli_usage_error(
		    cmd,
		    "destination '%s' is not docker://HOST[:PORT][/PREFIX]",
		    arg);
	if (rc == -2)
		/* a cluster could never pull from there by mirror sets */
		return cli_usage_error(
		    cmd,
		    "destination '%s' is not a mirror location a cluster "
		    "accepts: HOST[:PORT][/PATH] with a lower-case PATH (the "
		    "ImageDigestMirrorSet CRD pattern)",
		    arg);
	return EXIT_OK;
}

static void json_image(json_t *arr, const al_push_image *img, const char *host)
{
	json_t *o = cli_json_append_object(arr);
	char *full = img->destination != NULL
	                 ? al_sprintf("%s/%s", host, img->destination)
	                 : NULL;
	char *fulld = img->by_digest != NULL
	                  ? al_sprintf("%s/%s", host, img->by_digest)
	                  : NULL;

	cli_json_set_str(o, "source", img->source);
	cli_json_set_str(o, "destination", full);
	cli_json_set_str(o, "by_digest", fulld);
	cli_json_set_digest(o, "digest",
	                    img->status == 0 ? &img->digest : NULL);
	cli_json_set_str(o, "status", img->status == 0 ? "pushed" : "failed");
	if (img->status != 0)
		cli_json_set_str(o, "error",
		                 img->queued ? img->message : "not queued");
	free(full);
	free(fulld);
}

int cli_push_report(const al_push_result *r, const char *host,
                    const char *store_path, json_t *jimages)
{
	const char **fails = NULL;
	size_t i, nfail = 0;
	int code = EXIT_OK;

	if (!r->ran) {
		if (r->status < 0)
			cli_error("%s", r->message != NULL ? r->message : "");
		return cli_exit_code(r->status);
	}
	if ((fails = calloc(r->nimages + 1, sizeof(*fails))) == NULL)
		return cli_fail(AL_ENOMEM, "out of memory");
	for (i = 0; i < r->nimages; i++) {
		const al_push_image *img = &r->images[i];

		if (img->status < 0) {
			code = cli_worst(code, cli_exit_code(img->status));
			if (!img->queued)
				cli_error("%s", img->message);
			else
				fails[nfail++] = img->message;
		}
		if (jimages != NULL)
			json_image(jimages, img, host);
	}
	/* a failure every image shares (the registry unreachable, TLS) is
	 * one line with its count */
	cli_report_failures(fails, nfail);
	free(fails);
	if (r->record_status < 0)
		/* a read-only medium: the push itself is done */
		cli_warn("cannot record the push in '%s': %s "
		         "(mirrorsets will need --registry)",
		         store_path,
		         r->record_message ? r->record_message : "");
	return cli_worst(code, cli_exit_code(r->status));
}

void cli_push_summary(const al_push_result *r, const char *dest)
{
	printf("pushed %llu images%s%s: uploaded %llu blobs (%llu bytes), "
	       "%llu blobs already present or mounted",
	       (unsigned long long)r->stats.images, dest != NULL ? " to " : "",
	       dest != NULL ? dest : "",
	       (unsigned long long)r->stats.blobs_transferred,
	       (unsigned long long)r->stats.bytes_transferred,
	       (unsigned long long)r->stats.blobs_present);
	/* images an earlier push left in place, confirmed by one HEAD */
	if (r->stats.images_unchanged > 0)
		printf(", %llu images unchanged",
		       (unsigned long long)r->stats.images_unchanged);
	putchar('\n');
}

/* ---- mirror --to ---- */

const char cli_mirror_to_help[] =
    "\nMirror to mirror (docs/lifecycle.md):\n"
    "      --to docker://HOST[:PORT][/PREFIX]  after the mirror, push the "
    "store\n"
    "                           into that registry exactly as 'airlock "
    "push' does\n"
    "                           (same names, digests, tags, push record); "
    "a rerun\n"
    "                           resumes, skipping what the store and the "
    "registry have\n"
    "      --max-nested-paths N  with --to: at most N path components per\n"
    "                           repository (as push)\n"
    "      --no-digest-tags     with --to: digest-referenced images by "
    "digest only\n"
    "      --layout L           oc-mirror (default: releases at\n"
    "                           openshift/release-images, components at\n"
    "                           openshift/release) or source (source paths),\n"
    "                           for --to and --cluster-resources\n";

int cli_mirror_to_option(cli_mirror_to *mt, int opt, const char *arg)
{
	switch (opt) {
	case CLI_OPT_TO:
		mt->to = arg;
		return 1;
	case CLI_OPT_TO_NESTED:
		mt->nested = arg;
		return 1;
	case CLI_OPT_TO_NO_DIGEST_TAGS:
		mt->no_digest_tags = 1;
		return 1;
	case CLI_OPT_TO_LAYOUT:
		mt->layout = arg;
		return 1;
	default:
		return 0;
	}
}

int cli_mirror_to_setup(cli_mirror_to *mt)
{
	unsigned nested = 0;
	int code;

	mt->push = (al_push_opts)AL_PUSH_OPTS_INIT;
	mt->result = (al_push_result)AL_PUSH_RESULT_INIT;
	if ((code = cli_parse_layout("mirror", mt->layout, &mt->push.layout)) !=
	    EXIT_OK)
		return code;
	if (mt->to == NULL) {
		if (mt->nested != NULL || mt->no_digest_tags)
			return cli_usage_error(
			    "mirror", "--max-nested-paths and --no-digest-tags "
			              "go with --to docker://HOST/PREFIX");
		return EXIT_OK;
	}
	if (mt->nested != NULL && cli_parse_nested(mt->nested, &nested) < 0)
		return cli_usage_error(
		    "mirror",
		    "--max-nested-paths takes a number from 1 "
		    "to 32, not '%s'",
		    mt->nested);
	if ((code = cli_push_dest("mirror", mt->to, &mt->host, &mt->prefix)) !=
	    EXIT_OK)
		return code;
	mt->dest = mt->prefix[0] != '\0'
	               ? al_sprintf("%s/%s", mt->host, mt->prefix)
	               : al_strdup(mt->host);
	if (mt->dest == NULL)
		return cli_fail(AL_ENOMEM, "out of memory");
	mt->push.registry = mt->host;
	mt->push.prefix = mt->prefix;
	mt->push.max_nested = nested;
	if (mt->no_digest_tags)
		mt->push.flags |= AL_PUSH_NO_DIGEST_TAGS;
	return EXIT_OK;
}

int cli_mirror_to_report(cli_mirror_to *mt, const char *store_path, int json)
{
	const al_push_result *r = &mt->result;
	json_t *o = NULL;
	int code;

	if (mt->push.registry == NULL || (!r->ran && r->status == 0))
		return EXIT_OK; /* no --to, or the mirror stopped before it */
	if (json) {
		o = cli_json_set_object(cli_json_root(), "push");
		cli_json_set_str(o, "registry", mt->host);
		cli_json_set_str(o, "prefix", mt->prefix);
	}
	code =
	    cli_push_report(r, mt->host, store_path,
	                    o != NULL ? cli_json_set_array(o, "images") : NULL);
	if (o != NULL)
		cli_json_set_stats(o, "stats", &r->stats);
	else if (r->ran)
		cli_push_summary(r, mt->dest);
	if (code != EXIT_OK)
		cli_warn("the push to %s is not complete: the same command "
		         "again resumes it (what the store and the registry "
		         "have is not transferred again)",
		         mt->dest);
	return code;
}

void cli_mirror_to_clear(cli_mirror_to *mt)
{
	al_push_result_clear(&mt->result);
	free(mt->host);
	free(mt->prefix);
	free(mt->dest);
	mt->host = mt->prefix = mt->dest = NULL;
}
