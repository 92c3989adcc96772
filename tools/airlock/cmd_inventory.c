/* cmd_inventory.c: airlock inventory: list what a store holds (blobs,
 * signatures, imported packs) for 'pack --have'. */
#include <stdlib.h>
#include <string.h>

#include "airlock/pack.h"
#include "cli.h"
#include "cli_json.h"
#include "cmd.h"

enum { OPT_STORE = OPT_COMMAND_BASE };

static const char inventory_help[] =
    "usage: airlock inventory --store DIR [-o FILE]\n"
    "\n"
    "Write what the store holds as JSON: every blob digest, every signature "
    "file\n"
    "with its SHA-256, the ids of the packs imported into it, and the "
    "operator\n"
    "catalogs and Helm charts it records (name, digest). Carry the file "
    "to\n"
    "the staging host and give it to 'airlock pack --have FILE' to pack "
    "exactly what\n"
    "this store lacks. See docs/pack.md for the format. What an untrusted "
    "import\n"
    "wrote (unpack --accept-untrusted) is listed under \"untrusted\", its "
    "signatures\n"
    "not under \"signatures\", so that a trusted pack carries them again.\n"
    "\n"
    "Options:\n"
    "      --store DIR        the store (opened read-only)\n"
    "  -o, --output FILE      write there (atomically) instead of "
    "stdout\n"
    "      --json             counts and the inventory in one JSON document "
    "(airlock.inventory/v1)\n" CLI_LOCAL_HELP "\n"
    "Exit status: 0 written, 2 usage error, 3 runtime error.\n";

/* --json: the counts, and the inventory itself under "inventory" (the
 * document `pack --have` reads, as al_pack_inventory wrote it). */
static void json_inventory(const char *store_path, const char *out,
                           const char *text, size_t len)
{
	json_t *root = cli_json_root(), *inv;
	json_error_t jerr;

	cli_json_set_str(root, "store", store_path);
	cli_json_set_str(root, "output", out);
	/* airlock wrote it a moment ago; read as strictly as airlock reads
	 * JSON (duplicate keys refused) */
	if ((inv = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr)) ==
	    NULL) {
		cli_error("inventory: line %d: %s", jerr.line, jerr.text);
		return;
	}
	cli_json_set_u64(root, "blobs",
	                 json_array_size(json_object_get(inv, "blobs")));
	cli_json_set_u64(root, "signatures",
	                 json_array_size(json_object_get(inv, "signatures")));
	cli_json_set_u64(root, "packs",
	                 json_array_size(json_object_get(inv, "packs")));
	cli_json_set_u64(root, "catalogs",
	                 json_array_size(json_object_get(inv, "catalogs")));
	cli_json_set_u64(root, "charts",
	                 json_array_size(json_object_get(inv, "charts")));
	if (json_object_set_new(root, "inventory", inv) < 0)
		cli_error("out of memory");
}

int cmd_inventory(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"store", required_argument, NULL, OPT_STORE},
	    {"output", required_argument, NULL, 'o'},
	    CLI_JSON_OPTION,
	    CLI_LOCAL_OPTIONS,
	    {NULL, 0, NULL, 0},
	};
	const char *store_path = NULL, *out = NULL;
	al_store *store = NULL;
	al_store_opts so = {.readonly = 1};
	size_t len = 0;
	char *text = NULL;
	cli_common c;
	int opt, rc, code = EXIT_OK, json = 0;

	cli_common_init(&c);
	optind = 1;
	while ((opt = cli_getopt(&c, "inventory", argc, argv, "o:h",
	                         longopts)) != -1) {
		switch (opt) {
		case 'h':
			fputs(inventory_help, stdout);
			return EXIT_OK;
		case OPT_STORE:
			store_path = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case OPT_JSON:
			json = 1;
			break;
		default:
			return EXIT_USAGE;
		}
	}
	if (store_path == NULL)
		return cli_usage_error("inventory", "--store DIR is required");
	if (argc != optind)
		return cli_usage_error("inventory", "unexpected argument '%s'",
		                       argv[optind]);
	cli_log_start(&c);
	if (json && cli_json_begin("inventory") < 0)
		return EXIT_RUNTIME;
	if ((rc = al_store_open(&store, store_path, &so)) < 0) {
		code = cli_fail(rc, "cannot open store '%s'", store_path);
		goto out;
	}
	if ((rc = al_pack_inventory(store, &text, &len)) < 0) {
		code = cli_fail(rc, "cannot list store '%s'", store_path);
		goto out;
	}
	if (out != NULL) {
		if ((rc = al_fs_write_atomic(out, text, len)) < 0)
			code = cli_fail(rc, "cannot write '%s'", out);
		if (json)
			json_inventory(store_path, out, text, len);
		goto out;
	}
	if (json) {
		json_inventory(store_path, NULL, text, len);
		goto out;
	}
	if (fputs(text, stdout) == EOF || fflush(stdout) != 0) {
		cli_error("cannot write the inventory to stdout");
		code = EXIT_RUNTIME;
	}
out:
	free(text);
	al_store_free(store);
	return code;
}
