import { describe, expect, it } from "vitest";
import { ipLimitKey } from "../../../src/lib/client-ip";

describe("ipLimitKey", () => {
  it.each([
    ["192.0.2.1", "192.0.2.1"],
    ["203.0.113.254", "203.0.113.254"],
    [" 198.51.100.7 ", "198.51.100.7"],
  ])("keeps the IPv4 address %j as %j", (ip, key) => {
    expect(ipLimitKey(ip)).toBe(key);
  });

  it.each([
    ["full form", "2001:0db8:85a3:0000:0000:8a2e:0370:7334", "2001:db8:85a3:0::/64"],
    ["compressed", "2001:db8::1", "2001:db8:0:0::/64"],
    ["compressed inside the prefix", "2001:db8:0:1::a", "2001:db8:0:1::/64"],
    ["compressed at the start", "::1", "0:0:0:0::/64"],
    ["compressed at the end", "2001:db8:1:2::", "2001:db8:1:2::/64"],
    ["upper case", "2001:DB8:ABCD:12::FF", "2001:db8:abcd:12::/64"],
    ["with a zone id", "fe80::1%eth0", "fe80:0:0:0::/64"],
    ["with an embedded IPv4 tail", "2001:db8:1:2:3:4:192.0.2.1", "2001:db8:1:2::/64"],
    ["NAT64 with an IPv4 tail", "64:ff9b::192.0.2.33", "64:ff9b:0:0::/64"],
    ["leading zeros in every group", "0001:0002:0003:0004:0005:0006:0007:0008", "1:2:3:4::/64"],
    ["surrounded by spaces", "  2001:db8::1  ", "2001:db8:0:0::/64"],
  ])("counts an IPv6 address (%s) by its /64", (_, ip, key) => {
    expect(ipLimitKey(ip)).toBe(key);
  });

  it("gives every address of one /64 the same key, and a neighbouring /64 another", () => {
    const a = ipLimitKey("2001:db8:aaaa:bbbb:1111:2222:3333:4444");
    const b = ipLimitKey("2001:db8:aaaa:bbbb::9");
    const c = ipLimitKey("2001:DB8:AAAA:BBBB:ffff:ffff:ffff:ffff");
    expect(a).toBe("2001:db8:aaaa:bbbb::/64");
    expect(b).toBe(a);
    expect(c).toBe(a);
    expect(ipLimitKey("2001:db8:aaaa:bbbc::9")).toBe("2001:db8:aaaa:bbbc::/64");
  });

  it.each([
    ["::ffff:192.0.2.1", "192.0.2.1"],
    ["::ffff:c000:201", "192.0.2.1"],
    ["::FFFF:C000:0201", "192.0.2.1"],
    ["0:0:0:0:0:ffff:cb00:71fe", "203.0.113.254"],
  ])("counts the IPv4-mapped address %j as the IPv4 address %j", (ip, key) => {
    expect(ipLimitKey(ip)).toBe(key);
  });

  it.each([[null], [""], ["   "]])("keys a missing address (%j) as unknown", (ip) => {
    expect(ipLimitKey(ip)).toBe("unknown");
  });

  it.each([
    ["1::2::3", "1::2::3"],
    ["12345::", "12345::"],
    [":::", ":::"],
    ["1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7:8:9"],
    ["1:2:3", "1:2:3"],
    ["2001:DB8::G", "2001:db8::g"],
    ["::ffff:300.0.2.1", "::ffff:300.0.2.1"],
  ])("keys the malformed address %j by its lower-cased text %j", (ip, key) => {
    expect(ipLimitKey(ip)).toBe(key);
  });
});
