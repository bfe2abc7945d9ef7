package oauth

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports/portstest"
)

// The two origins of the discovery fixture: httptest's TLS client routes
// example.com and *.example.com on 443 to its server, and its certificate
// names them, so each host below is served by its own fake.
const (
	mcpHost   = "mcp.example.com"
	asHost    = "as.example.com"
	mcpURL    = "https://" + mcpHost + "/mcp"
	mcpOrigin = "https://" + mcpHost + ":443"
	asIssuer  = "https://" + asHost
	asOrigin  = "https://" + asHost + ":443"

	prPath  = "/.well-known/oauth-protected-resource/mcp"
	prRoot  = "/.well-known/oauth-protected-resource"
	asOAuth = "/.well-known/oauth-authorization-server"
	asOIDC  = "/.well-known/openid-configuration"

	// testMaxBody is the fixture's Options.MaxResponseBytes.
	testMaxBody = 4096
)

// discoveryClient returns a Client whose ClientFunc hands out, for a URL whose
// host (case-insensitively, any port) is a key of hosts, that fake's TLS
// client, and refuses every other host.
func discoveryClient(t testing.TB, maxBody int64, hosts map[string]*fakeAS) *Client {
	t.Helper()
	c, err := New(Options{
		Client: func(_ context.Context, u *url.URL) (*http.Client, error) {
			if f := hosts[strings.ToLower(u.Hostname())]; f != nil {
				return f.ts.Client(), nil
			}
			return nil, fmt.Errorf("no client for that origin")
		},
		Store:            portstest.NewTokenStore(),
		Locker:           portstest.NewLocker(),
		MaxResponseBytes: maxBody,
	})
	require.NoError(t, err)
	return c
}

// discoverFixture is an MCP server (mcpURL, on fake mcp) whose
// authorization server (asIssuer) is another fake on another origin.
type discoverFixture struct {
	mcp, as *fakeAS
	c       *Client
	srv     Server
}

// newDiscoverFixture returns a fixture whose documents are all valid.
func newDiscoverFixture(t testing.TB) *discoverFixture {
	f := &discoverFixture{mcp: newFakeAS(t), as: newFakeAS(t), srv: Server{ID: "srv", URL: mcpURL}}
	f.c = discoveryClient(t, testMaxBody, map[string]*fakeAS{mcpHost: f.mcp, asHost: f.as})
	f.rm(nil)
	f.sm(nil)
	return f
}

// resourceDoc is the fixture's valid protected-resource metadata.
func resourceDoc() map[string]any {
	return map[string]any{
		"resource":              mcpURL,
		"authorization_servers": []string{asIssuer},
		"scopes_supported":      []string{"mcp.read", "mcp.write"},
	}
}

// rootDoc is resourceDoc as the root location serves it: describing the
// origin (RFC 9728 §3.3).
func rootDoc() map[string]any {
	m := resourceDoc()
	m["resource"] = "https://" + mcpHost
	return m
}

// serverDoc is a valid authorization server metadata document of issuer.
func serverDoc(issuer string) map[string]any {
	return map[string]any{
		"issuer":                                         issuer,
		"authorization_endpoint":                         issuer + "/authorize",
		"token_endpoint":                                 issuer + "/token",
		"registration_endpoint":                          issuer + "/register",
		"revocation_endpoint":                            issuer + "/revoke",
		"code_challenge_methods_supported":               []string{"plain", "S256"},
		"authorization_response_iss_parameter_supported": true,
	}
}

// rm sets the MCP fake's path-inserted resource metadata to resourceDoc
// changed by mut (when not nil).
func (f *discoverFixture) rm(mut func(m map[string]any)) {
	m := resourceDoc()
	if mut != nil {
		mut(m)
	}
	f.mcp.set(func(x *fakeAS) { x.resourceMeta = m })
}

// sm sets the AS fake's RFC 8414 root metadata to serverDoc(asIssuer)
// changed by mut (when not nil).
func (f *discoverFixture) sm(mut func(m map[string]any)) {
	m := serverDoc(asIssuer)
	if mut != nil {
		mut(m)
	}
	f.as.set(func(x *fakeAS) { x.serverMeta = m })
}

// jsonHandler answers with v as JSON and status 200.
func jsonHandler(v any) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, v) }
}

// statusHandler answers with code and a body carrying the canary.
func statusHandler(code int) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "no "+canary, code) }
}

// rawHandler answers 200 with body as application/json.
func rawHandler(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}
}

// redirectHandler answers 302 to path.
func redirectHandler(path string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, path, http.StatusFound) }
}

// oversizedDoc is a JSON object larger than testMaxBody.
func oversizedDoc() map[string]any {
	m := resourceDoc()
	m["pad"] = strings.Repeat("x", 2*testMaxBody)
	return m
}

// requireDiscoverRefusal checks that err is the refusal of class and reason naming
// the fixture's server id and origin, and carries no canary.
func requireDiscoverRefusal(t *testing.T, err error, class refusal.Class, reason, origin string) {
	t.Helper()
	require.Error(t, err)
	requireNoCanary(t, err)
	var re *refusal.Error
	require.True(t, errors.As(err, &re), "a *refusal.Error: %v", err)
	assert.Equal(t, class, re.Class, "class of %v", err)
	assert.Equal(t, reason, re.Reason, "reason of %v", err)
	assert.Equal(t, "srv", re.Server, "server of %v", err)
	assert.Equal(t, origin, re.Origin, "origin of %v", err)
	assert.NotContains(t, err.Error(), "/.well-known")
	assert.NotContains(t, err.Error(), ".com/", "no path")
	assert.NotContains(t, err.Error(), ":443/", "no path")
}

