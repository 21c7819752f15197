#include <GL/glew.h>  // before any other GL header

#include "ui/player_widget.hpp"

#include <QKeyEvent>
#include <QPainter>
#include <QScreen>
#include <QWindow>
#include <QSurfaceFormat>
#include <QTimer>
#include <QMetaObject>
#include <algorithm>

#include "core/log.hpp"
#include "gpu/cuda.hpp"
#include "gpu/cuda_gl.hpp"
#include "gl_loader.hpp"

namespace j2k::ui {

namespace {

constexpr const char* kVertexShader = R"(#version 120
attribute vec2 a_pos;
attribute vec2 a_uv;
varying vec2 v_uv;
void main() { gl_Position = vec4(a_pos, 0.0, 1.0); v_uv = a_uv; }
)";
constexpr const char* kFragmentShader = R"(#version 120
uniform sampler2D u_tex;
varying vec2 v_uv;
void main() { gl_FragColor = vec4(texture2D(u_tex, v_uv).rgb, 1.0); }
)";

// The field pass draws over a viewport the picture's size; its fragment shader is
// kDeinterlaceFragmentShader (ui/deinterlace.cpp).
constexpr const char* kFieldVertexShader = R"(#version 120
attribute vec2 a_pos;
void main() { gl_Position = vec4(a_pos, 0.0, 1.0); }
)";

GLuint compile(GLenum type, const char* source) {
  GLuint s = glCreateShader(type);
  glShaderSource(s, 1, &source, nullptr);
  glCompileShader(s);
  GLint ok = 0;
  glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
  if (!ok) {
    char log[1024] = {};
    glGetShaderInfoLog(s, sizeof log, nullptr, log);
    logger("ui")->error("shader compile failed: {}", log);
  }
  return s;
}

/// Compiles and links a program from two shader sources; 0 (and the log's line) if it fails.
GLuint link_program(const char* vertex, const char* fragment) {
  GLuint vs = compile(GL_VERTEX_SHADER, vertex);
  GLuint fs = compile(GL_FRAGMENT_SHADER, fragment);
  GLuint program = glCreateProgram();
  glAttachShader(program, vs);
  glAttachShader(program, fs);
  glLinkProgram(program);
  glDeleteShader(vs);
  glDeleteShader(fs);
  GLint linked = 0;
  glGetProgramiv(program, GL_LINK_STATUS, &linked);
  if (linked) return program;
  char log[1024] = {};
  glGetProgramInfoLog(program, sizeof log, nullptr, log);
  logger("ui")->error("shader program failed to link: {}", log);
  glDeleteProgram(program);
  return 0;
}

/// The picture textures' sampling: linear, clamped at the edges.
void set_linear_clamped(GLuint texture) {
  glBindTexture(GL_TEXTURE_2D, texture);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
}

}  // namespace

/// GL objects: two frame textures (the frame on screen and the one before it), one pixel
/// unpack buffer for pictures in host memory, one program and a quad; for pictures in device
/// memory, the CUDA-GL presenter (gpu/); for fields, the deinterlacing program, its
/// framebuffer and the texture it fills.
struct PlayerWidget::Gl {
  GLuint program = 0, vbo = 0, pbo = 0;
  GLuint frames[2] = {};
  int frame_w[2] = {}, frame_h[2] = {};
  std::uint64_t serial[2] = {};  // the upload that filled each frame texture (0: none yet)
  std::optional<std::uint64_t> frame_no[2];  // the stream's frame number in each, where known
  int cur = 0;                   // the frame texture on screen
  GLuint texture() const { return frames[cur]; }
  GLuint field_program = 0, fbo = 0, field_texture = 0;
  int field_w = 0, field_h = 0;
  GLint field_pos = -1, u_cur = -1, u_prev = -1, u_size = -1, u_parity = -1, u_mode = -1, u_has_prev = -1;
  bool field_tried = false, field_ok = false;
  std::optional<std::tuple<std::uint64_t, int, int>> field_of;  // (serial, parity, mode) in field_texture
  bool field_had_prev = false;
  // GL_TIME_ELAPSED queries around each frame's texture update + draw, read back a few
  // frames later (never waiting for the GPU).
  static constexpr int kQueries = 4;
  GLuint queries[kQueries] = {};
  bool query_pending[kQueries] = {};
  int next_query = 0;
  bool timer_queries = false;
  GLint pos_loc = -1, uv_loc = -1, tex_loc = -1;
  std::unique_ptr<gpu::CudaGlPresenter> presenter;  // created with the first device picture
};

