/* helm_dir.c: a chart directory packaged as `helm package` would, so that a
 * local chart directory is stored, read and pushed like a chart archive
 * (docs/helm.md "Local charts"). The walk follows Helm's loader.LoadDir
 * (pkg/chart/loader/directory.go) and its .helmignore rules
 * (pkg/ignore/rules.go), with bounds. */
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/helm.h"
#include "yaml_int.h"

/* One .helmignore rule (pkg/ignore/rules.go parseRule). */
typedef struct hrule {
	char *pat;    /* without '!', trailing '/' and leading '/' */
	int negate;   /* '!' */
	int must_dir; /* trailing '/' */
	int mode;     /* 0: base name only, 1: whole path */
} hrule;

typedef struct dfile {
	char *rel;  /* path below the chart directory, '/'-separated */
	char *real; /* resolved absolute path */
	uint64_t size;
	int64_t mtime;
} dfile;

typedef struct dwalk {
	const char *what; /* the directory as configured, for messages */
	char *top;        /* realpath of the directory */
	size_t toplen;
	hrule *rules;
	size_t nrules;
	dfile *files;
	size_t n, cap;
	size_t entries; /* files and directories visited */
	uint64_t total;
} dwalk;

static void dwalk_free(dwalk *w)
{
	size_t i;

	for (i = 0; i < w->nrules; i++)
		free(w->rules[i].pat);
	free(w->rules);
	for (i = 0; i < w->n; i++) {
		free(w->files[i].rel);
		free(w->files[i].real);
	}
	free(w->files);
	free(w->top);
	memset(w, 0, sizeof(*w));
}

/* ---- .helmignore ------------------------------------------------------- */

static int has_star2(const char *p, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len; i++)
		if (p[i] == '*' && p[i + 1] == '*')
			return 1;
	return 0;
}

static int add_rule(dwalk *w, const char *line, size_t len, size_t lineno)
{
	hrule r, *g;
	const char *p = line;

	while (len > 0 && (p[0] == ' ' || p[0] == '\t' || p[0] == '\r')) {
		p++;
		len--;
	}
	while (len > 0 &&
	       (p[len - 1] == ' ' || p[len - 1] == '\t' || p[len - 1] == '\r'))
		len--;
	if (len == 0 || p[0] == '#')
		return 0;
	if (memchr(p, '\0', len) != NULL)
		return al_error_set(AL_EPARSE, "%s/.helmignore:%zu: a NUL byte",
		                    w->what, lineno);
	memset(&r, 0, sizeof(r));
	if (has_star2(p, len))
		return al_error_set(AL_EPARSE,
		                    "%s/.helmignore:%zu: double-star (**) "
		                    "syntax is not supported",
		                    w->what, lineno);
	if (p[0] == '!') {
		r.negate = 1;
		p++;
		len--;
	}
	if (len > 0 && p[len - 1] == '/') {
		r.must_dir = 1;
		len--;
	}
	if (len > 0 && p[0] == '/') {
		r.mode = 1;
		p++;
		len--;
	} else if (memchr(p, '/', len) != NULL) {
		r.mode = 1;
	}
	if ((r.pat = al_strndup(p, len)) == NULL)
		return al_error_oom();
	if (w->nrules >= 4096) {
		free(r.pat);
		return al_error_set(
		    AL_ELIMIT, "%s/.helmignore: more than 4096 rules", w->what);
	}
	g = realloc(w->rules, (w->nrules + 1) * sizeof(*g));
	if (g == NULL) {
		free(r.pat);
		return al_error_oom();
	}
	w->rules = g;
	w->rules[w->nrules++] = r;
	return 0;
}

#define AL_HELMIGNORE_MAX (1024 * 1024)

static int load_ignore(dwalk *w)
{
	char *path = al_sprintf("%s/.helmignore", w->top);
	al_buf b = AL_BUF_INIT(AL_HELMIGNORE_MAX);
	const char *p, *e, *end;
	size_t lineno = 0;
	int rc = 0;

	if (path == NULL)
		return al_error_oom();
	rc = al_fs_read_file(path, &b);
	if (rc == AL_ENOTFOUND) {
		al_error_clear();
		rc = 0;
		goto defaults;
	}
	if (rc == AL_ELIMIT)
		rc = al_error_set(AL_ELIMIT, "'%s' is larger than %d bytes",
		                  path, AL_HELMIGNORE_MAX);
	if (rc < 0)
		goto out;
	p = b.len >= 3 && memcmp(b.ptr, "\xEF\xBB\xBF", 3) == 0
	        ? (const char *)b.ptr + 3
	        : (const char *)b.ptr;
	end = (const char *)b.ptr + b.len;
	for (; p < end; p = e + 1) {
		e = memchr(p, '\n', (size_t)(end - p));
		if (e == NULL)
			e = end;
		if ((rc = add_rule(w, p, (size_t)(e - p), ++lineno)) < 0)
			goto out;
		if (e == end)
			break;
	}
defaults:
	/* rules.AddDefaults: every dotfile in templates/ */
	rc = add_rule(w, "templates/.?*", 13, 0);
out:
	al_buf_free(&b);
	free(path);
	return rc;
}

