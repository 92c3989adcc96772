/* update.h: the updater: payload loading, run-level task graph, parallel apply,
 * state machine, persisted status and history. */
#ifndef AIRLOCK_UPDATE_H
#define AIRLOCK_UPDATE_H

#include "common.h"
#include "clock.h"
#include "kube.h"
#include "pgp.h"
#include "release.h"
#include "store.h"
#include "registry.h"
#include "update_graph.h"
#include "update_lease.h"

AL_BEGIN_DECL

/*
 * docs/updater.md describes the phases, the graph, the image substitution
 * rule and the state machine. Thread safety: graph and state-machine
 * functions are pure or reentrant; al_update_run starts and joins its own
 * worker threads and must not be called twice at once on one state file.
 */

/* Bounds. */
#define AL_UPDATE_MAX_PARALLEL 64              /* workers per level */
#define AL_UPDATE_MAX_STATE_BYTES (4 * AL_MIB) /* the --state file */
#define AL_UPDATE_MAX_HISTORY 100              /* history entries kept */

/* The status object: cluster-scoped, group airlock.io, named "cluster". */
#define AL_UPDATE_STATUS_API_VERSION "airlock.io/v1alpha1"
#define AL_UPDATE_STATUS_KIND "ClusterUpdate"
#define AL_UPDATE_STATUS_NAME "cluster"

/* --- file names and the task graph: airlock/update_graph.h ---------- */

/* --- the state machine ------------------------------------------------ */

typedef enum al_update_state {
	AL_UPDATE_INITIALIZING = 0,
	AL_UPDATE_UPDATING = 1,
	AL_UPDATE_RECONCILING = 2,
} al_update_state;

/* What this run does. */
typedef enum al_update_mode {
	AL_UPDATE_MODE_NEW =
	    0, /* a new Updating towards the target: new history entry */
	AL_UPDATE_MODE_RESUME =
	    1, /* continue the Updating towards the same target */
	AL_UPDATE_MODE_RECONCILE =
	    2, /* reapply a Completed release (shuffled order allowed) */
} al_update_mode;

typedef enum al_update_outcome {
	AL_UPDATE_OUTCOME_REFUSED =
	    0, /* not accepted (unverified, not forced): nothing applied */
	AL_UPDATE_OUTCOME_FAILED = 1, /* anything short of every task applied */
	AL_UPDATE_OUTCOME_APPLIED = 2, /* every task of the graph applied */
} al_update_outcome;

typedef enum al_update_hstate {
	AL_UPDATE_PARTIAL = 0,
	AL_UPDATE_COMPLETED = 1,
} al_update_hstate;

/* "Initializing", "Updating", "Reconciling"; "Partial", "Completed". */
AL_EXPORT const char *al_update_state_name(al_update_state s);
AL_EXPORT const char *al_update_hstate_name(al_update_hstate s);

/*
 * Pure: which mode a run towards a target takes. same_target: the
 * persisted desired release is the target (by digest); completed: the
 * newest history entry is exactly the target and Completed. RECONCILE only
 * for Reconciling + same target + completed; RESUME for Updating + same
 * target, and for an inconsistent Reconciling without a Completed entry;
 * NEW otherwise (Initializing, or a different target: re-targeting).
 */
AL_EXPORT al_update_mode al_update_choose_mode(al_update_state state,
                                               int same_target, int completed);

/*
 * Pure: the outcome of an apply run from what it observed: APPLIED only
 * when rc == 0, total > 0 and applied == total; FAILED otherwise
 * (cancelled, timed out, any task error, partial).
 */
AL_EXPORT al_update_outcome al_update_outcome_of(int rc, size_t applied,
                                                 size_t total);

/*
 * Pure: the next persisted state. REFUSED leaves state unchanged; under
 * RECONCILE the state stays Reconciling whatever happened (errors are
 * reported as Failing); under NEW / RESUME, APPLIED gives Reconciling and
 * FAILED gives Updating.
 */
AL_EXPORT al_update_state al_update_next_state(al_update_state state,
                                               al_update_mode mode,
                                               al_update_outcome outcome);

/* Pure: the state of the run's history entry after the outcome: Completed
 * only for APPLIED under NEW / RESUME (under RECONCILE the entry is
 * already Completed and stays so), Partial otherwise. */
AL_EXPORT al_update_hstate al_update_next_hstate(al_update_mode mode,
                                                 al_update_outcome outcome,
                                                 al_update_hstate current);

/*
 * "update to VERSION failed: applied K of N; first errors: E1; E2; E3"
 * (at most three errors, "; first errors: ..." left out when there are
 * none). Caller frees; NULL on ENOMEM.
 */
