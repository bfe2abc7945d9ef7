package composition

import (
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/ports"
)

// connectTarget returns the Target of the server named name in res (the
// resolution Evaluate decided on) and the materialization it was built
// from, for a server Evaluate found usable with fingerprint fp. It
// materializes the definition once more (a Target may hold secrets, which
// an Evaluation never keeps) but neither decodes the sources again nor
// repeats the checks Evaluate made (authentication, admission: the
// transport admits again before it spawns or dials). ok is false when the
// name has no definition, when it no longer materializes, or when what it
// materializes to now is not what was decided on (its fingerprint
// changed: a variable changed meanwhile), or when the managed policy
// refuses what it would run now (a secret variable, whose value the
// fingerprint leaves out, changed meanwhile).
func (h *Host) connectTarget(res definition.Resolution, name, fp string) (ports.Target, *definition.Materialized, bool) {
	s, found := res.Server(name)
	if !found || s.Def == nil {
		return ports.Target{}, nil, false
	}
	m, err := definition.Materialize(s.Def, h.lookup)
	if err != nil || definition.Fingerprint(m) != fp || res.PolicyVerdict(m) != "" {
		return ports.Target{}, nil, false
	}
	return targetOf(m, fp), m, true
}