/* filepath.Match: '*' and '?' do not cross '/'. */
static int match(const char *pat, const char *name)
{
	return fnmatch(pat, name, FNM_PATHNAME) == 0;
}

/* rules.Ignore, with its order and its handling of negated rules: a
 * negated rule that does not match ignores the path. */
static int ignored(const dwalk *w, const char *rel, int isdir)
{
	size_t i;

	for (i = 0; i < w->nrules; i++) {
		const hrule *r = &w->rules[i];
		const char *base = strrchr(rel, '/');
		const char *n = r->mode == 1 ? rel : base ? base + 1 : rel;

		if (r->negate) {
			if (r->must_dir && !isdir)
				return 1;
			if (!match(r->pat, n))
				return 1;
			continue;
		}
		if (r->must_dir && !isdir)
			continue;
		if (match(r->pat, n))
			return 1;
	}
	return 0;
}

/* ---- the walk ---------------------------------------------------------- */

static int inside(const dwalk *w, const char *real)
{
	return strncmp(real, w->top, w->toplen) == 0 &&
	       (real[w->toplen] == '/' || real[w->toplen] == '\0');
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int add_file(dwalk *w, const char *rel, const char *real,
                    const struct stat *st)
{
	dfile *f;

	if ((uint64_t)st->st_size > AL_HELM_FILE_MAX)
		return al_error_set(AL_ELIMIT,
		                    "%s: chart file '%s' is larger than the "
		                    "maximum file size %d",
		                    w->what, rel, AL_HELM_FILE_MAX);
	w->total += (uint64_t)st->st_size;
	if (w->total > AL_HELM_CHART_MAX)
		return al_error_set(AL_ELIMIT,
		                    "%s: the chart is larger than %d bytes "
		                    "(at '%s')",
		                    w->what, AL_HELM_CHART_MAX, rel);
	if (w->n >= AL_HELM_DIR_FILES_MAX)
		return al_error_set(AL_ELIMIT,
		                    "%s: the chart has more than %d files (at "
		                    "'%s')",
		                    w->what, AL_HELM_DIR_FILES_MAX, rel);
	if (w->n == w->cap) {
		size_t nc = w->cap ? w->cap * 2 : 32;
		dfile *g = realloc(w->files, nc * sizeof(*g));

		if (g == NULL)
			return al_error_oom();
		w->files = g;
		w->cap = nc;
	}
	f = &w->files[w->n];
	memset(f, 0, sizeof(*f));
	f->rel = al_strdup(rel);
	f->real = al_strdup(real);
	f->size = (uint64_t)st->st_size;
	f->mtime = (int64_t)st->st_mtime;
	w->n++;
	if (f->rel == NULL || f->real == NULL)
		return al_error_oom();
	return 0;
}

static int walk_dir(dwalk *w, const char *dir, const char *prefix,
                    unsigned depth);

/* One directory entry: rel below the chart, path on disk. */
static int walk_entry(dwalk *w, const char *path, const char *rel,
                      unsigned depth)
{
	struct stat st;
	char *real = NULL;
	int rc = 0;

	/* links may make the tree a graph: bound the visits, not only the
	 * files kept */
	if (++w->entries > AL_HELM_DIR_FILES_MAX)
		return al_error_set(
		    AL_ELIMIT,
		    "%s: more than %d files and directories (at "
		    "'%s')",
		    w->what, AL_HELM_DIR_FILES_MAX, rel);
	if (lstat(path, &st) < 0)
		return al_error_errno(errno, "%s: cannot read '%s'", w->what,
		                      path);
	if (S_ISLNK(st.st_mode)) {
		/* sympath.Walk follows links; one that leaves the chart
		 * directory is refused here */
		real = realpath(path, NULL);
		if (real == NULL)
			return al_error_errno(
			    errno,
			    "%s: '%s' is a symbolic link that "
			    "does not resolve",
			    w->what, path);
		if (!inside(w, real)) {
			rc =
			    al_error_set(AL_EPARSE,
			                 "%s: '%s' is a symbolic link to '%s', "
			                 "outside the chart directory",
			                 w->what, path, real);
			goto out;
		}
		if (stat(real, &st) < 0) {
			rc = al_error_errno(errno, "%s: cannot read '%s'",
			                    w->what, real);
			goto out;
		}
	} else if ((real = al_strdup(path)) == NULL) {
		return al_error_oom();
	}
	if (S_ISDIR(st.st_mode)) {
		if (!ignored(w, rel, 1))
			rc = walk_dir(w, real, rel, depth + 1);
		goto out;
	}
	if (ignored(w, rel, 0))
		goto out;
	if (!S_ISREG(st.st_mode)) {
		rc = al_error_set(AL_EPARSE,
		                  "%s: cannot load irregular file '%s' as it "
		                  "has file mode type bits set",
		                  w->what, path);
		goto out;
	}
	rc = add_file(w, rel, real, &st);
out:
	free(real);
	return rc;
}

static int walk_dir(dwalk *w, const char *dir, const char *prefix,
                    unsigned depth)
{
	DIR *d;
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0, i;
	int rc = 0;

	if (depth > AL_HELM_DIR_DEPTH_MAX)
		return al_error_set(AL_ELIMIT,
		                    "%s: '%s' is more than %d directories deep",
		                    w->what, prefix, AL_HELM_DIR_DEPTH_MAX);
	d = opendir(dir);
	if (d == NULL)
		return al_error_errno(
		    errno, "%s: cannot read the directory '%s'", w->what, dir);
	while ((errno = 0, de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (n >= AL_HELM_DIR_FILES_MAX) {
			rc = al_error_set(AL_ELIMIT,
			                  "%s: '%s' holds more than %d entries",
			                  w->what, dir, AL_HELM_DIR_FILES_MAX);
			goto out;
		}
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 32;
			char **g = realloc(names, nc * sizeof(*g));

			if (g == NULL) {
				rc = al_error_oom();
				goto out;
			}
			names = g;
			cap = nc;
		}
		if ((names[n] = al_strdup(de->d_name)) == NULL) {
			rc = al_error_oom();
			goto out;
		}
		n++;
	}
	if (errno != 0) {
		rc = al_error_errno(errno, "%s: cannot read the directory '%s'",
		                    w->what, dir);
		goto out;
	}
	/* filepath.Walk visits names in lexical order */
	if (n > 1)
		qsort(names, n, sizeof(*names), name_cmp);
	for (i = 0; i < n && rc == 0; i++) {
		char *path = al_sprintf("%s/%s", dir, names[i]);
		char *rel = prefix[0] != '\0'
		                ? al_sprintf("%s/%s", prefix, names[i])
		                : al_strdup(names[i]);

		if (path == NULL || rel == NULL)
			rc = al_error_oom();
		else if (strlen(rel) > 3000)
			rc = al_error_set(AL_ELIMIT,
			                  "%s: the path '%.200s...' "
			                  "is too long",
			                  w->what, rel);
		else
			rc = walk_entry(w, path, rel, depth);
		free(path);
		free(rel);
	}
out:
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
	return rc;
}

/* ---- Chart.yaml's name ------------------------------------------------- */

static const dfile *find(const dwalk *w, const char *rel)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		if (strcmp(w->files[i].rel, rel) == 0)
			return &w->files[i];
	return NULL;
}

