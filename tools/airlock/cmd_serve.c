/* cmd_serve.c: airlock serve: a store as the network's registry and signature
 * store (docs/serve.md); --make-cert makes a CA and a server certificate. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "airlock/serve.h"
#include "cli.h"
#include "cmd.h"

enum {
	OPT_STORE = OPT_COMMAND_BASE,
	OPT_LISTEN,
	OPT_TLS_CERT,
	OPT_TLS_KEY,
	OPT_MAKE_CERT,
	OPT_HOST,
	OPT_ACCESS_LOG,
	OPT_MAX_CONN,
	OPT_PER_IP,
	OPT_IDLE,
	OPT_THREADS,
	OPT_ALLOW_PUSH,
	OPT_HTPASSWD,
	OPT_TOKEN_FILE,
	OPT_AUTH_PULL,
	OPT_MAX_BLOB,
	OPT_MAX_UPLOADS,
	OPT_UPLOAD_TIMEOUT,
	OPT_SERVE_UNTRUSTED,
};

#define HOSTS_MAX 32

static const char serve_help[] =
    "usage: airlock serve --store DIR --listen ADDR:PORT [--tls-cert F "
    "--tls-key F]\n"
    "       airlock serve --make-cert DIR [--host NAME]...\n"
    "\n"
    "Serve the store, as it is, as an OCI distribution registry (pull: "
    "manifests,\n"
    "blobs with ranges, tags, catalog, referrers) under the names 'airlock "
    "push'\n"
    "would give its images, and as the cluster's HTTP signature store\n"
    "(/signatures/sha256=HEX/signature-N). Read-only unless --allow-push. "
    "Stops on\nSIGTERM or SIGINT.\n"
    "\n"
    "Options:\n"
    "      --store DIR          the store (read-only; names re-read when "
    "index.json\n"
    "                           changes)\n"
    "      --listen ADDR:PORT   IP address and port (PORT 0: a free one; the "
    "address\n"
    "                           is printed as 'serving on ADDR:PORT')\n"
    "      --tls-cert FILE      PEM certificate chain: serve HTTPS\n"
    "      --tls-key FILE       its PEM private key\n"
    "      --make-cert DIR      write DIR/ca.crt, ca.key, server.crt, "
    "server.key and\n"
    "                           print the CA's path, then exit\n"
    "      --host NAME          a DNS name or IP address of the server "
    "certificate\n"
    "                           (repeat; default: localhost and "
    "127.0.0.1)\n"
    "      --access-log FILE    one JSON line per request there (default: "
    "stderr)\n"
    "      --max-connections N  at once (default 256)\n"
    "      --per-ip N           at once from one address (default 64)\n"
    "      --idle-timeout SEC   close a connection silent this long "
    "(default 30)\n"
    "      --threads N          worker threads (default 4)\n"
    "      --serve-untrusted    serve the signatures and names an import no "
    "key\n"
    "                           verified wrote (unpack --accept-untrusted; "
    "left\n"
    "                           out by default, docs/security.md)\n"
    "      --allow-push         take pushes (uploads into the store, "
    "manifests into\n"
    "                           index.json); needs --htpasswd or "
    "--token-file\n"
    "      --htpasswd FILE      users allowed to push: user:hash lines "
    "(bcrypt $2y$\n"
    "                           up to cost 12, $apr1$, $5$, $6$, {SHA})\n"
    "      --token-file FILE    bearer tokens allowed to push, one a line "
    "(or\n"
    "                           sha256:HEX of one)\n"
    "      --auth-pull          credentials for pulls too (not for "
    "/signatures/)\n"
    "      --max-blob-size N    bytes of one pushed blob (default 64 "
    "GiB)\n"
    "      --max-uploads N      upload sessions open at once (default "
    "32)\n"
    "      --upload-timeout SEC drop an upload idle this long (default "
    "600)\n" CLI_LOCAL_HELP "\n"
    "Exit status: 0 stopped by a signal (or certificates written), 2 usage "
    "error,\n"
    "3 runtime error.\n";

typedef struct serve_out {
	FILE *log;
} serve_out;

static void on_ready(void *ud, const char *addr)
{
	(void)ud;
	printf("serving on %s\n", addr);
	fflush(stdout);
}

static void on_access(void *ud, const char *line)
{
	serve_out *so = ud;

	fprintf(so->log, "%s\n", line);
	fflush(so->log);
}

static int parse_uint(const char *cmd, const char *opt, const char *s,
                      unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v == 0 || v > 100000)
		return cli_usage_error(
		    cmd, "%s wants a number from 1 to 100000", opt);
	*out = (unsigned)v;
	return 0;
}

static int make_cert(const char *dir, const char **hosts, size_t nhosts)
{
	static const char *const defaults[] = {"localhost", "127.0.0.1"};
	char *ca = NULL;
	int rc;

	if (nhosts == 0)
		rc = al_serve_make_cert(dir, defaults, 2, &ca);
	else
		rc = al_serve_make_cert(dir, hosts, nhosts, &ca);
	if (rc < 0)
		return cli_fail(rc, "cannot make certificates in '%s'", dir);
	printf("%s\n", ca);
	free(ca);
	return EXIT_OK;
}

/* The options that take a number: 1 set in o, 0 not one of them, -1 a
 * usage error (said). */
