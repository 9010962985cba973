/* Shrinking a failure (hunt.h): first the sketch (dims down, knobs dropped, attributes to their
 * defaults, a few seeds per step), then the case with exact data (indices dropped along the
 * op's axes, values toward small integers and short dyadics). Every step must keep the same
 * failure (hunt_same) and makes the case strictly smaller, so shrinking ends. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hunt_core.h"

#define SEEDS_PER_STEP 3   /* a smaller sketch draws other data: a few draws per step */
#define MAX_CANDS 512      /* candidates judged in one step (one exported round for dir:) */
#define ELEMENTWISE_MAX 512
#define DIR_SHRINK_S 180.0 /* dir: each step is a round on the device (a runner's start: seconds) */
#define SHRINK_ROUNDS 4     /* axes then values, again while either changes the case */ /* tensors up to this many elements shrink value by value */

typedef struct {
    cJSON *c[MAX_CANDS];
    uint64_t seed[MAX_CANDS];
    int ref[MAX_CANDS]; /* what the candidate is: a sketch index or an element */
    int n;
} cands_t;

static void cands_add(cands_t *cs, cJSON *c, uint64_t seed, int ref)
{
    if (!c) return;
    if (cs->n == MAX_CANDS) { cJSON_Delete(c); return; }
    cs->c[cs->n] = c;
    cs->seed[cs->n] = seed;
    cs->ref[cs->n++] = ref;
}

static void cands_free(cands_t *cs)
{
    for (int i = 0; i < cs->n; i++) cJSON_Delete(cs->c[i]);
    cs->n = 0;
}

/* index of the first candidate that fails as want does, or -1 */
static int cands_first(hunt_t *h, cands_t *cs, const hunt_sig *want)
{
    hunt_sig sig[MAX_CANDS];
    int i = cs->n ? hunt_judge(h, cs->c, cs->seed, cs->n, want, sig) : -1;
    h->steps++;
    hunt_progress(h, 0);
    return i >= 0 ? i : -1;
}

static int shrink_over(const hunt_t *h, double until) { return hunt_interrupted() || now_seconds() > until; }

/* ---- level 1: the sketch ------------------------------------------------------------------- */

static hunt_sketch sketch_copy(const hunt_sketch *s)
{
    hunt_sketch t = *s;
    t.exact = NULL;
    t.attrs = cJSON_Duplicate(s->attrs, 1);
    t.gen = cJSON_Duplicate(s->gen, 1);
    return t;
}

static void sketch_free(hunt_sketch *s)
{
    cJSON_Delete(s->attrs);
    cJSON_Delete(s->gen);
}

/* every one-step reduction of s, SEEDS_PER_STEP draws each */
static int sketch_steps(const hunt_t *h, const hunt_sketch *s, hunt_sketch *out, int max)
{
    const hunt_desc *hd = h->op->hunt;
    int n = 0;
    for (int i = 0; i < hd->n_dims && n + 3 <= max; i++) {
        int64_t v = s->d[i], lo = hd->dims[i].lo, to[3] = {lo, lo + (v - lo) / 2, v - 1};
        for (int k = 0; k < 3; k++) {
            if (to[k] >= v || to[k] < lo || (k && to[k] == to[k - 1]) || (k == 2 && to[k] == to[0])) continue;
            out[n] = sketch_copy(s);
            out[n++].d[i] = to[k];
        }
    }
    const cJSON *g, *knob;
    cJSON_ArrayForEach(g, s->gen) {
        if (n < max) { out[n] = sketch_copy(s); cJSON_DeleteItemFromObjectCaseSensitive(out[n++].gen, g->string); }
        cJSON_ArrayForEach(knob, g) {
            if (n == max || cJSON_GetArraySize(g) < 2) break;
            out[n] = sketch_copy(s);
            cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(out[n++].gen, g->string), knob->string);
        }
    }
    const cJSON *a;
    cJSON_ArrayForEach(a, s->attrs) {
        int ai = op_attr_index(h->op, a->string);
        if (n == max || (ai >= 0 && !h->op->attrs[ai].def)) continue; /* a required one stays */
        out[n] = sketch_copy(s);
        cJSON_DeleteItemFromObjectCaseSensitive(out[n++].attrs, a->string);
    }
    return n;
}

