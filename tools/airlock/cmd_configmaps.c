/* cmd_configmaps.c: airlock configmaps: the signature ConfigMaps of a store's
 * releases, as files or one stream: oc-mirror v2's one ConfigMap (its
 * layout, the default) or one per release (--layout source). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_resources.h"
#include "cmd.h"
#include "airlock/sig.h"

enum { OPT_STORE = OPT_COMMAND_BASE, OPT_JSON, OPT_LAYOUT };

/* The largest output: every signature of a release, base64-encoded. */
#define CM_MAX_OUTPUT (256 * AL_MIB)

static const char configmaps_help[] =
    "usage: airlock configmaps --store DIR [-o DIR|-] [--json] [--layout L] "
    "[RELEASE...]\n"
    "\n"
    "Write the signature ConfigMaps of the store's releases (every release "
    "in\n"
    "STORE/airlock/releases.json, or only the RELEASEs named by version or "
    "digest), in\n"
    "the form the cluster-version operator reads: namespace "
    "openshift-config-managed,\n"
    "label release.openshift.io/verification-signatures, binaryData keys\n"
    "sha256-<hex>-<n> holding the signatures of STORE/signatures/"
    "sha256=<hex>/.\n"
    "Layout oc-mirror (the default): oc-mirror v2's one ConfigMap\n"
    "mirrored-release-signatures, the first signature of each release, in\n"
    "signature-configmap.yaml and signature-configmap.json. Layout source: "
    "one\n"
    "ConfigMap per release, name sha256-<hex>, keys sha256-<hex>-1, -2, ... "
    "Apply them\n"
    "with 'oc apply -f DIR'.\n"
    "\n"
    "Options:\n"
    "      --store DIR   the store\n"
    "  -o, --output D    directory for the files (default: the current "
    "directory); with\n"
    "                    --layout source signature-sha256-<first 16 "
    "hex>.yaml (.json with\n"
    "                    --json), one per release so a later release never "
    "renumbers an\n"
    "                    earlier one's keys; '-' writes to stdout (source: "
    "one\n"
    "                    multi-document YAML stream, a v1 List with --json)\n"
    "      --json        JSON instead of YAML (with a directory and the "
    "oc-mirror\n"
    "                    layout, both files are written anyway)\n"
    "      --layout L    oc-mirror or source; default: the layout of the "
    "store's last\n"
    "                    push, else oc-mirror\n"
    "  -q, --quiet       do not list the files written\n" CLI_LOG_HELP "\n"
    "The signatures are copied, not verified: run 'airlock verify' for that.\n"
    "Signatures written by an untrusted import (unpack --accept-untrusted) "
    "are\n"
    "left out, with a warning.\n"
    "Exit status: 0 written, 1 a release has no signatures (the others are "
    "written),\n"
    "2 usage error, 3 runtime error.\n";

static int write_stream(const al_kres_configmaps *cms, int json)
{
	al_buf out = AL_BUF_INIT(CM_MAX_OUTPUT);
	int rc;

	rc = al_kres_configmaps_write(cms, &out, json ? AL_KRES_JSON : 0);
	if (rc == 0 && (fwrite(out.ptr, 1, out.len, stdout) != out.len ||
	                fflush(stdout) != 0))
		rc = al_error_set(AL_EIO, "cannot write to stdout");
	al_buf_free(&out);
	return rc < 0 ? cli_fail(rc, "cannot write the ConfigMaps") : EXIT_OK;
}

static int write_file(const char *dir, const al_kres_configmaps *cms, size_t i,
                      int json, int quiet)
{
	int flags = json ? AL_KRES_JSON : 0;
	al_buf out = AL_BUF_INIT(CM_MAX_OUTPUT);
	char *file = NULL, *path = NULL;
	int rc, code;

	file = al_kres_configmaps_filename(cms, i, flags);
	if (file == NULL || (path = al_path_join(dir, file)) == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = al_kres_configmaps_write_one(cms, i, &out, flags)) < 0)
		goto out;
	if ((rc = al_fs_write_atomic(path, out.ptr, out.len)) < 0)
		goto out;
	if (!quiet)
		printf("wrote %s\n", path);