AL_EXPORT char *al_update_failure_message(const char *version, size_t applied,
                                          size_t total,
                                          const char *const *errors,
                                          size_t nerrors);

/* --- preconditions (the CVO's pkg/payload/precondition/clusterversion) -- */

/*
 * Pure: compare two versions as semantic versions (MAJOR.MINOR.PATCH,
 * optional -PRERELEASE and +BUILD; build ignored, a pre-release sorts
 * before its release, as blang/semver which the CVO uses). Returns 0 and
 * *cmp (<0, 0, >0), or AL_EPARSE when either is not a semantic version.
 */
AL_EXPORT int al_update_semver_cmp(const char *a, const char *b, int *cmp);

/* Something that says Upgradeable=False (borrowed strings). */
typedef struct al_update_blocker {
	/* "ClusterOperator", "ClusterVersion" (its own Upgradeable=False),
	 * "Overrides" (unmanaged spec.overrides: reason
	 * ClusterVersionOverridesSet) or "AdminAck" (a gate,
	 * al_update_admin_ack_blockers in update_int.h) */
	const char *kind;
	const char *name;    /* the object's name */
	const char *reason;  /* the condition's reason (may be NULL) */
	const char *message; /* the condition's message (may be NULL) */
} al_update_blocker;

/*
 * Pure: the preconditions of a new update from current (the version the
 * cluster is at or working towards; NULL or "" when unknown: nothing to
 * check) to target, as the CVO runs them before it accepts a payload:
 * ClusterVersionUpgradeable (an Upgradeable=False blocker refuses a
 * minor or major update; a patch update within the minor passes),
 * ClusterVersionRollback (airlock: any lower version; the CVO lets one
 * z-stream rollback to the previous version through), ClusterVersionGiantHop
 * (a higher major, or more than one minor ahead). Returns the number of
 * failed checks; *msg (caller frees; NULL when none) is the CVO's
 * precondition.Summarize text: 'Precondition "NAME" failed because of
 * "REASON": MESSAGE', several as "Multiple precondition checks
 * failed:\n* ...". A current version that does not parse is no failure
 * (the CVO's InvalidCurrentVersion warning); a target that does not
 * parse fails (InvalidDesiredVersion). Negative: AL_ENOMEM.
 */
AL_EXPORT int al_update_check_preconditions(const char *current,
                                            const char *target,
                                            const al_update_blocker *b,
                                            size_t nb, char **msg);

/* --- the cluster-side lock: airlock/update_lease.h ------------------ */

/* The version of al_update_opts this header describes. */
#define AL_UPDATE_OPTS_VERSION 1

/* --- a run ------------------------------------------------------------ */

typedef struct al_update_opts {
	/* AL_UPDATE_OPTS_VERSION of the caller's header (0, a zeroed struct,
	 * reads as 1; a newer one is AL_EINVAL) */
	unsigned version;
	al_store *store; /* required */
	al_kube *kube;   /* required unless dry_run */
	const char
	    *target; /* version or "sha256:<hex>" from airlock/releases.json */
	int force;   /* proceed without a verified signature */
	const al_pgp_keyring
	    *keyring; /* trusted keys (NULL: nothing verifies) */
	const char *const
	    *signature_stores; /* extra HTTP(S) signature stores */
	size_t nsignature_stores;
	uint64_t signature_timeout_ms; /* whole accept phase; 0: 30000 */
	uint64_t sync_timeout_ms; /* whole apply phase, started after accept; 0:
	                             40 minutes */
	unsigned parallel;        /* workers per level; 0: 8 */
	const char *profile;      /* NULL: AL_UPDATE_DEFAULT_PROFILE */
	const char
	    *exclude; /* exclude.release.openshift.io/<id>; may be NULL */
	/* Override the cluster's feature set (FeatureGate cluster
	 * spec.featureSet); NULL: read it from the cluster ("Default" when
	 * there is none). */
	const char *feature_set;
	/* Override the cluster's capabilities (ClusterVersion version);
	 * have_capabilities 1: exactly these are enabled. */
	const char *const *capabilities;
	size_t ncapabilities;
	int have_capabilities;
	int dry_run; /* decide and plan, touch nothing */
	const char
	    *state_path;   /* local state file; NULL: the cluster object only */
	unsigned seed;     /* shuffle seed for Reconciling (0: time based) */
	uint64_t poll_ms;  /* ClusterOperator poll interval; 0: 500 */
	al_cancel *cancel; /* borrowed, may be NULL */
	/* Ownership (docs/updater.md, "One updater at a time"). */
	int take_over;         /* proceed although a cluster-version-operator
	                          Deployment runs (airlock becomes the updater) */
	uint64_t lock_wait_ms; /* wait for another holder of the lease; 0:
	                          refuse at once */
	uint64_t lease_duration_ms; /* 0: 60 s */
	const char *identity;       /* lease holder; NULL: hostname_uuid */
	/* Progress lines ("level 10: 3 components, 7 manifests"), from the
	 * calling thread or workers, serialised. May be NULL. */
	void (*event)(void *ud, const char *line);
	void *ud;
	/* Through the cluster's own CVO (docs/updater.md, "Updating through
	 * the CVO"): a pre-flight that changes nothing, then
	 * spec.desiredUpdate by digest, then watching ClusterVersion for at
	 * most cvo_timeout_ms (0: 2 h). registry: how the pre-flight reaches
	 * the mirror registries (borrowed; NULL: anonymous, TLS verified). */
	int via_cvo;
	uint64_t cvo_timeout_ms;
	const al_registry_opts *registry;
} al_update_opts;

