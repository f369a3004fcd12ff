#!/usr/bin/env bash
# Installs the Python reference of the extraction benchmark, trafilatura from PyPI, into a venv
# under .cache/ (pinned, so every machine compares against the same version). Idempotent: a venv
# that already has the pinned version is left as it is. Prints the venv's python on stdout.
set -euo pipefail
version="${TRAFILATURA_VERSION:-2.3.1}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
venv="$root/.cache/trafilatura-$version"
# jusText (a trafilatura dependency) imports lxml.html.clean, which lxml 5.2+ ships separately.
if ! "$venv/bin/python" -c "import trafilatura, sys; sys.exit(trafilatura.__version__ != '$version')" 2>/dev/null; then
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check "trafilatura==$version" "lxml_html_clean==0.4.6" >&2
fi
echo "$venv/bin/python"
