/* verify_image.c: al_verify_image_run, the whole of airlock verify-image:
 * trust or policy set up, each image's signatures found and judged, blob
 * mode, the cluster configuration written, signatures carried into a
 * store. Every outcome is an event; nothing is printed here. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/oci.h"
#include "airlock/ref.h"
#include "airlock/verify_image.h"
#include "error_int.h"

/* One run: the options, the trust or policy they gave. */
typedef struct vi_run {
	const al_verify_image_opts *o;
	al_cosign_trust *trust;
	al_cosign_policy *policy;
} vi_run;

static void emit(const vi_run *r, al_verify_image_event *ev)
{
	if (r->o->on_event != NULL)
		r->o->on_event(r->o->ud, ev);
}

static void ev_init(al_verify_image_event *ev, al_verify_image_event_kind k)
{
	memset(ev, 0, sizeof(*ev));
	ev->kind = k;
}

/* A FAILED outcome: status rc, the context formatted from fmt. */
static void failed(const vi_run *r, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void failed(const vi_run *r, int rc, const char *fmt, ...)
{
	al_verify_image_event ev;
	char ctx[1024];
	va_list ap;

	va_start(ap, fmt);
	if (vsnprintf(ctx, sizeof(ctx), fmt, ap) < 0)
		ctx[0] = '\0';
	va_end(ap);
	ev_init(&ev, AL_VERIFY_IMAGE_EV_FAILED);
	ev.status = rc;
	ev.subject = ctx;
	emit(r, &ev);
}

/* A BAD_ARGUMENT (or INPUT_FAILED with rc < 0) outcome with a message. */
static void said(const vi_run *r, al_verify_image_event_kind k, int rc,
                 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void said(const vi_run *r, al_verify_image_event_kind k, int rc,
                 const char *fmt, ...)
{
	al_verify_image_event ev;
	char msg[2048];
	va_list ap;

	va_start(ap, fmt);
	if (vsnprintf(msg, sizeof(msg), fmt, ap) < 0)
		msg[0] = '\0';
	va_end(ap);
	ev_init(&ev, k);
	ev.status = k == AL_VERIFY_IMAGE_EV_BAD_ARGUMENT ? AL_EINVAL : rc;
	ev.message = msg;
	emit(r, &ev);
}

static int slurp(al_buf *b, const char *path, size_t max)
{
	al_buf_init(b, max);
	return al_fs_read_file(path, b);
}

static int add_files(al_cosign_trust *t, const char *const *files, size_t n,
                     int (*add)(al_cosign_trust *, const char *))
{
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		if ((rc = add(t, files[i])) < 0)
			return rc;
	}
	return 0;
}

/* The trust of the options (or the policy file); an INPUT_FAILED or
 * FAILED outcome when it cannot be had. */
static int load_trust(vi_run *r)
{
	const al_verify_image_opts *o = r->o;
	al_cosign_trust *t = NULL;
	int rc;

	if (o->policy != NULL) {
		if ((rc = al_cosign_policy_load_file(&r->policy, o->policy)) <
		    0)
			said(r, AL_VERIFY_IMAGE_EV_INPUT_FAILED, rc, "%s",
			     al_error_message());
		return rc;
	}
	if ((rc = al_cosign_trust_new(&t)) < 0) {
		failed(r, rc, "cannot set up trust");
		return rc;
	}
	if ((rc = add_files(t, o->roots, o->nroots,
	                    al_cosign_trust_add_trusted_root_file)) < 0 ||
	    (rc = add_files(t, o->keys, o->nkeys,
	                    al_cosign_trust_add_keys_file)) < 0 ||
	    (rc = add_files(t, o->fulcio, o->nfulcio,
	                    al_cosign_trust_add_fulcio_file)) < 0 ||
	    (rc = add_files(t, o->rekor, o->nrekor,
	                    al_cosign_trust_add_rekor_file)) < 0 ||
	    (rc = add_files(t, o->tsa, o->ntsa, al_cosign_trust_add_tsa_file)) <
	        0 ||
	    (rc = add_files(t, o->pki, o->npki,
	                    al_cosign_trust_add_fulcio_file)) < 0)
		goto fail;
	if (o->use_kept && o->store != NULL &&
	    (rc = al_cosign_trust_add_store_root(t, o->store)) < 0)
		goto fail;
	if (o->npki > 0 &&
	    (rc = al_cosign_trust_set_pki(t, o->pki_email, o->pki_host)) < 0)
		goto fail;
	if ((o->issuer != NULL || o->subject != NULL) &&
	    (rc = al_cosign_trust_set_identity(t, o->issuer, o->subject)) < 0)
		goto fail;
	r->trust = t;
	return 0;
fail:
	al_cosign_trust_free(t);
	said(r, AL_VERIFY_IMAGE_EV_INPUT_FAILED, rc, "%s", al_error_message());
	return rc;
}

static void cosign_opts(const vi_run *r, al_cosign_opts *opts)
{
	*opts = (al_cosign_opts)AL_COSIGN_OPTS_INIT;
	opts->trust = r->trust;
	opts->require_tlog = r->o->require_tlog;
	opts->min_times = r->o->min_times;
}

/* The policy's verdict on the candidates: one outcome. */
static void judge_policy(const vi_run *r, const char *reference,
                         const char *shown, const al_digest *digest,
                         const al_cosign_candidate *c, size_t n)
{
	al_cosign_verdict v;
	al_verify_image_event ev;
	int rc;

	memset(&v, 0, sizeof(v));
	if ((rc = al_cosign_policy_check(&v, r->policy, reference, digest, c,
	                                 n)) < 0) {
		failed(r, rc, "%s", shown);
		return;
	}
	ev_init(&ev, v.covered ? AL_VERIFY_IMAGE_EV_ACCEPTED
	                       : AL_VERIFY_IMAGE_EV_UNCOVERED);
	ev.subject = shown;
	ev.policy = v.policy;
	ev.scope = v.scope;
	ev.index = v.which + 1;
	ev.keyless = v.info.keyless;
	ev.signer = v.info.subject;
	emit(r, &ev);
	al_cosign_verdict_clear(&v);
}

/* Verify the candidates against the trust or policy: one outcome.
 * reference is what the policy and identity see (the image as pulled),
 * shown what the events name (the image by digest). */
static void judge(const vi_run *r, const char *reference, const char *shown,
                  const al_digest *digest, const al_cosign_candidate *c,
                  size_t n)
{
	al_buf why = AL_BUF_INIT(8192);
	al_cosign_opts opts;
	al_verify_image_event ev;
	size_t i;
	int rc;

	if (r->policy != NULL) {
		judge_policy(r, reference, shown, digest, c, n);
		return;
	}
	cosign_opts(r, &opts);
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
			                           r->o->identity);
		if (rc == 0) {
			ev_init(&ev, AL_VERIFY_IMAGE_EV_VERIFIED);
			ev.subject = shown;
			ev.index = i + 1;
			ev.from_bundle = c[i].sig == NULL;
			ev.keyless = info.keyless;
			ev.signer = info.keyless ? info.subject : info.key_id;
			ev.tlog = info.tlog_verified;
			emit(r, &ev);
			al_cosign_info_clear(&info);
			al_buf_free(&why);
			return;
		}
		if (rc == AL_ENOMEM) {
			al_cosign_info_clear(&info);
			al_buf_free(&why);
			failed(r, rc, "%s", shown);
			return;
		}
		/* AL_EINVAL too: no trust for this kind of signature, a
		 * refusal of this one only */
		(void)al_buf_printf(&why, "%ssignature %zu: %s",
		                    why.len > 0 ? "; " : "", i + 1,
		                    al_error_message());
		al_cosign_info_clear(&info);
	}
	ev_init(&ev, AL_VERIFY_IMAGE_EV_REFUSED);
	ev.status = AL_EVERIFY;
	ev.subject = shown;
	ev.message = n == 0 ? "no sigstore signature found" : al_buf_cstr(&why);
	emit(r, &ev);
	al_buf_free(&why);
}

