/* cmd_mirrorsets.c: airlock mirrorsets: ImageDigestMirrorSet /
 * ImageTagMirrorSet (and ICSP) for where push put the store's images. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"
#include "cmd_catalogs.h"

enum { OPT_STORE = OPT_COMMAND_BASE, OPT_REGISTRY, OPT_ICSP, OPT_NAME };

static const char mirrorsets_help[] =
    "usage: airlock mirrorsets --store DIR --registry HOST[:PORT][/PREFIX] "
    "[--icsp] [-o FILE|-]\n"
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
    "optional)\n"
    "      --icsp            also write an ImageContentSourcePolicy\n"
    "      --name NAME       metadata.name of the resources (default: "
    "airlock)\n"
    "  -o, --output FILE     write to FILE (atomically); - or absent: "
    "stdout\n" CLI_LOCAL_HELP "\n"
    "Exit status: 0 written, 2 usage error, 3 runtime error.\n";

int cmd_mirrorsets(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"store", required_argument, NULL, OPT_STORE},
	    {"registry", required_argument, NULL, OPT_REGISTRY},
	    {"icsp", no_argument, NULL, OPT_ICSP},
	    {"name", required_argument, NULL, OPT_NAME},
	    {"output", required_argument, NULL, 'o'},
	    CLI_LOCAL_OPTIONS,
	    {NULL, 0, NULL, 0},
	};
	const char *store_path = NULL, *dest = NULL, *output = NULL,
	           *name = "airlock";
	al_store *store = NULL;
	al_store_opts so = {.readonly = 1};
	al_store_image *imgs = NULL;
	size_t nimgs = 0, i, nmaps = 0, destlen;
	al_mirror_map *maps = NULL;
	char **strs = NULL, *prefix = NULL, *tref = NULL;
	al_buf out = AL_BUF_INIT(64 * AL_MIB);
	cli_common c;
	int opt, rc, flags = 0, code = EXIT_OK;

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
			flags |= AL_KRES_ICSP;
			break;
		case OPT_NAME:
			name = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		default:
			return EXIT_USAGE;
		}
	}
	if (store_path == NULL || dest == NULL)
		return cli_usage_error("mirrorsets",
		                       "--store DIR and --registry "
		                       "HOST[:PORT][/PREFIX] are required");
	if (argc != optind)
		return cli_usage_error("mirrorsets", "unexpected argument '%s'",
		                       argv[optind]);
	if (al_str_startswith(dest, "docker://"))
		dest += strlen("docker://");
	if (dest[0] == '\0' || dest[0] == '/')
		return cli_usage_error("mirrorsets",
		                       "--registry '%s' has no host", dest);
	cli_log_start(&c);
	destlen = strlen(dest);
	while (destlen > 0 && dest[destlen - 1] == '/')
		destlen--;
	if ((prefix = al_strndup(dest, destlen)) == NULL)
		return cli_fail(AL_ENOMEM, "out of memory");
	if ((rc = al_store_open(&store, store_path, &so)) < 0) {
		code = cli_fail(rc, "cannot open store '%s'", store_path);
		goto out;
	}
	if ((rc = al_store_list(store, &imgs, &nimgs)) < 0) {
		code = cli_fail(rc, "cannot read store '%s'", store_path);
		goto out;
	}
	maps = calloc(nimgs + 1, sizeof(*maps));
	strs = calloc(2 * nimgs + 1, sizeof(*strs));
	if (maps == NULL || strs == NULL) {
		code = cli_fail(AL_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < nimgs; i++) {
		al_ref r = {0};
		char *src;
		if (al_ref_parse(&r, imgs[i].name) < 0) {
			/* names that are not docker references (oci: copies)
			 * have no source to redirect */
			continue;
		}
		src = al_ref_name(&r);
		strs[2 * nmaps] = src;
		/* where push puts it: the one mapping (al_push_target) */
		if (src == NULL ||
		    (rc = al_push_target(imgs[i].name, prefix,
		                         &strs[2 * nmaps + 1], &tref)) < 0) {
			int e = src == NULL ? AL_ENOMEM : rc;
			al_ref_clear(&r);
			free(src);
			strs[2 * nmaps] = NULL;
			code = cli_fail(e, "cannot map '%s'", imgs[i].name);
			goto out;
		}
		free(tref);
		tref = NULL;
		maps[nmaps].source = strs[2 * nmaps];
		maps[nmaps].mirror = strs[2 * nmaps + 1];
		/* Clusters pull even tag-mirrored images (release images
		 * above all) by digest, so every source gets a digest
		 * mirror; tag-referenced ones get a tag mirror too. */
		maps[nmaps].by_digest = 1;
		maps[nmaps].by_tag = r.digest == NULL;
		nmaps++;
		al_ref_clear(&r);
	}
	if ((rc = al_kres_mirrorsets(&out, maps, nmaps, name, flags)) < 0) {
		code = cli_fail(rc, "cannot write mirror sets");
		goto out;
	}
	/* a CatalogSource and a ClusterCatalog per recorded operator catalog
	 * (cmd_catalogs.c, docs/operators.md) */
	if ((rc = cli_catalog_resources(&out, store, prefix)) < 0) {
		code = cli_fail(rc, "cannot write the catalog resources");
		goto out;
	}
	if (output == NULL || strcmp(output, "-") == 0) {
		if (fwrite(al_buf_cstr(&out), 1, out.len, stdout) != out.len ||
		    fflush(stdout) != 0) {
			code = cli_fail(AL_EIO, "cannot write to stdout");
			goto out;
		}
	} else if ((rc = al_fs_write_atomic(
	                output, out.ptr != NULL ? out.ptr : (const uint8_t *)"",
	                out.len)) < 0) {
		code = cli_fail(rc, "cannot write '%s'", output);
		goto out;
	}
out:
	if (strs != NULL)
		for (i = 0; i < 2 * nmaps; i++)
			free(strs[i]);
	free(strs);
	free(maps);
	al_buf_free(&out);
	al_store_images_free(imgs, nimgs);
	al_store_free(store);
	free(prefix);
	return code;
}
