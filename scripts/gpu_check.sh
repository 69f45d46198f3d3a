#!/bin/sh
# Checks that need a CUDA GPU (the CPU test suite needs none of this).  Run from anywhere:
#   sh scripts/gpu_check.sh [OUT_DIR]          (default: $OUT, else /tmp/gpu_check)
#  1. the whole test suite with the GPU visible: the CUDA tests of tests/test_model.py run
#     (ours = HF on the GPU, bf16 autocast), and the training tests, whose --device auto now
#     picks CUDA, check there that a resumed run is bitwise the uninterrupted one;
#  2. python -m training bench --device cuda: training steps per second, ours vs HF;
#     then bench --k-table --device cuda: K = 1, 8, 64 seeds at once (members per hour, K = 64
#     against K = 1, target 10x), eager, and K = 1 compiled with its cold and warm compile times
#     (the batched model's per-member dropout draws split a compiled graph: not compiled here),
#     saved as OUT_DIR/k_table_cuda_paper.json: copied to training/reference/bench/, it decides
#     whether train compiles by default on CUDA (training.run.compile.compile_by_default);
#  3. the paper preset on CUDA (bf16 autocast), both tasks side by side on the one GPU, then
#     the accuracy on the 45,600-sequence test split (OUT_DIR/test_<task>.json).
# Wall times and exit statuses go to OUT_DIR/summary.txt, each step's output to OUT_DIR/<step>.log
# (9 files in all).  Each step has its own time limit (about 14 minutes together) and the
# script goes on after a failure; exit 1 if any failed.
set -u
cd "$(dirname "$0")/.."
out="${1:-${OUT:-/tmp/gpu_check}}"
mkdir -p "$out"
python=${PYTHON:-python3}
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
step() {  # step NAME LOG SECONDS COMMAND...: run, append to OUT/LOG.log, note time and status
    name=$1 log=$2 limit=$3
    shift 3
    start=$(date +%s)
    timeout "$limit" "$@" >> "$out/$log.log" 2>&1
    status=$?
    echo "$name: exit $status after $(( $(date +%s) - start )) s" | tee -a "$out/summary.txt"
    return "$status"
}

if ! "$python" -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
    echo "gpu_check: $python sees no CUDA device (torch.cuda.is_available() is False); nothing checked" >&2
    exit 2
fi
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  "$python" -c "import torch, transformers; print('torch', torch.__version__, 'cuda', torch.version.cuda, \
'transformers', transformers.__version__, 'gpu', torch.cuda.get_device_name(0))"; } > "$out/summary.txt" 2>&1
cat "$out/summary.txt"

xdist=""
"$python" -c "import xdist" 2>/dev/null && xdist="-n 8"
step tests tests 180 "$python" -m pytest -q -rs -p no:cacheprovider $xdist
step bench bench 75 "$python" -m training bench --device cuda --rounds 5
rm -f "$out/k_table_cuda_paper.json"  # --save writes only a new file
step "k table" k_table 240 "$python" -m training bench --k-table --device cuda --k 1,8,64 --compiled-k 1 \
    --rounds 3 --steps 5 --save "$out/k_table_cuda_paper.json"
for task in number letter; do
    (
        step "train $task" "train_$task" 270 "$python" -m training train --task "$task" --preset paper --seed 0 \
            --device cuda --out "/tmp/gpu_runs/$task" --force --no-progress &&
        step "test split $task" "train_$task" 60 "$python" -m training evaluate --run "/tmp/gpu_runs/$task" \
            --task "$task" --split test --json "$out/test_$task.json" --threads 4 --no-progress
        grep -h '"split": "validation"' "/tmp/gpu_runs/$task/metrics.jsonl" >> "$out/train_$task.log" 2>/dev/null
    ) &
done
wait
if grep -q "exit [1-9]" "$out/summary.txt"; then exit 1; fi
