/* test_regconf.c: registries.conf v2 (the TOML subset, containers/image's
 * checks, drop-ins, pull sources, blocked registries, short names). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/ref.h"
#include "airlock/regconf.h"
#include "al_test.h"

static al_regconf *parse(const char *text)
{
	al_regconf *c = NULL;
	int rc = al_regconf_parse(&c, "test.conf", text, strlen(text));

	if (rc != 0)
		fprintf(stderr, "parse failed: %s\n", al_error_message());
	CU_ASSERT_EQUAL(rc, 0);
	return c;
}

/* "REG/REPO[m][i] ..." for the sources of ref. */
static char *sources(const al_regconf *c, const char *refstr)
{
	al_ref ref = {0};
	al_regconf_source *s = NULL;
	al_buf out = AL_BUF_INIT(4096);
	size_t n = 0, i;
	int rc;

	CU_ASSERT_EQUAL(al_ref_parse(&ref, refstr), 0);
	rc = al_regconf_pull_sources(c, &ref, &s, &n);
	al_ref_clear(&ref);
	if (rc < 0)
		return al_sprintf("error %d: %s", rc, al_error_message());
	for (i = 0; i < n; i++)
		al_buf_printf(&out, "%s%s/%s%s%s", i > 0 ? " " : "",
		              s[i].registry, s[i].repository,
		              s[i].mirror ? "[m]" : "",
		              s[i].insecure ? "[i]" : "");
	al_regconf_sources_free(s, n);
	return al_buf_detach(&out, NULL);
}

static void expect_sources(const al_regconf *c, const char *ref,
                           const char *want)
{
	char *got = sources(c, ref);

	CU_ASSERT_PTR_NOT_NULL(got);
	if (got != NULL && strcmp(got, want) != 0) {
		fprintf(stderr, "%s: got '%s', want '%s'\n", ref, got, want);
		CU_FAIL("sources differ");
	}
	free(got);
}

#define DIGEST                                                                 \
	"sha256:"                                                              \
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

/* The containers-registries.conf(5) example, with comments, quoted keys,
 * an inline mirror table and CRLF line ends where TOML allows them. */
static void test_regconf__mirrors_in_order_with_pull_restrictions(void)
{
	al_regconf *c = parse(
	    "# comment\n"
	    "unqualified-search-registries = [\"quay.io\", "
	    "'docker.io'] # trailing\n"
	    "short-name-mode = \"enforcing\"\r\n"
	    "\n"
	    "[[registry]]\n"
	    "prefix = \"example.com/foo\"\n"
	    "insecure = false\n"
	    "blocked = false\n"
	    "location = \"internal-registry-for-example.com/bar/\"\n"
	    "\n"
	    "[[registry.mirror]]\n"
	    "location = \"example-mirror-0.local/mirror-for-foo\"\n"
	    "\n"
	    "[[registry.mirror]]\n"
	    "location = \"example-mirror-1.local/mirrors/foo\"\n"
	    "insecure = true\n"
	    "\n"
	    "[[registry.mirror]]\n"
	    "location = \"digest-mirror.local\"\n"
	    "pull-from-mirror = \"digest-only\"\n"
	    "\n"
	    "[[registry.mirror]]\n"
	    "location = \"tag-mirror.local/t\"\n"
	    "pull-from-mirror = \"tag-only\"\n"
	    "\n"
	    "[[registry]]\n"
	    "location = \"quay.io/openshift-release-dev\"\n"
	    "mirror = [ { location = \"local.example:5000/ocp\", insecure = "
	    "true },\n"
	    "  # a comment inside the array\n"
	    "  {location=\"second.example/ocp\"},\n"
	    "]\n"
	    "mirror-by-digest-only = true\n"
	    "\n"
	    "[aliases]\n"
	    "\"fedora\" = \"registry.fedoraproject.org/fedora\"\n");

	if (c == NULL)
		return;
	expect_sources(c, "example.com/foo/myimage:latest",
	               "example-mirror-0.local/mirror-for-foo/myimage[m] "
	               "example-mirror-1.local/mirrors/foo/myimage[m][i] "
	               "tag-mirror.local/t/myimage[m] "
	               "internal-registry-for-example.com/bar/myimage");
	expect_sources(c, "example.com/foo/myimage@" DIGEST,
	               "example-mirror-0.local/mirror-for-foo/myimage[m] "
	               "example-mirror-1.local/mirrors/foo/myimage[m][i] "
	               "digest-mirror.local/myimage[m] "
	               "internal-registry-for-example.com/bar/myimage");
	/* the prefix matches at a path boundary only */
	expect_sources(c, "example.com/foobar/x:1", "example.com/foobar/x");
	/* mirror-by-digest-only: tags come from the location itself */
	expect_sources(c, "quay.io/openshift-release-dev/ocp-release:4.14.1",
	               "quay.io/openshift-release-dev/ocp-release");
	expect_sources(c, "quay.io/openshift-release-dev/ocp-release@" DIGEST,
	               "local.example:5000/ocp/ocp-release[m][i] "
	               "second.example/ocp/ocp-release[m] "
	               "quay.io/openshift-release-dev/ocp-release");
	expect_sources(c, "quay.io/other/x:1", "quay.io/other/x");
	al_regconf_free(c);
}

