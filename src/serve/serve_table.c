/* serve_table.c: the table airlock serve answers from: repositories, tags and
 * manifests of a store's index.json under the push mapping (al_push_target),
 * rebuilt when index.json changes. */
#include <stdlib.h>
#include <string.h>

#include "airlock/buf.h"
#include "airlock/error.h"
#include "airlock/transfer.h"
#include "array_int.h"
#include "json_int.h"
#include "serve_int.h"

/* A manifest the server reads to find its subject and children. */
#define MANIFEST_MAX (4u << 20)

static void info_clear(al_serve_info *in)
{
	size_t i;

	for (i = 0; i < in->nkids; i++) {
		free(in->kids[i].media_type);
		free(in->kids[i].artifact_type);
	}
	free(in->kids);
	free(in->artifact_type);
	memset(in, 0, sizeof(*in));
}

static void man_clear(al_serve_man *m)
{
	free(m->repo);
	free(m->media_type);
	free(m->artifact_type);
}

void al_serve__table_free(al_serve_table *t)
{
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; i < t->nmans; i++)
		man_clear(&t->mans[i]);
	for (i = 0; i < t->ntags; i++) {
		free(t->tags[i].repo);
		free(t->tags[i].tag);
		free(t->tags[i].name);
	}
	for (i = 0; i < t->ninfos; i++)
		info_clear(&t->infos[i]);
	free(t->infos);
	free(t->mans);
	free(t->tags);
	free(t->repos);
	al_store_free(t->store);
	free(t);
}

