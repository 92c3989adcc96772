/* test_catalog.c: unit tests for the catalog module: FBC parsing and
 * validation, semver ranges, every filter rule (selections worked out by
 * hand below), dependencies, rendering, images, image read and rebuild. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "airlock/buf.h"
#include "airlock/catalog.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/imageset.h"
#include "json_int.h"
#include "airlock/store.h"
#include "layer_int.h"
#include "yaml_int.h"
#include "al_test.h"

/*
 * The test catalog. Package foo (default channel stable):
 *
 *   stable: v2.1.0 -> v2.0.0 -> v1.2.0 -> v1.1.0 -> v1.0.0   (replaces)
 *           v1.2.0 skips v1.1.5; v1.1.5 replaces v1.1.0
 *           v2.0.0 skipRange ">=1.0.0 <2.0.0"
 *   fast:   v2.2.0-rc.1 -> v2.1.0
 *   legacy: v0.9.5 -> v0.9.0
 *   foo.v2.1.0 requires package dep ">=1.0.0 <2.0.0"
 *   deprecations: the package, channel legacy, bundle foo.v1.0.0
 *
 * Package bar (stable): v1.2.0 -> v1.1.0 -> v1.0.0, v1.0.5 -> v1.0.0;
 *   v1.2.0 skips v1.0.5; v1.1.0 skipRange ">=1.0.0 <1.1.0".
 * Package dep (stable): v2.0.0 -> v1.5.0 -> v1.0.0; v1.x provide
 *   example.com/v1 Widget, v2.0.0 example.com/v2 Widget.
 * Package baz (stable): baz.v1.0.0 requires API example.com/v2 Widget
 *   and package missing ">=1.0.0".
 */
static char *bundle(const char *pkg, const char *ver, const char *extra)
{
	return al_sprintf(
	    "{\"schema\":\"olm.bundle\",\"name\":\"%s.v%s\",\"package\":\"%s\","
	    "\"image\":\"quay.io/t/%s-bundle:v%s\",\"properties\":["
	    "{\"type\":\"olm.package\",\"value\":{\"packageName\":\"%s\","
	    "\"version\":\"%s\"}}%s],\"relatedImages\":["
	    "{\"name\":\"op\",\"image\":\"quay.io/t/%s-op:v%s\"},"
	    "{\"name\":\"shared\",\"image\":\"quay.io/t/shared:1\"}]}\n",
	    pkg, ver, pkg, pkg, ver, pkg, ver, extra != NULL ? extra : "", pkg,
	    ver);
}

#define GVK1                                                                   \
	",{\"type\":\"olm.gvk\",\"value\":{\"group\":\"example.com\","         \
	"\"version\":\"v1\",\"kind\":\"Widget\"}}"
#define GVK2                                                                   \
	",{\"type\":\"olm.gvk\",\"value\":{\"group\":\"example.com\","         \
	"\"version\":\"v2\",\"kind\":\"Widget\"}}"

static const char FOO_YAML[] =
    "---\n"
    "schema: olm.package\nname: foo\ndefaultChannel: stable\n"
    "description: test package\n"
    "---\n"
    "schema: olm.channel\npackage: foo\nname: stable\nentries:\n"
    "  - name: foo.v1.0.0\n"
    "  - name: foo.v1.1.0\n    replaces: foo.v1.0.0\n"
    "  - name: foo.v1.1.5\n    replaces: foo.v1.1.0\n"
    "  - name: foo.v1.2.0\n    replaces: foo.v1.1.0\n    skips: [foo.v1.1.5]\n"
    "  - name: foo.v2.0.0\n    replaces: foo.v1.2.0\n"
    "    skipRange: '>=1.0.0 <2.0.0'\n"
    "  - name: foo.v2.1.0\n    replaces: foo.v2.0.0\n"
    "---\n"
    "schema: olm.channel\npackage: foo\nname: fast\nentries:\n"
    "  - name: foo.v2.1.0\n"
    "  - name: foo.v2.2.0-rc.1\n    replaces: foo.v2.1.0\n"
    "---\n"
    "schema: olm.channel\npackage: foo\nname: legacy\nentries:\n"
    "  - name: foo.v0.9.0\n"
    "  - name: foo.v0.9.5\n    replaces: foo.v0.9.0\n"
    "---\n"
    "schema: olm.deprecations\npackage: foo\nentries:\n"
    "  - reference: {schema: olm.package}\n    message: foo is old\n"
    "  - reference: {schema: olm.channel, name: legacy}\n    message: gone\n"
    "  - reference: {schema: olm.bundle, name: foo.v1.0.0}\n"
    "    message: broken\n";

static const char OTHER_JSON[] =
    "{\"schema\":\"olm.package\",\"name\":\"bar\",\"defaultChannel\":"
    "\"stable\"}\n"
    "{\"schema\":\"olm.channel\",\"package\":\"bar\",\"name\":\"stable\","
    "\"entries\":["
    "{\"name\":\"bar.v1.0.0\"},"
    "{\"name\":\"bar.v1.0.5\",\"replaces\":\"bar.v1.0.0\"},"
    "{\"name\":\"bar.v1.1.0\",\"replaces\":\"bar.v1.0.0\",\"skipRange\":\">=1."
    "0.0 <1.1.0\"},"
    "{\"name\":\"bar.v1.2.0\",\"replaces\":\"bar.v1.1.0\",\"skips\":[\"bar.v1."
    "0.5\"]}]}"
    "{\"schema\":\"olm.package\",\"name\":\"dep\",\"defaultChannel\":"
    "\"stable\"}"
    "{\"schema\":\"olm.channel\",\"package\":\"dep\",\"name\":\"stable\","
    "\"entries\":["
    "{\"name\":\"dep.v1.0.0\"},{\"name\":\"dep.v1.5.0\",\"replaces\":\"dep.v1."
    "0.0\"},"
    "{\"name\":\"dep.v2.0.0\",\"replaces\":\"dep.v1.5.0\"}]}\n"
    "{\"schema\":\"olm.package\",\"name\":\"baz\",\"defaultChannel\":"
    "\"stable\"}"
    "{\"schema\":\"olm.channel\",\"package\":\"baz\",\"name\":\"stable\","
    "\"entries\":["
    "{\"name\":\"baz.v1.0.0\"}]}\n";

static al_catalog *load_test_catalog(void)
{
	static const struct {
		const char *pkg, *ver, *extra;
	} bs[] = {
	    {"foo", "0.9.0", NULL},
	    {"foo", "0.9.5", NULL},
	    {"foo", "1.0.0", NULL},
	    {"foo", "1.1.0", NULL},
	    {"foo", "1.1.5", NULL},
	    {"foo", "1.2.0", NULL},
	    {"foo", "2.0.0", NULL},
	    {"foo", "2.1.0",
	     ",{\"type\":\"olm.package.required\",\"value\":{\"packageName\":"
	     "\"dep\",\"versionRange\":\">=1.0.0 <2.0.0\"}}"},
	    {"foo", "2.2.0-rc.1", NULL},
	    {"bar", "1.0.0", NULL},
	    {"bar", "1.0.5", NULL},
	    {"bar", "1.1.0", NULL},
	    {"bar", "1.2.0", NULL},
	    {"dep", "1.0.0", GVK1},
	    {"dep", "1.5.0", GVK1},
	    {"dep", "2.0.0", GVK2},
	    {"baz", "1.0.0",
	     ",{\"type\":\"olm.gvk.required\",\"value\":{\"group\":"
	     "\"example.com\",\"version\":\"v2\",\"kind\":\"Widget\"}}"
	     ",{\"type\":\"olm.package.required\",\"value\":{\"packageName\":"
	     "\"missing\",\"versionRange\":\">=1.0.0\"}}"},
	};
	al_buf b = AL_BUF_INIT(1 << 20);
	al_catalog *c = NULL;
	size_t i;
	int ok = 1;

	for (i = 0; i < sizeof(bs) / sizeof(bs[0]); i++) {
		char *s = bundle(bs[i].pkg, bs[i].ver, bs[i].extra);

		ok = ok && s != NULL && al_buf_puts(&b, s) == 0;
		free(s);
	}
	ok = ok && al_catalog_new(&c) == 0;
	ok = ok && al_catalog_add_file(c, "foo/catalog.yaml",
	                               (const uint8_t *)FOO_YAML,
	                               strlen(FOO_YAML)) == 0;
	ok = ok &&
	     al_catalog_add_file(c, "other.json", (const uint8_t *)OTHER_JSON,
	                         strlen(OTHER_JSON)) == 0;
	ok = ok && al_catalog_add_file(c, "bundles.json", b.ptr, b.len) == 0;
	ok = ok && al_catalog_finish(c) == 0;
	if (!ok)
		fprintf(stderr, "load_test_catalog: %s\n", al_error_message());
	CU_ASSERT(ok);
	al_buf_free(&b);
	if (!ok) {
		al_catalog_free(c);
		return NULL;
	}
	return c;
}

/* Filter and compare the summary with the expectation worked out by
 * hand; returns the filtered catalog for more checks (caller frees). */
static al_catalog *filter_expect(const al_catalog_filter *f, const char *expect)
{
	al_catalog *c = load_test_catalog(), *out = NULL;
	char *sum = NULL;
	int rc;

	if (c == NULL)
		return NULL;
	rc = al_catalog_filter_apply(&out, c, f);
	if (rc != 0)
		fprintf(stderr, "filter: %s\n", al_error_message());
	CU_ASSERT_EQUAL(rc, 0);
	if (rc == 0) {
		sum = al_catalog_summary(out);
		CU_ASSERT_PTR_NOT_NULL(sum);
		if (sum != NULL && strcmp(sum, expect) != 0)
			fprintf(stderr, "got:\n%s\nwant:\n%s\n", sum, expect);
		CU_ASSERT(sum != NULL && strcmp(sum, expect) == 0);
	}
	free(sum);
	al_catalog_free(c);
	return out;
}

/* Expect failure rc with a message containing want. */
static void filter_fails(const al_catalog_filter *f, int want_rc,
                         const char *want)
{
	al_catalog *c = load_test_catalog(), *out = NULL;
	int rc;

	if (c == NULL)
		return;
	rc = al_catalog_filter_apply(&out, c, f);
	CU_ASSERT_EQUAL(rc, want_rc);
	CU_ASSERT_PTR_NULL(out);
	if (strstr(al_error_message(), want) == NULL)
		fprintf(stderr, "message '%s' lacks '%s'\n", al_error_message(),
		        want);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), want));
	al_catalog_free(out);
	al_catalog_free(c);
}

#define DEP_15                                                                 \
	"package dep default=stable\n"                                         \
	"channel dep/stable head=dep.v1.5.0 entries=dep.v1.5.0\n"              \
	"bundles dep: dep.v1.5.0\n"

static void test_catalog__parses_json_streams_and_yaml_documents(void)
{
	al_catalog *c = load_test_catalog();
	char *sum;

	if (c == NULL)
		return;
	CU_ASSERT_EQUAL(al_catalog_package_count(c), 4);
	CU_ASSERT_EQUAL(al_catalog_bundle_count(c), 17);
	sum = al_catalog_summary(c);
	CU_ASSERT_PTR_NOT_NULL(strstr(
	    sum, "channel foo/stable head=foo.v2.1.0 entries=foo.v1.0.0,"
	         "foo.v1.1.0,foo.v1.1.5,foo.v1.2.0,foo.v2.0.0,foo.v2.1.0\n"));
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(sum, "deprecations foo: olm.package,olm.channel/legacy,"
	                "olm.bundle/foo.v1.0.0\n"));
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(sum, "channel bar/stable head=bar.v1.2.0 "));
	free(sum);
	al_catalog_free(c);
}

/* Rule: no range -> each kept channel's head (filterChannelHead); with
 * no channels listed every channel is kept; foo.v2.1.0's
 * olm.package.required dep >=1.0.0 <2.0.0 pulls dep.v1.5.0 (the highest
 * version in range in dep's default channel), alone in its channel. */
static void test_catalog__no_range_keeps_channel_heads(void)
{
	al_catalog_package_filter pf = {.name = "foo"};
	al_catalog_filter f = {.packages = &pf, .npackages = 1};
	al_catalog *out = filter_expect(
	    &f, DEP_15 "package foo default=stable\n"
	               "channel foo/fast head=foo.v2.2.0-rc.1 "
	               "entries=foo.v2.2.0-rc.1\n"
	               "channel foo/legacy head=foo.v0.9.5 entries=foo.v0.9.5\n"
	               "channel foo/stable head=foo.v2.1.0 entries=foo.v2.1.0\n"
	               "bundles foo: foo.v0.9.5,foo.v2.1.0,foo.v2.2.0-rc.1\n"
	               "deprecations foo: olm.package,olm.channel/legacy\n");

	al_catalog_free(out);
}

/* Rule: a channel range keeps every bundle of the upgrade graph in it
 * plus what links them. stable >=1.1.5 <=2.0.0: wanted 1.1.5, 1.2.0,
 * 2.0.0; counts along the replaces chain (bottom up) 1.0.0:0 1.1.0:0
 * 1.2.0:2 (itself + skips 1.1.5) 2.0.0:3 2.1.0:3; new head 2.0.0, tail
 * 1.1.0 -> {2.0.0, 1.2.0, 1.1.5}. Deprecations of the dropped channel
 * legacy and bundle 1.0.0 go. */
