"""What one glTF file may cost, checked before anything is allocated or walked.

The loader reads these module attributes when it checks, so a test can lower one.
"""

from ..sources import MAX_GLTF_JSON_BYTES

MAX_ELEMENTS = 50_000_000  # components of one accessor
MAX_BYTES = 1 << 30  # one file, buffer or accessor
MAX_TOTAL_BYTES = 1 << 30  # all accessor data and decoded images of one model
MAX_JSON_BYTES = MAX_GLTF_JSON_BYTES  # parsed into Python objects, which take several times the text
MAX_IMAGE_SIDE = 16384  # pixels
MAX_DEPTH = 4096  # levels of the node hierarchy
MAX_MORPH_TARGETS = 256  # morph targets of one mesh (as viewer.model.morph.MAX_MORPH_TARGETS)
