package definition

import (
	"cmp"
	"slices"
	"sort"
	"strings"

	"github.com/mcpward/mcpward/ports"
)

// State is what Resolve decided about one server name.
type State string

// The states of a resolved name.
const (
	// StateResolved: the name has one usable winning Definition.
	StateResolved State = "resolved"
	// StateUnresolved: the winning entry is malformed, or several entries
	// of the winning tier define the name; nothing lower is used instead.
	StateUnresolved State = "unresolved"
	// StateBlocked: the name would resolve from a tier below managed while
	// a managed source is unusable.
	StateBlocked State = "blocked"
	// StateDisabled: a permitted disable overlay names the winner.
	StateDisabled State = "disabled"
	// StateRefused: the winning Definition is refused by name
	// (Definition.Refusal).
	StateRefused State = "refused"
)

// The reason words Resolve puts in Server.Reason besides entry problem
// words (for StateUnresolved) and refusal words (for StateRefused).
const (
	// ReasonAmbiguousWithinTier: two or more entries of the winning tier
	// (different origins, or one origin handed twice) define the name.
	ReasonAmbiguousWithinTier = "ambiguous_within_tier"
	// ReasonManagedUnreadable: a managed source is unusable, so a name
	// from a lower tier cannot be told apart from one the managed policy
	// would have defined.
	ReasonManagedUnreadable = "managed_unreadable"
	// ReasonDisabled: a disable overlay disabled the name.
	ReasonDisabled = "disabled"
	// ReasonMalformedEntry: the winning entry has no Definition and no
	// problem word (a Document not built by Decode).
	ReasonMalformedEntry = "malformed_entry"
)

// ProblemUnknownTier: the Document's Tier is not one of ports.Tiers. Resolve
// ignores such a document entirely (its entries and its overlay), since
// it cannot rank it.
const ProblemUnknownTier ProblemKind = "unknown_tier"

// Provenance names where an entry or overlay came from.
type Provenance struct {
	Tier   ports.Tier
	Origin string
}

// Server is Resolve's decision about one server name.
type Server struct {
	// Name is the server id, as kept in Entry.Name.
	Name string
	// State is the decision.
	State State
	// Reason is "" for StateResolved, otherwise a stable word: the entry's
	// problem word (unresolved), ReasonAmbiguousWithinTier,
	// ReasonManagedUnreadable (blocked), the refusal word (refused) or
	// ReasonDisabled.
	Reason string
	// Def is the winning Definition (shared with the input Document, not
	// copied), nil when the winning entry is malformed or the name is
	// ambiguous. A blocked or disabled name keeps the Def it would have
	// had, so a host can show what was blocked or disabled.
	Def *Definition
	// Winner is the provenance of the winning entry. For an ambiguous name
	// it holds only the tier, and Contenders lists the origins.
	Winner Provenance
	// Contenders lists, sorted by origin, every entry of the winning tier
	// when the name is ambiguous within it; nil otherwise.
	Contenders []Provenance
	// Shadowed lists the entries of lower tiers for the same name, highest
	// tier first, then by origin.
	Shadowed []Provenance
	// DisabledBy is the highest-ranked overlay permitted to disable the
	// name, or nil. It is recorded whatever the State.
	DisabledBy *Provenance
	// Field is the winning malformed entry's Entry.Field ("" otherwise).
	Field string
	// PolicyPending is true when a managed policy applies and Def holds a
	// template in a field its matchers look at (command, args, env values,
	// url): Resolve cannot tell what it runs, so it left the policy
	// undecided. The host decides it once Def is materialized, with
	// Resolution.PolicyVerdict (or PolicyVerdictUnexpanded when it cannot
	// be): composition.Host does.
	PolicyPending bool
}

// Resolution is Resolve's result.
type Resolution struct {
	// Servers holds one Server per defined name, sorted by name.
	Servers []Server
	// Problems holds every source problem, in input order, including
	// ProblemUnknownTier for each document Resolve ignored.
	Problems []SourceProblem
	// DeniedTools are the managed policies' tool patterns (see
	// Policy.DeniedTools), merged from every managed document, sorted and
	// without duplicates; nil when none.
	DeniedTools []string
	// policies are the managed policies, for PolicyVerdict.
	policies []*Policy
}

// Server returns the Server named name and true, or the zero Server and
// false when no document defines name.
func (r Resolution) Server(name string) (Server, bool) {
	i := sort.Search(len(r.Servers), func(i int) bool { return r.Servers[i].Name >= name })
	if i < len(r.Servers) && r.Servers[i].Name == name {
		return r.Servers[i], true
	}
	return Server{}, false
}

