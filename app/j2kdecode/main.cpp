// j2kdecode: decode a JPEG 2000 codestream (or JP2 file) with our own decoder or OpenJPEG.
#include <CLI/CLI.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "common/cli_setup.hpp"
#include "decoder/decoder.hpp"
#include "syntax/locate.hpp"
#include "gpu/colour.hpp"
#include "media/image_io.hpp"

namespace {

using namespace j2k;

bool write_file(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  f.close();  // a small file is only written out here: a full disk shows now, not before
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
  // One maxval for all three: components of different depths (8/10/8) would be written unscaled
  // under the deepest one's maxval, the shallower ones dark.
  for (std::size_t c = 1; c < n; ++c)
    if (img.planes[c].precision != p0.precision)
      return make_error(ErrorKind::unsupported, fmt::format("PPM needs 3 components of one bit depth (these are {}, {} "
                                                            "and {} bits): write .pgx or .raw",
                                                            p0.precision, img.planes[1].precision, img.planes[2].precision));
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

/// 8-bit PNG for a quick look, as the player shows the picture: chroma upsampled and YCbCr
/// turned into RGB (the colour a JP2 file states; RGB after a component transform; otherwise
/// BT.709 video range, as broadcast codestreams are), grey for one component.
Status write_png(const std::string& out, const PlanarImage& img, bool digital_cinema) {
  gpu::RgbaImage rgba;
  gpu::ColourInterpretation colour;
  colour.full_range = img.full_range;  // sYCC (JP2) is full range
  if (digital_cinema) colour.coding = ColourCoding::xyz;  // X'Y'Z', as the player shows it
  if (Status st = gpu::to_rgba8(img, colour, rgba); !st)
    return make_error(st.error().kind, fmt::format("cannot show the picture as RGB: {} (write .pgx or .raw)", st.error().message));
  return media::write_png_rgba(out, rgba.pixels.data(), rgba.width, rgba.height);
}

/// "1920x1080, 3 components 10-bit unsigned (4:2:2)": what the decoded picture holds.
std::string img_summary(const PlanarImage& img) {
  std::string depths;
  bool same = true;
  for (const Plane& p : img.planes) same = same && p.precision == img.planes[0].precision && p.is_signed == img.planes[0].is_signed;
  if (img.planes.empty()) return fmt::format("{}x{}, no components", img.width, img.height);
  if (same) {
    depths = fmt::format("{}-bit {}", img.planes[0].precision, img.planes[0].is_signed ? "signed" : "unsigned");
  } else {
    for (const Plane& p : img.planes)
      depths += fmt::format("{}{}-bit{}", depths.empty() ? "" : "/", p.precision, p.is_signed ? " signed" : "");
  }
  std::string sizes;
  for (const Plane& p : img.planes) sizes += fmt::format("{}{}x{}", sizes.empty() ? "" : " ", p.width, p.height);
  return fmt::format("{}x{}, {} component{} {} (planes {})", img.width, img.height, img.planes.size(),
                     img.planes.size() == 1 ? "" : "s", depths, sizes);
}

long peak_rss_kib() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

}  // namespace

namespace {
/// What else a decode met that a person should know ("" when nothing): not damage, but the
/// picture or the codestream is not quite what it says.
std::string describe_notes(const j2k::decoder::DecodeStats& st) {
  std::vector<std::string> what;
  if (st.transform_skipped_tiles)
    what.push_back(fmt::format("the component transform asked for on {} tile(s) does not apply (components 0-2 differ in "
                               "size or wavelet): their colours are as coded, not transformed",
                               st.transform_skipped_tiles));
  if (st.too_deep_codeblocks)
    what.push_back(fmt::format("{} code-blocks have more than 30 magnitude bit-planes (a large ROI shift) and were left at "
                               "zero: beyond this decoder (OpenJPEG refuses such pictures); --strict refuses them",
                               st.too_deep_codeblocks));
  if (st.bytes_after_packets)
    what.push_back(fmt::format("{} bytes after the last packets were left unread (padding, or packet headers that "
                               "disagree with the data; --strict refuses them)",
                               st.bytes_after_packets));
  return fmt::format("{}", fmt::join(what, "; "));
}
}  // namespace

int main(int argc, char** argv) {
  using namespace j2k;
  CLI::App app{"j2kdecode — decode a JPEG 2000 codestream (.j2k/.j2c) or JP2 file.\n"
               "Output by extension: .pgx (one file per component, <stem>_<c>.pgx), .pgm (first component),\n"
               ".ppm (3 equal components), .png (8-bit preview), .raw (components in order, big-endian above 8 bits).\n"
               "Without -o it prints what it decoded (size, components, bit depth, time) on stdout."};
  cli::ToolSetup setup(app, "j2kdecode",
                       "  j2kdecode frame.j2c                      what the codestream holds, decoded\n"
                       "  j2kdecode frame.j2c -o frame.png --reduce 1\n"
                       "  j2kdecode frame.j2c --bench 50 --threads 4",
                       "  0  decoded (and written)\n"
                       "  1  error: the codestream could not be decoded, or the output not written\n"
                       "  2  bad arguments (including an input that does not exist or is a directory)");
  std::string input, output;
  j2k::decoder::DecodeOptions opt;
  int bench = 0;
  app.add_option("input", input, "codestream or JP2 file")->required()->check(CLI::ExistingFile);
  app.add_option("-o,--output", output, "output file (.pgx .pgm .ppm .png .raw)");
  app.add_option("--reduce", opt.reduce, "discard this many resolution levels")->check(cli::at_least(0));
  app.add_option("--layers", opt.max_layers, "decode only the first N quality layers (0 = all)")->check(cli::at_least(0));
  cli::DecoderOptions decoder_options;
  decoder_options.add_to(app);
  app.add_option("--threads", opt.threads, "threads used inside one decode")->check(CLI::Range(1, 256));
  app.add_flag("--strict", opt.strict, "fail on any damage instead of decoding what is intact");
  app.add_option("--bench", bench, "decode K times and print speed and time per stage")->check(cli::at_least(0));
  long long max_memory_mib = j2k::decoder::DecodeLimits{}.max_memory >> 20;
  app.add_option("--max-memory", max_memory_mib,
                 "MiB one decode may allocate; a codestream that needs more is refused before allocating")
      ->check(CLI::Range(16LL, 1LL << 30))
      ->capture_default_str();
  if (auto status = setup.parse(argc, argv)) return *status;
  // The output's kind is known from its name: a wrong one is a usage error, said before decoding.
  if (!output.empty()) {
    std::string ext = std::filesystem::path(output).extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (ext != ".pgx" && ext != ".pgm" && ext != ".ppm" && ext != ".png" && ext != ".raw")
      return setup.usage_error(fmt::format("-o {}: unknown output extension '{}' (use .pgx, .pgm, .ppm, .png or .raw)",
                                           output, ext));
  }
  auto choice = decoder_options.resolve();
  if (!choice) return setup.usage_error(choice.error().message);
  choice->limits.max_memory = max_memory_mib << 20;

  // A decode needs 16 bytes a sample (kBytesPerSample) and a codestream holds at most a few
  // bytes a sample: one larger than a quarter of --max-memory could not be decoded within it.
  // It is refused before reading (a file) or once past that (a device or pipe that never
  // ends, such as /dev/zero, which used to fill the memory).
  const auto max_input = static_cast<std::size_t>(choice->limits.max_memory / 4);
  auto too_large = [&] {
    fmt::print(stderr, "j2kdecode: '{}' is larger than a codestream --max-memory ({} MiB) can decode ({} MiB)\n", input,
               max_memory_mib, max_input >> 20);
    return cli::exit_error;
  };
  std::error_code size_ec;
  if (std::filesystem::is_regular_file(input, size_ec) && std::filesystem::file_size(input, size_ec) > max_input && !size_ec)
    return too_large();
  std::ifstream f(input, std::ios::binary);
  if (!f) {
    fmt::print(stderr, "j2kdecode: cannot read '{}'\n", input);
    return cli::exit_error;
  }
  std::vector<std::uint8_t> data;
  for (std::vector<char> chunk(1 << 20); f;) {
    f.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const auto got = static_cast<std::size_t>(f.gcount());
    if (data.size() + got > max_input) return too_large();
    data.insert(data.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(got));
  }
  if (!f.eof()) {
    fmt::print(stderr, "j2kdecode: cannot read '{}'\n", input);
    return cli::exit_error;
  }
  auto dec = j2k::app::make_decoder(*choice);
  if (!dec) {  // e.g. --backend cuda without a usable GPU
    fmt::print(stderr, "j2kdecode: {}\n", dec.error().message);
    return cli::exit_error;
  }
  auto t0 = std::chrono::steady_clock::now();
  auto img = (*dec)->decode(data, opt);
  if (!img) {
    fmt::print(stderr, "j2kdecode: {} ({})\n", img.error().message, j2k::to_string(img.error().kind));
    return cli::exit_error;
  }
  double first_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  auto st = (*dec)->last_stats();
  if (const std::string damage = j2k::decoder::describe_damage(st); !damage.empty())
    fmt::print(stderr, "j2kdecode: damaged input, decoded what could be read: {}\n", damage);
  if (const std::string notes = describe_notes(st); !notes.empty()) fmt::print(stderr, "j2kdecode: note: {}\n", notes);
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
        return cli::exit_error;
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
               choice->describe(), opt.threads, bench);
    fmt::print("  {:.2f} ms/frame mean, {:.2f} best; {:.1f} frames/s, {:.1f} Mbit/s of codestream per core (mean; first decode {:.2f} ms)\n",
               per, best_ms, 1000.0 / per, mbit / (per / 1000.0) / opt.threads, first_ms);
    if (choice->backend != j2k::app::DecoderBackend::openjpeg)
      fmt::print("  stages (ms/frame): tier-2 {:.2f}{}, tier-1 {:.2f}, IDWT {:.2f}, colour {:.2f}\n", sum.tier2_ms / bench,
                 st.parallel_tiles > 0 ? " (tile-parts of whole components read one per thread)" : "",
                 sum.tier1_ms / bench, sum.idwt_ms / bench, sum.colour_ms / bench);
    fmt::print("  peak RSS {} MiB\n", peak_rss_kib() / 1024);
  }
  if (output.empty()) {
    // Nothing to write: say what was decoded, so that the run is not silent.
    if (bench == 0) fmt::print("{}: {}, decoded in {:.1f} ms ({})\n", input, img_summary(*img), first_ms, choice->describe());
    return cli::exit_ok;
  }
  std::string ext = std::filesystem::path(output).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  Status written;
  if (ext == ".pgx") written = write_pgx(output, *img);
  else if (ext == ".pgm") written = write_pnm(output, *img, false);
  else if (ext == ".ppm") written = write_pnm(output, *img, true);
  else if (ext == ".png") written = write_png(output, *img, syntax::declares_digital_cinema(data));
  else if (ext == ".raw") written = write_raw(output, *img);
  else written = make_error(ErrorKind::unsupported, fmt::format("unknown output extension '{}'", ext));
  if (!written) {
    fmt::print(stderr, "j2kdecode: {}\n", written.error().message);
    return cli::exit_error;
  }
  return cli::exit_ok;
}
