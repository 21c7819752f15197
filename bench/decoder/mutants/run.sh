#!/bin/bash
# Decodes every mutant with j2kdecode (own backend, CPU, 1 thread) and with opj_decompress
# (1 thread), each under `timeout` and /usr/bin/time, one process at a time, and writes one
# line per mutant and tool: name tool status wall_s cpu_s maxrss_kb.
#   bash run.sh MUTANT_DIR OUT.tsv [DECODERS=own=build/release/bin/j2kdecode] [timeout_s=20]
# DECODERS: comma-separated NAME=PATH of j2kdecode builds (e.g. before=/tmp/old,own=build/...),
# each measured right after the others on the same mutant, so that they share the load.
# Summary: python3 summary.py OUT.tsv
set -uo pipefail
DIR=${1:?mutant folder}
OUT=${2:?output file}
DECODERS=${3:-own=build/release/bin/j2kdecode}
LIMIT=${4:-20}
# Address-space cap for every decode (OpenJPEG takes tens of GB on some headers that ours
# refuses; this machine is shared): a decode that hits it fails, and is counted as failed.
ulimit -v "${VMEM_KB:-8388608}"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
: >"$OUT"
measure() {  # tool name command...
  local tool=$1 name=$2
  shift 2
  /usr/bin/time -o "$TMP/t" -f "%x %e %U %S %M" timeout -s KILL "$LIMIT" "$@" >/dev/null 2>&1
  # The format line is the last one (time(1) puts "Command terminated by signal N" before it).
  read -r status wall user sys rss < <(tail -1 "$TMP/t")
  local sig
  sig=$(grep -o "terminated by signal [0-9]*" "$TMP/t" | grep -o "[0-9]*$")
  [ -n "$sig" ] && status=$((128 + sig))
  [[ $status =~ ^[0-9]+$ ]] || status=255  # time(1) could not say
  echo "$name $tool $status $wall $(echo "$user + $sys" | bc) $rss" >>"$OUT"
  rm -f "$TMP"/o.raw "$TMP"/p.raw
}
for f in "$DIR"/*.j2k; do
  name=$(basename "$f")
  for d in ${DECODERS//,/ }; do
    measure "${d%%=*}" "$name" "${d#*=}" "$f" --threads 1 --gpu off -o "$TMP/o.raw"
  done
  measure opj "$name" opj_decompress -i "$f" -o "$TMP/p.raw" -threads 1
done
