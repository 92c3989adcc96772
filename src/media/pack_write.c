/* pack_write.c: al_pack_write: the store (or a delta of it) as size-bounded pax
 * tar volumes plus a signed manifest. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>
#include <openssl/rand.h>

#include "airlock/clock.h"
#include "airlock/digest.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "json_int.h"
#include "airlock/log.h"
#include "airlock/mirror_plan.h"
#include "airlock/oci.h"
#include "airlock/pack.h"
#include "oci_int.h"
#include "pack_int.h"
#include "store_int.h"
#include "error_int.h"

/* Room budgeted per tar header (ustar header plus a possible pax header)
 * and for the end-of-archive blocks. */
#define HDR_BUDGET 1536
#define END_BUDGET 1024
#define MIN_SPLIT 4096

typedef struct pw_item {
	char *path;  /* store-relative, the entry name */
	char *src;   /* file to copy (blobs), or NULL */
	al_buf data; /* content (everything but blobs) */
	uint64_t size;
	char hex[AL_PACK_HEX_MAX]; /* sha512 for a sha512 blob, else sha256 */
	int kind;
	int algo; /* blobs: AL_DIGEST_SHA256 or AL_DIGEST_SHA512 */
} pw_item;

typedef struct strset {
	char **v;
	size_t n, cap;
	int sorted;
} strset;

typedef struct pw_ctx {
	al_store *store;
	const char *outdir;
	const al_pack_opts *opts;
	uint64_t volsize;
	char id[AL_PACK_ID_MAX + 1];
	char created[32];
	time_t mtime;
	/* current volume */
	struct archive *a;
	int fd;
	unsigned volno;
	uint64_t used;
	uint64_t
	    unflushed; /* volume bytes written since the last write-back hint */
	unsigned entries_in_vol;
	char *tmp_path;
	char *final_path;
	json_t *volumes;
	json_t *entries;
	uint8_t *chunk;
	al_hasher *hasher;
	/* progress */
	al_progress_info pi;
	uint64_t start_ms, last_ms;
	/* docs/security.md "Marks of untrusted imports": what an untrusted
	 * import wrote (al_store_untrusted_list), left out */
	al_store_untrusted *marks;
	size_t nmarks;
	uint64_t untrusted; /* signatures, tags and records left out */
} pw_ctx;

static int set_add(strset *s, const char *str)
{
	if (s->n == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 256;
		char **g = realloc(s->v, nc * sizeof(*g));
		if (g == NULL)
			return al_error_oom();
		s->v = g;
		s->cap = nc;
	}
	if ((s->v[s->n] = al_strdup(str)) == NULL)
		return al_error_oom();
	s->n++;
	s->sorted = 0;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int set_has(strset *s, const char *str)
{
	if (s->n == 0)
		return 0;
	if (!s->sorted) {
		qsort(s->v, s->n, sizeof(*s->v), cmp_str);
		s->sorted = 1;
	}
	return bsearch(&str, s->v, s->n, sizeof(*s->v), cmp_str) != NULL;
}

static void set_free(strset *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* "path sha256hex" keys identify signature files. */
static int sig_key(char *out, size_t len, const char *path, const char *hex)
{
	int n = snprintf(out, len, "%s %s", path, hex);

	if (n < 0 || (size_t)n >= len)
		return al_error_set(AL_ELIMIT, "signature path '%s' too long",
		                    path);
	return 0;
}

/* The key of a blob in the holdings sets: "<hex>" for sha256 (what pack
 * records always held), "sha512:<hex>" for sha512. */
static int blob_key(char *out, size_t len, int algo, const char *hex)
{
	int n = algo == AL_DIGEST_SHA512 ? snprintf(out, len, "sha512:%s", hex)
	                                 : snprintf(out, len, "%s", hex);

	if (n < 0 || (size_t)n >= len)
		return al_error_set(AL_ELIMIT, "digest '%s' too long", hex);
	return 0;
}

/*
 * Read the far side's holdings from a {"blobs":[...],"signatures":[...]}
 * object: blobs as "sha256:<hex>" / "sha512:<hex>" (inventory) or "<hex>"
 * (pack record, sha256).
 */
static int load_have(json_t *root, const char *what, strset *blobs,
                     strset *sigs)
{
	json_t *arr, *v;
	size_t i;
	int rc;

	arr = json_object_get(root, "blobs");
	if (!json_is_array(arr))
		return al_error_set(AL_EPARSE, "%s: \"blobs\" is not an array",
		                    what);
	json_array_foreach(arr, i, v)
	{
		const char *s = json_string_value(v);
		if (s != NULL && al_str_startswith(s, "sha256:"))
			s += 7;
		if (s == NULL || (!al_pack__is_hex64(s) &&
		                  !(al_str_startswith(s, "sha512:") &&
		                    al_pack__is_hex(s + 7, 128))))
			return al_error_set(AL_EPARSE,
			                    "%s: blobs[%zu] is not a sha256 or "
			                    "sha512 digest",
			                    what, i);
		if ((rc = set_add(blobs, s)) < 0)
			return rc;
	}
	arr = json_object_get(root, "signatures");
	if (arr == NULL)
		return 0;
	if (!json_is_array(arr))
		return al_error_set(AL_EPARSE,
		                    "%s: \"signatures\" is not an array", what);
	json_array_foreach(arr, i, v)
	{
		const char *p = al_json_str(v, "path"),
		           *h = al_json_str(v, "sha256");
		char key[512];
		if (p == NULL || h == NULL ||
		    al_pack__classify(p) != AL_PK_SIG || !al_pack__is_hex64(h))
			return al_error_set(
			    AL_EPARSE,
			    "%s: signatures[%zu] is not {\"path\",\"sha256\"}",
			    what, i);
		if ((rc = sig_key(key, sizeof(key), p, h)) < 0 ||
		    (rc = set_add(sigs, key)) < 0)
			return rc;
	}
	return 0;
}

static int make_id(char *out, size_t len)
{
	unsigned char r[4];
	char ts[32];
	int n;

	if (RAND_bytes(r, sizeof(r)) != 1)
		return al_error_openssl(AL_EIO, "no randomness for a pack id");
	al_pack__timestamp(ts, sizeof(ts));
	/* 2026-12-02T14:00:00Z -> 20261202T140000Z */
	n = snprintf(out, len, "%.4s%.2s%.2sT%.2s%.2s%.2sZ-%02x%02x%02x%02x",
	             ts, ts + 5, ts + 8, ts + 11, ts + 14, ts + 17, r[0], r[1],
	             r[2], r[3]);
	if (n < 0 || (size_t)n >= len)
		return al_error_set(AL_ELIMIT, "pack id too long");
	return 0;
}

static void items_free(pw_item *items, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(items[i].path);
		free(items[i].src);
		al_buf_free(&items[i].data);
	}
	free(items);
}

static int items_push(pw_item **items, size_t *n, size_t *cap, pw_item **out)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 256;
		pw_item *g = realloc(*items, nc * sizeof(*g));
		if (g == NULL)
			return al_error_oom();
		*items = g;
		*cap = nc;
	}
	*out = &(*items)[(*n)++];
	memset(*out, 0, sizeof(**out));
	return 0;
}

