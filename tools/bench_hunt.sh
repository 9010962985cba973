#!/bin/sh
# make bench-hunt: small problems judged per second by conform hunt on the optimized path, per op,
# in process and with fork isolation (one child per case, as for plugins); finite inputs, so no
# failure is shrunk and the rate is the search's own. CASES (default 1000) problems per op, the same draws both ways.
CONFORM=${1:-build/conform}
CASES=${CASES:-1000}
printf '| op | in process (cases/s) | isolated (cases/s) |\n|---|---|---|\n'
for op in roi_align roi_align_v2_backward roi_align_rotated roi_align_rotated_grad deformable_offsets \
          deformable_offsets_grad grid_sampler_2d grid_sampler_2d_backward; do
    rate() { "$CONFORM" hunt "$op" --impl optimized --finite --cases "$1" --quiet --out /dev/null "$2" 2>&1 |
             sed -n 's/.*(\([0-9]*\) judged\/s).*/\1/p'; }
    printf '| %s | %s | %s |\n' "$op" "$(rate "$CASES" --no-isolate)" "$(rate "$CASES" --isolate)"
done
