/* cli_resources.c: the destination of a push, checked and recorded, and the
 * cluster resources written from it (mirrorsets, push and mirror
 * --cluster-resources). */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cli_resources.h"
#include "cli_resources_osus.h"

#define CR_MAX_OUTPUT (256 * AL_MIB)

int cli_check_registry_opt(const char *cmd, const char *opt, const char *value)
{
	char *host = NULL, *prefix = NULL;
	int rc;

	if (value == NULL)
		return EXIT_OK;
	rc = cli_dest_parse(value, &host, &prefix);
	free(host);
	free(prefix);
	if (rc == -1)
		return cli_usage_error(cmd, "%s '%s' has no host", opt, value);
	if (rc < 0)
		return cli_usage_error(
		    cmd,
		    "%s '%s' is not a mirror location the cluster accepts: "
		    "HOST[:PORT][/PATH] with a lower-case PATH of letters, "
		    "digits and single '.', '_', '__' or '-' separators (the "
		    "ImageDigestMirrorSet CRD pattern)",
		    opt, value);
	return EXIT_OK;
}

/* 0 when path is a directory this process may write into, else errno
 * (ENOTDIR for another kind of file). */
static int writable_dir(const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0)
		/* a file on the way: this path does not exist either */
		return errno == ENOTDIR ? ENOENT : errno != 0 ? errno : EIO;
	if (!S_ISDIR(st.st_mode))
		return ENOTDIR;
	if (access(path, W_OK | X_OK) != 0)
		return errno != 0 ? errno : EACCES;
	return 0;
}

int cli_check_out_dir(const char *cmd, const char *opt, const char *dir)
{
	char *p;
	size_t n;
	int err;

	if (dir == NULL)
		return EXIT_OK;
	if (dir[0] == '\0')
		return cli_usage_error(cmd, "%s takes a directory, not ''",
		                       opt);
	if ((err = writable_dir(dir)) == 0)
		return EXIT_OK;
	if (err != ENOENT)
		return cli_usage_error(cmd, "%s '%s': %s", opt, dir,
		                       err == ENOTDIR ? "not a directory"
		                                      : strerror(err));
	/* to be created: its nearest existing ancestor must be a directory
	 * this process may write into */
	if ((p = al_strdup(dir)) == NULL)
		return cli_fail(AL_ENOMEM, "out of memory");
	for (;;) {
		n = strlen(p);
		while (n > 1 && p[n - 1] == '/')
			p[--n] = '\0';
		while (n > 0 && p[n - 1] != '/')
			p[--n] = '\0';
		while (n > 1 && p[n - 1] == '/')
			p[--n] = '\0';
		err = writable_dir(n > 0 ? p : ".");
		/* "." and "/" end the walk */
		if (err != ENOENT || n == 0 || (n == 1 && p[0] == '/'))
			break;
	}
	if (err != 0) {
		int code = cli_usage_error(
		    cmd, "%s '%s' cannot be created: '%s': %s", opt, dir,
		    n > 0 ? p : ".",
		    err == ENOTDIR ? "not a directory" : strerror(err));
		free(p);
		return code;
	}
	free(p);
	return EXIT_OK;
}

int cli_mirror_check_outputs(const char *cr_dir, const char *cr_registry,
                             const char *dry_run_dir)
{
	int code;

	if ((code = cli_check_registry_opt("mirror", "--registry",
	                                   cr_registry)) != EXIT_OK ||
	    (code = cli_check_out_dir("mirror", "--cluster-resources",
	                              cr_dir)) != EXIT_OK ||
	    (code = cli_check_out_dir("mirror", "--dry-run", dry_run_dir)) !=
	        EXIT_OK)
		return code;
	return EXIT_OK;
}

int cli_parse_layout(const char *cmd, const char *value, al_layout_kind *out)
{
	if (value == NULL) {
		*out = AL_LAYOUT_OC_MIRROR;
		return EXIT_OK;
	}
	if (al_layout_parse(value, out) < 0)
		return cli_usage_error(
		    cmd,
		    "--layout takes 'oc-mirror' or 'source', "
		    "not '%s'",
		    value);
	return EXIT_OK;
}

/* "N" from 1 to 32 (path depths registries allow are small). */
int cli_parse_nested(const char *arg, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (*arg < '0' || *arg > '9' || *end != '\0' || errno != 0 || v < 1 ||
	    v > 32)
		return -1;
	*out = (unsigned)v;
	return 0;
}