/* Blob mode: the bundle over the artifact file, no image (cosign
 * verify-blob; the sigstore-conformance verify-bundle protocol). */
static void verify_blob(const vi_run *r)
{
	const al_verify_image_opts *o = r->o;
	al_buf b, a;
	al_cosign_opts opts;
	al_cosign_info info;
	al_verify_image_event ev;
	int rc;

	memset(&info, 0, sizeof(info));
	if ((rc = slurp(&b, o->bundle, AL_COSIGN_MAX_BUNDLE)) < 0) {
		al_buf_free(&b);
		failed(r, rc, "cannot read '%s'", o->bundle);
		return;
	}
	if ((rc = slurp(&a, o->artifact, AL_VERIFY_IMAGE_MAX_BLOB)) < 0) {
		al_buf_free(&b);
		al_buf_free(&a);
		failed(r, rc, "cannot read '%s'", o->artifact);
		return;
	}
	cosign_opts(r, &opts);
	rc = al_cosign_verify_bundle(&info, b.ptr, b.len, a.ptr, a.len, &opts);
	if (rc == 0)
		rc = al_cosign_check_blob(&info, a.ptr, a.len);
	if (rc == 0) {
		ev_init(&ev, AL_VERIFY_IMAGE_EV_BLOB_VERIFIED);
		ev.subject = o->artifact;
		ev.bundle = o->bundle;
		ev.keyless = info.keyless;
		ev.signer = info.keyless ? info.subject : info.key_id;
		ev.tlog = info.tlog_verified;
		emit(r, &ev);
	} else if (rc == AL_ENOMEM || rc == AL_EINVAL) {
		failed(r, rc, "%s", o->artifact);
	} else {
		ev_init(&ev, AL_VERIFY_IMAGE_EV_REFUSED);
		ev.status = AL_EVERIFY;
		ev.subject = o->artifact;
		ev.message = al_error_message();
		emit(r, &ev);
	}
	al_cosign_info_clear(&info);
	al_buf_free(&b);
	al_buf_free(&a);
}

