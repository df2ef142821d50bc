#!/usr/bin/env bash
# Installs the Debian packages AVIA needs, if any are missing. Idempotent and quiet when
# everything is present. Needs root (or sudo) the first time on a fresh machine.
set -euo pipefail

packages=(
  python3 python3-venv               # the virtualenv (.venv) that holds the Python packages
  redis-server                       # Celery broker
  libpango-1.0-0 libpangoft2-1.0-0   # WeasyPrint text layout
  libharfbuzz-subset0                # WeasyPrint font subsetting (about 10x faster with it)
  fonts-noto-cjk                     # Traditional Chinese in PDFs
  poppler-utils                      # pdftoppm / pdftotext in report tests
  chromium                           # browser tests (driven by Playwright, never downloaded)
  gettext                            # compilemessages (msgfmt)
  tzdata                             # organization time zones (Python zoneinfo)
  cmake g++ make                     # llama.cpp's llama-server for the real-engine tests
  iproute2                           # network namespaces of the two-host object-storage test
)
# The private test and benchmark cluster (scripts/postgres.sh). Optional: where it cannot be
# installed the PostgreSQL tests are skipped, loudly, and everything else still runs.
optional=(postgresql)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
missing_optional=()
for package in "${optional[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing_optional+=("$package")
done
[[ ${#missing[@]} -eq 0 && ${#missing_optional[@]} -eq 0 ]] && exit 0

echo "Installing Debian packages: ${missing[*]} ${missing_optional[*]}"
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null; then sudo_cmd=(sudo); else
    [[ ${#missing[@]} -eq 0 ]] && {
      echo "!!! not root and no sudo: ${missing_optional[*]} not installed" >&2; exit 0; }
    echo "error: not root and no sudo; install these packages first: ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
if [[ ${#missing[@]} -gt 0 ]]; then
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [[ ${#missing_optional[@]} -gt 0 ]]; then
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing_optional[@]}" \
    >/dev/null || echo "!!! could not install ${missing_optional[*]}: PostgreSQL tests will be skipped" >&2
fi
