#!/usr/bin/env bash
# Install the docs extra, then build the Sphinx site with warnings as errors into docs/_build/html.
# (The code blocks of README.md and docs/ run in the test suite: tests/test_docs.py.)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_env.sh dev,docs
rm -rf docs/generated
exec .venv/bin/python -m sphinx -W --keep-going -q -b html docs docs/_build/html
