/* store_meta.c: the store's metadata formats, typed: release records
 * (airlock/releases.json), the import of a pack's releases.json over every
 * kind of named record (store_int.h), and pack records
 * (airlock/packs/<id>.json). Record members and the named records
 * themselves are store_record.c's. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "json_int.h"
#include "airlock/store.h"
#include "array_int.h"
#include "store_int.h"

/* Largest pack record read (the same bound pack.c uses for inventories). */
#define PACK_RECORD_MAX (64 * 1024 * 1024)

void al_store_release_clear(al_store_release *r)
{
	size_t i;

	if (r == NULL)
		return;
	free(r->version);
	free(r->digest_text);
	free(r->source);
	free(r->platform);
	free(r->mirrored);
	free(r->verified_by);
	for (i = 0; i < r->nchannels; i++)
		free(r->channels[i]);
	free(r->channels);
	memset(r, 0, sizeof(*r));
	r->components = -1;
	r->verified = AL_STORE_UNCHECKED;
}

void al_store_releases_free(al_store_release *list, size_t n)
{
	size_t i;

	if (list == NULL)
		return;
	for (i = 0; i < n; i++)
		al_store_release_clear(&list[i]);
	free(list);
}

/* --- the named record kinds (store_int.h) -------------------------------- */

/* Every kind of named record releases.json holds beside "releases", in the
 * order a pack's inventory lists them. */
static const al_store__kind *const record_kinds[] = {
    &al_store__catalog_kind,  /* operator catalogs (store_catalogs.c) */
    &al_store__chart_kind,    /* Helm charts (store_charts.c) */
    &al_store__sigstore_kind, /* sigstore trust (store_sigstore.c) */
};

int al_store__kinds_inventory(al_store *s, json_t *inv)
{
	size_t i;
	int rc;

	for (i = 0; i < sizeof(record_kinds) / sizeof(record_kinds[0]); i++)
		if ((rc = al_store__records_inventory(s, record_kinds[i],
		                                      inv)) < 0)
			return rc;
	return 0;
}

/* One record of releases.json into r (cleared first). */
static int release_from_json(al_store_release *r, const json_t *e)
{
	const json_t *comp = json_object_get(e, "components");
	const json_t *ver = json_object_get(e, "verified");
	const json_t *chs = json_object_get(e, "channels");
	int rc;

	memset(r, 0, sizeof(*r));
	r->components = json_is_integer(comp) ? json_integer_value(comp) : -1;
	r->verified = json_is_true(ver)    ? AL_STORE_VERIFIED
	              : json_is_false(ver) ? AL_STORE_UNVERIFIED
	                                   : AL_STORE_UNCHECKED;
	if ((rc = al_store__member_dup(&r->version, e, "version")) < 0 ||
	    (rc = al_store__member_dup(&r->digest_text, e, "digest")) < 0 ||
	    (rc = al_store__member_dup(&r->source, e, "source")) < 0 ||
	    (rc = al_store__member_dup(&r->platform, e, "platform")) < 0 ||
	    (rc = al_store__member_dup(&r->mirrored, e, "mirrored")) < 0 ||
	    (rc = al_store__member_dup(&r->verified_by, e, "verifiedBy")) < 0)
		goto fail;
	r->has_digest = r->digest_text != NULL &&
	                al_digest_parse_str(&r->digest, r->digest_text) == 0;
	al_error_clear();
	if ((rc = al_store__member_strv(&r->channels, &r->nchannels, chs,
	                                NULL)) < 0)
		goto fail;
	return 0;
fail:
	al_store_release_clear(r);
	return rc;
}

int al_store_releases_list(al_store *s, al_store_release **out, size_t *n)
{
	json_t *doc = NULL, *list;
	al_store_release *v = NULL;
	size_t i, cnt = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = al_store_releases_load(s, &doc)) < 0)
		return rc;
	list = json_object_get(doc, "releases");
	if ((v = calloc(json_array_size(list) + 1, sizeof(*v))) == NULL) {
		rc = al_error_oom();
		goto out;
	}
	for (i = 0; i < json_array_size(list); i++) {
		if ((rc = release_from_json(&v[cnt], json_array_get(list, i))) <
		    0)
			goto out;
		cnt++;
	}
	*out = v;
	*n = cnt;
	v = NULL;
out:
	al_store_releases_free(v, cnt);
	json_decref(doc);
	return rc;
}

