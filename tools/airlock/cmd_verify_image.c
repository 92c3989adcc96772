/* cmd_verify_image.c: airlock verify-image: check an image's sigstore
 * (cosign) signatures, in a registry or a store, against keys, a Fulcio
 * identity or a ClusterImagePolicy; write the registries.d and policy
 * resources a mirror needs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "airlock/verify_image.h"
#include "cli_esc.h"
#include "cmd.h"
#include "cmd_verify_image.h"

enum {
	OPT_KEY = OPT_COMMAND_BASE,
	OPT_FULCIO,
	OPT_REKOR,
	OPT_ISSUER,
	OPT_SUBJECT,
	OPT_REQUIRE_TLOG,
	OPT_MIN_TIMES,
	OPT_POLICY,
	OPT_IDENTITY,
	OPT_STORE,
	OPT_BUNDLE,
	OPT_ARTIFACT,
	OPT_ATTACH,
	OPT_WRITE_CONFIG,
	OPT_MIRROR,
	OPT_SCOPE,
	OPT_MATCH,
	OPT_CARRY,
	OPT_TSA,
	OPT_PKI_CA,
	OPT_PKI_EMAIL,
	OPT_PKI_HOST,
	OPT_TRUSTED_ROOT,
};

static const char vi_help[] =
    "usage: airlock verify-image [OPTIONS] IMAGE...\n"
    "       airlock verify-image [OPTIONS] --bundle F --artifact FILE\n"
    "       airlock verify-image --write-config DIR --mirror LOC... "
    "--scope S... --key F\n"
    "\n"
    "Verify the sigstore (cosign) signatures of each IMAGE: the "
    "\"sha256-<hex>.sig\"\n"
    "tag and the OCI 1.1 referrers (sigstore bundles), offline against the "
    "given\n"
    "trust. IMAGE is docker://REGISTRY/REPO[:TAG|@DIGEST] (a tag is "
    "resolved to\n"
    "its digest), or with --store a name REGISTRY/REPO[:TAG|@DIGEST] in "
    "the store.\n"
    "\n"
    "Trust (one of):\n"
    "      --key FILE               trusted public key(s), PEM (repeatable)\n"
    "      --trusted-root FILE      a Sigstore trusted_root.json: Fulcio, "
    "Rekor, TSA\n"
    "                               and CT keys with their validity "
    "windows (with\n"
    "                               --store and none of these given: the "
    "one the\n"
    "                               store keeps, if any)\n"
    "      --fulcio-root FILE       Fulcio CA certificates (keyless; needs "
    "--rekor-key\n"
    "                               and --certificate-identity or "
    "--certificate-oidc-issuer)\n"
    "      --policy FILE            ClusterImagePolicy / ImagePolicy "
    "YAML: check as\n"
    "                               the cluster would\n"
    "      --rekor-key FILE         Rekor public key(s) (repeatable)\n"
    "      --tsa-cert-chain FILE    RFC 3161 timestamp authority chain "
    "(PEM)\n"
    "      --pki-ca FILE            BYOPKI CA roots / intermediates (PEM); "
    "with\n"
    "                               --pki-email and/or --pki-hostname\n"
    "      --certificate-identity S the SAN (email or URI) the certificate "
    "must name\n"
    "      --certificate-oidc-issuer S  the OIDC issuer it must name\n"
    "      --require-tlog           refuse a key-based signature without a "
    "Rekor entry\n"
    "      --timestamp-threshold N  at least N verified times (RFC 3161 "
    "timestamps,\n"
    "                               else Rekor integrated times; default "
    "1 keyless)\n"
    "Checks:\n"
    "      --identity POLICY        exact, repository (default) or ignore: "
    "how the\n"
    "                               payload's docker-reference must match "
    "IMAGE\n"
    "      --attachments LIST       what to look up: sig,att,sbom,referrers "
    "(default\n"
    "                               sig,referrers)\n"
    "      --store DIR              look in a store instead of a registry\n"
    "      --bundle FILE            verify this sigstore bundle file "
    "instead (IMAGE\n"
    "                               must name a digest); --artifact FILE "
    "for a\n"
    "                               message signature's signed bytes; "
    "with no IMAGE,\n"
    "                               the bundle is verified over the "
    "artifact (blob)\n"
    "Carrying signatures with mirrored images:\n"
    "      --carry                  with --store: copy the attachments of "
    "the store's\n"
    "                               images (or the NAMEs given) from their "
    "source\n"
    "                               registries into the store, digests "
    "unchanged, with\n"
    "                               a \"sha256-<hex>\" referrers index for "
    "push;\n"
    "                               with --trusted-root FILE, keep it in "
    "the store\n"
    "                               (pack carries it, signed)\n"
    "Configuration for the disconnected cluster:\n"
    "      --write-config DIR       write DIR/registries.d/airlock-"
    "sigstore.yaml (and,\n"
    "                               with --key or --fulcio-root, "
    "DIR/clusterimagepolicy.yaml)\n"
    "      --mirror LOC             a mirror location "
    "(host[:port][/namespace]) (repeatable)\n"
    "      --scope S                a policy scope (repeatable; default: "
    "the mirrors)\n"
    "      --match POLICY           the policy's signedIdentity.matchPolicy "
    "(default\n"
    "                               MatchRepository)\n";

/* (its own string: one literal would pass the 4095 bytes C99 promises) */
static const char vi_help_common[] =
    CLI_COMMON_HELP "\n"
                    "Exit status: 0 every image verified, 1 a signature "
                    "missing or refused,\n"
                    "2 usage error, 3 runtime error.\n";

