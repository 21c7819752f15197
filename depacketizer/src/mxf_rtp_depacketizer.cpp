#include "depacketizer/mxf_rtp_depacketizer.hpp"
#include "depacketizer/timecode.hpp"

#include <algorithm>

#include "core/log.hpp"

namespace j2k::depacketizer {

MxfRtpDepacketizer::MxfRtpDepacketizer(Sink sink, MxfUnitLimits limits)
    : sink_(std::move(sink)), limits_(limits) {
  buffer_.reserve(1 << 20);
}

void MxfRtpDepacketizer::lose_sync() {
  if (partial_ && classify_key(partial_->key) == KlvKind::picture_element) {
    begin_unit_if_needed(current_timestamp_, current_arrival_);
    pending_->expected_elements = picture_element_id(partial_->key).count;
    // The element being assembled is cut: its frame cannot be complete. The bytes before the
    // loss are an exact prefix of the codestream, so they go on (flagged) for a resilient
    // decoder to use if the incomplete-frame policy lets it.
    pending_->complete = false;
    const std::size_t have = buffer_.size() > partial_->header_size ? buffer_.size() - partial_->header_size : 0;
    pending_->missing_bytes += partial_->length > have ? partial_->length - have : 0;
    if (have > 0) {
      pending_->codestreams.emplace_back(buffer_.begin() + static_cast<std::ptrdiff_t>(partial_->header_size), buffer_.end());
      pending_->missing_ranges.push_back({pending_->codestreams.size() - 1, have, partial_->length});
    }
    ++counters_.damaged_elements;
  } else if (partial_ && classify_key(partial_->key) == KlvKind::sound_element) {
    ++audio_counters_.damaged;  // a cut sound element is dropped: a gap in the sound, not noise
  }
  buffer_.clear();
  partial_.reset();
  synced_ = false;
}

void MxfRtpDepacketizer::push(const RtpPacket& packet, bool loss_before,
                              std::chrono::steady_clock::time_point arrival) {
  if (loss_before) {
    lose_sync();  // an element cut by the loss marks its unit incomplete
    // The lost packets may have held the rest of the current timestamp's unit: if none was
    // emitted for it yet, open one so that it is reported (incomplete) rather than vanish.
    if (!pending_ && !emitted_current_ && have_timestamp_) {
      begin_unit_if_needed(current_timestamp_, current_arrival_);
      pending_->expected_elements = last_element_count_;
    }
  }
  // A KLV still unfinished when it should have ended (its declared length outran what the
  // sender sent for it): after a packet with the marker bit, which RFC 6597 sets on a KLV
  // unit's last packet, a payload that begins with a key we know is a new KLV, not more of
  // the old one. Without marker bits the time cap ends it once later content packages'
  // packets are being taken into it (a slow stream's KLV may take long, within its own
  // timestamp). Either way it is counted and we resynchronise, rather than swallow the
  // stream into one value up to max_klv_bytes; checked before a new timestamp moves the
  // unit on, so that the cut element is reported under its own timestamp.
  if (!buffer_.empty()) {
    if (previous_marker_ && begins_with_known_key(packet.payload)) {
      ++counters_.malformed;
      ++counters_.klv_overruns;
      if (cap_log_.allow())
        logger("depacketizer")->warn("a KLV declared longer than its packets: dropped at the next key (timestamp {})",
                                     packet.timestamp);
      lose_sync();
    } else if (packet.timestamp != klv_timestamp_ && arrival - klv_since_ > limits_.max_unit_age) {
      ++counters_.units_capped;
      ++counters_.klv_overruns;
      if (cap_log_.allow())
        logger("depacketizer")->warn("a KLV unfinished after {} ms: dropped (cap {} ms)",
                                     std::chrono::duration_cast<std::chrono::milliseconds>(arrival - klv_since_).count(),
                                     limits_.max_unit_age.count());
      lose_sync();
    }
  }
  previous_marker_ = packet.marker;
  if (packet.timestamp != current_timestamp_ || !have_timestamp_) {
    emit_pending();
    emitted_current_ = false;
    capped_current_ = false;
  }
  have_timestamp_ = true;
  current_timestamp_ = packet.timestamp;
  current_arrival_ = arrival;
  // The time cap holds even when no element completes (one huge KLV trickling in).
  if (pending_ && over_cap(0)) cap_pending();
  if (loss_before && !emitted_current_) {
    // The lost packets may have held a whole element of this timestamp's unit: open the unit
    // now so that, if its elements never come, it is still reported (as incomplete). Once the
    // unit was handed on, its pictures were all in: what was lost followed them (sound).
    begin_unit_if_needed(packet.timestamp, arrival);
    pending_->expected_elements = last_element_count_;
  }
  if (packet.payload.empty()) return;

  if (!synced_) {
    // Resynchronise only at a payload that begins with a key we know (wire-format.md §2).
    auto header = parse_klv_header(packet.payload);
    bool known = false;
    if (header.ok()) known = classify_key(header->key) != KlvKind::unknown;
    else if (header.error().kind == ErrorKind::need_more_data)
      known = std::equal(std::begin(kUlPrefix), std::end(kUlPrefix), packet.payload.begin(),
                         packet.payload.begin() + std::min<std::size_t>(4, packet.payload.size()));
    if (!known) {
      ++counters_.resync_skipped_packets;
      return;
    }
    synced_ = true;
  }
  const bool fresh = buffer_.empty();
  buffer_.insert(buffer_.end(), packet.payload.begin(), packet.payload.end());
  // What is left over is one KLV not yet complete: when it began in this packet, its clock starts.
  if (consume_buffer() || fresh) {
    klv_since_ = arrival;
    klv_timestamp_ = packet.timestamp;
  }
}

bool MxfRtpDepacketizer::begins_with_known_key(Bytes payload) {
  auto header = parse_klv_header(payload);
  if (header.ok()) return classify_key(header->key) != KlvKind::unknown;
  return false;
}

bool MxfRtpDepacketizer::consume_buffer() {
  std::size_t offset = 0;
  while (synced_) {
    Bytes rest(buffer_.data() + offset, buffer_.size() - offset);
    if (rest.empty()) break;
    auto header = parse_klv_header(rest);
    if (!header.ok() && header.error().kind == ErrorKind::need_more_data) break;
    // A bad key or BER form, or a length beyond any frame we accept: corruption, not
    // something to buffer. Drop what we hold and resynchronise at the next key.
    const KlvKind kind = header.ok() ? classify_key(header->key) : KlvKind::unknown;
    const bool sound = kind == KlvKind::sound_element;
    // A picture element larger than a whole unit may be could never be handed on either.
    const bool too_long = header.ok() && (header->length > limits_.max_klv_bytes ||
                                          (sound && header->length > kMaxSoundElementBytes) ||
                                          (kind == KlvKind::picture_element && header->length > limits_.max_unit_bytes));
    if (!header.ok() || too_long) {
      ++counters_.malformed;
      if (sound) ++audio_counters_.malformed;
      partial_.reset();
      buffer_.clear();
      synced_ = false;
      return offset > 0;
    }
    partial_ = *header;
    const std::size_t total = header->header_size + static_cast<std::size_t>(header->length);
    if (rest.size() < total) break;
    handle_klv(*header, rest.subspan(header->header_size, static_cast<std::size_t>(header->length)));
    partial_.reset();
    offset += total;
  }
  if (offset) buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(offset));
  return offset > 0;
}

