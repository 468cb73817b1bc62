#!/usr/bin/env bash
# Launch the agent stage of benchmarks/task_search.py as separate single-threaded processes, one
# per (env, variant, seed), stop them all after LIMIT seconds, and pack their logs.
# Usage: benchmarks/task_search_parallel.sh OUT_DIR LIMIT_S STEPS "ENV:VARIANT:SEED ..." [FIELD=VALUE ...]
# (the FIELD=VALUE pairs are TrainConfig overrides given to every run)
# Then: python benchmarks/task_search.py summarise OUT_DIR  (counts episodes up to the common step)
set -u
out=$1; limit=$2; steps=$3; runs=$4; shift 4; sets=("$@")
mkdir -p "$out"
pids=()
for r in $runs; do
  IFS=: read -r env variant seed <<<"$r"
  d="$out/${env}/${variant}_s${seed}"
  mkdir -p "$d"
  OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1 nice python3 benchmarks/task_search.py one \
    --env "$env" --variant "$variant" --seed "$seed" --steps "$steps" --out "$d" --set "${sets[@]}" >"$d/stdout.txt" 2>&1 &
  pids+=($!)
done
end=$((SECONDS + limit))
while (( SECONDS < end )); do
  alive=0; for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
  (( alive )) || break
  sleep 5
done
for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
wait
echo "stopped after $SECONDS s"