out:
	code = rc < 0
	           ? cli_fail(rc, "cannot write the ConfigMap '%s'",
	                      path != NULL ? path : (file != NULL ? file : ""))
	           : EXIT_OK;
	free(file);
	free(path);
	al_buf_free(&out);
	return code;
}

/* Layout oc-mirror: its one ConfigMap of the wanted releases, to stdout
 * (YAML, or JSON) or into dir as signature-configmap.yaml and .json. */
static int write_ocmirror(al_store *s, const al_store_release *list, size_t n,
                          const int *want, const char *dir, int json, int quiet)
{
	static const char *const files[] = {"signature-configmap.yaml",
	                                    "signature-configmap.json"};
	al_buf out[2] = {AL_BUF_INIT(CM_MAX_OUTPUT),
	                 AL_BUF_INIT(CM_MAX_OUTPUT)};
	int code, rc, i, to_stdout = strcmp(dir, "-") == 0;
	char *path = NULL;

	code = cli_ocmirror_configmap(s, list, n, want, 1,
	                              to_stdout && json ? NULL : &out[0],
	                              to_stdout && !json ? NULL : &out[1]);
	if (out[0].len == 0 && out[1].len == 0)
		goto out; /* no release had a signature: said */
	if (to_stdout) {
		const al_buf *b = json ? &out[1] : &out[0];

		if (fwrite(b->ptr, 1, b->len, stdout) != b->len ||
		    (json && fputc('\n', stdout) == EOF) || fflush(stdout) != 0)
			code = cli_worst(code, cli_fail(AL_EIO, "cannot write "
			                                        "to stdout"));
		goto out;
	}
	if ((rc = al_fs_mkdir_p(dir, 0755)) < 0) {
		code = cli_worst(code, cli_fail(rc, "cannot create '%s'", dir));
		goto out;
	}
	for (i = 0; i < 2; i++) {
		free(path);
		if ((path = al_path_join(dir, files[i])) == NULL) {
			code = cli_worst(code,
			                 cli_fail(AL_ENOMEM, "out of memory"));
			goto out;
		}
		if ((rc = al_fs_write_atomic(path, out[i].ptr, out[i].len)) < 0)
			code = cli_worst(code,
			                 cli_fail(rc,
			                          "cannot write the ConfigMap "
			                          "'%s'",
			                          path));
		else if (!quiet)
			printf("wrote %s\n", path);
	}
out:
	free(path);
	al_buf_free(&out[0]);
	al_buf_free(&out[1]);
	return code;
}

/* No --layout: the layout of the store's last push, else oc-mirror's. */
static al_layout_kind layout_of_store(al_store *s)
{
	al_store_push p;
	al_layout_kind k = AL_LAYOUT_OC_MIRROR;

	memset(&p, 0, sizeof(p));
	if (al_store_push_last(s, &p) == 0 && p.source_layout)
		k = AL_LAYOUT_SOURCE;
	al_error_clear();
	al_store_push_clear(&p);
	return k;
}

