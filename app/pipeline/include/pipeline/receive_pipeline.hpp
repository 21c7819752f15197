#pragma once
// The receive side wired together, shared by j2kprobe and j2kplay:
//
//   PacketSource ─packets─▶ depacketizer ─units─▶ decode workers ─results─▶ delivery ─▶ sink
//   (socket/pcap)  bounded    (RtpSession)  bounded  (decoder/)     bounded   (in order)
//
// Each arrow is a bounded queue. The receiver never blocks (a full queue drops the packet
// and counts it). Live, a frame is dropped (counted) only when it would be late: when it
// waited longer than the latency budget after it was due by its RTP timestamp, or when the
// unit queue overflows (the hard memory bound). Before that, the degrade controller decodes
// at a lower resolution so that the decoders keep up (scheduling.hpp). The sink runs on its
// own thread, never under a lock and never on the depacketizer thread: a sink that writes
// files delays neither packet handling nor decoding beyond the results queue.
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

#include "core/log.hpp"
#include "core/planar_image.hpp"
#include "core/work_pool.hpp"
#include "common/decoder_choice.hpp"
#include "core/url.hpp"
#include "decoder/decoder.hpp"
#include "gpu/colour.hpp"
#include "gpu/cuda.hpp"
#include "gpu/cuda_tier1.hpp"
#include "gpu/device_picture.hpp"
#include "depacketizer/protected_stream.hpp"
#include "depacketizer/rtp_session.hpp"
#include "depacketizer/source_guard.hpp"
#include "net/packet_source.hpp"
#include "pipeline/scheduling.hpp"

namespace j2k::gpu {
class CudaDecoder;
}

namespace j2k::net {
class PcapReplay;
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
  /// Decoded, but the decoder met damage in the codestream and decoded what it could read
  /// (decoder::describe_damage; "field 2: …" for a field): "" when the codestream was intact.
  std::string damage;
  /// Decoded, but no display picture could be made of it (with make_rgba: a sampling or
  /// component layout the display conversion does not take): why. "" otherwise.
  std::string display_error;
  PlanarImage image;
  /// Two fields woven into `image` (and the display pictures), a field period apart: the first
  /// in time holds the even lines when `first_field_is_top`, else the odd ones. False for a
  /// segmented frame (PsF, MXF frame layout 4): its halves are of one instant.
  bool interlaced = false;
  bool first_field_is_top = true;
  /// The codestream declares a digital cinema profile (Rsiz 3-7): its components are X'Y'Z'.
  bool digital_cinema = false;
  std::shared_ptr<const gpu::RgbaImage> rgba;  ///< display picture, when `make_rgba` (CPU path)
  /// Or the display picture in device memory (GPU path: `make_rgba` with a CUDA decoder);
  /// `image` is then empty. Dropping the last reference returns it to the pipeline's pool.
  std::shared_ptr<const gpu::DevicePicture> device_rgba;
  double decode_ms = 0;
  /// Identity of the frame's codestreams (length and sampled bytes): equal for identical
  /// frames, so a frozen source shows as repeated fingerprints (the freeze alarm).
  std::uint64_t fingerprint = 0;
  std::string time_code;              ///< "10:20:30:12" from the MXF system item or TR-01 tcod ("" if none)
  bool new_timeline = false;          ///< the first frame after a source restart or stream change
  int reduce = 0;                     ///< resolution levels skipped (degraded when > 0)
  /// Arrival of the unit's last packet, and from there to decoded (0 when not decoded).
  std::chrono::steady_clock::time_point received{};
  double latency_ms = 0;
};

enum class IncompletePolicy { drop, decode };

