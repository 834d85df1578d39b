# Sourced by the ncu device scripts (conv_ncu.sh, mlp_ncu.sh): the ncu binary
# and STALLS, every warp stall reason per issued instruction as one --metrics
# list (the WarpStateStats section names only the top reasons).
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
STALLS=$(for r in barrier long_scoreboard short_scoreboard mio_throttle math_pipe_throttle wait not_selected \
  selected lg_throttle dispatch_stall no_instruction branch_resolving drain membar sleeping tex_throttle; do
  printf 'smsp__average_warps_issue_stalled_%s_per_issue_active.ratio,' "$r"; done | sed 's/,$//')
