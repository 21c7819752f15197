#include "core/url.hpp"

#include <gtest/gtest.h>

using j2k::parse_stream_url;
using j2k::StreamUrl;

TEST(StreamUrl, ParsesMulticastWithInterface) {
  auto url = parse_stream_url("rtp://239.1.1.1:5004?iface=127.0.0.1&format=mxf&ttl=4");
  ASSERT_TRUE(url.ok()) << url.error().message;
  EXPECT_EQ(url->scheme, StreamUrl::Scheme::rtp);
  EXPECT_EQ(url->host, "239.1.1.1");
  EXPECT_EQ(url->port, 5004);
  EXPECT_EQ(url->iface, "127.0.0.1");
  EXPECT_EQ(url->ttl, 4);
  EXPECT_EQ(url->describe(), "239.1.1.1:5004 via 127.0.0.1");
}

TEST(StreamUrl, ParsesSourceSpecificAndPcapAndDemo) {
  auto ssm = parse_stream_url("udp://232.0.0.1:6000?source=10.0.0.5");
  ASSERT_TRUE(ssm.ok());
  EXPECT_EQ(ssm->source, "10.0.0.5");
  auto pcap = parse_stream_url("pcap:capture.pcapng?port=5004");
  ASSERT_TRUE(pcap.ok());
  EXPECT_EQ(pcap->scheme, StreamUrl::Scheme::pcap);
  EXPECT_EQ(pcap->host, "capture.pcapng");
  EXPECT_EQ(pcap->port, 5004);
  auto demo = parse_stream_url("demo://");
  ASSERT_TRUE(demo.ok());
  EXPECT_EQ(demo->scheme, StreamUrl::Scheme::demo);
}

TEST(StreamUrl, RejectsMalformedWithHelpfulMessage) {
  for (const char* bad : {"http://x:1", "rtp://239.1.1.1", "rtp://239.1.1.1:0", "rtp://239.1.1.1:70000",
                          "rtp://239.1.1.1:5004?iface", "rtp://1.2.3.4:5004?format=mpeg", "rtp://h:12ab"}) {
    auto url = parse_stream_url(bad);
    ASSERT_FALSE(url.ok()) << bad;
    EXPECT_NE(url.error().message.find("rtp://239.1.1.1:5004"), std::string::npos) << url.error().message;
  }
}

// Review 2026-11-25: these passed the parser and failed later with status 1 (a host name or
// IPv6 once the socket opened; fec_column=abc as "port 0 out of range"), or were ignored
// (fec=yes left FEC off without a word).
TEST(StreamUrl, HostsAndParameterValuesAreCheckedWhenParsed) {
  for (const char* bad : {"rtp://[::1]:5004", "rtp://example.com:5004", "rtp://239.1.1.1:5004?fec=yes",
                          "rtp://239.1.1.1:5004?fec=1&fec_column=abc", "rtp://239.1.1.1:5004?fec=1&fec_row=70000",
                          "rtp://239.1.1.1:5004?source=host", "rtp://239.1.1.1:5004?bind=::1"}) {
    auto url = parse_stream_url(bad);
    EXPECT_FALSE(url.ok()) << bad;
  }
  EXPECT_NE(parse_stream_url("rtp://[::1]:5004").error().message.find("host '::1' is not an IPv4 address"), std::string::npos);
  EXPECT_NE(parse_stream_url("rtp://239.1.1.1:5004?fec=yes").error().message.find("fec 'yes' is not 1"), std::string::npos);
  auto local = parse_stream_url("rtp://localhost:5004");
  ASSERT_TRUE(local.ok()) << local.error().message;
  EXPECT_EQ(local->host, "127.0.0.1");
  EXPECT_TRUE(parse_stream_url("rtp://239.1.1.1:5004?fec=1&fec_column=6000&fec_row=6002").ok());
  EXPECT_TRUE(parse_stream_url("rtp://239.1.1.1:5004?iface=eth0").ok()) << "an interface may be named";
}

// Review 2026-11-25 (captures): pcap:…?dst=bogus replayed every datagram of the port, the
// filter silently dropped.
TEST(StreamUrl, ACapturesDestinationFilterIsAnAddress) {
  auto bogus = parse_stream_url("pcap:x.pcap?port=5004&dst=bogus");
  ASSERT_FALSE(bogus.ok());
  EXPECT_NE(bogus.error().message.find("dst 'bogus' is not an IPv4 address"), std::string::npos) << bogus.error().message;
  EXPECT_TRUE(parse_stream_url("pcap:x.pcap?port=5004&dst=239.1.1.1").ok());
}

