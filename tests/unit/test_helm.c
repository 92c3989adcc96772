/* test_helm.c: unit tests for the helm module: chart versions, index.yaml
 * and Helm's version choice, URL resolution, the images of real and
 * synthetic charts (tables worked out by hand from the chart files), the
 * refusals of unsafe archives, the OCI manifest, and mirror.helm in the
 * ImageSetConfiguration. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/helm.h"
#include "airlock/imageset.h"
#include "json_int.h"
#include "al_test.h"

static char *data_path(const char *rel)
{
	return al_sprintf("%s/tests/data/helm/%s", al_test_source_dir(), rel);
}

static int read_all(const char *path, al_buf *b)
{
	return al_fs_read_file(path, b);
}

static void test_version(void)
{
	static const char *const ok[] = {
	    "1.2.3",      "v1.2.3",    "1.2",         "1",
	    "1.0.0-rc.1", "1.0.0+b.5", "1.0.0-0.3.7", NULL};
	static const char *const bad[] = {
	    "",     "x1.2",    "1.2.3.4", "1..2",   "1.0.0-", "1.0.0-01",
	    "^1.0", ">=1.0.0", "1.0.0 ",  "V1.0.0", NULL};
	/* semver 2.0 ordering, each below the next */
	static const char *const order[] = {
	    "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta",
	    "1.0.0-beta",  "1.0.0-beta.2",  "1.0.0-beta.11",
	    "1.0.0-rc.1",  "1.0.0",         "1.0.1",
	    "1.9.0",       "1.10.0",        "2.0.0",
	    NULL};
	size_t i;

	for (i = 0; ok[i] != NULL; i++)
		CU_ASSERT(al_helm_version_valid(ok[i]));
	for (i = 0; bad[i] != NULL; i++)
		CU_ASSERT(!al_helm_version_valid(bad[i]));
	for (i = 0; order[i + 1] != NULL; i++) {
		CU_ASSERT(al_helm_version_compare(order[i], order[i + 1]) < 0);
		CU_ASSERT(al_helm_version_compare(order[i + 1], order[i]) > 0);
	}
	CU_ASSERT(al_helm_version_compare("v1.2", "1.2.0") == 0);
	CU_ASSERT(al_helm_version_compare("1.0.0+a", "1.0.0+b") == 0);
	CU_ASSERT(al_helm_version_compare("bogus", "0.0.1") < 0);
}

/* tests/data/helm/repo/index.yaml: the real index of Red Hat's
 * service-binding-operator chart repository, ten versions. */
static void test_index_real(void)
{
	static const char *const newest_first[] = {
	    "1.4.1", "1.4.0", "1.3.3", "1.3.2", "1.3.1",
	    "1.3.0", "1.1.0", "1.0.2", "1.0.1", "1.0.0"};
	al_buf b = AL_BUF_INIT(AL_HELM_INDEX_MAX);
	char *path = data_path("repo/index.yaml");
	const al_helm_index_entry *e = NULL;
	al_helm_index ix;
	size_t i;

	CU_ASSERT_EQUAL_FATAL(read_all(path, &b), 0);
	CU_ASSERT_EQUAL_FATAL(al_helm_index_parse(&ix, b.ptr, b.len, path), 0);
	CU_ASSERT_EQUAL(ix.n, 10);
	for (i = 0; i < ix.n && i < 10; i++) {
		CU_ASSERT_STRING_EQUAL(ix.entries[i].name,
		                       "service-binding-operator");
		CU_ASSERT_STRING_EQUAL(ix.entries[i].version, newest_first[i]);
		CU_ASSERT_STRING_EQUAL(ix.entries[i].type, "application");
	}
	CU_ASSERT_EQUAL(
	    al_helm_index_get(&ix, "service-binding-operator", NULL, &e), 0);
	CU_ASSERT(e != NULL && strcmp(e->version, "1.4.1") == 0);
	CU_ASSERT_EQUAL(
	    al_helm_index_get(&ix, "service-binding-operator", "1.3.3", &e), 0);
	if (e != NULL) {
		CU_ASSERT_STRING_EQUAL(e->version, "1.3.3");
		CU_ASSERT_EQUAL(e->nurls, 1);
		CU_ASSERT_STRING_EQUAL(e->urls[0],
		                       "service-binding-operator-1.3.3.tgz");
		CU_ASSERT_STRING_EQUAL(e->digest,
		                       "550237d24b5c88a2e073da333f564c3154e94a5"
		                       "ff300ae6ca36282b82fd1abfe");
	}
	/* "v1.3.3" is not written so, but equal as a version */
	CU_ASSERT_EQUAL(
	    al_helm_index_get(&ix, "service-binding-operator", "v1.3.3", &e),
	    0);
	CU_ASSERT(e != NULL && strcmp(e->version, "1.3.3") == 0);
	CU_ASSERT_EQUAL(
	    al_helm_index_get(&ix, "service-binding-operator", "1.2.0", &e),
	    AL_ENOTFOUND);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "1.4.1, 1.4.0"));
	CU_ASSERT_EQUAL(al_helm_index_get(&ix, "nope", NULL, &e), AL_ENOTFOUND);
	al_helm_index_clear(&ix);
	al_buf_free(&b);
	free(path);
}