#define MAX_LIST 64

/* The command line: the lists the options point at, and the library's
 * options (al_verify_image_run). */
typedef struct vi_opts {
	const char *keys[MAX_LIST], *fulcio[MAX_LIST], *rekor[MAX_LIST],
	    *tsa[MAX_LIST], *pki[MAX_LIST], *roots[MAX_LIST];
	const char *mirrors[MAX_LIST], *scopes[MAX_LIST];
	const char *store_path;
	int carry;
	al_verify_image_opts lib;
} vi_opts;

/* What the events of one run come to: the worst exit status. */
typedef struct vi_state {
	cli_common *cc;
	int code;
} vi_state;

static int push(const char **list, size_t *n, const char *v)
{
	if (*n >= MAX_LIST)
		return -1;
	list[(*n)++] = v;
	return 0;
}

int cli_parse_attachments(unsigned *out, const char *s)
{
	unsigned w = 0;

	while (*s != '\0') {
		const char *end = strchr(s, ',');
		size_t n = end != NULL ? (size_t)(end - s) : strlen(s);

		if (n == 3 && strncmp(s, "sig", 3) == 0)
			w |= AL_COSIGN_FIND_SIG;
		else if (n == 3 && strncmp(s, "att", 3) == 0)
			w |= AL_COSIGN_FIND_ATT;
		else if (n == 4 && strncmp(s, "sbom", 4) == 0)
			w |= AL_COSIGN_FIND_SBOM;
		else if (n == 9 && strncmp(s, "referrers", 9) == 0)
			w |= AL_COSIGN_FIND_REFERRERS;
		else
			return -1;
		s += n;
		if (*s == ',')
			s++;
	}
	*out = w;
	return w != 0 ? 0 : -1;
}

static int parse_match(al_cosign_match *out, const char *s)
{
	if (strcmp(s, "MatchRepoDigestOrExact") == 0)
		*out = AL_COSIGN_MATCH_REPO_DIGEST_OR_EXACT;
	else if (strcmp(s, "MatchRepository") == 0)
		*out = AL_COSIGN_MATCH_REPOSITORY;
	else
		return -1;
	return 0;
}

/* ", keyless: SUBJECT", or ", key ID" (the signer of ev). */
static const char *signer(const al_verify_image_event *ev)
{
	if (ev->keyless)
		return ev->signer != NULL ? cli_esc(ev->signer) : "";
	return cli_esc(ev->signer != NULL ? ev->signer : "");
}