static int number_opt(int opt, const char *arg, al_serve_opts *o)
{
	char *end;
	unsigned long long v;

	switch (opt) {
	case OPT_MAX_CONN:
		return parse_uint("serve", "--max-connections", arg,
		                  &o->max_connections) < 0
		           ? -1
		           : 1;
	case OPT_PER_IP:
		return parse_uint("serve", "--per-ip", arg, &o->per_ip) < 0 ? -1
		                                                            : 1;
	case OPT_IDLE:
		return parse_uint("serve", "--idle-timeout", arg,
		                  &o->idle_timeout_s) < 0
		           ? -1
		           : 1;
	case OPT_THREADS:
		return parse_uint("serve", "--threads", arg, &o->threads) < 0
		           ? -1
		           : 1;
	case OPT_MAX_UPLOADS:
		return parse_uint("serve", "--max-uploads", arg,
		                  &o->max_uploads) < 0
		           ? -1
		           : 1;
	case OPT_UPLOAD_TIMEOUT:
		return parse_uint("serve", "--upload-timeout", arg,
		                  &o->upload_timeout_s) < 0
		           ? -1
		           : 1;
	case OPT_MAX_BLOB:
		errno = 0;
		v = strtoull(arg, &end, 10);
		if (errno != 0 || end == arg || *end != '\0' || v == 0) {
			cli_usage_error(
			    "serve", "--max-blob-size wants a number of bytes");
			return -1;
		}
		o->max_blob = (uint64_t)v;
		return 1;
	default:
		return 0;
	}
}

