#include "fill.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

int json_names_hold(const cJSON *obj, const char *key, const char *name)
{
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(obj, key), *e;
    if (!l) return 1;
    if (!cJSON_IsArray(l)) return -1;
    int found = 0;
    cJSON_ArrayForEach(e, l) {
        if (!cJSON_IsString(e)) return -1;
        found |= name && !strcmp(e->valuestring, name);
    }
    return found;
}

double json_number(const cJSON *obj, const char *key, double def)
{
    const cJSON *v = obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
    return cJSON_IsNumber(v) ? v->valuedouble : def;
}

gsl_rng *conform_rng(unsigned long seed)
{
    gsl_set_error_handler_off();
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (r) gsl_rng_set(r, seed);
    return r;
}

double fill_uniform(gsl_rng *rng, double lo, double hi)
{
    return round_f32(lo + (hi - lo) * gsl_rng_uniform(rng));
}

double fill_log_magnitude(gsl_rng *rng, double lo, double hi)
{
    return round_f32(lo * pow(hi / lo, gsl_rng_uniform(rng)));
}

int fill_pick(gsl_rng *rng, double frac) { return frac > 0 && gsl_rng_uniform(rng) < frac; }

void json_range(const cJSON *g, const char *key, double *lo, double *hi)
{
    const cJSON *r = g ? cJSON_GetObjectItemCaseSensitive(g, key) : NULL;
    if (cJSON_GetArraySize(r) != 2) return;
    *lo = cJSON_GetArrayItem(r, 0)->valuedouble;
    *hi = cJSON_GetArrayItem(r, 1)->valuedouble;
}

int fill_huge_range(const cJSON *g, double *frac, double *lo, double *hi, const char *what, char *err, size_t errlen)
{
    *frac = json_number(g, "huge_frac", 0.0);
    *lo = 1e2;
    *hi = 1e9;
    json_range(g, "huge", lo, hi);
    if (*frac > 0 && !(*lo > 0 && *hi >= *lo && isfinite(*hi))) {
        snprintf(err, errlen, "%s: huge [%g, %g] needs finite 0 < lo <= hi", what, *lo, *hi);
        return -1;
    }
    return 0;
}

void fill_roi_frame(const cJSON *g, int64_t H, int64_t W, double s, double *img_h, double *img_w, double *size_lo,
                    double *size_hi)
{
    *img_h = (double)H / s;
    *img_w = (double)W / s;
    json_range(g, "image", img_h, img_w);
    *size_lo = 1.0;
    *size_hi = fmax(*img_h, *img_w) / 2;
    json_range(g, "size", size_lo, size_hi);
}

void fill_edge_span(double n, int64_t pooled, int64_t sr, double *start, double *end)
{
    const int64_t g = sr > 0 ? sr : 1;
    const double samples = (double)(pooled * g);
    const double step = samples > 1 ? (n + 1.0) / (samples - 1.0) : 0.0;
    *start = samples > 1 ? -1.0 - 0.5 * step : -1.0 - 0.5;
    *end = samples > 1 ? *start + samples * step : *start + 1.0;
}

static int json_value(const cJSON *e, double *v)
{
    if (cJSON_IsNumber(e)) { *v = e->valuedouble; return 0; }
    if (cJSON_IsString(e)) {
        if (!strcmp(e->valuestring, "nan")) { *v = NAN; return 0; }
        if (!strcmp(e->valuestring, "inf")) { *v = INFINITY; return 0; }
        if (!strcmp(e->valuestring, "-inf")) { *v = -INFINITY; return 0; }
    }
    return -1;
}

static int flatten(const cJSON *node, double *dst, int64_t n, int64_t *at)
{
    if (cJSON_IsArray(node)) {
        const cJSON *e;
        cJSON_ArrayForEach(e, node) if (flatten(e, dst, n, at)) return -1;
        return 0;
    }
    double v;
    if (json_value(node, &v)) return -1;
    if (*at < n) dst[*at] = v;
    (*at)++;
    return 0;
}

int fill_from_json(double *dst, int64_t n, const cJSON *data, const char *what, char *err, size_t errlen)
{
    int64_t at = 0;
    if (flatten(data, dst, n, &at)) {
        snprintf(err, errlen, "%s: data must hold numbers or \"nan\", \"inf\", \"-inf\"", what);
        return -1;
    }
    if (at != n) {
        snprintf(err, errlen, "%s: data has %lld values, the shape needs %lld", what, (long long)at, (long long)n);
        return -1;
    }
    return 0;
}

/* "nan_pixels": [[h, w], ...]: NaN at those pixels of every plane (every image and channel; a
 * negative index counts from the end), of an [..., H, W] tensor or, with "channels_last", of an
 * [..., H, W, C] one. Isolates what a kernel does with one NaN pixel (such as the pixel (0, 0)
 * a zero-weight read of an out-of-window sample lands on). */
