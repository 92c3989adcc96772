/* store_untrusted.c: airlock/untrusted.json, the marks of what an import
 * no key verified wrote into the store (docs/security.md "Untrusted
 * imports"): signatures by release and content, names (tags and names by
 * digest) by name and digest, release records of releases.json by release
 * and content, catalog and chart records by name and content. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "airlock/digest.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/store.h"
#include "json_int.h"
#include "store_int.h"

/* the file is small metadata; bounded like releases.json */
#define UNTRUSTED_MAX (64u * 1024u * 1024u)

static char *marks_file(al_store *s)
{
	return al_sprintf("%s/airlock/untrusted.json", al_store_path(s));
}

/* Every kind of mark, in the order untrusted.json lists them. */
static const int mark_kinds[] = {
    AL_STORE_UNTRUSTED_SIGNATURE, AL_STORE_UNTRUSTED_TAG,
    AL_STORE_UNTRUSTED_RELEASE,   AL_STORE_UNTRUSTED_CATALOG,
    AL_STORE_UNTRUSTED_CHART,     AL_STORE_UNTRUSTED_SIGSTORE,
};
#define NKINDS (sizeof(mark_kinds) / sizeof(mark_kinds[0]))

/* A catalog, chart or sigstore mark: of a named record of releases.json. */
static int named_kind(int kind)
{
	return kind == AL_STORE_UNTRUSTED_CATALOG ||
	       kind == AL_STORE_UNTRUSTED_CHART ||
	       kind == AL_STORE_UNTRUSTED_SIGSTORE;
}

/* The record kind (store_int.h) a named mark is of. */
static const al_store__kind *record_kind(int kind)
{
	return kind == AL_STORE_UNTRUSTED_CATALOG ? &al_store__catalog_kind
	       : kind == AL_STORE_UNTRUSTED_CHART ? &al_store__chart_kind
	                                          : &al_store__sigstore_kind;
}

/* The list of untrusted.json that holds marks of kind: a named record's
 * mark under its kind's own array name ("catalogs", "charts"). */
static const char *mark_list(int kind)
{
	if (named_kind(kind))
		return record_kind(kind)->key;
	return kind == AL_STORE_UNTRUSTED_TAG       ? "tags"
	       : kind == AL_STORE_UNTRUSTED_RELEASE ? "releases"
	                                            : "signatures";
}

static int damaged(const char *path, const char *why)
{
	return al_error_set(AL_EVERIFY, "store metadata '%s' is damaged: %s",
	                    path, why);
}

/* Every mark of the file (a missing file has none); AL_EVERIFY naming the
 * file when it does not read as marks. */
static int marks_load(al_store *s, json_t **out)
{
	al_buf b = AL_BUF_INIT(UNTRUSTED_MAX);
	char *p = marks_file(s);
	json_t *v = NULL, *a, *e;
	size_t i, k;
	int rc;

	if (p == NULL)
		return al_error_oom();
	rc = al_fs_read_file(p, &b);
	if (rc == AL_ENOTFOUND) {
		al_error_clear();
		v = json_pack("{s:i}", "airlockUntrusted", 1);
		rc = v == NULL ? al_error_oom() : 0;
	}
	if (rc < 0)
		goto out;
	if (v == NULL && al_json_parse(&v, b.ptr, b.len, p) < 0) {
		rc = damaged(p, al_error_message());
		goto out;
	}
	if (json_integer_value(json_object_get(v, "airlockUntrusted")) != 1) {
		rc = damaged(p, "not an airlock untrusted-marks file");
		goto out;
	}
	/* a file older than a kind of mark reads as having none of it */
	for (k = 0; k < NKINDS; k++) {
		int kind = mark_kinds[k];
		const char *key = mark_list(kind);
		const char *dk = kind == AL_STORE_UNTRUSTED_TAG ? "digest"
		                 : named_kind(kind)             ? NULL
		                                                : "release";
		int named = kind != AL_STORE_UNTRUSTED_SIGNATURE &&
		            kind != AL_STORE_UNTRUSTED_RELEASE;
		al_digest d;
		a = json_object_get(v, key);
		if (a == NULL) {
			if (json_object_set_new(v, key, json_array()) < 0) {
				rc = al_error_oom();
				goto out;
			}
			continue;
		}
		if (!json_is_array(a)) {
			rc = damaged(p, "a list is not an array");
			goto out;
		}
		json_array_foreach(a, i, e)
		{
			const char *h = dk != NULL ? al_json_str(e, dk) : NULL;
			const char *sh = al_json_str(e, "sha256");
			if ((dk != NULL &&
			     (h == NULL || al_digest_parse_str(&d, h) < 0)) ||
			    al_json_str(e, "pack") == NULL ||
			    (kind != AL_STORE_UNTRUSTED_TAG &&
			     (sh == NULL || strlen(sh) != 64)) ||
			    (named && al_json_str(e, "name") == NULL)) {
				al_error_clear();
				rc = damaged(p, "a mark lacks a member");
				goto out;
			}
		}
	}
	*out = v;
	v = NULL;
out:
	json_decref(v);
	al_buf_free(&b);
	free(p);
	return rc;
}

