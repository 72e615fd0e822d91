"""Labelled images for pose estimation: ``boneviewer synth``, a map over draws.

- ``labels``: the labels in numpy (GL-free): the OpenCV camera of a GL camera, keypoints with
  visibility against the depth image, parts of the vertices, 16-bit depth, COCO boxes and RLE.
- ``job``: image i as a pure function of (seed, i, options, the catalogue): the draw, the pose,
  the one labelled draw (colour, part index, depth), the labels and the PNG bytes; the worker's task.
- ``run``: the catalogue of models, the images mapped over the local pool or Ray, written whole
  as they come back (an interrupted run resumes), annotations.json assembled from label files.
- ``report``: OUT/index.html, the preview page, from the template beside it.
"""
