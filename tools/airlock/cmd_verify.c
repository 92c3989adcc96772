/* cmd_verify.c: airlock verify: check release signatures offline, from a store
 * or one signature file, against trusted keys. */
#include <stdlib.h>
#include <string.h>

#include "cli_esc.h"
#include "cli.h"
#include "cli_crypto.h"
#include "cli_json.h"
#include "cmd.h"
#include "airlock/pgp.h"
#include "airlock/sig.h"

enum {
	OPT_STORE = OPT_COMMAND_BASE,
	OPT_KEYRING,
	OPT_POLICY,
	OPT_IDENTITY,
	OPT_SIGNATURE,
	OPT_DIGEST,
	OPT_STRICT_EXPIRY,
	OPT_NO_DEFAULT_KEYS,
};

static const char verify_help[] =
    "usage: airlock verify --store DIR [--keyring PATH...] [OPTIONS] "
    "[RELEASE...]\n"
    "       airlock verify --signature FILE --digest sha256:... [--keyring "
    "PATH...] [--identity REF]\n"
    "\n"
    "Check release signatures offline against trusted OpenPGP keys.\n"
    "\n"
    "With --store, every release recorded in STORE/airlock/releases.json (or "
    "only the\n"
    "RELEASEs named, by version or by digest) is checked against the "
    "signatures under\n"
    "STORE/signatures/sha256=<hex>/signature-<n>: the release is verified when "
    "one of\n"
    "them is a valid signature by a trusted key whose simple-signing payload "
    "names the\n"
    "release digest (and, by the identity policy, its reference). One line per "
    "release:\n"
    "  verified 4.14.1 sha256:... by <key fingerprint>\n"
    "or an error on stderr naming every signature's reason.\n"
    "\n"
    "With --signature, the one signature FILE is checked for --digest.\n"
    "\n"
    "Options:\n"
    "      --store DIR              the store\n"
    "      --keyring PATH           trusted public keys: a key file (binary "
    "or armored),\n"
    "                               a directory of them, or a "
    "cluster-update-keys\n"
    "                               ConfigMap (verifier-public-key-*); "
    "repeatable.\n"
    "                               Default: the Red Hat release keys "
    "shipped with\n"
    "                               airlock, for releases under "
    "quay.io/openshift-release-dev\n"
    "      --no-default-keys        no shipped keys: --keyring is required\n"
    "      --strict-expiry          also refuse keys that are expired now "
    "(default: a\n"
    "                               key must have been valid when it "
    "signed)\n"
    "      --identity-policy P      how the signed docker-reference must "
    "match:\n"
    "                               exact (the same reference), repository "
    "(the same\n"
    "                               registry/repository, any tag or digest) or "
    "ignore\n"
    "                               (digest only). Default: repository; with "
    "--signature\n"
    "                               and no --identity: ignore\n"
    "      --identity REF           the expected reference (default with "
    "--store: the\n"
    "                               source the release was mirrored from)\n"
    "      --signature FILE         check this one signature file\n"
    "      --json                   the results as JSON (airlock.verify/v1, "
    "docs/json.md)\n"
    "      --digest sha256:...      the release digest it must sign (with "
    "--signature)\n"
    "  -q, --quiet                  only errors\n" CLI_LOG_HELP "\n"
    "Exit status: 0 every release verified, 1 a signature is missing, "
    "failed\n"
    "verification or is of a kind airlock does not support, 2 usage error "
    "(or a\n"
    "keyring that does not exist or parse), 3 runtime error (store "
    "unreadable).\n"
    "Given many releases, every one is checked and the worst status wins "
    "(1, then 2,\n"
    "then 3).\n";

typedef struct verify_ctx {
	al_pgp_keyring *kr;
	int defaults; /* kr holds the shipped Red Hat keys (no --keyring) */
	al_sig_identity_policy policy;
	int policy_set;
	const char *identity;
	int quiet;
	json_t *cur;       /* --json: the object of the release being checked */
	json_t *jreleases; /* --json: the releases array */
} verify_ctx;

