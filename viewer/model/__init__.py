"""The bone model: numpy and pyrr only, nothing of GL, windows or ImGui."""

from .bone import Bone
from .controllers import BoneIKController, BoneLookController
from .crowd import Crowd
from .group import SkeletonGroup
from .mesh import SkinnedMesh
from .placed import Placed, PlacedScenes
from .scene import Scene
from .skeleton import Skeleton
from .space import Space
from .transform_node import NodeTable, TransformNode

__all__ = ["Bone", "BoneIKController", "BoneLookController", "Crowd", "Scene", "Skeleton", "SkeletonGroup", "SkinnedMesh", "NodeTable", "Placed", "PlacedScenes", "Space", "TransformNode"]
