/* imageset.c: loading and validating the ImageSetConfiguration subset airlock
 * understands. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "airlock/catalog.h"
#include "airlock/clock.h"
#include "airlock/imageset.h"
#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "json_int.h"
#include "airlock/ref.h"
#include "yaml_int.h"

#define IMAGESET_KIND "ImageSetConfiguration"
#define IMAGESET_API "mirror.openshift.io/v2alpha1"

typedef struct ctx {
	int flags;        /* AL_IMAGESET_* */
	const char *path; /* for messages */
	char *dir;        /* absolute directory of the file */
	al_imageset *cfg;
} ctx;

static int at(const ctx *c, const al_yaml_node *n, int code, const char *fmt,
              const char *a, const char *b)
{
	return al_error_set(code, "%s:%zu:%zu: %s%s%s", c->path, n->line,
	                    n->column, fmt, a != NULL ? a : "",
	                    b != NULL ? b : "");
}

/* "<path>:<l>:<c>: <where> must be <what>" */
static int type_error(const ctx *c, const al_yaml_node *n, const char *where,
                      const char *what)
{
	return al_error_set(AL_EPARSE, "%s:%zu:%zu: %s must be %s", c->path,
	                    n->line, n->column, where, what);
}

static int in_list(const char *s, size_t len, const char *const *list)
{
	size_t i;

	for (i = 0; list != NULL && list[i] != NULL; i++) {
		if (strlen(list[i]) == len && memcmp(list[i], s, len) == 0)
			return 1;
	}
	return 0;
}

/*
 * Every key of map must be in allowed; keys in unsupported are oc-mirror
 * features airlock does not implement (AL_EUNSUPPORTED), anything else
 * is a typo or a field from another schema (AL_EPARSE).
 */
static int check_fields(const ctx *c, const al_yaml_node *map,
                        const char *where, const char *const *allowed,
                        const char *const *unsupported)
{
	size_t i;
	const al_yaml_node *k;

	for (i = 0; i < map->n; i++) {
		k = map->keys[i];
		if (in_list(k->value, k->len, allowed))
			continue;
		if (in_list(k->value, k->len, unsupported))
			return al_error_set(AL_EUNSUPPORTED,
			                    "%s:%zu:%zu: '%s' in %s is not "
			                    "supported by airlock",
			                    c->path, k->line, k->column,
			                    k->value, where);
		return al_error_set(
		    AL_EPARSE, "%s:%zu:%zu: unknown field '%.100s' in %s",
		    c->path, k->line, k->column, k->value, where);
	}
	return 0;
}

/* The node as a string: a scalar that the core schema resolves to a
 * string (so "release: 4.15" or "name: true" are type errors). */
static int get_string(const ctx *c, const al_yaml_node *n, const char *where,
                      const char **out)
{
	json_t *j = NULL;
	int rc;

	if (n->type != AL_YAML_SCALAR)
		return type_error(c, n, where, "a string");
	rc = al_yaml_to_json(&j, n);
	if (rc < 0 || !json_is_string(j)) {
		json_decref(j);
		return type_error(c, n, where, "a string");
	}
	json_decref(j);
	if (n->len == 0 || strlen(n->value) != n->len)
		return type_error(c, n, where, "a non-empty string");
	*out = n->value;
	return 0;
}

