/* pack_ocmirror.c: oc-mirror v2 archives (mirror_000001.tar ...) imported
 * into a store: the distribution registry storage they carry, every blob
 * checked against its digest, the tags named last, where each image came
 * from, the releases recorded, all marked untrusted (docs/pack.md). */
#include <errno.h>
#include <fcntl.h>
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
#include "airlock/catalog.h"
#include "airlock/fs.h"
#include "airlock/graph.h"
#include "airlock/imageset.h"
#include "airlock/layout.h"
#include "airlock/log.h"
#include "airlock/oci.h"
#include "airlock/pack.h"
#include "airlock/ref.h"
#include "airlock/release.h"
#include "airlock/store.h"
#include "json_int.h"
#include "pack_int.h"
#include "pack_ocmirror_int.h"
#include "store_int.h"

/* oc-mirror's v2/internal/pkg/archive: archiveFileNameFormat "%s_%06d.tar"
 * with the prefix "mirror", the cache paths under cacheFilePrefix
 * "docker/registry/v2" (distribution's filesystem storage driver). */
#define OCM_PREFIX "mirror_"
#define OCM_BLOBS "docker/registry/v2/blobs/sha256/"
#define OCM_REPOS "docker/registry/v2/repositories/"
/* release signatures: working-dir/signatures/<tag>-sha256-<hex>
 * (internal/pkg/release/signature.go, SignatureDir) */
#define OCM_SIGS "working-dir/signatures/"
#define OCM_SIG_MAX (64 * 1024)
#define OCM_SIG_COUNT 100
#define OCM_MAX_VOLUMES 999999
#define OCM_MAX_REFS 1000000
#define OCM_LINK_MAX 200
/* the image set configuration oc-mirror adds last: "isc_<RFC 3339 time>"
 * (archive/const.go imageSetConfigPrefix, archive.go BuildArchive) */
#define OCM_ISC "isc_"
#define OCM_ISC_MAX (4 * 1024 * 1024)
/* the update graphs oc-mirror's mirror to disk read the channels from,
 * kept for its disk to mirror: working-dir/hold-release/
 * cincinnati-graph-data/<arch>-<channel>.json (release/const.go
 * releaseImageExtractDir, cincinnatiGraphDataDir; core-cincinnati.go
 * writeGraphDataToFile) */
#define OCM_GRAPHS "working-dir/hold-release/cincinnati-graph-data/"
#define OCM_GRAPH_COUNT 256

typedef struct ocm_ref {
	char *repo;
	char *tag; /* NULL: a manifest revision (by digest) */
	al_digest digest;
} ocm_ref;

/* One update graph the archives carry, and the channel its file names. */
typedef struct ocm_graph {
	char *file; /* "<arch>-<channel>.json" */
	char *channel;
	al_graph *g;
} ocm_graph;

typedef struct ocm_ctx {
	al_store *s;
	const al_unpack_opts *opts;
	al_unpack_result *res;
	const char *volname;
	ocm_ref *refs;
	size_t nrefs, cap;
	uint8_t *chunk;
	/* the newest image set configuration the archives carry (the
	 * latest isc_<time>) and its name */
	char *isc, *isc_name;
	size_t isc_len;
	al_imageset *cfg; /* isc, read (set_origins); NULL if unreadable */
	ocm_graph *graphs;
	size_t ngraphs;
	al_progress_info pi;
	uint64_t start_ms, last_ms;
} ocm_ctx;

/* "mirror_NNNNNN.tar": its number, else 0. */
static unsigned long volume_number(const char *name)
{
	size_t i, l = strlen(name);
	unsigned long n = 0;

	if (l != strlen(OCM_PREFIX) + 6 + 4 ||
	    !al_str_startswith(name, OCM_PREFIX) ||
	    strcmp(name + l - 4, ".tar") != 0)
		return 0;
	for (i = strlen(OCM_PREFIX); i < l - 4; i++) {
		if (name[i] < '0' || name[i] > '9')
			return 0;
		n = n * 10 + (unsigned long)(name[i] - '0');
	}
	return n;
}

int al_pack__ocmirror_detect(const char *dir)
{
	char **names = NULL;
	size_t n = 0, i;
	int rc, ocm = 0, airlock = 0;

	if ((rc = al_pack__list_dir(dir, &names, &n)) < 0) {
		/* the caller's own lookup reports a missing directory */
		al_error_clear();
		return 0;
	}
	for (i = 0; i < n; i++) {
		if (volume_number(names[i]) > 0)
			ocm = 1;
		if (al_str_startswith(names[i], "airlock-"))
			airlock = 1;
	}
	al_pack__free_list(names, n);
	return ocm && !airlock;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One path component of a repository name, as distribution accepts it
 * (reference.pathComponent: [a-z0-9]+ with single separators . _ __ -). */
static int repo_component_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > 255)
		return 0;
	for (i = 0; i < n; i++) {
		char ch = s[i];
		int alnum =
		    (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
		if (!alnum && ch != '.' && ch != '_' && ch != '-')
			return 0;
	}
	return ((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= '0' && s[0] <= '9'));
}

static int repo_ok(const char *s, size_t n)
{
	size_t start = 0, i;

	if (n == 0 || n > 255)
		return 0;
	for (i = 0; i <= n; i++)
		if (i == n || s[i] == '/') {
			if (!repo_component_ok(s + start, i - start))
				return 0;
			start = i + 1;
		}
	return 1;
}

/* A tag as distribution accepts it: [\w][\w.-]{0,127}. */
static int tag_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > 128 || s[0] == '.' || s[0] == '-')
		return 0;
	for (i = 0; i < n; i++) {
		char ch = s[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' ||
		      ch == '-'))
			return 0;
	}
	return 1;
}

/* A path no extraction may take: absolute, "..", empty or "."
 * components, backslashes, control bytes. */
static int path_hostile(const char *p)
{
	const char *c = p;

	if (p[0] == '\0' || p[0] == '/')
		return 1;
	for (; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == '\\')
			return 1;
	while (*c != '\0') {
		size_t l = strcspn(c, "/");
		if (l == 0 && c[l] == '/')
			return 1; /* "a//b" */
		if ((l == 1 && c[0] == '.') ||
		    (l == 2 && c[0] == '.' && c[1] == '.'))
			return 1;
		c += l;
		if (*c == '/')
			c++;
	}
	return 0;
}

static void progress_cb(ocm_ctx *c)
{
	uint64_t now;

	if (c->opts->progress == NULL)
		return;
	now = al_clock_now_ms();
	if (now - c->last_ms < 200)
		return;
	c->last_ms = now;
	c->pi.elapsed_ms = now - c->start_ms;
	c->opts->progress(&c->pi, c->opts->progress_ud);
}

static int refuse(const ocm_ctx *c, const char *entry, const char *why)
{
	return al_error_set(
	    AL_EVERIFY, "oc-mirror archive '%s': entry '%.300s' refused: %s",
	    c->volname, entry, why);
}

static int add_ref(ocm_ctx *c, const char *repo, size_t rlen, const char *tag,
                   size_t tlen, const al_digest *d)
{
	ocm_ref *r;

	if (c->nrefs == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		ocm_ref *g;
		if (c->nrefs >= OCM_MAX_REFS)
			return al_error_set(AL_ELIMIT,
			                    "oc-mirror archives name more than "
			                    "%d manifests",
			                    OCM_MAX_REFS);
		if ((g = realloc(c->refs, cap * sizeof(*g))) == NULL)
			return al_error_oom();
		c->refs = g;
		c->cap = cap;
	}
	r = &c->refs[c->nrefs];
	memset(r, 0, sizeof(*r));
	r->digest = *d;
	if ((r->repo = malloc(rlen + 1)) == NULL)
		return al_error_oom();
	memcpy(r->repo, repo, rlen);
	r->repo[rlen] = '\0';
	if (tag != NULL) {
		if ((r->tag = malloc(tlen + 1)) == NULL) {
			free(r->repo);
			return al_error_oom();
		}
		memcpy(r->tag, tag, tlen);
		r->tag[tlen] = '\0';
	}
	c->nrefs++;
	return 0;
}

