/* update_graph.c: the updater's pure parts: manifest names, payload loading
 * (profiles, substitution), the run-level graph, the state machine. */
#include <stdlib.h>
#include <string.h>

#include "airlock/update.h"
#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/json.h"
#include "airlock/yaml.h"

/* 1 when file is "0000_<digits>_<component>_...": level and component span. */
static int numbered_name(const char *file, unsigned *level, const char **comp,
                         size_t *len)
{
	const char *p, *c;
	unsigned lv = 0;
	size_t nd = 0;

	if (strncmp(file, "0000_", 5) != 0)
		return 0;
	for (p = file + 5; *p >= '0' && *p <= '9'; p++) {
		if (nd == 9)
			return 0;
		lv = lv * 10 + (unsigned)(*p - '0');
		nd++;
	}
	if (nd == 0 || *p != '_')
		return 0;
	c = ++p;
	while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
	       (*p >= '0' && *p <= '9') || *p == '-')
		p++;
	if (p == c || *p != '_')
		return 0;
	*level = lv;
	*comp = c;
	*len = (size_t)(p - c);
	return 1;
}

int al_update_parse_name(const char *file, int *numbered, unsigned *level,
                         char **component)
{
	const char *c = NULL;
	unsigned lv = 0;
	size_t len = 0;
	char *comp = NULL;

	if (file == NULL || numbered == NULL || level == NULL ||
	    component == NULL)
		return al_error_set(AL_EINVAL, "no manifest file name");
	if (numbered_name(file, &lv, &c, &len)) {
		comp = al_strndup(c, len);
		if (comp == NULL)
			return al_error_set(AL_ENOMEM, "out of memory");
	}
	*numbered = comp != NULL;
	*level = comp != NULL ? lv : 0;
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
			if ((rc = al_buf_puts(&b, o->version)) < 0)
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
	int numbered;
	unsigned level;
	char *component;
	size_t seq;
	size_t comp_id;
} tmp_task;

static int cmp_file(const void *a, const void *b)
{
	const al_update_file *x = a, *y = b;

	return strcmp(x->name, y->name);
}

static int cmp_level(const void *a, const void *b)
{
	const tmp_task *x = a, *y = b;

	if (x->numbered != y->numbered)
		return x->numbered ? -1 : 1;
	if (x->level != y->level)
		return x->level < y->level ? -1 : 1;
	return x->seq < y->seq ? -1 : (x->seq > y->seq);
}

static int cmp_comp(const void *a, const void *b)
{
	const tmp_task *x = a, *y = b;

	if (x->comp_id != y->comp_id)
		return x->comp_id < y->comp_id ? -1 : 1;
	return x->seq < y->seq ? -1 : (x->seq > y->seq);
}

static void task_clear(al_update_task *t)
{
	free(t->file);
	json_decref(t->obj);
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
	free(g->tasks);
	free(g->components);
	free(g->levels);
	free(g);
}

static int wanted_file(const char *name)
{
	if (strcmp(name, "image-references") == 0 ||
	    strcmp(name, "release-metadata") == 0)
		return 0;
	return al_str_endswith(name, ".yaml") ||
	       al_str_endswith(name, ".yml") || al_str_endswith(name, ".json");
}

static int annotation_true(const json_t *obj, const char *key)
{
	const json_t *ann =
	    json_object_get(json_object_get(obj, "metadata"), "annotations");
	const char *v = al_json_str(ann, key);

	return v != NULL && strcmp(v, "true") == 0;
}

/* 1 keep, 0 skip (profile, exclude). */
static int keep_object(const json_t *obj, const al_update_load_opts *o)
{
	char key[512];
	int n;

	n = snprintf(key, sizeof(key), "include.release.openshift.io/%s",
	             o->profile);
	if (n < 0 || (size_t)n >= sizeof(key) || !annotation_true(obj, key))
		return 0;
	if (o->exclude != NULL && o->exclude[0] != '\0') {
		n = snprintf(key, sizeof(key),
		             "exclude.release.openshift.io/%s", o->exclude);
		if (n < 0 || (size_t)n >= sizeof(key) ||
		    annotation_true(obj, key))
			return 0;
	}
	return 1;
}

