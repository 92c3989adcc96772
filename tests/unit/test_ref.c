/* test_ref.c: unit tests for image reference parsing, normalisation and transports. */
#include <stdlib.h>
#include <string.h>

#include "al_test.h"
#include "airlock/error.h"
#include "airlock/ref.h"

#define D256                                                                   \
	"sha256:"                                                              \
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

/* Parse s, check its parts and its string form; NULL expectations mean absent.
 */
static void check_ref(const char *s, const char *reg, const char *repo,
                      const char *tag, const char *digest, const char *str)
{
	al_ref r;
	char *out;
	int rc = al_ref_parse(&r, s);

	CU_ASSERT_EQUAL(rc, 0);
	if (rc != 0) {
		fprintf(stderr, "unexpected failure for '%s': %s\n", s,
		        al_error_message());
		return;
	}
	CU_ASSERT_STRING_EQUAL(r.registry, reg);
	CU_ASSERT_STRING_EQUAL(r.repository, repo);
	if (tag == NULL) {
		CU_ASSERT_PTR_NULL(r.tag);
	} else if (r.tag != NULL) {
		CU_ASSERT_STRING_EQUAL(r.tag, tag);
	} else {
		CU_FAIL("tag missing");
	}
	if (digest == NULL) {
		CU_ASSERT_PTR_NULL(r.digest);
	} else if (r.digest != NULL) {
		CU_ASSERT_STRING_EQUAL(r.digest, digest);
	} else {
		CU_FAIL("digest missing");
	}
	out = al_ref_string(&r);
	CU_ASSERT_PTR_NOT_NULL(out);
	if (out != NULL) {
		CU_ASSERT_STRING_EQUAL(out, str);
	}
	free(out);
	al_ref_clear(&r);
}

/* s must be refused with AL_EPARSE and a message containing needle. */
static void check_bad(const char *s, const char *needle)
{
	al_ref r = {NULL, NULL, NULL, NULL};
	int rc = al_ref_parse(&r, s);

	CU_ASSERT_EQUAL(rc, AL_EPARSE);
	if (rc == 0) {
		fprintf(stderr, "'%s' was accepted\n", s);
		al_ref_clear(&r);
		return;
	}
	CU_ASSERT_PTR_NULL(r.registry);
	if (strstr(al_error_message(), needle) == NULL) {
		fprintf(stderr, "message for '%s' lacks '%s': %s\n", s, needle,
		        al_error_message());
		CU_FAIL("message");
	}
}

static void test_ref__docker_hub_normalisation(void)
{
	check_ref("busybox", "docker.io", "library/busybox", NULL, NULL,
	          "docker.io/library/busybox");
	check_ref("busybox:1.36", "docker.io", "library/busybox", "1.36", NULL,
	          "docker.io/library/busybox:1.36");
	check_ref("docker.io/busybox", "docker.io", "library/busybox", NULL,
	          NULL, "docker.io/library/busybox");
	check_ref("docker.io/library/busybox", "docker.io", "library/busybox",
	          NULL, NULL, "docker.io/library/busybox");
	check_ref("index.docker.io/busybox:latest", "docker.io",
	          "library/busybox", "latest", NULL,
	          "docker.io/library/busybox:latest");
	check_ref("user/app", "docker.io", "user/app", NULL, NULL,
	          "docker.io/user/app");
}

static void test_ref__registry_detection(void)
{
	check_ref("quay.io/openshift-release-dev/ocp-release:4.15.0-x86_64",
	          "quay.io", "openshift-release-dev/ocp-release",
	          "4.15.0-x86_64", NULL,
	          "quay.io/openshift-release-dev/ocp-release:4.15.0-x86_64");
	check_ref("localhost/x", "localhost", "x", NULL, NULL, "localhost/x");
	check_ref("localhost:5000/x", "localhost:5000", "x", NULL, NULL,
	          "localhost:5000/x");
	check_ref("127.0.0.1:5000/a/b/c:v1", "127.0.0.1:5000", "a/b/c", "v1",
	          NULL, "127.0.0.1:5000/a/b/c:v1");
	check_ref("[::1]:5000/x:tag@" D256, "[::1]:5000", "x", "tag", D256,
	          "[::1]:5000/x:tag@" D256);
	check_ref("[fe80::1]/x", "[fe80::1]", "x", NULL, NULL, "[fe80::1]/x");
	check_ref("Registry.Example.com/x", "Registry.Example.com", "x", NULL,
	          NULL, "Registry.Example.com/x");
	/* Without a dot, colon or "localhost" the first part is a path. */
	check_ref("myhost/x", "docker.io", "myhost/x", NULL, NULL,
	          "docker.io/myhost/x");
}