static void test_regconf__longest_prefix_and_wildcards(void)
{
	al_regconf *c = parse("[[registry]]\n"
	                      "location = \"r.example\"\n"
	                      "[[registry.mirror]]\n"
	                      "location = \"m1.example\"\n"
	                      "[[registry]]\n"
	                      "prefix = \"r.example/team\"\n"
	                      "location = \"team.example/x\"\n"
	                      "[[registry]]\n"
	                      "prefix = \"*.wild.example\"\n"
	                      "[[registry.mirror]]\n"
	                      "location = \"wm.example/w\"\n");

	if (c == NULL)
		return;
	expect_sources(c, "r.example/a/b:1", "m1.example/a/b[m] r.example/a/b");
	expect_sources(c, "r.example/team/b:1", "team.example/x/b");
	/* a wildcard prefix: empty location keeps the reference */
	expect_sources(c, "a.b.wild.example/ns/i:1",
	               "wm.example/w/ns/i[m] a.b.wild.example/ns/i");
	expect_sources(c, "wild.example/ns/i:1", "wild.example/ns/i");
	al_regconf_free(c);
}

static void test_regconf__blocked_registries_name_the_file(void)
{
	al_regconf *c = parse("\n\n[[registry]]\n"
	                      "location = \"blocked.example\"\n"
	                      "blocked = true\n");
	char *got;
	int insecure = 1;

	if (c == NULL)
		return;
	got = sources(c, "blocked.example/ns/i:1");
	CU_ASSERT_PTR_NOT_NULL(strstr(got, "blocked"));
	CU_ASSERT_PTR_NOT_NULL(strstr(got, "test.conf:3"));
	free(got);
	CU_ASSERT_EQUAL(al_regconf_host(c, "blocked.example", NULL), AL_EAUTH);
	CU_ASSERT_EQUAL(al_regconf_host(c, "other.example", &insecure), 0);
	CU_ASSERT_EQUAL(insecure, 0);
	al_regconf_free(c);
	c = parse("[[registry]]\nlocation = \"127.0.0.1:5000\"\n"
	          "insecure = true\n");
	CU_ASSERT_EQUAL(al_regconf_host(c, "127.0.0.1:5000", &insecure), 0);
	CU_ASSERT_EQUAL(insecure, 1);
	expect_sources(c, "127.0.0.1:5000/a:1", "127.0.0.1:5000/a[i]");
	al_regconf_free(c);
}