/* Read a whole (small) entry into buf (NUL-terminated). */
static int read_small(ocm_ctx *c, struct archive *a, const char *name,
                      char *buf, size_t cap, int64_t size)
{
	la_ssize_t got;
	size_t have = 0;

	if (size < 0 || (uint64_t)size >= cap)
		return refuse(c, name, "larger than such a file can be");
	while (have < (size_t)size) {
		got = archive_read_data(a, buf + have, cap - 1 - have);
		if (got < 0)
			return al_error_set(
			    AL_EVERIFY,
			    "oc-mirror archive '%s' is damaged or "
			    "truncated at '%.300s': %s",
			    c->volname, name, archive_error_string(a));
		if (got == 0)
			break;
		have += (size_t)got;
	}
	if (have != (size_t)size)
		return al_error_set(AL_EVERIFY,
		                    "oc-mirror archive '%s' is truncated at "
		                    "'%.300s'",
		                    c->volname, name);
	buf[have] = '\0';
	return 0;
}

/* A link file: "sha256:<hex>" (distribution writes no newline). */
static int read_link(ocm_ctx *c, struct archive *a, const char *name,
                     int64_t size, al_digest *d)
{
	char buf[OCM_LINK_MAX];
	int rc;

	if ((rc = read_small(c, a, name, buf, sizeof(buf), size)) < 0)
		return rc;
	if (!al_str_startswith(buf, "sha256:") || !al_pack__is_hex64(buf + 7) ||
	    al_digest_parse_str(d, buf) < 0) {
		al_error_clear();
		return refuse(c, name, "not a sha256 digest");
	}
	return 0;
}

/* docker/registry/v2/blobs/sha256/XX/<hex>/data: into the store, checked
 * against <hex> before it becomes visible. */
static int import_blob(ocm_ctx *c, struct archive *a, const char *name,
                       const char *rest, int64_t size)
{
	char hex[65];
	al_digest d;
	al_blob_writer *w = NULL;
	la_ssize_t got;
	int rc;

	/* "XX/<64 hex>/data" */
	if (strlen(rest) != 2 + 1 + 64 + 5 || rest[2] != '/' ||
	    strcmp(rest + 67, "/data") != 0)
		return refuse(c, name,
		              "not a blob path of the registry "
		              "storage");
	memcpy(hex, rest + 3, 64);
	hex[64] = '\0';
	if (!al_pack__is_hex64(hex) || memcmp(rest, hex, 2) != 0)
		return refuse(c, name,
		              "not a blob path of the registry "
		              "storage");
	{
		char ds[72];
		snprintf(ds, sizeof(ds), "sha256:%s", hex);
		if ((rc = al_digest_parse_str(&d, ds)) < 0)
			return rc;
	}
	if (al_store_has_blob(c->s, &d, NULL) == 1) {
		c->res->entries_present++;
		return 0;
	}
	if ((rc = al_store_blob_begin(c->s, &d, (uint64_t)size, &w)) < 0)
		return rc;
	for (;;) {
		got = archive_read_data(a, c->chunk, AL_PACK_CHUNK);
		if (got < 0) {
			rc = al_error_set(
			    AL_EVERIFY,
			    "oc-mirror archive '%s' is damaged or "
			    "truncated at '%.300s': %s",
			    c->volname, name, archive_error_string(a));
			goto out;
		}
		if (got == 0)
			break;
		if ((rc = al_blob_writer_write(w, c->chunk, (size_t)got)) < 0)
			goto out;
		c->pi.bytes_done += (uint64_t)got;
	}
	rc = al_blob_writer_commit_nodirsync(w);
	w = NULL;
	if (rc == AL_EVERIFY)
		rc = al_error_set(AL_EVERIFY,
		                  "oc-mirror archive '%s': blob '%.300s' does "
		                  "not match its digest (or size): damaged "
		                  "media",
		                  c->volname, name);
	if (rc < 0)
		goto out;
	c->res->entries_imported++;
	c->pi.items_done++;
out:
	al_blob_writer_abort(w);
	return rc;
}

/* docker/registry/v2/repositories/<repo>/_manifests/...: the tags and
 * revisions; the rest of the repository tree (_layers, _uploads, tag
 * index) says nothing the blobs do not. */
static int repo_entry(ocm_ctx *c, struct archive *a, const char *name,
                      const char *rest, int64_t size)
{
	const char *m = strstr(rest, "/_manifests/");
	const char *p, *end;
	al_digest d;
	int rc;

	if (m == NULL)
		return 0;
	if (!repo_ok(rest, (size_t)(m - rest)))
		return refuse(c, name, "not a repository name");
	p = m + strlen("/_manifests/");
	if (al_str_startswith(p, "tags/")) {
		p += strlen("tags/");
		end = strchr(p, '/');
		if (end == NULL || strcmp(end, "/current/link") != 0)
			return 0;
		if (!tag_ok(p, (size_t)(end - p)))
			return refuse(c, name, "not a tag");
		if ((rc = read_link(c, a, name, size, &d)) < 0)
			return rc;
		return add_ref(c, rest, (size_t)(m - rest), p,
		               (size_t)(end - p), &d);
	}
	if (al_str_startswith(p, "revisions/sha256/")) {
		char want[72];
		p += strlen("revisions/sha256/");
		if (strlen(p) != 64 + 5 || strcmp(p + 64, "/link") != 0)
			return 0;
		if ((rc = read_link(c, a, name, size, &d)) < 0)
			return rc;
		snprintf(want, sizeof(want), "%.64s", p);
		if (strncmp(want,
		            al_digest_hex(&d, (char[AL_DIGEST_STRMAX]){0}),
		            64) != 0)
			return refuse(c, name,
			              "the link names another digest than its "
			              "path");
		return add_ref(c, rest, (size_t)(m - rest), NULL, 0, &d);
	}
	return 0;
}

/* 1 when some signature-<n> of dir holds exactly p[0..n). */
static int sig_held(const char *dir, char *const *names, size_t nnames,
                    const char *p, size_t n)
{
	al_buf b = AL_BUF_INIT(OCM_SIG_MAX);
	size_t i;
	int same = 0;

	for (i = 0; i < nnames && !same; i++) {
		char *f = al_path_join(dir, names[i]);

		al_buf_reset(&b);
		if (f != NULL && al_fs_read_file(f, &b) == 0)
			same =
			    b.len == n && (n == 0 || memcmp(b.ptr, p, n) == 0);
		al_error_clear();
		free(f);
	}
	al_buf_free(&b);
	return same;
}

/*
 * A release signature oc-mirror kept: saved beside the release's others
 * in STORE/signatures (checked against keys by verify, update, mirror).
 * No key vouched for the archive: bytes the store does not hold yet are
 * marked untrusted (airlock/untrusted.json, docs/security.md) before
 * they are written, so configmaps and push's ConfigMaps leave them out.
 */
