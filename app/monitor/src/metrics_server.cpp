#include "monitor/metrics_server.hpp"

#include <cmath>
#include <mutex>
#include <thread>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>

#include "core/log.hpp"

namespace j2k::monitor {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

// The numbers a monitoring system alerts on. Totals are counters; rates and levels gauges.
constexpr MetricSpec kMetrics[] = {
    {"/packets/received", "j2k_packets_received_total", "counter", "RTP packets received (unique)"},
    {"/packets/lost", "j2k_packets_lost_total", "counter", "RTP packets lost (expected - received)"},
    {"/packets/duplicate", "j2k_packets_duplicate_total", "counter", "duplicate RTP packets"},
    {"/packets/late", "j2k_packets_late_total", "counter", "packets that arrived after their gap was given up"},
    {"/packets/recovered_by_reorder", "j2k_packets_reordered_total", "counter", "packets put back in order"},
    {"/packets/recovered_by_fec", "j2k_packets_recovered_by_fec_total", "counter", "packets rebuilt by FEC"},
    {"/fec/unrecoverable", "j2k_fec_unrecoverable_total", "counter", "packets FEC could not rebuild (ST 2022-1)"},
    {"/ts/continuity_errors", "j2k_ts_continuity_errors_total", "counter", "MPEG-2 TS continuity counter errors (TR-01)"},
    {"/ssrc_changes", "j2k_ssrc_changes_total", "counter", "times the followed sender (SSRC) changed"},
    {"/packets/malformed", "j2k_packets_malformed_total", "counter", "datagrams that are not valid RTP"},
    {"/packets/dropped_in_receiver", "j2k_packets_dropped_in_receiver_total", "counter", "datagrams dropped inside the receiver"},
    {"/packets/dropped_in_socket_buffer", "j2k_packets_dropped_in_socket_buffer_total", "counter", "datagrams this host's kernel dropped, the socket's receive buffer full"},
    {"/frames/complete", "j2k_frames_complete_total", "counter", "frames received complete"},
    {"/frames/incomplete", "j2k_frames_incomplete_total", "counter", "frames with missing packets"},
    {"/frames/decoded", "j2k_frames_decoded_total", "counter", "frames decoded"},
    {"/frames/decode_failed", "j2k_frames_decode_failed_total", "counter", "frames that failed to decode"},
    {"/frames/codestream_damaged", "j2k_frames_codestream_damaged_total", "counter", "frames that arrived whole with a damaged codestream (decoded what could be read)"},
    {"/frames/undisplayable", "j2k_frames_undisplayable_total", "counter", "frames decoded that the player could not convert for display"},
    {"/frames/degraded", "j2k_frames_degraded_total", "counter", "frames decoded below full resolution or quality"},
    {"/frames/dropped_decoder_behind", "j2k_frames_dropped_decoder_behind_total", "counter", "frames dropped because the decoders' queue overflowed"},
    {"/frames/dropped_late", "j2k_frames_dropped_late_total", "counter", "frames dropped because they would have been shown late"},
    {"/frames/shown", "j2k_frames_shown_total", "counter", "frames shown by the player (a deinterlaced frame once, though its two fields are two pictures)"},
    {"/stream/payload_bytes", "j2k_payload_bytes_total", "counter", "RTP payload bytes received"},
    {"/now/bitrate_mbps", "j2k_stream_bitrate_mbps", "gauge", "payload bit rate over the last second, Mbit/s"},
    {"/stream/fps", "j2k_stream_fps", "gauge", "frame rate of the stream"},
    {"/stream/jitter_ms", "j2k_stream_jitter_ms", "gauge", "RFC 3550 interarrival jitter, ms"},
    {"/stream/width", "j2k_stream_width", "gauge", "picture width"},
    {"/stream/height", "j2k_stream_height", "gauge", "picture height"},
    {"/now/latency_p50_ms", "j2k_latency_receive_to_decoded_p50_ms", "gauge", "receive to decoded over the last second, median, ms"},
    {"/now/latency_p99_ms", "j2k_latency_receive_to_decoded_p99_ms", "gauge", "receive to decoded over the last second, 99th percentile, ms"},
    {"/time_code/frames_out_of_sequence", "j2k_time_code_out_of_sequence_total", "counter", "frames whose time code was not the previous one's plus one frame"},
    {"/time_code/frames_without", "j2k_time_code_missing_total", "counter", "frames without a time code in a stream that has one"},
    {"/now/audio/channels", "j2k_audio_channels", "gauge", "sound channels arriving (absent before any sound)"},
    {"/now/audio/silent_channels", "j2k_audio_silent_channels", "gauge", "sound channels silent now"},
    {"/now/audio/clipping_channels", "j2k_audio_clipping_channels", "gauge", "sound channels reaching full scale now"},
    {"/now/audio/stalled", "j2k_audio_stalled", "gauge", "1 while sound that was there has stopped arriving"},
    {"/alarms/active_count", "j2k_alarms_active", "gauge", "alarms active now"},
    {"/alarms/raised", "j2k_alarms_raised_total", "counter", "alarms raised since the start"},
    {"/duration_s", "j2k_receive_seconds", "gauge", "seconds since the first packet"},
};

/// A sample value as the exposition format writes it (+Inf, -Inf, NaN: digital silence is
/// -Inf dBFS).
std::string sample_value(const nlohmann::json& v) {
  const double x = v.is_boolean() ? (v.get<bool>() ? 1.0 : 0.0) : v.get<double>();
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", x);
}

std::string escape_label(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') { out += "\\n"; continue; }
    out += c;
  }
  return out;
}

}  // namespace

