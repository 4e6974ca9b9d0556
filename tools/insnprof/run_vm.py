#!/usr/bin/env python3
"""Boot a bzImage under TCG via eevdf-vm, and turn QEMU's exec/in_asm logging on and
off from the host (HMP monitor on a unix socket) around guest ping-pong runs.

The guest prints "@@LOGON <name>" then sleeps; the host switches the QEMU log file to
OUTDIR/<name>.log and enables `in_asm,exec,nochain`. The guest runs eevdf-pingpong,
prints "@@LOGOFF"; the host disables logging (`log none`). Guest output is saved to
OUTDIR/console.txt (the pingpong result lines give the round trips of each window).

usage: [INSNPROF_GUEST_SETUP='shell cmds'] run_vm.py BZIMAGE OUTDIR WINDOW_SPEC...
  WINDOW_SPEC = name:duration_ms   each window logs a whole eevdf-pingpong run of that
                                   length (differencing mode), e.g. s1:300 l1:3000
              | name@log_ms        the windows log log_ms of one long eevdf-pingpong run
                                   (steady mode), e.g. w1@3000 w2@3000
"""
import os
import socket
import subprocess
import sys
import time

EEVDF_VM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "target", "release", "eevdf-vm")


class Monitor:
    def __init__(self, path):
        self.path = path
        self.s = None

    def connect(self):
        for _ in range(200):
            try:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(self.path)
                self.s = s
                self._read_prompt()
                return
            except (FileNotFoundError, ConnectionRefusedError):
                time.sleep(0.05)
        raise RuntimeError("cannot connect to QEMU monitor at " + self.path)

    def _read_prompt(self):
        buf = b""
        while not buf.endswith(b"(qemu) "):
            d = self.s.recv(4096)
            if not d:
                raise RuntimeError("monitor closed")
            buf += d
        return buf

    def cmd(self, c):
        self.s.sendall(c.encode() + b"\n")
        return self._read_prompt().decode(errors="replace")


def main():
    bz, outdir = sys.argv[1], sys.argv[2]
    windows = [w.split(":") if ":" in w else w.split("@") + ["steady"]
               for w in sys.argv[3:]]
    os.makedirs(outdir, exist_ok=True)
    sock = os.path.join(outdir, "mon.sock")
    if os.path.exists(sock):
        os.unlink(sock)
    # optional guest shell commands run before everything (e.g. a sysctl / debugfs knob)
    setup = os.environ.get("INSNPROF_GUEST_SETUP", "")
    lines = ["set -e", setup, "PP=/eevdf/bin/eevdf-pingpong",
             # warm up: page cache, first exec, etc. (not logged)
             "$PP --cpu 0 --duration-ms 300 >/dev/null", "sleep 1"]
    if all(len(w) == 2 for w in windows):
        # differencing mode: each window logs a whole eevdf-pingpong run
        for name, ms in windows:
            lines += [f"echo @@LOGON {name}", "sleep 1",
                      f"echo \"@@RESULT {name} $($PP --cpu 0 --duration-ms {ms} | head -1)\"",
                      "echo @@LOGOFF", "sleep 1"]
    else:
        # steady mode: the windows log the middle of one long eevdf-pingpong run; the
        # shell keeps off CPU 0 (the ping-pong's CPU) when there is another CPU
        # (INSNPROF_WORKLOAD replaces the ping-pong, e.g. eevdf-scale's yielding tasks)
        work = os.environ.get("INSNPROF_WORKLOAD") or "$PP --cpu 0 --duration-ms 100000000"
        # INSNPROF_SETTLE_S: seconds from the start to the first window (default 1), for
        # a workload that takes long to start (a thousand forks under icount)
        settle = os.environ.get("INSNPROF_SETTLE_S") or "1"
        lines += ["taskset -p 2 $$ >/dev/null 2>&1 || true",
                  f"{work} >/dev/null &", "PID=$!", f"sleep {settle}"]
        for name, ms, _ in windows:
            lines += [f"echo @@LOGON {name}", f"sleep {int(ms) / 1000}", "echo @@LOGOFF",
                      "sleep 0.5"]
        lines += ["kill $PID", "wait $PID || true"]
    lines.append("echo @@DONE")
    script = os.path.join(outdir, "guest.sh")
    with open(script, "w") as f:
        f.write("\n".join(lines) + "\n")
    cmd = [EEVDF_VM, "--kernel", bz, "--accel", "tcg", "--timeout-s", "1800",
           "--append", "nokaslr", *os.environ.get("INSNPROF_VM_ARGS", "").split(),
           "--qemu-arg=-monitor", f"--qemu-arg=unix:{sock},server=on,wait=off",
           script]
    print("+", " ".join(cmd), flush=True)
    env = dict(os.environ)
    # QEMU line-buffers its log (one write(2) per logged TB): make it fully buffered.
    env["LD_PRELOAD"] = os.environ["INSNPROF_SHIM"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, bufsize=1, env=env)
    mon = Monitor(sock)
    connected = False
    con = open(os.path.join(outdir, "console.txt"), "w")
    for line in p.stdout:
        con.write(line)
        con.flush()
        sys.stdout.write(line)
        sys.stdout.flush()
        if not connected:
            mon.connect()
            connected = True
        t = line.strip()
        if t.startswith("@@LOGON "):
            name = t.split()[1]
            mon.cmd("logfile " + os.path.join(outdir, name + ".log"))
            mon.cmd("log in_asm,exec,nochain")
        elif t == "@@LOGOFF":
            mon.cmd("log none")
    rc = p.wait()
    print("eevdf-vm exit", rc, flush=True)
    sys.exit(rc)


if __name__ == "__main__":
    main()