PlayerWidget::PlayerWidget(QWidget* parent) : QOpenGLWidget(parent), gl_(std::make_unique<Gl>()) {
  setMinimumSize(160, 90);
  connect(this, &QOpenGLWidget::frameSwapped, this, [this] { on_frame_swapped(); });
}

PlayerWidget::~PlayerWidget() {
  if (!gl_ok_) return;
  makeCurrent();
  gl_->presenter.reset();  // waits for GL, drops its imports and PBO, with the context current
  glDeleteTextures(2, gl_->frames);
  if (gl_->fbo) glDeleteFramebuffers(1, &gl_->fbo);
  if (gl_->field_texture) glDeleteTextures(1, &gl_->field_texture);
  if (gl_->field_program) glDeleteProgram(gl_->field_program);
  glDeleteBuffers(1, &gl_->pbo);
  glDeleteBuffers(1, &gl_->vbo);
  if (gl_->timer_queries) glDeleteQueries(Gl::kQueries, gl_->queries);
  glDeleteProgram(gl_->program);
  doneCurrent();
}

void PlayerWidget::present(std::shared_ptr<const gpu::RgbaImage> picture, std::optional<Clock::time_point> received) {
  post(std::move(picture), nullptr, received);
}

void PlayerWidget::present_device(std::shared_ptr<const gpu::DevicePicture> picture,
                                  std::optional<Clock::time_point> received) {
  post(nullptr, std::move(picture), received);
}

void PlayerWidget::post(std::shared_ptr<const gpu::RgbaImage> host, std::shared_ptr<const gpu::DevicePicture> device,
                        std::optional<Clock::time_point> received) {
  std::shared_ptr<const gpu::DevicePicture> replaced;  // back to its pool, outside the lock
  {
    std::lock_guard lock(mailbox_mutex_);
    if (pending_ || pending_device_) ++skipped_;
    replaced = std::move(pending_device_);
    pending_ = std::move(host);
    pending_device_ = std::move(device);
    pending_received_ = received;
  }
  QMetaObject::invokeMethod(this, [this] { update(); }, Qt::QueuedConnection);
}

std::shared_ptr<gpu::RgbaImage> PlayerWidget::read_texture(unsigned int texture, int w, int h) {
  auto img = std::make_shared<gpu::RgbaImage>();
  img->width = w;
  img->height = h;
  img->pixels.resize(static_cast<std::size_t>(w) * 4 * static_cast<std::size_t>(h));
  makeCurrent();
  glBindTexture(GL_TEXTURE_2D, texture);
  glPixelStorei(GL_PACK_ALIGNMENT, 4);
  glGetTexImage(GL_TEXTURE_2D, 0, GL_RGBA, GL_UNSIGNED_BYTE, img->pixels.data());
  doneCurrent();
  return img;
}

std::shared_ptr<const gpu::RgbaImage> PlayerWidget::shown_picture() {
  if (shown_ || !shown_on_device_ || !gl_ok_) return shown_;
  // Shown from the device: the texture holds it. Read it back once (screenshots, tests).
  shown_ = read_texture(gl_->texture(), shown_w_, shown_h_);
  return shown_;
}

std::optional<PlayerWidget::ShownField> PlayerWidget::shown_field() {
  if (!gl_ok_ || shown_field_ < 0 || !gl_->field_of) return std::nullopt;
  ShownField f;
  f.parity = std::get<1>(*gl_->field_of);
  f.mode = static_cast<Deinterlace>(std::get<2>(*gl_->field_of));
  f.field = read_texture(gl_->field_texture, gl_->field_w, gl_->field_h);
  f.frame = read_texture(gl_->texture(), gl_->frame_w[gl_->cur], gl_->frame_h[gl_->cur]);
  const int other = 1 - gl_->cur;
  if (gl_->field_had_prev) f.previous = read_texture(gl_->frames[other], gl_->frame_w[other], gl_->frame_h[other]);
  f.frame_number = gl_->frame_no[gl_->cur];
  f.previous_frame_number = gl_->frame_no[other];
  return f;
}

void PlayerWidget::set_deinterlace(Deinterlace mode) {
  deinterlace_ = mode;
  update();
}

QString PlayerWidget::fields_note() const {
  if (shown_field_ < 0) return {};
  if (deinterlace_ == Deinterlace::off) return QStringLiteral("\ninterlaced: woven fields (D: deinterlace)");
  if (gl_->field_tried && !gl_->field_ok) return QStringLiteral("\ninterlaced: woven (no GL framebuffers to deinterlace)");
  return QStringLiteral("\ninterlaced: a picture per field, %1 (D: change)").arg(deinterlace_name(deinterlace_));
}