struct PipelineConfig {
  StreamUrl url;
  /// Which decoder the workers build (common/decoder_choice.hpp: the one factory).
  app::DecoderChoice decoder;
  /// SMPTE ST 2022-7: the second path of the same stream (packets merged by sequence number).
  std::optional<StreamUrl> url2;
  bool decode = true;              ///< false: receive and reassemble only (capacity tests)
  /// Frames decoded at once; 0: automatic (a quarter of the threads, at least 2, with the own
  /// and cuda backends; one per thread with OpenJPEG, which cannot share the scheduler).
  int decode_workers = 0;
  /// Threads that decode, all frames together: the run slots of the one scheduler
  /// (core/work_pool.hpp) that serves frame-level and in-frame parallelism; 0 = one per core.
  int decode_threads = 0;
  /// Frames waiting for a decoder: the hard memory bound (frames are dropped earlier, when
  /// they would be late). 0: 4 per worker, at least 16.
  std::size_t unit_queue = 0;
  std::size_t result_queue = 0;    ///< decoded frames waiting for the sink; 0: workers + 8
  /// Live (true): when decoders fall behind, the oldest waiting frame is dropped and counted.
  /// Analysis (false): the depacketizer waits for a decoder instead (every frame is decoded;
  /// if decoding is much slower than the stream, packets then back up to the socket).
  bool drop_when_behind = true;
  IncompletePolicy incomplete = IncompletePolicy::drop;
  /// The display pictures' transfer function, whatever the stream says (RFC 5371 carries none;
  /// TR-01's basic descriptor cannot say HLG). Unset: as the descriptor says (SDR without one).
  std::optional<TransferFunction> transfer;
  bool keep_codestreams = false;
  bool make_rgba = false;          ///< convert each decoded frame for display (on the decode worker)
  /// With make_rgba and a usable CUDA device (own backend, gpu on/auto): the display picture
  /// stays in device memory (DecodedFrame::device_rgba) instead of coming back to the host.
  bool device_display = true;
  /// Device pictures in existence at most (decoding, waiting, on their way to the screen);
  /// 0: decode workers + FramePresenter::kMostFrames (the playout buffer's most) + 6 (the
  /// window's one drawn, up to four GL is still reading, one on its way). Made only as needed.
  /// When all are held, a frame takes the CPU path (counted).
  int device_pictures = 0;
  int receive_buffer = 32 << 20;
  bool capture_timing = false;     ///< pcap input: replay at the capture's timing
  depacketizer::ReorderConfig reorder;
  /// Stop after this many frames (units) were handed on; 0 = no limit. Frames after the
  /// N-th are neither decoded nor counted. With a sound hook, the N-th frame's sound (which
  /// follows its picture in the content package) is still read before the limit is reached.
  std::uint64_t max_frames = 0;
  /// Live only (drop_when_behind): decode at a lower resolution when decoders fall behind.
  bool degrade = true;
  int max_degrade_level = 2;       ///< resolution levels that may be skipped at most
  /// How long after its due time (RTP timestamp) a frame may still start decoding; later it
  /// is dropped as late. 0: automatic (4 frame intervals, at least 100 ms, plus twice the
  /// current decode time).
  std::chrono::milliseconds latency_budget{0};
  /// A frame whose codestream is larger than the stream's picture descriptor by more than
  /// this factor in width or height (or has more than 4 components) is rejected unread.
  int max_descriptor_ratio = 2;

  // Seams (tests): where packets come from, how decoders are made, what time it is.
  using PacketSourceFactory = std::function<Result<std::unique_ptr<net::PacketSource>>(net::PacketQueue&)>;
  using DecoderFactory = std::function<Result<std::unique_ptr<decoder::Decoder>>()>;
  using NowFunction = std::function<std::chrono::steady_clock::time_point()>;
  PacketSourceFactory packet_source;  ///< empty: the socket or capture of `url`
  DecoderFactory decoder_factory;     ///< empty: `backend` / `gpu`
  NowFunction now;                    ///< empty: steady_clock::now
  /// Operator hooks, both called on the depacketizer thread and required not to block:
  /// every datagram as it is taken from the sockets, RTCP included and past the frame limit
  /// (the capture writer copies it), and
  /// every stream event (gaps, SSRC and descriptor changes; the event log).
  std::function<void(const net::Packet&)> on_datagram;
  std::function<void(const depacketizer::SessionEvent&)> on_stream_event;
  /// Sound hook, on the depacketizer thread, required not to block: each block of sound
  /// the stream carries (MXF sound elements, ST 302M), with the 90 kHz time of its first sample.
  depacketizer::AudioSink on_audio;
};

