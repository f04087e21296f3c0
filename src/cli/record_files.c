/* record_files.c - the captures a `memprof record` run leaves besides its
 * own (see record.h): the names the preload derives from it (session.c)
 * for an exec'd process and for children. */
#include "record.h"

#include <dirent.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* path without its ".memprof": the <base> of the names the preload derives
 * from it for other processes (session.c). */
static void capture_base(char *out, size_t size, const char *path)
{
	size_t l;

	snprintf(out, size, "%s", path);
	l = strlen(out);
	if (l > 8 && !strcmp(out + l - 8, ".memprof"))
		out[l - 8] = '\0';
}

/* The preload tries as many names for a process's captures (session.c). */
#define MAX_NAMES 1000

int mp_cli_record_exec_chain(const char *path, pid_t pid, time_t since, char *last, size_t size)
{
	char base[PATH_MAX], cand[PATH_MAX + 64];
	struct stat sb;
	int n, count = 0;

	capture_base(base, sizeof(base), path);
	for (n = 0; n < MAX_NAMES; n++) {
		if (n == 0)
			snprintf(cand, sizeof(cand), "%s.%ld.memprof", base, (long)pid);
		else
			snprintf(cand, sizeof(cand), "%s.%ld-%d.memprof", base, (long)pid, n);
		if (stat(cand, &sb) != 0)
			break;
		if (sb.st_mtime >= since) {
			count++;
			snprintf(last, size, "%s", cand);
		}
	}
	return count;
}

int mp_cli_record_children(const char *path, time_t since)
{
	char dirbuf[PATH_MAX], basebuf[PATH_MAX], prefix[PATH_MAX];
	const char *dir, *base;
	struct dirent *de;
	size_t pl;
	int count = 0;
	DIR *d;

	snprintf(dirbuf, sizeof(dirbuf), "%s", path);
	snprintf(basebuf, sizeof(basebuf), "%s", path);
	dir = dirname(dirbuf);
	base = basename(basebuf);
	capture_base(prefix, sizeof(prefix), base);
	pl = strlen(prefix);
	if (!(d = opendir(dir)))
		return 0;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		char full[PATH_MAX * 2];
		struct stat sb;

		if (l > pl + 9 && !strncmp(de->d_name, prefix, pl) && de->d_name[pl] == '.' &&
		    de->d_name[pl + 1] >= '0' && de->d_name[pl + 1] <= '9' &&
		    !strcmp(de->d_name + l - 8, ".memprof")) {
			snprintf(full, sizeof(full), "%s/%s", dir, de->d_name);
			if (stat(full, &sb) == 0 && sb.st_mtime >= since)
				count++;
		}
	}
	closedir(d);
	return count;
}
