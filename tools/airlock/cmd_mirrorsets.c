/* cmd_mirrorsets.c: airlock mirrorsets: ImageDigestMirrorSet /
 * ImageTagMirrorSet (and ICSP) for where push put the store's images. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_resources.h"
#include "cmd.h"
#include "cmd_catalogs.h"

enum {
	OPT_STORE = OPT_COMMAND_BASE,
	OPT_REGISTRY,
	OPT_ICSP,
	OPT_NAME,
	OPT_ICSP_OUTPUT,
	OPT_MAX_NESTED,
	OPT_LAYOUT,
	OPT_PUSH_UNTRUSTED
};

static const char mirrorsets_help[] =
    "usage: airlock mirrorsets --store DIR [--registry HOST[:PORT][/PREFIX]] "
    "[--icsp]\n"
    "                          [--icsp-output FILE|-] [-o FILE|-]\n"
    "\n"
    "Write the cluster resources that redirect pulls of the store's images to "
    "the\n"
    "registry 'airlock push' filled: an ImageDigestMirrorSet for images "
    "referenced by\n"
    "digest (release components), an ImageTagMirrorSet for images referenced "
    "by tag,\n"
    "and with --icsp the legacy ImageContentSourcePolicy. REGISTRY/REPO maps "
    "to\n"
    "HOST[:PORT]/PREFIX/REPO, as 'airlock push' lays it out.\n"
    "For every operator catalog 'airlock mirror' recorded "
    "('airlock catalogs'), a\n"
    "CatalogSource (OLM v0) and a ClusterCatalog (OLM v1) pointing at the "
    "pushed\n"
    "catalog follow.\n"
    "\n"
    "Options:\n"
    "      --store DIR       the store\n"
    "      --registry DEST   where the images were pushed (docker:// prefix "
    "optional);\n"
    "                        default: the store's last push "
    "(airlock/pushes.json).\n"
    "                        Refused (exit 2) unless the cluster's CRD "
    "pattern accepts\n"
    "                        it: HOST[:PORT][/PATH], PATH lower-case\n"
    "      --max-nested-paths N  the repository depth push used (default: "
    "the push\n"
    "                        record's, else no limit)\n"
    "      --icsp            also write an ImageContentSourcePolicy (in the "
    "same stream)\n"
    "      --icsp-output F   write the ImageContentSourcePolicy alone to F "
    "(- for\n"
    "                        stdout), for a cluster older than 4.13: apply "
    "either it\n"
    "                        or the mirror sets, never both\n"
    "      --layout L        where push put the images: oc-mirror (its "
    "objects\n"
    "                        idms-release-0, idms-operator-0, "
    "idms-generic-0, itms-...)\n"
    "                        or source (default: the push record's, else "
    "oc-mirror)\n"
    "      --name NAME       with --layout source: metadata.name of the "
    "resources\n"
    "                        (default: airlock)\n"
    "      --push-untrusted  also map the names an untrusted import set "
    "(push\n"
    "                        --push-untrusted pushed them; left out "
    "otherwise)\n"
    "  -o, --output FILE     write to FILE (atomically); - or absent: "
    "stdout\n" CLI_LOCAL_HELP "\n"
    "Exit status: 0 written, 2 usage error (a destination the cluster would "
    "refuse),\n"
    "3 runtime error.\n";

static int write_out(const char *output, const al_buf *b)
{
	int rc;

	if (output == NULL || strcmp(output, "-") == 0) {
		if (fwrite(al_buf_cstr(b), 1, b->len, stdout) != b->len ||
		    fflush(stdout) != 0)
			return cli_fail(AL_EIO, "cannot write to stdout");
		return EXIT_OK;
	}
	if ((rc = al_fs_write_atomic(
	         output, b->ptr != NULL ? b->ptr : (const uint8_t *)"",
	         b->len)) < 0)
		return cli_fail(rc, "cannot write '%s'", output);
	return EXIT_OK;
}

/* --registry HOST[:PORT][/PATH] as the mirror-set CRDs accept it; an
 * exit status. */
static int parse_registry(const char *dest, char **host, char **prefix)
{
	int rc = cli_dest_parse(dest, host, prefix);

	if (rc == -1)
		return cli_usage_error("mirrorsets",
		                       "--registry '%s' has no host", dest);
	if (rc == -2)
		return cli_usage_error(
		    "mirrorsets",
		    "--registry '%s' is not a mirror location the "
		    "cluster accepts: HOST[:PORT][/PATH] with a "
		    "lower-case PATH of letters, digits and single "
		    "'.', '_', '__' or '-' separators (the "
		    "ImageDigestMirrorSet CRD pattern)",
		    dest);
	return EXIT_OK;
}

/* --icsp without --icsp-output: the old single stream, the ICSP after
 * the mirror sets; an exit status. */
static int icsp_after(const cli_common *c, al_buf *out, const al_buf *icsp)
{
	if (icsp->len == 0)
		return EXIT_OK;
	if (al_buf_append(out, icsp->ptr, icsp->len) < 0)
		return cli_fail(AL_ELIMIT, "cannot write mirror sets");
	if (!c->quiet)
		cli_warn("the ImageContentSourcePolicy is in the same "
		         "stream as the mirror sets: a cluster applies "
		         "one or the other (before 4.13: the ICSP "
		         "alone); --icsp-output FILE writes it apart");
	return EXIT_OK;
}

