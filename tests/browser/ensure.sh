#!/usr/bin/env bash
# Installs what the browser tests, screenshots and benchmark need when missing: Debian's
# chromium, and Playwright for Python (which drives that browser and downloads none).
set -euo pipefail
if ! command -v chromium >/dev/null 2>&1; then
  echo "Installing chromium"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q chromium >/dev/null
fi
if ! python3 -c "import playwright" 2>/dev/null; then
  echo "Installing playwright"
  python3 -m pip install -q --disable-pip-version-check 'playwright>=1.40,<2'
fi
