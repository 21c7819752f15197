#include "openjpeg_backend.hpp"

#include <fmt/format.h>

#include <new>
#include <stdexcept>
#include <openjpeg.h>

#include <algorithm>
#include <cstring>
#include <memory>

namespace j2k::decoder {

namespace {

/// libopenjp2 reads through callbacks; this feeds it from a span without copying.
struct MemorySource {
  Bytes data;
  std::size_t pos = 0;
};

OPJ_SIZE_T read_cb(void* buffer, OPJ_SIZE_T n, void* user) {
  auto* src = static_cast<MemorySource*>(user);
  std::size_t left = src->data.size() - src->pos;
  if (left == 0) return static_cast<OPJ_SIZE_T>(-1);
  std::size_t take = std::min<std::size_t>(n, left);
  std::memcpy(buffer, src->data.data() + src->pos, take);
  src->pos += take;
  return take;
}
OPJ_OFF_T skip_cb(OPJ_OFF_T n, void* user) {
  auto* src = static_cast<MemorySource*>(user);
  if (n < 0) return -1;
  std::size_t take = std::min<std::size_t>(static_cast<std::size_t>(n), src->data.size() - src->pos);
  src->pos += take;
  return static_cast<OPJ_OFF_T>(take);
}
OPJ_BOOL seek_cb(OPJ_OFF_T pos, void* user) {
  auto* src = static_cast<MemorySource*>(user);
  if (pos < 0 || static_cast<std::size_t>(pos) > src->data.size()) return OPJ_FALSE;
  src->pos = static_cast<std::size_t>(pos);
  return OPJ_TRUE;
}

/// Collects OpenJPEG's error text so it can be returned as a value.
void error_cb(const char* msg, void* user) {
  auto* text = static_cast<std::string*>(user);
  if (text->empty()) *text = msg;
  while (!text->empty() && (text->back() == '\n' || text->back() == ' ')) text->pop_back();
}
void quiet_cb(const char*, void*) {}

struct CodecDeleter { void operator()(opj_codec_t* c) const { opj_destroy_codec(c); } };
struct StreamDeleter { void operator()(opj_stream_t* s) const { opj_stream_destroy(s); } };
struct ImageDeleter { void operator()(opj_image_t* i) const { opj_image_destroy(i); } };

class OpenJpegDecoder final : public Decoder {
 public:
  explicit OpenJpegDecoder(const DecodeLimits& limits) : limits_(limits) {}
  Backend backend() const noexcept override { return Backend::openjpeg; }

  Result<PlanarImage> decode(Bytes input, const DecodeOptions& options) override {
    // OpenJPEG is C and reports failures as values; our side (the planes we copy into)
    // can throw: no exception leaves the decoder.
    try {
      return decode_unguarded(input, options);
    } catch (const std::bad_alloc&) {
      return make_error(ErrorKind::limit, "out of memory while decoding");
    } catch (const std::length_error&) {
      return make_error(ErrorKind::limit, "out of memory while decoding (size beyond the allocator's limit)");
    }
  }

