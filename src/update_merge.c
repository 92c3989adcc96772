/* update_merge.c: the Cluster Version Operator's per-kind merge rules
 * (lib/resourcemerge Ensure*) turned into the object airlock applies, and
 * its implicitly enabled capabilities (GetImplicitlyEnabledCapabilities),
 * pure. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "update_int.h"
#include "json_int.h"
#include "airlock/error.h"

/* The kinds lib/resourcemerge has an Ensure function for, and so
 * EnsureObjectMeta's merge of labels, annotations and owner references. */
static const struct {
	const char *group, *kind;
} merged_kinds[] = {
    {"", "ConfigMap"},
    {"", "ServiceAccount"},
    {"apps", "Deployment"},
    {"apps", "DaemonSet"},
    {"batch", "Job"},
    {"batch", "CronJob"},
    {"apiextensions.k8s.io", "CustomResourceDefinition"},
    {"admissionregistration.k8s.io", "ValidatingWebhookConfiguration"},
    {"rbac.authorization.k8s.io", "ClusterRole"},
    {"rbac.authorization.k8s.io", "ClusterRoleBinding"},
    {"rbac.authorization.k8s.io", "Role"},
    {"rbac.authorization.k8s.io", "RoleBinding"},
    {"image.openshift.io", "ImageStream"},
    {"operators.coreos.com", "OperatorGroup"},
};

int al_update_merge_kind(const char *group, const char *kind)
{
	size_t i;

	for (i = 0; i < sizeof(merged_kinds) / sizeof(merged_kinds[0]); i++)
		if (strcmp(merged_kinds[i].group, group != NULL ? group : "") ==
		        0 &&
		    strcmp(merged_kinds[i].kind, kind != NULL ? kind : "") == 0)
			return 1;
	return 0;
}

/* Get or create the object member key of o. */
static json_t *member_object(json_t *o, const char *key)
{
	json_t *m = json_object_get(o, key);

	if (json_is_object(m))
		return m;
	m = json_object();
	if (m == NULL || json_object_set_new(o, key, m) < 0)
		return NULL;
	return m;
}

/* mergeMap / mergeByteSliceMap: every key of live the required map lacks
 * is kept; required's values win. */
static int merge_map(json_t *parent, const char *key, const json_t *live)
{
	const char *k;
	json_t *v, *dst;

	if (!json_is_object(live) || json_object_size(live) == 0)
		return 0;
	if ((dst = member_object(parent, key)) == NULL)
		return -1;
	json_object_foreach((json_t *)(uintptr_t)live, k, v)
	{
		if (json_object_get(dst, k) == NULL &&
		    json_object_set(dst, k, v) < 0)
			return -1;
	}
	return 0;
}

/* mergeOwnerRefs: references of live whose uid required lacks are kept. */
static int merge_owner_refs(json_t *md, const json_t *live)
{
	json_t *req = json_object_get(md, "ownerReferences"), *e, *f;
	size_t i, j;

	if (json_array_size(live) == 0)
		return 0;
	if (!json_is_array(req)) {
		req = json_array();
		if (req == NULL ||
		    json_object_set_new(md, "ownerReferences", req) < 0)
			return -1;
	}
	json_array_foreach(live, i, e)
	{
		const char *uid = al_json_str(e, "uid");
		int found = 0;

		json_array_foreach(req, j, f)
		{
			const char *u = al_json_str(f, "uid");

			if (uid != NULL && u != NULL && strcmp(uid, u) == 0)
				found = 1;
		}
		if (!found && json_array_append(req, e) < 0)
			return -1;
	}
	return 0;
}

/* Set key of o to v (a new reference) when o lacks it. */
static int set_default(json_t *o, const char *key, json_t *v)
{
	if (v == NULL)
		return -1;
	if (json_object_get(o, key) != NULL) {
		json_decref(v);
		return 0;
	}
	return json_object_set_new(o, key, v);
}

/* EnsureDeployment: ensureReplicasDefault (1), Paused and MinReadySeconds
 * always overwritten (absent: false, 0), ensureStrategyDefault. */
static int deployment(json_t *obj)
{
	json_t *spec = member_object(obj, "spec"), *st, *ru;
	const char *type;

	if (spec == NULL ||
	    set_default(spec, "replicas", json_integer(1)) < 0 ||
	    set_default(spec, "paused", json_false()) < 0 ||
	    set_default(spec, "minReadySeconds", json_integer(0)) < 0 ||
	    (st = member_object(spec, "strategy")) == NULL)
		return -1;
	type = al_json_str(st, "type");
	if (type != NULL && type[0] != '\0' && strcmp(type, "RollingUpdate"))
		return 0;
	if (set_default(st, "type", json_string("RollingUpdate")) < 0 ||
	    (ru = member_object(st, "rollingUpdate")) == NULL ||
	    set_default(ru, "maxUnavailable", json_string("25%")) < 0 ||
	    set_default(ru, "maxSurge", json_string("25%")) < 0)
		return -1;
	return 0;
}

/* EnsureJob: ensureJobSpecDefault (backoffLimit 6, completionMode
 * NonIndexed, suspend false). */
static int job(json_t *obj)
{
	json_t *spec = member_object(obj, "spec");

	if (spec == NULL ||
	    set_default(spec, "backoffLimit", json_integer(6)) < 0 ||
	    set_default(spec, "completionMode", json_string("NonIndexed")) <
	        0 ||
	    set_default(spec, "suspend", json_false()) < 0)
		return -1;
	return 0;
}

