/* catalog_select.c: one mirror.operators[] entry end to end on a store:
 * names, read, filter, rebuild, images (shared by the commands). */
#include <stdlib.h>
#include <string.h>

#include "airlock/error.h"
#include "airlock/ref.h"
#include "catalog_int.h"

/* A valid lowercase repository component from the layout directory. */
static char *repo_from_dir(const char *path)
{
	const char *b = strrchr(path, '/');
	char *r;
	size_t i, w = 0;

	b = b != NULL ? b + 1 : path;
	r = al_strdup(b);
	if (r == NULL)
		return NULL;
	for (i = 0; r[i] != '\0'; i++) {
		char ch = r[i];

		if (ch >= 'A' && ch <= 'Z')
			ch = (char)(ch - 'A' + 'a');
		if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9'))
			r[w++] = ch;
		else if (w > 0 && r[w - 1] != '-')
			r[w++] = '-';
	}
	while (w > 0 && r[w - 1] == '-')
		w--;
	r[w] = '\0';
	return r;
}

/*
 * oci:DIR[:NAME]: the catalog is copied from the layout into the store as
 * localhost/(targetCatalog|DIR's base name):(targetTag|NAME|latest), the
 * name the rebuilt catalog then takes too ('airlock push' drops the
 * "localhost" registry, as for any store image).
 */
static int oci_names(const al_imageset_operator *op, char **source_name,
                     char **target_name, char **target_repo)
{
	al_imgref ir;
	al_ref check;
	char *repo = NULL, *name = NULL;
	const char *tag;
	int rc = 0;

	memset(&ir, 0, sizeof(ir));
	memset(&check, 0, sizeof(check));
	if ((rc = al_imgref_parse(&ir, op->catalog)) < 0)
		return al_error_wrap(rc, "catalog '%s'", op->catalog);
	repo = op->target_catalog != NULL ? al_strdup(op->target_catalog)
	                                  : repo_from_dir(ir.path);
	if (op->target_tag != NULL)
		tag = op->target_tag;
	else if (ir.name != NULL && strchr(ir.name, '/') == NULL &&
	         strchr(ir.name, ':') == NULL && strchr(ir.name, '@') == NULL)
		tag = ir.name;
	else
		tag = "latest";
	name = repo != NULL ? al_sprintf("localhost/%s:%s", repo, tag) : NULL;
	if (name == NULL) {
		rc = al_error_oom();
		goto out;
	}
	if (repo[0] == '\0' || al_ref_parse(&check, name) < 0) {
		rc = al_error_set(AL_EINVAL,
		                  "catalog '%s': '%s' is not a valid image "
		                  "name: give targetCatalog and targetTag",
		                  op->catalog, name);
		goto out;
	}
	*target_name = al_strdup(name);
	if (*target_name == NULL) {
		rc = al_error_oom();
		goto out;
	}
	*source_name = name;
	*target_repo = repo;
	name = repo = NULL;
out:
	al_ref_clear(&check);
	al_imgref_clear(&ir);
	free(repo);
	free(name);
	return rc;
}

int al_catalog_names(const al_imageset_operator *op, char **source_name,
                     char **target_name, char **target_repo)
{
	const char *s;
	char *src = NULL, *dst = NULL, *repo = NULL;
	const char *tag;
	al_ref r;
	int rc = 0;

	memset(&r, 0, sizeof(r));
	if (op == NULL || op->catalog == NULL)
		return al_error_set(AL_EINVAL, "no catalog");
	s = op->catalog;
	if (al_str_startswith(s, "oci:"))
		return oci_names(op, source_name, target_name, target_repo);
	if (al_str_startswith(s, "docker://"))
		s += strlen("docker://");
	if ((rc = al_ref_parse(&r, s)) < 0)
		return al_error_wrap(rc, "catalog '%s'", op->catalog);
	tag = op->target_tag != NULL ? op->target_tag : r.tag;
	if (tag == NULL && r.digest == NULL)
		tag = "latest";
	/* pinned by digest, no targetTag: the digest's hex is the tag, as
	 * oc-mirror's destination for such a catalog in its own tests
	 * (clusterresources_test.go listCatalogDigestAsTag), so that the
	 * CatalogSource is cs-REPO-<12 hex> (al_catalog_resource_name) */
	if (tag == NULL && (tag = strchr(r.digest, ':')) != NULL)
		tag++;
	if (tag == NULL || tag[0] == '\0') {
		rc = al_error_set(AL_EPARSE, "catalog '%s': no tag or digest",
		                  op->catalog);
		goto out;
	}
	src = al_ref_string(&r);
	repo = al_strdup(op->target_catalog != NULL ? op->target_catalog
	                                            : r.repository);
	dst =
	    repo != NULL ? al_sprintf("%s/%s:%s", r.registry, repo, tag) : NULL;
	if (src == NULL || repo == NULL || dst == NULL) {
		rc = al_error_oom();
		goto out;
	}
	*source_name = src;
	*target_name = dst;
	*target_repo = repo;
	src = dst = repo = NULL;
out:
	free(src);
	free(dst);
	free(repo);
	al_ref_clear(&r);
	return rc;
}

