/* The op table: ops.def, one line per op. */
#include <string.h>

#include "op.h"

#define CONFORM_OP(name) extern const op_desc op_##name;
#include "ops.def"
#undef CONFORM_OP

const op_desc *const conform_ops[] = {
#define CONFORM_OP(name) &op_##name,
#include "ops.def"
#undef CONFORM_OP
    NULL,
};

const op_desc *op_find(const char *name)
{
    for (int i = 0; conform_ops[i]; i++)
        if (!strcmp(conform_ops[i]->name, name)) return conform_ops[i];
    return NULL;
}
