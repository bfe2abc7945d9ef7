// Package activation decides whether a resolved definition may be used.
//
// It is transport-neutral and never sees configuration values: a caller
// describes a resolved definition as a Subject (its name, provenance,
// fingerprint and masked security identity) and a Decider answers with a
// Decision bound to an exact ports.Identity.
//
// The rules, in the order a Decider applies them:
//
//   - A Subject with an empty ServerID, Fingerprint or Security is denied
//     (ReasonInvalidSubject); one whose tier is not one of ports.Tiers is
//     denied (ReasonUnknownTier).
//   - RequiresTrustedWorkspace is deny-by-default on every tier: the
//     definition is allowed only when the host's WorkspaceTrust says the
//     workspace is trusted (ReasonWorkspaceUntrusted).
//   - The managed and user tiers are activated by the host's own trust
//     (ReasonHostTrustedTier); no approval is consulted.
//   - The local, project and plugin tiers need an approval whose Identity
//     equals the Subject's identity in every field: server id, tier, origin,
//     fingerprint, security identity, repository identity and workspace
//     generation. Any difference is a fresh decision, never a carry-over
//     (ReasonIdentityChanged, with the differing field names in
//     Decision.Mismatch). An unknown repository denies (ReasonRepositoryUnknown):
//     an approval cannot be bound to nothing.
//
// Nothing in a definition grants anything: approvals are created only by an
// explicit host call to Decider.Grant with a non-empty actor label, and a
// Subject has no field a definition could use to approve itself.
//
// Every decision, grant and revoke appends a secret-free ports.AuditRecord.
// Failures of the approval store, the workspace trust or the audit log fail
// closed and are returned as typed *refusal.Error values (package
// github.com/mcpward/mcpward/core/refusal) that carry the server id only.
package activation

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// Decision reasons. Each is a stable lower_snake_case word, used both in
// Decision.Reason and in the audit trail.
const (
	// ReasonHostTrustedTier: allowed; the managed and user tiers are
	// activated by the host's own trust.
	ReasonHostTrustedTier = "host_trusted_tier"
	// ReasonApproved: allowed; an approval matches the identity exactly.
	ReasonApproved = "approved"
	// ReasonInvalidSubject: denied; the Subject lacks a server id,
	// fingerprint or security identity.
	ReasonInvalidSubject = "invalid_subject"
	// ReasonUnknownTier: denied; the Subject's tier is none of ports.Tiers.
	ReasonUnknownTier = "unknown_tier"
	// ReasonWorkspaceUntrusted: denied; the definition requires a trusted
	// workspace and the host has not said the workspace is trusted.
	ReasonWorkspaceUntrusted = "workspace_untrusted"
	// ReasonRepositoryUnknown: denied; the tier needs an approval and the
	// host does not know the workspace's repository.
	ReasonRepositoryUnknown = "repository_unknown"
	// ReasonNotApproved: denied; no approval exists for the server id.
	ReasonNotApproved = "not_approved"
	// ReasonIdentityChanged: denied; approvals exist for the server id but
	// none matches the identity exactly (see Decision.Mismatch).
	ReasonIdentityChanged = "approval_identity_changed"
	// ReasonApprovalsUnavailable: denied; the approval store failed.
	ReasonApprovalsUnavailable = "approvals_unavailable"
	// ReasonWorkspaceFactsUnavailable: denied; the workspace trust failed.
	ReasonWorkspaceFactsUnavailable = "workspace_facts_unavailable"
	// ReasonAuditUnavailable: denied; the decision could not be recorded.
	ReasonAuditUnavailable = "audit_unavailable"

	// ReasonExplicitGrant is the audit reason of a grant.
	ReasonExplicitGrant = "explicit_grant"
	// ReasonExplicitRevoke is the audit reason of a revoke.
	ReasonExplicitRevoke = "explicit_revoke"
)

// Refusal reasons that only Grant, Revoke and RevokeAll return (besides the
// decision reasons above).
const (
	// ReasonApprovalNotNeeded: the tier is activated by the host's trust,
	// so there is nothing to grant or revoke.
	ReasonApprovalNotNeeded = "approval_not_needed"
	// ReasonApprovalNotFound: no approval has exactly this identity.
	ReasonApprovalNotFound = "approval_not_found"
	// ReasonActorRequired: the actor label is empty or blank.
	ReasonActorRequired = "actor_required"
	// ReasonInvalidActor: the actor label is longer than MaxActorLen bytes
	// or holds a control character.
	ReasonInvalidActor = "invalid_actor"
	// ReasonInvalidOptions: New was given an Options without a required port.
	ReasonInvalidOptions = "invalid_options"
)

