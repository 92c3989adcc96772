/* cli_ocmirror.c: oc-mirror v2's command-line forms of airlock mirror, run as
 * airlock's own commands (mirror, pack, unpack, push, mirror --to); the
 * oc-mirror flags airlock spells otherwise, refused with their equivalent
 * (docs/coming-from-oc-mirror.md). The rules follow oc-mirror's
 * internal/pkg/cli/executor.go (Validate, Complete). */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "airlock/pack.h"
#include "airlock/store.h"
#include "cli.h"
#include "cli_ocmirror.h"
#include "cli_resources.h"
#include "cmd.h"

#define FILE_PFX "file://"
#define DOCKER_PFX "docker://"
#define MAX_TOKENS 512

/* oc-mirror flags with another name (or no need) in airlock. */
static const struct {
	const char *name;
	int has_arg; /* 0 none, 1 required, 2 optional (name=value) */
	const char *instead;
} renamed[] = {
    {"parallel-images", 1, "--parallel N (concurrent transfers)"},
    {"parallel-layers", 1, "--parallel N (concurrent transfers)"},
    {"image-timeout", 1, "--timeout D"},
    {"retry-times", 1,
     "--timeout D (each request is retried); a rerun resumes, and "
     "'mirror --retry FILE' retries the images that failed"},
    {"retry-delay", 1,
     "--timeout D (each request is retried with backoff); a rerun "
     "resumes"},
    {"remove-signatures", 0, "--no-sigstore"},
    {"ignore-release-signature", 0, "--allow-unsigned"},
    {"secure-policy", 0, "--sigstore-policy FILE"},
    {"log-level", 1, "-v (debug) or -q (errors only)"},
    {"src-tls-verify", 2,
     "--tls-verify=false (every registry) or airlock.insecureRegistries "
     "in the ImageSetConfiguration (those registries)"},
    {"src-authfile", 1, "--authfile FILE"},
    {"dest-authfile", 1, "--authfile FILE"},
    {"src-cert-dir", 1, "--cert-dir DIR"},
    {"dest-cert-dir", 1, "--cert-dir DIR"},
    {"strict-archive", 0,
     "none needed: airlock pack never writes a volume over its size "
     "(--volume-size, or the imageset's archiveSize); it splits large "
     "blobs"},
};

typedef struct ocm_args {
	const char *pass[MAX_TOKENS]; /* mirror's own options, as given */
	size_t npass;
	const char *local[MAX_TOKENS]; /* those pack and unpack take too */
	size_t nlocal;
	const char *pos[MAX_TOKENS];
	size_t npos;
	const char *config, *store, *from, *workspace, *since, *cache_dir;
	const char *dest_tls; /* --dest-tls-verify value, NULL if not given */
	int oc;               /* an oc-mirror-only flag was given */
	int json;
} ocm_args;

static int push_tok(const char **v, size_t *n, const char *s)
{
	if (*n >= MAX_TOKENS)
		return cli_usage_error("mirror", "too many arguments");
	v[(*n)++] = s;
	return EXIT_OK;
}

/* A local option pack and unpack also take (CLI_LOCAL_OPTIONS). */
static int is_local(const char *name, size_t len)
{
	static const char *const names[] = {"log-format", "quiet", "verbose",
	                                    "no-space-check"};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == len && memcmp(names[i], name, len) == 0)
			return 1;
	return 0;
}

static int eq(const char *name, size_t len, const char *want)
{
	return strlen(want) == len && memcmp(want, name, len) == 0;
}

