/* cmd_update.c: airlock update: apply a release payload from the store to a
 * cluster, with separate signature and sync budgets. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_esc.h"
#include "cli.h"
#include "cmd.h"
#include "airlock/update.h"

enum {
	OPT_STORE = OPT_COMMAND_BASE,
	OPT_TO,
	OPT_KUBECONFIG,
	OPT_FORCE,
	OPT_SIG_TIMEOUT,
	OPT_SYNC_TIMEOUT,
	OPT_DRY_RUN,
	OPT_WATCH,
	OPT_STATE,
	OPT_KEYRING,
	OPT_SIG_STORE,
	OPT_PROFILE,
	OPT_EXCLUDE,
	OPT_FEATURE_SET,
	OPT_CAPABILITIES,
	OPT_SEED,
	OPT_POLL,
	OPT_INSECURE,
	OPT_STRICT_EXPIRY,
	OPT_NO_DEFAULT_KEYS,
	OPT_TAKE_OVER,
	OPT_LOCK_WAIT,
	OPT_LEASE_DURATION,
	OPT_VIA_CVO,
	OPT_CVO_TIMEOUT,
};

#define MAX_LIST 32

static const char update_help[] =
    "usage: airlock update --store DIR --to VERSION|sha256:DIGEST "
    "[--kubeconfig FILE]\n"
    "                      [--force] [--signature-timeout D] [--sync-timeout "
    "D]\n"
    "                      [--parallel N] [--dry-run] [--watch] [--state "
    "FILE]\n"
    "                      [--keyring PATH]... [--signature-store URL]...\n"
    "                      [--lock-wait D] [--take-over]\n"
    "\n"
    "Apply a release payload from the store to a cluster in the Cluster "
    "Version\n"
    "Operator's order: run levels one after another, the components of a level "
    "in\n"
    "parallel, the manifests of a component in order; ClusterOperators hold "
    "their\n"
    "level until they report the release version. docs/updater.md has the "
    "details.\n"
    "\n"
    "Phases, each with its own budget:\n"
    "  accept  verify the release signature (store, cluster ConfigMaps in\n"
    "          openshift-config-managed, --signature-store) within "
    "--signature-timeout;\n"
    "          not verified and no --force: refused, nothing applied (exit 1)\n"
    "  apply   within --sync-timeout, which starts when the accept phase ends\n"
    "An update succeeds only when every manifest applied; anything else is a "
    "failure\n"
    "(exit 3): the state stays Updating, the history entry Partial, and a "
    "rerun (or\n"
    "--watch) resumes. After a Completed update, reruns reconcile (shuffled "
    "order).\n"
    "\n"
    "Options:\n"
    "      --store DIR              the store holding the release\n"
    "      --to VERSION|DIGEST      the release (a version or sha256:... in "
    "the store)\n"
    "      --kubeconfig FILE        cluster credentials (default: "
    "$KUBECONFIG,\n"
    "                               ~/.kube/config, in-cluster)\n"
    "      --insecure-skip-tls-verify  do not verify the API server "
    "certificate\n"
    "      --force                  apply without a verified signature, or "
    "through failed\n"
    "                               preconditions (recorded in history as "
    "verified: false\n"
    "                               and acceptedRisks); never turns a failure "
    "into success\n";

/* A second part: C compilers need only support string literals of 4095
 * bytes. */