// Audit outcomes (ports.AuditRecord.Outcome).
const (
	OutcomeAllowed = "allowed"
	OutcomeDenied  = "denied"
	OutcomeGranted = "granted"
	OutcomeRevoked = "revoked"
)

// Identity field names, as Decision.Mismatch reports them, in the order of
// the ports.Identity fields.
const (
	FieldServerID    = "server_id"
	FieldTier        = "tier"
	FieldOrigin      = "origin"
	FieldFingerprint = "fingerprint"
	FieldSecurity    = "security"
	FieldRepository  = "repository"
	FieldGeneration  = "generation"
)

// MaxActorLen is the longest actor label (in bytes) Grant, Revoke and
// RevokeAll accept.
const MaxActorLen = 128

// Subject describes one resolved definition to decide about. It holds no
// configuration value, and deliberately no field through which a definition
// could approve itself: approvals come only from Decider.Grant.
type Subject struct {
	// ServerID is the definition's name.
	ServerID string
	// Tier and Origin are the definition's provenance: the tier and the
	// host's label of the source it resolved from.
	Tier   ports.Tier
	Origin string
	// Fingerprint is the definition fingerprint.
	Fingerprint string
	// Security is the security identity: the activation endpoint with its
	// secret stretches already masked by its producer.
	Security string
	// RequiresTrustedWorkspace makes the decision deny unless the host's
	// WorkspaceTrust says the workspace is trusted, on every tier.
	RequiresTrustedWorkspace bool
}

// Decision is the answer of Decider.Decide.
type Decision struct {
	// Allowed is true only when the definition may be used.
	Allowed bool
	// Reason is one of the Reason* words.
	Reason string
	// Identity is the identity the decision is bound to.
	Identity ports.Identity
	// Mismatch names the identity fields (Field* words, in field order)
	// that differ from the closest stored approval; set only when Reason is
	// ReasonIdentityChanged. It holds names, never values.
	Mismatch []string
}

// IdentityOf returns the identity s is bound to under the workspace facts f.
// For the managed and user tiers Repository and Generation are "", so an
// approval-free decision for them never depends on the workspace; every
// other tier (an unknown one included) carries f.Repository and
// f.Generation. f.Trusted is not part of an identity.
func IdentityOf(s Subject, f ports.WorkspaceFacts) ports.Identity {
	id := ports.Identity{
		ServerID:    s.ServerID,
		Tier:        s.Tier,
		Origin:      s.Origin,
		Fingerprint: s.Fingerprint,
		Security:    s.Security,
	}
	if !hostTrusted(s.Tier) {
		id.Repository = f.Repository
		id.Generation = f.Generation
	}
	return id
}

// Options are the dependencies of a Decider.
type Options struct {
	// Approvals keeps approvals. Required.
	Approvals ports.ApprovalStore
	// Audit receives one record per decision, grant and revoke. Required.
	Audit ports.AuditLog
	// Trust supplies the workspace facts. Nil means the workspace is
	// untrusted and its repository unknown: every RequiresTrustedWorkspace
	// subject is denied, and so is every local, project and plugin subject
	// (ReasonRepositoryUnknown), while managed and user still activate.
	Trust ports.WorkspaceTrust
	// Now returns the current time for audit records and approvals; nil
	// means time.Now.
	Now func() time.Time
}

// Decider makes activation decisions and records grants and revokes.
//
// A Decider is safe for concurrent use by multiple goroutines. Decide never
// modifies the approval store. Grant, Revoke and RevokeAll of one Decider
// are serialized with each other, so a rollback never undoes another
// goroutine's grant through the same Decider; across Deciders and processes
// only the store's own guarantees apply.
type Decider struct {
	approvals ports.ApprovalStore
	audit     ports.AuditLog
	trust     ports.WorkspaceTrust
	now       func() time.Time

	mu sync.Mutex // serializes Grant, Revoke and RevokeAll
}

