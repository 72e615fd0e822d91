"""Motion: clips sampled into pose buffers, the mixer that blends them (Babylon.js's numbers),
layers of tweaks above it, 1-D blend nodes, the mix as a file and baked into one clip.

Model code (numpy, no GL): it imports the bone model; ``Scene.mixer`` makes a scene's mixer
the first time it is asked for. See docs/mixing.md.
"""

from .bake import bake
from .mask import BoneMask
from .mixer import Action, Blend1D, Edit, Layer, Mixer

__all__ = ["Action", "Blend1D", "BoneMask", "Edit", "Layer", "Mixer", "bake"]
