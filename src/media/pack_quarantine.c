/* pack_quarantine.c: where the quarantine of untrusted imports lives
 * (STORE/airlock/quarantine/<id>): its root, its store, its removal.
 * Listing is in pack.c, promote and drop in pack_promote.c. */
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

int al_pack__quarantine_sweep(const char *parent)
{
	char **names = NULL;
	size_t n = 0, i;
	int rc;

	if ((rc = al_pack__list_dir(parent, &names, &n)) < 0)
		return rc;
	for (i = 0; i < n && rc == 0; i++) {
		char *p;
		if (!al_str_startswith(names[i], ".gone-"))
			continue;
		if ((p = al_path_join(parent, names[i])) == NULL) {
			rc = al_error_oom();
			break;
		}
		rc = al_pack__rm_tree(p);
		free(p);
	}
	/* after the last quarantined pack, STORE/airlock/quarantine too
	 * (rmdir refuses while another is there) */
	if (rc == 0 && n > 0)
		rmdir(parent);
	al_pack__free_list(names, n);
	return rc;
}

int al_pack__quarantine_remove(const char *root)
{
	const char *slash = strrchr(root, '/');
	char *parent = NULL, *gone = NULL;
	int rc = 0;

	if ((parent = al_strndup(root, (size_t)(slash - root))) == NULL ||
	    (gone = al_sprintf("%s/.gone-%s", parent, slash + 1)) == NULL) {
		rc = al_error_oom();
		goto out;
	}
	/* one rename takes the whole quarantine away (a kill while its
	 * files are removed must not leave a half quarantine, its import
	 * record gone, that a rerun of --promote would take for an
	 * unfinished import); what a killed removal left is swept here, and
	 * by the next unpack of any pack (al_pack__unpack_run) */
	if (rename(root, gone) != 0 && errno != ENOENT) {
		rc = al_error_errno(errno, "cannot remove '%s'", root);
		goto out;
	}
	rc = al_pack__quarantine_sweep(parent);
out:
	free(gone);
	free(parent);
	return rc;
}
