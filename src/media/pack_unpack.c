/* pack_unpack.c: al_pack_unpack: verify a pack's manifest, stream its volumes
 * into the store entry by entry, update the index last. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "airlock/clock.h"
#include "airlock/digest.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "json_int.h"
#include "airlock/log.h"
#include "airlock/mirror_plan.h"
#include "airlock/oci.h"
#include "airlock/pack.h"
#include "airlock/store.h"
#include "oci_int.h"
#include "pack_int.h"
#include "store_int.h"
#include "error_int.h"

#define MAX_VOLUMES 9999
#define MAX_ENTRIES 1000000

typedef struct up_part {
	unsigned volume;
	uint64_t offset;
	uint64_t size;
	char hex[65];
	int done; /* staged (split blobs) */
} up_part;

typedef struct up_entry {
	char *path;
	int kind;
	int algo; /* blobs: AL_DIGEST_SHA256 or AL_DIGEST_SHA512 */
	uint64_t size;
	char hex[AL_PACK_HEX_MAX]; /* the blob's digest, else the SHA-256 */
	unsigned volume;
	up_part *parts; /* split blobs only */
	size_t nparts;
	int done;
} up_entry;

typedef struct up_slot {
	char *name; /* the tar entry name */
	size_t entry;
	size_t part; /* index into parts, or 0 for whole entries */
	unsigned volume;
	int seen;
} up_slot;

typedef struct up_vol {
	char *name;
	uint64_t size;
} up_vol;

#define COMMIT_QUEUE 16

typedef struct commit_job {
	al_blob_writer *w;
	up_entry *e;
	const char *volname;
	char *name;
} commit_job;

typedef struct committer {
	al_store *s;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	commit_job q[COMMIT_QUEUE];
	size_t head, n;
	int busy, stop, running;
	int rc;
	char msg[1200];
} committer;

typedef struct up_ctx {
	al_store *s;
	const char *dir;
	const al_unpack_opts *opts;
	al_unpack_result *res;
	char id[AL_PACK_ID_MAX + 1];
	char base[AL_PACK_ID_MAX + 1];
	uint64_t sequence; /* 0 for manifests written before the field */
	char created[32];  /* the manifest's "created", or "" */
	const char *keyid; /* "sha256:<hex>" of the --trust key, or NULL */
	const char *qsrc;  /* promotion: the quarantine the entries come from
	                      (STORE/airlock/quarantine/<id>), else NULL */
	int quarantine;    /* importing into the quarantine store */
	al_store *main;    /* quarantine: the store itself, only read (a
	                      delta's base, its blobs), else NULL */
	uint64_t mark;     /* highest sequence imported before (see
	                      rollback_mark) */
	char mark_id[AL_PACK_ID_MAX + 1]; /* the pack that had it */
	up_vol *vols;
	size_t nvols;
	up_entry *entries;
	size_t nentries;
	up_slot *slots;
	size_t nslots;
	char *stage;
	uint8_t *chunk;
	al_hasher *hasher;
	al_hash_worker *hw;  /* hashes blob data while this thread writes it */
	const char *volname; /* volume being read, for messages */
	committer commit;
	al_progress_info pi;
	uint64_t start_ms, last_ms;
} up_ctx;

static void progress(up_ctx *c, int final)
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

static int cmp_slot(const void *a, const void *b)
{
	return strcmp(((const up_slot *)a)->name, ((const up_slot *)b)->name);
}

static int cmp_slot_key(const void *key, const void *b)
{
	return strcmp((const char *)key, ((const up_slot *)b)->name);
}

static int get_u64(const json_t *obj, const char *key, uint64_t *out)
{
	json_t *v = json_object_get(obj, key);

	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return -1;
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

static int get_hex(const json_t *obj, const char *key, char out[65])
{
	const char *s = al_json_str(obj, key);

	if (s == NULL || !al_pack__is_hex64(s))
		return -1;
	memcpy(out, s, 65);
	return 0;
}

/* The entry's digest: "sha512" for a sha512 blob, "sha256" otherwise. */
static int get_entry_hex(const json_t *obj, int algo, char *out)
{
	const char *s =
	    al_json_str(obj, algo == AL_DIGEST_SHA512 ? "sha512" : "sha256");
	size_t n = algo == AL_DIGEST_SHA512 ? 128 : 64;

	if (s == NULL || !al_pack__is_hex(s, n))
		return -1;
	memcpy(out, s, n + 1);
	return 0;
}

static int add_slot(up_ctx *c, size_t *cap, char *name, size_t entry,
                    size_t part, unsigned volume)
{
	if (c->nslots == *cap) {
		size_t nc = *cap ? *cap * 2 : 256;
		up_slot *g = realloc(c->slots, nc * sizeof(*g));
		if (g == NULL) {
			free(name);
			return al_error_oom();
		}
		c->slots = g;
		*cap = nc;
	}
	c->slots[c->nslots].name = name;
	c->slots[c->nslots].entry = entry;
	c->slots[c->nslots].part = part;
	c->slots[c->nslots].volume = volume;
	c->slots[c->nslots].seen = 0;
	c->nslots++;
	return 0;
}

/* Strict reading of the manifest (docs/pack.md); what names it in messages. */
/* The manifest's "airlockPack", "id" (it must be want_id), "sequence",
 * "created" and "base". */
static int parse_header(up_ctx *c, const json_t *m, const char *what,
                        const char *want_id)
{
	const json_t *v;
	const char *id, *s;

	if (!json_is_object(m) ||
	    json_integer_value(json_object_get(m, "airlockPack")) != 1 ||
	    !json_is_integer(json_object_get(m, "airlockPack")))
		return al_error_set(
		    AL_EPARSE,
		    "'%s' is not an airlock pack manifest (\"airlockPack\": 1)",
		    what);
	id = al_json_str(m, "id");
	if (id == NULL || !al_pack_id_valid(id))
		return al_error_set(AL_EPARSE,
		                    "'%s': missing or malformed \"id\"", what);
	if (strcmp(id, want_id) != 0)
		return al_error_set(AL_EVERIFY,
		                    "manifest '%s' is for another pack: it "
		                    "holds pack '%s', its name says '%s'",
		                    what, id, want_id);
	memcpy(c->id, id, strlen(id) + 1);
	v = json_object_get(m, "sequence");
	if (v != NULL && (!json_is_integer(v) || json_integer_value(v) < 0))
		return al_error_set(
		    AL_EPARSE,
		    "'%s': \"sequence\" is not a non-negative integer", what);
	c->sequence = v != NULL ? (uint64_t)json_integer_value(v) : 0;
	s = al_json_str(m, "created");
	if (s != NULL && strlen(s) < sizeof(c->created))
		memcpy(c->created, s, strlen(s) + 1);
	v = json_object_get(m, "base");
	if (json_is_string(v)) {
		s = json_string_value(v);
		if (!al_pack_id_valid(s) || strcmp(s, id) == 0)
			return al_error_set(AL_EPARSE,
			                    "'%s': malformed \"base\"", what);
		memcpy(c->base, s, strlen(s) + 1);
	} else if (v != NULL && !json_is_null(v)) {
		return al_error_set(
		    AL_EPARSE, "'%s': \"base\" is neither a pack id nor null",
		    what);
	}
	return 0;
}

/* "volumes": airlock-<id>-0001.tar, ... numbered from 1, with sizes. */
static int parse_volumes(up_ctx *c, const json_t *m, const char *what)
{
	const json_t *vols = json_object_get(m, "volumes"), *v;
	const char *s;
	size_t i;

	if (!json_is_array(vols) || json_array_size(vols) == 0 ||
	    json_array_size(vols) > MAX_VOLUMES)
		return al_error_set(
		    AL_EPARSE, "'%s': \"volumes\" must list 1 to %d volumes",
		    what, MAX_VOLUMES);
	c->nvols = json_array_size(vols);
	c->vols = calloc(c->nvols, sizeof(*c->vols));
	if (c->vols == NULL)
		return al_error_oom();
	json_array_foreach(vols, i, v)
	{
		char want[AL_PACK_ID_MAX + 64];
		uint64_t num;
		s = al_json_str(v, "name");
		snprintf(want, sizeof(want), "airlock-%s-%04zu.tar", c->id,
		         i + 1);
		if (s == NULL || strcmp(s, want) != 0 ||
		    get_u64(v, "number", &num) < 0 || num != i + 1 ||
		    get_u64(v, "size", &c->vols[i].size) < 0)
			return al_error_set(
			    AL_EPARSE,
			    "'%s': volumes[%zu] is not {\"name\": \"%s\", "
			    "\"number\": %zu, \"size\"}",
			    what, i, want, i + 1);
		if ((c->vols[i].name = al_strdup(want)) == NULL)
			return al_error_oom();
	}
	return 0;
}

/* The "parts" of split blob entry i (e): consecutive, in order, adding
 * up to its size, each a slot of its own ("<path>.part-NNNN"). */
static int parse_parts(up_ctx *c, size_t *cap, size_t i, up_entry *e,
                       const json_t *parts, const char *what)
{
	uint64_t off = 0, vol;
	unsigned prev = e->volume;
	size_t j;
	char *name;
	int rc;

	if (e->kind != AL_PK_BLOB || !json_is_array(parts) ||
	    json_array_size(parts) < 2 || json_array_size(parts) > MAX_VOLUMES)
		return al_error_set(AL_EPARSE,
		                    "'%s': entry '%s': \"parts\" must list 2 "
		                    "or more parts of a blob",
		                    what, e->path);
	e->nparts = json_array_size(parts);
	e->parts = calloc(e->nparts, sizeof(*e->parts));
	if (e->parts == NULL)
		return al_error_oom();
	for (j = 0; j < e->nparts; j++) {
		const json_t *p = json_array_get(parts, j);
		up_part *pt = &e->parts[j];
		if (get_u64(p, "volume", &vol) < 0 ||
		    get_u64(p, "offset", &pt->offset) < 0 ||
		    get_u64(p, "size", &pt->size) < 0 ||
		    get_hex(p, "sha256", pt->hex) < 0 || vol < prev ||
		    vol > c->nvols || (j == 0 && vol != e->volume) ||
		    pt->offset != off || pt->size == 0 ||
		    pt->size > e->size - off)
			return al_error_set(AL_EPARSE,
			                    "'%s': entry '%s': part %zu is "
			                    "malformed",
			                    what, e->path, j + 1);
		pt->volume = (unsigned)vol;
		prev = pt->volume;
		off += pt->size;
		if ((name = al_sprintf("%s.part-%04zu", e->path, j + 1)) ==
		    NULL)
			return al_error_oom();
		if ((rc = add_slot(c, cap, name, i, j, pt->volume)) < 0)
			return rc;
	}
	if (off != e->size)
		return al_error_set(AL_EPARSE,
		                    "'%s': entry '%s': parts add up to %llu of "
		                    "%llu bytes",
		                    what, e->path, (unsigned long long)off,
		                    (unsigned long long)e->size);
	return 0;
}

/* Entry i of "entries": a store path, its size (bounded by kind), its
 * digest, its volume; index.json and releases.json at most once. */
static int parse_entry(up_ctx *c, size_t *cap, size_t i, const json_t *v,
                       const char *what, int *have_index, int *have_rel)
{
	up_entry *e = &c->entries[i];
	const json_t *parts = json_object_get(v, "parts");
	const char *s = al_json_str(v, "path");
	uint64_t vol, max;
	char *name;

	if (s == NULL || (e->kind = al_pack__classify(s)) == AL_PK_NONE)
		return al_error_set(AL_EPARSE,
		                    "'%s': entries[%zu]: path '%s' "
		                    "names no store location",
		                    what, i, s != NULL ? s : "");
	if ((e->path = al_strdup(s)) == NULL)
		return al_error_oom();
	e->algo =
	    e->kind == AL_PK_BLOB ? al_pack__blob_algo(s) : AL_DIGEST_SHA256;
	if (get_u64(v, "size", &e->size) < 0 ||
	    get_entry_hex(v, e->algo, e->hex) < 0 ||
	    get_u64(v, "volume", &vol) < 0 || vol < 1 || vol > c->nvols)
		return al_error_set(
		    AL_EPARSE,
		    "'%s': entry '%s' needs \"size\", \"%s\" and "
		    "\"volume\" (1..%zu)",
		    what, s, e->algo == AL_DIGEST_SHA512 ? "sha512" : "sha256",
		    c->nvols);
	e->volume = (unsigned)vol;
	max = e->kind == AL_PK_SIG    ? AL_PACK_SIGFILE_MAX
	      : e->kind == AL_PK_BLOB ? UINT64_MAX
	                              : AL_PACK_META_MAX;
	if (e->size > max)
		return al_error_set(AL_ELIMIT,
		                    "'%s': entry '%s' is %llu bytes, "
		                    "over the limit of %llu",
		                    what, s, (unsigned long long)e->size,
		                    (unsigned long long)max);
	if (e->kind == AL_PK_BLOB && strcmp(e->hex, s + 13) != 0)
		return al_error_set(
		    AL_EVERIFY, "'%s': entry '%s' claims %s %s", what, s,
		    e->algo == AL_DIGEST_SHA512 ? "SHA-512" : "SHA-256",
		    e->hex);
	if (e->kind == AL_PK_INDEX && (*have_index)++)
		return al_error_set(AL_EPARSE, "'%s': index.json listed twice",
		                    what);
	if (e->kind == AL_PK_RELEASES && (*have_rel)++)
		return al_error_set(AL_EPARSE,
		                    "'%s': airlock/releases.json listed twice",
		                    what);
	if (parts != NULL)
		return parse_parts(c, cap, i, e, parts, what);
	if ((name = al_strdup(s)) == NULL)
		return al_error_oom();
	return add_slot(c, cap, name, i, 0, e->volume);
}

/* The manifest m (of file what) into c: header, volumes, entries, and
 * every tar entry name (slot) at most once. */
static int parse_manifest(up_ctx *c, const json_t *m, const char *what,
                          const char *want_id)
{
	const json_t *ents, *v;
	size_t i, cap = 0;
	int rc, have_index = 0, have_rel = 0;

	if ((rc = parse_header(c, m, what, want_id)) < 0 ||
	    (rc = parse_volumes(c, m, what)) < 0)
		return rc;
	ents = json_object_get(m, "entries");
	if (!json_is_array(ents) || json_array_size(ents) > MAX_ENTRIES)
		return al_error_set(
		    AL_EPARSE,
		    "'%s': \"entries\" is not an array of at most %d", what,
		    MAX_ENTRIES);
	c->nentries = json_array_size(ents);
	c->entries = calloc(c->nentries ? c->nentries : 1, sizeof(*c->entries));
	if (c->entries == NULL)
		return al_error_oom();
	json_array_foreach(ents, i, v)
	{
		if ((rc = parse_entry(c, &cap, i, v, what, &have_index,
		                      &have_rel)) < 0)
			return rc;
	}
	if (c->nslots > 1) {
		qsort(c->slots, c->nslots, sizeof(*c->slots), cmp_slot);
		for (i = 1; i < c->nslots; i++)
			if (strcmp(c->slots[i - 1].name, c->slots[i].name) == 0)
				return al_error_set(
				    AL_EPARSE, "'%s': entry '%s' listed twice",
				    what, c->slots[i].name);
	}
	return 0;
}

static char *stage_file(const up_ctx *c, const up_entry *e, size_t part)
{
	if (e->kind == AL_PK_BLOB)
		return al_sprintf("%s/part-%s-%04zu", c->stage, e->hex,
		                  part + 1);
	if (e->kind == AL_PK_INDEX)
		return al_path_join(c->stage, "index.json");
	if (e->kind == AL_PK_RELEASES)
		return al_path_join(c->stage, "releases.json");
	return al_path_join(al_store_path(c->s), e->path);
}

/* 1 if path is a regular file of size bytes hashing to hex. */
static int file_matches(const char *path, uint64_t size, const char *hex,
                        int rehash)
{
	struct stat st;
	char buf[AL_DIGEST_STRMAX];
	al_digest d;

	if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size != size)
		return 0;
	if (!rehash)
		return 1;
	if (al_digest_file(&d, AL_DIGEST_SHA256, path, NULL) < 0) {
		al_error_clear();
		return 0;
	}
	return strcmp(al_digest_hex(&d, buf), hex) == 0;
}

