#pragma once
// The receive side wired together, shared by j2kprobe and j2kplay:
//
//   UdpReceiver thread ─packets─▶ depacketizer thread ─units─▶ decode workers ─▶ in-order sink
//        (net/)          bounded      (RtpSession)      bounded   (decoder/)
//
// Each arrow is a bounded queue. The receiver never blocks (a full queue drops the packet
// and counts it); the unit queue drops the oldest whole frame when decoding falls behind.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/planar_image.hpp"
#include "core/url.hpp"
#include "decoder/decoder.hpp"
#include "gpu/colour.hpp"
#include "gpu/cuda.hpp"
#include "gpu/device_picture.hpp"
#include "depacketizer/protected_stream.hpp"
#include "depacketizer/rtp_session.hpp"
#include "net/packet_source.hpp"

namespace j2k::gpu {
class CudaDecoder;
}

namespace j2k::pipeline {

/// One access unit after decoding, handed to the sink in arrival order.
struct DecodedFrame {
  std::uint64_t index = 0;            ///< unit number from the depacketizer
  std::uint32_t rtp_timestamp = 0;
  bool complete = true;
  std::vector<std::vector<std::uint8_t>> codestreams;  ///< kept only when `keep_codestreams`
  std::optional<depacketizer::PictureDescriptor> descriptor;
  bool decoded = false;
  std::string error;                  ///< why decoding failed or was skipped
  PlanarImage image;
  std::shared_ptr<const gpu::RgbaImage> rgba;  ///< display picture, when `make_rgba` (CPU path)
  /// Or the display picture in device memory (GPU path: `make_rgba` with a CUDA decoder);
  /// `image` is then empty. Dropping the last reference returns it to the pipeline's pool.
  std::shared_ptr<const gpu::DevicePicture> device_rgba;
  double decode_ms = 0;
};

enum class IncompletePolicy { drop, decode };

struct PipelineConfig {
  StreamUrl url;
  /// SMPTE ST 2022-7: the second path of the same stream (packets merged by sequence number).
  std::optional<StreamUrl> url2;
  decoder::Backend backend = decoder::Backend::own;
  /// For the own decoder: reconstruction on the GPU (on), on the CPU (off), or on the GPU
  /// when one is usable (automatic). OpenJPEG always runs on the CPU.
  gpu::GpuMode gpu = gpu::GpuMode::automatic;
  bool decode = true;              ///< false: receive and reassemble only (capacity tests)
  int decode_workers = 0;          ///< frames decoded in parallel; 0 = hardware threads
  int threads_per_decode = 1;      ///< threads inside one decode
  std::size_t unit_queue = 8;      ///< frames waiting for a decoder
  /// Live (true): when decoders fall behind, the oldest waiting frame is dropped and counted.
  /// Analysis (false): the depacketizer waits for a decoder instead (every frame is decoded;
  /// if decoding is much slower than the stream, packets then back up to the socket).
  bool drop_when_behind = true;
  IncompletePolicy incomplete = IncompletePolicy::drop;
  bool keep_codestreams = false;
  bool make_rgba = false;          ///< convert each decoded frame for display (on the decode worker)
  /// With make_rgba and a usable CUDA device (own backend, gpu on/auto): the display picture
  /// stays in device memory (DecodedFrame::device_rgba) instead of coming back to the host.
  bool device_display = true;
  /// Device pictures in existence at most (decoding, waiting, on their way to the screen);
  /// 0: decode workers + 6 (the window holds one waiting and up to four GL is still reading).
  /// When all are held, a frame takes the CPU path (counted).
  int device_pictures = 0;
  int receive_buffer = 32 << 20;
  bool capture_timing = false;     ///< pcap input: replay at the capture's timing
  depacketizer::ReorderConfig reorder;
};

/// Totals of the decode side (the receive side is in StreamSnapshot / ReceiverCounters).
struct DecodeSnapshot {
  std::uint64_t decoded = 0;
  std::uint64_t failed = 0;
  std::uint64_t skipped_incomplete = 0;
  std::uint64_t dropped_queue_full = 0;  ///< whole frames dropped because decoders were behind
  double decode_ms_total = 0;
  std::uint64_t display_on_device = 0;    ///< frames whose display picture stayed on the GPU
  std::uint64_t display_fallbacks = 0;    ///< GPU path failed for a frame: it took the CPU path
  std::uint64_t device_pool_exhausted = 0;///< of those: every device picture was held
  bool device_display = false;            ///< the GPU display path is set up and enabled
  int width = 0;
  int height = 0;
  std::string format;                     ///< "1280x720 4:2:2 10-bit"
};

/// Interleaves two field pictures into a frame: the top field's lines go to even rows.
Result<PlanarImage> weave_fields(const PlanarImage& first, const PlanarImage& second, bool first_is_top);

/// How to show a decoded image, from the stream's descriptor (tolerating known writer quirks).
gpu::ColourInterpretation colour_of(const std::optional<depacketizer::PictureDescriptor>& descriptor,
                                    const PlanarImage& image);

class ReceivePipeline {
 public:
  using Sink = std::function<void(DecodedFrame&&)>;

