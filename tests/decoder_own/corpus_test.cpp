// The own decoder against a corpus encoded at test time: lossless streams must give the
// source back bit-exactly; lossy ones must stay within ±1 of OpenJPEG's decode of the same
// codestream (also with --reduce and --layers). Then a truncation sweep over the corpus.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>

#include "corpus.hpp"
#include "dsp.hpp"
#include "decoder/decoder.hpp"
#include "decoder/own_decoder.hpp"
#include "syntax/locate.hpp"

using namespace j2k;
using namespace j2k::decoder;
using j2k::test::CorpusCase;
using j2k::test::Encoder;
using j2k::test::Source;

namespace {

const std::vector<CorpusCase>& corpus() {
  static const std::vector<CorpusCase> cases = {
      // Lossless (5/3, RCT where three components).
      {"rgb8_default", Source::rgb8, 161, 107, "", true},
      {"rgb8_levels0", Source::rgb8, 61, 47, "-n 1", true},
      {"rgb8_levels1", Source::rgb8, 61, 47, "-n 2", true},
      {"rgb8_levels5_odd", Source::rgb8, 97, 33, "-n 6", true},
      {"rgb8_levels8", Source::rgb8, 300, 280, "-n 9", true},
      {"cb32", Source::rgb8, 161, 107, "-b 32,32", true},
      {"cb16", Source::rgb8, 161, 107, "-b 16,16", true},
      {"cb128x32", Source::rgb8, 161, 107, "-b 128,32", true},
      {"cb4x4", Source::rgb8, 45, 37, "-b 4,4", true},
      // Wide code-blocks (tier-1 works through 64-bit masks of 16 columns: many words per
      // stripe, carries between words), a cut last stripe, and vertically causal contexts.
      {"cb1024x4", Source::rgb8, 1100, 23, "-b 1024,4 -n 1", true},
      {"cb512x8_causal", Source::rgb8, 700, 37, "-b 512,8 -n 2 -M 8", true},
      {"precincts", Source::rgb8, 161, 107, "-c [64,64],[32,32],[16,16] -b 16,16", true},
      {"tiles", Source::rgb8, 160, 96, "-t 64,48", true},
      {"tiles_nondividing_parts", Source::rgb8, 161, 107, "-t 50,37 -TP R", true},
      {"tiles_offsets", Source::rgb8, 161, 107, "-d 17,9 -t 60,40 -T 7,3", true},
      {"image_offset", Source::rgb8, 161, 107, "-d 13,7", true},
      {"prog_lrcp", Source::rgb8, 161, 107, "-p LRCP -c [32,32] -b 16,16 -r 20,5,1", true},
      {"prog_rlcp", Source::rgb8, 161, 107, "-p RLCP -c [32,32] -b 16,16 -r 20,5,1", true},
      {"prog_rpcl", Source::rgb8, 161, 107, "-p RPCL -c [32,32] -b 16,16 -r 20,5,1", true},
      {"prog_pcrl", Source::rgb8, 161, 107, "-p PCRL -c [32,32] -b 16,16 -r 20,5,1", true},
      {"prog_cprl", Source::rgb8, 161, 107, "-p CPRL -c [32,32] -b 16,16 -r 20,5,1", true},
      // Grok writes the POC in the main header and again in the tile-part header.
      {"grk_poc", Source::rgb8, 161, 107, "-r 20,10,1 -P T0=0,0,1,4,3,LRCP/T0=0,0,3,6,3,CPRL", true, Encoder::grk},
      {"sop_eph", Source::rgb8, 161, 107, "-SOP -EPH -r 10,1", true},
      {"mode_bypass", Source::rgb8, 161, 107, "-M 1", true},
      {"mode_reset", Source::rgb8, 161, 107, "-M 2", true},
      {"mode_termall", Source::rgb8, 161, 107, "-M 4", true},
      {"mode_causal", Source::rgb8, 161, 107, "-M 8", true},
      {"mode_pterm", Source::rgb8, 161, 107, "-M 16", true},
      {"mode_segsym", Source::rgb8, 161, 107, "-M 32", true},
      {"mode_all", Source::rgb8, 161, 107, "-M 63 -r 10,3,1", true},
      {"roi", Source::rgb8, 161, 107, "-ROI c=0,U=5", true},
      {"layers8", Source::rgb8, 161, 107, "-r 80,40,20,10,5,3,2,1", true},
      {"grey8", Source::grey8, 123, 77, "", true},
      {"grey12", Source::grey12, 123, 77, "", true},
      {"grey16", Source::grey16, 123, 77, "", true},
      {"ycc422_10", Source::ycc422_10, 128, 72, "", true},
      {"ycc420_8", Source::ycc420_8, 128, 72, "", true},
      {"ycc422_10_tiles_rpcl", Source::ycc422_10, 128, 72, "-t 64,40 -p RPCL -c [32,32],[16,16] -b 8,8", true},
      {"rgba8_4comps", Source::rgba8, 96, 64, "", true},
      {"signed12", Source::signed12, 96, 64, "", true},
      {"bits1", Source::tiny1bit, 64, 48, "-n 3", true},
      {"grk_default", Source::rgb8, 161, 107, "", true, Encoder::grk},
      {"grk_plt_tiles", Source::rgb8, 161, 107, "-L -t 64,64", true, Encoder::grk},
      {"grk_modes", Source::rgb8, 161, 107, "-M 63 -p RPCL -c [32,32]", true, Encoder::grk},
      // Lossy (9/7, ICT where three components).
      {"lossy_rgb8", Source::rgb8, 161, 107, "-I -r 10", false},
      {"lossy_ycc422_10", Source::ycc422_10, 192, 108, "-I -r 12", false},
      {"lossy_ycc420_8", Source::ycc420_8, 128, 72, "-I -r 8 -p CPRL", false},
      {"lossy_grey16", Source::grey16, 123, 77, "-I -r 8", false},
      {"lossy_modes_all", Source::rgb8, 161, 107, "-I -M 63 -r 15", false},
      {"lossy_layers_rlcp", Source::rgb8, 161, 107, "-I -r 40,20,10 -p RLCP", false},
      // Review 2026-11-29: with fewer layers decoded (the variants below), the layers read
      // past them without being kept left the code-blocks' pass counts behind, and with
      // bypass the count of segment lengths in a header follows them: later packets misread.
      {"lossy_bypass_layers_rlcp", Source::rgb8, 161, 107, "-I -M 1 -r 40,20,10 -p RLCP", false},
      {"bypass_layers_cprl", Source::rgb8, 161, 107, "-M 1 -r 20,5,1 -p CPRL", true},
      {"lossy_tiles_pcrl", Source::rgb8, 161, 107, "-I -t 64,48 -p PCRL -c [32,32] -b 16,16 -r 10", false},
      {"lossy_offset_levels3", Source::rgb8, 161, 107, "-I -d 5,3 -n 4 -r 10", false},
      {"lossy_rgba8", Source::rgba8, 96, 64, "-I -r 10", false},
      {"lossy_levels0", Source::grey8, 123, 77, "-I -n 1 -r 8", false},
      {"lossy_cb256x16_causal", Source::rgb8, 600, 50, "-I -b 256,16 -n 2 -M 8 -r 8", false},
      {"lossy_roi", Source::rgb8, 161, 107, "-I -r 10 -ROI c=0,U=4", false},
      // ROI maxshift (RGN, Annex H) from both encoders. OpenJPEG up-shifts the component's
      // coefficients by s; H.1 then takes every magnitude >= 2^s as ROI. Grok writes the
      // RGN marker but leaves the coefficients unshifted (its ROI code-blocks have fewer
      // than s magnitude bit-planes; with a small s even its own decoder does not give its
      // lossless output back). OpenJPEG and Grok's decoder classify at 2^(s-1) (2^s on their
      // doubled values), one bit-plane lower than H.1, so on Grok's lossy streams they agree
      // with each other and not with the standard, and decode further from the source.
      {"roi_grey_u10", Source::grey8, 123, 77, "-ROI c=0,U=10", true},
      {"lossy_roi_u10", Source::rgb8, 161, 107, "-I -r 10 -ROI c=0,U=10", false},
      {"grk_roi_u10", Source::rgb8, 161, 107, "-ROI c=0,U=10", true, Encoder::grk},
      {"lossy_grk_roi_u4", Source::rgb8, 161, 107, "-I -r 10 -ROI c=0,U=4", false, Encoder::grk, true},
      {"lossy_grk_roi_u10", Source::rgb8, 161, 107, "-I -r 10 -ROI c=0,U=10", false, Encoder::grk, true},
      {"lossy_grk_rgb8", Source::rgb8, 192, 108, "-I -r 12", false, Encoder::grk},
  };
  return cases;
}

struct Encoded {
  PlanarImage source;
  std::vector<std::uint8_t> codestream;
};

/// Each case is encoded once per process and shared by the tests that use it.
const Encoded& encoded(const CorpusCase& c) {
  static std::mutex mutex;
  static std::map<std::string, Encoded> cache;
  std::lock_guard lock(mutex);
  auto it = cache.find(c.name);
  if (it != cache.end()) return it->second;
  Encoded e;
  e.source = test::make_source(c.source, c.width, c.height);
  e.codestream = test::encode_case(e.source, c);
  return cache.emplace(c.name, std::move(e)).first->second;
}

::testing::AssertionResult within(const PlanarImage& a, const PlanarImage& b, int tolerance) {
  if (a.planes.size() != b.planes.size())
    return ::testing::AssertionFailure() << "components " << a.planes.size() << " vs " << b.planes.size();
  for (std::size_t c = 0; c < a.planes.size(); ++c) {
    const Plane &p = a.planes[c], &q = b.planes[c];
    if (p.width != q.width || p.height != q.height || p.precision != q.precision || p.is_signed != q.is_signed ||
        p.dx != q.dx || p.dy != q.dy)
      return ::testing::AssertionFailure() << "component " << c << " geometry " << p.width << "x" << p.height << " "
                                           << p.precision << "b vs " << q.width << "x" << q.height << " " << q.precision
                                           << "b";
    for (std::size_t i = 0; i < p.samples.size(); ++i)
      if (std::abs(p.samples[i] - q.samples[i]) > tolerance)
        return ::testing::AssertionFailure() << "component " << c << " sample " << i << " (" << i % p.width << ","
                                             << i / p.width << "): " << p.samples[i] << " vs " << q.samples[i];
  }
  return ::testing::AssertionSuccess();
}

/// Like within(), but tolerates OpenJPEG's reduced-resolution size on odd image offsets:
/// it sizes a component as ceil(width / 2^r) where B-14 gives ceil(x1 / 2^r) - ceil(x0 / 2^r),
/// so it may have one more row or column. The common area must agree.
::testing::AssertionResult within_reduced(const PlanarImage& own, const PlanarImage& opj, int tolerance) {
  if (own.planes.size() != opj.planes.size()) return ::testing::AssertionFailure() << "component count";
  PlanarImage a = own, b = opj;
  for (std::size_t c = 0; c < a.planes.size(); ++c) {
    Plane &p = a.planes[c], &q = b.planes[c];
    if (std::abs(p.width - q.width) > 1 || std::abs(p.height - q.height) > 1)
      return ::testing::AssertionFailure() << "component " << c << " " << p.width << "x" << p.height << " vs " << q.width
                                           << "x" << q.height;
    const int w = std::min(p.width, q.width), h = std::min(p.height, q.height);
    auto crop = [w, h](Plane& pl) {
      std::vector<std::int32_t> s2(static_cast<std::size_t>(w) * h);
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) s2[static_cast<std::size_t>(y) * w + x] = pl.at(x, y);
      pl.samples = std::move(s2);
      pl.width = w;
      pl.height = h;
    };
    crop(p);
    crop(q);
  }
  return within(a, b, tolerance);
}