void MxfRtpDepacketizer::begin_unit_if_needed(std::uint32_t timestamp, std::chrono::steady_clock::time_point arrival) {
  if (pending_) return;
  pending_.emplace();
  pending_->rtp_timestamp = timestamp;
  pending_->first_arrival = arrival;
  if (time_code_timestamp_ == timestamp) pending_->time_code = time_code_;
}

void MxfRtpDepacketizer::handle_klv(const KlvHeader& header, Bytes value) {
  ++counters_.klv_units;
  switch (classify_key(header.key)) {
    case KlvKind::cdci_descriptor:
    case KlvKind::rgba_descriptor: {
      auto d = parse_picture_descriptor(value, classify_key(header.key) == KlvKind::rgba_descriptor);
      if (d.ok()) {
        // A sender repeats its descriptor with every partition: log a change, at most once a
        // second (a hostile stream can change it with every packet).
        if ((!descriptor_ || descriptor_->describe() != d->describe()) && descriptor_log_.allow())
          logger("depacketizer")->info("picture descriptor: {}", d->describe());
        descriptor_ = *d;
        ++counters_.descriptors;
      } else {
        ++counters_.malformed;
        if (d.error().kind == ErrorKind::limit) ++counters_.descriptors_rejected;
        if (descriptor_log_.allow()) logger("depacketizer")->warn("picture descriptor ignored: {}", d.error().message);
      }
      break;
    }
    case KlvKind::picture_element: {
      ++counters_.picture_elements;
      const PictureElementId id = picture_element_id(header.key);
      if (capped_current_) break;  // the rest of a unit that was cut at its cap
      if (pending_ && over_cap(value.size())) {
        cap_pending();
        break;
      }
      begin_unit_if_needed(current_timestamp_, current_arrival_);
      pending_->expected_elements = id.count;
      last_element_count_ = id.count;
      pending_->codestreams.emplace_back(value.begin(), value.end());
      if (static_cast<int>(pending_->codestreams.size()) >= id.count) emit_pending();
      break;
    }
    case KlvKind::header_partition:
    case KlvKind::body_partition:
      sound_formats_.clear();  // the header metadata that follows lists the sound descriptors afresh
      break;
    case KlvKind::sound_descriptor:
      on_sound_descriptor(value);
      break;
    case KlvKind::sound_element:
      on_sound_element(header, value);
      break;
    case KlvKind::system_item: {
      // The content package's time code (SMPTE ST 12-1 in the system metadata pack); it
      // belongs to the picture elements that follow with the same timestamp. Only the pack
      // (item 01) holds it; the package metadata set (02) and other system items do not.
      if (header.key[14] != 0x01) break;
      if (auto tc = system_item_timecode(value, descriptor_ ? descriptor_->frame_rate() : 0.0)) {
        time_code_ = tc->to_string();
        time_code_timestamp_ = current_timestamp_;
        // A unit of this timestamp may be open already (opened at a loss before its system
        // item was read): the time code is its own all the same.
        if (pending_ && pending_->rtp_timestamp == current_timestamp_) pending_->time_code = time_code_;
      }
      break;
    }
    default:
      break;  // partition packs, primer, other metadata and fill need no action
  }
}

