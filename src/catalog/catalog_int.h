/* catalog_int.h: the catalog module's private model, shared by catalog*.c. */
#ifndef AIRLOCK_CATALOG_INT_H
#define AIRLOCK_CATALOG_INT_H

#include <jansson.h>

#include "airlock/catalog.h"
#include "version_int.h"

/* A semantic version (version_int.h); pre borrows from the string it was
 * parsed from. */
typedef al_semver cat_semver;

enum cat_op { OP_EQ, OP_NE, OP_GT, OP_GE, OP_LT, OP_LE };

struct cat_cmp {
	enum cat_op op;
	cat_semver v;
};

/* OR of ANDs of comparators. */
typedef struct cat_range {
	char *text; /* owns the bytes the versions borrow */
	struct cat_cmp *cmps;
	size_t ncmps;
	size_t *group_end; /* cmps[group_end[i-1] .. group_end[i]) */
	size_t ngroups;
	int prerelease_strict; /* Masterminds: a prerelease version only
	                        * satisfies comparators with a prerelease */
} cat_range;

int cat_semver_parse(cat_semver *out, const char *s, size_t n, int tolerant);
int cat_semver_cmp(const cat_semver *a, const cat_semver *b);
/* blang/semver range syntax. */
int cat_range_parse(cat_range *out, const char *s);
/* ">=min <=max" (either may be NULL), tolerant versions, Masterminds
 * prerelease rule. */
int cat_range_minmax(cat_range *out, const char *min, const char *max);
int cat_range_match(const cat_range *r, const cat_semver *v);
void cat_range_clear(cat_range *r);

struct cat_entry {
	const char *name; /* borrowed from the channel object */
	const char *replaces;
	json_t *skips; /* array of strings or NULL */
	const char *skip_range;
	cat_range range; /* parsed skip_range (ncmps 0 when none) */
	int has_range;
	long bundle; /* index in the package's bundles */
};

struct cat_channel {
	const char *name;
	json_t *obj;
	struct cat_entry *entries;
	size_t nentries;
	size_t *byname; /* entry indexes sorted by name */
	long head;      /* entry index */
};

struct cat_gvk {
	const char *group, *version, *kind;
};

struct cat_pkgreq {
	const char *package;
	const char *range_text;
	cat_range range;
};

struct cat_bundle {
	const char *name;
	const char *image; /* "" when absent */
	json_t *obj;
	cat_semver ver;
	const char *version; /* text */
	struct cat_gvk *gvks, *gvkreqs;
	size_t ngvks, ngvkreqs;
	struct cat_pkgreq *pkgreqs;
	size_t npkgreqs;
};

struct cat_package {
	const char *name;
	json_t *obj;
	const char *default_channel;
	struct cat_channel *channels;
	size_t nchannels;
	struct cat_bundle *bundles; /* sorted by name */
	size_t nbundles;
	json_t *deprecations; /* the olm.deprecations object or NULL */
	json_t *others;       /* array */
};

/*
 * The scratch file of a catalog read from an image (catalog_spool.c): its
 * large FBC files until they are parsed, and the values of its bundles'
 * olm.bundle.object and olm.csv.metadata properties, which nothing here
 * reads and which are most of a real catalog's bytes. A spilled value is
 * replaced in the tree by a token that only cat_spool_restore
 * recognises; rendering puts the value back (catalog.c). Shared by the
 * catalogs filtered from the one read (reference counted; one thread).
 */
struct cat_spool;
int cat_spool_new(struct cat_spool **out, const char *dir);
struct cat_spool *cat_spool_ref(struct cat_spool *sp);
void cat_spool_unref(struct cat_spool *sp);
int cat_spool_put(struct cat_spool *sp, const void *p, size_t n, uint64_t *off);
int cat_spool_read(struct cat_spool *sp, uint64_t off, size_t n, uint8_t *dst);
/* Write value to the file; *token (a new reference) takes its place. */
int cat_spool_spill(struct cat_spool *sp, json_t *value, json_t **token);
/* 1 and *out (a new reference) the value v stands for when v is a
 * token of sp; 0 when it is not; < 0 on error. */
int cat_spool_restore(struct cat_spool *sp, const json_t *v, json_t **out);

struct al_catalog {
	/* raw objects by schema until finish */
	json_t *raw_packages, *raw_channels, *raw_bundles, *raw_deprecations,
	    *raw_others;
	size_t nobjects;
	uint64_t total;
	size_t nfiles;
	int finished;
	struct cat_package *packages; /* sorted by name */
	size_t npackages;
	size_t nbundles;
	json_t *global;          /* objects without a package */
	json_t *unresolved_list; /* filter: dependencies not found */
	struct cat_spool *spool; /* NULL: every value stays in memory */
};

/* al_catalog_add_file for a file waiting in the scratch file sp at off:
 * a JSON stream is read an object at a time. */
int cat_add_spooled_file(al_catalog *c, const char *path, struct cat_spool *sp,
                         uint64_t off, size_t n);

/* Spill the bulky values of the bundles added from now on to sp (a
 * reference is taken). */
void cat_use_spool(al_catalog *c, struct cat_spool *sp);

/* Add one object (a reference is taken) as if read from a file. */
int cat_add_object(al_catalog *c, json_t *obj, const char *where);
long cat_find_package(const al_catalog *c, const char *name);
long cat_find_bundle(const struct cat_package *p, const char *name);
long cat_find_entry(const struct cat_channel *ch, const char *name);
long cat_find_channel(const struct cat_package *p, const char *name);

/*
 * al_catalog_select (no rebuild) on the catalog image whose top manifest
 * d is in s, named or not (mirror --dry-run holds the catalog images it
 * fetched without naming them: src/mirror/mirror_plan.c).
 */
int al_catalog__select_digest(al_catalog_selection **out, al_store *s,
                              const al_imageset_operator *op,
                              const al_digest *d, const char *platform);

#endif