// Issue 10 item 2: a mistyped parameter was ignored and the default interface joined.
TEST(StreamUrl, UnknownParameterIsRefusedWithASuggestion) {
  auto typo = parse_stream_url("rtp://239.1.1.1:5004?ifcae=127.0.0.1");
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.error().message.find("unknown parameter 'ifcae'"), std::string::npos) << typo.error().message;
  EXPECT_NE(typo.error().message.find("did you mean 'iface'?"), std::string::npos) << typo.error().message;
  // Far from every known key: no guess, but the list of keys.
  auto stranger = parse_stream_url("rtp://239.1.1.1:5004?colour=blue");
  ASSERT_FALSE(stranger.ok());
  EXPECT_EQ(stranger.error().message.find("did you mean"), std::string::npos) << stranger.error().message;
  EXPECT_NE(stranger.error().message.find("known: iface, source, format, ttl, bind, fec, fec_column, fec_row"), std::string::npos)
      << stranger.error().message;
  // Keys of another scheme are refused too: a port in an rtp:// query is not the port.
  auto wrong_scheme = parse_stream_url("rtp://239.1.1.1:5004?port=5006");
  ASSERT_FALSE(wrong_scheme.ok());
  // Review 2026-11-28 (second): without ?port= every UDP datagram was the stream (its RTCP
  // too, so the sender's reports went uncounted).
  auto no_port = parse_stream_url("pcap:c.pcap");
  ASSERT_FALSE(no_port.ok());
  EXPECT_NE(no_port.error().message.find("a capture needs ?port=N"), std::string::npos) << no_port.error().message;
  auto pcap_typo = parse_stream_url("pcap:c.pcap?prot=5004");
  ASSERT_FALSE(pcap_typo.ok());
  EXPECT_NE(pcap_typo.error().message.find("did you mean 'port'?"), std::string::npos) << pcap_typo.error().message;
  auto timing = parse_stream_url("pcap:c.pcap?port=5004&timing=slow");
  ASSERT_FALSE(timing.ok());
  EXPECT_NE(timing.error().message.find("timing 'slow' is not capture or fast"), std::string::npos);
}

TEST(StreamUrl, EveryDocumentedParameterIsAccepted) {
  EXPECT_TRUE(parse_stream_url("rtp://239.1.1.1:5004?iface=127.0.0.1&source=10.0.0.5&format=rfc5371&ttl=4&bind=10.0.0.1").ok());
  EXPECT_TRUE(parse_stream_url("pcap:c.pcap?port=5004&dst=239.1.1.1&timing=capture&format=mxf").ok());
  EXPECT_TRUE(parse_stream_url("pcap:c.pcap?port=5004&timing=fast").ok());
  EXPECT_TRUE(parse_stream_url("rtp://239.1.1.1:5004?format=ts&fec=1&fec_column=6000&fec_row=6002").ok());
}

TEST(StreamUrl, AcceptsTsFormatAndFecParameters) {
  auto url = parse_stream_url("rtp://239.1.1.1:5004?format=ts&fec=1&fec_column=6000");
  ASSERT_TRUE(url.ok()) << url.error().message;
  EXPECT_EQ(url->format, "ts");
  EXPECT_EQ(url->query.at("fec"), "1");
  EXPECT_EQ(url->query.at("fec_column"), "6000");
}

// Issue 14 item 6: sdp:FILE names a stream by its session description.
TEST(StreamUrl, SdpFileGivesTheStreamItDescribes) {
  const char* path = "url_test_stream.sdp";
  {
    std::FILE* f = std::fopen(path, "w");
    ASSERT_NE(f, nullptr);
    std::fputs("v=0\r\no=- 0 0 IN IP4 10.0.0.5\r\ns=cam\r\nt=0 0\r\nm=video 5004 RTP/AVP 96\r\nc=IN IP4 239.1.1.9/16\r\n"
               "a=rtpmap:96 jpeg2000/90000\r\n", f);
    std::fclose(f);
  }
  auto url = parse_stream_url(std::string("sdp:") + path + "?iface=127.0.0.1");
  ASSERT_TRUE(url.ok()) << url.error().message;
  EXPECT_EQ(url->host, "239.1.1.9");
  EXPECT_EQ(url->port, 5004);
  EXPECT_EQ(url->format, "rfc5371");
  EXPECT_EQ(url->iface, "127.0.0.1");
  EXPECT_FALSE(parse_stream_url("sdp:/nonexistent/x.sdp").ok());
  EXPECT_FALSE(parse_stream_url(std::string("sdp:") + path + "?port=5").ok());
  std::remove(path);
}

// Review 2026-11-29: a key given twice silently took the last value (?port=5004&port=6000
// replayed 6000); an empty value was taken (iface=$IFACE unset joined on the kernel's default
// interface without a word); and a capture given a second path replayed the first alone.
TEST(StreamUrl, KeysGivenTwiceEmptyValuesAndACapturesSecondPathAreRefused) {
  auto twice = parse_stream_url("pcap:c.pcap?port=5004&port=6000");
  ASSERT_FALSE(twice);
  EXPECT_NE(twice.error().message.find("'port' is given twice"), std::string::npos) << twice.error().message;
  auto empty = parse_stream_url("rtp://239.1.1.1:5004?iface=");
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().message.find("'iface=' has no value"), std::string::npos) << empty.error().message;
  EXPECT_FALSE(parse_stream_url("rtp://239.1.1.1:5004?iface=eth0&iface="));
  const auto live = parse_stream_url("rtp://239.1.1.1:5004?iface=127.0.0.1");
  const auto other = parse_stream_url("rtp://239.2.2.2:5004?iface=127.0.0.1");
  const auto capture = parse_stream_url("pcap:c.pcap?port=5004");
  ASSERT_TRUE(live && other && capture);
  EXPECT_TRUE(check_second_path(*live, *other));
  EXPECT_FALSE(check_second_path(*capture, *live));
  const auto st = check_second_path(*live, *capture);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("two rtp:// URLs"), std::string::npos) << st.error().message;
}
