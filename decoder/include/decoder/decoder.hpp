#pragma once
// One interface over JPEG 2000 decoding backends: our own decoder ("own") and
// OpenJPEG ("openjpeg", the reference and fallback). Selectable at run time.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/byte_reader.hpp"
#include "core/planar_image.hpp"
#include "core/result.hpp"

namespace j2k {
class WorkPool;
}

namespace j2k::decoder {

enum class Backend { own, openjpeg };

const char* to_string(Backend backend) noexcept;
/// Parses "own" / "openjpeg"; empty when unknown.
std::optional<Backend> parse_backend(const std::string& name);

struct DecodeOptions {
  int reduce = 0;        ///< discard this many resolution levels (--reduce)
  int max_layers = 0;    ///< decode only the first N quality layers; 0 = all (--layers)
  int threads = 1;       ///< worker threads inside one decode (the decoder's own pool)
  bool strict = false;   ///< strict: any damage is an error; resilient: decode what is intact
  /// When set (own and cuda backends), in-frame parallel work runs on this pool, shared with
  /// other decoders, instead of the decoder's own `threads` (core/work_pool.hpp). It must
  /// outlive the decode.
  WorkPool* pool = nullptr;
};

/// Safety limits: a codestream asking for more is refused with ErrorKind::limit, before
/// the memory is allocated. A SIZ costs a few bytes to write and can declare terabytes, so
/// the picture area alone is not enough: the samples of all components and the memory the
/// decode needs (coefficients, transform buffers, output, tier-2 structures) are bounded too.
struct DecodeLimits {
  long long max_pixels = 16384LL * 16384;  ///< reference-grid area, all components counted once
  int max_components = 16384;
  long long max_samples = 16384LL * 16384;  ///< samples of all components together
  long long max_memory = 2LL << 30;          ///< bytes one decode may allocate (2 GiB)
};

/// What the last decode did and where its time went (only the own backend fills the stages).
struct DecodeStats {
  double tier2_ms = 0;   ///< codestream parsing and packet headers
  double tier1_ms = 0;   ///< code-block decoding (MQ + passes), wall time
  double idwt_ms = 0;    ///< dequantisation and inverse DWT
  double colour_ms = 0;  ///< inverse MCT, DC shift, clamp, output
  std::uint64_t codeblocks = 0;
  std::uint64_t damaged_codeblocks = 0;  ///< zeroed in resilient mode
  /// Code-blocks of more than 30 magnitude bit-planes (a large ROI shift: legal, beyond this
  /// decoder's 32-bit samples, as OpenJPEG's, which refuses the picture): zeroed, not damage.
  /// Strict mode refuses them (ErrorKind::unsupported).
  std::uint64_t too_deep_codeblocks = 0;
  std::uint64_t damaged_packets = 0;     ///< packets cut short or unreadable
  /// Resilient decoding of a damaged codestream (own backend): it ended early (no EOC, or a
  /// tile-part cut short), tiles of which nothing could be read (shown at their DC level:
  /// mid-grey), tile-parts left out (an unreadable header, a wrong tile index).
  bool truncated = false;
  std::uint64_t tiles = 0;
  std::uint64_t tiles_missing = 0;
  std::uint64_t damaged_tile_parts = 0;
  /// Bytes of tile data (and PPM/PPT packet headers) after the tiles' last packets, left
  /// unread (own backend; resilient mode: a padding writer, or headers that disagree with
  /// the data; strict refuses them).
  std::uint64_t bytes_after_packets = 0;
  /// Tiles whose component transform was asked for over components of different sizes or
  /// wavelets, left untransformed (own backend; the colours are wrong).
  std::uint64_t transform_skipped_tiles = 0;
  /// Bytes the decode accounted for against DecodeLimits::max_memory (own backend): frame
  /// buffers plus the tier-2 structures that the packets actually created.
  std::uint64_t memory_bytes = 0;
  /// Work counters (own backend): they follow the data, so tests can assert that a hostile
  /// header does not buy work its bytes cannot carry (no timing involved).
  std::uint64_t coding_passes = 0;  ///< tier-1 coding passes handed to the code-block decoder
  std::uint64_t idwt_samples = 0;   ///< samples produced by the inverse DWT's levels
  std::uint64_t constant_components = 0;  ///< tile-components without data, written as the DC level
  std::uint64_t zero_fills = 0;  ///< areas without data cleared (precincts no packet reached, merged)
  std::uint64_t parallel_tiles = 0;  ///< tiles whose tile-parts tier-2 read one per thread
  /// Steps of tier-2's work budget the codestream used (progression walks, POC entries,
  /// code-blocks gone through by packet headers): at most 2^26 + 1024 per byte of it.
  std::uint64_t tier2_steps = 0;
};

/// Whether resilient decoding met damage in the codestream, so that the picture may be wrong
/// in places: it ended early, or tiles, tile-parts, packets or code-blocks could not be read.
/// (Bytes after the last packets and a component transform that cannot apply are not damage.)
bool met_damage(const DecodeStats& s) noexcept;
/// That damage for people, "" when none: "the codestream ends early; 3 packets cut short or
/// unreadable; 12 code-blocks zeroed".
std::string describe_damage(const DecodeStats& s);

class Decoder {
 public:
  virtual ~Decoder() = default;
  virtual Backend backend() const noexcept = 0;
  /// Decodes one codestream (raw J2K, or a JP2 file whose codestream box is used).
  /// Never throws: a failed allocation is returned as ErrorKind::limit.
  virtual Result<PlanarImage> decode(Bytes codestream, const DecodeOptions& options) = 0;
  /// Same as decode(), into `out`: a backend may reuse the memory of `out`'s planes (the own
  /// backend does when the sizes match: no allocation, no zero fill, no page faults per
  /// frame). On error `out` is unspecified.
  virtual Status decode_into(Bytes codestream, const DecodeOptions& options, PlanarImage& out) {
    auto image = decode(codestream, options);
    if (!image) return image.error();
    out = std::move(*image);
    return {};
  }
  /// Statistics of the last `decode` call.
  virtual DecodeStats last_stats() const { return {}; }
};

/// Creates a decoder; an error names the backend and why it is unavailable.
Result<std::unique_ptr<Decoder>> make_decoder(Backend backend, const DecodeLimits& limits = {});

// Finding the codestream in a JP2 file and reading a picture's geometry from SIZ are codestream
// syntax: syntax/locate.hpp (locate_codestream, read_geometry).

}  // namespace j2k::decoder
