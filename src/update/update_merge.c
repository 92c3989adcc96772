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

/* The kinds lib/resourcemerge has an Ensure function for (and so
 * EnsureObjectMeta's merge of labels, annotations and owner references),
 * and how airlock follows it. */
static const struct {
	const char *group, *kind;
	int how;
} merged_kinds[] = {
    {"", "ConfigMap", AL_UPDATE_MERGE_APPLY},
    {"", "ServiceAccount", AL_UPDATE_MERGE_APPLY},
    {"", "Service", AL_UPDATE_MERGE_LIVE},
    {"apps", "Deployment", AL_UPDATE_MERGE_LIVE},
    {"apps", "DaemonSet", AL_UPDATE_MERGE_LIVE},
    {"batch", "Job", AL_UPDATE_MERGE_LIVE},
    {"batch", "CronJob", AL_UPDATE_MERGE_LIVE},
    {"apiextensions.k8s.io", "CustomResourceDefinition", AL_UPDATE_MERGE_APPLY},
    {"admissionregistration.k8s.io", "ValidatingWebhookConfiguration",
     AL_UPDATE_MERGE_APPLY},
    {"rbac.authorization.k8s.io", "ClusterRole", AL_UPDATE_MERGE_APPLY},
    {"rbac.authorization.k8s.io", "ClusterRoleBinding", AL_UPDATE_MERGE_APPLY},
    {"rbac.authorization.k8s.io", "Role", AL_UPDATE_MERGE_APPLY},
    {"rbac.authorization.k8s.io", "RoleBinding", AL_UPDATE_MERGE_APPLY},
    {"image.openshift.io", "ImageStream", AL_UPDATE_MERGE_APPLY},
    {"operators.coreos.com", "OperatorGroup", AL_UPDATE_MERGE_APPLY},
};

