#include "pipeline/receive_pipeline.hpp"

#include <fmt/format.h>

#include "core/log.hpp"
#include "gpu/cuda_decoder.hpp"
#include "net/pcap_replay.hpp"
#include "net/udp_receiver.hpp"

namespace j2k::pipeline {

using Clock = std::chrono::steady_clock;

Result<PlanarImage> weave_fields(const PlanarImage& first, const PlanarImage& second, bool first_is_top) {
  if (first.planes.size() != second.planes.size() || first.width != second.width)
    return make_error(ErrorKind::corrupt, "the two fields differ in size or components");
  const PlanarImage& top = first_is_top ? first : second;
  const PlanarImage& bottom = first_is_top ? second : first;
  PlanarImage frame = top;
  frame.height = top.height + bottom.height;
  for (std::size_t c = 0; c < frame.planes.size(); ++c) {
    const Plane& t = top.planes[c];
    const Plane& b = bottom.planes[c];
    if (t.width != b.width || b.height > t.height || t.height - b.height > 1)
      return make_error(ErrorKind::corrupt, fmt::format("fields differ in component {} geometry", c));
    Plane& p = frame.planes[c];
    p.height = t.height + b.height;
    p.samples.resize(static_cast<std::size_t>(p.width) * p.height);
    // Top field on even lines, bottom field on odd lines.
    for (int y = 0; y < p.height; ++y) {
      const Plane& src = (y % 2 == 0) ? t : b;
      std::copy_n(&src.samples[static_cast<std::size_t>(y / 2) * src.width], p.width,
                  &p.samples[static_cast<std::size_t>(y) * p.width]);
    }
  }
  return frame;
}

gpu::ColourInterpretation colour_of(const std::optional<depacketizer::PictureDescriptor>& descriptor,
                                    const PlanarImage& image) {
  gpu::ColourInterpretation ci;
  if (!descriptor) return ci;
  ci.coding = descriptor->coding;
  ci.full_range = descriptor->full_range();
  // GStreamer's mxfmux writes an RGBA descriptor for YCbCr: subsampled chroma cannot be RGB.
  if (descriptor->rgba && subsampling_name(image) != "4:4:4") {
    ci.coding = ColourCoding::unknown;
    ci.full_range = false;
  }
  return ci;
}

ReceivePipeline::ReceivePipeline(const PipelineConfig& config, Sink sink)
    : config_(config), sink_(std::move(sink)), packets_(16384), units_(std::max<std::size_t>(1, config.unit_queue)) {}

ReceivePipeline::~ReceivePipeline() { stop(false); }

Result<std::unique_ptr<ReceivePipeline>> ReceivePipeline::open(const PipelineConfig& config, Sink sink) {
  if (config.url.scheme == StreamUrl::Scheme::demo)
    return make_error(ErrorKind::unsupported, "demo:// is played by j2kplay --demo");
  auto format = depacketizer::parse_payload_format(config.url.format);
  if (!format) return make_error(ErrorKind::unsupported, fmt::format("payload format '{}' is not mxf or rfc5371", config.url.format));
  PipelineConfig effective = config;
  if (config.url.scheme == StreamUrl::Scheme::pcap) {
    // A file can wait for the decoder: decode every frame rather than drop.
    effective.drop_when_behind = false;
  }
  std::unique_ptr<ReceivePipeline> p(new ReceivePipeline(effective, std::move(sink)));
  if (config.url.scheme == StreamUrl::Scheme::pcap) {
    net::PcapConfig pc;
    pc.file = config.url.host;
    pc.port = config.url.port;
    if (auto it = config.url.query.find("dst"); it != config.url.query.end()) pc.destination = it->second;
    pc.capture_timing = config.capture_timing ||
                        (config.url.query.count("timing") && config.url.query.at("timing") == "capture");
    auto replay = net::PcapReplay::open(pc, p->packets_);
    if (!replay) return replay.error();
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
    p->receiver_ = std::move(rx).value();
  }
  p->session_ = std::make_unique<depacketizer::RtpSession>([raw = p.get()](depacketizer::CodestreamUnit&& unit) {
    // On the depacketizer thread: hand the unit to the decoders, or account for it now.
    if (!raw->config_.decode || (!unit.complete && raw->config_.incomplete == IncompletePolicy::drop)) {
      DecodedFrame f;
      f.index = unit.index;
      f.rtp_timestamp = unit.rtp_timestamp;
      f.complete = unit.complete;
      f.descriptor = unit.descriptor;
      f.error = unit.complete ? "decode off" : "incomplete (dropped by policy)";
      if (!unit.complete && raw->config_.decode) raw->skipped_.fetch_add(1, std::memory_order_relaxed);
      if (raw->config_.keep_codestreams) f.codestreams = std::move(unit.codestreams);
      raw->deliver(std::move(f));
      return;
    }
    if (!raw->config_.drop_when_behind) {
      raw->units_.push_wait(std::move(unit));
      return;
    }
    if (auto evicted = raw->units_.push_drop_oldest(std::move(unit))) {
      raw->dropped_.fetch_add(1, std::memory_order_relaxed);
      DecodedFrame f;
      f.index = evicted->index;
      f.rtp_timestamp = evicted->rtp_timestamp;
      f.complete = evicted->complete;
      f.error = "dropped: decoder behind";
      raw->deliver(std::move(f));
    }
  }, depacketizer::SessionConfig{config.reorder, *format});
  return p;
}

std::uint16_t ReceivePipeline::port() const noexcept { return receiver_->port(); }
const net::ReceiverCounters& ReceivePipeline::receiver_counters() const noexcept { return receiver_->counters(); }

std::optional<Clock::time_point> ReceivePipeline::first_packet_time() const {
  const auto ns = first_packet_ns_.load();
  if (ns == 0) return std::nullopt;
  return Clock::time_point(Clock::duration(ns));
}

void ReceivePipeline::start() {
  if (running_.exchange(true)) return;
  int workers = config_.decode_workers > 0 ? config_.decode_workers
                                           : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (!config_.decode) workers = 0;
  for (int i = 0; i < workers; ++i) workers_.emplace_back([this] { decode_loop(); });
  depacketizer_thread_ = std::thread([this] { depacketize_loop(); });
  receiver_->start();
}

void ReceivePipeline::stop(bool drain) {
  if (!running_.exchange(false)) return;
  receiver_->stop();
  packets_.close();
  if (depacketizer_thread_.joinable()) depacketizer_thread_.join();
  if (!drain) {
    while (units_.try_pop()) {}
  }
  units_.close();
  for (auto& w : workers_) w.join();
  workers_.clear();
}

void ReceivePipeline::depacketize_loop() {
  for (;;) {
    auto packet = packets_.pop_for(std::chrono::milliseconds(2));
    if (!packet) {
      if (packets_.closed() && packets_.size() == 0) break;
      session_->tick(Clock::now());  // release packets whose gap will not fill
      continue;
    }
    if (first_packet_ns_.load(std::memory_order_relaxed) == 0)
      first_packet_ns_.store((*packet)->received.time_since_epoch().count());
    session_->on_datagram((*packet)->bytes(), (*packet)->received);
  }
  session_->flush();
}

void ReceivePipeline::decode_loop() {
  auto log = logger("decoder");
  auto made = config_.backend == decoder::Backend::own ? gpu::make_cuda_decoder({config_.gpu})
                                                      : decoder::make_decoder(config_.backend);
  if (!made) {
    log->error("{}", made.error().message);
    return;
  }
  std::unique_ptr<decoder::Decoder> dec = std::move(made).value();
  decoder::DecodeOptions options;
  options.threads = config_.threads_per_decode;
  RateLimiter error_log;
  for (;;) {
    auto unit = units_.pop_for(std::chrono::milliseconds(200));
    if (!unit) {
      if (units_.closed()) break;  // closed and drained
      continue;
    }
    DecodedFrame f;
    f.index = unit->index;
    f.rtp_timestamp = unit->rtp_timestamp;
    f.complete = unit->complete;
    f.descriptor = unit->descriptor;
    const auto t0 = Clock::now();
    if (!unit->problem.empty()) {
      f.error = unit->problem;
    } else if (unit->codestreams.empty() || unit->codestreams.size() > 2 ||
               (unit->codestreams.size() == 2 && unit->fields != 2)) {
      f.error = fmt::format("{} codestreams in one unit, not a frame or a field pair", unit->codestreams.size());
    } else {
      // A frame, or two fields decoded one after the other and woven into a frame.
      std::vector<PlanarImage> pictures;
      for (const auto& bytes : unit->codestreams) {
        auto cs = decoder::locate_codestream(bytes);
        if (!cs) { f.error = cs.error().message; break; }
        auto img = dec->decode(*cs, options);
        if (!img) { f.error = img.error().message; break; }
        pictures.push_back(std::move(img).value());
      }
      if (f.error.empty() && pictures.size() == 2) {
        auto woven = weave_fields(pictures[0], pictures[1], unit->first_field_is_top);
        if (woven) f.image = std::move(woven).value();
        else f.error = woven.error().message;
      } else if (f.error.empty()) {
        f.image = std::move(pictures[0]);
      }
      f.decoded = f.error.empty();
    }
    if (f.decoded && config_.make_rgba) {
      auto rgba = std::make_shared<gpu::RgbaImage>();
      const gpu::ColourInterpretation ci = colour_of(f.descriptor, f.image);
      if (auto st = gpu::to_rgba8(f.image, ci, *rgba); st) f.rgba = std::move(rgba);
      else if (error_log.allow()) log->warn("frame {} cannot be displayed: {}", f.index, st.error().message);
    }
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0).count();
    f.decode_ms = static_cast<double>(us) / 1000.0;
    if (f.decoded) {
      decoded_.fetch_add(1, std::memory_order_relaxed);
      decode_us_total_.fetch_add(us, std::memory_order_relaxed);
      std::lock_guard lock(format_mutex_);
      if (width_ != f.image.width || height_ != f.image.height) {
        width_ = f.image.width;
        height_ = f.image.height;
        format_ = f.image.describe();
        log->info("decoding {} with the {} backend", format_, decoder::to_string(config_.backend));
      }
    } else {
      failed_.fetch_add(1, std::memory_order_relaxed);
      if (error_log.allow()) log->warn("frame {} not decoded: {}", f.index, f.error);
    }
    if (config_.keep_codestreams) f.codestreams = std::move(unit->codestreams);
    deliver(std::move(f));
  }
}

void ReceivePipeline::deliver(DecodedFrame&& frame) {
  // Units are numbered in order without gaps; hold early ones until their predecessors are in.
  std::lock_guard lock(order_mutex_);
  if (frame.index != next_index_) {
    waiting_.emplace(frame.index, std::move(frame));
    return;
  }
  sink_(std::move(frame));
  ++next_index_;
  for (auto it = waiting_.find(next_index_); it != waiting_.end(); it = waiting_.find(next_index_)) {
    sink_(std::move(it->second));
    waiting_.erase(it);
    ++next_index_;
  }
}

DecodeSnapshot ReceivePipeline::decode() const {
  DecodeSnapshot s;
  s.decoded = decoded_.load(std::memory_order_relaxed);
  s.failed = failed_.load(std::memory_order_relaxed);
  s.skipped_incomplete = skipped_.load(std::memory_order_relaxed);
  s.dropped_queue_full = dropped_.load(std::memory_order_relaxed);
  s.decode_ms_total = static_cast<double>(decode_us_total_.load(std::memory_order_relaxed)) / 1000.0;
  std::lock_guard lock(format_mutex_);
  s.width = width_;
  s.height = height_;
  s.format = format_;
  return s;
}

}  // namespace j2k::pipeline
