/* yaml.c: libyaml event loader into a positioned node tree (bounded, no
 * aliases), core-schema JSON conversion, and the emitter. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "yaml_int.h"
#include "airlock/error.h"

typedef struct loader {
	const char *name;
	al_yaml_node **docs;
	size_t ndocs;
	al_yaml_node *root; /* the document being built */
	al_yaml_node *stack[AL_YAML_MAX_DEPTH];
	size_t depth;
	al_yaml_node *key; /* a key waiting for its value */
	size_t nnodes;
	int allow_dup; /* al_yaml_load_lenient: a later key wins */
} loader;

/* Free a node and everything below it; NULL is a no-op. */
void al_yaml_node_free(al_yaml_node *n)
{
	size_t i;

	if (n == NULL)
		return;
	for (i = 0; i < n->n; i++) {
		if (n->keys != NULL)
			al_yaml_node_free(n->keys[i]);
		if (n->items != NULL)
			al_yaml_node_free(n->items[i]);
	}
	free(n->keys);
	free(n->items);
	free(n->value);
	free(n);
}

/* Free ndocs documents and the array; docs may be NULL. */
void al_yaml_docs_free(al_yaml_node **docs, size_t ndocs)
{
	size_t i;

	if (docs == NULL)
		return;
	for (i = 0; i < ndocs; i++)
		al_yaml_node_free(docs[i]);
	free(docs);
}

/* Grow a pointer array holding n entries so it can hold n + 1; the
 * capacity is the next power of two, so it is implied by n. */
static int grow(al_yaml_node ***arr, size_t n)
{
	al_yaml_node **p;
	size_t cap;

	if (n != 0 && (n & (n - 1)) != 0)
		return 0;
	cap = n == 0 ? 1 : n * 2;
	if (cap > SIZE_MAX / sizeof(*p))
		return AL_ENOMEM;
	p = realloc(*arr, cap * sizeof(*p));
	if (p == NULL)
		return AL_ENOMEM;
	*arr = p;
	return 0;
}

static int load_error(const loader *l, const yaml_mark_t *m, int code,
                      const char *what)
{
	return al_error_set(code, "%s:%zu:%zu: %s", l->name, m->line + 1,
	                    m->column + 1, what);
}

static int key_cmp(const void *a, const void *b)
{
	const al_yaml_node *x = *(al_yaml_node *const *)a;
	const al_yaml_node *y = *(al_yaml_node *const *)b;
	int c;

	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	c = memcmp(x->value, y->value, x->len);
	if (c != 0)
		return c;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->column != y->column)
		return x->column < y->column ? -1 : 1;
	return 0;
}

/* Refuse a map with two equal keys, naming the later one. Sorting keeps
 * this O(n log n) so a huge hostile map cannot make it quadratic. */
static int check_duplicates(const loader *l, const al_yaml_node *map)
{
	al_yaml_node **sorted;
	size_t i;
	int rc = 0;

	if (map->n < 2)
		return 0;
	sorted = malloc(map->n * sizeof(*sorted));
	if (sorted == NULL)
		return al_error_set(AL_ENOMEM, "%s: out of memory", l->name);
	memcpy(sorted, map->keys, map->n * sizeof(*sorted));
	qsort(sorted, map->n, sizeof(*sorted), key_cmp);
	for (i = 1; i < map->n; i++) {
		if (sorted[i]->len == sorted[i - 1]->len &&
		    memcmp(sorted[i]->value, sorted[i - 1]->value,
		           sorted[i]->len) == 0) {
			rc = al_error_set(AL_EPARSE,
			                  "%s:%zu:%zu: duplicate key '%.100s' "
			                  "(first at line %zu)",
			                  l->name, sorted[i]->line,
			                  sorted[i]->column, sorted[i]->value,
			                  sorted[i - 1]->line);
			break;
		}
	}
	free(sorted);
	return rc;
}

/* Place a new node: document root, sequence item, map key or map value.
 * Takes ownership of node in every case. */
