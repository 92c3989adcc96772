/* update_precond.c: the Cluster Version Operator's update preconditions
 * (Upgradeable, Rollback, GiantHop, admin acks) and the architecture of
 * the update graph it asks for, pure. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "airlock/update.h"
#include "update_int.h"
#include "version_int.h"
#include "airlock/buf.h"
#include "airlock/error.h"
#include "json_int.h"

/* blang/semver Parse, which the CVO compares versions with
 * (version_int.h: the library's one parser). */
static int semver_parse(const char *s, al_semver *v)
{
	if (s == NULL)
		return -1;
	return al_semver_parse(v, s, strlen(s), AL_SEMVER_BLANG);
}

int al_update_semver_cmp(const char *a, const char *b, int *cmp)
{
	al_semver va, vb;

	if (semver_parse(a, &va) < 0)
		return al_error_set(AL_EPARSE, "'%s' is not a semantic version",
		                    a != NULL ? a : "");
	if (semver_parse(b, &vb) < 0)
		return al_error_set(AL_EPARSE, "'%s' is not a semantic version",
		                    b != NULL ? b : "");
	*cmp = al_semver_cmp(&va, &vb);
	return 0;
}

/* The major.minor of a gate key "ack-M.m-..." (adminAckGateFmt); -1
 * when the key has another format or M.m.0 is no version. */
static int gate_version(const char *key, al_semver *v)
{
	const char *p = key + 4, *q;
	char vs[64];
	int w;

	if (strncmp(key, "ack-", 4) != 0 || (p[0] != '4' && p[0] != '5') ||
	    p[1] != '.')
		return -1;
	for (q = p + 2; *q >= '0' && *q <= '9'; q++)
		;
	if (q == p + 2 || q[0] != '-' || q[1] == '\0' || q[1] == '-')
		return -1;
	w = snprintf(vs, sizeof(vs), "%.*s.0", (int)(q - p), p);
	if (w < 0 || (size_t)w >= sizeof(vs))
		return -1;
	return al_semver_parse(v, vs, (size_t)w, AL_SEMVER_BLANG);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const al_update_blocker *)a)->name,
	              ((const al_update_blocker *)b)->name);
}

void al_update_admin_ack_blockers(const char *current, const json_t *gates,
                                  const json_t *acks, al_update_blocker *bl,
                                  size_t *nb)
{
	const char *key;
	json_t *val;
	al_semver cur, gv;
	size_t first = *nb;

	if (semver_parse(current, &cur) < 0 || !json_is_object(gates))
		return;
	json_object_foreach((json_t *)(uintptr_t)gates, key, val)
	{
		const char *text = json_string_value(val);
		const char *ack = al_json_str(acks, key);
		al_update_blocker *b = &bl[*nb];

		b->kind = "AdminAck";
		b->name = key;
		b->message = text != NULL ? text : "";
		if (gate_version(key, &gv) < 0) {
			b->reason = "AdminAckGateInvalid";
		} else if (gv.major != cur.major || gv.minor != cur.minor) {
			continue;
		} else if (text == NULL || text[0] == '\0') {
			b->reason = "AdminAckGateEmpty";
		} else if (ack != NULL && strcmp(ack, "true") == 0) {
			continue;
		} else {
			b->reason = "AdminAckRequired";
		}
		(*nb)++;
	}
	if (*nb - first > 1)
		qsort(bl + first, *nb - first, sizeof(*bl), by_name);
}

