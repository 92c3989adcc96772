/* pack_promote.c: a quarantined import (docs/security.md "Untrusted
 * imports") promoted into the store once a key verifies it, or dropped.
 * Above the unpack run it repeats (pack_unpack.c) and the quarantine's
 * place (pack_quarantine.c). */
#include <stdlib.h>
#include <string.h>

#include "airlock/error.h"
#include "airlock/fs.h"
#include "airlock/pack.h"
#include "airlock/store.h"
#include "pack_int.h"
#include "error_int.h"

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
	al_unpack_result local = AL_UNPACK_RESULT_INIT;
	int rc;

	if ((rc = AL_RESULT_VERSION_CHECK("al_unpack_result", res, version,
	                                  AL_UNPACK_RESULT_VERSION)) < 0)
		return rc;
	if (res == NULL)
		res = &local;
	al_unpack_result_clear(res);
	if (opts != NULL &&
	    (rc = al_opts_version_check("al_unpack_opts", opts->version,
	                                AL_UNPACK_OPTS_VERSION)) < 0)
		return rc;
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
