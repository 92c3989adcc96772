/* digest.c: digest strings and streaming SHA-256/512 through OpenSSL EVP. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "airlock/digest.h"
#include "airlock/error.h"
#include "airlock/fs.h"

struct al_hasher {
	EVP_MD_CTX *ctx;
	al_digest_algo algo;
};

static const EVP_MD *algo_md(al_digest_algo algo)
{
	switch (algo) {
	case AL_DIGEST_SHA256:
		return EVP_sha256();
	case AL_DIGEST_SHA512:
		return EVP_sha512();
	}
	return NULL;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int al_digest_parse(al_digest *out, const char *s, size_t n)
{
	const char *colon = memchr(s, ':', n);
	al_digest d;
	size_t alen, hexlen, i;

	memset(&d, 0, sizeof(d));
	if (colon == NULL)
		return al_error_set(
		    AL_EPARSE, "invalid digest '%.*s': expected algorithm:hex",
		    (int)(n > 80 ? 80 : n), s);
	alen = (size_t)(colon - s);
	hexlen = n - alen - 1;
	if (alen == 6 && memcmp(s, "sha256", 6) == 0) {
		d.algo = AL_DIGEST_SHA256;
		d.len = 32;
	} else if (alen == 6 && memcmp(s, "sha512", 6) == 0) {
		d.algo = AL_DIGEST_SHA512;
		d.len = 64;
	} else {
		for (i = 0; i < alen; i++) {
			char c = s[i];
			if (!((c >= 'a' && c <= 'z') ||
			      (c >= '0' && c <= '9') || c == '+' || c == '.' ||
			      c == '_' || c == '-'))
				return al_error_set(
				    AL_EPARSE,
				    "invalid digest '%.*s': bad algorithm",
				    (int)(n > 80 ? 80 : n), s);
		}
		if (alen == 0)
			return al_error_set(
			    AL_EPARSE, "invalid digest '%.*s': empty algorithm",
			    (int)(n > 80 ? 80 : n), s);
		return al_error_set(AL_EUNSUPPORTED,
		                    "unsupported digest algorithm '%.*s'",
		                    (int)(alen > 32 ? 32 : alen), s);
	}
	if (hexlen != d.len * 2)
		return al_error_set(
		    AL_EPARSE, "invalid digest '%.*s': expected %zu hex digits",
		    (int)(n > 160 ? 160 : n), s, d.len * 2);
	for (i = 0; i < d.len; i++) {
		int hi = hexval(colon[1 + 2 * i]),
		    lo = hexval(colon[2 + 2 * i]);
		if (hi < 0 || lo < 0)
			return al_error_set(AL_EPARSE,
			                    "invalid digest '%.*s': hex digits "
			                    "must be lowercase 0-9a-f",
			                    (int)(n > 160 ? 160 : n), s);
		d.bytes[i] = (uint8_t)(hi << 4 | lo);
	}
	*out = d;
	return 0;
}

int al_digest_parse_str(al_digest *out, const char *s)
{
	if (s == NULL)
		return al_error_set(AL_EPARSE, "missing digest");
	return al_digest_parse(out, s, strlen(s));
}

static void hex_into(const al_digest *d, char *out)
{
	static const char hx[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < d->len && i < 64; i++) {
		out[2 * i] = hx[d->bytes[i] >> 4];
		out[2 * i + 1] = hx[d->bytes[i] & 15];
	}
	out[2 * i] = '\0';
}

char *al_digest_hex(const al_digest *d, char out[AL_DIGEST_STRMAX])
{
	hex_into(d, out);
	return out;
}

char *al_digest_str(const al_digest *d, char out[AL_DIGEST_STRMAX])
{
	const char *name = al_digest_algo_name(d->algo);
	size_t nl = strlen(name);

	memcpy(out, name, nl);
	out[nl] = ':';
	hex_into(d, out + nl + 1);
	return out;
}

const char *al_digest_algo_name(al_digest_algo algo)
{
	return algo == AL_DIGEST_SHA512 ? "sha512" : "sha256";
}

int al_digest_equal(const al_digest *a, const al_digest *b)
{
	return a->algo == b->algo && a->len == b->len &&
	       memcmp(a->bytes, b->bytes, a->len) == 0;
}

int al_hasher_new(al_hasher **out, al_digest_algo algo)
{
	al_hasher *h;
	const EVP_MD *md = algo_md(algo);

	if (md == NULL)
		return al_error_set(AL_EINVAL, "unknown digest algorithm");
	h = calloc(1, sizeof(*h));
	if (h == NULL)
		return al_error_oom();
	h->algo = algo;
	h->ctx = EVP_MD_CTX_new();
	if (h->ctx == NULL || EVP_DigestInit_ex(h->ctx, md, NULL) != 1) {
		al_hasher_free(h);
		return al_error_openssl(AL_ENOMEM, "cannot initialise %s",
		                        al_digest_algo_name(algo));
	}
	*out = h;
	return 0;
}

int al_hasher_update(al_hasher *h, const void *p, size_t n)
{
	if (n > 0 && EVP_DigestUpdate(h->ctx, p, n) != 1)
		return al_error_openssl(AL_EIO, "digest update failed");
	return 0;
}

int al_hasher_final(al_hasher *h, al_digest *out)
{
	unsigned int len = 0;
	al_digest d;

	memset(&d, 0, sizeof(d));
	if (EVP_DigestFinal_ex(h->ctx, d.bytes, &len) != 1)
		return al_error_openssl(AL_EIO, "digest final failed");
	d.algo = h->algo;
	d.len = len;
	if (EVP_DigestInit_ex(h->ctx, algo_md(h->algo), NULL) != 1)
		return al_error_openssl(AL_EIO, "digest reset failed");
	*out = d;
	return 0;
}

void al_hasher_free(al_hasher *h)
{
	if (h == NULL)
		return;
	EVP_MD_CTX_free(h->ctx);
	free(h);
}

int al_digest_bytes(al_digest *out, al_digest_algo algo, const void *p,
                    size_t n)
{
	al_hasher *h = NULL;
	int rc;

	if ((rc = al_hasher_new(&h, algo)) < 0)
		return rc;
	if ((rc = al_hasher_update(h, p, n)) == 0)
		rc = al_hasher_final(h, out);
	al_hasher_free(h);
	return rc;
}

int al_digest_file(al_digest *out, al_digest_algo algo, const char *path,
                   uint64_t *size)
{
	enum { CHUNK = 256 * 1024 };
	al_hasher *h = NULL;
	uint8_t *buf = NULL;
	uint64_t total = 0;
	al_digest d;
	int fd, rc;

	/* never blocks on a FIFO or device swapped in for the file */
	if ((rc = al_fs_open_regular(&fd, path, NULL)) < 0)
		return rc;
	buf = malloc(CHUNK);
	if (buf == NULL) {
		rc = al_error_oom();
		goto out;
	}
	if ((rc = al_hasher_new(&h, algo)) < 0)
		goto out;
	for (;;) {
		size_t r;
		if ((rc = al_fd_read(fd, buf, CHUNK, &r, path)) < 0)
			goto out;
		if (r == 0)
			break;
		if ((rc = al_hasher_update(h, buf, r)) < 0)
			goto out;
		total += r;
	}
	if ((rc = al_hasher_final(h, &d)) < 0)
		goto out;
	*out = d;
	if (size != NULL)
		*size = total;
