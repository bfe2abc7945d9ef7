package conformance

import (
	"context"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// EgressHarness is one ports.EgressPolicy and examples of what it decides:
// the suite cannot know a host's policy, so the harness says which URLs and
// addresses it admits and which it refuses. Give refused URLs that carry
// what an error must never show (userinfo, a path, a query with a token):
// the suite checks the refusals do not.
type EgressHarness struct {
	// Policy is the policy under test. Required.
	Policy ports.EgressPolicy
	// AdmitURLs and RefuseURLs are URLs (parsed with url.Parse) the policy
	// admits and refuses. At least one of each is required.
	AdmitURLs, RefuseURLs []string
	// AdmitAddrs and RefuseAddrs are dialled addresses, each for a scheme,
	// the policy admits and refuses. At least one of each is required.
	AdmitAddrs, RefuseAddrs []EgressAddr
}

// EgressAddr is one AdmitAddr question.
type EgressAddr struct {
	// Scheme is "http" or "https".
	Scheme string
	// Addr is the dialled address, e.g. netip.MustParseAddrPort("10.0.0.1:443").
	Addr netip.AddrPort
}

// RunEgressPolicy runs the ports.EgressPolicy conformance suite: the
// harness's decisions hold for AdmitURL and AdmitAddr; every refusal is a
// *refusal.Error of Class Refused with a lower_snake_case Reason and an
// Origin of at most scheme://host:port, carrying no userinfo, path, query
// or fragment of the URL; decisions are pure (the same with a context
// already ended, the same when asked again, the URL left unmodified);
// hostile URLs and addresses are decided (admitted or refused as Refused)
// without a panic; and concurrent decisions from many goroutines are each
// right (run it with -race).
//
// mk is called once per subtest.
func RunEgressPolicy(t *testing.T, mk func(t *testing.T) EgressHarness) {
	s := egressSuite{mk: mk}
	t.Run("AdmitsURLs", s.admitsURLs)
	t.Run("RefusesURLs", s.refusesURLs)
	t.Run("AdmitsAddrs", s.admitsAddrs)
	t.Run("RefusesAddrs", s.refusesAddrs)
	t.Run("RefusalsCarryNoSecret", s.noSecret)
	t.Run("PureDecisions", s.pure)
	t.Run("URLNotModified", s.notModified)
	t.Run("HostileInput", s.hostile)
	t.Run("ConcurrentDecisions", s.concurrent)
}

type egressSuite struct {
	mk func(t *testing.T) EgressHarness
}

func (s egressSuite) harness(t *testing.T) EgressHarness {
	t.Helper()
	h := s.mk(t)
	require.NotNil(t, h.Policy, "EgressHarness.Policy is required")
	require.NotEmpty(t, h.AdmitURLs, "EgressHarness.AdmitURLs is required")
	require.NotEmpty(t, h.RefuseURLs, "EgressHarness.RefuseURLs is required")
	require.NotEmpty(t, h.AdmitAddrs, "EgressHarness.AdmitAddrs is required")
	require.NotEmpty(t, h.RefuseAddrs, "EgressHarness.RefuseAddrs is required")
	return h
}

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err, "harness URL %q", raw)
	return u
}

var refusedOnly = []refusal.Class{refusal.Refused}

func (s egressSuite) admitsURLs(t *testing.T) {
	h := s.harness(t)
	for _, raw := range h.AdmitURLs {
		assert.NoError(t, h.Policy.AdmitURL(t.Context(), mustURL(t, raw)), "AdmitURL(%s)", raw)
	}
}

func (s egressSuite) refusesURLs(t *testing.T) {
	h := s.harness(t)
	for _, raw := range h.RefuseURLs {
		err := h.Policy.AdmitURL(t.Context(), mustURL(t, raw))
		if assert.Error(t, err, "AdmitURL(%s) must refuse", raw) {
			assertRefusal(t, err, refusedOnly, "AdmitURL(%s)", raw)
		}
	}
}

func (s egressSuite) admitsAddrs(t *testing.T) {
	h := s.harness(t)
	for _, a := range h.AdmitAddrs {
		assert.NoError(t, h.Policy.AdmitAddr(t.Context(), a.Scheme, a.Addr), "AdmitAddr(%s, %s)", a.Scheme, a.Addr)
	}
}

