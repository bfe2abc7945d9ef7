package oauth

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
)

// assertReportSafe checks that nothing in rep carries the canary (planted
// in queries, userinfo and secrets), a query, or a byte outside printable
// ASCII.
func assertReportSafe(t *testing.T, rep *Report) {
	t.Helper()
	text := fmt.Sprintf("%+v", *rep)
	assert.NotContains(t, text, canary)
	for _, st := range rep.Steps {
		assert.NotContains(t, st.URL, "?", "no query in %q", st.URL)
		assert.NotContains(t, st.URL, "@", "no userinfo in %q", st.URL)
	}
	for i := 0; i < len(text); i++ {
		if c := text[i]; c < 0x20 || c > 0x7e {
			t.Fatalf("byte %#x in report %q", c, text)
		}
	}
}

// TestDiscoverReport runs discovery through Client.Discover on fixtures
// whose metadata does not line up, and checks the refusal (naming at most
// an origin), the failing step (its check, reason word and hint) and that
// the report is safe to show.
func TestDiscoverReport(t *testing.T) {
	tests := []struct {
		name     string
		setup    func(f *discoverFixture)
		class    refusal.Class
		reason   string
		origin   string
		check    string // the failing step's Check
		hint     string // a part of its Hint
		stepURL  string // its URL, when not ""
		notFound int    // how many not_found steps came before
	}{
		{
			name:  "no resource metadata",
			setup: func(f *discoverFixture) { f.mcp.handle(prPath, statusHandler(http.StatusNotFound)) },
			class: refusal.Unsupported, reason: ReasonResourceMetadataUnavailable, origin: mcpOrigin,
			check: CheckResourceMetadata, hint: "set oauth.authServerMetadataUrl", notFound: 2,
		},
		{
			name: "metadata for another path",
			setup: func(f *discoverFixture) {
				f.rm(func(m map[string]any) { m["resource"] = "https://" + mcpHost + "/other?t=" + canary })
			},
			class: refusal.Refused, reason: ReasonResourceMismatch, origin: mcpOrigin,
			check:   CheckResourceMetadata,
			hint:    "the metadata describes https://" + mcpHost + "/other but this server is https://" + mcpHost + "/mcp",
			stepURL: "https://" + mcpHost + prPath,
		},
		{
			name: "root metadata naming the server URL",
			setup: func(f *discoverFixture) {
				f.mcp.handle(prPath, statusHandler(http.StatusNotFound))
				f.mcp.handle(prRoot, jsonHandler(resourceDoc()))
			},
			class: refusal.Refused, reason: ReasonResourceMismatch, origin: mcpOrigin,
			check:   CheckResourceMetadata,
			hint:    "the metadata at the root location must describe the origin https://" + mcpHost + "; it describes " + mcpURL,
			stepURL: "https://" + mcpHost + prRoot, notFound: 1,
		},
		{
			name:  "metadata differing only in its query",
			setup: func(f *discoverFixture) { f.rm(func(m map[string]any) { m["resource"] = mcpURL + "?x=" + canary }) },
			class: refusal.Refused, reason: ReasonResourceMismatch, origin: mcpOrigin,
			check: CheckResourceMetadata, hint: "they differ in",
		},
		{
			name: "challenge link not there",
			setup: func(f *discoverFixture) {
				f.mcp.handle("/gone", statusHandler(http.StatusNotFound))
				_ = f.c.RecordChallenge(f.srv, Challenge{Status: 401, ResourceMetadata: "https://" + mcpHost + "/gone?" + canary})
			},
			class: refusal.Unsupported, reason: ReasonResourceMetadataUnavailable, origin: mcpOrigin,
			check: CheckResourceMetadata, hint: "the server's challenge names is not there", notFound: 1,
		},
		{
			name:  "no authorization server",
			setup: func(f *discoverFixture) { f.rm(func(m map[string]any) { delete(m, "authorization_servers") }) },
			class: refusal.Unsupported, reason: ReasonAuthorizationServerMissing, origin: mcpOrigin,
			check: CheckAuthorizationServer, hint: "set oauth.authServerMetadataUrl",
		},
		{
			name: "authorization server over http",
			setup: func(f *discoverFixture) {
				f.rm(func(m map[string]any) {
					m["authorization_servers"] = []string{"http://u:" + canary + "@" + asHost + "/x?" + canary}
				})
			},
			class: refusal.Refused, reason: ReasonInsecureEndpoint, origin: mcpOrigin,
			check: CheckAuthorizationServer, hint: "not an absolute https URL", stepURL: "http://" + asHost + "/x",
		},
		{
			name: "issuer behind a proxy",
			setup: func(f *discoverFixture) {
				f.sm(func(m map[string]any) { m["issuer"] = "https://internal.example.com:8443" })
			},
			class: refusal.Refused, reason: ReasonIssuerMismatch, origin: asOrigin,
			check: CheckServerMetadata,
			hint:  "names the issuer https://internal.example.com:8443 but was fetched for " + asIssuer,
		},
		{
			name: "no authorization server metadata",
			setup: func(f *discoverFixture) {
				f.as.handle(asOAuth, statusHandler(http.StatusNotFound))
				f.as.handle(asOIDC, statusHandler(http.StatusNotFound))
			},
			class: refusal.Unsupported, reason: ReasonServerMetadataUnavailable, origin: asOrigin,
			check: CheckServerMetadata, hint: "publishes no metadata", notFound: 2,
		},
		{
			name: "no S256",
			setup: func(f *discoverFixture) {
				f.sm(func(m map[string]any) { m["code_challenge_methods_supported"] = []string{"plain"} })
			},
			class: refusal.Refused, reason: ReasonPKCEUnsupported, origin: asOrigin,
			check: CheckPKCE, hint: "S256",
		},
		{
			name:  "no token endpoint",
			setup: func(f *discoverFixture) { f.sm(func(m map[string]any) { delete(m, "token_endpoint") }) },
			class: refusal.Unsupported, reason: ReasonEndpointMissing, origin: asOrigin,
			check: CheckEndpoints, hint: "never guessed",
		},
		{
			name: "token endpoint over http",
			setup: func(f *discoverFixture) {
				f.sm(func(m map[string]any) { m["token_endpoint"] = "http://" + asHost + "/token?" + canary })
			},
			class: refusal.Refused, reason: ReasonInsecureEndpoint, origin: asOrigin,
			check: CheckEndpoints, hint: "not an absolute https URL", stepURL: "http://" + asHost + "/token",
		},
		{
			name:  "redirect",
			setup: func(f *discoverFixture) { f.mcp.handle(prPath, redirectHandler("/elsewhere?"+canary)) },
			class: refusal.Refused, reason: ReasonRedirectRefused, origin: mcpOrigin,
			check: CheckResourceMetadata, hint: "redirect",
		},
		{
			name:  "server URL with userinfo",
			setup: func(f *discoverFixture) { f.srv.URL = "https://u:" + canary + "@" + mcpHost + "/mcp" },
			class: refusal.Config, reason: ReasonURLInvalid,
			check: CheckServerURL, hint: "absolute https URL", stepURL: mcpURL,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newDiscoverFixture(t)
			if tt.setup != nil {
				tt.setup(f)
			}
			rep, err := f.c.Discover(context.Background(), f.srv)
			requireDiscoverRefusal(t, err, tt.class, tt.reason, tt.origin)
			require.NotNil(t, rep)
			assert.Same(t, rep, ReportOf(err))
			assertReportSafe(t, rep)
			assert.Equal(t, "srv", rep.Server)
			assert.Equal(t, tt.reason, rep.Reason)
			assert.Nil(t, rep.Scopes)
			require.NotEmpty(t, rep.Steps)
			last := rep.Steps[len(rep.Steps)-1]
			assert.Equal(t, OutcomeFailed, last.Outcome)
			assert.Equal(t, tt.check, last.Check)
			assert.Equal(t, tt.reason, last.Reason)
			assert.Contains(t, last.Hint, tt.hint)
			if tt.stepURL != "" {
				assert.Equal(t, tt.stepURL, last.URL)
			}
			notFound := 0
			for _, st := range rep.Steps[:len(rep.Steps)-1] {
				assert.NotEqual(t, OutcomeFailed, st.Outcome, "only the last step fails: %+v", st)
				if st.Outcome == OutcomeNotFound {
					notFound++
				}
			}
			assert.Equal(t, tt.notFound, notFound)
		})
	}
}

