// The own decoder on the shared scheduler (DecodeOptions::pool): several decoders decoding at
// once on one WorkPool give exactly the pictures each gives alone on its own threads, and
// their in-frame work is done by the pool's threads.
#include <gtest/gtest.h>

#include <thread>

#include "core/work_pool.hpp"
#include "decoder/decoder.hpp"
#include "packetizer/openjpeg_encoder.hpp"
#include "test_images.hpp"

namespace j2k::test {
namespace {

std::vector<std::uint8_t> photo(int seed_x) {
  packetizer::EncodeParams p;
  p.resolutions = 5;
  p.codeblock = 32;  // many code-blocks: plenty to share out
  auto cs = packetizer::encode_openjpeg(photo_ycbcr(256, 128, 10, 2, 600 + seed_x, 400), p);
  EXPECT_TRUE(cs.ok());
  return cs.ok() ? std::move(cs).value() : std::vector<std::uint8_t>{};
}

bool same(const PlanarImage& a, const PlanarImage& b) {
  if (a.width != b.width || a.height != b.height || a.planes.size() != b.planes.size()) return false;
  for (std::size_t c = 0; c < a.planes.size(); ++c)
    if (a.planes[c].width != b.planes[c].width || a.planes[c].height != b.planes[c].height ||
        a.planes[c].samples != b.planes[c].samples)
      return false;
  return true;
}

TEST(SharedScheduler, DecodersSharingOnePoolDecodeAsTheyDoAlone) {
  const std::vector<std::vector<std::uint8_t>> streams = {photo(0), photo(40), photo(80), photo(120)};
  // Alone: each on its own pool of 3 threads, full and half resolution.
  std::vector<PlanarImage> want;
  for (const auto& cs : streams)
    for (int reduce : {0, 1}) {
      auto dec = decoder::make_decoder(decoder::Backend::own);
      ASSERT_TRUE(dec.ok());
      decoder::DecodeOptions o;
      o.threads = 3;
      o.reduce = reduce;
      auto img = (*dec)->decode(cs, o);
      ASSERT_TRUE(img.ok()) << img.error().message;
      want.push_back(std::move(img).value());
    }
  // Together: four decoders at once, each a task on one pool of 3 slots, 10 rounds, decoding
  // into reused pictures.
  WorkPool pool(3);
  std::vector<std::thread> workers;
  std::vector<int> mismatches(streams.size(), 0);
  for (std::size_t w = 0; w < streams.size(); ++w)
    workers.emplace_back([&, w] {
      auto dec = decoder::make_decoder(decoder::Backend::own);
      if (!dec.ok()) {
        ++mismatches[w];
        return;
      }
      PlanarImage out;
      for (int round = 0; round < 10; ++round)
        for (int reduce : {0, 1}) {
          WorkPool::Task task(pool, static_cast<std::uint64_t>(round * 4 + static_cast<int>(w)));
          decoder::DecodeOptions o;
          o.pool = &pool;
          o.reduce = reduce;
          if (!(*dec)->decode_into(streams[w], o, out).ok() || !same(out, want[w * 2 + static_cast<std::size_t>(reduce)]))
            ++mismatches[w];
        }
    });
  for (auto& t : workers) t.join();
  for (std::size_t w = 0; w < streams.size(); ++w) EXPECT_EQ(mismatches[w], 0) << "decoder " << w;

  // One decoder alone on the pool: its loops are shared out to the helpers.
  auto dec = decoder::make_decoder(decoder::Backend::own);
  ASSERT_TRUE(dec.ok());
  decoder::DecodeOptions o;
  o.pool = &pool;
  const auto before = pool.helper_work();
  PlanarImage out;
  for (int round = 0; round < 20 && pool.helper_work() == before; ++round) {
    WorkPool::Task task(pool, 0);
    ASSERT_TRUE((*dec)->decode_into(streams[0], o, out).ok());
    EXPECT_TRUE(same(out, want[0]));
  }
  EXPECT_GT(pool.helper_work(), before) << "no helper ever took part";
}

}  // namespace
}  // namespace j2k::test