/* A small file of the store, read whole and hashed. */
static int add_small(pw_item **items, size_t *n, size_t *cap, const char *root,
                     const char *rel, int kind, size_t max)
{
	char *path = al_path_join(root, rel);
	pw_item *it = NULL;
	int rc;

	if (path == NULL)
		return al_error_oom();
	if ((rc = items_push(items, n, cap, &it)) < 0)
		goto out;
	al_buf_init(&it->data, max);
	it->kind = kind;
	if ((it->path = al_strdup(rel)) == NULL) {
		rc = al_error_oom();
		goto out;
	}
	if ((rc = al_fs_read_file(path, &it->data)) < 0)
		goto out;
	it->size = it->data.len;
	rc = al_pack__sha256_hex(it->data.ptr != NULL ? it->data.ptr
	                                              : (const uint8_t *)"",
	                         it->data.len, it->hex);
out:
	free(path);
	return rc;
}

/* A store file that is not a blob, or a blob directory pack cannot carry:
 * refused rather than silently left behind. */
static int not_a_blob(const char *path, const char *why)
{
	return al_error_set(AL_EVERIFY,
	                    "'%s' %s: refusing to pack a store whose blobs "
	                    "cannot all be carried (run 'airlock check "
	                    "--gc', or remove it)",
	                    path, why);
}

/* Every blob of one algorithm directory (blobs/sha256 or blobs/sha512). */
static int gather_algo(const char *root, int algo, strset *hblobs,
                       pw_item **items, size_t *n, size_t *cap,
                       uint64_t *skipped, uint64_t *total)
{
	const char *alg = al_digest_algo_name((al_digest_algo)algo);
	size_t hl = algo == AL_DIGEST_SHA512 ? 128 : 64, i, nnames = 0;
	char **names = NULL, *dir, key[AL_DIGEST_STRMAX + 8];
	pw_item *it = NULL;
	int rc = 0;

	if ((dir = al_sprintf("%s/blobs/%s", root, alg)) == NULL)
		return al_error_oom();
	if ((rc = al_pack__list_dir(dir, &names, &nnames)) < 0)
		goto out;
	for (i = 0; i < nnames; i++) {
		struct stat st;
		char *p = al_path_join(dir, names[i]);
		if (p == NULL) {
			rc = al_error_oom();
			goto out;
		}
		if (!al_pack__is_hex(names[i], hl)) {
			rc = not_a_blob(p, "is not named by its digest");
			free(p);
			goto out;
		}
		if (lstat(p, &st) != 0 || !S_ISREG(st.st_mode)) {
			rc = not_a_blob(p, "is not a regular file");
			free(p);
			goto out;
		}
		if ((rc = blob_key(key, sizeof(key), algo, names[i])) < 0) {
			free(p);
			goto out;
		}
		if (set_has(hblobs, key)) {
			free(p);
			(*skipped)++;
			continue;
		}
		if ((rc = items_push(items, n, cap, &it)) < 0) {
			free(p);
			goto out;
		}
		it->src = p;
		it->kind = AL_PK_BLOB;
		it->algo = algo;
		it->size = (uint64_t)st.st_size;
		memcpy(it->hex, names[i], hl + 1);
		if ((it->path = al_sprintf("blobs/%s/%s", alg, names[i])) ==
		    NULL) {
			rc = al_error_oom();
			goto out;
		}
		*total += it->size;
	}
out:
	al_pack__free_list(names, nnames);
	free(dir);
	return rc;
}

/*
 * Every blob the store holds: blobs/sha256/ and blobs/sha512/ (the digest
 * algorithms of the OCI image spec that al_digest verifies). blobs/.tmp and
 * blobs/.partial are the store's own temporary directories; anything else under
 * blobs/ is refused, so the count of files left out is always the truth.
 */
static int gather_blobs(const char *root, strset *hblobs, pw_item **items,
                        size_t *n, size_t *cap, uint64_t *skipped,
                        uint64_t *total)
{
	char **names = NULL, *dir, *p = NULL;
	size_t nnames = 0, i;
	int rc;

	if ((dir = al_path_join(root, "blobs")) == NULL)
		return al_error_oom();
	if ((rc = al_pack__list_dir(dir, &names, &nnames)) < 0)
		goto out;
	for (i = 0; i < nnames; i++) {
		struct stat st;
		int algo = strcmp(names[i], "sha256") == 0   ? AL_DIGEST_SHA256
		           : strcmp(names[i], "sha512") == 0 ? AL_DIGEST_SHA512
		                                             : 0;
		/* blobs/.partial: interrupted downloads, not blobs */
		if (strcmp(names[i], ".tmp") == 0 ||
		    strcmp(names[i], ".partial") == 0)
			continue;
		free(p);
		if ((p = al_path_join(dir, names[i])) == NULL) {
			rc = al_error_oom();
			goto out;
		}
		if (algo == 0) {
			rc =
			    not_a_blob(p, "is not a blob directory of a "
			                  "supported digest algorithm (sha256, "
			                  "sha512)");
			goto out;
		}
		if (lstat(p, &st) != 0 || !S_ISDIR(st.st_mode)) {
			rc = not_a_blob(p, "is not a directory");
			goto out;
		}
		if ((rc = gather_algo(root, algo, hblobs, items, n, cap,
		                      skipped, total)) < 0)
			goto out;
	}
out:
	al_pack__free_list(names, nnames);
	free(dir);
	free(p);
	return rc;
}

/*
 * The store's metadata must parse before it is carried: a truncated or
 * ill-typed file would otherwise travel and be refused (or worse, merged)
 * on the far side. Checks the exact bytes that will be packed.
 */
