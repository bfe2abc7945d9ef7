package portstest

import (
	"context"
	"maps"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"sync"

	"github.com/mcpward/mcpward/ports"
)

var (
	_ ports.EgressPolicy     = (*EgressPolicy)(nil)
	_ ports.Authenticator    = (*Authenticator)(nil)
	_ ports.ProcessAuthority = (*ProcessAuthority)(nil)
	_ ports.WorkspaceTrust   = (*WorkspaceTrust)(nil)
)

// AddrRequest is one question put to EgressPolicy.AdmitAddr.
type AddrRequest struct {
	Scheme string
	Addr   netip.AddrPort
}

// EgressPolicy is a configurable ports.EgressPolicy that records every
// question it decides, so a test can assert that admission happened (and
// happened before any attempt). Set URL and Addr before first use; a nil
// func admits. Fallible methods: "AdmitURL", "AdmitAddr".
type EgressPolicy struct {
	Faults
	// URL decides AdmitURL; nil admits every URL.
	URL func(u *url.URL) error
	// Addr decides AdmitAddr; nil admits every address.
	Addr func(scheme string, addr netip.AddrPort) error

	mu    sync.Mutex
	urls  []url.URL
	addrs []AddrRequest
}

// AllowAllEgress returns an EgressPolicy that admits everything.
func AllowAllEgress() *EgressPolicy {
	p := &EgressPolicy{}
	p.setMethods("AdmitURL", "AdmitAddr")
	return p
}

// DenyAllEgress returns an EgressPolicy that refuses every URL and address
// with err (ErrRefused when err is nil). Pass a *refusal.Error of Class
// Refused where the class matters.
func DenyAllEgress(err error) *EgressPolicy {
	if err == nil {
		err = ErrRefused
	}
	p := AllowAllEgress()
	p.URL = func(*url.URL) error { return err }
	p.Addr = func(string, netip.AddrPort) error { return err }
	return p
}

// AdmitURL records a copy of u and returns URL's decision.
func (p *EgressPolicy) AdmitURL(ctx context.Context, u *url.URL) error {
	if err := p.hit("AdmitURL"); err != nil {
		return err
	}
	p.mu.Lock()
	p.urls = append(p.urls, *u)
	p.mu.Unlock()
	if p.URL == nil {
		return nil
	}
	return p.URL(u)
}

// AdmitAddr records the question and returns Addr's decision.
func (p *EgressPolicy) AdmitAddr(ctx context.Context, scheme string, addr netip.AddrPort) error {
	if err := p.hit("AdmitAddr"); err != nil {
		return err
	}
	p.mu.Lock()
	p.addrs = append(p.addrs, AddrRequest{Scheme: scheme, Addr: addr})
	p.mu.Unlock()
	if p.Addr == nil {
		return nil
	}
	return p.Addr(scheme, addr)
}

// URLs returns copies of the URLs AdmitURL decided on, in call order.
func (p *EgressPolicy) URLs() []*url.URL {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*url.URL, len(p.urls))
	for i := range p.urls {
		u := p.urls[i]
		out[i] = &u
	}
	return out
}

// Addrs returns the questions AdmitAddr decided on, in call order.
func (p *EgressPolicy) Addrs() []AddrRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.addrs)
}

// Authenticator is a scripted ports.Authenticator. Headers returns the
// current headers. Refused re-authorizes while its retry budget lasts and
// coalesces concurrent refusals: a Refused call that arrives while a
// re-authorization is running waits for it and shares its answer, so many
// requests refused together cost one re-authorization. With the budget
// spent, Refused answers retry=false without re-authorizing. Fallible
// methods: "Headers", "Refused" (inject a *refusal.Error of Class
// AuthRequired into "Headers" to model a missing credential).
type Authenticator struct {
	Faults
	// Reauthorize, when non-nil, performs one re-authorization, with the ctx
	// of the Refused call that started it; a test can block in it to hold
	// refusals together. Non-nil headers it returns replace the current
	// ones; an error is returned, with retry=false, by every Refused call
	// sharing it. When nil, a re-authorization keeps the headers and
	// succeeds at once. Set it before first use.
	Reauthorize func(ctx context.Context) (http.Header, error)

	mu       sync.Mutex
	header   http.Header
	budget   int
	reauths  int
	flight   *reauth
	requests []ports.AuthRequest
	refusals []ports.AuthRefusal
}

// reauth is one re-authorization in progress and, once done is closed, its
// answer.
type reauth struct {
	done    chan struct{}
	waiters int
	retry   bool
	err     error
}

// NewAuthenticator returns an Authenticator whose Headers returns h and
// whose Refused allows retries re-authorizations in all.
func NewAuthenticator(h http.Header, retries int) *Authenticator {
	a := &Authenticator{header: h.Clone(), budget: retries}
	a.setMethods("Headers", "Refused")
	return a
}

// SetHeaders replaces the headers Headers returns.
func (a *Authenticator) SetHeaders(h http.Header) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.header = h.Clone()
}

// SetRetries sets how many more re-authorizations Refused allows.
func (a *Authenticator) SetRetries(n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.budget = n
}

// Headers records r and returns a copy of the current headers.
func (a *Authenticator) Headers(ctx context.Context, r ports.AuthRequest) (http.Header, error) {
	if err := a.hit("Headers"); err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.requests = append(a.requests, r)
	return a.header.Clone(), nil
}

