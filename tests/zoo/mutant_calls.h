/* The calls a suite makes to a zoo plugin, recorded once (tests/zoo/mutant_record.c) and replayed
 * against each generated mutant and the bug-free kernels (tests/zoo/mutant_replay.c,
 * tools/zoo_mutants.py). One call in the file: "CALL", the op, the attributes, the inputs (names,
 * dims, data) and the outputs (names, dims, and the contents conform handed the plugin, or none
 * when an output is not asked for). Strings are a length then bytes; counts are int64. */
#ifndef ZOO_MUTANT_CALLS_H
#define ZOO_MUTANT_CALLS_H
#define ZOO_CALL_MAGIC "CALL"
#endif