 private:
  Result<PlanarImage> decode_unguarded(Bytes input, const DecodeOptions& options) {
    bool jp2 = input.size() >= 12 && input[4] == 'j' && input[5] == 'P';
    if (!jp2 && (input.size() < 2 || input[0] != 0xFF || input[1] != 0x4F))
      return make_error(ErrorKind::corrupt, "not a JPEG 2000 codestream (no SOC marker)");

    std::string error_text;
    std::unique_ptr<opj_codec_t, CodecDeleter> codec(opj_create_decompress(jp2 ? OPJ_CODEC_JP2 : OPJ_CODEC_J2K));
    if (!codec) return make_error(ErrorKind::io, "OpenJPEG could not create a decoder");
    opj_set_error_handler(codec.get(), error_cb, &error_text);
    opj_set_warning_handler(codec.get(), quiet_cb, nullptr);
    opj_set_info_handler(codec.get(), quiet_cb, nullptr);

    opj_dparameters_t params;
    opj_set_default_decoder_parameters(&params);
    params.cp_reduce = static_cast<OPJ_UINT32>(std::max(0, options.reduce));
    params.cp_layer = static_cast<OPJ_UINT32>(std::max(0, options.max_layers));
    if (!opj_setup_decoder(codec.get(), &params)) return failure("setup", error_text);
    opj_decoder_set_strict_mode(codec.get(), options.strict ? OPJ_TRUE : OPJ_FALSE);
    if (options.threads > 1) opj_codec_set_threads(codec.get(), options.threads);

    MemorySource source{input, 0};
    std::unique_ptr<opj_stream_t, StreamDeleter> stream(opj_stream_create(64 * 1024, OPJ_TRUE));
    opj_stream_set_user_data(stream.get(), &source, nullptr);
    opj_stream_set_user_data_length(stream.get(), input.size());
    opj_stream_set_read_function(stream.get(), read_cb);
    opj_stream_set_skip_function(stream.get(), skip_cb);
    opj_stream_set_seek_function(stream.get(), seek_cb);

    opj_image_t* raw_image = nullptr;
    if (!opj_read_header(stream.get(), codec.get(), &raw_image)) return failure("header", error_text);
    std::unique_ptr<opj_image_t, ImageDeleter> image(raw_image);

    // Refuse absurd sizes before OpenJPEG allocates them (network input is untrusted).
    long long w = static_cast<long long>(image->x1) - image->x0;
    long long h = static_cast<long long>(image->y1) - image->y0;
    if (image->numcomps == 0 || static_cast<int>(image->numcomps) > limits_.max_components)
      return make_error(ErrorKind::limit, fmt::format("{} components is outside the limit", image->numcomps));
    if (w <= 0 || h <= 0 || w * h > limits_.max_pixels)
      return make_error(ErrorKind::limit, fmt::format("image {}x{} exceeds the size limit", w, h));
    // All components together: OpenJPEG holds each component's samples (int32) and its tile
    // buffers, and we copy them into the planes (int32): about 12 bytes per sample.
    long long samples = 0;
    for (OPJ_UINT32 c = 0; c < image->numcomps; ++c) {
      const opj_image_comp_t& comp = image->comps[c];
      if (comp.dx == 0 || comp.dy == 0) return make_error(ErrorKind::corrupt, "zero component subsampling");
      samples += ((w + comp.dx - 1) / comp.dx) * ((h + comp.dy - 1) / comp.dy);
    }
    if (samples > limits_.max_samples)
      return make_error(ErrorKind::limit, fmt::format("{} components of {}x{} ({} samples) exceed the limit of {} samples",
                                                      image->numcomps, w, h, samples, limits_.max_samples));
    if (samples * 12 > limits_.max_memory)
      return make_error(ErrorKind::limit,
                        fmt::format("decoding {} components of {}x{} needs {} MiB, more than the memory limit of {} MiB",
                                    image->numcomps, w, h, (samples * 12) >> 20, limits_.max_memory >> 20));

    if (!opj_decode(codec.get(), stream.get(), image.get())) return failure("decode", error_text);
    if (!opj_end_decompress(codec.get(), stream.get())) return failure("end of decode", error_text);
    return to_planar(*image, options.reduce);
  }

  static Error failure(const char* stage, const std::string& text) {
    return make_error(ErrorKind::corrupt,
                      fmt::format("OpenJPEG {} failed: {}", stage, text.empty() ? "no reason given" : text));
  }

  static Result<PlanarImage> to_planar(const opj_image_t& image, int reduce) {
    PlanarImage out;
    auto ceil_shift = [](long long v, int s) { return static_cast<int>((v + (1LL << s) - 1) >> s); };
    out.width = ceil_shift(image.x1, reduce) - ceil_shift(image.x0, reduce);
    out.height = ceil_shift(image.y1, reduce) - ceil_shift(image.y0, reduce);
    if (image.color_space == OPJ_CLRSPC_SRGB) out.colour = ColourCoding::rgb;
    else if (image.color_space == OPJ_CLRSPC_GRAY) out.colour = ColourCoding::grey;
    else if (image.color_space == OPJ_CLRSPC_SYCC) {
      out.colour = ColourCoding::ycbcr_bt601;  // sYCC: full range (IEC 61966-2-1 Amd 1)
      out.full_range = true;
    }
    out.planes.reserve(image.numcomps);
    for (OPJ_UINT32 c = 0; c < image.numcomps; ++c) {
      const opj_image_comp_t& comp = image.comps[c];
      if (!comp.data) return make_error(ErrorKind::corrupt, fmt::format("component {} was not decoded", c));
      Plane p;
      p.width = static_cast<int>(comp.w);
      p.height = static_cast<int>(comp.h);
      p.dx = static_cast<int>(comp.dx);
      p.dy = static_cast<int>(comp.dy);
      p.precision = static_cast<int>(comp.prec);
      p.is_signed = comp.sgnd != 0;
      p.samples.assign(comp.data, comp.data + static_cast<std::size_t>(comp.w) * comp.h);
      out.planes.push_back(std::move(p));
    }
    return out;
  }

  DecodeLimits limits_;
};

}  // namespace

Decoder* make_openjpeg_decoder(const DecodeLimits& limits) { return new OpenJpegDecoder(limits); }

}  // namespace j2k::decoder
