#!/bin/sh
# The two reference trainings (paper preset, Appendix C.2), one after the other:
#   training/reference/{number,letter}/  what ships (< 25 MB together): best weights
#                                        (config.json + model.safetensors), vocab.json,
#                                        metrics.jsonl
#   runs/{number,letter}/checkpoints/    every 500-step checkpoint (git-ignored /runs/)
# Run from the repository root:
#   nohup sh scripts/train_reference.sh > /dev/null 2>&1 &
# Logs: /tmp/train_number.log, /tmp/train_letter.log.  An interrupted training
# continues with the same command plus --resume (the checkpoint dir is remembered).
# OMP_NUM_THREADS=1: on a CPU shared with other jobs, two OpenMP threads that spin
# while the other core is busy made a step up to 4x slower than one thread.
set -e
cd "$(dirname "$0")/.."
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
for task in number letter; do
    python -m training train --task "$task" --preset paper --seed 0 \
        --out "training/reference/$task" --checkpoint-dir "runs/$task/checkpoints" --replace-shipped "$@" \
        > "/tmp/train_$task.log" 2>&1
done
