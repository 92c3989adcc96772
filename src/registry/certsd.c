/* certsd.c: certs.d directories (containers-certs.d(5)): per-registry CA
 * certificates and client key pairs, and SSL_CERT_DIR-style CA dirs. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/log.h"
#include "certsd_int.h"
#include "array_int.h"

void al_certs_host_clear(al_certs_host *c)
{
	if (c == NULL)
		return;
	free(c->dir);
	al_buf_free(&c->ca_pem);
	free(c->client_cert);
	free(c->client_key);
	memset(c, 0, sizeof(*c));
}

/* Append the regular file at path (symlinks followed: /etc/ssl/certs and
 * certs.d trees are made of them) to out, then a newline. */
int al_certs_read_file(const char *path, al_buf *out)
{
	char chunk[16384];
	struct stat st;
	size_t total = 0;
	int fd, rc = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return al_error_set(errno == ENOENT ? AL_ENOTFOUND : AL_EIO,
		                    "cannot open '%s': %s", path,
		                    strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return al_error_set(AL_EIO, "'%s' is not a regular file", path);
	}
	for (;;) {
		ssize_t r = read(fd, chunk, sizeof(chunk));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = al_error_set(AL_EIO, "cannot read '%s': %s", path,
			                  strerror(errno));
			break;
		}
		if (r == 0)
			break;
		total += (size_t)r;
		if (total > AL_CERTS_FILE_MAX ||
		    al_buf_append(out, chunk, (size_t)r) < 0) {
			rc = al_error_set(
			    AL_ELIMIT,
			    "'%s': CA certificates larger than the "
			    "%d bytes allowed",
			    path,
			    total > AL_CERTS_FILE_MAX ? AL_CERTS_FILE_MAX
			                              : AL_CERTS_TOTAL_MAX);
			break;
		}
	}
	close(fd);
	if (rc == 0 && al_buf_append(out, "\n", 1) < 0)
		rc = al_error_set(AL_ELIMIT, "CA certificates too large");
	return rc;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entries of dir (not "." or ".."), sorted as os.ReadDir sorts.
 * AL_ENOTFOUND when dir does not exist. */
static int list_dir(const char *dir, char ***names, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **v = NULL, **grown;
	size_t cnt = 0, i;
	int rc = 0;

	*names = NULL;
	*n = 0;
	if (d == NULL) {
		if (errno == ENOENT || errno == ENOTDIR)
			return AL_ENOTFOUND;
		if (errno == EACCES) {
			al_log_debug("tls: skipping '%s': %s", dir,
			             strerror(errno));
			return AL_ENOTFOUND;
		}
		return al_error_set(AL_EIO, "cannot read directory '%s': %s",
		                    dir, strerror(errno));
	}
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (cnt >= AL_CERTS_DIR_FILES_MAX) {
			rc = al_error_set(AL_ELIMIT,
			                  "'%s' has more than %d entries", dir,
			                  AL_CERTS_DIR_FILES_MAX);
			goto out;
		}
		grown = realloc(v, (cnt + 1) * sizeof(*v));
		if (grown == NULL) {
			rc = al_error_oom();
			goto out;
		}
		v = grown;
		if ((v[cnt] = al_strdup(e->d_name)) == NULL) {
			rc = al_error_oom();
			goto out;
		}
		cnt++;
	}
	if (cnt > 0)
		qsort(v, cnt, sizeof(*v), cmp_names);
	*names = v;
	*n = cnt;
	v = NULL;
out:
	closedir(d);
	if (v != NULL) {
		for (i = 0; i < cnt; i++)
			free(v[i]);
		free(v);
	}
	return rc;
}

static int has_name(char *const *v, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i], name) == 0)
			return 1;
	return 0;
}

