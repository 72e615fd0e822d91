"""Draws Dear ImGui (imgui-bundle 1.93, ImGui 1.92) draw data with moderngl.

The same class works headless (EGL context, offscreen framebuffer) and in a glfw window: it
draws into whatever framebuffer is bound and owns only its buffers, program and textures.

Import order: this module imports imgui_bundle at the top, and importing imgui_bundle sets
PYGLFW_LIBRARY, so whatever imports glfw must import this module (or imgui_bundle) first; then
the glfw package loads imgui-bundle's GLFW 3.5.1 and only that one (shared/PLATFORM.md).
"""

from __future__ import annotations

import ctypes

import moderngl
import numpy as np
from imgui_bundle import imgui

from ..errors import ViewerError
from ..render.shaders import load_program

VERTEX_FORMAT = "2f 2f 4f1"  # ImDrawVert: pos, uv, col as 4 normalized bytes = 20 bytes
ImTextureStatus = imgui.ImTextureStatus
# Straight-alpha "over" for color, as ImGui expects; alpha adds coverage (matters on translucent targets).
IMGUI_BLENDING = (moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA, moderngl.ONE, moderngl.ONE_MINUS_SRC_ALPHA)


class ImGuiRenderer:
    """One per GL context and ImGui context. Call ``render(imgui.get_draw_data(), fb_size)``
    after ``imgui.render()`` each frame, with the target framebuffer bound."""

    name = "boneviewer_moderngl"

    def __init__(self, ctx):
        if imgui.get_current_context() is None:
            raise ViewerError("ImGuiRenderer needs an ImGui context: call imgui.create_context() first")
        assert imgui.INDEX_SIZE == 4 and imgui.VERTEX_SIZE == 20, "imgui-bundle built with another layout"
        self.ctx = ctx
        self.textures: dict[int, moderngl.Texture] = {}  # ImTextureID (the GL name) -> texture
        self._program = load_program(ctx, "imgui.vert", "imgui.frag")
        self._program["u_texture"].value = 0
        self._vertices = ctx.buffer(reserve=1 << 16, dynamic=True)
        self._indices = ctx.buffer(reserve=1 << 16, dynamic=True)
        self._vao = ctx.vertex_array(self._program, [(self._vertices, VERTEX_FORMAT, "in_position", "in_uv", "in_color")],
                                     index_buffer=self._indices, index_element_size=4)
        io = imgui.get_io()
        # We create/update font textures ourselves (1.92 protocol) and honour vtx_offset (rebased on the CPU).
        io.backend_flags |= imgui.BackendFlags_.renderer_has_textures | imgui.BackendFlags_.renderer_has_vtx_offset
        # io.backend_renderer_name is a read-only const char* in imgui-bundle 1.93; the name lives in `name`.
        max_size = int(ctx.info.get("GL_MAX_TEXTURE_SIZE", 4096))
        platform_io = imgui.get_platform_io()
        platform_io.renderer_texture_max_width = platform_io.renderer_texture_max_height = max_size

    # --- textures (ImGui 1.92: the renderer creates and updates the font atlas on request) -------
    def update_textures(self, textures=None) -> None:
        """Serve pending requests; ``textures`` defaults to ``get_platform_io().textures``."""
        for tex in imgui.get_platform_io().textures if textures is None else textures:
            status = tex.status
            if status == ImTextureStatus.want_create:
                self._create_texture(tex)
            elif status == ImTextureStatus.want_updates:
                self._update_texture(tex)
            elif status == ImTextureStatus.want_destroy and tex.unused_frames > 0:  # not drawn this frame
                self._destroy_texture(tex)

    def _create_texture(self, tex) -> None:
        components = tex.bytes_per_pixel  # 4 (RGBA32, the default) or 1 (Alpha8)
        texture = self.ctx.texture((tex.width, tex.height), components, tex.get_pixels_array())
        if components == 1:
            texture.swizzle = "111R"  # Alpha8 is white with coverage in alpha
        texture.filter = (moderngl.LINEAR, moderngl.LINEAR)  # ImGui bakes AA lines assuming bilinear
        texture.repeat_x = texture.repeat_y = False
        self.textures[texture.glo] = texture
        tex.set_tex_id(texture.glo)
        tex.status = ImTextureStatus.ok

    def _update_texture(self, tex) -> None:
        texture = self.textures.get(tex.tex_id)
        if texture is None or texture.size != (tex.width, tex.height):
            self._destroy_texture(tex)
            self._create_texture(tex)
            return
        # Upload only the rectangle that changed (the union of tex.updates).
        r = tex.update_rect
        pixels = tex.get_pixels_array().reshape(tex.height, tex.width, tex.bytes_per_pixel)
        texture.write(np.ascontiguousarray(pixels[r.y:r.y + r.h, r.x:r.x + r.w]), viewport=(r.x, r.y, r.w, r.h))
        tex.status = ImTextureStatus.ok

    def _destroy_texture(self, tex) -> None:
        texture = self.textures.pop(tex.tex_id, None)
        if texture is not None:
            texture.release()
        tex.set_tex_id(0)  # ImTextureID_Invalid
        tex.status = ImTextureStatus.destroyed

    # --- drawing --------------------------------------------------------------------------------
    def render(self, draw_data, framebuffer_size=None) -> None:
        """Draw into the bound framebuffer of ``framebuffer_size`` pixels (default: display size
        times framebuffer scale). Blend, depth test, cull, scissor and viewport are restored."""
        self.update_textures(draw_data.textures)
        (dx, dy), (dw, dh) = draw_data.display_pos, draw_data.display_size
        sx, sy = draw_data.framebuffer_scale
        fb_w, fb_h = framebuffer_size or (int(dw * sx), int(dh * sy))
        if fb_w <= 0 or fb_h <= 0 or draw_data.total_vtx_count == 0:
            return
        ctx, fbo = self.ctx, self.ctx.fbo
        if fbo is None:
            raise ViewerError("ImGuiRenderer.render needs a bound framebuffer (call framebuffer.use())")
        draws = self._upload(draw_data)

        # Orthographic projection of the display rect, column-major, Y down like ImGui.
        left, right, top, bottom = dx, dx + dw, dy, dy + dh
        self._program["u_projection"].write(np.array([
            [2 / (right - left), 0, 0, 0], [0, 2 / (top - bottom), 0, 0], [0, 0, -1, 0],
            [(right + left) / (left - right), (top + bottom) / (bottom - top), 0, 1]], np.float32).tobytes())

        viewport, scissor, wireframe = ctx.viewport, ctx.scissor, ctx.wireframe
        # The scope puts back the enable flags moderngl recorded (ctx.enable/disable/enable_only, which
        # every drawer here uses); moderngl offers no other way to read them.
        scope = ctx.scope(fbo, enable_only=moderngl.BLEND)  # blend on; no depth test, no culling
        try:
            with scope:
                ctx.viewport = (0, 0, fb_w, fb_h)
                ctx.blend_equation = moderngl.FUNC_ADD
                ctx.blend_func = IMGUI_BLENDING
                ctx.wireframe = False
                bound = None
                for clip, tex_id, count, first in draws:
                    # Clip rect from display space to framebuffer pixels; GL's scissor origin is bottom-left.
                    x1, y1 = max((clip.x - dx) * sx, 0), max((clip.y - dy) * sy, 0)
                    x2, y2 = min((clip.z - dx) * sx, fb_w), min((clip.w - dy) * sy, fb_h)
                    texture = self.textures.get(tex_id)
                    if x2 <= x1 or y2 <= y1 or texture is None:
                        continue
                    ctx.scissor = (int(x1), int(fb_h - y2), int(x2 - x1), int(y2 - y1))
                    if texture is not bound:
                        texture.use(0)
                        bound = texture
                    self._vao.render(moderngl.TRIANGLES, vertices=count, first=first)
        finally:
            scope.release()
            ctx.viewport, ctx.wireframe = viewport, wireframe
            # moderngl reports a disabled scissor as the whole framebuffer; restore it as disabled.
            ctx.scissor = None if tuple(scissor) == (0, 0, *fbo.size) else scissor
            ctx.blend_func = moderngl.DEFAULT_BLENDING  # moderngl cannot read it back; its default

    def _upload(self, draw_data) -> list:
        """One vertex and one index upload for all lists; returns (clip, tex_id, count, first) per command."""
        vertex_chunks, index_chunks, draws = [], [], []
        vtx_base = idx_base = 0
        for draw_list in draw_data.cmd_lists:
            vtx, idx = draw_list.vtx_buffer, draw_list.idx_buffer
            vertex_chunks.append(ctypes.string_at(vtx.data_address(), vtx.size() * imgui.VERTEX_SIZE))
            # Indices are relative to their list (and command vtx_offset); moderngl has no base-vertex
            # draw, so rebase them here into the one shared vertex buffer.
            indices = np.frombuffer(ctypes.string_at(idx.data_address(), idx.size() * 4), np.uint32) + np.uint32(vtx_base)
            for cmd in draw_list.cmd_buffer:
                if cmd.vtx_offset:
                    indices[cmd.idx_offset:cmd.idx_offset + cmd.elem_count] += np.uint32(cmd.vtx_offset)
                draws.append((cmd.clip_rect, cmd.get_tex_id(), cmd.elem_count, idx_base + cmd.idx_offset))
            index_chunks.append(indices)
            vtx_base, idx_base = vtx_base + vtx.size(), idx_base + idx.size()
        for buffer, data in ((self._vertices, b"".join(vertex_chunks)),
                             (self._indices, np.concatenate(index_chunks).tobytes())):
            if len(data) > buffer.size:
                buffer.orphan(max(buffer.size * 2, len(data)))  # same GL name, so the VAO stays valid
            buffer.write(data)
        return draws

    def release(self) -> None:
        """Free every GL object; ImGui's textures (if its context still exists) go back to destroyed."""
        for texture in self.textures.values():
            texture.release()
        if imgui.get_current_context() is not None:
            for tex in imgui.get_platform_io().textures:
                if tex.tex_id in self.textures:
                    tex.set_tex_id(0)
                    tex.status = ImTextureStatus.destroyed
            imgui.get_io().backend_flags &= ~(imgui.BackendFlags_.renderer_has_textures
                                               | imgui.BackendFlags_.renderer_has_vtx_offset)
        self.textures.clear()
        for resource in (self._vao, self._vertices, self._indices, self._program):
            resource.release()
