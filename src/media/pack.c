/* pack.c: pack ids, entry paths, Ed25519 keys and signatures, and the store
 * inventory used for --have deltas. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "airlock/digest.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "json_int.h"
#include "airlock/oci.h"
#include "airlock/pack.h"
#include "pack_int.h"
#include "store_int.h"
#include "array_int.h"

#define KEYFILE_MAX (64 * 1024)

int al_pack__is_hex64(const char *s)
{
	size_t i;

	for (i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		      (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[64] == '\0';
}

int al_pack__is_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		      (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[n] == '\0';
}

int al_pack__blob_algo(const char *path)
{
	if (al_str_startswith(path, "blobs/sha256/") &&
	    al_pack__is_hex(path + 13, 64))
		return AL_DIGEST_SHA256;
	if (al_str_startswith(path, "blobs/sha512/") &&
	    al_pack__is_hex(path + 13, 128))
		return AL_DIGEST_SHA512;
	return 0;
}

int al_pack__load_store_json(json_t **out, const char *path, size_t max)
{
	al_buf b = AL_BUF_INIT(max);
	int rc;

	if ((rc = al_fs_read_file(path, &b)) < 0)
		goto out;
	if ((rc =
	         al_json_parse(out, b.ptr != NULL ? b.ptr : (const uint8_t *)"",
	                       b.len, path)) < 0)
		rc = al_error_wrap(AL_EVERIFY, "store metadata '%s' is damaged",
		                   path);
out:
	al_buf_free(&b);
	return rc;
}

int al_pack_id_valid(const char *id)
{
	size_t i;

	if (id == NULL || id[0] == '\0' || id[0] == '-')
		return 0;
	for (i = 0; id[i] != '\0'; i++) {
		char c = id[i];
		if (i >= AL_PACK_ID_MAX)
			return 0;
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
		      (c >= 'A' && c <= 'Z') || c == '-'))
			return 0;
	}
	return 1;
}

int al_pack__classify(const char *path)
{
	const char *p, *n;
	char hex[65];

	if (strcmp(path, "index.json") == 0)
		return AL_PK_INDEX;
	if (strcmp(path, "airlock/releases.json") == 0)
		return AL_PK_RELEASES;
	if (al_str_startswith(path, "blobs/"))
		return al_pack__blob_algo(path) != 0 ? AL_PK_BLOB : AL_PK_NONE;
	if (!al_str_startswith(path, "signatures/sha256="))
		return AL_PK_NONE;
	p = path + 18;
	if (strlen(p) < 65 || p[64] != '/')
		return AL_PK_NONE;
	memcpy(hex, p, 64);
	hex[64] = '\0';
	if (!al_pack__is_hex64(hex) ||
	    !al_str_startswith(p + 64, "/signature-"))
		return AL_PK_NONE;
	/* n from 1, decimal, no leading zero, at most 4 digits */
	n = p + 64 + 11;
	if (n[0] < '1' || n[0] > '9' || strlen(n) > 4)
		return AL_PK_NONE;
	for (; *n != '\0'; n++)
		if (*n < '0' || *n > '9')
			return AL_PK_NONE;
	return AL_PK_SIG;
}

void al_pack__timestamp(char *out, size_t len)
{
	char b[AL_RFC3339_LEN];

	al_clock_rfc3339(b, al_clock_wall_ms());
	snprintf(out, len, "%s", b);
}

int al_pack__sha256_hex(const void *p, size_t n, char hex[65])
{
	char buf[AL_DIGEST_STRMAX];
	al_digest d;
	int rc;

	if ((rc = al_digest_bytes(&d, AL_DIGEST_SHA256, p, n)) < 0)
		return rc;
	al_digest_hex(&d, buf);
	memcpy(hex, buf, 65);
	return 0;
}

/* Load a PEM key (private or public) of at most KEYFILE_MAX bytes; only
 * Ed25519. */
