"""The packages of plugins/module_utils import one another in layers (docs/developing.md, "Layout"): read from the
source, no two packages import each other, directly or through others, and the pure cores import no cluster layer
and nothing of Ansible."""

import ast
from pathlib import Path

import pytest

MODULE_UTILS = Path(__file__).resolve().parents[4] / "plugins" / "module_utils"
PREFIX = "ansible_collections.kubeforge.operators.plugins.module_utils."
# The pure cores: no Ansible, no kubernetes client, no cluster layer.
PURE = ("canary", "fbc", "fleet", "migration", "olm", "olmv1", "reconcile", "scc")


def package_of(path):
    relative = path.relative_to(MODULE_UTILS)
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def imported_modules(path):
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module:
            yield node.module
        elif isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)


def package_edges():
    """``{package: {packages it imports}}``."""
    edges = {}
    for path in MODULE_UTILS.rglob("*.py"):
        source = package_of(path)
        targets = edges.setdefault(source, set())
        for name in imported_modules(path):
            if name.startswith(PREFIX):
                target = name[len(PREFIX) :].split(".")[0]
                if target != source:
                    targets.add(target)
    return edges


def reaches(edges, start, goal):
    seen, todo = set(), [start]
    while todo:
        for nxt in edges.get(todo.pop(), ()):
            if nxt == goal:
                return True
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return False


def test_no_two_packages_import_each_other():
    edges = package_edges()
    assert len(edges) > 20  # the tree was read
    cycles = sorted({tuple(sorted((a, b))) for a, targets in edges.items() for b in targets if reaches(edges, b, a)})
    assert cycles == []


@pytest.mark.parametrize("package", PURE)
def test_a_pure_core_imports_no_cluster_layer_nor_ansible(package):
    imported = set()
    for path in (MODULE_UTILS / package).rglob("*.py"):
        imported.update(imported_modules(path))
    assert not [name for name in imported if name.startswith(PREFIX) and name[len(PREFIX) :].split(".")[0] in {"k8s", "runner"}]
    assert not [name for name in imported if name[len(PREFIX) :].split(".")[0].endswith("_cluster")]
    assert not [name for name in imported if name.startswith(("ansible.", "ansible_collections.kubernetes", "kubernetes"))]
