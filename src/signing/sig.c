/* sig.c: simple-signing payloads, signature verification, directory and
 * ConfigMap sources, signatures in the store. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "airlock/sig.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "json_int.h"
#include "sig_int.h"
#include "airlock/log.h"
#include "airlock/ref.h"
#include "yaml_int.h"
#include "error_int.h"

int al_sig_identity_policy_parse(al_sig_identity_policy *out, const char *s)
{
	if (s != NULL && strcmp(s, "exact") == 0)
		*out = AL_SIG_IDENTITY_EXACT;
	else if (s != NULL && strcmp(s, "repository") == 0)
		*out = AL_SIG_IDENTITY_REPOSITORY;
	else if (s != NULL && strcmp(s, "ignore") == 0)
		*out = AL_SIG_IDENTITY_IGNORE;
	else
		return al_error_set(AL_EINVAL,
		                    "unknown identity policy '%s' (want exact, "
		                    "repository or ignore)",
		                    s != NULL ? s : "");
	return 0;
}

const char *al_sig_identity_policy_name(al_sig_identity_policy p)
{
	switch (p) {
	case AL_SIG_IDENTITY_EXACT:
		return "exact";
	case AL_SIG_IDENTITY_REPOSITORY:
		return "repository";
	case AL_SIG_IDENTITY_IGNORE:
		return "ignore";
	}
	return "unknown";
}

void al_sig_payload_clear(al_sig_payload *pl)
{
	if (pl == NULL)
		return;
	free(pl->reference);
	free(pl->creator);
	memset(pl, 0, sizeof(*pl));
}

/* Refuse members of obj other than the NULL-terminated allowed names: the
 * critical section is what the signer vouched for, so anything we do not
 * understand in it must not be ignored (containers-signature(5)). */
static int only_members(const al_sig__payload_rules *r, const json_t *obj,
                        const char *where, const char *const *allowed,
                        int require_all)
{
	return al_json_only_members(obj, r->what, where, allowed, require_all);
}

/* The object member key of obj, required to be an object. */
static int get_object(const al_sig__payload_rules *r, json_t **out,
                      const json_t *obj, const char *where, const char *key)
{
	json_t *v = json_object_get(obj, key);

	if (v == NULL)
		return al_error_set(AL_EPARSE, "%s: missing field '%s.%s'",
		                    r->what, where, key);
	if (!json_is_object(v))
		return al_error_set(AL_EPARSE, "%s: '%s.%s' is not an object",
		                    r->what, where, key);
	*out = v;
	return 0;
}

/* The string member key of obj, required. */
static int get_string(const al_sig__payload_rules *r, const char **out,
                      const json_t *obj, const char *where, const char *key)
{
	json_t *v = json_object_get(obj, key);

	if (v == NULL)
		return al_error_set(AL_EPARSE, "%s: missing field '%s.%s'",
		                    r->what, where, key);
	if (!json_is_string(v))
		return al_error_set(AL_EPARSE, "%s: '%s.%s' is not a string",
		                    r->what, where, key);
	*out = json_string_value(v);
	return 0;
}

/* optional's creator and timestamp into pl (its other members are the
 * signer's business: containers/image ignores them too). */
static int read_optional(const al_sig__payload_rules *r, al_sig_payload *pl,
                         const json_t *optional)
{
	json_t *v;

	if ((v = json_object_get(optional, "creator")) != NULL) {
		if (!json_is_string(v))
			return al_error_set(AL_EPARSE,
			                    "%s: 'optional.creator' is not a "
			                    "string",
			                    r->what);
		if ((pl->creator = al_strdup(json_string_value(v))) == NULL)
			return al_error_oom();
	}
	if ((v = json_object_get(optional, "timestamp")) != NULL) {
		if (!json_is_integer(v))
			return al_error_set(
			    AL_EPARSE,
			    "%s: 'optional.timestamp' is not an "
			    "integer",
			    r->what);
		pl->timestamp = (int64_t)json_integer_value(v);
		pl->has_timestamp = 1;
	}
	return 0;
}

