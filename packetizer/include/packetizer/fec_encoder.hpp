#pragma once
// SMPTE ST 2022-1 FEC, send side: column and row XOR parity over an L × D matrix of media
// packets (the header layout is in depacketizer/fec_2022_1.hpp beside its parser).
#include <cstdint>
#include <vector>

#include "core/byte_reader.hpp"

namespace j2k::packetizer {

/// Builds column and row FEC packets for a media stream (the sender side). L columns × D
/// rows; D = 0 gives row FEC only. FEC packets carry SSRC 0 like GStreamer's encoder.
class FecEncoder {
 public:
  FecEncoder(int columns, int rows, std::uint8_t payload_type = 96);
  /// Adds a media datagram (consecutive sequence numbers expected); appends the FEC packets
  /// that became complete to `column_out` / `row_out`.
  void add(Bytes media_datagram, std::vector<std::vector<std::uint8_t>>& column_out,
           std::vector<std::vector<std::uint8_t>>& row_out);

 private:
  struct Parity {
    int n = 0;
    std::uint16_t base = 0;
    std::uint16_t length = 0;
    std::uint8_t pt = 0;
    std::uint32_t ts = 0;
    bool marker = false;
    std::vector<std::uint8_t> payload;
  };
  static void update(Parity& p, std::uint16_t seq, bool marker, std::uint8_t pt, std::uint32_t ts, Bytes payload);
  std::vector<std::uint8_t> finish(Parity& p, bool row, std::uint16_t sequence, std::uint32_t timestamp) const;

  int l_, d_;
  std::uint8_t pt_;
  Parity row_;
  std::vector<Parity> columns_;
  int position_ = 0;  // index of the next packet within the matrix
  std::uint16_t row_sequence_ = 0, column_sequence_ = 0;
};

}  // namespace j2k::packetizer
