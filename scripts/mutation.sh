#!/usr/bin/env bash
# Mutation testing with gremlins, one package at a time, one worker.
#
#   scripts/mutation.sh                     # packages whose Go files changed since main
#   scripts/mutation.sh -r v0.3.0           # ... since another ref
#   scripts/mutation.sh ./reconcile ./events
#   scripts/mutation.sh -f '^warm' .        # only the root package's files matching ^warm
#   scripts/mutation.sh ./prommetrics       # a package of another module of the repository
#
# Prints one table row per package: mutants killed, survived (lived), not
# covered or not viable, timed out, and the share caught: killed or timed
# out (the package's tests did not pass) over all three.
# Survivors are listed under the table with file:line and mutator so each can
# be killed by a test or recorded as equivalent in docs/mutation.md.
#
# Flags:
#   -r REF   compare with REF when no package is given (default main)
#   -f RE    mutate only the package's files whose name matches RE
#   -o DIR   keep the JSON reports and logs in DIR (default a temporary directory)
#
# Environment:
#   GREMLINS          the gremlins binary (default gremlins on PATH, then ~/go/bin)
#   MUTATION_TIMEOUT  wall-clock limit per package (default 40m); a package cut
#                     short is reported as such, never silently dropped
#   MUTATION_COEFF    gremlins' timeout coefficient: a mutant's tests may take
#                     this many times the package's clean test run (default 4)
#   MUTATION_MIN_TIMEOUT  ... but never less than this many seconds (default 30)
#   MUTATION_WORKERS  mutants tested at once (default 1; 2 halves the time on an
#                     idle two-core machine, each worker in its own copy of the module)
#
# Install: go install github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0
# It is slow (a build and a test run per mutant): run it on the packages a
# change touches, not on the module. It is not part of CI.
set -euo pipefail

ref=main
only=
out=
while getopts "r:f:o:h" opt; do
  case "$opt" in
    r) ref=$OPTARG ;;
    f) only=$OPTARG ;;
    o) out=$OPTARG ;;
    *) sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
  esac
done
shift $((OPTIND - 1))

root=$(git rev-parse --show-toplevel 2>/dev/null || pwd)
cd "$root"

gremlins=${GREMLINS:-$(command -v gremlins || echo "$HOME/go/bin/gremlins")}
if [[ ! -x $gremlins ]]; then
  echo "mutation: gremlins not found; go install github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0" >&2
  exit 2
fi

pkgs=("$@")
if [[ ${#pkgs[@]} -eq 0 ]]; then
  # Packages of this module (not bench/, its own module) with a changed Go file.
  mapfile -t pkgs < <(git diff --name-only "$ref" -- '*.go' |
    grep -v -e '^bench/' -e '^e2e/' -e '^examples/' |
    xargs -r -n1 dirname | sort -u | sed 's|^|./|; s|^\./\.$|.|')
fi
if [[ ${#pkgs[@]} -eq 0 ]]; then
  echo "mutation: no Go package changed since $ref" >&2
  exit 0
fi

out=${out:-$(mktemp -d -t mutation.XXXXXX)}
mkdir -p "$out"
out=$(cd "$out" && pwd) # the packages of other modules run from their root
echo "mutation: reports in $out" >&2

# excludes prints gremlins -E flags that keep it to the package's own files
# (not its sub-packages) and, with -f, to the files matching the filter.
excludes() {
  local dir=$1 f
  printf '%s\n' -E '/'
  [[ -z $only ]] && return
  for f in "$dir"/*.go; do
    f=$(basename "$f")
    [[ $f == *_test.go ]] && continue
    [[ $f =~ $only ]] && continue
    printf '%s\n' -E "^${f//./\\.}\$"
  done
}

rows=()
survivors=()
for pkg in "${pkgs[@]}"; do
  pkg=${pkg%/}
  name=$(echo "${pkg#./}" | tr / _)
  [[ $name == . || -z $name ]] && name=root
  json="$out/$name.json"
  log="$out/$name.log"
  mapfile -t ex < <(excludes "$pkg")
  shown=$pkg
  # A package of another module (prommetrics/, bench/ ...) is tested from
  # that module's root: go test and gremlins see one module at a time.
  mod=$pkg
  while [[ $mod != . && ! -f $mod/go.mod ]]; do mod=$(dirname "$mod"); done
  cd "$root/$mod"
  pkg=./${pkg#"$mod"}
  pkg=${pkg%/}
  pkg=${pkg/#.\/\//./}
  [[ $pkg == ./ || $pkg == . ]] && pkg=.
  echo "mutation: $shown ..." >&2
  status=done
  # gremlins gives a mutant's tests coefficient x its own clean run (with a
  # warm build cache, often under a second on a small package), less than
  # relinking the test binary on a busy machine; the coefficient is raised so
  # that a mutant gets at least MUTATION_MIN_TIMEOUT seconds (default 30),
  # counting gremlins' run as a third of this first one, which builds.
  start=$(date +%s%N)
  if ! GOFLAGS=-p=1 go test -count=1 "$pkg" >"$log" 2>&1; then
    rows+=("$(printf '| %-12s | tests fail before mutation, see %s |' "$shown" "$log")")
    cd "$root"
    continue
  fi
  clean=$((($(date +%s%N) - start + 2999999999) / 3000000000))
  coeff=${MUTATION_COEFF:-4}
  min=${MUTATION_MIN_TIMEOUT:-30}
  ((coeff * clean < min)) && coeff=$(((min + clean - 1) / clean))
  # For the module's root package gremlins times the whole module's tests
  # (./...), many times the root's own: once that is enough.
  [[ $pkg == . && -z ${MUTATION_COEFF:-} ]] && coeff=1
  # GOFLAGS: one build at a time (the machine is shared), and no cached
  # test result, since gremlins times the clean run to set the mutants' timeout.
  if ! GOFLAGS="-p=1 -count=1" timeout --kill-after=30s "${MUTATION_TIMEOUT:-40m}" \
    "$gremlins" unleash --workers "${MUTATION_WORKERS:-1}" --timeout-coefficient "$coeff" \
    "${ex[@]}" -o "$json" "$pkg" >"$log" 2>&1; then
    status=$([[ -s $json ]] && echo done || echo "cut short, see $log")
  fi
  k=$(grep -c '^ *KILLED' "$log" || true)
  l=$(grep -c '^ *LIVED' "$log" || true)
  n=$(grep -c -e '^ *NOT COVERED' -e '^ *NOT VIABLE' "$log" || true)
  t=$(grep -c '^ *TIMED OUT' "$log" || true)
  # caught: killed or timed out (the tests did not pass) over all covered.
  caught=-
  if ((k + l + t > 0)); then caught=$(awk -v k="$k" -v l="$l" -v t="$t" 'BEGIN{printf "%.0f%%", 100*(k+t)/(k+l+t)}'); fi
  rows+=("$(printf '| %-12s | %6s | %8s | %11s | %9s | %6s | %s |' "$shown" "$k" "$l" "$n" "$t" "$caught" "$status")")
  mapfile -t -O "${#survivors[@]}" survivors < <(grep '^ *LIVED' "$log" | sed "s|^ *LIVED |  $shown: |")
  cd "$root"
done

printf '| %-12s | %6s | %8s | %11s | %9s | %6s | %s |\n' package killed survived "not covered" "timed out" caught run
printf '|%s|\n' "--------------|--------|----------|-------------|-----------|--------|-----"
printf '%s\n' "${rows[@]}"
if [[ ${#survivors[@]} -gt 0 ]]; then
  echo
  echo "survivors:"
  printf '%s\n' "${survivors[@]}"
fi
