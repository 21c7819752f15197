// j2ksend: test sender. Encodes video with OpenJPEG and sends it as MXF-wrapped JPEG 2000
// over RTP (RFC 6597 framing) at the real frame rate, packets paced over each frame period.
#include <CLI/CLI.hpp>
#include <csignal>
#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>

#include "common/cli_setup.hpp"
#include "common/cli_util.hpp"
#include "common/stop_signal.hpp"
#include "core/log.hpp"
#include "core/url.hpp"
#include "depacketizer/mxf.hpp"
#include "net/interface_address.hpp"
#include "packetizer/mxf_file.hpp"
#include "syntax/locate.hpp"
#include "sender/encoded_loop.hpp"
#include "sender/sdp.hpp"
#include "sender/sender.hpp"


int main(int argc, char** argv) {
  using namespace j2k;
  CLI::App app{"j2ksend — send test video as JPEG 2000 over RTP: MXF-wrapped (RFC 6597), RFC 5371 or VSF TR-01 TS.\n"
               "Encoded frames are cached (see --cache-dir), so the second run starts at once.\n"
               "Messages go to stderr; stdout holds the final \"sent …\" line."};
  cli::ToolSetup setup(app, "j2ksend",
                       "  j2ksend --to 'rtp://239.1.1.1:5004?iface=127.0.0.1' --size 1280x720 --fps 50 --bitrate 40M --duration 20\n"
                       "  j2ksend --to rtp://127.0.0.1:5004 --pattern --lossless --frames 100",
                       "  0  every frame was sent\n"
                       "  1  error: encoding, sending\n"
                       "  2  bad arguments, or an --image/--mxf input that does not exist or cannot be read");
  std::string to = "rtp://239.1.1.1:5004?iface=127.0.0.1";
  std::string size = "1280x720", fps = "50", bitrate = "40M", image, chroma = "422", manifest;
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
  std::string hdr = "off";
  app.add_option("--hdr", hdr, "grade the pictures into BT.2100 HDR: pq or hlg (YCbCr BT.2020, the picture's white at "
                               "203 cd/m2, highlights to 1000; MXF says it in TransferCharacteristic, TR-01 as colour "
                               "specification 7 for PQ; 10 bits unless --bits 12); off: SDR BT.709")
      ->check(CLI::IsMember({"off", "pq", "hlg"}))->capture_default_str();
  bool dci = false;
  app.add_flag("--dci", dci, "digital cinema frames: the pictures as X'Y'Z' (SMPTE 428-1), 12-bit 4:4:4 with the "
                             "component transform, Rsiz declaring the DCI 2K (or 4K, above 2048 wide) profile");
  app.add_option("--chroma", chroma, "chroma format")->check(CLI::IsMember({"422", "444"}))->capture_default_str();
  app.add_option("--bitrate", bitrate, "lossy bit rate of the codestreams (e.g. 40M, 150M)")->capture_default_str();
  app.add_flag("--lossless", lossless, "reversible 5/3 coding (bit-exact)");
  auto* image_opt = app.add_option("--image", image, "photograph, or a directory of them (default: the repository's app/media/data/flower.png)");
  auto* pattern_opt = app.add_flag("--pattern", pattern, "synthetic colour bars with a frame counter")->excludes(image_opt);
  std::string mxf_file;
  app.add_option("--mxf", mxf_file, "stream the frames of an existing MXF file (JPEG 2000, e.g. written by FFmpeg)")
      ->excludes(image_opt)->excludes(pattern_opt);
  auto* frames_opt = app.add_option("--frames", frames, "number of frames to send")->check(cli::at_least(0));
  app.add_option("--duration", duration, "seconds to send")->check(cli::at_least(0))->excludes(frames_opt);
  app.add_flag("--loop", loop, "send until interrupted (Ctrl-C)");
  app.add_option("--loop-frames", loop_frames, "distinct frames encoded ahead and repeated (default: 2 s worth)")
      ->check(CLI::Range(0, 100000));
  std::string interlaced;
  bool dual = false;
  app.add_option("--interlaced", interlaced, "code each frame as two fields taken half a frame apart, as an interlaced "
                                             "camera scans them (top first): I1 (a KLV per field) or I2 (both in one KLV); "
                                             "with rfc5371, fields are sent with tp 1 and 2")
      ->check(CLI::IsMember({"I1", "I2", "i1", "i2"}));
  app.add_flag("--dual-codestream", dual, "separate luma (Csiz 1) and chroma (Csiz 2) codestreams per frame or field");
  std::string payload_format = "mxf";
  app.add_option("--format", payload_format,
                 "payload: mxf (KLVs in RTP, RFC 6597), mxf-stream (the MXF bytes cut at the MTU regardless of "
                 "KLV boundaries, as loose senders do), rfc5371, or ts (VSF TR-01: JPEG 2000 in MPEG-2 TS, RTP/MP2T)")
      ->check(CLI::IsMember({"mxf", "mxf-stream", "rfc5371", "ts"}))->capture_default_str();
  std::string fec_matrix, to2;
  app.add_option("--fec", fec_matrix,
                 "SMPTE ST 2022-1 FEC LxD (e.g. 10x10): column FEC to port+2, row FEC to port+4 (of each path with --to2)");
  app.add_option("--to2", to2, "SMPTE ST 2022-7: send the same packets to this second URL too");
  app.add_option("--mtu", mtu, "maximum RTP payload bytes")->check(CLI::Range(200, 8900))->capture_default_str();
  app.add_option("--resolutions", resolutions, "wavelet resolutions (levels + 1)")->check(CLI::Range(1, 10))->capture_default_str();
  app.add_option("--codeblock", codeblock, "code-block size")->check(CLI::IsMember({16, 32, 64}))->capture_default_str();
  bool tile_parts = false;
  app.add_flag("--tile-parts", tile_parts, "one tile-part per component, as cinema and broadcast encoders write their "
                                           "component-first frames (receivers can parse the components in parallel)");
  app.add_option("--threads", threads, "encoder threads (0 = all cores)")->check(CLI::Range(0, 256));
  app.add_option("--cache-dir", cache_dir, "where encoded loops are kept")->capture_default_str();
  app.add_flag("--no-cache", no_cache, "always encode, never read or write the cache");
  app.add_option("--manifest", manifest,
                 "write JSON with every frame sent (RTP timestamp, checksum, first sequence number, packets, "
                 "and which were dropped, corrupted, duplicated or reordered) and the sequence numbers of every "
                 "impaired packet");
  std::string sdp_file;
  app.add_option("--sdp", sdp_file, "write the session description (RFC 8866) receivers such as GStreamer's sdpdemux "
                                    "or ffplay can open; a source filter when ?bind= fixes the sender's address");
  std::string audio_mode = "auto";
  app.add_option("--audio", audio_mode,
                 "sound with the pictures: auto (the PCM track of an --mxf file, none otherwise), off, or tone "
                 "(a 1 kHz line-up tone with channel identification: channel N is cut for N x 250 ms every 3 s); "
                 "MXF sound elements, or SMPTE ST 302M in TS")
      ->check(CLI::IsMember({"auto", "off", "tone"}))->capture_default_str();
  sender::SoundSpec sound;
  app.add_option("--audio-channels", sound.format.channels, "channels of the generated sound (TS: 2, 4, 6 or 8)")
      ->check(CLI::Range(1, 16))->capture_default_str();
  app.add_option("--audio-bits", sound.format.bits, "bits per sample of the generated sound")
      ->check(CLI::IsMember({16, 20, 24}))->capture_default_str();
  app.add_option("--audio-level", sound.level_dbfs, "peak level of the line-up tone, dBFS")
      ->check(CLI::Range(-60.0, 0.0))->capture_default_str();
  bool sync_test = false;
  app.add_flag("--sync-test", sync_test, "lip-sync test signal: a white flash and a click (1 ms at -6 dBFS) on the same "
                                         "frame once a second, silence between (j2kplay --sync-probe measures the offset)");
  bool no_rtcp = false;
  app.add_flag("--no-rtcp", no_rtcp, "send no RTCP (sender reports about once a second and BYE at the end go to port + 1)");
  sender::Impairments imp;
  auto* impair = app.add_option_group("Impairments", "simulate a bad network (reproducible with --seed)");
  impair->add_option("--loss", imp.loss, "probability that a packet starts a loss event")->check(CLI::Range(0.0, 1.0));
  impair->add_option("--burst-loss", imp.burst, "packets lost per loss event")->check(CLI::Range(1, 1000));
  impair->add_option("--reorder", imp.reorder_depth, "send some packets after DEPTH later ones")->check(CLI::Range(0, 1000));
  impair->add_option("--reorder-prob", imp.reorder, "probability that a packet is reordered")->check(CLI::Range(0.0, 1.0))->capture_default_str();
  impair->add_option("--duplicate", imp.duplicate, "probability that a packet is sent twice")->check(CLI::Range(0.0, 1.0));
  impair->add_option("--jitter", imp.jitter_ms, "uniform extra delay per packet, ms")->check(CLI::Range(0.0, 1000.0));
  impair->add_option("--corrupt", imp.corrupt, "probability that a packet gets one byte after its RTP header changed "
                                               "(per packet; the manifest marks its frame damaged)")->check(CLI::Range(0.0, 1.0));
  impair->add_option("--end-loss", imp.end_loss, "drop the last N packets of the stream (a burst at the very end; needs "
                                                 "--frames or --duration)");
  impair->add_option("--seed", imp.seed, "random seed for the impairments")->capture_default_str();
  double loss2 = 0;
  int burst2 = 1;
  impair->add_option("--loss2", loss2, "like --loss, on the --to2 path (independent)")->check(CLI::Range(0.0, 1.0));
  impair->add_option("--burst-loss2", burst2, "like --burst-loss, on the --to2 path")->check(CLI::Range(1, 1000));
  if (auto status = setup.parse(argc, argv)) return *status;
  auto log = logger("j2ksend");

  auto url = parse_stream_url(to);
  if (!url) return setup.usage_error(url.error().message);
  if (url->scheme != StreamUrl::Scheme::rtp) return setup.usage_error("--to must be an rtp:// or udp:// URL");
  auto wh = cli::parse_size("--size", size);
  if (!wh) return setup.usage_error(wh.error().message);
  auto rate = cli::parse_fps(fps);
  if (!rate)
    return setup.usage_error(fmt::format("--fps '{}' is not a frame rate from {} to {} (e.g. 50 or 30000/1001)", fps,
                                         cli::kMinFps, cli::kMaxFps));
  auto bps = cli::parse_bitrate(bitrate);
  if (!bps) return setup.usage_error(fmt::format("--bitrate '{}' is not a rate up to 100G (e.g. 40M)", bitrate));
  if (dual && payload_format == "rfc5371")
    return setup.usage_error("--dual-codestream needs --format mxf (RFC 5371 carries one codestream per field)");
  if (!mxf_file.empty() && payload_format == "rfc5371") return setup.usage_error("--mxf streams MXF KLVs: use --format mxf");

  if (hdr != "off" && !mxf_file.empty()) return setup.usage_error("--hdr grades our own pictures: not with --mxf");
  if (dci && (hdr != "off" || !mxf_file.empty()))
    return setup.usage_error("--dci makes X'Y'Z' pictures of our own: not with --hdr or --mxf");
  if (dci) {
    bits = 12;
    chroma = "444";
  }
  if (hdr != "off" && bits == 8) {
    // BT.2100 has no 8-bit form: 10 bits unless --bits says otherwise.
    if (app.count("--bits") > 0) return setup.usage_error("--hdr needs --bits 10 or 12 (BT.2100 has no 8-bit form)");
    bits = 10;
  }
  sender::PictureFormat format{wh->first, wh->second, bits, chroma == "422" ? 2 : 1};
  if (hdr == "pq") format.transfer = TransferFunction::pq;
  format.dci = dci;
  if (hdr == "hlg") {
    format.transfer = TransferFunction::hlg;
    if (payload_format == "ts")
      log->warn("--hdr hlg --format ts: TR-01's J2K descriptor says BT.2020 but has no code for HLG; receivers need "
                "to be told (j2kplay --transfer hlg)");
  }
  std::vector<sender::EncodedFrame> mxf_frames;
  std::vector<std::vector<std::uint8_t>> mxf_header;
  if (!mxf_file.empty()) {
    std::ifstream in(mxf_file, std::ios::binary);
    if (!in) { log->error("cannot read MXF file '{}'", mxf_file); return cli::exit_usage; }
    std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto contents = packetizer::read_mxf(bytes);
    if (!contents) { log->error("{}: {}", mxf_file, contents.error().message); return cli::exit_usage; }
    log->info("{}: {} frames{}", mxf_file, contents->packages.size(),
              contents->descriptor ? ", " + contents->descriptor->describe() : std::string(", no picture descriptor"));
    if (contents->descriptor && contents->descriptor->frame_rate() > 0 && app.count("--fps") == 0) {
      rate = std::make_pair(contents->descriptor->sample_rate_num, contents->descriptor->sample_rate_den);
    }
    const bool file_sound = audio_mode == "auto" && contents->audio;
    if (contents->sound_elements && !contents->audio)
      log->warn("{}: its sound is not sent ({})", mxf_file, contents->audio_problem.empty() ? "no sound descriptor" : contents->audio_problem);
    if (file_sound) {
      log->info("{}: sound {} channels, {} Hz, {}-bit PCM", mxf_file, contents->audio->channels, contents->audio->sample_rate,
                contents->audio->bits);
      sound.kind = sender::SoundKind::file;
      sound.format = *contents->audio;
    }
    // Without its sound: the sound elements and descriptors stay home.
    auto is_sound = [](const std::vector<std::uint8_t>& klv) {
      auto h = depacketizer::parse_klv_header(klv);
      const auto kind = h ? depacketizer::classify_key(h->key) : depacketizer::KlvKind::unknown;
      return kind == depacketizer::KlvKind::sound_element || kind == depacketizer::KlvKind::sound_descriptor;
    };
    if (!file_sound) std::erase_if(contents->header, is_sound);
    for (auto& p : contents->packages) {
      sender::EncodedFrame frame;
      if (payload_format == "ts") {
        // TS carries codestreams (JP2 boxes stripped) and the sound as ST 302M.
        auto parts = packetizer::package_parts(p, file_sound ? contents->audio : std::nullopt);
        if (!parts) { log->error("{}: {}", mxf_file, parts.error().message); return cli::exit_usage; }
        for (Bytes picture : parts->pictures) {
          auto cs = syntax::locate_codestream(picture);
          if (!cs) { log->error("{}: {}", mxf_file, cs.error().message); return cli::exit_usage; }
          frame.parts.emplace_back(cs->begin(), cs->end());
        }
        if (frame.parts.size() == 1) frame.codestream = std::move(frame.parts.front()), frame.parts.clear();
        frame.sound = std::move(parts->sound);
      } else {
        if (!file_sound) std::erase_if(p, is_sound);
        // The sound rides in the KLVs as they are; decoded here only to be counted.
        if (file_sound) {
          auto parts = packetizer::package_parts(p, contents->audio);
          if (!parts) { log->error("{}: {}", mxf_file, parts.error().message); return cli::exit_usage; }
          frame.sound = std::move(parts->sound);
        }
        frame.klvs = std::move(p);
      }
      mxf_frames.push_back(std::move(frame));
    }
    if (payload_format != "ts") mxf_header = std::move(contents->header);
  }
  const double fps_value = static_cast<double>(rate->first) / rate->second;
  const int frames_per_second = std::max(1, static_cast<int>(std::lround(fps_value)));
  if (sync_test && !mxf_file.empty()) return setup.usage_error("--sync-test makes its own pictures: not with --mxf");
  if (audio_mode == "tone" && !mxf_file.empty()) return setup.usage_error("--audio tone makes its own sound: not with --mxf");
  if (audio_mode == "tone") sound.kind = sender::SoundKind::tone;
  if (sync_test && audio_mode != "off") {
    sound.kind = sender::SoundKind::click;
    sound.click_period = frames_per_second;
  }
  if (sound.any() && payload_format == "rfc5371") return setup.usage_error("RFC 5371 carries no sound: use --format mxf or ts (or --audio off)");
  if (sound.any() && payload_format == "ts" && (sound.format.sample_rate != 48000 || sound.format.channels % 2 || sound.format.channels > 8))
    return setup.usage_error(fmt::format("SMPTE ST 302M carries 2, 4, 6 or 8 channels at 48 kHz, not {} at {} Hz (use --audio off)",
                                         sound.format.channels, sound.format.sample_rate));
  // Every option is checked before the frames are encoded (minutes for a 4K loop).
  if (payload_format == "ts" && dual) return setup.usage_error("--format ts carries one codestream per frame or field");
  int fec_columns = 0, fec_rows = 0;
  if (!fec_matrix.empty()) {
    char x = 0;
    std::istringstream in(fec_matrix);
    // 2022-1: 1 ≤ L ≤ 20, D = 0 (row FEC only) or 4 ≤ D ≤ 20, L × D ≤ 100.
    int l = 0, d = 0;
    if (!(in >> l >> x >> d) || x != 'x' || l < 1 || l > 20 || d < 0 || d > 20 || (d > 0 && d < 4) || l * d > 100)
      return setup.usage_error(
          fmt::format("--fec '{}' is not LxD with 1 ≤ L ≤ 20, D = 0 or 4 ≤ D ≤ 20, L·D ≤ 100 (e.g. 10x10)", fec_matrix));
    fec_columns = l;
    fec_rows = d;
  }
  std::optional<StreamUrl> to2_url;
  if (!to2.empty()) {
    auto u2 = parse_stream_url(to2);
    if (!u2 || u2->scheme != StreamUrl::Scheme::rtp) return setup.usage_error("--to2 must be an rtp:// or udp:// URL");
    to2_url = *u2;
  }
  if (imp.end_loss > 0 && loop) return setup.usage_error("--end-loss needs a stream with an end: drop --loop");
  // ?iface= may name an interface: a typo is said now, not after the encoding.
  for (const StreamUrl* u : {&*url, to2_url ? &*to2_url : nullptr})
    if (u && !u->iface.empty())
      if (auto found = j2k::net::interface_address(u->iface); !found) return setup.usage_error(found.error().message);
  // The manifest's file is made now: a path that cannot be written fails before the run.
  if (!manifest.empty() && !std::ofstream(manifest)) {
    log->error("cannot write the --manifest file '{}'", manifest);
    return cli::exit_error;
  }
  std::unique_ptr<sender::FrameSource> source;
  if (!mxf_frames.empty()) {
    // Frames come from the file: nothing to encode.
  } else if (pattern) {
    source = sender::make_pattern_source(format);
  } else {
    if (image.empty()) image = std::string(J2K_DEFAULT_MEDIA_DIR) + "/flower.png";
    auto src = sender::make_image_source(image, format);
    if (!src) { log->error("{} (use --image FILE|DIR or --pattern)", src.error().message); return cli::exit_usage; }
    source = std::move(src).value();
  }
  if (source && sync_test) source = sender::make_flash_source(std::move(source), frames_per_second, format);
  sender::LoopSpec spec;
  spec.frames = loop_frames > 0 ? loop_frames : std::max(1, static_cast<int>(std::lround(2 * fps_value)));
  // The loop repeats its flashes in step with the clicks (every second of frames).
  if (sync_test) spec.frames = (spec.frames + frames_per_second - 1) / frames_per_second * frames_per_second;
  spec.encode.lossless = lossless;
  spec.encode.target_bytes = static_cast<std::size_t>(*bps / fps_value / 8.0);
  spec.encode.resolutions = resolutions;
  spec.encode.codeblock = codeblock;
  spec.encode.tile_part_per_component = tile_parts;
  if (dci) spec.encode.rsiz = wh->first > 2048 ? 4 : 3;  // DCI 4K or 2K
  spec.threads = threads;
  spec.cache_dir = no_cache ? "" : cache_dir;
  spec.interlaced = !interlaced.empty();
  spec.dual = dual;
  Result<std::vector<sender::EncodedFrame>> encoded = std::move(mxf_frames);
  if (source) encoded = sender::encode_loop(*source, format, spec);
  if (!encoded) { log->error("{}", encoded.error().message); return cli::exit_error; }
  if (!mxf_file.empty()) spec.frames = static_cast<int>(encoded->size());

  sender::SendConfig sc;
  sc.to = *url;
  sc.fps_num = rate->first;
  sc.fps_den = rate->second;
  sc.max_payload = mtu;
  sc.impair = imp;
  sc.rtcp = !no_rtcp;
  sc.rfc5371 = payload_format == "rfc5371";
  sc.mxf_stream = payload_format == "mxf-stream";
  sc.interlace = interlaced.empty() ? 0 : (interlaced == "I1" || interlaced == "i1") ? 1 : 2;
  sc.mxf_header = std::move(mxf_header);
  sc.ts = payload_format == "ts";
  sc.sound = sound;
  sc.fec_columns = fec_columns;
  sc.fec_rows = fec_rows;
  if (to2_url) sc.to2 = *to2_url;
  sc.loss2 = loss2;
  sc.burst2 = burst2;
  if (!sc.mxf_header.empty() && sc.rfc5371) { log->error("--mxf streams MXF KLVs: use --format mxf"); return cli::exit_usage; }
  if (!loop) sc.frames = frames >= 0 ? frames : duration > 0 ? std::llround(duration * fps_value) : spec.frames;
  if (!sdp_file.empty()) {
    sender::SdpParams sp;
    sp.to = sc.to;
    if (auto it = sc.to.query.find("bind"); it != sc.to.query.end()) sp.source = it->second;
    sp.rfc5371 = sc.rfc5371;
    sp.ts = sc.ts;
    sp.format = format;
    sp.interlaced = sc.interlace != 0;
    sp.fps_num = sc.fps_num;
    sp.fps_den = sc.fps_den;
    sp.session_id = static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch() / std::chrono::seconds(1));
    std::ofstream out(sdp_file, std::ios::binary);
    out << sender::make_sdp(sp);
    if (!out) { log->error("cannot write the SDP file '{}'", sdp_file); return 1; }
    log->info("session description written to {}", sdp_file);
  }
  cli::install_stop_signals();
  sc.record_frames = !manifest.empty();
  sender::Sender s(sc, format, std::move(encoded).value());
  auto totals = s.run(cli::stop_requested());
  if (!totals) { log->error("{}", totals.error().message); return cli::exit_error; }
  if (!manifest.empty()) {
    nlohmann::json j;
    j["frames"] = totals->frames;
    j["packets"] = totals->packets;
    j["lossless"] = lossless;
    j["dropped"] = totals->dropped;
    j["dropped2"] = totals->dropped2;
    j["duplicated"] = totals->duplicated;
    j["reordered"] = totals->reordered;
    j["corrupted"] = totals->corrupted;
    j["corrupt_unit"] = "packet";  // --corrupt P: each packet, with probability P, gets one byte changed
    j["damaged_frames"] = totals->damaged_frames;
    j["rtcp_reports"] = totals->rtcp_reports;
    if (sc.sound.any())
      j["sound"] = {{"sample_frames", totals->sound_samples}, {"channels", sc.sound.format.channels},
                    {"bits", sc.sound.format.bits}, {"sample_rate", sc.sound.format.sample_rate}};
    auto& list = j["checksums"] = nlohmann::json::array();
    auto& per_frame = j["sent"] = nlohmann::json::array();
    for (const auto& f : s.sent_frames()) {
      list.push_back(fmt::format("{:016x}", f.checksum));
      per_frame.push_back({{"rtp_timestamp", f.rtp_timestamp}, {"checksum", fmt::format("{:016x}", f.checksum)},
                           {"damaged", f.damaged}, {"first_sequence", f.first_sequence}, {"packets", f.packets},
                           {"dropped", f.dropped}, {"corrupted", f.corrupted}, {"duplicated", f.duplicated},
                           {"reordered", f.reordered}});
      if (sc.to2) {
        per_frame.back()["dropped_path2"] = f.dropped_path2;
        per_frame.back()["dropped_both"] = f.dropped_both;  // what a receiver merging the paths loses
      }
    }
    // Sequence numbers of the impaired packets in sending order, for checking a receiver's event log.
    const auto& log_of = s.impairment_log();
    auto sequences = [](const std::vector<sender::PacketEvent>& events) {
      auto a = nlohmann::json::array();
      for (const auto& e : events) a.push_back(e.sequence);
      return a;
    };
    auto corrupted = nlohmann::json::array();
    for (const auto& e : log_of.corrupted) corrupted.push_back({{"sequence", e.sequence}, {"offset", e.offset}});
    j["impaired_packets"] = {{"dropped", sequences(log_of.dropped)},
                             {"duplicated", sequences(log_of.duplicated)},
                             {"reordered", sequences(log_of.reordered)},
                             {"corrupted", corrupted},
                             {"dropped_path2", sequences(log_of.dropped_path2)},
                             {"truncated", log_of.truncated}};
    j["sent_truncated"] = s.frames_truncated();  // "sent" holds the first Sender::kMaxRecordedFrames
    std::ofstream out(manifest);
    out << j.dump(1) << '\n';
    out.close();
    if (!out) {
      log->error("writing the --manifest file '{}' failed", manifest);
      return cli::exit_error;
    }
  }
  // One line with exactly what was done, for tests to compare with the receiver's counters.
  fmt::print("sent {} frames, {} packets, {} bytes; dropped {} packets, duplicated {}, reordered {}, corrupted {}; "
             "damaged frames {}, send errors {}, late frames {}\n",
             totals->frames, totals->packets, totals->bytes, totals->dropped, totals->duplicated, totals->reordered,
             totals->corrupted, totals->damaged_frames, totals->send_errors, totals->late_frames);
  if (sc.sound.any())
    fmt::print("sound: {} sample frames of {} channels, {}-bit, {} Hz ({})\n", totals->sound_samples, sc.sound.format.channels,
               sc.sound.format.bits, sc.sound.format.sample_rate,
               sc.sound.kind == sender::SoundKind::file ? "the file's" : sc.sound.kind == sender::SoundKind::tone ? "line-up tone" : "clicks");
  if (sc.to2)
    fmt::print("path 2: dropped {} packets (on both paths {}); FEC packets {}\n", totals->dropped2, totals->dropped_both,
               totals->fec_packets);
  else if (sc.fec_columns)
    fmt::print("FEC packets {}\n", totals->fec_packets);
  return totals->send_errors ? cli::exit_error : cli::exit_ok;
}
