#pragma once
// The video surface: an OpenGL widget (GL loaded with GLEW inside Qt's context) that
// shows the latest picture, letterboxed to keep its aspect ratio, with an optional
// statistics overlay. Pictures arrive from any thread through `present`; only the GUI
// thread touches GL.
#include <QOpenGLWidget>
#include <QString>
#include <memory>
#include <mutex>

#include "gpu/colour.hpp"

namespace j2k::ui {

class PlayerWidget : public QOpenGLWidget {
 public:
  explicit PlayerWidget(QWidget* parent = nullptr);
  ~PlayerWidget() override;

  /// Thread-safe: hands over the newest picture and schedules a repaint. A picture that
  /// arrives before the previous one was drawn replaces it (counted as skipped).
  void present(std::shared_ptr<const gpu::RgbaImage> picture);
  /// Thread-safe: text for the overlay (one line per \n).
  void set_overlay_text(const QString& text);
  void set_overlay_visible(bool visible);
  bool overlay_visible() const { return overlay_visible_; }

  /// The picture currently on screen (GUI thread).
  std::shared_ptr<const gpu::RgbaImage> shown_picture() const { return shown_; }
  std::uint64_t frames_shown() const noexcept { return frames_shown_; }
  std::uint64_t frames_skipped() const;

 protected:
  void initializeGL() override;
  void paintGL() override;
  void resizeGL(int w, int h) override;
  /// F or double-click: fullscreen; Esc or Q: quit (Esc leaves fullscreen first); I: overlay.
  void keyPressEvent(QKeyEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;

 private:
  void toggle_fullscreen();
  struct Gl;
  std::unique_ptr<Gl> gl_;
  bool gl_ok_ = false;

  mutable std::mutex mailbox_mutex_;  // guards pending_, overlay_text_, skipped_
  std::shared_ptr<const gpu::RgbaImage> pending_;
  QString overlay_text_;
  std::uint64_t skipped_ = 0;

  std::shared_ptr<const gpu::RgbaImage> shown_;  // GUI thread only
  std::uint64_t frames_shown_ = 0;
  bool overlay_visible_ = true;
};

}  // namespace j2k::ui
