#!/usr/bin/env bash
# npm test: the Debian tools the tests call (xmllint, xmlsec1, openssl, poppler's pdftotext/pdftoppm), the type-check, the binary, the whole suite.
# Bun's results also go to .test-results/junit.xml, which .ci/run reads for its closing line.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v xmllint >/dev/null 2>&1 || need+=(libxml2-utils)
command -v xmlsec1 >/dev/null 2>&1 || need+=(xmlsec1)
command -v openssl >/dev/null 2>&1 || need+=(openssl)
command -v pdftotext >/dev/null 2>&1 || need+=(poppler-utils)
if [ ${#need[@]} -gt 0 ]; then
  echo "[test 0/3] installing Debian packages the tests need: ${need[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

echo "[test 1/3] type-check (tsc --noEmit)"
tsc --noEmit -p .

echo "[test 2/3] build dist/timbre"
bun scripts/build.ts

echo "[test 3/3] bun test"
mkdir -p .test-results
rm -f .test-results/junit.xml
exec bun test --timeout 30000 --reporter=junit --reporter-outfile=.test-results/junit.xml "$@"