/* Split argv into mirror's options, oc-mirror's, and the positionals. */
static int tokenize(ocm_args *a, int argc, char **argv,
                    const struct option *longopts)
{
	int i, code;

	for (i = 1; i < argc; i++) {
		const char *t = argv[i], *name, *val, *eqs;
		size_t len, k;
		int takes = 0, local;

		if (strcmp(t, "--") == 0) {
			for (i++; i < argc; i++)
				if ((code = push_tok(a->pos, &a->npos,
				                     argv[i])) != EXIT_OK)
					return code;
			break;
		}
		if (t[0] != '-' || t[1] == '\0') {
			if ((code = push_tok(a->pos, &a->npos, t)) != EXIT_OK)
				return code;
			continue;
		}
		if (t[1] != '-') { /* short options: -c takes a value */
			if (t[1] == 'c') {
				a->config = t[2] != '\0' ? t + 2 : argv[++i];
				if (a->config == NULL)
					return cli_usage_error(
					    "mirror", "-c takes a file");
				continue;
			}
			if (t[1] == 'p') { /* oc-mirror --port */
				i += t[2] == '\0';
				cli_warn("--port: airlock runs no local "
				         "registry (the store is its cache); "
				         "ignored");
				continue;
			}
			if ((code = push_tok(a->pass, &a->npass, t)) != EXIT_OK)
				return code;
			if (t[1] == 'q' || t[1] == 'v')
				push_tok(a->local, &a->nlocal, t);
			continue;
		}
		name = t + 2;
		eqs = strchr(name, '=');
		len = eqs != NULL ? (size_t)(eqs - name) : strlen(name);
		val = eqs != NULL ? eqs + 1 : NULL;
		/* oc-mirror's own flags */
		if (eq(name, len, "from") || eq(name, len, "workspace") ||
		    eq(name, len, "since") || eq(name, len, "cache-dir") ||
		    eq(name, len, "config") || eq(name, len, "store") ||
		    eq(name, len, "port")) {
			if (val == NULL && (val = argv[++i]) == NULL)
				return cli_usage_error("mirror",
				                       "--%.*s takes a value",
				                       (int)len, name);
			if (eq(name, len, "from"))
				a->from = val;
			else if (eq(name, len, "workspace"))
				a->workspace = val;
			else if (eq(name, len, "since"))
				a->since = val;
			else if (eq(name, len, "cache-dir"))
				a->cache_dir = val;
			else if (eq(name, len, "config"))
				a->config = val;
			else if (eq(name, len, "store"))
				a->store = val;
			else
				cli_warn("--port: airlock runs no local "
				         "registry (the store is its cache); "
				         "ignored");
			a->oc |=
			    !eq(name, len, "config") && !eq(name, len, "store");
			continue;
		}
		if (eq(name, len, "v2")) {
			a->oc = 1; /* accepted and ignored, as oc-mirror */
			continue;
		}
		if (eq(name, len, "dest-tls-verify")) {
			a->dest_tls = val != NULL ? val : "true";
			continue;
		}
		if (eq(name, len, "json"))
			a->json = 1;
		for (k = 0; k < sizeof(renamed) / sizeof(renamed[0]); k++)
			if (eq(name, len, renamed[k].name))
				return cli_usage_error(
				    "mirror",
				    "--%s is oc-mirror's; airlock's "
				    "equivalent: %s",
				    renamed[k].name, renamed[k].instead);
		for (k = 0; longopts[k].name != NULL; k++)
			if (eq(name, len, longopts[k].name)) {
				takes =
				    longopts[k].has_arg == required_argument &&
				    val == NULL;
				break;
			}
		local = is_local(name, len);
		if ((code = push_tok(a->pass, &a->npass, t)) != EXIT_OK ||
		    (local &&
		     (code = push_tok(a->local, &a->nlocal, t)) != EXIT_OK))
			return code;
		if (takes && i + 1 < argc) {
			i++;
			if ((code = push_tok(a->pass, &a->npass, argv[i])) !=
			        EXIT_OK ||
			    (local && (code = push_tok(a->local, &a->nlocal,
			                               argv[i])) != EXIT_OK))
				return code;
		}
	}
	return EXIT_OK;
}

/* A docker:// argument that names no image (no tag, no digest): oc-mirror's
 * registry destination, never an airlock release (cli_mirror_arg_refusal
 * refuses it as one). */
