/* cmd_check.c: airlock check: re-verify every blob and reference of a store;
 * --gc removes what nothing references. */
#include <stdlib.h>
#include <string.h>

#include "airlock/pack.h"
#include "cli.h"
#include "cli_esc.h"
#include "cli_json.h"
#include "cmd.h"

enum { OPT_STORE = OPT_COMMAND_BASE, OPT_GC, OPT_QUICK };

static const char check_help[] =
    "usage: airlock check --store DIR [--gc] [--quick]\n"
    "\n"
    "Walk index.json, every index and manifest and every config and layer "
    "they\n"
    "reference, re-hash each blob, and list what is missing or corrupt, one "
    "per line:\n"
    "  missing sha256:... - referenced by IMAGE\n"
    "  missing sha256:... - manifest of release V (...) recorded in "
    "airlock/releases.json\n"
    "  corrupt sha256:... - content does not match its digest\n"
    "  invalid PATH        (a manifest, index or layout file that does not "
    "parse,\n"
    "                       or an index entry that is not a manifest or "
    "index)\n"
    "  unreferenced sha256:...\n"
    "Releases recorded in airlock/releases.json are checked too (manifest, "
    "blobs,\n"
    "component images), named in index.json or not.\n"
    "A rerun of 'airlock mirror' (or 'airlock unpack') fetches what is "
    "missing.\n"
    "\n"
    "Options:\n"
    "      --store DIR   the store\n"
    "      --gc          remove unreferenced blobs, stale temporary files, "
    "corrupt\n"
    "                    blobs (so that a rerun fetches them again), "
    "partial\n"
    "                    downloads and push upload sessions no running "
    "airlock\n"
    "                    holds; never what a recorded release needs\n"
    "      --quick       compare sizes only, do not re-hash\n"
    "      --json        the result as JSON (airlock.check/v1, "
    "docs/json.md)\n"
    "  -q, --quiet       only problems and the summary line\n" CLI_LOG_HELP "\n"
    "Summary line: checked I images, B blobs: M missing, C corrupt, U "
    "unreferenced\n"
    "then, when there are any, what is kept to resume interrupted "
    "transfers:\n"
    "  kept to resume: P partial downloads (B bytes), U upload sessions (B "
    "bytes),\n"
    "  N in use, the oldest S s old (each one is listed as unreferenced "
    "PATH)\n"
    "then one line per pack held in the quarantine (docs/security.md), not "
    "in the\n"
    "store and used by no command until promoted:\n"
    "  quarantined ID: N images, signed|unsigned: not in the store (...)\n"
    "and one line per signature, name (a tag or a name by digest) or record\n"
    "an untrusted import wrote (unpack\n"
    "--accept-untrusted) that no trusted import has replaced:\n"
    "  untrusted signature PATH: written by pack ID without --trust (...)\n"
    "  untrusted tag NAME -> DIGEST: set by pack ID without --trust (...)\n"
    "  untrusted catalog record NAME: written by pack ID without --trust "
    "(...)\n"
    "  untrusted chart record NAME: written by pack ID without --trust "
    "(...)\n"
    "  untrusted sigstore record NAME: written by pack ID without --trust "
    "(...)\n"
    "Exit status: 0 clean (unreferenced blobs do not count), 1 anything "
    "missing,\n"
    "corrupt or invalid, 2 usage error, 3 the check could not run.\n";

typedef struct check_ctx {
	int quiet;
	int gc;
	json_t *problems; /* --json: the problems array */
} check_ctx;

static void report(void *ud, al_check_kind kind, const char *what,
                   const char *detail)
{
	check_ctx *c = ud;
	const char *label;

	switch (kind) {
	case AL_CHECK_MISSING:
		label = "missing";
		break;
	case AL_CHECK_CORRUPT:
		label = "corrupt";
		break;
	case AL_CHECK_INVALID:
		label = "invalid";
		break;
	case AL_CHECK_UNREFERENCED:
		if (c->quiet || c->gc)
			return;
		label = "unreferenced";
		break;
	case AL_CHECK_REMOVED:
		if (c->quiet)
			return;
		label = "removed";
		break;
	default:
		return;
	}
	if (cli_json_active()) {
		json_t *o = cli_json_append_object(c->problems);

		cli_json_set_str(o, "kind", label);
		cli_json_set_str(o, "what", what);
		cli_json_set_str(o, "detail",
		                 detail != NULL && detail[0] != '\0' ? detail
		                                                     : NULL);
		return;
	}
	/* what and detail may carry names from index.json or a manifest:
	 * escaped, like every diagnostic */
	{
		char swhat[1024], sdetail[2048];

		al_str_escape(swhat, sizeof(swhat), what, strlen(what));
		if (detail != NULL && detail[0] != '\0') {
			al_str_escape(sdetail, sizeof(sdetail), detail,
			              strlen(detail));
			printf("%s %s - %s\n", label, swhat, sdetail);
		} else {
			printf("%s %s\n", label, swhat);
		}
	}
}

