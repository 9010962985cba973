/* grid_sampler_2d and grid_sampler_2d_backward (spec 7): problem description, input filling,
 * reference and optimized calls, tolerance model. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fill.h"
#include "op.h"
#include "plain/conform_plain.h"

extern const proof_desc grid_sampler_proofs[], grid_sampler_bwd_proofs[];
extern const hunt_desc hunt_grid_sampler, hunt_grid_sampler_bwd; /* hunt_<family>.c */

/* ---- tolerance model (every output) ------------------------------------------------------ */

/* the derivation of both constants: docs/ops/grid_sampler_2d.md, "Tolerance" */
#define GRID_SAMPLER_TOL {\
    /* 12 roundings in a bicubic weight relative to its polynomial's sum of |term| M, on two axes,
       plus 1 each in w_y*w_x, *value, *grad_output, *the coordinate multiplier */\
    .k_val = 28,\
    .k_val_why = "roundings per term relative to the weights' polynomial magnitudes: 12 per bicubic weight "\
                 "on each axis, 1 each in w_y*w_x, *value, *grad_output, *multiplier (bilinear needs 4); "\
                 "plus 1 per term summed (docs/ops/grid_sampler_2d.md)",\
    /* pos_rel_err = u: ref_grid_sampler_box charges each rounding of the position at its own magnitude */\
    .k_pos = 1,\
    .k_pos_why = "pos_rel_err = u: the reference's position box (ref_grid_sampler_box) charges each rounding of "\
                 "unnormalize, the weights' fraction and reflection's folds at its own magnitude "\
                 "(docs/ops/grid_sampler_2d.md)",}

static const tol_model grid_sampler_tol[2] = {GRID_SAMPLER_TOL, GRID_SAMPLER_TOL}; /* the forward reads the first */

/* ---- the grid generator ------------------------------------------------------------------ */

/* grid value whose unnormalized coordinate is i (rounded to float32) */
static double grid_for(double i, int64_t S, int ac)
{
    if (ac) return round_f32(S > 1 ? 2.0 * i / (double)(S - 1) - 1.0 : 0.0);
    return round_f32((2.0 * i + 1.0) / (double)S - 1.0);
}

/* adds to grid [N, Ho, Wo, 2] the normalized coordinates of output pixel (wo, ho) stretched over
 * the input: with align_corners the corner centres meet, without it the outer edges */
static void add_identity(tensor_t *grid, int ac)
{
    const int64_t Ho = grid->shape.dims[1], Wo = grid->shape.dims[2], n = tensor_numel(grid);
    for (int64_t k = 0; k + 1 < n; k += 2) {
        const int64_t wo = (k / 2) % Wo, ho = (k / 2 / Wo) % Ho;
        grid->data[k] = round_f32(grid->data[k] + grid_for((double)wo, Wo, ac));
        grid->data[k + 1] = round_f32(grid->data[k + 1] + grid_for((double)ho, Ho, ac));
    }
}

/* Fills grid [N, Ho, Wo, 2]: values as fill_values ("lo"/"hi" default -1.2/1.2, nan_frac, inf_frac),
 * plus, with "base": "identity", the grid that maps output pixel centres onto the input's (a warp:
 * the values are then displacements in normalized units, as a flow or a small transform), then special_frac of the coordinates replaced by a special point: -1, 1, 0, a border pixel
 * centre (i = 0 or S-1), a pixel centre (integer i, bilinear cell switch) or a half-integer i
 * (a tie of nearest). */