static int is_registry_dest(const char *s)
{
	const char *p, *last;

	if (!al_str_startswith(s, DOCKER_PFX))
		return 0;
	p = s + strlen(DOCKER_PFX);
	last = strrchr(p, '/');
	if (last == NULL)
		return 1;
	return strchr(last + 1, ':') == NULL && strchr(last + 1, '@') == NULL;
}

/* oc-mirror's --since: a date, yyyy-MM-dd (time.DateOnly). */
static int date_ok(const char *s)
{
	static const char shape[] = "dddd-dd-dd";
	size_t i;

	if (strlen(s) != sizeof(shape) - 1)
		return 0;
	for (i = 0; shape[i] != '\0'; i++)
		if (shape[i] == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != '-')
			return 0;
	return strncmp(s + 5, "13", 2) < 0 && strncmp(s + 5, "00", 2) > 0 &&
	       strncmp(s + 8, "32", 2) < 0 && strncmp(s + 8, "00", 2) > 0;
}

/* Where the store lives: --store, else beside oc-mirror's cache
 * (--cache-dir, else $OC_MIRROR_CACHE, else $HOME). */
static char *store_path(const ocm_args *a)
{
	const char *env = getenv("OC_MIRROR_CACHE"), *base = a->cache_dir;

	if (a->store != NULL)
		return al_strdup(a->store);
	if (base == NULL)
		base = env != NULL && env[0] != '\0' ? env : getenv("HOME");
	if (base == NULL || base[0] == '\0')
		return NULL;
	return al_sprintf("%s/.oc-mirror/airlock-store", base);
}

/* DIR of "file://DIR" (oc-mirror trims the prefix). */
static const char *file_dir(const char *s)
{
	return s + strlen(FILE_PFX);
}

/* oc-mirror's working-dir under a workspace: DIR/working-dir, unless DIR
 * already is one (executor.go Complete). */
static char *working_dir(const char *dir)
{
	const char *b = strrchr(dir, '/');

	b = b != NULL ? b + 1 : dir;
	if (strcmp(b, "working-dir") == 0)
		return al_strdup(dir);
	return al_sprintf("%s/working-dir", dir);
}

/* 1 when --dry-run (or --dry-run=DIR) is among mirror's options. */
static int dry_run(const ocm_args *a)
{
	size_t i;

	for (i = 0; i < a->npass; i++)
		if (strcmp(a->pass[i], "--dry-run") == 0 ||
		    al_str_startswith(a->pass[i], "--dry-run="))
			return 1;
	return 0;
}

/*
 * DIR/working-dir/cluster-resources into *out (caller frees), created and
 * emptied of an earlier run's files unless this is a dry run, as
 * oc-mirror's setupWorkingDir does in every workflow before it runs (it
 * then writes there in disk to mirror and mirror to mirror only).
 * Returns an exit status.
 */
static int cluster_resources_dir(const ocm_args *a, const char *dir, char **out)
{
	char *wd = working_dir(dir), *cr = NULL;
	int code = EXIT_OK, rc;

	*out = NULL;
	if (wd == NULL || (cr = al_sprintf("%s/cluster-resources", wd)) == NULL)
		code = cli_fail(AL_ENOMEM, "out of memory");
	else if (!dry_run(a))
		code = cli_cr_clean_dir(cr);
	else if ((rc = al_fs_mkdir_p(cr, 0755)) < 0)
		code = cli_fail(rc, "cannot create '%s'", cr);
	free(wd);
	if (code != EXIT_OK) {
		free(cr);
		return code;
	}
	*out = cr;
	return EXIT_OK;
}

static int run(int (*fn)(int, char **), const char **v, size_t n)
{
	char *argv[MAX_TOKENS * 2 + 16];
	size_t i;

	for (i = 0; i < n; i++)
		argv[i] = (char *)v[i];
	argv[n] = NULL;
	optind = 1;
	return fn((int)n, argv);
}

