/* conform verify: the proofs of every op's reference (verify.h), with an optional verify.json. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "help.h"
#include "report.h"
#include "verify.h"

int cmd_verify(int argc, char **argv)
{
    const char *only = NULL, *report_dir = NULL;
    if (cli_once("verify", argc, argv)) return EXIT_USAGE;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--op") && i + 1 < argc) only = argv[++i];
        else if (!strcmp(argv[i], "--golden-dir") && i + 1 < argc) {
            if (verify_set_golden_dir(argv[++i])) return EXIT_USAGE;
        }
        else if (!strcmp(argv[i], "--report-dir") && i + 1 < argc) report_dir = argv[++i];
        else return cli_unknown_option("verify", argv[i], i + 1 < argc ? argv[i + 1] : NULL);
    }
    if (only && !op_find(only)) return cli_unknown_op("--op", only);
    char err[CONFORM_ERR_LEN];
    if (report_dir && dir_usable(report_dir, err, sizeof err)) /* before the proofs run */
        return usage_error("--report-dir %s: %s", report_dir, err);
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "schema", "conform-verify");
    cJSON_AddNumberToObject(root, "schema_version", 1);
    cJSON *proofs = cJSON_AddArrayToObject(root, "proofs");
    int violated = 0, n = 0;
    for (int i = 0; conform_ops[i]; i++) {
        if (only && strcmp(only, conform_ops[i]->name)) continue;
        violated += verify_op(conform_ops[i], 0, proofs);
        for (int k = 0; conform_ops[i]->proofs && conform_ops[i]->proofs[k].kind; k++) n++;
    }
    printf("verify: %d proofs, %d passed, %d failed\n", n, n - violated, violated);
    int rc = violated ? EXIT_FAIL : EXIT_OK;
    if (report_dir) {
        char path[1100];
        snprintf(path, sizeof path, "%s/verify.json", report_dir);
        if (mkdir_p(report_dir, err, sizeof err) || write_json_atomic(path, root, err, sizeof err)) rc = usage_error("%s", err);
    }
    cJSON_Delete(root);
    return rc;
}