static int load_key(EVP_PKEY **out, const char *path, int private_key)
{
	al_buf b = AL_BUF_INIT(KEYFILE_MAX);
	EVP_PKEY *key = NULL;
	BIO *bio = NULL;
	int rc;

	if ((rc = al_fs_read_file(path, &b)) < 0)
		goto out;
	bio = BIO_new_mem_buf(b.ptr, (int)b.len);
	if (bio == NULL) {
		rc = al_error_openssl(AL_ENOMEM, "cannot read key '%s'", path);
		goto out;
	}
	key = private_key ? PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL)
	                  : PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL);
	if (key == NULL) {
		rc = al_error_openssl(AL_EPARSE, "'%s' is not a PEM %s key",
		                      path, private_key ? "private" : "public");
		goto out;
	}
	if (EVP_PKEY_get_id(key) != EVP_PKEY_ED25519) {
		rc = al_error_set(AL_EUNSUPPORTED,
		                  "key '%s' is not an Ed25519 key", path);
		goto out;
	}
	*out = key;
	key = NULL;
out:
	if (b.ptr != NULL)
		OPENSSL_cleanse(b.ptr, b.len);
	al_buf_free(&b);
	BIO_free(bio);
	EVP_PKEY_free(key);
	return rc;
}

int al_pack__sign(const char *keyfile, const uint8_t *msg, size_t n,
                  uint8_t sig[AL_PACK_SIGLEN])
{
	EVP_PKEY *key = NULL;
	EVP_MD_CTX *ctx = NULL;
	uint8_t tmp[AL_PACK_SIGLEN];
	size_t len = sizeof(tmp);
	int rc;

	if ((rc = load_key(&key, keyfile, 1)) < 0)
		return rc;
	ctx = EVP_MD_CTX_new();
	if (ctx == NULL ||
	    EVP_DigestSignInit(ctx, NULL, NULL, NULL, key) != 1 ||
	    EVP_DigestSign(ctx, tmp, &len, msg, n) != 1 ||
	    len != AL_PACK_SIGLEN) {
		rc = al_error_openssl(AL_EIO, "cannot sign with '%s'", keyfile);
		goto out;
	}
	memcpy(sig, tmp, AL_PACK_SIGLEN);
out:
	EVP_MD_CTX_free(ctx);
	EVP_PKEY_free(key);
	return rc;
}

int al_pack__verify(const char *pubfile, const uint8_t *msg, size_t n,
                    const uint8_t *sig, size_t siglen)
{
	EVP_PKEY *key = NULL;
	EVP_MD_CTX *ctx = NULL;
	int rc, v;

	if ((rc = load_key(&key, pubfile, 0)) < 0)
		return rc;
	if (siglen != AL_PACK_SIGLEN) {
		rc = al_error_set(
		    AL_EVERIFY,
		    "signature has %zu bytes, an Ed25519 signature has 64",
		    siglen);
		goto out;
	}
	ctx = EVP_MD_CTX_new();
	if (ctx == NULL ||
	    EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, key) != 1) {
		rc = al_error_openssl(AL_EIO, "cannot verify with '%s'",
		                      pubfile);
		goto out;
	}
	v = EVP_DigestVerify(ctx, sig, siglen, msg, n);
	if (v != 1) {
		rc = al_error_openssl(AL_EVERIFY,
		                      "signature does not verify with key '%s'",
		                      pubfile);
		goto out;
	}
out:
	EVP_MD_CTX_free(ctx);
	EVP_PKEY_free(key);
	return rc;
}

int al_pack__key_id(const char *pubfile, char *out, size_t len)
{
	EVP_PKEY *key = NULL;
	unsigned char *der = NULL;
	char hex[65];
	int n, rc;

	if ((rc = load_key(&key, pubfile, 0)) < 0)
		return rc;
	n = i2d_PUBKEY(key, &der);
	if (n <= 0) {
		rc =
		    al_error_openssl(AL_EIO, "cannot encode key '%s'", pubfile);
		goto out;
	}
	if ((rc = al_pack__sha256_hex(der, (size_t)n, hex)) < 0)
		goto out;
	if (snprintf(out, len, "sha256:%s", hex) >= (int)len)
		rc = al_error_set(AL_ELIMIT, "key id buffer too small");
out:
	OPENSSL_free(der);
	EVP_PKEY_free(key);
	return rc;
}