static const char update_help2[] =
    "      --lock-wait D            wait up to D for another updater's "
    "cluster lease\n"
    "                               (kube-system/airlock-update; default 0: "
    "refuse at once)\n"
    "      --lease-duration D       how long the lease lasts unrenewed "
    "(default 60s)\n"
    "      --take-over              update although a cluster-version-operator "
    "runs\n"
    "                               (scale it to 0 first: airlock becomes the "
    "updater)\n"
    "      --via-cvo                update through the cluster's running CVO: "
    "pre-flight\n"
    "                               (images in the mirrors, signature in the "
    "cluster,\n"
    "                               preconditions; nothing changed when one "
    "fails), then\n"
    "                               spec.desiredUpdate by digest, then watch "
    "(exit 0 only\n"
    "                               when its history entry is Completed);\n"
    "                               chosen by itself when a CVO runs and no "
    "--take-over\n"
    "      --cvo-timeout D          how long --via-cvo watches (default 2h)\n"
    "      --authfile FILE, --tls-verify=false, --ca-file FILE, --cert-dir "
    "DIR\n"
    "                               how --via-cvo's pre-flight reaches the "
    "mirror registries\n"
    "      --keyring PATH           trusted OpenPGP keys: a key file, a "
    "directory of\n"
    "                               them or a cluster-update-keys ConfigMap "
    "(repeatable;\n"
    "                               default: the shipped Red Hat release "
    "keys)\n"
    "      --no-default-keys        no shipped keys (without --keyring "
    "nothing verifies)\n"
    "      --strict-expiry          also refuse keys that are expired now\n"
    "      --signature-store URL    HTTP(S) signature store (repeatable)\n"
    "      --signature-timeout D    whole signature phase (default 30s)\n"
    "      --sync-timeout D         whole apply phase (default 40m)\n"
    "      --parallel N             components applied at once per level "
    "(default 8)\n"
    "      --profile NAME           include.release.openshift.io/NAME "
    "(default\n"
    "                               self-managed-high-availability)\n"
    "      --exclude ID             skip manifests with "
    "exclude.release.openshift.io/ID\n"
    "      --feature-set NAME       the cluster's feature set (default: "
    "FeatureGate\n"
    "                               cluster spec.featureSet, else Default)\n"
    "      --capabilities A,B,...   exactly these capabilities are enabled "
    "(default:\n"
    "                               from ClusterVersion version; \"\" for "
    "none)\n"
    "      --state FILE             also persist the state in FILE (read "
    "first)\n"
    "      --dry-run                print the decision and the ordered graph, "
    "change nothing\n"
    "      --watch                  on failure, retry with backoff until it "
    "succeeds\n"
    "      --seed N                 shuffle seed for reconciling\n"
    "      --operator-poll D        ClusterOperator poll interval (default "
    "500ms)\n"
    "      --timeout D              one API request (default 30s)\n"
    "      --log-format=FMT         log lines as text (default) or json\n"
    "  -q, --quiet                  only errors and the result line\n"
    "  -v, --verbose                debug output\n"
    "  -h, --help                   this help\n"
    "\n"
    "Exit status: 0 applied (or, with --dry-run, accepted), 1 refused "
    "(signature not\n"
    "verified), 2 usage error, 3 the update failed or could not run.\n";

typedef struct ev_ctx {
	int quiet;
} ev_ctx;

static void on_event(void *ud, const char *line)
{
	ev_ctx *e = ud;

	/* a failed pre-flight check is part of the error: shown with -q */
	if (!e->quiet || al_str_startswith(line, "pre-flight check failed"))
		cli_event(line);
}

/* The trusted keys: --keyring PATHs, else the shipped Red Hat keys (what a
 * cluster trusts by default), none with --no-default-keys. */
static int load_keyring(al_pgp_keyring **kr, const char *const *files, size_t n,
                        unsigned flags, int no_defaults)
{
	size_t i;
	int rc;

	if (n == 0 && no_defaults)
		return 0;
	if ((rc = al_sig_keyring_load_paths(kr, files, n, flags)) < 0)
		return rc;
	for (i = 0; i < al_pgp_keyring_warning_count(*kr); i++)
		cli_warn("%s", al_pgp_keyring_warning(*kr, i));
	return 0;
}

static int known_capability(const char *c)
{
	const char *const *k;

	for (k = al_update_known_capabilities(); *k != NULL; k++)
		if (strcmp(*k, c) == 0)
			return 1;
	return 0;
}

/* The exit status of an update (not the status map: an update's outcome
 * decides): 0 applied, 1 refused for its signature (not verified, nothing
 * applied), else 3 (failed preconditions included): a failed update is
 * exit 3, never 2, whatever status ended it. */
