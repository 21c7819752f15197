#include "ui/deinterlace.hpp"

#include <algorithm>
#include <cstdlib>

namespace j2k::ui {

std::optional<Deinterlace> parse_deinterlace(std::string_view text) {
  if (text == "off" || text == "weave") return Deinterlace::off;
  if (text == "bob") return Deinterlace::bob;
  if (text == "adaptive" || text == "auto") return Deinterlace::adaptive;
  return std::nullopt;
}

const char* deinterlace_name(Deinterlace mode) {
  switch (mode) {
    case Deinterlace::off: return "off";
    case Deinterlace::bob: return "bob";
    case Deinterlace::adaptive: return "motion-adaptive";
  }
  return "?";
}

namespace {

struct Rgb {
  int c[3];
};

class View {
 public:
  explicit View(const gpu::RgbaImage& img) : img_(img) {}
  /// The pixel at (x clamped to the picture, y).
  Rgb at(int x, int y) const {
    x = std::clamp(x, 0, img_.width - 1);
    const std::uint8_t* p = img_.pixels.data() + (static_cast<std::size_t>(y) * img_.width + x) * 4;
    return {{p[0], p[1], p[2]}};
  }

 private:
  const gpu::RgbaImage& img_;
};

int sad(const Rgb& a, const Rgb& b) {
  return std::abs(a.c[0] - b.c[0]) + std::abs(a.c[1] - b.c[1]) + std::abs(a.c[2] - b.c[2]);
}

Rgb average(const Rgb& a, const Rgb& b) {
  return {{(a.c[0] + b.c[0] + 1) >> 1, (a.c[1] + b.c[1] + 1) >> 1, (a.c[2] + b.c[2] + 1) >> 1}};
}

int largest_change(const Rgb& a, const Rgb& b) {
  return std::max({std::abs(a.c[0] - b.c[0]), std::abs(a.c[1] - b.c[1]), std::abs(a.c[2] - b.c[2])});
}

}  // namespace

void deinterlace_field(const gpu::RgbaImage& frame, const gpu::RgbaImage* previous, int field_parity,
                       Deinterlace mode, gpu::RgbaImage& out) {
  const int w = frame.width, h = frame.height;
  out.width = w;
  out.height = h;
  out.pixels.resize(static_cast<std::size_t>(w) * h * 4);
  const bool has_prev = previous && previous->width == w && previous->height == h &&
                        previous->pixels.size() == frame.pixels.size();
  const View cur(frame);
  const std::optional<View> prev = has_prev ? std::optional<View>(View(*previous)) : std::nullopt;
  for (int y = 0; y < h; ++y) {
    std::uint8_t* o = out.pixels.data() + static_cast<std::size_t>(y) * w * 4;
    const bool own_line = mode == Deinterlace::off || (y & 1) == (field_parity & 1) || h < 2;
    const int ya = y - 1 < 0 ? y + 1 : y - 1;   // the field's lines above and below
    const int yb = y + 1 > h - 1 ? y - 1 : y + 1;
    for (int x = 0; x < w; ++x, o += 4) {
      const Rgb c = cur.at(x, y);
      Rgb v = c;
      if (!own_line) {
        // Edge-based line averaging: vertical, or along one pixel to the left or right.
        const Rgb a0 = cur.at(x, ya), b0 = cur.at(x, yb);
        const Rgb am = cur.at(x - 1, ya), bp = cur.at(x + 1, yb);
        const Rgb ap = cur.at(x + 1, ya), bm = cur.at(x - 1, yb);
        int best = sad(a0, b0);
        v = average(a0, b0);
        if (const int cm = sad(am, bp); cm < best) {
          best = cm;
          v = average(am, bp);
        }
        if (sad(ap, bm) < best) v = average(ap, bm);
        if (mode == Deinterlace::adaptive && prev) {
          int m = 0;
          for (int dx = -1; dx <= 1; ++dx)
            m = std::max({m, largest_change(cur.at(x + dx, y), prev->at(x + dx, y)),
                          largest_change(cur.at(x + dx, ya), prev->at(x + dx, ya)),
                          largest_change(cur.at(x + dx, yb), prev->at(x + dx, yb))});
          for (int k = 0; k < 3; ++k) v.c[k] = std::clamp(v.c[k], c.c[k] - 2 * m, c.c[k] + 2 * m);
        }
      }
      o[0] = static_cast<std::uint8_t>(v.c[0]);
      o[1] = static_cast<std::uint8_t>(v.c[1]);
      o[2] = static_cast<std::uint8_t>(v.c[2]);
      o[3] = 255;
    }
  }
}

// The same steps as deinterlace_field, on integer codes held in floats (exact).
const char* const kDeinterlaceFragmentShader = R"(#version 120
uniform sampler2D u_cur;
uniform sampler2D u_prev;
uniform vec2 u_size;
uniform float u_parity;
uniform float u_mode;
uniform float u_has_prev;

vec3 fetch(sampler2D t, float x, float y) {
  x = clamp(x, 0.0, u_size.x - 1.0);
  return floor(texture2D(t, (vec2(x, y) + 0.5) / u_size).rgb * 255.0 + 0.5);
}
float sad(vec3 a, vec3 b) { return dot(abs(a - b), vec3(1.0)); }
vec3 average(vec3 a, vec3 b) { return floor((a + b + 1.0) * 0.5); }
float largest_change(vec3 a, vec3 b) { vec3 d = abs(a - b); return max(d.r, max(d.g, d.b)); }

void main() {
  float x = floor(gl_FragCoord.x);
  float y = floor(gl_FragCoord.y);
  vec3 c = fetch(u_cur, x, y);
  vec3 v = c;
  if (u_mode > 0.5 && mod(y, 2.0) != u_parity && u_size.y >= 2.0) {
    float ya = y - 1.0 < 0.0 ? y + 1.0 : y - 1.0;
    float yb = y + 1.0 > u_size.y - 1.0 ? y - 1.0 : y + 1.0;
    vec3 a0 = fetch(u_cur, x, ya), b0 = fetch(u_cur, x, yb);
    vec3 am = fetch(u_cur, x - 1.0, ya), bp = fetch(u_cur, x + 1.0, yb);
    vec3 ap = fetch(u_cur, x + 1.0, ya), bm = fetch(u_cur, x - 1.0, yb);
    float best = sad(a0, b0);
    v = average(a0, b0);
    float cm = sad(am, bp);
    if (cm < best) { best = cm; v = average(am, bp); }
    if (sad(ap, bm) < best) v = average(ap, bm);
    if (u_mode > 1.5 && u_has_prev > 0.5) {
      float m = 0.0;
      for (int i = -1; i <= 1; ++i) {
        float dx = float(i);
        m = max(m, largest_change(fetch(u_cur, x + dx, y), fetch(u_prev, x + dx, y)));
        m = max(m, largest_change(fetch(u_cur, x + dx, ya), fetch(u_prev, x + dx, ya)));
        m = max(m, largest_change(fetch(u_cur, x + dx, yb), fetch(u_prev, x + dx, yb)));
      }
      v = clamp(v, c - 2.0 * m, c + 2.0 * m);
    }
  }
  gl_FragColor = vec4(v / 255.0, 1.0);
}
)";

}  // namespace j2k::ui
