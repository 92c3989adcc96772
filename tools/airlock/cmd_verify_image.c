/* cmd_verify_image.c: airlock verify-image: check an image's sigstore
 * (cosign) signatures, in a registry or a store, against keys, a Fulcio
 * identity or a ClusterImagePolicy; write the registries.d and policy
 * resources a mirror needs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "airlock/cosign.h"
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
#define MAX_BLOB (256 * AL_MIB) /* an artifact read for blob mode */

typedef struct vi_opts {
	const char *keys[MAX_LIST], *fulcio[MAX_LIST], *rekor[MAX_LIST],
	    *tsa[MAX_LIST], *pki[MAX_LIST], *roots[MAX_LIST];
	size_t nkeys, nfulcio, nrekor, ntsa, npki, nroots;
	const char *pki_email, *pki_host;
	const char *mirrors[MAX_LIST], *scopes[MAX_LIST];
	size_t nmirrors, nscopes;
	const char *issuer, *subject, *policy, *store, *bundle, *artifact;
	const char *write_config;
	int require_tlog;
	size_t min_times;
	int carry;
	int use_kept;   /* --store keeps a trusted root, and it is used */
	al_store *kept; /* that store, open */
	al_sig_identity_policy identity;
	al_cosign_match match;
	unsigned what;
} vi_opts;

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

static int build_trust(al_cosign_trust **out, const vi_opts *o)
{
	al_cosign_trust *t = NULL;
	size_t i;
	int rc;

	if ((rc = al_cosign_trust_new(&t)) < 0)
		return cli_fail(rc, "cannot set up trust");
	for (i = 0; i < o->nroots; i++) {
		if ((rc = al_cosign_trust_add_trusted_root_file(
		         t, o->roots[i])) < 0)
			goto fail;
	}
	for (i = 0; i < o->nkeys; i++) {
		if ((rc = al_cosign_trust_add_keys_file(t, o->keys[i])) < 0)
			goto fail;
	}
	for (i = 0; i < o->nfulcio; i++) {
		if ((rc = al_cosign_trust_add_fulcio_file(t, o->fulcio[i])) < 0)
			goto fail;
	}
	for (i = 0; i < o->nrekor; i++) {
		if ((rc = al_cosign_trust_add_rekor_file(t, o->rekor[i])) < 0)
			goto fail;
	}
	for (i = 0; i < o->ntsa; i++) {
		if ((rc = al_cosign_trust_add_tsa_file(t, o->tsa[i])) < 0)
			goto fail;
	}
	for (i = 0; i < o->npki; i++) {
		if ((rc = al_cosign_trust_add_fulcio_file(t, o->pki[i])) < 0)
			goto fail;
	}
	if (o->kept != NULL &&
	    (rc = al_cosign_trust_add_store_root(t, o->kept)) < 0)
		goto fail;
	if (o->npki > 0 &&
	    (rc = al_cosign_trust_set_pki(t, o->pki_email, o->pki_host)) < 0)
		goto fail;
	if ((o->issuer != NULL || o->subject != NULL) &&
	    (rc = al_cosign_trust_set_identity(t, o->issuer, o->subject)) < 0)
		goto fail;
	*out = t;
	return EXIT_OK;
fail:
	al_cosign_trust_free(t);
	cli_error("%s", al_error_message());
	return cli_input_exit_code(rc);
}

static int slurp(al_buf *b, const char *path, size_t max)
{
	al_buf_init(b, max);
	return al_fs_read_file(path, b);
}

/* Verify the candidates against trust or policy; print the outcome.
 * reference is what the policy and identity see (the image as pulled),
 * shown what the messages name (the image by digest). */