static int push(char ***arr, size_t *n, const char *s)
{
	char **p;
	char *dup;

	if (*n >= SIZE_MAX / sizeof(*p) - 1)
		return al_error_set(AL_ENOMEM, "out of memory");
	dup = al_strdup(s);
	if (dup == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	p = realloc(*arr, (*n + 1) * sizeof(*p));
	if (p == NULL) {
		free(dup);
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	p[(*n)++] = dup;
	*arr = p;
	return 0;
}

/* An image reference with its position in the message when invalid. */
static int check_ref(const ctx *c, const al_yaml_node *n, const char *s)
{
	al_ref r;
	int rc = al_ref_parse(&r, s);

	if (rc < 0)
		return al_error_wrap(rc, "%s:%zu:%zu", c->path, n->line,
		                     n->column);
	al_ref_clear(&r);
	return 0;
}

/*
 * A registry or repository prefix ("quay.io", "127.0.0.1:5000/mirror"):
 * no transport, tag or digest; the first component must be a registry.
 */
static int check_prefix(const ctx *c, const al_yaml_node *n, const char *s,
                        const char *where)
{
	al_ref r;
	char *probe = NULL, *first = NULL;
	const char *slash = strchr(s, '/');
	int rc = 0;

	first = al_strndup(s, slash != NULL ? (size_t)(slash - s) : strlen(s));
	probe = al_sprintf("%s/x", s);
	if (first == NULL || probe == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	if (al_ref_parse(&r, probe) < 0) {
		rc = at(c, n, AL_EPARSE, where,
		        " is not a valid registry or repository prefix: ", s);
		goto out;
	}
	if (strcmp(r.registry, first) != 0 &&
	    strcmp(first, "index.docker.io") != 0) {
		al_ref_clear(&r);
		rc = at(c, n, AL_EPARSE, where,
		        " must start with a registry host (with a '.' or ':', "
		        "or localhost): ",
		        s);
		goto out;
	}
	al_ref_clear(&r);
out:
	free(first);
	free(probe);
	return rc;
}

static int load_releases(ctx *c, const al_yaml_node *n)
{
	const char *s;
	size_t i;
	int rc;

	if (n->type == AL_YAML_SCALAR) {
		if ((rc = get_string(c, n, "mirror.platform.release", &s)) < 0)
			return rc;
		if ((rc = check_ref(c, n, s)) < 0)
			return rc;
		return push(&c->cfg->releases, &c->cfg->nreleases, s);
	}
	if (n->type != AL_YAML_SEQ)
		return type_error(c, n, "mirror.platform.release",
		                  "a string or a list of strings");
	for (i = 0; i < n->n; i++) {
		if ((rc = get_string(c, n->items[i],
		                     "mirror.platform.release[]", &s)) < 0)
			return rc;
		if ((rc = check_ref(c, n->items[i], s)) < 0)
			return rc;
		if ((rc = push(&c->cfg->releases, &c->cfg->nreleases, s)) < 0)
			return rc;
	}
	return 0;
}

/* A plain true/false scalar. */
static int get_bool(const ctx *c, const al_yaml_node *n, const char *where,
                    int *out)
{
	json_t *j = NULL;
	int rc;

	rc = n->type == AL_YAML_SCALAR ? al_yaml_to_json(&j, n) : -1;
	if (rc < 0 || !json_is_boolean(j)) {
		json_decref(j);
		return type_error(c, n, where, "true or false");
	}
	*out = json_is_true(j);
	json_decref(j);
	return 0;
}

/* A version string; "4.15" written plainly is a number, so say so. */
static int get_version(const ctx *c, const al_yaml_node *n, const char *where,
                       char **out)
{
	if (n->type != AL_YAML_SCALAR || strlen(n->value) != n->len ||
	    !al_version_valid(n->value))
		return al_error_set(
		    AL_EPARSE,
		    "%s:%zu:%zu: %s must be a full version like "
		    "4.15.3, not '%.100s'",
		    c->path, n->line, n->column, where,
		    n->type == AL_YAML_SCALAR ? n->value : "");
	if ((*out = al_strdup(n->value)) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	return 0;
}

static void channel_clear(al_imageset_channel *ch)
{
	free(ch->name);
	free(ch->min_version);
	free(ch->max_version);
	memset(ch, 0, sizeof(*ch));
}

static int load_channel(ctx *c, const al_yaml_node *item,
                        al_imageset_channel *ch)
{
	static const char *const allowed[] = {
	    "name", "minVersion", "maxVersion", "shortestPath",
	    "type", "full",       NULL};
	static const char *const unsupported[] = {"blockedVersions", NULL};
	const al_yaml_node *n;
	const char *s;
	size_t i;
	int rc;

	if (item->type != AL_YAML_MAP)
		return type_error(c, item, "mirror.platform.channels[]",
		                  "a mapping with 'name'");
	if ((rc = check_fields(c, item, "mirror.platform.channels[]", allowed,
	                       unsupported)) < 0)
		return rc;
	n = al_yaml_get(item, "name");
	if (n == NULL)
		return at(c, item, AL_EPARSE,
		          "mirror.platform.channels[] needs 'name'", NULL,
		          NULL);
	if ((rc = get_string(c, n, "mirror.platform.channels[].name", &s)) < 0)
		return rc;
	for (i = 0; s[i] != '\0'; i++) {
		char ch_ = s[i];

		if (!((ch_ >= 'a' && ch_ <= 'z') ||
		      (ch_ >= 'A' && ch_ <= 'Z') ||
		      (ch_ >= '0' && ch_ <= '9') || ch_ == '.' || ch_ == '-' ||
		      ch_ == '_') ||
		    i >= 128 || s[0] == '.')
			return at(c, n, AL_EPARSE, "invalid channel name '", s,
			          "' (letters, digits, '.', '_' and '-')");
	}
	if ((ch->name = al_strdup(s)) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	n = al_yaml_get(item, "minVersion");
	if (n != NULL &&
	    (rc = get_version(c, n, "mirror.platform.channels[].minVersion",
	                      &ch->min_version)) < 0)
		return rc;
	n = al_yaml_get(item, "maxVersion");
	if (n != NULL &&
	    (rc = get_version(c, n, "mirror.platform.channels[].maxVersion",
	                      &ch->max_version)) < 0)
		return rc;
	if (ch->min_version != NULL && ch->max_version != NULL &&
	    al_version_compare(ch->min_version, ch->max_version) > 0)
		return al_error_set(AL_EPARSE,
		                    "%s:%zu:%zu: minVersion %s is higher than "
		                    "maxVersion %s in channel '%s'",
		                    c->path, item->line, item->column,
		                    ch->min_version, ch->max_version, ch->name);
	n = al_yaml_get(item, "shortestPath");
	if (n != NULL &&
	    (rc = get_bool(c, n, "mirror.platform.channels[].shortestPath",
	                   &ch->shortest_path)) < 0)
		return rc;
	n = al_yaml_get(item, "full");
	if (n != NULL && (rc = get_bool(c, n, "mirror.platform.channels[].full",
	                                &ch->full)) < 0)
		return rc;
	n = al_yaml_get(item, "type");
	if (n != NULL) {
		if ((rc = get_string(c, n, "mirror.platform.channels[].type",
		                     &s)) < 0)
			return rc;
		if (strcmp(s, "okd") == 0)
			ch->okd = 1;
		else if (strcmp(s, "ocp") != 0)
			return at(c, n, AL_EPARSE, "unknown channel type '", s,
			          "' (want ocp or okd)");
	}
	return 0;
}

static int load_channels(ctx *c, const al_yaml_node *seq)
{
	al_imageset *cfg = c->cfg;
	al_imageset_channel *p;
	size_t i;
	int rc;

	if (seq->type != AL_YAML_SEQ)
		return type_error(c, seq, "mirror.platform.channels", "a list");
	for (i = 0; i < seq->n; i++) {
		if (cfg->nchannels >= SIZE_MAX / sizeof(*p) - 1)
			return al_error_set(AL_ENOMEM, "out of memory");
		p = realloc(cfg->channels, (cfg->nchannels + 1) * sizeof(*p));
		if (p == NULL)
			return al_error_set(AL_ENOMEM, "out of memory");
		cfg->channels = p;
		memset(&p[cfg->nchannels], 0, sizeof(*p));
		cfg->nchannels++;
		rc = load_channel(c, seq->items[i], &p[cfg->nchannels - 1]);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int load_platform(ctx *c, const al_yaml_node *p)
{
	static const char *const allowed[] = {"release", "architectures",
	                                      "graph", "channels", NULL};
	static const char *const unsupported[] = {"kubeVirtContainer", NULL};
	static const char *const arches[] = {"amd64", "arm64", "ppc64le",
	                                     "s390x", "multi", NULL};
	const al_yaml_node *n;
	const char *s;
	json_t *j = NULL;
	size_t i;
	int rc;

	if (p->type != AL_YAML_MAP)
		return type_error(c, p, "mirror.platform", "a mapping");
	if ((rc = check_fields(c, p, "mirror.platform", allowed, unsupported)) <
	    0)
		return rc;
	n = al_yaml_get(p, "release");
	if (n != NULL && (rc = load_releases(c, n)) < 0)
		return rc;
	n = al_yaml_get(p, "channels");
	if (n != NULL && (rc = load_channels(c, n)) < 0)
		return rc;
	n = al_yaml_get(p, "architectures");
	if (n != NULL) {
		if (n->type != AL_YAML_SEQ)
			return type_error(c, n, "mirror.platform.architectures",
			                  "a list of strings");
		for (i = 0; i < n->n; i++) {
			if ((rc = get_string(c, n->items[i],
			                     "mirror.platform.architectures[]",
			                     &s)) < 0)
				return rc;
			if (!in_list(s, strlen(s), arches))
				return at(c, n->items[i], AL_EPARSE,
				          "unknown architecture '", s,
				          "' (want amd64, arm64, ppc64le, "
				          "s390x or multi)");
			if ((rc = push(&c->cfg->architectures,
			               &c->cfg->narchitectures, s)) < 0)
				return rc;
		}
	}
	n = al_yaml_get(p, "graph");
	if (n != NULL) {
		rc = n->type == AL_YAML_SCALAR ? al_yaml_to_json(&j, n) : -1;
		if (rc < 0 || !json_is_boolean(j)) {
			json_decref(j);
			return type_error(c, n, "mirror.platform.graph",
			                  "true or false");
		}
		rc = json_is_true(j);
		json_decref(j);
		if (rc)
			return at(c, n, AL_EUNSUPPORTED,
			          "graph: true is not supported (airlock does "
			          "not build the update graph image)",
			          NULL, NULL);
	}
	return 0;
}

static int load_additional(ctx *c, const al_yaml_node *seq)
{
	static const char *const allowed[] = {"name", NULL};
	const al_yaml_node *item, *n;
	const char *s;
	size_t i;
	int rc;

	if (seq->type != AL_YAML_SEQ)
		return type_error(c, seq, "mirror.additionalImages", "a list");
	for (i = 0; i < seq->n; i++) {
		item = seq->items[i];
		if (item->type != AL_YAML_MAP)
			return type_error(c, item, "mirror.additionalImages[]",
			                  "a mapping with 'name'");
		if ((rc = check_fields(c, item, "mirror.additionalImages[]",
		                       allowed, NULL)) < 0)
			return rc;
		n = al_yaml_get(item, "name");
		if (n == NULL)
			return at(c, item, AL_EPARSE,
			          "mirror.additionalImages[] needs 'name'",
			          NULL, NULL);
		if ((rc = get_string(c, n, "mirror.additionalImages[].name",
		                     &s)) < 0)
			return rc;
		if ((rc = check_ref(c, n, s)) < 0)
			return rc;
		if ((rc = push(&c->cfg->additional, &c->cfg->nadditional, s)) <
		    0)
			return rc;
	}
	return 0;
}

static int load_operators(ctx *c, const al_yaml_node *seq);

static int load_mirror(ctx *c, const al_yaml_node *m)
{
	static const char *const allowed[] = {"platform", "additionalImages",
	                                      NULL};
	static const char *const allowed_ops[] = {
	    "platform", "additionalImages", "operators", NULL};
	static const char *const unsupported[] = {
	    "operators", "helm", "blockedImages", "samples", NULL};
	const al_yaml_node *n;
	int rc;

	if (m->type != AL_YAML_MAP)
		return type_error(c, m, "mirror", "a mapping");
	if ((rc = check_fields(c, m, "mirror",
	                       (c->flags & AL_IMAGESET_OPERATORS) ? allowed_ops
	                                                          : allowed,
	                       unsupported)) < 0)
		return rc;
	n = al_yaml_get(m, "operators");
	if (n != NULL && (c->flags & AL_IMAGESET_OPERATORS) &&
	    (rc = load_operators(c, n)) < 0)
		return rc;
	n = al_yaml_get(m, "platform");
	if (n != NULL && (rc = load_platform(c, n)) < 0)
		return rc;
	n = al_yaml_get(m, "additionalImages");
	if (n != NULL && (rc = load_additional(c, n)) < 0)
		return rc;
	return 0;
}

/* "oci:PATH" with PATH made absolute against the config's directory, or
 * "docker://PREFIX" as written. */
static int resolve_location(ctx *c, const al_yaml_node *n, const char *s,
                            char **out)
{
	al_imgref r;
	char *loc = NULL, *abs = NULL;
	int rc;

	if (al_str_startswith(s, "docker://")) {
		if ((rc = check_prefix(c, n, s + 9,
		                       "airlock.sources[].location")) < 0)
			return rc;
		loc = al_strdup(s);
		if (loc == NULL)
			return al_error_set(AL_ENOMEM, "out of memory");
		*out = loc;
		return 0;
	}
	if (!al_str_startswith(s, "oci:"))
		return at(c, n, AL_EPARSE,
		          "airlock.sources[].location must start with 'oci:' "
		          "or 'docker://': ",
		          s, NULL);
	rc = al_imgref_parse(&r, s);
	if (rc < 0)
		return al_error_wrap(rc, "%s:%zu:%zu", c->path, n->line,
		                     n->column);
	if (r.name != NULL) {
		/* A source maps many images, each found by its own reference
		 * name in the layout's index.json, so an image name here is a
		 * mistake (often a ':' in the path). */
		rc = at(c, n, AL_EPARSE,
		        "airlock.sources[].location must name an OCI layout "
		        "directory without ':NAME': ",
		        s, NULL);
		goto out;
	}
	if (r.path[0] != '/') {
		abs = al_path_join(c->dir, r.path);
		if (abs == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
	}
	loc = al_sprintf("oci:%s", abs != NULL ? abs : r.path);
	if (loc == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	*out = loc;
out:
	free(abs);
	al_imgref_clear(&r);
	return rc;
}

static int load_sources(ctx *c, const al_yaml_node *seq)
{
	static const char *const allowed[] = {"prefix", "location", NULL};
	const al_yaml_node *item, *pn, *ln;
	const char *prefix, *location;
	al_imageset_source *p;
	al_imageset *cfg = c->cfg;
	char *loc = NULL, *pre = NULL;
	size_t i, j;
	int rc;

	if (seq->type != AL_YAML_SEQ)
		return type_error(c, seq, "airlock.sources", "a list");
	for (i = 0; i < seq->n; i++) {
		item = seq->items[i];
		if (item->type != AL_YAML_MAP)
			return type_error(
			    c, item, "airlock.sources[]",
			    "a mapping with 'prefix' and 'location'");
		if ((rc = check_fields(c, item, "airlock.sources[]", allowed,
		                       NULL)) < 0)
			return rc;
		pn = al_yaml_get(item, "prefix");
		ln = al_yaml_get(item, "location");
		if (pn == NULL || ln == NULL)
			return at(
			    c, item, AL_EPARSE,
			    "airlock.sources[] needs 'prefix' and 'location'",
			    NULL, NULL);
		if ((rc = get_string(c, pn, "airlock.sources[].prefix",
		                     &prefix)) < 0 ||
		    (rc = get_string(c, ln, "airlock.sources[].location",
		                     &location)) < 0)
			return rc;
		if ((rc = check_prefix(c, pn, prefix,
		                       "airlock.sources[].prefix")) < 0)
			return rc;
		for (j = 0; j < cfg->nsources; j++) {
			if (strcmp(cfg->sources[j].prefix, prefix) == 0)
				return at(
				    c, pn, AL_EPARSE,
				    "duplicate airlock.sources[].prefix '",
				    prefix, "'");
		}
		if ((rc = resolve_location(c, ln, location, &loc)) < 0)
			return rc;
		pre = al_strdup(prefix);
		p = cfg->nsources < SIZE_MAX / sizeof(*p) - 1
		        ? realloc(cfg->sources,
		                  (cfg->nsources + 1) * sizeof(*p))
		        : NULL;
		if (pre == NULL || p == NULL) {
			free(pre);
			free(loc);
			return al_error_set(AL_ENOMEM, "out of memory");
		}
		cfg->sources = p;
		p[cfg->nsources].prefix = pre;
		p[cfg->nsources].location = loc;
		cfg->nsources++;
		pre = NULL;
		loc = NULL;
	}
	return 0;
}

/* airlock.graph: where channels are resolved and how. */
static int load_graph(ctx *c, const al_yaml_node *g)
{
	static const char *const allowed[] = {"url", "excludeConditional",
	                                      NULL};
	const al_yaml_node *n;
	const char *s;
	int rc;

	if (g->type != AL_YAML_MAP)
		return type_error(c, g, "airlock.graph", "a mapping");
	if ((rc = check_fields(c, g, "airlock.graph", allowed, NULL)) < 0)
		return rc;
	n = al_yaml_get(g, "url");
	if (n != NULL) {
		if ((rc = get_string(c, n, "airlock.graph.url", &s)) < 0)
			return rc;
		if (!al_str_startswith(s, "http://") &&
		    !al_str_startswith(s, "https://"))
			return at(
			    c, n, AL_EPARSE,
			    "airlock.graph.url must start with http:// or "
			    "https://, not '",
			    s, "'");
		if ((c->cfg->graph_url = al_strdup(s)) == NULL)
			return al_error_set(AL_ENOMEM, "out of memory");
	}
	n = al_yaml_get(g, "excludeConditional");
	if (n != NULL &&
	    (rc = get_bool(c, n, "airlock.graph.excludeConditional",
	                   &c->cfg->graph_exclude_conditional)) < 0)
		return rc;
	return 0;
}

/* A path from the file, made absolute against the file's directory. */
static int push_path(ctx *c, char ***arr, size_t *n, const char *s)
{
	char *abs;
	int rc;

	if (s[0] == '/' || al_str_startswith(s, "http://") ||
	    al_str_startswith(s, "https://"))
		return push(arr, n, s);
	abs = al_path_join(c->dir, al_str_startswith(s, "file://") ? s + 7 : s);
	if (abs == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	rc = push(arr, n, abs);
	free(abs);
	return rc;
}

/* airlock.signatures: keyrings, stores, identityPolicy, timeout. */
static int load_signatures(ctx *c, const al_yaml_node *g)
{
	static const char *const allowed[] = {
	    "keyrings", "stores", "identityPolicy", "timeout", NULL};
	const al_yaml_node *n;
	const char *s;
	uint64_t ms;
	size_t i;
	int rc;

	if (g->type != AL_YAML_MAP)
		return type_error(c, g, "airlock.signatures", "a mapping");
	if ((rc = check_fields(c, g, "airlock.signatures", allowed, NULL)) < 0)
		return rc;
	n = al_yaml_get(g, "keyrings");
	if (n != NULL) {
		if (n->type != AL_YAML_SEQ)
			return type_error(c, n, "airlock.signatures.keyrings",
			                  "a list of paths");
		for (i = 0; i < n->n; i++) {
			if ((rc = get_string(c, n->items[i],
			                     "airlock.signatures.keyrings[]",
			                     &s)) < 0)
				return rc;
			if ((rc = push_path(c, &c->cfg->keyrings,
			                    &c->cfg->nkeyrings, s)) < 0)
				return rc;
		}
	}
	n = al_yaml_get(g, "stores");
	if (n != NULL) {
		if (n->type != AL_YAML_SEQ)
			return type_error(c, n, "airlock.signatures.stores",
			                  "a list of URLs or paths");
		for (i = 0; i < n->n; i++) {
			if ((rc = get_string(c, n->items[i],
			                     "airlock.signatures.stores[]",
			                     &s)) < 0)
				return rc;
			if ((rc = push_path(c, &c->cfg->signature_stores,
			                    &c->cfg->nsignature_stores, s)) < 0)
				return rc;
		}
	}
	n = al_yaml_get(g, "identityPolicy");
	if (n != NULL) {
		if ((rc = get_string(c, n, "airlock.signatures.identityPolicy",
		                     &s)) < 0)
			return rc;
		if (strcmp(s, "exact") != 0 && strcmp(s, "repository") != 0 &&
		    strcmp(s, "ignore") != 0)
			return at(c, n, AL_EPARSE,
			          "airlock.signatures.identityPolicy must be "
			          "exact, repository or ignore, not '",
			          s, "'");
		if ((c->cfg->identity_policy = al_strdup(s)) == NULL)
			return al_error_set(AL_ENOMEM, "out of memory");
	}
	n = al_yaml_get(g, "timeout");
	if (n != NULL) {
		if ((rc = get_string(c, n, "airlock.signatures.timeout", &s)) <
		    0)
			return rc;
		if (al_parse_duration(s, &ms) < 0 || ms == 0)
			return at(c, n, AL_EPARSE,
			          "airlock.signatures.timeout must be a "
			          "duration such as 30s, not '",
			          s, "'");
		if ((c->cfg->signature_timeout = al_strdup(s)) == NULL)
			return al_error_set(AL_ENOMEM, "out of memory");
	}
	return 0;
}

static int load_airlock(ctx *c, const al_yaml_node *a)
{
	static const char *const allowed[] = {"sources", "insecureRegistries",
	                                      "graph", "signatures", NULL};
	const al_yaml_node *n;
	const char *s;
	size_t i;
	int rc;

	if (a->type != AL_YAML_MAP)
		return type_error(c, a, "airlock", "a mapping");
	if ((rc = check_fields(c, a, "airlock", allowed, NULL)) < 0)
		return rc;
	n = al_yaml_get(a, "sources");
	if (n != NULL && (rc = load_sources(c, n)) < 0)
		return rc;
	n = al_yaml_get(a, "graph");
	if (n != NULL && (rc = load_graph(c, n)) < 0)
		return rc;
	n = al_yaml_get(a, "signatures");
	if (n != NULL && (rc = load_signatures(c, n)) < 0)
		return rc;
	n = al_yaml_get(a, "insecureRegistries");
	if (n != NULL) {
		if (n->type != AL_YAML_SEQ)
			return type_error(c, n, "airlock.insecureRegistries",
			                  "a list of strings");
		for (i = 0; i < n->n; i++) {
			if ((rc = get_string(c, n->items[i],
			                     "airlock.insecureRegistries[]",
			                     &s)) < 0)
				return rc;
			if (strchr(s, '/') != NULL)
				return at(c, n->items[i], AL_EPARSE,
				          "airlock.insecureRegistries[] must "
				          "be a host[:port], not '",
				          s, "'");
			if ((rc = check_prefix(
			         c, n->items[i], s,
			         "airlock.insecureRegistries[]")) < 0)
				return rc;
			if ((rc = push(&c->cfg->insecure, &c->cfg->ninsecure,
			               s)) < 0)
				return rc;
		}
	}
	return 0;
}

/* kind and apiVersion must be exactly ours. */
static int check_header(ctx *c, const al_yaml_node *root)
{
	const al_yaml_node *kind = al_yaml_get(root, "kind");
	const al_yaml_node *api = al_yaml_get(root, "apiVersion");
	const char *s;
	int rc;

	if (kind == NULL)
		return at(c, root, AL_EPARSE,
		          "missing 'kind: " IMAGESET_KIND "'", NULL, NULL);
	if ((rc = get_string(c, kind, "kind", &s)) < 0)
		return rc;
	if (strcmp(s, IMAGESET_KIND) != 0)
		return at(c, kind, AL_EPARSE,
		          "kind must be " IMAGESET_KIND ", not '", s, "'");
	if (api == NULL)
		return at(c, root, AL_EPARSE,
		          "missing 'apiVersion: " IMAGESET_API "'", NULL, NULL);
	if ((rc = get_string(c, api, "apiVersion", &s)) < 0)
		return rc;
	if (strcmp(s, "mirror.openshift.io/v1alpha2") == 0)
		return at(c, api, AL_EUNSUPPORTED,
		          "apiVersion mirror.openshift.io/v1alpha2 (oc-mirror "
		          "v1) is not supported: use " IMAGESET_API,
		          NULL, NULL);
	if (strcmp(s, IMAGESET_API) != 0)
		return at(c, api, AL_EPARSE,
		          "apiVersion must be " IMAGESET_API ", not '", s, "'");
	return 0;
}

/* Free cfg and everything it owns; NULL is a no-op. */
/* ---- mirror.operators[] (oc-mirror v2alpha1.Operator) ---------------- */

static void op_package_clear(al_imageset_op_package *p)
{
	size_t i;

	free(p->name);
	free(p->default_channel);
	free(p->min_version);
	free(p->max_version);
	for (i = 0; i < p->nchannels; i++) {
		free(p->channels[i].name);
		free(p->channels[i].min_version);
		free(p->channels[i].max_version);
	}
	free(p->channels);
	for (i = 0; i < p->nbundles; i++)
		free(p->bundles[i]);
	free(p->bundles);
}

static void operator_clear(al_imageset_operator *op)
{
	size_t i;

	free(op->catalog);
	free(op->target_catalog);
	free(op->target_tag);
	for (i = 0; i < op->npackages; i++)
		op_package_clear(&op->packages[i]);
	free(op->packages);
	memset(op, 0, sizeof(*op));
}

static int dup_string(const ctx *c, const al_yaml_node *n, const char *where,
                      char **out)
{
	const char *s;
	int rc;

	if ((rc = get_string(c, n, where, &s)) < 0)
		return rc;
	if ((*out = al_strdup(s)) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	return 0;
}

/* oc-mirror parses min/max with semver.ParseTolerant: "v1.2" is 1.2.0. */
static int op_version(const ctx *c, const al_yaml_node *map, const char *key,
                      const char *where, char **out)
{
	const al_yaml_node *n = al_yaml_get(map, key);

	if (n == NULL)
		return 0;
	if (n->type != AL_YAML_SCALAR || n->len == 0 ||
	    strlen(n->value) != n->len || !al_catalog_version_valid(n->value))
		return al_error_set(AL_EPARSE,
		                    "%s:%zu:%zu: %s.%s must be a version like "
		                    "1.2.3, not '%.100s'",
		                    c->path, n->line, n->column, where, key,
		                    n->type == AL_YAML_SCALAR ? n->value : "");
	if ((*out = al_strdup(n->value)) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	return 0;
}

static int load_op_package(ctx *c, const al_yaml_node *m,
                           al_imageset_op_package *p)
{
	static const char *const allowed[] = {
	    "name",     "defaultChannel", "minVersion", "maxVersion",
	    "channels", "bundles",        NULL};
	static const char *const unsupported[] = {"minBundle", NULL};
	static const char *const ch_allowed[] = {"name", "minVersion",
	                                         "maxVersion", NULL};
	static const char *const b_allowed[] = {"name", NULL};
	const char *where = "mirror.operators[].packages[]";
	const al_yaml_node *n;
	size_t i;
	int rc;

	if (m->type != AL_YAML_MAP)
		return type_error(c, m, where, "a mapping");
	if ((rc = check_fields(c, m, where, allowed, unsupported)) < 0)
		return rc;
	if ((n = al_yaml_get(m, "name")) == NULL)
		return at(c, m, AL_EPARSE, "a package needs a name", NULL,
		          NULL);
	if ((rc = dup_string(c, n, "packages[].name", &p->name)) < 0)
		return rc;
	if ((n = al_yaml_get(m, "defaultChannel")) != NULL &&
	    (rc = dup_string(c, n, "packages[].defaultChannel",
	                     &p->default_channel)) < 0)
		return rc;
	if ((rc = op_version(c, m, "minVersion", where, &p->min_version)) < 0 ||
	    (rc = op_version(c, m, "maxVersion", where, &p->max_version)) < 0)
		return rc;
	if ((n = al_yaml_get(m, "channels")) != NULL) {
		if (n->type != AL_YAML_SEQ)
			return type_error(c, n, "packages[].channels",
			                  "a list");
		p->channels = calloc(n->n + 1, sizeof(*p->channels));
		if (p->channels == NULL)
			return al_error_set(AL_ENOMEM, "out of memory");
		for (i = 0; i < n->n; i++) {
			const al_yaml_node *ch = n->items[i], *cn;
			al_imageset_op_channel *oc = &p->channels[i];

			p->nchannels++;
			if (ch->type != AL_YAML_MAP)
				return type_error(c, ch,
				                  "packages[].channels[]",
				                  "a mapping");
			if ((rc = check_fields(c, ch, "packages[].channels[]",
			                       ch_allowed, unsupported)) < 0)
				return rc;
			if ((cn = al_yaml_get(ch, "name")) == NULL)
				return at(c, ch, AL_EPARSE,
				          "a channel needs a name", NULL, NULL);
			if ((rc = dup_string(c, cn, "channels[].name",
			                     &oc->name)) < 0 ||
			    (rc = op_version(c, ch, "minVersion", "channels[]",
			                     &oc->min_version)) < 0 ||
			    (rc = op_version(c, ch, "maxVersion", "channels[]",
			                     &oc->max_version)) < 0)
				return rc;
		}
	}
	if ((n = al_yaml_get(m, "bundles")) != NULL) {
		if (n->type != AL_YAML_SEQ)
			return type_error(c, n, "packages[].bundles", "a list");
		for (i = 0; i < n->n; i++) {
			const al_yaml_node *b = n->items[i], *bn;
			const char *s;

			if (b->type != AL_YAML_MAP)
				return type_error(c, b, "packages[].bundles[]",
				                  "a mapping");
			if ((rc = check_fields(c, b, "packages[].bundles[]",
			                       b_allowed, NULL)) < 0)
				return rc;
			if ((bn = al_yaml_get(b, "name")) == NULL)
				return at(c, b, AL_EPARSE,
				          "a bundle needs a name", NULL, NULL);
			if ((rc = get_string(c, bn, "bundles[].name", &s)) <
			        0 ||
			    (rc = push(&p->bundles, &p->nbundles, s)) < 0)
				return rc;
		}
	}
	return 0;
}

static int load_operator(ctx *c, const al_yaml_node *m,
                         al_imageset_operator *op)
{
	static const char *const allowed[] = {
	    "catalog",          "targetCatalog", "targetTag", "full",
	    "skipDependencies", "packages",      NULL};
	static const char *const unsupported[] = {"targetName", "originalRef",
	                                          NULL};
	const char *where = "mirror.operators[]";
	const al_yaml_node *n;
	const char *s;
	size_t i;
	int rc;

	op->line = m->line;
	if (m->type != AL_YAML_MAP)
		return type_error(c, m, where, "a mapping");
	if ((rc = check_fields(c, m, where, allowed, unsupported)) < 0)
		return rc;
	if ((n = al_yaml_get(m, "catalog")) == NULL)
		return at(c, m, AL_EPARSE, "an operator entry needs a catalog",
		          NULL, NULL);
	if ((rc = get_string(c, n, "mirror.operators[].catalog", &s)) < 0)
		return rc;
	if (al_str_startswith(s, "oci:")) {
		const char *p = s + 4;

		while (p[0] == '/' && p[1] == '/')
			p++;
		op->catalog = p[0] == '/' ? al_sprintf("oci:%s", p)
		                          : al_sprintf("oci:%s/%s", c->dir, p);
		if (op->catalog == NULL)
			return al_error_set(AL_ENOMEM, "out of memory");
	} else {
		const char *r = al_str_startswith(s, "docker://")
		                    ? s + strlen("docker://")
		                    : s;

		if ((rc = check_ref(c, n, r)) < 0)
			return rc;
		if ((op->catalog = al_strdup(s)) == NULL)
			return al_error_set(AL_ENOMEM, "out of memory");
	}
	if ((n = al_yaml_get(m, "targetCatalog")) != NULL &&
	    (rc = dup_string(c, n, "mirror.operators[].targetCatalog",
	                     &op->target_catalog)) < 0)
		return rc;
	if ((n = al_yaml_get(m, "targetTag")) != NULL &&
	    (rc = dup_string(c, n, "mirror.operators[].targetTag",
	                     &op->target_tag)) < 0)
		return rc;
	if ((n = al_yaml_get(m, "full")) != NULL &&
	    (rc = get_bool(c, n, "mirror.operators[].full", &op->full)) < 0)
		return rc;
	if ((n = al_yaml_get(m, "skipDependencies")) != NULL &&
	    (rc = get_bool(c, n, "mirror.operators[].skipDependencies",
	                   &op->skip_dependencies)) < 0)
		return rc;
	if ((n = al_yaml_get(m, "packages")) != NULL) {
		if (n->type != AL_YAML_SEQ)
			return type_error(c, n, "mirror.operators[].packages",
			                  "a list");
		op->packages = calloc(n->n + 1, sizeof(*op->packages));
		if (op->packages == NULL)
			return al_error_set(AL_ENOMEM, "out of memory");
		for (i = 0; i < n->n; i++) {
			op->npackages++;
			if ((rc = load_op_package(c, n->items[i],
			                          &op->packages[i])) < 0)
				return rc;
		}
	}
	return 0;
}

static int load_operators(ctx *c, const al_yaml_node *seq)
{
	size_t i;
	int rc;

	if (seq->type != AL_YAML_SEQ)
		return type_error(c, seq, "mirror.operators", "a list");
	c->cfg->operators = calloc(seq->n + 1, sizeof(*c->cfg->operators));
	if (c->cfg->operators == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	for (i = 0; i < seq->n; i++) {
		c->cfg->noperators++;
		if ((rc = load_operator(c, seq->items[i],
		                        &c->cfg->operators[i])) < 0)
			return rc;
	}
	return 0;
}

void al_imageset_free(al_imageset *cfg)
{
	size_t i;

	if (cfg == NULL)
		return;
	for (i = 0; i < cfg->nreleases; i++)
		free(cfg->releases[i]);
	for (i = 0; i < cfg->narchitectures; i++)
		free(cfg->architectures[i]);
	for (i = 0; i < cfg->nadditional; i++)
		free(cfg->additional[i]);
	for (i = 0; i < cfg->nsources; i++) {
		free(cfg->sources[i].prefix);
		free(cfg->sources[i].location);
	}
	for (i = 0; i < cfg->ninsecure; i++)
		free(cfg->insecure[i]);
	for (i = 0; i < cfg->nchannels; i++)
		channel_clear(&cfg->channels[i]);
	free(cfg->channels);
	free(cfg->graph_url);
	for (i = 0; i < cfg->nkeyrings; i++)
		free(cfg->keyrings[i]);
	free(cfg->keyrings);
	for (i = 0; i < cfg->nsignature_stores; i++)
		free(cfg->signature_stores[i]);
	free(cfg->signature_stores);
	free(cfg->identity_policy);
	free(cfg->signature_timeout);
	for (i = 0; i < cfg->noperators; i++)
		operator_clear(&cfg->operators[i]);
	free(cfg->operators);
	free(cfg->releases);
	free(cfg->architectures);
	free(cfg->additional);
	free(cfg->sources);
	free(cfg->insecure);
	free(cfg->path);
	free(cfg);
}

/* The absolute directory holding path (which must exist). */
static int abs_dir(const char *path, char **out)
{
	const char *slash = strrchr(path, '/');
	char *dir = NULL, *real;

	if (slash == NULL)
		dir = al_strdup(".");
	else if (slash == path)
		dir = al_strdup("/");
	else
		dir = al_strndup(path, (size_t)(slash - path));
	if (dir == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	real = realpath(dir, NULL);
	if (real == NULL) {
		int rc = al_error_errno(
		    errno, "cannot resolve the directory of '%s'", path);

		free(dir);
		return rc;
	}
	free(dir);
	*out = real;
	return 0;
}

/*
 * Load and validate path (see imageset.h). AL_ENOTFOUND for a missing
 * file, AL_ELIMIT past AL_IMAGESET_MAX_BYTES, AL_EPARSE for malformed or
 * unknown content, AL_EUNSUPPORTED for oc-mirror features airlock lacks;
 * messages start with "<path>:<line>:<column>: ".
 */
int al_imageset_load(al_imageset **out, const char *path)
{
	return al_imageset_load_ex(out, path, 0);
}

int al_imageset_load_ex(al_imageset **out, const char *path, int flags)
{
	static const char *const allowed[] = {"kind", "apiVersion", "mirror",
	                                      "airlock", NULL};
	static const char *const unsupported[] = {
	    "archiveSize", "storageConfig", "delete", NULL};
	al_buf b = AL_BUF_INIT(AL_IMAGESET_MAX_BYTES);
	al_yaml_node **docs = NULL;
	size_t ndocs = 0;
	const al_yaml_node *root, *n;
	ctx c = {flags, path, NULL, NULL};
	int rc;

	rc = al_fs_read_file(path, &b);
	if (rc == AL_ELIMIT) {
		rc = al_error_set(AL_ELIMIT, "'%s' is larger than %d bytes",
		                  path, AL_IMAGESET_MAX_BYTES);
		goto out;
	}
	if (rc < 0)
		goto out;
	if ((rc = al_yaml_load(&docs, &ndocs, b.ptr, b.len, path)) < 0)
		goto out;
	if (ndocs != 1 || docs[0] == NULL || docs[0]->type != AL_YAML_MAP) {
		rc = al_error_set(AL_EPARSE,
		                  "%s: expected one YAML document holding an "
		                  "ImageSetConfiguration mapping",
		                  path);
		goto out;
	}
	root = docs[0];
	if ((rc = abs_dir(path, &c.dir)) < 0)
		goto out;
	c.cfg = calloc(1, sizeof(*c.cfg));
	if (c.cfg == NULL || (c.cfg->path = al_strdup(path)) == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = check_header(&c, root)) < 0)
		goto out;
	if ((rc = check_fields(&c, root, "ImageSetConfiguration", allowed,
	                       unsupported)) < 0)
		goto out;
	n = al_yaml_get(root, "mirror");
	if (n != NULL && (rc = load_mirror(&c, n)) < 0)
		goto out;
	n = al_yaml_get(root, "airlock");
	if (n != NULL && (rc = load_airlock(&c, n)) < 0)
		goto out;
	*out = c.cfg;
	c.cfg = NULL;
out:
	al_imageset_free(c.cfg);
	free(c.dir);
	al_yaml_docs_free(docs, ndocs);
	al_buf_free(&b);
	return rc;
}