static int attach(loader *l, al_yaml_node *node, const yaml_mark_t *m)
{
	al_yaml_node *top;
	int rc;

	if (l->depth == 0) {
		l->root = node;
		return 0;
	}
	top = l->stack[l->depth - 1];
	if (top->type == AL_YAML_SEQ) {
		if (grow(&top->items, top->n) < 0) {
			al_yaml_node_free(node);
			return al_error_set(AL_ENOMEM, "%s: out of memory",
			                    l->name);
		}
		top->items[top->n++] = node;
		return 0;
	}
	if (l->key == NULL) {
		if (node->type != AL_YAML_SCALAR) {
			al_yaml_node_free(node);
			return load_error(l, m, AL_EPARSE,
			                  "mapping keys must be scalars");
		}
		l->key = node;
		return 0;
	}
	rc = grow(&top->keys, top->n);
	if (rc == 0)
		rc = grow(&top->items, top->n);
	if (rc < 0) {
		al_yaml_node_free(node);
		return al_error_set(AL_ENOMEM, "%s: out of memory", l->name);
	}
	top->keys[top->n] = l->key;
	top->items[top->n] = node;
	top->n++;
	l->key = NULL;
	return 0;
}

static al_yaml_node *new_node(loader *l, al_yaml_type type,
                              const yaml_mark_t *m)
{
	al_yaml_node *n;

	n = calloc(1, sizeof(*n));
	if (n == NULL)
		return NULL;
	n->type = type;
	n->line = m->line + 1;
	n->column = m->column + 1;
	l->nnodes++;
	return n;
}

/* Only the standard string/map/seq tags and the non-specific "!" are
 * understood; anything else would silently change meaning. */
static int tag_ok(const yaml_char_t *tag, const char *want)
{
	return tag == NULL || strcmp((const char *)tag, "!") == 0 ||
	       strcmp((const char *)tag, want) == 0;
}

static int on_event(loader *l, yaml_event_t *ev)
{
	al_yaml_node *node = NULL;
	const yaml_mark_t *m = &ev->start_mark;
	const yaml_char_t *anchor = NULL, *tag = NULL;
	int rc;

	switch (ev->type) {
	case YAML_ALIAS_EVENT:
		return load_error(l, m, AL_EPARSE, "aliases are not supported");
	case YAML_SCALAR_EVENT:
		anchor = ev->data.scalar.anchor;
		tag = ev->data.scalar.tag;
		if (!tag_ok(tag, YAML_STR_TAG))
			return load_error(
			    l, m, AL_EPARSE,
			    "tags other than !!str are not supported");
		break;
	case YAML_SEQUENCE_START_EVENT:
		anchor = ev->data.sequence_start.anchor;
		tag = ev->data.sequence_start.tag;
		if (!tag_ok(tag, YAML_SEQ_TAG))
			return load_error(
			    l, m, AL_EPARSE,
			    "tags on sequences are not supported");
		break;
	case YAML_MAPPING_START_EVENT:
		anchor = ev->data.mapping_start.anchor;
		tag = ev->data.mapping_start.tag;
		if (!tag_ok(tag, YAML_MAP_TAG))
			return load_error(l, m, AL_EPARSE,
			                  "tags on mappings are not supported");
		break;
	default:
		break;
	}
	if (anchor != NULL)
		return load_error(l, m, AL_EPARSE, "anchors are not supported");

	switch (ev->type) {
	case YAML_DOCUMENT_START_EVENT:
		l->root = NULL;
		return 0;
	case YAML_DOCUMENT_END_EVENT:
		if (grow(&l->docs, l->ndocs) < 0)
			return al_error_set(AL_ENOMEM, "%s: out of memory",
			                    l->name);
		l->docs[l->ndocs++] = l->root;
		l->root = NULL;
		return 0;
	case YAML_SCALAR_EVENT:
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		if (l->nnodes >= AL_YAML_MAX_NODES)
			return load_error(l, m, AL_ELIMIT, "too many nodes");
		node = new_node(l,
		                ev->type == YAML_SCALAR_EVENT ? AL_YAML_SCALAR
		                : ev->type == YAML_SEQUENCE_START_EVENT
		                    ? AL_YAML_SEQ
		                    : AL_YAML_MAP,
		                m);
		if (node == NULL)
			return al_error_set(AL_ENOMEM, "%s: out of memory",
			                    l->name);
		if (ev->type == YAML_SCALAR_EVENT) {
			node->len = ev->data.scalar.length;
			node->value = malloc(node->len + 1);
			if (node->value == NULL) {
				al_yaml_node_free(node);
				return al_error_set(
				    AL_ENOMEM, "%s: out of memory", l->name);
			}
			if (node->len > 0)
				memcpy(node->value, ev->data.scalar.value,
				       node->len);
			node->value[node->len] = '\0';
			node->plain =
			    ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
			    tag == NULL;
			return attach(l, node, m);
		}
		if (l->depth >= AL_YAML_MAX_DEPTH) {
			al_yaml_node_free(node);
			return load_error(l, m, AL_ELIMIT, "nesting too deep");
		}
		rc = attach(l, node, m);
		if (rc < 0)
			return rc;
		l->stack[l->depth++] = node;
		return 0;
	case YAML_SEQUENCE_END_EVENT:
		l->depth--;
		return 0;
	case YAML_MAPPING_END_EVENT:
		rc = l->allow_dup ? 0
		                  : check_duplicates(l, l->stack[l->depth - 1]);
		l->depth--;
		return rc;
	default:
		return 0;
	}
}

