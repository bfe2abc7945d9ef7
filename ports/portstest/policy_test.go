package portstest_test

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

func TestEgressPolicy(t *testing.T) {
	ctx := t.Context()
	errScheme := errors.New("scheme_refused")
	errAddr := errors.New("address_refused")
	custom := portstest.AllowAllEgress()
	custom.URL = func(u *url.URL) error {
		if u.Scheme != "https" {
			return errScheme
		}
		return nil
	}
	custom.Addr = func(_ string, a netip.AddrPort) error {
		if a.Addr().IsLoopback() {
			return errAddr
		}
		return nil
	}
	public := netip.MustParseAddrPort("192.0.2.1:443")
	loop := netip.MustParseAddrPort("127.0.0.1:443")
	cases := []struct {
		name            string
		p               *portstest.EgressPolicy
		url             string
		addr            netip.AddrPort
		wantURL, wantIP error
	}{
		{"allow all", portstest.AllowAllEgress(), "http://127.0.0.1/", loop, nil, nil},
		{"zero value allows", &portstest.EgressPolicy{}, "http://127.0.0.1/", loop, nil, nil},
		{"deny all", portstest.DenyAllEgress(errScheme), "https://example.com/", public, errScheme, errScheme},
		{"deny all default", portstest.DenyAllEgress(nil), "https://example.com/", public, portstest.ErrRefused, portstest.ErrRefused},
		{"custom admits", custom, "https://example.com/", public, nil, nil},
		{"custom refuses", custom, "http://example.com/", loop, errScheme, errAddr},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u, err := url.Parse(c.url)
			require.NoError(t, err)
			nURL, nAddr := len(c.p.URLs()), len(c.p.Addrs())
			err = c.p.AdmitURL(ctx, u)
			if c.wantURL == nil {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, c.wantURL)
			}
			err = c.p.AdmitAddr(ctx, "https", c.addr)
			if c.wantIP == nil {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, c.wantIP)
			}
			u.Host = "mutated.invalid"
			urls := c.p.URLs()
			require.Len(t, urls, nURL+1)
			assert.Equal(t, c.url, urls[nURL].String(), "the recorded URL is a copy")
			addrs := c.p.Addrs()
			require.Len(t, addrs, nAddr+1)
			assert.Equal(t, portstest.AddrRequest{Scheme: "https", Addr: c.addr}, addrs[nAddr])
		})
	}
}

func TestEgressPolicyFailureNotRecorded(t *testing.T) {
	p := portstest.AllowAllEgress()
	p.FailOnce("AdmitURL", errBoom)
	require.ErrorIs(t, p.AdmitURL(t.Context(), &url.URL{Scheme: "https", Host: "h"}), errBoom)
	assert.Empty(t, p.URLs())
	assert.Equal(t, 1, p.Calls("AdmitURL"))
}

func TestAuthenticatorHeaders(t *testing.T) {
	ctx := t.Context()
	h := http.Header{"Authorization": {"Bearer one"}}
	a := portstest.NewAuthenticator(h, 0)
	h.Set("Authorization", "Bearer mutated")
	req := ports.AuthRequest{ServerID: "s", Origin: "https://example.com:443", Method: "POST"}
	got, err := a.Headers(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, "Bearer one", got.Get("Authorization"), "NewAuthenticator keeps a copy")
	got.Set("Authorization", "Bearer mutated")
	got, err = a.Headers(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, "Bearer one", got.Get("Authorization"), "Headers returns a copy")
	a.SetHeaders(http.Header{"Authorization": {"Bearer two"}})
	got, err = a.Headers(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, "Bearer two", got.Get("Authorization"))
	assert.Equal(t, []ports.AuthRequest{req, req, req}, a.Requests())
	assert.Equal(t, 3, a.Calls("Headers"))
}