static int import_signature(ocm_ctx *c, struct archive *a, const char *name,
                            const char *rest, int64_t size)
{
	const char *h = strstr(rest, "-sha256-");
	char ds[72], *buf = NULL, *dir = NULL, **names = NULL;
	size_t nbefore = 0;
	al_digest d;
	al_store_untrusted mark;
	unsigned k = 0;
	int rc;

	if (h == NULL || strchr(rest, '/') != NULL ||
	    !al_pack__is_hex64(h + strlen("-sha256-")))
		return 0;
	if (size > OCM_SIG_MAX)
		return refuse(c, name, "a release signature over 64 KiB");
	snprintf(ds, sizeof(ds), "sha256:%s", h + strlen("-sha256-"));
	if ((rc = al_digest_parse_str(&d, ds)) < 0)
		return rc;
	if ((dir = al_store_signature_dir(c->s, &d)) == NULL ||
	    (buf = malloc((size_t)size + 1)) == NULL) {
		rc = al_error_oom();
		goto out;
	}
	/* how many there were: the same bytes found again are "present" */
	if (al_pack__list_dir(dir, &names, &nbefore) < 0) {
		al_error_clear();
		nbefore = 0;
	}
	if ((rc = read_small(c, a, name, buf, (size_t)size + 1, size)) < 0)
		goto out;
	if (!sig_held(dir, names, nbefore, buf, (size_t)size)) {
		memset(&mark, 0, sizeof(mark));
		mark.kind = AL_STORE_UNTRUSTED_SIGNATURE;
		mark.digest = d;
		mark.pack = c->res->id;
		if ((rc = al_pack__sha256_hex(buf, (size_t)size, mark.sha256)) <
		        0 ||
		    (rc = al_store_untrusted_mark(c->s, &mark, 1)) < 0)
			goto out;
	}
	if ((rc = al_store_signature_add(c->s, &d, (const uint8_t *)buf,
	                                 (size_t)size, OCM_SIG_MAX,
	                                 OCM_SIG_COUNT, &k)) < 0)
		goto out;
	if (k > nbefore)
		c->res->entries_imported++;
	else
		c->res->entries_present++;
out:
	al_pack__free_list(names, nbefore);
	free(dir);
	free(buf);
	return rc;
}

/* The image set configuration oc-mirror carried (isc_<time> at the root
 * of the last archive; a later time replaces an earlier one): read when
 * the images are named, for where they came from (set_origins). */
static int keep_isc(ocm_ctx *c, struct archive *a, const char *name,
                    int64_t size)
{
	char *buf, *n;
	int rc;

	if (c->isc_name != NULL && strcmp(name, c->isc_name) <= 0)
		return 0;
	if (size > OCM_ISC_MAX)
		return refuse(c, name, "an image set configuration over 4 MiB");
	if ((buf = malloc((size_t)size + 1)) == NULL ||
	    (n = al_strdup(name)) == NULL) {
		free(buf);
		return al_error_oom();
	}
	if ((rc = read_small(c, a, name, buf, (size_t)size + 1, size)) < 0) {
		free(buf);
		free(n);
		return rc;
	}
	free(c->isc);
	free(c->isc_name);
	c->isc = buf;
	c->isc_name = n;
	c->isc_len = (size_t)size;
	return 0;
}

/* A channel or architecture name as the update service takes one
 * ([A-Za-z0-9._-]+, as al_graph_fetch checks), not starting with '.'. */
static int graph_name_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > 128 || s[0] == '.')
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '.' ||
		      s[i] == '_' || s[i] == '-'))
			return 0;
	return 1;
}

/*
 * An update graph oc-mirror saved for its disk to mirror
 * (OCM_GRAPHS<arch>-<channel>.json, the update service's answer as it
 * came): parsed and kept, for where a release chosen through channels
 * came from (its node's payload) and the channels it was chosen from. A
 * graph that does not parse, or is larger than a graph may be, only
 * costs that: said, and read past.
 */
static int keep_graph(ocm_ctx *c, struct archive *a, const char *name,
                      const char *file, int64_t size)
{
	const char *dash = strchr(file, '-');
	size_t fl = strlen(file), i;
	char *buf = NULL;
	al_graph *g = NULL;
	ocm_graph *v;
	int rc;

	if (strchr(file, '/') != NULL || dash == NULL || fl <= 5 ||
	    strcmp(file + fl - 5, ".json") != 0 || dash + 1 >= file + fl - 5 ||
	    !graph_name_ok(file, (size_t)(dash - file)) ||
	    !graph_name_ok(dash + 1, (size_t)(file + fl - 5 - dash - 1)))
		return 0;
	if (size > AL_GRAPH_MAX_BYTES) {
		al_log_warn("oc-mirror archives: '%s' is larger than an update "
		            "graph may be: read past",
		            name);
		return 0;
	}
	if ((buf = malloc((size_t)size + 1)) == NULL)
		return al_error_oom();
	if ((rc = read_small(c, a, name, buf, (size_t)size + 1, size)) < 0)
		goto out;
	if (al_graph_parse(&g, (const uint8_t *)buf, (size_t)size, name) < 0) {
		al_log_warn(
		    "oc-mirror archives: %s: the releases it lists keep "
		    "the sources they have",
		    al_error_message());
		al_error_clear();
		goto out;
	}
	for (i = 0; i < c->ngraphs && strcmp(c->graphs[i].file, file) != 0; i++)
		;
	if (i == c->ngraphs) {
		if (c->ngraphs >= OCM_GRAPH_COUNT) {
			al_log_warn("oc-mirror archives: more than %d update "
			            "graphs: '%s' read past",
			            OCM_GRAPH_COUNT, name);
			goto out;
		}
		if ((v = realloc(c->graphs, (c->ngraphs + 1) * sizeof(*v))) ==
		    NULL) {
			rc = al_error_oom();
			goto out;
		}
		c->graphs = v;
		memset(&v[i], 0, sizeof(v[i]));
		if ((v[i].file = al_strdup(file)) == NULL ||
		    (v[i].channel = al_strndup(
		         dash + 1, (size_t)(file + fl - 5 - dash - 1))) ==
		        NULL) {
			free(v[i].file);
			rc = al_error_oom();
			goto out;
		}
		c->ngraphs++;
	}
	/* a later archive's copy replaces an earlier one */
	al_graph_free(c->graphs[i].g);
	c->graphs[i].g = g;
	g = NULL;
out:
	al_graph_free(g);
	free(buf);
	return rc;
}

static int check_regular(const char *path, int *fd_out, uint64_t *size)
{
	struct stat st;
	int fd;

	if (lstat(path, &st) != 0)
		return al_error_errno(errno, "cannot read '%s'", path);
	if (!S_ISREG(st.st_mode))
		return al_error_set(AL_EVERIFY,
		                    "oc-mirror archive '%s' is not a regular "
		                    "file",
		                    path);
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) <
	    0)
		return al_error_errno(errno, "cannot open '%s'", path);
	*fd_out = fd;
	*size = (uint64_t)st.st_size;
	return 0;
}

typedef struct vol_reader {
	int fd;
	uint8_t buf[64 * 1024];
} vol_reader;

static la_ssize_t vol_read(struct archive *a, void *ud, const void **out)
{
	vol_reader *r = ud;
	ssize_t n;

	do
		n = read(r->fd, r->buf, sizeof(r->buf));
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		archive_set_error(a, errno, "read failed");
		return -1;
	}
	*out = r->buf;
	return (la_ssize_t)n;
}

