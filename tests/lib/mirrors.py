"""What OpenShift's machine-config operator does with an ImageDigestMirrorSet / ImageTagMirrorSet on a node: the
containers-registries.conf(5) entries containers/image (and so CRI-O, catalogd, operator-controller) pulls with.
One ``[[registry]]`` per source; its mirrors are tried in order, for digest references (IDMS, ``pull-from-mirror =
"digest-only"``) or tag references (ITMS, ``"tag-only"``), before the source itself."""


def _quoted(text):
    return '"%s"' % text.replace("\\", "\\\\").replace('"', '\\"')


def registries_conf(idms=None, itms=None):
    """The registries.conf text for the mirror sets (dicts as catalog_mirror returns them; None for none)."""
    mirrors = {}
    for mirror_set, key, policy in ((idms, "imageDigestMirrors", "digest-only"), (itms, "imageTagMirrors", "tag-only")):
        for entry in ((mirror_set or {}).get("spec") or {}).get(key) or ():
            mirrors.setdefault(entry["source"], []).extend((m, policy) for m in entry["mirrors"])
    lines = []
    for source in sorted(mirrors):
        lines += ["[[registry]]", "  prefix = \"\"", "  location = %s" % _quoted(source)]
        for location, policy in mirrors[source]:
            lines += ["  [[registry.mirror]]", "    location = %s" % _quoted(location),
                      "    pull-from-mirror = %s" % _quoted(policy)]
        lines.append("")
    return "\n".join(lines)