static void carried(vi_state *st, const al_verify_image_event *ev)
{
	const al_cosign_carry_report *rep = ev->carried;

	cli_progress_done(st->cc);
	if (rep->skipped > 0)
		cli_warn("%zu referrer(s) left out: their subject is another "
		         "image",
		         rep->skipped);
	if (ev->status < 0) {
		cli_error("%zu image(s) failed; first: %s", rep->failed,
		          rep->first_error != NULL ? rep->first_error : "");
		st->code = cli_worst(st->code, cli_exit_code(ev->status));
	}
	printf("carried %zu signature artifact(s) of %zu image(s), %zu "
	       "referrers index(es)\n",
	       rep->artifacts, rep->images, rep->indexes);
}

/* Print one event of al_verify_image_run; keep the worst exit status. */
static void on_event(void *ud, const al_verify_image_event *ev)
{
	vi_state *st = ud;
	char ds[AL_DIGEST_STRMAX];
	int code = EXIT_OK;

	switch (ev->kind) {
	case AL_VERIFY_IMAGE_EV_VERIFIED:
		printf("%s: verified (signature %zu, %s%s%s%s)\n",
		       cli_esc(ev->subject), ev->index,
		       ev->from_bundle ? "bundle" : "cosign tag",
		       ev->keyless ? ", keyless: " : ", key ", signer(ev),
		       ev->tlog ? ", logged in Rekor" : "");
		break;
	case AL_VERIFY_IMAGE_EV_BLOB_VERIFIED:
		printf("%s: verified (bundle %s, %s%s%s)\n",
		       cli_esc(ev->subject), cli_esc(ev->bundle),
		       ev->keyless ? "keyless: " : "key ", signer(ev),
		       ev->tlog ? ", logged in Rekor" : "");
		break;
	case AL_VERIFY_IMAGE_EV_ACCEPTED:
		printf("%s: accepted by %s (scope %s), signature %zu%s%s\n",
		       cli_esc(ev->subject), cli_esc(ev->policy),
		       cli_esc(ev->scope), ev->index,
		       ev->keyless ? ", keyless: " : "",
		       ev->keyless && ev->signer != NULL ? cli_esc(ev->signer)
		                                         : "");
		break;
	case AL_VERIFY_IMAGE_EV_UNCOVERED:
		printf("%s: no policy scope covers it (not checked)\n",
		       cli_esc(ev->subject));
		break;
	case AL_VERIFY_IMAGE_EV_REFUSED:
		cli_error("%s: %s", ev->subject, ev->message);
		code = EXIT_VERIFY;
		break;
	case AL_VERIFY_IMAGE_EV_FAILED:
		code = cli_fail(ev->status, "%s", ev->subject);
		break;
	case AL_VERIFY_IMAGE_EV_INPUT_FAILED:
		cli_error("%s", ev->message);
		code = cli_input_exit_code(ev->status);
		break;
	case AL_VERIFY_IMAGE_EV_BAD_ARGUMENT:
		code = cli_usage_error("verify-image", "%s", ev->message);
		break;
	case AL_VERIFY_IMAGE_EV_SKIPPED:
		cli_warn("%s: %zu referrer(s) left out: %s", ev->subject,
		         ev->count, ev->message);
		break;
	case AL_VERIFY_IMAGE_EV_FOUND:
		if (st->cc->verbose)
			fprintf(stderr,
			        "%s: %zu signature artifact(s), %zu "
			        "candidate(s)%s%s\n",
			        ev->subject, ev->count, ev->candidates,
			        ev->referrers_api ? ", referrers API" : "",
			        ev->referrers_tag ? ", referrers tag" : "");
		break;
	case AL_VERIFY_IMAGE_EV_WROTE:
		printf("%s\n", ev->subject);
		break;
	case AL_VERIFY_IMAGE_EV_KEPT_ROOT:
		printf("kept the trusted root %s (%s) in the store\n",
		       cli_esc(ev->subject), al_digest_str(&ev->digest, ds));
		break;
	case AL_VERIFY_IMAGE_EV_CARRIED:
		carried(st, ev);
		break;
	}
	st->code = cli_worst(st->code, code);
}