/* Each refusal names the file and line. */
static void test_regconf__refuses_what_it_cannot_read(void)
{
	static const struct {
		const char *text;
		const char *line;
		const char *words;
	} cases[] = {
	    {"a = \"unterminated\n", "line 1", "unterminated"},
	    {"\n[[registry]]\nlocation.sub = \"x\"\n", "line 3", "dotted"},
	    {"[registries.search]\nregistries = ['a']\n", "line 1",
	     "version 1"},
	    {"[[registry]]\nlocation = \"x\"\ninsecure = 1\n", "line 3",
	     "unsupported value"},
	    {"[[registry]]\nlocation = \"x\"\ninsecure = \"yes\"\n", "line 3",
	     "true or false"},
	    {"[[registry]]\nlocation = \"x\"\nlocation = \"y\"\n", "line 3",
	     "duplicate key"},
	    {"x = \"\"\"multi\n\"\"\"\n", "line 1", "multi-line"},
	    {"[[registry]]\nlocation = \"x\"\npull-from-mirror = "
	     "\"digest-only\"\n",
	     "line 3", "non-mirror"},
	    {"[[registry]]\nlocation = \"x\"\n[[registry.mirror]]\n"
	     "location = \"m\"\npull-from-mirror = \"sometimes\"\n",
	     "line 5", "unsupported pull-from-mirror"},
	    {"[[registry.mirror]]\nlocation = \"m\"\n", "line 1", "before any"},
	    {"[[registry]]\nlocation = \"x\" junk\n", "line 2",
	     "unexpected text"},
	    {"[[registry]]\nlocation = \"x\\q\"\n", "line 2", "escape"},
	    {"[[registry]]\nmirror = [{location = \"m\"}\n", "line 3",
	     "expected ','"},
	    {"[weird]\n", "line 1", "unsupported table"},
	    {"[[registry]]\nlocation = \"https://x\"\n", "test.conf:1",
	     "URI schemes"},
	    {"[[registry]]\ninsecure = true\n", "test.conf:1",
	     "without location"},
	    {"[[registry]]\nlocation = \"a\"\n[[registry]]\nprefix = "
	     "\"a/b\"\nlocation = \"a\"\ninsecure = true\n",
	     "test.conf:3", "conflicting 'insecure'"},
	    {"[[registry]]\nlocation = \"a\"\nmirror-by-digest-only = true\n"
	     "[[registry.mirror]]\nlocation = \"m\"\npull-from-mirror = "
	     "\"tag-only\"\n",
	     "test.conf:1", "cannot be set together"},
	    {"[[registry]]\nprefix = \"*.a.example/x\"\n", "test.conf:1",
	     "*.example.com"},
	    {"unqualified-search-registries = [\"a b\"]\n", "test.conf",
	     "invalid unqualified-search-registries"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		al_regconf *c = NULL;
		int rc = al_regconf_parse(&c, "test.conf", cases[i].text,
		                          strlen(cases[i].text));
		const char *m = al_error_message();

		CU_ASSERT_EQUAL(rc, AL_EPARSE);
		CU_ASSERT_PTR_NULL(c);
		if (rc != AL_EPARSE || strstr(m, cases[i].line) == NULL ||
		    strstr(m, cases[i].words) == NULL) {
			fprintf(stderr, "case %zu: rc %d, '%s'\n", i, rc, m);
			CU_FAIL(
			    "message does not name the place or the reason");
		}
		al_regconf_free(c);
	}
}

static void test_regconf__release_references_need_a_registry(void)
{
	al_regconf *c = parse("unqualified-search-registries = "
	                      "[\"registry.example\", \"quay.io\"]\n");
	al_regconf *none = parse("");

	if (c == NULL || none == NULL)
		goto out;
	CU_ASSERT_EQUAL(
	    al_regconf_check_release_ref(c, "openshift/release:4.14"),
	    AL_EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "registry.example"));
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "test.conf"));
	CU_ASSERT_EQUAL(al_regconf_check_release_ref(c, "docker://release:1"),
	                AL_EINVAL);
	CU_ASSERT_EQUAL(al_regconf_check_release_ref(c, "quay.io/a/b:1"), 0);
	CU_ASSERT_EQUAL(al_regconf_check_release_ref(c, "localhost/a:1"), 0);
	CU_ASSERT_EQUAL(al_regconf_check_release_ref(c, "h:5000/a:1"), 0);
	CU_ASSERT_EQUAL(al_regconf_check_release_ref(c, "oci:/x:y"), 0);
	/* no search list: the docker.io rule of skopeo's docker:// stays */
	CU_ASSERT_EQUAL(al_regconf_check_release_ref(none, "a/b:1"), 0);
	CU_ASSERT_EQUAL(al_regconf_check_release_ref(NULL, "a/b:1"), 0);
out:
	al_regconf_free(c);
	al_regconf_free(none);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CU_ASSERT_PTR_NOT_NULL(f);
	if (f != NULL) {
		fputs(text, f);
		fclose(f);
	}
}

/* The main file, then each drop-in in name order (later entries of a
 * prefix replace earlier ones, a search list replaces the list). */
