package egress

import (
	"net/netip"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// authority is the result of splitting and checking a URL's host[:port].
type authority struct {
	// addr is set when the host is an IP literal: a bracketed IPv6 address
	// or a canonical dotted-quad IPv4 address written in ASCII.
	addr netip.Addr
	// name is set otherwise: the effective hostname, ASCII-lowercased, with
	// fullwidth forms and ideographic full stops folded to ASCII and one
	// trailing dot removed.
	name string
	// port is the explicit port, or 0 when the URL names none.
	port uint16
	// display is the host as it may appear in an Origin ("" when it is not
	// safe to print): lowercased, bracketed for IPv6.
	display string
	// badPort is set when the port was refused; the Origin then omits it.
	badPort bool
}

// splitHostPort splits a URL's Host field. It returns the host (brackets
// removed), whether it was bracketed, and the port text with hasPort set
// when a ':' introduced one (the port text may then be empty).
func splitHostPort(hostport string) (host string, bracketed bool, port string, hasPort bool, ok bool) {
	if strings.HasPrefix(hostport, "[") {
		end := strings.IndexByte(hostport, ']')
		if end < 0 {
			return "", false, "", false, false
		}
		host, rest := hostport[1:end], hostport[end+1:]
		switch {
		case rest == "":
			return host, true, "", false, true
		case rest[0] == ':':
			return host, true, rest[1:], true, true
		default:
			return "", false, "", false, false
		}
	}
	switch strings.Count(hostport, ":") {
	case 0:
		return hostport, false, "", false, true
	case 1:
		i := strings.IndexByte(hostport, ':')
		return hostport[:i], false, hostport[i+1:], true, true
	default:
		// An unbracketed IPv6 literal, or garbage.
		return "", false, "", false, false
	}
}

// parsePort accepts exactly the canonical decimal form of 1..65535: no sign,
// no leading zero, no empty port after a colon.
func parsePort(s string) (uint16, bool) {
	if s == "" || len(s) > 5 || s[0] == '0' {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(s, 10, 16)
	if err != nil || n == 0 {
		return 0, false
	}
	return uint16(n), true
}

// parseAuthority checks a URL's Host field and classifies it. On failure it
// returns one of ReasonHostMissing, ReasonHostInvalid, ReasonZoneRefused,
// ReasonPortRefused or ReasonNumericHost, and whatever of the authority it
// could safely establish (for the Origin).
func parseAuthority(hostport string) (authority, string) {
	var a authority
	if hostport == "" {
		return a, ReasonHostMissing
	}
	host, bracketed, portText, hasPort, ok := splitHostPort(hostport)
	if !ok {
		return a, ReasonHostInvalid
	}
	if host == "" {
		return a, ReasonHostMissing
	}
	if strings.IndexByte(host, '%') >= 0 {
		// url.Parse admits "%25" only as the zone separator, bracketed or not.
		return a, ReasonZoneRefused
	}
	if bracketed {
		addr, err := netip.ParseAddr(host)
		if err != nil || !addr.Is6() {
			// "[127.0.0.1]" is an IPv4 address in IPv6 clothing.
			return a, ReasonHostInvalid
		}
		a.addr = addr
		a.display = "[" + addr.String() + "]"
	} else {
		folded, numeric, ok := foldHost(host)
		if !ok {
			return a, ReasonHostInvalid
		}
		a.display = asciiLower(host)
		if numeric {
			// Only a canonical dotted quad, written in ASCII with no trailing
			// dot, is an IPv4 literal; every other number-shaped host is
			// something a resolver might reinterpret.
			addr, err := netip.ParseAddr(host)
			if err != nil || !addr.Is4() {
				return a, ReasonNumericHost
			}
			a.addr = addr
		} else {
			a.name = folded
		}
	}
	if hasPort {
		p, ok := parsePort(portText)
		if !ok {
			a.badPort = true
			return a, ReasonPortRefused
		}
		a.port = p
	}
	return a, ""
}

// foldHost checks an unbracketed host and returns its effective name:
// ASCII-lowercased; fullwidth ASCII (U+FF01–U+FF5E) and the ideographic,
// halfwidth, small and leader full stops folded to ASCII, as IDNA's UTS #46
// mapping folds them before net/http dials; one trailing dot removed.
//
// numeric reports that the host's last label is number-shaped — all digits
// (of any script), or "0x" followed by hex digits — which is how the WHATWG
// URL standard decides that a host must be an IPv4 address, and covers every
// form glibc's inet_aton accepts. A real top-level domain is never numeric
// (RFC 3696 §2), so "1password.com" and "3com.com" are names.
//
// ok is false for invalid UTF-8, an empty label, an over-long name, an ASCII
// character outside letters, digits, '-' and '_', a non-ASCII rune that is
// not a letter, mark or number, and the Mathematical Alphanumeric Symbols
// (which IDNA maps to plain ASCII, so they only ever disguise one).
func foldHost(host string) (name string, numeric bool, ok bool) {
	if len(host) > 1024 {
		return "", false, false
	}
	var b strings.Builder
	b.Grow(len(host))
	for i := 0; i < len(host); {
		r, size := utf8.DecodeRuneInString(host[i:])
		i += size
		if r == utf8.RuneError && size == 1 {
			return "", false, false
		}
		if r >= 0xFF01 && r <= 0xFF5E {
			r -= 0xFEE0 // fullwidth ASCII → ASCII
		}
		switch r {
		case 0x3002, 0xFF61, 0xFE52, 0x2024:
			r = '.'
		}
		switch {
		case r < utf8.RuneSelf:
			switch {
			case 'A' <= r && r <= 'Z':
				r += 'a' - 'A'
			case 'a' <= r && r <= 'z', '0' <= r && r <= '9', r == '-', r == '_', r == '.':
			default:
				return "", false, false
			}
		case r >= 0x1D400 && r <= 0x1D7FF:
			return "", false, false
		case unicode.IsLetter(r), unicode.IsMark(r), unicode.IsNumber(r):
		default:
			return "", false, false
		}
		b.WriteRune(r)
	}
	name = strings.TrimSuffix(b.String(), ".")
	if name == "" || len(name) > 253 {
		return "", false, false
	}
	labels := strings.Split(name, ".")
	for _, l := range labels {
		if l == "" || (len(l) > 63 && isASCII(l)) {
			return "", false, false
		}
	}
	return name, numericLabel(labels[len(labels)-1]), true
}

// numericLabel reports whether l is all digits (of any script) or "0x"
// followed by zero or more hex digits (inet_aton reads a bare "0x" as 0).
func numericLabel(l string) bool {
	if rest, ok := strings.CutPrefix(l, "0x"); ok {
		for _, r := range rest {
			if !isDigit(r) && !('a' <= r && r <= 'f') {
				return false
			}
		}
		return true
	}
	for _, r := range l {
		if !isDigit(r) {
			return false
		}
	}
	return true
}

func isDigit(r rune) bool {
	return '0' <= r && r <= '9' || r >= utf8.RuneSelf && unicode.IsNumber(r)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// asciiLower lowercases the ASCII letters of s, leaving the rest alone.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return strings.Map(func(r rune) rune {
				if 'A' <= r && r <= 'Z' {
					return r + 'a' - 'A'
				}
				return r
			}, s)
		}
	}
	return s
}

// isLocalhost reports whether name (effective form) is "localhost" or a
// name under it, which RFC 6761 §6.3 reserves for loopback.
func isLocalhost(name string) bool {
	return name == "localhost" || strings.HasSuffix(name, ".localhost")
}
