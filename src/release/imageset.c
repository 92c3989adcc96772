/* imageset.c: loading and validating the ImageSetConfiguration subset airlock
 * understands. */
#include <errno.h>
#include <limits.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "airlock/clock.h"
#include "airlock/imageset.h"
#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/helm.h"
#include "imageset_int.h"
#include "json_int.h"
#include "airlock/ref.h"
#include "version_int.h"
#include "yaml_int.h"

/* blang/semver ParseTolerant, as oc-mirror reads operator versions. */
static int tolerant_version(const char *s)
{
	al_semver v;

	return al_semver_parse(&v, s, strlen(s), AL_SEMVER_BLANG_TOLERANT) == 0;
}

#define IMAGESET_KIND "ImageSetConfiguration"
#define IMAGESET_API "mirror.openshift.io/v2alpha1"
#define IMAGESET_API_V1 "mirror.openshift.io/v1alpha2"

typedef struct ctx {
	int flags;        /* AL_IMAGESET_* */
	const char *path; /* for messages */
	char *dir;        /* absolute directory of the file */
	al_imageset *cfg;
	int api; /* of the document being read: 2 v2alpha1, 1 v1alpha2 */
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

/* An unknown key, with a hint when oc-mirror's other API version or
 * another spelling has it (Go's encoding/json matches keys ignoring case,
 * so oc-mirror takes "additionalimages"; airlock wants the documented
 * name). */
static int unknown_field(const ctx *c, const al_yaml_node *k, const char *where)
{
	static const char *const v2_only[] = {"release",   "kubeVirtContainer",
	                                      "platforms", "targetRepo",
	                                      "targetTag", NULL};
	static const char *const spelled[] = {
	    "additionalImages",  "blockedImages",
	    "kubeVirtContainer", "archiveSize",
	    "storageConfig",     "minVersion",
	    "maxVersion",        "shortestPath",
	    "apiVersion",        NULL};
	size_t i;

	if (c->api == 1 && in_list(k->value, k->len, v2_only))
		return al_error_set(AL_EPARSE,
		                    "%s:%zu:%zu: '%s' in %s is a field of "
		                    "mirror.openshift.io/v2alpha1, not of "
		                    "v1alpha2 (oc-mirror v1 refuses it too)",
		                    c->path, k->line, k->column, k->value,
		                    where);
	if (c->api == 2 && k->len == strlen("storageConfig") &&
	    memcmp(k->value, "storageConfig", k->len) == 0)
		return al_error_set(
		    AL_EPARSE,
		    "%s:%zu:%zu: 'storageConfig' is a field of "
		    "mirror.openshift.io/v1alpha2, not of v2alpha1 (oc-mirror "
		    "v2 refuses it too): airlock's state is the --store "
		    "directory",
		    c->path, k->line, k->column);
	for (i = 0; spelled[i] != NULL; i++)
		if (strlen(spelled[i]) == k->len &&
		    strcasecmp(spelled[i], k->value) == 0)
			return al_error_set(
			    AL_EPARSE,
			    "%s:%zu:%zu: unknown field '%.100s' in %s: the "
			    "field is spelled '%s'",
			    c->path, k->line, k->column, k->value, where,
			    spelled[i]);
	return al_error_set(AL_EPARSE,
	                    "%s:%zu:%zu: unknown field '%.100s' in %s", c->path,
	                    k->line, k->column, k->value, where);
}

/* The field names of oc-mirror's ImageSetConfiguration and
 * DeleteImageSetConfiguration (v2alpha1 and v1alpha2 types). */
static const char *const ocmirror_fields[] = {"apiVersion",
                                              "kind",
                                              "mirror",
                                              "delete",
                                              "archiveSize",
                                              "storageConfig",
                                              "local",
                                              "path",
                                              "registry",
                                              "imageURL",
                                              "skipTLS",
                                              "platform",
                                              "release",
                                              "channels",
                                              "architectures",
                                              "platforms",
                                              "os",
                                              "architecture",
                                              "graph",
                                              "kubeVirtContainer",
                                              "name",
                                              "type",
                                              "minVersion",
                                              "maxVersion",
                                              "shortestPath",
                                              "full",
                                              "operators",
                                              "catalog",
                                              "targetCatalog",
                                              "targetTag",
                                              "targetName",
                                              "originalRef",
                                              "skipDependencies",
                                              "targetCatalogSourceTemplate",
                                              "packages",
                                              "defaultChannel",
                                              "bundles",
                                              "minBundle",
                                              "additionalImages",
                                              "targetRepo",
                                              "blockedImages",
                                              "samples",
                                              "helm",
                                              "repositories",
                                              "url",
                                              "charts",
                                              "version",
                                              "imagePaths",
                                              NULL};

static int push(char ***arr, size_t *n, const char *s);

static int fold_walk(al_yaml_node *n, const char *path, char ***notes,
                     size_t *nnotes, int top, size_t depth)
{
	size_t i, j;
	int rc;

	if (n == NULL || depth > AL_YAML_MAX_DEPTH)
		return 0;
	if (n->type == AL_YAML_SEQ) {
		for (i = 0; i < n->n; i++)
			if ((rc = fold_walk(n->items[i], path, notes, nnotes, 0,
			                    depth + 1)) < 0)
				return rc;
		return 0;
	}
	if (n->type != AL_YAML_MAP)
		return 0;
	for (i = 0; i < n->n; i++) {
		al_yaml_node *k = n->keys[i];
		const char *canon = NULL;

		if (top && strcmp(k->value, "airlock") == 0)
			continue;
		for (j = 0; ocmirror_fields[j] != NULL && canon == NULL; j++)
			if (strlen(ocmirror_fields[j]) == k->len &&
			    strcasecmp(ocmirror_fields[j], k->value) == 0 &&
			    strcmp(ocmirror_fields[j], k->value) != 0)
				canon = ocmirror_fields[j];
		if (canon != NULL && al_yaml_get(n, canon) == NULL) {
			char *s = al_sprintf(
			    "%s:%zu:%zu: '%s' read as '%s' (oc-mirror's Go "
			    "decoder matches field names ignoring case; the "
			    "documented spelling is '%s')",
			    path, k->line, k->column, k->value, canon, canon);
			if (s == NULL || (rc = push(notes, nnotes, s)) < 0) {
				free(s);
				return al_error_oom();
			}
			free(s);
			/* same length: the bytes change, nothing else */
			memcpy(k->value, canon, k->len);
		}
		if ((rc = fold_walk(n->items[i], path, notes, nnotes, 0,
		                    depth + 1)) < 0)
			return rc;
	}
	return 0;
}

int al_imageset__fold_keys(al_yaml_node *doc, const char *path, char ***notes,
                           size_t *nnotes)
{
	return fold_walk(doc, path, notes, nnotes, 1, 0);
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
		return unknown_field(c, k, where);
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
		return al_error_oom();
	dup = al_strdup(s);
	if (dup == NULL)
		return al_error_oom();
	p = realloc(*arr, (*n + 1) * sizeof(*p));
	if (p == NULL) {
		free(dup);
		return al_error_oom();
	}
	p[(*n)++] = dup;
	*arr = p;
	return 0;
}

/* A note for the user (cfg->notes): "<path>:<line>:<column>: msg". */
static int note(ctx *c, const al_yaml_node *n, const char *msg, const char *arg)
{
	char *s = al_sprintf("%s:%zu:%zu: %s%s", c->path, n->line, n->column,
	                     msg, arg != NULL ? arg : "");
	int rc;

	if (s == NULL)
		return al_error_oom();
	rc = push(&c->cfg->notes, &c->cfg->nnotes, s);
	free(s);
	return rc;
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
		rc = al_error_oom();
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
		return al_error_oom();
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
		return al_error_oom();
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
	size_t i, j, first = cfg->nchannels;
	int rc;

	if (seq->type != AL_YAML_SEQ)
		return type_error(c, seq, "mirror.platform.channels", "a list");
	for (i = 0; i < seq->n; i++) {
		if (cfg->nchannels >= SIZE_MAX / sizeof(*p) - 1)
			return al_error_oom();
		p = realloc(cfg->channels, (cfg->nchannels + 1) * sizeof(*p));
		if (p == NULL)
			return al_error_oom();
		cfg->channels = p;
		memset(&p[cfg->nchannels], 0, sizeof(*p));
		cfg->nchannels++;
		rc = load_channel(c, seq->items[i], &p[cfg->nchannels - 1]);
		if (rc < 0)
			return rc;
		/* oc-mirror validateReleaseChannels (both versions): a name
		 * once per document */
		for (j = first; j + 1 < cfg->nchannels; j++)
			if (strcmp(p[j].name, p[cfg->nchannels - 1].name) == 0)
				return at(c, seq->items[i], AL_EPARSE,
				          "duplicate release channel '",
				          p[j].name,
				          "' (oc-mirror refuses it too)");
	}
	return 0;
}

/* "os/architecture" of a platforms[] entry (v2alpha1
 * InstancePlatformFilter: both non-empty, nothing else). */
static int load_platform_filter(ctx *c, const al_yaml_node *item,
                                const char *where, char ***arr, size_t *n)
{
	static const char *const allowed[] = {"os", "architecture", NULL};
	const al_yaml_node *os, *arch;
	const char *o, *a;
	char *s;
	int rc;

	if (item->type != AL_YAML_MAP)
		return type_error(c, item, where,
		                  "a mapping with 'os' and 'architecture'");
	if ((rc = check_fields(c, item, where, allowed, NULL)) < 0)
		return rc;
	os = al_yaml_get(item, "os");
	arch = al_yaml_get(item, "architecture");
	if (os == NULL || arch == NULL)
		return at(c, item, AL_EPARSE, where,
		          " needs 'os' and 'architecture' (oc-mirror: "
		          "platform OS/architecture must not be empty)",
		          NULL);
	if ((rc = get_string(c, os, where, &o)) < 0 ||
	    (rc = get_string(c, arch, where, &a)) < 0)
		return rc;
	if (strchr(o, '/') != NULL || strchr(a, '/') != NULL)
		return at(c, item, AL_EPARSE, where,
		          ": os and architecture cannot contain '/'", NULL);
	if ((s = al_sprintf("%s/%s", o, a)) == NULL)
		return al_error_oom();
	rc = push(arr, n, s);
	free(s);
	return rc;
}

/*
 * operators[].platforms and helm charts[].platforms (v2alpha1
 * InstancePlatformFilter lists): oc-mirror copies only those instances of
 * each index and writes sparse manifest lists; airlock writes no sparse
 * manifest lists and copies every index whole, so the platforms asked for
 * are all there. Checked as oc-mirror checks them, then a note says so.
 */
static int load_sparse_platforms(ctx *c, const al_yaml_node *seq,
                                 const char *where, const char *of)
{
	char **list = NULL;
	char item[96];
	size_t n = 0, i;
	int rc = 0;

	if (c->api != 2)
		return at(c, seq, AL_EPARSE, where,
		          " is a field of mirror.openshift.io/v2alpha1, not of "
		          "v1alpha2 (oc-mirror v1 refuses it too)",
		          NULL);
	if (seq->type != AL_YAML_SEQ)
		return type_error(c, seq, where, "a list");
	if (snprintf(item, sizeof(item), "%s[]", where) >= (int)sizeof(item))
		return al_error_set(AL_EINVAL, "platforms: name too long");
	for (i = 0; i < seq->n && rc == 0; i++)
		rc = load_platform_filter(c, seq->items[i], item, &list, &n);
	if (rc == 0 && n > 0) {
		char *msg =
		    al_sprintf("%s: airlock copies every platform of "
		               "the indexes of %.200s (oc-mirror copies "
		               "only the ones named, as sparse manifest "
		               "lists; airlock writes none)",
		               where, of);
		rc = msg == NULL ? al_error_oom() : note(c, seq, msg, NULL);
		free(msg);
	}
	for (i = 0; i < n; i++)
		free(list[i]);
	free(list);
	return rc;
}

/* v2alpha1's kubeVirtContainer and platforms. */
static int load_platform_v2(ctx *c, const al_yaml_node *p)
{
	const al_yaml_node *n;
	size_t i;
	int rc, on = 0;

	n = al_yaml_get(p, "kubeVirtContainer");
	if (n != NULL) {
		if ((rc = get_bool(c, n, "mirror.platform.kubeVirtContainer",
		                   &on)) < 0)
			return rc;
		c->cfg->kubevirt |= on;
	}
	n = al_yaml_get(p, "platforms");
	if (n == NULL)
		return 0;
	if (n->type != AL_YAML_SEQ)
		return type_error(c, n, "mirror.platform.platforms", "a list");
	/* oc-mirror validateReleasePlatformFields */
	if (al_yaml_get(p, "architectures") != NULL)
		return at(c, n, AL_EPARSE,
		          "mirror.platform.platforms and "
		          "mirror.platform.architectures cannot be used "
		          "together (oc-mirror refuses it too)",
		          NULL, NULL);
	for (i = 0; i < n->n; i++)
		if ((rc = load_platform_filter(
		         c, n->items[i], "mirror.platform.platforms[]",
		         &c->cfg->platforms, &c->cfg->nplatforms)) < 0)
			return rc;
	if (c->cfg->nplatforms > 1 &&
	    (rc = note(c, n,
	               "mirror.platform.platforms names several platforms: "
	               "airlock mirrors every platform of a release index "
	               "(no sparse manifest lists)",
	               NULL)) < 0)
		return rc;
	return 0;
}

static int load_platform(ctx *c, const al_yaml_node *p)
{
	static const char *const allowed[] = {
	    "release",           "architectures", "graph", "channels",
	    "kubeVirtContainer", "platforms",     NULL};
	/* oc-mirror v1's Platform (v1alpha2 types_config.go) */
	static const char *const allowed_v1[] = {"architectures", "graph",
	                                         "channels", NULL};
	static const char *const arches[] = {"amd64", "arm64", "ppc64le",
	                                     "s390x", "multi", NULL};
	const al_yaml_node *n;
	const char *s;
	json_t *j = NULL;
	size_t i;
	int rc;

	if (p->type != AL_YAML_MAP)
		return type_error(c, p, "mirror.platform", "a mapping");
	if ((rc = check_fields(c, p, "mirror.platform",
	                       c->api == 1 ? allowed_v1 : allowed, NULL)) < 0)
		return rc;
	if ((rc = load_platform_v2(c, p)) < 0)
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
		/* the graph-data image and the UpdateService resource
		 * (src/release/graph_image.c, docs/graph.md) */
		c->cfg->graph = json_is_true(j);
		json_decref(j);
	}
	return 0;
}

