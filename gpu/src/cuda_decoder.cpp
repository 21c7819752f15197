// The "cuda" backend: the own decoder's tier-2/tier-1 on CPU threads, reconstruction on
// the GPU, CPU reconstruction as the fallback. Built with and without CUDA (without, the
// reconstructor's create() fails and the factory hands out the CPU decoder).
#include "gpu/cuda_decoder.hpp"

#include <fmt/format.h>

#include "decoder/own_decoder.hpp"
#include "gpu/cuda_gl.hpp"

namespace j2k::gpu {

namespace {

class CudaBackend final : public CudaDecoder {
 public:
  CudaBackend(const CudaDecoderOptions& options, std::unique_ptr<CudaReconstructor> rec)
      : options_(options), rec_(std::move(rec)), coefficients_(options.limits) {}

  bool gpu_active() const noexcept override { return active_; }
  decoder::DecodeStats last_stats() const override { return stats_; }
  GpuTimes last_gpu_times() const override { return times_; }

  Result<PlanarImage> decode(Bytes codestream, const decoder::DecodeOptions& options) override {
    ReconstructRequest req;
    req.planar = true;
    return run(codestream, options, req);
  }

  Result<PlanarImage> decode_to_device(Bytes codestream, const decoder::DecodeOptions& options, const DeviceTarget& target,
                                       const ColourInterpretation& colour, bool want_planar) override {
    ReconstructRequest req;
    req.planar = want_planar;
    req.target = &target;
    req.colour = colour;
    return run(codestream, options, req);
  }

  Status decode_to_pbo(Bytes codestream, const decoder::DecodeOptions& options, CudaGlPbo& pbo,
                       const ColourInterpretation& colour, int row0, int row_step) override {
    ReconstructRequest req;
    req.planar = false;
    req.pbo = &pbo;
    req.pbo_row0 = row0;
    req.pbo_row_step = row_step;
    req.colour = colour;
    auto r = run(codestream, options, req);
    if (!r) return r.error();
    return {};
  }

 private:
  Result<PlanarImage> run(Bytes codestream, const decoder::DecodeOptions& options, const ReconstructRequest& req) {
    stats_ = {};
    times_ = {};
    // One CoefficientDecoder per backend: its thread pool and coefficient buffers live
    // across frames (the reconstruction below is complete when it returns, so the frame's
    // buffers go back to it right after).
    auto frame = coefficients_.decode(codestream, options, &stats_);
    if (!frame) return frame.error();
    struct Recycle {
      decoder::CoefficientDecoder& to;
      decoder::CoefficientFrame& frame;
      ~Recycle() { to.recycle(std::move(frame)); }
    } recycle{coefficients_, *frame};
    if (active_) {
      auto img = rec_->reconstruct(*frame, req, &times_);
      if (img) {
        stats_.idwt_ms = times_.idwt_ms;
        stats_.colour_ms = times_.store_ms + times_.colour_ms;
        return img;
      }
      if (options_.mode == GpuMode::on || img.error().kind != ErrorKind::io) return img.error();
      // A device failure in auto mode: this and every later frame go to the CPU.
      active_ = false;
      last_error_ = img.error().message;
    }
    decoder::ReconstructTimes rt;
    PlanarImage img;
    if (auto st = coefficients_.reconstruct(*frame, img, &rt); !st) return st.error();
    stats_.idwt_ms = rt.idwt_ms;
    stats_.colour_ms = rt.colour_ms;
    if (req.target || req.pbo)
      return make_error(ErrorKind::io, "GPU unavailable after an error (" + last_error_ +
                                           "); decoded on the CPU, display through the CPU path");
    return img;
  }

  CudaDecoderOptions options_;
  std::unique_ptr<CudaReconstructor> rec_;
  decoder::CoefficientDecoder coefficients_;  // tier-2 + tier-1; used by one thread at a time
  bool active_ = true;
  std::string last_error_;
  decoder::DecodeStats stats_;
  GpuTimes times_;
};

}  // namespace

Result<std::unique_ptr<CudaDecoder>> make_cuda_decoder_typed(const CudaDecoderOptions& options) {
  if (options.mode == GpuMode::off) return make_error(ErrorKind::unsupported, "--gpu off");
  CudaReconstructor::Options ro;
  ro.device = options.device;
  ro.timing = true;
  auto rec = CudaReconstructor::create(ro);
  if (!rec) return rec.error();
  return std::unique_ptr<CudaDecoder>(new CudaBackend(options, std::move(*rec)));
}

Result<std::unique_ptr<decoder::Decoder>> make_cuda_decoder(const CudaDecoderOptions& options) {
  if (options.mode == GpuMode::off) return decoder::make_own_decoder(options.limits);
  auto typed = make_cuda_decoder_typed(options);
  if (typed) return std::unique_ptr<decoder::Decoder>(std::move(*typed));
  if (options.mode == GpuMode::on) return typed.error();
  return decoder::make_own_decoder(options.limits);  // automatic: CPU reconstruction
}

}  // namespace j2k::gpu