out:
	al_hasher_free(h);
	free(buf);
	close(fd);
	return rc;
}

struct al_hash_worker {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	al_hasher *h;
	const void *p;
	size_t n;
	int pending;     /* a job was submitted and is not finished */
	int outstanding; /* a job was submitted and not yet waited for */
	int stop;
	int rc;
	char msg[512];
};

static void *hash_worker_main(void *arg)
{
	al_hash_worker *hw = arg;

	pthread_mutex_lock(&hw->mu);
	for (;;) {
		int rc;
		while (!hw->pending && !hw->stop)
			pthread_cond_wait(&hw->cv, &hw->mu);
		if (hw->stop)
			break;
		pthread_mutex_unlock(&hw->mu);
		rc = al_hasher_update(hw->h, hw->p, hw->n);
		pthread_mutex_lock(&hw->mu);
		hw->rc = rc;
		if (rc < 0)
			snprintf(hw->msg, sizeof(hw->msg), "%s",
			         al_error_message());
		hw->pending = 0;
		pthread_cond_broadcast(&hw->cv);
	}
	pthread_mutex_unlock(&hw->mu);
	return NULL;
}

int al_hash_worker_new(al_hash_worker **out)
{
	al_hash_worker *hw = calloc(1, sizeof(*hw));

	*out = NULL;
	if (hw == NULL)
		return al_error_oom();
	if (pthread_mutex_init(&hw->mu, NULL) != 0) {
		free(hw);
		return al_error_set(AL_ENOMEM, "cannot create a mutex");
	}
	if (pthread_cond_init(&hw->cv, NULL) != 0) {
		pthread_mutex_destroy(&hw->mu);
		free(hw);
		return al_error_set(AL_ENOMEM,
		                    "cannot create a condition variable");
	}
	if (pthread_create(&hw->th, NULL, hash_worker_main, hw) != 0) {
		pthread_cond_destroy(&hw->cv);
		pthread_mutex_destroy(&hw->mu);
		free(hw);
		return al_error_set(AL_ENOMEM,
		                    "cannot start the hashing thread");
	}
	*out = hw;
	return 0;
}

int al_hash_worker_submit(al_hash_worker *hw, al_hasher *h, const void *p,
                          size_t n)
{
	pthread_mutex_lock(&hw->mu);
	if (hw->outstanding) {
		pthread_mutex_unlock(&hw->mu);
		return al_error_set(
		    AL_EINVAL,
		    "al_hash_worker_submit: the last job was not waited for");
	}
	hw->h = h;
	hw->p = p;
	hw->n = n;
	hw->rc = 0;
	hw->pending = 1;
	hw->outstanding = 1;
	pthread_cond_broadcast(&hw->cv);
	pthread_mutex_unlock(&hw->mu);
	return 0;
}

int al_hash_worker_wait(al_hash_worker *hw)
{
	int rc;

	pthread_mutex_lock(&hw->mu);
	while (hw->pending)
		pthread_cond_wait(&hw->cv, &hw->mu);
	rc = hw->rc;
	hw->outstanding = 0;
	hw->h = NULL;
	hw->p = NULL;
	pthread_mutex_unlock(&hw->mu);
	if (rc < 0)
		return al_error_set(rc, "%s", hw->msg);
	return 0;
}

void al_hash_worker_free(al_hash_worker *hw)
{
	if (hw == NULL)
		return;
	pthread_mutex_lock(&hw->mu);
	while (hw->pending)
		pthread_cond_wait(&hw->cv, &hw->mu);
	hw->stop = 1;
	pthread_cond_broadcast(&hw->cv);
	pthread_mutex_unlock(&hw->mu);
	pthread_join(hw->th, NULL);
	pthread_cond_destroy(&hw->cv);
	pthread_mutex_destroy(&hw->mu);
	free(hw);
}
