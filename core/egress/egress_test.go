package egress

import (
	"context"
	"errors"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// requireDecision asserts err is nil when reason is "", and otherwise a
// *refusal.Error of Class Refused with that Reason and a well-formed Origin.
func requireDecision(t *testing.T, err error, reason string) {
	t.Helper()
	if reason == "" {
		require.NoError(t, err)
		return
	}
	require.Error(t, err, "want %s", reason)
	var e *refusal.Error
	require.True(t, errors.As(err, &e), "not a *refusal.Error: %T", err)
	assert.Equal(t, refusal.Refused, e.Class)
	assert.Equal(t, reason, e.Reason, "detail %q", e.Detail)
	assert.Empty(t, e.Server)
	if e.Origin != "" {
		assert.Regexp(t, `^https?://[^/?#@\s]+$`, e.Origin)
	}
}

func admitURL(t *testing.T, p *Policy, raw string) error {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err, "url.Parse(%q)", raw)
	return p.AdmitURL(context.Background(), u)
}

func admitAddr(t *testing.T, p *Policy, scheme, addr string) error {
	t.Helper()
	return p.AdmitAddr(context.Background(), scheme, netip.AddrPortFrom(netip.MustParseAddr(addr), 443))
}

// TestAdmitURL is the adversarial URL table of the egress policy (the
// ranges and forms it must refuse) plus this package's additions.
func TestAdmitURL(t *testing.T) {
	tests := []struct {
		name, url, reason string
	}{
		// Admitted.
		{"https public name", "https://mcp.example.com/mcp", ""},
		{"https public name with port", "https://mcp.example.com:8443/mcp?x=1#f", ""},
		{"https public IPv4", "https://1.1.1.1/", ""},
		{"https public IPv4 2", "https://93.184.215.14/", ""},
		{"https public IPv6", "https://[2606:4700:4700::1111]/", ""},
		{"https name starting with digit", "https://1password.com/", ""},
		{"https name 3com", "https://3com.com/", ""},
		{"https name digits then letters", "https://123.example/", ""},
		{"https numeric middle label", "https://0x7f.example.com/", ""},
		{"https trailing dot name", "https://example.com./", ""},
		{"https uppercase name", "HTTPS://EXAMPLE.COM/", ""},
		{"https IDN name", "https://bücher.example/", ""},
		{"https IDN TLD", "https://例え.テスト/", ""},
		{"https port 65535", "https://example.com:65535/", ""},
		{"https port 1", "https://example.com:1/", ""},
		{"https underscore", "https://a_b.example.com/", ""},
		{"http localhost", "http://localhost:3000/mcp", ""},
		{"http localhost trailing dot", "http://localhost.:3000/", ""},
		{"http LOCALHOST", "HTTP://LOCALHOST:3000/", ""},
		{"http LocalHost.", "http://LocalHost./", ""},
		{"http sub.localhost", "http://mcp.localhost:8080/", ""},
		{"http sub.localhost trailing dot", "http://a.b.localhost./", ""},
		{"http fullwidth localhost", "http://ｌｏｃａｌｈｏｓｔ/", ""},
		{"http 127.0.0.1", "http://127.0.0.1:8080/", ""},
		{"http 127.255.255.254", "http://127.255.255.254/", ""},
		{"http ::1", "http://[::1]:8080/", ""},
		{"http mapped loopback", "http://[::ffff:127.0.0.1]/", ""},

		// Scheme, opaque, userinfo.
		{"ftp", "ftp://example.com/", ReasonSchemeRefused},
		{"file", "file:///etc/passwd", ReasonSchemeRefused},
		{"ws", "ws://localhost/", ReasonSchemeRefused},
		{"wss", "wss://example.com/", ReasonSchemeRefused},
		{"javascript", "javascript:alert(1)", ReasonOpaqueRefused},
		{"no scheme", "//example.com/", ReasonSchemeRefused},
		{"relative", "/mcp", ReasonSchemeRefused},
		{"http opaque", "http:example.com", ReasonOpaqueRefused},
		{"https opaque", "https:1.1.1.1:443", ReasonOpaqueRefused},
		{"userinfo", "https://user:pass@example.com/", ReasonUserinfoRefused},
		{"userinfo empty", "https://@example.com/", ReasonUserinfoRefused},
		{"userinfo user only", "https://user@example.com/", ReasonUserinfoRefused},
		{"userinfo on localhost", "http://a:b@localhost/", ReasonUserinfoRefused},
		{"userinfo disguise", "https://example.com@169.254.169.254/", ReasonUserinfoRefused},

		// Host shape.
		{"empty host", "https:///mcp", ReasonHostMissing},
		{"empty host with port", "https://:443/", ReasonHostMissing},
		{"zone id", "http://[fe80::1%25eth0]/", ReasonZoneRefused},
		{"zone id on loopback", "http://[::1%25lo]:80/", ReasonZoneRefused},
		{"zone on unbracketed", "http://127.0.0.1%25eth0/", ReasonZoneRefused},
		{"sub-delims in host", "https://a!b$c/", ReasonHostInvalid},
		{"comma in host", "https://a,b.com/", ReasonHostInvalid},
		{"empty label", "https://a..b.com/", ReasonHostInvalid},
		{"leading dot", "https://.example.com/", ReasonHostInvalid},
		{"lone dot", "https://./", ReasonHostInvalid},
		{"two trailing dots", "http://localhost../", ReasonHostInvalid},
		{"label too long", "https://" + strings.Repeat("a", 64) + ".com/", ReasonHostInvalid},
		{"name too long", "https://" + strings.Repeat("a.", 127) + "com/", ReasonHostInvalid},
		{"fullwidth colon", "https://example.com：443/", ReasonHostInvalid},
		{"math bold letters", "https://𝐦𝐞𝐭𝐚𝐝𝐚𝐭𝐚.google.internal/", ReasonHostInvalid},
		{"right-to-left override", "https://exa\u202emple.com/", ReasonHostInvalid},
		{"zero-width joiner", "https://exa\u200dmple.com/", ReasonHostInvalid},

		// Ports.
		{"port 0", "https://example.com:0/", ReasonPortRefused},
		{"port 65536", "https://example.com:65536/", ReasonPortRefused},
		{"port 99999", "https://example.com:99999/", ReasonPortRefused},
		{"port huge", "https://example.com:184467440737095516161/", ReasonPortRefused},
		{"port empty", "https://example.com:/", ReasonPortRefused},
		{"port leading zero", "http://localhost:080/", ReasonPortRefused},
		{"port 0 on IPv6", "https://[2606:4700:4700::1111]:0/", ReasonPortRefused},

		// Numeric hosts a system resolver reinterprets.
		{"decimal dword", "http://2130706433/", ReasonNumericHost},
		{"decimal dword https", "https://2130706433/", ReasonNumericHost},
		{"hex dword", "https://0x7f000001/", ReasonNumericHost},
		{"hex first octet", "https://0x7f.0.0.1/", ReasonNumericHost},
		{"HEX first octet", "https://0X7F.0.0.1/", ReasonNumericHost},
		{"octal first octet", "https://0177.0.0.1/", ReasonNumericHost},
		{"leading zero octets", "https://01.02.03.04/", ReasonNumericHost},
		{"two parts", "http://127.1/", ReasonNumericHost},
		{"three parts", "https://1.2.3/", ReasonNumericHost},
		{"zero", "http://0/", ReasonNumericHost},
		{"five parts", "https://1.2.3.4.5/", ReasonNumericHost},
		{"octet over 255", "https://1.2.3.256/", ReasonNumericHost},
		{"trailing dot IP", "https://1.1.1.1./", ReasonNumericHost},
		{"trailing dot loopback over http", "http://127.0.0.1./", ReasonNumericHost},
		{"hex last part", "https://127.0.0.0x1/", ReasonNumericHost},
		{"bare 0x", "https://0x/", ReasonNumericHost},
		{"numeric TLD", "https://example.123/", ReasonNumericHost},
		{"hex TLD", "https://example.0xff/", ReasonNumericHost},
		{"public but non-canonical", "https://1.1/", ReasonNumericHost},
		{"fullwidth digits", "https://１２７.０.０.１/", ReasonNumericHost},
		{"fullwidth digits over http", "http://１２７.０.０.１/", ReasonNumericHost},
		{"fullwidth digits public", "https://１.１.１.１/", ReasonNumericHost},
		{"ideographic full stops", "http://127。0。0。1/", ReasonNumericHost},
		{"halfwidth ideographic stop", "https://1｡1｡1｡1/", ReasonNumericHost},
		{"percent-encoded fullwidth one", "https://%EF%BC%91.0.0.1/", ReasonNumericHost},
		{"arabic-indic digits", "https://١٢٧.٠.٠.١/", ReasonNumericHost},
		{"mathematical digits", "https://𝟏𝟐𝟕.0.0.1/", ReasonHostInvalid},
		{"circled digit", "https://127.0.0.①/", ReasonNumericHost},
		{"digit full stop", "https://127.0.0⒈/", ReasonNumericHost},

		// IP literals.
		{"https loopback", "https://127.0.0.1/", ReasonAddressRefused},
		{"https ::1", "https://[::1]/", ReasonAddressRefused},
		{"https localhost", "https://localhost/", ReasonAddressRefused},
		{"https sub.localhost", "https://a.localhost:8443/", ReasonAddressRefused},
		{"https private", "https://10.0.0.1/", ReasonAddressRefused},
		{"https 192.168", "https://192.168.1.1/", ReasonAddressRefused},
		{"https 172.16", "https://172.16.0.1/", ReasonAddressRefused},
		{"https CGNAT", "https://100.64.0.1/", ReasonAddressRefused},
		{"https 0.0.0.0", "https://0.0.0.0/", ReasonAddressRefused},
		{"http 0.0.0.0", "http://0.0.0.0/", ReasonHTTPNotLoopback},
		{"https broadcast", "https://255.255.255.255/", ReasonAddressRefused},
		{"https multicast", "https://224.0.0.1/", ReasonAddressRefused},
		{"https ULA", "https://[fd12:3456::1]/", ReasonAddressRefused},
		{"https link-local v6", "https://[fe80::1]/", ReasonAddressRefused},
		{"https unspecified v6", "https://[::]/", ReasonAddressRefused},
		{"https mapped private", "https://[::ffff:10.0.0.1]/", ReasonAddressRefused},
		{"https mapped private hex", "https://[::ffff:a00:1]/", ReasonAddressRefused},
		{"https mapped loopback", "https://[::ffff:127.0.0.1]/", ReasonAddressRefused},
		{"https mapped expanded", "https://[0:0:0:0:0:ffff:7f00:1]/", ReasonAddressRefused},
		{"https compatible", "https://[::127.0.0.1]/", ReasonAddressRefused},
		{"https NAT64 private", "https://[64:ff9b::10.0.0.1]/", ReasonAddressRefused},
		{"https NAT64 loopback", "https://[64:ff9b::7f00:1]/", ReasonAddressRefused},
		{"https NAT64 public", "https://[64:ff9b::1.1.1.1]/", ""},
		{"https NAT64 local-use", "https://[64:ff9b:1::1.1.1.1]/", ReasonAddressRefused},
		{"https 6to4", "https://[2002:7f00:1::1]/", ReasonAddressRefused},
		{"https Teredo", "https://[2001::1]/", ReasonAddressRefused},
		{"https documentation v6", "https://[2001:db8::1]/", ReasonAddressRefused},
		{"https mapped public", "https://[::ffff:1.1.1.1]/", ""},

		// http outside loopback.
		{"http public name", "http://example.com/", ReasonHTTPNotLoopback},
		{"http public IPv4", "http://1.1.1.1/", ReasonHTTPNotLoopback},
		{"http public IPv6", "http://[2606:4700:4700::1111]/", ReasonHTTPNotLoopback},
		{"http private", "http://10.0.0.1/", ReasonHTTPNotLoopback},
		{"http localhost lookalike", "http://localhost.example.com/", ReasonHTTPNotLoopback},
		{"http notlocalhost", "http://notlocalhost/", ReasonHTTPNotLoopback},
		{"http localhostx", "http://localhostx/", ReasonHTTPNotLoopback},
		{"http compatible loopback", "http://[::127.0.0.1]/", ReasonHTTPNotLoopback},
		{"http NAT64 loopback", "http://[64:ff9b::127.0.0.1]/", ReasonHTTPNotLoopback},

		// Cloud metadata, by address and by name.
		{"metadata IPv4", "http://169.254.169.254/latest/meta-data/", ReasonMetadataRefused},
		{"metadata IPv4 https", "https://169.254.169.254/", ReasonMetadataRefused},
		{"metadata ECS", "http://169.254.170.2/v2/credentials", ReasonMetadataRefused},
		{"metadata Alibaba", "http://100.100.100.200/latest/meta-data/", ReasonMetadataRefused},
		{"metadata Azure WireServer", "https://168.63.129.16/", ReasonMetadataRefused},
		{"metadata AWS IPv6", "http://[fd00:ec2::254]/latest/meta-data/", ReasonMetadataRefused},
		{"metadata AWS IPv6 uppercase", "https://[FD00:EC2:0::254]/", ReasonMetadataRefused},
		{"metadata GCP IPv6", "https://[fd20:ce::254]/", ReasonMetadataRefused},
		{"metadata mapped", "http://[::ffff:169.254.169.254]/", ReasonMetadataRefused},
		{"metadata mapped hex", "https://[::ffff:a9fe:a9fe]/", ReasonMetadataRefused},
		{"metadata NAT64", "https://[64:ff9b::169.254.169.254]/", ReasonMetadataRefused},
		{"metadata decimal", "http://2852039166/", ReasonNumericHost},
		{"metadata GCP name", "http://metadata.google.internal/computeMetadata/v1/", ReasonMetadataRefused},
		{"metadata GCP name https", "https://metadata.google.internal/", ReasonMetadataRefused},
		{"metadata GCP name trailing dot", "https://metadata.google.internal./", ReasonMetadataRefused},
		{"metadata GCP name upper", "https://METADATA.Google.INTERNAL/", ReasonMetadataRefused},
		{"metadata GCP fullwidth", "https://ｍｅｔａｄａｔａ.google.internal/", ReasonMetadataRefused},
		{"metadata GCP ideographic dots", "https://metadata。google。internal/", ReasonMetadataRefused},
		{"metadata.goog", "https://metadata.goog/", ReasonMetadataRefused},
		{"metadata short", "http://metadata/", ReasonMetadataRefused},
		{"metadata short trailing dot", "https://metadata./", ReasonMetadataRefused},
		{"metadata short with port", "https://Metadata:80/", ReasonMetadataRefused},
		{"instance-data", "http://instance-data/latest/", ReasonMetadataRefused},
		{"instance-data ec2.internal", "https://instance-data.ec2.internal/", ReasonMetadataRefused},
		{"instance-data compute.internal", "https://instance-data.eu-west-1.compute.internal/", ReasonMetadataRefused},
		{"metadata azure.internal", "https://metadata.azure.internal/", ReasonMetadataRefused},
		{"metadata tencent", "https://metadata.tencentyun.com/", ReasonMetadataRefused},
		{"metadata equinix", "https://metadata.platformequinix.com/", ReasonMetadataRefused},
		{"metadata-like public name", "https://metadata.example.com/", ""},
		{"name containing metadata", "https://my-metadata.google.internal.example.com/", ""},
	}
	p := Default()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requireDecision(t, admitURL(t, p, tt.url), tt.reason)
		})
	}
}

