/* oom_inject.h: allocation-failure injection for the OOM suite
 * (tests/unit/test_oom.c), linked with --wrap=malloc,calloc,realloc,free
 * so that every allocation the library makes goes through it. */
#ifndef AL_OOM_INJECT_H
#define AL_OOM_INJECT_H

#include <stddef.h>

/*
 * Arm the hook: the nth allocation (1-based) from now fails, and with
 * persistent every one after it too. Counting stops at oom_disarm().
 */
void oom_arm(unsigned long nth, int persistent);
/* Stop failing and counting. Returns how many allocations failed while
 * armed (0: the code under test made fewer than nth allocations). */
unsigned long oom_disarm(void);
/* With on, stop failing and counting allocations but go on tracking the
 * blocks (a check of what the code under test made, whose own
 * allocations are not under test); off resumes. oom_arm clears it. */
void oom_pause(int on);
/* Allocations minus frees made since the last oom_arm (a leak check that
 * works without a sanitizer: 0 once everything was released). */
long oom_balance(void);
/* With on, jansson's own allocations never fail and are not counted
 * (still tracked for the balance): jansson 2.14's lexer reads and writes
 * past its string buffer once an allocation there failed (load.c:
 * lex_save drops the failure, lex_scan_string then walks past the end),
 * which valgrind shows on the cosign payload; the sweep is then of
 * airlock's own allocations. */
void oom_spare_jansson(int on);
/* Route jansson's allocations through the hook as well. */
void oom_install_jansson(void);

#endif
