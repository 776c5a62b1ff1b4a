"""Shared fixtures: the tables shipped in data/uci."""

import pytest

from tables import read_table


@pytest.fixture(scope="session")
def sonar():
    return read_table("sonar")


@pytest.fixture(scope="session")
def glass():
    return read_table("glass")


@pytest.fixture(scope="session")
def boston():
    return read_table("boston-housing", real=True)