static int blob_digest(const up_entry *e, al_digest *d)
{
	char s[AL_DIGEST_STRMAX + 8];

	snprintf(s, sizeof(s), "%s:%s",
	         al_digest_algo_name((al_digest_algo)e->algo), e->hex);
	return al_digest_parse_str(d, s);
}

/* The release a signature entry belongs to (its path names it). */
static int sig_release(const up_entry *e, al_digest *d)
{
	char s[AL_DIGEST_STRMAX];

	/* "signatures/sha256=<64 hex>/...", checked by al_pack__classify */
	snprintf(s, sizeof(s), "sha256:%.64s", e->path + 18);
	return al_digest_parse_str(d, s);
}

/*
 * docs/security.md "Untrusted imports": an import into the store that no
 * key verified (--accept-untrusted) marks what it writes; a trusted one
 * clears the marks of what it vouches for. The quarantine, untrusted as a
 * whole, carries no marks.
 */
static int marks_untrusted(const up_ctx *c)
{
	return c->keyid == NULL && !c->quarantine;
}

static int marks_trusted(const up_ctx *c)
{
	return c->keyid != NULL && !c->quarantine;
}

/* Mark (untrusted run) or clear (trusted run) the signature entries: with
 * unwritten_only, those not yet written, else every one the pack carries. */
static int sig_marks(up_ctx *c, int unwritten_only)
{
	al_store_untrusted *v;
	size_t i, n = 0;
	int rc = 0;

	if (!marks_untrusted(c) && !marks_trusted(c))
		return 0;
	if ((v = calloc(c->nentries + 1, sizeof(*v))) == NULL)
		return al_error_oom();
	for (i = 0; i < c->nentries; i++) {
		const up_entry *e = &c->entries[i];
		if (e->kind != AL_PK_SIG || (unwritten_only && e->done))
			continue;
		v[n].kind = AL_STORE_UNTRUSTED_SIGNATURE;
		if ((rc = sig_release(e, &v[n].digest)) < 0)
			goto out;
		memcpy(v[n].sha256, e->hex, 65);
		v[n].pack = (char *)c->id;
		n++;
	}
	rc = marks_untrusted(c) ? al_store_untrusted_mark(c->s, v, n)
	                        : al_store_untrusted_clear(c->s, v, n);
out:
	free(v);
	return rc;
}

/* 1 when the file at path is a signature of e's release that an
 * untrusted import wrote (so a trusted import may replace it); hex gets
 * the SHA-256 of its bytes. */
static int sig_file_untrusted(const up_ctx *c, const up_entry *e,
                              const char *path, char hex[65])
{
	al_buf b = AL_BUF_INIT(AL_PACK_SIGFILE_MAX);
	const uint8_t *p;
	al_digest d;
	int rc;

	if ((rc = sig_release(e, &d)) < 0 ||
	    (rc = al_fs_read_file(path, &b)) < 0)
		goto out;
	p = b.ptr != NULL ? b.ptr : (const uint8_t *)"";
	if ((rc = al_pack__sha256_hex(p, b.len, hex)) < 0)
		goto out;
	rc = al_store_signature_untrusted(c->s, &d, p, b.len);
out:
	al_buf_free(&b);
	if (rc < 0)
		al_error_clear();
	return rc == 1;
}

/*
 * 1 if some signature-<n> of the signature's directory holds exactly the
 * entry's bytes: a signature the store kept under another number (see
 * import_small) is in place.
 */
static int sig_present(const up_ctx *c, const up_entry *e)
{
	char *file = stage_file(c, e, 0), *dir = NULL, **names = NULL;
	size_t n = 0, i;
	int found = 0;

	if (file == NULL)
		return 0;
	if (file_matches(file, e->size, e->hex, 1))
		found = 1;
	else if ((dir = al_strndup(
	              file, (size_t)(strrchr(file, '/') - file))) != NULL &&
	         al_pack__list_dir(dir, &names, &n) == 0) {
		for (i = 0; i < n && !found; i++) {
			char *p;
			if (!al_str_startswith(names[i], "signature-"))
				continue;
			if ((p = al_path_join(dir, names[i])) == NULL)
				break;
			found = file_matches(p, e->size, e->hex, 1);
			free(p);
		}
	}
	al_error_clear();
	al_pack__free_list(names, n);
	free(dir);
	free(file);
	return found;
}

/*
 * Where a pack's signature goes when the store holds a different file
 * under its name: the first free signature-<n> of that digest (the
 * signature store layout is read from 1 on, and a release verifies when any
 * of its signatures does), so nothing is replaced and a file written by
 * an earlier (untrusted, perhaps forged) import never blocks this one.
 */
static int free_sig_slot(const char *dest, char **out)
{
	const char *slash = strrchr(dest, '/');
	unsigned n;

	for (n = 1; n <= 9999; n++) {
		char *p = al_sprintf("%.*s/signature-%u", (int)(slash - dest),
		                     dest, n);
		int ex;
		if (p == NULL)
			return al_error_oom();
		ex = al_fs_exists(p);
		if (ex == 0) {
			*out = p;
			return 0;
		}
		free(p);
		if (ex < 0)
			return ex;
	}
	return al_error_set(AL_ELIMIT, "'%.*s' holds 9999 signatures already",
	                    (int)(slash - dest), dest);
}

/*
 * *dest (stage_file of a signature entry, owned) becomes where the
 * signature goes: its directory made, and the first free slot when the
 * store holds a different file under its name (free_sig_slot).
 */
static int sig_dest(const up_ctx *c, const up_entry *e, char **dest,
                    char replaced[65])
{
	const char *slash = strrchr(*dest, '/');
	char *ddir, *alt = NULL;
	int rc;

	if ((ddir = al_strndup(*dest, (size_t)(slash - *dest))) == NULL)
		return al_error_oom();
	rc = al_fs_mkdir_p(ddir, 0755);
	free(ddir);
	if (rc < 0 || al_fs_exists(*dest) != 1)
		return rc;
	/* what an untrusted import wrote gives way to a trusted pack's
	 * signature of the same name (its mark goes in finish_import) */
	if (marks_trusted(c) && sig_file_untrusted(c, e, *dest, replaced)) {
		al_log_warn("pack '%s': replaced '%s', written by an untrusted "
		            "import",
		            c->id, e->path);
		return 0;
	}
	replaced[0] = '\0';
	if ((rc = free_sig_slot(*dest, &alt)) < 0)
		return rc;
	al_log_warn("pack '%s': the store holds a different '%s'; kept it, "
	            "and added the pack's as '%s'",
	            c->id, e->path, strrchr(alt, '/') + 1);
	free(*dest);
	*dest = alt;
	return 0;
}

/* After a trusted signature replaced the untrusted bytes of SHA-256 hex
 * (sig_dest), their mark goes: no file holds them any more. */
static int sig_unmark_replaced(up_ctx *c, const up_entry *e, const char *hex)
{
	al_store_untrusted m;
	int rc;

	if (hex[0] == '\0')
		return 0;
	memset(&m, 0, sizeof(m));
	m.kind = AL_STORE_UNTRUSTED_SIGNATURE;
	if ((rc = sig_release(e, &m.digest)) < 0)
		return rc;
	memcpy(m.sha256, hex, 65);
	return al_store_untrusted_clear(c->s, &m, 1);
}

/* What is already in place, from what is on disk (nothing else is trusted). */
static int scan_done(up_ctx *c)
{
	size_t i, j;
	int rc;

	for (i = 0; i < c->nentries; i++) {
		up_entry *e = &c->entries[i];
		char *p;
		if (e->kind == AL_PK_BLOB) {
			al_digest d;
			if ((rc = blob_digest(e, &d)) < 0)
				return rc;
			e->done = al_store_has_blob(c->s, &d, NULL) == 1;
			for (j = 0; j < e->nparts && !e->done; j++) {
				if ((p = stage_file(c, e, j)) == NULL)
					return al_error_oom();
				/* re-hashed: a part staged by another run (an
				 * untrusted manifest of the same pack id, say)
				 * matched that run's manifest, not this one */
				e->parts[j].done = file_matches(
				    p, e->parts[j].size, e->parts[j].hex, 1);
				free(p);
			}
			continue;
		}
		if (e->kind == AL_PK_SIG) {
			e->done = sig_present(c, e);
			continue;
		}
		if ((p = stage_file(c, e, 0)) == NULL)
			return al_error_oom();
		e->done = file_matches(p, e->size, e->hex, 1);
		free(p);
	}
	return 0;
}

static int slot_needed(const up_ctx *c, const up_slot *sl)
{
	const up_entry *e = &c->entries[sl->entry];

	if (e->done)
		return 0;
	return e->nparts == 0 || !e->parts[sl->part].done;
}

static int refuse(const up_ctx *c, const char *entry, const char *fmt,
                  const char *detail)
{
	return al_error_set(AL_EVERIFY, "volume '%s' entry '%s': %s%s",
	                    c->volname, entry, fmt, detail);
}

/*
 * Stream the current tar entry (size bytes) into w (a blob writer) or into
 * c->hasher and t. Data blocks come straight from libarchive's buffer.
 */
static int read_entry(up_ctx *c, struct archive *a, const char *name,
                      uint64_t size, al_blob_writer *w, al_tmpfile *t)
{
	uint64_t got = 0;
	int rc;

	for (;;) {
		const void *buf;
		size_t n;
		la_int64_t off;
		int r = archive_read_data_block(a, &buf, &n, &off);
		if (r == ARCHIVE_EOF)
			break;
		if (r != ARCHIVE_OK)
			return al_error_set(
			    AL_EVERIFY,
			    "volume '%s' entry '%s': truncated or damaged: %s",
			    c->volname, name,
			    archive_error_string(a) != NULL
			        ? archive_error_string(a)
			        : "read error");
		if (off < 0 || (uint64_t)off != got)
			return refuse(c, name, "entry with holes refused", "");
		if (n == 0)
			continue;
		got += (uint64_t)n;
		if (got > size)
			return refuse(c, name, "oversized entry", "");
		if (w != NULL)
			rc = al_blob_writer_write(w, buf, n);
		else
			rc = al_hasher_update(c->hasher, buf, n);
		if (rc == 0 && t != NULL)
			rc = al_tmpfile_write(t, buf, n);
		if (rc < 0)
			return rc;
		c->pi.bytes_done += (uint64_t)n;
		progress(c, 0);
		if (al_cancel_is_set(c->opts->cancel))
			return al_error_set(AL_ECANCELED, "unpack cancelled");
	}
	if (got != size)
		return al_error_set(
		    AL_EVERIFY,
		    "volume '%s' entry '%s': truncated: %llu of %llu bytes",
		    c->volname, name, (unsigned long long)got,
		    (unsigned long long)size);
	return 0;
}