/*
 * mirror.additionalImages[].targetRepo / targetTag (v2alpha1) of the image
 * just pushed as cfg->additional[last]: the name it is stored and pushed
 * under (al_imageset_target_name, src/release/imageset_target.c).
 */
static int load_additional_target(ctx *c, const al_yaml_node *item)
{
	const al_yaml_node *rn = al_yaml_get(item, "targetRepo");
	const al_yaml_node *tn = al_yaml_get(item, "targetTag");
	const char *repo = NULL, *tag = NULL;
	const char *ref = c->cfg->additional[c->cfg->nadditional - 1];
	char *name = NULL;
	int rc;

	if (rn == NULL && tn == NULL)
		return 0;
	if ((rn != NULL &&
	     (rc = get_string(c, rn, "mirror.additionalImages[].targetRepo",
	                      &repo)) < 0) ||
	    (tn != NULL &&
	     (rc = get_string(c, tn, "mirror.additionalImages[].targetTag",
	                      &tag)) < 0))
		return rc;
	if ((rc = al_imageset_target_name(&name, ref, repo, tag)) < 0)
		return al_error_wrap(rc, "%s:%zu:%zu", c->path,
		                     (rn != NULL ? rn : tn)->line,
		                     (rn != NULL ? rn : tn)->column);
	if (name != NULL)
		rc = al_imageset__add_rename(c->cfg, ref, name);
	free(name);
	return rc;
}

