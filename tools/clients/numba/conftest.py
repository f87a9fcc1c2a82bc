"""What numba-cuda's repository-root conftest.py gives its tests (that file is not in the wheel):
the cudapy test classes ask for a class-scoped fixture `initialize_from_pytest_config`, which
only records whether to dump the reproducers of failing FileCheck tests."""
import pytest


def pytest_addoption(parser):
    parser.addoption("--dump-failed-filechecks", action="store_true",
                     help="write a reproducer for each FileCheck test that fails")


@pytest.fixture(scope="class")
def initialize_from_pytest_config(request):
    request.cls._dump_failed_filechecks = request.config.getoption("dump_failed_filechecks")