/// Totals of the decode side (the receive side is in StreamSnapshot / ReceiverCounters).
struct DecodeSnapshot {
  std::uint64_t decoded = 0;
  std::uint64_t failed = 0;
  std::uint64_t skipped_incomplete = 0;
  // Whole frames dropped because decoders were behind, in two disjoint counts (so that a
  // frame received is decoded, failed, skipped, or dropped by one of them):
  std::uint64_t dropped_queue_full = 0;  ///< the queue to the decoders overflowed
  std::uint64_t dropped_late = 0;         ///< it would have been shown late
  std::uint64_t dropped_behind() const noexcept { return dropped_queue_full + dropped_late; }
  std::uint64_t degraded = 0;             ///< decoded below full resolution
  /// Frames that arrived whole whose codestream the decoder found damaged (decoded what it
  /// could read): every packet came, so the damage was in what was sent.
  std::uint64_t codestream_damaged = 0;
  /// Decoded, but no display picture could be made of it (make_rgba): the window keeps the
  /// last picture, so without this count the stream looks healthy while the screen stands still.
  std::uint64_t undisplayable = 0;
  int degrade_level = 0;                  ///< resolution levels skipped now
  std::uint64_t rejected_oversize = 0;    ///< larger than the descriptor says (counted in failed)
  std::uint64_t out_of_memory = 0;        ///< allocation failed while decoding (counted in failed)
  int workers = 0;                        ///< frames decoded at once
  int threads = 0;                        ///< threads that decode (the scheduler's slots)
  double decode_work_ms_total = 0;        ///< thread time spent decoding (all threads), ms
  double decode_cpu_ms_total = 0;         ///< CPU time of it (not inflated by other programs), ms
  LatencyHistogram receive_to_decoded;    ///< last packet received → decoded, ms
  double decode_ms_total = 0;
  double decode_ms_max = 0;               ///< the longest one frame took (wall time): a stall shows here
  std::size_t queue_frames = 0;           ///< frames the queue to the decoders holds (the memory bound)
  std::uint64_t display_on_device = 0;    ///< frames whose display picture stayed on the GPU
  std::uint64_t display_fallbacks = 0;    ///< GPU path failed for a frame: it took the CPU path
  std::uint64_t device_pool_exhausted = 0;///< of those: every device picture was held
  bool device_display = false;            ///< the GPU display path is set up and enabled
  std::uint64_t tier1_on_gpu = 0;         ///< frames whose code-blocks were decoded on the GPU
  std::uint64_t tier1_fallbacks = 0;      ///< frames whose GPU tier-1 failed, decoded on the CPU (--tier1 auto; the GPU is tried again after a pause)
  std::uint64_t gpu_fallbacks = 0;        ///< times a decoder's GPU reconstruction failed and it went to the CPU (--gpu auto; tried again after a pause)
  int width = 0;
  int height = 0;
  std::string format;                     ///< "1280x720 4:2:2 10-bit"
};

/// Interleaves two field pictures into a frame: the top field's lines go to even rows.
Result<PlanarImage> weave_fields(const PlanarImage& first, const PlanarImage& second, bool first_is_top);
/// The same into `frame`, reusing its sample memory.
Status weave_fields_into(const PlanarImage& first, const PlanarImage& second, bool first_is_top, PlanarImage& frame);

/// How to show a decoded image, from the stream's descriptor (tolerating known writer quirks);
/// `digital_cinema` (the codestream declares it: syntax::declares_digital_cinema) outweighs the
/// descriptor: X'Y'Z'.
gpu::ColourInterpretation colour_of(const std::optional<depacketizer::PictureDescriptor>& descriptor,
                                    const PlanarImage& image, bool digital_cinema = false);

