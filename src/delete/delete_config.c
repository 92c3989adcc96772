/* delete_config.c: oc-mirror's DeleteImageSetConfiguration (the subset that
 * names store content), strictly: unknown fields are errors with position. */
#include <stdlib.h>
#include <string.h>

#include "airlock/buf.h"
#include "airlock/delete.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/imageset.h"
#include "airlock/log.h"
#include "imageset_int.h"
#include "json_int.h"
#include "yaml_int.h"

#define DELETE_KIND "DeleteImageSetConfiguration"
#define DELETE_API "mirror.openshift.io/v2alpha1"
#define DELETE_API_V1 "mirror.openshift.io/v1alpha2"

typedef struct dctx {
	const char *path;
	al_delete_config *cfg;
} dctx;

static int pos_error(const dctx *c, const al_yaml_node *n, int code,
                     const char *what, const char *detail)
{
	return al_error_set(code, "%s:%zu:%zu: %s%s", c->path, n->line,
	                    n->column, what, detail != NULL ? detail : "");
}

static int in_list(const al_yaml_node *k, const char *const *list)
{
	size_t i;

	for (i = 0; list[i] != NULL; i++)
		if (strlen(list[i]) == k->len &&
		    memcmp(list[i], k->value, k->len) == 0)
			return 1;
	return 0;
}

static int fields(const dctx *c, const al_yaml_node *map, const char *where,
                  const char *const *allowed, const char *const *unsupported)
{
	size_t i;

	if (map->type != AL_YAML_MAP)
		return al_error_set(AL_EPARSE,
		                    "%s:%zu:%zu: %s must be a mapping", c->path,
		                    map->line, map->column, where);
	for (i = 0; i < map->n; i++) {
		const al_yaml_node *k = map->keys[i];
		if (in_list(k, allowed))
			continue;
		if (unsupported != NULL && in_list(k, unsupported))
			return al_error_set(AL_EUNSUPPORTED,
			                    "%s:%zu:%zu: '%s' in %s is not "
			                    "supported by airlock delete",
			                    c->path, k->line, k->column,
			                    k->value, where);
		return al_error_set(
		    AL_EPARSE, "%s:%zu:%zu: unknown field '%.100s' in %s",
		    c->path, k->line, k->column, k->value, where);
	}
	return 0;
}

/* A scalar that the core schema resolves to a non-empty string. */
static int string_of(const dctx *c, const al_yaml_node *n, const char *where,
                     char **out)
{
	json_t *j = NULL;
	int ok;

	ok = n->type == AL_YAML_SCALAR && al_yaml_to_json(&j, n) == 0 &&
	     json_is_string(j) && n->len > 0 && strlen(n->value) == n->len;
	json_decref(j);
	if (!ok)
		return al_error_set(AL_EPARSE,
		                    "%s:%zu:%zu: %s must be a non-empty string",
		                    c->path, n->line, n->column, where);
	if ((*out = al_strdup(n->value)) == NULL)
		return al_error_oom();
	return 0;
}

static int push(char ***v, size_t *n, char *s)
{
	char **grown = realloc(*v, (*n + 1) * sizeof(*grown));

	if (grown == NULL) {
		free(s);
		return al_error_oom();
	}
	grown[(*n)++] = s;
	*v = grown;
	return 0;
}

static int bool_of(const dctx *c, const al_yaml_node *n, const char *where,
                   int *out)
{
	json_t *j = NULL;
	int rc = n->type == AL_YAML_SCALAR ? al_yaml_to_json(&j, n) : -1;

	if (rc < 0 || !json_is_boolean(j)) {
		json_decref(j);
		return al_error_set(AL_EPARSE,
		                    "%s:%zu:%zu: %s must be true or false",
		                    c->path, n->line, n->column, where);
	}
	*out = json_is_true(j);
	json_decref(j);
	return 0;
}

