#!/usr/bin/env bash
# One prepared run on a GPU machine: the CUDA checks, then agent speed for N = 1, 8 and 16 envs.
#
#   bash benchmarks/device_check.sh OUT_DIR [STEPS]
#
# Needs torch with CUDA and numpy there; gymnasium, ale-py, minigrid and their needs come as
# wheels in .whl/, installed to /tmp/site. Writes gpu_check.txt,
# bench_N.json and bench_N.txt under OUT_DIR.
set -uo pipefail
out=${1:?usage: device_check.sh OUT_DIR [STEPS]}
steps=${2:-6000}
mkdir -p "$out"
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site:$PWD || exit 1
else
  export PYTHONPATH=$PWD
fi
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$out/device.txt"
timeout 240 python3 benchmarks/gpu_check.py 2>&1 | tee "$out/gpu_check.txt"
for n in 1 8 16; do
  timeout 240 python3 benchmarks/bench_agent.py --device cuda --num-envs "$n" --steps "$steps" \
    --learning-starts 1500 --repeats 1 --variants "${VARIANTS:-dqn_pixelcnn_thread}" --json "$out/bench_$n.json" 2>&1 | grep -v "A.L.E\|Stella" | tee "$out/bench_$n.txt"
done
