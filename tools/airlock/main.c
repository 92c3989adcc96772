/* main.c: the airlock command: dispatch to one command per file, help and
 * version. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <string.h>

#include <archive.h>
#include <curl/curl.h>
#include <jansson.h>
#include <openssl/crypto.h>
#include <yaml.h>
#include <zlib.h>

#include "cli.h"
#include "cli_json.h"
#include "cmd.h"
#include "cmd_catalogs.h"

typedef struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} command;

static const command commands[] = {
    {"mirror", cmd_mirror,
     "pull releases, their component images and additional images into a "
     "store"},
    {"push", cmd_push,
     "push every image of a store into a registry, digests preserved"},
    {"copy", cmd_copy, "copy one image between docker:// and oci: locations"},
    {"check", cmd_check,
     "verify every blob and reference of a store; --gc removes unreferenced "
     "blobs"},
    {"mirrorsets", cmd_mirrorsets,
     "write ImageDigestMirrorSet / ImageTagMirrorSet (and ICSP) YAML"},
    {"verify", cmd_verify,
     "check release signatures in a store (or one signature file) against "
     "trusted keys"},
    {"configmaps", cmd_configmaps,
     "write the signature ConfigMaps of a store's releases"},
    {"graph", cmd_graph,
     "update-service graph data for the mirrored releases; resolve channels"},
    {"releases", cmd_releases, "list the releases a store holds"},
    {"pack", cmd_pack,
     "write the store (or what is new) as tar volumes with a signed manifest"},
    {"unpack", cmd_unpack,
     "verify and import pack volumes into a store, resumably"},
    {"catalog", cmd_catalog, "filter and rebuild operator catalogs in a store"},
    {"catalogs", cmd_catalogs,
     "list the operator catalogs 'airlock mirror' recorded in a store"},
    {"imageset", cmd_imageset,
     "check ImageSetConfiguration files (oc-mirror v2alpha1 and v1alpha2)"},
    {"inventory", cmd_inventory,
     "what a store holds, for 'airlock pack --have'"},
    {"keygen", cmd_keygen, "make an Ed25519 key pair for signing packs"},
    {"verify-image", cmd_verify_image,
     "verify an image's sigstore (cosign) signatures against keys or a policy"},
    {"update", cmd_update,
     "apply a release from the store to a cluster, with correct failure "
     "semantics"},
    {"serve", cmd_serve,
     "serve a store as a registry and a signature store (read-only, TLS)"},
    {"delete", cmd_delete,
     "remove releases and images from a store (and their manifests from a "
     "registry)"},
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(
	    f,
	    "usage: airlock COMMAND [OPTIONS] [ARGS]\n\n"
	    "Carry container release payloads into disconnected networks.\n\n"
	    "Commands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-12s %s\n", commands[i].name,
		        commands[i].summary);
	fprintf(f, "  %-12s %s\n", "help",
	        "help for a command (airlock help mirror)");
	fprintf(f, "\n'airlock COMMAND --help' describes a command. airlock "
	           "--version prints versions.\n"
	           "Exit status: 0 success, 1 verification failed, 2 usage "
	           "error, 3 runtime error.\n");
}

static void version(void)
{
	curl_version_info_data *cv = curl_version_info(CURLVERSION_NOW);

	printf("airlock %s\n", al_version());
	printf("libcurl %s\n", cv->version);
	printf("%s\n", OpenSSL_version(OPENSSL_VERSION));
	printf("%s\n", archive_version_details());
	printf("libyaml %s\n", yaml_get_version_string());
	printf("jansson %s\n", jansson_version_str());
	printf("zlib %s\n", zlibVersion());
}

static const command *find_command(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

/* Results go to stdout: a result that could not be written (a full disk, a
 * closed pipe) is a runtime error, never exit 0. */
static int finish(int rc)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		cli_error("cannot write the results to standard output: %s",
		          strerror(errno));
		return rc == EXIT_OK ? EXIT_RUNTIME : rc;
	}
	return rc;
}

static int run(int argc, char **argv)
{
	const command *cmd;

	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0 ||
	    strcmp(argv[1], "version") == 0) {
		version();
		return EXIT_OK;
	}
	if (strcmp(argv[1], "help") == 0) {
		static char help_flag[] = "--help";
		char *help_argv[] = {argv[2], help_flag, NULL};
		if (argc < 3) {
			usage(stdout);
			return EXIT_OK;
		}
		cmd = find_command(argv[2]);
		if (cmd == NULL) {
			cli_error("unknown command '%s'", argv[2]);
			usage(stderr);
			return EXIT_USAGE;
		}
		return cmd->fn(2, help_argv);
	}
	cmd = find_command(argv[1]);
	if (cmd == NULL) {
		cli_error("unknown command '%s'", argv[1]);
		usage(stderr);
		return EXIT_USAGE;
	}
	/* a --json document the command opened is written once it ends */
	return cli_json_finish(cmd->fn(argc - 1, argv + 1));
}

/* AIRLOCK_TEST_CLOCK=virtual[:FILE]: the test suite's clock
 * (docs/testing.md). Waits and polls take no real time; deadlines are
 * reached by the sleeps that lead to them. With FILE, one timeline for the
 * runs of a test: a run starts where the last one ended (written at exit),
 * so a simulated server that follows the clock never sees it go back. */
static const char *test_clock_file;

static void save_test_clock(void)
{
	FILE *f = fopen(test_clock_file, "w");

	if (f == NULL)
		return;
	fprintf(f, "%llu\n", (unsigned long long)al_clock_now_ms());
	(void)fclose(f);
}

static void use_test_clock(const char *spec)
{
	uint64_t start = al_clock_now_ms();
	unsigned long long last;
	FILE *f;

	if (strncmp(spec, "virtual", 7) != 0 ||
	    (spec[7] != '\0' && spec[7] != ':')) {
		cli_warn("AIRLOCK_TEST_CLOCK='%s' ignored (only 'virtual' or "
		         "'virtual:FILE')",
		         spec);
		return;
	}
	if (spec[7] == ':' && spec[8] != '\0') {
		test_clock_file = spec + 8;
		f = fopen(test_clock_file, "r");
		if (f != NULL) {
			if (fscanf(f, "%llu", &last) == 1 && last > start)
				start = (uint64_t)last;
			(void)fclose(f);
		}
		(void)atexit(save_test_clock);
	}
	al_clock_use_virtual(start, al_clock_wall_ms());
}

int main(int argc, char **argv)
{
	const char *clk = getenv("AIRLOCK_TEST_CLOCK");

#ifdef __GLIBC__
	/* One malloc arena: glibc gives each transfer thread its own, and
	 * their fragmentation was most of the peak RSS of a 10,000-image
	 * mirror (docs/performance.md); MALLOC_ARENA_MAX overrides. */
	if (getenv("MALLOC_ARENA_MAX") == NULL)
		(void)mallopt(M_ARENA_MAX, 1);
#endif
	if (clk != NULL && clk[0] != '\0')
		use_test_clock(clk);
	return finish(run(argc, argv));
}