QString PlayerWidget::display_path() const {
  if (frames_shown_ == 0) return {};
  if (shown_on_device_)
    return QStringLiteral("GPU: %1, display via %2")
               .arg(gpu_name_, device_external_ ? QStringLiteral("CUDA memory → GL (imported, no map)")
                                   : QStringLiteral("CUDA→PBO")) +
           fields_note();
  QString text = QStringLiteral("CPU display path (host RGBA → PBO)");
  if (device_fallbacks_) text += QStringLiteral(", %1 GPU display fallbacks").arg(device_fallbacks_);
  return text + fields_note();
}

void PlayerWidget::set_overlay_text(const QString& text) {
  {
    std::lock_guard lock(mailbox_mutex_);
    overlay_text_ = text;
  }
  QMetaObject::invokeMethod(this, [this] { update(); }, Qt::QueuedConnection);
}

void PlayerWidget::set_overlay_visible(bool visible) {
  overlay_visible_ = visible;
  update();
}

void PlayerWidget::set_monitor_view(MonitorView view) {
  {
    std::lock_guard lock(mailbox_mutex_);
    monitor_view_ = std::move(view);
  }
  QMetaObject::invokeMethod(this, [this] { update(); }, Qt::QueuedConnection);
}

void PlayerWidget::set_graphs_visible(bool visible) {
  graphs_visible_ = visible;
  update();
}

void PlayerWidget::set_events_visible(bool visible) {
  events_visible_ = visible;
  update();
}

namespace {

double percentile(std::deque<double> v, double q) {
  if (v.empty()) return 0;
  const auto k = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

void keep_last(std::deque<double>& v, double x) {
  v.push_back(x);
  if (v.size() > 1000) v.pop_front();
}

}  // namespace

DisplayStats PlayerWidget::display_stats() const {
  std::lock_guard lock(stats_mutex_);
  DisplayStats s;
  s.frames_shown = frames_shown_copy_;
  s.latency_samples = latencies_ms_.size();
  s.receive_to_swap_p50_ms = percentile(latencies_ms_, 0.50);
  s.receive_to_swap_p99_ms = percentile(latencies_ms_, 0.99);
  s.gpu_update_draw_ms = percentile(gpu_ms_, 0.50);
  return s;
}

void PlayerWidget::set_paced_source(PacedSource source) {
  paced_ = std::move(source);
  QSurfaceFormat f = format();
  f.setSwapInterval(1);  // one swap per display refresh: the paint loop runs at the vsync
  setFormat(f);
  if (const QScreen* s = screen(); s && s->refreshRate() > 1)
    refresh_ = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / s->refreshRate()));
}

std::optional<PlayerWidget::Clock::time_point> PlayerWidget::next_visible() {
  // The swap after this paint happens at the next refresh after the last swap (or, if the
  // paint started late, at the first refresh after now).
  const auto now = Clock::now();
  if (!last_swap_) return now + refresh_;
  const auto behind = (now - *last_swap_) / refresh_;
  return *last_swap_ + (behind + 1) * refresh_;
}

void PlayerWidget::next_refresh() {
  // Where swaps wait for the vsync the next paint can start at once; where they do not
  // (offscreen, a pbuffer), a timer keeps the loop at the refresh rate instead of spinning.
  const auto now = Clock::now();
  if (last_swap_) {
    const auto since = now - *last_swap_;
    if (since > refresh_ / 2 && since < 2 * refresh_) refresh_ = (7 * refresh_ + since) / 8;  // follows the display
    if (since < refresh_ / 2) {
      last_swap_ = now;
      const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(refresh_ - since);
      QTimer::singleShot(static_cast<int>(std::max<std::int64_t>(1, wait.count())), Qt::PreciseTimer, this,
                         [this] { update(); });
      return;
    }
  }
  last_swap_ = now;
  update();
}

void PlayerWidget::on_frame_swapped() {
  if (paced_.pick) {
    if (paced_drew_ && paced_.swapped) paced_.swapped(Clock::now());
    paced_drew_ = false;
    next_refresh();
  }
  // The composed frame holding the picture drawn last has been handed to the window system.
  if (drawn_picture_ && shown_hook_) shown_hook_(drawn_picture_, Clock::now());
  drawn_picture_ = nullptr;
  if (!drawn_received_) return;
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - *drawn_received_).count();
  drawn_received_.reset();
  std::lock_guard lock(stats_mutex_);
  keep_last(latencies_ms_, ms);
}

