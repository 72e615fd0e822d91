"""`boneviewer serve`: a render server, headless: viewer.remote clients pose the model and get
images back, drawn as `boneviewer render` draws them."""

from __future__ import annotations

import time

from .common import (add_shadow_options, shadow_options, add_bvh_options, add_frame_options, add_listen_options, add_look_options, add_skinning_option, add_springs_option,
                     frame_options, look_options, scene_index)

IDLE_WAIT = 0.5            # seconds between polls when nothing plays and nothing comes
PLAYING_WAIT = 1.0 / 60.0  # a playing clip moves on at about 60 steps a second


def add_parser(commands, common):
    serve = commands.add_parser("serve", parents=[common], help="serve poses and renders to viewer.remote clients",
                                description="Load MODEL (default: the built-in character) in a headless context "
                                            "(EGL, no display) and serve viewer.remote clients: they set poses, "
                                            "the camera and the time, and get images rendered as `boneviewer "
                                            "render` renders them (with the same look options, and --no-skeleton, --no-grid, --background, "
                                            "--show-environment and the shadow options as the renders' defaults, "
                                            "which a client's render() may change for its image; "
                                            "set_skinning and set_springs change --skinning and --springs). An "
                                            "animated model starts paused at its first clip's start, as `render` "
                                            "shows it; spring bones are simulated from the clip's start up to the "
                                            "time shown.")
    serve.add_argument("model", nargs="?", help="model file: .gltf, .glb, .fbx, .usd/.usda/.usdc/.usdz or .bvh (default: the built-in character)")
    serve.add_argument("--scene", type=scene_index, metavar="N",
                       help="which scene of a glTF file to serve (default: the file's default scene)")
    add_listen_options(serve, required=True)
    add_frame_options(serve)  # what every render shows unless the client's render() says otherwise
    add_look_options(serve)
    add_shadow_options(serve, default=False)
    add_skinning_option(serve)
    add_springs_option(serve)
    add_bvh_options(serve.add_argument_group("BVH, FBX and USD files"))
    serve.set_defaults(run=run)


def run(args) -> int:
    from ..editing.editor import Editor
    from ..look import apply_frame
    from ..options import RenderOptions
    from ..remote.target import RemoteTarget
    from ..render.headless import HeadlessRenderer
    from .common import load_scene, start_listening

    class HeadlessTarget(RemoteTarget):
        """Renders on the command's own EGL context, as `render` does."""

        def render(self, size, frame):
            headless.resize(size)
            options = apply_frame(apply_frame(RenderOptions(**look), **defaults), **frame)  # the client's over serve's
            return headless.render(self.scene, self.camera_for(size), options)

    look = look_options(args)  # the look every render has, as `render` takes it; a bad file said before any GL work

    look.update(shadow_options(args))
    defaults = frame_options(args)  # --no-skeleton, --no-grid, --background, --show-environment
    scene = load_scene(args)
    editor = Editor(scene)  # paused; the first clip (if any) at its start, as `render` shows it
    editor.seek(0.0)
    with HeadlessRenderer((256, 256)) as headless:
        target = HeadlessTarget(editor)
        server = start_listening(args)
        try:
            last = time.perf_counter()
            while True:
                server.wait(PLAYING_WAIT if editor.playback.playing else IDLE_WAIT)
                now = time.perf_counter()
                target.advance(now - last)
                last = now
                server.poll(target)
        finally:
            server.close()