/* --bundle with an image: that bundle (and artifact) is the candidate. */
static void verify_given_bundle(const vi_run *r, const al_imgref *ir,
                                const char *arg)
{
	const al_verify_image_opts *o = r->o;
	al_buf b, a = AL_BUF_INIT(AL_COSIGN_MAX_PAYLOAD);
	al_cosign_candidate cand;
	al_digest digest;
	char *reference = NULL;
	int rc;

	if (ir->ref.digest == NULL ||
	    al_digest_parse_str(&digest, ir->ref.digest) < 0) {
		said(r, AL_VERIFY_IMAGE_EV_BAD_ARGUMENT, 0,
		     "--bundle needs IMAGE@DIGEST");
		return;
	}
	if ((rc = slurp(&b, o->bundle, AL_COSIGN_MAX_BUNDLE)) < 0 ||
	    (o->artifact != NULL &&
	     (rc = al_fs_read_file(o->artifact, &a)) < 0)) {
		al_buf_free(&b);
		al_buf_free(&a);
		failed(r, rc, "cannot read '%s'",
		       o->artifact != NULL ? o->artifact : o->bundle);
		return;
	}
	memset(&cand, 0, sizeof(cand));
	cand.bundle = b.ptr;
	cand.bundle_len = b.len;
	cand.artifact = a.ptr;
	cand.artifact_len = a.len;
	reference = al_ref_string(&ir->ref);
	judge(r, reference != NULL ? reference : arg,
	      reference != NULL ? reference : arg, &digest, &cand, 1);
	free(reference);
	al_buf_free(&b);
	al_buf_free(&a);
}

/* The digest the signatures of ir must name: its own, or what its tag
 * resolves to in the store or the registry. */
