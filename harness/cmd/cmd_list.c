/* conform list: the op table as text or JSON. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "help.h"
#include "status.h"

static const char *kind_text(attr_kind k)
{
    switch (k) {
    case ATTR_INT: return "int";
    case ATTR_FLOAT: return "float";
    case ATTR_BOOL: return "bool";
    case ATTR_STRING: return "string";
    case ATTR_INT_LIST: return "int list";
    }
    return "?";
}

int cmd_list(int argc, char **argv)
{
    int json = 0;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) json = 1;
        else return cli_unknown_option("list", argv[i], NULL);
    }
    if (json) {
        cJSON *root = cJSON_CreateObject(), *ops = cJSON_AddArrayToObject(root, "ops");
        for (int i = 0; conform_ops[i]; i++) {
            const op_desc *op = conform_ops[i];
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "name", op->name);
            cJSON_AddStringToObject(o, "summary", op->summary);
            cJSON_AddStringToObject(o, "spec", op->spec);
            cJSON *in = cJSON_AddArrayToObject(o, "inputs"), *out = cJSON_AddArrayToObject(o, "outputs");
            cJSON *at = cJSON_AddArrayToObject(o, "attrs");
            for (int k = 0; k < op->n_inputs; k++) {
                cJSON *t = cJSON_CreateObject();
                cJSON_AddStringToObject(t, "name", op->inputs[k].name);
                cJSON_AddStringToObject(t, "doc", op->inputs[k].doc);
                cJSON_AddItemToArray(in, t);
            }
            for (int k = 0; k < op->n_outputs; k++) {
                cJSON *t = cJSON_CreateObject();
                cJSON_AddStringToObject(t, "name", op->outputs[k].name);
                cJSON_AddStringToObject(t, "doc", op->outputs[k].doc);
                cJSON_AddItemToArray(out, t);
            }
            for (int k = 0; k < op->n_attrs; k++) {
                cJSON *t = cJSON_CreateObject();
                cJSON_AddStringToObject(t, "name", op->attrs[k].name);
                cJSON_AddStringToObject(t, "type", kind_text(op->attrs[k].kind));
                if (op->attrs[k].def) cJSON_AddStringToObject(t, "default", op->attrs[k].def);
                else cJSON_AddBoolToObject(t, "required", 1);
                cJSON_AddStringToObject(t, "doc", op->attrs[k].doc);
                cJSON_AddItemToArray(at, t);
            }
            cJSON_AddItemToArray(ops, o);
        }
        /* the case statuses and whether each fails a run (status.h), for tools reading reports */
        cJSON *st = cJSON_AddArrayToObject(root, "statuses");
        static const char *const kinds[] = {"pass", "fail", "error", "skip"};
        for (int s = 0; s < CASE_N_STATUS; s++) {
            cJSON *t = cJSON_CreateObject();
            cJSON_AddStringToObject(t, "name", status_name((case_status)s));
            cJSON_AddStringToObject(t, "kind", kinds[status_kind_of((case_status)s)]);
            cJSON_AddBoolToObject(t, "fails", status_fails((case_status)s));
            cJSON_AddItemToArray(st, t);
        }
        char *s = cJSON_Print(root);
        printf("%s\n", s);
        cJSON_free(s);
        cJSON_Delete(root);
        return EXIT_OK;
    }
    for (int i = 0; conform_ops[i]; i++) {
        const op_desc *op = conform_ops[i];
        printf("%s: %s (%s)\n", op->name, op->summary, op->spec);
        for (int k = 0; k < op->n_inputs; k++) printf("  input  %-16s %s\n", op->inputs[k].name, op->inputs[k].doc);
        for (int k = 0; k < op->n_outputs; k++) printf("  output %-16s %s\n", op->outputs[k].name, op->outputs[k].doc);
        for (int k = 0; k < op->n_attrs; k++)
            printf("  attr   %-16s %-8s %s%s%s\n", op->attrs[k].name, kind_text(op->attrs[k].kind), op->attrs[k].doc,
                   op->attrs[k].def ? ", default " : " (required)", op->attrs[k].def ? op->attrs[k].def : "");
    }
    return EXIT_OK;
}
