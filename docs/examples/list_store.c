/* list_store.c: a program against the installed libairlock (pkg-config airlock): list a store's images. */
#include <stdio.h>

#include <airlock.h>

int main(int argc, char **argv)
{
	al_store_opts opts = AL_STORE_OPTS_INIT;
	al_store *store = NULL;
	al_store_image *imgs = NULL;
	size_t n = 0, i;
	char d[AL_DIGEST_STRMAX];

	opts.readonly = 1;
	if (argc != 2) {
		fprintf(stderr, "usage: list_store STORE\n");
		return 2;
	}
	if (al_store_open(&store, argv[1], &opts) < 0 ||
	    al_store_list(store, &imgs, &n) < 0) {
		fprintf(stderr, "list_store: %s\n", al_error_message());
		al_store_free(store);
		return 3;
	}
	for (i = 0; i < n; i++)
		printf("%s %s\n", al_digest_str(&imgs[i].desc.digest, d),
		       imgs[i].name);
	al_store_images_free(imgs, n);
	al_store_free(store);
	return 0;
}
