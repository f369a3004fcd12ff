#!/usr/bin/env bash
# Fetches the labelled pages of the extraction benchmark into .cache/extract-fixtures/: real
# article pages from tests/cache/ of trafilatura 0.9.0's source distribution (the trafilatura
# authors saved them from the named sites; they are third-party content, so the repository keeps
# only their names, hashes and label recipes: labels.json beside this script, docs/extract.md).
# The sdist is downloaded once with pip into .cache/ and checked against its pinned SHA-256 (by
# pip, before anything in it is run, and again here); only tests/cache/NAME.html of the pages
# named on the command line (default: every page of labels.json) is extracted. Idempotent: when
# every page is there it does nothing, and with the sdist in .cache/ it needs no network.
set -euo pipefail
version=0.9.0
sha256=f67c7cfa0705488ca2d471cc03f01c6624cd255f84fa23743f068061b1bbe45f
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
sdist_dir="$root/.cache/trafilatura-$version-sdist"
sdist="$sdist_dir/trafilatura-$version.tar.gz"
out="$root/.cache/extract-fixtures"

if [ "$#" -gt 0 ]; then
  names=("$@")
else
  mapfile -t names < <(node -e \
    'console.log(Object.keys(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).pages).join("\n"))' \
    "$here/labels.json")
fi
for name in "${names[@]}"; do
  case "$name" in
    '' | *[!A-Za-z0-9._-]* | .*) echo "fetch-pages: not a page name: '$name'" >&2 && exit 2 ;;
  esac
done

missing=()
for name in "${names[@]}"; do
  [ -f "$out/$name.html" ] || missing+=("$name")
done
[ "${#missing[@]}" -eq 0 ] && exit 0

sdist_ok() { [ -f "$sdist" ] && echo "$sha256  $sdist" | sha256sum --check --status; }
if ! sdist_ok; then
  echo "fetch-pages: downloading the trafilatura $version sdist (2.6 MB) into $sdist_dir" >&2
  rm -rf "$sdist_dir"
  mkdir -p "$sdist_dir"
  requirement="$(mktemp)"
  trap 'rm -f "$requirement"' EXIT
  echo "trafilatura==$version --hash=sha256:$sha256" >"$requirement"
  if ! python3 -m pip download --quiet --disable-pip-version-check --no-deps --no-binary :all: \
    --require-hashes -r "$requirement" -d "$sdist_dir" >&2; then
    echo "fetch-pages: pip could not download trafilatura==$version (its message is above)" >&2
    exit 1
  fi
  if ! sdist_ok; then
    echo "fetch-pages: $sdist is missing or its SHA-256 is not $sha256" >&2
    exit 1
  fi
fi

# Extract into a scratch folder beside the output, then move each page in: an interrupted run
# leaves no half-written page under a final name.
mkdir -p "$out"
scratch="$(mktemp -d "$out.XXXXXX")"
members=()
for name in "${missing[@]}"; do
  members+=("trafilatura-$version/tests/cache/$name.html")
done
if ! tar -xzf "$sdist" --no-same-owner -C "$scratch" --strip-components=3 "${members[@]}"; then
  rm -rf "$scratch"
  echo "fetch-pages: $sdist lacks some of: ${missing[*]}" >&2
  exit 1
fi
for name in "${missing[@]}"; do
  mv -f "$scratch/$name.html" "$out/$name.html"
done
rm -rf "$scratch"
echo "fetch-pages: ${#missing[@]} page(s) extracted into $out" >&2