// TestAdmitURLConstructed covers URLs url.Parse would not produce, which a
// caller may still build by hand.
func TestAdmitURLConstructed(t *testing.T) {
	tests := []struct {
		name   string
		u      *url.URL
		reason string
	}{
		{"nil", nil, ReasonURLInvalid},
		{"zero", &url.URL{}, ReasonSchemeRefused},
		{"uppercase scheme", &url.URL{Scheme: "HTTPS", Host: "example.com"}, ""},
		{"mixed scheme http", &url.URL{Scheme: "Http", Host: "localhost"}, ""},
		{"scheme with space", &url.URL{Scheme: "https ", Host: "example.com"}, ReasonSchemeRefused},
		{"no host", &url.URL{Scheme: "https"}, ReasonHostMissing},
		{"percent host", &url.URL{Scheme: "https", Host: "%31%32%37.0.0.1"}, ReasonZoneRefused},
		{"at in host", &url.URL{Scheme: "https", Host: "user@example.com"}, ReasonHostInvalid},
		{"slash in host", &url.URL{Scheme: "https", Host: "example.com/x"}, ReasonHostInvalid},
		{"space in host", &url.URL{Scheme: "https", Host: "exa mple.com"}, ReasonHostInvalid},
		{"NUL in host", &url.URL{Scheme: "https", Host: "example.com\x00.evil"}, ReasonHostInvalid},
		{"newline in host", &url.URL{Scheme: "https", Host: "example.com\n"}, ReasonHostInvalid},
		{"invalid UTF-8", &url.URL{Scheme: "https", Host: "exa\xffmple.com"}, ReasonHostInvalid},
		{"unbracketed IPv6", &url.URL{Scheme: "https", Host: "2606:4700::1111"}, ReasonHostInvalid},
		{"unbracketed ::1", &url.URL{Scheme: "http", Host: "::1"}, ReasonHostInvalid},
		{"unclosed bracket", &url.URL{Scheme: "http", Host: "[::1"}, ReasonHostInvalid},
		{"junk after bracket", &url.URL{Scheme: "http", Host: "[::1]x"}, ReasonHostInvalid},
		{"empty brackets", &url.URL{Scheme: "http", Host: "[]"}, ReasonHostMissing},
		{"bracketed IPv4", &url.URL{Scheme: "http", Host: "[127.0.0.1]"}, ReasonHostInvalid},
		{"bracketed name", &url.URL{Scheme: "http", Host: "[localhost]"}, ReasonHostInvalid},
		{"bracketed zone", &url.URL{Scheme: "http", Host: "[fe80::1%eth0]:80"}, ReasonZoneRefused},
		{"port sign", &url.URL{Scheme: "https", Host: "example.com:+443"}, ReasonPortRefused},
		{"port negative", &url.URL{Scheme: "https", Host: "example.com:-1"}, ReasonPortRefused},
		{"port name", &url.URL{Scheme: "https", Host: "example.com:https"}, ReasonPortRefused},
		{"port hex", &url.URL{Scheme: "https", Host: "example.com:0x1bb"}, ReasonPortRefused},
		{"port space", &url.URL{Scheme: "https", Host: "example.com: 443"}, ReasonPortRefused},
		{"port fullwidth", &url.URL{Scheme: "https", Host: "example.com:４４３"}, ReasonPortRefused},
		{"port on bracket empty", &url.URL{Scheme: "https", Host: "[2606:4700::1111]:"}, ReasonPortRefused},
		{"opaque with host", &url.URL{Scheme: "https", Opaque: "//x", Host: "example.com"}, ReasonOpaqueRefused},
		{"userinfo nil password", &url.URL{Scheme: "https", Host: "example.com", User: url.User("")}, ReasonUserinfoRefused},
		{"zoned IPv4-like", &url.URL{Scheme: "http", Host: "127.0.0.1%lo"}, ReasonZoneRefused},
		{"fullwidth brackets", &url.URL{Scheme: "http", Host: "［::1］"}, ReasonHostInvalid},
		{"fullwidth brackets with port", &url.URL{Scheme: "http", Host: "［::1］:80"}, ReasonHostInvalid},
	}
	p := Default()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requireDecision(t, p.AdmitURL(context.Background(), tt.u), tt.reason)
		})
	}
}

