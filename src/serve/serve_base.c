/* serve_base.c: what the pull side (serve.c) and the push side
 * (serve_push.c) of `airlock serve` share: references to the name table and
 * its refresh when index.json is replaced, and the answers in the
 * distribution spec's form (docs/serve.md). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <microhttpd.h>

#include "airlock/error.h"
#include "airlock/fs.h"
#include "serve_int.h"

al_serve_table *al_serve__table_get(al_serve_server *sv)
{
	al_serve_table *t;

	pthread_mutex_lock(&sv->lock);
	t = sv->table;
	t->refs++;
	pthread_mutex_unlock(&sv->lock);
	return t;
}

void al_serve__table_put(al_serve_server *sv, al_serve_table *t)
{
	unsigned left;

	pthread_mutex_lock(&sv->lock);
	left = --t->refs;
	pthread_mutex_unlock(&sv->lock);
	if (left == 0)
		al_serve__table_free(t);
}

int al_serve__index_stat(const char *store, struct stat *st)
{
	char *p = al_path_join(store, "index.json");
	int rc;

	if (p == NULL)
		return AL_ENOMEM;
	rc = stat(p, st) == 0 ? 0 : AL_EIO;
	free(p);
	return rc;
}

void al_serve__marks_stat(const char *store, struct stat *st)
{
	char *p = al_path_join(store, "airlock/untrusted.json");

	if (p == NULL || stat(p, st) != 0)
		memset(st, 0, sizeof(*st));
	free(p);
}

static int same_file(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	       a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* Read the table again when index.json or the marks of untrusted imports
 * (docs/serve.md "Untrusted content") were replaced; keep the old one
 * when the new one cannot be read (a store being written). */
void al_serve__refresh(al_serve_server *sv)
{
	struct stat st, ms;
	al_serve_table *t = NULL, *old;
	int rc;

	pthread_mutex_lock(&sv->refresh_lock);
	if (al_serve__index_stat(sv->o->store, &st) < 0)
		goto out;
	al_serve__marks_stat(sv->o->store, &ms);
	if (same_file(&st, &sv->index_st) &&
	    (sv->o->serve_untrusted || same_file(&ms, &sv->marks_st)))
		goto out;
	old = al_serve__table_get(sv);
	rc = al_serve__table_new(&t, sv->o->store, old, sv->o->serve_untrusted);
	al_serve__table_put(sv, old);
	if (rc < 0) {
		al_error_clear();
		goto out;
	}
	sv->index_st = st;
	sv->marks_st = ms;
	pthread_mutex_lock(&sv->lock);
	old = sv->table;
	sv->table = t;
	pthread_mutex_unlock(&sv->lock);
	al_serve__table_put(sv, old);
out:
	pthread_mutex_unlock(&sv->refresh_lock);
}

/* ---- responses ---- */

enum MHD_Result al_serve__send(struct MHD_Connection *c, al_serve_request *rq,
                               unsigned status, struct MHD_Response *r,
                               uint64_t len)
{
	enum MHD_Result ok;

	if (r == NULL)
		return MHD_NO;
	MHD_add_response_header(r, "Docker-Distribution-API-Version",
	                        "registry/2.0");
	rq->status = status;
	rq->bytes = len;
	ok = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ok;
}

enum MHD_Result al_serve__send_json(struct MHD_Connection *c,
                                    al_serve_request *rq, unsigned status,
                                    const char *body)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
	    strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);

	if (r != NULL)
		MHD_add_response_header(r, "Content-Type", "application/json");
	return al_serve__send(c, rq, status, r, strlen(body));
}

/* An error in the distribution spec's form; message is ours, never an echo
 * of the request. */
enum MHD_Result al_serve__send_error(struct MHD_Connection *c,
                                     al_serve_request *rq, unsigned status,
                                     const char *code, const char *message)
{
	char body[256];
	int n = snprintf(body, sizeof(body),
	                 "{\"errors\":[{\"code\":\"%s\",\"message\":\"%s\"}]}",
	                 code, message);

	if (n < 0 || (size_t)n >= sizeof(body))
		return MHD_NO;
	return al_serve__send_json(c, rq, status, body);
}
