// Work follows the data (issue 9 item 4): what a codestream makes the decoder compute is
// asserted through DecodeStats' work counters (coding passes, IDWT samples, constant
// tile-components), never through timings. The cases come from the mutation campaign
// (bench/decoder/mutants/) and live in fuzz/decoder/corpus/work_*.j2k.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "corpus.hpp"
#include "decoder/coefficients.hpp"
#include "decoder/decoder.hpp"
#include "decoder/own_decoder.hpp"
#include "dsp.hpp"
#include "tier1/code_block_decoder.hpp"

using namespace j2k;
using namespace j2k::decoder;

namespace {

std::vector<std::uint8_t> fuzz_file(const std::string& name) {
  return test::read_file(std::string(J2K_SOURCE_DIR) + "/fuzz/decoder/corpus/" + name);
}

/// The picture the full path gives: every tile-component through the inverse DWT, with
/// no shortcut for those without data.
PlanarImage without_shortcuts(CoefficientFrame frame, int threads) {
  for (TileCoefficients& tile : frame.tiles)
    for (ComponentCoefficients& cc : tile.components) cc.zero = false;
  auto image = reconstruct(frame, threads);
  EXPECT_TRUE(image.ok()) << image.error().message;
  return image.ok() ? std::move(*image) : PlanarImage{};
}

void expect_same_planes(const PlanarImage& a, const PlanarImage& b, const std::string& what) {
  ASSERT_EQ(a.planes.size(), b.planes.size()) << what;
  for (std::size_t c = 0; c < a.planes.size(); ++c)
    ASSERT_TRUE(a.planes[c].samples == b.planes[c].samples) << what << ", component " << c;
}

}  // namespace

// A 627-byte mutant of seed_6 (one 24x17 tile) whose SIZ declares a 2400x1020 picture of
// the same tiles: 5999 tiles without any tile-part. Before, each cost a full inverse
// transform of zeros, a job per precinct and its coefficient buffers (OpenJPEG skips them:
// 0.02 s against our 0.35 s on a 7712-tile mutant). Now such a tile-component costs its
// geometry and a fill with the DC level, and the picture is the same bit for bit.
TEST(Work, TilesWithoutDataCostNoTransform) {
  const auto seed = fuzz_file("seed_6.j2k");
  const auto mutant = fuzz_file("work_empty_tiles_6000.j2k");
  auto dec = make_decoder(Backend::own);
  ASSERT_TRUE(dec.ok());
  DecodeOptions opt;
  auto small = (*dec)->decode(seed, opt);
  ASSERT_TRUE(small.ok()) << small.error().message;
  const DecodeStats one_tile = (*dec)->last_stats();
  auto big = (*dec)->decode(mutant, opt);
  ASSERT_TRUE(big.ok()) << big.error().message;
  const DecodeStats all = (*dec)->last_stats();

  // The work is that of the one tile with data.
  EXPECT_GT(one_tile.coding_passes, 0u);
  EXPECT_GT(one_tile.idwt_samples, 0u);
  EXPECT_EQ(all.coding_passes, one_tile.coding_passes);
  EXPECT_EQ(all.idwt_samples, one_tile.idwt_samples);
  EXPECT_EQ(all.codeblocks, one_tile.codeblocks);
  EXPECT_EQ(one_tile.constant_components, 0u);
  EXPECT_EQ(all.constant_components, 5999u * 3);

  // The tile with data decodes as alone; the others are mid-grey (RCT of zeros, DC shift).
  ASSERT_EQ(big->width, 2400);
  ASSERT_EQ(big->height, 1020);
  for (std::size_t c = 0; c < 3; ++c) {
    const Plane& p = big->planes[c];
    for (int y = 0; y < p.height; ++y)
      for (int x = 0; x < p.width; ++x) {
        const std::int32_t v = p.samples[static_cast<std::size_t>(y) * p.width + x];
        const std::int32_t want = x < 24 && y < 17 ? small->planes[c].samples[static_cast<std::size_t>(y) * 24 + x] : 128;
        ASSERT_EQ(v, want) << "component " << c << " (" << x << "," << y << ")";
      }
  }

  // The same as the full path, through the coefficient frame (whose buffers stay complete
  // for another reconstruction, e.g. the GPU's).
  for (int threads : {1, 3}) {
    DecodeStats st;
    opt.threads = threads;
    opt.reduce = threads == 3;  // the DC level at the reduced size too
    auto frame = decode_coefficients(mutant, opt, {}, &st);
    ASSERT_TRUE(frame.ok()) << frame.error().message;
    EXPECT_EQ(st.constant_components, 5999u * 3);
    std::size_t zero = 0;
    for (const TileCoefficients& t : frame->tiles)
      for (const ComponentCoefficients& cc : t.components) {
        zero += cc.zero;
        if (cc.zero) {
          EXPECT_TRUE(std::all_of(cc.data.begin(), cc.data.end(), [](std::int32_t v) { return v == 0; }));
        }
      }
    EXPECT_EQ(zero, 5999u * 3);
    auto fast = reconstruct(*frame, threads);
    ASSERT_TRUE(fast.ok());
    expect_same_planes(*fast, without_shortcuts(*frame, threads), "threads " + std::to_string(threads));
    auto direct = (*dec)->decode(mutant, opt);
    ASSERT_TRUE(direct.ok());
    expect_same_planes(*fast, *direct, "decoder and frame path");
  }
}

