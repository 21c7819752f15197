#include "sender/encoded_loop.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>
#include <mutex>
#include <optional>
#include <thread>

#include "core/byte_reader.hpp"
#include "core/log.hpp"

namespace j2k::sender {

namespace fs = std::filesystem;

namespace {

constexpr std::uint32_t kCacheMagic = 0x4A324B4C;  // "J2KL"
constexpr std::uint32_t kCacheVersion = 2;

std::uint64_t fnv(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string cache_key(const FrameSource& source, const PictureFormat& f, const LoopSpec& spec) {
  const auto& e = spec.encode;
  return fmt::format("v{} {} {}x{} b{} dx{} n{} lossless{} bytes{} res{} cb{} prog{} sop{} eph{}", kCacheVersion,
                     source.identity(), f.width, f.height, f.bits, f.chroma_dx, spec.frames, e.lossless, e.target_bytes,
                     e.resolutions, e.codeblock, static_cast<int>(e.progression), e.sop, e.eph);
}

// Cache file: magic, version, count, then per frame: checksum (8), size (4), codestream.
bool load_cache(const fs::path& file, int frames, std::vector<EncodedFrame>& out) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return false;
  std::vector<std::uint8_t> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ByteReader r(data);
  if (r.u32() != kCacheMagic || r.u32() != kCacheVersion || r.u32() != static_cast<std::uint32_t>(frames)) return false;
  out.resize(static_cast<std::size_t>(frames));
  for (auto& f : out) {
    f.checksum = r.u64();
    const std::uint32_t size = r.u32();
    Bytes b = r.bytes(size);
    if (r.failed()) return false;
    f.codestream.assign(b.begin(), b.end());
  }
  return !r.failed();
}

void save_cache(const fs::path& file, const std::vector<EncodedFrame>& frames) {
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  std::vector<std::uint8_t> data;
  ByteWriter w(data);
  w.u32(kCacheMagic);
  w.u32(kCacheVersion);
  w.u32(static_cast<std::uint32_t>(frames.size()));
  for (const auto& f : frames) {
    w.u64(f.checksum);
    w.u32(static_cast<std::uint32_t>(f.codestream.size()));
    w.bytes(f.codestream);
  }
  // Write then rename, so a concurrent reader never sees half a file.
  const fs::path tmp = file.string() + fmt::format(".tmp{}", ::getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
    if (!out) return;
  }
  fs::rename(tmp, file, ec);
}

}  // namespace

std::string default_cache_dir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/j2kplay";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/j2kplay";
  return (fs::temp_directory_path() / "j2kplay-cache").string();
}

Result<std::vector<EncodedFrame>> encode_loop(const FrameSource& source, const PictureFormat& format,
                                              const LoopSpec& spec) {
  auto log = logger("sender");
  const std::string key = cache_key(source, format, spec);
  const fs::path cache_file = spec.cache_dir.empty() ? fs::path()
                                                     : fs::path(spec.cache_dir) / fmt::format("{:016x}.j2kloop", fnv(key));
  std::vector<EncodedFrame> frames;
  if (!cache_file.empty() && load_cache(cache_file, spec.frames, frames)) {
    log->info("loaded {} encoded frames from cache {}", frames.size(), cache_file.string());
    return frames;
  }

  frames.assign(static_cast<std::size_t>(spec.frames), {});
  const int threads = spec.threads > 0 ? spec.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  log->info("encoding {} frames {}x{} {}-bit {} with OpenJPEG on {} threads (cached for next time)", spec.frames,
            format.width, format.height, format.bits, format.chroma_dx == 2 ? "4:2:2" : "4:4:4", threads);
  std::atomic<int> next{0}, done{0};
  std::mutex error_mutex;  // guards first_error
  std::optional<Error> first_error;
  const auto t0 = std::chrono::steady_clock::now();
  auto work = [&] {
    for (int i = next++; i < spec.frames; i = next++) {
      PlanarImage img = source.frame(i, spec.frames);
      auto cs = decoder::encode_openjpeg(img, spec.encode);
      if (!cs) {
        std::lock_guard lock(error_mutex);
        if (!first_error) first_error = cs.error();
        return;
      }
      frames[static_cast<std::size_t>(i)] = {std::move(cs).value(), {}, checksum(img)};
      const int n = ++done;
      if (n % 10 == 0 || n == spec.frames) log->info("encoded {}/{} frames", n, spec.frames);
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(work);
  for (auto& t : pool) t.join();
  if (first_error) return *first_error;
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::size_t bytes = 0;
  for (const auto& f : frames) bytes += f.codestream.size();
  log->info("encoded {} frames in {:.1f} s, mean {:.0f} bytes/frame", frames.size(), secs,
            static_cast<double>(bytes) / std::max<std::size_t>(1, frames.size()));
  if (!cache_file.empty()) save_cache(cache_file, frames);
  return frames;
}

}  // namespace j2k::sender
