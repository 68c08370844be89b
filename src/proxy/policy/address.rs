//! Which addresses count as this machine's or private: the policy lets a
//! name (or `*`) reach only globally routable unicast addresses.

use std::net::{IpAddr, Ipv4Addr};

/// An IPv4-mapped IPv6 address is the IPv4 address it carries.
pub(super) fn canonical(a: IpAddr) -> IpAddr {
    match a {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => a,
        },
        v4 => v4,
    }
}

/// Globally routable unicast: the only addresses a name or `*` may reach.
pub fn is_public(a: IpAddr) -> bool {
    match canonical(a) {
        IpAddr::V4(v4) => {
            let [a, b, c, _] = v4.octets();
            !(v4.is_unspecified()
                || v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || a == 0
                || a >= 240
                || (a == 100 && (64..128).contains(&b))
                || (a == 192 && b == 0 && c == 0)
                || (a == 198 && (18..20).contains(&b)))
        }
        IpAddr::V6(v6) => {
            let s = v6.segments();
            let nat64 = s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0; 4];
            if nat64 {
                let o = v6.octets();
                return is_public(IpAddr::V4(Ipv4Addr::new(o[12], o[13], o[14], o[15])));
            }
            !(v6.is_unspecified()
                || v6.is_loopback()
                || v6.is_multicast()
                || s[0] & 0xfe00 == 0xfc00
                || s[0] & 0xffc0 == 0xfe80
                || s[0] & 0xffc0 == 0xfec0
                || (s[0] == 0x2001 && s[1] == 0x0db8)
                || (s[0] == 0x0100 && s[1..4] == [0; 3])
                // ::/64 holds IPv4-compatible and -translated forms; no
                // public host lives there.
                || s[0..4] == [0; 4])
        }
    }
}
