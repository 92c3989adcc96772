/* serve_cert.c: al_serve_make_cert: a self-signed CA and a server certificate
 * it signed, for airlock serve --make-cert (docs/serve.md). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/serve.h"

#define CA_DAYS 3650
#define SERVER_DAYS 825 /* the longest a TLS client accepts for a leaf */

static int ossl_fail(const char *what)
{
	return al_error_set(AL_EIO, "cannot make the certificates: %s", what);
}

static int add_ext(X509 *issuer, X509 *cert, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *ext;
	int ok;

	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
	if ((ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value)) == NULL)
		return ossl_fail("an X.509 extension");
	ok = X509_add_ext(cert, ext, -1);
	X509_EXTENSION_free(ext);
	return ok == 1 ? 0 : ossl_fail("an X.509 extension");
}

/* An unsigned certificate for key, named cn, issued by issuer (NULL: by
 * itself). */
static int make_cert(X509 **out, EVP_PKEY *key, const char *cn, X509 *issuer,
                     long days)
{
	X509 *x = X509_new();
	X509_NAME *name;
	unsigned char serial[16];
	BIGNUM *bn = NULL;
	int rc = 0;

	if (x == NULL || RAND_bytes(serial, sizeof(serial)) != 1) {
		rc = ossl_fail("out of memory or entropy");
		goto out;
	}
	serial[0] &= 0x7f; /* a positive serial */
	if (X509_set_version(x, 2) != 1 ||
	    (bn = BN_bin2bn(serial, sizeof(serial), NULL)) == NULL ||
	    BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) == NULL ||
	    X509_gmtime_adj(X509_getm_notBefore(x), -3600) == NULL ||
	    X509_gmtime_adj(X509_getm_notAfter(x), days * 86400L) == NULL ||
	    X509_set_pubkey(x, key) != 1 ||
	    (name = X509_get_subject_name(x)) == NULL ||
	    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
	                               (const unsigned char *)cn, -1, -1,
	                               0) != 1 ||
	    X509_set_issuer_name(x, issuer != NULL
	                                ? X509_get_subject_name(issuer)
	                                : name) != 1) {
		rc = ossl_fail("the certificate fields");
		goto out;
	}
	if ((rc = add_ext(issuer != NULL ? issuer : x, x,
	                  NID_subject_key_identifier, "hash")) < 0)
		goto out;
	if (issuer != NULL &&
	    (rc = add_ext(issuer, x, NID_authority_key_identifier,
	                  "keyid:always")) < 0)
		goto out;
	*out = x;
	x = NULL;
out:
	BN_free(bn);
	X509_free(x);
	return rc;
}

/* Write p (n bytes) to DIR/name, new (O_EXCL), fsynced, mode. */
static int write_new(const char *dir, const char *name, const char *p, size_t n,
                     mode_t mode)
{
	char *path = al_path_join(dir, name);
	int fd, rc = 0;
	ssize_t w;

	if (path == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	          mode);
	if (fd < 0) {
		rc = al_error_set(errno == EEXIST ? AL_EEXIST : AL_EIO,
		                  "cannot create '%s': %s", path,
		                  strerror(errno));
		goto out;
	}
	while (n > 0) {
		if ((w = write(fd, p, n)) < 0) {
			if (errno == EINTR)
				continue;
			rc = al_error_set(AL_EIO, "cannot write '%s': %s", path,
			                  strerror(errno));
			break;
		}
		p += w;
		n -= (size_t)w;
	}
	if (rc == 0 && fsync(fd) != 0)
		rc = al_error_set(AL_EIO, "cannot write '%s': %s", path,
		                  strerror(errno));
	close(fd);
out:
	free(path);
	return rc;
}

static int write_pem(const char *dir, const char *name, X509 *cert,
                     EVP_PKEY *key)
{
	BIO *bio = BIO_new(BIO_s_mem());
	char *p = NULL;
	long n;
	int rc;

	if (bio == NULL ||
	    (cert != NULL ? PEM_write_bio_X509(bio, cert)
	                  : PEM_write_bio_PrivateKey(bio, key, NULL, NULL, 0,
	                                             NULL, NULL)) != 1 ||
	    (n = BIO_get_mem_data(bio, &p)) <= 0) {
		BIO_free(bio);
		return ossl_fail("PEM encoding");
	}
	rc = write_new(dir, name, p, (size_t)n, cert != NULL ? 0644 : 0600);
	OPENSSL_cleanse(p, (size_t)n);
	BIO_free(bio);
	return rc;
}

