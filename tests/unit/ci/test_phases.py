"""`.ci/phases.py`, the runner of `make test`'s phases: order, teardown, counts and the closing table."""

import importlib.util
import os
import subprocess
import sys

import pytest

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "..", ".ci", "phases.py")


def load():
    spec = importlib.util.spec_from_file_location("phases", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(tmp_path, *phases):
    proc = subprocess.run([sys.executable, SCRIPT, str(tmp_path / "logs"), *phases], capture_output=True, text=True, timeout=60, check=False)
    table = proc.stdout[proc.stdout.index(">>> phases of this run") :].splitlines()[1:]
    rows = {line.split()[0]: line for line in table if line.strip()}
    return proc, rows


@pytest.mark.parametrize(
    ("spec", "name", "command", "after", "always"),
    [
        ("unit=make unit", "unit", "make unit", [], False),
        ("lint=make lint@unit", "lint", "make lint", ["unit"], False),
        ("down=make down@up,smoke!", "down", "make down", ["up", "smoke"], True),
    ],
)
def test_phase_spec(spec, name, command, after, always):
    phase = load().Phase(spec)
    assert (phase.name, phase.command, phase.after, phase.always) == (name, command, after, always)


def test_a_failed_phase_stops_what_needs_it_but_not_teardown_or_other_lanes(tmp_path):
    proc, rows = run(
        tmp_path,
        "up=echo up",
        "smoke=echo '==== 2 passed, 1 deselected in 0.50s ===='; exit 3@up",
        "after-smoke=echo never@smoke",
        "checks=echo '== 5 passed in 1.00s =='",
        "down=echo down@up,smoke,after-smoke!",
    )
    assert proc.returncode == 1, proc.stdout
    assert "FAILED (3)" in rows["smoke"] and "2 passed, 1 deselected" in rows["smoke"]
    assert "not run" in rows["after-smoke"]
    assert "passed" in rows["down"] and "passed" in rows["checks"] and "5 passed" in rows["checks"]
    assert "never" not in proc.stdout
    assert ">>> failed or not run: smoke, after-smoke" in proc.stdout
    # Each phase's output is printed whole, with its log kept.
    assert (tmp_path / "logs" / "down.log").read_text() == "down\n"


def test_independent_phases_run_at_once(tmp_path):
    proc, rows = run(tmp_path, "a=sleep 1", "b=sleep 1", "c=true@a,b")
    assert proc.returncode == 0, proc.stdout
    # Both start in the runner's first round, before either ends; c only after both.
    started = proc.stdout.index(">>> phase a started"), proc.stdout.index(">>> phase b started")
    assert max(started) < proc.stdout.index(">>> phase a passed") and max(started) < proc.stdout.index(">>> phase b passed")
    assert proc.stdout.index(">>> phase c started") > max(proc.stdout.index(">>> phase a passed"), proc.stdout.index(">>> phase b passed"))


def test_molecule_scenarios_are_counted(tmp_path):
    log = tmp_path / "molecule.log"
    log.write_text(">>> molecule scenario default passed in 4 s\n>>> molecule scenario scc_relax passed in 40 s\n")
    assert load().counts(str(log)) == "2 scenarios passed"


def test_unknown_prerequisite_is_refused(tmp_path):
    proc = subprocess.run([sys.executable, SCRIPT, str(tmp_path), "a=true@nope"], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode != 0 and "unknown phases ['nope']" in proc.stderr


def makefile_list(name):
    text = open(os.path.join(os.path.dirname(SCRIPT), "..", "Makefile"), encoding="utf-8").read()
    (line,) = [line for line in text.splitlines() if line.startswith(name + " ")]
    return line.split("=", 1)[1].split()


def test_every_molecule_scenario_runs_in_make_test_and_make_molecule():
    """`make test` runs the scenarios in two lanes; a scenario directory missing from them would never run."""
    root = os.path.join(os.path.dirname(SCRIPT), "..", "molecule")
    scenarios = sorted(d for d in os.listdir(root) if os.path.isfile(os.path.join(root, d, "molecule.yml")))
    lanes = makefile_list("MOLECULE_LANE_A") + makefile_list("MOLECULE_LANE_B")
    assert sorted(lanes) == scenarios and len(lanes) == len(set(lanes))
    assert sorted(makefile_list("MOLECULE_SCENARIOS")) == scenarios
    # The preflight comes first in its lane and in `make molecule`.
    assert makefile_list("MOLECULE_LANE_A")[0] == makefile_list("MOLECULE_SCENARIOS")[0] == "default"


def test_the_run_ends_with_the_machines_speed_and_load(tmp_path):
    proc, _rows = run(tmp_path, "a=true")
    lines = proc.stdout[proc.stdout.index(">>> this machine") :].splitlines()
    assert lines[1].startswith("  at the start: ") and lines[2].startswith("  at the end: ") and "x the reference machine's speed" in lines[1]
    assert lines[3].startswith("  load average during the run") and f"on {os.cpu_count()} CPUs" in lines[3]


@pytest.mark.parametrize(("cpu", "ratio"), [(0.18, "1.00x"), (0.36, "0.50x"), (0.09, "2.00x")])
def test_speed_is_the_reference_time_over_this_machines(cpu, ratio):
    phases = load()
    line = phases.speed_line("at the start", (cpu * phases.REFERENCE_CPU_SECONDS / 0.18, 1.0))
    assert line.startswith(f"  at the start: {ratio} the reference machine's speed"), line
