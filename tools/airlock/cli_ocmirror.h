/* cli_ocmirror.h: oc-mirror v2's command-line forms of airlock mirror (mirror
 * to disk, disk to mirror, mirror to mirror), each run as airlock's own
 * commands (docs/coming-from-oc-mirror.md). */
#ifndef AIRLOCK_CLI_OCMIRROR_H
#define AIRLOCK_CLI_OCMIRROR_H

#include <getopt.h>

/*
 * Look at mirror's arguments (longopts: mirror's own options, for which
 * of them take a value). When they are one of oc-mirror v2's forms
 * (a file:// or bare docker:// destination, --from, --workspace, --v2,
 * --since, --cache-dir) or name an oc-mirror flag airlock spells
 * otherwise, *handled is set and the form is run or refused:
 *   -c ISC file://DIR               mirror, then pack into DIR
 *   -c ISC --from file://DIR docker://REG   unpack DIR, then push to REG
 *   -c ISC --workspace file://DIR docker://REG   mirror --to REG
 * Returns the exit status (meaningful when *handled).
 */
int cli_ocmirror_mirror(int argc, char **argv, const struct option *longopts,
                        int *handled);

#endif
