#pragma once
#include <functional>

namespace j2k::ui {

/// Looks up GL functions of the context current on this thread (empty if there is none).
std::function<void*(const char*)> current_context_gl_loader();

}  // namespace j2k::ui