// TestAdmitAddr is the dial-time table.
func TestAdmitAddr(t *testing.T) {
	tests := []struct {
		name, scheme, addr string
		port               uint16
		reason             string
	}{
		{"https public v4", "https", "1.1.1.1", 443, ""},
		{"https public v4 example", "https", "93.184.215.14", 443, ""},
		{"https public v6", "https", "2606:4700:4700::1111", 443, ""},
		{"https public v6 google", "https", "2001:4860:4860::8888", 443, ""},
		{"https mapped public", "https", "::ffff:8.8.8.8", 443, ""},
		{"https NAT64 public", "https", "64:ff9b::808:808", 443, ""},
		{"HTTPS uppercase scheme", "HTTPS", "1.1.1.1", 443, ""},
		{"http public v4", "http", "1.1.1.1", 80, ReasonHTTPNotLoopback},
		{"http public v6", "http", "2606:4700:4700::1111", 80, ReasonHTTPNotLoopback},
		{"http private", "http", "192.168.0.1", 80, ReasonHTTPNotLoopback},
		{"http loopback", "http", "127.0.0.1", 8080, ""},
		{"http loopback high", "http", "127.255.255.255", 8080, ""},
		{"http ::1", "http", "::1", 8080, ""},
		{"http mapped loopback", "http", "::ffff:127.0.0.1", 8080, ""},
		{"http compatible loopback", "http", "::127.0.0.1", 8080, ReasonHTTPNotLoopback},
		{"http NAT64 loopback", "http", "64:ff9b::7f00:1", 8080, ReasonHTTPNotLoopback},
		{"http unspecified", "http", "0.0.0.0", 80, ReasonHTTPNotLoopback},
		{"http unspecified v6", "http", "::", 80, ReasonHTTPNotLoopback},
		{"http metadata", "http", "169.254.169.254", 80, ReasonMetadataRefused},
		{"https loopback", "https", "127.0.0.1", 443, ReasonAddressRefused},
		{"https ::1", "https", "::1", 443, ReasonAddressRefused},
		{"https mapped loopback", "https", "::ffff:127.0.0.1", 443, ReasonAddressRefused},
		{"https unspecified", "https", "0.0.0.0", 443, ReasonAddressRefused},
		{"https unspecified v6", "https", "::", 443, ReasonAddressRefused},
		{"https mapped 10", "https", "::ffff:10.1.2.3", 443, ReasonAddressRefused},
		{"https mapped 192.168", "https", "::ffff:192.168.1.1", 443, ReasonAddressRefused},
		{"https mapped 172.16", "https", "::ffff:172.16.0.1", 443, ReasonAddressRefused},
		{"https mapped CGNAT", "https", "::ffff:100.64.0.1", 443, ReasonAddressRefused},
		{"https mapped 0", "https", "::ffff:0.0.0.0", 443, ReasonAddressRefused},
		{"https NAT64 10", "https", "64:ff9b::a01:203", 443, ReasonAddressRefused},
		{"https NAT64 192.168", "https", "64:ff9b::192.168.1.1", 443, ReasonAddressRefused},
		{"https NAT64 172.16", "https", "64:ff9b::172.16.0.1", 443, ReasonAddressRefused},
		{"https NAT64 CGNAT", "https", "64:ff9b::100.64.0.1", 443, ReasonAddressRefused},
		{"https NAT64 unspecified", "https", "64:ff9b::", 443, ReasonAddressRefused},
		{"https NAT64 local-use public", "https", "64:ff9b:1::808:808", 443, ReasonAddressRefused},
		{"https compatible public", "https", "::8.8.8.8", 443, ReasonAddressRefused},
		{"https 6to4 public", "https", "2002:808:808::1", 443, ReasonAddressRefused},
		{"https Teredo", "https", "2001:0:4136:e378:8000:63bf:3fff:fdd2", 443, ReasonAddressRefused},
		{"https outside 2000::/3", "https", "4000::1", 443, ReasonAddressRefused},
		{"https 1fff", "https", "1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 443, ReasonAddressRefused},
		{"https 2000::", "https", "2000::", 443, ""},
		{"https 3ffe", "https", "3ffe:ffff::1", 443, ""},
		{"https site-local", "https", "fec0::1", 443, ReasonAddressRefused},
		{"https multicast v6", "https", "ff02::1", 443, ReasonAddressRefused},
		{"https ECS", "https", "169.254.170.2", 443, ReasonMetadataRefused},
		{"https EKS", "https", "169.254.170.23", 443, ReasonMetadataRefused},
		{"https Alibaba", "https", "100.100.100.200", 443, ReasonMetadataRefused},
		{"https Azure WireServer", "https", "168.63.129.16", 443, ReasonMetadataRefused},
		{"https Azure neighbour", "https", "168.63.129.17", 443, ""},
		{"https AWS IPv6", "https", "fd00:ec2::254", 443, ReasonMetadataRefused},
		{"https mapped metadata", "https", "::ffff:169.254.169.254", 443, ReasonMetadataRefused},
		{"https NAT64 metadata", "https", "64:ff9b::a9fe:a9fe", 443, ReasonMetadataRefused},
		{"https NAT64 Alibaba", "https", "64:ff9b::100.100.100.200", 443, ReasonMetadataRefused},
		{"https zoned link-local", "https", "fe80::1%eth0", 443, ReasonZoneRefused},
		{"http zoned loopback", "http", "::1%lo", 80, ReasonZoneRefused},
		{"https port 0", "https", "1.1.1.1", 0, ReasonPortRefused},
		{"ftp", "ftp", "1.1.1.1", 21, ReasonSchemeRefused},
		{"empty scheme", "", "127.0.0.1", 80, ReasonSchemeRefused},
		{"ws", "ws", "127.0.0.1", 80, ReasonSchemeRefused},
	}
	p := Default()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ap := netip.AddrPortFrom(netip.MustParseAddr(tt.addr), tt.port)
			err := p.AdmitAddr(context.Background(), tt.scheme, ap)
			requireDecision(t, err, tt.reason)
			var e *refusal.Error
			if errors.As(err, &e) && e.Origin != "" {
				assert.NotContains(t, e.Origin, "%", "zone leaked into origin")
			}
		})
	}
}