static void test_catalog__channel_range_follows_replaces_and_skips(void)
{
	al_catalog_channel_filter cf = {"stable", "1.1.5", "2.0.0"};
	al_catalog_package_filter pf = {
	    .name = "foo", .channels = &cf, .nchannels = 1};
	al_catalog_filter f = {.packages = &pf, .npackages = 1};
	al_catalog *out =
	    filter_expect(&f, "package foo default=stable\n"
	                      "channel foo/stable head=foo.v2.0.0 "
	                      "entries=foo.v1.1.5,foo.v1.2.0,foo.v2.0.0\n"
	                      "bundles foo: foo.v1.1.5,foo.v1.2.0,foo.v2.0.0\n"
	                      "deprecations foo: olm.package\n");

	al_catalog_free(out);
}

/* stable >=1.0.0 <=1.1.5: wanted 1.0.0, 1.1.0, 1.1.5; counts 1.0.0:1
 * 1.1.0:2 1.2.0:3 (skips 1.1.5) 2.0.0:3 2.1.0:3; the lowest entry with 3
 * is 1.2.0, kept although outside the range so that 1.1.5 stays
 * reachable (as the mirror filter warns and does). */
static void test_catalog__range_keeps_linking_bundle(void)
{
	al_catalog_channel_filter cf = {"stable", "1.0.0", "1.1.5"};
	al_catalog_package_filter pf = {
	    .name = "foo", .channels = &cf, .nchannels = 1};
	al_catalog_filter f = {.packages = &pf, .npackages = 1};
	al_catalog *out = filter_expect(
	    &f, "package foo default=stable\n"
	        "channel foo/stable head=foo.v1.2.0 entries=foo.v1.0.0,"
	        "foo.v1.1.0,foo.v1.1.5,foo.v1.2.0\n"
	        "bundles foo: foo.v1.0.0,foo.v1.1.0,foo.v1.1.5,foo.v1.2.0\n"
	        "deprecations foo: olm.package,olm.bundle/foo.v1.0.0\n");

	al_catalog_free(out);
}

/* skipRange is an edge too. bar stable >=1.0.1 <=1.0.9 wants 1.0.5;
 * counts 1.0.0:0, 1.1.0:1 (its skipRange >=1.0.0 <1.1.0 holds 1.0.5),
 * 1.2.0:1; new head 1.1.0, tail 1.0.0 -> {1.1.0, 1.0.5}, and 1.1.0 gains
 * skips [bar.v1.0.5] so that the channel keeps a single head. (Following
 * replaces and skips only, the mirror filter would keep 1.2.0.) */
static void test_catalog__skiprange_is_an_upgrade_edge(void)
{
	al_catalog_channel_filter cf = {"stable", "1.0.1", "1.0.9"};
	al_catalog_package_filter pf = {
	    .name = "bar", .channels = &cf, .nchannels = 1};
	al_catalog_filter f = {.packages = &pf, .npackages = 1};
	al_catalog *out =
	    filter_expect(&f, "package bar default=stable\n"
	                      "channel bar/stable head=bar.v1.1.0 "
	                      "entries=bar.v1.0.5,bar.v1.1.0\n"
	                      "bundles bar: bar.v1.0.5,bar.v1.1.0\n");
	al_buf b = AL_BUF_INIT(1 << 20);

	if (out != NULL) {
		CU_ASSERT_EQUAL(al_catalog_render_package(out, 0, &b), 0);
		CU_ASSERT_PTR_NOT_NULL(
		    strstr(al_buf_cstr(&b), "\"skipRange\": \">=1.0.0 "
		                            "<1.1.0\",\n"
		                            "            \"skips\": [\n"
		                            "                \"bar.v1.0.5\""));
	}
	al_buf_free(&b);
	al_catalog_free(out);
}

/* Rule: min == max selects exactly that version (OCPBUGS-61497). */
static void test_catalog__equal_min_max_selects_one_version(void)
{
	al_catalog_channel_filter cf = {"stable", "1.1.0", "1.1.0"};
	al_catalog_package_filter pf = {
	    .name = "foo", .channels = &cf, .nchannels = 1};
	al_catalog_filter f = {.packages = &pf, .npackages = 1};
	al_catalog *out = filter_expect(
	    &f, "package foo default=stable\n"
	        "channel foo/stable head=foo.v1.1.0 entries=foo.v1.1.0\n"
	        "bundles foo: foo.v1.1.0\n"
	        "deprecations foo: olm.package\n");

	al_catalog_free(out);
}

/* Rule: package minVersion applies to every channel. foo >=2.0.0:
 * stable {2.0.0, 2.1.0}; fast {2.1.0} (2.2.0-rc.1 is a prerelease and
 * the range has none: Masterminds semantics); legacy has nothing in
 * range and is not the default channel, so it is dropped; 2.1.0 pulls
 * dep.v1.5.0. */
static void test_catalog__package_range_applies_to_all_channels(void)
{
	al_catalog_package_filter pf = {.name = "foo", .min_version = "2.0.0"};
	al_catalog_filter f = {.packages = &pf, .npackages = 1};
	al_catalog *out = filter_expect(
	    &f, DEP_15 "package foo default=stable\n"
	               "channel foo/fast head=foo.v2.1.0 entries=foo.v2.1.0\n"
	               "channel foo/stable head=foo.v2.1.0 "
	               "entries=foo.v2.0.0,foo.v2.1.0\n"
	               "bundles foo: foo.v2.0.0,foo.v2.1.0\n"
	               "deprecations foo: olm.package\n");

	al_catalog_free(out);
}

/* Rule: the default channel stays valid. Keeping only fast drops the
 * catalog's default stable: oc-mirror requires a defaultChannel then. */
static void test_catalog__default_channel_must_stay_valid(void)
{
	al_catalog_channel_filter cf = {"fast", NULL, NULL};
	al_catalog_package_filter pf = {
	    .name = "foo", .channels = &cf, .nchannels = 1};
	al_catalog_filter f = {
	    .packages = &pf, .npackages = 1, .skip_dependencies = 1};
	al_catalog *out;

	filter_fails(&f, AL_EINVAL,
	             "default channel 'stable' was filtered out");
	pf.default_channel = "fast";
	out = filter_expect(&f, "package foo default=fast\n"
	                        "channel foo/fast head=foo.v2.2.0-rc.1 "
	                        "entries=foo.v2.2.0-rc.1\n"
	                        "bundles foo: foo.v2.2.0-rc.1\n"
	                        "deprecations foo: olm.package\n");
	al_catalog_free(out);
	pf.default_channel = "legacy";
	filter_fails(&f, AL_EINVAL, "defaultChannel 'legacy' is not among");
}

/* Rule: a range that empties the default channel is an error. */
static void test_catalog__empty_default_channel_is_refused(void)
{
	al_catalog_package_filter pf = {.name = "foo", .max_version = "0.9.9"};
	al_catalog_filter f = {.packages = &pf, .npackages = 1};

	filter_fails(&f, AL_ENOTFOUND,
	             "package 'foo' channel 'stable': no bundle in version "
	             "range >= <=0.9.9; the channel has 1.0.0, 1.1.0");
}

/* Rule: full keeps every entry of the kept channels; with no packages
 * the whole catalog. Mixing full with a range or bundles is refused. */
static void test_catalog__full_keeps_everything(void)
{
	al_catalog_channel_filter cf = {"legacy", NULL, NULL};
	al_catalog_package_filter pf = {.name = "foo",
	                                .default_channel = "legacy",
	                                .channels = &cf,
	                                .nchannels = 1};
	al_catalog_filter f = {.packages = &pf, .npackages = 1, .full = 1};
	al_catalog_filter all = {.full = 1};
	al_catalog *out = filter_expect(
	    &f, "package foo default=legacy\n"
	        "channel foo/legacy head=foo.v0.9.5 "
	        "entries=foo.v0.9.0,foo.v0.9.5\n"
	        "bundles foo: foo.v0.9.0,foo.v0.9.5\n"
	        "deprecations foo: olm.package,olm.channel/legacy\n");
	al_catalog *in = load_test_catalog();

	al_catalog_free(out);
	out = NULL;
	if (in != NULL) {
		char *a, *b;

		CU_ASSERT_EQUAL(al_catalog_filter_apply(&out, in, &all), 0);
		a = al_catalog_summary(in);
		b = out != NULL ? al_catalog_summary(out) : NULL;
		CU_ASSERT(a != NULL && b != NULL && strcmp(a, b) == 0);
		free(a);
		free(b);
	}
	al_catalog_free(in);
	al_catalog_free(out);
	cf.min_version = "0.9.0";
	filter_fails(&f, AL_EINVAL, "full: true cannot be mixed");
}

/* Rule: bundles[] keeps exactly the named bundles in each kept channel;
 * channels left empty (fast, legacy) go, the default must not be empty. */
static void test_catalog__selected_bundles(void)
{
	const char *names[] = {"foo.v1.1.0", "foo.v1.0.0"};
	const char *bad[] = {"foo.v0.9.0"};
	const char *unknown[] = {"foo.v7.0.0"};
	al_catalog_package_filter pf = {
	    .name = "foo", .bundles = names, .nbundles = 2};
	al_catalog_filter f = {.packages = &pf, .npackages = 1};
	al_catalog *out = filter_expect(
	    &f, "package foo default=stable\n"
	        "channel foo/stable head=foo.v1.1.0 "
	        "entries=foo.v1.0.0,foo.v1.1.0\n"
	        "bundles foo: foo.v1.0.0,foo.v1.1.0\n"
	        "deprecations foo: olm.package,olm.bundle/foo.v1.0.0\n");

	al_catalog_free(out);
	pf.bundles = bad;
	pf.nbundles = 1;
	filter_fails(&f, AL_ENOTFOUND, "none of the selected bundles");
	pf.bundles = unknown;
	filter_fails(&f, AL_ENOTFOUND, "bundle 'foo.v7.0.0' not found");
	pf.bundles = names;
	pf.nbundles = 2;
	pf.min_version = "1.0.0";
	filter_fails(&f, AL_EINVAL, "bundles cannot be mixed");
}

/* Rule: a filter that matches nothing names it and what exists. */
static void test_catalog__no_match_names_what_exists(void)
{
	al_catalog_channel_filter cf = {"stable", "5.0.0", NULL};
	al_catalog_channel_filter nocf = {"nightly", NULL, NULL};
	al_catalog_package_filter pf = {
	    .name = "foo", .channels = &cf, .nchannels = 1};
	al_catalog_package_filter nopf = {.name = "qux"};
	al_catalog_filter f = {.packages = &pf, .npackages = 1};

	filter_fails(&f, AL_ENOTFOUND,
	             "package 'foo' channel 'stable': no bundle in version "
	             "range >=5.0.0 <=; the channel has 1.0.0, 1.1.0, 1.1.5, "
	             "1.2.0, 2.0.0, 2.1.0");
	pf.channels = &nocf;
	filter_fails(&f, AL_ENOTFOUND,
	             "channel 'nightly' not found; the package has fast, "
	             "legacy, stable");
	f.packages = &nopf;
	filter_fails(&f, AL_ENOTFOUND,
	             "package 'qux' not found in the catalog; it has bar, baz, "
	             "dep, foo");
	pf.channels = &cf;
	pf.min_version = "1.0.0";
	f.packages = &pf;
	filter_fails(&f, AL_EINVAL, "cannot use channels and package");
}

/* Rule: olm.gvk.required pulls the bundle providing the API (dep.v2.0.0
 * for example.com/v2 Widget); its channel keeps 2.0.0 alone; a required
 * package that is not in the catalog is reported, not guessed. */
static void test_catalog__gvk_dependency_and_unresolved(void)
{
	al_catalog_package_filter pf = {.name = "baz"};
	al_catalog_filter f = {.packages = &pf, .npackages = 1};
	al_catalog *out = filter_expect(
	    &f, "package baz default=stable\n"
	        "channel baz/stable head=baz.v1.0.0 entries=baz.v1.0.0\n"
	        "bundles baz: baz.v1.0.0\n"
	        "package dep default=stable\n"
	        "channel dep/stable head=dep.v2.0.0 entries=dep.v2.0.0\n"
	        "bundles dep: dep.v2.0.0\n");

	if (out != NULL) {
		CU_ASSERT_EQUAL(al_catalog_unresolved_count(out), 1);
		CU_ASSERT_PTR_NOT_NULL(
		    strstr(al_catalog_unresolved_at(out, 0) != NULL
		               ? al_catalog_unresolved_at(out, 0)
		               : "",
		           "requires package 'missing' >=1.0.0"));
	}
	al_catalog_free(out);
}

/* Two dependents on dep: foo.v2.1.0 wants dep 1.x (1.5.0), baz wants
 * example.com/v2 (2.0.0): dep's channel keeps 2.0.0 -> 1.5.0. With
 * skipDependencies neither comes. */
