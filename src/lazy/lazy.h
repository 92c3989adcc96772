/* lazy.h: the airlock program loads libcurl and libarchive on first use,
 * not at start-up (docs/performance.md, "Start-up"). */
#ifndef AIRLOCK_LAZY_H
#define AIRLOCK_LAZY_H

#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

/*
 * Open soname and resolve each of the n names into fns[i] (an array of
 * function pointers the caller declared). A library that cannot be loaded
 * ends the program with exit status 3 and a message naming the library and
 * the symbol: the command needed it and has no way to go on. Called once
 * per library, under pthread_once.
 */
static inline void al_lazy_open(const char *soname, const char *const *names,
                                void (**fns)(void), size_t n)
{
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	size_t i;

	if (h == NULL) {
		fprintf(stderr, "airlock: error: cannot load '%s': %s\n",
		        soname, dlerror());
		_exit(3);
	}
	for (i = 0; i < n; i++) {
		void *p = dlsym(h, names[i]);
		if (p == NULL) {
			fprintf(stderr,
			        "airlock: error: '%s' has no symbol '%s': %s\n",
			        soname, names[i], dlerror());
			_exit(3);
		}
		/* POSIX guarantees a data pointer from dlsym converts to a
		 * function pointer; the memcpy says so without a cast
		 * warning. */
		memcpy(&fns[i], &p, sizeof(p));
	}
}

#endif
