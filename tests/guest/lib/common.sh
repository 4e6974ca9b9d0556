# What every guest test shares, sourced first thing: `. "$(dirname "$0")/lib/common.sh"`.
# It lives in lib/ so that the runner (tools/guest/eevdf-guest-tests), which takes
# tests/guest/*.sh for tests, does not take it for one.

# fail MESSAGE...: the test failed. Prints "FAIL: MESSAGE", then runs the test's own
# on_fail (its diagnostics and clean-up: what it started, what it changed) if it defines
# one, and exits 1. A test's EXIT trap, if it has one, runs after that.
fail() {
	echo "FAIL: $*"
	command -v on_fail >/dev/null 2>&1 && on_fail
	exit 1
}

# scaled N FLOOR: N times the load share (EEVDF_LOAD, percent, eevdf-guest-tests -s), at
# least FLOOR: the loops a test runs at a smaller load.
scaled() {
	n=$(($1 * ${EEVDF_LOAD:-100} / 100))
	[ "$n" -ge "$2" ] && echo "$n" || echo "$2"
}

# nap SECONDS: sleep without forking (a read with a timeout from a FIFO nobody writes),
# so that a test's loop under a crowd costs no process per look.
nap_fifo=/tmp/eevdf-guest-nap.fifo
[ -p $nap_fifo ] || mkfifo $nap_fifo
nap() {
	read -t "$1" _ <>$nap_fifo
	return 0
}
