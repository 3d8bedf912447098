"""One Interpreter used from two threads at once (guard.py): the second call is refused
at once with a clear InterpreterStateError -- never a wrong result, never a wait."""

import sys
import threading
import time

import numpy as np
import pytest

from edgelite.interpreter import Interpreter, InterpreterStateError

from .test_blas import _hook_first_step
from .test_interpreter import conv_softmax_model
from .tflite_builder import ModelBuilder

ADVICE = "; use one Interpreter per thread (or serialize the calls with your own lock)"


def _refused(what: str, running: str = "invoke()") -> str:
    return f"{what} refused: this Interpreter is already running {running} in another " \
           f"thread{ADVICE}"


def _ready(model: bytes) -> Interpreter:
    interp = Interpreter(model_content=model)
    interp.allocate_tensors()
    return interp


def _answer(model: bytes, x: np.ndarray) -> np.ndarray:
    interp = _ready(model)
    interp.set_tensor(0, x)
    interp.invoke()
    return interp.get_tensor(interp.get_output_details()[0]["index"])


class Blocked:
    """Another thread inside ``interp.invoke()``, held just before its first op until the
    ``with`` block ends; its output is kept in ``result``."""

    def __init__(self, interp: Interpreter) -> None:
        self.interp = interp
        self.entered, self.release = threading.Event(), threading.Event()
        _hook_first_step(interp, self._hold)
        self.thread = threading.Thread(target=self._run)
        self.result = None

    def _hold(self) -> None:
        self.entered.set()
        assert self.release.wait(10)

    def _run(self) -> None:
        self.interp.invoke()
        self.result = self.interp.get_tensor(self.interp.get_output_details()[0]["index"])

    def __enter__(self) -> "Blocked":
        self.thread.start()
        assert self.entered.wait(10)
        return self

    def __exit__(self, *exc) -> None:
        self.release.set()
        self.thread.join(10)
        assert not self.thread.is_alive()


def test_every_call_during_another_threads_invoke_is_refused(rng):
    model = conv_softmax_model()
    x = rng.uniform(-1, 1, (1, 8, 8, 1)).astype(np.float32)
    interp = _ready(model)
    interp.set_tensor(0, x)
    out = interp.get_output_details()[0]["index"]
    runner = interp.get_signature_runner()
    calls = {
        "invoke()": interp.invoke,
        "set_tensor()": lambda: interp.set_tensor(0, x),
        "allocate_tensors()": interp.allocate_tensors,
        "resize_tensor_input()": lambda: interp.resize_tensor_input(0, [2, 8, 8, 1]),
        "profile()": lambda: interp.profile(runs=1),
        "get_tensor()": lambda: interp.get_tensor(out),
        "get_dequantized_tensor()": lambda: interp.get_dequantized_tensor(out),
        "tensor()": lambda: interp.tensor(out)(),
        "a SignatureRunner call": lambda: runner(image=x),
    }
    with Blocked(interp) as other:
        for what, call in calls.items():
            with pytest.raises(InterpreterStateError) as info:
                call()
            assert str(info.value) == _refused(what), what
        assert interp.get_input_details()[0]["shape"].tolist() == [1, 8, 8, 1]  # metadata
    # The refused calls changed nothing: the other thread's result is right, and the
    # interpreter serves the next thread as usual.
    np.testing.assert_array_equal(other.result, _answer(model, x))
    interp.invoke()
    np.testing.assert_array_equal(interp.get_tensor(out), other.result)


def test_a_call_in_another_threads_write_call_names_it(rng):
    interp = _ready(conv_softmax_model())
    x = np.zeros((1, 8, 8, 1), np.float32)
    entered, release = threading.Event(), threading.Event()
    real = interp._check_index  # the first thing set_tensor() does

    def slow_check(*args):
        entered.set()
        assert release.wait(10)
        return real(*args)
    interp._check_index = slow_check
    thread = threading.Thread(target=interp.set_tensor, args=(0, x))
    thread.start()
    assert entered.wait(10)
    with pytest.raises(InterpreterStateError, match=r"^invoke\(\) refused: this Interpreter "
                       r"is already running set_tensor\(\) in another thread"):
        interp.invoke()
    release.set()
    thread.join(10)