int al_sig__payload_read(al_sig_payload *out, const uint8_t *p, size_t n,
                         const al_sig__payload_rules *r)
{
	static const char *const top_keys[] = {"critical", "optional", NULL};
	static const char *const critical_keys[] = {"type", "image", "identity",
	                                            NULL};
	static const char *const image_keys[] = {"docker-manifest-digest",
	                                         NULL};
	static const char *const identity_keys[] = {"docker-reference", NULL};
	al_sig_payload pl;
	json_t *root = NULL, *critical = NULL, *image = NULL, *identity = NULL,
	       *optional;
	const char *type = NULL, *digest = NULL, *reference = NULL;
	int rc;

	memset(&pl, 0, sizeof(pl));
	if (n > r->max)
		return al_error_set(
		    AL_ELIMIT, "%s of %zu bytes exceeds the %llu byte limit",
		    r->what, n, (unsigned long long)r->max);
	if ((rc = al_json_parse(&root, p, n, r->what)) < 0)
		return rc;
	if (!json_is_object(root)) {
		rc = al_error_set(AL_EPARSE, "%s: not a JSON object", r->what);
		goto out;
	}
	if ((rc = only_members(r, root, "", top_keys, r->optional_member)) <
	        0 ||
	    (rc = get_object(r, &critical, root, "", "critical")) < 0 ||
	    (rc = only_members(r, critical, "critical", critical_keys, 0)) <
	        0 ||
	    (rc = get_string(r, &type, critical, "critical", "type")) < 0 ||
	    (rc = get_object(r, &image, critical, "critical", "image")) < 0 ||
	    (rc = get_object(r, &identity, critical, "critical", "identity")) <
	        0 ||
	    (rc = only_members(r, image, "critical.image", image_keys, 0)) <
	        0 ||
	    (rc = only_members(r, identity, "critical.identity", identity_keys,
	                       0)) < 0 ||
	    (rc = get_string(r, &digest, image, "critical.image",
	                     "docker-manifest-digest")) < 0 ||
	    (rc = get_string(r, &reference, identity, "critical.identity",
	                     "docker-reference")) < 0)
		goto out;
	if (strcmp(type, r->type) != 0) {
		rc = al_error_set(AL_EPARSE, "%s: type '%s' is not '%s'",
		                  r->what, type, r->type);
		goto out;
	}
	if (al_digest_parse_str(&pl.digest, digest) < 0) {
		rc = al_error_set(AL_EPARSE,
		                  "%s: invalid docker-manifest-digest '%s'",
		                  r->what, digest);
		goto out;
	}
	/* an empty identity names no image: library-go's
	 * verifyAtomicContainerSignature and containers/image refuse it
	 * under every identity policy */
	if (reference[0] == '\0') {
		rc = al_error_set(
		    AL_EPARSE,
		    "%s: critical.identity.docker-reference is empty", r->what);
		goto out;
	}
	optional = json_object_get(root, "optional");
	if (optional != NULL && !json_is_object(optional) &&
	    !(r->optional_member && json_is_null(optional))) {
		rc =
		    al_error_set(AL_EPARSE, "%s: 'optional' is not an object%s",
		                 r->what, r->optional_member ? " or null" : "");
		goto out;
	}
	if ((rc = read_optional(r, &pl, optional)) < 0)
		goto out;
	if ((pl.reference = al_strdup(reference)) == NULL) {
		rc = al_error_oom();
		goto out;
	}
	*out = pl;
	memset(&pl, 0, sizeof(pl));
out:
	al_sig_payload_clear(&pl);
	json_decref(root);
	return rc;
}

int al_sig_payload_parse(al_sig_payload *out, const uint8_t *p, size_t n)
{
	static const al_sig__payload_rules rules = {
	    .what = "signature payload",
	    .type = AL_SIG_PAYLOAD_TYPE,
	    .max = AL_SIG_MAX_PAYLOAD,
	    .optional_member = 0,
	};

	return al_sig__payload_read(out, p, n, &rules);
}

/* "registry/repository" (repo != 0) or the full normalised form of r. */
static char *ref_key(const al_ref *r, int repo)
{
	return repo ? al_ref_name(r) : al_ref_string(r);
}

int al_sig_payload_check(const al_sig_payload *pl, const al_digest *release,
                         const char *reference, al_sig_identity_policy policy)
{
	char have[AL_DIGEST_STRMAX], want[AL_DIGEST_STRMAX];
	al_ref signed_ref, want_ref;
	char *a = NULL, *b = NULL;
	int rc, repo = policy == AL_SIG_IDENTITY_REPOSITORY;

	memset(&signed_ref, 0, sizeof(signed_ref));
	memset(&want_ref, 0, sizeof(want_ref));
	if (pl == NULL || release == NULL)
		return al_error_set(AL_EINVAL,
		                    "no payload or release digest to check");
	if (!al_digest_equal(&pl->digest, release))
		return al_error_set(
		    AL_EVERIFY,
		    "digest mismatch: signature is for %s, release is %s",
		    al_digest_str(&pl->digest, have),
		    al_digest_str(release, want));
	if (policy == AL_SIG_IDENTITY_IGNORE)
		return 0;
	if (policy != AL_SIG_IDENTITY_EXACT &&
	    policy != AL_SIG_IDENTITY_REPOSITORY)
		return al_error_set(AL_EINVAL, "unknown identity policy %d",
		                    (int)policy);
	if (reference == NULL || reference[0] == '\0')
		return al_error_set(
		    AL_EINVAL,
		    "no expected identity given for identity policy '%s'",
		    al_sig_identity_policy_name(policy));
	if (al_ref_parse(&want_ref, reference) < 0) {
		rc = al_error_set(
		    AL_EINVAL,
		    "expected identity '%s' is not a docker reference",
		    reference);
		goto out;
	}
	if (al_ref_parse(&signed_ref, pl->reference) < 0) {
		rc = al_error_set(AL_EVERIFY,
		                  "identity mismatch: signed docker-reference "
		                  "'%s' does not parse",
		                  pl->reference);
		goto out;
	}
	a = ref_key(&signed_ref, repo);
	b = ref_key(&want_ref, repo);
	if (a == NULL || b == NULL) {
		rc = al_error_set(AL_ENOMEM,
		                  "out of memory comparing identities");
		goto out;
	}
	if (strcmp(a, b) != 0) {
		rc = al_error_set(
		    AL_EVERIFY,
		    "identity mismatch: signature is for '%s', expected %s'%s'",
		    pl->reference, repo ? "repository " : "",
		    repo ? b : reference);
		goto out;
	}
	rc = 0;
out:
	free(a);
	free(b);
	al_ref_clear(&signed_ref);
	al_ref_clear(&want_ref);
	return rc;
}

void al_sig_info_clear(al_sig_info *info)
{
	if (info == NULL)
		return;
	free(info->reference);
	free(info->creator);
	memset(info, 0, sizeof(*info));
}

