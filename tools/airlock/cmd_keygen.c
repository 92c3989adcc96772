/* cmd_keygen.c: airlock keygen: make the Ed25519 key pair that signs pack
 * manifests. */
#include <string.h>

#include "airlock/pack.h"
#include "cli.h"
#include "cmd.h"

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
    "  -q, --quiet           do not name the files written\n" CLI_LOG_HELP "\n"
    "Exit status: 0 written, 2 usage error, 3 runtime error (e.g. a file "
    "exists).\n";

int cmd_keygen(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"output", required_argument, NULL, 'o'},
	    CLI_LOCAL_OPTIONS,
	    {NULL, 0, NULL, 0},
	};
	const char *prefix = NULL;
	cli_common c;
	int opt, rc;

	cli_common_init(&c);
	optind = 1;
	while ((opt = cli_getopt(&c, "keygen", argc, argv, "o:h", longopts)) !=
	       -1) {
		switch (opt) {
		case 'h':
			fputs(keygen_help, stdout);
			return EXIT_OK;
		case 'o':
			prefix = optarg;
			break;
		default:
			return EXIT_USAGE;
		}
	}
	if (prefix == NULL || prefix[0] == '\0')
		return cli_usage_error("keygen", "-o PREFIX is required");
	if (argc != optind)
		return cli_usage_error("keygen", "unexpected argument '%s'",
		                       argv[optind]);
	cli_log_start(&c);
	if ((rc = al_pack_keygen(prefix)) < 0)
		return cli_fail(rc, "cannot make a key pair at '%s'", prefix);
	if (!c.quiet)
		printf("wrote %s.key (private) and %s.pub (public)\n", prefix,
		       prefix);
	return EXIT_OK;
}
