"""`edgelite bench`: the report's structure (the timings themselves are not checked)."""

import json

from click.testing import CliRunner

from edgelite.cli.main import main


def _model(tmp_path):
    from tests.conftest import MODELS
    out = tmp_path / "tf1.tflite"
    result = CliRunner().invoke(main, ["convert", str(MODELS / "tf1_cnn.pb"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return out


def test_bench_json_has_latency_memory_and_profile(tmp_path):
    path = _model(tmp_path)
    result = CliRunner().invoke(main, ["bench", str(path), "--runs", "3", "--warmup", "1",
                                       "--batch", "4", "--threads", "2", "--top", "2",
                                       "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["batch"] == 4 and report["runs"] == 3 and report["threads"]["requested"] == 2
    lat = report["latency_s"]
    assert 0 < lat["min"] <= lat["median"] <= lat["p90"]
    assert report["throughput_per_s"] > 0 and report["arena_bytes"] > 0
    assert report["peak_rss_bytes"] > 2**20
    prof = report["profile"]
    # tf1_cnn: CONV_2D x2, MAX_POOL_2D, RESHAPE, FULLY_CONNECTED, SOFTMAX.
    assert prof["num_ops"] == report["num_ops"] == 6
    assert len(prof["by_type"]) == 2 and len(prof["ops"]) == 2
    shares = [t["share"] for t in prof["by_type"]]  # the top 2 types of 5
    assert shares == sorted(shares, reverse=True) and 0 < sum(shares) < 1
    # the per-op figures are set against the latency they are part of
    assert report["op_seconds"] == prof["op_seconds"]
    assert report["op_share_of_latency"] == report["op_seconds"] / lat["median"]


def test_bench_op_time_line_agrees_with_the_latency_line(tmp_path):
    import re
    path = _model(tmp_path)
    result = CliRunner().invoke(main, ["bench", str(path), "--runs", "5", "--top", "2"])
    text = result.output
    median = float(re.search(r"latency    median ([0-9.]+) ms", text).group(1))
    op_ms, share = re.search(r"op time    ([0-9.]+) ms per profiled invoke = ([0-9]+)% of "
                             r"the median latency", text).groups()
    assert f"{float(op_ms):.3f} ms of op time per invoke" in text  # the table's own total
    # the shown values are rounded (ms to 3 decimals, the share to a whole percent): allow
    # what that rounding can move the ratio by (a tiny model's invoke is ~0.02 ms)
    op_ms = float(op_ms)
    slack = 100 * (0.0005 / median + (op_ms + 0.0005) * 0.0005 / median ** 2) + 0.5
    assert abs(int(share) - 100 * op_ms / median) <= slack
    assert "(median latency / ops run)" not in text


def test_bench_text_report(tmp_path):
    path = _model(tmp_path)
    result = CliRunner().invoke(main, ["bench", str(path), "--runs", "2", "--top", "3"])
    assert result.exit_code == 0, result.output
    for text in ("latency", "median", "p90", "throughput", "arena", "peak RSS",
                 "per op type", "CONV_2D", "per op:"):
        assert text in result.output


def test_bench_rejects_bad_counts(tmp_path):
    path = _model(tmp_path)
    result = CliRunner().invoke(main, ["bench", str(path), "--runs", "0"])
    assert result.exit_code != 0 and "--runs" in result.output


def test_bench_reports_a_split_batch(tmp_path):
    """MobileNetV2 digits (246 KB of arena per sample) at batch 6 on 2 threads: split by
    sample, 2 workers of 3 samples each, in one private invoke."""
    from tests.conftest import MODELS
    out = tmp_path / "mnv2.tflite"
    r = CliRunner().invoke(main, ["convert", str(MODELS / "mobilenet_v2_digits.pb"), "-o",
                                  str(out)])
    assert r.exit_code == 0, r.output
    args = ["bench", str(out), "--runs", "1", "--warmup", "0", "--batch", "6", "--top", "1"]
    r = CliRunner().invoke(main, args + ["--threads", "2", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["threads"]["batch_split"] == [2, 3]
    r = CliRunner().invoke(main, args + ["--threads", "2"])
    assert "the batch split by sample: 2 workers, 3 sample(s) per invoke" in r.output
    r = CliRunner().invoke(main, args + ["--threads", "1", "--json"])
    assert json.loads(r.output)["threads"]["batch_split"] is None