/* --json: the status of one release or signature, and the last error
 * printed since nerr errors (the reason). */
static size_t json_errors(void)
{
	return json_array_size(json_object_get(cli_json_root(), "errors"));
}

static void json_outcome(json_t *o, int code, size_t nerr)
{
	json_t *errs = json_object_get(cli_json_root(), "errors");

	cli_json_set_str(o, "status",
	                 code == EXIT_OK       ? "verified"
	                 : code == EXIT_VERIFY ? "failed"
	                                       : "error");
	cli_json_set_int(o, "exit", code);
	if (code != EXIT_OK && json_array_size(errs) > nerr)
		cli_json_set_str(o, "error",
		                 json_string_value(json_array_get(
		                     errs, json_array_size(errs) - 1)));
}

/* The trusted keys: --keyring PATHs, or the shipped Red Hat keys. */
static int load_keyrings(verify_ctx *v, const char *const *files, size_t n,
                         unsigned flags)
{
	size_t i;
	int rc;

	if ((rc = al_sig_keyring_load_paths(&v->kr, files, n, flags)) < 0)
		return cli_input_fail(rc, "cannot load the trusted keys");
	v->defaults = n == 0;
	for (i = 0; i < al_pgp_keyring_warning_count(v->kr); i++)
		cli_warn("%s", al_pgp_keyring_warning(v->kr, i));
	return EXIT_OK;
}

/* The shipped keys sign Red Hat's releases only: anything else needs
 * --keyring (a usage error, as a missing --keyring was). */
static int defaults_apply(const verify_ctx *v, const char *label,
                          const char *ref)
{
	if (!v->defaults || al_sig_is_redhat_release(ref))
		return EXIT_OK;
	cli_error(
	    "%s%s'%s' is not a release under " AL_SIG_REDHAT_RELEASE_PREFIX
	    ": the shipped Red Hat keys do not apply, give --keyring PATH",
	    label != NULL ? label : "", label != NULL ? ": " : "",
	    ref != NULL ? ref : "");
	return EXIT_USAGE;
}

static void print_verified(const verify_ctx *v, const char *version,
                           const char *digest, const al_sig_info *info)
{
	if (v->cur != NULL) {
		cli_json_set_str(v->cur, "key", info->fingerprint);
		cli_json_set_str(v->cur, "primary_key",
		                 info->primary_fingerprint);
		cli_json_set_str(v->cur, "creator", info->creator);
		if (info->has_timestamp)
			cli_json_set_int(v->cur, "timestamp",
			                 (long long)info->timestamp);
		return;
	}
	if (v->quiet || cli_json_active())
		return;
	/* the version and creator are the signature's (or the store's)
	 * text: escaped */
	printf("verified %s%s%s by %s", version != NULL ? cli_esc(version) : "",
	       version != NULL ? " " : "", cli_esc(digest),
	       cli_esc(info->fingerprint));
	if (strcmp(info->fingerprint, info->primary_fingerprint) != 0)
		printf(" (subkey of %s)", cli_esc(info->primary_fingerprint));
	if (info->creator != NULL)
		printf(", creator \"%s\"", cli_esc(info->creator));
	if (info->has_timestamp)
		printf(", timestamp %lld", (long long)info->timestamp);
	printf("\n");
}