static int read_volume(ocm_ctx *c, const char *path)
{
	vol_reader *rd = NULL;
	struct archive *a = NULL;
	struct archive_entry *ae;
	uint64_t fsize = 0;
	int fd = -1, rc, r;

	if ((rc = check_regular(path, &fd, &fsize)) < 0)
		return rc;
	if (fsize == 0) {
		rc = al_error_set(AL_EVERIFY,
		                  "oc-mirror archive '%s' is empty (truncated)",
		                  c->volname);
		goto out;
	}
	if ((a = archive_read_new()) == NULL) {
		rc = al_error_oom();
		goto out;
	}
	/* oc-mirror writes plain tar (archive/tar), nothing else is read */
	archive_read_support_format_tar(a);
	if ((rd = malloc(sizeof(*rd))) == NULL) {
		rc = al_error_oom();
		goto out;
	}
	rd->fd = fd;
	if (archive_read_open(a, rd, NULL, vol_read, NULL) != ARCHIVE_OK) {
		rc = al_error_set(AL_EVERIFY, "oc-mirror archive '%s': %s",
		                  c->volname, archive_error_string(a));
		goto out;
	}
	while ((r = archive_read_next_header(a, &ae)) == ARCHIVE_OK) {
		const char *name = archive_entry_pathname(ae);
		mode_t type = archive_entry_filetype(ae);
		int64_t size = archive_entry_size(ae);

		if (c->opts->cancel != NULL &&
		    al_cancel_is_set(c->opts->cancel)) {
			rc = al_error_set(AL_ECANCELED, "import interrupted");
			goto out;
		}
		if (name == NULL) {
			rc = refuse(c, "", "an entry without a name");
			goto out;
		}
		if (path_hostile(name)) {
			rc = refuse(c, name, "a path outside the archive root");
			goto out;
		}
		if (archive_entry_hardlink(ae) != NULL || type == AE_IFLNK) {
			rc = refuse(c, name, "a link");
			goto out;
		}
		if (type == AE_IFDIR)
			continue;
		if (type != AE_IFREG) {
			rc = refuse(c, name, "not a regular file");
			goto out;
		}
		if (!archive_entry_size_is_set(ae) || size < 0) {
			rc = refuse(c, name, "no size");
			goto out;
		}
		if (al_str_startswith(name, OCM_BLOBS))
			rc = import_blob(c, a, name, name + strlen(OCM_BLOBS),
			                 size);
		else if (al_str_startswith(name, OCM_REPOS))
			rc = repo_entry(c, a, name, name + strlen(OCM_REPOS),
			                size);
		else if (al_str_startswith(name, OCM_SIGS))
			rc = import_signature(c, a, name,
			                      name + strlen(OCM_SIGS), size);
		else if (al_str_startswith(name, OCM_ISC) &&
		         strchr(name, '/') == NULL)
			rc = keep_isc(c, a, name, size);
		else if (al_str_startswith(name, OCM_GRAPHS))
			rc = keep_graph(c, a, name, name + strlen(OCM_GRAPHS),
			                size);
		else
			rc = 0; /* the rest of working-dir/, and others */
		if (rc < 0)
			goto out;
		progress_cb(c);
	}
	if (r != ARCHIVE_EOF) {
		rc = al_error_set(AL_EVERIFY,
		                  "oc-mirror archive '%s' is damaged or "
		                  "truncated: %s",
		                  c->volname, archive_error_string(a));
		goto out;
	}
	/* libarchive takes the end of the file for the end of the archive;
	 * archive/tar's Close writes two zero blocks, so an archive cut at
	 * an entry boundary is told apart here: the end was found where the
	 * file ends, not on a zero block */
	if ((uint64_t)archive_read_header_position(a) >= fsize) {
		rc = al_error_set(AL_EVERIFY,
		                  "oc-mirror archive '%s' is truncated (no "
		                  "end-of-archive blocks)",
		                  c->volname);
		goto out;
	}
	rc = al_store_sync_blob_dir(c->s, AL_DIGEST_SHA256);
out:
	if (a != NULL)
		archive_read_free(a);
	free(rd);
	if (fd >= 0)
		close(fd);
	return rc;
}

/* (repo, digest) keys, sorted, for "is this revision tagged or a child
 * of an index in its repository". */
typedef struct ocm_key {
	const char *repo;
	al_digest d;
} ocm_key;

static int cmp_key(const void *a, const void *b)
{
	const ocm_key *x = a, *y = b;
	int c = strcmp(x->repo, y->repo);

	if (c != 0)
		return c;
	if (x->d.len != y->d.len)
		return x->d.len < y->d.len ? -1 : 1;
	return memcmp(x->d.bytes, y->d.bytes, x->d.len);
}

static int cmp_ref(const void *a, const void *b)
{
	const ocm_ref *x = a, *y = b;
	int c = strcmp(x->repo, y->repo);

	if (c != 0)
		return c;
	if ((x->tag == NULL) != (y->tag == NULL))
		return x->tag == NULL ? 1 : -1;
	if (x->tag != NULL && (c = strcmp(x->tag, y->tag)) != 0)
		return c;
	return memcmp(x->digest.bytes, y->digest.bytes, 32);
}

static int push_key(ocm_key **v, size_t *n, size_t *cap, const char *repo,
                    const al_digest *d)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		ocm_key *g = realloc(*v, nc * sizeof(*g));
		if (g == NULL)
			return al_error_oom();
		*v = g;
		*cap = nc;
	}
	(*v)[*n].repo = repo;
	(*v)[(*n)++].d = *d;
	return 0;
}

/* The manifest at d, parsed (AL_ENOTFOUND when the store lacks it). */
static int load_manifest(ocm_ctx *c, const al_digest *d, al_manifest *m,
                         uint64_t *size)
{
	al_buf b = AL_BUF_INIT(AL_OCI_MANIFEST_MAX);
	int rc;

	if (al_store_has_blob(c->s, d, NULL) != 1)
		return AL_ENOTFOUND;
	if ((rc = al_store_read_blob(c->s, d, &b)) == 0)
		rc = al_manifest_parse(m, b.ptr, b.len, NULL, "manifest");
	if (size != NULL)
		*size = b.len;
	al_buf_free(&b);
	return rc;
}

/*
 * Mark names[0..n) (the refs which[0..n)) untrusted in
 * airlock/untrusted.json, as an airlock pack imported with
 * --accept-untrusted marks its names (pack_unpack.c tag_marks): tags and
 * names by digest alike, since REPO@sha256:... says which bytes, not who
 * vouched for them; a name the store already gives the same digest is
 * not the import's doing and is not marked.
 */
static int tag_marks(ocm_ctx *c, char *const *names, const size_t *which,
                     size_t n)
{
	al_store_untrusted *v;
	size_t i, m = 0;
	int rc;

	if ((v = calloc(n + 1, sizeof(*v))) == NULL)
		return al_error_oom();
	for (i = 0; i < n; i++) {
		const ocm_ref *r = &c->refs[which[i]];
		al_store_image img;
		int same;

		memset(&img, 0, sizeof(img));
		same = al_store_find(c->s, names[i], &img) == 0 &&
		       al_digest_equal(&img.desc.digest, &r->digest);
		al_store_image_clear(&img);
		al_error_clear();
		if (same)
			continue;
		v[m].kind = AL_STORE_UNTRUSTED_TAG;
		v[m].digest = r->digest;
		v[m].name = names[i];
		v[m].pack = c->res->id;
		m++;
	}
	rc = m > 0 ? al_store_untrusted_mark(c->s, v, m) : 0;
	free(v);
	return rc;
}

/* Name in the store every tag, and every revision that is neither tagged
 * nor a child of an index of its repository, whose image is complete. */