/* the number of steps taken */
static int shrink_sketch(hunt_t *h, hunt_sketch *s, const hunt_sig *want, double until)
{
    enum { MAX_STEPS = MAX_CANDS / SEEDS_PER_STEP };
    hunt_sketch st[MAX_STEPS];
    int taken = 0;
    for (int progress = 1; progress && !shrink_over(h, until);) {
        int n = sketch_steps(h, s, st, MAX_STEPS);
        cands_t cs = {.n = 0};
        for (int i = 0; i < n; i++)
            for (int k = 0; k < SEEDS_PER_STEP; k++) {
                st[i].seed = s->seed + (uint64_t)k * 7919u; /* k = 0: the failing draw's own seed */
                cands_add(&cs, hunt_sketch_case(h, &st[i]), st[i].seed, i * SEEDS_PER_STEP + k);
            }
        int f = cands_first(h, &cs, want);
        progress = f >= 0;
        if (progress) {
            int i = cs.ref[f] / SEEDS_PER_STEP;
            sketch_free(s);
            *s = st[i];
            s->seed = cs.seed[f];
            st[i].attrs = st[i].gen = NULL;
            taken++;
        }
        for (int i = 0; i < n; i++) sketch_free(&st[i]);
        cands_free(&cs);
    }
    return taken;
}

/* a draw with edge values: its sketch without them, shrunk, when a smaller one fails the same way
   from its knobs alone (the plane of an op whose output size follows from it shrinks only so);
   else the exact case as drawn */
static void shrink_exact(hunt_t *h, hunt_sketch *s, const hunt_sig *want, double until)
{
    hunt_sketch t = sketch_copy(s);
    if (!shrink_sketch(h, &t, want, until)) {
        sketch_free(&t);
        return;
    }
    sketch_free(s);
    cJSON_Delete(s->exact);
    *s = t;
}

/* ---- level 2: the exact data ----------------------------------------------------------------- */

static cJSON *input_data(cJSON *c, const char *input)
{
    return cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(c, "gen"), input), "data");
}

/* input's values without the indices [a, b) along axis; its shape updated */
static int drop_loc(cJSON *c, const char *input, int axis, int64_t a, int64_t b)
{
    cJSON *sh = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(c, "shapes"), input);
    int rank = cJSON_GetArraySize(sh);
    if (axis >= rank) return -1;
    int64_t dims[CONFORM_MAX_RANK], inner = 1, outer = 1, n;
    for (int d = 0; d < rank; d++) dims[d] = (int64_t)cJSON_GetArrayItem(sh, d)->valuedouble;
    for (int d = axis + 1; d < rank; d++) inner *= dims[d];
    for (int d = 0; d < axis; d++) outer *= dims[d];
    double *v = hunt_data_read(input_data(c, input), &n);
    if (!v || b > dims[axis]) { free(v); return -1; }
    int64_t kept = 0;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < dims[axis]; i++)
            if (i < a || i >= b) {
                memmove(v + kept, v + (o * dims[axis] + i) * inner, (size_t)inner * sizeof *v);
                kept += inner;
            }
    dims[axis] -= b - a;
    hunt_set_shape(c, input, rank, dims);
    cJSON *g = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(c, "gen"), input);
    cJSON_ReplaceItemInObjectCaseSensitive(g, "data", hunt_data_json(v, kept));
    free(v);
    return 0;
}