static int judge(const vi_opts *o, const al_cosign_trust *t,
                 const al_cosign_policy *pol, const char *reference,
                 const char *shown, const al_digest *digest,
                 const al_cosign_candidate *c, size_t n)
{
	al_buf why = AL_BUF_INIT(8192);
	al_cosign_opts opts;
	size_t i;
	int rc, code = EXIT_VERIFY;

	if (pol != NULL) {
		al_cosign_verdict v;

		memset(&v, 0, sizeof(v));
		if ((rc = al_cosign_policy_check(&v, pol, reference, digest, c,
		                                 n)) < 0) {
			al_buf_free(&why);
			return cli_fail(rc, "%s", shown);
		}
		if (!v.covered)
			printf("%s: no policy scope covers it (not checked)\n",
			       cli_esc(shown));
		else
			printf("%s: accepted by %s (scope %s), signature "
			       "%zu%s%s\n",
			       cli_esc(shown), cli_esc(v.policy),
			       cli_esc(v.scope), v.which + 1,
			       v.info.keyless ? ", keyless: " : "",
			       v.info.keyless && v.info.subject != NULL
			           ? cli_esc(v.info.subject)
			           : "");
		al_cosign_verdict_clear(&v);
		al_buf_free(&why);
		return EXIT_OK;
	}
	memset(&opts, 0, sizeof(opts));
	opts.trust = t;
	opts.require_tlog = o->require_tlog;
	opts.min_times = o->min_times;
	for (i = 0; i < n; i++) {
		al_cosign_info info;

		memset(&info, 0, sizeof(info));
		if (c[i].sig != NULL)
			rc = al_cosign_verify_sig(&info, c[i].sig, &opts);
		else
			rc = al_cosign_verify_bundle(
			    &info, c[i].bundle, c[i].bundle_len, c[i].artifact,
			    c[i].artifact_len, &opts);
		if (rc == 0)
			rc = al_cosign_check_image(&info, digest, reference,
			                           o->identity);
		if (rc == 0) {
			printf("%s: verified (signature %zu, %s%s%s%s)\n",
			       cli_esc(shown), i + 1,
			       c[i].sig != NULL ? "cosign tag" : "bundle",
			       info.keyless ? ", keyless: " : ", key ",
			       info.keyless ? (info.subject != NULL
			                           ? cli_esc(info.subject)
			                           : "")
			                    : cli_esc(info.key_id),
			       info.tlog_verified ? ", logged in Rekor" : "");
			al_cosign_info_clear(&info);
			code = EXIT_OK;
			break;
		}
		if (rc == AL_EINVAL) {
			/* no trust for this kind of signature: say so, as a
			 * refusal of this one only */
			(void)al_buf_printf(&why, "%ssignature %zu: %s",
			                    why.len > 0 ? "; " : "", i + 1,
			                    al_error_message());
		} else if (rc == AL_ENOMEM) {
			al_cosign_info_clear(&info);
			al_buf_free(&why);
			return cli_fail(rc, "%s", shown);
		} else {
			(void)al_buf_printf(&why, "%ssignature %zu: %s",
			                    why.len > 0 ? "; " : "", i + 1,
			                    al_error_message());
		}
		al_cosign_info_clear(&info);
	}
	if (code != EXIT_OK)
		cli_error("%s: %s", shown,
		          n == 0 ? "no sigstore signature found"
		                 : al_buf_cstr(&why));
	al_buf_free(&why);
	return code;
}

/* Blob mode: the bundle over the artifact file, no image (cosign
 * verify-blob; the sigstore-conformance verify-bundle protocol). */
static int verify_blob(const vi_opts *o, const al_cosign_trust *t)
{
	al_buf b, a;
	al_cosign_opts opts;
	al_cosign_info info;
	int rc, code;

	memset(&info, 0, sizeof(info));
	if ((rc = slurp(&b, o->bundle, AL_COSIGN_MAX_BUNDLE)) < 0) {
		al_buf_free(&b);
		return cli_fail(rc, "cannot read '%s'", o->bundle);
	}
	if ((rc = slurp(&a, o->artifact, MAX_BLOB)) < 0) {
		al_buf_free(&b);
		al_buf_free(&a);
		return cli_fail(rc, "cannot read '%s'", o->artifact);
	}
	memset(&opts, 0, sizeof(opts));
	opts.trust = t;
	opts.require_tlog = o->require_tlog;
	opts.min_times = o->min_times;
	rc = al_cosign_verify_bundle(&info, b.ptr, b.len, a.ptr, a.len, &opts);
	if (rc == 0)
		rc = al_cosign_check_blob(&info, a.ptr, a.len);
	if (rc == 0) {
		printf("%s: verified (bundle %s, %s%s%s)\n",
		       cli_esc(o->artifact), cli_esc(o->bundle),
		       info.keyless ? "keyless: " : "key ",
		       info.keyless
		           ? (info.subject != NULL ? cli_esc(info.subject) : "")
		           : cli_esc(info.key_id),
		       info.tlog_verified ? ", logged in Rekor" : "");
		code = EXIT_OK;
	} else if (rc == AL_ENOMEM || rc == AL_EINVAL) {
		code = cli_fail(rc, "%s", o->artifact);
	} else {
		cli_error("%s: %s", o->artifact, al_error_message());
		code = EXIT_VERIFY;
	}
	al_cosign_info_clear(&info);
	al_buf_free(&b);
	al_buf_free(&a);
	return code;
}