bool MxfRtpDepacketizer::over_cap(std::size_t adding) const {
  return pending_->total_bytes() + adding > limits_.max_unit_bytes ||
         current_arrival_ - pending_->first_arrival > limits_.max_unit_age;
}

void MxfRtpDepacketizer::cap_pending() {
  // Hand on what arrived, marked incomplete, and drop the rest of this timestamp's elements:
  // a unit only leaves at its element count or at a timestamp change, and a sender that
  // never gets there must not make us hold its bytes without end.
  ++counters_.units_capped;
  if (cap_log_.allow())
    logger("depacketizer")->warn("frame at {} cut after {} elements, {} bytes, {} ms pending (cap {} MiB, {} ms)",
                                 current_timestamp_, pending_->codestreams.size(), pending_->total_bytes(),
                                 std::chrono::duration_cast<std::chrono::milliseconds>(current_arrival_ - pending_->first_arrival).count(),
                                 limits_.max_unit_bytes >> 20, limits_.max_unit_age.count());
  pending_->complete = false;
  emit_pending();
  capped_current_ = true;
}

void MxfRtpDepacketizer::emit_pending() {
  if (!pending_) return;
  CodestreamUnit unit = std::move(*pending_);
  pending_.reset();
  if (static_cast<int>(unit.codestreams.size()) < unit.expected_elements) unit.complete = false;
  if (unit.codestreams.empty() && unit.complete) return;
  unit.index = next_index_++;
  if (unit.rtp_timestamp == current_timestamp_) emitted_current_ = true;
  unit.last_arrival = current_arrival_;
  unit.descriptor = descriptor_;
  if (unit.complete) ++counters_.units_complete;
  else ++counters_.units_incomplete;
  sink_(std::move(unit));
}

void MxfRtpDepacketizer::flush() {
  if (partial_) lose_sync();
  emit_pending();
}

}  // namespace j2k::depacketizer
