/* mirror_imageset.c: what the oc-mirror fields of an ImageSetConfiguration
 * do during a mirror: blockedImages, platforms, kubeVirtContainer, the
 * architectures a release provides, and archiveSize recorded for pack. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/imageset.h"
#include "json_int.h"
#include "airlock/log.h"
#include "airlock/mirror.h"
#include "airlock/oci.h"
#include "airlock/ref.h"
#include "airlock/release.h"
#include "yaml_int.h"
#include "mirror_imageset.h"
#include "mirror_images.h"
#include "mirror_int.h"

#define DEFAULTS_FILE "airlock/defaults.json"
#define DEFAULTS_MAX (64 * 1024)
/* the release manifest oc-mirror reads the KubeVirt image from
 * (internal/pkg/release/const.go releaseBootableImages) */
#define BOOTIMAGES "0000_50_installer_coreos-bootimages.yaml"

/* Drop the blocked references of v[0..*n) in place, with a warning. */
static void drop_blocked(const al_imageset *cfg, const char **v, size_t *n,
                         const char *what)
{
	size_t i, k = 0;
	const char *pat = NULL;

	for (i = 0; i < *n; i++) {
		if (al_imageset_blocked(cfg, v[i], &pat)) {
			al_log_warn("%s %s is not mirrored: it matches "
			            "mirror.blockedImages '%s'",
			            what, v[i], pat);
			continue;
		}
		v[k++] = v[i];
	}
	*n = k;
}

/* Whether ref is (by pointer) an additional image of cfg with its own
 * platform. */
static int own_platform(const al_imageset *cfg, const char *ref)
{
	size_t i;

	for (i = 0; cfg->additional_platforms != NULL && i < cfg->nadditional;
	     i++)
		if (cfg->additional[i] == ref &&
		    cfg->additional_platforms[i] != NULL)
			return 1;
	return 0;
}

size_t al_mirror__own_platform_count(const al_imageset *cfg)
{
	const char *pat;
	size_t i, n = 0;

	for (i = 0; cfg != NULL && cfg->additional_platforms != NULL &&
	            i < cfg->nadditional;
	     i++)
		n += cfg->additional_platforms[i] != NULL &&
		     !al_imageset_blocked(cfg, cfg->additional[i], &pat);
	return n;
}

/* What a run of the image engine did, merged into report (sub cleared). */
static int merge_sub(al_mirror_report *report, al_mirror_report *sub)
{
	int rc = al_mirror__report_merge(report, sub, NULL);

	al_mirror_report_clear(sub);
	return rc;
}

/* The additional images with their own platform, each mirrored with it
 * (not blocked ones). */
static int own_platform_images(const al_imageset *cfg, al_store *s,
                               const al_transfer_opts *to,
                               al_mirror_report *report)
{
	al_transfer_opts o = *to;
	al_mirror_report sub = AL_MIRROR_REPORT_INIT;
	const char *one[1], *pat = NULL;
	size_t i;
	int rc = 0, r2;

	for (i = 0; cfg->additional_platforms != NULL && i < cfg->nadditional;
	     i++) {
		if (cfg->additional_platforms[i] == NULL ||
		    al_imageset_blocked(cfg, cfg->additional[i], &pat))
			continue;
		one[0] = cfg->additional[i];
		o.platform = cfg->additional_platforms[i];
		al_log_info("%s: platform %s (mirror.additionalImages[]."
		            "platforms)",
		            one[0], o.platform);
		memset(&sub, 0, sizeof(sub));
		if ((r2 = al_mirror__run_images(s, NULL, 0, one, 1, &o, NULL,
		                                &sub)) < 0)
			rc = rc < 0 ? rc : r2;
		if ((r2 = merge_sub(report, &sub)) < 0)
			rc = r2;
	}
	return rc;
}

const char *al_mirror__imageset_plan(const al_imageset *cfg,
                                     const char *platform,
                                     const char *opts_platform,
                                     const char **releases, size_t *nreleases,
                                     const char **images, size_t *nimages)
{
	size_t i, k;

	if (cfg == NULL)
		return platform;
	for (i = 0; i < cfg->nnotes; i++)
		al_log_warn("%s", cfg->notes[i]);
	drop_blocked(cfg, releases, nreleases, "release");
	drop_blocked(cfg, images, nimages, "image");
	/* an additional image with its own platform is mirrored after the
	 * rest, with that platform (al_mirror__imageset_after) */
	for (i = 0, k = 0; i < *nimages; i++)
		if (!own_platform(cfg, images[i]))
			images[k++] = images[i];
	*nimages = k;
	if (opts_platform != NULL)
		return opts_platform;
	/* platforms: one is that entry of the index, several the whole
	 * index (oc-mirror's sparse lists are not made) */
	if (cfg->nplatforms == 1)
		return cfg->platforms[0];
	if (cfg->nplatforms > 1)
		return NULL;
	/* "multi" is the multi-architecture payload: every entry */
	if (cfg->narchitectures == 1 &&
	    strcmp(cfg->architectures[0], "multi") == 0)
		return NULL;
	return platform;
}

