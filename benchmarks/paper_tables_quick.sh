#!/usr/bin/env bash
# The committed reports in reports/: the quick profile on the 2-core CPU, with the datasets that are on disk.
# Two lanes of one torch thread each run side by side (they take disjoint datasets, so no unit runs twice);
# rerunning the script skips every finished unit, and a killed run resumes where it stopped.
#   DATA=../shared/datasets bash benchmarks/paper_tables_quick.sh
# Coverage of the committed reports: Tables 2 and 4, seeds 0-2; extras EA-DC-Transformer seeds 0-1,
# MiniRocket seeds 0-2, Transformer seeds 0-1; heads (flattening head) seeds 0-1 on 11 of the 14 extras.
# Units do not depend on the order they run in.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA="${DATA:-../shared/datasets}"
PY="${PYTHON:-.venv/bin/python}"
R="$PY -W ignore::UserWarning -m eadct.tables run"
C="--profile quick --seeds 0 1 2 --threads 1 --data-dir $DATA/UEA"
X="--profile quick --threads 1 --data-dir $DATA/UEA --data-dir $DATA/TSER"
mkdir -p results/logs
(
  $R table2 $C --datasets UWaveGestureLibrary
  $R table4 $C --datasets UWaveGestureLibrary
  $R table2 $C --datasets JapaneseVowels
  $R extras $X --seeds 0 1 --models EA-DC-Transformer --datasets BitcoinSentiment CardanoSentiment Covid3Month \
    Tecator ChilledWaterPredictor FloodModeling1
  $R extras $X --seeds 0 1 --models Transformer --datasets BitcoinSentiment CardanoSentiment FloodModeling1
) > results/logs/lane_1.log 2>&1 &
(
  $R extras $X --models MiniRocket  # the profile's seeds 0-2, seconds each
  $R table2 $C --datasets Handwriting
  $R table4 $C --datasets Handwriting
  $R extras $X --seeds 0 1 --models EA-DC-Transformer --datasets BasicMotions ERing Libras FingerMovements \
    AtrialFibrillation Epilepsy ArticularyWordRecognition StandWalkJump
  $R extras $X --seeds 0 1 --models Transformer --datasets BasicMotions ERing Libras FingerMovements \
    AtrialFibrillation Covid3Month Tecator Epilepsy ArticularyWordRecognition StandWalkJump ChilledWaterPredictor
) > results/logs/lane_2.log 2>&1 &
wait
$R heads $X --seeds 0 1 --models "EA-DC-Transformer (flatten)" --datasets ERing Libras FingerMovements BasicMotions Epilepsy \
  AtrialFibrillation > results/logs/lane_h1.log 2>&1 &
$R heads $X --seeds 0 1 --models "EA-DC-Transformer (flatten)" --datasets Tecator Covid3Month BitcoinSentiment ChilledWaterPredictor \
  CardanoSentiment > results/logs/lane_h2.log 2>&1 &
wait
NOTE="Commands: \`bash benchmarks/paper_tables_quick.sh\` (see the script for the individual \`eadct-tables run\` calls), then \`eadct-tables report <table> --profile quick\`."
for t in table2 table4 extras heads; do
  $PY -m eadct.tables report "$t" --profile quick --note "$NOTE"
done