/* Helm's choice (IndexFile.Get) on an index written for it. */
static void test_index_rules(void)
{
	static const char idx[] =
	    "apiVersion: v1\n"
	    "entries:\n"
	    "  a:\n"
	    "  - {name: a, version: 1.9.0, urls: [a-1.9.0.tgz]}\n"
	    "  - {name: a, version: bogus}\n"
	    "  - {name: a, version: 2.0.0-rc.1}\n"
	    "  - {name: a, version: v1.2}\n"
	    "  - {name: a, version: 1.10.0, type: library}\n"
	    "  - {name: a}\n"
	    "  - ~\n"
	    "  b:\n"
	    "  - {name: b, version: 1.0.0-alpha}\n"
	    "  - {name: b, version: 0.9.0-beta}\n";
	/* newest first; the entry without a version, the null one and the
	 * one whose version is not semver are skipped (loadIndex, through
	 * ChartVersion.Validate) */
	static const char *const a_order[] = {"2.0.0-rc.1", "1.10.0", "1.9.0",
	                                      "v1.2"};
	const al_helm_index_entry *e = NULL;
	al_helm_index ix;
	size_t i;

	CU_ASSERT_EQUAL_FATAL(
	    al_helm_index_parse(&ix, (const uint8_t *)idx, strlen(idx), "idx"),
	    0);
	CU_ASSERT_EQUAL(ix.n, 6);
	for (i = 0; i < 4 && i < ix.n; i++)
		CU_ASSERT_STRING_EQUAL(ix.entries[i].version, a_order[i]);
	/* no version: the newest without prerelease ("*") */
	CU_ASSERT_EQUAL(al_helm_index_get(&ix, "a", NULL, &e), 0);
	CU_ASSERT(e != NULL && strcmp(e->version, "1.10.0") == 0);
	CU_ASSERT_EQUAL(al_helm_index_get(&ix, "a", "", &e), 0);
	CU_ASSERT(e != NULL && strcmp(e->version, "1.10.0") == 0);
	CU_ASSERT_EQUAL(al_helm_index_get(&ix, "a", "2.0.0-rc.1", &e), 0);
	CU_ASSERT(e != NULL && strcmp(e->version, "2.0.0-rc.1") == 0);
	CU_ASSERT_EQUAL(al_helm_index_get(&ix, "a", "1.2.0", &e), 0);
	CU_ASSERT(e != NULL && strcmp(e->version, "v1.2") == 0);
	/* only prereleases: nothing stable */
	CU_ASSERT_EQUAL(al_helm_index_get(&ix, "b", NULL, &e), AL_ENOTFOUND);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "stable version"));
	al_helm_index_clear(&ix);
	CU_ASSERT_EQUAL(al_helm_index_parse(
	                    &ix, (const uint8_t *)"entries: {}\n", 12, "idx"),
	                AL_EPARSE);
	CU_ASSERT_EQUAL(al_helm_index_parse(&ix,
	                                    (const uint8_t *)"apiVersion: v1\n",
	                                    15, "idx"),
	                0);
	CU_ASSERT_EQUAL(ix.n, 0);
	al_helm_index_clear(&ix);
	CU_ASSERT_EQUAL(al_helm_index_parse(&ix, (const uint8_t *)"", 0, "idx"),
	                AL_EPARSE);
}

static void test_resolve_url(void)
{
	static const char *const t[][3] = {
	    {"https://h/charts", "x-1.tgz", "https://h/charts/x-1.tgz"},
	    {"https://h/charts/", "x-1.tgz", "https://h/charts/x-1.tgz"},
	    {"https://h/charts/", "./x-1.tgz", "https://h/charts/x-1.tgz"},
	    {"https://h/c?tok=1", "x.tgz", "https://h/c/x.tgz?tok=1"},
	    {"https://h/c", "https://o/x.tgz", "https://o/x.tgz"},
	    {"https://h/c", "oci://r/x", "oci://r/x"},
	    {"https://h:8443/a/b", "/abs/x.tgz", "https://h:8443/abs/x.tgz"},
	    {"http://127.0.0.1:1234", "index.yaml",
	     "http://127.0.0.1:1234/index.yaml"},
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char *out = NULL;

		CU_ASSERT_EQUAL(al_helm_resolve_url(t[i][0], t[i][1], &out), 0);
		CU_ASSERT_PTR_NOT_NULL(out);
		if (out != NULL && strcmp(out, t[i][2]) != 0) {
			fprintf(stderr, "resolve %s + %s: %s, want %s\n",
			        t[i][0], t[i][1], out, t[i][2]);
			CU_FAIL("resolve_url");
		}
		free(out);
	}
	{
		char *tag = al_helm_tag("1.0.0+build.5");

		CU_ASSERT_STRING_EQUAL(tag, "1.0.0_build.5");
		free(tag);
	}
}

static int has(const al_helm_image *v, size_t n, const char *ref)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i].ref, ref) == 0)
			return 1;
	return 0;
}

static int has_source(const al_helm_image *v, size_t n, const char *needle)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strstr(v[i].source, needle) != NULL)
			return 1;
	return 0;
}

static void dump(const al_helm_chart *c)
{
	size_t i;

	for (i = 0; i < c->nimages; i++)
		fprintf(stderr, "  found %s  (%s)\n", c->images[i].ref,
		        c->images[i].source);
	for (i = 0; i < c->nunresolved; i++)
		fprintf(stderr, "  unresolved '%s'  (%s)\n",
		        c->unresolved[i].ref, c->unresolved[i].source);
}

/* Every ref of want and nothing else. */
static void expect(const al_helm_chart *c, const char *const *want, size_t n)
{
	size_t i;
	int ok = c->nimages == n;

	for (i = 0; i < n; i++)
		if (!has(c->images, c->nimages, want[i])) {
			fprintf(stderr, "missing %s\n", want[i]);
			ok = 0;
		}
	if (!ok) {
		dump(c);
		CU_FAIL("images differ from the table");
	}
}

