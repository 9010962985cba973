/* --dump-failures DIR: each failing case in a folder of its own, with everything needed to look
 * at it (inputs, golden, output, each element's tolerance and err/tol, attributes) and a line
 * that judges it again from those files alone, from any directory. */
#include "dump_case.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "datadir.h"
#include "npy.h"
#include "report.h"

void dump_folder(const char *dir, const char *id, char *buf, size_t len)
{
    char name[300];
    size_t n = 0;
    for (const char *s = id; *s && n + 1 < sizeof name; s++)
        name[n++] = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._=,+-", *s) ? *s : '_';
    name[n] = '\0';
    snprintf(buf, len, "%s/%s", dir, name);
}

/* each element's tolerance as the comparator applies it, and err/tol against it (0 where both
   sides agree exactly, NaN with NaN included; infinite where only one side is finite) */
static void tol_and_ratio(const judge_ref *j, int o, const double *got, double *tol, double *ratio)
{
    tol_inputs t = judge_tol(j, o);
    const double *ref = j->ref[o];
    for (int64_t i = 0; i < j->n[o]; i++) {
        double ambig, tl = compare_tolerance(&t, i, &ambig);
        tol[i] = tl + ambig;
        if (!got) continue;
        double g = got[i], r = ref[i], err = fabs(g - r);
        if ((isnan(g) && isnan(r)) || g == r) ratio[i] = 0;
        else if (!isfinite(g) || !isfinite(r)) ratio[i] = INFINITY;
        else ratio[i] = tol[i] > 0 ? err / tol[i] : INFINITY;
    }
}

/* one output's golden, and with got its output, tol and err/tol; file names into files */
static int dump_output(const char *folder, const judge_ref *j, int o, const char *name, const shape_t *shape,
                       const double *got, cJSON *files, char *err, size_t errlen)
{
    char path[1200], base[128];
    snprintf(base, sizeof base, "golden_%s.npy", name);
    snprintf(path, sizeof path, "%s/%s", folder, base);
    if (npy_write_f64(path, shape, j->ref[o], err, errlen)) return -1;
    cJSON_AddStringToObject(files, base, "the reference (float64)");
    if (!got) return 0;
    snprintf(base, sizeof base, "output_%s.npy", name);
    snprintf(path, sizeof path, "%s/%s", folder, base);
    if (npy_write_dtype(path, shape, j->dt, got, err, errlen)) return -1;
    cJSON_AddStringToObject(files, base, "the implementation's output, at the dtype");
    size_t bytes = (size_t)(j->n[o] ? j->n[o] : 1) * sizeof(double);
    double *tol = malloc(bytes), *ratio = malloc(bytes);
    int rc = !tol || !ratio ? (snprintf(err, errlen, "out of memory"), -1) : 0;
    if (!rc) {
        tol_and_ratio(j, o, got, tol, ratio);
        snprintf(path, sizeof path, "%s/tol_%s.npy", folder, name);
        rc = npy_write_f64(path, shape, tol, err, errlen);
        snprintf(path, sizeof path, "%s/err_over_tol_%s.npy", folder, name);
        if (!rc) rc = npy_write_f64(path, shape, ratio, err, errlen);
    }
    snprintf(base, sizeof base, "tol_%s.npy", name);
    cJSON_AddStringToObject(files, base, "each element's tolerance (widened where ambiguous), float64");
    snprintf(base, sizeof base, "err_over_tol_%s.npy", name);
    cJSON_AddStringToObject(files, base, "|output - golden| / tol; > 1 fails");
    free(tol);
    free(ratio);
    return rc;
}

static cJSON *attr_json(const attr_value *v)
{
    switch (v->kind) {
    case ATTR_INT: return cJSON_CreateNumber((double)v->i);
    case ATTR_FLOAT: return cJSON_CreateNumber(v->f);
    case ATTR_BOOL: return cJSON_CreateBool(v->i != 0);
    case ATTR_STRING: return cJSON_CreateString(v->s);
    case ATTR_INT_LIST: break;
    }
    cJSON *l = cJSON_CreateArray();
    for (int k = 0; k < v->n; k++) cJSON_AddItemToArray(l, cJSON_CreateNumber((double)v->list[k]));
    return l;
}

