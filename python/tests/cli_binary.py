"""Where the tests find the command-line binary: ``$MULTIKERNEL_BIN``, or else
``target/release/multikernel`` (``cargo build --release``) when it is built, or else
``target/debug/multikernel`` (the test profile's, which ``cargo test --workspace`` builds)."""

import os
from pathlib import Path

from tables import ROOT

RELEASE = ROOT / "target" / "release" / "multikernel"
TEST_PROFILE = ROOT / "target" / "debug" / "multikernel"


def path():
    given = os.environ.get("MULTIKERNEL_BIN")
    if given:
        return Path(given)
    return RELEASE if RELEASE.exists() or not TEST_PROFILE.exists() else TEST_PROFILE


def required():
    """``MULTIKERNEL_REQUIRE_BIN=1`` (CI): a missing binary fails the tests that need it."""
    return os.environ.get("MULTIKERNEL_REQUIRE_BIN", "") not in ("", "0")
