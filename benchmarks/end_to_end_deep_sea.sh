#!/usr/bin/env bash
# End to end, start-up included: DeepSea-20 with the CTS bonus, 40,000 agent steps, this checkout
# against another (e.g. `git worktree add ../base 0741ac3`), alternating, REPEATS times each.
#
#   benchmarks/end_to_end_deep_sea.sh ../base          # prints one line per run: checkout, seconds
#   REPEATS=5 benchmarks/end_to_end_deep_sea.sh ../base
#
# Each run is `python -m pcnn_explore train --env DeepSea-20-v0 --bonus cts --steps 40000 --no-progress`
# (what each checkout resolves that command to) with PYTHONPATH set to the checkout, in a fresh
# temporary folder, timed from process start to exit. Compare on a quiet machine.
set -euo pipefail
base=$(cd "${1:?usage: $0 OTHER_CHECKOUT}" && pwd)
here=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-$here/.venv/bin/python}
repeats=${REPEATS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for r in $(seq "$repeats"); do
  for who in "$base" "$here"; do
    out="$tmp/run"; rm -rf "$out"
    start=$(date +%s.%N)
    (cd "$tmp" && PYTHONPATH="$who" OMP_NUM_THREADS=1 "$python" -m pcnn_explore train --env DeepSea-20-v0 \
       --bonus cts --steps 40000 --out "$out" --no-progress >/dev/null 2>&1)
    end=$(date +%s.%N)
    printf '%s run %d: %.1f s (load %s)\n' "$who" "$r" "$(echo "$end - $start" | bc)" \
      "$(cut -d' ' -f1 /proc/loadavg)"
  done
done