// Cut streams leave some tile-components without data and others with: with the
// component transform on, a component without data joins the RCT/ICT as zeros. Every cut
// of two seeds (one 5/3 CPRL with precincts, one 9/7) gives the picture of the full path.
TEST(Work, CutStreamsWithComponentsWithoutDataMatchTheFullPath) {
  int mixed = 0, constant = 0;
  for (const char* name : {"seed_5.j2k", "seed_4.j2k", "seed_7.j2k"}) {
    const auto stream = fuzz_file(name);
    for (std::size_t cut = 40; cut <= stream.size(); ++cut) {
      std::vector<std::uint8_t> part(stream.begin(), stream.begin() + static_cast<std::ptrdiff_t>(cut));
      DecodeOptions opt;
      DecodeStats st;
      auto frame = decode_coefficients(part, opt, {}, &st);
      if (!frame.ok()) continue;
      for (const TileCoefficients& t : frame->tiles) {
        if (t.components.size() < 3) continue;
        const int zeros = t.components[0].zero + t.components[1].zero + t.components[2].zero;
        mixed += t.mct && zeros > 0 && zeros < 3;
        constant += zeros == 3;
      }
      auto fast = reconstruct(*frame, 2);
      ASSERT_TRUE(fast.ok()) << name << " cut at " << cut;
      expect_same_planes(*fast, without_shortcuts(*frame, 2), std::string(name) + " cut at " + std::to_string(cut));
    }
  }
  EXPECT_GT(mixed, 0) << "no cut left a tile with the component transform and a component without data";
  EXPECT_GT(constant, 0);
}