static int update_exit(int rc, const al_update_result *res)
{
	if (rc == 0)
		return EXIT_OK;
	if (rc == AL_EVERIFY && res->outcome == AL_UPDATE_OUTCOME_REFUSED)
		return EXIT_VERIFY;
	return EXIT_RUNTIME;
}

/* What the command line says, besides the common options. */
typedef struct update_args {
	al_update_opts uo;
	const char *store_path, *kubeconfig;
	const char *keyrings[MAX_LIST], *sigstores[MAX_LIST];
	size_t nkeyrings, nsigstores;
	const char *caps[MAX_LIST];
	char *capbuf; /* the --capabilities text caps point into */
	int watch, insecure, no_default_keys;
	unsigned kflags;
} update_args;

/* --NAME D: a duration into *ms, positive unless zero_ok. EXIT_OK or the
 * usage error. */
static int parse_duration_opt(const char *name, const char *arg, uint64_t *ms,
                              int zero_ok)
{
	if (al_parse_duration(arg, ms) < 0 || (!zero_ok && *ms == 0))
		return cli_usage_error("update",
		                       "--%s takes a %sduration, "
		                       "not '%s'",
		                       name, zero_ok ? "" : "positive ", arg);
	return EXIT_OK;
}

/* --capabilities A,B,...: replaces what an earlier one said; an unknown
 * name is warned about (its manifests are skipped), not refused. */
static int parse_capabilities(update_args *a, const char *arg)
{
	size_t ncaps = 0;
	char *p;

	free(a->capbuf);
	if ((a->capbuf = al_strdup(arg)) == NULL)
		return cli_fail(AL_ENOMEM, "out of memory");
	for (p = a->capbuf; *p != '\0';) {
		char *e = strchr(p, ',');

		if (e != NULL)
			*e = '\0';
		if (*p != '\0') {
			if (ncaps == MAX_LIST)
				return cli_usage_error(
				    "update",
				    "--capabilities: more than %d names",
				    MAX_LIST);
			if (!known_capability(p))
				cli_warn("capability '%s' is not known: "
				         "manifests naming it are skipped",
				         p);
			a->caps[ncaps++] = p;
		}
		if (e == NULL)
			break;
		p = e + 1;
	}
	a->uo.capabilities = a->caps;
	a->uo.ncapabilities = ncaps;
	a->uo.have_capabilities = 1;
	return EXIT_OK;
}

static int parse_seed(update_args *a, const char *arg)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (*arg < '0' || *arg > '9' || *end != '\0' || errno != 0 ||
	    v > 0xffffffffUL)
		return cli_usage_error("update",
		                       "--seed takes a number, not '%s'", arg);
	a->uo.seed = (unsigned)v;
	return EXIT_OK;
}

static int add_list(const char **list, size_t *n, const char *name,
                    const char *arg)
{
	if (*n == MAX_LIST)
		return cli_usage_error("update", "at most %d --%s", MAX_LIST,
		                       name);
	list[(*n)++] = arg;
	return EXIT_OK;
}

/* One option of update's own (not a common one): EXIT_OK or the exit
 * status to end with. */
