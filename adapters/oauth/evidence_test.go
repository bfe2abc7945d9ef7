package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// record401 records the Bearer challenge h of a 401 for s on c.
func record401(t *testing.T, c *Client, s Server, h string) {
	t.Helper()
	ch, ok := ParseChallenge(http.StatusUnauthorized, h)
	require.True(t, ok, h)
	require.NoError(t, c.RecordChallenge(s, ch))
}

// TestChallengeEvidenceCustomLocation is the conformance suite's
// metadata-var3: the resource metadata lives where only the 401's
// challenge says, its issuer has a path, and only OpenID Connect path
// appending serves the issuer's metadata. Discovery uses the recorded
// challenge first and sends nothing to the MCP endpoint itself.
func TestChallengeEvidenceCustomLocation(t *testing.T) {
	f := newDiscoverFixture(t)
	const custom = "/custom/metadata/location.json"
	f.mcp.handle(custom, jsonHandler(map[string]any{
		"resource": mcpURL, "authorization_servers": []string{pathIssuer},
	}))
	usePathIssuer(f, map[string]http.HandlerFunc{pathOIDCAppend: jsonHandler(serverDoc(pathIssuer))})
	record401(t, f.c, f.srv, `Bearer resource_metadata="https://`+mcpHost+custom+`"`)

	rep, err := f.c.Discover(context.Background(), f.srv)
	require.NoError(t, err)
	assert.Empty(t, rep.Reason)
	assert.Equal(t, projectURL(pathIssuer), rep.Issuer)
	assertHits(t, f.mcp, map[string]int{custom: 1, prPath: 0, prRoot: 0, "/mcp": 0})
	assertHits(t, f.as, map[string]int{pathOAuth: 1, pathOIDC: 1, pathOIDCAppend: 1, asOAuth: 0, asOIDC: 0})
	require.NotEmpty(t, rep.Steps)
	assert.Equal(t, Step{Check: CheckChallenge, URL: "https://" + mcpHost + custom, Outcome: OutcomeOK}, rep.Steps[0])
}

func TestChallengeEvidence(t *testing.T) {
	const linkPath = "/meta" // the report shows paths; the canary is in the query
	link := "https://" + mcpHost + linkPath + "?x=" + canary
	tests := []struct {
		name    string
		record  func(t *testing.T, f *discoverFixture)
		reason  string
		hits    map[string]int // on the MCP fake
		scopes  []string
		stepOne Step // the first step of the report, when Check is set
	}{
		{
			name:   "nothing recorded: well-known",
			hits:   map[string]int{prPath: 1, linkPath: 0},
			scopes: []string{"mcp.read", "mcp.write"},
		},
		{
			name: "recorded link and scope",
			record: func(t *testing.T, f *discoverFixture) {
				record401(t, f.c, f.srv, `Bearer scope="x:y", resource_metadata="`+link+`"`)
			},
			hits:   map[string]int{prPath: 0, linkPath: 1},
			scopes: []string{"x:y"},
		},
		{
			name: "recorded for another server id: not used",
			record: func(t *testing.T, f *discoverFixture) {
				record401(t, f.c, Server{ID: "other", URL: mcpURL}, `Bearer resource_metadata="`+link+`"`)
			},
			hits: map[string]int{prPath: 1, linkPath: 0},
		},
		{
			name: "recorded for another URL: not used",
			record: func(t *testing.T, f *discoverFixture) {
				record401(t, f.c, Server{ID: "srv", URL: mcpURL + "/other"}, `Bearer resource_metadata="`+link+`"`)
			},
			hits: map[string]int{prPath: 1, linkPath: 0},
		},
		{
			name: "relative link refused by name",
			record: func(t *testing.T, f *discoverFixture) {
				record401(t, f.c, f.srv, `Bearer resource_metadata="`+linkPath+`"`)
			},
			reason:  ReasonInsecureEndpoint,
			hits:    map[string]int{prPath: 0, linkPath: 0},
			stepOne: Step{Check: CheckChallenge, URL: "(not an absolute URL)", Outcome: OutcomeFailed, Reason: ReasonInsecureEndpoint, Hint: hintChallengeLink},
		},
		{
			name: "link whose metadata describes another server",
			record: func(t *testing.T, f *discoverFixture) {
				m := resourceDoc()
				m["resource"] = "https://" + mcpHost + "/other"
				f.mcp.handle(linkPath, jsonHandler(m))
				record401(t, f.c, f.srv, `Bearer resource_metadata="`+link+`"`)
			},
			reason: ReasonResourceMismatch,
			hits:   map[string]int{prPath: 0, linkPath: 1},
		},
		{
			name: "a later 401 replaces the evidence",
			record: func(t *testing.T, f *discoverFixture) {
				record401(t, f.c, f.srv, `Bearer resource_metadata="`+linkPath+`"`)
				record401(t, f.c, f.srv, `Bearer resource_metadata="`+link+`"`)
			},
			hits: map[string]int{prPath: 0, linkPath: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newDiscoverFixture(t)
			f.mcp.handle(linkPath, jsonHandler(resourceDoc()))
			if tt.record != nil {
				tt.record(t, f)
			}
			rep, err := f.c.Discover(context.Background(), f.srv)
			require.NotNil(t, rep)
			assertHits(t, f.mcp, tt.hits)
			assertReportSafe(t, rep)
			if tt.reason != "" {
				requireDiscoverRefusal(t, err, refusal.ClassOf(err), tt.reason, mcpOrigin)
				assert.Equal(t, tt.reason, rep.Reason)
			} else {
				require.NoError(t, err)
			}
			if tt.scopes != nil {
				assert.Equal(t, tt.scopes, rep.Scopes)
			}
			if tt.stepOne.Check != "" {
				assert.Equal(t, tt.stepOne, rep.Steps[0])
			}
		})
	}
}

