#!/usr/bin/env bash
# scripts/messages.sh — refresh the Traditional Chinese catalogue from the source and compile it.
# The catalogue is kept sorted by msgid and without source locations, so that branches adding
# different messages touch different lines (and `msgcat` can merge two versions of it).
# Untranslated messages are listed at the end; the zh-Hant completeness test fails on them.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
po=locale/zh_Hant/LC_MESSAGES/django.po
"$PY" manage.py makemessages -l zh_Hant --ignore=.venv --ignore=var --ignore=artifacts \
  --ignore=tests --ignore=bench --add-location=never --no-obsolete -v 0
msgcat --sort-output --no-location -o "$po" "$po"
"$PY" manage.py compilemessages --ignore=.venv -v 0
missing=$(msgattrib --untranslated "$po" | grep -c '^msgid "' || true)
if [[ "$missing" -gt 1 ]]; then
  echo "Untranslated messages in $po:"; msgattrib --untranslated --no-wrap "$po" | grep '^msgid "' | tail -n +2
fi