int cli_dest_parse(const char *s, char **host, char **prefix)
{
	const char *p = s, *slash;
	char *h = NULL, *pf = NULL, *loc = NULL;
	size_t n;
	int ok;

	if (al_str_startswith(p, "docker://"))
		p += strlen("docker://");
	if (*p == '\0' || *p == '/')
		return -1;
	slash = strchr(p, '/');
	h = slash != NULL ? al_strndup(p, (size_t)(slash - p)) : al_strdup(p);
	pf = al_strdup(slash != NULL ? slash + 1 : "");
	if (h == NULL || pf == NULL) {
		free(h);
		free(pf);
		return -1;
	}
	n = strlen(pf);
	while (n > 0 && pf[n - 1] == '/')
		pf[--n] = '\0';
	/* what the cluster's IDMS/ITMS schema accepts as a mirror */
	loc = pf[0] != '\0' ? al_sprintf("%s/%s", h, pf) : al_strdup(h);
	ok = loc != NULL && al_kres_location_valid(loc, 0);
	free(loc);
	if (!ok) {
		free(h);
		free(pf);
		return -2;
	}
	*host = h;
	*prefix = pf;
	return 0;
}

/* One source repository per store image, mapped where push put it. */
typedef struct maps {
	al_mirror_map *m;
	const char **cat; /* oc-mirror's category of each map */
	char **strs;
	/* each map's mirror before scope_map: an image's places in one
	 * repository are one map */
	char **unscoped;
	size_t n;
	al_layout_kind layout;
} maps;

static void maps_free(maps *ms)
{
	size_t i;

	if (ms->strs != NULL)
		for (i = 0; i < 2 * ms->n; i++)
			free(ms->strs[i]);
	if (ms->unscoped != NULL)
		for (i = 0; i < ms->n; i++)
			free(ms->unscoped[i]);
	free(ms->strs);
	free(ms->unscoped);
	free(ms->m);
	free(ms->cat);
	memset(ms, 0, sizeof(*ms));
}

/* Add the ConfigMap of one release to cms; *code set when it was not
 * (EXIT_VERIFY: no signatures). Layout source; also cmd_configmaps.c's. */
void cli_release_configmap(al_store *s, const al_store_release *rel,
                           al_kres_configmaps *cms, int strict, int *code)
{
	const char *version = rel->version, *ds = rel->digest_text;
	const char *label = version != NULL ? version : (ds != NULL ? ds : "?");
	al_sig_list sigs = AL_SIG_LIST_INIT;
	const uint8_t **ptrs = NULL;
	size_t *lens = NULL, i, untrusted = 0;
	al_digest d;
	int rc;

	if (!rel->has_digest) {
		cli_error("release '%s' in releases.json has no valid digest",
		          label);
		*code = EXIT_RUNTIME;
		return;
	}
	d = rel->digest;
	if ((rc = al_sig_store_load_trusted(s, &d, &sigs, &untrusted)) < 0) {
		*code = cli_fail(
		    rc, "release %s %s: cannot read its signatures", label, ds);
		goto out;
	}
	if (untrusted > 0)
		cli_warn("release %s %s: %zu signature(s) written by an "
		         "untrusted import left out (airlock check lists them)",
		         label, ds, untrusted);
	if (sigs.n == 0) {
		if (strict)
			cli_error("release %s %s: no signatures in the store",
			          label, ds);
		*code = EXIT_VERIFY;
		goto out;
	}
	ptrs = calloc(sigs.n, sizeof(*ptrs));
	lens = calloc(sigs.n, sizeof(*lens));
	if (ptrs == NULL || lens == NULL) {
		cli_error("out of memory");
		*code = EXIT_RUNTIME;
		goto out;
	}
	for (i = 0; i < sigs.n; i++) {
		ptrs[i] = sigs.items[i].data;
		lens[i] = sigs.items[i].len;
	}
	if ((rc = al_kres_configmaps_add(cms, &d, ptrs, lens, sigs.n)) < 0)
		*code = cli_fail(rc, "release %s %s", label, ds);
out:
	free(ptrs);
	free(lens);
	al_sig_list_clear(&sigs);
}