func TestAdmitAddrInvalid(t *testing.T) {
	err := Default().AdmitAddr(context.Background(), "https", netip.AddrPort{})
	requireDecision(t, err, ReasonAddressInvalid)
}

func TestAdmitAddrOrigin(t *testing.T) {
	p := Default()
	var e *refusal.Error
	require.ErrorAs(t, p.AdmitAddr(context.Background(), "https", netip.MustParseAddrPort("10.0.0.1:8443")), &e)
	assert.Equal(t, "https://10.0.0.1:8443", e.Origin)
	assert.Equal(t, "private-use (RFC 1918)", e.Detail)
	require.ErrorAs(t, p.AdmitAddr(context.Background(), "HTTP", netip.MustParseAddrPort("[fe80::1%eth0]:80")), &e)
	assert.Equal(t, "http://[fe80::1]:80", e.Origin)
}

func TestAdmitURLOrigin(t *testing.T) {
	tests := []struct{ name, url, origin string }{
		{"default https port", "https://10.0.0.1/p?q#f", "https://10.0.0.1:443"},
		{"default http port", "http://Example.COM/secret/path", "http://example.com:80"},
		{"explicit port", "https://METADATA.google.internal:8443/x", "https://metadata.google.internal:8443"},
		{"ipv6", "https://[FD00::1]:8443/x", "https://[fd00::1]:8443"},
		{"ipv6 mapped", "https://[::ffff:10.0.0.1]/", "https://[::ffff:10.0.0.1]:443"},
		{"bad port omitted", "https://example.com:0/x", "https://example.com"},
		{"userinfo removed", "https://alice:hunter2@example.com/x", "https://example.com:443"},
		{"uppercase scheme", "HTTP://example.com/", "http://example.com:80"},
		{"zone gives no origin", "http://[fe80::1%25eth0]/", ""},
		{"scheme refused gives no origin", "ftp://example.com/", ""},
		{"invalid host gives no origin", "https://a!b/", ""},
	}
	p := Default()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e *refusal.Error
			require.ErrorAs(t, admitURL(t, p, tt.url), &e)
			assert.Equal(t, tt.origin, e.Origin)
		})
	}
}