// TestDiscoverReportMetadataURL: without resource metadata, a definition's
// oauth.authServerMetadataUrl carries discovery on; the report says so
// without a failed step.
func TestDiscoverReportMetadataURL(t *testing.T) {
	f := newDiscoverFixture(t)
	f.mcp.handle(prPath, statusHandler(http.StatusNotFound))
	f.srv.MetadataURL = asIssuer + asOAuth
	rep, err := f.c.Discover(context.Background(), f.srv)
	require.NoError(t, err)
	assertReportSafe(t, rep)
	require.Len(t, rep.Steps, 7)
	assert.Equal(t, Step{Check: CheckResourceMetadata, Outcome: OutcomeNotFound,
		Hint: "no resource metadata; oauth.authServerMetadataUrl names the authorization server"}, rep.Steps[2])
	for _, st := range rep.Steps {
		assert.NotEqual(t, OutcomeFailed, st.Outcome, "%+v", st)
	}
	assert.Nil(t, rep.Scopes, "no scopes_supported without resource metadata")
}

func TestDiscoverReportSuccess(t *testing.T) {
	f := newDiscoverFixture(t)
	f.mcp.handle(prPath, statusHandler(http.StatusNotFound))
	f.mcp.handle(prRoot, jsonHandler(rootDoc()))
	rep, err := f.c.Discover(context.Background(), f.srv)
	require.NoError(t, err)
	assertReportSafe(t, rep)
	assert.Equal(t, &Report{
		// The resource indicator is the root metadata's resource, as it
		// publishes it.
		Server: "srv", Resource: "https://" + mcpHost, Issuer: asIssuer, Scopes: []string{"mcp.read", "mcp.write"},
		Steps: []Step{
			{Check: CheckResourceMetadata, URL: "https://" + mcpHost + prPath, Status: http.StatusNotFound, Outcome: OutcomeNotFound},
			{Check: CheckResourceMetadata, URL: "https://" + mcpHost + prRoot, Status: http.StatusOK, Outcome: OutcomeOK},
			{Check: CheckAuthorizationServer, URL: asIssuer, Outcome: OutcomeOK},
			{Check: CheckServerMetadata, URL: asIssuer + asOAuth, Status: http.StatusOK, Outcome: OutcomeOK},
			{Check: CheckPKCE, Outcome: OutcomeOK},
			{Check: CheckEndpoints, Outcome: OutcomeOK},
			{Check: CheckIssuerParameter, Outcome: OutcomeOK, Hint: hintIssPromised},
		},
	}, rep)
	assertHits(t, f.as, map[string]int{"/register": 0, "/authorize": 0, "/token": 0})
}