class ReceivePipeline {
 public:
  using Sink = std::function<void(DecodedFrame&&)>;

  /// Opens the socket (errors say what to check) and prepares the stages.
  static Result<std::unique_ptr<ReceivePipeline>> open(const PipelineConfig& config, Sink sink);
  ~ReceivePipeline();

  /// Makes every decoder (an error says why one cannot be made, e.g. no usable GPU for
  /// --backend cuda: nothing is started then) and starts the threads.
  [[nodiscard]] Status start();
  /// Stops every thread; pending frames are delivered first when `drain` is true. A frame
  /// the stop cuts short is neither delivered nor counted as incomplete.
  void stop(bool drain = true);
  /// True once `max_frames` frames were handed on (they may still be decoding) and, with a
  /// sound hook, the last one's sound was read (or a later frame, the stream's end or a
  /// silence of 200 ms showed that it has none).
  bool frame_limit_reached() const noexcept { return limit_reached_.load(); }

  std::uint16_t port() const noexcept;
  /// Every input together (thread-safe): the media datagrams of both ST 2022-7 paths, and
  /// what any socket (media, FEC, RTCP) or the capture dropped or cut.
  struct ReceiverTotals {
    std::uint64_t datagrams = 0;  ///< media, path 1 and path 2
    std::uint64_t bytes = 0;
    std::uint64_t dropped_queue_full = 0, dropped_pool_empty = 0, truncated = 0, socket_errors = 0;
    std::uint64_t dropped_socket_buffer = 0;  ///< the kernel's: a socket's buffer was full (SO_RXQ_OVFL)
    /// A capture's frames that held no usable datagram (zero for sockets).
    std::uint64_t capture_fragments = 0, capture_not_udp = 0, capture_cut = 0, capture_gaps_shortened = 0;
    std::uint64_t capture_reassembled = 0, capture_fragments_lost = 0, capture_cut_matching = 0, capture_ipv6 = 0,
                  capture_read_errors = 0, capture_malformed = 0;
  };
  ReceiverTotals receiver_counters() const noexcept;
  depacketizer::StreamSnapshot stream() const;
  /// 2022-7 paths and 2022-1 FEC (thread-safe).
  depacketizer::ProtectionSnapshot protection() const { return protection_stream_->snapshot(); }
  /// Packets of an SSRC from a second source while its first one sent (dropped), and second
  /// sources that took an SSRC over once the first went quiet (RFC 3550 8.2; thread-safe).
  depacketizer::SourceGuardCounters source_guard() const noexcept {
    return {ssrc_collisions_.load(std::memory_order_relaxed), source_takeovers_.load(std::memory_order_relaxed)};
  }
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
  /// A time without packets of the followed stream between two of them (other datagrams on
  /// the port do not end it), of at least kSilenceRecorded, on the packets' receive clock
  /// (a capture's own time when replaying one).
  struct Silence {
    std::chrono::steady_clock::time_point seen{};  ///< when the packet that ended it was read (this clock)
    std::chrono::steady_clock::duration length{};  ///< between the two packets' receive times
  };
  static constexpr auto kSilenceRecorded = std::chrono::milliseconds(100);
  /// The last silences (at most kSilencesKept), oldest first: the alarms see an outage that began and
  /// ended between two of their once-a-second looks. Any thread.
  std::vector<Silence> recent_silences() const;

 private:
  /// A unit on its way to a decoder: `seq` orders delivery (consecutive over everything
  /// handed on), `due` is when the stream's clock says it should have arrived.
  struct Job {
    depacketizer::CodestreamUnit unit;
    std::uint64_t seq = 0;
    std::chrono::steady_clock::time_point due{};
  };
  struct Finished {
    std::uint64_t seq = 0;
    DecodedFrame frame;
  };
  struct Worker {
    std::unique_ptr<decoder::Decoder> decoder;
    gpu::CudaDecoder* cuda = nullptr;  // the same object, when the GPU display path can use it
    PlanarImage fields[2];             // a field pair's pictures, reused frame after frame
    bool warm = false;                 // decoded a frame already (the first one pays allocations)
    std::uint64_t tier1_fallbacks = 0; // its decoder's, as last seen
    bool tier1_off = false;            // its GPU tier-1 failed and has not worked since (logged once)
    bool gpu_off = false;              // its GPU reconstruction failed and is not back yet (logged once)
    std::thread thread;
  };

