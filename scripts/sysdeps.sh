#!/usr/bin/env bash
# System packages the end-to-end tests need, from Debian's packages: Chromium (driven by
# Playwright's Python package; never a downloaded browser) and PostgreSQL (the suite also runs
# against it). Installs only what is missing.
set -euo pipefail
need=()
[ -x /usr/bin/chromium ] || need+=(chromium chromium-driver)
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || need+=(postgresql)
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
echo "installing system packages: ${need[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "need root (or sudo) to apt-get install ${need[*]}" >&2; exit 1; }
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
