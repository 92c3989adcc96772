/* cli_mirror_out.c: what `airlock mirror` prints beyond its summary line:
 * the --json document (airlock.mirror/v1) from al_mirror_result, and the
 * checks of its arguments against other tools' habits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_esc.h"
#include "cli.h"
#include "cli_hint.h"
#include "cli_json.h"
#include "cli_mirror_out.h"

void cli_mirror_json(const al_mirror_result *res, const char *store_path)
{
	json_t *root = cli_json_root(), *arr;
	size_t i;

	if (root == NULL)
		return;
	cli_json_set_str(root, "store", store_path);
	cli_json_set_u64(root, "releases_mirrored", res->releases_mirrored);
	cli_json_set_u64(root, "channel_releases", res->channel_releases);
	cli_json_set_u64(root, "images", res->images);
	arr = cli_json_set_array(root, "releases");
	for (i = 0; i < res->report.nreleases; i++) {
		const al_mirror_release *r = &res->report.releases[i];
		json_t *o = cli_json_append_object(arr);

		cli_json_set_str(o, "source", r->source);
		cli_json_set_str(o, "version", r->version);
		cli_json_set_digest(
		    o, "digest",
		    r->version != NULL || r->status == 0 ? &r->digest : NULL);
		cli_json_set_u64(o, "components", r->components);
		cli_json_set_u64(o, "components_failed", r->components_failed);
		cli_json_set_bool(o, "verified", r->verified);
		cli_json_set_str(o, "verified_by",
		                 r->verified_by[0] != '\0' ? r->verified_by
		                                           : NULL);
		cli_json_set_str(o, "status",
		                 r->status == 0 ? "mirrored" : "failed");
		cli_json_set_int(o, "exit", cli_exit_code(r->status));
		cli_json_set_str(o, "error", r->message);
	}
	cli_json_set_u64(root, "additional", res->report.additional);
	cli_json_set_u64(root, "additional_failed",
	                 res->report.additional_failed);
	arr = cli_json_set_array(root, "catalogs");
	for (i = 0; i < res->ncatalogs; i++) {
		const al_mirror_catalog *mc = &res->catalogs[i];
		json_t *o = cli_json_append_object(arr);

		cli_json_set_str(o, "source", mc->source);
		cli_json_set_str(o, "source_name", mc->source_name);
		cli_json_set_str(o, "target_name", mc->target_name);
		cli_json_set_digest(o, "digest",
		                    mc->status == 0 ? &mc->digest : NULL);
		cli_json_set_u64(o, "packages", mc->packages);
		cli_json_set_u64(o, "bundles", mc->bundles);
		cli_json_set_u64(o, "images", mc->images);
		cli_json_set_u64(o, "images_failed", mc->images_failed);
		cli_json_set_str(o, "status",
		                 mc->status == 0 ? "mirrored" : "failed");
		cli_json_set_str(o, "error", mc->message);
	}
	if (res->sigstore.ran) {
		json_t *o = cli_json_set_object(root, "sigstore");

		cli_json_set_u64(o, "images", res->sigstore.images);
		cli_json_set_u64(o, "unsigned_images",
		                 res->sigstore.unsigned_images);
		cli_json_set_u64(o, "artifacts", res->sigstore.artifacts);
		cli_json_set_u64(o, "failed", res->sigstore.failed);
		cli_json_set_u64(o, "local", res->sigstore.local);
		if (res->sigstore.policy_checked) {
			cli_json_set_u64(o, "accepted", res->sigstore.accepted);
			cli_json_set_u64(o, "refused", res->sigstore.refused);
			cli_json_set_u64(o, "uncovered",
			                 res->sigstore.uncovered);
		}
		if (res->sigstore.root_checked) {
			/* --trusted-root (docs/cosign.md) */
			json_t *r = cli_json_set_object(o, "trusted_root");
			cli_json_set_u64(r, "verified",
			                 res->sigstore.root_verified);
			cli_json_set_u64(r, "refused",
			                 res->sigstore.root_refused);
			cli_json_set_u64(r, "unchecked",
			                 res->sigstore.root_unchecked);
			cli_json_set_bool(r, "kept",
			                  res->sigstore.root_kept != 0);
		}
	}
	if (res->has_graph_image) {
		/* mirror.platform.graph (docs/graph.md) */
		json_t *o = cli_json_set_object(root, "graph_image");

		cli_json_set_str(o, "name", AL_GRAPH_IMAGE_NAME);
		cli_json_set_digest(o, "digest", &res->graph_image);
	}
	cli_json_set_stats(root, "stats", &res->report.stats);
	/* the failed-image list (docs/lifecycle.md): null when none */
	cli_json_set_u64(root, "failed_images", res->report.nfailed);
	cli_json_set_str(root, "failed_list", res->failed_list);
}

void cli_mirror_catalog_lines(const al_mirror_result *res)
{
	size_t i;

	for (i = 0; i < res->ncatalogs; i++) {
		const al_mirror_catalog *mc = &res->catalogs[i];
		char ds[AL_DIGEST_STRMAX];

		if (mc->status == 0)
			printf(
			    "catalog %s -> %s %s: %zu packages, %zu bundles, "
			    "%zu images\n",
			    cli_esc(mc->source_name), cli_esc(mc->target_name),
			    al_digest_str(&mc->digest, ds), mc->packages,
			    mc->bundles, mc->images);
		else
			printf(
			    "catalog %s: failed (%zu of %zu images failed)\n",
			    cli_esc(mc->source_name != NULL ? mc->source_name
			                                    : mc->source),
			    mc->images_failed, mc->images);
	}
}

int cli_mirror_check_args(const char *const *releases, size_t nreleases,
                          const char *const *images, size_t nimages,
                          const al_imageset *cfg)
{
	char buf[1024];
	const char *why;
	size_t i;
	int code = EXIT_OK;

	for (i = 0; i < nreleases; i++) {
		if ((why = cli_mirror_arg_refusal(releases[i], buf,
		                                  sizeof(buf))) != NULL) {
			cli_usage_error("mirror", "%s", why);
			return EXIT_USAGE;
		}
	}
	for (i = 0; i < nimages; i++)
		if (cli_ref_is_bare(images[i])) {
			cli_error(
			    "--image '%s' names no registry: airlock does "
			    "not guess docker.io; write the registry "
			    "(docker.io/library/%s for Docker Hub)",
			    images[i], images[i]);
			code = EXIT_USAGE;
		}
	for (i = 0; cfg != NULL && i < cfg->nadditional; i++)
		if (cli_ref_is_bare(cfg->additional[i])) {
			cli_error(
			    "mirror.additionalImages '%s' names no "
			    "registry: airlock does not guess docker.io; "
			    "write the registry (docker.io/library/%s for "
			    "Docker Hub)",
			    cfg->additional[i], cfg->additional[i]);
			code = EXIT_USAGE;
		}
	return code;
}