int cmd_configmaps(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"store", required_argument, NULL, OPT_STORE},
	    {"output", required_argument, NULL, 'o'},
	    {"json", no_argument, NULL, OPT_JSON},
	    {"layout", required_argument, NULL, OPT_LAYOUT},
	    CLI_LOCAL_OPTIONS,
	    {NULL, 0, NULL, 0},
	};
	const char *store_path = NULL, *outdir = ".", *layout_arg = NULL;
	al_layout_kind layout = AL_LAYOUT_OC_MIRROR;
	al_store_opts so = {.readonly = 1};
	al_store *s = NULL;
	al_store_release *list = NULL;
	al_kres_configmaps *cms = NULL;
	size_t ndocs, nlist = 0, i, j, nnames;
	int opt, rc, json = 0, code = EXIT_OK, *used = NULL, *want = NULL;
	cli_common cc;
	char **names;

	cli_common_init(&cc);
	optind = 1;
	while ((opt = cli_getopt(&cc, "configmaps", argc, argv, "o:h",
	                         longopts)) != -1) {
		switch (opt) {
		case 'h':
			fputs(configmaps_help, stdout);
			return EXIT_OK;
		case OPT_STORE:
			store_path = optarg;
			break;
		case 'o':
			outdir = optarg;
			break;
		case OPT_JSON:
			json = 1;
			break;
		case OPT_LAYOUT:
			layout_arg = optarg;
			break;
		default:
			return EXIT_USAGE;
		}
	}
	if (store_path == NULL)
		return cli_usage_error("configmaps", "--store DIR is required");
	if (outdir[0] == '\0')
		return cli_usage_error("configmaps",
		                       "-o takes a directory or '-'");
	if (layout_arg != NULL &&
	    cli_parse_layout("configmaps", layout_arg, &layout) != EXIT_OK)
		return EXIT_USAGE;
	cli_log_start(&cc);
	names = argv + optind;
	nnames = (size_t)(argc - optind);
	if ((rc = al_store_open(&s, store_path, &so)) < 0)
		return cli_fail(rc, "cannot open store '%s'", store_path);
	if ((rc = al_store_releases_list(s, &list, &nlist)) < 0) {
		code = cli_fail(rc, "cannot read the releases of store '%s'",
		                store_path);
		goto out;
	}
	used = calloc(nnames + 1, sizeof(*used));
	want = calloc(nlist + 1, sizeof(*want));
	if (used == NULL || want == NULL || al_kres_configmaps_new(&cms) < 0) {
		cli_error("out of memory");
		code = EXIT_RUNTIME;
		goto out;
	}
	for (i = 0; i < nlist; i++) {
		const char *version = list[i].version,
		           *ds = list[i].digest_text;

		want[i] = nnames == 0;
		for (j = 0; j < nnames; j++) {
			if ((version != NULL &&
			     strcmp(names[j], version) == 0) ||
			    (ds != NULL && strcmp(names[j], ds) == 0)) {
				used[j] = 1;
				want[i] = 1;
			}
		}
	}
	for (j = 0; j < nnames; j++) {
		if (!used[j]) {
			cli_error("release '%s' is not in store '%s'", names[j],
			          store_path);
			code = cli_worst(code, EXIT_RUNTIME);
		}
	}
	if (nlist == 0) {
		if (code == EXIT_OK) {
			cli_error("store '%s' records no releases", store_path);
			code = EXIT_RUNTIME;
		}
		goto out;
	}
	if (layout_arg == NULL)
		layout = layout_of_store(s);
	if (layout == AL_LAYOUT_OC_MIRROR) {
		code = cli_worst(code, write_ocmirror(s, list, nlist, want,
		                                      outdir, json, cc.quiet));
		goto out;
	}
	for (i = 0; i < nlist; i++) {
		int c = EXIT_OK;

		if (!want[i])
			continue;
		cli_release_configmap(s, &list[i], cms, 1, &c);
		code = cli_worst(code, c);
	}
	if ((ndocs = al_kres_configmaps_count(cms)) == 0)
		goto out; /* each release said why */
	if (strcmp(outdir, "-") == 0) {
		code = cli_worst(code, write_stream(cms, json));
		goto out;
	}
	if ((rc = al_fs_mkdir_p(outdir, 0755)) < 0) {
		code =
		    cli_worst(code, cli_fail(rc, "cannot create '%s'", outdir));
		goto out;
	}
	for (i = 0; i < ndocs; i++)
		code =
		    cli_worst(code, write_file(outdir, cms, i, json, cc.quiet));
out:
	al_kres_configmaps_free(cms);
	free(want);
	free(used);
	al_store_releases_free(list, nlist);
	al_store_free(s);
	return code;
}
