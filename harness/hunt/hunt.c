/* conform hunt: the search loop, the judging of drawn cases (in process, isolated, or through an
 * exported round and a device's runner for dir:), progress and the summary (hunt.h). */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bigbuf.h"
#include "cli.h"
#include "datadir.h"
#include "fill.h"
#include "help.h"
#include "hunt_core.h"
#include "jobs.h"
#include "report.h"

static volatile sig_atomic_t hunt_stop;
static void on_signal(int sig) { hunt_stop = sig; }
int hunt_interrupted(void) { return hunt_stop != 0; }

/* ---- what the suites use: each default-suite case of the op as {"attrs", "gen"} ------------- */

static cJSON *template_of(const case_t *c)
{
    cJSON *t = cJSON_CreateObject(), *a = cJSON_AddObjectToObject(t, "attrs"), *g;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(c->spec, "attrs"))
        cJSON_AddItemToObject(a, e->string, cJSON_Duplicate(e, 1));
    cJSON_ArrayForEach(e, c->point)
        if (strncmp(e->string, "shape.", 6)) {
            cJSON_DeleteItemFromObjectCaseSensitive(a, e->string);
            cJSON_AddItemToObject(a, e->string, cJSON_Duplicate(e, 1));
        }
    g = cJSON_AddObjectToObject(t, "gen");
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(c->spec, "gen")) /* exact data fits one shape only */
        if (cJSON_IsObject(e) && !cJSON_GetObjectItemCaseSensitive(e, "data"))
            cJSON_AddItemToObject(g, e->string, cJSON_Duplicate(e, 1));
    return t;
}

static int load_templates(hunt_t *h)
{
    suite_t s;
    char err[CONFORM_ERR_LEN];
    h->tmpl = cJSON_CreateArray();
    if (suite_load("cases/conformance.json", &s, err, sizeof err)) {
        fprintf(stderr, "hunt: %s: drawing without the suite's generators\n", err);
        cJSON_AddItemToArray(h->tmpl, cJSON_CreateObject());
        return 0;
    }
    for (int i = 0; i < s.n_cases; i++)
        if (s.cases[i].op == h->op && !case_expect_error(&s.cases[i]))
            cJSON_AddItemToArray(h->tmpl, template_of(&s.cases[i]));
    suite_free(&s);
    if (!cJSON_GetArraySize(h->tmpl)) cJSON_AddItemToArray(h->tmpl, cJSON_CreateObject());
    return 0;
}

/* ---- drawing ----------------------------------------------------------------------------------- */

static int64_t draw_dim(gsl_rng *rng, const hunt_dim *d)
{
    double u = gsl_rng_uniform(rng);
    if (u < 0.7) return d->lo + (int64_t)gsl_rng_uniform_int(rng, (unsigned long)(d->small - d->lo + 1));
    if (u < 0.93) return d->lo + (int64_t)gsl_rng_uniform_int(rng, (unsigned long)(d->big - d->lo + 1));
    return d->big;
}

static const cJSON *any_template(hunt_t *h)
{
    return cJSON_GetArrayItem(h->tmpl, (int)gsl_rng_uniform_int(h->rng, (unsigned long)cJSON_GetArraySize(h->tmpl)));
}

/* obj[key] replaced by a copy of from[key] (removed when from has none) */
static void take_from(cJSON *obj, const cJSON *from, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(from, key);
    cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
    if (v) cJSON_AddItemToObject(obj, key, cJSON_Duplicate(v, 1));
}

#define EDGE_VALUES_FRAC 0.3 /* the share of draws with a few values set to edges */

/* A few values of the drawn case set to the edges of the problem: 0, +-0.5, +-1, and n - 1, n - 0.5,
   n, n + 0.5, n + 1 for one of its dims n (a batch index at or beyond the ends, a position on a
   window line or a pixel centre, a corner on the plane's last row), and NaN, +-inf unless
   --finite; mostly in the input with its own generator (rois, offsets, grid). */