int al_store_release_find(al_store *s, const char *key, al_store_release *out)
{
	al_store_release *list = NULL;
	size_t n = 0, i;
	int rc;

	if (key == NULL)
		return al_error_set(AL_EINVAL, "no release to find");
	if ((rc = al_store_releases_list(s, &list, &n)) < 0)
		return rc;
	for (i = 0; i < n; i++) {
		const al_store_release *r = &list[i];
		if ((r->version != NULL && strcmp(r->version, key) == 0) ||
		    (r->digest_text != NULL &&
		     strcmp(r->digest_text, key) == 0))
			break;
	}
	if (i == n) {
		rc = al_error_set(
		    AL_ENOTFOUND,
		    "no release '%s' in '%s/airlock/releases.json'", key,
		    al_store_path(s));
	} else {
		*out = list[i];
		memset(&list[i], 0, sizeof(list[i]));
	}
	al_store_releases_free(list, n);
	return rc;
}

typedef struct put_ctx {
	const al_store_release *rel;
	unsigned flags;
	int kept_verified;
	const char *path;
} put_ctx;

static int add_channels(json_t *entry, const al_store_release *rel)
{
	json_t *chans = json_object_get(entry, "channels");
	size_t i, j;

	if (rel->nchannels == 0)
		return 0;
	if (!json_is_array(chans)) {
		chans = json_array();
		if (chans == NULL ||
		    json_object_set_new(entry, "channels", chans) != 0)
			return al_error_oom();
	}
	for (i = 0; i < rel->nchannels; i++) {
		int found = 0;
		for (j = 0; j < json_array_size(chans); j++) {
			const char *c =
			    json_string_value(json_array_get(chans, j));
			if (c != NULL && strcmp(c, rel->channels[i]) == 0)
				found = 1;
		}
		if (!found && json_array_append_new(
		                  chans, json_string(rel->channels[i])) != 0)
			return al_error_oom();
	}
	return 0;
}

static int put_edit(json_t *doc, void *ud)
{
	put_ctx *c = ud;
	const al_store_release *rel = c->rel;
	json_t *list = json_object_get(doc, "releases"), *old = NULL;
	json_t *entry = NULL, *fresh = NULL;
	char ds[AL_DIGEST_STRMAX];
	size_t i;
	int rc = 0;

	al_digest_str(&rel->digest, ds);
	for (i = 0; i < json_array_size(list); i++) {
		const char *d = al_json_str(json_array_get(list, i), "digest");
		if (d != NULL && strcmp(d, ds) == 0) {
			old = json_array_get(list, i);
			break;
		}
	}
	if (old == NULL && (c->flags & AL_STORE_RELEASE_EXISTING))
		return al_error_set(AL_ENOTFOUND, "no release %s in '%s'", ds,
		                    c->path);
	/* a new record lists its members in the order mirror always wrote
	 * them; an update keeps the record's order */
	if (old == NULL) {
		if ((fresh = json_object()) == NULL)
			return al_error_oom();
		entry = fresh;
		if ((rc = al_store__member_set(entry, "version",
		                               rel->version)) < 0 ||
		    (rc = al_store__member_set(entry, "digest", ds)) < 0)
			goto out;
	} else {
		entry = old;
		if ((rc = al_store__member_set(entry, "version",
		                               rel->version)) < 0)
			goto out;
	}
	if ((rc = al_store__member_set(entry, "source", rel->source)) < 0)
		goto out;
	if (rel->components >= 0 &&
	    json_object_set_new(entry, "components",
	                        json_integer(rel->components)) != 0) {
		rc = al_error_oom();
		goto out;
	}
	if ((rc = al_store__member_set(entry, "platform", rel->platform)) < 0 ||
	    (rc = al_store__member_set(entry, "mirrored", rel->mirrored)) < 0)
		goto out;
	if (rel->verified != AL_STORE_UNCHECKED) {
		if (rel->verified == AL_STORE_UNVERIFIED &&
		    json_is_true(json_object_get(entry, "verified"))) {
			/* its signature stays in STORE/signatures */
			c->kept_verified = 1;
		} else if (json_object_set_new(
		               entry, "verified",
		               json_boolean(rel->verified ==
		                            AL_STORE_VERIFIED)) != 0 ||
		           json_object_set_new(
		               entry, "verifiedBy",
		               rel->verified == AL_STORE_VERIFIED &&
		                       rel->verified_by != NULL
		                   ? json_string(rel->verified_by)
		                   : json_null()) != 0) {
			rc = al_error_oom();
			goto out;
		}
	}
	if ((rc = add_channels(entry, rel)) < 0)
		goto out;
	if (fresh != NULL && json_array_append(list, fresh) != 0)
		rc = al_error_oom();
out:
	json_decref(fresh);
	return rc;
}