static int fill_grid(tensor_t *grid, const cJSON *g, gsl_rng *rng, int64_t H, int64_t W, int ac, char *err,
                     size_t errlen)
{
    const cJSON *data = g ? cJSON_GetObjectItemCaseSensitive(g, "data") : NULL;
    if (data) return fill_from_json(grid->data, tensor_numel(grid), data, "grid", err, errlen);
    cJSON *spec = g ? cJSON_Duplicate(g, 1) : cJSON_CreateObject();
    if (!cJSON_GetObjectItemCaseSensitive(spec, "lo")) cJSON_AddNumberToObject(spec, "lo", -1.2);
    if (!cJSON_GetObjectItemCaseSensitive(spec, "hi")) cJSON_AddNumberToObject(spec, "hi", 1.2);
    int rc = fill_values(grid, spec, rng, "grid", err, errlen);
    cJSON_Delete(spec);
    if (rc) return rc;
    const char *base = g ? cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(g, "base")) : NULL;
    if (base && strcmp(base, "identity")) {
        snprintf(err, errlen, "grid generator: base '%s': only \"identity\" is known", base);
        return -1;
    }
    if (base && grid->shape.rank == 4) add_identity(grid, ac);
    double special = json_number(g, "special_frac", 0.0);
    int64_t n = tensor_numel(grid);
    for (int64_t k = 0; k < n && special > 0 && H > 0 && W > 0; k++) {
        if (gsl_rng_uniform(rng) >= special) continue;
        int64_t S = k % 2 ? H : W;
        double v;
        switch (gsl_rng_uniform_int(rng, 7)) {
        case 0: v = -1; break;
        case 1: v = 1; break;
        case 2: v = 0; break;
        case 3: v = grid_for(0, S, ac); break;
        case 4: v = grid_for((double)(S - 1), S, ac); break;
        case 5: v = grid_for((double)gsl_rng_uniform_int(rng, (unsigned long)S + 2) - 1.0, S, ac); break;
        default: v = grid_for((double)gsl_rng_uniform_int(rng, (unsigned long)S + 2) - 1.5, S, ac); break;
        }
        grid->data[k] = v;
    }
    return 0;
}

/* ---- shared checks ------------------------------------------------------------------------ */

enum { GA_INTERP, GA_PAD, GA_AC, GA_MASK };

static const attr_spec grid_sampler_attrs[] = {
    {"interpolation_mode", ATTR_INT, "0", "0 bilinear, 1 nearest, 2 bicubic"},
    {"padding_mode", ATTR_INT, "0", "0 zeros, 1 border, 2 reflection"},
    {"align_corners", ATTR_BOOL, "false", "-1 and 1 are the centres (true) or the outer edges (false) of the corner pixels"},
    {"output_mask", ATTR_INT_LIST, "1,1", "backward: 2 flags, compute input_grad, compute grid_grad"},
};

static int check_modes(const problem_t *p, const char *op, char *err, size_t errlen)
{
    int64_t im = p->attr[GA_INTERP].i, pm = p->attr[GA_PAD].i;
    if (im < 0 || im > 2) FAIL("%s: interpolation_mode %lld: must be 0 (bilinear), 1 (nearest) or 2 (bicubic)", op, (long long)im);
    if (pm < 0 || pm > 2) FAIL("%s: padding_mode %lld: must be 0 (zeros), 1 (border) or 2 (reflection)", op, (long long)pm);
    return 0;
}

/* input [N,C,H,W] and grid [N,Ho,Wo,2] */
static int check_input_grid(const shape_t *x, const shape_t *g, const char *op, char *err, size_t errlen)
{
    char buf[128];
    if (x->rank != 4) FAIL("%s: input %s: must have rank 4 [N,C,H,W]", op, shape_str(x, buf, sizeof buf));
    if (g->rank != 4) FAIL("%s: grid %s: must have rank 4 [N,Ho,Wo,2]", op, shape_str(g, buf, sizeof buf));
    if (g->dims[3] != 2) FAIL("%s: grid %s: last dim must be 2 (x, y)", op, shape_str(g, buf, sizeof buf));
    if (x->dims[2] == 0 || x->dims[3] == 0)
        FAIL("%s: input %s: H and W must be > 0", op, shape_str(x, buf, sizeof buf));
    if (g->dims[0] != x->dims[0])
        FAIL("%s: grid %s: N = %lld must equal input's N = %lld", op, shape_str(g, buf, sizeof buf),
             (long long)g->dims[0], (long long)x->dims[0]);
    /* the harness's sizes: the reference is a plain loop */
    if (x->dims[2] > 1 << 16 || x->dims[3] > 1 << 16 || g->dims[1] > 1 << 16 || g->dims[2] > 1 << 16)
        FAIL("%s: input %s / grid: the harness accepts spatial sizes up to 65536", op, shape_str(x, buf, sizeof buf));
    return 0;
}

