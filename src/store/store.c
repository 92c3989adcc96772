/* store.c: the on-disk store: OCI image layout, content-addressed blobs,
 * index.json entries, lock, check and gc. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "airlock/clock.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "json_int.h"
#include "airlock/log.h"
#include "airlock/store.h"
#include "oci_int.h"
#include "store_int.h"
#include "error_int.h"
#include "store_cache_int.h"

/* Bounds on the files of the layout itself. */
#define STORE_INDEX_MAX (64 * AL_MIB)
#define STORE_INDEX_ENTRIES_MAX 200000
#define STORE_SMALL_MAX (64 * AL_KIB) /* oci-layout */
#define STORE_RELEASES_MAX (16 * AL_MIB)
#define STORE_SIGNATURE_MAX (256 * AL_KIB)
#define STORE_NAME_MAX 4096
#define STORE_WALK_DEPTH 8
/* Partial downloads (blobs/.partial/<algo>-<hex>): kept only from this
 * size on (smaller blobs start again), at most this many files (the
 * oldest unlocked one makes room for a new one). */
#define STORE_PARTIAL_MIN AL_MIB
#define STORE_PARTIALS_MAX 32
#define STORE_REHASH_CHUNK (256 * AL_KIB)
/* The index journal (airlock/index.journal, docs/store.md): index.json is
 * rewritten once per STORE_JOURNAL_BATCH names or STORE_JOURNAL_MS after
 * the first unwritten one, and when the store is flushed or closed. */
#define STORE_JOURNAL_BATCH 512
#define STORE_JOURNAL_MS 1000
#define STORE_JOURNAL_MAX (256 * AL_MIB)
#define STORE_JOURNAL_LINE_MAX (64 * AL_KIB)

/* One index.json entry. */
typedef struct store_entry {
	char *name; /* its ref.name annotation, NULL when it has none */
	char *json; /* the descriptor, compact JSON */
} store_entry;

static void entry_clear(store_entry *e);

struct al_store {
	char *path;
	int readonly;
	al_lock *lock;
	pthread_mutex_t
	    mu; /* guards index, active_writers and layout file writes */
	/* index.json with the journal applied: its top level without
	 * "manifests", and each entry as compact JSON text (a jansson tree
	 * per entry costs several times the memory at catalog scale) */
	json_t *top;
	store_entry *ents;
	size_t nents, cap;
	size_t *slots; /* ref name hash: entry position + 1, 0 empty */
	size_t nslots; /* a power of two, at least twice the named entries */
	size_t nnamed;
	unsigned active_writers;
	int jfd;           /* airlock/index.journal, -1 until first written */
	unsigned pending;  /* journal records index.json does not hold yet */
	uint64_t first_ms; /* when the first of them was written */
	unsigned dirty;    /* bit (1 << algo): blob directories to fsync */
	/* signatures/: numbering reads the directory and then writes the
	 * next file, one save at a time (the store lock serialises
	 * processes) */
	pthread_mutex_t sig_mu;
	json_t *resolved; /* al_store__resolved_*: key -> digest, under mu */
};

struct al_blob_writer {
	al_store *s;
	al_digest expected;
	int learn; /* begun without a digest: expected is set at commit */
	uint64_t expected_size;
	uint64_t written;
	al_tmpfile *tmp;
	al_hasher *h;
	al_hash_worker *hw; /* borrowed; NULL: hash on this thread */
	int partial;        /* tmp is blobs/.partial/...: kept on abort */
};

const char *al_store_path(const al_store *s)
{
	return s->path;
}

static char *store_file(const al_store *s, const char *rel)
{
	return al_path_join(s->path, rel);
}

/* Read and strictly parse a JSON file bounded by max. */
static int load_json(json_t **out, const char *path, size_t max)
{
	al_buf b = AL_BUF_INIT(max);
	json_error_t jerr;
	json_t *v;
	int rc;

	if ((rc = al_fs_read_file(path, &b)) < 0)
		goto out;
	v = json_loadb((const char *)b.ptr, b.len, JSON_REJECT_DUPLICATES,
	               &jerr);
	if (v == NULL) {
		rc = al_error_set(AL_EPARSE, "'%s': line %d, column %d: %s",
		                  path, jerr.line, jerr.column, jerr.text);
		goto out;
	}
	*out = v;
out:
	al_buf_free(&b);
	return rc;
}

/* Serialise v (with a trailing newline) and write it atomically. */
static int save_json(const char *path, const json_t *v, size_t flags)
{
	char *txt = json_dumps(v, flags);
	char *line = NULL;
	int rc;

	if (txt == NULL)
		return al_error_set(AL_ENOMEM, "cannot serialise '%s'", path);
	line = al_sprintf("%s\n", txt);
	if (line == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	rc = al_fs_write_atomic(path, line, strlen(line));
out:
	free(line);
	free(txt);
	return rc;
}

/* The ref.name annotation of an index entry, or NULL. */
static const char *entry_name(const json_t *e)
{
	json_t *a = json_object_get(e, "annotations");
	json_t *n = json_object_get(a, AL_ANNOT_REF_NAME);

	return json_is_string(n) ? json_string_value(n) : NULL;
}

static int validate_index(const json_t *root, const char *path)
{
	json_t *sv, *arr, *e;
	al_descriptor d;
	size_t i;
	int rc;

	if (!json_is_object(root))
		return al_error_set(AL_EPARSE, "'%s': not a JSON object", path);
	sv = json_object_get(root, "schemaVersion");
	if (!json_is_integer(sv) || json_integer_value(sv) != 2)
		return al_error_set(AL_EPARSE, "'%s': schemaVersion must be 2",
		                    path);
	arr = json_object_get(root, "manifests");
	if (!json_is_array(arr))
		return al_error_set(AL_EPARSE,
		                    "'%s': 'manifests' is not an array", path);
	if (json_array_size(arr) > STORE_INDEX_ENTRIES_MAX)
		return al_error_set(AL_ELIMIT, "'%s': more than %d entries",
		                    path, STORE_INDEX_ENTRIES_MAX);
	json_array_foreach(arr, i, e)
	{
		if ((rc = al_descriptor_from_json(&d, e, 1, path)) < 0)
			return al_error_wrap(rc, "entry %zu", i);
		al_descriptor_clear(&d);
	}
	return 0;
}

/* Remove files named ".tmp-*" (or every file when all) in dir: what a
 * killed writer left behind. Missing dir is fine. */
static void remove_temps(const char *dir, int all, al_check_fn fn, void *ud,
                         al_check_result *res)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	struct stat st;

	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		char *p;

		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (!all && strncmp(de->d_name, ".tmp-", 5) != 0)
			continue;
		p = al_path_join(dir, de->d_name);
		if (p == NULL)
			continue;
		if (lstat(p, &st) == 0 && !S_ISDIR(st.st_mode) &&
		    unlink(p) == 0) {
			al_log_debug("store: removed stale temporary file '%s'",
			             p);
			if (res != NULL) {
				res->removed++;
				res->bytes_removed += (uint64_t)st.st_size;
			}
			if (fn != NULL)
				fn(ud, AL_CHECK_REMOVED, p,
				   "stale temporary file");
		}
		free(p);
	}
	closedir(d);
}

/* The signature writer stores signatures/sha256=<hex>/signature-<n>
 * atomically: its leftovers are .tmp-* files in those directories. */
static void remove_signature_temps(al_store *s, al_check_fn fn, void *ud,
                                   al_check_result *res)
{
	char *sigs = store_file(s, "signatures");
	struct dirent *de;
	DIR *d;

	if (sigs == NULL)
		return;
	d = opendir(sigs);
	while (d != NULL && (de = readdir(d)) != NULL) {
		char *p;

		if (strncmp(de->d_name, "sha256=", 7) != 0)
			continue;
		p = al_path_join(sigs, de->d_name);
		if (p != NULL)
			remove_temps(p, 0, fn, ud, res);
		free(p);
	}
	if (d != NULL)
		closedir(d);
	free(sigs);
}

static void remove_all_temps(al_store *s, al_check_fn fn, void *ud,
                             al_check_result *res)
{
	static const char *const dirs[] = {"blobs/.tmp", "", "airlock",
	                                   "airlock/packs"};
	size_t i;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		char *p = dirs[i][0] != '\0' ? store_file(s, dirs[i])
		                             : al_strdup(s->path);

		if (p != NULL)
			remove_temps(p, i == 0, fn, ud, res);
		free(p);
	}
	remove_signature_temps(s, fn, ud, res);
}

/* 1 if dir is missing, empty, or holds only what an interrupted create
 * of ours leaves (so create may continue), 0 otherwise. */
static int dir_creatable(const char *dir)
{
	static const char *const ours[] = {"index.json", "blobs", "airlock",
	                                   "signatures"};
	DIR *d = opendir(dir);
	struct dirent *de;
	int ok = 1;
	size_t i;

	if (d == NULL)
		return errno == ENOENT;
	while (ok && (de = readdir(d)) != NULL) {
		int known = 0;

		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0 ||
		    strncmp(de->d_name, ".tmp-", 5) == 0)
			continue;
		for (i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
			known |= strcmp(de->d_name, ours[i]) == 0;
		ok = known;
	}
	closedir(d);
	return ok;
}

