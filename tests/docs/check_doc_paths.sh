#!/usr/bin/env bash
# Fails, naming file and line, when README.md or docs/*.md names a repository file that does not
# exist. Usage: check_doc_paths.sh <source dir>
# What counts as a path:
#  - a word whose first component is a top-level folder of the repository (bench/results/...,
#    examples/basic.cpp, scripts/test.sh, include/mcubes/...); wildcards (algorithm/*.hpp) must
#    match at least one file;
#  - a word with a slash that ends in a source or document extension (.hpp .cuh .cpp .cu .md .sh
#    .py .cmake .csv .txt .json .cff .png), resolved against the repository root, then include/
#    (so <mcubes/cuda.cuh> is include/mcubes/cuda.cuh);
#  - a bare *.md name (REFERENCE.md), resolved against the root and the document's folder;
#  - a relative Markdown link target [text](target).
# Not paths: URLs, absolute paths, build trees (build/..., build-*/...), <placeholders>/... .
set -uo pipefail
src=${1:-.}
cd "$src" || { echo "check_doc_paths: no folder $src" >&2; exit 2; }
shopt -s nullglob

roots=()
for d in */ .ci/; do
  d=${d%/}
  case $d in build | build-* | out) continue ;; esac
  roots+=("$d")
done
is_root() { local r; for r in "${roots[@]}"; do [ "$1" = "$r" ] && return 0; done; return 1; }
exists() { compgen -G "$1" > /dev/null; }  # a file, a folder or a pattern with a match

docs=(README.md docs/*.md)
checked=0 missing=0
declare -A seen=()
report() {  # doc word (each missing path once per document)
  local line
  [ -n "${seen[$1|$2]:-}" ] && return 0
  seen[$1|$2]=1
  line=$(grep -nF -- "$2" "$1" | head -1 | cut -d: -f1)
  echo "$1:${line:-?}: '$2' does not exist in the repository"
  missing=$((missing + 1))
}

for doc in "${docs[@]}"; do
  [ -f "$doc" ] || continue
  dir=$(dirname "$doc")
  # Markdown link targets, relative ones only.
  while IFS= read -r target; do
    target=${target%%#*}
    case $target in '' | http:* | https:* | mailto:* | /*) continue ;; esac
    checked=$((checked + 1))
    exists "$dir/$target" || report "$doc" "$target"
  done < <(grep -oE '\]\([^) ]+' "$doc" | sed 's/^](//' | sort -u)
  # Words made of path characters (a URL loses its scheme to the ':' and starts with '/').
  while IFS= read -r word; do
    while [[ $word == *[.,:\;] ]]; do word=${word%?}; done
    word=${word#./}
    case $word in '' | /* | *//* | build/* | build-*/*) continue ;; esac
    first=${word%%/*}
    if [[ $word == */* ]] && is_root "$first"; then
      checked=$((checked + 1))
      exists "$word" || report "$doc" "$word"
    elif [[ $word == */* && $word =~ \.(hpp|cuh|cpp|cu|md|sh|py|cmake|csv|txt|json|cff|png)$ ]]; then
      [[ $word =~ ^[A-Za-z0-9_.-]+/ ]] || continue
      checked=$((checked + 1))
      exists "$word" || exists "include/$word" || report "$doc" "$word"
    elif [[ $word != */* && $word =~ ^[A-Za-z0-9_-]+\.md$ ]]; then
      checked=$((checked + 1))
      exists "$word" || exists "$dir/$word" || report "$doc" "$word"
    fi
  done < <(grep -oE '[A-Za-z0-9_.*/-]+' "$doc" | grep -E '/|\.md$' | sort -u)
done

if [ "$missing" -ne 0 ]; then
  echo "check_doc_paths: $missing of $checked named paths do not exist"
  exit 1
fi
echo "check_doc_paths: all $checked paths named in ${docs[*]} exist"
