#!/usr/bin/env bash
# Create .venv (if missing) and install eadct with the given extras into it.
# Installs torch 2.13.0 first when the venv has no torch: on the project's machines that is
# a CPU build from local disk; elsewhere pip fetches it from PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-}"
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
if ! .venv/bin/python -c "import torch" >/dev/null 2>&1; then
  .venv/bin/python -m pip install -q "torch==2.13.0"
fi
.venv/bin/python -m pip install -q -e ".${extras:+[$extras]}"
