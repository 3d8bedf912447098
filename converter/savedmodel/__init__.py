"""SavedModels and checkpoints read without TensorFlow: the tensor bundle (bundle.py, over the
sorted string table of table.py and the CRC-32C of crc32c.py)."""
