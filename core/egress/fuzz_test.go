package egress

import (
	"context"
	"errors"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpward/mcpward/core/refusal"
)

var reasons = map[string]bool{
	ReasonURLInvalid: true, ReasonSchemeRefused: true, ReasonOpaqueRefused: true,
	ReasonUserinfoRefused: true, ReasonHostMissing: true, ReasonHostInvalid: true,
	ReasonZoneRefused: true, ReasonPortRefused: true, ReasonNumericHost: true,
	ReasonMetadataRefused: true, ReasonHostRefused: true, ReasonHTTPNotLoopback: true,
	ReasonAddressRefused: true, ReasonAddressInvalid: true,
}

var originRE = regexp.MustCompile(`^https?://[^/?#@\s%]+$`)

// checkRefusal fails t unless err is nil or a well-formed refusal.
func checkRefusal(t *testing.T, err error) *refusal.Error {
	t.Helper()
	if err == nil {
		return nil
	}
	var e *refusal.Error
	if !errors.As(err, &e) {
		t.Fatalf("not a *refusal.Error: %T", err)
	}
	if e.Class != refusal.Refused || !reasons[e.Reason] || e.Server != "" {
		t.Fatalf("bad refusal %+v", e)
	}
	if e.Origin != "" && !originRE.MatchString(e.Origin) {
		t.Fatalf("bad origin %q", e.Origin)
	}
	return e
}

const (
	markUser  = "zqUSERqz"
	markPass  = "zqPASSqz"
	markPath  = "zqPATHqz"
	markQuery = "zqQUERYqz"
	markFrag  = "zqFRAGqz"
)

// FuzzAdmitURL: AdmitURL never panics; every error is a well-formed
// refusal; the decision does not depend on path, query or fragment; and a
// refusal never carries them, nor the userinfo.
func FuzzAdmitURL(f *testing.F) {
	for _, s := range []string{
		"https://example.com/mcp", "http://localhost:3000/", "http://127.0.0.1/", "https://[::1]/",
		"http://2130706433/", "http://0x7f.0.0.1/", "http://0177.0.0.1/", "http://127.1/", "http://0/",
		"https://user:pass@example.com/p?q#f", "http://[fe80::1%25eth0]/", "https://h:0/", "https://h:65536/",
		"http://169.254.169.254/latest/meta-data/", "https://metadata.google.internal./",
		"https://１２７.０.０.１/", "https://[::ffff:10.0.0.1]/", "https://[64:ff9b::a9fe:a9fe]/",
		"javascript:alert(1)", "http:example.com", "https:///x", "HTTP://LOCALHOST./", "https://a..b/",
		"https://%EF%BC%91.1.1.1/", "https://bücher.example/", "ftp://x/",
	} {
		f.Add(s)
	}
	p := Default()
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		e1 := checkRefusal(t, p.AdmitURL(ctx, u))

		v := *u
		v.Path, v.RawPath, v.RawQuery, v.Fragment, v.RawFragment = "/"+markPath, "", "q="+markQuery, markFrag, ""
		v.ForceQuery = false
		if v.User != nil {
			v.User = url.UserPassword(markUser, markPass)
		}
		err2 := p.AdmitURL(ctx, &v)
		e2 := checkRefusal(t, err2)
		if (e1 == nil) != (e2 == nil) || e1 != nil && (e1.Reason != e2.Reason || e1.Origin != e2.Origin) {
			t.Fatalf("decision depends on path/query/fragment/userinfo: %v vs %v", e1, e2)
		}
		if e2 == nil {
			if u.User != nil || u.Opaque != "" || u.Host == "" {
				t.Fatalf("admitted %q", raw)
			}
			return
		}
		if strings.Contains(strings.ToLower(v.Host), "zq") {
			return // the fuzzer wrote a marker into the host itself
		}
		msg := err2.Error()
		for _, m := range []string{markUser, markPass, markPath, markQuery, markFrag} {
			if strings.Contains(msg, m) {
				t.Fatalf("refusal leaks %s: %q", m, msg)
			}
		}
	})
}

