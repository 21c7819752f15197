#include "pipeline/receive_pipeline.hpp"

#include "pipeline/presenter.hpp"

#include <algorithm>

#include <fmt/format.h>

#include <deque>
#include <tuple>
#include <cstdlib>

#include "core/cpus.hpp"
#include "core/log.hpp"
#include "gpu/cuda_decoder.hpp"
#include "gpu/device_picture.hpp"
#include "net/pcap_replay.hpp"
#include "net/udp_receiver.hpp"
#include "syntax/locate.hpp"
#include "syntax/parameters.hpp"
#include "syntax/segments.hpp"
#include "monitor/alarms.hpp"
#include "pipeline/codestream_levels.hpp"

namespace j2k::pipeline {

using Clock = std::chrono::steady_clock;

/// Whether two field pictures weave into one frame: the same width and components, and the
/// field holding the frame's first line as tall as the other or one line taller (odd heights).
/// The CPU weave and the GPU display path ask the same question.
/// A unit's frame before decoding: what identifies it, when it arrived, what the stream said of it.
static DecodedFrame frame_of(const depacketizer::CodestreamUnit& unit) {
  DecodedFrame f;
  f.index = unit.index;
  f.rtp_timestamp = unit.rtp_timestamp;
  f.complete = unit.complete;
  f.descriptor = unit.descriptor;
  f.received = unit.last_arrival;
  f.time_code = unit.time_code;
  f.new_timeline = unit.new_timeline;
  return f;
}

static Status fields_weave(const PlanarImage& top, const PlanarImage& bottom) {
  if (top.planes.size() != bottom.planes.size() || top.width != bottom.width || bottom.height > top.height ||
      top.height - bottom.height > 1)
    return make_error(ErrorKind::corrupt, "the two fields differ in size or components");
  for (std::size_t c = 0; c < top.planes.size(); ++c) {
    const Plane& t = top.planes[c];
    const Plane& b = bottom.planes[c];
    if (t.width != b.width || b.height > t.height || t.height - b.height > 1)
      return make_error(ErrorKind::corrupt, fmt::format("fields differ in component {} geometry", c));
  }
  return {};
}

Status weave_fields_into(const PlanarImage& first, const PlanarImage& second, bool first_is_top, PlanarImage& frame) {
  const PlanarImage& top = first_is_top ? first : second;
  const PlanarImage& bottom = first_is_top ? second : first;
  if (auto st = fields_weave(top, bottom); !st) return st;
  frame.width = top.width;
  frame.height = top.height + bottom.height;
  frame.colour = top.colour;
  frame.full_range = top.full_range;
  frame.planes.resize(top.planes.size());
  for (std::size_t c = 0; c < frame.planes.size(); ++c) {
    const Plane& t = top.planes[c];
    const Plane& b = bottom.planes[c];
    Plane& p = frame.planes[c];
    // The geometry and sample format of the field; the frame's own sample memory is reused.
    p.width = t.width;
    p.dx = t.dx;
    p.dy = t.dy;
    p.precision = t.precision;
    p.is_signed = t.is_signed;
    p.height = t.height + b.height;
    p.samples.resize(static_cast<std::size_t>(p.width) * p.height);
    // Top field on even lines, bottom field on odd lines.
    for (int y = 0; y < p.height; ++y) {
      const Plane& src = (y % 2 == 0) ? t : b;
      std::copy_n(&src.samples[static_cast<std::size_t>(y / 2) * src.width], p.width,
                  &p.samples[static_cast<std::size_t>(y) * p.width]);
    }
  }
  return {};
}

Result<PlanarImage> weave_fields(const PlanarImage& first, const PlanarImage& second, bool first_is_top) {
  PlanarImage frame;
  if (auto st = weave_fields_into(first, second, first_is_top, frame); !st) return st.error();
  return frame;
}

gpu::ColourInterpretation colour_of(const std::optional<depacketizer::PictureDescriptor>& descriptor,
                                    const PlanarImage& image, bool digital_cinema) {
  gpu::ColourInterpretation ci;
  if (descriptor) {
    ci.coding = descriptor->coding;
    ci.full_range = descriptor->full_range();
    ci.transfer = descriptor->transfer;
    // GStreamer's mxfmux writes an RGBA descriptor for YCbCr: subsampled chroma cannot be RGB.
    if (descriptor->rgba && subsampling_name(image) != "4:4:4") {
      ci.coding = ColourCoding::unknown;
      ci.full_range = false;
    }
  }
  if (digital_cinema) ci.coding = ColourCoding::xyz;  // what the codestream declares outweighs a descriptor
  return ci;
}


gpu::ColourInterpretation ReceivePipeline::display_colour(const DecodedFrame& f, const PlanarImage& image) const {
  gpu::ColourInterpretation ci = colour_of(f.descriptor, image, f.digital_cinema);
  if (config_.transfer) ci.transfer = *config_.transfer;
  return ci;
}

namespace {

int decode_threads(const PipelineConfig& c) {
  return c.decode_threads > 0 ? c.decode_threads : usable_cpus();
}

/// Whether the decoders run their in-frame work on the shared scheduler (OpenJPEG cannot).
bool shares_scheduler(const PipelineConfig& c) { return c.decoder.backend != app::DecoderBackend::openjpeg; }

int default_workers(const PipelineConfig& c) {
  if (!c.decode) return 0;
  if (c.decode_workers > 0) return c.decode_workers;
  const int threads = decode_threads(c);
  // Few frames in flight, each spread over many threads, is the lowest latency; enough of
  // them that one frame's serial parts (tier-2, the weave, display conversion) and the tails
  // of its loops leave no thread idle: a quarter of the threads, at least two
  // (bench/RESULTS.md, issue 12, has the measurements that chose this).
  return shares_scheduler(c) ? std::max(2, (threads + 3) / 4) : threads;
}

std::size_t unit_capacity(const PipelineConfig& c) {
  if (c.unit_queue > 0) return c.unit_queue;
  return std::max<std::size_t>(16, 4 * static_cast<std::size_t>(std::max(1, default_workers(c))));
}

std::size_t result_capacity(const PipelineConfig& c) {
  if (c.result_queue > 0) return c.result_queue;
  return static_cast<std::size_t>(default_workers(c)) + 8;
}

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

/// What the decoder met in codestream `i` of frame `f` (a field's when `fields`), added to
/// f.damage.
void add_damage(DecodedFrame& f, const decoder::DecodeStats& st, std::size_t i, bool fields) {
  if (!decoder::met_damage(st)) return;
  if (!f.damage.empty()) f.damage += "; ";
  if (fields) f.damage += fmt::format("field {}: ", i + 1);
  f.damage += decoder::describe_damage(st);
}

}  // namespace

ReceivePipeline::ReceivePipeline(const PipelineConfig& config, Sink sink)
    : config_(config),
      sink_(std::move(sink)),
      packets_(16384),
      units_(unit_capacity(config)),
      results_(result_capacity(config)),
      degrade_(DegradeController::Config{config.degrade && config.drop_when_behind && config.decode,
                                         std::max(0, config.max_degrade_level)}) {}

ReceivePipeline::~ReceivePipeline() { stop(false); }

Result<std::unique_ptr<ReceivePipeline>> ReceivePipeline::open(const PipelineConfig& config, Sink sink) {
  if (!config.packet_source && config.url.scheme == StreamUrl::Scheme::demo)
    return make_error(ErrorKind::unsupported, "demo:// is played by j2kplay --demo");
  auto format = depacketizer::parse_payload_format(config.url.format);
  if (!format) return make_error(ErrorKind::unsupported, fmt::format("payload format '{}' is not mxf, rfc5371 or ts", config.url.format));
  PipelineConfig effective = config;
  if (!config.packet_source && config.url.scheme == StreamUrl::Scheme::pcap) {
    // A file can wait for the decoder: decode every frame, at full quality, rather than drop.
    effective.drop_when_behind = false;
  }
  // "One per CPU" is settled once, here: the threads made and the threads reported agree.
  effective.decode_threads = decode_threads(effective);
  std::unique_ptr<ReceivePipeline> p(new ReceivePipeline(effective, std::move(sink)));
  if (config.packet_source) {
    auto source = config.packet_source(p->packets_);
    if (!source) return source.error();
    p->receiver_ = std::move(source).value();
  } else if (config.url.scheme == StreamUrl::Scheme::pcap) {
    net::PcapConfig pc;
    pc.file = config.url.host;
    pc.port = config.url.port;
    if (auto it = config.url.query.find("dst"); it != config.url.query.end()) pc.destination = it->second;
    pc.capture_timing = config.capture_timing ||
                        (config.url.query.count("timing") && config.url.query.at("timing") == "capture");
    pc.loop = config.url.query.count("loop") && config.url.query.at("loop") == "1";
    // The stream's RTCP (the next port) and, with fec=1, its FEC ports, in the capture's order.
    if (pc.port != 0 && pc.port != 65535) pc.side_ports.emplace_back(pc.port + 1, depacketizer::kControl);
    if (auto it = config.url.query.find("fec"); it != config.url.query.end() && it->second == "1") {
      p->protection_.fec = true;
      auto port_param = [&](const char* key, int fallback) {
        auto at = config.url.query.find(key);
        return at == config.url.query.end() ? fallback : std::atoi(at->second.c_str());
      };
      for (auto [key, offset, channel] : {std::tuple{"fec_column", 2, depacketizer::kFecColumn},
                                          std::tuple{"fec_row", 4, depacketizer::kFecRow}}) {
        const int port = port_param(key, pc.port + offset);
        if (port <= 0 || port > 65535)
          return make_error(ErrorKind::corrupt,
                            config.url.query.count(key)
                                ? fmt::format("{}={} is not a port (1..65535)", key, port)
                                : fmt::format("fec=1 looks for its FEC on port {} + {} = {}, beyond 65535: give {}=PORT",
                                              pc.port, offset, port, key));
        pc.side_ports.emplace_back(static_cast<std::uint16_t>(port), channel);
      }
    }
    auto replay = net::PcapReplay::open(pc, p->packets_);
    if (!replay) return replay.error();
    p->replay_ = replay->get();
    p->receiver_ = std::move(replay).value();
  } else {
    net::ReceiverConfig rc;
    rc.address = config.url.host;
    rc.port = config.url.port;
    rc.iface = config.url.iface;
    rc.source = config.url.source;
    rc.receive_buffer = config.receive_buffer;
    auto rx = net::UdpReceiver::open(rc, p->packets_);
    if (!rx) return rx.error();
    // RTCP on the next port (RFC 3550 11); without it the stream still plays. Port 0 (the
    // demo: any free port) means the one after the port the data socket was given.
    const std::uint16_t data_port = (*rx)->bound_port();
    p->receiver_ = std::move(rx).value();
    rc.port = data_port == 0 || data_port == 65535 ? 0 : static_cast<std::uint16_t>(data_port + 1);
    rc.pool_packets = 64;
    rc.packet_size = 2048;
    rc.channel = depacketizer::kControl;
    rc.receive_buffer = 256 << 10;
    if (rc.port != 0) {
      if (auto control = net::UdpReceiver::open(rc, p->control_packets_)) p->control_receiver_ = std::move(control).value();
      else logger("net")->warn("no RTCP from the sender: {}", control.error().message);
    }
    if (auto st = p->open_protection_receivers(); !st) return st.error();
  }
  // Without format= in the URL the payload decides (MXF or RFC 5371), logged when followed.
  p->session_ = std::make_unique<depacketizer::RtpSession>(
      [raw = p.get()](depacketizer::CodestreamUnit&& unit) { raw->on_unit(std::move(unit)); },
      depacketizer::SessionConfig{p->session_reorder(config.reorder),
                                  config.url.query.count("format") ? format : std::nullopt, config.on_stream_event,
                                  config.on_audio ? depacketizer::AudioSink([raw = p.get()](depacketizer::AudioBlock&& b) {
                                    raw->on_audio(std::move(b));
                                  })
                                                  : depacketizer::AudioSink{}});
  p->protection_.on_event = config.on_stream_event;
  p->protection_stream_ = std::make_unique<depacketizer::ProtectedStream>(*p->session_, p->protection_);
  return p;
}

depacketizer::ReorderConfig ReceivePipeline::session_reorder(depacketizer::ReorderConfig base) const {
  if (protection_.fec) base = depacketizer::reorder_for_fec(base);
  if (protection_.two_paths) base = depacketizer::reorder_for_paths(base, protection_.merge.max_skew);
  return base;
}

Status ReceivePipeline::open_protection_receivers() {
  // ST 2022-1: fec=1 joins column FEC on port+2 and row FEC on port+4 (or fec_column= and
  // fec_row= name the ports). ST 2022-7: the second URL is the second path. Every socket feeds
  // the one packet queue, each packet stamped with its channel.
  const StreamUrl& url = config_.url;
  auto open_one = [&](const StreamUrl& u, int port, int channel, std::size_t pool) -> Status {
    if (port <= 0 || port > 65535)
      return make_error(ErrorKind::corrupt,
                        fmt::format("port {} is beyond 65535 (fec=1 looks for FEC on the stream's port + 2 and + 4): give "
                                    "fec_column=PORT and fec_row=PORT",
                                    port));
    net::ReceiverConfig rc;
    rc.address = u.host;
    rc.port = static_cast<std::uint16_t>(port);
    rc.iface = u.iface;
    rc.source = u.source;
    rc.receive_buffer = config_.receive_buffer;
    rc.pool_packets = pool;
    rc.channel = channel;
    auto rx = net::UdpReceiver::open(rc, packets_);
    if (!rx) return rx.error();
    extra_receivers_.push_back(std::move(rx).value());
    extra_channels_.push_back(channel);
    return {};
  };
  auto port_param = [&](const char* key, int fallback) {
    auto it = url.query.find(key);
    return it == url.query.end() ? fallback : std::atoi(it->second.c_str());
  };
  if (auto it = url.query.find("fec"); it != url.query.end() && it->second == "1") {
    protection_.fec = true;
    if (auto st = open_one(url, port_param("fec_column", url.port + 2), depacketizer::kFecColumn, 2048); !st) return st;
    if (auto st = open_one(url, port_param("fec_row", url.port + 4), depacketizer::kFecRow, 2048); !st) return st;
  }
  if (config_.url2) {
    protection_.two_paths = true;
    if (auto st = open_one(*config_.url2, config_.url2->port, depacketizer::kMediaPath2, 8192); !st) return st;
    // The second path's FEC (copies of the first's, or its only FEC when the first has none):
    // its rows and columns go to the same decoder, which keeps one of each.
    const StreamUrl& u2 = *config_.url2;
    if (auto it = u2.query.find("fec"); it != u2.query.end() && it->second == "1") {
      protection_.fec = true;
      auto port2 = [&](const char* key, int fallback) {
        auto at = u2.query.find(key);
        return at == u2.query.end() ? fallback : std::atoi(at->second.c_str());
      };
      if (auto st = open_one(u2, port2("fec_column", u2.port + 2), depacketizer::kFecColumn, 2048); !st) return st;
      if (auto st = open_one(u2, port2("fec_row", u2.port + 4), depacketizer::kFecRow, 2048); !st) return st;
    }
  }
  return {};
}

std::uint16_t ReceivePipeline::port() const noexcept { return receiver_->port(); }
ReceivePipeline::ReceiverTotals ReceivePipeline::receiver_counters() const noexcept {
  ReceiverTotals t;
  auto add = [&t](const net::ReceiverCounters& c, bool media) {
    if (media) {
      t.datagrams += c.datagrams.load(std::memory_order_relaxed);
      t.bytes += c.bytes.load(std::memory_order_relaxed);
    }
    t.dropped_queue_full += c.dropped_queue_full.load(std::memory_order_relaxed);
    t.dropped_pool_empty += c.dropped_pool_empty.load(std::memory_order_relaxed);
    t.truncated += c.truncated.load(std::memory_order_relaxed);
    t.socket_errors += c.socket_errors.load(std::memory_order_relaxed);
    t.dropped_socket_buffer += c.dropped_socket_buffer.load(std::memory_order_relaxed);
  };
  add(receiver_->counters(), true);
  for (std::size_t i = 0; i < extra_receivers_.size(); ++i)
    add(extra_receivers_[i]->counters(), extra_channels_[i] == depacketizer::kMediaPath2);
  if (control_receiver_) add(control_receiver_->counters(), false);
  if (replay_) {
    const auto& c = replay_->capture_counters();
    t.capture_fragments = c.fragments.load(std::memory_order_relaxed);
    t.capture_not_udp = c.not_udp.load(std::memory_order_relaxed);
    t.capture_cut = c.truncated.load(std::memory_order_relaxed);
    t.capture_gaps_shortened = c.gaps_shortened.load(std::memory_order_relaxed);
    t.capture_reassembled = c.reassembled.load(std::memory_order_relaxed);
    t.capture_fragments_lost = c.fragments_lost.load(std::memory_order_relaxed);
    t.capture_cut_matching = c.cut_matching.load(std::memory_order_relaxed);
    t.capture_ipv6 = c.ipv6.load(std::memory_order_relaxed);
    t.capture_read_errors = c.read_errors.load(std::memory_order_relaxed);
    t.capture_malformed = c.malformed.load(std::memory_order_relaxed);
  }
  if (limit_reached_.load()) {
    t.datagrams = datagrams_at_limit_.load();
    t.bytes = bytes_at_limit_.load();
  }
  return t;
}

depacketizer::StreamSnapshot ReceivePipeline::stream() const {
  auto s = session_->snapshot();
  // Units cut short by the stop or past the frame limit are not frames of the stream (nor of
  // the followed sender's entry: they are its last units).
  const auto complete = std::min(s.frames_complete, uncounted_complete_.load());
  const auto incomplete = std::min(s.frames_incomplete, uncounted_incomplete_.load());
  s.frames_complete -= complete;
  s.frames_incomplete -= incomplete;
  for (auto& e : s.ssrcs)
    if (e.followed && e.ssrc == s.ssrc) {
      e.frames_complete -= std::min(e.frames_complete, complete);
      e.frames_incomplete -= std::min(e.frames_incomplete, incomplete);
    }
  return s;
}

void ReceivePipeline::record_silence(Clock::duration length) {
  // Seen now: the per-second readers compare it with their own clock (a capture's receive
  // times are its own, and a replay held back by decoding falls behind the clock).
  const Silence silence{Clock::now(), length};
  std::lock_guard lock(silences_mutex_);
  if (silences_.size() < kSilencesKept) silences_.push_back(silence);
  else silences_[silences_next_] = silence;
  silences_next_ = (silences_next_ + 1) % kSilencesKept;
}

std::vector<ReceivePipeline::Silence> ReceivePipeline::recent_silences() const {
  std::lock_guard lock(silences_mutex_);
  std::vector<Silence> out(silences_.size());
  // Until the ring is full it is in order; then the oldest is the next to be replaced.
  const std::size_t oldest = silences_.size() < kSilencesKept ? 0 : silences_next_;
  std::rotate_copy(silences_.begin(), silences_.begin() + static_cast<std::ptrdiff_t>(oldest), silences_.end(), out.begin());
  return out;
}

std::optional<Clock::time_point> ReceivePipeline::first_packet_time() const {
  const auto ns = first_packet_ns_.load();
  if (ns == 0) return std::nullopt;
  return Clock::time_point(Clock::duration(ns));
}

Result<std::unique_ptr<decoder::Decoder>> ReceivePipeline::make_decoder(gpu::CudaDecoder*& cuda) {
  cuda = nullptr;
  if (config_.decoder_factory) return config_.decoder_factory();
  if (pool_) {
    if (auto typed = app::make_gpu_decoder(config_.decoder)) {
      cuda = typed->get();
      return std::unique_ptr<decoder::Decoder>(std::move(typed).value());
    }
  }
  return app::make_decoder(config_.decoder);
}

Status ReceivePipeline::start() {
  if (running_.load()) return {};
  const int workers = default_workers(config_);
  // The GPU display path: display pictures stay in a bounded pool of device buffers.
  if (workers > 0 && !config_.decoder_factory && config_.make_rgba && config_.device_display &&
      config_.decoder.may_use_gpu() && gpu::cuda_available()) {
    // The playout buffer holds up to kMostFrames at high rates or long delays (19 at 50 fps,
    // 23 at 60, all of them while a minimised window paints nothing): with only 14 beside the
    // workers the pool ran dry and every later frame took the CPU path for good.
    const int capacity = config_.device_pictures > 0 ? config_.device_pictures
                                                     : workers + static_cast<int>(FramePresenter::kMostFrames) + 6;
    if (auto pool = gpu::DevicePicturePool::create(capacity)) {
      pool_ = std::move(pool).value();
      logger("decoder")->info("display pictures stay on the GPU ({}; at most {} device pictures)",
                              gpu::cuda_describe(), capacity);
    } else {
      logger("decoder")->warn("GPU display path unavailable ({}): display pictures go through the CPU",
                              pool.error().message);
    }
  }
  if (workers > 0 && shares_scheduler(config_)) work_pool_ = std::make_unique<WorkPool>(decode_threads(config_));
  // Every decoder is made before any thread starts: one that cannot be made (no usable GPU
  // for --backend cuda) is an error now, not a worker that quietly never decodes.
  std::vector<std::unique_ptr<Worker>> made;
  for (int i = 0; i < workers; ++i) {
    auto w = std::make_unique<Worker>();
    auto dec = make_decoder(w->cuda);
    if (!dec) {
      pool_.reset();
      return make_error(dec.error().kind,
                        fmt::format("cannot make the {} decoder: {}", config_.decoder.describe(), dec.error().message));
    }
    w->decoder = std::move(dec).value();
    made.push_back(std::move(w));
  }
  running_.store(true);
  workers_ = std::move(made);
  for (auto& w : workers_) w->thread = std::thread([this, raw = w.get()] { decode_loop(*raw); });
  delivery_thread_ = std::thread([this] { deliver_loop(); });
  depacketizer_thread_ = std::thread([this] { depacketize_loop(); });
  receiver_->start();
  if (control_receiver_) control_receiver_->start();
  for (auto& r : extra_receivers_) r->start();
  return {};
}

void ReceivePipeline::stop(bool drain) {
  if (!running_.exchange(false)) return;
  drain_.store(drain);
  receiver_->stop();
  if (control_receiver_) control_receiver_->stop();
  for (auto& r : extra_receivers_) r->stop();
  packets_.close();
  if (!drain) {
    // Nothing more is handed on: every queue wakes whoever waits on it.
    units_.close();
    results_.close();
    while (units_.try_pop()) {}
  }
  // Draining: the depacketizer empties the packet queue and flushes the session, the
  // workers empty the unit queue, the delivery thread empties the results, in that order.
  if (depacketizer_thread_.joinable()) depacketizer_thread_.join();
  units_.close();
  for (auto& w : workers_)
    if (w->thread.joinable()) w->thread.join();
  results_.close();
  if (delivery_thread_.joinable()) delivery_thread_.join();
  workers_.clear();
  work_pool_.reset();
}

void ReceivePipeline::on_unit(depacketizer::CodestreamUnit&& unit) {
  // On the depacketizer thread: hand the unit to the decoders, or account for it now.
  if (sound_tail_) end_sound_tail();  // a later frame: the last one's sound is past
  if (limit_reached_.load(std::memory_order_relaxed) || (stopping_flush_ && !unit.complete)) {
    // Past the frame limit, or cut short by the stop: not a frame of the stream as received.
    (unit.complete ? uncounted_complete_ : uncounted_incomplete_).fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const std::uint64_t seq = next_seq_++;
  if (config_.max_frames > 0 && ++handed_on_ >= config_.max_frames) {
    // The frame's sound follows its picture in the content package: read on until it came.
    if (config_.on_audio) sound_tail_ = unit.rtp_timestamp;
    else reach_limit();
  }
  Job job;
  job.seq = seq;
  job.due = unit.last_arrival;
  if (unit.complete) {
    job.due = stream_clock_.on_frame(unit.rtp_timestamp, unit.last_arrival);
    std::lock_guard lock(sched_mutex_);
    interval_ = stream_clock_.frame_interval();
  } else {
    job.due = stream_clock_.due(unit.rtp_timestamp, unit.last_arrival);
  }
  if (!config_.decode || (!unit.complete && config_.incomplete == IncompletePolicy::drop)) {
    DecodedFrame f = frame_of(unit);
    f.error = unit.complete ? "decode off" : "incomplete (dropped by policy)";
    if (!unit.complete && config_.decode) skipped_.fetch_add(1, std::memory_order_relaxed);
    if (config_.keep_codestreams) f.codestreams = std::move(unit.codestreams);
    hand_on(seq, std::move(f));
    return;
  }
  job.unit = std::move(unit);
  if (!config_.drop_when_behind) {
    units_.push_wait(std::move(job));
    return;
  }
  // Live: the queue is the memory bound; frames are normally dropped earlier, as late.
  if (auto evicted = units_.push_drop_oldest(std::move(job))) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    DecodedFrame f = frame_of(evicted->unit);
    f.error = "dropped: decoder behind";
    hand_on(evicted->seq, std::move(f));
  }
}

void ReceivePipeline::on_audio(depacketizer::AudioBlock&& block) {
  // On the depacketizer thread. Past the frame limit only the last frame's own sound counts.
  if (limit_reached_.load(std::memory_order_relaxed)) return;
  if (sound_tail_) {
    if (block.rtp_timestamp != *sound_tail_) return;
    config_.on_audio(std::move(block));
    end_sound_tail();
    return;
  }
  config_.on_audio(std::move(block));
}

bool ReceivePipeline::admit_source(const net::Packet& packet) {
  // Depacketizer thread. One SSRC from two sources at once (RFC 3550 8.2): the first one's
  // packets go on, the other's are counted and dropped, and the operator is told who.
  using Verdict = depacketizer::SourceGuard::Verdict;
  const Verdict v = source_guard_.accept(packet.channel, packet.bytes(), {packet.source_address, packet.source_port},
                                         packet.received);
  if (v == Verdict::pass) return true;
  const auto& f = source_guard_.finding();
  if (v == Verdict::takeover) {
    source_takeovers_.fetch_add(1, std::memory_order_relaxed);
    const std::string message = fmt::format("SSRC 0x{:08X} now comes from {} (its source {} went quiet)", f.ssrc,
                                            depacketizer::to_string(f.other), depacketizer::to_string(f.kept));
    if (collision_log_.allow()) logger("depacketizer")->warn("{}", message);
    if (config_.on_stream_event)
      config_.on_stream_event(depacketizer::SessionEvent{depacketizer::SessionEvent::Kind::ssrc_collision, 0, 0, 0,
                                                         std::nullopt, message});
    return true;
  }
  ssrc_collisions_.fetch_add(1, std::memory_order_relaxed);
  if (f.first_time) {
    const std::string message =
        fmt::format("two senders use SSRC 0x{:08X}: {} and {} (RFC 3550 8.2); the first one is followed and the "
                    "other's packets are dropped ({})",
                    f.ssrc, depacketizer::to_string(f.kept), depacketizer::to_string(f.other),
                    config_.url.scheme == StreamUrl::Scheme::pcap
                        ? "a capture of two senders or of both paths of an ST 2022-7 link: replay one with &dst=ADDR"
                        : "give each sender its own SSRC, or on multicast join one with source=");
    if (collision_log_.allow()) logger("depacketizer")->warn("{}", message);
    if (config_.on_stream_event)
      config_.on_stream_event(depacketizer::SessionEvent{depacketizer::SessionEvent::Kind::ssrc_collision, 0, 0, 0,
                                                         std::nullopt, message});
  }
  return false;
}

void ReceivePipeline::end_sound_tail() {
  sound_tail_.reset();
  reach_limit();
}

void ReceivePipeline::reach_limit() {
  // The datagrams the depacketizer had taken when the limit frame came (those still queued,
  // read ahead by the receiver or a fast replay, are after it).
  datagrams_at_limit_.store(taken_datagrams_);
  bytes_at_limit_.store(taken_bytes_);
  limit_reached_.store(true);
}

void ReceivePipeline::hand_on(std::uint64_t seq, DecodedFrame&& frame) {
  // Blocks only while the sink is behind by a whole results queue (a bounded wait that
  // ends when the sink catches up or the pipeline stops).
  results_.push_wait(Finished{seq, std::move(frame)});
}

void ReceivePipeline::depacketize_loop() {
  // RTCP is read in arrival order with the data (kernel timestamps of both sockets), so that a
  // sender report's counts relate to exactly the packets that arrived before it. Bounded by
  // the control socket's pool (64 buffers). Each goes to the capture too; past the frame limit
  // only there.
  std::deque<net::PacketPtr> reports;
  auto read_reports = [&](std::optional<Clock::time_point> before) {
    while (control_packets_.size() > 0)  // (size() first: a try_pop on an empty queue costs a system call)
      if (auto r = control_packets_.try_pop()) reports.push_back(std::move(*r));
    for (; !reports.empty() && (!before || reports.front()->received <= *before); reports.pop_front()) {
      if (config_.on_datagram) config_.on_datagram(*reports.front());
      if (!limit_reached_.load(std::memory_order_relaxed))
        session_->on_rtcp(reports.front()->bytes(), reports.front()->received);
    }
  };
  for (;;) {
    auto packet = packets_.pop_for(std::chrono::milliseconds(2));
    if (!packet) {
      if (packets_.closed() && packets_.size() == 0) break;
      session_->tick(Clock::now());  // release packets whose gap will not fill
      read_reports(std::nullopt);
      // The last frame's sound is not coming: the stream ended or paused after it.
      if (sound_tail_ && (receiver_->finished() || now() - last_packet_ > kSoundTailWait)) end_sound_tail();
      continue;
    }
    if ((*packet)->channel == depacketizer::kControl) {  // a capture's RTCP, in the data's order
      const auto at = (*packet)->received;
      reports.push_back(std::move(*packet));
      read_reports(at);
      continue;
    }
    if (first_packet_ns_.load(std::memory_order_relaxed) == 0)
      first_packet_ns_.store((*packet)->received.time_since_epoch().count());
    last_packet_ = (*packet)->received;
    read_reports((*packet)->received);
    if (config_.on_datagram) config_.on_datagram(**packet);  // the capture keeps every datagram
    if ((*packet)->channel == depacketizer::kMediaPath1 || (*packet)->channel == depacketizer::kMediaPath2) {
      ++taken_datagrams_;
      taken_bytes_ += (*packet)->size;
    }
    // After the frame limit the rest of the input is read and ignored (not counted).
    if (limit_reached_.load(std::memory_order_relaxed)) continue;
    if ((*packet)->restart) {  // a looped capture's new pass, cut or not
      protection_stream_->restart();
      source_guard_.reset();
    }
    if ((*packet)->truncated) {
      // Cut at the buffer's size (counted by its input): never parsed as if whole, so the
      // stream sees it as lost (an MXF KLV would otherwise take its tail from the next packet).
      if (truncated_log_.allow())
        logger("net")->warn("a datagram larger than {} bytes was cut and dropped (jumbo frames beyond 9000 bytes are "
                            "not expected on a contribution link)", (*packet)->storage.size());
      continue;
    }
    if (!admit_source(**packet)) continue;
    const std::uint64_t stream_packets = session_->packets_received();
    protection_stream_->on_datagram((*packet)->channel, (*packet)->bytes(), (*packet)->received);
    if (session_->packets_received() != stream_packets) {
      // A packet of the followed stream: the silences the alarms see end only at these.
      const auto at = (*packet)->received;
      if (last_stream_packet_ && at - *last_stream_packet_ >= kSilenceRecorded) record_silence(at - *last_stream_packet_);
      last_stream_packet_ = at;
    }
  }
  if (sound_tail_) end_sound_tail();
  protection_stream_->finish_paths();  // each 2022-7 path's loss, to the last number seen
  read_reports(std::nullopt);
  if (limit_reached_.load()) return;  // what is pending belongs to frames after the limit
  // End of a capture, or a stream that had gone silent: what is pending is the stream's last
  // frame, incomplete if it is. A stop while packets were flowing (Ctrl-C, --duration, a
  // window closed) cuts the frame in flight short: that frame is not counted incomplete.
  const bool silent = now() - last_packet_ > std::chrono::milliseconds(500);
  stopping_flush_ = !receiver_->finished() && !silent;
  if (drain_.load() || !stopping_flush_) protection_stream_->flush();
}

PlanarImage ReceivePipeline::take_spare() {
  std::lock_guard lock(spare_mutex_);
  if (spare_.empty()) return {};
  PlanarImage img = std::move(spare_.back());
  spare_.pop_back();
  return img;
}

void ReceivePipeline::give_back(PlanarImage&& image) {
  if (image.planes.empty()) return;
  std::lock_guard lock(spare_mutex_);
  // Enough for every worker and a few in flight; the rest is freed.
  if (spare_.size() < workers_.size() + 2) spare_.push_back(std::move(image));
  image = {};
}

Clock::duration ReceivePipeline::budget() const {
  if (config_.latency_budget.count() > 0) return config_.latency_budget;
  const auto floor = std::max<Clock::duration>(std::chrono::milliseconds(100), 4 * interval_);
  return floor + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(2 * decode_wall_ms_));
}

