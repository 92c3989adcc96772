/* store_untrusted.c: airlock/untrusted.json, the marks of what an import
 * no key verified wrote into the store (docs/security.md "Untrusted
 * imports"): signatures by release and content, tags by name and digest. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "airlock/digest.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/store.h"
#include "json_int.h"

/* the file is small metadata; bounded like releases.json */
#define UNTRUSTED_MAX (64u * 1024u * 1024u)

static char *marks_file(al_store *s)
{
	return al_sprintf("%s/airlock/untrusted.json", al_store_path(s));
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
		v = json_pack("{s:i, s:[], s:[]}", "airlockUntrusted", 1,
		              "signatures", "tags");
		rc = v == NULL ? al_error_oom() : 0;
		goto done;
	}
	if (rc < 0)
		goto out;
	if (al_json_parse(&v, b.ptr, b.len, p) < 0) {
		rc = damaged(p, al_error_message());
		goto out;
	}
	if (json_integer_value(json_object_get(v, "airlockUntrusted")) != 1) {
		rc = damaged(p, "not an airlock untrusted-marks file");
		goto out;
	}
	for (k = 0; k < 2; k++) {
		const char *key = k == 0 ? "signatures" : "tags";
		const char *dk = k == 0 ? "release" : "digest";
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
			const char *h = al_json_str(e, dk);
			const char *sh = al_json_str(e, "sha256");
			if (h == NULL || al_digest_parse_str(&d, h) < 0 ||
			    al_json_str(e, "pack") == NULL ||
			    (k == 0 && (sh == NULL || strlen(sh) != 64)) ||
			    (k == 1 && al_json_str(e, "name") == NULL)) {
				al_error_clear();
				rc = damaged(p, "a mark lacks a member");
				goto out;
			}
		}
	}
done:
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
	int rc = 0;

	if (p == NULL)
		return al_error_oom();
	if (json_array_size(json_object_get(v, "signatures")) == 0 &&
	    json_array_size(json_object_get(v, "tags")) == 0) {
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
	int sig = m->kind == AL_STORE_UNTRUSTED_SIGNATURE;
	const json_t *a, *e;
	size_t i;

	al_digest_str(&m->digest, ds);
	a = json_object_get(doc, sig ? "signatures" : "tags");
	for (i = 0; i < json_array_size(a); i++) {
		e = json_array_get(a, i);
		if (sig ? same_sig(e, ds, m->sha256)
		        : strcmp(al_json_str(e, "name"), m->name) == 0)
			return (long)i;
	}
	return -1;
}

static int check_mark(const al_store_untrusted *m)
{
	if (m->kind == AL_STORE_UNTRUSTED_SIGNATURE
	        ? strlen(m->sha256) != 64
	        : (m->kind != AL_STORE_UNTRUSTED_TAG || m->name == NULL))
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
		if (m->kind == AL_STORE_UNTRUSTED_SIGNATURE) {
			if (at >= 0)
				continue;
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
			    json_object_get(doc,
			                    m->kind == AL_STORE_UNTRUSTED_TAG
			                        ? "tags"
			                        : "signatures"),
			    o);
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
		json_array_remove(
		    json_object_get(doc, v[i].kind == AL_STORE_UNTRUSTED_TAG
		                             ? "tags"
		                             : "signatures"),
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
	cap = json_array_size(json_object_get(doc, "signatures")) +
	      json_array_size(json_object_get(doc, "tags")) + 1;
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
