#!/bin/sh
# Analyse the two reference runs once scripts/train_reference.sh has finished (every
# checkpoint step-000000 .. step-006000 in runs/{number,letter}/checkpoints):
#   training/reference/<task>/analysis.json               python -m training analyze
#       scores of all 13 checkpoints (fast route, 100 inputs, float64), entropy, purity,
#       frequency use, Index geometry, measured discrepancy (10 lengths 17..5,000, 32
#       inputs each) at the best checkpoint
#   training/reference/<task>/length_generalisation.json  python -m training evaluate
#       accuracy at 10 lengths 17..5,000: 400 sequences per length, capped at
#       500,000 tokens per length (333 at 1,500, 166 at 3,000, 100 at 5,000)
#   training/reference/<task>/test_accuracy.json          python -m training evaluate --split test
#       accuracy of the best weights on the paper's 45,600-sequence test split
# The two tasks run side by side, one thread each (about 10 minutes on 2 cores).
# Run from anywhere:  sh scripts/analyze_reference.sh
# Logs: /tmp/analyze_number.log, /tmp/analyze_letter.log.
set -e
cd "$(dirname "$0")/.."
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
# the prerequisite, checked before anything is overwritten: a fresh clone ships the reference
# weights but not their 13 checkpoints, which only train_reference.sh writes
for task in number letter; do
    if [ ! -d "runs/$task/checkpoints/step-006000" ]; then
        echo "analyze_reference.sh: runs/$task/checkpoints/step-006000 is missing; run sh scripts/train_reference.sh first" >&2
        exit 2
    fi
done
LENGTHS=17,25,50,100,200,400,850,1500,3000,5000
pids=""
for task in number letter; do
    (
        python -m training analyze --run "training/reference/$task" --task "$task" --method fast \
            --json "training/reference/$task/analysis.json" --threads 1 --replace-shipped &&
        python -m training evaluate --run "training/reference/$task" --task "$task" --lengths "$LENGTHS" \
            --count 400 --max-tokens 500000 --json "training/reference/$task/length_generalisation.json" --threads 1 \
            --replace-shipped &&
        python -m training evaluate --run "training/reference/$task" --task "$task" --split test \
            --json "training/reference/$task/test_accuracy.json" --threads 1 --replace-shipped
    ) > "/tmp/analyze_$task.log" 2>&1 &
    pids="$pids $!"
done
status=0
for pid in $pids; do
    wait "$pid" || status=1
done
[ "$status" -eq 0 ] || { echo "analysis failed: see /tmp/analyze_number.log and /tmp/analyze_letter.log" >&2; exit 1; }
echo "wrote training/reference/{number,letter}/{analysis,length_generalisation,test_accuracy}.json"
