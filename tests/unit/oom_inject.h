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
/* Allocations minus frees made since the last oom_arm (a leak check that
 * works without a sanitizer: 0 once everything was released). */
long oom_balance(void);
/* Route jansson's allocations through the hook as well. */
void oom_install_jansson(void);

#endif
