// Sound in MXF carried over RTP (RFC 6597): sound descriptors in the header metadata and the
// frame-wrapped sound elements of each content package (SMPTE ST 382), handed on as blocks
// of PCM stamped with the content package's RTP timestamp.
#include "core/log.hpp"
#include "depacketizer/mxf_rtp_depacketizer.hpp"

namespace j2k::depacketizer {

void MxfRtpDepacketizer::on_sound_descriptor(Bytes value) {
  // The descriptor's place among the sound descriptors of this header says which track it
  // describes (the n-th descriptor, the n-th track, as FFmpeg and GStreamer write them).
  auto parsed = parse_sound_descriptor(value, false);
  std::optional<AudioFormat> format;
  if (parsed) {
    ++audio_counters_.descriptors;
    auto f = parsed->format();
    if (f) format = *f;
    else {
      ++audio_counters_.descriptors_rejected;
      if (sound_log_.allow()) logger("depacketizer")->warn("sound descriptor ignored: {}", f.error().message);
    }
  } else {
    ++audio_counters_.descriptors_rejected;
    ++counters_.malformed;
    if (sound_log_.allow()) logger("depacketizer")->warn("sound descriptor ignored: {}", parsed.error().message);
  }
  if (sound_formats_.size() >= kMaxSoundDescriptors) return;
  sound_formats_.push_back(format);
  // The first descriptor describes the followed track: a change takes effect at once (a
  // rejected one stops the sound rather than letting its elements be read in the old format).
  if (sound_formats_.size() == 1) {
    if (format && (!sound_format_ || !(*sound_format_ == *format)) && sound_log_.allow())
      logger("depacketizer")->info("sound: {} channels, {} Hz, {}-bit PCM", format->channels, format->sample_rate,
                                   format->bits);
    sound_format_ = format;
  }
}

void MxfRtpDepacketizer::on_sound_element(const KlvHeader& header, Bytes value) {
  const SoundElementId id = sound_element_id(header.key);
  if (!sound_track_) sound_track_ = id.number;
  if (id.number != *sound_track_) {
    ++audio_counters_.other_tracks;
    return;
  }
  if (id.clip_wrapped()) {
    ++audio_counters_.malformed;  // a clip's worth of sound in one element is not a live stream
    return;
  }
  if (!sound_format_) {
    ++audio_counters_.without_descriptor;
    return;
  }
  auto block = decode_pcm_element(value, *sound_format_);
  if (!block) {
    ++audio_counters_.malformed;
    if (sound_log_.allow()) logger("depacketizer")->warn("sound element at {} dropped: {}", current_timestamp_, block.error().message);
    return;
  }
  if (block->samples.empty()) return;
  block->rtp_timestamp = current_timestamp_;
  block->index = audio_counters_.blocks;
  count_block(audio_counters_, sound_sequence_, last_block_format_, *block);
  if (audio_sink_) audio_sink_(std::move(block).value());
}

}  // namespace j2k::depacketizer
