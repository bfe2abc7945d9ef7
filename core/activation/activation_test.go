package activation

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

var t0 = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

const (
	testServer = "github"
	testOrigin = "/home/dev/app/.mcp.json"
	testSec    = "https://mcp.example.com:443/mcp?token=****"
	testRepo   = "https://git.example.com/acme/app"
	testGen    = "gen-1"
)

var testFP = strings.Repeat("ab", 32)

var approvalTiers = []ports.Tier{ports.TierLocal, ports.TierProject, ports.TierPlugin}

func subj(tier ports.Tier) Subject {
	return Subject{ServerID: testServer, Tier: tier, Origin: testOrigin, Fingerprint: testFP, Security: testSec}
}

func trustedFacts() ports.WorkspaceFacts {
	return ports.WorkspaceFacts{Trusted: true, Repository: testRepo, Generation: testGen}
}

type env struct {
	store *fakeStore
	audit *fakeAudit
	trust *fakeTrust
	d     *Decider
}

// newEnv returns a Decider over fresh fakes, a trusted workspace and a
// clock fixed at t0. A nil trust is passed to New when nilTrust is set.
func newEnv(t *testing.T, nilTrust bool) *env {
	t.Helper()
	e := &env{store: &fakeStore{}, audit: &fakeAudit{}, trust: &fakeTrust{facts: trustedFacts()}}
	o := Options{Approvals: e.store, Audit: e.audit, Now: func() time.Time { return t0 }}
	if !nilTrust {
		o.Trust = e.trust
	}
	d, err := New(o)
	require.NoError(t, err)
	e.d = d
	return e
}

func decideRecord(id ports.Identity, allowed bool, reason string) ports.AuditRecord {
	out := OutcomeDenied
	if allowed {
		out = OutcomeAllowed
	}
	return ports.AuditRecord{Time: t0, Action: ports.AuditDecide, Identity: id, Outcome: out, Reason: reason}
}

// assertNoValues fails when err's text holds any identity value other than
// the server id.
func assertNoValues(t *testing.T, err error, values ...string) {
	t.Helper()
	require.Error(t, err)
	msg := err.Error()
	for _, v := range append(values, testOrigin, testSec, testFP, testRepo, testGen) {
		assert.NotContains(t, msg, v)
	}
}

func assertRefusal(t *testing.T, err error, class refusal.Class, reason string) *refusal.Error {
	t.Helper()
	require.Error(t, err)
	var r *refusal.Error
	require.ErrorAs(t, err, &r)
	assert.Equal(t, class, r.Class, "class of %v", err)
	assert.Equal(t, reason, r.Reason, "reason of %v", err)
	assert.Empty(t, r.Origin, "a subject origin is a label, never a refusal origin")
	assert.True(t, errors.Is(err, refusal.New(class, reason, "")))
	return r
}

func TestNew(t *testing.T) {
	store, audit := &fakeStore{}, &fakeAudit{}
	tests := []struct {
		name string
		o    Options
	}{
		{"nil approvals", Options{Audit: audit}},
		{"nil audit", Options{Approvals: store}},
		{"nothing", Options{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := New(tt.o)
			assert.Nil(t, d)
			assertRefusal(t, err, refusal.Config, ReasonInvalidOptions)
		})
	}

	t.Run("nil Now is time.Now and nil Trust is allowed", func(t *testing.T) {
		d, err := New(Options{Approvals: store, Audit: audit})
		require.NoError(t, err)
		before := time.Now()
		dec, err := d.Decide(context.Background(), subj(ports.TierUser))
		after := time.Now()
		require.NoError(t, err)
		assert.True(t, dec.Allowed)
		recs := audit.all()
		require.Len(t, recs, 1)
		assert.False(t, recs[0].Time.Before(before))
		assert.False(t, recs[0].Time.After(after))
	})
}

