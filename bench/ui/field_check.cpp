// Checks a field that j2kplay drew against ui::deinterlace_field: reads FILE.field.png,
// FILE.frame.png, FILE.previous.png and FILE.field.json (written by j2kplay --screenshot FILE
// while a field of an interlaced stream was on screen), prints how many bytes differ and by
// how much, and exits 0 when none does.
//
//   field_check FILE
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "media/image_io.hpp"
#include "ui/deinterlace.hpp"

namespace {

bool load(const std::string& path, j2k::gpu::RgbaImage& out) {
  auto img = j2k::media::load_rgb(path);
  if (!img) {
    fmt::print(stderr, "{}: {}\n", path, img.error().message);
    return false;
  }
  out.width = img->width;
  out.height = img->height;
  out.pixels.resize(static_cast<std::size_t>(out.width) * out.height * 4);
  for (int y = 0; y < out.height; ++y)
    for (int x = 0; x < out.width; ++x)
      for (int c = 0; c < 4; ++c)
        out.pixels[(static_cast<std::size_t>(y) * out.width + x) * 4 + c] =
            static_cast<std::uint8_t>(c < 3 ? img->planes[static_cast<std::size_t>(c)].at(x, y) : 255);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fmt::print(stderr, "usage: field_check FILE   (the --screenshot FILE of a j2kplay run on an interlaced stream)\n");
    return 2;
  }
  const std::string base = argv[1];
  std::ifstream about_file(base + ".field.json");
  std::stringstream text;
  text << about_file.rdbuf();
  const auto about = nlohmann::json::parse(text.str(), nullptr, false);
  if (about.is_discarded()) {
    fmt::print(stderr, "{}.field.json: missing or not JSON (no field was on screen?)\n", base);
    return 1;
  }
  const auto mode = j2k::ui::parse_deinterlace(about.value("mode", "") == "motion-adaptive" ? "adaptive"
                                                                                           : about.value("mode", ""));
  j2k::gpu::RgbaImage field, frame, previous, reference;
  if (!mode || !load(base + ".field.png", field) || !load(base + ".frame.png", frame)) return 1;
  const bool has_previous = about.value("previous", false) && load(base + ".previous.png", previous);
  j2k::ui::deinterlace_field(frame, has_previous ? &previous : nullptr, about.value("parity", 0), *mode, reference);
  if (reference.pixels.size() != field.pixels.size()) {
    fmt::print("{}: the field is {}x{}, the frame {}x{}\n", base, field.width, field.height, frame.width, frame.height);
    return 1;
  }
  std::size_t differ = 0;
  int largest = 0;
  for (std::size_t i = 0; i < field.pixels.size(); ++i) {
    const int d = std::abs(field.pixels[i] - reference.pixels[i]);
    differ += d != 0;
    largest = std::max(largest, d);
  }
  fmt::print("{}: {}x{}, field parity {}, {}{}: {} of {} bytes differ from the CPU reference (largest {})\n", base,
             field.width, field.height, about.value("parity", 0), j2k::ui::deinterlace_name(*mode),
             has_previous ? " with the previous frame" : "", differ, field.pixels.size(), largest);
  return differ == 0 ? 0 : 1;
}
