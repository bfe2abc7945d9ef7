package composition

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/adapters/httptransport"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

func TestNewAuthenticationRefuses(t *testing.T) {
	tests := []struct {
		name   string
		cfg    Config
		reason string
	}{
		{"nil authenticator", Config{Authenticators: map[string]ports.Authenticator{"web": nil}}, ReasonAuthenticatorNil},
		{"helper env without =", Config{HelperEnv: []string{"HOME"}}, httptransport.ReasonHelperEnvInvalid},
		{"helper env repeated key", Config{HelperEnv: []string{"A=1", "A=2"}}, httptransport.ReasonHelperEnvInvalid},
		{"helper env with NUL", Config{HelperEnv: []string{"A=x\x00y"}}, httptransport.ReasonHelperEnvInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := newAuthentication(tt.cfg, nil)
			assert.Equal(t, refusal.Config, refusal.ClassOf(err))
			assert.Equal(t, tt.reason, refusal.ReasonOf(err))
			assert.NotContains(t, err.Error(), "x\x00y")

			// The injectors refuse the deployment too.
			_, err = Custom(Ports{Approvals: portstest.NewApprovalStore(), Audit: portstest.NewAuditLog()}, tt.cfg)
			assert.Equal(t, tt.reason, refusal.ReasonOf(err))
		})
	}
	a, err := newAuthentication(Config{HelperEnv: []string{"HOME=/h", "LANG="}}, nil)
	require.NoError(t, err)
	assert.NotNil(t, a)
}

func httpDef(name string, mod func(d *definition.Definition)) *definition.Definition {
	d := &definition.Definition{Name: name, Kind: definition.KindHTTP, URL: "https://api.example.com/mcp"}
	if mod != nil {
		mod(d)
	}
	return d
}