/*
 * additionalImages[].platforms (v2alpha1 InstancePlatformFilter) of the
 * image just pushed as cfg->additional[last]: one platform is the entry
 * of its index that is mirrored; several copy the whole index (airlock
 * writes no sparse manifest lists), with a note.
 */
static int load_additional_platforms(ctx *c, const al_yaml_node *seq)
{
	al_imageset *cfg = c->cfg;
	char **list = NULL, **grown;
	size_t n = 0, i, last = cfg->nadditional - 1;
	int rc = 0;

	if (seq->type != AL_YAML_SEQ)
		return type_error(c, seq, "mirror.additionalImages[].platforms",
		                  "a list");
	for (i = 0; i < seq->n && rc == 0; i++)
		rc = load_platform_filter(
		    c, seq->items[i], "mirror.additionalImages[].platforms[]",
		    &list, &n);
	if (rc < 0)
		goto out;
	/* the parallel array grows with additional (zeroed: NULL) */
	grown = realloc(cfg->additional_platforms,
	                (cfg->nadditional + 1) * sizeof(*grown));
	if (grown == NULL) {
		rc = al_error_oom();
		goto out;
	}
	if (cfg->additional_platforms == NULL)
		memset(grown, 0, (cfg->nadditional + 1) * sizeof(*grown));
	cfg->additional_platforms = grown;
	if (n == 1) {
		grown[last] = list[0];
		list[0] = NULL;
	} else if (n > 1) {
		rc = note(c, seq,
		          "mirror.additionalImages[].platforms names several "
		          "platforms: airlock mirrors the whole index of ",
		          cfg->additional[last]);
	}
out:
	for (i = 0; i < n; i++)
		free(list[i]);
	free(list);
	return rc;
}

/* Keep additional_platforms (when there is one) as long as additional,
 * the new slot NULL. */
static int grow_additional_platforms(al_imageset *cfg)
{
	char **grown;

	if (cfg->additional_platforms == NULL)
		return 0;
	grown = realloc(cfg->additional_platforms,
	                (cfg->nadditional + 1) * sizeof(*grown));
	if (grown == NULL)
		return al_error_oom();
	grown[cfg->nadditional - 1] = NULL;
	grown[cfg->nadditional] = NULL;
	cfg->additional_platforms = grown;
	return 0;
}

static int load_additional(ctx *c, const al_yaml_node *seq)
{
	static const char *const allowed[] = {"name", "platforms", "targetRepo",
	                                      "targetTag", NULL};
	static const char *const allowed_v1[] = {"name", NULL};
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
		                       c->api == 1 ? allowed_v1 : allowed,
		                       NULL)) < 0)
			return rc;
		n = al_yaml_get(item, "name");
		if (n == NULL)
			return at(c, item, AL_EPARSE,
			          "mirror.additionalImages[] needs 'name'",
			          NULL, NULL);
		if ((rc = get_string(c, n, "mirror.additionalImages[].name",
		                     &s)) < 0)
			return rc;
		/* oc-mirror's image.ParseRef takes the docker:// transport */
		if (al_str_startswith(s, "docker://"))
			s += strlen("docker://");
		if ((rc = check_ref(c, n, s)) < 0)
			return rc;
		if ((rc = push(&c->cfg->additional, &c->cfg->nadditional, s)) <
		    0)
			return rc;
		if ((rc = grow_additional_platforms(c->cfg)) < 0)
			return rc;
		n = c->api == 2 ? al_yaml_get(item, "platforms") : NULL;
		if (n != NULL && (rc = load_additional_platforms(c, n)) < 0)
			return rc;
		if (c->api == 2 && (rc = load_additional_target(c, item)) < 0)
			return rc;
	}
	return 0;
}

