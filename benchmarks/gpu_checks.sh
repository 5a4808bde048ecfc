#!/usr/bin/env bash
# The checks only a GPU can make, in one run that fits a short lease, most important first:
#   1. the GPU tests (`pytest -m gpu`: the CUDA paths and every option fitted on CUDA);
#   2. Table 2's transformer rows under the `full` profile (the paper's protocol: a 48-candidate halving, then
#      refits of 400 + 100 epochs) on the given UEA sets, their search trials and units spread over loky worker
#      processes that share the GPU. EA-DC and the Transformer run first (one sweep ends with their units), the
#      DC-Transformer second. Everything is resumable: rerun the same command to go on (docs/tables.md);
# Then `eadct-tables report table2 --profile full --out RESULTS_DIR/tables` writes reports/table2_full.md.
#
# Usage: bash benchmarks/gpu_checks.sh RESULTS_DIR DATA_DIR [DATASET ...]   (default dataset: JapaneseVowels)
# Environment: PYTHON (python), WORKERS (12 loky workers), SEEDS ("0 1 2"), TESTS_S (150 s for step 1) and
# FULL_S (430 s for step 2: the first sweep may take all of it, the DC-Transformer gets what is left). A sweep
# stopped at its limit resumes where it was when the command is run again.
set -u
results=${1:?usage: gpu_checks.sh RESULTS_DIR DATA_DIR [DATASET ...]}
data=${2:?usage: gpu_checks.sh RESULTS_DIR DATA_DIR [DATASET ...]}
shift 2
datasets=("${@:-JapaneseVowels}")
py=${PYTHON:-python}
seeds=${SEEDS:-0 1 2}
mkdir -p "$results"
export PYTHONUNBUFFERED=1

{
    date -u
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
    "$py" -c "import torch, sklearn, numpy, sktime; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else '', 'sklearn', sklearn.__version__, 'numpy', numpy.__version__, 'sktime', sktime.__version__)"
    nproc
} 2>&1 | tee "$results/environment.txt"

echo "== 1. GPU tests"
timeout "${TESTS_S:-150}" "$py" -m pytest -m gpu -q -p no:cacheprovider tests 2>&1 | tee "$results/gpu_tests.log"

sweep() {  # seconds, then the models
    local seconds=$1
    shift
    timeout "$seconds" "$py" -m eadct.tables run table2 --profile full --datasets "${datasets[@]}" --models "$@" \
        --seeds $seeds --data-dir "$data" --out "$results/tables" \
        --backend loky --backend-params "{\"n_jobs\": ${WORKERS:-12}}" 2>&1 | tee -a "$results/full.log"
    echo "sweep of $* ended with status ${PIPESTATUS[0]} (124: stopped at its limit; rerun to resume)" | tee -a "$results/full.log"
}

echo "== 2. Table 2, full profile: ${datasets[*]}"
deadline=$((SECONDS + ${FULL_S:-430}))
sweep "${FULL_S:-430}" Transformer EA-DC-Transformer
left=$((deadline - SECONDS))
if ((left > 30)); then sweep "$left" DC-Transformer; fi
date -u | tee -a "$results/full.log"
