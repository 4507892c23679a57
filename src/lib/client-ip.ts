/**
 * The counter key of a client address. IPv4 addresses count one by one; IPv6 addresses count by
 * their /64 prefix, because one subscriber commonly holds a whole /64 and could otherwise rotate
 * through fresh addresses for every request. IPv4-mapped IPv6 counts as the IPv4 address. A
 * request without an address (only possible off Cloudflare, e.g. in local development) shares the
 * key `unknown`.
 */
export function ipLimitKey(ip: string | null): string {
  const value = ip?.trim();
  if (!value) return "unknown";
  if (!value.includes(":")) return value;
  const groups = ipv6Groups(value);
  if (!groups) return value.toLowerCase();
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    const [high, low] = [groups[6]!, groups[7]!];
    return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
  }
  return `${groups
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(":")}::/64`;
}

/** The eight 16-bit groups of an IPv6 address, or null when it is not one. */
function ipv6Groups(text: string): number[] | null {
  let address = text.toLowerCase().split("%", 1)[0]!;
  const v4 = /^(.*:)(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(address);
  if (v4) {
    const octets = v4.slice(2).map(Number);
    if (octets.some((octet) => octet > 255)) return null;
    address = `${v4[1]}${((octets[0]! << 8) | octets[1]!).toString(16)}:${((octets[2]! << 8) | octets[3]!).toString(16)}`;
  }
  const halves = address.split("::");
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(":") : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(":") : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const parts = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...tail];
  if (!parts.every((part) => /^[0-9a-f]{1,4}$/.test(part))) return null;
  return parts.map((part) => parseInt(part, 16));
}
