#!/usr/bin/env bash
# The committed reports in reports/: the quick profile on the 2-core CPU, with the datasets that are on disk.
# Two lanes of one torch thread each run side by side (they take disjoint datasets, so no unit runs twice);
# rerunning the script skips every finished unit. Seeds 0 and 1 (add `--seeds 2` runs for the third).
#   DATA=../shared/datasets bash benchmarks/paper_tables_quick.sh
set -euo pipefail
cd "$(dirname "$0")/.."
DATA="${DATA:-../shared/datasets}"
PY="${PYTHON:-.venv/bin/python}"
R="$PY -W ignore::UserWarning -m eadct.tables run"
C="--profile quick --seeds ${SEEDS:-0 1} --threads 1 --data-dir $DATA/UEA"
mkdir -p results/logs
(
  $R table2 $C --datasets UWaveGestureLibrary --models EA-DC-Transformer Transformer DC-Transformer
  $R table4 $C --datasets UWaveGestureLibrary
  $R table2 $C --datasets UWaveGestureLibrary
  $R table2 $C --datasets JapaneseVowels
  for seed in 0 1; do  # extras: small sets first, seed 0 everywhere before seed 1
    $R extras --profile quick --seeds $seed --threads 1 --data-dir "$DATA/UEA" --data-dir "$DATA/TSER" \
      --models EA-DC-Transformer --datasets BitcoinSentiment CardanoSentiment Covid3Month Tecator \
      ChilledWaterPredictor FloodModeling1
  done
) > results/logs/lane_uwave.log 2>&1 &
(
  $R extras --profile quick --threads 1 --data-dir "$DATA/UEA" --data-dir "$DATA/TSER" --models MiniRocket  # seeds 0-2, seconds each
  $R table2 $C --datasets Handwriting --models EA-DC-Transformer Transformer DC-Transformer
  $R table4 $C --datasets Handwriting
  $R table2 $C --datasets Handwriting
  for seed in 0 1; do
    $R extras --profile quick --seeds $seed --threads 1 --data-dir "$DATA/UEA" --data-dir "$DATA/TSER" \
      --models EA-DC-Transformer --datasets BasicMotions ERing Libras FingerMovements AtrialFibrillation \
      Epilepsy ArticularyWordRecognition StandWalkJump
  done
) > results/logs/lane_other.log 2>&1 &
wait
# then the extras Transformer row, seed 0 everywhere before seed 1, FloodModeling1 (the longest) in its own lane
X="--profile quick --threads 1 --data-dir $DATA/UEA --data-dir $DATA/TSER --models Transformer"
(
  for seed in 0 1; do
    $R extras $X --seeds $seed --datasets BitcoinSentiment CardanoSentiment FloodModeling1
  done
) > results/logs/lane_T_A.log 2>&1 &
(
  for seed in 0 1; do
    $R extras $X --seeds $seed --datasets BasicMotions ERing Libras FingerMovements AtrialFibrillation Covid3Month \
      Tecator Epilepsy ArticularyWordRecognition StandWalkJump ChilledWaterPredictor
  done
) > results/logs/lane_T_B.log 2>&1 &
wait
NOTE="Commands: \`bash benchmarks/paper_tables_quick.sh\` (see the script for the individual \`eadct-tables run\` calls), then \`eadct-tables report <table> --profile quick\`."
for t in table2 table4 extras; do
  $PY -m eadct.tables report "$t" --profile quick --note "$NOTE"
done