  ReceivePipeline(const PipelineConfig& config, Sink sink);
  std::chrono::steady_clock::time_point now() const { return config_.now ? config_.now() : std::chrono::steady_clock::now(); }
  Result<std::unique_ptr<decoder::Decoder>> make_decoder(gpu::CudaDecoder*& cuda);
  void on_unit(depacketizer::CodestreamUnit&& unit);  // depacketizer thread
  void on_audio(depacketizer::AudioBlock&& block);    // depacketizer thread
  void end_sound_tail();
  /// False: the packet's SSRC comes from another source at the same time (dropped, counted).
  bool admit_source(const net::Packet& packet);
  /// The session's reorder window for the protection in use (FEC, two paths).
  depacketizer::ReorderConfig session_reorder(depacketizer::ReorderConfig base) const;                              // depacketizer thread
  static constexpr std::chrono::milliseconds kSoundTailWait{200};
  Status open_protection_receivers();
  void depacketize_loop();
  void record_silence(std::chrono::steady_clock::duration length);
  void decode_loop(Worker& worker);
  void deliver_loop();
  void decode_unit(Worker& worker, Job& job, DecodedFrame& f, PlanarImage& shape);
  /// colour_of, then what the codestream declares (digital cinema) and --transfer.
  gpu::ColourInterpretation display_colour(const DecodedFrame& f, const PlanarImage& image) const;
  std::string check_against_descriptor(const depacketizer::CodestreamUnit& unit) const;
  void hand_on(std::uint64_t seq, DecodedFrame&& frame);  // any producer thread
  std::chrono::steady_clock::duration budget() const;     // under sched_mutex_
  PlanarImage take_spare();                  // a decoded picture's memory, for reuse
  void give_back(PlanarImage&& image);
  /// The GPU display path for one unit; false (with `fallback_reason`) when the frame must
  /// take the CPU path instead.
  bool decode_on_device(gpu::CudaDecoder& dec, const depacketizer::CodestreamUnit& unit,
                        const decoder::DecodeOptions& options, DecodedFrame& f, PlanarImage& shape,
                        std::string& fallback_reason);

  PipelineConfig config_;
  Sink sink_;
  net::PacketQueue packets_;
  BoundedQueue<Job> units_;
  BoundedQueue<Finished> results_;
  std::unique_ptr<net::PacketSource> receiver_;
  const net::PcapReplay* replay_ = nullptr;  // receiver_, when it replays a capture (its own counts)
  std::unique_ptr<depacketizer::RtpSession> session_;
  // RTCP of the sender (RTP port + 1): its own small socket and queue, read on the
  // depacketizer thread when no data packet is waiting. Absent for captures.
  net::PacketQueue control_packets_{64};
  std::unique_ptr<net::PacketSource> control_receiver_;
  depacketizer::ProtectionConfig protection_;
  std::unique_ptr<depacketizer::ProtectedStream> protection_stream_;
  std::vector<std::unique_ptr<net::PacketSource>> extra_receivers_;  // 2022-7 second path, 2022-1 FEC
  std::vector<int> extra_channels_;                                  // each one's channel
  RateLimiter truncated_log_;                                        // depacketizer thread
  depacketizer::SourceGuard source_guard_;                           // depacketizer thread
  RateLimiter collision_log_;                                        // depacketizer thread
  std::atomic<std::uint64_t> ssrc_collisions_{0}, source_takeovers_{0};
  std::thread depacketizer_thread_;
  std::thread delivery_thread_;
  std::vector<std::unique_ptr<Worker>> workers_;
  // The one scheduler of decoding (own and cuda backends): every worker's frame runs as a task
  // on it, and the decoders' in-frame loops on its threads. Made in start(), before the workers.
  std::unique_ptr<WorkPool> work_pool_;
  std::atomic<bool> running_{false};
  std::atomic<bool> drain_{true};
  std::atomic<std::int64_t> first_packet_ns_{0};
  static constexpr std::size_t kSilencesKept = 64;
  mutable std::mutex silences_mutex_;  // guards silences_ (written by the depacketizer thread)
  std::vector<Silence> silences_;      // a ring of the last kSilencesKept
  std::size_t silences_next_ = 0;      // the slot the next one takes

