/* test_serve.c: unit tests for airlock serve's pieces: digest checks, Range
 * parsing, the name table under the push mapping, and --make-cert's CA and
 * server certificate. */
/* al-tier: quick */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/serve.h"
#include "airlock/store.h"
#include "serve_int.h"
#include "al_test.h"

static void test_serve__digest_valid_is_strict(void)
{
	CU_ASSERT_TRUE(
	    al_serve__digest_valid("sha256:"
	                           "0123456789abcdef0123456789abcdef0123456789a"
	                           "bcdef0123456789abcdef"));
	CU_ASSERT_FALSE(
	    al_serve__digest_valid("sha256:"
	                           "0123456789ABCDEF0123456789abcdef0123456789a"
	                           "bcdef0123456789abcdef"));
	CU_ASSERT_FALSE(al_serve__digest_valid(
	    "sha256:"
	    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde"));
	CU_ASSERT_FALSE(
	    al_serve__digest_valid("sha256:"
	                           "0123456789abcdef0123456789abcdef0123456789a"
	                           "bcdef0123456789abcdef0"));
	CU_ASSERT_FALSE(al_serve__digest_valid("sha512:00"));
	CU_ASSERT_FALSE(al_serve__digest_valid(
	    "sha256:../../../../../../../../../../../../../../../../index.json"
	    "aaaaaaaaaaaa"));
	CU_ASSERT_FALSE(al_serve__digest_valid(""));
}

static void test_serve__range_forms(void)
{
	uint64_t off = 99, len = 99;

	CU_ASSERT_EQUAL(al_serve__parse_range("bytes=10-19", 100, &off, &len),
	                1);
	CU_ASSERT_EQUAL(off, 10);
	CU_ASSERT_EQUAL(len, 10);
	CU_ASSERT_EQUAL(al_serve__parse_range("bytes=90-", 100, &off, &len), 1);
	CU_ASSERT_EQUAL(off, 90);
	CU_ASSERT_EQUAL(len, 10);
	CU_ASSERT_EQUAL(al_serve__parse_range("bytes=-5", 100, &off, &len), 1);
	CU_ASSERT_EQUAL(off, 95);
	CU_ASSERT_EQUAL(len, 5);
	/* past the end is cut to the end; a suffix longer than the blob is
	 * the whole blob */
	CU_ASSERT_EQUAL(al_serve__parse_range("bytes=50-500", 100, &off, &len),
	                1);
	CU_ASSERT_EQUAL(len, 50);
	CU_ASSERT_EQUAL(al_serve__parse_range("bytes=-500", 100, &off, &len),
	                1);
	CU_ASSERT_EQUAL(off, 0);
	CU_ASSERT_EQUAL(len, 100);
	/* unsatisfiable */
	CU_ASSERT_EQUAL(al_serve__parse_range("bytes=100-", 100, &off, &len),
	                0);
	CU_ASSERT_EQUAL(al_serve__parse_range("bytes=-0", 100, &off, &len), 0);
	CU_ASSERT_EQUAL(al_serve__parse_range("bytes=0-", 0, &off, &len), 0);
	/* malformed */
	CU_ASSERT_EQUAL(al_serve__parse_range("bytes=9-2", 100, &off, &len),
	                -1);
	CU_ASSERT_EQUAL(al_serve__parse_range("bytes=0-1,4-5", 100, &off, &len),
	                -1);
	CU_ASSERT_EQUAL(al_serve__parse_range("lines=1-2", 100, &off, &len),
	                -1);
	CU_ASSERT_EQUAL(al_serve__parse_range("bytes=-", 100, &off, &len), -1);
	CU_ASSERT_EQUAL(al_serve__parse_range("bytes= 1-2", 100, &off, &len),
	                -1);
	CU_ASSERT_EQUAL(al_serve__parse_range("bytes=99999999999999999999999-",
	                                      100, &off, &len),
	                -1);
}

/* Store body as a manifest blob; its digest string in ds. */
static void put_manifest(al_store *s, const char *body, al_descriptor *d,
                         char ds[AL_DIGEST_STRMAX])
{
	memset(d, 0, sizeof(*d));
	CU_ASSERT_EQUAL(al_store_put_blob(s, (const uint8_t *)body,
	                                  strlen(body), &d->digest),
	                0);
	d->media_type = (char *)"application/vnd.oci.image.manifest.v1+json";
	d->size = strlen(body);
	al_digest_str(&d->digest, ds);
}

static void put_named(al_store *s, const char *name, const char *body,
                      char ds[AL_DIGEST_STRMAX])
{
	al_descriptor d;

	put_manifest(s, body, &d, ds);
	CU_ASSERT_EQUAL(al_store_tag(s, name, &d), 0);
}

static void test_serve__table_follows_push_names(void)
{
	char *path = al_sprintf("%s/table", al_test_tmpdir()), *name = NULL;
	al_store_opts o = {.create = 1};
	al_serve_table *t = NULL, *t2 = NULL, *t3 = NULL;
	al_store *s = NULL;
	char *blob = NULL;
	char d1[AL_DIGEST_STRMAX], d2[AL_DIGEST_STRMAX], d3[AL_DIGEST_STRMAX],
	    d4[AL_DIGEST_STRMAX], body[512];
	const al_serve_man *m;
	al_descriptor d;
	size_t i, end;

	CU_ASSERT_EQUAL(al_store_open(&s, path, &o), 0);
	if (s == NULL)
		goto out;
	put_named(s, "quay.io/ns/repo:v1", "{\"schemaVersion\":2,\"n\":1}", d1);
	put_named(s, "quay.io/ns/repo:v2", "{\"schemaVersion\":2,\"n\":2}", d2);
	/* an artifact whose subject is d1, named by its digest */
	snprintf(body, sizeof(body),
	         "{\"schemaVersion\":2,\"artifactType\":\"application/x-sig\","
	         "\"subject\":{\"digest\":\"%s\"}}",
	         d1);
	put_manifest(s, body, &d, d3);
	name = al_sprintf("quay.io/ns/repo@%s", d3);
	CU_ASSERT_EQUAL(al_store_tag(s, name, &d), 0);
	put_named(s, "registry.example.com:5000/a/b/c:latest",
	          "{\"schemaVersion\":2,\"n\":3}", d4);
	CU_ASSERT_EQUAL(al_store_flush(s), 0);
	al_store_free(s);
	s = NULL;

	CU_ASSERT_EQUAL(al_serve__table_new(&t, path, NULL, 0), 0);
	if (t == NULL)
		goto out;
	CU_ASSERT_EQUAL(t->nrepos, 2);
	CU_ASSERT_TRUE(al_serve__has_repo(t, "ns/repo"));
	CU_ASSERT_TRUE(al_serve__has_repo(t, "a/b/c"));
	CU_ASSERT_FALSE(al_serve__has_repo(t, "quay.io/ns/repo"));
	CU_ASSERT_FALSE(al_serve__has_repo(t, "ns"));
	CU_ASSERT_FALSE(al_serve__has_repo(t, "ns/repo/../repo"));
	CU_ASSERT_PTR_NOT_NULL(al_serve__find_tag(t, "ns/repo", "v1"));
	CU_ASSERT_PTR_NULL(al_serve__find_tag(t, "ns/repo", "latest"));
	CU_ASSERT_PTR_NOT_NULL(al_serve__find_tag(t, "a/b/c", "latest"));
	CU_ASSERT_PTR_NOT_NULL(al_serve__find_man(t, "ns/repo", d3));
	CU_ASSERT_PTR_NOT_NULL(al_serve__find_man(t, "ns/repo", d2));
	/* a manifest of another repository is not served here */
	CU_ASSERT_PTR_NULL(al_serve__find_man(t, "ns/repo", d4));
	CU_ASSERT_PTR_NULL(al_serve__find_man(t, "a/b/c", d1));
	/* tags: v1, v2 and the digest tag push gives the artifact, sorted */
	i = al_serve__tags_from(t, "ns/repo", NULL, &end);
	CU_ASSERT_EQUAL(end - i, 3);
	if (end - i == 3) {
		CU_ASSERT_EQUAL(strncmp(t->tags[i].tag, "sha256-", 7), 0);
		CU_ASSERT_STRING_EQUAL(t->tags[i + 1].tag, "v1");
		CU_ASSERT_STRING_EQUAL(t->tags[i + 2].tag, "v2");
	}
	i = al_serve__tags_from(t, "ns/repo", "v1", &end);
	CU_ASSERT_EQUAL(end - i, 1);
	/* the index.json name behind a real tag (a pushed tag replaces
	 * that entry); none behind the digest tag */
	CU_ASSERT_STRING_EQUAL(al_serve__tag_name(t, "ns/repo", "v2"),
	                       "quay.io/ns/repo:v2");
	CU_ASSERT_PTR_NULL(al_serve__tag_name(t, "ns/repo", "v3"));
	{
		char *dt = al_sprintf("sha256-%s", d3 + 7);

		CU_ASSERT_PTR_NOT_NULL(al_serve__find_tag(t, "ns/repo", dt));
		CU_ASSERT_PTR_NULL(al_serve__tag_name(t, "ns/repo", dt));
		free(dt);
	}
	/* the referrer: subject and artifact type read from the manifest */
	m = al_serve__find_man(t, "ns/repo", d3);
	CU_ASSERT_PTR_NOT_NULL(m);
	if (m != NULL) {
		CU_ASSERT_STRING_EQUAL(m->subject, d1);
		CU_ASSERT_STRING_EQUAL(m->artifact_type, "application/x-sig");
	}
	/* a rebuilt table takes what a manifest says from the previous one
	 * (its bytes never change for its digest): with the artifact's blob
	 * gone, the rebuild still knows its subject; a fresh build does
	 * not */
	blob = al_sprintf("%s/blobs/sha256/%s", path, d3 + 7);
	CU_ASSERT_EQUAL(blob != NULL ? unlink(blob) : -1, 0);
	CU_ASSERT_EQUAL(al_serve__table_new(&t2, path, t, 0), 0);
	m = t2 != NULL ? al_serve__find_man(t2, "ns/repo", d3) : NULL;
	CU_ASSERT_TRUE(m != NULL && strcmp(m->subject, d1) == 0);
	CU_ASSERT_EQUAL(al_serve__table_new(&t3, path, NULL, 0), 0);
	m = t3 != NULL ? al_serve__find_man(t3, "ns/repo", d3) : NULL;
	CU_ASSERT_TRUE(m != NULL && m->subject[0] == '\0');
out:
	free(blob);
	al_serve__table_free(t2);
	al_serve__table_free(t3);
	al_serve__table_free(t);
	al_store_free(s);
	free(name);
	free(path);
}

static X509 *load_cert(const char *dir, const char *name)
{
	char *p = al_sprintf("%s/%s", dir, name);
	FILE *f = p != NULL ? fopen(p, "r") : NULL;
	X509 *x = f != NULL ? PEM_read_X509(f, NULL, NULL, NULL) : NULL;

	if (f != NULL)
		fclose(f);
	free(p);
	return x;
}

static void test_serve__make_cert_chain_and_no_overwrite(void)
{
	const char *hosts[] = {"registry.example.internal", "10.0.0.5"};
	char *dir = al_sprintf("%s/tls", al_test_tmpdir()), *ca = NULL;
	char *key = al_sprintf("%s/server.key", dir);
	X509 *cax = NULL, *srv = NULL;
	X509_STORE *st = X509_STORE_new();
	X509_STORE_CTX *ctx = X509_STORE_CTX_new();
	struct stat sb;

	CU_ASSERT_EQUAL(al_serve_make_cert(dir, hosts, 2, &ca), 0);
	CU_ASSERT_PTR_NOT_NULL(ca);
	CU_ASSERT_PTR_NOT_NULL(strstr(ca != NULL ? ca : "", "/ca.crt"));
	CU_ASSERT_EQUAL(stat(key, &sb), 0);
	CU_ASSERT_EQUAL(sb.st_mode & 0777, 0600);
	cax = load_cert(dir, "ca.crt");
	srv = load_cert(dir, "server.crt");
	CU_ASSERT_PTR_NOT_NULL(cax);
	CU_ASSERT_PTR_NOT_NULL(srv);
	if (cax != NULL && srv != NULL && st != NULL && ctx != NULL) {
		X509_STORE_add_cert(st, cax);
		X509_STORE_CTX_init(ctx, st, srv, NULL);
		X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_SSL_SERVER);
		CU_ASSERT_EQUAL(X509_verify_cert(ctx), 1);
		CU_ASSERT_EQUAL(X509_check_host(srv,
		                                "registry.example.internal", 0,
		                                0, NULL),
		                1);
		CU_ASSERT_EQUAL(X509_check_ip_asc(srv, "10.0.0.5", 0), 1);
		CU_ASSERT_NOT_EQUAL(
		    X509_check_host(srv, "other.example", 0, 0, NULL), 1);
		CU_ASSERT_EQUAL(X509_check_ca(srv), 0);
	}
	free(ca);
	ca = NULL;
	CU_ASSERT_EQUAL(al_serve_make_cert(dir, hosts, 2, &ca), AL_EEXIST);
	CU_ASSERT_PTR_NULL(ca);
	CU_ASSERT_EQUAL(al_serve_make_cert(dir, hosts, 0, &ca), AL_EINVAL);
	{
		const char *bad[] = {"a,DNS:evil"};

		CU_ASSERT_EQUAL(al_serve_make_cert(dir, bad, 1, &ca),
		                AL_EINVAL);
	}
	X509_STORE_CTX_free(ctx);
	X509_STORE_free(st);
	X509_free(cax);
	X509_free(srv);
	free(key);
	free(dir);
}

int main(void)
{
	CU_TestInfo tests[] = {
	    {"digest_valid_is_strict", test_serve__digest_valid_is_strict},
	    {"range_forms", test_serve__range_forms},
	    {"table_follows_push_names", test_serve__table_follows_push_names},
	    {"make_cert_chain_and_no_overwrite",
	     test_serve__make_cert_chain_and_no_overwrite},
	    CU_TEST_INFO_NULL,
	};

	return al_test_run("serve", tests);
}
