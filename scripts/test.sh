#!/usr/bin/env bash
# Install the project with its dev extras, then run the default (fast) test suite.
# Extra arguments go to pytest, e.g. `bash scripts/test.sh -m slow`.
# The tests run in one pytest-xdist worker per core this process may use (its affinity and any container quota,
# as eadct.runtime.available_cores counts them); TEST_WORKERS=N sets the count, TEST_WORKERS=0 runs them in this
# process. The tiny fits run on one torch thread each (tests/conftest.py), so the workers do not oversubscribe.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_env.sh dev
workers="${TEST_WORKERS:-$(.venv/bin/python -c 'from eadct.runtime import available_cores; print(available_cores())')}"
if [ "$workers" -le 1 ]; then workers=0; fi
exec .venv/bin/python -m pytest -n "$workers" "$@"