// discoverCase is one discovery scenario on a fresh fixture: setup changes
// it, then discover runs with challenge; a wantReason of "" expects
// success. check looks at the endpoints (on success) and the fakes.
type discoverCase struct {
	name       string
	setup      func(f *discoverFixture)
	challenge  string
	wantClass  refusal.Class
	wantReason string
	wantOrigin string
	check      func(t *testing.T, f *discoverFixture, ep *endpoints)
}

// runDiscoverCases runs each case as a subtest.
func runDiscoverCases(t *testing.T, cases []discoverCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newDiscoverFixture(t)
			if tc.setup != nil {
				tc.setup(f)
			}
			ep, err := f.c.discover(context.Background(), f.srv, tc.challenge)
			if tc.wantReason == "" {
				requireNoCanary(t, err)
				require.NoError(t, err)
				require.NotNil(t, ep)
			} else {
				requireDiscoverRefusal(t, err, tc.wantClass, tc.wantReason, tc.wantOrigin)
				require.Nil(t, ep)
			}
			if tc.check != nil {
				tc.check(t, f, ep)
			}
		})
	}
}

// assertHits asserts how many requests each path of fake had.
func assertHits(t *testing.T, fake *fakeAS, want map[string]int) {
	t.Helper()
	for path, n := range want {
		assert.Equal(t, n, fake.count(path), "requests to %s", path)
	}
}

func TestDiscoverFake(t *testing.T) {
	e := newEnv(t)
	ep, err := e.c.discover(context.Background(), e.as.server("srv"), "")
	requireNoCanary(t, err)
	require.NoError(t, err)
	assert.Equal(t, e.as.MCP(), ep.resource)
	assert.Equal(t, e.as.URL(), ep.issuer)
	assert.Equal(t, e.as.URL()+"/token", ep.token.String())
	assert.True(t, ep.issParameter)
}

func TestDiscoverTwoOrigins(t *testing.T) {
	f := newDiscoverFixture(t)
	ep, err := f.c.discover(context.Background(), f.srv, "")
	requireNoCanary(t, err)
	require.NoError(t, err)
	assert.Equal(t, mcpURL, ep.resource)
	assert.Equal(t, mcpOrigin, ep.origin)
	assert.Equal(t, asIssuer, ep.issuer)
	assert.Equal(t, asIssuer+"/authorize", ep.authorization.String())
	assert.Equal(t, asIssuer+"/token", ep.token.String())
	assert.Equal(t, asIssuer+"/register", ep.registration.String())
	assert.Equal(t, asIssuer+"/revoke", ep.revocation.String())
	assert.True(t, ep.issParameter)
	assert.Equal(t, []string{"mcp.read", "mcp.write"}, ep.scopes)
	assertHits(t, f.mcp, map[string]int{prPath: 1, prRoot: 0})
	assertHits(t, f.as, map[string]int{asOAuth: 1, asOIDC: 0})
}

func TestDiscoverServerURL(t *testing.T) {
	for _, raw := range []string{"http://" + mcpHost + "/mcp", "/mcp", "https://u:" + canary + "@" + mcpHost + "/mcp", mcpURL + "#" + canary, ""} {
		t.Run(raw, func(t *testing.T) {
			f := newDiscoverFixture(t)
			f.srv.URL = raw
			_, err := f.c.discover(context.Background(), f.srv, "")
			requireDiscoverRefusal(t, err, refusal.Config, ReasonURLInvalid, "")
			assertHits(t, f.mcp, map[string]int{prPath: 0})
		})
	}
}

func TestDiscoverContextCanceled(t *testing.T) {
	f := newDiscoverFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := f.c.discover(ctx, f.srv, "")
	requireDiscoverRefusal(t, err, refusal.Transient, "canceled", mcpOrigin)
}