/* Check one signature file. */
static int verify_file(verify_ctx *v, const char *path, const char *digest)
{
	al_buf data = AL_BUF_INIT(AL_SIG_MAX_BYTES);
	al_sig_verify_opts vo = AL_SIG_VERIFY_OPTS_INIT;
	al_sig_info info;
	al_digest d;
	int rc, code;

	memset(&info, 0, sizeof(info));
	if (al_digest_parse_str(&d, digest) < 0)
		return cli_usage_error("verify", "--digest: %s",
		                       al_error_message());
	if (!v->policy_set)
		v->policy = v->identity != NULL ? AL_SIG_IDENTITY_REPOSITORY
		                                : AL_SIG_IDENTITY_IGNORE;
	if (v->policy != AL_SIG_IDENTITY_IGNORE && v->identity == NULL)
		return cli_usage_error(
		    "verify", "--identity-policy %s needs --identity REF",
		    al_sig_identity_policy_name(v->policy));
	if (v->defaults && v->identity == NULL)
		return cli_usage_error(
		    "verify",
		    "--keyring PATH is required (the shipped Red Hat "
		    "keys apply when --identity names a release under "
		    "quay.io/openshift-release-dev)");
	if ((code = defaults_apply(v, NULL, v->identity)) != EXIT_OK)
		return code;
	rc = al_fs_read_file(path, &data);
	if (rc == AL_ELIMIT) {
		cli_error("'%s' is larger than a signature can be (%llu bytes)",
		          path, (unsigned long long)AL_SIG_MAX_BYTES);
		code = EXIT_VERIFY;
		goto out;
	}
	if (rc < 0) {
		code = cli_fail(rc, "cannot read signature '%s'", path);
		goto out;
	}
	vo.keyring = v->kr;
	vo.policy = v->policy;
	vo.reference = v->identity;
	if (cli_json_active()) {
		v->cur = cli_json_set_object(cli_json_root(), "signature");
		cli_json_set_str(v->cur, "path", path);
		cli_json_set_str(v->cur, "digest", digest);
		cli_json_set_str(v->cur, "identity", v->identity);
	}
	rc = al_sig_verify(&info, data.ptr, data.len, &d, &vo);
	if (rc < 0) {
		size_t nerr = json_errors();

		code = cli_fail(rc, "'%s'", path);
		if (v->cur != NULL)
			json_outcome(v->cur, code, nerr);
		goto out;
	}
	print_verified(v, NULL, digest, &info);
	code = EXIT_OK;
	if (v->cur != NULL)
		json_outcome(v->cur, code, 0);
out:
	al_sig_info_clear(&info);
	al_buf_free(&data);
	return code;
}

/* Check one release of the store. */
static int verify_release(verify_ctx *v, al_store *s,
                          const al_store_release *rel)
{
	const char *version = rel->version, *ds = rel->digest_text;
	const char *source = rel->source, *identity = v->identity;
	const char *label = version != NULL ? version : (ds != NULL ? ds : "?");
	al_sig_list sigs = AL_SIG_LIST_INIT;
	al_sig_verify_opts vo = AL_SIG_VERIFY_OPTS_INIT;
	al_sig_info info;
	al_ref ref;
	al_digest d;
	int rc, code;

	memset(&info, 0, sizeof(info));
	memset(&ref, 0, sizeof(ref));
	if (!rel->has_digest) {
		cli_error("release '%s' in releases.json has no valid digest",
		          label);
		return EXIT_RUNTIME;
	}
	d = rel->digest;
	if (identity == NULL && v->policy != AL_SIG_IDENTITY_IGNORE) {
		/* the reference it was mirrored from, if it is one */
		if (source != NULL && al_str_startswith(source, "docker://"))
			source += strlen("docker://");
		if (source == NULL || al_ref_parse(&ref, source) < 0) {
			cli_error("release %s %s: its source '%s' is not a "
			          "registry reference: give --identity REF "
			          "or --identity-policy ignore",
			          label, ds, source != NULL ? source : "");
			al_ref_clear(&ref);
			return EXIT_USAGE;
		}
		al_ref_clear(&ref);
		identity = source;
	}
	if ((code = defaults_apply(
	         v, label, identity != NULL ? identity : source)) != EXIT_OK)
		return code;
	if ((rc = al_sig_store_load(s, &d, &sigs)) < 0) {
		code = cli_fail(rc, "release %s %s: cannot read its signatures",
		                label, ds);
		goto out;
	}
	if (sigs.n == 0) {
		cli_error("release %s %s: no signatures in the store", label,
		          ds);
		code = EXIT_VERIFY;
		goto out;
	}
	vo.keyring = v->kr;
	vo.policy = v->policy;
	vo.reference = identity;
	rc = al_sig_verify_list(&info, NULL, &sigs, &d, &vo);
	if (rc < 0) {
		code = cli_fail(rc, "release %s %s", label, ds);
		goto out;
	}
	print_verified(v, version, ds, &info);
	code = EXIT_OK;
out:
	al_sig_info_clear(&info);
	al_sig_list_clear(&sigs);
	return code;
}