static void test_catalog__dependencies_merge_and_skip(void)
{
	al_catalog_channel_filter cf = {"stable", NULL, NULL};
	al_catalog_package_filter pf[2] = {
	    {.name = "foo", .channels = &cf, .nchannels = 1}, {.name = "baz"}};
	al_catalog_filter f = {.packages = pf, .npackages = 2};
	al_catalog *out = filter_expect(
	    &f, "package baz default=stable\n"
	        "channel baz/stable head=baz.v1.0.0 entries=baz.v1.0.0\n"
	        "bundles baz: baz.v1.0.0\n"
	        "package dep default=stable\n"
	        "channel dep/stable head=dep.v2.0.0 "
	        "entries=dep.v1.5.0,dep.v2.0.0\n"
	        "bundles dep: dep.v1.5.0,dep.v2.0.0\n"
	        "package foo default=stable\n"
	        "channel foo/stable head=foo.v2.1.0 entries=foo.v2.1.0\n"
	        "bundles foo: foo.v2.1.0\n"
	        "deprecations foo: olm.package\n");

	al_catalog_free(out);
	f.skip_dependencies = 1;
	out = filter_expect(
	    &f, "package baz default=stable\n"
	        "channel baz/stable head=baz.v1.0.0 entries=baz.v1.0.0\n"
	        "bundles baz: baz.v1.0.0\n"
	        "package foo default=stable\n"
	        "channel foo/stable head=foo.v2.1.0 entries=foo.v2.1.0\n"
	        "bundles foo: foo.v2.1.0\n"
	        "deprecations foo: olm.package\n");
	al_catalog_free(out);
}

/* Rule: no packages and not full -> every channel's head of every
 * package (the mirror filter's default case over the whole catalog). */
static void test_catalog__no_packages_keeps_every_head(void)
{
	al_catalog_filter f = {.skip_dependencies = 1};
	al_catalog *out = filter_expect(
	    &f, "package bar default=stable\n"
	        "channel bar/stable head=bar.v1.2.0 entries=bar.v1.2.0\n"
	        "bundles bar: bar.v1.2.0\n"
	        "package baz default=stable\n"
	        "channel baz/stable head=baz.v1.0.0 entries=baz.v1.0.0\n"
	        "bundles baz: baz.v1.0.0\n"
	        "package dep default=stable\n"
	        "channel dep/stable head=dep.v2.0.0 entries=dep.v2.0.0\n"
	        "bundles dep: dep.v2.0.0\n"
	        "package foo default=stable\n"
	        "channel foo/fast head=foo.v2.2.0-rc.1 "
	        "entries=foo.v2.2.0-rc.1\n"
	        "channel foo/legacy head=foo.v0.9.5 entries=foo.v0.9.5\n"
	        "channel foo/stable head=foo.v2.1.0 entries=foo.v2.1.0\n"
	        "bundles foo: foo.v0.9.5,foo.v2.1.0,foo.v2.2.0-rc.1\n"
	        "deprecations foo: olm.package,olm.channel/legacy\n");

	al_catalog_free(out);
}

/* Rendered output parses back to the same catalog; images are every
 * bundle image and related image, deduplicated. */
static void test_catalog__render_roundtrip_and_images(void)
{
	al_catalog_channel_filter cf = {"stable", "1.1.5", "2.0.0"};
	al_catalog_package_filter pf = {
	    .name = "foo", .channels = &cf, .nchannels = 1};
	al_catalog_filter f = {.packages = &pf, .npackages = 1};
	al_catalog *in = load_test_catalog(), *out = NULL, *back = NULL;
	al_buf b = AL_BUF_INIT(1 << 20);
	char **imgs = NULL, *s1 = NULL, *s2 = NULL;
	size_t n = 0;

	if (in == NULL)
		return;
	CU_ASSERT_EQUAL(al_catalog_filter_apply(&out, in, &f), 0);
	if (out == NULL)
		goto out;
	CU_ASSERT_EQUAL(al_catalog_render_package(out, 0, &b), 0);
	CU_ASSERT(al_str_startswith(al_buf_cstr(&b),
	                            "{\n    \"schema\": \"olm.package\",\n"
	                            "    \"name\": \"foo\",\n"));
	CU_ASSERT_EQUAL(al_catalog_new(&back), 0);
	CU_ASSERT_EQUAL(
	    al_catalog_add_file(back, "foo/catalog.json", b.ptr, b.len), 0);
	CU_ASSERT_EQUAL(al_catalog_finish(back), 0);
	s1 = al_catalog_summary(out);
	s2 = al_catalog_summary(back);
	CU_ASSERT(s1 != NULL && s2 != NULL && strcmp(s1, s2) == 0);
	CU_ASSERT_EQUAL(al_catalog_images(out, &imgs, &n), 0);
	CU_ASSERT_EQUAL(n, 7);
	if (n == 7) {
		CU_ASSERT_STRING_EQUAL(imgs[0], "quay.io/t/foo-bundle:v1.1.5");
		CU_ASSERT_STRING_EQUAL(imgs[3], "quay.io/t/foo-op:v1.1.5");
		CU_ASSERT_STRING_EQUAL(imgs[6], "quay.io/t/shared:1");
	}
out:
	al_catalog_images_free(imgs, n);
	free(s1);
	free(s2);
	al_buf_free(&b);
	al_catalog_free(back);
	al_catalog_free(out);
	al_catalog_free(in);
}

/* OCPBUGS-33081 (oc-mirror's isc-operator-invalid-images.yaml): a
 * selected bundle whose related image has neither tag nor digest refuses
 * the catalog's image list, where a default :latest would be mirrored. */
static void test_catalog__untagged_related_image_refused(void)
{
	static const char text[] =
	    "{\"schema\":\"olm.package\",\"name\":\"p\","
	    "\"defaultChannel\":\"s\"}\n"
	    "{\"schema\":\"olm.channel\",\"name\":\"s\",\"package\":\"p\","
	    "\"entries\":[{\"name\":\"p.v1\"}]}\n"
	    "{\"schema\":\"olm.bundle\",\"name\":\"p.v1\",\"package\":\"p\","
	    "\"image\":\"quay.io/t/p-bundle@sha256:"
	    "0000000000000000000000000000000000000000000000000000000000000000"
	    "\",\"properties\":[{\"type\":\"olm.package\",\"value\":"
	    "{\"packageName\":\"p\",\"version\":\"1.0.0\"}}],"
	    "\"relatedImages\":[{\"name\":\"op\",\"image\":"
	    "\"quay.io/t/p-operator\"}]}\n";
	al_catalog *c = NULL;
	char **imgs = NULL;
	size_t n = 0;

	CU_ASSERT_EQUAL_FATAL(al_catalog_new(&c), 0);
	CU_ASSERT_EQUAL(al_catalog_add_file(c, "p/catalog.json",
	                                    (const uint8_t *)text,
	                                    strlen(text)),
	                0);
	CU_ASSERT_EQUAL(al_catalog_finish(c), 0);
	CU_ASSERT_EQUAL(al_catalog_images(c, &imgs, &n), AL_EPARSE);
	CU_ASSERT_EQUAL(n, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(),
	                              "package 'p' bundle 'p.v1': image "
	                              "'quay.io/t/p-operator' has neither tag "
	                              "nor digest"));
	al_catalog_images_free(imgs, n);
	al_catalog_free(c);
}

static int finish_fails(const char *text, const char *want)
{
	al_catalog *c = NULL;
	int rc;

	if (al_catalog_new(&c) != 0)
		return 0;
	rc = al_catalog_add_file(c, "x.yaml", (const uint8_t *)text,
	                         strlen(text));
	if (rc == 0)
		rc = al_catalog_finish(c);
	al_catalog_free(c);
	if (rc == 0 || strstr(al_error_message(), want) == NULL) {
		fprintf(stderr, "rc %d message '%s' (want '%s')\n", rc,
		        al_error_message(), want);
		return 0;
	}
	return 1;
}

#define PKG                                                                    \
	"{\"schema\":\"olm.package\",\"name\":\"p\",\"defaultChannel\":\"c\"}" \
	"\n"
#define B(v)                                                                   \
	"{\"schema\":\"olm.bundle\",\"package\":\"p\",\"name\":\"p.v" v        \
	"\",\"image\":\"i\",\"properties\":[{\"type\":\"olm.package\","        \
	"\"value\":{\"packageName\":\"p\",\"version\":\"" v "\"}}]}\n"

static void test_catalog__validation_like_declcfg(void)
{
	CU_ASSERT(finish_fails(
	    PKG B("1.0.0")
	        B("2.0.0") "{\"schema\":\"olm.channel\",\"package\":\"p\","
	                   "\"name\":\"c\",\"entries\":[{\"name\":"
	                   "\"p.v1.0.0\"},{\"name\":\"p.v2.0.0\"}]}",
	    "multiple channel heads"));
	CU_ASSERT(finish_fails(
	    PKG B("1.0.0") "{\"schema\":\"olm.channel\",\"package\":\"p\","
	                   "\"name\":\"c\",\"entries\":[{\"name\":"
	                   "\"p.v1.0.0\"},{\"name\":\"p.v3.0.0\"}]}",
	    "entry 'p.v3.0.0' has no bundle"));
	CU_ASSERT(finish_fails(
	    PKG B("1.0.0")
	        B("2.0.0") "{\"schema\":\"olm.channel\",\"package\":\"p\","
	                   "\"name\":\"c\",\"entries\":[{\"name\":"
	                   "\"p.v1.0.0\"}]}",
	    "bundle 'p.v2.0.0' is not in any channel"));
	CU_ASSERT(finish_fails(
	    PKG B("1.0.0")
	        B("2.0.0") "{\"schema\":\"olm.channel\",\"package\":\"p\","
	                   "\"name\":\"c\",\"entries\":[{\"name\":"
	                   "\"p.v1.0.0\",\"replaces\":\"p.v2.0.0\"},"
	                   "{\"name\":\"p.v2.0.0\",\"replaces\":"
	                   "\"p.v1.0.0\"}]}",
	    "no channel heads"));
	CU_ASSERT(finish_fails(PKG PKG, "package 'p' is defined twice"));
	CU_ASSERT(finish_fails("{\"name\":\"x\"}", "missing root schema"));
	CU_ASSERT(finish_fails("{\"schema\":\"olm.package\",\"name\":\"a\","
	                       "\"name\":\"b\"}",
	                       "duplicate"));
	CU_ASSERT(finish_fails("schema: olm.package\nname: a\nname: b\n",
	                       "duplicate"));
	CU_ASSERT(finish_fails(PKG B("1.0") "", "not a semantic version"));
	CU_ASSERT(finish_fails("{\"schema\":\"olm.package\",\"name\":\"p\","
	                       "\"defaultChannel\":\"nope\"}",
	                       "default channel 'nope' does not exist"));
	CU_ASSERT(finish_fails(
	    PKG B("1.0.0") "{\"schema\":\"olm.channel\",\"package\":\"p\","
	                   "\"name\":\"c\",\"entries\":[{\"name\":"
	                   "\"p.v1.0.0\",\"skipRange\":\"~~1\"}]}",
	    "skipRange '~~1' is not a version range"));
	CU_ASSERT(finish_fails(B("1.0.0"), "package 'p' not found"));
	/* package names become directories: no traversal */
	CU_ASSERT(finish_fails("{\"schema\":\"olm.package\",\"name\":"
	                       "\"../etc\"}",
	                       "package name '../etc' cannot be a directory"));
	CU_ASSERT(finish_fails("{\"schema\":\"olm.package\",\"name\":"
	                       "\"..\"}",
	                       "cannot be a directory"));
}

static void test_catalog__semver_ranges_like_blang(void)
{
	int err = 0;

	CU_ASSERT_EQUAL(al_catalog_semver_match(">=4.1.0 <4.2.0", "4.1.7"), 1);
	CU_ASSERT_EQUAL(al_catalog_semver_match(">=4.1.0 <4.2.0", "4.2.0"), 0);
	CU_ASSERT_EQUAL(al_catalog_semver_match("<1.0.0 || >=2.0.0", "2.1.0"),
	                1);
	CU_ASSERT_EQUAL(al_catalog_semver_match("<1.0.0 || >=2.0.0", "1.5.0"),
	                0);
	CU_ASSERT_EQUAL(al_catalog_semver_match(">= 1.2.3", "1.2.3"), 1);
	CU_ASSERT_EQUAL(al_catalog_semver_match("1.2.x", "1.2.9"), 1);
	CU_ASSERT_EQUAL(al_catalog_semver_match("1.2.x", "1.3.0"), 0);
	CU_ASSERT_EQUAL(al_catalog_semver_match("<=1.x", "1.99.0"), 1);
	CU_ASSERT_EQUAL(al_catalog_semver_match("!=1.0.0", "1.0.0"), 0);
	/* blang: prereleases take part in ranges like any version */
	CU_ASSERT_EQUAL(al_catalog_semver_match(">=1.0.0 <2.0.0", "2.0.0-rc.1"),
	                1);
	CU_ASSERT_EQUAL(al_catalog_semver_match("1.0.0", "1.0.0+build.5"), 1);
	CU_ASSERT(al_catalog_semver_match(">=1.0", "1.0.0") < 0);
	CU_ASSERT(al_catalog_semver_match(">=1.0.0", "01.0.0") < 0);
	CU_ASSERT(al_catalog_semver_match("", "1.0.0") < 0);
	CU_ASSERT(al_catalog_semver_cmp("1.0.0-alpha", "1.0.0-alpha.1", &err) <
	          0);
	CU_ASSERT(
	    al_catalog_semver_cmp("1.0.0-alpha.beta", "1.0.0-beta", &err) < 0);
	CU_ASSERT(al_catalog_semver_cmp("1.0.0-beta.11", "1.0.0-rc.1", &err) <
	          0);
	CU_ASSERT(al_catalog_semver_cmp("1.0.0-beta.2", "1.0.0-beta.11", &err) <
	          0);
	CU_ASSERT(al_catalog_semver_cmp("1.0.0-rc.1", "1.0.0", &err) < 0);
	CU_ASSERT(al_catalog_semver_cmp("1.0.0+a", "1.0.0+b", &err) == 0);
	CU_ASSERT_EQUAL(err, 0);
	al_catalog_semver_cmp("x", "1.0.0", &err);
	CU_ASSERT_EQUAL(err, 1);
}

