/* imageset_target.c: mirror.additionalImages[].targetRepo / targetTag: the
 * name an additional image is stored and pushed under (oc-mirror v2's
 * resolveTargetRepoTag and buildMirrorToDiskPaths), and the rename table
 * the mirror reads. */
#include <stdlib.h>
#include <string.h>

#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/imageset.h"
#include "airlock/ref.h"
#include "imageset_int.h"

/*
 * oc-mirror v2's IsValidPathComponent (api/v2alpha1/type_config.go):
 * components separated by '/', none empty, no tag or digest.
 */
int al_imageset_target_repo_valid(const char *s)
{
	const char *p, *slash;

	if (s == NULL || s[0] == '\0')
		return 0;
	for (p = s;; p = slash + 1) {
		slash = strchr(p, '/');
		if (!al_ref_path_component_valid(
		        p, slash != NULL ? (size_t)(slash - p) : strlen(p)))
			return 0;
		if (slash == NULL)
			return 1;
	}
}

int al_imageset_target_name(char **out, const char *ref,
                            const char *target_repo, const char *target_tag)
{
	al_ref r = {0}, chk = {0};
	const char *repo, *tag;
	char *name = NULL;
	int rc;

	if (out == NULL || ref == NULL)
		return al_error_set(AL_EINVAL, "al_imageset_target_name: NULL");
	*out = NULL;
	if (target_repo != NULL && target_repo[0] == '\0')
		target_repo = NULL;
	if (target_tag != NULL && target_tag[0] == '\0')
		target_tag = NULL;
	if (target_repo == NULL && target_tag == NULL)
		return 0;
	if (target_repo != NULL && !al_imageset_target_repo_valid(target_repo))
		return al_error_set(
		    AL_EPARSE,
		    "targetRepo '%s' of '%s' is not a repository path: "
		    "lower-case components of letters and digits joined by "
		    "'.', '_', '__' or '-', separated by '/', with no tag or "
		    "digest",
		    target_repo, ref);
	if ((rc = al_ref_parse(&r, ref)) < 0)
		return rc;
	repo = target_repo != NULL ? target_repo : r.repository;
	/* the registry of the source is kept, the path replaced
	 * (getUniqueNameWithTarget); a digest-only source without targetTag
	 * keeps its digest (push tags it sha256-<hex>, as oc-mirror names
	 * it); a tagged one, also with a digest, is named by tag and fetched
	 * by digest */
	tag = target_tag != NULL ? target_tag : r.tag;
	if (tag != NULL)
		name = al_sprintf("%s/%s:%s", r.registry, repo, tag);
	else if (r.digest != NULL)
		name = al_sprintf("%s/%s@%s", r.registry, repo, r.digest);
	else
		name = al_sprintf("%s/%s:latest", r.registry, repo);
	if (name == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	/* a tag or a total length the grammar refuses */
	if ((rc = al_ref_parse(&chk, name)) < 0) {
		rc = al_error_wrap(rc, "targetRepo/targetTag of '%s'", ref);
		goto out;
	}
	free(name);
	if ((name = al_ref_string(&chk)) == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	*out = name;
	name = NULL;
	rc = 0;
out:
	free(name);
	al_ref_clear(&r);
	al_ref_clear(&chk);
	return rc;
}

int al_imageset__add_rename(al_imageset *cfg, const char *ref, const char *name)
{
	char **grown, *a, *b;
	size_t n;

	if (cfg == NULL || ref == NULL || name == NULL)
		return al_error_set(AL_EINVAL, "al_imageset__add_rename: NULL");
	n = cfg->nadditional_renames;
	if (n >= (SIZE_MAX / sizeof(*grown) - 1) / 2)
		return al_error_set(AL_ENOMEM, "out of memory");
	grown = realloc(cfg->additional_renames, (2 * n + 3) * sizeof(*grown));
	if (grown == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	cfg->additional_renames = grown;
	a = al_strdup(ref);
	b = al_strdup(name);
	if (a == NULL || b == NULL) {
		free(a);
		free(b);
		grown[2 * n] = NULL;
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	grown[2 * n] = a;
	grown[2 * n + 1] = b;
	grown[2 * n + 2] = NULL;
	cfg->nadditional_renames = n + 1;
	return 0;
}

void al_imageset__free_renames(al_imageset *cfg)
{
	size_t i;

	if (cfg == NULL || cfg->additional_renames == NULL)
		return;
	for (i = 0; i < 2 * cfg->nadditional_renames; i++)
		free(cfg->additional_renames[i]);
	free(cfg->additional_renames);
	cfg->additional_renames = NULL;
	cfg->nadditional_renames = 0;
}

const char *al_imageset_rename_of(const char *const *renames, const char *ref)
{
	size_t i;

	if (renames == NULL || ref == NULL)
		return NULL;
	for (i = 0; renames[i] != NULL && renames[i + 1] != NULL; i += 2)
		if (strcmp(renames[i], ref) == 0)
			return renames[i + 1];
	return NULL;
}
