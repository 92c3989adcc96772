/* update_graph.c: the updater's pure parts: manifest names, payload loading
 * (profiles, substitution), the run-level graph (the state machine is in
 * update_state.c). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "airlock/update_graph.h"
#include "update_int.h"
#include "airlock/buf.h"
#include "airlock/error.h"
#include "json_int.h"
#include "airlock/log.h"
#include "yaml_int.h"
#include "error_int.h"

/* The CVO's file-name pattern (pkg/payload/task_graph.go reMatchPattern):
 * ^0000_(\d+)_([a-zA-Z0-9]+(-[a-zA-Z0-9]+)*?)_ . 1 on a match with the
 * digits and the component spans; 0 otherwise. The lazy repetition makes
 * no difference: the component cannot contain '_', so the only match is
 * the whole [A-Za-z0-9-] run up to the first '_', and it must be words
 * joined by single '-'. */
static int cvo_match(const char *file, const char **num, size_t *nlen,
                     const char **comp, size_t *clen)
{
	const char *p, *c, *d;

	if (strncmp(file, "0000_", 5) != 0)
		return 0;
	d = p = file + 5;
	while (*p >= '0' && *p <= '9')
		p++;
	if (p == d || *p != '_')
		return 0;
	c = ++p;
	for (;;) {
		const char *w = p;

		while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		       (*p >= '0' && *p <= '9'))
			p++;
		if (p == w)
			return 0; /* empty word: leading, trailing or double '-'
			           */
		if (*p == '_')
			break;
		if (*p != '-')
			return 0;
		p++;
	}
	*num = d;
	*nlen = (size_t)(c - 1 - d);
	*comp = c;
	*clen = (size_t)(p - c);
	return 1;
}

/* The digits as a number for display and the old API, saturating. */
static unsigned level_value(const char *d, size_t n)
{
	unsigned long long v = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		v = v * 10 + (unsigned)(d[i] - '0');
		if (v > UINT_MAX)
			return UINT_MAX;
	}
	return (unsigned)v;
}

int al_update_parse_name(const char *file, int *numbered, unsigned *level,
                         char **component)
{
	const char *c = NULL, *d = NULL;
	size_t len = 0, nlen = 0;
	char *comp = NULL;

	if (file == NULL || numbered == NULL || level == NULL ||
	    component == NULL)
		return al_error_set(AL_EINVAL, "no manifest file name");
	if (cvo_match(file, &d, &nlen, &c, &len)) {
		comp = al_strndup(c, len);
		if (comp == NULL)
			return al_error_set(AL_ENOMEM, "out of memory");
	}
	*numbered = comp != NULL;
	*level = comp != NULL ? level_value(d, nlen) : 0;
	*component = comp;
	return 0;
}

/* --- substitution ------------------------------------------------------ */

static int is_tag_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == '-';
}

static const char *find_image(const al_update_load_opts *o, const char *tag,
                              size_t n)
{
	size_t i;

	for (i = 0; i < o->nimages; i++)
		if (strlen(o->images[i].tag) == n &&
		    memcmp(o->images[i].tag, tag, n) == 0)
			return o->images[i].image;
	return NULL;
}

/* Rewrite one string; *out is NULL when nothing changed. */
static int subst_string(char **out, const char *s, const al_update_load_opts *o,
                        const char *what)
{
	static const char repo[] = AL_UPDATE_PLACEHOLDER_REPO ":";
	static const char ver[] = AL_UPDATE_PLACEHOLDER_VERSION;
	al_buf b = AL_BUF_INIT(AL_RELEASE_FILE_MAX);
	const char *p = s;
	int changed = 0, rc = 0;

	*out = NULL;
	while (*p != '\0') {
		if (strncmp(p, repo, sizeof(repo) - 1) == 0) {
			const char *tag = p + sizeof(repo) - 1, *e = tag, *img;

			while (is_tag_char(*e))
				e++;
			img = find_image(o, tag, (size_t)(e - tag));
			if (e == tag || img == NULL) {
				rc = al_error_set(
				    AL_EPARSE,
				    "%s: image '%.*s' is not in "
				    "image-references",
				    what, (int)(e - p > 300 ? 300 : e - p), p);
				goto out;
			}
			if ((rc = al_buf_puts(&b, img)) < 0)
				goto out;
			p = e;
			changed = 1;
		} else if (strncmp(p, ver, sizeof(ver) - 1) == 0) {
			if ((rc = al_buf_puts(&b, o->release_version)) < 0)
				goto out;
			p += sizeof(ver) - 1;
			changed = 1;
		} else {
			if ((rc = al_buf_append(&b, p, 1)) < 0)
				goto out;
			p++;
		}
	}
	if (changed) {
		*out = al_buf_detach(&b, NULL);
		if (*out == NULL)
			rc = al_error_set(AL_ENOMEM, "out of memory");
	}
out:
	al_buf_free(&b);
	return rc;
}

/* The substituted copy of string node x (NULL in *out when unchanged). */
static int subst_node(json_t **out, const json_t *x,
                      const al_update_load_opts *o, const char *what)
{
	char *ns = NULL;
	int rc;

	*out = NULL;
	if ((rc = subst_string(&ns, json_string_value(x), o, what)) < 0 ||
	    ns == NULL)
		return rc;
	*out = json_string(ns);
	free(ns);
	return *out != NULL ? 0 : al_error_set(AL_ENOMEM, "out of memory");
}