/* ---- images (tests/tools/mkcatalog.py) ------------------------------- */

/* Make a layout with mkcatalog.py; returns the opened store and the
 * manifest digest of name, or NULL (test skipped without python3). */
static al_store *make_layout(const char *sub, const char *name,
                             const char *flags, al_digest *d)
{
	char *dir = al_sprintf("%s/%s", al_test_tmpdir(), sub);
	al_store *s = NULL;
	al_store_image img;
	int rc;

	memset(&img, 0, sizeof(img));
	if (al_test_sh("command -v python3 >/dev/null") != 0) {
		al_test_skip("python3 missing: catalog image tests");
		free(dir);
		return NULL;
	}
	rc = al_test_sh(
	    "python3 %s/tests/tools/mkcatalog.py %s %s %s >/dev/null",
	    al_test_source_dir(), dir, name, flags);
	CU_ASSERT_EQUAL(rc, 0);
	if (rc == 0 && al_store_open(&s, dir, NULL) == 0 &&
	    al_store_find(s, name, &img) == 0)
		*d = img.desc.digest;
	else
		CU_FAIL("cannot open the generated layout");
	al_store_image_clear(&img);
	free(dir);
	return s;
}

#define GEN_ALPHA                                                              \
	"package alpha default=stable\n"                                       \
	"channel alpha/fast head=alpha.v2.0.0-rc.1 "                           \
	"entries=alpha.v1.3.0,alpha.v2.0.0-rc.1\n"                             \
	"channel alpha/stable head=alpha.v1.3.0 entries=alpha.v1.0.0,"         \
	"alpha.v1.1.0,alpha.v1.1.1,alpha.v1.2.0,alpha.v1.3.0\n"                \
	"bundles alpha: alpha.v1.0.0,alpha.v1.1.0,alpha.v1.1.1,alpha.v1.2.0,"  \
	"alpha.v1.3.0,alpha.v2.0.0-rc.1\n"

/* Three layers: the third deletes configs/stale (.wh.stale) and replaces
 * gamma's YAML; .indexignore hides README.md (not YAML). */
static void test_catalog__reads_image_layers_with_whiteouts(void)
{
	al_digest d;
	al_store *s = make_layout("img1", "cat:1", "", &d);
	al_catalog *c = NULL;
	char *dir = NULL, *sum = NULL;
	int rc;

	if (s == NULL)
		return;
	rc = al_catalog_open_image(&c, &dir, s, &d, NULL);
	if (rc != 0)
		fprintf(stderr, "open_image: %s\n", al_error_message());
	CU_ASSERT_EQUAL(rc, 0);
	if (rc == 0) {
		CU_ASSERT_STRING_EQUAL(dir, "configs");
		sum = al_catalog_summary(c);
		CU_ASSERT(al_str_startswith(sum, GEN_ALPHA));
		CU_ASSERT_PTR_NULL(strstr(sum, "stale"));
		CU_ASSERT_PTR_NOT_NULL(strstr(
		    sum, "channel gamma/stable head=gamma.v0.2.0 "
		         "entries=gamma.v0.1.0,gamma.v0.2.0\n"
		         "bundles gamma: gamma.v0.1.0,gamma.v0.2.0\n"
		         "deprecations gamma: olm.bundle/gamma.v0.1.0\n"));
		CU_ASSERT_EQUAL(al_catalog_package_count(c), 3);
	}
	free(sum);
	free(dir);
	al_catalog_free(c);
	al_store_free(s);
}

/* An opaque whiteout in the third layer hides every lower file of
 * configs/: only that layer's gamma remains. A symbolic link under
 * configs/ is refused (airlock never resolves paths in an image). */
static void test_catalog__opaque_whiteout_and_symlink(void)
{
	al_digest d1, d2;
	al_store *s1 = make_layout("img5", "cat:1", "--opaque", &d1);
	al_store *s2 = make_layout("img6", "cat:1", "--symlink", &d2);
	al_catalog *c = NULL;

	if (s1 != NULL) {
		CU_ASSERT_EQUAL(al_catalog_open_image(&c, NULL, s1, &d1, NULL),
		                0);
		if (c != NULL) {
			CU_ASSERT_EQUAL(al_catalog_package_count(c), 1);
			CU_ASSERT_STRING_EQUAL(al_catalog_package_name(c, 0),
			                       "gamma");
		}
		al_catalog_free(c);
		c = NULL;
	}
	if (s2 != NULL) {
		CU_ASSERT_EQUAL(al_catalog_open_image(&c, NULL, s2, &d2, NULL),
		                AL_EUNSUPPORTED);
		CU_ASSERT_PTR_NOT_NULL(strstr(
		    al_error_message(), "'configs/link' is a symbolic link"));
		CU_ASSERT_PTR_NULL(c);
	}
	al_store_free(s1);
	al_store_free(s2);
}

/* A multi-arch catalog: read through the index (linux/amd64 by default,
 * linux/arm64 on request); rebuilt into an OCI index with both platforms
 * (the attestation entry left out), each readable back. */
static void test_catalog__rebuild_index_keeps_platforms(void)
{
	al_catalog_package_filter pf = {.name = "beta"};
	al_catalog_filter f = {.packages = &pf, .npackages = 1};
	al_digest d;
	al_store *s = make_layout("img8", "cat:1", "--index", &d);
	al_catalog *c = NULL, *fc = NULL, *arm = NULL;
	al_descriptor nd;
	al_buf b = AL_BUF_INIT(1 << 20);
	json_t *idx = NULL;

	memset(&nd, 0, sizeof(nd));
	if (s == NULL)
		return;
	CU_ASSERT_EQUAL(al_catalog_open_image(&c, NULL, s, &d, NULL), 0);
	CU_ASSERT_EQUAL(al_catalog_open_image(&arm, NULL, s, &d, "linux/arm64"),
	                0);
	if (c == NULL || al_catalog_filter_apply(&fc, c, &f) != 0)
		goto out;
	CU_ASSERT_EQUAL(al_catalog_rebuild(s, &d, NULL, fc, "cat:f", &nd), 0);
	CU_ASSERT_STRING_EQUAL(nd.media_type != NULL ? nd.media_type : "",
	                       "application/vnd.oci.image.index.v1+json");
	if (al_store_read_blob(s, &nd.digest, &b) == 0 &&
	    al_json_parse(&idx, b.ptr, b.len, "idx") == 0) {
		json_t *m = json_object_get(idx, "manifests");

		CU_ASSERT_EQUAL(json_array_size(m), 2);
		CU_ASSERT_STRING_EQUAL(
		    al_json_str(
		        json_object_get(json_array_get(m, 1), "platform"),
		        "architecture"),
		    "arm64");
	} else {
		CU_FAIL("index");
	}
	al_catalog_free(arm);
	arm = NULL;
	CU_ASSERT_EQUAL(
	    al_catalog_open_image(&arm, NULL, s, &nd.digest, "linux/arm64"), 0);
	if (arm != NULL) {
		CU_ASSERT_EQUAL(al_catalog_package_count(arm), 1);
		CU_ASSERT_STRING_EQUAL(al_catalog_package_name(arm, 0), "beta");
	}
out:
	json_decref(idx);
	al_buf_free(&b);
	al_descriptor_clear(&nd);
	al_catalog_free(arm);
	al_catalog_free(fc);
	al_catalog_free(c);
	al_store_free(s);
}

static void test_catalog__sqlite_catalog_is_refused(void)
{
	al_digest d;
	al_store *s = make_layout("img2", "sqlite:1", "--sqlite", &d);
	al_catalog *c = NULL;

	if (s == NULL)
		return;
	CU_ASSERT_EQUAL(al_catalog_open_image(&c, NULL, s, &d, NULL),
	                AL_EUNSUPPORTED);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "SQLite-based"));
	CU_ASSERT_PTR_NULL(c);
	al_store_free(s);
}

/* A layer whose bytes changed after it was stored is AL_EVERIFY. */
static void test_catalog__corrupt_layer_is_everify(void)
{
	al_digest d;
	al_store *s = make_layout("img3", "cat:1", "", &d);
	al_catalog *c = NULL;
	al_buf mb = AL_BUF_INIT(1 << 20);
	json_t *m = NULL;
	char *path = NULL;

	if (s == NULL)
		return;
	if (al_store_read_blob(s, &d, &mb) == 0 &&
	    al_json_parse(&m, mb.ptr, mb.len, "m") == 0) {
		al_digest ld;
		const char *l = al_json_str(
		    json_array_get(json_object_get(m, "layers"), 1), "digest");

		if (l != NULL && al_digest_parse_str(&ld, l) == 0) {
			path = al_store_blob_path(s, &ld);
			CU_ASSERT_EQUAL(
			    al_test_sh("printf 'X' | dd of=%s bs=1 seek=100 "
			               "conv=notrunc 2>/dev/null",
			               path),
			    0);
			CU_ASSERT_EQUAL(
			    al_catalog_open_image(&c, NULL, s, &d, NULL),
			    AL_EVERIFY);
		} else {
			CU_FAIL("no layer digest");
		}
	} else {
		CU_FAIL("cannot read the manifest");
	}
	free(path);
	json_decref(m);
	al_buf_free(&mb);
	al_catalog_free(c);
	al_store_free(s);
}

/*
 * An independent reader: umoci unpacks the rebuilt image (tag
 * "filtered", in the layout of a store that was closed, so that
 * index.json is written); the rootfs holds configs/alpha and configs/beta only
 * (no gamma, no stale, no README.md, no .indexignore), no tmp/cache, and the
 * unpacked FBC parses to the filtered catalog (summary want).
 */
static void check_with_umoci(const char *layout, const char *want)
{
	char *bundle = al_sprintf("%s/umoci-bundle", al_test_tmpdir());
	char *list = al_sprintf("%s/umoci-list", al_test_tmpdir());
	al_buf b = AL_BUF_INIT(1 << 20);
	al_catalog *c = NULL;
	char *sum = NULL;
	const char *names[] = {"alpha", "beta"};
	size_t i;

	if (al_test_sh("command -v umoci >/dev/null") != 0) {
		al_test_skip("umoci missing (Debian package umoci): the "
		             "rebuilt image is not checked with it");
		goto out;
	}
	CU_ASSERT_EQUAL(
	    al_test_sh("umoci unpack --rootless --image %s:filtered "
	               "%s >/dev/null 2>&1",
	               layout, bundle),
	    0);
	CU_ASSERT_EQUAL(al_test_sh("cd %s/rootfs && find configs tmp etc bin "
	                           "2>/dev/null | sort > %s",
	                           bundle, list),
	                0);
	CU_ASSERT_EQUAL(al_fs_read_file(list, &b), 0);
	CU_ASSERT_STRING_EQUAL(al_buf_cstr(&b),
	                       "bin\nbin/opm\nconfigs\nconfigs/alpha\n"
	                       "configs/alpha/catalog.json\nconfigs/beta\n"
	                       "configs/beta/catalog.json\netc\netc/passwd\n"
	                       "tmp\n");
	CU_ASSERT_EQUAL(al_catalog_new(&c), 0);
	for (i = 0; c != NULL && i < 2; i++) {
		char *f = al_sprintf("%s/rootfs/configs/%s/catalog.json",
		                     bundle, names[i]);

		al_buf_reset(&b);
		CU_ASSERT_EQUAL(al_fs_read_file(f, &b), 0);
		CU_ASSERT_EQUAL(al_catalog_add_file(c, f, b.ptr, b.len), 0);
		free(f);
	}
	if (c != NULL && al_catalog_finish(c) == 0) {
		sum = al_catalog_summary(c);
		CU_ASSERT(sum != NULL && want != NULL &&
		          strcmp(sum, want) == 0);
	} else {
		CU_FAIL("the unpacked catalog does not parse");
	}
out:
	free(sum);
	al_catalog_free(c);
	al_buf_free(&b);
	free(bundle);
	free(list);
}