func TestRecordChallengeServerURL(t *testing.T) {
	c := discoveryClient(t, testMaxBody, nil)
	err := c.RecordChallenge(Server{ID: "srv", URL: "http://" + mcpHost + "/mcp?" + canary}, Challenge{ResourceMetadata: "https://x/y"})
	tokRequire(t, err, refusal.Config, ReasonURLInvalid)
}

// TestAuthenticatorRecordsChallenge: the Authenticator records a 401's
// Bearer challenge for the next sign-in, and not a 403's.
func TestAuthenticatorRecordsChallenge(t *testing.T) {
	for _, tt := range []struct {
		name   string
		status int
		used   bool
	}{
		{"401 recorded", http.StatusUnauthorized, true},
		{"403 not recorded", http.StatusForbidden, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			s, _ := tokSeed(t, e, "srv", nil)
			a, _ := tokAuth(t, e.c, s)
			e.as.handle("/custom", jsonHandler(e.as.defaultResourceMeta()))
			_, _ = a.Refused(context.Background(), tokRefusal(a, tt.status, `Bearer error="invalid_token", resource_metadata="`+e.as.URL()+`/custom"`))
			// A 401 reads the metadata the challenge names (has the server
			// moved?); then discovery follows the recorded link.
			custom, pr := e.as.count("/custom"), e.as.count(prPath)
			_, err := e.c.Discover(context.Background(), s)
			require.NoError(t, err)
			want := map[bool]int{true: 1, false: 0}[tt.used]
			assert.Equal(t, want, e.as.count("/custom")-custom)
			assert.Equal(t, 1-want, e.as.count(prPath)-pr)
		})
	}
}

