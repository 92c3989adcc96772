/* cmd_graph.c: airlock graph: resolve update channels, save their graphs, write
 * the graph data the cluster-side update service reads. */
#include <stdlib.h>
#include <string.h>

#include "airlock/graph.h"
#include "cli_esc.h"
#include "cli.h"
#include "cmd.h"

enum {
	OPT_STORE = OPT_COMMAND_BASE,
	OPT_CONFIG,
	OPT_GRAPH_URL,
	OPT_GRAPH_FILE,
	OPT_IMAGE,
};

static const char graph_help[] =
    "usage: airlock graph --store DIR -o DIR\n"
    "       airlock graph --store DIR --image\n"
    "       airlock graph --config IMAGESET.yaml [--store DIR] [--graph-url "
    "URL | --graph-file PATH]\n"
    "\n"
    "With -o: write the graph data an OpenShift update service (Cincinnati /\n"
    "OSUS) needs for the releases the store holds, in the layout of the\n"
    "cincinnati-graph-data repository: channels/<name>.yaml (name, versions),\n"
    "blocked-edges/*.yaml (conditional updates with their risks, and updates\n"
    "the upstream graph does not have), version, and airlock/graph/ (the\n"
    "saved graphs restricted to what was mirrored, as update-service JSON).\n"
    "Clusters inside the network then see the same upgrade paths.\n"
    "\n"
    "With --image: build that data into the update service's graph-data "
    "image in\n"
    "the store, " AL_GRAPH_IMAGE_NAME ", as 'airlock mirror' does\n"
    "for mirror.platform.graph: true (on " AL_GRAPH_IMAGE_BASE "\n"
    "when the store holds it), for example after unpacking more releases.\n"
    "\n"
    "With --config: resolve mirror.platform.channels (minVersion, maxVersion,\n"
    "shortestPath, full) through the update graph and list the releases that\n"
    "'airlock mirror' takes, one per line:\n"
    "  VERSION ARCH CHANNEL[,CHANNEL...] PAYLOAD\n"
    "With --store as well, the graphs are saved in DIR/airlock/graph/ for -o.\n"
    "\n"
    "Options:\n"
    "      --store DIR          the store\n"
    "  -o, --output DIR         where to write the graph data (created if "
    "missing)\n"
    "  -c, --config FILE        ImageSetConfiguration with "
    "mirror.platform.channels\n"
    "      --image              build the graph-data image in the store\n"
    "      --graph-url URL      update service (default: airlock.graph.url of "
    "the\n"
    "                           configuration, else " AL_GRAPH_DEFAULT_URL ")\n"
    "      --graph-file PATH    read graphs from PATH instead of the network: "
    "one\n"
    "                           graph file, or a directory of "
    "<channel>-<arch>.json\n"
    "                           (such as STORE/airlock/graph of another "
    "store)\n" CLI_COMMON_HELP "\n"
    "Each graph request is bounded by --timeout per attempt (default: 10s to\n"
    "connect, 30s without data) and 60s in total.\n"
    "Exit status: 0 success, 2 usage or configuration error, 3 runtime error\n"
    "(unreachable service, unknown version or channel, empty store).\n";

static void http_opts(const cli_common *c, al_http_opts *o)
{
	*o = (al_http_opts)AL_HTTP_OPTS_INIT;
	o->ca_file = c->ca_file;
	o->proxy = c->proxy;
	o->tls_verify_off = !c->tls_verify;
	o->cancel = c->cancel;
	if (c->timeout_ms > 0) {
		o->connect_timeout_ms = c->timeout_ms;
		o->low_speed_time_ms = c->timeout_ms;
		o->max_retries = 2;
	}
}

static int resolve(cli_common *c, const char *config, const char *store_path,
                   const char *url, const char *file)
{
	al_imageset *cfg = NULL;
	al_store *store = NULL;
	al_store_opts so = {.create = 1};
	al_graph_selection sel;
	al_graph_opts go = AL_GRAPH_OPTS_INIT;
	al_http_opts ho;
	size_t i, j;
	int rc, code = EXIT_OK;

	memset(&sel, 0, sizeof(sel));
	if ((rc = al_imageset_load(&cfg, config)) < 0)
		return cli_input_fail(rc, "cannot load '%s'", config);
	if (cfg->nchannels == 0) {
		cli_error("'%s' has no mirror.platform.channels", config);
		code = EXIT_USAGE;
		goto out;
	}
	http_opts(c, &ho);
	go.url = url;
	go.graph_file = file;
	go.http = &ho;
	if ((rc = al_graph_resolve_imageset(cfg, &go, &sel)) < 0) {
		code =
		    cli_fail(rc, "cannot resolve the channels of '%s'", config);
		goto out;
	}
	for (i = 0; i < sel.nreleases; i++) {
		const al_graph_release *r = &sel.releases[i];

		/* versions, channels and payloads come from the update
		 * service: escaped (cli_esc.h) */
		printf("%s %s ", cli_esc(r->version), cli_esc(r->arch));
		for (j = 0; j < r->nchannels; j++)
			printf("%s%s", j > 0 ? "," : "",
			       cli_esc(r->channels[j]));
		printf(" %s\n", cli_esc(r->payload));
	}
	if (store_path == NULL)
		goto out;
	if ((rc = al_store_open(&store, store_path, &so)) < 0) {
		code = cli_fail(rc, "cannot open store '%s'", store_path);
		goto out;
	}
	for (i = 0; i < sel.ngraphs; i++) {
		if ((rc = al_graph_save_to_store(store, sel.graphs[i])) < 0) {
			code = cli_fail(rc,
			                "cannot save the graph of channel '%s'",
			                sel.graphs[i]->channel);
			goto out;
		}
	}
	if (!c->quiet)
		fprintf(stderr, "saved %zu graphs in '%s'\n", sel.ngraphs,
		        store_path);
out:
	al_graph_selection_clear(&sel);
	al_store_free(store);
	al_imageset_free(cfg);
	return code;
}