/*
 * Commits (digest check, fsync, rename) run on a second thread so that
 * waiting for the disk overlaps with reading and hashing the next entry.
 * The queue is bounded; its first failure is kept and ends the import.
 * The thread takes whatever is queued as one batch: each blob is checked,
 * fsynced and renamed, then the blobs directory is fsynced once for the
 * batch, and only then are the batch's entries marked done.
 */
static void *committer_main(void *arg)
{
	committer *k = arg;
	commit_job batch[COMMIT_QUEUE];
	int rcs[COMMIT_QUEUE];
	char msg[sizeof(k->msg)];

	pthread_mutex_lock(&k->mu);
	for (;;) {
		size_t i, m;
		int dirrc = 0, any256 = 0, any512 = 0, failed = 0;
		while (k->n == 0 && !k->stop)
			pthread_cond_wait(&k->cv, &k->mu);
		if (k->n == 0 && k->stop)
			break;
		m = k->n;
		for (i = 0; i < m; i++)
			batch[i] = k->q[(k->head + i) % COMMIT_QUEUE];
		k->busy = 1;
		pthread_mutex_unlock(&k->mu);
		msg[0] = '\0';
		for (i = 0; i < m; i++) {
			rcs[i] = al_blob_writer_commit_nodirsync(batch[i].w);
			if (rcs[i] == 0) {
				if (batch[i].e->algo == AL_DIGEST_SHA512)
					any512 = 1;
				else
					any256 = 1;
			} else if (!failed) {
				failed = 1;
				snprintf(msg, sizeof(msg),
				         "volume '%s' entry '%s': %s",
				         batch[i].volname, batch[i].name,
				         al_error_message());
			}
		}
		/* each blobs/<algo> directory the batch renamed into */
		if (any256)
			dirrc = al_store_sync_blob_dir(k->s, AL_DIGEST_SHA256);
		if (any512 && dirrc == 0)
			dirrc = al_store_sync_blob_dir(k->s, AL_DIGEST_SHA512);
		if (dirrc < 0 && !failed) {
			failed = 1;
			snprintf(msg, sizeof(msg), "volume '%s': %s",
			         batch[0].volname, al_error_message());
		}
		pthread_mutex_lock(&k->mu);
		k->head = (k->head + m) % COMMIT_QUEUE;
		k->n -= m;
		k->busy = 0;
		for (i = 0; i < m; i++) {
			if (rcs[i] == 0 && dirrc == 0)
				batch[i].e->done = 1;
			else if (k->rc == 0)
				k->rc = rcs[i] < 0 ? rcs[i] : dirrc;
			free(batch[i].name);
		}
		if (failed && k->msg[0] == '\0')
			memcpy(k->msg, msg, sizeof(msg));
		pthread_cond_broadcast(&k->cv);
	}
	pthread_mutex_unlock(&k->mu);
	return NULL;
}

static int committer_start(committer *k, al_store *s)
{
	memset(k, 0, sizeof(*k));
	k->s = s;
	if (pthread_mutex_init(&k->mu, NULL) != 0)
		return al_error_set(AL_ENOMEM, "cannot create a mutex");
	if (pthread_cond_init(&k->cv, NULL) != 0) {
		pthread_mutex_destroy(&k->mu);
		return al_error_set(AL_ENOMEM,
		                    "cannot create a condition variable");
	}
	if (pthread_create(&k->th, NULL, committer_main, k) != 0) {
		pthread_cond_destroy(&k->cv);
		pthread_mutex_destroy(&k->mu);
		return al_error_set(AL_ENOMEM,
		                    "cannot start the commit thread");
	}
	k->running = 1;
	return 0;
}

/* The committer's first failure (0 if none), as this thread's error. */
static int committer_error(committer *k)
{
	int rc;

	pthread_mutex_lock(&k->mu);
	rc = k->rc;
	pthread_mutex_unlock(&k->mu);
	if (rc < 0)
		return al_error_set(rc, "%s", k->msg);
	return 0;
}

/* Hand w (written in full) over; takes ownership of w in all cases. */
static int committer_push(committer *k, al_blob_writer *w, up_entry *e,
                          const char *volname, const char *name)
{
	commit_job job;
	int failed;

	job.w = w;
	job.e = e;
	job.volname = volname;
	job.name = al_strdup(name);
	if (job.name == NULL) {
		al_blob_writer_abort(w);
		return al_error_oom();
	}
	pthread_mutex_lock(&k->mu);
	while (k->n == COMMIT_QUEUE && k->rc == 0)
		pthread_cond_wait(&k->cv, &k->mu);
	failed = k->rc != 0;
	if (!failed) {
		k->q[(k->head + k->n) % COMMIT_QUEUE] = job;
		k->n++;
		pthread_cond_broadcast(&k->cv);
	}
	pthread_mutex_unlock(&k->mu);
	if (failed) {
		al_blob_writer_abort(w);
		free(job.name);
		return committer_error(k);
	}
	return 0;
}

/* Wait until every queued commit finished. */
static void committer_wait(committer *k)
{
	if (!k->running)
		return;
	pthread_mutex_lock(&k->mu);
	while (k->n > 0 || k->busy)
		pthread_cond_wait(&k->cv, &k->mu);
	pthread_mutex_unlock(&k->mu);
}

/* committer_wait, then the first failure, if any. */
static int committer_drain(committer *k)
{
	if (!k->running)
		return 0;
	committer_wait(k);
	return committer_error(k);
}

static void committer_stop(committer *k)
{
	if (!k->running)
		return;
	pthread_mutex_lock(&k->mu);
	k->stop = 1;
	pthread_cond_broadcast(&k->cv);
	pthread_mutex_unlock(&k->mu);
	pthread_join(k->th, NULL);
	pthread_cond_destroy(&k->cv);
	pthread_mutex_destroy(&k->mu);
	k->running = 0;
}

/* All parts of a split blob are staged: stream them into the store. */
static int assemble(up_ctx *c, up_entry *e)
{
	al_blob_writer *w = NULL;
	al_digest d;
	size_t j;
	int rc, fd = -1;
	char *p = NULL;

	if ((rc = blob_digest(e, &d)) < 0)
		return rc;
	if ((rc = al_store_blob_begin(c->s, &d, e->size, &w)) < 0)
		return rc;
	al_blob_writer_use_hash_worker(w, c->hw);
	for (j = 0; j < e->nparts; j++) {
		free(p);
		if ((p = stage_file(c, e, j)) == NULL) {
			rc = al_error_oom();
			goto out;
		}
		fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			rc = al_error_errno(errno, "cannot open '%s'", p);
			goto out;
		}
		for (;;) {
			ssize_t r = read(fd, c->chunk, AL_PACK_CHUNK);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0) {
				rc = al_error_errno(errno, "cannot read '%s'",
				                    p);
				goto out;
			}
			if (r == 0)
				break;
			if ((rc = al_blob_writer_write(w, c->chunk,
			                               (size_t)r)) < 0)
				goto out;
		}
		close(fd);
		fd = -1;
	}
	rc = al_blob_writer_commit(w);
	w = NULL;
	if (rc < 0) {
		rc = al_error_wrap(rc, "entry '%s' (joined from %zu parts)",
		                   e->path, e->nparts);
		goto out;
	}
	e->done = 1;
	for (j = 0; j < e->nparts; j++) {
		free(p);
		if ((p = stage_file(c, e, j)) != NULL)
			unlink(p);
	}
out:
	if (fd >= 0)
		close(fd);
	al_blob_writer_abort(w);
	free(p);
	return rc;
}

static const char *type_name(mode_t t)
{
	switch (t) {
	case AE_IFDIR:
		return "a directory";
	case AE_IFLNK:
		return "a symbolic link";
	case AE_IFCHR:
		return "a character device";
	case AE_IFBLK:
		return "a block device";
	case AE_IFIFO:
		return "a FIFO";
	case AE_IFSOCK:
		return "a socket";
	default:
		return "not a regular file";
	}
}

static int has_dotdot(const char *p)
{
	const char *s = p;

	while (*s != '\0') {
		const char *e = strchr(s, '/');
		size_t n = e != NULL ? (size_t)(e - s) : strlen(s);
		if (n == 2 && s[0] == '.' && s[1] == '.')
			return 1;
		if (e == NULL)
			break;
		s = e + 1;
	}
	return 0;
}

/* Check one header against what the manifest allows; *out the slot. */
static int check_header(up_ctx *c, struct archive_entry *ae, unsigned volno,
                        up_slot **out)
{
	const char *name = archive_entry_pathname(ae);
	up_slot *sl;
	uint64_t want;
	char detail[128];

	if (name == NULL || name[0] == '\0')
		return refuse(c, "", "entry without a name", "");
	if (archive_entry_hardlink(ae) != NULL) {
		snprintf(detail, sizeof(detail), "hard link to '%.80s' refused",
		         archive_entry_hardlink(ae));
		return refuse(c, name, detail, "");
	}
	if (archive_entry_symlink(ae) != NULL ||
	    archive_entry_filetype(ae) != AE_IFREG) {
		snprintf(detail, sizeof(detail), "%s",
		         type_name(archive_entry_filetype(ae)));
		return refuse(
		    c, name, detail,
		    " refused: only regular files belong in a volume");
	}
	if (name[0] == '/')
		return refuse(c, name, "absolute path refused", "");
	if (has_dotdot(name))
		return refuse(c, name, "path traversal ('..') refused", "");
	if (archive_entry_sparse_count(ae) > 0)
		return refuse(c, name, "sparse entry refused", "");
	sl =
	    bsearch(name, c->slots, c->nslots, sizeof(*c->slots), cmp_slot_key);
	if (sl == NULL)
		return refuse(c, name, "not in the pack manifest", "");
	if (sl->volume != volno) {
		snprintf(detail, sizeof(detail), "%u", sl->volume);
		return refuse(
		    c, name, "the manifest puts this entry in volume ", detail);
	}
	if (sl->seen)
		return refuse(c, name, "duplicate entry", "");
	{
		const up_entry *e = &c->entries[sl->entry];
		want = e->nparts > 0 ? e->parts[sl->part].size : e->size;
	}
	if (!archive_entry_size_is_set(ae) || archive_entry_size(ae) < 0)
		return refuse(c, name, "entry without a size", "");
	if ((uint64_t)archive_entry_size(ae) > want) {
		snprintf(detail, sizeof(detail),
		         " (%lld bytes, the manifest says %llu)",
		         (long long)archive_entry_size(ae),
		         (unsigned long long)want);
		return refuse(c, name, "oversized entry", detail);
	}
	if ((uint64_t)archive_entry_size(ae) != want) {
		snprintf(detail, sizeof(detail),
		         " (%lld bytes, the manifest says %llu)",
		         (long long)archive_entry_size(ae),
		         (unsigned long long)want);
		return refuse(c, name, "size differs from the manifest",
		              detail);
	}
	sl->seen = 1;
	*out = sl;
	return 0;
}

/* Verify a staged or signature entry through a temporary file, then rename it
 * into place. */
static int import_small(up_ctx *c, struct archive *a, up_slot *sl)
{
	up_entry *e = &c->entries[sl->entry];
	uint64_t size = e->nparts > 0 ? e->parts[sl->part].size : e->size;
	const char *want = e->nparts > 0 ? e->parts[sl->part].hex : e->hex;
	al_tmpfile *t = NULL;
	char *dest = NULL, hex[AL_DIGEST_STRMAX], replaced[65] = "";
	al_digest d;
	int rc;

	if ((rc = al_tmpfile_new(&t, c->stage)) < 0)
		goto out;
	if ((rc = read_entry(c, a, sl->name, size, NULL, t)) < 0)
		goto out;
	if ((rc = al_hasher_final(c->hasher, &d)) < 0)
		goto out;
	if (strcmp(al_digest_hex(&d, hex), want) != 0) {
		rc = al_error_set(AL_EVERIFY,
		                  "volume '%s' entry '%s': SHA-256 mismatch: "
		                  "the manifest says %s, the bytes hash to %s",
		                  c->volname, sl->name, want, hex);
		goto out;
	}
	if ((dest = stage_file(c, e, sl->part)) == NULL) {
		rc = al_error_oom();
		goto out;
	}
	if (e->kind == AL_PK_SIG &&
	    (rc = sig_dest(c, e, &dest, replaced)) < 0) {
		rc = al_error_wrap(rc, "volume '%s' entry '%s'", c->volname,
		                   sl->name);
		goto out;
	}
	rc = al_tmpfile_commit(t, dest);
	t = NULL;
	if (rc < 0 || (rc = sig_unmark_replaced(c, e, replaced)) < 0)
		goto out;
	if (e->nparts > 0)
		e->parts[sl->part].done = 1;
	else
		e->done = 1;
out:
	al_tmpfile_free(t);
	free(dest);
	return rc;
}

