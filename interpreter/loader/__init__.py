"""Reading a .tflite file: the flatbuffer read and validated (bounds, sizes, limits) into
plain objects (model.py, flatbuf.py, model_objects.py), sparse constants densified
(sparsity.py). Nothing here runs a model.
"""
