package ports

import "context"

// LaunchRequest is what a stdio definition asks to run. It is given to the
// ProcessAuthority before any environment value is read, any transport is
// constructed or anything is spawned.
type LaunchRequest struct {
	ServerID    string
	Tier        Tier
	Origin      string
	Fingerprint string
	// Command and Args are the materialized program and arguments.
	Command string
	Args    []string
	// Cwd is the definition's cwd, "" when absent.
	Cwd string
}

// ProcessGrant is the authority's answer: where a child may run and the
// baseline environment it gets. Nothing else from the parent's environment
// reaches the child.
type ProcessGrant struct {
	// AllowedRoot is an absolute directory; the child's cwd must lie inside
	// it (canonically), and an absent cwd means AllowedRoot itself.
	AllowedRoot string
	// BaselineEnv is the baseline environment: each key is set explicitly in
	// the child (an empty value stays present as empty). The definition's
	// own env is applied over it.
	BaselineEnv map[string]string
}

// ProcessAuthority is the host-owned authority over stdio launches.
// Definitions cannot grant execution authority; only this port can.
//
// Authorize is consulted before the launch and again immediately before
// spawn. Safe for concurrent use.
type ProcessAuthority interface {
	// Authorize grants the launch or returns a *refusal.Error of Class
	// Refused (Reason "process_refused" or a more specific word).
	Authorize(ctx context.Context, r LaunchRequest) (ProcessGrant, error)
}
