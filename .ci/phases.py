"""Run `make test`'s phases as a small dependency graph, in parallel where they are independent, and report them.

Usage: python .ci/phases.py LOG_DIR PHASE...   where PHASE is NAME=COMMAND[@AFTER[,AFTER...]][!]

Each phase runs COMMAND (through bash) once every phase named in AFTER has passed; a trailing ``!`` makes it run
once those have ended, passed or not (teardown). Its output goes to LOG_DIR/NAME.log and is printed whole when it
ends, so the lanes' outputs never interleave. A phase whose prerequisite failed is not run. The run ends with a table
of every phase: when it started, how long it took, its result and the tests its pytest or molecule runs counted. The
exit status is 1 when any phase failed or did not run.
"""

import os
import re
import signal
import subprocess
import sys
import time

# pytest's closing line ("= 12 passed, 1 deselected in 3.2s =") and molecule's per-scenario line in our Makefile.
PYTEST_SUMMARY = re.compile(r"^=+ (.*\b(?:passed|failed|error|errors)\b.*) in [0-9.]+s(?: \([0-9:]+\))? =+$")
MOLECULE_PASSED = re.compile(r"^>>> molecule scenario \S+ passed")


class Phase:
    def __init__(self, spec):
        name, _sep, rest = spec.partition("=")
        self.always = rest.endswith("!")
        rest = rest.rstrip("!")
        command, _at, after = rest.rpartition("@") if "@" in rest else (rest, "", "")
        self.name, self.command = name, command
        self.after = [a for a in after.split(",") if a]
        self.proc = self.log = self.started = self.ended = None
        self.result = "not run"


def counts(log_path):
    """What the phase's test runners counted, read from its log."""
    found, scenarios = [], 0
    with open(log_path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            line = re.sub(r"\x1b\[[0-9;]*m", "", line.rstrip("\n"))
            match = PYTEST_SUMMARY.match(line)
            if match:
                found.append(match.group(1))
            elif MOLECULE_PASSED.match(line):
                scenarios += 1
    if scenarios:
        found.append(f"{scenarios} scenarios passed")
    return "; ".join(found)


def main(argv):
    log_dir, specs = argv[0], argv[1:]
    os.makedirs(log_dir, exist_ok=True)
    phases = [Phase(spec) for spec in specs]
    by_name = {p.name: p for p in phases}
    for phase in phases:
        unknown = [a for a in phase.after if a not in by_name]
        if unknown:
            sys.exit(f"phases: {phase.name} runs after unknown phases {unknown}")
    origin = time.monotonic()

    def stop_all(signum, _frame):
        for phase in phases:
            if phase.proc and phase.proc.poll() is None:
                os.killpg(phase.proc.pid, signal.SIGTERM)
        sys.exit(128 + signum)

    signal.signal(signal.SIGTERM, stop_all)
    signal.signal(signal.SIGINT, stop_all)

    pending = list(phases)
    running = []
    while pending or running:
        for phase in list(pending):
            before = [by_name[a] for a in phase.after]
            if any(b.result in ("pending", "running") or b in pending for b in before):
                continue
            pending.remove(phase)
            if not phase.always and any(b.result != "passed" for b in before):
                phase.result = "not run"
                print(f">>> phase {phase.name}: not run ({', '.join(b.name for b in before if b.result != 'passed')} did not pass)", flush=True)
                continue
            phase.log = os.path.join(log_dir, phase.name + ".log")
            handle = open(phase.log, "w", encoding="utf-8")  # noqa: SIM115 - closed when the phase ends
            phase.started = time.monotonic()
            phase.proc = subprocess.Popen(
                ["bash", "-c", phase.command], stdout=handle, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
            )
            phase.proc.log_handle = handle
            phase.result = "running"
            running.append(phase)
            print(f">>> phase {phase.name} started at +{phase.started - origin:.0f} s: {phase.command}", flush=True)
        for phase in list(running):
            if phase.proc.poll() is None:
                continue
            running.remove(phase)
            phase.proc.log_handle.close()
            phase.ended = time.monotonic()
            phase.result = "passed" if phase.proc.returncode == 0 else f"FAILED ({phase.proc.returncode})"
            with open(phase.log, encoding="utf-8", errors="replace") as handle:
                text = handle.read()
            print(f"\n{'=' * 30} {phase.name} (log {phase.log}) {'=' * 30}\n{text.rstrip()}", flush=True)
            print(f">>> phase {phase.name} {phase.result} in {phase.ended - phase.started:.0f} s", flush=True)
        time.sleep(0.5)

    total = time.monotonic() - origin
    rows = [("phase", "start", "duration", "result", "tests")]
    for phase in phases:
        if phase.started is None:
            rows.append((phase.name, "-", "-", phase.result, ""))
        else:
            rows.append((phase.name, f"+{phase.started - origin:.0f} s", f"{phase.ended - phase.started:.0f} s", phase.result, counts(phase.log)))
    rows.append(("total (wall)", "", f"{total:.0f} s", "", ""))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    print("\n>>> phases of this run")
    for row in rows:
        print("  " + "  ".join(cell.ljust(widths[i]) if i < 4 else cell for i, cell in enumerate(row)).rstrip())
    failed = [p.name for p in phases if p.result != "passed"]
    if failed:
        print(f">>> failed or not run: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