/* Write a PEM of key to path, created exclusively with mode. */
static int write_pem(const char *path, EVP_PKEY *key, int private_key,
                     mode_t mode)
{
	BIO *bio = NULL;
	char *data = NULL;
	long len = 0;
	size_t off = 0;
	int fd = -1, rc = 0;

	bio = BIO_new(BIO_s_mem());
	if (bio == NULL ||
	    (private_key
	         ? PEM_write_bio_PrivateKey(bio, key, NULL, NULL, 0, NULL, NULL)
	         : PEM_write_bio_PUBKEY(bio, key)) != 1) {
		rc = al_error_openssl(AL_EIO, "cannot encode key for '%s'",
		                      path);
		goto out;
	}
	len = BIO_get_mem_data(bio, &data);
	if (len <= 0) {
		rc = al_error_set(AL_EIO, "cannot encode key for '%s'", path);
		goto out;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	          mode);
	if (fd < 0) {
		rc = al_error_errno(errno, "cannot create '%s'", path);
		goto out;
	}
	if (fchmod(fd, mode) != 0) {
		rc = al_error_errno(errno, "cannot set mode of '%s'", path);
		goto out;
	}
	while (off < (size_t)len) {
		ssize_t w = write(fd, data + off, (size_t)len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			rc = al_error_errno(errno, "cannot write '%s'", path);
			goto out;
		}
		off += (size_t)w;
	}
	if (fsync(fd) != 0) {
		rc = al_error_errno(errno, "cannot sync '%s'", path);
		goto out;
	}
out:
	if (fd >= 0 && close(fd) != 0 && rc == 0)
		rc = al_error_errno(errno, "cannot close '%s'", path);
	if (rc < 0 && fd >= 0)
		unlink(path);
	if (data != NULL && len > 0)
		OPENSSL_cleanse(data, (size_t)len);
	BIO_free(bio);
	return rc;
}

int al_pack_keygen(const char *prefix)
{
	EVP_PKEY_CTX *kctx = NULL;
	EVP_PKEY *key = NULL;
	char *priv = NULL, *pub = NULL;
	int rc = 0;

	if (prefix == NULL || prefix[0] == '\0')
		return al_error_set(AL_EINVAL, "empty key prefix");
	priv = al_sprintf("%s.key", prefix);
	pub = al_sprintf("%s.pub", prefix);
	if (priv == NULL || pub == NULL) {
		rc = al_error_oom();
		goto out;
	}
	if (al_fs_exists(priv) == 1 || al_fs_exists(pub) == 1) {
		rc = al_error_set(AL_EEXIST, "'%s' or '%s' already exists",
		                  priv, pub);
		goto out;
	}
	kctx = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL);
	if (kctx == NULL || EVP_PKEY_keygen_init(kctx) != 1 ||
	    EVP_PKEY_keygen(kctx, &key) != 1) {
		rc = al_error_openssl(AL_EIO, "cannot generate an Ed25519 key");
		goto out;
	}
	if ((rc = write_pem(priv, key, 1, 0600)) < 0)
		goto out;
	if ((rc = write_pem(pub, key, 0, 0644)) < 0) {
		unlink(priv);
		goto out;
	}
out:
	EVP_PKEY_free(key);
	EVP_PKEY_CTX_free(kctx);
	free(priv);
	free(pub);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names in dir (not "." or ".."); a missing dir gives none. */
static int list_dir(const char *dir, char ***out, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **v = NULL;
	size_t cnt = 0, cap = 0;
	int rc = 0;

	if (d == NULL) {
		if (errno == ENOENT) {
			*out = NULL;
			*n = 0;
			return 0;
		}
		return al_error_errno(errno, "cannot list '%s'", dir);
	}
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (cnt == cap) {
			size_t nc = cap ? cap * 2 : 64;
			char **g = realloc(v, nc * sizeof(*g));
			if (g == NULL) {
				rc = al_error_oom();
				goto out;
			}
			v = g;
			cap = nc;
		}
		if ((v[cnt] = al_strdup(e->d_name)) == NULL) {
			rc = al_error_oom();
			goto out;
		}
		cnt++;
	}
	if (cnt > 0)
		qsort(v, cnt, sizeof(*v), cmp_str);
	*out = v;
	*n = cnt;
	v = NULL;
