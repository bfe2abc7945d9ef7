package composition_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/core/activation"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	// Nothing here may reach a real session bus or keychain.
	os.Setenv("DBUS_SESSION_BUS_ADDRESS", "disabled:")
	code := m.Run()
	// The example server the dialer tests build (see exampleDir).
	os.RemoveAll(filepath.Join(os.TempDir(), fmt.Sprintf("composition-example-%d", os.Getpid())))
	os.Exit(code)
}

// facts is the workspace of every test unless it says otherwise.
var facts = ports.WorkspaceFacts{Repository: "https://github.com/acme/widgets.git", Generation: "g1"}

// fixture is one Custom Host on fakes.
type fixture struct {
	host      *composition.Host
	approvals *portstest.ApprovalStore
	audit     *portstest.AuditLog
	trust     *portstest.WorkspaceTrust
}

func newFixture(t *testing.T, vars map[string]string) *fixture {
	t.Helper()
	f := &fixture{
		approvals: portstest.NewApprovalStore(),
		audit:     portstest.NewAuditLog(),
		trust:     portstest.NewWorkspaceTrust(facts),
	}
	h, err := composition.New(composition.Ports{
		Tokens:    portstest.NewTokenStore(),
		Locker:    portstest.NewLocker(),
		Approvals: f.approvals,
		Audit:     f.audit,
		Trust:     f.trust,
	}, composition.Config{
		Lookup: func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
		Actor:  "tester",
		Now:    func() time.Time { return time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC) },
	})
	require.NoError(t, err)
	f.host = h
	return f
}

func src(tier ports.Tier, origin, data string) definition.Source {
	return definition.Source{Tier: tier, Origin: origin, Data: []byte(data)}
}

const projectDoc = `{"mcpServers": {
  "weather": {"command": "weather-mcp", "args": ["--units", "metric"]},
  "legacy":  {"type": "sse", "url": "https://legacy.example.com/sse"},
  "notes":   {"type": "http", "url": "https://notes.example.com/mcp", "headers": {"Authorization": "Bearer ${NOTES_TOKEN}"}},
  "tmpl":    {"command": "x", "args": ["${oops"]},
  "broken":  {"type": "http"},
  "guarded": {"command": "guarded-mcp", "requiresTrustedWorkspace": true},
  "dup":     {"command": "project-dup"}
}}`

