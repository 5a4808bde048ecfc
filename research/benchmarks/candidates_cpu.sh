#!/usr/bin/env bash
# The `candidates` table (a candidate change of the defaults beside the defaults, docs/accuracy.md) on the
# 2-core CPU, as benchmarks/accuracy_cpu.sh runs the `accuracy` table: two lanes of one torch thread each,
# disjoint units, the defaults rows and MiniRocket shared with the `accuracy` table (already run there).
# Lane 1: EA-DC (averaged) on the UEA sets; lane 2: EA-DC (averaged) on the TSER sets, then the Transformer row.
# Rerunning the script skips every finished unit, and a killed run resumes where it stopped.
#   DATA=../shared/datasets bash research/benchmarks/candidates_cpu.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
DATA="${DATA:-../shared/datasets}"
PY="${PYTHON:-.venv/bin/python}"
OUT="${OUT:-results/tables}"
R="$PY -W ignore::UserWarning -m eadct.tables run research/configs/candidates.toml --profile defaults --threads 1 --out $OUT"
R="$R --data-dir $DATA/UEA --data-dir $DATA/TSER"
UEA="ERing AtrialFibrillation BasicMotions JapaneseVowels Libras Handwriting FingerMovements UWaveGestureLibrary
  StandWalkJump Epilepsy ArticularyWordRecognition"
TSER="CardanoSentiment BitcoinSentiment Covid3Month Tecator ChilledWaterPredictor FloodModeling1"
mkdir -p results/logs
(
  for s in 0 1 2; do $R --models "EA-DC (averaged)" --seeds $s --datasets $UEA; done
) > results/logs/candidates_lane_1.log 2>&1 &
(
  for s in 0 1 2; do $R --models "EA-DC (averaged)" --seeds $s --datasets $TSER; done
  for s in 0 1 2; do $R --models "Transformer (averaged)" --seeds $s --datasets $UEA $TSER; done
) > results/logs/candidates_lane_2.log 2>&1 &
wait
$PY -m eadct.tables report research/configs/candidates.toml --profile defaults --out "$OUT" --report-dir research/reports \
  --note "Command: \`bash research/benchmarks/candidates_cpu.sh\` (two lanes of one torch thread each), then \`eadct-tables report research/configs/candidates.toml --profile defaults --report-dir research/reports\`."