static void params_of(const problem_t *p, const shape_t *x, const shape_t *g, ref_grid_sampler_params *r)
{
    r->N = x->dims[0]; r->C = x->dims[1]; r->H = x->dims[2]; r->W = x->dims[3];
    r->Ho = g->dims[1]; r->Wo = g->dims[2];
    r->interpolation_mode = (int)p->attr[GA_INTERP].i;
    r->padding_mode = (int)p->attr[GA_PAD].i;
    r->align_corners = (int)p->attr[GA_AC].i;
    const attr_value *m = &p->attr[GA_MASK];
    r->output_mask[0] = m->n > 0 ? (int)m->list[0] : 1;
    r->output_mask[1] = m->n > 1 ? (int)m->list[1] : 1;
}

/* ---- both ops ------------------------------------------------------------------------------ */

/* The backward's inputs are the forward's behind grad_output: input at 0 or 1, grid right after. */
/* by name, not address: tests judge copies of a descriptor with a broken reference */
static int backward(const problem_t *p) { return !strcmp(p->op->name, "grid_sampler_2d_backward"); }

static int gen_grid(problem_t *p, int index, const cJSON *spec, gsl_rng *rng, char *err, size_t errlen)
{
    const shape_t *x = &p->in[index - 1].shape;
    return fill_grid(&p->in[index], spec, rng, x->dims[2], x->dims[3], (int)p->attr[GA_AC].i, err, errlen);
}

static void reference(const problem_t *p, double **out, ref_bounds *bounds)
{
    ref_grid_sampler_params r;
    const int x = backward(p);
    params_of(p, &p->in[x].shape, &p->in[x + 1].shape, &r);
    const double *a = p->in[0].data, *b = p->in[1].data;
    if (!x) f64_grid_sampler_2d_fwd__ref(&r, a, b, out[0], bounds);
    else f64_grid_sampler_2d_bwd__ref(&r, a, b, p->in[2].data, out[0], out[1], bounds);
}

/* the plain golden (reference/plain/grid_sampler.c), called as reference is */
static void plain(const problem_t *p, double **out, ref_bounds *bounds)
{
    ref_grid_sampler_params r;
    const int x = backward(p);
    params_of(p, &p->in[x].shape, &p->in[x + 1].shape, &r);
    const double *a = p->in[0].data, *b = p->in[1].data;
    if (!x) f64_grid_sampler_2d_fwd__plain(&r, a, b, out[0], bounds);
    else f64_grid_sampler_2d_bwd__plain(&r, a, b, p->in[2].data, out[0], out[1], bounds);
}

/* the forward's reachable range (conform_range.h): the taps its position box reaches */
static int range(const problem_t *p, int o, ref_range *rg)
{
    ref_grid_sampler_params r;
    if (backward(p) || o != 0) return -1;
    params_of(p, &p->in[0].shape, &p->in[1].shape, &r);
    f64_grid_sampler_2d_fwd__range(&r, p->in[0].data, p->in[1].data, rg);
    return 0;
}

static int optimized(const problem_t *p, const float **in, float **out, const conform_exec *ex)
{
    ref_grid_sampler_params r;
    const int x = backward(p);
    params_of(p, &p->in[x].shape, &p->in[x + 1].shape, &r);
    const f32_grid_sampler_params f = {
        .N = r.N, .C = r.C, .H = r.H, .W = r.W, .Ho = r.Ho, .Wo = r.Wo, .interpolation_mode = r.interpolation_mode,
        .padding_mode = r.padding_mode, .align_corners = r.align_corners,
        .output_mask = {r.output_mask[0], r.output_mask[1]},
    };
    if (!x) return f32_grid_sampler_2d_fwd(&f, in[0], in[1], out[0], ex);
    return f32_grid_sampler_2d_bwd(&f, in[0], in[1], in[2], out[0], out[1], ex);
}

/* what both ops share: the grid generator, the kernels and the tolerance model of every output */
#define GRID_SAMPLER_FAMILY .gen = {"grid", gen_grid}, .reference = reference, .plain = plain, .optimized = optimized, \
                            .tol = grid_sampler_tol

/* ---- grid_sampler_2d ------------------------------------------------------------------------ */

enum { GF_INPUT, GF_GRID };

static const tensor_spec grid_sampler_inputs[] = {
    {"input", "[N, C, H, W] feature map, H and W > 0"},
    {"grid", "[N, Ho, Wo, 2] sample points (x, y) normalised to [-1, 1]"},
};
static const tensor_spec grid_sampler_outputs[] = {{"output", "[N, C, Ho, Wo]"}};