int cmd_mirrorsets(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"store", required_argument, NULL, OPT_STORE},
	    {"registry", required_argument, NULL, OPT_REGISTRY},
	    {"icsp", no_argument, NULL, OPT_ICSP},
	    {"icsp-output", required_argument, NULL, OPT_ICSP_OUTPUT},
	    {"max-nested-paths", required_argument, NULL, OPT_MAX_NESTED},
	    {"name", required_argument, NULL, OPT_NAME},
	    {"layout", required_argument, NULL, OPT_LAYOUT},
	    {"push-untrusted", no_argument, NULL, OPT_PUSH_UNTRUSTED},
	    {"output", required_argument, NULL, 'o'},
	    CLI_LOCAL_OPTIONS,
	    {NULL, 0, NULL, 0},
	};
	const char *store_path = NULL, *dest = NULL, *output = NULL,
	           *name = "airlock", *icsp_output = NULL;
	al_store *store = NULL;
	al_store_opts so = {.readonly = 1};
	char *host = NULL, *prefix = NULL, *loc = NULL;
	al_buf out = AL_BUF_INIT(64 * AL_MIB), icsp = AL_BUF_INIT(64 * AL_MIB);
	unsigned max_nested = 0;
	const char *layout_arg = NULL;
	al_layout_kind layout = AL_LAYOUT_OC_MIRROR, rec_layout;
	cli_common c;
	int opt, rc, icsp_same = 0, nested_set = 0, untrusted = 0;
	int code = EXIT_OK;

	cli_common_init(&c);
	optind = 1;
	while ((opt = cli_getopt(&c, "mirrorsets", argc, argv, "o:h",
	                         longopts)) != -1) {
		switch (opt) {
		case 'h':
			fputs(mirrorsets_help, stdout);
			return EXIT_OK;
		case OPT_STORE:
			store_path = optarg;
			break;
		case OPT_REGISTRY:
			dest = optarg;
			break;
		case OPT_ICSP:
			icsp_same = 1;
			break;
		case OPT_ICSP_OUTPUT:
			icsp_output = optarg;
			break;
		case OPT_MAX_NESTED:
			if (cli_parse_nested(optarg, &max_nested) < 0)
				return cli_usage_error(
				    "mirrorsets",
				    "--max-nested-paths takes a number from 1 "
				    "to 32, not '%s'",
				    optarg);
			nested_set = 1;
			break;
		case OPT_NAME:
			name = optarg;
			break;
		case OPT_LAYOUT:
			layout_arg = optarg;
			break;
		case OPT_PUSH_UNTRUSTED:
			untrusted = 1;
			break;
		case 'o':
			output = optarg;
			break;
		default:
			return EXIT_USAGE;
		}
	}
	if (store_path == NULL)
		return cli_usage_error("mirrorsets", "--store DIR is required");
	if ((code = cli_parse_layout("mirrorsets", layout_arg, &layout)) !=
	    EXIT_OK)
		return code;
	if (argc != optind)
		return cli_usage_error("mirrorsets", "unexpected argument '%s'",
		                       argv[optind]);
	if (dest != NULL &&
	    (code = parse_registry(dest, &host, &prefix)) != EXIT_OK)
		return code;
	if (output != NULL && icsp_output != NULL &&
	    strcmp(output, icsp_output) == 0)
		return cli_usage_error("mirrorsets",
		                       "--icsp-output must differ from -o");
	cli_log_start(&c);
	if ((rc = al_store_open(&store, store_path, &so)) < 0) {
		code = cli_fail(rc, "cannot open store '%s'", store_path);
		goto out;
	}
	if (host == NULL) {
		unsigned rec_nested = 0;

		if ((loc = cli_dest_from_record(store, "mirrorsets",
		                                &rec_nested, &rec_layout)) ==
		    NULL) {
			code = EXIT_USAGE;
			goto out;
		}
		if (!nested_set)
			max_nested = rec_nested;
		/* where the recorded push put the images */
		if (layout_arg == NULL)
			layout = rec_layout;
	} else {
		loc = prefix[0] != '\0' ? al_sprintf("%s/%s", host, prefix)
		                        : al_strdup(host);
		if (loc == NULL) {
			code = cli_fail(AL_ENOMEM, "out of memory");
			goto out;
		}
	}
	code = cli_mirror_sets(store, loc, max_nested, layout, name, untrusted,
	                       &out,
	                       icsp_same || icsp_output != NULL ? &icsp : NULL);
	if (code != EXIT_OK)
		goto out;
	/* a CatalogSource and a ClusterCatalog per recorded operator catalog
	 * (cmd_catalogs.c, docs/operators.md) */
	if ((rc = cli_catalog_resources(&out, store, loc)) < 0) {
		code = cli_fail(rc, "cannot write the catalog resources");
		goto out;
	}
	if (icsp_same && icsp_output == NULL &&
	    (code = icsp_after(&c, &out, &icsp)) != EXIT_OK)
		goto out;
	if ((code = write_out(output, &out)) != EXIT_OK)
		goto out;
	if (icsp_output != NULL)
		code = write_out(icsp_output, &icsp);
out:
	al_buf_free(&out);
	al_buf_free(&icsp);
	al_store_free(store);
	free(host);
	free(prefix);
	free(loc);
	return code;
}
