package integration_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpward/mcpward/adapters/httptransport"
	"github.com/mcpward/mcpward/adapters/oauth"
	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/headless"
	"github.com/mcpward/mcpward/composition/internal/oauthtest"
)

// TestTelemetryOAuthSteps: a sign-in through a headless Host is one
// mcpward.signin INTERNAL span under the caller's span, the renewal of its
// expired token at connect one mcpward.refresh span, a failed refresh
// carries its reason word as error.type; and no token, code, state,
// authorization URL or endpoint path reaches any span or metric while the
// server did issue and receive them.
func TestTelemetryOAuthSteps(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "guarded", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "whoami"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "signed in"}}}, nil, nil
	})
	o := oauthtest.New(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	o.Mu.Lock()
	o.SignInExpiresIn = oauthtest.ExpiresAtOnce // the first connect refreshes
	o.Mu.Unlock()
	pool := x509.NewCertPool()
	pool.AddCert(o.TS.Certificate())
	rec := newRecorders(t)
	ctx := context.Background()
	var clockMu sync.Mutex
	skew := time.Duration(0)
	now := func() time.Time {
		clockMu.Lock()
		defer clockMu.Unlock()
		return time.Now().Add(skew)
	}
	h, cleanup, err := headless.Open(ctx, headless.Config{Dir: t.TempDir(), Config: composition.Config{
		Egress:         oauthtest.Egress(t),
		HTTP:           &httptransport.Options{TLSConfig: &tls.Config{RootCAs: pool}, MaxRetries: -1},
		OAuth:          &composition.OAuthConfig{},
		TracerProvider: rec.tp, MeterProvider: rec.mp,
		Now: now,
	}})
	require.NoError(t, err)
	t.Cleanup(cleanup)
	srcs := oauthtest.Sources(o.TS.URL)

	var authURL string
	open := oauthtest.Browser(o.TS)
	rctx, root := rec.tp.Tracer("test").Start(ctx, "host.login")
	require.NoError(t, h.SignIn(rctx, srcs, "guarded", func(u string) error { authURL = u; return open(u) }))
	root.End()

	f := h.Connect(ctx, srcs, nil)
	require.Equal(t, composition.StateConnected, f.Servers()[0].State, "%+v", f.Servers()[0])
	_, err = f.CallServerTool(ctx, "guarded", "whoami", nil)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	spans := rec.spans.Ended()
	si := span(t, spans, composition.SpanSignIn)
	assert.Equal(t, trace.SpanKindInternal, si.SpanKind())
	assert.Equal(t, root.SpanContext().SpanID(), si.Parent().SpanID(), "under the caller's span")
	assert.Empty(t, si.Attributes(), "a successful sign-in says nothing more")
	assert.Equal(t, codes.Unset, si.Status().Code)
	rf := span(t, spans, composition.SpanRefresh)
	assert.Equal(t, trace.SpanKindInternal, rf.SpanKind())
	assert.NotEqual(t, si.SpanContext().TraceID(), rf.SpanContext().TraceID(), "the refresh belongs to the connect's trace")
	assert.Empty(t, rf.Attributes())

	// Two hours on, a refresh the authorization server answers with an
	// empty body: error.type is the reason the connection fails with.
	o.Mu.Lock()
	o.BeforeRefresh = func(*http.Request) bool { return false }
	o.Mu.Unlock()
	clockMu.Lock()
	skew = 2 * time.Hour
	clockMu.Unlock()
	f = h.Connect(ctx, srcs, nil)
	failed := f.Servers()[0]
	require.NoError(t, f.Close())
	require.Equal(t, composition.StateFailed, failed.State)
	var bad sdktrace.ReadOnlySpan
	for _, s := range rec.spans.Ended() {
		if s.Name() == composition.SpanRefresh && s.Status().Code == codes.Error {
			bad = s
		}
	}
	require.NotNil(t, bad, "the failed refresh is a span")
	assert.Equal(t, map[string]string{"error.type": failed.Reason}, attrMap(bad.Attributes()))

	// What must never be in the telemetry, seen by the server.
	o.Mu.Lock()
	issued := o.Seq
	o.Mu.Unlock()
	require.GreaterOrEqual(t, issued, 2, "a sign-in and a refresh issued tokens")
	require.NotEmpty(t, authURL)
	out := telemetryText(t, rec)
	require.Contains(t, out, composition.SpanSignIn, "the walk saw the sign-in")
	require.Contains(t, out, composition.SpanRefresh, "the walk saw the refresh")
	for _, never := range []string{"token-", "rt-token", "code-", "state=", "/authorize", "/token", "/.well-known", o.TS.URL, authURL} {
		assert.False(t, strings.Contains(out, never), "%q-shaped text reached the telemetry", strings.SplitN(never, "?", 2)[0])
	}
}

// TestOAuthStepsNames: the hook maps adapters/oauth's step words onto the
// span names, records nothing for another word, and is nil without a
// TracerProvider.
func TestOAuthStepsNames(t *testing.T) {
	assert.Nil(t, composition.OAuthSteps(nil))
	rec := newRecorders(t)
	step := composition.OAuthSteps(rec.tp)
	for _, s := range []string{oauth.StepSignIn, oauth.StepRefresh, "other"} {
		_, end := step(context.Background(), s)
		end(nil)
	}
	var names []string
	for _, s := range rec.spans.Ended() {
		names = append(names, s.Name())
	}
	assert.Equal(t, []string{composition.SpanSignIn, composition.SpanRefresh}, names)
}