static int channels(dctx *c, const al_yaml_node *seq)
{
	static const char *const allowed[] = {
	    "name", "type",         "minVersion", "maxVersion",
	    "full", "shortestPath", NULL};
	size_t i;
	int rc;

	if (seq->type != AL_YAML_SEQ)
		return pos_error(c, seq, AL_EPARSE,
		                 "delete.platform.channels must be a list",
		                 NULL);
	for (i = 0; i < seq->n; i++) {
		const al_yaml_node *m = seq->items[i], *n;
		al_delete_channel *grown, *ch;
		if ((rc = fields(c, m, "delete.platform.channels[]", allowed,
		                 NULL)) < 0)
			return rc;
		grown = realloc(c->cfg->channels,
		                (c->cfg->nchannels + 1) * sizeof(*grown));
		if (grown == NULL)
			return al_error_oom();
		c->cfg->channels = grown;
		ch = &grown[c->cfg->nchannels++];
		memset(ch, 0, sizeof(*ch));
		if ((n = al_yaml_get(m, "name")) == NULL)
			return pos_error(c, m, AL_EPARSE,
			                 "delete.platform.channels[] needs a "
			                 "name",
			                 NULL);
		if ((rc = string_of(c, n, "name", &ch->name)) < 0)
			return rc;
		if ((n = al_yaml_get(m, "minVersion")) != NULL &&
		    (rc = string_of(c, n, "minVersion", &ch->min_version)) < 0)
			return rc;
		if ((n = al_yaml_get(m, "maxVersion")) != NULL &&
		    (rc = string_of(c, n, "maxVersion", &ch->max_version)) < 0)
			return rc;
		if ((ch->min_version != NULL &&
		     !al_version_valid(ch->min_version)) ||
		    (ch->max_version != NULL &&
		     !al_version_valid(ch->max_version)))
			return pos_error(c, m, AL_EPARSE,
			                 "minVersion and maxVersion must be "
			                 "semantic versions",
			                 NULL);
		/* oc-mirror's own delete-isc.yaml has 4.14.1..4.12.2 and
		 * its loader takes it (TestReadConfigDelete): kept, with a
		 * warning, as the range holds no release */
		if (ch->min_version != NULL && ch->max_version != NULL &&
		    al_version_compare(ch->min_version, ch->max_version) > 0)
			al_log_warn("%s:%zu:%zu: channel %s: minVersion %s is "
			            "greater than maxVersion %s: the range "
			            "holds no release",
			            c->path, m->line, m->column, ch->name,
			            ch->min_version, ch->max_version);
	}
	return 0;
}

static int platform(dctx *c, const al_yaml_node *p)
{
	static const char *const allowed[] = {"release", "channels",
	                                      "architectures", "graph", NULL};
	static const char *const unsupported[] = {"kubeVirtContainer", NULL};
	const al_yaml_node *n;
	size_t i;
	int rc;

	if ((rc = fields(c, p, "delete.platform", allowed, unsupported)) < 0)
		return rc;
	if ((n = al_yaml_get(p, "release")) != NULL) {
		char *s = NULL;
		if (n->type == AL_YAML_SEQ) {
			for (i = 0; i < n->n; i++)
				if ((rc = string_of(c, n->items[i],
				                    "delete.platform.release[]",
				                    &s)) < 0 ||
				    (rc = push(&c->cfg->releases,
				               &c->cfg->nreleases, s)) < 0)
					return rc;
		} else if ((rc = string_of(c, n, "delete.platform.release",
		                           &s)) < 0 ||
		           (rc = push(&c->cfg->releases, &c->cfg->nreleases,
		                      s)) < 0) {
			return rc;
		}
	}
	if ((n = al_yaml_get(p, "channels")) != NULL &&
	    (rc = channels(c, n)) < 0)
		return rc;
	if ((n = al_yaml_get(p, "architectures")) != NULL) {
		if (n->type != AL_YAML_SEQ)
			return pos_error(
			    c, n, AL_EPARSE,
			    "delete.platform.architectures must be "
			    "a list",
			    NULL);
		for (i = 0; i < n->n; i++) {
			char *s = NULL;
			if ((rc = string_of(c, n->items[i],
			                    "delete.platform.architectures[]",
			                    &s)) < 0 ||
			    (rc = push(&c->cfg->architectures,
			               &c->cfg->narchitectures, s)) < 0)
				return rc;
		}
	}
	if ((n = al_yaml_get(p, "graph")) != NULL &&
	    (rc = bool_of(c, n, "delete.platform.graph", &c->cfg->graph)) < 0)
		return rc;
	return 0;
}