/*
 * Load every document of p[0..n) (see yaml_int.h). Bounds: AL_YAML_MAX_INPUT
 * bytes, AL_YAML_MAX_DEPTH nesting, AL_YAML_MAX_NODES nodes (AL_ELIMIT).
 * An empty stream gives zero documents; an empty document a NULL-valued
 * plain scalar "".
 */
static int yaml_load(al_yaml_node ***docs, size_t *ndocs, const uint8_t *p,
                     size_t n, const char *name, int allow_dup)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	loader l;
	int rc = 0, done = 0;

	memset(&l, 0, sizeof(l));
	l.name = name != NULL ? name : "YAML";
	l.allow_dup = allow_dup;
	if (n > AL_YAML_MAX_INPUT)
		return al_error_set(AL_ELIMIT, "%s: larger than %d bytes",
		                    l.name, AL_YAML_MAX_INPUT);
	if (!yaml_parser_initialize(&parser))
		return al_error_set(
		    AL_ENOMEM, "%s: cannot initialise the YAML parser", l.name);
	yaml_parser_set_input_string(&parser,
	                             p != NULL ? p : (const uint8_t *)"", n);
	while (!done) {
		if (!yaml_parser_parse(&parser, &ev)) {
			if (parser.error == YAML_MEMORY_ERROR) {
				rc = al_error_set(AL_ENOMEM,
				                  "%s: out of memory", l.name);
			} else if (parser.error == YAML_READER_ERROR) {
				size_t line = 1, col = 1, i;

				/* The reader only knows a byte offset. */
				for (i = 0; i < parser.problem_offset && i < n;
				     i++) {
					col++;
					if (p[i] == '\n') {
						line++;
						col = 1;
					}
				}
				rc = al_error_set(AL_EPARSE, "%s:%zu:%zu: %s",
				                  l.name, line, col,
				                  parser.problem != NULL
				                      ? parser.problem
				                      : "invalid input");
			} else {
				rc = al_error_set(
				    AL_EPARSE, "%s:%zu:%zu: %s%s%s", l.name,
				    parser.problem_mark.line + 1,
				    parser.problem_mark.column + 1,
				    parser.problem != NULL ? parser.problem
				                           : "syntax error",
				    parser.context != NULL ? " " : "",
				    parser.context != NULL ? parser.context
				                           : "");
			}
			goto out;
		}
		done = ev.type == YAML_STREAM_END_EVENT;
		rc = on_event(&l, &ev);
		yaml_event_delete(&ev);
		if (rc < 0)
			goto out;
	}
	*docs = l.docs;
	*ndocs = l.ndocs;
	l.docs = NULL;
	l.ndocs = 0;