void ReceivePipeline::deliver_loop() {
  // Units are numbered in order without gaps; hold early ones until their predecessors are in.
  for (;;) {
    auto r = results_.pop_for(std::chrono::milliseconds(200));
    if (!r) {
      if (results_.closed()) break;
      continue;
    }
    if (r->seq != next_delivery_) {
      waiting_.emplace(r->seq, std::move(r->frame));
      continue;
    }
    sink_(std::move(r->frame));
    give_back(std::move(r->frame.image));  // what the sink left in the frame is reused
    ++next_delivery_;
    for (auto it = waiting_.find(next_delivery_); it != waiting_.end(); it = waiting_.find(next_delivery_)) {
      sink_(std::move(it->second));
      give_back(std::move(it->second.image));
      waiting_.erase(it);
      ++next_delivery_;
    }
  }
  // Closed: with draining every number arrived; anything left waits behind a frame that a
  // stop without draining discarded.
  if (drain_.load())
    for (auto& [seq, frame] : waiting_) sink_(std::move(frame));
  waiting_.clear();
}

std::string ReceivePipeline::check_against_descriptor(const depacketizer::CodestreamUnit& unit) const {
  // The descriptor says what the stream carries; a codestream declaring far more (a huge
  // picture, thousands of components) is hostile or broken: refuse it before any allocation.
  if (!unit.descriptor || unit.descriptor->stored_width == 0 || unit.descriptor->stored_height == 0) return {};
  const auto& d = *unit.descriptor;
  const long long max_w = static_cast<long long>(d.stored_width) * config_.max_descriptor_ratio;
  // The stored height is the field's when fields are separate: a frame is twice that.
  const long long max_h = static_cast<long long>(d.stored_height) * 2 * config_.max_descriptor_ratio;
  for (const auto& bytes : unit.codestreams) {
    auto g = syntax::read_geometry(bytes);
    if (!g) continue;  // the decoder reports what is wrong with it
    if (g->planes.size() > 4 || g->width > max_w || g->height > max_h)
      return fmt::format("codestream declares {}x{} with {} components, far beyond the descriptor's {}x{}: rejected",
                         g->width, g->height, g->planes.size(), d.stored_width, d.stored_height);
  }
  return {};
}

