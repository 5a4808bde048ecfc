#!/usr/bin/env bash
# One candidate row of the `candidates_regression` table (docs/accuracy.md) on the 2-core CPU, as
# research/benchmarks/candidates_cpu.sh runs its table: two lanes of one torch thread each, disjoint units, the defaults
# rows and MiniRocket shared with the `accuracy` table (already run there). Lane 1: FloodModeling1 and
# ChilledWaterPredictor; lane 2: the other four sets. Rerunning the script skips every finished unit, and a
# killed run resumes where it stopped.
#   DATA=../shared/datasets MODEL="EA-DC (no dropout)" bash research/benchmarks/candidates_regression_cpu.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
DATA="${DATA:-../shared/datasets}"
PY="${PYTHON:-.venv/bin/python}"
OUT="${OUT:-results/tables}"
MODEL="${MODEL:-EA-DC (no dropout)}"
T=candidates_regression  # the table's name (logs); its file: research/configs/$T.toml
R="$PY -W ignore::UserWarning -m eadct.tables run research/configs/$T.toml --profile defaults --threads 1 --out $OUT --data-dir $DATA/TSER"
mkdir -p results/logs
(
  for s in 0 1 2; do $R --models "$MODEL" --seeds $s --datasets FloodModeling1 ChilledWaterPredictor; done
) > results/logs/${T}_lane_1.log 2>&1 &
(
  for s in 0 1 2; do $R --models "$MODEL" --seeds $s --datasets Tecator Covid3Month BitcoinSentiment CardanoSentiment; done
) > results/logs/${T}_lane_2.log 2>&1 &
wait
$PY -m eadct.tables report research/configs/$T.toml --profile defaults --out "$OUT" --report-dir research/reports \
  --note "Command: \`MODEL=\"$MODEL\" bash research/benchmarks/candidates_regression_cpu.sh\` (two lanes of one torch thread each), then \`eadct-tables report research/configs/$T.toml --profile defaults --report-dir research/reports\`."