func (s egressSuite) refusesAddrs(t *testing.T) {
	h := s.harness(t)
	for _, a := range h.RefuseAddrs {
		err := h.Policy.AdmitAddr(t.Context(), a.Scheme, a.Addr)
		if assert.Error(t, err, "AdmitAddr(%s, %s) must refuse", a.Scheme, a.Addr) {
			assertRefusal(t, err, refusedOnly, "AdmitAddr(%s, %s)", a.Scheme, a.Addr)
		}
	}
}

// noSecret: a refusal shows none of the URL's userinfo, path, query or
// fragment, also for the suite's own variants of every refused URL
// carrying a password, a path and a query token.
func (s egressSuite) noSecret(t *testing.T) {
	h := s.harness(t)
	for _, raw := range h.RefuseURLs {
		u := mustURL(t, raw)
		assertNoSecrets(t, h.Policy.AdmitURL(t.Context(), u), urlSecrets(u), "AdmitURL(%s)", raw)
		v := *u
		v.Opaque = ""
		v.User = url.UserPassword("canary-user", "canary-password-5f3a")
		v.Path = "/canary-path-9c1e/mcp"
		v.RawQuery = "access_token=canary-query-77d2"
		v.Fragment = "canary-fragment-0b4f"
		err := h.Policy.AdmitURL(t.Context(), &v)
		if assert.Error(t, err, "AdmitURL of %s with userinfo, path and query added must still refuse", raw) {
			assertRefusal(t, err, refusedOnly, "AdmitURL(%s with secrets)", raw)
			assertNoSecrets(t, err, urlSecrets(&v), "AdmitURL(%s with secrets)", raw)
		}
	}
}

// pure: a decision does not depend on the context (a policy that consults
// a resolver or the network fails when the context has ended) and is the
// same when asked again.
func (s egressSuite) pure(t *testing.T) {
	h := s.harness(t)
	ended, cancel := context.WithCancel(t.Context())
	cancel()
	for _, raw := range h.AdmitURLs {
		assert.NoError(t, h.Policy.AdmitURL(ended, mustURL(t, raw)), "AdmitURL(%s) with an ended context: a decision is pure", raw)
	}
	for _, raw := range h.RefuseURLs {
		a := h.Policy.AdmitURL(ended, mustURL(t, raw))
		b := h.Policy.AdmitURL(t.Context(), mustURL(t, raw))
		assert.Equal(t, refusal.ReasonOf(b), refusal.ReasonOf(a), "AdmitURL(%s): the same decision with an ended context", raw)
	}
	for _, a := range h.AdmitAddrs {
		assert.NoError(t, h.Policy.AdmitAddr(ended, a.Scheme, a.Addr), "AdmitAddr(%s, %s) with an ended context", a.Scheme, a.Addr)
	}
	for _, a := range h.RefuseAddrs {
		assert.Error(t, h.Policy.AdmitAddr(ended, a.Scheme, a.Addr), "AdmitAddr(%s, %s) with an ended context", a.Scheme, a.Addr)
	}
	for range 3 {
		for _, raw := range h.AdmitURLs {
			assert.NoError(t, h.Policy.AdmitURL(t.Context(), mustURL(t, raw)), "AdmitURL(%s) asked again", raw)
		}
		for _, raw := range h.RefuseURLs {
			assert.Error(t, h.Policy.AdmitURL(t.Context(), mustURL(t, raw)), "AdmitURL(%s) asked again", raw)
		}
	}
}

func (s egressSuite) notModified(t *testing.T) {
	h := s.harness(t)
	for _, raw := range append(append([]string{}, h.AdmitURLs...), h.RefuseURLs...) {
		u := mustURL(t, raw)
		before := *u
		if u.User != nil {
			uu := *u.User
			before.User = &uu
		}
		_ = h.Policy.AdmitURL(t.Context(), u)
		assert.Equal(t, before.String(), u.String(), "AdmitURL(%s) modified the URL", raw)
		assert.Equal(t, before, *u, "AdmitURL(%s) modified the URL", raw)
	}
}

