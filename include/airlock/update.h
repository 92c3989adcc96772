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

AL_BEGIN_DECL

/*
 * docs/updater.md describes the phases, the graph, the image substitution
 * rule and the state machine. Thread safety: graph and state-machine
 * functions are pure or reentrant; al_update_run starts and joins its own
 * worker threads and must not be called twice at once on one state file.
 */

/* Bounds. */
#define AL_UPDATE_MAX_TASKS 100000 /* manifests (objects) in one payload */
#define AL_UPDATE_MAX_PARALLEL 64  /* workers per level */
#define AL_UPDATE_MAX_STATE_BYTES (4 * AL_MIB) /* the --state file */
#define AL_UPDATE_MAX_HISTORY 100              /* history entries kept */
#define AL_UPDATE_MAX_LEFT_OUT 10000 /* left-out documents listed in a plan */
#define AL_UPDATE_DEFAULT_PROFILE "self-managed-high-availability"
#define AL_UPDATE_PLACEHOLDER_REPO "registry.ci.openshift.org/openshift"
#define AL_UPDATE_PLACEHOLDER_VERSION "0.0.1-snapshot"

/* The status object: cluster-scoped, group airlock.io, named "cluster". */
#define AL_UPDATE_STATUS_API_VERSION "airlock.io/v1alpha1"
#define AL_UPDATE_STATUS_KIND "ClusterUpdate"
#define AL_UPDATE_STATUS_NAME "cluster"

/* --- file names and the task graph ------------------------------------ */

/*
 * Parse a manifest file name with the Cluster Version Operator's pattern
 * (pkg/payload reMatchPattern, ^0000_(\d+)_([a-zA-Z0-9]+(-[a-zA-Z0-9]+)*?)_):
 * a match gives *numbered = 1, *level the run level's digits as a number
 * (UINT_MAX when larger; the graph compares the digits as strings, as the
 * CVO does) and *component (caller frees). Any other name (no "0000_"
 * prefix, no digits, no '_' after the component, a component with a
 * leading, trailing or double '-') gives *numbered = 0, *level 0 and
 * *component NULL: such files run serially in their place in file order.
 * Errors: AL_EINVAL (NULL name), AL_ENOMEM.
 */
AL_EXPORT int al_update_parse_name(const char *file, int *numbered,
                                   unsigned *level, char **component);

/* One manifest file (borrowed). */
typedef struct al_update_file {
	const char *name;
	const uint8_t *data;
	size_t len;
} al_update_file;

/* One image of image-references (borrowed). */
typedef struct al_update_image {
	const char *tag;
	const char *image;
} al_update_image;

/* A ClusterVersion spec.overrides entry with unmanaged: true (borrowed
 * strings; group "" for the core API; ns NULL or "" for none). */
typedef struct al_update_override {
	const char *group, *kind, *ns, *name;
} al_update_override;

typedef struct al_update_load_opts {
	const char *
	    profile; /* include.release.openshift.io/<profile>; NULL: default */
	const char *exclude; /* skip exclude.release.openshift.io/<id>: "true";
	                        may be NULL */
	const char
	    *version; /* replaces AL_UPDATE_PLACEHOLDER_VERSION; required */
	const al_update_image *images; /* image-references */
	size_t nimages;
	/* The cluster's filters (library-go manifest.Include; docs/updater.md
	 * "What is applied"). feature_set: the cluster's spec.featureSet,
	 * NULL or "" meaning "Default" (always applied, as the CVO does). */
	const char *feature_set;
	/* Enabled feature gates; used only when feature_gates_known. */
	const char *const *feature_gates;
	size_t nfeature_gates;
	int feature_gates_known;
	/* Enabled (explicitly or implicitly) capabilities and the known ones;
	 * used only when capabilities_known (else nothing is filtered on
	 * capabilities). known NULL: AL_UPDATE_KNOWN_CAPABILITIES. */
	const char *const *capabilities;
	size_t ncapabilities;
	const char *const *known_capabilities;
	size_t nknown_capabilities;
	int capabilities_known;
	/* {{.ReleaseImage}} in the image's manifests/ templates; NULL: the
	 * version. */
	const char *release_image;
	/* Objects the admin took over (ClusterVersion spec.overrides,
	 * unmanaged): left out, as library-go's Include leaves them out
	 * (getOverrideForManifest; the namespace is ignored for a
	 * cluster-scoped manifest). */
	const al_update_override *overrides;
	size_t noverrides;
} al_update_load_opts;

