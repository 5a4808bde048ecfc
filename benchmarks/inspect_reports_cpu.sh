#!/usr/bin/env bash
# The two reports of issue 16 on the 2-core CPU, under the `defaults` profile (the estimators' defaults, 3 seeds):
#   reports/representations_defaults.md (+ .png, _tsne.png): AvgWCD (Eq. 13) of the TEST representations of the
#     Transformer, DC-Transformer and EA-DC-Transformer on the 11 shared UEA sets, t-SNE on UWaveGestureLibrary;
#   reports/sensitivity_defaults.md (+ _UWaveGestureLibrary_sensitivity.png): the 3 x 3 x 3 alpha, beta, p grid
#     on UWaveGestureLibrary (Fig. 9b), with the point that selection on TRAIN picks.
# Two lanes of one torch thread each (disjoint tables); seed 0 first. Rerunning skips every finished unit and a
# killed run resumes where it stopped.
#   DATA=../shared/datasets bash benchmarks/inspect_reports_cpu.sh
set -euo pipefail
cd "$(dirname "$0")/.."
DATA="${DATA:-../shared/datasets}"
PY="${PYTHON:-.venv/bin/python}"
R="$PY -W ignore::UserWarning -m eadct.tables run"
C="--profile defaults --threads 1 --data-dir $DATA/UEA"
# cheapest first, so that an interrupted run has covered as many sets as possible
SETS="ERing AtrialFibrillation BasicMotions JapaneseVowels Libras Handwriting FingerMovements UWaveGestureLibrary
  Epilepsy ArticularyWordRecognition StandWalkJump"
mkdir -p results/logs
(
  $R representations $C --seeds 0 --datasets $SETS
  $R representations $C --seeds 1 2 --datasets $SETS
) > results/logs/representations_lane.log 2>&1 &
(
  $R sensitivity $C --seeds 0
  $R sensitivity $C --seeds 1 2
) > results/logs/sensitivity_lane.log 2>&1 &
wait
NOTE="Command: \`bash benchmarks/inspect_reports_cpu.sh\` (two lanes of one torch thread each), then \`eadct-tables report <table> --profile defaults\`."
for t in representations sensitivity; do
  $PY -m eadct.tables report "$t" --profile defaults --note "$NOTE"
done
