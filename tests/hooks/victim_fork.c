/* victim_fork.c - fork, then exec.
 *
 * The parent allocates 1111 bytes, forks, waits, allocates 4444 bytes.
 * The child allocates and frees 2222 bytes, then execs this program with
 * "exec", which allocates 3333 bytes and exits. With default options the
 * parent's capture holds 1111 and 4444 only, the child's its 2222, the
 * exec'd program's its 3333: three files, none shared.
 *
 * "vfork": the same with vfork(); the child allocates nothing, first tries
 * to exec a missing program (exec fails in a child that shares the
 * parent's memory: the parent's capture must be left alone), then execs
 * this program. The parent's capture holds 1111 and 4444, the exec'd
 * program's its 3333: two files.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	void *volatile p, *volatile q;
	int status;
	pid_t pid;

	if (argc > 1 && !strcmp(argv[1], "exec")) {
		p = malloc(3333);
		return p ? 0 : 3;
	}
	p = malloc(1111);
	if (argc > 1 && !strcmp(argv[1], "vfork")) {
		pid = vfork();
		if (pid == 0) {
			execl("/nonexistent/memprof-victim", "x", (char *)NULL);
			execl("/proc/self/exe", "victim_fork", "exec", (char *)NULL);
			_exit(4);
		}
	} else {
		pid = fork();
	}
	if (pid < 0)
		return 3;
	if (pid == 0) {
		q = malloc(2222);
		free(q);
		execl("/proc/self/exe", argv[0], "exec", (char *)NULL);
		_exit(4);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return 5;
	q = malloc(4444);
	free(q);
	free(p);
	return 0;
}