/* EnsureClusterRole: with an aggregationRule, rules belong to the control
 * plane: the live rules stay. */
static int cluster_role(json_t *obj, const json_t *live)
{
	const json_t *lr = json_object_get(live, "rules");

	if (json_object_get(obj, "aggregationRule") == NULL)
		return 0;
	if (lr == NULL) {
		json_object_del(obj, "rules");
		return 0;
	}
	return json_object_set(obj, "rules", (json_t *)(uintptr_t)lr);
}

int al_update_merge(json_t **out, const json_t *required, const json_t *live,
                    const char *group, const char *kind)
{
	const json_t *lmd = json_object_get(live, "metadata");
	json_t *obj = json_deep_copy(required), *md;
	int rc = -1;

	*out = NULL;
	if (obj == NULL || (md = member_object(obj, "metadata")) == NULL)
		goto out;
	if (merge_map(md, "labels", json_object_get(lmd, "labels")) < 0 ||
	    merge_map(md, "annotations", json_object_get(lmd, "annotations")) <
	        0 ||
	    merge_owner_refs(md, json_object_get(lmd, "ownerReferences")) < 0)
		goto out;
	if (strcmp(kind, "ConfigMap") == 0 && group[0] == '\0') {
		if (merge_map(obj, "data", json_object_get(live, "data")) < 0 ||
		    merge_map(obj, "binaryData",
		              json_object_get(live, "binaryData")) < 0)
			goto out;
	} else if (strcmp(kind, "Deployment") == 0 &&
	           strcmp(group, "apps") == 0) {
		if (deployment(obj) < 0)
			goto out;
	} else if (strcmp(kind, "Job") == 0 && strcmp(group, "batch") == 0) {
		if (job(obj) < 0)
			goto out;
	} else if (strcmp(kind, "ClusterRole") == 0 &&
	           strcmp(group, "rbac.authorization.k8s.io") == 0) {
		if (cluster_role(obj, live) < 0)
			goto out;
	}
	*out = obj;
	obj = NULL;
	rc = 0;
out:
	json_decref(obj);
	if (rc < 0)
		return al_error_set(AL_ENOMEM, "out of memory");
	return 0;
}

/* The capability.openshift.io/name annotation of a task's object. */
static const char *task_caps(const al_update_task *t)
{
	const json_t *md = json_object_get(al_update__obj(t), "metadata");

	return al_json_str(json_object_get(md, "annotations"),
	                   "capability.openshift.io/name");
}

static int listed(const char *const *l, size_t n, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (l[i] != NULL && strlen(l[i]) == len &&
		    memcmp(l[i], s, len) == 0)
			return 1;
	return 0;
}

/* Is capability s[0..len) in the '+' separated list caps? */
static int in_caps(const char *caps, const char *s, size_t len)
{
	const char *p = caps;

	while (p != NULL && *p != '\0') {
		const char *e = strchr(p, '+');
		size_t n = e != NULL ? (size_t)(e - p) : strlen(p);

		if (n == len && memcmp(p, s, n) == 0)
			return 1;
		p = e != NULL ? e + 1 : NULL;
	}
	return 0;
}

static int same_object(const al_update_task *a, const al_update_task *b)
{
	return strcmp(a->group, b->group) == 0 &&
	       strcmp(a->kind, b->kind) == 0 && strcmp(a->name, b->name) == 0 &&
	       strcmp(a->ns != NULL ? a->ns : "", b->ns != NULL ? b->ns : "") ==
	           0;
}

int al_update_implicit_capabilities(const al_update_graph *next_all,
                                    const al_update_graph *current,
                                    const char *const *enabled, size_t nen,
                                    char ***out, size_t *n)
{
	char **l = NULL, **l2;
	size_t i, j, k = 0;

	*out = NULL;
	*n = 0;
	for (i = 0; i < next_all->ntasks; i++) {
		const al_update_task *u = &next_all->tasks[i];
		const char *uc = task_caps(u), *p;

		if (uc == NULL || u->delete_it)
			continue;
		for (j = 0; j < current->ntasks; j++) {
			const al_update_task *c = &current->tasks[j];
			const char *cc = task_caps(c);

			if (c->delete_it || !same_object(u, c))
				continue;
			/* update caps - current caps - enabled - known */
			for (p = uc; p != NULL && *p != '\0';) {
				const char *e = strchr(p, '+');
				size_t len =
				    e != NULL ? (size_t)(e - p) : strlen(p);

				if (len > 0 && !in_caps(cc, p, len) &&
				    !listed(enabled, nen, p, len) &&
				    !listed((const char *const *)l, k, p,
				            len)) {
					l2 = realloc(l, (k + 2) * sizeof(*l));
					if (l2 == NULL)
						goto oom;
					l = l2;
					if ((l[k] = al_strndup(p, len)) == NULL)
						goto oom;
					l[++k] = NULL;
				}
				p = e != NULL ? e + 1 : NULL;
			}
		}
	}
	*out = l;
	*n = k;
	return 0;
oom:
	for (i = 0; i < k; i++)
		free(l[i]);
	free(l);
	return al_error_set(AL_ENOMEM, "out of memory");
}
