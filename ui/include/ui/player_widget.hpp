#pragma once
// The video surface: an OpenGL widget (GL loaded with GLEW inside Qt's context) that
// shows the latest picture, letterboxed to keep its aspect ratio, with an optional
// statistics overlay. Pictures arrive from any thread through `present` (host memory) or
// `present_device` (device memory, the GPU path); only the GUI thread touches GL.
//
// GPU path (gpu::CudaGlPresenter): the texture is updated from the device picture with no
// trip through host memory: glTexSubImage2D from the picture's own memory imported into GL
// (EXT_memory_object_fd, no per-frame map), or, where GL cannot import it, from a PBO that
// is registered with CUDA once per size (map, device->PBO copy, unmap). If that
// fails (no CUDA-GL interop on this GL, say), the picture is downloaded and shown through
// the CPU path, the failure is logged once and counted, and device_display_failed() turns
// true so that the caller can switch the decoders back to host pictures.
#include <QOpenGLWidget>
#include <QString>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>

#include "gpu/colour.hpp"
#include "gpu/device_picture.hpp"
#include "ui/deinterlace.hpp"
#include "ui/monitor_view.hpp"

class QWindow;

namespace j2k::ui {

/// What the window measured about showing pictures (GUI thread figures, read anywhere).
struct DisplayStats {
  std::uint64_t frames_shown = 0;
  /// Time from the arrival of a frame's last packet to the swap that showed it, over the
  /// last (up to) 1000 frames shown; 0 when no frame carried its arrival time.
  double receive_to_swap_p50_ms = 0, receive_to_swap_p99_ms = 0;
  std::uint64_t latency_samples = 0;
  /// GPU time of the texture update plus the draw (GL timer queries), median of the last
  /// (up to) 1000 frames; 0 where the GL has no timer queries.
  double gpu_update_draw_ms = 0;
};

/// A picture chosen for one refresh (paced presentation).
struct PacedPicture {
  std::shared_ptr<const gpu::RgbaImage> host;
  std::shared_ptr<const gpu::DevicePicture> device;  ///< at most one of the two is set
  std::optional<std::chrono::steady_clock::time_point> received;  ///< arrival of its last packet
  /// The frame's number: a picture whose number is the one on screen is another field of that
  /// frame (nothing is uploaded again). Unset: always a new picture.
  std::optional<std::uint64_t> frame;
  /// One field of a woven frame: the parity of its own lines (0 even, 1 odd), the rest completed
  /// as set_deinterlace says (ui/deinterlace.hpp); -1: the whole picture.
  int field = -1;
};

/// Paced presentation (j2kplay's stream-clock presenter, app/pipeline/presenter.hpp): the
/// widget repaints at every display refresh (swap interval 1) and asks `pick` which picture
/// the refresh that becomes visible at `visible` (`refresh` after the one before) should show,
/// nullopt keeping the one on screen; `swapped` gets the time of each swap that showed a new
/// picture. Both are called on the GUI thread.
struct PacedSource {
  using Clock = std::chrono::steady_clock;
  std::function<std::optional<PacedPicture>(Clock::time_point visible, Clock::duration refresh)> pick;
  std::function<void(Clock::time_point swapped)> swapped;
};

class PlayerWidget : public QOpenGLWidget {
 public:
  using Clock = std::chrono::steady_clock;

  explicit PlayerWidget(QWidget* parent = nullptr);
  ~PlayerWidget() override;

  /// Thread-safe: hands over the newest picture and schedules a repaint. A picture that
  /// arrives before the previous one was drawn replaces it (counted as skipped).
  /// `received`: when the frame's last packet arrived (for the receive → swap latency).
  void present(std::shared_ptr<const gpu::RgbaImage> picture, std::optional<Clock::time_point> received = {});
  /// Thread-safe: the same for a picture in device memory (released once it is on screen).
  void present_device(std::shared_ptr<const gpu::DevicePicture> picture,
                      std::optional<Clock::time_point> received = {});
  /// GUI thread, before the widget is shown: pictures come from `source` at each refresh
  /// instead of through present() (see PacedSource).
  void set_paced_source(PacedSource source);
  /// How fields (PacedPicture::field) are completed (GUI thread; D cycles off, bob, adaptive).
  void set_deinterlace(Deinterlace mode);
  Deinterlace deinterlace() const noexcept { return deinterlace_; }
  /// GUI thread: the field on screen as completed by the shader, the woven frame it came from
  /// and the one before it (read back from GL; tests and screenshots compare them with
  /// deinterlace_field). Null where no field is on screen (or no previous frame).
  struct ShownField {
    std::shared_ptr<const gpu::RgbaImage> field, frame, previous;
    /// The stream's numbers of the frame and of the frame in the other texture, where known:
    /// `previous` is set only where they are adjacent (or, unnumbered, the uploads are).
    std::optional<std::uint64_t> frame_number, previous_frame_number;
    int parity = 0;
    Deinterlace mode = Deinterlace::adaptive;
  };
  std::optional<ShownField> shown_field();
  /// Thread-safe: text for the overlay (one line per \n).
  void set_overlay_text(const QString& text);
  void set_overlay_visible(bool visible);
  bool overlay_visible() const { return overlay_visible_; }
  /// Thread-safe: the operator's panels (alarm banner, graphs with G, events with E).
  void set_monitor_view(MonitorView view);
  void set_graphs_visible(bool visible);
  void set_events_visible(bool visible);
  /// Thread-safe.
  DisplayStats display_stats() const;
  /// GUI thread, set before showing: drawn over everything else at each paint (the sound's meters).
  /// Drawn last, over everything, in the area the panels leave free at the bottom right
  /// (below the graphs when they are shown; the whole widget otherwise).
  void set_paint_hook(std::function<void(QPainter&, const QRect&)> hook) { paint_hook_ = std::move(hook); }
  /// GUI thread, set before showing: called at the swap that puts a picture on screen, with
  /// the picture's identity (the pointer given to present / present_device) — the picture
  /// clock the sound follows.
  void set_shown_hook(std::function<void(const void* picture, Clock::time_point swapped)> hook) {
    shown_hook_ = std::move(hook);
  }

