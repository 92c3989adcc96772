/* auth.c: auth files, WWW-Authenticate parsing, Bearer tokens, token cache. */
#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <pwd.h>
#include <unistd.h>

#include <jansson.h>
#include <openssl/crypto.h>

#include "airlock/auth.h"
#include "airlock/buf.h"
#include "airlock/clock.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/log.h"
#include "auth_int.h"

#define AUTH_FILE_MAX (4 * AL_MIB)
#define TOKEN_BODY_MAX (1 * AL_MIB)
#define TOKEN_DEFAULT_TTL_S 60
#define TOKEN_MARGIN_S 30
#define TOKEN_MAX_TTL_S (24 * 3600)
#define TOKEN_MAX_LEN (64 * 1024)
#define CACHE_MAX 256

/* One "auths" entry of one file, under its key as written. user NULL: an
 * entry without usable credentials (a credential-helper marker "{}", an
 * identity token): it ends the search in that file (containers/image's
 * findCredentialsInFile returns it empty) and the next file is read. */
typedef struct auth_cred {
	char *key;
	char *user;
	char *pass;
} auth_cred;

/* One credentials file, in search order. */
typedef struct auth_file {
	char *path;
	int legacy; /* ~/.dockercfg: the top-level object is "auths" */
	auth_cred *creds;
	size_t ncreds;
	char **helper_keys; /* credHelpers: registry -> helper name */
	char **helper_names;
	size_t nhelpers;
	char *creds_store; /* credsStore (docker CLI), or NULL */
} auth_file;

/* A credential helper's answer, kept for the life of the al_auth. */
typedef struct auth_helper_hit {
	char *helper;
	char *registry;
	char *user; /* NULL: the helper has none for registry */
	char *pass;
} auth_helper_hit;

/* A cached Authorization header. ident names the credentials that made
 * it (cred_ident): a lookup uses it only for a repository whose
 * credentials are the same ones, never across auth-file keys. */
typedef struct auth_token {
	char *registry;
	char *ident;         /* cred_ident of the credentials; "" anonymous */
	char *scope;         /* NULL: every scope of ident (Basic) */
	char *header;        /* "Authorization: ..." */
	uint64_t expires_ms; /* monotonic */
} auth_token;

struct al_auth {
	pthread_mutex_t lock;
	auth_file *files;
	size_t nfiles;
	char *sources; /* "A, B, C": the files searched, for messages */
	auth_helper_hit *hits;
	size_t nhits;
	uint64_t helper_timeout_ms;
	auth_token *tokens;
	size_t ntokens;
};

static void wipe_free(char *s)
{
	if (s == NULL)
		return;
	OPENSSL_cleanse(s, strlen(s));
	free(s);
}

static void token_clear(auth_token *t)
{
	free(t->registry);
	free(t->ident);
	free(t->scope);
	wipe_free(t->header);
	memset(t, 0, sizeof(*t));
}

char *al_auth_normalize_key(const char *key)
{
	const char *s = key;
	size_t n;
	char *out;

	if (key == NULL)
		return NULL;
	if (strncasecmp(s, "https://", 8) == 0)
		s += 8;
	else if (strncasecmp(s, "http://", 7) == 0)
		s += 7;
	n = strlen(s);
	for (;;) {
		if (n > 0 && s[n - 1] == '/') {
			n--;
			continue;
		}
		if (n >= 3 && s[n - 3] == '/' && s[n - 2] == 'v' &&
		    (s[n - 1] == '1' || s[n - 1] == '2')) {
			n -= 3;
			continue;
		}
		break;
	}
	if (n >= 15 && strncasecmp(s, "index.docker.io", 15) == 0 &&
	    (n == 15 || s[15] == '/'))
		return al_sprintf("docker.io%.*s", (int)(n - 15), s + 15);
	if (n >= 20 && strncasecmp(s, "registry-1.docker.io", 20) == 0 &&
	    (n == 20 || s[20] == '/'))
		return al_sprintf("docker.io%.*s", (int)(n - 20), s + 20);
	out = al_strndup(s, n);
	return out;
}

static int auth_alloc(al_auth **out)
{
	al_auth *a = calloc(1, sizeof(*a));

	if (a == NULL)
		return al_error_set(AL_ENOMEM,
		                    "out of memory allocating credentials");
	if (pthread_mutex_init(&a->lock, NULL) != 0) {
		free(a);
		return al_error_set(AL_ENOMEM,
		                    "cannot initialise the credentials lock");
	}
	a->helper_timeout_ms = AL_AUTH_HELPER_TIMEOUT_MS;
	*out = a;
	return 0;
}

static void file_clear(auth_file *f)
{
	size_t i;

	for (i = 0; i < f->ncreds; i++) {
		free(f->creds[i].key);
		wipe_free(f->creds[i].user);
		wipe_free(f->creds[i].pass);
	}
	free(f->creds);
	for (i = 0; i < f->nhelpers; i++) {
		free(f->helper_keys[i]);
		free(f->helper_names[i]);
	}
	free(f->helper_keys);
	free(f->helper_names);
	free(f->creds_store);
	free(f->path);
	memset(f, 0, sizeof(*f));
}

void al_auth_free(al_auth *a)
{
	size_t i;

	if (a == NULL)
		return;
	for (i = 0; i < a->nfiles; i++)
		file_clear(&a->files[i]);
	free(a->files);
	for (i = 0; i < a->nhits; i++) {
		free(a->hits[i].helper);
		free(a->hits[i].registry);
		wipe_free(a->hits[i].user);
		wipe_free(a->hits[i].pass);
	}
	free(a->hits);
	free(a->sources);
	for (i = 0; i < a->ntokens; i++)
		token_clear(&a->tokens[i]);
	free(a->tokens);
	pthread_mutex_destroy(&a->lock);
	free(a);
}