/* Write the marks back atomically; with none left, the file goes. */
static int marks_save(al_store *s, const json_t *v)
{
	char *p = marks_file(s);
	size_t k, left = 0;
	int rc = 0;

	if (p == NULL)
		return al_error_oom();
	for (k = 0; k < NKINDS; k++)
		left += json_array_size(
		    json_object_get(v, mark_list(mark_kinds[k])));
	if (left == 0) {
		if (unlink(p) != 0 && errno != ENOENT)
			rc = al_error_errno(errno, "cannot remove '%s'", p);
	} else {
		rc = al_json_save_file(p, v, 1);
	}
	free(p);
	return rc;
}

static int same_sig(const json_t *e, const char *release, const char *sha)
{
	return strcmp(al_json_str(e, "release"), release) == 0 &&
	       strcmp(al_json_str(e, "sha256"), sha) == 0;
}

/* index of m's mark in doc, or -1 */
static long find_mark(const json_t *doc, const al_store_untrusted *m)
{
	char ds[AL_DIGEST_STRMAX];
	int sig = m->kind == AL_STORE_UNTRUSTED_SIGNATURE ||
	          m->kind == AL_STORE_UNTRUSTED_RELEASE;
	const json_t *a, *e;
	size_t i;

	al_digest_str(&m->digest, ds);
	a = json_object_get(doc, mark_list(m->kind));
	for (i = 0; i < json_array_size(a); i++) {
		e = json_array_get(a, i);
		if (sig ? same_sig(e, ds, m->sha256)
		        : strcmp(al_json_str(e, "name"), m->name) == 0 &&
		              (m->kind == AL_STORE_UNTRUSTED_TAG ||
		               strcmp(al_json_str(e, "sha256"), m->sha256) ==
		                   0))
			return (long)i;
	}
	return -1;
}

static int check_mark(const al_store_untrusted *m)
{
	int ok;

	if (m->kind == AL_STORE_UNTRUSTED_SIGNATURE ||
	    m->kind == AL_STORE_UNTRUSTED_RELEASE)
		ok = strlen(m->sha256) == 64;
	else if (named_kind(m->kind))
		ok = strlen(m->sha256) == 64 && m->name != NULL;
	else
		ok = m->kind == AL_STORE_UNTRUSTED_TAG && m->name != NULL;
	if (!ok)
		return al_error_set(AL_EINVAL, "malformed untrusted mark");
	return 0;
}