static int update_option(update_args *a, int opt, const char *arg)
{
	al_update_opts *uo = &a->uo;

	switch (opt) {
	case OPT_STORE:
		a->store_path = arg;
		return EXIT_OK;
	case OPT_TO:
		uo->target = arg;
		return EXIT_OK;
	case OPT_KUBECONFIG:
		a->kubeconfig = arg;
		return EXIT_OK;
	case OPT_FORCE:
		uo->force = 1;
		return EXIT_OK;
	case OPT_SIG_TIMEOUT:
		return parse_duration_opt("signature-timeout", arg,
		                          &uo->signature_timeout_ms, 0);
	case OPT_SYNC_TIMEOUT:
		return parse_duration_opt("sync-timeout", arg,
		                          &uo->sync_timeout_ms, 0);
	case OPT_POLL:
		return parse_duration_opt("operator-poll", arg, &uo->poll_ms,
		                          0);
	case OPT_DRY_RUN:
		uo->dry_run = 1;
		return EXIT_OK;
	case OPT_WATCH:
		a->watch = 1;
		return EXIT_OK;
	case OPT_STATE:
		uo->state_path = arg;
		return EXIT_OK;
	case OPT_KEYRING:
		return add_list(a->keyrings, &a->nkeyrings, "keyring", arg);
	case OPT_SIG_STORE:
		if (!al_str_startswith(arg, "http://") &&
		    !al_str_startswith(arg, "https://"))
			return cli_usage_error(
			    "update",
			    "--signature-store takes an http(s) URL, not '%s'",
			    arg);
		return add_list(a->sigstores, &a->nsigstores, "signature-store",
		                arg);
	case OPT_PROFILE:
		uo->profile = arg;
		return EXIT_OK;
	case OPT_EXCLUDE:
		uo->exclude = arg;
		return EXIT_OK;
	case OPT_FEATURE_SET:
		if (!al_update_feature_set_known(arg))
			return cli_usage_error(
			    "update",
			    "--feature-set: unknown feature set '%s' "
			    "(Default, TechPreviewNoUpgrade, "
			    "DevPreviewNoUpgrade, CustomNoUpgrade, OKD)",
			    arg);
		uo->feature_set = arg;
		return EXIT_OK;
	case OPT_CAPABILITIES:
		return parse_capabilities(a, arg);
	case OPT_SEED:
		return parse_seed(a, arg);
	case OPT_INSECURE:
		a->insecure = 1;
		return EXIT_OK;
	case OPT_STRICT_EXPIRY:
		a->kflags |= AL_PGP_STRICT_EXPIRY;
		return EXIT_OK;
	case OPT_NO_DEFAULT_KEYS:
		a->no_default_keys = 1;
		return EXIT_OK;
	case OPT_TAKE_OVER:
		uo->take_over = 1;
		return EXIT_OK;
	case OPT_VIA_CVO:
		uo->via_cvo = 1;
		return EXIT_OK;
	case OPT_CVO_TIMEOUT:
		return parse_duration_opt("cvo-timeout", arg,
		                          &uo->cvo_timeout_ms, 0);
	case OPT_LOCK_WAIT:
		return parse_duration_opt("lock-wait", arg, &uo->lock_wait_ms,
		                          1);
	case OPT_LEASE_DURATION:
		if (al_parse_duration(arg, &uo->lease_duration_ms) < 0 ||
		    uo->lease_duration_ms < 2000)
			return cli_usage_error(
			    "update",
			    "--lease-duration takes a duration "
			    "of at least 2s, not '%s'",
			    arg);
		return EXIT_OK;
	default:
		return EXIT_USAGE;
	}
}

/* The cluster client, with the common network settings. */
static int open_cluster(al_kube **out, const update_args *a,
                        const cli_common *c)
{
	al_kube_opts ko = AL_KUBE_OPTS_INIT;

	ko.kubeconfig = a->kubeconfig;
	ko.insecure = a->insecure;
	ko.http.cancel = c->cancel;
	ko.http.request_timeout_ms = c->timeout_ms ? c->timeout_ms : 30000;
	if (c->timeout_ms) {
		ko.http.connect_timeout_ms = c->timeout_ms;
		ko.http.low_speed_time_ms = c->timeout_ms;
	}
	ko.field_manager = "airlock-update";
	return al_kube_new(out, &ko);
}

static void print_repairs(const al_update_result *res)
{
	size_t i;

	for (i = 0; i < res->nrepairs; i++)
		printf("repaired drift: %s\n", cli_esc(res->repairs[i]));
}

