/* --image FILE@ADDR: code given as files, for the commands that read snapshot folders. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "etmkit/image.h"

int cli_image_arg(const char *cmd, const char *arg, ek_image_spec **v, size_t *n)
{
    ek_image_spec sp;
    ek_sbuf err = EK_SBUF_INIT;
    int rc = ek_image_spec_parse(arg, &sp, &err);
    if (rc) {
        cli_err("%s: --image %s", cmd, err.len ? err.p : ek_strerror(rc));
        ek_sbuf_free(&err);
        return CLI_USAGE;
    }
    ek_sbuf_free(&err);
    struct stat st;
    int e = 0;
    if (stat(sp.path, &st))
        e = errno;
    else if (S_ISDIR(st.st_mode))
        e = EISDIR;
    else if (access(sp.path, R_OK))
        e = errno;
    else if (!S_ISREG(st.st_mode))
        e = -1; /* a FIFO would wait for a writer, a device such as /dev/zero never ends */
    if (e) {
        cli_err("%s: --image %s: %s", cmd, sp.path, e < 0 ? "not a regular file" : strerror(e));
        ek_image_spec_free(&sp);
        return CLI_USAGE;
    }
    if (!sp.has_addr) {
        /* raw bytes need an address; an ELF without one goes to its link addresses */
        char m[4] = {0};
        FILE *f = fopen(sp.path, "rb");
        size_t got = f ? fread(m, 1, 4, f) : 0;
        if (f) fclose(f);
        if (got != 4 || memcmp(m, "\177ELF", 4)) {
            cli_err("%s: --image %s: not an ELF file: give the address of its first byte "
                    "(--image %s@ADDR)",
                    cmd, sp.path, sp.path);
            ek_image_spec_free(&sp);
            return CLI_USAGE;
        }
    }
    ek_image_spec *nv = realloc(*v, (*n + 1) * sizeof *nv);
    if (!nv) {
        ek_image_spec_free(&sp);
        cli_err("%s", ek_strerror(EK_ERR_NOMEM));
        return CLI_FAIL;
    }
    nv[(*n)++] = sp;
    *v = nv;
    return -1;
}

void cli_images_free(ek_image_spec *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ek_image_spec_free(&v[i]);
    free(v);
}
