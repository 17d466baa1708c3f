#!/usr/bin/env bash
# Runs the listwatch-vs-client-go benchmark and writes RESULTS.md and
# ratios.svg beside this script.
#
#   bench/run.sh            # 10,000 and 50,000 pods, 3 repetitions each
#   bench/run.sh --quick    # a smoke test: 2,000 pods, 1 repetition,
#                           # results left in a temporary directory
#
# Environment: SIZES ("10000 50000"), SCALE ("150000": sizes at which only
# listwatch and the read-only floor run, for the scaling table; "" for none),
# REPS (3), BURST (events per watch;
# default: as many as pods), PORT (18080), OUT (where RESULTS.md and
# ratios.svg go; default: this directory, or the work directory in quick
# mode), BENCHTIME and COUNT (go test -benchtime and -count of the workqueue
# benchmarks; the report takes medians).
set -euo pipefail

cd "$(dirname "$0")"
here=$PWD
quick=false
if [[ ${1:-} == --quick ]]; then
	quick=true
fi

work=$(mktemp -d)
if $quick; then
	SIZES=${SIZES:-2000}
	SCALE=${SCALE-}
	REPS=${REPS:-1}
	BENCHTIME=${BENCHTIME:-2000x}
	COUNT=${COUNT:-1}
	OUT=${OUT:-$work}
else
	SIZES=${SIZES:-10000 50000}
	SCALE=${SCALE-150000}
	REPS=${REPS:-3}
	BENCHTIME=${BENCHTIME:-1s}
	COUNT=${COUNT:-3}
	OUT=${OUT:-$here}
fi
PORT=${PORT:-18080}
host=http://127.0.0.1:$PORT

server=
cleanup() {
	if [[ -n $server ]]; then
		kill "$server" 2>/dev/null || true
		wait "$server" 2>/dev/null || true
	fi
}
trap cleanup EXIT

echo "== building (work directory $work)" >&2
go build -o "$work/bin/" ./cmd/fakeapi ./cmd/limit ./cmd/report \
	./cmd/clientgo-dynamic ./cmd/clientgo-typed ./cmd/listwatch-informer ./cmd/warmstart
: >"$work/sizes.tsv"
for m in cmd/minimal/*/; do
	name=$(basename "$m")
	go build -trimpath -ldflags='-s -w' -o "$work/min/$name" "./$m"
	echo "$name $(stat -c %s "$work/min/$name")" >>"$work/sizes.tsv"
done
cat "$work/sizes.tsv" >&2

# Every client does its sync by a paged list; client-go reads this gate.
export KUBE_FEATURE_WatchListClient=false

# serve starts fakeapi with $1 pods and a burst of $2 events, and waits
# until it answers.
serve() {
	"$work/bin/fakeapi" -addr "127.0.0.1:$PORT" -pods "$1" -burst "$2" 2>"$work/fakeapi-$1.log" &
	server=$!
	for _ in $(seq 1200); do # rendering 150,000 pods takes several seconds
		if curl -sf "$host/bench/info" >/dev/null 2>&1; then
			return 0
		fi
		if ! kill -0 "$server" 2>/dev/null; then
			break
		fi
		sleep 0.1
	done
	echo "fakeapi did not start:" >&2
	cat "$work/fakeapi-$1.log" >&2
	exit 1
}

results=()
warm=()
for n in $SIZES; do
	burst=${BURST:-$n}
	echo "== $n pods, burst $burst" >&2
	serve "$n" "$burst"
	out=$work/n$n.jsonl
	: >"$out"
	for rep in $(seq "$REPS"); do
		# The same order every repetition; repetitions spread the noise of a
		# shared machine over every client alike.
		for client in "limit -scan=false" limit clientgo-dynamic clientgo-typed "listwatch-informer -keep-managed-fields" listwatch-informer "listwatch-informer -projected"; do
			echo "-- rep $rep: $client" >&2
			# shellcheck disable=SC2086 # $client carries its flags
			"$work/bin/"$client -host "$host" | tee -a "$out" >&2
		done
	done
	# Warm start (issue 29): a cold start that saves a snapshot, then a
	# start from it.
	for rep in $(seq "$REPS"); do
		echo "-- rep $rep: warmstart" >&2
		"$work/bin/warmstart" -host "$host" | tee -a "$work/warm-$n.jsonl" >&2
	done
	cleanup
	server=
	results+=("$out")
	warm+=("$work/warm-$n.jsonl")
done

# Scaling (issue 29): listwatch's per-object sync cost at the Kubernetes
# scale limit against the sizes above; client-go would take minutes here.
scale=()
for n in $SCALE; do
	echo "== scaling: $n pods, burst 10000" >&2
	serve "$n" 10000
	out=$work/scale$n.jsonl
	: >"$out"
	for rep in $(seq "$REPS"); do
		for client in "limit -scan=false" listwatch-informer; do
			echo "-- rep $rep: $client" >&2
			# shellcheck disable=SC2086 # $client carries its flags
			"$work/bin/"$client -host "$host" | tee -a "$out" >&2
		done
	done
	cleanup
	server=
	scale+=("$out")
done

echo "== workqueue benchmarks" >&2
go test -run '^$' -bench . -benchmem -benchtime "$BENCHTIME" -count "$COUNT" -cpu 1,2 . | tee "$work/workqueue.txt" >&2

machine="$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(free -g | awk '/^Mem:/ {print $2}') GiB, $(uname -sr), $(go version | cut -d' ' -f3)"
"$work/bin/report" -machine "$machine" -sizes "$work/sizes.tsv" -workqueue "$work/workqueue.txt" \
	-md "$OUT/RESULTS.md" -svg "$OUT/ratios.svg" -scale "$(IFS=,; echo "${scale[*]}")" "${results[@]}"
{
	echo
	echo "## Warm start (bench/cmd/warmstart)"
	echo
	echo "A listwatch informer syncs by a paged list and stops, saving its snapshot; a second one starts from it and resumes the watch without listing. fakeapi holds each watch's events until triggered, and, as kube-apiserver, sends no bookmark on a quiet resumed watch, so it is confirmed by ConfirmAfter (100 ms, the default): first-ready is when the restored cache is readable and its adds are with the handler. Medians of $REPS."
	echo
	"$work/bin/warmstart" -table "${warm[@]}"
} >>"$OUT/RESULTS.md"
echo "== wrote $OUT/RESULTS.md and $OUT/ratios.svg (raw results in $work)" >&2