/* The closing lines of an update or reconcile that succeeded. */
static void print_success(const al_update_result *res)
{
	if (res->accepted_risks != NULL)
		cli_warn("accepted risks (recorded in history): %s",
		         res->accepted_risks);
	if (res->mode == AL_UPDATE_MODE_RECONCILE) {
		printf("reconciled %s: applied %zu of %zu, repaired %zu\n",
		       cli_esc(res->version), res->applied, res->total,
		       res->nrepairs);
		print_repairs(res);
		return;
	}
	printf("update to %s completed: applied %zu of %zu%s; state %s\n",
	       cli_esc(res->version), res->applied, res->total,
	       res->verified ? "" : " (signature not verified: forced)",
	       al_update_state_name(res->state));
}

/* Run the update (again after a failure with --watch, backing off): the
 * exit status. */
static int run_update(const update_args *a, const al_update_opts *uo,
                      const cli_common *c, al_update_result *res)
{
	unsigned attempt = 0;
	int rc, code;

	for (;;) {
		al_update_result_clear(res);
		rc = al_update_run(uo, res);
		if (uo->dry_run) {
			/* manifest names from the payload: escaped a line
			 * at a time */
			if (res->plan != NULL)
				cli_esc_lines(stdout, res->plan);
			/* the library's message names the release already */
			if (rc != 0)
				cli_error("%s", al_error_message());
			return update_exit(rc, res);
		}
		if (rc == 0 && res->via_cvo) {
			printf("update to %s completed by the cluster's "
			       "cluster-version-operator (%s)\n",
			       cli_esc(res->version), cli_esc(res->digest));
			return EXIT_OK;
		}
		if (rc == 0) {
			print_success(res);
			return EXIT_OK;
		}
		cli_error("%s", al_error_message());
		code = update_exit(rc, res);
		/* a refusal (the signature, or preconditions) is final: no
		 * --watch retry */
		if (res->outcome == AL_UPDATE_OUTCOME_REFUSED)
			return code;
		print_repairs(res);
		if (!a->watch || al_cancel_is_set(c->cancel) || res->total == 0)
			return code;
		{
			uint64_t b = al_backoff_ms(attempt++, 2000, 60000);

			fprintf(stderr,
			        "airlock: retrying in %.1fs (--watch)\n",
			        (double)b / 1000.0);
			if (al_sleep_ms(b, c->cancel) < 0)
				return code;
		}
	}
}