func TestEvaluate(t *testing.T) {
	tests := []struct {
		name     string
		srcs     []definition.Source
		vars     map[string]string
		trusted  bool
		server   string
		want     composition.State
		reason   string
		missing  []string
		field    string
		noFP     bool
		disabled *definition.Provenance
	}{
		{
			name:   "managed is allowed on the host's trust",
			srcs:   []definition.Source{src(ports.TierManaged, "/etc/m.json", `{"mcpServers": {"corp": {"type": "http", "url": "https://corp.example.com/mcp"}}}`)},
			server: "corp", want: composition.StateAllowed, reason: activation.ReasonHostTrustedTier,
		},
		{
			name:   "user is allowed on the host's trust",
			srcs:   []definition.Source{src(ports.TierUser, "/home/u/mcp.json", `{"mcpServers": {"files": {"command": "files-mcp"}}}`)},
			server: "files", want: composition.StateAllowed, reason: activation.ReasonHostTrustedTier,
		},
		{
			name:   "project without approval is denied",
			srcs:   []definition.Source{src(ports.TierProject, "/w/.mcp.json", projectDoc)},
			server: "weather", want: composition.StateDenied, reason: activation.ReasonNotApproved,
		},
		{
			name:   "sse is refused by name",
			srcs:   []definition.Source{src(ports.TierProject, "/w/.mcp.json", projectDoc)},
			server: "legacy", want: composition.StateRefused, reason: definition.RefusalTransportSSE,
		},
		{
			name:   "unset variable is unresolved with its name",
			srcs:   []definition.Source{src(ports.TierProject, "/w/.mcp.json", projectDoc)},
			server: "notes", want: composition.StateUnresolved, reason: definition.ReasonUnsetVariable,
			missing: []string{"NOTES_TOKEN"}, noFP: true,
		},
		{
			name:   "set variable resolves",
			srcs:   []definition.Source{src(ports.TierProject, "/w/.mcp.json", projectDoc)},
			vars:   map[string]string{"NOTES_TOKEN": "s3cr3t"},
			server: "notes", want: composition.StateDenied, reason: activation.ReasonNotApproved,
		},
		{
			name:   "invalid template is unresolved",
			srcs:   []definition.Source{src(ports.TierProject, "/w/.mcp.json", projectDoc)},
			server: "tmpl", want: composition.StateUnresolved, reason: definition.ReasonInvalidTemplate, noFP: true,
		},
		{
			name:   "malformed entry is unresolved with its field",
			srcs:   []definition.Source{src(ports.TierProject, "/w/.mcp.json", projectDoc)},
			server: "broken", want: composition.StateUnresolved, reason: definition.EntryMissingURL, noFP: true,
		},
		{
			name:   "trusted workspace required and not given",
			srcs:   []definition.Source{src(ports.TierProject, "/w/.mcp.json", projectDoc)},
			server: "guarded", want: composition.StateDenied, reason: activation.ReasonWorkspaceUntrusted,
		},
		{
			name:    "trusted workspace required and given still needs approval",
			srcs:    []definition.Source{src(ports.TierProject, "/w/.mcp.json", projectDoc)},
			trusted: true,
			server:  "guarded", want: composition.StateDenied, reason: activation.ReasonNotApproved,
		},
		{
			name: "unreadable managed blocks lower tiers",
			srcs: []definition.Source{
				{Tier: ports.TierManaged, Origin: "/etc/m.json", ReadErr: errors.New("boom")},
				src(ports.TierProject, "/w/.mcp.json", projectDoc),
			},
			server: "weather", want: composition.StateBlocked, reason: definition.ReasonManagedUnreadable,
		},
		{
			name: "user overlay disables a project server",
			srcs: []definition.Source{
				src(ports.TierProject, "/w/.mcp.json", projectDoc),
				src(ports.TierUser, "/home/u/mcp.json", `{"disabledMcpServers": ["weather"]}`),
			},
			server: "weather", want: composition.StateDisabled, reason: definition.ReasonDisabled,
			disabled: &definition.Provenance{Tier: ports.TierUser, Origin: "/home/u/mcp.json"},
		},
		{
			name: "two plugins defining one name are ambiguous",
			srcs: []definition.Source{
				src(ports.TierPlugin, "plugin-a", `{"mcpServers": {"dup": {"command": "a"}}}`),
				src(ports.TierPlugin, "plugin-b", `{"mcpServers": {"dup": {"command": "b"}}}`),
			},
			server: "dup", want: composition.StateUnresolved, reason: definition.ReasonAmbiguousWithinTier, noFP: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.vars)
			f.trust.Set(ports.WorkspaceFacts{Trusted: tt.trusted, Repository: facts.Repository, Generation: facts.Generation})
			ev := f.host.Evaluate(context.Background(), tt.srcs)
			r, ok := ev.Server(tt.server)
			require.True(t, ok)
			assert.Equal(t, tt.want, r.State)
			assert.Equal(t, tt.reason, r.Reason)
			assert.Equal(t, tt.missing, r.Missing)
			assert.Equal(t, tt.want == composition.StateAllowed, r.Usable())
			assert.NoError(t, r.Err)
			if tt.noFP {
				assert.Empty(t, r.Fingerprint)
			} else {
				assert.Len(t, r.Fingerprint, 64)
			}
			assert.Equal(t, tt.disabled, r.DisabledBy)
			if tt.reason == definition.EntryMissingURL {
				assert.Nil(t, r.Projection)
			} else if tt.reason != definition.ReasonAmbiguousWithinTier {
				require.NotNil(t, r.Projection)
				assert.Equal(t, tt.server, r.Projection.Name)
			}
			// Only a decided server has an identity.
			decided := tt.want == composition.StateAllowed || tt.want == composition.StateDenied
			assert.Equal(t, decided, r.Identity != (ports.Identity{}))
		})
	}
}