static int grid_sampler_validate(problem_t *p, char *err, size_t errlen)
{
    const char *op = p->op->name;
    const shape_t *x = &p->in[GF_INPUT].shape, *g = &p->in[GF_GRID].shape;
    if (check_input_grid(x, g, op, err, errlen) || check_modes(p, op, err, errlen)) return -1;
    const int64_t d[4] = {x->dims[0], x->dims[1], g->dims[1], g->dims[2]};
    return problem_set_output(p, 0, 4, d, err, errlen);
}

const op_desc op_grid_sampler_2d = {
    .name = "grid_sampler_2d",
    .summary = "GridSampler2D forward (torch grid_sample, aclnnGridSampler2D)",
    .spec = "ops.md sections 0, 7",
    OP_TENSORS(grid_sampler_inputs, grid_sampler_outputs),
    .n_attrs = 3, .attrs = grid_sampler_attrs, /* output_mask is the backward's */
    .validate = grid_sampler_validate, .proofs = grid_sampler_proofs, .range = range,
    .hunt = &hunt_grid_sampler,
    GRID_SAMPLER_FAMILY,
};

/* ---- grid_sampler_2d_backward -------------------------------------------------------------- */

enum { GB_GRAD, GB_INPUT, GB_GRID };

static const tensor_spec grid_sampler_bwd_inputs[] = {
    {"grad_output", "[N, C, Ho, Wo]"},
    {"input", "[N, C, H, W] feature map, H and W > 0"},
    {"grid", "[N, Ho, Wo, 2] sample points (x, y) normalised to [-1, 1]"},
};
static const tensor_spec grid_sampler_bwd_outputs[] = {
    {"input_grad", "[N, C, H, W] (output_mask[0])"},
    {"grid_grad", "[N, Ho, Wo, 2] (output_mask[1])"},
};

static int grid_sampler_bwd_validate(problem_t *p, char *err, size_t errlen)
{
    const char *op = p->op->name;
    char buf[128], buf2[128];
    const shape_t *go = &p->in[GB_GRAD].shape, *x = &p->in[GB_INPUT].shape, *g = &p->in[GB_GRID].shape;
    if (go->rank != 4) FAIL("%s: grad_output %s: must have rank 4 [N,C,Ho,Wo]", op, shape_str(go, buf, sizeof buf));
    if (check_input_grid(x, g, op, err, errlen) || check_modes(p, op, err, errlen)) return -1;
    if (go->dims[0] != x->dims[0])
        FAIL("%s: grad_output %s: N = %lld must equal input's N = %lld", op, shape_str(go, buf, sizeof buf),
             (long long)go->dims[0], (long long)x->dims[0]);
    if (go->dims[1] != x->dims[1])
        FAIL("%s: grad_output %s: C = %lld must equal input's C = %lld", op, shape_str(go, buf, sizeof buf),
             (long long)go->dims[1], (long long)x->dims[1]);
    if (go->dims[2] != g->dims[1] || go->dims[3] != g->dims[2])
        FAIL("%s: grid %s: dims 1, 2 must equal grad_output %s dims 2, 3", op, shape_str(g, buf, sizeof buf),
             shape_str(go, buf2, sizeof buf2));
    const attr_value *m = &p->attr[GA_MASK];
    if (m->n != 2) FAIL("%s: output_mask has %d entries: must have 2 (input_grad, grid_grad)", op, m->n);
    for (int i = 0; i < 2; i++)
        if (m->list[i] != 0 && m->list[i] != 1)
            FAIL("%s: output_mask[%d] = %lld: must be 0 or 1", op, i, (long long)m->list[i]);
    p->out_shape[0] = *x;
    p->out_shape[1] = *g;
    p->out_skipped[0] = m->list[0] == 0;
    p->out_skipped[1] = m->list[1] == 0;
    return 0;
}

const op_desc op_grid_sampler_2d_backward = {
    .name = "grid_sampler_2d_backward",
    .summary = "GridSampler2D backward (aclnnGridSampler2DBackward)",
    .spec = "ops.md sections 0, 7",
    OP_TENSORS(grid_sampler_bwd_inputs, grid_sampler_bwd_outputs),
    OP_ATTRS(grid_sampler_attrs),
    .validate = grid_sampler_bwd_validate, .proofs = grid_sampler_bwd_proofs, .hunt = &hunt_grid_sampler_bwd,
    GRID_SAMPLER_FAMILY,
};