out:
	yaml_parser_delete(&parser);
	al_yaml_node_free(l.key);
	al_yaml_node_free(l.root);
	al_yaml_docs_free(l.docs, l.ndocs);
	return rc;
}

int al_yaml_load(al_yaml_node ***docs, size_t *ndocs, const uint8_t *p,
                 size_t n, const char *name)
{
	return yaml_load(docs, ndocs, p, n, name, 0);
}

int al_yaml_load_lenient(al_yaml_node ***docs, size_t *ndocs, const uint8_t *p,
                         size_t n, const char *name)
{
	return yaml_load(docs, ndocs, p, n, name, 1);
}

/* Borrowed value of key in map, NULL when map is not a MAP or lacks key. */
const al_yaml_node *al_yaml_get(const al_yaml_node *map, const char *key)
{
	size_t i, klen;

	if (map == NULL || map->type != AL_YAML_MAP || key == NULL)
		return NULL;
	klen = strlen(key);
	for (i = 0; i < map->n; i++) {
		if (map->keys[i]->len == klen &&
		    memcmp(map->keys[i]->value, key, klen) == 0)
			return map->items[i];
	}
	return NULL;
}

/* --- YAML 1.2 core schema ----------------------------------------------- */

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int all_in(const char *s, const char *set)
{
	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++) {
		if (strchr(set, *s) == NULL)
			return 0;
	}
	return 1;
}

static int is_null(const char *s)
{
	return s[0] == '\0' || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 ||
	       strcmp(s, "Null") == 0 || strcmp(s, "NULL") == 0;
}

/* 1 true, 0 false, -1 neither. */
static int core_bool(const char *s)
{
	if (strcmp(s, "true") == 0 || strcmp(s, "True") == 0 ||
	    strcmp(s, "TRUE") == 0)
		return 1;
	if (strcmp(s, "false") == 0 || strcmp(s, "False") == 0 ||
	    strcmp(s, "FALSE") == 0)
		return 0;
	return -1;
}

/* [-+]?[0-9]+ | 0o[0-7]+ | 0x[0-9a-fA-F]+ ; base receives 10, 8 or 16. */
static int is_int(const char *s, int *base)
{
	if (s[0] == '0' && s[1] == 'o') {
		*base = 8;
		return all_in(s + 2, "01234567");
	}
	if (s[0] == '0' && s[1] == 'x') {
		*base = 16;
		return all_in(s + 2, "0123456789abcdefABCDEF");
	}
	*base = 10;
	if (s[0] == '-' || s[0] == '+')
		s++;
	return all_in(s, "0123456789");
}

/* [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? and the inf/nan forms. */
static int is_float(const char *s, int *special)
{
	int digits = 0;

	*special = 0;
	if (s[0] == '-' || s[0] == '+')
		s++;
	if (strcmp(s, ".inf") == 0 || strcmp(s, ".Inf") == 0 ||
	    strcmp(s, ".INF") == 0 || strcmp(s, ".nan") == 0 ||
	    strcmp(s, ".NaN") == 0 || strcmp(s, ".NAN") == 0) {
		*special = 1;
		return 1;
	}
	while (is_digit(*s)) {
		s++;
		digits++;
	}
	if (*s == '.') {
		s++;
		while (is_digit(*s)) {
			s++;
			digits++;
		}
	}
	if (digits == 0)
		return 0;
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '-' || *s == '+')
			s++;
		if (!is_digit(*s))
			return 0;
		while (is_digit(*s))
			s++;
	}
	return *s == '\0';
}

