/* cli_esc.h: text from the network or a file (versions, channel names,
 * URLs, image names, signature fields) made safe for text-mode stdout. */
#ifndef AIRLOCK_CLI_ESC_H
#define AIRLOCK_CLI_ESC_H

#include <stdio.h>

/* How many cli_esc results stay valid at once (one printf's worth). */
#define CLI_ESC_SLOTS 16

/*
 * s escaped with al_str_escape (C0/C1 controls, ESC, DEL, invalid UTF-8,
 * line separators and bidirectional controls as "\xNN"), in one of
 * CLI_ESC_SLOTS buffers reused in turn: valid until CLI_ESC_SLOTS more
 * calls. NULL gives "-". Not thread-safe (the printing thread's). Out of
 * memory gives "?".
 */
const char *cli_esc(const char *s);
/* Print text (several lines) to f with each line escaped, the line
 * breaks kept. Returns EOF on a write error. */
int cli_esc_lines(FILE *f, const char *text);

#endif