/* Render package name of c into a new string (NULL on failure). */
static char *render_named(const al_catalog *c, const char *name)
{
	al_buf b = AL_BUF_INIT(64 << 20);
	size_t i;

	for (i = 0; i < al_catalog_package_count(c); i++) {
		if (strcmp(al_catalog_package_name(c, i), name) == 0 &&
		    al_catalog_render_package(c, i, &b) == 0)
			return al_buf_detach(&b, NULL);
	}
	al_buf_free(&b);
	return NULL;
}

/*
 * A catalog image whose package big is one file of several MB, every
 * bundle carrying the real olm.bundle.object data of a Red Hat bundle
 * (mkcatalog.py --bundle-objects): read from the image, the file waits in
 * the scratch file and the bundles' object values are spilled there. It
 * must render, whole and filtered, exactly as the same file read from
 * memory, with the real data back in place; and the scratch file leaves
 * nothing in the store.
 */
static void test_catalog__spooled_catalog_renders_as_read(void)
{
	char *flags = al_sprintf(
	    "--bundles 40 --bundle-objects %s/tests/data/catalogs/"
	    "oc-mirror-olm-artifacts/configs/aws-load-balancer-operator/"
	    "catalog.json",
	    al_test_source_dir());
	char *dir = al_sprintf("%s/img-spool", al_test_tmpdir());
	char *file = al_sprintf("%s/big-catalog.json", al_test_tmpdir());
	al_catalog_package_filter pf = {.name = "big"};
	al_catalog_filter f = {.packages = &pf, .npackages = 1};
	al_catalog *c = NULL, *m = NULL, *fc = NULL, *fm = NULL;
	char *a = NULL, *b = NULL, *fa = NULL, *fb = NULL;
	al_buf raw = AL_BUF_INIT(64 << 20);
	al_store *s;
	al_digest d;

	s = make_layout("img-spool", "cat:1", flags, &d);
	if (s == NULL)
		goto out;
	/* the same file, straight from the layer, for the in-memory path */
	CU_ASSERT_EQUAL_FATAL(
	    al_test_sh(
	        "python3 -c 'import glob, sys, tarfile\n"
	        "for p in glob.glob(sys.argv[1] + \"/blobs/sha256/*\"):\n"
	        "    try:\n"
	        "        t = tarfile.open(p)\n"
	        "        m = t.getmember(\"configs/big/catalog.json\")\n"
	        "    except (tarfile.TarError, KeyError):\n"
	        "        continue\n"
	        "    open(sys.argv[2], \"wb\").write("
	        "t.extractfile(m).read())' %s %s",
	        dir, file),
	    0);
	CU_ASSERT_EQUAL_FATAL(al_fs_read_file(file, &raw), 0);
	CU_ASSERT(raw.len > 40 * 60000);
	CU_ASSERT_EQUAL_FATAL(al_catalog_open_image(&c, NULL, s, &d, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(al_catalog_new(&m), 0);
	CU_ASSERT_EQUAL(al_catalog_add_file(m, "big", raw.ptr, raw.len), 0);
	CU_ASSERT_EQUAL_FATAL(al_catalog_finish(m), 0);
	a = render_named(c, "big");
	b = render_named(m, "big");
	CU_ASSERT(a != NULL && b != NULL && strcmp(a, b) == 0);
	/* the real objects are there, the same for every bundle */
	if (a != NULL) {
		const char *p = a;
		size_t n = 0;

		while ((p = strstr(p, "\"type\": \"olm.bundle.object\"")) !=
		       NULL) {
			n++;
			p++;
		}
		CU_ASSERT(n >= 40 && n % 40 == 0);
		CU_ASSERT(strlen(a) > 40 * 60000);
	}
	/* filtered catalogs render the values of the catalog they came from */
	CU_ASSERT_EQUAL(al_catalog_filter_apply(&fc, c, &f), 0);
	CU_ASSERT_EQUAL(al_catalog_filter_apply(&fm, m, &f), 0);
	fa = fc != NULL ? render_named(fc, "big") : NULL;
	fb = fm != NULL ? render_named(fm, "big") : NULL;
	CU_ASSERT(fa != NULL && fb != NULL && strcmp(fa, fb) == 0);
	CU_ASSERT(fa != NULL && strstr(fa, "olm.bundle.object") != NULL);
	/* the source catalog may go first */
	al_catalog_free(c);
	c = NULL;
	free(fa);
	fa = fc != NULL ? render_named(fc, "big") : NULL;
	CU_ASSERT(fa != NULL && fb != NULL && strcmp(fa, fb) == 0);
	CU_ASSERT_EQUAL(
	    al_test_sh("test -z \"$(ls -A %s/blobs/.tmp 2>/dev/null)\"", dir),
	    0);
out:
	free(a);
	free(b);
	free(fa);
	free(fb);
	al_catalog_free(c);
	al_catalog_free(m);
	al_catalog_free(fc);
	al_catalog_free(fm);
	al_buf_free(&raw);
	al_store_free(s);
	free(flags);
	free(dir);
	free(file);
}

/* Filter alpha (heads) + dependency beta, rebuild, read the new image
 * back: same catalog; the config keeps the label, drops --cache-dir, has
 * one more diff ID and history entry; rebuilding twice gives the same
 * digest. */
static void test_catalog__rebuild_reads_back_filtered_catalog(void)
{
	al_catalog_package_filter pf = {.name = "alpha"};
	al_catalog_filter f = {.packages = &pf, .npackages = 1};
	al_digest d;
	al_store *s = make_layout("img4", "cat:1", "--docker", &d);
	al_catalog *c = NULL, *fc = NULL, *back = NULL;
	al_descriptor nd, nd2;
	al_buf b = AL_BUF_INIT(1 << 20);
	json_t *m = NULL, *cfg = NULL;
	char *s1 = NULL, *s2 = NULL, *layout = NULL;
	al_store_image img;

	memset(&nd, 0, sizeof(nd));
	memset(&nd2, 0, sizeof(nd2));
	memset(&img, 0, sizeof(img));
	if (s == NULL)
		return;
	if (al_catalog_open_image(&c, NULL, s, &d, NULL) != 0 ||
	    al_catalog_filter_apply(&fc, c, &f) != 0) {
		fprintf(stderr, "%s\n", al_error_message());
		CU_FAIL("open or filter");
		goto out;
	}
	if (al_catalog_rebuild(s, &d, NULL, fc, "cat:filtered", &nd) != 0) {
		fprintf(stderr, "rebuild: %s\n", al_error_message());
		CU_FAIL("rebuild");
		goto out;
	}
	CU_ASSERT_EQUAL(al_store_find(s, "cat:filtered", &img), 0);
	CU_ASSERT(al_digest_equal(&img.desc.digest, &nd.digest));
	CU_ASSERT_EQUAL(al_catalog_open_image(&back, NULL, s, &nd.digest, NULL),
	                0);
	s1 = al_catalog_summary(fc);
	s2 = back != NULL ? al_catalog_summary(back) : NULL;
	CU_ASSERT(s1 != NULL && s2 != NULL && strcmp(s1, s2) == 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(
	    s1 != NULL ? s1 : "",
	    "package beta default=stable\n"
	    "channel beta/stable head=beta.v1.1.0 entries=beta.v1.1.0\n"));
	CU_ASSERT_EQUAL(al_store_read_blob(s, &nd.digest, &b), 0);
	CU_ASSERT_EQUAL(al_json_parse(&m, b.ptr, b.len, "m"), 0);
	if (m != NULL) {
		json_t *layers = json_object_get(m, "layers");
		al_digest cd;

		CU_ASSERT_STRING_EQUAL(
		    al_json_str(m, "mediaType"),
		    "application/vnd.oci.image.manifest.v1+json");
		CU_ASSERT_EQUAL(json_array_size(layers), 4);
		CU_ASSERT_STRING_EQUAL(
		    al_json_str(json_array_get(layers, 0), "mediaType"),
		    "application/vnd.oci.image.layer.v1.tar+gzip");
		al_buf_reset(&b);
		if (al_digest_parse_str(
		        &cd, al_json_str(json_object_get(m, "config"),
		                         "digest")) == 0 &&
		    al_store_read_blob(s, &cd, &b) == 0 &&
		    al_json_parse(&cfg, b.ptr, b.len, "c") == 0) {
			json_t *cc = json_object_get(cfg, "config");
			char *cmd = json_dumps(json_object_get(cc, "Cmd"),
			                       JSON_COMPACT);

			CU_ASSERT_STRING_EQUAL(cmd, "[\"serve\",\"/configs\"]");
			free(cmd);
			CU_ASSERT_STRING_EQUAL(
			    al_json_str(json_object_get(cc, "Labels"),
			                AL_CATALOG_LABEL),
			    "/configs");
			CU_ASSERT_EQUAL(
			    json_array_size(json_object_get(
			        json_object_get(cfg, "rootfs"), "diff_ids")),
			    4);
			CU_ASSERT_EQUAL(
			    json_array_size(json_object_get(cfg, "history")),
			    4);
		} else {
			CU_FAIL("config");
		}
	}
	CU_ASSERT_EQUAL(al_catalog_rebuild(s, &d, NULL, fc, NULL, &nd2), 0);
	CU_ASSERT(al_digest_equal(&nd.digest, &nd2.digest));
	CU_ASSERT_EQUAL(al_store_tag(s, "filtered", &nd), 0);
	layout = al_strdup(al_store_path(s));
	al_store_free(s);
	s = NULL;
	check_with_umoci(layout, s1);
out:
	free(layout);
	free(s1);
	free(s2);
	json_decref(m);
	json_decref(cfg);
	al_buf_free(&b);
	al_store_image_clear(&img);
	al_descriptor_clear(&nd);
	al_descriptor_clear(&nd2);
	al_catalog_free(back);
	al_catalog_free(fc);
	al_catalog_free(c);
	al_store_free(s);
}

/* ---- real public catalogs (tests/data/catalogs, README names them) ---- */

static al_catalog *load_files(const char *const *rel, size_t n)
{
	al_catalog *c = NULL;
	al_buf b = AL_BUF_INIT(64 << 20);
	size_t i;
	int ok = al_catalog_new(&c) == 0;

	for (i = 0; ok && i < n; i++) {
		char *p = al_sprintf("%s/tests/data/catalogs/%s",
		                     al_test_source_dir(), rel[i]);

		al_buf_reset(&b);
		ok = p != NULL && al_fs_read_file(p, &b) == 0 &&
		     al_catalog_add_file(c, p, b.ptr, b.len) == 0;
		free(p);
	}
	ok = ok && al_catalog_finish(c) == 0;
	if (!ok) {
		fprintf(stderr, "load_files: %s\n", al_error_message());
		al_catalog_free(c);
		c = NULL;
	}
	CU_ASSERT(ok);
	al_buf_free(&b);
	return c;
}

static const char *const E2E[] = {"oc-mirror-e2e/configs/index.yaml"};

static void real_expect(const al_catalog_filter *f, const char *want)
{
	al_catalog *c = load_files(E2E, 1), *out = NULL;
	char *sum = NULL;

	if (c == NULL)
		return;
	CU_ASSERT_EQUAL(al_catalog_filter_apply(&out, c, f), 0);
	if (out != NULL)
		sum = al_catalog_summary(out);
	if (sum != NULL && strcmp(sum, want) != 0)
		fprintf(stderr, "got:\n%s\nwant:\n%s\n", sum, want);
	CU_ASSERT(sum != NULL && strcmp(sum, want) == 0);
	free(sum);
	al_catalog_free(out);
	al_catalog_free(c);
}

#define E2E_BAR                                                                \
	"package bar default=alpha\n"                                          \
	"channel bar/alpha head=bar.v0.1.0 entries=bar.v0.1.0\n"               \
	"bundles bar: bar.v0.1.0\n"

/*
 * oc-mirror's e2e catalog, foo with no range: channel beta's head is
 * foo.v0.3.1 (0.3.0 is skipped by it, 0.2.0 replaced by both). It needs
 * bar <0.2.0: only bar.v0.1.0 (0.2.0 is not < 0.2.0), which is not in
 * bar's default channel stable (that holds 1.0.0 only), so bar keeps
 * channel alpha with 0.1.0 (lowest chain entry covering it: 0.2.0 skips
 * it, 1.0.0's skipRange <1.0.0 holds it, counts 1 all the way up) and
 * alpha becomes bar's default channel. bar.v0.1.0 also provides the
 * required API test.bar/v1alpha1 Bar.
 */
static void test_catalog__real_e2e_heads_and_dependencies(void)
{
	al_catalog_package_filter pf = {.name = "foo"};
	al_catalog_filter f = {.packages = &pf, .npackages = 1};

	real_expect(&f, E2E_BAR "package foo default=beta\n"
	                        "channel foo/beta head=foo.v0.3.1 "
	                        "entries=foo.v0.3.1\n"
	                        "bundles foo: foo.v0.3.1\n");
}

/* foo beta >=0.2.0 <=0.3.0: wanted 0.2.0 and 0.3.0. The replaces chain is
 * 0.3.1 -> 0.2.0 -> 0.1.0; counts 0.1.0:0, 0.2.0:1, 0.3.1:2 (it skips
 * 0.3.0); head 0.3.1, tail 0.1.0 -> {0.3.1, 0.3.0, 0.2.0}. 0.2.0 needs
 * bar <0.2.0 (bar.v0.1.0), 0.3.0 bar <0.3.0 (then already satisfied). */
static void test_catalog__real_e2e_range(void)
{
	al_catalog_channel_filter cf = {"beta", "0.2.0", "0.3.0"};
	al_catalog_package_filter pf = {
	    .name = "foo", .channels = &cf, .nchannels = 1};
	al_catalog_filter f = {.packages = &pf, .npackages = 1};

	real_expect(&f,
	            E2E_BAR "package foo default=beta\n"
	                    "channel foo/beta head=foo.v0.3.1 "
	                    "entries=foo.v0.2.0,foo.v0.3.0,foo.v0.3.1\n"
	                    "bundles foo: foo.v0.2.0,foo.v0.3.0,foo.v0.3.1\n");
}

/* baz stable 1.0.1..1.1.0 (1.1.0 replaces 1.0.1, which skips 1.0.0) and
 * a pinned version: min == max 1.0.0 gives baz.v1.0.0 alone. */
static void test_catalog__real_e2e_skips_and_pin(void)
{
	al_catalog_channel_filter cf = {"stable", "1.0.1", NULL};
	al_catalog_package_filter pf = {
	    .name = "baz", .channels = &cf, .nchannels = 1};
	al_catalog_filter f = {.packages = &pf, .npackages = 1};

	real_expect(&f, "package baz default=stable\n"
	                "channel baz/stable head=baz.v1.1.0 "
	                "entries=baz.v1.0.1,baz.v1.1.0\n"
	                "bundles baz: baz.v1.0.1,baz.v1.1.0\n");
	cf.max_version = cf.min_version = "1.0.0";
	real_expect(&f, "package baz default=stable\n"
	                "channel baz/stable head=baz.v1.0.0 "
	                "entries=baz.v1.0.0\n"
	                "bundles baz: baz.v1.0.0\n");
}

/* Red Hat's aws-load-balancer-operator package as opm renders it: two
 * channels holding one bundle; images: the bundle and its 4 distinct
 * related images (the bundle image is among them). */
static void test_catalog__real_redhat_package(void)
{
	static const char *const files[] = {
	    "oc-mirror-olm-artifacts/configs/aws-load-balancer-operator/"
	    "catalog.json",
	    "oc-mirror-olm-artifacts/configs/node-observability-operator/"
	    "catalog.json"};
	al_catalog_package_filter pf = {.name = "aws-load-balancer-operator"};
	al_catalog_filter f = {.packages = &pf, .npackages = 1};
	al_catalog *c = load_files(files, 2), *out = NULL;
	char **imgs = NULL, *sum = NULL;
	size_t n = 0;

	if (c == NULL)
		return;
	CU_ASSERT_EQUAL(al_catalog_package_count(c), 2);
	CU_ASSERT_EQUAL(al_catalog_filter_apply(&out, c, &f), 0);
	if (out != NULL) {
		sum = al_catalog_summary(out);
		CU_ASSERT_STRING_EQUAL(
		    sum, "package aws-load-balancer-operator "
		         "default=stable-v0.1\n"
		         "channel aws-load-balancer-operator/alpha "
		         "head=aws-load-balancer-operator.v0.0.1 "
		         "entries=aws-load-balancer-operator.v0.0.1\n"
		         "channel aws-load-balancer-operator/stable-v0.1 "
		         "head=aws-load-balancer-operator.v0.0.1 "
		         "entries=aws-load-balancer-operator.v0.0.1\n"
		         "bundles aws-load-balancer-operator: "
		         "aws-load-balancer-operator.v0.0.1\n");
		CU_ASSERT_EQUAL(al_catalog_images(out, &imgs, &n), 0);
		CU_ASSERT_EQUAL(n, 4);
		if (n == 4)
			CU_ASSERT_STRING_EQUAL(
			    imgs[1], "registry.redhat.io/albo/"
			             "aws-load-balancer-operator-"
			             "bundle@sha256:"
			             "50b9402635dd4b312a86bed05dcdbda8c0012"
			             "0d3789ec2e9b527045100b3bdb4");
	}
	al_catalog_images_free(imgs, n);
	free(sum);
	al_catalog_free(out);
	al_catalog_free(c);
}

/* Required fields of the CRDs (operator-framework/api CatalogSource:
 * spec.sourceType; operator-controller ClusterCatalog v1: spec.source
 * with type Image and image.ref), parsed back from the YAML. */
static void test_catalog__cluster_resources(void)
{
	const char *img =
	    "mirror.example:5000/redhat/redhat-operator-index:v4.16";
	char *n1 = al_catalog_resource_name(
	    "cs", "docker://"
	          "registry.redhat.io/"
	          "redhat/redhat-operator-index:v4.16");
	char *n2 = al_catalog_resource_name("cc", "quay.io/a/Cat_X@sha256:00");
	al_buf b = AL_BUF_INIT(1 << 16);
	al_yaml_node **docs = NULL;
	size_t nd = 0;
	json_t *j = NULL;

	CU_ASSERT_STRING_EQUAL(n1, "cs-redhat-operator-index-v4-16");
	{
		/* oc-mirror's clusterresources_test.go: a catalog mirrored
		 * by digest, its destination tagged with the digest's hex,
		 * expectedCSName; a long tag keeps its first 12 characters,
		 * a name by digest only the digest's (generateCatalogSource) */
		char *n3 = al_catalog_resource_name(
		    "cs", "docker://myregistry/mynamespace/redhat/"
		          "redhat-operator-index:7c4ef7434c97c8aaf6cd310874790b"
		          "915b3c61fc902eea255f9177058ea9aff3");
		char *n4 = al_catalog_resource_name(
		    "cs",
		    "quay.io/oc-mirror/oc-mirror-dev:test-catalog-latest");
		char *n5 = al_catalog_resource_name(
		    "cs",
		    "quay.io/oc-mirror/idx@sha256:7c4ef7434c97c8aaf6cd31087"
		    "4790b915b3c61fc902eea255f9177058ea9aff3");
		CU_ASSERT_STRING_EQUAL(n3,
		                       "cs-redhat-operator-index-7c4ef7434c97");
		CU_ASSERT_STRING_EQUAL(n4, "cs-oc-mirror-dev-test-catalog");
		CU_ASSERT_STRING_EQUAL(n5, "cs-idx-7c4ef7434c97");
		free(n3);
		free(n4);
		free(n5);
	}
	CU_ASSERT_STRING_EQUAL(n2, "cc-cat-x-00");
	CU_ASSERT_EQUAL(al_catalog_source_yaml(&b, n1, img, "Red Hat"), 0);
	CU_ASSERT_EQUAL(al_yaml_load(&docs, &nd, b.ptr, b.len, "cs"), 0);
	CU_ASSERT_EQUAL(nd, 1);
	if (nd == 1 && al_yaml_to_json(&j, docs[0]) == 0) {
		char *t = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);

		CU_ASSERT_STRING_EQUAL(
		    t, "{\"apiVersion\":\"operators.coreos.com/v1alpha1\","
		       "\"kind\":\"CatalogSource\",\"metadata\":{\"name\":"
		       "\"cs-redhat-operator-index-v4-16\",\"namespace\":"
		       "\"openshift-marketplace\"},\"spec\":{\"sourceType\":"
		       "\"grpc\",\"image\":\"mirror.example:5000/redhat/"
		       "redhat-operator-index:v4.16\",\"displayName\":"
		       "\"Red Hat\"}}");
		free(t);
	}
	json_decref(j);
	j = NULL;
	al_yaml_docs_free(docs, nd);
	docs = NULL;
	al_buf_reset(&b);
	CU_ASSERT_EQUAL(al_cluster_catalog_yaml(&b, n2, img), 0);
	CU_ASSERT_EQUAL(al_yaml_load(&docs, &nd, b.ptr, b.len, "cc"), 0);
	if (nd == 1 && al_yaml_to_json(&j, docs[0]) == 0) {
		char *t = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);

		CU_ASSERT_STRING_EQUAL(
		    t,
		    "{\"apiVersion\":\"olm.operatorframework.io/v1\","
		    "\"kind\":\"ClusterCatalog\",\"metadata\":{\"name\":"
		    "\"cc-cat-x-00\"},\"spec\":{\"source\":{\"type\":\"Image\","
		    "\"image\":{\"ref\":\"mirror.example:5000/redhat/"
		    "redhat-operator-index:v4.16\"}}}}");
		free(t);
	}
	CU_ASSERT_EQUAL(al_cluster_catalog_yaml(&b, "", img), AL_EINVAL);
	json_decref(j);
	al_yaml_docs_free(docs, nd);
	al_buf_free(&b);
	free(n1);
	free(n2);
}