void PlayerWidget::collect_gpu_times() {
  if (!gl_->timer_queries) return;
  for (int i = 0; i < Gl::kQueries; ++i) {
    if (!gl_->query_pending[i]) continue;
    GLint ready = 0;
    glGetQueryObjectiv(gl_->queries[i], GL_QUERY_RESULT_AVAILABLE, &ready);
    if (!ready) continue;
    GLuint64 ns = 0;
    glGetQueryObjectui64v(gl_->queries[i], GL_QUERY_RESULT, &ns);
    gl_->query_pending[i] = false;
    std::lock_guard lock(stats_mutex_);
    keep_last(gpu_ms_, static_cast<double>(ns) * 1e-6);
  }
}

std::uint64_t PlayerWidget::frames_skipped() const {
  std::lock_guard lock(mailbox_mutex_);
  return skipped_;
}

void PlayerWidget::initializeGL() {
  // The refresh estimate starts from the screen's rate and follows the swaps only within a
  // factor of two: a window moved to a screen of another rate (60 -> 144 Hz, or back) starts
  // again from the new screen's.
  if (QWindow* w = window()->windowHandle(); w && w != screen_watched_) {
    screen_watched_ = w;  // initializeGL runs again when the context is made again
    connect(w, &QWindow::screenChanged, this, [this](QScreen* s) {
      if (!s || s->refreshRate() <= 1) return;
      refresh_ = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / s->refreshRate()));
      last_swap_.reset();
      logger("ui")->info("the window moved to a {:.0f} Hz screen", s->refreshRate());
    });
  }
  // glewInit loads the GL entry points first and the GLX extensions second; under an EGL
  // context (Wayland, some X servers) only the second part fails, which we do not need.
  glewExperimental = GL_TRUE;
  const GLenum err = glewInit();
  const bool gl_loaded = err == GLEW_OK || (err == GLEW_ERROR_NO_GLX_DISPLAY && glCreateShader != nullptr);
  if (!gl_loaded) {
    logger("ui")->error("GLEW could not load OpenGL: {}", reinterpret_cast<const char*>(glewGetErrorString(err)));
    return;
  }
  logger("ui")->info("OpenGL {} on {}", reinterpret_cast<const char*>(glGetString(GL_VERSION)),
                     reinterpret_cast<const char*>(glGetString(GL_RENDERER)));
  gl_->program = link_program(kVertexShader, kFragmentShader);
  if (!gl_->program) return;
  gl_->pos_loc = glGetAttribLocation(gl_->program, "a_pos");
  gl_->uv_loc = glGetAttribLocation(gl_->program, "a_uv");
  gl_->tex_loc = glGetUniformLocation(gl_->program, "u_tex");
  glGenBuffers(1, &gl_->vbo);
  glGenBuffers(1, &gl_->pbo);
  glGenTextures(2, gl_->frames);
  for (GLuint t : gl_->frames) set_linear_clamped(t);
  gl_->timer_queries = GLEW_VERSION_3_3 || GLEW_ARB_timer_query;
  if (gl_->timer_queries) glGenQueries(Gl::kQueries, gl_->queries);
  gl_ok_ = true;
}

void PlayerWidget::resizeGL(int, int) {}

void PlayerWidget::set_texture_size(int w, int h) {
  const int i = gl_->cur;
  glBindTexture(GL_TEXTURE_2D, gl_->frames[i]);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  if (w != gl_->frame_w[i] || h != gl_->frame_h[i]) {
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, w, h, 0, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);
    gl_->frame_w[i] = w;
    gl_->frame_h[i] = h;
  }
}

void PlayerWidget::next_texture(std::optional<std::uint64_t> frame) {
  gl_->cur = 1 - gl_->cur;
  gl_->serial[gl_->cur] = ++uploads_;
  gl_->frame_no[gl_->cur] = frame;
}

