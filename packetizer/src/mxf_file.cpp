#include "packetizer/mxf_file.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace j2k::packetizer {

// The KLV/wire-format vocabulary (keys, BER lengths, payload headers) is the depacketizer's;
// the sender writes what the receiver reads.
using namespace j2k::depacketizer;

Result<MxfFileContents> read_mxf(Bytes file) {
  // Skip a run-in (at most 64 KiB, ST 377-1 6.5) up to the header partition pack key.
  static constexpr std::uint8_t kPartition[13] = {0x06, 0x0E, 0x2B, 0x34, 0x02, 0x05, 0x01,
                                                  0x01, 0x0D, 0x01, 0x02, 0x01, 0x01};
  const std::size_t search = std::min<std::size_t>(file.size(), 65536 + sizeof kPartition);
  auto it = std::search(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(search), std::begin(kPartition),
                        std::end(kPartition));
  if (it == file.begin() + static_cast<std::ptrdiff_t>(search))
    return make_error(ErrorKind::corrupt, "not an MXF file: no partition pack in the first 64 KiB");

  MxfFileContents out;
  std::size_t pos = static_cast<std::size_t>(it - file.begin());
  bool essence_started = false;
  std::vector<std::vector<std::uint8_t>> package;
  int package_pictures = 0;
  auto close_package = [&] {
    if (package_pictures > 0) out.packages.push_back(std::move(package));
    package.clear();
    package_pictures = 0;
  };
  while (pos < file.size()) {
    auto header = parse_klv_header(file.subspan(pos));
    if (!header) {
      if (header.error().kind == ErrorKind::need_more_data && file.size() - pos < 17) break;  // trailing bytes
      return make_error(ErrorKind::corrupt, fmt::format("MXF KLV at offset {}: {}", pos, header.error().message));
    }
    if (header->length > file.size() - pos - header->header_size)
      return make_error(ErrorKind::corrupt, fmt::format("MXF KLV at offset {} is longer than the file", pos));
    const std::size_t total = header->header_size + static_cast<std::size_t>(header->length);
    Bytes klv = file.subspan(pos, total);
    Bytes value = klv.subspan(header->header_size);
    const KlvKind kind = classify_key(header->key);
    switch (kind) {
      case KlvKind::header_partition:
      case KlvKind::primer_pack:
      case KlvKind::other_metadata:
      case KlvKind::j2k_subdescriptor:
        if (!essence_started && (kind != KlvKind::header_partition || out.header.empty()))
          out.header.emplace_back(klv.begin(), klv.end());
        else ++out.skipped_klvs;
        break;
      case KlvKind::sound_descriptor:
        if (!essence_started) {
          out.header.emplace_back(klv.begin(), klv.end());
          if (!out.audio && out.audio_problem.empty()) {
            auto d = parse_sound_descriptor(value, header->key[14] == 0x47);
            auto f = d ? d->format() : Result<AudioFormat>(d.error());
            if (f) out.audio = *f;
            else out.audio_problem = f.error().message;
          }
        } else {
          ++out.skipped_klvs;
        }
        break;
      case KlvKind::cdci_descriptor:
      case KlvKind::rgba_descriptor:
        if (!essence_started) {
          out.header.emplace_back(klv.begin(), klv.end());
          if (auto d = parse_picture_descriptor(value, kind == KlvKind::rgba_descriptor)) out.descriptor = *d;
        } else {
          ++out.skipped_klvs;
        }
        break;
      case KlvKind::system_item:
        // A system item begins a package, unless this package has no picture yet: FFmpeg
        // follows the system metadata pack with a package metadata set, both system items.
        essence_started = true;
        if (package_pictures > 0) close_package();
        package.emplace_back(klv.begin(), klv.end());
        break;
      case KlvKind::picture_element: {
        essence_started = true;
        // A picture after the package's pictures are all in begins the next package (one
        // without a system item); the sound elements after the pictures stay with them.
        if (package_pictures >= picture_element_id(header->key).count) close_package();
        package.emplace_back(klv.begin(), klv.end());
        ++package_pictures;
        break;
      }
      case KlvKind::sound_element:
        essence_started = true;
        package.emplace_back(klv.begin(), klv.end());
        ++out.sound_elements;
        break;
      default:
        ++out.skipped_klvs;  // fill, index tables, body/footer partitions, unknown
        break;
    }
    pos += total;
  }
  close_package();
  if (out.packages.empty()) return make_error(ErrorKind::corrupt, "MXF file holds no JPEG 2000 picture elements");
  return out;
}

Result<PackageParts> package_parts(const std::vector<std::vector<std::uint8_t>>& klvs,
                                   const std::optional<AudioFormat>& audio) {
  PackageParts parts;
  std::optional<int> track;
  for (const auto& bytes : klvs) {
    auto header = parse_klv_header(bytes);
    if (!header || header->header_size + header->length > bytes.size())
      return make_error(ErrorKind::corrupt, "content package KLV cut short");
    Bytes value = Bytes(bytes).subspan(header->header_size, static_cast<std::size_t>(header->length));
    const KlvKind kind = classify_key(header->key);
    if (kind == KlvKind::picture_element) parts.pictures.push_back(value);
    if (kind != KlvKind::sound_element || !audio) continue;
    const int number = sound_element_id(header->key).number;
    if (!track) track = number;
    if (number != *track || parts.sound) continue;  // the first track, once
    auto block = decode_pcm_element(value, *audio);
    if (!block) return make_error(ErrorKind::corrupt, "sound element: " + block.error().message);
    parts.sound = std::move(block).value();
  }
  return parts;
}

}  // namespace j2k::packetizer