static int read_chart_file(al_helm_chart *c, const char *path,
                           const char *const *paths, size_t npaths)
{
	int fd = open(path, O_RDONLY), rc;

	if (fd < 0)
		return AL_ENOTFOUND;
	rc = al_helm_chart_read(c, fd, paths, npaths, path);
	close(fd);
	return rc;
}

/*
 * podinfo 5.0.0 (stefanprodan/podinfo, from oc-mirror's test data), read
 * by hand: values.yaml image {repository: ghcr.io/stefanprodan/podinfo,
 * tag: 5.0.0}; templates/deployment.yaml:35 the same through .Values;
 * templates/redis/deployment.yaml:26 "{{ .Values.redis.repository }}:
 * {{ .Values.redis.tag }}" with redis.enabled: false in values (the
 * template renders nothing: not listed); tests/ hold helm.sh/hook: test
 * pods (alpine:3.11, grpc_health_probe, tiny-tools, curl), which Helm's
 * SortManifests sets apart: not listed. What is left is what oc-mirror's
 * own test expects of this chart (internal/pkg/helm/
 * local_stored_collector_test.go: ghcr.io/stefanprodan/podinfo:5.0.0
 * alone). Nothing unresolved.
 */
static void test_chart_podinfo(void)
{
	static const char *const want[] = {
	    "ghcr.io/stefanprodan/podinfo:5.0.0",
	};
	char *path = data_path("podinfo-5.0.0.tgz");
	al_helm_chart c;
	json_t *cfg = NULL;

	CU_ASSERT_EQUAL_FATAL(read_chart_file(&c, path, NULL, 0), 0);
	CU_ASSERT_STRING_EQUAL(c.name, "podinfo");
	CU_ASSERT_STRING_EQUAL(c.version, "5.0.0");
	CU_ASSERT_STRING_EQUAL(c.app_version, "5.0.0");
	CU_ASSERT(!c.library);
	expect(&c, want, sizeof(want) / sizeof(want[0]));
	CU_ASSERT_EQUAL(c.nunresolved, 0);
	if (c.nunresolved != 0)
		dump(&c);
	CU_ASSERT(has_source(c.images, c.nimages, "values.yaml:24 image"));
	CU_ASSERT(!has_source(c.images, c.nimages,
	                      "templates/redis/deployment.yaml:26"));
	/* the config is json.Marshal(chart.Metadata): struct order */
	CU_ASSERT(al_str_startswith(c.config, "{\"name\":\"podinfo\",\"home\":"
	                                      "\"https://github.com/"
	                                      "stefanprodan/podinfo\""));
	CU_ASSERT_EQUAL(al_json_parse(&cfg, (const uint8_t *)c.config,
	                              strlen(c.config), "config"),
	                0);
	CU_ASSERT_STRING_EQUAL(al_json_str(cfg, "version"), "5.0.0");
	CU_ASSERT_STRING_EQUAL(al_json_str(cfg, "apiVersion"), "v1");
	json_decref(cfg);
	al_helm_chart_clear(&c);
	free(path);
}

/*
 * service-binding-operator 1.4.1 (Red Hat's chart repository): values.yaml
 * image {repository: quay.io/redhat-developer} has no tag or digest
 * (unresolved: it is a namespace, the template appends the name);
 * templates/deployment.yaml:32 "{{.Values.image.image | default (printf
 * "%s/%s" .Values.image.repository "servicebinding-operator@sha256:1628..")
 * | quote}}" with image.image unset; tests/test-...-connection.yaml:16
 * "{{.Values.image.testRepository}}/helm-chart-test@sha256:c050...", a
 * helm.sh/hook: test pod, set apart as Helm's SortManifests does (not
 * listed).
 */
static void test_chart_sbo(void)
{
	static const char *const want[] = {
	    "quay.io/redhat-developer/servicebinding-operator@sha256:"
	    "16286ac84ddd521897d92472dae857a4c18479f255b725dfb683bc72df6e0865",
	};
	char *path = data_path("repo/service-binding-operator-1.4.1.tgz");
	al_helm_chart c;

	CU_ASSERT_EQUAL_FATAL(read_chart_file(&c, path, NULL, 0), 0);
	CU_ASSERT_STRING_EQUAL(c.name, "service-binding-operator");
	CU_ASSERT_STRING_EQUAL(c.version, "1.4.1");
	expect(&c, want, 1);
	CU_ASSERT_EQUAL(c.nunresolved, 1);
	CU_ASSERT(has_source(c.unresolved, c.nunresolved,
	                     "values.yaml:1 image (repository without tag"));
	al_helm_chart_clear(&c);
	free(path);
}

/*
 * ingress-nginx 4.12.1: every image is built in templates with {{ if }}
 * and include, and values.yaml's image maps have no repository (the
 * registry is global.image.registry): nothing is guessed, three value
 * maps and four template lines are listed; the admission webhook's patch
 * jobs are hooks (set apart as Helm's SortManifests does) and
 * defaultBackend is off in values (enabled: false), so their image map
 * and template lines are not.
 */
static void test_chart_ingress_nginx(void)
{
	char *path = data_path("ingress-nginx-4.12.1.tgz");
	al_helm_chart c;

	CU_ASSERT_EQUAL_FATAL(read_chart_file(&c, path, NULL, 0), 0);
	CU_ASSERT_STRING_EQUAL(c.name, "ingress-nginx");
	CU_ASSERT_EQUAL(c.nimages, 0);
	CU_ASSERT_EQUAL(c.nunresolved, 7);
	CU_ASSERT(has_source(c.unresolved, c.nunresolved,
	                     "values.yaml:25 controller.image (a map without "
	                     "repository)"));
	CU_ASSERT(has_source(c.unresolved, c.nunresolved,
	                     "templates/controller-deployment.yaml:85"));
	if (c.nimages != 0 || c.nunresolved != 10)
		dump(&c);
	al_helm_chart_clear(&c);
	free(path);
}

