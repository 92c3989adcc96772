/* test_yaml.c: unit tests for the YAML loader (positions, limits, refusals), core-schema JSON and the emitter. */
#include <stdlib.h>
#include <dirent.h>
#include <string.h>

#include "al_test.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "json_int.h"
#include "yaml_int.h"

/* Load text expecting failure rc with needle in the message. */
static void check_bad(const char *text, int want, const char *needle)
{
	al_yaml_node **docs = NULL;
	size_t n = 0;
	int rc = al_yaml_load(&docs, &n, (const uint8_t *)text, strlen(text),
	                      "t.yaml");

	CU_ASSERT_EQUAL(rc, want);
	if (rc == 0) {
		fprintf(stderr, "accepted: %s\n", text);
		al_yaml_docs_free(docs, n);
		return;
	}
	CU_ASSERT_PTR_NULL(docs);
	if (strstr(al_error_message(), needle) == NULL) {
		fprintf(stderr, "message lacks '%s': %s\n", needle,
		        al_error_message());
		CU_FAIL("message");
	}
}

/* Load one document and convert it to compact JSON text; caller frees. */
static char *yaml_to_json_text(const char *text)
{
	al_yaml_node **docs = NULL;
	size_t n = 0;
	json_t *j = NULL;
	char *s = NULL;

	if (al_yaml_load(&docs, &n, (const uint8_t *)text, strlen(text),
	                 "t.yaml") != 0) {
		fprintf(stderr, "load failed: %s\n", al_error_message());
		return NULL;
	}
	if (n == 1 && al_yaml_to_json(&j, docs[0]) == 0)
		s = al_json_dump(j, 0);
	else
		fprintf(stderr, "to_json failed: %s\n", al_error_message());
	json_decref(j);
	al_yaml_docs_free(docs, n);
	return s;
}

static void check_json(const char *yaml, const char *want)
{
	char *got = yaml_to_json_text(yaml);

	CU_ASSERT_PTR_NOT_NULL(got);
	if (got != NULL && strcmp(got, want) != 0) {
		fprintf(stderr, "yaml %s -> %s, want %s\n", yaml, got, want);
		CU_FAIL("json");
	}
	free(got);
}

static void test_yaml__tree_with_positions(void)
{
	const char *t =
	    "kind: X\nspec:\n  items:\n    - a\n    - \"b\"\n  n: 3\n";
	al_yaml_node **docs = NULL;
	const al_yaml_node *spec, *items, *kind;
	size_t n = 0;

	CU_ASSERT_EQUAL_FATAL(
	    al_yaml_load(&docs, &n, (const uint8_t *)t, strlen(t), "t.yaml"),
	    0);
	CU_ASSERT_EQUAL(n, 1);
	CU_ASSERT_EQUAL(docs[0]->type, AL_YAML_MAP);
	kind = al_yaml_get(docs[0], "kind");
	spec = al_yaml_get(docs[0], "spec");
	items = al_yaml_get(spec, "items");
	CU_ASSERT_PTR_NULL(al_yaml_get(docs[0], "missing"));
	CU_ASSERT_PTR_NULL(al_yaml_get(kind, "x"));
	if (kind != NULL && spec != NULL && items != NULL) {
		CU_ASSERT_STRING_EQUAL(kind->value, "X");
		CU_ASSERT_EQUAL(kind->line, 1);
		CU_ASSERT_EQUAL(kind->column, 7);
		CU_ASSERT_EQUAL(spec->type, AL_YAML_MAP);
		CU_ASSERT_EQUAL(spec->line, 3);
		CU_ASSERT_EQUAL(items->type, AL_YAML_SEQ);
		CU_ASSERT_EQUAL(items->n, 2);
		CU_ASSERT_EQUAL(items->line, 4);
		CU_ASSERT_EQUAL(items->column, 5);
		CU_ASSERT_EQUAL(items->items[1]->line, 5);
		CU_ASSERT_EQUAL(items->items[1]->column, 7);
		CU_ASSERT_TRUE(items->items[0]->plain);
		CU_ASSERT_FALSE(items->items[1]->plain);
		CU_ASSERT_EQUAL(spec->keys[1]->line, 6);
		CU_ASSERT_EQUAL(spec->keys[1]->column, 3);
	} else {
		CU_FAIL("missing nodes");
	}
	al_yaml_docs_free(docs, n);
	al_yaml_docs_free(NULL, 0);
	al_yaml_node_free(NULL);
}

