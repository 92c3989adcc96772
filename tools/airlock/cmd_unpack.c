/* cmd_unpack.c: airlock unpack: verify a pack and import its volumes into a
 * store, resumably. */
#include <stdlib.h>
#include <string.h>

#include "airlock/pack.h"
#include "cli_esc.h"
#include "cli.h"
#include "cli_json.h"
#include "cmd.h"

enum {
	OPT_STORE = OPT_COMMAND_BASE,
	OPT_TRUST,
	OPT_ALLOW_ROLLBACK,
	OPT_NO_SPACE_CHECK,
	OPT_ACCEPT_UNTRUSTED,
	OPT_PROMOTE,
	OPT_DROP
};

static const char unpack_help[] =
    "usage: airlock unpack DIR --store STORE [--trust PUBKEY | "
    "--accept-untrusted]\n"
    "                      [--allow-rollback]\n"
    "       airlock unpack --promote ID --store STORE (--trust PUBKEY | "
    "--accept-untrusted)\n"
    "       airlock unpack --drop ID --store STORE\n"
    "\n"
    "Import the pack in DIR (its manifest airlock-<id>.json and any of its "
    "volumes)\n"
    "into STORE (created if missing). Every entry's SHA-256 is checked before "
    "it\n"
    "becomes visible in the store; the store's index is updated last, once "
    "every\n"
    "entry of the pack is in, with the images whose every blob is present. "
    "Volumes\n"
    "may come in any order and over several runs: what is missing is named, "
    "and a\n"
    "later run with the rest (the manifest is remembered) completes the "
    "import.\n"
    "Interrupting is safe: rerun to continue. Hostile or damaged media (paths "
    "out of\n"
    "the store, links, devices, entries not in the manifest, duplicates, wrong "
    "sizes,\n"
    "truncation, flipped bytes, another pack's volume) are refused, naming "
    "the\n"
    "volume and entry; nothing is ever written outside STORE.\n"
    "DIR may instead hold oc-mirror v2's archives (mirror_000001.tar ...): "
    "their blobs\n"
    "are verified and imported, their tags named localhost:55000/REPO:TAG "
    "(docs/pack.md).\n"
    "\n"
    "Without --trust, the pack goes to the store's quarantine\n"
    "(STORE/airlock/quarantine/ID): no command uses it there, and it cannot "
    "replace\n"
    "or shadow a tag, signature or record of the store. 'airlock check' and\n"
    "'airlock inventory' list it; --promote ID with the key that signed it "
    "moves it\n"
    "into the store, --drop ID removes it. A --trust import of the same pack "
    "id\n"
    "removes its quarantine.\n"
    "\n"
    "Options:\n"
    "      --store STORE       the store to import into\n"
    "      --trust PUBKEY      the manifest must carry a valid Ed25519 "
    "signature\n"
    "                          (airlock-<id>.json.sig) by this public key "
    "(PEM);\n"
    "                          otherwise nothing is imported\n"
    "      --accept-untrusted  import a pack no key verified into the store "
    "itself\n"
    "                          (recorded untrusted), not into the "
    "quarantine\n"
    "      --promote ID        move the quarantined pack ID into the store "
    "(its\n"
    "                          manifest must verify with --trust "
    "PUBKEY)\n"
    "      --drop ID           remove the quarantined pack ID\n"
    "      --allow-rollback    let a pack older than one imported before "
    "(by the\n"
    "                          manifest's sequence) move tags "
    "back\n"
    "      --json              the result as JSON (airlock.unpack/v1, "
    "docs/json.md)\n"
    "      --no-space-check    import even when what is still to import "
    "exceeds the\n"
    "                          free space of STORE's file "
    "system\n" CLI_LOCAL_HELP "\n"
    "Output: one line on stdout:\n"
    "  unpacked ID: E entries imported, P already present, T images added to "
    "the index\n"
    "  quarantined ID: E entries imported, P already present, T images held "
    "in quarantine\n"
    "  dropped ID\n"
    "or, while volumes are missing, one line per missing volume:\n"
    "  missing VOLUME\n"
    "Exit status: 0 the pack is imported, 1 refused (signature, damaged or "
    "hostile\n"
    "media) or images left out of the index for lack of blobs, 2 usage error,\n"
    "3 volumes still missing (rerun with them) or runtime error.\n";

