//! The ways of writing a guarded address in a URL (issue 18, target 4: the SSRF battery).
//! Shared by the URL policy's own battery (`switchboard-mcp-client`) and the one that goes
//! through `POST /chat/stream` (`switchboard-server`), so both try exactly the same forms.
//!
//! Every form here names an address no server a browser sends may reach: loopback, private,
//! link-local, cloud metadata, carrier-grade NAT, benchmarking, multicast, broadcast, reserved.

/// Guarded IPv4 addresses, one or two per range, with the range's name.
pub const GUARDED_V4: [([u8; 4], &str); 24] = [
    ([127, 0, 0, 1], "loopback"),
    ([127, 255, 255, 254], "loopback"),
    ([0, 0, 0, 0], "this host"),
    ([0, 1, 2, 3], "this network"),
    ([10, 0, 0, 1], "private"),
    ([10, 255, 255, 255], "private"),
    ([172, 16, 0, 1], "private"),
    ([172, 31, 255, 254], "private"),
    ([192, 168, 0, 1], "private"),
    ([100, 64, 0, 1], "carrier-grade NAT"),
    ([100, 127, 255, 254], "carrier-grade NAT"),
    ([198, 18, 0, 1], "benchmarking"),
    ([198, 19, 255, 254], "benchmarking"),
    ([169, 254, 0, 1], "link-local"),
    ([169, 254, 169, 254], "metadata"),
    ([169, 254, 170, 2], "metadata (ECS)"),
    ([100, 100, 100, 200], "metadata (Alibaba)"),
    ([192, 0, 0, 192], "metadata (Oracle)"),
    ([224, 0, 0, 1], "multicast"),
    ([239, 255, 255, 250], "multicast"),
    ([255, 255, 255, 255], "broadcast"),
    ([240, 0, 0, 1], "reserved"),
    ([192, 0, 2, 1], "documentation"),
    ([192, 0, 0, 8], "IETF protocol assignments"),
];