static void test_yaml__multi_document(void)
{
	const char *t = "a: 1\n---\n- x\n---\n...\n---\nplain\n";
	al_yaml_node **docs = NULL;
	size_t n = 0;

	CU_ASSERT_EQUAL_FATAL(
	    al_yaml_load(&docs, &n, (const uint8_t *)t, strlen(t), "t.yaml"),
	    0);
	CU_ASSERT_EQUAL(n, 4);
	if (n == 4) {
		CU_ASSERT_EQUAL(docs[0]->type, AL_YAML_MAP);
		CU_ASSERT_EQUAL(docs[1]->type, AL_YAML_SEQ);
		CU_ASSERT_EQUAL(docs[2]->type, AL_YAML_SCALAR);
		CU_ASSERT_EQUAL(docs[2]->len, 0);
		CU_ASSERT_STRING_EQUAL(docs[3]->value, "plain");
		CU_ASSERT_EQUAL(docs[3]->line, 7);
	}
	al_yaml_docs_free(docs, n);
	docs = NULL;
	CU_ASSERT_EQUAL(al_yaml_load(&docs, &n, (const uint8_t *)"", 0, "e"),
	                0);
	CU_ASSERT_EQUAL(n, 0);
	al_yaml_docs_free(docs, n);
}

static void test_yaml__refuses_aliases_and_anchors(void)
{
	check_bad("a: &x 1\nb: *x\n", AL_EPARSE,
	          "t.yaml:1:4: anchors are not supported");
	check_bad("a: *x\n", AL_EPARSE, "t.yaml:1");
	check_bad("- &a [1]\n", AL_EPARSE, "anchors are not supported");
	check_bad("a: !!int 1\n", AL_EPARSE,
	          "t.yaml:1:4: tags other than !!str");
	check_bad("a: !custom {}\n", AL_EPARSE, "tags on mappings");
}

static void test_yaml__refuses_duplicate_keys(void)
{
	check_bad("a: 1\nb: 2\na: 3\n", AL_EPARSE,
	          "t.yaml:3:1: duplicate key 'a' (first at line 1)");
	check_bad("x:\n  k: 1\n  \"k\": 2\n", AL_EPARSE,
	          "t.yaml:3:3: duplicate key 'k'");
	check_bad("{a: 1, a: 1}", AL_EPARSE, "duplicate key");
}

static void test_yaml__refuses_complex_keys(void)
{
	check_bad("? [a]\n: 1\n", AL_EPARSE,
	          "t.yaml:1:3: mapping keys must be scalars");
	check_bad("{a: 1}: 2\n", AL_EPARSE, "mapping keys must be scalars");
}

static void test_yaml__syntax_error_positions(void)
{
	check_bad("a: 1\n b: 2\n", AL_EPARSE, "t.yaml:2:");
	check_bad("a: [1, 2\n", AL_EPARSE, "t.yaml:");
	check_bad("a: \"unterminated\n", AL_EPARSE, "t.yaml:");
	check_bad("\ta: 1\n", AL_EPARSE, "t.yaml:1:1:");
	check_bad("a: \x01\n", AL_EPARSE, "t.yaml:1:4:");
	check_bad("a: \xff\n", AL_EPARSE, "t.yaml:");
}