/* ---- mirror.operators[] in the ImageSetConfiguration ------------------ */

static char *write_isc(const char *name, const char *body)
{
	char *p = al_sprintf("%s/%s", al_test_tmpdir(), name);

	if (p != NULL && al_fs_write_atomic(p, body, strlen(body)) != 0) {
		free(p);
		return NULL;
	}
	return p;
}

#define ISC_HEAD                                                               \
	"kind: ImageSetConfiguration\n"                                        \
	"apiVersion: mirror.openshift.io/v2alpha1\n"                           \
	"mirror:\n"                                                            \
	"  operators:\n"

static void test_catalog__imageset_operators(void)
{
	char *p = write_isc("isc-ops.yaml", ISC_HEAD
	                    "    - catalog: registry.redhat.io/redhat/"
	                    "redhat-operator-index:v4.16\n"
	                    "      targetCatalog: olm/redhat-index\n"
	                    "      targetTag: v4.16-min\n"
	                    "      full: false\n"
	                    "      skipDependencies: true\n"
	                    "      packages:\n"
	                    "        - name: aws-load-balancer-operator\n"
	                    "          defaultChannel: stable-v1\n"
	                    "          channels:\n"
	                    "            - name: stable-v1\n"
	                    "              minVersion: v1.1.0\n"
	                    "              maxVersion: '1.2.0'\n"
	                    "        - name: odf\n"
	                    "          bundles:\n"
	                    "            - name: odf-operator.v4.16.1\n"
	                    "    - catalog: oci://layouts/cat\n");
	char *bad = write_isc("isc-bad.yaml",
	                      ISC_HEAD "    - catalog: quay.io/x/y:1\n"
	                               "      packages:\n"
	                               "        - name: a\n"
	                               "          channels:\n"
	                               "            - name: c\n"
	                               "              minBundle: a.v1\n");
	char *badv =
	    write_isc("isc-badv.yaml", ISC_HEAD "    - catalog: quay.io/x/y:1\n"
	                                        "      packages:\n"
	                                        "        - name: a\n"
	                                        "          minVersion: one\n");
	al_imageset *cfg = NULL;

	CU_ASSERT_EQUAL(al_imageset_load_ex(&cfg, p, AL_IMAGESET_OPERATORS), 0);
	if (cfg != NULL) {
		const al_imageset_operator *op = &cfg->operators[0];

		CU_ASSERT_EQUAL(cfg->noperators, 2);
		CU_ASSERT_STRING_EQUAL(op->catalog,
		                       "registry.redhat.io/redhat/"
		                       "redhat-operator-index:v4.16");
		CU_ASSERT_STRING_EQUAL(op->target_catalog, "olm/redhat-index");
		CU_ASSERT_STRING_EQUAL(op->target_tag, "v4.16-min");
		CU_ASSERT_EQUAL(op->skip_dependencies, 1);
		CU_ASSERT_EQUAL(op->npackages, 2);
		CU_ASSERT_STRING_EQUAL(op->packages[0].default_channel,
		                       "stable-v1");
		CU_ASSERT_STRING_EQUAL(op->packages[0].channels[0].min_version,
		                       "v1.1.0");
		CU_ASSERT_STRING_EQUAL(op->packages[0].channels[0].max_version,
		                       "1.2.0");
		CU_ASSERT_STRING_EQUAL(op->packages[1].bundles[0],
		                       "odf-operator.v4.16.1");
		CU_ASSERT(
		    al_str_startswith(cfg->operators[1].catalog, "oci:/"));
		CU_ASSERT(
		    al_str_endswith(cfg->operators[1].catalog, "/layouts/cat"));
	}
	al_imageset_free(cfg);
	cfg = NULL;
	/* without the flag: still refused, never ignored */
	CU_ASSERT_EQUAL(al_imageset_load(&cfg, p), AL_EUNSUPPORTED);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "isc-ops.yaml:4:3: "
	                                                  "'operators'"));
	CU_ASSERT_EQUAL(al_imageset_load_ex(&cfg, bad, AL_IMAGESET_OPERATORS),
	                AL_EUNSUPPORTED);
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(al_error_message(), "isc-bad.yaml:10:15: 'minBundle'"));
	CU_ASSERT_EQUAL(al_imageset_load_ex(&cfg, badv, AL_IMAGESET_OPERATORS),
	                AL_EPARSE);
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(al_error_message(), "isc-badv.yaml:8:23"));
	free(p);
	free(bad);
	free(badv);
}

