/* kres.c: cluster resources for mirrored content: ImageDigestMirrorSet,
 * ImageTagMirrorSet, ImageContentSourcePolicy, signature ConfigMaps. */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "airlock/kres.h"
#include "kres_int.h"
#include "airlock/error.h"
#include "yaml_int.h"
#include "json_int.h"

/* One source with its merged mirrors (borrowed strings, first-seen order). */
typedef struct entry {
	const char *source;
	const char **mirrors;
	size_t nmirrors;
	int by_digest;
	int by_tag;
} entry;

static int entry_cmp(const void *a, const void *b)
{
	return strcmp(((const entry *)a)->source, ((const entry *)b)->source);
}

/* metadata.name: a DNS-1123 subdomain (lowercase alphanumerics, '-', '.'). */
static int name_ok(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > 253)
		return 0;
	for (i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '.'))
			return 0;
	}
	return s[0] != '-' && s[0] != '.' && s[n - 1] != '-' && s[n - 1] != '.';
}

/* Add m to e's mirrors unless already there. */
static int add_mirror(entry *e, const char *m)
{
	const char **p;
	size_t i;

	for (i = 0; i < e->nmirrors; i++) {
		if (strcmp(e->mirrors[i], m) == 0)
			return 0;
	}
	p = realloc(e->mirrors, (e->nmirrors + 1) * sizeof(*p));
	if (p == NULL)
		return al_error_set(AL_ENOMEM,
		                    "out of memory building mirror sets");
	p[e->nmirrors++] = m;
	e->mirrors = p;
	return 0;
}

/* [{source, mirrors: [...]}] for the entries with the wanted flag. */
static json_t *mirror_list(const entry *ents, size_t n, int digest)
{
	json_t *list = json_array(), *item, *mirrors;
	size_t i, j;

	if (list == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		if (digest ? !ents[i].by_digest : !ents[i].by_tag)
			continue;
		mirrors = json_array();
		item = json_pack("{s:s, s:o}", "source", ents[i].source,
		                 "mirrors", mirrors);
		if (item == NULL || json_array_append_new(list, item) != 0) {
			json_decref(list);
			return NULL;
		}
		for (j = 0; j < ents[i].nmirrors; j++) {
			if (json_array_append_new(
			        mirrors, json_string(ents[i].mirrors[j])) !=
			    0) {
				json_decref(list);
				return NULL;
			}
		}
	}
	return list;
}

/* One resource document; takes list. NULL on ENOMEM. */
static json_t *resource(const char *api, const char *kind, const char *name,
                        const char *field, json_t *list)
{
	if (list == NULL)
		return NULL;
	return json_pack("{s:s, s:s, s:{s:s}, s:{s:o}}", "apiVersion", api,
	                 "kind", kind, "metadata", "name", name, "spec", field,
	                 list);
}

/*
 * See kres.h. AL_EINVAL for a NULL or empty source or mirror, or a name
 * that is not a DNS subdomain; with nothing to mirror out is left as is.
 */
/* One DNS label of the CRD pattern: [a-zA-Z0-9] or
 * [a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]; returns its length, 0 if none. */