/* Write files (pairs of archive name and content, NULL-ended) as a tgz;
 * returns its path (caller frees). */
static char *mk_tgz(const char *name, const char *const *files)
{
	const char *dir = al_test_tmpdir();
	char *out = al_sprintf("%s/%s", dir, name);
	char *spec = al_sprintf("%s/%s.json", dir, name);
	json_t *j = json_object(), *fl = json_array();
	char *text;
	size_t i;

	json_object_set_new(j, "out", json_string(out));
	for (i = 0; files[i] != NULL; i += 2)
		json_array_append_new(
		    fl, json_pack("[ss]", files[i], files[i + 1]));
	json_object_set_new(j, "files", fl);
	text = json_dumps(j, 0);
	CU_ASSERT_EQUAL(al_fs_write_atomic(spec, text, strlen(text)), 0);
	CU_ASSERT_EQUAL(al_test_sh("python3 %s/tests/tools/mkchart.py %s",
	                           al_test_source_dir(), spec),
	                0);
	free(text);
	free(spec);
	json_decref(j);
	return out;
}

#define CHART_YAML(n, v)                                                       \
	"apiVersion: v2\nname: " n "\nversion: " v "\nappVersion: \"2.5\"\n"

/*
 * A chart written for each rule. Expected, by hand:
 *   imagePaths {.custom.img} -> quay.io/x/custom:1
 *   imagePaths .list[*].image -> quay.io/x/l1:1, quay.io/x/l2:2
 *   imagePaths {.nothing.here} -> unresolved (matches nothing)
 *   artifacthub.io/images -> quay.io/x/hub:3
 *   values image: "nginx:1.25" -> docker.io/library/nginx:1.25
 *   values image {registry: r.io, repository: a/b, tag: "1.0",
 *     digest: sha256:aa..} -> r.io/a/b:1.0@sha256:aa..
 *   values sidecarImage {registry: r.io, image: s/c, tag: v2}
 *     -> r.io/s/c:v2
 *   values image: "{{ .Values.x }}" -> unresolved (a template)
 *   values noTag.image {repository: quay.io/x/notag} -> unresolved
 *     (no tag: not guessed)
 *   templates: literal quay.io/x/lit:9; "{{ .Values.app.repo }}:{{
 *     .Values.app.tag | default .Chart.AppVersion }}" -> quay.io/x/app:2.5;
 *     {{ include "x.image" . }} -> unresolved; printf -> quay.io/x/pf:4
 *   subchart charts/sub-0.1.0.tgz values image: quay.io/x/sub:5, its
 *     template "{{ .Values.image }}" the same
 *   subchart directory charts/dir/ values image: quay.io/x/dir:6
 */
/*
 * What Helm renders with the chart's values, as oc-mirror's
 * getHelmTemplates does: subcharts off by condition (first path holding a
 * boolean) or by tags (chartutil.ProcessDependencies), blocks off by
 * enabled: false, hooks (SortManifests) are not listed; a subchart whose
 * condition is on, or that no dependency names, is.
 */
static void test_chart_rendered_only(void)
{
	static const char *const off_files[] = {
	    "off/Chart.yaml", CHART_YAML("off", "0.1.0"), "off/values.yaml",
	    "image: quay.io/x/off:1\n", NULL};
	static const char *const tagged_files[] = {
	    "tagged/Chart.yaml", CHART_YAML("tagged", "0.1.0"),
	    "tagged/values.yaml", "image: quay.io/x/tagged:1\n", NULL};
	static const char *const on_files[] = {
	    "on/Chart.yaml", CHART_YAML("on", "0.1.0"), "on/values.yaml",
	    "image: quay.io/x/on:1\n", NULL};
	static const char *const want[] = {
	    "quay.io/x/main:1",
	    "quay.io/x/on:1",
	    "quay.io/x/loose:1",
	};
	char *off = mk_tgz("off-0.1.0.tgz", off_files);
	char *tagged = mk_tgz("tagged-0.1.0.tgz", tagged_files);
	char *on = mk_tgz("on-0.1.0.tgz", on_files);
	char *s_off = al_sprintf("@%s", off),
	     *s_tagged = al_sprintf("@%s", tagged);
	char *s_on = al_sprintf("@%s", on), *top;
	al_helm_chart c;

	{
		const char *files[] = {
		    "top/Chart.yaml",
		    CHART_YAML(
		        "top",
		        "1.0.0") "dependencies:\n"
		                 "- name: off\n"
		                 "  condition: off.enabled,global.x\n"
		                 "- name: tagged\n"
		                 "  tags: [extras]\n"
		                 "- name: on\n"
		                 "  condition: nope.enabled,on.enabled\n",
		    "top/values.yaml",
		    "image: quay.io/x/main:1\n"
		    "off:\n  enabled: false\n"
		    "on:\n  enabled: true\n"
		    "tags:\n  extras: false\n"
		    "metrics:\n  enabled: false\n  image: quay.io/x/metrics:1\n"
		    "redis:\n  enabled: false\n  repository: quay.io/x/redis\n"
		    "  tag: \"7\"\n",
		    "top/templates/redis.yaml",
		    "spec:\n  containers:\n  - image: {{ "
		    ".Values.redis.repository "
		    "}}:{{ .Values.redis.tag }}\n",
		    "top/templates/tests/t.yaml",
		    "metadata:\n  annotations:\n    \"helm.sh/hook\": test\n"
		    "spec:\n  containers:\n  - image: quay.io/x/hooktest:1\n",
		    "top/charts/off-0.1.0.tgz",
		    s_off,
		    "top/charts/tagged-0.1.0.tgz",
		    s_tagged,
		    "top/charts/on-0.1.0.tgz",
		    s_on,
		    "top/charts/loose/Chart.yaml",
		    CHART_YAML("loose", "0.0.1"),
		    "top/charts/loose/values.yaml",
		    "image: quay.io/x/loose:1\n",
		    NULL};
		top = mk_tgz("top-rendered-1.0.0.tgz", files);
	}
	CU_ASSERT_EQUAL_FATAL(read_chart_file(&c, top, NULL, 0), 0);
	expect(&c, want, sizeof(want) / sizeof(want[0]));
	CU_ASSERT_EQUAL(c.nunresolved, 0);
	if (c.nunresolved != 0)
		dump(&c);
	al_helm_chart_clear(&c);
	free(off);
	free(tagged);
	free(on);
	free(s_off);
	free(s_tagged);
	free(s_on);
	free(top);
}

