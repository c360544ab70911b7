"""Run `make test`'s phases as a small dependency graph, in parallel where they are independent, and report them.

Usage: python .ci/phases.py LOG_DIR PHASE...   where PHASE is NAME=COMMAND[@AFTER[,AFTER...]][!]

Each phase runs COMMAND (through bash) once every phase named in AFTER has passed; a trailing ``!`` makes it run
once those have ended, passed or not (teardown). Its output goes to LOG_DIR/NAME.log and is printed whole when it
ends, so the lanes' outputs never interleave. A phase whose prerequisite failed is not run. The run ends with a table
of every phase: when it started, how long it took, its result and the tests its pytest or molecule runs counted, and
how fast the machine was (a fixed CPU benchmark at the start and at the end against the reference machine's time, and
the load average during the run), so that a slow run explains itself. The exit status is 1 when any phase failed or
did not run.
"""

import hashlib
import os
import re
import signal
import subprocess
import sys
import time

# pytest's closing line ("= 12 passed, 1 deselected in 3.2s =") and molecule's per-scenario line in our Makefile.
PYTEST_SUMMARY = re.compile(r"^=+ (.*\b(?:passed|failed|error|errors)\b.*) in [0-9.]+s(?: \([0-9:]+\))? =+$")
MOLECULE_PASSED = re.compile(r"^>>> molecule scenario \S+ passed")


# The CPU seconds the benchmark below took on the reference machine (the 2-core development machine, quiet, best of 5,
# 2026-11-29). Warm `make test` took 1,541 s there.
REFERENCE_CPU_SECONDS = 0.18
LOAD_SAMPLE_SECONDS = 10


def cpu_benchmark(rounds=3):
    """The best of ``rounds`` runs of a fixed piece of work (integer arithmetic and SHA-256 of 64 MiB) as
    ``(CPU seconds, wall seconds)``: CPU seconds tell the core's speed, wall seconds beside them what other processes
    took from it."""
    best = None
    for _round in range(rounds):
        cpu, wall = time.process_time(), time.perf_counter()
        total = 0
        for i in range(2_000_000):
            total += i * i % 7
        digest = hashlib.sha256()
        block = b"k" * (1 << 20)
        for _block in range(64):
            digest.update(block)
        measured = (time.process_time() - cpu, time.perf_counter() - wall)
        best = measured if best is None or measured[0] < best[0] else best
    return best


def speed_line(label, measured):
    cpu, wall = measured
    work = f"fixed work: {cpu:.2f} s of CPU, {wall:.2f} s wall; reference {REFERENCE_CPU_SECONDS:.2f} s"
    return f"  {label}: {REFERENCE_CPU_SECONDS / cpu:.2f}x the reference machine's speed ({work})"


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
    speed_at_start = cpu_benchmark()
    origin = time.monotonic()
    loads, next_load = [], origin

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
        if time.monotonic() >= next_load:
            loads.append(os.getloadavg()[0])
            next_load += LOAD_SAMPLE_SECONDS
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
    print(">>> this machine")
    print(speed_line("at the start", speed_at_start))
    print(speed_line("at the end", cpu_benchmark()))
    mean = sum(loads) / len(loads)
    print(f"  load average during the run (1 min, every {LOAD_SAMPLE_SECONDS} s): mean {mean:.1f}, max {max(loads):.1f} on {os.cpu_count()} CPUs")
    failed = [p.name for p in phases if p.result != "passed"]
    if failed:
        print(f">>> failed or not run: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