/* oc-mirror's scope (attemptNamespaceScope) of map k, in place. */
static int scope_map(maps *ms, size_t k)
{
	char *a = NULL, *b = NULL;
	int rc;

	if ((rc = al_layout_scope(ms->strs[2 * k], ms->strs[2 * k + 1], 0, &a,
	                          &b)) < 0)
		return rc;
	free(ms->strs[2 * k]);
	free(ms->strs[2 * k + 1]);
	ms->strs[2 * k] = a;
	ms->strs[2 * k + 1] = b;
	ms->m[k].source = a;
	ms->m[k].mirror = b;
	return 0;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The names an untrusted import set that still apply (tags and names by
 * digest, al_store_untrusted_list), sorted, borrowed from *v. */
static int marked_names(al_store *store, al_store_untrusted **v, size_t *nv,
                        const char ***out, size_t *n)
{
	size_t i, m = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = al_store_untrusted_list(store, v, nv)) < 0)
		return rc;
	if ((*out = calloc(*nv + 1, sizeof(**out))) == NULL)
		return al_error_oom();
	for (i = 0; i < *nv; i++)
		if ((*v)[i].kind == AL_STORE_UNTRUSTED_TAG &&
		    (*v)[i].name != NULL)
			(*out)[m++] = (*v)[i].name;
	qsort(*out, m, sizeof(**out), cmp_name);
	*n = m;
	return 0;
}

/*
 * The maps of one store image, named name and read as r (its origin when
 * it has one), in category cat: one per place push gives it (a component
 * two releases share: tags of one repository, one map), first to last;
 * on the oc-mirror layout scoped as oc-mirror scopes them. EXIT_OK, or the
 * exit code of a failure (reported).
 */
static int map_places(maps *ms, al_layout *l, const char *name, const al_ref *r,
                      al_layout_category cat, const char *dest,
                      unsigned max_nested)
{
	size_t p, np = al_push_target_count(l, name), first = ms->n;
	char *tref = NULL;
	int rc;

	for (p = 0; p < np; p++) {
		size_t k = ms->n, j;
		char *src = al_ref_name(r), *dst = NULL;
		int dup = 0;

		/* where push puts it: the one mapping */
		if (src == NULL ||
		    (rc = cli_cr_target_at(l, name, p, dest, max_nested, &dst,
		                           &tref)) < 0) {
			int e = src == NULL ? AL_ENOMEM : rc;

			free(src);
			return cli_fail(e, "cannot map '%s'", name);
		}
		free(tref);
		tref = NULL;
		for (j = first; j < k && !dup; j++)
			dup = strcmp(ms->unscoped[j], dst) == 0;
		if (dup) {
			free(src);
			free(dst);
			continue;
		}
		ms->strs[2 * k] = src;
		ms->strs[2 * k + 1] = dst;
		if ((ms->unscoped[k] = al_strdup(dst)) == NULL) {
			ms->n++;
			return cli_fail(AL_ENOMEM, "out of memory");
		}
		ms->m[k].source = ms->strs[2 * k];
		ms->m[k].mirror = ms->strs[2 * k + 1];
		/* clusters pull even tag-mirrored images (release
		 * images above all) by digest: every source gets a
		 * digest mirror, tag-referenced ones a tag mirror
		 * too */
		ms->m[k].by_digest = 1;
		ms->m[k].by_tag = r->digest == NULL;
		ms->cat[k] = al_layout_category_name(cat);
		if (ms->layout == AL_LAYOUT_OC_MIRROR) {
			/* generateImageMirrors: digest-only images
			 * in the IDMS alone, tag-only ones in the
			 * ITMS alone, a release image (CLID-205) and
			 * an image by tag and digest (OCPBUGS-85331)
			 * in both */
			ms->m[k].by_digest =
			    r->digest != NULL || cat == AL_LAYOUT_RELEASE;
			ms->m[k].by_tag = r->tag != NULL || r->digest == NULL;
		}
		ms->n++;
		if (ms->layout == AL_LAYOUT_OC_MIRROR &&
		    (rc = scope_map(ms, k)) < 0) {
			return cli_fail(rc, "cannot map '%s'", name);
		}
	}
	return EXIT_OK;
}

/* The maps of every store image (with untrusted 0, not those an untrusted
 * import named: push leaves them out, docs/security.md "Marks of
 * untrusted imports"). */
