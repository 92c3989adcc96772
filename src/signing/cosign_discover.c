/* cosign_discover.c: finding an image's cosign signatures (the
 * "sha256-<hex>.sig" tag scheme) and OCI 1.1 referrers (the referrers API or
 * its "sha256-<hex>" tag fallback) in a registry or the store, and turning
 * them into verification candidates. */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "airlock/cosign.h"
#include "airlock/error.h"
#include "json_int.h"
#include "airlock/oci.h"
#include "airlock/store.h"
#include "cosign_int.h"

struct al_cosign_source {
	al_registry *reg;
	const char *repo;
	al_store *store;
	char *name;
	const json_t *tags; /* borrowed; NULL: not listed */
};

void al_cosign__source_known_tags(al_cosign_source *s, const json_t *tags)
{
	s->tags = tags;
}

int al_cosign_source_registry(al_cosign_source **out, al_registry *r,
                              const char *repo)
{
	al_cosign_source *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	s->reg = r;
	s->repo = repo;
	*out = s;
	return 0;
}

int al_cosign_source_store(al_cosign_source **out, al_store *st,
                           const char *name)
{
	al_cosign_source *s = calloc(1, sizeof(*s));

	if (s == NULL || (s->name = al_strdup(name)) == NULL) {
		free(s);
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	s->store = st;
	*out = s;
	return 0;
}

void al_cosign_source_free(al_cosign_source *s)
{
	if (s == NULL)
		return;
	free(s->name);
	free(s);
}

/* The manifest named by ref (a tag or "sha256:..."): exact bytes, media
 * type (caller frees) and digest. AL_ENOTFOUND when absent. */
static int src_manifest(al_cosign_source *s, const char *ref, al_buf *body,
                        char **mt, al_digest *d)
{
	al_store_image img;
	al_digest want;
	char *name = NULL;
	json_t *j = NULL;
	int rc;

	if (s->reg != NULL) {
		/* a tag the repository's listing does not hold is absent:
		 * not asked (al_digest_parse_str refuses a tag) */
		if (s->tags != NULL && json_object_get(s->tags, ref) == NULL &&
		    al_digest_parse_str(&want, ref) < 0) {
			al_error_clear();
			return al_error_set(
			    AL_ENOTFOUND, "no tag '%s' in the listing of '%s'",
			    ref, s->repo);
		}
		return al_registry_get_manifest(s->reg, s->repo, ref, body, mt,
		                                d);
	}
	memset(&img, 0, sizeof(img));
	if (al_digest_parse_str(&want, ref) == 0) {
		al_error_clear();
		if ((rc = al_store_read_blob(s->store, &want, body)) < 0)
			return rc;
		*d = want;
		if (al_json_parse(&j, body->ptr, body->len, ref) == 0 &&
		    al_json_str(j, "mediaType") != NULL)
			*mt = al_strdup(al_json_str(j, "mediaType"));
		else
			*mt = al_strdup(AL_MT_OCI_MANIFEST);
		json_decref(j);
		al_error_clear();
		return *mt != NULL ? 0 : al_error_set(AL_ENOMEM, "no memory");
	}
	al_error_clear();
	if ((name = al_sprintf("%s:%s", s->name, ref)) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	rc = al_store_find(s->store, name, &img);
	free(name);
	if (rc < 0)
		return rc;
	if ((rc = al_store_read_blob(s->store, &img.desc.digest, body)) == 0) {
		*d = img.desc.digest;
		if ((*mt = al_strdup(img.desc.media_type)) == NULL)
			rc = al_error_set(AL_ENOMEM, "out of memory");
	}
	al_store_image_clear(&img);
	return rc;
}

static int src_blob(al_cosign_source *s, const al_digest *d, al_buf *out)
{
	al_writer w;

	if (s->store != NULL)
		return al_store_read_blob(s->store, d, out);
	w = al_buf_writer(out);
	return al_registry_get_blob(s->reg, s->repo, d, 0, &w, 0, NULL, NULL);
}

void al_cosign_found_clear(al_cosign_found *f)
{
	size_t i;

	if (f == NULL)
		return;
	for (i = 0; i < f->n; i++) {
		free(f->items[i].tag);
		free(f->items[i].media_type);
		free(f->items[i].artifact_type);
		free(f->items[i].manifest);
	}
	free(f->items);
	free(f->fallback_tag);
	free(f->skipped_reason);
	memset(f, 0, sizeof(*f));
}

static int add_artifact(al_cosign_found *f, al_cosign_kind kind,
                        const char *tag, const al_digest *d, char **mt,
                        const char *artifact_type, al_buf *body)
{
	al_cosign_artifact *grown, *a;
	size_t i;

	for (i = 0; i < f->n; i++) {
		if (al_digest_equal(&f->items[i].digest, d))
			return 0; /* found both by tag and as a referrer */
	}
	if (f->n >= AL_COSIGN_MAX_ARTIFACTS)
		return al_error_set(AL_ELIMIT,
		                    "more than %d signature artifacts",
		                    AL_COSIGN_MAX_ARTIFACTS);
	if ((grown = realloc(f->items, (f->n + 1) * sizeof(*grown))) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	f->items = grown;
	a = &f->items[f->n];
	memset(a, 0, sizeof(*a));
	a->kind = kind;
	a->digest = *d;
	if ((tag != NULL && (a->tag = al_strdup(tag)) == NULL) ||
	    (artifact_type != NULL &&
	     (a->artifact_type = al_strdup(artifact_type)) == NULL)) {
		free(a->tag);
		free(a->artifact_type);
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	a->media_type = *mt;
	*mt = NULL;
	a->manifest = (uint8_t *)al_buf_detach(body, &a->manifest_len);
	f->n++;
	return 0;
}

/* The referrers listed in index bytes p[0..n): each manifest fetched by
 * digest and kept when its subject is image. */
static int add_referrers(al_cosign_found *f, al_cosign_source *s,
                         const uint8_t *p, size_t n, const al_digest *image)
{
	al_manifest idx, m;
	al_buf body = AL_BUF_INIT(AL_MANIFEST_MAX);
	char ds[AL_DIGEST_STRMAX], is[AL_DIGEST_STRMAX], ws[AL_DIGEST_STRMAX];
	char *mt = NULL;
	al_digest got;
	size_t i;
	int rc;

	memset(&idx, 0, sizeof(idx));
	if ((rc = al_manifest_parse(&idx, p, n, AL_MT_OCI_INDEX,
	                            "referrers index")) < 0)
		return rc;
	if (!idx.is_index) {
		rc =
		    al_error_set(AL_EPROTO, "referrers answer is not an index");
		goto out;
	}
	if (idx.nmanifests > AL_COSIGN_MAX_ARTIFACTS) {
		rc =
		    al_error_set(AL_ELIMIT,
		                 "referrers index lists %zu manifests (at most "
		                 "%d)",
		                 idx.nmanifests, AL_COSIGN_MAX_ARTIFACTS);
		goto out;
	}
	for (i = 0; i < idx.nmanifests; i++) {
		const al_descriptor *d = &idx.manifests[i];
		const char *at;

		al_buf_reset(&body);
		free(mt);
		mt = NULL;
		rc = src_manifest(s, al_digest_str(&d->digest, ds), &body, &mt,
		                  &got);
		if (rc == AL_ENOTFOUND) {
			/* listed and gone: nothing to carry */
			al_error_clear();
			continue;
		}
		if (rc < 0)
			goto out;
		memset(&m, 0, sizeof(m));
		if ((rc = al_manifest_parse(&m, body.ptr, body.len, mt, ds)) <
		    0)
			goto out;
		if (!m.has_subject ||
		    !al_digest_equal(&m.subject.digest, image)) {
			free(f->skipped_reason);
			f->skipped_reason = al_sprintf(
			    "referrer %s names %s%s, not %s", ds,
			    m.has_subject ? "subject " : "no subject",
			    m.has_subject ? al_digest_str(&m.subject.digest, is)
			                  : "",
			    al_digest_str(image, ws));
			f->skipped++;
			al_manifest_clear(&m);
			continue;
		}
		/* image-spec 1.1: the manifest's artifactType, else the
		 * config's media type. The manifest (its digest checked) wins
		 * over the listing's copy: go-containerregistry 0.14's
		 * registry (Debian bookworm-backports) lists the config's
		 * media type whatever the manifest says, the image-spec
		 * 1.1 release candidates' rule. */
		at = m.artifact_type != NULL    ? m.artifact_type
		     : d->artifact_type != NULL ? d->artifact_type
		                                : m.config.media_type;
		rc = add_artifact(f, AL_COSIGN_KIND_REFERRER, NULL, &got, &mt,
		                  at, &body);
		al_manifest_clear(&m);
		if (rc < 0)
			goto out;
	}
	rc = 0;
out:
	free(mt);
	al_buf_free(&body);
	al_manifest_clear(&idx);
	return rc;
}

int al_cosign_discover(al_cosign_found *out, al_cosign_source *s,
                       const al_digest *image, unsigned what)
{
	static const struct {
		unsigned flag;
		const char *suffix;
		al_cosign_kind kind;
	} tags[] = {
	    {AL_COSIGN_FIND_SIG, ".sig", AL_COSIGN_KIND_SIG},
	    {AL_COSIGN_FIND_ATT, ".att", AL_COSIGN_KIND_ATT},
	    {AL_COSIGN_FIND_SBOM, ".sbom", AL_COSIGN_KIND_SBOM},
	};
	al_cosign_found f;
	al_buf body = AL_BUF_INIT(AL_MANIFEST_MAX);
	char hex[AL_DIGEST_STRMAX], tag[AL_DIGEST_STRMAX + 16];
	char *mt = NULL;
	al_digest got;
	size_t i;
	int rc;

	memset(&f, 0, sizeof(f));
	al_digest_hex(image, hex);
	for (i = 0; i < sizeof(tags) / sizeof(tags[0]); i++) {
		if ((what & tags[i].flag) == 0)
			continue;
		snprintf(tag, sizeof(tag), "%s-%s%s",
		         al_digest_algo_name(image->algo), hex, tags[i].suffix);
		al_buf_reset(&body);
		rc = src_manifest(s, tag, &body, &mt, &got);
		if (rc == AL_ENOTFOUND) {
			al_error_clear();
			continue;
		}
		if (rc < 0 || (rc = add_artifact(&f, tags[i].kind, tag, &got,
		                                 &mt, NULL, &body)) < 0)
			goto out;
	}
	if ((what & AL_COSIGN_FIND_REFERRERS) != 0) {
		al_buf_reset(&body);
		rc = s->reg != NULL && (what & AL_COSIGN__FIND_NO_API) == 0
		         ? al_registry_get_referrers(s->reg, s->repo, image,
		                                     NULL, &body)
		         : AL_ENOTFOUND;
		if (rc == 0) {
			f.referrers_api = 1;
		} else if (rc == AL_ENOTFOUND) {
			/* distribution-spec 1.1 "referrers tag schema" */
			al_error_clear();
			snprintf(tag, sizeof(tag), "%s-%s",
			         al_digest_algo_name(image->algo), hex);
			al_buf_reset(&body);
			free(mt);
			mt = NULL;
			rc = src_manifest(s, tag, &body, &mt, &got);
			if (rc == AL_ENOTFOUND) {
				al_error_clear();
				al_buf_reset(&body);
				rc = 0;
			} else if (rc == 0 && al_digest_equal(&got, image)) {
				/* the image itself under its digest tag, as
				 * oc-mirror v2 and `airlock push` name images
				 * mirrored by digest (prepareM2DCopyBatch):
				 * no referrers index there */
				al_buf_reset(&body);
			} else if (rc == 0 &&
			           (f.fallback_tag = al_strdup(tag)) == NULL) {
				rc = al_error_set(AL_ENOMEM, "out of memory");
			}
		}
		if (rc < 0)
			goto out;
		if (body.len > 0 &&
		    (rc = add_referrers(&f, s, body.ptr, body.len, image)) < 0)
			goto out;
	}
	*out = f;
	memset(&f, 0, sizeof(f));
	rc = 0;
out:
	free(mt);
	al_buf_free(&body);
	al_cosign_found_clear(&f);
	return rc;
}

/* --- candidates ------------------------------------------------------- */

typedef struct cs_owned {
	al_cosign_sig sig;
	uint8_t *payload;
	char *strs[4]; /* signature, certificate, chain, bundle */
	uint8_t *bundle;
} cs_owned;

static void owned_free(cs_owned *o)
{
	size_t i;

	if (o == NULL)
		return;
	free(o->payload);
	for (i = 0; i < 4; i++)
		free(o->strs[i]);
	free(o->bundle);
	free(o);
}

void al_cosign_cands_clear(al_cosign_cands *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i < c->nowned; i++)
		owned_free(c->owned[i]);
	free(c->owned);
	free(c->items);
	memset(c, 0, sizeof(*c));
}

static int push_owned(al_cosign_cands *c, cs_owned *o)
{
	void **grown;
	al_cosign_candidate *items;

	if ((grown = realloc(c->owned, (c->nowned + 1) * sizeof(*grown))) ==
	    NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	c->owned = grown;
	c->owned[c->nowned++] = o;
	if ((items = realloc(c->items, (c->n + 1) * sizeof(*items))) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	c->items = items;
	memset(&c->items[c->n], 0, sizeof(c->items[c->n]));
	return 0;
}

/* A layer descriptor's digest, or AL_EVERIFY. */
static int layer_digest(al_digest *d, const json_t *layer, const char *what)
{
	const char *ds = al_json_str(layer, "digest");

	if (ds == NULL || al_digest_parse_str(d, ds) < 0)
		return al_error_set(AL_EVERIFY, "%s: layer without a digest",
		                    what);
	return 0;
}

static int sig_candidates(al_cosign_cands *c, al_cosign_source *s,
                          const al_cosign_artifact *a)
{
	static const char *const anns[4] = {
	    AL_COSIGN_ANN_SIGNATURE, AL_COSIGN_ANN_CERTIFICATE,
	    AL_COSIGN_ANN_CHAIN, AL_COSIGN_ANN_BUNDLE};
	json_t *root = NULL, *layer;
	size_t i, k, nsig = 0;
	int rc;

	if ((rc = al_json_parse(&root, a->manifest, a->manifest_len, a->tag)) <
	    0)
		return rc;
	json_array_foreach(json_object_get(root, "layers"), i, layer)
	{
		const json_t *ann = json_object_get(layer, "annotations");
		al_buf b = AL_BUF_INIT(AL_COSIGN_MAX_PAYLOAD);
		cs_owned *o;
		al_digest d;

		if (strcmp(al_json_str(layer, "mediaType") != NULL
		               ? al_json_str(layer, "mediaType")
		               : "",
		           AL_COSIGN_SIMPLESIGNING_MEDIA_TYPE) != 0)
			continue;
		/* cosign writes one layer per signature; a registry offering
		 * thousands would cost a fetch each */
		if (++nsig > AL_COSIGN_MAX_ARTIFACTS) {
			rc = al_error_set(AL_ELIMIT,
			                  "%s: more than %d signature layers",
			                  a->tag, AL_COSIGN_MAX_ARTIFACTS);
			goto out;
		}
		if ((rc = layer_digest(&d, layer, a->tag)) < 0 ||
		    (rc = src_blob(s, &d, &b)) < 0) {
			al_buf_free(&b);
			goto out;
		}
		if ((o = calloc(1, sizeof(*o))) == NULL) {
			al_buf_free(&b);
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		o->sig.payload_len = b.len;
		o->payload = (uint8_t *)al_buf_detach(&b, &o->sig.payload_len);
		o->sig.payload = o->payload;
		for (k = 0; k < 4; k++) {
			const char *v = al_json_str(ann, anns[k]);

			if (v != NULL && (o->strs[k] = al_strdup(v)) == NULL) {
				owned_free(o);
				rc = al_error_set(AL_ENOMEM, "out of memory");
				goto out;
			}
		}
		o->sig.signature = o->strs[0];
		o->sig.certificate = o->strs[1];
		o->sig.chain = o->strs[2];
		o->sig.bundle = o->strs[3];
		if ((rc = push_owned(c, o)) < 0) {
			if (c->nowned == 0 || c->owned[c->nowned - 1] != o)
				owned_free(o);
			goto out;
		}
		c->items[c->n++].sig = &o->sig;
	}
	rc = 0;
out:
	json_decref(root);
	return rc;
}

static int bundle_candidate(al_cosign_cands *c, al_cosign_source *s,
                            const al_cosign_artifact *a)
{
	json_t *root = NULL;
	al_buf b = AL_BUF_INIT(AL_COSIGN_MAX_BUNDLE);
	char ds[AL_DIGEST_STRMAX];
	cs_owned *o = NULL;
	al_digest d;
	int rc;

	al_digest_str(&a->digest, ds);
	if ((rc = al_json_parse(&root, a->manifest, a->manifest_len, ds)) < 0)
		return rc;
	if ((rc = layer_digest(
	         &d, json_array_get(json_object_get(root, "layers"), 0), ds)) <
	        0 ||
	    (rc = src_blob(s, &d, &b)) < 0)
		goto out;
	if ((o = calloc(1, sizeof(*o))) == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	{
		size_t len = b.len;

		o->bundle = (uint8_t *)al_buf_detach(&b, &len);
		if ((rc = push_owned(c, o)) < 0)
			goto out;
		c->items[c->n].bundle = o->bundle;
		c->items[c->n].bundle_len = len;
		c->n++;
		o = NULL;
	}
	rc = 0;
out:
	if (o != NULL && (c->nowned == 0 || c->owned[c->nowned - 1] != o))
		owned_free(o);
	al_buf_free(&b);
	json_decref(root);
	return rc;
}

int al_cosign_candidates(al_cosign_cands *out, al_cosign_source *s,
                         const al_cosign_found *f)
{
	al_cosign_cands c;
	size_t i;
	int rc = 0;

	memset(&c, 0, sizeof(c));
	for (i = 0; i < f->n && rc == 0; i++) {
		const al_cosign_artifact *a = &f->items[i];

		if (a->kind == AL_COSIGN_KIND_SIG)
			rc = sig_candidates(&c, s, a);
		else if (a->kind == AL_COSIGN_KIND_REFERRER &&
		         a->artifact_type != NULL &&
		         strncmp(a->artifact_type,
		                 AL_COSIGN_BUNDLE_MEDIA_PREFIX,
		                 strlen(AL_COSIGN_BUNDLE_MEDIA_PREFIX)) == 0)
			rc = bundle_candidate(&c, s, a);
	}
	if (rc < 0) {
		al_cosign_cands_clear(&c);
		return rc;
	}
	*out = c;
	return 0;
}
