/* update.c: one update run: target resolution, acceptance (signatures),
 * persisted state and status, parallel apply by run level. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "airlock/update.h"
#include "update_int.h"
#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "json_int.h"
#include "kube_int.h"
#include "airlock/log.h"
#include "airlock/sig.h"
#include "airlock/ref.h"
#include "airlock/registry.h"
#include "airlock/graph.h"
#include "error_int.h"

#define DEFAULT_SIG_TIMEOUT_MS 30000
#define DEFAULT_SYNC_TIMEOUT_MS (40 * 60 * 1000)
#define DEFAULT_PARALLEL 8
#define DEFAULT_POLL_MS 500
#define STATUS_WRITE_MS                                                        \
	30000 /* each status write has its own bound, never the sync budget */
#define MAX_ERRORS_KEPT 8
#define SIG_CONFIGMAP_NS "openshift-config-managed"
#define SIG_CONFIGMAP_LABEL "release.openshift.io/verification-signatures"
/* The cluster's own record and updater (docs/updater.md, "The record"). */
#define CV_API "config.openshift.io/v1"
#define CV_KIND "ClusterVersion"
#define CV_NAME "version"
#define CVO_NAMESPACE "openshift-cluster-version"
#define CVO_DEPLOYMENT "cluster-version-operator"
#define CV_MAX_HISTORY 100
#define ADMIN_GATES_NS "openshift-config-managed"
#define ADMIN_GATES_NAME "admin-gates"
#define ADMIN_ACKS_NS "openshift-config"
#define ADMIN_ACKS_NAME "admin-acks"

/* --- the persisted decision record -------------------------------------- */

/* What decides the next run. Conditions and messages are never read back. */
typedef struct record {
	al_update_state state;
	char *version; /* desired release */
	char *digest;
	char *image;
	json_t *history; /* array, newest first: {version, image, digest, state,
	                    started, completed, verified} */
} record;

static void record_clear(record *r)
{
	free(r->version);
	free(r->digest);
	free(r->image);
	json_decref(r->history);
	memset(r, 0, sizeof(*r));
}

static int parse_state_name(const char *s, al_update_state *out)
{
	al_update_state st;

	for (st = AL_UPDATE_INITIALIZING; st <= AL_UPDATE_RECONCILING; st++)
		if (s != NULL && strcmp(s, al_update_state_name(st)) == 0) {
			*out = st;
			return 0;
		}
	return -1;
}

/* Read the decision fields of a state document (a state file or a status). */
static int record_from_json(record *r, const json_t *v, const char *what)
{
	const json_t *d = json_object_get(v, "desired"),
	             *h = json_object_get(v, "history");
	size_t i;
	json_t *e;

	memset(r, 0, sizeof(*r));
	if (!json_is_object(v) ||
	    parse_state_name(al_json_str(v, "state"), &r->state) < 0)
		return al_error_set(AL_EPARSE, "%s: no valid \"state\"", what);
	if (h != NULL && !json_is_array(h))
		return al_error_set(AL_EPARSE, "%s: \"history\" is not a list",
		                    what);
	json_array_foreach(h, i, e)
	{
		const char *hs = al_json_str(e, "state");

		if (!json_is_object(e) || al_json_str(e, "digest") == NULL ||
		    hs == NULL ||
		    (strcmp(hs, "Partial") != 0 &&
		     strcmp(hs, "Completed") != 0))
			return al_error_set(
			    AL_EPARSE, "%s: history entry %zu is not valid",
			    what, i + 1);
	}
	if (r->state != AL_UPDATE_INITIALIZING &&
	    al_json_str(d, "digest") == NULL)
		return al_error_set(AL_EPARSE,
		                    "%s: state %s without a desired release",
		                    what, al_update_state_name(r->state));
	r->history = h != NULL ? json_deep_copy(h) : json_array();
	r->version = al_strdup(al_json_str(d, "version"));
	r->digest = al_strdup(al_json_str(d, "digest"));
	r->image = al_strdup(al_json_str(d, "image"));
	if (r->history == NULL) {
		record_clear(r);
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	return 0;
}

static json_t *desired_json(const record *r)
{
	json_t *d = json_object();

	if (d == NULL)
		return NULL;
	if (r->version != NULL)
		json_object_set_new(d, "version", json_string(r->version));
	if (r->image != NULL)
		json_object_set_new(d, "image", json_string(r->image));
	if (r->digest != NULL)
		json_object_set_new(d, "digest", json_string(r->digest));
	return d;
}

/* What a run reports: computed from the record and the run, never read back. */
typedef struct report {
	int accepted;
	int verified;
	const char *accept_reason;
	const char *accept_message;
	const char *cvo_accept_reason; /* ReleaseAccepted reason as the CVO
	                                  words it (PayloadLoaded, ...) */
	int failing;
	const char *fail_message;
	const char *fail_reason; /* the CVO's reason (NULL: UpdateFailed) */
	size_t applied;
	size_t total;
	const char *upgradeable_reason; /* NULL: upgradeable */
	const char *upgradeable_message;
} report;

static json_t *condition(const char *type, int status, const char *reason,
                         const char *msg, const char *now)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", type, "status",
	                 status ? "True" : "False", "reason", reason, "message",
	                 msg != NULL ? msg : "", "lastTransitionTime", now);
}

static int any_completed(const record *r)
{
	size_t i;
	json_t *e;

	json_array_foreach(r->history, i, e)
	{
		if (strcmp(al_json_str(e, "state"), "Completed") == 0)
			return 1;
	}
	return 0;
}

/* The status object's "status" (and the state file): record + report. */
static json_t *status_json(const record *r, const report *rp)
{
	json_t *st = NULL, *conds = NULL;
	char now[32], *prog = NULL;
	const char *cur = NULL;
	size_t i;
	json_t *e;

	al_clock_rfc3339(now, al_clock_wall_ms());
	json_array_foreach(r->history, i, e)
	{
		if (strcmp(al_json_str(e, "state"), "Completed") == 0) {
			cur = al_json_str(e, "version");
			break;
		}
	}
	if (r->state == AL_UPDATE_UPDATING)
		prog = al_sprintf("Working towards %s: applied %zu of %zu",
		                  r->version ? r->version : "?", rp->applied,
		                  rp->total);
	else if (r->state == AL_UPDATE_RECONCILING)
		prog = al_sprintf("Cluster version is %s",
		                  r->version ? r->version : "?");
	else
		prog = al_sprintf("Initializing");
	conds = json_array();
	st = json_object();
	if (prog == NULL || conds == NULL || st == NULL)
		goto fail;
	json_array_append_new(
	    conds,
	    condition("Available", any_completed(r),
	              any_completed(r) ? "Completed" : "NoCompletedUpdate",
	              cur != NULL ? cur : "no update has completed", now));
	json_array_append_new(
	    conds, condition("Progressing", r->state == AL_UPDATE_UPDATING,
	                     r->state == AL_UPDATE_UPDATING ? "Updating"
	                                                    : "AsExpected",
	                     prog, now));
	json_array_append_new(
	    conds, condition("Failing", rp->failing,
	                     rp->failing ? "UpdateFailed" : "AsExpected",
	                     rp->fail_message, now));
	json_array_append_new(conds, condition("ReleaseAccepted", rp->accepted,
	                                       rp->accept_reason,
	                                       rp->accept_message, now));
	json_array_append_new(conds, condition("Upgradeable",
	                                       rp->upgradeable_reason == NULL,
	                                       rp->upgradeable_reason != NULL
	                                           ? rp->upgradeable_reason
	                                           : "AsExpected",
	                                       rp->upgradeable_message, now));
	json_object_set_new(st, "state",
	                    json_string(al_update_state_name(r->state)));
	json_object_set_new(st, "desired", desired_json(r));
	json_object_set(st, "history", r->history);
	json_object_set_new(st, "conditions", conds);
	json_object_set_new(st, "progress",
	                    json_pack("{s:I, s:I}", "applied",
	                              (json_int_t)rp->applied, "total",
	                              (json_int_t)rp->total));
	json_object_set_new(st, "lastUpdateTime", json_string(now));
	free(prog);
	return st;
fail:
	free(prog);
	json_decref(conds);
	json_decref(st);
	return NULL;
}

/* --- a run's context ----------------------------------------------------- */

typedef struct run {
	const al_update_opts *o;
	al_update_result *res;
	pthread_mutex_t mu;
	int crd_done;
	/* apply */
	const al_update_graph *g;
	al_update_mode mode;
	al_deadline dl;
	size_t *order;
	size_t norder;
	size_t next;
	size_t applied;
	int first_rc;
	int level_failed;
	char *errors[MAX_ERRORS_KEPT];
	const char *reasons[MAX_ERRORS_KEPT]; /* al_update_failure_reason */
	size_t nerrors;
	/* ownership and the cluster's record */
	al_update_lease *lease;
	int cv_owner;    /* airlock writes ClusterVersion status */
	json_t *cv_live; /* ClusterVersion "version" as last read or written */
	int no_cluster_writes; /* the lease was lost: the cluster is not ours */
	/* capabilities this update enabled implicitly (borrowed from the
	 * filters), added to status.capabilities.enabledCapabilities */
	char *const *implicit;
	size_t nimplicit;
} run;

static void emit(run *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void emit(run *r, const char *fmt, ...)
{
	char line[2048];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	al_log_debug("update: %s", line);
	if (r->o->event == NULL)
		return;
	pthread_mutex_lock(&r->mu);
	r->o->event(r->o->ud, line);
	pthread_mutex_unlock(&r->mu);
}

static const char crd_json[] =
    "{\"apiVersion\":\"apiextensions.k8s.io/"
    "v1\",\"kind\":\"CustomResourceDefinition\","
    "\"metadata\":{\"name\":\"clusterupdates.airlock.io\"},"
    "\"spec\":{\"group\":\"airlock.io\",\"scope\":\"Cluster\","
    "\"names\":{\"kind\":\"ClusterUpdate\",\"listKind\":\"ClusterUpdateList\","
    "\"plural\":\"clusterupdates\",\"singular\":\"clusterupdate\"},"
    "\"versions\":[{\"name\":\"v1alpha1\",\"served\":true,\"storage\":true,"
    "\"subresources\":{\"status\":{}},\"schema\":{\"openAPIV3Schema\":"
    "{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true}}}]}}";

/* --- the ClusterVersion status (what oc get clusterversion reads) -------- */

/* lastTransitionTime kept while the status stays the same, as the CVO's
 * resourcemerge.SetOperatorStatusCondition does. */
static json_t *cv_condition(const run *r, const char *type, const char *status,
                            const char *reason, const char *msg,
                            const char *now)
{
	const char *since = now;
	size_t i;
	json_t *c;

	json_array_foreach(
	    json_object_get(json_object_get(r->cv_live, "status"),
	                    "conditions"),
	    i, c)
	{
		const char *t = al_json_str(c, "type"),
		           *st = al_json_str(c, "status");

		if (t != NULL && strcmp(t, type) == 0 && st != NULL &&
		    strcmp(st, status) == 0 &&
		    al_json_str(c, "lastTransitionTime") != NULL)
			since = al_json_str(c, "lastTransitionTime");
	}
	return json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", type, "status",
	                 status, "reason", reason, "message",
	                 msg != NULL ? msg : "", "lastTransitionTime", since);
}

/* One record history entry as configv1.UpdateHistory. */
static json_t *cv_history_entry(const json_t *e)
{
	json_t *h = json_object();
	const char *risks = al_json_str(e, "acceptedRisks");

	if (h == NULL)
		return NULL;
	json_object_set_new(h, "state", json_string(al_json_str(e, "state")));
	json_object_set_new(h, "startedTime",
	                    json_string(al_json_str(e, "started") != NULL
	                                    ? al_json_str(e, "started")
	                                    : "1970-01-01T00:00:00Z"));
	json_object_set_new(h, "completionTime",
	                    al_json_str(e, "completed") != NULL
	                        ? json_string(al_json_str(e, "completed"))
	                        : json_null());
	json_object_set_new(h, "version",
	                    json_string(al_json_str(e, "version") != NULL
	                                    ? al_json_str(e, "version")
	                                    : ""));
	json_object_set_new(h, "image",
	                    json_string(al_json_str(e, "image") != NULL
	                                    ? al_json_str(e, "image")
	                                    : ""));
	json_object_set_new(
	    h, "verified",
	    json_boolean(json_is_true(json_object_get(e, "verified"))));
	if (risks != NULL && risks[0] != '\0')
		json_object_set_new(h, "acceptedRisks", json_string(risks));
	return h;
}

/* The ClusterVersion status from the record and the report (as the CVO's
 * syncStatus / mergeOperatorHistory shape it): airlock's history first,
 * then the entries the cluster had from before airlock (other images). */
static const json_t *find_cond(const json_t *live, const char *type);

/* status.capabilities.enabledCapabilities: what the cluster had, plus the
 * capabilities this update enabled implicitly (the CVO records them there,
 * and a capability once enabled stays enabled). */
static int implicit_status(const run *r, json_t *st)
{
	const json_t *had = json_object_get(
	    json_object_get(json_object_get(r->cv_live, "status"),
	                    "capabilities"),
	    "enabledCapabilities");
	json_t *caps = json_object(), *en = json_array(), *x;
	size_t i, j;

	if (caps == NULL || en == NULL ||
	    json_object_set_new(st, "capabilities", caps) < 0 ||
	    json_object_set_new(caps, "enabledCapabilities", en) < 0)
		return -1;
	json_array_foreach(had, i, x)
	{
		if (json_is_string(x) && json_array_append(en, x) < 0)
			return -1;
	}
	for (i = 0; i < r->nimplicit; i++) {
		int dup = 0;

		json_array_foreach(en, j, x)
		{
			if (strcmp(json_string_value(x), r->implicit[i]) == 0)
				dup = 1;
		}
		if (!dup &&
		    json_array_append_new(en, json_string(r->implicit[i])) < 0)
			return -1;
	}
	return 0;
}

static json_t *cv_status_json(const run *r, const record *rec, const report *rp)
{
	const json_t *live_st = json_object_get(r->cv_live, "status");
	json_t *st = json_object(), *hist = json_array(), *conds = json_array(),
	       *e;
	const char *cur = NULL, *desired_v = rec->version,
	           *desired_i = rec->image, *fr;
	char now[32], *prog = NULL, *avail = NULL;
	size_t i, j;

	if (st == NULL || hist == NULL || conds == NULL)
		goto fail;
	al_clock_rfc3339(now, al_clock_wall_ms());
	json_array_foreach(rec->history, i, e)
	{
		if (json_array_size(hist) >= CV_MAX_HISTORY ||
		    json_array_append_new(hist, cv_history_entry(e)) < 0)
			break;
		if (cur == NULL &&
		    strcmp(al_json_str(e, "state"), "Completed") == 0)
			cur = al_json_str(e, "version");
	}
	json_array_foreach(json_object_get(live_st, "history"), i, e)
	{
		const char *img = al_json_str(e, "image");
		int ours = 0;
		json_t *m;

		json_array_foreach(rec->history, j, m)
		{
			if (img != NULL && al_json_str(m, "image") != NULL &&
			    strcmp(img, al_json_str(m, "image")) == 0)
				ours = 1;
		}
		if (ours || json_array_size(hist) >= CV_MAX_HISTORY)
			continue;
		json_array_append(hist, e);
		if (cur == NULL && al_json_str(e, "state") != NULL &&
		    strcmp(al_json_str(e, "state"), "Completed") == 0)
			cur = al_json_str(e, "version");
	}
	if (desired_v == NULL) {
		const json_t *d = json_object_get(live_st, "desired");

		desired_v = al_json_str(d, "version");
		desired_i = al_json_str(d, "image");
	}
	json_object_set_new(st, "desired",
	                    json_pack("{s:s, s:s}", "version",
	                              desired_v != NULL ? desired_v : "",
	                              "image",
	                              desired_i != NULL ? desired_i : ""));
	json_object_set_new(st, "history", hist);
	hist = NULL;
	json_object_set_new(
	    st, "observedGeneration",
	    json_integer(json_integer_value(json_object_get(
	        json_object_get(r->cv_live, "metadata"), "generation"))));
	json_object_set_new(st, "versionHash",
	                    json_string(rec->digest != NULL
	                                    ? rec->digest + strlen("sha256:")
	                                    : ""));
	if (json_object_get(live_st, "availableUpdates") == NULL)
		json_object_set_new(st, "availableUpdates", json_null());
	if (rec->state == AL_UPDATE_UPDATING)
		prog = al_sprintf(
		    "Working towards %s: %zu of %zu done (%zu%% complete)",
		    desired_v != NULL ? desired_v : "?", rp->applied, rp->total,
		    rp->total ? rp->applied * 100 / rp->total : 0);
	else
		prog = al_sprintf("Cluster version is %s",
		                  cur != NULL ? cur : "unknown");
	avail = cur != NULL ? al_sprintf("Done applying %s", cur) : NULL;
	if (prog == NULL || (cur != NULL && avail == NULL))
		goto fail;
	json_array_append_new(
	    conds,
	    cv_condition(r, "Available", cur != NULL ? "True" : "False",
	                 cur != NULL ? "" : "NoCompletedUpdate", avail, now));
	fr = rp->fail_reason != NULL ? rp->fail_reason : "UpdateFailed";
	json_array_append_new(
	    conds, cv_condition(r, "Failing", rp->failing ? "True" : "False",
	                        rp->failing ? fr : "", rp->fail_message, now));
	json_array_append_new(
	    conds,
	    cv_condition(r, "Progressing",
	                 rec->state == AL_UPDATE_UPDATING ? "True" : "False",
	                 rec->state == AL_UPDATE_UPDATING && rp->failing ? fr
	                                                                 : "",
	                 prog, now));
	json_array_append_new(
	    conds,
	    cv_condition(r, "ReleaseAccepted", rp->accepted ? "True" : "False",
	                 rp->cvo_accept_reason != NULL ? rp->cvo_accept_reason
	                                               : "PayloadLoaded",
	                 rp->accept_message, now));
	json_array_append_new(
	    conds,
	    cv_condition(r, "Upgradeable",
	                 rp->upgradeable_reason != NULL ? "False" : "True",
	                 rp->upgradeable_reason != NULL ? rp->upgradeable_reason
	                                                : "AsExpected",
	                 rp->upgradeable_message, now));
	/* status.go: RetrievedUpdates=False when nothing else set it (airlock
	 * retrieves no updates; one written by someone else stays) */
	if (find_cond(r->cv_live, "RetrievedUpdates") == NULL)
		json_array_append_new(
		    conds,
		    cv_condition(r, "RetrievedUpdates", "False", "", "", now));
	else
		json_array_append_new(
		    conds,
		    json_deep_copy(find_cond(r->cv_live, "RetrievedUpdates")));
	json_object_set_new(st, "conditions", conds);
	if (r->nimplicit > 0 && implicit_status(r, st) < 0)
		goto fail_conds_set;
	free(prog);
	free(avail);
	return st;
fail_conds_set:
	free(prog);
	free(avail);
	json_decref(hist);
	json_decref(st);
	return NULL;
fail:
	free(prog);
	free(avail);
	json_decref(hist);
	json_decref(conds);
	json_decref(st);
	return NULL;
}