/* --json: al_unpack_result (docs/json.md, airlock.unpack/v1). */
static void json_result(const char *store_path, const char *dir,
                        const al_unpack_result *res)
{
	json_t *root = cli_json_root(), *arr;
	size_t i;

	cli_json_set_str(root, "store", store_path);
	cli_json_set_str(root, "pack_dir", dir);
	cli_json_set_str(root, "id", res->id);
	cli_json_set_bool(root, "complete", res->complete);
	cli_json_set_bool(root, "already", res->already);
	cli_json_set_bool(root, "quarantined", res->quarantined);
	cli_json_set_u64(root, "volumes_total", res->volumes_total);
	cli_json_set_u64(root, "volumes_read", res->volumes_read);
	cli_json_set_u64(root, "entries_imported", res->entries_imported);
	cli_json_set_u64(root, "entries_present", res->entries_present);
	cli_json_set_u64(root, "bytes", res->bytes);
	cli_json_set_u64(root, "images_tagged", res->images_tagged);
	cli_json_set_u64(root, "images_incomplete", res->images_incomplete);
	arr = cli_json_set_array(root, "missing");
	for (i = 0; i < res->nmissing; i++)
		cli_json_append_str(arr, res->missing[i]);
}

/* What an unpack or promote did, said (text or --json); its exit code. */
static int report(const char *store_path, const char *dir, int json,
                  const al_unpack_result *res)
{
	size_t i;

	if (json)
		json_result(store_path, dir, res);
	if (!res->complete) {
		for (i = 0; !json && i < res->nmissing; i++)
			printf("missing %s\n", cli_esc(res->missing[i]));
		cli_error("pack '%s' is incomplete: %zu of %llu volumes still "
		          "missing; rerun with them",
		          res->id, res->nmissing,
		          (unsigned long long)res->volumes_total);
		return EXIT_RUNTIME;
	}
	if (res->already) {
		if (!json)
			printf("unpacked %s: already imported into '%s'\n",
			       cli_esc(res->id), cli_esc(store_path));
		return EXIT_OK;
	}
	if (!json && res->quarantined)
		printf("quarantined %s: %llu entries imported, %llu already "
		       "present, %llu images held in quarantine\n",
		       cli_esc(res->id),
		       (unsigned long long)res->entries_imported,
		       (unsigned long long)res->entries_present,
		       (unsigned long long)res->images_tagged);
	else if (!json)
		printf("unpacked %s: %llu entries imported, %llu already "
		       "present, %llu "
		       "images added to the index\n",
		       cli_esc(res->id),
		       (unsigned long long)res->entries_imported,
		       (unsigned long long)res->entries_present,
		       (unsigned long long)res->images_tagged);
	if (res->quarantined)
		cli_warn(
		    "pack '%s' is not verified by a key given with "
		    "--trust: it is quarantined, not in the store; promote "
		    "it with 'airlock unpack --promote %s --store STORE "
		    "--trust PUBKEY' or drop it with '--drop %s'",
		    res->id, res->id, res->id);
	if (res->images_incomplete > 0) {
		cli_error("%llu images of pack '%s' lack blobs in this store "
		          "and were left out of the index "
		          "(a delta whose base was not imported?)",
		          (unsigned long long)res->images_incomplete, res->id);
		return EXIT_VERIFY;
	}
	return EXIT_OK;
}

