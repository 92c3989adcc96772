/* cmd_pack.c: airlock pack: write a store, or what the far side lacks, as
 * size-bounded tar volumes with a manifest. */
#include <stdlib.h>
#include <string.h>

#include "airlock/pack.h"
#include "cli.h"
#include "cmd.h"

enum {
	OPT_STORE = OPT_COMMAND_BASE,
	OPT_VOLSIZE,
	OPT_SINCE,
	OPT_HAVE,
	OPT_SIGN,
	OPT_NO_SPACE_CHECK
};

static const char pack_help[] =
    "usage: airlock pack --store DIR -o OUTDIR [--volume-size SIZE]\n"
    "                    [--since PACK-ID | --have INVENTORY.json] [--sign "
    "KEYFILE]\n"
    "\n"
    "Write the store's blobs, index, signatures and release metadata into "
    "OUTDIR as\n"
    "plain tar volumes airlock-<id>-0001.tar, ... of at most SIZE bytes each "
    "(a blob\n"
    "larger than the room left is split across volumes), and the pack "
    "manifest\n"
    "airlock-<id>.json listing every entry with its size, SHA-256 and volume. "
    "Copy\n"
    "the manifest (and its .sig) with every volume. See docs/pack.md.\n"
    "Signatures, names and release records that an import no key verified "
    "wrote\n"
    "(unpack --accept-untrusted; airlock check lists them) are left out, "
    "with a\n"
    "warning: a signed pack vouches only for what the store trusts.\n"
    "\n"
    "Options:\n"
    "      --store DIR          the store to pack (run 'airlock check' on it "
    "first)\n"
    "  -o, --output OUTDIR      where to write the volumes and the manifest\n"
    "      --volume-size SIZE   bytes per volume: 4G (default, fits FAT32, or "
    "the\n"
    "                           archiveSize of the imageset mirrored), "
    "4480M for\n"
    "                           a DVD, 700M, ... (K, M, G: powers of 1024; at "
    "least 64K)\n"
    "      --since PACK-ID      a delta: only what is new since that earlier "
    "pack of\n"
    "                           this store (the far side must have imported "
    "it)\n"
    "      --have FILE          a delta: only what the store that wrote this "
    "inventory\n"
    "                           ('airlock inventory' on the far side) lacks\n"
    "      --sign KEYFILE       sign the manifest with this Ed25519 private "
    "key (PEM,\n"
    "                           from 'airlock keygen'): writes "
    "airlock-<id>.json.sig\n"
    "      --no-space-check     write even when the volumes (estimated "
    "before the first\n"
    "                           is written) exceed the free space of "
    "OUTDIR\n" CLI_LOCAL_HELP "\n"
    "A store whose releases.json or index.json does not parse, or that holds "
    "under\n"
    "blobs/ anything but sha256 and sha512 blobs named by their digest, is "
    "refused\n"
    "before anything is written.\n"
    "\n"
    "Output: one line on stdout:\n"
    "  pack ID: V volumes, E files (B bytes), S files left out\n"
    "Exit status: 0 written, 1 the store's metadata is damaged or it holds "
    "files\n"
    "under blobs/ that cannot be carried (named), 2 usage error, 3 runtime "
    "error\n"
    "(nothing half-written is left under a volume's or the manifest's "
    "name).\n";