/* Write the ClusterVersion status. The object itself is the installer's
 * (its spec.clusterID names the cluster): airlock never creates it. */
static int save_cluster_version(run *r, const record *rec, const report *rp,
                                al_deadline dl)
{
	al_kube *k = r->o->kube;
	json_t *st = NULL, *obj = NULL, *got = NULL;
	int rc;

	st = cv_status_json(r, rec, rp);
	obj = st != NULL ? json_pack("{s:s, s:s, s:{s:s}, s:O}", "apiVersion",
	                             CV_API, "kind", CV_KIND, "metadata",
	                             "name", CV_NAME, "status", st)
	                 : NULL;
	if (obj == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = al_kube_apply_status(k, obj, &got, dl)) < 0) {
		rc = al_error_wrap(rc, "writing the status of %s/%s", CV_KIND,
		                   CV_NAME);
		goto out;
	}
	json_decref(r->cv_live);
	r->cv_live = got;
	got = NULL;
	r->res->cluster_version = 1;
out:
	json_decref(got);
	json_decref(obj);
	json_decref(st);
	return rc;
}

/*
 * Persist the record: the cluster's ClusterVersion status (when airlock
 * is the updater), the ClusterUpdate object, then the --state file; the
 * cluster writes bounded by dl. The decision record goes last so that a
 * failed write leaves the state file at what it said before (see "The
 * record" in docs/updater.md). best_effort: write every target, ignore
 * errors (used to take back a Completed that was not recorded everywhere).
 */