static int name_images(ocm_ctx *c)
{
	ocm_key *tagged = NULL, *children = NULL;
	char **names = NULL;
	size_t *which = NULL, nnames = 0;
	size_t ntagged = 0, ctag = 0, nchildren = 0, cchild = 0, i, j;
	int rc = 0;

	if (c->nrefs > 0)
		qsort(c->refs, c->nrefs, sizeof(*c->refs), cmp_ref);
	for (i = 0; i < c->nrefs; i++) {
		const ocm_ref *r = &c->refs[i];
		al_manifest m;

		if (i > 0 && r->tag != NULL && c->refs[i - 1].tag != NULL &&
		    strcmp(r->repo, c->refs[i - 1].repo) == 0 &&
		    strcmp(r->tag, c->refs[i - 1].tag) == 0 &&
		    cmp_key(&(ocm_key){r->repo, r->digest},
		            &(ocm_key){r->repo, c->refs[i - 1].digest}) != 0) {
			rc = al_error_set(
			    AL_EVERIFY,
			    "oc-mirror archives: tag '%s:%s' names "
			    "two manifests",
			    r->repo, r->tag);
			goto out;
		}
		if (r->tag != NULL && (rc = push_key(&tagged, &ntagged, &ctag,
		                                     r->repo, &r->digest)) < 0)
			goto out;
		memset(&m, 0, sizeof(m));
		if (load_manifest(c, &r->digest, &m, NULL) < 0) {
			al_error_clear();
			continue;
		}
		for (j = 0; m.is_index && j < m.nmanifests && rc == 0; j++)
			rc = push_key(&children, &nchildren, &cchild, r->repo,
			              &m.manifests[j].digest);
		al_manifest_clear(&m);
		if (rc < 0)
			goto out;
	}
	/* qsort and bsearch want a real array, even of 0 elements */
	if (ntagged > 0)
		qsort(tagged, ntagged, sizeof(*tagged), cmp_key);
	if (nchildren > 0)
		qsort(children, nchildren, sizeof(*children), cmp_key);
	if ((names = calloc(c->nrefs + 1, sizeof(*names))) == NULL ||
	    (which = calloc(c->nrefs + 1, sizeof(*which))) == NULL) {
		rc = al_error_oom();
		goto out;
	}
	/* what gets a name: every tag, and every revision neither tagged
	 * nor a child, whose image the store holds whole */
	for (i = 0; i < c->nrefs; i++) {
		const ocm_ref *r = &c->refs[i];
		ocm_key k = {r->repo, r->digest};
		char ds[AL_DIGEST_STRMAX], *name;
		al_manifest m;

		if (i > 0 && cmp_ref(r, &c->refs[i - 1]) == 0)
			continue; /* the same link in two volumes */
		if (r->tag == NULL &&
		    ((ntagged > 0 && bsearch(&k, tagged, ntagged, sizeof(k),
		                             cmp_key) != NULL) ||
		     (nchildren > 0 && bsearch(&k, children, nchildren,
		                               sizeof(k), cmp_key) != NULL)))
			continue;
		al_digest_str(&r->digest, ds);
		name =
		    r->tag != NULL
		        ? al_sprintf("%s/%s:%s", OCM_REGISTRY, r->repo, r->tag)
		        : al_sprintf("%s/%s@%s", OCM_REGISTRY, r->repo, ds);
		if (name == NULL) {
			rc = al_error_oom();
			goto out;
		}
		memset(&m, 0, sizeof(m));
		if (!al_pack__image_complete(c->s, &r->digest, NULL, 0) ||
		    load_manifest(c, &r->digest, &m, NULL) < 0) {
			al_error_clear();
			c->res->images_incomplete++;
			al_log_warn(
			    "oc-mirror archives: image '%s' lacks blobs "
			    "in this store, not added to the index "
			    "(an archive made with --since whose base "
			    "was not imported?)",
			    name);
			free(name);
			continue;
		}
		al_manifest_clear(&m);
		names[nnames] = name;
		which[nnames++] = i;
	}
	/* no key vouched for the archives: their tags are marked untrusted
	 * before the first one is set (docs/security.md) */
	if ((rc = tag_marks(c, names, which, nnames)) < 0)
		goto out;
	for (j = 0; j < nnames; j++) {
		const ocm_ref *r = &c->refs[which[j]];
		al_descriptor desc;
		al_manifest m;
		uint64_t size = 0;

		memset(&m, 0, sizeof(m));
		if ((rc = load_manifest(c, &r->digest, &m, &size)) < 0)
			goto out;
		memset(&desc, 0, sizeof(desc));
		desc.media_type = m.media_type;
		desc.digest = r->digest;
		desc.size = size;
		desc.artifact_type = m.artifact_type;
		rc = al_store_tag(c->s, names[j], &desc);
		al_manifest_clear(&m);
		if (rc < 0)
			goto out;
		c->res->images_tagged++;
	}
	rc = al_store_flush(c->s);
out:
	for (j = 0; j < nnames; j++)
		free(names[j]);
	free(names);
	free(which);
	free(tagged);
	free(children);
	return rc;
}

/* The digest a reference pins (NAME@sha256:...): 1 and *d, else 0. */
static int ref_digest(const char *ref, al_digest *d)
{
	const char *at = strrchr(ref, '@');

	if (at == NULL || al_digest_parse_str(d, at + 1) < 0) {
		al_error_clear();
		return 0;
	}
	return 1;
}

/* The refs of the release repository that name a release image: tagged,
 * each (tag, digest) once (refs are sorted by name_images). */
static int is_release_ref(const ocm_ctx *c, size_t i)
{
	const ocm_ref *r = &c->refs[i];

	return r->tag != NULL && strcmp(r->repo, AL_LAYOUT_RELEASE_REPO) == 0 &&
	       (i == 0 || cmp_ref(r, &c->refs[i - 1]) != 0);
}

/*
 * Record on the store image named name (if the import named it) the
 * reference it was mirrored from, as mirror records an image stored
 * under a target name (al_store_set_origin): the mirror sets then name
 * that source, not oc-mirror's cache. want (may be NULL): the digest the
 * reference pins; a name holding another manifest is not its copy and
 * gets nothing.
 */
static int origin_put(ocm_ctx *c, const char *name, const char *origin,
                      const al_digest *want)
{
	al_store_image img;
	int rc, same;

	if (al_str_startswith(origin, "docker://"))
		origin += strlen("docker://");
	memset(&img, 0, sizeof(img));
	if ((rc = al_store_find(c->s, name, &img)) == AL_ENOTFOUND) {
		al_error_clear();
		return 0;
	}
	if (rc < 0)
		return rc;
	same = want == NULL || al_digest_equal(&img.desc.digest, want);
	al_store_image_clear(&img);
	return same ? al_store_set_origin(c->s, name, origin) : 0;
}

/* 1 when the import gave name an origin already (or the name is not in
 * the store), 0 when not. */
static int has_origin(ocm_ctx *c, const char *name)
{
	char *o = NULL;
	int rc = al_store_origin(c->s, name, &o);

	free(o);
	if (rc < 0) {
		al_error_clear();
		return 1;
	}
	return rc;
}

/* The components of the release at openshift/release-images:tag
 * (digest d): each at openshift/release:<tag>-<name> in oc-mirror's
 * cache (prepareM2DCopyBatch), from the image its image-references name. */
static int component_origins(ocm_ctx *c, const char *tag, const al_digest *d)
{
	al_release *r = NULL;
	size_t i;
	int rc = 0;

	if (al_release_open(&r, c->s, d, NULL) < 0) {
		al_error_clear();
		return 0; /* not a release: record_releases says so */
	}
	for (i = 0; i < al_release_component_count(r) && rc == 0; i++) {
		const al_release_component *comp =
		    al_release_component_at(r, i);
		char *name =
		    al_sprintf("%s/%s:%s-%s", OCM_REGISTRY,
		               AL_LAYOUT_COMPONENT_REPO, tag, comp->name);
		al_digest want;
		int pinned = ref_digest(comp->image, &want);

		rc = name != NULL ? origin_put(c, name, comp->image,
		                               pinned ? &want : NULL)
		                  : al_error_oom();
		free(name);
	}
	al_release_free(r);
	return rc;
}

