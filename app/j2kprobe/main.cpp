// j2kprobe: headless receiver and analyser. Joins a stream, reassembles and decodes its
// frames, prints statistics every second and, with --json, a summary on stdout.
#include <CLI/CLI.hpp>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <optional>
#include <utility>
#include <cstring>

#include <nlohmann/json.hpp>
#include <thread>

#include "common/audio_glue.hpp"
#include "common/bottleneck.hpp"
#include "net/interface_address.hpp"
#include "common/cli_setup.hpp"
#include "common/monitor_glue.hpp"
#include "common/stop_signal.hpp"
#include "core/log.hpp"
#include "core/url.hpp"
#include "gpu/colour.hpp"
#include "media/image_io.hpp"
#include "pipeline/receive_pipeline.hpp"
#include "pipeline/stats.hpp"


int main(int argc, char** argv) {
  using namespace j2k;
  using Clock = std::chrono::steady_clock;
  CLI::App app{"j2kprobe — receive, check and decode a JPEG 2000 stream without a window.\n"
               "Per-second statistics and messages go to stderr; stdout holds only the --json summary."};
  cli::ToolSetup setup(app, "j2kprobe",
                       "  j2kprobe 'rtp://239.1.1.1:5004?iface=127.0.0.1' --duration 20 --json\n"
                       "  j2kprobe rtp://0.0.0.0:5004 --frames 100 --dump /tmp/frames\n"
                       "  j2kprobe 'pcap:capture.pcapng?port=5004' --json",
                       "  0  the stream was received (and decoded)\n"
                       "  1  error: socket, file, capture, output\n"
                       "  2  bad arguments\n"
                       "  3  no packets arrived within --wait (or the capture held none that matched)\n"
                       "  4  with --alarm: the stream arrived, but an alarm fired (loss, jitter, freeze, black, no signal,\n"
                       "     sound silence or clipping, a 2022-7 path down)");
  std::string url_text, dump_dir, checksums_file, incomplete = "drop";
  long long max_frames = 0;
  double duration = 0, timeout = 3, wait = 30;
  bool json = false, no_decode = false, quiet = false;
  int workers = 0, threads = 0;
  app.add_option("url", url_text, "rtp://GROUP:PORT?iface=LOCAL_ADDR[&source=SSM_SOURCE][&format=mxf|rfc5371|ts][&fec=1|fec_column=P&fec_row=P], "
                 "pcap:FILE?port=N[&dst=ADDR][&timing=capture][&loop=1][&fec=1], or sdp:FILE")->required();
  std::string url2_text;
  app.add_option("url2", url2_text, "second path of the same stream (SMPTE ST 2022-7), e.g. rtp://239.2.2.2:5004");
  app.add_option("--frames", max_frames, "stop after N frames")->check(cli::at_least(0));
  app.add_option("--duration", duration, "stop after S seconds of reception")->check(cli::at_least(0));
  app.add_option("--wait", wait, "wait up to S seconds for the first packet (a sender may still be encoding)")
      ->check(cli::more_than(0))->capture_default_str();
  app.add_option("--timeout", timeout, "once a stream was seen: stop when no packet arrives for S seconds")
      ->check(cli::more_than(0))->capture_default_str();
  app.add_flag("--json", json, "print a JSON summary on stdout at the end");
  app.add_option("--dump", dump_dir, "write each codestream (.j2c) and decoded frame (.png) here");
  std::string raw_file;
  app.add_option("--dump-raw", raw_file, "append every decoded frame's planes to FILE (8-bit, or 16-bit LE samples)");
  app.add_option("--checksums", checksums_file, "write the checksum of every decoded frame (JSON)");
  std::string audio_dump;
  app.add_option("--dump-audio", audio_dump, "write the stream's sound (MXF sound elements, ST 302M) to FILE.wav as received");
  cli::DecoderOptions decoder_options(cli::kStreamTier1Host);
  decoder_options.add_to(app);
  app.add_option("--workers", workers, "frames decoded at once (0 = automatic: a quarter of --threads, at least 2)")
      ->check(CLI::Range(0, 256));
  app.add_option("--threads", threads, "threads that decode, all frames together (0 = one per core this process may use: taskset and container CPU limits count)")
      ->check(CLI::Range(0, 256))->capture_default_str();
  app.add_flag("--no-decode", no_decode, "receive and reassemble only");
  unsigned reorder_packets = 64;
  double reorder_ms = 20;
  app.add_option("--reorder-packets", reorder_packets, "reorder window: packets held while waiting for a gap to fill")
      ->check(CLI::Range(1u, 4096u))->capture_default_str();
  app.add_option("--reorder-ms", reorder_ms, "reorder window: longest wait for a gap to fill, ms")
      ->check(CLI::Range(0.0, 5000.0))->capture_default_str();
  bool no_drop = false;
  app.add_flag("--no-drop", no_drop, "decode every frame even when decoding is slower than the stream (analysis)");
  std::string degrade = "auto";
  app.add_option("--degrade", degrade, "when decoding falls behind, decode at a lower resolution (auto) rather than "
                                       "drop frames; off with --no-drop, for captures, and with --dump-raw")
      ->check(CLI::IsMember({"auto", "off"}))->capture_default_str();
  app.add_option("--incomplete", incomplete, "frames with lost packets: drop or decode")
      ->check(CLI::IsMember({"drop", "decode"}))->capture_default_str();
  app.add_flag("-q,--quiet", quiet, "no per-second lines");
  cli::OperatorOptions operator_options;  // --events --alarm --metrics --capture --capture-limit
  operator_options.add_to(app);
  if (auto status = setup.parse(argc, argv)) return *status;
  auto log = logger("j2kprobe");

  auto url = parse_stream_url(url_text);
  if (!url) return setup.usage_error(url.error().message);
  if (url->scheme == StreamUrl::Scheme::demo) return setup.usage_error("demo:// is played by j2kplay --demo");
  if (auto why = cli::unreadable_capture(url->host, url->scheme == StreamUrl::Scheme::pcap); !why.empty())
    return setup.usage_error(why);
  auto choice = decoder_options.resolve();
  if (!choice) return setup.usage_error(choice.error().message);
  if (auto st = operator_options.check(json); !st) return setup.usage_error(st.error().message);
  // Outputs of decoded frames with nothing decoded would be empty files and a status 0.
  if (no_decode && (!raw_file.empty() || !checksums_file.empty()))
    return setup.usage_error(fmt::format("{} writes decoded frames: it cannot be combined with --no-decode",
                                         !raw_file.empty() ? "--dump-raw" : "--checksums"));
  if (!dump_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(dump_dir, ec);
    if (ec) { log->error("cannot create --dump directory '{}': {}", dump_dir, ec.message()); return cli::exit_error; }
  }

  pipeline::PipelineConfig config;
  config.url = *url;
  if (!url2_text.empty()) {
    auto url2 = parse_stream_url(url2_text);
    if (!url2) return setup.usage_error(url2.error().message);
    if (auto st = check_second_path(config.url, *url2); !st) return setup.usage_error(st.error().message);
    config.url2 = *url2;
  }
  config.decoder = *choice;
  config.decode = !no_decode;
  config.decode_workers = workers;
  config.decode_threads = threads;
  config.incomplete = incomplete == "decode" ? pipeline::IncompletePolicy::decode : pipeline::IncompletePolicy::drop;
  config.keep_codestreams = !dump_dir.empty();
  config.drop_when_behind = !no_drop;
  // --dump-raw appends full pictures of one size: a frame decoded at reduced resolution would
  // break the raw file from there on. (--checksums marks such a frame's entry with its level.)
  config.degrade = degrade == "auto" && raw_file.empty();
  if (degrade == "auto" && !raw_file.empty())
    log->info("--dump-raw asks for full-resolution pictures: no decoding at reduced resolution when behind (frames "
              "are dropped instead; --no-drop keeps every one)");
  if (max_frames > 0) config.max_frames = static_cast<std::uint64_t>(max_frames);
  config.reorder.max_packets = reorder_packets;
  config.reorder.max_delay = std::chrono::microseconds(static_cast<long long>(reorder_ms * 1000));

  // The operator's view (event log, history, alarms, metrics) and the capture.
  if (auto st = operator_options.open(config, url_text); !st) { log->error("{}", st.error().message); return cli::exit_error; }
  auto& mon = operator_options.monitor();
  if (mon.metrics_port()) log->info("metrics at {}/metrics (Prometheus) and /stats (JSON)", mon.metrics_url());
  // The sound: metered (and dumped) on its own thread, fed by the depacketizer.
  cli::AudioGlue sound;
  if (auto st = sound.open(config, mon, operator_options.thresholds(), audio_dump); !st) {
    log->error("{}", st.error().message);
    return cli::exit_error;
  }

  // The sink runs on the pipeline's delivery thread, in order.
  std::atomic<long long> delivered{0};
  // Written as frames arrive (a receiver may run for days: the list is not held in memory),
  // and closed as valid JSON however the run ends (the pipeline is stopped before this goes).
  struct ChecksumsFile {
    std::ofstream out;
    bool first = true;  // the sink's (delivery thread)
    void add(const nlohmann::json& entry) { out << (std::exchange(first, false) ? "\n " : ",\n ") << entry.dump(); }
    bool finish() {
      if (!out.is_open()) return true;
      out << "\n]}\n";
      out.close();
      return static_cast<bool>(out);
    }
    ~ChecksumsFile() { (void)finish(); }
  } checksums_out;
  if (!checksums_file.empty()) {
    checksums_out.out.open(checksums_file, std::ios::trunc);
    if (!checksums_out.out) { log->error("cannot write --checksums file '{}'", checksums_file); return cli::exit_error; }
    checksums_out.out << "{\"decoded\": [";
  }
  std::string last_time_code;                          // the sink's (delivery thread), read after the stop
  gpu::RgbaImage rgba;
  std::ofstream raw_out;
  if (!raw_file.empty()) {
    raw_out.open(raw_file, std::ios::binary | std::ios::trunc);
    if (!raw_out) { log->error("cannot write --dump-raw file '{}'", raw_file); return cli::exit_error; }
  }
  std::vector<std::uint8_t> raw_bytes;
  bool raw_failed = false, dump_failed = false;  // the sink's (delivery thread), read after the stop
  auto sink = [&](pipeline::DecodedFrame&& f) {
    if (!f.time_code.empty()) last_time_code = f.time_code;
    if (f.decoded && !checksums_file.empty()) {
      nlohmann::json entry = {{"rtp_timestamp", f.rtp_timestamp}, {"checksum", fmt::format("{:016x}", checksum(f.image))}};
      if (!f.time_code.empty()) entry["time_code"] = f.time_code;
      if (f.reduce > 0) entry["reduce"] = f.reduce;  // decoded at 1/2^reduce resolution: another picture
      checksums_out.add(entry);
    }
    if (f.decoded && raw_out.is_open()) {
      // Planar samples as raw video tools write them (e.g. yuv422p, yuv422p10le).
      raw_bytes.clear();
      for (const auto& plane : f.image.planes)
        for (std::int32_t v : plane.samples) {
          raw_bytes.push_back(static_cast<std::uint8_t>(v));
          if (plane.precision > 8) raw_bytes.push_back(static_cast<std::uint8_t>(v >> 8));
        }
      raw_out.write(reinterpret_cast<const char*>(raw_bytes.data()), static_cast<std::streamsize>(raw_bytes.size()));
      if (!raw_out) {  // a full disk: said once, the file closed, the run's status 1
        log->error("writing --dump-raw file '{}' failed: {}", raw_file, std::strerror(errno));
        raw_out.close();
        raw_failed = true;
      }
    }
    if (!dump_dir.empty() && !dump_failed) {
      const std::string stem = fmt::format("{}/frame_{:06d}", dump_dir, f.index);
      std::string failed;  // the file that could not be written (a full disk): said once, the run's status 1
      for (std::size_t i = 0; i < f.codestreams.size() && failed.empty(); ++i) {
        const std::string path = f.codestreams.size() == 1 ? stem + ".j2c" : fmt::format("{}_{}.j2c", stem, i);
        std::ofstream out(path, std::ios::binary);
        out.write(reinterpret_cast<const char*>(f.codestreams[i].data()), static_cast<std::streamsize>(f.codestreams[i].size()));
        out.close();
        if (!out) failed = path;
      }
      if (failed.empty() && f.decoded && gpu::to_rgba8(f.image, pipeline::colour_of(f.descriptor, f.image, f.digital_cinema), rgba))
        if (auto st = media::write_png_rgba(stem + ".png", rgba.pixels.data(), rgba.width, rgba.height); !st) failed = stem + ".png";
      if (!failed.empty()) {
        log->error("writing --dump file '{}' failed: no more frames are dumped", failed);
        dump_failed = true;
      }
    }
    mon.on_frame(cli::frame_report(f), Clock::now());
    delivered.fetch_add(1);
  };

  auto opened = pipeline::ReceivePipeline::open(config, sink);
  if (!opened) { log->error("{}", opened.error().message); return cli::exit_error; }
  auto& pipe = *opened.value();
  cli::install_stop_signals();
  if (auto st = pipe.start(); !st) { log->error("{}", st.error().message); return cli::exit_error; }
  if (url->scheme != StreamUrl::Scheme::pcap)
    log->info("waiting up to {:.0f} s for the first packet on {} (--wait)", wait, url->describe());

  const auto started = Clock::now();
  auto before = pipeline::StatsSample::take(pipe);
  auto last_line = started;
  std::uint64_t last_datagrams = 0;
  std::optional<Clock::time_point> last_packet;  // when the datagram count last grew (50 ms resolution)
  int exit_code = cli::exit_ok;
  bool ended_by_silence = false;  // the stream stopped: --timeout without packets ended the run
  while (!cli::stop_requested().load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const auto now = Clock::now();
    const auto rc = pipe.receiver_counters().datagrams;  // both ST 2022-7 paths
    if (rc != last_datagrams) {
      // The wait for the first datagram is --wait's, not an outage: the alarms count from it
      // (the first look can come before the stream's own counts include it).
      if (!last_packet) {
        mon.first_datagram(now);
        // The per-second lines are the stream's seconds, the first one whole: its rates are
        // not spread over the wait for the first packet.
        last_line = now;
        before.at = now;
      }
      last_datagrams = rc;
      last_packet = now;
    }
    if (pipe.input_finished()) {
      if (rc == 0) {  // the replay said which UDP ports the capture holds
        log->error("no packets: {} holds no UDP datagrams that match", url->describe());
        exit_code = cli::exit_no_packets;
      } else if (pipe.stream().packets_received == 0) {
        log->error("no stream: the {} datagram{} of {} hold no RTP packets of a stream (see the JSON's packets)", rc,
                   rc == 1 ? "" : "s", url->describe());
        exit_code = cli::exit_no_packets;
      } else {
        log->info("end of capture");
      }
      break;
    }
    // Two waits: for the first packet (a sender may still be encoding), then for silence.
    if (!last_packet) {
      if (now - started > std::chrono::duration<double>(wait)) {
        std::string where;
        boost::system::error_code ec;
        const auto group = boost::asio::ip::make_address_v4(url->host, ec);
        if (!ec && group.is_multicast() && url->iface.empty()) {
          const std::string via = net::route_interface(group);
          where = fmt::format(" (joined on {}, the routes' choice; this machine's interfaces: {}; pick one with ?iface=)",
                              via.empty() ? "no interface with a route to it" : via, net::ipv4_interfaces());
        }
        log->error("no packets on {} after {:.0f} s — is the sender running, is the interface right?{}",
                   url->describe(), wait, where);
        exit_code = cli::exit_no_packets;
        break;
      }
      continue;  // no statistics lines before the first packet
    }
    // A capture ends at its end (input_finished above); a silence inside it is the link's
    // outage to report, not the end of the run.
    if (url->scheme != StreamUrl::Scheme::pcap && now - *last_packet > std::chrono::duration<double>(timeout)) {
      log->info("stream stopped: no packets for {:.0f} s", timeout);
      ended_by_silence = true;
      break;
    }
    const auto first = pipe.first_packet_time();
    if (duration > 0 && first && std::chrono::duration<double>(now - *first).count() >= duration) break;
    if (pipe.frame_limit_reached()) break;  // the stop below delivers the last of them
    if (now - last_line >= std::chrono::seconds(1)) {
      auto sample = pipeline::StatsSample::take(pipe);
      const double t = first ? std::chrono::duration<double>(now - *first).count() : 0.0;
      if (!quiet) {
        const std::string audio_part = sound.line_part();
        fmt::print(stderr, "{}{}{}\n", pipeline::per_second_line(sample, before, t), audio_part.empty() ? "" : "  ", audio_part);
      }
      auto second = cli::second_report(sample, before, t);
      second.last_packet_seen = last_packet;  // its own 50 ms look: outages dated from their start
      sound.add_to(second);
      mon.on_second(second, now, mon.serves_metrics() ? pipeline::summary_json(sample, t, url->format) : nlohmann::json{});
      before = sample;
      last_line = now;
    }
  }
  // What went by since the last per-second look: a capture's last part (all of it, replayed
  // fast), or the part of a second before --duration, --frames or Ctrl-C ended the run. The
  // monitor and its alarms see it too: a loss there is the run's (its exit status), and an
  // outage inside a capture is an episode. A run that was stopped is looked at before the stop.
  std::optional<pipeline::StatsSample> tail;
  if (last_packet && !pipe.input_finished()) tail = cli::last_part_before_stop(pipe, before);
  pipe.stop(true);
  if (tail || pipe.input_finished()) {
    auto last = tail ? *tail : pipeline::StatsSample::take(pipe);
    const auto first_at = pipe.first_packet_time();
    const double t = first_at ? std::chrono::duration<double>(last.at - *first_at).count() : 0.0;
    auto second = cli::second_report(last, before, t);
    sound.add_to(second);
    mon.on_second(second, last.at, mon.serves_metrics() ? pipeline::summary_json(last, t, url->format) : nlohmann::json{});
  }
  const auto first = pipe.first_packet_time();
  // Reception time: first to last packet (the silence before --timeout ended it is not the stream's).
  const double elapsed =
      first && last_packet ? std::max(0.0, std::chrono::duration<double>(*last_packet - *first).count()) : 0.0;
  auto final_sample = pipeline::StatsSample::take(pipe);
  auto summary = pipeline::summary_json(final_sample, elapsed, url->format);
  const auto& d = final_sample.decode;
  const double decode_fps = d.decoded && d.decode_ms_total > 0 ? d.decoded * 1000.0 / d.decode_ms_total : 0;
  summary["frames"]["decode_fps_per_worker"] = decode_fps;
  // Files the user asked for that could not be written make the run's status 1.
  bool output_failed = raw_failed || dump_failed;
  if (raw_out.is_open()) {
    raw_out.close();
    if (!raw_out) {
      log->error("writing --dump-raw file '{}' failed", raw_file);
      output_failed = true;
    }
  }
  if (!checksums_out.finish()) {
    log->error("writing --checksums file '{}' failed", checksums_file);
    output_failed = true;
  }
  log->info("received {} packets ({} lost), {} frames complete, {} incomplete, {} decoded in {:.1f} s",
            final_sample.stream.packets_received, final_sample.stream.packets_lost, final_sample.stream.frames_complete,
            final_sample.stream.frames_incomplete, d.decoded, elapsed);
  // Name the bottleneck when frames were lost inside j2kplay rather than on the network.
  std::string bottleneck = "none";
  if (final_sample.socket_dropped) {
    bottleneck = "socket buffer";
    log->warn("{} datagrams were dropped by this host's kernel before j2kprobe read them (a socket's receive buffer "
              "full, or a bad UDP checksum): not the network's loss; unless another path or FEC brought them they "
              "count as lost. Raise the limit ('sudo sysctl -w net.core.rmem_max=67108864') or free this machine's "
              "cores",
              final_sample.socket_dropped);
  } else if (final_sample.receiver_dropped) {
    bottleneck = "receiver";
    log->warn("{} packets were dropped inside the receiver (depacketizer behind or buffers exhausted)",
              final_sample.receiver_dropped);
  } else if (d.dropped_behind()) {
    bottleneck = "decoder";
    log->warn("{}", cli::decoder_behind_message(decode_fps, d.workers, summary["stream"]["fps"].get<double>(),
                                                d.dropped_behind(), *choice));
  }
  summary["bottleneck"] = bottleneck;
  if (!last_time_code.empty()) summary["stream"]["time_code"] = last_time_code;  // of the last frame
  sound.finish(summary, final_sample.stream.audio);
  // A stream that ends is silent until --timeout ends the run: the no signal, freeze and
  // sound alarms that its end raised are the end of the run, not a fault of the link.
  const std::uint64_t at_end =
      ended_by_silence && last_packet ? mon.alarms_raised_by_silence_after(*last_packet) : 0;
  const std::uint64_t alarms = mon.alarms_raised() - std::min(at_end, mon.alarms_raised());
  if (at_end > 0)
    log->info("{} alarm(s) raised after the stream's last packet (its end) are not counted in the exit status", at_end);
  operator_options.finish(summary);
  if (summary.contains("alarms")) summary["alarms"]["raised_at_stream_end"] = at_end;
  if (json) fmt::print("{}\n", summary.dump(2));
  if (summary.contains("audio") && summary["audio"].contains("dump") && summary["audio"]["dump"].value("failed", false))
    output_failed = true;  // said by the sound path (--dump-audio)
  if (exit_code == cli::exit_ok && output_failed) exit_code = cli::exit_error;
  if (exit_code == cli::exit_ok && operator_options.alarms_armed() && alarms > 0) {
    log->warn("{} alarm(s) fired during the run (see the event log and the JSON's alarms)", alarms);
    exit_code = cli::exit_alarm;
  }
  return exit_code;
}
