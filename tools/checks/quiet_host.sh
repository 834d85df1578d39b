# shellcheck shell=bash
# Sourced by the checks that time CPU runs (engine.sh).
# The host's CPU use by everyone over one second (busy %, and steal % — a VM's vCPUs run by other
# tenants) from /proc/stat.
cpu_busy() {
  local a b
  read -r -a a < <(awk '/^cpu /{print $2+$3+$4+$7+$8, $5+$6, $9}' /proc/stat)
  sleep 1
  read -r -a b < <(awk '/^cpu /{print $2+$3+$4+$7+$8, $5+$6, $9}' /proc/stat)
  local busy=$((b[0] - a[0])) idle=$((b[1] - a[1])) steal=$((b[2] - a[2]))
  local total=$((busy + idle + steal))
  ((total > 0)) || total=1
  echo "$((100 * busy / total)) $((100 * steal / total))"
}
# Before timing anything: wait (up to QUIET_S seconds, default 90) until the host is quiet (under 3%
# busy and 1% steal over a second). A freshly started machine runs its own start-up work for a while:
# on 2026-11-25 (fifth session) the first of three rounds read simple-mlp's CPU step at 2118 µs against
# 195-200 in the next two, recovering over the round. What was seen is logged either way.
quiet_host() {
  local waited=0 q
  while :; do
    read -r -a q < <(cpu_busy)
    if ((q[0] < 3 && q[1] < 1)); then
      echo "host quiet after ${waited}s: ${q[0]}% busy, ${q[1]}% steal"
      return 0
    fi
    if ((waited >= ${QUIET_S:-90})); then
      echo "host NOT quiet after ${waited}s: ${q[0]}% busy, ${q[1]}% steal; timing anyway; the busiest processes:"
      ps -eo pcpu,comm --sort=-pcpu | head -6
      return 0
    fi
    waited=$((waited + 1))
  done
}
