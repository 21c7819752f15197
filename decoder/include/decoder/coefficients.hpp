#pragma once
// The hand-off point between tier-1 and reconstruction (15444-1 Annex E, F, G).
//
// Our own decoder stops after tier-1 with a CoefficientFrame: every subband of every
// tile-component as an array of quantised coefficients, plus everything that
// dequantisation, the inverse DWT, the inverse component transform and the DC level
// shift need. `reconstruct()` is the CPU implementation of those stages; a GPU stage
// can take the same frame instead.
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/planar_image.hpp"
#include "core/result.hpp"

namespace j2k::decoder {

enum class Wavelet : std::uint8_t {
  irreversible_9_7 = 0,  ///< floating point, 15444-1 F.3.8.2
  reversible_5_3 = 1,    ///< integer, exact, F.3.8.1
};

enum class BandOrientation : std::uint8_t { LL = 0, HL = 1, LH = 2, HH = 3 };

/// A rectangle on some grid, [x0, x1) x [y0, y1).
struct Rect {
  int x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  int width() const noexcept { return x1 - x0; }
  int height() const noexcept { return y1 - y0; }
};

/// One subband. Coefficients are stored row-major (width() per row) in the owning
/// component's `data` at `offset`.
///
/// Each value is *twice* the dequantiser's input, so the reconstruction midpoint of a
/// truncated bit-plane survives as the lowest bit (15444-1 E.1.1.2, r = 1/2):
///   reversible:   coefficient = sign(v) * (|v| >> 1)
///   irreversible: coefficient = v * step / 2
/// The ROI maxshift (H.1) is already undone; code-blocks that were not coded are zero.
struct SubbandCoefficients {
  BandOrientation orientation = BandOrientation::LL;
  int resolution = 0;  ///< 0 = lowest (the LL band)
  Rect rect;           ///< in the band's own coordinates (15444-1 B-15)
  float step = 1.0f;   ///< quantisation step size Δb (E-3); 1 for reversible
  std::size_t offset = 0;
};

/// An allocator whose value-initialisation is default-initialisation: resize() of a vector
/// of int32 leaves the new elements unwritten (tier-1 writes every coefficient anyway), so a
/// fresh frame's buffers are not zero-filled by one thread before tier-1 writes them again.
template <typename T>
struct DefaultInitAllocator : std::allocator<T> {
  using value_type = T;
  template <typename U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  DefaultInitAllocator() = default;
  template <typename U>
  DefaultInitAllocator(const DefaultInitAllocator<U>&) noexcept {}  // NOLINT(google-explicit-constructor)
  template <typename U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

struct ComponentCoefficients {
  Rect rect;               ///< tile-component at full resolution (B-12)
  int levels = 0;          ///< decomposition levels in the codestream (NL)
  int decoded_levels = 0;  ///< levels to synthesise (NL minus `reduce`)
  Wavelet wavelet = Wavelet::reversible_5_3;
  std::vector<SubbandCoefficients> subbands;  ///< LL first, then HL, LH, HH per resolution
  std::vector<std::int32_t, DefaultInitAllocator<std::int32_t>> data;
  /// No code-block of this tile-component carried coded data, so every coefficient is zero
  /// (`data` is zeroed all the same). The inverse transform of zeros is zero, so a
  /// reconstruction may write the DC level shift straight away (reconstruct() does).
  bool zero = false;
};

struct TileCoefficients {
  int index = 0;
  bool mct = false;  ///< inverse RCT (5/3) or ICT (9/7) on the first three components
  std::vector<ComponentCoefficients> components;
};

struct ComponentInfo {
  int precision = 8;
  bool is_signed = false;
  int dx = 1, dy = 1;
  Rect rect;  ///< at the decoded resolution, on the component's own grid
};

struct CoefficientFrame {
  Rect image;  ///< image area on the reference grid (full resolution)
  int reduce = 0;
  std::vector<ComponentInfo> components;
  std::vector<TileCoefficients> tiles;
  std::uint64_t damaged_codeblocks = 0;  ///< zeroed by resilient decoding
  /// The colour a JP2 file's header states (unknown for a raw codestream): the picture's
  /// colour when the codestream has no multiple component transform (which makes it RGB).
  ColourCoding stated_colour = ColourCoding::unknown;
  bool stated_full_range = false;
};

/// Wall time of the reconstruction stages, for --bench.
struct ReconstructTimes {
  double idwt_ms = 0;    ///< dequantisation + inverse DWT
  double colour_ms = 0;  ///< inverse MCT, DC shift, clamp, copy out
  /// Work, not time: samples the inverse DWT's levels produced (each level's area; the LL
  /// band copied out when there are no levels). Tile-components without data cost none.
  std::uint64_t idwt_samples = 0;
  /// Tiles whose codestream asks for the component transform (RCT/ICT) over three components
  /// that differ in size or wavelet: left untransformed (as OpenJPEG does), the colours wrong.
  std::uint64_t transform_skipped_tiles = 0;
};

/// CPU reconstruction: dequantise, inverse DWT, inverse MCT, DC shift and clamp.
/// `threads` > 1 spreads the work over that many threads (a pool kept per calling thread).
/// The result does not depend on `threads`.
Result<PlanarImage> reconstruct(const CoefficientFrame& frame, int threads = 1, ReconstructTimes* times = nullptr);

/// Whether a tile's component transform (G.2/G.3) applies: asked for, over components 0-2 of
/// one size at the decoded resolution and one wavelet. Asked for where it cannot apply (4:2:2
/// with MCT), the tile is decoded untransformed, as OpenJPEG does, and counted
/// (DecodeStats::transform_skipped_tiles).
bool component_transform_applies(const TileCoefficients& tile);
/// The frame's tiles that ask for the component transform where it cannot apply.
std::uint64_t transform_skipped_tiles(const CoefficientFrame& frame);

}  // namespace j2k::decoder
