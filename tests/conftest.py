import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODELS = ROOT / "models"


@pytest.fixture
def models_dir() -> pathlib.Path:
    return MODELS
