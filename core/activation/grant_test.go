package activation

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// TestSubjectCannotSelfApprove pins the structural guarantee: a Subject (all
// a definition contributes) has no field that could carry an approval, and
// nothing a definition can set turns a project or plugin subject into an
// allowed one without a Grant.
func TestSubjectCannotSelfApprove(t *testing.T) {
	t.Run("subject fields", func(t *testing.T) {
		var names []string
		typ := reflect.TypeFor[Subject]()
		for f := range typ.Fields() {
			names = append(names, f.Name+" "+f.Type.String())
		}
		assert.Equal(t, []string{
			"ServerID string",
			"Tier ports.Tier",
			"Origin string",
			"Fingerprint string",
			"Security string",
			"RequiresTrustedWorkspace bool",
		}, names, "a new Subject field needs a review: a definition must not be able to approve itself")
	})

	for _, tier := range []ports.Tier{ports.TierProject, ports.TierPlugin, ports.TierLocal} {
		for _, requiresTrust := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s requiresTrusted=%v in a trusted workspace", tier, requiresTrust), func(t *testing.T) {
				e := newEnv(t, false)
				s := subj(tier)
				s.RequiresTrustedWorkspace = requiresTrust
				dec, err := e.d.Decide(context.Background(), s)
				require.NoError(t, err)
				assert.False(t, dec.Allowed)
				assert.Equal(t, ReasonNotApproved, dec.Reason)
				assert.Zero(t, e.store.mutations())
			})
		}
	}
}

