/* cmd_verify_image.h: the sigstore step of airlock mirror (carry
 * attachments, check the image policy), shared with airlock verify-image
 * (whose prototype is in cmd.h). */
#ifndef AIRLOCK_CMD_VERIFY_IMAGE_H
#define AIRLOCK_CMD_VERIFY_IMAGE_H

#include "cli.h"

/*
 * After a mirror into store: copy the sigstore attachments of every store
 * image from its source (al_cosign_carry), then, with policy_path, check
 * every image against that ClusterImagePolicy / ImagePolicy file; a
 * refused image is an error (AL_EVERIFY) unless allow_unsigned, which
 * turns it into a warning. Prints its summary and errors; returns 0 or the
 * worst status.
 */
int cli_mirror_sigstore(cli_common *c, al_store *store,
                        const al_transfer_opts *to, const char *policy_path,
                        int allow_unsigned);

#endif
