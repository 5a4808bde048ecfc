#!/usr/bin/env bash
# "Does evolving attention help?" with a search (issue 15, point 3): Tables 2 and 4 under the `cpu-search`
# profile (halving of 6 candidates from the paper's space, 3 seeds of 100 + 25 epochs) on the paper's UEA sets
# that are on the team's machines, for the Transformer, DC-Transformer and EA-DC-Transformer rows and the
# Table 4 ablations. Two lanes of one torch thread each take disjoint datasets (a search is cached per model
# and dataset, so no search runs twice); seed 0 first. Rerunning skips every finished unit, and a killed run
# resumes where it stopped (search rungs included).
#   DATA=../shared/datasets bash benchmarks/evolving_search_cpu.sh
set -euo pipefail
cd "$(dirname "$0")/.."
DATA="${DATA:-../shared/datasets}"
PY="${PYTHON:-.venv/bin/python}"
R="$PY -W ignore::UserWarning -m eadct.tables run"
C="--profile cpu-search --threads 1 --data-dir $DATA/UEA"
T2="Transformer DC-Transformer EA-DC-Transformer"
T4=("w/o Convolution" "w/o Skip Connection" "with 1x1 Convolution" "with 5x5 Convolution")
mkdir -p results/logs
(
  $R table2 $C --models $T2 --seeds 0 --datasets UWaveGestureLibrary
  $R table2 $C --models $T2 --seeds 1 2 --datasets UWaveGestureLibrary
  $R table4 $C --models "${T4[@]}" --datasets UWaveGestureLibrary
) > results/logs/evolving_search_lane_1.log 2>&1 &
(
  $R table2 $C --models $T2 --seeds 0 --datasets Handwriting JapaneseVowels
  $R table2 $C --models $T2 --seeds 1 2 --datasets Handwriting JapaneseVowels
  $R table4 $C --models "${T4[@]}" --datasets Handwriting
) > results/logs/evolving_search_lane_2.log 2>&1 &
wait
NOTE="Command: \`bash benchmarks/evolving_search_cpu.sh\` (two lanes of one torch thread each), then \`eadct-tables report <table> --profile cpu-search\`."
for t in table2 table4; do
  $PY -m eadct.tables report "$t" --profile cpu-search --note "$NOTE"
done