static void set_edge_values(hunt_t *h, hunt_sketch *s)
{
    cJSON *c = hunt_sketch_case(h, s);
    char err[CONFORM_ERR_LEN];
    cJSON *m = c ? hunt_materialize(h->op, c, s->seed, err, sizeof err) : NULL;
    cJSON_Delete(c);
    if (!m) return;
    const op_desc *op = h->op;
    for (int k = 0, n = 1 + (int)gsl_rng_uniform_int(h->rng, 3); k < n; k++) {
        int i = op->gen.input && fill_pick(h->rng, 0.6) ? op_input_index(op, op->gen.input)
                                                        : (int)gsl_rng_uniform_int(h->rng, (unsigned long)op->n_inputs);
        cJSON *d = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(m, "gen"), op->inputs[i].name), "data");
        int len = cJSON_GetArraySize(d);
        if (len < 1) continue;
        double dim = (double)s->d[gsl_rng_uniform_int(h->rng, (unsigned long)op->hunt->n_dims)];
        static const double base[] = {0, -0.5, -1, 0.5, 1}, off[] = {-1, -0.5, 0, 0.5, 1};
        /* without --finite, 2 picks in 12 are NaN or +-inf: a non-finite batch index beside finite
           coordinates, a lone infinite mask; --finite draws as before */
        unsigned long pick = gsl_rng_uniform_int(h->rng, h->o->finite ? 10 : 12);
        double v = pick < 5 ? base[pick] : pick < 10 ? dim + off[pick - 5] : pick == 10 ? NAN : INFINITY;
        if (pick == 11 && fill_pick(h->rng, 0.5)) v = -INFINITY;
        int at = (int)gsl_rng_uniform_int(h->rng, (unsigned long)len);
        cJSON_ReplaceItemInArray(d, at, isfinite(v) ? cJSON_CreateNumber(v)
                                        : cJSON_CreateString(isnan(v) ? "nan" : v > 0 ? "inf" : "-inf"));
    }
    s->exact = m;
}

/* --finite: a generator's NaN and infinity knobs (nan_frac, inf_frac, nan_pixels, ...) dropped */
static void strip_nonfinite(cJSON *g)
{
    for (cJSON *k = g ? g->child : NULL, *next; k; k = next) {
        next = k->next;
        if (strstr(k->string, "nan") || strstr(k->string, "inf")) cJSON_Delete(cJSON_DetachItemViaPointer(g, k));
    }
}

/* dims of the op's space; attributes and generators of one suite case, some swapped for another's;
   now and then NaN and infinity among the values */
static void draw_sketch(hunt_t *h, hunt_sketch *s)
{
    const op_desc *op = h->op;
    for (int i = 0; i < op->hunt->n_dims; i++) s->d[i] = draw_dim(h->rng, &op->hunt->dims[i]);
    const cJSON *t = any_template(h);
    s->attrs = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(t, "attrs"), 1);
    s->gen = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(t, "gen"), 1);
    if (!s->attrs) s->attrs = cJSON_CreateObject();
    if (!s->gen) s->gen = cJSON_CreateObject();
    for (int a = 0; a < op->n_attrs; a++)
        if (fill_pick(h->rng, 0.2))
            take_from(s->attrs, cJSON_GetObjectItemCaseSensitive(any_template(h), "attrs"), op->attrs[a].name);
    for (int i = 0; i < op->n_inputs; i++) {
        const char *in = op->inputs[i].name;
        if (fill_pick(h->rng, 0.25)) take_from(s->gen, cJSON_GetObjectItemCaseSensitive(any_template(h), "gen"), in);
        if (h->o->finite) strip_nonfinite(cJSON_GetObjectItemCaseSensitive(s->gen, in));
        if ((op->gen.input && !strcmp(op->gen.input, in)) || h->o->finite || !fill_pick(h->rng, 0.1)) continue;
        cJSON *g = cJSON_GetObjectItemCaseSensitive(s->gen, in);
        if (!g) g = cJSON_AddObjectToObject(s->gen, in);
        cJSON_DeleteItemFromObjectCaseSensitive(g, "nan_frac");
        cJSON_DeleteItemFromObjectCaseSensitive(g, "inf_frac");
        cJSON_AddNumberToObject(g, fill_pick(h->rng, 0.5) ? "nan_frac" : "inf_frac", 0.05);
    }
    s->seed = gsl_rng_get(h->rng) & 0xffffffffUL;
    s->exact = NULL;
    if (fill_pick(h->rng, EDGE_VALUES_FRAC)) set_edge_values(h, s);
}