// TestRefusalNeverLeaks: the error text of a refusal never contains the
// path, query, fragment or userinfo of the URL it refused.
func TestRefusalNeverLeaks(t *testing.T) {
	secrets := []string{"hunter2", "s3cr3t-path", "tok-query", "frag-ment", "alice"}
	urls := []string{
		"https://alice:hunter2@example.com/s3cr3t-path?t=tok-query#frag-ment",
		"http://example.com/s3cr3t-path?t=tok-query#frag-ment",
		"https://10.0.0.1/s3cr3t-path?t=tok-query#frag-ment",
		"http://169.254.169.254/s3cr3t-path?t=tok-query",
		"https://metadata.google.internal/s3cr3t-path?t=tok-query",
		"ftp://alice:hunter2@example.com/s3cr3t-path",
		"https://example.com:0/s3cr3t-path?t=tok-query",
		"https://0x7f.1/s3cr3t-path?t=tok-query",
		"http:s3cr3t-path?t=tok-query",
		"https://[fe80::1%25eth0]/s3cr3t-path",
	}
	p := Default()
	for _, raw := range urls {
		err := admitURL(t, p, raw)
		require.Error(t, err, raw)
		for _, s := range secrets {
			assert.NotContains(t, err.Error(), s, raw)
		}
	}
}