static size_t host_label(const char *s)
{
	size_t n = 0;

	while ((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') ||
	       (s[n] >= '0' && s[n] <= '9') || s[n] == '-')
		n++;
	if (n == 0 || s[0] == '-' || s[n - 1] == '-')
		return 0;
	return n;
}

static int lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* One path component: [a-z0-9]+((?:[._]|__|[-]*)[a-z0-9]+)*. */
static size_t path_component(const char *s)
{
	size_t n = 0;

	if (!lower_alnum(s[0]))
		return 0;
	for (;;) {
		size_t sep = 0;

		while (lower_alnum(s[n]))
			n++;
		if (s[n] == '.')
			sep = 1;
		else if (s[n] == '_')
			sep = s[n + 1] == '_' ? 2 : 1;
		else
			while (s[n + sep] == '-')
				sep++;
		if (sep == 0 || !lower_alnum(s[n + sep]))
			return n;
		n += sep;
	}
}

int al_kres_location_valid(const char *s, int source)
{
	size_t n;

	if (s == NULL || s[0] == '\0')
		return 0;
	if (source && s[0] == '*') {
		/* ^\*(?:\.LABEL)+$ */
		s++;
		if (*s != '.')
			return 0;
		while (*s == '.') {
			if ((n = host_label(s + 1)) == 0)
				return 0;
			s += 1 + n;
		}
		return *s == '\0';
	}
	if ((n = host_label(s)) == 0)
		return 0;
	s += n;
	while (*s == '.') {
		if ((n = host_label(s + 1)) == 0)
			return 0;
		s += 1 + n;
	}
	if (*s == ':') {
		s++;
		if (*s < '0' || *s > '9')
			return 0;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	while (*s == '/') {
		if ((n = path_component(s + 1)) == 0)
			return 0;
		s += 1 + n;
	}
	return *s == '\0';
}

int al_kres_mirrorsets(al_buf *out, const al_mirror_map *maps, size_t n,
                       const char *name, int flags)
{
	entry *ents = NULL;
	size_t nents = 0, i, j, ndocs = 0, ndig = 0, ntag = 0;
	json_t *docs[3] = {NULL, NULL, NULL};
	int rc = 0;

	if (name == NULL || !name_ok(name))
		return al_error_set(AL_EINVAL,
		                    "invalid resource name '%s' (want a "
		                    "lowercase DNS subdomain)",
		                    name != NULL ? name : "");
	if (n > 0 && maps == NULL)
		return al_error_set(AL_EINVAL, "no mirror mappings given");
	if (n > 0) {
		ents = calloc(n, sizeof(*ents));
		if (ents == NULL)
			return al_error_set(
			    AL_ENOMEM, "out of memory building mirror sets");
	}
	for (i = 0; i < n; i++) {
		const al_mirror_map *m = &maps[i];

		if (m->source == NULL || m->source[0] == '\0' ||
		    m->mirror == NULL || m->mirror[0] == '\0') {
			rc = al_error_set(
			    AL_EINVAL,
			    "mirror mapping %zu has an empty source or mirror",
			    i);
			goto out;
		}
		/* what the cluster's CRD schema would refuse, refused here
		 * (al_kres_location_valid) */
		if (!al_kres_location_valid(m->source, 1) ||
		    !al_kres_location_valid(m->mirror, 0)) {
			rc = al_error_set(
			    AL_EINVAL,
			    "'%s' is not a %s the cluster accepts "
			    "(lower-case repository path, HOST[:PORT][/PATH])",
			    al_kres_location_valid(m->source, 1) ? m->mirror
			                                         : m->source,
			    al_kres_location_valid(m->source, 1) ? "mirror"
			                                         : "source");
			goto out;
		}
		if (!m->by_digest && !m->by_tag)
			continue;
		for (j = 0; j < nents; j++) {
			if (strcmp(ents[j].source, m->source) == 0)
				break;
		}
		if (j == nents)
			ents[nents++].source = m->source;
		if ((rc = add_mirror(&ents[j], m->mirror)) < 0)
			goto out;
		ents[j].by_digest |= m->by_digest != 0;
		ents[j].by_tag |= m->by_tag != 0;
	}
	if (nents > 1)
		qsort(ents, nents, sizeof(*ents), entry_cmp);
	for (i = 0; i < nents; i++) {
		ndig += ents[i].by_digest != 0;
		ntag += ents[i].by_tag != 0;
	}
	if ((flags & AL_KRES_ICSP_ONLY) != 0)
		ntag = 0;
	if (ndig > 0 && (flags & AL_KRES_ICSP_ONLY) == 0) {
		docs[ndocs] = resource(
		    "config.openshift.io/v1", "ImageDigestMirrorSet", name,
		    "imageDigestMirrors", mirror_list(ents, nents, 1));
		if (docs[ndocs++] == NULL) {
			rc = al_error_set(AL_ENOMEM,
			                  "out of memory building mirror sets");
			goto out;
		}
	}
	if (ntag > 0) {
		docs[ndocs] = resource(
		    "config.openshift.io/v1", "ImageTagMirrorSet", name,
		    "imageTagMirrors", mirror_list(ents, nents, 0));
		if (docs[ndocs++] == NULL) {
			rc = al_error_set(AL_ENOMEM,
			                  "out of memory building mirror sets");
			goto out;
		}
	}
	if ((flags & (AL_KRES_ICSP | AL_KRES_ICSP_ONLY)) != 0 && ndig > 0) {
		docs[ndocs] = resource("operator.openshift.io/v1alpha1",
		                       "ImageContentSourcePolicy", name,
		                       "repositoryDigestMirrors",
		                       mirror_list(ents, nents, 1));
		if (docs[ndocs++] == NULL) {
			rc = al_error_set(AL_ENOMEM,
			                  "out of memory building mirror sets");
			goto out;
		}
	}
	rc = al_yaml_emit_json(out, docs, ndocs);
out:
	for (i = 0; i < ndocs; i++)
		json_decref(docs[i]);
	for (i = 0; i < nents; i++)
		free(ents[i].mirrors);
	free(ents);
	return rc;
}

/* See kres_int.h. */
int al_kres_signature_configmap_json(json_t **out, const al_digest *release,
                                     const uint8_t *const *sigs,
                                     const size_t *lens, size_t n)
{
	char hex[AL_DIGEST_STRMAX];
	char *name = NULL, *key = NULL, *b64 = NULL;
	json_t *cm = NULL, *bin;
	size_t i;
	int rc;

	if (out == NULL || release == NULL || n == 0 || sigs == NULL ||
	    lens == NULL)
		return al_error_set(AL_EINVAL,
		                    "a signature ConfigMap needs a digest and "
		                    "at least one signature");
	name = al_sprintf("%s-%s", al_digest_algo_name(release->algo),
	                  al_digest_hex(release, hex));
	bin = json_object();
	if (name == NULL || bin == NULL) {
		json_decref(bin);
		rc = al_error_set(AL_ENOMEM,
		                  "out of memory building a ConfigMap");
		goto out;
	}
	cm = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}, s:o}", "apiVersion",
	               "v1", "kind", "ConfigMap", "metadata", "name", name,
	               "namespace", AL_KRES_SIGNATURE_NAMESPACE, "labels",
	               AL_KRES_SIGNATURE_LABEL, "", "binaryData", bin);
	if (cm == NULL) {
		rc = al_error_set(AL_ENOMEM,
		                  "out of memory building a ConfigMap");
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (sigs[i] == NULL || lens[i] == 0) {
			rc = al_error_set(AL_EINVAL,
			                  "signature %zu of '%s' is empty",
			                  i + 1, name);
			goto out;
		}
		free(key);
		free(b64);
		key = al_sprintf("%s-%zu", name, i + 1);
		b64 = al_base64_encode(sigs[i], lens[i]);
		if (key == NULL || b64 == NULL ||
		    json_object_set_new(bin, key, json_string(b64)) != 0) {
			rc = al_error_set(AL_ENOMEM,
			                  "out of memory building a ConfigMap");
			goto out;
		}
	}
	*out = cm;
	cm = NULL;
	rc = 0;
