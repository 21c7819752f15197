// A Qt eglfs device integration for machines whose only OpenGL is NVIDIA's EGL on the
// device platform: no X server, no Wayland, no DRM/KMS node (a headless GPU server, a
// container with /dev/nvidia* only). Qt 6.4's own platforms cannot draw there: xcb needs an
// X server with NVIDIA's GLX, minimalegl and the default eglfs integration ask for a window
// surface on EGL_DEFAULT_DISPLAY, and eglfs_kms_egldevice needs a DRM device to scan out.
//
// This integration opens the first EGL device with EGL_EXT_platform_device and gives the
// (single, fullscreen) eglfs window a pbuffer surface of the screen's size instead of a
// window surface. Everything above it is unchanged Qt: QOpenGLWidget renders into its FBO
// and is composited onto the pbuffer, grabFramebuffer() reads what the widget drew. So
// j2kplay's real PlayerWidget, with its CUDA-GL display path, runs on the GPU's own GL.
//
// Use:  QT_QPA_PLATFORM=eglfs QT_QPA_EGLFS_INTEGRATION=j2k_egldevice
//       QT_QPA_EGLFS_DISABLE_INPUT=1 [J2K_EGLDEVICE_SIZE=1280x720]
//       QT_PLUGIN_PATH=<folder holding egldeviceintegrations/>
#include <EGL/egl.h>
#include <EGL/eglext.h>

#include <QtEglFSDeviceIntegration/private/qeglfsdeviceintegration_p.h>
#include <QtEglFSDeviceIntegration/private/qeglfshooks_p.h>
#include <QtEglFSDeviceIntegration/private/qeglfsscreen_p.h>
#include <QtEglFSDeviceIntegration/private/qeglfswindow_p.h>
#include <QtGui/private/qeglconvenience_p.h>

#include <QByteArray>
#include <QSize>
#include <QtPlugin>
#include <cstdio>

namespace {

/// The screen size: J2K_EGLDEVICE_SIZE=WxH, else 1920x1080.
QSize configured_size() {
  const QByteArray text = qgetenv("J2K_EGLDEVICE_SIZE");
  int w = 0, h = 0;
  if (!text.isEmpty() && std::sscanf(text.constData(), "%dx%d", &w, &h) == 2 && w >= 16 && h >= 16 && w <= 16384 &&
      h <= 16384)
    return QSize(w, h);
  return QSize(1920, 1080);
}

/// The eglfs window with a pbuffer where eglfs would create a window surface.
class PbufferWindow : public QEglFSWindow {
 public:
  using QEglFSWindow::QEglFSWindow;

  void resetSurface() override {
    EGLDisplay display = screen()->display();
    // The same format the contexts are made for (surfaceFormatFor), or the pbuffer's config
    // and the context's would not match (eglMakeCurrent: EGL_BAD_MATCH).
    const QSurfaceFormat wanted = qt_egl_device_integration()->surfaceFormatFor(window()->requestedFormat());
    m_config = QEglFSDeviceIntegration::chooseConfig(display, wanted);
    m_format = q_glFormatFromConfig(display, m_config, wanted);
    const QSize size = screen()->rawGeometry().size();
    const EGLint attributes[] = {EGL_WIDTH, size.width(), EGL_HEIGHT, size.height(), EGL_NONE};
    m_window = 0;
    m_surface = eglCreatePbufferSurface(display, m_config, attributes);
  }
};

class DevicePbufferIntegration : public QEglFSDeviceIntegration {
 public:
  void platformInit() override {}  // no framebuffer device to open
  void platformDestroy() override {}

  EGLDisplay createDisplay(EGLNativeDisplayType) override {
    auto query_devices = reinterpret_cast<PFNEGLQUERYDEVICESEXTPROC>(eglGetProcAddress("eglQueryDevicesEXT"));
    auto platform_display = reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(eglGetProcAddress("eglGetPlatformDisplayEXT"));
    if (!query_devices || !platform_display) {
      qWarning("j2k_egldevice: EGL_EXT_device_enumeration / EGL_EXT_platform_device are missing");
      return EGL_NO_DISPLAY;
    }
    EGLDeviceEXT devices[8];
    EGLint count = 0;
    if (!query_devices(8, devices, &count) || count < 1) {
      qWarning("j2k_egldevice: no EGL device");
      return EGL_NO_DISPLAY;
    }
    return platform_display(EGL_PLATFORM_DEVICE_EXT, devices[0], nullptr);
  }

  bool usesDefaultScreen() override { return true; }
  QSize screenSize() const override { return configured_size(); }
  QSizeF physicalScreenSize() const override {
    const QSize s = configured_size();  // 96 dpi
    return QSizeF(s.width() * 25.4 / 96.0, s.height() * 25.4 / 96.0);
  }
  QDpi logicalDpi() const override { return QDpi(96, 96); }
  int screenDepth() const override { return 32; }
  QImage::Format screenFormat() const override { return QImage::Format_RGB32; }
  qreal refreshRate() const override { return 60; }
  EGLint surfaceType() const override { return EGL_PBUFFER_BIT; }
  QSurfaceFormat surfaceFormatFor(const QSurfaceFormat& input) const override {
    QSurfaceFormat f = input;
    f.setRenderableType(QSurfaceFormat::OpenGL);  // desktop GL, as on an X desktop
    f.setRedBufferSize(8);
    f.setGreenBufferSize(8);
    f.setBlueBufferSize(8);
    f.setAlphaBufferSize(8);
    return f;
  }
  QEglFSWindow* createWindow(QWindow* window) const override { return new PbufferWindow(window); }
  EGLNativeWindowType createNativeWindow(QPlatformWindow*, const QSize&, const QSurfaceFormat&) override { return 0; }
  bool supportsPBuffers() const override { return true; }
  bool supportsSurfacelessContexts() const override { return true; }
  bool hasCapability(QPlatformIntegration::Capability cap) const override {
    switch (cap) {
      case QPlatformIntegration::ThreadedPixmaps:
      case QPlatformIntegration::OpenGL:
      case QPlatformIntegration::ThreadedOpenGL:
      case QPlatformIntegration::BufferQueueingOpenGL:
        return true;
      default:
        return false;
    }
  }
};

}  // namespace

class J2kEglDevicePlugin : public QEglFSDeviceIntegrationPlugin {
  Q_OBJECT
  Q_PLUGIN_METADATA(IID QEglFSDeviceIntegrationFactoryInterface_iid FILE "eglfs_device.json")

 public:
  QEglFSDeviceIntegration* create() override { return new DevicePbufferIntegration; }
};

#include "eglfs_device_integration.moc"