func TestDecide(t *testing.T) {
	host := portstest.NewAuthenticator(http.Header{"Authorization": {"Bearer x"}}, 0)
	cfg := Config{
		Authenticators:  map[string]ports.Authenticator{"hosted": host},
		HelperAllowList: [][]string{{"/usr/bin/print-token", "--server", "api"}},
	}
	tests := []struct {
		name   string
		def    *definition.Definition
		kind   AuthKind
		reason string
		class  refusal.Class
	}{
		{name: "stdio has none", def: &definition.Definition{Name: "s", Kind: definition.KindStdio, Command: "x"}, kind: AuthNone},
		{name: "static headers", def: httpDef("plain", func(d *definition.Definition) { d.Headers = map[string]string{"X": "y"} }), kind: AuthStatic},
		{name: "no headers at all", def: httpDef("bare", nil), kind: AuthStatic},
		{name: "oauth without sign-in", def: httpDef("o", func(d *definition.Definition) { d.OAuth = &definition.OAuth{ClientID: "c"} }),
			reason: ReasonOAuthSignInUnavailable, class: refusal.AuthRequired},
		{name: "oauth with the host's authenticator", def: httpDef("hosted", func(d *definition.Definition) { d.OAuth = &definition.OAuth{} }), kind: AuthHost},
		{name: "helper with the host's authenticator", def: httpDef("hosted", func(d *definition.Definition) { d.HeadersHelper = []string{"/bin/not-allowed"} }), kind: AuthHost},
		{name: "allowed helper", def: httpDef("h", func(d *definition.Definition) { d.HeadersHelper = []string{"/usr/bin/print-token", "--server", "api"} }), kind: AuthHeaderHelper},
		{name: "helper, one argument short", def: httpDef("h", func(d *definition.Definition) { d.HeadersHelper = []string{"/usr/bin/print-token", "--server"} }),
			reason: ReasonHeaderHelperNotAllowed, class: refusal.Refused},
		{name: "helper, other argument", def: httpDef("h", func(d *definition.Definition) { d.HeadersHelper = []string{"/usr/bin/print-token", "--server", "evil"} }),
			reason: ReasonHeaderHelperNotAllowed, class: refusal.Refused},
		{name: "helper, same program elsewhere", def: httpDef("h", func(d *definition.Definition) { d.HeadersHelper = []string{"/tmp/print-token", "--server", "api"} }),
			reason: ReasonHeaderHelperNotAllowed, class: refusal.Refused},
		{name: "helper, an argument joined", def: httpDef("h", func(d *definition.Definition) { d.HeadersHelper = []string{"/usr/bin/print-token", "--server api"} }),
			reason: ReasonHeaderHelperNotAllowed, class: refusal.Refused},
		{name: "helper, relative program", def: httpDef("h", func(d *definition.Definition) { d.HeadersHelper = []string{"print-token"} }),
			reason: httptransport.ReasonHelperArgvInvalid, class: refusal.Config},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := newAuthentication(cfg, nil)
			require.NoError(t, err)
			kind, ref := a.decide(tt.def, "fp1")
			if tt.reason == "" {
				assert.Nil(t, ref)
				assert.Equal(t, tt.kind, kind)
			} else {
				require.NotNil(t, ref)
				assert.Equal(t, AuthNone, kind)
				assert.Equal(t, tt.reason, ref.Reason)
				assert.Equal(t, tt.class, ref.Class)
				assert.Equal(t, tt.def.Name, ref.Server)
				for _, arg := range tt.def.HeadersHelper {
					assert.NotContains(t, ref.Error(), arg)
				}
			}
			// The Dialer's view agrees with Evaluate's.
			if tt.def.Kind != definition.KindHTTP {
				return
			}
			auth, err := a.authenticator(ports.Target{ServerID: tt.def.Name, Kind: ports.TransportHTTP, Fingerprint: "fp1"})
			switch {
			case tt.reason != "":
				assert.Equal(t, tt.reason, refusal.ReasonOf(err))
				assert.Nil(t, auth)
			case tt.kind == AuthStatic:
				assert.NoError(t, err)
				assert.Nil(t, auth)
			case tt.kind == AuthHost:
				assert.NoError(t, err)
				assert.Same(t, host, auth)
			case tt.kind == AuthHeaderHelper:
				assert.NoError(t, err)
				assert.IsType(t, &httptransport.HeaderHelper{}, auth)
			}
		})
	}
}

func TestAuthenticatorPerConnection(t *testing.T) {
	a, err := newAuthentication(Config{HelperAllowList: [][]string{{"/usr/bin/print-token"}}}, nil)
	require.NoError(t, err)
	_, ref := a.decide(httpDef("h", func(d *definition.Definition) { d.HeadersHelper = []string{"/usr/bin/print-token"} }), "fp")
	require.Nil(t, ref)
	tg := ports.Target{ServerID: "h", Kind: ports.TransportHTTP, Fingerprint: "fp"}
	one, err := a.authenticator(tg)
	require.NoError(t, err)
	two, err := a.authenticator(tg)
	require.NoError(t, err)
	assert.NotSame(t, one, two, "a fresh helper per connection: a failed run is final for a HeaderHelper")
}