static int check_metadata(const char *root, const pw_item *it)
{
	json_t *v = NULL, *arr, *e;
	char *path = al_path_join(root, it->path);
	size_t i;
	int rc = 0;

	if (path == NULL)
		return al_error_oom();
	if ((rc = al_json_parse(
	         &v, it->data.ptr != NULL ? it->data.ptr : (const uint8_t *)"",
	         it->data.len, path)) < 0) {
		rc = al_error_wrap(AL_EVERIFY,
		                   "store metadata '%s' is damaged; not packed "
		                   "(run 'airlock check')",
		                   path);
		goto out;
	}
	arr = json_object_get(v, it->kind == AL_PK_INDEX ? "manifests"
	                                                 : "releases");
	if (!json_is_object(v) || !json_is_array(arr)) {
		rc = al_error_set(
		    AL_EVERIFY,
		    "store metadata '%s' is damaged: expected an "
		    "object with a \"%s\" array; not packed",
		    path, it->kind == AL_PK_INDEX ? "manifests" : "releases");
		goto out;
	}
	json_array_foreach(arr, i, e)
	{
		if (it->kind == AL_PK_INDEX) {
			al_descriptor d;
			if ((rc = al_descriptor_from_json(&d, e, 1, path)) <
			    0) {
				rc = al_error_wrap(
				    AL_EVERIFY,
				    "store metadata '%s' is damaged: "
				    "manifests[%zu]",
				    path, i);
				goto out;
			}
			al_descriptor_clear(&d);
		} else if (!json_is_object(e)) {
			rc = al_error_set(AL_EVERIFY,
			                  "store metadata '%s' is damaged: "
			                  "releases[%zu] is not an object; not "
			                  "packed",
			                  path, i);
			goto out;
		}
	}
out:
	json_decref(v);
	free(path);
	return rc;
}

/* 1 when the signature item it (its release in its path, the SHA-256
 * of its bytes) is marked untrusted. */
static int sig_marked(const pw_ctx *c, const pw_item *it)
{
	char ds[AL_DIGEST_STRMAX];
	size_t i;

	/* "signatures/sha256=<64 hex>/...", checked by al_pack__classify */
	snprintf(ds, sizeof(ds), "sha256:%.64s", it->path + 18);
	for (i = 0; i < c->nmarks; i++) {
		char ms[AL_DIGEST_STRMAX];
		if (c->marks[i].kind != AL_STORE_UNTRUSTED_SIGNATURE)
			continue;
		al_digest_str(&c->marks[i].digest, ms);
		if (strcmp(ms, ds) == 0 &&
		    strcmp(c->marks[i].sha256, it->hex) == 0)
			return 1;
	}
	return 0;
}

/* 1 when the entry e of a list marked as kind is what an untrusted import
 * wrote: a name of index.json ("manifests") it set (TAG), a release
 * record of releases.json ("releases") or a catalog or chart record
 * ("catalogs", "charts") it wrote, by content. */
static int entry_marked(const pw_ctx *c, int kind, const json_t *e)
{
	const char *name = kind == AL_STORE_UNTRUSTED_TAG
	                       ? al_json_str(json_object_get(e, "annotations"),
	                                     AL_ANNOT_REF_NAME)
	                       : al_json_str(e, "name");
	const char *d = al_json_str(e, "digest");
	char ds[AL_DIGEST_STRMAX], hex[65];
	size_t i;

	/* a name by its name and digest, a release record by its release,
	 * a catalog or chart record by its name; then by content */
	if ((kind != AL_STORE_UNTRUSTED_RELEASE && name == NULL) ||
	    ((kind == AL_STORE_UNTRUSTED_TAG ||
	      kind == AL_STORE_UNTRUSTED_RELEASE) &&
	     d == NULL))
		return 0;
	if (kind != AL_STORE_UNTRUSTED_TAG &&
	    al_store__record_sha256(e, hex) < 0) {
		al_error_clear();
		return 0;
	}
	for (i = 0; i < c->nmarks; i++) {
		const al_store_untrusted *m = &c->marks[i];
		if (m->kind != kind)
			continue;
		if (kind == AL_STORE_UNTRUSTED_TAG ||
		    kind == AL_STORE_UNTRUSTED_RELEASE) {
			if (strcmp(al_digest_str(&m->digest, ds), d) != 0)
				continue;
		} else if (strcmp(m->name, name) != 0)
			continue;
		if (kind == AL_STORE_UNTRUSTED_TAG
		        ? strcmp(m->name, name) == 0
		        : strcmp(m->sha256, hex) == 0)
			return 1;
	}
	return 0;
}

/* Drop from v's list key the entries marked as kind; how many. */
static size_t drop_list(const pw_ctx *c, json_t *v, const char *key, int kind)
{
	json_t *arr = json_object_get(v, key);
	size_t i, before = json_array_size(arr);

	for (i = json_array_size(arr); i-- > 0;)
		if (entry_marked(c, kind, json_array_get(arr, i)))
			json_array_remove(arr, i);
	return before - json_array_size(arr);
}

/*
 * index.json and releases.json as packed: without the names, and the
 * release, catalog and chart records, an untrusted import wrote (their
 * bytes rewritten only when one is left out, then hashed again). A signed
 * pack vouches for what it carries; it must not vouch for what no key
 * verified.
 */
static int drop_marked(pw_ctx *c, pw_item *it)
{
	json_t *v = NULL;
	char *text = NULL;
	size_t dropped;
	int rc = 0;

	if (c->nmarks == 0)
		return 0;
	if ((rc = al_json_parse(
	         &v, it->data.ptr != NULL ? it->data.ptr : (const uint8_t *)"",
	         it->data.len, it->path)) < 0)
		return rc; /* check_metadata names the damage */
	if (it->kind == AL_PK_INDEX)
		dropped = drop_list(c, v, "manifests", AL_STORE_UNTRUSTED_TAG);
	else
		dropped =
		    drop_list(c, v, "releases", AL_STORE_UNTRUSTED_RELEASE) +
		    drop_list(c, v, "catalogs", AL_STORE_UNTRUSTED_CATALOG) +
		    drop_list(c, v, "charts", AL_STORE_UNTRUSTED_CHART) +
		    drop_list(c, v, "sigstore", AL_STORE_UNTRUSTED_SIGSTORE);
	if (dropped == 0)
		goto out;
	c->untrusted += dropped;
	if ((text = al_json_dump(v, 1)) == NULL) {
		rc = al_error_oom();
		goto out;
	}
	al_buf_reset(&it->data);
	if ((rc = al_buf_append(&it->data, text, strlen(text))) < 0)
		goto out;
	it->size = it->data.len;
	rc = al_pack__sha256_hex(it->data.ptr, it->data.len, it->hex);
out:
	free(text);
	json_decref(v);
	return rc;
}

