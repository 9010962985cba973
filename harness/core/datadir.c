#include "datadir.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char data_dir[PATH_MAX];

static int exists(const char *dir, const char *rel)
{
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    return access(p, R_OK) == 0;
}

const char *conform_data_dir(void)
{
    if (data_dir[0]) return data_dir;
    const char *env = getenv("CONFORM_DATA");
    if (env && env[0]) {
        snprintf(data_dir, sizeof data_dir, "%s", env);
        return data_dir;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    snprintf(data_dir, sizeof data_dir, ".");
    if (n <= 0) return data_dir;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash) return data_dir;
    *slash = '\0';
    char cand[PATH_MAX];
    if (snprintf(cand, sizeof cand, "%s/../share/conform", exe) < (int)sizeof cand && exists(cand, "cases/conformance.json"))
        snprintf(data_dir, sizeof data_dir, "%s", cand);
    else if (snprintf(cand, sizeof cand, "%s/..", exe) < (int)sizeof cand && exists(cand, "cases/conformance.json"))
        snprintf(data_dir, sizeof data_dir, "%s", cand);
    /* tidy the path the reports print: resolve the .. */
    char real[PATH_MAX];
    if (strcmp(data_dir, ".") && realpath(data_dir, real)) snprintf(data_dir, sizeof data_dir, "%s", real);
    return data_dir;
}

const char *conform_program(void)
{
    static char prog[PATH_MAX];
    if (prog[0]) return prog;
    snprintf(prog, sizeof prog, "build/conform");
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return prog;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash) return prog;
    *slash = '\0';
    if (!exists(exe, "../cases/conformance.json")) snprintf(prog, sizeof prog, "%s/conform", exe);
    else snprintf(prog, sizeof prog, "%s/conform", strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe);
    return prog;
}

const char *conform_data_file(const char *rel, char *buf, size_t n)
{
    const char *d = conform_data_dir();
    if (!strcmp(d, ".")) snprintf(buf, n, "%s", rel);
    else snprintf(buf, n, "%s/%s", d, rel);
    return buf;
}

const char *conform_suite_path(const char *given, char *buf, size_t n)
{
    if (given[0] == '/' || access(given, F_OK) == 0) return given;
    conform_data_file(given, buf, n);
    return access(buf, R_OK) == 0 ? buf : given;
}
