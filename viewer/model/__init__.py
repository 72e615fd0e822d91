"""The bone model: numpy and pyrr only, nothing of GL, windows or ImGui."""

from .bone import Bone
from .crowd import Crowd
from .group import SkeletonGroup
from .mesh import SkinnedMesh
from .scene import Scene
from .skeleton import Skeleton
from .transform_node import TransformNode

__all__ = ["Bone", "Crowd", "Scene", "Skeleton", "SkeletonGroup", "SkinnedMesh", "TransformNode"]
