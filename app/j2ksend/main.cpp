// j2ksend: test sender. Encodes video with OpenJPEG and sends it as MXF-wrapped JPEG 2000
// over RTP (RFC 6597 framing) at the real frame rate, packets paced over each frame period.
#include <CLI/CLI.hpp>
#include <csignal>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../common/cli_util.hpp"
#include "../common/stop_signal.hpp"
#include "core/log.hpp"
#include "core/url.hpp"
#include "packetizer/mxf_file.hpp"
#include "sender/encoded_loop.hpp"
#include "sender/sender.hpp"


int main(int argc, char** argv) {
  using namespace j2k;
  CLI::App app{"j2ksend — send test video as MXF-wrapped JPEG 2000 over RTP (RFC 6597)"};
  app.footer(
      "Examples:\n"
      "  j2ksend --to 'rtp://239.1.1.1:5004?iface=127.0.0.1' --size 1280x720 --fps 50 --bitrate 40M --duration 20\n"
      "  j2ksend --to rtp://127.0.0.1:5004 --pattern --lossless --frames 100\n"
      "Encoded frames are cached (see --cache-dir), so the second run starts at once.");
  std::string to = "rtp://239.1.1.1:5004?iface=127.0.0.1";
  std::string size = "1280x720", fps = "50", bitrate = "40M", image, chroma = "422", manifest, log_level = "info";
  std::string cache_dir = sender::default_cache_dir();
  int bits = 8, loop_frames = 0, threads = 0, resolutions = 6, codeblock = 64;
  long long frames = -1;
  double duration = 0;
  bool lossless = false, pattern = false, loop = false, no_cache = false;
  std::size_t mtu = 1400;
  app.add_option("--to", to, "destination URL: rtp://ADDR:PORT[?iface=LOCAL_ADDR&ttl=N&bind=SOURCE_ADDR]")->capture_default_str();
  app.add_option("--size", size, "picture size WxH")->capture_default_str();
  app.add_option("--fps", fps, "frame rate: 50, 25, 29.97, 30000/1001 …")->capture_default_str();
  app.add_option("--bits", bits, "bits per sample")->check(CLI::IsMember({8, 10, 12}))->capture_default_str();
  app.add_option("--chroma", chroma, "chroma format")->check(CLI::IsMember({"422", "444"}))->capture_default_str();
  app.add_option("--bitrate", bitrate, "lossy bit rate of the codestreams (e.g. 40M, 150M)")->capture_default_str();
  app.add_flag("--lossless", lossless, "reversible 5/3 coding (bit-exact)");
  auto* image_opt = app.add_option("--image", image, "photograph, or a directory of them (default: ../shared/media/flower.png)");
  auto* pattern_opt = app.add_flag("--pattern", pattern, "synthetic colour bars with a frame counter")->excludes(image_opt);
  std::string mxf_file;
  app.add_option("--mxf", mxf_file, "stream the frames of an existing MXF file (JPEG 2000, e.g. written by FFmpeg)")
      ->excludes(image_opt)->excludes(pattern_opt);
  auto* frames_opt = app.add_option("--frames", frames, "number of frames to send");
  app.add_option("--duration", duration, "seconds to send")->excludes(frames_opt);
  app.add_flag("--loop", loop, "send until interrupted (Ctrl-C)");
  app.add_option("--loop-frames", loop_frames, "distinct frames encoded ahead and repeated (default: 2 s worth)");
  std::string interlaced;
  bool dual = false;
  app.add_option("--interlaced", interlaced, "code each frame as two fields: I1 (a KLV per field) or I2 (both in one KLV); "
                                             "with rfc5371, fields are sent with tp 1 and 2")
      ->check(CLI::IsMember({"I1", "I2", "i1", "i2"}));
  app.add_flag("--dual-codestream", dual, "separate luma (Csiz 1) and chroma (Csiz 2) codestreams per frame or field");
  std::string payload_format = "mxf";
  app.add_option("--format", payload_format,
                 "payload: mxf (KLVs in RTP, RFC 6597), mxf-stream (the MXF bytes cut at the MTU regardless of "
                 "KLV boundaries, as loose senders do) or rfc5371")
      ->check(CLI::IsMember({"mxf", "mxf-stream", "rfc5371"}))->capture_default_str();
  app.add_option("--mtu", mtu, "maximum RTP payload bytes")->check(CLI::Range(200, 8900))->capture_default_str();
  app.add_option("--resolutions", resolutions, "wavelet resolutions (levels + 1)")->check(CLI::Range(1, 10))->capture_default_str();
  app.add_option("--codeblock", codeblock, "code-block size")->check(CLI::IsMember({16, 32, 64}))->capture_default_str();
  app.add_option("--threads", threads, "encoder threads (0 = all cores)");
  app.add_option("--cache-dir", cache_dir, "where encoded loops are kept")->capture_default_str();
  app.add_flag("--no-cache", no_cache, "always encode, never read or write the cache");
  app.add_option("--manifest", manifest, "write JSON with the checksum of every frame sent");
  sender::Impairments imp;
  auto* impair = app.add_option_group("Impairments", "simulate a bad network (reproducible with --seed)");
  impair->add_option("--loss", imp.loss, "probability that a packet starts a loss event")->check(CLI::Range(0.0, 1.0));
  impair->add_option("--burst-loss", imp.burst, "packets lost per loss event")->check(CLI::Range(1, 1000));
  impair->add_option("--reorder", imp.reorder_depth, "send some packets after DEPTH later ones")->check(CLI::Range(0, 1000));
  impair->add_option("--reorder-prob", imp.reorder, "probability that a packet is reordered")->check(CLI::Range(0.0, 1.0))->capture_default_str();
  impair->add_option("--duplicate", imp.duplicate, "probability that a packet is sent twice")->check(CLI::Range(0.0, 1.0));
  impair->add_option("--jitter", imp.jitter_ms, "uniform extra delay per packet, ms")->check(CLI::Range(0.0, 1000.0));
  impair->add_option("--corrupt", imp.corrupt, "probability that a payload byte is changed")->check(CLI::Range(0.0, 1.0));
  impair->add_option("--seed", imp.seed, "random seed for the impairments")->capture_default_str();
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  set_log_level(log_level);
  auto log = logger("j2ksend");

  auto url = parse_stream_url(to);
  if (!url) { log->error("{}", url.error().message); return 2; }
  if (url->scheme != StreamUrl::Scheme::rtp) { log->error("--to must be an rtp:// or udp:// URL"); return 2; }
  auto wh = cli::parse_size(size);
  if (!wh) { log->error("--size '{}' is not WxH (e.g. 1280x720)", size); return 2; }
  auto rate = cli::parse_fps(fps);
  if (!rate) { log->error("--fps '{}' is not a frame rate (e.g. 50 or 30000/1001)", fps); return 2; }
  auto bps = cli::parse_bitrate(bitrate);
  if (!bps) { log->error("--bitrate '{}' is not a rate (e.g. 40M)", bitrate); return 2; }

  sender::PictureFormat format{wh->first, wh->second, bits, chroma == "422" ? 2 : 1};
  std::vector<sender::EncodedFrame> mxf_frames;
  std::vector<std::vector<std::uint8_t>> mxf_header;
  if (!mxf_file.empty()) {
    std::ifstream in(mxf_file, std::ios::binary);
    if (!in) { log->error("cannot read MXF file '{}'", mxf_file); return 2; }
    std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto contents = packetizer::read_mxf(bytes);
    if (!contents) { log->error("{}: {}", mxf_file, contents.error().message); return 2; }
    log->info("{}: {} frames{}", mxf_file, contents->packages.size(),
              contents->descriptor ? ", " + contents->descriptor->describe() : std::string(", no picture descriptor"));
    if (contents->descriptor && contents->descriptor->frame_rate() > 0 && app.count("--fps") == 0) {
      rate = std::make_pair(contents->descriptor->sample_rate_num, contents->descriptor->sample_rate_den);
    }
    for (auto& p : contents->packages) {
      sender::EncodedFrame frame;
      frame.klvs = std::move(p);
      mxf_frames.push_back(std::move(frame));
    }
    mxf_header = std::move(contents->header);
  }
  std::unique_ptr<sender::FrameSource> source;
  if (!mxf_frames.empty()) {
    // Frames come from the file: nothing to encode.
  } else if (pattern) {
    source = sender::make_pattern_source(format);
  } else {
    if (image.empty()) image = std::string(J2K_DEFAULT_MEDIA_DIR) + "/flower.png";
    auto src = sender::make_image_source(image, format);
    if (!src) { log->error("{} (use --image FILE|DIR or --pattern)", src.error().message); return 2; }
    source = std::move(src).value();
  }
  const double fps_value = static_cast<double>(rate->first) / rate->second;
  sender::LoopSpec spec;
  spec.frames = loop_frames > 0 ? loop_frames : std::max(1, static_cast<int>(std::lround(2 * fps_value)));
  spec.encode.lossless = lossless;
  spec.encode.target_bytes = static_cast<std::size_t>(*bps / fps_value / 8.0);
  spec.encode.resolutions = resolutions;
  spec.encode.codeblock = codeblock;
  spec.threads = threads;
  spec.cache_dir = no_cache ? "" : cache_dir;
  spec.interlaced = !interlaced.empty();
  spec.dual = dual;
  if (dual && payload_format == "rfc5371") { log->error("--dual-codestream needs --format mxf (RFC 5371 carries one codestream per field)"); return 2; }
  Result<std::vector<sender::EncodedFrame>> encoded = std::move(mxf_frames);
  if (source) encoded = sender::encode_loop(*source, format, spec);
  if (!encoded) { log->error("{}", encoded.error().message); return 1; }
  if (!mxf_header.empty()) spec.frames = static_cast<int>(encoded->size());

  sender::SendConfig sc;
  sc.to = *url;
  sc.fps_num = rate->first;
  sc.fps_den = rate->second;
  sc.max_payload = mtu;
  sc.impair = imp;
  sc.rfc5371 = payload_format == "rfc5371";
  sc.mxf_stream = payload_format == "mxf-stream";
  sc.interlace = interlaced.empty() ? 0 : (interlaced == "I1" || interlaced == "i1") ? 1 : 2;
  sc.mxf_header = std::move(mxf_header);
  if (!sc.mxf_header.empty() && sc.rfc5371) { log->error("--mxf streams MXF KLVs: use --format mxf"); return 2; }
  if (!loop) sc.frames = frames >= 0 ? frames : duration > 0 ? std::llround(duration * fps_value) : spec.frames;
  cli::install_stop_signals();
  sender::Sender s(sc, format, std::move(encoded).value());
  auto totals = s.run(cli::stop_requested());
  if (!totals) { log->error("{}", totals.error().message); return 1; }
  if (!manifest.empty()) {
    nlohmann::json j;
    j["frames"] = totals->frames;
    j["packets"] = totals->packets;
    j["lossless"] = lossless;
    j["dropped"] = totals->dropped;
    j["duplicated"] = totals->duplicated;
    j["reordered"] = totals->reordered;
    j["corrupted"] = totals->corrupted;
    auto& list = j["checksums"] = nlohmann::json::array();
    auto& per_frame = j["sent"] = nlohmann::json::array();
    for (const auto& f : s.sent_frames()) {
      list.push_back(fmt::format("{:016x}", f.checksum));
      per_frame.push_back({{"rtp_timestamp", f.rtp_timestamp}, {"checksum", fmt::format("{:016x}", f.checksum)},
                           {"damaged", f.damaged}});
    }
    std::ofstream(manifest) << j.dump(1) << '\n';
  }
  // One line with exactly what was done, for tests to compare with the receiver's counters.
  fmt::print("sent {} frames, {} packets, {} bytes; dropped {} packets, duplicated {}, reordered {}, corrupted {}; "
             "damaged frames {}, send errors {}, late frames {}\n",
             totals->frames, totals->packets, totals->bytes, totals->dropped, totals->duplicated, totals->reordered,
             totals->corrupted, totals->damaged_frames, totals->send_errors, totals->late_frames);
  return totals->send_errors ? 1 : 0;
}