static int mkdir_in(const al_store *s, const char *rel)
{
	char *p = store_file(s, rel);
	int rc;

	if (p == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	rc = al_fs_mkdir_p(p, 0755);
	free(p);
	return rc;
}

static int create_layout(al_store *s)
{
	static const char layout[] = "{\"imageLayoutVersion\":\"1.0.0\"}\n";
	static const char index[] =
	    "{\"schemaVersion\":2,\"mediaType\":\"" AL_MT_OCI_INDEX
	    "\",\"manifests\":[]}\n";
	char *p = NULL;
	int rc;

	if ((rc = mkdir_in(s, "blobs/sha256")) < 0 ||
	    (rc = mkdir_in(s, "signatures")) < 0)
		return rc;
	p = store_file(s, "index.json");
	if (p == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	rc = al_fs_exists(p);
	if (rc == 0)
		rc = al_fs_write_atomic(p, index, sizeof(index) - 1);
	free(p);
	if (rc < 0)
		return rc;
	/* oci-layout last: a layout is complete once it exists. */
	p = store_file(s, "oci-layout");
	if (p == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	rc = al_fs_write_atomic(p, layout, sizeof(layout) - 1);
	free(p);
	return rc;
}

static int check_layout_file(const al_store *s)
{
	char *p = store_file(s, "oci-layout");
	json_t *v = NULL, *ver;
	int rc;

	if (p == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	if ((rc = load_json(&v, p, STORE_SMALL_MAX)) < 0)
		goto out;
	ver = json_object_get(v, "imageLayoutVersion");
	if (!json_is_string(ver) ||
	    strncmp(json_string_value(ver), "1.", 2) != 0)
		rc = al_error_set(
		    AL_EPARSE, "'%s': imageLayoutVersion must be \"1.x\"", p);
out:
	json_decref(v);
	free(p);
	return rc;
}

/* Bound on al_store__resolved entries: past it nothing more is kept (the
 * tags are asked again). */
#define STORE_RESOLVED_MAX 200000

int al_store__writable(const al_store *s)
{
	return !s->readonly;
}

int al_store__resolved_put(al_store *s, const char *key, const al_digest *d)
{
	char ds[AL_DIGEST_STRMAX];
	int rc = 0;

	al_digest_str(d, ds);
	pthread_mutex_lock(&s->mu);
	if (s->resolved == NULL)
		s->resolved = json_object();
	if (s->resolved != NULL &&
	    json_object_size(s->resolved) < STORE_RESOLVED_MAX &&
	    json_object_set_new(s->resolved, key, json_string(ds)) != 0)
		rc = al_error_set(AL_ENOMEM, "out of memory");
	pthread_mutex_unlock(&s->mu);
	return rc;
}

int al_store__resolved_get(al_store *s, const char *key, al_digest *d)
{
	json_t *v;
	int found = 0;

	pthread_mutex_lock(&s->mu);
	v = s->resolved != NULL ? json_object_get(s->resolved, key) : NULL;
	if (json_is_string(v) &&
	    al_digest_parse_str(d, json_string_value(v)) == 0)
		found = 1;
	pthread_mutex_unlock(&s->mu);
	return found;
}

void al_store_free(al_store *s)
{
	if (s == NULL)
		return;
	/* What cannot be written now stays in the journal, which the next
	 * open applies: nothing is lost by a failure here. */
	if (!s->readonly && s->top != NULL)
		(void)al_store_flush(s);
	if (s->jfd >= 0)
		close(s->jfd);
	for (size_t i = 0; i < s->nents; i++)
		entry_clear(&s->ents[i]);
	free(s->ents);
	free(s->slots);
	json_decref(s->top);
	json_decref(s->resolved);
	al_lock_free(s->lock);
	pthread_mutex_destroy(&s->mu);
	pthread_mutex_destroy(&s->sig_mu);
	free(s->path);
	free(s);
}

static int check_name(const char *name)
{
	if (name == NULL || name[0] == '\0')
		return al_error_set(AL_EINVAL,
		                    "an image name must not be empty");
	if (strlen(name) > STORE_NAME_MAX)
		return al_error_set(
		    AL_EINVAL, "image name '%.64s...' is longer than %d bytes",
		    name, STORE_NAME_MAX);
	return 0;
}

static void entry_clear(store_entry *e)
{
	free(e->name);
	free(e->json);
	e->name = NULL;
	e->json = NULL;
}

/* The text form of an index entry. */
static int entry_from_json(store_entry *out, const json_t *e)
{
	const char *n = entry_name(e);

	out->json = json_dumps(e, JSON_COMPACT);
	out->name = n != NULL ? al_strdup(n) : NULL;
	if (out->json == NULL || (n != NULL && out->name == NULL)) {
		entry_clear(out);
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	return 0;
}

/* The tree of an entry, for the caller to release. */
static int entry_tree(const store_entry *e, json_t **out)
{
	json_error_t jerr;

	*out = json_loads(e->json, JSON_REJECT_DUPLICATES, &jerr);
	if (*out == NULL)
		return al_error_set(AL_ENOMEM,
		                    "cannot read back an index "
		                    "entry: %s",
		                    jerr.text);
	return 0;
}

static uint64_t name_hash(const char *name)
{
	uint64_t h = 14695981039346656037ull; /* FNV-1a */

	for (; *name != '\0'; name++) {
		h ^= (unsigned char)*name;
		h *= 1099511628211ull;
	}
	return h;
}

/* Position of the entry named name (the first, when a foreign layout
 * names two alike), or -1. */
static long find_entry(const al_store *s, const char *name)
{
	size_t mask = s->nslots - 1, k;

	if (s->nslots == 0)
		return -1;
	for (k = (size_t)name_hash(name) & mask; s->slots[k] != 0;
	     k = (k + 1) & mask) {
		const store_entry *e = &s->ents[s->slots[k] - 1];

		if (strcmp(e->name, name) == 0)
			return (long)(s->slots[k] - 1);
	}
	return -1;
}

/* Name entry pos in the table, unless an earlier entry has its name. */
static void slot_add(al_store *s, size_t pos)
{
	size_t mask = s->nslots - 1, k;
	const char *name = s->ents[pos].name;

	for (k = (size_t)name_hash(name) & mask; s->slots[k] != 0;
	     k = (k + 1) & mask)
		if (strcmp(s->ents[s->slots[k] - 1].name, name) == 0)
			return;
	s->slots[k] = pos + 1;
	s->nnamed++;
}

/* The name table from the entries, with room for want named entries. */
static int rebuild_names(al_store *s, size_t want)
{
	size_t n = 16, i;
	size_t *slots;

	while (n < 2 * want + 2)
		n *= 2;
	slots = calloc(n, sizeof(*slots));
	if (slots == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	free(s->slots);
	s->slots = slots;
	s->nslots = n;
	s->nnamed = 0;
	for (i = 0; i < s->nents; i++)
		if (s->ents[i].name != NULL)
			slot_add(s, i);
	return 0;
}

/* Insert e (taken over) at position pos; in memory only, with s->mu held
 * (or before the store is shared). */
static int index_insert(al_store *s, size_t pos, store_entry *e)
{
	if (s->nents >= STORE_INDEX_ENTRIES_MAX) {
		entry_clear(e);
		return al_error_set(AL_ELIMIT,
		                    "store '%s' already names %d images",
		                    s->path, STORE_INDEX_ENTRIES_MAX);
	}
	if (s->nents == s->cap) {
		size_t cap = s->cap > 0 ? s->cap * 2 : 64;
		store_entry *v = realloc(s->ents, cap * sizeof(*v));

		if (v == NULL) {
			entry_clear(e);
			return al_error_set(AL_ENOMEM, "out of memory");
		}
		s->ents = v;
		s->cap = cap;
	}
	memmove(&s->ents[pos + 1], &s->ents[pos],
	        (s->nents - pos) * sizeof(*s->ents));
	s->ents[pos] = *e;
	s->nents++;
	memset(e, 0, sizeof(*e));
	if (pos + 1 < s->nents || 2 * (s->nnamed + 1) + 2 > s->nslots)
		return rebuild_names(s, s->nnamed + 1);
	if (s->ents[pos].name != NULL)
		slot_add(s, pos);
	return 0;
}

/* Put e (taken over) at its name's place, or append it. In memory only;
 * with s->mu held. */
static int index_put_entry(al_store *s, store_entry *e)
{
	long i = e->name != NULL ? find_entry(s, e->name) : -1;

	if (i >= 0) {
		entry_clear(&s->ents[i]);
		s->ents[i] = *e;
		memset(e, 0, sizeof(*e));
		return 0;
	}
	return index_insert(s, s->nents, e);
}

/* Put a copy of entry at its name's place or at the end. */
static int index_put(al_store *s, const json_t *entry)
{
	store_entry e;
	int rc;

	if ((rc = entry_from_json(&e, entry)) < 0)
		return rc;
	return index_put_entry(s, &e);
}

/* Remove the entry named name from memory, into *old when not NULL;
 * with s->mu held. */
static int index_remove(al_store *s, const char *name, store_entry *old,
                        size_t *pos)
{
	long i = find_entry(s, name);

	if (i < 0)
		return al_error_set(AL_ENOTFOUND,
		                    "no image named '%s' in store '%s'", name,
		                    s->path);
	if (old != NULL)
		*old = s->ents[i];
	else
		entry_clear(&s->ents[i]);
	if (pos != NULL)
		*pos = (size_t)i;
	memmove(&s->ents[i], &s->ents[i + 1],
	        (s->nents - (size_t)i - 1) * sizeof(*s->ents));
	s->nents--;
	return rebuild_names(s, s->nnamed);
}

/* The entries from a loaded index.json tree, which keeps the rest. */
static int index_take(al_store *s, json_t *root)
{
	json_t *arr = json_object_get(root, "manifests"), *e;
	size_t i;
	int rc;

	s->cap = json_array_size(arr) > 0 ? json_array_size(arr) : 16;
	s->ents = calloc(s->cap, sizeof(*s->ents));
	if (s->ents == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	json_array_foreach(arr, i, e)
	{
		if ((rc = entry_from_json(&s->ents[i], e)) < 0)
			return rc;
		s->nents++;
	}
	if (json_object_del(root, "manifests") != 0)
		return al_error_set(AL_ENOMEM, "out of memory");
	return rebuild_names(s, s->nents);
}

/* index.json on its way out, through a 64 KiB buffer. */
typedef struct index_out {
	al_tmpfile *t;
	size_t len;
	char buf[64 * 1024];
} index_out;

/* Append n bytes, writing the buffer out whenever it is full. */
static int out_put(index_out *w, const char *p, size_t n)
{
	int rc;

	while (n > 0) {
		size_t k = sizeof(w->buf) - w->len;

		if (k > n)
			k = n;
		memcpy(w->buf + w->len, p, k);
		w->len += k;
		p += k;
		n -= k;
		if (w->len == sizeof(w->buf)) {
			if ((rc = al_tmpfile_write(w->t, w->buf, w->len)) < 0)
				return rc;
			w->len = 0;
		}
	}
	return 0;
}

/* Write index.json atomically, streaming: the top level with the entries
 * as "manifests", never the whole text in memory. */
static int index_write(const al_store *s, const char *path)
{
	index_out *w = calloc(1, sizeof(*w));
	char *top = json_dumps(s->top, JSON_COMPACT);
	const char *sep;
	size_t i, n;
	int rc;

	if (w == NULL || top == NULL) {
		rc = al_error_set(AL_ENOMEM, "cannot serialise '%s'", path);
		goto out;
	}
	if ((rc = al_tmpfile_new(&w->t, s->path)) < 0)
		goto out;
	/* top is "{...}": all but its closing brace, then the array */
	n = strlen(top) - 1;
	sep = n > 1 ? ",\"manifests\":[" : "\"manifests\":[";
	if ((rc = out_put(w, top, n)) < 0 ||
	    (rc = out_put(w, sep, strlen(sep))) < 0)
		goto out;
	for (i = 0; i < s->nents; i++)
		if ((i > 0 && (rc = out_put(w, ",", 1)) < 0) ||
		    (rc = out_put(w, s->ents[i].json,
		                  strlen(s->ents[i].json))) < 0)
			goto out;
	if ((rc = out_put(w, "]}\n", 3)) < 0 ||
	    (rc = al_tmpfile_write(w->t, w->buf, w->len)) < 0)
		goto out;
	rc = al_tmpfile_commit(w->t, path); /* frees it */
	w->t = NULL;
out:
	if (w != NULL)
		al_tmpfile_free(w->t);
	free(w);
	free(top);
	return rc;
}

/* fsync the blob directories that gained names since the last time, so
 * that index.json never outlives, on a power loss, a blob it names. */
static int sync_dirty_dirs(al_store *s)
{
	int rc;

	if ((s->dirty & (1u << AL_DIGEST_SHA256)) &&
	    (rc = al_store_sync_blob_dir(s, AL_DIGEST_SHA256)) < 0)
		return rc;
	if ((s->dirty & (1u << AL_DIGEST_SHA512)) &&
	    (rc = al_store_sync_blob_dir(s, AL_DIGEST_SHA512)) < 0)
		return rc;
	s->dirty = 0;
	return 0;
}

/* Empty a journal this process has not opened (one a killed writer left):
 * 0, or -1 with errno. */
static int empty_journal_file(const al_store *s)
{
	char *p = store_file(s, "airlock/index.journal");
	int rc;

	if (p == NULL) {
		errno = ENOMEM;
		return -1;
	}
	rc = truncate(p, 0);
	if (rc != 0 && errno == ENOENT)
		rc = 0;
	free(p);
	return rc;
}

/* Write index.json from memory (atomically), then empty the journal.
 * With s->mu held. A crash between the two replays records index.json
 * already holds: applying a record twice changes nothing. */
static int compact(al_store *s)
{
	char *p;
	int rc;

	if ((rc = sync_dirty_dirs(s)) < 0)
		return rc;
	p = store_file(s, "index.json");
	if (p == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	rc = index_write(s, p);
	free(p);
	if (rc < 0)
		return rc;
	if (s->jfd >= 0 ? ftruncate(s->jfd, 0) != 0
	                : empty_journal_file(s) != 0)
		return al_error_set(
		    AL_EIO, "cannot empty '%s/airlock/index.journal': %s",
		    s->path, strerror(errno));
	s->pending = 0;
	return 0;
}

/* Append one record (a line of JSON) to the journal: one write(2) of the
 * whole line, so a kill -9 leaves it whole or absent. With s->mu held. */
static int journal_append(al_store *s, const json_t *rec)
{
	char *txt = NULL, *line = NULL, *p = NULL;
	size_t n;
	ssize_t w;
	int rc = 0;

	if (s->jfd < 0) {
		p = store_file(s, "airlock/index.journal");
		if (p == NULL)
			return al_error_set(AL_ENOMEM, "out of memory");
		s->jfd =
		    open(p, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
		if (s->jfd < 0) {
			rc = al_error_set(AL_EIO, "cannot open '%s': %s", p,
			                  strerror(errno));
			goto out;
		}
	}
	txt = json_dumps(rec, JSON_COMPACT);
	line = txt != NULL ? al_sprintf("%s\n", txt) : NULL;
	if (line == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	n = strlen(line);
	w = write(s->jfd, line, n);
	if (w < 0 || (size_t)w != n) {
		rc = al_error_set(
		    AL_EIO, "cannot write '%s/airlock/index.journal': %s",
		    s->path, w < 0 ? strerror(errno) : "short write");
		goto out;
	}
	if (s->pending++ == 0)
		s->first_ms = al_clock_now_ms();
	if (s->pending >= STORE_JOURNAL_BATCH ||
	    al_clock_now_ms() - s->first_ms >= STORE_JOURNAL_MS)
		rc = compact(s);
out:
	free(line);
	free(txt);
	free(p);
	return rc;
}

/* One journal record applied to memory: {"op":"tag","entry":{...}} or
 * {"op":"untag","name":"..."}. A tag whose manifest the store lacks (a
 * power loss took its blob) is dropped: the next mirror names it again. */
static int replay_record(al_store *s, const json_t *rec, const char *what)
{
	const char *op = json_string_value(json_object_get(rec, "op"));
	json_t *entry = json_object_get(rec, "entry");
	al_descriptor d;
	const char *name;
	int rc;

	if (op != NULL && strcmp(op, "untag") == 0) {
		name = json_string_value(json_object_get(rec, "name"));
		if (name == NULL)
			return al_error_set(AL_EPARSE,
			                    "%s: untag without a name", what);
		rc = index_remove(s, name, NULL, NULL);
		return rc == AL_ENOTFOUND ? 0 : rc;
	}
	if (op == NULL || strcmp(op, "tag") != 0 || !json_is_object(entry))
		return al_error_set(AL_EPARSE, "%s: not a tag or untag record",
		                    what);
	name = entry_name(entry);
	if (name == NULL || check_name(name) < 0)
		return al_error_set(AL_EPARSE, "%s: a tag without a valid name",
		                    what);
	if ((rc = al_descriptor_from_json(&d, entry, 1, what)) < 0)
		return rc;
	rc = al_store_has_blob(s, &d.digest, NULL);
	al_descriptor_clear(&d);
	if (rc <= 0)
		return rc;
	return index_put(s, entry);
}

/*
 * Apply airlock/index.journal (what a killed writer had named but not yet
 * written into index.json) and, in a writable store, write index.json and
 * empty the journal. Only the last line may be torn (a power loss): it is
 * dropped; a bad line before it is an error naming the line.
 */
static int replay_journal(al_store *s)
{
	al_buf b = AL_BUF_INIT(STORE_JOURNAL_MAX);
	char *p = store_file(s, "airlock/index.journal"), *what = NULL;
	size_t off = 0, line = 0, applied = 0;
	int rc;

	if (p == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	rc = al_fs_read_file(p, &b);
	if (rc == AL_ENOTFOUND) {
		rc = 0;
		goto out;
	}
	if (rc < 0)
		goto out;
	while (off < b.len) {
		const uint8_t *nl = memchr(b.ptr + off, '\n', b.len - off);
		size_t n =
		    nl != NULL ? (size_t)(nl - b.ptr) - off : b.len - off;
		json_error_t jerr;
		json_t *rec;

		line++;
		if (nl == NULL)
			break; /* torn last record */
		free(what);
		what = al_sprintf("'%s' line %zu", p, line);
		if (what == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		if (n > STORE_JOURNAL_LINE_MAX) {
			rc = al_error_set(
			    AL_ELIMIT, "%s: longer than %lu bytes", what,
			    (unsigned long)STORE_JOURNAL_LINE_MAX);
			goto out;
		}
		rec = json_loadb((const char *)b.ptr + off, n,
		                 JSON_REJECT_DUPLICATES, &jerr);
		if (rec == NULL) {
			rc = al_error_set(AL_EPARSE, "%s: %s", what, jerr.text);
			goto out;
		}
		rc = replay_record(s, rec, what);
		json_decref(rec);
		if (rc < 0)
			goto out;
		applied++;
		off += n + 1;
	}
	if (!s->readonly && (applied > 0 || b.len > 0)) {
		pthread_mutex_lock(&s->mu);
		rc = compact(s);
		pthread_mutex_unlock(&s->mu);
	}
out:
	free(what);
	free(p);
	al_buf_free(&b);
	return rc;
}

int al_store_flush(al_store *s)
{
	int rc = 0;

	if (s->readonly)
		return 0;
	pthread_mutex_lock(&s->mu);
	if (s->pending > 0 || s->dirty != 0)
		rc = s->pending > 0 ? compact(s) : sync_dirty_dirs(s);
	pthread_mutex_unlock(&s->mu);
	return rc;
}

/* The path itself or the nearest existing ancestor, when it is not a
 * directory (a store path under a regular file), into buf; else 0. */
static int file_in_the_way(const char *path, char *buf, size_t cap)
{
	struct stat st;
	char *slash;

	if (snprintf(buf, cap, "%s", path) >= (int)cap)
		return 0;
	for (;;) {
		if (stat(buf, &st) == 0)
			return !S_ISDIR(st.st_mode);
		if (errno != ENOENT && errno != ENOTDIR)
			return 0;
		slash = strrchr(buf, '/');
		if (slash == NULL || slash == buf)
			return 0;
		*slash = '\0';
	}
}

int al_store_open(al_store **out, const char *path, const al_store_opts *opts)
{
	al_store_opts def = AL_STORE_OPTS_INIT;
	al_store *s = NULL;
	char *p = NULL;
	int rc = 0, have;

	if (opts == NULL)
		opts = &def;
	if (path == NULL || path[0] == '\0')
		return al_error_set(AL_EINVAL, "no store path");
	if (opts->version > AL_STORE_OPTS_VERSION)
		return al_error_set(AL_EINVAL,
		                    "al_store_opts version %u not supported "
		                    "(this library: %d): store '%s'",
		                    opts->version, AL_STORE_OPTS_VERSION, path);
	if (opts->create && opts->readonly)
		return al_error_set(
		    AL_EINVAL, "cannot create the read-only store '%s'", path);
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	if (pthread_mutex_init(&s->mu, NULL) != 0) {
		free(s);
		return al_error_set(AL_ENOMEM, "cannot create a mutex");
	}
	if (pthread_mutex_init(&s->sig_mu, NULL) != 0) {
		pthread_mutex_destroy(&s->mu);
		free(s);
		return al_error_set(AL_ENOMEM, "cannot create a mutex");
	}
	s->readonly = opts->readonly;
	s->jfd = -1;
	s->path = al_strdup(path);
	p = s->path != NULL ? store_file(s, "oci-layout") : NULL;
	if (s->path == NULL || p == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	if ((have = al_fs_exists(p)) < 0) {
		rc = have;
		goto out;
	}
	if (!have) {
		char file[4096];

		if (file_in_the_way(path, file, sizeof(file))) {
			rc = strcmp(file, path) == 0
			         ? al_error_set(AL_ENOTFOUND,
			                        "'%s' is a file, not a store "
			                        "directory",
			                        path)
			         : al_error_set(
			               AL_ENOTFOUND,
			               "'%s' is under '%s', a file, not "
			               "a directory",
			               path, file);
			goto out;
		}
		if (!opts->create) {
			rc = al_error_set(AL_ENOTFOUND,
			                  "'%s' is not a store: no oci-layout",
			                  path);
			goto out;
		}
		if (!dir_creatable(path)) {
			rc = al_error_set(AL_EEXIST,
			                  "cannot create a store in '%s': the "
			                  "directory is not empty",
			                  path);
			goto out;
		}
	}
	if (!s->readonly) {
		free(p);
		p = store_file(s, "airlock/lock");
		if (p == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		if ((rc = mkdir_in(s, "airlock")) < 0)
			goto out;
		if ((rc = al_lock_acquire(&s->lock, p, opts->lock_wait_ms)) < 0)
			goto out;
		if (!have && (rc = create_layout(s)) < 0)
			goto out;
	}
	if ((rc = check_layout_file(s)) < 0)
		goto out;
	if (!s->readonly) {
		if ((rc = mkdir_in(s, "blobs/sha256")) < 0 ||
		    (rc = mkdir_in(s, "blobs/.tmp")) < 0 ||
		    (rc = mkdir_in(s, "signatures")) < 0 ||
		    (rc = mkdir_in(s, "airlock/packs")) < 0)
			goto out;
		/* We hold the lock: every temporary file is a dead writer's. */
		remove_all_temps(s, NULL, NULL, NULL);
	}
	free(p);
	p = store_file(s, "index.json");
	if (p == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	{
		json_t *root = NULL;

		if ((rc = load_json(&root, p, STORE_INDEX_MAX)) < 0)
			goto out;
		if ((rc = validate_index(root, p)) < 0 ||
		    (rc = index_take(s, root)) < 0) {
			json_decref(root);
			goto out;
		}
		s->top = root;
	}
	if ((rc = replay_journal(s)) < 0)
		goto out;
	*out = s;
	s = NULL;
out:
	free(p);
	al_store_free(s);
	return rc;
}

char *al_store_blob_path(const al_store *s, const al_digest *d)
{
	char hex[AL_DIGEST_STRMAX];

	al_digest_hex(d, hex);
	return al_sprintf("%s/blobs/%s/%s", s->path,
	                  al_digest_algo_name(d->algo), hex);
}

int al_store_has_blob(al_store *s, const al_digest *d, uint64_t *size)
{
	char *p = al_store_blob_path(s, d);
	struct stat st;
	int rc;

	if (p == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	if (lstat(p, &st) != 0) {
		rc = errno == ENOENT
		         ? 0
		         : al_error_errno(errno, "cannot stat '%s'", p);
	} else if (!S_ISREG(st.st_mode)) {
		rc = 0;
	} else {
		if (size != NULL)
			*size = (uint64_t)st.st_size;
		rc = 1;
	}
	free(p);
	return rc;
}

int al_store_blob_open(al_store *s, const al_digest *d, int *fd, uint64_t *size)
{
	char *p = al_store_blob_path(s, d);
	char ds[AL_DIGEST_STRMAX];
	struct stat st;
	int f = -1, rc = 0;

	if (p == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	f = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (f < 0) {
		if (errno == ENOENT)
			rc = al_error_set(AL_ENOTFOUND,
			                  "blob '%s' is not in store '%s'",
			                  al_digest_str(d, ds), s->path);
		else
			rc = al_error_errno(errno, "cannot open '%s'", p);
		goto out;
	}
	if (fstat(f, &st) != 0) {
		rc = al_error_errno(errno, "cannot stat '%s'", p);
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = al_error_set(AL_EVERIFY, "'%s' is not a regular file", p);
		goto out;
	}
	*fd = f;
	f = -1;
	if (size != NULL)
		*size = (uint64_t)st.st_size;
out:
	if (f >= 0)
		close(f);
	free(p);
	return rc;
}

int al_store_read_blob(al_store *s, const al_digest *d, al_buf *out)
{
	uint8_t chunk[16384];
	char ds[AL_DIGEST_STRMAX], gs[AL_DIGEST_STRMAX];
	size_t orig = out->len;
	uint64_t size = 0, total = 0;
	al_hasher *h = NULL;
	al_digest got;
	int fd = -1, rc;

	al_digest_str(d, ds);
	if ((rc = al_store_blob_open(s, d, &fd, &size)) < 0)
		return rc;
	if (size > out->max - out->len) {
		rc = al_error_set(AL_ELIMIT,
		                  "blob '%s' is %llu bytes, more than %zu", ds,
		                  (unsigned long long)size, out->max);
		goto out;
	}
	if ((rc = al_hasher_new(&h, d->algo)) < 0)
		goto out;
	for (;;) {
		size_t r;

		if ((rc = al_fd_read(fd, chunk, sizeof(chunk), &r, ds)) < 0)
			goto out;
		if (r == 0)
			break;
		total += r;
		if (total > size) {
			rc = al_error_set(AL_EVERIFY,
			                  "blob '%s' changed while it was read",
			                  ds);
			goto out;
		}
		if ((rc = al_hasher_update(h, chunk, r)) < 0 ||
		    (rc = al_buf_append(out, chunk, r)) < 0)
			goto out;
	}
	if (out->ptr == NULL && (rc = al_buf_append(out, "", 0)) < 0)
		goto out;
	if ((rc = al_hasher_final(h, &got)) < 0)
		goto out;
	if (!al_digest_equal(&got, d))
		rc = al_error_set(AL_EVERIFY,
		                  "blob '%s' in store '%s' is corrupt: its "
		                  "bytes hash to '%s'",
		                  ds, s->path, al_digest_str(&got, gs));
out:
	if (rc < 0 && out->ptr != NULL) {
		out->len = orig;
		out->ptr[orig] = '\0';
	}
	al_hasher_free(h);
	if (fd >= 0)
		close(fd);
	return rc;
}

int al_store_blob_begin(al_store *s, const al_digest *expected,
                        uint64_t expected_size, al_blob_writer **out)
{
	al_blob_writer *w = NULL;
	char *dir = NULL;
	int rc;

	if (s->readonly)
		return al_error_set(AL_EINVAL, "store '%s' is read-only",
		                    s->path);
	if (expected == NULL && expected_size > 0)
		return al_error_set(AL_EINVAL,
		                    "a blob writer without an expected digest "
		                    "takes no expected size");
	w = calloc(1, sizeof(*w));
	dir = store_file(s, "blobs/.tmp");
	if (w == NULL || dir == NULL) {
		free(w);
		free(dir);
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	w->s = s;
	if (expected != NULL)
		w->expected = *expected;
	else
		w->expected.algo = AL_DIGEST_SHA256;
	w->learn = expected == NULL;
	w->expected_size = expected_size;
	pthread_mutex_lock(&s->mu);
	s->active_writers++;
	pthread_mutex_unlock(&s->mu);
	if ((rc = al_hasher_new(&w->h, w->expected.algo)) < 0 ||
	    (rc = al_tmpfile_new(&w->tmp, dir)) < 0)
		goto out;
	*out = w;
	w = NULL;
out:
	free(dir);
	al_blob_writer_abort(w);
	return rc;
}

/* "STORE/blobs/.partial/<algo>-<hex>". Caller frees. */
static char *partial_path(const al_store *s, const al_digest *d)
{
	char ds[AL_DIGEST_STRMAX];
	char *colon;

	al_digest_str(d, ds);
	colon = strchr(ds, ':');
	if (colon != NULL)
		*colon = '-';
	return al_sprintf("%s/blobs/.partial/%s", s->path, ds);
}

/* 1 if the file at path is not held by a writer (and so may go). */
static int partial_unlocked(const char *path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	int ok;

	if (fd < 0)
		return 0;
	ok = flock(fd, LOCK_EX | LOCK_NB) == 0;
	close(fd);
	return ok;
}

/* Remove path unless a writer or an upload holds its flock. The lock is
 * held while the file goes: one that opened it a moment before and locks
 * it now finds the name gone. 1 removed, 0 kept. */
int al_store__unlink_unheld(const char *path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	int gone = 0;

	if (fd < 0)
		return 0;
	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		gone = unlink(path) == 0;
	close(fd);
	return gone;
}

void al_store__make_room(const char *dir, size_t max, const char *what)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char *oldest = NULL;
	time_t oldest_t = 0;
	size_t n = 0;

	while (d != NULL && (de = readdir(d)) != NULL) {
		struct stat st;
		char *p;

		if (de->d_name[0] == '.')
			continue;
		p = al_path_join(dir, de->d_name);
		if (p == NULL)
			break;
		if (lstat(p, &st) != 0 || !S_ISREG(st.st_mode)) {
			free(p);
			continue;
		}
		n++;
		if ((oldest == NULL || st.st_mtime < oldest_t) &&
		    partial_unlocked(p)) {
			free(oldest);
			oldest = p;
			oldest_t = st.st_mtime;
		} else {
			free(p);
		}
	}
	if (d != NULL)
		closedir(d);
	if (n >= max && oldest != NULL && al_store__unlink_unheld(oldest))
		al_log_debug("store: removed %s '%s' to make room", what,
		             oldest);
	free(oldest);
}

/* Hash the first n bytes of fd into h. */
static int rehash_prefix(int fd, uint64_t n, al_hasher *h, const char *path)
{
	uint8_t *buf = malloc(STORE_REHASH_CHUNK);
	uint64_t pos = 0;
	int rc = 0;

	if (buf == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	while (pos < n) {
		size_t want = n - pos < STORE_REHASH_CHUNK
		                  ? (size_t)(n - pos)
		                  : (size_t)STORE_REHASH_CHUNK;
		ssize_t r = pread(fd, buf, want, (off_t)pos);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			rc = r < 0
			         ? al_error_errno(errno, "cannot read '%s'",
			                          path)
			         : al_error_set(AL_EIO,
			                        "'%s' shrank while read", path);
			break;
		}
		if ((rc = al_hasher_update(h, buf, (size_t)r)) < 0)
			break;
		pos += (uint64_t)r;
	}
	free(buf);
	return rc;
}

int al_store_blob_resume(al_store *s, const al_digest *expected,
                         uint64_t expected_size, al_blob_writer **out,
                         uint64_t *offset)
{
	al_blob_writer *w = NULL;
	char *dir = NULL, *path = NULL;
	uint64_t have;
	int rc;

	*offset = 0;
	if (expected == NULL || expected_size < STORE_PARTIAL_MIN)
		return al_store_blob_begin(s, expected, expected_size, out);
	if (s->readonly)
		return al_error_set(AL_EINVAL, "store '%s' is read-only",
		                    s->path);
	dir = store_file(s, "blobs/.partial");
	path = partial_path(s, expected);
	w = calloc(1, sizeof(*w));
	if (dir == NULL || path == NULL || w == NULL) {
		free(w);
		w = NULL;
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	w->s = s;
	w->expected = *expected;
	w->expected_size = expected_size;
	pthread_mutex_lock(&s->mu);
	s->active_writers++;
	pthread_mutex_unlock(&s->mu);
	if ((rc = al_hasher_new(&w->h, expected->algo)) < 0 ||
	    (rc = al_fs_mkdir_p(dir, 0755)) < 0)
		goto out;
	if (al_fs_exists(path) == 0)
		al_store__make_room(dir, STORE_PARTIALS_MAX,
		                    "partial download");
	rc = al_tmpfile_open_partial(&w->tmp, path);
	if (rc == AL_ELOCKED) {
		/* another writer continues it: this one starts afresh */
		al_error_clear();
		al_blob_writer_abort(w);
		w = NULL;
		rc = al_store_blob_begin(s, expected, expected_size, out);
		goto out;
	}
	if (rc < 0)
		goto out;
	w->partial = 1;
	have = al_tmpfile_size(w->tmp);
	if (have >= expected_size) {
		/* complete yet never renamed, or longer than the blob: the
		 * bytes are not trusted to be this blob's */
		if ((rc = al_tmpfile_truncate(w->tmp)) < 0)
			goto out;
		have = 0;
	}
	if (have > 0) {
		if ((rc = rehash_prefix(al_tmpfile_fd(w->tmp), have, w->h,
		                        path)) < 0)
			goto out;
		al_log_debug("store: continuing partial download '%s' at "
		             "byte %llu",
		             path, (unsigned long long)have);
	}
	w->written = have;
	*offset = have;
	*out = w;
	w = NULL;
out:
	if (w != NULL)
		w->partial = 0; /* failed before use: not kept */
	al_blob_writer_abort(w);
	free(dir);
	free(path);
	return rc;
}

void al_blob_writer_abort(al_blob_writer *w)
{
	if (w == NULL)
		return;
	if (w->partial && w->written >= STORE_PARTIAL_MIN)
		al_tmpfile_keep(w->tmp);
	else
		al_tmpfile_free(w->tmp);
	al_hasher_free(w->h);
	pthread_mutex_lock(&w->s->mu);
	w->s->active_writers--;
	pthread_mutex_unlock(&w->s->mu);
	free(w);
}

int al_blob_writer_write(al_blob_writer *w, const uint8_t *p, size_t n)
{
	char ds[AL_DIGEST_STRMAX];
	int rc;

	if (w->expected_size > 0 &&
	    (n > w->expected_size || w->written > w->expected_size - n))
		return al_error_set(
		    AL_EVERIFY,
		    "blob '%s' is larger than the expected %llu bytes",
		    al_digest_str(&w->expected, ds),
		    (unsigned long long)w->expected_size);
	if (w->hw != NULL && n >= AL_HASH_WORKER_MIN) {
		/* hash on the worker while this thread writes the same bytes */
		int wrc;
		if ((rc = al_hash_worker_submit(w->hw, w->h, p, n)) < 0)
			return rc;
		wrc = al_tmpfile_write(w->tmp, p, n);
		rc = al_hash_worker_wait(w->hw);
		if (wrc < 0)
			return wrc;
		if (rc < 0)
			return rc;
	} else if ((rc = al_hasher_update(w->h, p, n)) < 0 ||
	           (rc = al_tmpfile_write(w->tmp, p, n)) < 0) {
		return rc;
	}
	w->written += n;
	return 0;
}

void al_blob_writer_use_hash_worker(al_blob_writer *w, al_hash_worker *hw)
{
	w->hw = hw;
}

int al_blob_writer_reset(al_blob_writer *w)
{
	al_digest junk;
	int rc;

	if ((rc = al_tmpfile_truncate(w->tmp)) < 0 ||
	    (rc = al_hasher_final(w->h, &junk)) < 0)
		return rc;
	w->written = 0;
	return 0;
}

static int writer_write_cb(void *ud, const uint8_t *p, size_t n)
{
	return al_blob_writer_write(ud, p, n);
}

static int writer_reset_cb(void *ud)
{
	return al_blob_writer_reset(ud);
}

al_writer al_blob_writer_as_writer(al_blob_writer *w)
{
	al_writer wr = {writer_write_cb, writer_reset_cb, w};

	return wr;
}

static int blob_commit(al_blob_writer *w, int sync_dir, al_digest *out)
{
	char ds[AL_DIGEST_STRMAX], gs[AL_DIGEST_STRMAX];
	char *path = NULL, *dir = NULL;
	al_digest got;
	int rc;

	if ((rc = al_hasher_final(w->h, &got)) < 0)
		goto out;
	if (w->learn)
		w->expected = got;
	al_digest_str(&w->expected, ds);
	if (w->expected_size > 0 && w->written != w->expected_size) {
		rc = al_error_set(AL_EVERIFY,
		                  "blob '%s': expected %llu bytes, got %llu",
		                  ds, (unsigned long long)w->expected_size,
		                  (unsigned long long)w->written);
		goto out;
	}
	if (!al_digest_equal(&got, &w->expected)) {
		rc = al_error_set(
		    AL_EVERIFY,
		    "digest mismatch for blob '%s': the bytes hash to '%s'", ds,
		    al_digest_str(&got, gs));
		goto out;
	}
	path = al_store_blob_path(w->s, &w->expected);
	dir = al_sprintf("%s/blobs/%s", w->s->path,
	                 al_digest_algo_name(w->expected.algo));
	if (path == NULL || dir == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = al_fs_mkdir_p(dir, 0755)) < 0)
		goto out;
	/* Renaming over an existing blob is harmless (same bytes) and
	 * repairs one that was damaged on disk. The directory is synced
	 * once per batch, before index.json or releases.json next names
	 * anything (sync_dirty_dirs), not once per blob. */
	rc = al_tmpfile_commit_nodirsync(w->tmp, path);
	w->tmp = NULL;
	if (rc == 0 && sync_dir) {
		pthread_mutex_lock(&w->s->mu);
		w->s->dirty |= 1u << w->expected.algo;
		pthread_mutex_unlock(&w->s->mu);
	}
	if (rc == 0 && out != NULL)
		*out = w->expected;
out:
	free(path);
	free(dir);
	if (rc < 0)
		w->partial = 0; /* bytes that did not verify: not kept */
	al_blob_writer_abort(w);
	return rc;
}

int al_blob_writer_commit(al_blob_writer *w)
{
	return blob_commit(w, 1, NULL);
}

int al_blob_writer_commit_digest(al_blob_writer *w, al_digest *out)
{
	return blob_commit(w, 1, out);
}

int al_store__blob_commit_as(al_blob_writer *w, const al_digest *expected)
{
	char ds[AL_DIGEST_STRMAX];

	if (!w->learn && !al_digest_equal(&w->expected, expected)) {
		al_blob_writer_abort(w);
		return al_error_set(AL_EVERIFY,
		                    "blob writer for '%s' committed as another "
		                    "digest",
		                    al_digest_str(expected, ds));
	}
	w->expected = *expected;
	w->learn = 0;
	return blob_commit(w, 1, NULL);
}

int al_blob_writer_commit_nodirsync(al_blob_writer *w)
{
	return blob_commit(w, 0, NULL);
}

void al_blob_writer_start_writeback(al_blob_writer *w)
{
	if (w != NULL && w->tmp != NULL)
		al_tmpfile_start_writeback(w->tmp);
}

int al_store_sync_blob_dir(al_store *s, al_digest_algo algo)
{
	char *dir =
	    al_sprintf("%s/blobs/%s", s->path, al_digest_algo_name(algo));
	int rc;

	if (dir == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	rc = al_fs_fsync_dir(dir);
	free(dir);
	return rc;
}

int al_store_put_blob(al_store *s, const uint8_t *p, size_t n, al_digest *out)
{
	al_blob_writer *w = NULL;
	al_digest d;
	int rc;

	if (s->readonly)
		return al_error_set(AL_EINVAL, "store '%s' is read-only",
		                    s->path);
	if ((rc = al_digest_bytes(&d, AL_DIGEST_SHA256, p, n)) < 0)
		return rc;
	rc = al_store_has_blob(s, &d, NULL);
	if (rc < 0)
		return rc;
	if (rc == 0) {
		if ((rc = al_store_blob_begin(s, &d, n, &w)) < 0)
			return rc;
		if ((rc = al_blob_writer_write(w, p, n)) < 0) {
			al_blob_writer_abort(w);
			return rc;
		}
		if ((rc = al_blob_writer_commit(w)) < 0)
			return rc;
	}
	if (out != NULL)
		*out = d;
	return 0;
}

void al_store_image_clear(al_store_image *img)
{
	if (img == NULL)
		return;
	free(img->name);
	al_descriptor_clear(&img->desc);
	memset(img, 0, sizeof(*img));
}

void al_store_images_free(al_store_image *imgs, size_t n)
{
	size_t i;

	if (imgs == NULL)
		return;
	for (i = 0; i < n; i++)
		al_store_image_clear(&imgs[i]);
	free(imgs);
}

static int image_from_entry(al_store_image *out, const json_t *e,
                            const char *what)
{
	al_store_image img;
	const char *name = entry_name(e);
	int rc;

	memset(&img, 0, sizeof(img));
	if ((rc = al_descriptor_from_json(&img.desc, e, 1, what)) < 0)
		return rc;
	img.name = al_strdup(name != NULL ? name : "");
	if (img.name == NULL) {
		al_store_image_clear(&img);
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	*out = img;
	return 0;
}

int al_store_list(al_store *s, al_store_image **out, size_t *n)
{
	al_store_image *v = NULL;
	size_t i, count, done = 0;
	json_t *e;
	int rc = 0;

	pthread_mutex_lock(&s->mu);
	count = s->nents;
	v = calloc(count > 0 ? count : 1, sizeof(*v));
	if (v == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < count; i++) {
		if ((rc = entry_tree(&s->ents[i], &e)) < 0)
			goto out;
		rc = image_from_entry(&v[i], e, "index.json");
		json_decref(e);
		if (rc < 0)
			goto out;
		done++;
	}
	*out = v;
	*n = count;
	v = NULL;
out:
	pthread_mutex_unlock(&s->mu);
	al_store_images_free(v, done);
	return rc;
}

int al_store_find(al_store *s, const char *name, al_store_image *out)
{
	json_t *e = NULL;
	long i;
	int rc;

	pthread_mutex_lock(&s->mu);
	i = find_entry(s, name);
	if (i < 0)
		rc = al_error_set(AL_ENOTFOUND,
		                  "no image named '%s' in store '%s'", name,
		                  s->path);
	else if ((rc = entry_tree(&s->ents[i], &e)) == 0)
		rc = image_from_entry(out, e, "index.json");
	pthread_mutex_unlock(&s->mu);
	json_decref(e);
	return rc;
}

int al_store_tag(al_store *s, const char *name, const al_descriptor *desc)
{
	char ds[AL_DIGEST_STRMAX];
	json_t *entry = NULL, *annots, *rec = NULL;
	store_entry old = {NULL, NULL}, e = {NULL, NULL};
	int have_old = 0;
	long i;
	int rc;

	if (s->readonly)
		return al_error_set(AL_EINVAL, "store '%s' is read-only",
		                    s->path);
	if ((rc = check_name(name)) < 0)
		return rc;
	if (desc->media_type == NULL || desc->media_type[0] == '\0')
		return al_error_set(
		    AL_EINVAL, "tagging '%s': the descriptor has no media type",
		    name);
	rc = al_store_has_blob(s, &desc->digest, NULL);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return al_error_set(
		    AL_ENOTFOUND,
		    "tagging '%s': manifest '%s' is not in the store", name,
		    al_digest_str(&desc->digest, ds));
	entry = al_descriptor_to_json(desc);
	annots = json_object();
	if (entry == NULL || annots == NULL ||
	    json_object_set_new(annots, AL_ANNOT_REF_NAME, json_string(name)) !=
	        0 ||
	    json_object_set(entry, "annotations", annots) != 0) {
		json_decref(annots);
		json_decref(entry);
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	json_decref(annots);
	rec = json_pack("{s:s,s:O}", "op", "tag", "entry", entry);
	if (rec == NULL) {
		json_decref(entry);
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	if ((rc = entry_from_json(&e, entry)) < 0) {
		json_decref(entry);
		json_decref(rec);
		return rc;
	}
	pthread_mutex_lock(&s->mu);
	i = find_entry(s, name);
	if (i >= 0) {
		if (strcmp(s->ents[i].json, e.json) == 0) {
			rc = 0; /* already so: nothing to write */
			goto out;
		}
		old.name = al_strdup(s->ents[i].name);
		old.json = al_strdup(s->ents[i].json);
		if (old.name == NULL || old.json == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		have_old = 1;
	}
	/* the name's blob directory is synced before index.json names it */
	s->dirty |= 1u << desc->digest.algo;
	if ((rc = index_put_entry(s, &e)) < 0)
		goto out;
	if ((rc = journal_append(s, rec)) < 0) {
		/* memory says what the disk says */
		if (have_old)
			(void)index_put_entry(s, &old);
		else
			(void)index_remove(s, name, NULL, NULL);
	}
out:
	pthread_mutex_unlock(&s->mu);
	entry_clear(&old);
	entry_clear(&e);
	json_decref(entry);
	json_decref(rec);
	return rc;
}

int al_store_untag(al_store *s, const char *name)
{
	store_entry old = {NULL, NULL};
	size_t pos = 0;
	int rc;

	if (s->readonly)
		return al_error_set(AL_EINVAL, "store '%s' is read-only",
		                    s->path);
	if ((rc = check_name(name)) < 0)
		return rc;
	pthread_mutex_lock(&s->mu);
	if ((rc = index_remove(s, name, &old, &pos)) < 0)
		goto out;
	/* A removal is rare and must not come back after a crash: index.json
	 * is written at once (with every name the journal held). */
	if ((rc = compact(s)) < 0) {
		/* memory says what the disk says */
		(void)index_insert(s, pos, &old);
	}
out:
	pthread_mutex_unlock(&s->mu);
	entry_clear(&old);
	return rc;
}

/*
 * The origin annotation (AL_ANNOT_ORIGIN) of the entry named name set to
 * origin, journalled as a tag of the whole entry; NULL origin removes it.
 */
int al_store_set_origin(al_store *s, const char *name, const char *origin)
{
	json_t *entry = NULL, *annots, *rec = NULL;
	store_entry old = {NULL, NULL}, e = {NULL, NULL};
	long i;
	int rc;

	if (s == NULL || name == NULL)
		return al_error_set(AL_EINVAL, "al_store_set_origin: NULL");
	if (s->readonly)
		return al_error_set(AL_EINVAL, "store '%s' is read-only",
		                    s->path);
	pthread_mutex_lock(&s->mu);
	if ((i = find_entry(s, name)) < 0) {
		rc = al_error_set(AL_ENOTFOUND,
		                  "no image named '%s' in store '%s'", name,
		                  s->path);
		goto out;
	}
	if ((rc = entry_tree(&s->ents[i], &entry)) < 0)
		goto out;
	annots = json_object_get(entry, "annotations");
	rc = AL_ENOMEM;
	if (!json_is_object(annots))
		goto oom;
	if (origin == NULL)
		(void)json_object_del(annots, AL_ANNOT_ORIGIN);
	else if (json_object_set_new(annots, AL_ANNOT_ORIGIN,
	                             json_string(origin)) != 0)
		goto oom;
	if ((rec = json_pack("{s:s,s:O}", "op", "tag", "entry", entry)) == NULL)
		goto oom;
	if ((rc = entry_from_json(&e, entry)) < 0)
		goto out;
	if (strcmp(s->ents[i].json, e.json) == 0) {
		rc = 0; /* already so */
		goto out;
	}
	old.name = al_strdup(s->ents[i].name);
	old.json = al_strdup(s->ents[i].json);
	if (old.name == NULL || old.json == NULL)
		goto oom;
	if ((rc = index_put_entry(s, &e)) < 0)
		goto out;
	if ((rc = journal_append(s, rec)) < 0)
		(void)index_put_entry(s, &old); /* memory says what disk says */
	goto out;
oom:
	rc = al_error_set(AL_ENOMEM, "out of memory");
out:
	pthread_mutex_unlock(&s->mu);
	entry_clear(&old);
	entry_clear(&e);
	json_decref(entry);
	json_decref(rec);
	return rc;
}

int al_store_origin(al_store *s, const char *name, char **out)
{
	json_t *e = NULL;
	const char *o;
	long i;
	int rc = 0;

	if (s == NULL || name == NULL || out == NULL)
		return al_error_set(AL_EINVAL, "al_store_origin: NULL");
	*out = NULL;
	pthread_mutex_lock(&s->mu);
	i = find_entry(s, name);
	if (i < 0)
		rc = al_error_set(AL_ENOTFOUND,
		                  "no image named '%s' in store '%s'", name,
		                  s->path);
	else if ((rc = entry_tree(&s->ents[i], &e)) == 0) {
		o = al_json_str(json_object_get(e, "annotations"),
		                AL_ANNOT_ORIGIN);
		if (o != NULL && o[0] != '\0') {
			*out = al_strdup(o);
			rc = *out != NULL
			         ? 1
			         : al_error_set(AL_ENOMEM, "out of memory");
		}
	}
	pthread_mutex_unlock(&s->mu);
	json_decref(e);
	return rc;
}

static int releases_valid(const json_t *v)
{
	return json_is_object(v) &&
	       json_is_array(json_object_get(v, "releases"));
}

/* releases.json into *out (a missing file is an empty list); call with
 * s->mu held. */
static int releases_read_locked(const char *p, json_t **out)
{
	json_t *v = NULL;
	int rc = load_json(&v, p, STORE_RELEASES_MAX);

	if (rc == AL_ENOTFOUND) {
		al_error_clear();
		v = json_pack("{s:[]}", "releases");
		rc = v == NULL ? al_error_set(AL_ENOMEM, "out of memory") : 0;
	}
	if (rc == 0 && !releases_valid(v))
		rc = al_error_set(
		    AL_EPARSE,
		    "'%s': expected an object with a 'releases' array", p);
	if (rc == 0) {
		*out = v;
		v = NULL;
	}
	json_decref(v);
	return rc;
}

/* Write v as releases.json; call with s->mu held. */
static int releases_write_locked(al_store *s, const char *p, const json_t *v)
{
	int rc;

	if (!releases_valid(v))
		return al_error_set(
		    AL_EINVAL,
		    "releases.json must be an object with a 'releases' array");
	/* what releases.json names is written (and synced) before it */
	rc = s->pending > 0 ? compact(s) : sync_dirty_dirs(s);
	if (rc == 0)
		rc = save_json(p, v, JSON_INDENT(2));
	return rc;
}

int al_store_releases_load(al_store *s, json_t **out)
{
	char *p = store_file(s, "airlock/releases.json");
	int rc;

	if (p == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	pthread_mutex_lock(&s->mu);
	rc = releases_read_locked(p, out);
	pthread_mutex_unlock(&s->mu);
	free(p);
	return rc;
}

int al_store_releases_save(al_store *s, const json_t *v)
{
	char *p;
	int rc;

	if (s->readonly)
		return al_error_set(AL_EINVAL, "store '%s' is read-only",
		                    s->path);
	p = store_file(s, "airlock/releases.json");
	if (p == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	pthread_mutex_lock(&s->mu);
	rc = releases_write_locked(s, p, v);
	pthread_mutex_unlock(&s->mu);
	free(p);
	return rc;
}

int al_store__releases_edit(al_store *s, al_store__releases_edit_fn edit,
                            void *ud)
{
	json_t *doc = NULL;
	char *p;
	int rc;

	if (s->readonly)
		return al_error_set(AL_EINVAL, "store '%s' is read-only",
		                    s->path);
	p = store_file(s, "airlock/releases.json");
	if (p == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	/* one lock over read, change and write: two threads recording
	 * releases of one store never lose each other's records */
	pthread_mutex_lock(&s->mu);
	rc = releases_read_locked(p, &doc);
	if (rc == 0 && (rc = edit(doc, ud)) == 0)
		rc = releases_write_locked(s, p, doc);
	pthread_mutex_unlock(&s->mu);
	json_decref(doc);
	free(p);
	return rc > 0 ? 0 : rc;
}

/* --- signatures/ ------------------------------------------------------ */

char *al_store_signature_dir(const al_store *s, const al_digest *release)
{
	char hex[AL_DIGEST_STRMAX];

	if (release == NULL)
		return al_path_join(s->path, "signatures");
	return al_sprintf("%s/signatures/%s=%s", s->path,
	                  al_digest_algo_name(release->algo),
	                  al_digest_hex(release, hex));
}

int al_store_signature_add(al_store *s, const al_digest *release,
                           const uint8_t *p, size_t n, size_t max_bytes,
                           unsigned max_count, unsigned *index)
{
	al_buf have = AL_BUF_INIT(max_bytes);
	char *ddir = NULL, *path = NULL;
	unsigned k;
	int rc = 0;

	if (s->readonly)
		return al_error_set(AL_EINVAL, "store '%s' is read-only",
		                    s->path);
	if ((ddir = al_store_signature_dir(s, release)) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	pthread_mutex_lock(&s->sig_mu);
	/* the same bytes saved before keep their number */
	for (k = 1; k <= max_count; k++) {
		free(path);
		if ((path = al_sprintf("%s/signature-%u", ddir, k)) == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		al_buf_reset(&have);
		rc = al_fs_read_file(path, &have);
		if (rc == AL_ENOTFOUND) {
			al_error_clear();
			rc = 0;
			break;
		}
		if (rc < 0)
			goto out;
		if (have.len == n && memcmp(have.ptr, p, n) == 0) {
			if (index != NULL)
				*index = k;
			goto out;
		}
	}
	if (k > max_count) {
		rc = al_error_set(AL_ELIMIT, "'%s' already holds %u signatures",
		                  ddir, max_count);
		goto out;
	}
	if ((rc = al_fs_mkdir_p(ddir, 0755)) < 0 ||
	    (rc = al_fs_write_atomic(path, p, n)) < 0)
		goto out;
	al_log_debug("saved signature '%s'", path);
	if (index != NULL)
		*index = k;
out:
	pthread_mutex_unlock(&s->sig_mu);
	al_buf_free(&have);
	free(ddir);
	free(path);
	return rc;
}

/* --- check and gc ------------------------------------------------------ */

struct walk {
	al_store *s;
	int flags;
	al_check_fn fn;
	void *ud;
	al_check_result *res;
	json_t *seen; /* "algo:hex" -> true: every referenced blob */
};

static void report(struct walk *w, al_check_kind kind, const char *what,
                   const char *detail)
{
	if (w->fn != NULL)
		w->fn(w->ud, kind, what, detail);
}

static void remove_blob(struct walk *w, const char *path, const char *what,
                        uint64_t size)
{
	if (unlink(path) != 0) {
		al_log_warn("store: cannot remove '%s': %s", path,
		            strerror(errno));
		return;
	}
	w->res->removed++;
	w->res->bytes_removed += size;
	report(w, AL_CHECK_REMOVED, what, path);
}

/* In w->seen: the blob parsed as a manifest or index (an index.json entry
 * must be one, even when the walk met its blob as a config first). */
#define SEEN_MANIFEST 0x100

/* Remember what the walk found for blob ds (a root needing it is told). */
static void mark(struct walk *w, const char *ds, al_check_kind kind)
{
	json_object_set_new(w->seen, ds, json_integer(kind));
}

static int nondistributable(const char *mt)
{
	return mt != NULL && (strstr(mt, "nondistributable") != NULL ||
	                      strstr(mt, "foreign") != NULL);
}

static int walk_desc(struct walk *w, const al_descriptor *d, const char *from,
                     int depth);

/* Parse the manifest blob at path and walk what it references. */
static int walk_children(struct walk *w, const al_descriptor *d,
                         const char *path, const char *ds, const char *from,
                         int depth)
{
	al_buf b = AL_BUF_INIT(AL_OCI_MANIFEST_MAX);
	al_manifest m;
	char *detail = NULL;
	size_t i;
	int rc;

	memset(&m, 0, sizeof(m));
	rc = al_fs_read_file(path, &b);
	if (rc == 0)
		rc = al_manifest_parse(&m, b.ptr, b.len, d->media_type, ds);
	if (rc == AL_ENOMEM)
		goto out;
	if (rc < 0) {
		detail = al_sprintf("%s (referenced by '%s')",
		                    al_error_message(), from);
		mark(w, ds, AL_CHECK_INVALID);
		w->res->invalid++;
		report(w, AL_CHECK_INVALID, ds, detail != NULL ? detail : from);
		rc = 0;
		goto out;
	}
	json_object_set_new(w->seen, ds,
	                    json_integer(AL_CHECK_OK | SEEN_MANIFEST));
	if (depth >= STORE_WALK_DEPTH) {
		w->res->invalid++;
		report(w, AL_CHECK_INVALID, ds, "indexes nested too deeply");
		goto out;
	}
	if (m.is_index) {
		for (i = 0; i < m.nmanifests && rc == 0; i++)
			rc = walk_desc(w, &m.manifests[i], from, depth + 1);
	} else {
		rc = walk_desc(w, &m.config, from, depth + 1);
		for (i = 0; i < m.nlayers && rc == 0; i++)
			rc = walk_desc(w, &m.layers[i], from, depth + 1);
	}
out:
	free(detail);
	al_manifest_clear(&m);
	al_buf_free(&b);
	return rc;
}

static int walk_desc(struct walk *w, const al_descriptor *d, const char *from,
                     int depth)
{
	char ds[AL_DIGEST_STRMAX], gs[AL_DIGEST_STRMAX];
	char *path = NULL, *detail = NULL;
	struct stat st;
	al_digest got;
	uint64_t size = 0;
	int rc = 0;

	al_digest_str(&d->digest, ds);
	if (json_object_get(w->seen, ds) != NULL)
		return 0;
	/* the value becomes the blob's al_check_kind once known (roots) */
	if (json_object_set_new(w->seen, ds, json_integer(AL_CHECK_OK)) != 0)
		return al_error_set(AL_ENOMEM, "out of memory");
	path = al_store_blob_path(w->s, &d->digest);
	if (path == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	if (lstat(path, &st) != 0) {
		if (errno != ENOENT) {
			rc = al_error_errno(errno, "cannot stat '%s'", path);
			goto out;
		}
		if (!nondistributable(d->media_type)) {
			mark(w, ds, AL_CHECK_MISSING);
			w->res->missing++;
			detail = al_sprintf("referenced by '%s'", from);
			report(w, AL_CHECK_MISSING, ds,
			       detail != NULL ? detail : from);
		}
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		mark(w, ds, AL_CHECK_CORRUPT);
		w->res->corrupt++;
		report(w, AL_CHECK_CORRUPT, ds, "not a regular file");
		goto out;
	}
	if (w->flags & AL_STORE_CHECK_QUICK) {
		got = d->digest;
		size = (uint64_t)st.st_size;
	} else if ((rc = al_digest_file(&got, d->digest.algo, path, &size)) <
	           0) {
		goto out;
	}
	if (!al_digest_equal(&got, &d->digest) ||
	    ((w->flags & AL_STORE_CHECK_QUICK) && size != d->size)) {
		mark(w, ds, AL_CHECK_CORRUPT);
		w->res->corrupt++;
		if (w->flags & AL_STORE_CHECK_QUICK)
			detail = al_sprintf(
			    "%llu bytes, %llu expected (referenced by '%s')",
			    (unsigned long long)size,
			    (unsigned long long)d->size, from);
		else
			detail =
			    al_sprintf("bytes hash to %s (referenced by '%s')",
			               al_digest_str(&got, gs), from);
		report(w, AL_CHECK_CORRUPT, ds, detail != NULL ? detail : from);
		if (w->flags & AL_STORE_CHECK_GC)
			remove_blob(w, path, ds, size);
		goto out;
	}
	w->res->blobs_checked++;
	w->res->bytes_checked += size;
	if (size != d->size) {
		/* The blob is what its name says; the descriptor is wrong. */
		mark(w, ds, AL_CHECK_INVALID);
		w->res->invalid++;
		detail = al_sprintf("descriptor says %llu bytes, the blob has "
		                    "%llu (referenced by '%s')",
		                    (unsigned long long)d->size,
		                    (unsigned long long)size, from);
		report(w, AL_CHECK_INVALID, ds, detail != NULL ? detail : from);
		goto out;
	}
	report(w, AL_CHECK_OK, ds, from);
	if (al_media_type_is_manifest(d->media_type))
		rc = walk_children(w, d, path, ds, from, depth);
out:
	free(detail);
	free(path);
	return rc;
}

/* "5 s", "3 min", "2 h", "4 d": an age for people. */
static void age_text(char *out, size_t cap, uint64_t s)
{
	if (s < 120)
		(void)snprintf(out, cap, "%llu s", (unsigned long long)s);
	else if (s < 2 * 3600)
		(void)snprintf(out, cap, "%llu min",
		               (unsigned long long)s / 60);
	else if (s < 2 * 86400)
		(void)snprintf(out, cap, "%llu h",
		               (unsigned long long)s / 3600);
	else
		(void)snprintf(out, cap, "%llu d",
		               (unsigned long long)s / 86400);
}

/* 1 when a writer or an upload holds the file's flock. A shared probe:
 * it never keeps another probe out. */
static int kept_in_use(const char *path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	int held;

	if (fd < 0)
		return 0;
	held = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
	close(fd);
	return held;
}

/* What an upload session file says (transfer_upload.c writes it: registry,
 * repository, digest, size, offset); nothing for one that does not parse
 * or is larger than a session. */
static int kept_upload_read(al_store_kept *k)
{
	json_t *doc = NULL;
	const char *reg, *repo, *dg;
	json_int_t size, off;
	int rc = 0;

	if (k->bytes == 0 || k->bytes > STORE_SMALL_MAX ||
	    load_json(&doc, k->path, STORE_SMALL_MAX) < 0) {
		al_error_clear();
		return 0;
	}
	reg = al_json_str(doc, "registry");
	repo = al_json_str(doc, "repository");
	dg = al_json_str(doc, "digest");
	size = json_integer_value(json_object_get(doc, "size"));
	off = json_integer_value(json_object_get(doc, "offset"));
	if (reg != NULL && repo != NULL && dg != NULL && size > 0 && off >= 0 &&
	    off <= size) {
		k->target = al_sprintf("%s/%s", reg, repo);
		k->digest = al_strdup(dg);
		if (k->target == NULL || k->digest == NULL)
			rc = al_error_set(AL_ENOMEM, "out of memory");
		k->size = (uint64_t)size;
		k->done = (uint64_t)off;
	}
	json_decref(doc);
	return rc;
}

/* Append every regular file of STORE/rel to *v as kind. */
static int kept_scan(const al_store *s, const char *rel,
                     al_store_kept_kind kind, uint64_t now_s, al_store_kept **v,
                     size_t *n, size_t *cap)
{
	char *dir = store_file(s, rel);
	struct dirent *de;
	DIR *d;
	int rc = 0;

	if (dir == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	d = opendir(dir);
	while (rc == 0 && d != NULL && (de = readdir(d)) != NULL) {
		al_store_kept *k;
		struct stat st;
		char *p;

		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if ((p = al_path_join(dir, de->d_name)) == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			break;
		}
		if (lstat(p, &st) != 0 || !S_ISREG(st.st_mode)) {
			free(p);
			continue;
		}
		if (*n == *cap) {
			size_t nc = *cap ? *cap * 2 : 8;
			al_store_kept *g = realloc(*v, nc * sizeof(*g));

			if (g == NULL) {
				free(p);
				rc = al_error_set(AL_ENOMEM, "out of memory");
				break;
			}
			*v = g;
			*cap = nc;
		}
		k = &(*v)[(*n)++];
		memset(k, 0, sizeof(*k));
		k->kind = kind;
		k->path = p;
		k->bytes = (uint64_t)st.st_size;
		k->age_s = now_s > (uint64_t)st.st_mtime
		               ? now_s - (uint64_t)st.st_mtime
		               : 0;
		k->in_use = kept_in_use(p);
		if (kind == AL_STORE_KEPT_UPLOAD) {
			rc = kept_upload_read(k);
		} else {
			/* <algo>-<hex>: the digest it is the start of */
			char *dash = strchr(de->d_name, '-');
			al_digest dg;

			k->done = k->bytes;
			if (dash != NULL &&
			    (k->digest =
			         al_sprintf("%.*s:%s", (int)(dash - de->d_name),
			                    de->d_name, dash + 1)) == NULL) {
				rc = al_error_set(AL_ENOMEM, "out of memory");
			} else if (k->digest != NULL &&
			           al_digest_parse_str(&dg, k->digest) < 0) {
				al_error_clear();
				free(k->digest);
				k->digest = NULL;
			}
		}
	}
	if (d != NULL)
		closedir(d);
	free(dir);
	return rc;
}

static int kept_older_first(const void *a, const void *b)
{
	const al_store_kept *x = a, *y = b;

	if (x->age_s != y->age_s)
		return x->age_s > y->age_s ? -1 : 1;
	return strcmp(x->path, y->path);
}

int al_store_kept_list(al_store *s, al_store_kept **out, size_t *nout)
{
	al_store_kept *v = NULL;
	size_t n = 0, cap = 0;
	uint64_t now_s = al_clock_wall_ms() / 1000;
	int rc;

	*out = NULL;
	*nout = 0;
	if ((rc = kept_scan(s, "blobs/.partial", AL_STORE_KEPT_DOWNLOAD, now_s,
	                    &v, &n, &cap)) < 0 ||
	    (rc = kept_scan(s, "airlock/uploads", AL_STORE_KEPT_UPLOAD, now_s,
	                    &v, &n, &cap)) < 0) {
		al_store_kept_free(v, n);
		return rc;
	}
	if (n > 1)
		qsort(v, n, sizeof(*v), kept_older_first);
	*out = v;
	*nout = n;
	return 0;
}

void al_store_kept_free(al_store_kept *v, size_t n)
{
	size_t i;

	if (v == NULL)
		return;
	for (i = 0; i < n; i++) {
		free(v[i].path);
		free(v[i].digest);
		free(v[i].target);
	}
	free(v);
}

/* The partial downloads and upload sessions (al_store_kept_list):
 * UNREFERENCED, kept to resume; gc removes those nobody holds (REMOVED)
 * and leaves the others (UNREFERENCED, "in use"). */
static int scan_kept(struct walk *w)
{
	al_store_kept *v = NULL;
	size_t n = 0, i;
	int rc;

	if ((rc = al_store_kept_list(w->s, &v, &n)) < 0)
		return rc;
	for (i = 0; i < n; i++) {
		const al_store_kept *k = &v[i];
		int up = k->kind == AL_STORE_KEPT_UPLOAD;
		char detail[512], age[32];
		int len;

		if ((w->flags & AL_STORE_CHECK_GC) && !k->in_use &&
		    al_store__unlink_unheld(k->path)) {
			w->res->removed++;
			w->res->bytes_removed += k->bytes;
			report(w, AL_CHECK_REMOVED, k->path,
			       up ? "upload session" : "partial download");
			continue;
		}
		age_text(age, sizeof(age), k->age_s);
		if (up && k->target != NULL)
			len = snprintf(detail, sizeof(detail),
			               "upload session of %s to %s: %llu of "
			               "%llu bytes sent, %llu bytes here, "
			               "%s old, %s",
			               k->digest, k->target,
			               (unsigned long long)k->done,
			               (unsigned long long)k->size,
			               (unsigned long long)k->bytes, age,
			               k->in_use ? "in use" : "kept to resume");
		else if (up)
			len = snprintf(detail, sizeof(detail),
			               "upload session file that names no "
			               "session, %llu bytes, %s old, %s",
			               (unsigned long long)k->bytes, age,
			               k->in_use ? "in use" : "kept");
		else
			len =
			    snprintf(detail, sizeof(detail),
			             "partial download of %llu bytes, %s old, "
			             "%s",
			             (unsigned long long)k->bytes, age,
			             k->in_use ? "in use" : "kept to resume");
		if (len < 0 || (size_t)len >= sizeof(detail))
			(void)snprintf(detail, sizeof(detail), "%s",
			               up ? "upload session"
			                  : "partial download");
		w->res->unreferenced++;
		report(w, AL_CHECK_UNREFERENCED, k->path, detail);
	}
	al_store_kept_free(v, n);
	return 0;
}

static int scan_blobs(struct walk *w)
{
	char *blobs = store_file(w->s, "blobs");
	DIR *top = NULL, *sub = NULL;
	struct dirent *de, *fe;
	int rc = 0;

	if (blobs == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	top = opendir(blobs);
	if (top == NULL) {
		rc = al_error_errno(errno, "cannot read '%s'", blobs);
		goto out;
	}
	while ((de = readdir(top)) != NULL) {
		char *adir;
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0 ||
		    strcmp(de->d_name, ".tmp") == 0 ||
		    strcmp(de->d_name, ".partial") == 0)
			continue;
		adir = al_path_join(blobs, de->d_name);
		if (adir == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		if (lstat(adir, &st) != 0)
			memset(&st, 0, sizeof(st));
		if (!S_ISDIR(st.st_mode)) {
			w->res->unreferenced++;
			report(w, AL_CHECK_UNREFERENCED, adir,
			       "not a blob directory");
			if (w->flags & AL_STORE_CHECK_GC)
				remove_blob(w, adir, adir,
				            (uint64_t)st.st_size);
			free(adir);
			continue;
		}
		sub = opendir(adir);
		while (sub != NULL && (fe = readdir(sub)) != NULL) {
			char *fp, *name;

			if (strcmp(fe->d_name, ".") == 0 ||
			    strcmp(fe->d_name, "..") == 0)
				continue;
			name = al_sprintf("%s:%s", de->d_name, fe->d_name);
			fp = al_path_join(adir, fe->d_name);
			if (name == NULL || fp == NULL) {
				free(name);
				free(fp);
				free(adir);
				rc = al_error_set(AL_ENOMEM, "out of memory");
				goto out;
			}
			if (json_object_get(w->seen, name) == NULL &&
			    lstat(fp, &st) == 0 && !S_ISDIR(st.st_mode)) {
				w->res->unreferenced++;
				report(w, AL_CHECK_UNREFERENCED, name,
				       "reachable from no image in index.json");
				if (w->flags & AL_STORE_CHECK_GC)
					remove_blob(w, fp, name,
					            (uint64_t)st.st_size);
			}
			free(name);
			free(fp);
		}
		if (sub != NULL)
			closedir(sub);
		sub = NULL;
		free(adir);
	}
out:
	if (top != NULL)
		closedir(top);
	free(blobs);
	return rc;
}

static int hexname(const char *s, size_t n)
{
	size_t i;

	if (strlen(s) != n)
		return 0;
	for (i = 0; i < n; i++) {
		if (!((s[i] >= '0' && s[i] <= '9') ||
		      (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	}
	return 1;
}

/* signatures/sha256=<hex>/signature-<n>: regular, bounded files. Their
 * contents are the signature verifier's business, not ours. */
static int scan_signatures(struct walk *w)
{
	char *sigs = store_file(w->s, "signatures");
	DIR *top = NULL, *sub;
	struct dirent *de, *fe;
	struct stat st;
	int rc = 0;

	if (sigs == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	top = opendir(sigs);
	if (top == NULL) {
		if (errno != ENOENT)
			rc = al_error_errno(errno, "cannot read '%s'", sigs);
		goto out;
	}
	while ((de = readdir(top)) != NULL) {
		char *dir;

		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		dir = al_path_join(sigs, de->d_name);
		if (dir == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		if (strncmp(de->d_name, "sha256=", 7) != 0 ||
		    !hexname(de->d_name + 7, 64) || lstat(dir, &st) != 0 ||
		    !S_ISDIR(st.st_mode)) {
			w->res->invalid++;
			report(w, AL_CHECK_INVALID, dir,
			       "not a signature directory (sha256=<hex>)");
			free(dir);
			continue;
		}
		sub = opendir(dir);
		while (sub != NULL && (fe = readdir(sub)) != NULL) {
			char *fp;
			const char *why = NULL;

			/* a signature being written (or a writer's leftover,
			 * which gc removes with the other temporary files) */
			if (strcmp(fe->d_name, ".") == 0 ||
			    strcmp(fe->d_name, "..") == 0 ||
			    strncmp(fe->d_name, ".tmp-", 5) == 0)
				continue;
			fp = al_path_join(dir, fe->d_name);
			if (fp == NULL) {
				rc = al_error_set(AL_ENOMEM, "out of memory");
				closedir(sub);
				free(dir);
				goto out;
			}
			if (strncmp(fe->d_name, "signature-", 10) != 0 ||
			    fe->d_name[10] < '1' || fe->d_name[10] > '9' ||
			    strspn(fe->d_name + 10, "0123456789") !=
			        strlen(fe->d_name + 10))
				why = "not named signature-<n>";
			else if (lstat(fp, &st) != 0 || !S_ISREG(st.st_mode))
				why = "not a regular file";
			else if ((uint64_t)st.st_size > STORE_SIGNATURE_MAX ||
			         st.st_size == 0)
				why = "empty or larger than a signature can be";
			if (why != NULL) {
				w->res->invalid++;
				report(w, AL_CHECK_INVALID, fp, why);
			}
			free(fp);
		}
		if (sub != NULL)
			closedir(sub);
		free(dir);
	}
out:
	if (top != NULL)
		closedir(top);
	free(sigs);
	return rc;
}

/* An index.json entry typed as a manifest whose blob the walk met as
 * something else first (a config): parse it now, INVALID if it is none. */
static int entry_is_manifest(struct walk *w, const al_descriptor *d,
                             const char *from)
{
	char ds[AL_DIGEST_STRMAX];
	json_t *v;
	char *path;
	int rc;

	al_digest_str(&d->digest, ds);
	v = json_object_get(w->seen, ds);
	if (v == NULL || json_integer_value(v) != AL_CHECK_OK)
		return 0; /* parsed, or its problem reported */
	path = al_store_blob_path(w->s, &d->digest);
	if (path == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	rc = walk_children(w, d, path, ds, from, 0);
	free(path);
	return rc;
}

/*
 * A blob something outside index.json needs (a release recorded in
 * releases.json, its components): walked like an index entry, so that gc
 * keeps it even when no name refers to it any more; what it lacks is
 * reported naming root->from.
 */
static int walk_root(struct walk *w, const al_store_root *root)
{
	al_buf b = AL_BUF_INIT(AL_OCI_MANIFEST_MAX);
	al_descriptor d;
	al_manifest m;
	char ds[AL_DIGEST_STRMAX];
	char *path = NULL, *detail = NULL;
	json_t *seen;
	struct stat st;
	int rc = 0, parsed = 0;

	memset(&d, 0, sizeof(d));
	memset(&m, 0, sizeof(m));
	al_digest_str(&root->digest, ds);
	seen = json_object_get(w->seen, ds);
	if (seen != NULL) {
		/* walked already: say again, for this root, what is wrong */
		al_check_kind kind =
		    (al_check_kind)(json_integer_value(seen) & 0xff);
		if (kind != AL_CHECK_OK) {
			detail = al_sprintf("needed by %s", root->from);
			report(w, kind, ds,
			       detail != NULL ? detail : root->from);
		} else {
			/* met as a config or layer: must parse as an image */
			d.digest = root->digest;
			rc = entry_is_manifest(w, &d, root->from);
		}
		goto out;
	}
	path = al_store_blob_path(w->s, &root->digest);
	if (path == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
		if (json_object_set_new(w->seen, ds,
		                        json_integer(AL_CHECK_MISSING)) != 0) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		w->res->missing++;
		detail = al_sprintf("manifest of %s", root->from);
		report(w, AL_CHECK_MISSING, ds,
		       detail != NULL ? detail : root->from);
		goto out;
	}
	/* The record holds only the digest: the blob says what it is. */
	rc = al_fs_read_file(path, &b);
	if (rc == 0)
		rc = al_manifest_parse(&m, b.ptr, b.len, NULL, ds);
	if (rc == AL_ENOMEM)
		goto out;
	parsed = rc == 0;
	d.digest = root->digest;
	d.size = (uint64_t)st.st_size;
	d.media_type = parsed ? m.media_type : NULL;
	if (!parsed) {
		/* not a manifest: hashed and kept, reported as invalid */
		if ((rc = walk_desc(w, &d, root->from, 0)) < 0)
			goto out;
		w->res->invalid++;
		mark(w, ds, AL_CHECK_INVALID);
		detail =
		    al_sprintf("%s is not a manifest or index", root->from);
		report(w, AL_CHECK_INVALID, ds,
		       detail != NULL ? detail : root->from);
		goto out;
	}
	rc = walk_desc(w, &d, root->from, 0);
out:
	if (parsed)
		al_manifest_clear(&m);
	al_buf_free(&b);
	free(detail);
	free(path);
	return rc;
}

/* Roots from airlock/releases.json: each recorded release's manifest. */
static int release_roots(struct walk *w, const json_t *rel)
{
	const json_t *list = json_object_get(rel, "releases");
	size_t i;
	int rc = 0;

	for (i = 0; rc == 0 && i < json_array_size(list); i++) {
		const json_t *e = json_array_get(list, i);
		const char *d = al_json_str(e, "digest");
		const char *v = al_json_str(e, "version");
		al_store_root root;
		char *from;

		/* a record without a digest names nothing to check */
		if (json_object_get(e, "digest") == NULL)
			continue;
		if (d == NULL || al_digest_parse_str(&root.digest, d) < 0) {
			al_error_clear();
			w->res->invalid++;
			report(w, AL_CHECK_INVALID, "airlock/releases.json",
			       "a release whose \"digest\" is not a digest");
			continue;
		}
		from = al_sprintf("release %s (%s) recorded in "
		                  "airlock/releases.json",
		                  v != NULL ? v : "?", d);
		if (from == NULL)
			return al_error_set(AL_ENOMEM, "out of memory");
		root.from = from;
		rc = walk_root(w, &root);
		free(from);
	}
	return rc;
}

/*
 * gc of the advisory cache (store_cache.c): remove every entry whose key
 * blob the store no longer holds (its release went), and names that are
 * not entries. *removed (may be NULL) gets how many files went. Only under
 * the store's lock (al_store_check with AL_STORE_CHECK_GC); a missing
 * airlock/cache/ is 0.
 */
static int cache_gc(al_store *s, size_t *removed)
{
	char *dir = al_path_join(al_store_path(s), AL_STORE_CACHE_DIR);
	size_t n = 0;
	struct dirent *de;
	DIR *d;
	int rc = 0;

	if (dir == NULL)
		return al_error_oom();
	if ((d = opendir(dir)) == NULL) {
		if (errno != ENOENT)
			rc = al_error_errno(errno, "cannot open '%s'", dir);
		goto out;
	}
	while ((de = readdir(d)) != NULL) {
		al_digest key;
		char *p;
		int held = 0;

		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		/* Temporary files of a killed writer, and what is no entry:
		 * gc runs under the store's lock, so no writer is live. */
		if (al_store__cache_entry_key(de->d_name, &key) &&
		    (held = al_store_has_blob(s, &key, NULL)) < 0) {
			rc = held;
			break;
		}
		if (held)
			continue;
		if ((p = al_path_join(dir, de->d_name)) == NULL) {
			rc = al_error_oom();
			break;
		}
		if (unlink(p) == 0)
			n++;
		else if (errno != ENOENT)
			al_log_debug("cache: cannot remove '%s': %s", p,
			             strerror(errno));
		free(p);
	}
	closedir(d);
out:
	if (removed != NULL)
		*removed = n;
	free(dir);
	return rc;
}

int al_store_check(al_store *s, int flags, al_check_fn fn, void *ud,
                   al_check_result *res)
{
	return al_store_check_roots(s, flags, NULL, 0, fn, ud, res);
}

int al_store_check_roots(al_store *s, int flags, const al_store_root *roots,
                         size_t nroots, al_check_fn fn, void *ud,
                         al_check_result *res)
{
	struct walk w;
	al_check_result r = AL_CHECK_RESULT_INIT;
	al_store_image *imgs = NULL;
	size_t n = 0, i;
	json_t *rel = NULL;
	int rc;

	if ((rc = AL_RESULT_VERSION_CHECK("al_check_result", res, version,
	                                  AL_CHECK_RESULT_VERSION)) < 0)
		return rc;
	if ((flags & AL_STORE_CHECK_GC) && s->readonly)
		return al_error_set(AL_EINVAL, "store '%s' is read-only: no gc",
		                    s->path);
	memset(&w, 0, sizeof(w));
	w.s = s;
	w.flags = flags;
	w.fn = fn;
	w.ud = ud;
	w.res = &r;
	w.seen = json_object();
	if (w.seen == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	if ((rc = al_store_list(s, &imgs, &n)) < 0)
		goto out;
	r.images = n;
	for (i = 0; i < n; i++) {
		char *from = imgs[i].name[0] != '\0'
		                 ? al_strdup(imgs[i].name)
		                 : al_sprintf("index.json entry %zu", i);

		if (from == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		/* An image is a manifest or an index: an entry naming a
		 * layer, a config or other JSON is refused. */
		if (!al_media_type_is_manifest(imgs[i].desc.media_type)) {
			char ds[AL_DIGEST_STRMAX];
			char *detail = al_sprintf(
			    "index.json entry '%s' has media type '%s', not "
			    "a manifest or index",
			    from,
			    imgs[i].desc.media_type != NULL
			        ? imgs[i].desc.media_type
			        : "(none)");
			r.invalid++;
			report(&w, AL_CHECK_INVALID,
			       al_digest_str(&imgs[i].desc.digest, ds),
			       detail != NULL ? detail : from);
			free(detail);
		}
		rc = walk_desc(&w, &imgs[i].desc, from, 0);
		if (rc == 0 &&
		    al_media_type_is_manifest(imgs[i].desc.media_type))
			rc = entry_is_manifest(&w, &imgs[i].desc, from);
		free(from);
		if (rc < 0)
			goto out;
	}
	if (al_store_releases_load(s, &rel) < 0) {
		r.invalid++;
		report(&w, AL_CHECK_INVALID, "airlock/releases.json",
		       al_error_message());
		al_error_clear();
	} else if ((rc = release_roots(&w, rel)) < 0) {
		goto out;
	}
	for (i = 0; i < nroots; i++)
		if ((rc = walk_root(&w, &roots[i])) < 0)
			goto out;
	if ((rc = scan_blobs(&w)) < 0 || (rc = scan_signatures(&w)) < 0 ||
	    (rc = scan_kept(&w)) < 0)
		goto out;
	if (flags & AL_STORE_CHECK_GC) {
		pthread_mutex_lock(&s->mu);
		if (s->active_writers == 0)
			remove_all_temps(s, fn, ud, &r);
		pthread_mutex_unlock(&s->mu);
		if ((rc = cache_gc(s, NULL)) < 0)
			goto out;
	}
	r.version = res->version;
	*res = r;
out:
	json_decref(rel);
	json_decref(w.seen);
	al_store_images_free(imgs, n);
	return rc;
}

/* The image manifest at digest, through an index when it is one (the
 * entry for platform, or the only entry); what ("release", "catalog")
 * names the image in errors. Caller clears *out. AL_ENOTFOUND: the index
 * has no such platform; AL_EUNSUPPORTED: an index inside an index. */
int al_store_image_manifest(al_store *s, const al_digest *digest,
                            const char *platform, const char *what,
                            al_manifest *out)
{
	al_buf b = AL_BUF_INIT(AL_OCI_MANIFEST_MAX);
	char ds[AL_DIGEST_STRMAX];
	al_manifest m, inner;
	al_digest pick;
	size_t i;
	int rc, found = 0;

	memset(&m, 0, sizeof(m));
	memset(&inner, 0, sizeof(inner));
	al_digest_str(digest, ds);
	if ((rc = al_store_read_blob(s, digest, &b)) < 0 ||
	    (rc = al_manifest_parse(&m, b.ptr, b.len, NULL, ds)) < 0)
		goto out;
	if (m.is_index) {
		for (i = 0; i < m.nmanifests && !found; i++) {
			if (al_platform_match(&m.manifests[i], platform)) {
				pick = m.manifests[i].digest;
				found = 1;
			}
		}
		if (!found && m.nmanifests == 1) {
			pick = m.manifests[0].digest;
			found = 1;
		}
		if (!found) {
			rc = al_error_set(AL_ENOTFOUND,
			                  "%s index '%s' has no '%s' image",
			                  what, ds, platform);
			goto out;
		}
		al_buf_reset(&b);
		al_digest_str(&pick, ds);
		if ((rc = al_store_read_blob(s, &pick, &b)) < 0 ||
		    (rc = al_manifest_parse(&inner, b.ptr, b.len, NULL, ds)) <
		        0)
			goto out;
		if (inner.is_index) {
			rc = al_error_set(
			    AL_EUNSUPPORTED,
			    "%s index entry '%s' is itself an index", what, ds);
			goto out;
		}
		al_manifest_clear(&m);
		m = inner;
		memset(&inner, 0, sizeof(inner));
	}
	*out = m;
	memset(&m, 0, sizeof(m));
out:
	al_manifest_clear(&inner);
	al_manifest_clear(&m);
	al_buf_free(&b);
	return rc;
}

int al_store_signatures_remove(al_store *s, const al_digest *release)
{
	char *ddir = NULL;
	DIR *d = NULL;
	struct dirent *de;
	int rc = 0;

	if (release == NULL)
		return al_error_set(AL_EINVAL,
		                    "al_store_signatures_remove: NULL");
	if (s->readonly)
		return al_error_set(AL_EINVAL, "store '%s' is read-only",
		                    s->path);
	if ((ddir = al_store_signature_dir(s, release)) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	pthread_mutex_lock(&s->sig_mu);
	if ((d = opendir(ddir)) == NULL) {
		if (errno != ENOENT)
			rc = al_error_errno(errno, "cannot open '%s'", ddir);
		goto out;
	}
	while ((de = readdir(d)) != NULL) {
		char *p;
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if ((p = al_path_join(ddir, de->d_name)) == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		if (unlink(p) != 0 && errno != ENOENT) {
			rc = al_error_errno(errno, "cannot remove '%s'", p);
			free(p);
			goto out;
		}
		free(p);
	}
	if (rmdir(ddir) != 0 && errno != ENOENT) {
		rc = al_error_errno(errno, "cannot remove '%s'", ddir);
		goto out;
	}
	{
		char *parent = al_store_signature_dir(s, NULL);
		if (parent != NULL)
			al_fs_fsync_dir(parent);
		free(parent);
	}
out:
	if (d != NULL)
		closedir(d);
	pthread_mutex_unlock(&s->sig_mu);
	free(ddir);
	return rc;
}