static int subst_json(json_t *v, const al_update_load_opts *o, const char *what,
                      int depth)
{
	json_t *ns = NULL;
	int rc = 0;

	if (depth > 128)
		return al_error_set(AL_ELIMIT, "%s: nested too deeply", what);
	if (json_is_object(v)) {
		const char *k;
		json_t *x;

		json_object_foreach(v, k, x)
		{
			if (json_is_string(x)) {
				if ((rc = subst_node(&ns, x, o, what)) < 0)
					return rc;
				if (ns != NULL &&
				    json_object_set_new(v, k, ns) != 0)
					return al_error_set(AL_ENOMEM,
					                    "out of memory");
			} else if ((rc = subst_json(x, o, what, depth + 1)) <
			           0) {
				return rc;
			}
		}
	} else if (json_is_array(v)) {
		size_t i;
		json_t *x;

		json_array_foreach(v, i, x)
		{
			if (json_is_string(x)) {
				if ((rc = subst_node(&ns, x, o, what)) < 0)
					return rc;
				if (ns != NULL &&
				    json_array_set_new(v, i, ns) != 0)
					return al_error_set(AL_ENOMEM,
					                    "out of memory");
			} else if ((rc = subst_json(x, o, what, depth + 1)) <
			           0) {
				return rc;
			}
		}
	}
	return 0;
}

/* --- the graph --------------------------------------------------------- */

typedef struct tmp_task {
	al_update_task t;
	size_t seq;
	int matched;            /* the CVO's file-name pattern matched */
	const char *num, *comp; /* spans into t.file's base name */
	size_t nlen, clen;
} tmp_task;

typedef struct loader {
	const al_update_load_opts *o;
	tmp_task *tt;
	size_t nt, cap;
	size_t skipped, skipped_feature, skipped_capability, skipped_template;
	size_t skipped_override;
	int major;   /* the release's major version, -1 unknown */
	char **left; /* "Kind ns/name (file #doc): why" of skipped ones */
	size_t nleft, capleft;
} loader;

static int cmp_file(const void *a, const void *b)
{
	const al_update_file *x = a, *y = b;

	return strcmp(x->name, y->name);
}

static void task_clear(al_update_task *t)
{
	free(t->file);
	free(t->group);
	json_decref(al_update__obj(t));
	memset(t, 0, sizeof(*t));
}

void al_update_graph_free(al_update_graph *g)
{
	size_t i;

	if (g == NULL)
		return;
	for (i = 0; i < g->ntasks; i++)
		task_clear(&g->tasks[i]);
	for (i = 0; i < g->ncomponents; i++)
		free(g->components[i].name);
	for (i = 0; i < g->nlevels; i++)
		free(g->levels[i].number);
	for (i = 0; i < g->nleft_out; i++)
		free(g->left_out[i]);
	free(g->left_out);
	free(g->tasks);
	free(g->components);
	free(g->levels);
	free(g);
}

/* pkg/payload hasManifestExtension: .yaml, .yml, .json (image-references
 * and release-metadata have none). */
static int wanted_file(const char *name)
{
	if (strcmp(name, "image-references") == 0 ||
	    strcmp(name, "release-metadata") == 0)
		return 0;
	return al_str_endswith(name, ".yaml") ||
	       al_str_endswith(name, ".yml") || al_str_endswith(name, ".json");
}

static const char *annotation(const json_t *obj, const char *key)
{
	const json_t *ann =
	    json_object_get(json_object_get(obj, "metadata"), "annotations");

	return al_json_str(ann, key);
}

static int annotation_true(const json_t *obj, const char *key)
{
	const char *v = annotation(obj, key);

	return v != NULL && strcmp(v, "true") == 0;
}

/* 1 when the comma/plus separated list s has the item (n bytes) w. */
static int in_list(const char *const *l, size_t n, const char *w, size_t wl)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (l[i] != NULL && strlen(l[i]) == wl &&
		    memcmp(l[i], w, wl) == 0)
			return 1;
	return 0;
}

/* library-go knownFeatureSets: every feature set of openshift/api features
 * ("" is "Default") and CustomNoUpgrade. */
static const char *const known_feature_sets[] = {
    "Default", "TechPreviewNoUpgrade", "DevPreviewNoUpgrade", "CustomNoUpgrade",
    "OKD"};

int al_update_feature_set_known(const char *name)
{
	if (name == NULL)
		return 0;
	return name[0] == '\0' || in_list(known_feature_sets,
	                                  sizeof(known_feature_sets) /
	                                      sizeof(known_feature_sets[0]),
	                                  name, strlen(name));
}

/* Trim ASCII spaces of [*b, *e). */
static void trim(const char **b, const char **e)
{
	while (*b < *e && (**b == ' ' || **b == '\t'))
		(*b)++;
	while (*e > *b && ((*e)[-1] == ' ' || (*e)[-1] == '\t'))
		(*e)--;
}

/* library-go checkFeatureSets: 1 keep. */
static int feature_set_ok(const json_t *obj, const char *want)
{
	const char *v = annotation(obj, "release.openshift.io/feature-set"), *p;
	int has = 0;

	if (v == NULL)
		return 1;
	if (want == NULL || want[0] == '\0')
		want = "Default";
	for (p = v;;) {
		const char *e = strchr(p, ',');
		size_t n = e != NULL ? (size_t)(e - p) : strlen(p);

		/* a value outside the known ones: never included */
		if (!in_list(known_feature_sets,
		             sizeof(known_feature_sets) /
		                 sizeof(known_feature_sets[0]),
		             p, n))
			return 0;
		if (strlen(want) == n && memcmp(want, p, n) == 0)
			has = 1;
		if (e == NULL)
			break;
		p = e + 1;
	}
	return has;
}

/* library-go checkFeatureGates: 1 keep. */
static int feature_gates_ok(const json_t *obj, const al_update_load_opts *o)
{
	const char *v = annotation(obj, "release.openshift.io/feature-gate"),
	           *p;

	if (v == NULL)
		return 1;
	for (p = v;;) {
		const char *e = strchr(p, ','), *b = p,
		           *end = e != NULL ? e : p + strlen(p);

		trim(&b, &end);
		if (b < end) {
			int neg = *b == '-';
			int on = in_list(o->feature_gates, o->nfeature_gates,
			                 b + neg, (size_t)(end - b - neg));

			if (neg ? on : !on)
				return 0;
		}
		if (e == NULL)
			break;
		p = e + 1;
	}
	return 1;
}

/* library-go checkMajorVersion: 1 keep. Only FeatureGate and CRD
 * manifests may carry the annotation. */