/* Every other field zero / NULL: the defaults; set fields by name. */
#define AL_UPDATE_OPTS_INIT                                                    \
	{                                                                      \
		.version = AL_UPDATE_OPTS_VERSION                              \
	}

/* The version of al_update_result this header describes. */
#define AL_UPDATE_RESULT_VERSION 1

/* What a run did; al_update_result_clear frees it. */
typedef struct al_update_result {
	/* AL_UPDATE_RESULT_VERSION of the caller's header, set by
	 * AL_UPDATE_RESULT_INIT (0, a zeroed struct, reads as 1; a newer one is
	 * AL_EINVAL, nothing written): the library writes no field past it */
	unsigned result_version;
	char *version; /* target version (NULL if not resolved) */
	char *digest;  /* target release digest "sha256:..." */
	al_update_mode mode;
	int accepted;         /* 1 verified or forced */
	int verified;         /* 1 a signature verified */
	char *accept_message; /* why not verified (NULL when verified) */
	uint64_t accept_ms;   /* time spent in the accept phase */
	uint64_t apply_ms;    /* time spent applying */
	al_update_outcome outcome;
	al_update_state state; /* persisted state after the run */
	size_t applied;        /* tasks applied */
	size_t total;          /* tasks in the graph */
	char *message;         /* failure message (NULL on success) */
	char **repairs; /* Reconciling: objects whose drift was repaired */
	size_t nrepairs;
	char *plan;           /* dry run: the ordered graph as text */
	char *accepted_risks; /* what --force accepted (history acceptedRisks);
	                         NULL when nothing */
	int cluster_version;  /* 1: the ClusterVersion status was written */
	int via_cvo; /* 1: the update went through the cluster's CVO (asked,
	                or chosen because one runs) */
} al_update_result;

#define AL_UPDATE_RESULT_INIT                                                  \
	{                                                                      \
		.result_version = AL_UPDATE_RESULT_VERSION,                    \
		.mode = AL_UPDATE_MODE_NEW,                                    \
		.outcome = AL_UPDATE_OUTCOME_FAILED,                           \
		.state = AL_UPDATE_INITIALIZING                                \
	}

AL_EXPORT void al_update_result_clear(al_update_result *res);

/*
 * One update run: load the persisted state (opts->state_path, else the
 * cluster's ClusterUpdate), resolve the target, accept (signatures from
 * the store, the cluster's signature ConfigMaps and the HTTP stores,
 * within signature_timeout_ms), load the payload, apply the graph within
 * sync_timeout_ms (measured from the end of the accept phase), persist
 * state and status. res is filled in every case.
 * Returns 0 only when every task applied (or, in a dry run, when the
 * release would be accepted). Errors: AL_EVERIFY refused (not verified,
 * not forced; nothing applied); AL_ETIMEOUT / AL_ECANCELED / the first
 * task's error when the apply failed (message: al_update_failure_message);
 * AL_ENOTFOUND unknown target; AL_EPARSE bad payload or state file.
 */
AL_EXPORT int al_update_run(const al_update_opts *opts, al_update_result *res);

/*
 * The release digests ("sha256:...") the decision record in state_path
 * (an `airlock update --state` file) holds on to: the desired release and
 * the newest Completed history entry (what the cluster runs), at most 2,
 * no duplicates. Caller frees each and the array. AL_ENOTFOUND: no such
 * file; AL_EPARSE: not a valid record (never a guess).
 */
AL_EXPORT int al_update_record_releases(const char *state_path, char ***out,
                                        size_t *n);

AL_END_DECL

#endif
