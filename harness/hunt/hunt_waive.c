/* Waivers for a hunt (docs/hunt.md, "Waivers"): a waiver file of run's format whose entries may
 * carry "when", a predicate on a case's inputs that names the divergence's defining property. A
 * hunt cannot match "pattern" (it names suite cases, and a drawn case is none of them): a failure
 * is waived when its minimal case satisfies a waiver's "when" and its failing outputs are among the
 * waiver's "outputs" (or each among those of some waiver whose "when" holds), and no shrinking step may make a "when" hold that did not hold on the drawn
 * case (so shrinking cannot walk a bug onto a documented divergence). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "datadir.h"
#include "hunt_core.h"
#include "fill.h"
#include "report.h"

#define MAX_WAIVERS 64 /* the usable ones: a bit each in hunt_waivers_holding's mask */

/* "sample_on_window_line": true (any of the four lines) or "low" (py = -1 or px = -1 only); 0: absent */
static int line_kind(const cJSON *w)
{
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(w, "sample_on_window_line");
    return cJSON_IsTrue(l) ? 1 : cJSON_IsString(l) && !strcmp(l->valuestring, "low") ? 2 : 0;
}

/* what is wrong with one "when" predicate, or NULL */
static const char *bad_when(const cJSON *w)
{
    if (!cJSON_IsObject(w)) return "\"when\" is an object or an array of objects";
    if (json_names_hold(w, "ops", NULL) < 0 || json_names_hold(w, "outputs", NULL) < 0) return "\"ops\" and \"outputs\" are arrays of names";
    const cJSON *all = cJSON_GetObjectItemCaseSensitive(w, "all"), *e;
    if (all) { /* every one of them holds */
        if (!cJSON_IsArray(all) || !cJSON_GetArraySize(all)) return "\"all\" is a non-empty array of predicates";
        cJSON_ArrayForEach(e, all) if (bad_when(e)) return bad_when(e);
        return NULL;
    }
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(w, "input"), *range = cJSON_GetObjectItemCaseSensitive(w, "in");
    int kinds = !!range + cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(w, "nonfinite")) + !!line_kind(w);
    if (kinds != 1)
        return "needs one of \"in\": [lo, hi], \"nonfinite\": true, \"sample_on_window_line\": true or \"low\", \"all\": [...]";
    if (!line_kind(w) && !cJSON_IsString(in))
        return "\"in\" and \"nonfinite\" need \"input\": the input's name";
    if (range && (cJSON_GetArraySize(range) != 2 || !cJSON_IsNumber(cJSON_GetArrayItem(range, 0)) ||
                  !cJSON_IsNumber(cJSON_GetArrayItem(range, 1))))
        return "\"in\" is [lo, hi], two numbers (the open interval)";
    const cJSON *col = cJSON_GetObjectItemCaseSensitive(w, "column");
    if (col && (!cJSON_IsNumber(col) || col->valuedouble < 0)) return "\"column\" is an index >= 0 of the last axis";
    return NULL;
}

/* 1 when the "when" w of this op reads what the op has: its "input", or x and offsets for a window line */
static int reads_inputs_of(const cJSON *w, const op_desc *op)
{
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(w, "input"), *e;
    if (cJSON_GetObjectItemCaseSensitive(w, "all")) {
        cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(w, "all")) if (!reads_inputs_of(e, op)) return 0;
        return 1;
    }
    if (cJSON_IsString(in)) return op_input_index(op, in->valuestring) >= 0;
    return op_input_index(op, "x") >= 0 && op_input_index(op, "offsets") >= 0;
}

/* 1 when some "when" of waiver it names op (a waiver without "when" is no hunt's); -1 when one
   that names it reads an input the op does not have */
static int when_names_op(const cJSON *it, const op_desc *op)
{
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(it, "when"), *e;
    int names = 0;
    if (cJSON_IsObject(w)) return json_names_hold(w, "ops", op->name) != 1 ? 0 : reads_inputs_of(w, op) ? 1 : -1;
    cJSON_ArrayForEach(e, w) {
        if (json_names_hold(e, "ops", op->name) != 1) continue;
        if (!reads_inputs_of(e, op)) return -1;
        names = 1;
    }
    return names;
}

static int check_when(const char *path, int i, const cJSON *it)
{
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(it, "when"), *e;
    const char *why = NULL;
    if (!w) return 0;
    if (cJSON_IsArray(w)) cJSON_ArrayForEach(e, w) why = why ? why : bad_when(e);
    else why = bad_when(w);
    return why ? usage_error("%s: waivers[%d]: \"when\": %s (docs/hunt.md, \"Waivers\")", path, i, why) : 0;
}