/* Add one entry to f (takes key, user, pass). */
static int cred_add(auth_file *f, char *key, char *user, char *pass)
{
	auth_cred *n;

	if (f->ncreds >= SIZE_MAX / sizeof(*n) - 1)
		return al_error_set(AL_ENOMEM, "too many credentials");
	n = realloc(f->creds, (f->ncreds + 1) * sizeof(*n));
	if (n == NULL)
		return al_error_set(AL_ENOMEM,
		                    "out of memory adding credentials");
	f->creds = n;
	f->creds[f->ncreds].key = key;
	f->creds[f->ncreds].user = user;
	f->creds[f->ncreds].pass = pass;
	f->ncreds++;
	return 0;
}

static int parse_entry(auth_file *f, const char *key, json_t *entry)
{
	al_buf dec = AL_BUF_INIT(64 * 1024);
	char *nkey = NULL, *user = NULL, *pass = NULL;
	const char *path = f->path;
	json_t *v;
	const char *colon;
	int rc = 0;

	if (!json_is_object(entry)) {
		rc = al_error_set(AL_EPARSE,
		                  "'%s': auths entry '%s' is not an object",
		                  path, key);
		goto out;
	}
	v = json_object_get(entry, "auth");
	if (v != NULL && !json_is_string(v)) {
		rc = al_error_set(
		    AL_EPARSE,
		    "'%s': auths entry '%s': \"auth\" is not a string", path,
		    key);
		goto out;
	}
	if (v != NULL && json_string_length(v) > 0) {
		if (al_base64_decode(&dec, json_string_value(v),
		                     json_string_length(v)) != 0) {
			rc = al_error_set(AL_EPARSE,
			                  "'%s': auths entry '%s': \"auth\" is "
			                  "not valid base64",
			                  path, key);
			goto out;
		}
		colon = dec.ptr != NULL ? memchr(dec.ptr, ':', dec.len) : NULL;
		if (colon == NULL || memchr(dec.ptr, '\0', dec.len) != NULL) {
			rc = al_error_set(AL_EPARSE,
			                  "'%s': auths entry '%s': \"auth\" is "
			                  "not base64 of user:password",
			                  path, key);
			goto out;
		}
		user = al_strndup((const char *)dec.ptr,
		                  (size_t)(colon - (const char *)dec.ptr));
		pass = al_strndup(
		    colon + 1,
		    dec.len - (size_t)(colon - (const char *)dec.ptr) - 1);
		if (user == NULL || pass == NULL) {
			rc = al_error_set(AL_ENOMEM,
			                  "out of memory reading '%s'", path);
			goto out;
		}
	} else {
		const char *u = NULL, *p = NULL;

		v = json_object_get(entry, "username");
		if (json_is_string(v))
			u = json_string_value(v);
		v = json_object_get(entry, "password");
		if (json_is_string(v))
			p = json_string_value(v);
		/* else: no usable credentials (a helper marker, an identity
		 * token): kept empty, it ends the search in this file */
		if (u != NULL && p != NULL && u[0] != '\0') {
			user = al_strdup(u);
			pass = al_strdup(p);
			if (user == NULL || pass == NULL) {
				rc = al_error_set(AL_ENOMEM,
				                  "out of memory reading '%s'",
				                  path);
				goto out;
			}
		}
	}
	nkey = al_strdup(key);
	if (nkey == NULL) {
		rc =
		    al_error_set(AL_ENOMEM, "out of memory reading '%s'", path);
		goto out;
	}
	rc = cred_add(f, nkey, user, pass);
	if (rc == 0)
		nkey = user = pass = NULL;
out:
	if (dec.ptr != NULL)
		OPENSSL_cleanse(dec.ptr, dec.len);
	al_buf_free(&dec);
	free(nkey);
	wipe_free(user);
	wipe_free(pass);
	return rc;
}

