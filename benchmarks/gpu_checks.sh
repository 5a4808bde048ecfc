#!/usr/bin/env bash
# The checks only a GPU can make, in one run that fits a short lease:
#   1. the GPU tests (`pytest -m gpu`: the CUDA paths and every option fitted on CUDA), beside step 2;
#   2. Table 2's transformer rows under the `full` profile (the paper's protocol: a 48-candidate halving, then
#      refits of 400 + 100 epochs) on the given UEA sets. Each row runs its search first (`--search-only`, the
#      trials of a rung on loky worker processes that share the GPU), then its refits as one process per seed
#      (`--backend none`), whose fits keep a checkpoint every epoch. The Transformer and EA-DC-Transformer rows
#      run side by side, the DC-Transformer's after them. Nothing finished is lost at the limit: finished
#      trials and units are kept, and a refit resumes from its last epoch when the same command runs again
#      (docs/tables.md), also on another machine given the results folder.
# Then `eadct-tables report table2 --profile full --out RESULTS_DIR/tables` writes reports/table2_full.md.
#
# Usage: bash benchmarks/gpu_checks.sh RESULTS_DIR DATA_DIR [DATASET ...]   (default dataset: JapaneseVowels)
# Environment: PYTHON (python), WORKERS (loky workers per search, 8), SEEDS ("0 1 2"), TESTS_S (150 s for
# step 1), FULL_S (430 s for step 2, all rows together) and PACK (a .tar path: RESULTS_DIR packed into that one
# file at the end, for a lent machine that returns only files near the top of its output folder). On a lent GPU:
#   PYTHON=python3 PACK="$OUT/gpu.tar" bash benchmarks/gpu_checks.sh results/gpu <UEA folder>
# with results/gpu carried there and back (tar -xf gpu.tar), so that the next lease goes on from it.
set -u
results=${1:?usage: gpu_checks.sh RESULTS_DIR DATA_DIR [DATASET ...]}
data=${2:?usage: gpu_checks.sh RESULTS_DIR DATA_DIR [DATASET ...]}
shift 2
datasets=("${@:-JapaneseVowels}")
py=${PYTHON:-python}
seeds=${SEEDS:-0 1 2}
mkdir -p "$results"
export PYTHONUNBUFFERED=1
deadline=$((SECONDS + ${FULL_S:-430}))

{
    date -u
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
    "$py" -c "import torch, sklearn, numpy, sktime; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else '', 'sklearn', sklearn.__version__, 'numpy', numpy.__version__, 'sktime', sktime.__version__)"
    nproc
} 2>&1 | tee "$results/environment.txt"

echo "== 1. GPU tests (beside step 2; log in $results/gpu_tests.log)"
timeout "${TESTS_S:-150}" "$py" -m pytest -m gpu -q -p no:cacheprovider tests > "$results/gpu_tests.log" 2>&1 &
tests=$!

table2() {  # the arguments after the common ones; stopped at the deadline
    local left=$((deadline - SECONDS))
    ((left > 20)) || return 124
    timeout "$left" "$py" -m eadct.tables run table2 --profile full --datasets "${datasets[@]}" --data-dir "$data" \
        --out "$results/tables" "$@" >> "$results/full.log" 2>&1
}

row() {  # one model: its search, then one refit process per seed
    local model=$1 status seed
    table2 --models "$model" --seeds $seeds --search-only --backend loky \
        --backend-params "{\"n_jobs\": ${WORKERS:-8}}"
    status=$?
    echo "search of $model: status $status (124: stopped at the limit; rerun to resume)" | tee -a "$results/full.log"
    ((status == 0)) || return
    for seed in $seeds; do
        table2 --models "$model" --seeds "$seed" &
    done
    wait
    echo "refits of $model: done or stopped at the limit (rerun to resume)" | tee -a "$results/full.log"
}

echo "== 2. Table 2, full profile: ${datasets[*]} (log in $results/full.log)"
row Transformer &
first=$!
row EA-DC-Transformer &
wait "$first" $!
row DC-Transformer
wait "$tests"
echo "GPU tests: status $? (124: stopped at TESTS_S)"; tail -n 3 "$results/gpu_tests.log"
grep -h "seed [0-9]*:" "$results/full.log" | tail -n 20
date -u | tee -a "$results/full.log"
if [ -n "${PACK:-}" ]; then tar -cf "$PACK" "$results" && echo "packed $results into $PACK"; fi