out:
	if (v != NULL) {
		while (cnt > 0)
			free(v[--cnt]);
		free(v);
	}
	closedir(d);
	return rc;
}

int al_pack__list_dir(const char *dir, char ***out, size_t *n)
{
	return list_dir(dir, out, n);
}

void al_pack__free_list(char **v, size_t n)
{
	al__strv_free(v, n);
}

int al_pack__walk_signatures(const char *root, al_pack__sig_fn fn, void *ud)
{
	char **names = NULL, **files = NULL;
	size_t nnames = 0, nfiles = 0, i, j;
	char *dir = NULL, *sub = NULL, *path = NULL;
	int rc = 0;

	if ((dir = al_path_join(root, "signatures")) == NULL)
		return al_error_oom();
	if ((rc = list_dir(dir, &names, &nnames)) < 0)
		goto out;
	for (i = 0; rc == 0 && i < nnames; i++) {
		free(sub);
		if ((sub = al_path_join(dir, names[i])) == NULL) {
			rc = al_error_oom();
			goto out;
		}
		al__strv_free(files, nfiles);
		files = NULL;
		nfiles = 0;
		if ((rc = list_dir(sub, &files, &nfiles)) < 0) {
			if (rc != AL_EIO)
				goto out;
			/* not a directory: not a signature (the store check
			 * reports it) */
			al_error_clear();
			rc = 0;
			continue;
		}
		for (j = 0; rc == 0 && j < nfiles; j++) {
			char rel[256];
			struct stat st;
			if (snprintf(rel, sizeof(rel), "signatures/%s/%s",
			             names[i], files[j]) >= (int)sizeof(rel))
				continue;
			if (al_pack__classify(rel) != AL_PK_SIG)
				continue;
			free(path);
			if ((path = al_path_join(sub, files[j])) == NULL) {
				rc = al_error_oom();
				goto out;
			}
			if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
				continue;
			rc = fn(ud, rel, path);
		}
	}
out:
	al__strv_free(names, nnames);
	al__strv_free(files, nfiles);
	free(dir);
	free(sub);
	free(path);
	return rc;
}

/* One signature file into the inventory's "signatures". */
static int inventory_sig(void *ud, const char *rel, const char *path)
{
	json_t *sigs = ud, *o;
	char hex[AL_DIGEST_STRMAX];
	al_digest d;
	int rc;

	if ((rc = al_digest_file(&d, AL_DIGEST_SHA256, path, NULL)) < 0)
		return rc;
	o = json_pack("{s:s, s:s}", "path", rel, "sha256",
	              al_digest_hex(&d, hex));
	if (o == NULL || json_array_append_new(sigs, o) < 0)
		return al_error_oom();
	return 0;
}

/* ---- the quarantine's listing (docs/security.md "Untrusted imports") */

void al_pack_quarantine_list_free(al_quarantined *v, size_t n)
{
	size_t i, j;

	for (i = 0; v != NULL && i < n; i++) {
		for (j = 0; j < v[i].nimages; j++)
			free(v[i].images[j]);
		free(v[i].images);
	}
	free(v);
}

/* What q (one quarantined pack, at root) holds. */
static int describe(const char *root, al_quarantined *q)
{
	al_store_opts o = AL_STORE_OPTS_INIT;
	al_store *qs = NULL;
	al_store_image *imgs = NULL;
	char *p;
	size_t n = 0, i;
	int rc = 0;

	if ((p = al_sprintf("%s/store/airlock/imported/%s.json", root,
	                    q->id)) == NULL)
		return al_error_oom();
	q->complete = al_fs_exists(p) == 1;
	free(p);
	if ((p = al_sprintf("%s/pack/airlock-%s.json.sig", root, q->id)) ==
	    NULL)
		return al_error_oom();
	q->signed_ = al_fs_exists(p) == 1;
	free(p);
	if ((p = al_path_join(root, "store")) == NULL)
		return al_error_oom();
	o.readonly = 1;
	rc = al_store_open(&qs, p, &o);
	free(p);
	if (rc == AL_ENOTFOUND) {
		al_error_clear();
		return 0;
	}
	if (rc < 0 || (rc = al_store_list(qs, &imgs, &n)) < 0)
		goto out;
	if (n > 0 && (q->images = calloc(n, sizeof(*q->images))) == NULL) {
		rc = al_error_oom();
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (imgs[i].name == NULL || imgs[i].name[0] == '\0')
			continue;
		if ((q->images[q->nimages] = al_strdup(imgs[i].name)) == NULL) {
			rc = al_error_oom();
			goto out;
		}
		q->nimages++;
	}
out:
	al_store_images_free(imgs, n);
	al_store_free(qs);
	return rc;
}

