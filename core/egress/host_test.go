package egress

import (
	"context"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// inetAton is a reference model of inet_aton (glibc resolv/inet_addr.c, the
// classic BSD loop), which getaddrinfo consults before DNS: one to four parts
// separated by dots, each decimal, 0x-hex or 0-octal; the last part fills
// the remaining bytes. It reports the address that would be dialled, and ok.
// It accepts a bare "0x" as 0 as the BSD loop does, a superset of newer
// glibc's strtoul-based parse, which only makes the model stricter here.
func inetAton(s string) (netip.Addr, bool) {
	var parts []uint64
	i := 0
	for {
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return netip.Addr{}, false
		}
		base := uint64(10)
		if s[i] == '0' {
			i++
			base = 8
			if i < len(s) && (s[i] == 'x' || s[i] == 'X') {
				base = 16
				i++
			}
		}
		var val uint64
		for ; i < len(s); i++ {
			c := s[i]
			var d uint64
			switch {
			case '0' <= c && c <= '9':
				if base == 8 && c >= '8' {
					return netip.Addr{}, false
				}
				d = uint64(c - '0')
			case base == 16 && 'a' <= c && c <= 'f':
				d = uint64(c-'a') + 10
			case base == 16 && 'A' <= c && c <= 'F':
				d = uint64(c-'A') + 10
			default:
				goto end
			}
			val = val*base + d
			if val > 0xffffffff {
				return netip.Addr{}, false
			}
		}
	end:
		if i < len(s) && s[i] == '.' {
			if len(parts) >= 3 || val > 0xff {
				return netip.Addr{}, false
			}
			parts = append(parts, val)
			i++
			continue
		}
		parts = append(parts, val)
		break
	}
	if i < len(s) && !strings.ContainsRune(" \t\n\v\f\r", rune(s[i])) {
		return netip.Addr{}, false
	}
	limits := []uint64{0xffffffff, 0xffffff, 0xffff, 0xff}
	last := parts[len(parts)-1]
	if last > limits[len(parts)-1] {
		return netip.Addr{}, false
	}
	v := last
	for k, p := range parts[:len(parts)-1] {
		v |= p << (24 - 8*k)
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

func TestInetAtonModel(t *testing.T) {
	tests := []struct{ in, want string }{
		{"2130706433", "127.0.0.1"},
		{"0x7f.0.0.1", "127.0.0.1"},
		{"0177.0.0.1", "127.0.0.1"},
		{"127.1", "127.0.0.1"},
		{"0", "0.0.0.0"},
		{"1.2.3", "1.2.0.3"},
		{"0x", "0.0.0.0"},
		{"0x7f000001", "127.0.0.1"},
		{"169.254.43518", "169.254.169.254"},
		{"1.2.3.4", "1.2.3.4"},
	}
	for _, tt := range tests {
		a, ok := inetAton(tt.in)
		require.True(t, ok, tt.in)
		assert.Equal(t, tt.want, a.String(), tt.in)
	}
	for _, bad := range []string{"", "08", "1.2.3.4.5", "256.0.0.1", "1..2", "a", "1.2.3.4.", "0x100000000", "1.2.3.4x"} {
		_, ok := inetAton(bad)
		assert.False(t, ok, bad)
	}
}

// TestNumericHostsRefused: every host glibc's inet_aton reads as an address
// is refused unless it is the canonical dotted quad netip accepts.
func TestNumericHostsRefused(t *testing.T) {
	hosts := []string{
		"2130706433", "0x7f.0.0.1", "0177.0.0.1", "127.1", "0", "1.2.3", "0x", "0x7f000001",
		"169.254.43518", "0251.0376.0251.0376", "0xa9.0xfe.0xa9.0xfe", "0xA9FEA9FE", "017700000001",
		"127.000.000.001", "127.0.0.01", "1.1", "10.1", "00", "0.0", "0x0.0x0.0x0.0x0", "4294967295",
		"0XFFFFFFFF", "192.168.0x1.1", "8.8.8.010",
	}
	p := Default()
	for _, h := range hosts {
		t.Run(h, func(t *testing.T) {
			_, ok := inetAton(h)
			require.True(t, ok, "model must accept %q", h)
			for _, scheme := range []string{"http", "https"} {
				requireDecision(t, p.AdmitURL(context.Background(), &url.URL{Scheme: scheme, Host: h}), ReasonNumericHost)
			}
		})
	}
}

// TestNamesThatLookNumeric: legitimate names with digits stay names.
func TestNamesThatLookNumeric(t *testing.T) {
	for _, h := range []string{
		"1password.com", "3com.com", "123.example", "0x7f.example", "1.2.3.4.nip.io", "127-0-0-1.sslip.io",
		"1e100.net", "0xdeadbeef.com", "x0", "1a", "0x7g", "0xx", "255.255.255.255.example",
		"9gag.com", "1-1-1-1.example", "1.1.1.1a",
	} {
		t.Run(h, func(t *testing.T) {
			a, reason := parseAuthority(h)
			require.Empty(t, reason)
			assert.Equal(t, h, a.name)
			assert.False(t, a.addr.IsValid())
			_, ok := inetAton(h)
			assert.False(t, ok, "reference resolver would read %q as an address", h)
			requireDecision(t, Default().AdmitURL(context.Background(), &url.URL{Scheme: "https", Host: h}), "")
		})
	}
}

func TestParseAuthority(t *testing.T) {
	tests := []struct {
		name, in string
		addr     string
		host     string
		port     uint16
		reason   string
	}{
		{"name", "Example.COM", "", "example.com", 0, ""},
		{"name port", "example.com:8443", "", "example.com", 8443, ""},
		{"trailing dot", "example.com.", "", "example.com", 0, ""},
		{"trailing dot port", "example.com.:1", "", "example.com", 1, ""},
		{"ipv4", "1.2.3.4", "1.2.3.4", "", 0, ""},
		{"ipv4 port", "1.2.3.4:65535", "1.2.3.4", "", 65535, ""},
		{"ipv6", "[2001:4860::8888]:443", "2001:4860::8888", "", 443, ""},
		{"ipv6 mapped", "[::ffff:1.2.3.4]", "::ffff:1.2.3.4", "", 0, ""},
		{"fullwidth name", "ＥＸＡＭＰＬＥ．ｃｏｍ", "", "example.com", 0, ""},
		{"ideographic stop", "example。com", "", "example.com", 0, ""},
		{"idn", "Bücher.example", "", "bücher.example", 0, ""},
		{"empty", "", "", "", 0, ReasonHostMissing},
		{"port only", ":80", "", "", 0, ReasonHostMissing},
		{"port 65536", "h:65536", "", "", 0, ReasonPortRefused},
		{"port 00", "h:00", "", "", 0, ReasonPortRefused},
		{"port 100000", "h:100000", "", "", 0, ReasonPortRefused},
		{"trailing colon", "h:", "", "", 0, ReasonPortRefused},
		{"two colons", "h:1:2", "", "", 0, ReasonHostInvalid},
		{"zone", "[fe80::1%eth0]", "", "", 0, ReasonZoneRefused},
		{"numeric", "127.1", "", "", 0, ReasonNumericHost},
		{"canonical with trailing dot", "1.2.3.4.", "", "", 0, ReasonNumericHost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, reason := parseAuthority(tt.in)
			require.Equal(t, tt.reason, reason)
			if reason != "" {
				return
			}
			if tt.addr != "" {
				assert.Equal(t, netip.MustParseAddr(tt.addr), a.addr)
				assert.Empty(t, a.name)
			} else {
				assert.False(t, a.addr.IsValid())
				assert.Equal(t, tt.host, a.name)
			}
			assert.Equal(t, tt.port, a.port)
		})
	}
}
