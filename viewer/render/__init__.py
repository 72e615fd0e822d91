"""The renderer: moderngl programs, meshes, materials and light (knows GL, never ImGui), and the
headless EGL target (``viewer.render.headless``). A regular package, so that tools reading the
source (the API reference's builder) find its modules as Python does."""