func TestAuthenticatorRefused(t *testing.T) {
	ctx := t.Context()
	errSignIn := errors.New("auth_required")
	cases := []struct {
		name        string
		retries     int
		reauth      func(context.Context) (http.Header, error)
		wantRetry   []bool
		wantErr     error
		wantReauths int
		wantHeader  string
	}{
		{"no budget", 0, nil, []bool{false, false}, nil, 0, "Bearer old"},
		{"one retry", 1, nil, []bool{true, false, false}, nil, 1, "Bearer old"},
		{"two retries", 2, nil, []bool{true, true, false}, nil, 2, "Bearer old"},
		{"fresh headers", 1, func(context.Context) (http.Header, error) {
			return http.Header{"Authorization": {"Bearer new"}}, nil
		}, []bool{true, false}, nil, 1, "Bearer new"},
		{"reauthorization fails", 1, func(context.Context) (http.Header, error) {
			return http.Header{"Authorization": {"Bearer ignored"}}, errSignIn
		}, []bool{false}, errSignIn, 1, "Bearer old"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := portstest.NewAuthenticator(http.Header{"Authorization": {"Bearer old"}}, c.retries)
			a.Reauthorize = c.reauth
			r := ports.AuthRefusal{ServerID: "s", Status: 401, Challenge: `Bearer error="invalid_token"`}
			for i, want := range c.wantRetry {
				retry, err := a.Refused(ctx, r)
				if c.wantErr != nil && i == 0 {
					require.ErrorIs(t, err, c.wantErr)
				} else {
					require.NoError(t, err)
				}
				assert.Equal(t, want, retry, "call %d", i)
			}
			assert.Equal(t, c.wantReauths, a.Reauths())
			assert.Len(t, a.Refusals(), len(c.wantRetry))
			h, err := a.Headers(ctx, ports.AuthRequest{})
			require.NoError(t, err)
			assert.Equal(t, c.wantHeader, h.Get("Authorization"))
		})
	}
}

func TestAuthenticatorCoalescesRefusals(t *testing.T) {
	ctx := t.Context()
	a := portstest.NewAuthenticator(http.Header{"Authorization": {"Bearer old"}}, 2)
	release := make(chan struct{})
	a.Reauthorize = func(ctx context.Context) (http.Header, error) {
		<-release
		return http.Header{"Authorization": {"Bearer new"}}, nil
	}
	const n = 8
	var wg sync.WaitGroup
	retries := make(chan bool, n)
	for range n {
		wg.Go(func() {
			retry, err := a.Refused(ctx, ports.AuthRefusal{ServerID: "s", Status: 401})
			assert.NoError(t, err)
			retries <- retry
		})
	}
	require.Eventually(t, func() bool { return a.Waiting() == n }, 5*time.Second, time.Millisecond)
	close(release)
	wg.Wait()
	close(retries)
	for retry := range retries {
		assert.True(t, retry)
	}
	assert.Equal(t, 1, a.Reauths(), "refusals together cost one re-authorization")
	assert.Equal(t, n, a.Calls("Refused"))
	assert.Zero(t, a.Waiting())
	h, err := a.Headers(ctx, ports.AuthRequest{})
	require.NoError(t, err)
	assert.Equal(t, "Bearer new", h.Get("Authorization"))

	retry, err := a.Refused(ctx, ports.AuthRefusal{})
	require.NoError(t, err)
	assert.True(t, retry, "the coalesced group spent one retry of two")
	retry, err = a.Refused(ctx, ports.AuthRefusal{})
	require.NoError(t, err)
	assert.False(t, retry)
	assert.Equal(t, 2, a.Reauths())
}

func TestAuthenticatorWaiterContextEnds(t *testing.T) {
	a := portstest.NewAuthenticator(nil, 1)
	release := make(chan struct{})
	a.Reauthorize = func(context.Context) (http.Header, error) { <-release; return nil, nil }
	done := make(chan bool)
	go func() {
		retry, err := a.Refused(t.Context(), ports.AuthRefusal{})
		assert.NoError(t, err)
		done <- retry
	}()
	require.Eventually(t, func() bool { return a.Waiting() == 1 }, 5*time.Second, time.Millisecond)
	retry, err := a.Refused(errCtx(), ports.AuthRefusal{})
	require.ErrorIs(t, err, context.Canceled)
	assert.False(t, retry)
	assert.Equal(t, 1, a.Waiting(), "the leaving waiter is no longer counted")
	close(release)
	assert.True(t, <-done)
	assert.Equal(t, 1, a.Reauths())
}

