#!/usr/bin/env bash
# Install the project with its dev extras, then run the default (fast) test suite.
# Extra arguments go to pytest, e.g. `bash scripts/test.sh -m slow`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_env.sh dev
exec .venv/bin/python -m pytest "$@"
