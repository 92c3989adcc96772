/* update.c: one update run: target resolution, acceptance (signatures),
 * persisted state and status, parallel apply by run level. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "airlock/update.h"
#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/json.h"
#include "airlock/log.h"
#include "airlock/sig.h"

#define DEFAULT_SIG_TIMEOUT_MS 30000
#define DEFAULT_SYNC_TIMEOUT_MS (40 * 60 * 1000)
#define DEFAULT_PARALLEL 8
#define DEFAULT_POLL_MS 500
#define STATUS_WRITE_MS                                                        \
	30000 /* each status write has its own bound, never the sync budget */
#define MAX_ERRORS_KEPT 8
#define SIG_CONFIGMAP_NS "openshift-config-managed"
#define SIG_CONFIGMAP_LABEL "release.openshift.io/verification-signatures"

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

static void rfc3339(char out[32], uint64_t wall_ms)
{
	time_t t = (time_t)(wall_ms / 1000);
	struct tm tm;

	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		memcpy(out, "1970-01-01T00:00:00Z",
		       sizeof("1970-01-01T00:00:00Z"));
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
	int failing;
	const char *fail_message;
	size_t applied;
	size_t total;
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

	rfc3339(now, al_clock_wall_ms());
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
	size_t nerrors;
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

/* Persist the record (local file, then the cluster object), the cluster
 * writes bounded by dl. */
static int save(run *r, const record *rec, const report *rp, al_deadline dl)
{
	const al_update_opts *o = r->o;
	json_t *st = NULL, *doc = NULL, *obj = NULL, *crd = NULL;
	int rc = 0;

	if (o->dry_run)
		return 0;
	st = status_json(rec, rp);
	if (st == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
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
			goto out;
		}
	}
	if (o->kube == NULL)
		goto out;
	if (!r->crd_done) {
		crd = json_loads(crd_json, 0, NULL);
		if (crd == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		if ((rc = al_kube_apply(o->kube, crd, NULL, dl)) < 0) {
			rc = al_error_wrap(
			    rc, "applying the ClusterUpdate definition");
			goto out;
		}
		r->crd_done = 1;
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
		goto out;
	}
	json_object_del(obj, "spec");
	json_object_set(obj, "status", st);
	if ((rc = al_kube_apply_status(o->kube, obj, NULL, dl)) < 0)
		rc =
		    al_error_wrap(rc, "writing the status of %s/%s",
		                  AL_UPDATE_STATUS_KIND, AL_UPDATE_STATUS_NAME);
out:
	json_decref(crd);
	json_decref(obj);
	json_decref(doc);
	json_decref(st);
	return rc;
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
	json_t *doc = NULL, *e, *found = NULL;
	size_t i;
	int by_digest, rc;

	if ((rc = al_store_releases_load(r->o->store, &doc)) < 0)
		return rc;
	by_digest = al_str_startswith(target, "sha256:");
	json_array_foreach(json_object_get(doc, "releases"), i, e)
	{
		const char *v = al_json_str(e, "version"),
		           *d = al_json_str(e, "digest");

		if (d == NULL ||
		    (by_digest ? strcmp(d, target)
		               : (v == NULL || strcmp(v, target))) != 0)
			continue;
		if (found != NULL &&
		    strcmp(al_json_str(found, "digest"), d) != 0) {
			rc = al_error_set(AL_EINVAL,
			                  "version '%s' names several releases "
			                  "in the store: give the digest",
			                  target);
			goto out;
		}
		found = e;
	}
	if (found == NULL) {
		rc = al_error_set(AL_ENOTFOUND,
		                  "release '%s' is not in the store '%s' "
		                  "(airlock/releases.json)",
		                  target, al_store_path(r->o->store));
		goto out;
	}
	*version = al_strdup(al_json_str(found, "version")
	                         ? al_json_str(found, "version")
	                         : target);
	*digest = al_strdup(al_json_str(found, "digest"));
	*image = image_of(al_json_str(found, "source"),
	                  al_json_str(found, "digest"));
	if (*version == NULL || *digest == NULL || *image == NULL)
		rc = al_error_set(AL_ENOMEM, "out of memory");
out:
	json_decref(doc);
	return rc;
}

/* --- accept ------------------------------------------------------------ */

/* Verify the release's signatures within the signature budget. Returns 0
 * verified, else a negative code with the reason in *why (caller frees). */
static int accept_release(run *r, const al_digest *d, al_deadline dl,
                          char **why)
{
	const al_update_opts *o = r->o;
	al_sig_verify_opts vo;
	al_sig_list l = AL_SIG_LIST_INIT;
	al_buf reasons = AL_BUF_INIT(16 * 1024);
	al_sig_source *src = NULL;
	al_sig_fetch_result fr = AL_SIG_FETCH_RESULT_INIT;
	json_t *cms = NULL;
	char *txt = NULL;
	int rc;

	*why = NULL;
	memset(&vo, 0, sizeof(vo));
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
	/* 2. the cluster's signature ConfigMaps */
	if (o->kube != NULL && !al_deadline_expired(dl)) {
		rc = al_kube_list(o->kube, "v1", "ConfigMap", SIG_CONFIGMAP_NS,
		                  SIG_CONFIGMAP_LABEL, &cms, dl);
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
	/* 3. HTTP signature stores, concurrently, under what is left */
	if (o->nsignature_stores > 0) {
		al_sig_fetch_opts fo;
		size_t i;

		src = calloc(o->nsignature_stores, sizeof(*src));
		if (src == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		for (i = 0; i < o->nsignature_stores; i++) {
			src[i].kind = AL_SIG_SOURCE_HTTP;
			src[i].location = o->signature_stores[i];
		}
		memset(&fo, 0, sizeof(fo));
		fo.sources = src;
		fo.nsources = o->nsignature_stores;
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
		rc = al_sig_fetch(&fr, d, NULL, &fo);
		if (rc == 0) {
			emit(r, "signature verified (signature store '%s')",
			     o->signature_stores[fr.sigs[0].store]);
			goto out;
		}
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
	const json_t *want =
	    json_object_get(json_object_get(t->obj, "status"), "versions");
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
	    json_array_size(json_object_get(json_object_get(t->obj, "status"),
	                                    "versions")) == 0) {
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

/* Wait before the next attempt of a transient failure, within the sync
 * deadline: 0 to retry, or the error that ends the task. */
static int retry_wait(run *r, const al_update_task *t, unsigned attempt)
{
	uint64_t rem, b;

	if (al_deadline_expired(r->dl))
		return al_error_set(AL_ETIMEOUT, "sync deadline reached: %s",
		                    al_error_message());
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
	if (t->create_only || r->mode == AL_UPDATE_MODE_RECONCILE) {
		rc = al_kube_get(o->kube, t->api_version, t->kind, t->ns,
		                 t->name, &live, r->dl);
		if (rc == 0 && t->create_only) {
			json_decref(live);
			return 0;
		}
		if (rc == 0 && !contained(t->obj, live, 1))
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
		rc = al_kube_apply(o->kube, t->obj, NULL, r->dl);
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
	return al_cancel_is_set(r->o->cancel) || al_deadline_expired(r->dl);
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
				rc = al_cancel_is_set(r->o->cancel)
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
				int c = al_cancel_is_set(o->cancel)
				            ? AL_ECANCELED
				            : AL_ETIMEOUT;

				record_error(
				    r, c,
				    &g->tasks[g->components[lv->first].first],
				    c == AL_ECANCELED
				        ? "cancelled before applying"
				        : "sync deadline reached before "
				          "applying");
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
} filters;

static void filters_clear(filters *f)
{
	json_decref(f->fg);
	json_decref(f->cv);
	free(f->gates);
	free(f->caps);
	free(f->known);
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
	              "%zu capability; %zu manifests/ templates skipped)\n",
	              g->ntasks, g->nlevels, g->ncomponents, g->skipped,
	              g->skipped_feature, g->skipped_capability,
	              g->skipped_template);
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
	memset(res, 0, sizeof(*res));
}

static json_t *history_entry(const char *version, const char *image,
                             const char *digest, int verified)
{
	char now[32];

	rfc3339(now, al_clock_wall_ms());
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:n, s:b}", "version",
	                 version, "image", image, "digest", digest, "state",
	                 "Partial", "started", now, "completed", "verified",
	                 verified);
}

int al_update_run(const al_update_opts *o, al_update_result *res)
{
	run r;
	record rec;
	report rp;
	al_release *rel = NULL;
	al_update_graph *g = NULL;
	al_update_load_opts lo;
	filters flt;
	al_digest d;
	al_lock *lock = NULL;
	char *version = NULL, *digest = NULL, *image = NULL, *why = NULL,
	     *lockpath = NULL;
	uint64_t t0;
	int rc, same, completed = 0, vrc;
	al_update_state before;
	json_t *h0;

	if (o == NULL || res == NULL || o->store == NULL || o->target == NULL ||
	    (o->kube == NULL && !o->dry_run))
		return al_error_set(AL_EINVAL,
		                    "al_update_run: store, target and (unless "
		                    "a dry run) a cluster are required");
	memset(res, 0, sizeof(*res));
	res->outcome = AL_UPDATE_OUTCOME_FAILED;
	memset(&r, 0, sizeof(r));
	memset(&rec, 0, sizeof(rec));
	memset(&rp, 0, sizeof(rp));
	memset(&flt, 0, sizeof(flt));
	r.o = o;
	r.res = res;
	pthread_mutex_init(&r.mu, NULL);

	if (o->state_path != NULL && !o->dry_run) {
		lockpath = al_sprintf("%s.lock", o->state_path);
		if (lockpath == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		if ((rc = al_lock_acquire(&lock, lockpath, 0)) < 0) {
			rc = al_error_wrap(rc, "another update holds '%s'",
			                   lockpath);
			goto out;
		}
	}
	/* The persisted state decides; a state that cannot be read stops us. */
	if ((rc = load(&r, &rec)) < 0)
		goto out;
	before = rec.state;
	res->state = rec.state;
	if ((rc = resolve(&r, &version, &digest, &image)) < 0)
		goto out;
	if ((rc = al_digest_parse_str(&d, digest)) < 0)
		goto out;
	res->version = al_strdup(version);
	res->digest = al_strdup(digest);
	same = rec.digest != NULL && strcmp(rec.digest, digest) == 0;
	h0 = json_array_get(rec.history, 0);
	completed = h0 != NULL &&
	            strcmp(al_json_str(h0, "digest"), digest) == 0 &&
	            strcmp(al_json_str(h0, "state"), "Completed") == 0;
	r.mode = al_update_choose_mode(rec.state, same, completed);
	res->mode = r.mode;
	emit(&r, "state %s; %s %s (%s)", al_update_state_name(rec.state),
	     r.mode == AL_UPDATE_MODE_RECONCILE ? "reconciling"
	     : r.mode == AL_UPDATE_MODE_RESUME  ? "resuming update to"
	                                        : "updating to",
	     version, digest);

	/* Phase 1: accept, under its own budget. */
	t0 = al_clock_now_ms();
	vrc = accept_release(&r, &d,
	                     al_deadline_in(o->signature_timeout_ms
	                                        ? o->signature_timeout_ms
	                                        : DEFAULT_SIG_TIMEOUT_MS),
	                     &why);
	res->accept_ms = al_clock_now_ms() - t0;
	res->verified = vrc == 0;
	res->accepted = vrc == 0 || o->force;
	res->accept_message = why;
	why = NULL;
	rp.verified = res->verified;
	rp.accepted = res->accepted;
	rp.accept_reason = res->verified ? "Verified"
	                   : o->force    ? "Forced"
	                                 : "NotVerified";
	rp.accept_message =
	    res->verified ? "release signature verified" : res->accept_message;
	emit(&r, "release %s %s%s%s (%.1fs)", version,
	     res->verified ? "verified"
	     : o->force    ? "NOT verified, forced"
	                   : "refused: not verified",
	     res->verified ? "" : ": ",
	     res->verified ? ""
	                   : (res->accept_message ? res->accept_message : ""),
	     (double)res->accept_ms / 1000.0);

	if (al_cancel_is_set(o->cancel)) {
		rc = al_error_set(
		    AL_ECANCELED,
		    "update to %s cancelled before anything was applied",
		    version);
		goto out;
	}

	/* Phase 2: load. */
	memset(&lo, 0, sizeof(lo));
	lo.profile = o->profile;
	lo.exclude = o->exclude;
	lo.release_image = image;
	if ((rc = cluster_filters(&r, &rec, version, &flt, &lo)) < 0)
		goto out;
	if ((rc = al_release_open(&rel, o->store, &d, NULL)) < 0 ||
	    (rc = al_update_graph_from_release(&g, rel, &lo)) < 0) {
		rc = al_error_wrap(rc, "loading release %s", version);
		goto out;
	}
	res->total = rp.total = g->ntasks;

	if (o->dry_run) {
		char *p = plan_text(g),
		     *head = al_sprintf(
		         "release %s (%s): %s\nmode: %s (%s -> %s when every "
		         "manifest applied)\n",
		         version, digest,
		         res->verified ? "accepted (signature verified)"
		         : o->force    ? "accepted (forced, not verified)"
		                       : "refused (not verified)",
		         r.mode == AL_UPDATE_MODE_RECONCILE ? "reconcile"
		         : r.mode == AL_UPDATE_MODE_RESUME  ? "resume update"
		                                            : "new update",
		         al_update_state_name(rec.state), "Reconciling");

		res->plan = (p != NULL && head != NULL)
		                ? al_sprintf("%s%s", head, p)
		                : NULL;
		free(p);
		free(head);
		if (res->plan == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		res->outcome = res->accepted ? AL_UPDATE_OUTCOME_APPLIED
		                             : AL_UPDATE_OUTCOME_REFUSED;
		rc = res->accepted
		         ? 0
		         : al_error_set(
		               AL_EVERIFY,
		               "release %s refused: not verified: %s", version,
		               res->accept_message ? res->accept_message : "");
		goto out;
	}

	if (!res->accepted) {
		/* Refused: nothing applied, the decision state is unchanged. */
		res->outcome = AL_UPDATE_OUTCOME_REFUSED;
		res->state =
		    al_update_next_state(rec.state, r.mode, res->outcome);
		rp.applied = 0;
		if ((rc = save(&r, &rec, &rp,
		               al_deadline_in(STATUS_WRITE_MS))) < 0)
			goto out;
		rc = al_error_set(
		    AL_EVERIFY,
		    "release %s refused: not verified (use --force to apply "
		    "anyway): %s",
		    version, res->accept_message ? res->accept_message : "");
		goto out;
	}

	/* Enter Updating (persisted before anything is applied). */
	if (r.mode != AL_UPDATE_MODE_RECONCILE) {
		h0 = json_array_get(rec.history, 0);
		if (r.mode == AL_UPDATE_MODE_NEW || h0 == NULL ||
		    strcmp(al_json_str(h0, "digest"), digest) != 0) {
			json_t *e = history_entry(version, image, digest,
			                          res->verified);

			if (e == NULL ||
			    json_array_insert_new(rec.history, 0, e) < 0) {
				rc = al_error_set(AL_ENOMEM, "out of memory");
				goto out;
			}
			while (json_array_size(rec.history) >
			       AL_UPDATE_MAX_HISTORY)
				json_array_remove(rec.history,
				                  json_array_size(rec.history) -
				                      1);
		} else if (res->verified) {
			json_object_set_new(h0, "verified", json_true());
		}
		rec.state = AL_UPDATE_UPDATING;
		free(rec.version);
		free(rec.digest);
		free(rec.image);
		rec.version = version;
		rec.digest = digest;
		rec.image = image;
		version = digest = image = NULL;
	}
	if ((rc = save(&r, &rec, &rp, al_deadline_in(STATUS_WRITE_MS))) < 0) {
		rc = al_error_wrap(
		    rc,
		    "not applying anything: cannot persist the update state");
		goto out;
	}

	/* Phase 3: apply, under its own budget that starts now. */
	r.dl = al_deadline_in(o->sync_timeout_ms ? o->sync_timeout_ms
	                                         : DEFAULT_SYNC_TIMEOUT_MS);
	t0 = al_clock_now_ms();
	rc = apply_graph(&r, g, &rec, &rp);
	res->apply_ms = al_clock_now_ms() - t0;
	res->applied = rp.applied = r.applied;
	emit(&r, "apply phase ended after %.1fs: applied %zu of %zu",
	     (double)res->apply_ms / 1000.0, r.applied, g->ntasks);
	res->outcome = al_update_outcome_of(rc, r.applied, g->ntasks);
	if (res->outcome != AL_UPDATE_OUTCOME_APPLIED && rc == 0)
		rc = al_error_set(AL_EIO, "not every manifest applied");
	rec.state = al_update_next_state(rec.state, r.mode, res->outcome);
	h0 = json_array_get(rec.history, 0);
	if (h0 != NULL && r.mode != AL_UPDATE_MODE_RECONCILE) {
		al_update_hstate cur =
		    strcmp(al_json_str(h0, "state"), "Completed") == 0
		        ? AL_UPDATE_COMPLETED
		        : AL_UPDATE_PARTIAL;
		al_update_hstate nh =
		    al_update_next_hstate(r.mode, res->outcome, cur);

		json_object_set_new(h0, "state",
		                    json_string(al_update_hstate_name(nh)));
		if (nh == AL_UPDATE_COMPLETED) {
			char now[32];

			rfc3339(now, al_clock_wall_ms());
			json_object_set_new(h0, "completed", json_string(now));
		}
	}
	res->state = rec.state;
	if (res->outcome != AL_UPDATE_OUTCOME_APPLIED) {
		const char *errs[MAX_ERRORS_KEPT];
		size_t i;

		for (i = 0; i < r.nerrors; i++)
			errs[i] = r.errors[i];
		if (r.mode == AL_UPDATE_MODE_RECONCILE) {
			char *m = al_update_failure_message(
			    rec.version, r.applied, g->ntasks, errs, r.nerrors);

			res->message =
			    m != NULL ? al_sprintf("reconciling %s",
			                           m + strlen("update to "))
			              : NULL;
			free(m);
		} else {
			res->message = al_update_failure_message(
			    rec.version, r.applied, g->ntasks, errs, r.nerrors);
		}
		rp.failing = 1;
		rp.fail_message = res->message;
	}
	{
		int src = save(&r, &rec, &rp, al_deadline_in(STATUS_WRITE_MS));

		if (src < 0 && res->outcome == AL_UPDATE_OUTCOME_APPLIED) {
			/* Not recorded as Completed: the next run resumes and
			 * completes. */
			res->outcome = AL_UPDATE_OUTCOME_FAILED;
			res->state = before == AL_UPDATE_RECONCILING &&
			                     r.mode == AL_UPDATE_MODE_RECONCILE
			                 ? before
			                 : AL_UPDATE_UPDATING;
			res->message = al_sprintf(
			    "update to %s applied but not recorded: %s",
			    rec.version, al_error_message());
			rc = src;
			goto out;
		}
	}
	if (res->outcome != AL_UPDATE_OUTCOME_APPLIED) {
		rc = al_error_set(rc, "%s",
		                  res->message != NULL ? res->message
		                                       : "update failed");
		goto out;
	}
	emit(&r, "%s %s: applied %zu of %zu; state %s",
	     r.mode == AL_UPDATE_MODE_RECONCILE ? "reconciled"
	                                        : "completed update to",
	     rec.version, r.applied, g->ntasks,
	     al_update_state_name(rec.state));
	rc = 0;
out : {
	size_t i;

	for (i = 0; i < r.nerrors; i++)
		free(r.errors[i]);
}
	al_update_graph_free(g);
	al_release_free(rel);
	filters_clear(&flt);
	record_clear(&rec);
	free(version);
	free(digest);
	free(image);
	free(why);
	al_lock_free(lock);
	free(lockpath);
	pthread_mutex_destroy(&r.mu);
	return rc;
}
