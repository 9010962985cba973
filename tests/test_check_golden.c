/* check_golden's comparison (harness/cmd/check_golden.c): a NaN matches any NaN, every other bit
 * counts (-0 is not +0), each of the five arrays is compared and the first difference is named; an
 * op without a plain golden is reported so. The planted one-line changes of the real fast goldens
 * are tests/check_golden_planted.sh. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "check_golden.h"

enum { N = 4 };

/* what the fake plain golden writes over the fast one's values: array t, element i becomes v */
static struct {
    int t, i;
    double v;
} plant;

static void fake_fast(const problem_t *p, double **out, ref_bounds *b)
{
    for (int i = 0; i < N; i++) {
        out[0][i] = i == 2 ? NAN : 0.5 * i;
        b[0].abs_sum[i] = i;
        b[0].n_terms[i] = 4;
        b[0].pos_err[i] = 1e-7 * i;
        b[0].ambig[i] = 0;
    }
}

static void fake_plain(const problem_t *p, double **out, ref_bounds *b)
{
    fake_fast(p, out, b);
    double *a[5] = {out[0], b[0].abs_sum, b[0].n_terms, b[0].pos_err, b[0].ambig};
    if (plant.t >= 0) a[plant.t][plant.i] = plant.v;
}

static const tensor_spec outs[] = {{"output", "[4]"}};
static const tol_model tol = {1, "test", 1, "test"};

static golden_result run(int t, int i, double v, char *why, size_t len, int64_t *n_diff)
{
    static op_desc op;
    op = (op_desc){.name = "fake", .n_outputs = 1, .outputs = outs, .reference = fake_fast, .plain = fake_plain,
                   .tol = &tol};
    problem_t p;
    memset(&p, 0, sizeof p);
    p.op = &op;
    p.out_shape[0] = shape_make(1, (const int64_t[]){N});
    plant.t = t;
    plant.i = i;
    plant.v = v;
    return golden_check_problem(&p, n_diff, NULL, why, len);
}

Test(check_golden, equal_and_nan_matches_nan)
{
    char why[512] = "";
    int64_t n = -1;
    cr_assert_eq(run(-1, 0, 0, why, sizeof why, &n), GOLDEN_EQUAL, "%s", why);
    cr_assert_eq(n, 0);
    /* another NaN (the sign bit set) in the NaN's place is still equal */
    cr_assert_eq(run(0, 2, -NAN, why, sizeof why, &n), GOLDEN_EQUAL, "%s", why);
}

Test(check_golden, each_array_and_the_sign_of_zero)
{
    static const char *const name[5] = {"value[", "abs_sum[", "n_terms[", "pos_err[", "ambig["};
    for (int t = 0; t < 5; t++) {
        char why[512] = "", want[32];
        int64_t n = 0;
        /* element 0 of ambig, value and abs_sum is +0 (value 0.5 * 0): -0 differs; elsewhere one ulp */
        const double v = t == 0 || t == 1 || t == 4 ? -0.0 : nextafter(t == 2 ? 4.0 : 0.0, 1.0);
        cr_assert_eq(run(t, 0, v, why, sizeof why, &n), GOLDEN_DIFFERS, "array %d: %s", t, why);
        snprintf(want, sizeof want, "%s0]", name[t]);
        cr_assert(strstr(why, want) && strstr(why, "output output"), "array %d: %s", t, why);
        cr_assert_eq(n, 1);
    }
}

Test(check_golden, a_number_for_a_nan_differs)
{
    char why[512] = "";
    cr_assert_eq(run(0, 2, 1.0, why, sizeof why, NULL), GOLDEN_DIFFERS);
    cr_assert(strstr(why, "value[2]") && strstr(why, "fast nan, plain 1"), "%s", why);
}

Test(check_golden, no_plain_golden)
{
    static op_desc op;
    op = (op_desc){.name = "fake", .n_outputs = 1, .outputs = outs, .reference = fake_fast, .tol = &tol};
    problem_t p;
    memset(&p, 0, sizeof p);
    p.op = &op;
    p.out_shape[0] = shape_make(1, (const int64_t[]){N});
    char why[512] = "";
    cr_assert_eq(golden_check_problem(&p, NULL, NULL, why, sizeof why), GOLDEN_NO_PLAIN);
    cr_assert(strstr(why, "no plain golden"), "%s", why);
    /* the temporary list holds only ops of the table */
    cr_assert(!golden_plain_exempt("fake"));
}