/* Run the library's verify-image over the images; the exit status. */
static int run(cli_common *c, vi_opts *o, char **images, size_t n)
{
	vi_state st = {.cc = c, .code = EXIT_OK};
	int rc;

	o->lib.on_event = on_event;
	o->lib.ud = &st;
	rc = al_verify_image_run(&o->lib, (const char *const *)images, n);
	if (rc < 0)
		return cli_fail(rc, "verify-image");
	return st.code;
}

/* The store's trusted root, when nothing but keys (or nothing) says what
 * to trust: never added to PEM trust or another root, which it would
 * widen. Sets o->lib.use_kept; an exit status. */
static int probe_kept_root(cli_common *c, vi_opts *o)
{
	const al_verify_image_opts *l = &o->lib;
	al_store_opts so = AL_STORE_OPTS_INIT;
	al_store *store = NULL;
	al_buf kb = AL_BUF_INIT(AL_COSIGN_MAX_PEM);
	al_digest kd;
	char kds[AL_DIGEST_STRMAX];
	int rc;

	if (o->store_path == NULL || l->policy != NULL || l->nroots > 0 ||
	    l->nfulcio > 0 || l->nrekor > 0 || l->ntsa > 0 || l->npki > 0)
		return EXIT_OK;
	so.readonly = 1;
	if ((rc = al_store_open(&store, o->store_path, &so)) < 0)
		return cli_fail(rc, "cannot open store '%s'", o->store_path);
	rc = al_cosign_store_root_get(store, &kb, &kd);
	al_buf_free(&kb);
	al_store_free(store);
	if (rc == 0) {
		o->lib.use_kept = 1;
		cli_info(c, "using the trusted root kept in the store (%s)",
		         al_digest_str(&kd, kds));
	} else if (rc != AL_ENOTFOUND) {
		cli_error("%s", al_error_message());
		return cli_input_exit_code(rc);
	}
	al_error_clear();
	return EXIT_OK;
}

/* --carry: the store opened for writing, the transfer settings. */
static int carry(cli_common *c, vi_opts *o, char **names, size_t n)
{
	al_store *store = NULL;
	al_store_opts so = AL_STORE_OPTS_INIT;
	al_transfer_opts to;
	int rc, code;

	so.lock_wait_ms = 30000;
	if ((rc = al_store_open(&store, o->store_path, &so)) < 0)
		return cli_fail(rc, "cannot open store '%s'", o->store_path);
	cli_transfer_opts(c, &to);
	o->lib.mode = AL_VERIFY_IMAGE_CARRY;
	o->lib.store = store;
	o->lib.transfer = &to;
	code = run(c, o, names, n);
	al_store_free(store);
	return code;
}

/* The checks of the options the library does not judge: which trust,
 * and what goes with what. */
static int check_trust_opts(const vi_opts *o, int nimages)
{
	const al_verify_image_opts *l = &o->lib;

	if ((l->policy != NULL) ==
	    (l->nkeys > 0 || l->nfulcio > 0 || l->npki > 0 || l->nroots > 0 ||
	     l->use_kept))
		return cli_usage_error(
		    "verify-image",
		    "give --policy, or --key / --fulcio-root "
		    "/ --trusted-root / --pki-ca (one of them), or a --store "
		    "that keeps a trusted root");
	if (nimages == 0 && l->policy != NULL)
		return cli_usage_error("verify-image",
		                       "--policy needs an IMAGE");
	if (l->nfulcio > 0 && l->npki > 0)
		return cli_usage_error(
		    "verify-image", "--fulcio-root and --pki-ca exclude each "
		                    "other");
	if (l->npki > 0 && l->pki_email == NULL && l->pki_host == NULL)
		return cli_usage_error("verify-image",
		                       "--pki-ca needs --pki-email or "
		                       "--pki-hostname");
	if ((l->nroots > 0 || l->use_kept) && l->nkeys == 0 && l->npki == 0 &&
	    l->issuer == NULL && l->subject == NULL)
		return cli_usage_error("verify-image",
		                       "a trusted root needs "
		                       "--certificate-identity or "
		                       "--certificate-oidc-issuer (or --key)");
	if (l->nfulcio > 0 && l->issuer == NULL && l->subject == NULL)
		return cli_usage_error("verify-image",
		                       "--fulcio-root needs "
		                       "--certificate-identity or "
		                       "--certificate-oidc-issuer");
	return EXIT_OK;
}