static int scalar_to_json(json_t **out, const al_yaml_node *n)
{
	const char *s = n->value;
	json_t *v = NULL;
	int base, special, b;

	if (!n->plain || strlen(s) != n->len) {
		v = json_stringn(s, n->len);
	} else if (is_null(s)) {
		v = json_null();
	} else if ((b = core_bool(s)) >= 0) {
		v = json_boolean(b);
	} else if (is_int(s, &base)) {
		long long x;
		char *end;

		errno = 0;
		x = strtoll(base == 10 ? s : s + 2, &end, base);
		if (errno == ERANGE || *end != '\0')
			return al_error_set(
			    AL_EPARSE, "%zu:%zu: integer '%.64s' out of range",
			    n->line, n->column, s);
		v = json_integer((json_int_t)x);
	} else if (is_float(s, &special)) {
		double d;

		if (special)
			return al_error_set(
			    AL_EPARSE,
			    "%zu:%zu: '%s' cannot be represented in JSON",
			    n->line, n->column, s);
		char *end;

		errno = 0;
		d = strtod(s, &end);
		if (*end != '\0')
			return al_error_set(AL_EPARSE,
			                    "%zu:%zu: '%.64s' is not a number",
			                    n->line, n->column, s);
		if (errno == ERANGE && (d == HUGE_VAL || d == -HUGE_VAL))
			return al_error_set(
			    AL_EPARSE, "%zu:%zu: number '%.64s' out of range",
			    n->line, n->column, s);
		v = json_real(d);
	} else {
		v = json_stringn(s, n->len);
	}
	if (v == NULL)
		return al_error_set(AL_EPARSE,
		                    "%zu:%zu: cannot convert '%.64s' to JSON",
		                    n->line, n->column, s);
	*out = v;
	return 0;
}

/*
 * Convert n to JSON (see yaml_int.h). Errors carry "line:column" of the node:
 * integers out of range, .inf/.nan, strings that are not valid UTF-8 for
 * jansson. Caller owns *out.
 */
int al_yaml_to_json(json_t **out, const al_yaml_node *n)
{
	json_t *v = NULL, *child = NULL;
	size_t i;
	int rc = 0;

	if (n == NULL) {
		*out = json_null();
		return 0;
	}
	switch (n->type) {
	case AL_YAML_SCALAR:
		return scalar_to_json(out, n);
	case AL_YAML_SEQ:
		v = json_array();
		break;
	case AL_YAML_MAP:
		v = json_object();
		break;
	default:
		return al_error_set(AL_EINVAL, "unknown YAML node type %d",
		                    (int)n->type);
	}
	if (v == NULL)
		return al_error_set(AL_ENOMEM, "out of memory converting YAML");
	for (i = 0; i < n->n; i++) {
		rc = al_yaml_to_json(&child, n->items[i]);
		if (rc < 0)
			goto out;
		if (n->type == AL_YAML_SEQ) {
			if (json_array_append_new(v, child) != 0) {
				child = NULL;
				rc = al_error_set(
				    AL_ENOMEM, "out of memory converting YAML");
				goto out;
			}
		} else if (json_object_setn_new(v, n->keys[i]->value,
		                                n->keys[i]->len, child) != 0) {
			child = NULL;
			rc = al_error_set(
			    AL_EPARSE,
			    "%zu:%zu: key '%.64s' cannot be a JSON key",
			    n->keys[i]->line, n->keys[i]->column,
			    n->keys[i]->value);
			goto out;
		}
		child = NULL;
	}
	*out = v;
	v = NULL;
out:
	json_decref(v);
	return rc;
}

/* --- emitter --------------------------------------------------------- */

typedef struct emit_ctx {
	al_buf *out;
	int rc;
} emit_ctx;

static int write_handler(void *data, unsigned char *buffer, size_t size)
{
	emit_ctx *c = data;
	int rc = al_buf_append(c->out, buffer, size);

	if (rc < 0) {
		c->rc =
		    rc == AL_ELIMIT
		        ? al_error_set(rc, "YAML output larger than %zu bytes",
		                       c->out->max)
		        : rc;
		return 0;
	}
	return 1;
}

