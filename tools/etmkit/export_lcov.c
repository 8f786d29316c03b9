/* etmkit export --format=lcov: finds the ELF file of each binary of the profile (its symbols
 * and DWARF line tables, and the file with its code) and has the profile library write its
 * coverage (ek_profile_write_lcov). See docs/PROFILES.md, "Coverage (lcov)". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "export_lcov.h"
#include "etmkit/symbols.h"

/* the first file perf would read the binary's code from (the build-id cache, then symfs) */
static char *find_code(const ek_profile_binary *id, const char *hex, const cli_decode *d)
{
    char **list = NULL;
    size_t n = 0;
    char *found = NULL;
    if (ek_buildid_data_candidates(id->path, hex, d->so.symfs, d->so.buildid_dir, &list, &n) < 0)
        return NULL;
    for (size_t i = 0; i < n && !found; i++) {
        struct stat sb;
        if (!stat(list[i], &sb) && S_ISREG(sb.st_mode)) found = strdup(list[i]);
    }
    ek_path_list_free(list, n);
    return found;
}

static int write_one(const ek_profile *p, size_t bin, const char *elf, const char *code,
                     ek_sbuf *out, ek_lcov_stats *sum)
{
    ek_lcov_stats st;
    int rc = ek_profile_write_lcov(p, bin, elf, code, out, &st);
    if (rc) return rc;
    sum->files += st.files;
    sum->lines += st.lines;
    sum->lines_hit += st.lines_hit;
    sum->functions += st.functions;
    sum->functions_hit += st.functions_hit;
    sum->branches += st.branches;
    sum->branches_hit += st.branches_hit;
    sum->has_lines += st.has_lines;
    return 0;
}

static void summary(const cli_decode *d, const ek_lcov_stats *s, size_t binaries)
{
    if (d->quiet) return;
    fprintf(stderr,
            "etmkit export: lcov: %zu binar%s (%d with line tables), %llu source record%s: "
            "%llu of %llu lines, %llu of %llu functions, %llu of %llu branches hit\n",
            binaries, binaries == 1 ? "y" : "ies", s->has_lines, (unsigned long long)s->files,
            s->files == 1 ? "" : "s", (unsigned long long)s->lines_hit,
            (unsigned long long)s->lines, (unsigned long long)s->functions_hit,
            (unsigned long long)s->functions, (unsigned long long)s->branches_hit,
            (unsigned long long)s->branches);
}

int export_lcov(const ek_profile *p, const char *binary, const cli_decode *d, ek_sbuf *out)
{
    ek_lcov_stats sum;
    memset(&sum, 0, sizeof sum);
    if (binary) {
        ek_elf_info *in = NULL;
        if (ek_elf_info_read(binary, NULL, &in)) {
            cli_err("export: %s: cannot read the ELF file", binary);
            return CLI_FAIL;
        }
        /* every binary that is the file (one build-id under two paths adds up), in any order */
        size_t *hit = NULL, nhit = 0;
        int rc =
            ek_profile_binaries_for_elf(p, in->build_id, in->build_id_len, binary, 0, &hit, &nhit);
        /* --binary may be a debug file without code: the code then comes from the recording's */
        char *code = NULL;
        for (size_t k = 0; !rc && k < nhit && !code; k++) {
            ek_profile_binary id;
            ek_profile_binary_get(p, hit[k], &id);
            char hex[2 * EK_PROFILE_BUILD_ID_MAX + 1] = "";
            if (id.build_id_len) ek_build_id_hex(id.build_id, id.build_id_len, hex, sizeof hex);
            code = find_code(&id, id.build_id_len ? hex : NULL, d);
        }
        free(hit);
        if (!rc)
            rc = ek_profile_write_lcov_for_elf(p, in->build_id, in->build_id_len, binary, code, 0,
                                               out, &sum, NULL);
        if (rc == EK_ERR_NOT_FOUND)
            cli_elf_not_found("export", "lcov", binary, in);
        else if (rc)
            cli_err("export: %s: %s", binary, ek_strerror(rc));
        ek_elf_info_free(in);
        free(code);
        if (rc) return CLI_FAIL;
        summary(d, &sum, 1);
        return CLI_OK;
    }
    size_t *order = NULL, n = 0, done = 0;
    if (ek_profile_binary_order(p, &order, &n)) {
        cli_err("export: %s", ek_strerror(EK_ERR_NOMEM));
        return CLI_FAIL;
    }
    ek_sbuf missing = EK_SBUF_INIT;
    int status = CLI_OK;
    for (size_t i = 0; i < n && status == CLI_OK; i++) {
        ek_profile_binary id;
        ek_profile_binary_get(p, order[i], &id);
        char hex[2 * EK_PROFILE_BUILD_ID_MAX + 1] = "";
        if (id.build_id_len) ek_build_id_hex(id.build_id, id.build_id_len, hex, sizeof hex);
        char *elf = NULL, *code = NULL;
        if (!strcmp(id.path, "[kernel.kallsyms]")) {
            if (d->so.vmlinux) elf = strdup(d->so.vmlinux);
        } else if (id.path[0] && id.path[0] != '[') {
            elf = ek_buildid_find(id.path, id.build_id_len ? hex : NULL, d->so.symfs,
                                  d->so.buildid_dir);
            code = find_code(&id, id.build_id_len ? hex : NULL, d);
        }
        if (!elf) {
            ek_sbuf_printf(&missing, "  %s%s%s%s%s\n", id.path[0] ? id.path : "(no path)",
                           hex[0] ? " (build-id " : "", hex, hex[0] ? ")" : "",
                           strcmp(id.path, "[kernel.kallsyms]") ? "" : ": give -k vmlinux");
        } else {
            int rc = write_one(p, order[i], elf, code, out, &sum);
            if (rc == EK_ERR_FORMAT) {
                /* a relocatable kernel module, or not an ELF file: no addresses of its own */
                ek_sbuf_printf(&missing, "  %s (%s: not an executable or shared ELF file)\n",
                               id.path, elf);
            } else if (rc) {
                cli_err("export: %s: %s", elf, ek_strerror(rc));
                status = CLI_FAIL;
            } else {
                done++;
            }
        }
        free(elf);
        free(code);
    }
    free(order);
    if (status == CLI_OK && !done) {
        cli_err("export: --format=lcov: no binary of the profile has an ELF file that was "
                "found%s",
                missing.len ? ":" : "");
        if (missing.len) fputs(missing.p, stderr);
        status = CLI_FAIL;
    } else if (status == CLI_OK) {
        if (missing.len && !d->quiet)
            fprintf(stderr, "etmkit export: lcov: no coverage for (no ELF file found):\n%s",
                    missing.p);
        summary(d, &sum, done);
    }
    ek_sbuf_free(&missing);
    return status;
}
