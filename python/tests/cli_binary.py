"""Where the tests find the command-line binary: ``$MULTIKERNEL_BIN``, or
``target/release/multikernel`` (``cargo build --release -p multikernel-cli``)."""

import os
from pathlib import Path

from tables import ROOT

DEFAULT = ROOT / "target" / "release" / "multikernel"


def path():
    return Path(os.environ.get("MULTIKERNEL_BIN") or DEFAULT)


def required():
    """``MULTIKERNEL_REQUIRE_BIN=1`` (CI): a missing binary fails the tests that need it."""
    return os.environ.get("MULTIKERNEL_REQUIRE_BIN", "") not in ("", "0")