static int named_list(dctx *c, const al_yaml_node *seq, const char *where,
                      const char *key, const char *const *unsupported,
                      char ***v, size_t *nv)
{
	const char *allowed[2] = {key, NULL};
	size_t i;
	int rc;

	if (seq->type != AL_YAML_SEQ)
		return pos_error(c, seq, AL_EPARSE, where, " must be a list");
	for (i = 0; i < seq->n; i++) {
		const al_yaml_node *m = seq->items[i], *n;
		char *s = NULL;
		if ((rc = fields(c, m, where, allowed, unsupported)) < 0)
			return rc;
		if ((n = al_yaml_get(m, key)) == NULL)
			return pos_error(c, m, AL_EPARSE, where,
			                 " needs a name");
		if ((rc = string_of(c, n, key, &s)) < 0 ||
		    (rc = push(v, nv, s)) < 0)
			return rc;
	}
	return 0;
}

void al_delete_config_free(al_delete_config *cfg)
{
	size_t i;

	if (cfg == NULL)
		return;
	free(cfg->path);
	for (i = 0; i < cfg->nreleases; i++)
		free(cfg->releases[i]);
	free(cfg->releases);
	for (i = 0; i < cfg->nchannels; i++) {
		free(cfg->channels[i].name);
		free(cfg->channels[i].min_version);
		free(cfg->channels[i].max_version);
	}
	free(cfg->channels);
	for (i = 0; i < cfg->narchitectures; i++)
		free(cfg->architectures[i]);
	free(cfg->architectures);
	for (i = 0; i < cfg->nimages; i++)
		free(cfg->images[i]);
	free(cfg->images);
	for (i = 0; i < cfg->ncatalogs; i++)
		free(cfg->catalogs[i]);
	free(cfg->catalogs);
	al_imageset_free(cfg->content);
	free(cfg);
}

static int header(const dctx *c, const al_yaml_node *root)
{
	const al_yaml_node *kind = al_yaml_get(root, "kind");
	const al_yaml_node *api = al_yaml_get(root, "apiVersion");
	char *s = NULL;
	int rc;

	if (kind == NULL)
		return pos_error(c, root, AL_EPARSE,
		                 "missing 'kind: " DELETE_KIND "'", NULL);
	if ((rc = string_of(c, kind, "kind", &s)) < 0)
		return rc;
	rc = strcmp(s, DELETE_KIND) == 0
	         ? 0
	         : pos_error(c, kind, AL_EPARSE,
	                     "kind must be " DELETE_KIND ", not ", s);
	free(s);
	if (rc < 0)
		return rc;
	if (api == NULL)
		return pos_error(c, root, AL_EPARSE,
		                 "missing 'apiVersion: " DELETE_API "'", NULL);
	if ((rc = string_of(c, api, "apiVersion", &s)) < 0)
		return rc;
	/* oc-mirror v2 (config.ReadConfig) checks the kind only and reads
	 * both versions with its v2alpha1 types */
	if (strcmp(s, DELETE_API) == 0)
		c->cfg->api_version = 2;
	else if (strcmp(s, DELETE_API_V1) == 0)
		c->cfg->api_version = 1;
	else
		rc = pos_error(c, api, AL_EPARSE,
		               "apiVersion must be " DELETE_API
		               " or " DELETE_API_V1 ", not ",
		               s);
	free(s);
	return rc;
}

/* delete.operators[].catalog as written (the content's copy has oci:
 * paths made absolute), each entry a mapping with a catalog (the rest
 * checked by al_imageset__load_parts). */
static int catalogs(dctx *c, const al_yaml_node *seq)
{
	size_t i;
	int rc;

	if (seq->type != AL_YAML_SEQ)
		return pos_error(c, seq, AL_EPARSE,
		                 "delete.operators must be a list", NULL);
	for (i = 0; i < seq->n; i++) {
		const al_yaml_node *m = seq->items[i], *n;
		char *s = NULL;
		if (m->type != AL_YAML_MAP ||
		    (n = al_yaml_get(m, "catalog")) == NULL)
			return pos_error(c, m, AL_EPARSE,
			                 "delete.operators[] needs a catalog",
			                 NULL);
		if ((rc = string_of(c, n, "catalog", &s)) < 0 ||
		    (rc = push(&c->cfg->catalogs, &c->cfg->ncatalogs, s)) < 0)
			return rc;
	}
	return 0;
}