/* --timestamp-threshold N: 1 to 32. */
static int parse_min_times(size_t *out, const char *s)
{
	char *end = NULL;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < 1 || v > 32 ||
	    s[0] == '-')
		return -1;
	*out = (size_t)v;
	return 0;
}

/* One option of the command; nonzero when its value is refused. */
static int parse_opt(vi_opts *o, int opt, const char *arg)
{
	al_verify_image_opts *l = &o->lib;

	switch (opt) {
	case OPT_KEY:
		return push(o->keys, &l->nkeys, arg);
	case OPT_FULCIO:
		return push(o->fulcio, &l->nfulcio, arg);
	case OPT_REKOR:
		return push(o->rekor, &l->nrekor, arg);
	case OPT_MIRROR:
		return push(o->mirrors, &l->nmirrors, arg);
	case OPT_SCOPE:
		return push(o->scopes, &l->nscopes, arg);
	case OPT_TSA:
		return push(o->tsa, &l->ntsa, arg);
	case OPT_PKI_CA:
		return push(o->pki, &l->npki, arg);
	case OPT_TRUSTED_ROOT:
		return push(o->roots, &l->nroots, arg);
	case OPT_ISSUER:
		l->issuer = arg;
		return 0;
	case OPT_SUBJECT:
		l->subject = arg;
		return 0;
	case OPT_REQUIRE_TLOG:
		l->require_tlog = 1;
		return 0;
	case OPT_MIN_TIMES:
		return parse_min_times(&l->min_times, arg);
	case OPT_POLICY:
		l->policy = arg;
		return 0;
	case OPT_IDENTITY:
		return al_sig_identity_policy_parse(&l->identity, arg) < 0;
	case OPT_STORE:
		o->store_path = arg;
		return 0;
	case OPT_BUNDLE:
		l->bundle = arg;
		return 0;
	case OPT_ARTIFACT:
		l->artifact = arg;
		return 0;
	case OPT_ATTACH:
		return cli_parse_attachments(&l->what, arg) < 0;
	case OPT_WRITE_CONFIG:
		l->config_dir = arg;
		return 0;
	case OPT_MATCH:
		return parse_match(&l->match, arg) < 0;
	case OPT_CARRY:
		o->carry = 1;
		return 0;
	case OPT_PKI_EMAIL:
		l->pki_email = arg;
		return 0;
	case OPT_PKI_HOST:
		l->pki_host = arg;
		return 0;
	}
	return -1;
}

static void opts_init(vi_opts *o)
{
	al_verify_image_opts init = AL_VERIFY_IMAGE_OPTS_INIT;

	memset(o, 0, sizeof(*o));
	o->lib = init;
	o->lib.keys = o->keys;
	o->lib.fulcio = o->fulcio;
	o->lib.rekor = o->rekor;
	o->lib.tsa = o->tsa;
	o->lib.pki = o->pki;
	o->lib.roots = o->roots;
	o->lib.mirrors = o->mirrors;
	o->lib.scopes = o->scopes;
}

/* Verify the images (none: the bundle over the artifact) in the store or
 * their registries; an exit status. */
static int check(cli_common *c, vi_opts *o, char **images, size_t n)
{
	al_store *store = NULL;
	al_store_opts so = AL_STORE_OPTS_INIT;
	al_registry_opts ro;
	int rc, code;

	so.readonly = 1;
	if (o->store_path != NULL &&
	    (rc = al_store_open(&store, o->store_path, &so)) < 0)
		return cli_fail(rc, "cannot open store '%s'", o->store_path);
	cli_registry_opts(c, &ro);
	ro.insecure = !c->tls_verify;
	o->lib.mode = AL_VERIFY_IMAGE_CHECK;
	o->lib.store = store;
	o->lib.registry = &ro;
	code = run(c, o, images, n);
	al_store_free(store);
	return code;
}