bool PlayerWidget::init_deinterlace() {
  if (gl_->field_tried) return gl_->field_ok;
  gl_->field_tried = true;
  if (!glGenFramebuffers || !glBindFramebuffer || !glFramebufferTexture2D || !glCheckFramebufferStatus) {
    logger("ui")->warn("this OpenGL has no framebuffer objects: interlaced pictures are shown woven");
    return false;
  }
  gl_->field_program = link_program(kFieldVertexShader, kDeinterlaceFragmentShader);
  if (!gl_->field_program) {
    logger("ui")->warn("no deinterlacing shader: interlaced pictures are shown woven");
    return false;
  }
  gl_->field_pos = glGetAttribLocation(gl_->field_program, "a_pos");
  gl_->u_cur = glGetUniformLocation(gl_->field_program, "u_cur");
  gl_->u_prev = glGetUniformLocation(gl_->field_program, "u_prev");
  gl_->u_size = glGetUniformLocation(gl_->field_program, "u_size");
  gl_->u_parity = glGetUniformLocation(gl_->field_program, "u_parity");
  gl_->u_mode = glGetUniformLocation(gl_->field_program, "u_mode");
  gl_->u_has_prev = glGetUniformLocation(gl_->field_program, "u_has_prev");
  glGenFramebuffers(1, &gl_->fbo);
  glGenTextures(1, &gl_->field_texture);
  set_linear_clamped(gl_->field_texture);
  gl_->field_ok = true;
  return true;
}

bool PlayerWidget::render_field() {
  if (!init_deinterlace()) return false;
  const int i = gl_->cur, other = 1 - i;
  const int w = gl_->frame_w[i], h = gl_->frame_h[i];
  const std::tuple<std::uint64_t, int, int> key{gl_->serial[i], shown_field_, static_cast<int>(deinterlace_)};
  if (gl_->field_of == key) return true;
  glBindFramebuffer(GL_FRAMEBUFFER, gl_->fbo);
  if (w != gl_->field_w || h != gl_->field_h) {
    glBindTexture(GL_TEXTURE_2D, gl_->field_texture);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, w, h, 0, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);
    glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, gl_->field_texture, 0);
    gl_->field_w = w;
    gl_->field_h = h;
    if (glCheckFramebufferStatus(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE) {
      logger("ui")->warn("the deinterlacing framebuffer is incomplete: interlaced pictures are shown woven");
      glBindFramebuffer(GL_FRAMEBUFFER, defaultFramebufferObject());
      gl_->field_ok = false;
      return false;
    }
  }
  // The previous frame takes part only if it is the frame before this one, of the same size:
  // the stream's frame before where the frames are numbered (a paced picture after skipped
  // ones follows an older frame, which says nothing of this one's motion), else the upload
  // before.
  const bool numbered = gl_->frame_no[i] && gl_->frame_no[other];
  const bool adjacent = numbered ? *gl_->frame_no[other] + 1 == *gl_->frame_no[i]
                                 : gl_->serial[other] != 0 && gl_->serial[other] + 1 == gl_->serial[i];
  const bool has_prev = adjacent && gl_->frame_w[other] == w && gl_->frame_h[other] == h;
  glViewport(0, 0, w, h);
  glUseProgram(gl_->field_program);
  // Exact texels: nearest sampling while the pass reads them (the frames are drawn scaled with
  // linear filtering otherwise).
  const GLuint sources[2] = {gl_->frames[i], gl_->frames[other]};
  for (int unit = 1; unit >= 0; --unit) {
    glActiveTexture(GL_TEXTURE0 + unit);
    glBindTexture(GL_TEXTURE_2D, sources[unit]);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  }
  glUniform1i(gl_->u_cur, 0);
  glUniform1i(gl_->u_prev, 1);
  glUniform2f(gl_->u_size, static_cast<GLfloat>(w), static_cast<GLfloat>(h));
  glUniform1f(gl_->u_parity, static_cast<GLfloat>(shown_field_ & 1));
  glUniform1f(gl_->u_mode, deinterlace_ == Deinterlace::adaptive ? 2.f : deinterlace_ == Deinterlace::bob ? 1.f : 0.f);
  glUniform1f(gl_->u_has_prev, has_prev ? 1.f : 0.f);
  const GLfloat quad[] = {-1, -1, 1, -1, -1, 1, 1, 1};
  glBindBuffer(GL_ARRAY_BUFFER, gl_->vbo);
  glBufferData(GL_ARRAY_BUFFER, sizeof quad, quad, GL_STREAM_DRAW);
  glEnableVertexAttribArray(static_cast<GLuint>(gl_->field_pos));
  glVertexAttribPointer(static_cast<GLuint>(gl_->field_pos), 2, GL_FLOAT, GL_FALSE, 2 * sizeof(GLfloat), nullptr);
  glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
  glDisableVertexAttribArray(static_cast<GLuint>(gl_->field_pos));
  glBindBuffer(GL_ARRAY_BUFFER, 0);
  for (int unit = 1; unit >= 0; --unit) {
    glActiveTexture(GL_TEXTURE0 + unit);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
  }
  glUseProgram(0);
  glBindFramebuffer(GL_FRAMEBUFFER, defaultFramebufferObject());
  gl_->field_of = key;
  gl_->field_had_prev = has_prev;
  return true;
}

