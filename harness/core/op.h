/* The op table: every operator the harness knows is one op_desc (see ops.c). An op file
 * (op_<family>.c) gives, benchdnn style: the problem description (tensors, attributes,
 * validation), input filling, the reference call, the optimized call and the tolerance model. */
#ifndef CONFORM_OP_H
#define CONFORM_OP_H

#include <gsl/gsl_rng.h>
#include <cJSON.h>

#include "conform_opt.h"
#include "conform_range.h"
#include "conform_ref.h"
#include "tensor.h"

#define CONFORM_MAX_TENSORS 4
#define CONFORM_MAX_ATTRS 16
#define CONFORM_MAX_LIST 16
#define CONFORM_ERR_LEN 512

typedef enum { ATTR_INT, ATTR_FLOAT, ATTR_BOOL, ATTR_STRING, ATTR_INT_LIST } attr_kind;

typedef struct {
    const char *name;
    attr_kind kind;
    const char *def; /* default as command-line text; NULL: required */
    const char *doc;
} attr_spec;

typedef struct {
    attr_kind kind;
    int64_t i;   /* ATTR_INT, ATTR_BOOL (0/1) */
    double f;    /* ATTR_FLOAT */
    char s[64];  /* ATTR_STRING */
    int n;       /* ATTR_INT_LIST length */
    int64_t list[CONFORM_MAX_LIST];
} attr_value;

typedef struct problem problem_t;

/* An input's own generator (rois, offsets, a grid), reading its knobs from spec = gen[name]
 * (may be NULL); the tensor is already allocated to its shape. 0 ok, -1 with err. */
typedef int (*tensor_gen)(problem_t *p, int index, const cJSON *spec, gsl_rng *rng, char *err, size_t errlen);
typedef struct {
    const char *input; /* the input's name; NULL: none */
    tensor_gen fill;
} input_gen;

typedef struct {
    const char *name;
    const char *doc; /* shape and meaning, e.g. "[K, 5] (batch_index, x1, y1, x2, y2)" */
} tensor_spec;

/* The tolerance model of one output: its two constants and their reasons. The formula they enter
 * is stated once, in judge/compare.h (CONFORM_TOL_FORMULA, computed by compare_element_tol); k_pos
 * sizes the position error the reference is handed, CONFORM_POS_REL_ERR there (float32's u, not
 * the dtype's). */
typedef struct {
    double k_val;
    const char *k_val_why;
    double k_pos;
    const char *k_pos_why;
} tol_model;

typedef struct op_desc op_desc;
typedef struct hunt_desc hunt_desc; /* hunt.h: how conform hunt draws and shrinks the op's problems */

/* A proof that the op's reference is right, by a check that does not trust it (see verify.h). */
typedef struct {
    int checks;        /* comparisons made */
    double worst;      /* worst measured discrepancy, in the proof's unit */
    double limit;      /* what worst is held to */
    char detail[320];  /* what was measured, for people */
} proof_result;

typedef struct {
    const char *kind; /* "adjoint", "finite difference", "metamorphic", "golden" */
    const char *what; /* the relation, in one line */
    /* 0: holds; 1: violated; -1: could not run (detail says why). op is the op under proof:
     * tests hand in a copy with a deliberately broken reference. */
    int (*run)(const op_desc *op, proof_result *r);
} proof_desc;

struct problem {
    const op_desc *op;
    attr_value attr[CONFORM_MAX_ATTRS];  /* in op->attrs order */
    int attr_set[CONFORM_MAX_ATTRS];     /* 0 unset, 1 given, 2 from its default */
    tensor_t in[CONFORM_MAX_TENSORS];     /* in op->inputs order */
    shape_t out_shape[CONFORM_MAX_TENSORS];
    int out_skipped[CONFORM_MAX_TENSORS]; /* the op was asked not to compute this output */
};

