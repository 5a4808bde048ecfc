#!/usr/bin/env bash
# The checks only a GPU can make, in one run that fits a short lease:
#   1. the GPU tests (`pytest -m gpu`: the CUDA paths and every option fitted on CUDA), beside step 2;
#   2. Table 2's transformer rows under the `full` profile (the paper's protocol: a 48-candidate halving, then
#      refits of 400 + 100 epochs) on the given UEA sets. Each row runs its search (`--search-only`, the trials of
#      a rung on loky worker processes that share the GPU), all rows side by side; the refits form one queue,
#      seed by seed and row by row, of `--backend none` processes, REFITS at once, each starting once its row's
#      search is done. A refit keeps a checkpoint every epoch. Nothing finished is lost at the limit: finished
#      trials and units are kept, and a refit resumes from its last epoch when the same command runs again
#      (docs/tables.md), also on another machine given the results folder (a trial cut short starts again).
# Then `eadct-tables report table2 --profile full --out RESULTS_DIR/tables` writes reports/table2_full.md
# (`--datasets` and `--report-dir` for a report of some sets beside it).
#
# Usage: bash benchmarks/gpu_checks.sh RESULTS_DIR DATA_DIR [DATASET ...]   (default dataset: JapaneseVowels)
# Environment: PYTHON (python), ROWS ("Transformer EA-DC-Transformer DC-Transformer"), SEEDS ("0 1 2"),
# WORKERS (loky workers per search, 5), REFITS (refits at once, 9), THREADS (torch threads per process, 1: each
# process is one of many, and a fit this small spends its time launching GPU kernels, which one thread does),
# TESTS_S (150 s for step 1), FULL_S (430 s for step 2), MPS (1: run the processes under NVIDIA's Multi-Process
# Service, measured against plain sharing by benchmarks/gpu_sharing.py, docs/tables.md; left off where it does not
# start), TABLE and PROFILE (table2, full: another table file and profile, for a rehearsal) and
# PACK (a path prefix: RESULTS_DIR packed by benchmarks/pack_results.py into PACK.00, PACK.01, ..., for a lent
# machine that returns a few files of limited size; unpack with `cat PACK.* | tar -xf -`). On a lent GPU:
#   PYTHON=python3 PACK="$OUT/gpu.tar" bash benchmarks/gpu_checks.sh results/gpu <UEA folder>
# with results/gpu carried there and back, so that the next lease (or the CPU) goes on from it.
set -u
results=${1:?usage: gpu_checks.sh RESULTS_DIR DATA_DIR [DATASET ...]}
data=${2:?usage: gpu_checks.sh RESULTS_DIR DATA_DIR [DATASET ...]}
shift 2
export RESULTS=$results DATA=$data DATASETS="${*:-JapaneseVowels}" PY=${PYTHON:-python} SEEDS=${SEEDS:-0 1 2}
export TABLE=${TABLE:-table2} PROFILE=${PROFILE:-full} WORKERS=${WORKERS:-5} THREADS=${THREADS:-1} PYTHONUNBUFFERED=1
export DEADLINE=$(($(date +%s) + ${FULL_S:-430})) MARKS=$(mktemp -d)
mkdir -p "$results"

{
    date -u
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
    "$PY" -c "import torch, sklearn, numpy, sktime; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else '', 'sklearn', sklearn.__version__, 'numpy', numpy.__version__, 'sktime', sktime.__version__)"
    nproc
} 2>&1 | tee "$results/environment.txt"

if [ "${MPS:-0}" = 1 ]; then
    export CUDA_MPS_PIPE_DIRECTORY=$MARKS/mps CUDA_MPS_LOG_DIRECTORY=$MARKS/mps
    mkdir -p "$CUDA_MPS_PIPE_DIRECTORY"
    if nvidia-cuda-mps-control -d && timeout 60 "$PY" -c "import torch; torch.ones(1, device='cuda').sum().item()"; then
        echo "MPS: on"
    else
        echo quit | timeout 10 nvidia-cuda-mps-control
        unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
        echo "MPS: did not start; the processes share the GPU without it"
    fi
fi

echo "== 1. GPU tests (beside step 2; log in $results/gpu_tests.log)"
timeout "${TESTS_S:-150}" "$PY" -m pytest -m gpu -q -p no:cacheprovider tests > "$results/gpu_tests.log" 2>&1 &
tests=$!

tables() {  # eadct-tables run with the common arguments and these; stopped at the deadline
    local left=$((DEADLINE - $(date +%s)))
    ((left > 20)) || return 124
    # shellcheck disable=SC2086  # DATASETS and SEEDS are lists of words
    timeout "$left" "$PY" -m eadct.tables run "$TABLE" --profile "$PROFILE" --datasets $DATASETS --data-dir "$DATA" \
        --out "$RESULTS/tables" --threads "$THREADS" "$@" >> "$RESULTS/full.log" 2>&1
}

search() {  # one row's search; its status goes where the row's refits wait for it
    local status
    # shellcheck disable=SC2086
    tables --models "$1" --seeds $SEEDS --search-only --backend loky --backend-params "{\"n_jobs\": $WORKERS}"
    status=$?
    echo "search of $1: status $status (124: stopped at the limit; rerun to resume)" | tee -a "$RESULTS/full.log"
    echo "$status" > "$MARKS/$1"
}

refit() {  # one row's refit for one seed, once the row's search is done
    until [ -e "$MARKS/$1" ]; do sleep 5; done
    [ "$(cat "$MARKS/$1")" = 0 ] || return 0
    tables --models "$1" --seeds "$2"
    echo "refit of $1 seed $2: status $? (124: stopped at the limit; rerun to resume)" | tee -a "$RESULTS/full.log"
}
export -f tables search refit

echo "== 2. $TABLE, profile $PROFILE: $DATASETS (log in $results/full.log)"
read -r -a rows <<< "${ROWS:-Transformer EA-DC-Transformer DC-Transformer}"
for model in "${rows[@]}"; do search "$model" & done
for seed in $SEEDS; do for model in "${rows[@]}"; do printf '%s\n%s\n' "$model" "$seed"; done; done |
    xargs -d '\n' -n 2 -P "${REFITS:-9}" bash -c 'refit "$1" "$2"' _
wait
echo "GPU tests: see the end of $results/gpu_tests.log"; tail -n 3 "$results/gpu_tests.log"
grep -h "^\[.* seed [0-9]*:" "$results/full.log" | tail -n 20
date -u | tee -a "$results/full.log"
if [ -n "${CUDA_MPS_PIPE_DIRECTORY:-}" ]; then echo quit | timeout 10 nvidia-cuda-mps-control; fi
rm -rf "$MARKS"
if [ -n "${PACK:-}" ]; then "$PY" benchmarks/pack_results.py "$results" "$PACK"; fi
