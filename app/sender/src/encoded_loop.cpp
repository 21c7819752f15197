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
#include "core/cpus.hpp"
#include "core/log.hpp"

namespace j2k::sender {

namespace fs = std::filesystem;

namespace {

constexpr std::uint32_t kCacheMagic = 0x4A324B4C;  // "J2KL"
constexpr std::uint32_t kCacheVersion = 4;  // 4: interlaced loops take their fields half a frame apart

std::uint64_t fnv(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string cache_key(const FrameSource& source, const PictureFormat& f, const LoopSpec& spec) {
  const auto& e = spec.encode;
  return fmt::format("v{} {} {}x{} b{} dx{} t{} x{} r{} n{} lossless{} bytes{} res{} cb{} prog{} sop{} eph{} i{} d{} l{} p{} tp{}",
                     kCacheVersion, source.identity(), f.width, f.height, f.bits, f.chroma_dx,
                     static_cast<int>(f.transfer), f.dci, e.rsiz, spec.frames, e.lossless,
                     e.target_bytes, e.resolutions, e.codeblock, static_cast<int>(e.progression), e.sop, e.eph,
                     spec.interlaced, spec.dual, e.layers, e.precinct_log2, e.tile_part_per_component);
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
    f.codestream.assign(b.begin(), b.end());
    const std::uint32_t parts = r.u32();
    if (r.failed() || parts > 16) return false;
    f.parts.resize(parts);
    for (auto& part : f.parts) {
      const std::uint32_t n = r.u32();
      Bytes pb = r.bytes(n);
      if (r.failed()) return false;
      part.assign(pb.begin(), pb.end());
    }
  }
  return !r.failed();
}

/// False when the file could not be written (the directory is not writable, the disk full).
bool save_cache(const fs::path& file, const std::vector<EncodedFrame>& frames) {
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
    w.u32(static_cast<std::uint32_t>(f.parts.size()));
    for (const auto& part : f.parts) {
      w.u32(static_cast<std::uint32_t>(part.size()));
      w.bytes(part);
    }
  }
  // Write then rename, so a concurrent reader never sees half a file.
  const fs::path tmp = file.string() + fmt::format(".tmp{}", ::getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
    if (!out) {
      fs::remove(tmp, ec);
      return false;
    }
  }
  fs::rename(tmp, file, ec);
  if (ec) fs::remove(tmp, ec);
  return !ec;
}

/// Lines y0, y0+2, … of every plane: one field of a frame.
PlanarImage field_of(const PlanarImage& frame, int y0) {
  PlanarImage f = frame;
  f.height = (frame.height - y0 + 1) / 2;
  for (std::size_t c = 0; c < frame.planes.size(); ++c) {
    const Plane& src = frame.planes[c];
    Plane& dst = f.planes[c];
    dst.height = (src.height - y0 + 1) / 2;
    dst.samples.resize(static_cast<std::size_t>(dst.width) * dst.height);
    for (int y = 0; y < dst.height; ++y)
      std::copy_n(&src.samples[static_cast<std::size_t>(2 * y + y0) * src.width], src.width,
                  &dst.samples[static_cast<std::size_t>(y) * dst.width]);
  }
  return f;
}

/// What an interlaced camera makes of frame `index`: its first field (the even lines) at the
/// frame's instant, its second (the odd lines) half a frame period later, as it scans them. The
/// source is asked for pictures at the field rate: twice as many in the loop.
PlanarImage interlaced_frame(const FrameSource& source, int index, int loop_frames) {
  PlanarImage frame = source.frame(2 * index, 2 * loop_frames);
  const PlanarImage later = source.frame(2 * index + 1, 2 * loop_frames);
  for (std::size_t c = 0; c < frame.planes.size() && c < later.planes.size(); ++c) {
    Plane& dst = frame.planes[c];
    const Plane& src = later.planes[c];
    if (src.width != dst.width || src.height != dst.height) continue;
    for (int y = 1; y < dst.height; y += 2)
      std::copy_n(&src.samples[static_cast<std::size_t>(y) * src.width], src.width,
                  &dst.samples[static_cast<std::size_t>(y) * dst.width]);
  }
  return frame;
}

/// Planes [first, first+count) as an image of their own (the luma or the chroma codestream).
PlanarImage planes_of(const PlanarImage& img, std::size_t first, std::size_t count) {
  PlanarImage out;
  out.colour = ColourCoding::grey;
  for (std::size_t i = first; i < first + count; ++i) {
    Plane p = img.planes[i];
    p.dx = p.dy = 1;  // each codestream is coded at its own resolution
    out.planes.push_back(std::move(p));
  }
  out.width = out.planes[0].width;
  out.height = out.planes[0].height;
  return out;
}

Result<EncodedFrame> encode_frame(const PlanarImage& img, const LoopSpec& spec) {
  EncodedFrame frame;
  frame.checksum = checksum(img);  // of the whole frame: what the receiver has after weaving
  if (!spec.interlaced && !spec.dual) {
    auto cs = packetizer::encode_openjpeg(img, spec.encode);
    if (!cs) return cs.error();
    frame.codestream = std::move(cs).value();
    return frame;
  }
  std::vector<PlanarImage> pictures;
  if (spec.interlaced) {
    pictures.push_back(field_of(img, 0));
    pictures.push_back(field_of(img, 1));
  } else {
    pictures.push_back(img);
  }
  packetizer::EncodeParams per_part = spec.encode;
  per_part.target_bytes = spec.encode.target_bytes / pictures.size();
  for (const PlanarImage& picture : pictures) {
    if (!spec.dual) {
      auto cs = packetizer::encode_openjpeg(picture, per_part);
      if (!cs) return cs.error();
      frame.parts.push_back(std::move(cs).value());
      continue;
    }
    // Luma gets two thirds of the bits, chroma one third (4:2:2 has as many chroma samples as luma).
    packetizer::EncodeParams luma = per_part, chroma = per_part;
    luma.target_bytes = per_part.target_bytes * 2 / 3;
    chroma.target_bytes = per_part.target_bytes - luma.target_bytes;
    auto y = packetizer::encode_openjpeg(planes_of(picture, 0, 1), luma);
    if (!y) return y.error();
    auto c = packetizer::encode_openjpeg(planes_of(picture, 1, 2), chroma);
    if (!c) return c.error();
    frame.parts.push_back(std::move(y).value());
    frame.parts.push_back(std::move(c).value());
  }
  return frame;
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
  const int threads = spec.threads > 0 ? spec.threads : usable_cpus();
  log->info("encoding {} frames {}x{} {}-bit {} with OpenJPEG on {} threads ({})", spec.frames, format.width,
            format.height, format.bits, format.chroma_dx == 2 ? "4:2:2" : "4:4:4", threads,
            cache_file.empty() ? "not cached" : "to be cached for next time");
  std::atomic<int> next{0}, done{0};
  std::mutex error_mutex;  // guards first_error
  std::optional<Error> first_error;
  const auto t0 = std::chrono::steady_clock::now();
  auto work = [&] {
    for (int i = next++; i < spec.frames; i = next++) {
      PlanarImage img = spec.interlaced ? interlaced_frame(source, i, spec.frames) : source.frame(i, spec.frames);
      auto encoded = encode_frame(img, spec);
      if (!encoded) {
        std::lock_guard lock(error_mutex);
        if (!first_error) first_error = encoded.error();
        return;
      }
      frames[static_cast<std::size_t>(i)] = std::move(encoded).value();
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
  if (!cache_file.empty()) {
    if (save_cache(cache_file, frames)) log->info("cached the encoded frames in {}", cache_file.string());
    else log->warn("could not write the cache {}: the next run encodes again", cache_file.string());
  }
  return frames;
}

}  // namespace j2k::sender