void ReceivePipeline::decode_unit(Worker& worker, Job& job, DecodedFrame& f, PlanarImage& shape) {
  auto log = logger("decoder");
  const auto& unit = job.unit;
  decoder::DecodeOptions options;
  options.pool = work_pool_.get();  // in-frame work on the shared scheduler (OpenJPEG: one thread a frame)
  options.threads = 1;
  options.reduce = level_.load(std::memory_order_relaxed);
  if (!unit.problem.empty()) {
    f.error = unit.problem;
    return;
  }
  if (unit.codestreams.empty() || unit.codestreams.size() > 2 || (unit.codestreams.size() == 2 && unit.fields != 2)) {
    f.error = fmt::format("{} codestreams in one unit, not a frame or a field pair", unit.codestreams.size());
    return;
  }
  // A field pair, woven into the frame; a segmented frame (PsF: MXF frame layout 4) is two
  // halves of one instant, shown whole.
  f.interlaced = unit.codestreams.size() == 2 && !(unit.descriptor && unit.descriptor->frame_layout == 4);
  f.first_field_is_top = unit.first_field_is_top;
  f.digital_cinema = syntax::declares_digital_cinema(unit.codestreams[0]);
  if (auto why = check_against_descriptor(unit); !why.empty()) {
    oversize_.fetch_add(1, std::memory_order_relaxed);
    f.error = std::move(why);
    return;
  }
  std::string why;
  if (options.reduce == 0 && worker.cuda && pool_ && device_display_enabled_.load(std::memory_order_relaxed) &&
      worker.cuda->gpu_active() && decode_on_device(*worker.cuda, unit, options, f, shape, why)) {
    f.decoded = true;
    return;
  }
  if (!why.empty()) {
    // The GPU display path failed for this frame: it takes the CPU path (counted).
    display_fallbacks_.fetch_add(1, std::memory_order_relaxed);
    if (!fallback_logged_.exchange(true))
      log->warn("frame {}: {}; it and later such frames take the CPU display path (counted)", f.index, why);
    else
      log->debug("frame {}: {}; CPU display path", f.index, why);
  }
  // A frame, or two fields decoded one after the other and woven into a frame. Memory is
  // reused across frames: fields decode into the worker's own pictures, frames into
  // pictures the delivery thread gave back after the sink (no allocation, no page faults
  // per frame once the sizes are stable, as in j2kdecode --bench).
  const bool fields = unit.codestreams.size() == 2;
  f.image = take_spare();
  for (;;) {
    f.error.clear();
    f.damage.clear();
    bool too_deep = false;
    std::size_t failed_at = 0;
    for (std::size_t i = 0; i < unit.codestreams.size(); ++i) {
      auto cs = syntax::locate_codestream(unit.codestreams[i]);
      if (!cs) { f.error = cs.error().message; break; }
      PlanarImage& into = fields ? worker.fields[i] : f.image;
      auto st = worker.decoder->decode_into(*cs, options, into);
      if (!st) {
        f.error = st.error().message;
        too_deep = options.reduce > 0 && st.error().kind == ErrorKind::unsupported;
        failed_at = i;
        break;
      }
      add_damage(f, worker.decoder->last_stats(), i, fields);
    }
    if (too_deep) {
      // Refused at a reduced resolution: when the codestream has fewer decomposition levels
      // than the degradation asked to skip, never ask for more (and decode this frame at the
      // most it allows). Any other "unsupported" is this frame's failure, not a limit of
      // the stream: the degradation stays free.
      const auto levels = fewest_decomposition_levels(unit.codestreams[failed_at]);
      if (levels && *levels < options.reduce) {
        std::lock_guard lock(sched_mutex_);
        degrade_.cap(*levels);
        level_.store(degrade_.level());
        options.reduce = *levels;
        continue;
      }
    }
    if (f.error.empty() && fields) {
      if (auto st = weave_fields_into(worker.fields[0], worker.fields[1], unit.first_field_is_top, f.image); !st)
        f.error = st.error().message;
    }
    break;
  }
  if (!f.error.empty()) give_back(std::move(f.image));
  f.reduce = options.reduce;
  f.decoded = f.error.empty();
}

