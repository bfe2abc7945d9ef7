package conformance

// Reference implementations of the policy ports (egress, authenticator,
// process authority, workspace trust), written to be obviously correct,
// each with bug switches like the store references of impls_test.go: bug
// "" is correct; any other value breaks exactly one behaviour (see
// portBrokenImpls for which subtest each one must fail).

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// ---- EgressPolicy ----

// allowEgress admits https to a set of host names and http to loopback
// names; when dialled, https to public unicast addresses and http to
// loopback.
type allowEgress struct {
	bug   string
	hosts map[string]bool

	mu      sync.Mutex
	scratch string // for bug "racy"
}

func newAllowEgress(bug string) *allowEgress {
	return &allowEgress{bug: bug, hosts: map[string]bool{"example.com": true, "mcp.example.org": true}}
}

func (p *allowEgress) refuse(reason string, u *url.URL) error {
	switch p.bug {
	case "untyped":
		return errors.New("refused")
	case "wrong-class":
		return &refusal.Error{Class: refusal.Config, Reason: reason}
	case "leaks-url":
		return &refusal.Error{Class: refusal.Refused, Reason: reason, Detail: "refused " + u.String()}
	case "origin-with-path":
		return &refusal.Error{Class: refusal.Refused, Reason: reason, Origin: u.Scheme + "://" + u.Host + u.EscapedPath()}
	}
	return &refusal.Error{Class: refusal.Refused, Reason: reason}
}

func (p *allowEgress) AdmitURL(ctx context.Context, u *url.URL) error {
	if p.bug == "ctx-dependent" && ctx.Err() != nil {
		return p.refuse("resolver_unavailable", u)
	}
	if p.bug == "panics" && u.Host[:1] == "[" {
		return p.refuse("host_invalid", u)
	}
	if p.bug == "mutates" {
		u.User = nil // "strip the credentials for safety"
	}
	if u.User != nil {
		return p.refuse("userinfo_refused", u)
	}
	if u.Opaque != "" || strings.ContainsAny(u.Host, "\x00%[]") {
		return p.refuse("host_invalid", u)
	}
	host := strings.ToLower(u.Hostname())
	if p.bug == "racy" {
		p.scratch = host
		time.Sleep(20 * time.Microsecond)
		host = p.scratch
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		if p.hosts[host] {
			return nil
		}
		return p.refuse("host_refused", u)
	case "http":
		if host == "127.0.0.1" || host == "localhost" {
			return nil
		}
		return p.refuse("http_not_loopback", u)
	}
	return p.refuse("scheme_refused", u)
}

func (p *allowEgress) AdmitAddr(_ context.Context, scheme string, addr netip.AddrPort) error {
	a := addr.Addr().Unmap()
	refuse := &url.URL{Scheme: scheme}
	if p.bug == "addr-admits-all" {
		return nil
	}
	if !addr.IsValid() || addr.Port() == 0 || a.Zone() != "" {
		return p.refuse("address_refused", refuse)
	}
	switch strings.ToLower(scheme) {
	case "https":
		if a.IsGlobalUnicast() && !a.IsPrivate() && !a.IsLoopback() && !netip.MustParsePrefix("169.254.0.0/16").Contains(a) &&
			!netip.MustParsePrefix("64:ff9b::/96").Contains(a) {
			return nil
		}
	case "http":
		if a.IsLoopback() {
			return nil
		}
	}
	return p.refuse("address_refused", refuse)
}

// allowEgressHarness returns the harness of an allowEgress-like policy.
func allowEgressHarness(p ports.EgressPolicy) EgressHarness {
	return EgressHarness{
		Policy:    p,
		AdmitURLs: []string{"https://example.com/mcp", "https://MCP.example.org:8443/v1?x=1", "http://127.0.0.1:8080/mcp", "http://localhost:3000/"},
		RefuseURLs: []string{
			"https://evil.example.net/mcp?token=canary-query-token-1",
			"https://canary-user-2:canary-password-2@example.com/",
			"ftp://example.com/canary-path-3",
			"http://example.com/canary-path-4",
		},
		AdmitAddrs: []EgressAddr{{"https", netip.MustParseAddrPort("93.184.215.14:443")}, {"http", netip.MustParseAddrPort("127.0.0.1:8080")}},
		RefuseAddrs: []EgressAddr{
			{"https", netip.MustParseAddrPort("10.0.0.1:443")},
			{"http", netip.MustParseAddrPort("93.184.215.14:80")},
			{"https", netip.MustParseAddrPort("169.254.169.254:443")},
		},
	}
}