// TestSignInDiscoveryReport: BeginSignIn's discovery refusal carries the
// report beside it.
func TestSignInDiscoveryReport(t *testing.T) {
	e := newEnv(t)
	e.as.set(func(f *fakeAS) {
		m := f.defaultResourceMeta()
		m["resource"] = f.URL() + "/other"
		f.resourceMeta = m
	})
	_, err := e.c.BeginSignIn(context.Background(), e.as.server("srv"))
	siRequire(t, err, refusal.Refused, ReasonResourceMismatch)
	rep := ReportOf(err)
	require.NotNil(t, rep)
	assert.Contains(t, rep.Steps[len(rep.Steps)-1].Hint, "describes "+e.as.URL()+"/other but this server is "+e.as.MCP())
	assert.Nil(t, ReportOf(refusal.New(refusal.Config, ReasonURLInvalid, "srv")))
}

func TestProjectURL(t *testing.T) {
	for in, want := range map[string]string{
		"":                                      "",
		"https://u:p@h.example:8443/a/b?q=1#f":  "https://h.example:8443/a/b",
		"HTTPS://H.example/a%20b":               "https://H.example/a%20b",
		"/relative":                             "(not an absolute URL)",
		"mailto:x@y":                            "(not an absolute URL)",
		"https://h/" + strings.Repeat("a", 300): "https://h/" + strings.Repeat("a", maxProjected-3-len("https://h/")) + "...",
	} {
		assert.Equal(t, want, projectURL(in), in)
	}
}

// FuzzProjectURL checks that a projected URL is printable ASCII within its
// bound, never carries the query or userinfo of its input, and never
// panics.
func FuzzProjectURL(f *testing.F) {
	for _, s := range []string{"https://u:p@h/a?q#f", "http://[::1]:9/%zz", "https://h/\x00", "", "x://y@z/?@"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got := projectURL(raw)
		require.LessOrEqual(t, len(got), maxProjected)
		for i := 0; i < len(got); i++ {
			require.True(t, got[i] >= 0x20 && got[i] <= 0x7e, "byte %#x in %q", got[i], got)
		}
		require.NotContains(t, got, "?")
		require.NotContains(t, got, "#")
	})
}