void ReceivePipeline::decode_loop(Worker& worker) {
  auto log = logger("decoder");
  RateLimiter error_log;
  for (;;) {
    auto job = units_.pop_for(std::chrono::milliseconds(200));
    if (!job) {
      if (units_.closed()) break;  // closed and drained
      continue;
    }
    const auto& unit = job->unit;
    DecodedFrame f = frame_of(unit);
    const auto t0 = now();
    if (config_.drop_when_behind) {
      // A frame that waited past its latency budget would be shown late: drop it (counted)
      // so that the decoders spend their time on frames that are still on time. The budget
      // runs from when the frame was due by the stream's clock, or from its arrival when
      // the network delivered it later than that (it is not dropped for the network's delay).
      bool late = false;
      {
        std::lock_guard lock(sched_mutex_);
        late = t0 > std::max(job->due, unit.last_arrival) + budget();
      }
      if (late) {
        dropped_late_.fetch_add(1, std::memory_order_relaxed);  // not also dropped_: the counts are disjoint
        f.error = "dropped: late (decoder behind)";
        hand_on(job->seq, std::move(f));
        continue;
      }
    }
    PlanarImage shape;  // the geometry, when the picture went to device memory only
    // The frame's work in thread time: this thread's time on it, less its waits for helpers,
    // plus the helpers' time in its loops.
    Clock::duration helped{}, waited{};
    std::chrono::nanoseconds cpu{};
    const std::uint64_t allocations = gpu::cuda_buffer_allocations();
    {
      // The frame is a task of the scheduler, ranked by its place in the stream (the oldest
      // frame is due first and gets the idle threads first); it ends before the frame is
      // handed on, which may wait for the sink.
      std::optional<WorkPool::Task> task;
      if (work_pool_) task.emplace(*work_pool_, job->seq);
      try {
        decode_unit(worker, *job, f, shape);
        if (f.decoded && config_.make_rgba && !f.device_rgba) {
          auto rgba = std::make_shared<gpu::RgbaImage>();
          if (auto st = gpu::to_rgba8(f.image, display_colour(f, f.image), *rgba); st) {
            f.rgba = std::move(rgba);
          } else {
            undisplayable_.fetch_add(1, std::memory_order_relaxed);
            f.display_error = st.error().message;
            if (error_log.allow()) log->warn("frame {} cannot be displayed: {}", f.index, st.error().message);
          }
        }
      } catch (const std::bad_alloc&) {
        // The frame boundary is where an allocation failure ends: this frame fails, reception goes on.
        out_of_memory_.fetch_add(1, std::memory_order_relaxed);
        f = frame_of(unit);
        f.error = "out of memory while decoding this frame";
      }
      if (task) {
        helped = std::chrono::duration_cast<Clock::duration>(task->helper_time());
        waited = std::chrono::duration_cast<Clock::duration>(task->wait_time());
        cpu = task->cpu_time();
      }
    }
    const auto t1 = now();
    const Clock::duration work = std::max(Clock::duration{}, t1 - t0 - waited) + helped;
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(t1 - t0).count();
    f.decode_ms = static_cast<double>(us) / 1000.0;
    if (f.decoded) {
      f.latency_ms = ms_between(unit.last_arrival, t1);
      decoded_.fetch_add(1, std::memory_order_relaxed);
      if (!f.damage.empty() && unit.complete) {
        // Every packet came, yet the codestream is damaged: the fault lies before the network
        // (the encoder, or a device that rewrote the stream). A frame that arrived incomplete
        // is damaged by its loss, counted as such.
        codestream_damaged_.fetch_add(1, std::memory_order_relaxed);
        if (error_log.allow())
          log->warn("frame {}: every packet arrived but its codestream is damaged ({}); decoded what could be read "
                    "(counted)", f.index, f.damage);
      }
      if (f.reduce > 0) degraded_.fetch_add(1, std::memory_order_relaxed);
      decode_us_total_.fetch_add(us, std::memory_order_relaxed);
      for (auto longest = decode_us_max_.load(std::memory_order_relaxed);
           us > longest && !decode_us_max_.compare_exchange_weak(longest, us, std::memory_order_relaxed);) {}
      work_us_total_.fetch_add(std::chrono::duration_cast<std::chrono::microseconds>(work).count(),
                               std::memory_order_relaxed);
      cpu_us_total_.fetch_add(std::chrono::duration_cast<std::chrono::microseconds>(cpu).count(), std::memory_order_relaxed);
      if (f.device_rgba) on_device_.fetch_add(1, std::memory_order_relaxed);
      {
        std::lock_guard lock(sched_mutex_);
        const int before = degrade_.level();
        const int workers = static_cast<int>(workers_.size());
        DegradeController::Sample sample;
        sample.level = f.reduce;
        sample.work = work;
        // Threads that can decode at once: the scheduler's slots (its tasks always run).
        sample.capacity = work_pool_ ? std::max(work_pool_->size(), workers) : workers;
        sample.workers = workers;
        sample.interval = interval_;
        sample.backlog = units_.size();
        sample.budget = budget();
        // A decoder's first frame pays its allocations and page faults, and so does a frame
        // during which GPU or page-locked buffers grew (a reconstructor's slot used for the
        // first time: ~100 ms at 2160 against 20): not a measure of the stream for the
        // controller. The budget does follow it: the frames that queued behind a cold start
        // are decoded late rather than dropped.
        sample.cold = !worker.warm || gpu::cuda_buffer_allocations() != allocations;
        worker.warm = true;
        decode_wall_ms_ = decode_wall_ms_ > 0 ? 0.9 * decode_wall_ms_ + 0.1 * f.decode_ms : f.decode_ms;
        degrade_.on_decoded(sample);
        level_.store(degrade_.level());
        log->debug("frame {}: decoded in {:.1f} ms (work {:.1f} ms{}) at level {}, {} waiting, budget {:.0f} ms", f.index,
                   f.decode_ms, std::chrono::duration<double, std::milli>(work).count(), sample.cold ? ", cold" : "",
                   f.reduce, sample.backlog, std::chrono::duration<double, std::milli>(sample.budget).count());
        if (degrade_.level() != before)
          log->info("decoders {}: decoding at {} resolution from now on", degrade_.level() > before ? "behind" : "keep up again",
                    degrade_.level() == 0 ? std::string("full") : fmt::format("1/{}", 1 << degrade_.level()));
      }
      // Which tier-1 ran, for any CUDA decoder (with or without the display path), and whether
      // its GPU tier-1 failed (--tier1 auto: this frame and the next ones on the CPU, until the
      // decoder tries the GPU again) or works again.
      if (const auto* cuda = dynamic_cast<const gpu::CudaDecoder*>(worker.decoder.get())) {
        if (log->should_log(spdlog::level::debug)) {
          const gpu::GpuTimes t = cuda->last_gpu_times();  // of the last codestream decoded
          log->debug("frame {}: GPU path ms: tier-2 + tables {:.2f}, split {:.2f}, stage {:.2f}, enqueue {:.2f}, wait "
                     "{:.2f} | on the GPU: upload {:.2f}, tier-1 {:.2f}, IDWT {:.2f}, colour {:.2f}, download {:.2f}",
                     f.index, t.host_deferred_ms, t.host_split_ms, t.host_stage_ms, t.host_enqueue_ms, t.host_wait_ms,
                     t.upload_ms, t.tier1_ms, t.idwt_ms, t.store_ms + t.colour_ms, t.download_ms);
        }
        if (cuda->last_tier1_on_gpu()) {
          tier1_gpu_.fetch_add(1, std::memory_order_relaxed);
          if (worker.tier1_off) log->info("frame {}: GPU tier-1 works again", f.index);
          worker.tier1_off = false;
        }
        if (const std::uint64_t n = cuda->tier1_fallbacks(); n > worker.tier1_fallbacks) {
          tier1_fallbacks_.fetch_add(n - worker.tier1_fallbacks, std::memory_order_relaxed);
          worker.tier1_fallbacks = n;
          if (!worker.tier1_off)
            log->warn("frame {}: GPU tier-1 failed ({}); this decoder decodes code-blocks on the CPU and tries the GPU "
                      "again after a pause (counted)", f.index, cuda->last_gpu_error());
          worker.tier1_off = true;
        }
        // The same for the reconstruction (--gpu auto): off the GPU after a device error, back
        // once the decoder's pause is over and the GPU works.
        if (const bool active = cuda->gpu_active(); active == worker.gpu_off) {
          worker.gpu_off = !active;
          if (!active) {
            gpu_fallbacks_.fetch_add(1, std::memory_order_relaxed);
            log->warn("frame {}: the GPU failed ({}); this decoder reconstructs on the CPU and tries the GPU again "
                      "after a pause (counted)", f.index, cuda->last_gpu_error());
          } else {
            log->info("frame {}: the GPU works again", f.index);
          }
        }
      }
      const PlanarImage& geometry = f.image.empty() ? shape : f.image;
      std::lock_guard lock(format_mutex_);
      latency_.add(f.latency_ms);
      // The stream's format is that of its full-resolution pictures, not of degraded ones.
      // Its size, sampling and depth: a sender going from 4:2:2 8-bit to 4:4:4 10-bit at one
      // size is a new format too.
      if (std::string described = f.reduce == 0 ? geometry.describe() : std::string();
          f.reduce == 0 && described != format_) {
        width_ = geometry.width;
        height_ = geometry.height;
        format_ = std::move(described);
        log->info("decoding {} with the {} backend{}", format_, config_.decoder.describe(),
                  f.device_rgba ? ", display picture on the GPU" : "");
      }
    } else if (job->unit.problem.empty()) {  // unusable units are counted (and logged) once, by the depacketizer
      failed_.fetch_add(1, std::memory_order_relaxed);
      if (error_log.allow()) log->warn("frame {} not decoded: {}", f.index, f.error);
    }
    for (const auto& cs : job->unit.codestreams)
      f.fingerprint = f.fingerprint * 1099511628211ull ^ monitor::fingerprint_bytes(cs.data(), cs.size());
    if (config_.keep_codestreams) f.codestreams = std::move(job->unit.codestreams);
    hand_on(job->seq, std::move(f));
  }
}

