"""olm/operator.component_label_key: the label OLM's Operator API puts on an operator's CSV (decorators.Operator's
ComponentLabelKey, read in operator-lifecycle-manager v0.46): how an uninstall finds the CSV once the Subscription
is gone."""

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.olm.operator import component_label_key


@pytest.mark.parametrize("package, namespace, key", [
    ("kube-demo", "operators", "operators.coreos.com/kube-demo.operators"),
    # cut to 63 characters (seen on the testbed: the label of kube-demo-addon in a test's long namespace)
    (
        "kube-demo-addon",
        "t-test-an-uninstall-held-by-an-operand-fin-5cb849",
        "operators.coreos.com/kube-demo-addon.t-test-an-uninstall-held-by-an-operand-fin-5cb8",
    ),
    # ... without the trailing separators the cut leaves
    ("a" * 62, "x", "operators.coreos.com/" + "a" * 62),
])
def test_component_label_key(package, namespace, key):
    assert component_label_key(package, namespace) == key
