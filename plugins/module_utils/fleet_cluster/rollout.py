# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cluster glue of the fleet_rollout module: one cluster's turn in a fleet rollout.

Read what runs and the cluster's rollout record, decide (``fleet.rollout.next_step``), then - for a cluster whose
turn it is - record ``in_progress``, make the change through the layer of the module that owns it, pass the health
gate (``fleet.gate``, fed by one watch of the owner, the Deployments and their pods), and record the outcome. A
failure is diagnosed (olm_diagnose's checks), rolled back where ``on_failure`` asks and the kind allows, recorded with
its cause, and raised. Every outcome, also a refusal or an unreachable API server, becomes this cluster's row of the
fleet report when ``report_dir`` is set. Check mode reads and decides only: the plan, and no write anywhere.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import InvalidInputError, KubeforgeError, api_error_status, excerpt
from ansible_collections.kubeforge.operators.plugins.module_utils.fleet import gate as fleet_gate
from ansible_collections.kubeforge.operators.plugins.module_utils.fleet import record as rec
from ansible_collections.kubeforge.operators.plugins.module_utils.fleet import report as report_core
from ansible_collections.kubeforge.operators.plugins.module_utils.fleet import rollout as core
from ansible_collections.kubeforge.operators.plugins.module_utils.fleet_cluster import report as report_files
from ansible_collections.kubeforge.operators.plugins.module_utils.fleet_cluster.targets import TargetError, target_class
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.clock import Deadline, monotonic
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.cluster import Cluster, retry_guarded
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import K8sError, ResourceTimeoutError
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.objects import create_object, patch_object
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.observe import Source, observe, transient_error
from ansible_collections.kubeforge.operators.plugins.module_utils.kubetime import format_time

# The record's cause (the failing step's message) and olm_diagnose's summary, each bounded.
CAUSE_MAX = 1000
DIAGNOSIS_MAX = 1500


class FleetError(KubeforgeError):
    """This cluster's turn failed, was refused or could not start; the message says which cluster and why."""


class GateFailed(KubeforgeError):
    """The health gate failed; the message says what was not healthy."""


def unreachable(exc):
    """True for an error with no HTTP answer at all: the API server is down or unreachable (not a refusal)."""
    return api_error_status(exc) is None and transient_error(exc)


# ------------------------------------------------------------------------------------------------ the record


class RecordStore:
    """The rollout record of one operator (or DaemonSet) on this cluster: a ConfigMap, written guarded."""

    def __init__(self, cluster, namespace, name):
        self.cluster, self.namespace, self.name = cluster, namespace, name
        self.object = None

    def read(self):
        self.object = self.cluster.get("ConfigMap", self.name, self.namespace)
        return rec.decode(self.object)

    def write(self, record):
        """Write ``record``, guarded by the resourceVersion read last (a concurrent writer makes it read again)."""

        def attempt():
            wanted = rec.configmap(self.namespace, self.name, record)
            if self.object is None:
                try:
                    result = create_object(self.cluster.client, self.cluster.resource("ConfigMap"), wanted)
                except K8sError as exc:
                    if exc.status == 409:
                        self.read()
                    raise
                if not result.changed:  # it exists (made since we read): read it, and write over it guarded
                    self.read()
                    raise K8sError(f"ConfigMap {self.namespace}/{self.name} appeared meanwhile", status=409)
                self.object = result.after
                return
            patch = {
                "metadata": {
                    "resourceVersion": self.object["metadata"]["resourceVersion"],
                    "labels": wanted["metadata"]["labels"],
                    "annotations": wanted["metadata"]["annotations"],
                },
                "data": wanted["data"],
            }
            try:
                self.object = patch_object(self.cluster.client, self.cluster.resource("ConfigMap"), self.name, patch, self.namespace).after
            except K8sError as exc:
                if exc.status == 409:
                    self.read()
                raise

        retry_guarded(attempt, f"ConfigMap {self.namespace}/{self.name}", error=FleetError)


# --------------------------------------------------------------------------------------------------- the gate


def _only(objects):
    return next(iter((objects or {}).values()), None)


def read_once(client, sources):
    """The snapshot ``observe`` would start from (``{source key: {name: object}}``), by one LIST per source."""
    cluster = Cluster(client)
    snapshot = {}
    for source in sources:
        selectors = {"field_selector": f"metadata.name={source.name}"} if source.name else {}
        if source.label_selector:
            selectors["label_selector"] = source.label_selector
        items = cluster.list(source.kind, source.namespace, source.api_version, **selectors)
        snapshot[source.key] = {obj["metadata"]["name"]: obj for obj in items}
    return snapshot


def run_gate(client, target, params, namespace, wanted, clock=monotonic):
    """Watch until the gate passes (``wanted``: the version, or the DaemonSet's images); raise ``GateFailed`` when it
    fails or does not pass in time."""
    owner, deployment_names, deployment_source = target.gate_sources()
    sources = [owner, Source("pods", "v1", "Pod", namespace)]
    if deployment_source is not None:
        sources.append(deployment_source)
    elif deployment_names:
        sources.append(Source("deployments", "apps/v1", "Deployment", namespace))
    checks = []
    for index, check in enumerate(params.get("gate_conditions") or []):
        key = f"extra-{index}"
        sources.append(Source(key, check["api_version"], check["kind"], check.get("namespace"), check["name"]))
        checks.append({"key": key, "type": check["type"], "status": check["status"]})
    gate = fleet_gate.Gate(target.kind, wanted, deployment_names, params["soak_seconds"], checks)
    state = fleet_gate.GateState()
    seen = {"message": "nothing observed yet"}

    def on_change(snapshot):
        view = fleet_gate.Snapshot(
            owner=_only(snapshot.get("owner")),
            deployments=snapshot.get("deployments") or {},
            pods=snapshot.get("pods") or {},
            extra={check["key"]: _only(snapshot.get(check["key"])) for check in checks},
        )
        verdict, message = fleet_gate.verdict(gate, view, state, clock())
        seen["message"] = message
        if verdict != fleet_gate.WAITING:
            return verdict, message
        return None

    if not params["soak_seconds"] and not checks:
        # Without a soak, one read usually settles it (the change's own wait saw the owner ready): no watch then.
        decided = on_change(read_once(client, sources))
        if decided is not None and decided[0] == fleet_gate.PASSED:
            return decided[1]
    timeout = params["gate_timeout"] + params["soak_seconds"]
    try:
        verdict, message = observe(client, sources, on_change, timeout, tick=1.0, clock=clock)
    except ResourceTimeoutError:
        raise GateFailed(f"not healthy within {timeout} s: {seen['message']}") from None
    if verdict == fleet_gate.FAILED:
        raise GateFailed(message)
    return message


# ----------------------------------------------------------------------------------------------- the module


class Turn:
    """One run of the module: the decision, the record and the report row."""

    def __init__(self, module):
        self.module = module
        self.p = module.params
        self.timer = Deadline()
        self.kind = self.p["kind"]
        self.target_value = self.p["images"] if self.kind == rec.KIND_DAEMONSET else self.p["version"]
        self.to_text = rec.target_text(self.kind, self.target_value)
        self.rollout_id = rec.check_rollout_id(self.p.get("rollout_id") or rec.rollout_id(self.kind, self.p["name"], self.target_value))
        self.desired = core.Desired(self.kind, self.rollout_id, self.target_value, self.p["acknowledge"], self.p["on_failure"])
        self.wave = self.p.get("wave")
        if self.wave is None and self.p.get("clusters"):
            self.wave = report_core.wave_of(self.p["cluster"], self.p["clusters"], self.p.get("serial"))
        self.target = None
        self.store = None
        self.record = None
        self.current = None
        self.result = {
            "cluster": self.p["cluster"],
            "rollout_id": self.rollout_id,
            "kind": self.kind,
            "name": self.p["name"],
            "to_version": self.to_text,
            "wave": self.wave,
        }

    # -- report ------------------------------------------------------------------------------------------------------

    def report(self, outcome, cause=None, record=None):
        """Put this cluster's row into the fleet report (when report_dir is set) and the result."""
        self.result["result"] = outcome
        if cause:
            self.result["cause"] = excerpt(cause, CAUSE_MAX)
        if not self.p.get("report_dir"):
            return
        row = report_core.row(
            self.p["cluster"],
            self.wave,
            outcome,
            record=record or self.record,
            cause=cause,
            duration=self.timer.elapsed(),
            came_from=(record or self.record or {}).get("from") or self.current,
            to=self.to_text,
        )
        info = {"id": self.rollout_id, "kind": self.kind, "name": self.p["name"], "target": self.to_text}
        clusters = self.p.get("clusters") or [self.p["cluster"]]
        doc, markdown, _changed = report_files.write(self.p["report_dir"], info, row, clusters, self.p.get("serial"), self.module.check_mode)
        self.result["report"] = {"path": self.p["report_dir"], "halted": doc["halted"], "failed_clusters": doc["failed_clusters"], "counts": doc["counts"]}
        self.result["report_markdown"] = markdown

    def fail(self, outcome, message, changed=False, report_cause=None, **extra):
        self.report(outcome, report_cause or message)
        self.result.update(extra, changed=changed, duration=self.timer.elapsed())
        raise FleetError(f"{self.p['cluster']}: {message}", result=self.result)

    # -- steps -------------------------------------------------------------------------------------------------------

    def observe(self):
        self.target = target_class(self.kind)(self.module, self.p)
        # the plan (check mode) always diagnoses; a turn leaves it to a plan that ran just before, if asked to
        installed, current, offered, problem = self.target.read(diagnose=self.module.check_mode or self.p["preflight_diagnosis"])
        self.current = current
        namespace = self.p.get("record_namespace") or (self.target.record_namespace() if installed else None)
        record = None
        if namespace:
            self.store = RecordStore(Cluster(self.module.client), namespace, rec.record_name(self.kind, self.p["name"]))
            record = self.store.read()
        self.record = record
        self.result.update(from_version=current, record=record, record_namespace=namespace)
        if self.kind == rec.KIND_OLM_V1 and installed:
            self.resolve_range(offered)
        return core.Observed(record, installed, current, offered, problem)

    def resolve_range(self, offered):
        """A version range (OLM v1): the extension gets the range, the gate and the path the newest version offered
        within it."""
        if core.is_version(self.target_value):
            return
        from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1 import version_constraint  # OLM v1 only

        try:
            constraint = version_constraint.Constraint.parse(self.target_value)
        except version_constraint.ConstraintError as exc:
            raise InvalidInputError(f"version {self.target_value} is neither a version nor a range operator-controller takes: {exc}") from None
        resolved = core.resolve_range(offered, constraint.matches)
        if resolved is None:
            raise TargetError(f"no version offered by this cluster's catalogs is in range {self.target_value} (versions: {', '.join(offered or ()) or 'none'})")
        self.desired = self.desired._replace(target=resolved)
        self.to_text = resolved
        self.result["to_version"] = resolved

    def plan(self, action):
        self.result["plan"] = {
            "action": action.kind,
            "message": action.message,
            "current": self.current,
            "target": self.to_text,
            "path": action.path,
            "catalog": self.target.describe_catalog() if self.target else None,
        }
        self.result["path"] = action.path
        self.report(
            report_core.PLANNED if action.kind in (core.START, core.RESUME) else _outcome(action),
            action.message if action.kind in (core.REFUSE, core.BLOCKED) else None,
        )
        self.result["changed"] = action.kind in (core.START, core.RESUME, core.ACKNOWLEDGE)
        self.result["duration"] = self.timer.elapsed()
        return self.result

    def write(self, **changes):
        self.record = rec.updated(self.record, **changes)
        self.store.write(self.record)
        self.result["record"] = self.record

    def move(self, action):
        resuming = action.kind == core.RESUME
        now = format_time(time.time())
        if not resuming or not self.record:
            self.record = {}
        self.write(
            rollout=self.rollout_id,
            kind=self.kind,
            name=self.p["name"],
            namespace=self.store.namespace,
            target=self.to_text,
            result=rec.IN_PROGRESS,
            step=rec.STEP_CHANGE,
            wave=self.wave,
            started=self.record.get("started") or now,
            **({} if resuming and self.record.get("from") else {"from": self.current}),
        )
        came_from = self.record.get("from")
        timeout = self.p["wait_timeout"]
        try:
            if action.path:
                self.result["change"] = _brief(self.target.change(self.target_value, timeout))
            self.write(step=rec.STEP_GATE)
            self.result["gate"] = run_gate(self.module.client, self.target, self.p, self.store.namespace, self.desired.target)
        except (KubeforgeError, GateFailed) as exc:
            self.failed(self.record.get("step"), exc, came_from)
        self.write(result=rec.SUCCEEDED, step=rec.STEP_DONE, finished=format_time(time.time()), cause=None)
        self.report(rec.SUCCEEDED)
        self.result.update(changed=True, duration=self.timer.elapsed())
        return self.result

    def failed(self, step, exc, came_from):
        cause = excerpt(str(getattr(exc, "msg", None) or exc), CAUSE_MAX)
        try:
            causes, diagnosis = self.target.diagnose()
        except KubeforgeError as diag_exc:  # the diagnosis is extra: its own failure is noted, not raised
            causes, diagnosis = [], f"olm_diagnose could not read the cluster: {excerpt(str(diag_exc))}"
        decision, detail = core.after_failure(self.desired, came_from)
        rolled_back = None
        if decision == core.ROLLBACK and self.kind == rec.KIND_DAEMONSET and step == rec.STEP_CHANGE:
            # daemonset_canary's own on_failure=rollback put the previous revision's template back
            rolled_back, detail = came_from, f"daemonset_canary rolled it back to {came_from}"
        elif decision == core.ROLLBACK:
            try:
                self.write(step=rec.STEP_ROLLBACK, cause=cause)
                self.target.rollback(detail if self.kind != rec.KIND_DAEMONSET else previous_images(came_from), self.p["wait_timeout"])
                rolled_back = came_from
                detail = f"rolled back to {came_from}"
            except (KubeforgeError, GateFailed) as back_exc:
                detail = f"the rollback to {came_from} failed too: {excerpt(str(getattr(back_exc, 'msg', None) or back_exc))}"
        diagnosis = excerpt(diagnosis, DIAGNOSIS_MAX) if diagnosis else None
        self.write(
            result=rec.FAILED, step=step, cause=cause, causes=causes or None, diagnosis=diagnosis, finished=format_time(time.time()), rolled_back_to=rolled_back
        )
        message = f"rollout {self.rollout_id} failed at step {step}: {cause}" + (f" ({detail})" if detail else "")
        self.fail(
            rec.FAILED,
            message + (f"; olm_diagnose: {diagnosis}" if diagnosis else ""),
            causes=causes,
            rolled_back_to=rolled_back,
            diagnosis=diagnosis,
            changed=True,
            report_cause=f"{'/'.join(causes) + ': ' if causes else ''}{cause}",
        )

    def acknowledge(self, action):
        self.write(result=rec.ACKNOWLEDGED, acknowledged=format_time(time.time()))
        self.report(rec.ACKNOWLEDGED, self.record.get("cause"))
        self.result.update(changed=True, msg=action.message, duration=self.timer.elapsed())
        return self.result


def previous_images(came_from):
    """A DaemonSet's images before the rollout, from the record's ``from`` text (``container=image,...``)."""
    pairs = [item.split("=", 1) for item in (came_from or "").split(",") if "=" in item]
    return dict(pairs) or None


def _outcome(action):
    return {core.SKIP: report_core.SKIPPED, core.REFUSE: report_core.HALTED, core.BLOCKED: report_core.BLOCKED, core.ACKNOWLEDGE: rec.ACKNOWLEDGED}.get(
        action.kind, action.kind
    )


def _brief(result):
    """What the result of the change step shows of itself (versions and InstallPlans, not whole objects)."""
    keep = ("installed_csv", "version", "phase", "approved_install_plans", "installed_version", "duration")
    return {key: result[key] for key in keep if isinstance(result, dict) and result.get(key) is not None}


def check_params(p):
    if p["kind"] == rec.KIND_DAEMONSET:
        if not p.get("images"):
            raise InvalidInputError("kind=daemonset needs images (container name: new image)")
        if p.get("version"):
            raise InvalidInputError("kind=daemonset moves images, not a version: leave version out")
    elif not p.get("version"):
        raise InvalidInputError(f"kind={p['kind']} needs version (the version to move to)")
    elif p.get("images"):
        raise InvalidInputError(f"kind={p['kind']} moves a version: images is only for kind=daemonset")
    if p["kind"] in (rec.KIND_OLM_V0, rec.KIND_DAEMONSET) and not p.get("namespace"):
        raise InvalidInputError(f"kind={p['kind']} needs namespace (the {'Subscription' if p['kind'] == rec.KIND_OLM_V0 else 'DaemonSet'}'s)")
    for option in ("soak_seconds", "gate_timeout", "wait_timeout"):
        if p[option] < 0:
            raise InvalidInputError(f"{option} must be 0 or more, not {p[option]}")
    if p.get("clusters") and p["cluster"] not in p["clusters"]:
        raise InvalidInputError(f"cluster {p['cluster']} is not one of clusters ({excerpt(', '.join(p['clusters']))})")


def execute(module):
    """The fleet_rollout module's entry point (``KubeforgeModule.run``)."""
    check_params(module.params)
    turn = Turn(module)
    try:
        observed = turn.observe()  # first: it resolves an OLM v1 version range into turn.desired
        action = core.next_step(turn.desired, observed)
    except Exception as exc:  # noqa: BLE001 - reported in the fleet report, then raised again (or planned around)
        if unreachable(exc):
            cause = f"the API server is unreachable: {excerpt(str(getattr(exc, 'msg', None) or exc))}"
            if module.check_mode:
                turn.report("unreachable", cause)
                turn.result.update(changed=False, reachable=False, warnings=[f"{turn.p['cluster']}: {cause}"], duration=turn.timer.elapsed())
                return turn.result
            turn.fail("unreachable", cause)
        if isinstance(exc, (TargetError, InvalidInputError, K8sError)):
            turn.fail(report_core.BLOCKED, str(getattr(exc, "msg", None) or exc))
        raise
    turn.result["reachable"] = True
    if module.check_mode:
        return turn.plan(action)
    if action.kind == core.REFUSE:
        turn.fail(report_core.HALTED, action.message)
    if action.kind == core.BLOCKED:
        turn.fail(report_core.BLOCKED, action.message)
    if action.kind == core.SKIP:
        turn.report(report_core.SKIPPED)
        turn.result.update(changed=False, msg=action.message, path=action.path, duration=turn.timer.elapsed())
        return turn.result
    if action.kind == core.ACKNOWLEDGE:
        return turn.acknowledge(action)
    turn.result["path"] = action.path
    return turn.move(action)
