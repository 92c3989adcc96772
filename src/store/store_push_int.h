/* store_push_int.h: the pushed-images record (STORE/airlock/pushed.json,
 * store_push.c), read and written by al_push_store; not installed. */
#ifndef AIRLOCK_STORE_PUSH_INT_H
#define AIRLOCK_STORE_PUSH_INT_H

#include <jansson.h>

#include "airlock/store.h"

/*
 * What the store's pushes left at registry: a new object (caller
 * decrefs) of destination ("REPO:TAG" or "REPO@DIGEST") -> the digest
 * of the top manifest pushed there, empty when none is recorded.
 * AL_EPARSE when the file is not a record.
 */
int al_store__pushed_get(al_store *s, const char *registry, json_t **out);

/*
 * Under the push lock: for registry, forget every destination named in
 * drop (its values ignored; may be NULL), then record every destination
 * -> digest string of set (may be NULL), and save the file atomically.
 */
int al_store__pushed_update(al_store *s, const char *registry,
                            const json_t *set, const json_t *drop);

#endif
