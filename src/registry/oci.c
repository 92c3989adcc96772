/* oci.c: strict parsing of OCI and Docker schema2 manifests and indexes,
 * descriptors, platform matching. */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/oci.h"
#include "oci_int.h"

/* Bound on any string we copy out of a manifest (media types, platform). */
#define OCI_STR_MAX 1024

void al_descriptor_clear(al_descriptor *d)
{
	if (d == NULL)
		return;
	free(d->media_type);
	free(d->artifact_type);
	free(d->os);
	free(d->arch);
	free(d->variant);
	memset(d, 0, sizeof(*d));
}

void al_manifest_clear(al_manifest *m)
{
	size_t i;

	if (m == NULL)
		return;
	free(m->media_type);
	al_descriptor_clear(&m->config);
	for (i = 0; i < m->nlayers; i++)
		al_descriptor_clear(&m->layers[i]);
	free(m->layers);
	for (i = 0; i < m->nmanifests; i++)
		al_descriptor_clear(&m->manifests[i]);
	free(m->manifests);
	al_descriptor_clear(&m->subject);
	free(m->artifact_type);
	memset(m, 0, sizeof(*m));
}

static int dup_opt(char **out, const char *s)
{
	if (s == NULL) {
		*out = NULL;
		return 0;
	}
	*out = al_strdup(s);
	if (*out == NULL)
		return al_error_oom();
	return 0;
}

int al_descriptor_copy(al_descriptor *out, const al_descriptor *in)
{
	al_descriptor d;
	int rc;

	memset(&d, 0, sizeof(d));
	d.digest = in->digest;
	d.size = in->size;
	if ((rc = dup_opt(&d.media_type, in->media_type)) < 0 ||
	    (rc = dup_opt(&d.artifact_type, in->artifact_type)) < 0 ||
	    (rc = dup_opt(&d.os, in->os)) < 0 ||
	    (rc = dup_opt(&d.arch, in->arch)) < 0 ||
	    (rc = dup_opt(&d.variant, in->variant)) < 0)
		goto out;
	*out = d;
	memset(&d, 0, sizeof(d));
out:
	al_descriptor_clear(&d);
	return rc;
}

int al_media_type_is_index(const char *media_type)
{
	if (media_type == NULL)
		return 0;
	return strcmp(media_type, AL_MT_OCI_INDEX) == 0 ||
	       strcmp(media_type, AL_MT_DOCKER_LIST) == 0;
}

int al_media_type_is_manifest(const char *media_type)
{
	if (media_type == NULL)
		return 0;
	return al_media_type_is_index(media_type) ||
	       strcmp(media_type, AL_MT_OCI_MANIFEST) == 0 ||
	       strcmp(media_type, AL_MT_DOCKER_MANIFEST) == 0;
}

int al_platform_match(const al_descriptor *d, const char *platform)
{
	const char *s1, *s2;
	size_t oslen, archlen;

	if (d == NULL || platform == NULL || d->os == NULL || d->arch == NULL)
		return 0;
	s1 = strchr(platform, '/');
	if (s1 == NULL)
		return 0;
	oslen = (size_t)(s1 - platform);
	s2 = strchr(s1 + 1, '/');
	archlen = s2 != NULL ? (size_t)(s2 - s1 - 1) : strlen(s1 + 1);
	if (strlen(d->os) != oslen || memcmp(d->os, platform, oslen) != 0)
		return 0;
	if (strlen(d->arch) != archlen || memcmp(d->arch, s1 + 1, archlen) != 0)
		return 0;
	if (s2 == NULL)
		return 1;
	return d->variant != NULL && strcmp(d->variant, s2 + 1) == 0;
}

/* A bounded string member: *out borrowed, NULL when absent. A present
 * member of another type is AL_EPARSE. */
static int get_str(const char **out, const json_t *obj, const char *key,
                   const char *ctx, const char *what)
{
	json_t *v = json_object_get(obj, key);

	*out = NULL;
	if (v == NULL)
		return 0;
	if (!json_is_string(v))
		return al_error_set(AL_EPARSE, "%s: %s: '%s' is not a string",
		                    what, ctx, key);
	if (json_string_length(v) > OCI_STR_MAX ||
	    strlen(json_string_value(v)) != json_string_length(v))
		return al_error_set(
		    AL_EPARSE, "%s: %s: '%s' is too long or holds a NUL byte",
		    what, ctx, key);
	*out = json_string_value(v);
	return 0;
}