std::string prometheus_text(const nlohmann::json& summary, const std::string& url_label) {
  std::string out;
  const std::string label = fmt::format("{{url=\"{}\"}}", escape_label(url_label));
  for (const auto& m : kMetrics) {
    const nlohmann::json::json_pointer ptr(m.json_path);
    if (!summary.contains(ptr)) continue;
    const auto& v = summary.at(ptr);
    if (!v.is_number() && !v.is_boolean()) continue;
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n{}{} {}\n", m.name, m.help, m.name, m.type, m.name, label,
                       sample_value(v));
  }
  // ST 2022-7: each path's own counts, labelled path="1" and "2", so that an alert can say
  // that one path is down while the picture is still whole.
  const auto paths = summary.find("paths");
  if (paths != summary.end() && paths->is_array() && paths->size() > 1) {
    struct PathMetric {
      const char* pointer;
      const char* name;
      const char* type;
      const char* help;
    };
    constexpr PathMetric kPath[] = {
        {"/packets/received", "j2k_path_packets_received_total", "counter", "RTP packets received on the path (ST 2022-7)"},
        {"/packets/lost", "j2k_path_packets_lost_total", "counter", "RTP packets the path lost (ST 2022-7)"},
        {"/down", "j2k_path_down", "gauge", "1 while the path brings nothing (ST 2022-7)"},
        {"/outages", "j2k_path_outages_total", "counter", "times the path went down (ST 2022-7)"},
    };
    for (const auto& m : kPath) {
      std::string lines;
      for (std::size_t i = 0; i < paths->size(); ++i) {
        const nlohmann::json::json_pointer ptr(m.pointer);
        if (!(*paths)[i].contains(ptr)) continue;
        const auto& v = (*paths)[i].at(ptr);
        if (!v.is_number() && !v.is_boolean()) continue;
        lines += fmt::format("{}{{url=\"{}\",path=\"{}\"}} {}\n", m.name, escape_label(url_label), i + 1,
                             sample_value(v));
      }
      if (!lines.empty()) out += fmt::format("# HELP {} {}\n# TYPE {} {}\n{}", m.name, m.help, m.name, m.type, lines);
    }
  }
  // The sound's levels, one sample per channel (channel="1"...), as the meter has them now.
  const nlohmann::json::json_pointer audio_ptr("/now/audio/per_channel");
  if (summary.contains(audio_ptr) && summary.at(audio_ptr).is_array()) {
    const auto& channels = summary.at(audio_ptr);
    struct ChannelMetric {
      const char* key;
      const char* name;
      const char* help;
    };
    constexpr ChannelMetric kChannel[] = {
        {"peak_dbfs", "j2k_audio_peak_dbfs", "sample peak over the last 400 ms, dBFS (-Inf: digital silence)"},
        {"rms_dbfs", "j2k_audio_rms_dbfs", "RMS level over the last 400 ms, dBFS"},
        {"momentary_lufs", "j2k_audio_momentary_lufs", "EBU R 128 momentary loudness, LUFS"},
        {"silent", "j2k_audio_silent", "1 while the channel is silent for the silence time"},
        {"clipping", "j2k_audio_clipping", "1 while the channel reaches full scale"},
    };
    for (const auto& m : kChannel) {
      std::string lines;
      for (std::size_t i = 0; i < channels.size(); ++i) {
        const auto it = channels[i].find(m.key);
        if (it == channels[i].end() || (!it->is_number() && !it->is_boolean())) continue;
        lines += fmt::format("{}{{url=\"{}\",channel=\"{}\"}} {}\n", m.name, escape_label(url_label), i + 1,
                             sample_value(*it));
      }
      if (!lines.empty()) out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n{}", m.name, m.help, m.name, lines);
    }
  }
  return out;
}