int cmd_serve(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"store", required_argument, NULL, OPT_STORE},
	    {"listen", required_argument, NULL, OPT_LISTEN},
	    {"tls-cert", required_argument, NULL, OPT_TLS_CERT},
	    {"tls-key", required_argument, NULL, OPT_TLS_KEY},
	    {"make-cert", required_argument, NULL, OPT_MAKE_CERT},
	    {"host", required_argument, NULL, OPT_HOST},
	    {"access-log", required_argument, NULL, OPT_ACCESS_LOG},
	    {"max-connections", required_argument, NULL, OPT_MAX_CONN},
	    {"per-ip", required_argument, NULL, OPT_PER_IP},
	    {"idle-timeout", required_argument, NULL, OPT_IDLE},
	    {"threads", required_argument, NULL, OPT_THREADS},
	    {"allow-push", no_argument, NULL, OPT_ALLOW_PUSH},
	    {"htpasswd", required_argument, NULL, OPT_HTPASSWD},
	    {"token-file", required_argument, NULL, OPT_TOKEN_FILE},
	    {"auth-pull", no_argument, NULL, OPT_AUTH_PULL},
	    {"serve-untrusted", no_argument, NULL, OPT_SERVE_UNTRUSTED},
	    {"max-blob-size", required_argument, NULL, OPT_MAX_BLOB},
	    {"max-uploads", required_argument, NULL, OPT_MAX_UPLOADS},
	    {"upload-timeout", required_argument, NULL, OPT_UPLOAD_TIMEOUT},
	    CLI_LOCAL_OPTIONS,
	    {NULL, 0, NULL, 0},
	};
	al_serve_opts o = AL_SERVE_OPTS_INIT;
	const char *make_dir = NULL, *access_log = NULL;
	const char *hosts[HOSTS_MAX];
	size_t nhosts = 0;
	serve_out so = {stderr};
	cli_common c;
	int opt, rc, code = EXIT_OK;

	cli_common_init(&c);
	optind = 1;
	while ((opt = cli_getopt(&c, "serve", argc, argv, "h", longopts)) !=
	       -1) {
		switch (opt) {
		case 'h':
			fputs(serve_help, stdout);
			return EXIT_OK;
		case OPT_STORE:
			o.store = optarg;
			break;
		case OPT_LISTEN:
			o.listen = optarg;
			break;
		case OPT_TLS_CERT:
			o.tls_cert = optarg;
			break;
		case OPT_TLS_KEY:
			o.tls_key = optarg;
			break;
		case OPT_MAKE_CERT:
			make_dir = optarg;
			break;
		case OPT_HOST:
			if (nhosts == HOSTS_MAX)
				return cli_usage_error(
				    "serve", "at most %d --host", HOSTS_MAX);
			hosts[nhosts++] = optarg;
			break;
		case OPT_ACCESS_LOG:
			access_log = optarg;
			break;
		case OPT_ALLOW_PUSH:
			o.allow_push = 1;
			break;
		case OPT_HTPASSWD:
			o.htpasswd = optarg;
			break;
		case OPT_TOKEN_FILE:
			o.token_file = optarg;
			break;
		case OPT_SERVE_UNTRUSTED:
			o.serve_untrusted = 1;
			break;
		case OPT_AUTH_PULL:
			o.auth_pull = 1;
			break;
		default:
			if ((rc = number_opt(opt, optarg, &o)) <= 0)
				return EXIT_USAGE;
		}
	}
	if (argc != optind)
		return cli_usage_error("serve", "unexpected argument '%s'",
		                       argv[optind]);
	if (make_dir != NULL) {
		cli_log_start(&c);
		return make_cert(make_dir, hosts, nhosts);
	}
	if (o.store == NULL || o.listen == NULL)
		return cli_usage_error("serve",
		                       "--store DIR and --listen ADDR:PORT are "
		                       "required");
	if ((o.tls_cert == NULL) != (o.tls_key == NULL))
		return cli_usage_error("serve",
		                       "--tls-cert and --tls-key go together");
	if ((o.allow_push || o.auth_pull) && o.htpasswd == NULL &&
	    o.token_file == NULL)
		return cli_usage_error("serve", "--allow-push and --auth-pull "
		                                "need --htpasswd or "
		                                "--token-file");
	c.offline = 1;
	if ((code = cli_common_start(&c)) != EXIT_OK)
		goto out;
	if (access_log != NULL && (so.log = fopen(access_log, "ae")) == NULL) {
		cli_error("cannot open '%s': %s", access_log, strerror(errno));
		code = EXIT_RUNTIME;
		goto out;
	}
	o.ready = on_ready;
	o.access = on_access;
	o.ud = &so;
	o.cancel = c.cancel;
	if ((rc = al_serve_run(&o)) < 0)
		code = cli_fail(rc, "cannot serve '%s'", o.store);
out:
	if (so.log != NULL && so.log != stderr)
		fclose(so.log);
	cli_common_finish(&c);
	return code;
}