int al_update_merge_kind(const char *group, const char *kind)
{
	size_t i;

	for (i = 0; i < sizeof(merged_kinds) / sizeof(merged_kinds[0]); i++)
		if (strcmp(merged_kinds[i].group, group != NULL ? group : "") ==
		        0 &&
		    strcmp(merged_kinds[i].kind, kind != NULL ? kind : "") == 0)
			return merged_kinds[i].how;
	return AL_UPDATE_MERGE_NONE;
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

/* ---- The merge on the live object (lib/resourcemerge apps.go, batch.go,
 * core.go): the CVO copies the existing object, lets Ensure* change what
 * it owns and writes the whole object back (Update) only when something
 * changed. ---- */

typedef struct mg {
	int modified;
	int oom;
} mg;

/* Go's zero value as JSON: absent, null, false, 0, "", [] or {}. */
static int is_zero(const json_t *v)
{
	if (v == NULL || json_is_null(v) || json_is_false(v))
		return 1;
	if (json_is_string(v))
		return json_string_length(v) == 0;
	if (json_is_integer(v))
		return json_integer_value(v) == 0;
	if (json_is_real(v))
		return json_real_value(v) == 0.0;
	if (json_is_array(v))
		return json_array_size(v) == 0;
	if (json_is_object(v))
		return json_object_size(v) == 0;
	return 0;
}

/* Where a value sits, for the quantities equality.Semantic compares by
 * value (its Quantity equality is a.Cmp(b) == 0): a ResourceRequirements
 * ("resources": container resources, a claim template's) holds
 * ResourceLists ("limits", "requests"), whose values are quantities, and
 * an emptyDir's "sizeLimit" is one. */
enum { QK_NONE, QK_RESOURCES, QK_LIST, QK_QTY };

static int child_kind(int parent, const char *key)
{
	if (parent == QK_LIST)
		return QK_QTY;
	if (parent == QK_RESOURCES &&
	    (strcmp(key, "limits") == 0 || strcmp(key, "requests") == 0))
		return QK_LIST;
	if (strcmp(key, "resources") == 0)
		return QK_RESOURCES;
	if (strcmp(key, "sizeLimit") == 0)
		return QK_QTY;
	return QK_NONE;
}

/* equality.Semantic.DeepEqual as far as JSON can tell it: a member that
 * is absent equals its zero value (JSON has no pointers, so an absent
 * pointer and a pointer to a zero value compare equal inside a
 * structure); quantities (kind QK_QTY) by value ("1Gi" is "1024Mi"), a
 * present one never equal to an absent one. */
static int sem_eq_k(const json_t *a, const json_t *b, int kind)
{
	size_t i;

	if (kind == QK_QTY) {
		int na = a == NULL || json_is_null(a);
		int nb = b == NULL || json_is_null(b);
		int eq;

		if (na || nb)
			return na && nb;
		if ((eq = al_update_qty_json_equal(a, b)) >= 0)
			return eq;
	}
	if (is_zero(a) && is_zero(b))
		return 1;
	if (is_zero(a) || is_zero(b))
		return 0;
	if (json_is_object(a) && json_is_object(b)) {
		const char *k;
		json_t *v;

		json_object_foreach((json_t *)(uintptr_t)a, k, v)
		{
			if (!sem_eq_k(v, json_object_get(b, k),
			              child_kind(kind, k)))
				return 0;
		}
		/* a quantity present on one side only differs, 0 too */
		json_object_foreach((json_t *)(uintptr_t)b, k, v)
		{
			if (json_object_get(a, k) == NULL &&
			    (!is_zero(v) || (child_kind(kind, k) == QK_QTY &&
			                     !json_is_null(v))))
				return 0;
		}
		return 1;
	}
	if (json_is_array(a) && json_is_array(b)) {
		if (json_array_size(a) != json_array_size(b))
			return 0;
		for (i = 0; i < json_array_size(a); i++)
			if (!sem_eq_k(json_array_get(a, i),
			              json_array_get(b, i), QK_NONE))
				return 0;
		return 1;
	}
	return json_equal((json_t *)(uintptr_t)a, (json_t *)(uintptr_t)b);
}

static int sem_eq(const json_t *a, const json_t *b)
{
	return sem_eq_k(a, b, QK_NONE);
}

/* o[k] = a copy of v, or no k when v is absent or null. */
static void put(mg *m, json_t *o, const char *k, const json_t *v)
{
	if (v == NULL || json_is_null(v)) {
		json_object_del(o, k);
		return;
	}
	if (json_object_set_new(o, k, json_deep_copy(v)) < 0)
		m->oom = 1;
}

/* setBoolPtr / setInt32Ptr / setInt64Ptr / setStringSlice / a pointer
 * replaced whole: o[k] becomes exactly required's (absent included). */
static void set_exact(mg *m, json_t *o, const char *k, const json_t *r)
{
	const json_t *e = json_object_get(o, k);

	if (r != NULL && json_is_null(r))
		r = NULL;
	if (e == NULL && r == NULL)
		return;
	if (e != NULL && r != NULL && json_equal((json_t *)(uintptr_t)r, e))
		return;
	m->modified = 1;
	put(m, o, k, r);
}

/* A field whose zero value is its absence (setBool, setInt32, a
 * non-pointer structure compared with DeepEqual): replaced when
 * semantically different. */
static void set_sem(mg *m, json_t *o, const char *k, const json_t *r)
{
	if (sem_eq(json_object_get(o, k), r))
		return;
	m->modified = 1;
	put(m, o, k, is_zero(r) ? NULL : r);
}

/* setStringIfSet: only a non-empty required string is written. */
static void set_if_set(mg *m, json_t *o, const char *k, const json_t *r)
{
	if (!json_is_string(r) || json_string_length(r) == 0)
		return;
	set_exact(m, o, k, r);
}

/* The pointer rule of setBoolPtr, ensureSecurityContextPtr, ...: both
 * absent, nothing; one absent, o[k] becomes required's; 0 when both are
 * there (the caller merges inside). */
static int ptr_rule(mg *m, json_t *o, const char *k, const json_t *r)
{
	const json_t *e = json_object_get(o, k);

	if (r != NULL && json_is_null(r))
		r = NULL;
	if (e == NULL && r == NULL)
		return 1;
	if (e == NULL || r == NULL) {
		m->modified = 1;
		put(m, o, k, r);
		return 1;
	}
	return 0;
}

static json_t *child(mg *m, json_t *o, const char *k)
{
	json_t *c = member_object(o, k);

	if (c == NULL)
		m->oom = 1;
	return c;
}

/* mergeMap: required's keys written into o[k], the others kept. */
static void merge_map_into(mg *m, json_t *o, const char *k, const json_t *r)
{
	const char *rk;
	json_t *rv, *e;

	if (!json_is_object(r) || json_object_size(r) == 0)
		return;
	if ((e = child(m, o, k)) == NULL)
		return;
	json_object_foreach((json_t *)(uintptr_t)r, rk, rv)
	{
		json_t *ev = json_object_get(e, rk);

		if (ev != NULL && json_equal(ev, rv))
			continue;
		m->modified = 1;
		if (json_object_set(e, rk, rv) < 0)
			m->oom = 1;
	}
}

/* EnsureObjectMeta on o["metadata"]. */
static void ensure_meta(mg *m, json_t *o, const json_t *rmd)
{
	json_t *md = child(m, o, "metadata"), *erefs, *r, *e;
	size_t i, j;

	if (md == NULL)
		return;
	set_if_set(m, md, "namespace", json_object_get(rmd, "namespace"));
	set_if_set(m, md, "name", json_object_get(rmd, "name"));
	merge_map_into(m, md, "labels", json_object_get(rmd, "labels"));
	merge_map_into(m, md, "annotations",
	               json_object_get(rmd, "annotations"));
	/* mergeOwnerRefs: by uid, replaced when different, else appended */
	json_array_foreach(json_object_get(rmd, "ownerReferences"), i, r)
	{
		const char *uid = al_json_str(r, "uid");
		int found = 0;

		erefs = json_object_get(md, "ownerReferences");
		json_array_foreach(erefs, j, e)
		{
			const char *u = al_json_str(e, "uid");

			if (strcmp(uid != NULL ? uid : "", u != NULL ? u : ""))
				continue;
			found = 1;
			if (!sem_eq(e, r)) {
				m->modified = 1;
				if (json_array_set_new(erefs, j,
				                       json_deep_copy(r)) < 0)
					m->oom = 1;
			}
			break;
		}
		if (found)
			continue;
		m->modified = 1;
		if (!json_is_array(erefs)) {
			erefs = json_array();
			if (erefs == NULL ||
			    json_object_set_new(md, "ownerReferences", erefs) <
			        0)
				m->oom = 1;
		}
		if (json_array_append_new(erefs, json_deep_copy(r)) < 0)
			m->oom = 1;
	}
}

/* Get or create the array o[k]. */
static json_t *child_array(mg *m, json_t *o, const char *k)
{
	json_t *a = json_object_get(o, k);

	if (json_is_array(a))
		return a;
	a = json_array();
	if (a == NULL || json_object_set_new(o, k, a) < 0) {
		m->oom = 1;
		return NULL;
	}
	return a;
}

static int str_eq(const json_t *a, const json_t *b, const char *k)
{
	const char *x = al_json_str(a, k), *y = al_json_str(b, k);

	return strcmp(x != NULL ? x : "", y != NULL ? y : "") == 0;
}

/* The defaults ensureContainerPortDefaults / ensureServicePortDefaults
 * give a required port before it is compared. */
static json_t *port_defaults(const json_t *r, int host_network, int service)
{
	json_t *p = json_deep_copy(r), *tp;

	if (p == NULL)
		return NULL;
	if (host_network &&
	    json_integer_value(json_object_get(p, "hostPort")) == 0 &&
	    json_object_get(p, "containerPort") != NULL)
		json_object_set(p, "hostPort",
		                json_object_get(p, "containerPort"));
	if (is_zero(json_object_get(p, "protocol")))
		json_object_set_new(p, "protocol", json_string("TCP"));
	tp = json_object_get(p, "targetPort");
	if (service && is_zero(tp) && json_object_get(p, "port") != NULL)
		json_object_set(p, "targetPort", json_object_get(p, "port"));
	return p;
}

/* ensureContainerPorts / EnsureServicePorts: ports matched by name; a
 * matched one becomes required's (defaulted) when different; existing
 * ones without a match are removed; required ones without a match are
 * appended as they are. */
static void ensure_ports(mg *m, json_t *o, const char *k, const json_t *req,
                         int host_network, int service)
{
	json_t *el = json_object_get(o, k), *r;
	size_t i, j;

	for (i = json_array_size(el); i-- > 0;) {
		json_t *e = json_array_get(el, i);
		int found = 0;

		json_array_foreach(req, j, r)
		{
			json_t *d;

			if (!str_eq(e, r, "name"))
				continue;
			found = 1;
			if ((d = port_defaults(r, host_network, service)) ==
			    NULL) {
				m->oom = 1;
				break;
			}
			if (sem_eq(d, e)) {
				json_decref(d);
			} else {
				m->modified = 1;
				if (json_array_set_new(el, i, d) < 0)
					m->oom = 1;
			}
			break;
		}
		if (!found) {
			m->modified = 1;
			json_array_remove(el, i);
		}
	}
	json_array_foreach(req, j, r)
	{
		json_t *e;
		int found = 0;

		json_array_foreach(json_object_get(o, k), i, e)
		{
			if (str_eq(e, r, "name"))
				found = 1;
		}
		if (found)
			continue;
		m->modified = 1;
		if ((el = child_array(m, o, k)) != NULL &&
		    json_array_append_new(el, json_deep_copy(r)) < 0)
			m->oom = 1;
	}
}

/* ensureVolumeSourceDefaults. */
static void volume_defaults(json_t *v)
{
	static const char *const mode420[] = {"secret", "configMap",
	                                      "downwardAPI", "projected"};
	json_t *s, *e;
	size_t i, j;

	/* ptr.AllPtrFieldsNil(VolumeSource): no source at all */
	if (json_object_size(v) == 1 && json_object_get(v, "name") != NULL)
		json_object_set_new(v, "emptyDir", json_object());
	if ((s = json_object_get(v, "hostPath")) != NULL &&
	    json_object_get(s, "type") == NULL)
		json_object_set_new(s, "type", json_string(""));
	for (i = 0; i < sizeof(mode420) / sizeof(mode420[0]); i++)
		if ((s = json_object_get(v, mode420[i])) != NULL &&
		    json_object_get(s, "defaultMode") == NULL) {
			json_object_set_new(s, "defaultMode",
			                    json_integer(420));
			if (strcmp(mode420[i], "projected") != 0)
				continue;
			json_array_foreach(json_object_get(s, "sources"), j, e)
			{
				json_t *t =
				    json_object_get(e, "serviceAccountToken");

				if (t != NULL &&
				    json_object_get(t, "expirationSeconds") ==
				        NULL)
					json_object_set_new(t,
					                    "expirationSeconds",
					                    json_integer(3600));
			}
			break;
		}
	if ((s = json_object_get(v, "iscsi")) != NULL &&
	    is_zero(json_object_get(s, "iscsiInterface")))
		json_object_set_new(s, "iscsiInterface",
		                    json_string("default"));
	if ((s = json_object_get(v, "rbd")) != NULL) {
		if (is_zero(json_object_get(s, "pool")))
			json_object_set_new(s, "pool", json_string("rbd"));
		if (is_zero(json_object_get(s, "user")))
			json_object_set_new(s, "user", json_string("admin"));
		if (is_zero(json_object_get(s, "keyring")))
			json_object_set_new(s, "keyring",
			                    json_string("/etc/ceph/keyring"));
	}
	if ((s = json_object_get(v, "azureDisk")) != NULL) {
		if (json_object_get(s, "cachingMode") == NULL)
			json_object_set_new(s, "cachingMode",
			                    json_string("ReadWrite"));
		if (json_object_get(s, "kind") == NULL)
			json_object_set_new(s, "kind", json_string("Shared"));
		if (json_object_get(s, "fsType") == NULL)
			json_object_set_new(s, "fsType", json_string("ext4"));
		if (json_object_get(s, "readOnly") == NULL)
			json_object_set_new(s, "readOnly", json_false());
	}
	if ((s = json_object_get(v, "scaleIO")) != NULL) {
		if (is_zero(json_object_get(s, "storageMode")))
			json_object_set_new(s, "storageMode",
			                    json_string("ThinProvisioned"));
		if (is_zero(json_object_get(s, "fsType")))
			json_object_set_new(s, "fsType", json_string("xfs"));
	}
}

/* ensureVolumeMounts (key mountPath) / ensureVolumes (key name): each
 * required entry is required (the first existing one with its key
 * becomes it, else it is appended); existing entries whose key no
 * required entry has are removed. */
static void ensure_keyed(mg *m, json_t *o, const char *k, const json_t *req,
                         const char *key, int volumes)
{
	json_t *r, *e, *el;
	size_t i, j;

	json_array_foreach(req, i, r)
	{
		json_t *d = json_deep_copy(r);
		size_t at = (size_t)-1;

		if (d == NULL) {
			m->oom = 1;
			return;
		}
		if (volumes)
			volume_defaults(d);
		el = json_object_get(o, k);
		json_array_foreach(el, j, e)
		{
			if (str_eq(e, r, key)) {
				at = j;
				break;
			}
		}
		if (at == (size_t)-1) {
			m->modified = 1;
			if ((el = child_array(m, o, k)) == NULL ||
			    json_array_append_new(el, d) < 0)
				m->oom = 1;
			continue;
		}
		if (sem_eq(d, json_array_get(el, at))) {
			json_decref(d);
			continue;
		}
		m->modified = 1;
		if (json_array_set_new(el, at, d) < 0)
			m->oom = 1;
	}
	el = json_object_get(o, k);
	for (i = json_array_size(el); i-- > 0;) {
		int found = 0;

		e = json_array_get(el, i);
		json_array_foreach(req, j, r)
		{
			if (str_eq(e, r, key))
				found = 1;
		}
		if (!found) {
			m->modified = 1;
			json_array_remove(el, i);
		}
	}
}

/* ensureProbePtr, ensureProbeDefaults, ensureProbe, ensureProbeHandler. */
static void ensure_probe(mg *m, json_t *c, const char *k, const json_t *r)
{
	static const char *const ints[] = {
	    "initialDelaySeconds", "timeoutSeconds", "periodSeconds",
	    "successThreshold", "failureThreshold"};
	static const long long defaults[] = {0, 1, 10, 1, 3};
	static const char *const handler[] = {"exec", "httpGet", "tcpSocket",
	                                      "grpc"};
	json_t *e, *d;
	size_t i;
	int same = 1;

	if (ptr_rule(m, c, k, r))
		return;
	e = json_object_get(c, k);
	for (i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
		json_int_t v = json_integer_value(json_object_get(r, ints[i]));
		const json_t *have = json_object_get(e, ints[i]);

		if (v == 0)
			v = defaults[i];
		/* setInt32: compared as values, absent meaning 0 */
		if (json_integer_value(have) == v &&
		    (json_is_integer(have) || (have == NULL && v == 0)))
			continue;
		m->modified = 1;
		if (json_object_set_new(e, ints[i], json_integer(v)) < 0)
			m->oom = 1;
	}
	if ((d = json_object()) == NULL) {
		m->oom = 1;
		return;
	}
	for (i = 0; i < sizeof(handler) / sizeof(handler[0]); i++) {
		json_t *h = json_object_get(r, handler[i]);

		if (h != NULL &&
		    json_object_set_new(d, handler[i], json_deep_copy(h)) < 0)
			m->oom = 1;
	}
	if ((e = json_object_get(d, "httpGet")) != NULL &&
	    is_zero(json_object_get(e, "scheme")))
		json_object_set_new(e, "scheme", json_string("HTTP"));
	e = json_object_get(c, k);
	for (i = 0; i < sizeof(handler) / sizeof(handler[0]); i++)
		if (!sem_eq(json_object_get(d, handler[i]),
		            json_object_get(e, handler[i])))
			same = 0;
	if (!same) {
		m->modified = 1;
		for (i = 0; i < sizeof(handler) / sizeof(handler[0]); i++)
			put(m, e, handler[i], json_object_get(d, handler[i]));
	}
	json_decref(d);
}

/* Append to o[k] each entry of req it lacks (ensureCapabilities,
 * the SupplementalGroups rule of ensurePodSecurityContext). */
static void add_missing(mg *m, json_t *o, const char *k, const json_t *req)
{
	json_t *r, *e, *el;
	size_t i, j;

	json_array_foreach(req, i, r)
	{
		int found = 0;

		json_array_foreach(json_object_get(o, k), j, e)
		{
			if (sem_eq(e, r))
				found = 1;
		}
		if (found)
			continue;
		m->modified = 1;
		if ((el = child_array(m, o, k)) == NULL ||
		    json_array_append(el, r) < 0)
			m->oom = 1;
	}
}

/* ensureSELinuxOptionsPtr. */
static void ensure_selinux(mg *m, json_t *o, const json_t *r)
{
	static const char *const f[] = {"user", "role", "type", "level"};
	json_t *e;
	size_t i;

	if (ptr_rule(m, o, "seLinuxOptions", r))
		return;
	e = json_object_get(o, "seLinuxOptions");
	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		set_if_set(m, e, f[i], json_object_get(r, f[i]));
}

/* ensureSeccompProfilePtr. */
static void ensure_seccomp(mg *m, json_t *o, const json_t *r)
{
	if (ptr_rule(m, o, "seccompProfile", r))
		return;
	set_sem(m, o, "seccompProfile", r);
}

/* ensureSecurityContextPtr / ensureSecurityContext (a container's). */
static void ensure_security(mg *m, json_t *c, const json_t *r)
{
	static const char *const ptrs[] = {
	    "privileged", "runAsUser", "runAsNonRoot", "readOnlyRootFilesystem",
	    "allowPrivilegeEscalation"};
	json_t *e;
	size_t i;

	if (ptr_rule(m, c, "securityContext", r))
		return;
	e = json_object_get(c, "securityContext");
	if (!ptr_rule(m, e, "capabilities",
	              json_object_get(r, "capabilities"))) {
		json_t *ec = json_object_get(e, "capabilities");
		const json_t *rc = json_object_get(r, "capabilities");

		add_missing(m, ec, "add", json_object_get(rc, "add"));
		add_missing(m, ec, "drop", json_object_get(rc, "drop"));
	}
	ensure_selinux(m, e, json_object_get(r, "seLinuxOptions"));
	for (i = 0; i < sizeof(ptrs) / sizeof(ptrs[0]); i++)
		set_exact(m, e, ptrs[i], json_object_get(r, ptrs[i]));
	ensure_seccomp(m, e, json_object_get(r, "seccompProfile"));
}

/* ensurePodSecurityContextPtr / ensurePodSecurityContext. */
static void ensure_pod_security(mg *m, json_t *s, const json_t *r)
{
	static const char *const ptrs[] = {"runAsUser", "runAsGroup",
	                                   "runAsNonRoot"};
	json_t *e = json_object_get(s, "securityContext"), *rs, *es;
	size_t i, j;

	if (r != NULL && json_is_null(r))
		r = NULL;
	if (is_zero(e) && r == NULL)
		return;
	if (ptr_rule(m, s, "securityContext", r))
		return;
	ensure_selinux(m, e, json_object_get(r, "seLinuxOptions"));
	for (i = 0; i < sizeof(ptrs) / sizeof(ptrs[0]); i++)
		set_exact(m, e, ptrs[i], json_object_get(r, ptrs[i]));
	ensure_seccomp(m, e, json_object_get(r, "seccompProfile"));
	add_missing(m, e, "supplementalGroups",
	            json_object_get(r, "supplementalGroups"));
	set_exact(m, e, "fsGroup", json_object_get(r, "fsGroup"));
	/* sysctls: by name, the value required's */
	json_array_foreach(json_object_get(r, "sysctls"), i, rs)
	{
		int found = 0;
		json_t *el;

		json_array_foreach(json_object_get(e, "sysctls"), j, es)
		{
			if (!str_eq(es, rs, "name"))
				continue;
			found = 1;
			if (!str_eq(es, rs, "value")) {
				m->modified = 1;
				if (json_array_set(
				        json_object_get(e, "sysctls"), j, rs) <
				    0)
					m->oom = 1;
			}
			break;
		}
		if (found)
			continue;
		m->modified = 1;
		if ((el = child_array(m, e, "sysctls")) == NULL ||
		    json_array_append(el, rs) < 0)
			m->oom = 1;
	}
}

/* ensureAffinityPtr / ensureAffinity. */
static void ensure_affinity(mg *m, json_t *s, const json_t *r)
{
	static const char *const f[] = {"nodeAffinity", "podAffinity",
	                                "podAntiAffinity"};
	json_t *e;
	size_t i;

	if (r == NULL || json_is_null(r))
		return;
	if (ptr_rule(m, s, "affinity", r))
		return;
	e = json_object_get(s, "affinity");
	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (!sem_eq(json_object_get(e, f[i]),
		            json_object_get(r, f[i]))) {
			m->modified = 1;
			put(m, e, f[i], json_object_get(r, f[i]));
		}
}

/* ensureTolerations: duplicates of a required toleration dropped, the
 * missing ones appended, all others kept. */
static void ensure_tolerations(mg *m, json_t *s, const json_t *req)
{
	json_t *el = json_object_get(s, "tolerations"), *r;
	size_t nr = json_array_size(req), ne = json_array_size(el), i, j;
	unsigned char *found = calloc(nr + 1, 1), *dup = calloc(ne + 1, 1);

	if (found == NULL || dup == NULL) {
		m->oom = 1;
		goto out;
	}
	for (i = 0; i < nr; i++) {
		int already = 0;

		for (j = 0; j < ne; j++)
			if (sem_eq(json_array_get(el, j),
			           json_array_get(req, i))) {
				if (already)
					dup[j] = 1;
				already = 1;
				found[i] = 1;
			}
	}
	for (j = ne; j-- > 0;)
		if (dup[j]) {
			m->modified = 1;
			json_array_remove(el, j);
		}
	json_array_foreach(req, i, r)
	{
		if (found[i])
			continue;
		m->modified = 1;
		if ((el = child_array(m, s, "tolerations")) == NULL ||
		    json_array_append(el, r) < 0)
			m->oom = 1;
	}
out:
	free(found);
	free(dup);
}

/* ensureEnvVar: the list replaced whole when different, after
 * ensureEnvVarSourceFieldRefDefault (fieldRef apiVersion "v1"). */
static void ensure_env(mg *m, json_t *c, const json_t *req)
{
	json_t *d = json_deep_copy(req), *v;
	size_t i;

	if (req != NULL && d == NULL) {
		m->oom = 1;
		return;
	}
	json_array_foreach(d, i, v)
	{
		json_t *fr = json_object_get(json_object_get(v, "valueFrom"),
		                             "fieldRef");

		if (fr != NULL && is_zero(json_object_get(fr, "apiVersion")))
			json_object_set_new(fr, "apiVersion",
			                    json_string("v1"));
	}
	set_sem(m, c, "env", d);
	json_decref(d);
}

/* ensureResourceList on c["resources"][k]: replaced by required's when
 * equality.Semantic tells them apart (quantities by value). */
static void ensure_resource_list(mg *m, json_t *c, const char *k,
                                 const json_t *r)
{
	json_t *res = json_object_get(c, "resources");

	if (sem_eq_k(json_object_get(res, k), r, QK_LIST))
		return;
	m->modified = 1;
	if ((res = child(m, c, "resources")) != NULL)
		put(m, res, k, r);
}

/* ensureContainer. */
static void ensure_container(mg *m, json_t *c, const json_t *r, int hn)
{
	const json_t *rr = json_object_get(r, "resources");

	set_if_set(m, c, "name", json_object_get(r, "name"));
	set_if_set(m, c, "image", json_object_get(r, "image"));
	set_exact(m, c, "command", json_object_get(r, "command"));
	set_exact(m, c, "args", json_object_get(r, "args"));
	ensure_env(m, c, json_object_get(r, "env"));
	set_sem(m, c, "envFrom", json_object_get(r, "envFrom"));
	set_if_set(m, c, "workingDir", json_object_get(r, "workingDir"));
	/* ensureResourceRequirements / ensureResourceList: limits and
	 * requests, each replaced whole when its quantities differ */
	ensure_resource_list(m, c, "limits", json_object_get(rr, "limits"));
	ensure_resource_list(m, c, "requests", json_object_get(rr, "requests"));
	ensure_ports(m, c, "ports", json_object_get(r, "ports"), hn, 0);
	ensure_keyed(m, c, "volumeMounts", json_object_get(r, "volumeMounts"),
	             "mountPath", 0);
	ensure_probe(m, c, "livenessProbe",
	             json_object_get(r, "livenessProbe"));
	ensure_probe(m, c, "readinessProbe",
	             json_object_get(r, "readinessProbe"));
	ensure_security(m, c, json_object_get(r, "securityContext"));
}

/* ensureContainers: matched by name; existing ones without a match
 * removed, required ones without a match appended as they are. */
static void ensure_containers(mg *m, json_t *s, const char *k,
                              const json_t *req, int hn)
{
	json_t *el = json_object_get(s, k), *r, *e;
	size_t i, j;

	for (i = json_array_size(el); i-- > 0;) {
		int found = 0;

		e = json_array_get(el, i);
		json_array_foreach(req, j, r)
		{
			if (str_eq(e, r, "name")) {
				found = 1;
				ensure_container(m, e, r, hn);
				break;
			}
		}
		if (!found) {
			m->modified = 1;
			json_array_remove(el, i);
		}
	}
	json_array_foreach(req, j, r)
	{
		int found = 0;

		json_array_foreach(json_object_get(s, k), i, e)
		{
			if (str_eq(e, r, "name"))
				found = 1;
		}
		if (found)
			continue;
		m->modified = 1;
		if ((el = child_array(m, s, k)) == NULL ||
		    json_array_append_new(el, json_deep_copy(r)) < 0)
			m->oom = 1;
	}
}

/* ensurePodSpec. */
static void ensure_pod_spec(mg *m, json_t *s, const json_t *r)
{
	int hn = json_is_true(json_object_get(r, "hostNetwork"));
	json_t *v;

	ensure_containers(m, s, "initContainers",
	                  json_object_get(r, "initContainers"), hn);
	ensure_containers(m, s, "containers", json_object_get(r, "containers"),
	                  hn);
	ensure_keyed(m, s, "volumes", json_object_get(r, "volumes"), "name", 1);
	set_if_set(m, s, "restartPolicy", json_object_get(r, "restartPolicy"));
	set_exact(m, s, "automountServiceAccountToken",
	          json_object_get(r, "automountServiceAccountToken"));
	set_if_set(m, s, "serviceAccountName",
	           json_object_get(r, "serviceAccountName"));
	set_sem(m, s, "hostNetwork", json_object_get(r, "hostNetwork"));
	set_exact(m, s, "hostUsers", json_object_get(r, "hostUsers"));
	merge_map_into(m, s, "nodeSelector",
	               json_object_get(r, "nodeSelector"));
	ensure_pod_security(m, s, json_object_get(r, "securityContext"));
	ensure_affinity(m, s, json_object_get(r, "affinity"));
	ensure_tolerations(m, s, json_object_get(r, "tolerations"));
	set_if_set(m, s, "priorityClassName",
	           json_object_get(r, "priorityClassName"));
	set_exact(m, s, "priority", json_object_get(r, "priority"));
	set_exact(m, s, "shareProcessNamespace",
	          json_object_get(r, "shareProcessNamespace"));
	/* ensureDNSPolicy: ClusterFirst when the manifest names none */
	v = json_object_get(r, "dnsPolicy");
	v = is_zero(v) ? json_string("ClusterFirst") : json_incref(v);
	set_sem(m, s, "dnsPolicy", v);
	json_decref(v);
	/* ensureTerminationGracePeriod: 30 when the manifest gives none */
	v = json_object_get(r, "terminationGracePeriodSeconds");
	v = v == NULL || json_is_null(v) ? json_integer(30) : json_incref(v);
	set_exact(m, s, "terminationGracePeriodSeconds", v);
	json_decref(v);
}

/* ensurePodTemplateSpec on o[k]. */
static void ensure_template(mg *m, json_t *o, const char *k, const json_t *r)
{
	json_t *t = child(m, o, k), *s;

	if (t == NULL)
		return;
	ensure_meta(m, t, json_object_get(r, "metadata"));
	if ((s = child(m, t, "spec")) != NULL)
		ensure_pod_spec(m, s, json_object_get(r, "spec"));
}

/* EnsureDeployment on spec s. */
static void ensure_deployment(mg *m, json_t *s, const json_t *r)
{
	json_t *v = json_object_get(r, "replicas"), *st, *ru;
	const json_t *sel = json_object_get(r, "selector");
	const char *type;

	/* ensureReplicasDefault */
	v = v == NULL || json_is_null(v) ? json_integer(1) : json_incref(v);
	set_exact(m, s, "replicas", v);
	json_decref(v);
	if ((json_object_get(s, "selector") == NULL && sel != NULL) ||
	    !sem_eq(json_object_get(s, "selector"), sel)) {
		m->modified = 1;
		put(m, s, "selector", sel);
	}
	set_sem(m, s, "paused", json_object_get(r, "paused"));
	set_sem(m, s, "minReadySeconds", json_object_get(r, "minReadySeconds"));
	if (json_object_get(r, "revisionHistoryLimit") != NULL)
		set_sem(m, s, "revisionHistoryLimit",
		        json_object_get(r, "revisionHistoryLimit"));
	if (json_object_get(r, "progressDeadlineSeconds") != NULL)
		set_sem(m, s, "progressDeadlineSeconds",
		        json_object_get(r, "progressDeadlineSeconds"));
	/* ensureStrategyDefault */
	st = json_object_get(r, "strategy");
	st = json_is_object(st) ? json_deep_copy(st) : json_object();
	if (st == NULL) {
		m->oom = 1;
		return;
	}
	type = al_json_str(st, "type");
	if (type == NULL || type[0] == '\0' ||
	    strcmp(type, "RollingUpdate") == 0) {
		json_object_set_new(st, "type", json_string("RollingUpdate"));
		if ((ru = member_object(st, "rollingUpdate")) == NULL ||
		    set_default(ru, "maxUnavailable", json_string("25%")) < 0 ||
		    set_default(ru, "maxSurge", json_string("25%")) < 0)
			m->oom = 1;
	}
	set_sem(m, s, "strategy", st);
	json_decref(st);
	ensure_template(m, s, "template", json_object_get(r, "template"));
}

/* EnsureDaemonSet on spec s. */
static void ensure_daemonset(mg *m, json_t *s, const json_t *r)
{
	const json_t *sel = json_object_get(r, "selector");

	if (json_object_get(s, "selector") == NULL) {
		m->modified = 1;
		put(m, s, "selector", sel);
	}
	set_sem(m, s, "selector", sel);
	ensure_template(m, s, "template", json_object_get(r, "template"));
}

/* ensureJobSpec / ensureJobSpecDefault on spec s. AL_EINVAL for a
 * manifest with spec.selector (the CVO panics on it). */
static int ensure_job_spec(mg *m, json_t *s, const json_t *r)
{
	static const char *const ptrs[] = {
	    "parallelism",  "completions",    "activeDeadlineSeconds",
	    "backoffLimit", "manualSelector", "ttlSecondsAfterFinished",
	    "suspend"};
	json_t *d;
	size_t i;

	if (json_object_get(r, "selector") != NULL)
		return al_error_set(
		    AL_EINVAL,
		    "spec.selector is not supported in Job manifests");
	if ((d = json_is_object(r) ? json_deep_copy(r) : json_object()) ==
	        NULL ||
	    set_default(d, "backoffLimit", json_integer(6)) < 0 ||
	    set_default(d, "completionMode", json_string("NonIndexed")) < 0 ||
	    set_default(d, "suspend", json_false()) < 0) {
		json_decref(d);
		m->oom = 1;
		return 0;
	}
	for (i = 0; i < sizeof(ptrs) / sizeof(ptrs[0]); i++)
		set_exact(m, s, ptrs[i], json_object_get(d, ptrs[i]));
	ensure_template(m, s, "template", json_object_get(d, "template"));
	set_sem(m, s, "completionMode", json_object_get(d, "completionMode"));
	set_sem(m, s, "podFailurePolicy",
	        json_object_get(d, "podFailurePolicy"));
	json_decref(d);
	return 0;
}

/* EnsureCronJob on spec s. */
static int ensure_cronjob(mg *m, json_t *s, const json_t *r)
{
	static const char *const ptrs[] = {"startingDeadlineSeconds", "suspend",
	                                   "successfulJobsHistoryLimit",
	                                   "failedJobsHistoryLimit"};
	json_t *d, *jt, *js;
	size_t i;
	int rc = 0;

	if ((d = json_is_object(r) ? json_deep_copy(r) : json_object()) ==
	        NULL ||
	    set_default(d, "concurrencyPolicy", json_string("Allow")) < 0 ||
	    set_default(d, "failedJobsHistoryLimit", json_integer(1)) < 0 ||
	    set_default(d, "successfulJobsHistoryLimit", json_integer(3)) < 0 ||
	    set_default(d, "suspend", json_false()) < 0) {
		json_decref(d);
		m->oom = 1;
		return 0;
	}
	for (i = 0; i < sizeof(ptrs) / sizeof(ptrs[0]); i++)
		set_exact(m, s, ptrs[i], json_object_get(d, ptrs[i]));
	set_sem(m, s, "schedule", json_object_get(d, "schedule"));
	set_sem(m, s, "timeZone", json_object_get(d, "timeZone"));
	set_sem(m, s, "concurrencyPolicy",
	        json_object_get(d, "concurrencyPolicy"));
	/* ensureJobTemplateSpec */
	if ((jt = child(m, s, "jobTemplate")) != NULL) {
		const json_t *rjt = json_object_get(d, "jobTemplate");

		ensure_meta(m, jt, json_object_get(rjt, "metadata"));
		if ((js = child(m, jt, "spec")) != NULL)
			rc = ensure_job_spec(m, js,
			                     json_object_get(rjt, "spec"));
	}
	json_decref(d);
	return rc;
}

/* EnsureServiceType: ClusterIP when the manifest names none. */
static void ensure_service_type(mg *m, json_t *s, const json_t *r)
{
	json_t *t = is_zero(r) ? json_string("ClusterIP")
	                       : json_incref((json_t *)(uintptr_t)r);

	set_sem(m, s, "type", t);
	json_decref(t);
}

/* ApplyServicev1: EnsureObjectMeta, EnsureServicePorts, EnsureServiceType;
 * the selector is always the manifest's. */
static void ensure_service(mg *m, json_t *s, const json_t *r)
{
	ensure_ports(m, s, "ports", json_object_get(r, "ports"), 0, 1);
	ensure_service_type(m, s, json_object_get(r, "type"));
	set_sem(m, s, "selector", json_object_get(r, "selector"));
}

int al_update_merge_live(json_t *live, const json_t *required,
                         const char *group, const char *kind, int *modified)
{
	const json_t *rs = json_object_get(required, "spec");
	mg m = {0, 0};
	json_t *s;
	int rc = 0;

	*modified = 0;
	if (al_update_merge_kind(group, kind) != AL_UPDATE_MERGE_LIVE)
		return al_error_set(AL_EINVAL,
		                    "no merge on the live object "
		                    "for %s",
		                    kind);
	ensure_meta(&m, live, json_object_get(required, "metadata"));
	if ((s = child(&m, live, "spec")) == NULL)
		goto out;
	if (strcmp(kind, "Deployment") == 0)
		ensure_deployment(&m, s, rs);
	else if (strcmp(kind, "DaemonSet") == 0)
		ensure_daemonset(&m, s, rs);
	else if (strcmp(kind, "Job") == 0)
		rc = ensure_job_spec(&m, s, rs);
	else if (strcmp(kind, "CronJob") == 0)
		rc = ensure_cronjob(&m, s, rs);
	else
		ensure_service(&m, s, rs);
out:
	if (rc < 0)
		return rc;
	if (m.oom)
		return al_error_set(AL_ENOMEM, "out of memory");
	*modified = m.modified;
	return 0;
}

int al_update_merge_part(json_t *parent, const json_t *required,
                         const char *part, int *modified)
{
	mg m = {0, 0};

	*modified = 0;
	if (strcmp(part, "PodSpec") == 0)
		ensure_pod_spec(&m, parent, required);
	else if (strcmp(part, "Tolerations") == 0)
		ensure_tolerations(&m, parent, required);
	else if (strcmp(part, "EnvVar") == 0)
		ensure_env(&m, parent, required);
	else if (strcmp(part, "ServicePorts") == 0)
		ensure_ports(&m, parent, "ports", required, 0, 1);
	else if (strcmp(part, "ServiceType") == 0)
		ensure_service_type(&m, parent, required);
	else
		return al_error_set(AL_EINVAL, "no merge rule '%s'", part);
	if (m.oom)
		return al_error_set(AL_ENOMEM, "out of memory");
	*modified = m.modified;
	return 0;
}

int al_update_merge(json_t **out, const json_t *required, const json_t *live,
                    const char *group, const char *kind)
{
	const json_t *lmd = json_object_get(live, "metadata");
	json_t *obj = json_deep_copy(required), *md;
	int rc = -1;

	*out = NULL;
	if (al_update_merge_kind(group, kind) == AL_UPDATE_MERGE_LIVE) {
		int modified;

		json_decref(obj);
		if (live == NULL) {
			obj = json_deep_copy(required);
		} else {
			obj = json_deep_copy(live);
			if (obj != NULL &&
			    (rc = al_update_merge_live(obj, required, group,
			                               kind, &modified)) < 0) {
				json_decref(obj);
				return rc;
			}
		}
		if (obj == NULL)
			return al_error_set(AL_ENOMEM, "out of memory");
		*out = obj;
		return 0;
	}
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

const char *al_update_proxy_containers(const json_t *obj, const char *group,
                                       const char *kind)
{
	const char *names;

	if (group == NULL || kind == NULL || strcmp(group, "apps") != 0 ||
	    (strcmp(kind, "Deployment") != 0 && strcmp(kind, "DaemonSet") != 0))
		return NULL;
	names = al_json_str(
	    json_object_get(json_object_get(obj, "metadata"), "annotations"),
	    "config.openshift.io/inject-proxy");
	return names != NULL && names[0] != '\0' ? names : NULL;
}

/* Append the three proxy variables to the env of every container of
 * list named name[0..len); 1 when one had that name. */
static int proxy_env(json_t *list, const char *name, size_t len, json_t *vars,
                     int *oom)
{
	json_t *c, *env, *v;
	size_t i, j;
	int found = 0;

	json_array_foreach(list, i, c)
	{
		const char *n = al_json_str(c, "name");

		if (strlen(n != NULL ? n : "") != len ||
		    (len > 0 && strncmp(n, name, len) != 0))
			continue;
		found = 1;
		env = json_object_get(c, "env");
		if (!json_is_array(env)) {
			env = json_array();
			if (env == NULL ||
			    json_object_set_new(c, "env", env) < 0) {
				*oom = 1;
				continue;
			}
		}
		json_array_foreach(vars, j, v)
		{
			if (json_array_append_new(env, json_deep_copy(v)) < 0)
				*oom = 1;
		}
	}
	return found;
}

int al_update_inject_proxy(json_t *obj, const char *names, const json_t *proxy)
{
	const json_t *st = json_object_get(proxy, "status");
	const char *hp = al_json_str(st, "httpProxy");
	const char *hsp = al_json_str(st, "httpsProxy");
	const char *np = al_json_str(st, "noProxy");
	json_t *spec = json_object_get(
	    json_object_get(json_object_get(obj, "spec"), "template"), "spec");
	json_t *vars;
	const char *p = names;
	int oom = 0, rc = 0;

	hp = hp != NULL ? hp : "";
	hsp = hsp != NULL ? hsp : "";
	np = np != NULL ? np : "";
	/* hasProxy: nothing to inject, and no container is looked for */
	if (hp[0] == '\0' && hsp[0] == '\0' && np[0] == '\0')
		return 0;
	vars = json_pack("[{s:s,s:s},{s:s,s:s},{s:s,s:s}]", "name",
	                 "HTTP_PROXY", "value", hp, "name", "HTTPS_PROXY",
	                 "value", hsp, "name", "NO_PROXY", "value", np);
	if (vars == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	/* strings.Split(names, ","): every piece, empty ones included */
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);
		int found = 0;

		found |= proxy_env(json_object_get(spec, "containers"), p, len,
		                   vars, &oom);
		found |= proxy_env(json_object_get(spec, "initContainers"), p,
		                   len, vars, &oom);
		if (!found) {
			rc = al_error_set(
			    AL_EINVAL,
			    "requested injection for non-existent container: "
			    "\"%.*s\"",
			    (int)len, p);
			break;
		}
		if (comma == NULL)
			break;
		p = comma + 1;
	}
	json_decref(vars);
	if (rc == 0 && oom)
		rc = al_error_set(AL_ENOMEM, "out of memory");
	return rc;
}

int al_update_is_cvo_deployment(const json_t *obj, const char *group,
                                const char *kind)
{
	const json_t *md = json_object_get(obj, "metadata");
	const char *ns = al_json_str(md, "namespace"),
	           *name = al_json_str(md, "name");

	return group != NULL && kind != NULL && strcmp(group, "apps") == 0 &&
	       strcmp(kind, "Deployment") == 0 && ns != NULL && name != NULL &&
	       strcmp(ns, AL_UPDATE_CVO_NAMESPACE) == 0 &&
	       strcmp(name, AL_UPDATE_CVO_NAME) == 0;
}

int al_update_split_lb_url(const char *url, char *host, size_t hcap, char *port,
                           size_t pcap)
{
	const char *p = strchr(url != NULL ? url : "", ':'), *a, *e, *at, *c;
	size_t alen, hlen;

	host[0] = port[0] = '\0';
	/* url.Parse: the authority follows "scheme://" up to / ? or # */
	if (p == NULL || strncmp(p, "://", 3) != 0)
		return 0;
	a = p + 3;
	alen = strcspn(a, "/?#");
	e = a + alen;
	for (at = e; at > a && at[-1] != '@'; at--)
		;
	a = at;
	alen = (size_t)(e - a);
	/* net.SplitHostPort; "missing port in address": the whole host */
	if (alen > 0 && a[0] == '[') {
		const char *rb = memchr(a, ']', alen);

		if (rb == NULL)
			return al_error_set(
			    AL_EINVAL, "address %.*s: missing ']' in address",
			    (int)alen, a);
		if (rb + 1 == e) {
			hlen = alen;
		} else if (rb[1] == ':') {
			hlen = (size_t)(rb - a - 1);
			a++;
			c = rb + 1;
			goto port;
		} else {
			return al_error_set(
			    AL_EINVAL,
			    "address %.*s: unexpected ']' in address",
			    (int)alen, a);
		}
	} else {
		c = NULL;
		for (p = a; p < e; p++)
			if (*p == ':') {
				if (c != NULL)
					return al_error_set(
					    AL_EINVAL,
					    "address %.*s: too many colons in "
					    "address",
					    (int)alen, a);
				c = p;
			}
		if (c != NULL) {
			hlen = (size_t)(c - a);
			goto port;
		}
		hlen = alen;
	}
	if (hlen >= hcap)
		return al_error_set(AL_ELIMIT, "internal API URL too long");
	memcpy(host, a, hlen);
	host[hlen] = '\0';
	return 0;
port:
	if (hlen >= hcap || (size_t)(e - c - 1) >= pcap)
		return al_error_set(AL_ELIMIT, "internal API URL too long");
	memcpy(host, a, hlen);
	host[hlen] = '\0';
	memcpy(port, c + 1, (size_t)(e - c - 1));
	port[e - c - 1] = '\0';
	return 0;
}

/* setKubeServiceValue on one container's env: the two variables replaced
 * where present, else appended (the port first). */
static int kube_service_env(json_t *c, const char *host, const char *port)
{
	json_t *env = json_object_get(c, "env"), *v;
	size_t i;
	int found_port = 0, found_host = 0;

	if (!json_is_array(env)) {
		env = json_array();
		if (env == NULL || json_object_set_new(c, "env", env) < 0)
			return -1;
	}
	json_array_foreach(env, i, v)
	{
		const char *n = al_json_str(v, "name");

		if (n != NULL && strcmp(n, "KUBERNETES_SERVICE_PORT") == 0) {
			found_port = 1;
			if (json_object_set_new(v, "value", json_string(port)) <
			    0)
				return -1;
		}
		if (n != NULL && strcmp(n, "KUBERNETES_SERVICE_HOST") == 0) {
			found_host = 1;
			if (json_object_set_new(v, "value", json_string(host)) <
			    0)
				return -1;
		}
	}
	if (!found_port &&
	    json_array_append_new(env, json_pack("{s:s,s:s}", "name",
	                                         "KUBERNETES_SERVICE_PORT",
	                                         "value", port)) < 0)
		return -1;
	if (!found_host &&
	    json_array_append_new(env, json_pack("{s:s,s:s}", "name",
	                                         "KUBERNETES_SERVICE_HOST",
	                                         "value", host)) < 0)
		return -1;
	return 0;
}

int al_update_kube_service(json_t *spec, const char *names, const char *host,
                           const char *port)
{
	static const char *const lists[] = {"containers", "initContainers"};
	const char *p = names;
	json_t *c;
	size_t i, j;

	if (host == NULL || host[0] == '\0')
		return 0;
	if (port == NULL || port[0] == '\0')
		port = "443";
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);
		int found = 0;

		for (j = 0; j < 2; j++)
			json_array_foreach(json_object_get(spec, lists[j]), i,
			                   c)
			{
				const char *n = al_json_str(c, "name");

				if (strlen(n != NULL ? n : "") != len ||
				    (len > 0 && strncmp(n, p, len) != 0))
					continue;
				found = 1;
				if (kube_service_env(c, host, port) < 0)
					return al_error_set(AL_ENOMEM,
					                    "out of memory");
			}
		if (!found)
			return al_error_set(
			    AL_EINVAL,
			    "requested injection for non-existent container: "
			    "\"%.*s\"",
			    (int)len, p);
		if (comma == NULL)
			return 0;
		p = comma + 1;
	}
}