int hunt_waivers_load(hunt_t *h, const char *path, const char *dtype)
{
    char err[CONFORM_ERR_LEN], found[4096];
    path = conform_suite_path(path, found, sizeof found);
    h->waivers = read_json_file(path, err, sizeof err);
    if (!h->waivers) return usage_error("--waivers %s", err);
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(h->waivers, "waivers"), *it;
    if (!cJSON_IsArray(list)) return usage_error("%s: expected {\"waivers\": [{\"pattern\", \"reason\", \"link\"}, ...]}", path);
    int i = 0;
    cJSON_ArrayForEach(it, list) {
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(it, "reason"), *l = cJSON_GetObjectItemCaseSensitive(it, "link");
        if (!cJSON_IsString(r) || !r->valuestring[0] || !cJSON_IsString(l) || !l->valuestring[0])
            return usage_error("%s: waivers[%d] needs a non-empty \"reason\" and a \"link\"", path, i);
        if (json_names_hold(it, "dtypes", NULL) < 0 || json_names_hold(it, "outputs", NULL) < 0)
            return usage_error("%s: waivers[%d]: \"dtypes\" and \"outputs\" are arrays of names", path, i);
        if (check_when(path, i, it)) return EXIT_USAGE;
        i++;
        int names = when_names_op(it, h->op);
        if (names < 0)
            return usage_error("%s: waivers[%d]: \"when\" for %s reads an input %s does not have (see conform help %s)", path,
                               i - 1, h->op->name, h->op->name, h->op->name);
        if (!names || json_names_hold(it, "dtypes", dtype) != 1) continue;
        if (h->n_waivers == MAX_WAIVERS) return usage_error("%s: more than %d hunt waivers for %s", path, MAX_WAIVERS, h->op->name);
        h->waiver[h->n_waivers++] = it;
    }
    return 0;
}

/* ---- the predicates ---------------------------------------------------------------------------- */

static const cJSON *shape_of(const cJSON *c, const char *input)
{
    return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(c, "shapes"), input);
}

static double *data_of(const cJSON *c, const char *input, int64_t *n)
{
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(c, "gen"), input);
    return hunt_data_read(cJSON_GetObjectItemCaseSensitive(g, "data"), n);
}

/* "in" or "nonfinite": some value of the input (of its last axis' entry "column", if given; at
   [..., 0, 0] of its last two axes with "plane_origin") lies in the open interval, or is NaN or
   infinite */
static int value_holds(const cJSON *w, const cJSON *c)
{
    const char *input = cJSON_GetObjectItemCaseSensitive(w, "input")->valuestring;
    const cJSON *shape = shape_of(c, input), *col = cJSON_GetObjectItemCaseSensitive(w, "column"),
                *range = cJSON_GetObjectItemCaseSensitive(w, "in");
    int64_t n = 0, last = cJSON_GetArraySize(shape) ? (int64_t)cJSON_GetArrayItem(shape, cJSON_GetArraySize(shape) - 1)->valuedouble : 1;
    const int ns = cJSON_GetArraySize(shape);
    const int64_t plane = ns >= 2 ? (int64_t)(cJSON_GetArrayItem(shape, ns - 1)->valuedouble * cJSON_GetArrayItem(shape, ns - 2)->valuedouble) : 0;
    const int origin = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(w, "plane_origin"));
    double *v = data_of(c, input, &n);
    int holds = 0;
    for (int64_t e = 0; v && e < n && !holds; e++) {
        if (col && (last <= 0 || e % last != (int64_t)col->valuedouble)) continue;
        if (origin && (plane <= 0 || e % plane)) continue; /* only [..., 0, 0] of the last two axes */
        holds = range ? v[e] > cJSON_GetArrayItem(range, 0)->valuedouble && v[e] < cJSON_GetArrayItem(range, 1)->valuedouble
                      : !isfinite(v[e]);
    }
    free(v);
    return holds;
}

/* deformable ops: a sample exactly on a window line (py = -1 or H with px in [-1, W], or px = -1 or
   W with py in [-1, H]), its position the float32 sum of the integer base and the offset as spec 5
   computes it; offsets [N, Ho, Wo, 3 dg K]: x offsets, then y offsets, then the masks */
static int on_window_line(const cJSON *c, int low_only)
{
    const cJSON *xs = shape_of(c, "x"), *os = shape_of(c, "offsets");
    if (cJSON_GetArraySize(xs) != 4 || cJSON_GetArraySize(os) != 4) return 0;
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(c, "attrs"), "data_format");
    const int nchw = cJSON_IsString(fmt) && !strcmp(fmt->valuestring, "NCHW"), ih = nchw ? 2 : 1, iw = nchw ? 3 : 2;
    const double H = cJSON_GetArrayItem(xs, 1)->valuedouble, W = cJSON_GetArrayItem(xs, 2)->valuedouble;
    const int64_t N = (int64_t)cJSON_GetArrayItem(os, 0)->valuedouble, Ho = (int64_t)cJSON_GetArrayItem(os, 1)->valuedouble,
                  Wo = (int64_t)cJSON_GetArrayItem(os, 2)->valuedouble, L = (int64_t)cJSON_GetArrayItem(os, 3)->valuedouble;
    const int64_t kh = hunt_attr_int(c, "ksize", 0, 1), kw = hunt_attr_int(c, "ksize", 1, 1),
                  sh = hunt_attr_int(c, "strides", ih, 1), sw = hunt_attr_int(c, "strides", iw, 1),
                  dh = hunt_attr_int(c, "dilations", ih, 1), dw = hunt_attr_int(c, "dilations", iw, 1),
                  pt = hunt_attr_int(c, "pads", 0, 0), pl = hunt_attr_int(c, "pads", 2, 0), dgK = L / 3;
    int64_t n = 0;
    double *off = data_of(c, "offsets", &n);
    int hit = 0;
    if (!off || kh * kw < 1 || n != N * Ho * Wo * L || dgK % (kh * kw)) { free(off); return 0; }
    for (int64_t p = 0; p < N * Ho * Wo && !hit; p++)
        for (int64_t k = 0; k < dgK && !hit; k++) {
            const int64_t ho = p / Wo % Ho, wo = p % Wo, i = k % (kh * kw) / kw, j = k % kw;
            const float px = (float)((double)(wo * sw - pl + j * dw) + off[p * L + k]),
                        py = (float)((double)(ho * sh - pt + i * dh) + off[p * L + dgK + k]);
            const int on_x = px == -1 || (!low_only && px == W), on_y = py == -1 || (!low_only && py == H);
            hit = (on_x && py >= -1 && py <= H) || (on_y && px >= -1 && px <= W);
        }
    free(off);
    return hit;
}