func TestErrorsIs(t *testing.T) {
	err := admitURL(t, Default(), "http://example.com/")
	assert.ErrorIs(t, err, refusal.New(refusal.Refused, ReasonHTTPNotLoopback, ""))
	assert.NotErrorIs(t, err, refusal.New(refusal.Refused, ReasonAddressRefused, ""))
	assert.Equal(t, refusal.Refused, refusal.ClassOf(err))
}

// TestLocalhost pins the RFC 6761 §6.3 decision: localhost and every name
// under it name loopback, over http only.
func TestLocalhost(t *testing.T) {
	for _, name := range []string{"localhost", "LOCALHOST", "localhost.", "LocalHost.", "a.localhost", "A.B.LOCALHOST.", "x-y.localhost"} {
		t.Run(name, func(t *testing.T) {
			requireDecision(t, admitURL(t, Default(), "http://"+name+":8080/"), "")
			requireDecision(t, admitURL(t, Default(), "https://"+name+":8443/"), ReasonAddressRefused)
		})
	}
	for _, name := range []string{"localhost.com", "mylocalhost", "localhost-x", "localhost.localdomain", "local", "localhost.x"} {
		t.Run(name, func(t *testing.T) {
			requireDecision(t, admitURL(t, Default(), "http://"+name+"/"), ReasonHTTPNotLoopback)
		})
	}
}

