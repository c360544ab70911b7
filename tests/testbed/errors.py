"""The root of the testbed's errors: every component's error derives from ``TestbedError``, so ``python -m testbed``
and the fixtures report any of them the same way (the message names the component and why)."""


class TestbedError(RuntimeError):
    """The testbed could not be built, started or reached; the message says which component and why."""