static int when_holds(const cJSON *w, const char *op, const cJSON *c)
{
    const cJSON *all = cJSON_GetObjectItemCaseSensitive(w, "all"), *e;
    if (json_names_hold(w, "ops", op) != 1) return 0;
    if (all) {
        cJSON_ArrayForEach(e, all) if (!when_holds(e, op, c)) return 0;
        return 1;
    }
    return line_kind(w) ? on_window_line(c, line_kind(w) == 2) : value_holds(w, c);
}

uint64_t hunt_waivers_holding(const hunt_t *h, const cJSON *c)
{
    uint64_t m = 0;
    for (int i = 0; i < h->n_waivers; i++) {
        const cJSON *w = cJSON_GetObjectItemCaseSensitive(h->waiver[i], "when"), *e;
        int holds = 0;
        if (cJSON_IsArray(w)) cJSON_ArrayForEach(e, w) holds |= when_holds(e, h->op->name, c);
        else holds = when_holds(w, h->op->name, c);
        if (holds) m |= 1ull << i;
    }
    return m;
}

uint64_t hunt_waivers_holding_spec(const hunt_t *h, const cJSON *spec, uint64_t seed)
{
    char err[CONFORM_ERR_LEN];
    cJSON *m = h->n_waivers ? hunt_materialize(h->op, spec, seed, err, sizeof err) : NULL;
    uint64_t held = m ? hunt_waivers_holding(h, m) : 0;
    cJSON_Delete(m);
    return held;
}

/* the failing outputs of sig (of r) that the "outputs" of the holding "when" w names, or, when it
   names none, those of the waiver (no "outputs" at all: every one) */
static unsigned covered(const cJSON *waiver, const cJSON *w, const case_result *r, const hunt_sig *sig)
{
    const cJSON *by = cJSON_GetObjectItemCaseSensitive(w, "outputs") ? w : waiver;
    unsigned m = 0;
    for (int o = 0; o < r->n_out; o++)
        if ((sig->mask >> o & 1) && json_names_hold(by, "outputs", r->out[o].name) == 1) m |= 1u << o;
    return m;
}

/* whether a "when" of waiver i holds on c; *m: what those holding cover of sig's failing outputs */
static int waiver_covers(const hunt_t *h, int i, const cJSON *c, const case_result *r, const hunt_sig *sig, unsigned *m)
{
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(h->waiver[i], "when"), *e;
    int holds = 0;
    *m = 0;
    if (cJSON_IsObject(w) && when_holds(w, h->op->name, c)) { holds = 1; *m |= covered(h->waiver[i], w, r, sig); }
    if (cJSON_IsArray(w)) cJSON_ArrayForEach(e, w)
        if (when_holds(e, h->op->name, c)) { holds = 1; *m |= covered(h->waiver[i], e, r, sig); }
    return holds;
}

/* The waiver of the minimal case c: the first whose "when" holds and covers every failing output;
   else, when each failing output is covered by some holding waiver (two divergences in one minimal
   case, e.g. a weight-0 scatter into grad_x beside a window-line sample's grad_offsets), the one
   covering the first; NULL when some failing output has none. */
const cJSON *hunt_waiver_for(const hunt_t *h, const cJSON *c, const case_result *r, const hunt_sig *sig)
{
    unsigned all = 0, want = 0, m;
    for (int o = 0; o < r->n_out && o < 32; o++) want |= sig->mask & (1u << o);
    int first = -1, first_bit = 32;
    for (int i = 0; i < h->n_waivers; i++) {
        if (!waiver_covers(h, i, c, r, sig, &m)) continue;
        if (m == want) return h->waiver[i];
        all |= m;
        if (m && __builtin_ctz(m) < first_bit) { first_bit = __builtin_ctz(m); first = i; }
    }
    return first >= 0 && (all & want) == want ? h->waiver[first] : NULL;
}
