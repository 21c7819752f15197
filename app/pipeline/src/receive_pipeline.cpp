#include "pipeline/receive_pipeline.hpp"

#include <fmt/format.h>

#include <cstdlib>

#include "core/log.hpp"
#include "gpu/cuda_decoder.hpp"
#include "gpu/device_picture.hpp"
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
  if (!format) return make_error(ErrorKind::unsupported, fmt::format("payload format '{}' is not mxf, rfc5371 or ts", config.url.format));
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
    if (auto st = p->open_protection_receivers(); !st) return st.error();
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
  }, depacketizer::SessionConfig{p->protection_.fec ? depacketizer::reorder_for_fec(config.reorder) : config.reorder, *format});
  p->protection_stream_ = std::make_unique<depacketizer::ProtectedStream>(*p->session_, p->protection_);
  return p;
}

Status ReceivePipeline::open_protection_receivers() {
  // ST 2022-1: fec=1 joins column FEC on port+2 and row FEC on port+4 (or fec_column= and
  // fec_row= name the ports). ST 2022-7: the second URL is the second path. Every socket feeds
  // the one packet queue, each packet stamped with its channel.
  const StreamUrl& url = config_.url;
  auto open_one = [&](const StreamUrl& u, int port, int channel, std::size_t pool) -> Status {
    if (port <= 0 || port > 65535) return make_error(ErrorKind::corrupt, fmt::format("port {} out of range", port));
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
  }
  return {};
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
  // The GPU display path: display pictures stay in a bounded pool of device buffers.
  if (workers > 0 && config_.make_rgba && config_.device_display && config_.backend == decoder::Backend::own &&
      config_.gpu != gpu::GpuMode::off && gpu::cuda_available()) {
    const int capacity = config_.device_pictures > 0 ? config_.device_pictures : workers + 6;
    if (auto pool = gpu::DevicePicturePool::create(capacity)) {
      pool_ = std::move(pool).value();
      logger("decoder")->info("display pictures stay on the GPU ({}; at most {} device pictures)",
                              gpu::cuda_describe(), capacity);
    } else {
      logger("decoder")->warn("GPU display path unavailable ({}): display pictures go through the CPU",
                              pool.error().message);
    }
  }
  for (int i = 0; i < workers; ++i) workers_.emplace_back([this] { decode_loop(); });
  depacketizer_thread_ = std::thread([this] { depacketize_loop(); });
  receiver_->start();
  for (auto& r : extra_receivers_) r->start();
}

void ReceivePipeline::stop(bool drain) {
  if (!running_.exchange(false)) return;
  receiver_->stop();
  for (auto& r : extra_receivers_) r->stop();
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
    protection_stream_->on_datagram((*packet)->channel, (*packet)->bytes(), (*packet)->received);
  }
  session_->flush();
}

void ReceivePipeline::decode_loop() {
  auto log = logger("decoder");
  std::unique_ptr<decoder::Decoder> dec;
  gpu::CudaDecoder* cuda = nullptr;  // the same object, when the GPU display path can use it
  if (pool_) {
    if (auto typed = gpu::make_cuda_decoder_typed({config_.gpu})) {
      cuda = typed->get();
      dec = std::move(typed).value();
    }
  }
  if (!dec) {
    auto made = config_.backend == decoder::Backend::own ? gpu::make_cuda_decoder({config_.gpu})
                                                        : decoder::make_decoder(config_.backend);
    if (!made) {
      log->error("{}", made.error().message);
      return;
    }
    dec = std::move(made).value();
  }
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
    PlanarImage shape;  // the geometry, when the picture went to device memory only
    if (!unit->problem.empty()) {
      f.error = unit->problem;
    } else if (unit->codestreams.empty() || unit->codestreams.size() > 2 ||
               (unit->codestreams.size() == 2 && unit->fields != 2)) {
      f.error = fmt::format("{} codestreams in one unit, not a frame or a field pair", unit->codestreams.size());
    } else if (std::string why; cuda && pool_ && device_display_enabled_.load(std::memory_order_relaxed) &&
                                cuda->gpu_active() && decode_on_device(*cuda, *unit, options, f, shape, why)) {
      f.decoded = true;
    } else {
      if (!why.empty()) {
        // The GPU display path failed for this frame: it takes the CPU path (counted).
        display_fallbacks_.fetch_add(1, std::memory_order_relaxed);
        if (!fallback_logged_.exchange(true))
          log->warn("frame {}: {}; it and later such frames take the CPU display path (counted)", f.index, why);
        else
          log->debug("frame {}: {}; CPU display path", f.index, why);
      }
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
      if (f.device_rgba) on_device_.fetch_add(1, std::memory_order_relaxed);
      const PlanarImage& geometry = f.image.empty() ? shape : f.image;
      std::lock_guard lock(format_mutex_);
      if (width_ != geometry.width || height_ != geometry.height) {
        width_ = geometry.width;
        height_ = geometry.height;
        format_ = geometry.describe();
        log->info("decoding {} with the {} backend{}", format_, decoder::to_string(config_.backend),
                  f.device_rgba ? ", display picture on the GPU" : "");
      }
    } else {
      failed_.fetch_add(1, std::memory_order_relaxed);
      if (error_log.allow()) log->warn("frame {} not decoded: {}", f.index, f.error);
    }
    if (config_.keep_codestreams) f.codestreams = std::move(unit->codestreams);
    deliver(std::move(f));
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
    auto sh = decoder::read_geometry(bytes);
    if (!sh) return false;
    shapes.push_back(std::move(sh).value());
  }
  const bool fields = streams.size() == 2;
  const std::size_t top = fields && !unit.first_field_is_top ? 1 : 0;  // the field with the frame's first line
  shape = shapes[top];
  if (fields) {
    const PlanarImage& t = shapes[top];
    const PlanarImage& b = shapes[1 - top];
    if (t.width != b.width || t.planes.size() != b.planes.size() || b.height > t.height || t.height - b.height > 1)
      return false;  // the CPU weave explains what is wrong
    shape.height = t.height + b.height;
    for (std::size_t c = 0; c < shape.planes.size(); ++c) shape.planes[c].height += b.planes[c].height;
  }
  const gpu::ColourInterpretation ci = colour_of(f.descriptor, shape);
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
      return false;
    }
  }
  f.device_rgba = std::move(picture).value();
  return true;
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
  s.display_on_device = on_device_.load(std::memory_order_relaxed);
  s.display_fallbacks = display_fallbacks_.load(std::memory_order_relaxed);
  s.device_pool_exhausted = pool_exhausted_.load(std::memory_order_relaxed);
  s.device_display = pool_ != nullptr && device_display_enabled_.load(std::memory_order_relaxed);
  std::lock_guard lock(format_mutex_);
  s.width = width_;
  s.height = height_;
  s.format = format_;
  return s;
}

}  // namespace j2k::pipeline