func TestAuthenticationRemembersByFingerprint(t *testing.T) {
	a, err := newAuthentication(Config{}, nil)
	require.NoError(t, err)
	oauth := httpDef("s", func(d *definition.Definition) { d.OAuth = &definition.OAuth{} })
	plain := httpDef("s", nil)
	_, _ = a.decide(oauth, "fp-oauth")
	_, _ = a.decide(plain, "fp-plain")

	_, err = a.authenticator(ports.Target{ServerID: "s", Fingerprint: "fp-oauth"})
	assert.Equal(t, ReasonOAuthSignInUnavailable, refusal.ReasonOf(err), "the older definition keeps its own need")
	_, err = a.authenticator(ports.Target{ServerID: "s", Fingerprint: "fp-plain"})
	assert.NoError(t, err)
	_, err = a.authenticator(ports.Target{ServerID: "s", Fingerprint: ""})
	assert.Equal(t, ReasonAuthNotDecided, refusal.ReasonOf(err), "an empty fingerprint never matches")
	_, err = a.authenticator(ports.Target{ServerID: "other", Fingerprint: "fp-plain"})
	assert.Equal(t, ReasonAuthNotDecided, refusal.ReasonOf(err), "needs are per server id")

	// Bounded: the oldest fingerprints are forgotten.
	for i := range maxNeedsPerServer {
		_, _ = a.decide(plain, fmt.Sprint("fp-", i))
	}
	_, err = a.authenticator(ports.Target{ServerID: "s", Fingerprint: "fp-oauth"})
	assert.Equal(t, ReasonAuthNotDecided, refusal.ReasonOf(err))
	a.mu.Lock()
	assert.Len(t, a.needs["s"], maxNeedsPerServer)
	a.mu.Unlock()

	// Deciding a fingerprint again refreshes it instead of duplicating it.
	_, _ = a.decide(plain, "fp-0")
	a.mu.Lock()
	assert.Len(t, a.needs["s"], maxNeedsPerServer)
	assert.Equal(t, "fp-0", a.needs["s"][maxNeedsPerServer-1].fingerprint)
	a.mu.Unlock()
}

func TestAuthenticationCopiesConfig(t *testing.T) {
	allow := [][]string{{"/usr/bin/print-token"}}
	hosts := map[string]ports.Authenticator{"x": portstest.NewAuthenticator(nil, 0)}
	a, err := newAuthentication(Config{HelperAllowList: allow, Authenticators: hosts}, nil)
	require.NoError(t, err)
	allow[0][0] = "/usr/bin/evil"
	delete(hosts, "x")
	kind, ref := a.decide(httpDef("h", func(d *definition.Definition) { d.HeadersHelper = []string{"/usr/bin/print-token"} }), "fp")
	assert.Nil(t, ref)
	assert.Equal(t, AuthHeaderHelper, kind)
	kind, _ = a.decide(httpDef("x", nil), "fp")
	assert.Equal(t, AuthHost, kind)
}

func TestAuthenticationConcurrent(t *testing.T) {
	a, err := newAuthentication(Config{}, nil)
	require.NoError(t, err)
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				fp := fmt.Sprint(i, "-", j)
				_, _ = a.decide(httpDef(fmt.Sprint("s", i%3), nil), fp)
				_, _ = a.authenticator(ports.Target{ServerID: fmt.Sprint("s", i%3), Fingerprint: fp})
			}
		}()
	}
	wg.Wait()
}

// TestHostWithoutAuthenticationIsStrict: a Host built by newHost with a
// nil Authentication refuses oauth and every helper rather than skipping
// the decision.
func TestHostWithoutAuthenticationIsStrict(t *testing.T) {
	d, err := newDecider(portstest.NewApprovalStore(), portstest.NewAuditLog(), nil, Config{})
	require.NoError(t, err)
	h := newHost(d, portstest.NewApprovalStore(), portstest.NewAuditLog(), nil, nil, nil, nil, Config{})
	ev := h.Evaluate(context.Background(), userSrc(`{"mcpServers": {
	  "o": {"type": "http", "url": "https://o.example.com/mcp", "oauth": {"clientId": "c"}},
	  "h": {"type": "http", "url": "https://h.example.com/mcp", "headersHelper": ["/usr/bin/print-token"]},
	  "p": {"type": "http", "url": "https://p.example.com/mcp"}}}`))
	o, _ := ev.Server("o")
	assert.Equal(t, ReasonOAuthSignInUnavailable, o.Reason)
	hh, _ := ev.Server("h")
	assert.Equal(t, ReasonHeaderHelperNotAllowed, hh.Reason)
	p, _ := ev.Server("p")
	assert.Equal(t, StateAllowed, p.State)
	assert.Nil(t, h.Dialer())
}