/* The pack this mirror to disk is a delta to: oc-mirror's history
 * (internal/pkg/history: the latest file before --since, else the
 * latest) is airlock's pack records. "" when none: a full pack. */
static int since_base(const char *store, const char *since, char *id,
                      size_t cap)
{
	al_store *s = NULL;
	al_store_pack *packs = NULL;
	al_store_opts so = AL_STORE_OPTS_INIT;
	size_t n = 0, i, best = (size_t)-1;
	char cut[32];
	int rc;

	id[0] = '\0';
	if (since != NULL)
		snprintf(cut, sizeof(cut), "%sT00:00:00Z", since);
	if ((rc = al_store_open(&s, store, &so)) < 0 ||
	    (rc = al_store_packs_list(s, &packs, &n)) < 0) {
		al_store_free(s);
		return cli_fail(rc, "cannot read the packs of store '%s'",
		                store);
	}
	for (i = 0; i < n; i++) {
		if (since != NULL && (packs[i].created == NULL ||
		                      strcmp(packs[i].created, cut) >= 0))
			continue;
		if (best == (size_t)-1 ||
		    packs[i].sequence > packs[best].sequence)
			best = i;
	}
	if (best != (size_t)-1)
		snprintf(id, cap, "%s", packs[best].id);
	al_store_packs_free(packs, n);
	al_store_free(s);
	return EXIT_OK;
}

/* oc-mirror removes the archives of an earlier run from the destination
 * (archive.RemovePastArchives) so that it holds one set: the same for
 * airlock's packs (airlock-<id>.json, .json.sig, airlock-<id>-NNNN.tar). */
static int remove_past_packs(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (d == NULL)
		return EXIT_OK; /* pack creates it */
	while ((e = readdir(d)) != NULL) {
		char *p;
		if (!al_str_startswith(e->d_name, "airlock-") ||
		    !(al_str_endswith(e->d_name, ".json") ||
		      al_str_endswith(e->d_name, ".json.sig") ||
		      al_str_endswith(e->d_name, ".tar")))
			continue;
		if ((p = al_sprintf("%s/%s", dir, e->d_name)) == NULL) {
			closedir(d);
			return cli_fail(AL_ENOMEM, "out of memory");
		}
		if (unlink(p) != 0)
			cli_warn("cannot remove the earlier pack file '%s'", p);
		free(p);
	}
	closedir(d);
	return EXIT_OK;
}

/* -c ISC file://DIR: mirror into the store, then pack it into DIR. */
static int mirror_to_disk(const ocm_args *a, const char *store,
                          const char *dest)
{
	const char *v[MAX_TOKENS * 2 + 16];
	char base[AL_PACK_ID_MAX + 1], *cr = NULL;
	size_t n = 0, i;
	int code;

	/* oc-mirror makes it here too, and leaves it empty */
	if ((code = cluster_resources_dir(a, file_dir(dest), &cr)) != EXIT_OK)
		return code;
	free(cr);
	v[n++] = "mirror";
	v[n++] = "--config";
	v[n++] = a->config;
	for (i = 0; i < a->npass; i++)
		v[n++] = a->pass[i];
	v[n++] = "--store";
	v[n++] = store;
	if ((code = run(cmd_mirror, v, n)) != EXIT_OK)
		return code;
	if ((code = since_base(store, a->since, base, sizeof(base))) !=
	        EXIT_OK ||
	    (code = remove_past_packs(file_dir(dest))) != EXIT_OK)
		return code;
	n = 0;
	v[n++] = "pack";
	for (i = 0; i < a->nlocal; i++)
		v[n++] = a->local[i];
	v[n++] = "--store";
	v[n++] = store;
	v[n++] = "-o";
	v[n++] = file_dir(dest);
	if (base[0] != '\0') {
		v[n++] = "--since";
		v[n++] = base;
	}
	return run(cmd_pack, v, n);
}

/* --from file://DIR docker://REG: unpack DIR (an airlock pack or oc-mirror
 * archives), then push the store to REG with the cluster resources in
 * DIR/working-dir/cluster-resources. */