int al_pack_quarantine_list(al_store *s, al_quarantined **out, size_t *n)
{
	al_quarantined *v = NULL;
	char *dir, **names = NULL;
	size_t nn = 0, i, m = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if ((dir = al_sprintf("%s/airlock/quarantine", al_store_path(s))) ==
	    NULL)
		return al_error_oom();
	if ((rc = al_pack__list_dir(dir, &names, &nn)) < 0)
		goto out;
	if (nn > 0 && (v = calloc(nn, sizeof(*v))) == NULL) {
		rc = al_error_oom();
		goto out;
	}
	for (i = 0; i < nn; i++) {
		char *root;
		if (!al_pack_id_valid(names[i]))
			continue;
		memcpy(v[m].id, names[i], strlen(names[i]) + 1);
		if ((root = al_path_join(dir, names[i])) == NULL) {
			rc = al_error_oom();
			goto out;
		}
		rc = describe(root, &v[m]);
		free(root);
		m++;
		if (rc < 0)
			goto out;
	}
	*out = v;
	*n = m;
	v = NULL;
out:
	al_pack_quarantine_list_free(v, m);
	al_pack__free_list(names, nn);
	free(dir);
	return rc;
}

/* inv's "quarantined": [{"id","complete","images"}] of
 * al_pack_quarantine_list. */
static int inventory_quarantine(al_store *s, json_t *inv)
{
	al_quarantined *q = NULL;
	json_t *arr = json_array();
	size_t n = 0, i, j;
	int rc;

	if (arr == NULL || json_object_set_new(inv, "quarantined", arr) < 0)
		return al_error_oom();
	if ((rc = al_pack_quarantine_list(s, &q, &n)) < 0)
		return rc;
	for (i = 0; i < n && rc == 0; i++) {
		json_t *imgs = json_array();
		json_t *o =
		    json_pack("{s:s, s:b, s:o}", "id", q[i].id, "complete",
		              q[i].complete, "images", imgs);
		for (j = 0; j < q[i].nimages && o != NULL; j++)
			if (json_array_append_new(
			        imgs, json_string(q[i].images[j])) < 0)
				rc = al_error_oom();
		if (o == NULL || json_array_append_new(arr, o) < 0)
			rc = al_error_oom();
	}
	al_pack_quarantine_list_free(q, n);
	return rc;
}

/*
 * inv's "untrusted": what an import no key verified wrote
 * (al_store_untrusted_list), and those signatures taken out of
 * "signatures", so that a pack made --have this inventory carries them
 * again and a trusted import of it vouches for them.
 */
