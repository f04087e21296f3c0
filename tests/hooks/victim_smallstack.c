/* victim_smallstack.c - the hooks' heavier paths on a thread whose stack is
 * PTHREAD_STACK_MIN (16 KiB): closing the capture, opening one in a fork
 * child, exec with a long argument list. Each used 13-32 KiB of the
 * calling thread's stack before, and crashed such a program.
 *
 *   victim_smallstack exit   the small thread: 1000 x malloc(77)/free, then
 *                            exit(0) (the capture closes on it)
 *   victim_smallstack fork   the small thread forks; the child (on that
 *                            same small stack) allocates and frees 2222 B,
 *                            opening its own capture, and _exit(0)s; the
 *                            parent returns the child's status
 *   victim_smallstack execl  the small thread execl()s this program with
 *                            72 arguments ("args" mode: malloc(argc), 72
 *                            B, freed; exit 0 when argc is 72)
 * Exit status 0 when all went as described (3: setup failed).
 */
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define A10 "a", "a", "a", "a", "a", "a", "a", "a", "a", "a"

static const char *mode;

static void *small(void *unused)
{
	int i, st;
	pid_t pid;

	if (!strcmp(mode, "exit")) {
		for (i = 0; i < 1000; i++) {
			void *volatile p = malloc(77);
			free(p);
		}
		exit(0);
	}
	if (!strcmp(mode, "fork")) {
		pid = fork();
		if (pid == 0) {
			void *volatile p = malloc(2222);
			free(p);
			_exit(0);
		}
		exit(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) ? WEXITSTATUS(st) : 3);
	}
	if (!strcmp(mode, "execl")) {
		execl("/proc/self/exe", "victim_smallstack", "args", A10, A10, A10, A10, A10, A10, A10,
		      (char *)NULL);
		exit(4);
	}
	return unused;
}

int main(int argc, char **argv)
{
	pthread_attr_t attr;
	pthread_t th;

	mode = argc > 1 ? argv[1] : "exit";
	if (!strcmp(mode, "args")) {
		void *volatile p = malloc((size_t)argc);
		free(p);
		return argc == 72 ? 0 : 5;
	}
	if (pthread_attr_init(&attr) || pthread_attr_setstacksize(&attr, PTHREAD_STACK_MIN) ||
	    pthread_create(&th, &attr, small, NULL))
		return 3;
	pthread_join(th, NULL);
	return 3; /* the thread ends the process */
}
