/* A `conform run` stopped by SIGTERM half a second in: it must end on its own terms (exit 1, not
 * killed by the signal) and leave dir/report.json, returned, saying it was interrupted. */
#ifndef CONFORM_TESTS_SIGTERM_RUN_H
#define CONFORM_TESTS_SIGTERM_RUN_H

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "test_files.h"

static inline cJSON *sigterm_run(const char **argv, int argc, const char *rep)
{
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) _exit(cmd_run(argc, (char **)argv));
    usleep(500000);
    kill(pid, SIGTERM);
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status), "the run must end on its own terms, not die of the signal");
    cr_assert_eq(WEXITSTATUS(status), EXIT_FAIL);
    cJSON *r = test_report(rep, NULL);
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(r, "interrupted")));
    cr_assert_gt(cJSON_GetObjectItem(r, "cases_not_run")->valuedouble, 0);
    return r;
}

#endif