static int import_blob(up_ctx *c, struct archive *a, up_slot *sl)
{
	up_entry *e = &c->entries[sl->entry];
	al_blob_writer *w = NULL;
	al_digest d;
	int rc;

	if ((rc = blob_digest(e, &d)) < 0)
		return rc;
	if ((rc = al_store_blob_begin(c->s, &d, e->size, &w)) < 0)
		return rc;
	al_blob_writer_use_hash_worker(w, c->hw);
	if ((rc = read_entry(c, a, sl->name, e->size, w, NULL)) < 0) {
		al_blob_writer_abort(w);
		return rc;
	}
	/* the commit checks the digest before the blob becomes visible */
	al_blob_writer_start_writeback(w);
	return committer_push(&c->commit, w, e, c->volname, sl->name);
}

static int read_label(up_ctx *c, struct archive *a, unsigned volno)
{
	struct archive_entry *ae;
	char buf[AL_PACK_LABEL_MAX + 1];
	const char *name, *pack;
	json_t *lab = NULL;
	la_ssize_t r;
	size_t got = 0;
	int rc;

	rc = archive_read_next_header(a, &ae);
	if (rc != ARCHIVE_OK)
		return al_error_set(
		    AL_EVERIFY, "volume '%s' is not a pack volume: %s",
		    c->volname,
		    rc == ARCHIVE_EOF ? "empty"
		                      : (archive_error_string(a) != NULL
		                             ? archive_error_string(a)
		                             : "unreadable"));
	name = archive_entry_pathname(ae);
	if (name == NULL || strcmp(name, AL_PACK_LABEL) != 0 ||
	    archive_entry_filetype(ae) != AE_IFREG ||
	    archive_entry_hardlink(ae) != NULL || archive_entry_size(ae) <= 0 ||
	    archive_entry_size(ae) > AL_PACK_LABEL_MAX)
		return al_error_set(AL_EVERIFY,
		                    "volume '%s' entry '%s': a pack volume "
		                    "starts with its label '%s'",
		                    c->volname, name != NULL ? name : "",
		                    AL_PACK_LABEL);
	while ((r = archive_read_data(a, buf + got, sizeof(buf) - 1 - got)) > 0)
		got += (size_t)r;
	if (r < 0 || got != (size_t)archive_entry_size(ae))
		return al_error_set(AL_EVERIFY,
		                    "volume '%s' entry '%s': truncated",
		                    c->volname, AL_PACK_LABEL);
	if ((rc = al_json_parse(&lab, (const uint8_t *)buf, got,
	                        AL_PACK_LABEL)) < 0)
		return al_error_wrap(AL_EVERIFY, "volume '%s'", c->volname);
	pack = al_json_str(lab, "pack");
	if (pack == NULL || strcmp(pack, c->id) != 0 ||
	    json_integer_value(json_object_get(lab, "volume")) !=
	        (json_int_t)volno) {
		rc = al_error_set(AL_EVERIFY,
		                  "volume '%s' belongs to pack '%s' volume "
		                  "%lld, not to pack '%s' volume %u",
		                  c->volname, pack != NULL ? pack : "?",
		                  (long long)json_integer_value(
		                      json_object_get(lab, "volume")),
		                  c->id, volno);
		json_decref(lab);
		return rc;
	}
	json_decref(lab);
	return 0;
}

/*
 * Read-ahead: a second thread read(2)s the volume into a small pool of
 * buffers that libarchive consumes through callbacks, so the copy out of
 * the page cache (or the wait for slow media) overlaps with hashing and
 * writing. Memory: PREFETCH_BUFS * AL_PACK_CHUNK, whatever the volume size.
 */
#define PREFETCH_BUFS 4

typedef struct prefetch {
	int fd;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint8_t *buf[PREFETCH_BUFS];
	size_t len[PREFETCH_BUFS];
	size_t head, nfull; /* filled buffers: head .. head + nfull - 1 */
	int in_use;         /* libarchive holds buf[head] */
	int eof, err, stop, running;
} prefetch;

static void *prefetch_main(void *arg)
{
	prefetch *pf = arg;
	size_t slot;

	pthread_mutex_lock(&pf->mu);
	for (;;) {
		size_t got = 0;
		int err = 0;
		while (!pf->stop &&
		       pf->nfull + (size_t)pf->in_use >= PREFETCH_BUFS)
			pthread_cond_wait(&pf->cv, &pf->mu);
		if (pf->stop)
			break;
		slot =
		    (pf->head + pf->nfull + (size_t)pf->in_use) % PREFETCH_BUFS;
		pthread_mutex_unlock(&pf->mu);
		while (got < AL_PACK_CHUNK) {
			ssize_t r = read(pf->fd, pf->buf[slot] + got,
			                 AL_PACK_CHUNK - got);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0) {
				err = errno;
				break;
			}
			if (r == 0)
				break;
			got += (size_t)r;
		}
		pthread_mutex_lock(&pf->mu);
		if (err != 0) {
			pf->err = err;
			pthread_cond_broadcast(&pf->cv);
			break;
		}
		pf->len[slot] = got;
		pf->nfull++;
		pthread_cond_broadcast(&pf->cv);
		if (got < AL_PACK_CHUNK) {
			pf->eof = 1;
			break;
		}
	}
	pthread_mutex_unlock(&pf->mu);
	return NULL;
}

static la_ssize_t prefetch_read(struct archive *a, void *ud, const void **out)
{
	prefetch *pf = ud;
	la_ssize_t n;

	pthread_mutex_lock(&pf->mu);
	if (pf->in_use) {
		pf->in_use = 0;
		pf->head = (pf->head + 1) % PREFETCH_BUFS;
		pthread_cond_broadcast(&pf->cv);
	}
	while (pf->nfull == 0 && !pf->eof && pf->err == 0)
		pthread_cond_wait(&pf->cv, &pf->mu);
	if (pf->nfull == 0) {
		int err = pf->err;
		pthread_mutex_unlock(&pf->mu);
		if (err != 0) {
			archive_set_error(a, err, "read error: %s",
			                  strerror(err));
			return -1;
		}
		return 0;
	}
	pf->nfull--;
	pf->in_use = 1;
	*out = pf->buf[pf->head];
	n = (la_ssize_t)pf->len[pf->head];
	pthread_mutex_unlock(&pf->mu);
	return n;
}

static void prefetch_stop(prefetch *pf)
{
	size_t i;

	if (pf->running) {
		pthread_mutex_lock(&pf->mu);
		pf->stop = 1;
		pthread_cond_broadcast(&pf->cv);
		pthread_mutex_unlock(&pf->mu);
		pthread_join(pf->th, NULL);
		pthread_cond_destroy(&pf->cv);
		pthread_mutex_destroy(&pf->mu);
		pf->running = 0;
	}
	for (i = 0; i < PREFETCH_BUFS; i++) {
		free(pf->buf[i]);
		pf->buf[i] = NULL;
	}
}

static int prefetch_start(prefetch *pf, int fd)
{
	size_t i;

	memset(pf, 0, sizeof(*pf));
	pf->fd = fd;
	for (i = 0; i < PREFETCH_BUFS; i++)
		if ((pf->buf[i] = malloc(AL_PACK_CHUNK)) == NULL) {
			prefetch_stop(pf);
			return al_error_oom();
		}
	if (pthread_mutex_init(&pf->mu, NULL) != 0 ||
	    pthread_cond_init(&pf->cv, NULL) != 0 ||
	    pthread_create(&pf->th, NULL, prefetch_main, pf) != 0) {
		prefetch_stop(pf);
		return al_error_set(AL_ENOMEM,
		                    "cannot start the read-ahead thread");
	}
	pf->running = 1;
	return 0;
}

/* Media given by the user must be regular files: a FIFO or a device is
 * refused before it is opened (opening would block), and the open itself
 * uses al_fs_open_regular for the race. Missing: 0 (the caller reports). */
static int check_regular(const char *path, const char *what)
{
	struct stat st;

	if (lstat(path, &st) != 0)
		return 0;
	if (S_ISREG(st.st_mode))
		return 0;
	return al_error_set(AL_EVERIFY,
	                    "%s '%s' is not a regular file (%s): refused", what,
	                    path,
	                    S_ISFIFO(st.st_mode)   ? "a FIFO"
	                    : S_ISCHR(st.st_mode)  ? "a character device"
	                    : S_ISBLK(st.st_mode)  ? "a block device"
	                    : S_ISDIR(st.st_mode)  ? "a directory"
	                    : S_ISLNK(st.st_mode)  ? "a symbolic link"
	                    : S_ISSOCK(st.st_mode) ? "a socket"
	                                           : "another type");
}

static int read_volume(up_ctx *c, unsigned volno, const char *path)
{
	struct archive *a = NULL;
	struct archive_entry *ae;
	struct stat st;
	prefetch pf;
	size_t i;
	int fd, rc = 0, r;

	memset(&pf, 0, sizeof(pf));
	c->volname = c->vols[volno - 1].name;
	if ((rc = check_regular(path, "volume")) < 0)
		return rc;
	if ((rc = al_fs_open_regular(&fd, path, &st)) < 0) {
		if (rc == AL_EIO)
			rc = al_error_wrap(AL_EVERIFY, "volume '%s'",
			                   c->volname);
		return rc;
	}
	/* read ahead: volumes are read once, front to back */
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	a = archive_read_new();
	if (a == NULL) {
		rc = al_error_oom();
		goto out;
	}
	/* plain tar only: no decompression filters, no other formats */
	if (archive_read_support_format_tar(a) != ARCHIVE_OK ||
	    (rc = prefetch_start(&pf, fd)) < 0 ||
	    archive_read_open(a, &pf, NULL, prefetch_read, NULL) !=
	        ARCHIVE_OK) {
		if (rc < 0)
			goto out;
		rc = al_error_set(
		    AL_EVERIFY, "volume '%s' is not a tar volume: %s",
		    c->volname,
		    archive_error_string(a) != NULL ? archive_error_string(a)
		                                    : "unreadable");
		goto out;
	}
	if ((rc = read_label(c, a, volno)) < 0)
		goto out;
	for (;;) {
		up_slot *sl = NULL;
		r = archive_read_next_header(a, &ae);
		if (r == ARCHIVE_EOF)
			break;
		if (r != ARCHIVE_OK) {
			rc = al_error_set(AL_EVERIFY,
			                  "volume '%s': damaged or truncated "
			                  "tar after the last good entry: %s",
			                  c->volname,
			                  archive_error_string(a) != NULL
			                      ? archive_error_string(a)
			                      : "unreadable");
			goto out;
		}
		if ((rc = check_header(c, ae, volno, &sl)) < 0)
			goto out;
		if (!slot_needed(c, sl)) {
			c->res->entries_present++;
			if (archive_read_data_skip(a) != ARCHIVE_OK) {
				rc = al_error_set(
				    AL_EVERIFY,
				    "volume '%s' entry '%s': truncated: %s",
				    c->volname, sl->name,
				    archive_error_string(a) != NULL
				        ? archive_error_string(a)
				        : "");
				goto out;
			}
			continue;
		}
		if (c->entries[sl->entry].kind == AL_PK_BLOB &&
		    c->entries[sl->entry].nparts == 0)
			rc = import_blob(c, a, sl);
		else
			rc = import_small(c, a, sl);
		if (rc < 0)
			goto out;
		c->res->entries_imported++;
		c->pi.items_done++;
		/* one line per entry (-v): what tests kill an import after */
		al_log_debug("unpack: entry '%s' read", sl->name);
		{
			up_entry *e = &c->entries[sl->entry];
			size_t j, staged = 0;
			for (j = 0; j < e->nparts; j++)
				staged += e->parts[j].done;
			if (e->nparts > 0 && staged == e->nparts &&
			    (rc = assemble(c, e)) < 0)
				goto out;
		}
	}
	if ((rc = committer_drain(&c->commit)) < 0)
		goto out;
	for (i = 0; i < c->nslots; i++)
		if (c->slots[i].volume == volno && !c->slots[i].seen) {
			rc = al_error_set(AL_EVERIFY,
			                  "volume '%s' is truncated or "
			                  "incomplete: entry '%s' is missing",
			                  c->volname, c->slots[i].name);
			goto out;
		}
	if ((uint64_t)st.st_size != c->vols[volno - 1].size) {
		rc = al_error_set(
		    AL_EVERIFY,
		    "volume '%s' has %lld bytes, the manifest says %llu",
		    c->volname, (long long)st.st_size,
		    (unsigned long long)c->vols[volno - 1].size);
		goto out;
	}
	c->res->volumes_read++;
out:
	if (rc < 0)
		committer_wait(&c->commit); /* the error found first stays */
	archive_read_free(a);
	prefetch_stop(&pf);
	close(fd);
	return rc;
}