double mean_abs_error(const PlanarImage& a, const PlanarImage& b) {
  double sum = 0;
  std::size_t n = 0;
  for (std::size_t c = 0; c < std::min(a.planes.size(), b.planes.size()); ++c)
    for (std::size_t i = 0; i < std::min(a.planes[c].samples.size(), b.planes[c].samples.size()); ++i, ++n)
      sum += std::abs(a.planes[c].samples[i] - b.planes[c].samples[i]);
  return n ? sum / static_cast<double>(n) : 0.0;
}

int levels_of(const CorpusCase& c) {
  auto pos = c.args.find("-n ");
  return pos == std::string::npos ? 5 : std::stoi(c.args.substr(pos + 3)) - 1;
}

}  // namespace

namespace j2k::test {
// Readable test names in failure messages instead of a byte dump.
void PrintTo(const CorpusCase& c, std::ostream* os) { *os << c.name << " [" << c.args << "]"; }
}  // namespace j2k::test

namespace {

class Corpus : public ::testing::TestWithParam<CorpusCase> {};

TEST_P(Corpus, DecodesLikeTheSourceOrOpenJpeg) {
  const CorpusCase& c = GetParam();
  const Encoded& e = encoded(c);
  ASSERT_FALSE(e.codestream.empty()) << "encoder failed for " << c.name << " (" << c.args << ")";
  auto own = make_decoder(Backend::own);
  auto opj = make_decoder(Backend::openjpeg);
  ASSERT_TRUE(own.ok() && opj.ok());
  auto mine = (*own)->decode(e.codestream, {});
  ASSERT_TRUE(mine.ok()) << mine.error().message;
  EXPECT_EQ((*own)->last_stats().damaged_codeblocks, 0u);
  EXPECT_EQ((*own)->last_stats().damaged_packets, 0u);
  // Real codestreams stay far inside tier-2's work budget (2^26 steps and 1024 per byte;
  // 4K frames with 64x64 or 4x4 code-blocks, 1 to 20 layers, all orders: under 2 per byte).
  EXPECT_LT((*own)->last_stats().tier2_steps, 64u * e.codestream.size()) << c.name;
  if (c.lossless) {
    PlanarImage src = e.source;
    EXPECT_TRUE(within(*mine, src, 0));
  } else if (c.openjpeg_off_standard) {
    auto ref = (*opj)->decode(e.codestream, {});
    ASSERT_TRUE(ref.ok()) << ref.error().message;
    EXPECT_LE(mean_abs_error(*mine, e.source), mean_abs_error(*ref, e.source));
    return;  // the reduced and layered variants below compare with OpenJPEG
  } else {
    auto ref = (*opj)->decode(e.codestream, {});
    ASSERT_TRUE(ref.ok()) << ref.error().message;
    EXPECT_TRUE(within(*mine, *ref, 1));
  }
  // Reduced resolution and fewer layers, against OpenJPEG on the same options.
  std::vector<DecodeOptions> variants;
  if (levels_of(c) >= 1) variants.push_back(DecodeOptions{1, 0, 1, false});
  if (levels_of(c) >= 2) variants.push_back(DecodeOptions{2, 0, 1, false});
  variants.push_back(DecodeOptions{0, 1, 1, false});
  variants.push_back(DecodeOptions{0, 0, 2, false});  // two threads must give the same picture
  for (const DecodeOptions& o : variants) {
    auto a = (*own)->decode(e.codestream, o);
    auto b = (*opj)->decode(e.codestream, DecodeOptions{o.reduce, o.max_layers, 1, false});
    ASSERT_TRUE(a.ok()) << "reduce " << o.reduce << " layers " << o.max_layers << ": " << a.error().message;
    ASSERT_TRUE(b.ok()) << b.error().message;
    EXPECT_TRUE(within_reduced(*a, *b, 1)) << "reduce " << o.reduce << " layers " << o.max_layers << " threads " << o.threads;
  }
}

INSTANTIATE_TEST_SUITE_P(Own, Corpus, ::testing::ValuesIn(corpus()),
                         [](const auto& param_info) { return param_info.param.name; });

/// read_geometry (SOC + SIZ only) announces exactly the picture that decoding produces.
TEST_P(Corpus, ReadGeometryMatchesTheDecodedPicture) {
  const Encoded& e = encoded(GetParam());
  ASSERT_FALSE(e.codestream.empty());
  auto shape = syntax::read_geometry(e.codestream);
  ASSERT_TRUE(shape.ok()) << shape.error().message;
  auto own = make_decoder(Backend::own);
  ASSERT_TRUE(own.ok());
  auto img = (*own)->decode(e.codestream, {});
  ASSERT_TRUE(img.ok()) << img.error().message;
  EXPECT_EQ(shape->width, img->width);
  EXPECT_EQ(shape->height, img->height);
  ASSERT_EQ(shape->planes.size(), img->planes.size());
  for (std::size_t i = 0; i < img->planes.size(); ++i) {
    const Plane& a = shape->planes[i];
    const Plane& b = img->planes[i];
    EXPECT_EQ(std::tie(a.width, a.height, a.dx, a.dy, a.precision, a.is_signed),
              std::tie(b.width, b.height, b.dx, b.dy, b.precision, b.is_signed))
        << "component " << i;
    EXPECT_TRUE(a.samples.empty());
  }
  const std::vector<std::uint8_t> garbage(e.codestream.begin() + 2, e.codestream.end());
  EXPECT_FALSE(syntax::read_geometry(garbage).ok()) << "no SOC: a clear error";
  const std::vector<std::uint8_t> cut(e.codestream.begin(), e.codestream.begin() + 30);
  EXPECT_FALSE(syntax::read_geometry(cut).ok()) << "SIZ cut short";
}

/// Each CPU-feature kernel set (dsp.hpp) gives the portable kernels' picture exactly, on whole
/// streams and on a cut one (dsp_check_test.cpp compares the kernels one by one).
TEST_P(Corpus, Tier1KernelVariantsAgree) {
  const CorpusCase& c = GetParam();
  const Encoded& e = encoded(c);
  ASSERT_FALSE(e.codestream.empty());
  if (decoder::own::cpu_flags() == 0) GTEST_SKIP() << "no SIMD kernel set on this CPU/build";
  auto portable = decoder::own::make_own_decoder_for_cpu(0);
  const std::vector<std::uint8_t> cut(e.codestream.begin(), e.codestream.begin() + e.codestream.size() * 3 / 5);
  for (const auto& [flag, name] : decoder::own::kCpuFlagNames) {
    if (!(decoder::own::cpu_flags() & flag)) continue;
    auto simd = decoder::own::make_own_decoder_for_cpu(flag);
    for (const auto* stream : {&e.codestream, &cut}) {
      auto base = portable->decode(*stream, {});
      auto fast = simd->decode(*stream, {});
      ASSERT_EQ(base.ok(), fast.ok()) << name;
      if (base.ok()) {
        EXPECT_TRUE(within(*base, *fast, 0)) << name << (stream == &cut ? " cut stream" : " whole stream");
      }
    }
  }
}

/// The picture must not depend on the thread count (1, 2, 3, 8: whole tile-components per
/// thread, or rows and column strips per level), nor on what the decoder decoded before:
/// one decoder and one output image, reused, decode the whole stream and then a cut copy
/// (whose missing code-blocks must come out zero although the recycled buffers held the
/// whole stream's coefficients), at reduce 0 and 1; CoefficientDecoder with recycled frames
/// too.
TEST_P(Corpus, SamePictureWithAnyThreadCountAndReusedBuffers) {
  const CorpusCase& c = GetParam();
  const Encoded& e = encoded(c);
  ASSERT_FALSE(e.codestream.empty());
  const std::vector<std::uint8_t> cut(e.codestream.begin(), e.codestream.begin() + e.codestream.size() * 3 / 5);
  auto reused = make_decoder(Backend::own);
  ASSERT_TRUE(reused.ok());
  decoder::CoefficientDecoder coefficients;
  PlanarImage out, out2;
  for (int reduce : {0, 1}) {
    if (reduce > levels_of(c)) continue;
    for (const auto* stream : {&e.codestream, &cut}) {
      auto want = (*make_decoder(Backend::own))->decode(*stream, DecodeOptions{reduce, 0, 1, false});
      if (!want.ok()) continue;  // a cut main header
      for (int threads : {1, 2, 3, 8}) {
        const DecodeOptions o{reduce, 0, threads, false};
        ASSERT_TRUE((*reused)->decode_into(*stream, o, out).ok());
        EXPECT_TRUE(within(out, *want, 0)) << "threads " << threads << " reduce " << reduce
                                           << (stream == &cut ? " cut" : " whole");
        auto frame = coefficients.decode(*stream, o);
        ASSERT_TRUE(frame.ok());
        ASSERT_TRUE(coefficients.reconstruct(*frame, out2).ok());
        coefficients.recycle(std::move(*frame));
        EXPECT_TRUE(within(out2, *want, 0)) << "CoefficientDecoder, threads " << threads << " reduce " << reduce
                                            << (stream == &cut ? " cut" : " whole");
      }
    }
  }
}

/// Cuts at 20 lengths: resilient mode decodes (or cleanly refuses a cut main header),
/// strict mode always reports an error.
class Truncation : public ::testing::TestWithParam<CorpusCase> {};

TEST_P(Truncation, CutStreamsDecodeResilientlyAndFailStrictly) {
  const Encoded& e = encoded(GetParam());
  ASSERT_FALSE(e.codestream.empty());
  auto own = make_decoder(Backend::own);
  const std::size_t n = e.codestream.size();
  auto full = (*own)->decode(e.codestream, {});
  ASSERT_TRUE(full.ok());
  for (int i = 0; i < 20; ++i) {
    std::size_t cut = i == 0 ? 1 : n * static_cast<std::size_t>(i) / 20;
    std::vector<std::uint8_t> part(e.codestream.begin(), e.codestream.begin() + static_cast<std::ptrdiff_t>(cut));
    auto r = (*own)->decode(part, {});
    if (r.ok()) {
      EXPECT_EQ(r->width, full->width) << cut;
      EXPECT_EQ(r->planes.size(), full->planes.size());
    }
    DecodeOptions strict;
    strict.strict = true;
    auto s = (*own)->decode(part, strict);
    EXPECT_FALSE(s.ok()) << "strict decode of " << cut << " of " << n << " bytes succeeded";
    if (!s.ok()) {
      EXPECT_FALSE(s.error().message.empty());
    }
  }
}

std::vector<CorpusCase> truncation_cases() {
  std::vector<CorpusCase> out;
  for (const auto& c : corpus())
    if (c.name == "rgb8_default" || c.name == "tiles_nondividing_parts" || c.name == "sop_eph" ||
        c.name == "mode_all" || c.name == "prog_rpcl" || c.name == "lossy_ycc422_10" || c.name == "lossy_modes_all" ||
        c.name == "layers8" || c.name == "grey16" || c.name == "grk_plt_tiles")
      out.push_back(c);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Own, Truncation, ::testing::ValuesIn(truncation_cases()),
                         [](const auto& param_info) { return param_info.param.name; });

}  // namespace
