#!/usr/bin/env bash
# The `huber` table (the Huber loss as a candidate default of EADCTRegressor, docs/accuracy.md) on the 2-core
# CPU, as benchmarks/candidates_cpu.sh runs its table: two lanes of one torch thread each, disjoint units, the
# defaults rows and MiniRocket shared with the `accuracy` table (already run there). Lane 1: EA-DC (huber) on
# FloodModeling1 and ChilledWaterPredictor; lane 2: on the other four sets, then the Transformer row.
# Rerunning the script skips every finished unit, and a killed run resumes where it stopped.
#   DATA=../shared/datasets bash benchmarks/huber_cpu.sh
set -euo pipefail
cd "$(dirname "$0")/.."
DATA="${DATA:-../shared/datasets}"
PY="${PYTHON:-.venv/bin/python}"
OUT="${OUT:-results/tables}"
R="$PY -W ignore::UserWarning -m eadct.tables run huber --profile defaults --threads 1 --out $OUT --data-dir $DATA/TSER"
mkdir -p results/logs
(
  for s in 0 1 2; do $R --models "EA-DC (huber)" --seeds $s --datasets FloodModeling1 ChilledWaterPredictor; done
) > results/logs/huber_lane_1.log 2>&1 &
(
  for s in 0 1 2; do $R --models "EA-DC (huber)" --seeds $s --datasets Tecator Covid3Month BitcoinSentiment CardanoSentiment; done
  for s in 0 1 2; do $R --models "Transformer (huber)" --seeds $s; done
) > results/logs/huber_lane_2.log 2>&1 &
wait
$PY -m eadct.tables report huber --profile defaults --out "$OUT" \
  --note "Command: \`bash benchmarks/huber_cpu.sh\` (two lanes of one torch thread each), then \`eadct-tables report huber --profile defaults\`."