/* c without the indices [a, b) of axis ax (a new object), or NULL */
static cJSON *drop_range(const cJSON *c, const hunt_axis *ax, int64_t a, int64_t b)
{
    cJSON *t = cJSON_Duplicate(c, 1);
    for (int l = 0; l < ax->n_loc; l++)
        if (drop_loc(t, ax->loc[l].input, ax->loc[l].axis, a, b)) { cJSON_Delete(t); return NULL; }
    if (ax->attr) {
        int64_t v = hunt_attr_int(t, ax->attr, ax->attr_idx, 0) - (b - a);
        if (ax->attr_idx < 0) hunt_set_attr_int(t, ax->attr, v);
        else {
            int64_t l[CONFORM_MAX_LIST];
            const cJSON *cur = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(t, "attrs"), ax->attr);
            int n = cJSON_GetArraySize(cur);
            for (int i = 0; i < n && i < CONFORM_MAX_LIST; i++) l[i] = hunt_attr_int(t, ax->attr, i, 0);
            l[ax->attr_idx] = v;
            hunt_set_attr_list(t, ax->attr, n, l);
        }
    }
    return t;
}

static int64_t axis_size(const cJSON *c, const hunt_axis *ax)
{
    if (ax->n_loc) {
        const cJSON *sh = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(c, "shapes"), ax->loc[0].input);
        const cJSON *d = cJSON_GetArrayItem(sh, ax->loc[0].axis);
        return cJSON_IsNumber(d) ? (int64_t)d->valuedouble : 0;
    }
    return hunt_attr_int(c, ax->attr, ax->attr_idx, 0);
}

/* drops indices along every axis while the failure stays: halves first, then one at a time */
static cJSON *shrink_axes(hunt_t *h, cJSON *c, const hunt_sig *want, double until)
{
    hunt_axis ax[HUNT_MAX_AXES];
    for (int progress = 1; progress && !shrink_over(h, until);) {
        progress = 0;
        int na = h->op->hunt->axes(c, ax);
        for (int a = 0; a < na && !progress; a++) {
            int64_t n = axis_size(c, &ax[a]);
            if (n < 2) continue;
            cands_t cs = {.n = 0};
            cands_add(&cs, drop_range(c, &ax[a], n / 2, n), 1, 0);
            cands_add(&cs, drop_range(c, &ax[a], 0, n / 2), 1, 0);
            for (int64_t i = n - 1; i >= 0 && cs.n < MAX_CANDS; i--) cands_add(&cs, drop_range(c, &ax[a], i, i + 1), 1, 0);
            int f = cands_first(h, &cs, want);
            if (f >= 0) {
                cJSON_Delete(c);
                c = cs.c[f];
                cs.c[f] = NULL;
                progress = 1;
            }
            cands_free(&cs);
        }
    }
    return c;
}

/* every attribute with a default dropped (set to its default) while the failure stays */
static cJSON *shrink_attrs(hunt_t *h, cJSON *c, const hunt_sig *want, double until)
{
    for (int progress = 1; progress && !shrink_over(h, until);) {
        cands_t cs = {.n = 0};
        const cJSON *a;
        cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(c, "attrs")) {
            int ai = op_attr_index(h->op, a->string);
            if (ai < 0 || !h->op->attrs[ai].def) continue;
            cJSON *t = cJSON_Duplicate(c, 1);
            cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(t, "attrs"), a->string);
            cands_add(&cs, t, 1, 0);
        }
        int f = cands_first(h, &cs, want);
        progress = f >= 0;
        if (progress) {
            cJSON_Delete(c);
            c = cs.c[f];
            cs.c[f] = NULL;
        }
        cands_free(&cs);
    }
    return c;
}

/* the binary digits after the point of v: 0 for an integer, 99 for a non-dyadic or non-finite one */
static int depth(double v)
{
    if (!isfinite(v)) return 99;
    for (int k = 0; k < 40; k++, v *= 2)
        if (v == nearbyint(v)) return k;
    return 99;
}

/* the simpler values of v, simplest first: 0, then v at 1, 1/2, 1/4, 1/16, 1/256, then +-1 for a
   fraction or half an integer */
static int simpler(double v, double *out)
{
    int n = 0, dv = depth(v);
    if (v != 0 && !isnan(v) && !isinf(v)) out[n++] = 0;
    if (!isfinite(v)) { out[n++] = 0; return n; }
    static const int ks[] = {0, 1, 2, 4, 8};
    for (int i = 0; i < 5; i++) {
        double s = ldexp(1.0, ks[i]), r = nearbyint(v * s) / s;
        if (r != v && r != 0 && depth(r) < dv) out[n++] = r;
    }
    if (dv > 0 && fabs(v) < 1) out[n++] = copysign(1.0, v); /* a fraction toward the unit */
    if (dv == 0 && fabs(v) >= 2) out[n++] = trunc(v / 2);
    return n;
}