func TestSignInScopes(t *testing.T) {
	tests := []struct {
		name       string
		definition []string // Server.Scopes
		challenge  string   // a recorded 401's WWW-Authenticate, "" for none
		prm        []string // scopes_supported of the resource metadata; nil omits it
		asScopes   []string // scopes_supported of the authorization server; nil omits it
		want       string   // the scope parameter; "" for absent
	}{
		{name: "challenge scope first", challenge: `Bearer scope="mcp:basic"`, prm: []string{"a", "b"}, want: "mcp:basic"},
		{name: "scopes_supported next", prm: []string{"mcp:basic", "mcp:read", "mcp:write"}, want: "mcp:basic mcp:read mcp:write"},
		{name: "none when undefined", want: ""},
		{name: "challenge without scope", challenge: `Bearer error="invalid_token"`, prm: []string{"a"}, want: "a"},
		{name: "definition scopes win", definition: []string{"d"}, challenge: `Bearer scope="c"`, prm: []string{"a"}, want: "d"},
		{name: "offline_access added when the AS lists it", prm: []string{"mcp:basic"}, asScopes: []string{"mcp:basic", "offline_access"}, want: "mcp:basic offline_access"},
		{name: "offline_access not doubled", prm: []string{"offline_access", "a"}, asScopes: []string{"offline_access"}, want: "offline_access a"},
		{name: "offline_access not alone", asScopes: []string{"offline_access"}, want: ""},
		{name: "offline_access not when the AS does not list it", prm: []string{"a"}, asScopes: []string{"a"}, want: "a"},
		{name: "scopes_supported with an invalid token is not used", prm: []string{"a", `b"c`}, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.as.set(func(f *fakeAS) {
				rm := f.defaultResourceMeta()
				delete(rm, "scopes_supported")
				if tt.prm != nil {
					rm["scopes_supported"] = tt.prm
				}
				f.resourceMeta = rm
				sm := f.defaultServerMeta()
				if tt.asScopes != nil {
					sm["scopes_supported"] = tt.asScopes
				}
				f.serverMeta = sm
			})
			s := e.as.server("srv")
			s.Scopes = tt.definition
			if tt.challenge != "" {
				record401(t, e.c, s, tt.challenge)
			}
			p := siBegin(t, e, s)
			u, err := url.Parse(p.URL())
			require.NoError(t, err)
			if tt.want == "" {
				assert.NotContains(t, u.Query(), "scope")
			} else {
				assert.Equal(t, tt.want, u.Query().Get("scope"))
			}
		})
	}
}

// TestStepUp is the conformance suite's scope-step-up and
// scope-retry-limit: a 403 insufficient_scope naming a new scope is a
// *StepUpError, never a silent sign-in; the host's next sign-in requests
// the union; the same refusal after it is final.
func TestStepUp(t *testing.T) {
	e := newEnv(t)
	s := e.as.server("srv")
	record401(t, e.c, s, `Bearer scope="mcp:basic", resource_metadata="`+e.as.URL()+prPath+`"`)
	p := siBegin(t, e, s)
	require.Equal(t, http.StatusOK, browse(t, e.as.ts, p.URL()))
	require.NoError(t, p.Wait(context.Background()))
	assert.Equal(t, "mcp:basic", siLastAuth(e).Get("scope"))
	authorizations := e.as.count("/authorize")

	a, req := tokAuth(t, e.c, s)
	_, err := a.Headers(context.Background(), req)
	require.NoError(t, err)
	insufficient := `Bearer error="insufficient_scope", scope="mcp:basic mcp:write", resource_metadata="` + e.as.URL() + prPath + `"`
	retry, err := a.Refused(context.Background(), tokRefusal(a, http.StatusForbidden, insufficient))
	assert.False(t, retry)
	tokRequire(t, err, refusal.AuthRequired, ReasonStepUpRequired)
	var su *StepUpError
	require.True(t, errors.As(err, &su))
	assert.Equal(t, []string{"mcp:basic", "mcp:write"}, su.Scopes)
	assert.NotContains(t, err.Error(), "mcp:write", "the scopes are beside the error, not in it")
	pending, ok := e.c.StepUpPending(s)
	assert.True(t, ok)
	assert.Equal(t, []string{"mcp:basic", "mcp:write"}, pending)
	assert.Equal(t, authorizations, e.as.count("/authorize"), "nothing is signed in silently")
	assert.Equal(t, 1, e.as.count("/token"), "no refresh either")

	p = siBegin(t, e, s)
	require.Equal(t, http.StatusOK, browse(t, e.as.ts, p.URL()))
	require.NoError(t, p.Wait(context.Background()))
	assert.Equal(t, "mcp:basic mcp:write", siLastAuth(e).Get("scope"))
	_, ok = e.c.StepUpPending(s)
	assert.False(t, ok, "the sign-in took the step-up")

	retry, err = a.Refused(context.Background(), tokRefusal(a, http.StatusForbidden, insufficient))
	assert.False(t, retry)
	tokRequire(t, err, refusal.AuthRefused, ReasonInsufficientScope)
	assert.False(t, errors.As(err, &su), "no second step-up for the same scopes")

	p = siBegin(t, e, s)
	u, err := url.Parse(p.URL())
	require.NoError(t, err)
	assert.Equal(t, "mcp:basic", u.Query().Get("scope"), "a sign-in without a pending step-up selects as usual")
}

