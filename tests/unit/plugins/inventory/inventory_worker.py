"""Builds inventories with ansible-core's InventoryManager, in a process of its own, for the unit tests of
plugins/inventory (test_clusters.py).

Importing Ansible's controller code (ansible.inventory, ansible.plugins, ...) into the pytest process would make the
other unit tests' in-process module runs controller runs (lib.runners refuses them), so the inventory plugin runs
here, started once per test module, the way ``ansible-inventory`` runs it: the manager tries the source with the
enabled plugins (the tests enable ``auto`` alone: it loads the plugin the source names), applies the plugin's cache
and reconciles the inventory.

One JSON request per line on stdin, ``{"source": path, "cache": bool}`` (``cache: false`` is what
``ansible-inventory --flush-cache`` and ``meta: refresh_inventory`` ask for); one JSON line per request on stdout::

    {"hosts": {name: {variable: value}},            # inventory_file and inventory_dir left out
     "groups": {name: {"hosts": [...], "children": [...]}},
     "trusted": {name: [variables that are trusted templates]},
     "warnings": [...],                              # Display.warning messages
     "error": null or "<exception class>: <message>"} # the plugin's error, when the source failed
"""

import json
import os
import sys


def main():
    # the protocol keeps the real stdout; anything Ansible prints goes to stderr
    protocol = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    from ansible.plugins.loader import init_plugin_loader

    init_plugin_loader()  # the collection loader on ANSIBLE_COLLECTIONS_PATH, as the ansible CLIs start

    from ansible.inventory.manager import InventoryManager
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import is_trusted_as_template
    from ansible.utils.display import Display

    captured = {"warnings": [], "errors": []}

    def warning(_self, msg, *_args, **_kwargs):
        captured["warnings"].append(str(msg))

    def error_as_warning(_self, msg, exception, *_args, **_kwargs):
        captured["errors"].append(exception)

    Display.warning = warning
    Display.error_as_warning = error_as_warning

    for line in sys.stdin:
        request = json.loads(line)
        captured["warnings"].clear()
        captured["errors"].clear()
        manager = InventoryManager(DataLoader(), sources=[request["source"]], cache=request.get("cache", True))
        hosts, trusted = {}, {}
        for name, host in manager.hosts.items():
            hosts[name] = {key: value for key, value in host.vars.items() if key not in ("inventory_file", "inventory_dir")}
            trusted[name] = sorted(key for key, value in hosts[name].items() if isinstance(value, str) and is_trusted_as_template(value))
        groups = {
            name: {"hosts": sorted(h.name for h in group.hosts), "children": sorted(g.name for g in group.child_groups)}
            for name, group in manager.groups.items()
        }
        error = None
        if captured["errors"]:
            exc = captured["errors"][0]
            error = "%s: %s" % (type(exc).__name__, getattr(exc, "message", str(exc)))
        result = {"hosts": hosts, "groups": groups, "trusted": trusted, "warnings": list(captured["warnings"]), "error": error}
        protocol.write(json.dumps(result) + "\n")
        protocol.flush()


if __name__ == "__main__":
    main()