void PlayerWidget::upload_host(const gpu::RgbaImage& picture) {
  // Upload through the pixel unpack buffer: orphan, fill, then copy into the texture.
  const auto bytes = static_cast<GLsizeiptr>(picture.pixels.size());
  glBindBuffer(GL_PIXEL_UNPACK_BUFFER, gl_->pbo);
  glBufferData(GL_PIXEL_UNPACK_BUFFER, bytes, nullptr, GL_STREAM_DRAW);
  glBufferSubData(GL_PIXEL_UNPACK_BUFFER, 0, bytes, picture.pixels.data());
  set_texture_size(picture.width, picture.height);
  glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, picture.width, picture.height, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);
  glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
}

bool PlayerWidget::upload_device(const std::shared_ptr<const gpu::DevicePicture>& picture) {
  const int w = picture->width(), h = picture->height();
  if (!device_failed_ && !gl_->presenter) {
    auto made = gpu::CudaGlPresenter::create(0, current_context_gl_loader());
    if (made) {
      gl_->presenter = std::move(made).value();
      const std::string d = gpu::cuda_describe();
      gpu_name_ = QString::fromStdString(d.substr(0, d.find(" (")));
      gpu_name_.remove(QStringLiteral("NVIDIA "));
    } else {
      device_failed_ = true;
      logger("ui")->warn("no CUDA-GL display path ({}): device pictures are downloaded and shown through the CPU path",
                         made.error().message);
    }
  }
  if (!device_failed_) {
    set_texture_size(w, h);
    // The GPU path: GL reads the picture's memory (imported once) or a PBO CUDA copies it
    // into (map, copy, unmap); either way it never visits host memory.
    if (auto st = gl_->presenter->update_texture(picture, gl_->texture()); st) {
      const bool external = gl_->presenter->last_path() == gpu::CudaGlPresenter::Path::external_memory;
      if (!frames_via_device_ || external != device_external_)
        logger("ui")->info("display path: {}", external ? "CUDA memory imported into GL (no per-frame map)"
                                                        : "PBO registered with CUDA (map, copy, unmap)");
      device_external_ = external;
      shown_on_device_ = true;
      shown_.reset();  // read back from the texture only if asked (shown_picture)
      ++frames_via_device_;
      return true;
    } else {
      device_failed_ = true;
      gl_->presenter.reset();
      logger("ui")->warn("CUDA-GL display path failed ({}): device pictures now go through the CPU path",
                         st.error().message);
    }
  }
  // The CPU path for this frame: download, then the host upload.
  ++device_fallbacks_;
  gpu::RgbaImage host;
  if (auto st = gpu::download(*picture, host); !st) {
    static RateLimiter limit;
    if (limit.allow()) logger("ui")->warn("device picture lost: {}", st.error().message);
    return false;
  }
  upload_host(host);
  shown_on_device_ = false;
  shown_ = std::make_shared<gpu::RgbaImage>(std::move(host));
  return true;
}

void PlayerWidget::toggle_fullscreen() {
  if (isFullScreen()) showNormal();
  else showFullScreen();
}

void PlayerWidget::keyPressEvent(QKeyEvent* event) {
  switch (event->key()) {
    case Qt::Key_F: toggle_fullscreen(); break;
    case Qt::Key_Escape:
      if (isFullScreen()) showNormal();
      else close();
      break;
    case Qt::Key_Q: close(); break;
    case Qt::Key_I: set_overlay_visible(!overlay_visible_); break;
    case Qt::Key_G: set_graphs_visible(!graphs_visible_); break;
    case Qt::Key_E: set_events_visible(!events_visible_); break;
    case Qt::Key_D:
      set_deinterlace(deinterlace_ == Deinterlace::off   ? Deinterlace::bob
                      : deinterlace_ == Deinterlace::bob ? Deinterlace::adaptive
                                                         : Deinterlace::off);
      logger("ui")->info("deinterlacing: {}", deinterlace_name(deinterlace_));
      break;
    default: QOpenGLWidget::keyPressEvent(event);
  }
}

void PlayerWidget::mouseDoubleClickEvent(QMouseEvent*) { toggle_fullscreen(); }