static void test_yaml__depth_and_size_bounds(void)
{
	size_t depth = AL_YAML_MAX_DEPTH + 1, i;
	char *s = malloc(2 * depth + 1);
	al_yaml_node **docs = NULL;
	size_t n = 0;
	int rc;

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	for (i = 0; i < depth; i++) {
		s[i] = '[';
		s[2 * depth - 1 - i] = ']';
	}
	s[2 * depth] = '\0';
	check_bad(s, AL_ELIMIT, "nesting too deep");
	/* Exactly the limit is fine. */
	rc = al_yaml_load(&docs, &n, (const uint8_t *)s + 1, 2 * depth - 2,
	                  "t.yaml");
	CU_ASSERT_EQUAL(rc, 0);
	al_yaml_docs_free(docs, n);
	free(s);

	/* One node over the bound. */
	s = malloc(2 * AL_YAML_MAX_NODES + 3);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	s[0] = '[';
	for (i = 0; i < AL_YAML_MAX_NODES; i++) {
		s[1 + 2 * i] = '1';
		s[2 + 2 * i] = ',';
	}
	s[2 * AL_YAML_MAX_NODES] = ']';
	s[2 * AL_YAML_MAX_NODES + 1] = '\0';
	check_bad(s, AL_ELIMIT, "too many nodes");
	free(s);

	CU_ASSERT_EQUAL(al_yaml_load(&docs, &n, (const uint8_t *)"a",
	                             (size_t)AL_YAML_MAX_INPUT + 1, "big"),
	                AL_ELIMIT);
}

static void test_yaml__core_schema(void)
{
	check_json("[~, null, Null, NULL, '', \"null\", '~']",
	           "[null,null,null,null,\"\",\"null\",\"~\"]");
	check_json("[true, True, TRUE, false, \"true\", yes, no, on, off, y]",
	           "[true,true,true,false,\"true\",\"yes\",\"no\",\"on\","
	           "\"off\",\"y\"]");
	check_json("[0, -1, +2, 0x1f, 0o17, 007, '1', 9223372036854775807]",
	           "[0,-1,2,31,15,7,\"1\",9223372036854775807]");
	check_json("[1.5, -0.25, .5, 1e3, 2E-2, 1., '1.0']",
	           "[1.5,-0.25,0.5,1000.0,0.02,1.0,\"1.0\"]");
	check_json("[0x, 1_000, 1:20, 0b1, 1e, .]",
	           "[\"0x\",\"1_000\",\"1:20\",\"0b1\",\"1e\",\".\"]");
	check_json("a:\nb: !!str 1\nc: ! 2\n",
	           "{\"a\":null,\"b\":\"1\",\"c\":\"2\"}");
	check_json("\"1\": x\n2: y\n", "{\"1\":\"x\",\"2\":\"y\"}");
}

static void test_yaml__to_json_refuses_unrepresentable(void)
{
	al_yaml_node **docs = NULL;
	size_t n = 0;
	json_t *j = NULL;
	const char *t = "a:\n  - .inf\nb: 99999999999999999999\n";
	const al_yaml_node *b;

	CU_ASSERT_EQUAL_FATAL(
	    al_yaml_load(&docs, &n, (const uint8_t *)t, strlen(t), "t.yaml"),
	    0);
	CU_ASSERT_EQUAL(al_yaml_to_json(&j, docs[0]), AL_EPARSE);
	CU_ASSERT_PTR_NULL(j);
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(al_error_message(), "2:5: '.inf' cannot be represented"));
	b = al_yaml_get(docs[0], "b");
	CU_ASSERT_EQUAL(al_yaml_to_json(&j, b), AL_EPARSE);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "3:4: integer"));
	al_yaml_docs_free(docs, n);
	CU_ASSERT_EQUAL(al_yaml_to_json(&j, NULL), 0);
	CU_ASSERT(json_is_null(j));
	json_decref(j);
}

/* Emit docs, load them back and compare each with the original. */
static void check_round_trip(json_t *const *docs, size_t ndocs)
{
	al_buf out = AL_BUF_INIT(1 << 20);
	al_yaml_node **back = NULL;
	size_t nback = 0, i;
	json_t *j;

	CU_ASSERT_EQUAL(al_yaml_emit_json(&out, docs, ndocs), 0);
	if (al_yaml_load(&back, &nback, out.ptr, out.len, "emitted") != 0) {
		fprintf(stderr, "reload failed: %s\n%s\n", al_error_message(),
		        al_buf_cstr(&out));
		CU_FAIL("reload");
		al_buf_free(&out);
		return;
	}
	CU_ASSERT_EQUAL(nback, ndocs);
	for (i = 0; i < nback && i < ndocs; i++) {
		j = NULL;
		CU_ASSERT_EQUAL(al_yaml_to_json(&j, back[i]), 0);
		if (!json_equal(j, docs[i])) {
			char *a = al_json_dump(docs[i], 0),
			     *b = al_json_dump(j, 0);

			fprintf(stderr,
			        "round trip differs:\n%s\nwant %s\ngot  %s\n",
			        al_buf_cstr(&out), a, b);
			free(a);
			free(b);
			CU_FAIL("round trip");
		}
		json_decref(j);
	}
	al_yaml_docs_free(back, nback);
	al_buf_free(&out);
}

