/* conform hunt's waiver predicates (harness/hunt/hunt_waive.c, docs/hunt.md "Waivers"): each
 * "when" holds on the case with the divergence's defining property and not on the same case with
 * that one value moved off it. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "hunt_core.h"
#include "scratch.h"

static char dir[64], path[128];
static hunt_t h;

static void load(const char *op, const char *waivers)
{
    scratch_make(dir, sizeof dir, "hunt_waive");
    snprintf(path, sizeof path, "%s/w.json", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(waivers, f);
    fclose(f);
    memset(&h, 0, sizeof h);
    h.op = op_find(op);
    cr_assert(h.op);
    cr_assert_eq(hunt_waivers_load(&h, path, "float32"), 0);
}

static uint64_t holding(const char *case_json)
{
    cJSON *c = cJSON_Parse(case_json);
    cr_assert(c, "bad JSON: %s", case_json);
    uint64_t m = hunt_waivers_holding(&h, c);
    cJSON_Delete(c);
    return m;
}

static void fini(void) { cJSON_Delete(h.waivers); }

#define ROI_WAIVER "{\"waivers\": [{\"reason\": \"r\", \"link\": \"l\", \"when\": " \
    "{\"ops\": [\"roi_align\"], \"input\": \"rois\", \"column\": 0, \"in\": [-1, 0]}}]}"
#define ROI_CASE(b, x1) "{\"op\": \"roi_align\", \"shapes\": {\"input\": [1, 1, 1, 1], \"rois\": [1, 5]}, " \
    "\"gen\": {\"input\": {\"data\": [1]}, \"rois\": {\"data\": [" b ", " x1 ", 0, 1, 1]}}}"

Test(hunt_waive, batch_index_in_the_open_interval_only, .fini = fini)
{
    load("roi_align", ROI_WAIVER);
    cr_assert_eq(h.n_waivers, 1);
    cr_assert_eq(holding(ROI_CASE("-0.5", "0")), 1);
    cr_assert_eq(holding(ROI_CASE("0", "-0.5")), 0, "column 1 is not the batch index");
    cr_assert_eq(holding(ROI_CASE("-1", "0")), 0, "the interval is open");
    cr_assert_eq(holding(ROI_CASE("0", "0")), 0);
}

#define DEFORM_WAIVER "{\"waivers\": [{\"reason\": \"r\", \"link\": \"l\", \"when\": {\"ops\": [\"deformable_offsets\"], " \
    "\"all\": [{\"sample_on_window_line\": \"low\"}, {\"input\": \"x\", \"nonfinite\": true}], \"outputs\": [\"y\"]}}]}"
/* a 1 x 1 plane, ksize 1, pads 1: output (0, 0) samples at (-1 + dx, -1 + dy) */
#define DEFORM_CASE(x, dx) "{\"op\": \"deformable_offsets\", \"attrs\": {\"pads\": [1, 1, 1, 1], \"ksize\": [1, 1]}, " \
    "\"shapes\": {\"x\": [1, 1, 1, 1], \"offsets\": [1, 1, 1, 3]}, " \
    "\"gen\": {\"x\": {\"data\": [" x "]}, \"offsets\": {\"data\": [" dx ", 0.5, 1]}}}"

Test(hunt_waive, deformable_low_line_and_a_nonfinite_pixel_both, .fini = fini)
{
    load("deformable_offsets", DEFORM_WAIVER);
    cr_assert_eq(h.n_waivers, 1);
    cr_assert_eq(holding(DEFORM_CASE("\"-inf\"", "0")), 1, "px = -1 beside -inf");
    cr_assert_eq(holding(DEFORM_CASE("\"-inf\"", "0.25")), 0, "px = -0.75: on no line");
    cr_assert_eq(holding(DEFORM_CASE("\"-inf\"", "2")), 0, "px = W = 1: not a -1 line");
    cr_assert_eq(holding(DEFORM_CASE("3", "0")), 0, "a finite pixel");
}

Test(hunt_waive, a_when_for_an_input_the_op_lacks_is_bad_usage)
{
    scratch_make(dir, sizeof dir, "hunt_waive");
    snprintf(path, sizeof path, "%s/w.json", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs("{\"waivers\": [{\"reason\": \"r\", \"link\": \"l\", \"when\": {\"ops\": [\"roi_align_v2_backward\"], "
          "\"input\": \"rois\", \"nonfinite\": true}}]}", f);
    fclose(f);
    memset(&h, 0, sizeof h);
    h.op = op_find("roi_align_v2_backward");
    cr_assert_eq(hunt_waivers_load(&h, path, "float32"), EXIT_USAGE, "its rois are 'boxes'");
    cJSON_Delete(h.waivers);
}

/* the PyTorch CPU file's waiver of the deformable backward's zero-weight scatter holds on its
   hunt's minimal case (a NaN grad at a sample on pixel (0, 0) of a 1 x 3 plane) and not with that
   grad finite */
#define DG_CASE(g0) "{\"op\": \"deformable_offsets_grad\", \"attrs\": {\"pads\": [1, 1, 1, 1], \"ksize\": [2, 1]}, " \
    "\"shapes\": {\"x\": [1, 1, 3, 1], \"offsets\": [1, 2, 5, 6], \"grad\": [1, 4, 5, 1]}, \"gen\": {" \
    "\"grad\": {\"data\": [" g0 ", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0]}, \"x\": {\"data\": [0, 1, 0]}, " \
    "\"offsets\": {\"data\": [1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, " \
    "0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, 0, -2, 0, 1, 0, 0, 0, 0, 0, 0]}}}"

Test(hunt_waive, pytorch_deformable_zero_weight_scatter, .fini = fini)
{
    memset(&h, 0, sizeof h);
    h.op = op_find("deformable_offsets_grad");
    cr_assert_eq(hunt_waivers_load(&h, "cases/waivers_pytorch_cpu.json", "float32"), 0);
    int scatter = -1;
    for (int i = 0; i < h.n_waivers; i++)
        if (strstr(cJSON_GetObjectItemCaseSensitive(h.waiver[i], "reason")->valuestring, "col2im adds only")) scatter = i;
    cr_assert_geq(scatter, 0, "the waiver is in the file");
    cr_assert(holding(DG_CASE("\"nan\"")) >> scatter & 1);
    cr_assert_not(holding(DG_CASE("2")) >> scatter & 1, "a finite grad");
}
