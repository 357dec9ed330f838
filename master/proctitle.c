/*
 * proctitle.c - naming each process so `ps` shows its role, as nginx and
 * PostgreSQL do: the argv area is overwritten in place (after moving the
 * environment out of the way, since it usually follows argv in memory), and
 * the kernel's 15-character comm name is set with prctl for top and pgrep.
 * Called in the master before anything else reads argv or environ.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "master/master.h"

extern char **environ;

static char *title_area; /* original argv[0] */
static size_t title_cap; /* bytes from argv[0] to the end of the contiguous area */

void master_proctitle_init(int argc, char **argv)
{
    if (argc < 1 || !argv[0]) return;
    char *start = argv[0];
    char *end = start + strlen(start);
    for (int i = 1; i < argc; i++)
        if (argv[i] == end + 1) end = argv[i] + strlen(argv[i]);
    size_t nenv = 0;
    while (environ[nenv])
        nenv++;
    char **newenv = malloc((nenv + 1) * sizeof(char *));
    if (!newenv) return;
    for (size_t i = 0; i < nenv; i++) {
        if (environ[i] == end + 1) end = environ[i] + strlen(environ[i]);
        newenv[i] = strdup(environ[i]);
    }
    newenv[nenv] = NULL;
    environ = newenv;
    /* The caller keeps reading argv: point it at copies. */
    for (int i = 0; i < argc; i++)
        argv[i] = strdup(argv[i]);
    title_area = start;
    title_cap = (size_t)(end - start);
}

void master_set_proctitle(const char *title)
{
    if (title_area && title_cap > 1) {
        size_t n = strlen(title);
        if (n > title_cap - 1) n = title_cap - 1;
        memcpy(title_area, title, n);
        memset(title_area + n, 0, title_cap - n);
    }
    /* comm: "atticdb-server: frontend 3" -> "attic-frontend3" style. */
    char comm[16];
    const char *role = strchr(title, ':');
    role = role ? role + 2 : title;
    snprintf(comm, sizeof(comm), "attic-%s", role);
    for (char *p = comm; *p; p++)
        if (*p == ' ') *p = '-';
    prctl(PR_SET_NAME, comm, 0, 0, 0);
}