static void test_ref__tag_and_digest(void)
{
	check_ref("quay.io/a/b@" D256, "quay.io", "a/b", NULL, D256,
	          "quay.io/a/b@" D256);
	check_ref("quay.io/a/b:t@" D256, "quay.io", "a/b", "t", D256,
	          "quay.io/a/b:t@" D256);
	check_ref("a:_x.y-Z", "docker.io", "library/a", "_x.y-Z", NULL,
	          "docker.io/library/a:_x.y-Z");
	check_ref(
	    "quay.io/a/b@sha512:"
	    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
	    "quay.io", "a/b", NULL,
	    "sha512:"
	    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
	    "quay.io/a/b@sha512:"
	    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
}

static void test_ref__path_component_separators(void)
{
	check_ref("a/b.c_d__e-f---g", "docker.io", "a/b.c_d__e-f---g", NULL,
	          NULL, "docker.io/a/b.c_d__e-f---g");
	check_bad("a/b___c", "bad repository component");
	check_bad("a/-b", "bad repository component");
	check_bad("a/b-", "bad repository component");
	check_bad("a/b..c", "bad repository component");
	check_bad("a//b", "bad repository component");
	check_bad("quay.io/a/", "bad repository component");
	check_bad("/a", "bad repository component");
}

static void test_ref__rejects_uppercase_repository(void)
{
	check_bad("quay.io/Foo/bar", "must be lowercase");
	check_bad("busyBox", "must be lowercase");
}

static void test_ref__rejects_bad_digest(void)
{
	check_bad("quay.io/a@sha256:abc", "bad digest");
	check_bad(
	    "quay.io/"
	    "a@sha256:"
	    "0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef",
	    "bad digest");
	check_bad("quay.io/a@md5:0123456789abcdef0123456789abcdef",
	          "bad digest");
	check_bad("quay.io/a@", "bad digest");
	check_bad("quay.io/a@" D256 "@" D256, "bad digest");
}

static void test_ref__rejects_bad_tags(void)
{
	char tag[200];
	char s[300];

	check_bad("quay.io/a:", "bad tag");
	check_bad("quay.io/a:-x", "bad tag");
	check_bad("quay.io/a:x!y", "bad tag");
	check_bad("quay.io/a:.x", "bad tag");
	memset(tag, 'x', 129);
	tag[129] = '\0';
	snprintf(s, sizeof(s), "quay.io/a:%s", tag);
	check_bad(s, "bad tag");
	tag[128] = '\0';
	snprintf(s, sizeof(s), "quay.io/a:%s", tag);
	check_ref(s, "quay.io", "a", tag, NULL, s);
}

static void test_ref__rejects_bad_registry(void)
{
	check_bad("quay.io:/a", "bad registry");
	check_bad("quay.io:50x0/a", "bad registry");
	check_bad("-quay.io/a", "bad registry");
	check_bad("[::1/a", "bad registry");
	check_bad("[zz::1]:5000/a", "bad registry");
	check_bad("a..b/c", "bad registry");
}

static void test_ref__rejects_empty_and_too_long(void)
{
	char name[400];
	int n;

	check_bad("", "empty");
	check_bad(":tag", "empty name");
	check_bad("@" D256, "empty name");
	/* 255 characters of name is the limit; 256 is refused. */
	n = snprintf(name, sizeof(name), "quay.io/");
	memset(name + n, 'a', (size_t)(255 - n));
	name[255] = '\0';
	check_ref(name, "quay.io", name + 8, NULL, NULL, name);
	name[255] = 'a';
	name[256] = '\0';
	check_bad(name, "longer than 255");
	/* The bound applies to the normalised name: 240 + "docker.io/library/".
	 */
	memset(name, 'a', 240);
	name[240] = '\0';
	check_bad(name, "longer than 255");
}

/* A random printable string biased towards reference syntax. */
static void random_ref(char *out, size_t cap, unsigned *state)
{
	static const char alphabet[] = "abz09AZ:/.@-__[]";
	static const char *const pieces[] = {
	    "quay.io/",
	    "localhost:5000/",
	    "[::1]:5000/",
	    "library/",
	    ":tag",
	    "@sha256:"
	    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
	    "docker.io/",
	    "index.docker.io/",
	    "a",
	    "b/c",
	};
	size_t len = 0, n = (size_t)(rand_r(state) % 8) + 1, i;

	out[0] = '\0';
	for (i = 0; i < n; i++) {
		const char *p;
		char one[2] = {0, 0};
		size_t plen;

		if (rand_r(state) % 2 == 0) {
			p = pieces[rand_r(state) %
			           (sizeof(pieces) / sizeof(pieces[0]))];
		} else {
			one[0] =
			    alphabet[rand_r(state) % (sizeof(alphabet) - 1)];
			p = one;
		}
		plen = strlen(p);
		if (len + plen + 1 > cap)
			break;
		memcpy(out + len, p, plen + 1);
		len += plen;
	}
}

static void test_ref__string_form_parses_to_the_same_reference(void)
{
	unsigned state = al_test_seed();
	char s[512];
	int i, accepted = 0;

	for (i = 0; i < 20000; i++) {
		al_ref a, b;
		char *str;

		random_ref(s, sizeof(s), &state);
		if (al_ref_parse(&a, s) != 0)
			continue;
		accepted++;
		str = al_ref_string(&a);
		CU_ASSERT_PTR_NOT_NULL(str);
		if (str != NULL && al_ref_parse(&b, str) == 0) {
			char *again = al_ref_string(&b);

			CU_ASSERT_STRING_EQUAL(again, str);
			free(again);
			al_ref_clear(&b);
		} else {
			fprintf(stderr, "'%s' -> '%s' does not parse\n", s,
			        str);
			CU_FAIL("reparse");
		}
		free(str);
		al_ref_clear(&a);
	}
	/* The generator must produce valid references too. */
	CU_ASSERT(accepted > 100);
}

static void test_ref__copy_and_name(void)
{
	al_ref a, b;
	char *s;

	CU_ASSERT_EQUAL_FATAL(al_ref_parse(&a, "quay.io/x/y:t@" D256), 0);
	CU_ASSERT_EQUAL(al_ref_copy(&b, &a), 0);
	al_ref_clear(&a);
	s = al_ref_name(&b);
	CU_ASSERT_STRING_EQUAL(s, "quay.io/x/y");
	free(s);
	s = al_ref_string(&b);
	CU_ASSERT_STRING_EQUAL(s, "quay.io/x/y:t@" D256);
	free(s);
	al_ref_clear(&b);
	al_ref_clear(NULL);
}

static void test_ref__transports(void)
{
	al_imgref r;
	char *s;

	CU_ASSERT_EQUAL_FATAL(al_imgref_parse(&r, "docker://busybox:1"), 0);
	CU_ASSERT_EQUAL(r.transport, AL_TRANSPORT_DOCKER);
	CU_ASSERT_STRING_EQUAL(r.ref.repository, "library/busybox");
	s = al_imgref_string(&r);
	CU_ASSERT_STRING_EQUAL(s, "docker://docker.io/library/busybox:1");
	free(s);
	al_imgref_clear(&r);

	CU_ASSERT_EQUAL_FATAL(al_imgref_parse(&r, "quay.io/x/y"), 0);
	CU_ASSERT_EQUAL(r.transport, AL_TRANSPORT_DOCKER);
	CU_ASSERT_STRING_EQUAL(r.ref.registry, "quay.io");
	al_imgref_clear(&r);

	/* The OCI path ends at the first ':', the rest is the name. */
	CU_ASSERT_EQUAL_FATAL(
	    al_imgref_parse(&r, "oci:/path/to/dir:quay.io/x/y:tag"), 0);
	CU_ASSERT_EQUAL(r.transport, AL_TRANSPORT_OCI);
	CU_ASSERT_STRING_EQUAL(r.path, "/path/to/dir");
	CU_ASSERT_STRING_EQUAL(r.name, "quay.io/x/y:tag");
	s = al_imgref_string(&r);
	CU_ASSERT_STRING_EQUAL(s, "oci:/path/to/dir:quay.io/x/y:tag");
	free(s);
	al_imgref_clear(&r);

	CU_ASSERT_EQUAL_FATAL(al_imgref_parse(&r, "oci:rel/dir"), 0);
	CU_ASSERT_STRING_EQUAL(r.path, "rel/dir");
	CU_ASSERT_PTR_NULL(r.name);
	al_imgref_clear(&r);

	CU_ASSERT_EQUAL(al_imgref_parse(&r, "oci:"), AL_EPARSE);
	CU_ASSERT_EQUAL(al_imgref_parse(&r, "oci::name"), AL_EPARSE);
	CU_ASSERT_EQUAL(al_imgref_parse(&r, "dir:///x"), AL_EPARSE);
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(al_error_message(), "unsupported transport 'dir'"));
	CU_ASSERT_EQUAL(al_imgref_parse(&r, "docker://Quay.io/A"), AL_EPARSE);
	CU_ASSERT_EQUAL(al_imgref_parse(&r, ""), AL_EPARSE);
	al_imgref_clear(NULL);
}

int main(void)
{
	CU_TestInfo tests[] = {
	    {"test_ref__docker_hub_normalisation",
	     test_ref__docker_hub_normalisation},
	    {"test_ref__registry_detection", test_ref__registry_detection},
	    {"test_ref__tag_and_digest", test_ref__tag_and_digest},
	    {"test_ref__path_component_separators",
	     test_ref__path_component_separators},
	    {"test_ref__rejects_uppercase_repository",
	     test_ref__rejects_uppercase_repository},
	    {"test_ref__rejects_bad_digest", test_ref__rejects_bad_digest},
	    {"test_ref__rejects_bad_tags", test_ref__rejects_bad_tags},
	    {"test_ref__rejects_bad_registry", test_ref__rejects_bad_registry},
	    {"test_ref__rejects_empty_and_too_long",
	     test_ref__rejects_empty_and_too_long},
	    {"test_ref__copy_and_name", test_ref__copy_and_name},
	    {"test_ref__transports", test_ref__transports},
	    {"test_ref__string_form_parses_to_the_same_reference",
	     test_ref__string_form_parses_to_the_same_reference},
	    CU_TEST_INFO_NULL,
	};

	return al_test_run("ref", tests);
}
