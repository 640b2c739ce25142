# Sourced by the reader benchmarks of scripts/device: makes their big inputs one at a time in
# $work, runs `CALLBACK LABEL FILE` on each, then deletes it.
#   each_big_input CALLBACK "RAW_MB..." "TRACE_MB..." "NSYS_LAUNCHES..."     ("" skips a kind)
# Raw pages: scripts/bench/make_big_raw.py (the real Qwen decode fixture repeated); traces:
# scripts/bench/make_big_trace.py (the real H100 llama trace repeated); nsys exports:
# scripts/fixtures/make_nsys_fixture.py bench (the real llama export's kernels repeated).
each_big_input() {
  local callback=$1 raw_mb=$2 trace_mb=$3 nsys_launches=$4 mb launches file
  for mb in $raw_mb; do
    file=$work/raw_${mb}MB.csv
    python3 "$root/scripts/bench/make_big_raw.py" -s "$mb" -o "$file" > /dev/null
    "$callback" "raw${mb}MB" "$file"
    rm -f "$file"
  done
  for mb in $trace_mb; do
    file=$work/trace_${mb}MB.json
    python3 "$root/scripts/bench/make_big_trace.py" -s "$mb" -o "$file" > /dev/null
    "$callback" "trace${mb}MB" "$file"
    rm -f "$file"
  done
  for launches in $nsys_launches; do
    file=$work/nsys_${launches}.sqlite
    python3 "$root/scripts/fixtures/make_nsys_fixture.py" bench --template "$root/tests/fixtures/nsys/llama_stages.sqlite" \
      --launches "$launches" -o "$file" > /dev/null
    "$callback" "nsys_$((launches / 1000))k" "$file"
    rm -f "$file"
  done
}
