/* fuzz_name.c: fuzz target for the name validators of src/registry/name.c (al_name_ok, al_name_check) and the file-based catalog names that go through them: what a kind accepts holds no byte that kind excludes, the kinds nest, a refusal's message is escaped, and a catalog that parses names only valid packages, channels and bundles. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "airlock/buf.h"
#include "airlock/catalog.h"
#include "airlock/error.h"
#include "harness.h"
#include "name_int.h"

#define FUZZ_NAME_MAX 4096

/* The kind's grammar, written again from docs/security.md. */
static int want_ok(const uint8_t *s, size_t n, int kind, size_t max)
{
	size_t i;

	if (max == 0)
		max = AL_NAME_MAX;
	if (n == 0 || n > max)
		return 0;
	if (kind == AL_NAME_TAG) {
		if (n > 128)
			return 0;
		for (i = 0; i < n; i++) {
			uint8_t c = s[i];
			int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
			if (!alnum && (i == 0 || (c != '.' && c != '-')))
				return 0;
		}
		return 1;
	}
	for (i = 0; i < n; i++) {
		if (s[i] < 0x20 || s[i] == 0x7f)
			return 0;
		if (kind == AL_NAME_COMPONENT && (s[i] == '/' || s[i] == '\\'))
			return 0;
		if (kind == AL_NAME_FIELD && (s[i] == ' ' || s[i] == '='))
			return 0;
	}
	if (kind == AL_NAME_COMPONENT && ((n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.')))
		return 0;
	return 1;
}

static void check_kinds(const uint8_t *data, size_t size, size_t max)
{
	int ok[4], k;

	for (k = AL_NAME_TEXT; k <= AL_NAME_TAG; k++) {
		ok[k] = al_name_ok((const char *)data, size, k, max);
		if (ok[k] != want_ok(data, size, k, max))
			al_fuzz_fail("name", "al_name_ok disagrees with the kind's grammar");
	}
	if ((ok[AL_NAME_COMPONENT] || ok[AL_NAME_FIELD]) && !ok[AL_NAME_TEXT])
		al_fuzz_fail("name", "a component or field that is not text");
	if (ok[AL_NAME_TAG] && (!ok[AL_NAME_COMPONENT] || !ok[AL_NAME_FIELD]))
		al_fuzz_fail("name", "a tag that is not a component and a field");
}

/* al_name_check on the C string: refuses exactly what al_name_ok does,
 * with a message that holds no control byte. */
static void check_message(const char *s)
{
	const char *m;
	int k, rc;

	for (k = AL_NAME_TEXT; k <= AL_NAME_TAG; k++) {
		rc = al_name_check("fuzzed name", s, k, 0);
		if ((rc == 0) != al_name_ok(s, strlen(s), k, 0))
			al_fuzz_fail("name", "al_name_check and al_name_ok disagree");
		if (rc == 0)
			continue;
		if (rc != AL_EPARSE)
			al_fuzz_fail("name", "a refusal that is not AL_EPARSE");
		for (m = al_error_message(); *m != '\0'; m++)
			if ((unsigned char)*m < 0x20 || *m == 0x7f)
				al_fuzz_fail("name", "a refusal's message carries a control byte");
		al_error_clear();
	}
}

static int plain(const char *s)
{
	size_t i, n = strlen(s);

	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9')))
			return 0;
	return n > 0 && n <= 63;
}

/* s as the package, channel and bundle name of a one-package catalog. */
static void check_catalog(const char *s)
{
	al_catalog *c = NULL;
	json_t *p, *ch, *b;
	char *pj = NULL, *cj = NULL, *bj = NULL, *doc = NULL;
	size_t n;

	p = json_pack("{s:s, s:s, s:s}", "schema", "olm.package", "name", s, "defaultChannel", s);
	ch = json_pack("{s:s, s:s, s:s, s:[{s:s}]}", "schema", "olm.channel", "package", s, "name", s, "entries",
	               "name", s);
	b = json_pack("{s:s, s:s, s:s, s:s, s:[{s:s, s:{s:s, s:s}}]}", "schema", "olm.bundle", "package", s, "name",
	              s, "image",
	              "quay.io/fuzz/bundle@sha256:"
	              "0000000000000000000000000000000000000000000000000000000000000000",
	              "properties", "type", "olm.package", "value", "packageName", s, "version", "1.0.0");
	if (p == NULL || ch == NULL || b == NULL)
		goto out; /* not UTF-8: jansson refuses it, so would the parser */
	pj = json_dumps(p, JSON_COMPACT);
	cj = json_dumps(ch, JSON_COMPACT);
	bj = json_dumps(b, JSON_COMPACT);
	if (pj == NULL || cj == NULL || bj == NULL)
		goto out;
	if ((doc = al_sprintf("%s\n%s\n%s\n", pj, cj, bj)) == NULL || al_catalog_new(&c) < 0)
		goto out;
	if (al_catalog_add_file(c, "fuzz", (const uint8_t *)doc, strlen(doc)) < 0 || al_catalog_finish(c) < 0) {
		/* a plain name ([a-z0-9]+) is one a catalog must take: the
		 * catalog built here is otherwise valid */
		if (plain(s) && getenv("AL_FUZZ_DEBUG") != NULL)
			fprintf(stderr, "%s\n", al_error_message());
		if (plain(s))
			al_fuzz_fail("name", "a catalog refused a plain package name");
		goto out;
	}
	n = strlen(s);
	if (!al_name_ok(s, n, AL_NAME_COMPONENT, AL_CATALOG_NAME_MAX))
		al_fuzz_fail("name", "a catalog took a package name that is not one path component");
	if (!al_name_ok(s, n, AL_NAME_FIELD, AL_CATALOG_NAME_MAX))
		al_fuzz_fail("name", "a catalog took a channel or bundle name that is not one field");
	if (al_catalog_package_count(c) != 1 || strcmp(al_catalog_package_name(c, 0), s) != 0)
		al_fuzz_fail("name", "the catalog names another package");
out:
	al_error_clear();
	al_catalog_free(c);
	json_decref(p);
	json_decref(ch);
	json_decref(b);
	free(pj);
	free(cj);
	free(bj);
	free(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	if (size > FUZZ_NAME_MAX)
		return 0;
	al_fuzz_quiet();
	check_kinds(data, size, 0);
	check_kinds(data, size, 16);
	/* the C-string APIs: an embedded NUL ends the input there */
	if ((s = malloc(size + 1)) == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	check_message(s);
	check_catalog(s);
	free(s);
	return 0;
}
