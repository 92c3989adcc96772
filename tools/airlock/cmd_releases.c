/* cmd_releases.c: airlock releases: a table of the mirrored releases (version,
 * digest, components, signatures, pack, channels). */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "airlock/graph.h"
#include "cli.h"
#include "cmd.h"

enum { OPT_STORE = OPT_COMMAND_BASE };

/* A pack record is small; a huge one is not ours. */
#define PACK_RECORD_MAX (64 * 1024 * 1024)

static const char releases_help[] =
    "usage: airlock releases --store DIR\n"
    "\n"
    "List the releases the store holds (airlock/releases.json), sorted by "
    "version:\n"
    "  VERSION  DIGEST  COMPONENTS  SIGNATURES  PACK  CHANNELS\n"
    "SIGNATURES is verified, unverified (mirrored with --allow-unsigned) or -\n"
    "(not checked). PACK names the packs\n"
    "(airlock/packs/<id>.json) that carried the release, or -. CHANNELS are "
    "the\n"
    "update channels the release was selected from, or -.\n"
    "\n"
    "Options:\n"
    "      --store DIR   the store\n" CLI_LOCAL_HELP "\n"
    "Exit status: 0 success, 2 usage error, 3 the store cannot be read.\n";

typedef struct pack_rec {
	char *id;
	char *text; /* the record, serialised, searched for digests */
} pack_rec;

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every airlock/packs/<id>.json, sorted by id. Missing directory: none. */
static int load_packs(const char *store_path, pack_rec **out, size_t *n)
{
	char *dir = al_path_join(store_path, "airlock/packs");
	char **names = NULL;
	size_t nn = 0, i;
	pack_rec *recs = NULL;
	DIR *dh;
	struct dirent *de;
	int rc = 0;

	*out = NULL;
	*n = 0;
	if (dir == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	dh = opendir(dir);
	if (dh == NULL) {
		rc = errno == ENOENT
		         ? 0
		         : al_error_errno(errno, "cannot read '%s'", dir);
		free(dir);
		return rc;
	}
	while ((de = readdir(dh)) != NULL) {
		char **g;

		if (de->d_name[0] == '.' ||
		    !al_str_endswith(de->d_name, ".json"))
			continue;
		g = realloc(names, (nn + 1) * sizeof(*g));
		if (g == NULL || (g[nn] = al_strdup(de->d_name)) == NULL) {
			names = g != NULL ? g : names;
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		names = g;
		nn++;
	}
	if (nn > 1)
		qsort(names, nn, sizeof(*names), cmp_str);
	recs = calloc(nn + 1, sizeof(*recs));
	if (recs == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < nn; i++) {
		char *path = al_path_join(dir, names[i]);
		json_t *v = NULL;

		if (path == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		rc = al_json_load_file(&v, path, PACK_RECORD_MAX);
		free(path);
		if (rc < 0)
			goto out;
		recs[*n].id = al_strndup(names[i], strlen(names[i]) - 5);
		recs[*n].text = al_json_dump(v, 0);
		json_decref(v);
		(*n)++;
		if (recs[*n - 1].id == NULL || recs[*n - 1].text == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
	}
	*out = recs;
	recs = NULL;
out:
	if (recs != NULL) {
		for (i = 0; i < *n; i++) {
			free(recs[i].id);
			free(recs[i].text);
		}
		free(recs);
		*n = 0;
	}
	for (i = 0; i < nn; i++)
		free(names[i]);
	free(names);
	closedir(dh);
	free(dir);
	return rc;
}

static int cmp_release(const void *a, const void *b)
{
	const char *va = al_json_str(*(json_t *const *)a, "version");
	const char *vb = al_json_str(*(json_t *const *)b, "version");

	return al_version_compare(va != NULL ? va : "", vb != NULL ? vb : "");
}

/* Comma-joined packs whose record names the digest's hex, or "-". */
static char *packs_of(const pack_rec *packs, size_t n, const char *digest)
{
	al_buf b = AL_BUF_INIT(64 * 1024);
	const char *hex = digest != NULL ? strchr(digest, ':') : NULL;
	size_t i;

	hex = hex != NULL ? hex + 1 : digest;
	for (i = 0; hex != NULL && strlen(hex) >= 32 && i < n; i++)
		if (strstr(packs[i].text, hex) != NULL)
			al_buf_printf(&b, "%s%s", b.len > 0 ? "," : "",
			              packs[i].id);
	if (b.len == 0)
		al_buf_puts(&b, "-");
	return al_buf_detach(&b, NULL);
}

static char *channels_of(const json_t *e)
{
	al_buf b = AL_BUF_INIT(64 * 1024);
	const json_t *chs = json_object_get(e, "channels");
	size_t i;

	for (i = 0; i < json_array_size(chs); i++) {
		const char *s = json_string_value(json_array_get(chs, i));

		if (s != NULL)
			al_buf_printf(&b, "%s%s", b.len > 0 ? "," : "", s);
	}
	if (b.len == 0)
		al_buf_puts(&b, "-");
	return al_buf_detach(&b, NULL);
}

static const char *sig_status(const json_t *e)
{
	const json_t *v = json_object_get(e, "verified");

	if (json_is_true(v))
		return "verified";
	if (json_is_false(v))
		return "unverified";
	return "-";
}

static int table(const char *store_path)
{
	al_store *store = NULL;
	al_store_opts so = {.readonly = 1};
	json_t *doc = NULL, *list;
	json_t **rows = NULL;
	pack_rec *packs = NULL;
	size_t npacks = 0, n = 0, i, wv = 7, wd = 6, wp = 4;
	char **pks = NULL;
	int rc, code = EXIT_OK;

	if ((rc = al_store_open(&store, store_path, &so)) < 0)
		return cli_fail(rc, "cannot open store '%s'", store_path);
	if ((rc = al_store_releases_load(store, &doc)) < 0 ||
	    (rc = load_packs(store_path, &packs, &npacks)) < 0) {
		code = cli_fail(rc, "cannot read store '%s'", store_path);
		goto out;
	}
	list = json_object_get(doc, "releases");
	n = json_array_size(list);
	rows = calloc(n + 1, sizeof(*rows));
	if (rows == NULL) {
		cli_error("out of memory");
		code = EXIT_RUNTIME;
		goto out;
	}
	for (i = 0; i < n; i++) {
		const char *v, *d;

		rows[i] = json_array_get(list, i);
		v = al_json_str(rows[i], "version");
		d = al_json_str(rows[i], "digest");
		if (v != NULL && strlen(v) > wv)
			wv = strlen(v);
		if (d != NULL && strlen(d) > wd)
			wd = strlen(d);
	}
	if (n > 1)
		qsort(rows, n, sizeof(*rows), cmp_release);
	pks = calloc(n + 1, sizeof(*pks));
	if (pks == NULL) {
		cli_error("out of memory");
		code = EXIT_RUNTIME;
		goto out;
	}
	for (i = 0; i < n; i++) {
		pks[i] =
		    packs_of(packs, npacks, al_json_str(rows[i], "digest"));
		if (pks[i] != NULL && strlen(pks[i]) > wp)
			wp = strlen(pks[i]);
	}
	printf("%-*s  %-*s  %10s  %-10s  %-*s  %s\n", (int)wv, "VERSION",
	       (int)wd, "DIGEST", "COMPONENTS", "SIGNATURES", (int)wp, "PACK",
	       "CHANNELS");
	for (i = 0; i < n; i++) {
		const json_t *comp = json_object_get(rows[i], "components");
		const char *v = al_json_str(rows[i], "version");
		const char *d = al_json_str(rows[i], "digest");
		char *pk = pks[i];
		char *ch = channels_of(rows[i]);
		char cbuf[32];

		if (json_is_integer(comp))
			snprintf(cbuf, sizeof(cbuf), "%lld",
			         (long long)json_integer_value(comp));
		else
			snprintf(cbuf, sizeof(cbuf), "-");
		printf("%-*s  %-*s  %10s  %-10s  %-*s  %s\n", (int)wv,
		       v != NULL ? v : "-", (int)wd, d != NULL ? d : "-", cbuf,
		       sig_status(rows[i]), (int)wp, pk != NULL ? pk : "-",
		       ch != NULL ? ch : "-");
		free(pk);
		pks[i] = NULL;
		free(ch);
	}
out:
	for (i = 0; i < npacks; i++) {
		free(packs[i].id);
		free(packs[i].text);
	}
	free(packs);
	if (pks != NULL)
		for (i = 0; i < n; i++)
			free(pks[i]);
	free(pks);
	free(rows);
	json_decref(doc);
	al_store_free(store);
	return code;
}

int cmd_releases(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"store", required_argument, NULL, OPT_STORE},
	    CLI_LOCAL_OPTIONS,
	    {NULL, 0, NULL, 0},
	};
	const char *store_path = NULL;
	cli_common c;
	int opt;

	cli_common_init(&c);
	optind = 1;
	while ((opt = cli_getopt(&c, "releases", argc, argv, "h", longopts)) !=
	       -1) {
		switch (opt) {
		case 'h':
			fputs(releases_help, stdout);
			return EXIT_OK;
		case OPT_STORE:
			store_path = optarg;
			break;
		default:
			return EXIT_USAGE;
		}
	}
	if (store_path == NULL)
		return cli_usage_error("releases", "--store DIR is required");
	if (optind != argc)
		return cli_usage_error("releases", "unexpected argument '%s'",
		                       argv[optind]);
	cli_log_start(&c);
	return table(store_path);
}