int cmd_unpack(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"store", required_argument, NULL, OPT_STORE},
	    {"trust", required_argument, NULL, OPT_TRUST},
	    {"allow-rollback", no_argument, NULL, OPT_ALLOW_ROLLBACK},
	    CLI_JSON_OPTION,
	    {"no-space-check", no_argument, NULL, OPT_NO_SPACE_CHECK},
	    {"accept-untrusted", no_argument, NULL, OPT_ACCEPT_UNTRUSTED},
	    {"promote", required_argument, NULL, OPT_PROMOTE},
	    {"drop", required_argument, NULL, OPT_DROP},
	    CLI_LOCAL_OPTIONS,
	    {NULL, 0, NULL, 0},
	};
	const char *store_path = NULL, *dir = NULL, *promote = NULL,
	           *drop = NULL;
	al_store *store = NULL;
	al_store_opts so = {.create = 1};
	al_unpack_opts uo = AL_UNPACK_OPTS_INIT;
	al_unpack_result res = AL_UNPACK_RESULT_INIT;
	cli_common c;
	int opt, rc, code = EXIT_OK, json = 0;

	cli_common_init(&c);
	optind = 1;
	while ((opt = cli_getopt(&c, "unpack", argc, argv, "h", longopts)) !=
	       -1) {
		switch (opt) {
		case 'h':
			fputs(unpack_help, stdout);
			return EXIT_OK;
		case OPT_STORE:
			store_path = optarg;
			break;
		case OPT_TRUST:
			uo.trust_key = optarg;
			break;
		case OPT_ALLOW_ROLLBACK:
			uo.allow_rollback = 1;
			break;
		case OPT_JSON:
			json = 1;
			break;
		case OPT_NO_SPACE_CHECK:
			uo.no_space_check = 1;
			break;
		case OPT_ACCEPT_UNTRUSTED:
			uo.accept_untrusted = 1;
			break;
		case OPT_PROMOTE:
			promote = optarg;
			break;
		case OPT_DROP:
			drop = optarg;
			break;
		default:
			return EXIT_USAGE;
		}
	}
	if (store_path == NULL)
		return cli_usage_error("unpack", "--store STORE is required");
	if (uo.trust_key != NULL && uo.accept_untrusted)
		return cli_usage_error(
		    "unpack",
		    "--trust and --accept-untrusted exclude each other");
	if (promote != NULL && drop != NULL)
		return cli_usage_error(
		    "unpack", "--promote and --drop exclude each other");
	if (promote != NULL || drop != NULL) {
		if (argc - optind != 0)
			return cli_usage_error("unpack",
			                       "--promote and --drop take no "
			                       "pack directory");
		if (promote != NULL && uo.trust_key == NULL &&
		    !uo.accept_untrusted)
			return cli_usage_error("unpack",
			                       "--promote needs --trust PUBKEY "
			                       "(or --accept-untrusted)");
		dir = promote != NULL ? promote : drop;
	} else if (argc - optind != 1) {
		return cli_usage_error("unpack",
		                       "give exactly one pack directory");
	} else {
		dir = argv[optind];
	}
	if (json && cli_json_begin("unpack") < 0)
		return EXIT_RUNTIME;
	c.offline = 1;
	if ((code = cli_common_start(&c)) != EXIT_OK)
		goto out;
	if ((rc = al_store_open(&store, store_path, &so)) < 0) {
		code = cli_fail(rc, "cannot open store '%s'", store_path);
		goto out;
	}
	if (drop != NULL) {
		if ((rc = al_pack_drop(store, drop)) < 0) {
			code = cli_fail(rc, "cannot drop '%s'", drop);
			goto out;
		}
		if (json) {
			json_t *root = cli_json_root();
			cli_json_set_str(root, "store", store_path);
			cli_json_set_str(root, "dropped", drop);
		} else {
			printf("dropped %s\n", cli_esc(drop));
		}
		goto out;
	}
	uo.progress = cli_progress;
	uo.progress_ud = &c;
	uo.cancel = c.cancel;
	if (promote != NULL)
		rc = al_pack_promote(store, promote, &uo, &res);
	else
		rc = al_unpack(store, dir, &uo, &res);
	cli_progress_done(&c);
	if (rc < 0) {
		code = cli_fail(rc, "cannot %s '%s'",
		                promote != NULL ? "promote" : "unpack", dir);
		goto out;
	}
	code = report(store_path, dir, json, &res);
out:
	al_unpack_result_clear(&res);
	al_store_free(store);
	cli_common_finish(&c);
	return code;
}
