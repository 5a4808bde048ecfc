#!/usr/bin/env bash
# The committed reports in reports/: the quick profile on the 2-core CPU, with the datasets that are on disk.
# Each command runs its units and search trials on a local Dask cluster of two single-threaded workers that it
# starts (docs/cluster.md), instead of the two hand-made lanes this script used to run: the driver writes each
# result as it arrives, a rerun skips every finished unit, and a killed run resumes where it stopped.
# Point it at a running cluster with DASK_SCHEDULER_ADDRESS=tcp://host:8786 (the workers then need no disk).
#   pip install -e ".[dask]"; DATA=../shared/datasets bash benchmarks/paper_tables_quick.sh
# Coverage of the committed reports: Tables 2 and 4, seeds 0-2; extras EA-DC-Transformer seeds 0-1,
# MiniRocket seeds 0-2, Transformer seeds 0-1. (The `heads` table it also ran, a one-off question of which head,
# is in research/configs/heads.toml now: research/README.md.)
# Units do not depend on the order, the backend or the number of workers they run on.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA="${DATA:-../shared/datasets}"
PY="${PYTHON:-.venv/bin/python}"
B=(--backend dask --backend-params "${BACKEND_PARAMS:-{\"n_workers\": 2, \"threads_per_worker\": 1}}")
R=("$PY" -W ignore::UserWarning -m eadct.tables run)
C=(--profile quick --seeds 0 1 2 --data-dir "$DATA/UEA" "${B[@]}")
X=(--profile quick --data-dir "$DATA/UEA" --data-dir "$DATA/TSER" "${B[@]}")
mkdir -p results/logs
{
  "${R[@]}" table2 "${C[@]}" --datasets UWaveGestureLibrary JapaneseVowels Handwriting
  "${R[@]}" table4 "${C[@]}" --datasets UWaveGestureLibrary Handwriting
  "${R[@]}" extras "${X[@]}" --models MiniRocket  # the profile's seeds 0-2, seconds each
  "${R[@]}" extras "${X[@]}" --seeds 0 1 --models EA-DC-Transformer
  "${R[@]}" extras "${X[@]}" --seeds 0 1 --models Transformer --datasets BitcoinSentiment CardanoSentiment \
    FloodModeling1 BasicMotions ERing Libras FingerMovements AtrialFibrillation Covid3Month Tecator Epilepsy \
    ArticularyWordRecognition StandWalkJump ChilledWaterPredictor
} > results/logs/paper_tables_quick.log 2>&1
NOTE="Commands: \`bash benchmarks/paper_tables_quick.sh\` (see the script for the individual \`eadct-tables run\` calls), then \`eadct-tables report <table> --profile quick\`."
for t in table2 table4 extras; do
  "$PY" -m eadct.tables report "$t" --profile quick --note "$NOTE"
done