static int verify_store(verify_ctx *v, const char *store_path, char **names,
                        size_t nnames)
{
	al_store_opts so = {.readonly = 1};
	al_store *s = NULL;
	al_store_release *list = NULL;
	int rc, code = EXIT_OK, *used = NULL;
	size_t i, j, n = 0, nchecked = 0;

	if (!v->policy_set)
		v->policy = AL_SIG_IDENTITY_REPOSITORY;
	if (cli_json_active()) {
		cli_json_set_str(cli_json_root(), "store", store_path);
		v->jreleases = cli_json_set_array(cli_json_root(), "releases");
	}
	if ((rc = al_store_open(&s, store_path, &so)) < 0)
		return cli_fail(rc, "cannot open store '%s'", store_path);
	if ((rc = al_store_releases_list(s, &list, &n)) < 0) {
		code = cli_fail(rc, "cannot read the releases of store '%s'",
		                store_path);
		goto out;
	}
	if (nnames > 0 && (used = calloc(nnames, sizeof(*used))) == NULL) {
		cli_error("out of memory");
		code = EXIT_RUNTIME;
		goto out;
	}
	for (i = 0; i < n; i++) {
		const char *version = list[i].version,
		           *ds = list[i].digest_text;
		int wanted = nnames == 0;

		for (j = 0; j < nnames; j++) {
			if ((version != NULL &&
			     strcmp(names[j], version) == 0) ||
			    (ds != NULL && strcmp(names[j], ds) == 0)) {
				used[j] = 1;
				wanted = 1;
			}
		}
		if (!wanted)
			continue;
		nchecked++;
		if (cli_json_active()) {
			size_t nerr = json_errors();
			int rcode;

			v->cur = cli_json_append_object(v->jreleases);
			cli_json_set_str(v->cur, "version", version);
			cli_json_set_str(v->cur, "digest", ds);
			cli_json_set_str(v->cur, "source", list[i].source);
			rcode = verify_release(v, s, &list[i]);
			json_outcome(v->cur, rcode, nerr);
			v->cur = NULL;
			code = cli_worst(code, rcode);
			continue;
		}
		code = cli_worst(code, verify_release(v, s, &list[i]));
	}
	for (j = 0; j < nnames; j++) {
		if (!used[j]) {
			cli_error("release '%s' is not in store '%s'", names[j],
			          store_path);
			code = cli_worst(code, EXIT_RUNTIME);
		}
	}
	if (nnames == 0 && nchecked == 0) {
		cli_error("store '%s' records no releases", store_path);
		code = cli_worst(code, EXIT_RUNTIME);
	}
out:
	free(used);
	al_store_releases_free(list, n);
	al_store_free(s);
	return code;
}