cJSON *hunt_sketch_case(const hunt_t *h, const hunt_sketch *s)
{
    if (s->exact) return cJSON_Duplicate(s->exact, 1);
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "name", "hunt");
    cJSON_AddStringToObject(c, "op", h->op->name);
    cJSON_AddItemToObject(c, "attrs", cJSON_Duplicate(s->attrs, 1));
    cJSON_AddItemToObject(c, "gen", cJSON_Duplicate(s->gen, 1));
    if (h->op->hunt->shapes(s->d, c)) {
        cJSON_Delete(c);
        return NULL;
    }
    return c;
}

/* ---- judging ----------------------------------------------------------------------------------- */

static void sig_of(const case_result *r, hunt_sig *g)
{
    memset(g, 0, sizeof *g);
    g->status = r->status;
    /* a refusal by validation (no output named) is a problem the draw got wrong, not a finding */
    g->finding = status_fails(r->status) && !(r->status == CASE_ERROR && r->n_out == 0);
    for (int o = 0; o < r->n_out; o++) {
        const output_result *out = &r->out[o];
        if (!out->skipped && !out->not_run &&
            (out->cmp.n_over || out->cmp.n_nonfinite_mismatch || out->cmp.all_zero || !out->guard_ok))
            g->mask |= 1u << o;
    }
}

int hunt_same(const hunt_sig *a, const hunt_sig *b)
{
    return a->finding && b->finding && a->status == b->status && a->mask == b->mask;
}

static void keep_result(hunt_t *h, case_result *r)
{
    if (h->has_last) case_result_free(&h->last);
    h->last = *r;
    h->has_last = 1;
}

/* one case judged as run judges it; 1 when it is the one asked for (kept in h->last) */
static int judge_one(hunt_t *h, const case_t *c, uint64_t seed, const hunt_sig *want, hunt_sig *sig)
{
    case_result r;
    run_case(c, seed, &h->env, &r);
    h->judged++;
    h->t_ref += r.time_ref_s;
    h->t_impl += r.time_opt_s;
    h->not_impl += r.status == CASE_NOT_IMPLEMENTED;
    sig_of(&r, sig);
    /* dir: a case the runner declined, saying why (impl_dir.c appends its reason so), is the device's
       stated refusal (a batch index torch cannot take), not a wrong answer */
    if (sig->finding && r.status == CASE_MISSING && strstr(r.message, "(the runner skipped it:")) {
        sig->finding = 0;
        h->runner_skips++;
    }
    if (sig->finding && h->has_base) { /* a failure the baseline shares is the reference's or the spec's */
        case_result b;
        hunt_sig bs;
        run_case(c, seed, &h->base_env, &b);
        sig_of(&b, &bs);
        case_result_free(&b);
        if (bs.finding) {
            sig->finding = 0;
            h->shared++;
        }
    }
    int hit = want ? hunt_same(sig, want) : sig->finding;
    /* a shrinking step that makes another waiver's "when" hold walked the failure onto a documented
       divergence: not the same failure */
    if (hit && h->shrinking && h->n_waivers && (hunt_waivers_holding_spec(h, c->spec, seed) & ~h->allowed)) hit = 0;
    if (hit) keep_result(h, &r);
    else case_result_free(&r);
    return hit;
}

static int sh(const char *cmd)
{
    int rc = system(cmd);
    return rc == -1 ? -1 : WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc);
}

/* text with every {dir} replaced by dir */
static void substitute(const char *text, const char *dir, char *out, size_t len)
{
    size_t used = 0;
    for (const char *s = text; *s && used + 1 < len;) {
        if (!strncmp(s, "{dir}", 5)) {
            used += (size_t)snprintf(out + used, len - used, "'%s'", dir);
            s += 5;
        } else out[used++] = *s++;
    }
    out[used < len ? used : len - 1] = 0;
}