/* " --attr k=v" for the attributes the case gives (defaults stay defaults, as validation tells
   them apart), " --input n=input_n.npy", " --actual o=output_o.npy" and the dtype; inputs and
   outputs under prefix ("" or the folder's absolute path and '/') */
static void check_args(const problem_t *p, const judge_ref *j, const char *prefix, char *buf, size_t len)
{
    char v[600], q[1400], w[1400];
    size_t used = (size_t)snprintf(buf, len, "check %s", p->op->name);
    for (int i = 0; i < p->op->n_attrs && used < len; i++) {
        if (p->attr_set[i] != 1) continue;
        snprintf(w, sizeof w, "%s=%s", p->op->attrs[i].name, attr_text(&p->attr[i], v, sizeof v));
        used += (size_t)snprintf(buf + used, len - used, " --attr %s", shell_quote(w, q, sizeof q));
    }
    for (int i = 0; i < p->op->n_inputs && used < len; i++) {
        snprintf(w, sizeof w, "%s=%sinput_%s.npy", p->op->inputs[i].name, prefix, p->op->inputs[i].name);
        used += (size_t)snprintf(buf + used, len - used, " --input %s", shell_quote(w, q, sizeof q));
    }
    for (int o = 0; o < p->op->n_outputs && used < len; o++) {
        if (p->out_skipped[o]) continue;
        snprintf(w, sizeof w, "%s=%soutput_%s.npy", p->op->outputs[o].name, prefix, p->op->outputs[o].name);
        used += (size_t)snprintf(buf + used, len - used, " --actual %s", shell_quote(w, q, sizeof q));
    }
    if (used < len) snprintf(buf + used, len - used, " --dtype %s", j->dt->name);
}

static int write_text(const char *path, const char *text, mode_t mode, char *err, size_t errlen)
{
    FILE *f = fopen(path, "w");
    int rc = !f || fputs(text, f) < 0;
    if (f && fclose(f)) rc = 1;
    if (rc) snprintf(err, errlen, "%s: cannot write (%s)", path, strerror(errno));
    else chmod(path, mode);
    return rc ? -1 : 0;
}

/* repro.sh (relative to the folder: it moves with it) and repro.txt (absolute), when every
   computed output is there to judge; else repro.txt says there is none */
static int write_repro(const char *folder, const problem_t *p, const judge_ref *j, int have_outputs, const case_result *r,
                       cJSON *meta, char *err, size_t errlen)
{
    char prog[PATH_MAX], real[PATH_MAX], prefix[PATH_MAX + 2], args[8192], text[9000], path[1200], q[PATH_MAX + 8];
    /* in the repository conform_program() is build/conform, relative to the data directory */
    const char *given = conform_program();
    char in_data[PATH_MAX];
    if (given[0] != '/') given = conform_data_file(given, in_data, sizeof in_data);
    if (!realpath(given, prog)) snprintf(prog, sizeof prog, "%s", given);
    if (!realpath(folder, real)) snprintf(real, sizeof real, "%s", folder);
    snprintf(path, sizeof path, "%s/repro.txt", folder);
    if (!have_outputs) {
        snprintf(text, sizeof text, "%s: %s gave no output to judge; the inputs and the golden are here\n",
                 status_name(r->status), r->message);
        return write_text(path, text, 0644, err, errlen);
    }
    snprintf(prefix, sizeof prefix, "%s/", real);
    check_args(p, j, prefix, args, sizeof args);
    snprintf(text, sizeof text, "%s %s\n", shell_quote(prog, q, sizeof q), args);
    cJSON_AddStringToObject(meta, "repro", text);
    if (write_text(path, text, 0644, err, errlen)) return -1;
    check_args(p, j, "", args, sizeof args);
    snprintf(text, sizeof text, "#!/bin/sh\n# judges this folder's output again (status %s); runs from any directory\n"
             "cd \"$(dirname \"$0\")\" && exec %s %s \"$@\"\n", status_name(r->status), shell_quote(prog, q, sizeof q), args);
    snprintf(path, sizeof path, "%s/repro.sh", folder);
    return write_text(path, text, 0755, err, errlen);
}

