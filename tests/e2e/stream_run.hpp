#pragma once
// A receiver and a sender run together, checked the way every end-to-end test starts: both
// tools exited 0, and the receiver's --json summary is at hand.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <tuple>

#include "process.hpp"

namespace j2k::test {

struct StreamRun {
  CommandResult probe;     ///< the receiver
  CommandResult tx;        ///< the sender
  nlohmann::json summary;  ///< the receiver's --json output, once both succeeded
};

/// Fatal unless both tools exited 0; then parses the receiver's summary. Call it inside
/// ASSERT_NO_FATAL_FAILURE.
inline void expect_both_succeeded(StreamRun& run) {
  ASSERT_EQ(run.tx.exit_code, 0) << run.tx.err;
  ASSERT_EQ(run.probe.exit_code, 0) << run.probe.err;
  run.summary = nlohmann::json::parse(run.probe.out);
}

/// run_receiver_and_sender, then expect_both_succeeded. Call it inside ASSERT_NO_FATAL_FAILURE.
inline void receive_stream(const std::string& receiver, const std::string& sender, const std::string& tag, StreamRun& run) {
  std::tie(run.probe, run.tx) = run_receiver_and_sender(receiver, sender, tag);
  expect_both_succeeded(run);
}

/// j2kprobe on `url` with `probe_args`, and j2ksend to `url` with `send_args`: the common case
/// of receive_stream.
inline void probe_and_send(const std::string& url, const std::string& probe_args, const std::string& send_args,
                           const std::string& tag, StreamRun& run) {
  receive_stream(bin("j2kprobe") + " " + url + " " + probe_args, bin("j2ksend") + " --to " + url + " " + send_args, tag, run);
}

/// A JSON file a tool wrote (a manifest, a checksum list).
inline nlohmann::json json_file(const std::string& path) { return nlohmann::json::parse(slurp(path)); }

#ifdef J2K_TEST_CACHE_DIR
/// j2ksend's --cache-dir for the tests' shared encode cache (a picture is encoded once per build).
inline const std::string kCache = std::string(" --cache-dir ") + J2K_TEST_CACHE_DIR;

/// For tests of one stream from j2ksend to j2kprobe over multicast on the loopback interface:
/// `stream()` runs both (the sender once the probe listens); `summary` is what the probe said,
/// `sent` and `decoded` what the run recorded when asked to.
class LoopbackStream : public ::testing::Test {
 protected:
  /// What a run records besides the summary: j2ksend's --manifest TAG.tx.json (read into
  /// `sent`) and j2kprobe's --checksums TAG.rx.json (its per-frame list read into `decoded`).
  enum Records : unsigned { kSummary = 0, kManifest = 1, kChecksums = 2, kManifestAndChecksums = 3 };

  /// j2kprobe on multicast `group` ("address:port") with `probe_args`; j2ksend to it with
  /// `send_args` and the encode cache. Call it inside ASSERT_NO_FATAL_FAILURE.
  void stream(const std::string& group, const std::string& probe_args, const std::string& send_args, const std::string& tag,
              Records records = kSummary) {
    const bool manifest = (records & kManifest) != 0, checksums = (records & kChecksums) != 0;
    probe_and_send("'rtp://" + group + "?iface=127.0.0.1'",
                   probe_args + (checksums ? " --checksums " + tag + ".rx.json" : std::string()),
                   send_args + kCache + (manifest ? " --manifest " + tag + ".tx.json" : std::string()), tag, streamed);
    if (manifest) sent = json_file(tag + ".tx.json");
    if (checksums) decoded = json_file(tag + ".rx.json")["decoded"];
  }

  StreamRun streamed;
  const nlohmann::json& summary = streamed.summary;
  nlohmann::json sent;     ///< j2ksend's manifest
  nlohmann::json decoded;  ///< j2kprobe's checksum of each decoded frame, in order
};
#endif

}  // namespace j2k::test
