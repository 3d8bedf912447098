"""The 16x8 paths (int16 activations, int8 weights) of op families whose records live in
kernels/: CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED (affine.py), ADD / SUB / MUL
(arith.py), SOFTMAX (softmax.py) and the elementwise activations (unary.py).
"""