// TestStepUpGrantedScope: when the token endpoint named the granted scope,
// a refusal for a scope it lacks is a step-up even if it was requested
// (the user may have declined it), and one for a granted scope is final.
func TestStepUpGrantedScope(t *testing.T) {
	for _, tt := range []struct {
		name, granted, need string
		stepUp              bool
	}{
		{"requested but not granted", "mcp.read", "mcp.read mcp.write", true},
		{"granted", "mcp.read mcp.write", "mcp.write", false},
		{"no scope named", "mcp.read", "", false},
		{"more than maxScopes in all", manyScopes(maxScopes), "more", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			s, _ := tokSeed(t, e, "srv", func(r *record) { r.Scope = tt.granted })
			a, _ := tokAuth(t, e.c, s)
			h := `Bearer error="insufficient_scope"`
			if tt.need != "" {
				h += `, scope="` + tt.need + `"`
			}
			_, err := a.Refused(context.Background(), tokRefusal(a, http.StatusForbidden, h))
			if tt.stepUp {
				tokRequire(t, err, refusal.AuthRequired, ReasonStepUpRequired)
				p := siBegin(t, e, s)
				u, err := url.Parse(p.URL())
				require.NoError(t, err)
				for _, sc := range strings.Fields(tt.need) {
					assert.Contains(t, strings.Fields(u.Query().Get("scope")), sc)
				}
				return
			}
			tokRequire(t, err, refusal.AuthRefused, ReasonInsufficientScope)
		})
	}
}

// TestRefuses20250326BackCompat pins that the 2025-03-26
// back-compat the conformance suite offers (auth/2025-03-26-oauth-metadata-backcompat
// and auth/2025-03-26-oauth-endpoint-fallback: no resource metadata, the
// MCP server's origin assumed to be the authorization server, and
// /authorize, /token, /register guessed there) stays refused: without
// resource metadata nothing is asked of the server's origin as an
// authorization server, nor of any guessed endpoint.
func TestRefuses20250326BackCompat(t *testing.T) {
	e := newEnv(t)
	e.as.handle(prPath, statusHandler(http.StatusNotFound))
	_, err := e.c.BeginSignIn(context.Background(), e.as.server("srv"))
	siRequire(t, err, refusal.Unsupported, ReasonResourceMetadataUnavailable)
	for _, p := range []string{asOAuth, asOIDC, "/authorize", "/token", "/register"} {
		assert.Equal(t, 0, e.as.count(p), "nothing asked of %s at the server's origin", p)
	}
	rep := ReportOf(err)
	require.NotNil(t, rep)
	last := rep.Steps[len(rep.Steps)-1]
	assert.Contains(t, last.Hint, "oauth.authServerMetadataUrl")
}

// TestRootMetadataTokenBoundToServer: two servers on one origin share the
// root-location metadata (which describes the origin); a sign-in to /a
// sends the resource indicator exactly as the metadata publishes it (the
// origin) on authorization and token requests, keeps it for the refresh,
// and stores nothing for /b: the credential stays bound to /a.
func TestRootMetadataTokenBoundToServer(t *testing.T) {
	e := newEnv(t)
	e.as.set(func(f *fakeAS) {
		m := f.defaultResourceMeta()
		m["resource"] = f.URL()
		f.overrides[prRoot] = jsonHandler(m)
	})
	a := Server{ID: "srv", URL: e.as.URL() + "/a"}
	p := siBegin(t, e, a)
	require.Equal(t, http.StatusOK, browse(t, e.as.ts, p.URL()))
	require.NoError(t, p.Wait(context.Background()))
	assert.Equal(t, e.as.URL(), siLastAuth(e).Get("resource"))
	assert.Equal(t, e.as.URL(), siLastToken(e).Get("resource"))
	rec, err := e.c.load(context.Background(), "srv", e.as.URL()+"/a")
	require.NoError(t, err)
	_, err = e.c.refresh(context.Background(), rec)
	require.NoError(t, err)
	assert.Equal(t, e.as.URL(), siLastToken(e).Get("resource"), "the refresh sends what the sign-in sent")
	st, err := e.c.Status(context.Background(), Server{ID: "srv", URL: e.as.URL() + "/b"})
	require.NoError(t, err)
	assert.Equal(t, SignedOut, st)
	st, err = e.c.Status(context.Background(), a)
	require.NoError(t, err)
	assert.Equal(t, SignedIn, st)
}

