"""What the kernels of several op families share: quantization parameters and
requantization (requantize.py), the exact int32 accumulators (accumulator.py), fused
activations (fused.py), window geometry (window.py), FULLY_CONNECTED's shapes
(fc_geometry.py) and TRANSPOSE_CONV's scatter (transpose_scatter.py), lookup tables (lut.py,
pair_table.py, quantized_activations.py), fixed-point and Eigen math (fixed_point16.py,
eigen_math.py), ADD / SUB code paths (add_paths.py), and the equal-parameter checks of
ops that move quantized values (same_params.py). No OpDef records live here.
"""
