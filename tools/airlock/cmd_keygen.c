/* cmd_keygen.c: airlock keygen: make the Ed25519 key pair that signs pack
 * manifests. */
#include <string.h>

#include "airlock/pack.h"
#include "cli.h"
#include "cmd_pack.h"

static const char keygen_help[] =
    "usage: airlock keygen -o PREFIX\n"
    "\n"
    "Make an Ed25519 key pair for signing packs: PREFIX.key (private, PKCS#8 "
    "PEM,\n"
    "mode 0600: keep it on the staging host, never on the media) and "
    "PREFIX.pub\n"
    "(public, PEM: give it to 'airlock unpack --trust' on the far side).\n"
    "Existing files are never overwritten.\n"
    "\n"
    "Options:\n"
    "  -o, --output PREFIX   where to write the two files\n"
    "  -h, --help            this help\n"
    "\n"
    "Exit status: 0 written, 2 usage error, 3 runtime error (e.g. a file "
    "exists).\n";

int cmd_keygen(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *prefix = NULL;
	int opt, rc, quiet = 0;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "o:qvh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			fputs(keygen_help, stdout);
			return EXIT_OK;
		case 'o':
			prefix = optarg;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'v':
			break;
		default:
			return cli_usage_error("keygen", "unknown option");
		}
	}
	if (prefix == NULL || prefix[0] == '\0')
		return cli_usage_error("keygen", "-o PREFIX is required");
	if (argc != optind)
		return cli_usage_error("keygen", "unexpected argument '%s'",
		                       argv[optind]);
	if ((rc = al_pack_keygen(prefix)) < 0) {
		cli_fail(rc, "cannot make a key pair at '%s'", prefix);
		return EXIT_RUNTIME;
	}
	if (!quiet)
		printf("wrote %s.key (private) and %s.pub (public)\n", prefix,
		       prefix);
	return EXIT_OK;
}