/* "amd64" for a platform "linux/amd64", else the name itself. */
static const char *arch_of(const char *s)
{
	const char *slash = strchr(s, '/');

	if (slash == NULL)
		return s;
	s = slash + 1;
	return s;
}

/* Whether the architecture a (arch_of) is the prefix of b before '/'. */
static int arch_eq(const char *a, const char *b)
{
	size_t n = strcspn(a, "/");

	return strlen(b) == n && strncmp(a, b, n) == 0;
}

/*
 * Say which requested architectures (mirror.platform.architectures and
 * platforms) the release image at digest does not provide. A
 * single-architecture manifest provides its config's architecture, an
 * index its entries' (and "multi").
 */
static void check_arches(const al_imageset *cfg, al_store *s,
                         const al_mirror_release *rel)
{
	al_buf b = AL_BUF_INIT(AL_OCI_MANIFEST_MAX);
	al_manifest m;
	json_t *conf = NULL;
	const char *have = NULL;
	char *want[64];
	size_t nwant = 0, i, j;
	int found;

	memset(&m, 0, sizeof(m));
	for (i = 0; i < cfg->narchitectures && nwant < 64; i++)
		want[nwant++] = cfg->architectures[i];
	for (i = 0; i < cfg->nplatforms && nwant < 64; i++)
		want[nwant++] = cfg->platforms[i];
	if (nwant == 0)
		return;
	if (al_store_read_blob(s, &rel->digest, &b) < 0 ||
	    al_manifest_parse(&m, b.ptr, b.len, NULL, "release") < 0)
		goto out;
	if (!m.is_index) {
		al_buf cb = AL_BUF_INIT(AL_OCI_MANIFEST_MAX);

		if (al_store_read_blob(s, &m.config.digest, &cb) == 0)
			al_json_parse(&conf, cb.ptr, cb.len, "release config");
		al_buf_free(&cb);
		have = conf != NULL ? al_json_str(conf, "architecture") : NULL;
		if (have == NULL)
			goto out;
	}
	for (i = 0; i < nwant; i++) {
		const char *a = arch_of(want[i]);

		if (strcmp(want[i], "multi") == 0)
			found = m.is_index && m.nmanifests > 1;
		else if (!m.is_index)
			found = arch_eq(a, have);
		else
			for (found = 0, j = 0; j < m.nmanifests && !found; j++)
				found = m.manifests[j].arch != NULL &&
				        arch_eq(a, m.manifests[j].arch);
		if (found)
			continue;
		if (!m.is_index)
			al_log_warn("release %s provides only %s, not %s "
			            "named in mirror.platform",
			            rel->source, have, want[i]);
		else
			al_log_warn("release %s has no %s image (its index "
			            "lists %zu platforms), though "
			            "mirror.platform names it",
			            rel->source, want[i], m.nmanifests);
	}
out:
	json_decref(conf);
	al_manifest_clear(&m);
	al_buf_free(&b);
}

/* The bootimages JSON keys for the requested architectures, as oc-mirror
 * requestedKubeVirtArchKeys: amd64 -> x86_64, s390x -> s390x (the only
 * ones that carry a KubeVirt image); "multi" or several platforms with
 * none known: both; nothing requested: x86_64. */
static size_t kubevirt_keys(const al_imageset *cfg, const char **keys)
{
	size_t i, n = 0;
	const char *a;

	if (cfg->nplatforms > 0) {
		for (i = 0; i < cfg->nplatforms && n < 2; i++) {
			a = arch_of(cfg->platforms[i]);
			if (strcmp(a, "amd64") == 0)
				keys[n++] = "x86_64";
			else if (strcmp(a, "s390x") == 0)
				keys[n++] = "s390x";
		}
		if (n > 0)
			return n;
		keys[0] = "x86_64";
		keys[1] = "s390x";
		return 2;
	}
	for (i = 0; i < cfg->narchitectures && n < 2; i++) {
		a = cfg->architectures[i];
		if (strcmp(a, "multi") == 0) {
			keys[0] = "x86_64";
			keys[1] = "s390x";
			return 2;
		}
		if (strcmp(a, "amd64") == 0)
			keys[n++] = "x86_64";
		else if (strcmp(a, "s390x") == 0)
			keys[n++] = "s390x";
	}
	if (n > 0)
		return n;
	keys[0] = "x86_64";
	return 1;
}