static int nan_pixels(tensor_t *t, const cJSON *spec, const char *what, char *err, size_t errlen)
{
    const cJSON *px = spec ? cJSON_GetObjectItemCaseSensitive(spec, "nan_pixels") : NULL;
    if (!px) return 0;
    const int cl = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(spec, "channels_last"));
    const int r = t->shape.rank;
    if (!cJSON_IsArray(px) || r < (cl ? 3 : 2)) {
        snprintf(err, errlen, "%s: nan_pixels must be a list of [h, w] on a tensor of rank >= %d", what, cl ? 3 : 2);
        return -1;
    }
    const int64_t C = cl ? t->shape.dims[r - 1] : 1, W = t->shape.dims[r - (cl ? 2 : 1)], H = t->shape.dims[r - (cl ? 3 : 2)];
    const int64_t planes = H * W * C > 0 ? tensor_numel(t) / (H * W * C) : 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, px) {
        double h = cJSON_GetArraySize(e) == 2 ? cJSON_GetArrayItem(e, 0)->valuedouble : NAN;
        double w = cJSON_GetArraySize(e) == 2 ? cJSON_GetArrayItem(e, 1)->valuedouble : NAN;
        if (h < 0) h += (double)H;
        if (w < 0) w += (double)W;
        if (!(h >= 0 && h < (double)H && w >= 0 && w < (double)W && h == floor(h) && w == floor(w))) {
            snprintf(err, errlen, "%s: nan_pixels entry must be [h, w] with integers inside the %lld x %lld plane", what,
                     (long long)H, (long long)W);
            return -1;
        }
        for (int64_t p = 0; p < planes; p++)
            for (int64_t c = 0; c < C; c++) t->data[((p * H + (int64_t)h) * W + (int64_t)w) * C + c] = NAN;
    }
    return 0;
}

int fill_values(tensor_t *t, const cJSON *spec, gsl_rng *rng, const char *what, char *err, size_t errlen)
{
    int64_t n = tensor_numel(t);
    const cJSON *data = spec ? cJSON_GetObjectItemCaseSensitive(spec, "data") : NULL;
    if (data) return fill_from_json(t->data, n, data, what, err, errlen);

    const cJSON *d = spec ? cJSON_GetObjectItemCaseSensitive(spec, "dist") : NULL;
    const char *dist = cJSON_IsString(d) ? d->valuestring : "uniform";
    if (!strcmp(dist, "uniform")) {
        double lo = json_number(spec, "lo", -1.0), hi = json_number(spec, "hi", 1.0);
        for (int64_t i = 0; i < n; i++) t->data[i] = fill_uniform(rng, lo, hi);
    } else if (!strcmp(dist, "normal")) {
        double mean = json_number(spec, "mean", 0.0), sd = json_number(spec, "std", 1.0);
        for (int64_t i = 0; i < n; i++) t->data[i] = round_f32(mean + gsl_ran_gaussian(rng, sd));
    } else if (!strcmp(dist, "int")) {
        double lo = json_number(spec, "lo", 0.0), hi = json_number(spec, "hi", 9.0);
        if (!(hi - lo + 1 >= 1 && hi - lo + 1 <= 4294967295.0) || lo != floor(lo) || hi != floor(hi)) {
            snprintf(err, errlen, "%s: dist int needs integers lo <= hi, at most 2^32 apart", what);
            return -1;
        }
        unsigned long span = (unsigned long)(hi - lo + 1);
        for (int64_t i = 0; i < n; i++) t->data[i] = round_f32(lo + (double)gsl_rng_uniform_int(rng, span ? span : 1));
    } else if (!strcmp(dist, "log_uniform")) {
        /* magnitudes log-uniform in [lo, hi], each sign equally likely: values across many binades
           (grid and roi coordinates up to the int32 limits) */
        double lo = json_number(spec, "lo", 1.0), hi = json_number(spec, "hi", 1e9);
        if (!(lo > 0 && hi >= lo && isfinite(hi))) {
            snprintf(err, errlen, "%s: dist log_uniform needs finite 0 < lo <= hi", what);
            return -1;
        }
        for (int64_t i = 0; i < n; i++) {
            double m = lo * pow(hi / lo, gsl_rng_uniform(rng));
            t->data[i] = round_f32(gsl_rng_uniform(rng) < 0.5 ? -m : m);
        }
    } else if (!strcmp(dist, "const")) {
        double v = json_number(spec, "value", 0.0);
        for (int64_t i = 0; i < n; i++) t->data[i] = round_f32(v);
    } else if (!strcmp(dist, "iota")) {
        double s = json_number(spec, "start", 1.0);
        for (int64_t i = 0; i < n; i++) t->data[i] = round_f32(s + (double)i);
    } else {
        snprintf(err, errlen, "%s: unknown dist '%s' (uniform, normal, int, log_uniform, const, iota, or data)", what, dist);
        return -1;
    }
    double nan_frac = json_number(spec, "nan_frac", 0.0), inf_frac = json_number(spec, "inf_frac", 0.0);
    for (int64_t i = 0; i < n && (nan_frac > 0 || inf_frac > 0); i++) {
        double u = gsl_rng_uniform(rng);
        if (u < nan_frac) t->data[i] = NAN;
        else if (u < nan_frac + inf_frac) t->data[i] = gsl_rng_uniform(rng) < 0.5 ? INFINITY : -INFINITY;
    }
    return nan_pixels(t, spec, what, err, errlen);
}