/* An image named by ref (an additional image, a bundle or related image
 * of a catalog): where oc-mirror's cache put it (the path without the
 * registry host; by tag, or by digest under the tag "sha256-<hex>",
 * preparePathComponents, prepareTag, operator prepareM2DCopyBatch),
 * given ref as origin. */
static int additional_origin(ocm_ctx *c, const char *ref)
{
	al_ref r = {0};
	al_digest want;
	char *name = NULL, *name2 = NULL;
	int rc, pinned;

	if (al_str_startswith(ref, "docker://"))
		ref += strlen("docker://");
	if (al_ref_parse(&r, ref) < 0) {
		al_error_clear();
		return 0;
	}
	pinned = ref_digest(ref, &want);
	if (r.tag != NULL)
		name =
		    al_sprintf("%s/%s:%s", OCM_REGISTRY, r.repository, r.tag);
	else if (r.digest != NULL && strchr(r.digest, ':') != NULL) {
		name = al_sprintf("%s/%s@%s", OCM_REGISTRY, r.repository,
		                  r.digest);
		name2 = al_sprintf("%s/%s:%.*s-%s", OCM_REGISTRY, r.repository,
		                   (int)(strchr(r.digest, ':') - r.digest),
		                   r.digest, strchr(r.digest, ':') + 1);
	}
	if (name == NULL ||
	    (r.digest != NULL && r.tag == NULL && name2 == NULL))
		rc = al_error_oom();
	else if ((rc = origin_put(c, name, ref, pinned ? &want : NULL)) == 0 &&
	         name2 != NULL)
		rc = origin_put(c, name2, ref, pinned ? &want : NULL);
	free(name);
	free(name2);
	al_ref_clear(&r);
	return rc;
}

/* Every release the import named whose manifest is d and that has no
 * origin yet gets origin. */
static int release_origin_by_digest(ocm_ctx *c, const al_digest *d,
                                    const char *origin)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < c->nrefs && rc == 0; i++) {
		const ocm_ref *r = &c->refs[i];
		char *name;

		if (!is_release_ref(c, i) || !al_digest_equal(&r->digest, d))
			continue;
		name = al_sprintf("%s/%s:%s", OCM_REGISTRY,
		                  AL_LAYOUT_RELEASE_REPO, r->tag);
		if (name == NULL)
			return al_error_oom();
		if (!has_origin(c, name))
			rc = origin_put(c, name, origin, d);
		free(name);
	}
	return rc;
}

/* The image set configuration oc-mirror carried, read into c->cfg; one
 * that cannot be read only costs the origins it would give (said). */
static int load_isc(ocm_ctx *c)
{
	char *path;

	if (c->isc == NULL)
		return 0;
	path = al_sprintf("%s/airlock/.oc-mirror-isc.%ld.yaml",
	                  al_store_path(c->s), (long)getpid());
	if (path == NULL)
		return al_error_oom();
	if (al_fs_write_atomic(path, c->isc, c->isc_len) < 0 ||
	    al_imageset_load_ex(&c->cfg, path, AL_IMAGESET_OPERATORS) < 0) {
		al_log_warn("oc-mirror archives: cannot read '%s' (%s): the "
		            "images it names keep oc-mirror's cache names as "
		            "their sources",
		            c->isc_name, al_error_message());
		al_error_clear();
		c->cfg = NULL;
	}
	unlink(path);
	free(path);
	return 0;
}

/* Releases (platform.release) and additional images of the carried image
 * set configuration. */
static int isc_origins(ocm_ctx *c)
{
	const al_imageset *cfg = c->cfg;
	size_t i;
	int rc = 0;

	for (i = 0; cfg != NULL && i < cfg->nreleases && rc == 0; i++) {
		const char *rel = cfg->releases[i];
		char *tag = NULL, *name;
		al_digest want;
		int pinned = ref_digest(rel, &want);

		if (al_layout_release_tag(rel, &tag) < 0) {
			al_error_clear();
			continue;
		}
		name = al_sprintf("%s/%s:%s", OCM_REGISTRY,
		                  AL_LAYOUT_RELEASE_REPO, tag);
		rc = name != NULL
		         ? origin_put(c, name, rel, pinned ? &want : NULL)
		         : al_error_oom();
		free(name);
		free(tag);
		/* by digest: oc-mirror tags it with its signature's tag
		 * (GenerateReleaseSignatures), found by the digest */
		if (rc == 0 && pinned)
			rc = release_origin_by_digest(
			    c, &want,
			    al_str_startswith(rel, "docker://")
			        ? rel + strlen("docker://")
			        : rel);
		/* an archive that kept the release at its own path */
		if (rc == 0)
			rc = additional_origin(c, rel);
	}
	for (i = 0; cfg != NULL && i < cfg->nadditional && rc == 0; i++)
		rc = additional_origin(c, cfg->additional[i]);
	return rc;
}

/* The payload of the first node of the carried update graphs whose
 * payload is the manifest d, or NULL. */
static const char *graph_payload(const ocm_ctx *c, const al_digest *d)
{
	size_t i, j;
	al_digest p;

	for (i = 0; i < c->ngraphs; i++)
		for (j = 0; j < c->graphs[i].g->nnodes; j++) {
			const char *pl = c->graphs[i].g->nodes[j].payload;

			if (ref_digest(pl, &p) && al_digest_equal(&p, d))
				return pl;
		}
	return NULL;
}

/*
 * A release oc-mirror chose through channels: it took the payload from
 * the update graph, whose copy the archives carry (OCM_GRAPHS); the
 * node whose payload is the release's manifest says where it came from
 * (quay.io/openshift-release-dev/ocp-release@sha256:...). A release the
 * configuration named keeps that origin.
 */
static int graph_origins(ocm_ctx *c)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < c->nrefs && rc == 0; i++) {
		const char *payload;

		if (!is_release_ref(c, i) ||
		    (payload = graph_payload(c, &c->refs[i].digest)) == NULL)
			continue;
		rc = release_origin_by_digest(c, &c->refs[i].digest, payload);
	}
	return rc;
}

/* 1 when d is one of seen[0..n), else adds it (0; AL_ENOMEM). */
static int seen_digest(al_digest **seen, size_t *n, const al_digest *d)
{
	al_digest *g;
	size_t i;

	for (i = 0; i < *n; i++)
		if (al_digest_equal(&(*seen)[i], d))
			return 1;
	if ((g = realloc(*seen, (*n + 1) * sizeof(*g))) == NULL)
		return al_error_oom();
	g[(*n)++] = *d;
	*seen = g;
	return 0;
}

/* An operator catalog of the carried configuration: where oc-mirror's
 * cache put it (al_pack__ocmirror_catalog_name) gets its reference as
 * origin. An oci: catalog came from no registry. */
static int catalog_origin(ocm_ctx *c, const al_imageset_operator *op)
{
	al_digest want;
	char *name = NULL;
	int rc, pinned;

	if ((rc = al_pack__ocmirror_catalog_name(op, &name)) < 0 ||
	    name == NULL)
		return rc;
	pinned = ref_digest(op->catalog, &want);
	rc = origin_put(c, name, op->catalog, pinned ? &want : NULL);
	free(name);
	return rc;
}

/*
 * Operator images: oc-mirror's cache names them by path and tag (or
 * "sha256-<hex>") alone; the catalogs the archives carry (the catalog
 * image, as fetched or as oc-mirror rebuilt it) name each bundle and
 * related image by its real reference, which gives it as origin
 * (additional_origin). A catalog that does not open (a delta without
 * its base, an SQLite catalog) only costs its images' origins.
 */