func TestDiscoverResourceLocations(t *testing.T) {
	runDiscoverCases(t, []discoverCase{
		{
			name: "path-inserted location first",
			check: func(t *testing.T, f *discoverFixture, _ *endpoints) {
				assertHits(t, f.mcp, map[string]int{prPath: 1, prRoot: 0})
			},
		},
		{
			name: "root fallback after 404",
			setup: func(f *discoverFixture) {
				f.mcp.handle(prPath, statusHandler(http.StatusNotFound))
				f.mcp.handle(prRoot, jsonHandler(rootDoc()))
			},
			check: func(t *testing.T, f *discoverFixture, ep *endpoints) {
				assertHits(t, f.mcp, map[string]int{prPath: 1, prRoot: 1})
				assert.Equal(t, asIssuer, ep.issuer)
				assert.Equal(t, mcpURL, ep.resource, "the resource indicator is the server's own URL")
			},
		},
		{
			name: "root fallback after 403",
			setup: func(f *discoverFixture) {
				f.mcp.handle(prPath, statusHandler(http.StatusForbidden))
				f.mcp.handle(prRoot, jsonHandler(rootDoc()))
			},
			check: func(t *testing.T, f *discoverFixture, _ *endpoints) {
				assertHits(t, f.mcp, map[string]int{prPath: 1, prRoot: 1})
			},
		},
		{
			name: "server without path uses the root location once",
			setup: func(f *discoverFixture) {
				f.srv.URL = "https://" + mcpHost + "/"
				m := resourceDoc()
				m["resource"] = "https://" + mcpHost
				f.mcp.handle(prRoot, jsonHandler(m))
			},
			check: func(t *testing.T, f *discoverFixture, ep *endpoints) {
				assertHits(t, f.mcp, map[string]int{prPath: 0, prRoot: 1})
				assert.Equal(t, "https://"+mcpHost, ep.resource)
			},
		},
		{
			name: "server query kept on the path-inserted location",
			setup: func(f *discoverFixture) {
				f.srv.URL = mcpURL + "?tenant=" + canary
				m := resourceDoc()
				m["resource"] = mcpURL + "?tenant=" + canary
				f.mcp.handle(prPath, func(w http.ResponseWriter, r *http.Request) {
					if r.URL.RawQuery != "tenant="+canary {
						http.NotFound(w, r)
						return
					}
					writeJSON(w, http.StatusOK, m)
				})
			},
			check: func(t *testing.T, f *discoverFixture, _ *endpoints) {
				assertHits(t, f.mcp, map[string]int{prPath: 1, prRoot: 0})
			},
		},
		{
			name: "404 everywhere",
			setup: func(f *discoverFixture) {
				f.mcp.handle(prPath, statusHandler(http.StatusNotFound))
			},
			wantClass: refusal.Unsupported, wantReason: ReasonResourceMetadataUnavailable, wantOrigin: mcpOrigin,
			check: func(t *testing.T, f *discoverFixture, _ *endpoints) {
				assertHits(t, f.mcp, map[string]int{prPath: 1, prRoot: 1})
				assertHits(t, f.as, map[string]int{asOAuth: 0})
			},
		},
		{
			name:      "5xx stops",
			setup:     func(f *discoverFixture) { f.mcp.handle(prPath, statusHandler(http.StatusBadGateway)) },
			wantClass: refusal.Transient, wantReason: ReasonUnavailable, wantOrigin: mcpOrigin,
			check: func(t *testing.T, f *discoverFixture, _ *endpoints) {
				assertHits(t, f.mcp, map[string]int{prPath: 1, prRoot: 0})
			},
		},
		{
			name:      "429 stops",
			setup:     func(f *discoverFixture) { f.mcp.handle(prPath, statusHandler(http.StatusTooManyRequests)) },
			wantClass: refusal.Transient, wantReason: ReasonUnavailable, wantOrigin: mcpOrigin,
			check: func(t *testing.T, f *discoverFixture, _ *endpoints) {
				assertHits(t, f.mcp, map[string]int{prPath: 1, prRoot: 0})
			},
		},
		{
			name:      "redirect refused and not followed",
			setup:     func(f *discoverFixture) { f.mcp.handle(prPath, redirectHandler("/moved-"+canary+"?q="+canary)) },
			wantClass: refusal.Refused, wantReason: ReasonRedirectRefused, wantOrigin: mcpOrigin,
			check: func(t *testing.T, f *discoverFixture, _ *endpoints) {
				assertHits(t, f.mcp, map[string]int{prPath: 1, prRoot: 0, "/moved-" + canary: 0})
			},
		},
		{
			name:      "redirect to the root location is not followed either",
			setup:     func(f *discoverFixture) { f.mcp.handle(prPath, redirectHandler(prRoot)) },
			wantClass: refusal.Refused, wantReason: ReasonRedirectRefused, wantOrigin: mcpOrigin,
			check: func(t *testing.T, f *discoverFixture, _ *endpoints) { assertHits(t, f.mcp, map[string]int{prRoot: 0}) },
		},
		{
			name:      "body over MaxResponseBytes",
			setup:     func(f *discoverFixture) { f.mcp.handle(prPath, jsonHandler(oversizedDoc())) },
			wantClass: refusal.Protocol, wantReason: ReasonMetadataInvalid, wantOrigin: mcpOrigin,
		},
		{
			name:      "not JSON",
			setup:     func(f *discoverFixture) { f.mcp.handle(prPath, rawHandler("<html>"+canary+"</html>")) },
			wantClass: refusal.Protocol, wantReason: ReasonMetadataInvalid, wantOrigin: mcpOrigin,
		},
		{
			name:      "JSON array",
			setup:     func(f *discoverFixture) { f.mcp.handle(prPath, rawHandler(`["`+canary+`"]`)) },
			wantClass: refusal.Protocol, wantReason: ReasonMetadataInvalid, wantOrigin: mcpOrigin,
		},
		{
			name:      "wrong field type",
			setup:     func(f *discoverFixture) { f.rm(func(m map[string]any) { m["authorization_servers"] = asIssuer }) },
			wantClass: refusal.Protocol, wantReason: ReasonMetadataInvalid, wantOrigin: mcpOrigin,
		},
		{
			name: "204 is not a document",
			setup: func(f *discoverFixture) {
				f.mcp.handle(prPath, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
			},
			wantClass: refusal.Protocol, wantReason: ReasonMetadataInvalid, wantOrigin: mcpOrigin,
			check: func(t *testing.T, f *discoverFixture, _ *endpoints) { assertHits(t, f.mcp, map[string]int{prRoot: 0}) },
		},
	})
}

func TestDiscoverResource(t *testing.T) {
	accept := func(server, resource string) discoverCase {
		return discoverCase{
			name: fmt.Sprintf("accepted %s as %s", resource, server),
			setup: func(f *discoverFixture) {
				f.srv.URL = server
				f.rm(func(m map[string]any) { m["resource"] = resource })
			},
			check: func(t *testing.T, _ *discoverFixture, ep *endpoints) { assert.Equal(t, mcpURL, ep.resource) },
		}
	}
	refuseResource := func(resource any) discoverCase {
		return discoverCase{
			name:      fmt.Sprintf("refused %v", resource),
			setup:     func(f *discoverFixture) { f.rm(func(m map[string]any) { m["resource"] = resource }) },
			wantClass: refusal.Refused, wantReason: ReasonResourceMismatch, wantOrigin: mcpOrigin,
			check: func(t *testing.T, f *discoverFixture, _ *endpoints) { assertHits(t, f.as, map[string]int{asOAuth: 0}) },
		}
	}
	runDiscoverCases(t, []discoverCase{
		accept(mcpURL, "https://"+mcpHost+":443/mcp"),
		accept(mcpURL, "https://MCP.Example.COM/mcp"),
		accept(mcpURL, "HTTPS://mcp.example.com/mcp/"),
		accept("https://Mcp.Example.com:443/mcp", mcpURL),
		refuseResource("https://" + mcpHost + "/mcp-" + canary),
		refuseResource("https://" + mcpHost + "/MCP"),
		refuseResource("https://" + mcpHost + ":8443/mcp"),
		refuseResource("https://evil.example.com/mcp"),
		refuseResource("http://" + mcpHost + "/mcp"),
		refuseResource(mcpURL + "?x=" + canary),
		refuseResource(mcpURL + "#" + canary),
		refuseResource("https://u:" + canary + "@" + mcpHost + "/mcp"),
		refuseResource("/mcp"),
		refuseResource(""),
		refuseResource(nil),
	})
}

func TestDiscoverChallenge(t *testing.T) {
	linkPath := "/meta-" + canary
	link := "https://" + mcpHost + linkPath + "?x=" + canary
	runDiscoverCases(t, []discoverCase{
		{
			name:      "resource_metadata preferred over well-known",
			setup:     func(f *discoverFixture) { f.mcp.handle(linkPath, jsonHandler(resourceDoc())) },
			challenge: `Basic realm="x", Bearer error="invalid_token", resource_metadata="` + link + `"`,
			check: func(t *testing.T, f *discoverFixture, ep *endpoints) {
				assertHits(t, f.mcp, map[string]int{linkPath: 1, prPath: 0, prRoot: 0})
				assert.Equal(t, []string{"mcp.read", "mcp.write"}, ep.scopes)
			},
		},
		{
			name:      "resource_metadata on another origin",
			setup:     func(f *discoverFixture) { f.as.handle(linkPath, jsonHandler(resourceDoc())) },
			challenge: `Bearer resource_metadata="https://` + asHost + linkPath + `"`,
			check: func(t *testing.T, f *discoverFixture, _ *endpoints) {
				assertHits(t, f.as, map[string]int{linkPath: 1})
				assertHits(t, f.mcp, map[string]int{prPath: 0})
			},
		},
		{
			name:      "challenge scope preferred",
			challenge: `Bearer scope="files:read  tools:call", resource_metadata="https://` + mcpHost + prPath + `"`,
			check: func(t *testing.T, _ *discoverFixture, ep *endpoints) {
				assert.Equal(t, []string{"files:read", "tools:call"}, ep.scopes)
			},
		},
		{
			name:      "challenge scope alone, well-known location",
			challenge: `Bearer scope=only`,
			check: func(t *testing.T, f *discoverFixture, ep *endpoints) {
				assert.Equal(t, []string{"only"}, ep.scopes)
				assertHits(t, f.mcp, map[string]int{prPath: 1})
			},
		},
		{
			name:      "challenge scope that is not scope tokens is ignored",
			challenge: `Bearer scope="a\\b"`,
			check: func(t *testing.T, _ *discoverFixture, ep *endpoints) {
				assert.Equal(t, []string{"mcp.read", "mcp.write"}, ep.scopes)
			},
		},
		{
			name:      "malformed challenge is ignored",
			setup:     func(f *discoverFixture) { f.mcp.handle(linkPath, jsonHandler(resourceDoc())) },
			challenge: `Bearer resource_metadata="` + link + `", resource_metadata="` + link + `"`,
			check: func(t *testing.T, f *discoverFixture, _ *endpoints) {
				assertHits(t, f.mcp, map[string]int{linkPath: 0, prPath: 1})
			},
		},
		{
			name:      "DPoP challenge is followed",
			setup:     func(f *discoverFixture) { f.mcp.handle(linkPath, jsonHandler(resourceDoc())) },
			challenge: `DPoP resource_metadata="` + link + `"`,
			check: func(t *testing.T, f *discoverFixture, _ *endpoints) {
				assertHits(t, f.mcp, map[string]int{linkPath: 1, prPath: 0})
			},
		},
		{
			name:      "challenge of another scheme is ignored",
			setup:     func(f *discoverFixture) { f.mcp.handle(linkPath, jsonHandler(resourceDoc())) },
			challenge: `Basic resource_metadata="` + link + `"`,
			check: func(t *testing.T, f *discoverFixture, _ *endpoints) {
				assertHits(t, f.mcp, map[string]int{linkPath: 0, prPath: 1})
			},
		},
		{
			name:      "resource_metadata 404 does not fall back",
			setup:     func(f *discoverFixture) { f.mcp.handle(linkPath, statusHandler(http.StatusNotFound)) },
			challenge: `Bearer resource_metadata="` + link + `"`,
			wantClass: refusal.Unsupported, wantReason: ReasonResourceMetadataUnavailable, wantOrigin: mcpOrigin,
			check: func(t *testing.T, f *discoverFixture, _ *endpoints) {
				assertHits(t, f.mcp, map[string]int{linkPath: 1, prPath: 0, prRoot: 0})
			},
		},
		{
			name:      "resource_metadata http",
			challenge: `Bearer resource_metadata="http://` + mcpHost + linkPath + `?x=` + canary + `"`,
			wantClass: refusal.Refused, wantReason: ReasonInsecureEndpoint, wantOrigin: mcpOrigin,
			check: func(t *testing.T, f *discoverFixture, _ *endpoints) {
				assertHits(t, f.mcp, map[string]int{linkPath: 0, prPath: 0})
			},
		},
		{
			name:      "resource_metadata relative",
			challenge: `Bearer resource_metadata="` + linkPath + `"`,
			wantClass: refusal.Refused, wantReason: ReasonInsecureEndpoint, wantOrigin: mcpOrigin,
			check: func(t *testing.T, f *discoverFixture, _ *endpoints) { assertHits(t, f.mcp, map[string]int{prPath: 0}) },
		},
		{
			name:      "resource_metadata with userinfo",
			challenge: `Bearer resource_metadata="https://u:` + canary + `@` + mcpHost + linkPath + `"`,
			wantClass: refusal.Refused, wantReason: ReasonInsecureEndpoint, wantOrigin: mcpOrigin,
		},
		{
			name:      "resource_metadata redirect",
			setup:     func(f *discoverFixture) { f.mcp.handle(linkPath, redirectHandler(prPath)) },
			challenge: `Bearer resource_metadata="` + link + `"`,
			wantClass: refusal.Refused, wantReason: ReasonRedirectRefused, wantOrigin: mcpOrigin,
			check: func(t *testing.T, f *discoverFixture, _ *endpoints) { assertHits(t, f.mcp, map[string]int{prPath: 0}) },
		},
		{
			name: "resource_metadata describing another resource",
			setup: func(f *discoverFixture) {
				m := resourceDoc()
				m["resource"] = "https://" + mcpHost + "/other-" + canary
				f.mcp.handle(linkPath, jsonHandler(m))
			},
			challenge: `Bearer resource_metadata="` + link + `"`,
			wantClass: refusal.Refused, wantReason: ReasonResourceMismatch, wantOrigin: mcpOrigin,
		},
	})
}

func TestDiscoverAuthorizationServers(t *testing.T) {
	runDiscoverCases(t, []discoverCase{
		{
			name:      "none",
			setup:     func(f *discoverFixture) { f.rm(func(m map[string]any) { m["authorization_servers"] = []string{} }) },
			wantClass: refusal.Unsupported, wantReason: ReasonAuthorizationServerMissing, wantOrigin: mcpOrigin,
		},
		{
			name:      "absent",
			setup:     func(f *discoverFixture) { f.rm(func(m map[string]any) { delete(m, "authorization_servers") }) },
			wantClass: refusal.Unsupported, wantReason: ReasonAuthorizationServerMissing, wantOrigin: mcpOrigin,
		},
		{
			name: "first http",
			setup: func(f *discoverFixture) {
				f.rm(func(m map[string]any) {
					m["authorization_servers"] = []string{"http://" + asHost + "/" + canary, asIssuer}
				})
			},
			wantClass: refusal.Refused, wantReason: ReasonInsecureEndpoint, wantOrigin: mcpOrigin,
			check: func(t *testing.T, f *discoverFixture, _ *endpoints) { assertHits(t, f.as, map[string]int{asOAuth: 0}) },
		},
		{
			name: "issuer with query",
			setup: func(f *discoverFixture) {
				f.rm(func(m map[string]any) { m["authorization_servers"] = []string{asIssuer + "?t=" + canary} })
			},
			wantClass: refusal.Refused, wantReason: ReasonInsecureEndpoint, wantOrigin: mcpOrigin,
		},
		{
			name: "issuer not a URL",
			setup: func(f *discoverFixture) {
				f.rm(func(m map[string]any) { m["authorization_servers"] = []string{canary} })
			},
			wantClass: refusal.Refused, wantReason: ReasonInsecureEndpoint, wantOrigin: mcpOrigin,
		},
		{
			name: "first one is used",
			setup: func(f *discoverFixture) {
				f.rm(func(m map[string]any) { m["authorization_servers"] = []string{asIssuer, "https://evil.example.com"} })
			},
			check: func(t *testing.T, _ *discoverFixture, ep *endpoints) { assert.Equal(t, asIssuer, ep.issuer) },
		},
	})
}

// pathIssuer is an issuer with a path on the AS fake.
const pathIssuer = asIssuer + "/tenant"

// Its discovery locations, in order.
const (
	pathOAuth      = asOAuth + "/tenant"
	pathOIDC       = asOIDC + "/tenant"
	pathOIDCAppend = "/tenant" + asOIDC
)

// usePathIssuer points the resource metadata at pathIssuer and answers 404
// at each of its locations but those given handlers.
func usePathIssuer(f *discoverFixture, handlers map[string]http.HandlerFunc) {
	f.rm(func(m map[string]any) { m["authorization_servers"] = []string{pathIssuer} })
	for _, p := range []string{pathOAuth, pathOIDC, pathOIDCAppend} {
		h := handlers[p]
		if h == nil {
			h = statusHandler(http.StatusNotFound)
		}
		f.as.handle(p, h)
	}
}

func TestDiscoverServerLocations(t *testing.T) {
	doc := serverDoc(pathIssuer)
	runDiscoverCases(t, []discoverCase{
		{
			name: "no path: RFC 8414 first",
			check: func(t *testing.T, f *discoverFixture, _ *endpoints) {
				assertHits(t, f.as, map[string]int{asOAuth: 1, asOIDC: 0})
			},
		},
		{
			name: "no path: OpenID Connect after 404",
			setup: func(f *discoverFixture) {
				f.as.handle(asOAuth, statusHandler(http.StatusNotFound))
				f.as.handle(asOIDC, jsonHandler(serverDoc(asIssuer)))
			},
			check: func(t *testing.T, f *discoverFixture, ep *endpoints) {
				assertHits(t, f.as, map[string]int{asOAuth: 1, asOIDC: 1})
				assert.Equal(t, asIssuer, ep.issuer)
			},
		},
		{
			name:      "no path: 5xx stops",
			setup:     func(f *discoverFixture) { f.as.handle(asOAuth, statusHandler(http.StatusServiceUnavailable)) },
			wantClass: refusal.Transient, wantReason: ReasonUnavailable, wantOrigin: asOrigin,
			check: func(t *testing.T, f *discoverFixture, _ *endpoints) {
				assertHits(t, f.as, map[string]int{asOAuth: 1, asOIDC: 0})
			},
		},
		{
			name:      "no path: 404 everywhere",
			setup:     func(f *discoverFixture) { f.as.handle(asOAuth, statusHandler(http.StatusNotFound)) },
			wantClass: refusal.Unsupported, wantReason: ReasonServerMetadataUnavailable, wantOrigin: asOrigin,
			check: func(t *testing.T, f *discoverFixture, _ *endpoints) {
				assertHits(t, f.as, map[string]int{asOAuth: 1, asOIDC: 1})
			},
		},
		{
			name:  "path: RFC 8414 insertion first",
			setup: func(f *discoverFixture) { usePathIssuer(f, map[string]http.HandlerFunc{pathOAuth: jsonHandler(doc)}) },
			check: func(t *testing.T, f *discoverFixture, ep *endpoints) {
				assertHits(t, f.as, map[string]int{pathOAuth: 1, pathOIDC: 0, pathOIDCAppend: 0, asOAuth: 0})
				assert.Equal(t, pathIssuer, ep.issuer)
			},
		},
		{
			name:  "path: OpenID Connect insertion second",
			setup: func(f *discoverFixture) { usePathIssuer(f, map[string]http.HandlerFunc{pathOIDC: jsonHandler(doc)}) },
			check: func(t *testing.T, f *discoverFixture, _ *endpoints) {
				assertHits(t, f.as, map[string]int{pathOAuth: 1, pathOIDC: 1, pathOIDCAppend: 0})
			},
		},
		{
			name: "path: OpenID Connect appending third, after any 4xx",
			setup: func(f *discoverFixture) {
				usePathIssuer(f, map[string]http.HandlerFunc{pathOIDC: statusHandler(http.StatusUnauthorized), pathOIDCAppend: jsonHandler(doc)})
			},
			check: func(t *testing.T, f *discoverFixture, _ *endpoints) {
				assertHits(t, f.as, map[string]int{pathOAuth: 1, pathOIDC: 1, pathOIDCAppend: 1, asOAuth: 0, asOIDC: 0})
			},
		},
		{
			name: "path: terminating slash removed",
			setup: func(f *discoverFixture) {
				usePathIssuer(f, map[string]http.HandlerFunc{pathOIDCAppend: jsonHandler(serverDoc(pathIssuer + "/"))})
				f.rm(func(m map[string]any) { m["authorization_servers"] = []string{pathIssuer + "/"} })
			},
			check: func(t *testing.T, f *discoverFixture, ep *endpoints) {
				assertHits(t, f.as, map[string]int{pathOAuth: 1, pathOIDC: 1, pathOIDCAppend: 1})
				assert.Equal(t, pathIssuer+"/", ep.issuer)
			},
		},
		{
			name:      "path: 404 everywhere",
			setup:     func(f *discoverFixture) { usePathIssuer(f, nil) },
			wantClass: refusal.Unsupported, wantReason: ReasonServerMetadataUnavailable, wantOrigin: asOrigin,
			check: func(t *testing.T, f *discoverFixture, _ *endpoints) {
				assertHits(t, f.as, map[string]int{pathOAuth: 1, pathOIDC: 1, pathOIDCAppend: 1, asOAuth: 0, asOIDC: 0})
			},
		},
		{
			name: "path: 5xx stops",
			setup: func(f *discoverFixture) {
				usePathIssuer(f, map[string]http.HandlerFunc{pathOIDC: statusHandler(http.StatusInternalServerError), pathOIDCAppend: jsonHandler(doc)})
			},
			wantClass: refusal.Transient, wantReason: ReasonUnavailable, wantOrigin: asOrigin,
			check: func(t *testing.T, f *discoverFixture, _ *endpoints) {
				assertHits(t, f.as, map[string]int{pathOAuth: 1, pathOIDC: 1, pathOIDCAppend: 0})
			},
		},
		{
			name: "path: redirect refused and not followed",
			setup: func(f *discoverFixture) {
				usePathIssuer(f, map[string]http.HandlerFunc{pathOAuth: redirectHandler(pathOIDCAppend + "?x=" + canary), pathOIDCAppend: jsonHandler(doc)})
			},
			wantClass: refusal.Refused, wantReason: ReasonRedirectRefused, wantOrigin: asOrigin,
			check: func(t *testing.T, f *discoverFixture, _ *endpoints) {
				assertHits(t, f.as, map[string]int{pathOAuth: 1, pathOIDC: 0, pathOIDCAppend: 0})
			},
		},
		{
			name: "path: document of the root issuer",
			setup: func(f *discoverFixture) {
				usePathIssuer(f, map[string]http.HandlerFunc{pathOAuth: jsonHandler(serverDoc(asIssuer))})
			},
			wantClass: refusal.Refused, wantReason: ReasonIssuerMismatch, wantOrigin: asOrigin,
		},
	})
}

func TestDiscoverServerMetadata(t *testing.T) {
	mut := func(name string, fn func(m map[string]any), class refusal.Class, reason string) discoverCase {
		return discoverCase{
			name: name, setup: func(f *discoverFixture) { f.sm(fn) },
			wantClass: class, wantReason: reason, wantOrigin: asOrigin,
		}
	}
	set := func(k string, v any) func(m map[string]any) { return func(m map[string]any) { m[k] = v } }
	del := func(k string) func(m map[string]any) { return func(m map[string]any) { delete(m, k) } }
	runDiscoverCases(t, []discoverCase{
		mut("issuer with trailing slash", set("issuer", asIssuer+"/"), refusal.Refused, ReasonIssuerMismatch),
		mut("issuer upper-case host", set("issuer", "https://AS.example.com"), refusal.Refused, ReasonIssuerMismatch),
		mut("issuer default port written", set("issuer", asIssuer+":443"), refusal.Refused, ReasonIssuerMismatch),
		mut("issuer of another server", set("issuer", "https://evil.example.com/"+canary), refusal.Refused, ReasonIssuerMismatch),
		mut("issuer missing", del("issuer"), refusal.Refused, ReasonIssuerMismatch),
		mut("S256 not listed", set("code_challenge_methods_supported", []string{"plain"}), refusal.Refused, ReasonPKCEUnsupported),
		mut("S256 lower case", set("code_challenge_methods_supported", []string{"s256"}), refusal.Refused, ReasonPKCEUnsupported),
		mut("methods missing", del("code_challenge_methods_supported"), refusal.Refused, ReasonPKCEUnsupported),
		mut("authorization endpoint missing", del("authorization_endpoint"), refusal.Unsupported, ReasonEndpointMissing),
		mut("token endpoint missing", del("token_endpoint"), refusal.Unsupported, ReasonEndpointMissing),
		mut("authorization endpoint http", set("authorization_endpoint", "http://"+asHost+"/authorize?x="+canary), refusal.Refused, ReasonInsecureEndpoint),
		mut("token endpoint http", set("token_endpoint", "http://"+asHost+"/"+canary), refusal.Refused, ReasonInsecureEndpoint),
		mut("token endpoint relative", set("token_endpoint", "/token-"+canary), refusal.Refused, ReasonInsecureEndpoint),
		mut("token endpoint with userinfo", set("token_endpoint", "https://u:"+canary+"@"+asHost+"/token"), refusal.Refused, ReasonInsecureEndpoint),
		mut("registration endpoint http", set("registration_endpoint", "http://"+asHost+"/"+canary), refusal.Refused, ReasonInsecureEndpoint),
		mut("revocation endpoint http", set("revocation_endpoint", "http://"+asHost+"/"+canary), refusal.Refused, ReasonInsecureEndpoint),
		mut("revocation endpoint with fragment", set("revocation_endpoint", asIssuer+"/revoke#"+canary), refusal.Refused, ReasonInsecureEndpoint),
		mut("endpoint of wrong type", set("token_endpoint", 7), refusal.Protocol, ReasonMetadataInvalid),
		{
			name:      "body over MaxResponseBytes",
			setup:     func(f *discoverFixture) { f.sm(set("pad", strings.Repeat(canary, testMaxBody))) },
			wantClass: refusal.Protocol, wantReason: ReasonMetadataInvalid, wantOrigin: asOrigin,
		},
		{
			name:      "not JSON",
			setup:     func(f *discoverFixture) { f.as.handle(asOAuth, rawHandler(canary)) },
			wantClass: refusal.Protocol, wantReason: ReasonMetadataInvalid, wantOrigin: asOrigin,
			check: func(t *testing.T, f *discoverFixture, _ *endpoints) { assertHits(t, f.as, map[string]int{asOIDC: 0}) },
		},
		{
			name:  "optional endpoints absent, no iss parameter",
			setup: func(f *discoverFixture) { f.sm(func(m map[string]any) { clear(m); maps.Copy(m, minimalDoc()) }) },
			check: func(t *testing.T, _ *discoverFixture, ep *endpoints) {
				assert.Nil(t, ep.registration)
				assert.Nil(t, ep.revocation)
				assert.False(t, ep.issParameter)
				assert.Equal(t, asIssuer+"/token", ep.token.String())
			},
		},
	})
}

// minimalDoc is the smallest acceptable metadata of asIssuer.
func minimalDoc() map[string]any {
	return map[string]any{
		"issuer":                           asIssuer,
		"authorization_endpoint":           asIssuer + "/authorize",
		"token_endpoint":                   asIssuer + "/token",
		"code_challenge_methods_supported": []string{"S256"},
	}
}

func TestDiscoverMetadataURL(t *testing.T) {
	withURL := func(u string) func(f *discoverFixture) {
		return func(f *discoverFixture) { f.srv.MetadataURL = u }
	}
	then := func(fns ...func(f *discoverFixture)) func(f *discoverFixture) {
		return func(f *discoverFixture) {
			for _, fn := range fns {
				fn(f)
			}
		}
	}
	runDiscoverCases(t, []discoverCase{
		{
			name:  "RFC 8414 location",
			setup: withURL(asIssuer + asOAuth),
			check: func(t *testing.T, f *discoverFixture, ep *endpoints) {
				assertHits(t, f.as, map[string]int{asOAuth: 1, asOIDC: 0})
				assertHits(t, f.mcp, map[string]int{prPath: 1})
				assert.Equal(t, asIssuer, ep.issuer)
				assert.Equal(t, []string{"mcp.read", "mcp.write"}, ep.scopes)
			},
		},
		{
			name:  "OpenID Connect location, skipping RFC 8414",
			setup: then(withURL(asIssuer+asOIDC), func(f *discoverFixture) { f.as.handle(asOIDC, jsonHandler(serverDoc(asIssuer))) }),
			check: func(t *testing.T, f *discoverFixture, _ *endpoints) {
				assertHits(t, f.as, map[string]int{asOAuth: 0, asOIDC: 1})
			},
		},
		{
			name: "path issuer, OpenID Connect appended location",
			setup: then(withURL(pathIssuer+asOIDC), func(f *discoverFixture) {
				f.as.handle(pathIssuer[len(asIssuer):]+asOIDC, jsonHandler(serverDoc(pathIssuer)))
				f.rm(func(m map[string]any) { m["authorization_servers"] = []string{"https://other.example.com", pathIssuer} })
			}),
			check: func(t *testing.T, f *discoverFixture, ep *endpoints) {
				assert.Equal(t, pathIssuer, ep.issuer)
				assertHits(t, f.as, map[string]int{pathOIDCAppend: 1, pathOAuth: 0})
			},
		},
		{
			name: "protected-resource metadata unavailable: proceed",
			setup: then(withURL(asIssuer+asOAuth), func(f *discoverFixture) {
				f.mcp.handle(prPath, statusHandler(http.StatusNotFound))
			}),
			check: func(t *testing.T, f *discoverFixture, ep *endpoints) {
				assertHits(t, f.mcp, map[string]int{prPath: 1, prRoot: 1})
				assert.Nil(t, ep.scopes)
				assert.Equal(t, asIssuer, ep.issuer)
			},
		},
		{
			name: "protected-resource metadata unavailable, challenge scope kept",
			setup: then(withURL(asIssuer+asOAuth), func(f *discoverFixture) {
				f.mcp.handle(prPath, statusHandler(http.StatusNotFound))
			}),
			challenge: `Bearer scope="a b"`,
			check:     func(t *testing.T, _ *discoverFixture, ep *endpoints) { assert.Equal(t, []string{"a", "b"}, ep.scopes) },
		},
		{
			name:  "resource metadata naming no authorization server",
			setup: then(withURL(asIssuer+asOAuth), func(f *discoverFixture) { f.rm(func(m map[string]any) { delete(m, "authorization_servers") }) }),
		},
		{
			name: "resource metadata naming another authorization server",
			setup: then(withURL(asIssuer+asOAuth), func(f *discoverFixture) {
				f.rm(func(m map[string]any) { m["authorization_servers"] = []string{asIssuer + "/"} })
			}),
			wantClass: refusal.Refused, wantReason: ReasonIssuerMismatch, wantOrigin: asOrigin,
		},
		{
			name:      "resource metadata still checked",
			setup:     then(withURL(asIssuer+asOAuth), func(f *discoverFixture) { f.rm(func(m map[string]any) { m["resource"] = asIssuer }) }),
			wantClass: refusal.Refused, wantReason: ReasonResourceMismatch, wantOrigin: mcpOrigin,
			check: func(t *testing.T, f *discoverFixture, _ *endpoints) { assertHits(t, f.as, map[string]int{asOAuth: 0}) },
		},
		{
			name:      "resource metadata 5xx still stops",
			setup:     then(withURL(asIssuer+asOAuth), func(f *discoverFixture) { f.mcp.handle(prPath, statusHandler(http.StatusBadGateway)) }),
			wantClass: refusal.Transient, wantReason: ReasonUnavailable, wantOrigin: mcpOrigin,
		},
		{
			name:      "http",
			setup:     withURL("http://" + asHost + asOAuth + "?x=" + canary),
			wantClass: refusal.Config, wantReason: ReasonURLInvalid,
			check: func(t *testing.T, f *discoverFixture, _ *endpoints) { assertHits(t, f.mcp, map[string]int{prPath: 0}) },
		},
		{
			name:      "not absolute",
			setup:     withURL(asOAuth + "-" + canary),
			wantClass: refusal.Config, wantReason: ReasonURLInvalid,
		},
		{
			name: "not a discovery location of its issuer",
			setup: then(withURL(asIssuer+"/meta-"+canary), func(f *discoverFixture) {
				f.as.handle("/meta-"+canary, jsonHandler(serverDoc(asIssuer)))
			}),
			wantClass: refusal.Refused, wantReason: ReasonIssuerMismatch, wantOrigin: asOrigin,
		},
		{
			name: "location with a query",
			setup: then(withURL(asIssuer+asOAuth+"?x="+canary), func(f *discoverFixture) {
				f.as.handle(asOAuth, jsonHandler(serverDoc(asIssuer)))
			}),
			wantClass: refusal.Refused, wantReason: ReasonIssuerMismatch, wantOrigin: asOrigin,
		},
		{
			name: "location of a path issuer naming the root issuer",
			setup: then(withURL(asIssuer+pathOAuth), func(f *discoverFixture) {
				f.as.handle(pathOAuth, jsonHandler(serverDoc(asIssuer)))
			}),
			wantClass: refusal.Refused, wantReason: ReasonIssuerMismatch, wantOrigin: asOrigin,
		},
		{
			name:      "document naming an issuer on another host",
			setup:     then(withURL(asIssuer+asOAuth), func(f *discoverFixture) { f.sm(func(m map[string]any) { m["issuer"] = "https://evil.example.com" }) }),
			wantClass: refusal.Refused, wantReason: ReasonIssuerMismatch, wantOrigin: asOrigin,
		},
		{
			name:      "document naming an http issuer",
			setup:     then(withURL(asIssuer+asOAuth), func(f *discoverFixture) { f.sm(func(m map[string]any) { m["issuer"] = "http://" + asHost }) }),
			wantClass: refusal.Refused, wantReason: ReasonInsecureEndpoint, wantOrigin: asOrigin,
		},
		{
			name:      "404",
			setup:     then(withURL(asIssuer+asOAuth), func(f *discoverFixture) { f.as.handle(asOAuth, statusHandler(http.StatusNotFound)) }),
			wantClass: refusal.Unsupported, wantReason: ReasonServerMetadataUnavailable, wantOrigin: asOrigin,
			check: func(t *testing.T, f *discoverFixture, _ *endpoints) { assertHits(t, f.as, map[string]int{asOIDC: 0}) },
		},
		{
			name:      "redirect",
			setup:     then(withURL(asIssuer+asOAuth), func(f *discoverFixture) { f.as.handle(asOAuth, redirectHandler(asOIDC)) }),
			wantClass: refusal.Refused, wantReason: ReasonRedirectRefused, wantOrigin: asOrigin,
			check: func(t *testing.T, f *discoverFixture, _ *endpoints) { assertHits(t, f.as, map[string]int{asOIDC: 0}) },
		},
		{
			name: "checks still apply",
			setup: then(withURL(asIssuer+asOAuth), func(f *discoverFixture) {
				f.sm(func(m map[string]any) { m["code_challenge_methods_supported"] = []string{"plain"} })
			}),
			wantClass: refusal.Refused, wantReason: ReasonPKCEUnsupported, wantOrigin: asOrigin,
		},
	})
}
