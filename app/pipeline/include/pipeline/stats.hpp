#pragma once
// Live statistics: what a monitoring engineer reads once a second, and the JSON summary.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "pipeline/receive_pipeline.hpp"

namespace j2k::pipeline {

/// Everything counted so far, read at one moment.
struct StatsSample {
  std::chrono::steady_clock::time_point at{};
  std::uint64_t datagrams = 0;
  std::uint64_t socket_bytes = 0;
  std::uint64_t receiver_dropped = 0;  ///< queue full or pool empty inside j2kplay
  depacketizer::StreamSnapshot stream;
  DecodeSnapshot decode;
  std::string transport;                           ///< url format: mxf, rfc5371, ts
  depacketizer::ProtectionSnapshot protection;     ///< 2022-7 paths, 2022-1 FEC
  std::optional<depacketizer::TsSnapshot> ts;      ///< MPEG-2 TS layer, when TS

  static StatsSample take(const ReceivePipeline& pipeline);
};

/// "t=3s  pkts 10842/s  lost 0  frames 50/s (0 incomplete)  35.2 Mbit/s  decoded 50/s  1280x720 4:2:2 8-bit  jitter 0.12 ms"
std::string per_second_line(const StatsSample& now, const StatsSample& before, double elapsed_s);

/// The final summary (j2kprobe --json). `elapsed_s` is the receive duration.
nlohmann::json summary_json(const StatsSample& s, double elapsed_s);

}  // namespace j2k::pipeline