int cmd_update(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"store", required_argument, NULL, OPT_STORE},
	    {"to", required_argument, NULL, OPT_TO},
	    {"kubeconfig", required_argument, NULL, OPT_KUBECONFIG},
	    {"force", no_argument, NULL, OPT_FORCE},
	    {"signature-timeout", required_argument, NULL, OPT_SIG_TIMEOUT},
	    {"sync-timeout", required_argument, NULL, OPT_SYNC_TIMEOUT},
	    {"dry-run", no_argument, NULL, OPT_DRY_RUN},
	    {"watch", no_argument, NULL, OPT_WATCH},
	    {"state", required_argument, NULL, OPT_STATE},
	    {"keyring", required_argument, NULL, OPT_KEYRING},
	    {"signature-store", required_argument, NULL, OPT_SIG_STORE},
	    {"profile", required_argument, NULL, OPT_PROFILE},
	    {"exclude", required_argument, NULL, OPT_EXCLUDE},
	    {"feature-set", required_argument, NULL, OPT_FEATURE_SET},
	    {"capabilities", required_argument, NULL, OPT_CAPABILITIES},
	    {"seed", required_argument, NULL, OPT_SEED},
	    {"operator-poll", required_argument, NULL, OPT_POLL},
	    {"insecure-skip-tls-verify", no_argument, NULL, OPT_INSECURE},
	    {"strict-expiry", no_argument, NULL, OPT_STRICT_EXPIRY},
	    {"no-default-keys", no_argument, NULL, OPT_NO_DEFAULT_KEYS},
	    {"take-over", no_argument, NULL, OPT_TAKE_OVER},
	    {"lock-wait", required_argument, NULL, OPT_LOCK_WAIT},
	    {"lease-duration", required_argument, NULL, OPT_LEASE_DURATION},
	    {"via-cvo", no_argument, NULL, OPT_VIA_CVO},
	    {"cvo-timeout", required_argument, NULL, OPT_CVO_TIMEOUT},
	    /* --via-cvo's pre-flight reaches the mirror registries */
	    {"authfile", required_argument, NULL, OPT_AUTHFILE},
	    {"tls-verify", required_argument, NULL, OPT_TLS_VERIFY},
	    {"ca-file", required_argument, NULL, OPT_CA_FILE},
	    {"cert-dir", required_argument, NULL, OPT_CERT_DIR},
	    /* of the network options, those the updater uses */
	    {"parallel", required_argument, NULL, OPT_PARALLEL},
	    {"timeout", required_argument, NULL, OPT_TIMEOUT},
	    CLI_LOCAL_OPTIONS,
	    {NULL, 0, NULL, 0},
	};
	update_args a;
	cli_common c;
	al_update_result res = AL_UPDATE_RESULT_INIT;
	al_store_opts so = {.readonly = 1};
	al_store *store = NULL;
	al_kube *kube = NULL;
	al_pgp_keyring *kr = NULL;
	al_registry_opts ro = AL_REGISTRY_OPTS_INIT;
	ev_ctx ev = {.quiet = 0};
	int opt, rc, code = EXIT_OK;

	cli_common_init(&c);
	memset(&a, 0, sizeof(a));
	a.uo = (al_update_opts)AL_UPDATE_OPTS_INIT;
	optind = 1;
	while ((opt = cli_getopt(&c, "update", argc, argv, "h", longopts)) !=
	       -1) {
		if (opt == 'h') {
			fputs(update_help, stdout);
			fputs(update_help2, stdout);
			goto out;
		}
		if ((code = update_option(&a, opt, optarg)) != EXIT_OK)
			goto out;
	}
	if (a.store_path == NULL) {
		code = cli_usage_error("update", "--store DIR is required");
		goto out;
	}
	if (a.uo.target == NULL) {
		code = cli_usage_error(
		    "update", "--to VERSION|sha256:DIGEST is required");
		goto out;
	}
	if (argc != optind) {
		code = cli_usage_error("update", "unexpected argument '%s'",
		                       argv[optind]);
		goto out;
	}
	if ((code = cli_common_start(&c)) != EXIT_OK)
		goto out;
	ev.quiet = c.quiet;
	if ((rc = load_keyring(&kr, a.keyrings, a.nkeyrings, a.kflags,
	                       a.no_default_keys)) < 0) {
		code = cli_input_fail(rc, "cannot load trusted keys");
		goto out;
	}
	if ((rc = al_store_open(&store, a.store_path, &so)) < 0) {
		code = cli_fail(rc, "cannot open store '%s'", a.store_path);
		goto out;
	}
	/* A dry run reads the cluster only when told where it is. */
	if ((!a.uo.dry_run || a.kubeconfig != NULL) &&
	    (rc = open_cluster(&kube, &a, &c)) < 0) {
		cli_fail(rc, "cannot set up the cluster client");
		code = update_exit(rc, &res);
		goto out;
	}
	ro.auth = c.auth;
	ro.insecure = !c.tls_verify;
	ro.http.ca_file = c.ca_file;
	ro.http.proxy = c.proxy;
	ro.cert_dir = c.cert_dir;
	if (c.timeout_ms > 0) {
		ro.http.connect_timeout_ms = c.timeout_ms;
		ro.http.low_speed_time_ms = c.timeout_ms;
	}
	a.uo.registry = &ro;
	a.uo.store = store;
	a.uo.kube = kube;
	a.uo.keyring = kr;
	a.uo.signature_stores = a.sigstores;
	a.uo.nsignature_stores = a.nsigstores;
	a.uo.parallel = c.parallel;
	a.uo.cancel = c.cancel;
	a.uo.event = on_event;
	a.uo.ud = &ev;
	code = run_update(&a, &a.uo, &c, &res);
out:
	free(a.capbuf);
	al_update_result_clear(&res);
	al_kube_free(kube);
	al_store_free(store);
	al_pgp_keyring_free(kr);
	cli_common_finish(&c);
	return code;
}