int al_store_untrusted_mark(al_store *s, const al_store_untrusted *v, size_t n)
{
	char ds[AL_DIGEST_STRMAX];
	json_t *doc = NULL, *o;
	size_t i;
	int rc, changed = 0;

	if (n == 0)
		return 0;
	if ((rc = marks_load(s, &doc)) < 0)
		return rc;
	for (i = 0; i < n && rc == 0; i++) {
		const al_store_untrusted *m = &v[i];
		long at;
		if ((rc = check_mark(m)) < 0)
			break;
		at = find_mark(doc, m);
		al_digest_str(&m->digest, ds);
		if (m->kind != AL_STORE_UNTRUSTED_TAG && at >= 0)
			continue;
		if (named_kind(m->kind)) {
			o = json_pack("{s:s, s:s, s:s}", "name", m->name,
			              "sha256", m->sha256, "pack",
			              m->pack != NULL ? m->pack : "");
		} else if (m->kind != AL_STORE_UNTRUSTED_TAG) {
			o = json_pack("{s:s, s:s, s:s}", "release", ds,
			              "sha256", m->sha256, "pack",
			              m->pack != NULL ? m->pack : "");
		} else {
			o = json_pack("{s:s, s:s, s:s}", "name", m->name,
			              "digest", ds, "pack",
			              m->pack != NULL ? m->pack : "");
		}
		if (o == NULL) {
			rc = al_error_oom();
			break;
		}
		if (at >= 0)
			rc = json_array_set_new(json_object_get(doc, "tags"),
			                        (size_t)at, o);
		else
			rc = json_array_append_new(
			    json_object_get(doc, mark_list(m->kind)), o);
		if (rc < 0)
			rc = al_error_oom();
		changed = 1;
	}
	if (rc == 0 && changed)
		rc = marks_save(s, doc);
	json_decref(doc);
	return rc;
}

int al_store_untrusted_clear(al_store *s, const al_store_untrusted *v, size_t n)
{
	char *p;
	json_t *doc = NULL;
	size_t i;
	int rc, changed = 0, ex;

	if (n == 0)
		return 0;
	if ((p = marks_file(s)) == NULL)
		return al_error_oom();
	ex = al_fs_exists(p);
	free(p);
	if (ex != 1)
		return ex; /* no marks: nothing to clear (and nothing written)
		            */
	if ((rc = marks_load(s, &doc)) < 0)
		return rc;
	for (i = 0; i < n && rc == 0; i++) {
		long at;
		if ((rc = check_mark(&v[i])) < 0)
			break;
		if ((at = find_mark(doc, &v[i])) < 0)
			continue;
		json_array_remove(json_object_get(doc, mark_list(v[i].kind)),
		                  (size_t)at);
		changed = 1;
	}
	if (rc == 0 && changed)
		rc = marks_save(s, doc);
	json_decref(doc);
	return rc;
}

int al_store_signature_untrusted(al_store *s, const al_digest *release,
                                 const uint8_t *p, size_t n)
{
	char ds[AL_DIGEST_STRMAX], hex[AL_DIGEST_STRMAX];
	json_t *doc = NULL, *e;
	al_digest d;
	size_t i;
	int rc, found = 0;

	if ((rc = marks_load(s, &doc)) < 0)
		return rc;
	if ((rc = al_digest_bytes(&d, AL_DIGEST_SHA256, p, n)) < 0)
		goto out;
	al_digest_str(release, ds);
	al_digest_hex(&d, hex);
	json_array_foreach(json_object_get(doc, "signatures"), i, e)
	{
		if (same_sig(e, ds, hex))
			found = 1;
	}
	rc = found;
out:
	json_decref(doc);
	return rc;
}

void al_store_untrusted_free(al_store_untrusted *v, size_t n)
{
	size_t i;

	if (v == NULL)
		return;
	for (i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].pack);
		free(v[i].path);
	}
	free(v);
}

/* The signature-<n> of release holding bytes of SHA-256 sha (its path
 * relative to the store), or NULL when none does. */
