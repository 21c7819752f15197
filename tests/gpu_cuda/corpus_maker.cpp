// Writes the real-photograph codestreams that the CUDA tests and benchmarks use:
// flower.png crops (and a 3840x2160 mosaic of mirrored crops for 2160 content),
// encoded with OpenJPEG. Run here; the files travel to the GPU machine.
//   gpu_corpus_maker <dir>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "packetizer/openjpeg_encoder.hpp"
#include "media/image_io.hpp"

using namespace j2k;

namespace {

PlanarImage mosaic_2160(const PlanarImage& rgb) {
  // 2x2 crops of 1920x1080, the right and bottom ones mirrored, so edges continue.
  PlanarImage out = media::crop(rgb, 0, 0, 3840, 2160 > rgb.height ? rgb.height : 2160);
  out.width = 3840;
  out.height = 2160;
  PlanarImage src = media::crop(rgb, 200, 200, 1920, 1080);
  for (std::size_t c = 0; c < out.planes.size(); ++c) {
    Plane& p = out.planes[c];
    p.width = 3840;
    p.height = 2160;
    p.samples.assign(3840u * 2160u, 0);
    const Plane& s = src.planes[c];
    for (int y = 0; y < 2160; ++y)
      for (int x = 0; x < 3840; ++x) {
        const int sx = x < 1920 ? x : 3839 - x, sy = y < 1080 ? y : 2159 - y;
        p.samples[static_cast<std::size_t>(y) * 3840 + x] = s.samples[static_cast<std::size_t>(sy) * 1920 + sx];
      }
  }
  return out;
}

/// `tile_parts`: one tile-part per component (as cinema and broadcast encoders write frames),
/// which tier-2 reads one tile-part per thread.
bool write(const std::filesystem::path& dir, const std::string& name, const PlanarImage& img, bool lossless,
           std::size_t bytes, int resolutions, bool tile_parts = false, int codeblock = 64) {
  packetizer::EncodeParams ep;
  ep.tile_part_per_component = tile_parts;
  ep.codeblock = codeblock;
  ep.lossless = lossless;
  ep.target_bytes = bytes;
  ep.resolutions = resolutions;
  ep.threads = 2;
  auto cs = packetizer::encode_openjpeg(img, ep);
  if (!cs) {
    std::fprintf(stderr, "%s: %s\n", name.c_str(), cs.error().message.c_str());
    return false;
  }
  std::ofstream(dir / name, std::ios::binary).write(reinterpret_cast<const char*>(cs->data()), static_cast<std::streamsize>(cs->size()));
  std::printf("%s: %zu bytes\n", name.c_str(), cs->size());
  return true;
}

int resolutions_for(int w, int h) {
  int r = 1;
  while (r < 6 && (std::min(w, h) >> r) >= 1) ++r;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: gpu_corpus_maker <dir> [--bench]\n");
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  auto rgb = media::load_rgb(std::string(J2K_MEDIA_DIR) + "/flower.png");
  if (!rgb) {
    std::fprintf(stderr, "flower.png: %s\n", rgb.error().message.c_str());
    return 1;
  }
  bool ok = true;
  // Test corpus: odd sizes, both wavelets, 4:2:2 / 4:2:0 / RGB with MCT.
  struct Crop { int w, h, x, y; };
  for (Crop c : {Crop{41, 39, 700, 500}, Crop{1, 64, 900, 300}, Crop{64, 1, 900, 300}, Crop{1919, 1081, 100, 200}}) {
    const PlanarImage win = media::crop(*rgb, c.x, c.y, c.w, c.h);
    const int res = resolutions_for(c.w, c.h);
    const std::string base = std::to_string(c.w) + "x" + std::to_string(c.h);
    if (c.w >= 2) {  // 4:2:2 needs two columns
      PlanarImage y422 = media::rgb_to_ycbcr709(win, 10, 2);
      ok &= write(dir, base + "_422_10_53.j2k", y422, true, 0, res);
      ok &= write(dir, base + "_422_10_97.j2k", y422, false, 0, res);
      ok &= write(dir, base + "_422_10_97_tp.j2k", y422, false, 0, res, true);
    }
    PlanarImage w444 = win;
    w444.colour = ColourCoding::rgb;
    ok &= write(dir, base + "_rgb_8_53_mct.j2k", w444, true, 0, res);
    ok &= write(dir, base + "_rgb_8_97_mct.j2k", w444, false, 0, res);
  }
  if (argc > 2 && std::string(argv[2]) == "--bench") {
    // Benchmark content: 1080 4:2:2 10-bit at ~5 Mbit/frame, 2160 4:2:2 10-bit at ~20 and ~8 Mbit/frame.
    PlanarImage hd = media::rgb_to_ycbcr709(media::crop(*rgb, 200, 200, 1920, 1080), 10, 2);
    const std::filesystem::path bdir = dir / "bench";
    std::filesystem::create_directories(bdir);
    ok &= write(bdir, "photo_1080_422_10_97.j2k", hd, false, 5'000'000 / 8, 6);
    ok &= write(bdir, "photo_1080_422_10_53.j2k", hd, true, 0, 6);
    PlanarImage uhd = media::rgb_to_ycbcr709(mosaic_2160(*rgb), 10, 2);
    ok &= write(bdir, "photo_2160_422_10_97.j2k", uhd, false, 20'000'000 / 8, 7);
    // GPU tier-1 targets (issue 15): 2160 at ~8 Mbit/frame, lossless 1080 RGB.
    ok &= write(bdir, "photo_2160_422_10_97_8m.j2k", uhd, false, 8'000'000 / 8, 7);
    PlanarImage hd_rgb = media::crop(*rgb, 200, 200, 1920, 1080);
    hd_rgb.colour = ColourCoding::rgb;
    ok &= write(bdir, "photo_1080_rgb_8_53.j2k", hd_rgb, true, 0, 6);
    // The same frames with one tile-part per component.
    ok &= write(bdir, "photo_1080_422_10_97_tp.j2k", hd, false, 5'000'000 / 8, 6, true);
    ok &= write(bdir, "photo_2160_422_10_97_8m_tp.j2k", uhd, false, 8'000'000 / 8, 7, true);
    ok &= write(bdir, "photo_1080_rgb_8_53_tp.j2k", hd_rgb, true, 0, 6, true);
    ok &= write(bdir, "photo_2160_422_10_97_tp.j2k", uhd, false, 20'000'000 / 8, 7, true);
    // And with 32 x 32 code-blocks, as IMF's JPEG 2000 profiles and broadcast players' input
    // constraints (e.g. 1080p: 32 x 32, CPRL, a tile-part per component) have them written:
    // a quarter of the samples per block, so a quarter of the longest MQ chain.
    ok &= write(bdir, "photo_1080_422_10_97_cb32_tp.j2k", hd, false, 5'000'000 / 8, 6, true, 32);
    ok &= write(bdir, "photo_2160_422_10_97_8m_cb32_tp.j2k", uhd, false, 8'000'000 / 8, 7, true, 32);
    ok &= write(bdir, "photo_1080_rgb_8_53_cb32_tp.j2k", hd_rgb, true, 0, 6, true, 32);
  }
  return ok ? 0 : 1;
}