static int chart_name(const dwalk *w, char **out)
{
	const dfile *f = find(w, "Chart.yaml");
	al_buf b = AL_BUF_INIT(AL_HELM_FILE_MAX);
	al_yaml_node **docs = NULL;
	const al_yaml_node *n;
	size_t ndocs = 0;
	char *name = NULL;
	int rc;

	*out = NULL;
	if (f == NULL)
		return al_error_set(AL_EPARSE, "%s: Chart.yaml file is missing",
		                    w->what);
	if ((rc = al_fs_read_file(f->real, &b)) < 0)
		goto out;
	name = al_sprintf("%s/Chart.yaml", w->what);
	if (name == NULL) {
		rc = al_error_oom();
		goto out;
	}
	if ((rc = al_yaml_load_lenient(&docs, &ndocs, b.ptr, b.len, name)) < 0)
		goto out;
	n = ndocs > 0 && docs[0] != NULL && docs[0]->type == AL_YAML_MAP
	        ? al_yaml_get(docs[0], "name")
	        : NULL;
	if (n == NULL || n->type != AL_YAML_SCALAR || n->len == 0 ||
	    strlen(n->value) != n->len) {
		rc = al_error_set(AL_EPARSE,
		                  "%s: chart.metadata.name is "
		                  "required",
		                  name);
		goto out;
	}
	/* the name is the archive's top directory: one plain component */
	if (strchr(n->value, '/') != NULL || strchr(n->value, '\\') != NULL ||
	    strcmp(n->value, ".") == 0 || strcmp(n->value, "..") == 0) {
		rc = al_error_set(AL_EPARSE,
		                  "%s: chart name '%.200s' is not a valid "
		                  "directory name",
		                  name, n->value);
		goto out;
	}
	if ((*out = al_strdup(n->value)) == NULL)
		rc = al_error_oom();
out:
	al_yaml_docs_free(docs, ndocs);
	al_buf_free(&b);
	free(name);
	return rc;
}

