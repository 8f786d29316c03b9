#include "cli.h"

int cmd_gen(int argc, char **argv)
{
    cli_err("%s: not implemented yet", argv[0]);
    return CLI_USAGE;
}