/* c with element e of input's data set to v (a new object) */
static cJSON *with_value(const cJSON *c, const char *input, int64_t e, double v)
{
    cJSON *t = cJSON_Duplicate(c, 1), *one = hunt_data_json(&v, 1);
    cJSON_ReplaceItemInArray(input_data(t, input), (int)e, cJSON_DetachItemFromArray(one, 0));
    cJSON_Delete(one);
    return t;
}

/* one sweep over every element of every input, trying its simpler values in order; a tried element
   is not tried again in the sweep, an accepted one is tried again (it may simplify further) */
static cJSON *shrink_values(hunt_t *h, cJSON *c, const hunt_sig *want, double until)
{
    for (int i = 0; i < h->op->n_inputs && !shrink_over(h, until); i++) {
        const char *in = h->op->inputs[i].name;
        int64_t n, e = 0;
        double *v = hunt_data_read(input_data(c, in), &n);
        if (!v || n > ELEMENTWISE_MAX) { free(v); continue; }
        while (e < n && !shrink_over(h, until)) {
            cands_t cs = {.n = 0};
            for (int64_t k = e; k < n && cs.n + 9 <= MAX_CANDS; k++) {
                double s[9];
                int ns = simpler(v[k], s);
                for (int j = 0; j < ns; j++) cands_add(&cs, with_value(c, in, k, s[j]), 1, (int)k);
                if (!ns) cands_add(&cs, NULL, 1, (int)k);
            }
            int64_t last = cs.n ? cs.ref[cs.n - 1] : n - 1;
            int f = cands_first(h, &cs, want);
            if (f >= 0) {
                cJSON_Delete(c);
                c = cs.c[f];
                cs.c[f] = NULL;
                e = cs.ref[f];
                free(v);
                v = hunt_data_read(input_data(c, in), &n);
            } else e = last + 1;
            cands_free(&cs);
            if (!v) break;
        }
        free(v);
    }
    return c;
}

cJSON *hunt_shrink(hunt_t *h, hunt_sketch *s, const hunt_sig *sig)
{
    /* a share of the hunt's time per failure, so one failure cannot take the whole hunt */
    double budget = h->o->seconds > 0 ? fmin(fmax(h->o->seconds / 4, 3.0), 60.0) : 60.0;
    if (h->dir_mode) budget = fmax(budget, DIR_SHRINK_S); /* a round is an export and a runner's start */
    double t0 = now_seconds();
    if (s->exact) shrink_exact(h, s, sig, t0 + budget / 2);
    else shrink_sketch(h, s, sig, t0 + budget / 2);
    cJSON *c = hunt_sketch_case(h, s);
    char err[CONFORM_ERR_LEN];
    cJSON *m = c ? hunt_materialize(h->op, c, s->seed, err, sizeof err) : NULL;
    cJSON_Delete(c);
    if (!m) return NULL;
    hunt_sig got;
    uint64_t seed = 1;
    if (hunt_judge(h, &m, &seed, 1, sig, &got) != 0) { /* exact data must fail as the draw did */
        fprintf(stderr, "hunt: the failure did not replay from its exact data (%s): kept as drawn\n",
                got.finding ? "it fails another way" : "it passes");
        return m;
    }
    /* simpler values can free indices (a roi moved to the origin lets the plane shrink), and fewer
       indices make the values cheaper to try: both again while either changes anything */
    for (int round = 0; round < SHRINK_ROUNDS && !shrink_over(h, t0 + budget); round++) {
        char *before = hunt_key(m);
        m = shrink_values(h, shrink_attrs(h, shrink_axes(h, m, sig, t0 + budget), sig, t0 + budget), sig, t0 + budget);
        char *after = hunt_key(m);
        int same = !strcmp(before, after);
        free(before);
        free(after);
        if (same) break;
    }
    return m;
}
