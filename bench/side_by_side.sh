# Sourced by the side-by-side bench scripts (bench/*_vs_*.sh): timing whole processes.
#   run LABEL CMD...   one timed run, output thrown away; appends to wall[LABEL] and cpu[LABEL]
#                      (user + sys seconds) and keeps the largest peak[LABEL] (KiB)
#   median             the median of the numbers on stdin (spaces or lines between them)
declare -A wall cpu peak
run() {
  local label=$1 t w u s m
  shift
  t=$(mktemp)
  /usr/bin/time -o "$t" -f '%e %U %S %M' "$@" > /dev/null
  read -r w u s m < "$t"
  rm -f "$t"
  wall[$label]+="$w "
  cpu[$label]+="$(awk "BEGIN { print $u + $s }") "
  peak[$label]="$(printf '%s\n' "${peak[$label]:-0}" "$m" | sort -g | tail -1)"
}
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
