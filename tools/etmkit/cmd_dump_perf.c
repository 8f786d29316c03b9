#include "cli.h"

int cmd_dump_perf(int argc, char **argv)
{
    cli_err("%s: not implemented yet", argv[0]);
    return CLI_USAGE;
}