int cmd_pack(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"store", required_argument, NULL, OPT_STORE},
	    {"output", required_argument, NULL, 'o'},
	    {"volume-size", required_argument, NULL, OPT_VOLSIZE},
	    {"since", required_argument, NULL, OPT_SINCE},
	    {"have", required_argument, NULL, OPT_HAVE},
	    {"sign", required_argument, NULL, OPT_SIGN},
	    {"no-space-check", no_argument, NULL, OPT_NO_SPACE_CHECK},
	    CLI_LOCAL_OPTIONS,
	    {NULL, 0, NULL, 0},
	};
	const char *store_path = NULL, *outdir = NULL;
	al_store *store = NULL;
	al_store_opts so = {.create = 0};
	al_pack_opts po = AL_PACK_OPTS_INIT;
	al_pack_result res = AL_PACK_RESULT_INIT;
	cli_common c;
	char bytes[32];
	int opt, rc, code = EXIT_OK;

	cli_common_init(&c);
	optind = 1;
	while ((opt = cli_getopt(&c, "pack", argc, argv, "o:h", longopts)) !=
	       -1) {
		switch (opt) {
		case 'h':
			fputs(pack_help, stdout);
			return EXIT_OK;
		case OPT_STORE:
			store_path = optarg;
			break;
		case 'o':
			outdir = optarg;
			break;
		case OPT_VOLSIZE:
			if (al_parse_size(optarg, &po.volume_size) < 0 ||
			    po.volume_size < AL_PACK_VOLUME_MIN)
				return cli_usage_error(
				    "pack",
				    "--volume-size '%s': give a size of at "
				    "least 64K (e.g. 4G, 700M)",
				    optarg);
			break;
		case OPT_SINCE:
			if (!al_pack_id_valid(optarg))
				return cli_usage_error(
				    "pack", "--since '%s' is not a pack id",
				    optarg);
			po.since = optarg;
			break;
		case OPT_HAVE:
			po.have_path = optarg;
			break;
		case OPT_SIGN:
			po.sign_key = optarg;
			break;
		case OPT_NO_SPACE_CHECK:
			po.no_space_check = 1;
			break;
		default:
			return EXIT_USAGE;
		}
	}
	if (store_path == NULL)
		return cli_usage_error("pack", "--store DIR is required");
	if (outdir == NULL)
		return cli_usage_error("pack", "-o OUTDIR is required");
	if (po.since != NULL && po.have_path != NULL)
		return cli_usage_error("pack",
		                       "--since and --have exclude each other");
	if (argc != optind)
		return cli_usage_error("pack", "unexpected argument '%s'",
		                       argv[optind]);
	c.offline = 1;
	if ((code = cli_common_start(&c)) != EXIT_OK)
		goto out;
	if ((rc = al_store_open(&store, store_path, &so)) < 0) {
		code = cli_fail(rc, "cannot open store '%s'", store_path);
		goto out;
	}
	/* no --volume-size: the imageset's archiveSize that mirror recorded
	 * (docs/imageset.md) */
	if (po.volume_size == 0) {
		if ((rc = al_imageset_pack_volume_default(
		         store_path, &po.volume_size)) < 0) {
			code = cli_fail(rc,
			                "cannot read the defaults of store "
			                "'%s'",
			                store_path);
			goto out;
		}
		if (po.volume_size > 0 && !c.quiet)
			fprintf(stderr,
			        "volume size %s: the imageset's archiveSize "
			        "(%s/airlock/defaults.json)\n",
			        cli_bytes(po.volume_size, bytes, sizeof(bytes)),
			        store_path);
	}
	po.progress = cli_progress;
	po.progress_ud = &c;
	po.cancel = c.cancel;
	rc = al_pack_write(store, outdir, &po, &res);
	cli_progress_done(&c);
	if (rc < 0) {
		code = cli_fail(rc, "cannot pack store '%s' into '%s'",
		                store_path, outdir);
		goto out;
	}
	printf("pack %s: %llu volumes, %llu files (%llu bytes), %llu files "
	       "left out\n",
	       res.id, (unsigned long long)res.volumes,
	       (unsigned long long)res.entries, (unsigned long long)res.bytes,
	       (unsigned long long)res.skipped);
	/* docs/security.md "Marks of untrusted imports": said even with
	 * --quiet, the pack holds less than the store */
	if (res.untrusted > 0)
		fprintf(stderr,
		        "airlock: warning: left out %llu signatures, names and "
		        "release records that an import no key verified wrote "
		        "(airlock check lists them; a trusted import of them "
		        "clears the marks)\n",
		        (unsigned long long)res.untrusted);
	if (!c.quiet)
		fprintf(stderr,
		        "%s packed in %.1f s into %s/airlock-%s.json and its "
		        "volumes\n",
		        cli_bytes(res.bytes, bytes, sizeof(bytes)),
		        (double)res.elapsed_ms / 1000.0, outdir, res.id);
out:
	al_store_free(store);
	cli_common_finish(&c);
	return code;
}