static void test_yaml__emit_round_trips_tricky_strings(void)
{
	static const char *const tricky[] = {
	    "true",
	    "false",
	    "null",
	    "~",
	    "",
	    "1.0",
	    "0x1",
	    "0o7",
	    "1",
	    "-1",
	    "+1",
	    "1e3",
	    ".inf",
	    ".nan",
	    "yes",
	    "no",
	    "on",
	    "off",
	    "y",
	    "n",
	    ": x",
	    "- a",
	    "a: b",
	    "#c",
	    "a #b",
	    "x#y",
	    "'q'",
	    "\"d\"",
	    "[1]",
	    "{a: 1}",
	    "*x",
	    "&x",
	    "!t",
	    "%x",
	    "@x",
	    "`x",
	    "|",
	    ">",
	    "?",
	    "-",
	    "---",
	    "...",
	    " lead",
	    "trail ",
	    "line1\nline2",
	    "line1\n\nline3\n",
	    "\ttab",
	    "é ünïcode ✓",
	    "end\n\n\n",
	    "\nstart",
	    "  indented\nx",
	    "a \nb",
	    "x\r\ny",
	    "1_000",
	    "12:30",
	    "0b101",
	    "=",
	    "<<",
	    "a\\b",
	    "ctl\x01",
	    "sha256:abc",
	};
	json_t *obj = json_object(), *arr = json_array(), *docs[2];
	size_t i;
	char key[32];

	for (i = 0; i < sizeof(tricky) / sizeof(tricky[0]); i++) {
		json_array_append_new(arr, json_string(tricky[i]));
		/* The same strings as keys. */
		json_object_set_new(obj, tricky[i],
		                    json_integer((json_int_t)i));
		snprintf(key, sizeof(key), "k%zu", i);
		json_object_set_new(obj, key, json_string(tricky[i]));
	}
	json_object_set_new(obj, "nested",
	                    json_pack("{s:[i,f,b,n,{},[]], s:{s:s}}", "l", 7,
	                              2.0, 0, "m", "n", "true"));
	docs[0] = obj;
	docs[1] = arr;
	check_round_trip(docs, 2);
	json_decref(obj);
	json_decref(arr);
}

static void test_yaml__emit_layout(void)
{
	json_t *a = json_pack("{s:s, s:{s:[s,s]}}", "kind", "X", "spec", "list",
	                      "p", "true");
	json_t *b = json_pack("{s:i}", "count", 1);
	json_t *docs[2] = {a, b};
	al_buf out = AL_BUF_INIT(4096);

	CU_ASSERT_EQUAL(al_yaml_emit_json(&out, docs, 2), 0);
	CU_ASSERT_STRING_EQUAL(
	    al_buf_cstr(&out),
	    "kind: X\nspec:\n  list:\n  - p\n  - 'true'\n---\ncount: 1\n");
	al_buf_free(&out);
	/* The output bound is respected. */
	al_buf_init(&out, 10);
	CU_ASSERT_EQUAL(al_yaml_emit_json(&out, docs, 2), AL_ELIMIT);
	CU_ASSERT(out.len <= 10);
	al_buf_free(&out);
	json_decref(a);
	json_decref(b);
}

static void test_yaml__emit_refuses_non_finite(void)
{
	json_t *a = json_pack("{s:s}", "a", "b");
	al_buf out = AL_BUF_INIT(4096);
	json_t *nul[1] = {NULL};

	CU_ASSERT_EQUAL(al_yaml_emit_json(&out, nul, 1), AL_EINVAL);
	al_buf_reset(&out);
	CU_ASSERT_EQUAL(al_yaml_emit_json(&out, &a, 0), 0);
	CU_ASSERT_EQUAL(out.len, 0);
	al_buf_free(&out);
	json_decref(a);
}

