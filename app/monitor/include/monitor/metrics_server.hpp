#pragma once
// `--metrics ADDR:PORT`: Prometheus text at /metrics and the JSON summary at /stats, served
// by Boost.Beast on a thread of its own.
//
// Reception never waits for a client: the tool's main loop publishes both bodies once a
// second (`publish`, a string swap under a mutex) and the server only copies the latest
// ones. Clients are bounded: at most `kMaxClients` connections at a time (more are closed
// at once), a request must arrive within 5 s and be at most 8 KiB, and each connection
// serves one request.
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "core/result.hpp"

namespace j2k::monitor {

/// One metric family of the Prometheus text format.
struct MetricSpec {
  const char* json_path;  ///< "/packets/received" in the summary
  const char* name;       ///< "j2k_packets_received_total"
  const char* type;       ///< "counter" or "gauge"
  const char* help;
};

/// Prometheus exposition text (version 0.0.4) of the summary's numbers, each with the
/// stream's URL as the `url` label. Paths missing from `summary` are left out.
std::string prometheus_text(const nlohmann::json& summary, const std::string& url_label);

class MetricsServer {
 public:
  static constexpr int kMaxClients = 16;

  /// "127.0.0.1:9100", ":9100" or "9100" (all addresses). Binds at once (errors say why).
  static Result<std::unique_ptr<MetricsServer>> start(const std::string& address);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  /// The bodies later requests get. Any thread.
  void publish(std::string metrics_text, std::string stats_json);
  std::uint16_t port() const noexcept;
  /// "http://127.0.0.1:9100" (the bound address; "<this machine>" when bound to all).
  std::string url() const;
  std::uint64_t requests_served() const noexcept;
  std::uint64_t clients_refused() const noexcept;

  struct Impl;

 private:
  explicit MetricsServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace j2k::monitor