namespace {

// What the sessions share with the server; held by shared_ptr so that sessions the
// io_context still owns when it is destroyed never outlive it.
struct Shared {
  std::mutex mutex;  // guards metrics, stats
  std::string metrics = "# no data yet\n";
  std::string stats = "{}";
  std::atomic<int> clients{0};
  std::atomic<std::uint64_t> served{0}, refused{0};
};

}  // namespace

struct MetricsServer::Impl {
  std::shared_ptr<Shared> shared = std::make_shared<Shared>();
  asio::io_context io;
  tcp::acceptor acceptor{io};
  std::thread thread;

  void accept();
  void serve(tcp::socket socket);
};

namespace {

// One connection: read one request (bounded size and time), answer, close.
struct Session : std::enable_shared_from_this<Session> {
  Session(tcp::socket s, std::shared_ptr<Shared> shared) : stream(std::move(s)), server(std::move(shared)) {}
  ~Session() { server->clients.fetch_sub(1); }

  beast::tcp_stream stream;
  std::shared_ptr<Shared> server;
  beast::flat_buffer buffer{8192};
  http::request_parser<http::empty_body> parser;
  http::response<http::string_body> response;

  void start() {
    parser.header_limit(8192);
    parser.body_limit(0);
    stream.expires_after(std::chrono::seconds(5));
    http::async_read(stream, buffer, parser, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (!ec) self->answer();
    });
  }

  void answer() {
    const auto& req = parser.get();
    // The path without a query (a scraper's ?name[]=… or a cache-buster asks for the same).
    std::string target(req.target());
    if (const auto q = target.find('?'); q != std::string::npos) target.resize(q);
    response.version(req.version());
    response.keep_alive(false);
    response.set(http::field::server, "j2kplay");
    if (req.method() != http::verb::get && req.method() != http::verb::head) {
      response.result(http::status::method_not_allowed);
      response.body() = "GET only\n";
    } else if (target == "/metrics") {
      std::lock_guard lock(server->mutex);
      response.result(http::status::ok);
      response.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
      response.body() = server->metrics;
    } else if (target == "/stats") {
      std::lock_guard lock(server->mutex);
      response.result(http::status::ok);
      response.set(http::field::content_type, "application/json");
      response.body() = server->stats;
    } else {
      response.result(http::status::not_found);
      response.set(http::field::content_type, "text/plain");
      response.body() = "try /metrics (Prometheus) or /stats (JSON)\n";
    }
    response.prepare_payload();
    if (req.method() == http::verb::head) {  // the headers a GET would have, without its body
      const auto length = response.body().size();
      response.body().clear();
      response.content_length(length);
    }
    server->served.fetch_add(1);
    stream.expires_after(std::chrono::seconds(5));
    http::async_write(stream, response, [self = shared_from_this()](beast::error_code, std::size_t) {
      beast::error_code ignored;
      self->stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
    });
  }
};

}  // namespace