typedef struct gather_ctx {
	pw_ctx *c;
	const char *root;
	strset *hsigs;
	pw_item **items;
	size_t *n, *cap;
	uint64_t *skipped, *total;
} gather_ctx;

/* One signature file, unless the far side holds it. */
static int gather_sig(void *ud, const char *rel, const char *path)
{
	gather_ctx *g = ud;
	char key[512];
	pw_item *it;
	int rc;

	(void)path;
	if ((rc = add_small(g->items, g->n, g->cap, g->root, rel, AL_PK_SIG,
	                    AL_PACK_SIGFILE_MAX)) < 0)
		return rc;
	it = &(*g->items)[*g->n - 1];
	if ((rc = sig_key(key, sizeof(key), it->path, it->hex)) < 0)
		return rc;
	if (set_has(g->hsigs, key) || sig_marked(g->c, it)) {
		if (!set_has(g->hsigs, key))
			g->c->untrusted++;
		else
			(*g->skipped)++;
		(*g->n)--;
		free(it->path);
		al_buf_free(&it->data);
		return 0;
	}
	*g->total += it->size;
	return 0;
}

/* Everything the pack may carry, minus what the far side holds. */
static int gather(pw_ctx *c, strset *hblobs, strset *hsigs, pw_item **out,
                  size_t *nout, uint64_t *skipped, uint64_t *total)
{
	const char *root = al_store_path(c->store);
	pw_item *items = NULL;
	size_t n = 0, cap = 0;
	gather_ctx g;
	int rc = 0;

	*skipped = 0;
	*total = 0;
	if ((rc = gather_blobs(root, hblobs, &items, &n, &cap, skipped,
	                       total)) < 0)
		goto out;

	g.c = c;
	g.root = root;
	g.hsigs = hsigs;
	g.items = &items;
	g.n = &n;
	g.cap = &cap;
	g.skipped = skipped;
	g.total = total;
	if ((rc = al_pack__walk_signatures(root, gather_sig, &g)) < 0)
		goto out;

	{
		char *rp = al_path_join(root, "airlock/releases.json");
		int ex;
		if (rp == NULL)
			goto oom;
		ex = al_fs_exists(rp);
		free(rp);
		if (ex < 0) {
			rc = ex;
			goto out;
		}
		if (ex == 1) {
			if ((rc = add_small(&items, &n, &cap, root,
			                    "airlock/releases.json",
			                    AL_PK_RELEASES, AL_PACK_META_MAX)) <
			        0 ||
			    (rc = check_metadata(root, &items[n - 1])) < 0 ||
			    (rc = drop_marked(c, &items[n - 1])) < 0)
				goto out;
			*total += items[n - 1].size;
		}
	}
	/* index.json last: the far side applies it last anyway */
	if ((rc = add_small(&items, &n, &cap, root, "index.json", AL_PK_INDEX,
	                    AL_PACK_META_MAX)) < 0 ||
	    (rc = check_metadata(root, &items[n - 1])) < 0 ||
	    (rc = drop_marked(c, &items[n - 1])) < 0)
		goto out;
	*total += items[n - 1].size;
	*out = items;
	*nout = n;
	items = NULL;
	n = 0;
	goto out;
oom:
	rc = al_error_oom();
out:
	items_free(items, n);
	return rc;
}

static int arch_fail(pw_ctx *c, const char *what)
{
	int err = archive_errno(c->a);

	/* libarchive's fd writer says only "Write error": keep the reason
	 * (ENOSPC, EIO, ...) that it saved in archive_errno(). */
	if (err > 0)
		return al_error_errno(err, "cannot write volume '%s' (%s): %s",
		                      c->final_path, what,
		                      archive_error_string(c->a) != NULL
		                          ? archive_error_string(c->a)
		                          : "error");
	return al_error_set(
	    AL_EIO, "cannot write volume '%s' (%s): %s", c->final_path, what,
	    archive_error_string(c->a) != NULL ? archive_error_string(c->a)
	                                       : "unknown error");
}

static int write_header(pw_ctx *c, const char *name, uint64_t size)
{
	struct archive_entry *e = archive_entry_new();
	int rc = 0;

	if (e == NULL)
		return al_error_oom();
	archive_entry_set_pathname(e, name);
	archive_entry_set_size(e, (la_int64_t)size);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	archive_entry_set_mtime(e, c->mtime, 0);
	if (archive_write_header(c->a, e) != ARCHIVE_OK)
		rc = arch_fail(c, name);
	archive_entry_free(e);
	return rc;
}