func TestGrantAndRevokeRefusals(t *testing.T) {
	with := func(s Subject, f func(*Subject)) Subject { f(&s); return s }
	noRepo := ports.WorkspaceFacts{Trusted: true, Generation: testGen}
	tests := []struct {
		name       string
		subject    Subject
		actor      string
		nilTrust   bool
		facts      *ports.WorkspaceFacts
		trustErr   error
		listErr    error
		grantErr   error
		revokeErr  error
		ops        []string // "grant", "revoke"; both when nil
		wantClass  refusal.Class
		wantReason string
		wantIs     error
	}{
		{name: "empty actor", subject: subj(ports.TierProject), actor: "", wantClass: refusal.Config, wantReason: ReasonActorRequired},
		{name: "blank actor", subject: subj(ports.TierProject), actor: " \t ", wantClass: refusal.Config, wantReason: ReasonActorRequired},
		{name: "actor forging a log line", subject: subj(ports.TierProject), actor: "cli\nrevoke all", wantClass: refusal.Config, wantReason: ReasonInvalidActor},
		{name: "actor with an escape", subject: subj(ports.TierProject), actor: "cli\x1b[2J", wantClass: refusal.Config, wantReason: ReasonInvalidActor},
		{name: "actor too long", subject: subj(ports.TierProject), actor: strings.Repeat("a", MaxActorLen+1), wantClass: refusal.Config, wantReason: ReasonInvalidActor},
		{name: "managed needs no approval", subject: subj(ports.TierManaged), actor: "cli", wantClass: refusal.Config, wantReason: ReasonApprovalNotNeeded},
		{name: "user needs no approval", subject: subj(ports.TierUser), actor: "cli", wantClass: refusal.Config, wantReason: ReasonApprovalNotNeeded},
		{name: "unknown tier", subject: subj("Project"), actor: "cli", wantClass: refusal.Config, wantReason: ReasonUnknownTier},
		{name: "empty server id", subject: with(subj(ports.TierProject), func(s *Subject) { s.ServerID = "" }), actor: "cli", wantClass: refusal.Config, wantReason: ReasonInvalidSubject},
		{name: "empty fingerprint", subject: with(subj(ports.TierPlugin), func(s *Subject) { s.Fingerprint = "" }), actor: "cli", wantClass: refusal.Config, wantReason: ReasonInvalidSubject},
		{name: "empty security", subject: with(subj(ports.TierLocal), func(s *Subject) { s.Security = "" }), actor: "cli", wantClass: refusal.Config, wantReason: ReasonInvalidSubject},
		{name: "project with unknown repository", subject: subj(ports.TierProject), actor: "cli", facts: &noRepo, wantClass: refusal.Refused, wantReason: ReasonRepositoryUnknown},
		{name: "plugin with unknown repository", subject: subj(ports.TierPlugin), actor: "cli", facts: &noRepo, wantClass: refusal.Refused, wantReason: ReasonRepositoryUnknown},
		{name: "nil trust is an unknown repository", subject: subj(ports.TierLocal), actor: "cli", nilTrust: true, wantClass: refusal.Refused, wantReason: ReasonRepositoryUnknown},
		{name: "trust fails", subject: subj(ports.TierProject), actor: "cli", trustErr: ports.ErrUnavailable,
			wantClass: refusal.Transient, wantReason: ReasonWorkspaceFactsUnavailable, wantIs: ports.ErrUnavailable},
		{name: "store list fails", subject: subj(ports.TierProject), actor: "cli", listErr: ports.ErrCorrupt, ops: []string{"grant"},
			wantClass: refusal.Internal, wantReason: ReasonApprovalsUnavailable, wantIs: ports.ErrCorrupt},
		{name: "store grant fails", subject: subj(ports.TierProject), actor: "cli", grantErr: ports.ErrUnavailable, ops: []string{"grant"},
			wantClass: refusal.Transient, wantReason: ReasonApprovalsUnavailable, wantIs: ports.ErrUnavailable},
		{name: "store revoke fails", subject: subj(ports.TierProject), actor: "cli", revokeErr: fmt.Errorf("rename %s: %w", testOrigin, ports.ErrUnavailable), ops: []string{"revoke"},
			wantClass: refusal.Transient, wantReason: ReasonApprovalsUnavailable, wantIs: ports.ErrUnavailable},
	}
	for _, tt := range tests {
		ops := tt.ops
		if ops == nil {
			ops = []string{"grant", "revoke"}
		}
		for _, op := range ops {
			t.Run(op+"/"+tt.name, func(t *testing.T) {
				e := newEnv(t, tt.nilTrust)
				if tt.facts != nil {
					e.trust.facts = *tt.facts
				}
				e.trust.err = tt.trustErr
				// An approval exactly as a successful call would see it, so a
				// refused revoke must leave it standing.
				existing := ports.Approval{Identity: IdentityOf(subj(ports.TierProject), trustedFacts()), GrantedAt: t0.Add(-time.Hour), GrantedBy: "alice"}
				e.store.approvals = []ports.Approval{existing}
				e.store.listErr, e.store.grantErr, e.store.revokeErr = tt.listErr, tt.grantErr, tt.revokeErr

				var err error
				if op == "grant" {
					var a ports.Approval
					a, err = e.d.Grant(context.Background(), tt.subject, tt.actor)
					assert.Zero(t, a)
				} else {
					err = e.d.Revoke(context.Background(), tt.subject, tt.actor)
				}
				r := assertRefusal(t, err, tt.wantClass, tt.wantReason)
				assert.Equal(t, tt.subject.ServerID, r.Server)
				if tt.wantIs != nil {
					assert.ErrorIs(t, err, tt.wantIs)
				}
				assertNoValues(t, err, "rename", "revoke all")
				assert.Equal(t, []ports.Approval{existing}, e.store.snapshot(), "a refused call changes nothing")
				assert.Empty(t, e.audit.all(), "only what happened is audited")
			})
		}
	}
}

