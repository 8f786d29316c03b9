/* ek_profile_read: format detection, and read-then-merge so that damage changes nothing. */
#include <string.h>

#include "profile/profile_int.h"
#include "profile/text.h"

ek_profile_format ek_profile_detect(const char *text, size_t len)
{
    static const char magic[] = "etmkit-branch-list ";
    if (!text) len = 0;
    if (len >= sizeof magic - 1 && !memcmp(text, magic, sizeof magic - 1))
        return EK_PROFILE_FMT_BRANCH_LIST;
    if (len == 0 || (text[0] >= '0' && text[0] <= '9') || (len >= 2 && !memcmp(text, "//", 2)))
        return EK_PROFILE_FMT_AUTOFDO;
    return EK_PROFILE_FMT_UNKNOWN;
}

int ek_profile_read(ek_profile *p, const char *text, size_t len, ek_profile_format fmt,
                    const ek_profile_read_opts *opts, const char *fname, const ek_diag *diag)
{
    if (!p || (!text && len)) return EK_ERR_ARG;
    if (opts && opts->size < sizeof *opts) return EK_ERR_ARG;
    if (fmt == EK_PROFILE_FMT_UNKNOWN) {
        fmt = ek_profile_detect(text, len);
        if (fmt == EK_PROFILE_FMT_UNKNOWN) {
            ek_diag_emit(diag, EK_SEV_ERROR, "profile.unknown-format", EK_ERR_FORMAT, fname, -1, 0,
                         -1, "neither AutoFDO text nor an etmkit branch list (first bytes)");
            return EK_ERR_FORMAT;
        }
    }
    if (fmt == EK_PROFILE_FMT_BOLT) {
        ek_diag_emit(diag, EK_SEV_ERROR, "profile.unsupported", EK_ERR_UNSUPPORTED, fname, -1, -1,
                     -1, "BOLT fdata holds symbol offsets, not addresses: it cannot be read back");
        return EK_ERR_UNSUPPORTED;
    }
    if (fmt != EK_PROFILE_FMT_AUTOFDO && fmt != EK_PROFILE_FMT_BRANCH_LIST) return EK_ERR_ARG;
    ek_profile *tmp;
    int rc = ek_profile_new(&tmp);
    if (rc) return rc;
    prof_lines l;
    prof_lines_init(&l, text, len, fname, diag);
    if (memchr(text ? text : "", 0, len)) {
        /* name the line holding the NUL */
        const char *z = memchr(text, 0, len);
        while (prof_lines_next(&l) && l.pos <= (size_t)(z - text))
            ;
        rc = prof_lines_error(&l, "a NUL byte (not text)");
    } else if (fmt == EK_PROFILE_FMT_AUTOFDO)
        rc = prof_read_autofdo(tmp, &l, opts);
    else
        rc = prof_read_branch_list(tmp, &l);
    if (!rc) rc = prof_merge(p, tmp, fname, diag);
    ek_profile_free(tmp);
    return rc;
}