func TestEvaluateDecidesOnlyUsableDefinitions(t *testing.T) {
	f := newFixture(t, nil)
	ev := f.host.Evaluate(context.Background(), []definition.Source{src(ports.TierProject, "/w/.mcp.json", projectDoc)})
	recs, err := f.audit.Records(context.Background())
	require.NoError(t, err)
	var decided []string
	for _, r := range recs {
		require.Equal(t, ports.AuditDecide, r.Action)
		decided = append(decided, r.Identity.ServerID)
	}
	// dup, guarded and weather reach activation; the refused, malformed
	// and unresolved ones never do.
	assert.Equal(t, []string{"dup", "guarded", "weather"}, decided)
	assert.Len(t, ev.Servers, 7)
}

func TestApproveRevoke(t *testing.T) {
	ctx := context.Background()
	srcs := []definition.Source{src(ports.TierProject, "/w/.mcp.json", projectDoc)}
	f := newFixture(t, nil)

	ap, err := f.host.Approve(ctx, srcs, "weather")
	require.NoError(t, err)
	assert.Equal(t, "tester", ap.GrantedBy)
	assert.Equal(t, ports.Identity{
		ServerID: "weather", Tier: ports.TierProject, Origin: "/w/.mcp.json",
		Fingerprint: ap.Identity.Fingerprint, Security: "weather-mcp",
		Repository: facts.Repository, Generation: facts.Generation,
	}, ap.Identity)

	r, _ := f.host.Evaluate(ctx, srcs).Server("weather")
	assert.Equal(t, composition.StateAllowed, r.State)
	assert.Equal(t, activation.ReasonApproved, r.Reason)
	assert.Equal(t, ap.Identity, r.Identity)
	assert.Equal(t, ap.Identity.Fingerprint, r.Fingerprint)

	t.Run("changed definition needs a new approval", func(t *testing.T) {
		changed := []definition.Source{src(ports.TierProject, "/w/.mcp.json",
			`{"mcpServers": {"weather": {"command": "weather-mcp", "args": ["--units", "imperial"]}}}`)}
		r, _ := f.host.Evaluate(ctx, changed).Server("weather")
		assert.Equal(t, composition.StateDenied, r.State)
		assert.Equal(t, activation.ReasonIdentityChanged, r.Reason)
		assert.Equal(t, []string{activation.FieldFingerprint}, r.Mismatch)
	})
	t.Run("moved source needs a new approval", func(t *testing.T) {
		moved := []definition.Source{src(ports.TierProject, "/other/.mcp.json", projectDoc)}
		r, _ := f.host.Evaluate(ctx, moved).Server("weather")
		assert.Equal(t, activation.ReasonIdentityChanged, r.Reason)
		assert.Equal(t, []string{activation.FieldOrigin}, r.Mismatch)
	})
	t.Run("new generation needs a new approval", func(t *testing.T) {
		f.trust.Set(ports.WorkspaceFacts{Repository: facts.Repository, Generation: "g2"})
		defer f.trust.Set(facts)
		r, _ := f.host.Evaluate(ctx, srcs).Server("weather")
		assert.Equal(t, []string{activation.FieldGeneration}, r.Mismatch)
	})

	require.NoError(t, f.host.Revoke(ctx, srcs, "weather"))
	r, _ = f.host.Evaluate(ctx, srcs).Server("weather")
	assert.Equal(t, activation.ReasonNotApproved, r.Reason)
	err = f.host.Revoke(ctx, srcs, "weather")
	assert.Equal(t, activation.ReasonApprovalNotFound, refusal.ReasonOf(err))

	// RevokeAll removes approvals of every identity of the name.
	_, err = f.host.Approve(ctx, srcs, "weather")
	require.NoError(t, err)
	_, err = f.host.Approve(ctx, []definition.Source{src(ports.TierProject, "/other/.mcp.json", projectDoc)}, "weather")
	require.NoError(t, err)
	n, err := f.host.RevokeAll(ctx, "weather")
	require.NoError(t, err)
	assert.Equal(t, 2, n)
}