/* the round's cases with exact data, as a suite file in dir; idx[k]: the candidate of case k */
static int write_round(hunt_t *h, cJSON *const *cases, const uint64_t *seeds, int n, const char *path, int *idx)
{
    cJSON *s = cJSON_CreateObject(), *list;
    cJSON_AddStringToObject(s, "suite", "hunt");
    list = cJSON_AddArrayToObject(s, "cases");
    int k = 0;
    for (int i = 0; i < n; i++) {
        char err[CONFORM_ERR_LEN], name[32];
        if (!cases[i]) continue; /* dims that give no valid problem */
        cJSON *m = hunt_materialize(h->op, cases[i], seeds[i], err, sizeof err);
        if (!m) continue; /* refused by validation: not a problem of the op */
        snprintf(name, sizeof name, "r%d", i);
        cJSON_ReplaceItemInObjectCaseSensitive(m, "name", cJSON_CreateString(name));
        cJSON_AddItemToArray(list, m);
        idx[k++] = i;
    }
    char err[CONFORM_ERR_LEN];
    int rc = write_json_atomic(path, s, err, sizeof err);
    if (rc) fprintf(stderr, "conform: hunt: %s\n", err);
    cJSON_Delete(s);
    return rc ? -1 : k;
}

/* export, the runner, then every case judged against what it wrote */
static int run_round(hunt_t *h, const char *dir, const char *suite, int k, const int *idx, const hunt_sig *want,
                     hunt_sig *sig)
{
    char cmd[4096], xdir[600], runner[3000];
    snprintf(xdir, sizeof xdir, "%s/x", dir);
    snprintf(cmd, sizeof cmd, "'%s' export '%s' --out '%s' --dtype %s > '%s/export.log' 2>&1", h->exe, suite, xdir,
             h->o->dtype_name ? h->o->dtype_name : "float32", dir);
    if (sh(cmd)) { fprintf(stderr, "conform: hunt: export of %s failed (see %s/export.log)\n", suite, dir); return -2; }
    substitute(h->o->runner, xdir, runner, sizeof runner);
    snprintf(cmd, sizeof cmd, "%s > '%s/runner.log' 2>&1", runner, dir);
    int rc = sh(cmd);
    if (rc) { fprintf(stderr, "conform: hunt: --runner exited %d (its output: %s/runner.log)\n", rc, dir); return -2; }
    impl_t impl;
    suite_t s;
    char err[CONFORM_ERR_LEN], spec[700];
    snprintf(spec, sizeof spec, "dir:%s", xdir);
    if (impl_open(spec, NULL, &impl, err, sizeof err)) { fprintf(stderr, "conform: hunt: %s\n", err); return -2; }
    if (suite_load(suite, &s, err, sizeof err)) { impl_close(&impl); fprintf(stderr, "conform: hunt: %s\n", err); return -2; }
    const impl_t *keep = h->env.impl;
    h->env.impl = &impl;
    int first = -1;
    for (int j = 0; j < s.n_cases && j < k; j++)
        if (judge_one(h, &s.cases[j], case_seed(&s.cases[j], s.seed), want, &sig[idx[j]]) && first < 0) first = idx[j];
    h->env.impl = keep;
    suite_free(&s);
    impl_close(&impl);
    return first;
}

static int judge_round(hunt_t *h, cJSON *const *cases, const uint64_t *seeds, int n, const hunt_sig *want, hunt_sig *sig)
{
    char dir[600], suite[700], cmd[800];
    snprintf(dir, sizeof dir, "%s/round%lld", h->tmp, h->rounds++);
    snprintf(suite, sizeof suite, "%s/cases.json", dir);
    if (mkdir(dir, 0755) && access(dir, W_OK)) { fprintf(stderr, "conform: hunt: cannot create %s\n", dir); return -2; }
    int *idx = malloc((size_t)(n ? n : 1) * sizeof *idx);
    int k = write_round(h, cases, seeds, n, suite, idx), first = k > 0 ? run_round(h, dir, suite, k, idx, want, sig) : -1;
    free(idx);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (first != -2) sh(cmd); /* a failed round stays for its logs */
    return first;
}

int hunt_judge(hunt_t *h, cJSON *const *cases, const uint64_t *seeds, int n, const hunt_sig *want, hunt_sig *sig)
{
    for (int i = 0; i < n; i++) memset(&sig[i], 0, sizeof sig[i]);
    if (hunt_stop) return -1;
    if (h->dir_mode) return judge_round(h, cases, seeds, n, want, sig);
    int first = -1;
    for (int i = 0; i < n && !hunt_stop; i++) {
        if (!cases[i]) continue;
        case_t c = {.op = h->op, .spec = cases[i], .suite_path = "hunt"};
        snprintf(c.id, sizeof c.id, "hunt/%s", h->op->name);
        /* pages kept case to case, as run keeps them (jobs.c): a fresh shared mapping per output,
           faulted in, zeroed and unmapped was a fifth of a small problem's time */
        bigbuf_set_cap(fmin(case_memory_estimate(&c), memory_budget()));
        if (judge_one(h, &c, seeds[i], want, &sig[i]) && first < 0) {
            first = i;
            if (want) break;
        }
    }
    return first;
}

