"""Paths to the test data that many test modules share (a plain module, not a test module)."""

from pathlib import Path

DATA_DIR = Path(__file__).parent / "data"
SAMPLES_DIR = DATA_DIR / "gltf-samples"
ROBOT = SAMPLES_DIR / "RobotExpressive" / "RobotExpressive.glb"
FOX = SAMPLES_DIR / "Fox" / "Fox.glb"
CESIUM_MAN = SAMPLES_DIR / "CesiumMan" / "CesiumMan.glb"