static int inventory_untrusted(al_store *s, json_t *inv)
{
	al_store_untrusted *v = NULL;
	json_t *sigs = json_object_get(inv, "signatures"), *us, *ut, *ur, *uc,
	       *uh, *uk, *o, *e;
	char ds[AL_DIGEST_STRMAX];
	size_t n = 0, i, j;
	int rc;

	us = json_array();
	ut = json_array();
	ur = json_array();
	uc = json_array();
	uh = json_array();
	uk = json_array();
	if (us == NULL || ut == NULL || ur == NULL || uc == NULL ||
	    uh == NULL || uk == NULL ||
	    json_object_set_new(inv, "untrusted",
	                        json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}",
	                                  "signatures", us, "tags", ut,
	                                  "releases", ur, "catalogs", uc,
	                                  "charts", uh, "sigstore", uk)) < 0)
		return al_error_oom();
	if ((rc = al_store_untrusted_list(s, &v, &n)) < 0)
		return rc;
	for (i = 0; i < n && rc == 0; i++) {
		al_digest_str(&v[i].digest, ds);
		if (v[i].kind == AL_STORE_UNTRUSTED_SIGNATURE) {
			json_array_foreach(sigs, j, e)
			{
				if (strcmp(al_json_str(e, "path"), v[i].path) ==
				    0) {
					json_array_remove(sigs, j);
					break;
				}
			}
			o = json_pack("{s:s, s:s, s:s}", "path", v[i].path,
			              "sha256", v[i].sha256, "pack", v[i].pack);
		} else if (v[i].kind == AL_STORE_UNTRUSTED_RELEASE) {
			o = json_pack("{s:s, s:s, s:s, s:s}", "release", ds,
			              "version", v[i].name, "sha256",
			              v[i].sha256, "pack", v[i].pack);
		} else if (v[i].kind == AL_STORE_UNTRUSTED_CATALOG ||
		           v[i].kind == AL_STORE_UNTRUSTED_CHART ||
		           v[i].kind == AL_STORE_UNTRUSTED_SIGSTORE) {
			/* the record's digest, when it names one */
			o = json_pack("{s:s, s:s?, s:s, s:s}", "name",
			              v[i].name, "digest",
			              v[i].digest.algo != 0 ? ds : NULL,
			              "sha256", v[i].sha256, "pack", v[i].pack);
		} else {
			o = json_pack("{s:s, s:s, s:s}", "name", v[i].name,
			              "digest", ds, "pack", v[i].pack);
		}
		if (o == NULL ||
		    json_array_append_new(
		        v[i].kind == AL_STORE_UNTRUSTED_SIGNATURE  ? us
		        : v[i].kind == AL_STORE_UNTRUSTED_RELEASE  ? ur
		        : v[i].kind == AL_STORE_UNTRUSTED_CATALOG  ? uc
		        : v[i].kind == AL_STORE_UNTRUSTED_CHART    ? uh
		        : v[i].kind == AL_STORE_UNTRUSTED_SIGSTORE ? uk
		                                                   : ut,
		        o) < 0)
			rc = al_error_oom();
	}
	al_store_untrusted_free(v, n);
	return rc;
}

int al_pack__inventory_json(al_store *s, json_t **out)
{
	const char *root = al_store_path(s);
	char **names = NULL, **files = NULL;
	size_t nnames = 0, nfiles = 0, i, j;
	char *dir = NULL, *sub = NULL, *path = NULL;
	json_t *inv = NULL, *blobs, *sigs, *packs;
	char ts[32];
	int rc = 0;

	inv = json_object();
	blobs = json_array();
	sigs = json_array();
	packs = json_array();
	if (inv == NULL ||
	    json_object_set_new(inv, "airlockInventory", json_integer(1)) < 0 ||
	    json_object_set_new(inv, "blobs", blobs) < 0 ||
	    json_object_set_new(inv, "signatures", sigs) < 0 ||
	    json_object_set_new(inv, "packs", packs) < 0)
		goto oom;
	al_pack__timestamp(ts, sizeof(ts));
	if (json_object_set_new(inv, "created", json_string(ts)) < 0 ||
	    json_object_set_new(inv, "tool",
	                        json_string("airlock " AL_VERSION_STRING)) < 0)
		goto oom;

	for (j = 0; j < 2; j++) {
		const char *alg = j == 0 ? "sha256" : "sha512";
		size_t hl = j == 0 ? 64 : 128;
		free(dir);
		if ((dir = al_sprintf("%s/blobs/%s", root, alg)) == NULL)
			goto oom;
		if ((rc = list_dir(dir, &names, &nnames)) < 0)
			goto out;
		for (i = 0; i < nnames; i++) {
			char d[AL_DIGEST_STRMAX + 8];
			if (!al_pack__is_hex(names[i], hl))
				continue;
			if (snprintf(d, sizeof(d), "%s:%s", alg, names[i]) >=
			    (int)sizeof(d))
				goto oom;
			if (json_array_append_new(blobs, json_string(d)) < 0)
				goto oom;
		}
		al__strv_free(names, nnames);
		names = NULL;
		nnames = 0;
	}
	free(dir);
	dir = NULL;

	if ((rc = al_pack__walk_signatures(root, inventory_sig, sigs)) < 0)
		goto out;

	if ((dir = al_path_join(root, "airlock/imported")) == NULL)
		goto oom;
	if ((rc = list_dir(dir, &names, &nnames)) < 0)
		goto out;
	for (i = 0; i < nnames; i++) {
		char id[AL_PACK_ID_MAX + 8];
		size_t l = strlen(names[i]);
		if (l <= 5 || l - 5 > AL_PACK_ID_MAX ||
		    !al_str_endswith(names[i], ".json"))
			continue;
		memcpy(id, names[i], l - 5);
		id[l - 5] = '\0';
		if (!al_pack_id_valid(id))
			continue;
		if (json_array_append_new(packs, json_string(id)) < 0)
			goto oom;
	}
	/* the operator catalogs and Helm charts it records (store_meta.c) */
	if ((rc = al_store__kinds_inventory(s, inv)) < 0)
		goto out;
	/* packs held in the quarantine: not in "packs", never in the store */
	if ((rc = inventory_quarantine(s, inv)) < 0)
		goto out;
	if ((rc = inventory_untrusted(s, inv)) < 0)
		goto out;
	*out = inv;
	inv = NULL;
	goto out;
oom:
	rc = al_error_oom();
out:
	al__strv_free(names, nnames);
	al__strv_free(files, nfiles);
	free(dir);
	free(sub);
	free(path);
	json_decref(inv);
	return rc;
}