// TestSaveChallenge: a challenge saved by one process is the evidence of
// another sharing the store (the CLI's login after a call saw the 401),
// unless that one recorded its own; a step-up is not saved; what is saved
// out of bounds or unreadable is ignored.
func TestSaveChallenge(t *testing.T) {
	custom := func(e *testEnv) string {
		e.as.handle("/custom", jsonHandler(e.as.defaultResourceMeta()))
		e.as.handle("/own", jsonHandler(e.as.defaultResourceMeta()))
		return e.as.URL() + "/custom?" + canary
	}
	tests := []struct {
		name      string
		setup     func(t *testing.T, e *testEnv, s Server, other *Client)
		custom    int // requests to /custom
		scopes    []string
		wellKnown int // requests to the path-inserted location
	}{
		{
			name: "saved by another process",
			setup: func(t *testing.T, e *testEnv, s Server, _ *Client) {
				require.NoError(t, e.c.SaveChallenge(context.Background(), s, Challenge{Status: 401, ResourceMetadata: custom(e), Scope: []string{"x"}}))
			},
			custom: 1, scopes: []string{"x"},
		},
		{
			name: "own record first",
			setup: func(t *testing.T, e *testEnv, s Server, other *Client) {
				custom(e)
				require.NoError(t, e.c.SaveChallenge(context.Background(), s, Challenge{ResourceMetadata: e.as.URL() + "/custom"}))
				require.NoError(t, other.RecordChallenge(s, Challenge{ResourceMetadata: e.as.URL() + "/own"}))
			},
			scopes: []string{"mcp.read", "mcp.write"},
		},
		{
			name: "step-up saved, not its link",
			setup: func(t *testing.T, e *testEnv, s Server, _ *Client) {
				require.NoError(t, e.c.SaveChallenge(context.Background(), s, Challenge{Status: 403, Error: "insufficient_scope", ResourceMetadata: custom(e), Scope: []string{"x"}}))
			},
			wellKnown: 1, scopes: []string{"mcp.read", "mcp.write", "x"},
		},
		{
			name: "unreadable saved value ignored",
			setup: func(t *testing.T, e *testEnv, s Server, _ *Client) {
				require.NoError(t, e.store.Set(context.Background(), challengeKey(storeKey(s.ID, e.as.MCP())), []byte(`{"v":1,"scope":["a b"]}`)))
			},
			wellKnown: 1, scopes: []string{"mcp.read", "mcp.write"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			s := e.as.server("srv")
			other := e.client(t)
			tt.setup(t, e, s, other)
			rep, err := other.Discover(context.Background(), s)
			require.NoError(t, err)
			assert.Equal(t, tt.custom, e.as.count("/custom"))
			assert.Equal(t, tt.wellKnown, e.as.count(prPath))
			assert.Equal(t, tt.scopes, rep.Scopes)
			assertReportSafe(t, rep)
		})
	}
}

func TestSaveChallengeFailures(t *testing.T) {
	e := newEnv(t)
	s := e.as.server("srv")
	err := e.c.SaveChallenge(context.Background(), Server{ID: "srv", URL: "http://x/" + canary}, Challenge{})
	tokRequire(t, err, refusal.Config, ReasonURLInvalid)

	e.store.Fail("Set", ports.ErrUnavailable)
	err = e.c.SaveChallenge(context.Background(), s, Challenge{ResourceMetadata: e.as.URL() + "/custom"})
	tokRequire(t, err, refusal.Transient, ReasonStoreUnavailable)
	e.as.handle("/custom", jsonHandler(e.as.defaultResourceMeta()))
	_, err = e.c.Discover(context.Background(), s)
	require.NoError(t, err)
	assert.Equal(t, 1, e.as.count("/custom"), "the in-memory record stands")
}

// TestEvidenceBounded: however many server identities a Client records
// challenges for, it keeps at most maxEvidence.
func TestEvidenceBounded(t *testing.T) {
	c := discoveryClient(t, testMaxBody, nil)
	for i := range maxEvidence + 10 {
		require.NoError(t, c.RecordChallenge(Server{ID: fmt.Sprint("s", i), URL: mcpURL}, Challenge{ResourceMetadata: "https://x/y"}))
		c.began(storeKey(fmt.Sprint("b", i), mcpURL), []string{"a"})
	}
	c.evMu.Lock()
	defer c.evMu.Unlock()
	assert.LessOrEqual(t, len(c.evidence), maxEvidence)
}