  /// The picture currently on screen (GUI thread; read back from the PBO for the GPU path).
  std::shared_ptr<const gpu::RgbaImage> shown_picture();
  /// Pictures shown: a frame each, and with deinterlacing a field each (both fields of a frame).
  std::uint64_t frames_shown() const noexcept { return frames_shown_; }
  /// Of those, second fields (the frame was already on screen): frames_shown() less these is
  /// the frames shown, comparable with the frames decoded.
  std::uint64_t second_fields_shown() const noexcept { return second_fields_shown_; }
  std::uint64_t frames_skipped() const;
  /// GUI thread: how the last picture reached the screen, for the overlay
  /// ("GPU: NVIDIA H200, display via CUDA→PBO" or "CPU"), and the counts.
  QString display_path() const;
  /// The overlay's line on interlaced pictures ("" for progressive ones).
  QString fields_note() const;
  std::uint64_t frames_via_device() const noexcept { return frames_via_device_; }
  std::uint64_t device_fallbacks() const noexcept { return device_fallbacks_; }
  bool device_display_failed() const noexcept { return device_failed_; }

 protected:
  void initializeGL() override;
  void paintGL() override;
  void resizeGL(int w, int h) override;
  /// F or double-click: fullscreen; Esc or Q: quit (Esc leaves fullscreen first); I: overlay;
  /// G: graphs; E: events; D: deinterlacing off, bob, adaptive.
  void keyPressEvent(QKeyEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;

 private:
  void toggle_fullscreen();
  void upload_host(const gpu::RgbaImage& picture);
  /// The one-picture mailbox: the newest picture (host or device) replaces a waiting one.
  void post(std::shared_ptr<const gpu::RgbaImage> host, std::shared_ptr<const gpu::DevicePicture> device,
            std::optional<Clock::time_point> received);
  void on_frame_swapped();
  void collect_gpu_times();
  bool upload_device(const std::shared_ptr<const gpu::DevicePicture>& picture);
  void set_texture_size(int w, int h);
  /// A new frame goes into the other of the two frame textures (the one on screen becomes the
  /// previous); `frame`: its number in the stream, where known.
  void next_texture(std::optional<std::uint64_t> frame);
  bool init_deinterlace();
  /// Completes the field on screen into the field texture (once per frame and field); false
  /// where GL cannot (no framebuffer objects): the woven frame is drawn instead.
  bool render_field();
  std::shared_ptr<gpu::RgbaImage> read_texture(unsigned int texture, int w, int h);
  struct Gl;
  std::unique_ptr<Gl> gl_;
  bool gl_ok_ = false;

  mutable std::mutex mailbox_mutex_;  // guards pending_, overlay_text_, skipped_
  std::shared_ptr<const gpu::RgbaImage> pending_;
  std::shared_ptr<const gpu::DevicePicture> pending_device_;  // at most one of the two is set
  QString overlay_text_;
  std::optional<MonitorView> monitor_view_;
  std::optional<Clock::time_point> pending_received_;
  std::uint64_t skipped_ = 0;

  mutable std::mutex stats_mutex_;  // guards latencies_ms_, gpu_ms_, frames_shown_copy_
  std::deque<double> latencies_ms_;
  std::deque<double> gpu_ms_;
  std::uint64_t frames_shown_copy_ = 0;
  std::optional<Clock::time_point> drawn_received_;  // GUI thread: arrival of the picture drawn last
  bool graphs_visible_ = false, events_visible_ = false;

  std::shared_ptr<const gpu::RgbaImage> shown_;  // GUI thread only; null when shown from the device
  int shown_w_ = 0, shown_h_ = 0;
  bool shown_on_device_ = false;
  std::uint64_t frames_shown_ = 0;
  std::uint64_t second_fields_shown_ = 0;
  const QWindow* screen_watched_ = nullptr;  // the window whose screen changes reset refresh_
  std::uint64_t frames_via_device_ = 0, device_fallbacks_ = 0;
  bool device_failed_ = false;
  QString gpu_name_;
  bool device_external_ = false;  // the last device frame came through GL-imported memory (else a mapped PBO)
  bool overlay_visible_ = true;
  // Fields (GUI thread): the mode, the frame on screen (its number, when it came paced) and
  // the parity of the field shown of it (-1: the whole picture).
  Deinterlace deinterlace_ = Deinterlace::adaptive;
  std::optional<std::uint64_t> shown_frame_;
  int shown_field_ = -1;
  std::uint64_t uploads_ = 0;  // frames uploaded: the frame textures' serial numbers

  // Paced presentation (GUI thread): the source, the refresh period (measured from the swaps,
  // or the screen's rate where swaps do not wait for vsync), the last swap, and whether the
  // paint before it drew a new picture.
  std::optional<Clock::time_point> next_visible();
  void next_refresh();
  PacedSource paced_;
  Clock::duration refresh_{std::chrono::microseconds(16667)};
  std::optional<Clock::time_point> last_swap_;
  Clock::time_point last_picked_{};  // the refresh the source was last asked about
  bool paced_drew_ = false;
  std::function<void(QPainter&, const QRect&)> paint_hook_;
  std::function<void(const void*, Clock::time_point)> shown_hook_;
  const void* drawn_picture_ = nullptr;  // GUI thread: the picture drawn last, until its swap
};

}  // namespace j2k::ui