static int resolve_digest(const vi_run *r, const al_imgref *ir,
                          const char *name, al_registry *reg, al_digest *digest,
                          const char *arg)
{
	const char *tag = ir->ref.tag != NULL ? ir->ref.tag : "latest";
	al_buf body = AL_BUF_INIT(AL_MANIFEST_MAX);
	char *mt = NULL;
	int rc;

	if (ir->ref.digest != NULL) {
		if (al_digest_parse_str(digest, ir->ref.digest) < 0) {
			said(r, AL_VERIFY_IMAGE_EV_BAD_ARGUMENT, 0,
			     "bad digest in '%s'", arg);
			return AL_EINVAL;
		}
		return 0;
	}
	if (r->o->store != NULL) {
		al_store_image img;
		char *full = al_sprintf("%s:%s", name, tag);

		memset(&img, 0, sizeof(img));
		rc = full != NULL ? al_store_find(r->o->store, full, &img)
		                  : AL_ENOMEM;
		free(full);
		if (rc == 0)
			*digest = img.desc.digest;
		al_store_image_clear(&img);
	} else {
		rc = al_registry_get_manifest(reg, ir->ref.repository, tag,
		                              &body, &mt, digest);
	}
	al_buf_free(&body);
	free(mt);
	if (rc < 0)
		failed(r, rc, "cannot resolve '%s'", arg);
	return rc;
}

/* The signature source of ir: the store, or its registry (*reg). */
static int open_source(const vi_run *r, const al_imgref *ir, const char *name,
                       al_registry **reg, al_cosign_source **src,
                       const char *arg)
{
	al_registry_opts ro;
	int rc;

	if (r->o->store != NULL) {
		rc = al_cosign_source_store(src, r->o->store, name);
	} else {
		if (r->o->registry != NULL)
			ro = *r->o->registry;
		else
			ro = (al_registry_opts)AL_REGISTRY_OPTS_INIT;
		if ((rc = al_registry_new(reg, ir->ref.registry, &ro)) < 0) {
			failed(r, rc, "cannot reach '%s'", ir->ref.registry);
			return rc;
		}
		rc = al_cosign_source_registry(src, *reg, ir->ref.repository);
	}
	if (rc < 0)
		failed(r, rc, "%s", arg);
	return rc;
}

static void found_events(const vi_run *r, const al_cosign_found *found,
                         const al_cosign_cands *cands, const char *arg)
{
	al_verify_image_event ev;

	if (found->skipped > 0) {
		ev_init(&ev, AL_VERIFY_IMAGE_EV_SKIPPED);
		ev.subject = arg;
		ev.count = found->skipped;
		ev.message =
		    found->skipped_reason != NULL ? found->skipped_reason : "";
		emit(r, &ev);
	}
	ev_init(&ev, AL_VERIFY_IMAGE_EV_FOUND);
	ev.subject = arg;
	ev.count = found->n;
	ev.candidates = cands->n;
	ev.referrers_api = found->referrers_api;
	ev.referrers_tag = found->fallback_tag != NULL;
	emit(r, &ev);
}

static void verify_one(const vi_run *r, const char *arg)
{
	al_imgref ir;
	al_registry *reg = NULL;
	al_cosign_source *src = NULL;
	al_cosign_found found;
	al_cosign_cands cands;
	al_digest digest;
	char ds[AL_DIGEST_STRMAX];
	char *reference = NULL, *shown = NULL, *name = NULL;
	int rc;

	memset(&ir, 0, sizeof(ir));
	memset(&found, 0, sizeof(found));
	memset(&cands, 0, sizeof(cands));
	if (al_imgref_parse(&ir, arg) < 0 ||
	    ir.transport != AL_TRANSPORT_DOCKER) {
		said(r, AL_VERIFY_IMAGE_EV_BAD_ARGUMENT, 0,
		     "'%s' is not a docker:// image", arg);
		goto out;
	}
	if ((name = al_ref_name(&ir.ref)) == NULL) {
		failed(r, al_error_oom(), "out of memory");
		goto out;
	}
	if (r->o->bundle != NULL) {
		verify_given_bundle(r, &ir, arg);
		goto out;
	}
	if (open_source(r, &ir, name, &reg, &src, arg) < 0 ||
	    resolve_digest(r, &ir, name, reg, &digest, arg) < 0)
		goto out;
	if ((rc = al_cosign_discover(&found, src, &digest, r->o->what)) < 0 ||
	    (rc = al_cosign_candidates(&cands, src, &found)) < 0) {
		failed(r, rc, "looking up the signatures of '%s'", arg);
		goto out;
	}
	found_events(r, &found, &cands, arg);
	/* The policy sees the image as it is pulled: by tag, the tag (a
	 * MatchRepoDigestOrExact signature must name exactly that tag,
	 * containers/image policy_reference_match.go); the digest it
	 * resolved to is what the signatures must name. */
	reference =
	    ir.ref.digest != NULL
	        ? al_ref_string(&ir.ref)
	        : al_sprintf("%s:%s", name,
	                     ir.ref.tag != NULL ? ir.ref.tag : "latest");
	shown = ir.ref.digest != NULL
	            ? al_strdup(reference != NULL ? reference : "")
	            : al_sprintf("%s@%s", name, al_digest_str(&digest, ds));
	if (reference == NULL || shown == NULL) {
		failed(r, al_error_oom(), "out of memory");
		goto out;
	}
	judge(r, reference, shown, &digest, cands.items, cands.n);
out:
	al_cosign_cands_clear(&cands);
	al_cosign_found_clear(&found);
	al_cosign_source_free(src);
	al_registry_free(reg);
	al_imgref_clear(&ir);
	free(reference);
	free(shown);
	free(name);
}