/*
 * A blockedImages pattern as oc-mirror reads it (Go regexp, RE2 syntax),
 * compiled here as a POSIX extended expression. The syntax both share is
 * what real files use (names, '^', '|', groups, classes); RE2-only
 * constructs ((?i), \d, \w, \s, \b, \p) would mean
 * something else to regcomp, so they are refused instead of matching
 * differently.
 */
static int check_pattern(const ctx *c, const al_yaml_node *n, const char *s)
{
	static const char *const re2_only[] = {
	    "(?",  "\\d", "\\D", "\\w", "\\W", "\\s", "\\S", "\\b",
	    "\\B", "\\p", "\\P", "\\A", "\\z", "\\Q", NULL};
	regex_t re;
	size_t i;
	int e;

	for (i = 0; re2_only[i] != NULL; i++)
		if (strstr(s, re2_only[i]) != NULL)
			return at(c, n, AL_EUNSUPPORTED,
			          "mirror.blockedImages[].name uses Go "
			          "regexp syntax that POSIX extended regular "
			          "expressions lack: ",
			          re2_only[i], NULL);
	e = regcomp(&re, s, REG_EXTENDED | REG_NOSUB);
	if (e != 0) {
		char why[128];

		regerror(e, &re, why, sizeof(why));
		return al_error_set(AL_EPARSE,
		                    "%s:%zu:%zu: blocked image '%.100s': "
		                    "invalid regular expression: %s",
		                    c->path, n->line, n->column, s, why);
	}
	regfree(&re);
	return 0;
}

/* A list of {name: STRING} (blockedImages, samples). */
static int load_names(ctx *c, const al_yaml_node *seq, const char *where,
                      char ***arr, size_t *narr, int pattern)
{
	static const char *const allowed[] = {"name", NULL};
	const al_yaml_node *item, *n;
	const char *s;
	size_t i;
	int rc;

	if (seq->type != AL_YAML_SEQ)
		return type_error(c, seq, where, "a list");
	for (i = 0; i < seq->n; i++) {
		item = seq->items[i];
		if (item->type != AL_YAML_MAP)
			return type_error(c, item, where,
			                  "a list of mappings with 'name'");
		if ((rc = check_fields(c, item, where, allowed, NULL)) < 0)
			return rc;
		if ((n = al_yaml_get(item, "name")) == NULL)
			return at(c, item, AL_EPARSE, where, "[] needs 'name'",
			          NULL);
		if ((rc = get_string(c, n, where, &s)) < 0)
			return rc;
		if (pattern && (rc = check_pattern(c, n, s)) < 0)
			return rc;
		if ((rc = push(arr, narr, s)) < 0)
			return rc;
	}
	return 0;
}

/* mirror.blockedImages and mirror.samples (both API versions). */
static int load_blocked_samples(ctx *c, const al_yaml_node *m)
{
	const al_yaml_node *n;
	size_t first = c->cfg->nsamples;
	int rc;

	n = al_yaml_get(m, "blockedImages");
	if (n != NULL &&
	    (rc = load_names(c, n, "mirror.blockedImages", &c->cfg->blocked,
	                     &c->cfg->nblocked, 1)) < 0)
		return rc;
	n = al_yaml_get(m, "samples");
	if (n == NULL)
		return 0;
	if ((rc = load_names(c, n, "mirror.samples", &c->cfg->samples,
	                     &c->cfg->nsamples, 0)) < 0)
		return rc;
	if (c->cfg->nsamples > first)
		return note(c, n,
		            "mirror.samples: sample images are not mirrored "
		            "(oc-mirror does not implement them either): ",
		            c->cfg->samples[first]);
	return 0;
}

static int load_operators(ctx *c, const al_yaml_node *seq);
static int load_helm(ctx *c, const al_yaml_node *m);
static void helm_clear(al_imageset *cfg);

static int load_mirror(ctx *c, const al_yaml_node *m)
{
	static const char *const allowed[] = {
	    "platform", "additionalImages", "blockedImages", "samples", "helm",
	    NULL};
	static const char *const allowed_ops[] = {
	    "platform",  "additionalImages",
	    "operators", "blockedImages",
	    "samples",   "helm",
	    NULL};
	static const char *const unsupported[] = {"operators", NULL};
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
	if ((rc = load_blocked_samples(c, m)) < 0)
		return rc;
	/* mirror.helm: load_helm below */
	n = al_yaml_get(m, "helm");
	if (n != NULL && (rc = load_helm(c, n)) < 0)
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
			return al_error_oom();
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
			rc = al_error_oom();
			goto out;
		}
	}
	loc = al_sprintf("oci:%s", abs != NULL ? abs : r.path);
	if (loc == NULL) {
		rc = al_error_oom();
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
			return al_error_oom();
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
			return al_error_oom();
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
		return al_error_oom();
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
			return al_error_oom();
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
			return al_error_oom();
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
	if (strcmp(s, IMAGESET_API_V1) == 0)
		c->api = 1;
	else if (strcmp(s, IMAGESET_API) == 0)
		c->api = 2;
	else
		return at(c, api, AL_EPARSE,
		          "apiVersion must be " IMAGESET_API
		          " or " IMAGESET_API_V1 ", not '",
		          s, "'");
	c->cfg->api_version = c->api;
	return 0;
}

/* archiveSize: whole GiB (oc-mirror segMultiplier 1024^3), > 0. */
static int load_archive_size(ctx *c, const al_yaml_node *n)
{
	json_t *j = NULL;
	json_int_t v;
	uint64_t bytes;

	if (n->type != AL_YAML_SCALAR || al_yaml_to_json(&j, n) < 0 ||
	    !json_is_integer(j)) {
		json_decref(j);
		return type_error(c, n, "archiveSize", "a whole number of GiB");
	}
	v = json_integer_value(j);
	json_decref(j);
	/* 1 PiB: far beyond any medium, and no overflow below */
	if (v <= 0 || v > 1024 * 1024)
		return at(c, n, AL_EPARSE,
		          "archiveSize must be between 1 and 1048576 (GiB)",
		          NULL, NULL);
	bytes = (uint64_t)v * AL_GIB;
	if (c->cfg->archive_size != 0 && c->cfg->archive_size != bytes)
		return at(c, n, AL_EPARSE,
		          "archiveSize differs from an earlier document's",
		          NULL, NULL);
	c->cfg->archive_size = bytes;
	return 0;
}