/* "DNS:a,IP:127.0.0.1,..." for the subjectAltName of hosts. */
static int alt_names(const char *const *hosts, size_t n, char **out)
{
	al_buf b = AL_BUF_INIT(64u << 10);
	unsigned char bin[16];
	size_t i;
	int rc = 0;

	for (i = 0; i < n && rc == 0; i++) {
		int ip = inet_pton(AF_INET, hosts[i], bin) == 1 ||
		         inet_pton(AF_INET6, hosts[i], bin) == 1;

		if (!ip && (hosts[i][0] == '\0' ||
		            strpbrk(hosts[i], ",:/ \n") != NULL))
			rc = al_error_set(AL_EINVAL,
			                  "'%s' is not a host name or address",
			                  hosts[i]);
		else
			rc = al_buf_printf(&b, "%s%s:%s", i > 0 ? "," : "",
			                   ip ? "IP" : "DNS", hosts[i]);
	}
	if (rc == 0 && (*out = al_buf_detach(&b, NULL)) == NULL)
		rc = al_error_set(AL_ENOMEM, "out of memory");
	al_buf_free(&b);
	return rc;
}

int al_serve_make_cert(const char *dir, const char *const *hosts, size_t nhosts,
                       char **ca_path)
{
	EVP_PKEY *ca_key = NULL, *srv_key = NULL;
	X509 *ca = NULL, *srv = NULL;
	char *alt = NULL, *cap = NULL;
	int rc;

	if (nhosts == 0)
		return al_error_set(AL_EINVAL, "--make-cert wants at least one "
		                               "host name or address");
	if ((rc = alt_names(hosts, nhosts, &alt)) < 0 ||
	    (rc = al_fs_mkdir_p(dir, 0755)) < 0)
		goto out;
	if ((ca_key = EVP_EC_gen("P-256")) == NULL ||
	    (srv_key = EVP_EC_gen("P-256")) == NULL) {
		rc = ossl_fail("key generation");
		goto out;
	}
	if ((rc = make_cert(&ca, ca_key, "airlock serve CA", NULL, CA_DAYS)) <
	        0 ||
	    (rc = add_ext(ca, ca, NID_basic_constraints, "critical,CA:TRUE")) <
	        0 ||
	    (rc = add_ext(ca, ca, NID_key_usage,
	                  "critical,keyCertSign,cRLSign")) < 0)
		goto out;
	if (X509_sign(ca, ca_key, EVP_sha256()) == 0) {
		rc = ossl_fail("signing the CA");
		goto out;
	}
	if ((rc = make_cert(&srv, srv_key, hosts[0], ca, SERVER_DAYS)) < 0 ||
	    (rc = add_ext(ca, srv, NID_basic_constraints,
	                  "critical,CA:FALSE")) < 0 ||
	    (rc = add_ext(ca, srv, NID_key_usage,
	                  "critical,digitalSignature")) < 0 ||
	    (rc = add_ext(ca, srv, NID_ext_key_usage, "serverAuth")) < 0 ||
	    (rc = add_ext(ca, srv, NID_subject_alt_name, alt)) < 0)
		goto out;
	if (X509_sign(srv, ca_key, EVP_sha256()) == 0) {
		rc = ossl_fail("signing the server certificate");
		goto out;
	}
	if ((rc = write_pem(dir, "ca.key", NULL, ca_key)) < 0 ||
	    (rc = write_pem(dir, "ca.crt", ca, NULL)) < 0 ||
	    (rc = write_pem(dir, "server.key", NULL, srv_key)) < 0 ||
	    (rc = write_pem(dir, "server.crt", srv, NULL)) < 0)
		goto out;
	if ((cap = al_path_join(dir, "ca.crt")) == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	*ca_path = cap;
out:
	EVP_PKEY_free(ca_key);
	EVP_PKEY_free(srv_key);
	X509_free(ca);
	X509_free(srv);
	free(alt);
	return rc;
}
