/* store_sigstore.c: the store's sigstore trust records, typed: the
 * "sigstore" array of airlock/releases.json (beside "releases", "catalogs"
 * and "charts"), described as a record kind (store_int.h) that
 * store_record.c reads and writes; carried by pack with the rest of
 * releases.json and merged by name on unpack (docs/cosign.md). */
#include "airlock/store.h"
#include "store_int.h"

/* The members of a trust record, in the order they are written. */
static const al_store__field trust_fields[] = {
    AL_STORE__S(al_store__sigstore_trust, "name",
                AL_STORE__KEY | AL_STORE__LISTED, name),
    AL_STORE__D(al_store__sigstore_trust, "digest",
                AL_STORE__KEY | AL_STORE__LISTED, digest, has_digest),
    AL_STORE__S(al_store__sigstore_trust, "mediaType", AL_STORE__LISTED,
                media_type),
    AL_STORE__S(al_store__sigstore_trust, "source", 0, source),
    AL_STORE__S(al_store__sigstore_trust, "kept", 0, kept),
    AL_STORE__S(al_store__sigstore_trust, "content", 0, content),
};

const al_store__kind al_store__sigstore_kind = {
    "sigstore", "sigstore trust", sizeof(al_store__sigstore_trust),
    trust_fields, sizeof(trust_fields) / sizeof(trust_fields[0])};
