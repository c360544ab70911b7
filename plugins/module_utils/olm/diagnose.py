# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Why an OLM v0 install fails, named from what the cluster shows (pure).

``diagnose(snapshot)`` runs a table of checks over one read of a namespace (its Subscriptions, InstallPlans, CSVs,
OperatorGroups, CatalogSources, pods, ReplicaSets and Warning events, and the packageserver's APIService) and
returns ``Finding(cause, message, fix, objects)`` for each known failure it recognises, the cause first in plain
words and then what fixes it. The checks are the failures users meet most (kubectl-operator#36,
operator-sdk#5413/#6831): a resolution OLM cannot satisfy (its ``ConstraintsNotSatisfiable`` message decoded clause
by clause), a CSV no Subscription references, an InstallPlan that also carries other operators, a Subscription that
cannot be resolved and so blocks every other install of the namespace (OLM resolves a namespace as a whole), an
OperatorGroup the CSV's install modes do not allow, pods that Pod Security or an SCC rejects, crash loops, images
that cannot be pulled, a catalog that is not serving, a namespace without an OperatorGroup (where OLM resolves
nothing) and an unavailable packageserver.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
from collections import namedtuple

from ansible_collections.kubeforge.operators.plugins.module_utils import podstatus
from ansible_collections.kubeforge.operators.plugins.module_utils.errors import excerpt
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import installplan as ipl
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.catalog_source import READY, connection_state
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.status import (
    UNPACK_REF_LABEL,
    condition,
    csv_deployment_names,
    is_copied_csv,
    metadata,
    name_of,
    newest_replicasets,
    owned_by,
    spec,
    status,
    stuck_container,
)

Finding = namedtuple("Finding", ["cause", "message", "fix", "objects"])

# snapshot keys: namespace, package (or None), subscriptions, installplans, csvs, operatorgroups, catalogsources (of
# the namespace and of every catalog a Subscription names), pods, replicasets, events (Warning events of the
# namespace), packageserver (the APIService v1.packages.operators.coreos.com, or None when the cluster has none),
# logs (optional: {"<pod>/<container>": the last lines of its log, or NO_LOG + why there is none}, read once by the
# caller for the stuck pods of operator_pods, also for the support tarball), tarball (optional: True when a support
# tarball with those logs is written).
SNAPSHOT_KEYS = ("subscriptions", "installplans", "csvs", "operatorgroups", "catalogsources", "pods", "replicasets", "events")

# ------------------------------------------------------------------------------------ ConstraintsNotSatisfiable

# OLM's resolver (v0.32+, solver/solve.go NotSatisfiable.Error) joins the clauses of an unsatisfiable resolution with
# ", " after this prefix, sorted. Clauses contain ", " themselves (an API's "group: g, version: v", lists of bundle
# ids), so they are split where a known clause starts (CLAUSE_START), not at every comma. Bundle ids are
# <catalog>/<namespace>/<channel>/<csv>; installed CSVs are @existing/<namespace>//<csv>.
CONSTRAINTS_PREFIX = "constraints not satisfiable"
CLAUSE_START = re.compile(
    r"no operators found |subscription \S+ (?:exists|requires)\b|clusterserviceversion \S+ exists |"
    r"bundle \S+ (?:requires|is deprecated)|there can be only one |\S+(?:, \S+)* and \S+ (?:provide|originate from package) |"
    r"\S+ (?:is mandatory|is prohibited|has a dependency|requires at least one of|conflicts with|permits at most)"
)
ID_LIST = re.compile(r"^\S+(?:, \S+)*$")
# The Subscriptions a clause names as the ones OLM cannot satisfy (not "subscription X exists").
UNSATISFIED_SUBSCRIPTION = re.compile(
    r"referenced by subscription (\S+)$|^subscription (\S+) requires |^no operators found matching the criteria of subscription (\S+)$"
)
CLAUSES = (
    (
        r"no operators found from catalog (?P<catalog>\S+) in namespace (?P<ns>\S+) referenced by subscription (?P<sub>\S+)",
        "catalog {ns}/{catalog} of Subscription {sub} cannot be used (it does not exist or is not serving)",
        "create the CatalogSource the Subscription names (source, sourceNamespace), or point the Subscription at one that is READY",
    ),
    (
        r"no operators found in package (?P<package>\S+) in the catalog referenced by subscription (?P<sub>\S+)",
        "the catalog of Subscription {sub} has no package {package}",
        "check the package name and the Subscription's source (olm_operator_info lists what a catalog offers)",
    ),
    (
        r"no operators found in channel (?P<channel>\S+) of package (?P<package>\S+) in the catalog referenced by subscription (?P<sub>\S+)",
        "package {package} has no channel {channel} in the catalog of Subscription {sub}",
        "subscribe to a channel the package has (olm_operator_info lists them)",
    ),
    (
        r"no operators found with name (?P<csv>\S+) in channel (?P<channel>\S+) of package (?P<package>\S+) "
        r"in the catalog referenced by subscription (?P<sub>\S+)",
        "the starting CSV {csv} of Subscription {sub} is not in channel {channel} of package {package}",
        "set a version (startingCSV) the channel lists, or none",
    ),
    (
        r"no operators found matching the criteria of subscription (?P<sub>\S+)",
        "no catalog offers anything that matches Subscription {sub}",
        "check the Subscription's package, channel, starting CSV and catalog",
    ),
    (
        r"clusterserviceversion (?P<csv>\S+) exists and is not referenced by a subscription",
        "CSV {csv} is installed but no Subscription references it (an orphan, left by an earlier install or a deleted Subscription)",
        "delete the orphaned CSV {csv}, or recreate the Subscription that installed it; OLM resolves the namespace as a whole",
    ),
    (r"subscription (?P<sub>\S+) exists", "Subscription {sub} is part of the resolution", ""),
    (
        r"subscription (?P<sub>\S+) requires at least one of (?P<ids>.+) or (?P<last>\S+)",
        "Subscription {sub} can only be met by {ids} or {last}, and none of them fits with the rest",
        "",
    ),
    (r"subscription (?P<sub>\S+) requires (?P<ids>\S+)", "Subscription {sub} can only be met by {ids}", ""),
    (
        r"bundle (?P<bundle>\S+) requires an operator providing an API with group: (?P<group>[^,]*), version: (?P<version>[^,]*), kind: (?P<kind>\S+)",
        "bundle {bundle} needs an operator that provides {kind} ({group}/{version}), and no catalog the namespace can use has one",
        "add a catalog that provides that API, or install the operator that provides it first",
    ),
    (
        r"bundle (?P<bundle>\S+) requires an operator with package: (?P<package>\S+) and with version in range: (?P<range>.+)",
        "bundle {bundle} needs package {package} in version range {range}, and no catalog the namespace can use has it",
        "add a catalog with that package version, or install it first",
    ),
    (
        r"bundle (?P<bundle>\S+) requires an operator (?P<what>.+)",
        "bundle {bundle} needs an operator {what}, and no catalog the namespace can use has one",
        "add a catalog that provides it",
    ),
    (r"bundle (?P<bundle>\S+) is deprecated", "bundle {bundle} is deprecated in its catalog", "pick a version or channel that is not deprecated"),
    (
        r"(?P<ids>.+) and (?P<last>\S+) provide (?P<gvk>.+)",
        "{ids} and {last} all provide {gvk}, and only one operator may provide an API",
        "remove the one that should not stay (often an orphaned CSV, or a second Subscription for the same API)",
    ),
    (
        r"(?P<ids>.+) and (?P<last>\S+) originate from package (?P<package>\S+)",
        "only one operator of package {package} may be installed, and both {ids} and {last} would be",
        "an installed CSV that the Subscription's channel does not upgrade from must go (or subscribe to the catalog and channel it came from)",
    ),
    (r"there can be only one provider of (?P<gvk>.+)", "only one operator may provide {gvk}", ""),
    (r"there can be only one operator from package (?P<package>\S+)", "only one operator of package {package} may be installed", ""),
    (
        r"(?P<a>\S+) conflicts with (?P<b>\S+)",
        "{a} cannot be installed while {b} is",
        "the installed CSV must be upgraded along the channel's graph, or removed first",
    ),
    (r"(?P<what>\S+) requires at least one of (?P<ids>.+)", "{what} can only be met by one of {ids}", ""),
    (r"(?P<what>\S+) permits at most (?P<n>\d+) of (?P<ids>.+)", "{what} allows at most {n} of {ids}, and more are required", ""),
    (r"(?P<what>\S+) is mandatory", "{what} must be part of any solution", ""),
    (r"(?P<what>\S+) is prohibited", "{what} cannot be part of any solution", ""),
    (
        r"(?P<what>\S+) has a dependency without any candidates to satisfy it",
        "nothing any catalog offers satisfies {what}",
        "check the package, channel and catalog",
    ),
)
CLAUSES = tuple((re.compile(f"^{pattern}$"), plain, fix) for pattern, plain, fix in CLAUSES)


def bundle_words(ident):
    """A bundle id in words: ``catalog/ns/channel/csv`` -> ``csv (catalog ns/catalog, channel channel)``,
    ``@existing/ns//csv`` -> ``installed csv``; anything else unchanged."""
    parts = ident.split("/")
    if len(parts) != 4:
        return ident
    catalog, namespace, channel, csv = parts
    if catalog == "@existing":
        return f"installed {csv}"
    return f"{csv} (catalog {namespace}/{catalog}, channel {channel})"


def _words(text):
    return re.sub(r"[^\s,]+/[^\s,]*/[^\s,]*/[^\s,]+", lambda m: bundle_words(m.group(0)), text)


def split_clauses(message):
    """The clauses of a ``ConstraintsNotSatisfiable`` message (see CLAUSE_START)."""
    text = (message or "").strip()
    if text.startswith(CONSTRAINTS_PREFIX):
        text = text[len(CONSTRAINTS_PREFIX) :].lstrip(":").strip()
    parts, start = [], 0
    for comma in re.finditer(", ", text):
        if CLAUSE_START.match(text, comma.end()):
            parts.append(text[start : comma.start()])
            start = comma.end()
    parts.append(text[start:])
    clauses = []
    for part in parts:
        if clauses and ID_LIST.match(clauses[-1]):  # bare ids start a list: "A, B, C and D provide ..."
            clauses[-1] = f"{clauses[-1]}, {part}"
        else:
            clauses.append(part)
    return [clause.strip() for clause in clauses if clause.strip()]


def decode_constraints(message):
    """The clauses of a ``ConstraintsNotSatisfiable`` message in plain words: ``[(plain, fix, clause)]``; a clause no
    pattern knows is kept as OLM wrote it."""
    decoded = []
    for clause in split_clauses(message):
        for pattern, plain, fix in CLAUSES:
            match = pattern.match(clause)
            if match:
                values = {key: _words(value) for key, value in match.groupdict().items()}
                decoded.append((plain.format(**values), fix.format(**values), clause))
                break
        else:
            decoded.append((_words(clause), "", clause))
    return decoded


def _resolution_failures(snap):
    """One finding per distinct resolution failure: OLM writes the same message onto every Subscription of the
    namespace, so it names them all."""
    by_message = {}
    for sub in snap["subscriptions"]:
        cond = condition(sub, "ResolutionFailed") or {}
        if cond.get("status") == "True":
            by_message.setdefault((cond.get("reason"), cond.get("message") or ""), []).append(name_of(sub))
    findings = []
    for (reason, message), names in by_message.items():
        subs = ", ".join(sorted(names))
        objects = [f"Subscription/{name}" for name in sorted(names)]
        if reason == "ConstraintsNotSatisfiable":
            clauses = decode_constraints(message)
            plain = "; ".join(p for p, _f, _c in clauses if not p.endswith("is part of the resolution")) or message
            fixes = "; ".join(dict.fromkeys(f for _p, f, _c in clauses if f)) or "see the clauses"
            findings.append(Finding("ConstraintsNotSatisfiable", f"OLM cannot resolve the namespace (Subscriptions {subs}): {plain}", fixes, objects))
        else:
            findings.append(
                Finding(
                    reason or "ResolutionFailed",
                    f"OLM cannot resolve Subscriptions {subs}: {message}".rstrip(": "),
                    "OLM retries this resolution; check the catalogs and the packageserver",
                    objects,
                )
            )
    return findings


def _blocking_subscriptions(snap):
    """OLM resolves a namespace as a whole: one Subscription it cannot resolve fails every other one with it. OLM
    writes the failure onto every Subscription, so the blockers are the ones its clauses name, other than ours."""
    package = snap.get("package")
    ours = {name_of(s) for s in snap["subscriptions"] if spec(s).get("name") == package}
    if not package or not ours:
        return []
    named = set()
    for sub in snap["subscriptions"]:
        cond = condition(sub, "ResolutionFailed") or {}
        if cond.get("status") == "True" and cond.get("reason") == "ConstraintsNotSatisfiable":
            for clause in split_clauses(cond.get("message")):
                match = UNSATISFIED_SUBSCRIPTION.search(clause)
                if match:
                    named.add(next(g for g in match.groups() if g))
    failed = [s for s in snap["subscriptions"] if name_of(s) in named - ours]
    if not failed or named & ours:
        return []
    names = ", ".join(sorted(name_of(s) for s in failed))
    return [
        Finding(
            "UnresolvableSubscriptionInNamespace",
            f"Subscription(s) {names} in namespace {snap['namespace']} cannot be resolved; OLM resolves a namespace as a whole, so "
            f"package {package} cannot be installed or upgraded there either",
            f"fix or delete {names} (and any CSV it left), then OLM resolves {package} again",
            [f"Subscription/{name_of(s)}" for s in failed],
        )
    ]


# ------------------------------------------------------------------------------------------------ CSVs


def _referenced_csvs(snap):
    names = set()
    for sub in snap["subscriptions"]:
        names.update(n for n in (status(sub).get("installedCSV"), status(sub).get("currentCSV")) if n)
    return names


def _orphaned_csvs(snap):
    referenced = _referenced_csvs(snap)
    # The CSV an upgrade replaces stays (phase Replacing, then Deleting) until the new one succeeds.
    replaced = {spec(c).get("replaces") for c in snap["csvs"] if name_of(c) in referenced}
    findings = []
    for csv in snap["csvs"]:
        if is_copied_csv(csv) or name_of(csv) in referenced | replaced or status(csv).get("phase") in ("Replacing", "Deleting"):
            continue
        name = name_of(csv)
        findings.append(
            Finding(
                "OrphanedCSV",
                f"CSV {name} is installed in namespace {snap['namespace']} but no Subscription references it; OLM counts it in every "
                "resolution of the namespace (ConstraintsNotSatisfiable: exists and is not referenced by a subscription)",
                f"delete CSV {name} if its operator should go, or create a Subscription for its package",
                [f"ClusterServiceVersion/{name}"],
            )
        )
    return findings


# OLM's reasons for a CSV its OperatorGroup does not allow (olm: pkg/api/apis/operators/v1alpha1 CSV reasons).
INSTALL_MODE_REASONS = {
    "UnsupportedOperatorGroup": "the namespace's OperatorGroup targets namespaces in a way the CSV's install modes do not support",
    "NoOperatorGroup": "the namespace has no OperatorGroup",
    "TooManyOperatorGroups": "the namespace has more than one OperatorGroup",
    "InterOperatorGroupOwnerConflict": "another OperatorGroup already owns an API this operator provides",
}


def _install_mode_mismatch(snap):
    findings = []
    groups = snap["operatorgroups"]
    targets = ", ".join(f"{name_of(g)} targets {status(g).get('namespaces') or spec(g).get('targetNamespaces') or ['all namespaces']}" for g in groups)
    for csv in snap["csvs"]:
        reason = status(csv).get("reason")
        if is_copied_csv(csv) or reason not in INSTALL_MODE_REASONS:
            continue
        modes = ", ".join(m.get("type") for m in spec(csv).get("installModes") or [] if m.get("supported")) or "none"
        findings.append(
            Finding(
                "InstallModeMismatch",
                f"CSV {name_of(csv)} ({reason}): {INSTALL_MODE_REASONS[reason]}; supported install modes: {modes}; OperatorGroups: {targets or 'none'}",
                "make the namespace have exactly one OperatorGroup whose targetNamespaces fit a supported install mode "
                "(olm_operator creates one when there is none)",
                [f"ClusterServiceVersion/{name_of(csv)}"] + [f"OperatorGroup/{name_of(g)}" for g in groups],
            )
        )
    return findings


def _no_operator_group(snap):
    """Without an OperatorGroup OLM resolves nothing in the namespace: its Subscriptions get no status at all."""
    if snap["operatorgroups"] or not snap["subscriptions"]:
        return []
    names = ", ".join(sorted(name_of(s) for s in snap["subscriptions"]))
    return [
        Finding(
            "NoOperatorGroup",
            f"namespace {snap['namespace']} has no OperatorGroup, so OLM resolves none of its Subscriptions ({names})",
            "create one OperatorGroup (olm_operator creates one fitting the operator's install modes when there is none)",
            [f"Subscription/{name_of(s)}" for s in sorted(snap["subscriptions"], key=name_of)],
        )
    ]


def _failed_csvs(snap):
    findings = []
    for csv in snap["csvs"]:
        st = status(csv)
        if is_copied_csv(csv) or st.get("phase") != "Failed" or st.get("reason") in INSTALL_MODE_REASONS:
            continue
        findings.append(
            Finding(
                "CSVFailed",
                f"CSV {name_of(csv)} failed ({st.get('reason')}): {st.get('message') or ''}".rstrip(": "),
                "see the pod and event findings; OLM moves the CSV back to Pending once the cause is fixed",
                [f"ClusterServiceVersion/{name_of(csv)}"],
            )
        )
    return findings


# ------------------------------------------------------------------------------------------ InstallPlans


def _shared_install_plans(snap):
    """An InstallPlan waiting for approval that carries the CSVs of more than one operator (dependencies that come
    with a new Subscription of the plan do not count)."""
    findings = []
    for plan in snap["installplans"]:
        if not ipl.requires_approval(plan):
            continue
        csvs = ipl.plan_csvs(plan)
        dependencies = ipl.new_subscription_csvs(plan)
        operators = [c for c in csvs if c not in dependencies]
        if len(operators) < 2:
            continue
        owners = sorted(name_of(s) for s in snap["subscriptions"] if (status(s).get("installPlanRef") or {}).get("name") == name_of(plan))
        findings.append(
            Finding(
                "InstallPlanCarriesOtherOperators",
                f"InstallPlan {name_of(plan)} waits for approval and carries {', '.join(operators)} (Subscriptions pointing at it: "
                f"{', '.join(owners) or 'none'}): approving it installs or upgrades all of them, since OLM plans a namespace at once",
                "approve it only if every CSV in it is wanted; to keep one operator back, give it a namespace of its own",
                [f"InstallPlan/{name_of(plan)}"],
            )
        )
    return findings


# ------------------------------------------------------------------------------------------------- pods

POD_SECURITY = re.compile(r"violates PodSecurity")
SCC = re.compile(r"unable to validate against any security context constraint")
# What a log text of the snapshot starts with when the kubelet gave none (olm_cluster/diagnose.py pod_logs).
NO_LOG = "(no log: "
# A crash loop's finding quotes the last lines of the container's log, this many, each cut to LOG_LINE_CHARS.
FINDING_LOG_LINES = 5
LOG_LINE_CHARS = 200
REQUEST_PREFIX = re.compile(r'^Get "[^"]*": ')


def admission_rejections(snap):
    """ReplicaSets (and Warning events) whose pods admission refused: Pod Security Admission or an SCC."""
    findings = []
    seen = set()
    messages = []
    for rs in snap["replicasets"]:
        cond = condition(rs, "ReplicaFailure") or {}
        if cond.get("status") == "True":
            messages.append((f"ReplicaSet/{name_of(rs)}", cond.get("message") or ""))
    for event in snap["events"]:
        involved = event.get("involvedObject") or {}
        messages.append((f"{involved.get('kind')}/{involved.get('name')}", event.get("message") or ""))
    for obj, message in messages:
        if POD_SECURITY.search(message) and ("PodSecurity", obj) not in seen:
            seen.add(("PodSecurity", obj))
            findings.append(
                Finding(
                    "PodSecurityRejected",
                    f"{obj}: Pod Security Admission rejects the operator's pods: {message}",
                    f"label namespace {snap['namespace']} with the Pod Security level the operator needs "
                    "(kubeforge.operators.pod_security, or the scc_relax role), or get an operator whose pods meet 'restricted'",
                    [obj],
                )
            )
        elif SCC.search(message) and ("SCC", obj) not in seen:
            seen.add(("SCC", obj))
            findings.append(
                Finding(
                    "SCCRejected",
                    f"{obj}: no SecurityContextConstraints admits the operator's pods: {message}",
                    "grant the operator's service account the SCC it needs (kubeforge.operators.scc_access or the scc_relax role)",
                    [obj],
                )
            )
    return findings


def operator_pods(snap):
    """Pods of the operator's Deployments (their newest ReplicaSets) - the CSVs' (OLM v0), or those a
    ClusterExtension installed (``workload_deployments``, OLM v1) - and OLM v0's bundle unpack and registry pods."""
    deployments = set(snap.get("workload_deployments") or ())
    for csv in snap.get("csvs") or ():
        if not is_copied_csv(csv):
            deployments.update(csv_deployment_names(csv))
    sets = {name_of(rs) for rs in newest_replicasets(snap["replicasets"], deployments)}
    pods = []
    for pod in snap["pods"]:
        labels = metadata(pod).get("labels") or {}
        if owned_by(pod, "ReplicaSet", sets) or UNPACK_REF_LABEL in labels or "olm.catalogSource" in labels:
            pods.append(pod)
    return pods


def container_image(pod, container):
    """The image of the container ``container`` (a status) as the pod's spec names it (the status may show a
    resolved digest instead)."""
    for item in (spec(pod).get("initContainers") or []) + (spec(pod).get("containers") or []):
        if item.get("name") == container.get("name") and item.get("image"):
            return item["image"]
    return container.get("image") or "(unknown image)"


def last_log_lines(text, lines=FINDING_LOG_LINES):
    """The last ``lines`` non-empty lines of a log text, each cut to LOG_LINE_CHARS, joined with `` | ``."""
    kept = [line.rstrip() for line in (text or "").splitlines() if line.strip()][-lines:]
    return " | ".join(excerpt(line, LOG_LINE_CHARS) for line in kept)


def log_words(snap, pod, container):
    """What the crash loop's finding says of the container's log: its last lines, or briefly why there are none."""
    logs = snap.get("logs")
    if logs is None:
        return "its log was not read"
    text = logs.get(f"{name_of(pod)}/{container.get('name')}")
    if text is None:
        return "its log was not read"
    if text.startswith(NO_LOG):
        why = text[len(NO_LOG) :].strip()
        why = REQUEST_PREFIX.sub("", why[:-1] if why.endswith(")") else why)  # the API server's request to the node says little
        return f"no log to be had ({excerpt(why, 120)})"
    quoted = last_log_lines(text)
    return f"last log lines: {quoted}" if quoted else "its log is empty"


def _where_the_log_is(snap, pod, container):
    command = f"kubectl logs --previous -n {metadata(pod).get('namespace') or snap.get('namespace')} {name_of(pod)} -c {container.get('name')}"
    if snap.get("tarball"):
        return f"{command}; the support tarball holds its last lines"
    return f"{command}; olm_diagnose with dest writes its last lines into a support tarball"


def pod_is_stuck(pod, now=None):
    """Whether ``pod`` has a stuck container as the diagnosis counts it (``stuck_pods``; ``now``: the read's time)."""
    return stuck_container(pod, wait_for_backoff=False, now=now)[0] is not None


def stuck_pods(snap):
    """A finding per stuck operator pod (podstatus's one table: an image pull failure whichever of its reasons the
    kubelet shows at the moment, a crash loop from CRASH_LOOP_MIN_RESTARTS restarts, a container that cannot be
    created), naming the container, its image, and for a crash loop the last exit and log lines."""
    findings = []
    for pod in operator_pods(snap):
        container, waiting = stuck_container(pod, wait_for_backoff=False, now=snap.get("now"))
        if container is None:
            continue
        reason, message = waiting.get("reason"), waiting.get("message") or ""
        kind = podstatus.kind_of(reason)
        name = f"Pod/{name_of(pod)}"
        image = container_image(pod, container)
        where = f"pod {name_of(pod)} container {container.get('name')}"
        restarts = container.get("restartCount") or 0
        if kind == podstatus.IMAGE_PULL:
            findings.append(
                Finding(
                    "ImagePullFailed",
                    f"{where} cannot pull image {image} ({reason}{': ' + message if message else ''})",
                    f"make the image pullable from the cluster ({image}): check the name and tag, the pull secret, and on a "
                    "disconnected cluster an ImageDigestMirrorSet / ImageContentSourcePolicy that covers its registry",
                    [name],
                )
            )
        elif kind == podstatus.CRASH_LOOP:
            exited = podstatus.describe_exit(podstatus.last_termination(container))
            findings.append(
                Finding(
                    "CrashLoop",
                    f"{where} (image {image}) is CrashLoopBackOff (restarts: {restarts}): "
                    f"{'last ' + exited if exited else 'no exit code recorded'}; {log_words(snap, pod, container)}",
                    f"read the container's log ({_where_the_log_is(snap, pod, container)}): the operator itself fails, often for missing "
                    "permissions, CRDs or configuration; exit code 137 (OOMKilled) means its memory limit is too low",
                    [name],
                )
            )
        else:
            findings.append(
                Finding(
                    reason or "PodStuck",
                    f"{where} (image {image}) is {reason} (restarts: {restarts}){': ' + message if message else ''}",
                    "see the pod's events",
                    [name],
                )
            )
    return findings


# ------------------------------------------------------------------------------------------ catalogs, API


def _catalogs_not_serving(snap):
    findings = []
    for source in snap["catalogsources"]:
        state = connection_state(source)
        if state == READY:
            continue
        where = f"{metadata(source).get('namespace')}/{name_of(source)}"
        st = status(source)
        detail = "; ".join(p for p in (st.get("reason"), st.get("message")) if p)
        findings.append(
            Finding(
                "CatalogNotServing",
                f"CatalogSource {where} is not serving (state {state or 'not reported yet'}{': ' + detail if detail else ''})",
                "for an image catalog check its registry pod (image pull, crash loop, extractContent for images without an "
                "entrypoint); for an address, that a gRPC registry answers there from OLM's pods",
                [f"CatalogSource/{where}"],
            )
        )
    return findings


def _packageserver(snap):
    api = snap.get("packageserver")
    if api is None:
        return []
    cond = condition(api, "Available") or {}
    if cond.get("status") == "True":
        return []
    return [
        Finding(
            "PackageServerUnavailable",
            f"the packageserver (APIService {name_of(api)}) is not available ({cond.get('reason')}: {cond.get('message') or ''})",
            "check the packageserver pods in OLM's namespace; without it PackageManifests (the catalog contents) cannot be read",
            [f"APIService/{name_of(api)}"],
        )
    ]


def _unpack_failures(snap):
    findings = []
    for sub in snap["subscriptions"]:
        cond = condition(sub, "BundleUnpackFailed") or {}
        if cond.get("status") == "True":
            findings.append(
                Finding(
                    "BundleUnpackFailed",
                    f"Subscription {name_of(sub)}: OLM could not unpack the bundle: {cond.get('message') or cond.get('reason')}",
                    "make the bundle image pullable from the cluster; then delete the failed unpack Job so OLM tries again",
                    [f"Subscription/{name_of(sub)}"],
                )
            )
    return findings


def _no_subscription(snap):
    """The package asked about has no Subscription (nor an orphaned CSV) in the namespace: a wrong namespace or name,
    or it was never subscribed - "no known failure" would mislead."""
    package = snap.get("package")
    if not package or any(spec(s).get("name") == package for s in snap["subscriptions"]) or _orphaned_csvs(snap):
        return []
    others = sorted(f"{name_of(s)} (package {spec(s).get('name')})" for s in snap["subscriptions"])
    there = f"its Subscriptions: {', '.join(others)}" if others else "it has no Subscription at all"
    return [
        Finding(
            "NoSubscription",
            f"namespace {snap['namespace']} has no Subscription of package {package} ({there})",
            "check the namespace and the package name (olm_operator_info without a namespace lists every Subscription of the cluster), "
            "or install the operator",
            sorted(f"Subscription/{name_of(s)}" for s in snap["subscriptions"]) or [f"Namespace/{snap['namespace']}"],
        )
    ]


CHECKS = (
    _no_subscription,
    _resolution_failures,
    _blocking_subscriptions,
    _orphaned_csvs,
    _no_operator_group,
    _install_mode_mismatch,
    _failed_csvs,
    _shared_install_plans,
    admission_rejections,
    stuck_pods,
    _unpack_failures,
    _catalogs_not_serving,
    _packageserver,
)


def diagnose(snapshot):
    """Every ``Finding`` of the ``CHECKS`` for ``snapshot`` (missing lists count as empty), in table order."""
    snap = dict(snapshot)
    for key in SNAPSHOT_KEYS:
        snap[key] = list(snap.get(key) or [])
    snap.setdefault("namespace", None)
    findings = []
    for check in CHECKS:
        findings.extend(check(snap))
    return findings


def _true_conditions(obj, wanted="True"):
    return [
        {key: cond.get(key) for key in ("type", "status", "reason", "message")}
        for cond in status(obj).get("conditions") or []
        if isinstance(cond, dict) and cond.get("status") == wanted
    ]


def _created(obj):
    return metadata(obj).get("creationTimestamp") or ""


def event_time(event):
    """When an Event last happened (``lastTimestamp``, ``eventTime`` or its creation), as its RFC 3339 text."""
    return event.get("lastTimestamp") or event.get("eventTime") or metadata(event).get("creationTimestamp") or ""


def overview(snapshot):
    """What OLM shows in the namespace, in brief, from the same read as the findings (pure): the Subscriptions (state,
    CSVs, source, the conditions that are True), InstallPlans (phase, approval, CSVs, the conditions that are False),
    the CSVs that are not copies (phase, reason, message), the CatalogSources read (connection state) and the Warning
    events, oldest first - for a report that shows the namespace beside the causes (the olm_operator role's)."""
    snap = dict(snapshot)
    return {
        "subscriptions": [
            {
                "name": name_of(sub),
                "package": spec(sub).get("name"),
                "source": spec(sub).get("source"),
                "source_namespace": spec(sub).get("sourceNamespace"),
                "channel": spec(sub).get("channel"),
                "approval": spec(sub).get("installPlanApproval") or "Automatic",
                "state": status(sub).get("state"),
                "installed_csv": status(sub).get("installedCSV"),
                "current_csv": status(sub).get("currentCSV"),
                "conditions": _true_conditions(sub),
            }
            for sub in sorted(snap.get("subscriptions") or [], key=name_of)
        ],
        "install_plans": [
            {
                "name": name_of(plan),
                "phase": status(plan).get("phase"),
                "approved": bool(spec(plan).get("approved")),
                "approval": spec(plan).get("approval"),
                "csvs": list(spec(plan).get("clusterServiceVersionNames") or []),
                "conditions": _true_conditions(plan, "False"),
            }
            for plan in sorted(snap.get("installplans") or [], key=_created)
        ],
        "csvs": [
            {"name": name_of(csv), "phase": status(csv).get("phase"), "reason": status(csv).get("reason"), "message": status(csv).get("message")}
            for csv in sorted(snap.get("csvs") or [], key=_created)
            if not is_copied_csv(csv)
        ],
        "catalog_sources": [
            {
                "name": name_of(source),
                "namespace": metadata(source).get("namespace"),
                "state": connection_state(source),
                "address": (status(source).get("connectionState") or {}).get("address") or spec(source).get("address") or spec(source).get("image"),
                "last_connect": (status(source).get("connectionState") or {}).get("lastConnect"),
                "reason": status(source).get("reason"),
                "message": status(source).get("message"),
            }
            for source in snap.get("catalogsources") or []
        ],
        "events": [
            {
                "time": event_time(event),
                "kind": (event.get("involvedObject") or {}).get("kind"),
                "name": (event.get("involvedObject") or {}).get("name"),
                "reason": event.get("reason"),
                "message": event.get("message"),
                "count": event.get("count") or 1,
            }
            for event in sorted(snap.get("events") or [], key=event_time)
        ],
    }


def summary(findings, namespace, package=None, subject=None):
    """The findings as text lines, for the module's result and the support tarball's summary.txt; ``subject`` (for example
    ``ClusterExtension x``) replaces the namespace and package in the headline."""
    what = subject or (f"package {package} in namespace {namespace}" if package else f"namespace {namespace}")
    if not findings:
        return [f"{what}: no known failure found"]
    lines = [f"{what}: {len(findings)} finding(s)"]
    for finding in findings:
        lines.append(f"- {finding.cause}: {finding.message}")
        if finding.fix:
            lines.append(f"  fix: {finding.fix}")
    return lines