// Resolve decides, for every name defined by docs, which one whole entry
// it resolves to and whether it may be used. It is deterministic and pure;
// the order of docs matters only for the order of Problems.
//
// Precedence: a name resolves to the one entry of the highest tier that
// defines it (ports.Tiers: managed, local, project, user, plugin). Entries
// are never field-merged. Plugins rank last, so a plugin cannot replace a
// user's server of the same name but can add names of its own.
//
//   - A malformed winner shadows the name: StateUnresolved with the entry's
//     problem word as Reason and its Field; a lower entry is never used.
//   - Two or more entries of the winning tier (two plugins, two managed
//     files, or the same origin handed twice) fail closed:
//     StateUnresolved, ReasonAmbiguousWithinTier.
//   - A winner refused by name is StateRefused with the refusal word.
//
// Managed fails closed: when any managed document has a source problem —
// unusable as a whole (unreadable, malformed document, root or
// mcpServers), or with an unreadable disable overlay, since a managed
// disable list we cannot read hides names exactly as an unreadable
// mcpServers would — every name whose winner is below managed is
// StateBlocked, ReasonManagedUnreadable, keeping the would-be Def and
// Winner. Names won by a managed entry (from a readable origin) are
// unaffected. A source problem of any other tier is informational: it is
// listed in Problems and the rest resolves normally. A document whose
// Problem makes it unusable as a whole contributes no entries; a document
// with ProblemMalformedOverlay contributes its entries but no overlay.
//
// Disable overlays (Document.Disabled) never change the winner. Who may
// disable what:
//   - a managed overlay disables any name;
//   - a local or user overlay (the person's own files) disables any name
//     whose winner is not managed;
//   - a project or plugin overlay (content someone else wrote) disables
//     only names whose winner is of its own tier.
//
// A permitted disable sets DisabledBy (the highest-ranked permitted
// overlay) and turns StateResolved or StateRefused into StateDisabled
// with ReasonDisabled; an unresolved or blocked name keeps its state. A
// disable of a name nobody defines is ignored.
//
// Managed policy (Document.Policy, read only from managed documents, so no
// lower tier can widen it) is matched against what runs, not against
// templates: a resolved, refused or disabled name whose Def has no
// template in a field a matcher looks at, and which matches an entry of
// any managed deny list, or, when managed allow lists are present, fails
// to match an entry of each of them (ServerMatcher.MatchesMaterialized),
// is StateRefused with ReasonPolicyDenied or ReasonPolicyNotAllowed,
// whatever its tier (managed entries included) and whatever an overlay
// said; it stays listed with its Def and DisabledBy. A Def with such a
// template is left PolicyPending for the host to decide on its
// materialization (Resolution.PolicyVerdict). The managed tool patterns are
// merged into Resolution.DeniedTools. A malformed policy is a problem of
// the managed source (ProblemMalformedPolicy) and blocks, as any other,
// every name won below managed.
//
// A document whose Tier is not in ports.Tiers is ignored entirely and
// reported as ProblemUnknownTier.
func Resolve(docs []Document) Resolution {
	type candidate struct {
		rank  int
		prov  Provenance
		entry *Entry
		seq   int
	}
	type overlay struct {
		rank  int
		prov  Provenance
		names []string
		seq   int
	}
	var (
		res           Resolution
		overlays      []overlay
		managedBroken bool
		seq           int
		policies      []*Policy
	)
	n := 0
	for di := range docs {
		n += len(docs[di].Entries)
	}
	cands := make([]candidate, 0, n)
	for di := range docs {
		d := &docs[di]
		rank, ok := resolveRank(d.Tier)
		if !ok {
			res.Problems = append(res.Problems, SourceProblem{Tier: d.Tier, Origin: d.Origin, Kind: ProblemUnknownTier})
			continue
		}
		prov := Provenance{Tier: d.Tier, Origin: d.Origin}
		if d.Problem != nil {
			p := *d.Problem
			p.Tier, p.Origin = d.Tier, d.Origin
			res.Problems = append(res.Problems, p)
			if d.Tier == ports.TierManaged {
				managedBroken = true
			}
			if p.Kind != ProblemMalformedOverlay && p.Kind != ProblemMalformedPolicy {
				continue
			}
		} else if len(d.Disabled) > 0 {
			overlays = append(overlays, overlay{rank: rank, prov: prov, names: d.Disabled, seq: di})
		}
		if d.Policy != nil && d.Tier == ports.TierManaged {
			policies = append(policies, d.Policy)
			res.DeniedTools = append(res.DeniedTools, d.Policy.DeniedTools...)
		}
		for ei := range d.Entries {
			cands = append(cands, candidate{rank: rank, prov: prov, entry: &d.Entries[ei], seq: seq})
			seq++
		}
	}

	// One sort puts every name's candidates together, names in byte order,
	// and each name's candidates highest tier first, then by origin, then
	// in input order (seq is unique, so the order is total).
	slices.SortFunc(cands, func(a, b candidate) int {
		if c := strings.Compare(a.entry.Name, b.entry.Name); c != 0 {
			return c
		}
		if a.rank != b.rank {
			return cmp.Compare(a.rank, b.rank)
		}
		if c := strings.Compare(a.prov.Origin, b.prov.Origin); c != 0 {
			return c
		}
		return cmp.Compare(a.seq, b.seq)
	})
	names := 0
	for i := range cands {
		if i == 0 || cands[i].entry.Name != cands[i-1].entry.Name {
			names++
		}
	}
	res.Servers = make([]Server, 0, names)
	for i := 0; i < len(cands); {
		name := cands[i].entry.Name
		j := i + 1
		for j < len(cands) && cands[j].entry.Name == name {
			j++
		}
		cands := cands[i:j] // this name's candidates, in precedence order
		i = j
		top := 1
		for top < len(cands) && cands[top].rank == cands[0].rank {
			top++
		}
		s := Server{Name: name}
		for _, c := range cands[top:] {
			s.Shadowed = append(s.Shadowed, c.prov)
		}
		switch w := cands[0]; {
		case top > 1:
			s.State, s.Reason = StateUnresolved, ReasonAmbiguousWithinTier
			s.Winner = Provenance{Tier: w.prov.Tier}
			for _, c := range cands[:top] {
				s.Contenders = append(s.Contenders, c.prov)
			}
		case w.entry.Def == nil:
			s.State, s.Reason = StateUnresolved, w.entry.Problem
			if s.Reason == "" {
				s.Reason = ReasonMalformedEntry
			}
			s.Winner, s.Field = w.prov, w.entry.Field
		case w.entry.Def.Refusal != "":
			s.State, s.Reason = StateRefused, w.entry.Def.Refusal
			s.Winner, s.Def = w.prov, w.entry.Def
		default:
			s.State = StateResolved
			s.Winner, s.Def = w.prov, w.entry.Def
		}
		if managedBroken && cands[0].rank > 0 {
			s.State, s.Reason = StateBlocked, ReasonManagedUnreadable
		}
		res.Servers = append(res.Servers, s)
	}

	sort.SliceStable(overlays, func(i, j int) bool {
		a, b := overlays[i], overlays[j]
		if a.rank != b.rank {
			return a.rank < b.rank
		}
		if a.prov.Origin != b.prov.Origin {
			return a.prov.Origin < b.prov.Origin
		}
		return a.seq < b.seq
	})
	for _, o := range overlays {
		for _, name := range o.names {
			i := sort.Search(len(res.Servers), func(i int) bool { return res.Servers[i].Name >= name })
			if i == len(res.Servers) || res.Servers[i].Name != name {
				continue
			}
			s := &res.Servers[i]
			if s.DisabledBy != nil || !resolveMayDisable(o.prov.Tier, s.Winner.Tier) {
				continue
			}
			by := o.prov
			s.DisabledBy = &by
			if s.State == StateResolved || s.State == StateRefused {
				s.State, s.Reason = StateDisabled, ReasonDisabled
			}
		}
	}
	if len(policies) > 0 {
		for i := range res.Servers {
			s := &res.Servers[i]
			switch s.State {
			case StateResolved, StateRefused, StateDisabled:
			default:
				continue
			}
			if policyTemplated(s.Def) {
				s.PolicyPending = true
				continue
			}
			d := s.Def
			if why := policyVerdict(policies, func(m ServerMatcher, allow bool) bool {
				return m.match(policyRun{name: d.Name, kind: d.Kind, command: d.Command, args: d.Args, env: d.Env, url: d.URL}, allow)
			}); why != "" {
				s.State, s.Reason = StateRefused, why
			}
		}
	}
	res.policies = policies
	if res.DeniedTools != nil {
		slices.Sort(res.DeniedTools)
		res.DeniedTools = slices.Compact(res.DeniedTools)
	}
	return res
}

// resolveRank returns t's index in ports.Tiers (0 is highest).
func resolveRank(t ports.Tier) (int, bool) {
	for i, x := range ports.Tiers {
		if x == t {
			return i, true
		}
	}
	return 0, false
}

// resolveMayDisable reports whether an overlay of tier overlay may disable
// a name whose winner is of tier winner.
func resolveMayDisable(overlay, winner ports.Tier) bool {
	switch overlay {
	case ports.TierManaged:
		return true
	case ports.TierLocal, ports.TierUser:
		return winner != ports.TierManaged
	default:
		return overlay == winner
	}
}