static int check_annotations(const json_t *obj, const char *ctx,
                             const char *what)
{
	json_t *a = json_object_get(obj, "annotations"), *v;
	const char *k;

	if (a == NULL)
		return 0;
	if (!json_is_object(a))
		return al_error_set(AL_EPARSE,
		                    "%s: %s: 'annotations' is not an object",
		                    what, ctx);
	json_object_foreach(a, k, v)
	{
		if (!json_is_string(v))
			return al_error_set(
			    AL_EPARSE,
			    "%s: %s: annotation '%s' is not a string", what,
			    ctx, k);
	}
	return 0;
}

/* Parse one descriptor object (ctx names it: "config", "layers[3]"). */
static int parse_descriptor(al_descriptor *out, const json_t *obj,
                            int want_platform, const char *ctx,
                            const char *what)
{
	al_descriptor d;
	const char *mt, *dg, *at, *os = NULL, *arch = NULL, *variant = NULL;
	json_t *size, *urls, *plat, *u;
	size_t i;
	int rc;

	memset(&d, 0, sizeof(d));
	if (!json_is_object(obj))
		return al_error_set(AL_EPARSE, "%s: %s is not an object", what,
		                    ctx);
	if ((rc = get_str(&mt, obj, "mediaType", ctx, what)) < 0 ||
	    (rc = get_str(&dg, obj, "digest", ctx, what)) < 0 ||
	    (rc = get_str(&at, obj, "artifactType", ctx, what)) < 0)
		return rc;
	if (mt == NULL || mt[0] == '\0')
		return al_error_set(AL_EPARSE, "%s: %s has no mediaType", what,
		                    ctx);
	if (dg == NULL)
		return al_error_set(AL_EPARSE, "%s: %s has no digest", what,
		                    ctx);
	if ((rc = al_digest_parse_str(&d.digest, dg)) < 0)
		return al_error_wrap(rc, "%s: %s", what, ctx);
	size = json_object_get(obj, "size");
	if (size == NULL)
		return al_error_set(AL_EPARSE, "%s: %s has no size", what, ctx);
	if (!json_is_integer(size) || json_integer_value(size) < 0)
		return al_error_set(
		    AL_EPARSE, "%s: %s: size is not a non-negative integer",
		    what, ctx);
	d.size = (uint64_t)json_integer_value(size);
	urls = json_object_get(obj, "urls");
	if (urls != NULL) {
		if (!json_is_array(urls))
			return al_error_set(AL_EPARSE,
			                    "%s: %s: 'urls' is not an array",
			                    what, ctx);
		json_array_foreach(urls, i, u)
		{
			if (!json_is_string(u))
				return al_error_set(
				    AL_EPARSE,
				    "%s: %s: urls[%zu] is not a string", what,
				    ctx, i);
		}
	}
	if ((rc = check_annotations(obj, ctx, what)) < 0)
		return rc;
	plat = json_object_get(obj, "platform");
	if (plat != NULL) {
		if (!want_platform)
			return al_error_set(
			    AL_EPARSE,
			    "%s: %s: 'platform' only belongs to index entries",
			    what, ctx);
		if (!json_is_object(plat))
			return al_error_set(
			    AL_EPARSE, "%s: %s: 'platform' is not an object",
			    what, ctx);
		if ((rc = get_str(&os, plat, "os", ctx, what)) < 0 ||
		    (rc = get_str(&arch, plat, "architecture", ctx, what)) <
		        0 ||
		    (rc = get_str(&variant, plat, "variant", ctx, what)) < 0)
			return rc;
		if (os == NULL || os[0] == '\0' || arch == NULL ||
		    arch[0] == '\0')
			return al_error_set(
			    AL_EPARSE,
			    "%s: %s: platform needs 'os' and 'architecture'",
			    what, ctx);
	}
	if ((rc = dup_opt(&d.media_type, mt)) < 0 ||
	    (rc = dup_opt(&d.artifact_type, at)) < 0 ||
	    (rc = dup_opt(&d.os, os)) < 0 ||
	    (rc = dup_opt(&d.arch, arch)) < 0 ||
	    (rc = dup_opt(&d.variant, variant)) < 0)
		goto out;
	*out = d;
	memset(&d, 0, sizeof(d));
out:
	al_descriptor_clear(&d);
	return rc;
}