out:
	json_decref(cm);
	free(name);
	free(key);
	free(b64);
	return rc;
}

/* Append cm (or a v1 List of it with list) to out: a YAML stream, or
 * indented JSON and a newline. */
static int write_docs(al_buf *out, json_t *const *docs, size_t n, int list,
                      int flags)
{
	json_t *doc = NULL, *items;
	char *text = NULL;
	size_t i;
	int rc;

	if (out == NULL)
		return al_error_set(AL_EINVAL, "no output buffer");
	if ((flags & AL_KRES_JSON) == 0) {
		rc = al_yaml_emit_json(out, docs, n);
		goto out;
	}
	if (list) {
		items = json_array();
		doc = json_pack("{s:s, s:s, s:o}", "apiVersion", "v1", "kind",
		                "List", "items", items);
		for (i = 0; doc != NULL && i < n; i++) {
			if (json_array_append(items, docs[i]) != 0)
				break;
		}
		if (doc == NULL || i < n) {
			rc = al_error_set(AL_ENOMEM,
			                  "out of memory writing a ConfigMap");
			goto out;
		}
	} else {
		doc = json_incref(docs[0]);
	}
	if ((text = al_json_dump(doc, 2)) == NULL)
		rc = al_error_set(AL_ENOMEM,
		                  "out of memory writing a ConfigMap");
	else if ((rc = al_buf_puts(out, text)) == 0)
		rc = al_buf_puts(out, "\n");
out:
	if (rc == AL_ELIMIT)
		rc = al_error_set(
		    AL_ELIMIT, "signature ConfigMap exceeds the output limit");
	free(text);
	json_decref(doc);
	return rc;
}