/* The object of a task (a JSON object; al_update_task_json gives its
 * text). */
typedef struct al_update_object al_update_object;

/* One task: one object of one manifest file. */
typedef struct al_update_task {
	char *file;            /* manifest file name */
	size_t doc;            /* 0-based YAML document index in the file */
	al_update_object *obj; /* the object to apply (substituted) */
	const char *api_version, *kind, *name,
	    *ns;              /* borrowed from obj; ns may be NULL */
	int cluster_operator; /* a config.openshift.io ClusterOperator: gates
	                         its level */
	int create_only;      /* release.openshift.io/create-only: "true" */
	int delete_it; /* release.openshift.io/delete: "true": delete, not apply
	                */
	int job;       /* a batch/v1 Job: a barrier (the CVO's SplitOnJobs) */
	char *group;   /* API group of apiVersion ("" for core) */
	/* release.openshift.io/delete with a value other than "true": the
	 * task fails without touching the object (lib/resourcedelete
	 * ValidDeleteAnnotation) */
	int delete_invalid;
} al_update_task;

/* A component: tasks[first .. first + count) applied in order. */
typedef struct al_update_component {
	char *name; /* "" for the unnumbered group */
	size_t first;
	size_t count;
} al_update_component;

/* A run level: components[first .. first + count) applied in parallel. */
typedef struct al_update_level {
	int numbered;
	unsigned level;
	size_t first;
	size_t count;
	size_t ntasks;
	char *number; /* the run level's digits as in the file name ("05");
	                 NULL for names the CVO's pattern does not match */
} al_update_level;

typedef struct al_update_graph {
	al_update_task *tasks;
	size_t ntasks;
	al_update_component *components;
	size_t ncomponents;
	al_update_level *levels;
	size_t nlevels;
	size_t skipped;            /* documents left out (any filter, empty) */
	size_t skipped_feature;    /* of which: feature set / gate / major */
	size_t skipped_capability; /* of which: capability not enabled */
	size_t skipped_template;   /* manifests/ files whose template failed */
	size_t skipped_override;   /* documents left out: spec.overrides */
	/* The documents left out by a filter, "Kind ns/name (file #doc): why
	 * (annotation: value)", at most AL_UPDATE_MAX_LEFT_OUT of them. */
	char **left_out;
	size_t nleft_out;
} al_update_graph;

/*
 * Build the graph from release-manifests/ files (any order; sorted by name
 * here): al_update_graph_build2 without manifests/ files. Files not ending
 * in .yaml, .yml or .json are ignored. Every document is parsed
 * (multi-document YAML, JSON is YAML); empty documents are skipped; a
 * document must be a map with apiVersion, kind and metadata.name
 * (AL_EPARSE naming the file and document). Filters, duplicates and order:
 * al_update_graph_build2. A kept document with release.openshift.io/delete:
 * "true" becomes a deletion task (delete_it).
 * Substitution (in every string value of a kept document): each
 * "AL_UPDATE_PLACEHOLDER_REPO:<tag>" whose tag is in images becomes that
 * image (a tag not in images is AL_EPARSE naming the file), and each
 * AL_UPDATE_PLACEHOLDER_VERSION becomes opts->version. References that
 * are already full pull specs are left as they are. A graph without any
 * task is AL_EPARSE. Errors also AL_ELIMIT (over AL_UPDATE_MAX_TASKS),
 * AL_ENOMEM. Free with al_update_graph_free.
 */
AL_EXPORT int al_update_graph_build(al_update_graph **out,
                                    const al_update_file *files, size_t nfiles,
                                    const al_update_load_opts *opts);

/*
 * The CVO's full load (pkg/payload LoadUpdate, task_graph.go): the image's
 * manifests/ files (cvo, rendered as templates: {{.ReleaseImage}},
 * {{.ClusterProfile}}, {{.Images.<tag>}}, string literals; a file using
 * anything else is skipped, as the CVO skips a template that fails) come
 * first, then release-manifests/ (files), each directory in file-name
 * order. Every document is filtered as library-go's manifest.Include does
 * (exclude, feature set, feature gate, major version, profile,
 * capabilities). The same object (group, kind, namespace, name) twice in
 * one file refuses the payload before filtering (library-go
 * ParseManifests); the same object kept from two files refuses it too
 * (AL_EPARSE naming both files). Order: the flat list is split at each
 * batch/v1 Job (SplitOnJobs), then grouped as ByNumberAndComponent does:
 * a run of names with the same run-level digits (compared as strings)
 * and several components is one parallel level; anything else (one
 * component, a name the pattern does not match) runs serially in place.
 * al_update_graph_build is this with no manifests/ files.
 */