static char *sig_file_of(al_store *s, const al_digest *release, const char *sha)
{
	char *dir = al_store_signature_dir(s, release), *p = NULL;
	char hex[AL_DIGEST_STRMAX], dh[AL_DIGEST_STRMAX];
	unsigned k;

	if (dir == NULL)
		return NULL;
	for (k = 1; k <= 9999; k++) {
		al_digest d;
		free(p);
		if ((p = al_sprintf("%s/signature-%u", dir, k)) == NULL)
			break;
		if (al_fs_exists(p) != 1)
			break;
		if (al_digest_file(&d, AL_DIGEST_SHA256, p, NULL) == 0 &&
		    strcmp(al_digest_hex(&d, hex), sha) == 0) {
			char *rel =
			    al_sprintf("signatures/%s=%s/signature-%u",
			               al_digest_algo_name(release->algo),
			               al_digest_hex(release, dh), k);
			free(p);
			free(dir);
			return rel;
		}
		al_error_clear();
	}
	free(p);
	free(dir);
	return NULL;
}

int al_store__record_sha256(const json_t *rec, char hex[65])
{
	char *text = json_dumps(rec, JSON_COMPACT | JSON_SORT_KEYS);
	char buf[AL_DIGEST_STRMAX];
	al_digest d;
	int rc;

	if (text == NULL)
		return al_error_oom();
	rc = al_digest_bytes(&d, AL_DIGEST_SHA256, (const uint8_t *)text,
	                     strlen(text));
	free(text);
	if (rc < 0)
		return rc;
	memcpy(hex, al_digest_hex(&d, buf), 65);
	return 0;
}

/* The record of list (a releases.json array) whose member key is value
 * ("digest": a release; "name": a catalog, chart or sigstore record) and
 * whose canonical SHA-256 is sha, or NULL. */
static const json_t *find_record(const json_t *list, const char *key,
                                 const char *value, const char *sha)
{
	const json_t *e;
	char hex[65];
	size_t i;

	json_array_foreach(list, i, e)
	{
		const char *v = al_json_str(e, key);
		if (v == NULL || strcmp(v, value) != 0)
			continue;
		if (al_store__record_sha256(e, hex) < 0) {
			al_error_clear();
			continue;
		}
		if (strcmp(hex, sha) == 0)
			return e;
	}
	return NULL;
}

/* The release marks of doc whose record releases.json still holds, into
 * v from *m on (name: the record's version). */
static int list_releases(al_store *s, const json_t *doc, al_store_untrusted *v,
                         size_t *m)
{
	json_t *rels = NULL, *e;
	const json_t *rec;
	size_t i;
	int rc;

	if (json_array_size(json_object_get(doc, "releases")) == 0)
		return 0;
	if ((rc = al_store_releases_load(s, &rels)) < 0)
		return rc;
	json_array_foreach(json_object_get(doc, "releases"), i, e)
	{
		al_store_untrusted *u = &v[*m];
		const char *ver;
		rec = find_record(json_object_get(rels, "releases"), "digest",
		                  al_json_str(e, "release"),
		                  al_json_str(e, "sha256"));
		if (rec == NULL)
			continue;
		u->kind = AL_STORE_UNTRUSTED_RELEASE;
		(void)al_digest_parse_str(&u->digest,
		                          al_json_str(e, "release"));
		memcpy(u->sha256, al_json_str(e, "sha256"), 65);
		ver = al_json_str(rec, "version");
		(*m)++;
		if ((u->name = al_strdup(ver != NULL ? ver : "")) == NULL ||
		    (u->pack = al_strdup(al_json_str(e, "pack"))) == NULL) {
			rc = al_error_oom();
			break;
		}
	}
	json_decref(rels);
	return rc;
}

int al_store__untrusted_releases_mark(al_store *s, const json_t *other,
                                      const char *pack)
{
	al_store_untrusted *v = NULL;
	json_t *mine = NULL, *e, *w;
	const json_t *pa = json_object_get(other, "releases");
	size_t i, j, n = 0;
	int rc;

	if (json_array_size(pa) == 0)
		return 0;
	if ((rc = al_store_releases_load(s, &mine)) < 0)
		return rc;
	if ((v = calloc(json_array_size(pa), sizeof(*v))) == NULL) {
		rc = al_error_oom();
		goto out;
	}
	json_array_foreach(pa, i, e)
	{
		int found = 0;
		const char *d = al_json_str(e, "digest");
		/* a record the store holds already is not the import's */
		json_array_foreach(json_object_get(mine, "releases"), j, w)
		{
			if (json_equal(e, w))
				found = 1;
		}
		if (found || d == NULL ||
		    al_digest_parse_str(&v[n].digest, d) < 0) {
			al_error_clear();
			continue;
		}
		if ((rc = al_store__record_sha256(e, v[n].sha256)) < 0)
			goto out;
		v[n].kind = AL_STORE_UNTRUSTED_RELEASE;
		v[n].pack = (char *)pack;
		n++;
	}
	rc = al_store_untrusted_mark(s, v, n);
out:
	free(v);
	json_decref(mine);
	return rc;
}

