// The stream picker's URL building (what j2kplay plays when started without a URL).
#include <gtest/gtest.h>

#include "ui/stream_picker.hpp"

TEST(StreamPicker, InterfaceIsSetOnceAndSdpAndCapturesKeepTheirs) {
  using j2k::ui::with_interface;
  EXPECT_EQ(with_interface("rtp://239.1.1.1:5004", "192.168.1.10"), "rtp://239.1.1.1:5004?iface=192.168.1.10");
  EXPECT_EQ(with_interface("rtp://239.1.1.1:5004?format=ts&iface=10.0.0.1", "192.168.1.10"),
            "rtp://239.1.1.1:5004?format=ts&iface=192.168.1.10");
  EXPECT_EQ(with_interface("rtp://239.1.1.1:5004?format=ts", ""), "rtp://239.1.1.1:5004?format=ts");
  EXPECT_EQ(with_interface("pcap:c.pcap?port=5004", "192.168.1.10"), "pcap:c.pcap?port=5004");
}

TEST(StreamPicker, InterfacesListAnyFirstThenIpv4AddressesWithNames) {
  const auto list = j2k::ui::list_ipv4_interfaces();
  ASSERT_FALSE(list.empty());
  EXPECT_TRUE(list.front().address.isEmpty());  // "any": the system's default route
  bool loopback = false;
  for (const auto& c : list) loopback = loopback || c.address == "127.0.0.1";
  EXPECT_TRUE(loopback) << "loopback is up on every test machine";
}