static int add_failure(al_buf *b, int *n, const char *name, const char *reason,
                       const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* One failed check, in precondition.Summarize's words. */
static int add_failure(al_buf *b, int *n, const char *name, const char *reason,
                       const char *fmt, ...)
{
	char m[1024];
	va_list ap;
	int w;

	va_start(ap, fmt);
	w = vsnprintf(m, sizeof(m), fmt, ap);
	va_end(ap);
	if (w < 0)
		m[0] = '\0';
	(*n)++;
	return al_buf_printf(b,
	                     "\n* Precondition \"%s\" failed because of "
	                     "\"%s\": %s",
	                     name, reason, m);
}

/* An unacknowledged gate, in checkAdminGate's words, and what to run. */
static int admin_ack_failure(al_buf *b, int *n, const al_update_blocker *g)
{
	if (strcmp(g->reason, "AdminAckGateInvalid") == 0)
		return add_failure(b, n, "ClusterVersionUpgradeable", g->reason,
		                   "admin-gates configmap gate %s has invalid "
		                   "format; must comply with "
		                   "\"^ack-([4-5][.][0-9]{1,})-[^-]\"",
		                   g->name);
	if (strcmp(g->reason, "AdminAckGateEmpty") == 0)
		return add_failure(b, n, "ClusterVersionUpgradeable", g->reason,
		                   "admin-gates configmap gate %s must contain "
		                   "a non-empty value.",
		                   g->name);
	return add_failure(b, n, "ClusterVersionUpgradeable", g->reason,
	                   "%s (gate %s of openshift-config-managed/"
	                   "admin-gates; acknowledge with: oc -n "
	                   "openshift-config patch configmap admin-acks "
	                   "--type=merge --patch "
	                   "'{\"data\":{\"%s\":\"true\"}}')",
	                   g->message, g->name, g->name);
}

int al_update_check_preconditions(const char *current, const char *target,
                                  const al_update_blocker *bl, size_t nb,
                                  char **msg)
{
	al_buf b = AL_BUF_INIT(64 * 1024);
	al_semver cur, tgt;
	int n = 0, rc = 0;
	size_t i;

	*msg = NULL;
	if (current == NULL || current[0] == '\0' ||
	    semver_parse(current, &cur) < 0)
		return 0;
	if (semver_parse(target, &tgt) < 0) {
		rc = add_failure(&b, &n, "ClusterVersionUpgradeable",
		                 "InvalidDesiredVersion",
		                 "'%s' is not a semantic version",
		                 target != NULL ? target : "");
		goto done;
	}
	/* upgradeable.go: only moving to another minor (or major) is
	 * blocked; a patch update, or not moving forward, passes. */
	if (al_semver_cmp(&tgt, &cur) > 0 &&
	    (tgt.major != cur.major || tgt.minor != cur.minor)) {
		for (i = 0; i < nb && rc == 0; i++) {
			const char *r = bl[i].reason != NULL && bl[i].reason[0]
			                    ? bl[i].reason
			                    : "Unknown";
			const char *m =
			    bl[i].message != NULL ? bl[i].message : "";

			if (strcmp(bl[i].kind, "AdminAck") == 0)
				rc = admin_ack_failure(&b, &n, &bl[i]);
			else if (strcmp(bl[i].kind, "Overrides") == 0)
				rc = add_failure(
				    &b, &n, "ClusterVersionUpgradeable", r,
				    "Disabling ownership via cluster version "
				    "overrides prevents upgrades between minor "
				    "or major versions. Please remove "
				    "overrides "
				    "before requesting a minor or major "
				    "version "
				    "update.");
			else if (strcmp(bl[i].kind, "ClusterOperator") == 0)
				rc = add_failure(
				    &b, &n, "ClusterVersionUpgradeable",
				    "ClusterOperatorNotUpgradeable",
				    "Cluster operator %s should not be "
				    "upgraded "
				    "between minor versions: Upgradeable=False "
				    "(%s): %s",
				    bl[i].name, r, m);
			else
				rc = add_failure(
				    &b, &n, "ClusterVersionUpgradeable", r,
				    "%s %s says Upgradeable=False: %s",
				    bl[i].kind, bl[i].name, m);
		}
	}
	/* rollback.go (stricter: see al_update_check_preconditions) */
	if (rc == 0 && al_semver_cmp(&tgt, &cur) < 0)
		rc = add_failure(
		    &b, &n, "ClusterVersionRollback", "LowDesiredVersion",
		    "%s is less than the current target %s, and "
		    "airlock refuses every downgrade unless forced",
		    target, current);
	/* gianthop.go */
	if (rc == 0 && tgt.major > cur.major &&
	    !(tgt.major == 5 && cur.major == 4 && tgt.minor == 0))
		rc = add_failure(
		    &b, &n, "ClusterVersionGiantHop", "MajorVersionUpdate",
		    "%s has a larger major version than the current "
		    "target %s (%" PRIu64 " > %" PRIu64
		    "), and only updates within "
		    "the current major version are supported.",
		    target, current, tgt.major, cur.major);
	else if (rc == 0 && tgt.major == cur.major && tgt.minor > cur.minor + 1)
		rc = add_failure(
		    &b, &n, "ClusterVersionGiantHop",
		    "MultipleMinorVersionsUpdate",
		    "%s is more than one minor version beyond the current "
		    "target %s (%" PRIu64 ".%" PRIu64 " > %" PRIu64 ".(%" PRIu64
		    "+1)), and only updates "
		    "within "
		    "the current minor version or to the next minor version "
		    "are supported.",
		    target, current, tgt.major, tgt.minor, cur.major,
		    cur.minor);
done:
	if (rc < 0) {
		al_buf_free(&b);
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	if (n == 0) {
		al_buf_free(&b);
		return 0;
	}
	if (n == 1)
		*msg = al_strdup(al_buf_cstr(&b) + 3); /* "\n* " */
	else
		*msg = al_sprintf("Multiple precondition checks failed:%s",
		                  al_buf_cstr(&b));
	al_buf_free(&b);
	if (*msg == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	return n;
}

int al_update_release_multi(const uint8_t *meta, size_t len)
{
	json_t *j =
	    meta != NULL ? json_loadb((const char *)meta, len, 0, NULL) : NULL;
	const char *a = al_json_str(json_object_get(j, "metadata"),
	                            "release.openshift.io/architecture");
	int multi = a != NULL && strcmp(a, "multi") == 0;

	json_decref(j);
	return multi;
}

const char *al_update_graph_arch(const json_t *cv, int target_multi,
                                 const char *cluster_arch, int *migrating)
{
	const char *cur_a = al_json_str(
	               json_object_get(json_object_get(cv, "status"),
	                               "desired"),
	               "architecture"),
	           *want_a =
	               al_json_str(json_object_get(json_object_get(cv, "spec"),
	                                           "desiredUpdate"),
	                           "architecture");
	const char *current, *desired;

	/* getCurrentArchitecture: the running payload's, else GOARCH */
	current = cur_a != NULL && strcmp(cur_a, "Multi") == 0 ? "multi"
	                                                       : cluster_arch;
	/* getDesiredArchitecture: spec.desiredUpdate.architecture, else
	 * the current one; a multi payload asked for by digest moves the
	 * cluster to multi as that would */
	desired = want_a != NULL && strcmp(want_a, "Multi") == 0 ? "multi"
	          : target_multi                                 ? "multi"
	                                                         : current;
	*migrating =
	    strcmp(desired, "multi") == 0 && strcmp(current, "multi") != 0;
	return desired;
}