static int maps_build(al_store *store, const char *dest, unsigned max_nested,
                      al_layout_kind layout, int untrusted, maps *ms)
{
	al_store_untrusted *uv = NULL;
	const char **marked = NULL;
	size_t nuv = 0, nmarked = 0;
	al_store_image *imgs = NULL;
	al_layout *l = NULL;
	size_t nimgs = 0, i, total = 0;
	int rc, code = EXIT_OK;

	memset(ms, 0, sizeof(*ms));
	ms->layout = layout;
	if ((rc = al_store_list(store, &imgs, &nimgs)) < 0)
		return cli_fail(rc, "cannot read store '%s'",
		                al_store_path(store));
	if ((rc = al_layout_open(&l, store, layout)) < 0) {
		al_store_images_free(imgs, nimgs);
		return cli_fail(rc, "cannot read the records of store '%s'",
		                al_store_path(store));
	}
	if (!untrusted &&
	    (rc = marked_names(store, &uv, &nuv, &marked, &nmarked)) < 0) {
		code = cli_fail(rc,
		                "cannot read the untrusted marks of "
		                "store '%s'",
		                al_store_path(store));
		goto out;
	}
	/* one map per place push gives an image in a repository of its
	 * own (al_push_target_count): the places of a component two
	 * releases share are tags of one repository, one map */
	for (i = 0; i < nimgs; i++)
		total += al_push_target_count(l, imgs[i].name);
	ms->m = calloc(total + 1, sizeof(*ms->m));
	ms->cat = calloc(total + 1, sizeof(*ms->cat));
	ms->strs = calloc(2 * total + 1, sizeof(*ms->strs));
	ms->unscoped = calloc(total + 1, sizeof(*ms->unscoped));
	if (ms->m == NULL || ms->cat == NULL || ms->strs == NULL ||
	    ms->unscoped == NULL) {
		code = cli_fail(AL_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < nimgs; i++) {
		al_ref r = {0};
		char *origin = NULL;
		al_layout_category cat = al_layout_category_of(l, imgs[i].name);
		const char *key = imgs[i].name;

		if (nmarked > 0 && bsearch(&key, marked, nmarked,
		                           sizeof(*marked), cmp_name) != NULL)
			continue; /* not pushed */
		if (al_ref_parse(&r, imgs[i].name) < 0)
			continue; /* not a docker reference: nothing to
			             redirect */
		/* the graph-data image has no source to redirect: the
		 * UpdateService names it where it was pushed (oc-mirror
		 * leaves it out of the IDMS too) */
		if (strcmp(imgs[i].name, AL_GRAPH_IMAGE_NAME) == 0) {
			al_ref_clear(&r);
			continue;
		}
		/* oc-mirror: a catalog is reached through its CatalogSource,
		 * never through a mirror set (generateImageMirrors) */
		if (layout == AL_LAYOUT_OC_MIRROR && cat == AL_LAYOUT_CATALOG) {
			al_ref_clear(&r);
			continue;
		}
		/* stored under a target name (targetRepo/targetTag, an
		 * oc-mirror archive's cache name): the cluster asks for the
		 * reference it came from */
		if (imgs[i].name[0] != '\0' &&
		    al_store_origin(store, imgs[i].name, &origin) == 1) {
			al_ref o = {0};
			if (al_ref_parse(&o, origin) == 0) {
				al_ref_clear(&r);
				r = o;
			}
		}
		free(origin);
		code =
		    map_places(ms, l, imgs[i].name, &r, cat, dest, max_nested);
		if (code != EXIT_OK) {
			al_ref_clear(&r);
			goto out;
		}
		al_ref_clear(&r);
	}
out:
	free(marked);
	al_store_untrusted_free(uv, nuv);
	al_layout_free(l);
	al_store_images_free(imgs, nimgs);
	if (code != EXIT_OK)
		maps_free(ms);
	return code;
}

enum { EMIT_SETS, EMIT_IDMS, EMIT_ITMS, EMIT_ICSP };

static int emit(const maps *ms, const char *name, int mode, al_buf *out)
{
	al_mirror_map *m = NULL;
	size_t i;
	int rc;

	if (ms->layout == AL_LAYOUT_OC_MIRROR && mode != EMIT_ICSP) {
		char *now = al_clock_rfc3339_now();

		if (now == NULL)
			return cli_fail(AL_ENOMEM, "out of memory");
		/* oc-mirror's objects per category (kres_ocmirror.c) */
		rc = 0;
		if (mode == EMIT_SETS || mode == EMIT_IDMS)
			rc = al_kres_mirrorsets_ocmirror(out, ms->m, ms->cat,
			                                 ms->n, 0, now);
		if (rc == 0 && (mode == EMIT_SETS || mode == EMIT_ITMS))
			rc = al_kres_mirrorsets_ocmirror(out, ms->m, ms->cat,
			                                 ms->n, 1, now);
		free(now);
		if (rc == AL_EINVAL) {
			cli_fail(rc, "cannot write mirror sets");
			return EXIT_USAGE;
		}
		return rc < 0 ? cli_fail(rc, "cannot write mirror sets")
		              : EXIT_OK;
	}
	if (ms->n > 0 && (m = calloc(ms->n, sizeof(*m))) == NULL)
		return cli_fail(AL_ENOMEM, "out of memory");
	for (i = 0; i < ms->n; i++) {
		m[i] = ms->m[i];
		if (mode == EMIT_IDMS || mode == EMIT_ICSP)
			m[i].by_tag = 0;
		if (mode == EMIT_ITMS)
			m[i].by_digest = 0;
	}
	rc = al_kres_mirrorsets(out, m, ms->n, name,
	                        mode == EMIT_ICSP ? AL_KRES_ICSP_ONLY : 0);
	free(m);
	if (rc == AL_EINVAL) {
		/* a mapping the cluster would refuse: the destination's
		 * fault, said before anything is written */
		cli_fail(rc, "cannot write mirror sets");
		return EXIT_USAGE;
	}
	if (rc < 0)
		return cli_fail(rc, "cannot write mirror sets");
	return EXIT_OK;
}

int cli_mirror_sets(al_store *store, const char *dest, unsigned max_nested,
                    al_layout_kind layout, const char *name, int untrusted,
                    al_buf *sets, al_buf *icsp)
{
	maps ms;
	int code;

	if ((code = maps_build(store, dest, max_nested, layout, untrusted,
	                       &ms)) != EXIT_OK)
		return code;
	code = emit(&ms, name, EMIT_SETS, sets);
	if (code == EXIT_OK && icsp != NULL)
		code = emit(&ms, name, EMIT_ICSP, icsp);
	maps_free(&ms);
	return code;
}

char *cli_dest_from_record(al_store *store, const char *cmd,
                           unsigned *max_nested, al_layout_kind *layout)
{
	al_store_push p;
	char *dest;
	int rc;

	memset(&p, 0, sizeof(p));
	if ((rc = al_store_push_last(store, &p)) < 0) {
		if (rc == AL_ENOTFOUND)
			cli_error("%s; give --registry HOST[:PORT][/PREFIX] "
			          "(where 'airlock push' put the images)",
			          al_error_message());
		else
			cli_fail(rc, "cannot read the push record");
		return NULL;
	}
	dest = p.prefix != NULL && p.prefix[0] != '\0'
	           ? al_sprintf("%s/%s", p.registry, p.prefix)
	           : al_strdup(p.registry);
	if (dest == NULL) {
		cli_error("out of memory");
	} else {
		*max_nested = p.max_nested_paths;
		*layout =
		    p.source_layout ? AL_LAYOUT_SOURCE : AL_LAYOUT_OC_MIRROR;
		cli_warn("%s: no --registry: using the destination of the "
		         "store's last push, %s (%s)",
		         cmd, dest, p.time != NULL ? p.time : "");
	}
	al_store_push_clear(&p);
	return dest;
}

int cli_ocmirror_configmap(al_store *store, const al_store_release *list,
                           size_t n, const int *want, int strict, al_buf *yaml,
                           al_buf *json)
{
	al_sig_list *sigs = NULL;
	al_digest *ds = NULL;
	const uint8_t **ptrs = NULL;
	size_t *lens = NULL, i, k = 0, left = 0;
	char *now = NULL;
	int rc, code = EXIT_OK;

	sigs = calloc(n + 1, sizeof(*sigs));
	ds = calloc(n + 1, sizeof(*ds));
	ptrs = calloc(n + 1, sizeof(*ptrs));
	lens = calloc(n + 1, sizeof(*lens));
	if (sigs == NULL || ds == NULL || ptrs == NULL || lens == NULL ||
	    (now = al_clock_rfc3339_now()) == NULL) {
		code = cli_fail(AL_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		const char *label =
		    list[i].version != NULL
		        ? list[i].version
		        : (list[i].digest_text != NULL ? list[i].digest_text
		                                       : "?");

		if (want != NULL && !want[i])
			continue;
		if (!list[i].has_digest) {
			if (strict) {
				cli_error("release '%s' in releases.json has "
				          "no valid digest",
				          label);
				code = cli_worst(code, EXIT_RUNTIME);
			}
			continue;
		}
		if ((rc = al_sig_store_load_trusted(store, &list[i].digest,
		                                    &sigs[k], &left)) < 0) {
			code = cli_worst(code, cli_fail(rc,
			                                "release %s: cannot "
			                                "read its signatures",
			                                label));
			al_sig_list_clear(&sigs[k]);
			continue;
		}
		if (left > 0)
			cli_warn("release %s %s: %zu signature(s) written by "
			         "an untrusted import left out (airlock check "
			         "lists them)",
			         label,
			         list[i].digest_text != NULL
			             ? list[i].digest_text
			             : "",
			         left);
		if (sigs[k].n == 0) {
			/* oc-mirror leaves out a release it has no
			 * signature file for */
			if (strict) {
				cli_error("release %s %s: no signatures in "
				          "the store",
				          label,
				          list[i].digest_text != NULL
				              ? list[i].digest_text
				              : "");
				code = cli_worst(code, EXIT_VERIFY);
			}
			continue;
		}
		/* its one signature file per release: the first */
		ds[k] = list[i].digest;
		ptrs[k] = sigs[k].items[0].data;
		lens[k] = sigs[k].items[0].len;
		k++;
	}
	if (k == 0)
		goto out; /* oc-mirror writes no empty ConfigMap */
	if ((yaml != NULL && (rc = al_kres_signatures_ocmirror(
	                          yaml, ds, ptrs, lens, k, 0, now)) < 0) ||
	    (json != NULL &&
	     (rc = al_kres_signatures_ocmirror(json, ds, ptrs, lens, k,
	                                       AL_KRES_JSON, now)) < 0))
		code = cli_worst(code, cli_fail(rc, "cannot write the "
		                                    "ConfigMap"));
out:
	if (sigs != NULL)
		for (i = 0; i < n; i++)
			al_sig_list_clear(&sigs[i]);
	free(sigs);
	free(ds);
	free(ptrs);
	free(lens);
	free(now);
	return code;
}

/* oc-mirror v2's one ConfigMap, signature-configmap.yaml and .json. */
static int write_ocmirror_configmap(al_store *store, const cli_cr_opts *o,
                                    const al_store_release *list, size_t n,
                                    json_t *files)
{
	al_buf y = AL_BUF_INIT(CR_MAX_OUTPUT), j = AL_BUF_INIT(CR_MAX_OUTPUT);
	int code;

	code = cli_ocmirror_configmap(store, list, n, NULL, 0, &y, &j);
	if (y.len > 0)
		code = cli_worst(
		    code,
		    cli_cr_put_file(o, "signature-configmap.yaml", &y, files));
	if (j.len > 0)
		code = cli_worst(
		    code,
		    cli_cr_put_file(o, "signature-configmap.json", &j, files));
	al_buf_free(&y);
	al_buf_free(&j);
	return code;
}

/* The signature ConfigMaps of every release with signatures. */
static int write_configmaps(al_store *store, const cli_cr_opts *o,
                            json_t *files)
{
	al_store_release *list = NULL;
	al_kres_configmaps *cms = NULL;
	size_t n = 0, i, ndocs;
	al_buf b = AL_BUF_INIT(CR_MAX_OUTPUT);
	int rc, code = EXIT_OK;

	if ((rc = al_store_releases_list(store, &list, &n)) < 0)
		return cli_fail(rc, "cannot read the releases of store '%s'",
		                al_store_path(store));
	if (o->layout == AL_LAYOUT_OC_MIRROR) {
		code = write_ocmirror_configmap(store, o, list, n, files);
		goto out;
	}
	if ((rc = al_kres_configmaps_new(&cms)) < 0) {
		code = cli_fail(rc, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		int c = EXIT_OK;

		if (list[i].verified != AL_STORE_VERIFIED &&
		    list[i].verified != AL_STORE_UNVERIFIED)
			continue; /* no signatures were looked for */
		cli_release_configmap(store, &list[i], cms, 0, &c);
		if (c != EXIT_OK && c != EXIT_VERIFY)
			code = cli_worst(code, c);
	}
	ndocs = al_kres_configmaps_count(cms);
	if (o->oc_mirror_names && ndocs > 0) {
		/* oc-mirror's one file of every ConfigMap, YAML and JSON */
		if ((rc = al_kres_configmaps_write(cms, &b, 0)) < 0)
			code = cli_worst(code, cli_fail(rc, "cannot write the "
			                                    "ConfigMaps"));
		else
			code = cli_worst(
			    code, cli_cr_put_file(o, "signature-configmap.yaml",
			                          &b, files));
		al_buf_reset(&b);
		if ((rc = al_kres_configmaps_write(cms, &b, AL_KRES_JSON)) < 0)
			code = cli_worst(code, cli_fail(rc, "cannot write the "
			                                    "ConfigMaps"));
		else
			code = cli_worst(
			    code, cli_cr_put_file(o, "signature-configmap.json",
			                          &b, files));
		goto out;
	}
	for (i = 0; i < ndocs; i++) {
		char *file = al_kres_configmaps_filename(cms, i, 0);

		al_buf_reset(&b);
		if (file == NULL)
			code = cli_worst(code,
			                 cli_fail(AL_ENOMEM, "out of memory"));
		else if ((rc = al_kres_configmaps_write_one(cms, i, &b, 0)) < 0)
			code = cli_worst(code, cli_fail(rc,
			                                "cannot write the "
			                                "ConfigMap '%s'",
			                                file));
		else
			code = cli_worst(code,
			                 cli_cr_put_file(o, file, &b, files));
		free(file);
	}
out:
	al_kres_configmaps_free(cms);
	al_buf_free(&b);
	al_store_releases_free(list, n);
	return code;
}

static int write_mirror_sets(al_store *store, const cli_cr_opts *o,
                             json_t *files)
{
	al_buf b = AL_BUF_INIT(CR_MAX_OUTPUT);
	maps ms;
	int code;

	if ((code = maps_build(store, o->dest, o->max_nested, o->layout,
	                       o->untrusted, &ms)) != EXIT_OK)
		return code;
	if ((code = emit(&ms, "airlock", EMIT_IDMS, &b)) == EXIT_OK &&
	    b.len > 0)
		code =
		    cli_cr_put_file(o,
		                    o->oc_mirror_names ? "idms-oc-mirror.yaml"
		                                       : "idms-airlock.yaml",
		                    &b, files);
	al_buf_reset(&b);
	if (code == EXIT_OK &&
	    (code = emit(&ms, "airlock", EMIT_ITMS, &b)) == EXIT_OK &&
	    b.len > 0)
		code =
		    cli_cr_put_file(o,
		                    o->oc_mirror_names ? "itms-oc-mirror.yaml"
		                                       : "itms-airlock.yaml",
		                    &b, files);
	al_buf_reset(&b);
	if (code == EXIT_OK && o->icsp &&
	    (code = emit(&ms, "airlock", EMIT_ICSP, &b)) == EXIT_OK &&
	    b.len > 0)
		code = cli_cr_put_file(o,
		                       o->oc_mirror_names
		                           ? "imageContentSourcePolicy.yaml"
		                           : "icsp-airlock.yaml",
		                       &b, files);
	maps_free(&ms);
	al_buf_free(&b);
	return code;
}

/* 1 when keep (an array of file names, or NULL) holds name. */
static int kept_name(const json_t *keep, const char *name)
{
	size_t i;

	for (i = 0; i < json_array_size(keep); i++)
		if (strcmp(json_string_value(json_array_get(keep, i)), name) ==
		    0)
			return 1;
	return 0;
}

/* Remove the files of dir (made if missing) but those keep names. */
static int clean_dir(const char *dir, const json_t *keep)
{
	DIR *d;
	struct dirent *e;
	int code = EXIT_OK, rc;

	if ((rc = al_fs_mkdir_p(dir, 0755)) < 0)
		return cli_fail(rc, "cannot create '%s'", dir);
	if ((d = opendir(dir)) == NULL)
		return cli_fail(AL_EIO, "cannot read '%s': %s", dir,
		                strerror(errno));
	while ((e = readdir(d)) != NULL) {
		struct stat st;
		char *p;

		if (strcmp(e->d_name, ".") == 0 ||
		    strcmp(e->d_name, "..") == 0 || kept_name(keep, e->d_name))
			continue;
		if ((p = al_path_join(dir, e->d_name)) == NULL) {
			code = cli_fail(AL_ENOMEM, "out of memory");
			break;
		}
		/* only files: the writers make no directory, and one that
		 * is there is not theirs */
		if (lstat(p, &st) == 0 && !S_ISDIR(st.st_mode) &&
		    unlink(p) != 0 && errno != ENOENT)
			code = cli_worst(
			    code, cli_fail(AL_EIO, "cannot remove '%s': %s", p,
			                   strerror(errno)));
		free(p);
	}
	closedir(d);
	return code;
}

/* The writers of cli_cluster_resources, in order. */
static int write_all(al_store *store, const cli_cr_opts *o, json_t *files)
{
	int code;

	if (o->dest != NULL &&
	    (code = write_mirror_sets(store, o, files)) != EXIT_OK)
		return code;
	/* catalogs and the update service (cli_resources_osus.c) */
	if (o->dest != NULL &&
	    (code = cli_cr_catalogs_osus(store, o, files)) != EXIT_OK)
		return code;
	return write_configmaps(store, o, files);
}

int cli_cluster_resources(al_store *store, const cli_cr_opts *o_in,
                          json_t *files)
{
	cli_cr_opts oc = *o_in;
	int rc, code;

	/* oc-mirror's layout comes with its file names */
	if (oc.layout == AL_LAYOUT_OC_MIRROR)
		oc.oc_mirror_names = 1;
	if ((rc = al_fs_mkdir_p(oc.dir, 0755)) < 0)
		return cli_fail(rc, "cannot create '%s'", oc.dir);
	if (oc.prune && (oc.written = json_array()) == NULL)
		return cli_fail(AL_ENOMEM, "out of memory");
	code = write_all(store, &oc, files);
	/* the files of an earlier run that this one did not write, once it
	 * wrote all of its own: a run cut short leaves the last whole set */
	if (oc.prune && code == EXIT_OK)
		code = clean_dir(oc.dir, oc.written);
	json_decref(oc.written);
	return code;
}

int cli_mirror_cluster_resources(al_store *store, const char *dir,
                                 const char *registry, unsigned max_nested,
                                 al_layout_kind layout, int icsp,
                                 int oc_mirror_names, int quiet, int prune,
                                 json_t *files)
{
	cli_cr_opts co;
	char *host = NULL, *prefix = NULL, *dest = NULL;
	unsigned nested = 0;
	int code, rc;

	memset(&co, 0, sizeof(co));
	if (registry != NULL) {
		rc = cli_dest_parse(registry, &host, &prefix);
		if (rc < 0) {
			cli_error("--registry '%s' is not a mirror location a "
			          "cluster accepts (HOST[:PORT][/PATH], PATH "
			          "lower-case)",
			          registry);
			return EXIT_USAGE;
		}
		dest = prefix[0] != '\0' ? al_sprintf("%s/%s", host, prefix)
		                         : al_strdup(host);
		free(host);
		free(prefix);
		if (dest == NULL)
			return cli_fail(AL_ENOMEM, "out of memory");
		nested = max_nested;
	} else {
		al_store_push p;

		memset(&p, 0, sizeof(p));
		if (al_store_push_last(store, &p) == 0) {
			dest = p.prefix[0] != '\0'
			           ? al_sprintf("%s/%s", p.registry, p.prefix)
			           : al_strdup(p.registry);
			nested = p.max_nested_paths;
			layout = p.source_layout ? AL_LAYOUT_SOURCE
			                         : AL_LAYOUT_OC_MIRROR;
			if (dest != NULL)
				cli_warn("--cluster-resources: mirror sets for "
				         "the store's last push, %s (%s); "
				         "--registry names another",
				         dest, p.time);
		} else {
			cli_warn("--cluster-resources: no --registry and no "
			         "push recorded in the store: only the "
			         "signature ConfigMaps are written (run "
			         "'airlock mirrorsets' after 'airlock push')");
		}
		al_store_push_clear(&p);
	}
	co.dir = dir;
	co.dest = dest;
	co.max_nested = nested;
	co.layout = layout;
	co.icsp = icsp;
	co.oc_mirror_names = oc_mirror_names;
	co.quiet = quiet;
	co.prune = prune;
	code = cli_cluster_resources(store, &co, files);
	free(dest);
	return code;
}

int cli_cr_clean_dir(const char *dir)
{
	return clean_dir(dir, NULL);
}

char *cli_cr_default_dir(al_store *store)
{
	char *dir =
	    al_sprintf("%s/airlock/cluster-resources", al_store_path(store));
	int rc;

	if (dir == NULL) {
		cli_error("out of memory");
		return NULL;
	}
	if ((rc = al_fs_mkdir_p(dir, 0755)) < 0) {
		cli_fail(rc, "cannot create '%s'", dir);
		cli_warn("no cluster resources written (give "
		         "--cluster-resources DIR for another place)");
		free(dir);
		return NULL;
	}
	return dir;
}

int cli_ocm_resources_dest(const char *dest)
{
	char *host = NULL, *prefix = NULL;

	if (cli_dest_parse(dest, &host, &prefix) < 0) {
		cli_warn("'%s' is not a mirror location a cluster accepts "
		         "(HOST[:PORT][/PATH], PATH lower-case): no cluster "
		         "resources written",
		         dest);
		return 0;
	}
	free(host);
	free(prefix);
	return 1;
}