/* credHelpers {registry: name} and credsStore of a docker config.json. */
static int parse_helpers(auth_file *f, json_t *root)
{
	json_t *helpers = json_object_get(root, "credHelpers"), *v;
	const char *key;
	size_t n;

	v = json_object_get(root, "credsStore");
	if (v != NULL && !json_is_string(v))
		return al_error_set(
		    AL_EPARSE, "'%s': \"credsStore\" is not a string", f->path);
	if (json_is_string(v) && json_string_length(v) > 0 &&
	    (f->creds_store = al_strdup(json_string_value(v))) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	if (helpers == NULL)
		return 0;
	if (!json_is_object(helpers))
		return al_error_set(AL_EPARSE,
		                    "'%s': \"credHelpers\" is not an object",
		                    f->path);
	n = json_object_size(helpers);
	f->helper_keys = calloc(n + 1, sizeof(char *));
	f->helper_names = calloc(n + 1, sizeof(char *));
	if (f->helper_keys == NULL || f->helper_names == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	json_object_foreach(helpers, key, v)
	{
		if (!json_is_string(v))
			return al_error_set(
			    AL_EPARSE, "'%s': credHelpers '%s' is not a string",
			    f->path, key);
		f->helper_keys[f->nhelpers] = al_strdup(key);
		f->helper_names[f->nhelpers] = al_strdup(json_string_value(v));
		f->nhelpers++;
		if (f->helper_keys[f->nhelpers - 1] == NULL ||
		    f->helper_names[f->nhelpers - 1] == NULL)
			return al_error_set(AL_ENOMEM, "out of memory");
	}
	return 0;
}

/* Read one file into f (f->path set). A missing file leaves f empty. */
static int load_file(auth_file *f, int must_exist)
{
	al_buf data = AL_BUF_INIT(AUTH_FILE_MAX);
	json_error_t jerr;
	json_t *root = NULL, *auths, *entry;
	const char *key, *path = f->path;
	int rc;

	rc = al_fs_read_file(path, &data);
	if (rc == AL_ENOTFOUND && !must_exist) {
		al_error_clear();
		rc = 0;
		goto out;
	}
	if (rc != 0)
		goto out;
	root = json_loadb((const char *)data.ptr, data.len,
	                  JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL) {
		rc = al_error_set(AL_EPARSE, "'%s': line %d, column %d: %s",
		                  path, jerr.line, jerr.column, jerr.text);
		goto out;
	}
	if (!json_is_object(root)) {
		rc = al_error_set(AL_EPARSE, "'%s': not a JSON object", path);
		goto out;
	}
	if (f->legacy) {
		auths = root;
	} else {
		auths = json_object_get(root, "auths");
		if ((rc = parse_helpers(f, root)) < 0)
			goto out;
	}
	if (auths == NULL)
		goto out;
	if (!json_is_object(auths)) {
		rc = al_error_set(AL_EPARSE, "'%s': \"auths\" is not an object",
		                  path);
		goto out;
	}
	json_object_foreach(auths, key, entry)
	{
		rc = parse_entry(f, key, entry);
		if (rc != 0)
			goto out;
	}
	al_log_debug("auth: %zu credential entries from '%s'", f->ncreds, path);
out:
	if (data.ptr != NULL)
		OPENSSL_cleanse(data.ptr, data.len);
	al_buf_free(&data);
	json_decref(root);
	return rc;
}

int al_auth_new_anonymous(al_auth **out)
{
	return auth_alloc(out);
}

static int add_file(al_auth *a, char *path, int legacy)
{
	auth_file *n;

	if (path == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	n = realloc(a->files, (a->nfiles + 1) * sizeof(*n));
	if (n == NULL) {
		free(path);
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	a->files = n;
	memset(&a->files[a->nfiles], 0, sizeof(*n));
	a->files[a->nfiles].path = path;
	a->files[a->nfiles].legacy = legacy;
	a->nfiles++;
	return 0;
}

static const char *env_nonempty(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && v[0] != '\0' ? v : NULL;
}

/* $HOME, else the password database (homedir.Get in containers/storage). */
static char *home_dir(void)
{
	const char *h = env_nonempty("HOME");
	struct passwd pw, *res = NULL;
	char buf[4096];

	if (h != NULL)
		return al_strdup(h);
	if (getpwuid_r(getuid(), &pw, buf, sizeof(buf), &res) == 0 &&
	    res != NULL && pw.pw_dir != NULL)
		return al_strdup(pw.pw_dir);
	return al_strdup("/");
}

/*
 * The files containers/image searches (pkg/docker/config getAuthFilePaths
 * and getPathToAuthWithOS, Linux), in turn: raf ($REGISTRY_AUTH_FILE, the
 * AuthFilePath skopeo gives it) or $XDG_RUNTIME_DIR/containers/auth.json
 * (or /run/containers/UID/auth.json), $XDG_CONFIG_HOME/containers/auth.json
 * (~/.config/...), $DOCKER_CONFIG/config.json or ~/.docker/config.json,
 * ~/.dockercfg. (--authfile is the user's file alone: al_auth_new.)
 */
static int default_files(al_auth *a, const char *raf)
{
	const char *xdg = env_nonempty("XDG_RUNTIME_DIR");
	const char *cfg = env_nonempty("XDG_CONFIG_HOME");
	const char *dc = env_nonempty("DOCKER_CONFIG");
	char *home = home_dir();
	int rc = 0;

	if (home == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	if (raf != NULL)
		/* skopeo (1.9.3, measured with --debug): the file takes the
		 * first place, the others are read after it, and one that
		 * does not exist gives nothing */
		rc = add_file(a, al_strdup(raf), 0);
	else if (xdg != NULL && al_fs_exists(xdg) != 1)
		/* as containers/image: warn, go on for public images */
		al_log_warn("'%s' (set by $XDG_RUNTIME_DIR) does not exist: "
		            "not reading credentials from it",
		            xdg);
	else if (xdg != NULL)
		rc = add_file(a, al_sprintf("%s/containers/auth.json", xdg), 0);
	else
		rc = add_file(a,
		              al_sprintf("/run/containers/%lu/auth.json",
		                         (unsigned long)getuid()),
		              0);
	if (rc == 0 && cfg != NULL)
		rc = add_file(a, al_sprintf("%s/containers/auth.json", cfg), 0);
	else if (rc == 0)
		rc = add_file(
		    a, al_sprintf("%s/.config/containers/auth.json", home), 0);
	if (rc == 0)
		rc = dc != NULL
		         ? add_file(a, al_sprintf("%s/config.json", dc), 0)
		         : add_file(a,
		                    al_sprintf("%s/.docker/config.json", home),
		                    0);
	if (rc == 0)
		rc = add_file(a, al_sprintf("%s/.dockercfg", home), 1);
	free(home);
	return rc;
}

int al_auth_new(al_auth **out, const char *authfile)
{
	al_buf src = AL_BUF_INIT(64 * 1024);
	al_auth *a = NULL;
	const char *env = env_nonempty("REGISTRY_AUTH_FILE");
	size_t i;
	int rc;

	rc = auth_alloc(&a);
	if (rc != 0)
		return rc;
	if (authfile != NULL) {
		if ((rc = add_file(a, al_strdup(authfile), 0)) < 0)
			goto out;
		rc = load_file(&a->files[0], 1);
		if (rc == AL_ENOTFOUND)
			rc = al_error_set(AL_ENOTFOUND,
			                  "auth file '%s' does not exist",
			                  authfile);
		if (rc < 0)
			goto out;
	} else {
		if ((rc = default_files(a, env)) < 0)
			goto out;
		for (i = 0; i < a->nfiles; i++)
			if ((rc = load_file(&a->files[i], 0)) < 0)
				goto out;
	}
	for (i = 0; i < a->nfiles && rc == 0; i++)
		rc = al_buf_printf(&src, "%s'%s'", i > 0 ? ", " : "",
		                   a->files[i].path);
	if (rc < 0 || (a->sources = al_buf_detach(&src, NULL)) == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	rc = 0;
out:
	al_buf_free(&src);
	if (rc != 0) {
		al_auth_free(a);
		return rc;
	}
	*out = a;
	return 0;
}

const char *al_auth_sources(const al_auth *a)
{
	return a != NULL && a->sources != NULL ? a->sources : "";
}

void al_auth__set_helper_timeout_ms(al_auth *a, uint64_t ms)
{
	if (a != NULL)
		a->helper_timeout_ms = ms;
}

/* normalizeRegistry: the docker.io names compare as one. */
static int same_registry(const char *a, size_t alen, const char *b)
{
	static const char *const hub[] = {"docker.io", "index.docker.io",
	                                  "registry-1.docker.io"};
	int ha = 0, hb = 0;
	size_t i;

	for (i = 0; i < 3; i++) {
		if (alen == strlen(hub[i]) && strncmp(a, hub[i], alen) == 0)
			ha = 1;
		if (strcmp(b, hub[i]) == 0)
			hb = 1;
	}
	if (ha || hb)
		return ha && hb;
	return alen == strlen(b) && strncmp(a, b, alen) == 0;
}

/* normalizeAuthFileKey compared with registry: "http(s)://" stripped (and
 * then, as for legacy files, everything from the first '/'). */
static int key_names_registry(const char *key, int legacy, const char *reg)
{
	const char *s = key;
	size_t n;
	int had_scheme = 0;

	if (strncmp(s, "http://", 7) == 0) {
		s += 7;
		had_scheme = 1;
	} else if (strncmp(s, "https://", 8) == 0) {
		s += 8;
		had_scheme = 1;
	}
	n = strlen(s);
	if (legacy || had_scheme)
		n = strcspn(s, "/");
	return same_registry(s, n, reg);
}

/* The helper's answer for registry, from the cache or by running it
 * (only when may_run). Called with the lock held (one run per helper and
 * registry). 0 with *user NULL: the helper has none; 1: may_run is 0 and
 * the helper was not asked yet. *ident: "helper NAME for REG". */
static int helper_lookup(al_auth *a, const char *helper, const char *reg,
                         const char *origin, int may_run, char **user,
                         char **pass, char **ident)
{
	auth_helper_hit *n, *h = NULL;
	char *u = NULL, *p = NULL;
	size_t i;
	int rc;

	for (i = 0; i < a->nhits; i++)
		if (strcmp(a->hits[i].helper, helper) == 0 &&
		    strcmp(a->hits[i].registry, reg) == 0)
			h = &a->hits[i];
	if (h == NULL && !may_run)
		return 1;
	if (h == NULL) {
		al_log_debug("auth: asking credential helper "
		             "'docker-credential-%s' for '%s' (%s)",
		             helper, reg, origin);
		rc = al_auth__run_helper(helper, reg, a->helper_timeout_ms, &u,
		                         &p);
		if (rc == AL_ENOTFOUND) {
			al_error_clear();
			rc = 0;
		}
		if (rc < 0)
			return al_error_wrap(rc, "credentials for '%s' (%s)",
			                     reg, origin);
		n = realloc(a->hits, (a->nhits + 1) * sizeof(*n));
		if (n == NULL) {
			wipe_free(u);
			wipe_free(p);
			return al_error_set(AL_ENOMEM, "out of memory");
		}
		a->hits = n;
		h = &a->hits[a->nhits];
		h->helper = al_strdup(helper);
		h->registry = al_strdup(reg);
		h->user = u;
		h->pass = p;
		if (h->helper == NULL || h->registry == NULL) {
			free(h->helper);
			free(h->registry);
			wipe_free(u);
			wipe_free(p);
			return al_error_set(AL_ENOMEM, "out of memory");
		}
		a->nhits++;
	}
	if (h->user == NULL)
		return 0;
	*user = al_strdup(h->user);
	*pass = al_strdup(h->pass);
	*ident = al_sprintf("helper %s for %s", helper, reg);
	if (*user == NULL || *pass == NULL || *ident == NULL) {
		wipe_free(*user);
		wipe_free(*pass);
		free(*ident);
		*user = *pass = *ident = NULL;
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	return 0;
}

/*
 * containers/image findCredentialsInFile for file number fi: its
 * credHelpers entry for the registry; else the most specific of
 * "reg/ns/repo", "reg/ns", "reg" written exactly (authKeyLookupOrder; a
 * legacy file: "reg" only); else a key that names the registry as a URL or
 * another docker.io name; else (docker CLI, not containers/image) its
 * credsStore. 0 with *user NULL: nothing usable in this file; 1: a helper
 * not asked yet decides and may_run is 0. *ident names the entry that
 * chose the credentials ("file N key KEY" or the helper's).
 */
static int file_lookup(al_auth *a, size_t fi, const char *reg, const char *repo,
                       int may_run, char **user, char **pass, char **ident)
{
	const auth_file *f = &a->files[fi];
	const auth_cred *hit = NULL;
	char *key = NULL;
	size_t i, kl;
	int rc = 0;

	for (i = 0; i < f->nhelpers; i++)
		if (strcmp(f->helper_keys[i], reg) == 0)
			return helper_lookup(a, f->helper_names[i], reg,
			                     f->path, may_run, user, pass,
			                     ident);
	key = !f->legacy && repo != NULL && repo[0] != '\0'
	          ? al_sprintf("%s/%s", reg, repo)
	          : al_strdup(reg);
	if (key == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	for (kl = strlen(key); hit == NULL && kl >= strlen(reg);) {
		for (i = 0; i < f->ncreds && hit == NULL; i++)
			if (strlen(f->creds[i].key) == kl &&
			    strncmp(f->creds[i].key, key, kl) == 0)
				hit = &f->creds[i];
		while (kl > 0 && key[kl - 1] != '/')
			kl--;
		if (kl == 0)
			break;
		kl--;
	}
	for (i = 0; i < f->ncreds && hit == NULL; i++)
		if (key_names_registry(f->creds[i].key, f->legacy, reg))
			hit = &f->creds[i];
	free(key);
	if (hit != NULL && hit->user != NULL) {
		*user = al_strdup(hit->user);
		*pass = al_strdup(hit->pass);
		*ident = al_sprintf("file %zu key %s", fi, hit->key);
		if (*user == NULL || *pass == NULL || *ident == NULL) {
			wipe_free(*user);
			wipe_free(*pass);
			free(*ident);
			*user = *pass = *ident = NULL;
			rc = al_error_set(AL_ENOMEM, "out of memory");
		}
		return rc;
	}
	if (f->creds_store != NULL)
		return helper_lookup(a, f->creds_store, reg, f->path, may_run,
		                     user, pass, ident);
	return 0;
}

/*
 * The credentials for reg (normalised) and repo, and *ident, the name of
 * the entry that chose them ("" when there are none: anonymous). Called
 * with the lock held. may_run 0: 1 when a credential helper not asked yet
 * would decide (nothing written). *user and *pass NULL when none.
 */
static int cred_lookup(al_auth *a, const char *reg, const char *repo,
                       int may_run, char **user, char **pass, char **ident)
{
	char *u = NULL, *p = NULL, *id = NULL;
	size_t i;
	int rc = 0;

	/* the first file with usable credentials wins (getCredentials) */
	for (i = 0; i < a->nfiles && u == NULL && rc == 0; i++)
		rc = file_lookup(a, i, reg, repo, may_run, &u, &p, &id);
	if (rc != 0)
		return rc;
	if (id == NULL && (id = al_strdup("")) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	*user = u;
	*pass = p;
	*ident = id;
	return 0;
}

int al_auth_lookup(al_auth *a, const char *registry, const char *repository,
                   char **user, char **pass)
{
	char *reg = NULL, *u = NULL, *p = NULL, *id = NULL;
	int rc = 0;

	if (a == NULL || registry == NULL || user == NULL || pass == NULL)
		return al_error_set(AL_EINVAL,
		                    "al_auth_lookup: missing argument");
	reg = al_auth_normalize_key(registry);
	if (reg == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	pthread_mutex_lock(&a->lock);
	rc = cred_lookup(a, reg, repository, 1, &u, &p, &id);
	pthread_mutex_unlock(&a->lock);
	free(id);
	if (rc < 0)
		goto out;
	if (u == NULL) {
		rc = al_error_set(AL_ENOTFOUND, "no credentials for '%s%s%s'",
		                  registry, repository != NULL ? "/" : "",
		                  repository != NULL ? repository : "");
		goto out;
	}
	*user = u;
	*pass = p;
	u = p = NULL;
out:
	free(reg);
	wipe_free(u);
	wipe_free(p);
	return rc;
}

void al_auth_params_clear(al_auth_params *p)
{
	if (p == NULL)
		return;
	free(p->scheme);
	free(p->realm);
	free(p->service);
	free(p->scope);
	memset(p, 0, sizeof(*p));
}

static int is_tchar(char c)
{
	return isalnum((unsigned char)c) ||
	       (c != '\0' && strchr("!#$%&'*+-.^_`|~/:", c) != NULL);
}

int al_auth_parse_challenge(al_auth_params *out, const char *hdr)
{
	al_auth_params res = {NULL, NULL, NULL, NULL};
	al_buf val = AL_BUF_INIT(16 * 1024);
	const char *s = hdr, *start;
	int rc = 0;

	if (hdr == NULL)
		return al_error_set(AL_EPARSE,
		                    "missing WWW-Authenticate challenge");
	/* Parameters end up in a URL and in messages: no control character
	 * (a quoted-string's qdtext excludes them, RFC 9110 5.6.4). */
	if (!al_http_value_ok(hdr, strlen(hdr)))
		return al_error_set(AL_EPARSE,
		                    "WWW-Authenticate '%.200s' "
		                    "contains a control character",
		                    hdr);
	while (*s == ' ' || *s == '\t')
		s++;
	start = s;
	while (is_tchar(*s))
		s++;
	if (s == start) {
		rc = al_error_set(AL_EPARSE,
		                  "WWW-Authenticate '%.200s': no scheme", hdr);
		goto out;
	}
	res.scheme = al_strndup(start, (size_t)(s - start));
	if (res.scheme == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	for (;;) {
		const char *name;
		size_t namelen;
		char **dst = NULL;

		while (*s == ' ' || *s == '\t' || *s == ',')
			s++;
		if (*s == '\0')
			break;
		name = s;
		while (is_tchar(*s) && *s != '/' && *s != ':')
			s++;
		namelen = (size_t)(s - name);
		while (*s == ' ' || *s == '\t')
			s++;
		if (namelen == 0 || *s != '=') {
			rc = al_error_set(AL_EPARSE,
			                  "WWW-Authenticate '%.200s': expected "
			                  "name=value at offset %zu",
			                  hdr, (size_t)(s - hdr));
			goto out;
		}
		s++;
		while (*s == ' ' || *s == '\t')
			s++;
		al_buf_reset(&val);
		if (*s == '"') {
			s++;
			for (;;) {
				if (*s == '\0') {
					rc = al_error_set(
					    AL_EPARSE,
					    "WWW-Authenticate '%.200s': "
					    "unterminated quoted string",
					    hdr);
					goto out;
				}
				if (*s == '"') {
					s++;
					break;
				}
				if (*s == '\\') {
					s++;
					if (*s == '\0')
						continue;
				}
				rc = al_buf_append(&val, s, 1);
				if (rc != 0) {
					rc = al_error_set(rc,
					                  "WWW-Authenticate "
					                  "parameter too long");
					goto out;
				}
				s++;
			}
		} else {
			start = s;
			while (is_tchar(*s) || *s == '=')
				s++;
			rc = al_buf_append(&val, start, (size_t)(s - start));
			if (rc != 0) {
				rc = al_error_set(
				    rc, "WWW-Authenticate parameter too long");
				goto out;
			}
		}
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s != ',' && *s != '\0') {
			rc = al_error_set(AL_EPARSE,
			                  "WWW-Authenticate '%.200s': "
			                  "unexpected '%c' at offset %zu",
			                  hdr, *s, (size_t)(s - hdr));
			goto out;
		}
		if (namelen == 5 && strncasecmp(name, "realm", 5) == 0)
			dst = &res.realm;
		else if (namelen == 7 && strncasecmp(name, "service", 7) == 0)
			dst = &res.service;
		else if (namelen == 5 && strncasecmp(name, "scope", 5) == 0)
			dst = &res.scope;
		if (dst != NULL) {
			free(*dst);
			*dst = al_strdup(al_buf_cstr(&val));
			if (*dst == NULL) {
				rc = al_error_set(AL_ENOMEM, "out of memory");
				goto out;
			}
		}
	}
	*out = res;
	memset(&res, 0, sizeof(res));
out:
	al_buf_free(&val);
	al_auth_params_clear(&res);
	return rc;
}

static int same(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

/* Called with the lock held. */
static int cache_put(al_auth *a, const char *reg, const char *ident,
                     const char *scope, const char *header, uint64_t ttl_ms)
{
	auth_token t = {NULL, NULL, NULL, NULL, 0}, *n;
	size_t i;

	t.registry = al_strdup(reg);
	t.ident = al_strdup(ident);
	t.scope = scope != NULL ? al_strdup(scope) : NULL;
	t.header = al_strdup(header);
	t.expires_ms = al_clock_now_ms() + ttl_ms;
	if (t.registry == NULL || t.ident == NULL ||
	    (scope != NULL && t.scope == NULL) || t.header == NULL) {
		token_clear(&t);
		return al_error_set(AL_ENOMEM, "out of memory caching a token");
	}
	for (i = 0; i < a->ntokens; i++) {
		if (strcmp(a->tokens[i].registry, reg) == 0 &&
		    strcmp(a->tokens[i].ident, ident) == 0 &&
		    same(a->tokens[i].scope, scope)) {
			token_clear(&a->tokens[i]);
			a->tokens[i] = t;
			return 0;
		}
	}
	if (a->ntokens >= CACHE_MAX) {
		/* bounded cache: drop the oldest entry */
		token_clear(&a->tokens[0]);
		memmove(&a->tokens[0], &a->tokens[1],
		        (a->ntokens - 1) * sizeof(*n));
		a->ntokens--;
	}
	n = realloc(a->tokens, (a->ntokens + 1) * sizeof(*n));
	if (n == NULL) {
		token_clear(&t);
		return al_error_set(AL_ENOMEM, "out of memory caching a token");
	}
	a->tokens = n;
	a->tokens[a->ntokens++] = t;
	return 0;
}

/*
 * The cred_ident a request for registry/repository would use, without
 * running a credential helper: *ident NULL when a helper not asked yet
 * would decide (nothing cached can be used then). Lock held.
 */
static int cached_ident(al_auth *a, const char *reg, const char *repository,
                        char **ident)
{
	char *u = NULL, *p = NULL;
	int rc;

	*ident = NULL;
	rc = cred_lookup(a, reg, repository, 0, &u, &p, ident);
	wipe_free(u);
	wipe_free(p);
	return rc < 0 ? rc : 0;
}

int al_auth_cached(al_auth *a, const char *registry, const char *repository,
                   const char *scope, char **header)
{
	uint64_t now = al_clock_now_ms();
	const auth_token *hit = NULL;
	char *reg, *id = NULL, *h = NULL;
	size_t i;
	int rc;

	if (a == NULL || registry == NULL || header == NULL)
		return al_error_set(AL_EINVAL,
		                    "al_auth_cached: missing argument");
	reg = al_auth_normalize_key(registry);
	if (reg == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	pthread_mutex_lock(&a->lock);
	rc = cached_ident(a, reg, repository, &id);
	/* only what the same credentials made: an exact (registry, scope)
	 * token first, then a Basic entry */
	for (i = 0; rc == 0 && id != NULL && i < a->ntokens && hit == NULL;
	     i++) {
		const auth_token *t = &a->tokens[i];

		if (strcmp(t->registry, reg) == 0 && now < t->expires_ms &&
		    strcmp(t->ident, id) == 0 && t->scope != NULL &&
		    same(t->scope, scope))
			hit = t;
	}
	for (i = 0; rc == 0 && id != NULL && i < a->ntokens && hit == NULL;
	     i++) {
		const auth_token *t = &a->tokens[i];

		if (strcmp(t->registry, reg) == 0 && now < t->expires_ms &&
		    strcmp(t->ident, id) == 0 && t->scope == NULL)
			hit = t;
	}
	if (hit != NULL)
		h = al_strdup(hit->header);
	pthread_mutex_unlock(&a->lock);
	free(reg);
	free(id);
	if (rc < 0)
		return rc;
	if (hit == NULL)
		return al_error_set(AL_ENOTFOUND,
		                    "no cached token for '%s' scope '%s'",
		                    registry, scope != NULL ? scope : "");
	if (h == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	*header = h;
	return 0;
}

void al_auth_invalidate(al_auth *a, const char *registry,
                        const char *repository, const char *scope)
{
	char *reg, *id = NULL;
	size_t i;

	if (a == NULL || registry == NULL)
		return;
	reg = al_auth_normalize_key(registry);
	if (reg == NULL)
		return;
	pthread_mutex_lock(&a->lock);
	if (cached_ident(a, reg, repository, &id) < 0)
		al_error_clear();
	for (i = 0; id != NULL && i < a->ntokens;) {
		auth_token *t = &a->tokens[i];

		if (strcmp(t->registry, reg) == 0 &&
		    strcmp(t->ident, id) == 0 &&
		    (t->scope == NULL || same(t->scope, scope))) {
			token_clear(t);
			memmove(t, t + 1, (a->ntokens - i - 1) * sizeof(*t));
			a->ntokens--;
			continue;
		}
		i++;
	}
	pthread_mutex_unlock(&a->lock);
	free(id);
	free(reg);
}

static char *basic_header(const char *user, const char *pass)
{
	char *up = al_sprintf("%s:%s", user, pass), *b64, *h;

	if (up == NULL)
		return NULL;
	b64 = al_base64_encode((const uint8_t *)up, strlen(up));
	wipe_free(up);
	if (b64 == NULL)
		return NULL;
	h = al_sprintf("Authorization: Basic %s", b64);
	wipe_free(b64);
	return h;
}

/* Percent-encode s (RFC 3986 unreserved characters kept) onto b. */
static int url_escape(al_buf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	int rc = 0;

	for (; *s != '\0' && rc == 0; s++) {
		unsigned char c = (unsigned char)*s;

		if (isalnum(c) || c == '-' || c == '.' || c == '_' ||
		    c == '~') {
			rc = al_buf_append(b, s, 1);
		} else {
			char e[3] = {'%', hex[c >> 4], hex[c & 15]};

			rc = al_buf_append(b, e, 3);
		}
	}
	return rc;
}

int al_auth__parse_token(const uint8_t *p, size_t n, const char *realm,
                         char **token, uint64_t *ttl_s)
{
	json_error_t jerr;
	json_t *root = NULL, *v;
	const char *tok;
	size_t len, i;
	uint64_t ttl = TOKEN_DEFAULT_TTL_S;
	int rc = 0;

	if (realm == NULL)
		realm = "";
	root = json_loadb((const char *)p, n, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL || !json_is_object(root)) {
		rc = al_error_set(
		    AL_EPARSE, "token server '%s': invalid JSON answer", realm);
		goto out;
	}
	v = json_object_get(root, "token");
	if (!json_is_string(v) || json_string_length(v) == 0)
		v = json_object_get(root, "access_token");
	if (!json_is_string(v) || json_string_length(v) == 0) {
		rc = al_error_set(
		    AL_EPROTO, "token server '%s': answer has no token", realm);
		goto out;
	}
	tok = json_string_value(v);
	len = json_string_length(v);
	if (len > TOKEN_MAX_LEN) {
		rc = al_error_set(AL_EPROTO,
		                  "token server '%s': the token is longer than "
		                  "%d bytes",
		                  realm, TOKEN_MAX_LEN);
		goto out;
	}
	/* It becomes "Authorization: Bearer <token>": visible ASCII only
	 * (RFC 6750 b64token is narrower still), so no CR, LF, NUL, space
	 * or escape can add a header line or reach a terminal. */
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)tok[i];

		if (c < 0x21 || c > 0x7e) {
			rc = al_error_set(
			    AL_EPROTO,
			    "token server '%s': the token contains "
			    "a control character, a space or a "
			    "non-ASCII byte (refused)",
			    realm);
			goto out;
		}
	}
	v = json_object_get(root, "expires_in");
	if (json_is_integer(v) && json_integer_value(v) > 0)
		ttl = json_integer_value(v) > TOKEN_MAX_TTL_S
		          ? TOKEN_MAX_TTL_S
		          : (uint64_t)json_integer_value(v);
	*token = al_strndup(tok, len);
	if (*token == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	*ttl_s = ttl;
out:
	json_decref(root);
	return rc;
}

/*
 * Where a token request may go (docs/http.md "Where credentials go"): the
 * realm is https, or the registry itself was reached over plain http
 * (which only an insecure registry does) and, when credentials go with the
 * request, the realm's host is one the user marked insecure too.
 */
static int realm_allowed(al_http *h, const char *realm, const char *reg_url,
                         const char *registry, int with_creds)
{
	if (strncasecmp(realm, "http://", 7) != 0)
		return 0; /* https, or not a URL fetch_token takes */
	if (reg_url == NULL || strncasecmp(reg_url, "http://", 7) != 0)
		return al_error_set(AL_EAUTH,
		                    "registry '%s' is reached over https but "
		                    "names the plain-http token realm '%s': "
		                    "refused",
		                    registry, realm);
	if (with_creds && !al_http_plain_allowed(h, realm))
		return al_error_set(
		    AL_EAUTH,
		    "refusing to send the credentials for '%s' "
		    "to the plain-http token realm '%s' (not an "
		    "insecure host)",
		    registry, realm);
	return 0;
}

static int fetch_token(al_http *h, const al_auth_params *ch, const char *scope,
                       const char *cred_header, char **token, uint64_t *ttl_s)
{
	al_buf url = AL_BUF_INIT(16 * 1024), body = AL_BUF_INIT(TOKEN_BODY_MAX);
	al_http_resp resp = AL_HTTP_RESP_INIT;
	al_http_req req;
	const char *headers[2] = {cred_header, NULL};
	char sep;
	int rc;

	memset(&req, 0, sizeof(req));
	if (ch->realm == NULL || ch->realm[0] == '\0')
		return al_error_set(AL_EPARSE,
		                    "Bearer challenge without realm");
	if ((strncasecmp(ch->realm, "https://", 8) != 0 &&
	     strncasecmp(ch->realm, "http://", 7) != 0) ||
	    strpbrk(ch->realm, " \t") != NULL)
		return al_error_set(AL_EPARSE,
		                    "Bearer realm '%s' is not an http(s) URL",
		                    ch->realm);
	sep = strchr(ch->realm, '?') != NULL ? '&' : '?';
	rc = al_buf_puts(&url, ch->realm);
	if (rc == 0 && ch->service != NULL) {
		rc = al_buf_printf(&url, "%cservice=", sep);
		if (rc == 0)
			rc = url_escape(&url, ch->service);
		sep = '&';
	}
	if (rc == 0 && scope != NULL) {
		rc = al_buf_printf(&url, "%cscope=", sep);
		if (rc == 0)
			rc = url_escape(&url, scope);
	}
	if (rc != 0) {
		rc = al_error_set(rc, "token URL for realm '%s' too long",
		                  ch->realm);
		goto out;
	}
	req.method = "GET";
	req.url = al_buf_cstr(&url);
	req.headers = cred_header != NULL ? headers : NULL;
	req.body_out = &body;
	rc = al_http_do(h, &req, &resp);
	if (rc != 0)
		goto out;
	if (resp.status == 401 || resp.status == 403) {
		rc = al_error_set(
		    AL_EAUTH, "token server '%s' refused the %s (HTTP %ld)",
		    ch->realm,
		    cred_header != NULL ? "credentials" : "anonymous request",
		    resp.status);
		goto out;
	}
	if (resp.status != 200) {
		rc = al_error_set(AL_EPROTO,
		                  "token server '%s' answered HTTP %ld",
		                  ch->realm, resp.status);
		goto out;
	}
	rc = al_auth__parse_token(body.ptr != NULL ? body.ptr
	                                           : (const uint8_t *)"",
	                          body.len, ch->realm, token, ttl_s);
out:
	if (body.ptr != NULL)
		OPENSSL_cleanse(body.ptr, body.len);
	al_buf_free(&body);
	al_buf_free(&url);
	al_http_resp_clear(&resp);
	return rc;
}

int al_auth_challenge(al_auth *a, al_http *h, const char *registry,
                      const char *repository, const char *www_authenticate,
                      const char *scope, char **header)
{
	return al_auth_challenge_url(a, h, registry, repository,
	                             www_authenticate, scope, NULL, header);
}

int al_auth_challenge_url(al_auth *a, al_http *h, const char *registry,
                          const char *repository, const char *www_authenticate,
                          const char *scope, const char *request_url,
                          char **header)
{
	al_auth_params ch = {NULL, NULL, NULL, NULL};
	char *user = NULL, *pass = NULL, *cred = NULL, *token = NULL,
	     *hv = NULL, *reg = NULL, *ident = NULL;
	uint64_t ttl_s = 0, ttl_ms;
	int rc;

	if (a == NULL || registry == NULL || header == NULL)
		return al_error_set(AL_EINVAL,
		                    "al_auth_challenge: missing argument");
	rc = al_auth_parse_challenge(&ch, www_authenticate);
	if (rc != 0)
		return rc;
	reg = al_auth_normalize_key(registry);
	if (reg == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	/* the header is cached under the entry that chose the credentials */
	pthread_mutex_lock(&a->lock);
	rc = cred_lookup(a, reg, repository, 1, &user, &pass, &ident);
	pthread_mutex_unlock(&a->lock);
	if (rc != 0)
		goto out;
	if (strcasecmp(ch.scheme, "Basic") == 0) {
		if (user == NULL) {
			rc = al_error_set(
			    AL_EAUTH,
			    "registry '%s' requires credentials "
			    "and none were found (searched: %s)",
			    registry, a->nfiles > 0 ? a->sources : "nothing");
			goto out;
		}
		hv = basic_header(user, pass);
		if (hv == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		pthread_mutex_lock(&a->lock);
		rc = cache_put(a, reg, ident, NULL, hv, 3600 * 1000);
		pthread_mutex_unlock(&a->lock);
		if (rc != 0)
			goto out;
	} else if (strcasecmp(ch.scheme, "Bearer") == 0) {
		if (h == NULL) {
			rc = al_error_set(
			    AL_EINVAL,
			    "al_auth_challenge: Bearer needs an http client");
			goto out;
		}
		if (user != NULL) {
			cred = basic_header(user, pass);
			if (cred == NULL) {
				rc = al_error_set(AL_ENOMEM, "out of memory");
				goto out;
			}
		}
		if (ch.realm != NULL && ch.realm[0] != '\0') {
			rc = realm_allowed(h, ch.realm, request_url, registry,
			                   cred != NULL);
			if (rc != 0)
				goto out;
		}
		al_log_debug(
		    "auth: requesting a token for '%s' scope '%s' from '%s'",
		    registry, scope != NULL ? scope : "",
		    ch.realm != NULL ? ch.realm : "");
		rc = fetch_token(h, &ch, scope, cred, &token, &ttl_s);
		if (rc != 0)
			goto out;
		hv = al_sprintf("Authorization: Bearer %s", token);
		if (hv == NULL) {
			rc = al_error_set(AL_ENOMEM, "out of memory");
			goto out;
		}
		ttl_ms = ttl_s > TOKEN_MARGIN_S
		             ? (ttl_s - TOKEN_MARGIN_S) * 1000
		             : ttl_s * 500;
		pthread_mutex_lock(&a->lock);
		rc = cache_put(a, reg, ident, scope, hv, ttl_ms);
		pthread_mutex_unlock(&a->lock);
		if (rc != 0)
			goto out;
	} else {
		rc = al_error_set(
		    AL_EUNSUPPORTED,
		    "registry '%s': unsupported authentication scheme '%s'",
		    registry, ch.scheme);
		goto out;
	}
	*header = hv;
	hv = NULL;
out:
	al_auth_params_clear(&ch);
	free(reg);
	free(ident);
	wipe_free(user);
	wipe_free(pass);
	wipe_free(cred);
	wipe_free(token);
	wipe_free(hv);
	return rc;
}