  /// Opens the socket (errors say what to check) and prepares the stages.
  static Result<std::unique_ptr<ReceivePipeline>> open(const PipelineConfig& config, Sink sink);
  ~ReceivePipeline();

  void start();
  /// Stops every thread; pending frames are delivered first when `drain` is true.
  void stop(bool drain = true);

  std::uint16_t port() const noexcept;
  net::ReceiverCounters const& receiver_counters() const noexcept;
  depacketizer::StreamSnapshot stream() const { return session_->snapshot(); }
  /// 2022-7 paths and 2022-1 FEC (thread-safe).
  depacketizer::ProtectionSnapshot protection() const { return protection_stream_->snapshot(); }
  /// The MPEG-2 TS layer when the stream is TS (thread-safe).
  std::optional<depacketizer::TsSnapshot> ts() const { return session_->ts_snapshot(); }
  const std::string& transport() const noexcept { return config_.url.format; }
  DecodeSnapshot decode() const;
  /// True when a finite input (a capture file) has been read completely.
  bool input_finished() const noexcept { return receiver_->finished(); }
  /// Turns the GPU display path off (e.g. the window cannot take device pictures): later
  /// frames take the CPU path. Thread-safe.
  void set_device_display(bool enabled) noexcept { device_display_enabled_.store(enabled); }
  /// Time since the first packet arrived (nullopt before).
  std::optional<std::chrono::steady_clock::time_point> first_packet_time() const;

 private:
  ReceivePipeline(const PipelineConfig& config, Sink sink);
  Status open_protection_receivers();
  void depacketize_loop();
  void decode_loop();
  void deliver(DecodedFrame&& frame);
  /// The GPU display path for one unit; false (with `fallback_reason`) when the frame must
  /// take the CPU path instead.
  bool decode_on_device(gpu::CudaDecoder& dec, const depacketizer::CodestreamUnit& unit,
                        const decoder::DecodeOptions& options, DecodedFrame& f, PlanarImage& shape,
                        std::string& fallback_reason);

  PipelineConfig config_;
  Sink sink_;
  net::PacketQueue packets_;
  BoundedQueue<depacketizer::CodestreamUnit> units_;
  std::unique_ptr<net::PacketSource> receiver_;
  std::unique_ptr<depacketizer::RtpSession> session_;
  depacketizer::ProtectionConfig protection_;
  std::unique_ptr<depacketizer::ProtectedStream> protection_stream_;
  std::vector<std::unique_ptr<net::PacketSource>> extra_receivers_;  // 2022-7 second path, 2022-1 FEC
  std::thread depacketizer_thread_;
  std::vector<std::thread> workers_;
  std::atomic<bool> running_{false};
  std::atomic<std::int64_t> first_packet_ns_{0};

  // Decode totals (workers write, anyone reads).
  std::atomic<std::uint64_t> decoded_{0}, failed_{0}, skipped_{0}, dropped_{0};
  std::atomic<std::int64_t> decode_us_total_{0};
  std::atomic<std::uint64_t> on_device_{0}, display_fallbacks_{0}, pool_exhausted_{0};
  std::shared_ptr<gpu::DevicePicturePool> pool_;  // set in start() when the GPU display path is possible
  std::atomic<bool> device_display_enabled_{true};
  std::atomic<bool> fallback_logged_{false};
  mutable std::mutex format_mutex_;  // guards width_, height_, format_
  int width_ = 0, height_ = 0;
  std::string format_;

  // In-order delivery: frames finish out of order across workers.
  std::mutex order_mutex_;  // guards next_index_, waiting_, and serialises sink_ calls
  std::uint64_t next_index_ = 0;
  std::map<std::uint64_t, DecodedFrame> waiting_;
};

}  // namespace j2k::pipeline