static int verify_one(cli_common *cc, const vi_opts *o,
                      const al_cosign_trust *t, const al_cosign_policy *pol,
                      al_store *store, const char *arg)
{
	al_imgref ir;
	al_registry *reg = NULL;
	al_registry_opts ro;
	al_cosign_source *src = NULL;
	al_cosign_found found;
	al_cosign_cands cands;
	al_buf body = AL_BUF_INIT(AL_MANIFEST_MAX);
	al_digest digest;
	char *reference = NULL, *shown = NULL, *name = NULL, *mt = NULL;
	int rc, code = EXIT_OK;

	memset(&ir, 0, sizeof(ir));
	memset(&found, 0, sizeof(found));
	memset(&cands, 0, sizeof(cands));
	if (al_imgref_parse(&ir, arg) < 0 ||
	    ir.transport != AL_TRANSPORT_DOCKER) {
		code = cli_usage_error("verify-image",
		                       "'%s' is not a docker:// image", arg);
		goto out;
	}
	name = al_ref_name(&ir.ref);
	if (name == NULL) {
		code = cli_fail(AL_ENOMEM, "out of memory");
		goto out;
	}
	if (o->bundle != NULL) {
		al_buf b, a = AL_BUF_INIT(AL_COSIGN_MAX_PAYLOAD);
		al_cosign_candidate cand;

		if (ir.ref.digest == NULL ||
		    al_digest_parse_str(&digest, ir.ref.digest) < 0) {
			code = cli_usage_error("verify-image",
			                       "--bundle needs IMAGE@DIGEST");
			goto out;
		}
		if ((rc = slurp(&b, o->bundle, AL_COSIGN_MAX_BUNDLE)) < 0 ||
		    (o->artifact != NULL &&
		     (rc = al_fs_read_file(o->artifact, &a)) < 0)) {
			al_buf_free(&b);
			al_buf_free(&a);
			code = cli_fail(rc, "cannot read '%s'",
			                o->artifact != NULL ? o->artifact
			                                    : o->bundle);
			goto out;
		}
		memset(&cand, 0, sizeof(cand));
		cand.bundle = b.ptr;
		cand.bundle_len = b.len;
		cand.artifact = a.ptr;
		cand.artifact_len = a.len;
		reference = al_ref_string(&ir.ref);
		code = judge(o, t, pol, reference != NULL ? reference : arg,
		             reference != NULL ? reference : arg, &digest,
		             &cand, 1);
		al_buf_free(&b);
		al_buf_free(&a);
		goto out;
	}
	if (store != NULL) {
		rc = al_cosign_source_store(&src, store, name);
	} else {
		cli_registry_opts(cc, &ro);
		ro.insecure = !cc->tls_verify;
		if ((rc = al_registry_new(&reg, ir.ref.registry, &ro)) < 0) {
			code =
			    cli_fail(rc, "cannot reach '%s'", ir.ref.registry);
			goto out;
		}
		rc = al_cosign_source_registry(&src, reg, ir.ref.repository);
	}
	if (rc < 0) {
		code = cli_fail(rc, "%s", arg);
		goto out;
	}
	/* the digest the signatures must name */
	if (ir.ref.digest != NULL) {
		if (al_digest_parse_str(&digest, ir.ref.digest) < 0) {
			code = cli_usage_error("verify-image",
			                       "bad digest in "
			                       "'%s'",
			                       arg);
			goto out;
		}
	} else {
		const char *tag = ir.ref.tag != NULL ? ir.ref.tag : "latest";

		if (store != NULL) {
			al_store_image img;
			char *full = al_sprintf("%s:%s", name, tag);

			memset(&img, 0, sizeof(img));
			rc = full != NULL ? al_store_find(store, full, &img)
			                  : AL_ENOMEM;
			free(full);
			if (rc == 0)
				digest = img.desc.digest;
			al_store_image_clear(&img);
		} else {
			rc = al_registry_get_manifest(reg, ir.ref.repository,
			                              tag, &body, &mt, &digest);
		}
		if (rc < 0) {
			code = cli_fail(rc, "cannot resolve '%s'", arg);
			goto out;
		}
	}
	if ((rc = al_cosign_discover(&found, src, &digest, o->what)) < 0 ||
	    (rc = al_cosign_candidates(&cands, src, &found)) < 0) {
		code = cli_fail(rc, "looking up the signatures of '%s'", arg);
		goto out;
	}
	if (found.skipped > 0)
		cli_warn("%s: %zu referrer(s) left out: %s", arg, found.skipped,
		         found.skipped_reason != NULL ? found.skipped_reason
		                                      : "");
	if (cc->verbose)
		fprintf(stderr,
		        "%s: %zu signature artifact(s), %zu candidate(s)%s%s\n",
		        arg, found.n, cands.n,
		        found.referrers_api ? ", referrers API" : "",
		        found.fallback_tag != NULL ? ", referrers tag" : "");
	/* The policy sees the image as it is pulled: by tag, the tag (a
	 * MatchRepoDigestOrExact signature must name exactly that tag,
	 * containers/image policy_reference_match.go); the digest it
	 * resolved to is what the signatures must name. */
	reference =
	    ir.ref.digest != NULL
	        ? al_ref_string(&ir.ref)
	        : al_sprintf("%s:%s", name,
	                     ir.ref.tag != NULL ? ir.ref.tag : "latest");
	{
		char ds[AL_DIGEST_STRMAX];

		shown =
		    ir.ref.digest != NULL
		        ? al_strdup(reference != NULL ? reference : "")
		        : al_sprintf("%s@%s", name, al_digest_str(&digest, ds));
	}
	if (reference == NULL || shown == NULL) {
		code = cli_fail(AL_ENOMEM, "out of memory");
		goto out;
	}
	code =
	    judge(o, t, pol, reference, shown, &digest, cands.items, cands.n);
out:
	al_cosign_cands_clear(&cands);
	al_cosign_found_clear(&found);
	al_cosign_source_free(src);
	al_registry_free(reg);
	al_buf_free(&body);
	al_imgref_clear(&ir);
	free(reference);
	free(shown);
	free(name);
	free(mt);
	return code;
}