func TestApproveRefusals(t *testing.T) {
	srcs := []definition.Source{
		src(ports.TierProject, "/w/.mcp.json", projectDoc),
		src(ports.TierManaged, "/etc/m.json", `{"mcpServers": {"corp": {"type": "http", "url": "https://corp.example.com/mcp"}}}`),
	}
	tests := []struct {
		name   string
		server string
		class  refusal.Class
		reason string
	}{
		{"unknown name", "nope", refusal.Config, composition.ReasonUnknownServer},
		{"refused", "legacy", refusal.Config, composition.ReasonNotApprovable},
		{"unresolved", "notes", refusal.Config, composition.ReasonNotApprovable},
		{"malformed", "broken", refusal.Config, composition.ReasonNotApprovable},
		{"managed needs none", "corp", refusal.Config, activation.ReasonApprovalNotNeeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			_, err := f.host.Approve(context.Background(), srcs, tt.server)
			require.Error(t, err)
			assert.Equal(t, tt.class, refusal.ClassOf(err))
			assert.Equal(t, tt.reason, refusal.ReasonOf(err))
			list, lerr := f.approvals.List(context.Background(), tt.server)
			require.NoError(t, lerr)
			assert.Empty(t, list, "a refused approve grants nothing")
		})
	}
}

func TestEvaluateFailsClosed(t *testing.T) {
	srcs := []definition.Source{src(ports.TierProject, "/w/.mcp.json", projectDoc)}
	tests := []struct {
		name   string
		break_ func(f *fixture)
		reason string
	}{
		{"approval store unavailable", func(f *fixture) { f.approvals.Fail("List", ports.ErrUnavailable) }, activation.ReasonApprovalsUnavailable},
		{"audit unavailable", func(f *fixture) { f.audit.Fail("Append", ports.ErrUnavailable) }, activation.ReasonAuditUnavailable},
		{"workspace facts unavailable", func(f *fixture) {
			f.trust.Fail("Facts", refusal.New(refusal.Transient, "cannot_tell", ""))
		}, activation.ReasonWorkspaceFactsUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			_, err := f.host.Approve(context.Background(), srcs, "weather")
			require.NoError(t, err)
			tt.break_(f)
			r, _ := f.host.Evaluate(context.Background(), srcs).Server("weather")
			assert.Equal(t, composition.StateDenied, r.State)
			assert.False(t, r.Usable())
			assert.Equal(t, tt.reason, r.Reason)
			var ref *refusal.Error
			require.ErrorAs(t, r.Err, &ref)
			assert.Equal(t, tt.reason, ref.Reason)
		})
	}
}

