#!/usr/bin/env bash
# npm test: the Debian tools the tests call (xmllint, xmlsec1, openssl, poppler's pdftotext/pdftoppm, dovecot, chromium, wine, mingw), a check that nothing
# reads outside the repository, the type-check, the binary, the whole suite.
# Bun's results also go to .test-results/junit.xml, which .ci/run reads for its closing line.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v xmllint >/dev/null 2>&1 || need+=(libxml2-utils)
command -v xmlsec1 >/dev/null 2>&1 || need+=(xmlsec1)
command -v openssl >/dev/null 2>&1 || need+=(openssl)
command -v pdftotext >/dev/null 2>&1 || need+=(poppler-utils)
# The release test reads the zips' Unix modes with Info-ZIP's unzip -Z (test/cli/release.test.ts).
command -v unzip >/dev/null 2>&1 || need+=(unzip)
# The system's own SQLite checks that a healthy database is healthy to it too (test/cli/sqlite-system-integrity.test.ts).
command -v sqlite3 >/dev/null 2>&1 || need+=(sqlite3)
# The mail tests start their own dovecot (test/support/mail.ts); the package is the IMAP server, not its service.
[ -x /usr/sbin/dovecot ] || need+=(dovecot-imapd)
# The console's browser tests drive Debian's Chromium headless through playwright-core (test/support/browser.ts).
command -v chromium >/dev/null 2>&1 || need+=(chromium)
# The Windows executable's smoke test runs it under Wine and builds two test-only helpers with mingw (test/cli/windows-wine.test.ts).
command -v wine >/dev/null 2>&1 || need+=(wine wine64)
command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || need+=(gcc-mingw-w64-x86-64-win32)
if [ ${#need[@]} -gt 0 ]; then
  echo "[test 0/4] installing Debian packages the tests need: ${need[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# A clone of this repository alone must pass its tests: the SII's files the tests need are copied into
# test/fixtures/sii, and no code may read a folder beside the checkout (the ../shared folder of the machine the project
# was written on exists nowhere else, so a test reading it passes there and fails for everyone who clones the project).
# Comments may mention such paths; code may not. Two checks, grep-fast: a literal path into that folder, and a join
# from a file's own folder (import.meta.dir, import.meta.dirname, __dirname) whose '..' steps climb above the root.
echo "[test 1/4] nothing reads outside the repository"
outside=$(
  {
    grep -rnIE '[.][.]/shared|shared[/]sii' src test scripts bench || true
    grep -rnIE '(import[.]meta[.]dir(name)?|__dirname)[[:space:]]*,' src test scripts bench |
      awk -F: '{
        depth = split($1, dirs, "/") - 1
        match($0, /(import[.]meta[.]dir(name)?|__dirname)[[:space:]]*,/)
        rel = substr($0, RSTART + RLENGTH); sub(/[)].*/, "", rel); gsub(/[^A-Za-z0-9_.-]+/, "/", rel)
        n = split(rel, steps, "/")
        for (i = 1; i <= n; i++) {
          if (steps[i] == "..") depth--; else if (steps[i] != "." && steps[i] != "") depth++
          if (depth < 0) { print; break }
        }
      }'
  } | grep -vE '^[^:]+:[0-9]+:[[:space:]]*(//|/[*]|[*]|#)' | awk '!seen[$0]++' || true
)
if [ -n "$outside" ]; then
  echo "error: these lines (file:line) reach outside the repository; copy what they need into it (test/fixtures/sii):" >&2
  echo "$outside" | sed 's/^/  /' >&2
  exit 1
fi

echo "[test 2/4] type-check (tsc --noEmit)"
tsc --noEmit -p .

echo "[test 3/4] build dist/timbre"
bun scripts/build.ts

echo "[test 4/4] bun test"
mkdir -p .test-results
rm -f .test-results/junit.xml
exec bun test --timeout 30000 --reporter=junit --reporter-outfile=.test-results/junit.xml "$@"