func egressHarness(bug string) func(*testing.T) EgressHarness {
	return func(*testing.T) EgressHarness { return allowEgressHarness(newAllowEgress(bug)) }
}

// ---- Authenticator ----

// refAuth hands out "Bearer tok-<generation>"; a refusal re-authorizes once
// (shared by refusals arriving while it runs) into the next generation.
type refAuth struct {
	bug string

	mu        sync.Mutex
	gen       int
	reauths   int
	exhausted bool
	signedOut bool
	gate      chan struct{} // re-authorizations wait on it when not nil
	flight    chan struct{} // closed when the running re-authorization ends
	result    bool
	shared    http.Header // for bug "headers-aliased"
	rotating  bool        // for bug "blank-while-rotating"
}

func (a *refAuth) Headers(_ context.Context, r ports.AuthRequest) (http.Header, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.signedOut {
		switch a.bug {
		case "signed-out-transient":
			return nil, &refusal.Error{Class: refusal.Transient, Reason: "store_unavailable", Server: r.ServerID}
		case "untyped":
			return nil, errors.New("no credential")
		}
		return nil, &refusal.Error{Class: refusal.AuthRequired, Reason: "sign_in_required", Server: r.ServerID}
	}
	if a.bug == "blank-while-rotating" && a.rotating {
		return http.Header{"Authorization": {""}}, nil
	}
	if a.bug == "reauth-every-headers" {
		a.gen++
		a.reauths++
	}
	h := http.Header{"Authorization": {fmt.Sprintf("Bearer tok-%d", a.gen)}}
	if a.bug == "headers-aliased" {
		if a.shared == nil {
			a.shared = h
		}
		return a.shared, nil
	}
	return h, nil
}