static int save_targets(run *r, const record *rec, const report *rp,
                        al_deadline dl, int best_effort)
{
	const al_update_opts *o = r->o;
	json_t *st = NULL, *doc = NULL, *obj = NULL, *crd = NULL;
	int rc = 0, first = 0;

	if (o->dry_run)
		return 0;
	st = status_json(rec, rp);
	if (st == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	/* a run that lost the lease writes only its own state file */
	if (o->kube == NULL || r->no_cluster_writes ||
	    al_update_lease_lost(r->lease, NULL, 0))
		goto file;
	if (r->cv_owner && (rc = save_cluster_version(r, rec, rp, dl)) < 0) {
		if (!best_effort)
			goto out;
		first = first ? first : rc;
	}
	if (!r->crd_done) {
		crd = json_loads(crd_json, 0, NULL);
		if (crd == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		if ((rc = al_kube_apply(o->kube, crd, NULL, dl)) < 0) {
			rc = al_error_wrap(
			    rc, "applying the ClusterUpdate definition");
			if (!best_effort)
				goto out;
			first = first ? first : rc;
		} else {
			r->crd_done = 1;
		}
	}
	obj = json_pack("{s:s, s:s, s:{s:s}, s:{s:o}}", "apiVersion",
	                AL_UPDATE_STATUS_API_VERSION, "kind",
	                AL_UPDATE_STATUS_KIND, "metadata", "name",
	                AL_UPDATE_STATUS_NAME, "spec", "desiredUpdate",
	                desired_json(rec));
	if (obj == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = al_kube_apply(o->kube, obj, NULL, dl)) < 0) {
		rc = al_error_wrap(rc, "writing %s/%s", AL_UPDATE_STATUS_KIND,
		                   AL_UPDATE_STATUS_NAME);
		if (!best_effort)
			goto out;
		first = first ? first : rc;
	}
	json_object_del(obj, "spec");
	json_object_set(obj, "status", st);
	if ((rc = al_kube_apply_status(o->kube, obj, NULL, dl)) < 0) {
		rc =
		    al_error_wrap(rc, "writing the status of %s/%s",
		                  AL_UPDATE_STATUS_KIND, AL_UPDATE_STATUS_NAME);
		if (!best_effort)
			goto out;
		first = first ? first : rc;
	}
file:
	if (o->state_path != NULL) {
		doc = json_deep_copy(st);
		if (doc == NULL ||
		    json_object_set_new(
		        doc, "apiVersion",
		        json_string(AL_UPDATE_STATUS_API_VERSION)) < 0 ||
		    json_object_set_new(
		        doc, "kind", json_string("ClusterUpdateState")) < 0) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		if ((rc = al_json_save_file(o->state_path, doc, 2)) < 0) {
			rc = al_error_wrap(rc, "writing state file '%s'",
			                   o->state_path);
			if (!best_effort)
				goto out;
			first = first ? first : rc;
		}
	}
	rc = best_effort ? first : 0;
out:
	json_decref(crd);
	json_decref(obj);
	json_decref(doc);
	json_decref(st);
	return rc;
}

static int save(run *r, const record *rec, const report *rp, al_deadline dl)
{
	return save_targets(r, rec, rp, dl, 0);
}

/* Load the record: the state file when given and present, else the cluster
 * object, else a fresh Initializing. Never a guess: anything unreadable is
 * an error. */
static int load(run *r, record *rec)
{
	const al_update_opts *o = r->o;
	json_t *v = NULL;
	int rc;

	memset(rec, 0, sizeof(*rec));
	if (o->state_path != NULL) {
		rc = al_json_load_file(&v, o->state_path,
		                       AL_UPDATE_MAX_STATE_BYTES);
		if (rc == 0) {
			rc = record_from_json(rec, v, o->state_path);
			json_decref(v);
			return rc;
		}
		if (rc != AL_ENOTFOUND)
			return al_error_wrap(rc, "reading state file");
	}
	if (o->kube != NULL) {
		rc = al_kube_get(o->kube, AL_UPDATE_STATUS_API_VERSION,
		                 AL_UPDATE_STATUS_KIND, NULL,
		                 AL_UPDATE_STATUS_NAME, &v,
		                 al_deadline_in(STATUS_WRITE_MS));
		if (rc == 0) {
			const json_t *st = json_object_get(v, "status");

			if (st != NULL && al_json_str(st, "state") != NULL) {
				rc = record_from_json(
				    rec, st, "ClusterUpdate/cluster status");
				json_decref(v);
				return rc;
			}
			json_decref(v);
		} else if (rc != AL_ENOTFOUND) {
			return al_error_wrap(rc, "reading %s/%s",
			                     AL_UPDATE_STATUS_KIND,
			                     AL_UPDATE_STATUS_NAME);
		}
	}
	rec->state = AL_UPDATE_INITIALIZING;
	rec->history = json_array();
	if (rec->history == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	return 0;
}

/* --- target ------------------------------------------------------------ */

/* "repo@digest" from a source reference and a digest. */
static char *image_of(const char *source, const char *digest)
{
	const char *at, *slash, *colon;
	size_t n;

	if (source == NULL || source[0] == '\0')
		return al_strdup(digest);
	n = strlen(source);
	at = strchr(source, '@');
	if (at != NULL) {
		n = (size_t)(at - source);
	} else {
		slash = strrchr(source, '/');
		colon = strrchr(source, ':');
		if (colon != NULL && (slash == NULL || colon > slash))
			n = (size_t)(colon - source);
	}
	return al_sprintf("%.*s@%s", (int)n, source, digest);
}

static int resolve(run *r, char **version, char **digest, char **image)
{
	const char *target = r->o->target;
	al_store_release *list = NULL;
	const al_store_release *found = NULL;
	size_t n = 0, i;
	int by_digest, rc;

	if ((rc = al_store_releases_list(r->o->store, &list, &n)) < 0)
		return rc;
	by_digest = al_str_startswith(target, "sha256:");
	for (i = 0; i < n; i++) {
		const char *v = list[i].version, *d = list[i].digest_text;

		if (d == NULL ||
		    (by_digest ? strcmp(d, target)
		               : (v == NULL || strcmp(v, target))) != 0)
			continue;
		if (found != NULL && strcmp(found->digest_text, d) != 0) {
			rc = al_error_set(AL_EINVAL,
			                  "version '%s' names several releases "
			                  "in the store: give the digest",
			                  target);
			goto out;
		}
		found = &list[i];
	}
	if (found == NULL) {
		rc = al_error_set(AL_ENOTFOUND,
		                  "release '%s' is not in the store '%s' "
		                  "(airlock/releases.json)",
		                  target, al_store_path(r->o->store));
		goto out;
	}
	*version = al_strdup(found->version != NULL ? found->version : target);
	*digest = al_strdup(found->digest_text);
	*image = image_of(found->source, found->digest_text);
	if (*version == NULL || *digest == NULL || *image == NULL)
		rc = al_error_set(AL_ENOMEM, "out of memory");
out:
	al_store_releases_free(list, n);
	return rc;
}

/* --- accept ------------------------------------------------------------ */

/* Where a spec.signatureStores entry's ca.name ConfigMap lives and the key
 * that holds its PEM (openshift/api config/v1 SignatureStore.ca), and the
 * cluster's trusted bundle the CVO's HTTP client uses otherwise
 * (pkg/cvo/egress.go getTLSConfig). */
#define STORE_CA_NS "openshift-config"
#define STORE_CA_KEY "ca.crt"
#define TRUSTED_CA_NS "openshift-config-managed"
#define TRUSTED_CA_NAME "trusted-ca-bundle"
#define TRUSTED_CA_KEY "ca-bundle.crt"

/* The PEM under key in ConfigMap ns/name: 0 and *pem (borrowed from the
 * ConfigMap, appended to keep), AL_ENOTFOUND when the ConfigMap or the
 * key is missing, else the API's error. */
static int configmap_pem(run *r, const char *ns, const char *name,
                         const char *key, json_t *keep, const char **pem)
{
	json_t *cm = NULL;
	const char *v;
	int rc;

	*pem = NULL;
	rc = al_kube_get(r->o->kube, "v1", "ConfigMap", ns, name, &cm,
	                 al_deadline_in(STATUS_WRITE_MS));
	if (rc < 0)
		return rc;
	v = al_json_str(json_object_get(cm, "data"), key);
	if (v == NULL || *v == '\0') {
		json_decref(cm);
		return al_error_set(AL_ENOTFOUND,
		                    "ConfigMap %s/%s has no key %s", ns, name,
		                    key);
	}
	if (json_array_append_new(keep, cm) < 0)
		return al_error_set(AL_ENOMEM, "out of memory");
	*pem = v;
	return 0;
}

/*
 * The ClusterVersion's spec.signatureStores as HTTP signature sources
 * appended to src[*n] (room for json_array_size of them), each with the
 * CA its TLS is verified with, as openshift/api defines
 * SignatureStore.ca: the PEM under "ca.crt" of ConfigMap
 * openshift-config/<ca.name>; a store whose ConfigMap or key is missing
 * is not honoured (left out, said in why); without ca.name, the cluster's
 * trusted CA bundle (openshift-config-managed/trusted-ca-bundle,
 * "ca-bundle.crt", what the CVO's own HTTP client trusts) when there is
 * one, added to the default roots. keep (a JSON array) holds the
 * ConfigMaps the sources' CAs point into. AL_ENOMEM only.
 */
static int cv_store_sources(run *r, al_sig_source *src, size_t *n, json_t *keep,
                            al_buf *why)
{
	const json_t *ss = json_object_get(json_object_get(r->cv_live, "spec"),
	                                   "signatureStores"),
	             *e;
	const char *trusted = NULL;
	size_t i;
	int rc, trusted_read = 0;

	if (r->o->kube == NULL)
		return 0;
	json_array_foreach(ss, i, e)
	{
		const char *url = al_json_str(e, "url"),
		           *ca = al_json_str(json_object_get(e, "ca"), "name");
		const char *pem = NULL;

		if (url == NULL)
			continue;
		if (ca != NULL && *ca != '\0') {
			rc = configmap_pem(r, STORE_CA_NS, ca, STORE_CA_KEY,
			                   keep, &pem);
			if (rc == AL_ENOMEM)
				return rc;
			if (rc < 0) {
				al_buf_printf(
				    why,
				    "%ssignature store '%s' not "
				    "honoured: its CA (ca.name %s): %s",
				    why->len > 0 ? "; " : "", url, ca,
				    al_error_message());
				al_error_clear();
				continue;
			}
		} else {
			if (!trusted_read) {
				trusted_read = 1;
				rc = configmap_pem(
				    r, TRUSTED_CA_NS, TRUSTED_CA_NAME,
				    TRUSTED_CA_KEY, keep, &trusted);
				if (rc == AL_ENOMEM)
					return rc;
				al_error_clear();
			}
			pem = trusted;
		}
		src[*n].kind = AL_SIG_SOURCE_HTTP;
		src[*n].location = url;
		src[*n].ca_pem = (const uint8_t *)pem;
		src[*n].ca_pem_len = pem != NULL ? strlen(pem) : 0;
		(*n)++;
	}
	return 0;
}

/* Verify the release's signatures within the signature budget. Returns 0
 * verified, else a negative code with the reason in *why (caller frees). */
static int accept_release(run *r, const al_digest *d, al_deadline dl,
                          char **why)
{
	const al_update_opts *o = r->o;
	al_sig_verify_opts vo = AL_SIG_VERIFY_OPTS_INIT;
	al_sig_list l = AL_SIG_LIST_INIT;
	al_buf reasons = AL_BUF_INIT(16 * 1024);
	al_sig_source *src = NULL;
	al_sig_fetch_result fr = AL_SIG_FETCH_RESULT_INIT;
	json_t *cms = NULL, *keep = NULL;
	char *txt = NULL;
	size_t nss;
	int rc;

	*why = NULL;
	vo.keyring = o->keyring;
	vo.policy = AL_SIG_IDENTITY_IGNORE; /* as the CVO: the digest is what is
	                                       checked */
	if (o->keyring == NULL) {
		*why = al_strdup("no trusted keys (--keyring) to verify with");
		return al_error_set(AL_ENOTFOUND, "no trusted keys");
	}
	/* 1. the store */
	rc = al_sig_store_load(o->store, d, &l);
	if (rc == 0)
		rc = al_sig_verify_list(NULL, NULL, &l, d, &vo);
	al_sig_list_clear(&l);
	if (rc == 0) {
		emit(r, "signature verified (store)");
		goto out;
	}
	al_buf_printf(&reasons, "store: %s",
	              rc == AL_ENOTFOUND ? "no signature" : al_error_message());
	/* 2. the cluster's signature ConfigMaps: with HTTP stores to ask
	 * after it, at most half of what is left, so a LIST that hangs
	 * leaves them their own share (and not 1 ms). */
	if (o->kube != NULL && !al_deadline_expired(dl)) {
		al_deadline cm_dl = dl;

		if (o->nsignature_stores > 0)
			cm_dl = al_deadline_min(
			    dl, al_deadline_in(
			            al_deadline_remaining_ms(dl) / 2 + 1));
		rc = al_kube_list(o->kube, "v1", "ConfigMap", SIG_CONFIGMAP_NS,
		                  SIG_CONFIGMAP_LABEL, &cms, cm_dl);
		if (rc == 0) {
			size_t i;
			json_t *cm;

			/* One ConfigMap at a time: the server answers a
			 * "ConfigMapList", which is not a v1 List. */
			json_array_foreach(json_object_get(cms, "items"), i, cm)
			{
				txt = al_json_dump(cm, 0);
				rc =
				    txt == NULL
				        ? al_error_set(AL_ENOMEM,
				                       "out of memory")
				        : al_sig_configmap_parse(
				              &l, (const uint8_t *)txt,
				              strlen(txt),
				              "cluster signature ConfigMap", d);
				free(txt);
				txt = NULL;
				if (rc < 0)
					break;
			}
			if (rc == 0)
				rc = al_sig_verify_list(NULL, NULL, &l, d, &vo);
			al_sig_list_clear(&l);
		}
		if (rc == 0) {
			emit(r, "signature verified (cluster ConfigMap)");
			goto out;
		}
		al_buf_printf(&reasons, "; cluster ConfigMaps: %s",
		              rc == AL_ENOTFOUND ? "no signature"
		                                 : al_error_message());
	}
	/* 3. HTTP signature stores, concurrently, under what is left: the
	 * ones given (--signature-store) and the ClusterVersion's
	 * spec.signatureStores (each with its CA) */
	nss = json_array_size(json_object_get(
	    json_object_get(r->cv_live, "spec"), "signatureStores"));
	if (o->nsignature_stores + nss > 0) {
		al_sig_fetch_opts fo;
		al_buf skipped = AL_BUF_INIT(8192);
		size_t i, nsrc = 0;

		src = calloc(o->nsignature_stores + nss, sizeof(*src));
		keep = json_array();
		if (src == NULL || keep == NULL) {
			al_buf_free(&skipped);
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		for (i = 0; i < o->nsignature_stores; i++) {
			src[nsrc].kind = AL_SIG_SOURCE_HTTP;
			src[nsrc++].location = o->signature_stores[i];
		}
		if ((rc = cv_store_sources(r, src, &nsrc, keep, &skipped)) <
		    0) {
			al_buf_free(&skipped);
			goto out;
		}
		if (skipped.len > 0)
			al_buf_printf(&reasons, "; %s", al_buf_cstr(&skipped));
		al_buf_free(&skipped);
		memset(&fo, 0, sizeof(fo));
		fo.sources = src;
		fo.nsources = nsrc;
		fo.keyring = o->keyring;
		fo.policy = AL_SIG_IDENTITY_IGNORE;
		fo.budget_ms = al_deadline_remaining_ms(dl);
		if (fo.budget_ms == 0)
			fo.budget_ms = 1;
		if (fo.request_timeout_ms == 0 ||
		    fo.request_timeout_ms > fo.budget_ms)
			fo.request_timeout_ms =
			    fo.budget_ms < 10000 ? fo.budget_ms : 10000;
		fo.cancel = o->cancel;
		rc = nsrc == 0 ? AL_ENOTFOUND : al_sig_fetch(&fr, d, NULL, &fo);
		if (rc == 0) {
			emit(r, "signature verified (%s '%s')",
			     fr.sigs[0].store < o->nsignature_stores
			         ? "signature store"
			         : "spec.signatureStores",
			     src[fr.sigs[0].store].location);
			goto out;
		}
		if (nsrc > 0)
			al_buf_printf(&reasons, "; %s", al_error_message());
	}
	if (rc == 0)
		rc = AL_ENOTFOUND;
	*why = al_strdup(al_buf_cstr(&reasons));
	rc = al_error_set(rc, "%s", al_buf_cstr(&reasons));
out:
	al_sig_fetch_result_clear(&fr);
	free(src);
	free(txt);
	json_decref(cms);
	json_decref(keep);
	al_buf_free(&reasons);
	return rc;
}

/* --- apply ------------------------------------------------------------- */

static int transient(int rc)
{
	return rc == AL_ENET || rc == AL_ETIMEOUT || rc == AL_ENOTFOUND;
}

/* 1 when want (a manifest) is contained in have (live): drift check. */
static int contained(const json_t *want, const json_t *have, int top)
{
	if (json_is_object(want)) {
		const char *k;
		json_t *x;

		if (!json_is_object(have))
			return 0;
		json_object_foreach((json_t *)want, k, x)
		{
			if (top && strcmp(k, "status") == 0)
				continue;
			if (!contained(x, json_object_get(have, k), 0))
				return 0;
		}
		return 1;
	}
	if (json_is_array(want)) {
		size_t i;

		if (!json_is_array(have) ||
		    json_array_size(want) != json_array_size(have))
			return 0;
		for (i = 0; i < json_array_size(want); i++)
			if (!contained(json_array_get(want, i),
			               json_array_get(have, i), 0))
				return 0;
		return 1;
	}
	if (json_is_number(want) && json_is_number(have))
		return json_number_value(want) == json_number_value(have);
	return json_equal(want, have);
}

/* The condition of type in live's status.conditions (NULL if absent). */
static const json_t *find_cond(const json_t *live, const char *type)
{
	size_t i;
	json_t *c;

	json_array_foreach(
	    json_object_get(json_object_get(live, "status"), "conditions"), i,
	    c)
	{
		const char *t = al_json_str(c, "type");

		if (t != NULL && strcmp(t, type) == 0)
			return c;
	}
	return NULL;
}

static const char *cond_str(const json_t *c, const char *field)
{
	const char *v = al_json_str(c, field);

	return v != NULL ? v : "";
}

static const char *cond_status(const json_t *live, const char *type)
{
	const json_t *c = find_cond(live, type);

	if (c == NULL)
		return "missing";
	return al_json_str(c, "status") ? al_json_str(c, "status") : "Unknown";
}

/* A check's verdict "not ready because s" (s allocated; NULL: ENOMEM). */
static int reason(char **why, char *s)
{
	*why = s;
	return s != NULL ? 1 : al_error_set(AL_ENOMEM, "out of memory");
}

/*
 * Why a ClusterOperator is not done (NULL when it is), as the CVO's
 * checkOperatorHealth (pkg/cvo/internal/operatorstatus.go) decides, in its
 * order: Available must be True; Degraded must be present and False (a
 * missing or Unknown Degraded counts as degraded); every status.versions
 * entry of the manifest must be reported with that version. A manifest
 * without status.versions never completes (*permanent = 1). Caller frees.
 */
static int co_not_ready(const al_update_task *t, const json_t *live,
                        int *permanent, char **why)
{
	const json_t *want = json_object_get(
	    json_object_get(al_update__obj(t), "status"), "versions");
	const json_t *have =
	    json_object_get(json_object_get(live, "status"), "versions");
	const json_t *avc = find_cond(live, "Available"),
	             *dgc = find_cond(live, "Degraded");
	const char *av = cond_status(live, "Available"),
	           *dg = cond_status(live, "Degraded");
	size_t i, j;
	json_t *w, *h;

	*permanent = 0;
	if (json_array_size(want) == 0) {
		*permanent = 1;
		return reason(
		    why,
		    al_sprintf("cluster operator '%s' does not declare "
		               "expected versions (ClusterOperatorNoVersions): "
		               "its manifest has no status.versions",
		               t->name));
	}
	if (strcmp(av, "True") != 0)
		return reason(
		    why,
		    al_sprintf(
		        "cluster operator '%s' is not available "
		        "(ClusterOperatorNotAvailable): Available=%s%s%s%s%s "
		        "(Degraded=%s)",
		        t->name, av, avc != NULL ? ": " : "",
		        cond_str(avc, "reason"),
		        avc != NULL && al_json_str(avc, "message") ? ": " : "",
		        cond_str(avc, "message"), dg));
	if (strcmp(dg, "False") != 0)
		return reason(
		    why,
		    al_sprintf("cluster operator '%s' is degraded "
		               "(ClusterOperatorDegraded): "
		               "Degraded=%s%s%s%s%s",
		               t->name, dg,
		               dgc != NULL ? ": " : " (no Degraded condition)",
		               cond_str(dgc, "reason"),
		               dgc != NULL && al_json_str(dgc, "message") ? ", "
		                                                          : "",
		               cond_str(dgc, "message")));
	json_array_foreach(want, i, w)
	{
		const char *n = al_json_str(w, "name"),
		           *v = al_json_str(w, "version"), *cur = NULL;

		if (n == NULL)
			n = "";
		if (v == NULL)
			v = "";
		json_array_foreach(have, j, h)
		{
			const char *hn = al_json_str(h, "name");

			if (hn != NULL && strcmp(hn, n) == 0) {
				cur = al_json_str(h, "version");
				break;
			}
		}
		if (cur == NULL || strcmp(cur, v) != 0)
			return reason(
			    why,
			    al_sprintf(
			        "cluster operator '%s' has not reached %s %s "
			        "(reports %s; Available=%s, Degraded=%s) "
			        "(ClusterOperatorUpdating)",
			        t->name, n, v, cur != NULL ? cur : "nothing",
			        av, dg));
	}
	return 0;
}

/* lib/resourcebuilder checkCustomResourceDefinitionHealth. */
static int crd_not_ready(const al_update_task *t, const json_t *live,
                         int *permanent, char **why)
{
	const json_t *c = find_cond(live, "Established");

	*permanent = 0;
	if (c == NULL)
		return reason(
		    why,
		    al_sprintf("CustomResourceDefinition %s does not declare "
		               "an Established status condition",
		               t->name));
	if (strcmp(cond_str(c, "status"), "True") == 0)
		return 0;
	return reason(
	    why,
	    al_sprintf("CustomResourceDefinition %s Established=%s, %s: %s",
	               t->name, cond_str(c, "status"), cond_str(c, "reason"),
	               cond_str(c, "message")));
}

static long long status_int(const json_t *live, const char *f)
{
	const json_t *v = json_object_get(json_object_get(live, "status"), f);

	return json_is_integer(v) ? (long long)json_integer_value(v) : 0;
}

static int being_deleted(const json_t *live)
{
	return al_json_str(json_object_get(live, "metadata"),
	                   "deletionTimestamp") != NULL;
}

/* lib/resourcebuilder checkDeploymentHealth (apps.go), in its order. */
static int deployment_not_ready(const al_update_task *t, const json_t *live,
                                int *permanent, char **why)
{
	const json_t *av = find_cond(live, "Available"),
	             *pr = find_cond(live, "Progressing"),
	             *rf = find_cond(live, "ReplicaFailure");
	const char *ns = t->ns != NULL ? t->ns : "";

	*permanent = 0;
	if (being_deleted(live))
		return reason(why,
		              al_sprintf("deployment %s/%s is being deleted",
		                         ns, t->name));
	if (rf != NULL && strcmp(cond_str(rf, "status"), "True") == 0)
		return reason(
		    why,
		    al_sprintf("deployment %s/%s has a replica failure %s: %s "
		               "(WorkloadNotProgressing; unavailable "
		               "replicas=%lld)",
		               ns, t->name, cond_str(rf, "reason"),
		               cond_str(rf, "message"),
		               status_int(live, "unavailableReplicas")));
	if (av != NULL && strcmp(cond_str(av, "status"), "False") == 0 &&
	    pr != NULL && strcmp(cond_str(pr, "status"), "False") == 0)
		return reason(why,
		              al_sprintf("deployment %s/%s is not available %s "
		                         "(%s) or progressing "
		                         "%s (%s) (WorkloadNotAvailable)",
		                         ns, t->name, cond_str(av, "reason"),
		                         cond_str(av, "message"),
		                         cond_str(pr, "reason"),
		                         cond_str(pr, "message")));
	if (pr != NULL && strcmp(cond_str(pr, "status"), "False") == 0 &&
	    strcmp(cond_str(pr, "reason"), "ProgressDeadlineExceeded") == 0)
		return reason(
		    why, al_sprintf("deployment %s/%s is Progressing=False: "
		                    "ProgressDeadlineExceeded: %s "
		                    "(WorkloadNotProgressing)",
		                    ns, t->name, cond_str(pr, "message")));
	return 0;
}

/* lib/resourcebuilder checkDaemonSetHealth: only a deletion in progress. */
static int daemonset_not_ready(const al_update_task *t, const json_t *live,
                               int *permanent, char **why)
{
	*permanent = 0;
	if (being_deleted(live))
		return reason(why,
		              al_sprintf("daemonset %s/%s is being deleted",
		                         t->ns != NULL ? t->ns : "", t->name));
	return 0;
}

/* lib/resourcebuilder checkJobHealth's decisions, but waiting for the Job
 * to complete (the CVO's builder returns as soon as the Job is not
 * failed; airlock holds the barrier until it succeeded): succeeded > 0
 * done; no active pod and failed > 0, or Failed=True with reason
 * DeadlineExceeded: failed for good (the Job controller gave up). */
static int job_not_ready(const al_update_task *t, const json_t *live,
                         int *permanent, char **why)
{
	const json_t *fc = find_cond(live, "Failed");
	int failed = fc != NULL && strcmp(cond_str(fc, "status"), "True") == 0;
	const char *ns = t->ns != NULL ? t->ns : "";

	*permanent = 0;
	if (status_int(live, "succeeded") > 0)
		return 0;
	if (status_int(live, "active") == 0) {
		if (status_int(live, "failed") > 0) {
			*permanent = 1;
			return reason(
			    why,
			    al_sprintf(
			        "job %s/%s: deadline exceeded, reason: \"%s\", "
			        "message: \"%s\"",
			        ns, t->name,
			        failed ? cond_str(fc, "reason")
			               : "DeadlineExceeded",
			        failed ? cond_str(fc, "message")
			               : "Job was active longer than specified "
			                 "deadline"));
		}
		if (failed &&
		    strcmp(cond_str(fc, "reason"), "DeadlineExceeded") == 0) {
			*permanent = 1;
			return reason(
			    why,
			    al_sprintf("job %s/%s: deadline exceeded, reason: "
			               "\"%s\", message: \"%s\"",
			               ns, t->name, cond_str(fc, "reason"),
			               cond_str(fc, "message")));
		}
	}
	return reason(why,
	              al_sprintf("job %s/%s has not completed (active %lld, "
	                         "succeeded 0, failed %lld)",
	                         ns, t->name, status_int(live, "active"),
	                         status_int(live, "failed")));
}

/* 0 ready, 1 not ready (*why says why, caller frees), AL_ENOMEM. */
typedef int (*not_ready_fn)(const al_update_task *t, const json_t *live,
                            int *permanent, char **why);

/* Which check holds a task after it applied (NULL: none). */
static not_ready_fn readiness_check(const al_update_task *t)
{
	if (t->delete_it)
		return NULL;
	if (t->cluster_operator)
		return co_not_ready;
	if (t->job)
		return job_not_ready;
	if (strcmp(t->group, "apiextensions.k8s.io") == 0 &&
	    strcmp(t->kind, "CustomResourceDefinition") == 0)
		return crd_not_ready;
	if (strcmp(t->group, "apps") == 0 && strcmp(t->kind, "Deployment") == 0)
		return deployment_not_ready;
	if (strcmp(t->group, "apps") == 0 && strcmp(t->kind, "DaemonSet") == 0)
		return daemonset_not_ready;
	return NULL;
}

/* Poll the object until check says it is done, a permanent failure, the
 * sync deadline or cancellation. Each new reason is reported as an event
 * (once, not at every poll); the last one ends the task. */
static int wait_ready(run *r, const al_update_task *t, not_ready_fn check)
{
	const al_update_opts *o = r->o;
	uint64_t poll = o->poll_ms ? o->poll_ms : DEFAULT_POLL_MS;
	char *why = NULL, *told = NULL;
	json_t *live = NULL;
	int rc, permanent = 0;

	if (check == co_not_ready &&
	    json_array_size(json_object_get(
	        json_object_get(al_update__obj(t), "status"), "versions")) ==
	        0) {
		if (co_not_ready(t, NULL, &permanent, &why) < 0)
			return AL_ENOMEM;
		rc = al_error_set(AL_EPROTO, "%s", why);
		free(why);
		return rc;
	}
	for (;;) {
		rc = al_kube_get(o->kube, t->api_version, t->kind, t->ns,
		                 t->name, &live, r->dl);
		if (rc == 0) {
			free(why);
			why = NULL;
			rc = check(t, live, &permanent, &why);
			json_decref(live);
			live = NULL;
			if (rc <= 0)
				break; /* ready, or out of memory */
			if (permanent) {
				rc = al_error_set(AL_EPROTO, "%s", why);
				break;
			}
			if (told == NULL || strcmp(told, why) != 0) {
				emit(r, "waiting: %s", why);
				free(told);
				told = al_strdup(why);
			}
		} else if (!transient(rc)) {
			break;
		}
		if (al_cancel_is_set(o->cancel)) {
			rc = al_error_set(AL_ECANCELED,
			                  "cancelled waiting for %s %s",
			                  t->kind, t->name);
			break;
		}
		if (al_deadline_expired(r->dl)) {
			rc = al_error_set(AL_ETIMEOUT, "%s",
			                  why != NULL
			                      ? why
			                      : "timed out waiting for "
			                        "the object to be ready");
			break;
		}
		{
			uint64_t rem = al_deadline_remaining_ms(r->dl);

			al_sleep_ms(poll < rem ? poll : rem, o->cancel);
		}
	}
	free(why);
	free(told);
	return rc;
}

/* The last answer of a task's attempts, per worker thread: when the sync
 * deadline ends the retries the final attempt often never reached the
 * server ("... after 0 attempt(s)"), and the cause worth naming is the
 * answer before it (a 409 that never cleared). */
static _Thread_local char retry_cause[512];

/* Wait before the next attempt of a transient failure, within the sync
 * deadline: 0 to retry, or the error that ends the task. */
static int retry_wait(run *r, const al_update_task *t, unsigned attempt)
{
	const char *now = al_error_message();
	uint64_t rem, b;

	if (attempt == 0)
		retry_cause[0] = '\0';
	if (al_deadline_expired(r->dl)) {
		if (retry_cause[0] != '\0' && strstr(now, "after 0 attempt"))
			return al_error_set(AL_ETIMEOUT,
			                    "sync deadline reached after %u "
			                    "attempt(s); last answer: %s",
			                    attempt, retry_cause);
		return al_error_set(AL_ETIMEOUT,
		                    "sync deadline reached after %u "
		                    "attempt(s): %s",
		                    attempt + 1, now);
	}
	/* message text only: truncation intended */
	snprintf(retry_cause, sizeof(retry_cause), "%s", now);
	rem = al_deadline_remaining_ms(r->dl);
	b = al_backoff_ms(attempt, 200, 5000);
	al_log_debug("update: retrying %s/%s after: %s", t->kind, t->name,
	             al_error_message());
	if (al_sleep_ms(b < rem ? b : rem, r->o->cancel) < 0)
		return al_error_set(AL_ECANCELED, "cancelled");
	return 0;
}

/* A release.openshift.io/delete manifest: the object must be gone; one
 * that is already absent is done. In reconciling, deleting one that came
 * back counts as a repair. */
static int delete_task(run *r, const al_update_task *t, int *repaired)
{
	const al_update_opts *o = r->o;
	unsigned attempt;
	int rc;

	for (attempt = 0;; attempt++) {
		if (al_cancel_is_set(o->cancel))
			return al_error_set(AL_ECANCELED, "cancelled");
		rc = al_kube_delete(o->kube, t->api_version, t->kind, t->ns,
		                    t->name, r->dl);
		if (rc == AL_ENOTFOUND)
			return 0;
		if (rc == 0) {
			*repaired = r->mode == AL_UPDATE_MODE_RECONCILE;
			return 0;
		}
		if (!transient(rc))
			return rc;
		if ((rc = retry_wait(r, t, attempt)) < 0)
			return rc;
	}
}

/* How often a replace that lost the race to another writer (409) is
 * read, merged and written again before the conflict is the answer. */
#define MERGE_CONFLICT_TRIES 5

/* One write of t by the CVO's lib/resourceapply Apply*v1 for a kind it
 * merges on the existing object (al_update_merge_live): created as the
 * manifest says when missing, else read, merged, and replaced
 * conditionally on the resourceVersion read (so a concurrent write is
 * never overwritten blindly), nothing written when nothing changed. */
static int apply_live(run *r, const al_update_task *t, const json_t *obj)
{
	al_kube *k = r->o->kube;
	json_t *live = NULL;
	int rc = 0, modified, tries;

	for (tries = 0; tries < MERGE_CONFLICT_TRIES; tries++) {
		json_decref(live);
		live = NULL;
		rc = al_kube_get(k, t->api_version, t->kind, t->ns, t->name,
		                 &live, r->dl);
		if (rc == AL_ENOTFOUND) {
			al_error_clear();
			rc = al_kube_apply(k, obj, NULL, r->dl);
			break;
		}
		if (rc < 0)
			break;
		rc = al_update_merge_live(live, obj, t->group, t->kind,
		                          &modified);
		if (rc < 0 || !modified)
			break;
		rc = al_kube_replace(k, live, NULL, r->dl);
		if (rc != AL_EEXIST)
			break;
		al_error_clear();
	}
	json_decref(live);
	return rc;
}

/* GET the cluster-scoped config.openshift.io/v1 object KIND "cluster":
 * *out NULL when it or its kind is absent (the CVO tolerates NotFound). */
static int cluster_config(run *r, const char *kind, json_t **out)
{
	int rc = al_kube_get(r->o->kube, "config.openshift.io/v1", kind, NULL,
	                     "cluster", out, r->dl);

	if (rc == AL_ENOTFOUND) {
		al_error_clear();
		*out = NULL;
		return 0;
	}
	return rc;
}

/* modifyDeployment's rule for the CVO's own Deployment: its container
 * talks to the Infrastructure's internal API load balancer
 * (status.apiServerInternalURL) instead of the manifest's
 * KUBERNETES_SERVICE_HOST / PORT. */
static int cvo_kube_service(run *r, json_t *obj)
{
	json_t *infra = NULL;
	char host[512], port[64];
	int rc;

	if ((rc = cluster_config(r, "Infrastructure", &infra)) < 0 ||
	    infra == NULL)
		return rc;
	rc =
	    al_update_split_lb_url(al_json_str(json_object_get(infra, "status"),
	                                       "apiServerInternalURL"),
	                           host, sizeof(host), port, sizeof(port));
	json_decref(infra);
	if (rc < 0)
		return rc;
	return al_update_kube_service(
	    json_object_get(
	        json_object_get(json_object_get(obj, "spec"), "template"),
	        "spec"),
	    AL_UPDATE_CVO_NAME, host, port);
}

/* The manifest of t as the CVO applies it (lib/resourcebuilder
 * modifyDeployment / modifyDaemonSet): the cluster's proxy (Proxy
 * "cluster"; none when it or its kind is absent) injected into the
 * containers its config.openshift.io/inject-proxy annotation names
 * (al_update_inject_proxy); the CVO's own Deployment pointed at the
 * internal API load balancer. *out: a new reference. */
static int task_object(run *r, const al_update_task *t, json_t **out)
{
	const char *names =
	    al_update_proxy_containers(al_update__obj(t), t->group, t->kind);
	int cvo =
	    al_update_is_cvo_deployment(al_update__obj(t), t->group, t->kind);
	json_t *proxy = NULL, *obj;
	int rc = 0;

	*out = NULL;
	if (names == NULL && !cvo) {
		*out = json_incref(al_update__obj(t));
		return 0;
	}
	if ((obj = json_deep_copy(al_update__obj(t))) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	if (names != NULL && (rc = cluster_config(r, "Proxy", &proxy)) == 0)
		rc = al_update_inject_proxy(obj, names, proxy);
	json_decref(proxy);
	if (rc == 0 && cvo)
		rc = cvo_kube_service(r, obj);
	if (rc < 0) {
		json_decref(obj);
		return rc;
	}
	*out = obj;
	return 0;
}

/* One apply of t: for a kind the CVO merges (lib/resourcemerge), the
 * object read first and merged by its rules (al_update_merge), so what the
 * CVO keeps stays and what it overwrites is overwritten; other kinds as
 * the manifest says. */
static int apply_merged(run *r, const al_update_task *t)
{
	al_kube *k = r->o->kube;
	json_t *live = NULL, *m = NULL, *obj = NULL;
	int rc, how = al_update_merge_kind(t->group, t->kind);

	if (how == AL_UPDATE_MERGE_NONE)
		return al_kube_apply(k, al_update__obj(t), NULL, r->dl);
	if (how == AL_UPDATE_MERGE_LIVE) {
		if ((rc = task_object(r, t, &obj)) < 0)
			return rc;
		rc = apply_live(r, t, obj);
		json_decref(obj);
		return rc;
	}
	rc = al_kube_get(k, t->api_version, t->kind, t->ns, t->name, &live,
	                 r->dl);
	if (rc == AL_ENOTFOUND) {
		al_error_clear();
		live = NULL;
	} else if (rc < 0) {
		return rc;
	}
	rc = al_update_merge(&m, al_update__obj(t), live, t->group, t->kind);
	if (rc == 0)
		rc = al_kube_apply(k, m, NULL, r->dl);
	json_decref(m);
	json_decref(live);
	return rc;
}

/* Apply one task, retrying transient errors until the sync deadline. */
static int apply_task(run *r, const al_update_task *t, int *repaired)
{
	const al_update_opts *o = r->o;
	json_t *live = NULL;
	unsigned attempt;
	int rc = 0;

	*repaired = 0;
	if (t->delete_it)
		return delete_task(r, t, repaired);
	/* lib/resourcedelete ValidDeleteAnnotation: an error, the object
	 * is neither deleted nor applied */
	if (t->delete_invalid)
		return al_error_set(
		    AL_EINVAL,
		    "invalid delete annotation \"release.openshift.io/delete\" "
		    "value: \"%s\"",
		    al_json_str(
		        json_object_get(
		            json_object_get(al_update__obj(t), "metadata"),
		            "annotations"),
		        "release.openshift.io/delete"));
	if (t->create_only || r->mode == AL_UPDATE_MODE_RECONCILE) {
		rc = al_kube_get(o->kube, t->api_version, t->kind, t->ns,
		                 t->name, &live, r->dl);
		if (rc == 0 && t->create_only) {
			json_decref(live);
			return 0;
		}
		if (rc == 0 && !contained(al_update__obj(t), live, 1))
			*repaired = 1;
		else if (rc == AL_ENOTFOUND &&
		         r->mode == AL_UPDATE_MODE_RECONCILE)
			*repaired = 1;
		json_decref(live);
		rc = 0;
	}
	for (attempt = 0;; attempt++) {
		if (al_cancel_is_set(o->cancel))
			return al_error_set(AL_ECANCELED, "cancelled");
		rc = apply_merged(r, t);
		if (rc == 0)
			break;
		if (!transient(rc))
			return rc;
		if ((rc = retry_wait(r, t, attempt)) < 0)
			return rc;
	}
	{
		not_ready_fn check = readiness_check(t);

		if (check != NULL)
			return wait_ready(r, t, check);
	}
	return 0;
}

static void record_error(run *r, int rc, const al_update_task *t,
                         const char *msg)
{
	char *desc = al_update_task_describe(t);
	char *e = al_sprintf("%s: %s", desc != NULL ? desc : t->name, msg);

	pthread_mutex_lock(&r->mu);
	if (r->first_rc == 0)
		r->first_rc = rc;
	r->level_failed = 1;
	if (r->nerrors < MAX_ERRORS_KEPT && e != NULL) {
		r->reasons[r->nerrors] = al_update_failure_reason(rc, msg);
		r->errors[r->nerrors++] = e;
		e = NULL;
	}
	pthread_mutex_unlock(&r->mu);
	free(e);
	free(desc);
}

static void add_repair(run *r, const al_update_task *t)
{
	char *desc = al_update_task_describe(t);
	char **n2;

	if (desc == NULL)
		return;
	pthread_mutex_lock(&r->mu);
	n2 = realloc(r->res->repairs, (r->res->nrepairs + 1) * sizeof(*n2));
	if (n2 != NULL) {
		r->res->repairs = n2;
		n2[r->res->nrepairs++] = desc;
		desc = NULL;
	}
	pthread_mutex_unlock(&r->mu);
	free(desc);
}

/* Stop taking new work: cancellation or the sync deadline. */
static int must_stop(run *r)
{
	return al_cancel_is_set(r->o->cancel) || al_deadline_expired(r->dl) ||
	       al_update_lease_lost(r->lease, NULL, 0);
}

static void *worker(void *arg)
{
	run *r = arg;

	for (;;) {
		const al_update_component *c;
		size_t idx, i;

		pthread_mutex_lock(&r->mu);
		idx = r->next < r->norder ? r->order[r->next++] : (size_t)-1;
		pthread_mutex_unlock(&r->mu);
		if (idx == (size_t)-1)
			break;
		c = &r->g->components[idx];
		for (i = 0; i < c->count; i++) {
			const al_update_task *t = &r->g->tasks[c->first + i];
			int repaired = 0, rc;

			if (must_stop(r)) {
				char why[512];

				rc = al_update_lease_lost(r->lease, why,
				                          sizeof(why))
				         ? al_error_set(AL_ELOCKED,
				                        "not applying: %s", why)
				     : al_cancel_is_set(r->o->cancel)
				         ? al_error_set(
				               AL_ECANCELED,
				               "cancelled before applying")
				         : al_error_set(AL_ETIMEOUT,
				                        "sync deadline reached "
				                        "before applying");
				record_error(r, rc, t, al_error_message());
				break;
			}
			rc = apply_task(r, t, &repaired);
			if (rc < 0) {
				record_error(r, rc, t, al_error_message());
				/* Updating: the rest of this component waits
				 * for the next run. Reconciling: repair what
				 * can be repaired. */
				if (r->mode != AL_UPDATE_MODE_RECONCILE)
					break;
				continue;
			}
			if (repaired) {
				add_repair(r, t);
				emit(r, "repaired drift: %s %s%s%s", t->kind,
				     t->ns ? t->ns : "", t->ns ? "/" : "",
				     t->name);
			}
			pthread_mutex_lock(&r->mu);
			r->applied++;
			pthread_mutex_unlock(&r->mu);
		}
	}
	return NULL;
}

static void shuffle(size_t *a, size_t n, unsigned *seed)
{
	size_t i;

	for (i = n; i > 1; i--) {
		size_t j = (size_t)rand_r(seed) % i, x = a[i - 1];

		a[i - 1] = a[j];
		a[j] = x;
	}
}

static int apply_graph(run *r, const al_update_graph *g, record *rec,
                       report *rp)
{
	const al_update_opts *o = r->o;
	unsigned par = o->parallel ? o->parallel : DEFAULT_PARALLEL,
	         seed = o->seed ? o->seed : (unsigned)al_clock_wall_ms();
	pthread_t th[AL_UPDATE_MAX_PARALLEL];
	size_t li, i;
	int rc = 0;

	if (par > AL_UPDATE_MAX_PARALLEL)
		par = AL_UPDATE_MAX_PARALLEL;
	r->g = g;
	r->order = calloc(g->ncomponents + 1, sizeof(*r->order));
	if (r->order == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	for (li = 0; li < g->nlevels; li++) {
		const al_update_level *lv = &g->levels[li];
		size_t nth = 0;

		if (must_stop(r)) {
			/* count what was never started, with the reason */
			if (r->first_rc == 0) {
				char why[600], lw[512];
				int lost = al_update_lease_lost(r->lease, lw,
				                                sizeof(lw));
				int c = lost ? AL_ELOCKED
				        : al_cancel_is_set(o->cancel)
				            ? AL_ECANCELED
				            : AL_ETIMEOUT;

				/* message text only: truncation intended */
				snprintf(why, sizeof(why), "not applying: %s",
				         lost ? lw : "");

				record_error(
				    r, c,
				    &g->tasks[g->components[lv->first].first],
				    c == AL_ECANCELED
				        ? "cancelled before applying"
				    : lost ? why
				           : "sync deadline reached "
				             "before applying");
			}
			break;
		}
		for (i = 0; i < lv->count; i++)
			r->order[i] = lv->first + i;
		r->norder = lv->count;
		r->next = 0;
		r->level_failed = 0;
		if (r->mode == AL_UPDATE_MODE_RECONCILE)
			shuffle(r->order, r->norder, &seed);
		if (lv->number != NULL)
			emit(r, "level %s: %zu components, %zu manifests",
			     lv->number, lv->count, lv->ntasks);
		else
			emit(r, "unnumbered manifests: %zu", lv->ntasks);
		for (i = 0; i < par && i < lv->count; i++) {
			if (pthread_create(&th[nth], NULL, worker, r) != 0)
				break;
			nth++;
		}
		if (nth == 0)
			worker(r);
		for (i = 0; i < nth; i++)
			pthread_join(th[i], NULL);
		rp->applied = r->applied;
		if (r->level_failed && r->mode != AL_UPDATE_MODE_RECONCILE)
			break;
		if (li + 1 < g->nlevels &&
		    (rc = save(r, rec, rp,
		               al_deadline_min(
		                   r->dl, al_deadline_in(STATUS_WRITE_MS)))) <
		        0)
			al_log_warn("update: progress not persisted: %s",
			            al_error_message());
		rc = 0;
	}
	free(r->order);
	r->order = NULL;
	return r->first_rc;
}

/* --- the cluster's filters (what is applied) ----------------------------- */

/* The feature set, feature gates and capabilities a load filters with
 * (docs/updater.md "What is applied"); strings borrow from the objects. */
typedef struct filters {
	json_t *fg, *cv; /* FeatureGate cluster, ClusterVersion version */
	const char **gates;
	size_t ngates;
	const char **caps;
	size_t ncaps;
	const char **known;
	size_t nknown;
	al_update_override *ovr; /* borrowed from cv */
	size_t novr;
	char **implicit; /* enabled implicitly by this update (owned) */
	size_t nimplicit;
	const char **caps2; /* caps plus implicit (borrowed strings) */
} filters;

static void filters_clear(filters *f)
{
	size_t i;

	json_decref(f->fg);
	json_decref(f->cv);
	free(f->gates);
	free(f->caps);
	free(f->known);
	free(f->ovr);
	for (i = 0; i < f->nimplicit; i++)
		free(f->implicit[i]);
	free(f->implicit);
	free(f->caps2);
	memset(f, 0, sizeof(*f));
}

/* The names of a JSON array of strings (or of objects' "name"). */
static int string_list(const json_t *a, const char *member, const char ***out,
                       size_t *n)
{
	size_t i, k = 0;
	json_t *x;

	*out = calloc(json_array_size(a) + 1, sizeof(**out));
	if (*out == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	json_array_foreach(a, i, x)
	{
		const char *s = member != NULL ? al_json_str(x, member)
		                               : json_string_value(x);

		if (s != NULL)
			(*out)[k++] = s;
	}
	*n = k;
	return 0;
}

/* The unmanaged entries of cv's spec.overrides (library-go Include leaves
 * their objects out); *out borrows from cv, NULL when there are none. */
static int unmanaged_overrides(const json_t *cv, al_update_override **out,
                               size_t *n)
{
	const json_t *a =
	    json_object_get(json_object_get(cv, "spec"), "overrides");
	size_t i;
	json_t *e;

	*out = NULL;
	*n = 0;
	if (json_array_size(a) == 0)
		return 0;
	*out = calloc(json_array_size(a), sizeof(**out));
	if (*out == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	json_array_foreach(a, i, e)
	{
		if (!json_is_true(json_object_get(e, "unmanaged")))
			continue;
		(*out)[*n].group = al_json_str(e, "group");
		(*out)[*n].kind = al_json_str(e, "kind");
		(*out)[*n].ns = al_json_str(e, "namespace");
		(*out)[*n].name = al_json_str(e, "name");
		(*n)++;
	}
	return 0;
}

/* The version whose feature gates count: the CVO takes the entry of the
 * payload it runs (cvo.go extractEnabledGates: the current version, else
 * its own version on a fresh cluster). Here: the newest Completed entry of
 * the record, else of ClusterVersion status.history, else the target. */
static const char *gates_version(const record *rec, const json_t *cv,
                                 const char *target)
{
	size_t i;
	json_t *e;

	json_array_foreach(rec->history, i, e)
	{
		if (strcmp(al_json_str(e, "state"), "Completed") == 0 &&
		    al_json_str(e, "version") != NULL)
			return al_json_str(e, "version");
	}
	json_array_foreach(
	    json_object_get(json_object_get(cv, "status"), "history"), i, e)
	{
		const char *st = al_json_str(e, "state");

		if (st != NULL && strcmp(st, "Completed") == 0 &&
		    al_json_str(e, "version") != NULL)
			return al_json_str(e, "version");
	}
	return target;
}

/* Fill lo's feature set, gates and capabilities: from the options when
 * given, else from the cluster (FeatureGate cluster: spec.featureSet and
 * the status.featureGates entry of the version gates_version picks;
 * ClusterVersion version: capabilities as lib/capability computes them);
 * a cluster without those objects gives Default and no capability
 * filter. A read that fails stops the run: never a guess. */
static int cluster_filters(run *r, const record *rec, const char *target,
                           filters *f, al_update_load_opts *lo)
{
	const al_update_opts *o = r->o;
	const char *version;
	int rc;

	memset(f, 0, sizeof(*f));
	lo->feature_set = o->feature_set;
	if (o->kube != NULL) {
		rc = al_kube_get(o->kube, "config.openshift.io/v1",
		                 "ClusterVersion", NULL, "version", &f->cv,
		                 al_deadline_in(STATUS_WRITE_MS));
		if (rc < 0 && rc != AL_ENOTFOUND)
			return al_error_wrap(rc,
			                     "reading ClusterVersion/version");
	}
	version = gates_version(rec, f->cv, target);
	if (o->kube != NULL) {
		rc = al_kube_get(o->kube, "config.openshift.io/v1",
		                 "FeatureGate", NULL, "cluster", &f->fg,
		                 al_deadline_in(STATUS_WRITE_MS));
		if (rc < 0 && rc != AL_ENOTFOUND)
			return al_error_wrap(rc, "reading FeatureGate/cluster");
		if (rc == 0) {
			size_t i;
			json_t *e;

			if (lo->feature_set == NULL)
				lo->feature_set =
				    al_json_str(json_object_get(f->fg, "spec"),
				                "featureSet");
			json_array_foreach(
			    json_object_get(json_object_get(f->fg, "status"),
			                    "featureGates"),
			    i, e)
			{
				const char *v = al_json_str(e, "version");

				if (v == NULL || strcmp(v, version) != 0)
					continue;
				if ((rc = string_list(
				         json_object_get(e, "enabled"), "name",
				         &f->gates, &f->ngates)) < 0)
					return rc;
				lo->feature_gates = f->gates;
				lo->nfeature_gates = f->ngates;
				lo->feature_gates_known = 1;
				break;
			}
		}
	}
	if (o->have_capabilities) {
		lo->capabilities = o->capabilities;
		lo->ncapabilities = o->ncapabilities;
		lo->capabilities_known = 1;
	} else if (f->cv != NULL) {
		const json_t *kc = json_object_get(
		    json_object_get(json_object_get(f->cv, "status"),
		                    "capabilities"),
		    "knownCapabilities");

		if ((rc = al_update_cluster_capabilities(f->cv, &f->caps,
		                                         &f->ncaps)) < 0)
			return rc;
		lo->capabilities = f->caps;
		lo->ncapabilities = f->ncaps;
		lo->capabilities_known = 1;
		if (json_array_size(kc) > 0) {
			if ((rc = string_list(kc, NULL, &f->known,
			                      &f->nknown)) < 0)
				return rc;
			lo->known_capabilities = f->known;
			lo->nknown_capabilities = f->nknown;
		}
	}
	if ((rc = unmanaged_overrides(f->cv, &f->ovr, &f->novr)) < 0)
		return rc;
	lo->overrides = f->ovr;
	lo->noverrides = f->novr;
	emit(r, "filters: feature set %s, feature gates %s%s, capabilities %s",
	     lo->feature_set != NULL && lo->feature_set[0] != '\0'
	         ? lo->feature_set
	         : "Default",
	     lo->feature_gates_known ? "of " : "not filtered",
	     lo->feature_gates_known ? version : "",
	     !lo->capabilities_known ? "not filtered (no ClusterVersion)"
	     : o->have_capabilities  ? "from --capabilities"
	                             : "from the cluster");
	return 0;
}

/* --- the plan (dry run) ------------------------------------------------- */

static char *plan_text(const al_update_graph *g)
{
	al_buf b = AL_BUF_INIT(64 * AL_MIB);
	size_t li, ci, ti;

	al_buf_printf(&b,
	              "graph: %zu manifests in %zu levels, %zu components (%zu "
	              "documents left out: %zu feature set/gate/major version, "
	              "%zu capability, %zu unmanaged; %zu manifests/ templates "
	              "skipped)\n",
	              g->ntasks, g->nlevels, g->ncomponents, g->skipped,
	              g->skipped_feature, g->skipped_capability,
	              g->skipped_override, g->skipped_template);
	for (li = 0; li < g->nlevels; li++) {
		const al_update_level *lv = &g->levels[li];

		if (lv->number != NULL)
			al_buf_printf(&b,
			              "level %s: %zu parallel components, "
			              "%zu manifests\n",
			              lv->number, lv->count, lv->ntasks);
		else
			al_buf_printf(
			    &b, "unnumbered: 1 serial group, %zu manifests\n",
			    lv->ntasks);
		for (ci = lv->first; ci < lv->first + lv->count; ci++) {
			const al_update_component *c = &g->components[ci];

			al_buf_printf(&b, "  component %s: %zu manifests\n",
			              c->name[0] ? c->name : "-", c->count);
			for (ti = c->first; ti < c->first + c->count; ti++) {
				char *d =
				    al_update_task_describe(&g->tasks[ti]);

				al_buf_printf(&b, "    %s\n",
				              d != NULL ? d : "?");
				free(d);
			}
		}
	}
	if (g->nleft_out > 0)
		al_buf_printf(&b, "left out: %zu documents%s\n", g->skipped,
		              g->nleft_out < g->skipped ? " (first listed)"
		                                        : "");
	for (ti = 0; ti < g->nleft_out; ti++)
		al_buf_printf(&b, "  - %s\n", g->left_out[ti]);
	return al_buf_detach(&b, NULL);
}

/* --- the run ----------------------------------------------------------- */

void al_update_result_clear(al_update_result *res)
{
	size_t i;

	if (res == NULL)
		return;
	free(res->version);
	free(res->digest);
	free(res->accept_message);
	free(res->message);
	for (i = 0; i < res->nrepairs; i++)
		free(res->repairs[i]);
	free(res->repairs);
	free(res->plan);
	free(res->accepted_risks);
	AL_RESULT_ZERO_KEEP(res, result_version);
}

/* --- ownership: a running CVO, the ClusterVersion, preconditions ------- */

/*
 * A cluster-version-operator Deployment in openshift-cluster-version that
 * runs (replicas wanted or available) and that airlock did not apply
 * itself from a payload: another updater owns this cluster. *running
 * receives 1 with a description in *what (caller frees).
 */
static int find_cvo(run *r, int *running, char **what)
{
	al_kube *k = r->o->kube;
	const char *fm = al_kube_field_manager(k);
	json_t *d = NULL, *e;
	const json_t *st, *spec;
	json_int_t want = 1, avail, ready;
	size_t i;
	int rc, mine = 0;

	*running = 0;
	*what = NULL;
	rc = al_kube_get(k, "apps/v1", "Deployment", CVO_NAMESPACE,
	                 CVO_DEPLOYMENT, &d, al_deadline_in(STATUS_WRITE_MS));
	if (rc == AL_ENOTFOUND) {
		al_error_clear();
		return 0;
	}
	if (rc < 0)
		return al_error_wrap(rc,
		                     "looking for a cluster-version-operator");
	spec = json_object_get(d, "spec");
	st = json_object_get(d, "status");
	if (json_is_integer(json_object_get(spec, "replicas")))
		want = json_integer_value(json_object_get(spec, "replicas"));
	avail = json_integer_value(json_object_get(st, "availableReplicas"));
	ready = json_integer_value(json_object_get(st, "readyReplicas"));
	json_array_foreach(
	    json_object_get(json_object_get(d, "metadata"), "managedFields"), i,
	    e)
	{
		const char *m = al_json_str(e, "manager");

		if (m != NULL && fm != NULL && strcmp(m, fm) == 0)
			mine = 1;
	}
	if (!mine && (want > 0 || avail > 0 || ready > 0)) {
		*running = 1;
		*what = al_sprintf("Deployment %s/%s (%lld wanted, %lld "
		                   "available)",
		                   CVO_NAMESPACE, CVO_DEPLOYMENT,
		                   (long long)want, (long long)avail);
		if (*what == NULL)
			rc = al_error_set(AL_ENOMEM, "out of memory");
	}
	json_decref(d);
	return rc < 0 ? rc : 0;
}

/* Does the cluster serve ClusterVersion, and its "version" object. */
static int read_cluster_version(run *r, int *served)
{
	al_kube *k = r->o->kube;
	al_kube_resource res;
	int rc;

	*served = 0;
	memset(&res, 0, sizeof(res));
	rc = al_kube_discover(k, CV_API, CV_KIND, &res,
	                      al_deadline_in(STATUS_WRITE_MS));
	al_kube_resource_clear(&res);
	if (rc == AL_ENOTFOUND) {
		al_error_clear();
		return 0;
	}
	if (rc < 0)
		return al_error_wrap(rc, "discovering %s", CV_KIND);
	*served = 1;
	rc = al_kube_get(k, CV_API, CV_KIND, NULL, CV_NAME, &r->cv_live,
	                 al_deadline_in(STATUS_WRITE_MS));
	if (rc == AL_ENOTFOUND) {
		al_error_clear();
		return 0;
	}
	if (rc < 0)
		return al_error_wrap(rc, "reading %s/%s", CV_KIND, CV_NAME);
	return 0;
}

static int is_false(const json_t *c)
{
	const char *st = al_json_str(c, "status");

	return st != NULL && strcmp(st, "False") == 0;
}

/*
 * The admin-ack ConfigMaps (pkg/risk/adminack): *gates is
 * openshift-config-managed/admin-gates, *acks openshift-config/admin-acks,
 * each NULL when absent. The CVO reports a missing admin-gates as a risk;
 * airlock reads it as no gates: a cluster no CVO has run has none.
 */
static int read_admin_acks(al_kube *k, json_t **gates, json_t **acks)
{
	int rc;

	rc = al_kube_get(k, "v1", "ConfigMap", ADMIN_GATES_NS, ADMIN_GATES_NAME,
	                 gates, al_deadline_in(STATUS_WRITE_MS));
	if (rc == AL_ENOTFOUND) {
		al_error_clear();
		*gates = NULL;
		return 0;
	}
	if (rc < 0)
		return al_error_wrap(rc, "reading ConfigMap %s/%s",
		                     ADMIN_GATES_NS, ADMIN_GATES_NAME);
	rc = al_kube_get(k, "v1", "ConfigMap", ADMIN_ACKS_NS, ADMIN_ACKS_NAME,
	                 acks, al_deadline_in(STATUS_WRITE_MS));
	if (rc == AL_ENOTFOUND) {
		al_error_clear();
		*acks = NULL;
		return 0;
	}
	if (rc < 0)
		return al_error_wrap(rc, "reading ConfigMap %s/%s",
		                     ADMIN_ACKS_NS, ADMIN_ACKS_NAME);
	return 0;
}

/*
 * The preconditions of a new update to version: Upgradeable=False on a
 * ClusterOperator (or on the ClusterVersion, unless airlock wrote it
 * from the operators), rollback, giant hop. *npre failures summarised in
 * *pre (caller frees); *up_reason / *up_msg (caller frees, NULL when
 * upgradeable) the Upgradeable condition airlock reports, from the
 * operators, in the words of the CVO's ClusterOperatorsNotUpgradeable.
 */
static int preconditions(run *r, const record *rec, const char *version,
                         int *npre, char **pre, char **up_reason, char **up_msg)
{
	al_kube *k = r->o->kube;
	al_update_blocker *bl = NULL;
	al_buf m = AL_BUF_INIT(64 * 1024);
	json_t *cos = NULL, *co, *gates = NULL, *acks = NULL;
	const json_t *cvu;
	const char *current = NULL;
	size_t i, nb = 0, nco = 0;
	int rc = 0;

	*npre = 0;
	*pre = *up_reason = *up_msg = NULL;
	if (k != NULL) {
		rc = al_kube_list(k, CV_API, "ClusterOperator", NULL, NULL,
		                  &cos, al_deadline_in(STATUS_WRITE_MS));
		if (rc == AL_ENOTFOUND) {
			al_error_clear();
			rc = 0;
		} else if (rc < 0) {
			rc = al_error_wrap(rc, "listing ClusterOperators for "
			                       "their Upgradeable condition");
			goto out;
		}
	}
	if (k != NULL && (rc = read_admin_acks(k, &gates, &acks)) < 0)
		goto out;
	bl = calloc(json_array_size(json_object_get(cos, "items")) +
	                json_object_size(json_object_get(gates, "data")) + 2,
	            sizeof(*bl));
	if (bl == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	json_array_foreach(json_object_get(cos, "items"), i, co)
	{
		const json_t *c = find_cond(co, "Upgradeable");
		const char *name =
		    al_json_str(json_object_get(co, "metadata"), "name");

		if (!is_false(c) || name == NULL)
			continue;
		bl[nb].kind = "ClusterOperator";
		bl[nb].name = name;
		bl[nb].reason = al_json_str(c, "reason");
		bl[nb].message = al_json_str(c, "message");
		al_buf_printf(&m,
		              "%sCluster operator %s should not be upgraded "
		              "between minor versions: %s",
		              nb > 0 ? "\n* " : "", name,
		              bl[nb].message != NULL ? bl[nb].message : "");
		nb++;
		nco++;
	}
	if (nco > 0) {
		*up_reason =
		    al_strdup(nco == 1 ? "ClusterOperatorNotUpgradeable"
		                       : "ClusterOperatorsNotUpgradeable");
		*up_msg = nco == 1
		              ? al_strdup(al_buf_cstr(&m))
		              : al_sprintf("Multiple cluster operators "
		                           "should not be upgraded between "
		                           "minor versions:\n* %s",
		                           al_buf_cstr(&m));
		if (*up_reason == NULL || *up_msg == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
	}
	/* precondition/clusterversion ClusterVersionOverridesCondition */
	json_array_foreach(
	    json_object_get(json_object_get(r->cv_live, "spec"), "overrides"),
	    i, co)
	{
		if (json_is_true(json_object_get(co, "unmanaged"))) {
			bl[nb].kind = "Overrides";
			bl[nb].name = CV_NAME;
			bl[nb].reason = "ClusterVersionOverridesSet";
			bl[nb].message = NULL;
			nb++;
			break;
		}
	}
	cvu = find_cond(r->cv_live, "Upgradeable");
	if (is_false(cvu) && al_json_str(cvu, "reason") != NULL &&
	    !(nb > 0 && strcmp(bl[nb - 1].kind, "Overrides") == 0 &&
	      strcmp(al_json_str(cvu, "reason"),
	             "ClusterVersionOverridesSet") == 0) &&
	    strcmp(al_json_str(cvu, "reason"),
	           "ClusterOperatorNotUpgradeable") != 0 &&
	    strcmp(al_json_str(cvu, "reason"),
	           "ClusterOperatorsNotUpgradeable") != 0) {
		bl[nb].kind = "ClusterVersion";
		bl[nb].name = CV_NAME;
		bl[nb].reason = al_json_str(cvu, "reason");
		bl[nb].message = al_json_str(cvu, "message");
		nb++;
	}
	/* the CVO compares with status.desired: what the cluster is at or
	 * working towards */
	if (rec->state != AL_UPDATE_INITIALIZING && rec->version != NULL)
		current = rec->version;
	else
		current = al_json_str(
		    json_object_get(json_object_get(r->cv_live, "status"),
		                    "desired"),
		    "version");
	al_update_admin_ack_blockers(current, json_object_get(gates, "data"),
	                             json_object_get(acks, "data"), bl, &nb);
	rc = al_update_check_preconditions(current, version, bl, nb, pre);
	if (rc > 0) {
		*npre = rc;
		rc = 0;
	}
out:
	if (rc < 0) {
		free(*up_reason);
		free(*up_msg);
		*up_reason = *up_msg = NULL;
	}
	al_buf_free(&m);
	free(bl);
	json_decref(cos);
	json_decref(gates);
	json_decref(acks);
	return rc;
}

/* "a\nb" from two optional parts (NULL when both are empty). */
static char *join_risks(const char *a, const char *b)
{
	int ha = a != NULL && a[0] != '\0', hb = b != NULL && b[0] != '\0';

	if (ha && hb)
		return al_sprintf("%s\n%s", a, b);
	if (ha || hb)
		return al_strdup(ha ? a : b);
	return NULL;
}

static json_t *history_entry(const char *version, const char *image,
                             const char *digest, int verified,
                             const char *risks)
{
	char now[32];
	json_t *e;

	al_clock_rfc3339(now, al_clock_wall_ms());
	e = json_pack("{s:s, s:s, s:s, s:s, s:s, s:n, s:b}", "version", version,
	              "image", image, "digest", digest, "state", "Partial",
	              "started", now, "completed", "verified", verified);
	if (e != NULL && risks != NULL)
		json_object_set_new(e, "acceptedRisks", json_string(risks));
	return e;
}

/* The newest history entry back to what was persisted before the final
 * write: Partial, not completed. */
static void entry_back_to_partial(record *rec)
{
	json_t *h0 = json_array_get(rec->history, 0);

	if (h0 == NULL)
		return;
	json_object_set_new(h0, "state", json_string("Partial"));
	json_object_set_new(h0, "completed", json_null());
}

/* Take the cluster lease and check who else updates this cluster (a
 * running CVO), before anything is read or written. */
static int take_ownership(run *r, int *cv_served)
{
	const al_update_opts *o = r->o;
	al_update_lease_opts lo = AL_UPDATE_LEASE_OPTS_INIT;
	char *what = NULL;
	int rc, cvo = 0;

	*cv_served = 0;
	if ((rc = find_cvo(r, &cvo, &what)) < 0)
		return rc;
	if (cvo && !o->take_over) {
		rc = al_error_set(
		    AL_ELOCKED,
		    "a cluster-version-operator updates this cluster (%s): "
		    "rerun with --via-cvo to update through it (or oc adm "
		    "upgrade), or scale the CVO to 0 replicas and rerun with "
		    "--take-over to make airlock the updater",
		    what);
		free(what);
		return rc;
	}
	if (cvo)
		emit(
		    r,
		    "taking over from a running cluster-version-operator (%s): "
		    "scale it to 0 replicas or it will undo this update",
		    what);
	free(what);
	if ((rc = read_cluster_version(r, cv_served)) < 0)
		return rc;
	if (o->dry_run)
		return 0;
	lo.identity = o->identity;
	lo.duration_ms = o->lease_duration_ms;
	lo.wait_ms = o->lock_wait_ms;
	lo.cancel = o->cancel;
	if ((rc = al_update_lease_acquire(&r->lease, o->kube, &lo)) < 0)
		return rc;
	emit(r, "holding lease %s/%s as '%s'", AL_UPDATE_LEASE_NAMESPACE,
	     AL_UPDATE_LEASE_NAME, al_update_lease_identity(r->lease));
	/* The CVO's own record is ours to write only when no CVO runs (or
	 * we were told to take over), and only on the cluster's own
	 * ClusterVersion. */
	r->cv_owner = *cv_served && r->cv_live != NULL;
	return 0;
}

/*
 * While the lease is held the run uses its own cancel flag, set when the
 * caller cancels or when the lease is lost, so that a run that lost the
 * lease also stops waiting and retrying inside a task (not only before
 * the next one). Polled every 100 ms.
 */
typedef struct watcher {
	pthread_t tid;
	int started;
	const al_cancel *caller;
	al_update_lease *lease;
	al_cancel *run;
	al_cancel *stop;
} watcher;

static void *watch_main(void *arg)
{
	watcher *w = arg;

	while (!al_cancel_is_set(w->stop)) {
		if (al_cancel_is_set(w->caller) ||
		    al_update_lease_lost(w->lease, NULL, 0)) {
			al_cancel_set(w->run);
			break;
		}
		(void)al_wait_ms(100, w->stop);
	}
	return NULL;
}

static int watch_start(watcher *w, run *r, al_update_opts *oc)
{
	memset(w, 0, sizeof(*w));
	w->caller = r->o->cancel;
	w->lease = r->lease;
	if (al_cancel_new(&w->run) < 0 || al_cancel_new(&w->stop) < 0)
		return al_error_set(AL_ENOMEM, "out of memory");
	if (pthread_create(&w->tid, NULL, watch_main, w) != 0)
		return al_error_set(AL_ENOMEM, "cannot start a thread");
	w->started = 1;
	oc->cancel = w->run;
	return 0;
}

static void watch_stop(watcher *w)
{
	if (w->started) {
		al_cancel_set(w->stop);
		pthread_join(w->tid, NULL);
	}
	al_cancel_free(w->run);
	al_cancel_free(w->stop);
	memset(w, 0, sizeof(*w));
}

/*
 * One run, phase by phase. The run's state lives in one struct so that each
 * phase is a function of it; al_update_run calls them in order and frees
 * everything in one place (update_run_end).
 */
typedef struct update_run {
	const al_update_opts *o; /* the caller's options */
	al_update_opts oc; /* the run's copy: oc.cancel is the run's own while
	                      the lease is held */
	run r;
	watcher wt;
	record rec;
	report rp;
	al_release *rel;
	al_update_graph *g;
	filters flt;
	al_digest d;
	al_lock *lock;
	char *version, *digest, *image, *lockpath, *pre, *up_reason, *up_msg,
	    *accept_msg, *forced;
	int npre, cv_served;
} update_run;

/* Ownership: the state file's lock, the cluster's lease, its watcher. */
static int run_own(update_run *c)
{
	const al_update_opts *o = c->o;
	int rc;

	if (o->state_path != NULL && !o->dry_run) {
		c->lockpath = al_sprintf("%s.lock", o->state_path);
		if (c->lockpath == NULL)
			return al_error_set(AL_ENOMEM, "out of memory");
		if ((rc = al_lock_acquire(&c->lock, c->lockpath, 0)) < 0)
			return al_error_wrap(rc, "another update holds '%s'",
			                     c->lockpath);
	}
	/* One updater per cluster, whatever the state files: the lease. */
	if (o->kube != NULL && (rc = take_ownership(&c->r, &c->cv_served)) < 0)
		return rc;
	if (c->r.lease != NULL && (rc = watch_start(&c->wt, &c->r, &c->oc)) < 0)
		return rc;
	return 0;
}

/* The persisted state, the target, and the mode they make. */
static int run_target(update_run *c)
{
	run *r = &c->r;
	al_update_result *res = r->res;
	json_t *h0;
	int rc, same, completed;

	/* The persisted state decides; a state that cannot be read stops us. */
	if ((rc = load(r, &c->rec)) < 0)
		return rc;
	res->state = c->rec.state;
	if ((rc = resolve(r, &c->version, &c->digest, &c->image)) < 0)
		return rc;
	if ((rc = al_digest_parse_str(&c->d, c->digest)) < 0)
		return rc;
	res->version = al_strdup(c->version);
	res->digest = al_strdup(c->digest);
	same = c->rec.digest != NULL && strcmp(c->rec.digest, c->digest) == 0;
	h0 = json_array_get(c->rec.history, 0);
	completed = h0 != NULL &&
	            strcmp(al_json_str(h0, "digest"), c->digest) == 0 &&
	            strcmp(al_json_str(h0, "state"), "Completed") == 0;
	r->mode = al_update_choose_mode(c->rec.state, same, completed);
	res->mode = r->mode;
	emit(r, "state %s; %s %s (%s)", al_update_state_name(c->rec.state),
	     r->mode == AL_UPDATE_MODE_RECONCILE ? "reconciling"
	     : r->mode == AL_UPDATE_MODE_RESUME  ? "resuming update to"
	                                         : "updating to",
	     c->version, c->digest);
	return 0;
}

/* Phase 1: accept, under its own budget. */
static void run_accept(update_run *c)
{
	const al_update_opts *o = c->o;
	run *r = &c->r;
	al_update_result *res = r->res;
	report *rp = &c->rp;
	char *why = NULL;
	uint64_t t0;
	int vrc;

	t0 = al_clock_now_ms();
	vrc = accept_release(r, &c->d,
	                     al_deadline_in(o->signature_timeout_ms
	                                        ? o->signature_timeout_ms
	                                        : DEFAULT_SIG_TIMEOUT_MS),
	                     &why);
	res->accept_ms = al_clock_now_ms() - t0;
	res->verified = vrc == 0;
	res->accepted = vrc == 0 || o->force;
	res->accept_message = why;
	rp->verified = res->verified;
	rp->accepted = res->accepted;
	rp->accept_reason = res->verified ? "Verified"
	                    : o->force    ? "Forced"
	                                  : "NotVerified";
	rp->cvo_accept_reason =
	    res->accepted ? "PayloadLoaded" : "RetrievePayload";
	rp->accept_message =
	    res->verified ? "release signature verified" : res->accept_message;
	emit(r, "release %s %s%s%s (%.1fs)", c->version,
	     res->verified ? "verified"
	     : o->force    ? "NOT verified, forced"
	                   : "refused: not verified",
	     res->verified ? "" : ": ",
	     res->verified ? ""
	                   : (res->accept_message ? res->accept_message : ""),
	     (double)res->accept_ms / 1000.0);
	/* What --force accepts goes into the history entry (the CVO's
	 * acceptedRisks), not only into a condition. */
	if (!res->verified && o->force)
		c->forced = join_risks("release signature not verified",
		                       res->accept_message);
}

/* Preconditions, for a new update only (the CVO checks them when it
 * accepts a new payload): forced through into the accepted risks, or a
 * refusal of an accepted release. */
static int run_preconditions(update_run *c)
{
	const al_update_opts *o = c->o;
	run *r = &c->r;
	al_update_result *res = r->res;
	report *rp = &c->rp;
	int rc;

	if ((rc = preconditions(r, &c->rec, c->version, &c->npre, &c->pre,
	                        &c->up_reason, &c->up_msg)) < 0)
		return rc;
	rp->upgradeable_reason = c->up_reason;
	rp->upgradeable_message = c->up_msg;
	if (r->mode != AL_UPDATE_MODE_NEW) {
		free(c->pre);
		c->pre = NULL;
		c->npre = 0;
	}
	if (c->npre > 0) {
		emit(r, "preconditions %s: %s",
		     o->force ? "forced through" : "failed", c->pre);
		if (o->force) {
			char *f = al_sprintf(
			         "Forced through blocking failures: %s",
			         c->pre),
			     *j = f != NULL ? join_risks(c->forced, f) : NULL;

			free(f);
			free(c->forced);
			c->forced = j;
			if (c->forced == NULL)
				return al_error_set(AL_ENOMEM, "out of memory");
		} else if (res->accepted) {
			c->accept_msg =
			    al_sprintf("Preconditions failed for payload "
			               "loaded version=\"%s\" image=\"%s\": %s",
			               c->version, c->image, c->pre);
			if (c->accept_msg == NULL)
				return al_error_set(AL_ENOMEM, "out of memory");
			res->accepted = rp->accepted = 0;
			rp->accept_reason = rp->cvo_accept_reason =
			    "PreconditionChecks";
			rp->accept_message = c->accept_msg;
		}
	}
	res->accepted_risks = c->forced != NULL ? al_strdup(c->forced) : NULL;
	return 0;
}

/* Phase 2: load (unless cancelled before anything is applied). */
/* The digest of the release the cluster runs: the newest Completed entry
 * of the record, else of ClusterVersion status.history (its image's
 * digest). 0, or -1 when there is none. */
static int current_digest(const record *rec, const json_t *cv, al_digest *d)
{
	size_t i;
	json_t *e;

	json_array_foreach(rec->history, i, e)
	{
		if (strcmp(al_json_str(e, "state"), "Completed") != 0)
			continue;
		if (al_digest_parse_str(d, al_json_str(e, "digest")) < 0) {
			al_error_clear();
			return -1;
		}
		return 0;
	}
	json_array_foreach(
	    json_object_get(json_object_get(cv, "status"), "history"), i, e)
	{
		const char *st = al_json_str(e, "state"),
		           *im = al_json_str(e, "image");

		if (st == NULL || strcmp(st, "Completed") != 0)
			continue;
		if (im == NULL || strchr(im, '@') == NULL ||
		    al_digest_parse_str(d, strchr(im, '@') + 1) < 0) {
			al_error_clear();
			return -1;
		}
		return 0;
	}
	return -1;
}

/*
 * lib/manifest GetImplicitlyEnabledCapabilities: an object the current
 * release applies that the next release puts under a capability that is
 * not enabled enables that capability, and the object is still applied.
 * The current release must be in the store; when it is not (or cannot be
 * loaded), nothing is enabled implicitly and the run says so.
 */
static int implicit_capabilities(update_run *c, al_update_load_opts *lo)
{
	const al_update_opts *o = c->o;
	filters *f = &c->flt;
	al_update_load_opts lc = *lo, la = *lo;
	al_update_graph *cur_g = NULL, *all_g = NULL, *g2 = NULL;
	al_release *cur = NULL;
	al_digest cd;
	al_buf names = AL_BUF_INIT(4096);
	size_t i;
	int rc;

	if (current_digest(&c->rec, c->r.cv_live != NULL ? c->r.cv_live : f->cv,
	                   &cd) < 0 ||
	    al_digest_equal(&cd, &c->d))
		return 0;
	lc.release_version = NULL;
	lc.release_image = NULL;
	la.capabilities_known = 0;
	if ((rc = al_release_open(&cur, o->store, &cd, NULL)) < 0 ||
	    (rc = al_update_graph_from_release(&cur_g, cur, &lc)) < 0) {
		char ds[AL_DIGEST_STRMAX];

		emit(&c->r,
		     "warning: implicitly enabled capabilities not computed: "
		     "the current release %s: %s",
		     al_digest_str(&cd, ds), al_error_message());
		al_error_clear();
		rc = 0;
		goto out;
	}
	if ((rc = al_update_graph_from_release(&all_g, c->rel, &la)) < 0 ||
	    (rc = al_update_implicit_capabilities(
	         all_g, cur_g, lo->capabilities, lo->ncapabilities,
	         &f->implicit, &f->nimplicit)) < 0 ||
	    f->nimplicit == 0)
		goto out;
	f->caps2 =
	    calloc(lo->ncapabilities + f->nimplicit + 1, sizeof(*f->caps2));
	if (f->caps2 == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < lo->ncapabilities; i++)
		f->caps2[i] = lo->capabilities[i];
	for (i = 0; i < f->nimplicit; i++) {
		f->caps2[lo->ncapabilities + i] = f->implicit[i];
		al_buf_printf(&names, "%s%s", i > 0 ? ", " : "",
		              f->implicit[i]);
	}
	lo->capabilities = f->caps2;
	lo->ncapabilities += f->nimplicit;
	if ((rc = al_update_graph_from_release(&g2, c->rel, lo)) < 0)
		goto out;
	al_update_graph_free(c->g);
	c->g = g2;
	c->r.implicit = f->implicit;
	c->r.nimplicit = f->nimplicit;
	emit(&c->r,
	     "capabilities enabled implicitly: %s (objects the running "
	     "release applies moved under them)",
	     al_buf_cstr(&names));
out:
	if (rc < 0)
		rc = al_error_wrap(rc, "computing implicitly enabled "
		                       "capabilities");
	al_buf_free(&names);
	al_update_graph_free(all_g);
	al_update_graph_free(cur_g);
	al_release_free(cur);
	return rc;
}

static int run_load(update_run *c)
{
	const al_update_opts *o = c->o;
	al_update_load_opts lo = AL_UPDATE_LOAD_OPTS_INIT;
	int rc;

	if (al_cancel_is_set(o->cancel))
		return al_error_set(
		    AL_ECANCELED,
		    "update to %s cancelled before anything was applied",
		    c->version);
	lo.profile = o->profile;
	lo.exclude = o->exclude;
	lo.release_image = c->image;
	if ((rc = cluster_filters(&c->r, &c->rec, c->version, &c->flt, &lo)) <
	    0)
		return rc;
	if ((rc = al_release_open(&c->rel, o->store, &c->d, NULL)) < 0 ||
	    (rc = al_update_graph_from_release(&c->g, c->rel, &lo)) < 0)
		return al_error_wrap(rc, "loading release %s", c->version);
	if (lo.capabilities_known && !o->have_capabilities &&
	    (rc = implicit_capabilities(c, &lo)) < 0)
		return rc;
	c->r.res->total = c->rp.total = c->g->ntasks;
	return 0;
}

/* A dry run ends here: the plan, and the decision it would make. */
static int run_dry(update_run *c)
{
	const al_update_opts *o = c->o;
	al_update_result *res = c->r.res;
	al_update_mode mode = c->r.mode;
	const char *pre = c->pre;
	char *p = plan_text(c->g),
	     *head = al_sprintf(
	         "release %s (%s): %s\n%s%s%smode: %s (%s -> %s when "
	         "every manifest applied)\n",
	         c->version, c->digest,
	         c->accept_msg != NULL ? "refused (preconditions)"
	         : res->verified       ? "accepted (signature verified)"
	         : o->force            ? "accepted (forced, not verified)"
	                               : "refused (not verified)",
	         pre != NULL ? "preconditions: " : "", pre != NULL ? pre : "",
	         pre != NULL ? "\n" : "",
	         mode == AL_UPDATE_MODE_RECONCILE ? "reconcile"
	         : mode == AL_UPDATE_MODE_RESUME  ? "resume update"
	                                          : "new update",
	         al_update_state_name(c->rec.state), "Reconciling");

	res->plan =
	    (p != NULL && head != NULL) ? al_sprintf("%s%s", head, p) : NULL;
	free(p);
	free(head);
	if (res->plan == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	res->outcome = res->accepted ? AL_UPDATE_OUTCOME_APPLIED
	                             : AL_UPDATE_OUTCOME_REFUSED;
	return res->accepted ? 0
	       : c->accept_msg != NULL
	           ? al_error_set(AL_EUNSUPPORTED, "release %s refused: %s",
	                          c->version, pre)
	           : al_error_set(
	                 AL_EVERIFY, "release %s refused: not verified: %s",
	                 c->version,
	                 res->accept_message ? res->accept_message : "");
}

/* Refused: nothing applied, the decision state is unchanged. */
static int run_refuse(update_run *c)
{
	run *r = &c->r;
	al_update_result *res = r->res;
	int rc;

	res->outcome = AL_UPDATE_OUTCOME_REFUSED;
	res->state = al_update_next_state(c->rec.state, r->mode, res->outcome);
	c->rp.applied = 0;
	if ((rc = save(r, &c->rec, &c->rp, al_deadline_in(STATUS_WRITE_MS))) <
	    0)
		return rc;
	if (c->accept_msg != NULL)
		return al_error_set(AL_EUNSUPPORTED,
		                    "release %s refused (use --force to "
		                    "apply anyway): %s",
		                    c->version, c->pre);
	return al_error_set(AL_EVERIFY,
	                    "release %s refused: not verified (use --force to "
	                    "apply anyway): %s",
	                    c->version,
	                    res->accept_message ? res->accept_message : "");
}

/* Enter Updating (persisted before anything is applied). */
static int run_enter_updating(update_run *c)
{
	run *r = &c->r;
	al_update_result *res = r->res;
	record *rec = &c->rec;
	json_t *h0;
	int rc;

	if (r->mode != AL_UPDATE_MODE_RECONCILE) {
		h0 = json_array_get(rec->history, 0);
		if (r->mode == AL_UPDATE_MODE_NEW || h0 == NULL ||
		    strcmp(al_json_str(h0, "digest"), c->digest) != 0) {
			json_t *e =
			    history_entry(c->version, c->image, c->digest,
			                  res->verified, c->forced);

			/* status.go mergeOperatorHistory: the entry a new
			 * update supersedes gets its completionTime (it
			 * stays Partial) */
			if (h0 != NULL &&
			    json_is_null(json_object_get(h0, "completed"))) {
				char now[32];

				al_clock_rfc3339(now, al_clock_wall_ms());
				json_object_set_new(h0, "completed",
				                    json_string(now));
			}
			if (e == NULL ||
			    json_array_insert_new(rec->history, 0, e) < 0)
				return al_error_set(AL_ENOMEM, "out of memory");
			while (json_array_size(rec->history) >
			       AL_UPDATE_MAX_HISTORY)
				json_array_remove(
				    rec->history,
				    json_array_size(rec->history) - 1);
		} else {
			if (res->verified)
				json_object_set_new(h0, "verified",
				                    json_true());
			/* a resumed entry keeps what was accepted when it
			 * started, plus what is forced now */
			if (c->forced != NULL &&
			    al_json_str(h0, "acceptedRisks") == NULL)
				json_object_set_new(h0, "acceptedRisks",
				                    json_string(c->forced));
		}
		rec->state = AL_UPDATE_UPDATING;
		free(rec->version);
		free(rec->digest);
		free(rec->image);
		rec->version = c->version;
		rec->digest = c->digest;
		rec->image = c->image;
		c->version = c->digest = c->image = NULL;
	}
	if ((rc = save(r, rec, &c->rp, al_deadline_in(STATUS_WRITE_MS))) < 0)
		return al_error_wrap(
		    rc,
		    "not applying anything: cannot persist the update state");
	return 0;
}

/* Phase 3: apply, under its own budget that starts now. Returns the
 * apply's status (kept for the final message), not a reason to stop. */
static int run_apply(update_run *c)
{
	const al_update_opts *o = c->o;
	run *r = &c->r;
	al_update_result *res = r->res;
	uint64_t t0;
	int rc;

	r->dl = al_deadline_in(o->sync_timeout_ms ? o->sync_timeout_ms
	                                          : DEFAULT_SYNC_TIMEOUT_MS);
	t0 = al_clock_now_ms();
	rc = apply_graph(r, c->g, &c->rec, &c->rp);
	res->apply_ms = al_clock_now_ms() - t0;
	res->applied = c->rp.applied = r->applied;
	emit(r, "apply phase ended after %.1fs: applied %zu of %zu",
	     (double)res->apply_ms / 1000.0, r->applied, c->g->ntasks);
	res->outcome = al_update_outcome_of(rc, r->applied, c->g->ntasks);
	if (res->outcome != AL_UPDATE_OUTCOME_APPLIED && rc == 0)
		rc = al_error_set(AL_EIO, "not every manifest applied");
	if (al_update_lease_lost(r->lease, NULL, 0)) {
		/* Someone else may be updating now: the cluster's record is
		 * theirs; only the state file is written. */
		r->no_cluster_writes = 1;
		if (res->outcome == AL_UPDATE_OUTCOME_APPLIED) {
			res->outcome = AL_UPDATE_OUTCOME_FAILED;
			rc = AL_ELOCKED;
		}
	}
	return rc;
}

/* The state machine's next state and history state for the outcome. */
static void run_settle(update_run *c)
{
	run *r = &c->r;
	al_update_result *res = r->res;
	record *rec = &c->rec;
	json_t *h0;

	rec->state = al_update_next_state(rec->state, r->mode, res->outcome);
	h0 = json_array_get(rec->history, 0);
	if (h0 != NULL && r->mode != AL_UPDATE_MODE_RECONCILE) {
		al_update_hstate cur =
		    strcmp(al_json_str(h0, "state"), "Completed") == 0
		        ? AL_UPDATE_COMPLETED
		        : AL_UPDATE_PARTIAL;
		al_update_hstate nh =
		    al_update_next_hstate(r->mode, res->outcome, cur);

		json_object_set_new(h0, "state",
		                    json_string(al_update_hstate_name(nh)));
		if (nh == AL_UPDATE_COMPLETED) {
			char now[32];

			al_clock_rfc3339(now, al_clock_wall_ms());
			json_object_set_new(h0, "completed", json_string(now));
		}
	}
	res->state = rec->state;
}

/* A run that did not apply everything: its message, with the cause of
 * every "cancelled" when the lease was lost. */
static void run_fail_message(update_run *c)
{
	run *r = &c->r;
	al_update_result *res = r->res;
	const char *errs[MAX_ERRORS_KEPT];
	char lw[512];
	size_t i;

	for (i = 0; i < r->nerrors; i++)
		errs[i] = r->errors[i];
	if (r->mode == AL_UPDATE_MODE_RECONCILE) {
		char *m = al_update_failure_message(
		    c->rec.version, r->applied, c->g->ntasks, errs, r->nerrors);

		res->message = m != NULL ? al_sprintf("reconciling %s",
		                                      m + strlen("update to "))
		                         : NULL;
		free(m);
	} else {
		res->message = al_update_failure_message(
		    c->rec.version, r->applied, c->g->ntasks, errs, r->nerrors);
	}
	if (al_update_lease_lost(r->lease, lw, sizeof(lw)) &&
	    res->message != NULL) {
		char *m = al_sprintf("%s (%s)", res->message, lw);

		if (m != NULL) {
			free(res->message);
			res->message = m;
		}
	}
	c->rp.failing = 1;
	c->rp.fail_message = res->message;
	/* sync_worker.go newMultipleError: one reason, or MultipleErrors */
	c->rp.fail_reason = r->nerrors > 0 ? r->reasons[0] : NULL;
	for (i = 1; i < r->nerrors; i++)
		if (strcmp(r->reasons[i], r->reasons[0]) != 0)
			c->rp.fail_reason = "MultipleErrors";
}

/* Record the outcome; rc is the apply's status. */
static int run_record(update_run *c, int rc)
{
	run *r = &c->r;
	al_update_result *res = r->res;
	record *rec = &c->rec;
	int src = save(r, rec, &c->rp, al_deadline_in(STATUS_WRITE_MS));

	if (src < 0 && res->outcome == AL_UPDATE_OUTCOME_APPLIED) {
		/* Not recorded as Completed everywhere: take it back wherever
		 * it was written, so that nothing says Completed (or
		 * Reconciling); the next run resumes and records. */
		int reconciling = r->mode == AL_UPDATE_MODE_RECONCILE;

		res->message =
		    al_sprintf("%s %s applied but not recorded: %s; rerun to "
		               "record it",
		               reconciling ? "reconciling" : "update to",
		               rec->version, al_error_message());
		res->outcome = AL_UPDATE_OUTCOME_FAILED;
		if (!reconciling) {
			rec->state = AL_UPDATE_UPDATING;
			entry_back_to_partial(rec);
		}
		res->state = rec->state;
		c->rp.failing = 1;
		c->rp.fail_message = res->message;
		(void)save_targets(r, rec, &c->rp,
		                   al_deadline_in(STATUS_WRITE_MS), 1);
		return al_error_set(src, "%s",
		                    res->message != NULL
		                        ? res->message
		                        : "applied but not recorded");
	}
	if (res->outcome != AL_UPDATE_OUTCOME_APPLIED)
		return al_error_set(rc, "%s",
		                    res->message != NULL ? res->message
		                                         : "update failed");
	emit(r, "%s %s: applied %zu of %zu; state %s",
	     r->mode == AL_UPDATE_MODE_RECONCILE ? "reconciled"
	                                         : "completed update to",
	     rec->version, r->applied, c->g->ntasks,
	     al_update_state_name(rec->state));
	return 0;
}

/* Everything a run holds, released; the lease last, keeping the message
 * that ends the run. */
static void run_end(update_run *c, int rc)
{
	size_t i;

	for (i = 0; i < c->r.nerrors; i++)
		free(c->r.errors[i]);
	watch_stop(&c->wt);
	if (c->r.lease != NULL) {
		/* the release must not clobber the message that ends the run */
		char keep[1024];

		snprintf(keep, sizeof(keep), "%s", al_error_message());
		if (al_update_lease_release(c->r.lease) < 0)
			al_log_warn("update: %s", al_error_message());
		al_error_set(rc, "%s", keep);
	}
	al_update_graph_free(c->g);
	al_release_free(c->rel);
	filters_clear(&c->flt);
	record_clear(&c->rec);
	json_decref(c->r.cv_live);
	free(c->version);
	free(c->digest);
	free(c->image);
	free(c->pre);
	free(c->up_reason);
	free(c->up_msg);
	free(c->accept_msg);
	free(c->forced);
	al_lock_free(c->lock);
	free(c->lockpath);
	pthread_mutex_destroy(&c->r.mu);
}

/* --- updating through the cluster's own CVO (--via-cvo) ------------------ */

#define CVO_DEFAULT_TIMEOUT_MS (2ULL * 60 * 60 * 1000)
#define CVO_MAX_REGISTRIES 32

/* Registry clients by host, for the pre-flight's HEADs. */
typedef struct reg_cache {
	al_registry *r[CVO_MAX_REGISTRIES];
	size_t n;
} reg_cache;

static void reg_cache_clear(reg_cache *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		al_registry_free(c->r[i]);
	c->n = 0;
}

static int reg_for(run *r, reg_cache *c, const char *host, al_registry **out)
{
	al_registry_opts ro = AL_REGISTRY_OPTS_INIT;
	size_t i;
	int rc;

	for (i = 0; i < c->n; i++)
		if (strcmp(al_registry_host(c->r[i]), host) == 0) {
			*out = c->r[i];
			return 0;
		}
	if (c->n == CVO_MAX_REGISTRIES)
		return al_error_set(AL_ELIMIT, "more than %d registries",
		                    CVO_MAX_REGISTRIES);
	if (r->o->registry != NULL)
		ro = *r->o->registry;
	ro.http.cancel = r->o->cancel;
	if ((rc = al_registry_new(&c->r[c->n], host, &ro)) < 0)
		return rc;
	*out = c->r[c->n++];
	return 0;
}

/* Is name@digest (name "host/repo") present? HEAD, one answer. */
static int head_present(run *r, reg_cache *c, const char *name,
                        const char *digest, int *present, char *why,
                        size_t nwhy)
{
	al_ref ref;
	al_registry *reg = NULL;
	char *full = al_sprintf("%s@%s", name, digest);
	int rc;

	*present = 0;
	memset(&ref, 0, sizeof(ref));
	if (full == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	rc = al_ref_parse(&ref, full);
	free(full);
	if (rc == 0)
		rc = reg_for(r, c, ref.registry, &reg);
	if (rc == 0)
		rc = al_registry_head_manifest(reg, ref.repository, digest,
		                               present, NULL, NULL);
	if (rc < 0 && rc != AL_ENOMEM) {
		/* message text only: truncation intended */
		snprintf(why, nwhy, "%s", al_error_message());
		al_error_clear();
		*present = 0;
		rc = 0;
	} else if (rc == 0 && !*present) {
		snprintf(why, nwhy, "%s@%s: not found", name, digest);
	}
	al_ref_clear(&ref);
	return rc;
}

/* The mirrors of the cluster's ImageDigestMirrorSets
 * (spec.imageDigestMirrors[].source/mirrors) and ImageContentSourcePolicies
 * (spec.repositoryDigestMirrors[]) as {source, mirrors} pairs. */
static int mirror_rules(run *r, json_t **out)
{
	static const struct {
		const char *api, *kind, *field;
	} src[] = {
	    {"config.openshift.io/v1", "ImageDigestMirrorSet",
	     "imageDigestMirrors"},
	    {"operator.openshift.io/v1alpha1", "ImageContentSourcePolicy",
	     "repositoryDigestMirrors"},
	};
	json_t *rules = json_array(), *l = NULL, *it, *m;
	size_t s, i, j;
	int rc = 0;

	if (rules == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	for (s = 0; s < 2 && rc == 0; s++) {
		rc = al_kube_list(r->o->kube, src[s].api, src[s].kind, NULL,
		                  NULL, &l, al_deadline_in(STATUS_WRITE_MS));
		if (rc == AL_ENOTFOUND) {
			al_error_clear();
			rc = 0;
			continue;
		}
		if (rc < 0) {
			rc = al_error_wrap(rc, "listing %s", src[s].kind);
			break;
		}
		json_array_foreach(json_object_get(l, "items"), i, it)
		{
			json_array_foreach(
			    json_object_get(json_object_get(it, "spec"),
			                    src[s].field),
			    j, m)
			{
				if (al_json_str(m, "source") != NULL)
					json_array_append(rules, m);
			}
		}
		json_decref(l);
		l = NULL;
	}
	if (rc < 0) {
		json_decref(rules);
		return rc;
	}
	*out = rules;
	return 0;
}

/*
 * Is image ("host/repo@sha256:...") pullable the way the cluster resolves
 * it: through each mirror of a rule whose source is its repository or a
 * parent of it (the CRI-O registries.conf a mirror set becomes), in order,
 * then the source itself unless a rule says mirrorSourcePolicy
 * NeverContactSource. 0 with *ok; *why the last answer.
 */
static int image_reachable(run *r, reg_cache *c, const json_t *rules,
                           const char *image, int *ok, char *why, size_t nwhy)
{
	const char *at = strchr(image, '@');
	size_t nlen, i, j;
	json_t *rule, *mi;
	int rc, never = 0, matched = 0;
	char name[512];

	*ok = 0;
	if (at == NULL)
		return al_error_set(AL_EPARSE, "'%s' is not by digest", image);
	nlen = (size_t)(at - image);
	if (nlen >= sizeof(name))
		return al_error_set(AL_ELIMIT, "'%s' is too long", image);
	json_array_foreach(rules, i, rule)
	{
		const char *so = al_json_str(rule, "source");
		size_t sl = strlen(so);

		if (sl > nlen || memcmp(image, so, sl) != 0 ||
		    (sl < nlen && image[sl] != '/'))
			continue;
		matched = 1;
		if (al_json_str(rule, "mirrorSourcePolicy") != NULL &&
		    strcmp(al_json_str(rule, "mirrorSourcePolicy"),
		           "NeverContactSource") == 0)
			never = 1;
		json_array_foreach(json_object_get(rule, "mirrors"), j, mi)
		{
			int w;

			if (!json_is_string(mi))
				continue;
			w = snprintf(name, sizeof(name), "%s%.*s",
			             json_string_value(mi), (int)(nlen - sl),
			             image + sl);
			if (w < 0 || (size_t)w >= sizeof(name))
				continue;
			if ((rc = head_present(r, c, name, at + 1, ok, why,
			                       nwhy)) < 0)
				return rc;
			if (*ok)
				return 0;
		}
	}
	if (never)
		return 0;
	memcpy(name, image, nlen);
	name[nlen] = '\0';
	if ((rc = head_present(r, c, name, at + 1, ok, why, nwhy)) < 0)
		return rc;
	if (!*ok && !matched) {
		size_t k = strlen(why);

		snprintf(why + k, nwhy - k,
		         " (no ImageDigestMirrorSet or "
		         "ImageContentSourcePolicy maps it)");
	}
	return 0;
}

/* A verified signature for d from the ClusterVersion's
 * spec.signatureStores (HTTP stores the CVO reads instead of its default
 * one): 0, AL_ENOTFOUND when there are none, or the stores' failure. */
static int store_signature(run *r, const al_digest *d,
                           const al_sig_verify_opts *vo)
{
	size_t nss = json_array_size(json_object_get(
	    json_object_get(r->cv_live, "spec"), "signatureStores"));
	al_sig_fetch_result fr = AL_SIG_FETCH_RESULT_INIT;
	al_buf skipped = AL_BUF_INIT(8192);
	al_sig_fetch_opts fo;
	al_sig_source *src;
	json_t *keep;
	size_t n = 0;
	int rc;

	if (nss == 0)
		return AL_ENOTFOUND;
	src = calloc(nss, sizeof(*src));
	keep = json_array();
	if (src == NULL || keep == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = cv_store_sources(r, src, &n, keep, &skipped)) < 0)
		goto out;
	memset(&fo, 0, sizeof(fo));
	fo.sources = src;
	fo.nsources = n;
	fo.keyring = vo->keyring;
	fo.policy = vo->policy;
	fo.budget_ms = STATUS_WRITE_MS;
	fo.request_timeout_ms = 10000;
	fo.cancel = r->o->cancel;
	rc = n == 0 ? AL_ENOTFOUND : al_sig_fetch(&fr, d, NULL, &fo);
	if (rc == 0)
		emit(r, "signature verified (spec.signatureStores '%s')",
		     src[fr.sigs[0].store].location);
	else if (rc != AL_ENOMEM && skipped.len > 0)
		rc = al_error_set(n == 0 ? AL_EVERIFY : rc, "%s%s%s",
		                  al_buf_cstr(&skipped), n > 0 ? "; " : "",
		                  n > 0 ? al_error_message() : "");
out:
	al_sig_fetch_result_clear(&fr);
	al_buf_free(&skipped);
	json_decref(keep);
	free(src);
	return rc;
}

/* A verified signature for d in the cluster's signature ConfigMaps, else
 * from its spec.signatureStores. */
static int cluster_signature(run *r, const al_digest *d, char **why)
{
	const al_update_opts *o = r->o;
	al_sig_verify_opts vo = AL_SIG_VERIFY_OPTS_INIT;
	al_sig_list l = AL_SIG_LIST_INIT;
	json_t *cms = NULL, *cm;
	size_t i;
	int rc;

	*why = NULL;
	vo.keyring = o->keyring;
	vo.policy = AL_SIG_IDENTITY_IGNORE;
	if (o->keyring == NULL) {
		*why = al_strdup("no trusted keys to verify with (--keyring: "
		                 "the keys the CVO trusts)");
		return 0;
	}
	rc = al_kube_list(o->kube, "v1", "ConfigMap", SIG_CONFIGMAP_NS,
	                  SIG_CONFIGMAP_LABEL, &cms,
	                  al_deadline_in(STATUS_WRITE_MS));
	if (rc == 0) {
		json_array_foreach(json_object_get(cms, "items"), i, cm)
		{
			char *txt = al_json_dump(cm, 0);

			rc = txt == NULL
			         ? al_error_set(AL_ENOMEM, "out of memory")
			         : al_sig_configmap_parse(
			               &l, (const uint8_t *)txt, strlen(txt),
			               "cluster signature ConfigMap", d);
			free(txt);
			if (rc < 0)
				break;
		}
		if (rc == 0)
			rc = al_sig_verify_list(NULL, NULL, &l, d, &vo);
	}
	al_sig_list_clear(&l);
	json_decref(cms);
	if (rc == AL_ENOMEM)
		return rc;
	if (rc < 0) {
		char cmwhy[512];

		/* message text only: truncation intended */
		snprintf(cmwhy, sizeof(cmwhy), "%s",
		         rc == AL_ENOTFOUND ? "no signature"
		                            : al_error_message());
		al_error_clear();
		rc = store_signature(r, d, &vo);
		if (rc == AL_ENOMEM)
			return rc;
		if (rc == 0)
			return 0;
		*why = rc == AL_ENOTFOUND
		           ? al_strdup(cmwhy)
		           : al_sprintf("%s; spec.signatureStores: %s", cmwhy,
		                        al_error_message());
		al_error_clear();
		if (*why == NULL)
			return al_error_set(AL_ENOMEM, "out of memory");
	}
	return 0;
}

/* The cluster's own architecture, the CVO's runtime.GOARCH: that of a
 * control-plane node (status.nodeInfo.architecture; the CVO runs on
 * one), else of any node; "amd64" with a note when no Node can be read.
 * Written into buf. */
static const char *cluster_arch(run *r, char *buf, size_t n)
{
	json_t *nodes = NULL, *nd;
	const char *a = NULL;
	size_t i;
	int rc, best = -1;

	rc = al_kube_list(r->o->kube, "v1", "Node", NULL, NULL, &nodes,
	                  al_deadline_in(STATUS_WRITE_MS));
	json_array_foreach(json_object_get(nodes, "items"), i, nd)
	{
		const json_t *l =
		    json_object_get(json_object_get(nd, "metadata"), "labels");
		const char *na = al_json_str(
		    json_object_get(json_object_get(nd, "status"), "nodeInfo"),
		    "architecture");
		int rank =
		    json_object_get(l, "node-role.kubernetes.io/control-plane")
		        ? 2
		    : json_object_get(l, "node-role.kubernetes.io/master") ? 1
		                                                           : 0;

		if (na != NULL && *na != '\0' && rank > best) {
			a = na;
			best = rank;
		}
	}
	if (a == NULL) {
		emit(r,
		     "note: the cluster's architecture is not known (%s): "
		     "amd64 taken",
		     rc < 0 ? al_error_message() : "no Node says");
		al_error_clear();
		a = "amd64";
	}
	/* message text only: truncation intended */
	snprintf(buf, n, "%s", a);
	json_decref(nodes);
	return buf;
}

/* 1 when the release r is a multi-architecture payload. */
static int release_is_multi(const al_release *rel)
{
	size_t i, len;

	for (i = 0; rel != NULL && i < al_release_file_count(rel); i++)
		if (strcmp(al_release_file_name(rel, i), "release-metadata") ==
		    0)
			return al_update_release_multi(
			    al_release_file_data(rel, i, &len), len);
	return 0;
}

/*
 * The channel (ClusterVersion spec.channel) against the graph of it the
 * store holds (al_graph_load_from_store) for the architecture the CVO
 * would ask for (al_update_graph_arch): the target must be in the
 * channel with an update from the cluster's version (status.desired) to
 * it; for a move from one architecture to multi, as GetUpdates, only the
 * current version's multi payload. *bad (caller frees) says why not; NULL
 * when fine or when there is nothing to check (no channel, no graph in
 * the store: said as a note).
 */
static int check_channel(run *r, const al_release *rel, const char *target,
                         char **bad)
{
	const json_t *cv = r->cv_live;
	const char *ch = al_json_str(json_object_get(cv, "spec"), "channel"),
	           *cur = al_json_str(
	               json_object_get(json_object_get(cv, "status"),
	                               "desired"),
	               "version"),
	           *arch;
	char abuf[64];
	al_graph *g = NULL;
	size_t fi, ti, i;
	int rc, failed = 0, migrating;

	*bad = NULL;
	if (ch == NULL || ch[0] == '\0') {
		emit(r, "note: the cluster has no channel: not checked");
		return 0;
	}
	arch = al_update_graph_arch(cv, release_is_multi(rel),
	                            cluster_arch(r, abuf, sizeof(abuf)),
	                            &migrating);
	emit(r, "channel %s: the graph of architecture %s%s", ch, arch,
	     migrating ? " (a move to multi-architecture)" : "");
	rc = al_graph_load_from_store(&g, r->o->store, ch, arch);
	if (rc == AL_ENOTFOUND) {
		al_error_clear();
		emit(r,
		     "note: channel %s: the store has no graph of it, not "
		     "checked (the request is an explicit update by digest)",
		     ch);
		return 0;
	}
	if (rc < 0)
		return al_error_wrap(rc, "reading the graph of channel %s", ch);
	if (al_graph_find(g, target, &ti) < 0) {
		al_error_clear();
		failed = 1;
		*bad = al_sprintf("%s is not in channel %s (the store's graph "
		                  "for %s)",
		                  target, ch, arch);
		goto out;
	}
	/* GetUpdates: migrating from single to multi architecture, the
	 * only valid update is the multi payload of the current version */
	if (migrating) {
		if (cur == NULL || strcmp(cur, target) != 0) {
			failed = 1;
			*bad = al_sprintf(
			    "a move to multi-architecture goes only to the "
			    "current version's multi payload (%s), not %s "
			    "(channel %s, graph multi)",
			    cur != NULL ? cur : "(unknown)", target, ch);
		}
		goto out;
	}
	if (cur == NULL || al_graph_find(g, cur, &fi) < 0) {
		al_error_clear();
		emit(r, "note: channel %s: the current version %s is not in it",
		     ch, cur != NULL ? cur : "(unknown)");
		goto out;
	}
	for (i = 0; i < g->nedges; i++)
		if (g->edges[i].from == fi && g->edges[i].to == ti)
			goto out;
	for (i = 0; i < g->ncond; i++)
		if (g->cond[i].from == fi && g->cond[i].to == ti) {
			emit(r,
			     "warning: channel %s recommends %s -> %s only "
			     "where its risks do not apply",
			     ch, cur, target);
			goto out;
		}
	failed = 1;
	*bad = al_sprintf("channel %s has no update from %s to %s (the "
	                  "store's graph)",
	                  ch, cur, target);
out:
	al_graph_free(g);
	if (failed && *bad == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	return 0;
}

/* One failed check of the pre-flight, with what to run. */
static void preflight_fail(run *r, al_buf *b, int *n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void preflight_fail(run *r, al_buf *b, int *n, const char *fmt, ...)
{
	char m[2048];
	va_list ap;
	int w;

	va_start(ap, fmt);
	w = vsnprintf(m, sizeof(m), fmt, ap);
	va_end(ap);
	if (w < 0)
		m[0] = '\0';
	(*n)++;
	emit(r, "pre-flight check failed: %s", m);
	al_buf_printf(b, "%s%s", *n > 1 ? "; " : "", m);
}

/*
 * The pre-flight: nothing is written. Checks what the CVO needs to accept
 * and apply the release, each failure naming what to run.
 */
static int cvo_preflight(update_run *c, int *nfail, al_buf *fails)
{
	const al_update_opts *o = c->o;
	run *r = &c->r;
	reg_cache rc_ = {{NULL}, 0};
	json_t *rules = NULL;
	record none;
	char *what = NULL, *why = NULL, *pre = NULL, *ur = NULL, *um = NULL,
	     *chan = NULL;
	char hw[1024];
	size_t i, nmissing = 0;
	int rc, running = 0, served = 0, npre = 0, ok;

	*nfail = 0;
	memset(&none, 0, sizeof(none));
	none.state = AL_UPDATE_INITIALIZING;
	if ((rc = find_cvo(r, &running, &what)) < 0)
		goto out;
	if (!running)
		preflight_fail(r, fails, nfail,
		               "no cluster-version-operator runs in %s: update "
		               "with airlock itself (without --via-cvo)",
		               CVO_NAMESPACE);
	if ((rc = read_cluster_version(r, &served)) < 0)
		goto out;
	if (r->cv_live == NULL) {
		preflight_fail(
		    r, fails, nfail,
		    "the cluster has no ClusterVersion %s to request "
		    "the update in",
		    CV_NAME);
		goto out;
	}
	/* 1. every image where the cluster pulls it from */
	if ((rc = mirror_rules(r, &rules)) < 0)
		goto out;
	for (i = 0; i <= al_release_component_count(c->rel); i++) {
		const char *img =
		    i == 0 ? c->image
		           : al_release_component_at(c->rel, i - 1)->image;

		if (img == NULL || strchr(img, '@') == NULL)
			continue;
		if ((rc = image_reachable(r, &rc_, rules, img, &ok, hw,
		                          sizeof(hw))) < 0)
			goto out;
		if (!ok && nmissing++ < 5)
			preflight_fail(
			    r, fails, nfail,
			    "%s is not where the cluster pulls it "
			    "from: %s (run: airlock push --store %s "
			    "docker://MIRROR, then airlock mirrorsets "
			    "--store %s | oc apply -f -)",
			    img, hw, al_store_path(o->store),
			    al_store_path(o->store));
	}
	if (nmissing > 5)
		preflight_fail(r, fails, nfail,
		               "... and %zu more images missing", nmissing - 5);
	/* 2. a signature the CVO can verify, in the cluster */
	if ((rc = cluster_signature(r, &c->d, &why)) < 0)
		goto out;
	if (why != NULL && !o->force)
		preflight_fail(
		    r, fails, nfail,
		    "no signature for %s in the cluster's ConfigMaps "
		    "(%s, label %s) or spec.signatureStores verifies: %s "
		    "(run: airlock "
		    "configmaps --store %s %s -o - | oc apply -f -)",
		    c->digest, SIG_CONFIGMAP_NS, SIG_CONFIGMAP_LABEL, why,
		    al_store_path(o->store), c->version);
	/* 3. the preconditions: Upgradeable, admin acks, overrides, giant
	 * hops (the CVO's own, which --force skips, as the CVO's Force) */
	if ((rc = preconditions(r, &none, c->version, &npre, &pre, &ur, &um)) <
	    0)
		goto out;
	if (npre > 0 && !o->force)
		preflight_fail(r, fails, nfail,
		               "%s (fix it, e.g. acknowledge admin gates or "
		               "remove overrides; or rerun with --force)",
		               pre);
	else if (npre > 0)
		emit(r, "warning: forced through: %s", pre);
	/* 4. the channel */
	if ((rc = check_channel(r, c->rel, c->version, &chan)) < 0)
		goto out;
	if (chan != NULL && !o->force)
		preflight_fail(r, fails, nfail,
		               "%s (mirror the update path into the store, or "
		               "rerun with --force to request it as an "
		               "explicit update)",
		               chan);
	else if (chan != NULL)
		emit(r, "warning: forced through: %s", chan);
out:
	reg_cache_clear(&rc_);
	json_decref(rules);
	free(what);
	free(why);
	free(pre);
	free(ur);
	free(um);
	free(chan);
	return rc;
}

/* The history entry of ClusterVersion for image (by digest), or NULL. */
static const json_t *cvo_entry(const json_t *cv, const char *digest)
{
	size_t i;
	json_t *e;

	json_array_foreach(
	    json_object_get(json_object_get(cv, "status"), "history"), i, e)
	{
		const char *im = al_json_str(e, "image");

		if (im != NULL && al_str_endswith(im, digest))
			return e;
	}
	return NULL;
}

static int cvo_outcome(al_update_result *res, int rc)
{
	res->outcome =
	    rc == 0 ? AL_UPDATE_OUTCOME_APPLIED : AL_UPDATE_OUTCOME_FAILED;
	return rc;
}

/* Watch ClusterVersion until the entry for our image is Completed, or a
 * terminal condition, or the deadline. */
static int cvo_watch(update_run *c)
{
	const al_update_opts *o = c->o;
	run *r = &c->r;
	uint64_t poll = o->poll_ms != 0 ? o->poll_ms : DEFAULT_POLL_MS;
	al_deadline dl =
	    al_deadline_in(o->cvo_timeout_ms != 0 ? o->cvo_timeout_ms
	                                          : CVO_DEFAULT_TIMEOUT_MS);
	char last[256] = "", state[32] = "not started";
	json_t *cv = NULL;
	int rc;

	for (;;) {
		const json_t *e, *fc, *ra, *du;
		const char *st, *dimg;

		json_decref(cv);
		cv = NULL;
		rc = al_kube_get(
		    o->kube, CV_API, CV_KIND, NULL, CV_NAME, &cv,
		    al_deadline_min(dl, al_deadline_in(STATUS_WRITE_MS)));
		if (rc < 0 && rc != AL_ENET && rc != AL_ETIMEOUT &&
		    rc != AL_EPROTO)
			goto out;
		if (rc == 0) {
			du = json_object_get(json_object_get(cv, "spec"),
			                     "desiredUpdate");
			dimg = al_json_str(du, "image");
			e = cvo_entry(cv, c->digest);
			st = al_json_str(e, "state");
			if (st != NULL)
				snprintf(state, sizeof(state), "%s", st);
			if (st != NULL && strcmp(st, "Completed") == 0) {
				emit(r, "the CVO completed the update to %s",
				     c->version);
				rc = 0;
				goto out;
			}
			if (dimg == NULL || !al_str_endswith(dimg, c->digest)) {
				rc = al_error_set(
				    AL_ECANCELED,
				    "update to %s retargeted by someone else: "
				    "spec.desiredUpdate is now '%s'",
				    c->version, dimg != NULL ? dimg : "(none)");
				goto out;
			}
			ra = find_cond(cv, "ReleaseAccepted");
			if (is_false(ra) &&
			    al_json_str(ra, "message") != NULL &&
			    strstr(al_json_str(ra, "message"), c->digest)) {
				rc = al_error_set(AL_EVERIFY,
				                  "the CVO rejected %s: "
				                  "ReleaseAccepted=False "
				                  "(%s): %s",
				                  c->version,
				                  cond_str(ra, "reason"),
				                  cond_str(ra, "message"));
				goto out;
			}
			fc = find_cond(cv, "Failing");
			if (e != NULL && fc != NULL &&
			    strcmp(cond_str(fc, "status"), "True") == 0) {
				rc = al_error_set(
				    AL_EIO,
				    "the CVO's update to %s is failing: "
				    "Failing=True (%s): %s",
				    c->version, cond_str(fc, "reason"),
				    cond_str(fc, "message"));
				goto out;
			}
			{
				const json_t *pc = find_cond(cv, "Progressing");
				char now_msg[256];

				snprintf(now_msg, sizeof(now_msg), "%s%s%s",
				         st != NULL ? st : "not started",
				         pc != NULL ? ": " : "",
				         pc != NULL ? cond_str(pc, "message")
				                    : "");
				if (strcmp(now_msg, last) != 0) {
					emit(r, "cvo: %s", now_msg);
					memcpy(last, now_msg, sizeof(last));
				}
			}
		}
		if (al_deadline_expired(dl)) {
			rc = al_error_set(AL_ETIMEOUT,
			                  "the CVO's update to %s is %s at the "
			                  "deadline (--cvo-timeout): %s",
			                  c->version, state, last);
			goto out;
		}
		{
			uint64_t rem = al_deadline_remaining_ms(dl);

			if (al_sleep_ms(poll < rem ? poll : rem, o->cancel) <
			    0) {
				rc = al_error_set(AL_ECANCELED, "cancelled");
				goto out;
			}
		}
	}
out:
	json_decref(cv);
	return rc;
}

/* The whole --via-cvo run: resolve, pre-flight, request, watch. */
static int run_via_cvo(update_run *c)
{
	const al_update_opts *o = c->o;
	run *r = &c->r;
	al_update_result *res = r->res;
	al_buf fails = AL_BUF_INIT(64 * 1024);
	json_t *req = NULL;
	int rc, nfail = 0;

	if ((rc = resolve(r, &c->version, &c->digest, &c->image)) < 0)
		goto out;
	res->version = al_strdup(c->version);
	res->digest = al_strdup(c->digest);
	if (res->version == NULL || res->digest == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = al_digest_parse_str(&c->d, c->digest)) < 0 ||
	    (rc = al_release_open(&c->rel, o->store, &c->d, NULL)) < 0)
		goto out;
	if ((rc = cvo_preflight(c, &nfail, &fails)) < 0)
		goto out;
	if (nfail > 0) {
		res->outcome = AL_UPDATE_OUTCOME_REFUSED;
		rc = al_error_set(AL_EINVAL,
		                  "pre-flight for the CVO's update to %s: %d "
		                  "check(s) failed (listed above), nothing was "
		                  "changed",
		                  c->version, nfail);
		goto out;
	}
	emit(r,
	     "pre-flight passed: %s (%s) is in the registries the cluster "
	     "pulls from, signed in the cluster, not blocked",
	     c->version, c->image);
	if (o->dry_run) {
		res->outcome = AL_UPDATE_OUTCOME_APPLIED;
		goto out;
	}
	/* spec.desiredUpdate by digest (oc adm upgrade
	 * --allow-explicit-upgrade --to-image=IMAGE) */
	req = json_pack("{s:s, s:s, s:{s:s}, s:{s:{s:s, s:s, s:b}}}",
	                "apiVersion", CV_API, "kind", CV_KIND, "metadata",
	                "name", CV_NAME, "spec", "desiredUpdate", "version",
	                c->version, "image", c->image, "force", o->force);
	if (req == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = al_kube_apply(o->kube, req, NULL,
	                        al_deadline_in(STATUS_WRITE_MS))) < 0) {
		rc = al_error_wrap(rc, "requesting the update in %s/%s",
		                   CV_KIND, CV_NAME);
		goto out;
	}
	emit(r, "requested %s (%s) in ClusterVersion spec.desiredUpdate%s",
	     c->version, c->image, o->force ? " (force)" : "");
	rc = cvo_outcome(res, cvo_watch(c));
out:
	json_decref(req);
	al_buf_free(&fails);
	return rc;
}

int al_update_run(const al_update_opts *o, al_update_result *res)
{
	update_run c;
	int rc;

	if ((rc = AL_RESULT_VERSION_CHECK("al_update_result", res,
	                                  result_version,
	                                  AL_UPDATE_RESULT_VERSION)) < 0)
		return rc;
	if (o != NULL &&
	    (rc = al_opts_version_check("al_update_opts", o->version,
	                                AL_UPDATE_OPTS_VERSION)) < 0)
		return rc;
	if (o == NULL || res == NULL || o->store == NULL || o->target == NULL ||
	    (o->kube == NULL && !o->dry_run))
		return al_error_set(AL_EINVAL,
		                    "al_update_run: store, target and (unless "
		                    "a dry run) a cluster are required");
	AL_RESULT_ZERO_KEEP(res, result_version);
	res->outcome = AL_UPDATE_OUTCOME_FAILED;
	memset(&c, 0, sizeof(c));
	c.o = o;
	c.oc = *o;
	c.r.o = &c.oc;
	c.r.res = res;
	pthread_mutex_init(&c.r.mu, NULL);

	if (o->via_cvo && o->kube == NULL) {
		rc = al_error_set(AL_EINVAL, "--via-cvo needs a cluster");
		goto out;
	}
	if (!o->via_cvo && !o->take_over && o->kube != NULL) {
		int running = 0;
		char *what = NULL;

		/* a cluster whose CVO runs is updated through it */
		if ((rc = find_cvo(&c.r, &running, &what)) < 0)
			goto out;
		if (running)
			emit(&c.r,
			     "a cluster-version-operator updates this cluster "
			     "(%s): updating through it (as --via-cvo); "
			     "--take-over makes airlock the updater instead",
			     what);
		free(what);
		res->via_cvo = running;
	}
	if (o->via_cvo || res->via_cvo) {
		res->via_cvo = 1;
		rc = run_via_cvo(&c);
		goto out;
	}
	if ((rc = run_own(&c)) < 0 || (rc = run_target(&c)) < 0)
		goto out;
	run_accept(&c);
	if ((rc = run_preconditions(&c)) < 0 || (rc = run_load(&c)) < 0)
		goto out;
	if (o->dry_run) {
		rc = run_dry(&c);
		goto out;
	}
	if (!res->accepted) {
		rc = run_refuse(&c);
		goto out;
	}
	if ((rc = run_enter_updating(&c)) < 0)
		goto out;
	rc = run_apply(&c);
	run_settle(&c);
	if (res->outcome != AL_UPDATE_OUTCOME_APPLIED)
		run_fail_message(&c);
	rc = run_record(&c, rc);
out:
	run_end(&c, rc);
	return rc;
}

/* --- what a decision record holds on to (airlock delete) ------------------ */

int al_update_record_releases(const char *state_path, char ***out, size_t *n)
{
	record rec;
	json_t *v = NULL, *e;
	char **list = NULL;
	size_t i, k = 0;
	int rc;

	if (state_path == NULL || out == NULL || n == NULL)
		return al_error_set(AL_EINVAL,
		                    "al_update_record_releases: NULL");
	if ((rc = al_json_load_file(&v, state_path,
	                            AL_UPDATE_MAX_STATE_BYTES)) < 0)
		return al_error_wrap(rc, "reading state file '%s'", state_path);
	rc = record_from_json(&rec, v, state_path);
	json_decref(v);
	if (rc < 0)
		return rc;
	if ((list = calloc(3, sizeof(*list))) == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	/* the release it moves to, and the one it runs: the newest
	 * Completed history entry */
	if (rec.digest != NULL && (list[k++] = al_strdup(rec.digest)) == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	json_array_foreach(rec.history, i, e)
	{
		const char *st = al_json_str(e, "state");
		const char *d = al_json_str(e, "digest");
		if (st == NULL || strcmp(st, "Completed") != 0 || d == NULL)
			continue;
		if ((rec.digest == NULL || strcmp(d, rec.digest) != 0) &&
		    (list[k++] = al_strdup(d)) == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		break;
	}
	*out = list;
	*n = k;
	list = NULL;
out:
	if (list != NULL) {
		for (i = 0; i < k; i++)
			free(list[i]);
		free(list);
	}
	record_clear(&rec);
	return rc;
}