int al_delete_config_load(al_delete_config **out, const char *path)
{
	static const char *const top[] = {"kind", "apiVersion", "delete", NULL};
	static const char *const del_allowed[] = {
	    "platform", "additionalImages", "operators",
	    "helm",     "samples",          NULL};
	al_buf b = AL_BUF_INIT(AL_IMAGESET_MAX_BYTES);
	al_yaml_node **docs = NULL;
	size_t ndocs = 0, i;
	char **notes = NULL;
	size_t nnotes = 0;
	const al_yaml_node *root, *d, *n;
	dctx c = {path, NULL};
	int rc;

	if (out == NULL || path == NULL)
		return al_error_set(AL_EINVAL, "al_delete_config_load: NULL");
	if ((rc = al_fs_read_file(path, &b)) < 0)
		goto out;
	if ((rc = al_yaml_load(&docs, &ndocs, b.ptr, b.len, path)) < 0)
		goto out;
	if (ndocs != 1 || docs[0] == NULL || docs[0]->type != AL_YAML_MAP) {
		rc = al_error_set(AL_EPARSE,
		                  "%s: expected one YAML document holding a "
		                  "DeleteImageSetConfiguration mapping",
		                  path);
		goto out;
	}
	if ((rc = al_imageset__fold_keys(docs[0], path, &notes, &nnotes)) < 0)
		goto out;
	root = docs[0];
	if ((c.cfg = calloc(1, sizeof(*c.cfg))) == NULL ||
	    (c.cfg->path = al_strdup(path)) == NULL) {
		rc = al_error_oom();
		goto out;
	}
	if ((rc = header(&c, root)) < 0)
		goto out;
	/* oc-mirror config.ReadConfig: "mirror: is not allowed in
	 * DeleteImageSetConfiguration" */
	if ((n = al_yaml_get(root, "mirror")) != NULL) {
		rc = pos_error(&c, n, AL_EPARSE,
		               "mirror: is not allowed in " DELETE_KIND
		               " (oc-mirror refuses it too)",
		               NULL);
		goto out;
	}
	if ((rc = fields(&c, root, DELETE_KIND, top, NULL)) < 0)
		goto out;
	if ((d = al_yaml_get(root, "delete")) == NULL) {
		rc = pos_error(&c, root, AL_EPARSE, "missing 'delete:'", NULL);
		goto out;
	}
	if ((rc = fields(&c, d, "delete", del_allowed, NULL)) < 0)
		goto out;
	if ((n = al_yaml_get(d, "platform")) != NULL &&
	    (rc = platform(&c, n)) < 0)
		goto out;
	if ((n = al_yaml_get(d, "additionalImages")) != NULL &&
	    (rc = named_list(&c, n, "delete.additionalImages[]", "name", NULL,
	                     &c.cfg->images, &c.cfg->nimages)) < 0)
		goto out;
	if ((al_yaml_get(d, "operators") != NULL ||
	     al_yaml_get(d, "helm") != NULL) &&
	    (rc = al_imageset__load_parts(&c.cfg->content, d, path,
	                                  c.cfg->api_version)) < 0)
		goto out;
	if ((n = al_yaml_get(d, "operators")) != NULL &&
	    (rc = catalogs(&c, n)) < 0)
		goto out;
	if ((n = al_yaml_get(d, "samples")) != NULL) {
		char **names = NULL;
		size_t nnames = 0;
		rc = named_list(&c, n, "delete.samples[]", "name", NULL, &names,
		                &nnames);
		for (i = 0; i < nnames; i++)
			free(names[i]);
		free(names);
		if (rc < 0)
			goto out;
		c.cfg->nsamples = nnames;
	}
	for (i = 0; i < nnotes; i++)
		al_log_warn("%s", notes[i]);
	for (i = 0; c.cfg->content != NULL && i < c.cfg->content->nnotes; i++)
		al_log_warn("%s", c.cfg->content->notes[i]);
	if (c.cfg->nsamples > 0)
		al_log_warn("%s: delete.samples: nothing to delete (airlock "
		            "mirror stores no sample images; oc-mirror "
		            "implements none)",
		            path);
	*out = c.cfg;
	c.cfg = NULL;
out:
	for (i = 0; i < nnotes; i++)
		free(notes[i]);
	free(notes);
	al_delete_config_free(c.cfg);
	al_yaml_docs_free(docs, ndocs);
	al_buf_free(&b);
	return rc;
}
