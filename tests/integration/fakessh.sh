#!/bin/sh
# Stands in for ssh in the launcher tests: "fakessh.sh [-o opt]... HOST COMMAND" runs COMMAND with
# sh on this machine and notes "HOST: COMMAND" in $FAKESSH_LOG.
while [ $# -gt 0 ]; do
    case "$1" in
    -o) shift 2 ;;
    -*) shift ;;
    *) break ;;
    esac
done
host=$1
shift
[ -n "$FAKESSH_LOG" ] && echo "$host: $*" >>"$FAKESSH_LOG"
exec sh -c "$*"