/* A structural check against an openAPIV3Schema: types, required fields,
 * enums, string lengths, and no field the schema does not define (the API
 * server would prune it). CEL rules (x-kubernetes-validations) and
 * patterns are not evaluated. Returns 1 when v conforms. */
static int schema_ok(const json_t *schema, const json_t *v, const char *path)
{
	const char *type = al_json_str(schema, "type");
	json_t *en = json_object_get(schema, "enum"), *req, *props, *x;
	const char *k;
	size_t i;

	if (type != NULL &&
	    ((strcmp(type, "object") == 0 && !json_is_object(v)) ||
	     (strcmp(type, "string") == 0 && !json_is_string(v)) ||
	     (strcmp(type, "integer") == 0 && !json_is_integer(v)) ||
	     (strcmp(type, "boolean") == 0 && !json_is_boolean(v)) ||
	     (strcmp(type, "array") == 0 && !json_is_array(v)))) {
		fprintf(stderr, "%s: not of type %s\n", path, type);
		return 0;
	}
	if (json_is_array(en)) {
		int found = 0;

		json_array_foreach(en, i, x) found |= json_equal(x, v);
		if (!found) {
			fprintf(stderr, "%s: not in the enum\n", path);
			return 0;
		}
	}
	if (json_is_string(v)) {
		json_t *mx = json_object_get(schema, "maxLength");
		json_t *mn = json_object_get(schema, "minLength");
		size_t len = json_string_length(v);

		if ((mx != NULL && (json_int_t)len > json_integer_value(mx)) ||
		    (mn != NULL && (json_int_t)len < json_integer_value(mn))) {
			fprintf(stderr, "%s: length out of bounds\n", path);
			return 0;
		}
	}
	req = json_object_get(schema, "required");
	json_array_foreach(req, i, x)
	{
		if (json_object_get(v, json_string_value(x)) == NULL) {
			fprintf(stderr, "%s: missing required '%s'\n", path,
			        json_string_value(x));
			return 0;
		}
	}
	props = json_object_get(schema, "properties");
	if (json_is_object(v) && props != NULL) {
		json_object_foreach((json_t *)v, k, x)
		{
			json_t *sub = json_object_get(props, k);
			char p2[512];

			snprintf(p2, sizeof(p2), "%s.%s", path, k);
			if (sub == NULL) {
				fprintf(stderr, "%s: not in the schema\n", p2);
				return 0;
			}
			if (!schema_ok(sub, x, p2))
				return 0;
		}
	}
	return 1;
}

/* The openAPIV3Schema of version ver in a CRD file of tests/data/crds. */
static json_t *crd_schema(const char *file, const char *ver)
{
	char *p =
	    al_sprintf("%s/tests/data/crds/%s", al_test_source_dir(), file);
	al_buf b = AL_BUF_INIT(4 << 20);
	al_yaml_node **docs = NULL;
	size_t nd = 0, i, k;
	json_t *out = NULL;

	if (p != NULL && al_fs_read_file(p, &b) == 0 &&
	    al_yaml_load(&docs, &nd, b.ptr, b.len, p) == 0) {
		for (i = 0; i < nd && out == NULL; i++) {
			json_t *crd = NULL, *v;

			if (al_yaml_to_json(&crd, docs[i]) != 0)
				continue;
			json_array_foreach(
			    json_object_get(json_object_get(crd, "spec"),
			                    "versions"),
			    k, v)
			{
				const char *n = al_json_str(v, "name");

				if (out == NULL && n != NULL &&
				    strcmp(n, ver) == 0)
					out = json_incref(json_object_get(
					    json_object_get(v, "schema"),
					    "openAPIV3Schema"));
			}
			json_decref(crd);
		}
	} else {
		fprintf(stderr, "crd %s: %s\n", file, al_error_message());
	}
	al_yaml_docs_free(docs, nd);
	al_buf_free(&b);
	free(p);
	return out;
}

static json_t *yaml_doc(const al_buf *b)
{
	al_yaml_node **docs = NULL;
	size_t nd = 0;
	json_t *j = NULL;

	if (al_yaml_load(&docs, &nd, b->ptr, b->len, "out") == 0 && nd == 1)
		(void)al_yaml_to_json(&j, docs[0]);
	al_yaml_docs_free(docs, nd);
	return j;
}

static void test_catalog__cluster_resources_match_crds(void)
{
	const char *img = "mirror.example:5000/olm/redhat-operator-index:v4.16";
	json_t *cs_schema =
	    crd_schema("operators.coreos.com_catalogsources.yaml", "v1alpha1");
	json_t *cc_schema =
	    crd_schema("olm.operatorframework.io_clustercatalogs.yaml", "v1");
	al_buf b = AL_BUF_INIT(1 << 16);
	json_t *doc = NULL, *bad = NULL;

	CU_ASSERT_PTR_NOT_NULL(cs_schema);
	CU_ASSERT_PTR_NOT_NULL(cc_schema);
	if (cs_schema == NULL || cc_schema == NULL)
		goto out;
	CU_ASSERT_EQUAL(al_catalog_source_yaml(&b,
	                                       "cs-redhat-operator-index-"
	                                       "v4-16",
	                                       img, "Red Hat Operators"),
	                0);
	doc = yaml_doc(&b);
	CU_ASSERT(doc != NULL && schema_ok(cs_schema, doc, "CatalogSource"));
	/* the check can fail: without the required sourceType, or with a
	 * field the schema does not have */
	bad = json_deep_copy(doc);
	json_object_del(json_object_get(bad, "spec"), "sourceType");
	CU_ASSERT(!schema_ok(cs_schema, bad, "CatalogSource(bad)"));
	json_decref(bad);
	bad = json_deep_copy(doc);
	json_object_set_new(json_object_get(bad, "spec"), "imagee",
	                    json_string(img));
	CU_ASSERT(!schema_ok(cs_schema, bad, "CatalogSource(bad)"));
	json_decref(doc);
	json_decref(bad);
	al_buf_reset(&b);
	CU_ASSERT_EQUAL(al_cluster_catalog_yaml(&b,
	                                        "cc-redhat-operator-index-"
	                                        "v4-16",
	                                        img),
	                0);
	doc = yaml_doc(&b);
	CU_ASSERT(doc != NULL && schema_ok(cc_schema, doc, "ClusterCatalog"));
	bad = json_deep_copy(doc);
	json_object_del(json_object_get(json_object_get(bad, "spec"), "source"),
	                "type");
	CU_ASSERT(!schema_ok(cc_schema, bad, "ClusterCatalog(bad)"));
	json_decref(doc);
	json_decref(bad);
out:
	json_decref(cs_schema);
	json_decref(cc_schema);
	al_buf_free(&b);
}

/* al_catalog_names and al_catalog_select: one entry end to end. */
static void test_catalog__select_entry(void)
{
	al_imageset_op_package pkg = {.name = (char *)"alpha"};
	al_imageset_operator op = {.catalog = (char *)"docker://cat:1",
	                           .packages = &pkg,
	                           .npackages = 1};
	al_imageset_operator byd = {
	    .catalog = (char *)"quay.io/a/b@sha256:"
	                       "0000000000000000000000000000000000000000000000"
	                       "000000000000000000"};
	al_catalog_selection *sel = NULL;
	char *a = NULL, *b = NULL, *c = NULL;
	al_digest d;
	al_store *s;

	/* pinned by digest without targetTag: tagged with the digest's hex,
	 * the CatalogSource named from its first 12 characters */
	CU_ASSERT_EQUAL(al_catalog_names(&byd, &a, &b, &c), 0);
	if (b != NULL) {
		char *cs = al_catalog_resource_name("cs", b);
		CU_ASSERT_STRING_EQUAL(
		    b, "quay.io/a/b:00000000000000000000000000"
		       "00000000000000000000000000000000000000");
		CU_ASSERT_STRING_EQUAL(cs, "cs-b-000000000000");
		free(cs);
	}
	free(a);
	free(b);
	free(c);
	a = b = c = NULL;
	byd.target_catalog = (char *)"olm/idx";
	byd.target_tag = (char *)"v1";
	CU_ASSERT_EQUAL(al_catalog_names(&byd, &a, &b, &c), 0);
	if (b != NULL)
		CU_ASSERT_STRING_EQUAL(b, "quay.io/olm/idx:v1");
	free(a);
	free(b);
	free(c);
	a = b = c = NULL;
	op.catalog = (char *)"oci:/x/My_Catalog:v2";
	CU_ASSERT_EQUAL(al_catalog_names(&op, &a, &b, &c), 0);
	if (a != NULL && b != NULL) {
		CU_ASSERT_STRING_EQUAL(a, "localhost/my-catalog:v2");
		CU_ASSERT_STRING_EQUAL(b, "localhost/my-catalog:v2");
	}
	free(a);
	free(b);
	free(c);
	a = b = c = NULL;
	op.catalog = (char *)"docker://quay.io/example/catalog:v1";
	s = make_layout("img7", "quay.io/example/catalog:v1", "", &d);
	if (s == NULL)
		return;
	CU_ASSERT_EQUAL(al_catalog_select(&sel, s, &op, NULL, 1), 0);
	if (sel != NULL) {
		CU_ASSERT_STRING_EQUAL(sel->source_name,
		                       "quay.io/example/catalog:v1");
		CU_ASSERT_STRING_EQUAL(sel->target_name,
		                       "quay.io/example/catalog:v1");
		CU_ASSERT_EQUAL(sel->nimages, 7);
		CU_ASSERT_PTR_NOT_NULL(sel->rebuilt.media_type);
		CU_ASSERT_EQUAL(al_catalog_package_count(sel->filtered), 2);
	}
	al_catalog_selection_free(sel);
	sel = NULL;
	pkg.name = (char *)"nosuch";
	CU_ASSERT_EQUAL(al_catalog_select(&sel, s, &op, NULL, 0), AL_ENOTFOUND);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(),
	                              "catalog 'quay.io/example/catalog:v1': "
	                              "package 'nosuch' not found"));
	al_store_free(s);
}

/* The skipRange work bound: 10,001 entries, each with a skipRange, ask
 * for more than 10^8 checks: AL_ELIMIT naming the channel. */
static void test_catalog__skiprange_work_is_bounded(void)
{
	al_buf b = AL_BUF_INIT(64 << 20);
	al_catalog *c = NULL, *out = NULL;
	al_catalog_channel_filter cf = {"c", "1.0.0", "1.5.0"};
	al_catalog_package_filter pf = {
	    .name = "p", .channels = &cf, .nchannels = 1};
	al_catalog_filter f = {.packages = &pf, .npackages = 1};
	size_t i, n = 10001;
	int ok;

	ok = al_buf_puts(&b, PKG "{\"schema\":\"olm.channel\",\"package\":"
	                         "\"p\",\"name\":\"c\",\"entries\":[") == 0;
	for (i = 0; ok && i < n; i++) {
		ok = al_buf_printf(&b, "%s{\"name\":\"p.v1.%zu.0\"",
		                   i ? "," : "", i) == 0;
		if (ok && i > 0)
			ok = al_buf_printf(&b, ",\"replaces\":\"p.v1.%zu.0\"",
			                   i - 1) == 0;
		ok = ok &&
		     al_buf_printf(&b, ",\"skipRange\":\"<1.%zu.0\"}", i) == 0;
	}
	ok = ok && al_buf_puts(&b, "]}\n") == 0;
	for (i = 0; ok && i < n; i++)
		ok = al_buf_printf(
		         &b,
		         "{\"schema\":\"olm.bundle\",\"package\":\"p\","
		         "\"name\":\"p.v1.%zu.0\",\"properties\":[{"
		         "\"type\":\"olm.package\",\"value\":{"
		         "\"packageName\":\"p\",\"version\":"
		         "\"1.%zu.0\"}}]}\n",
		         i, i) == 0;
	CU_ASSERT(ok);
	CU_ASSERT_EQUAL(al_catalog_new(&c), 0);
	if (al_catalog_add_file(c, "big.json", b.ptr, b.len) != 0)
		fprintf(stderr, "%s\n", al_error_message());
	CU_ASSERT_EQUAL(al_catalog_finish(c), 0);
	CU_ASSERT_EQUAL(al_catalog_filter_apply(&out, c, &f), AL_ELIMIT);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(),
	                              "package 'p' channel 'c': 10001 "
	                              "skipRanges over 10001 entries"));
	al_catalog_free(out);
	al_catalog_free(c);
	al_buf_free(&b);
}

/* Paths over 100 bytes go through a pax "path" record in the rebuilt
 * layer: a 150-byte package name reads back (libarchive) intact. */