/* Read a staged file back, re-checking its digest. */
static int load_staged(up_ctx *c, const up_entry *e, json_t **out)
{
	al_buf b = AL_BUF_INIT(AL_PACK_META_MAX);
	char hex[65], *p = stage_file(c, e, 0);
	int rc;

	if (p == NULL)
		return al_error_oom();
	if ((rc = al_fs_read_file(p, &b)) < 0)
		goto out;
	if ((rc = al_pack__sha256_hex(
	         b.ptr != NULL ? b.ptr : (const uint8_t *)"", b.len, hex)) < 0)
		goto out;
	if (strcmp(hex, e->hex) != 0) {
		rc = al_error_set(
		    AL_EVERIFY, "staged '%s' changed since it was verified", p);
		goto out;
	}
	rc = al_json_parse(out, b.ptr != NULL ? b.ptr : (const uint8_t *)"",
	                   b.len, e->path);
out:
	al_buf_free(&b);
	free(p);
	return rc;
}

static int merge_releases(up_ctx *c, const up_entry *e)
{
	json_t *pk = NULL;
	char *what = NULL;
	int rc;

	if ((rc = load_staged(c, e, &pk)) < 0)
		return rc;
	if ((what = al_sprintf("pack '%s'", c->id)) == NULL)
		rc = al_error_oom();
	/* docs/security.md "Marks of untrusted imports": an untrusted run
	 * marks the records it adds before it adds them; a trusted one first
	 * takes out the marked records of the releases it records, and once
	 * its catalog, chart and sigstore records replaced the store's of
	 * their names, clears the marks of those names. An untrusted run
	 * never replaces the store's trusted root: its "sigstore" records of
	 * names the store holds are not merged */
	else if (marks_untrusted(c)) {
		if ((rc = al_store__untrusted_sigstore_keep(c->s, pk)) == 0 &&
		    (rc = al_store__untrusted_releases_mark(c->s, pk, c->id)) ==
		        0)
			rc = al_store__untrusted_records_mark(c->s, pk, c->id);
	} else if (marks_trusted(c))
		rc = al_store__untrusted_releases_vouch(c->s, pk);
	if (rc == 0)
		rc = al_store__releases_import(c->s, pk, what);
	if (rc == 0 && marks_trusted(c))
		rc = al_store__untrusted_records_vouch(c->s, pk);
	free(what);
	json_decref(pk);
	return rc;
}

/* A named index entry of the pack, checked before anything is tagged. */
typedef struct up_tag {
	const char *name; /* borrowed from the pack's index */
	al_descriptor d;
	int complete;
} up_tag;

/*
 * An index entry must name an image manifest or index: its media type
 * says so and, when the blob is in the store, the blob parses as one. A
 * layer or config named in the index would otherwise become a tag that
 * push, update and check trip over later.
 */
static int check_index_target(up_ctx *c, const char *name,
                              const al_descriptor *d)
{
	al_buf b = AL_BUF_INIT(AL_OCI_MANIFEST_MAX);
	char ds[AL_DIGEST_STRMAX];
	al_manifest m;
	int rc = 0;

	memset(&m, 0, sizeof(m));
	al_digest_str(&d->digest, ds);
	if (d->media_type == NULL || !al_media_type_is_manifest(d->media_type))
		return al_error_set(AL_EVERIFY,
		                    "index.json of pack '%s': '%s' names %s of "
		                    "media type '%s', not an image manifest or "
		                    "index: refused",
		                    c->id, name, ds,
		                    d->media_type != NULL ? d->media_type : "");
	if (al_store_has_blob(c->s, &d->digest, NULL) != 1 &&
	    (c->main == NULL ||
	     al_store_has_blob(c->main, &d->digest, NULL) != 1))
		return 0; /* incomplete: counted by the caller */
	if ((rc = al_pack__read_blob2(c->s, c->main, &d->digest, &b)) < 0 ||
	    (rc = al_manifest_parse(&m, b.ptr, b.len, d->media_type, ds)) < 0)
		rc = al_error_wrap(AL_EVERIFY,
		                   "index.json of pack '%s': '%s' names blob "
		                   "%s, which is not an image manifest or "
		                   "index: refused",
		                   c->id, name, ds);
	al_manifest_clear(&m);
	al_buf_free(&b);
	return rc;
}

/*
 * Rollback: a pack older (by sequence) than one imported before must not
 * move a tag the store has. The first such tag is named with its digest
 * in the store and the digest the pack would give it.
 */
static int check_rollback(up_ctx *c, const up_tag *tags, size_t n)
{
	char od[AL_DIGEST_STRMAX], nd[AL_DIGEST_STRMAX];
	const up_tag *first = NULL;
	size_t i, moved = 0;
	int rc = 0;

	if (c->opts->allow_rollback || c->sequence >= c->mark)
		return 0;
	for (i = 0; i < n; i++) {
		al_store_image img;
		if (tags[i].name == NULL || !tags[i].complete)
			continue;
		memset(&img, 0, sizeof(img));
		rc = al_store_find(c->s, tags[i].name, &img);
		if (rc == AL_ENOTFOUND) {
			al_error_clear();
			rc = 0;
			continue;
		}
		if (rc < 0)
			return rc;
		if (!al_digest_equal(&img.desc.digest, &tags[i].d.digest)) {
			if (first == NULL) {
				first = &tags[i];
				al_digest_str(&img.desc.digest, od);
			}
			moved++;
		}
		al_store_image_clear(&img);
	}
	if (first == NULL)
		return 0;
	return al_error_set(
	    AL_EVERIFY,
	    "pack '%s' (sequence %llu) is older than pack '%s' (sequence "
	    "%llu), imported before%s: it would roll tag '%s' back from %s "
	    "to %s%s; refused (--allow-rollback imports it anyway)",
	    c->id, (unsigned long long)c->sequence, c->mark_id,
	    (unsigned long long)c->mark,
	    c->keyid != NULL ? " with the same key" : "", first->name, od,
	    al_digest_str(&first->d.digest, nd),
	    moved > 1 ? " (and other tags)" : "");
}

/*
 * Untrusted run: mark every complete name of the pack that the store does
 * not already give the same digest (a name left as it was is not the
 * import's doing). Trusted run: clear the marks of every name it set.
 * Names by digest (REPO@sha256:...) too: the digest says which bytes, not
 * who vouched for them, and a manifest (a referrer, say) whose only name
 * is one an untrusted import set must not be served, packed or pushed as
 * vouched for (docs/security.md "Marks of untrusted imports").
 */
static int tag_marks(up_ctx *c, const up_tag *tags, size_t n)
{
	al_store_untrusted *v;
	size_t i, m = 0;
	int rc;

	if ((v = calloc(n + 1, sizeof(*v))) == NULL)
		return al_error_oom();
	for (i = 0; i < n; i++) {
		al_store_image img;
		int same;
		if (tags[i].name == NULL || !tags[i].complete)
			continue;
		if (marks_untrusted(c)) {
			memset(&img, 0, sizeof(img));
			same = al_store_find(c->s, tags[i].name, &img) == 0 &&
			       al_digest_equal(&img.desc.digest,
			                       &tags[i].d.digest);
			al_store_image_clear(&img);
			al_error_clear();
			if (same)
				continue;
		}
		v[m].kind = AL_STORE_UNTRUSTED_TAG;
		v[m].digest = tags[i].d.digest;
		v[m].name = (char *)tags[i].name;
		v[m].pack = (char *)c->id;
		m++;
	}
	rc = marks_untrusted(c) ? al_store_untrusted_mark(c->s, v, m)
	                        : al_store_untrusted_clear(c->s, v, m);
	free(v);
	return rc;
}

static int apply_index(up_ctx *c, const up_entry *e)
{
	json_t *idx = NULL, *arr, *v;
	up_tag *tags = NULL;
	size_t i, n = 0;
	int rc;

	if ((rc = load_staged(c, e, &idx)) < 0)
		return rc;
	arr = json_object_get(idx, "manifests");
	if (!json_is_array(arr)) {
		rc = al_error_set(
		    AL_EPARSE,
		    "index.json of pack '%s' has no \"manifests\" array",
		    c->id);
		goto out;
	}
	n = json_array_size(arr);
	if ((tags = calloc(n ? n : 1, sizeof(*tags))) == NULL) {
		rc = al_error_oom();
		goto out;
	}
	/* every entry checked (and the rollback rule applied) before the
	 * first tag changes */
	json_array_foreach(arr, i, v)
	{
		const char *name = al_json_str(
		    json_object_get(v, "annotations"), AL_ANNOT_REF_NAME);
		if (name == NULL || name[0] == '\0')
			continue;
		if ((rc = al_descriptor_from_json(
		         &tags[i].d, v, 1, "index.json of the pack")) < 0)
			goto out;
		tags[i].name = name;
		if ((rc = check_index_target(c, name, &tags[i].d)) < 0)
			goto out;
		tags[i].complete = al_pack__image_complete_in(
		    c->s, c->main, &tags[i].d.digest, tags[i].d.media_type, 0);
	}
	if ((rc = check_rollback(c, tags, n)) < 0)
		goto out;
	/* an untrusted run marks the names it moves before it moves them */
	if (marks_untrusted(c) && (rc = tag_marks(c, tags, n)) < 0)
		goto out;
	for (i = 0; i < n; i++) {
		if (tags[i].name == NULL)
			continue;
		if (!tags[i].complete) {
			c->res->images_incomplete++;
			al_log_warn("pack '%s': image '%s' lacks blobs in this "
			            "store, not added to the index",
			            c->id, tags[i].name);
			continue;
		}
		/* a quarantined delta's image whose manifest is the base's:
		 * whole with the store's blobs, nothing of it to hold here */
		if (c->main != NULL &&
		    al_store_has_blob(c->s, &tags[i].d.digest, NULL) != 1)
			continue;
		if ((rc = al_store_tag(c->s, tags[i].name, &tags[i].d)) < 0)
			goto out;
		al_log_debug("unpack: tagged '%s'", tags[i].name);
		/* the reference a renamed image came from (targetRepo) */
		{
			const char *o =
			    al_json_str(json_object_get(json_array_get(arr, i),
			                                "annotations"),
			                AL_ANNOT_ORIGIN);
			if (o != NULL && o[0] != '\0' &&
			    (rc = al_store_set_origin(c->s, tags[i].name, o)) <
			        0)
				goto out;
		}
		c->res->images_tagged++;
	}
	/* and a trusted one clears the marks of the names it set */
	if (marks_trusted(c) && (rc = tag_marks(c, tags, n)) < 0)
		goto out;
out:
	for (i = 0; i < n && tags != NULL; i++)
		if (tags[i].name != NULL)
			al_descriptor_clear(&tags[i].d);
	free(tags);
	json_decref(idx);
	return rc;
}

static void remove_stage(const char *stage)
{
	char **names = NULL;
	size_t n = 0, i;

	if (al_pack__list_dir(stage, &names, &n) < 0) {
		al_error_clear();
		return;
	}
	for (i = 0; i < n; i++) {
		char *p = al_path_join(stage, names[i]);
		if (p != NULL)
			unlink(p);
		free(p);
	}
	al_pack__free_list(names, n);
	rmdir(stage);
}

/* Remove the stage of an import that is recorded, and the store's
 * airlock/unpack when no other pack is half-imported. */
static void drop_stage(const char *root, const char *stage)
{
	char *p;

	if (al_fs_exists(stage) == 1)
		remove_stage(stage);
	if ((p = al_sprintf("%s/airlock/unpack", root)) != NULL)
		rmdir(p);
	free(p);
}

/* Remove temporary files a killed run left in the stage. */
static void clean_stage_tmp(const char *stage)
{
	char **names = NULL;
	size_t n = 0, i;

	if (al_pack__list_dir(stage, &names, &n) < 0) {
		al_error_clear();
		return;
	}
	for (i = 0; i < n; i++) {
		char *p;
		if (!al_str_startswith(names[i], ".tmp-"))
			continue;
		if ((p = al_path_join(stage, names[i])) != NULL)
			unlink(p);
		free(p);
	}
	al_pack__free_list(names, n);
}

/*
 * The import record STORE/airlock/imported/<id>.json (docs/pack.md): which
 * manifest (SHA-256 of its exact bytes) was imported, its sequence, and
 * whether --trust verified it, with which key. Records written before
 * this format hold the manifest itself: they read as untrusted.
 */
typedef struct import_rec {
	int exists;
	int trusted;
	char key[80]; /* "sha256:<hex>" of the key, "" when untrusted */
	char manifest[65];
	uint64_t sequence;
} import_rec;