int al_serve__digest_valid(const char *s)
{
	size_t i;

	if (strncmp(s, "sha256:", 7) != 0 || strlen(s) != 7 + 64)
		return 0;
	for (i = 7; i < 7 + 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		      (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

static int add_man(al_serve_table *t, const char *repo, const char *digest,
                   const char *media_type, uint64_t size,
                   const char *artifact_type, const char *subject)
{
	al_serve_man *grown, *m;

	if (!al_serve__digest_valid(digest))
		return 0; /* only sha256 manifests are served */
	grown =
	    al__array_grow(t->mans, &t->cap_mans, t->nmans + 1, sizeof(*grown));
	if (grown == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	t->mans = grown;
	m = &t->mans[t->nmans];
	memset(m, 0, sizeof(*m));
	memcpy(m->digest, digest, 72);
	m->size = size;
	if (subject != NULL && al_serve__digest_valid(subject))
		memcpy(m->subject, subject, 72);
	m->repo = al_strdup(repo);
	m->media_type = al_strdup(media_type);
	m->artifact_type =
	    artifact_type != NULL ? al_strdup(artifact_type) : NULL;
	t->nmans++;
	if (m->repo == NULL || m->media_type == NULL ||
	    (artifact_type != NULL && m->artifact_type == NULL))
		return al_error_set(AL_ENOMEM, "out of memory");
	return 0;
}

static int add_tag(al_serve_table *t, const char *repo, const char *tag,
                   const char *digest, const char *name)
{
	al_serve_tag *grown, *g;

	grown =
	    al__array_grow(t->tags, &t->cap_tags, t->ntags + 1, sizeof(*grown));
	if (grown == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	t->tags = grown;
	g = &t->tags[t->ntags];
	memset(g, 0, sizeof(*g));
	memcpy(g->digest, digest, 72);
	g->repo = al_strdup(repo);
	g->tag = al_strdup(tag);
	g->name = name != NULL ? al_strdup(name) : NULL;
	t->ntags++;
	if (g->repo == NULL || g->tag == NULL || (name != NULL && !g->name))
		return al_error_set(AL_ENOMEM, "out of memory");
	return 0;
}

static int cmp_man(const void *a, const void *b)
{
	const al_serve_man *x = a, *y = b;
	int c = strcmp(x->repo, y->repo);

	return c != 0 ? c : strcmp(x->digest, y->digest);
}

static int cmp_tag(const void *a, const void *b)
{
	const al_serve_tag *x = a, *y = b;
	int c = strcmp(x->repo, y->repo);

	return c != 0 ? c : strcmp(x->tag, y->tag);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* qsort and bsearch over arrays that may be empty (and NULL), which the C
 * library does not accept. */
static void sort(void *base, size_t n, size_t size,
                 int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

static void *find(const void *key, const void *base, size_t n, size_t size,
                  int (*cmp)(const void *, const void *))
{
	return n > 0 ? bsearch(key, base, n, size, cmp) : NULL;
}

static int cmp_info(const void *a, const void *b)
{
	return strcmp(((const al_serve_info *)a)->digest,
	              ((const al_serve_info *)b)->digest);
}

static char *dup_or_null(const char *s, int *oom)
{
	char *d = s != NULL ? al_strdup(s) : NULL;

	if (s != NULL && d == NULL)
		*oom = 1;
	return d;
}

/* A deep copy of in into out (zeroed first); AL_ENOMEM. */
static int info_copy(al_serve_info *out, const al_serve_info *in)
{
	size_t i;
	int oom = 0;

	memset(out, 0, sizeof(*out));
	memcpy(out->digest, in->digest, 72);
	memcpy(out->subject, in->subject, 72);
	out->artifact_type = dup_or_null(in->artifact_type, &oom);
	if (in->nkids > 0 &&
	    (out->kids = calloc(in->nkids, sizeof(*out->kids))) == NULL)
		oom = 1;
	for (i = 0; out->kids != NULL && i < in->nkids; i++) {
		out->kids[i] = in->kids[i];
		out->kids[i].media_type =
		    dup_or_null(in->kids[i].media_type, &oom);
		out->kids[i].artifact_type =
		    dup_or_null(in->kids[i].artifact_type, &oom);
		out->nkids = i + 1;
	}
	if (oom) {
		info_clear(out);
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	return 0;
}

/* What the manifest root says, into in (digest set by the caller). */
static int info_parse(al_serve_info *in, json_t *root)
{
	json_t *subj, *kids, *cfg;
	const char *art, *subject = NULL;
	size_t i;
	int oom = 0;

	art = al_json_str(root, "artifactType");
	if (art == NULL && (cfg = json_object_get(root, "config")) != NULL &&
	    json_is_object(cfg))
		art = al_json_str(cfg, "mediaType");
	in->artifact_type = dup_or_null(art, &oom);
	if ((subj = json_object_get(root, "subject")) != NULL &&
	    json_is_object(subj))
		subject = al_json_str(subj, "digest");
	if (subject != NULL && al_serve__digest_valid(subject))
		memcpy(in->subject, subject, 72);
	kids = json_object_get(root, "manifests");
	if (json_is_array(kids) && json_array_size(kids) > 0 &&
	    (in->kids = calloc(json_array_size(kids), sizeof(*in->kids))) ==
	        NULL)
		oom = 1;
	for (i = 0; in->kids != NULL && i < json_array_size(kids); i++) {
		json_t *k = json_array_get(kids, i), *sz;
		const char *kd = al_json_str(k, "digest");
		const char *kt = al_json_str(k, "mediaType");
		al_serve_kid *o = &in->kids[in->nkids];

		sz = json_object_get(k, "size");
		if (kd == NULL || kt == NULL || !json_is_integer(sz) ||
		    json_integer_value(sz) < 0 || !al_serve__digest_valid(kd))
			continue;
		memcpy(o->digest, kd, 72);
		o->size = (uint64_t)json_integer_value(sz);
		o->media_type = dup_or_null(kt, &oom);
		o->artifact_type =
		    dup_or_null(al_json_str(k, "artifactType"), &oom);
		in->nkids++;
	}
	if (oom) {
		info_clear(in);
		return al_error_set(AL_ENOMEM, "out of memory");
	}
	return 0;
}

/* The subject, artifact type and children of one top-level manifest:
 * from prev when it read that digest, else read from the store (and kept
 * for the next table). */
static int read_manifest(al_serve_table *t, const char *repo,
                         const al_store_image *img, const al_serve_table *prev)
{
	al_buf b = AL_BUF_INIT(MANIFEST_MAX);
	json_t *root = NULL;
	al_serve_info key, *in = NULL, *grown;
	const al_serve_info *old;
	char ds[AL_DIGEST_STRMAX];
	size_t i;
	int rc;

	al_digest_str(&img->desc.digest, ds);
	if (!al_serve__digest_valid(ds))
		return 0; /* only sha256 manifests are served */
	memset(&key, 0, sizeof(key));
	memcpy(key.digest, ds, 72);
	grown = al__array_grow(t->infos, &t->cap_infos, t->ninfos + 1,
	                       sizeof(*grown));
	if (grown == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	t->infos = grown;
	old = prev != NULL
	          ? find(&key, prev->infos, prev->ninfos, sizeof(key), cmp_info)
	          : NULL;
	if (old != NULL) {
		if ((rc = info_copy(&t->infos[t->ninfos], old)) < 0)
			return rc;
		in = &t->infos[t->ninfos++];
	} else if (al_store_read_blob(t->store, &img->desc.digest, &b) == 0 &&
	           al_json_parse(&root, b.ptr, b.len, ds) == 0) {
		in = &t->infos[t->ninfos];
		memset(in, 0, sizeof(*in));
		memcpy(in->digest, ds, 72);
		if ((rc = info_parse(in, root)) < 0)
			goto out;
		t->ninfos++;
	}
	al_error_clear();
	if (in == NULL) {
		/* served as recorded, without referrers or children (not
		 * kept: the manifest may be readable next time) */
		rc = add_man(t, repo, ds, img->desc.media_type, img->desc.size,
		             img->desc.artifact_type, NULL);
		goto out;
	}
	if ((rc = add_man(t, repo, ds, img->desc.media_type, img->desc.size,
	                  in->artifact_type,
	                  in->subject[0] != '\0' ? in->subject : NULL)) < 0)
		goto out;
	for (i = 0; i < in->nkids; i++)
		if ((rc = add_man(t, repo, in->kids[i].digest,
		                  in->kids[i].media_type, in->kids[i].size,
		                  in->kids[i].artifact_type, NULL)) < 0)
			goto out;
out:
	json_decref(root);
	al_buf_free(&b);
	return rc;
}

/* Tags first, then the "sha256-<hex>" tag push gives a digest-named image
 * where no real tag has that name (transfer_push.c, tag_taken). */
static int add_images(al_serve_table *t, const al_store_image *imgs, size_t n,
                      const al_serve_table *prev)
{
	char **repos = calloc(n + 1, sizeof(*repos)), **refs;
	char ds[AL_DIGEST_STRMAX];
	size_t i, ntags;
	int rc = 0, pass;

	refs = calloc(n + 1, sizeof(*refs));
	if (repos == NULL || refs == NULL) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (imgs[i].name == NULL || imgs[i].name[0] == '\0' ||
		    al_push_target(imgs[i].name, "", &repos[i], &refs[i]) < 0)
			continue; /* not a docker reference: not served */
		if ((rc = read_manifest(t, repos[i], &imgs[i], prev)) < 0)
			goto out;
	}
	for (pass = 0; pass < 2; pass++) {
		ntags = t->ntags;
		sort(t->tags, t->ntags, sizeof(*t->tags), cmp_tag);
		for (i = 0; i < n; i++) {
			char *dt;
			al_serve_tag key;
			int isdig;

			if (repos[i] == NULL)
				continue;
			isdig = strchr(refs[i], ':') != NULL;
			al_digest_str(&imgs[i].desc.digest, ds);
			if (pass == 0 && !isdig) {
				if ((rc = add_tag(t, repos[i], refs[i], ds,
				                  imgs[i].name)) < 0)
					goto out;
				continue;
			}
			if (pass == 0 || !isdig)
				continue;
			if ((dt = al_push_digest_tag(refs[i])) == NULL) {
				rc = al_error_set(AL_ENOMEM, "out of memory");
				goto out;
			}
			key.repo = repos[i];
			key.tag = dt;
			if (find(&key, t->tags, ntags, sizeof(key), cmp_tag) ==
			    NULL)
				rc = add_tag(t, repos[i], dt, ds, NULL);
			free(dt);
			if (rc < 0)
				goto out;
		}
	}
out:
	for (i = 0; repos != NULL && refs != NULL && i < n; i++) {
		free(repos[i]);
		free(refs[i]);
	}
	free(repos);
	free(refs);
	return rc;
}

/* Sort, drop duplicate manifests and tags (the first kept), list repos. */
static int finish(al_serve_table *t)
{
	size_t i, j;

	sort(t->mans, t->nmans, sizeof(*t->mans), cmp_man);
	for (i = j = 0; i < t->nmans; i++) {
		if (j > 0 && cmp_man(&t->mans[j - 1], &t->mans[i]) == 0) {
			man_clear(&t->mans[i]);
			continue;
		}
		t->mans[j++] = t->mans[i];
	}
	t->nmans = j;
	sort(t->tags, t->ntags, sizeof(*t->tags), cmp_tag);
	for (i = j = 0; i < t->ntags; i++) {
		if (j > 0 && cmp_tag(&t->tags[j - 1], &t->tags[i]) == 0) {
			free(t->tags[i].repo);
			free(t->tags[i].tag);
			free(t->tags[i].name);
			continue;
		}
		t->tags[j++] = t->tags[i];
	}
	t->ntags = j;
	sort(t->infos, t->ninfos, sizeof(*t->infos), cmp_info);
	for (i = j = 0; i < t->ninfos; i++) {
		if (j > 0 && cmp_info(&t->infos[j - 1], &t->infos[i]) == 0) {
			info_clear(&t->infos[i]);
			continue;
		}
		t->infos[j++] = t->infos[i];
	}
	t->ninfos = j;
	if ((t->repos = calloc(t->nmans + 1, sizeof(*t->repos))) == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	for (i = 0; i < t->nmans; i++)
		if (t->nrepos == 0 ||
		    strcmp(t->repos[t->nrepos - 1], t->mans[i].repo) != 0)
			t->repos[t->nrepos++] = t->mans[i].repo;
	sort(t->repos, t->nrepos, sizeof(*t->repos), cmp_str);
	return 0;
}

/*
 * docs/security.md "Marks of untrusted imports": without serve_untrusted,
 * the names an untrusted import set (while they still name what it gave
 * them) are taken out of imgs before anything is served from it, so that
 * neither their manifests nor what refers to them (.sig tags, referrers)
 * are served under them. Their name is cleared (add_images skips it).
 */
static int drop_untrusted(al_serve_table *t, al_store_image *imgs, size_t n)
{
	al_store_untrusted *u = NULL;
	size_t nu = 0, i, j;
	int rc;

	if (t->serve_untrusted)
		return 0;
	if ((rc = al_store_untrusted_list(t->store, &u, &nu)) < 0)
		return rc;
	for (i = 0; i < nu; i++) {
		if (u[i].kind != AL_STORE_UNTRUSTED_TAG)
			continue;
		for (j = 0; j < n; j++)
			if (imgs[j].name != NULL &&
			    strcmp(imgs[j].name, u[i].name) == 0 &&
			    al_digest_equal(&imgs[j].desc.digest, &u[i].digest))
				imgs[j].name[0] = '\0';
	}
	al_store_untrusted_free(u, nu);
	return 0;
}

int al_serve__table_new(al_serve_table **out, const char *path,
                        const al_serve_table *prev, int serve_untrusted)
{
	al_store_opts so = AL_STORE_OPTS_INIT;
	al_serve_table *t = calloc(1, sizeof(*t));
	al_store_image *imgs = NULL;
	size_t n = 0;
	int rc;

	if (t == NULL)
		return al_error_set(AL_ENOMEM, "out of memory");
	t->refs = 1;
	t->serve_untrusted = serve_untrusted;
	so.readonly = 1;
	if ((rc = al_store_open(&t->store, path, &so)) < 0 ||
	    (rc = al_store_list(t->store, &imgs, &n)) < 0 ||
	    (rc = drop_untrusted(t, imgs, n)) < 0 ||
	    (rc = add_images(t, imgs, n, prev)) < 0 || (rc = finish(t)) < 0)
		goto out;
	*out = t;
	t = NULL;
out:
	al_store_images_free(imgs, n);
	al_serve__table_free(t);
	return rc;
}

int al_serve__has_repo(const al_serve_table *t, const char *repo)
{
	return find(&repo, t->repos, t->nrepos, sizeof(*t->repos), cmp_str) !=
	       NULL;
}

const al_serve_man *al_serve__find_man(const al_serve_table *t,
                                       const char *repo, const char *digest)
{
	al_serve_man key;

	memset(&key, 0, sizeof(key));
	if (!al_serve__digest_valid(digest))
		return NULL;
	key.repo = (char *)repo;
	memcpy(key.digest, digest, 72);
	return find(&key, t->mans, t->nmans, sizeof(key), cmp_man);
}

const al_serve_man *al_serve__find_tag(const al_serve_table *t,
                                       const char *repo, const char *tag)
{
	al_serve_tag key, *g;

	key.repo = (char *)repo;
	key.tag = (char *)tag;
	g = find(&key, t->tags, t->ntags, sizeof(key), cmp_tag);
	return g != NULL ? al_serve__find_man(t, repo, g->digest) : NULL;
}

const char *al_serve__tag_name(const al_serve_table *t, const char *repo,
                               const char *tag)
{
	al_serve_tag key, *g;

	key.repo = (char *)repo;
	key.tag = (char *)tag;
	g = find(&key, t->tags, t->ntags, sizeof(key), cmp_tag);
	return g != NULL ? g->name : NULL;
}

size_t al_serve__tags_from(const al_serve_table *t, const char *repo,
                           const char *last, size_t *end)
{
	size_t lo = 0, hi = t->ntags, mid;
	al_serve_tag key;

	/* the first tag of repo after last ("" : the first of repo) */
	key.repo = (char *)repo;
	key.tag = (char *)(last != NULL ? last : "");
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (cmp_tag(&t->tags[mid], &key) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (*end = lo;
	     *end < t->ntags && strcmp(t->tags[*end].repo, repo) == 0; (*end)++)
		;
	return lo;
}
