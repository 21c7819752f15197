#include "ui/audio_output.hpp"

#include <QAudioDevice>
#include <QAudioFormat>
#include <QAudioSink>
#include <QIODevice>
#include <QMediaDevices>
#include <QMetaObject>
#include <QThread>
#include <QTimer>
#include <atomic>
#include <fmt/format.h>
#include <thread>
#include <vector>

#include "core/log.hpp"

namespace j2k::ui {

namespace {

using Clock = AudioOutput::Clock;

Clock::duration seconds(double s) { return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s)); }

/// Consumes the sound at its nominal rate, a little ahead of "playing" it: each sample is
/// heard at start + its position / rate, exactly (tests measure lip sync against this).
class NullOutput final : public AudioOutput {
 public:
  NullOutput(int rate, int channels, Pull pull) : rate_(rate), channels_(channels), pull_(std::move(pull)) {
    thread_ = std::thread([this] { run(); });
  }
  ~NullOutput() override {
    stop_ = true;
    thread_.join();
  }
  std::string describe() const override { return "null (sound discarded at its real pace)"; }
  bool audible() const override { return false; }
  int sample_rate() const override { return rate_; }
  double lead_ms() const override { return kAheadS * 1000; }
  double latency_ms() const override { return kAheadS * 1000; }

 private:
  static constexpr double kAheadS = 0.02;  // asks for sound 20 ms before it is "heard"
  void run() {
    const auto start = Clock::now() + seconds(kAheadS);
    const std::size_t chunk = static_cast<std::size_t>(rate_ / 200);  // 5 ms
    std::vector<std::int16_t> buffer(chunk * static_cast<std::size_t>(channels_));
    std::uint64_t written = 0;
    while (!stop_.load()) {
      const auto heard = start + seconds(static_cast<double>(written) / rate_);
      if (heard - Clock::now() > seconds(kAheadS)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        continue;
      }
      pull_(buffer.data(), chunk, heard);
      written += chunk;
    }
  }
  const int rate_, channels_;
  Pull pull_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

/// A QAudioSink in push mode on its own thread: every 5 ms it fills what the sink's buffer
/// has room for; those samples are heard after what the buffer still holds.
class QtOutput final : public AudioOutput {
 public:
  static constexpr double kBufferMs = 60;
  static Result<std::unique_ptr<AudioOutput>> open(const QAudioDevice& device, int rate, int channels, Pull pull) {
    QAudioFormat format;
    format.setSampleRate(rate);
    format.setChannelCount(channels);
    format.setSampleFormat(QAudioFormat::Int16);
    if (!device.isFormatSupported(format))
      return make_error(ErrorKind::unsupported, fmt::format("the audio device '{}' does not play {} Hz 16-bit {}-channel sound",
                                                            device.description().toStdString(), rate, channels));
    std::unique_ptr<QtOutput> out(new QtOutput(device, format, std::move(pull)));
    std::string error;
    QMetaObject::invokeMethod(out->context_, [&] { error = out->start(); }, Qt::BlockingQueuedConnection);
    if (!error.empty()) return make_error(ErrorKind::io, error);
    return std::unique_ptr<AudioOutput>(std::move(out));
  }
  ~QtOutput() override {
    QMetaObject::invokeMethod(context_, [this] {
      delete timer_;
      if (sink_) sink_->stop();
      delete sink_;
    }, Qt::BlockingQueuedConnection);
    thread_.quit();
    thread_.wait();
    delete context_;
  }
  std::string describe() const override { return description_; }
  int sample_rate() const override { return format_.sampleRate(); }
  double lead_ms() const override { return kBufferMs; }
  double latency_ms() const override { return latency_ms_.load(); }

 private:
  QtOutput(const QAudioDevice& device, const QAudioFormat& format, Pull pull)
      : device_(device), format_(format), pull_(std::move(pull)), description_(device.description().toStdString()) {
    thread_.setObjectName(QStringLiteral("audio output"));
    context_ = new QObject;
    context_->moveToThread(&thread_);
    thread_.start();
  }
  std::string start() {  // on the output's thread
    sink_ = new QAudioSink(device_, format_);
    sink_->setBufferSize(format_.bytesForDuration(static_cast<qint64>(kBufferMs * 1000)));
    io_ = sink_->start();
    if (!io_ || sink_->error() != QAudio::NoError) return fmt::format("the audio device '{}' did not start", description_);
    timer_ = new QTimer;
    timer_->setTimerType(Qt::PreciseTimer);
    QObject::connect(timer_, &QTimer::timeout, timer_, [this] { fill(); });
    timer_->start(5);
    return {};
  }
  void fill() {
    const qsizetype bytes_per_frame = format_.bytesPerFrame();
    const qsizetype free_frames = sink_->bytesFree() / bytes_per_frame;
    if (free_frames <= 0) return;
    // What the buffer holds plays first.
    const double queued_s = static_cast<double>(sink_->bufferSize() - sink_->bytesFree()) / format_.bytesForDuration(1000000);
    latency_ms_.store(queued_s * 1000);
    buffer_.resize(static_cast<std::size_t>(free_frames * format_.channelCount()));
    pull_(buffer_.data(), static_cast<std::size_t>(free_frames), Clock::now() + seconds(queued_s));
    io_->write(reinterpret_cast<const char*>(buffer_.data()), free_frames * bytes_per_frame);
  }

  QAudioDevice device_;
  QAudioFormat format_;
  Pull pull_;
  std::string description_;
  QThread thread_;
  QObject* context_ = nullptr;  // lives on thread_: the sink, its device and the timer are made there
  QAudioSink* sink_ = nullptr;
  QIODevice* io_ = nullptr;
  QTimer* timer_ = nullptr;
  std::vector<std::int16_t> buffer_;
  std::atomic<double> latency_ms_{0};
};

}  // namespace

Result<std::unique_ptr<AudioOutput>> AudioOutput::open(const std::string& device, int sample_rate, int channels, Pull pull) {
  if (sample_rate <= 0 || channels <= 0) return make_error(ErrorKind::unsupported, "no sound format to open an output for");
  if (device == "null") return std::unique_ptr<AudioOutput>(new NullOutput(sample_rate, channels, std::move(pull)));
  QAudioDevice chosen;
  if (device.empty()) {
    chosen = QMediaDevices::defaultAudioOutput();
  } else {
    for (const auto& d : QMediaDevices::audioOutputs())
      if (d.description().contains(QString::fromStdString(device), Qt::CaseInsensitive)) {
        chosen = d;
        break;
      }
    if (chosen.isNull()) return make_error(ErrorKind::io, fmt::format("no audio output named like '{}'", device));
  }
  if (chosen.isNull()) return make_error(ErrorKind::io, "no audio output device");
  return QtOutput::open(chosen, sample_rate, channels, std::move(pull));
}

}  // namespace j2k::ui