static int disk_to_mirror(const ocm_args *a, const char *store,
                          const char *dest, int dest_insecure)
{
	const char *v[MAX_TOKENS * 2 + 16];
	char *cr = NULL;
	size_t n = 0, i;
	int code;

	v[n++] = "unpack";
	/* oc-mirror's disk-to-mirror imports what it finds, signed by no
	 * one: this form keeps that model (docs/coming-from-oc-mirror.md) */
	v[n++] = "--accept-untrusted";
	v[n++] = file_dir(a->from);
	for (i = 0; i < a->nlocal; i++)
		v[n++] = a->local[i];
	v[n++] = "--store";
	v[n++] = store;
	if ((code = cluster_resources_dir(a, file_dir(a->from), &cr)) !=
	    EXIT_OK)
		return code;
	if ((code = run(cmd_unpack, v, n)) != EXIT_OK) {
		free(cr);
		return code;
	}
	n = 0;
	v[n++] = "push";
	for (i = 0; i < a->npass; i++)
		if (strcmp(a->pass[i], "--no-space-check") != 0)
			v[n++] = a->pass[i];
	v[n++] = "--store";
	v[n++] = store;
	if (dest_insecure)
		v[n++] = "--tls-verify=false";
	v[n++] = "--cluster-resources";
	v[n++] = cr;
	v[n++] = "--oc-mirror-names";
	/* and pushes it: what the import above marked untrusted too */
	v[n++] = "--push-untrusted";
	v[n++] = dest;
	code = run(cmd_push, v, n);
	free(cr);
	return code;
}

/* --workspace file://DIR docker://REG: mirror --to REG, the cluster
 * resources in DIR/working-dir/cluster-resources. */
static int mirror_to_mirror(const ocm_args *a, const char *store,
                            const char *dest, int dest_insecure)
{
	const char *v[MAX_TOKENS * 2 + 16];
	char *cr = NULL;
	size_t n = 0, i;
	int code;

	if ((code = cluster_resources_dir(a, file_dir(a->workspace), &cr)) !=
	    EXIT_OK)
		return code;
	v[n++] = "mirror";
	v[n++] = "--config";
	v[n++] = a->config;
	for (i = 0; i < a->npass; i++)
		v[n++] = a->pass[i];
	v[n++] = "--store";
	v[n++] = store;
	v[n++] = "--to";
	v[n++] = dest;
	if (dest_insecure)
		v[n++] = "--dest-tls-verify=false";
	v[n++] = "--cluster-resources";
	v[n++] = cr;
	v[n++] = "--registry";
	v[n++] = dest;
	v[n++] = "--oc-mirror-names";
	code = run(cmd_mirror, v, n);
	free(cr);
	return code;
}