func (a *refAuth) Refused(ctx context.Context, r ports.AuthRefusal) (bool, error) {
	a.mu.Lock()
	if a.bug == "retry-same" {
		a.mu.Unlock()
		return true, nil
	}
	if a.exhausted {
		a.mu.Unlock()
		switch a.bug {
		case "retry-when-exhausted":
			return true, nil
		case "untyped":
			return false, errors.New("refresh refused")
		case "leaks-challenge":
			return false, &refusal.Error{Class: refusal.AuthRequired, Reason: "sign_in_required", Server: r.ServerID, Detail: "server said: " + r.Challenge}
		}
		return false, &refusal.Error{Class: refusal.AuthRequired, Reason: "sign_in_required", Server: r.ServerID}
	}
	if f := a.flight; f != nil && a.bug != "no-coalesce" {
		a.mu.Unlock()
		if a.bug == "ignores-ctx" {
			<-f
		} else {
			select {
			case <-f:
			case <-ctx.Done():
				return false, ctx.Err()
			}
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.result, nil
	}
	f := make(chan struct{})
	a.flight = f
	gate := a.gate
	a.mu.Unlock()
	ok := true
	if gate != nil {
		if a.bug == "ignores-ctx" {
			<-gate
		} else {
			select {
			case <-gate:
			case <-ctx.Done():
				ok = false
			}
		}
	}
	if ok && a.bug == "blank-while-rotating" {
		a.mu.Lock()
		a.rotating = true
		a.mu.Unlock()
		time.Sleep(2 * time.Millisecond)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.rotating = false
	if ok {
		a.gen++
		a.reauths++
	}
	a.result = ok
	if a.flight == f {
		a.flight = nil
	}
	close(f)
	if !ok {
		return false, ctx.Err()
	}
	return true, nil
}

func authHarness(bug string) func(*testing.T) AuthenticatorHarness {
	return func(*testing.T) AuthenticatorHarness {
		a := &refAuth{bug: bug}
		return AuthenticatorHarness{
			Auth:    a,
			Request: ports.AuthRequest{ServerID: "srv", Origin: "https://mcp.example.com:443", Method: "POST"},
			Reauths: func() int { a.mu.Lock(); defer a.mu.Unlock(); return a.reauths },
			Stall: func() func() {
				g := make(chan struct{})
				a.mu.Lock()
				a.gate = g
				a.mu.Unlock()
				var once sync.Once
				return func() {
					once.Do(func() {
						a.mu.Lock()
						a.gate = nil
						a.mu.Unlock()
						close(g)
					})
				}
			},
			Exhaust: func() { a.mu.Lock(); a.exhausted = true; a.mu.Unlock() },
			SignOut: func() { a.mu.Lock(); a.signedOut = true; a.mu.Unlock() },
		}
	}
}

// ---- ProcessAuthority ----

// refAuthority grants the programs of an allow-list to every tier but
// plugin, with one root and baseline.
type refAuthority struct {
	bug string

	mu      sync.Mutex
	memo    map[string]error // for bug "caches-by-server"
	scratch string           // for bug "racy"
	calls   atomic.Int64     // for bug "unstable"
	shared  map[string]string
}

var allowedPrograms = map[string]bool{"/usr/bin/mcp-server": true, "/opt/tools/server": true}

func (p *refAuthority) decide(r ports.LaunchRequest) error {
	if p.bug == "racy" {
		p.scratch = r.Command
		time.Sleep(20 * time.Microsecond)
		r.Command = p.scratch
	}
	if !allowedPrograms[r.Command] || r.Tier == ports.TierPlugin {
		switch p.bug {
		case "untyped":
			return errors.New("launch refused")
		case "wrong-class":
			return &refusal.Error{Class: refusal.Config, Reason: "process_refused", Server: r.ServerID}
		case "leaks-argv":
			return &refusal.Error{Class: refusal.Refused, Reason: "process_refused", Server: r.ServerID,
				Detail: "refused " + r.Command + " " + strings.Join(r.Args, " ")}
		}
		return &refusal.Error{Class: refusal.Refused, Reason: "process_refused", Server: r.ServerID}
	}
	return nil
}

func (p *refAuthority) Authorize(_ context.Context, r ports.LaunchRequest) (ports.ProcessGrant, error) {
	if p.bug == "mutates-request" {
		slices.Sort(r.Args)
	}
	var err error
	if p.bug == "caches-by-server" {
		p.mu.Lock()
		prev, ok := p.memo[r.ServerID]
		p.mu.Unlock()
		if ok {
			err = prev
		} else {
			err = p.decide(r)
			p.mu.Lock()
			if p.memo == nil {
				p.memo = map[string]error{}
			}
			p.memo[r.ServerID] = err
			p.mu.Unlock()
		}
	} else {
		err = p.decide(r)
	}
	root := "/work/repo"
	if p.bug == "relative-root" {
		root = "work/repo"
	}
	base := map[string]string{"HOME": "/home/agent", "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
	switch p.bug {
	case "grant-aliased":
		p.mu.Lock()
		if p.shared == nil {
			p.shared = base
		}
		base = p.shared
		p.mu.Unlock()
	case "argv-in-env":
		base["MCP_ARGS"] = strings.Join(r.Args, " ")
	case "unstable":
		base["MCPWARD_CALL"] = fmt.Sprint(p.calls.Add(1))
	}
	if err != nil {
		if p.bug == "grant-with-refusal" {
			return ports.ProcessGrant{AllowedRoot: root, BaselineEnv: base}, err
		}
		return ports.ProcessGrant{}, err
	}
	return ports.ProcessGrant{AllowedRoot: filepath.FromSlash(root), BaselineEnv: base}, nil
}

func authorityRequests() (grant, refuse []ports.LaunchRequest) {
	grant = []ports.LaunchRequest{
		{ServerID: "fs", Tier: ports.TierProject, Origin: "/work/repo/.mcp.json", Fingerprint: "ab12",
			Command: "/usr/bin/mcp-server", Args: []string{"--root", "/work/repo", "--token=grant-canary-secret"}, Cwd: "/work/repo"},
		{ServerID: "tools", Tier: ports.TierUser, Origin: "/home/agent/.config/mcpward/mcp.json", Fingerprint: "cd34",
			Command: "/opt/tools/server"},
	}
	refuse = []ports.LaunchRequest{
		// fs, another program.
		{ServerID: "fs", Tier: ports.TierProject, Origin: "/work/repo/.mcp.json", Fingerprint: "ab12",
			Command: "/usr/bin/evil-server", Args: []string{"--root", "/work/repo", "--token=refuse-canary-secret-1"}, Cwd: "/work/repo"},
		// tools, from a plugin.
		{ServerID: "tools", Tier: ports.TierPlugin, Origin: "plugin:acme", Fingerprint: "cd34",
			Command: "/opt/tools/server", Args: []string{"--key=refuse-canary-secret-2"}},
	}
	return grant, refuse
}

func authorityHarness(bug string) func(*testing.T) ProcessAuthorityHarness {
	return func(*testing.T) ProcessAuthorityHarness {
		g, r := authorityRequests()
		return ProcessAuthorityHarness{Authority: &refAuthority{bug: bug}, Grant: g, Refuse: r}
	}
}

// ---- WorkspaceTrust ----

// refTrust reports the facts the host set last, under a lock.
type refTrust struct {
	bug string

	mu      sync.Mutex
	facts   ports.WorkspaceFacts
	failing bool
	first   *ports.WorkspaceFacts // for bug "stale"

	// bug "torn": each field apart.
	trusted   atomic.Bool
	repo, gen atomic.Value
}

func newRefTrust(bug string, f ports.WorkspaceFacts) *refTrust {
	w := &refTrust{bug: bug}
	w.set(f)
	return w
}

func (w *refTrust) set(f ports.WorkspaceFacts) {
	if w.bug == "torn" {
		w.trusted.Store(f.Trusted)
		time.Sleep(20 * time.Microsecond)
		w.repo.Store(f.Repository)
		time.Sleep(20 * time.Microsecond)
		w.gen.Store(f.Generation)
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.facts = f
}

func (w *refTrust) Facts(context.Context) (ports.WorkspaceFacts, error) {
	if w.bug == "torn" {
		f := ports.WorkspaceFacts{Trusted: w.trusted.Load()}
		time.Sleep(20 * time.Microsecond)
		f.Repository = w.repo.Load().(string)
		time.Sleep(20 * time.Microsecond)
		f.Generation = w.gen.Load().(string)
		return f, nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.failing {
		switch w.bug {
		case "untyped":
			return ports.WorkspaceFacts{}, errors.New("cannot tell")
		case "trusted-on-failure":
			return w.facts, &refusal.Error{Class: refusal.Transient, Reason: "trust_unavailable"}
		}
		return ports.WorkspaceFacts{}, &refusal.Error{Class: refusal.Transient, Reason: "trust_unavailable"}
	}
	f := w.facts
	switch w.bug {
	case "stale":
		if w.first == nil {
			w.first = &f
		}
		f = *w.first
	case "userinfo-repo":
		if u, err := url.Parse(f.Repository); err == nil && u.Host != "" {
			u.User = url.UserPassword("x-access-token", "ghp_canary0token")
			f.Repository = u.String()
		}
	}
	return f, nil
}

var trustWant = ports.WorkspaceFacts{Trusted: true, Repository: "https://github.com/example/repo.git", Generation: "gen-1"}

// trustDecision is decision i of the suite's harnesses.
func trustDecision(i int) ports.WorkspaceFacts {
	names := []string{"zero", "one", "two", "three"}
	return ports.WorkspaceFacts{
		Trusted:    i%2 == 1,
		Repository: "https://github.com/example/" + names[i%4] + ".git",
		Generation: fmt.Sprintf("g%d", i),
	}
}

func trustHarness(bug string) func(*testing.T) WorkspaceTrustHarness {
	return func(*testing.T) WorkspaceTrustHarness {
		w := newRefTrust(bug, trustWant)
		return WorkspaceTrustHarness{
			Trust:  w,
			Want:   trustWant,
			Decide: func(i int) ports.WorkspaceFacts { f := trustDecision(i); w.set(f); return f },
			Break:  func() { w.mu.Lock(); w.failing = true; w.mu.Unlock() },
		}
	}
}
