#!/usr/bin/env bash
# tools/golden_hash.sh [REV]: is this tree's golden bitwise the one of REV (default main)?
# Builds build/golden_hash here and in a copy of REV's tree (tools/golden_hash.c brought along,
# cached in build/golden-hash/<commit>), fingerprints the golden, its four bound arrays and the
# derived tolerances of every case of SUITES at each of SEEDS with both, and diffs them (case id
# and hash; the CPU columns are the references' times). Exit 0 when equal, 1 when not.
# Not the evidence that the golden is right: that is make check-golden (the fast golden bitwise
# equal to the plain one, reference/plain/, the spec's loops; docs/architecture.md). A tolerance fix
# moves bits on purpose, and equal to an older revision proves nothing about the spec; this only
# answers whether a change moved any bit of the golden against REV.
#   SUITES (default: smoke, default and models suites), SEEDS (default "1 2"), THREADS (default 2)
set -euo pipefail
rev=${1:-main}
suites=${SUITES:-cases/smoke.json cases/conformance.json cases/models.json}
seeds=${SEEDS:-1 2}
threads=${THREADS:-2}
commit=$(git rev-parse "$rev^{commit}")
top=$(pwd)
base=build/golden-hash/$commit

hash_all() { # golden_hash binary, output file
    : >"$2"
    for s in $seeds; do
        for f in $suites; do "$1" --seed "$s" --threads "$threads" "$top/$f" >>"$2"; done
    done
}

make --no-print-directory build/golden_hash >/dev/null
key="$seeds|$suites"
if [ ! -f "$base/hash.txt" ] || [ "$(cat "$base/key" 2>/dev/null)" != "$key" ]; then
    rm -rf "$base/src" && mkdir -p "$base/src"
    git archive "$commit" | tar -x -C "$base/src"
    cp tools/golden_hash.c "$base/src/tools/"
    grep -q 'golden_hash:' "$base/src/Makefile" || cat >>"$base/src/Makefile" <<'MK'
$(BUILD)/golden_hash: $(BUILD)/tools/golden_hash.o $(HAR_OBJ) $(LIBOPT) $(LIBREF)
	$(CC) $(OPT) -o $@ $^ $(LDLIBS) -ldl
MK
    make --no-print-directory -C "$base/src" -j2 build/golden_hash >/dev/null
    echo "# hashing $rev ($commit)" >&2
    hash_all "$base/src/build/golden_hash" "$base/hash.txt"
    echo "$key" >"$base/key"
fi
echo "# hashing this tree ($(git rev-parse --short HEAD)$(git diff --quiet HEAD -- reference harness || echo ', with changes'))" >&2
hash_all build/golden_hash build/golden-hash/this.txt
cut_times() { awk '{ $2 = ""; print }' "$1"; }
if diff <(cut_times "$base/hash.txt") <(cut_times build/golden-hash/this.txt) >build/golden-hash/diff.txt; then
    echo "golden_hash: equal to $rev ($commit): $(grep -c ' suite ' build/golden-hash/this.txt) suite runs, \
$(grep -vc ' suite ' build/golden-hash/this.txt) cases"
    paste <(grep ' suite ' "$base/hash.txt" | awk '{ print $2 }') <(grep ' suite ' build/golden-hash/this.txt | awk '{ print $2, $4, $6, $7 }') |
        awk '{ printf "  reference CPU %s: %.2f s before, %.2f s now\n", $3 " seed " $5, $1, $2 }'
    exit 0
fi
echo "golden_hash: DIFFERENT from $rev ($commit): $(grep -c '^[<>]' build/golden-hash/diff.txt) lines, see build/golden-hash/diff.txt" >&2
head -20 build/golden-hash/diff.txt >&2
exit 1
