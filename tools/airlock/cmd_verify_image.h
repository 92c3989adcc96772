/* cmd_verify_image.h: what airlock verify-image shares with airlock mirror
 * (whose prototypes are in cmd.h). */
#ifndef AIRLOCK_CMD_VERIFY_IMAGE_H
#define AIRLOCK_CMD_VERIFY_IMAGE_H

#include "cli.h"

/*
 * Parse a comma-separated list of sig, att, sbom and referrers into
 * AL_COSIGN_FIND_* bits (--attachments, --sigstore-attachments). -1 for
 * an unknown word or an empty list.
 */
int cli_parse_attachments(unsigned *out, const char *s);

#endif
