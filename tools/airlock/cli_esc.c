/* cli_esc.c: escaping of remote text for text-mode stdout (cli_esc.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "airlock/buf.h"
#include "cli_esc.h"

static char *slots[CLI_ESC_SLOTS];
static size_t caps[CLI_ESC_SLOTS];
static unsigned next_slot;

const char *cli_esc(const char *s)
{
	unsigned k;
	size_t n, need;

	if (s == NULL)
		return "-";
	n = strlen(s);
	if (!al_str_needs_escape(s, n))
		return s;
	/* "\xNN" is the longest form of one byte */
	if (n > (SIZE_MAX - 1) / 4)
		return "?";
	need = 4 * n + 1;
	k = next_slot++ % CLI_ESC_SLOTS;
	if (caps[k] < need) {
		char *grown = realloc(slots[k], need);
		if (grown == NULL)
			return "?";
		slots[k] = grown;
		caps[k] = need;
	}
	al_str_escape(slots[k], caps[k], s, n);
	return slots[k];
}

int cli_esc_lines(FILE *f, const char *text)
{
	const char *p = text, *nl;
	char *line;

	if (text == NULL)
		return 0;
	while (*p != '\0') {
		size_t n;

		nl = strchr(p, '\n');
		n = nl != NULL ? (size_t)(nl - p) : strlen(p);
		if ((line = malloc(n + 1)) == NULL)
			return EOF;
		memcpy(line, p, n);
		line[n] = '\0';
		if (fputs(cli_esc(line), f) == EOF ||
		    (nl != NULL && fputc('\n', f) == EOF)) {
			free(line);
			return EOF;
		}
		free(line);
		p += n + (nl != NULL);
	}
	return 0;
}