/* ---- the archive ------------------------------------------------------- */

static int awrite_err(struct archive *a, const char *what)
{
	return al_error_set(
	    AL_EIO, "%s: cannot write the chart archive: %s", what,
	    archive_error_string(a) != NULL ? archive_error_string(a)
	                                    : "unknown error");
}

static int put_file(struct archive *a, const dwalk *w, const dfile *f,
                    const char *top)
{
	struct archive_entry *e = NULL;
	uint8_t buf[65536];
	struct stat st;
	uint64_t left = f->size;
	char *name = al_sprintf("%s/%s", top, f->rel);
	int fd = -1, rc = 0;

	if (name == NULL)
		return al_error_oom();
	fd = open(f->real, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		rc = al_error_errno(errno, "%s: cannot open '%s'", w->what,
		                    f->real);
		goto out;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size != f->size) {
		rc = al_error_set(AL_EIO, "%s: '%s' changed while it was read",
		                  w->what, f->real);
		goto out;
	}
	if ((e = archive_entry_new()) == NULL) {
		rc = al_error_oom();
		goto out;
	}
	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	archive_entry_set_size(e, (la_int64_t)f->size);
	archive_entry_set_mtime(e, (time_t)f->mtime, 0);
	if (archive_write_header(a, e) != ARCHIVE_OK) {
		rc = awrite_err(a, w->what);
		goto out;
	}
	while (left > 0) {
		ssize_t r = read(
		    fd, buf, left < sizeof(buf) ? (size_t)left : sizeof(buf));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			rc = r < 0
			         ? al_error_errno(errno, "%s: cannot read '%s'",
			                          w->what, f->real)
			         : al_error_set(AL_EIO,
			                        "%s: '%s' changed while it "
			                        "was read",
			                        w->what, f->real);
			goto out;
		}
		if (archive_write_data(a, buf, (size_t)r) != r) {
			rc = awrite_err(a, w->what);
			goto out;
		}
		left -= (uint64_t)r;
	}
out:
	if (e != NULL)
		archive_entry_free(e);
	if (fd >= 0)
		close(fd);
	free(name);
	return rc;
}

int al_helm_package_dir(const char *dir, int fd)
{
	dwalk w;
	struct archive *a = NULL;
	char *top = NULL;
	size_t i;
	int rc;
	const dfile *first[2];

	memset(&w, 0, sizeof(w));
	w.what = dir;
	if ((w.top = realpath(dir, NULL)) == NULL)
		return al_error_errno(errno, "cannot resolve '%s'", dir);
	w.toplen = strlen(w.top);
	if (w.toplen == 1) /* "/" */
		w.toplen = 0;
	if ((rc = load_ignore(&w)) < 0 ||
	    (rc = walk_dir(&w, w.top, "", 0)) < 0 ||
	    (rc = chart_name(&w, &top)) < 0)
		goto out;
	if ((a = archive_write_new()) == NULL) {
		rc = al_error_oom();
		goto out;
	}
	/* a gzip header without a timestamp: packaging the same directory
	 * twice gives the same bytes */
	if (archive_write_add_filter_gzip(a) != ARCHIVE_OK ||
	    archive_write_set_filter_option(a, "gzip", "timestamp", NULL) !=
	        ARCHIVE_OK ||
	    archive_write_set_format_pax_restricted(a) != ARCHIVE_OK ||
	    archive_write_open_fd(a, fd) != ARCHIVE_OK) {
		rc = awrite_err(a, dir);
		goto out;
	}
	/* chartutil.Save writes Chart.yaml and values.yaml first */
	first[0] = find(&w, "Chart.yaml");
	first[1] = find(&w, "values.yaml");
	for (i = 0; i < 2; i++)
		if (first[i] != NULL &&
		    (rc = put_file(a, &w, first[i], top)) < 0)
			goto out;
	for (i = 0; i < w.n; i++) {
		if (&w.files[i] == first[0] || &w.files[i] == first[1])
			continue;
		if ((rc = put_file(a, &w, &w.files[i], top)) < 0)
			goto out;
	}
	if (archive_write_close(a) != ARCHIVE_OK)
		rc = awrite_err(a, dir);
out:
	if (a != NULL)
		archive_write_free(a);
	free(top);
	dwalk_free(&w);
	return rc;
}