int cmd_verify_image(int argc, char **argv)
{
	static const struct option longopts[] = {
	    CLI_COMMON_OPTIONS,
	    {"key", required_argument, NULL, OPT_KEY},
	    {"fulcio-root", required_argument, NULL, OPT_FULCIO},
	    {"rekor-key", required_argument, NULL, OPT_REKOR},
	    {"certificate-oidc-issuer", required_argument, NULL, OPT_ISSUER},
	    {"certificate-identity", required_argument, NULL, OPT_SUBJECT},
	    {"require-tlog", no_argument, NULL, OPT_REQUIRE_TLOG},
	    {"timestamp-threshold", required_argument, NULL, OPT_MIN_TIMES},
	    {"policy", required_argument, NULL, OPT_POLICY},
	    {"identity", required_argument, NULL, OPT_IDENTITY},
	    {"store", required_argument, NULL, OPT_STORE},
	    {"bundle", required_argument, NULL, OPT_BUNDLE},
	    {"artifact", required_argument, NULL, OPT_ARTIFACT},
	    {"attachments", required_argument, NULL, OPT_ATTACH},
	    {"write-config", required_argument, NULL, OPT_WRITE_CONFIG},
	    {"mirror", required_argument, NULL, OPT_MIRROR},
	    {"scope", required_argument, NULL, OPT_SCOPE},
	    {"match", required_argument, NULL, OPT_MATCH},
	    {"carry", no_argument, NULL, OPT_CARRY},
	    {"tsa-cert-chain", required_argument, NULL, OPT_TSA},
	    {"pki-ca", required_argument, NULL, OPT_PKI_CA},
	    {"pki-email", required_argument, NULL, OPT_PKI_EMAIL},
	    {"pki-hostname", required_argument, NULL, OPT_PKI_HOST},
	    {"trusted-root", required_argument, NULL, OPT_TRUSTED_ROOT},
	    {NULL, 0, NULL, 0},
	};
	cli_common c;
	vi_opts o;
	size_t nimages;
	int opt, code = EXIT_OK;

	opts_init(&o);
	cli_common_init(&c);
	optind = 1;
	while ((opt = cli_getopt(&c, "verify-image", argc, argv, "h",
	                         longopts)) != -1) {
		if (opt == 'h') {
			fputs(vi_help, stdout);
			fputs(vi_help_common, stdout);
			return EXIT_OK;
		}
		if (opt == '?' || opt == ':' || opt < OPT_COMMAND_BASE)
			return EXIT_USAGE;
		if (parse_opt(&o, opt, optarg) != 0)
			return cli_usage_error("verify-image",
			                       "invalid option value '%s'",
			                       optarg != NULL ? optarg : "");
	}
	nimages = (size_t)(argc - optind);
	cli_log_start(&c);
	if (o.lib.config_dir != NULL) {
		if (nimages != 0)
			return cli_usage_error("verify-image",
			                       "--write-config takes no IMAGE");
		if (o.lib.nmirrors == 0)
			return cli_usage_error("verify-image",
			                       "--write-config needs --mirror");
		o.lib.mode = AL_VERIFY_IMAGE_WRITE_CONFIG;
		return run(&c, &o, NULL, 0);
	}
	if (o.carry) {
		if (o.store_path == NULL)
			return cli_usage_error("verify-image",
			                       "--carry needs --store");
		if (o.lib.nroots > 1)
			return cli_usage_error(
			    "verify-image", "--carry keeps one --trusted-root");
		if ((code = cli_common_start(&c)) == EXIT_OK)
			code = carry(&c, &o, argv + optind, nimages);
		goto out;
	}
	if (nimages == 0 && (o.lib.bundle == NULL || o.lib.artifact == NULL))
		return cli_usage_error("verify-image",
		                       "give an IMAGE, or --bundle and "
		                       "--artifact");
	if ((code = probe_kept_root(&c, &o)) != EXIT_OK)
		return code;
	if ((code = check_trust_opts(&o, (int)nimages)) != EXIT_OK)
		return code;
	if ((code = cli_common_start(&c)) == EXIT_OK)
		code = check(&c, &o, argv + optind, nimages);
out:
	cli_common_finish(&c);
	return code;
}
