"""crc32c.py: CRC-32C as TensorFlow's checkpoints use it (crc32c.h), lanes chained exactly."""

import numpy as np
import pytest

from edgelite.converter.savedmodel.crc32c import LANE_BYTES, TABLE, crc32c, mask, unmask


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
def test_known_values(data, expected):
    assert crc32c(data) == expected


@pytest.mark.parametrize("n", [1, 7, LANE_BYTES - 1, LANE_BYTES, LANE_BYTES + 1, 3 * LANE_BYTES + 5,
                               10_007, 65_536 * 2 + 3])
def test_lanes_equal_the_bytewise_loop(n):
    data = np.random.default_rng(n).integers(0, 256, n, dtype=np.uint8).tobytes()
    assert crc32c(data) == _bytewise(data)


def test_accepts_arrays_and_memoryviews():
    data = np.arange(1000, dtype=np.uint16)
    assert crc32c(data) == crc32c(memoryview(data.tobytes())) == _bytewise(data.tobytes())


@pytest.mark.parametrize("crc", [0, 1, 0xE3069283, 0xFFFFFFFF, 0x12345678])
def test_mask_round_trips(crc):
    assert unmask(mask(crc)) == crc
    assert mask(crc) == ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF
