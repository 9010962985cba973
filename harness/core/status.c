#include "status.h"

#include <string.h>

static const struct {
    const char *name;
    status_kind kind;
} table[CASE_N_STATUS] = {
    [CASE_PASSED] = {"passed", STATUS_PASS},
    [CASE_FAILED] = {"failed", STATUS_FAIL},
    [CASE_ERROR] = {"error", STATUS_ERROR},
    [CASE_WAIVED] = {"waived", STATUS_SKIP},
    [CASE_CRASHED] = {"crashed", STATUS_FAIL},
    [CASE_TIMEOUT] = {"timeout", STATUS_FAIL},
    [CASE_NOT_IMPLEMENTED] = {"not_implemented", STATUS_SKIP},
    [CASE_MISSING] = {"missing", STATUS_FAIL},
    [CASE_NOT_APPLICABLE] = {"not_applicable", STATUS_SKIP},
};

const char *status_name(case_status s) { return (unsigned)s < CASE_N_STATUS ? table[s].name : "error"; }

int status_known(const char *name)
{
    for (int s = 0; s < CASE_N_STATUS; s++) if (name && !strcmp(name, table[s].name)) return 1;
    return 0;
}

case_status status_parse(const char *name)
{
    for (int s = 0; s < CASE_N_STATUS; s++) if (name && !strcmp(name, table[s].name)) return (case_status)s;
    return CASE_ERROR;
}

status_kind status_kind_of(case_status s) { return (unsigned)s < CASE_N_STATUS ? table[s].kind : STATUS_ERROR; }

int status_fails(case_status s)
{
    status_kind k = status_kind_of(s);
    return k == STATUS_FAIL || k == STATUS_ERROR;
}