/*
 * storageConfig (v1alpha2): local.path is the store; registry (oc-mirror
 * v1 kept its metadata in an image there) is refused.
 */
static int load_storage(ctx *c, const al_yaml_node *n)
{
	static const char *const allowed[] = {"local", "registry", NULL};
	static const char *const local_allowed[] = {"path", NULL};
	const al_yaml_node *l, *pn;
	const char *s;
	char *abs;
	int rc;

	if (n->type != AL_YAML_MAP)
		return type_error(c, n, "storageConfig", "a mapping");
	if ((rc = check_fields(c, n, "storageConfig", allowed, NULL)) < 0)
		return rc;
	if ((l = al_yaml_get(n, "registry")) != NULL)
		return at(c, l, AL_EUNSUPPORTED,
		          "storageConfig.registry is not supported: oc-mirror "
		          "v1 kept its metadata in a registry image, airlock "
		          "keeps its state in the store directory (--store, or "
		          "storageConfig.local.path)",
		          NULL, NULL);
	if ((l = al_yaml_get(n, "local")) == NULL)
		return 0;
	if (l->type != AL_YAML_MAP)
		return type_error(c, l, "storageConfig.local", "a mapping");
	if ((rc = check_fields(c, l, "storageConfig.local", local_allowed,
	                       NULL)) < 0)
		return rc;
	if ((pn = al_yaml_get(l, "path")) == NULL)
		return at(c, l, AL_EPARSE, "storageConfig.local needs 'path'",
		          NULL, NULL);
	if ((rc = get_string(c, pn, "storageConfig.local.path", &s)) < 0)
		return rc;
	while (s[0] == '.' && s[1] == '/')
		s += 2;
	abs = s[0] == '/'    ? al_strdup(s)
	      : s[0] == '\0' ? al_strdup(c->dir)
	                     : al_path_join(c->dir, s);
	if (abs == NULL)
		return al_error_oom();
	if (c->cfg->store_path != NULL &&
	    strcmp(c->cfg->store_path, abs) != 0) {
		free(abs);
		return at(c, pn, AL_EPARSE,
		          "storageConfig.local.path differs from an earlier "
		          "document's",
		          NULL, NULL);
	}
	free(c->cfg->store_path);
	c->cfg->store_path = abs;
	return 0;
}

/* One document of the file, into c->cfg (lists append). */
static int load_document(ctx *c, const al_yaml_node *root)
{
	static const char *const allowed[] = {
	    "kind", "apiVersion", "mirror", "airlock", "archiveSize", NULL};
	static const char *const allowed_v1[] = {
	    "kind",        "apiVersion",    "mirror", "airlock",
	    "archiveSize", "storageConfig", NULL};
	static const char *const unsupported[] = {"delete", NULL};
	const al_yaml_node *n;
	int rc;

	if (root == NULL || root->type != AL_YAML_MAP)
		return al_error_set(AL_EPARSE,
		                    "%s:%zu:%zu: expected an "
		                    "ImageSetConfiguration mapping",
		                    c->path, root != NULL ? root->line : 1,
		                    root != NULL ? root->column : 1);
	if ((rc = check_header(c, root)) < 0)
		return rc;
	if ((rc = check_fields(c, root, "ImageSetConfiguration",
	                       c->api == 1 ? allowed_v1 : allowed,
	                       unsupported)) < 0)
		return rc;
	n = al_yaml_get(root, "archiveSize");
	if (n != NULL && (rc = load_archive_size(c, n)) < 0)
		return rc;
	n = al_yaml_get(root, "storageConfig");
	if (n != NULL && (rc = load_storage(c, n)) < 0)
		return rc;
	n = al_yaml_get(root, "mirror");
	if (n != NULL && (rc = load_mirror(c, n)) < 0)
		return rc;
	n = al_yaml_get(root, "airlock");
	if (n != NULL && (rc = load_airlock(c, n)) < 0)
		return rc;
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
		return al_error_oom();
	return 0;
}

/* oc-mirror parses min/max with semver.ParseTolerant: "v1.2" is 1.2.0. */
/*
 * minVersion above maxVersion selects nothing: oc-mirror fails such an
 * entry when it filters the catalog (its integration test
 * isc-operator-invalid-version-range.yaml, "should fail when minVersion
 * is greater than maxVersion"); airlock refuses it while loading, before
 * any network access. Versions as op_version read them (blang tolerant).
 */
static int op_range(const ctx *c, const al_yaml_node *map, const char *where,
                    const char *min, const char *max)
{
	al_semver a, b;
	const al_yaml_node *n = al_yaml_get(map, "minVersion");

	if (min == NULL || max == NULL ||
	    al_semver_parse(&a, min, strlen(min), AL_SEMVER_BLANG_TOLERANT) <
	        0 ||
	    al_semver_parse(&b, max, strlen(max), AL_SEMVER_BLANG_TOLERANT) <
	        0 ||
	    al_semver_cmp(&a, &b) <= 0)
		return 0;
	if (n == NULL)
		n = map;
	return al_error_set(AL_EPARSE,
	                    "%s:%zu:%zu: %s: minVersion %.100s is greater than "
	                    "maxVersion %.100s (oc-mirror fails it too)",
	                    c->path, n->line, n->column, where, min, max);
}

