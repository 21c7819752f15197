// The RFC 5371 and codestream-tool fuzz harnesses as ordinary tests: committed corpora plus
// deterministic mutations of valid inputs (real codestreams from a photograph).
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "packetizer/openjpeg_encoder.hpp"
#include "packetizer/mxf_writer.hpp"
#include "packetizer/rtp_j2k_packetizer.hpp"
#include "test_images.hpp"

using namespace j2k;
using Input = std::vector<std::uint8_t>;
using Harness = int (*)(const std::uint8_t*, std::size_t);

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
  for (const auto& p : packets) {
    out.push_back(static_cast<std::uint8_t>(p.size() >> 8));
    out.push_back(static_cast<std::uint8_t>(p.size()));
    out.insert(out.end(), p.begin(), p.end());
  }
  return out;
}

std::vector<Input> tool_inputs() {
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
  return inputs;
}

void replay_corpus(const std::string& name, Harness harness) {
  const std::filesystem::path dir = std::string(J2K_SOURCE_DIR) + "/fuzz/corpus/" + name;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::ifstream f(e.path(), std::ios::binary);
    Input data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    harness(data.data(), data.size());
  }
}

void mutate_and_run(const Input& base, Harness harness, int rounds, unsigned seed, std::size_t protect = 0) {
  std::mt19937 rng(seed);
  harness(base.data(), base.size());
  for (int i = 0; i < rounds; ++i) {
    Input m = base;
    const int edits = 1 + static_cast<int>(rng() % 6);
    for (int e = 0; e < edits && m.size() > protect; ++e) {
      const std::size_t at = protect + rng() % (m.size() - protect);
      switch (rng() % 4) {
        case 0: m[at] ^= static_cast<std::uint8_t>(1u << (rng() % 8)); break;
        case 1: m[at] = static_cast<std::uint8_t>(rng()); break;
        case 2: m.resize(at); break;
        case 3: m.insert(m.begin() + static_cast<std::ptrdiff_t>(at), static_cast<std::uint8_t>(rng())); break;
      }
    }
    harness(m.data(), m.size());
  }
}

void write_seed(const char* dir, const std::string& name, const Input& data) {
  std::ofstream(std::string(dir) + "/" + name, std::ios::binary)
      .write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
}

}  // namespace

TEST(DepacketizerFuzzReplay, Rfc5371SessionCorpusAndMutations) {
  spdlog::set_level(spdlog::level::off);
  const Input base = rfc5371_stream();
  if (const char* dir = std::getenv("J2K_WRITE_SEEDS")) write_seed(dir, "rfc5371_fields.bin", base);
  replay_corpus("rfc5371_session", fuzz_rfc5371_session);
  mutate_and_run(base, fuzz_rfc5371_session, 1500, 11);
}

TEST(DepacketizerFuzzReplay, MxfFileSplitAndMergeCorpusAndMutations) {
  spdlog::set_level(spdlog::level::off);
  auto inputs = tool_inputs();
  if (const char* dir = std::getenv("J2K_WRITE_SEEDS"))
    for (std::size_t i = 0; i < inputs.size(); ++i) write_seed(dir, "tools_" + std::to_string(i) + ".bin", inputs[i]);
  replay_corpus("codestream_tools", fuzz_codestream_tools);
  for (std::size_t i = 0; i < inputs.size(); ++i) mutate_and_run(inputs[i], fuzz_codestream_tools, 700, 100 + static_cast<unsigned>(i), 1);
}