AL_EXPORT int al_update_graph_build2(al_update_graph **out,
                                     const al_update_file *cvo, size_t ncvo,
                                     const al_update_file *files, size_t nfiles,
                                     const al_update_load_opts *opts);

/* 1 when name is a feature set library-go knows ("Default",
 * "TechPreviewNoUpgrade", "DevPreviewNoUpgrade", "CustomNoUpgrade", "OKD";
 * "" is "Default"), else 0. */
AL_EXPORT int al_update_feature_set_known(const char *name);

/* The capabilities the CVO knows (openshift/api
 * KnownClusterVersionCapabilities), NULL-terminated. */
AL_EXPORT const char *const *al_update_known_capabilities(void);

/* al_update_graph_build on a release's files and image-references
 * (opts->images and opts->version are taken from r when NULL). */
AL_EXPORT int al_update_graph_from_release(al_update_graph **out,
                                           const al_release *r,
                                           const al_update_load_opts *opts);

AL_EXPORT void al_update_graph_free(al_update_graph *g);

/* "Kind ns/name (file #doc)" into a new string (caller frees), NULL on ENOMEM.
 */
AL_EXPORT char *al_update_task_describe(const al_update_task *t);

/* The task's object as compact JSON with keys in document order (caller
 * frees), NULL on ENOMEM. */
AL_EXPORT char *al_update_task_json(const al_update_task *t);

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

/* --- the cluster-side lock --------------------------------------------- */

#define AL_UPDATE_LEASE_NAMESPACE "kube-system"
#define AL_UPDATE_LEASE_NAME "airlock-update"

typedef struct al_update_lease al_update_lease;

typedef struct al_update_lease_opts {
	const char *ns;       /* NULL: AL_UPDATE_LEASE_NAMESPACE */
	const char *name;     /* NULL: AL_UPDATE_LEASE_NAME */
	const char *identity; /* NULL: "<hostname>_<random uuid>" */
	uint64_t duration_ms; /* leaseDurationSeconds; 0: 60 s (at least 2 s) */
	uint64_t wait_ms;     /* wait for another holder this long; 0: refuse */
	const al_cancel *cancel; /* borrowed, may be NULL */
} al_update_lease_opts;

/*
 * Acquire the coordination.k8s.io/v1 Lease as client-go's leader
 * election does (tryAcquireOrRenew): create it when absent; take it when
 * its holder is empty, is us, or has not renewed it for a whole
 * leaseDurationSeconds while we watched (or its renewTime is older than
 * twice that by the wall clock); every write conditional on the
 * resourceVersion read (a 409 means re-read and decide again). Then a
 * thread renews it every duration/3 until al_update_lease_release.
 * Errors: AL_ELOCKED another holder kept it for wait_ms (the message
 * names its identity), AL_ECANCELED, kube errors (AL_ENOTFOUND when the
 * cluster serves no Lease kind or the namespace does not exist).
 * Thread-safe: al_update_lease_lost may be called from any thread.
 */
AL_EXPORT int al_update_lease_acquire(al_update_lease **out, al_kube *k,
                                      const al_update_lease_opts *o);

/* Borrowed: our holderIdentity. */
AL_EXPORT const char *al_update_lease_identity(const al_update_lease *l);

/* 1 when the lease was lost (another holder took it, or it could not be
 * renewed for 2/3 of its duration); why (may be NULL) gets the reason. */
AL_EXPORT int al_update_lease_lost(al_update_lease *l, char *why, size_t cap);

/* Stop renewing and release (holderIdentity "", conditional on our last
 * write; a lease someone else took is left alone), then free. NULL is a
 * no-op. Returns the release's error (the lease expires anyway). */
AL_EXPORT int al_update_lease_release(al_update_lease *l);

/* --- a run ------------------------------------------------------------ */

typedef struct al_update_opts {
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

/* What a run did; al_update_result_clear frees it. */
typedef struct al_update_result {
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
		NULL, NULL, AL_UPDATE_MODE_NEW, 0, 0, NULL, 0, 0,              \
		    AL_UPDATE_OUTCOME_FAILED, AL_UPDATE_INITIALIZING, 0, 0,    \
		    NULL, NULL, 0, NULL, NULL, 0, 0                            \
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