static void json_result(const al_check_result *res, int gc)
{
	json_t *root = cli_json_root();

	cli_json_set_u64(root, "images", res->images);
	cli_json_set_u64(root, "blobs_checked", res->blobs_checked);
	cli_json_set_u64(root, "bytes_checked", res->bytes_checked);
	cli_json_set_u64(root, "missing", res->missing);
	cli_json_set_u64(root, "corrupt", res->corrupt);
	cli_json_set_u64(root, "invalid", res->invalid);
	cli_json_set_u64(root, "unreferenced", res->unreferenced);
	if (gc) {
		cli_json_set_u64(root, "removed", res->removed);
		cli_json_set_u64(root, "bytes_removed", res->bytes_removed);
	}
	cli_json_set_bool(root, "clean",
	                  res->missing == 0 && res->corrupt == 0 &&
	                      res->invalid == 0);
}

/*
 * What the store keeps to resume interrupted transfers (partial downloads,
 * push upload sessions; al_store_kept_list): one summary line with their
 * count, bytes and the oldest one's age, after gc what gc left (the ones
 * in use). --json: the "kept" array.
 */
static int show_kept(al_store *store)
{
	al_store_kept *v = NULL;
	uint64_t bytes[2] = {0, 0}, oldest = 0;
	size_t n = 0, i, count[2] = {0, 0}, busy = 0;
	int rc;

	if ((rc = al_store_kept_list(store, &v, &n)) < 0)
		return rc;
	if (cli_json_active()) {
		json_t *arr = cli_json_set_array(cli_json_root(), "kept");
		for (i = 0; i < n; i++) {
			json_t *o = cli_json_append_object(arr);
			int up = v[i].kind == AL_STORE_KEPT_UPLOAD;

			cli_json_set_str(o, "kind",
			                 up ? "upload-session"
			                    : "partial-download");
			cli_json_set_str(o, "path", v[i].path);
			cli_json_set_u64(o, "bytes", v[i].bytes);
			cli_json_set_u64(o, "age_seconds", v[i].age_s);
			cli_json_set_bool(o, "in_use", v[i].in_use);
			cli_json_set_str(o, "digest", v[i].digest);
			if (up && v[i].target != NULL) {
				cli_json_set_str(o, "target", v[i].target);
				cli_json_set_u64(o, "sent", v[i].done);
				cli_json_set_u64(o, "size", v[i].size);
			}
		}
	}
	for (i = 0; i < n; i++) {
		int up = v[i].kind == AL_STORE_KEPT_UPLOAD;

		count[up]++;
		bytes[up] += v[i].bytes;
		busy += v[i].in_use != 0;
		if (v[i].age_s > oldest)
			oldest = v[i].age_s;
	}
	if (n > 0 && !cli_json_active())
		printf(
		    "kept to resume: %zu partial downloads (%llu bytes), %zu "
		    "upload sessions (%llu bytes), %zu in use, the oldest "
		    "%llu s old (airlock check --gc removes those not in "
		    "use)\n",
		    count[0], (unsigned long long)bytes[0], count[1],
		    (unsigned long long)bytes[1], busy,
		    (unsigned long long)oldest);
	al_store_kept_free(v, n);
	return 0;
}

/*
 * The packs quarantined in the store (docs/security.md "Untrusted
 * imports"): not store problems, so no exit code, but named with what to
 * do about them. --json: the "quarantined" array.
 */
