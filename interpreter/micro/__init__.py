"""TensorFlow Lite Micro modelled: the one model of TFLM's GreedyMemoryPlanner (plan.py:
buffer lifetimes and offsets; converter/passes/order_for_memory.py scores op orders
with it), the arena a model needs beside its tensors (arena.py), the flash and RAM per
layer (footprint.py), and which ops TFLM refuses for uint8 operands (uint8.py).
"""
