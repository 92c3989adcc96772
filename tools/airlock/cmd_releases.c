/* cmd_releases.c: airlock releases: a table of the mirrored releases (version,
 * digest, components, signatures, pack, channels). */
#include <stdlib.h>
#include <string.h>

#include "airlock/graph.h"
#include "cli_esc.h"
#include "cli.h"
#include "cli_json.h"
#include "cmd.h"

enum { OPT_STORE = OPT_COMMAND_BASE };

static const char releases_help[] =
    "usage: airlock releases --store DIR\n"
    "\n"
    "List the releases the store holds (airlock/releases.json), sorted by "
    "version:\n"
    "  VERSION  DIGEST  COMPONENTS  SIGNATURES  PACK  CHANNELS\n"
    "SIGNATURES is verified, unverified (mirrored with --allow-unsigned), -\n"
    "(not checked), or untrusted: the record was written by an import no key\n"
    "verified (unpack --accept-untrusted; airlock check names the pack).\n"
    "PACK names the packs\n"
    "(airlock/packs/<id>.json) that carried the release, or -. CHANNELS are "
    "the\n"
    "update channels the release was selected from, or -.\n"
    "\n"
    "Options:\n"
    "      --store DIR   the store\n"
    "      --json        the releases as JSON (airlock.releases/v1, "
    "docs/json.md)\n" CLI_LOCAL_HELP "\n"
    "Exit status: 0 success, 2 usage error, 3 the store cannot be read.\n";

static int cmp_release(const void *a, const void *b)
{
	const al_store_release *ra = a, *rb = b;

	return al_version_compare(ra->version != NULL ? ra->version : "",
	                          rb->version != NULL ? rb->version : "");
}

/* Comma-joined ids of the packs that carried the release, or "-". */
static char *packs_of(const al_store_pack *packs, size_t n,
                      const al_store_release *r)
{
	al_buf b = AL_BUF_INIT(64 * 1024);
	size_t i;

	for (i = 0; r->has_digest && i < n; i++)
		if (al_store_pack_carries(&packs[i], &r->digest))
			al_buf_printf(&b, "%s%s", b.len > 0 ? "," : "",
			              packs[i].id);
	if (b.len == 0)
		al_buf_puts(&b, "-");
	return al_buf_detach(&b, NULL);
}

static char *channels_of(const al_store_release *r)
{
	al_buf b = AL_BUF_INIT(64 * 1024);
	size_t i;

	for (i = 0; i < r->nchannels; i++)
		al_buf_printf(&b, "%s%s", b.len > 0 ? "," : "", r->channels[i]);
	if (b.len == 0)
		al_buf_puts(&b, "-");
	return al_buf_detach(&b, NULL);
}

/* The pack id of the untrusted import that wrote record r (its release
 * and version marked in airlock/untrusted.json), or NULL. */
static const char *untrusted_by(const al_store_release *r,
                                const al_store_untrusted *u, size_t nu)
{
	size_t i;

	for (i = 0; r->has_digest && i < nu; i++)
		if (u[i].kind == AL_STORE_UNTRUSTED_RELEASE &&
		    al_digest_equal(&u[i].digest, &r->digest) &&
		    strcmp(u[i].name, r->version != NULL ? r->version : "") ==
		        0)
			return u[i].pack;
	return NULL;
}

static const char *sig_status(const al_store_release *r)
{
	if (r->verified == AL_STORE_VERIFIED)
		return "verified";
	if (r->verified == AL_STORE_UNVERIFIED)
		return "unverified";
	return "-";
}

/* --json: one object per release (docs/json.md, airlock.releases/v1). */
static void json_rows(const char *store_path, const al_store_release *rows,
                      size_t n, const al_store_pack *packs, size_t npacks,
                      const al_store_untrusted *u, size_t nu)
{
	json_t *root = cli_json_root(), *arr;
	size_t i, j, k;

	cli_json_set_str(root, "store", store_path);
	arr = cli_json_set_array(root, "releases");
	for (i = 0; i < n; i++) {
		const al_store_release *r = &rows[i];
		json_t *o = cli_json_append_object(arr), *a;

		cli_json_set_str(o, "version", r->version);
		cli_json_set_str(o, "digest", r->digest_text);
		cli_json_set_str(o, "source", r->source);
		if (r->components >= 0)
			cli_json_set_int(o, "components", r->components);
		else
			cli_json_set_str(o, "components", NULL);
		cli_json_set_str(o, "platform", r->platform);
		cli_json_set_str(o, "mirrored", r->mirrored);
		cli_json_set_str(o, "signatures",
		                 r->verified == AL_STORE_VERIFIED ? "verified"
		                 : r->verified == AL_STORE_UNVERIFIED
		                     ? "unverified"
		                     : "unchecked");
		cli_json_set_str(o, "verified_by", r->verified_by);
		cli_json_set_str(o, "untrusted_pack", untrusted_by(r, u, nu));
		a = cli_json_set_array(o, "packs");
		for (j = 0; r->has_digest && j < npacks; j++)
			if (al_store_pack_carries(&packs[j], &r->digest))
				cli_json_append_str(a, packs[j].id);
		a = cli_json_set_array(o, "channels");
		for (k = 0; k < r->nchannels; k++)
			cli_json_append_str(a, r->channels[k]);
	}
}

