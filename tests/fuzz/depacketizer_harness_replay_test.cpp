// The RFC 5371 and codestream-tool fuzz harnesses as ordinary tests: committed corpora plus
// deterministic mutations of valid inputs (real codestreams from a photograph).
#include <gtest/gtest.h>

#include "packetizer/openjpeg_encoder.hpp"
#include "packetizer/mxf_writer.hpp"
#include "packetizer/rtp_j2k_packetizer.hpp"
#include "fuzz_replay.hpp"
#include "test_images.hpp"

using namespace j2k;
using namespace j2k::test::fuzz;

// Each harness source is compiled into its own object with a renamed entry point.
extern "C" int fuzz_rfc5371_session(const std::uint8_t* data, std::size_t size);
extern "C" int fuzz_codestream_tools(const std::uint8_t* data, std::size_t size);


namespace {

std::vector<std::uint8_t> codestream(int x, bool luma_only = false, bool chroma_only = false) {
  PlanarImage img = test::photo_ycbcr(64, 40, 8, 2, 500 + x, 300);
  if (luma_only || chroma_only) {
    PlanarImage part;
    part.colour = ColourCoding::grey;
    for (std::size_t c = luma_only ? 0 : 1; c < (luma_only ? 1u : 3u); ++c) {
      Plane p = img.planes[c];
      p.dx = 1;
      part.planes.push_back(p);
    }
    part.width = part.planes[0].width;
    part.height = part.planes[0].height;
    img = part;
  }
  packetizer::EncodeParams ep;
  ep.target_bytes = 1500;
  ep.sop = true;
  auto cs = packetizer::encode_openjpeg(img, ep);
  return cs.ok() ? std::move(cs).value() : std::vector<std::uint8_t>{};
}

Input rfc5371_stream() {
  packetizer::Rfc5371Packetizer packetizer(0x55, 96, 65000, 300);
  std::vector<std::vector<std::uint8_t>> packets;
  for (int f = 0; f < 4; ++f) {
    const auto ts = static_cast<std::uint32_t>(f * 3600);
    if (f % 2) {
      (void)packetizer.packetize(codestream(f), ts, 1, packets);
      (void)packetizer.packetize(codestream(f + 10), ts, 2, packets);
    } else {
      (void)packetizer.packetize(codestream(f), ts, 0, packets);
    }
  }
  Input out;
  for (const auto& p : packets) append_datagram(out, p);
  return out;
}

/// The codestream tools' inputs, one per mode byte: tools_0.bin to tools_4.bin.
std::vector<Seed> tool_inputs() {
  std::vector<Input> inputs;
  // 0: an MXF file: partition pack, descriptor, two picture elements.
  Input mxf = {0, 0, 0};
  for (const auto& klv : {packetizer::mxf_partition_pack(true, 0, 0), packetizer::mxf_cdci_descriptor({}),
                          packetizer::mxf_picture_element(codestream(1)), packetizer::mxf_picture_element(codestream(2))})
    mxf.insert(mxf.end(), klv.begin(), klv.end());
  inputs.push_back(mxf);
  // 1: two codestreams back to back.
  Input two = {1, 0, 0};
  for (int k = 0; k < 2; ++k) {
    auto cs = codestream(k);
    two.insert(two.end(), cs.begin(), cs.end());
  }
  inputs.push_back(two);
  // 2: luma + chroma, cut between them.
  auto y = codestream(3, true), c = codestream(3, false, true);
  Input merge = {2, static_cast<std::uint8_t>(y.size() >> 8), static_cast<std::uint8_t>(y.size())};
  merge.insert(merge.end(), y.begin(), y.end());
  merge.insert(merge.end(), c.begin(), c.end());
  inputs.push_back(merge);
  // 3: the syntax unit's walk and readers on a codestream with a reserved marker (FF30, no segment).
  auto walk_cs = codestream(4);
  const std::size_t after_siz = 4 + static_cast<std::size_t>(walk_cs[4] << 8 | walk_cs[5]);
  walk_cs.insert(walk_cs.begin() + static_cast<std::ptrdiff_t>(after_siz), {0xFF, 0x30});
  Input walk = {3, 0, 0};
  walk.insert(walk.end(), walk_cs.begin(), walk_cs.end());
  inputs.push_back(walk);
  // 4: a JP2 file: signature box, then the codestream box (15444-1 I.5.1, I.5.4).
  const auto boxed = codestream(5);
  Input jp2 = {4, 0, 0, 0, 0, 0, 0x0C, 'j', 'P', ' ', ' ', 0x0D, 0x0A, 0x87, 0x0A};
  const std::uint32_t lbox = static_cast<std::uint32_t>(8 + boxed.size());
  jp2.insert(jp2.end(), {static_cast<std::uint8_t>(lbox >> 24), static_cast<std::uint8_t>(lbox >> 16),
                         static_cast<std::uint8_t>(lbox >> 8), static_cast<std::uint8_t>(lbox), 'j', 'p', '2', 'c'});
  jp2.insert(jp2.end(), boxed.begin(), boxed.end());
  inputs.push_back(jp2);
  std::vector<Seed> seeds;
  for (std::size_t i = 0; i < inputs.size(); ++i) seeds.push_back({"tools_" + std::to_string(i) + ".bin", inputs[i]});
  return seeds;
}

}  // namespace

TEST(DepacketizerFuzzReplay, Rfc5371SessionCorpusAndMutations) {
  replay(fuzz_rfc5371_session, "rfc5371_session", {{"rfc5371_fields.bin", rfc5371_stream()}}, {.rounds = 1500, .seed = 11});
}

TEST(DepacketizerFuzzReplay, MxfFileSplitAndMergeCorpusAndMutations) {
  replay(fuzz_codestream_tools, "codestream_tools", tool_inputs(), {.rounds = 700, .seed = 100, .keep = 1});
}
