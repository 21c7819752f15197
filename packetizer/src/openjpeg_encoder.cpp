#include "packetizer/openjpeg_encoder.hpp"

#include <fmt/format.h>
#include <openjpeg.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

namespace j2k::packetizer {

namespace {

struct MemorySink {
  std::vector<std::uint8_t>* out;
  std::size_t pos = 0;
};

OPJ_SIZE_T write_cb(void* buffer, OPJ_SIZE_T n, void* user) {
  auto* sink = static_cast<MemorySink*>(user);
  if (sink->pos + n > sink->out->size()) sink->out->resize(sink->pos + n);
  std::memcpy(sink->out->data() + sink->pos, buffer, n);
  sink->pos += n;
  return n;
}
OPJ_OFF_T skip_cb(OPJ_OFF_T n, void* user) {
  auto* sink = static_cast<MemorySink*>(user);
  sink->pos += static_cast<std::size_t>(n);
  if (sink->pos > sink->out->size()) sink->out->resize(sink->pos);
  return n;
}
OPJ_BOOL seek_cb(OPJ_OFF_T pos, void* user) {
  auto* sink = static_cast<MemorySink*>(user);
  sink->pos = static_cast<std::size_t>(pos);
  if (sink->pos > sink->out->size()) sink->out->resize(sink->pos);
  return OPJ_TRUE;
}
void error_cb(const char* msg, void* user) {
  auto* text = static_cast<std::string*>(user);
  if (text->empty()) *text = msg;
}
void quiet_cb(const char*, void*) {}

struct CodecDeleter { void operator()(opj_codec_t* c) const { opj_destroy_codec(c); } };
struct StreamDeleter { void operator()(opj_stream_t* s) const { opj_stream_destroy(s); } };
struct ImageDeleter { void operator()(opj_image_t* i) const { opj_image_destroy(i); } };

OPJ_PROG_ORDER to_opj(Progression p) {
  switch (p) {
    case Progression::LRCP: return OPJ_LRCP;
    case Progression::RLCP: return OPJ_RLCP;
    case Progression::RPCL: return OPJ_RPCL;
    case Progression::PCRL: return OPJ_PCRL;
    case Progression::CPRL: return OPJ_CPRL;
  }
  return OPJ_CPRL;
}

}  // namespace

Result<std::vector<std::uint8_t>> encode_openjpeg(const PlanarImage& image, const EncodeParams& p) {
  if (image.planes.empty() || image.width <= 0 || image.height <= 0)
    return make_error(ErrorKind::corrupt, "cannot encode an empty image");

  std::vector<opj_image_cmptparm_t> comps(image.planes.size());
  for (std::size_t c = 0; c < image.planes.size(); ++c) {
    const Plane& plane = image.planes[c];
    opj_image_cmptparm_t& cp = comps[c];
    std::memset(&cp, 0, sizeof cp);
    cp.dx = static_cast<OPJ_UINT32>(plane.dx);
    cp.dy = static_cast<OPJ_UINT32>(plane.dy);
    cp.w = static_cast<OPJ_UINT32>(plane.width);
    cp.h = static_cast<OPJ_UINT32>(plane.height);
    cp.prec = static_cast<OPJ_UINT32>(plane.precision);
    cp.sgnd = plane.is_signed ? 1 : 0;
  }
  // OpenJPEG turns a rate into bytes as if every component had the first one's size
  // (opj_j2k_setup_encoder), so the ratio must be computed the same way to hit the target.
  const Plane& first = image.planes[0];
  const double raw_bits = static_cast<double>(image.planes.size()) * first.width * first.height * first.precision;
  OPJ_COLOR_SPACE space = image.colour == ColourCoding::rgb    ? OPJ_CLRSPC_SRGB
                          : image.colour == ColourCoding::grey ? OPJ_CLRSPC_GRAY
                                                               : OPJ_CLRSPC_SYCC;
  std::unique_ptr<opj_image_t, ImageDeleter> img(
      opj_image_create(static_cast<OPJ_UINT32>(comps.size()), comps.data(), space));
  if (!img) return make_error(ErrorKind::io, "OpenJPEG could not allocate the image");
  img->x0 = 0;
  img->y0 = 0;
  img->x1 = static_cast<OPJ_UINT32>(image.width);
  img->y1 = static_cast<OPJ_UINT32>(image.height);
  for (std::size_t c = 0; c < image.planes.size(); ++c)
    std::copy(image.planes[c].samples.begin(), image.planes[c].samples.end(), img->comps[c].data);

  opj_cparameters_t params;
  opj_set_default_encoder_parameters(&params);
  const int layers = std::clamp(p.layers, 1, 32);
  params.tcp_numlayers = layers;
  params.cp_disto_alloc = 1;
  const double target_bits = p.target_bytes ? static_cast<double>(p.target_bytes) * 8.0 : raw_bits / 40.0;
  const double final_ratio = p.lossless ? 1.0 : std::max(1.0, raw_bits / target_bits);
  params.irreversible = p.lossless ? 0 : 1;
  for (int l = 0; l < layers; ++l) {
    // Layer l reaches ratio final·2^(layers−1−l): each layer doubles the rate; the last is the target
    // (0 = lossless, OpenJPEG's convention).
    const bool last = l == layers - 1;
    params.tcp_rates[l] = last && p.lossless ? 0.0f : static_cast<float>(final_ratio * std::ldexp(1.0, layers - 1 - l));
  }
  if (p.precinct_log2 > 0) {
    params.csty |= 0x01;
    params.res_spec = 1;
    params.prcw_init[0] = params.prch_init[0] = 1 << p.precinct_log2;
  }
  if (p.tile > 0) {
    params.tile_size_on = OPJ_TRUE;
    params.cp_tdx = p.tile;
    params.cp_tdy = p.tile_height > 0 ? p.tile_height : p.tile;
  }
  params.numresolution = std::clamp(p.resolutions, 1, 33);
  params.cblockw_init = p.codeblock;
  params.cblockh_init = p.codeblock;
  params.prog_order = to_opj(p.progression);
  params.tcp_mct = 0;  // components are YCbCr (or grey) already; RGB would take MCT below
  // RGB and digital cinema's X'Y'Z' take the component transform (DCI codestreams do).
  if ((image.colour == ColourCoding::rgb || image.colour == ColourCoding::xyz) && image.planes.size() >= 3 &&
      subsampling_name(image) == "4:4:4")
    params.tcp_mct = 1;
  params.csty |= (p.sop ? 0x02 : 0) | (p.eph ? 0x04 : 0);
  if (p.tile_part_per_component) {
    params.tp_on = 1;
    params.tp_flag = 'C';
  }

  std::string error_text;
  std::unique_ptr<opj_codec_t, CodecDeleter> codec(opj_create_compress(OPJ_CODEC_J2K));
  opj_set_error_handler(codec.get(), error_cb, &error_text);
  opj_set_warning_handler(codec.get(), quiet_cb, nullptr);
  opj_set_info_handler(codec.get(), quiet_cb, nullptr);
  if (!opj_setup_encoder(codec.get(), &params, img.get()))
    return make_error(ErrorKind::unsupported, fmt::format("OpenJPEG encoder setup failed: {}", error_text));
  if (p.threads > 1) opj_codec_set_threads(codec.get(), p.threads);

  std::vector<std::uint8_t> out;
  out.reserve(p.target_bytes ? p.target_bytes + 4096 : static_cast<std::size_t>(raw_bits / 16));
  MemorySink sink{&out, 0};
  std::unique_ptr<opj_stream_t, StreamDeleter> stream(opj_stream_create(1 << 20, OPJ_FALSE));
  opj_stream_set_user_data(stream.get(), &sink, nullptr);
  opj_stream_set_write_function(stream.get(), write_cb);
  opj_stream_set_skip_function(stream.get(), skip_cb);
  opj_stream_set_seek_function(stream.get(), seek_cb);

  if (!opj_start_compress(codec.get(), img.get(), stream.get()) || !opj_encode(codec.get(), stream.get()) ||
      !opj_end_compress(codec.get(), stream.get()))
    return make_error(ErrorKind::io, fmt::format("OpenJPEG encode failed: {}", error_text));
  out.resize(sink.pos);
  if (p.rsiz != 0 && out.size() >= 8 && out[2] == 0xFF && out[3] == 0x51) {
    // Rsiz is SIZ's first parameter, after SOC, the SIZ marker and Lsiz (A.5.1).
    out[6] = static_cast<std::uint8_t>(p.rsiz >> 8);
    out[7] = static_cast<std::uint8_t>(p.rsiz);
  }
  return out;
}

}  // namespace j2k::packetizer