static int catalog_origins(ocm_ctx *c)
{
	al_digest *seen = NULL;
	size_t nseen = 0, i, k;
	int rc = 0;

	for (i = 0; c->cfg != NULL && i < c->cfg->noperators && rc == 0; i++)
		rc = catalog_origin(c, &c->cfg->operators[i]);
	for (i = 0; i < c->nrefs && rc == 0; i++) {
		const ocm_ref *r = &c->refs[i];
		al_catalog *cat = NULL;
		char **imgs = NULL;
		size_t nimgs = 0;
		int kind;

		if (r->tag == NULL)
			continue;
		kind = al_catalog_image_kind(c->s, &r->digest, NULL);
		al_error_clear();
		if (kind != 1)
			continue;
		if ((rc = seen_digest(&seen, &nseen, &r->digest)) != 0) {
			rc = rc > 0 ? 0 : rc;
			continue;
		}
		if ((rc = al_catalog_open_image(&cat, NULL, c->s, &r->digest,
		                                NULL)) < 0 ||
		    (rc = al_catalog_images(cat, &imgs, &nimgs)) < 0) {
			al_catalog_free(cat);
			if (rc == AL_ENOMEM)
				break;
			al_log_warn("oc-mirror archives: catalog '%s/%s:%s': "
			            "%s: its images keep oc-mirror's cache "
			            "names as their sources",
			            OCM_REGISTRY, r->repo, r->tag,
			            al_error_message());
			al_error_clear();
			rc = 0;
			continue;
		}
		for (k = 0; k < nimgs && rc == 0; k++)
			rc = additional_origin(c, imgs[k]);
		al_catalog_images_free(imgs, nimgs);
		al_catalog_free(cat);
	}
	free(seen);
	return rc;
}

/*
 * Where the images came from (docs/coming-from-oc-mirror.md): oc-mirror's
 * cache names them by its own registry and drops the source host; the
 * sources are in the archives themselves: each release's
 * image-references for its components, the carried image set
 * configuration for its releases, additional images and catalogs, the
 * carried update graphs for releases chosen through channels, the
 * catalogs for operator images.
 */
static int set_origins(ocm_ctx *c)
{
	size_t i;
	int rc;

	if ((rc = load_isc(c)) < 0)
		return rc;
	for (i = 0; i < c->nrefs && rc == 0; i++)
		if (is_release_ref(c, i))
			rc = component_origins(c, c->refs[i].tag,
			                       &c->refs[i].digest);
	if (rc == 0)
		rc = isc_origins(c);
	if (rc == 0)
		rc = graph_origins(c);
	if (rc == 0)
		rc = catalog_origins(c);
	if (rc == 0)
		rc = al_store_flush(c->s);
	return rc;
}

/* When oc-mirror built the archives: the time in the name of the image
 * set configuration it added (archive.go BuildArchive, RFC 3339 in UTC,
 * "YYYY-MM-DDTHH:MM:SSZ"), else now. Caller frees. */
static char *archive_time(const ocm_ctx *c)
{
	static const char form[] = "dddd-dd-ddTdd:dd:ddZ";
	const char *t;
	size_t i;

	if (c->isc_name == NULL)
		return al_clock_rfc3339_now();
	t = c->isc_name + strlen(OCM_ISC);
	if (strlen(t) != sizeof(form) - 1)
		return al_clock_rfc3339_now();
	for (i = 0; i < sizeof(form) - 1; i++)
		if (form[i] == 'd' ? (t[i] < '0' || t[i] > '9')
		                   : t[i] != form[i])
			return al_clock_rfc3339_now();
	return al_strdup(t);
}

/* The channels of the carried graphs that list the release d, into the
 * array chans (NULL when none). */
static int graph_channels(const ocm_ctx *c, const al_digest *d, json_t **chans)
{
	size_t i, j;
	al_digest p;

	*chans = NULL;
	for (i = 0; i < c->ngraphs; i++) {
		int listed = 0;

		for (j = 0; j < c->graphs[i].g->nnodes && !listed; j++)
			listed =
			    ref_digest(c->graphs[i].g->nodes[j].payload, &p) &&
			    al_digest_equal(&p, d);
		if (!listed)
			continue;
		for (j = 0; *chans != NULL && j < json_array_size(*chans); j++)
			if (strcmp(json_string_value(json_array_get(*chans, j)),
			           c->graphs[i].channel) == 0)
				listed = 0;
		if (!listed)
			continue;
		if ((*chans == NULL && (*chans = json_array()) == NULL) ||
		    json_array_append_new(
		        *chans, json_string(c->graphs[i].channel)) != 0)
			return al_error_oom();
	}
	return 0;
}

/* One release record, as mirror writes one (store_meta.c put_edit's
 * members and order): version, digest, source, components, mirrored,
 * channels; no "verified": no key looked at its signatures. */
static int release_record(const ocm_ctx *c, const al_release *r,
                          const al_digest *d, const char *source,
                          const char *stamp, json_t **out)
{
	char ds[AL_DIGEST_STRMAX];
	json_t *rec = json_object(), *chans = NULL;
	int rc;

	if (rec == NULL)
		return al_error_oom();
	if ((al_release_version(r) != NULL &&
	     json_object_set_new(rec, "version",
	                         json_string(al_release_version(r))) != 0) ||
	    json_object_set_new(rec, "digest",
	                        json_string(al_digest_str(d, ds))) != 0 ||
	    json_object_set_new(rec, "source", json_string(source)) != 0 ||
	    json_object_set_new(
	        rec, "components",
	        json_integer((json_int_t)al_release_component_count(r))) != 0 ||
	    json_object_set_new(rec, "mirrored", json_string(stamp)) != 0) {
		json_decref(rec);
		return al_error_oom();
	}
	if ((rc = graph_channels(c, d, &chans)) < 0 ||
	    (chans != NULL &&
	     json_object_set_new(rec, "channels", chans) != 0)) {
		json_decref(rec);
		return rc < 0 ? rc : al_error_oom();
	}
	*out = rec;
	return 0;
}

/*
 * Each release image oc-mirror carried (its cache puts each at
 * openshift/release-images:<tag>, local_stored_collector.go
 * preparePathComponents) that the import named is recorded in
 * releases.json as mirror records one (mirror_images.c record_release):
 * its source is where it came from (set_origins) or, when the archives
 * do not say, its store name; the time is when oc-mirror built the
 * archives, so that importing them again adds nothing. An image there
 * that is not a release (no release-metadata) is left unrecorded, said.
 *
 * No key vouched for the archives: the records are marked untrusted
 * before they are written, as an airlock pack accepted untrusted marks
 * the records it merges (pack_unpack.c merge_releases,
 * al_store__untrusted_releases_mark; docs/security.md "Marks of
 * untrusted imports"), so that releases shows them untrusted, pack
 * leaves them out and a trusted import of the release replaces them.
 */