/* Write out to dir[/sub]/file (sub made first), then a WROTE outcome;
 * else a FAILED one. */
static int write_file(const vi_run *r, const char *dir, const char *sub,
                      const char *file, const al_buf *out)
{
	al_verify_image_event ev;
	char *d = sub != NULL ? al_path_join(dir, sub) : al_strdup(dir);
	char *path = d != NULL ? al_path_join(d, file) : NULL;
	int rc = 0;

	if (path == NULL) {
		failed(r, rc = al_error_oom(), "out of memory");
		goto out;
	}
	if ((sub != NULL && (rc = al_fs_mkdir_p(d, 0755)) < 0) ||
	    (rc = al_fs_write_atomic(path, out->ptr, out->len)) < 0) {
		failed(r, rc, "cannot write '%s'", path);
		goto out;
	}
	ev_init(&ev, AL_VERIFY_IMAGE_EV_WROTE);
	ev.subject = path;
	emit(r, &ev);
out:
	free(d);
	free(path);
	return rc;
}

/* The ClusterImagePolicy of the options' first key (or Fulcio root) and
 * Rekor key. */
static void write_policy(const vi_run *r)
{
	const al_verify_image_opts *o = r->o;
	al_buf out = AL_BUF_INIT(1024 * 1024), key = AL_BUF_INIT(0),
	       fulcio = AL_BUF_INIT(0), rekor = AL_BUF_INIT(0);
	al_cosign_policy_spec sp;
	int rc;

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
		failed(r, rc, "cannot read a key file");
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
	if (al_cosign_emit_policy(&out, &sp) < 0) {
		said(r, AL_VERIFY_IMAGE_EV_BAD_ARGUMENT, 0, "%s",
		     al_error_message());
		goto out;
	}
	(void)write_file(r, o->config_dir, NULL, "clusterimagepolicy.yaml",
	                 &out);
out:
	al_buf_free(&out);
	al_buf_free(&key);
	al_buf_free(&fulcio);
	al_buf_free(&rekor);
}

static void write_config(const vi_run *r)
{
	const al_verify_image_opts *o = r->o;
	al_buf out = AL_BUF_INIT(1024 * 1024);

	if (al_cosign_emit_registries_d(&out, o->mirrors, o->nmirrors) < 0) {
		said(r, AL_VERIFY_IMAGE_EV_BAD_ARGUMENT, 0, "%s",
		     al_error_message());
		goto out;
	}
	if (write_file(r, o->config_dir, "registries.d",
	               "airlock-sigstore.yaml", &out) < 0)
		goto out;
	if (o->nkeys > 0 || o->nfulcio > 0)
		write_policy(r);
out:
	al_buf_free(&out);
}

