"""Offline stand-in for ansible-test's pip bootstrap script (get-pip.py).

ansible-test sanity tests that build throwaway virtualenvs (import, ...) bootstrap pip by running a get-pip script
that ansible-test downloads from ci-files.testing.ansible.com and caches as ~/.ansible/test/cache/get_pip_<ver>.py.
That host is not reachable from our machines (only PyPI is), so:

  python .ci/get_pip_standin.py --install   copies this file to the cache path for ansible-test's pinned pip
  python get_pip_<ver>.py [pip args...]      (as ansible-test calls it) runs ``ensurepip`` in the current
                                             interpreter, then ``pip install --upgrade <args>`` from PyPI.

A real get-pip script already in the cache is left alone.
"""

import os
import re
import shutil
import subprocess
import sys

MARKER = "kubeforge get-pip stand-in"  # identifies our copy in the cache


def pinned_pip_version():
    import ansible_test

    path = os.path.join(os.path.dirname(ansible_test.__file__), "_internal", "python_requirements.py")
    with open(path, encoding="utf-8") as handle:
        match = re.search(r"pip='([0-9.]+)'", handle.read())
    if not match:
        raise SystemExit(f"cannot find ansible-test's pinned pip version in {path}")
    return match.group(1)


def install():
    version = pinned_pip_version()
    target = os.path.expanduser(f"~/.ansible/test/cache/get_pip_{version.replace('.', '_')}.py")
    if os.path.exists(target):
        with open(target, encoding="utf-8", errors="replace") as handle:
            if MARKER not in handle.read():
                print(f"{target}: real get-pip script present, leaving it")
                return
    os.makedirs(os.path.dirname(target), exist_ok=True)
    shutil.copyfile(__file__, target)
    print(f"{target}: installed pip bootstrap stand-in for pip {version}")


def bootstrap(args):
    args = [arg for arg in args if arg not in ("--no-setuptools", "--no-wheel")]
    subprocess.check_call([sys.executable, "-m", "ensurepip", "--upgrade", "--default-pip"], stdout=subprocess.DEVNULL)
    subprocess.check_call([sys.executable, "-m", "pip", "install", "--quiet", "--upgrade"] + args)


if __name__ == "__main__":
    if sys.argv[1:] == ["--install"]:
        install()
    else:
        bootstrap(sys.argv[1:])