func TestResultsCarryNoSecret(t *testing.T) {
	const canary = "canary-4f1d9a"
	for _, tt := range []struct {
		name, userinfo string
		state          composition.State
		reason         string
	}{
		{name: "decided by activation", state: composition.StateDenied},
		// Userinfo is refused by the URL admission Evaluate runs, before
		// activation: the result still carries no secret.
		{name: "refused for its userinfo", userinfo: "user:" + canary + "@", state: composition.StateRefused, reason: "userinfo_refused"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			doc := `{"mcpServers": {"s": {"type": "http",
	  "url": "https://` + tt.userinfo + `api.example.com/mcp?token=` + canary + `&region=${REGION}",
	  "headers": {"Authorization": "Bearer ${API_TOKEN}", "X-Plain": "` + canary + `"}}}}`
			f := newFixture(t, map[string]string{"API_TOKEN": canary, "REGION": "eu"})
			ev := f.host.Evaluate(context.Background(), []definition.Source{src(ports.TierProject, "/w/.mcp.json", doc)})
			r, ok := ev.Server("s")
			require.True(t, ok)
			require.NotNil(t, r.Projection)
			assert.Equal(t, tt.state, r.State)
			if tt.reason != "" {
				assert.Equal(t, tt.reason, r.Reason)
			}
			assert.NotContains(t, r.Projection.URL, canary)
			assert.NotContains(t, r.Identity.Security, canary)
			assert.NotContains(t, r.Detail, canary)
			assert.Contains(t, r.Projection.URL, "region=eu", "non-secret values stay readable")
			recs, err := f.audit.Records(context.Background())
			require.NoError(t, err)
			for _, rec := range recs {
				assert.NotContains(t, rec.Identity.Security, canary)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	f := newFixture(t, nil)
	checks := f.host.Check(context.Background(), time.Second)
	names := make([]string, len(checks))
	for i, c := range checks {
		names[i] = c.Name
		assert.NoError(t, c.Err, c.Name)
	}
	assert.Equal(t, []string{"approvals", "audit", "tokens", "locks"}, names)

	f.audit.Fail("Records", ports.ErrCorrupt)
	f.approvals.Fail("List", ports.ErrUnavailable)
	checks = f.host.Check(context.Background(), time.Second)
	assert.Equal(t, composition.ReasonStoreUnavailable, refusal.ReasonOf(checks[0].Err))
	assert.Equal(t, refusal.Transient, refusal.ClassOf(checks[0].Err))
	assert.Equal(t, composition.ReasonStoreCorrupt, refusal.ReasonOf(checks[1].Err))

	// A host without tokens or locks is not probed for them.
	h, err := composition.New(composition.Ports{Approvals: portstest.NewApprovalStore(), Audit: portstest.NewAuditLog()}, composition.Config{})
	require.NoError(t, err)
	assert.Len(t, h.Check(context.Background(), time.Second), 2)
}

// verifyingStore is an approval store that tells replayed approvals apart
// (ports.ApprovalVerifier) with scripted answers.
type verifyingStore struct {
	ports.ApprovalStore
	verify  error
	removed int
	asked   []string
}

func (v *verifyingStore) VerifyApprovals(context.Context) error { return v.verify }

func (v *verifyingStore) RemoveReplayed(_ context.Context, server string) (int, error) {
	v.asked = append(v.asked, server)
	return v.removed, nil
}

// replayedErr is a store's refusal of a replayed approval: its own word
// and server, matching ports.ErrReplayed.
type replayedErr struct{ r *refusal.Error }

func (e replayedErr) Error() string   { return e.r.Error() }
func (e replayedErr) Unwrap() []error { return []error{e.r, ports.ErrReplayed, ports.ErrCorrupt} }

// TestCheckAndRevokeAllWithAVerifier: with an approval store that is a
// ports.ApprovalVerifier, Check verifies every approval and keeps the
// store's word and server for a replay (store_replayed without one);
// RevokeAll first removes the replayed approvals of the name, audited.
func TestCheckAndRevokeAllWithAVerifier(t *testing.T) {
	v := &verifyingStore{ApprovalStore: portstest.NewApprovalStore()}
	audit := portstest.NewAuditLog()
	h, err := composition.New(composition.Ports{Approvals: v, Audit: audit}, composition.Config{Actor: "cli"})
	require.NoError(t, err)
	assert.NoError(t, h.Check(t.Context(), time.Second)[0].Err)

	v.verify = replayedErr{&refusal.Error{Class: refusal.Config, Reason: "approval_replayed", Server: "srv", Detail: "pgstore: fixed"}}
	c := h.Check(t.Context(), time.Second)[0]
	assert.Equal(t, "approval_replayed", refusal.ReasonOf(c.Err))
	var re *refusal.Error
	require.ErrorAs(t, c.Err, &re)
	assert.Equal(t, "srv", re.Server)
	assert.NotContains(t, c.Err.Error(), "fixed", "the store's detail does not pass")

	v.verify = fmt.Errorf("wrapped: %w", ports.ErrReplayed)
	assert.Equal(t, composition.ReasonStoreReplayed, refusal.ReasonOf(h.Check(t.Context(), time.Second)[0].Err))

	v.removed = 1
	n, err := h.RevokeAll(t.Context(), "srv")
	require.NoError(t, err)
	assert.Equal(t, 1, n, "the replayed approval removed counts")
	assert.Equal(t, []string{"srv"}, v.asked)
	recs, err := audit.Records(t.Context())
	require.NoError(t, err)
	require.Len(t, recs, 1)
	assert.Equal(t, ports.AuditRevoke, recs[0].Action)
	assert.Equal(t, composition.ReasonReplayedRemoved, recs[0].Reason)
	assert.Equal(t, "srv", recs[0].Identity.ServerID)
	assert.Equal(t, "cli", recs[0].Actor)
}

func TestCustomRequiresApprovalsAndAudit(t *testing.T) {
	_, err := composition.New(composition.Ports{Audit: portstest.NewAuditLog()}, composition.Config{})
	assert.Equal(t, activation.ReasonInvalidOptions, refusal.ReasonOf(err))
}