/// Guarded IPv6 addresses written natively (no embedded IPv4), with the range's name.
pub const GUARDED_V6: [(&str, &str); 22] = [
    ("::1", "loopback"),
    ("0:0:0:0:0:0:0:1", "loopback, long form"),
    (
        "0000:0000:0000:0000:0000:0000:0000:0001",
        "loopback, zero-padded",
    ),
    ("::", "unspecified"),
    ("fe80::1", "link-local"),
    ("febf:ffff::1", "link-local"),
    ("fc00::1", "unique local"),
    ("fd12:3456:789a::1", "unique local"),
    ("fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "unique local"),
    ("fec0::1", "site-local"),
    ("fd00:ec2::254", "metadata (AWS IPv6)"),
    ("ff02::1", "multicast"),
    ("ff05::2", "multicast"),
    ("ff0e::1", "multicast"),
    ("2001:db8::1", "documentation"),
    ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"),
    ("100::1", "discard-only"),
    ("64:ff9b:1::a00:1", "NAT64 local-use"),
    ("64:ff9b:1:ffff::1", "NAT64 local-use"),
    ("::ffff:0:0", "IPv4-mapped 0.0.0.0"),
    ("::2", "IPv4-compatible 0.0.0.2"),
    ("::ffff:ffff:ffff", "IPv4-mapped broadcast"),
];

/// Names of cloud metadata services, in the spellings a URL may carry.
pub const METADATA_NAMES: [&str; 10] = [
    "metadata.google.internal",
    "metadata.google.internal.",
    "METADATA.GOOGLE.INTERNAL",
    "Metadata.Google.Internal.",
    "metadata",
    "metadata.goog",
    "instance-data",
    "instance-data.ec2.internal",
    "metadata.azure.internal",
    "metadata.tencentyun.com",
];

/// Names that always mean this machine.
pub const LOCALHOST_NAMES: [&str; 6] = [
    "localhost",
    "localhost.",
    "LOCALHOST",
    "LocalHost.",
    "api.localhost",
    "a.b.localhost.",
];

/// URLs that are no HTTP(S) URL at all: refused on the scheme for HTTP transports.
pub const OTHER_SCHEMES: [&str; 14] = [
    "file:///etc/passwd",
    "file://localhost/etc/passwd",
    "gopher://public.example:70/_GET%20/",
    "ftp://public.example/",
    "ftps://public.example/",
    "data:text/plain,hi",
    "data:application/json;base64,e30=",
    "javascript:alert(1)",
    "dict://public.example:11211/stat",
    "ldap://public.example/",
    "sftp://public.example/",
    "tftp://public.example/x",
    "ws://public.example/mcp",
    "jar:http://public.example/x.jar!/",
];

/// The ways of writing one IPv4 address as a URL host: dotted, integer (decimal, hex, octal),
/// per-part hex and octal, the short forms, trailing dot, percent-encoding, full-width digits
/// (IDNA maps them to ASCII), and the IPv6 forms that embed it (mapped, compatible, SIIT,
/// NAT64, 6to4). Each comes with its form's name.
pub fn v4_hosts(address: [u8; 4]) -> Vec<(String, &'static str)> {
    let [a, b, c, d] = address;
    let whole = u32::from_be_bytes(address);
    let octal = |part: u8| format!("0{part:o}");
    let dotted = format!("{a}.{b}.{c}.{d}");
    let high = u16::from_be_bytes([a, b]);
    let low = u16::from_be_bytes([c, d]);
    let percent: String = dotted.bytes().map(|byte| format!("%{byte:02X}")).collect();
    let full_width: String = dotted
        .chars()
        .map(|ch| match ch {
            '0'..='9' => char::from_u32(0xFF10 + (ch as u32 - '0' as u32)).unwrap(),
            _ => '\u{3002}',
        })
        .collect();
    vec![
        (dotted.clone(), "dotted"),
        (whole.to_string(), "decimal integer"),
        (format!("0x{whole:x}"), "hex integer"),
        (format!("0X{whole:08X}"), "hex integer, uppercase"),
        (format!("0{whole:o}"), "octal integer"),
        (format!("0x{a:x}.0x{b:x}.0x{c:x}.0x{d:x}"), "hex parts"),
        (
            format!("{}.{}.{}.{}", octal(a), octal(b), octal(c), octal(d)),
            "octal parts",
        ),
        (
            format!("0x{a:x}.{b}.{}.{d}", octal(c)),
            "mixed hex, decimal and octal parts",
        ),
        (
            format!("{a}.{b}.{}", u32::from(c) << 8 | u32::from(d)),
            "three parts",
        ),
        (format!("{a}.{}", whole & 0x00ff_ffff), "two parts"),
        (format!("{dotted}."), "trailing dot"),
        (percent, "percent-encoded"),
        (full_width, "full-width digits (IDNA)"),
        (format!("[::ffff:{dotted}]"), "IPv4-mapped IPv6"),
        (
            format!("[::ffff:{high:x}:{low:x}]"),
            "IPv4-mapped IPv6, hex",
        ),
        (
            format!("[0:0:0:0:0:ffff:{high:x}:{low:x}]"),
            "IPv4-mapped IPv6, long form",
        ),
        (format!("[::{dotted}]"), "IPv4-compatible IPv6"),
        (
            format!("[::ffff:0:{dotted}]"),
            "IPv4-translated IPv6 (SIIT)",
        ),
        (format!("[64:ff9b::{dotted}]"), "NAT64"),
        (format!("[64:ff9b::{high:x}:{low:x}]"), "NAT64, hex"),
        (format!("[2002:{high:x}:{low:x}::1]"), "6to4"),
    ]
}

/// Wraps a host (already bracketed if IPv6) into URLs: plain, with a port, an uppercase
/// scheme, userinfo that names a public host, and a `#@`/`?@` confusion.
pub fn urls_for_host(host: &str, scheme: &str, port: Option<u16>) -> Vec<(String, &'static str)> {
    let with_port = |port: u16| format!("{host}:{port}");
    let authority = port.map_or_else(|| host.to_owned(), with_port);
    vec![
        (format!("{scheme}://{authority}/mcp"), "plain"),
        (
            format!("{}://{authority}/mcp", scheme.to_ascii_uppercase()),
            "uppercase scheme",
        ),
        (
            format!("{scheme}://public.example@{authority}/mcp"),
            "userinfo naming a public host",
        ),
        (
            format!("{scheme}://public.example:443@{authority}/mcp"),
            "userinfo with a port",
        ),
        (
            format!("{scheme}://{authority}#@public.example/mcp"),
            "fragment with @",
        ),
        (
            format!("{scheme}://{authority}\\@public.example/mcp"),
            "backslash before @",
        ),
    ]
}