struct op_desc {
    const char *name;
    const char *summary;
    const char *spec; /* spec section */
    int n_inputs, n_outputs, n_attrs;
    const tensor_spec *inputs, *outputs;
    const attr_spec *attrs;
    input_gen gen; /* the input with its own generator (rois, offsets, a grid); the others: fill_values */
    /* Checks attributes and input shapes (and input values where the spec has rules on them),
     * sets out_shape and out_skipped. 0 ok; -1 with err = "<op>: <tensor/attr> <value>: <rule>". */
    int (*validate)(problem_t *p, char *err, size_t errlen);
    /* Reference outputs (allocated by the caller, out_shape) with optional bounds per output. */
    void (*reference)(const problem_t *p, double **out, ref_bounds *bounds);
    /* The plain golden (reference/plain/): the spec's straight loops, called as reference is; its
     * values and bounds equal the reference's bit for bit (make check-golden); NULL: none. */
    void (*plain)(const problem_t *p, double **out, ref_bounds *bounds);
    /* Optimized outputs from float32 inputs. Returns a CONFORM_* status. */
    int (*optimized)(const problem_t *p, const float **in, float **out, const conform_exec *ex);
    /* Optional: the range every legal evaluation of output o's elements can reach (conform_range.h,
     * r's arrays sized to the output, pos_rel_err set); 0 when it filled them, -1 when output o has
     * none. NULL: no output has one. An element outside it fails even within its tolerance. */
    int (*range)(const problem_t *p, int o, ref_range *r);
    const tol_model *tol; /* one per output */
    const proof_desc *proofs; /* ends with an entry whose kind is NULL */
    const hunt_desc *hunt;    /* ops/<family>/hunt_<family>.c */
};

/* In a function with char *err and size_t errlen (validate, a generator, a suite reader): the
 * message into err, then return -1. */
#define FAIL(...) do { snprintf(err, errlen, __VA_ARGS__); return -1; } while (0)

/* An op's tensors and attributes with their counts, in an op_desc initializer. */
#define CONFORM_LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define OP_TENSORS(in, out) .n_inputs = CONFORM_LEN(in), .inputs = in, .n_outputs = CONFORM_LEN(out), .outputs = out
#define OP_ATTRS(a) .n_attrs = CONFORM_LEN(a), .attrs = a

/* ops.c */
extern const op_desc *const conform_ops[];
const op_desc *op_find(const char *name);
int op_attr_index(const op_desc *op, const char *name);
int op_input_index(const op_desc *op, const char *name);

/* problem.c: attributes from text and JSON, defaults, cleanup */
int problem_init(problem_t *p, const op_desc *op);
/* Fills the inputs (already allocated to their shapes) from a case's "gen" object (may be NULL),
 * in input order: each from gen[name], by the op's generator for it or fill_values. */
int problem_fill(problem_t *p, const cJSON *gen, gsl_rng *rng, char *err, size_t errlen);
/* Output i's shape from rank dims; -1 with "<op>: output <name> <shape>: too large" when its
 * element count overflows. */
int problem_set_output(problem_t *p, int i, int rank, const int64_t *dims, char *err, size_t errlen);
void problem_free(problem_t *p);
/* Sets attribute `name` from command-line text ("3", "0.25", "true", "2,256,64,64", "NHWC"). */
int problem_set_attr_text(problem_t *p, const char *name, const char *text, char *err, size_t errlen);
int problem_set_attr_json(problem_t *p, const char *name, const cJSON *v, char *err, size_t errlen);
/* Fills unset attributes from their defaults; error on a missing required one. */
int problem_finish_attrs(problem_t *p, char *err, size_t errlen);
const attr_value *problem_attr(const problem_t *p, const char *name);
int64_t problem_int(const problem_t *p, const char *name);
double problem_float(const problem_t *p, const char *name);
/* Memory a problem needs in the harness: inputs in double and float, every output as the
 * reference, its four bound arrays and the float result. */
double problem_bytes(const problem_t *p);
/* The memory budget in bytes (--max-memory); a problem over it is refused, not attempted.
 * Default: half the machine's physical memory. This and conform_sample_budget are settings of the
 * process, as the environment is: set from the command line before any case is built (tests and
 * fuzz targets set them once), read wherever a problem is checked, by every op's validate among
 * others (a parameter would run through each of them). */
extern double conform_memory_budget;
double memory_budget(void); /* in bytes, the default resolved; shared by the jobs of a run */
/* 0 when p fits the budget, else -1 with a message naming the sizes. */
int problem_check_budget(const problem_t *p, char *err, size_t errlen);

/* Work budget: the sample evaluations a problem may need (rois with adaptive sampling can ask
 * for any number); a problem over it is refused with the count (--max-samples). A setting of the
 * process, as conform_memory_budget. */
extern double conform_sample_budget;
int problem_check_samples(const char *op, double samples, char *err, size_t errlen);

/* Text of an attribute as the command line takes it back. */
const char *attr_text(const attr_value *v, char *buf, size_t len);

#endif