/* ---- progress and findings ----------------------------------------------------------------- */

void hunt_progress(hunt_t *h, int force)
{
    double t = now_seconds();
    const int tty = isatty(2);
    if (h->o->quiet || (!force && t - h->last_progress < (tty ? 0.5 : 5.0))) return;
    h->last_progress = t;
    double el = t - h->t0;
    fprintf(stderr, "%shunt %s: %lld cases tried (%.0f/s), %lld failing, %d distinct, %lld shrinking steps%s",
            tty ? "\r" : "", h->op->name, h->tried, el > 0 ? (double)h->judged / el : 0.0, h->raw_failures,
            cJSON_GetArraySize(h->found), h->steps, tty && !force ? "   " : "\n");
}

/* "input [1,1,2,3], rois [1,5]" */
static void shapes_text(const cJSON *c, char *buf, size_t len)
{
    size_t used = 0;
    const cJSON *s, *d;
    buf[0] = 0;
    cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(c, "shapes")) {
        used += (size_t)snprintf(buf + used, len - used, "%s%s [", used ? ", " : "", s->string);
        cJSON_ArrayForEach(d, s) used += (size_t)snprintf(buf + used, len - used, "%s%lld", d != s->child ? "," : "",
                                                          (long long)d->valuedouble);
        used += (size_t)snprintf(buf + used, len - used, "]");
        if (used >= len) return;
    }
}

/* the minimal case's worst element and what it is, kept with the case and printed */
static cJSON *finding_json(hunt_t *h, const case_result *r, char *worst, size_t len)
{
    cJSON *f = cJSON_CreateObject();
    cJSON_AddStringToObject(f, "status", status_name(r->status));
    cJSON_AddStringToObject(f, "message", r->message);
    cJSON_AddStringToObject(f, "impl", h->o->impl_spec);
    cJSON_AddNumberToObject(f, "hunt_seed", (double)h->o->seed);
    snprintf(worst, len, "%s", r->message);
    for (int o = 0; o < r->n_out; o++) {
        const output_result *out = &r->out[o];
        if (out->skipped || out->not_run || !(out->cmp.n_over || out->cmp.n_nonfinite_mismatch)) continue;
        char at[160];
        index_str(&out->shape, out->cmp.worst_index, at, sizeof at);
        snprintf(worst, len, "%s%s: got %.9g, expected %.9g, tolerance %.3g (%lld of %lld elements over)", out->name, at,
                 out->cmp.worst_got, out->cmp.worst_ref, out->cmp.worst_tol, (long long)out->cmp.n_over,
                 (long long)out->cmp.n);
        cJSON_AddStringToObject(f, "worst", worst);
        break;
    }
    return f;
}

static void report_found(hunt_t *h, cJSON *m)
{
    char worst[600], shapes[400];
    cJSON_AddItemToObject(m, "found", finding_json(h, &h->last, worst, sizeof worst));
    if (!hunt_add_found(h->found, m)) {
        h->dup_streak++;
        if (!h->o->quiet) fprintf(stderr, "\nhunt: this failure shrank to a case found before\n");
        cJSON_Delete(m);
        return;
    }
    h->dup_streak = 0;
    shapes_text(m, shapes, sizeof shapes);
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(m, "name");
    char *attrs = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(m, "attrs"));
    fprintf(stderr, "\nhunt: found %d (%s): %s\n  shapes: %s\n  attrs: %s\n  worst: %s\n", cJSON_GetArraySize(h->found),
            status_name(h->last.status), name->valuestring, shapes, attrs ? attrs : "{}", worst);
    if (h->dir_mode) /* the device runs the found suite's export as it ran the rounds */
        fprintf(stderr, "  repro: %s export %s --out D; %s (with {dir} = D); %s run %s --impl dir:D --filter hunt/%s\n",
                conform_program(), h->o->out_path, h->o->runner_repro ? h->o->runner_repro : h->o->runner, conform_program(),
                h->o->out_path, name->valuestring);
    else
        fprintf(stderr, "  repro: %s run %s --impl %s%s%s --filter hunt/%s\n", conform_program(), h->o->out_path,
                h->o->impl_spec, h->is_optimized ? " --isa " : "", h->is_optimized ? conform_isa_name(h->env.ex.isa) : "",
                name->valuestring);
    free(attrs);
    hunt_write_found(h->found, h->waived, h->o->seed, h->o->out_path);
}