int al_store_release_put(al_store *s, const al_store_release *rel,
                         unsigned flags, int *kept_verified)
{
	put_ctx c;
	char *path = NULL;
	int rc;

	if (kept_verified != NULL)
		*kept_verified = 0;
	if (rel == NULL || !rel->has_digest)
		return al_error_set(AL_EINVAL,
		                    "a release record needs a digest");
	path = al_path_join(al_store_path(s), "airlock/releases.json");
	if (path == NULL)
		return al_error_oom();
	memset(&c, 0, sizeof(c));
	c.rel = rel;
	c.flags = flags;
	c.path = path;
	rc = al_store__releases_edit(s, put_edit, &c);
	if (rc == 0 && kept_verified != NULL)
		*kept_verified = c.kept_verified;
	free(path);
	return rc;
}

typedef struct import_ctx {
	const json_t *other;
	const char *what;
} import_ctx;

static int import_edit(json_t *doc, void *ud)
{
	import_ctx *c = ud;
	json_t *pa = json_object_get(c->other, "releases");
	json_t *ma = json_object_get(doc, "releases"), *v, *w;
	size_t i, j;
	int rc;

	if (!json_is_array(pa))
		return al_error_set(AL_EPARSE,
		                    "airlock/releases.json of %s has no "
		                    "\"releases\" array",
		                    c->what);
	json_array_foreach(pa, i, v)
	{
		int found = 0;
		json_array_foreach(ma, j, w)
		{
			if (json_equal(v, w)) {
				found = 1;
				break;
			}
		}
		if (!found && json_array_append(ma, v) < 0)
			return al_error_oom();
	}
	/* the named records of every kind: a pack's record replaces the
	 * store's of the same name */
	for (i = 0; i < sizeof(record_kinds) / sizeof(record_kinds[0]); i++)
		if ((rc = al_store__records_merge(
		         doc, c->other, record_kinds[i], c->what)) < 0)
			return rc;
	return 0;
}

int al_store__releases_import(al_store *s, const json_t *other,
                              const char *what)
{
	import_ctx c = {other, what};

	return al_store__releases_edit(s, import_edit, &c);
}

/* --- pack records ------------------------------------------------------- */

void al_store_pack_clear(al_store_pack *p)
{
	size_t i;

	if (p == NULL)
		return;
	free(p->id);
	free(p->created);
	free(p->base);
	for (i = 0; i < p->nblobs; i++)
		free(p->blobs[i]);
	free(p->blobs);
	for (i = 0; i < p->nsignatures; i++) {
		free(p->signatures[i]);
		if (p->signature_sha256 != NULL)
			free(p->signature_sha256[i]);
	}
	free(p->signatures);
	free(p->signature_sha256);
	memset(p, 0, sizeof(*p));
}

void al_store_packs_free(al_store_pack *list, size_t n)
{
	size_t i;

	if (list == NULL)
		return;
	for (i = 0; i < n; i++)
		al_store_pack_clear(&list[i]);
	free(list);
}

/* "signatures": [{"path","sha256"}] into the parallel arrays. */
static int sig_list(al_store_pack *p, const json_t *arr)
{
	size_t i, n = json_array_size(arr);

	if (n == 0)
		return 0;
	p->signatures = calloc(n, sizeof(char *));
	p->signature_sha256 = calloc(n, sizeof(char *));
	if (p->signatures == NULL || p->signature_sha256 == NULL)
		return al_error_oom();
	for (i = 0; i < n; i++) {
		const json_t *e = json_array_get(arr, i);
		const char *path = al_json_str(e, "path");
		const char *sha = al_json_str(e, "sha256");
		if (path == NULL)
			continue;
		if ((p->signatures[p->nsignatures] = al_strdup(path)) == NULL)
			return al_error_oom();
		p->nsignatures++;
		if (sha != NULL && (p->signature_sha256[p->nsignatures - 1] =
		                        al_strdup(sha)) == NULL)
			return al_error_oom();
	}
	return 0;
}

