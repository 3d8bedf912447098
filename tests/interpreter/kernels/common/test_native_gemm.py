"""kernels/native_gemm.py: the native packed int8 / uint8 GEMM (CONV_2D 1x1 and general,
FULLY_CONNECTED) equals the numpy kernels bit for bit -- random sweeps in every kernel set,
rounding and thread count on each micro-kernel (generic C, SSE2, AVX2), the row and the
channel-panel splits, the fused output stage at its edges -- and numpy runs where it is not
chosen. The ARM NEON kernels (native/gemm_neon.c) are checked against the generic C tile
by tests/native/gemm_isa_check.c, cross-compiled and run under qemu-user where installed."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sysconfig

import numpy as np
import pytest

from edgelite.interpreter import Interpreter, native
from edgelite.interpreter import quant_math as qm
from edgelite.interpreter.kernels.common.requantize import (NATIVE_FP32, ExactOutputStage,
                                                            FixedRequant, Float64Requant,
                                                            Fp32OutputStage, NativeStage)

from tests.conftest import ROOT

from ...test_native import _both_backends, needs_native

def _count_native_gemm(monkeypatch, isa: int) -> list:
    """Counts the runs of the native GEMM kernel (kernels/native_gemm.py) from now on --
    through its eval, or bound as a native step at allocate -- run with micro-kernel ``isa`` at best (0 generic C, 1 SSE2, 2 AVX2)."""
    from edgelite.interpreter.kernels.common import native_gemm, native_split

    calls = []
    original = native_gemm.eval_native

    def counted(rec, inputs, outputs):
        calls.append(rec.conv is not None)
        original(rec, inputs, outputs)

    def bound(rec, inputs, outputs):  # a native step runs the kernel without eval_native
        step = bind(rec, inputs, outputs)
        if step is not None:
            calls.append(rec.conv is not None)
        return step

    bind = native_gemm.NativeGemm.native_step
    # every op of more than a few multiply-adds splits over the C pool (native_split)
    monkeypatch.setattr(native_split, "SPLIT_MACS", 64)
    monkeypatch.setattr(native_gemm, "eval_native", counted)
    monkeypatch.setattr(native_gemm.NativeGemm, "native_step", bound)
    monkeypatch.setattr(native_gemm, "ISA", isa)
    return calls


def _sweep(model, feeds, dtype, expect_native: bool, calls: list, varied: bool = True) -> None:
    """Native == numpy in every kernel set, rounding and 1-4 threads (split into tasks
    over the C pool); ``varied``: the outputs are not all one value (biases at the int32
    limit saturate most outputs)."""
    kernels = ["default", "reference", "micro"] if dtype == np.int8 else ["default", "reference"]
    for k in kernels:
        for rounding in ("double", "single"):
            for threads in (1, 2, 3, 4):
                before = len(calls)
                want, got = _both_backends(model, feeds, kernels=k, rounding=rounding,
                                           num_threads=threads)
                np.testing.assert_array_equal(got, want, err_msg=f"{k} {rounding} {threads}")
                assert (len(calls) > before) == expect_native, (k, rounding, threads)
    assert len(np.unique(want)) > 1 or not varied


@needs_native
@pytest.mark.parametrize("seed", range(32))
def test_conv_sweep_native_equals_numpy(seed, monkeypatch):
    """Random int8 / uint8 CONV_2D (1x1 and general; shapes, strides, dilations, SAME /
    VALID padding, per-channel / per-tensor, zero points, activations, biases near the
    int32 limit so that the accumulator wraps; grouped ones stay numpy), each kernel set
    and rounding, 1 and 2 threads, the the AVX2, SSE2 and generic C micro-kernels: the native
    kernel's outputs equal the numpy kernel's."""
    from ..test_conv import ACTIVATIONS, quant_conv_model

    calls = _count_native_gemm(monkeypatch, isa=seed % 3)
    rng = np.random.default_rng(1000 + seed)
    dtype = (np.int8, np.uint8)[seed % 2]
    groups = 2 if seed % 8 == 5 else 1
    cg, og = int(rng.integers(1, 24)), int(rng.integers(1, 40))
    if seed % 3 == 0:
        kh = kw = 1
    else:
        kh, kw = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    dil = (1, 1) if seed % 5 else (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
    h = int(rng.integers(kh * dil[0], 18))
    w = int(rng.integers(kw * dil[1], 18))
    stride = (1, 1) if seed % 3 == 0 and seed % 2 else \
        (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    bias_range = (2**31 - 2**18, 2**31 - 1) if seed % 6 == 4 else (-5000, 5000)
    model, feeds = quant_conv_model(
        rng, dtype, (int(rng.integers(1, 3)), h, w, cg * groups), (og * groups, kh, kw, cg),
        padding=str(rng.choice(["SAME", "VALID"])), stride=stride, dilation=dil,
        act=str(rng.choice(ACTIVATIONS)), per_channel=bool(seed % 3), bias=bool(seed % 7),
        bias_range=bias_range)
    _sweep(model, feeds, dtype, groups == 1, calls, varied=bias_range[0] < 0)


@needs_native
@pytest.mark.parametrize("seed", range(16))
def test_fully_connected_sweep_native_equals_numpy(seed, monkeypatch):
    """Random int8 / uint8 FULLY_CONNECTED (rows, depths incl. odd and long ones, units,
    per-channel / per-tensor, int8 weights with a zero point, activations, keep_num_dims,
    no bias), every kernel set: native == numpy."""
    from ..test_conv import ACTIVATIONS
    from ..test_fully_connected import quant_fc_model

    calls = _count_native_gemm(monkeypatch, isa=(seed + 1) % 3)
    rng = np.random.default_rng(2000 + seed)
    dtype = (np.int8, np.uint8)[seed % 2]
    depth = int(rng.integers(1, 70)) if seed % 5 else int(rng.integers(1500, 5000))
    rows = int(rng.integers(1, 12))
    x_shape = (rows, depth) if seed % 3 else (rows, 2, depth)
    w_zp = int(rng.integers(-20, 20)) if dtype == np.int8 and seed % 4 == 2 else None
    model, feeds = quant_fc_model(
        rng, dtype, x_shape, int(rng.integers(1, 50)), per_channel=seed % 4 == 0,
        act=str(rng.choice(ACTIVATIONS[:2 if depth > 1000 else 4])), bias=bool(seed % 6),
        keep_num_dims=seed % 3 == 0,
        w_zp=w_zp, out_q=None if depth < 1000 else  # an output range the long sums fit
        (float(np.float32(np.sqrt(depth) / 20)), 0) if dtype == np.int8 else
        (float(np.float32(depth / 100)), 128))
    _sweep(model, feeds, dtype, True, calls)


@needs_native
@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_large_gemms_native_equals_numpy(monkeypatch, dtype):
    """Large enough to run on two threads: a 3x3 conv over 288 channels (K = 2592: the
    numpy kernel splits it into float32-exact chunks; several row blocks, split by rows),
    a 1x1 conv with fewer rows than channels and a FULLY_CONNECTED of two rows (split by
    panels of channels): identical."""
    from ..test_conv import quant_conv_model
    from ..test_fully_connected import quant_fc_model

    calls = _count_native_gemm(monkeypatch, isa=2)
    rng = np.random.default_rng(5)
    cases = [quant_conv_model(rng, dtype, (1, 11, 13, 288), (40, 3, 3, 288)),
             quant_conv_model(rng, dtype, (1, 5, 7, 320), (600, 1, 1, 320)),
             quant_fc_model(rng, dtype, (2, 4096), 300,
                            out_q=(3.0, 0) if dtype == np.int8 else (40.0, 128))]
    for model, feeds in cases:
        _sweep(model, feeds, dtype, True, calls)


def test_gemm_split_grid():
    """(row parts, panel parts): by panels where there are fewer rows than channels, else
    by rows (whole tiles of 4 rows: at most 36 parts of 143 rows), 2 tasks per thread;
    small ops (under native_split.SPLIT_MACS) and 1 thread: not split."""
    from edgelite.interpreter.kernels.common.native_gemm import split

    assert split(35, 38, 2, 10**7) == (1, 4)
    assert split(143, 3, 2, 10**7) == (4, 1)
    assert split(143, 3, 64, 10**9) == (36, 1)
    assert split(35, 38, 1, 10**7) == split(35, 38, 2, 1000) == (1, 1)


@needs_native
def test_gemm_numpy_where_not_chosen(monkeypatch):
    """The numpy kernel runs -- and gives the same outputs -- with EDGELITE_NATIVE=0, and
    where the build has no SIMD micro-kernel (generic C only: native_gemm.MIN_ISA)."""
    from edgelite.interpreter.kernels.common import native_gemm
    from ..test_conv import quant_conv_model

    calls = _count_native_gemm(monkeypatch, isa=2)
    rng = np.random.default_rng(9)
    model, feeds = quant_conv_model(rng, np.int8, (1, 9, 9, 16), (24, 3, 3, 16))
    want, got = _both_backends(model, feeds)
    assert len(calls) == 1
    monkeypatch.setattr(native_gemm, "MIN_ISA", native_gemm.AVX2 + 1)
    _, without_simd = _both_backends(model, feeds)
    monkeypatch.setattr(native_gemm, "MIN_ISA", native_gemm.SSE2)
    monkeypatch.setenv("EDGELITE_NATIVE", "0")
    interp = Interpreter(model_content=model)
    interp.allocate_tensors()
    interp.set_tensor(interp.get_input_details()[0]["index"], feeds[0])
    interp.invoke()
    assert len(calls) == 1 and interp.backend == "numpy"
    for result in (got, without_simd, interp.get_tensor(interp.get_output_details()[0]["index"])):
        np.testing.assert_array_equal(result, want)


def _edge_accumulators(rng, reals, multipliers) -> np.ndarray:
    """int32 accumulators for the channels of ``multipliers``: random, the int32 extremes,
    values whose product with an odd multiplier sits at or next to
    SaturatingRoundingDoublingHighMul's rounding ties (ab = 2^30 +- 1 mod 2^31), and
    where the real multiplier is a power of two (every 4th channel), odd values whose
    scaled result is an exact half inside the output range: ties of both roundings."""
    count = len(multipliers)
    acc = rng.integers(-2**31, 2**31, count)
    acc[:8] = [-2**31, 2**31 - 1, 0, 1, -1, 2, -2, 12345]
    for i in range(8, count, 2):
        if i % 4 == 0:  # reals[i] = 2^-j: |acc| * 2^-j within 100
            bound = int(100 / reals[i])
            acc[i] = int(rng.integers(-bound, bound)) | 1
            continue
        m = int(multipliers[i]) | 1
        target = (2**30 + int(rng.integers(-1, 2))) % 2**31
        value = target * pow(m, -1, 2**31) % 2**31
        acc[i] = value - 2**31 * int(rng.integers(0, 2))  # either sign
    return acc


@needs_native
@pytest.mark.parametrize("isa", [0, 1, 2])
@pytest.mark.parametrize("kind", ["double", "single", "float64", "fp32", "double-flush"])
@pytest.mark.parametrize("out_dtype", [np.int8, np.uint8])
def test_gemm_output_stage_edges(isa, kind, out_dtype):
    """The GEMM's fused output stage (gemm.c: AVX2 fixed-point / fp32 tiles, requant.c's
    per-value code elsewhere) against the numpy stages on accumulators chosen channel by
    channel (one output row, x = 0, so acc = init): extremes, rounding ties, shifts from
    -31 to 30 (and below -31, which QuantizeMultiplier flushes), the fixed-point ones
    through the prepared planes (with_planes)."""
    rng = np.random.default_rng(isa * 10 + len(kind))
    o = 509
    lo_shift = -40 if kind == "double-flush" else -31
    reals = rng.uniform(0.5, 1.0, o) * 2.0 ** rng.integers(lo_shift, 31, o).astype(float)
    reals[8::4] = 2.0 ** -rng.integers(1, 4, len(reals[8::4])).astype(float)
    if kind in ("double", "single", "double-flush"):
        rounding = qm.Rounding.SINGLE if kind == "single" else qm.Rounding.DOUBLE
        m, s = qm.quantize_multipliers(reals, rounding)
        requant = FixedRequant(m, s, rounding)
        acc = _edge_accumulators(rng, reals, m)
    elif kind == "float64":
        requant, acc = Float64Requant(reals), rng.integers(-2**31, 2**31, o)
    else:
        requant = None
        acc = rng.integers(-2**31, 2**31, o)
        acc[:2 * o // 3] = rng.integers(-2**16, 2**16, 2 * o // 3)  # most not saturated
    info = np.iinfo(out_dtype)
    zp = int(rng.integers(info.min, info.max + 1)) // 4 + (0 if out_dtype == np.int8 else 96)
    lo, hi = info.min, info.max
    want = np.empty((1, o), out_dtype)
    if requant is None:
        mult = rng.uniform(1e-4, 0.004, o).astype(np.float32)
        stage = NativeStage(NATIVE_FP32, None, mult, None, o, zp, lo, hi, False)
        Fp32OutputStage(bias=None, multiplier=mult, width=o, zp_out=zp,
                        bounds=(np.float32(lo - zp), np.float32(hi - zp)),
                        f32=np.empty((1, o), np.float32))(acc.astype(np.float64)[None], want)
    else:
        from edgelite.interpreter.kernels.common.native_gemm import with_planes

        stage = with_planes(NativeStage.exact(requant, None, o, zp, lo, hi, False))
        # the AVX2 / NEON tile stage runs on the prepared planes (QuantizeMultiplier
        # flushes multipliers below 2^-31 to 0, so every shift here is in range; float64
        # has none)
        assert (stage.planes is not None) == (kind != "float64")
        ExactOutputStage(requant=requant, bias=None, width=o, zp_out=zp, lo=lo, hi=hi)(
            acc.astype(np.float64)[None], want)
    panels = -(-o // 16)
    init = np.zeros(panels * 16, np.int32)
    init[:o] = acc
    got = np.empty((1, o), out_dtype)
    native.module.gemm(
        np.zeros((1, 2), out_dtype), int(out_dtype == np.uint8), None, 0,
        np.zeros((panels, 1, 16, 2), np.int16), init, 2, 2, o, 4, isa, stage.kind,
        stage.multiplier, stage.shift, stage.planes, zp, lo, hi, got,
        int(out_dtype == np.uint8), 0, 1, 0, panels, np.zeros(8, np.int16))
    np.testing.assert_array_equal(got, want)
    assert len(np.unique(want)) > 10


# ---- gemm.c's SIMD micro-kernels against its generic C tile, standalone (no Python) ----

NATIVE = ROOT / "interpreter" / "native"
ISA_CHECK = ROOT / "tests" / "native" / "gemm_isa_check.c"
CHECK_SOURCES = ("gemm.c", "gemm_neon.c", "requant.c", "conv.c")
C_FLAGS = ["-O2", "-std=c11", "-fno-math-errno", "-Wall", "-Werror"]
# (compiler, emulator command, flags, the ISA level the build must pick: 1 NEON, 0 generic C)
ARM_TARGETS = {
    "aarch64": ("aarch64-linux-gnu-gcc", ["qemu-aarch64"], [], 1),
    "armv7-neon": ("arm-linux-gnueabihf-gcc", ["qemu-arm"], ["-mfpu=neon"], 1),
    # Debian's armhf default (VFPv3-D16): NEON turned on for gemm_neon.c, picked at run time
    "armv7-hwcap": ("arm-linux-gnueabihf-gcc", ["qemu-arm"], [], 1),
    "armv7-no-neon-cpu": ("arm-linux-gnueabihf-gcc", ["qemu-arm", "-cpu", "cortex-r5f"], [], 0),
}
INSTALL = "apt-get install gcc-aarch64-linux-gnu gcc-arm-linux-gnueabihf qemu-user"


def _isa_check(tmp_path, cc: str, flags: list, runner: list) -> list[str]:
    """Builds gemm_isa_check with ``cc`` and runs two random sweeps (seeds 1 and 2): the
    lines it prints."""
    exe = tmp_path / "gemm_isa_check"
    sources = [str(ISA_CHECK)] + [str(NATIVE / f) for f in CHECK_SOURCES]
    subprocess.run([cc, *C_FLAGS, *flags, f"-I{NATIVE}", *sources, "-lm", "-o", str(exe)],
                   check=True, capture_output=True, text=True)
    lines = []
    for seed in ("1", "2"):
        run = subprocess.run([*runner, str(exe), "check", seed, "1500"], capture_output=True,
                             text=True, timeout=300)
        assert run.returncode == 0, run.stdout + run.stderr
        lines.append(run.stdout.strip())
    return lines


@needs_native
def test_isa_check_host(tmp_path):
    """This machine's best micro-kernel (AVX2 / SSE2 on x86-64) equals the generic C tile
    on random GEMMs of every output stage, built outside the extension the same way."""
    cc = shutil.which(sysconfig.get_config_var("CC").split()[0]) or shutil.which("cc")
    best = native.module.gemm_isa()
    assert _isa_check(tmp_path, cc, [], []) == [f"ok 1500 isa={best}"] * 2


@pytest.mark.parametrize("target", sorted(ARM_TARGETS))
def test_isa_check_arm_under_qemu(tmp_path, target):
    """The NEON tile and fused output stages (gemm_neon.c) equal the generic C tile bit for
    bit: cross-compiled for ARM, run under qemu-user; on a 32-bit CPU without NEON the
    armhf build falls back to the generic tile."""
    cc, emulator, flags, isa = ARM_TARGETS[target]
    if not (shutil.which(cc) and shutil.which(emulator[0])):
        pytest.skip(f"{cc} / {emulator[0]} not installed: the ARM GEMM kernels are not "
                    f"checked here ({INSTALL})")
    lines = _isa_check(tmp_path, cc, [*flags, "-static"], emulator)
    assert lines == [f"ok 1500 isa={isa}"] * 2


def _extension_sources() -> list[str]:
    """setup.py's SOURCES: every C file of the extension."""
    tree = ast.parse((ROOT / "setup.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "SOURCES":
            return ast.literal_eval(node.value)
    raise AssertionError("setup.py has no SOURCES")


@pytest.mark.parametrize("target", ["aarch64", "armv7-hwcap"])
def test_extension_compiles_for_arm(target):
    """The whole extension compiles for ARM, warning-free: on aarch64 with Python's headers
    (this machine's are LP64 as aarch64's); for 32-bit ARM the files without Python.h (its
    headers here are a 64-bit build's)."""
    cc = ARM_TARGETS[target][0]
    if not shutil.which(cc):
        pytest.skip(f"{cc} not installed: the ARM build is not checked here ({INSTALL})")
    sources = _extension_sources()
    assert "interpreter/native/gemm_neon.c" in sources
    include = sysconfig.get_paths()["include"]
    compiled, skipped = 0, 0
    for source in sources:
        text = (ROOT / source).read_text()
        if target != "aarch64" and "Python.h" in text:
            skipped += 1
            continue
        run = subprocess.run([cc, "-fsyntax-only", *C_FLAGS, f"-I{include}", f"-I{NATIVE}",
                              str(ROOT / source)], capture_output=True, text=True)
        assert run.returncode == 0, f"{source}: {run.stderr}"
        compiled += 1
    # every kernel file compiled; only the Python glue skipped, and on aarch64 nothing
    assert compiled + skipped == len(sources) and compiled > skipped
    assert skipped == 0 or target != "aarch64"


@needs_native
@pytest.mark.parametrize("rounding", [qm.Rounding.DOUBLE, qm.Rounding.SINGLE])
def test_fixed_planes_layout(rounding):
    """native_gemm.with_planes prepares el_fixed_planes once: per 16 channels the int32
    multipliers, then (DOUBLE) left shifts, right shifts and masks 2^right - 1, or (SINGLE)
    t = 31 - shift and the low 32 bits of 2^(63 - t); padding channels have multiplier 0 and valid shifts. A shift or
    multiplier outside the vector stages' range leaves the stage without planes."""
    from edgelite.interpreter.kernels.common.native_gemm import with_planes

    mult = np.array([2**30, 2**31 - 1, 0, 1234567890, 2**30 + 5], np.int64)
    shift = np.array([3, -31, 0, 30, -7], np.int64)
    requant = FixedRequant(mult, shift, rounding)
    stage = with_planes(NativeStage.exact(requant, None, 5, 0, -128, 127, False))
    planes = stage.planes.reshape(1, 4, 16)[0]
    assert planes.dtype == np.int32
    assert list(planes[0]) == list(mult) + [0] * 11
    if rounding is qm.Rounding.SINGLE:
        assert list(planes[1]) == [28, 62, 31, 1, 38] + [31] * 11
        # the low 32 bits of 2^(63 - t)
        assert list(planes[2]) == [0, 2, 0, 0, 2**25] + [0] * 11
        assert not planes[3].any()
    else:
        assert list(planes[1]) == [3, 0, 0, 30, 0] + [0] * 11
        assert list(planes[2]) == [0, 31, 0, 0, 7] + [0] * 11
        assert list(planes[3]) == [0, 2**31 - 1, 0, 0, 127] + [0] * 11
    for bad_mult, bad_shift in ((mult, np.where(shift == -31, -32, shift)),
                                (np.where(mult == 0, -1, mult), shift),
                                (mult, np.where(shift == 30, 31, shift))):
        bad = FixedRequant(bad_mult, bad_shift, rounding)
        assert with_planes(NativeStage.exact(bad, None, 5, 0, -128, 127, False)).planes is None