typedef struct vouch_ctx {
	const json_t *marks; /* the "releases" marks */
	const json_t *other; /* the trusted releases.json */
	int changed;
} vouch_ctx;

/* 1 when rec is one of the trusted document's records */
static int in_other(const json_t *other, const json_t *rec)
{
	const json_t *e;
	size_t i;

	json_array_foreach(json_object_get(other, "releases"), i, e)
	{
		if (json_equal(e, rec))
			return 1;
	}
	return 0;
}

/* Drop every marked record of a release the trusted document records,
 * unless the trusted document holds the same record. */
static int vouch_edit(json_t *doc, void *ud)
{
	vouch_ctx *c = ud;
	json_t *list = json_object_get(doc, "releases");
	const json_t *e;
	size_t i, k;

	for (i = json_array_size(list); i-- > 0;) {
		const json_t *rec = json_array_get(list, i);
		const char *d = al_json_str(rec, "digest");
		char hex[65];
		int marked = 0, vouched = 0;
		if (d == NULL || in_other(c->other, rec))
			continue;
		json_array_foreach(json_object_get(c->other, "releases"), k, e)
		{
			const char *od = al_json_str(e, "digest");
			if (od != NULL && strcmp(od, d) == 0)
				vouched = 1;
		}
		if (!vouched || al_store__record_sha256(rec, hex) < 0)
			continue;
		json_array_foreach(c->marks, k, e)
		{
			if (same_sig(e, d, hex))
				marked = 1;
		}
		if (marked) {
			json_array_remove(list, i);
			c->changed = 1;
		}
	}
	return c->changed ? 0 : 1;
}

int al_store__untrusted_releases_vouch(al_store *s, const json_t *other)
{
	json_t *doc = NULL, *e;
	al_store_untrusted *v = NULL;
	vouch_ctx c;
	size_t i, j, n = 0;
	char *p;
	int rc, ex;

	if (json_array_size(json_object_get(other, "releases")) == 0)
		return 0;
	if ((p = marks_file(s)) == NULL)
		return al_error_oom();
	ex = al_fs_exists(p);
	free(p);
	if (ex != 1)
		return ex; /* no marks: nothing to vouch for */
	if ((rc = marks_load(s, &doc)) < 0)
		return rc;
	c.marks = json_object_get(doc, "releases");
	c.other = other;
	c.changed = 0;
	/* the marked records go first, then their marks: a crash between
	 * leaves a mark of no record, which nothing lists */
	if ((rc = al_store__releases_edit(s, vouch_edit, &c)) < 0)
		goto out;
	if ((v = calloc(json_array_size(c.marks) + 1, sizeof(*v))) == NULL) {
		rc = al_error_oom();
		goto out;
	}
	json_array_foreach(c.marks, i, e)
	{
		const json_t *o;
		json_array_foreach(json_object_get(other, "releases"), j, o)
		{
			const char *od = al_json_str(o, "digest");
			if (od == NULL ||
			    strcmp(od, al_json_str(e, "release")) != 0)
				continue;
			v[n].kind = AL_STORE_UNTRUSTED_RELEASE;
			(void)al_digest_parse_str(&v[n].digest, od);
			memcpy(v[n].sha256, al_json_str(e, "sha256"), 65);
			n++;
			break;
		}
	}
	rc = al_store_untrusted_clear(s, v, n);
out:
	free(v);
	json_decref(doc);
	return rc;
}

static int names_record(const json_t *list, const char *name);

/* The catalog and chart marks of doc whose record releases.json still
 * holds (by name and content), into v from *m on. */
static int list_named(al_store *s, const json_t *doc, al_store_untrusted *v,
                      size_t *m)
{
	json_t *rels = NULL, *e;
	const json_t *rec;
	size_t i, k;
	int rc = 0;

	if (json_array_size(json_object_get(doc, "catalogs")) == 0 &&
	    json_array_size(json_object_get(doc, "charts")) == 0 &&
	    json_array_size(json_object_get(doc, "sigstore")) == 0)
		return 0;
	if ((rc = al_store_releases_load(s, &rels)) < 0)
		return rc;
	for (k = 0; rc == 0 && k < NKINDS; k++) {
		int kind = mark_kinds[k];
		if (!named_kind(kind))
			continue;
		json_array_foreach(json_object_get(doc, mark_list(kind)), i, e)
		{
			al_store_untrusted *u = &v[*m];
			const char *d;
			rec = find_record(
			    json_object_get(rels, record_kind(kind)->key),
			    "name", al_json_str(e, "name"),
			    al_json_str(e, "sha256"));
			if (rec == NULL)
				continue;
			u->kind = kind;
			d = al_json_str(rec, "digest");
			if (d == NULL || al_digest_parse_str(&u->digest, d) < 0)
				memset(&u->digest, 0, sizeof(u->digest));
			al_error_clear();
			memcpy(u->sha256, al_json_str(e, "sha256"), 65);
			(*m)++;
			if ((u->name = al_strdup(al_json_str(e, "name"))) ==
			        NULL ||
			    (u->pack = al_strdup(al_json_str(e, "pack"))) ==
			        NULL) {
				rc = al_error_oom();
				break;
			}
		}
	}
	json_decref(rels);
	return rc;
}

int al_store__untrusted_sigstore_keep(al_store *s, json_t *other)
{
	json_t *mine = NULL, *list = json_object_get(other, "sigstore");
	size_t i;
	int rc;

	if (json_array_size(list) == 0)
		return 0;
	if ((rc = al_store_releases_load(s, &mine)) < 0)
		return rc;
	for (i = json_array_size(list); i-- > 0;) {
		const char *nm = al_json_str(json_array_get(list, i), "name");
		if (nm != NULL &&
		    names_record(json_object_get(mine, "sigstore"), nm))
			json_array_remove(list, i);
	}
	json_decref(mine);
	return 0;
}

int al_store__untrusted_records_mark(al_store *s, const json_t *other,
                                     const char *pack)
{
	al_store_untrusted *v = NULL;
	json_t *mine = NULL;
	const json_t *e, *w;
	size_t i, j, k, n = 0, cap = 1;
	int rc;

	for (k = 0; k < NKINDS; k++)
		if (named_kind(mark_kinds[k]))
			cap += json_array_size(json_object_get(
			    other, record_kind(mark_kinds[k])->key));
	if (cap == 1)
		return 0;
	if ((rc = al_store_releases_load(s, &mine)) < 0)
		return rc;
	if ((v = calloc(cap, sizeof(*v))) == NULL) {
		rc = al_error_oom();
		goto out;
	}
	for (k = 0; k < NKINDS; k++) {
		int kind = mark_kinds[k];
		const char *key;
		if (!named_kind(kind))
			continue;
		key = record_kind(kind)->key;
		json_array_foreach(json_object_get(other, key), i, e)
		{
			int found = 0;
			/* a record the store holds already (the same JSON)
			 * is not the import's; one without a name is refused
			 * by the merge */
			json_array_foreach(json_object_get(mine, key), j, w)
			{
				if (json_equal(e, w))
					found = 1;
			}
			if (found || al_json_str(e, "name") == NULL)
				continue;
			if ((rc = al_store__record_sha256(e, v[n].sha256)) < 0)
				goto out;
			v[n].kind = kind;
			v[n].name = (char *)al_json_str(e, "name");
			v[n].pack = (char *)pack;
			n++;
		}
	}
	rc = al_store_untrusted_mark(s, v, n);
out:
	free(v);
	json_decref(mine);
	return rc;
}