static void test_chart_rules(void)
{
	static const char sub_values[] = "image: quay.io/x/sub:5\n";
	char *sub, *top, *spec_sub;
	const char *sub_files[] = {
	    "sub/Chart.yaml",
	    CHART_YAML("sub", "0.1.0"),
	    "sub/values.yaml",
	    sub_values,
	    "sub/templates/d.yaml",
	    "spec:\n  containers:\n  - image: {{ .Values.image }}\n",
	    NULL};
	static const char *const want[] = {
	    "quay.io/x/custom:1",
	    "quay.io/x/l1:1",
	    "quay.io/x/l2:2",
	    "quay.io/x/hub:3",
	    "docker.io/library/nginx:1.25",
	    "r.io/a/b:1.0@sha256:"
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	    "r.io/s/c:v2",
	    "quay.io/x/lit:9",
	    "quay.io/x/app:2.5",
	    "quay.io/x/pf:4",
	    "quay.io/x/sub:5",
	    "quay.io/x/dir:6",
	};
	static const char *const paths[] = {"{.custom.img}", ".list[*].image",
	                                    "{.nothing.here}"};
	al_helm_chart c;

	sub = mk_tgz("sub-0.1.0.tgz", sub_files);
	spec_sub = al_sprintf("@%s", sub);
	{
		const char *files[] = {
		    "top/Chart.yaml",
		    CHART_YAML("top", "1.2.3+build") "annotations:\n"
		                                     "  artifacthub.io/images: "
		                                     "|\n"
		                                     "    - name: hub\n"
		                                     "      image: "
		                                     "quay.io/x/hub:3\n",
		    "top/values.yaml",
		    "custom:\n  img: quay.io/x/custom:1\n"
		    "list:\n  - image: quay.io/x/l1:1\n  - image: "
		    "quay.io/x/l2:2\n"
		    "web:\n  image: \"nginx:1.25\"\n"
		    "db:\n  image:\n    registry: r.io\n    repository: a/b\n"
		    "    tag: \"1.0\"\n    digest: sha256:"
		    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		    "a"
		    "aaaaa\n"
		    "sidecarImage:\n  registry: r.io\n  image: s/c\n  tag: v2\n"
		    "tpl:\n  image: \"{{ .Values.x }}\"\n"
		    "noTag:\n  image:\n    repository: quay.io/x/notag\n"
		    "app:\n  repo: quay.io/x/app\n  tag: \"\"\n",
		    "top/templates/a.yaml",
		    "spec:\n  containers:\n"
		    "  - name: lit\n    image: quay.io/x/lit:9 # a comment\n"
		    "  - image: \"{{ .Values.app.repo }}:{{ .Values.app.tag | "
		    "default .Chart.AppVersion }}\"\n"
		    "  - image: {{ include \"x.image\" . }}\n"
		    "  - image: {{ printf \"%s:%s\" \"quay.io/x/pf\" \"4\" "
		    "}}\n",
		    "top/templates/NOTES.txt",
		    "image: quay.io/x/notes:0\n",
		    "top/README.md",
		    "image: quay.io/x/readme:0\n",
		    "top/charts/sub-0.1.0.tgz",
		    spec_sub,
		    "top/charts/dir/Chart.yaml",
		    CHART_YAML("dir", "0.0.1"),
		    "top/charts/dir/values.yaml",
		    "image: quay.io/x/dir:6\n",
		    NULL};

		top = mk_tgz("top-1.2.3.tgz", files);
	}
	CU_ASSERT_EQUAL_FATAL(read_chart_file(&c, top, paths, 3), 0);
	CU_ASSERT_STRING_EQUAL(c.name, "top");
	CU_ASSERT_STRING_EQUAL(c.version, "1.2.3+build");
	CU_ASSERT_EQUAL(c.created, 1700000000);
	expect(&c, want, sizeof(want) / sizeof(want[0]));
	CU_ASSERT_EQUAL(c.nunresolved, 4);
	CU_ASSERT(has_source(c.unresolved, c.nunresolved,
	                     "imagePaths: matches nothing"));
	CU_ASSERT(has_source(c.unresolved, c.nunresolved,
	                     "values.yaml:19 tpl.image (a template)"));
	CU_ASSERT(
	    has_source(c.unresolved, c.nunresolved, "templates/a.yaml:6"));
	/* noTag.image: a repository without tag is not guessed */
	CU_ASSERT(has_source(c.unresolved, c.nunresolved,
	                     "values.yaml:21 noTag.image (repository without"));
	CU_ASSERT(!has(c.images, c.nimages, "quay.io/x/notag:latest"));
	if (c.nunresolved != 4)
		dump(&c);
	al_helm_chart_clear(&c);
	free(sub);
	free(spec_sub);
	free(top);
}