static int write_all(pw_ctx *c, const void *p, size_t n, const char *name)
{
	const uint8_t *b = p;

	while (n > 0) {
		la_ssize_t w = archive_write_data(c->a, b, n);
		if (w <= 0)
			return arch_fail(c, name);
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

static void progress(pw_ctx *c, int final)
{
	uint64_t now;

	if (c->opts->progress == NULL)
		return;
	now = al_clock_now_ms();
	if (!final && now - c->last_ms < 200)
		return;
	c->last_ms = now;
	c->pi.elapsed_ms = now - c->start_ms;
	c->opts->progress(&c->pi, c->opts->progress_ud);
}

static int open_volume(pw_ctx *c)
{
	char name[AL_PACK_ID_MAX + 32], label[256];
	int n, rc = 0;

	c->volno++;
	if (c->volno > 9999)
		return al_error_set(
		    AL_ELIMIT, "more than 9999 volumes: raise --volume-size");
	n = snprintf(name, sizeof(name), "airlock-%s-%04u.tar", c->id,
	             c->volno);
	if (n < 0 || (size_t)n >= sizeof(name))
		return al_error_set(AL_ELIMIT, "volume name too long");
	free(c->final_path);
	free(c->tmp_path);
	c->final_path = al_path_join(c->outdir, name);
	c->tmp_path = al_sprintf("%s/.%s.tmp", c->outdir, name);
	if (c->final_path == NULL || c->tmp_path == NULL)
		return al_error_oom();
	c->fd =
	    open(c->tmp_path,
	         O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (c->fd < 0)
		return al_error_errno(errno, "cannot create '%s'", c->tmp_path);
	c->a = archive_write_new();
	if (c->a == NULL)
		return al_error_oom();
	/* No blocking: data goes straight to the file, no padding past the
	 * end-of-archive blocks, so the size budget is exact. */
	if (archive_write_set_format_pax_restricted(c->a) != ARCHIVE_OK ||
	    archive_write_set_bytes_per_block(c->a, 0) != ARCHIVE_OK ||
	    archive_write_open_fd(c->a, c->fd) != ARCHIVE_OK)
		return arch_fail(c, "open");
	c->used = 0;
	c->entries_in_vol = 0;
	n = snprintf(label, sizeof(label), "{\"pack\":\"%s\",\"volume\":%u}\n",
	             c->id, c->volno);
	if (n < 0 || (size_t)n >= sizeof(label))
		return al_error_set(AL_ELIMIT, "volume label too long");
	if ((rc = write_header(c, AL_PACK_LABEL, (uint64_t)n)) < 0 ||
	    (rc = write_all(c, label, (size_t)n, AL_PACK_LABEL)) < 0)
		return rc;
	c->used = HDR_BUDGET + 512;
	return 0;
}

static int close_volume(pw_ctx *c)
{
	struct stat st;
	const char *base;
	json_t *v;
	int rc = 0;

	if (c->a == NULL)
		return 0;
	if (archive_write_close(c->a) != ARCHIVE_OK) {
		rc = arch_fail(c, "close");
		goto out;
	}
	if (fsync(c->fd) != 0 || fstat(c->fd, &st) != 0) {
		rc = al_error_errno(errno, "cannot sync '%s'", c->tmp_path);
		goto out;
	}
	if ((uint64_t)st.st_size > c->volsize) {
		rc = al_error_set(AL_ELIMIT,
		                  "volume '%s' came out at %lld bytes, over "
		                  "the volume size %llu",
		                  c->final_path, (long long)st.st_size,
		                  (unsigned long long)c->volsize);
		goto out;
	}
	if (close(c->fd) != 0) {
		c->fd = -1;
		rc = al_error_errno(errno, "cannot close '%s'", c->tmp_path);
		goto out;
	}
	c->fd = -1;
	if (rename(c->tmp_path, c->final_path) != 0) {
		rc = al_error_errno(errno, "cannot rename '%s'", c->tmp_path);
		goto out;
	}
	free(c->tmp_path);
	c->tmp_path = NULL;
	base = strrchr(c->final_path, '/');
	base = base != NULL ? base + 1 : c->final_path;
	v = json_pack("{s:s, s:I, s:I}", "name", base, "number",
	              (json_int_t)c->volno, "size", (json_int_t)st.st_size);
	if (v == NULL || json_array_append_new(c->volumes, v) < 0)
		rc = al_error_oom();
out:
	archive_write_free(c->a);
	c->a = NULL;
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	return rc;
}

static uint64_t round512(uint64_t n)
{
	return (n + 511) / 512 * 512;
}

/* Bytes of payload the current volume still takes in one entry. */
static uint64_t room(const pw_ctx *c)
{
	if (c->used + END_BUDGET + HDR_BUDGET >= c->volsize)
		return 0;
	return (c->volsize - c->used - END_BUDGET - HDR_BUDGET) / 512 * 512;
}

/* Copy len bytes of fd into the current volume, hashing when h != NULL. */
static int copy_range(pw_ctx *c, int fd, const pw_item *it, uint64_t len,
                      al_hasher *h)
{
	int rc;

	while (len > 0) {
		size_t want = len < AL_PACK_CHUNK ? (size_t)len : AL_PACK_CHUNK;
		ssize_t r = read(fd, c->chunk, want);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return al_error_errno(errno, "cannot read '%s'",
			                      it->src);
		if (r == 0)
			return al_error_set(
			    AL_EIO, "'%s' shrank while it was packed", it->src);
		if (h != NULL &&
		    (rc = al_hasher_update(h, c->chunk, (size_t)r)) < 0)
			return rc;
		if ((rc = write_all(c, c->chunk, (size_t)r, it->path)) < 0)
			return rc;
		/* Start write-back as we go: the fsync when the volume closes
		 * then waits for the tail only, not the whole volume. */
		c->unflushed += (uint64_t)r;
		if (c->unflushed >= AL_WRITEBACK_CHUNK) {
			al_fd_start_writeback(c->fd, 0, 0);
			c->unflushed = 0;
		}
		len -= (uint64_t)r;
		c->pi.bytes_done += (uint64_t)r;
		progress(c, 0);
		if (al_cancel_is_set(c->opts->cancel))
			return al_error_set(AL_ECANCELED, "pack cancelled");
	}
	return 0;
}

static int write_item(pw_ctx *c, const pw_item *it)
{
	json_t *entry = NULL, *parts = NULL;
	uint64_t off = 0, left = it->size;
	unsigned partno = 0, first_vol = 0;
	int fd = -1, rc = 0, split = 0;

	if (it->src != NULL &&
	    (rc = al_fs_open_regular(&fd, it->src, NULL)) < 0)
		return rc;
	for (;;) {
		uint64_t avail = room(c);
		uint64_t need = round512(left);
		uint64_t take;
		char name[512];

		if (need <= avail) {
			take = left;
		} else if (it->kind == AL_PK_BLOB && avail >= MIN_SPLIT) {
			split = 1;
			take = avail;
		} else if (c->entries_in_vol == 0) {
			rc =
			    al_error_set(AL_ELIMIT,
			                 "'%s' (%llu bytes) does not fit in a "
			                 "volume of %llu bytes",
			                 it->path, (unsigned long long)it->size,
			                 (unsigned long long)c->volsize);
			goto out;
		} else {
			if ((rc = close_volume(c)) < 0 ||
			    (rc = open_volume(c)) < 0)
				goto out;
			continue;
		}
		if (first_vol == 0)
			first_vol = c->volno;
		if (split) {
			al_digest d;
			char hex[AL_DIGEST_STRMAX];
			json_t *p;
			partno++;
			if (snprintf(name, sizeof(name), "%s.part-%04u",
			             it->path, partno) >= (int)sizeof(name)) {
				rc = al_error_set(AL_ELIMIT,
				                  "entry name too long");
				goto out;
			}
			if ((rc = write_header(c, name, take)) < 0 ||
			    (rc = copy_range(c, fd, it, take, c->hasher)) < 0 ||
			    (rc = al_hasher_final(c->hasher, &d)) < 0)
				goto out;
			if (parts == NULL && (parts = json_array()) == NULL)
				goto oom;
			p = json_pack("{s:I, s:I, s:I, s:s}", "volume",
			              (json_int_t)c->volno, "offset",
			              (json_int_t)off, "size", (json_int_t)take,
			              "sha256", al_digest_hex(&d, hex));
			if (p == NULL || json_array_append_new(parts, p) < 0)
				goto oom;
		} else {
			if ((rc = write_header(c, it->path, take)) < 0)
				goto out;
			if (fd >= 0)
				rc = copy_range(c, fd, it, take, NULL);
			else if (take > 0)
				rc = write_all(c, it->data.ptr, (size_t)take,
				               it->path);
			if (rc < 0)
				goto out;
			if (fd < 0)
				c->pi.bytes_done += take;
		}
		c->used += HDR_BUDGET + round512(take);
		c->entries_in_vol++;
		off += take;
		left -= take;
		if (left == 0)
			break;
		if ((rc = close_volume(c)) < 0 || (rc = open_volume(c)) < 0)
			goto out;
	}
	/* a blob carries the digest its name gives (sha256 or sha512) */
	entry = json_pack("{s:s, s:I, s:s, s:I}", "path", it->path, "size",
	                  (json_int_t)it->size,
	                  it->algo == AL_DIGEST_SHA512 ? "sha512" : "sha256",
	                  it->hex, "volume", (json_int_t)first_vol);
	if (entry == NULL)
		goto oom;
	if (parts != NULL && json_object_set(entry, "parts", parts) < 0)
		goto oom;
	if (json_array_append(c->entries, entry) < 0)
		goto oom;
	c->pi.items_done++;
	goto out;
oom:
	rc = al_error_oom();
out:
	json_decref(entry);
	json_decref(parts);
	if (fd >= 0)
		close(fd);
	return rc;
}

static int push_owned(char ***v, size_t *n, char *s)
{
	char **g;

	if (s == NULL || (g = realloc(*v, (*n + 1) * sizeof(*g))) == NULL) {
		free(s);
		return al_error_oom();
	}
	*v = g;
	(*v)[(*n)++] = s;
	return 0;
}

static int push_sig(al_store_pack *r, char *path, char *sha)
{
	size_t n = r->nsignatures;
	char **g;

	if (path == NULL || sha == NULL ||
	    (g = realloc(r->signature_sha256, (n + 1) * sizeof(*g))) == NULL) {
		free(path);
		free(sha);
		return al_error_oom();
	}
	r->signature_sha256 = g;
	g[n] = sha;
	if (push_owned(&r->signatures, &r->nsignatures, path) < 0) {
		free(sha);
		g[n] = NULL;
		return al_error_oom();
	}
	return 0;
}

/* The pack record for --since (the store writes it): what the far side
 * holds once it imported this pack. */
static int make_record(al_store_pack *r, pw_ctx *c, const pw_item *items,
                       size_t n, strset *hblobs, strset *hsigs,
                       const char *base, uint64_t seq)
{
	size_t i;
	int rc;

	memset(r, 0, sizeof(*r));
	if ((r->id = al_strdup(c->id)) == NULL ||
	    (r->created = al_strdup(c->created)) == NULL ||
	    (base != NULL && (r->base = al_strdup(base)) == NULL))
		return al_error_oom();
	r->sequence = seq;
	r->volumes = c->volno;
	for (i = 0; i < hblobs->n; i++)
		if ((rc = push_owned(&r->blobs, &r->nblobs,
		                     al_strdup(hblobs->v[i]))) < 0)
			return rc;
	for (i = 0; i < hsigs->n; i++) {
		char *sp = strchr(hsigs->v[i], ' ');
		if (sp == NULL)
			continue;
		if ((rc = push_sig(
		         r, al_strndup(hsigs->v[i], (size_t)(sp - hsigs->v[i])),
		         al_strdup(sp + 1))) < 0)
			return rc;
	}
	for (i = 0; i < n; i++) {
		char key[AL_DIGEST_STRMAX + 8];
		if (items[i].kind == AL_PK_BLOB) {
			if (blob_key(key, sizeof(key), items[i].algo,
			             items[i].hex) != 0 ||
			    (rc = push_owned(&r->blobs, &r->nblobs,
			                     al_strdup(key))) < 0)
				return al_error_oom();
		} else if (items[i].kind == AL_PK_SIG) {
			if ((rc = push_sig(r, al_strdup(items[i].path),
			                   al_strdup(items[i].hex))) < 0)
				return rc;
		}
	}
	return 0;
}

/*
 * The pack's sequence: its creation time in milliseconds since 1970, or one
 * more than the store's previous pack's when the clock went back, so that
 * it grows with every pack a store writes. Reserved (written to
 * STORE/airlock/pack-sequence) before any volume is written: a failed pack
 * leaves a gap, never a reuse.
 */
static int reserve_sequence(al_store *s, uint64_t *out)
{
	al_buf b = AL_BUF_INIT(64);
	char *path = NULL, *dir = NULL, text[32];
	uint64_t last = 0, seq;
	int rc, n;

	path = al_sprintf("%s/airlock/pack-sequence", al_store_path(s));
	dir = al_sprintf("%s/airlock", al_store_path(s));
	if (path == NULL || dir == NULL) {
		rc = al_error_oom();
		goto out;
	}
	rc = al_fs_read_file(path, &b);
	if (rc == AL_ENOTFOUND) {
		al_error_clear();
		rc = 0;
	} else if (rc == 0) {
		char *end = NULL;
		unsigned long long v;
		size_t len = b.len;
		if (len > 0 && b.ptr[len - 1] == '\n')
			len--;
		if (len == 0 || len >= sizeof(text)) {
			rc = al_error_set(AL_EVERIFY,
			                  "store metadata '%s' is damaged: not "
			                  "a sequence number",
			                  path);
			goto out;
		}
		memcpy(text, b.ptr, len);
		text[len] = '\0';
		errno = 0;
		v = strtoull(text, &end, 10);
		if (errno != 0 || end != text + len || text[0] < '0' ||
		    text[0] > '9' || v >= (unsigned long long)INT64_MAX) {
			rc =
			    al_error_set(AL_EVERIFY,
			                 "store metadata '%s' is damaged: '%s' "
			                 "is not a sequence number",
			                 path, text);
			goto out;
		}
		last = v;
	} else {
		if (rc == AL_ELIMIT)
			rc = al_error_wrap(
			    AL_EVERIFY, "store metadata '%s' is damaged", path);
		goto out;
	}
	seq = al_clock_wall_ms();
	if (seq <= last)
		seq = last + 1;
	n = snprintf(text, sizeof(text), "%llu\n", (unsigned long long)seq);
	if (n < 0 || (size_t)n >= sizeof(text)) {
		rc = al_error_set(AL_ELIMIT, "sequence too long");
		goto out;
	}
	if ((rc = al_fs_mkdir_p(dir, 0755)) < 0 ||
	    (rc = al_fs_write_atomic(path, text, (size_t)n)) < 0)
		goto out;
	*out = seq;
out:
	al_buf_free(&b);
	free(path);
	free(dir);
	return rc;
}

/* The volumes' size from the items (each entry's payload in 512-byte
 * blocks plus its headers, a label and end blocks per volume), logged
 * and checked against the free space of outdir (mirror_plan.h). */
static int pack_space(const pw_ctx *c, size_t nitems, uint64_t total)
{
	uint64_t per = c->volsize > HDR_BUDGET + END_BUDGET + 1024
	                   ? c->volsize - HDR_BUDGET - END_BUDGET - 1024
	                   : 1;
	uint64_t need = total + (uint64_t)nitems * (HDR_BUDGET + 512);
	uint64_t vols = need / per + 1;

	/* the manifest: about 256 bytes an entry and volume */
	need += vols * (HDR_BUDGET + 512 + END_BUDGET) +
	        ((uint64_t)nitems + vols) * 256 + 4096;
	al_log_info("pack: %zu entries, %llu payload bytes: about %llu "
	            "volumes of at most %llu bytes, %llu bytes in all",
	            nitems, (unsigned long long)total, (unsigned long long)vols,
	            (unsigned long long)c->volsize, (unsigned long long)need);
	if (c->opts->no_space_check)
		return 0;
	return al_space_check(c->outdir, need, "the pack");
}

static void remove_partial(const char *outdir, const char *id, unsigned nvol,
                           const char *spath)
{
	unsigned v;

	for (v = 1; v <= nvol; v++) {
		char *p = al_sprintf("%s/airlock-%s-%04u.tar", outdir, id, v);
		if (p != NULL)
			unlink(p);
		free(p);
	}
	if (spath != NULL)
		unlink(spath);
}

/* What one al_pack_write holds besides its context. */
typedef struct pw_run {
	strset hblobs, hsigs; /* what the far side holds */
	json_t *loaded;       /* the since record or the inventory */
	char *have_ref;       /* "sha256:<hex>" of the inventory, or NULL */
	const char *base;     /* the since pack, or NULL */
	pw_item *items;
	size_t nitems;
	uint64_t skipped, total, seq;
	char *mpath, *spath;
	int finished, sig_written;
} pw_run;

/* --since: the far side holds what the store's record of that pack
 * says. */
static int load_since(pw_ctx *c, pw_run *r)
{
	char *rpath;
	int rc;

	if (!al_pack_id_valid(c->opts->since))
		return al_error_set(AL_EINVAL, "'%s' is not a pack id",
		                    c->opts->since);
	if ((rpath = al_store_pack_record_path(c->store, c->opts->since)) ==
	    NULL)
		return al_error_oom();
	if ((rc = al_pack__load_store_json(&r->loaded, rpath,
	                                   AL_PACK_INVENTORY_MAX)) < 0) {
		if (rc == AL_ENOTFOUND)
			rc = al_error_set(
			    AL_ENOTFOUND,
			    "this store made no pack '%s' (no '%s')",
			    c->opts->since, rpath);
		goto out;
	}
	/* the store's own record: damaged, not a usage error */
	if ((rc = load_have(r->loaded, rpath, &r->hblobs, &r->hsigs)) < 0) {
		rc = al_error_wrap(AL_EVERIFY, "store metadata '%s' is damaged",
		                   rpath);
		goto out;
	}
	r->base = c->opts->since;
out:
	free(rpath);
	return rc;
}

/* --have: the far side holds what its inventory says; the manifest
 * names the inventory by its SHA-256. */
static int load_inventory(pw_ctx *c, pw_run *r)
{
	al_buf raw = AL_BUF_INIT(AL_PACK_INVENTORY_MAX);
	const char *path = c->opts->have_path;
	char hex[AL_DIGEST_STRMAX];
	al_digest d;
	int rc;

	if ((rc = al_fs_read_file(path, &raw)) < 0)
		goto out;
	if ((rc = al_json_parse(&r->loaded,
	                        raw.ptr != NULL ? raw.ptr : (const uint8_t *)"",
	                        raw.len, path)) < 0 ||
	    (rc = al_digest_bytes(
	         &d, AL_DIGEST_SHA256,
	         raw.ptr != NULL ? raw.ptr : (const uint8_t *)"", raw.len)) < 0)
		goto out;
	if (json_integer_value(
	        json_object_get(r->loaded, "airlockInventory")) != 1) {
		rc = al_error_set(AL_EPARSE, "'%s' is not an airlock inventory",
		                  path);
		goto out;
	}
	if ((rc = load_have(r->loaded, path, &r->hblobs, &r->hsigs)) < 0)
		goto out;
	if ((r->have_ref = al_sprintf("sha256:%s", al_digest_hex(&d, hex))) ==
	    NULL)
		rc = al_error_oom();
out:
	al_buf_free(&raw);
	return rc;
}

/* The manifest (naming every volume and entry) and, with sign_key, its
 * signature: the signature first, the manifest last (its presence says
 * the pack is complete). */
static int write_manifest(pw_ctx *c, pw_run *r)
{
	json_t *manifest;
	char *mtext = NULL;
	size_t mlen;
	int rc = 0;

	manifest = json_pack(
	    "{s:i, s:s, s:s, s:I, s:s, s:o, s:o, s:I, s:O, s:O}", "airlockPack",
	    1, "id", c->id, "created", c->created, "sequence",
	    (json_int_t)r->seq, "tool", "airlock " AL_VERSION_STRING, "base",
	    r->base != NULL ? json_string(r->base) : json_null(), "have",
	    r->have_ref != NULL ? json_string(r->have_ref) : json_null(),
	    "volumeSize", (json_int_t)c->volsize, "volumes", c->volumes,
	    "entries", c->entries);
	if (manifest == NULL || (mtext = al_json_dump(manifest, 1)) == NULL)
		goto oom;
	mlen = strlen(mtext);
	r->mpath = al_sprintf("%s/airlock-%s.json", c->outdir, c->id);
	r->spath = al_sprintf("%s/airlock-%s.json.sig", c->outdir, c->id);
	if (r->mpath == NULL || r->spath == NULL)
		goto oom;
	if (c->opts->sign_key != NULL) {
		uint8_t sig[AL_PACK_SIGLEN];
		if ((rc = al_pack__sign(c->opts->sign_key,
		                        (const uint8_t *)mtext, mlen, sig)) < 0)
			goto out;
		r->sig_written = 1;
		if ((rc = al_fs_write_atomic(r->spath, sig, sizeof(sig))) < 0)
			goto out;
	}
	if ((rc = al_fs_write_atomic(r->mpath, mtext, mlen)) < 0)
		goto out;
	r->finished = 1;
	goto out;
oom:
	rc = al_error_oom();
out:
	json_decref(manifest);
	free(mtext);
	return rc;
}

/* Every item into volumes: the space check first (docs/lifecycle.md:
 * refused before the first volume is written). */
static int write_volumes(pw_ctx *c, pw_run *r)
{
	size_t i;
	int rc;

	if ((rc = al_fs_mkdir_p(c->outdir, 0755)) < 0 ||
	    (rc = pack_space(c, r->nitems, r->total)) < 0)
		return rc;
	c->pi.bytes_total = r->total;
	c->pi.items_total = r->nitems;
	c->volumes = json_array();
	c->entries = json_array();
	c->chunk = malloc(AL_PACK_CHUNK);
	if (c->volumes == NULL || c->entries == NULL || c->chunk == NULL)
		return al_error_oom();
	if ((rc = al_hasher_new(&c->hasher, AL_DIGEST_SHA256)) < 0 ||
	    (rc = open_volume(c)) < 0)
		return rc;
	for (i = 0; i < r->nitems; i++)
		if ((rc = write_item(c, &r->items[i])) < 0)
			return rc;
	return close_volume(c);
}

/* The pack record for later --since deltas, progress and the result. */
static int record_pack(pw_ctx *c, pw_run *r, al_pack_result *res)
{
	al_store_pack record;
	int rc;

	if ((rc = make_record(&record, c, r->items, r->nitems, &r->hblobs,
	                      &r->hsigs, r->base, r->seq)) == 0)
		rc = al_store_pack_put(c->store, &record);
	al_store_pack_clear(&record);
	if (rc < 0)
		return rc;
	progress(c, 1);
	al_log_debug("pack %s: %llu volumes, %zu entries", c->id,
	             (unsigned long long)c->volno, r->nitems);
	if (res != NULL) {
		AL_RESULT_ZERO(res);
		memcpy(res->id, c->id, sizeof(res->id));
		res->volumes = c->volno;
		res->entries = r->nitems;
		res->bytes = r->total;
		res->skipped = r->skipped;
		res->elapsed_ms = al_clock_now_ms() - c->start_ms;
		res->untrusted = c->untrusted;
	}
	return 0;
}

static void ctx_release(pw_ctx *c, pw_run *r, int rc)
{
	if (c->a != NULL) {
		archive_write_free(c->a);
		c->a = NULL;
	}
	if (c->fd >= 0)
		close(c->fd);
	if (c->tmp_path != NULL)
		unlink(c->tmp_path);
	/* a pack that failed leaves no volume or signature of its own */
	if (rc < 0 && !r->finished && c->id[0] != '\0')
		remove_partial(c->outdir, c->id, c->volno,
		               r->sig_written ? r->spath : NULL);
	free(c->tmp_path);
	free(c->final_path);
	free(c->chunk);
	al_hasher_free(c->hasher);
	json_decref(c->volumes);
	json_decref(c->entries);
	al_store_untrusted_free(c->marks, c->nmarks);
	json_decref(r->loaded);
	items_free(r->items, r->nitems);
	set_free(&r->hblobs);
	set_free(&r->hsigs);
	free(r->mpath);
	free(r->spath);
	free(r->have_ref);
}

int al_pack_write(al_store *s, const char *outdir, const al_pack_opts *opts,
                  al_pack_result *res)
{
	static const al_pack_opts defaults = AL_PACK_OPTS_INIT;
	pw_ctx c;
	pw_run r;
	int rc = 0;

	if ((rc = AL_RESULT_VERSION_CHECK("al_pack_result", res, version,
	                                  AL_PACK_RESULT_VERSION)) < 0)
		return rc;
	if (opts != NULL &&
	    (rc = al_opts_version_check("al_pack_opts", opts->version,
	                                AL_PACK_OPTS_VERSION)) < 0)
		return rc;
	memset(&c, 0, sizeof(c));
	memset(&r, 0, sizeof(r));
	c.fd = -1;
	c.store = s;
	c.outdir = outdir;
	c.opts = opts != NULL ? opts : &defaults;
	c.volsize =
	    c.opts->volume_size ? c.opts->volume_size : AL_PACK_VOLUME_DEFAULT;
	c.start_ms = al_clock_now_ms();
	c.pi.phase = "pack";
	if (c.volsize < AL_PACK_VOLUME_MIN)
		return al_error_set(
		    AL_EINVAL,
		    "volume size %llu is below the minimum of %llu bytes",
		    (unsigned long long)c.volsize,
		    (unsigned long long)AL_PACK_VOLUME_MIN);
	if (c.opts->since != NULL && c.opts->have_path != NULL)
		return al_error_set(AL_EINVAL,
		                    "--since and --have exclude each other");
	if (c.opts->since != NULL)
		rc = load_since(&c, &r);
	else if (c.opts->have_path != NULL)
		rc = load_inventory(&c, &r);
	if (rc < 0 || (rc = make_id(c.id, sizeof(c.id))) < 0)
		goto out;
	al_pack__timestamp(c.created, sizeof(c.created));
	c.mtime = (time_t)(al_clock_wall_ms() / 1000);
	/* everything is read and checked before anything is written; what
	 * an untrusted import wrote is left out (docs/security.md) */
	if ((rc = al_store_untrusted_list(s, &c.marks, &c.nmarks)) < 0 ||
	    (rc = gather(&c, &r.hblobs, &r.hsigs, &r.items, &r.nitems,
	                 &r.skipped, &r.total)) < 0 ||
	    (rc = reserve_sequence(s, &r.seq)) < 0 ||
	    (rc = write_volumes(&c, &r)) < 0 ||
	    (rc = write_manifest(&c, &r)) < 0)
		goto out;
	rc = record_pack(&c, &r, res);
out:
	ctx_release(&c, &r, rc);
	return rc;
}