static int table(const char *store_path)
{
	al_store *store = NULL;
	al_store_opts so = AL_STORE_OPTS_INIT;
	al_store_release *rows = NULL;
	al_store_pack *packs = NULL;
	al_store_untrusted *u = NULL;
	size_t npacks = 0, n = 0, nu = 0, i, wv = 7, wd = 6, wp = 4;
	char **pks = NULL;
	int rc, code = EXIT_OK;

	so.readonly = 1;
	if ((rc = al_store_open(&store, store_path, &so)) < 0)
		return cli_fail(rc, "cannot open store '%s'", store_path);
	if ((rc = al_store_releases_list(store, &rows, &n)) < 0 ||
	    (rc = al_store_packs_list(store, &packs, &npacks)) < 0 ||
	    (rc = al_store_untrusted_list(store, &u, &nu)) < 0) {
		cli_fail(rc, "cannot read store '%s'", store_path);
		code = EXIT_RUNTIME;
		goto out;
	}
	for (i = 0; i < n; i++) {
		const char *v = rows[i].version, *d = rows[i].digest_text;

		/* widths of what is printed: the escaped text */
		if (v != NULL && strlen(cli_esc(v)) > wv)
			wv = strlen(cli_esc(v));
		if (d != NULL && strlen(cli_esc(d)) > wd)
			wd = strlen(cli_esc(d));
	}
	if (n > 1)
		qsort(rows, n, sizeof(*rows), cmp_release);
	pks = calloc(n + 1, sizeof(*pks));
	if (pks == NULL) {
		cli_error("out of memory");
		code = EXIT_RUNTIME;
		goto out;
	}
	if (cli_json_active()) {
		json_rows(store_path, rows, n, packs, npacks, u, nu);
		goto out;
	}
	for (i = 0; i < n; i++) {
		pks[i] = packs_of(packs, npacks, &rows[i]);
		if (pks[i] != NULL && strlen(cli_esc(pks[i])) > wp)
			wp = strlen(cli_esc(pks[i]));
	}
	printf("%-*s  %-*s  %10s  %-10s  %-*s  %s\n", (int)wv, "VERSION",
	       (int)wd, "DIGEST", "COMPONENTS", "SIGNATURES", (int)wp, "PACK",
	       "CHANNELS");
	for (i = 0; i < n; i++) {
		const char *v = rows[i].version, *d = rows[i].digest_text;
		char *ch = channels_of(&rows[i]);
		char cbuf[32];

		if (rows[i].components >= 0)
			snprintf(cbuf, sizeof(cbuf), "%lld",
			         rows[i].components);
		else
			snprintf(cbuf, sizeof(cbuf), "-");
		/* releases.json and the pack records are files: escaped */
		printf("%-*s  %-*s  %10s  %-10s  %-*s  %s\n", (int)wv,
		       cli_esc(v), (int)wd, cli_esc(d), cbuf,
		       untrusted_by(&rows[i], u, nu) != NULL
		           ? "untrusted"
		           : sig_status(&rows[i]),
		       (int)wp, cli_esc(pks[i]), cli_esc(ch));
		free(ch);
	}
out:
	if (pks != NULL)
		for (i = 0; i < n; i++)
			free(pks[i]);
	free(pks);
	al_store_packs_free(packs, npacks);
	al_store_untrusted_free(u, nu);
	al_store_releases_free(rows, n);
	al_store_free(store);
	return code;
}

int cmd_releases(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"store", required_argument, NULL, OPT_STORE},
	    CLI_JSON_OPTION,
	    CLI_LOCAL_OPTIONS,
	    {NULL, 0, NULL, 0},
	};
	const char *store_path = NULL;
	cli_common c;
	int opt, json = 0;

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
		case OPT_JSON:
			json = 1;
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
	if (json && cli_json_begin("releases") < 0)
		return EXIT_RUNTIME;
	return table(store_path);
}