int al_sig_verify(al_sig_info *out, const uint8_t *sig, size_t n,
                  const al_digest *release, const al_sig_verify_opts *opts)
{
	al_buf literal = AL_BUF_INIT(AL_SIG_MAX_PAYLOAD);
	al_pgp_result pr = AL_PGP_RESULT_INIT;
	al_sig_payload pl;
	al_sig_info info;
	int rc;

	memset(&pl, 0, sizeof(pl));
	memset(&info, 0, sizeof(info));
	if (opts != NULL &&
	    (rc = al_opts_version_check("al_sig_verify_opts", opts->version,
	                                AL_SIG_VERIFY_OPTS_VERSION)) < 0)
		return rc;
	if (opts == NULL || opts->keyring == NULL || release == NULL ||
	    (sig == NULL && n > 0))
		return al_error_set(AL_EINVAL, "signature verification needs a "
		                               "keyring and a release digest");
	if (n == 0)
		return al_error_set(AL_EVERIFY, "empty signature");
	if (n > AL_SIG_MAX_BYTES)
		return al_error_set(
		    AL_ELIMIT,
		    "signature of %zu bytes exceeds the %llu byte limit", n,
		    (unsigned long long)AL_SIG_MAX_BYTES);
	/* the caller's policy must be usable before any content is judged */
	if (opts->policy != AL_SIG_IDENTITY_IGNORE &&
	    (opts->reference == NULL || opts->reference[0] == '\0'))
		return al_error_set(
		    AL_EINVAL,
		    "no expected identity given for identity policy '%s'",
		    al_sig_identity_policy_name(opts->policy));
	rc = al_pgp_verify(&pr, &literal, opts->keyring, sig, n, opts->now);
	if (rc == AL_EPARSE) {
		/* the bytes claimed to be a signature: that is bad content */
		rc = al_error_wrap(AL_EVERIFY, "not a valid signature");
		goto out;
	}
	if (rc == AL_ELIMIT) {
		/* a payload over its bound, or a compression bomb: content is
		 * bad */
		rc = al_error_wrap(AL_EVERIFY, "signature refused");
		goto out;
	}
	if (rc < 0)
		goto out;
	if ((rc = al_sig_payload_parse(&pl, literal.ptr, literal.len)) < 0) {
		rc = al_error_wrap(rc == AL_ENOMEM ? AL_ENOMEM : AL_EVERIFY,
		                   "invalid signature payload");
		goto out;
	}
	if ((rc = al_sig_payload_check(&pl, release, opts->reference,
	                               opts->policy)) < 0)
		goto out;
	memcpy(info.fingerprint, pr.fingerprint, sizeof(info.fingerprint));
	memcpy(info.primary_fingerprint, pr.primary_fingerprint,
	       sizeof(info.primary_fingerprint));
	info.signed_at = pr.created;
	info.reference = pl.reference;
	info.creator = pl.creator;
	info.timestamp = pl.timestamp;
	info.has_timestamp = pl.has_timestamp;
	pl.reference = NULL;
	pl.creator = NULL;
	if (out != NULL) {
		*out = info;
		memset(&info, 0, sizeof(info));
	}
	rc = 0;
out:
	al_sig_info_clear(&info);
	al_sig_payload_clear(&pl);
	al_buf_free(&literal);
	return rc;
}

int al_sig_list_add(al_sig_list *l, const uint8_t *p, size_t n)
{
	al_sig_blob *items;
	uint8_t *copy;

	if (n == 0 || p == NULL)
		return al_error_set(AL_EINVAL, "empty signature");
	if (n > AL_SIG_MAX_BYTES)
		return al_error_set(
		    AL_ELIMIT,
		    "signature of %zu bytes exceeds the %llu byte limit", n,
		    (unsigned long long)AL_SIG_MAX_BYTES);
	if (l->n >= AL_SIG_MAX_STORED)
		return al_error_set(AL_ELIMIT, "more than %d signatures",
		                    AL_SIG_MAX_STORED);
	copy = malloc(n);
	if (copy == NULL)
		return al_error_set(AL_ENOMEM,
		                    "out of memory holding a signature");
	items = realloc(l->items, (l->n + 1) * sizeof(*items));
	if (items == NULL) {
		free(copy);
		return al_error_set(AL_ENOMEM,
		                    "out of memory holding a signature");
	}
	memcpy(copy, p, n);
	items[l->n].data = copy;
	items[l->n].len = n;
	l->items = items;
	l->n++;
	return 0;
}

void al_sig_list_clear(al_sig_list *l)
{
	size_t i;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++)
		free(l->items[i].data);
	free(l->items);
	l->items = NULL;
	l->n = 0;
}