static int pack_from_json(al_store_pack *p, const char *id, const json_t *v)
{
	const json_t *seq = json_object_get(v, "sequence");
	const json_t *vol = json_object_get(v, "volumes");
	int rc = 0;

	memset(p, 0, sizeof(*p));
	p->sequence = json_is_integer(seq) && json_integer_value(seq) > 0
	                  ? (uint64_t)json_integer_value(seq)
	                  : 0;
	p->volumes = json_is_integer(vol) && json_integer_value(vol) > 0
	                 ? (uint64_t)json_integer_value(vol)
	                 : 0;
	if ((p->id = al_strdup(id)) == NULL)
		return al_error_oom();
	if ((rc = al_store__member_dup(&p->created, v, "created")) < 0 ||
	    (rc = al_store__member_dup(&p->base, v, "base")) < 0 ||
	    (rc = al_store__member_strv(&p->blobs, &p->nblobs,
	                                json_object_get(v, "blobs"), NULL)) <
	        0 ||
	    (rc = sig_list(p, json_object_get(v, "signatures"))) < 0) {
		al_store_pack_clear(p);
		return rc;
	}
	return 0;
}

char *al_store_pack_record_path(const al_store *s, const char *id)
{
	return al_sprintf("%s/airlock/packs/%s.json", al_store_path(s), id);
}

int al_store__pack_record_save(al_store *s, const char *id, const json_t *rec)
{
	char *dir = al_path_join(al_store_path(s), "airlock/packs");
	char *path = al_store_pack_record_path(s, id);
	int rc;

	if (dir == NULL || path == NULL)
		rc = al_error_oom();
	else if ((rc = al_fs_mkdir_p(dir, 0755)) == 0)
		rc = al_json_save_file(path, rec, 0);
	free(dir);
	free(path);
	return rc;
}

