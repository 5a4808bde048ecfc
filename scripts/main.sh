#!/usr/bin/env bash
# The main job: install what is needed, then fit EADCTClassifier on JapaneseVowels (bundled with
# sktime) and print test accuracy, fit time and device. Extra arguments go to `python -m eadct.demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_env.sh
exec .venv/bin/python -m eadct.demo "$@"