/* a minimal case a waiver covers: counted, kept once with its waiver, not a finding */
static void report_waived(hunt_t *h, cJSON *m, const cJSON *w)
{
    char worst[600];
    h->n_waived++;
    cJSON_AddItemToObject(m, "found", finding_json(h, &h->last, worst, sizeof worst));
    cJSON_AddItemToObject(m, "waiver", cJSON_Duplicate(w, 1));
    const char *reason = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(w, "reason"));
    if (!hunt_add_found(h->waived, m)) { cJSON_Delete(m); return; }
    if (!h->o->quiet)
        fprintf(stderr, "\nhunt: waived %d (%s): %s\n  worst: %s\n  waiver: %s\n", cJSON_GetArraySize(h->waived),
                cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "name")), reason, worst,
                cJSON_IsString(cJSON_GetObjectItemCaseSensitive(w, "pattern"))
                    ? cJSON_GetObjectItemCaseSensitive(w, "pattern")->valuestring : "(a hunt's alone: no pattern)");
    hunt_write_found(h->found, h->waived, h->o->seed, h->o->out_path);
}

/* a failing draw shrunk, then its minimal case judged once more for what it shows */
static void shrink_and_report(hunt_t *h, hunt_sketch *s, const hunt_sig *sig, uint64_t allowed)
{
    if (h->first_fail_s < 0) h->first_fail_s = now_seconds() - h->t0;
    h->raw_failures++;
    h->allowed = allowed;
    h->shrinking = 1;
    cJSON *m = hunt_shrink(h, s, sig);
    h->shrinking = 0;
    hunt_sig got;
    uint64_t one = 1;
    if (!m || hunt_judge(h, &m, &one, 1, sig, &got) != 0) {
        fprintf(stderr, "\nhunt: a failure could not be kept (its case did not replay)\n");
        cJSON_Delete(m);
        return;
    }
    const cJSON *w = h->allowed ? hunt_waiver_for(h, m, &h->last, sig) : NULL;
    if (w) report_waived(h, m, w);
    else report_found(h, m);
}

/* ---- the search ----------------------------------------------------------------------------- */

#define MAX_BATCH 256
#define HUNT_SAMPLE_BUDGET 4e6 /* sample evaluations per drawn problem: a few ms of the reference */
#define DUP_STREAK_STOP 3 /* failures that keep shrinking to known cases: the bugs are saturated */

/* enough found: interrupted, --max-found distinct cases, or the failures keep shrinking to known ones */
static int hunt_enough(const hunt_t *h)
{
    return hunt_stop || cJSON_GetArraySize(h->found) >= h->o->max_found || h->dup_streak >= DUP_STREAK_STOP;
}

static int hunt_done(const hunt_t *h)
{
    const hunt_opts *o = h->o;
    return hunt_enough(h) || (o->cases > 0 && h->tried >= o->cases) || (o->seconds > 0 && now_seconds() - h->t0 >= o->seconds);
}