func TestIdentityOf(t *testing.T) {
	f := ports.WorkspaceFacts{Trusted: true, Repository: testRepo, Generation: testGen}
	base := ports.Identity{ServerID: testServer, Origin: testOrigin, Fingerprint: testFP, Security: testSec}
	tests := []struct {
		name     string
		tier     ports.Tier
		wantRepo string
		wantGen  string
	}{
		{"managed ignores the workspace", ports.TierManaged, "", ""},
		{"user ignores the workspace", ports.TierUser, "", ""},
		{"local binds the workspace", ports.TierLocal, testRepo, testGen},
		{"project binds the workspace", ports.TierProject, testRepo, testGen},
		{"plugin binds the workspace", ports.TierPlugin, testRepo, testGen},
		{"unknown tier binds the workspace", ports.Tier("Managed"), testRepo, testGen},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := base
			want.Tier = tt.tier
			want.Repository = tt.wantRepo
			want.Generation = tt.wantGen
			assert.Equal(t, want, IdentityOf(subj(tt.tier), f))
			// Trust is a decision input, never part of an identity.
			untrusted := f
			untrusted.Trusted = false
			assert.Equal(t, want, IdentityOf(subj(tt.tier), untrusted))
		})
	}
}

func TestDecideRules(t *testing.T) {
	untrusted := ports.WorkspaceFacts{Repository: testRepo, Generation: testGen}
	noRepo := ports.WorkspaceFacts{Trusted: true, Generation: testGen}
	requires := func(s Subject) Subject { s.RequiresTrustedWorkspace = true; return s }
	with := func(s Subject, f func(*Subject)) Subject { f(&s); return s }

	type tc struct {
		name     string
		subject  Subject
		facts    ports.WorkspaceFacts
		nilTrust bool
		trustErr error
		listErr  error
		// approve stores an approval equal to the identity the subject has
		// under facts (so only a rule, never a mismatch, can deny it).
		approve bool
		// plant stores this approval instead.
		plant       *ports.Identity
		wantAllowed bool
		wantReason  string
		// wantNoFacts: the decision is made before the facts are consulted.
		wantNoFacts bool
	}
	var tests []tc
	for _, tier := range []ports.Tier{ports.TierManaged, ports.TierUser} {
		tests = append(tests,
			tc{name: string(tier) + " is host trusted without approval", subject: subj(tier), facts: trustedFacts(),
				wantAllowed: true, wantReason: ReasonHostTrustedTier, wantNoFacts: true},
			tc{name: string(tier) + " consults neither a failing trust nor a failing store", subject: subj(tier), facts: trustedFacts(),
				trustErr: ports.ErrUnavailable, listErr: ports.ErrUnavailable,
				wantAllowed: true, wantReason: ReasonHostTrustedTier, wantNoFacts: true},
			tc{name: string(tier) + " is host trusted in an untrusted workspace", subject: subj(tier), facts: untrusted,
				wantAllowed: true, wantReason: ReasonHostTrustedTier, wantNoFacts: true},
			tc{name: string(tier) + " with nil trust is host trusted", subject: subj(tier), nilTrust: true,
				wantAllowed: true, wantReason: ReasonHostTrustedTier, wantNoFacts: true},
		)
	}
	for _, tier := range approvalTiers {
		tests = append(tests,
			tc{name: string(tier) + " exact approval", subject: subj(tier), facts: trustedFacts(), approve: true,
				wantAllowed: true, wantReason: ReasonApproved},
			tc{name: string(tier) + " exact approval in an untrusted workspace", subject: subj(tier), facts: untrusted, approve: true,
				wantAllowed: true, wantReason: ReasonApproved},
			tc{name: string(tier) + " no approval", subject: subj(tier), facts: trustedFacts(),
				wantReason: ReasonNotApproved},
			tc{name: string(tier) + " unknown repository denies even an approval bound to it", subject: subj(tier), facts: noRepo, approve: true,
				wantReason: ReasonRepositoryUnknown},
			tc{name: string(tier) + " nil trust is an unknown repository", subject: subj(tier), nilTrust: true, approve: true,
				wantReason: ReasonRepositoryUnknown},
			tc{name: string(tier) + " approval of another server id does not count", subject: subj(tier), facts: trustedFacts(),
				plant:      &ports.Identity{ServerID: "gitlab", Tier: tier, Origin: testOrigin, Fingerprint: testFP, Security: testSec, Repository: testRepo, Generation: testGen},
				wantReason: ReasonNotApproved},
		)
	}
	for _, tier := range ports.Tiers {
		allowedReason := ReasonApproved
		if tier == ports.TierManaged || tier == ports.TierUser {
			allowedReason = ReasonHostTrustedTier
		}
		tests = append(tests,
			tc{name: string(tier) + " requiring trust in an untrusted workspace", subject: requires(subj(tier)), facts: untrusted, approve: true,
				wantReason: ReasonWorkspaceUntrusted},
			tc{name: string(tier) + " requiring trust with nil trust", subject: requires(subj(tier)), nilTrust: true, approve: true,
				wantReason: ReasonWorkspaceUntrusted},
			tc{name: string(tier) + " requiring trust in a trusted workspace", subject: requires(subj(tier)), facts: trustedFacts(), approve: true,
				wantAllowed: true, wantReason: allowedReason},
		)
	}
	for _, tier := range []ports.Tier{"", "Managed", "USER", "workspace", " project", "project "} {
		tests = append(tests, tc{name: fmt.Sprintf("unknown tier %q with an exact approval", tier), subject: subj(tier), facts: trustedFacts(), approve: true,
			wantReason: ReasonUnknownTier, wantNoFacts: true})
	}
	for _, tier := range ports.Tiers {
		tests = append(tests,
			tc{name: string(tier) + " empty server id", subject: with(subj(tier), func(s *Subject) { s.ServerID = "" }), facts: trustedFacts(), approve: true,
				wantReason: ReasonInvalidSubject, wantNoFacts: true},
			tc{name: string(tier) + " empty fingerprint", subject: with(subj(tier), func(s *Subject) { s.Fingerprint = "" }), facts: trustedFacts(), approve: true,
				wantReason: ReasonInvalidSubject, wantNoFacts: true},
			tc{name: string(tier) + " empty security", subject: with(subj(tier), func(s *Subject) { s.Security = "" }), facts: trustedFacts(), approve: true,
				wantReason: ReasonInvalidSubject, wantNoFacts: true},
		)
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, tt.nilTrust)
			e.trust.facts, e.trust.err = tt.facts, tt.trustErr
			e.store.listErr = tt.listErr
			id := IdentityOf(tt.subject, tt.facts)
			if tt.nilTrust || tt.wantNoFacts {
				id = IdentityOf(tt.subject, ports.WorkspaceFacts{})
			}
			switch {
			case tt.approve:
				e.store.approvals = []ports.Approval{{Identity: IdentityOf(tt.subject, tt.facts), GrantedAt: t0, GrantedBy: "cli"}}
			case tt.plant != nil:
				e.store.approvals = []ports.Approval{{Identity: *tt.plant, GrantedAt: t0, GrantedBy: "cli"}}
			}

			dec, err := e.d.Decide(context.Background(), tt.subject)
			require.NoError(t, err)
			assert.Equal(t, Decision{Allowed: tt.wantAllowed, Reason: tt.wantReason, Identity: id}, dec)
			assert.Equal(t, []ports.AuditRecord{decideRecord(id, tt.wantAllowed, tt.wantReason)}, e.audit.all())
			assert.Zero(t, e.store.mutations(), "Decide never writes the approval store")
			if tt.wantNoFacts {
				assert.Zero(t, e.trust.callCount(), "trust consulted needlessly")
			}
		})
	}
}

