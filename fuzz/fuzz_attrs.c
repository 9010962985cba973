/* libFuzzer target: attribute parsing from command-line text and JSON, for every op.
 * Input: NUL-separated "name", "value" pairs; the first byte picks the op. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "op.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    int n_ops = 0;
    while (conform_ops[n_ops]) n_ops++;
    const op_desc *op = conform_ops[data[0] % n_ops];
    char *text = malloc(size + 1);
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    problem_t p;
    problem_init(&p, op);
    char err[CONFORM_ERR_LEN], buf[512];
    const char *end = text + size - 1;
    for (const char *name = text; name < end;) {
        const char *value = name + strlen(name) + 1;
        if (value >= end) break;
        /* as --attr text, and as the JSON value of a suite */
        (void)problem_set_attr_text(&p, name, value, err, sizeof err);
        cJSON *j = cJSON_Parse(value);
        if (j) (void)problem_set_attr_json(&p, name, j, err, sizeof err);
        cJSON_Delete(j);
        name = value + strlen(value) + 1;
    }
    if (problem_finish_attrs(&p, err, sizeof err) == 0)
        for (int a = 0; a < op->n_attrs; a++) attr_text(&p.attr[a], buf, sizeof buf);
    problem_free(&p);
    free(text);
    return 0;
}
