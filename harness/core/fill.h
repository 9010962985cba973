/* Input filling shared by every op: values from a distribution, exact data, special values.
 * Every generated value is rounded to float32 so the reference and the optimized path read
 * the same numbers. */
#ifndef CONFORM_FILL_H
#define CONFORM_FILL_H

#include <gsl/gsl_rng.h>
#include <cJSON.h>

#include "tensor.h"

/* spec (may be NULL: uniform in [-1, 1]):
 *   {"dist": "uniform", "lo": -1, "hi": 1}     {"dist": "normal", "mean": 0, "std": 1}
 *   {"dist": "int", "lo": 0, "hi": 9}          {"dist": "const", "value": 0}
 *   {"dist": "iota", "start": 1}  (start, start+1, ... in memory order)
 *   {"data": [...]} exact values, flat or nested, numel of them ("nan", "inf", "-inf" allowed)
 * plus optional "nan_frac", "inf_frac": that fraction of elements replaced, and "nan_pixels":
 * [[h, w], ...] (with "channels_last" for [..., H, W, C]): NaN at those pixels of every plane.
 * what names the tensor in messages. */
int fill_values(tensor_t *t, const cJSON *spec, gsl_rng *rng, const char *what, char *err, size_t errlen);

/* Reads exact data (nested arrays or flat, numbers or "nan"/"inf"/"-inf") into dst[n]. */
int fill_from_json(double *dst, int64_t n, const cJSON *data, const char *what, char *err, size_t errlen);

double fill_uniform(gsl_rng *rng, double lo, double hi); /* rounded to float32 */
/* a magnitude log-uniform in [lo, hi], rounded to float32 */
double fill_log_magnitude(gsl_rng *rng, double lo, double hi);
/* A roi generator's huge coordinates: "huge_frac" (default 0), the chance that each
 * coordinate becomes extreme, and "huge": [lo, hi] (default [1e2, 1e9]), its magnitudes, log-uniform.
 * -1 with err on a bad range. */
int fill_huge_range(const cJSON *g, double *frac, double *lo, double *hi, const char *what, char *err, size_t errlen);
/* A seeded Mersenne twister, with GSL's abort-on-error handler off: a generator asked for an
 * impossible range returns 0 instead of ending the process. NULL when out of memory. */
gsl_rng *conform_rng(unsigned long seed);
/* 1 with probability frac (a generator's "*_frac" knob; no draw when frac <= 0) */
int fill_pick(gsl_rng *rng, double frac);
/* A generator's [lo, hi] knob g[key] into *lo, *hi; left as they are when g has no such pair. */
void json_range(const cJSON *g, const char *key, double *lo, double *hi);
/* A roi generator's frame: the image ("image": [h, w]; default the H x W map over scale s) and the
 * roi sizes ("size": [lo, hi]; default 1 to half the image's larger side). */
void fill_roi_frame(const cJSON *g, int64_t H, int64_t W, double s, double *img_h, double *img_w, double *size_lo,
                    double *size_hi);
/* One roi axis of pooled bins of g samples each (g: the fixed sampling ratio, or 1) whose first and
 * last samples land exactly on -1 and on n: the span [start, end] in feature coordinates. */
void fill_edge_span(double n, int64_t pooled, int64_t sr, double *start, double *end);
double json_number(const cJSON *obj, const char *key, double def);
/* 1 when the optional string array key of obj holds name (a missing key holds everything; a NULL
   name only checks the key); -1 when the key is not an array of strings (a waiver's "dtypes",
   "outputs", "ops") */
int json_names_hold(const cJSON *obj, const char *key, const char *name);

static inline double round_f32(double v) { return (double)(float)v; }

#endif