static int op_version(const ctx *c, const al_yaml_node *map, const char *key,
                      const char *where, char **out)
{
	const al_yaml_node *n = al_yaml_get(map, key);

	if (n == NULL)
		return 0;
	if (n->type != AL_YAML_SCALAR || n->len == 0 ||
	    strlen(n->value) != n->len || !tolerant_version(n->value))
		return al_error_set(AL_EPARSE,
		                    "%s:%zu:%zu: %s.%s must be a version like "
		                    "1.2.3, not '%.100s'",
		                    c->path, n->line, n->column, where, key,
		                    n->type == AL_YAML_SCALAR ? n->value : "");
	if ((*out = al_strdup(n->value)) == NULL)
		return al_error_oom();
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
	    (rc = op_version(c, m, "maxVersion", where, &p->max_version)) < 0 ||
	    (rc = op_range(c, m, where, p->min_version, p->max_version)) < 0)
		return rc;
	if ((n = al_yaml_get(m, "channels")) != NULL) {
		if (n->type != AL_YAML_SEQ)
			return type_error(c, n, "packages[].channels",
			                  "a list");
		p->channels = calloc(n->n + 1, sizeof(*p->channels));
		if (p->channels == NULL)
			return al_error_oom();
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
			                     &oc->max_version)) < 0 ||
			    (rc = op_range(c, ch, "packages[].channels[]",
			                   oc->min_version, oc->max_version)) <
			        0)
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
	    "skipDependencies", "packages",      "platforms", NULL};
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
			return al_error_oom();
	} else {
		const char *r = al_str_startswith(s, "docker://")
		                    ? s + strlen("docker://")
		                    : s;

		if ((rc = check_ref(c, n, r)) < 0)
			return rc;
		if ((op->catalog = al_strdup(s)) == NULL)
			return al_error_oom();
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
	if ((n = al_yaml_get(m, "platforms")) != NULL &&
	    (rc = load_sparse_platforms(c, n, "mirror.operators[].platforms",
	                                op->catalog)) < 0)
		return rc;
	if ((n = al_yaml_get(m, "packages")) != NULL) {
		if (n->type != AL_YAML_SEQ)
			return type_error(c, n, "mirror.operators[].packages",
			                  "a list");
		op->packages = calloc(n->n + 1, sizeof(*op->packages));
		if (op->packages == NULL)
			return al_error_oom();
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
	al_imageset_operator *v;
	size_t i, base;
	int rc;

	if (seq->type != AL_YAML_SEQ)
		return type_error(c, seq, "mirror.operators", "a list");
	/* appended: several YAML documents give the union */
	base = c->cfg->noperators;
	v = realloc(c->cfg->operators, (base + seq->n + 1) * sizeof(*v));
	if (v == NULL)
		return al_error_oom();
	memset(v + base, 0, (seq->n + 1) * sizeof(*v));
	c->cfg->operators = v;
	for (i = 0; i < seq->n; i++) {
		c->cfg->noperators++;
		if ((rc = load_operator(c, seq->items[i], &v[base + i])) < 0)
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
	free(cfg->store_path);
	for (i = 0; i < cfg->nblocked; i++)
		free(cfg->blocked[i]);
	free(cfg->blocked);
	for (i = 0; i < cfg->nsamples; i++)
		free(cfg->samples[i]);
	free(cfg->samples);
	for (i = 0; i < cfg->nplatforms; i++)
		free(cfg->platforms[i]);
	free(cfg->platforms);
	for (i = 0; i < cfg->nnotes; i++)
		free(cfg->notes[i]);
	free(cfg->notes);
	for (i = 0; cfg->additional_platforms != NULL && i < cfg->nadditional;
	     i++)
		free(cfg->additional_platforms[i]);
	free(cfg->additional_platforms);
	al_imageset__free_renames(cfg);
	helm_clear(cfg);
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
		return al_error_oom();
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
	al_buf b = AL_BUF_INIT(AL_IMAGESET_MAX_BYTES);
	al_yaml_node **docs = NULL;
	size_t ndocs = 0, i;
	ctx c = {flags, path, NULL, NULL, 0};
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
	if (ndocs == 0) {
		rc = al_error_set(AL_EPARSE,
		                  "%s: expected one YAML document holding an "
		                  "ImageSetConfiguration mapping",
		                  path);
		goto out;
	}
	if ((rc = abs_dir(path, &c.dir)) < 0)
		goto out;
	c.cfg = calloc(1, sizeof(*c.cfg));
	if (c.cfg == NULL || (c.cfg->path = al_strdup(path)) == NULL) {
		rc = al_error_oom();
		goto out;
	}
	/* Several documents: every one is read and their union kept (lists
	 * concatenated; archiveSize and storageConfig must agree), where
	 * oc-mirror (sigs.k8s.io/yaml) reads the first and drops the rest
	 * without a word. */
	for (i = 0; i < ndocs; i++)
		if ((rc = al_imageset__fold_keys(docs[i], path, &c.cfg->notes,
		                                 &c.cfg->nnotes)) < 0 ||
		    (rc = load_document(&c, docs[i])) < 0)
			goto out;
	c.cfg->ndocuments = ndocs;
	if (ndocs > 1) {
		char msg[160];
		int len =
		    snprintf(msg, sizeof(msg),
		             "the file holds %zu YAML documents: airlock "
		             "mirrors the union of all of them (oc-mirror "
		             "reads only the first)",
		             ndocs);

		if (len < 0 || (size_t)len >= sizeof(msg) ||
		    (rc = note(&c, docs[1], msg, NULL)) < 0) {
			rc = rc < 0 ? rc : al_error_set(AL_EINVAL, "note");
			goto out;
		}
	}
	*out = c.cfg;
	c.cfg = NULL;
out:
	al_imageset_free(c.cfg);
	free(c.dir);
	al_yaml_docs_free(docs, ndocs);
	al_buf_free(&b);
	return rc;
}

int al_imageset_file_kind(const char *path, int *kind)
{
	al_buf b = AL_BUF_INIT(AL_IMAGESET_MAX_BYTES);
	al_yaml_node **docs = NULL;
	size_t ndocs = 0;
	const al_yaml_node *k;
	int rc;

	if (path == NULL || kind == NULL)
		return al_error_set(AL_EINVAL, "al_imageset_file_kind: NULL");
	*kind = 0;
	if ((rc = al_fs_read_file(path, &b)) < 0 ||
	    (rc = al_yaml_load(&docs, &ndocs, b.ptr, b.len, path)) < 0)
		goto out;
	if (ndocs > 0 && docs[0] != NULL && docs[0]->type == AL_YAML_MAP &&
	    (k = al_yaml_get(docs[0], "kind")) != NULL &&
	    k->type == AL_YAML_SCALAR) {
		if (strcmp(k->value, IMAGESET_KIND) == 0)
			*kind = AL_IMAGESET_KIND_MIRROR;
		else if (strcmp(k->value, "DeleteImageSetConfiguration") == 0)
			*kind = AL_IMAGESET_KIND_DELETE;
	}
out:
	al_yaml_docs_free(docs, ndocs);
	al_buf_free(&b);
	return rc;
}

int al_imageset__load_parts(al_imageset **out, const al_yaml_node *section,
                            const char *path, int api)
{
	ctx c = {AL_IMAGESET_OPERATORS, path, NULL, NULL, api};
	const al_yaml_node *n;
	int rc;

	if ((rc = abs_dir(path, &c.dir)) < 0)
		goto out;
	c.cfg = calloc(1, sizeof(*c.cfg));
	if (c.cfg == NULL || (c.cfg->path = al_strdup(path)) == NULL) {
		rc = al_error_oom();
		goto out;
	}
	c.cfg->api_version = api;
	c.cfg->ndocuments = 1;
	if ((n = al_yaml_get(section, "operators")) != NULL &&
	    (rc = load_operators(&c, n)) < 0)
		goto out;
	if ((n = al_yaml_get(section, "helm")) != NULL &&
	    (rc = load_helm(&c, n)) < 0)
		goto out;
	*out = c.cfg;
	c.cfg = NULL;
out:
	al_imageset_free(c.cfg);
	free(c.dir);
	return rc;
}

/* ---- mirror.helm (oc-mirror v2alpha1.Helm), docs/helm.md --------------- */

static void helm_chart_clear(al_imageset_helm_chart *ch)
{
	size_t i;

	free(ch->name);
	free(ch->version);
	free(ch->path);
	for (i = 0; i < ch->nimage_paths; i++)
		free(ch->image_paths[i]);
	free(ch->image_paths);
	memset(ch, 0, sizeof(*ch));
}

static void helm_clear(al_imageset *cfg)
{
	size_t i, j;

	for (i = 0; i < cfg->nhelm_repos; i++) {
		al_imageset_helm_repo *r = &cfg->helm_repos[i];

		free(r->name);
		free(r->url);
		for (j = 0; j < r->ncharts; j++)
			helm_chart_clear(&r->charts[j]);
		free(r->charts);
	}
	free(cfg->helm_repos);
	for (i = 0; i < cfg->nhelm_local; i++)
		helm_chart_clear(&cfg->helm_local[i]);
	free(cfg->helm_local);
	cfg->helm_repos = NULL;
	cfg->helm_local = NULL;
	cfg->nhelm_repos = cfg->nhelm_local = 0;
}

/* A chart or repository name: what Helm accepts in a chart name, also
 * safe in a store name and a file name. */
static int helm_name_ok(const char *s)
{
	size_t i;

	if (s[0] == '\0' || s[0] == '.' || s[0] == '-' || strlen(s) > 250)
		return 0;
	for (i = 0; s[i] != '\0'; i++) {
		char ch = s[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' ||
		      ch == '_'))
			return 0;
	}
	return 1;
}

/* imagePaths: "{.a.b[*].c}", ".a.b" or "a.b" (al_helm_chart_read). */
static int helm_image_path_ok(const char *s)
{
	size_t n = strlen(s), i;

	if (n >= 2 && s[0] == '{' && s[n - 1] == '}') {
		s++;
		n -= 2;
	}
	if (n > 0 && s[0] == '.') {
		s++;
		n--;
	}
	if (n == 0 || n > 1000)
		return 0;
	for (i = 0; i < n; i++) {
		char ch = s[i];

		if (ch == '{' || ch == '}' || ch == '?' || ch == '@' ||
		    ch == '(' || ch == ' ' || ch == '$' || ch == '\'' ||
		    ch == '"')
			return 0;
		if (ch == '.' && (i + 1 == n || s[i + 1] == '.'))
			return 0;
	}
	return 1;
}

static int load_helm_chart(ctx *c, const al_yaml_node *m, int local,
                           al_imageset_helm_chart *ch)
{
	static const char *const repo_allowed[] = {
	    "name", "version", "imagePaths", "platforms", NULL};
	static const char *const local_allowed[] = {
	    "name", "path", "imagePaths", "platforms", NULL};
	static const char *const repo_unsupported[] = {"path", NULL};
	static const char *const local_unsupported[] = {"version", NULL};
	const char *where = local ? "mirror.helm.local[]"
	                          : "mirror.helm.repositories[].charts[]";
	const al_yaml_node *n;
	const char *s;
	size_t i;
	int rc;

	ch->line = m->line;
	if (m->type != AL_YAML_MAP)
		return type_error(c, m, where, "a mapping with 'name'");
	if ((rc = check_fields(
	         c, m, where, local ? local_allowed : repo_allowed,
	         local ? local_unsupported : repo_unsupported)) < 0)
		return rc;
	if ((n = al_yaml_get(m, "name")) == NULL)
		return al_error_set(AL_EPARSE, "%s:%zu:%zu: %s needs 'name'",
		                    c->path, m->line, m->column, where);
	if ((rc = get_string(c, n, "name", &s)) < 0)
		return rc;
	if (!helm_name_ok(s))
		return at(c, n, AL_EPARSE, "invalid chart name '", s,
		          "' (letters, digits, '.', '_' and '-')");
	if ((ch->name = al_strdup(s)) == NULL)
		return al_error_oom();
	if ((n = al_yaml_get(m, "version")) != NULL) {
		/* a plain 1.2 is a number to YAML, but Helm reads the text */
		if (n->type != AL_YAML_SCALAR || n->len == 0 ||
		    strlen(n->value) != n->len)
			return type_error(c, n, "charts[].version",
			                  "a version string");
		if (!al_helm_version_valid(n->value))
			return at(c, n, AL_EPARSE,
			          "charts[].version must be one exact chart "
			          "version like 1.2.3 (no range), not '",
			          n->value, "'");
		if ((ch->version = al_strdup(n->value)) == NULL)
			return al_error_oom();
	}
	if (local) {
		if ((n = al_yaml_get(m, "path")) == NULL)
			return at(c, m, AL_EPARSE,
			          "mirror.helm.local[] needs 'path' (a chart "
			          "archive or directory)",
			          NULL, NULL);
		if ((rc = get_string(c, n, "mirror.helm.local[].path", &s)) < 0)
			return rc;
		ch->path =
		    s[0] == '/' ? al_strdup(s) : al_sprintf("%s/%s", c->dir, s);
		if (ch->path == NULL)
			return al_error_oom();
	}
	if ((n = al_yaml_get(m, "platforms")) != NULL &&
	    (rc = load_sparse_platforms(c, n,
	                                local ? "mirror.helm.local[].platforms"
	                                      : "mirror.helm.repositories[]."
	                                        "charts[].platforms",
	                                ch->name)) < 0)
		return rc;
	if ((n = al_yaml_get(m, "imagePaths")) != NULL) {
		if (n->type != AL_YAML_SEQ)
			return type_error(c, n, "imagePaths",
			                  "a list of strings");
		for (i = 0; i < n->n; i++) {
			if ((rc = get_string(c, n->items[i], "imagePaths[]",
			                     &s)) < 0)
				return rc;
			if (!helm_image_path_ok(s))
				return at(c, n->items[i], AL_EUNSUPPORTED,
				          "imagePaths[] '", s,
				          "' is not a plain path such as "
				          "{.image.repository} (airlock reads "
				          "values, it runs no JSONPath "
				          "filters)");
			if ((rc = push(&ch->image_paths, &ch->nimage_paths,
			               s)) < 0)
				return rc;
		}
	}
	return 0;
}

static int load_helm_repo(ctx *c, const al_yaml_node *m,
                          al_imageset_helm_repo *r)
{
	static const char *const allowed[] = {"name", "url", "charts", NULL};
	const char *where = "mirror.helm.repositories[]";
	const al_yaml_node *n;
	const char *s;
	size_t i;
	int rc;

	r->line = m->line;
	if (m->type != AL_YAML_MAP)
		return type_error(c, m, where,
		                  "a mapping with 'name' and 'url'");
	if ((rc = check_fields(c, m, where, allowed, NULL)) < 0)
		return rc;
	if ((n = al_yaml_get(m, "name")) == NULL)
		return at(c, m, AL_EPARSE,
		          "mirror.helm.repositories[] needs 'name'", NULL,
		          NULL);
	if ((rc = get_string(c, n, "repositories[].name", &s)) < 0)
		return rc;
	if (!helm_name_ok(s))
		return at(c, n, AL_EPARSE, "invalid repository name '", s,
		          "' (letters, digits, '.', '_' and '-')");
	if ((r->name = al_strdup(s)) == NULL)
		return al_error_oom();
	if ((n = al_yaml_get(m, "url")) == NULL)
		return at(c, m, AL_EPARSE,
		          "mirror.helm.repositories[] needs 'url'", NULL, NULL);
	if ((rc = get_string(c, n, "repositories[].url", &s)) < 0)
		return rc;
	if (al_str_startswith(s, "oci://")) {
		if ((rc = check_prefix(c, n, s + 6, "repositories[].url")) < 0)
			return rc;
	} else if (!al_str_startswith(s, "https://") &&
	           !al_str_startswith(s, "http://")) {
		return at(c, n, AL_EPARSE,
		          "repositories[].url must be an http://, https:// or "
		          "oci:// URL, not '",
		          s, "'");
	}
	if ((r->url = al_strdup(s)) == NULL)
		return al_error_oom();
	n = al_yaml_get(m, "charts");
	if (n == NULL) {
		if (al_str_startswith(r->url, "oci://"))
			return at(c, m, AL_EPARSE,
			          "an oci:// repository has no index: name its "
			          "charts[]",
			          NULL, NULL);
		r->all_charts = 1;
		return 0;
	}
	if (n->type != AL_YAML_SEQ)
		return type_error(c, n, "repositories[].charts", "a list");
	r->charts = calloc(n->n + 1, sizeof(*r->charts));
	if (r->charts == NULL)
		return al_error_oom();
	for (i = 0; i < n->n; i++) {
		r->ncharts++;
		if ((rc = load_helm_chart(c, n->items[i], 0, &r->charts[i])) <
		    0)
			return rc;
	}
	return 0;
}

static int load_helm(ctx *c, const al_yaml_node *m)
{
	static const char *const allowed[] = {"repositories", "local", NULL};
	const al_yaml_node *n;
	al_imageset *cfg = c->cfg;
	size_t i, j;
	int rc;

	if (m->type != AL_YAML_MAP)
		return type_error(c, m, "mirror.helm", "a mapping");
	if ((rc = check_fields(c, m, "mirror.helm", allowed, NULL)) < 0)
		return rc;
	if ((n = al_yaml_get(m, "repositories")) != NULL) {
		if (n->type != AL_YAML_SEQ)
			return type_error(c, n, "mirror.helm.repositories",
			                  "a list");
		cfg->helm_repos = calloc(n->n + 1, sizeof(*cfg->helm_repos));
		if (cfg->helm_repos == NULL)
			return al_error_oom();
		for (i = 0; i < n->n; i++) {
			cfg->nhelm_repos++;
			if ((rc = load_helm_repo(c, n->items[i],
			                         &cfg->helm_repos[i])) < 0)
				return rc;
			for (j = 0; j < i; j++)
				if (strcmp(cfg->helm_repos[j].name,
				           cfg->helm_repos[i].name) == 0)
					return at(c, n->items[i], AL_EPARSE,
					          "repository name '",
					          cfg->helm_repos[i].name,
					          "' appears twice");
		}
	}
	if ((n = al_yaml_get(m, "local")) != NULL) {
		if (n->type != AL_YAML_SEQ)
			return type_error(c, n, "mirror.helm.local", "a list");
		cfg->helm_local = calloc(n->n + 1, sizeof(*cfg->helm_local));
		if (cfg->helm_local == NULL)
			return al_error_oom();
		for (i = 0; i < n->n; i++) {
			cfg->nhelm_local++;
			if ((rc = load_helm_chart(c, n->items[i], 1,
			                          &cfg->helm_local[i])) < 0)
				return rc;
		}
	}
	return 0;
}

/* --- mirror.blockedImages (oc-mirror excludeImages) --- */

/* An unanchored POSIX extended match of pattern in s (regexp.MatchString
 * semantics); a pattern that does not compile matches nothing (the
 * loader refused it already). */
static int pattern_search(const char *pattern, const char *s)
{
	regex_t re;
	int m;

	if (regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB) != 0)
		return 0;
	m = regexec(&re, s, 0, NULL, 0) == 0;
	regfree(&re);
	return m;
}

int al_imageset_blocked(const al_imageset *cfg, const char *ref,
                        const char **pattern)
{
	const char *bare, *sep;
	char *full = NULL;
	al_ref r;
	size_t i;
	int hit = 0;

	if (cfg == NULL || ref == NULL || cfg->nblocked == 0)
		return 0;
	/* as oc-mirror excludeImages: the reference without "transport://" */
	sep = strstr(ref, "://");
	bare = sep != NULL ? sep + 3 : ref;
	if (al_ref_parse(&r, bare) == 0) {
		full = al_ref_string(&r);
		al_ref_clear(&r);
	}
	for (i = 0; i < cfg->nblocked && !hit; i++) {
		hit = pattern_search(cfg->blocked[i], bare) ||
		      (full != NULL && pattern_search(cfg->blocked[i], full));
		if (hit && pattern != NULL)
			*pattern = cfg->blocked[i];
	}
	free(full);
	return hit;
}
