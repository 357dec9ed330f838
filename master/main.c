/* main.c - atticdb-server's entry point: everything happens in the master. */
#include "master/master.h"

int main(int argc, char **argv)
{
    master_proctitle_init(argc, argv);
    return master_run(argc, argv);
}
