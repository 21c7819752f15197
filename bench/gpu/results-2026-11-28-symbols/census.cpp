#include <cstdio>
#include <fstream>
#include <vector>
#include <algorithm>
#include <iterator>
#include "decoder/own_decoder.hpp"
#include "t1count.hpp"
using namespace j2k;
static const std::uint32_t kQeT[47] = J2K_T1_QE_TABLE;
int main(int argc, char** argv) {
  std::ifstream f(argv[1], std::ios::binary);
  std::vector<char> raw((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>()); std::vector<std::uint8_t> cs(raw.begin(), raw.end()); std::printf("size %zu\n", cs.size());
  decoder::CoefficientDecoder dec;
  decoder::DecodeOptions opt; opt.threads = 1;
  decoder::Tier1Batch batch;
  auto fr = dec.decode_deferred(Bytes(cs.data(), cs.size()), opt, batch);
  if (!fr) { std::printf("err %s\n", fr.error().message.c_str()); return 1; }
  std::uint64_t need = 0;
  for (auto& b : batch.blocks) need = std::max<std::uint64_t>(need, b.out + (std::uint64_t)b.height * b.stride + b.width);
  std::vector<std::int32_t> coef(need);
  gpu::cuda::T1Launch L;
  L.blocks = reinterpret_cast<const gpu::cuda::T1Block*>(batch.blocks.data());
  L.count = batch.blocks.size();
  L.segments = reinterpret_cast<const gpu::cuda::T1Segment*>(batch.segments.data());
  L.bytes = batch.bytes.data();
  L.coefficients = coef.data();
  unsigned dmg=0; L.damaged=&dmg;
  std::vector<unsigned char> smem(64*1024);
  struct R { long tot, c[4], fast[4]; int i; };
  std::vector<R> rs;
  long all[8]={0};
  for (int i = 0; i < L.count; ++i) {
    for (auto& c : gpu::cuda::t1::g_cnt) c = 0;
    gpu::cuda::t1::run_block(L, i, smem.data(), kQeT, 0, 1);
    R r{}; r.i=i; for(int k=0;k<4;k++){r.c[k]=gpu::cuda::t1::g_cnt[k]; r.fast[k]=gpu::cuda::t1::g_cnt[4+k]; r.tot+=r.c[k];}
    for(int k=0;k<8;k++) all[k]+=gpu::cuda::t1::g_cnt[k];
    rs.push_back(r);
  }
  std::sort(rs.begin(), rs.end(), [](const R&a,const R&b){return a.tot>b.tot;});
  std::printf("blocks %d  all symbols: sig %ld mr %ld cl %ld ; mps-fast sig %ld mr %ld cl %ld\n", L.count, all[0], all[1], all[2], all[4], all[5], all[6]);
  for (int k = 0; k < 12 && k < (int)rs.size(); ++k) {
    auto& r = rs[k]; auto& b = batch.blocks[r.i];
    std::printf("#%d %dx%d band %d numbps %d passes %d bytes? tot %ld: sig %ld (fast %ld) mr %ld (fast %ld) cl %ld (fast %ld)\n", k, b.width, b.height, b.band, b.numbps, b.passes, r.tot, r.c[0], r.fast[0], r.c[1], r.fast[1], r.c[2], r.fast[2]);
  }
  for (int pct : {50, 100, 150, 200, 300, 400, 500}) if (pct < (int)rs.size()) std::printf("rank %d: %ld symbols\n", pct, rs[pct].tot);
}