func TestGrantRevokeRoundTrip(t *testing.T) {
	for _, tier := range approvalTiers {
		t.Run(string(tier), func(t *testing.T) {
			e := newEnv(t, false)
			ctx := context.Background()
			s := subj(tier)
			id := IdentityOf(s, trustedFacts())
			require.Equal(t, testRepo, id.Repository)

			dec, err := e.d.Decide(ctx, s)
			require.NoError(t, err)
			assert.Equal(t, ReasonNotApproved, dec.Reason)

			actor := strings.Repeat("a", MaxActorLen)
			a, err := e.d.Grant(ctx, s, actor)
			require.NoError(t, err)
			assert.Equal(t, ports.Approval{Identity: id, GrantedAt: t0, GrantedBy: actor}, a)
			assert.Equal(t, []ports.Approval{a}, e.store.snapshot())

			dec, err = e.d.Decide(ctx, s)
			require.NoError(t, err)
			assert.Equal(t, Decision{Allowed: true, Reason: ReasonApproved, Identity: id}, dec)

			// Granting again replaces rather than duplicates.
			_, err = e.d.Grant(ctx, s, "cli")
			require.NoError(t, err)
			assert.Equal(t, []ports.Approval{{Identity: id, GrantedAt: t0, GrantedBy: "cli"}}, e.store.snapshot())

			require.NoError(t, e.d.Revoke(ctx, s, "cli"))
			assert.Empty(t, e.store.snapshot())

			dec, err = e.d.Decide(ctx, s)
			require.NoError(t, err)
			assert.Equal(t, Decision{Reason: ReasonNotApproved, Identity: id}, dec)

			err = e.d.Revoke(ctx, s, "cli")
			assertRefusal(t, err, refusal.Config, ReasonApprovalNotFound)
			assert.ErrorIs(t, err, ports.ErrNotFound)

			grant := func(by string) ports.AuditRecord {
				return ports.AuditRecord{Time: t0, Action: ports.AuditGrant, Identity: id, Outcome: OutcomeGranted, Reason: ReasonExplicitGrant, Actor: by}
			}
			assert.Equal(t, []ports.AuditRecord{
				decideRecord(id, false, ReasonNotApproved),
				grant(actor),
				decideRecord(id, true, ReasonApproved),
				grant("cli"),
				{Time: t0, Action: ports.AuditRevoke, Identity: id, Outcome: OutcomeRevoked, Reason: ReasonExplicitRevoke, Actor: "cli"},
				decideRecord(id, false, ReasonNotApproved),
			}, e.audit.all())
		})
	}
}

func TestGrantBindsTheCurrentWorkspace(t *testing.T) {
	e := newEnv(t, false)
	ctx := context.Background()
	s := subj(ports.TierProject)
	_, err := e.d.Grant(ctx, s, "cli")
	require.NoError(t, err)

	// The host renews the workspace's trust: the old approval no longer
	// applies, and revoking names only the current identity.
	renewed := trustedFacts()
	renewed.Generation = "gen-2"
	e.trust.set(renewed)
	dec, err := e.d.Decide(ctx, s)
	require.NoError(t, err)
	assert.Equal(t, ReasonIdentityChanged, dec.Reason)
	assert.Equal(t, []string{FieldGeneration}, dec.Mismatch)

	err = e.d.Revoke(ctx, s, "cli")
	assert.ErrorIs(t, err, ports.ErrNotFound)
	assert.Len(t, e.store.snapshot(), 1, "the old generation's approval is not touched")

	_, err = e.d.Grant(ctx, s, "cli")
	require.NoError(t, err)
	dec, err = e.d.Decide(ctx, s)
	require.NoError(t, err)
	assert.True(t, dec.Allowed)
	assert.Len(t, e.store.snapshot(), 2)
}

