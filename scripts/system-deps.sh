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
)
if [[ "${AVIA_WITH_POSTGRES:-0}" == "1" ]]; then packages+=(postgresql); fi

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "Installing Debian packages: ${missing[*]}"
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null; then sudo_cmd=(sudo); else
    echo "error: not root and no sudo; install these packages first: ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