static int write_config(const vi_opts *o)
{
	al_buf out = AL_BUF_INIT(1024 * 1024), key = AL_BUF_INIT(0),
	       fulcio = AL_BUF_INIT(0), rekor = AL_BUF_INIT(0);
	al_cosign_policy_spec sp;
	char *dir = NULL, *path = NULL;
	int rc, code = EXIT_OK;

	if (o->nmirrors == 0)
		return cli_usage_error("verify-image",
		                       "--write-config needs --mirror");
	if ((dir = al_path_join(o->write_config, "registries.d")) == NULL ||
	    (path = al_path_join(dir, "airlock-sigstore.yaml")) == NULL) {
		code = cli_fail(AL_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = al_cosign_emit_registries_d(&out, o->mirrors, o->nmirrors)) <
	    0) {
		code =
		    cli_usage_error("verify-image", "%s", al_error_message());
		goto out;
	}
	if ((rc = al_fs_mkdir_p(dir, 0755)) < 0 ||
	    (rc = al_fs_write_atomic(path, out.ptr, out.len)) < 0) {
		code = cli_fail(rc, "cannot write '%s'", path);
		goto out;
	}
	printf("%s\n", path);
	if (o->nkeys == 0 && o->nfulcio == 0)
		goto out;
	memset(&sp, 0, sizeof(sp));
	sp.name = "airlock-sigstore";
	sp.scopes = o->nscopes > 0 ? o->scopes : o->mirrors;
	sp.nscopes = o->nscopes > 0 ? o->nscopes : o->nmirrors;
	sp.match = o->match;
	sp.oidc_issuer = o->issuer;
	sp.signed_email = o->subject;
	if ((o->nkeys > 0 &&
	     (rc = slurp(&key, o->keys[0], AL_COSIGN_MAX_PEM)) < 0) ||
	    (o->nfulcio > 0 &&
	     (rc = slurp(&fulcio, o->fulcio[0], AL_COSIGN_MAX_PEM)) < 0) ||
	    (o->nrekor > 0 &&
	     (rc = slurp(&rekor, o->rekor[0], AL_COSIGN_MAX_PEM)) < 0)) {
		code = cli_fail(rc, "cannot read a key file");
		goto out;
	}
	if (o->nkeys > 0) {
		sp.key_pem = key.ptr;
		sp.key_len = key.len;
	} else {
		sp.fulcio_pem = fulcio.ptr;
		sp.fulcio_len = fulcio.len;
	}
	if (o->nrekor > 0) {
		sp.rekor_pem = rekor.ptr;
		sp.rekor_len = rekor.len;
	}
	free(path);
	al_buf_reset(&out);
	if ((path = al_path_join(o->write_config, "clusterimagepolicy.yaml")) ==
	    NULL) {
		code = cli_fail(AL_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = al_cosign_emit_policy(&out, &sp)) < 0) {
		code =
		    cli_usage_error("verify-image", "%s", al_error_message());
		goto out;
	}
	if ((rc = al_fs_write_atomic(path, out.ptr, out.len)) < 0) {
		code = cli_fail(rc, "cannot write '%s'", path);
		goto out;
	}
	printf("%s\n", path);
out:
	al_buf_free(&out);
	al_buf_free(&key);
	al_buf_free(&fulcio);
	al_buf_free(&rekor);
	free(dir);
	free(path);
	return code;
}