func TestZeroPolicyIsDefault(t *testing.T) {
	var zero Policy
	fromNil, err := New(nil)
	require.NoError(t, err)
	fromEmpty, err := New(&Options{})
	require.NoError(t, err)
	for _, raw := range []string{"https://1.1.1.1/", "https://10.0.0.1/", "http://localhost/", "http://example.com/", "https://localhost/"} {
		want := admitURL(t, Default(), raw)
		for _, p := range []*Policy{&zero, fromNil, fromEmpty} {
			got := admitURL(t, p, raw)
			assert.Equal(t, want, got, raw)
		}
	}
}

func TestOptions(t *testing.T) {
	corp, err := New(&Options{
		AllowPrefixes: []netip.Prefix{
			netip.MustParsePrefix("10.0.0.0/8"),
			netip.MustParsePrefix("0.0.0.0/0"), // cannot open Fixed or Metadata rows
			netip.MustParsePrefix("::/0"),
		},
		RefusePrefixes: []netip.Prefix{
			netip.MustParsePrefix("10.9.0.0/16"),
			netip.MustParsePrefix("1.1.1.0/24"),
			netip.MustParsePrefix("::ffff:127.0.0.53/128"), // mapped: read as IPv4
		},
		RefuseHosts: []string{"Evil.Example.", "blocked.test"},
	})
	require.NoError(t, err)
	tests := []struct{ name, scheme, addr, reason string }{
		{"allowed private", "https", "10.1.2.3", ""},
		{"allowed private mapped", "https", "::ffff:10.1.2.3", ""},
		{"allowed private over http", "http", "10.1.2.3", ReasonHTTPNotLoopback},
		{"refuse wins over allow", "https", "10.9.1.1", ReasonAddressRefused},
		{"refused public", "https", "1.1.1.1", ReasonAddressRefused},
		{"refused public mapped", "https", "::ffff:1.1.1.1", ReasonAddressRefused},
		{"refused public NAT64", "https", "64:ff9b::1.1.1.1", ReasonAddressRefused},
		{"refused loopback over http", "http", "127.0.0.53", ReasonAddressRefused},
		{"other loopback over http", "http", "127.0.0.1", ""},
		{"allow opens loopback over https", "https", "127.0.0.1", ""},
		{"metadata stays refused", "https", "169.254.169.254", ReasonMetadataRefused},
		{"metadata v6 stays refused", "https", "fd00:ec2::254", ReasonMetadataRefused},
		{"Azure stays refused", "https", "168.63.129.16", ReasonMetadataRefused},
		{"unspecified stays refused", "https", "0.0.0.0", ReasonAddressRefused},
		{"this-network stays refused", "https", "0.1.2.3", ReasonAddressRefused},
		{"broadcast stays refused", "https", "255.255.255.255", ReasonAddressRefused},
		{"multicast stays refused", "https", "239.1.1.1", ReasonAddressRefused},
		{"reserved stays refused", "https", "240.0.0.1", ReasonAddressRefused},
		{"v6 unspecified stays refused", "https", "::", ReasonAddressRefused},
		{"v6 multicast stays refused", "https", "ff02::1", ReasonAddressRefused},
		{"v6 ULA allowed", "https", "fd12::1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requireDecision(t, admitAddr(t, corp, tt.scheme, tt.addr), tt.reason)
		})
	}
	urls := []struct{ name, url, reason string }{
		{"refused host", "https://evil.example/", ReasonHostRefused},
		{"refused host subdomain", "https://a.EVIL.example./", ReasonHostRefused},
		{"refused host lookalike", "https://notevil.example/", ""},
		{"second refused host", "https://blocked.test/", ReasonHostRefused},
		{"https localhost allowed", "https://localhost/", ""},
		{"metadata name stays refused", "https://metadata.google.internal/", ReasonMetadataRefused},
		{"private literal allowed", "https://10.0.0.1/", ""},
		{"private literal over http", "http://10.0.0.1/", ReasonHTTPNotLoopback},
	}
	for _, tt := range urls {
		t.Run(tt.name, func(t *testing.T) {
			requireDecision(t, admitURL(t, corp, tt.url), tt.reason)
		})
	}
}