func TestDecideEachIdentityFieldIsFresh(t *testing.T) {
	type tc struct {
		name         string
		change       func(s *Subject, f *ports.WorkspaceFacts)
		loose        bool
		wantReason   string
		wantMismatch []string
	}
	for _, tier := range approvalTiers {
		otherTier := ports.TierPlugin
		if tier == ports.TierPlugin {
			otherTier = ports.TierLocal
		}
		tests := []tc{
			{"unchanged", func(*Subject, *ports.WorkspaceFacts) {}, false, ReasonApproved, nil},
			{"server id renamed", func(s *Subject, _ *ports.WorkspaceFacts) { s.ServerID = "github2" }, false, ReasonNotApproved, nil},
			{"server id differs only in case through a loose store", func(s *Subject, _ *ports.WorkspaceFacts) { s.ServerID = "GitHub" }, true,
				ReasonIdentityChanged, []string{FieldServerID}},
			{"tier", func(s *Subject, _ *ports.WorkspaceFacts) { s.Tier = otherTier }, false, ReasonIdentityChanged, []string{FieldTier}},
			{"origin", func(s *Subject, _ *ports.WorkspaceFacts) { s.Origin = "/home/dev/other/.mcp.json" }, false,
				ReasonIdentityChanged, []string{FieldOrigin}},
			{"fingerprint", func(s *Subject, _ *ports.WorkspaceFacts) { s.Fingerprint = strings.Repeat("cd", 32) }, false,
				ReasonIdentityChanged, []string{FieldFingerprint}},
			{"fingerprint in one character", func(s *Subject, _ *ports.WorkspaceFacts) { s.Fingerprint = testFP[:63] + "c" }, false,
				ReasonIdentityChanged, []string{FieldFingerprint}},
			{"security", func(s *Subject, _ *ports.WorkspaceFacts) { s.Security = "https://mcp.example.com:8443/mcp?token=****" }, false,
				ReasonIdentityChanged, []string{FieldSecurity}},
			{"repository", func(_ *Subject, f *ports.WorkspaceFacts) { f.Repository = "https://git.example.com/acme/fork" }, false,
				ReasonIdentityChanged, []string{FieldRepository}},
			{"generation", func(_ *Subject, f *ports.WorkspaceFacts) { f.Generation = "gen-2" }, false,
				ReasonIdentityChanged, []string{FieldGeneration}},
			{"generation becomes unknown", func(_ *Subject, f *ports.WorkspaceFacts) { f.Generation = "" }, false,
				ReasonIdentityChanged, []string{FieldGeneration}},
			{"trust alone is no identity change", func(_ *Subject, f *ports.WorkspaceFacts) { f.Trusted = false }, false,
				ReasonApproved, nil},
			{"fingerprint and security", func(s *Subject, _ *ports.WorkspaceFacts) {
				s.Security, s.Fingerprint = "stdio:/usr/bin/evil", strings.Repeat("00", 32)
			}, false, ReasonIdentityChanged, []string{FieldFingerprint, FieldSecurity}},
			{"every field but the server id", func(s *Subject, f *ports.WorkspaceFacts) {
				s.Tier, s.Origin, s.Fingerprint, s.Security = otherTier, "plugin:x", strings.Repeat("00", 32), "stdio:x"
				f.Repository, f.Generation = "r", "g"
			}, false, ReasonIdentityChanged,
				[]string{FieldTier, FieldOrigin, FieldFingerprint, FieldSecurity, FieldRepository, FieldGeneration}},
		}
		for _, tt := range tests {
			t.Run(string(tier)+"/"+tt.name, func(t *testing.T) {
				e := newEnv(t, false)
				e.store.loose = tt.loose
				approved := IdentityOf(subj(tier), trustedFacts())
				e.store.approvals = []ports.Approval{{Identity: approved, GrantedAt: t0, GrantedBy: "cli"}}

				s, f := subj(tier), trustedFacts()
				tt.change(&s, &f)
				e.trust.facts = f
				dec, err := e.d.Decide(context.Background(), s)
				require.NoError(t, err)
				assert.Equal(t, tt.wantReason == ReasonApproved, dec.Allowed)
				assert.Equal(t, tt.wantReason, dec.Reason)
				assert.Equal(t, tt.wantMismatch, dec.Mismatch)
				assert.Equal(t, IdentityOf(s, f), dec.Identity)
				assert.Equal(t, []ports.AuditRecord{decideRecord(IdentityOf(s, f), dec.Allowed, tt.wantReason)}, e.audit.all())
			})
		}
	}
}