void al_catalog_selection_free(al_catalog_selection *sel)
{
	if (sel == NULL)
		return;
	free(sel->source_name);
	free(sel->target_name);
	free(sel->target_repo);
	al_catalog_free(sel->filtered);
	al_descriptor_clear(&sel->rebuilt);
	al_catalog_images_free(sel->images, sel->nimages);
	free(sel);
}

/* The entry's configuration as the library's filter; the arrays borrow
 * op's strings and are freed by the caller (pfs, then each cfs[i]). */
static int make_filter(const al_imageset_operator *op, al_catalog_filter *f,
                       al_catalog_package_filter **pfs,
                       al_catalog_channel_filter ***cfs)
{
	size_t i, j;

	memset(f, 0, sizeof(*f));
	*pfs = calloc(op->npackages + 1, sizeof(**pfs));
	*cfs = calloc(op->npackages + 1, sizeof(**cfs));
	if (*pfs == NULL || *cfs == NULL)
		return al_error_oom();
	for (i = 0; i < op->npackages; i++) {
		const al_imageset_op_package *p = &op->packages[i];
		al_catalog_package_filter *pf = &(*pfs)[i];

		(*cfs)[i] = calloc(p->nchannels + 1, sizeof(***cfs));
		if ((*cfs)[i] == NULL)
			return al_error_oom();
		for (j = 0; j < p->nchannels; j++) {
			(*cfs)[i][j].name = p->channels[j].name;
			(*cfs)[i][j].min_version = p->channels[j].min_version;
			(*cfs)[i][j].max_version = p->channels[j].max_version;
		}
		pf->name = p->name;
		pf->default_channel = p->default_channel;
		pf->min_version = p->min_version;
		pf->max_version = p->max_version;
		pf->channels = (*cfs)[i];
		pf->nchannels = p->nchannels;
		pf->bundles = (const char *const *)p->bundles;
		pf->nbundles = p->nbundles;
	}
	f->packages = *pfs;
	f->npackages = op->npackages;
	f->full = op->full;
	f->skip_dependencies = op->skip_dependencies;
	return 0;
}

/* al_catalog_select on the catalog image whose manifest is at (NULL:
 * found by name in s). */
static int select_at(al_catalog_selection **out, al_store *s,
                     const al_imageset_operator *op, const al_digest *at,
                     const char *platform, int rebuild);

int al_catalog_select(al_catalog_selection **out, al_store *s,
                      const al_imageset_operator *op, const char *platform,
                      int rebuild)
{
	return select_at(out, s, op, NULL, platform, rebuild);
}

int al_catalog__select_digest(al_catalog_selection **out, al_store *s,
                              const al_imageset_operator *op,
                              const al_digest *d, const char *platform)
{
	if (d == NULL)
		return al_error_set(AL_EINVAL, "no catalog digest");
	return select_at(out, s, op, d, platform, 0);
}

static int select_at(al_catalog_selection **out, al_store *s,
                     const al_imageset_operator *op, const al_digest *at,
                     const char *platform, int rebuild)
{
	al_catalog_selection *sel = NULL;
	al_catalog_package_filter *pfs = NULL;
	al_catalog_channel_filter **cfs = NULL;
	al_catalog *c = NULL;
	al_catalog_filter f;
	al_store_image img;
	size_t i;
	int rc;

	memset(&img, 0, sizeof(img));
	if (out == NULL || s == NULL || op == NULL)
		return al_error_set(AL_EINVAL, "no store or entry");
	sel = calloc(1, sizeof(*sel));
	if (sel == NULL)
		return al_error_oom();
	if ((rc = al_catalog_names(op, &sel->source_name, &sel->target_name,
	                           &sel->target_repo)) < 0)
		goto out;
	if (at != NULL) {
		img.desc.digest = *at;
	} else if ((rc = al_store_find(s, sel->source_name, &img)) < 0 &&
	           (rc = al_store_find(s, op->catalog, &img)) < 0) {
		rc = al_error_set(AL_ENOTFOUND,
		                  "catalog '%s' is not in the store '%s': "
		                  "mirror or copy it first",
		                  sel->source_name, al_store_path(s));
		goto out;
	}
	if ((rc = al_catalog_open_image(&c, NULL, s, &img.desc.digest,
	                                platform)) < 0) {
		rc = al_error_wrap(rc, "catalog '%s'", sel->source_name);
		goto out;
	}
	if ((rc = make_filter(op, &f, &pfs, &cfs)) < 0)
		goto out;
	if ((rc = al_catalog_filter_apply(&sel->filtered, c, &f)) < 0) {
		rc = al_error_wrap(rc, "catalog '%s'", sel->source_name);
		goto out;
	}
	if ((rc = al_catalog_images(sel->filtered, &sel->images,
	                            &sel->nimages)) < 0)
		goto out;
	if (rebuild && (rc = al_catalog_rebuild(s, &img.desc.digest, platform,
	                                        sel->filtered, sel->target_name,
	                                        &sel->rebuilt)) < 0) {
		rc = al_error_wrap(rc, "rebuilding catalog '%s'",
		                   sel->source_name);
		goto out;
	}
	*out = sel;
	sel = NULL;
out:
	for (i = 0; cfs != NULL && i < op->npackages; i++)
		free(cfs[i]);
	free(cfs);
	free(pfs);
	al_store_image_clear(&img);
	al_catalog_free(c);
	al_catalog_selection_free(sel);
	return rc;
}
