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

TEST(StreamUrl, AcceptsTsFormatAndFecParameters) {
  auto url = parse_stream_url("rtp://239.1.1.1:5004?format=ts&fec=1&fec_column=6000");
  ASSERT_TRUE(url.ok()) << url.error().message;
  EXPECT_EQ(url->format, "ts");
  EXPECT_EQ(url->query.at("fec"), "1");
  EXPECT_EQ(url->query.at("fec_column"), "6000");
}