int al_descriptor_from_json(al_descriptor *out, const json_t *obj,
                            int platform_ok, const char *what)
{
	return parse_descriptor(out, obj, platform_ok, "descriptor",
	                        what != NULL ? what : "descriptor");
}

json_t *al_descriptor_to_json(const al_descriptor *d)
{
	char dg[AL_DIGEST_STRMAX];
	json_t *o = json_object(), *plat = NULL, *ret = NULL;

	if (o == NULL)
		return NULL;
	if (json_object_set_new(
	        o, "mediaType",
	        json_string(d->media_type != NULL ? d->media_type : "")) != 0 ||
	    json_object_set_new(
	        o, "digest", json_string(al_digest_str(&d->digest, dg))) != 0 ||
	    json_object_set_new(o, "size", json_integer((json_int_t)d->size)) !=
	        0)
		goto out;
	if (d->artifact_type != NULL &&
	    json_object_set_new(o, "artifactType",
	                        json_string(d->artifact_type)) != 0)
		goto out;
	if (d->os != NULL && d->arch != NULL) {
		plat = json_object();
		if (plat == NULL ||
		    json_object_set_new(plat, "architecture",
		                        json_string(d->arch)) != 0 ||
		    json_object_set_new(plat, "os", json_string(d->os)) != 0 ||
		    (d->variant != NULL &&
		     json_object_set_new(plat, "variant",
		                         json_string(d->variant)) != 0))
			goto out;
		/* set_new takes plat over, even when it fails */
		if (json_object_set_new(o, "platform", plat) != 0) {
			plat = NULL;
			goto out;
		}
		plat = NULL;
	}
	ret = o;
	o = NULL;
out:
	json_decref(plat);
	json_decref(o);
	return ret;
}

static int parse_list(al_descriptor **out, size_t *nout, const json_t *root,
                      const char *key, int want_platform, const char *what)
{
	json_t *arr = json_object_get(root, key), *e;
	al_descriptor *v = NULL;
	size_t i, n = 0, count;
	char ctx[64];
	int rc = 0;

	if (arr == NULL)
		return al_error_set(AL_EPARSE, "%s: no '%s'", what, key);
	if (!json_is_array(arr))
		return al_error_set(AL_EPARSE, "%s: '%s' is not an array", what,
		                    key);
	count = json_array_size(arr);
	if (count > AL_OCI_ENTRIES_MAX)
		return al_error_set(AL_ELIMIT,
		                    "%s: %zu entries in '%s' (at most %d)",
		                    what, count, key, AL_OCI_ENTRIES_MAX);
	if (count > 0) {
		v = calloc(count, sizeof(*v));
		if (v == NULL)
			return al_error_oom();
	}
	json_array_foreach(arr, i, e)
	{
		int k = snprintf(ctx, sizeof(ctx), "%s[%zu]", key, i);

		if (k < 0 || (size_t)k >= sizeof(ctx)) {
			rc =
			    al_error_set(AL_EINVAL, "descriptor name too long");
			goto out;
		}
		if ((rc = parse_descriptor(&v[i], e, want_platform, ctx,
		                           what)) < 0)
			goto out;
		n++;
	}
	*out = v;
	*nout = n;
	v = NULL;
	n = 0;
out:
	for (i = 0; i < n; i++)
		al_descriptor_clear(&v[i]);
	free(v);
	return rc;
}

static int is_schema1(const char *mt)
{
	return strcmp(mt, AL_MT_DOCKER_SCHEMA1) == 0 ||
	       strcmp(mt, AL_MT_DOCKER_SCHEMA1_SIGNED) == 0;
}