func TestOptionsLocalhostFollowsLoopbackAllow(t *testing.T) {
	only6, err := New(&Options{AllowPrefixes: []netip.Prefix{netip.MustParsePrefix("::1/128")}})
	require.NoError(t, err)
	requireDecision(t, admitURL(t, only6, "https://localhost/"), "")
	requireDecision(t, admitURL(t, only6, "https://[::1]/"), "")
	requireDecision(t, admitURL(t, only6, "https://127.0.0.1/"), ReasonAddressRefused)
	requireDecision(t, admitAddr(t, only6, "https", "127.0.0.1"), ReasonAddressRefused)

	// Refusing every loopback address closes http://localhost too.
	closed, err := New(&Options{RefusePrefixes: []netip.Prefix{
		netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128"),
	}})
	require.NoError(t, err)
	requireDecision(t, admitURL(t, closed, "http://localhost/"), ReasonAddressRefused)
	requireDecision(t, admitURL(t, closed, "http://127.0.0.1/"), ReasonAddressRefused)
}

func TestOptionsInvalid(t *testing.T) {
	tests := []struct {
		name string
		opts Options
	}{
		{"zero allow prefix", Options{AllowPrefixes: []netip.Prefix{{}}}},
		{"zero refuse prefix", Options{RefusePrefixes: []netip.Prefix{{}}}},
		{"short mapped prefix", Options{AllowPrefixes: []netip.Prefix{netip.MustParsePrefix("::ffff:0:0/95")}}},
		{"empty host", Options{RefuseHosts: []string{""}}},
		{"IP host", Options{RefuseHosts: []string{"10.0.0.1"}}},
		{"numeric host", Options{RefuseHosts: []string{"2130706433"}}},
		{"host with port", Options{RefuseHosts: []string{"example.com:443"}}},
		{"host with space", Options{RefuseHosts: []string{"exa mple.com"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(&tt.opts)
			assert.Nil(t, p)
			var e *refusal.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, refusal.Config, e.Class)
			assert.Equal(t, ReasonInvalidOptions, e.Reason)
		})
	}
}

func TestOptionsCopied(t *testing.T) {
	opts := &Options{
		AllowPrefixes: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
		RefuseHosts:   []string{"evil.example"},
	}
	p, err := New(opts)
	require.NoError(t, err)
	opts.AllowPrefixes[0] = netip.MustParsePrefix("192.168.0.0/16")
	opts.RefuseHosts[0] = "good.example"
	requireDecision(t, admitAddr(t, p, "https", "10.0.0.1"), "")
	requireDecision(t, admitAddr(t, p, "https", "192.168.0.1"), ReasonAddressRefused)
	requireDecision(t, admitURL(t, p, "https://evil.example/"), ReasonHostRefused)
	requireDecision(t, admitURL(t, p, "https://good.example/"), "")
}

// TestConcurrent shares one Policy between goroutines, for -race.
func TestConcurrent(t *testing.T) {
	p, err := New(&Options{AllowPrefixes: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}})
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 200 {
				if err := p.AdmitAddr(context.Background(), "https", netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, byte(i), byte(j), 1}), 443)); err != nil {
					errs <- err
					return
				}
				u := &url.URL{Scheme: "https", Host: "169.254.169.254"}
				if p.AdmitURL(context.Background(), u) == nil {
					errs <- errors.New("metadata admitted")
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
