#!/bin/sh
# The Makefile's one install step: the Debian packages named that are not installed yet are
# installed with apt-get when running as root; otherwise the exact command is printed.
# usage: tools/apt_install.sh required|optional WHAT PKG...
#   required: exit 1 when a package is missing and cannot be installed
#   optional: say what is skipped without it (WHAT) and exit 0
mode=$1 what=$2; shift 2
missing=""
for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
    echo "installing:$missing"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing) >/dev/null && exit 0
    msg="apt-get install$missing failed"
else
    msg="missing packages:$missing (run: sudo apt-get install -y$missing)"
fi
if [ "$mode" = optional ]; then echo "note: $msg: $what"; exit 0; fi
echo "error: $msg${what:+ ($what)}" >&2
exit 1
