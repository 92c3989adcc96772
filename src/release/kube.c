/* kube.c: minimal Kubernetes API client: kubeconfig and in-cluster config,
 * discovery cache, server-side apply, get, list, create, replace, retries. */
#define _GNU_SOURCE /* memfd_create */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "airlock/kube.h"
#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "json_int.h"
#include "kube_int.h"
#include "airlock/log.h"
#include "yaml_int.h"
#include "error_int.h"

#define KUBE_CONFIG_MAX (4 * 1024 * 1024)
#define KUBE_TOKEN_MAX (64 * 1024)
#define KUBE_PEM_MAX (1024 * 1024)
#define KUBE_RESP_MAX (64 * 1024 * 1024)
#define KUBE_NAME_MAX 253
#define KUBE_MSG_MAX 300
#define KUBE_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
#define KUBE_TMP_FILES 3
#define KUBE_DEFAULT_RETRIES 4
#define KUBE_DEFAULT_BACKOFF_BASE_MS 250
#define KUBE_DEFAULT_BACKOFF_MAX_MS 10000

/* One cached discovery document: the resources of a group-version. */
typedef struct gv_entry {
	char *gv;
	al_kube_resource *res;
	size_t n;
} gv_entry;

struct al_kube {
	char *server;   /* no trailing '/' */
	char *auth_hdr; /* "Authorization: Bearer ..." or NULL; never logged */
	char *token_file;          /* re-read on a 401 (rotated tokens) */
	pthread_mutex_t auth_lock; /* guards auth_hdr */
	char *namespace;
	char *field_manager;
	/* settings for the pooled http clients; strings below are owned */
	al_http_opts hopts;
	char *ca_file;
	char *cert_file;
	char *key_file;
	char *proxy;
	char *no_proxy;
	char *user_agent;
	char *tmp[KUBE_TMP_FILES]; /* private files written from *-data */
	int tmpfd[KUBE_TMP_FILES]; /* >= 0: tmp[i] is /proc/self/fd/<fd> of a
	                              memory file, closed (not unlinked) */
	pthread_mutex_t pool_lock;
	al_http **idle;
	size_t nidle;
	size_t capidle;
	pthread_mutex_t disc_lock;
	gv_entry *gvs;
	size_t ngvs;
	unsigned max_retries; /* without a deadline */
	uint64_t backoff_base_ms;
	uint64_t backoff_max_ms;
};

/* What a kubeconfig (or the in-cluster config) says. */
typedef struct kcfg {
	char *server;
	char *token;
	char *token_file; /* where token came from, if a file */
	char *namespace;
	char *ca_file;
	char *cert_file;
	char *key_file;
	al_buf ca_data;
	al_buf cert_data;
	al_buf key_data;
	int insecure;
} kcfg;

/* Wipe and free a string holding a credential. */
static void free_secret(char *s)
{
	if (s != NULL) {
		OPENSSL_cleanse(s, strlen(s));
		free(s);
	}
}

static void kcfg_clear(kcfg *c)
{
	free(c->server);
	free_secret(c->token);
	free(c->namespace);
	free(c->token_file);
	free(c->ca_file);
	free(c->cert_file);
	free(c->key_file);
	al_buf_free(&c->ca_data);
	al_buf_free(&c->cert_data);
	if (c->key_data.ptr != NULL)
		OPENSSL_cleanse(c->key_data.ptr, c->key_data.len);
	al_buf_free(&c->key_data);
	memset(c, 0, sizeof(*c));
}

void al_kube_resource_clear(al_kube_resource *r)
{
	if (r == NULL)
		return;
	free(r->group_version);
	free(r->kind);
	free(r->plural);
	memset(r, 0, sizeof(*r));
}

/* Read a token file: bounded, surrounding whitespace removed, only
 * printable ASCII inside (it goes into a header). */
static int read_token(char **out, const char *path)
{
	al_buf b = AL_BUF_INIT(KUBE_TOKEN_MAX);
	size_t start = 0, end, i;
	char *tok = NULL;
	int rc;

	if ((rc = al_fs_read_file(path, &b)) < 0)
		goto out;
	end = b.len;
	while (start < end && isspace(b.ptr[start]))
		start++;
	while (end > start && isspace(b.ptr[end - 1]))
		end--;
	for (i = start; i < end; i++) {
		if (b.ptr[i] < 0x21 || b.ptr[i] > 0x7e) {
			rc = al_error_set(AL_EPARSE,
			                  "token file '%s' holds a character "
			                  "not allowed in a token",
			                  path);
			goto out;
		}
	}
	if (end == start) {
		rc = al_error_set(AL_EPARSE, "token file '%s' is empty", path);
		goto out;
	}
	tok = al_strndup((const char *)b.ptr + start, end - start);
	if (tok == NULL) {
		rc =
		    al_error_set(AL_ENOMEM, "out of memory reading '%s'", path);
		goto out;
	}
	*out = tok;
	rc = 0;
out:
	if (b.ptr != NULL)
		OPENSSL_cleanse(b.ptr, b.len);
	al_buf_free(&b);
	return rc;
}

static int check_token(const char *tok, const char *where)
{
	const char *p;

	if (*tok == '\0')
		return al_error_set(AL_EPARSE, "empty token in '%s'", where);
	for (p = tok; *p != '\0'; p++)
		if ((unsigned char)*p < 0x21 || (unsigned char)*p > 0x7e)
			return al_error_set(AL_EPARSE,
			                    "token in '%s' holds a character "
			                    "not allowed in a token",
			                    where);
	return 0;
}

/* path relative to the kubeconfig's directory, as kubectl resolves it. */
static char *resolve_path(const char *dir, const char *p)
{
	if (p[0] == '/' || dir == NULL)
		return al_strdup(p);
	return al_path_join(dir, p);
}

/* The JSON object named name in a kubeconfig list ("clusters",...). */
static const json_t *find_named(const json_t *root, const char *list,
                                const char *name, const char *member)
{
	const json_t *arr = json_object_get(root, list), *it;
	size_t i;

	if (!json_is_array(arr))
		return NULL;
	json_array_foreach(arr, i, it)
	{
		const char *n = al_json_str(it, "name");

		if (n != NULL && strcmp(n, name) == 0) {
			const json_t *m = json_object_get(it, member);

			return json_is_object(m) ? m : NULL;
		}
	}
	return NULL;
}

/* A string member that must be a string when present: 0 (value or NULL)
 * or AL_EPARSE. */
static int opt_str(const char **out, const json_t *obj, const char *key,
                   const char *file)
{
	const json_t *v = json_object_get(obj, key);

	*out = NULL;
	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return al_error_set(AL_EPARSE, "'%s': '%s' must be a string",
		                    file, key);
	*out = json_string_value(v);
	return 0;
}

