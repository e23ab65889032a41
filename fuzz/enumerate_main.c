/*
 * enumerate_main.c - the standalone `zofuzz_enumerate` binary: the same
 * command line as `zofuzz enumerate` (see zo_enumerate_main in
 * enumerate.h and docs/bounded-proofs.md).
 */
#include "enumerate.h"

int main(int argc, char **argv)
{
    return zo_enumerate_main(argc, argv);
}