static void test_catalog__rebuild_long_names(void)
{
	char name[151], *text = NULL, *sum = NULL;
	al_catalog *c = NULL, *back = NULL;
	al_descriptor nd;
	al_digest d;
	al_store *s = make_layout("img9", "cat:1", "", &d);

	memset(&nd, 0, sizeof(nd));
	if (s == NULL)
		return;
	memset(name, 'n', 150);
	name[150] = '\0';
	text = al_sprintf(
	    "{\"schema\":\"olm.package\",\"name\":\"%s\",\"defaultChannel\":"
	    "\"c\"}{\"schema\":\"olm.channel\",\"package\":\"%s\",\"name\":"
	    "\"c\",\"entries\":[{\"name\":\"b\"}]}{\"schema\":\"olm.bundle\","
	    "\"package\":\"%s\",\"name\":\"b\",\"image\":\"q.io/b@sha256:00\","
	    "\"properties\":[{\"type\":\"olm.package\",\"value\":{"
	    "\"packageName\":\"%s\",\"version\":\"1.0.0\"}}]}",
	    name, name, name, name);
	CU_ASSERT_EQUAL(al_catalog_new(&c), 0);
	CU_ASSERT_EQUAL(al_catalog_add_file(c, "long.json",
	                                    (const uint8_t *)text,
	                                    strlen(text)),
	                0);
	CU_ASSERT_EQUAL(al_catalog_finish(c), 0);
	CU_ASSERT_EQUAL(al_catalog_rebuild(s, &d, NULL, c, NULL, &nd), 0);
	CU_ASSERT_EQUAL(al_catalog_open_image(&back, NULL, s, &nd.digest, NULL),
	                0);
	if (back != NULL) {
		CU_ASSERT_EQUAL(al_catalog_package_count(back), 1);
		CU_ASSERT_STRING_EQUAL(al_catalog_package_name(back, 0), name);
	}
	free(sum);
	free(text);
	al_descriptor_clear(&nd);
	al_catalog_free(back);
	al_catalog_free(c);
	al_store_free(s);
}

/* A package and global objects of about 1 MiB text (the layer streams
 * through 64 KiB chunks): the layer blob has the size its descriptor
 * says, gunzips to whole 512-byte blocks whose SHA-256 is the config's
 * last diff ID, is the one-shot gzip (al_layer_gzip) of that tar byte for
 * byte, and reads back as the same catalog; nothing stays in blobs/.tmp. */
static void test_catalog__rebuild_streams_layer_as_one_gzip(void)
{
	enum { NB = 300 };
	al_buf text = AL_BUF_INIT(16 << 20), gz = AL_BUF_INIT(16 << 20);
	al_buf tar = AL_BUF_INIT(64 << 20), again = AL_BUF_INIT(16 << 20);
	al_buf mb = AL_BUF_INIT(1 << 20), g1 = AL_BUF_INIT(1 << 20);
	al_buf g2 = AL_BUF_INIT(1 << 20);
	al_catalog *c = NULL, *back = NULL;
	json_t *m = NULL, *cfg = NULL;
	char *s1 = NULL, *s2 = NULL, *tmp = NULL, ds[AL_DIGEST_STRMAX];
	const json_t *ld, *diffs;
	const char *last;
	al_descriptor nd;
	al_digest d, layer, cd, tard;
	unsigned x = 12345;
	z_stream zs;
	uint8_t chunk[65536];
	size_t i, k;
	int zr, rc = 0;
	al_store *s = make_layout("img10", "cat:1", "", &d);

	memset(&nd, 0, sizeof(nd));
	memset(&zs, 0, sizeof(zs));
	if (s == NULL)
		return;
	rc |= al_buf_puts(&text, "{\"schema\":\"olm.package\",\"name\":\"big\","
	                         "\"defaultChannel\":\"c\"}"
	                         "{\"schema\":\"olm.channel\",\"package\":"
	                         "\"big\",\"name\":\"c\",\"entries\":[");
	for (i = 0; i < NB; i++) {
		if (i == 0)
			rc |= al_buf_puts(&text, "{\"name\":\"big.v1.0.0\"}");
		else
			rc |= al_buf_printf(&text,
			                    ",{\"name\":\"big.v1.0.%zu\","
			                    "\"replaces\":\"big.v1.0.%zu\"}",
			                    i, i - 1);
	}
	rc |= al_buf_puts(&text, "]}");
	for (i = 0; i < NB; i++) {
		rc |= al_buf_printf(
		    &text,
		    "{\"schema\":\"olm.bundle\",\"package\":\"big\",\"name\":"
		    "\"big.v1.0.%zu\",\"image\":\"q.io/b:%zu\",\"properties\":"
		    "[{\"type\":\"olm.package\",\"value\":{\"packageName\":"
		    "\"big\",\"version\":\"1.0.%zu\"}},{\"type\":\"note\","
		    "\"value\":\"",
		    i, i, i);
		/* words from a small LCG: compressible, not trivially */
		for (k = 0; k < 3000; k++) {
			x = x * 1103515245u + 12345u;
			rc |= al_buf_append(&text,
			                    &"abcdefgh ij"[(x >> 16) % 11], 1);
		}
		rc |= al_buf_puts(&text, "\"}]}");
	}
	rc |= al_buf_puts(&text, "{\"schema\":\"example.global\",\"name\":"
	                         "\"g\",\"value\":[1,2,3]}");
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(al_catalog_new(&c), 0);
	CU_ASSERT_EQUAL(al_catalog_add_file(c, "big.json", text.ptr, text.len),
	                0);
	if (al_catalog_finish(c) != 0) {
		fprintf(stderr, "%s\n", al_error_message());
		CU_FAIL("catalog");
		goto out;
	}
	if (al_catalog_rebuild(s, &d, NULL, c, NULL, &nd) != 0) {
		fprintf(stderr, "rebuild: %s\n", al_error_message());
		CU_FAIL("rebuild");
		goto out;
	}
	CU_ASSERT_EQUAL(al_store_read_blob(s, &nd.digest, &mb), 0);
	CU_ASSERT_EQUAL(al_json_parse(&m, mb.ptr, mb.len, "m"), 0);
	ld = json_array_get(json_object_get(m, "layers"), 3);
	al_buf_reset(&mb);
	if (ld == NULL ||
	    al_digest_parse_str(&layer, al_json_str(ld, "digest")) != 0 ||
	    al_digest_parse_str(&cd, al_json_str(json_object_get(m, "config"),
	                                         "digest")) != 0 ||
	    al_store_read_blob(s, &layer, &gz) != 0 ||
	    al_store_read_blob(s, &cd, &mb) != 0 ||
	    al_json_parse(&cfg, mb.ptr, mb.len, "c") != 0) {
		CU_FAIL("manifest, layer or config");
		goto out;
	}
	CU_ASSERT_EQUAL((json_int_t)gz.len,
	                json_integer_value(json_object_get(ld, "size")));
	/* gunzip */
	CU_ASSERT_EQUAL(inflateInit2(&zs, 15 + 16), Z_OK);
	zs.next_in = gz.ptr;
	zs.avail_in = (uInt)gz.len;
	do {
		zs.next_out = chunk;
		zs.avail_out = sizeof(chunk);
		zr = inflate(&zs, Z_NO_FLUSH);
		if (zr != Z_OK && zr != Z_STREAM_END)
			break;
		if (al_buf_append(&tar, chunk, sizeof(chunk) - zs.avail_out) !=
		    0)
			break;
	} while (zr != Z_STREAM_END);
	inflateEnd(&zs);
	CU_ASSERT_EQUAL(zr, Z_STREAM_END);
	CU_ASSERT_EQUAL(zs.avail_in, 0);
	CU_ASSERT(tar.len > 4 * sizeof(chunk));
	CU_ASSERT_EQUAL(tar.len % 512, 0);
	CU_ASSERT_EQUAL(
	    al_digest_bytes(&tard, AL_DIGEST_SHA256, tar.ptr, tar.len), 0);
	diffs = json_object_get(json_object_get(cfg, "rootfs"), "diff_ids");
	last = json_string_value(
	    json_array_get(diffs, json_array_size(diffs) - 1));
	CU_ASSERT_STRING_EQUAL(last != NULL ? last : "",
	                       al_digest_str(&tard, ds));
	/* the streamed deflate is the one-shot deflate of the same tar */
	CU_ASSERT_EQUAL(al_layer_gzip(&tar, &again), 0);
	CU_ASSERT(again.len == gz.len &&
	          memcmp(again.ptr, gz.ptr, gz.len) == 0);
	/* and the layer is the catalog */
	CU_ASSERT_EQUAL(al_catalog_open_image(&back, NULL, s, &nd.digest, NULL),
	                0);
	s1 = al_catalog_summary(c);
	s2 = back != NULL ? al_catalog_summary(back) : NULL;
	CU_ASSERT(s1 != NULL && s2 != NULL && strcmp(s1, s2) == 0);
	CU_ASSERT_EQUAL(al_catalog_render_global(c, &g1), 1);
	if (back != NULL)
		CU_ASSERT_EQUAL(al_catalog_render_global(back, &g2), 1);
	CU_ASSERT_STRING_EQUAL(al_buf_cstr(&g1), al_buf_cstr(&g2));
	tmp = al_sprintf("%s/blobs/.tmp", al_store_path(s));
	CU_ASSERT_EQUAL(al_test_sh("test -z \"$(ls -A %s)\"", tmp), 0);
out:
	free(tmp);
	free(s1);
	free(s2);
	json_decref(m);
	json_decref(cfg);
	al_descriptor_clear(&nd);
	al_catalog_free(back);
	al_catalog_free(c);
	al_store_free(s);
	al_buf_free(&text);
	al_buf_free(&gz);
	al_buf_free(&tar);
	al_buf_free(&again);
	al_buf_free(&mb);
	al_buf_free(&g1);
	al_buf_free(&g2);
}

int main(void)
{
	CU_TestInfo tests[] = {
	    {"parses_json_streams_and_yaml_documents",
	     test_catalog__parses_json_streams_and_yaml_documents},
	    {"no_range_keeps_channel_heads",
	     test_catalog__no_range_keeps_channel_heads},
	    {"channel_range_follows_replaces_and_skips",
	     test_catalog__channel_range_follows_replaces_and_skips},
	    {"range_keeps_linking_bundle",
	     test_catalog__range_keeps_linking_bundle},
	    {"skiprange_is_an_upgrade_edge",
	     test_catalog__skiprange_is_an_upgrade_edge},
	    {"equal_min_max_selects_one_version",
	     test_catalog__equal_min_max_selects_one_version},
	    {"package_range_applies_to_all_channels",
	     test_catalog__package_range_applies_to_all_channels},
	    {"default_channel_must_stay_valid",
	     test_catalog__default_channel_must_stay_valid},
	    {"empty_default_channel_is_refused",
	     test_catalog__empty_default_channel_is_refused},
	    {"full_keeps_everything", test_catalog__full_keeps_everything},
	    {"selected_bundles", test_catalog__selected_bundles},
	    {"no_match_names_what_exists",
	     test_catalog__no_match_names_what_exists},
	    {"gvk_dependency_and_unresolved",
	     test_catalog__gvk_dependency_and_unresolved},
	    {"dependencies_merge_and_skip",
	     test_catalog__dependencies_merge_and_skip},
	    {"no_packages_keeps_every_head",
	     test_catalog__no_packages_keeps_every_head},
	    {"render_roundtrip_and_images",
	     test_catalog__render_roundtrip_and_images},
	    {"untagged_related_image_refused",
	     test_catalog__untagged_related_image_refused},
	    {"validation_like_declcfg", test_catalog__validation_like_declcfg},
	    {"semver_ranges_like_blang",
	     test_catalog__semver_ranges_like_blang},
	    {"cluster_resources", test_catalog__cluster_resources},
	    {"select_entry", test_catalog__select_entry},
	    {"rebuild_long_names", test_catalog__rebuild_long_names},
	    {"rebuild_streams_layer_as_one_gzip",
	     test_catalog__rebuild_streams_layer_as_one_gzip},
	    {"skiprange_work_is_bounded",
	     test_catalog__skiprange_work_is_bounded},
	    {"cluster_resources_match_crds",
	     test_catalog__cluster_resources_match_crds},
	    {"imageset_operators", test_catalog__imageset_operators},
	    {"real_e2e_heads_and_dependencies",
	     test_catalog__real_e2e_heads_and_dependencies},
	    {"real_e2e_range", test_catalog__real_e2e_range},
	    {"real_e2e_skips_and_pin", test_catalog__real_e2e_skips_and_pin},
	    {"real_redhat_package", test_catalog__real_redhat_package},
	    {"reads_image_layers_with_whiteouts",
	     test_catalog__reads_image_layers_with_whiteouts},
	    {"sqlite_catalog_is_refused",
	     test_catalog__sqlite_catalog_is_refused},
	    {"rebuild_index_keeps_platforms",
	     test_catalog__rebuild_index_keeps_platforms},
	    {"opaque_whiteout_and_symlink",
	     test_catalog__opaque_whiteout_and_symlink},
	    {"corrupt_layer_is_everify",
	     test_catalog__corrupt_layer_is_everify},
	    {"rebuild_reads_back_filtered_catalog",
	     test_catalog__rebuild_reads_back_filtered_catalog},
	    {"spooled_catalog_renders_as_read",
	     test_catalog__spooled_catalog_renders_as_read},
	    CU_TEST_INFO_NULL,
	};

	return al_test_run("catalog", tests);
}