/* tlsclientconfig.SetupCertificates over the entries of dir. */
static int read_certs_dir(const char *dir, al_certs_host *out)
{
	char **names = NULL, *path = NULL, *other = NULL;
	size_t n = 0, i, bl;
	int rc;

	if ((rc = list_dir(dir, &names, &n)) < 0)
		return rc == AL_ENOTFOUND ? 0 : rc;
	for (i = 0; i < n && rc == 0; i++) {
		const char *nm = names[i];

		free(path);
		free(other);
		other = NULL;
		bl = strlen(nm);
		if ((path = al_sprintf("%s/%s", dir, nm)) == NULL) {
			rc = al_error_oom();
			break;
		}
		if (al_str_endswith(nm, ".crt")) {
			al_log_debug("tls: CA certificate '%s'", path);
			rc = al_certs_read_file(path, &out->ca_pem);
			if (rc == AL_ENOTFOUND) { /* removed since listed */
				al_error_clear();
				rc = 0;
			}
		} else if (al_str_endswith(nm, ".cert")) {
			other = al_sprintf("%.*s.key", (int)(bl - 5), nm);
			if (other == NULL) {
				rc = al_error_oom();
			} else if (!has_name(names, n, other)) {
				rc = al_error_set(
				    AL_EINVAL,
				    "'%s': missing key %s for client "
				    "certificate %s (CA certificates "
				    "end in .crt)",
				    dir, other, nm);
			} else if (out->npairs++ == 0) {
				out->client_cert = al_strdup(path);
				out->client_key =
				    al_sprintf("%s/%s", dir, other);
				if (out->client_cert == NULL ||
				    out->client_key == NULL)
					rc = al_error_oom();
			}
		} else if (al_str_endswith(nm, ".key")) {
			other = al_sprintf("%.*s.cert", (int)(bl - 4), nm);
			if (other == NULL)
				rc = al_error_oom();
			else if (!has_name(names, n, other))
				rc = al_error_set(
				    AL_EINVAL,
				    "'%s': missing client certificate "
				    "%s for key %s",
				    dir, other, nm);
		}
	}
	if (rc == 0 && out->npairs > 1)
		al_log_warn("'%s' holds %u client certificates: airlock uses "
		            "'%s' only",
		            dir, out->npairs, out->client_cert);
	free(path);
	free(other);
	al__strv_free(names, n);
	return rc;
}

int al_certs_for_host(const char *hostport, al_certs_host *out)
{
	const char *env = getenv("AIRLOCK_CERTS_D");
	const char *list =
	    env != NULL && env[0] != '\0' ? env : AL_CERTS_D_DEFAULT;
	const char *home = getenv("HOME"), *p = list;
	struct stat st;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	al_buf_init(&out->ca_pem, AL_CERTS_TOTAL_MAX);
	if (hostport == NULL || hostport[0] == '\0' ||
	    strchr(hostport, '/') != NULL || strcmp(hostport, "..") == 0 ||
	    strcmp(hostport, ".") == 0)
		return al_error_set(AL_EINVAL, "bad registry host '%s'",
		                    hostport != NULL ? hostport : "");
	while (*p != '\0' && out->dir == NULL) {
		size_t n = strcspn(p, ":");
		char *cand = NULL;

		if (n > 0 && p[0] == '~' && (n == 1 || p[1] == '/')) {
			if (home != NULL && home[0] != '\0')
				cand =
				    al_sprintf("%s%.*s/%s", home, (int)(n - 1),
				               p + 1, hostport);
		} else if (n > 0) {
			cand = al_sprintf("%.*s/%s", (int)n, p, hostport);
		}
		if (cand != NULL && stat(cand, &st) == 0)
			out->dir = cand;
		else
			free(cand);
		p += n;
		if (*p == ':')
			p++;
	}
	if (out->dir == NULL)
		return 0;
	al_log_debug("tls: certificates for '%s' from '%s'", hostport,
	             out->dir);
	rc = read_certs_dir(out->dir, out);
	return rc;
}

int al_certs_read_dirs(const char *dirs, al_buf *out)
{
	const char *p = dirs;
	int rc = 0;

	while (p != NULL && *p != '\0' && rc == 0) {
		size_t n = strcspn(p, ":"), i, cnt = 0;
		char *dir = al_strndup(p, n), **names = NULL;

		if (dir == NULL)
			return al_error_oom();
		rc = n > 0 ? list_dir(dir, &names, &cnt) : AL_ENOTFOUND;
		if (rc == AL_ENOTFOUND)
			rc = 0;
		for (i = 0; i < cnt && rc == 0; i++) {
			char *path = al_sprintf("%s/%s", dir, names[i]);
			struct stat st;

			if (path == NULL) {
				rc = al_error_oom();
			} else if (stat(path, &st) == 0 &&
			           S_ISREG(st.st_mode)) {
				rc = al_certs_read_file(path, out);
				if (rc == AL_ENOTFOUND) {
					al_error_clear();
					rc = 0;
				}
			}
			free(path);
		}
		al__strv_free(names, cnt);
		free(dir);
		p += n;
		if (*p == ':')
			p++;
	}
	return rc;
}

int al_certs_for_dir(const char *dir, al_certs_host *out)
{
	struct stat st;

	memset(out, 0, sizeof(*out));
	al_buf_init(&out->ca_pem, AL_CERTS_TOTAL_MAX);
	if (dir == NULL || dir[0] == '\0')
		return al_error_set(AL_EINVAL, "empty certificate directory");
	if (stat(dir, &st) != 0)
		return al_error_errno(errno, "certificate directory '%s'", dir);
	if (!S_ISDIR(st.st_mode))
		return al_error_set(AL_EINVAL,
		                    "certificate directory '%s' is not a "
		                    "directory",
		                    dir);
	if ((out->dir = al_strdup(dir)) == NULL)
		return al_error_oom();
	al_log_debug("tls: certificates from '%s' (--cert-dir)", dir);
	return read_certs_dir(out->dir, out);
}