// The plan of a code-block (B.10.5, D.1), the same for the CPU tier-1 and the GPU's table:
// P > Mb (no plane left with coded passes) is damage and more than 30 planes beyond this
// decoder (either way the block is zeroed and counted), and passes past the last bit-plane
// are not decoded.
TEST(Work, BlockPlanFollowsTheBitPlanes) {
  using own::CodeBlock;
  const std::uint8_t bytes[4] = {0x12, 0x34, 0x56, 0x78};
  CodeBlock cb;
  cb.rect = {0, 0, 4, 4};
  cb.passes = 9;
  cb.segments = {{3, 7, 109}, {1, 2, 109}};
  cb.chunks = {Bytes(bytes, 4)};
  struct Case {
    int mb, p;
    int zeroed;
    int passes, segments;
  } cases[] = {
      {10, 0, 0, 9, 2},                // 10 planes: up to 28 passes, all 9 decoded
      {10, 8, 0, 4, 1},                // 2 planes: 3 * 2 - 2 = 4 passes, in the first segment
      {10, 7, 0, 7, 1},                // 3 planes: 7 passes, the first segment exactly
      {10, 9, 0, 1, 1},                // 1 plane: its cleanup pass
      {10, 10, own::kDamaged, 0, 0},   // P = Mb with coded passes
      {10, 11, own::kDamaged, 0, 0},   // P > Mb
      {38, 7, own::kTooDeep, 0, 0},    // 31 planes
      {37, 7, 0, 9, 2},                // 30 planes
  };
  for (const Case& c : cases) {
    cb.zero_bitplanes = c.p;
    const own::BlockPlan plan = own::plan_block(cb, c.mb);
    EXPECT_EQ(plan.zeroed, c.zeroed) << "Mb " << c.mb << " P " << c.p;
    EXPECT_EQ(plan.passes, c.passes) << "Mb " << c.mb << " P " << c.p;
    EXPECT_EQ(plan.segments, c.segments) << "Mb " << c.mb << " P " << c.p;
  }
  // No pass, no work and no damage.
  CodeBlock empty = cb;
  empty.passes = 0;
  empty.segments.clear();
  EXPECT_EQ(own::plan_block(empty, 10).passes, 0);
  EXPECT_EQ(own::plan_block(empty, 10).zeroed, 0);

  // A damaged block is written as zeros (the coefficient buffers are recycled unwritten).
  own::CodeBlockDecoder dec(own::t1_dsp());
  std::int32_t out[16];
  std::fill(std::begin(out), std::end(out), 12345);
  own::CodeBlockJob job;
  job.block = &cb;
  job.magnitude_bits = 10;
  cb.zero_bitplanes = 11;
  job.out = out;
  job.stride = 4;
  EXPECT_FALSE(dec.decode(job));
  EXPECT_TRUE(std::all_of(std::begin(out), std::end(out), [](std::int32_t v) { return v == 0; }));
}

// A 629-byte mutant of seed_6 whose COD declares 2x2 precincts (1x1 in the bands) and
// 4x4 code-blocks on a 1536x1088 picture: 417 792 precincts per component, of which the
// packets reach a handful before the data runs out. Before, each precinct cost its
// geometry (3 bands, 128 bytes) when the tile was built and a zeroing job for tier-1
// (1.2 s of CPU and 610 MB against OpenJPEG's immediate refusal); now precincts are made
// when a packet reaches them and the areas without data are cleared row by row.
TEST(Work, TinyPrecinctsWithoutDataCostTheirRows) {
  const auto mutant = fuzz_file("work_tiny_precincts.j2k");
  auto dec = make_decoder(Backend::own);
  ASSERT_TRUE(dec.ok());
  auto image = (*dec)->decode(mutant, DecodeOptions{});
  ASSERT_TRUE(image.ok()) << image.error().message;
  const DecodeStats st = (*dec)->last_stats();
  // The packets reached a few precincts; every other area was cleared in a few rectangles
  // (per band: one per run of rows without data, two around each precinct with data), not
  // one job per precinct as before (1.25 million).
  EXPECT_GT(st.codeblocks, 0u);
  EXPECT_LE(st.codeblocks, 16u);
  EXPECT_LE(st.zero_fills, 3u * 4 * (1 + 3 * st.codeblocks));
  // The components the packets never reached are constants; the one they did is transformed.
  EXPECT_EQ(st.constant_components, 2u);
  EXPECT_EQ(st.idwt_samples, 1536u * 1088);

  // The same picture as the full path.
  auto frame = decode_coefficients(mutant, DecodeOptions{});
  ASSERT_TRUE(frame.ok());
  expect_same_planes(*image, without_shortcuts(*frame, 2), "tiny precincts");
}
