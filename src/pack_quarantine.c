/* pack_quarantine.c: the quarantine of untrusted imports
 * (STORE/airlock/quarantine/<id>): open, list, promote, drop. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/pack.h"
#include "airlock/store.h"
#include "pack_int.h"

char *al_pack__quarantine_root(al_store *s, const char *id)
{
	return al_sprintf("%s/airlock/quarantine/%s", al_store_path(s), id);
}

int al_pack__quarantine_open(const char *root, al_store **out)
{
	al_store_opts o = AL_STORE_OPTS_INIT;
	char *p;
	int rc;

	o.create = 1;
	if ((rc = al_fs_mkdir_p(root, 0755)) < 0)
		return rc;
	if ((p = al_path_join(root, "store")) == NULL)
		return al_error_oom();
	rc = al_store_open(out, p, &o);
	free(p);
	return rc;
}

static int rm_one(const char *path, const struct stat *st, int flag,
                  struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP ? rmdir(path) : unlink(path))
		return errno != ENOENT ? -1 : 0;
	return 0;
}

int al_pack__rm_tree(const char *path)
{
	/* FTW_PHYS: a link is removed, never followed */
	if (nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS) != 0 &&
	    errno != ENOENT)
		return al_error_errno(errno, "cannot remove '%s'", path);
	return 0;
}

int al_pack__quarantine_remove(const char *root)
{
	const char *slash = strrchr(root, '/');
	char *parent;
	int rc;

	if ((rc = al_pack__rm_tree(root)) < 0)
		return rc;
	/* after the last quarantined pack, STORE/airlock/quarantine too
	 * (rmdir refuses while another is there) */
	if ((parent = al_strndup(root, (size_t)(slash - root))) != NULL)
		rmdir(parent);
	free(parent);
	return 0;
}

/* The root of the quarantined pack id: AL_EINVAL for a malformed id,
 * AL_ENOTFOUND when nothing of it is quarantined. */
static int find_root(al_store *s, const char *id, char **out)
{
	char *root;
	int ex;

	if (id == NULL || !al_pack_id_valid(id))
		return al_error_set(AL_EINVAL, "'%s' is not a pack id",
		                    id != NULL ? id : "");
	if ((root = al_pack__quarantine_root(s, id)) == NULL)
		return al_error_oom();
	if ((ex = al_fs_exists(root)) != 1) {
		free(root);
		return ex < 0
		           ? ex
		           : al_error_set(AL_ENOTFOUND,
		                          "no pack '%s' is quarantined in '%s'",
		                          id, al_store_path(s));
	}
	*out = root;
	return 0;
}

int al_pack_promote(al_store *s, const char *id, const al_unpack_opts *opts,
                    al_unpack_result *res)
{
	char *root = NULL, *dir = NULL, *rec = NULL;
	al_unpack_result local;
	int rc;

	memset(&local, 0, sizeof(local));
	if (res == NULL)
		res = &local;
	al_unpack_result_clear(res);
	if (opts == NULL ||
	    (opts->trust_key == NULL && !opts->accept_untrusted))
		return al_error_set(AL_EINVAL,
		                    "promoting quarantined pack '%s' needs the "
		                    "key that signed it (or accepting it "
		                    "untrusted)",
		                    id != NULL ? id : "");
	if ((rc = find_root(s, id, &root)) < 0)
		return rc;
	dir = al_path_join(root, "pack");
	rec = al_sprintf("%s/store/airlock/imported/%s.json", root, id);
	if (dir == NULL || rec == NULL) {
		rc = al_error_oom();
		goto out;
	}
	if (al_fs_exists(rec) != 1) {
		rc = al_error_set(AL_EVERIFY,
		                  "the import of pack '%s' into the quarantine "
		                  "never completed: finish it (airlock unpack "
		                  "DIR) or drop it",
		                  id);
		goto out;
	}
	if ((rc = al_pack__unpack_run(s, dir, opts, res, root)) < 0)
		goto out;
	if (!res->complete) {
		rc =
		    al_error_set(AL_EVERIFY,
		                 "the quarantine of pack '%s' lacks entries of "
		                 "its manifest: nothing promoted",
		                 id);
		goto out;
	}
	rc = al_pack__quarantine_remove(root);
out:
	al_unpack_result_clear(&local);
	free(rec);
	free(dir);
	free(root);
	return rc;
}

int al_pack_drop(al_store *s, const char *id)
{
	char *root = NULL;
	int rc;

	if ((rc = find_root(s, id, &root)) < 0)
		return rc;
	rc = al_pack__quarantine_remove(root);
	free(root);
	return rc;
}

void al_pack_quarantine_list_free(al_quarantined *v, size_t n)
{
	size_t i, j;

	for (i = 0; v != NULL && i < n; i++) {
		for (j = 0; j < v[i].nimages; j++)
			free(v[i].images[j]);
		free(v[i].images);
	}
	free(v);
}

/* What q (one quarantined pack, at root) holds. */
static int describe(const char *root, al_quarantined *q)
{
	al_store_opts o = AL_STORE_OPTS_INIT;
	al_store *qs = NULL;
	al_store_image *imgs = NULL;
	char *p;
	size_t n = 0, i;
	int rc = 0;

	if ((p = al_sprintf("%s/store/airlock/imported/%s.json", root,
	                    q->id)) == NULL)
		return al_error_oom();
	q->complete = al_fs_exists(p) == 1;
	free(p);
	if ((p = al_sprintf("%s/pack/airlock-%s.json.sig", root, q->id)) ==
	    NULL)
		return al_error_oom();
	q->signed_ = al_fs_exists(p) == 1;
	free(p);
	if ((p = al_path_join(root, "store")) == NULL)
		return al_error_oom();
	o.readonly = 1;
	rc = al_store_open(&qs, p, &o);
	free(p);
	if (rc == AL_ENOTFOUND) {
		al_error_clear();
		return 0;
	}
	if (rc < 0 || (rc = al_store_list(qs, &imgs, &n)) < 0)
		goto out;
	if (n > 0 && (q->images = calloc(n, sizeof(*q->images))) == NULL) {
		rc = al_error_oom();
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (imgs[i].name == NULL || imgs[i].name[0] == '\0')
			continue;
		if ((q->images[q->nimages] = al_strdup(imgs[i].name)) == NULL) {
			rc = al_error_oom();
			goto out;
		}
		q->nimages++;
	}
out:
	al_store_images_free(imgs, n);
	al_store_free(qs);
	return rc;
}

int al_pack_quarantine_list(al_store *s, al_quarantined **out, size_t *n)
{
	al_quarantined *v = NULL;
	char *dir, **names = NULL;
	size_t nn = 0, i, m = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if ((dir = al_sprintf("%s/airlock/quarantine", al_store_path(s))) ==
	    NULL)
		return al_error_oom();
	if ((rc = al_pack__list_dir(dir, &names, &nn)) < 0)
		goto out;
	if (nn > 0 && (v = calloc(nn, sizeof(*v))) == NULL) {
		rc = al_error_oom();
		goto out;
	}
	for (i = 0; i < nn; i++) {
		char *root;
		if (!al_pack_id_valid(names[i]))
			continue;
		memcpy(v[m].id, names[i], strlen(names[i]) + 1);
		if ((root = al_path_join(dir, names[i])) == NULL) {
			rc = al_error_oom();
			goto out;
		}
		rc = describe(root, &v[m]);
		free(root);
		m++;
		if (rc < 0)
			goto out;
	}
	*out = v;
	*n = m;
	v = NULL;
out:
	al_pack_quarantine_list_free(v, m);
	al_pack__free_list(names, nn);
	free(dir);
	return rc;
}
