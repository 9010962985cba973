#!/bin/sh
# make check-golden-planted (part of make test): a one-line change of each family's fast golden makes
# check_golden fail. Per line of PLANTS below: a copy of FILE with the one line SED changes (the
# script checks that exactly one line changed), compiled and linked into its own check_golden ahead
# of the golden library (the linker then takes the copy's symbols), run on the smoke suite's cases
# of FILTER: it must exit 1 and name a difference. A family adds its plant with one line.
# usage: tests/check_golden_planted.sh OUTDIR, with CC, CFLAGS, OPT, LINK_OBJS and LDLIBS from the Makefile
set -eu
out=$1
# family | file of the fast golden | sed expression (one line) | --filter of the smoke suite
PLANTS='
roi|reference/roi_family.c|s/^            val\[l\] += t;$/            val[l] += t * (1 + 0x1p-52);/|roi_align
roi|reference/roi_family.c|/^static void bwd_lanes_plain/,/^}/s/p\[2 \* HALVES + h\] += 1;/p[2 * HALVES + h] += 2;/|roi_align_rotated_grad
roi|reference/roi_family.c|s/sy\[p \* L + l\] = p + tw < n ? fabs(/sy[p * L + l] = p + tw < n ? 2 * fabs(/|roi_align_rotated
grid|reference/grid_sampler.c|s/ig\[c\] += go\[c\] \* tp->wy \* tp->wx;/ig[c] += go[c] * (tp->wy * tp->wx);/|grid_sampler_2d_backward
grid|reference/grid_sampler.c|s/window_cols(m, 3, m->sy);/window_cols(m, 4, m->sy);/|grid_sampler_2d
deformable|reference/deformable_offsets.c|s/const double t = q->G\[c\] \* q->m \* wy\[u\] \* wx\[v\];/const double t = q->G[c] * (q->m * wy[u]) * wx[v];/|deformable_offsets_grad
'
mkdir -p "$out"
n=0; bad=0
echo "$PLANTS" | while IFS='|' read -r fam file expr filter; do
    [ -n "$fam" ] || continue
    n=$((n + 1))
    d="$out/$n"; mkdir -p "$d"
    copy="$d/$(basename "$file")"
    sed -e "$expr" "$file" >"$copy"
    changed=$(diff "$file" "$copy" | grep -c '^<' || true)
    if [ "$changed" != 1 ]; then echo "FAIL plant $n ($fam): '$expr' changes $changed lines of $file, not 1"; exit 1; fi
    # the copy's quoted includes from the original's folder
    $CC $CFLAGS -I"$(dirname "$file")" -c "$copy" -o "$d/planted.o"
    $CC $OPT -o "$d/check_golden" "$d/planted.o" $LINK_OBJS $LDLIBS
    if "$d/check_golden" --filter "$filter" cases/smoke.json >"$d/log" 2>&1; then
        echo "FAIL plant $n ($fam): $file with '$expr': check_golden passed (see $d/log)"; exit 1
    fi
    if ! grep -q '^DIFFERS' "$d/log"; then
        echo "FAIL plant $n ($fam): check_golden failed without naming a difference (see $d/log)"; tail -5 "$d/log"; exit 1
    fi
    echo "caught plant $n ($fam): $file '$expr': $(grep -c '^DIFFERS' "$d/log") cases of $filter differ; first: $(grep -m1 '^DIFFERS' "$d/log" | cut -c1-200)"
done
echo "check-golden-planted: $(echo "$PLANTS" | grep -c '|') plants, each caught"