func TestGrantAuditFailureRollsBack(t *testing.T) {
	old := ports.Approval{Identity: IdentityOf(subj(ports.TierProject), trustedFacts()), GrantedAt: t0.Add(-time.Hour), GrantedBy: "alice"}
	other := ports.Approval{Identity: IdentityOf(subj(ports.TierPlugin), trustedFacts()), GrantedAt: t0.Add(-time.Hour), GrantedBy: "alice"}
	tests := []struct {
		name       string
		before     []ports.Approval
		cancel     bool // the caller's context ends while auditing
		revokeErr  error
		wantDetail string
		wantAfter  []ports.Approval
	}{
		{name: "fresh grant is revoked", before: []ports.Approval{other},
			wantDetail: "grant rolled back", wantAfter: []ports.Approval{other}},
		{name: "regrant restores the previous approval", before: []ports.Approval{old},
			wantDetail: "grant rolled back", wantAfter: []ports.Approval{old}},
		{name: "rollback survives a cancelled context", cancel: true,
			wantDetail: "grant rolled back", wantAfter: nil},
		{name: "rollback fails", revokeErr: ports.ErrUnavailable,
			wantDetail: "grant not rolled back", wantAfter: []ports.Approval{{Identity: old.Identity, GrantedAt: t0, GrantedBy: "bob"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, false)
			e.store.approvals = append([]ports.Approval(nil), tt.before...)
			e.store.revokeErr = tt.revokeErr
			e.audit.err = ports.ErrUnavailable
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancel {
				e.audit.onAppend = cancel
			}

			a, err := e.d.Grant(ctx, subj(ports.TierProject), "bob")
			assert.Zero(t, a)
			r := assertRefusal(t, err, refusal.Transient, ReasonAuditUnavailable)
			assert.Equal(t, tt.wantDetail, r.Detail)
			assert.ErrorIs(t, err, ports.ErrUnavailable)
			assert.ElementsMatch(t, tt.wantAfter, e.store.snapshot())
			assert.Empty(t, e.audit.all())

			if tt.revokeErr == nil {
				e.audit.setErr(nil)
				dec, err := e.d.Decide(context.Background(), subj(ports.TierProject))
				require.NoError(t, err)
				assert.Equal(t, len(tt.before) > 0 && tt.before[0] == old, dec.Allowed, "only a previously audited approval stands")
			}
		})
	}
}

func TestRevokeAuditFailureStillRevokes(t *testing.T) {
	e := newEnv(t, false)
	s := subj(ports.TierPlugin)
	_, err := e.d.Grant(context.Background(), s, "cli")
	require.NoError(t, err)
	e.audit.setErr(ports.ErrUnavailable)

	err = e.d.Revoke(context.Background(), s, "cli")
	r := assertRefusal(t, err, refusal.Transient, ReasonAuditUnavailable)
	assert.Equal(t, "revoke not audited", r.Detail)
	assert.Empty(t, e.store.snapshot(), "an audit outage never keeps authority alive")
}

func TestRevokeAll(t *testing.T) {
	approval := func(server string, tier ports.Tier, repo, gen string) ports.Approval {
		s := subj(tier)
		s.ServerID = server
		return ports.Approval{Identity: IdentityOf(s, ports.WorkspaceFacts{Repository: repo, Generation: gen}), GrantedAt: t0, GrantedBy: "alice"}
	}
	mine := []ports.Approval{
		approval(testServer, ports.TierProject, testRepo, "gen-1"),
		approval(testServer, ports.TierPlugin, "https://git.example.com/b", "gen-1"),
		approval(testServer, ports.TierLocal, testRepo, "gen-2"),
	}
	others := []ports.Approval{
		approval("gitlab", ports.TierProject, testRepo, "gen-1"),
		approval("GitHub", ports.TierProject, testRepo, "gen-1"),
	}
	tests := []struct {
		name       string
		server     string
		actor      string
		listErr    error
		revokeErr  error
		revokeOK   int
		auditErr   error
		want       int
		wantReason string
		wantLeft   []ports.Approval
		wantAudit  int
	}{
		{name: "revokes every approval of the server", server: testServer, actor: "cli",
			want: 3, wantLeft: others, wantAudit: 3},
		{name: "nothing to revoke", server: "absent", actor: "cli",
			want: 0, wantLeft: append(append([]ports.Approval(nil), mine...), others...)},
		{name: "store fails midway", server: testServer, actor: "cli", revokeErr: ports.ErrUnavailable, revokeOK: 1,
			want: 1, wantReason: ReasonApprovalsUnavailable, wantLeft: append(append([]ports.Approval(nil), mine[1:]...), others...), wantAudit: 1},
		{name: "list fails", server: testServer, actor: "cli", listErr: ports.ErrCorrupt,
			want: 0, wantReason: ReasonApprovalsUnavailable, wantLeft: append(append([]ports.Approval(nil), mine...), others...)},
		{name: "audit fails but every revoke stands", server: testServer, actor: "cli", auditErr: ports.ErrUnavailable,
			want: 3, wantReason: ReasonAuditUnavailable, wantLeft: others},
		{name: "blank actor", server: testServer, actor: " ",
			want: 0, wantReason: ReasonActorRequired, wantLeft: append(append([]ports.Approval(nil), mine...), others...)},
		{name: "empty server id", server: "", actor: "cli",
			want: 0, wantReason: ReasonInvalidSubject, wantLeft: append(append([]ports.Approval(nil), mine...), others...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, false)
			e.store.loose = true // a store that also lists "GitHub" must not get it revoked
			e.store.approvals = append(append([]ports.Approval(nil), mine...), others...)
			e.store.listErr, e.store.revokeErr, e.store.revokeOK = tt.listErr, tt.revokeErr, tt.revokeOK
			e.audit.err = tt.auditErr

			n, err := e.d.RevokeAll(context.Background(), tt.server, tt.actor)
			assert.Equal(t, tt.want, n)
			if tt.wantReason == "" {
				require.NoError(t, err)
			} else {
				assert.Equal(t, tt.wantReason, refusal.ReasonOf(err))
				assertNoValues(t, err)
			}
			assert.ElementsMatch(t, tt.wantLeft, e.store.snapshot())
			recs := e.audit.all()
			require.Len(t, recs, tt.wantAudit)
			for i, r := range recs {
				assert.Equal(t, ports.AuditRecord{Time: t0, Action: ports.AuditRevoke, Identity: mine[i].Identity,
					Outcome: OutcomeRevoked, Reason: ReasonExplicitRevoke, Actor: tt.actor}, r)
			}
		})
	}
}