// hostileURLs are URLs (built field by field, as a caller could) that a
// policy must decide without a panic.
func hostileURLs() []*url.URL {
	long := strings.Repeat("a", 70000)
	return []*url.URL{
		{},
		{Scheme: "https"},
		{Scheme: "https", Host: ":"},
		{Scheme: "https", Host: "[::1%25eth0]:443"},
		{Scheme: "https", Host: "[::1"},
		{Scheme: "https", Host: "example.com:99999999999999999999"},
		{Scheme: "https", Host: "example.com:-1"},
		{Scheme: "https", Host: "exa\x00mple.com"},
		{Scheme: "https", Host: "\u212a.example.com"},
		{Scheme: "https", Host: long + ".com"},
		{Scheme: "https", Host: "a..b"},
		{Scheme: "https", Host: "."},
		{Scheme: "HTTPS", Host: "EXAMPLE.COM"},
		{Scheme: "http", Opaque: "example.com"},
		{Scheme: "javascript", Opaque: "alert(1)"},
		{Scheme: "https", Host: "0x7f.1", Path: "/"},
		{Scheme: "https", Host: "2130706433"},
		{Scheme: "https", Host: "169.254.169.254"},
		{Scheme: "https", Host: "[::ffff:169.254.169.254]"},
		{Scheme: "https", Host: "metadata.google.internal"},
		{Scheme: "https", Host: "example.com", User: url.User(long)},
		{Scheme: "file", Path: "/etc/passwd"},
		{Scheme: "", Host: "example.com"},
	}
}

func hostileAddrs() []EgressAddr {
	return []EgressAddr{
		{"https", netip.AddrPort{}},
		{"https", netip.AddrPortFrom(netip.MustParseAddr("93.184.215.14"), 0)},
		{"", netip.MustParseAddrPort("93.184.215.14:443")},
		{"ftp", netip.MustParseAddrPort("93.184.215.14:21")},
		{"HTTPS", netip.MustParseAddrPort("93.184.215.14:443")},
		{"https", netip.MustParseAddrPort("[fe80::1%eth0]:443")},
		{"https", netip.MustParseAddrPort("[::ffff:10.0.0.1]:443")},
		{"https", netip.MustParseAddrPort("[64:ff9b::a00:1]:443")},
		{"https", netip.MustParseAddrPort("0.0.0.0:443")},
		{"https", netip.MustParseAddrPort("[::]:443")},
		{"http", netip.MustParseAddrPort("255.255.255.255:80")},
	}
}

// hostile: odd URLs and addresses are admitted or refused (Class Refused),
// never a panic or another class.
func (s egressSuite) hostile(t *testing.T) {
	h := s.harness(t)
	for i, u := range hostileURLs() {
		var err error
		if safeCall(t, fmt.Sprintf("AdmitURL(hostile URL %d)", i), func() { err = h.Policy.AdmitURL(t.Context(), u) }) && err != nil {
			assertRefusal(t, err, refusedOnly, "AdmitURL(hostile URL %d)", i)
			assertNoSecrets(t, err, urlSecrets(u), "AdmitURL(hostile URL %d)", i)
		}
	}
	for _, a := range hostileAddrs() {
		var err error
		if safeCall(t, fmt.Sprintf("AdmitAddr(%q, %v)", a.Scheme, a.Addr), func() { err = h.Policy.AdmitAddr(t.Context(), a.Scheme, a.Addr) }) && err != nil {
			assertRefusal(t, err, refusedOnly, "AdmitAddr(%q, %v)", a.Scheme, a.Addr)
		}
	}
}

// concurrent: many goroutines ask every question at once; each answer is
// the one asked alone.
func (s egressSuite) concurrent(t *testing.T) {
	h := s.harness(t)
	type question struct {
		name  string
		admit bool
		ask   func() error
	}
	var qs []question
	for _, raw := range h.AdmitURLs {
		qs = append(qs, question{"AdmitURL(" + raw + ")", true, func() error { return h.Policy.AdmitURL(t.Context(), mustURL(t, raw)) }})
	}
	for _, raw := range h.RefuseURLs {
		qs = append(qs, question{"AdmitURL(" + raw + ")", false, func() error { return h.Policy.AdmitURL(t.Context(), mustURL(t, raw)) }})
	}
	for _, a := range h.AdmitAddrs {
		qs = append(qs, question{"AdmitAddr(" + a.Addr.String() + ")", true, func() error { return h.Policy.AdmitAddr(t.Context(), a.Scheme, a.Addr) }})
	}
	for _, a := range h.RefuseAddrs {
		qs = append(qs, question{"AdmitAddr(" + a.Addr.String() + ")", false, func() error { return h.Policy.AdmitAddr(t.Context(), a.Scheme, a.Addr) }})
	}
	hammer(t, 8, 40, func(w, i int) error {
		q := qs[(w*7+i)%len(qs)]
		err := q.ask()
		if q.admit && err != nil {
			return fmt.Errorf("%s refused under concurrent use (%v); it is admitted when asked alone", q.name, err)
		}
		if !q.admit && err == nil {
			return fmt.Errorf("%s admitted under concurrent use; it is refused when asked alone", q.name)
		}
		return nil
	})
}
