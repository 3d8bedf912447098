"""A layer's weights, found in either file layout.

Keras 3 stores a layer's variables by position (`vars/0`, `vars/1`, ... in creation order)
under a group found by the layer's name (each `vars` group carries it); sublayers (an RNN's
`cell`, a Bidirectional's `forward_layer`, MultiHeadAttention's `query_dense`) are subgroups.
Legacy .h5 files store them by name (`<layer>/<cell>/kernel:0`) in the group of the
top-level layer that owns them. A layer rule asks for its variables by name, in Keras'
creation order, and gets them from either layout.
"""

from __future__ import annotations

import numpy as np

from edgelite.errors import ModelFormatError

MAX_WEIGHT_ELEMENTS = 1 << 28


class LayerWeights:
    def __init__(self, where: str, k3_group=None, legacy: list | None = None,
                 scope: tuple[str, tuple] = ("", ())) -> None:
        self.where = where            # "layer 'name' (Class)"
        self._k3 = k3_group           # Keras 3: the layer's group
        self._legacy = legacy         # legacy: [(name parts after the layer, dataset)]
        self._scope = scope           # a wrapped layer's: (Keras 3 path, legacy prefixes)

    def scoped(self, k3_path: str, legacy_prefix: str) -> "LayerWeights":
        """The weights of a wrapped layer (Bidirectional's forward_layer, TimeDistributed's
        layer): its Keras 3 group path and a prefix of its legacy name part ('' if none)."""
        path = "/".join(filter(None, (self._scope[0], k3_path)))
        prefixes = self._scope[1] + ((legacy_prefix,) if legacy_prefix else ())
        return LayerWeights(self.where, self._k3, self._legacy, (path, prefixes))

    def arrays(self, names, sub: tuple[str, str] = ("", "")) -> list[np.ndarray]:
        """The variables `names` (in Keras' creation order). `sub` picks a sublayer:
        (its Keras 3 group path, a prefix of its legacy name part), e.g. ("cell", "")."""
        names = list(names)
        if self._k3 is not None:
            return self._k3_arrays(names, "/".join(filter(None, (self._scope[0], sub[0]))))
        return self._legacy_arrays(names, self._scope[1] + ((sub[1],) if sub[1] else ()))

    def _k3_arrays(self, names, path: str) -> list[np.ndarray]:
        group = self._k3
        for part in filter(None, path.split("/")):
            group = group.get(part) if hasattr(group, "get") else None
            if group is None:
                raise ModelFormatError(f"{self.where}: the weights file has no {path!r} group")
        stored = group.get("vars")
        count = 0 if stored is None else len(stored)
        if count != len(names):
            raise ModelFormatError(f"{self.where}: the weights file holds {count} variables "
                                   f"{'in ' + repr(path) + ' ' if path else ''}where the "
                                   f"config needs {len(names)} ({', '.join(names)})")
        return [_read(stored[str(i)], self.where) for i in range(count)]

    def _legacy_arrays(self, names, prefixes: tuple) -> list[np.ndarray]:
        found = {}
        for parts, dataset in self._legacy or ():
            middle = parts[:-1]
            if not all(any(p.startswith(prefix) for p in middle) for prefix in prefixes):
                continue
            key = parts[-1].split(":")[0]
            found.setdefault(key, dataset)
        missing = [n for n in names if n not in found]
        if missing:
            raise ModelFormatError(f"{self.where}: the weights file has no "
                                   f"{', '.join(missing)}"
                                   f"{' of ' + '/'.join(prefixes) if prefixes else ''}")
        return [_read(found[n], self.where) for n in names]


def _read(dataset, where: str) -> np.ndarray:
    if getattr(dataset, "shape", None) is None or \
            int(np.prod(dataset.shape, dtype=np.int64)) > MAX_WEIGHT_ELEMENTS:
        raise ModelFormatError(f"{where}: a weight is not an array of a sane size")
    value = np.asarray(dataset)
    if value.dtype.kind == "f":
        return value.astype(np.float32)
    return value


class WeightIndex:
    """Finds each layer's weights: `layer(scope, where)` with scope the chain of model
    (nested Functional / Sequential) names down to the layer's own name."""

    def __init__(self, root, legacy: bool) -> None:
        self.root = root
        self.legacy = legacy

    def layer(self, scope: tuple[str, ...], where: str) -> LayerWeights:
        if self.legacy:
            return LayerWeights(where, legacy=self._legacy_entries(scope))
        group = self.root
        for name in scope:
            group = _k3_child(group, name)
            if group is None:
                return LayerWeights(where, legacy=[])  # no weights stored for it
        return LayerWeights(where, k3_group=group)

    def _legacy_entries(self, scope) -> list:
        group = self.root.get(scope[0])
        if group is None:
            return []
        names = [n.decode() if isinstance(n, bytes) else str(n)
                 for n in group.attrs.get("weight_names", [])]
        entries = []
        for name in names:
            # "layer/kernel:0" (Keras 2), "model/layer/kernel" (Keras 3's .h5, nested):
            # what follows the layer's own name; a nested model's group holds several layers
            parts = tuple(name.split("/"))
            if scope[-1] in parts[:-1]:
                rest = parts[parts.index(scope[-1]) + 1:]
            elif len(scope) == 1:
                rest = parts[1:] if len(parts) > 1 else parts
            else:
                continue
            entries.append((rest, group.get(name)))
        return entries


def _k3_child(container, name: str):
    """The group of the layer called `name` inside a model's group (its `layers` group)."""
    layers = container.get("layers")
    if layers is None:
        return None
    for key in layers:
        group = layers[key]
        vars_group = group.get("vars") if hasattr(group, "get") else None
        if vars_group is not None and _attr_name(vars_group) == name:
            return group
    return None


def _attr_name(group) -> str | None:
    value = group.attrs.get("name")
    return value.decode() if isinstance(value, bytes) else value