/* Keep the trusted root at path in the store (al_cosign_store_root_put);
 * an INPUT_FAILED outcome when it cannot be. */
static int keep_root(const vi_run *r, const char *path)
{
	al_verify_image_event ev;
	al_buf b;
	int rc;

	ev_init(&ev, AL_VERIFY_IMAGE_EV_KEPT_ROOT);
	if ((rc = slurp(&b, path, AL_COSIGN_MAX_PEM)) < 0) {
		said(r, AL_VERIFY_IMAGE_EV_INPUT_FAILED, rc,
		     "cannot read '%s': %s", path, al_error_message());
		goto out;
	}
	if ((rc = al_cosign_store_root_put(r->o->store, b.ptr, b.len, path)) <
	        0 ||
	    (rc = al_cosign_store_root_get(r->o->store, &b, &ev.digest)) < 0) {
		said(r, AL_VERIFY_IMAGE_EV_INPUT_FAILED, rc, "%s",
		     al_error_message());
		goto out;
	}
	ev.subject = path;
	emit(r, &ev);
out:
	al_buf_free(&b);
	return rc;
}

static void carry(const vi_run *r, const char *const *names, size_t n)
{
	const al_verify_image_opts *o = r->o;
	al_transfer_opts to = AL_TRANSFER_OPTS_INIT;
	al_cosign_carry_report rep = AL_COSIGN_CARRY_REPORT_INIT;
	al_verify_image_event ev;

	if (o->nroots == 1 && keep_root(r, o->roots[0]) < 0)
		return;
	if (o->transfer != NULL)
		to = *o->transfer;
	ev_init(&ev, AL_VERIFY_IMAGE_EV_CARRIED);
	ev.status = al_cosign_carry(o->store, n > 0 ? names : NULL, n, o->what,
	                            &to, &rep);
	ev.carried = &rep;
	emit(r, &ev);
	al_cosign_carry_report_clear(&rep);
}

/* What each mode needs that the options do not give. */
static int check_opts(const al_verify_image_opts *o, size_t nimages)
{
	int rc;

	if ((rc = al_opts_version_check("al_verify_image_opts", o->version,
	                                AL_VERIFY_IMAGE_OPTS_VERSION)) < 0)
		return rc;
	switch (o->mode) {
	case AL_VERIFY_IMAGE_CHECK:
		if (nimages == 0 && (o->bundle == NULL || o->artifact == NULL))
			return al_error_set(AL_EINVAL,
			                    "no image, and no bundle and "
			                    "artifact");
		return 0;
	case AL_VERIFY_IMAGE_WRITE_CONFIG:
		if (o->config_dir == NULL || o->nmirrors == 0)
			return al_error_set(AL_EINVAL,
			                    "writing the configuration needs a "
			                    "directory and a mirror");
		return 0;
	case AL_VERIFY_IMAGE_CARRY:
		if (o->store == NULL || o->nroots > 1)
			return al_error_set(
			    AL_EINVAL, "carrying needs a store and at most "
			               "one trusted root");
		return 0;
	}
	return al_error_set(AL_EINVAL, "unknown verify-image mode %d",
	                    (int)o->mode);
}

int al_verify_image_run(const al_verify_image_opts *opts,
                        const char *const *images, size_t nimages)
{
	vi_run r;
	size_t i;
	int rc;

	if (opts == NULL)
		return al_error_set(AL_EINVAL, "no verify-image options");
	if ((rc = check_opts(opts, nimages)) < 0)
		return rc;
	memset(&r, 0, sizeof(r));
	r.o = opts;
	if (opts->mode == AL_VERIFY_IMAGE_WRITE_CONFIG) {
		write_config(&r);
		return 0;
	}
	if (opts->mode == AL_VERIFY_IMAGE_CARRY) {
		carry(&r, images, nimages);
		return 0;
	}
	if (load_trust(&r) < 0)
		return 0;
	if (nimages == 0)
		verify_blob(&r);
	for (i = 0; i < nimages; i++)
		verify_one(&r, images[i]);
	al_cosign_policy_free(r.policy);
	al_cosign_trust_free(r.trust);
	return 0;
}
