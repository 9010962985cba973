/* conform export: a suite's cases as files a device runner reads (inputs as .npy at a dtype, a
 * manifest naming every case, its attributes, its inputs with their hashes and where each output
 * goes), for `conform run --impl dir:DIR` to judge afterwards.
 *
 * DIR/manifest.json (schema "conform-export"; the keys below are stable, others may be added):
 *   schema, schema_version, suite, suites, seed, dtype, npy_descr, hash, outputs_from,
 *   cases: [{id, op, suite, seed, attrs: {name: typed JSON value},
 *            inputs: {name: path relative to DIR}, input_hashes: {name: 16 hex digits},
 *            input_shapes: {name: [...]},
 *            outputs: {name: {path, shape, computed}},
 *            expect_error (cases that must be refused: no files), invalid (cases run refuses)}] */
#ifndef CONFORM_EXPORT_H
#define CONFORM_EXPORT_H

#define CONFORM_EXPORT_SCHEMA "conform-export"
#define CONFORM_EXPORT_SCHEMA_VERSION 1

/* The stems of the raw forms of an output beside its .npy: NAME<suffix>.bin, headerless (run
   --impl dir: reads the first there is when the .npy is not; export removes every one of an
   earlier export, so each output in DIR was written after the manifest) */
#define CONFORM_RAW_SUFFIXES {"", "_float32", "_float16", "_bfloat16", "_float64"}

#endif
