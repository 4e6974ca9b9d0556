#!/bin/sh
# hackbench runs to completion and reports a time.
set -e
out=$(hackbench -g 2 -l 100)
echo "$out"
echo "$out" | grep -q '^Time: [0-9]'
