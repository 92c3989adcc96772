/* fuzz_ref.c: fuzz target for image references: al_ref_parse and al_imgref_parse, and the string -> parse round trips their headers promise. */
#include <stdlib.h>
#include <string.h>

#include "airlock/error.h"
#include "airlock/ref.h"
#include "harness.h"

/* References are at most 1024 bytes; a little more exercises the bound. */
#define FUZZ_REF_MAX 2048

static int streq(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

static int ref_equal(const al_ref *a, const al_ref *b)
{
	return streq(a->registry, b->registry) && streq(a->repository, b->repository) && streq(a->tag, b->tag) &&
	       streq(a->digest, b->digest);
}

static void check_ref(const char *s)
{
	al_ref r, again, copy;
	char *str, *name;

	int rc = al_ref_parse(&r, s);

	al_fuzz_note("ref", "al_ref_parse", rc);
	if (rc < 0) {
		al_error_clear();
		return;
	}
	if (r.registry == NULL || r.repository == NULL)
		al_fuzz_fail("ref", "parsed reference without registry or repository");
	str = al_ref_string(&r);
	name = al_ref_name(&r);
	if (str == NULL || name == NULL)
		al_fuzz_fail("ref", "al_ref_string/al_ref_name failed");
	if (strlen(name) > 255)
		al_fuzz_fail("ref", "normalised name over 255 characters");
	if (al_ref_parse(&again, str) < 0)
		al_fuzz_fail("ref", "al_ref_string of a parsed reference does not parse");
	if (!ref_equal(&r, &again))
		al_fuzz_fail("ref", "al_ref_string -> al_ref_parse changed the reference");
	if (al_ref_copy(&copy, &r) < 0 || !ref_equal(&r, &copy))
		al_fuzz_fail("ref", "al_ref_copy differs");
	al_ref_clear(&copy);
	al_ref_clear(&again);
	al_ref_clear(&r);
	free(str);
	free(name);
}

static void check_imgref(const char *s)
{
	al_imgref r, again;
	char *str, *str2;

	int rc = al_imgref_parse(&r, s);

	al_fuzz_note("ref", "al_imgref_parse", rc);
	if (rc < 0) {
		al_error_clear();
		return;
	}
	str = al_imgref_string(&r);
	if (str == NULL)
		al_fuzz_fail("ref", "al_imgref_string failed");
	if (al_imgref_parse(&again, str) < 0)
		al_fuzz_fail("ref", "al_imgref_string of a parsed image reference does not parse");
	if (again.transport != r.transport)
		al_fuzz_fail("ref", "image reference round trip changed the transport");
	if (r.transport == AL_TRANSPORT_DOCKER && !ref_equal(&r.ref, &again.ref))
		al_fuzz_fail("ref", "docker:// round trip changed the reference");
	if (r.transport == AL_TRANSPORT_OCI && (!streq(r.path, again.path) || !streq(r.name, again.name)))
		al_fuzz_fail("ref", "oci: round trip changed path or name");
	str2 = al_imgref_string(&again);
	if (str2 == NULL || strcmp(str, str2) != 0)
		al_fuzz_fail("ref", "al_imgref_string is not stable over a round trip");
	free(str);
	free(str2);
	al_imgref_clear(&again);
	al_imgref_clear(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	if (size > FUZZ_REF_MAX)
		return 0;
	al_fuzz_quiet();
	/* the APIs take C strings: an embedded NUL ends the input there */
	s = malloc(size + 1);
	if (s == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	check_ref(s);
	check_imgref(s);
	free(s);
	return 0;
}
