#pragma once
// The sender's frames, encoded ahead of time (a loop of distinct frames) and cached on
// disk between runs, so that sending runs at the real frame rate whatever the encoder's speed.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "depacketizer/audio.hpp"
#include "packetizer/openjpeg_encoder.hpp"
#include "sender/source.hpp"

namespace j2k::sender {

struct EncodedFrame {
  std::vector<std::uint8_t> codestream;  ///< the frame as one codestream (progressive, not dual)
  /// Otherwise its codestreams in sending order: per field (first, second) either one
  /// codestream, or luma (Csiz 1) then chroma (Csiz 2) with --dual-codestream.
  std::vector<std::vector<std::uint8_t>> parts;
  /// Ready-made MXF content package (from --mxf FILE): sent as is instead of `codestream`.
  std::vector<std::vector<std::uint8_t>> klvs;
  /// The frame's own sound (from --mxf FILE), for payloads that do not carry the KLVs (TS).
  std::optional<depacketizer::AudioBlock> sound;
  std::uint64_t checksum = 0;  ///< of the source planes (equals the decoded planes when lossless)
};

struct LoopSpec {
  int frames = 100;
  packetizer::EncodeParams encode;
  int threads = 0;            ///< encoder threads (frames in parallel); 0 = hardware threads
  std::string cache_dir;      ///< empty: no cache
  bool interlaced = false;    ///< code each frame as two field pictures (top field first)
  bool dual = false;          ///< separate luma and chroma codestreams
};

/// Encodes (or loads from the cache) `spec.frames` frames of `source`. Logs progress.
Result<std::vector<EncodedFrame>> encode_loop(const FrameSource& source, const PictureFormat& format,
                                              const LoopSpec& spec);

/// $XDG_CACHE_HOME/j2kplay or ~/.cache/j2kplay.
std::string default_cache_dir();

}  // namespace j2k::sender
