

@pytest.mark.parametrize("name", NAMES)
def test_int8_file_bit_exact_with_litert(name):
    """edgelite's int8 file of each model, on its golden inputs, in both LiteRT kernel sets."""
    model = _convert(name, True)
    x = np.load(MODELS / f"{name}.golden.npz")["input"]
    for i in range(0, len(x), 4):
        assert_bit_exact(model, [x[i:i + 1]])