int al_sig_verify_list(al_sig_info *out, size_t *which, const al_sig_list *l,
                       const al_digest *release, const al_sig_verify_opts *opts)
{
	al_buf reasons = AL_BUF_INIT(16 * 1024);
	char ds[AL_DIGEST_STRMAX];
	size_t i;
	int rc;

	if (opts != NULL &&
	    (rc = al_opts_version_check("al_sig_verify_opts", opts->version,
	                                AL_SIG_VERIFY_OPTS_VERSION)) < 0)
		return rc;
	if (l == NULL || l->n == 0)
		return al_error_set(AL_ENOTFOUND, "no signatures for %s",
		                    release != NULL ? al_digest_str(release, ds)
		                                    : "the release");
	for (i = 0; i < l->n; i++) {
		rc = al_sig_verify(out, l->items[i].data, l->items[i].len,
		                   release, opts);
		if (rc == 0) {
			if (which != NULL)
				*which = i;
			goto out;
		}
		if (rc == AL_EINVAL || rc == AL_ENOMEM)
			goto out;
		/* reasons beyond the buffer's bound are dropped: the first ones
		 * say enough */
		(void)al_buf_printf(&reasons, "%ssignature-%zu: %s",
		                    i > 0 ? "; " : "", i + 1,
		                    al_error_message());
	}
	rc = al_error_set(AL_EVERIFY, "%s", al_buf_cstr(&reasons));
out:
	al_buf_free(&reasons);
	return rc;
}

/* "<dir>/sha256=<hex>" for d; caller frees; NULL on ENOMEM. */
static char *digest_dir(const char *dir, const al_digest *d)
{
	char hex[AL_DIGEST_STRMAX];

	return al_sprintf("%s/%s=%s", dir, al_digest_algo_name(d->algo),
	                  al_digest_hex(d, hex));
}

