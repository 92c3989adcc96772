/* update_state.c: the updater's state machine: pure functions of the
 * decision record's state, the run's mode and its outcome (no I/O), tested
 * exhaustively by a table in tests/unit/test_update.c. Declared in the
 * public airlock/update.h. */
#include <stddef.h>
#include <string.h>

#include "airlock/update.h"
#include "update_int.h"
#include "airlock/buf.h"
#include "airlock/error.h"

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

/* The HTTP status in an al_kube message "METHOD 'PATH': NNN ...", or 0. */
static int http_status(const char *msg)
{
	const char *p = msg != NULL ? strstr(msg, "': ") : NULL;
	int st = 0, i;

	if (p == NULL)
		return 0;
	p += 3;
	for (i = 0; i < 3; i++) {
		if (p[i] < '0' || p[i] > '9')
			return 0;
		st = st * 10 + (p[i] - '0');
	}
	return p[3] == ' ' || p[3] == '\0' ? st : 0;
}

const char *al_update_failure_reason(int rc, const char *msg)
{
	/* pkg/cvo/internal/operatorstatus.go and lib/resourcebuilder's
	 * reasons, named in the message where the failure was found */
	static const char *const named[] = {
	    "ClusterOperatorNotAvailable", "ClusterOperatorDegraded",
	    "ClusterOperatorNoVersions",   "ClusterOperatorUpdating",
	    "WorkloadNotAvailable",        "WorkloadNotProgressing",
	};
	size_t i;
	int st;

	for (i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (msg != NULL && strstr(msg, named[i]) != NULL)
			return named[i];
	/* pkg/payload/task.go reasonForPayloadSyncError */
	st = http_status(msg);
	if (rc == AL_EAUTH)
		return st == 401 ? "UpdatePayloadClusterUnauthorized"
		                 : "UpdatePayloadResourceForbidden";
	if (rc == AL_ENOTFOUND || st == 404)
		return "UpdatePayloadResourceNotFound";
	if (rc == AL_EEXIST || st == 409)
		return "UpdatePayloadResourceConflict";
	if (st == 422 || st == 400)
		return "UpdatePayloadResourceInvalid";
	if (st == 429)
		return "UpdatePayloadClusterOverloaded";
	if (st == 500)
		return "UpdatePayloadClusterError";
	if (st >= 501 || rc == AL_ENET)
		return "UpdatePayloadClusterDown";
	return "UpdatePayloadFailed";
}