// Refused records r and answers whether a fresh credential is ready,
// joining the re-authorization in progress if there is one. A call that
// waits returns ctx.Err() if its ctx ends first.
func (a *Authenticator) Refused(ctx context.Context, r ports.AuthRefusal) (bool, error) {
	if err := a.hit("Refused"); err != nil {
		return false, err
	}
	a.mu.Lock()
	a.refusals = append(a.refusals, r)
	if f := a.flight; f != nil {
		f.waiters++
		a.mu.Unlock()
		select {
		case <-f.done:
			return f.retry, f.err
		case <-ctx.Done():
			a.mu.Lock()
			f.waiters--
			a.mu.Unlock()
			return false, ctx.Err()
		}
	}
	if a.budget <= 0 {
		a.mu.Unlock()
		return false, nil
	}
	a.budget--
	a.reauths++
	f := &reauth{done: make(chan struct{}), waiters: 1}
	a.flight = f
	a.mu.Unlock()

	var h http.Header
	var err error
	if a.Reauthorize != nil {
		h, err = a.Reauthorize(ctx)
	}
	a.mu.Lock()
	if err == nil && h != nil {
		a.header = h.Clone()
	}
	f.retry, f.err = err == nil, err
	a.flight = nil
	a.mu.Unlock()
	close(f.done)
	return f.retry, f.err
}

// Reauths reports how many re-authorizations Refused has started.
func (a *Authenticator) Reauths() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.reauths
}

// Waiting reports how many Refused calls share the re-authorization in
// progress (the one running it included); 0 when none is running.
func (a *Authenticator) Waiting() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.flight == nil {
		return 0
	}
	return a.flight.waiters
}

// Requests returns the requests Headers answered, in call order.
func (a *Authenticator) Requests() []ports.AuthRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.requests)
}

// Refusals returns the refusals Refused was told of, in call order.
func (a *Authenticator) Refusals() []ports.AuthRefusal {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.refusals)
}

// ProcessAuthority is a configurable ports.ProcessAuthority that records
// every launch request it decides. Set Decide before first use; a nil
// Decide refuses with ErrRefused. Fallible method: "Authorize".
type ProcessAuthority struct {
	Faults
	// Decide grants or refuses one request.
	Decide func(r ports.LaunchRequest) (ports.ProcessGrant, error)

	mu       sync.Mutex
	requests []ports.LaunchRequest
}

// GrantAllProcesses returns a ProcessAuthority that grants every launch a
// copy of g.
func GrantAllProcesses(g ports.ProcessGrant) *ProcessAuthority {
	g.BaselineEnv = maps.Clone(g.BaselineEnv)
	p := &ProcessAuthority{Decide: func(ports.LaunchRequest) (ports.ProcessGrant, error) { return g, nil }}
	p.setMethods("Authorize")
	return p
}

// RefuseAllProcesses returns a ProcessAuthority that refuses every launch
// with err (ErrRefused when err is nil). Pass a *refusal.Error of Class
// Refused where the class matters.
func RefuseAllProcesses(err error) *ProcessAuthority {
	if err == nil {
		err = ErrRefused
	}
	p := &ProcessAuthority{Decide: func(ports.LaunchRequest) (ports.ProcessGrant, error) {
		return ports.ProcessGrant{}, err
	}}
	p.setMethods("Authorize")
	return p
}

// Authorize records a copy of r and returns Decide's answer, with a copy of
// its BaselineEnv.
func (p *ProcessAuthority) Authorize(ctx context.Context, r ports.LaunchRequest) (ports.ProcessGrant, error) {
	if err := p.hit("Authorize"); err != nil {
		return ports.ProcessGrant{}, err
	}
	rc := r
	rc.Args = slices.Clone(r.Args)
	p.mu.Lock()
	p.requests = append(p.requests, rc)
	p.mu.Unlock()
	if p.Decide == nil {
		return ports.ProcessGrant{}, ErrRefused
	}
	g, err := p.Decide(r)
	g.BaselineEnv = maps.Clone(g.BaselineEnv)
	return g, err
}

// Requests returns the launch requests Authorize decided on, in call order.
func (p *ProcessAuthority) Requests() []ports.LaunchRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := slices.Clone(p.requests)
	for i := range out {
		out[i].Args = slices.Clone(out[i].Args)
	}
	return out
}

// WorkspaceTrust is a ports.WorkspaceTrust with settable facts. Fallible
// method: "Facts" (inject a *refusal.Error of Class Transient or Internal to
// model a host that cannot tell).
type WorkspaceTrust struct {
	Faults
	mu    sync.Mutex
	facts ports.WorkspaceFacts
}

// NewWorkspaceTrust returns a WorkspaceTrust reporting f.
func NewWorkspaceTrust(f ports.WorkspaceFacts) *WorkspaceTrust {
	w := &WorkspaceTrust{facts: f}
	w.setMethods("Facts")
	return w
}

// Set replaces the facts Facts reports.
func (w *WorkspaceTrust) Set(f ports.WorkspaceFacts) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.facts = f
}

// Facts returns the current facts.
func (w *WorkspaceTrust) Facts(ctx context.Context) (ports.WorkspaceFacts, error) {
	if err := w.hit("Facts"); err != nil {
		return ports.WorkspaceFacts{}, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.facts, nil
}
