#pragma once
// Interlaced pictures on a progressive screen.
//
// An interlaced stream brings woven frames: two fields, a field period apart in time, on
// alternate lines. Shown as they are (weave), anything that moves is combed, and the motion
// runs at the frame rate, half of what the camera took. The player shows each woven frame as
// two pictures instead, one per field, at the field rate (50 a second for 1080i50), each
// completed from its own field's lines:
//
//   off       the woven frame, once (the frame as transmitted: for checking the weave itself)
//   bob       the missing lines interpolated from the field's own lines above and below,
//             along the most similar of three directions (edge-based line averaging, ELA:
//             vertical, or one pixel to either side), so that slanted edges stay whole
//   adaptive  (the default) per pixel, by motion: the interpolated value, but no further from
//             the other field's line than twice what the picture changed there over a frame
//             period. That change is the largest, of R, G and B, over the missing pixel's
//             neighbourhood (its line and the field's lines above and below it, one pixel to
//             either side) between this frame and the previous one: the same lines, a frame
//             period apart. Where the picture stands still the other field's line is shown
//             (full vertical detail, no flicker); where it moves a little the interpolation is
//             kept near it; where it moves, the interpolation stands. Without a previous frame
//             of the same size: as bob. (On a camera panning over a photograph it comes within
//             0.3 dB of bob; on a still one it gives the picture back unchanged, where bob loses
//             its vertical detail: tests/ui/deinterlace_test.cpp.)
//
// The player runs this as a fragment shader (kDeinterlaceFragmentShader) on the woven frame
// in a texture, into a texture the picture's size, which is then scaled to the window as a
// progressive picture is. deinterlace_field is the same math on the CPU: the reference the
// shader is tested against (equal to the code), and what tests and tools use without GL.
// Every value is computed on integer codes (0-255), so that both give the same bytes.
#include <optional>
#include <string_view>

#include "gpu/colour.hpp"

namespace j2k::ui {

enum class Deinterlace { off, bob, adaptive };

/// "off" (or "weave"), "bob", "adaptive" (or "auto"); nullopt for anything else.
std::optional<Deinterlace> parse_deinterlace(std::string_view text);
const char* deinterlace_name(Deinterlace mode);

/// One field of the woven `frame` as a whole picture, into `out` (resized, reused): the lines
/// whose parity is `field_parity` (0: the even lines, the first of the frame among them; 1:
/// the odd ones) are the field's own and kept; the others are completed as `mode` says,
/// `previous` being the woven frame before (nullptr, or another size: none). Alpha is 255.
void deinterlace_field(const gpu::RgbaImage& frame, const gpu::RgbaImage* previous, int field_parity,
                       Deinterlace mode, gpu::RgbaImage& out);

/// GLSL 1.20 fragment shader of the same math. Uniforms: u_cur, u_prev (sampler2D, the woven
/// frames, sampled with GL_NEAREST), u_size (the picture's width and height), u_parity,
/// u_mode (0 off, 1 bob, 2 adaptive), u_has_prev (1 when u_prev holds the previous frame).
/// It is drawn over a viewport the picture's size; texture row 0 is the picture's first line.
extern const char* const kDeinterlaceFragmentShader;

}  // namespace j2k::ui
