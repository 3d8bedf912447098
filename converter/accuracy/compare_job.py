"""`compare` per shard: each process builds the two models' runners and the tensor matching
once (compare.Setup), then measures its shards into Tallies that merge exactly."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from ..shards.execute import worker_cache
from ..shards.source import Shard
from .sources import LoadedModel, load_inputs


@dataclass
class CompareJob:
    reference: LoadedModel
    quantized: LoadedModel
    key: str = ""

    def __post_init__(self) -> None:
        if not self.key:
            digest = hashlib.sha256(hashlib.sha256(self.reference.content).digest() +
                                    hashlib.sha256(self.quantized.content).digest())
            self.key = "compare:" + digest.hexdigest()

    def install(self, setup) -> None:
        """Use `setup` (built by the caller) in the calling process."""
        worker_cache(self.key)["setup"] = setup

    def setup(self):
        cache = worker_cache(self.key)
        if "setup" not in cache:
            from .compare import Setup
            cache["setup"] = Setup(self.reference.runner(keep_all=True),
                                   self.quantized.runner(keep_all=True),
                                   self.reference.content)
        return cache["setup"]

    def run(self, shard: Shard):
        setup = self.setup()
        data, _, what = shard.load()
        arrays = load_inputs(data, setup.ref.input_names, what, setup.ref.aliases)
        return setup.measure(arrays, (self.reference.label, self.quantized.label))