def test_a_read_overlapped_by_another_threads_invoke_is_refused(rng):
    """The guard checks after the copy too: an invoke that began and even ended while a
    read was copying makes that read fail instead of returning a torn tensor."""
    model = conv_softmax_model()
    interp = _ready(model)
    out = interp.get_output_details()[0]["index"]
    real_array = interp._array

    def array_then_invoke_elsewhere(index, what, subgraph_index=0):
        arr = real_array(index, what, subgraph_index)
        thread = threading.Thread(target=interp.invoke)  # runs to the end meanwhile
        thread.start()
        thread.join(10)
        return arr
    interp._array = array_then_invoke_elsewhere
    with pytest.raises(InterpreterStateError) as info:
        interp.get_tensor(out)
    assert str(info.value) == "get_tensor() refused: another thread called this " \
                              f"Interpreter while it copied the tensor{ADVICE}"
    interp._array = real_array
    assert interp.get_tensor(out).shape == (1, 256)


def test_the_same_thread_may_nest_and_threads_may_hand_over(rng):
    model = conv_softmax_model()
    interp = _ready(model)
    x = rng.uniform(-1, 1, (1, 8, 8, 1)).astype(np.float32)
    runner = interp.get_signature_runner()
    # A runner call holds the guard over resize / allocate / set / invoke / get.
    outputs = runner(image=np.concatenate([x, x]))
    assert outputs["scores"].shape == (2, 256)
    # set_tensor in one thread, invoke in another, get_tensor back in the first.
    runner(image=x)
    interp.set_tensor(0, x)
    thread = threading.Thread(target=interp.invoke)
    thread.start()
    thread.join(10)
    out = interp.get_output_details()[0]["index"]
    np.testing.assert_array_equal(interp.get_tensor(out), _answer(model, x))


def _big_model():
    """input [1,32,32,8] -> CONV_2D 3x3x8x32 (a BLAS matmul, which releases the GIL) ->
    RESHAPE -> SOFTMAX, with a signature: an invoke long enough for threads to meet."""
    rng = np.random.default_rng(7)
    b = ModelBuilder()
    x = b.tensor("input", (1, 32, 32, 8))
    w = b.tensor("w", (32, 3, 3, 8), data=rng.uniform(-1, 1, (32, 3, 3, 8)))
    bias = b.tensor("bias", (32,), data=np.zeros(32))
    h = b.tensor("conv", (1, 32, 32, 32))
    shape = b.const("shape", np.array([1, -1], np.int32))
    flat = b.tensor("flat", (1, 32768))
    y = b.tensor("probs", (1, 32768))
    b.op("CONV_2D", [x, w, bias], [h], padding="SAME", stride_w=1, stride_h=1,
         fused_activation_function="RELU")
    b.op("RESHAPE", [h, shape], [flat])
    b.op("SOFTMAX", [flat], [y], beta=1.0)
    b.signature("serving_default", {"image": x}, {"scores": y})
    return b.build([x], [y])


@pytest.fixture
def fast_switching():
    """Switch the GIL every 10 us instead of 5 ms: many more interleavings per test."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(before)


@pytest.mark.parametrize("api", ["runner", "set_invoke_get"])
def test_two_threads_hammering_one_interpreter(api, fast_switching):
    """Every call gives a right answer or the clear error; nothing else. A SignatureRunner
    call is one guarded call, so it gives its own input's answer; a bare set_tensor /
    invoke / get_tensor sequence is three calls, so another thread may slip in between
    (whole inputs only): it gives SOME input's right answer, or the error."""
    model = _big_model()
    inputs = [np.random.default_rng(i).uniform(-1, 1, (1, 32, 32, 8)).astype(np.float32)
              for i in range(2)]
    answers = [_answer(model, x) for x in inputs]
    interp = _ready(model)
    runner = interp.get_signature_runner()
    out = interp.get_output_details()[0]["index"]
    outcomes = [[], []]

    def hammer(me: int) -> None:
        for _ in range(2000):  # until 30 calls were answered (a refusal returns at once)
            if len(outcomes[me]) - outcomes[me].count("refused") == 30:
                return
            try:
                if api == "runner":
                    y = runner(image=inputs[me])["scores"]
                else:
                    interp.set_tensor(0, inputs[me])
                    interp.invoke()
                    y = interp.get_tensor(out)
            except InterpreterStateError as exc:
                assert ADVICE in str(exc)
                outcomes[me].append("refused")
                time.sleep(0)  # let the other thread finish its call
                continue
            except Exception as exc:  # pragma: no cover - the failure this test is for
                outcomes[me].append(f"{type(exc).__name__}: {exc}")
                continue
            right = [i for i, a in enumerate(answers) if np.array_equal(y, a)]
            outcomes[me].append("own" if me in right else "other's" if right else "wrong")

    threads = [threading.Thread(target=hammer, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    allowed = {"own", "refused"} if api == "runner" else {"own", "other's", "refused"}
    for mine in outcomes:
        assert mine and set(mine) <= allowed, sorted(set(mine) - allowed)
