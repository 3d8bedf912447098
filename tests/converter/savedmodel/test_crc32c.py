"""crc32c.py: CRC-32C as TensorFlow's checkpoints use it (crc32c.h), lanes chained exactly;
google-crc32c, where installed (.ci/run's oldest-protobuf step installs it), gives the same
values."""

import numpy as np
import pytest

from edgelite.converter.savedmodel import crc32c as module
from edgelite.converter.savedmodel.crc32c import (ACCELERATOR, LANE_BYTES, TABLE, crc32c,
                                                  crc32c_numpy, mask, unmask)

# the numpy lanes always; the accelerated function too where google-crc32c is installed
FORMS = [crc32c_numpy] + ([crc32c] if ACCELERATOR is not None else [])


def _bytewise(data: bytes) -> int:
    """The plain table-driven loop: the definition the lanes must reproduce."""
    crc = 0xFFFFFFFF
    table = [int(x) for x in TABLE]
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


@pytest.mark.parametrize("data, expected", [
    (b"", 0x0),
    (b"123456789", 0xE3069283),             # the CRC-32C check value
    (bytes(32), 0x8A9136AA),                # RFC 3720 (iSCSI) B.4 test vectors
    (b"\xff" * 32, 0x62A8AB43),
    (bytes(range(32)), 0x46DD794E),
    (bytes(range(31, -1, -1)), 0x113FDB5C),
])
@pytest.mark.parametrize("form", FORMS, ids=lambda f: f.__name__)
def test_known_values(form, data, expected):
    assert form(data) == expected


@pytest.mark.parametrize("n", [1, 7, LANE_BYTES - 1, LANE_BYTES, LANE_BYTES + 1, 3 * LANE_BYTES + 5,
                               10_007, 65_536 * 2 + 3])
@pytest.mark.parametrize("form", FORMS, ids=lambda f: f.__name__)
def test_lanes_equal_the_bytewise_loop(form, n):
    data = np.random.default_rng(n).integers(0, 256, n, dtype=np.uint8).tobytes()
    assert form(data) == _bytewise(data)


@pytest.mark.parametrize("form", FORMS, ids=lambda f: f.__name__)
def test_accepts_arrays_and_memoryviews(form):
    data = np.arange(1000, dtype=np.uint16)
    assert form(data) == form(memoryview(data.tobytes())) == _bytewise(data.tobytes())


def test_the_accelerator_takes_over_when_there(monkeypatch):
    seen = []

    class Fake:
        @staticmethod
        def value(data):
            seen.append(data)
            return 7

    monkeypatch.setattr(module, "ACCELERATOR", Fake)
    assert crc32c(np.arange(3, dtype=np.uint8)) == 7 and crc32c(b"ab") == 7
    assert seen == [b"\x00\x01\x02", b"ab"]  # read-only bytes, as google_crc32c takes
    monkeypatch.setattr(module, "ACCELERATOR", None)
    assert crc32c(b"123456789") == 0xE3069283


def test_accelerator_agrees_with_numpy_on_a_large_shard():
    if ACCELERATOR is None:
        pytest.skip("google-crc32c is not installed (.ci/run's oldest-protobuf step has it)")
    data = np.random.default_rng(1).integers(0, 256, 3 << 20, dtype=np.uint8)
    assert crc32c(data) == crc32c_numpy(data)


@pytest.mark.parametrize("crc", [0, 1, 0xE3069283, 0xFFFFFFFF, 0x12345678])
def test_mask_round_trips(crc):
    assert unmask(mask(crc)) == crc
    assert mask(crc) == ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF
