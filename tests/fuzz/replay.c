/* replay.c - runs a libFuzzer target's LLVMFuzzerTestOneInput over every
 * file of its seed corpus, without libFuzzer: linked with a fuzz_NAME.c,
 * it is a ctest test in every build (gcc included), so a seed that
 * crashes -- or, in the sanitizer build, leaks or reads out of bounds --
 * fails the suite and not only a fuzzing run.
 * Usage: replay DIR... (each DIR's regular files, in readdir order). */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	struct stat st;
	size_t n;

	if (!f || fstat(fileno(f), &st) != 0) {
		fprintf(stderr, "replay: cannot open %s\n", path);
		if (f)
			fclose(f);
		return -1;
	}
	/* one byte more, so that an empty seed still gets a valid pointer */
	if (!(buf = malloc((size_t)st.st_size + 1))) {
		fclose(f);
		return -1;
	}
	n = fread(buf, 1, (size_t)st.st_size, f);
	fclose(f);
	if (n != (size_t)st.st_size) {
		fprintf(stderr, "replay: short read of %s\n", path);
		free(buf);
		return -1;
	}
	(void)LLVMFuzzerTestOneInput(buf, n);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int files = 0;

	for (int i = 1; i < argc; i++) {
		DIR *d = opendir(argv[i]);
		struct dirent *e;

		if (!d) {
			fprintf(stderr, "replay: cannot open directory %s\n", argv[i]);
			return 1;
		}
		while ((e = readdir(d))) {
			char path[4096];
			struct stat st;

			snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
			if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
				continue;
			if (replay_file(path) < 0) {
				closedir(d);
				return 1;
			}
			files++;
		}
		closedir(d);
	}
	printf("replay: %d inputs, no crash\n", files);
	return files ? 0 : 1; /* an empty corpus is a mistake, not a pass */
}