static void test_regconf__loads_drop_ins_over_the_main_file(void)
{
	const char *t = al_test_tmpdir();
	char *main_conf = al_sprintf("%s/registries.conf", t);
	char *home = al_sprintf("%s/rhome", t);
	char *d =
	    al_sprintf("%s/rhome/.config/containers/registries.conf.d", t);
	char *d1 = al_sprintf("%s/10-a.conf", d);
	char *d2 = al_sprintf("%s/20-b.conf", d);
	char *ignored = al_sprintf("%s/30-c.txt", d);
	const char *old_home = getenv("HOME");
	char *saved = old_home != NULL ? al_strdup(old_home) : NULL;
	al_regconf *c = NULL;

	CU_ASSERT_EQUAL(al_test_sh("mkdir -p '%s'", d), 0);
	write_text(main_conf, "unqualified-search-registries = [\"a.io\"]\n"
	                      "[[registry]]\nlocation = \"r.example\"\n"
	                      "[[registry.mirror]]\nlocation = \"old.m\"\n"
	                      "[[registry]]\nlocation = \"keep.example\"\n"
	                      "blocked = true\n");
	write_text(d1, "[[registry]]\nlocation = \"r.example\"\n"
	               "[[registry.mirror]]\nlocation = \"new.m\"\n");
	write_text(d2, "unqualified-search-registries = []\n");
	write_text(ignored, "this is not toml\n");
	setenv("HOME", home, 1);
	setenv("CONTAINERS_REGISTRIES_CONF", main_conf, 1);
	CU_ASSERT_EQUAL(al_regconf_load(&c, NULL), 0);
	if (c != NULL) {
		expect_sources(c, "r.example/x:1", "new.m/x[m] r.example/x");
		CU_ASSERT_EQUAL(al_regconf_host(c, "keep.example", NULL),
		                AL_EAUTH);
		CU_ASSERT_EQUAL(al_regconf_check_release_ref(c, "x/y:1"), 0);
		CU_ASSERT_PTR_NOT_NULL(
		    strstr(al_regconf_files(c), "10-a.conf"));
		CU_ASSERT_PTR_NULL(strstr(al_regconf_files(c), "30-c"));
		CU_ASSERT(strstr(al_regconf_files(c), "registries.conf") <
		          strstr(al_regconf_files(c), "10-a.conf"));
	}
	al_regconf_free(c);
	c = NULL;
	/* a named file that does not exist is an error */
	setenv("CONTAINERS_REGISTRIES_CONF", d1 /* exists */, 1);
	unlink(main_conf);
	setenv("CONTAINERS_REGISTRIES_CONF", main_conf, 1);
	CU_ASSERT_EQUAL(al_regconf_load(&c, NULL), AL_ENOTFOUND);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), main_conf));
	/* a broken drop-in names itself */
	write_text(main_conf, "");
	write_text(d2, "[[registry]]\nlocation = 'x'\nblocked = maybe\n");
	CU_ASSERT_EQUAL(al_regconf_load(&c, NULL), AL_EPARSE);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "20-b.conf"));
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "line 3"));
	unsetenv("CONTAINERS_REGISTRIES_CONF");
	if (saved != NULL)
		setenv("HOME", saved, 1);
	free(saved);
	free(main_conf);
	free(home);
	free(d);
	free(d1);
	free(d2);
	free(ignored);
}

int main(void)
{
	CU_TestInfo tests[] = {
	    {"test_regconf__mirrors_in_order_with_pull_restrictions",
	     test_regconf__mirrors_in_order_with_pull_restrictions},
	    {"test_regconf__longest_prefix_and_wildcards",
	     test_regconf__longest_prefix_and_wildcards},
	    {"test_regconf__blocked_registries_name_the_file",
	     test_regconf__blocked_registries_name_the_file},
	    {"test_regconf__refuses_what_it_cannot_read",
	     test_regconf__refuses_what_it_cannot_read},
	    {"test_regconf__release_references_need_a_registry",
	     test_regconf__release_references_need_a_registry},
	    {"test_regconf__loads_drop_ins_over_the_main_file",
	     test_regconf__loads_drop_ins_over_the_main_file},
	    CU_TEST_INFO_NULL,
	};

	return al_test_run("regconf", tests);
}