/* Archives Helm's loader refuses, and the bounds. */
static void test_chart_refused(void)
{
	static const struct {
		const char *name, *path;
		int code;
		const char *needle;
	} t[] = {
	    {"dots.tgz", "x/../../evil.yaml", AL_EPARSE,
	     "references parent directory"},
	    {"abs.tgz", "/x/Chart.yaml", AL_EPARSE, "absolute paths"},
	    {"flat.tgz", "Chart.yaml", AL_EPARSE, "outside the base directory"},
	    {"bs.tgz", "x\\Chart.yaml", AL_EPARSE, "illegally named"},
	};
	al_helm_chart c;
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		const char *files[] = {"x/Chart.yaml", CHART_YAML("x", "1.0.0"),
		                       t[i].path, "a: b\n", NULL};
		char *p = mk_tgz(t[i].name, files);

		CU_ASSERT_EQUAL(read_chart_file(&c, p, NULL, 0), t[i].code);
		CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), t[i].needle));
		free(p);
	}
	{
		const char *files[] = {"x/values.yaml", "image: a:1\n", NULL};
		char *p = mk_tgz("nochart.tgz", files);

		CU_ASSERT_EQUAL(read_chart_file(&c, p, NULL, 0), AL_EPARSE);
		CU_ASSERT_PTR_NOT_NULL(
		    strstr(al_error_message(), "Chart.yaml"));
		free(p);
	}
	{
		/* one byte over the file bound, in a file we do not even
		 * read (Helm bounds every file) */
		char *big = malloc(AL_HELM_FILE_MAX + 2), *bigp;
		char *p;

		CU_ASSERT_PTR_NOT_NULL_FATAL(big);
		memset(big, 'a', AL_HELM_FILE_MAX + 1);
		big[AL_HELM_FILE_MAX + 1] = '\0';
		bigp = al_sprintf("%s/big.bin", al_test_tmpdir());
		CU_ASSERT_EQUAL(
		    al_fs_write_atomic(bigp, big, AL_HELM_FILE_MAX + 1), 0);
		free(big);
		big = al_sprintf("@%s", bigp);
		{
			const char *files[] = {"x/Chart.yaml",
			                       CHART_YAML("x", "1.0.0"),
			                       "x/README.md", big, NULL};

			p = mk_tgz("big.tgz", files);
		}
		CU_ASSERT_EQUAL(read_chart_file(&c, p, NULL, 0), AL_ELIMIT);
		CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "larger"));
		free(p);
		free(big);
		free(bigp);
	}
	/* not a gzip tar at all */
	CU_ASSERT_EQUAL(al_helm_chart_read_mem(&c, (const uint8_t *)"hello", 5,
	                                       NULL, 0, "mem"),
	                AL_EPARSE);
}

/* The manifest `helm push` makes (pkg/registry/client.go Push). */
static void test_manifest(void)
{
	char *path = data_path("podinfo-5.0.0.tgz");
	al_helm_chart c;
	al_buf b = AL_BUF_INIT(1 << 20);
	al_digest cfg, arc;
	json_t *m = NULL, *ann, *l;

	CU_ASSERT_EQUAL_FATAL(read_chart_file(&c, path, NULL, 0), 0);
	CU_ASSERT_EQUAL(
	    al_digest_bytes(&cfg, AL_DIGEST_SHA256, c.config, strlen(c.config)),
	    0);
	CU_ASSERT_EQUAL(al_digest_bytes(&arc, AL_DIGEST_SHA256, "x", 1), 0);
	CU_ASSERT_EQUAL_FATAL(
	    al_helm_manifest(&b, &c, &cfg, strlen(c.config), &arc, 11396), 0);
	CU_ASSERT(al_str_startswith(al_buf_cstr(&b),
	                            "{\"schemaVersion\":2,\"config\":{"
	                            "\"mediaType\":\"application/"
	                            "vnd.cncf.helm.config.v1+json\""));
	CU_ASSERT_EQUAL_FATAL(al_json_parse(&m, b.ptr, b.len, "manifest"), 0);
	l = json_array_get(json_object_get(m, "layers"), 0);
	CU_ASSERT_STRING_EQUAL(al_json_str(l, "mediaType"), AL_HELM_CHART_MT);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(l, "size")), 11396);
	ann = json_object_get(m, "annotations");
	CU_ASSERT_STRING_EQUAL(
	    al_json_str(ann, "org.opencontainers.image.title"), "podinfo");
	CU_ASSERT_STRING_EQUAL(
	    al_json_str(ann, "org.opencontainers.image.version"), "5.0.0");
	CU_ASSERT_STRING_EQUAL(
	    al_json_str(ann, "org.opencontainers.image.description"),
	    "Podinfo Helm chart for Kubernetes");
	CU_ASSERT_PTR_NOT_NULL(
	    al_json_str(ann, "org.opencontainers.image.created"));
	/* no mediaType at the top, as Helm's ocispec.Manifest leaves it */
	CU_ASSERT_PTR_NULL(json_object_get(m, "mediaType"));
	json_decref(m);
	al_buf_free(&b);
	al_helm_chart_clear(&c);
	free(path);
}

#define HEAD                                                                   \
	"kind: ImageSetConfiguration\napiVersion: "                            \
	"mirror.openshift.io/v2alpha1\nmirror:\n  helm:\n"

static int load_text(const char *text, al_imageset **out)
{
	char *path = al_sprintf("%s/isc.yaml", al_test_tmpdir());
	int rc = al_fs_write_atomic(path, text, strlen(text));

	if (rc == 0)
		rc = al_imageset_load(out, path);
	free(path);
	return rc;
}

