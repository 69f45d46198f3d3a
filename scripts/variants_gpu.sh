#!/bin/sh
# The RoPE-variants study (training/studies/variants.json) on a CUDA machine, in one call:
#   sh scripts/variants_gpu.sh [OUT_DIR]        (default: $OUT, else /tmp/variants_gpu)
# Members run JOBS at a time (default 12; each trains and evaluates on the one GPU, --device auto,
# and analyses on its own CPU core) in WORK (default /tmp/variants-members) until LIMIT seconds
# (default 480) have passed; a member cut off resumes from its last checkpoint on the next call
# if WORK survives.  Then --collect writes OUT_DIR/variants: summary.json, every member's small
# JSON files and the best member's weights per task (best-<task>/, about 10 MB each): what
# comes back from a lent machine.  Copy that folder to training/reference/variants to ship it.
set -u
cd "$(dirname "$0")/.."
out="${1:-${OUT:-/tmp/variants_gpu}}"
jobs="${JOBS:-12}"
limit="${LIMIT:-480}"
work="${WORK:-/tmp/variants-members}"
python=${PYTHON:-python3}
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
mkdir -p "$out" "$work"
"$python" -c "import torch; print('cuda', torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else '')" \
    > "$out/summary.txt" 2>&1
# the shipped plan with its members in WORK and its collection in OUT_DIR
"$python" - "$work" "$out" <<'EOF'
import json, sys
plan = json.load(open("training/studies/variants.json"))
plan["root"], plan["ship"] = sys.argv[1], sys.argv[2] + "/variants"
with open(sys.argv[1] + "/plan.json", "w") as f:
    json.dump(plan, f, indent=1)
EOF
start=$(date +%s)
timeout "$limit" "$python" -m training study "$work/plan.json" --jobs "$jobs" --no-progress > "$out/study.log" 2>&1
echo "study: exit $? after $(( $(date +%s) - start )) s (124: cut off at ${limit} s)" >> "$out/summary.txt"
"$python" -m training study "$work/plan.json" --collect >> "$out/summary.txt" 2>&1
echo "collect: exit $?" >> "$out/summary.txt"
# the members' logs, for a stage that failed
tar -czf "$out/member_logs.tar.gz" -C "$work" $(cd "$work" && find . -name logs -type d) 2>/dev/null
cat "$out/summary.txt"