/*
 * 1 when s written plain would be read back as something other than the
 * string s: by the YAML 1.2 core schema, or by a YAML 1.1 reader (yes, no,
 * on, off, y, n, sexagesimal, "1_000") as go-yaml v2 in older tools is.
 */
static int needs_quotes(const char *s, size_t len)
{
	static const char *const yaml11[] = {
	    "y",  "Y",  "yes", "Yes", "YES", "n",   "N",   "no", "No",
	    "NO", "on", "On",  "ON",  "off", "Off", "OFF", "=",  "<<",
	};
	size_t i;
	int base, special;

	if (len != strlen(s))
		return 1;
	if (is_null(s) || core_bool(s) >= 0 || is_int(s, &base) ||
	    is_float(s, &special))
		return 1;
	for (i = 0; i < sizeof(yaml11) / sizeof(yaml11[0]); i++) {
		if (strcmp(s, yaml11[i]) == 0)
			return 1;
	}
	/* YAML 1.1 numbers allow '_' and ':' (base 60); quote any digit-led
	 * string with them. */
	if ((is_digit(s[0]) ||
	     ((s[0] == '-' || s[0] == '+' || s[0] == '.') && is_digit(s[1]))) &&
	    strspn(s, "0123456789_:.+-eEoxabcdfABCDF") == len)
		return 1;
	return 0;
}

static int emit(yaml_emitter_t *e, yaml_event_t *ev, emit_ctx *c)
{
	if (yaml_emitter_emit(e, ev))
		return 0;
	if (c->rc < 0)
		return c->rc;
	return al_error_set(AL_EINVAL, "cannot emit YAML: %s",
	                    e->problem != NULL ? e->problem : "emitter error");
}

static int emit_scalar(yaml_emitter_t *e, emit_ctx *c, const char *s,
                       size_t len, int quote)
{
	yaml_event_t ev;

	if (len > (size_t)INT_MAX)
		return al_error_set(AL_ELIMIT,
		                    "cannot emit YAML: string too long");
	/* Multi-line text reads best as a literal block; libyaml falls back
	 * to a quoted style where a block scalar cannot hold it (keys). */
	if (!yaml_scalar_event_initialize(
	        &ev, NULL, NULL, (yaml_char_t *)(uintptr_t)s, (int)len, !quote,
	        1,
	        memchr(s, '\n', len) != NULL ? YAML_LITERAL_SCALAR_STYLE
	                                     : YAML_ANY_SCALAR_STYLE))
		return al_error_set(AL_ENOMEM,
		                    "cannot emit YAML: out of memory");
	return emit(e, &ev, c);
}

/* A real written so that it reads back as a float with the same value. */
static int emit_real(yaml_emitter_t *e, emit_ctx *c, double d)
{
	char tmp[64];
	int n;

	if (isnan(d) || isinf(d))
		return al_error_set(AL_EINVAL,
		                    "cannot emit YAML: non-finite number");
	n = snprintf(tmp, sizeof(tmp), "%.17g", d);
	if (n < 0 || (size_t)n >= sizeof(tmp) - 3)
		return al_error_set(
		    AL_EINVAL, "cannot emit YAML: number formatting failed");
	if (strpbrk(tmp, ".eEn") == NULL) {
		tmp[n++] = '.';
		tmp[n++] = '0';
		tmp[n] = '\0';
	}
	return emit_scalar(e, c, tmp, (size_t)n, 0);
}