int al_manifest_parse(al_manifest *out, const uint8_t *p, size_t n,
                      const char *hint, const char *what)
{
	al_manifest m;
	json_t *root = NULL, *sv, *subj;
	json_error_t jerr;
	const char *mt = NULL, *at = NULL;
	int rc = 0;

	memset(&m, 0, sizeof(m));
	if (what == NULL)
		what = "manifest";
	if (n > AL_OCI_MANIFEST_MAX)
		return al_error_set(AL_ELIMIT, "%s: %zu bytes (at most %llu)",
		                    what, n,
		                    (unsigned long long)AL_OCI_MANIFEST_MAX);
	root = json_loadb((const char *)p, n, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL)
		return al_error_set(AL_EPARSE, "%s: line %d, column %d: %s",
		                    what, jerr.line, jerr.column, jerr.text);
	if (!json_is_object(root)) {
		rc = al_error_set(AL_EPARSE, "%s: not a JSON object", what);
		goto out;
	}
	sv = json_object_get(root, "schemaVersion");
	if (sv != NULL && json_is_integer(sv) && json_integer_value(sv) == 1) {
		rc = al_error_set(
		    AL_EUNSUPPORTED,
		    "%s: Docker schema1 manifests are not supported", what);
		goto out;
	}
	if (sv == NULL || !json_is_integer(sv) || json_integer_value(sv) != 2) {
		rc = al_error_set(AL_EPARSE, "%s: schemaVersion must be 2",
		                  what);
		goto out;
	}
	if ((rc = get_str(&mt, root, "mediaType", "manifest", what)) < 0 ||
	    (rc = get_str(&at, root, "artifactType", "manifest", what)) < 0)
		goto out;
	/* A generic hint ("application/json", "text/plain") says nothing. */
	if (mt == NULL && hint != NULL &&
	    (al_media_type_is_manifest(hint) || is_schema1(hint)))
		mt = hint;
	if (mt == NULL) {
		if (json_object_get(root, "manifests") != NULL)
			mt = AL_MT_OCI_INDEX;
		else if (json_object_get(root, "config") != NULL)
			mt = AL_MT_OCI_MANIFEST;
		else {
			rc = al_error_set(
			    AL_EPARSE,
			    "%s: no mediaType, no config, no manifests", what);
			goto out;
		}
	}
	if (is_schema1(mt)) {
		rc = al_error_set(AL_EUNSUPPORTED,
		                  "%s: media type '%s' is not supported", what,
		                  mt);
		goto out;
	}
	if (!al_media_type_is_manifest(mt)) {
		rc = al_error_set(AL_EUNSUPPORTED,
		                  "%s: unknown media type '%s'", what, mt);
		goto out;
	}
	if ((rc = dup_opt(&m.media_type, mt)) < 0 ||
	    (rc = dup_opt(&m.artifact_type, at)) < 0)
		goto out;
	m.is_index = al_media_type_is_index(mt);
	if (m.is_index) {
		if (json_object_get(root, "config") != NULL ||
		    json_object_get(root, "layers") != NULL) {
			rc = al_error_set(
			    AL_EPARSE,
			    "%s: an index has no 'config' or 'layers'", what);
			goto out;
		}
		if ((rc = parse_list(&m.manifests, &m.nmanifests, root,
		                     "manifests", 1, what)) < 0)
			goto out;
	} else {
		if (json_object_get(root, "manifests") != NULL) {
			rc = al_error_set(
			    AL_EPARSE,
			    "%s: an image manifest has no 'manifests'", what);
			goto out;
		}
		if (json_object_get(root, "config") == NULL) {
			rc = al_error_set(AL_EPARSE, "%s: no 'config'", what);
			goto out;
		}
		if ((rc = parse_descriptor(&m.config,
		                           json_object_get(root, "config"), 0,
		                           "config", what)) < 0)
			goto out;
		if ((rc = parse_list(&m.layers, &m.nlayers, root, "layers", 0,
		                     what)) < 0)
			goto out;
	}
	subj = json_object_get(root, "subject");
	if (subj != NULL) {
		if ((rc = parse_descriptor(&m.subject, subj, 0, "subject",
		                           what)) < 0)
			goto out;
		m.has_subject = 1;
	}
	if ((rc = check_annotations(root, "manifest", what)) < 0)
		goto out;
	*out = m;
	memset(&m, 0, sizeof(m));
out:
	al_manifest_clear(&m);
	json_decref(root);
	return rc;
}
