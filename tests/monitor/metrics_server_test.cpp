// The metrics endpoint serves what was published, in Prometheus text and JSON, and a client
// that connects and says nothing does not hold up others.
#include <gtest/gtest.h>

#include <boost/asio.hpp>
#include <map>
#include <sstream>

#include "monitor/metrics_server.hpp"

namespace j2k::monitor {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

std::string http_get(std::uint16_t port, const std::string& target) {
  asio::io_context io;
  tcp::socket s(io);
  s.connect({asio::ip::make_address("127.0.0.1"), port});
  const std::string req = "GET " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  asio::write(s, asio::buffer(req));
  std::string out;
  boost::system::error_code ec;
  char buf[4096];
  for (;;) {
    const std::size_t n = s.read_some(asio::buffer(buf), ec);
    out.append(buf, n);
    if (ec) break;
  }
  return out;
}

/// Metric name{labels} -> value, from Prometheus text.
std::map<std::string, double> parse_prometheus(const std::string& text) {
  std::map<std::string, double> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto space = line.rfind(' ');
    out[line.substr(0, line.find('{'))] = std::stod(line.substr(space + 1));
  }
  return out;
}

TEST(Prometheus, CountersAndGaugesWithTheUrlLabel) {
  nlohmann::json s = {{"packets", {{"received", 1234}, {"lost", 5}}},
                      {"stream", {{"bitrate_mbps", 12.5}, {"jitter_ms", 0.25}}}};
  const std::string text = prometheus_text(s, "rtp://239.1.1.1:5004 \"x\"");
  EXPECT_NE(text.find("# TYPE j2k_packets_received_total counter"), std::string::npos);
  EXPECT_NE(text.find("# TYPE j2k_stream_bitrate_mbps gauge"), std::string::npos);
  EXPECT_NE(text.find("j2k_packets_lost_total{url=\"rtp://239.1.1.1:5004 \\\"x\\\"\"} 5"), std::string::npos);
  const auto m = parse_prometheus(text);
  EXPECT_DOUBLE_EQ(m.at("j2k_packets_received_total"), 1234);
  EXPECT_DOUBLE_EQ(m.at("j2k_stream_bitrate_mbps"), 12.5);
  EXPECT_EQ(m.count("j2k_frames_decoded_total"), 0u);  // absent from the summary: left out
}

TEST(MetricsServer, ServesPublishedBodiesWhileASilentClientWaits) {
  auto server = MetricsServer::start("127.0.0.1:0");
  ASSERT_TRUE(server) << server.error().message;
  const auto port = (*server)->port();
  ASSERT_NE(port, 0);
  (*server)->publish("j2k_packets_received_total{url=\"u\"} 42\n", R"({"packets":{"received":42}})");
  asio::io_context io;
  tcp::socket silent(io);  // connects and never sends a request
  silent.connect({asio::ip::make_address("127.0.0.1"), port});
  const std::string metrics = http_get(port, "/metrics");
  EXPECT_NE(metrics.find("200 OK"), std::string::npos);
  EXPECT_NE(metrics.find("text/plain; version=0.0.4"), std::string::npos);
  EXPECT_NE(metrics.find("j2k_packets_received_total{url=\"u\"} 42"), std::string::npos);
  const std::string stats = http_get(port, "/stats");
  const auto body = nlohmann::json::parse(stats.substr(stats.find("\r\n\r\n") + 4));
  EXPECT_EQ(body["packets"]["received"], 42);
  EXPECT_NE(http_get(port, "/nothing").find("404"), std::string::npos);
  EXPECT_EQ((*server)->requests_served(), 3u);
}

TEST(MetricsServer, BadAddressesAreClearErrors) {
  EXPECT_FALSE(MetricsServer::start("localhost:notaport"));
  EXPECT_FALSE(MetricsServer::start("999.1.1.1:9100"));
  auto a = MetricsServer::start("127.0.0.1:0");
  ASSERT_TRUE(a);
  auto b = MetricsServer::start("127.0.0.1:" + std::to_string((*a)->port()));
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message.find("in use"), std::string::npos);
}

}  // namespace
}  // namespace j2k::monitor