static int dup_into(char **dst, const char *s)
{
	if (s == NULL)
		return 0;
	*dst = al_strdup(s);
	if (*dst == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	return 0;
}

static int decode_data(al_buf *out, const char *s, const char *key,
                       const char *file)
{
	int rc = al_base64_decode(out, s, strlen(s));

	if (rc < 0)
		return al_error_set(rc == AL_ELIMIT ? AL_ELIMIT : AL_EPARSE,
		                    "'%s': '%s' is not valid base64 "
		                    "(or too large)",
		                    file, key);
	if (out->len == 0)
		return al_error_set(AL_EPARSE, "'%s': '%s' is empty", file,
		                    key);
	return 0;
}

/* The kubeconfig at path as one JSON object (*root, the caller's). */
static int kubeconfig_read(json_t **root, const char *path)
{
	al_buf raw = AL_BUF_INIT(KUBE_CONFIG_MAX);
	al_yaml_node **docs = NULL;
	size_t ndocs = 0;
	int rc;

	if ((rc = al_fs_read_file(path, &raw)) < 0) {
		if (rc == AL_ENOTFOUND)
			rc = al_error_set(AL_ENOTFOUND,
			                  "kubeconfig '%s' not found", path);
		goto out;
	}
	if ((rc = al_yaml_load(&docs, &ndocs, raw.ptr, raw.len, path)) < 0)
		goto out;
	if (ndocs != 1 || docs[0]->type != AL_YAML_MAP) {
		rc = al_error_set(
		    AL_EPARSE, "'%s': a kubeconfig is one YAML mapping", path);
		goto out;
	}
	if ((rc = al_yaml_to_json(root, docs[0])) < 0)
		rc = al_error_wrap(rc, "'%s': ", path);
out:
	al_yaml_docs_free(docs, ndocs);
	al_buf_free(&raw);
	return rc;
}

/* The context (NULL or empty: the current one) of a kubeconfig: its
 * namespace into c, its cluster and user objects (*user NULL when it names
 * none) and their names, borrowed from root. */
static int kubeconfig_context(kcfg *c, const json_t **cluster,
                              const json_t **user, const char **cluster_name,
                              const char **user_name, const json_t *root,
                              const char *context, const char *path)
{
	const char *ctx_name = context, *ns;
	const json_t *ctx;
	int rc;

	*user = NULL;
	if (ctx_name == NULL || *ctx_name == '\0')
		ctx_name = al_json_str(root, "current-context");
	if (ctx_name == NULL || *ctx_name == '\0')
		return al_error_set(AL_ENOTFOUND,
		                    "'%s': no current-context and no context "
		                    "given",
		                    path);
	ctx = find_named(root, "contexts", ctx_name, "context");
	if (ctx == NULL)
		return al_error_set(AL_ENOTFOUND, "'%s': no context '%s'", path,
		                    ctx_name);
	if ((rc = opt_str(cluster_name, ctx, "cluster", path)) < 0 ||
	    (rc = opt_str(user_name, ctx, "user", path)) < 0 ||
	    (rc = opt_str(&ns, ctx, "namespace", path)) < 0)
		return rc;
	if (ns != NULL && *ns != '\0' && (rc = dup_into(&c->namespace, ns)) < 0)
		return rc;
	if (*cluster_name == NULL ||
	    (*cluster = find_named(root, "clusters", *cluster_name,
	                           "cluster")) == NULL)
		return al_error_set(AL_EPARSE,
		                    "'%s': context '%s' names no known cluster",
		                    path, ctx_name);
	if (*user_name != NULL && **user_name != '\0') {
		*user = find_named(root, "users", *user_name, "user");
		if (*user == NULL)
			return al_error_set(AL_EPARSE,
			                    "'%s': context '%s' names unknown "
			                    "user '%s'",
			                    path, ctx_name, *user_name);
	}
	return 0;
}

/* A credential given inline (data_key, base64, into *data) or as a file
 * (file_key, resolved against dir, into *file); inline wins. */
static int data_or_file(al_buf *data, char **file, const json_t *obj,
                        const char *data_key, const char *file_key,
                        const char *dir, const char *path)
{
	const char *s, *s2;
	int rc;

	if ((rc = opt_str(&s, obj, data_key, path)) < 0 ||
	    (rc = opt_str(&s2, obj, file_key, path)) < 0)
		return rc;
	if (s != NULL && *s != '\0')
		return decode_data(data, s, data_key, path);
	if (s2 != NULL && *s2 != '\0' &&
	    (*file = resolve_path(dir, s2)) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	return 0;
}

/* A kubeconfig cluster: server, insecure-skip-tls-verify and its CA. */
static int kubeconfig_cluster(kcfg *c, const json_t *cluster,
                              const char *cluster_name, const char *dir,
                              const char *path)
{
	const json_t *v;
	const char *s;
	int rc;

	if ((rc = opt_str(&s, cluster, "server", path)) < 0)
		return rc;
	if (s == NULL || *s == '\0')
		return al_error_set(AL_EPARSE,
		                    "'%s': cluster '%s' has no server", path,
		                    cluster_name);
	if ((rc = dup_into(&c->server, s)) < 0)
		return rc;
	v = json_object_get(cluster, "insecure-skip-tls-verify");
	if (v != NULL && !json_is_boolean(v))
		return al_error_set(AL_EPARSE,
		                    "'%s': insecure-skip-tls-verify must be "
		                    "true or false",
		                    path);
	c->insecure = json_is_true(v);
	return data_or_file(&c->ca_data, &c->ca_file, cluster,
	                    "certificate-authority-data",
	                    "certificate-authority", dir, path);
}

/* A kubeconfig user: a token (inline or a file) and a client certificate
 * with its key; exec and auth-provider plugins are refused. */
static int kubeconfig_user(kcfg *c, const json_t *user, const char *user_name,
                           const char *dir, const char *path)
{
	const char *s, *s2;
	char *tokfile = NULL;
	int rc;

	if (json_object_get(user, "exec") != NULL ||
	    json_object_get(user, "auth-provider") != NULL)
		return al_error_set(AL_EUNSUPPORTED,
		                    "'%s': user '%s' uses an exec or "
		                    "auth-provider plugin, which airlock does "
		                    "not run",
		                    path, user_name);
	if ((rc = opt_str(&s, user, "token", path)) < 0 ||
	    (rc = opt_str(&s2, user, "tokenFile", path)) < 0)
		return rc;
	if (s != NULL && *s != '\0') {
		if ((rc = check_token(s, path)) < 0 ||
		    (rc = dup_into(&c->token, s)) < 0)
			return rc;
	} else if (s2 != NULL && *s2 != '\0') {
		if ((tokfile = resolve_path(dir, s2)) == NULL)
			return al_error_set(AL_ENOMEM, "out of memory");
		if ((rc = read_token(&c->token, tokfile)) < 0) {
			free(tokfile);
			return rc;
		}
		c->token_file = tokfile;
	}
	if ((rc = data_or_file(&c->cert_data, &c->cert_file, user,
	                       "client-certificate-data", "client-certificate",
	                       dir, path)) < 0 ||
	    (rc = data_or_file(&c->key_data, &c->key_file, user,
	                       "client-key-data", "client-key", dir, path)) < 0)
		return rc;
	if ((c->cert_data.len > 0 || c->cert_file != NULL) !=
	    (c->key_data.len > 0 || c->key_file != NULL))
		return al_error_set(AL_EPARSE,
		                    "'%s': user '%s' has a client certificate "
		                    "without a key or a key without a "
		                    "certificate",
		                    path, user_name);
	return 0;
}

/* Parse the kubeconfig at path into c, choosing context (NULL: current). */
static int load_kubeconfig(kcfg *c, const char *path, const char *context)
{
	json_t *root = NULL;
	const json_t *cluster = NULL, *user = NULL;
	const char *cluster_name = NULL, *user_name = NULL, *slash;
	char *dir = NULL;
	int rc;

	if ((rc = kubeconfig_read(&root, path)) < 0)
		goto out;
	slash = strrchr(path, '/');
	if (slash != NULL &&
	    (dir = al_strndup(path, (size_t)(slash - path) + 1)) == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = kubeconfig_context(c, &cluster, &user, &cluster_name,
	                             &user_name, root, context, path)) < 0 ||
	    (rc = kubeconfig_cluster(c, cluster, cluster_name, dir, path)) < 0)
		goto out;
	if (user != NULL)
		rc = kubeconfig_user(c, user, user_name, dir, path);
out:
	free(dir);
	json_decref(root);
	return rc;
}

/* The in-cluster configuration: AL_ENOTFOUND when not in a pod.
 * $AIRLOCK_KUBE_SA_DIR replaces the service account directory (tests). */
static int load_incluster(kcfg *c)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	const char *dir = getenv("AIRLOCK_KUBE_SA_DIR");
	char *p = NULL;
	al_buf ns = AL_BUF_INIT(KUBE_NAME_MAX + 16);
	int rc;

	if (dir == NULL || *dir == '\0')
		dir = KUBE_SA_DIR;
	if (host == NULL || *host == '\0' || port == NULL || *port == '\0')
		return al_error_set(AL_ENOTFOUND,
		                    "no Kubernetes configuration found "
		                    "(no kubeconfig, not in a cluster)");
	if (strchr(host, ':') != NULL)
		c->server = al_sprintf("https://[%s]:%s", host, port);
	else
		c->server = al_sprintf("https://%s:%s", host, port);
	if (c->server == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	if ((p = al_path_join(dir, "token")) == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = read_token(&c->token, p)) < 0)
		goto out;
	c->token_file = p;
	p = NULL;
	if ((p = al_path_join(dir, "ca.crt")) == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	if (al_fs_exists(p) == 1) {
		c->ca_file = p;
		p = NULL;
	}
	free(p);
	if ((p = al_path_join(dir, "namespace")) == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	if (al_fs_read_file(p, &ns) == 0) {
		size_t n = ns.len;

		while (n > 0 && isspace(ns.ptr[n - 1]))
			n--;
		if (n > 0 && (c->namespace = al_strndup((const char *)ns.ptr,
		                                        n)) == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
	}
	al_error_clear();
	rc = 0;
out:
	free(p);
	al_buf_free(&ns);
	return rc;
}

/* Where the configuration comes from when opts->kubeconfig is NULL. */
static int load_default(kcfg *c, const char *context)
{
	const char *env = getenv("KUBECONFIG"), *home = getenv("HOME");
	char *first = NULL, *p = NULL;
	int rc;

	if (env != NULL && *env != '\0') {
		const char *colon = strchr(env, ':');

		first = colon != NULL ? al_strndup(env, (size_t)(colon - env))
		                      : al_strdup(env);
		if (first == NULL)
			return al_error_set(AL_ENOMEM, "out of memory");
		if (*first != '\0') {
			rc = load_kubeconfig(c, first, context);
			free(first);
			return rc;
		}
		free(first);
	}
	if (home != NULL && *home != '\0') {
		p = al_sprintf("%s/.kube/config", home);
		if (p == NULL)
			return al_error_set(AL_ENOMEM, "out of memory");
		if (al_fs_exists(p) == 1) {
			rc = load_kubeconfig(c, p, context);
			free(p);
			return rc;
		}
		free(p);
	}
	return load_incluster(c);
}

#define KUBE_TMP_PREFIX "airlock-kube-"

static const char *tmp_dir(void)
{
	const char *tmpdir = getenv("TMPDIR");

	return tmpdir == NULL || *tmpdir == '\0' ? "/tmp" : tmpdir;
}

static int write_all(int fd, const al_buf *data, const char *path)
{
	size_t off = 0;

	while (off < data->len) {
		ssize_t w = write(fd, data->ptr + off, data->len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return al_error_errno(errno, "cannot write '%s'", path);
		off += (size_t)w;
	}
	return 0;
}

/*
 * Remove private files that a killed process left behind: named
 * "airlock-kube-<pid>-XXXXXX" in $TMPDIR, owned by us, regular, and
 * whose <pid> no longer runs. Best effort: errors are ignored.
 */
static void clean_stale_private(void)
{
	const char *dir = tmp_dir();
	DIR *d = opendir(dir);
	struct dirent *e;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		const char *p = e->d_name + strlen(KUBE_TMP_PREFIX);
		char *end = NULL, path[4096];
		struct stat st;
		long pid;
		int n;

		if (strncmp(e->d_name, KUBE_TMP_PREFIX,
		            strlen(KUBE_TMP_PREFIX)) != 0 ||
		    !isdigit((unsigned char)*p))
			continue;
		errno = 0;
		pid = strtol(p, &end, 10);
		if (errno != 0 || end == p || *end != '-' || pid <= 0 ||
		    (pid_t)pid == getpid())
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		n = snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (n < 0 || (size_t)n >= sizeof(path))
			continue;
		if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
		    st.st_uid != getuid())
			continue;
		if (unlink(path) == 0)
			al_log_debug("kube: removed '%s' left by process %ld",
			             path, pid);
	}
	closedir(d);
}

/*
 * Hold data (a CA, certificate or key from a kubeconfig's *-data) where
 * libcurl can read it by name. First choice: an anonymous memory file
 * (memfd_create) read through /proc/self/fd/<fd>: it has no name in any
 * directory, so nothing is left behind however the process ends (kill -9
 * included), and *fd receives it. Else (no memfd or no /proc, or
 * $AIRLOCK_KUBE_NO_MEMFD set, for tests): a private file (0600, mkstemp)
 * "airlock-kube-<pid>-XXXXXX" under $TMPDIR, *fd = -1; al_kube_free
 * removes it, and every client that holds data credentials first removes
 * such files whose process is gone.
 */
static int write_private(char **out, int *fd_out, const al_buf *data,
                         const char *what)
{
	const char *tmpdir = tmp_dir(),
	           *nomemfd = getenv("AIRLOCK_KUBE_NO_MEMFD");
	char *path = NULL;
	int fd = -1, rc = 0;

	*fd_out = -1;
	clean_stale_private();
#ifdef MFD_CLOEXEC
	if (nomemfd == NULL || *nomemfd == '\0')
		fd = memfd_create("airlock-kube", MFD_CLOEXEC);
#endif
	if (fd >= 0) {
		path = al_sprintf("/proc/self/fd/%d", fd);
		if (path == NULL) {
			close(fd);
			return al_error_set(AL_ENOMEM, "out of memory");
		}
		if ((rc = write_all(fd, data, what)) == 0 &&
		    access(path, R_OK) == 0) {
			*out = path;
			*fd_out = fd;
			return 0;
		}
		/* no /proc: fall back to a named file */
		al_error_clear();
		close(fd);
		free(path);
		path = NULL;
	}
	path = al_sprintf("%s/" KUBE_TMP_PREFIX "%ld-XXXXXX", tmpdir,
	                  (long)getpid());
	if (path == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	fd = mkstemp(path);
	if (fd < 0) {
		rc = al_error_errno(errno,
		                    "cannot create a private file for "
		                    "the %s in '%s'",
		                    what, tmpdir);
		free(path);
		return rc;
	}
	rc = write_all(fd, data, path);
	if (close(fd) != 0 && rc == 0)
		rc = al_error_errno(errno, "cannot write '%s'", path);
	if (rc < 0) {
		unlink(path);
		free(path);
		return rc;
	}
	*out = path;
	return 0;
}

/*
 * *out becomes the path of a credential given as data (held by
 * write_private in k->tmp[*ntmp] / k->tmpfd[*ntmp], counted in *ntmp so
 * it goes with the client) or as a file name; nothing when neither is
 * given.
 */
static int credential_file(al_kube *k, char **out, size_t *ntmp,
                           const al_buf *data, const char *file,
                           const char *what)
{
	int rc;

	if (data->len > 0) {
		if ((rc = write_private(&k->tmp[*ntmp], &k->tmpfd[*ntmp], data,
		                        what)) < 0)
			return rc;
		file = k->tmp[*ntmp];
		(*ntmp)++;
	}
	if (file != NULL && (*out = al_strdup(file)) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	return 0;
}

static int valid_server(const char *s)
{
	return al_str_startswith(s, "https://") ||
	       al_str_startswith(s, "http://");
}

/* A new, empty client: no temporary files open, its three locks made. */
static int kube_alloc(al_kube **out)
{
	al_kube *k = calloc(1, sizeof(*k));
	size_t n;

	*out = NULL;
	if (k == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	for (n = 0; n < KUBE_TMP_FILES; n++)
		k->tmpfd[n] = -1;
	if (pthread_mutex_init(&k->pool_lock, NULL) != 0) {
		free(k);
		return al_error_set(AL_ENOMEM, "cannot create a mutex");
	}
	if (pthread_mutex_init(&k->disc_lock, NULL) != 0) {
		pthread_mutex_destroy(&k->pool_lock);
		free(k);
		return al_error_set(AL_ENOMEM, "cannot create a mutex");
	}
	if (pthread_mutex_init(&k->auth_lock, NULL) != 0) {
		pthread_mutex_destroy(&k->pool_lock);
		pthread_mutex_destroy(&k->disc_lock);
		free(k);
		return al_error_set(AL_ENOMEM, "cannot create a mutex");
	}
	*out = k;
	return 0;
}

/* What the configuration c and opts give k: server (without trailing
 * slashes), namespace, field manager, the bearer token (over TLS only, as
 * kubectl's clientcmd), credential files (data forms become private files
 * that live as long as k), proxy and user agent. */
static int kube_take_config(al_kube *k, kcfg *c, const char *server,
                            const al_kube_opts *opts)
{
	size_t n, ntmp = 0;
	int rc;

	k->server = al_strdup(server);
	k->namespace =
	    al_strdup(c->namespace != NULL ? c->namespace : "default");
	k->field_manager = al_strdup(
	    opts->field_manager != NULL ? opts->field_manager : "airlock");
	if (k->server == NULL || k->namespace == NULL ||
	    k->field_manager == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	n = strlen(k->server);
	while (n > 0 && k->server[n - 1] == '/')
		k->server[--n] = '\0';
	if (c->token != NULL && !al_str_startswith(k->server, "https://")) {
		al_log_warn("kube: not sending the bearer token to %s: the "
		            "server is not https",
		            k->server);
	} else if (c->token != NULL) {
		k->auth_hdr = al_sprintf("Authorization: Bearer %s", c->token);
		if (k->auth_hdr == NULL ||
		    (c->token_file != NULL &&
		     (k->token_file = al_strdup(c->token_file)) == NULL))
			return al_error_set(AL_ENOMEM, "out of memory");
	}
	if ((rc = credential_file(k, &k->ca_file, &ntmp, &c->ca_data,
	                          c->ca_file, "cluster CA")) < 0 ||
	    (rc = credential_file(k, &k->cert_file, &ntmp, &c->cert_data,
	                          c->cert_file, "client certificate")) < 0 ||
	    (rc = credential_file(k, &k->key_file, &ntmp, &c->key_data,
	                          c->key_file, "client key")) < 0)
		return rc;
	if ((opts->http.proxy != NULL &&
	     (k->proxy = al_strdup(opts->http.proxy)) == NULL) ||
	    (opts->http.no_proxy != NULL &&
	     (k->no_proxy = al_strdup(opts->http.no_proxy)) == NULL) ||
	    (opts->http.user_agent != NULL &&
	     (k->user_agent = al_strdup(opts->http.user_agent)) == NULL) ||
	    (c->ca_file != NULL && k->ca_file == NULL) ||
	    (c->cert_file != NULL && k->cert_file == NULL) ||
	    (c->key_file != NULL && k->key_file == NULL) ||
	    (c->ca_data.len > 0 && k->ca_file == NULL) ||
	    (c->cert_data.len > 0 && k->cert_file == NULL) ||
	    (c->key_data.len > 0 && k->key_file == NULL))
		return al_error_set(AL_ENOMEM, "out of memory");
	return 0;
}

/* k's HTTP options: the caller's, with k's own files, TLS choice and
 * retries (this module retries until the deadline, not the http client). */
static void kube_http_opts(al_kube *k, const al_kube_opts *opts, int insecure)
{
	k->hopts = opts->http;
	k->hopts.ca_file = k->ca_file;
	k->hopts.client_cert = k->cert_file;
	k->hopts.client_key = k->key_file;
	k->hopts.proxy = k->proxy;
	k->hopts.no_proxy = k->no_proxy;
	k->hopts.user_agent = k->user_agent;
	k->hopts.insecure_hosts = NULL;
	k->hopts.tls_verify_off =
	    opts->insecure || insecure || opts->http.tls_verify_off;
	k->hopts.max_retries = AL_HTTP_NO_RETRY;
	if (opts->http.max_retries == AL_HTTP_NO_RETRY)
		k->max_retries = 0;
	else
		k->max_retries = opts->http.max_retries != 0
		                     ? opts->http.max_retries
		                     : KUBE_DEFAULT_RETRIES;
	k->backoff_base_ms = opts->http.backoff_base_ms != 0
	                         ? opts->http.backoff_base_ms
	                         : KUBE_DEFAULT_BACKOFF_BASE_MS;
	k->backoff_max_ms = opts->http.backoff_max_ms != 0
	                        ? opts->http.backoff_max_ms
	                        : KUBE_DEFAULT_BACKOFF_MAX_MS;
}

int al_kube_new(al_kube **out, const al_kube_opts *opts)
{
	static const al_kube_opts defaults = AL_KUBE_OPTS_INIT;
	kcfg c;
	al_kube *k = NULL;
	const char *server;
	int rc;

	if (opts != NULL &&
	    (rc = al_opts_version_check("al_kube_opts", opts->version,
	                                AL_KUBE_OPTS_VERSION)) < 0)
		return rc;
	memset(&c, 0, sizeof(c));
	al_buf_init(&c.ca_data, KUBE_PEM_MAX);
	al_buf_init(&c.cert_data, KUBE_PEM_MAX);
	al_buf_init(&c.key_data, KUBE_PEM_MAX);
	if (out == NULL)
		return al_error_set(AL_EINVAL, "al_kube_new: no output");
	if (opts == NULL)
		opts = &defaults;
	if (opts->kubeconfig != NULL)
		rc = load_kubeconfig(&c, opts->kubeconfig, opts->context);
	else
		rc = load_default(&c, opts->context);
	/* Like kubectl --server: a server alone is enough, without
	 * credentials, when no configuration exists at all. */
	if (rc == AL_ENOTFOUND && opts->kubeconfig == NULL &&
	    opts->server != NULL) {
		kcfg_clear(&c);
		al_buf_init(&c.ca_data, KUBE_PEM_MAX);
		al_buf_init(&c.cert_data, KUBE_PEM_MAX);
		al_buf_init(&c.key_data, KUBE_PEM_MAX);
		al_error_clear();
		rc = 0;
	}
	if (rc < 0)
		goto out;
	server = opts->server != NULL ? opts->server : c.server;
	if (!valid_server(server)) {
		rc = al_error_set(
		    AL_EPARSE, "API server URL '%s' is not http(s)://", server);
		goto out;
	}
	if ((rc = kube_alloc(&k)) < 0 ||
	    (rc = kube_take_config(k, &c, server, opts)) < 0)
		goto out;
	kube_http_opts(k, opts, c.insecure);
	al_log_debug("kube: server %s, namespace %s, %s", k->server,
	             k->namespace,
	             k->auth_hdr != NULL    ? "bearer token"
	             : k->cert_file != NULL ? "client certificate"
	                                    : "no credentials");
	*out = k;
	k = NULL;
	rc = 0;
out:
	al_kube_free(k);
	kcfg_clear(&c);
	return rc;
}

void al_kube_free(al_kube *k)
{
	size_t i, j;

	if (k == NULL)
		return;
	for (i = 0; i < k->nidle; i++)
		al_http_free(k->idle[i]);
	free(k->idle);
	for (i = 0; i < k->ngvs; i++) {
		for (j = 0; j < k->gvs[i].n; j++)
			al_kube_resource_clear(&k->gvs[i].res[j]);
		free(k->gvs[i].res);
		free(k->gvs[i].gv);
	}
	free(k->gvs);
	for (i = 0; i < KUBE_TMP_FILES; i++) {
		if (k->tmpfd[i] >= 0)
			close(k->tmpfd[i]);
		else if (k->tmp[i] != NULL)
			unlink(k->tmp[i]);
		free(k->tmp[i]);
	}
	free_secret(k->auth_hdr);
	free(k->token_file);
	free(k->server);
	free(k->namespace);
	free(k->field_manager);
	free(k->ca_file);
	free(k->cert_file);
	free(k->key_file);
	free(k->proxy);
	free(k->no_proxy);
	free(k->user_agent);
	pthread_mutex_destroy(&k->pool_lock);
	pthread_mutex_destroy(&k->disc_lock);
	pthread_mutex_destroy(&k->auth_lock);
	free(k);
}

const char *al_kube_field_manager(const al_kube *k)
{
	return k != NULL ? k->field_manager : NULL;
}

const char *al_kube_server(const al_kube *k)
{
	return k != NULL ? k->server : NULL;
}

const char *al_kube_namespace(const al_kube *k)
{
	return k != NULL ? k->namespace : NULL;
}

/* An http client from the pool, or a new one. */
static int pool_get(al_kube *k, al_http **out)
{
	al_http *h = NULL;

	pthread_mutex_lock(&k->pool_lock);
	if (k->nidle > 0)
		h = k->idle[--k->nidle];
	pthread_mutex_unlock(&k->pool_lock);
	if (h != NULL) {
		*out = h;
		return 0;
	}
	return al_http_new(out, &k->hopts);
}

static void pool_put(al_kube *k, al_http *h)
{
	pthread_mutex_lock(&k->pool_lock);
	if (k->nidle == k->capidle) {
		size_t cap = k->capidle != 0 ? k->capidle * 2 : 4;
		al_http **p = realloc(k->idle, cap * sizeof(*p));

		if (p == NULL) {
			pthread_mutex_unlock(&k->pool_lock);
			al_http_free(h);
			return;
		}
		k->idle = p;
		k->capidle = cap;
	}
	k->idle[k->nidle++] = h;
	pthread_mutex_unlock(&k->pool_lock);
}

/* Percent-encode s for a query value (RFC 3986 unreserved kept). */
static int put_escaped(al_buf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	int rc = 0;

	for (; *s != '\0' && rc == 0; s++) {
		unsigned char ch = (unsigned char)*s;

		if (isalnum(ch) || ch == '-' || ch == '.' || ch == '_' ||
		    ch == '~') {
			rc = al_buf_append(b, s, 1);
		} else {
			char e[3] = {'%', hex[ch >> 4], hex[ch & 15]};

			rc = al_buf_append(b, e, 3);
		}
	}
	return rc;
}

/* A name or namespace that is safe as one URL path segment. */
static int check_segment(const char *s, const char *what)
{
	size_t n = s != NULL ? strlen(s) : 0, i;

	if (n == 0 || n > KUBE_NAME_MAX || strcmp(s, ".") == 0 ||
	    strcmp(s, "..") == 0)
		return al_error_set(AL_EINVAL, "invalid %s '%s'", what,
		                    s != NULL ? s : "");
	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch <= 0x20 || ch >= 0x7f || ch == '/' || ch == '%' ||
		    ch == '?' || ch == '#')
			return al_error_set(AL_EINVAL, "invalid %s '%.64s'",
			                    what, s);
	}
	return 0;
}

/* The "message" of a Status body, or a short excerpt of the body. */
static void status_message(const al_http_resp *resp, char *msg, size_t cap)
{
	json_t *j = NULL;
	const char *m = NULL;
	size_t i;

	msg[0] = '\0';
	if (resp->error_body.len == 0)
		return;
	j = json_loadb((const char *)resp->error_body.ptr, resp->error_body.len,
	               0, NULL);
	m = al_json_str(j, "message");
	/* Truncation below is intended: msg is message text only. */
	if (m != NULL)
		snprintf(msg, cap, "%s", m);
	else
		snprintf(msg, cap, "%.*s",
		         (int)(resp->error_body.len < cap ? resp->error_body.len
		                                          : cap - 1),
		         (const char *)resp->error_body.ptr);
	json_decref(j);
	/* keep the message on one printable line */
	for (i = 0; msg[i] != '\0'; i++)
		if ((unsigned char)msg[i] < 0x20 || msg[i] == 0x7f)
			msg[i] = ' ';
}

/* A private copy of the Authorization header (NULL when none). */
static int auth_copy(al_kube *k, char **out)
{
	int rc = 0;

	*out = NULL;
	pthread_mutex_lock(&k->auth_lock);
	if (k->auth_hdr != NULL && (*out = al_strdup(k->auth_hdr)) == NULL)
		rc = al_error_set(AL_ENOMEM, "out of memory");
	pthread_mutex_unlock(&k->auth_lock);
	return rc;
}

/* Re-read the token file after a 401 (service account and other
 * projected tokens rotate). 1 when the token changed (*auth replaced),
 * else 0. */
static int auth_reload(al_kube *k, char **auth)
{
	char *tok = NULL, *hdr = NULL, *mine = NULL;
	int changed = 0;

	if (read_token(&tok, k->token_file) < 0) {
		al_error_clear();
		return 0;
	}
	hdr = al_sprintf("Authorization: Bearer %s", tok);
	mine = al_strdup(hdr);
	if (hdr != NULL && mine != NULL) {
		pthread_mutex_lock(&k->auth_lock);
		if (k->auth_hdr == NULL || strcmp(k->auth_hdr, hdr) != 0) {
			free_secret(k->auth_hdr);
			k->auth_hdr = hdr;
			hdr = NULL;
			changed = 1;
		}
		pthread_mutex_unlock(&k->auth_lock);
	}
	if (changed ||
	    (*auth != NULL && mine != NULL && strcmp(*auth, mine) != 0)) {
		/* another thread may have reloaded it first */
		free_secret(*auth);
		*auth = mine;
		mine = NULL;
		changed = 1;
	}
	free_secret(mine);
	free_secret(hdr);
	free_secret(tok);
	return changed;
}

static int retryable_status(long st)
{
	return st == 409 || st == 429 || (st >= 500 && st <= 599);
}

#define KUBE_CALL_CONFLICT_FINAL 1 /* a 409 is an answer, not retried */

/* The headers of one API call into hdrs (at least 6 slots, NULL ended):
 * the Authorization header (auth, may be NULL), Accept, the test clock
 * (only when the clock is virtual: the test suite's simulated cluster
 * runs its timers on it, docs/testing.md) and the content type. The
 * texts live in the caller's clock_hdr and ctype_hdr. */
static int call_headers(const char **hdrs, const char *auth, const char *ctype,
                        char (*clock_hdr)[64], char (*ctype_hdr)[128])
{
	size_t nh = 0;

	if (auth != NULL)
		hdrs[nh++] = auth;
	hdrs[nh++] = "Accept: application/json";
	if (al_clock_is_virtual()) {
		int w = snprintf(*clock_hdr, sizeof(*clock_hdr),
		                 "X-Airlock-Test-Clock: %llu",
		                 (unsigned long long)al_clock_now_ms());

		if (w > 0 && (size_t)w < sizeof(*clock_hdr))
			hdrs[nh++] = *clock_hdr;
	}
	if (ctype != NULL) {
		int w = snprintf(*ctype_hdr, sizeof(*ctype_hdr),
		                 "Content-Type: %s", ctype);

		if (w < 0 || (size_t)w >= sizeof(*ctype_hdr))
			return al_error_set(AL_EINVAL, "content type too long");
		hdrs[nh++] = *ctype_hdr;
	}
	hdrs[nh] = NULL;
	return 0;
}

/* An answer that is not 2xx: the error it is (401, 403, 404, a final 409,
 * a status not retried), or 0 when the call is to be retried, with last
 * (cap last_cap) saying why and *wait_ms capped by Retry-After. */
static int call_status(const al_kube *k, const al_http_resp *resp,
                       const char *method, const char *path, unsigned flags,
                       char *last, size_t last_cap, uint64_t *wait_ms)
{
	char msg[KUBE_MSG_MAX + 1];
	const char *ra;

	status_message(resp, msg, sizeof(msg));
	if (resp->status == 401 || resp->status == 403)
		return al_error_set(AL_EAUTH, "%s '%s': %ld %s", method, path,
		                    resp->status,
		                    msg[0] != '\0'        ? msg
		                    : resp->status == 401 ? "Unauthorized"
		                                          : "Forbidden");
	if (resp->status == 404)
		return al_error_set(AL_ENOTFOUND, "%s '%s': 404 %s", method,
		                    path, msg[0] != '\0' ? msg : "Not Found");
	if (resp->status == 409 && (flags & KUBE_CALL_CONFLICT_FINAL) != 0)
		return al_error_set(AL_EEXIST, "%s '%s': 409 %s", method, path,
		                    msg[0] != '\0' ? msg : "Conflict");
	/* last: message text, truncation intended */
	snprintf(last, last_cap, "%ld %s", resp->status, msg);
	if (!retryable_status(resp->status))
		return al_error_set(AL_EPROTO, "%s '%s': %s", method, path,
		                    last);
	ra = al_http_resp_header(resp, "Retry-After");
	if (ra != NULL && al_http_parse_retry_after(ra, wait_ms) == 0 &&
	    *wait_ms > k->backoff_max_ms)
		*wait_ms = k->backoff_max_ms;
	al_error_clear();
	return 0;
}

/* A request that failed with rc before an answer: rc when it is final (not
 * a network error or a timeout, the deadline passed, a TLS verification
 * failure, which does not heal itself), 0 when it is to be retried, with
 * last (cap last_cap) saying why. */
static int call_failed(int rc, al_deadline dl, char *last, size_t last_cap)
{
	const char *em = al_error_message();

	if (rc != AL_ENET && rc != AL_ETIMEOUT)
		return rc;
	if (rc == AL_ETIMEOUT && al_deadline_expired(dl))
		return rc;
	if (rc == AL_ENET &&
	    (strstr(em, "SSL") != NULL || strstr(em, "TLS") != NULL ||
	     strstr(em, "certificate") != NULL))
		return rc;
	snprintf(last, last_cap, "%s", em);
	return 0;
}

/* Before the next attempt: an error when the retries (without a deadline)
 * or the deadline are used up or the wait is cancelled, else 0 after
 * waiting wait_ms. */
static int call_wait(const al_kube *k, const char *method, const char *path,
                     al_deadline dl, unsigned attempt, uint64_t wait_ms,
                     const char *last, int last_code)
{
	int rc;

	if (dl.end_ms == 0 && attempt >= k->max_retries)
		return al_error_set(last_code,
		                    "%s '%s': %s (after %u "
		                    "attempts)",
		                    method, path, last, attempt + 1);
	if (dl.end_ms != 0 && wait_ms >= al_deadline_remaining_ms(dl))
		return al_error_set(AL_ETIMEOUT,
		                    "%s '%s': deadline reached after %u "
		                    "attempts, last: %s",
		                    method, path, attempt + 1, last);
	al_log_debug("kube: %s %s: %s, retrying in %llu ms", method, path, last,
	             (unsigned long long)wait_ms);
	if ((rc = al_sleep_ms(wait_ms, k->hopts.cancel)) < 0)
		return al_error_set(rc, "%s '%s': cancelled", method, path);
	return 0;
}

/*
 * One API call with retries: 409, 429, 5xx and connection errors are
 * retried with backoff (Retry-After honoured) until dl, or at most
 * k->max_retries times without a deadline. On 2xx, *out (may be NULL)
 * receives the parsed body.
 */
static int kube_call_ex(al_kube *k, const char *method, const char *path,
                        const char *ctype, const char *body, json_t **out,
                        al_deadline dl, unsigned flags)
{
	al_buf url = AL_BUF_INIT(16 * 1024);
	al_buf resp_body = AL_BUF_INIT(KUBE_RESP_MAX);
	al_http_resp resp = AL_HTTP_RESP_INIT;
	al_http *h = NULL;
	const char *hdrs[6];
	char ctype_hdr[128];
	char clock_hdr[64];
	char last[KUBE_MSG_MAX + 64];
	int last_code = 0;
	unsigned attempt;
	json_t *j = NULL;
	char *auth = NULL;
	int reloaded = 0;
	int rc;

	last[0] = '\0';
	if ((rc = auth_copy(k, &auth)) < 0)
		goto out;
	if ((rc = al_buf_puts(&url, k->server)) < 0 ||
	    (rc = al_buf_puts(&url, path)) < 0) {
		rc = al_error_set(rc, "URL too long for '%.128s'", path);
		goto out;
	}
	if ((rc = call_headers(hdrs, auth, ctype, &clock_hdr, &ctype_hdr)) < 0)
		goto out;
	for (attempt = 0;; attempt++) {
		al_http_req req;
		uint64_t wait_ms;

		memset(&req, 0, sizeof(req));
		req.method = method;
		req.url = al_buf_cstr(&url);
		req.headers = hdrs;
		if (body != NULL) {
			req.body = (const uint8_t *)body;
			req.body_len = strlen(body);
		}
		req.body_out = &resp_body;
		req.deadline = dl;
		al_buf_reset(&resp_body);
		if ((rc = pool_get(k, &h)) < 0)
			goto out;
		rc = al_http_do(h, &req, &resp);
		pool_put(k, h);
		h = NULL;
		wait_ms = al_backoff_ms(attempt, k->backoff_base_ms,
		                        k->backoff_max_ms);
		if (rc == 0 && resp.status >= 200 && resp.status <= 299) {
			if (out != NULL) {
				if ((rc = al_json_parse(&j, resp_body.ptr,
				                        resp_body.len, path)) <
				    0)
					goto out;
				*out = j;
				j = NULL;
			}
			rc = 0;
			goto out;
		}
		if (rc == 0 && resp.status == 401 && !reloaded &&
		    k->token_file != NULL) {
			reloaded = 1;
			if (auth_reload(k, &auth) == 1) {
				hdrs[0] = auth;
				continue;
			}
		}
		if (rc == 0) {
			if ((rc = call_status(k, &resp, method, path, flags,
			                      last, sizeof(last), &wait_ms)) <
			    0)
				goto out;
			last_code = AL_EPROTO;
		} else {
			last_code = rc;
			if ((rc = call_failed(rc, dl, last, sizeof(last))) < 0)
				goto out;
		}
		if ((rc = call_wait(k, method, path, dl, attempt, wait_ms, last,
		                    last_code)) < 0)
			goto out;
	}
out:
	free_secret(auth);
	json_decref(j);
	al_http_resp_clear(&resp);
	al_buf_free(&resp_body);
	al_buf_free(&url);
	return rc;
}

static int kube_call(al_kube *k, const char *method, const char *path,
                     const char *ctype, const char *body, json_t **out,
                     al_deadline dl)
{
	return kube_call_ex(k, method, path, ctype, body, out, dl, 0);
}

/* "/api/v1" or "/apis/<gv>" for a group-version. */
static int gv_prefix(al_buf *b, const char *gv)
{
	if (strchr(gv, '/') == NULL)
		return al_buf_printf(b, "/api/%s", gv);
	return al_buf_printf(b, "/apis/%s", gv);
}

static int check_gv(const char *gv)
{
	const char *p, *slash = NULL;

	if (gv == NULL || *gv == '\0')
		return al_error_set(AL_EINVAL, "empty apiVersion");
	for (p = gv; *p != '\0'; p++) {
		unsigned char ch = (unsigned char)*p;

		if (ch == '/') {
			if (slash != NULL || p == gv || p[1] == '\0')
				return al_error_set(
				    AL_EINVAL, "invalid apiVersion '%.64s'",
				    gv);
			slash = p;
		} else if (!isalnum(ch) && ch != '-' && ch != '.') {
			return al_error_set(AL_EINVAL,
			                    "invalid apiVersion '%.64s'", gv);
		}
	}
	return 0;
}

static int res_copy(al_kube_resource *dst, const al_kube_resource *src)
{
	memset(dst, 0, sizeof(*dst));
	dst->group_version = al_strdup(src->group_version);
	dst->kind = al_strdup(src->kind);
	dst->plural = al_strdup(src->plural);
	dst->namespaced = src->namespaced;
	dst->has_status = src->has_status;
	if (dst->group_version == NULL || dst->kind == NULL ||
	    dst->plural == NULL) {
		al_kube_resource_clear(dst);
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	return 0;
}

/* Look kind up in the cache: *found is 1 (copied to out), 0 (gv cached,
 * no such kind) or -1 (gv not cached). 0 or AL_ENOMEM. Caller holds
 * disc_lock. */
static int cache_lookup(al_kube *k, const char *gv, const char *kind,
                        al_kube_resource *out, int *found)
{
	size_t i, j;

	*found = -1;
	for (i = 0; i < k->ngvs; i++) {
		if (strcmp(k->gvs[i].gv, gv) != 0)
			continue;
		*found = 0;
		for (j = 0; j < k->gvs[i].n; j++) {
			if (strcmp(k->gvs[i].res[j].kind, kind) == 0) {
				*found = 1;
				return res_copy(out, &k->gvs[i].res[j]);
			}
		}
		return 0;
	}
	return 0;
}

/* Parse an APIResourceList into an entry (resources with a '/' are
 * subresources: only "<plural>/status" matters). */
static int parse_resource_list(gv_entry *e, const char *gv, const json_t *doc)
{
	const json_t *arr = json_object_get(doc, "resources"), *it, *it2;
	size_t i, i2, n = 0;
	int rc = 0;

	memset(e, 0, sizeof(*e));
	if (!json_is_array(arr))
		return al_error_set(AL_EPROTO,
		                    "discovery of '%s': no resources list", gv);
	e->gv = al_strdup(gv);
	e->res = calloc(json_array_size(arr) + 1, sizeof(*e->res));
	if (e->gv == NULL || e->res == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	json_array_foreach(arr, i, it)
	{
		const char *name = al_json_str(it, "name");
		const char *kind = al_json_str(it, "kind");
		size_t plen;
		al_kube_resource *r;

		if (name == NULL || kind == NULL || strchr(name, '/') != NULL)
			continue;
		r = &e->res[n];
		r->group_version = al_strdup(gv);
		r->kind = al_strdup(kind);
		r->plural = al_strdup(name);
		r->namespaced = json_is_true(json_object_get(it, "namespaced"));
		e->n = ++n;
		if (r->group_version == NULL || r->kind == NULL ||
		    r->plural == NULL)
			return al_error_set(AL_ENOMEM, "out of memory");
		plen = strlen(name);
		json_array_foreach(arr, i2, it2)
		{
			const char *sub = al_json_str(it2, "name");

			if (sub != NULL && strncmp(sub, name, plen) == 0 &&
			    strcmp(sub + plen, "/status") == 0)
				r->has_status = 1;
		}
	}
	return rc;
}

static void gv_entry_clear(gv_entry *e)
{
	size_t j;

	for (j = 0; j < e->n; j++)
		al_kube_resource_clear(&e->res[j]);
	free(e->res);
	free(e->gv);
	memset(e, 0, sizeof(*e));
}

/* Fetch the resource list of gv and put it into the cache (replacing an
 * older one). AL_ENOTFOUND when the server does not serve gv. */
static int refresh_gv(al_kube *k, const char *gv, al_deadline dl)
{
	al_buf path = AL_BUF_INIT(1024);
	json_t *doc = NULL;
	gv_entry e;
	size_t i;
	int rc;

	memset(&e, 0, sizeof(e));
	if ((rc = gv_prefix(&path, gv)) < 0)
		goto out;
	al_log_debug("kube: discovery of %s", gv);
	if ((rc = kube_call(k, "GET", al_buf_cstr(&path), NULL, NULL, &doc,
	                    dl)) < 0)
		goto out;
	if ((rc = parse_resource_list(&e, gv, doc)) < 0)
		goto out;
	pthread_mutex_lock(&k->disc_lock);
	for (i = 0; i < k->ngvs; i++) {
		if (strcmp(k->gvs[i].gv, gv) == 0) {
			gv_entry_clear(&k->gvs[i]);
			k->gvs[i] = e;
			memset(&e, 0, sizeof(e));
			break;
		}
	}
	if (i == k->ngvs) {
		gv_entry *p = realloc(k->gvs, (k->ngvs + 1) * sizeof(*p));

		if (p == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
		} else {
			k->gvs = p;
			k->gvs[k->ngvs++] = e;
			memset(&e, 0, sizeof(e));
		}
	}
	pthread_mutex_unlock(&k->disc_lock);
out:
	gv_entry_clear(&e);
	json_decref(doc);
	al_buf_free(&path);
	return rc;
}

int al_kube_discover(al_kube *k, const char *api_version, const char *kind,
                     al_kube_resource *out, al_deadline dl)
{
	al_kube_resource r;
	int found, rc, pass;

	if (k == NULL || out == NULL || kind == NULL || *kind == '\0')
		return al_error_set(AL_EINVAL,
		                    "al_kube_discover: bad arguments");
	if ((rc = check_gv(api_version)) < 0)
		return rc;
	memset(&r, 0, sizeof(r));
	for (pass = 0; pass < 2; pass++) {
		pthread_mutex_lock(&k->disc_lock);
		rc = cache_lookup(k, api_version, kind, &r, &found);
		pthread_mutex_unlock(&k->disc_lock);
		if (rc < 0)
			return rc;
		if (found == 1) {
			*out = r;
			return 0;
		}
		if (pass == 1)
			break;
		/* Not cached, or cached before a CRD defined the kind. */
		rc = refresh_gv(k, api_version, dl);
		if (rc == AL_ENOTFOUND)
			return al_error_set(AL_ENOTFOUND, "no kind %s in %s",
			                    kind, api_version);
		if (rc < 0)
			return rc;
	}
	return al_error_set(AL_ENOTFOUND, "no kind %s in %s", kind,
	                    api_version);
}

/* The path of a collection or object:
 * prefix[/namespaces/ns]/plural[/name][/sub] */
static int object_path(al_buf *b, const al_kube_resource *r, const char *ns,
                       const char *name, const char *sub)
{
	int rc;

	if ((rc = gv_prefix(b, r->group_version)) < 0)
		return rc;
	if (r->namespaced && ns != NULL &&
	    (rc = al_buf_printf(b, "/namespaces/%s", ns)) < 0)
		return rc;
	if ((rc = al_buf_printf(b, "/%s", r->plural)) < 0)
		return rc;
	if (name != NULL && (rc = al_buf_printf(b, "/%s", name)) < 0)
		return rc;
	if (sub != NULL && (rc = al_buf_printf(b, "/%s", sub)) < 0)
		return rc;
	return 0;
}

/* What an object to write names: its apiVersion, kind, name and namespace
 * (the client's default for a namespaced kind without one), and the
 * resource discovered for them. Clear t->r whatever is returned. */
typedef struct obj_target {
	const char *av, *kind, *name, *ns;
	al_kube_resource r;
} obj_target;

static int object_target(al_kube *k, const json_t *obj, const char *verb,
                         obj_target *t, al_deadline dl)
{
	const json_t *md;
	int rc;

	memset(t, 0, sizeof(*t));
	if (k == NULL || !json_is_object(obj))
		return al_error_set(AL_EINVAL, "%s: not a JSON object", verb);
	t->av = al_json_str(obj, "apiVersion");
	t->kind = al_json_str(obj, "kind");
	md = json_object_get(obj, "metadata");
	t->name = al_json_str(md, "name");
	t->ns = al_json_str(md, "namespace");
	if (t->av == NULL || t->kind == NULL || t->name == NULL)
		return al_error_set(AL_EINVAL,
		                    "%s: object without apiVersion, kind "
		                    "or metadata.name",
		                    verb);
	if ((rc = check_segment(t->name, "name")) < 0 ||
	    (rc = al_kube_discover(k, t->av, t->kind, &t->r, dl)) < 0)
		return rc;
	if (t->r.namespaced) {
		if (t->ns == NULL || *t->ns == '\0')
			t->ns = k->namespace;
		if ((rc = check_segment(t->ns, "namespace")) < 0)
			return rc;
	}
	return 0;
}

static int do_apply(al_kube *k, const json_t *obj, int status, json_t **result,
                    al_deadline dl)
{
	obj_target t;
	al_buf path = AL_BUF_INIT(4096);
	char *body = NULL;
	json_t *res = NULL;
	int rc;

	if ((rc = object_target(k, obj, "apply", &t, dl)) < 0)
		goto out;
	if (status && !t.r.has_status) {
		rc = al_error_set(AL_EUNSUPPORTED,
		                  "%s %s has no status subresource", t.av,
		                  t.kind);
		goto out;
	}
	if ((rc = object_path(&path, &t.r, t.ns, t.name,
	                      status ? "status" : NULL)) < 0 ||
	    (rc = al_buf_puts(&path, "?fieldManager=")) < 0 ||
	    (rc = put_escaped(&path, k->field_manager)) < 0 ||
	    (rc = al_buf_puts(&path, "&force=true")) < 0) {
		rc = al_error_set(rc, "apply: path too long for '%.64s'",
		                  t.name);
		goto out;
	}
	body = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (body == NULL) {
		rc = al_error_set(AL_ENOMEM, "apply: cannot serialise '%s'",
		                  t.name);
		goto out;
	}
	al_log_debug("kube: apply%s %s %s %s%s%s", status ? " status" : "",
	             t.av, t.kind, t.ns != NULL && t.r.namespaced ? t.ns : "",
	             t.ns != NULL && t.r.namespaced ? "/" : "", t.name);
	rc = kube_call(k, "PATCH", al_buf_cstr(&path),
	               "application/apply-patch+yaml", body,
	               result != NULL ? &res : NULL, dl);
	if (rc == 0 && result != NULL) {
		*result = res;
		res = NULL;
	}
out:
	json_decref(res);
	free(body);
	al_buf_free(&path);
	al_kube_resource_clear(&t.r);
	return rc;
}

int al_kube_apply(al_kube *k, const json_t *obj, json_t **result,
                  al_deadline dl)
{
	return do_apply(k, obj, 0, result, dl);
}

int al_kube_apply_status(al_kube *k, const json_t *obj, json_t **result,
                         al_deadline dl)
{
	return do_apply(k, obj, 1, result, dl);
}

/*
 * The REST path of one named object: the name (and, for a namespaced
 * kind, the namespace, defaulting to the client's) checked as path
 * segments, the kind resolved through discovery.
 */
static int named_object_path(al_kube *k, const char *api_version,
                             const char *kind, const char *ns, const char *name,
                             al_buf *path, al_deadline dl)
{
	al_kube_resource r;
	int rc;

	memset(&r, 0, sizeof(r));
	if ((rc = check_segment(name, "name")) < 0)
		return rc;
	if ((rc = al_kube_discover(k, api_version, kind, &r, dl)) < 0)
		goto out;
	if (r.namespaced) {
		if (ns == NULL || *ns == '\0')
			ns = k->namespace;
		if ((rc = check_segment(ns, "namespace")) < 0)
			goto out;
	}
	if ((rc = object_path(path, &r, ns, name, NULL)) < 0)
		rc = al_error_set(rc, "path too long for '%.64s'", name);
out:
	al_kube_resource_clear(&r);
	return rc;
}

int al_kube_get(al_kube *k, const char *api_version, const char *kind,
                const char *ns, const char *name, json_t **out, al_deadline dl)
{
	al_buf path = AL_BUF_INIT(4096);
	json_t *res = NULL;
	int rc;

	if (k == NULL || out == NULL)
		return al_error_set(AL_EINVAL, "al_kube_get: bad arguments");
	if ((rc = named_object_path(k, api_version, kind, ns, name, &path,
	                            dl)) < 0)
		goto out;
	if ((rc = kube_call(k, "GET", al_buf_cstr(&path), NULL, NULL, &res,
	                    dl)) < 0)
		goto out;
	*out = res;
	res = NULL;
out:
	json_decref(res);
	al_buf_free(&path);
	return rc;
}

int al_kube_delete(al_kube *k, const char *api_version, const char *kind,
                   const char *ns, const char *name, al_deadline dl)
{
	al_buf path = AL_BUF_INIT(4096);
	int rc;

	if (k == NULL)
		return al_error_set(AL_EINVAL, "al_kube_delete: no client");
	if ((rc = named_object_path(k, api_version, kind, ns, name, &path,
	                            dl)) < 0)
		goto out;
	if ((rc = al_buf_puts(&path, "?propagationPolicy=Background")) < 0) {
		rc = al_error_set(rc, "path too long for '%.64s'", name);
		goto out;
	}
	al_log_debug("kube: delete %s %s %s", api_version, kind, name);
	rc = kube_call(k, "DELETE", al_buf_cstr(&path), NULL, NULL, NULL, dl);
out:
	al_buf_free(&path);
	return rc;
}

int al_kube_list(al_kube *k, const char *api_version, const char *kind,
                 const char *ns, const char *label_selector, json_t **out,
                 al_deadline dl)
{
	al_kube_resource r;
	al_buf path = AL_BUF_INIT(16 * 1024);
	json_t *res = NULL;
	int rc;

	memset(&r, 0, sizeof(r));
	if (k == NULL || out == NULL)
		return al_error_set(AL_EINVAL, "al_kube_list: bad arguments");
	if (ns != NULL && *ns == '\0')
		ns = NULL;
	if (ns != NULL && (rc = check_segment(ns, "namespace")) < 0)
		return rc;
	if ((rc = al_kube_discover(k, api_version, kind, &r, dl)) < 0)
		goto out;
	if ((rc = object_path(&path, &r, ns, NULL, NULL)) < 0 ||
	    (label_selector != NULL && *label_selector != '\0' &&
	     ((rc = al_buf_puts(&path, "?labelSelector=")) < 0 ||
	      (rc = put_escaped(&path, label_selector)) < 0))) {
		rc = al_error_set(rc, "list: path too long for %s", kind);
		goto out;
	}
	if ((rc = kube_call(k, "GET", al_buf_cstr(&path), NULL, NULL, &res,
	                    dl)) < 0)
		goto out;
	if (!json_is_array(json_object_get(res, "items"))) {
		rc =
		    al_error_set(AL_EPROTO, "list of %s: no items array", kind);
		goto out;
	}
	*out = res;
	res = NULL;
out:
	json_decref(res);
	al_buf_free(&path);
	al_kube_resource_clear(&r);
	return rc;
}

/*
 * POST (create) or PUT (replace) obj without retrying a 409: the
 * compare-and-swap of leader election (client-go resourcelock) needs to
 * see the conflict.
 */
static int write_exclusive(al_kube *k, const json_t *obj, int replace,
                           json_t **result, al_deadline dl)
{
	obj_target t;
	al_buf path = AL_BUF_INIT(4096);
	char *body = NULL;
	json_t *res = NULL;
	int rc;

	if ((rc = object_target(k, obj, "write", &t, dl)) < 0)
		goto out;
	if ((rc = object_path(&path, &t.r, t.ns, replace ? t.name : NULL,
	                      NULL)) < 0 ||
	    (rc = al_buf_puts(&path, "?fieldManager=")) < 0 ||
	    (rc = put_escaped(&path, k->field_manager)) < 0) {
		rc = al_error_set(rc, "write: path too long for '%.64s'",
		                  t.name);
		goto out;
	}
	body = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (body == NULL) {
		rc = al_error_set(AL_ENOMEM, "write: cannot serialise '%s'",
		                  t.name);
		goto out;
	}
	rc = kube_call_ex(
	    k, replace ? "PUT" : "POST", al_buf_cstr(&path), "application/json",
	    body, result != NULL ? &res : NULL, dl, KUBE_CALL_CONFLICT_FINAL);
	if (rc == 0 && result != NULL) {
		*result = res;
		res = NULL;
	}
out:
	json_decref(res);
	free(body);
	al_buf_free(&path);
	al_kube_resource_clear(&t.r);
	return rc;
}

int al_kube_create(al_kube *k, const json_t *obj, json_t **result,
                   al_deadline dl)
{
	return write_exclusive(k, obj, 0, result, dl);
}

int al_kube_replace(al_kube *k, const json_t *obj, json_t **result,
                    al_deadline dl)
{
	return write_exclusive(k, obj, 1, result, dl);
}