static void test_imageset(void)
{
	static const struct {
		const char *text;
		int code;
		const char *needle;
	} bad[] = {
	    {HEAD "    repositories:\n    - name: r\n      url: "
	          "https://x\n      charts:\n      - name: c\n        "
	          "platforms: [{os: linux}]\n",
	     AL_EPARSE, "charts[].platforms[] needs 'os' and 'architecture'"},
	    {HEAD "    repositories:\n    - name: r\n      url: "
	          "https://x\n      charts:\n      - name: c\n        "
	          "version: ^1.0\n",
	     AL_EPARSE, ":10:18: charts[].version must be one exact"},
	    {HEAD "    repositories:\n    - name: r\n      url: ftp://x\n",
	     AL_EPARSE, ":7:12: repositories[].url must be"},
	    {HEAD "    repositories:\n    - name: r\n      url: oci://q.io/x\n",
	     AL_EPARSE, "oci:// repository has no index"},
	    {HEAD "    local:\n    - name: l\n", AL_EPARSE, "needs 'path'"},
	    {HEAD "    local:\n    - name: l\n      path: x.tgz\n      "
	          "version: 1.0.0\n",
	     AL_EUNSUPPORTED, ":8:7: 'version' in mirror.helm.local[]"},
	    {HEAD
	     "    local:\n    - name: l\n      path: x.tgz\n      "
	     "imagePaths: ['{.spec.containers[?(@.name==\"a\")].image}']\n",
	     AL_EUNSUPPORTED, "not a plain path"},
	    {HEAD "    repositories:\n    - name: r\n      url: https://x\n"
	          "    - name: r\n      url: https://y\n",
	     AL_EPARSE, "appears twice"},
	    {HEAD "    oops: 1\n", AL_EPARSE,
	     "unknown field 'oops' in mirror.helm"},
	};
	al_imageset *cfg = NULL;
	size_t i;

	CU_ASSERT_EQUAL_FATAL(
	    load_text(HEAD "    repositories:\n"
	                   "    - name: sbo\n"
	                   "      url: https://redhat-developer.github.io/sbo\n"
	                   "      charts:\n"
	                   "      - name: service-binding-operator\n"
	                   "        version: 1.3.3\n"
	                   "        imagePaths: ['{.image.x}']\n"
	                   "      - name: other\n"
	                   "    - name: all\n"
	                   "      url: http://127.0.0.1:8080/\n"
	                   "    - name: o\n"
	                   "      url: oci://127.0.0.1:5000/charts\n"
	                   "      charts: [{name: c, version: 1.0.0}]\n"
	                   "    local:\n"
	                   "    - name: podinfo\n"
	                   "      path: charts/podinfo-5.0.0.tgz\n",
	              &cfg),
	    0);
	CU_ASSERT_EQUAL(cfg->nhelm_repos, 3);
	CU_ASSERT_EQUAL(cfg->helm_repos[0].ncharts, 2);
	CU_ASSERT_STRING_EQUAL(cfg->helm_repos[0].charts[0].version, "1.3.3");
	CU_ASSERT_EQUAL(cfg->helm_repos[0].charts[0].nimage_paths, 1);
	CU_ASSERT_PTR_NULL(cfg->helm_repos[0].charts[1].version);
	CU_ASSERT(cfg->helm_repos[1].all_charts);
	CU_ASSERT(!cfg->helm_repos[0].all_charts);
	CU_ASSERT_EQUAL(cfg->nhelm_local, 1);
	CU_ASSERT(al_str_endswith(cfg->helm_local[0].path,
	                          "/charts/podinfo-5.0.0.tgz"));
	CU_ASSERT(cfg->helm_local[0].path[0] == '/');
	al_imageset_free(cfg);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cfg = NULL;
		CU_ASSERT_EQUAL(load_text(bad[i].text, &cfg), bad[i].code);
		if (strstr(al_error_message(), bad[i].needle) == NULL) {
			fprintf(stderr, "case %zu: '%s' lacks '%s'\n", i,
			        al_error_message(), bad[i].needle);
			CU_FAIL("message");
		}
		al_imageset_free(cfg);
	}
}

/* Write the files (path, content pairs, NULL-ended) below dir. */
static void mk_dir(const char *dir, const char *const *files)
{
	size_t i;

	CU_ASSERT_EQUAL(al_test_sh("rm -rf '%s' && mkdir -p '%s'", dir, dir),
	                0);
	for (i = 0; files[i] != NULL; i += 2) {
		char *p = al_sprintf("%s/%s", dir, files[i]);
		char *slash = strrchr(p, '/');

		*slash = '\0';
		CU_ASSERT_EQUAL(al_fs_mkdir_p(p, 0755), 0);
		*slash = '/';
		CU_ASSERT_EQUAL(
		    al_fs_write_atomic(p, files[i + 1], strlen(files[i + 1])),
		    0);
		free(p);
	}
}