/* 1 when list (a releases.json array of named records) has a record named
 * name. */
static int names_record(const json_t *list, const char *name)
{
	const json_t *e;
	size_t i;

	json_array_foreach(list, i, e)
	{
		const char *nm = al_json_str(e, "name");
		if (nm != NULL && strcmp(nm, name) == 0)
			return 1;
	}
	return 0;
}

int al_store__untrusted_records_vouch(al_store *s, const json_t *other)
{
	json_t *doc = NULL, *list;
	size_t i, k;
	char *p;
	int rc, ex, changed = 0;

	if ((p = marks_file(s)) == NULL)
		return al_error_oom();
	ex = al_fs_exists(p);
	free(p);
	if (ex != 1)
		return ex; /* no marks: nothing to vouch for */
	if ((rc = marks_load(s, &doc)) < 0)
		return rc;
	for (k = 0; k < NKINDS; k++) {
		int kind = mark_kinds[k];
		if (!named_kind(kind))
			continue;
		list = json_object_get(doc, mark_list(kind));
		/* the pack's record of a name replaced the store's: every
		 * mark of that name goes, whatever content it marked */
		for (i = json_array_size(list); i-- > 0;) {
			if (!names_record(
			        json_object_get(other, record_kind(kind)->key),
			        al_json_str(json_array_get(list, i), "name")))
				continue;
			json_array_remove(list, i);
			changed = 1;
		}
	}
	if (changed)
		rc = marks_save(s, doc);
	json_decref(doc);
	return rc;
}

int al_store_untrusted_list(al_store *s, al_store_untrusted **out, size_t *n)
{
	al_store_untrusted *v = NULL;
	json_t *doc = NULL, *e;
	size_t i, m = 0, cap;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = marks_load(s, &doc)) < 0)
		return rc;
	for (i = 0, cap = 1; i < NKINDS; i++)
		cap += json_array_size(
		    json_object_get(doc, mark_list(mark_kinds[i])));
	if ((v = calloc(cap, sizeof(*v))) == NULL) {
		rc = al_error_oom();
		goto out;
	}
	json_array_foreach(json_object_get(doc, "signatures"), i, e)
	{
		al_store_untrusted *u = &v[m];
		u->kind = AL_STORE_UNTRUSTED_SIGNATURE;
		(void)al_digest_parse_str(&u->digest,
		                          al_json_str(e, "release"));
		memcpy(u->sha256, al_json_str(e, "sha256"), 65);
		/* only a file the store still holds */
		if ((u->path = sig_file_of(s, &u->digest, u->sha256)) == NULL)
			continue;
		if ((u->pack = al_strdup(al_json_str(e, "pack"))) == NULL)
			goto oom;
		m++;
	}
	json_array_foreach(json_object_get(doc, "tags"), i, e)
	{
		al_store_untrusted *u = &v[m];
		al_store_image img;
		int live;
		memset(&img, 0, sizeof(img));
		u->kind = AL_STORE_UNTRUSTED_TAG;
		(void)al_digest_parse_str(&u->digest, al_json_str(e, "digest"));
		/* only a name that still names what the import gave it */
		rc = al_store_find(s, al_json_str(e, "name"), &img);
		live = rc == 0 && al_digest_equal(&img.desc.digest, &u->digest);
		al_store_image_clear(&img);
		al_error_clear();
		rc = 0;
		if (!live)
			continue;
		if ((u->name = al_strdup(al_json_str(e, "name"))) == NULL ||
		    (u->pack = al_strdup(al_json_str(e, "pack"))) == NULL)
			goto oom;
		m++;
	}
	if ((rc = list_releases(s, doc, v, &m)) < 0 ||
	    (rc = list_named(s, doc, v, &m)) < 0)
		goto out;
	*out = v;
	*n = m;
	v = NULL;
	m = 0;
	goto out;
oom:
	rc = al_error_oom();
out:
	al_store_untrusted_free(v, cap);
	json_decref(doc);
	return rc;
}