  // Depacketizer thread only.
  std::uint64_t next_seq_ = 0;
  std::uint64_t handed_on_ = 0;
  // After the frame limit's last unit, until its sound came (or cannot come any more): the
  // packets are still read, but only that unit's sound (its RTP timestamp) is handed on.
  std::optional<std::uint32_t> sound_tail_;
  bool stopping_flush_ = false;  // the final flush of a stop: incomplete units were cut by it
  std::chrono::steady_clock::time_point last_packet_{};
  std::optional<std::chrono::steady_clock::time_point> last_stream_packet_;  // the followed stream's (silences)
  StreamClock stream_clock_;
  std::atomic<bool> limit_reached_{false};
  // The stream's datagrams and bytes when the frame limit was reached: what is read after it
  // (a fast replay reads on, a looped one pass after pass, until the stop) is not the stream's.
  std::atomic<std::uint64_t> datagrams_at_limit_{0}, bytes_at_limit_{0};
  std::uint64_t taken_datagrams_ = 0, taken_bytes_ = 0;  // depacketizer thread: media datagrams taken from the queue
  void reach_limit();  // depacketizer thread
  // Units the session counted that are not frames of the stream as received: cut short by
  // the stop, or after the frame limit. Subtracted from the session's counts.
  std::atomic<std::uint64_t> uncounted_complete_{0}, uncounted_incomplete_{0};

  // Decode totals (workers write, anyone reads).
  std::atomic<std::uint64_t> decoded_{0}, failed_{0}, skipped_{0}, dropped_{0}, dropped_late_{0};
  std::atomic<std::uint64_t> degraded_{0}, oversize_{0}, out_of_memory_{0}, undisplayable_{0};
  std::atomic<std::uint64_t> codestream_damaged_{0};  // whole frames whose codestream had damage
  std::atomic<std::int64_t> decode_us_total_{0}, decode_us_max_{0}, work_us_total_{0}, cpu_us_total_{0};
  std::atomic<std::uint64_t> on_device_{0}, display_fallbacks_{0}, pool_exhausted_{0};
  std::atomic<std::uint64_t> tier1_gpu_{0};
  std::atomic<std::uint64_t> tier1_fallbacks_{0};
  std::atomic<std::uint64_t> gpu_fallbacks_{0};
  std::shared_ptr<gpu::DevicePicturePool> pool_;  // set in start() when the GPU display path is possible
  std::atomic<bool> device_display_enabled_{true};
  std::atomic<bool> fallback_logged_{false};
  mutable std::mutex format_mutex_;  // guards width_, height_, format_, latency_
  int width_ = 0, height_ = 0;
  std::string format_;
  LatencyHistogram latency_;

  // Real-time decisions, shared by the workers (and the depacketizer's interval updates).
  mutable std::mutex sched_mutex_;  // guards degrade_, interval_, decode_wall_ms_
  DegradeController degrade_;
  std::chrono::steady_clock::duration interval_{};
  double decode_wall_ms_ = 0;       // moving average of a frame's decode time (wall), for the budget
  std::atomic<int> level_{0};

  std::mutex spare_mutex_;  // guards spare_
  std::vector<PlanarImage> spare_;

  // In-order delivery (delivery thread only): frames finish out of order across workers.
  std::uint64_t next_delivery_ = 0;
  std::map<std::uint64_t, DecodedFrame> waiting_;
};

}  // namespace j2k::pipeline