func TestErrorsCarryNoValues(t *testing.T) {
	// Every refusal a call can produce renders the server id and fixed words
	// only, whatever the subject holds.
	e := newEnv(t, false)
	e.store.listErr = fmt.Errorf("%s %s: %w", testOrigin, testSec, ports.ErrUnavailable)
	e.audit.err = fmt.Errorf("%s: %w", testRepo, ports.ErrUnavailable)
	ctx := context.Background()
	var errs []error
	_, err := e.d.Decide(ctx, subj(ports.TierProject))
	errs = append(errs, err)
	_, err = e.d.Grant(ctx, subj(ports.TierProject), "cli")
	errs = append(errs, err)
	_, err = e.d.RevokeAll(ctx, testServer, "cli")
	errs = append(errs, err)
	e.store.listErr = nil
	e.store.revokeErr = e.audit.err
	errs = append(errs, e.d.Revoke(ctx, subj(ports.TierPlugin), "cli"))
	for _, err := range errs {
		assertNoValues(t, err)
		var r *refusal.Error
		require.ErrorAs(t, err, &r)
		assert.Equal(t, testServer, r.Server)
	}
}

func TestConcurrentDecideGrantRevoke(t *testing.T) {
	e := newEnv(t, false)
	ctx := context.Background()
	const workers, rounds = 8, 25
	var wg sync.WaitGroup
	errc := make(chan error, workers*rounds*4)
	report := func(err error) {
		if err != nil {
			errc <- err
		}
	}
	for w := range workers {
		wg.Go(func() {
			s := subj(approvalTiers[w%len(approvalTiers)])
			s.ServerID = fmt.Sprintf("server-%d", w)
			for range rounds {
				_, err := e.d.Grant(ctx, s, "cli")
				report(err)
				dec, err := e.d.Decide(ctx, s)
				report(err)
				if !dec.Allowed {
					report(errors.New("granted subject denied: " + dec.Reason))
				}
				report(e.d.Revoke(ctx, s, "cli"))
				dec, err = e.d.Decide(ctx, s)
				report(err)
				if dec.Allowed || dec.Reason != ReasonNotApproved {
					report(errors.New("revoked subject not denied: " + dec.Reason))
				}
			}
		})
		// A reader on host-trusted tiers and a RevokeAll on an absent id
		// run beside the writers.
		wg.Go(func() {
			for range rounds {
				dec, err := e.d.Decide(ctx, subj(ports.TierUser))
				report(err)
				if !dec.Allowed {
					report(errors.New("user tier denied"))
				}
				_, err = e.d.RevokeAll(ctx, "absent", "cli")
				report(err)
			}
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	assert.Empty(t, e.store.snapshot())
	assert.Len(t, e.audit.all(), workers*rounds*4+workers*rounds)
}