static int major_ok(const json_t *obj, const char *group, const char *kind,
                    int major)
{
	const char *v = annotation(obj, "release.openshift.io/major-version"),
	           *p;
	int inc = 0, exc = 0, any_inc = 0;

	if (v == NULL || major < 0)
		return 1;
	if (!((strcmp(group, "config.openshift.io") == 0 &&
	       strcmp(kind, "FeatureGate") == 0) ||
	      (strcmp(group, "apiextensions.k8s.io") == 0 &&
	       strcmp(kind, "CustomResourceDefinition") == 0)))
		return 0;
	for (p = v;;) {
		const char *e = strchr(p, ','), *b = p,
		           *end = e != NULL ? e : p + strlen(p);

		trim(&b, &end);
		if (b < end) {
			int neg = *b == '-';
			const char *q = b + neg;
			unsigned long long n = 0;

			if (q == end)
				return 0; /* strconv.ParseUint("") fails */
			for (; q < end; q++) {
				if (*q < '0' || *q > '9' || n > 1000000000ULL)
					return 0; /* unparsable: excluded */
				n = n * 10 + (unsigned)(*q - '0');
			}
			if (neg)
				exc |= n == (unsigned long long)major ? 1 : 0;
			else {
				any_inc = 1;
				inc |= n == (unsigned long long)major ? 1 : 0;
			}
			/* an overlap (the same version both ways) is caught
			 * only for the cluster's own major here; library-go
			 * refuses any overlap */
		}
		if (e == NULL)
			break;
		p = e + 1;
	}
	if (inc && exc)
		return 0;
	if (inc)
		return 1;
	if (exc)
		return 0;
	return !any_inc;
}

/* library-go checkResourceEnablement (allowUnknownCapabilities false):
 * every '+'-separated capability must be known and enabled. 1 keep. */
static int capabilities_ok(const json_t *obj, const al_update_load_opts *o)
{
	const char *v = annotation(obj, "capability.openshift.io/name"), *p;
	const char *const *known = o->known_capabilities;
	size_t nknown = o->nknown_capabilities;

	if (v == NULL || v[0] == '\0' || !o->capabilities_known)
		return 1;
	if (known == NULL) {
		known = al_update_known_capabilities();
		for (nknown = 0; known[nknown] != NULL; nknown++)
			;
	}
	for (p = v;;) {
		const char *e = strchr(p, '+');
		size_t n = e != NULL ? (size_t)(e - p) : strlen(p);

		if (!in_list(known, nknown, p, n) ||
		    !in_list(o->capabilities, o->ncapabilities, p, n))
			return 0;
		if (e == NULL)
			break;
		p = e + 1;
	}
	return 1;
}

typedef enum keep_why {
	KEEP = 0,
	SKIP_OTHER = 1,
	SKIP_FEATURE = 2,
	SKIP_CAPABILITY = 3,
	SKIP_OVERRIDE = 4
} keep_why;

static int str_eq(const char *a, const char *b)
{
	return strcmp(a != NULL ? a : "", b != NULL ? b : "") == 0;
}

/* library-go getOverrideForManifest: group, kind, name and (for a
 * namespaced manifest) namespace equal an unmanaged override's. */
static int overridden(const json_t *obj, const char *group, const char *kind,
                      const al_update_load_opts *o)
{
	const json_t *md = json_object_get(obj, "metadata");
	const char *ns = al_json_str(md, "namespace"),
	           *name = al_json_str(md, "name");
	size_t i;

	for (i = 0; i < o->noverrides; i++) {
		const al_update_override *v = &o->overrides[i];

		if (str_eq(v->group, group) && str_eq(v->kind, kind) &&
		    str_eq(v->name, name) &&
		    (ns == NULL || ns[0] == '\0' || str_eq(v->ns, ns)))
			return 1;
	}
	return 0;
}

/* library-go Manifest.Include, in its order: annotations, exclude,
 * feature-set and feature-gate together, feature set, feature gates,
 * major version, profile, capabilities, overrides. */
static keep_why keep_object(const json_t *obj, const char *group,
                            const char *kind, const loader *ld,
                            const char **why, const char **ann_key)
{
	const al_update_load_opts *o = ld->o;
	const json_t *ann =
	    json_object_get(json_object_get(obj, "metadata"), "annotations");
	char key[512];
	int n;

	*ann_key = NULL;
	*why = "no annotations";
	if (!json_is_object(ann))
		return SKIP_OTHER;
	if (o->exclude != NULL && o->exclude[0] != '\0') {
		n = snprintf(key, sizeof(key),
		             "exclude.release.openshift.io/%s", o->exclude);
		*why = "excluded";
		if (n < 0 || (size_t)n >= sizeof(key) ||
		    annotation_true(obj, key))
			return SKIP_OTHER;
	}
	*why = "both a feature set and a feature gate";
	if (o->feature_gates_known &&
	    annotation(obj, "release.openshift.io/feature-set") != NULL &&
	    annotation(obj, "release.openshift.io/feature-gate") != NULL)
		return SKIP_FEATURE;
	*why = "feature set";
	*ann_key = "release.openshift.io/feature-set";
	if (!feature_set_ok(obj, o->feature_set))
		return SKIP_FEATURE;
	*why = "feature gate";
	*ann_key = "release.openshift.io/feature-gate";
	if (o->feature_gates_known && !feature_gates_ok(obj, o))
		return SKIP_FEATURE;
	*why = "major version";
	*ann_key = "release.openshift.io/major-version";
	if (!major_ok(obj, group, kind, ld->major))
		return SKIP_FEATURE;
	n = snprintf(key, sizeof(key), "include.release.openshift.io/%s",
	             o->profile);
	*why = "not in the profile";
	*ann_key = NULL;
	if (n < 0 || (size_t)n >= sizeof(key) || !annotation_true(obj, key))
		return SKIP_OTHER;
	*why = "capability not enabled";
	*ann_key = "capability.openshift.io/name";
	if (!capabilities_ok(obj, o))
		return SKIP_CAPABILITY;
	*why = "unmanaged (ClusterVersion spec.overrides)";
	*ann_key = NULL;
	if (overridden(obj, group, kind, o))
		return SKIP_OVERRIDE;
	return KEEP;
}