void PlayerWidget::paintGL() {
  const qreal dpr = devicePixelRatioF();
  const int fb_w = static_cast<int>(width() * dpr), fb_h = static_cast<int>(height() * dpr);
  glViewport(0, 0, fb_w, fb_h);
  glClearColor(0.f, 0.f, 0.f, 1.f);
  glClear(GL_COLOR_BUFFER_BIT);
  if (!gl_ok_) return;

  std::shared_ptr<const gpu::RgbaImage> next;
  std::shared_ptr<const gpu::DevicePicture> next_device;
  std::optional<Clock::time_point> received;
  std::optional<std::uint64_t> frame;  // paced: the picture's frame number
  int field = -1;
  QString overlay;
  std::optional<MonitorView> monitor;
  {
    std::lock_guard lock(mailbox_mutex_);
    next = std::move(pending_);
    pending_.reset();
    next_device = std::move(pending_device_);
    pending_device_.reset();
    received = pending_received_;
    pending_received_.reset();
    overlay = overlay_text_;
    monitor = monitor_view_;
  }
  if (const auto visible = next_visible(); paced_.pick && visible > last_picked_) {
    // Paced: the source says what this refresh shows (the mailbox is not used); once per
    // refresh, however many paints it gets (an overlay update asks for one too).
    last_picked_ = *visible;
    if (auto picked = paced_.pick(*visible, refresh_)) {
      next = std::move(picked->host);
      next_device = std::move(picked->device);
      received = picked->received;
      frame = picked->frame;
      field = picked->field;
      paced_drew_ = next || next_device;
    }
  }
  collect_gpu_times();
  const std::uint64_t shown_before = frames_shown_;
  // Time the texture update and the draw on the GPU (only for frames that bring a picture).
  const int query = gl_->next_query;
  const bool timing = gl_->timer_queries && (next || next_device) && !gl_->query_pending[query];
  if (timing) glBeginQuery(GL_TIME_ELAPSED, gl_->queries[query]);
  const void* drawing = next_device ? static_cast<const void*>(next_device.get()) : next.get();
  if ((next || next_device) && frame && shown_frame_ == frame && frames_shown_ > 0) {
    // The other field of the frame on screen: it is in its texture already; only the field
    // shown changes. (Its sound and its latency were the first field's.)
    next.reset();
    next_device.reset();
    shown_field_ = field;
    ++frames_shown_;
    ++second_fields_shown_;
    drawing = nullptr;
    received.reset();
  }
  if (next || next_device) {
    shown_frame_ = frame;
    shown_field_ = field;
  }
  if (next_device && next_device->width() > 0 && next_device->height() > 0) {
    const int before = gl_->cur;
    next_texture(frame);
    if (upload_device(next_device)) {
      shown_w_ = next_device->width();
      shown_h_ = next_device->height();
      ++frames_shown_;
    } else {
      gl_->cur = before;
    }
  }
  next_device.reset();  // on screen (the presenter holds it until GL has read it) or given up
  if (gl_->presenter) gl_->presenter->poll();
  if (next && next->width > 0 && next->height > 0) {
    next_texture(frame);
    upload_host(*next);
    shown_w_ = next->width;
    shown_h_ = next->height;
    shown_on_device_ = false;
    shown_ = std::move(next);
    ++frames_shown_;
  }

  if (frames_shown_ > 0) {
    GLuint picture = gl_->texture();
    if (shown_field_ >= 0 && deinterlace_ != Deinterlace::off && render_field()) picture = gl_->field_texture;
    // Letterbox: the largest rectangle of the picture's aspect ratio that fits.
    const double pic_aspect = static_cast<double>(shown_w_) / shown_h_;
    int vw = fb_w, vh = static_cast<int>(fb_w / pic_aspect + 0.5);
    if (vh > fb_h) {
      vh = fb_h;
      vw = static_cast<int>(fb_h * pic_aspect + 0.5);
    }
    glViewport((fb_w - vw) / 2, (fb_h - vh) / 2, vw, vh);
    // Two triangles; texture row 0 is the top of the picture.
    const GLfloat quad[] = {-1, -1, 0, 1, 1, -1, 1, 1, -1, 1, 0, 0, 1, 1, 1, 0};
    glUseProgram(gl_->program);
    glActiveTexture(GL_TEXTURE0);
    glBindTexture(GL_TEXTURE_2D, picture);
    glUniform1i(gl_->tex_loc, 0);
    glBindBuffer(GL_ARRAY_BUFFER, gl_->vbo);
    glBufferData(GL_ARRAY_BUFFER, sizeof quad, quad, GL_STREAM_DRAW);
    glEnableVertexAttribArray(static_cast<GLuint>(gl_->pos_loc));
    glEnableVertexAttribArray(static_cast<GLuint>(gl_->uv_loc));
    glVertexAttribPointer(static_cast<GLuint>(gl_->pos_loc), 2, GL_FLOAT, GL_FALSE, 4 * sizeof(GLfloat), nullptr);
    glVertexAttribPointer(static_cast<GLuint>(gl_->uv_loc), 2, GL_FLOAT, GL_FALSE, 4 * sizeof(GLfloat),
                          reinterpret_cast<const void*>(2 * sizeof(GLfloat)));
    glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
    glDisableVertexAttribArray(static_cast<GLuint>(gl_->pos_loc));
    glDisableVertexAttribArray(static_cast<GLuint>(gl_->uv_loc));
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    glUseProgram(0);
    glViewport(0, 0, fb_w, fb_h);
  }
  if (timing) {
    glEndQuery(GL_TIME_ELAPSED);
    gl_->query_pending[query] = true;
    gl_->next_query = (query + 1) % Gl::kQueries;
  }
  if (frames_shown_ != shown_before) {
    drawn_received_ = received;  // the swap after this paint shows it
    drawn_picture_ = drawing;
    std::lock_guard lock(stats_mutex_);
    frames_shown_copy_ = frames_shown_;
  }

  // The banner is the operator's alarm: hiding the statistics (I, --no-overlay) hides it
  // only while the link is healthy, never an alarm.
  const bool banner = monitor && (overlay_visible_ || monitor->level != AlarmLevel::ok);
  // Layout: the banner across the top; the graphs in the right third below it, leaving the
  // bottom of that column to what the paint hook draws (the sound meters); the statistics
  // top left, in a font made small enough to stay left of the graphs; the events below them.
  QRect hook_area = rect();
  if ((overlay_visible_ && !overlay.isEmpty()) || banner || (monitor && (graphs_visible_ || events_visible_))) {
    QPainter painter(this);
    QFont font("monospace");
    font.setStyleHint(QFont::Monospace);
    font.setPointSize(10);
    painter.setFont(font);
    int top = 0;
    if (banner) top = draw_alarm_banner(painter, rect(), *monitor);
    const int graphs_width = monitor && graphs_visible_ ? std::max(320, width() / 3) : 0;
    const int column = graphs_width ? graphs_width + 16 : 0;  // the right column, margins included
    int overlay_bottom = top;
    if (overlay_visible_ && !overlay.isEmpty()) {
      const int room = std::max(120, width() - column - 24);
      QRect text = painter.fontMetrics().boundingRect(QRect(0, top, width(), height() - top), Qt::AlignLeft | Qt::AlignTop, overlay);
      if (text.width() > room) {
        QFont smaller = font;
        smaller.setPointSizeF(std::max(6.0, font.pointSizeF() * room / text.width()));
        painter.setFont(smaller);
        text = painter.fontMetrics().boundingRect(QRect(0, top, width(), height() - top), Qt::AlignLeft | Qt::AlignTop, overlay);
      }
      text.setWidth(std::min(text.width(), room));
      painter.fillRect(text.adjusted(4, 4, 16, 12), QColor(0, 0, 0, 160));
      painter.setPen(Qt::white);
      painter.save();
      painter.setClipRect(text.adjusted(4, 4, 16, 12));
      painter.drawText(text.adjusted(10, 8, 10, 8), Qt::AlignLeft | Qt::AlignTop, overlay);
      painter.restore();
      painter.setFont(font);
      overlay_bottom = text.bottom() + 12;
    }
    if (graphs_width) {
      const int free_height = height() - top - 16;
      const int graphs_height = std::min(paint_hook_ ? free_height * 3 / 5 : free_height, 420);
      const QRect graphs(width() - graphs_width - 8, top + 8, graphs_width, graphs_height);
      draw_graphs(painter, graphs, *monitor);
      hook_area = QRect(graphs.left() - 8, graphs.bottom() + 8, width() - graphs.left() + 8, height() - graphs.bottom() - 8);
    }
    if (monitor && events_visible_) {
      const int line = painter.fontMetrics().height();
      const int bottom = height() - 8;
      int events_top = std::max(height() / 2, overlay_bottom + 8);
      if (bottom - events_top < 3 * line + 8) events_top = bottom - (3 * line + 8);  // at least three lines
      draw_events(painter, QRect(8, events_top, width() - 16 - column, bottom - events_top), *monitor);
    }
  }
  if (paint_hook_) {
    QPainter painter(this);
    paint_hook_(painter, hook_area);
  }
}

}  // namespace j2k::ui
