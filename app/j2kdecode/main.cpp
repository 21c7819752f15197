// j2kdecode: decode a JPEG 2000 codestream (or JP2 file) with our own decoder or OpenJPEG.
#include <CLI/CLI.hpp>

#include "gpu/cuda_decoder.hpp"
#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "decoder/decoder.hpp"
#include "media/image_io.hpp"

namespace {

using namespace j2k;

bool write_file(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(f);
}

void put_sample(std::vector<std::uint8_t>& out, std::int32_t v, int bytes, bool big_endian) {
  for (int i = 0; i < bytes; ++i) {
    int shift = big_endian ? 8 * (bytes - 1 - i) : 8 * i;
    out.push_back(static_cast<std::uint8_t>(static_cast<std::uint32_t>(v) >> shift));
  }
}

int sample_bytes(int precision) { return precision <= 8 ? 1 : precision <= 16 ? 2 : 4; }

/// PGX (one file per component, as opj_decompress writes it): "PG ML [+|-] prec w h".
Status write_pgx(const std::string& out, const PlanarImage& img) {
  std::filesystem::path p(out);
  std::string stem = (p.parent_path() / p.stem()).string();
  for (std::size_t c = 0; c < img.planes.size(); ++c) {
    const Plane& pl = img.planes[c];
    std::string header = fmt::format("PG ML {} {} {} {}\n", pl.is_signed ? '-' : '+', pl.precision, pl.width, pl.height);
    std::vector<std::uint8_t> bytes(header.begin(), header.end());
    int nb = sample_bytes(pl.precision);
    for (std::int32_t v : pl.samples) put_sample(bytes, v, nb, true);
    std::string name = fmt::format("{}_{}.pgx", stem, c);
    if (!write_file(name, bytes)) return make_error(ErrorKind::io, fmt::format("cannot write {}", name));
  }
  return {};
}

bool same_geometry(const PlanarImage& img, std::size_t n) {
  for (std::size_t c = 1; c < n; ++c)
    if (img.planes[c].width != img.planes[0].width || img.planes[c].height != img.planes[0].height) return false;
  return true;
}

/// Binary PGM (1 component) or PPM (3); 16-bit big-endian when the precision is above 8.
Status write_pnm(const std::string& out, const PlanarImage& img, bool colour) {
  std::size_t n = colour ? 3 : 1;
  if (img.planes.size() < n || !same_geometry(img, n))
    return make_error(ErrorKind::unsupported,
                      colour ? "PPM needs 3 components of equal size (write .pgx or .raw for subsampled images)"
                             : "PGM needs at least one component");
  const Plane& p0 = img.planes[0];
  int prec = 0;
  for (std::size_t c = 0; c < n; ++c) prec = std::max(prec, img.planes[c].precision);
  int maxval = (1 << std::min(prec, 16)) - 1;
  std::string header = fmt::format("{}\n{} {}\n{}\n", colour ? "P6" : "P5", p0.width, p0.height, maxval);
  std::vector<std::uint8_t> bytes(header.begin(), header.end());
  int nb = prec <= 8 ? 1 : 2;
  for (std::size_t i = 0; i < p0.samples.size(); ++i)
    for (std::size_t c = 0; c < n; ++c) {
      std::int32_t v = img.planes[c].samples[i];
      if (img.planes[c].is_signed) v += 1 << (img.planes[c].precision - 1);
      put_sample(bytes, std::clamp(v, 0, maxval), nb, true);
    }
  if (!write_file(out, bytes)) return make_error(ErrorKind::io, fmt::format("cannot write {}", out));
  return {};
}

/// Components one after the other, big-endian 16-bit above 8 bits (like opj_decompress .raw).
Status write_raw(const std::string& out, const PlanarImage& img) {
  std::vector<std::uint8_t> bytes;
  for (const Plane& p : img.planes) {
    int nb = sample_bytes(p.precision);
    for (std::int32_t v : p.samples) put_sample(bytes, v, nb, true);
  }
  if (!write_file(out, bytes)) return make_error(ErrorKind::io, fmt::format("cannot write {}", out));
  return {};
}

/// 8-bit PNG for a quick look: grey, or RGB from three equal components.
Status write_png(const std::string& out, const PlanarImage& img) {
  const Plane& p0 = img.planes[0];
  bool rgb = img.planes.size() >= 3 && same_geometry(img, 3);
  std::vector<std::uint8_t> rgba(static_cast<std::size_t>(p0.width) * p0.height * 4, 255);
  for (std::size_t i = 0; i < p0.samples.size(); ++i)
    for (int c = 0; c < 3; ++c) {
      const Plane& p = img.planes[rgb ? c : 0];
      std::int32_t v = p.samples[i];
      if (p.is_signed) v += 1 << (p.precision - 1);
      v = p.precision > 8 ? v >> (p.precision - 8) : v << (8 - p.precision);
      rgba[i * 4 + c] = static_cast<std::uint8_t>(std::clamp(v, 0, 255));
    }
  return media::write_png_rgba(out, rgba.data(), p0.width, p0.height);
}

long peak_rss_kib() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Decode a JPEG 2000 codestream (.j2k/.j2c) or JP2 file.\n"
               "Output by extension: .pgx (one file per component, <stem>_<c>.pgx), .pgm (first component),\n"
               ".ppm (3 equal components), .png (8-bit preview), .raw (components in order, big-endian above 8 bits)."};
  std::string input, output, backend_name = "own";
  j2k::decoder::DecodeOptions opt;
  int bench = 0;
  app.add_option("input", input, "codestream or JP2 file")->required()->check(CLI::ExistingFile);
  app.add_option("-o,--output", output, "output file (.pgx .pgm .ppm .png .raw)");
  app.add_option("--reduce", opt.reduce, "discard this many resolution levels")->check(CLI::NonNegativeNumber);
  app.add_option("--layers", opt.max_layers, "decode only the first N quality layers (0 = all)")->check(CLI::NonNegativeNumber);
  app.add_option("--backend", backend_name, "own | cuda (own, reconstruction on the GPU) | openjpeg")
      ->check(CLI::IsMember({"own", "cuda", "openjpeg"}));
  std::string gpu_text = "off";
  app.add_option("--gpu", gpu_text, "with --backend own: reconstruction on the GPU (on, off, auto)")->capture_default_str();
  std::string tier1_text = "cpu";
  app.add_option("--tier1", tier1_text, "with the GPU: code-blocks on the cpu, the gpu, or auto")
      ->check(CLI::IsMember({"cpu", "gpu", "auto"}))
      ->capture_default_str();
  app.add_option("--threads", opt.threads, "threads used inside one decode")->check(CLI::Range(1, 256));
  app.add_flag("--strict", opt.strict, "fail on any damage instead of decoding what is intact");
  app.add_option("--bench", bench, "decode K times and print speed and time per stage")->check(CLI::NonNegativeNumber);
  CLI11_PARSE(app, argc, argv);

  std::ifstream f(input, std::ios::binary);
  std::vector<std::uint8_t> data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto gpu_mode = j2k::gpu::parse_gpu_mode(gpu_text);
  if (!gpu_mode) {
    fmt::print(stderr, "j2kdecode: --gpu '{}' is not on, off or auto\n", gpu_text);
    return 2;
  }
  if (backend_name == "cuda") gpu_mode = j2k::gpu::GpuMode::on;
  // The GPU backend lives in gpu/ (decoder/ knows nothing of GPUs): choose it here.
  auto dec = backend_name == "openjpeg" ? j2k::decoder::make_decoder(j2k::decoder::Backend::openjpeg)
             : *gpu_mode == j2k::gpu::GpuMode::off ? j2k::decoder::make_decoder(j2k::decoder::Backend::own)
                                                   : j2k::gpu::make_cuda_decoder(
                                                         {*gpu_mode, 0, {}, *j2k::gpu::parse_tier1_mode(tier1_text)});
  if (!dec) {
    fmt::print(stderr, "j2kdecode: {}\n", dec.error().message);
    return 2;
  }
  auto t0 = std::chrono::steady_clock::now();
  auto img = (*dec)->decode(data, opt);
  if (!img) {
    fmt::print(stderr, "j2kdecode: {} ({})\n", img.error().message, j2k::to_string(img.error().kind));
    return 1;
  }
  double first_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  auto st = (*dec)->last_stats();
  if (st.damaged_codeblocks || st.damaged_packets)
    fmt::print(stderr, "j2kdecode: damaged input: {} packets, {} code-blocks zeroed\n", st.damaged_packets,
               st.damaged_codeblocks);
  if (bench > 0) {
    j2k::decoder::DecodeStats sum;
    t0 = std::chrono::steady_clock::now();
    double best_ms = 1e30;
    // Reused (a copy of the first picture, made before timing): decode_into lets the backend
    // keep its planes' memory, as a player decoding frame after frame does.
    j2k::PlanarImage again = *img;
    for (int i = 0; i < bench; ++i) {
      auto t1 = std::chrono::steady_clock::now();
      auto ok = (*dec)->decode_into(data, opt, again);
      best_ms = std::min(best_ms, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count());
      if (!ok) {
        fmt::print(stderr, "j2kdecode: {}\n", ok.error().message);
        return 1;
      }
      auto s = (*dec)->last_stats();
      sum.tier2_ms += s.tier2_ms;
      sum.tier1_ms += s.tier1_ms;
      sum.idwt_ms += s.idwt_ms;
      sum.colour_ms += s.colour_ms;
    }
    double total_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    double per = total_ms / bench;
    double mbit = static_cast<double>(data.size()) * 8 / 1e6;
    fmt::print("{}: {} ({} bytes), backend {}, {} thread(s), {} runs\n", input, img->describe(), data.size(),
               backend_name, opt.threads, bench);
    fmt::print("  {:.2f} ms/frame mean, {:.2f} best; {:.1f} frames/s, {:.1f} Mbit/s of codestream per core (mean; first decode {:.2f} ms)\n",
               per, best_ms, 1000.0 / per, mbit / (per / 1000.0) / opt.threads, first_ms);
    if (backend_name != "openjpeg")
      fmt::print("  stages (ms/frame): tier-2 {:.2f}, tier-1 {:.2f}, IDWT {:.2f}, colour {:.2f}\n", sum.tier2_ms / bench,
                 sum.tier1_ms / bench, sum.idwt_ms / bench, sum.colour_ms / bench);
    fmt::print("  peak RSS {} MiB\n", peak_rss_kib() / 1024);
  }
  if (output.empty()) return 0;
  std::string ext = std::filesystem::path(output).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  Status written;
  if (ext == ".pgx") written = write_pgx(output, *img);
  else if (ext == ".pgm") written = write_pnm(output, *img, false);
  else if (ext == ".ppm") written = write_pnm(output, *img, true);
  else if (ext == ".png") written = write_png(output, *img);
  else if (ext == ".raw") written = write_raw(output, *img);
  else written = make_error(ErrorKind::unsupported, fmt::format("unknown output extension '{}'", ext));
  if (!written) {
    fmt::print(stderr, "j2kdecode: {}\n", written.error().message);
    return 1;
  }
  return 0;
}