/* Every bundled release manifest loads (several hold more documents) and
 * converts; each document is a mapping with apiVersion and kind. */
static void test_yaml__loads_sample_manifests(void)
{
	char *dir =
	    al_path_join(al_test_source_dir(), "samples/release-manifests");
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t files = 0, total = 0, i;

	CU_ASSERT_PTR_NOT_NULL(d);
	while (d != NULL && (e = readdir(d)) != NULL) {
		al_buf b = AL_BUF_INIT(1 << 20);
		al_yaml_node **docs = NULL;
		size_t n = 0;
		char *path;
		json_t *j;

		if (!al_str_endswith(e->d_name, ".yaml"))
			continue;
		path = al_path_join(dir, e->d_name);
		CU_ASSERT_EQUAL(al_fs_read_file(path, &b), 0);
		if (al_yaml_load(&docs, &n, b.ptr, b.len, path) != 0) {
			fprintf(stderr, "%s\n", al_error_message());
			CU_FAIL("sample manifest");
		}
		for (i = 0; i < n; i++) {
			j = NULL;
			CU_ASSERT_EQUAL(al_yaml_to_json(&j, docs[i]), 0);
			CU_ASSERT_PTR_NOT_NULL(al_json_str(j, "apiVersion"));
			CU_ASSERT_PTR_NOT_NULL(al_json_str(j, "kind"));
			json_decref(j);
		}
		files++;
		total += n;
		al_yaml_docs_free(docs, n);
		al_buf_free(&b);
		free(path);
	}
	if (d != NULL)
		closedir(d);
	CU_ASSERT(files >= 10);
	CU_ASSERT(total > files);
	free(dir);
}

/* A random string over characters that YAML treats specially. */
static json_t *random_string(unsigned *state)
{
	static const char alphabet[] = "ab01.-+:#&*!|>'\"%@` \n\t?,[]{}~eEx_\\";
	static const char *const words[] = {"true", "null", "~",    "yes",
	                                    "0x1f", "1e3",  ".inf", "---",
	                                    "...",  "- ",   ": ",   "é"};
	char buf[64];
	size_t n = (size_t)(rand_r(state) % 12), i, len = 0;

	for (i = 0; i < n; i++) {
		const char *w;
		char one[2] = {0, 0};

		if (rand_r(state) % 4 == 0) {
			w = words[rand_r(state) %
			          (sizeof(words) / sizeof(words[0]))];
		} else {
			one[0] =
			    alphabet[rand_r(state) % (sizeof(alphabet) - 1)];
			w = one;
		}
		if (len + strlen(w) + 1 > sizeof(buf))
			break;
		memcpy(buf + len, w, strlen(w));
		len += strlen(w);
	}
	buf[len] = '\0';
	return json_string(buf);
}

static json_t *random_json(unsigned *state, int depth)
{
	int kind = rand_r(state) % (depth > 3 ? 5 : 7);
	json_t *v, *k;
	int i, n;

	switch (kind) {
	case 0:
		return json_integer((json_int_t)rand_r(state) - RAND_MAX / 2);
	case 1:
		return json_real((double)rand_r(state) / 7.0);
	case 2:
		return json_boolean(rand_r(state) % 2);
	case 3:
		return json_null();
	case 4:
		return random_string(state);
	case 5:
		v = json_array();
		n = rand_r(state) % 4;
		for (i = 0; i < n; i++)
			json_array_append_new(v, random_json(state, depth + 1));
		return v;
	default:
		v = json_object();
		n = rand_r(state) % 4;
		for (i = 0; i < n; i++) {
			k = random_string(state);
			json_object_set_new(v, json_string_value(k),
			                    random_json(state, depth + 1));
			json_decref(k);
		}
		return v;
	}
}

static void test_yaml__emit_round_trips_random_documents(void)
{
	unsigned state = al_test_seed();
	json_t *docs[3];
	int i, j;

	for (i = 0; i < 300; i++) {
		for (j = 0; j < 3; j++)
			docs[j] = random_json(&state, 0);
		check_round_trip(docs, 3);
		for (j = 0; j < 3; j++)
			json_decref(docs[j]);
	}
}