bool ReceivePipeline::decode_on_device(gpu::CudaDecoder& dec, const depacketizer::CodestreamUnit& unit,
                                       const decoder::DecodeOptions& options, DecodedFrame& f, PlanarImage& shape,
                                       std::string& why) {
  // Geometry first (the device picture is acquired before decoding). Anything odd here is
  // left to the CPU path, which reports it as it always has (not counted as a fallback).
  const auto& streams = unit.codestreams;
  std::vector<PlanarImage> shapes;
  for (const auto& bytes : streams) {
    auto sh = syntax::read_geometry(bytes);
    if (!sh) return false;
    shapes.push_back(std::move(sh).value());
  }
  const bool fields = streams.size() == 2;
  const std::size_t top = fields && !unit.first_field_is_top ? 1 : 0;  // the field with the frame's first line
  shape = shapes[top];
  if (fields) {
    const PlanarImage& t = shapes[top];
    const PlanarImage& b = shapes[1 - top];
    if (!fields_weave(t, b)) return false;  // the CPU weave explains what is wrong
    shape.height = t.height + b.height;
    for (std::size_t c = 0; c < shape.planes.size(); ++c) shape.planes[c].height += b.planes[c].height;
  }
  const gpu::ColourInterpretation ci = display_colour(f, shape);
  auto picture = pool_->acquire(shape.width, shape.height);
  if (!picture) {
    if (picture.error().kind == ErrorKind::limit) pool_exhausted_.fetch_add(1, std::memory_order_relaxed);
    why = "no device picture: " + picture.error().message;
    return false;
  }
  for (std::size_t i = 0; i < streams.size(); ++i) {
    gpu::DeviceTarget target = (*picture)->target();
    if (fields) {  // field weave: the top field on even rows, the other on odd rows
      target.row0 = i == top ? 0 : 1;
      target.row_step = 2;
    }
    auto r = dec.decode_to_device(streams[i], options, target, ci, false);
    if (!r) {
      // Corrupt data fails the CPU path too, which then reports it: not a GPU fallback.
      if (r.error().kind != ErrorKind::corrupt) why = "GPU decode failed: " + r.error().message;
      return false;  // (decode_unit's CPU path clears what the fields before this one added to f.damage)
    }
    add_damage(f, dec.last_stats(), i, fields);
  }
  f.device_rgba = std::move(picture).value();
  return true;
}