int al_store_pack_put(al_store *s, const al_store_pack *rec)
{
	json_t *doc = NULL, *blobs = NULL, *sigs = NULL;
	size_t i;
	int rc;

	/* a file name in airlock/packs/, nothing more (pack.h checks ids) */
	if (rec == NULL || rec->id == NULL || rec->id[0] == '\0' ||
	    rec->id[0] == '.' || strchr(rec->id, '/') != NULL)
		return al_error_set(AL_EINVAL, "'%s' is not a pack id",
		                    rec != NULL && rec->id != NULL ? rec->id
		                                                   : "");
	if ((blobs = json_array()) == NULL || (sigs = json_array()) == NULL) {
		rc = al_error_oom();
		goto out;
	}
	for (i = 0; i < rec->nblobs; i++)
		if (json_array_append_new(blobs, json_string(rec->blobs[i])) <
		    0) {
			rc = al_error_oom();
			goto out;
		}
	for (i = 0; i < rec->nsignatures; i++) {
		const char *sha = rec->signature_sha256 != NULL
		                      ? rec->signature_sha256[i]
		                      : NULL;
		json_t *o = json_pack("{s:s, s:s}", "path", rec->signatures[i],
		                      "sha256", sha != NULL ? sha : "");
		if (o == NULL || json_array_append_new(sigs, o) < 0) {
			rc = al_error_oom();
			goto out;
		}
	}
	doc = json_pack(
	    "{s:i, s:s, s:s, s:I, s:o, s:I, s:O, s:O}", "airlockPackRecord", 1,
	    "id", rec->id, "created", rec->created != NULL ? rec->created : "",
	    "sequence", (json_int_t)rec->sequence, "base",
	    rec->base != NULL ? json_string(rec->base) : json_null(), "volumes",
	    (json_int_t)rec->volumes, "blobs", blobs, "signatures", sigs);
	rc = doc == NULL ? al_error_oom()
	                 : al_store__pack_record_save(s, rec->id, doc);
out:
	json_decref(doc);
	json_decref(blobs);
	json_decref(sigs);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int al_store_packs_list(al_store *s, al_store_pack **out, size_t *n)
{
	char *dir = al_path_join(al_store_path(s), "airlock/packs");
	char **names = NULL, *path = NULL;
	al_store_pack *recs = NULL;
	size_t nn = 0, capnames = 0, cnt = 0, i;
	DIR *dh = NULL;
	struct dirent *de;
	al_buf b = AL_BUF_INIT(PACK_RECORD_MAX);
	json_t *v = NULL;
	int rc = 0;

	*out = NULL;
	*n = 0;
	if (dir == NULL)
		return al_error_oom();
	if ((dh = opendir(dir)) == NULL) {
		rc = errno == ENOENT
		         ? 0
		         : al_error_errno(errno, "cannot read '%s'", dir);
		free(dir);
		return rc;
	}
	while ((de = readdir(dh)) != NULL) {
		size_t len = strlen(de->d_name);
		char **g;

		if (de->d_name[0] == '.' ||
		    !al_str_endswith(de->d_name, ".json"))
			continue;
		if ((g = al__array_grow(names, &capnames, nn + 1,
		                        sizeof(*g))) == NULL) {
			rc = AL_ENOMEM;
			goto out;
		}
		names = g;
		if ((names[nn] = al_strndup(de->d_name, len - 5)) == NULL) {
			rc = al_error_oom();
			goto out;
		}
		nn++;
	}
	if (nn > 1)
		qsort(names, nn, sizeof(*names), cmp_str);
	if ((recs = calloc(nn + 1, sizeof(*recs))) == NULL) {
		rc = al_error_oom();
		goto out;
	}
	for (i = 0; i < nn; i++) {
		if ((path = al_sprintf("%s/%s.json", dir, names[i])) == NULL) {
			rc = al_error_oom();
			goto out;
		}
		al_buf_reset(&b);
		if ((rc = al_fs_read_file(path, &b)) < 0)
			goto out;
		if ((rc = al_json_parse(
		         &v, b.ptr != NULL ? b.ptr : (const uint8_t *)"", b.len,
		         path)) < 0) {
			rc = al_error_wrap(
			    AL_EVERIFY, "store metadata '%s' is damaged", path);
			goto out;
		}
		if ((rc = pack_from_json(&recs[cnt], names[i], v)) < 0)
			goto out;
		cnt++;
		json_decref(v);
		v = NULL;
		free(path);
		path = NULL;
	}
	*out = recs;
	*n = cnt;
	recs = NULL;
out:
	al_store_packs_free(recs, cnt);
	for (i = 0; i < nn; i++)
		free(names[i]);
	free(names);
	json_decref(v);
	free(path);
	al_buf_free(&b);
	closedir(dh);
	free(dir);
	return rc;
}

int al_store_pack_carries(const al_store_pack *p, const al_digest *d)
{
	char ds[AL_DIGEST_STRMAX], hex[AL_DIGEST_STRMAX];
	char dir[AL_DIGEST_STRMAX + 8];
	size_t i, dl;
	int n;

	al_digest_str(d, ds);
	al_digest_hex(d, hex);
	/* pack records name sha256 blobs by bare hex (pack_write.c
	 * blob_key), other algorithms as "algo:hex" */
	for (i = 0; i < p->nblobs; i++)
		if (strcmp(p->blobs[i], ds) == 0 ||
		    (d->algo == AL_DIGEST_SHA256 &&
		     strcmp(p->blobs[i], hex) == 0))
			return 1;
	/* a signature of it: [signatures/]<algo>=<hex>/signature-N */
	n = snprintf(dir, sizeof(dir), "%s=%s/", al_digest_algo_name(d->algo),
	             hex);
	if (n < 0 || (size_t)n >= sizeof(dir))
		return 0;
	dl = (size_t)n;
	for (i = 0; i < p->nsignatures; i++) {
		const char *sp = p->signatures[i];
		if (al_str_startswith(sp, "signatures/"))
			sp += strlen("signatures/");
		if (strncmp(sp, dir, dl) == 0)
			return 1;
	}
	return 0;
}

/* --- removing a release record (airlock delete) -------------------------- */

typedef struct remove_ctx {
	const al_digest *digest;
	int removed;
} remove_ctx;

static int remove_edit(json_t *doc, void *ud)
{
	remove_ctx *c = ud;
	json_t *arr = json_object_get(doc, "releases");
	char ds[AL_DIGEST_STRMAX];
	size_t i;

	al_digest_str(c->digest, ds);
	for (i = json_array_size(arr); i > 0; i--) {
		const char *d =
		    al_json_str(json_array_get(arr, i - 1), "digest");
		if (d != NULL && strcmp(d, ds) == 0) {
			if (json_array_remove(arr, i - 1) != 0)
				return al_error_oom();
			c->removed++;
		}
	}
	return 0;
}

int al_store_release_remove(al_store *s, const al_digest *digest)
{
	remove_ctx c = {digest, 0};
	int rc;

	if (digest == NULL)
		return al_error_set(AL_EINVAL, "al_store_release_remove: NULL");
	if ((rc = al_store__releases_edit(s, remove_edit, &c)) < 0)
		return rc;
	if (c.removed == 0) {
		char ds[AL_DIGEST_STRMAX];
		return al_error_set(AL_ENOTFOUND,
		                    "no release %s in airlock/releases.json",
		                    al_digest_str(digest, ds));
	}
	return 0;
}
