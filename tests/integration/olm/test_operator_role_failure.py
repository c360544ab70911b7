"""The olm_operator role's failure report against the testbed's real OLM v0, for an operator whose pods crash-loop
(kube-crashloop on a KWOK node): it leads with what the module saw when it failed (OLM moves on meanwhile: the
Subscription reaches AtLatestKnown, the InstallPlan Complete), labels what it reads later as read later, says that
pods exist when no Warning event is recorded, and adds only a few seconds to the failure."""

import json
import re
import time

import pytest
from lib.olm_catalog import CATALOG

pytestmark = pytest.mark.testbed

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Install kube-crashloop through the role
      block:
        - name: Run the role
          ansible.builtin.include_role:
            name: kubeforge.operators.olm_operator
          vars:
            olm_operator_kubeconfig: "{{ kubeconfig }}"
            olm_operator_package: kube-crashloop
            olm_operator_namespace: "{{ target_ns }}"
            olm_operator_channel: stable
            olm_operator_catalog: "{{ catalog }}"
            olm_operator_wait_timeout: 180
      rescue:
        - name: Keep the report
          ansible.builtin.copy:
            content: "{{ {'task': ansible_failed_task.name, 'msg': ansible_failed_result.msg} | to_json }}"
            dest: "{{ out }}"
            mode: "0600"
"""

# OLM's moments of an install whose pods crash-loop, from the module's failure to the role's later read.
SUBSCRIPTION_STATES = ("UpgradePending", "AtLatestKnown")


def test_the_report_of_a_crash_loop_leads_with_the_modules_moment(run_playbook, kubeconfig, catalog_ns, tmp_path):
    out = tmp_path / "report.json"
    started = time.monotonic()
    code, output = run_playbook(
        PLAYBOOK,
        {"kubeconfig": kubeconfig, "target_ns": catalog_ns, "catalog": CATALOG, "out": str(out)},
        env={"ANSIBLE_CALLBACKS_ENABLED": "ansible.posix.profile_tasks"},
    )
    elapsed = time.monotonic() - started
    assert code == 0 and out.exists(), output[-3000:]
    report = json.loads(out.read_text())
    assert report["task"] == "Fail with OLM's reason and what the namespace shows", report
    lines = report["msg"].splitlines()
    header = re.match(rf"olm_operator: present of kube-crashloop in namespace {catalog_ns} failed: CrashLoopBackOff after ([0-9.]+) s$", lines[0])
    assert header, lines[0]
    module_seconds = float(header.group(1))

    # what the module saw when it failed comes first, with the pod's problem before OLM's phase
    (moment,) = [i for i, line in enumerate(lines) if line.startswith("When it failed, olm_operator saw:")]
    (later,) = [i for i, line in enumerate(lines) if line.startswith("Read after the failure")]
    block = [lines[moment]]
    for line in lines[moment + 1 :]:
        if not line.startswith(" "):
            break
        block.append(line)
    saw = " ".join(block)
    assert re.search(r"Subscription kube-crashloop state (" + "|".join(SUBSCRIPTION_STATES) + ")", saw), saw
    assert re.search(r"ClusterServiceVersion kube-crashloop\.v0\.1\.0 phase (Installing|InstallReady)", saw), saw
    causes = [i for i, line in enumerate(lines) if line.startswith("Causes (olm_diagnose, read after the failure)")]
    assert moment < later and all(moment < i for i in causes), lines

    # the crash loop is named with its image; the events line does not claim that no pod ran
    assert any(
        re.search(r"CrashLoop: pod kube-crashloop-controller-manager-\S+ container \S+ \(image example\.invalid/kubeforge/crashloop:v1\)", line)
        for line in lines
    ), lines
    (events,) = [i for i, line in enumerate(lines) if line.startswith("Warning events in ")]
    assert "before any pod ran" not in "\n".join(lines[events:]), lines[events:]

    # the report reads the namespace once (olm_diagnose) - no k8s_info per kind - and adds seconds, not half a minute
    # (it took 9 to 18 s on the testbed with six module runs: five k8s_info reads and olm_diagnose)
    tasks = dict(re.findall(r"^(?:kubeforge\.operators\.)?olm_operator : (.+?) -+ ([0-9.]+)s$", output, re.M))
    report = {name: float(seconds) for name, seconds in tasks.items() if name not in ("Install, upgrade or remove the operator",)}
    assert "Read the namespace once and name the cause" in report and not [name for name in report if name.startswith("Read the ")][1:], report
    report_seconds = sum(report.values())
    print(f"olm_operator failed after {module_seconds:.1f} s; the role's other tasks took {report_seconds:.1f} s; the playbook {elapsed:.1f} s")
    assert report_seconds < 12, report