// FuzzHost: parseAuthority never panics, and it never calls a host a name
// when a resolver would read it as an address: inet_aton (the reference
// model) and netip both fail on every admitted name, and every address it
// reports is one netip parses from the host as written.
func FuzzHost(f *testing.F) {
	for _, s := range []string{
		"example.com", "1password.com", "2130706433", "0x7f.0.0.1", "127.1", "0", "1.2.3.4.", "[::1]:80",
		"１２７.０.０.１", "127。0。0。1", "a..b", "h:080", "0x", "169.254.43518", "[fe80::1%eth0]", "x.0xff",
		"١٢٧.٠.٠.١", "localhost.", "[::ffff:127.0.0.1]",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, hostport string) {
		a, reason := parseAuthority(hostport)
		if reason != "" {
			if a.addr.IsValid() && reason != ReasonPortRefused {
				t.Fatalf("refused %q (%s) yet kept an address", hostport, reason)
			}
			return
		}
		host, bracketed, _, _, _ := splitHostPort(hostport)
		switch {
		case a.addr.IsValid():
			want, err := netip.ParseAddr(host)
			if err != nil || want != a.addr {
				t.Fatalf("%q: address %v is not what netip parses from %q", hostport, a.addr, host)
			}
			if !bracketed && !a.addr.Is4() {
				t.Fatalf("%q: unbracketed non-IPv4 address", hostport)
			}
		case a.name != "":
			if _, ok := inetAton(a.name); ok {
				t.Fatalf("%q: name %q is an inet_aton address", hostport, a.name)
			}
			if _, ok := inetAton(host); ok {
				t.Fatalf("%q: host %q is an inet_aton address", hostport, host)
			}
			if _, err := netip.ParseAddr(a.name); err == nil {
				t.Fatalf("%q: name %q is an IP literal", hostport, a.name)
			}
			if strings.HasSuffix(a.name, ".") || strings.Contains(a.name, "..") || a.name != strings.ToLower(a.name) && isASCII(a.name) {
				t.Fatalf("%q: name %q is not in effective form", hostport, a.name)
			}
		default:
			t.Fatalf("%q: admitted with neither name nor address", hostport)
		}
	})
}

// FuzzAdmitAddr: AdmitAddr never panics; an IPv4 address and its
// IPv4-mapped form get the same decision; whatever net/netip calls
// loopback, private, link-local, multicast, unspecified or not global
// unicast is refused over https; http admits exactly loopback.
func FuzzAdmitAddr(f *testing.F) {
	f.Add([]byte{127, 0, 0, 1}, uint16(80))
	f.Add([]byte{169, 254, 169, 254}, uint16(80))
	f.Add([]byte{1, 1, 1, 1}, uint16(443))
	f.Add(netip.MustParseAddr("64:ff9b::a00:1").AsSlice(), uint16(443))
	f.Add(netip.MustParseAddr("2606:4700:4700::1111").AsSlice(), uint16(443))
	p := Default()
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, b []byte, port uint16) {
		a, ok := netip.AddrFromSlice(b)
		if !ok || port == 0 {
			return
		}
		ap := netip.AddrPortFrom(a, port)
		https := checkRefusal(t, p.AdmitAddr(ctx, "https", ap))
		http := checkRefusal(t, p.AdmitAddr(ctx, "http", ap))
		if mustRefuse(a) && https == nil {
			t.Fatalf("https admitted %v, which netip does not call public", a)
		}
		if isLoopback(a.Unmap()) != (http == nil) {
			t.Fatalf("http decision on %v: %v", a, http)
		}
		if a.Is4() {
			m := checkRefusal(t, p.AdmitAddr(ctx, "https", netip.AddrPortFrom(mapped(a), port)))
			if (m == nil) != (https == nil) || m != nil && (m.Reason != https.Reason || m.Detail != https.Detail) {
				t.Fatalf("mapped form of %v decided differently: %v vs %v", a, m, https)
			}
			n := checkRefusal(t, p.AdmitAddr(ctx, "https", netip.AddrPortFrom(nat64(a), port)))
			if (n == nil) != (https == nil) {
				t.Fatalf("NAT64 form of %v decided differently: %v vs %v", a, n, https)
			}
		}
		// Both layers agree on a literal.
		u := checkRefusal(t, p.AdmitURL(ctx, urlFor("https", a)))
		if (u == nil) != (https == nil) || u != nil && u.Reason != https.Reason {
			t.Fatalf("AdmitURL and AdmitAddr disagree on %v: %v vs %v", a, u, https)
		}
	})
}