DecodeSnapshot ReceivePipeline::decode() const {
  DecodeSnapshot s;
  s.decoded = decoded_.load(std::memory_order_relaxed);
  s.failed = failed_.load(std::memory_order_relaxed);
  s.skipped_incomplete = skipped_.load(std::memory_order_relaxed);
  s.dropped_queue_full = dropped_.load(std::memory_order_relaxed);
  s.dropped_late = dropped_late_.load(std::memory_order_relaxed);
  s.degraded = degraded_.load(std::memory_order_relaxed);
  s.codestream_damaged = codestream_damaged_.load(std::memory_order_relaxed);
  s.undisplayable = undisplayable_.load(std::memory_order_relaxed);
  s.degrade_level = level_.load(std::memory_order_relaxed);
  s.rejected_oversize = oversize_.load(std::memory_order_relaxed);
  s.out_of_memory = out_of_memory_.load(std::memory_order_relaxed);
  s.workers = default_workers(config_);
  s.threads = shares_scheduler(config_) ? decode_threads(config_) : s.workers;
  s.decode_ms_total = static_cast<double>(decode_us_total_.load(std::memory_order_relaxed)) / 1000.0;
  s.decode_ms_max = static_cast<double>(decode_us_max_.load(std::memory_order_relaxed)) / 1000.0;
  s.queue_frames = units_.capacity();
  s.decode_work_ms_total = static_cast<double>(work_us_total_.load(std::memory_order_relaxed)) / 1000.0;
  s.decode_cpu_ms_total = static_cast<double>(cpu_us_total_.load(std::memory_order_relaxed)) / 1000.0;
  s.display_on_device = on_device_.load(std::memory_order_relaxed);
  s.display_fallbacks = display_fallbacks_.load(std::memory_order_relaxed);
  s.tier1_on_gpu = tier1_gpu_.load(std::memory_order_relaxed);
  s.tier1_fallbacks = tier1_fallbacks_.load(std::memory_order_relaxed);
  s.gpu_fallbacks = gpu_fallbacks_.load(std::memory_order_relaxed);
  s.device_pool_exhausted = pool_exhausted_.load(std::memory_order_relaxed);
  s.device_display = pool_ != nullptr && device_display_enabled_.load(std::memory_order_relaxed);
  std::lock_guard lock(format_mutex_);
  s.width = width_;
  s.height = height_;
  s.format = format_;
  s.receive_to_decoded = latency_;
  return s;
}

}  // namespace j2k::pipeline