static int record_releases(ocm_ctx *c)
{
	json_t *doc = json_object(), *arr = json_array(), *rec = NULL;
	char *stamp = NULL, ds[AL_DIGEST_STRMAX];
	al_digest *seen = NULL;
	al_store_release old;
	size_t i, nseen = 0;
	int rc = 0;

	if (doc == NULL || arr == NULL ||
	    json_object_set_new(doc, "releases", arr) != 0) {
		json_decref(arr);
		rc = al_error_oom();
		goto out;
	}
	if ((stamp = archive_time(c)) == NULL) {
		rc = al_error_oom();
		goto out;
	}
	for (i = 0; i < c->nrefs && rc == 0; i++) {
		const ocm_ref *ref = &c->refs[i];
		al_release *r = NULL;
		al_store_image img;
		char *name, *origin = NULL;
		int named;

		if (!is_release_ref(c, i))
			continue;
		if ((name = al_sprintf("%s/%s:%s", OCM_REGISTRY, ref->repo,
		                       ref->tag)) == NULL) {
			rc = al_error_oom();
			break;
		}
		memset(&img, 0, sizeof(img));
		named = al_store_find(c->s, name, &img) == 0 &&
		        al_digest_equal(&img.desc.digest, &ref->digest);
		al_store_image_clear(&img);
		al_error_clear();
		if (!named) {
			free(name);
			continue; /* incomplete: not named */
		}
		/* a release the store records already keeps its record:
		 * every archive oc-mirror builds carries its whole cache,
		 * so each later (delta) import names it again */
		if (al_store_release_find(c->s, al_digest_str(&ref->digest, ds),
		                          &old) == 0) {
			al_store_release_clear(&old);
			free(name);
			continue;
		}
		al_error_clear();
		if ((rc = seen_digest(&seen, &nseen, &ref->digest)) != 0) {
			rc = rc > 0 ? 0 : rc;
			free(name);
			continue;
		}
		if ((rc = al_release_open(&r, c->s, &ref->digest, NULL)) < 0) {
			if (rc != AL_ENOMEM) {
				al_log_warn("oc-mirror archives: '%s' is not a "
				            "release image (%s): not recorded "
				            "as a release",
				            name, al_error_message());
				al_error_clear();
				rc = 0;
			}
			free(name);
			continue;
		}
		if ((rc = al_store_origin(c->s, name, &origin)) < 0) {
			al_release_free(r);
			free(name);
			break;
		}
		if (origin == NULL)
			al_log_warn("oc-mirror archives: the archives do not "
			            "say where release %s came from: its "
			            "source is recorded as '%s'",
			            al_release_version(r) != NULL
			                ? al_release_version(r)
			                : "?",
			            name);
		rc =
		    release_record(c, r, &ref->digest,
		                   origin != NULL ? origin : name, stamp, &rec);
		if (rc == 0 && json_array_append_new(arr, rec) != 0)
			rc = al_error_oom();
		if (rc == 0)
			al_log_info("oc-mirror archives: release %s recorded "
			            "(%s, from %s)",
			            al_release_version(r) != NULL
			                ? al_release_version(r)
			                : "?",
			            name, origin != NULL ? origin : name);
		free(origin);
		free(name);
		al_release_free(r);
	}
	if (rc < 0 || json_array_size(arr) == 0)
		goto out;
	if ((rc = al_store__untrusted_releases_mark(c->s, doc, c->res->id)) ==
	    0)
		rc = al_store__releases_import(c->s, doc,
		                               "the oc-mirror archives");
out:
	free(seen);
	free(stamp);
	json_decref(doc);
	return rc;
}

/* The operator catalogs the archives carry, recorded as mirror records
 * them, marked untrusted (pack_ocmirror_catalogs.c); their time is the
 * archives'. */
static int record_catalogs(ocm_ctx *c)
{
	char *stamp;
	int rc;

	if (c->cfg == NULL)
		return 0;
	if ((stamp = archive_time(c)) == NULL)
		return al_error_oom();
	rc = al_pack__ocmirror_catalogs(c->s, c->cfg, c->res->id, stamp);
	free(stamp);
	return rc;
}

static int push_missing(al_unpack_result *r, unsigned long n)
{
	char name[32], **g;

	snprintf(name, sizeof(name), "%s%06lu.tar", OCM_PREFIX, n);
	if ((g = realloc(r->missing, (r->nmissing + 1) * sizeof(*g))) == NULL)
		return al_error_oom();
	r->missing = g;
	if ((g[r->nmissing] = al_strdup(name)) == NULL)
		return al_error_oom();
	r->nmissing++;
	return 0;
}

int al_pack__ocmirror_unpack(al_store *s, const char *dir,
                             const al_unpack_opts *opts, al_unpack_result *res)
{
	static const al_unpack_opts defaults = AL_UNPACK_OPTS_INIT;
	ocm_ctx c;
	char **names = NULL, **vols = NULL;
	size_t n = 0, nvols = 0, i;
	unsigned long want = 1;
	int rc;

	memset(&c, 0, sizeof(c));
	c.s = s;
	c.opts = opts != NULL ? opts : &defaults;
	c.res = res;
	c.start_ms = al_clock_now_ms();
	c.pi.phase = "unpack";
	snprintf(res->id, sizeof(res->id), "oc-mirror");
	/* oc-mirror signs nothing of its archives: a trust the caller asks
	 * for cannot be had, so nothing is imported */
	if (c.opts->trust_key != NULL)
		return al_error_set(
		    AL_EVERIFY,
		    "'%s' holds oc-mirror archives, which carry "
		    "no signature: they cannot be imported with "
		    "--trust",
		    dir);
	/* and no key verified them: they enter the store only when the
	 * caller says so (docs/security.md "Untrusted imports") */
	if (!c.opts->accept_untrusted)
		return al_error_set(
		    AL_EVERIFY,
		    "'%s' holds oc-mirror archives, which carry "
		    "no signature: import them with --accept-untrusted",
		    dir);
	if ((rc = al_pack__list_dir(dir, &names, &n)) < 0)
		return rc;
	if ((vols = calloc(n ? n : 1, sizeof(*vols))) == NULL) {
		rc = al_error_oom();
		goto out;
	}
	for (i = 0; i < n; i++)
		if (volume_number(names[i]) > 0)
			vols[nvols++] = names[i];
	if (nvols > 0)
		qsort(vols, nvols, sizeof(*vols), cmp_str);
	res->volumes_total = nvols;
	/* oc-mirror numbers its archives from 1 without gaps
	 * (strictAdder/permissiveAdder nextChunk): a gap is a volume still
	 * to come; the last one missing shows as images lacking blobs */
	for (i = 0; i < nvols; i++, want++) {
		unsigned long v = volume_number(vols[i]);
		if (v > OCM_MAX_VOLUMES) {
			rc = al_error_set(AL_EINVAL, "'%s': too many archives",
			                  dir);
			goto out;
		}
		while (want < v)
			if ((rc = push_missing(res, want++)) < 0)
				goto out;
	}
	if (res->nmissing > 0) {
		res->volumes_total += res->nmissing;
		goto out; /* complete stays 0: the caller names them */
	}
	if ((c.chunk = malloc(AL_PACK_CHUNK)) == NULL) {
		rc = al_error_oom();
		goto out;
	}
	for (i = 0; i < nvols; i++) {
		char *p = al_path_join(dir, vols[i]);
		if (p == NULL) {
			rc = al_error_oom();
			goto out;
		}
		c.volname = vols[i];
		rc = read_volume(&c, p);
		free(p);
		if (rc < 0)
			goto out;
		res->volumes_read++;
	}
	if ((rc = name_images(&c)) < 0 || (rc = set_origins(&c)) < 0 ||
	    (rc = record_releases(&c)) < 0 || (rc = record_catalogs(&c)) < 0)
		goto out;
	res->complete = 1;
	if (c.opts->progress != NULL) {
		c.pi.elapsed_ms = al_clock_now_ms() - c.start_ms;
		c.opts->progress(&c.pi, c.opts->progress_ud);
	}
out:
	res->bytes = c.pi.bytes_done;
	for (i = 0; i < c.nrefs; i++) {
		free(c.refs[i].repo);
		free(c.refs[i].tag);
	}
	free(c.refs);
	free(c.isc);
	free(c.isc_name);
	al_imageset_free(c.cfg);
	for (i = 0; i < c.ngraphs; i++) {
		free(c.graphs[i].file);
		free(c.graphs[i].channel);
		al_graph_free(c.graphs[i].g);
	}
	free(c.graphs);
	free(c.chunk);
	free(vols);
	al_pack__free_list(names, n);
	return rc;
}