static int fill_task(al_update_task *t, json_t *obj, const char *file,
                     size_t doc)
{
	const json_t *md = json_object_get(obj, "metadata");
	const char *group_end;

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
	group_end = strchr(t->api_version, '/');
	t->cluster_operator =
	    strcmp(t->kind, "ClusterOperator") == 0 && group_end != NULL &&
	    strncmp(t->api_version, "config.openshift.io/", 20) == 0;
	t->create_only =
	    annotation_true(obj, "release.openshift.io/create-only");
	/* a manifest that removes an object: nothing to apply, no operator
	 * to wait for */
	t->delete_it = annotation_true(obj, "release.openshift.io/delete");
	if (t->delete_it)
		t->cluster_operator = 0;
	t->file = al_strdup(file);
	if (t->file == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	t->doc = doc;
	t->obj = obj;
	return 0;
}

/* Parse one file's documents into tasks appended to *tt. */
static int load_file(tmp_task **tt, size_t *nt, size_t *cap, size_t *skipped,
                     const al_update_file *f, const al_update_load_opts *o)
{
	al_yaml_node **docs = NULL;
	size_t ndocs = 0, i;
	json_t *obj = NULL;
	char *comp = NULL;
	int numbered = 0, rc;
	unsigned level = 0;

	if ((rc = al_update_parse_name(f->name, &numbered, &level, &comp)) < 0)
		goto out;
	if ((rc = al_yaml_load(&docs, &ndocs, f->data, f->len, f->name)) < 0)
		goto out;
	for (i = 0; i < ndocs; i++) {
		tmp_task *x;

		if ((rc = al_yaml_to_json(&obj, docs[i])) < 0) {
			rc = al_error_wrap(rc, "'%s' document %zu", f->name,
			                   i + 1);
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
			                  "'%s' document %zu: not a map",
			                  f->name, i + 1);
			goto out;
		}
		if (!keep_object(obj, o)) {
			(*skipped)++;
			json_decref(obj);
			obj = NULL;
			continue;
		}
		if ((rc = subst_json(obj, o, f->name, 0)) < 0)
			goto out;
		if (*nt >= AL_UPDATE_MAX_TASKS) {
			rc = al_error_set(
			    AL_ELIMIT, "more than %d manifests in the payload",
			    AL_UPDATE_MAX_TASKS);
			goto out;
		}
		if (*nt == *cap) {
			size_t nc = *cap ? *cap * 2 : 64;
			tmp_task *n2 = realloc(*tt, nc * sizeof(**tt));

			if (n2 == NULL) {
				rc = al_error_set(AL_ENOMEM, "out of memory");
				goto out;
			}
			*tt = n2;
			*cap = nc;
		}
		x = &(*tt)[*nt];
		memset(x, 0, sizeof(*x));
		if ((rc = fill_task(&x->t, obj, f->name, i)) < 0) {
			free(x->t.file);
			goto out;
		}
		obj = NULL;
		x->numbered = numbered;
		x->level = level;
		x->component = al_strdup(comp != NULL ? comp : "");
		x->seq = *nt;
		if (x->component == NULL) {
			task_clear(&x->t);
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		(*nt)++;
	}
out:
	json_decref(obj);
	al_yaml_docs_free(docs, ndocs);
	free(comp);
	return rc;
}

int al_update_graph_build(al_update_graph **out, const al_update_file *files,
                          size_t nfiles, const al_update_load_opts *opts)
{
	al_update_load_opts o;
	al_update_file *sorted = NULL;
	tmp_task *tt = NULL;
	size_t nt = 0, cap = 0, skipped = 0, i, j;
	al_update_graph *g = NULL;
	int rc = 0;

	if (out == NULL || opts == NULL || opts->version == NULL ||
	    (nfiles > 0 && files == NULL))
		return al_error_set(AL_EINVAL,
		                    "al_update_graph_build: missing argument");
	o = *opts;
	if (o.profile == NULL || o.profile[0] == '\0')
		o.profile = AL_UPDATE_DEFAULT_PROFILE;
	if (nfiles > 0) {
		sorted = calloc(nfiles, sizeof(*sorted));
		if (sorted == NULL)
			return al_error_set(AL_ENOMEM, "out of memory");
		memcpy(sorted, files, nfiles * sizeof(*sorted));
		qsort(sorted, nfiles, sizeof(*sorted), cmp_file);
	}
	for (i = 0; i < nfiles; i++) {
		if (!wanted_file(sorted[i].name))
			continue;
		if ((rc = load_file(&tt, &nt, &cap, &skipped, &sorted[i], &o)) <
		    0)
			goto out;
	}
	if (nt == 0) {
		rc = al_error_set(
		    AL_EPARSE, "the payload has no manifest for profile '%s'",
		    o.profile);
		goto out;
	}
	qsort(tt, nt, sizeof(*tt), cmp_level);
	g = calloc(1, sizeof(*g));
	if (g == NULL || (g->tasks = calloc(nt, sizeof(*g->tasks))) == NULL ||
	    (g->components = calloc(nt, sizeof(*g->components))) == NULL ||
	    (g->levels = calloc(nt, sizeof(*g->levels))) == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	/* One level at a time: number components by first appearance, then
	 * order the level's tasks by component, keeping file order. */
	for (i = 0; i < nt; i = j) {
		al_update_level *lv = &g->levels[g->nlevels++];
		size_t k, ncomp = 0;

		for (j = i; j < nt && tt[j].numbered == tt[i].numbered &&
		            tt[j].level == tt[i].level;
		     j++) {
			for (k = i; k < j; k++)
				if (strcmp(tt[k].component, tt[j].component) ==
				    0)
					break;
			tt[j].comp_id = k < j ? tt[k].comp_id : ncomp++;
		}
		qsort(tt + i, j - i, sizeof(*tt), cmp_comp);
		lv->numbered = tt[i].numbered;
		lv->level = tt[i].level;
		lv->first = g->ncomponents;
		lv->ntasks = j - i;
		for (k = i; k < j; k++) {
			al_update_component *c;

			if (k == i || tt[k].comp_id != tt[k - 1].comp_id) {
				c = &g->components[g->ncomponents++];
				c->name = tt[k].component;
				tt[k].component = NULL;
				c->first = k;
				lv->count++;
			}
			c = &g->components[g->ncomponents - 1];
			c->count++;
		}
	}
	for (i = 0; i < nt; i++) {
		g->tasks[i] = tt[i].t;
		memset(&tt[i].t, 0, sizeof(tt[i].t));
	}
	g->ntasks = nt;
	g->skipped = skipped;
	*out = g;
	g = NULL;
out:
	for (i = 0; i < nt; i++) {
		task_clear(&tt[i].t);
		free(tt[i].component);
	}
	free(tt);
	free(sorted);
	al_update_graph_free(g);
	return rc;
}

int al_update_graph_from_release(al_update_graph **out, const al_release *r,
                                 const al_update_load_opts *opts)
{
	al_update_load_opts o;
	al_update_file *files = NULL;
	al_update_image *imgs = NULL;
	size_t nf, ni, i;
	int rc;

	if (out == NULL || r == NULL)
		return al_error_set(
		    AL_EINVAL,
		    "al_update_graph_from_release: missing argument");
	memset(&o, 0, sizeof(o));
	if (opts != NULL)
		o = *opts;
	nf = al_release_file_count(r);
	ni = al_release_component_count(r);
	files = calloc(nf + 1, sizeof(*files));
	imgs = calloc(ni + 1, sizeof(*imgs));
	if (files == NULL || imgs == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < nf; i++) {
		files[i].name = al_release_file_name(r, i);
		files[i].data = al_release_file_data(r, i, &files[i].len);
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
	if (o.version == NULL)
		o.version = al_release_version(r);
	rc = al_update_graph_build(out, files, nf, &o);
out:
	free(files);
	free(imgs);
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

/* --- the state machine ------------------------------------------------- */

const char *al_update_state_name(al_update_state s)
{
	switch (s) {
	case AL_UPDATE_INITIALIZING:
		return "Initializing";
	case AL_UPDATE_UPDATING:
		return "Updating";
	case AL_UPDATE_RECONCILING:
		return "Reconciling";
	}
	return "Unknown";
}

const char *al_update_hstate_name(al_update_hstate s)
{
	return s == AL_UPDATE_COMPLETED ? "Completed" : "Partial";
}

al_update_mode al_update_choose_mode(al_update_state state, int same_target,
                                     int completed)
{
	if (!same_target)
		return AL_UPDATE_MODE_NEW;
	switch (state) {
	case AL_UPDATE_RECONCILING:
		/* Reconciling is only ever entered after a Completed update of
		 * exactly this release; without that record, finish the update.
		 */
		return completed ? AL_UPDATE_MODE_RECONCILE
		                 : AL_UPDATE_MODE_RESUME;
	case AL_UPDATE_UPDATING:
		return AL_UPDATE_MODE_RESUME;
	case AL_UPDATE_INITIALIZING:
		break;
	}
	return AL_UPDATE_MODE_NEW;
}

al_update_outcome al_update_outcome_of(int rc, size_t applied, size_t total)
{
	if (rc == 0 && total > 0 && applied == total)
		return AL_UPDATE_OUTCOME_APPLIED;
	return AL_UPDATE_OUTCOME_FAILED;
}

al_update_state al_update_next_state(al_update_state state, al_update_mode mode,
                                     al_update_outcome outcome)
{
	if (outcome == AL_UPDATE_OUTCOME_REFUSED)
		return state;
	if (mode == AL_UPDATE_MODE_RECONCILE)
		return AL_UPDATE_RECONCILING;
	return outcome == AL_UPDATE_OUTCOME_APPLIED ? AL_UPDATE_RECONCILING
	                                            : AL_UPDATE_UPDATING;
}

al_update_hstate al_update_next_hstate(al_update_mode mode,
                                       al_update_outcome outcome,
                                       al_update_hstate current)
{
	if (mode == AL_UPDATE_MODE_RECONCILE)
		return current;
	return outcome == AL_UPDATE_OUTCOME_APPLIED ? AL_UPDATE_COMPLETED
	                                            : AL_UPDATE_PARTIAL;
}

char *al_update_failure_message(const char *version, size_t applied,
                                size_t total, const char *const *errors,
                                size_t nerrors)
{
	al_buf b = AL_BUF_INIT(64 * 1024);
	size_t i;
	char *s = NULL;

	if (al_buf_printf(&b, "update to %s failed: applied %zu of %zu",
	                  version != NULL ? version : "?", applied, total) < 0)
		goto out;
	for (i = 0; i < nerrors && i < 3; i++)
		if (al_buf_printf(&b, "%s%s",
		                  i == 0 ? "; first errors: " : "; ",
		                  errors[i]) < 0)
			goto out;
	s = al_buf_detach(&b, NULL);
out:
	al_buf_free(&b);
	return s;
}
