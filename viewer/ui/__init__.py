"""User interface: Dear ImGui (imgui-bundle) drawn with moderngl.

Only this package imports imgui_bundle; viewer.model and viewer.render never do.
"""