/* See kres.h. */
int al_kres_signature_configmap(al_buf *out, const al_digest *release,
                                const uint8_t *const *sigs, const size_t *lens,
                                size_t n, int flags)
{
	json_t *cm = NULL;
	int rc;

	if (out == NULL)
		return al_error_set(AL_EINVAL, "no output buffer");
	if ((rc = al_kres_signature_configmap_json(&cm, release, sigs, lens,
	                                           n)) < 0)
		return rc;
	rc = write_docs(out, &cm, 1, 0, flags);
	json_decref(cm);
	return rc;
}

struct al_kres_configmaps {
	json_t **docs;
	al_digest *digests;
	size_t n, cap;
};

/* See kres.h. */
int al_kres_configmaps_new(al_kres_configmaps **out)
{
	if (out == NULL)
		return al_error_set(AL_EINVAL, "no output");
	if ((*out = calloc(1, sizeof(**out))) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	return 0;
}

/* See kres.h. */
void al_kres_configmaps_free(al_kres_configmaps *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i < c->n; i++)
		json_decref(c->docs[i]);
	free(c->docs);
	free(c->digests);
	free(c);
}

/* See kres.h. */
int al_kres_configmaps_add(al_kres_configmaps *c, const al_digest *release,
                           const uint8_t *const *sigs, const size_t *lens,
                           size_t n)
{
	json_t *cm = NULL;
	int rc;

	if (c == NULL)
		return al_error_set(AL_EINVAL, "no ConfigMap list");
	if ((rc = al_kres_signature_configmap_json(&cm, release, sigs, lens,
	                                           n)) < 0)
		return rc;
	if (c->n == c->cap) {
		size_t cap = c->cap == 0 ? 8 : c->cap * 2;
		json_t **docs = realloc(c->docs, cap * sizeof(*docs));
		al_digest *digests;

		if (docs != NULL)
			c->docs = docs;
		digests = docs != NULL
		              ? realloc(c->digests, cap * sizeof(*digests))
		              : NULL;
		if (digests == NULL) {
			json_decref(cm);
			return al_error_set(AL_ENOMEM, "out of memory");
		}
		c->digests = digests;
		c->cap = cap;
	}
	c->docs[c->n] = cm;
	c->digests[c->n] = *release;
	c->n++;
	return 0;
}

/* See kres.h. */
size_t al_kres_configmaps_count(const al_kres_configmaps *c)
{
	return c != NULL ? c->n : 0;
}

/* See kres.h. */
int al_kres_configmaps_write_one(const al_kres_configmaps *c, size_t i,
                                 al_buf *out, int flags)
{
	if (c == NULL || i >= c->n)
		return al_error_set(AL_EINVAL, "no ConfigMap %zu", i);
	return write_docs(out, &c->docs[i], 1, 0, flags);
}

/* See kres.h. */
char *al_kres_configmaps_filename(const al_kres_configmaps *c, size_t i,
                                  int flags)
{
	if (c == NULL || i >= c->n)
		return NULL;
	return al_kres_signature_configmap_filename(&c->digests[i], flags);
}

/* See kres.h. */
int al_kres_configmaps_write(const al_kres_configmaps *c, al_buf *out,
                             int flags)
{
	if (c == NULL)
		return al_error_set(AL_EINVAL, "no ConfigMap list");
	return write_docs(out, c->docs, c->n, 1, flags);
}

/* See kres.h. */
char *al_kres_signature_configmap_filename(const al_digest *release, int flags)
{
	char hex[AL_DIGEST_STRMAX];

	if (release == NULL)
		return NULL;
	return al_sprintf("signature-%s-%.16s.%s",
	                  al_digest_algo_name(release->algo),
	                  al_digest_hex(release, hex),
	                  (flags & AL_KRES_JSON) != 0 ? "json" : "yaml");
}