int cli_ocmirror_mirror(int argc, char **argv, const struct option *longopts,
                        int *handled)
{
	ocm_args a;
	const char *dest = NULL;
	char *store = NULL;
	int code, insecure = 0;
	size_t i;

	*handled = 0;
	memset(&a, 0, sizeof(a));
	for (i = 1; i < (size_t)argc; i++)
		if (strcmp(argv[i], "-h") == 0 ||
		    strcmp(argv[i], "--help") == 0)
			return EXIT_OK; /* mirror's own help */
	if ((code = tokenize(&a, argc, argv, longopts)) != EXIT_OK) {
		*handled = 1;
		return code;
	}
	for (i = 0; i < a.npos; i++)
		if (al_str_startswith(a.pos[i], FILE_PFX) ||
		    is_registry_dest(a.pos[i]))
			a.oc = 1;
	if (!a.oc)
		return EXIT_OK; /* airlock's own form */
	*handled = 1;
	/* a registry alone: before anything else, the form airlock has for
	 * it (oc-mirror asks for --from or --workspace) */
	if (a.npos == 1)
		dest = a.pos[0];
	if (dest != NULL && is_registry_dest(dest) && a.from == NULL &&
	    a.workspace == NULL)
		return cli_usage_error(
		    "mirror",
		    "with a docker:// destination give --from file://DIR "
		    "(disk to mirror) or --workspace file://DIR (mirror to "
		    "mirror), as oc-mirror asks; airlock's own forms: "
		    "'airlock mirror -c ISC --store STORE --to %s', or "
		    "'airlock push --store STORE %s' for a store already "
		    "mirrored",
		    dest, dest);
	/* executor.go Validate, in its order */
	if (a.config == NULL && a.from == NULL)
		return cli_usage_error("mirror", "-c/--config IMAGESET is "
		                                 "required (oc-mirror's form)");
	if (a.npos != 1)
		return cli_usage_error(
		    "mirror", "oc-mirror's forms take one destination, "
		              "file://DIR or docker://REGISTRY[/PREFIX]");
	dest = a.pos[0];
	if (a.json)
		return cli_usage_error(
		    "mirror", "--json goes with airlock's own steps: run "
		              "'airlock mirror', 'pack', 'unpack' or 'push' "
		              "with --json");
	if (al_str_startswith(dest, FILE_PFX) && a.from != NULL)
		return cli_usage_error(
		    "mirror", "when the destination is file://, mirror to disk "
		              "is assumed and --from is not needed");
	if (a.from != NULL && !al_str_startswith(a.from, FILE_PFX))
		return cli_usage_error("mirror", "--from takes file://DIR");
	if (a.workspace != NULL && !al_str_startswith(a.workspace, FILE_PFX))
		return cli_usage_error("mirror",
		                       "--workspace takes file://DIR");
	if (a.since != NULL && !date_ok(a.since))
		return cli_usage_error("mirror",
		                       "--since takes a date, yyyy-MM-dd");
	if (a.since != NULL && !al_str_startswith(dest, FILE_PFX)) {
		cli_warn("--since is only taken into account in mirror to "
		         "disk (file://DIR); ignored");
		a.since = NULL;
	}
	if (al_str_startswith(dest, FILE_PFX) && a.workspace != NULL)
		return cli_usage_error(
		    "mirror", "when the destination is file://, mirror to disk "
		              "is assumed and --workspace is not needed");
	if (!al_str_startswith(dest, FILE_PFX) && !is_registry_dest(dest))
		return cli_usage_error(
		    "mirror",
		    "the destination must be file://DIR (mirror to "
		    "disk) or docker://REGISTRY[/PREFIX] (a registry)");
	if (is_registry_dest(dest) && a.from != NULL && a.workspace != NULL)
		return cli_usage_error(
		    "mirror", "with a docker:// destination, --from (disk to "
		              "mirror) and --workspace (mirror to mirror) "
		              "exclude each other");
	if (a.cache_dir != NULL && getenv("OC_MIRROR_CACHE") != NULL &&
	    getenv("OC_MIRROR_CACHE")[0] != '\0')
		return cli_usage_error("mirror",
		                       "OC_MIRROR_CACHE and --cache-dir are "
		                       "both set: keep one");
	if (a.dest_tls != NULL) {
		if (strcmp(a.dest_tls, "false") == 0)
			insecure = 1;
		else if (strcmp(a.dest_tls, "true") != 0)
			return cli_usage_error(
			    "mirror",
			    "--dest-tls-verify takes true or false, not '%s'",
			    a.dest_tls);
	}
	if ((store = store_path(&a)) == NULL)
		return cli_usage_error("mirror",
		                       "--store DIR is required (no HOME "
		                       "for the default beside oc-mirror's "
		                       "cache)");
	if (al_str_startswith(dest, FILE_PFX))
		code = mirror_to_disk(&a, store, dest);
	else if (a.from != NULL)
		code = disk_to_mirror(&a, store, dest, insecure);
	else
		code = mirror_to_mirror(&a, store, dest, insecure);
	free(store);
	return code;
}