/* Keep the trusted root at path in store (al_cosign_store_root_put). */
static int keep_root(al_store *store, const char *path)
{
	al_buf b;
	al_digest d;
	char ds[AL_DIGEST_STRMAX];
	int rc;

	if ((rc = slurp(&b, path, AL_COSIGN_MAX_PEM)) < 0) {
		cli_error("cannot read '%s': %s", path, al_error_message());
		goto out;
	}
	if ((rc = al_cosign_store_root_put(store, b.ptr, b.len, path)) < 0 ||
	    (rc = al_cosign_store_root_get(store, &b, &d)) < 0) {
		cli_error("%s", al_error_message());
		goto out;
	}
	printf("kept the trusted root %s (%s) in the store\n", cli_esc(path),
	       al_digest_str(&d, ds));
out:
	al_buf_free(&b);
	return rc;
}

static int carry(cli_common *c, const vi_opts *o, const char *const *names,
                 size_t n)
{
	al_store *store = NULL;
	al_store_opts so = {.lock_wait_ms = 30000};
	al_transfer_opts to;
	al_cosign_carry_report rep;
	int rc, code = EXIT_OK;

	memset(&rep, 0, sizeof(rep));
	if ((rc = al_store_open(&store, o->store, &so)) < 0)
		return cli_fail(rc, "cannot open store '%s'", o->store);
	if (o->nroots == 1 && (rc = keep_root(store, o->roots[0])) < 0) {
		code = cli_input_exit_code(rc);
		goto out;
	}
	cli_transfer_opts(c, &to);
	rc =
	    al_cosign_carry(store, n > 0 ? names : NULL, n, o->what, &to, &rep);
	cli_progress_done(c);
	if (rep.skipped > 0)
		cli_warn("%zu referrer(s) left out: their subject is another "
		         "image",
		         rep.skipped);
	if (rc < 0) {
		cli_error("%zu image(s) failed; first: %s", rep.failed,
		          rep.first_error != NULL ? rep.first_error : "");
		code = cli_exit_code(rc);
	}
	printf("carried %zu signature artifact(s) of %zu image(s), %zu "
	       "referrers index(es)\n",
	       rep.artifacts, rep.images, rep.indexes);
out:
	al_cosign_carry_report_clear(&rep);
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
	al_cosign_trust *t = NULL;
	al_cosign_policy *pol = NULL;
	al_store *store = NULL;
	al_store_opts so = {.readonly = 1};
	int opt, rc, code = EXIT_OK, i;

	memset(&o, 0, sizeof(o));
	o.identity = AL_SIG_IDENTITY_REPOSITORY;
	o.match = AL_COSIGN_MATCH_REPOSITORY;
	o.what = AL_COSIGN_FIND_DEFAULT;
	cli_common_init(&c);
	optind = 1;
	while ((opt = cli_getopt(&c, "verify-image", argc, argv, "h",
	                         longopts)) != -1) {
		int bad = 0;

		switch (opt) {
		case 'h':
			fputs(vi_help, stdout);
			fputs(vi_help_common, stdout);
			return EXIT_OK;
		case OPT_KEY:
			bad = push(o.keys, &o.nkeys, optarg);
			break;
		case OPT_FULCIO:
			bad = push(o.fulcio, &o.nfulcio, optarg);
			break;
		case OPT_REKOR:
			bad = push(o.rekor, &o.nrekor, optarg);
			break;
		case OPT_MIRROR:
			bad = push(o.mirrors, &o.nmirrors, optarg);
			break;
		case OPT_SCOPE:
			bad = push(o.scopes, &o.nscopes, optarg);
			break;
		case OPT_ISSUER:
			o.issuer = optarg;
			break;
		case OPT_SUBJECT:
			o.subject = optarg;
			break;
		case OPT_REQUIRE_TLOG:
			o.require_tlog = 1;
			break;
		case OPT_MIN_TIMES: {
			char *end = NULL;
			unsigned long v;

			errno = 0;
			v = strtoul(optarg, &end, 10);
			bad = errno != 0 || end == optarg || *end != '\0' ||
			      v < 1 || v > 32 || optarg[0] == '-';
			o.min_times = (size_t)v;
			break;
		}
		case OPT_POLICY:
			o.policy = optarg;
			break;
		case OPT_IDENTITY:
			bad = al_sig_identity_policy_parse(&o.identity,
			                                   optarg) < 0;
			break;
		case OPT_STORE:
			o.store = optarg;
			break;
		case OPT_BUNDLE:
			o.bundle = optarg;
			break;
		case OPT_ARTIFACT:
			o.artifact = optarg;
			break;
		case OPT_ATTACH:
			bad = cli_parse_attachments(&o.what, optarg) < 0;
			break;
		case OPT_WRITE_CONFIG:
			o.write_config = optarg;
			break;
		case OPT_MATCH:
			bad = parse_match(&o.match, optarg) < 0;
			break;
		case OPT_CARRY:
			o.carry = 1;
			break;
		case OPT_TSA:
			bad = push(o.tsa, &o.ntsa, optarg);
			break;
		case OPT_PKI_CA:
			bad = push(o.pki, &o.npki, optarg);
			break;
		case OPT_PKI_EMAIL:
			o.pki_email = optarg;
			break;
		case OPT_PKI_HOST:
			o.pki_host = optarg;
			break;
		case OPT_TRUSTED_ROOT:
			bad = push(o.roots, &o.nroots, optarg);
			break;
		default:
			return EXIT_USAGE;
		}
		if (bad)
			return cli_usage_error("verify-image",
			                       "invalid option value '%s'",
			                       optarg != NULL ? optarg : "");
	}
	cli_log_start(&c);
	if (o.write_config != NULL) {
		if (optind != argc)
			return cli_usage_error("verify-image",
			                       "--write-config takes no IMAGE");
		return write_config(&o);
	}
	if (o.carry) {
		if (o.store == NULL)
			return cli_usage_error("verify-image",
			                       "--carry needs --store");
		if (o.nroots > 1)
			return cli_usage_error(
			    "verify-image", "--carry keeps one --trusted-root");
		if ((code = cli_common_start(&c)) != EXIT_OK)
			goto out;
		code = carry(&c, &o, (const char *const *)argv + optind,
		             (size_t)(argc - optind));
		goto out;
	}
	if (optind == argc && (o.bundle == NULL || o.artifact == NULL))
		return cli_usage_error("verify-image",
		                       "give an IMAGE, or --bundle and "
		                       "--artifact");
	/* the store's trusted root, when nothing but keys (or nothing) says
	 * what to trust: never added to PEM trust or another root, which it
	 * would widen */
	if (o.store != NULL && o.policy == NULL && o.nroots == 0 &&
	    o.nfulcio == 0 && o.nrekor == 0 && o.ntsa == 0 && o.npki == 0) {
		al_buf kb = AL_BUF_INIT(AL_COSIGN_MAX_PEM);
		al_digest kd;
		char kds[AL_DIGEST_STRMAX];

		if ((rc = al_store_open(&store, o.store, &so)) < 0)
			return cli_fail(rc, "cannot open store '%s'", o.store);
		rc = al_cosign_store_root_get(store, &kb, &kd);
		al_buf_free(&kb);
		al_store_free(store);
		store = NULL;
		if (rc == 0) {
			o.use_kept = 1;
			cli_info(
			    &c, "using the trusted root kept in the store (%s)",
			    al_digest_str(&kd, kds));
		} else if (rc != AL_ENOTFOUND) {
			cli_error("%s", al_error_message());
			return cli_input_exit_code(rc);
		}
		al_error_clear();
	}
	if ((o.policy != NULL) == (o.nkeys > 0 || o.nfulcio > 0 || o.npki > 0 ||
	                           o.nroots > 0 || o.use_kept))
		return cli_usage_error(
		    "verify-image",
		    "give --policy, or --key / --fulcio-root "
		    "/ --trusted-root / --pki-ca (one of them), or a --store "
		    "that keeps a trusted root");
	if (optind == argc && o.policy != NULL)
		return cli_usage_error("verify-image",
		                       "--policy needs an IMAGE");
	if (o.nfulcio > 0 && o.npki > 0)
		return cli_usage_error(
		    "verify-image", "--fulcio-root and --pki-ca exclude each "
		                    "other");
	if (o.npki > 0 && o.pki_email == NULL && o.pki_host == NULL)
		return cli_usage_error("verify-image",
		                       "--pki-ca needs --pki-email or "
		                       "--pki-hostname");
	if ((o.nroots > 0 || o.use_kept) && o.nkeys == 0 && o.npki == 0 &&
	    o.issuer == NULL && o.subject == NULL)
		return cli_usage_error("verify-image",
		                       "a trusted root needs "
		                       "--certificate-identity or "
		                       "--certificate-oidc-issuer (or --key)");
	if (o.nfulcio > 0 && o.issuer == NULL && o.subject == NULL)
		return cli_usage_error("verify-image",
		                       "--fulcio-root needs "
		                       "--certificate-identity or "
		                       "--certificate-oidc-issuer");
	if ((code = cli_common_start(&c)) != EXIT_OK)
		goto out;
	if (o.store != NULL && (rc = al_store_open(&store, o.store, &so)) < 0) {
		code = cli_fail(rc, "cannot open store '%s'", o.store);
		goto out;
	}
	if (o.use_kept)
		o.kept = store;
	if (o.policy != NULL) {
		if ((rc = al_cosign_policy_load_file(&pol, o.policy)) < 0) {
			cli_error("%s", al_error_message());
			code = cli_input_exit_code(rc);
			goto out;
		}
	} else if ((code = build_trust(&t, &o)) != EXIT_OK) {
		goto out;
	}
	if (optind == argc) {
		code = verify_blob(&o, t);
		goto out;
	}
	for (i = optind; i < argc; i++) {
		code =
		    cli_worst(code, verify_one(&c, &o, t, pol, store, argv[i]));
	}
out:
	al_store_free(store);
	al_cosign_policy_free(pol);
	al_cosign_trust_free(t);
	cli_common_finish(&c);
	return code;
}
