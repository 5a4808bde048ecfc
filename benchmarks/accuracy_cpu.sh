#!/usr/bin/env bash
# The accuracy benchmark of the defaults (writes reports/accuracy_defaults.md) on the 2-core CPU: the `accuracy`
# table under the `defaults` profile, on every shared UEA and TSER set. Two lanes of one torch thread each run
# side by side (they take disjoint models, so no unit runs twice); seed 0 of every set first, then seeds 1-2.
# Rerunning the script skips every finished unit, and a killed run resumes where it stopped.
#   DATA=../shared/datasets bash benchmarks/accuracy_cpu.sh
# Part of the table: SETS names the datasets (cheapest first) and REPORT_DIR where their report goes, e.g. the
# regression rows alone (reports/accuracy_regression/accuracy_defaults.md):
#   SETS="CardanoSentiment BitcoinSentiment Covid3Month Tecator ChilledWaterPredictor FloodModeling1" \
#     REPORT_DIR=reports/accuracy_regression bash benchmarks/accuracy_cpu.sh
set -euo pipefail
cd "$(dirname "$0")/.."
DATA="${DATA:-../shared/datasets}"
PY="${PYTHON:-.venv/bin/python}"
R="$PY -W ignore::UserWarning -m eadct.tables run accuracy --profile defaults --threads 1"
R="$R --data-dir $DATA/UEA --data-dir $DATA/TSER"
# cheapest first, so that an interrupted run has covered as many sets as possible
ALL="CardanoSentiment ERing BitcoinSentiment AtrialFibrillation BasicMotions Covid3Month JapaneseVowels Libras
  Tecator Handwriting FingerMovements UWaveGestureLibrary Epilepsy ArticularyWordRecognition ChilledWaterPredictor
  StandWalkJump FloodModeling1"
CMD="bash benchmarks/accuracy_cpu.sh"  # as the report names it
[ -n "${SETS:-}" ] && CMD="SETS=\"$(echo $SETS)\" REPORT_DIR=${REPORT_DIR:-reports} $CMD"
SETS="${SETS:-$ALL}"
REPORT_DIR="${REPORT_DIR:-reports}"
mkdir -p results/logs
(
  $R --models "EA-DC (defaults)" --seeds 0 --datasets $SETS
  $R --models "EA-DC (defaults)" --seeds 1 2 --datasets $SETS
) > results/logs/accuracy_lane_1.log 2>&1 &
(
  $R --models MiniRocket --datasets $SETS
  $R --models "Transformer (defaults)" --seeds 0 --datasets $SETS
  $R --models "Transformer (defaults)" --seeds 1 2 --datasets $SETS
) > results/logs/accuracy_lane_2.log 2>&1 &
wait
# shellcheck disable=SC2086
$PY -m eadct.tables report accuracy --profile defaults --report-dir "$REPORT_DIR" --datasets $SETS \
  --note "Command: \`$CMD\` (two lanes of one torch thread each), then \`eadct-tables report accuracy --profile defaults\`."
