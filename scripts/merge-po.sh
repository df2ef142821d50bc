#!/usr/bin/env bash
# scripts/merge-po.sh — resolve a merge conflict in the translations catalogue: the union of both
# sides' messages (ours first where both translate one), kept sorted, then refreshed from source.
set -euo pipefail
cd "$(dirname "$0")/.."
po=locale/zh_Hant/LC_MESSAGES/django.po
tmp=$(mktemp -d)
git show :2:"$po" >"$tmp/ours.po"
git show :3:"$po" >"$tmp/theirs.po"
msgcat --use-first --sort-output --no-location -o "$po" "$tmp/ours.po" "$tmp/theirs.po"
rm -rf "$tmp"
PY=${PY:-.venv/bin/python} scripts/messages.sh
git add "$po"