void MetricsServer::Impl::accept() {
  acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted) return;
    if (!ec) serve(std::move(socket));
    accept();
  });
}

void MetricsServer::Impl::serve(tcp::socket socket) {
  if (shared->clients.fetch_add(1) >= kMaxClients) {
    shared->clients.fetch_sub(1);
    shared->refused.fetch_add(1);
    beast::error_code ignored;
    socket.close(ignored);
    return;
  }
  std::make_shared<Session>(std::move(socket), shared)->start();
}

MetricsServer::MetricsServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Result<std::unique_ptr<MetricsServer>> MetricsServer::start(const std::string& address) {
  std::string host = "0.0.0.0", port_text = address;
  if (const auto colon = address.rfind(':'); colon != std::string::npos) {
    host = colon == 0 ? "0.0.0.0" : address.substr(0, colon);
    port_text = address.substr(colon + 1);
  }
  unsigned long port = 0;
  try {
    std::size_t used = 0;
    port = std::stoul(port_text, &used);
    if (used != port_text.size() || port > 65535) throw std::invalid_argument("port");
  } catch (const std::exception&) {
    return make_error(ErrorKind::corrupt, fmt::format("--metrics '{}' is not ADDR:PORT (e.g. 127.0.0.1:9100)", address));
  }
  auto impl = std::make_unique<Impl>();
  beast::error_code ec;
  const auto ip = asio::ip::make_address(host, ec);
  if (ec) return make_error(ErrorKind::corrupt, fmt::format("--metrics address '{}' is not an IP address", host));
  const tcp::endpoint endpoint(ip, static_cast<unsigned short>(port));
  impl->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(endpoint, ec);
  if (!ec) impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    return make_error(ErrorKind::io, fmt::format("cannot serve metrics on {}:{}: {} (is the port in use?)", host, port,
                                                 ec.message()));
  impl->accept();
  Impl* raw = impl.get();
  impl->thread = std::thread([raw] { raw->io.run(); });
  return std::unique_ptr<MetricsServer>(new MetricsServer(std::move(impl)));
}

MetricsServer::~MetricsServer() {
  asio::post(impl_->io, [impl = impl_.get()] {
    beast::error_code ignored;
    impl->acceptor.close(ignored);
  });
  impl_->io.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

void MetricsServer::publish(std::string metrics_text, std::string stats_json) {
  std::lock_guard lock(impl_->shared->mutex);
  impl_->shared->metrics = std::move(metrics_text);
  impl_->shared->stats = std::move(stats_json);
}

std::uint16_t MetricsServer::port() const noexcept {
  beast::error_code ec;
  const auto ep = impl_->acceptor.local_endpoint(ec);
  return ec ? 0 : ep.port();
}
std::string MetricsServer::url() const {
  beast::error_code ec;
  const auto ep = impl_->acceptor.local_endpoint(ec);
  if (ec) return "";
  // Bound to every address: say so (a scraper uses one of this machine's addresses).
  const std::string host = ep.address().is_unspecified() ? "<this machine>" : ep.address().to_string();
  return fmt::format("http://{}:{}", host, ep.port());
}
std::uint64_t MetricsServer::requests_served() const noexcept { return impl_->shared->served.load(); }
std::uint64_t MetricsServer::clients_refused() const noexcept { return impl_->shared->refused.load(); }

}  // namespace j2k::monitor