func TestProcessAuthority(t *testing.T) {
	ctx := t.Context()
	errRefused := errors.New("process_refused")
	grant := ports.ProcessGrant{AllowedRoot: "/work", BaselineEnv: map[string]string{"PATH": "/bin", "EMPTY": ""}}
	req := ports.LaunchRequest{ServerID: "s", Tier: ports.TierUser, Command: "server", Args: []string{"--stdio"}, Cwd: "sub"}
	calls := 0
	secondRefused := &portstest.ProcessAuthority{Decide: func(r ports.LaunchRequest) (ports.ProcessGrant, error) {
		calls++ // Authorize is called sequentially below
		if calls > 1 {
			return ports.ProcessGrant{}, errRefused
		}
		return grant, nil
	}}
	cases := []struct {
		name    string
		p       *portstest.ProcessAuthority
		want    []error
		granted ports.ProcessGrant
	}{
		{"grant all", portstest.GrantAllProcesses(grant), []error{nil, nil}, grant},
		{"refuse all", portstest.RefuseAllProcesses(errRefused), []error{errRefused, errRefused}, grant},
		{"refuse all default", portstest.RefuseAllProcesses(nil), []error{portstest.ErrRefused}, grant},
		{"zero value refuses", &portstest.ProcessAuthority{}, []error{portstest.ErrRefused}, grant},
		{"refuse at spawn", secondRefused, []error{nil, errRefused}, grant},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for i, want := range c.want {
				g, err := c.p.Authorize(ctx, req)
				if want != nil {
					require.ErrorIs(t, err, want, "call %d", i)
					assert.Zero(t, g)
					continue
				}
				require.NoError(t, err, "call %d", i)
				assert.Equal(t, c.granted, g)
				g.BaselineEnv["PATH"] = "/evil" // must not reach the next grant
			}
			got := c.p.Requests()
			require.Len(t, got, len(c.want))
			for _, r := range got {
				assert.Equal(t, req, r)
			}
		})
	}
	assert.Equal(t, "/bin", grant.BaselineEnv["PATH"])
}

func TestProcessAuthorityRecordsCopies(t *testing.T) {
	p := portstest.GrantAllProcesses(ports.ProcessGrant{AllowedRoot: "/"})
	args := []string{"a"}
	_, err := p.Authorize(t.Context(), ports.LaunchRequest{Args: args})
	require.NoError(t, err)
	args[0] = "mutated"
	got := p.Requests()
	assert.Equal(t, []string{"a"}, got[0].Args)
	got[0].Args[0] = "mutated"
	assert.Equal(t, []string{"a"}, p.Requests()[0].Args)
}

func TestWorkspaceTrust(t *testing.T) {
	ctx := t.Context()
	w := portstest.NewWorkspaceTrust(ports.WorkspaceFacts{Trusted: true, Repository: "r", Generation: "1"})
	got, err := w.Facts(ctx)
	require.NoError(t, err)
	assert.Equal(t, ports.WorkspaceFacts{Trusted: true, Repository: "r", Generation: "1"}, got)
	w.Set(ports.WorkspaceFacts{Repository: "r", Generation: "2"})
	got, err = w.Facts(ctx)
	require.NoError(t, err)
	assert.Equal(t, ports.WorkspaceFacts{Repository: "r", Generation: "2"}, got)
	w.FailOnce("Facts", errBoom)
	_, err = w.Facts(ctx)
	require.ErrorIs(t, err, errBoom)

	w.Set(ports.WorkspaceFacts{Generation: "g"})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 100 {
				if i%2 == 0 {
					w.Set(ports.WorkspaceFacts{Trusted: j%2 == 0, Generation: "g"})
					continue
				}
				f, err := w.Facts(ctx)
				assert.NoError(t, err)
				assert.Equal(t, "g", f.Generation)
			}
		})
	}
	wg.Wait()
}
