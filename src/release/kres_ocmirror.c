/* kres_ocmirror.c: ImageDigestMirrorSet and ImageTagMirrorSet as oc-mirror
 * v2 writes them: one object per category, its annotations, its key order
 * (internal/pkg/clusterresources/clusterresources.go; docs/push.md). */
#include <stdlib.h>
#include <string.h>

#include "airlock/buf.h"
#include "airlock/common.h"
#include "airlock/error.h"
#include "airlock/digest.h"
#include "airlock/kres.h"

static const char *const categories_order[] = {"release", "operator",
                                               "generic"};

typedef struct pick {
	const char *source;
	const char *mirror;
	size_t order;
} pick;

static int cmp_pick(const void *a, const void *b)
{
	const pick *x = a, *y = b;
	int c = strcmp(x->source, y->source);

	if (c != 0)
		return c;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int known_category(const char *c)
{
	size_t i;

	for (i = 0; i < sizeof(categories_order) / sizeof(*categories_order);
	     i++)
		if (c != NULL && strcmp(c, categories_order[i]) == 0)
			return 1;
	return 0;
}

/* One object: the picks of one category, sorted by source. */
static int emit_one(al_buf *out, const char *category, const pick *p, size_t n,
                    int tag, const char *created_at)
{
	size_t i, j;
	int rc;

	/* sigs.k8s.io/yaml: keys sorted, a timestamp-like string quoted
	 * (yaml.v2 resolves it as a timestamp) */
	rc = al_buf_printf(
	    out,
	    "---\napiVersion: config.openshift.io/v1\nkind: %s\nmetadata:\n"
	    "  annotations:\n    createdAt: \"%s\"\n    createdBy: airlock\n"
	    "    oc-mirror_version: %s\n  name: %s-%s-0\nspec:\n  %s:\n",
	    tag ? "ImageTagMirrorSet" : "ImageDigestMirrorSet", created_at,
	    al_version(), tag ? "itms" : "idms", category,
	    tag ? "imageTagMirrors" : "imageDigestMirrors");
	for (i = 0; rc == 0 && i < n; i = j) {
		/* the mirrors of one source, in first-seen order */
		rc = al_buf_printf(out, "  - mirrors:\n");
		for (j = i;
		     rc == 0 && j < n && strcmp(p[j].source, p[i].source) == 0;
		     j++) {
			size_t k;
			int dup = 0;

			for (k = i; k < j; k++)
				if (strcmp(p[k].mirror, p[j].mirror) == 0)
					dup = 1;
			if (!dup)
				rc = al_buf_printf(out, "    - %s\n",
				                   p[j].mirror);
		}
		if (rc == 0)
			rc =
			    al_buf_printf(out, "    source: %s\n", p[i].source);
	}
	return rc;
}

int al_kres_mirrorsets_ocmirror(al_buf *out, const al_mirror_map *maps,
                                const char *const *categories, size_t n,
                                int tag, const char *created_at)
{
	pick *p = NULL;
	size_t i, c, np;
	int rc = 0;

	if (out == NULL || (n > 0 && (maps == NULL || categories == NULL)) ||
	    created_at == NULL)
		return al_error_set(AL_EINVAL, "mirror sets: no output");
	for (i = 0; i < n; i++) {
		if (!known_category(categories[i]))
			return al_error_set(
			    AL_EINVAL, "mirror sets: unknown category '%s'",
			    categories[i] != NULL ? categories[i] : "");
		if (!al_kres_location_valid(maps[i].source, 1) ||
		    !al_kres_location_valid(maps[i].mirror, 0))
			return al_error_set(
			    AL_EINVAL,
			    "mirror sets: '%s' -> '%s' is not a "
			    "location the cluster accepts",
			    maps[i].source, maps[i].mirror);
	}
	if (n > 0 && (p = calloc(n, sizeof(*p))) == NULL)
		return al_error_oom();
	for (c = 0; rc == 0 &&
	            c < sizeof(categories_order) / sizeof(*categories_order);
	     c++) {
		np = 0;
		for (i = 0; i < n; i++) {
			if (strcmp(categories[i], categories_order[c]) != 0 ||
			    !(tag ? maps[i].by_tag : maps[i].by_digest))
				continue;
			p[np].source = maps[i].source;
			p[np].mirror = maps[i].mirror;
			p[np].order = i;
			np++;
		}
		if (np == 0)
			continue;
		qsort(p, np, sizeof(*p), cmp_pick);
		rc = emit_one(out, categories_order[c], p, np, tag, created_at);
	}
	free(p);
	return rc;
}

typedef struct sigkey {
	char *key;   /* sha256-<hex>-<n> */
	char *value; /* base64 */
} sigkey;

static int cmp_sigkey(const void *a, const void *b)
{
	return strcmp(((const sigkey *)a)->key, ((const sigkey *)b)->key);
}

int al_kres_signatures_ocmirror(al_buf *out, const al_digest *releases,
                                const uint8_t *const *sigs, const size_t *lens,
                                size_t n, int flags, const char *created_at)
{
	sigkey *k = NULL;
	size_t i;
	int rc = 0;

	if (out == NULL || releases == NULL || sigs == NULL || lens == NULL ||
	    n == 0 || created_at == NULL)
		return al_error_set(AL_EINVAL, "signature ConfigMap: nothing "
		                               "to write");
	for (i = 0; i < n; i++)
		if (sigs[i] == NULL || lens[i] == 0)
			return al_error_set(AL_EINVAL,
			                    "signature ConfigMap: empty "
			                    "signature %zu",
			                    i + 1);
	if ((k = calloc(n, sizeof(*k))) == NULL)
		return al_error_oom();
	for (i = 0; i < n; i++) {
		char hex[AL_DIGEST_STRMAX];

		al_digest_hex(&releases[i], hex);
		/* configMapBinaryDataIndexFormat "sha256-%s-%d", the index
		 * counting releases */
		k[i].key = al_sprintf("sha256-%s-%zu", hex, i + 1);
		k[i].value = al_base64_encode(sigs[i], lens[i]);
		if (k[i].key == NULL || k[i].value == NULL) {
			rc = al_error_oom();
			goto out;
		}
	}
	/* Go writes a map's keys sorted, in JSON and YAML */
	qsort(k, n, sizeof(*k), cmp_sigkey);
	if (flags & AL_KRES_JSON) {
		/* json.Marshal of cm.ConfigMap: TypeMeta (kind, apiVersion)
		 * inline, then metadata, then binaryData */
		rc = al_buf_printf(
		    out,
		    "{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\","
		    "\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\","
		    "\"labels\":{\"%s\":\"\"},\"annotations\":{\"createdAt\":"
		    "\"%s\",\"createdBy\":\"airlock\",\"oc-mirror_version\":"
		    "\"%s\"}},\"binaryData\":{",
		    AL_KRES_OCMIRROR_CONFIGMAP, AL_KRES_SIGNATURE_NAMESPACE,
		    AL_KRES_SIGNATURE_LABEL, created_at, al_version());
		for (i = 0; rc == 0 && i < n; i++)
			rc = al_buf_printf(out, "%s\"%s\":\"%s\"",
			                   i > 0 ? "," : "", k[i].key,
			                   k[i].value);
		if (rc == 0)
			rc = al_buf_puts(out, "}}");
		goto out;
	}
	rc = al_buf_puts(out, "apiVersion: v1\nbinaryData:\n");
	for (i = 0; rc == 0 && i < n; i++)
		rc = al_buf_printf(out, "  %s: %s\n", k[i].key, k[i].value);
	if (rc == 0)
		rc = al_buf_printf(
		    out,
		    "kind: ConfigMap\nmetadata:\n  annotations:\n"
		    "    createdAt: \"%s\"\n    createdBy: airlock\n"
		    "    oc-mirror_version: %s\n  labels:\n    %s: \"\"\n"
		    "  name: %s\n  namespace: %s\n",
		    created_at, al_version(), AL_KRES_SIGNATURE_LABEL,
		    AL_KRES_OCMIRROR_CONFIGMAP, AL_KRES_SIGNATURE_NAMESPACE);
out:
	for (i = 0; i < n; i++) {
		free(k[i].key);
		free(k[i].value);
	}
	free(k);
	return rc;
}
