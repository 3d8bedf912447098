"""Data of any size: shards (source.py) and running a job over them here, in a process
pool or on Ray (execute.py), with results merged exactly by the job's owner."""

from .execute import connect_ray, map_shards, worker_cache
from .source import PIECE_SAMPLES, FilePiece, Shard, shards_of

__all__ = ["Shard", "FilePiece", "shards_of", "PIECE_SAMPLES", "map_shards", "worker_cache",
           "connect_ray"]