/* The graph-data image from what the store holds (docs/graph.md). */
static int build_image(const char *store_path)
{
	al_store *store = NULL;
	al_store_opts so = {0};
	al_graph_image_opts o = AL_GRAPH_IMAGE_OPTS_INIT;
	al_graph_image_result r = AL_GRAPH_IMAGE_RESULT_INIT;
	al_store_image base;
	char ds[AL_DIGEST_STRMAX];
	int rc;

	memset(&base, 0, sizeof(base));
	if ((rc = al_store_open(&store, store_path, &so)) < 0)
		return cli_fail(rc, "cannot open store '%s'", store_path);
	if (al_store_find(store, AL_GRAPH_IMAGE_BASE, &base) == 0)
		o.base = AL_GRAPH_IMAGE_BASE;
	else
		cli_warn("%s is not in the store: the graph image holds the "
		         "graph data alone (no shell for its command)",
		         AL_GRAPH_IMAGE_BASE);
	al_store_image_clear(&base);
	rc = al_graph_image_build(store, &o, &r);
	al_store_free(store);
	if (rc < 0)
		return cli_fail(rc, "cannot build the graph image in '%s'",
		                store_path);
	printf("graph image %s %s: %zu channels, %zu versions, %zu blocked "
	       "edges\n",
	       AL_GRAPH_IMAGE_NAME, al_digest_str(&r.manifest.digest, ds),
	       r.data.channels, r.data.versions, r.data.blocked_edges);
	al_descriptor_clear(&r.manifest);
	return EXIT_OK;
}

static int write_data(const char *store_path, const char *outdir)
{
	al_store *store = NULL;
	al_store_opts so = {.readonly = 1};
	al_graph_data_report rep = AL_GRAPH_DATA_REPORT_INIT;
	int rc;

	if ((rc = al_store_open(&store, store_path, &so)) < 0)
		return cli_fail(rc, "cannot open store '%s'", store_path);
	rc = al_graph_write_data(store, outdir, &rep);
	al_store_free(store);
	if (rc < 0)
		return cli_fail(rc, "cannot write the graph data to '%s'",
		                outdir);
	printf("wrote %zu channels, %zu versions, %zu blocked edges from %zu "
	       "graphs to %s\n",
	       rep.channels, rep.versions, rep.blocked_edges, rep.graphs,
	       cli_esc(outdir));
	return EXIT_OK;
}

int cmd_graph(int argc, char **argv)
{
	static const struct option longopts[] = {
	    CLI_COMMON_OPTIONS,
	    {"store", required_argument, NULL, OPT_STORE},
	    {"output", required_argument, NULL, 'o'},
	    {"config", required_argument, NULL, 'c'},
	    {"graph-url", required_argument, NULL, OPT_GRAPH_URL},
	    {"graph-file", required_argument, NULL, OPT_GRAPH_FILE},
	    {"image", no_argument, NULL, OPT_IMAGE},
	    {NULL, 0, NULL, 0},
	};
	cli_common c;
	const char *store_path = NULL, *outdir = NULL, *config = NULL;
	const char *url = NULL, *file = NULL;
	int opt, code, image = 0;

	cli_common_init(&c);
	optind = 1;
	while ((opt = cli_getopt(&c, "graph", argc, argv, "o:c:h", longopts)) !=
	       -1) {
		switch (opt) {
		case 'h':
			fputs(graph_help, stdout);
			return EXIT_OK;
		case OPT_STORE:
			store_path = optarg;
			break;
		case 'o':
			outdir = optarg;
			break;
		case 'c':
			config = optarg;
			break;
		case OPT_GRAPH_URL:
			url = optarg;
			break;
		case OPT_GRAPH_FILE:
			file = optarg;
			break;
		case OPT_IMAGE:
			image = 1;
			break;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind != argc)
		return cli_usage_error("graph", "unexpected argument '%s'",
		                       argv[optind]);
	if (url != NULL && file != NULL)
		return cli_usage_error("graph", "--graph-url and --graph-file "
		                                "exclude each other");
	if (image && (config != NULL || outdir != NULL || store_path == NULL))
		return cli_usage_error("graph", "--image goes with --store DIR "
		                                "alone");
	if (!image && config == NULL && (store_path == NULL || outdir == NULL))
		return cli_usage_error("graph", "give --store DIR -o DIR, or "
		                                "--config FILE");
	if (config != NULL && outdir != NULL)
		return cli_usage_error("graph",
		                       "-o writes graph data from a "
		                       "store; run it without --config");
	/* --cert-dir is a registry's TLS set-up; graph reaches only the
	 * update service */
	if (c.cert_dir != NULL)
		return cli_usage_error(
		    "graph", "--cert-dir is for registries; give "
		             "the update service's CA with --ca-file");
	if ((code = cli_common_start(&c)) != EXIT_OK)
		goto out;
	if (image)
		code = build_image(store_path);
	else if (config != NULL)
		code = resolve(&c, config, store_path, url, file);
	else
		code = write_data(store_path, outdir);
out:
	cli_common_finish(&c);
	return code;
}