int al_sig_dir_read(al_sig_list *out, const char *dir, const al_digest *d,
                    unsigned max)
{
	al_buf data = AL_BUF_INIT(AL_SIG_MAX_BYTES);
	char *ddir = NULL, *path = NULL;
	struct stat st;
	unsigned k;
	int rc = 0;

	if (out == NULL || dir == NULL || d == NULL)
		return al_error_set(
		    AL_EINVAL, "no directory or digest to read signatures for");
	if (max == 0)
		max = AL_SIG_DEFAULT_MAX_PER_STORE;
	if (max > AL_SIG_MAX_STORED)
		max = AL_SIG_MAX_STORED;
	/* a missing digest directory means no signatures; a missing store
	 * directory means the source is wrong */
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return al_error_set(AL_ENOTFOUND,
		                    "signature directory '%s' does not exist",
		                    dir);
	if ((ddir = digest_dir(dir, d)) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	for (k = 1; k <= max; k++) {
		free(path);
		if ((path = al_sprintf("%s/signature-%u", ddir, k)) == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		al_buf_reset(&data);
		rc = al_fs_read_file(path, &data);
		if (rc == AL_ENOTFOUND) {
			rc = 0;
			break;
		}
		if (rc == AL_ELIMIT) {
			rc = al_error_set(
			    AL_ELIMIT,
			    "signature '%s' exceeds the %llu byte limit", path,
			    (unsigned long long)AL_SIG_MAX_BYTES);
			goto out;
		}
		if (rc < 0)
			goto out;
		if (data.len == 0) {
			rc = al_error_set(AL_EIO, "signature '%s' is empty",
			                  path);
			goto out;
		}
		if ((rc = al_sig_list_add(out, data.ptr, data.len)) < 0)
			goto out;
	}
out:
	free(path);
	free(ddir);
	al_buf_free(&data);
	return rc;
}

int al_sig_source_parse(al_sig_source *out, const char *s)
{
	struct stat st;

	if (s == NULL || s[0] == '\0')
		return al_error_set(AL_EINVAL, "empty signature source");
	memset(out, 0, sizeof(*out)); /* no CA of its own */
	if (al_str_startswith(s, "http://") ||
	    al_str_startswith(s, "https://")) {
		out->kind = AL_SIG_SOURCE_HTTP;
		out->location = s;
		return 0;
	}
	if (al_str_startswith(s, "file://"))
		s += strlen("file://");
	if (s[0] == '\0')
		return al_error_set(AL_EINVAL, "empty signature source path");
	out->kind = stat(s, &st) == 0 && S_ISDIR(st.st_mode)
	                ? AL_SIG_SOURCE_DIR
	                : AL_SIG_SOURCE_CONFIGMAP;
	out->location = s;
	return 0;
}

/* --- ConfigMaps ------------------------------------------------------- */

typedef struct cm_entry {
	unsigned long k;
	const char *b64;
	size_t doc;
} cm_entry;

static int cm_entry_cmp(const void *a, const void *b)
{
	const cm_entry *x = a, *y = b;

	if (x->k != y->k)
		return x->k < y->k ? -1 : 1;
	if (x->doc != y->doc)
		return x->doc < y->doc ? -1 : 1;
	return 0;
}

/* Gather the binaryData entries of d from one ConfigMap document. */
static int cm_collect(cm_entry **ents, size_t *nents, const json_t *cm,
                      size_t doc, const char *prefix, const char *what)
{
	const char *kind = al_json_str(cm, "kind"), *key;
	json_t *bin, *v;
	size_t plen = strlen(prefix);

	if (!json_is_object(cm) || kind == NULL ||
	    strcmp(kind, "ConfigMap") != 0)
		return 0;
	bin = json_object_get(cm, "binaryData");
	if (bin == NULL)
		return 0;
	if (!json_is_object(bin))
		return al_error_set(AL_EPARSE, "'%s': binaryData is not a map",
		                    what);
	json_object_foreach(bin, key, v)
	{
		cm_entry *grown;
		unsigned long k;
		char *end;

		if (strncmp(key, prefix, plen) != 0)
			continue;
		if (key[plen] < '1' || key[plen] > '9')
			return al_error_set(
			    AL_EPARSE,
			    "'%s': binaryData key '%s' has no signature number",
			    what, key);
		errno = 0;
		k = strtoul(key + plen, &end, 10);
		if (errno != 0 || *end != '\0' || k > 1000000)
			return al_error_set(AL_EPARSE,
			                    "'%s': binaryData key '%s' has no "
			                    "valid signature number",
			                    what, key);
		if (!json_is_string(v))
			return al_error_set(
			    AL_EPARSE, "'%s': binaryData '%s' is not a string",
			    what, key);
		if (*nents >= AL_SIG_MAX_STORED)
			return al_error_set(AL_ELIMIT,
			                    "'%s': more than %d signatures",
			                    what, AL_SIG_MAX_STORED);
		grown = realloc(*ents, (*nents + 1) * sizeof(*grown));
		if (grown == NULL)
			return al_error_set(AL_ENOMEM,
			                    "out of memory reading '%s'", what);
		grown[*nents].k = k;
		grown[*nents].b64 = json_string_value(v);
		grown[*nents].doc = doc;
		*ents = grown;
		(*nents)++;
	}
	return 0;
}

/* One document: a ConfigMap or a List of them. */
static int cm_doc(cm_entry **ents, size_t *nents, const json_t *doc, size_t idx,
                  const char *prefix, const char *what)
{
	const char *kind = al_json_str(doc, "kind");
	json_t *items, *item;
	size_t i;
	int rc;

	if (kind != NULL && strcmp(kind, "List") == 0) {
		items = json_object_get(doc, "items");
		if (items == NULL)
			return 0;
		if (!json_is_array(items))
			return al_error_set(
			    AL_EPARSE, "'%s': List items is not a list", what);
		json_array_foreach(items, i, item)
		{
			/* order across a List follows the items */
			if ((rc = cm_collect(ents, nents, item,
			                     idx * 100000 + i, prefix, what)) <
			    0)
				return rc;
		}
		return 0;
	}
	return cm_collect(ents, nents, doc, idx * 100000, prefix, what);
}

/* Append every item of from to to (from is left empty); to is unchanged on
 * failure. */
static int list_move(al_sig_list *to, al_sig_list *from)
{
	al_sig_blob *items;

	if (from->n == 0)
		return 0;
	if (to->n + from->n > AL_SIG_MAX_STORED)
		return al_error_set(AL_ELIMIT, "more than %d signatures",
		                    AL_SIG_MAX_STORED);
	items = realloc(to->items, (to->n + from->n) * sizeof(*items));
	if (items == NULL)
		return al_error_set(AL_ENOMEM,
		                    "out of memory holding signatures");
	memcpy(items + to->n, from->items, from->n * sizeof(*items));
	to->items = items;
	to->n += from->n;
	free(from->items);
	from->items = NULL;
	from->n = 0;
	return 0;
}

int al_sig_configmap_parse(al_sig_list *out, const uint8_t *p, size_t n,
                           const char *what, const al_digest *d)
{
	al_yaml_node **ydocs = NULL;
	size_t nydocs = 0, ndocs = 0, nents = 0, i, j;
	json_t **docs = NULL;
	cm_entry *ents = NULL;
	al_buf raw = AL_BUF_INIT(AL_SIG_MAX_BYTES);
	al_sig_list got = AL_SIG_LIST_INIT;
	char hex[AL_DIGEST_STRMAX];
	char *prefix = NULL;
	int rc;

	if (what == NULL)
		what = "ConfigMap";
	if (out == NULL || d == NULL || (p == NULL && n > 0))
		return al_error_set(AL_EINVAL, "no ConfigMap input or digest");
	if (n > AL_SIG_MAX_CONFIGMAP_BYTES)
		return al_error_set(
		    AL_ELIMIT, "'%s' exceeds the %llu byte limit", what,
		    (unsigned long long)AL_SIG_MAX_CONFIGMAP_BYTES);
	if ((prefix = al_sprintf("%s-%s-", al_digest_algo_name(d->algo),
	                         al_digest_hex(d, hex))) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	for (i = 0; i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' ||
	                      p[i] == '\n');
	     i++)
		;
	if (i < n && (p[i] == '{' || p[i] == '[')) {
		/* JSON as oc writes it: parse it as JSON, whose escapes
		 * YAML 1.1 does not all know */
		if ((docs = calloc(1, sizeof(*docs))) == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		if ((rc = al_json_parse(&docs[0], p, n, what)) < 0)
			goto out;
		ndocs = 1;
	} else {
		if ((rc = al_yaml_load(&ydocs, &nydocs, p, n, what)) < 0)
			goto out;
		if (nydocs > 0 &&
		    (docs = calloc(nydocs, sizeof(*docs))) == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		for (ndocs = 0; ndocs < nydocs; ndocs++) {
			if ((rc = al_yaml_to_json(&docs[ndocs], ydocs[ndocs])) <
			    0) {
				rc = al_error_wrap(rc, "'%s'", what);
				goto out;
			}
		}
	}
	for (i = 0; i < ndocs; i++) {
		if ((rc = cm_doc(&ents, &nents, docs[i], i, prefix, what)) < 0)
			goto out;
	}
	if (nents > 1)
		qsort(ents, nents, sizeof(*ents), cm_entry_cmp);
	for (j = 0; j < nents; j++) {
		al_buf_reset(&raw);
		rc = al_base64_decode(&raw, ents[j].b64, strlen(ents[j].b64));
		if (rc == AL_ELIMIT) {
			rc = al_error_set(
			    AL_ELIMIT,
			    "'%s': signature %s%lu exceeds the %llu byte limit",
			    what, prefix, ents[j].k,
			    (unsigned long long)AL_SIG_MAX_BYTES);
			goto out;
		}
		if (rc < 0) {
			rc = al_error_set(
			    AL_EPARSE,
			    "'%s': binaryData '%s%lu' is not valid base64",
			    what, prefix, ents[j].k);
			goto out;
		}
		if (raw.len == 0) {
			rc = al_error_set(AL_EPARSE,
			                  "'%s': binaryData '%s%lu' is empty",
			                  what, prefix, ents[j].k);
			goto out;
		}
		if ((rc = al_sig_list_add(&got, raw.ptr, raw.len)) < 0)
			goto out;
	}
	rc = list_move(out, &got);
out:
	al_sig_list_clear(&got);
	for (i = 0; i < ndocs; i++)
		json_decref(docs[i]);
	free(docs);
	al_yaml_docs_free(ydocs, nydocs);
	free(ents);
	free(prefix);
	al_buf_free(&raw);
	return rc;
}

int al_sig_configmap_load(al_sig_list *out, const char *path,
                          const al_digest *d)
{
	al_buf data = AL_BUF_INIT(AL_SIG_MAX_CONFIGMAP_BYTES);
	int rc;

	if (path == NULL)
		return al_error_set(AL_EINVAL, "no ConfigMap path");
	rc = al_fs_read_file(path, &data);
	if (rc == AL_ELIMIT)
		rc = al_error_set(
		    AL_ELIMIT, "'%s' exceeds the %llu byte limit", path,
		    (unsigned long long)AL_SIG_MAX_CONFIGMAP_BYTES);
	if (rc == 0)
		rc = al_sig_configmap_parse(out, data.ptr, data.len, path, d);
	al_buf_free(&data);
	return rc;
}

/* --- signatures in the store ------------------------------------------ */

int al_sig_store_save(al_store *s, const al_digest *release, const uint8_t *p,
                      size_t n, unsigned *index)
{
	if (s == NULL || release == NULL || p == NULL || n == 0)
		return al_error_set(AL_EINVAL,
		                    "no store, digest or signature to save");
	if (n > AL_SIG_MAX_BYTES)
		return al_error_set(
		    AL_ELIMIT,
		    "signature of %zu bytes exceeds the %llu byte limit", n,
		    (unsigned long long)AL_SIG_MAX_BYTES);
	/* the store owns signatures/ (numbering, its lock) */
	return al_store_signature_add(s, release, p, n, AL_SIG_MAX_BYTES,
	                              AL_SIG_MAX_STORED, index);
}

int al_sig_store_load(al_store *s, const al_digest *release, al_sig_list *out)
{
	char *root;
	int rc;

	if (s == NULL || release == NULL || out == NULL)
		return al_error_set(
		    AL_EINVAL, "no store or digest to load signatures for");
	if ((root = al_store_signature_dir(s, NULL)) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	/* a layout written by another tool has no signatures/ at all */
	rc = al_fs_exists(root);
	if (rc == 1)
		rc = al_sig_dir_read(out, root, release, AL_SIG_MAX_STORED);
	free(root);
	return rc < 0 ? rc : 0;
}

int al_sig_store_load_trusted(al_store *s, const al_digest *release,
                              al_sig_list *out, size_t *left_out)
{
	al_sig_list all = AL_SIG_LIST_INIT;
	size_t i, skipped = 0;
	int rc;

	if ((rc = al_sig_store_load(s, release, &all)) < 0)
		goto out;
	for (i = 0; i < all.n; i++) {
		/* docs/security.md "Untrusted imports": bytes an import no
		 * key verified wrote are not shipped on the store's word */
		rc = al_store_signature_untrusted(s, release, all.items[i].data,
		                                  all.items[i].len);
		if (rc < 0)
			goto out;
		if (rc == 1) {
			skipped++;
			continue;
		}
		if ((rc = al_sig_list_add(out, all.items[i].data,
		                          all.items[i].len)) < 0)
			goto out;
	}
	rc = 0;
	if (left_out != NULL)
		*left_out = skipped;
out:
	al_sig_list_clear(&all);
	return rc;
}
