#!/usr/bin/env bash
# One classification candidate row of the `candidates` table (docs/accuracy.md) on the 2-core CPU: the 11 UEA
# sets, 3 seeds, two lanes of one torch thread each with disjoint units of about equal time (lane 1: seed 0, then
# seed 2 of the four longest sets; lane 2: seed 1, then seed 2 of the other seven). The defaults rows and
# MiniRocket are the `accuracy` table's (already run there). Rerunning skips every finished unit, and a killed
# run resumes where it stopped.
#   DATA=../shared/datasets MODEL="EA-DC (8 segments)" bash research/benchmarks/candidates_row_cpu.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
DATA="${DATA:-../shared/datasets}"
PY="${PYTHON:-.venv/bin/python}"
OUT="${OUT:-results/tables}"
MODEL="${MODEL:-EA-DC (8 segments)}"
R="$PY -W ignore::UserWarning -m eadct.tables run research/configs/candidates.toml --profile defaults --threads 1 --out $OUT"
R="$R --data-dir $DATA/UEA --models"
LONG="ArticularyWordRecognition Epilepsy FingerMovements AtrialFibrillation"
SHORT="UWaveGestureLibrary Handwriting JapaneseVowels Libras StandWalkJump BasicMotions ERing"
mkdir -p results/logs
(
  $R "$MODEL" --seeds 0 --datasets $LONG $SHORT
  $R "$MODEL" --seeds 2 --datasets $LONG
) > results/logs/candidates_row_lane_1.log 2>&1 &
(
  $R "$MODEL" --seeds 1 --datasets $LONG $SHORT
  $R "$MODEL" --seeds 2 --datasets $SHORT
) > results/logs/candidates_row_lane_2.log 2>&1 &
wait
$PY -m eadct.tables report research/configs/candidates.toml --profile defaults --out "$OUT" --report-dir research/reports \
  --note "Command: \`MODEL=\"$MODEL\" bash research/benchmarks/candidates_row_cpu.sh\` (two lanes of one torch thread each), then \`eadct-tables report research/configs/candidates.toml --profile defaults --report-dir research/reports\`."