int al_pack_inventory(al_store *s, char **json, size_t *len)
{
	json_t *inv = NULL;
	char *txt = NULL, *line = NULL;
	int rc;

	if ((rc = al_pack__inventory_json(s, &inv)) < 0)
		return rc;
	if ((txt = al_json_dump(inv, 1)) == NULL ||
	    (line = al_sprintf("%s\n", txt)) == NULL) {
		rc = al_error_oom();
		goto out;
	}
	if (len != NULL)
		*len = strlen(line);
	*json = line;
	line = NULL;
out:
	free(line);
	free(txt);
	json_decref(inv);
	return rc;
}

/* 1 when d is in s, or in also (when given). */
static int has_blob2(al_store *s, al_store *also, const al_digest *d)
{
	return al_store_has_blob(s, d, NULL) == 1 ||
	       (also != NULL && al_store_has_blob(also, d, NULL) == 1);
}

int al_pack__read_blob2(al_store *s, al_store *also, const al_digest *d,
                        al_buf *b)
{
	if (also != NULL && al_store_has_blob(s, d, NULL) != 1)
		return al_store_read_blob(also, d, b);
	return al_store_read_blob(s, d, b);
}

int al_pack__image_complete(al_store *s, const al_digest *d,
                            const char *media_type, int depth)
{
	return al_pack__image_complete_in(s, NULL, d, media_type, depth);
}

int al_pack__image_complete_in(al_store *s, al_store *also, const al_digest *d,
                               const char *media_type, int depth)
{
	al_buf b = AL_BUF_INIT(AL_OCI_MANIFEST_MAX);
	al_manifest m;
	size_t i;
	int ok = 0;

	memset(&m, 0, sizeof(m));
	if (depth > AL_PACK_IMAGE_DEPTH_MAX || !has_blob2(s, also, d))
		return 0;
	if (media_type != NULL && !al_media_type_is_manifest(media_type))
		return 1;
	if (al_pack__read_blob2(s, also, d, &b) < 0 ||
	    al_manifest_parse(&m, b.ptr, b.len, media_type, "manifest") < 0) {
		al_error_clear();
		goto out;
	}
	if (m.is_index) {
		for (i = 0; i < m.nmanifests; i++)
			if (!al_pack__image_complete_in(
			        s, also, &m.manifests[i].digest,
			        m.manifests[i].media_type, depth + 1))
				goto out;
	} else {
		if (!has_blob2(s, also, &m.config.digest))
			goto out;
		for (i = 0; i < m.nlayers; i++) {
			if (m.layers[i].media_type != NULL &&
			    strstr(m.layers[i].media_type,
			           "nondistributable") != NULL)
				continue;
			if (!has_blob2(s, also, &m.layers[i].digest))
				goto out;
		}
	}
	ok = 1;
out:
	al_manifest_clear(&m);
	al_buf_free(&b);
	return ok;
}
