"""Shared fixtures: the tables shipped in data/uci, the command-line binary, and the Dask
tests' cluster.

The tagger and parser tests compare with the command line, found at ``$MULTIKERNEL_BIN``
(default ``target/release/multikernel``, else ``target/debug/multikernel``: cli_binary.py;
CI points it at the binary its tests built).
Without it they skip, unless ``MULTIKERNEL_REQUIRE_BIN=1``: then they fail. With
``MULTIKERNEL_NO_SKIPS=1`` (CI) any skipped test fails with its reason, so that nothing
drops out of the suite silently. The ``slow`` marker (pyproject.toml) marks the tests of
a second or more: ``-m "not slow"`` is the quick tier, the default runs every test.

A shell without job control starts a background command (``cmd &``) with SIGINT ignored,
and Python then keeps it ignored: the Ctrl-C tests would send a signal nobody sees. The
suite restores Python's own handler, as an interactive Python has it."""

import os
import signal

import pytest
from sklearn.model_selection import train_test_split

import cli_binary
from tables import read_table

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def multikernel_bin():
    """The command-line binary's path; skips (fails with MULTIKERNEL_REQUIRE_BIN=1) when
    it is not there."""
    path = cli_binary.path()
    if not path.is_file():
        why = (
            f"the command-line tool is not built ({path}; cargo build --release, "
            "cargo test --workspace, or set MULTIKERNEL_BIN)"
        )
        if cli_binary.required():
            pytest.fail(f"MULTIKERNEL_REQUIRE_BIN is set and {why}", pytrace=False)
        pytest.skip(why)
    return path


@pytest.fixture(scope="module", params=[1, 2], ids=["1worker", "2workers"])
def client(request):
    """A Dask client on an in-process LocalCluster of 1, then 2 workers (one thread each),
    everything on the loopback interface over TCP (so what is sent really travels
    pickled); the Dask tests' cluster."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        n_workers=request.param,
        threads_per_worker=1,
        processes=False,
        protocol="tcp",
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",
    )
    c = distributed.Client(cluster)
    addresses = [cluster.scheduler_address, *c.scheduler_info()["workers"]]
    assert all(a.startswith("tcp://127.0.0.1:") for a in addresses), addresses
    yield c
    c.close()
    cluster.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.skipped and not hasattr(report, "wasxfail") and os.environ.get(
        "MULTIKERNEL_NO_SKIPS", ""
    ) not in ("", "0"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"skipped, and MULTIKERNEL_NO_SKIPS is set: {reason}"


@pytest.fixture(scope="session")
def sonar():
    return read_table("sonar")


@pytest.fixture(scope="session")
def sonar_split(sonar):
    """Sonar's stratified 70/30 split (seed 0): ``Xtr, Xte, ytr, yte``."""
    X, y = sonar
    return train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)


@pytest.fixture(scope="session")
def glass():
    return read_table("glass")


@pytest.fixture(scope="session")
def boston():
    return read_table("boston-housing", real=True)


@pytest.fixture(scope="session")
def selected_regressor_on_boston(boston):
    """``MKLRegressor(random_state=0)`` fitted on boston: the built-in selection, seconds
    long, fitted once for the tests that read it (pickling, cv_results_); not to be
    changed by them."""
    from multikernel import MKLRegressor

    return MKLRegressor(random_state=0).fit(*boston)