/* one round: a batch drawn (one case in process, --batch for dir:), judged, failures shrunk */
static int search_round(hunt_t *h)
{
    int n = h->dir_mode ? h->o->batch : 1, shrunk = 0;
    if (n > MAX_BATCH) n = MAX_BATCH;
    hunt_sketch s[MAX_BATCH];
    cJSON *cases[MAX_BATCH];
    uint64_t seeds[MAX_BATCH];
    hunt_sig sig[MAX_BATCH], done[MAX_BATCH];
    uint64_t done_held[MAX_BATCH];
    for (int i = 0; i < n; i++) {
        draw_sketch(h, &s[i]);
        /* a draw with exact data is judged as it is, not a copy of every value (the sketch keeps
           it; shrinking may replace it, after the judging) */
        cases[i] = s[i].exact ? s[i].exact : hunt_sketch_case(h, &s[i]);
        seeds[i] = s[i].seed;
    }
    int rc = hunt_judge(h, cases, seeds, n, NULL, sig);
    for (int i = 0; i < n; i++)
        if (cases[i] == s[i].exact) cases[i] = NULL;
    h->tried += n;
    for (int i = 0; i < n && rc != -2; i++) {
        /* (an exact draw was judged as its sketch's own data, not a copy: its waivers are read there)
           a batch's failures of one kind shrink once; with waivers, of one kind and the same waivers'
           "when" holding, so that a waived failure never hides a failure no waiver's "when" holds on */
        uint64_t held = sig[i].finding && h->n_waivers ? hunt_waivers_holding_spec(h, cases[i] ? cases[i] : s[i].exact, seeds[i]) : 0;
        int seen = 0;
        for (int j = 0; j < shrunk; j++) seen |= hunt_same(&done[j], &sig[i]) && done_held[j] == held;
        if (sig[i].finding && !seen && !hunt_enough(h)) { /* a failure drawn in time is shrunk, even past it */
            done_held[shrunk] = held;
            done[shrunk++] = sig[i];
            shrink_and_report(h, &s[i], &sig[i], held);
        } else if (sig[i].finding) h->raw_failures++;
    }
    for (int i = 0; i < n; i++) {
        cJSON_Delete(cases[i]);
        cJSON_Delete(s[i].attrs);
        cJSON_Delete(s[i].gen);
        cJSON_Delete(s[i].exact);
    }
    hunt_progress(h, 0);
    return rc == -2 ? -1 : 0;
}

static int hunt_open(hunt_t *h, const hunt_opts *o)
{
    memset(h, 0, sizeof *h);
    h->o = o;
    h->first_fail_s = -1;
    if (!(h->op = op_find(o->op_name))) return cli_unknown_op("hunt", o->op_name);
    if (!h->op->hunt) return usage_error("hunt: %s has no hunt description (ops/<family>/hunt_<family>.c)", o->op_name);
    const dtype_desc *dt = o->dtype_name ? dtype_find(o->dtype_name) : NULL;
    if (o->dtype_name && !dt) return usage_error("--dtype takes %s, got '%s'", dtype_names(), o->dtype_name);
    h->dir_mode = !strncmp(o->impl_spec, "dir:", 4);
    char err[CONFORM_ERR_LEN];
    if (h->dir_mode) {
        if (!o->runner) return usage_error("hunt --impl %s: a dir: hunt needs --runner CMD ({dir}: the exported round)", o->impl_spec);
        snprintf(h->tmp, sizeof h->tmp, "%s", o->impl_spec + 4);
        ssize_t n = readlink("/proc/self/exe", h->exe, sizeof h->exe - 1);
        if (n <= 0) return usage_error("hunt: cannot find this program (/proc/self/exe) for the rounds' exports");
        h->exe[n] = 0;
        if (!h->tmp[0] || (mkdir(h->tmp, 0755) && access(h->tmp, W_OK)))
            return usage_error("hunt --impl %s: cannot create or write the directory '%s'", o->impl_spec, h->tmp);
    } else {
        if (o->runner) return usage_error("hunt --runner: only with --impl dir:DIR");
        if (impl_open(o->impl_spec, dt, &h->impl, err, sizeof err)) return usage_error("%s", err);
        h->impl_opened = 1;
        if (!impl_supports(&h->impl, h->op))
            return usage_error("hunt: %s does not implement %s", impl_name(&h->impl), h->op->name);
    }
    int isolate = o->isolate >= 0 ? o->isolate : !strncmp(o->impl_spec, "plugin:", 7);
    h->is_optimized = !strcmp(o->impl_spec, "optimized");
    conform_exec ex = {o->isa, o->threads > 0 ? o->threads : 1};
    if (resolve_isa(&ex)) return EXIT_USAGE;
    h->env = (run_env){ex, &h->impl, {isolate, o->timeout_s, &hunt_stop}, ex.threads, NULL, NULL};
    if (o->baseline) {
        if (!strncmp(o->baseline, "dir:", 4)) return usage_error("hunt --baseline %s: optimized or plugin:PATH.so", o->baseline);
        if (impl_open_as("--baseline", o->baseline, dt, &h->base, err, sizeof err)) return usage_error("%s", err);
        h->has_base = 1;
        h->base_env = h->env;
        h->base_env.impl = &h->base;
        h->base_env.policy.isolate = !strncmp(o->baseline, "plugin:", 7);
    }
    /* small problems: a drawn roi that asks for millions of adaptive samples is refused (a refusal
       is no finding), so one draw cannot take the hunt's time */
    if (conform_sample_budget > HUNT_SAMPLE_BUDGET) conform_sample_budget = HUNT_SAMPLE_BUDGET;
    h->rng = conform_rng((unsigned long)o->seed);
    h->found = cJSON_CreateArray();
    h->waived = cJSON_CreateArray();
    const char *dtype = o->dtype_name ? o->dtype_name : h->impl_opened ? h->impl.dtype->name : "float32";
    if (o->waivers_path && hunt_waivers_load(h, o->waivers_path, dtype)) return EXIT_USAGE;
    bigbuf_keep_heap();
    return load_templates(h);
}