int cmd_verify(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"store", required_argument, NULL, OPT_STORE},
	    {"keyring", required_argument, NULL, OPT_KEYRING},
	    {"identity-policy", required_argument, NULL, OPT_POLICY},
	    {"identity", required_argument, NULL, OPT_IDENTITY},
	    {"signature", required_argument, NULL, OPT_SIGNATURE},
	    {"digest", required_argument, NULL, OPT_DIGEST},
	    {"strict-expiry", no_argument, NULL, OPT_STRICT_EXPIRY},
	    {"no-default-keys", no_argument, NULL, OPT_NO_DEFAULT_KEYS},
	    CLI_JSON_OPTION,
	    CLI_LOCAL_OPTIONS,
	    {NULL, 0, NULL, 0},
	};
	const char *store_path = NULL, *signature = NULL, *digest = NULL;
	const char **keyrings = NULL, **grown;
	size_t nkeyrings = 0;
	unsigned kflags = 0;
	verify_ctx v;
	cli_common c;
	al_ref idref;
	int opt, code, no_default_keys = 0, json = 0;

	memset(&v, 0, sizeof(v));
	cli_common_init(&c);
	optind = 1;
	while ((opt = cli_getopt(&c, "verify", argc, argv, "h", longopts)) !=
	       -1) {
		switch (opt) {
		case 'h':
			free(keyrings);
			fputs(verify_help, stdout);
			return EXIT_OK;
		case OPT_STORE:
			store_path = optarg;
			break;
		case OPT_KEYRING:
			grown =
			    realloc(keyrings, (nkeyrings + 1) * sizeof(*grown));
			if (grown == NULL) {
				free(keyrings);
				cli_error("out of memory");
				return EXIT_RUNTIME;
			}
			keyrings = grown;
			keyrings[nkeyrings++] = optarg;
			break;
		case OPT_POLICY:
			if (al_sig_identity_policy_parse(&v.policy, optarg) <
			    0) {
				free(keyrings);
				return cli_usage_error(
				    "verify",
				    "--identity-policy takes exact, repository "
				    "or "
				    "ignore, not '%s'",
				    optarg);
			}
			v.policy_set = 1;
			break;
		case OPT_IDENTITY:
			/* a reference that does not parse can match nothing:
			 * the caller's mistake, not a failed verification */
			memset(&idref, 0, sizeof(idref));
			if (al_ref_parse(&idref, optarg) < 0) {
				free(keyrings);
				return cli_usage_error(
				    "verify",
				    "--identity '%s' is not an image "
				    "reference: %s",
				    optarg, al_error_message());
			}
			al_ref_clear(&idref);
			v.identity = optarg;
			break;
		case OPT_STRICT_EXPIRY:
			kflags |= AL_PGP_STRICT_EXPIRY;
			break;
		case OPT_NO_DEFAULT_KEYS:
			no_default_keys = 1;
			break;
		case OPT_SIGNATURE:
			signature = optarg;
			break;
		case OPT_DIGEST:
			digest = optarg;
			break;
		case OPT_JSON:
			json = 1;
			break;
		default:
			free(keyrings);
			return EXIT_USAGE;
		}
	}
	v.quiet = c.quiet;
	cli_log_start(&c);
	cli_crypto_init_offline();
	if (json && cli_json_begin("verify") < 0) {
		free(keyrings);
		return EXIT_RUNTIME;
	}
	if (nkeyrings == 0 && no_default_keys)
		code = cli_usage_error("verify",
		                       "--keyring PATH is required with "
		                       "--no-default-keys (the trusted keys)");
	else if (store_path != NULL && signature != NULL)
		code = cli_usage_error(
		    "verify", "give either --store or --signature, not both");
	else if (signature != NULL && (digest == NULL || optind != argc))
		code =
		    cli_usage_error("verify", "--signature FILE takes --digest "
		                              "sha256:... and no RELEASE");
	else if (signature == NULL && store_path == NULL)
		code = cli_usage_error(
		    "verify", "--store DIR or --signature FILE is required");
	else if (signature == NULL && digest != NULL)
		code =
		    cli_usage_error("verify", "--digest goes with --signature");
	else if ((code = load_keyrings(&v, keyrings, nkeyrings, kflags)) ==
	         EXIT_OK)
		code = signature != NULL
		           ? verify_file(&v, signature, digest)
		           : verify_store(&v, store_path, argv + optind,
		                          (size_t)(argc - optind));
	al_pgp_keyring_free(v.kr);
	free(keyrings);
	return code;
}
