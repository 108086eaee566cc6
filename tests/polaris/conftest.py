import io
import tarfile

import numpy as np
import pytest

from schedlab.polaris import ingest, synthetic
from schedlab.polaris.calibration import load_calibration_rows


@pytest.fixture(scope="session")
def calib_rows():
    return load_calibration_rows()


@pytest.fixture(scope="session")
def calib(calib_rows):
    return synthetic.calibrate(calib_rows)


@pytest.fixture(scope="session")
def small_trace(tmp_path_factory, calib):
    out = tmp_path_factory.mktemp("trace")
    counts = synthetic.synthesize(out, 800, np.random.default_rng(11), calibration=calib, progress=False)
    return out, counts


@pytest.fixture(scope="session")
def ingested(small_trace, tmp_path_factory):
    trace, _ = small_trace
    work = tmp_path_factory.mktemp("work")
    return ingest.ingest_archives(trace, work, progress=False), work


def write_tar(path, member, text):
    """A one-member ``.tar.gz`` holding ``text`` (hand-made archives for the bad-input tests)."""
    data = text.encode()
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo(member)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