func TestDecideMismatchNamesTheClosestApproval(t *testing.T) {
	base := IdentityOf(subj(ports.TierProject), trustedFacts())
	vary := func(f func(*ports.Identity)) ports.Identity { id := base; f(&id); return id }
	far := vary(func(id *ports.Identity) { id.Fingerprint, id.Security, id.Origin = "x", "y", "z" })
	gen := vary(func(id *ports.Identity) { id.Generation = "gen-0" })
	fp := vary(func(id *ports.Identity) { id.Fingerprint = "old" })
	tests := []struct {
		name  string
		store []ports.Identity
		want  []string
	}{
		{"one approval", []ports.Identity{far}, []string{FieldOrigin, FieldFingerprint, FieldSecurity}},
		{"fewest differing fields wins over older", []ports.Identity{gen, far}, []string{FieldGeneration}},
		{"fewest differing fields wins over newer", []ports.Identity{far, gen}, []string{FieldGeneration}},
		{"a tie goes to the newest", []ports.Identity{far, gen, fp}, []string{FieldFingerprint}},
		{"a tie goes to the newest, reversed", []ports.Identity{fp, gen, far}, []string{FieldGeneration}},
		{"an exact match among many allows", []ports.Identity{far, gen, base, fp}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, false)
			for _, id := range tt.store {
				e.store.approvals = append(e.store.approvals, ports.Approval{Identity: id})
			}
			dec, err := e.d.Decide(context.Background(), subj(ports.TierProject))
			require.NoError(t, err)
			assert.Equal(t, tt.want == nil, dec.Allowed)
			assert.Equal(t, tt.want, dec.Mismatch)
		})
	}
}

