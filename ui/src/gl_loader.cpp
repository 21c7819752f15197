// GL function lookup through Qt, kept apart from player_widget.cpp: Qt's OpenGL headers
// and GLEW's cannot meet in one translation unit.
#include "gl_loader.hpp"

#include <QOpenGLContext>

namespace j2k::ui {

std::function<void*(const char*)> current_context_gl_loader() {
  QOpenGLContext* ctx = QOpenGLContext::currentContext();
  if (!ctx) return {};
  return [ctx](const char* name) { return reinterpret_cast<void*>(ctx->getProcAddress(name)); };
}

}  // namespace j2k::ui