static int read_record(const char *path, import_rec *r)
{
	al_buf b = AL_BUF_INIT(AL_PACK_MANIFEST_MAX);
	json_t *v = NULL, *seq;
	const char *k, *h;
	int rc;

	memset(r, 0, sizeof(*r));
	rc = al_fs_read_file(path, &b);
	if (rc == AL_ENOTFOUND) {
		al_error_clear();
		rc = 0;
		goto out;
	}
	if (rc < 0)
		goto out;
	if ((rc = al_json_parse(&v, b.ptr, b.len, path)) < 0) {
		rc = al_error_wrap(AL_EVERIFY, "import record '%s' is damaged",
		                   path);
		goto out;
	}
	seq = json_object_get(v, "sequence");
	if (seq != NULL &&
	    (!json_is_integer(seq) || json_integer_value(seq) < 0))
		goto damaged;
	r->sequence = seq != NULL ? (uint64_t)json_integer_value(seq) : 0;
	if (json_integer_value(json_object_get(v, "airlockImport")) == 1) {
		json_t *t = json_object_get(v, "trusted");
		h = al_json_str(v, "manifestSha256");
		k = al_json_str(v, "key");
		if (!json_is_boolean(t) || h == NULL || !al_pack__is_hex64(h) ||
		    (json_is_true(t) && (k == NULL || strlen(k) != 71 ||
		                         !al_str_startswith(k, "sha256:") ||
		                         !al_pack__is_hex64(k + 7))))
			goto damaged;
		memcpy(r->manifest, h, 65);
		r->trusted = json_is_true(t);
		if (r->trusted)
			memcpy(r->key, k, 72);
	} else if (json_integer_value(json_object_get(v, "airlockPack")) == 1) {
		if ((rc = al_pack__sha256_hex(b.ptr, b.len, r->manifest)) < 0)
			goto out;
	} else {
		goto damaged;
	}
	r->exists = 1;
	goto out;
damaged:
	rc = al_error_set(AL_EVERIFY,
	                  "import record '%s' is damaged: not an airlock "
	                  "import record",
	                  path);
out:
	json_decref(v);
	al_buf_free(&b);
	return rc;
}

/* 1 if the record is as trusted as this run asks: any record without
 * --trust, else one that this key verified. */
static int record_trusted_enough(const import_rec *r, const char *keyid)
{
	if (!r->exists)
		return 0;
	return keyid == NULL || (r->trusted && strcmp(r->key, keyid) == 0);
}

/*
 * STORE/airlock/pack-marks.json: per key, the highest sequence of a pack
 * imported with --trust and that key, and which pack it was:
 * {"airlockPackMarks":1,"keys":{"sha256:<hex>":{"sequence":N,"pack":ID}}}.
 * Only trusted imports raise it, and nothing lowers it, so neither a later
 * untrusted import of the same pack id nor a lost record can open the door
 * to a rollback. A missing file is empty; a damaged one is refused.
 */
static char *marks_path(const up_ctx *c)
{
	return al_sprintf("%s/airlock/pack-marks.json", al_store_path(c->s));
}

static int load_marks(const up_ctx *c, json_t **out)
{
	char *p = marks_path(c);
	json_t *v = NULL, *keys, *e;
	const char *k;
	int rc;

	if (p == NULL)
		return al_error_oom();
	rc = al_pack__load_store_json(&v, p, AL_PACK_META_MAX);
	if (rc == AL_ENOTFOUND) {
		al_error_clear();
		v = json_pack("{s:i, s:{}}", "airlockPackMarks", 1, "keys");
		rc = v == NULL ? al_error_oom() : 0;
	}
	if (rc < 0)
		goto out;
	keys = json_object_get(v, "keys");
	if (json_integer_value(json_object_get(v, "airlockPackMarks")) != 1 ||
	    !json_is_object(keys)) {
		rc = al_error_set(AL_EVERIFY,
		                  "store metadata '%s' is damaged: not an "
		                  "airlock pack marks file",
		                  p);
		goto out;
	}
	json_object_foreach(keys, k, e)
	{
		json_t *sq = json_object_get(e, "sequence");
		const char *id = al_json_str(e, "pack");
		if (!json_is_integer(sq) || json_integer_value(sq) < 0 ||
		    id == NULL || !al_pack_id_valid(id)) {
			rc = al_error_set(AL_EVERIFY,
			                  "store metadata '%s' is damaged: key "
			                  "'%s'",
			                  p, k);
			goto out;
		}
	}
	*out = v;
	v = NULL;
out:
	json_decref(v);
	free(p);
	return rc;
}

/* Raise the mark of this run's key to this pack's sequence. */
static int raise_mark(const up_ctx *c)
{
	json_t *v = NULL, *e;
	char *p = NULL;
	int rc;

	if (c->keyid == NULL)
		return 0;
	if ((rc = load_marks(c, &v)) < 0)
		return rc;
	e = json_object_get(json_object_get(v, "keys"), c->keyid);
	if (e != NULL && (uint64_t)json_integer_value(
	                     json_object_get(e, "sequence")) >= c->sequence)
		goto out;
	if (json_object_set_new(json_object_get(v, "keys"), c->keyid,
	                        json_pack("{s:I, s:s}", "sequence",
	                                  (json_int_t)c->sequence, "pack",
	                                  c->id)) < 0) {
		rc = al_error_oom();
		goto out;
	}
	if ((p = marks_path(c)) == NULL) {
		rc = al_error_oom();
		goto out;
	}
	rc = al_json_save_file(p, v, 1);
out:
	free(p);
	json_decref(v);
	return rc;
}

/*
 * The highest sequence among what this store imported before that counts
 * for this run: with --trust, the key's mark and the records of packs
 * verified with the same key (an untrusted import can never hold a
 * trusted one back); without, every mark and every other record.
 */
static int rollback_mark(up_ctx *c)
{
	char **names = NULL, *dir = NULL;
	json_t *marks = NULL, *e;
	const char *k;
	size_t n = 0, i;
	int rc;

	c->mark = 0;
	c->mark_id[0] = '\0';
	if ((rc = load_marks(c, &marks)) < 0)
		return rc;
	json_object_foreach(json_object_get(marks, "keys"), k, e)
	{
		uint64_t sq = (uint64_t)json_integer_value(
		    json_object_get(e, "sequence"));
		const char *id = al_json_str(e, "pack");
		if ((c->keyid == NULL || strcmp(k, c->keyid) == 0) &&
		    sq > c->mark && strcmp(id, c->id) != 0) {
			c->mark = sq;
			memcpy(c->mark_id, id, strlen(id) + 1);
		}
	}
	json_decref(marks);
	if ((dir = al_sprintf("%s/airlock/imported", al_store_path(c->s))) ==
	    NULL)
		return al_error_oom();
	if ((rc = al_pack__list_dir(dir, &names, &n)) < 0)
		goto out;
	for (i = 0; i < n; i++) {
		char id[AL_PACK_ID_MAX + 8], *p;
		size_t l = strlen(names[i]);
		import_rec r;
		if (l <= 5 || l - 5 > AL_PACK_ID_MAX ||
		    !al_str_endswith(names[i], ".json"))
			continue;
		memcpy(id, names[i], l - 5);
		id[l - 5] = '\0';
		if (!al_pack_id_valid(id) || strcmp(id, c->id) == 0)
			continue;
		if ((p = al_path_join(dir, names[i])) == NULL) {
			rc = al_error_oom();
			goto out;
		}
		rc = read_record(p, &r);
		free(p);
		if (rc < 0)
			goto out;
		if (record_trusted_enough(&r, c->keyid) &&
		    r.sequence > c->mark) {
			c->mark = r.sequence;
			memcpy(c->mark_id, id, l - 4);
		}
	}
out:
	al_pack__free_list(names, n);
	free(dir);
	return rc;
}

/* Write the import record: it describes the last import of this pack id
 * (an untrusted import of another manifest under a trusted pack's id makes
 * the record untrusted, so a later --trust run imports the real one again;
 * the key's mark in pack-marks.json stays). */
static int write_record(up_ctx *c, const char *path, const char *mhex)
{
	json_t *rec;
	char ts[32];
	int rc;

	al_pack__timestamp(ts, sizeof(ts));
	rec = json_pack("{s:i, s:s, s:s, s:I, s:s, s:b, s:o, s:s, s:s}",
	                "airlockImport", 1, "id", c->id, "manifestSha256", mhex,
	                "sequence", (json_int_t)c->sequence, "created",
	                c->created, "trusted", c->keyid != NULL, "key",
	                c->keyid != NULL ? json_string(c->keyid) : json_null(),
	                "imported", ts, "tool", "airlock " AL_VERSION_STRING);
	if (rec == NULL)
		return al_error_oom();
	rc = al_json_save_file(path, rec, 1);
	json_decref(rec);
	return rc;
}

/* Which pack dir holds: its manifest, or the id its volumes name. */
static int find_pack(const char *dir, char *id, int *has_manifest)
{
	char **names = NULL;
	size_t n = 0, i, found = 0;
	int rc;

	if ((rc = al_pack__list_dir(dir, &names, &n)) < 0)
		return rc;
	id[0] = '\0';
	*has_manifest = 0;
	for (i = 0; i < n; i++) {
		size_t l = strlen(names[i]);
		char cand[AL_PACK_ID_MAX + 1];
		if (!al_str_startswith(names[i], "airlock-") ||
		    !al_str_endswith(names[i], ".json") ||
		    l - 13 > AL_PACK_ID_MAX || l <= 13)
			continue;
		memcpy(cand, names[i] + 8, l - 13);
		cand[l - 13] = '\0';
		if (!al_pack_id_valid(cand))
			continue;
		if (found++ > 0 && strcmp(cand, id) != 0) {
			rc = al_error_set(
			    AL_EINVAL,
			    "'%s' holds the manifests of several packs ('%s', "
			    "'%s'): give one pack per directory",
			    dir, id, cand);
			goto out;
		}
		memcpy(id, cand, l - 12);
		*has_manifest = 1;
	}
	if (found == 0) {
		for (i = 0; i < n; i++) {
			size_t l = strlen(names[i]);
			char cand[AL_PACK_ID_MAX + 1];
			/* airlock-<id>-NNNN.tar */
			if (!al_str_startswith(names[i], "airlock-") ||
			    !al_str_endswith(names[i], ".tar") || l <= 17 ||
			    l - 17 > AL_PACK_ID_MAX)
				continue;
			memcpy(cand, names[i] + 8, l - 17);
			cand[l - 17] = '\0';
			if (names[i][l - 9] != '-' || !al_pack_id_valid(cand))
				continue;
			if (found++ > 0 && strcmp(cand, id) != 0) {
				rc = al_error_set(AL_EINVAL,
				                  "'%s' holds volumes of "
				                  "several packs ('%s', '%s')",
				                  dir, id, cand);
				goto out;
			}
			memcpy(id, cand, l - 16);
		}
	}
	if (found == 0)
		rc = al_error_set(
		    AL_ENOTFOUND,
		    "no pack manifest (airlock-<id>.json) or volume in '%s'",
		    dir);
out:
	al_pack__free_list(names, n);
	return rc;
}

static int read_optional(const char *path, al_buf *b, int *present)
{
	int rc = al_fs_read_file(path, b);

	*present = rc == 0;
	if (rc == AL_ENOTFOUND) {
		al_error_clear();
		return 0;
	}
	return rc;
}

static int push_missing(al_unpack_result *r, const char *name)
{
	char **g = realloc(r->missing, (r->nmissing + 1) * sizeof(*g));

	if (g == NULL)
		return al_error_oom();
	r->missing = g;
	if ((g[r->nmissing] = al_strdup(name)) == NULL)
		return al_error_oom();
	r->nmissing++;
	return 0;
}

void al_unpack_result_clear(al_unpack_result *r)
{
	size_t i;

	if (r == NULL)
		return;
	for (i = 0; i < r->nmissing; i++)
		free(r->missing[i]);
	free(r->missing);
	AL_RESULT_ZERO(r);
}

/* What the import still writes: every entry not in the store, and a split
 * blob once more while its parts are joined; checked against the free
 * space of the store's file system (mirror_plan.h). */
static int unpack_space(const up_ctx *c)
{
	uint64_t need = 0, joined = 0;
	size_t i;

	for (i = 0; i < c->nentries; i++) {
		const up_entry *e = &c->entries[i];
		if (e->done)
			continue;
		need += e->size;
		if (e->nparts > 0 && e->size > joined)
			joined = e->size;
	}
	need += joined;
	al_log_info("unpack: %llu bytes to import", (unsigned long long)need);
	if (c->opts->no_space_check || need == 0)
		return 0;
	return al_space_check(al_store_path(c->s), need, "the import");
}

static void ctx_free(up_ctx *c)
{
	size_t i;

	committer_stop(&c->commit);

	for (i = 0; i < c->nvols; i++)
		free(c->vols[i].name);
	free(c->vols);
	for (i = 0; i < c->nentries; i++) {
		free(c->entries[i].path);
		free(c->entries[i].parts);
	}
	free(c->entries);
	for (i = 0; i < c->nslots; i++)
		free(c->slots[i].name);
	free(c->slots);
	free(c->stage);
	free(c->chunk);
	al_hasher_free(c->hasher);
	al_hash_worker_free(c->hw);
}

/* Before any volume is read: the stage holds the manifest (and its
 * signature) of this run, so that a later run given only volumes finds
 * them. */
