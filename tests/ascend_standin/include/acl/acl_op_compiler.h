/* HOST STAND-IN for acl/acl_op_compiler.h (CANN), NOT the vendor header. Signature from
 * mirror-cann/ge inc/external/acl/acl_op_compiler.h (and Ascend/pytorch third_party/acl/libs/acl.cpp:72-88).
 * Implemented by tests/ascend_standin/standin_aclop.c. */
#ifndef CONFORM_STANDIN_ACL_OP_COMPILER_H
#define CONFORM_STANDIN_ACL_OP_COMPILER_H

#include "acl/acl.h"

typedef enum { ACL_ENGINE_SYS = 0, ACL_ENGINE_AICORE = 1, ACL_ENGINE_VECTOR = 2 } aclopEngineType;
typedef enum { ACL_COMPILE_SYS = 0, ACL_COMPILE_UNREGISTERED = 1 } aclopCompileType;

aclError aclopCompileAndExecute(const char *opType, int numInputs, const aclTensorDesc *const inputDesc[],
                                const aclDataBuffer *const inputs[], int numOutputs, const aclTensorDesc *const outputDesc[],
                                aclDataBuffer *const outputs[], const aclopAttr *attr, aclopEngineType engineType,
                                aclopCompileType compileFlag, const char *opPath, aclrtStream stream);
#endif