static void hunt_close(hunt_t *h)
{
    bigbuf_set_cap(0);
    if (h->impl_opened) impl_close(&h->impl);
    if (h->has_base) impl_close(&h->base);
    if (h->has_last) case_result_free(&h->last);
    if (h->rng) gsl_rng_free(h->rng);
    cJSON_Delete(h->tmpl);
    cJSON_Delete(h->found);
    cJSON_Delete(h->waived);
    cJSON_Delete(h->waivers);
}

int hunt_run(const hunt_opts *o)
{
    hunt_t h;
    int rc = hunt_open(&h, o);
    if (rc) { hunt_close(&h); return rc; }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    h.t0 = now_seconds();
    while (!hunt_done(&h))
        if (search_round(&h)) { hunt_close(&h); return EXIT_USAGE; }
    hunt_progress(&h, 1);
    double el = now_seconds() - h.t0;
    int nf = cJSON_GetArraySize(h.found);
    char isa[32] = ""; /* the SIMD level judged: the optimized path's alone */
    if (h.is_optimized) snprintf(isa, sizeof isa, " (isa %s)", conform_isa_name(h.env.ex.isa));
    fprintf(stderr, "hunt %s on %s%s, seed %llu: %lld cases in %.1f s (%.0f judged/s), %lld failing, %d distinct minimal "
            "failures%s%s, %lld shrinking steps", h.op->name, o->impl_spec, isa, (unsigned long long)o->seed, h.tried, el,
            el > 0 ? (double)h.judged / el : 0.0, h.raw_failures, nf, nf ? " in " : "", nf ? o->out_path : "", h.steps);
    if (el > 0) /* what bounds the rate */
        fprintf(stderr, "; time: reference %.0f%%, implementation %.0f%%, the rest (drawing, building, judging, shrinking) %.0f%%",
                100 * h.t_ref / el, 100 * h.t_impl / el, 100 * (el - h.t_ref - h.t_impl) / el);
    if (h.not_impl) fprintf(stderr, "; %lld cases not implemented (nothing judged in them)", h.not_impl);
    if (h.runner_skips) fprintf(stderr, "; %lld cases the runner declined with a reason, not counted", h.runner_skips);
    if (o->waivers_path)
        fprintf(stderr, "; %lld failures waived (%d distinct minimal cases%s%s; %d waivers of %s apply to %s)", h.n_waived,
                cJSON_GetArraySize(h.waived), cJSON_GetArraySize(h.waived) ? ", in " : "",
                cJSON_GetArraySize(h.waived) ? o->out_path : "", h.n_waivers, o->waivers_path, h.op->name);
    if (h.has_base) fprintf(stderr, "; %lld failures shared with --baseline %s, not counted", h.shared, o->baseline);
    if (h.first_fail_s >= 0) fprintf(stderr, "; first failure after %.2f s", h.first_fail_s);
    fprintf(stderr, "%s\n", hunt_stop ? " (interrupted)" : h.dup_streak >= DUP_STREAK_STOP ? " (stopped: the failures keep shrinking to cases found before)" : "");
    hunt_close(&h);
    return nf ? EXIT_FAIL : EXIT_OK;
}
