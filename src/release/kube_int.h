/* kube_int.h (internal): the Kubernetes calls that take and give JSON
 * objects (kube.h has the client, discovery and delete). */
#ifndef AL_KUBE_INT_H
#define AL_KUBE_INT_H

#include <jansson.h>
#include "airlock/kube.h"

/*
 * Server-side apply obj (a JSON object with apiVersion, kind,
 * metadata.name, metadata.namespace when namespaced, else
 * al_kube_namespace(k) is used): PATCH
 * .../<plural>/<name>?fieldManager=<fm>&force=true with Content-Type
 * application/apply-patch+yaml (JSON is YAML). *result (may be NULL)
 * receives the object the server returned. Retries 409, 429 (Retry-After),
 * 5xx and connection errors with backoff until dl (without a deadline:
 * at most opts.http.max_retries times, default 4; TLS verification
 * failures are not retried). Errors: AL_EAUTH (401/403), AL_ENOTFOUND
 * (404: the kind or the namespace does not exist), AL_EPROTO (other 4xx,
 * with the Status message; a 409/429/5xx still answered after the last
 * retry without a deadline), AL_ETIMEOUT (dl reached, naming the last
 * answer), AL_ENET, AL_ECANCELED, AL_EINVAL (object without apiVersion,
 * kind or a valid name).
 */
int al_kube_apply(al_kube *k, const json_t *obj, json_t **result,
                  al_deadline dl);

/* Server-side apply to the status subresource (PATCH .../status), same
 * errors; AL_EUNSUPPORTED when the kind has no status subresource. */
int al_kube_apply_status(al_kube *k, const json_t *obj, json_t **result,
                         al_deadline dl);

/* GET one object: AL_ENOTFOUND on 404. ns may be NULL for cluster-scoped
 * (NULL for a namespaced kind: al_kube_namespace(k)). Same retries. */
int al_kube_get(al_kube *k, const char *api_version, const char *kind,
                const char *ns, const char *name, json_t **out, al_deadline dl);

/* LIST objects (label_selector may be NULL, e.g. "app=x,tier!=db"; ns
 * NULL lists a namespaced kind across all namespaces); *out is the List
 * object (with an "items" array). Same retries. */
int al_kube_list(al_kube *k, const char *api_version, const char *kind,
                 const char *ns, const char *label_selector, json_t **out,
                 al_deadline dl);

/*
 * Create obj (POST to its collection) or replace it (PUT; a
 * metadata.resourceVersion in obj makes the write conditional on it).
 * Unlike apply, a 409 is never retried: it is the answer, AL_EEXIST
 * (create: the object exists; replace: the resourceVersion no longer
 * matches, someone else wrote it). Other errors and retries as
 * al_kube_apply. *result (may be NULL) receives the stored object.
 * This is the compare-and-swap that leader election builds on.
 */
int al_kube_create(al_kube *k, const json_t *obj, json_t **result,
                   al_deadline dl);
int al_kube_replace(al_kube *k, const json_t *obj, json_t **result,
                    al_deadline dl);

#endif