static int dump_inputs(const char *folder, const problem_t *p, const dtype_desc *dt, cJSON *files, char *err, size_t errlen)
{
    char path[1200], base[128];
    for (int i = 0; i < p->op->n_inputs; i++) {
        snprintf(base, sizeof base, "input_%s.npy", p->op->inputs[i].name);
        snprintf(path, sizeof path, "%s/%s", folder, base);
        if (npy_write_dtype(path, &p->in[i].shape, dt, p->in[i].data, err, errlen)) return -1;
        cJSON_AddStringToObject(files, base, "input, at the dtype, as judged");
    }
    return 0;
}

int dump_case(const char *dir, const char *id, const problem_t *p, const judge_ref *j, const double *const *got,
              const case_result *r, char *err, size_t errlen)
{
    char folder[1100], path[1200];
    dump_folder(dir, id, folder, sizeof folder);
    if (mkdir_p(folder, err, errlen)) return -1;
    cJSON *meta = cJSON_CreateObject(), *attrs = cJSON_CreateObject(), *files;
    cJSON_AddStringToObject(meta, "id", id);
    cJSON_AddStringToObject(meta, "op", p->op->name);
    cJSON_AddStringToObject(meta, "dtype", j->dt->name);
    cJSON_AddNumberToObject(meta, "seed", (double)r->seed);
    cJSON_AddStringToObject(meta, "status", status_name(r->status));
    cJSON_AddStringToObject(meta, "message", r->message);
    files = cJSON_AddObjectToObject(meta, "files");
    for (int i = 0; i < p->op->n_attrs; i++) cJSON_AddItemToObject(attrs, p->op->attrs[i].name, attr_json(&p->attr[i]));
    int rc = dump_inputs(folder, p, j->dt, files, err, errlen), have_outputs = 1;
    for (int o = 0; o < p->op->n_outputs && !rc; o++) {
        if (p->out_skipped[o]) continue;
        have_outputs &= got && got[o];
        rc = dump_output(folder, j, o, p->op->outputs[o].name, &p->out_shape[o], got ? got[o] : NULL, files, err, errlen);
    }
    if (!rc) rc = write_repro(folder, p, j, have_outputs, r, meta, err, errlen);
    snprintf(path, sizeof path, "%s/attrs.json", folder);
    if (!rc) rc = write_json_atomic(path, attrs, err, errlen);
    snprintf(path, sizeof path, "%s/case.json", folder);
    if (!rc) rc = write_json_atomic(path, meta, err, errlen);
    cJSON_Delete(meta);
    cJSON_Delete(attrs);
    return rc ? -1 : 0;
}

void dump_case_hook(const char *dir, const case_t *c, const problem_t *p, const judge_ref *j, const double *const *got,
                    const case_result *r)
{
    char err[CONFORM_ERR_LEN];
    if (dump_case(dir, c->id, p, j, got, r, err, sizeof err))
        fprintf(stderr, "conform: --dump-failures: %s: %s (the verdict stands)\n", c->id, err);
}

void dump_remove(const char *dir, const char *id)
{
    char folder[1100], path[1400];
    dump_folder(dir, id, folder, sizeof folder);
    DIR *d = opendir(folder);
    if (!d) return;
    const struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(path, sizeof path, "%s/%s", folder, e->d_name);
            unlink(path);
        }
    closedir(d);
    rmdir(folder);
}