int al_mirror__kubevirt_refs(const uint8_t *p, size_t len, const char *what,
                             const char *const *keys, size_t nkeys, char ***out,
                             size_t *nout)
{
	al_yaml_node **docs = NULL;
	size_t ndocs = 0, i;
	const al_yaml_node *data, *stream;
	json_t *j = NULL;
	char **refs = NULL;
	size_t n = 0;
	int rc;

	*out = NULL;
	*nout = 0;
	if ((rc = al_yaml_load_lenient(&docs, &ndocs, p, len, what)) < 0)
		return rc;
	if (ndocs < 1 || docs[0] == NULL || docs[0]->type != AL_YAML_MAP ||
	    (data = al_yaml_get(docs[0], "data")) == NULL ||
	    data->type != AL_YAML_MAP ||
	    (stream = al_yaml_get(data, "stream")) == NULL ||
	    stream->type != AL_YAML_SCALAR) {
		rc = al_error_set(AL_EPARSE,
		                  "%s: not a ConfigMap with data.stream", what);
		goto out;
	}
	if ((rc = al_json_parse(&j, (const uint8_t *)stream->value, stream->len,
	                        what)) < 0)
		goto out;
	refs = calloc(nkeys + 1, sizeof(*refs));
	if (refs == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < nkeys; i++) {
		/* architectures.<key>.images.kubevirt.digest-ref */
		json_t *kv = json_object_get(
		    json_object_get(
		        json_object_get(json_object_get(j, "architectures"),
		                        keys[i]),
		        "images"),
		    "kubevirt");
		const char *ref = al_json_str(kv, "digest-ref");

		if (ref == NULL || ref[0] == '\0')
			continue;
		if ((refs[n] = al_strdup(ref)) == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		n++;
	}
	*out = refs;
	*nout = n;
	refs = NULL;
out:
	if (refs != NULL)
		for (i = 0; i < n; i++)
			free(refs[i]);
	free(refs);
	json_decref(j);
	al_yaml_docs_free(docs, ndocs);
	return rc;
}

#define add_error al_mirror__report_error /* mirror_int.h */

/* The KubeVirt images release rel names, appended to *refs. */
static int kubevirt_of(const al_imageset *cfg, al_store *s,
                       const al_mirror_release *rel, const char *platform,
                       char ***refs, size_t *nrefs, al_mirror_report *report)
{
	const char *keys[2];
	size_t nkeys = kubevirt_keys(cfg, keys), nf, i, nfound = 0, len;
	al_release *r = NULL;
	char **found = NULL, **grown;
	char *msg = NULL;
	int rc;

	if ((rc = al_release_open(&r, s, &rel->digest, platform)) < 0)
		goto fail;
	nf = al_release_file_count(r);
	for (i = 0; i < nf; i++)
		if (strcmp(al_release_file_name(r, i), BOOTIMAGES) == 0)
			break;
	if (i == nf) {
		rc = al_error_set(AL_ENOTFOUND, "release-manifests/" BOOTIMAGES
		                                " is not in the release");
		goto fail;
	}
	{
		const uint8_t *p = al_release_file_data(r, i, &len);

		if ((rc = al_mirror__kubevirt_refs(
		         p, len, "release-manifests/" BOOTIMAGES, keys, nkeys,
		         &found, &nfound)) < 0)
			goto fail;
	}
	if (nfound == 0) {
		rc = al_error_set(AL_ENOTFOUND,
		                  "could not find the KubeVirt image in this "
		                  "release (no images.kubevirt.digest-ref for "
		                  "%s%s%s)",
		                  keys[0], nkeys > 1 ? " or " : "",
		                  nkeys > 1 ? keys[1] : "");
		goto fail;
	}
	grown = realloc(*refs, (*nrefs + nfound) * sizeof(*grown));
	if (grown == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	*refs = grown;
	for (i = 0; i < nfound; i++) {
		al_log_info("kubeVirtContainer: %s names %s", rel->source,
		            found[i]);
		grown[(*nrefs)++] = found[i];
		found[i] = NULL;
	}
	goto out;
fail:
	msg = al_sprintf("%s: kubeVirtContainer: %s", rel->source,
	                 al_error_message());
	if (msg == NULL || add_error(report, msg) < 0)
		rc = al_error_set(AL_ENOMEM, "out of memory");
	else
		al_error_set(rc, "%s", msg);
out:
	for (i = 0; i < nfound; i++)
		free(found[i]);
	free(found);
	free(msg);
	al_release_free(r);
	return rc;
}

/* blockedImages does not cut a release (a store that names a release holds
 * every image of its image-references): say which components it matched. */
static void warn_blocked_components(const al_imageset *cfg, al_store *s,
                                    const al_mirror_release *rel,
                                    const char *platform)
{
	al_release *r = NULL;
	const char *pat = NULL;
	size_t i, n;

	if (al_release_open(&r, s, &rel->digest, platform) < 0) {
		al_error_clear();
		return;
	}
	n = al_release_component_count(r);
	for (i = 0; i < n; i++) {
		const al_release_component *c = al_release_component_at(r, i);

		if (al_imageset_blocked(cfg, c->image, &pat))
			al_log_warn(
			    "component %s (%s) of release %s matches "
			    "mirror.blockedImages '%s' and was mirrored "
			    "all the same: airlock keeps a release "
			    "whole",
			    c->name, c->image, rel->source, pat);
	}
	al_release_free(r);
}

int al_mirror__imageset_after(const al_imageset *cfg, al_store *s,
                              const al_transfer_opts *to,
                              al_mirror_report *report)
{
	char **kv = NULL;
	size_t nkv = 0, i, k;
	al_mirror_report sub = AL_MIRROR_REPORT_INIT;
	int rc = 0, r2;

	if (cfg == NULL)
		return 0;
	for (i = 0; i < report->nreleases; i++) {
		const al_mirror_release *rel = &report->releases[i];

		if (rel->status != 0)
			continue;
		check_arches(cfg, s, rel);
		if (cfg->nblocked > 0)
			warn_blocked_components(cfg, s, rel, to->platform);
		if (cfg->kubevirt &&
		    (r2 = kubevirt_of(cfg, s, rel, to->platform, &kv, &nkv,
		                      report)) < 0)
			rc = rc < 0 ? rc : r2;
	}
	for (i = 0, k = 0; i < nkv; i++) {
		const char *pat = NULL;

		if (al_imageset_blocked(cfg, kv[i], &pat)) {
			al_log_warn("KubeVirt image %s is not mirrored: it "
			            "matches mirror.blockedImages '%s'",
			            kv[i], pat);
			free(kv[i]);
			continue;
		}
		kv[k++] = kv[i];
	}
	nkv = k;
	if (nkv > 0) {
		r2 = al_mirror__run_images(s, NULL, 0, (const char *const *)kv,
		                           nkv, to, NULL, &sub);
		if (r2 < 0)
			rc = rc < 0 ? rc : r2;
		if ((r2 = merge_sub(report, &sub)) < 0)
			rc = r2;
	}
	if ((r2 = own_platform_images(cfg, s, to, report)) < 0)
		rc = rc < 0 ? rc : r2;
	if ((r2 = al_imageset_record_defaults(cfg, al_store_path(s))) < 0) {
		if (add_error(report, al_error_message()) < 0)
			r2 = AL_ENOMEM;
		rc = rc < 0 ? rc : r2;
	}
	for (i = 0; i < nkv; i++)
		free(kv[i]);
	free(kv);
	return rc;
}

/* ---- archiveSize, recorded for pack ---------------------------------- */

int al_imageset_record_defaults(const al_imageset *cfg, const char *store)
{
	json_t *j = NULL;
	char *path = NULL;
	int rc = 0;

	if (cfg == NULL || cfg->archive_size == 0)
		return 0;
	path = al_path_join(store, DEFAULTS_FILE);
	j = json_pack("{s:I, s:s}", "packVolumeSize",
	              (json_int_t)cfg->archive_size, "from",
	              cfg->path != NULL ? cfg->path : "");
	if (path == NULL || j == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = al_json_save_file(path, j, 2)) < 0)
		rc = al_error_wrap(rc, "recording archiveSize in '%s'", path);
out:
	json_decref(j);
	free(path);
	return rc;
}

int al_imageset_pack_volume_default(const char *store, uint64_t *bytes)
{
	json_t *j = NULL, *v;
	char *path = al_path_join(store, DEFAULTS_FILE);
	int rc;

	*bytes = 0;
	if (path == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	rc = al_json_load_file(&j, path, DEFAULTS_MAX);
	if (rc == AL_ENOTFOUND) {
		rc = 0;
		goto out;
	}
	if (rc < 0)
		goto out;
	v = json_object_get(j, "packVolumeSize");
	if (v == NULL)
		goto out;
	if (!json_is_integer(v) || json_integer_value(v) <= 0) {
		rc = al_error_set(AL_EPARSE,
		                  "'%s': packVolumeSize must be a positive "
		                  "number of bytes",
		                  path);
		goto out;
	}
	*bytes = (uint64_t)json_integer_value(v);
out:
	json_decref(j);
	free(path);
	return rc;
}