static int emit_value(yaml_emitter_t *e, emit_ctx *c, json_t *v, size_t depth)
{
	yaml_event_t ev;
	char tmp[32];
	const char *key;
	json_t *child;
	size_t i;
	int rc, n;

	if (depth > AL_YAML_MAX_DEPTH)
		return al_error_set(AL_ELIMIT,
		                    "cannot emit YAML: nesting deeper than %d",
		                    AL_YAML_MAX_DEPTH);
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		if (!yaml_mapping_start_event_initialize(
		        &ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE))
			return al_error_set(AL_ENOMEM,
			                    "cannot emit YAML: out of memory");
		if ((rc = emit(e, &ev, c)) < 0)
			return rc;
		json_object_foreach(v, key, child)
		{
			size_t klen = strlen(key);

			rc = emit_scalar(e, c, key, klen,
			                 needs_quotes(key, klen));
			if (rc == 0)
				rc = emit_value(e, c, child, depth + 1);
			if (rc < 0)
				return rc;
		}
		yaml_mapping_end_event_initialize(&ev);
		return emit(e, &ev, c);
	case JSON_ARRAY:
		if (!yaml_sequence_start_event_initialize(
		        &ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE))
			return al_error_set(AL_ENOMEM,
			                    "cannot emit YAML: out of memory");
		if ((rc = emit(e, &ev, c)) < 0)
			return rc;
		json_array_foreach(v, i, child)
		{
			if ((rc = emit_value(e, c, child, depth + 1)) < 0)
				return rc;
		}
		yaml_sequence_end_event_initialize(&ev);
		return emit(e, &ev, c);
	case JSON_STRING:
		return emit_scalar(
		    e, c, json_string_value(v), json_string_length(v),
		    needs_quotes(json_string_value(v), json_string_length(v)));
	case JSON_INTEGER:
		n = snprintf(tmp, sizeof(tmp), "%" JSON_INTEGER_FORMAT,
		             json_integer_value(v));
		if (n < 0 || (size_t)n >= sizeof(tmp))
			return al_error_set(
			    AL_EINVAL,
			    "cannot emit YAML: number formatting failed");
		return emit_scalar(e, c, tmp, (size_t)n, 0);
	case JSON_REAL:
		return emit_real(e, c, json_real_value(v));
	case JSON_TRUE:
		return emit_scalar(e, c, "true", 4, 0);
	case JSON_FALSE:
		return emit_scalar(e, c, "false", 5, 0);
	case JSON_NULL:
		return emit_scalar(e, c, "null", 4, 0);
	}
	return al_error_set(AL_EINVAL, "cannot emit YAML: unknown JSON type");
}

/*
 * Append the YAML stream of docs to out (see yaml_int.h): AL_ELIMIT when out
 * would pass its maximum, AL_EINVAL for values YAML cannot carry here
 * (non-finite reals, nesting past AL_YAML_MAX_DEPTH). On failure out may
 * hold a partial stream.
 */
int al_yaml_emit_json(al_buf *out, json_t *const *docs, size_t ndocs)
{
	yaml_emitter_t e;
	yaml_event_t ev;
	emit_ctx c = {out, 0};
	size_t i;
	int rc = 0;

	if (!yaml_emitter_initialize(&e))
		return al_error_set(AL_ENOMEM,
		                    "cannot initialise the YAML emitter");
	yaml_emitter_set_output(&e, write_handler, &c);
	yaml_emitter_set_unicode(&e, 1);
	yaml_emitter_set_width(&e, -1);
	yaml_emitter_set_indent(&e, 2);
	yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
	if ((rc = emit(&e, &ev, &c)) < 0)
		goto out;
	for (i = 0; i < ndocs; i++) {
		if (docs[i] == NULL) {
			rc = al_error_set(
			    AL_EINVAL, "cannot emit YAML: document %zu is NULL",
			    i);
			goto out;
		}
		yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
		if ((rc = emit(&e, &ev, &c)) < 0)
			goto out;
		if ((rc = emit_value(&e, &c, docs[i], 1)) < 0)
			goto out;
		yaml_document_end_event_initialize(&ev, 1);
		if ((rc = emit(&e, &ev, &c)) < 0)
			goto out;
	}
	yaml_stream_end_event_initialize(&ev);
	if ((rc = emit(&e, &ev, &c)) < 0)
		goto out;
	if (!yaml_emitter_flush(&e))
		rc = c.rc < 0 ? c.rc
		              : al_error_set(AL_EIO,
		                             "cannot flush the YAML emitter");
out:
	yaml_emitter_delete(&e);
	return rc;
}