func TestDecideManagedAndUserIgnoreTheWorkspace(t *testing.T) {
	facts := []ports.WorkspaceFacts{
		trustedFacts(),
		{Trusted: true, Repository: "https://git.example.com/other", Generation: "gen-9"},
		{Trusted: true},
		{Repository: testRepo, Generation: "gen-2"},
	}
	for _, tier := range []ports.Tier{ports.TierManaged, ports.TierUser} {
		for _, requiresTrust := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s requiresTrusted=%v", tier, requiresTrust), func(t *testing.T) {
				e := newEnv(t, false)
				s := subj(tier)
				s.RequiresTrustedWorkspace = requiresTrust
				want := ports.Identity{ServerID: testServer, Tier: tier, Origin: testOrigin, Fingerprint: testFP, Security: testSec}
				for _, f := range facts {
					e.trust.set(f)
					dec, err := e.d.Decide(context.Background(), s)
					require.NoError(t, err)
					assert.Equal(t, want, dec.Identity, "facts %+v", f)
					assert.Equal(t, !requiresTrust || f.Trusted, dec.Allowed, "facts %+v", f)
				}
			})
		}
	}
}

func TestDecideFailsClosed(t *testing.T) {
	pathErr := fmt.Errorf("open %s/approvals.json: %w", testOrigin, ports.ErrCorrupt)
	tests := []struct {
		name        string
		subject     Subject
		approve     bool
		mismatched  bool
		trustErr    error
		listErr     error
		auditErr    error
		wantReason  string
		wantClass   refusal.Class
		wantIs      []error
		wantNoAudit bool
	}{
		{name: "store unavailable", subject: subj(ports.TierProject), listErr: ports.ErrUnavailable,
			wantReason: ReasonApprovalsUnavailable, wantClass: refusal.Transient, wantIs: []error{ports.ErrUnavailable}},
		{name: "store corrupt behind a path", subject: subj(ports.TierLocal), listErr: pathErr,
			wantReason: ReasonApprovalsUnavailable, wantClass: refusal.Internal, wantIs: []error{ports.ErrCorrupt}},
		{name: "store fails with a foreign error", subject: subj(ports.TierPlugin), listErr: errors.New("boom " + testSec),
			wantReason: ReasonApprovalsUnavailable, wantClass: refusal.Internal},
		{name: "store deadline", subject: subj(ports.TierPlugin), listErr: fmt.Errorf("wait: %w", context.DeadlineExceeded),
			wantReason: ReasonApprovalsUnavailable, wantClass: refusal.Transient, wantIs: []error{context.DeadlineExceeded}},
		{name: "trust transient refusal", subject: subj(ports.TierProject), approve: true,
			trustErr:   &refusal.Error{Class: refusal.Transient, Reason: "host_busy", Detail: testRepo},
			wantReason: ReasonWorkspaceFactsUnavailable, wantClass: refusal.Transient},
		{name: "trust internal refusal with trusted facts", subject: Subject{ServerID: testServer, Tier: ports.TierManaged, Origin: testOrigin, Fingerprint: testFP, Security: testSec, RequiresTrustedWorkspace: true},
			trustErr:   refusal.New(refusal.Internal, "host_bug", ""),
			wantReason: ReasonWorkspaceFactsUnavailable, wantClass: refusal.Internal},
		{name: "trust foreign error", subject: subj(ports.TierLocal), approve: true, trustErr: errors.New(testGen + " unreadable"),
			wantReason: ReasonWorkspaceFactsUnavailable, wantClass: refusal.Internal},
		{name: "audit fails on a host trusted allow", subject: subj(ports.TierManaged), auditErr: ports.ErrUnavailable,
			wantReason: ReasonAuditUnavailable, wantClass: refusal.Transient, wantIs: []error{ports.ErrUnavailable}, wantNoAudit: true},
		{name: "audit fails on an approved allow", subject: subj(ports.TierProject), approve: true, auditErr: errors.New("disk full " + testOrigin),
			wantReason: ReasonAuditUnavailable, wantClass: refusal.Internal, wantNoAudit: true},
		{name: "audit fails on an identity change", subject: subj(ports.TierProject), mismatched: true, auditErr: ports.ErrUnavailable,
			wantReason: ReasonAuditUnavailable, wantClass: refusal.Transient, wantNoAudit: true},
		{name: "audit and store fail", subject: subj(ports.TierProject), listErr: ports.ErrCorrupt, auditErr: ports.ErrUnavailable,
			wantReason: ReasonAuditUnavailable, wantClass: refusal.Transient,
			wantIs: []error{ports.ErrUnavailable, ports.ErrCorrupt, refusal.New(refusal.Internal, ReasonApprovalsUnavailable, "")}, wantNoAudit: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, false)
			e.trust.err, e.store.listErr, e.audit.err = tt.trustErr, tt.listErr, tt.auditErr
			id := IdentityOf(tt.subject, trustedFacts())
			if tt.approve {
				e.store.approvals = []ports.Approval{{Identity: id}}
			}
			if tt.mismatched {
				other := id
				other.Fingerprint = "old"
				e.store.approvals = []ports.Approval{{Identity: other}}
			}

			dec, err := e.d.Decide(context.Background(), tt.subject)
			assert.False(t, dec.Allowed)
			assert.Equal(t, tt.wantReason, dec.Reason)
			assert.Nil(t, dec.Mismatch)
			r := assertRefusal(t, err, tt.wantClass, tt.wantReason)
			assert.Equal(t, testServer, r.Server)
			for _, target := range tt.wantIs {
				assert.ErrorIs(t, err, target)
			}
			assertNoValues(t, err, "boom", "unreadable", "disk full", "host_busy", "approvals.json")
			if tt.wantNoAudit {
				assert.Empty(t, e.audit.all())
			} else {
				assert.Equal(t, []ports.AuditRecord{decideRecord(dec.Identity, false, tt.wantReason)}, e.audit.all())
			}
		})
	}
}