/* Random bytes must never crash the loader or leak: they load or fail. */
static void test_yaml__random_input_is_refused_cleanly(void)
{
	static const char alphabet[] =
	    "a1:- \n[]{},&*!|>'\"#%?@`\t~.\\\x01\xc3\xa9";
	unsigned state = al_test_seed() + 1;
	char buf[96];
	int i, ok = 0, bad = 0;

	for (i = 0; i < 5000; i++) {
		size_t n = (size_t)(rand_r(&state) % sizeof(buf)), k;
		al_yaml_node **docs = NULL;
		size_t nd = 0;
		int rc;

		for (k = 0; k < n; k++)
			buf[k] =
			    alphabet[rand_r(&state) % (sizeof(alphabet) - 1)];
		rc = al_yaml_load(&docs, &nd, (const uint8_t *)buf, n, "r");
		if (rc == 0) {
			ok++;
			al_yaml_docs_free(docs, nd);
		} else {
			bad++;
			CU_ASSERT(rc == AL_EPARSE || rc == AL_ELIMIT);
			CU_ASSERT(strncmp(al_error_message(), "r:", 2) == 0);
		}
	}
	CU_ASSERT(ok > 0 && bad > 0);
}

/* al_yaml_load refuses a repeated key; al_yaml_load_lenient keeps the
 * later value, as Kubernetes' decoders read cluster manifests. */
static void test_yaml__lenient_loader_keeps_the_later_key(void)
{
	static const char src[] = "a: 1\nb:\n  c: x\n  c: y\n";
	al_yaml_node **docs = NULL;
	size_t n = 0;
	json_t *v = NULL;

	CU_ASSERT_EQUAL(al_yaml_load(&docs, &n, (const uint8_t *)src, sizeof(src) - 1, "t.yaml"), AL_EPARSE);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "t.yaml:4:3: duplicate key 'c'"));
	CU_ASSERT_EQUAL(al_yaml_load_lenient(&docs, &n, (const uint8_t *)src, sizeof(src) - 1, "t.yaml"), 0);
	if (n == 1 && al_yaml_to_json(&v, docs[0]) == 0) {
		CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_object_get(v, "b"), "c")), "y");
	} else {
		CU_FAIL("lenient load");
	}
	json_decref(v);
	al_yaml_docs_free(docs, n);
}

int main(void)
{
	CU_TestInfo tests[] = {
	    {"test_yaml__tree_with_positions", test_yaml__tree_with_positions},
	    {"test_yaml__multi_document", test_yaml__multi_document},
	    {"test_yaml__lenient_loader_keeps_the_later_key", test_yaml__lenient_loader_keeps_the_later_key},
	    {"test_yaml__refuses_aliases_and_anchors",
	     test_yaml__refuses_aliases_and_anchors},
	    {"test_yaml__refuses_duplicate_keys",
	     test_yaml__refuses_duplicate_keys},
	    {"test_yaml__refuses_complex_keys",
	     test_yaml__refuses_complex_keys},
	    {"test_yaml__syntax_error_positions",
	     test_yaml__syntax_error_positions},
	    {"test_yaml__depth_and_size_bounds",
	     test_yaml__depth_and_size_bounds},
	    {"test_yaml__core_schema", test_yaml__core_schema},
	    {"test_yaml__to_json_refuses_unrepresentable",
	     test_yaml__to_json_refuses_unrepresentable},
	    {"test_yaml__emit_round_trips_tricky_strings",
	     test_yaml__emit_round_trips_tricky_strings},
	    {"test_yaml__emit_layout", test_yaml__emit_layout},
	    {"test_yaml__emit_refuses_non_finite",
	     test_yaml__emit_refuses_non_finite},
	    {"test_yaml__loads_sample_manifests",
	     test_yaml__loads_sample_manifests},
	    {"test_yaml__emit_round_trips_random_documents",
	     test_yaml__emit_round_trips_random_documents},
	    {"test_yaml__random_input_is_refused_cleanly",
	     test_yaml__random_input_is_refused_cleanly},
	    CU_TEST_INFO_NULL,
	};

	return al_test_run("yaml", tests);
}
