/* catalog_kres.c: cluster resources for a pushed catalog: CatalogSource
 * (OLM v0) and ClusterCatalog (OLM v1). */
#include <stdlib.h>
#include <string.h>

#include "airlock/error.h"
#include "yaml_int.h"
#include "catalog_int.h"

#define NAME_MAX_LEN 63 /* a DNS-1123 label: CatalogSource names a Service */
#define SUFFIX_LEN 12   /* oc-mirror clusterresources hashTruncLen */

char *al_catalog_resource_name(const char *prefix, const char *image)
{
	al_buf b = AL_BUF_INIT(4096);
	const char *slash, *at, *colon, *repo, *tag = NULL;
	size_t rl, tl, i, n;
	char *s;

	if (prefix == NULL || image == NULL)
		return NULL;
	if (al_str_startswith(image, "docker://"))
		image += strlen("docker://");
	at = strchr(image, '@');
	slash = strrchr(image, '/');
	repo = slash != NULL ? slash + 1 : image;
	colon = strchr(repo, ':');
	if (colon != NULL && (at == NULL || colon < at)) {
		rl = (size_t)(colon - repo);
		tag = colon + 1;
	} else {
		rl = at != NULL ? (size_t)(at - repo) : strlen(repo);
	}
	/* oc-mirror generateCatalogSource: the first 12 characters
	 * (hashTruncLen) of the tag, or of the digest's hex for an image
	 * named by digest only, "0" for neither */
	if (tag != NULL) {
		tl = at != NULL && at > tag ? (size_t)(at - tag) : strlen(tag);
	} else if (at != NULL && (tag = strchr(at, ':')) != NULL) {
		tag++;
		tl = strlen(tag);
	} else {
		tag = "0";
		tl = 1;
	}
	if (tl > SUFFIX_LEN)
		tl = SUFFIX_LEN;
	if (al_buf_printf(&b, "%s-%.*s-%.*s", prefix, (int)rl, repo, (int)tl,
	                  tag) < 0) {
		al_buf_free(&b);
		return NULL;
	}
	s = al_buf_detach(&b, &n);
	if (s == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		char ch = s[i];

		if (ch >= 'A' && ch <= 'Z')
			s[i] = (char)(ch - 'A' + 'a');
		else if (!((ch >= 'a' && ch <= 'z') ||
		           (ch >= '0' && ch <= '9')))
			s[i] = '-';
	}
	if (n > NAME_MAX_LEN)
		s[n = NAME_MAX_LEN] = '\0';
	while (n > 0 && s[n - 1] == '-')
		s[--n] = '\0';
	return s;
}

static int emit(al_buf *out, json_t *doc)
{
	int rc;

	if (doc == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	rc = al_yaml_emit_json(out, &doc, 1);
	json_decref(doc);
	return rc;
}

int al_catalog_source_yaml(al_buf *out, const char *name, const char *image,
                           const char *display_name)
{
	json_t *doc, *spec;

	if (out == NULL || name == NULL || image == NULL || name[0] == '\0' ||
	    image[0] == '\0')
		return al_error_set(AL_EINVAL, "no name or image");
	spec = json_pack("{s:s, s:s}", "sourceType", "grpc", "image", image);
	if (spec != NULL && display_name != NULL &&
	    json_object_set_new(spec, "displayName",
	                        json_string(display_name)) < 0) {
		json_decref(spec);
		spec = NULL;
	}
	if (spec == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	doc = json_pack("{s:s, s:s, s:{s:s, s:s}, s:o}", "apiVersion",
	                "operators.coreos.com/v1alpha1", "kind",
	                "CatalogSource", "metadata", "name", name, "namespace",
	                "openshift-marketplace", "spec", spec);
	return emit(out, doc);
}

int al_cluster_catalog_yaml(al_buf *out, const char *name, const char *image)
{
	if (out == NULL || name == NULL || image == NULL || name[0] == '\0' ||
	    image[0] == '\0')
		return al_error_set(AL_EINVAL, "no name or image");
	return emit(out, json_pack("{s:s, s:s, s:{s:s}, s:{s:{s:s, s:{s:s}}}}",
	                           "apiVersion", "olm.operatorframework.io/v1",
	                           "kind", "ClusterCatalog", "metadata", "name",
	                           name, "spec", "source", "type", "Image",
	                           "image", "ref", image));
}

/* A pull spec or a resource name written as a plain YAML scalar: no
 * character YAML would read otherwise. */
static int plain_ok(const char *s)
{
	size_t i;

	if (s == NULL || s[0] == '\0')
		return 0;
	for (i = 0; s[i] != '\0'; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '-' ||
		      c == '_' || c == '/' || c == ':' || c == '@'))
			return 0;
	}
	return s[0] != '-' && s[0] != ':' && s[0] != '@';
}

static int ocmirror_check(const char *name, const char *image,
                          const char *created_at)
{
	if (!plain_ok(name) || !plain_ok(image) || created_at == NULL ||
	    strchr(created_at, '"') != NULL)
		return al_error_set(AL_EINVAL, "no name, image or time, or "
		                               "one YAML would read otherwise");
	return 0;
}

int al_catalog_source_yaml_ocmirror(al_buf *out, const char *name,
                                    const char *image, const char *created_at)
{
	int rc;

	if (out == NULL)
		return al_error_set(AL_EINVAL, "no output");
	if ((rc = ocmirror_check(name, image, created_at)) < 0)
		return rc;
	return al_buf_printf(
	    out,
	    "apiVersion: operators.coreos.com/v1alpha1\nkind: CatalogSource\n"
	    "metadata:\n  annotations:\n    createdAt: \"%s\"\n"
	    "    createdBy: airlock\n    oc-mirror_version: %s\n  name: %s\n"
	    "  namespace: openshift-marketplace\nspec:\n  image: %s\n"
	    "  sourceType: grpc\n",
	    created_at, al_version(), name, image);
}

int al_cluster_catalog_yaml_ocmirror(al_buf *out, const char *name,
                                     const char *image, const char *created_at)
{
	int rc;

	if (out == NULL)
		return al_error_set(AL_EINVAL, "no output");
	if ((rc = ocmirror_check(name, image, created_at)) < 0)
		return rc;
	return al_buf_printf(
	    out,
	    "apiVersion: olm.operatorframework.io/v1\nkind: ClusterCatalog\n"
	    "metadata:\n  annotations:\n    createdAt: \"%s\"\n"
	    "    createdBy: airlock\n    oc-mirror_version: %s\n  name: %s\n"
	    "spec:\n  priority: 0\n  source:\n    image:\n      ref: %s\n"
	    "    type: Image\n",
	    created_at, al_version(), name, image);
}