static int fill_task(al_update_task *t, json_t *obj, const char *file,
                     size_t doc)
{
	const json_t *md = json_object_get(obj, "metadata");
	const char *slash;

	t->api_version = al_json_str(obj, "apiVersion");
	t->kind = al_json_str(obj, "kind");
	t->name = al_json_str(md, "name");
	t->ns = al_json_str(md, "namespace");
	if (t->api_version == NULL || t->kind == NULL || t->name == NULL ||
	    t->name[0] == '\0' || t->api_version[0] == '\0' ||
	    t->kind[0] == '\0')
		return al_error_set(
		    AL_EPARSE,
		    "'%s' document %zu: no apiVersion, kind or metadata.name",
		    file, doc + 1);
	if (t->ns != NULL && t->ns[0] == '\0')
		t->ns = NULL;
	slash = strchr(t->api_version, '/');
	t->group = slash != NULL ? al_strndup(t->api_version,
	                                      (size_t)(slash - t->api_version))
	                         : al_strdup("");
	t->cluster_operator =
	    strcmp(t->kind, "ClusterOperator") == 0 && slash != NULL &&
	    strcmp(t->api_version, "config.openshift.io/v1") == 0;
	/* pkg/payload SplitOnJobs: GVK batch/v1 Job exactly */
	t->job = strcmp(t->kind, "Job") == 0 &&
	         strcmp(t->api_version, "batch/v1") == 0;
	t->create_only =
	    annotation_true(obj, "release.openshift.io/create-only");
	/* a manifest that removes an object: nothing to apply, no operator
	 * to wait for */
	t->delete_it = annotation_true(obj, "release.openshift.io/delete");
	t->delete_invalid =
	    !t->delete_it &&
	    annotation(obj, "release.openshift.io/delete") != NULL;
	if (t->delete_it) {
		t->cluster_operator = 0;
		t->job = 0;
	}
	t->file = al_strdup(file);
	if (t->file == NULL || t->group == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	t->doc = doc;
	t->obj = al_update__opaque(obj);
	return 0;
}

/* The object's identity as library-go's resourceId: group, kind,
 * namespace, name. */
static int same_id(const al_update_task *a, const al_update_task *b)
{
	return strcmp(a->group, b->group) == 0 &&
	       strcmp(a->kind, b->kind) == 0 && strcmp(a->name, b->name) == 0 &&
	       strcmp(a->ns != NULL ? a->ns : "", b->ns != NULL ? b->ns : "") ==
	           0;
}

static char *id_text(const al_update_task *t)
{
	return al_sprintf("group \"%s\" kind \"%s\"%s%s%s name \"%s\"",
	                  t->group, t->kind, t->ns ? " namespace \"" : "",
	                  t->ns ? t->ns : "", t->ns ? "\"" : "", t->name);
}

static int dup_error(const al_update_task *a, const al_update_task *b)
{
	char *id = id_text(b);
	int rc;

	rc = al_error_set(AL_EPARSE,
	                  "duplicate resource (%s): '%s' document %zu and "
	                  "'%s' document %zu",
	                  id != NULL ? id : b->name, a->file, a->doc + 1,
	                  b->file, b->doc + 1);
	free(id);
	return rc;
}

/* --- manifests/ templates (pkg/payload renderManifest) ------------------ */

/* Parse a Go interpreted ("...") or raw (`...`) string literal at p (< e)
 * into b; *end after it. 0, or 1 when it is not one. */
static int go_literal(al_buf *b, const char *p, const char *e, const char **end)
{
	char q = *p;

	if (q == '`') {
		const char *c = memchr(p + 1, '`', (size_t)(e - p - 1));

		if (c == NULL)
			return 1;
		if (al_buf_append(b, p + 1, (size_t)(c - p - 1)) < 0)
			return -1;
		*end = c + 1;
		return 0;
	}
	if (q != '"')
		return 1;
	for (p++; p < e; p++) {
		char ch = *p;

		if (ch == '"') {
			*end = p + 1;
			return 0;
		}
		if (ch == '\n')
			return 1;
		if (ch == '\\') {
			if (++p >= e)
				return 1;
			switch (*p) {
			case 'n':
				ch = '\n';
				break;
			case 't':
				ch = '\t';
				break;
			case '\\':
			case '"':
			case '\'':
				ch = *p;
				break;
			default:
				return 1; /* other escapes: not handled */
			}
		}
		if (al_buf_append(b, &ch, 1) < 0)
			return -1;
	}
	return 1;
}

/* Render one manifests/ file. 0 with *out (caller frees), 1 when the
 * template uses what airlock does not render (the file is skipped, as the
 * CVO skips a manifest whose template fails), <0 on error. */
static int render_template(char **out, size_t *outlen, const uint8_t *data,
                           size_t len, const al_update_load_opts *o)
{
	al_buf b = AL_BUF_INIT(AL_RELEASE_FILE_MAX);
	const char *p = (const char *)data, *e = p + len;
	int rc = 0;

	*out = NULL;
	while (p < e) {
		const char *open = NULL, *q;

		for (q = p; q + 1 < e; q++)
			if (q[0] == '{' && q[1] == '{') {
				open = q;
				break;
			}
		if (open == NULL) {
			if ((rc = al_buf_append(&b, p, (size_t)(e - p))) < 0)
				goto out;
			break;
		}
		if ((rc = al_buf_append(&b, p, (size_t)(open - p))) < 0)
			goto out;
		q = open + 2;
		if (q < e && *q == '-') {
			rc = 1; /* trim markers: not rendered */
			goto out;
		}
		while (q < e && (*q == ' ' || *q == '\t'))
			q++;
		if (q < e && (*q == '"' || *q == '`')) {
			const char *after = NULL;

			if ((rc = go_literal(&b, q, e, &after)) != 0) {
				if (rc < 0)
					rc = al_error_set(AL_ENOMEM,
					                  "out of memory");
				goto out;
			}
			q = after;
			while (q < e && (*q == ' ' || *q == '\t'))
				q++;
			if (q + 1 >= e || q[0] != '}' || q[1] != '}') {
				rc = 1;
				goto out;
			}
			p = q + 2;
			continue;
		}
		{
			const char *c = q, *ae;
			const char *val = NULL;
			size_t n;

			while (c + 1 < e && !(c[0] == '}' && c[1] == '}'))
				c++;
			if (c + 1 >= e) {
				rc = 1;
				goto out;
			}
			ae = c;
			trim(&q, &ae);
			n = (size_t)(ae - q);
			if (n == 13 && memcmp(q, ".ReleaseImage", 13) == 0)
				val = o->release_image != NULL
				          ? o->release_image
				          : o->release_version;
			else if (n == 15 &&
			         memcmp(q, ".ClusterProfile", 15) == 0)
				val = o->profile;
			else if (n > 8 && memcmp(q, ".Images.", 8) == 0)
				val = find_image(o, q + 8, n - 8);
			if (val == NULL) {
				rc = 1;
				goto out;
			}
			if ((rc = al_buf_puts(&b, val)) < 0)
				goto out;
			p = c + 2;
		}
	}
	*outlen = b.len;
	*out = al_buf_detach(&b, NULL);
	if (*out == NULL)
		rc = al_error_set(AL_ENOMEM, "out of memory");
out:
	al_buf_free(&b);
	return rc;
}

/* Remember why a document was left out, for the plan (at most
 * AL_UPDATE_MAX_LEFT_OUT lines; the counts stay exact). */
static int note_left_out(loader *ld, const al_update_task *t, const char *why,
                         const char *akey, const json_t *obj)
{
	const char *v = akey != NULL ? annotation(obj, akey) : NULL;
	char *d, *line;

	if (ld->nleft >= AL_UPDATE_MAX_LEFT_OUT)
		return 0;
	if (ld->nleft == ld->capleft) {
		size_t nc = ld->capleft ? ld->capleft * 2 : 32;
		char **n2 = realloc(ld->left, nc * sizeof(*n2));

		if (n2 == NULL)
			return al_error_set(AL_ENOMEM, "out of memory");
		ld->left = n2;
		ld->capleft = nc;
	}
	d = al_update_task_describe(t);
	if (d == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	if (v != NULL)
		line = al_sprintf("%s: %s (%s: %s)", d, why, akey, v);
	else
		line = al_sprintf("%s: %s", d, why);
	free(d);
	if (line == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	ld->left[ld->nleft++] = line;
	return 0;
}

/* Parse one file's documents into tasks appended to ld->tt. file: the name
 * tasks carry ("manifests/x" for the image's own manifests); base: the
 * name the CVO's pattern applies to (OriginalFilename). */
static int load_file(loader *ld, const char *file, const char *base,
                     const uint8_t *data, size_t len)
{
	al_yaml_node **docs = NULL;
	size_t ndocs = 0, i, ndoc_ids = 0, k;
	al_update_task *ids = NULL;
	json_t *obj = NULL;
	int rc;

	(void)base; /* the pattern is applied once the array stops moving */
	if ((rc = al_yaml_load_lenient(&docs, &ndocs, data, len, file)) < 0)
		goto out;
	ids = calloc(ndocs + 1, sizeof(*ids));
	if (ids == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < ndocs; i++) {
		tmp_task *x;
		al_update_task probe;
		keep_why why;
		const char *reason = NULL, *akey = NULL;

		if ((rc = al_yaml_to_json(&obj, docs[i])) < 0) {
			rc =
			    al_error_wrap(rc, "'%s' document %zu", file, i + 1);
			goto out;
		}
		if (json_is_null(obj) ||
		    (json_is_string(obj) && json_string_length(obj) == 0)) {
			json_decref(obj);
			obj = NULL;
			continue;
		}
		if (!json_is_object(obj)) {
			rc = al_error_set(AL_EPARSE,
			                  "'%s' document %zu: not a map", file,
			                  i + 1);
			goto out;
		}
		memset(&probe, 0, sizeof(probe));
		if ((rc = fill_task(&probe, obj, file, i)) < 0) {
			probe.obj = NULL;
			task_clear(&probe);
			goto out;
		}
		/* the identity borrows from obj: keep it alive */
		json_incref(obj);
		/* library-go ParseManifests: a duplicate inside one file
		 * refuses it, whatever the filters say */
		for (k = 0; k < ndoc_ids; k++)
			if (same_id(&ids[k], &probe))
				break;
		if (k < ndoc_ids) {
			rc = dup_error(&ids[k], &probe);
			task_clear(&probe);
			goto out;
		}
		ids[ndoc_ids++] = probe;
		why = keep_object(obj, probe.group, probe.kind, ld, &reason,
		                  &akey);
		if (why != KEEP) {
			if ((rc = note_left_out(ld, &probe, reason, akey,
			                        obj)) < 0)
				goto out;
			ld->skipped++;
			if (why == SKIP_FEATURE)
				ld->skipped_feature++;
			else if (why == SKIP_CAPABILITY)
				ld->skipped_capability++;
			else if (why == SKIP_OVERRIDE)
				ld->skipped_override++;
			json_decref(obj);
			obj = NULL;
			continue;
		}
		if ((rc = subst_json(obj, ld->o, file, 0)) < 0)
			goto out;
		if (ld->nt >= AL_UPDATE_MAX_TASKS) {
			rc = al_error_set(
			    AL_ELIMIT, "more than %d manifests in the payload",
			    AL_UPDATE_MAX_TASKS);
			goto out;
		}
		if (ld->nt == ld->cap) {
			size_t nc = ld->cap ? ld->cap * 2 : 64;
			tmp_task *n2 = realloc(ld->tt, nc * sizeof(*ld->tt));

			if (n2 == NULL) {
				rc = al_error_set(AL_ENOMEM, "out of memory");
				goto out;
			}
			ld->tt = n2;
			ld->cap = nc;
		}
		x = &ld->tt[ld->nt];
		memset(x, 0, sizeof(*x));
		if ((rc = fill_task(&x->t, obj, file, i)) < 0) {
			x->t.obj = NULL;
			task_clear(&x->t);
			goto out;
		}
		obj = NULL;
		x->seq = ld->nt;
		ld->nt++;
	}
out:
	for (k = 0; k < ndoc_ids; k++)
		task_clear(&ids[k]);
	free(ids);
	json_decref(obj);
	al_yaml_docs_free(docs, ndocs);
	return rc;
}

/* Set the pattern spans of tasks (after the array stops moving). */
static void set_spans(tmp_task *x)
{
	const char *f = x->t.file, *base = strrchr(f, '/');

	base = base != NULL ? base + 1 : f;
	x->matched = cvo_match(base, &x->num, &x->nlen, &x->comp, &x->clen);
}

static int same_num(const tmp_task *a, const tmp_task *b)
{
	return a->matched && b->matched && a->nlen == b->nlen &&
	       memcmp(a->num, b->num, a->nlen) == 0;
}

static int same_comp(const tmp_task *a, const tmp_task *b)
{
	return a->clen == b->clen && memcmp(a->comp, b->comp, a->clen) == 0;
}

/* Append a level made of the components [ranges): starts[k] .. starts[k+1]. */
static int add_level(al_update_graph *g, const tmp_task *tt,
                     const size_t *starts, size_t nparts, size_t end)
{
	al_update_level *lv = &g->levels[g->nlevels];
	size_t k;

	memset(lv, 0, sizeof(*lv));
	lv->numbered = tt[starts[0]].matched;
	if (lv->numbered) {
		lv->level = level_value(tt[starts[0]].num, tt[starts[0]].nlen);
		lv->number = al_strndup(tt[starts[0]].num, tt[starts[0]].nlen);
		if (lv->number == NULL)
			return al_error_set(AL_ENOMEM, "out of memory");
	}
	lv->first = g->ncomponents;
	g->nlevels++;
	for (k = 0; k < nparts; k++) {
		size_t s = starts[k], e = k + 1 < nparts ? starts[k + 1] : end;
		al_update_component *c = &g->components[g->ncomponents++];

		c->name = tt[s].matched ? al_strndup(tt[s].comp, tt[s].clen)
		                        : al_strdup("");
		if (c->name == NULL)
			return al_error_set(AL_ENOMEM, "out of memory");
		c->first = s;
		c->count = e - s;
		lv->count++;
		lv->ntasks += c->count;
	}
	return 0;
}

/* pkg/payload ByNumberAndComponent on tt[lo, hi): a run of names with the
 * same run-level digits and more than one component is one parallel level
 * (one component per run of equal components); anything else is a serial
 * chunk. The CVO appends consecutive serial chunks to one node; here a
 * chunk of one level's single component stays its own level and only
 * consecutive names the pattern does not match share one (the same
 * order, and the same "before" relation between any two tasks). */
static int by_number_and_component(al_update_graph *g, tmp_task *tt, size_t lo,
                                   size_t hi, size_t *starts)
{
	size_t i = lo, j;
	int rc;

	while (i < hi) {
		size_t base = i, nparts = 0;

		for (j = i + 1; j < hi; j++) {
			if (!same_num(&tt[base], &tt[j]))
				break;
			if (!same_comp(&tt[base], &tt[j])) {
				starts[nparts++] = i;
				i = j;
			}
			base = j;
		}
		if (nparts > 0) {
			starts[nparts++] = i;
			if ((rc = add_level(g, tt, starts, nparts, j)) < 0)
				return rc;
			i = j;
			continue;
		}
		if (!tt[i].matched) {
			/* names the pattern does not match: one serial run */
			while (j < hi && !tt[j].matched && !tt[j].t.job)
				j++;
		}
		starts[0] = i;
		if ((rc = add_level(g, tt, starts, 1, j)) < 0)
			return rc;
		i = j;
	}
	return 0;
}

static int cmp_id(const void *a, const void *b)
{
	const al_update_task *x = *(const al_update_task *const *)a,
	                     *y = *(const al_update_task *const *)b;
	int c;

	if ((c = strcmp(x->group, y->group)) != 0 ||
	    (c = strcmp(x->kind, y->kind)) != 0 ||
	    (c = strcmp(x->ns != NULL ? x->ns : "",
	                y->ns != NULL ? y->ns : "")) != 0 ||
	    (c = strcmp(x->name, y->name)) != 0)
		return c;
	return x < y ? -1 : (x > y);
}

/* An object kept from two files: refused, naming both (library-go
 * ManifestsFromFiles refuses a duplicate across files). */
static int check_duplicates(const tmp_task *tt, size_t nt)
{
	const al_update_task **v = calloc(nt + 1, sizeof(*v));
	size_t i;
	int rc = 0;

	if (v == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	for (i = 0; i < nt; i++)
		v[i] = &tt[i].t;
	qsort(v, nt, sizeof(*v), cmp_id);
	for (i = 1; i < nt; i++)
		if (same_id(v[i - 1], v[i])) {
			rc = v[i - 1] < v[i] ? dup_error(v[i - 1], v[i])
			                     : dup_error(v[i], v[i - 1]);
			break;
		}
	free(v);
	return rc;
}

static int major_of(const char *v)
{
	long n = 0;
	const char *p = v;

	if (v == NULL || *v < '0' || *v > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		n = n * 10 + (*p - '0');
		if (n > 100000)
			return -1;
	}
	return (*p == '.' || *p == '\0') ? (int)n : -1;
}

int al_update_graph_build2(al_update_graph **out, const al_update_file *cvo,
                           size_t ncvo, const al_update_file *files,
                           size_t nfiles, const al_update_load_opts *opts)
{
	al_update_load_opts o;
	al_update_file *sorted = NULL;
	loader ld;
	size_t i, seg, *starts = NULL;
	al_update_graph *g = NULL;
	char *path = NULL, *text = NULL;
	int rc = 0;

	if (opts != NULL &&
	    (rc = al_opts_version_check("al_update_load_opts", opts->version,
	                                AL_UPDATE_LOAD_OPTS_VERSION)) < 0)
		return rc;
	if (out == NULL || opts == NULL || opts->release_version == NULL ||
	    (nfiles > 0 && files == NULL) || (ncvo > 0 && cvo == NULL))
		return al_error_set(AL_EINVAL,
		                    "al_update_graph_build: missing argument");
	o = *opts;
	if (o.profile == NULL || o.profile[0] == '\0')
		o.profile = AL_UPDATE_DEFAULT_PROFILE;
	memset(&ld, 0, sizeof(ld));
	ld.o = &o;
	ld.major = major_of(o.release_version);
	sorted = calloc(nfiles + ncvo + 1, sizeof(*sorted));
	if (sorted == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	/* pkg/payload loadPayloadTasks: manifests/ (rendered), then
	 * release-manifests/, each in os.ReadDir (name) order */
	if (ncvo > 0) {
		memcpy(sorted, cvo, ncvo * sizeof(*sorted));
		qsort(sorted, ncvo, sizeof(*sorted), cmp_file);
	}
	if (nfiles > 0) {
		memcpy(sorted + ncvo, files, nfiles * sizeof(*sorted));
		qsort(sorted + ncvo, nfiles, sizeof(*sorted), cmp_file);
	}
	for (i = 0; i < ncvo + nfiles; i++) {
		const al_update_file *f = &sorted[i];

		if (!wanted_file(f->name))
			continue;
		if (i < ncvo) {
			size_t tl = 0;

			rc = render_template(&text, &tl, f->data, f->len, &o);
			if (rc < 0)
				goto out;
			if (rc == 1) {
				al_log_warn("update: skipping manifests/%s: "
				            "template not rendered",
				            f->name);
				ld.skipped_template++;
				rc = 0;
				continue;
			}
			path = al_sprintf("manifests/%s", f->name);
			if (path == NULL) {
				rc = al_error_set(AL_ENOMEM, "out of memory");
				goto out;
			}
			rc = load_file(&ld, path, f->name,
			               (const uint8_t *)text, tl);
			free(path);
			free(text);
			path = text = NULL;
		} else {
			rc = load_file(&ld, f->name, f->name, f->data, f->len);
		}
		if (rc < 0)
			goto out;
	}
	if (ld.nt == 0) {
		rc = al_error_set(
		    AL_EPARSE, "the payload has no manifest for profile '%s'",
		    o.profile);
		goto out;
	}
	for (i = 0; i < ld.nt; i++)
		set_spans(&ld.tt[i]);
	if ((rc = check_duplicates(ld.tt, ld.nt)) < 0)
		goto out;
	g = calloc(1, sizeof(*g));
	starts = calloc(ld.nt + 1, sizeof(*starts));
	if (g == NULL || starts == NULL ||
	    (g->tasks = calloc(ld.nt, sizeof(*g->tasks))) == NULL ||
	    (g->components = calloc(ld.nt, sizeof(*g->components))) == NULL ||
	    (g->levels = calloc(ld.nt, sizeof(*g->levels))) == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	/* pkg/payload SplitOnJobs: each Job alone, everything before it
	 * before it, everything after it after it; then ByNumberAndComponent
	 * on each part */
	for (seg = 0, i = 0; i <= ld.nt; i++) {
		if (i < ld.nt && !ld.tt[i].t.job)
			continue;
		if (i > seg && (rc = by_number_and_component(g, ld.tt, seg, i,
		                                             starts)) < 0)
			goto out;
		if (i < ld.nt) {
			starts[0] = i;
			if ((rc = add_level(g, ld.tt, starts, 1, i + 1)) < 0)
				goto out;
		}
		seg = i + 1;
	}
	for (i = 0; i < ld.nt; i++) {
		g->tasks[i] = ld.tt[i].t;
		memset(&ld.tt[i].t, 0, sizeof(ld.tt[i].t));
	}
	g->ntasks = ld.nt;
	g->skipped = ld.skipped;
	g->skipped_feature = ld.skipped_feature;
	g->skipped_capability = ld.skipped_capability;
	g->skipped_override = ld.skipped_override;
	g->skipped_template = ld.skipped_template;
	g->left_out = ld.left;
	g->nleft_out = ld.nleft;
	ld.left = NULL;
	ld.nleft = 0;
	*out = g;
	g = NULL;
out:
	for (i = 0; i < ld.nt; i++)
		task_clear(&ld.tt[i].t);
	free(ld.tt);
	for (i = 0; i < ld.nleft; i++)
		free(ld.left[i]);
	free(ld.left);
	free(sorted);
	free(starts);
	free(path);
	free(text);
	al_update_graph_free(g);
	return rc;
}

int al_update_graph_build(al_update_graph **out, const al_update_file *files,
                          size_t nfiles, const al_update_load_opts *opts)
{
	int rc;

	if (opts != NULL &&
	    (rc = al_opts_version_check("al_update_load_opts", opts->version,
	                                AL_UPDATE_LOAD_OPTS_VERSION)) < 0)
		return rc;
	return al_update_graph_build2(out, NULL, 0, files, nfiles, opts);
}

int al_update_graph_from_release(al_update_graph **out, const al_release *r,
                                 const al_update_load_opts *opts)
{
	al_update_load_opts o = AL_UPDATE_LOAD_OPTS_INIT;
	al_update_file *files = NULL, *cvo = NULL;
	al_update_image *imgs = NULL;
	size_t nf, nc, ni, i;
	int rc;

	if (opts != NULL &&
	    (rc = al_opts_version_check("al_update_load_opts", opts->version,
	                                AL_UPDATE_LOAD_OPTS_VERSION)) < 0)
		return rc;
	if (out == NULL || r == NULL)
		return al_error_set(
		    AL_EINVAL,
		    "al_update_graph_from_release: missing argument");
	if (opts != NULL)
		o = *opts;
	nf = al_release_file_count(r);
	nc = al_release_cvo_file_count(r);
	ni = al_release_component_count(r);
	files = calloc(nf + 1, sizeof(*files));
	cvo = calloc(nc + 1, sizeof(*cvo));
	imgs = calloc(ni + 1, sizeof(*imgs));
	if (files == NULL || imgs == NULL || cvo == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < nf; i++) {
		files[i].name = al_release_file_name(r, i);
		files[i].data = al_release_file_data(r, i, &files[i].len);
	}
	for (i = 0; i < nc; i++) {
		cvo[i].name = al_release_cvo_file_name(r, i);
		cvo[i].data = al_release_cvo_file_data(r, i, &cvo[i].len);
	}
	for (i = 0; i < ni; i++) {
		const al_release_component *c = al_release_component_at(r, i);

		imgs[i].tag = c->name;
		imgs[i].image = c->image;
	}
	if (o.images == NULL) {
		o.images = imgs;
		o.nimages = ni;
	}
	if (o.release_version == NULL)
		o.release_version = al_release_version(r);
	rc = al_update_graph_build2(out, cvo, nc, files, nf, &o);
out:
	free(files);
	free(cvo);
	free(imgs);
	return rc;
}

/* --- capabilities (openshift/api config/v1, CVO lib/capability) -------- */

static const char *const known_caps[] = {"baremetal",
                                         "Console",
                                         "Insights",
                                         "marketplace",
                                         "Storage",
                                         "openshift-samples",
                                         "CSISnapshot",
                                         "NodeTuning",
                                         "MachineAPI",
                                         "Build",
                                         "DeploymentConfig",
                                         "ImageRegistry",
                                         "OperatorLifecycleManager",
                                         "OperatorLifecycleManagerV1",
                                         "CloudCredential",
                                         "Ingress",
                                         "CloudControllerManager",
                                         "CompatibilityRequirements",
                                         "ClusterAPI",
                                         NULL};

const char *const *al_update_known_capabilities(void)
{
	return known_caps;
}

/* openshift/api ClusterVersionCapabilitySets: each set's members as
 * indexes into known_caps, written as letters ('a' is known_caps[0]). */
static const struct capset {
	const char *name;
	const char *members; /* indexes into known_caps, as letters 'a'+i */
} capsets[] = {
    {"None", ""},
    {"v4.11", "adhi"},
    {"v4.12", "abcdefgi"},
    {"v4.13", "abcdefghi"},
    {"v4.14", "abcdefghijkl"},
    {"v4.15", "abcdefghijklmo"},
    {"v4.16", "abcdefghijklmopq"},
    {"v4.17", "abcdefghijklmopq"},
    {"v4.18", "abcdefghijklmnopq"},
    /* vCurrent without CompatibilityRequirements and ClusterAPI: the CVO
     * excludes those unless their feature gates are enabled
     * (lib/capability excludedCapabilities) */
    {"vCurrent", "abcdefghijklmnopq"},
};

static int add_cap(const char ***v, size_t *n, size_t *cap, const char *c)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (strcmp((*v)[i], c) == 0)
			return 0;
	if (*n + 2 > *cap) {
		size_t nc = *cap ? *cap * 2 : 32;
		const char **n2 = realloc(*v, nc * sizeof(**v));

		if (n2 == NULL)
			return al_error_set(AL_ENOMEM, "out of memory");
		*v = n2;
		*cap = nc;
	}
	(*v)[(*n)++] = c;
	(*v)[*n] = NULL;
	return 0;
}

int al_update_cluster_capabilities(const json_t *cv, const char ***out,
                                   size_t *n)
{
	const json_t *spec = json_object_get(json_object_get(cv, "spec"),
	                                     "capabilities"),
	             *st = json_object_get(json_object_get(cv, "status"),
	                                   "capabilities");
	const char *set = al_json_str(spec, "baselineCapabilitySet");
	const char **v = NULL;
	size_t nv = 0, cap = 0, i;
	const char *m;
	json_t *x;
	int rc = 0;

	if (out == NULL || n == NULL)
		return al_error_set(AL_EINVAL, "missing argument");
	if (set == NULL || set[0] == '\0')
		set = "vCurrent";
	for (i = 0; i < sizeof(capsets) / sizeof(capsets[0]); i++)
		if (strcmp(capsets[i].name, set) == 0)
			break;
	if (i == sizeof(capsets) / sizeof(capsets[0]))
		return al_error_set(AL_EINVAL,
		                    "ClusterVersion: unknown "
		                    "baselineCapabilitySet '%s'",
		                    set);
	if ((rc = add_cap(&v, &nv, &cap, "")) < 0) /* allocate */
		goto out;
	nv = 0;
	v[0] = NULL;
	for (m = capsets[i].members; *m != '\0'; m++)
		if ((rc = add_cap(&v, &nv, &cap, known_caps[*m - 'a'])) < 0)
			goto out;
	json_array_foreach(
	    json_object_get(spec, "additionalEnabledCapabilities"), i, x)
	{
		if (json_is_string(x) &&
		    (rc = add_cap(&v, &nv, &cap, json_string_value(x))) < 0)
			goto out;
	}
	json_array_foreach(json_object_get(st, "enabledCapabilities"), i, x)
	{
		if (json_is_string(x) &&
		    (rc = add_cap(&v, &nv, &cap, json_string_value(x))) < 0)
			goto out;
	}
	*out = v;
	*n = nv;
	v = NULL;
out:
	free(v);
	return rc;
}

char *al_update_task_describe(const al_update_task *t)
{
	if (t == NULL)
		return NULL;
	if (t->ns != NULL)
		return al_sprintf("%s%s %s/%s (%s #%zu)",
		                  t->delete_it ? "delete " : "", t->kind, t->ns,
		                  t->name, t->file, t->doc + 1);
	return al_sprintf("%s%s %s (%s #%zu)", t->delete_it ? "delete " : "",
	                  t->kind, t->name, t->file, t->doc + 1);
}

/* See update.h. */
char *al_update_task_json(const al_update_task *t)
{
	if (t == NULL || t->obj == NULL)
		return NULL;
	return al_json_dump(al_update__obj(t), 0);
}
