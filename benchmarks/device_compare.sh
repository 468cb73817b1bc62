#!/usr/bin/env bash
# Agent speed of this checkout beside a baseline checkout, on the same GPU in the same run, then the
# CUDA checks of this checkout.
#
#   bash benchmarks/device_compare.sh BASE_DIR OUT_DIR [STEPS]
#
# BASE_DIR holds the baseline's pcnn_explore/ and benchmarks/ (e.g. `git archive eafd9de pcnn_explore
# benchmarks data | tar -x -C .base`). For each N in $NS (default "8 1 16"; $REPEATS runs of each variant, default 1) the baseline and this
# checkout run benchmarks/bench_agent.py back to back (baseline first), so both see the same card,
# clocks and host. Wheels in .whl/ are installed to /tmp/site as in device_check.sh. Writes
# base_bench_N.json, bench_N.json, gpu_check.txt and log.txt under OUT_DIR.
set -uo pipefail
base=$(cd "${1:?usage: device_compare.sh BASE_DIR OUT_DIR [STEPS]}" && pwd)
out=$(mkdir -p "${2:?usage: device_compare.sh BASE_DIR OUT_DIR [STEPS]}" && cd "$2" && pwd)
steps=${3:-6000}
here=$PWD
site=""
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && site=/tmp/site: || exit 1
fi
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/log.txt"
bench() {  # bench DIR JSON N
  (cd "$1" && PYTHONPATH="$site$1" timeout 200 python3 benchmarks/bench_agent.py --device cuda --num-envs "$3" \
     --steps "$steps" --learning-starts 1500 --repeats "${REPEATS:-1}" --variants "${VARIANTS:-dqn_pixelcnn_thread}" --json "$2") 2>&1 \
    | grep -v "A.L.E\|Stella" | tee -a "$out/log.txt"
}
for n in ${NS:-8 1 16}; do
  echo "== baseline ($base), $n env(s)" | tee -a "$out/log.txt"
  bench "$base" "$out/base_bench_$n.json" "$n"
  echo "== this checkout ($here), $n env(s)" | tee -a "$out/log.txt"
  bench "$here" "$out/bench_$n.json" "$n"
done
(PYTHONPATH="$site$here" timeout 240 python3 benchmarks/gpu_check.py) 2>&1 | grep -v "A.L.E\|Stella" > "$out/gpu_check.txt"
tail -3 "$out/gpu_check.txt" | tee -a "$out/log.txt"