// New returns a Decider over o. It returns a *refusal.Error of Class Config
// and reason ReasonInvalidOptions when o.Approvals or o.Audit is nil.
func New(o Options) (*Decider, error) {
	if o.Approvals == nil {
		return nil, &refusal.Error{Class: refusal.Config, Reason: ReasonInvalidOptions, Detail: "approval store is required"}
	}
	if o.Audit == nil {
		return nil, &refusal.Error{Class: refusal.Config, Reason: ReasonInvalidOptions, Detail: "audit log is required"}
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	return &Decider{approvals: o.Approvals, audit: o.Audit, trust: o.Trust, now: now}, nil
}

// Decide decides whether s may be used, applying the package's rules, and
// appends one ports.AuditDecide record (Outcome OutcomeAllowed or
// OutcomeDenied, the decision's Reason, the decision's Identity, no actor).
//
// A denial is a Decision, not an error: the error is non-nil only when the
// Decider could not decide or record, and then Allowed is false as well
// (fail closed):
//
//   - the workspace trust failed: ReasonWorkspaceFactsUnavailable;
//   - the approval store failed: ReasonApprovalsUnavailable;
//   - the audit append failed: ReasonAuditUnavailable, whatever the decision
//     would have been (nothing is allowed unaudited), with Mismatch cleared.
//
// Each error is a *refusal.Error with that Reason, Class Transient when the
// failure may pass (ports.ErrUnavailable, a Transient refusal, a context
// error) and Internal otherwise; it wraps the store's sentinel (for example
// ports.ErrUnavailable) so errors.Is finds it, but never the raw error.
// The trust is consulted only when the tier needs an approval or s requires
// a trusted workspace.
func (d *Decider) Decide(ctx context.Context, s Subject) (Decision, error) {
	return d.decideRecorded(ctx, s, d.audit.Append)
}

// DecideDeferred decides as Decide does, with the same rules, record and
// errors, except that when the audit log is a ports.AuditQueue the record
// is enqueued (ports.AuditQueue.Enqueue) rather than made durable before
// it returns: a host that starts connecting on an allowed decision while
// the record's fsync runs. The caller must call Flush, and treat its
// failure as ReasonAuditUnavailable for every decision since the last
// Flush, before it reports a decision as final or hands out anything
// connected on it (a crash before Flush returns may lose the records).
// With any other audit log it is Decide.
func (d *Decider) DecideDeferred(ctx context.Context, s Subject) (Decision, error) {
	q, ok := d.audit.(ports.AuditQueue)
	if !ok {
		return d.Decide(ctx, s)
	}
	return d.decideRecorded(ctx, s, func(_ context.Context, r ports.AuditRecord) error { return q.Enqueue(r) })
}

// Flush returns once every record DecideDeferred enqueued before the call
// is durable: nil (at once when the audit log is not a ports.AuditQueue),
// or a *refusal.Error of Reason ReasonAuditUnavailable (Class Transient
// when the failure may pass) when a record could not be written or ctx
// ended first; it wraps the store's sentinel as Decide's errors do.
func (d *Decider) Flush(ctx context.Context) error {
	q, ok := d.audit.(ports.AuditQueue)
	if !ok {
		return nil
	}
	if err := q.Flush(ctx); err != nil {
		return failure(ReasonAuditUnavailable, "", "", err)
	}
	return nil
}

// decideRecorded decides and records the decision with record.
func (d *Decider) decideRecorded(ctx context.Context, s Subject, record func(context.Context, ports.AuditRecord) error) (Decision, error) {
	dec, err := d.decide(ctx, s)
	rec := ports.AuditRecord{
		Time:     d.now(),
		Action:   ports.AuditDecide,
		Identity: dec.Identity,
		Outcome:  OutcomeDenied,
		Reason:   dec.Reason,
	}
	if dec.Allowed {
		rec.Outcome = OutcomeAllowed
	}
	if aerr := record(ctx, rec); aerr != nil {
		failed := Decision{Reason: ReasonAuditUnavailable, Identity: dec.Identity}
		ferr := failure(ReasonAuditUnavailable, s.ServerID, "", aerr)
		if err != nil {
			return failed, errors.Join(ferr, err)
		}
		return failed, ferr
	}
	return dec, err
}

// Preview decides as Decide does, with the same rules and errors, but
// records nothing: for a host that only shows what a decision would be
// (a listing, a completion, a diagnosis) and connects nothing on it. A
// host must use Decide before it connects or hands out anything, so that
// every use stays audited.
func (d *Decider) Preview(ctx context.Context, s Subject) (Decision, error) {
	return d.decide(ctx, s)
}

func (d *Decider) decide(ctx context.Context, s Subject) (Decision, error) {
	id := IdentityOf(s, ports.WorkspaceFacts{})
	deny := func(reason string) Decision { return Decision{Reason: reason, Identity: id} }
	if !validSubject(s) {
		return deny(ReasonInvalidSubject), nil
	}
	if !knownTier(s.Tier) {
		return deny(ReasonUnknownTier), nil
	}
	var facts ports.WorkspaceFacts
	if s.RequiresTrustedWorkspace || !hostTrusted(s.Tier) {
		f, err := d.facts(ctx)
		if err != nil {
			return deny(ReasonWorkspaceFactsUnavailable), failure(ReasonWorkspaceFactsUnavailable, s.ServerID, "", err)
		}
		facts = f
		id = IdentityOf(s, facts)
	}
	if s.RequiresTrustedWorkspace && !facts.Trusted {
		return deny(ReasonWorkspaceUntrusted), nil
	}
	if hostTrusted(s.Tier) {
		return Decision{Allowed: true, Reason: ReasonHostTrustedTier, Identity: id}, nil
	}
	if facts.Repository == "" {
		return deny(ReasonRepositoryUnknown), nil
	}
	list, err := d.approvals.List(ctx, s.ServerID)
	if err != nil {
		return deny(ReasonApprovalsUnavailable), failure(ReasonApprovalsUnavailable, s.ServerID, "", err)
	}
	if len(list) == 0 {
		return deny(ReasonNotApproved), nil
	}
	var closest []string
	for i, a := range list {
		diff := mismatch(a.Identity, id)
		if len(diff) == 0 {
			return Decision{Allowed: true, Reason: ReasonApproved, Identity: id}, nil
		}
		// Fewest differing fields wins; among equals the newest (the
		// store lists oldest first).
		if i == 0 || len(diff) <= len(closest) {
			closest = diff
		}
	}
	dec := deny(ReasonIdentityChanged)
	dec.Mismatch = closest
	return dec, nil
}

// Grant records an approval of exactly s's current identity (IdentityOf s
// under the current workspace facts), granted now by actor, and appends one
// ports.AuditGrant record (OutcomeGranted, ReasonExplicitGrant, actor).
// Granting an identity that is already approved replaces that approval.
// Grant does not consult Trusted: an approval of a subject that requires a
// trusted workspace is still denied by Decide until the host trusts it.
//
// It returns a *refusal.Error, and changes nothing, when:
//
//   - actor is blank (ReasonActorRequired), too long or holds a control
//     character (ReasonInvalidActor): Class Config;
//   - s is invalid (ReasonInvalidSubject) or its tier unknown
//     (ReasonUnknownTier): Class Config;
//   - s's tier is managed or user (ReasonApprovalNotNeeded): Class Config;
//   - the repository is unknown (ReasonRepositoryUnknown): Class Refused;
//   - the trust or the store fails (ReasonWorkspaceFactsUnavailable,
//     ReasonApprovalsUnavailable): Class Transient or Internal, as for
//     Decide.
//
// When the audit append fails the grant is rolled back (the approval it
// replaced, if any, is restored; otherwise it is revoked) and a
// ReasonAuditUnavailable error is returned whose Detail says whether the
// rollback succeeded, so no grant stands unaudited unless the store failed
// too.
func (d *Decider) Grant(ctx context.Context, s Subject, actor string) (ports.Approval, error) {
	id, err := d.approvalIdentity(ctx, s, actor)
	if err != nil {
		return ports.Approval{}, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	existing, err := d.approvals.List(ctx, s.ServerID)
	if err != nil {
		return ports.Approval{}, failure(ReasonApprovalsUnavailable, s.ServerID, "", err)
	}
	var prev *ports.Approval
	for i := range existing {
		if existing[i].Identity == id {
			prev = &existing[i]
		}
	}
	a := ports.Approval{Identity: id, GrantedAt: d.now(), GrantedBy: actor}
	if err := d.approvals.Grant(ctx, a); err != nil {
		return ports.Approval{}, failure(ReasonApprovalsUnavailable, s.ServerID, "", err)
	}
	rec := ports.AuditRecord{
		Time:     d.now(),
		Action:   ports.AuditGrant,
		Identity: id,
		Outcome:  OutcomeGranted,
		Reason:   ReasonExplicitGrant,
		Actor:    actor,
	}
	if aerr := d.audit.Append(ctx, rec); aerr != nil {
		// Roll back even when ctx has ended: the grant must not stand.
		undo := context.WithoutCancel(ctx)
		var rerr error
		if prev != nil {
			rerr = d.approvals.Grant(undo, *prev)
		} else if rerr = d.approvals.Revoke(undo, id); errors.Is(rerr, ports.ErrNotFound) {
			rerr = nil
		}
		detail := "grant rolled back"
		if rerr != nil {
			detail = "grant not rolled back"
		}
		return ports.Approval{}, failure(ReasonAuditUnavailable, s.ServerID, detail, aerr)
	}
	return a, nil
}

// Revoke removes the approval of exactly s's current identity (IdentityOf s
// under the current workspace facts) and appends one ports.AuditRevoke
// record (OutcomeRevoked, ReasonExplicitRevoke, actor).
//
// It returns the refusals Grant returns for a bad actor, subject, tier,
// repository or a failing trust or store, and a *refusal.Error of Class
// Config and reason ReasonApprovalNotFound, wrapping ports.ErrNotFound, when
// no approval has exactly this identity.
//
// A revoke is never undone: when the audit append fails the approval stays
// revoked (an audit outage must not keep authority alive) and a
// ReasonAuditUnavailable error with Detail "revoke not audited" is returned.
func (d *Decider) Revoke(ctx context.Context, s Subject, actor string) error {
	id, err := d.approvalIdentity(ctx, s, actor)
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.revoke(ctx, id); err != nil {
		return err
	}
	return d.auditRevoke(ctx, id, actor)
}

// RevokeAll removes every approval the store lists for serverID, whatever
// its tier, origin or workspace, appending one ports.AuditRevoke record per
// approval removed, and returns how many it removed. It is what a CLI's
// "revoke NAME" uses. An approval that disappears meanwhile is not counted;
// an approval the store lists under another server id is left alone.
//
// It returns a Config refusal for a bad actor (as Grant) or an empty
// serverID (ReasonInvalidSubject). A store failure stops it and returns the
// count so far with a ReasonApprovalsUnavailable error. An audit failure
// does not stop it (removing authority is never blocked); the count is
// returned with a ReasonAuditUnavailable error, Detail "revoke not audited".
func (d *Decider) RevokeAll(ctx context.Context, serverID, actor string) (int, error) {
	if err := checkActor(actor, serverID); err != nil {
		return 0, err
	}
	if serverID == "" {
		return 0, refusal.New(refusal.Config, ReasonInvalidSubject, "")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	list, err := d.approvals.List(ctx, serverID)
	if err != nil {
		return 0, failure(ReasonApprovalsUnavailable, serverID, "", err)
	}
	n := 0
	var auditErr error
	for _, a := range list {
		if a.Identity.ServerID != serverID {
			continue
		}
		if err := d.revoke(ctx, a.Identity); err != nil {
			if errors.Is(err, ports.ErrNotFound) {
				continue
			}
			if auditErr != nil {
				return n, errors.Join(err, auditErr)
			}
			return n, err
		}
		n++
		if err := d.auditRevoke(ctx, a.Identity, actor); err != nil && auditErr == nil {
			auditErr = err
		}
	}
	return n, auditErr
}

// approvalIdentity checks a Grant or Revoke call and returns the identity it
// concerns.
func (d *Decider) approvalIdentity(ctx context.Context, s Subject, actor string) (ports.Identity, error) {
	if err := checkActor(actor, s.ServerID); err != nil {
		return ports.Identity{}, err
	}
	if !validSubject(s) {
		return ports.Identity{}, refusal.New(refusal.Config, ReasonInvalidSubject, s.ServerID)
	}
	if !knownTier(s.Tier) {
		return ports.Identity{}, refusal.New(refusal.Config, ReasonUnknownTier, s.ServerID)
	}
	if hostTrusted(s.Tier) {
		return ports.Identity{}, refusal.New(refusal.Config, ReasonApprovalNotNeeded, s.ServerID)
	}
	facts, err := d.facts(ctx)
	if err != nil {
		return ports.Identity{}, failure(ReasonWorkspaceFactsUnavailable, s.ServerID, "", err)
	}
	if facts.Repository == "" {
		return ports.Identity{}, refusal.New(refusal.Refused, ReasonRepositoryUnknown, s.ServerID)
	}
	return IdentityOf(s, facts), nil
}

// revoke removes the approval of exactly id from the store.
func (d *Decider) revoke(ctx context.Context, id ports.Identity) error {
	err := d.approvals.Revoke(ctx, id)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ports.ErrNotFound):
		return &wrapped{
			r:     refusal.New(refusal.Config, ReasonApprovalNotFound, id.ServerID),
			cause: ports.ErrNotFound,
		}
	default:
		return failure(ReasonApprovalsUnavailable, id.ServerID, "", err)
	}
}

func (d *Decider) auditRevoke(ctx context.Context, id ports.Identity, actor string) error {
	rec := ports.AuditRecord{
		Time:     d.now(),
		Action:   ports.AuditRevoke,
		Identity: id,
		Outcome:  OutcomeRevoked,
		Reason:   ReasonExplicitRevoke,
		Actor:    actor,
	}
	if err := d.audit.Append(ctx, rec); err != nil {
		return failure(ReasonAuditUnavailable, id.ServerID, "revoke not audited", err)
	}
	return nil
}

// facts returns the workspace facts; a nil trust is an untrusted workspace
// of unknown repository.
func (d *Decider) facts(ctx context.Context) (ports.WorkspaceFacts, error) {
	if d.trust == nil {
		return ports.WorkspaceFacts{}, nil
	}
	return d.trust.Facts(ctx)
}

// mismatch returns the names of the fields in which a and b differ, in
// field order.
func mismatch(a, b ports.Identity) []string {
	var diff []string
	add := func(differ bool, name string) {
		if differ {
			diff = append(diff, name)
		}
	}
	add(a.ServerID != b.ServerID, FieldServerID)
	add(a.Tier != b.Tier, FieldTier)
	add(a.Origin != b.Origin, FieldOrigin)
	add(a.Fingerprint != b.Fingerprint, FieldFingerprint)
	add(a.Security != b.Security, FieldSecurity)
	add(a.Repository != b.Repository, FieldRepository)
	add(a.Generation != b.Generation, FieldGeneration)
	return diff
}

func validSubject(s Subject) bool {
	return s.ServerID != "" && s.Fingerprint != "" && s.Security != ""
}

func knownTier(t ports.Tier) bool {
	switch t {
	case ports.TierManaged, ports.TierUser, ports.TierLocal, ports.TierProject, ports.TierPlugin:
		return true
	}
	return false
}

// hostTrusted reports whether t is activated by the host's own trust.
func hostTrusted(t ports.Tier) bool {
	return t == ports.TierManaged || t == ports.TierUser
}

func checkActor(actor, server string) error {
	if strings.TrimSpace(actor) == "" {
		return refusal.New(refusal.Config, ReasonActorRequired, server)
	}
	if len(actor) > MaxActorLen || strings.ContainsFunc(actor, unicode.IsControl) {
		return refusal.New(refusal.Config, ReasonInvalidActor, server)
	}
	return nil
}

// failure maps a port failure to a *refusal.Error with reason, keeping only
// the port's sentinel (never its raw error, whose text may hold a path) so
// errors.Is still finds it.
func failure(reason, server, detail string, err error) error {
	r := &refusal.Error{Class: refusal.Internal, Reason: reason, Server: server, Detail: detail}
	var cause error
	for _, s := range []error{ports.ErrUnavailable, ports.ErrCorrupt, ports.ErrNotFound, context.DeadlineExceeded, context.Canceled} {
		if errors.Is(err, s) {
			cause = s
			break
		}
	}
	switch {
	case cause == ports.ErrUnavailable, cause == context.DeadlineExceeded, cause == context.Canceled,
		refusal.ClassOf(err) == refusal.Transient:
		r.Class = refusal.Transient
	}
	if cause == nil {
		return r
	}
	return &wrapped{r: r, cause: cause}
}

// wrapped is a *refusal.Error that also wraps a fixed sentinel. Its text is
// the refusal's alone.
type wrapped struct {
	r     *refusal.Error
	cause error
}

func (w *wrapped) Error() string   { return w.r.Error() }
func (w *wrapped) Unwrap() []error { return []error{w.r, w.cause} }
