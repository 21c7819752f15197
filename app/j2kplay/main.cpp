// j2kplay: the player. Receives a JPEG 2000 stream and shows it in a Qt 6 window, with
// live statistics; without a display it runs headless and prints the statistics instead.
#include <CLI/CLI.hpp>
#include <QApplication>
#include <QShortcut>
#include <QTimer>
#include <csignal>
#include <cstdlib>
#include <optional>
#include <thread>
#include <tuple>

#include "common/cli_setup.hpp"
#include "common/monitor_glue.hpp"
#include "common/cli_util.hpp"
#include "common/stop_signal.hpp"
#include "core/log.hpp"
#include "core/url.hpp"
#include "media/image_io.hpp"
#include "player_audio.hpp"
#include "pipeline/receive_pipeline.hpp"
#include "pipeline/stats.hpp"
#include "sender/demo.hpp"
#include "ui/player_widget.hpp"
#include "ui/stream_picker.hpp"
#include "common/decoder_choice.hpp"
#include "syntax/locate.hpp"
#include <mutex>

namespace {

/// The operator's panels from the monitor: alarm banner, the last two minutes as graphs, the
/// last events (and where they fall on the graphs).
j2k::ui::MonitorView monitor_view(j2k::monitor::StreamMonitor& mon) {
  using namespace j2k;
  ui::MonitorView v;
  const auto now = std::chrono::steady_clock::now();
  const auto st = mon.alarm_status(now);
  v.level = st.severity == monitor::Severity::critical ? ui::AlarmLevel::critical
            : st.severity == monitor::Severity::warning ? ui::AlarmLevel::warning
                                                        : ui::AlarmLevel::ok;
  v.alarm_text = QString::fromStdString(st.headline());
  if (st.since_last_error_s) v.since_last_error = QStringLiteral("last error %1 s ago").arg(*st.since_last_error_s, 0, 'f', 0);
  const auto rows = mon.history().rows(120);
  ui::Graph rate{QStringLiteral("bit rate"), {{QStringLiteral("Mbit/s"), {}, QColor(90, 200, 255)}}};
  ui::Graph loss{QStringLiteral("packets"), {{QStringLiteral("lost/s"), {}, QColor(255, 90, 90)}, {QStringLiteral("late/s"), {}, QColor(255, 200, 60)}}};
  ui::Graph frames{QStringLiteral("frames"), {{QStringLiteral("decoded/s"), {}, QColor(120, 230, 120)},
                                                 {QStringLiteral("shown/s"), {}, QColor(90, 200, 255)},
                                                 {QStringLiteral("degraded/s"), {}, QColor(255, 160, 60)}}};
  ui::Graph timing{QStringLiteral("time"), {{QStringLiteral("ms latency"), {}, QColor(200, 150, 255)}, {QStringLiteral("ms jitter"), {}, QColor(255, 255, 255)}}};
  for (const auto& r : rows) {
    rate.series[0].values.push_back(r.bitrate_mbps);
    loss.series[0].values.push_back(r.lost_per_s);
    loss.series[1].values.push_back(r.late_per_s);
    frames.series[0].values.push_back(r.frames_decoded_per_s);
    frames.series[1].values.push_back(r.frames_shown_per_s);
    frames.series[2].values.push_back(r.frames_degraded_per_s);
    timing.series[0].values.push_back(r.latency_ms);
    timing.series[1].values.push_back(r.jitter_ms);
  }
  v.graphs = {rate, loss, frames, timing};
  const auto newest = rows.empty() ? std::chrono::system_clock::now() : rows.back().wall;
  for (const auto& e : mon.events().recent(12)) {
    const double ago = std::chrono::duration<double>(newest - e.wall).count();
    if (ago >= 0 && ago < static_cast<double>(rows.size())) v.event_marks.push_back(ago);
    const std::string when = monitor::iso8601_ms(e.wall).substr(11, 12);
    v.events << QString::fromStdString(when + "  " + monitor::to_string(e.kind) + "  " + e.message);
  }
  return v;
}

bool have_display() {
  const char* platform = std::getenv("QT_QPA_PLATFORM");
  if (platform && *platform) return true;  // the user chose (offscreen, xcb, wayland …)
  const char* x = std::getenv("DISPLAY");
  const char* wl = std::getenv("WAYLAND_DISPLAY");
  return (x && *x) || (wl && *wl);
}

QString overlay_text(const j2k::pipeline::StatsSample& now, const j2k::pipeline::StatsSample& before,
                     const j2k::StreamUrl& url, const QString& display_path, const std::string& display) {
  const auto r = j2k::pipeline::rates_between(now, before);
  const auto& s = now.stream;
  const std::string format = j2k::pipeline::stream_format(now, url.format);
  std::string text = fmt::format("{}\n{}\n{:.1f} Mbit/s   {:.1f} fps received   {:.1f} fps decoded\n"
                                 "total: packets {}  lost {}  late {}  dup {}\njitter {:.2f} ms   total incomplete frames {}",
                                 url.describe(), format.empty() ? "waiting for frames…" : format, r.mbit, r.frames,
                                 r.decoded, s.packets_received, s.packets_lost, s.packets_late, s.packets_duplicate,
                                 s.jitter_ms, s.frames_incomplete);
  // SMPTE ST 2022-7: each path's health at a glance (DOWN: nothing arrived since the last
  // refresh; LOSING: new losses on it); ST 2022-1 FEC; the TS layer.
  const auto& pr = now.protection;
  if (pr.two_paths)
    for (int p = 0; p < j2k::depacketizer::PathMerger::kPaths; ++p) {
      const auto& c = pr.paths[p];
      const auto& b = before.protection.paths[p];
      const char* health = c.received == b.received ? "DOWN" : c.lost != b.lost ? "LOSING" : "OK";
      text += fmt::format("\npath {} {:<6} received {}  lost {}  late {}  skew {:+.1f} ms", p + 1, health, c.received, c.lost,
                          c.late, c.skew_ms);
    }
  if (pr.fec)
    text += fmt::format("\nFEC {}x{}  recovered {}  unrecoverable {}", pr.fec_columns, pr.fec_rows, pr.fec_counters.recovered,
                        pr.fec_counters.unrecoverable);
  if (now.ts) text += fmt::format("\nTS continuity errors {}", now.ts->counters.continuity_errors);
  if (now.decode.dropped_behind()) text += fmt::format("\ndecoder behind: {} frames dropped", now.decode.dropped_behind());
  if (now.decode.failed) text += fmt::format("\ndecode errors: {}", now.decode.failed);
  if (now.decode.codestream_damaged)
    text += fmt::format("\ncodestream damaged as sent: {} frames (all packets arrived)", now.decode.codestream_damaged);
  if (now.decode.undisplayable)
    text += fmt::format("\nnot displayable: {} frames decoded that this display cannot show (see the log)",
                        now.decode.undisplayable);
  // Real time: how much decoding is simplified to keep up, and what that costs in delay.
  if (now.decode.degrade_level > 0)
    text += fmt::format("\ndegraded: decoding at 1/{} resolution ({} frames so far)", 1 << now.decode.degrade_level,
                        now.decode.degraded);
  else if (now.decode.degraded)
    text += fmt::format("\nfull resolution again ({} frames were degraded)", now.decode.degraded);
  const auto lat = j2k::pipeline::LatencyFigures::of(now.decode.receive_to_decoded.since(before.decode.receive_to_decoded));
  if (lat.count) text += fmt::format("\nlatency receive→decoded p50 {:.0f} ms  p95 {:.0f} ms  p99 {:.0f} ms", lat.p50, lat.p95, lat.p99);
  // Presentation paced by the stream's clock: what the window showed late, repeated, skipped.
  text += "\n" + display;
  QString q = QString::fromStdString(text);
  // How pictures reach the screen: "GPU: H200, display via CUDA→PBO" or the CPU path.
  if (!display_path.isEmpty()) q += "\n" + display_path;
  if (now.decode.tier1_on_gpu) q += QString::fromStdString(fmt::format("\ntier-1 on the GPU: {} frames", now.decode.tier1_on_gpu));
  if (now.decode.tier1_fallbacks || now.decode.gpu_fallbacks)
    q += QString::fromStdString(fmt::format("\nGPU failures: tier-1 {} frames, reconstruction {} times; "
                                            "the CPU took over, the GPU is tried again (see the log)",
                                            now.decode.tier1_fallbacks, now.decode.gpu_fallbacks));
  if (now.decode.display_fallbacks)
    q += QString::fromStdString(fmt::format("\nGPU display fallbacks: {} ({} with every device picture in use)",
                                            now.decode.display_fallbacks, now.decode.device_pool_exhausted));
  return q;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace j2k;
  CLI::App app{"j2kplay — play a JPEG 2000 video stream (MXF or RFC 5371 in RTP, or VSF TR-01 TS) live.\n"
               "Keys: F or double-click fullscreen, I statistics overlay (and sound meters), M mute,\n"
               "G history graphs, E last events, D deinterlacing (interlaced streams: adaptive, off, bob),\n"
               "Esc/Q quit (Esc in fullscreen: leave fullscreen).\n"
               "Without a display (no $DISPLAY/$WAYLAND_DISPLAY) it runs headless and prints per-second\n"
               "statistics on stderr. It waits for the first packet until interrupted; a capture (pcap:)\n"
               "plays at its own pace (add &timing=fast for as fast as possible) and ends at its end."};
  cli::ToolSetup setup(app, "j2kplay",
                       "  j2kplay --demo                                   built-in test stream on loopback\n"
                       "  j2kplay 'rtp://239.1.1.1:5004?iface=192.168.1.10'\n"
                       "  j2kplay 'pcap:capture.pcapng?port=5004'",
                       "  0  played until the end of the capture, --quit-after, a key or Ctrl-C\n"
                       "  1  error: socket, capture, window, demo sender, screenshot\n"
                       "  2  bad arguments\n"
                       "  3  the capture held no packets that match");
  std::string url_text, screenshot, window_size;
  bool demo = false, fullscreen = false, headless = false, no_overlay = false, json = false;
  double quit_after = 0;
  int workers = 0, threads = 0;
  app.add_option("url", url_text, "rtp://GROUP:PORT?iface=LOCAL_ADDR[&source=SSM_SOURCE][&format=mxf|rfc5371|ts][&fec=1|fec_column=P&fec_row=P], "
                 "pcap:FILE?port=N[&dst=ADDR][&timing=fast][&loop=1][&fec=1], or sdp:FILE (omit with --demo)");
  std::string url2_text;
  app.add_option("url2", url2_text, "second path of the same stream (SMPTE ST 2022-7)");
  app.add_flag("--demo", demo, "play the built-in demo stream (a sender runs in-process on loopback)");
  std::string audio_text = "on", audio_device;
  bool sync_probe = false;
  app.add_option("--audio", audio_text, "sound: on, off (metered, not played), or the channels to play, e.g. 3,4 "
                                        "(left, right; one channel goes to both)")->capture_default_str();
  app.add_option("--audio-device", audio_device, "sound output whose name contains this (default: the system's); "
                                                 "null: consumed at its pace, unheard");
  app.add_flag("--sync-probe", sync_probe, "measure lip sync on j2ksend --sync-test (flash and click): the offsets are "
                                           "logged at the end");
  app.add_flag("--fullscreen", fullscreen, "start in fullscreen");
  app.add_flag("--headless", headless, "no window: print statistics (automatic without a display)");
  app.add_flag("--json", json, "print a JSON summary on stdout at the end (as j2kprobe's, with display and receive->display latency)");
  app.add_option("--window-size", window_size, "initial window size WxH (default 1280x720; the picture keeps its aspect ratio)");
  app.add_flag("--no-overlay", no_overlay, "start with the statistics overlay hidden");
  app.add_option("--screenshot", screenshot, "with --quit-after: save the window as PNG when quitting, and the picture shown as FILE.frame.png");
  app.add_option("--quit-after", quit_after, "quit S seconds after the first picture appears (headless: after start; with --screenshot, once the statistics of a second with pictures are on screen too)")
      ->check(cli::at_least(0));
  cli::DecoderOptions decoder_options(cli::kStreamTier1Host);
  decoder_options.add_to(app);
  app.add_option("--workers", workers, "frames decoded at once (0 = automatic: a quarter of --threads, at least 2)")
      ->check(CLI::Range(0, 256));
  app.add_option("--threads", threads, "threads that decode, all frames together (0 = one per core this process may use: taskset and container CPU limits count)")
      ->check(CLI::Range(0, 256));
  std::string degrade = "auto";
  app.add_option("--degrade", degrade, "when decoding falls behind, decode at a lower resolution (auto) rather than drop frames")
      ->check(CLI::IsMember({"auto", "off"}))->capture_default_str();
  std::string transfer_text = "auto";
  app.add_option("--transfer", transfer_text,
                 "the pictures' transfer function: auto (as the stream says: MXF's TransferCharacteristic, TR-01's "
                 "colour specification), sdr, or BT.2100 HDR pq or hlg (shown tone-mapped for this SDR display)")
      ->check(CLI::IsMember({"auto", "sdr", "pq", "hlg"}))->capture_default_str();
  std::string deinterlace_text = "auto";
  app.add_option("--deinterlace", deinterlace_text,
                 "interlaced streams: a picture per field at the field rate, the missing lines from motion-adaptive "
                 "interpolation (auto, adaptive), from the field alone (bob), or the woven frames as sent (off); key D "
                 "changes it")
      ->check(CLI::IsMember({"auto", "adaptive", "bob", "off", "weave"}))->capture_default_str();
  bool show_graphs = false, show_events = false;
  app.add_flag("--graphs", show_graphs, "start with the history graphs shown (key G toggles them)");
  app.add_flag("--events-panel", show_events, "start with the event panel shown (key E toggles it)");
  cli::OperatorOptions operator_options;  // --events --alarm --metrics --capture --capture-limit
  operator_options.add_to(app);
  if (auto status = setup.parse(argc, argv)) return *status;
  if (auto st = operator_options.check(json); !st) return setup.usage_error(st.error().message);
  auto log = logger("j2kplay");

  // Every argument is checked before anything starts (the demo sender, the window).
  StreamUrl url;
  if (demo && !url_text.empty())
    return setup.usage_error(fmt::format("--demo plays the built-in stream: give either --demo or a URL, not both ('{}')", url_text));
  if (!url_text.empty()) {
    auto parsed = parse_stream_url(url_text);
    if (!parsed) return setup.usage_error(parsed.error().message);
    url = *parsed;
    if (url.scheme == StreamUrl::Scheme::demo) demo = true;
    if (auto why = cli::unreadable_capture(url.host, url.scheme == StreamUrl::Scheme::pcap); !why.empty())
      return setup.usage_error(why);
  }
  const bool implicit_demo = url_text.empty() && !demo;
  if (implicit_demo) demo = true;
  if (demo) {
    url = StreamUrl{};
    url.host = "127.0.0.1";
    url.port = 0;  // any free port; the demo sender is told which
  }
  auto choice = decoder_options.resolve();
  if (!choice) return setup.usage_error(choice.error().message);
  auto audio_options = player::parse_audio_option(audio_text);
  if (!audio_options) return setup.usage_error(audio_options.error().message);
  audio_options->device = audio_device;
  audio_options->sync_probe = sync_probe;
  int win_w = 1280, win_h = 720;
  if (!window_size.empty()) {
    auto wh = cli::parse_size("--window-size", window_size, 64, 16384);
    if (!wh) return setup.usage_error(wh.error().message);
    std::tie(win_w, win_h) = *wh;
    if (headless) return setup.usage_error("--window-size needs a window: it cannot be combined with --headless");
  }
  if (!screenshot.empty()) {
    if (headless) return setup.usage_error("--screenshot saves the window: it cannot be combined with --headless");
    if (quit_after <= 0) return setup.usage_error("--screenshot is taken when quitting: give --quit-after S as well");
  }
  if (sync_probe && headless) return setup.usage_error("--sync-probe measures what the window shows: not with --headless");
  if (!headless && !have_display()) {
    if (!screenshot.empty() || sync_probe) {
      log->error("{} needs a display, and none was found ($DISPLAY/$WAYLAND_DISPLAY unset)",
                 sync_probe ? "--sync-probe" : "--screenshot");
      return cli::exit_error;
    }
    log->info("no display found ($DISPLAY/$WAYLAND_DISPLAY unset): running headless with statistics");
    headless = true;
  }
  bool capture = url.scheme == StreamUrl::Scheme::pcap;
  // Without a URL: a window asks which stream (the stream picker); headless, the demo plays.
  const bool pick = implicit_demo && !headless;
  if (implicit_demo && !pick) log->info("no stream URL given: playing the built-in demo (see --help)");

  // The QApplication comes first, before any helper thread: Qt takes the thread that first
  // touches it as its main thread, and the demo sender and decoders use Qt for image I/O.
  std::optional<QApplication> qt_app;
  if (!headless) {
    // Qt on X11 must create its GL context through GLX for GLEW; respect an explicit choice.
    if (!std::getenv("QT_XCB_GL_INTEGRATION")) setenv("QT_XCB_GL_INTEGRATION", "xcb_glx", 0);
    qt_app.emplace(argc, argv);
    QApplication::setApplicationName("j2kplay");
  }
  if (pick) {
    // A URL that does not parse, or a capture that cannot be read, is said in the dialog,
    // which stays open (the same messages the command line gives).
    ui::StreamPicker picker(ui::load_recent_streams(), [](const QString& text) {
      auto p = parse_stream_url(text.toStdString());
      if (!p) return QString::fromStdString(p.error().message);
      return QString::fromStdString(cli::unreadable_capture(p->host, p->scheme == StreamUrl::Scheme::pcap));
    });
    if (picker.exec() != QDialog::Accepted) return cli::exit_ok;  // the user closed the dialog
    url_text = picker.url().toStdString();
    auto parsed = parse_stream_url(url_text);
    if (!parsed) {  // (the dialog checked it)
      log->error("{}", parsed.error().message);
      return cli::exit_usage;
    }
    ui::remember_stream(QString::fromStdString(url_text));
    url = *parsed;
    demo = url.scheme == StreamUrl::Scheme::demo;
    if (demo) {
      url = StreamUrl{};
      url.host = "127.0.0.1";
      url.port = 0;
    }
    capture = url.scheme == StreamUrl::Scheme::pcap;
  }

  pipeline::PipelineConfig config;
  config.url = url;
  if (!url2_text.empty()) {
    auto url2 = parse_stream_url(url2_text);
    if (!url2) return setup.usage_error(url2.error().message);
    if (auto st = check_second_path(config.url, *url2); !st) return setup.usage_error(st.error().message);
    config.url2 = *url2;
  }
  config.decoder = *choice;
  // A player shows a capture at the pace it was recorded, unless asked for speed (timing=fast).
  config.capture_timing = capture && !(url.query.count("timing") && url.query.at("timing") == "fast");
  config.decode_workers = workers;
  config.decode_threads = threads;
  config.degrade = degrade == "auto";
  if (transfer_text == "sdr") config.transfer = TransferFunction::sdr;
  if (transfer_text == "pq") config.transfer = TransferFunction::pq;
  if (transfer_text == "hlg") config.transfer = TransferFunction::hlg;
  config.make_rgba = !headless;
  if (auto st = operator_options.open(config, url_text.empty() ? "demo" : url_text); !st) {
    log->error("{}", st.error().message);
    return cli::exit_error;
  }
  auto& mon = operator_options.monitor();
  player::PlayerAudio sound;
  if (auto st = sound.open(config, mon, operator_options.thresholds(), *audio_options, !headless); !st) {
    log->error("{}", st.error().message);
    return cli::exit_error;
  }
  if (sync_probe) config.device_display = false;  // the probe looks at the pictures on the host
  // With --screenshot the codestreams of the last picture handed to the window are kept, so
  // that the CPU path's picture of that same frame can be saved beside the window's grab.
  config.keep_codestreams = !screenshot.empty();
  std::atomic<std::uint64_t> frames_seen{0};
  struct LastShown {
    std::mutex mutex;  // guards the fields below (the sink writes, the GUI thread reads at the end)
    std::vector<std::vector<std::uint8_t>> codestreams;
    std::optional<depacketizer::PictureDescriptor> descriptor;
    bool first_field_is_top = true;
  } last_shown;
  std::mutex time_code_mutex;  // guards time_code (the sink writes, the GUI timer reads)
  std::string time_code;
  // Decoded frames wait in the presenter's playout buffer until the display refresh nearest
  // their time on the stream's clock (the window's vsync, or headless a virtual 60 Hz display).
  const ui::Deinterlace deinterlace = ui::parse_deinterlace(deinterlace_text).value_or(ui::Deinterlace::adaptive);
  pipeline::FramePresenter::Config presenter_config;
  // A window gets a picture per field whatever the mode: key D may turn deinterlacing on
  // later (split only for bob and adaptive at the start, `--deinterlace off` left D nothing to
  // show); with `off` it draws the woven frame for both.
  presenter_config.split_fields = !headless;
  pipeline::FramePresenter presenter(presenter_config);
  auto sink = [&](pipeline::DecodedFrame&& f) {
    const auto now = std::chrono::steady_clock::now();
    frames_seen.fetch_add(1);
    mon.on_frame(cli::frame_report(f), now);
    if (!f.time_code.empty()) {
      std::lock_guard lock(time_code_mutex);
      time_code = f.time_code;
    }
    if (!f.decoded) return;
    if (config.keep_codestreams) {
      std::lock_guard lock(last_shown.mutex);
      last_shown.codestreams = std::move(f.codestreams);
      last_shown.descriptor = f.descriptor;
      last_shown.first_field_is_top = !(f.descriptor && f.descriptor->field_dominance == 2);
    }
    // The sound follows the pictures on screen: it is told which picture is which frame.
    sound.on_frame(f.device_rgba ? static_cast<const void*>(f.device_rgba.get()) : f.rgba.get(), f.rtp_timestamp, f.rgba.get());
    // Device pictures stay on the GPU; headless frames carry no picture, only their timing.
    presenter.push({f.index, f.rtp_timestamp, f.received, std::move(f.rgba), std::move(f.device_rgba), f.interlaced,
                    f.first_field_is_top},
                   now);
  };
  auto opened = pipeline::ReceivePipeline::open(config, sink);
  if (!opened) { log->error("{}", opened.error().message); return cli::exit_error; }
  auto& pipe = *opened.value();
  if (demo) url.port = pipe.port();
  // The decoders are made here, before the demo sender starts encoding: one that cannot be
  // made (--backend cuda without a usable GPU) is an error at once.
  if (auto st = pipe.start(); !st) { log->error("{}", st.error().message); return cli::exit_error; }

  std::unique_ptr<sender::DemoSender> demo_sender;
  if (demo) {
    sender::DemoConfig dc;
    dc.port = pipe.port();
    demo_sender = std::make_unique<sender::DemoSender>(dc);
    log->info("demo: sending 1280x720 4:2:2 10-bit at 25 fps with a stereo line-up tone to 127.0.0.1:{}", dc.port);
  }
  cli::install_stop_signals();

  if (!capture && !demo) log->info("waiting for packets on {} (until interrupted)", url.describe());

  // The end of a capture: said once, and the status (3 when nothing in it matched).
  auto capture_ended = [&]() -> std::optional<int> {
    if (!capture || !pipe.input_finished()) return std::nullopt;
    if (pipe.receiver_counters().datagrams == 0) {
      log->error("no packets: {} holds no UDP datagrams that match", url.describe());
      return cli::exit_no_packets;
    }
    return cli::exit_ok;
  };
  // Said once the pipeline has taken in the whole capture (after a draining stop): when the
  // reader finishes, the last frames are still being depacketized and decoded.
  auto say_capture_end = [&] {
    log->info("end of capture: {} frames complete, {} incomplete", pipe.stream().frames_complete,
              pipe.stream().frames_incomplete);
  };

  // The end: the summary as j2kprobe's, with the presentation's figures.
  auto summarise = [&](const pipeline::StatsSample& s) {
    const auto first = pipe.first_packet_time();
    const double t = first ? std::chrono::duration<double>(s.at - *first).count() : 0.0;
    auto summary = pipeline::summary_json(s, t, url.format);
    pipeline::add_display_json(summary, presenter.figures());
    return summary;
  };

  if (headless) {
    using Clock = std::chrono::steady_clock;
    const auto started = Clock::now();
    auto before = pipeline::StatsSample::take(pipe);
    auto display_before = presenter.figures();
    auto last = started;
    int status = cli::exit_ok;
    bool capture_done = false;  // the capture was read to its end (status 0)
    // A virtual 60 Hz display: the presenter is asked at every refresh, as the window does at its vsync.
    const auto refresh = std::chrono::microseconds(16667);
    auto tick = started;
    while (!cli::stop_requested().load()) {
      tick += refresh;
      std::this_thread::sleep_until(tick);
      const auto now = Clock::now();
      if (now - tick > std::chrono::seconds(1)) tick = now;  // the process was stopped: no burst of refreshes
      if (presenter.on_refresh(tick + refresh, refresh)) presenter.on_shown(tick + refresh);
      if (quit_after > 0 && now - started >= std::chrono::duration<double>(quit_after)) break;
      if (demo_sender && !demo_sender->error().empty()) break;
      if (auto ended = capture_ended()) {
        status = *ended;
        capture_done = status == cli::exit_ok;
        break;
      }
      const auto first = pipe.first_packet_time();
      if (!first) continue;  // no statistics lines before the first packet
      if (now - last >= std::chrono::seconds(1)) {
        auto sample = pipeline::StatsSample::take(pipe);
        const double t = std::chrono::duration<double>(now - *first).count();
        const auto display = presenter.figures();
        const std::string audio_part = sound.glue().line_part();
        fmt::print(stderr, "{}{}{}\n  {}\n", pipeline::per_second_line(sample, before, t), audio_part.empty() ? "" : "  ", audio_part,
                   pipeline::display_line(display, display_before, std::chrono::duration<double>(now - last).count()));
        display_before = display;
        auto second = cli::second_report(sample, before, t);
        sound.glue().add_to(second);
        mon.on_second(second, now, mon.serves_metrics() ? pipeline::summary_json(sample, t, url.format) : nlohmann::json{});
        before = sample;
        last = now;
      }
    }
    // The part of a second since the last look is the monitor's too: looked at before a stop,
    // after a capture's end.
    std::optional<pipeline::StatsSample> tail;
    if (!capture_done) tail = cli::last_part_before_stop(pipe, before);
    pipe.stop(capture);  // a capture's last frames are decoded before the summary
    // ... and shown on the virtual display, as the window would have, so that the display
    // figures add up to the frames decoded (the rest of a run that was stopped: undisplayed).
    if (capture_done) presenter.drain(tick, refresh);
    else presenter.clear();
    if (capture_done) say_capture_end();
    if (const auto first = pipe.first_packet_time(); first && (tail || capture_done)) {
      auto sample = tail ? *tail : pipeline::StatsSample::take(pipe);
      const double t = std::chrono::duration<double>(sample.at - *first).count();
      auto second = cli::second_report(sample, before, t);
      sound.glue().add_to(second);
      mon.on_second(second, sample.at, mon.serves_metrics() ? pipeline::summary_json(sample, t, url.format) : nlohmann::json{});
    }
    nlohmann::json operator_summary;
    sound.glue().finish(operator_summary, pipe.stream().audio);
    operator_options.finish(operator_summary);
    auto s = pipeline::StatsSample::take(pipe);
    const auto lat = pipeline::LatencyFigures::of(s.decode.receive_to_decoded);
    const auto shown = presenter.figures();
    const auto shown_lat = pipeline::LatencyFigures::of(shown.receive_to_display);
    log->info("frames decoded {} ({} degraded), packets received {}, lost {}, latency receive->decoded p50/p95/p99 "
              "{:.0f}/{:.0f}/{:.0f} ms; shown {} (late {}, repeated {}, skipped {}), receive->display p50/p95/p99 "
              "{:.0f}/{:.0f}/{:.0f} ms",
              s.decode.decoded, s.decode.degraded, s.stream.packets_received, s.stream.packets_lost, lat.p50, lat.p95,
              lat.p99, shown.shown, shown.late, shown.repeated, shown.skipped, shown_lat.p50, shown_lat.p95,
              shown_lat.p99);
    if (json) {
      auto summary = summarise(s);
      summary.update(operator_summary);  // events, alarms, capture, as in j2kprobe
      fmt::print("{}\n", summary.dump(2));
    }
    if (demo_sender && !demo_sender->error().empty()) {
      log->error("demo failed: {}", demo_sender->error());
      return cli::exit_error;
    }
    return status;
  }

  QApplication& qt = *qt_app;
  ui::PlayerWidget player;
  // Paced presentation: the window asks the presenter at every refresh. For a screenshot the
  // newest frame is shown at once (`flush`), so that the grab holds the last frame delivered.
  bool flush = false;
  player.set_paced_source({[&](auto visible, auto refresh) -> std::optional<ui::PacedPicture> {
                             auto f = presenter.on_refresh(flush ? visible + std::chrono::hours(24) : visible, refresh);
                             if (!f) return std::nullopt;
                             return ui::PacedPicture{std::move(f->host), std::move(f->device), f->received, f->index,
                                                     f->field};
                           },
                           [&](auto swapped) { presenter.on_shown(swapped); }});
  player.setWindowTitle(QString::fromStdString("j2kplay — " + url.describe()));
  player.set_overlay_visible(!no_overlay);
  player.set_deinterlace(deinterlace);
  player.resize(win_w, win_h);
  // The sound: meters over the picture, the picture clock from each swap, M mutes.
  player.set_paint_hook([&](QPainter& painter, const QRect& area) {
    if (!player.overlay_visible() || !sound.has_sound()) return;  // the meters are part of the overlay (I)
    const auto view = sound.meters_view();
    ui::draw_audio_meters(painter, ui::audio_meters_area(area, view.channels.size()), view);
  });
  player.set_shown_hook([&](const void* picture, std::chrono::steady_clock::time_point t) { sound.on_shown(picture, t); });
  QShortcut mute_key(QKeySequence(Qt::Key_M), &player);
  QObject::connect(&mute_key, &QShortcut::activated, [&] { sound.toggle_mute(); });
  QTimer sound_timer;  // opens the output once the sound's format is known; keeps the meters moving
  QObject::connect(&sound_timer, &QTimer::timeout, [&] {
    sound.tick();
    // While sound plays, the pictures wait at least as long as the sound needs to reach the
    // output ahead of being heard (it arrives after its picture).
    presenter.set_min_delay(sound.picture_delay());
    if (player.overlay_visible() && sound.has_sound()) player.update();
  });
  sound_timer.start(100);
  if (fullscreen) player.showFullScreen();
  else player.show();

  // Statistics for the overlay, once a second, read on the GUI thread.
  auto before = std::make_shared<pipeline::StatsSample>(pipeline::StatsSample::take(pipe));
  auto display_before = presenter.figures();
  std::optional<int> capture_status;
  QTimer stats_timer;
  int stats_updates = 0;  // GUI thread: how often the overlay and the banner were refreshed
  player.set_graphs_visible(show_graphs);
  player.set_events_visible(show_events);
  std::uint64_t shown_before = 0;  // frames shown up to the last second (GUI thread)
  QObject::connect(&stats_timer, &QTimer::timeout, [&] {
    auto now = pipeline::StatsSample::take(pipe);
    const auto first = pipe.first_packet_time();
    const double t = first ? std::chrono::duration<double>(now.at - *first).count() : 0.0;
    auto second = cli::second_report(now, *before, t);
    // Frames, not pictures: a deinterlaced frame is two pictures (its fields) but one frame,
    // so that shown and decoded compare (j2k_frames_shown_total, the graph's shown/s).
    const std::uint64_t shown = player.frames_shown() - player.second_fields_shown();
    second.frames_shown = shown - shown_before;
    shown_before = shown;
    sound.glue().add_to(second);
    nlohmann::json summary;
    if (mon.serves_metrics()) {
      summary = pipeline::summary_json(now, t, url.format);
      summary["frames"]["shown"] = shown;  // j2k_frames_shown_total
    }
    mon.on_second(second, now.at, std::move(summary));
    player.set_monitor_view(monitor_view(mon));
    ++stats_updates;
    const auto display = presenter.figures();
    QString text = overlay_text(now, *before, url, player.display_path(),
                                pipeline::display_line(display, display_before, std::chrono::duration<double>(now.at - before->at).count()));
    display_before = display;
    if (const auto line = sound.overlay_line(); !line.empty()) text += "\n" + QString::fromStdString(line);
    {
      std::lock_guard lock(time_code_mutex);
      if (!time_code.empty()) text += QStringLiteral("\ntime code %1").arg(QString::fromStdString(time_code));
    }
    player.set_overlay_text(text);
    // The window could not take device pictures (no CUDA-GL interop here): host pictures from now on.
    if (player.device_display_failed() && now.decode.device_display) pipe.set_device_display(false);
    *before = now;
    if (cli::stop_requested().load()) qt.quit();
    if (!capture_status) {
      if ((capture_status = capture_ended())) qt.exit(*capture_status);
    }
    if (demo_sender && !demo_sender->error().empty()) {
      log->error("demo failed: {}", demo_sender->error());
      qt.exit(1);
    }
  });
  stats_timer.start(1000);
  player.set_overlay_text(QString::fromStdString(url.describe() + "\nwaiting for the stream…"));

  // --quit-after counts from the first picture on screen (the demo may first need to
  // encode its loop); if no picture comes within a minute more, give up with an error.
  int rc_screenshot = 0;
  QTimer quit_timer;
  const auto launched = std::chrono::steady_clock::now();
  std::optional<std::chrono::steady_clock::time_point> first_shown;
  int stats_updates_at_first = 0;
  auto take_screenshot = [&] {
    // Stop the stream first (every frame delivered), so the window draws the last picture
    // handed to it, whose codestreams the sink kept: what the window drew can then be
    // compared with the CPU path's picture of the same frame (FILE.cpu.png).
    pipe.stop(true);
    flush = true;
    QImage grab = player.grabFramebuffer();  // as on screen, overlay included unless hidden
    auto shown = player.shown_picture();
    if (!grab.save(QString::fromStdString(screenshot), "PNG")) {
      log->error("screenshot: cannot write '{}'", screenshot);
      rc_screenshot = cli::exit_error;
      return;
    }
    if (shown) (void)media::write_png_rgba(screenshot + ".frame.png", shown->pixels.data(), shown->width, shown->height);
    if (auto field = player.shown_field()) {
      // One field of an interlaced frame on screen: the picture the shader completed, the woven
      // frame before (FILE.frame.png is the frame itself) and which field it was, so that the
      // window can be checked against ui::deinterlace_field.
      auto save = [&](const std::string& name, const gpu::RgbaImage& img) {
        (void)media::write_png_rgba(screenshot + name, img.pixels.data(), img.width, img.height);
      };
      save(".field.png", *field->field);
      if (field->previous) save(".previous.png", *field->previous);
      nlohmann::json about = {{"parity", field->parity}, {"mode", ui::deinterlace_name(field->mode)},
                              {"previous", field->previous != nullptr}};
      if (field->frame_number) about["frame"] = *field->frame_number;
      if (field->previous_frame_number) about["previous_frame"] = *field->previous_frame_number;
      if (std::FILE* out = std::fopen((screenshot + ".field.json").c_str(), "w")) {
        std::fputs(about.dump().c_str(), out);
        std::fclose(out);
      }
    }
    std::lock_guard lock(last_shown.mutex);
    if (!last_shown.codestreams.empty()) {
      app::DecoderChoice cpu_choice;
      cpu_choice.gpu = gpu::GpuMode::off;
      auto dec = app::make_decoder(cpu_choice);
      std::vector<PlanarImage> pictures;
      for (const auto& bytes : last_shown.codestreams) {
        auto cs = syntax::locate_codestream(bytes);
        auto img = cs && dec ? (*dec)->decode(*cs, {}) : Result<PlanarImage>(make_error(ErrorKind::corrupt, "no codestream"));
        if (img) pictures.push_back(std::move(img).value());
      }
      Result<PlanarImage> picture = make_error(ErrorKind::corrupt, "the last frame did not decode on the CPU");
      if (pictures.size() == 1) picture = std::move(pictures[0]);
      else if (pictures.size() == 2) picture = pipeline::weave_fields(pictures[0], pictures[1], last_shown.first_field_is_top);
      gpu::RgbaImage rgba;
      gpu::ColourInterpretation ci =
          picture ? pipeline::colour_of(last_shown.descriptor, *picture, syntax::declares_digital_cinema(last_shown.codestreams.front()))
                  : gpu::ColourInterpretation{};
      if (config.transfer) ci.transfer = *config.transfer;
      if (picture && gpu::to_rgba8(*picture, ci, rgba))
        (void)media::write_png_rgba(screenshot + ".cpu.png", rgba.pixels.data(), rgba.width, rgba.height);
      else
        log->warn("screenshot: no CPU picture of the last frame ({})", picture ? "conversion failed" : picture.error().message);
    }
    log->info("screenshot saved to {} ({} frames shown); display path: {}", screenshot, player.frames_shown(),
              player.display_path().replace(QLatin1Char('\n'), QStringLiteral("; ")).toStdString());  // one log line
  };
  QObject::connect(&quit_timer, &QTimer::timeout, [&] {
    const auto now = std::chrono::steady_clock::now();
    if (!first_shown && player.frames_shown() > 0) {
      first_shown = now;
      stats_updates_at_first = stats_updates;
    }
    if (quit_after <= 0) return;  // it also times the first picture (the display rate at the end)
    if (!first_shown) {
      if (now - launched > std::chrono::duration<double>(quit_after + 60)) {
        log->error("no picture was shown in {:.0f} s", quit_after + 60);
        rc_screenshot = cli::exit_error;
        qt.quit();
      }
      return;
    }
    if (now - *first_shown < std::chrono::duration<double>(quit_after)) return;
    // A screenshot shows the statistics and the alarm banner of a second with pictures in it,
    // however late a loaded machine runs the statistics timer.
    if (!screenshot.empty() && stats_updates < stats_updates_at_first + 2 &&
        now - *first_shown < std::chrono::duration<double>(quit_after + 30))
      return;
    if (!screenshot.empty()) take_screenshot();
    qt.quit();
  });
  quit_timer.start(100);
  const int rc = qt.exec();
  // At a capture's end its last frames are still taken in (and counted); otherwise stop now.
  const bool capture_done = capture_status && *capture_status == cli::exit_ok;
  // The part of a second since the statistics timer's last look is the monitor's too: looked
  // at before a stop, after a capture's end.
  std::optional<pipeline::StatsSample> tail;
  if (!capture_done) tail = cli::last_part_before_stop(pipe, *before);
  pipe.stop(capture_done);
  if (capture_done) say_capture_end();
  sound_timer.stop();
  sound.finish();
  presenter.clear();  // device pictures go back to the pipeline's pool while it still exists
  if (const auto first = pipe.first_packet_time(); first && (tail || capture_done)) {
    auto sample = tail ? *tail : pipeline::StatsSample::take(pipe);
    const double t = std::chrono::duration<double>(sample.at - *first).count();
    auto second = cli::second_report(sample, *before, t);
    sound.glue().add_to(second);
    mon.on_second(second, sample.at, mon.serves_metrics() ? pipeline::summary_json(sample, t, url.format) : nlohmann::json{});
  }
  nlohmann::json operator_summary;
  sound.glue().finish(operator_summary, pipe.stream().audio);
  operator_options.finish(operator_summary);  // flushes the event log, stops the metrics server
  log->info("shown {} pictures ({} frames; {} replaced before display; {} through the GPU display path, {} GPU display "
            "fallbacks in the window)",
            player.frames_shown(), player.frames_shown() - player.second_fields_shown(), player.frames_skipped(),
            player.frames_via_device(), player.device_fallbacks());
  const auto ds = player.display_stats();
  const double shown_seconds = first_shown ? std::chrono::duration<double>(std::chrono::steady_clock::now() - *first_shown).count() : 0;
  log->info("display: {:.1f} frames/s shown; last packet -> swap p50 {:.1f} ms, p99 {:.1f} ms ({} frames); "
            "GPU time of texture update + draw {:.3f} ms (median)",
            shown_seconds > 0 ? static_cast<double>(ds.frames_shown) / shown_seconds : 0.0, ds.receive_to_swap_p50_ms,
            ds.receive_to_swap_p99_ms, ds.latency_samples, ds.gpu_update_draw_ms);
  const auto paced = presenter.figures();
  log->info("paced by the stream clock: shown {}, late {}, repeated {}, skipped {}, playout delay {:.0f} ms",
            paced.shown, paced.late, paced.repeated, paced.skipped, paced.delay_ms);
  if (json) {
    auto summary = summarise(pipeline::StatsSample::take(pipe));
    summary.update(operator_summary);
    fmt::print("{}\n", summary.dump(2));
  }
  return rc ? rc : rc_screenshot;
}