static int show_quarantine(al_store *store)
{
	al_quarantined *q = NULL;
	size_t n = 0, i, j;
	int rc;

	if ((rc = al_pack_quarantine_list(store, &q, &n)) < 0)
		return rc;
	if (cli_json_active()) {
		json_t *arr =
		    cli_json_set_array(cli_json_root(), "quarantined");
		for (i = 0; i < n; i++) {
			json_t *o = cli_json_append_object(arr), *imgs;
			cli_json_set_str(o, "id", q[i].id);
			cli_json_set_bool(o, "complete", q[i].complete);
			cli_json_set_bool(o, "signed", q[i].signed_);
			imgs = cli_json_set_array(o, "images");
			for (j = 0; j < q[i].nimages; j++)
				cli_json_append_str(imgs, q[i].images[j]);
		}
	}
	for (i = 0; i < n && !cli_json_active(); i++)
		printf("quarantined %s: %zu images, %s%s: not in the store "
		       "(airlock unpack --promote %s --trust PUBKEY, or --drop "
		       "%s)\n",
		       cli_esc(q[i].id), q[i].nimages,
		       q[i].signed_ ? "signed" : "unsigned",
		       q[i].complete ? "" : ", import incomplete",
		       cli_esc(q[i].id), cli_esc(q[i].id));
	al_pack_quarantine_list_free(q, n);
	return 0;
}

/*
 * What an import no key verified (unpack --accept-untrusted) wrote into
 * the store (docs/security.md "Untrusted imports"): not a store problem
 * (no exit code), named so the operator sees it. --json: "untrusted".
 */
static int show_untrusted(al_store *store)
{
	al_store_untrusted *v = NULL;
	char ds[AL_DIGEST_STRMAX];
	json_t *arr = NULL;
	size_t n = 0, i;
	int rc;

	if ((rc = al_store_untrusted_list(store, &v, &n)) < 0)
		return rc;
	if (cli_json_active())
		arr = cli_json_set_array(cli_json_root(), "untrusted");
	for (i = 0; i < n; i++) {
		int sig = v[i].kind == AL_STORE_UNTRUSTED_SIGNATURE;
		int rel = v[i].kind == AL_STORE_UNTRUSTED_RELEASE;
		const char *rec =
		    v[i].kind == AL_STORE_UNTRUSTED_CATALOG    ? "catalog"
		    : v[i].kind == AL_STORE_UNTRUSTED_CHART    ? "chart"
		    : v[i].kind == AL_STORE_UNTRUSTED_SIGSTORE ? "sigstore"
		                                               : NULL;
		al_digest_str(&v[i].digest, ds);
		if (rec != NULL) {
			/* a catalog, chart or sigstore record of
			 * releases.json */
			if (arr != NULL) {
				json_t *o = cli_json_append_object(arr);
				cli_json_set_str(o, "kind", rec);
				cli_json_set_str(o, "name", v[i].name);
				cli_json_set_str(o, "digest",
				                 v[i].digest.algo != 0 ? ds
				                                       : NULL);
				cli_json_set_str(o, "pack", v[i].pack);
			} else {
				printf("untrusted %s record %s: written by "
				       "pack %s without --trust (a trusted "
				       "import of it replaces it)\n",
				       rec, cli_esc(v[i].name),
				       cli_esc(v[i].pack));
			}
			continue;
		}
		if (arr != NULL) {
			json_t *o = cli_json_append_object(arr);
			cli_json_set_str(o, "kind",
			                 sig   ? "signature"
			                 : rel ? "release"
			                       : "tag");
			if (rel)
				cli_json_set_str(o, "version", v[i].name);
			else
				cli_json_set_str(o, sig ? "path" : "name",
				                 sig ? v[i].path : v[i].name);
			cli_json_set_str(o, sig || rel ? "release" : "digest",
			                 ds);
			cli_json_set_str(o, "pack", v[i].pack);
			continue;
		}
		if (sig)
			printf("untrusted signature %s: written by pack %s "
			       "without --trust (configmaps leaves it out; a "
			       "trusted import of it clears this)\n",
			       cli_esc(v[i].path), cli_esc(v[i].pack));
		else if (rel)
			printf("untrusted release record %s (%s): written by "
			       "pack %s without --trust (a trusted import of "
			       "the release replaces it)\n",
			       ds, cli_esc(v[i].name), cli_esc(v[i].pack));
		else
			printf("untrusted tag %s -> %s: set by pack %s "
			       "without --trust (a trusted import of it clears "
			       "this)\n",
			       cli_esc(v[i].name), ds, cli_esc(v[i].pack));
	}
	al_store_untrusted_free(v, n);
	return 0;
}