static int stage_manifest(up_ctx *c, int has_manifest, const al_buf *mraw,
                          const al_buf *sraw, int has_sig)
{
	char *p = NULL;
	int rc = 0;

	if ((rc = al_fs_mkdir_p(c->stage, 0755)) < 0)
		return rc;
	clean_stage_tmp(c->stage);
	if (!has_manifest)
		return 0;
	if ((p = al_sprintf("%s/manifest.json", c->stage)) == NULL)
		return al_error_oom();
	rc = al_fs_write_atomic(p, mraw->ptr, mraw->len);
	free(p);
	if (rc < 0 || !has_sig)
		return rc;
	if ((p = al_sprintf("%s/manifest.json.sig", c->stage)) == NULL)
		return al_error_oom();
	rc = al_fs_write_atomic(p, sraw->ptr, sraw->len);
	free(p);
	return rc;
}

/* Promotion: a blob of the quarantine q copied into the store; the blob
 * writer's commit checks it against the manifest's digest and size. */
static int fill_blob(up_ctx *c, al_store *q, up_entry *e)
{
	al_blob_writer *w = NULL;
	al_digest d;
	uint64_t size;
	size_t got, j;
	int fd = -1, rc;

	if ((rc = blob_digest(e, &d)) < 0)
		return rc;
	if ((rc = al_store_blob_open(q, &d, &fd, &size)) == AL_ENOTFOUND) {
		al_error_clear();
		return 0; /* left missing */
	}
	if (rc < 0)
		return rc;
	if ((rc = al_store_blob_begin(c->s, &d, e->size, &w)) < 0)
		goto out;
	while ((rc = al_fd_read(fd, c->chunk, AL_PACK_CHUNK, &got,
	                        "a quarantined blob")) == 0 &&
	       got > 0)
		if ((rc = al_blob_writer_write(w, c->chunk, got)) < 0)
			break;
	if (rc < 0)
		goto out;
	rc = al_blob_writer_commit(w);
	w = NULL;
	if (rc < 0)
		goto out;
	e->done = 1;
	for (j = 0; j < e->nparts; j++)
		e->parts[j].done = 1;
	c->res->entries_imported++;
	c->pi.bytes_done += e->size;
	al_log_debug("unpack: entry '%s' taken from the quarantine", e->path);
out:
	al_blob_writer_abort(w);
	close(fd);
	return rc;
}

/* Promotion: the bytes of a signature (found under q's signatures/ by
 * their SHA-256), index.json or releases.json (kept in the quarantine's
 * pack/) that hash to the manifest's entry, written where the entry goes. */
static int fill_file(up_ctx *c, const char *qstore, up_entry *e)
{
	al_buf b = AL_BUF_INIT(AL_PACK_META_MAX);
	char **names = NULL, *src = NULL, *dir = NULL, *dest = NULL;
	char hex[65], replaced[65] = "";
	size_t n = 0, i;
	int rc = 0;

	if (e->kind == AL_PK_SIG) {
		const char *slash = strrchr(e->path, '/');
		if ((dir = al_sprintf("%s/%.*s", qstore, (int)(slash - e->path),
		                      e->path)) == NULL)
			return al_error_oom();
		if ((rc = al_pack__list_dir(dir, &names, &n)) < 0)
			goto out;
		for (i = 0; i < n && src == NULL; i++) {
			char *p = al_path_join(dir, names[i]);
			if (p == NULL) {
				rc = al_error_oom();
				goto out;
			}
			if (al_str_startswith(names[i], "signature-") &&
			    file_matches(p, e->size, e->hex, 1))
				src = p;
			else
				free(p);
		}
	} else if ((src = al_sprintf("%s/pack/%s", c->qsrc,
	                             e->kind == AL_PK_INDEX
	                                 ? "index.json"
	                                 : "releases.json")) == NULL)
		return al_error_oom();
	if (src == NULL || !file_matches(src, e->size, e->hex, 1))
		goto out; /* left missing */
	if ((rc = al_fs_read_file(src, &b)) < 0 ||
	    (rc = al_pack__sha256_hex(
	         b.ptr != NULL ? b.ptr : (const uint8_t *)"", b.len, hex)) < 0)
		goto out;
	if (strcmp(hex, e->hex) != 0)
		goto out; /* changed since it was matched: left missing */
	if ((dest = stage_file(c, e, 0)) == NULL) {
		rc = al_error_oom();
		goto out;
	}
	if (e->kind == AL_PK_SIG && (rc = sig_dest(c, e, &dest, replaced)) < 0)
		goto out;
	if ((rc = al_fs_write_atomic(
	         dest, b.ptr != NULL ? b.ptr : (const uint8_t *)"", b.len)) <
	        0 ||
	    (rc = sig_unmark_replaced(c, e, replaced)) < 0)
		goto out;
	e->done = 1;
	c->res->entries_imported++;
	al_log_debug("unpack: entry '%s' taken from the quarantine", e->path);
out:
	al_pack__free_list(names, n);
	al_buf_free(&b);
	free(dest);
	free(src);
	free(dir);
	return rc;
}

/* Promotion: every entry still missing, taken from the quarantine
 * (c->qsrc) and checked against this run's (verified) manifest again.
 * What the quarantine lacks stays missing. */
static int fill_from_quarantine(up_ctx *c)
{
	al_store_opts qo = AL_STORE_OPTS_INIT;
	al_store *q = NULL;
	char *qstore;
	size_t i;
	int rc;

	qo.readonly = 1;
	if ((qstore = al_path_join(c->qsrc, "store")) == NULL)
		return al_error_oom();
	if ((rc = al_store_open(&q, qstore, &qo)) < 0)
		goto out;
	for (i = 0; i < c->nentries && rc == 0; i++) {
		up_entry *e = &c->entries[i];
		if (e->done)
			continue;
		rc = e->kind == AL_PK_BLOB ? fill_blob(c, q, e)
		                           : fill_file(c, qstore, e);
	}
out:
	al_store_free(q);
	free(qstore);
	return rc;
}

/* Import every entry still missing from the volumes of c->dir that hold
 * one (a volume not there is listed in c->res->missing), after the space
 * check; blobs whose parts were all staged by a killed run are joined
 * first. Entries left missing: 0 when volumes were missing, else
 * AL_EVERIFY. */
static int read_volumes(up_ctx *c, const char *id)
{
	char *p = NULL;
	size_t i, v;
	int rc = 0;

	if ((c->chunk = malloc(AL_PACK_CHUNK)) == NULL)
		return al_error_oom();
	if ((rc = al_hasher_new(&c->hasher, AL_DIGEST_SHA256)) < 0 ||
	    (rc = al_hash_worker_new(&c->hw)) < 0 || (rc = scan_done(c)) < 0 ||
	    /* docs/lifecycle.md: refused before anything is imported */
	    (rc = unpack_space(c)) < 0 ||
	    /* marked before they are written: a crash leaves no unmarked
	     * untrusted signature */
	    (marks_untrusted(c) && (rc = sig_marks(c, 1)) < 0) ||
	    (rc = committer_start(&c->commit, c->s)) < 0)
		return rc;
	/* a run killed between staging the last part of a blob and joining
	 * them */
	for (i = 0; i < c->nentries; i++) {
		size_t j, staged = 0;

		for (j = 0; j < c->entries[i].nparts; j++)
			staged += c->entries[i].parts[j].done;
		if (!c->entries[i].done && c->entries[i].nparts > 0 &&
		    staged == c->entries[i].nparts &&
		    (rc = assemble(c, &c->entries[i])) < 0)
			return rc;
	}
	if (c->qsrc != NULL && (rc = fill_from_quarantine(c)) < 0)
		return rc;
	for (i = 0; i < c->nentries; i++) {
		c->pi.items_total++;
		c->pi.bytes_total += c->entries[i].size;
	}
	for (v = 1; v <= c->nvols && rc == 0; v++) {
		int needed = 0;

		for (i = 0; i < c->nslots && !needed; i++)
			needed = c->slots[i].volume == v &&
			         slot_needed(c, &c->slots[i]);
		if (!needed)
			continue;
		if ((p = al_path_join(c->dir, c->vols[v - 1].name)) == NULL)
			return al_error_oom();
		if (al_fs_exists(p) != 1)
			rc = push_missing(c->res, c->vols[v - 1].name);
		else
			rc = read_volume(c, (unsigned)v, p);
		free(p);
	}
	if (rc < 0)
		return rc;
	for (i = 0; i < c->nentries; i++)
		if (!c->entries[i].done && c->res->nmissing == 0)
			return al_error_set(AL_EVERIFY,
			                    "pack '%s': entries still missing "
			                    "after reading every volume",
			                    id);
	return 0;
}

/* Every entry verified and in place: now the metadata, the index last,
 * then the import record (manifest mhex) at imported; the stage goes. */
static int finish_import(up_ctx *c, const char *imported, const char *mhex)
{
	char *p;
	size_t i;
	int rc;

	for (i = 0; i < c->nentries; i++)
		if (c->entries[i].kind == AL_PK_RELEASES &&
		    (rc = merge_releases(c, &c->entries[i])) < 0)
			return rc;
	for (i = 0; i < c->nentries; i++)
		if (c->entries[i].kind == AL_PK_INDEX &&
		    (rc = apply_index(c, &c->entries[i])) < 0)
			return rc;
	/* a trusted pack vouches for every signature it carries */
	if (marks_trusted(c) && (rc = sig_marks(c, 0)) < 0)
		return rc;
	if ((p = al_sprintf("%s/airlock/imported", al_store_path(c->s))) ==
	    NULL)
		return al_error_oom();
	rc = al_fs_mkdir_p(p, 0755);
	free(p);
	/* the names durable in index.json (not only in the journal, which is
	 * not fsynced) before the record says the import is complete: after
	 * a power loss, a record must never stand for names that are gone */
	if (rc < 0 || (rc = al_store_flush(c->s)) < 0 ||
	    (rc = raise_mark(c)) < 0 ||
	    (rc = write_record(c, imported, mhex)) < 0)
		return rc;
	al_log_debug("unpack: pack '%s' recorded", c->id);
	drop_stage(al_store_path(c->s), c->stage);
	c->res->complete = 1;
	progress(c, 1);
	return 0;
}

int al_unpack(al_store *s, const char *dir, const al_unpack_opts *opts,
              al_unpack_result *res)
{
	return al_pack_unpack(s, dir, opts, res);
}

/*
 * Quarantine: the pack's manifest, signature, index.json and releases.json
 * kept in STORE/airlock/quarantine/<id>/pack (what al_pack_promote imports
 * from, with the quarantine store's blobs and signatures), before the
 * stage that holds them goes.
 */
static int keep_quarantine_meta(up_ctx *c, const char *qroot,
                                const al_buf *mraw, const al_buf *sraw,
                                int has_sig)
{
	char *dir = al_path_join(qroot, "pack"), *p = NULL, *src = NULL;
	al_buf b = AL_BUF_INIT(AL_PACK_META_MAX);
	size_t i;
	int rc;

	if (dir == NULL)
		return al_error_oom();
	if ((rc = al_fs_mkdir_p(dir, 0755)) < 0)
		goto out;
	if ((p = al_sprintf("%s/airlock-%s.json", dir, c->id)) == NULL)
		goto oom;
	if ((rc = al_fs_write_atomic(
	         p, mraw->ptr != NULL ? mraw->ptr : (const uint8_t *)"",
	         mraw->len)) < 0)
		goto out;
	free(p);
	if ((p = al_sprintf("%s/airlock-%s.json.sig", dir, c->id)) == NULL)
		goto oom;
	if (has_sig && (rc = al_fs_write_atomic(p, sraw->ptr, sraw->len)) < 0)
		goto out;
	for (i = 0; i < c->nentries; i++) {
		const up_entry *e = &c->entries[i];
		if (e->kind != AL_PK_INDEX && e->kind != AL_PK_RELEASES)
			continue;
		free(p);
		free(src);
		src = stage_file(c, e, 0);
		p = al_path_join(dir, e->kind == AL_PK_INDEX ? "index.json"
		                                             : "releases.json");
		if (src == NULL || p == NULL)
			goto oom;
		al_buf_reset(&b);
		if ((rc = al_fs_read_file(src, &b)) < 0 ||
		    (rc = al_fs_write_atomic(
		         p, b.ptr != NULL ? b.ptr : (const uint8_t *)"",
		         b.len)) < 0)
			goto out;
	}
	goto out;
oom:
	rc = al_error_oom();
out:
	al_buf_free(&b);
	free(src);
	free(p);
	free(dir);
	return rc;
}

int al_pack_unpack(al_store *s, const char *dir, const al_unpack_opts *opts,
                   al_unpack_result *res)
{
	int rc;

	if ((rc = AL_RESULT_VERSION_CHECK("al_unpack_result", res, version,
	                                  AL_UNPACK_RESULT_VERSION)) < 0)
		return rc;
	return al_pack__unpack_run(s, dir, opts, res, NULL);
}