/* Package dir; the archive's entry names, space-separated, in *list. */
static int package(const char *dir, char **list)
{
	char *tgz = al_sprintf("%s/pkg.tgz", al_test_tmpdir());
	char *lst = al_sprintf("%s/pkg.lst", al_test_tmpdir());
	al_buf b = AL_BUF_INIT(1 << 20);
	int fd = open(tgz, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int rc;

	*list = NULL;
	CU_ASSERT_FATAL(fd >= 0);
	rc = al_helm_package_dir(dir, fd);
	close(fd);
	if (rc == 0) {
		CU_ASSERT_EQUAL(
		    al_test_sh("tar -tzf '%s' | tr '\\n' ' ' >'%s'", tgz, lst),
		    0);
		CU_ASSERT_EQUAL(al_fs_read_file(lst, &b), 0);
		*list = al_strdup(b.len > 0 ? al_buf_cstr(&b) : "");
	}
	al_buf_free(&b);
	free(tgz);
	free(lst);
	return rc;
}

/* A chart directory packaged as Helm's LoadDir reads it: .helmignore
 * rules (base name, rooted, directory-only, Helm's negation), the
 * default templates/.?* rule, lexical order with Chart.yaml and
 * values.yaml first; and the refusals. Expected lists by hand. */
static void test_package_dir(void)
{
	char *dir = al_sprintf("%s/chartdir", al_test_tmpdir());
	char *list = NULL, *tgz;
	al_helm_chart c;
	int fd;

	{
		const char *files[] = {"Chart.yaml",
		                       CHART_YAML("x", "1.2.3"),
		                       "values.yaml",
		                       "image: reg.example/a:1\n",
		                       ".helmignore",
		                       "# comment\n\n*.md\nsub/\n/top.txt\n",
		                       "README.md",
		                       "r",
		                       "docs/x.md",
		                       "d",
		                       "sub/keep.txt",
		                       "k",
		                       "other/sub",
		                       "file, not a directory",
		                       "other/top.txt",
		                       "not at the top",
		                       "top.txt",
		                       "t",
		                       "templates/a.yaml",
		                       "image: reg.example/b:2\n",
		                       "templates/.hidden.yaml",
		                       "image: reg.example/c:3\n",
		                       NULL};

		mk_dir(dir, files);
		CU_ASSERT_EQUAL(package(dir, &list), 0);
		CU_ASSERT_STRING_EQUAL(
		    list ? list : "",
		    "x/Chart.yaml x/values.yaml x/.helmignore "
		    "x/other/sub x/other/top.txt "
		    "x/templates/a.yaml ");
		free(list);
		/* and the archive reads back as the chart */
		tgz = al_sprintf("%s/pkg.tgz", al_test_tmpdir());
		fd = open(tgz, O_RDONLY | O_CLOEXEC);
		CU_ASSERT_FATAL(fd >= 0);
		memset(&c, 0, sizeof(c));
		CU_ASSERT_EQUAL(al_helm_chart_read(&c, fd, NULL, 0, tgz), 0);
		CU_ASSERT_STRING_EQUAL(c.name, "x");
		CU_ASSERT_STRING_EQUAL(c.version, "1.2.3");
		CU_ASSERT_EQUAL(c.nimages, 2);
		al_helm_chart_clear(&c);
		close(fd);
		free(tgz);
	}
	{
		/* rules.Ignore: a negated rule that does not match ignores,
		 * directories included */
		const char *files[] = {"Chart.yaml",
		                       CHART_YAML("x", "1.0.0"),
		                       "values.yaml",
		                       "a: b\n",
		                       ".helmignore",
		                       "!*.yaml\n",
		                       "notes.txt",
		                       "n",
		                       "templates/a.yaml",
		                       "a: b\n",
		                       NULL};

		mk_dir(dir, files);
		CU_ASSERT_EQUAL(package(dir, &list), 0);
		CU_ASSERT_STRING_EQUAL(list ? list : "",
		                       "x/Chart.yaml x/values.yaml ");
		free(list);
	}
	{
		const char *files[] = {"Chart.yaml", CHART_YAML("x", "1.0.0"),
		                       ".helmignore", "a\nb/**/c\n", NULL};

		mk_dir(dir, files);
		CU_ASSERT_EQUAL(package(dir, &list), AL_EPARSE);
		CU_ASSERT_PTR_NOT_NULL(
		    strstr(al_error_message(), "/.helmignore:2: double-star"));
	}
	{
		const char *files[] = {"Chart.yaml", CHART_YAML("x", "1.0.0"),
		                       NULL};

		mk_dir(dir, files);
		CU_ASSERT_EQUAL(
		    al_test_sh("ln -s /etc/hostname '%s/templates-link'", dir),
		    0);
		CU_ASSERT_EQUAL(package(dir, &list), AL_EPARSE);
		CU_ASSERT_PTR_NOT_NULL(strstr(
		    al_error_message(), "templates-link' is a symbolic link "
		                        "to '/etc/hostname', outside the "
		                        "chart directory"));
	}
	{
		const char *files[] = {"Chart.yaml", "version: 1.0.0\n", NULL};

		mk_dir(dir, files);
		CU_ASSERT_EQUAL(package(dir, &list), AL_EPARSE);
		CU_ASSERT_PTR_NOT_NULL(
		    strstr(al_error_message(), "name is required"));
	}
	{
		const char *files[] = {"Chart.yaml", CHART_YAML("..", "1.0.0"),
		                       NULL};

		mk_dir(dir, files);
		CU_ASSERT_EQUAL(package(dir, &list), AL_EPARSE);
		CU_ASSERT_PTR_NOT_NULL(
		    strstr(al_error_message(), "not a valid directory name"));
	}
	free(dir);
}

int main(void)
{
	CU_TestInfo tests[] = {
	    {"version", test_version},
	    {"index_real", test_index_real},
	    {"index_rules", test_index_rules},
	    {"resolve_url", test_resolve_url},
	    {"chart_podinfo", test_chart_podinfo},
	    {"chart_sbo", test_chart_sbo},
	    {"chart_ingress_nginx", test_chart_ingress_nginx},
	    {"chart_rules", test_chart_rules},
	    {"chart_rendered_only", test_chart_rendered_only},
	    {"chart_refused", test_chart_refused},
	    {"manifest", test_manifest},
	    {"imageset", test_imageset},
	    {"package_dir", test_package_dir},
	    CU_TEST_INFO_NULL,
	};

	return al_test_run("helm", tests);
}