int cmd_check(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"store", required_argument, NULL, OPT_STORE},
	    {"gc", no_argument, NULL, OPT_GC},
	    {"quick", no_argument, NULL, OPT_QUICK},
	    CLI_JSON_OPTION,
	    CLI_LOCAL_OPTIONS,
	    {NULL, 0, NULL, 0},
	};
	const char *store_path = NULL;
	al_store *store = NULL;
	al_store_opts so = {.readonly = 1};
	al_check_result res = AL_CHECK_RESULT_INIT;
	check_ctx ctx = {.quiet = 0, .gc = 0, .problems = NULL};
	cli_common c;
	int opt, rc, flags = 0, code = EXIT_OK, json = 0;

	cli_common_init(&c);
	optind = 1;
	while ((opt = cli_getopt(&c, "check", argc, argv, "h", longopts)) !=
	       -1) {
		switch (opt) {
		case 'h':
			fputs(check_help, stdout);
			return EXIT_OK;
		case OPT_STORE:
			store_path = optarg;
			break;
		case OPT_GC:
			flags |= AL_STORE_CHECK_GC;
			ctx.gc = 1;
			break;
		case OPT_QUICK:
			flags |= AL_STORE_CHECK_QUICK;
			break;
		case OPT_JSON:
			json = 1;
			break;
		default:
			return EXIT_USAGE;
		}
	}
	if (store_path == NULL)
		return cli_usage_error("check", "--store DIR is required");
	if (argc != optind)
		return cli_usage_error("check", "unexpected argument '%s'",
		                       argv[optind]);
	ctx.quiet = c.quiet;
	cli_log_start(&c);
	if (json) {
		if (cli_json_begin("check") < 0)
			return EXIT_RUNTIME;
		cli_json_set_str(cli_json_root(), "store", store_path);
		ctx.problems = cli_json_set_array(cli_json_root(), "problems");
	}
	so.readonly = ctx.gc ? 0 : 1;
	if ((rc = al_store_open(&store, store_path, &so)) < 0)
		return cli_fail(rc, "cannot open store '%s'", store_path);
	rc = al_mirror_check(store, flags, report, &ctx, &res);
	if (rc < 0) {
		code = cli_fail(rc, "cannot check store '%s'", store_path);
		goto out;
	}
	if (res.missing > 0 || res.corrupt > 0 || res.invalid > 0)
		code = EXIT_VERIFY;
	if (json) {
		json_result(&res, ctx.gc);
		if ((rc = show_kept(store)) < 0)
			code = cli_fail(rc,
			                "cannot list what '%s' keeps to "
			                "resume",
			                store_path);
		if ((rc = show_quarantine(store)) < 0)
			code =
			    cli_fail(rc, "cannot list the quarantine of '%s'",
			             store_path);
		if ((rc = show_untrusted(store)) < 0)
			code = cli_fail(rc,
			                "cannot list the untrusted marks "
			                "of '%s'",
			                store_path);
		goto out;
	}
	printf("checked %llu images, %llu blobs: %llu missing, %llu corrupt, "
	       "%llu unreferenced",
	       (unsigned long long)res.images,
	       (unsigned long long)res.blobs_checked,
	       (unsigned long long)res.missing, (unsigned long long)res.corrupt,
	       (unsigned long long)res.unreferenced);
	if (res.invalid > 0)
		printf(", %llu invalid", (unsigned long long)res.invalid);
	if (ctx.gc)
		printf(", %llu removed (%llu bytes)",
		       (unsigned long long)res.removed,
		       (unsigned long long)res.bytes_removed);
	printf("\n");
	if ((rc = show_kept(store)) < 0)
		code = cli_fail(rc, "cannot list what '%s' keeps to resume",
		                store_path);
	if ((rc = show_quarantine(store)) < 0)
		code = cli_fail(rc, "cannot list the quarantine of '%s'",
		                store_path);
	if ((rc = show_untrusted(store)) < 0)
		code = cli_fail(rc, "cannot list the untrusted marks of '%s'",
		                store_path);
out:
	al_store_free(store);
	return code;
}