/* What one run of al_pack__unpack_run holds besides its context. */
typedef struct up_run {
	al_store *s;      /* the store given (the quarantine's owner) */
	const char *dir;  /* the media, or the quarantine's pack/ */
	const char *qsrc; /* promotion: the quarantine root, else NULL */
	char id[AL_PACK_ID_MAX + 1];
	int quarantine;   /* this run imports into the quarantine */
	int has_manifest; /* dir holds the manifest (else the stage's) */
	int has_sig;
	char *qroot;    /* STORE/airlock/quarantine/<id> */
	char *root;     /* the store written: STORE or qroot/store */
	char *imported; /* root's import record of the pack */
	char *mpath, *spath;
	char keyid[80];
	char mhex[65];   /* SHA-256 of the manifest's bytes */
	import_rec rec;  /* root's record of the pack */
	import_rec mrec; /* quarantine: the store's own record of it */
	al_buf mraw, sraw;
	json_t *m;
	al_store *qs; /* the quarantine store, once opened */
} up_run;

static void run_free(up_run *r)
{
	json_decref(r->m);
	al_buf_free(&r->mraw);
	al_buf_free(&r->sraw);
	free(r->mpath);
	free(r->spath);
	free(r->imported);
	free(r->root);
	free(r->qroot);
	al_store_free(r->qs);
}

/*
 * Which pack, and where it goes: docs/security.md "Untrusted imports":
 * what no key verified goes to a store of its own, and nothing of it
 * reaches this one. Only paths and records are read here; the quarantine
 * is opened (created) once the manifest was read and its base checked.
 */
static int run_begin(up_run *r, up_ctx *c)
{
	int rc;

	if ((rc = find_pack(r->dir, r->id, &r->has_manifest)) < 0)
		return rc;
	memcpy(c->res->id, r->id, sizeof(c->res->id));
	r->quarantine = r->qsrc == NULL && c->opts->trust_key == NULL &&
	                !c->opts->accept_untrusted;
	if ((r->qroot = al_pack__quarantine_root(r->s, r->id)) == NULL)
		return al_error_oom();
	{
		/* what a removal killed before its end left (a promote killed
		 * after its import, then taken by a trusted unpack) */
		char *q =
		    al_sprintf("%s/airlock/quarantine", al_store_path(r->s));
		if (q == NULL)
			return al_error_oom();
		rc = al_pack__quarantine_sweep(q);
		free(q);
		if (rc < 0)
			return rc;
	}
	if (r->quarantine) {
		/* the store's own record: a pack it holds is not quarantined */
		char *p = al_sprintf("%s/airlock/imported/%s.json",
		                     al_store_path(r->s), r->id);
		if (p == NULL)
			return al_error_oom();
		rc = read_record(p, &r->mrec);
		free(p);
		if (rc < 0)
			return rc;
		c->quarantine = 1;
		c->res->quarantined = 1;
		r->root = al_path_join(r->qroot, "store");
	} else {
		r->root = al_strdup(al_store_path(r->s));
	}
	if (r->root == NULL ||
	    (c->stage = al_sprintf("%s/airlock/unpack/%s", r->root, r->id)) ==
	        NULL ||
	    (r->imported = al_sprintf("%s/airlock/imported/%s.json", r->root,
	                              r->id)) == NULL)
		return al_error_oom();
	if (c->opts->trust_key != NULL) {
		if ((rc = al_pack__key_id(c->opts->trust_key, r->keyid,
		                          sizeof(r->keyid))) < 0)
			return rc;
		c->keyid = r->keyid;
	}
	return read_record(r->imported, &r->rec);
}

/* The manifest (the media's, or the one an earlier run saved in the
 * stage) read, with its SHA-256; 1 when the import is already complete
 * without it (only volumes given, and the record trusted enough). */
static int run_read_manifest(up_run *r, up_ctx *c)
{
	int rc;

	if (r->has_manifest) {
		r->mpath = al_sprintf("%s/airlock-%s.json", r->dir, r->id);
		r->spath = al_sprintf("%s/airlock-%s.json.sig", r->dir, r->id);
	} else {
		r->mpath = al_sprintf("%s/manifest.json", c->stage);
		r->spath = al_sprintf("%s/manifest.json.sig", c->stage);
	}
	if (r->mpath == NULL || r->spath == NULL)
		return al_error_oom();
	if (!r->has_manifest && r->rec.exists && al_fs_exists(r->mpath) != 1) {
		/* only volumes, and the import completed: without the
		 * manifest, only the record can say how it was trusted */
		if (record_trusted_enough(&r->rec, c->keyid)) {
			c->res->already = 1;
			c->res->complete = 1;
			return 1;
		}
		return al_error_set(
		    AL_ENOTFOUND,
		    "pack '%s' was imported into this store %s: "
		    "give the directory holding airlock-%s.json "
		    "and its signature to import it with --trust",
		    r->id,
		    r->rec.trusted ? "with another key" : "without --trust",
		    r->id);
	}
	if ((rc = check_regular(r->mpath, "manifest")) < 0 ||
	    (rc = check_regular(r->spath, "signature")) < 0)
		return rc;
	if ((rc = al_fs_read_file(r->mpath, &r->mraw)) < 0) {
		if (rc == AL_ENOTFOUND && !r->has_manifest)
			rc = al_error_set(
			    AL_ENOTFOUND,
			    "no manifest for pack '%s' in '%s', and no earlier "
			    "run saved one: "
			    "give the directory with airlock-%s.json",
			    r->id, r->dir, r->id);
		return rc;
	}
	return al_pack__sha256_hex(r->mraw.ptr, r->mraw.len, r->mhex);
}

/*
 * "already imported" means: these exact manifest bytes, imported with at
 * least the trust this run asks for. A pack id imported without --trust
 * (a forged manifest, say) is imported again, and verified, by a run with
 * --trust. 1 when there is nothing to import.
 */
static int run_already(up_run *r, up_ctx *c)
{
	int rc;

	if (r->quarantine && r->mrec.exists &&
	    strcmp(r->mrec.manifest, r->mhex) == 0) {
		/* the store has it: nothing of it stays quarantined */
		c->res->already = 1;
		c->res->complete = 1;
		c->res->quarantined = 0;
		rc = al_pack__quarantine_remove(r->qroot);
		return rc < 0 ? rc : 1;
	}
	if (r->quarantine && r->rec.exists &&
	    strcmp(r->rec.manifest, r->mhex) != 0)
		return al_error_set(AL_EEXIST,
		                    "pack '%s' is quarantined with another "
		                    "manifest (sha256:%s); drop it first "
		                    "(airlock unpack --drop %s)",
		                    r->id, r->rec.manifest, r->id);
	if (record_trusted_enough(&r->rec, c->keyid) &&
	    strcmp(r->rec.manifest, r->mhex) == 0) {
		c->res->already = 1;
		c->res->complete = 1;
		/* a run killed after its record, before this */
		drop_stage(r->root, c->stage);
		return 1;
	}
	return 0;
}

/* The signature first (with --trust): nothing of an untrusted pack is
 * even parsed further. Then the manifest parsed. */
static int run_verify(up_run *r, up_ctx *c)
{
	int rc;

	if ((rc = read_optional(r->spath, &r->sraw, &r->has_sig)) < 0) {
		if (rc == AL_ELIMIT)
			rc = al_error_set(AL_EVERIFY,
			                  "signature '%s' is not an Ed25519 "
			                  "signature (over 64 bytes)",
			                  r->spath);
		return rc;
	}
	if (c->opts->trust_key != NULL) {
		if (!r->has_sig)
			rc = al_error_set(AL_EVERIFY,
			                  "pack '%s' is not signed (no '%s') "
			                  "and --trust was given",
			                  r->id, r->spath);
		else if ((rc = al_pack__verify(
		              c->opts->trust_key,
		              r->mraw.ptr != NULL ? r->mraw.ptr
		                                  : (const uint8_t *)"",
		              r->mraw.len, r->sraw.ptr, r->sraw.len)) < 0)
			rc = al_error_wrap(rc, "pack manifest '%s'", r->mpath);
		/* the saved manifest may be one an untrusted run left */
		if (rc < 0 && !r->has_manifest)
			rc = al_error_wrap(
			    rc,
			    "give the directory holding "
			    "airlock-%s.json and its signature "
			    "(the manifest saved in the store does "
			    "not verify)",
			    r->id);
		if (rc < 0)
			return rc;
	}
	if ((rc = al_json_parse(
	         &r->m, r->mraw.ptr != NULL ? r->mraw.ptr : (const uint8_t *)"",
	         r->mraw.len, r->mpath)) < 0)
		return rc;
	if ((rc = parse_manifest(c, r->m, r->mpath, r->id)) < 0)
		return rc;
	c->res->volumes_total = c->nvols;
	return 0;
}

/*
 * A delta builds on what the store itself imported (a quarantined delta
 * reads its base's blobs from there, never copies them). A base that is
 * only quarantined is refused, naming the promotion that would import
 * it: before anything of the delta is written.
 */
static int check_base(const up_run *r, const up_ctx *c)
{
	char *p, *q;
	int ex, qex;

	if (c->base[0] == '\0')
		return 0;
	p = al_sprintf("%s/airlock/imported/%s.json", al_store_path(r->s),
	               c->base);
	q = al_pack__quarantine_root(r->s, c->base);
	if (p == NULL || q == NULL) {
		free(p);
		free(q);
		return al_error_oom();
	}
	ex = al_fs_exists(p);
	qex = al_fs_exists(q);
	free(p);
	free(q);
	if (ex == 1)
		return 0;
	if (qex == 1)
		return al_error_set(
		    AL_ENOTFOUND,
		    "pack '%s' is a delta on pack '%s', which is still "
		    "quarantined in this store: promote it first (airlock "
		    "unpack --promote %s --trust KEY) or drop it",
		    r->id, c->base, c->base);
	return al_error_set(AL_ENOTFOUND,
	                    "pack '%s' is a delta on pack '%s', which this "
	                    "store never imported: unpack '%s' first",
	                    r->id, c->base, c->base);
}

/* Open (create) the quarantine store this run imports into; the store
 * given is then only read (a delta's base, its blobs). */
static int run_open_quarantine(up_run *r, up_ctx *c)
{
	int rc;

	if (!r->quarantine)
		return 0;
	if ((rc = al_pack__quarantine_open(r->qroot, &r->qs)) < 0)
		return rc;
	c->main = r->s;
	c->s = r->qs;
	return 0;
}

/* Stage, volumes, and once every entry is in place the import's end. */
static int run_import(up_run *r, up_ctx *c)
{
	size_t i;
	int rc, complete = 1;

	if ((rc = run_open_quarantine(r, c)) < 0 ||
	    (rc = rollback_mark(c)) < 0 ||
	    (rc = stage_manifest(c, r->has_manifest, &r->mraw, &r->sraw,
	                         r->has_sig)) < 0 ||
	    (rc = read_volumes(c, r->id)) < 0)
		return rc;
	for (i = 0; i < c->nentries && complete; i++)
		complete = c->entries[i].done;
	if (!complete)
		return 0;
	if (r->quarantine &&
	    (rc = keep_quarantine_meta(c, r->qroot, &r->mraw, &r->sraw,
	                               r->has_sig)) < 0)
		return rc;
	if ((rc = finish_import(c, r->imported, r->mhex)) < 0)
		return rc;
	/* a trusted import of the pack replaces what was quarantined of it */
	if (c->keyid != NULL && r->qsrc == NULL && al_fs_exists(r->qroot) == 1)
		rc = al_pack__quarantine_remove(r->qroot);
	return rc;
}

int al_pack__unpack_run(al_store *s, const char *dir,
                        const al_unpack_opts *opts, al_unpack_result *res,
                        const char *qsrc)
{
	static const al_unpack_opts defaults = AL_UNPACK_OPTS_INIT;
	al_unpack_result local = AL_UNPACK_RESULT_INIT;
	up_ctx c;
	up_run r;
	int rc;

	memset(&c, 0, sizeof(c));
	memset(&r, 0, sizeof(r));
	memset(&local, 0, sizeof(local));
	if (res == NULL)
		res = &local;
	al_unpack_result_clear(res);
	if (opts != NULL &&
	    (rc = al_opts_version_check("al_unpack_opts", opts->version,
	                                AL_UNPACK_OPTS_VERSION)) < 0)
		return rc;
	c.s = s;
	c.dir = dir;
	c.opts = opts != NULL ? opts : &defaults;
	c.res = res;
	c.start_ms = al_clock_now_ms();
	c.pi.phase = "unpack";

	/* an oc-mirror v2 archive set instead of a pack (pack_ocmirror.c) */
	if (al_pack__ocmirror_detect(dir))
		return al_pack__ocmirror_unpack(s, dir, c.opts, res);
	c.qsrc = qsrc;
	r.s = s;
	r.dir = dir;
	r.qsrc = qsrc;
	al_buf_init(&r.mraw, AL_PACK_MANIFEST_MAX);
	al_buf_init(&r.sraw, AL_PACK_SIGLEN + 1);
	if ((rc = run_begin(&r, &c)) < 0 ||
	    (rc = run_read_manifest(&r, &c)) != 0 ||
	    (rc = run_already(&r, &c)) != 0 || (rc = run_verify(&r, &c)) < 0 ||
	    (rc = check_base(&r, &c)) < 0)
		goto out;
	rc = run_import(&r, &c);
out:
	if (rc > 0)
		rc = 0; /* nothing left to import */
	res->bytes = c.pi.bytes_done;
	ctx_free(&c);
	run_free(&r);
	al_unpack_result_clear(&local);
	return rc;
}
