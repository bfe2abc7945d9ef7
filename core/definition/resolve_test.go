package definition_test

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/ports"
)

// The -update flag rewrites golden files. It is registered in init (which
// runs after every package-level variable of this test package) and only
// when no other test file of the package has registered it already.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite testdata/*.golden files")
	}
}

// resolveTestUpdating reports whether -update was given.
func resolveTestUpdating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// resolveTestGolden compares got with the golden file at path, rewriting
// the file instead under -update.
func resolveTestGolden(t *testing.T, path, got string) {
	t.Helper()
	if resolveTestUpdating() {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run with -update to create it")
	assert.Equal(t, string(want), got)
}

// resolveTestDoc decodes data as a source of the given tier and origin.
func resolveTestDoc(tier ports.Tier, origin, data string) definition.Document {
	return definition.Decode(definition.Source{Tier: tier, Origin: origin, Data: []byte(data)})
}

func resolveTestProv(tier ports.Tier, origin string) definition.Provenance {
	return definition.Provenance{Tier: tier, Origin: origin}
}

// resolveTestWant is what a test expects of one Server. def is the Command
// or URL of the expected Def ("" for a nil Def).
type resolveTestWant struct {
	state      definition.State
	reason     string
	winner     definition.Provenance
	contenders []definition.Provenance
	shadowed   []definition.Provenance
	disabledBy *definition.Provenance
	field      string
	def        string
}

func resolveTestCheck(t *testing.T, res definition.Resolution, want map[string]resolveTestWant) {
	t.Helper()
	var names []string
	for _, s := range res.Servers {
		names = append(names, s.Name)
	}
	var wantNames []string
	for n := range want {
		wantNames = append(wantNames, n)
	}
	assert.ElementsMatch(t, wantNames, names, "server names")
	assert.IsIncreasing(t, names, "servers sorted by name")
	for name, w := range want {
		s, ok := res.Server(name)
		if !assert.True(t, ok, name) {
			continue
		}
		assert.Equal(t, name, s.Name)
		assert.Equal(t, w.state, s.State, name)
		assert.Equal(t, w.reason, s.Reason, name)
		assert.Equal(t, w.winner, s.Winner, name)
		assert.Equal(t, w.contenders, s.Contenders, name)
		assert.Equal(t, w.shadowed, s.Shadowed, name)
		assert.Equal(t, w.disabledBy, s.DisabledBy, name)
		assert.Equal(t, w.field, s.Field, name)
		if w.def == "" {
			assert.Nil(t, s.Def, name)
			continue
		}
		if assert.NotNil(t, s.Def, name) {
			assert.Equal(t, w.def, s.Def.Command+s.Def.URL, name)
			assert.Equal(t, name, s.Def.Name)
			assert.Equal(t, w.winner.Tier, s.Def.Tier, name)
			assert.Equal(t, w.winner.Origin, s.Def.Origin, name)
		}
	}
}

const (
	rtManaged = ports.TierManaged
	rtLocal   = ports.TierLocal
	rtProject = ports.TierProject
	rtUser    = ports.TierUser
	rtPlugin  = ports.TierPlugin
)

func TestResolvePrecedence(t *testing.T) {
	var (
		mA = resolveTestProv(rtManaged, "/etc/a.json")
		mB = resolveTestProv(rtManaged, "/etc/b.json")
		lo = resolveTestProv(rtLocal, "~/.claude.json#repo")
		pr = resolveTestProv(rtProject, "repo/.mcp.json")
		us = resolveTestProv(rtUser, "~/.mcp.json")
		p1 = resolveTestProv(rtPlugin, "plugin:one")
		p2 = resolveTestProv(rtPlugin, "plugin:two")
	)
	doc := func(p definition.Provenance, data string) definition.Document {
		return resolveTestDoc(p.Tier, p.Origin, data)
	}
	tests := []struct {
		name string
		docs []definition.Document
		want map[string]resolveTestWant
	}{
		{
			name: "each tier outranks the next",
			docs: []definition.Document{
				doc(p1, `{"mcpServers":{"a":{"command":"p1"},"b":{"command":"p1"},"c":{"command":"p1"},"d":{"command":"p1"},"e":{"command":"p1"}}}`),
				doc(us, `{"mcpServers":{"a":{"command":"us"},"b":{"command":"us"},"c":{"command":"us"},"d":{"command":"us"}}}`),
				doc(pr, `{"mcpServers":{"a":{"command":"pr"},"b":{"command":"pr"},"c":{"command":"pr"}}}`),
				doc(lo, `{"mcpServers":{"a":{"command":"lo"},"b":{"command":"lo"}}}`),
				doc(mA, `{"mcpServers":{"a":{"command":"mA"}}}`),
			},
			want: map[string]resolveTestWant{
				"a": {state: definition.StateResolved, winner: mA, shadowed: []definition.Provenance{lo, pr, us, p1}, def: "mA"},
				"b": {state: definition.StateResolved, winner: lo, shadowed: []definition.Provenance{pr, us, p1}, def: "lo"},
				"c": {state: definition.StateResolved, winner: pr, shadowed: []definition.Provenance{us, p1}, def: "pr"},
				"d": {state: definition.StateResolved, winner: us, shadowed: []definition.Provenance{p1}, def: "us"},
				"e": {state: definition.StateResolved, winner: p1, def: "p1"},
			},
		},
		{
			name: "plugin cannot replace a user server but adds its own names",
			docs: []definition.Document{
				doc(p1, `{"mcpServers":{"github":{"url":"https://evil.example/mcp"},"weather":{"command":"weather"}}}`),
				doc(us, `{"mcpServers":{"github":{"url":"https://api.github.example/mcp"}}}`),
			},
			want: map[string]resolveTestWant{
				"github":  {state: definition.StateResolved, winner: us, shadowed: []definition.Provenance{p1}, def: "https://api.github.example/mcp"},
				"weather": {state: definition.StateResolved, winner: p1, def: "weather"},
			},
		},
		{
			name: "malformed managed entry shadows, never falls through",
			docs: []definition.Document{
				doc(mA, `{"mcpServers":{"a":{"command":"m","shell":true},"ok":{"command":"ok"}}}`),
				doc(us, `{"mcpServers":{"a":{"command":"u"},"u":{"command":"u"}}}`),
			},
			want: map[string]resolveTestWant{
				"a":  {state: definition.StateUnresolved, reason: definition.EntryUnknownField, field: "shell", winner: mA, shadowed: []definition.Provenance{us}},
				"ok": {state: definition.StateResolved, winner: mA, def: "ok"},
				"u":  {state: definition.StateResolved, winner: us, def: "u"},
			},
		},
		{
			name: "malformed project entry shadows user and plugin",
			docs: []definition.Document{
				doc(pr, `{"mcpServers":{"a":{"type":"http","URL":"https://x"}}}`),
				doc(us, `{"mcpServers":{"a":{"command":"u"}}}`),
				doc(p1, `{"mcpServers":{"a":{"command":"p"}}}`),
			},
			want: map[string]resolveTestWant{
				"a": {state: definition.StateUnresolved, reason: definition.EntryUnknownField, field: "URL", winner: pr, shadowed: []definition.Provenance{us, p1}},
			},
		},
		{
			name: "duplicate name in the winning document shadows",
			docs: []definition.Document{
				doc(us, `{"mcpServers":{"a":{"command":"u1"},"a":{"command":"u2"}}}`),
				doc(p1, `{"mcpServers":{"a":{"command":"p"}}}`),
			},
			want: map[string]resolveTestWant{
				"a": {state: definition.StateUnresolved, reason: definition.EntryDuplicateName, winner: us, shadowed: []definition.Provenance{p1}},
			},
		},
		{
			name: "refused winner stays listed and shadows",
			docs: []definition.Document{
				doc(us, `{"mcpServers":{"old":{"type":"sse","url":"https://old.example/sse"},"h":{"url":"u","headersHelper":"sh -c x"}}}`),
				doc(p1, `{"mcpServers":{"old":{"url":"https://new.example/mcp"}}}`),
			},
			want: map[string]resolveTestWant{
				"old": {state: definition.StateRefused, reason: definition.RefusalTransportSSE, winner: us, shadowed: []definition.Provenance{p1}, def: "https://old.example/sse"},
				"h":   {state: definition.StateRefused, reason: definition.RefusalHeadersHelperNotArgv, winner: us, def: "u"},
			},
		},
		{
			name: "two plugins defining one name are ambiguous",
			docs: []definition.Document{
				doc(p2, `{"mcpServers":{"x":{"command":"p2"},"two":{"command":"two"}}}`),
				doc(p1, `{"mcpServers":{"x":{"command":"p1"},"one":{"command":"one"}}}`),
			},
			want: map[string]resolveTestWant{
				"x":   {state: definition.StateUnresolved, reason: definition.ReasonAmbiguousWithinTier, winner: resolveTestProv(rtPlugin, ""), contenders: []definition.Provenance{p1, p2}},
				"one": {state: definition.StateResolved, winner: p1, def: "one"},
				"two": {state: definition.StateResolved, winner: p2, def: "two"},
			},
		},
		{
			name: "two managed files defining one name are ambiguous and shadow",
			docs: []definition.Document{
				doc(mA, `{"mcpServers":{"x":{"command":"a"}}}`),
				doc(mB, `{"mcpServers":{"x":{"command":"b"}}}`),
				doc(us, `{"mcpServers":{"x":{"command":"u"}}}`),
			},
			want: map[string]resolveTestWant{
				"x": {state: definition.StateUnresolved, reason: definition.ReasonAmbiguousWithinTier, winner: resolveTestProv(rtManaged, ""),
					contenders: []definition.Provenance{mA, mB}, shadowed: []definition.Provenance{us}},
			},
		},
		{
			name: "the same origin handed twice is ambiguous",
			docs: []definition.Document{
				doc(us, `{"mcpServers":{"x":{"command":"a"}}}`),
				doc(us, `{"mcpServers":{"x":{"command":"a"}}}`),
			},
			want: map[string]resolveTestWant{
				"x": {state: definition.StateUnresolved, reason: definition.ReasonAmbiguousWithinTier, winner: resolveTestProv(rtUser, ""),
					contenders: []definition.Provenance{us, us}},
			},
		},
		{
			name: "ambiguity below the winner does not matter",
			docs: []definition.Document{
				doc(p1, `{"mcpServers":{"x":{"command":"p1"}}}`),
				doc(p2, `{"mcpServers":{"x":{"command":"p2"}}}`),
				doc(us, `{"mcpServers":{"x":{"command":"u"}}}`),
			},
			want: map[string]resolveTestWant{
				"x": {state: definition.StateResolved, winner: us, shadowed: []definition.Provenance{p1, p2}, def: "u"},
			},
		},
		{
			name: "a malformed and a valid entry in one tier are still ambiguous",
			docs: []definition.Document{
				doc(p1, `{"mcpServers":{"x":{"command":"p1","bogus":1}}}`),
				doc(p2, `{"mcpServers":{"x":{"command":"p2"}}}`),
			},
			want: map[string]resolveTestWant{
				"x": {state: definition.StateUnresolved, reason: definition.ReasonAmbiguousWithinTier, winner: resolveTestProv(rtPlugin, ""),
					contenders: []definition.Provenance{p1, p2}},
			},
		},
		{
			name: "source problems outside managed are informational",
			docs: []definition.Document{
				doc(lo, `{"mcpServers":[]}`),
				doc(pr, `{"mcpServers":{`),
				resolveTestReadErr(us),
				doc(p1, `[]`),
				doc(p2, `{"mcpServers":{"x":{"command":"p2"}},"disabledMcpServers":"x"}`),
				doc(mA, `{"mcpServers":{"m":{"command":"m"}}}`),
			},
			want: map[string]resolveTestWant{
				"m": {state: definition.StateResolved, winner: mA, def: "m"},
				"x": {state: definition.StateResolved, winner: p2, def: "p2"},
			},
		},
		{
			name: "entries are never merged across tiers",
			docs: []definition.Document{
				doc(us, `{"mcpServers":{"a":{"command":"u","args":["--x"],"env":{"K":"v"},"requiresTrustedWorkspace":true}}}`),
				doc(lo, `{"mcpServers":{"a":{"command":"l"}}}`),
			},
			want: map[string]resolveTestWant{
				"a": {state: definition.StateResolved, winner: lo, shadowed: []definition.Provenance{us}, def: "l"},
			},
		},
		{
			name: "nothing defined",
			docs: []definition.Document{doc(us, `{"disabledMcpServers":["a"]}`), doc(pr, `{}`)},
			want: map[string]resolveTestWant{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := definition.Resolve(tt.docs)
			resolveTestCheck(t, res, tt.want)
			// Problems are every document's problem, in input order.
			var wantProblems []definition.SourceProblem
			for _, d := range tt.docs {
				if d.Problem != nil {
					wantProblems = append(wantProblems, *d.Problem)
				}
			}
			assert.Equal(t, wantProblems, res.Problems)
		})
	}
}

func TestResolveNeverMerges(t *testing.T) {
	docs := []definition.Document{
		resolveTestDoc(rtUser, "u", `{"mcpServers":{"a":{"command":"u","args":["--x"],"env":{"K":"v"},"cwd":"/w","requiresTrustedWorkspace":true}}}`),
		resolveTestDoc(rtLocal, "l", `{"mcpServers":{"a":{"command":"l"}}}`),
	}
	s, ok := definition.Resolve(docs).Server("a")
	require.True(t, ok)
	assert.Same(t, docs[1].Entries[0].Def, s.Def, "the winner is the local entry itself")
	assert.Equal(t, "l", s.Def.Command)
	assert.Nil(t, s.Def.Args)
	assert.Nil(t, s.Def.Env)
	assert.Empty(t, s.Def.Cwd)
	assert.False(t, s.Def.RequiresTrustedWorkspace)
}

func resolveTestReadErr(p definition.Provenance) definition.Document {
	return definition.Decode(definition.Source{Tier: p.Tier, Origin: p.Origin, ReadErr: errors.New("EACCES")})
}

func TestResolveManagedFailsClosed(t *testing.T) {
	const broken = "/etc/broken.json"
	var (
		bad = resolveTestProv(rtManaged, broken)
		mB  = resolveTestProv(rtManaged, "/etc/b.json")
		lo  = resolveTestProv(rtLocal, "~/.claude.json#repo")
		pr  = resolveTestProv(rtProject, "repo/.mcp.json")
		us  = resolveTestProv(rtUser, "~/.mcp.json")
		pl  = resolveTestProv(rtPlugin, "plugin:one")
	)
	ways := []struct {
		name string
		doc  definition.Document
		kind definition.ProblemKind
		own  bool // the broken document's own entry "own" still resolves
	}{
		{name: "unreadable", doc: resolveTestReadErr(bad), kind: definition.ProblemUnreadable},
		{name: "not json", doc: resolveTestDoc(rtManaged, broken, `{"mcpServers":{"own":{"command":"own"}}`), kind: definition.ProblemMalformedDocument},
		{name: "empty file", doc: resolveTestDoc(rtManaged, broken, ``), kind: definition.ProblemMalformedDocument},
		{name: "duplicate mcpServers", doc: resolveTestDoc(rtManaged, broken, `{"mcpServers":{"own":{"command":"own"}},"mcpServers":{}}`), kind: definition.ProblemMalformedDocument},
		{name: "root not object", doc: resolveTestDoc(rtManaged, broken, `[{"mcpServers":{}}]`), kind: definition.ProblemMalformedRoot},
		{name: "servers not object", doc: resolveTestDoc(rtManaged, broken, `{"mcpServers":[{"own":{"command":"own"}}]}`), kind: definition.ProblemMalformedServers},
		{name: "servers null", doc: resolveTestDoc(rtManaged, broken, `{"mcpServers":null}`), kind: definition.ProblemMalformedServers},
		{name: "overlay unreadable", doc: resolveTestDoc(rtManaged, broken, `{"mcpServers":{"own":{"command":"own"}},"disabledMcpServers":"u"}`),
			kind: definition.ProblemMalformedOverlay, own: true},
	}
	for _, w := range ways {
		t.Run(w.name, func(t *testing.T) {
			require.NotNil(t, w.doc.Problem)
			require.Equal(t, w.kind, w.doc.Problem.Kind)
			docs := []definition.Document{
				resolveTestDoc(pl.Tier, pl.Origin, `{"mcpServers":{"x":{"command":"x"},"badx":{"command":"x","shell":1}}}`),
				resolveTestDoc(us.Tier, us.Origin, `{"mcpServers":{"u":{"command":"u"},"m":{"command":"um"},"own":{"command":"uown"},"sse":{"type":"sse","url":"s"}},"disabledMcpServers":["u"]}`),
				w.doc,
				resolveTestDoc(pr.Tier, pr.Origin, `{"mcpServers":{"p":{"command":"p"}}}`),
				resolveTestDoc(lo.Tier, lo.Origin, `{"mcpServers":{"l":{"command":"l"}}}`),
				resolveTestDoc(mB.Tier, mB.Origin, `{"mcpServers":{"m":{"command":"m"},"mbad":{"url":1}}}`),
			}
			blocked := func(p definition.Provenance, def string) resolveTestWant {
				return resolveTestWant{state: definition.StateBlocked, reason: definition.ReasonManagedUnreadable, winner: p, def: def}
			}
			want := map[string]resolveTestWant{
				"m":    {state: definition.StateResolved, winner: mB, shadowed: []definition.Provenance{us}, def: "m"},
				"mbad": {state: definition.StateUnresolved, reason: definition.EntryInvalidField, field: "url", winner: mB},
				"l":    blocked(lo, "l"),
				"p":    blocked(pr, "p"),
				"x":    blocked(pl, "x"),
				"sse":  blocked(us, "s"),
				"badx": {state: definition.StateBlocked, reason: definition.ReasonManagedUnreadable, winner: pl, field: "shell"},
			}
			u := blocked(us, "u")
			u.disabledBy = &us // the user's own overlay is recorded, the state stays blocked
			want["u"] = u
			if w.own {
				want["own"] = resolveTestWant{state: definition.StateResolved, winner: bad, shadowed: []definition.Provenance{us}, def: "own"}
			} else {
				want["own"] = blocked(us, "uown")
			}
			res := definition.Resolve(docs)
			resolveTestCheck(t, res, want)
			assert.Equal(t, []definition.SourceProblem{{Tier: rtManaged, Origin: broken, Kind: w.kind}}, res.Problems)
		})
	}
	t.Run("readable managed blocks nothing", func(t *testing.T) {
		res := definition.Resolve([]definition.Document{
			resolveTestDoc(rtManaged, "/etc/a.json", `{"mcpServers":{"m":{"command":"m","shell":1}}}`),
			resolveTestDoc(rtManaged, "/etc/b.json", `{}`),
			resolveTestDoc(rtUser, "u", `{"mcpServers":{"u":{"command":"u"}}}`),
		})
		resolveTestCheck(t, res, map[string]resolveTestWant{
			"m": {state: definition.StateUnresolved, reason: definition.EntryUnknownField, field: "shell", winner: resolveTestProv(rtManaged, "/etc/a.json")},
			"u": {state: definition.StateResolved, winner: resolveTestProv(rtUser, "u"), def: "u"},
		})
		assert.Empty(t, res.Problems)
	})
	t.Run("no managed document blocks nothing", func(t *testing.T) {
		res := definition.Resolve([]definition.Document{resolveTestDoc(rtPlugin, "p", `{"mcpServers":{"x":{"command":"x"}}}`)})
		resolveTestCheck(t, res, map[string]resolveTestWant{
			"x": {state: definition.StateResolved, winner: resolveTestProv(rtPlugin, "p"), def: "x"},
		})
	})
	t.Run("a hand-built managed problem of an unknown kind also blocks", func(t *testing.T) {
		res := definition.Resolve([]definition.Document{
			{Tier: rtManaged, Origin: "m", Problem: &definition.SourceProblem{Tier: rtManaged, Origin: "m", Kind: "something_new"}},
			resolveTestDoc(rtUser, "u", `{"mcpServers":{"u":{"command":"u"}}}`),
		})
		resolveTestCheck(t, res, map[string]resolveTestWant{
			"u": {state: definition.StateBlocked, reason: definition.ReasonManagedUnreadable, winner: resolveTestProv(rtUser, "u"), def: "u"},
		})
	})
}

func TestResolveOverlayPermissions(t *testing.T) {
	// may[overlay][winner]: who may disable what, as the design states it.
	may := map[ports.Tier]map[ports.Tier]bool{
		rtManaged: {rtManaged: true, rtLocal: true, rtProject: true, rtUser: true, rtPlugin: true},
		rtLocal:   {rtManaged: false, rtLocal: true, rtProject: true, rtUser: true, rtPlugin: true},
		rtUser:    {rtManaged: false, rtLocal: true, rtProject: true, rtUser: true, rtPlugin: true},
		rtProject: {rtManaged: false, rtLocal: false, rtProject: true, rtUser: false, rtPlugin: false},
		rtPlugin:  {rtManaged: false, rtLocal: false, rtProject: false, rtUser: false, rtPlugin: true},
	}
	for _, ot := range ports.Tiers {
		for _, wt := range ports.Tiers {
			allowed := may[ot][wt]
			t.Run(fmt.Sprintf("%s overlay, %s winner", ot, wt), func(t *testing.T) {
				winner := resolveTestProv(wt, "winner")
				over := resolveTestProv(ot, "overlay")
				docs := []definition.Document{
					resolveTestDoc(ot, over.Origin, `{"disabledMcpServers":["s","nobody"]}`),
					resolveTestDoc(wt, winner.Origin, `{"mcpServers":{"s":{"command":"c"}}}`),
				}
				want := resolveTestWant{state: definition.StateResolved, winner: winner, def: "c"}
				if allowed {
					want.state, want.reason, want.disabledBy = definition.StateDisabled, definition.ReasonDisabled, &over
				}
				resolveTestCheck(t, definition.Resolve(docs), map[string]resolveTestWant{"s": want})
			})
		}
	}

	named := []struct {
		name    string
		overlay definition.Provenance
		winner  definition.Provenance
		allowed bool
	}{
		{"project cannot disable a user server", resolveTestProv(rtProject, "repo"), resolveTestProv(rtUser, "u"), false},
		{"project cannot disable a plugin server", resolveTestProv(rtProject, "repo"), resolveTestProv(rtPlugin, "p"), false},
		{"plugin cannot disable a user server", resolveTestProv(rtPlugin, "p"), resolveTestProv(rtUser, "u"), false},
		{"plugin cannot disable a project server", resolveTestProv(rtPlugin, "p"), resolveTestProv(rtProject, "repo"), false},
		{"user can disable a project server", resolveTestProv(rtUser, "u"), resolveTestProv(rtProject, "repo"), true},
		{"user can disable a plugin server", resolveTestProv(rtUser, "u"), resolveTestProv(rtPlugin, "p"), true},
		{"local can disable a project server", resolveTestProv(rtLocal, "l"), resolveTestProv(rtProject, "repo"), true},
		{"project can disable its own tier's server", resolveTestProv(rtProject, "repo/a"), resolveTestProv(rtProject, "repo/b"), true},
		{"plugin can disable a plugin server", resolveTestProv(rtPlugin, "p1"), resolveTestProv(rtPlugin, "p2"), true},
		{"user cannot disable a managed server", resolveTestProv(rtUser, "u"), resolveTestProv(rtManaged, "m"), false},
		{"local cannot disable a managed server", resolveTestProv(rtLocal, "l"), resolveTestProv(rtManaged, "m"), false},
		{"project cannot disable a managed server", resolveTestProv(rtProject, "repo"), resolveTestProv(rtManaged, "m"), false},
		{"plugin cannot disable a managed server", resolveTestProv(rtPlugin, "p"), resolveTestProv(rtManaged, "m"), false},
		{"managed can disable a managed server", resolveTestProv(rtManaged, "m2"), resolveTestProv(rtManaged, "m"), true},
	}
	for _, tt := range named {
		t.Run(tt.name, func(t *testing.T) {
			docs := []definition.Document{
				resolveTestDoc(tt.winner.Tier, tt.winner.Origin, `{"mcpServers":{"s":{"command":"c"}}}`),
				resolveTestDoc(tt.overlay.Tier, tt.overlay.Origin, `{"disabledMcpServers":["s"]}`),
			}
			s, ok := definition.Resolve(docs).Server("s")
			require.True(t, ok)
			assert.Same(t, docs[0].Entries[0].Def, s.Def, "an overlay never changes the winner")
			assert.Equal(t, tt.winner, s.Winner)
			if tt.allowed {
				assert.Equal(t, definition.StateDisabled, s.State)
				assert.Equal(t, definition.ReasonDisabled, s.Reason)
				assert.Equal(t, &tt.overlay, s.DisabledBy)
			} else {
				assert.Equal(t, definition.StateResolved, s.State)
				assert.Empty(t, s.Reason)
				assert.Nil(t, s.DisabledBy)
			}
		})
	}
}

func TestResolveOverlays(t *testing.T) {
	us := resolveTestProv(rtUser, "~/.mcp.json")
	mA := resolveTestProv(rtManaged, "/etc/a.json")
	lo := resolveTestProv(rtLocal, "local")
	pr := resolveTestProv(rtProject, "repo")
	tests := []struct {
		name string
		docs []definition.Document
		want map[string]resolveTestWant
	}{
		{
			name: "refused winner is disabled, keeping Def",
			docs: []definition.Document{
				resolveTestDoc(us.Tier, us.Origin, `{"mcpServers":{"s":{"type":"ws","url":"wss://x"}},"disabledMcpServers":["s"]}`),
			},
			want: map[string]resolveTestWant{
				"s": {state: definition.StateDisabled, reason: definition.ReasonDisabled, winner: us, disabledBy: &us, def: "wss://x"},
			},
		},
		{
			name: "unresolved stays unresolved, disable recorded",
			docs: []definition.Document{
				resolveTestDoc(us.Tier, us.Origin, `{"mcpServers":{"s":{"command":"c","x":1}},"disabledMcpServers":["s"]}`),
			},
			want: map[string]resolveTestWant{
				"s": {state: definition.StateUnresolved, reason: definition.EntryUnknownField, field: "x", winner: us, disabledBy: &us},
			},
		},
		{
			name: "ambiguous stays ambiguous, disable by a permitted tier recorded",
			docs: []definition.Document{
				resolveTestDoc(rtPlugin, "a", `{"mcpServers":{"s":{"command":"a"}}}`),
				resolveTestDoc(rtPlugin, "b", `{"mcpServers":{"s":{"command":"b"}}}`),
				resolveTestDoc(us.Tier, us.Origin, `{"disabledMcpServers":["s"]}`),
			},
			want: map[string]resolveTestWant{
				"s": {state: definition.StateUnresolved, reason: definition.ReasonAmbiguousWithinTier, winner: resolveTestProv(rtPlugin, ""),
					contenders: []definition.Provenance{resolveTestProv(rtPlugin, "a"), resolveTestProv(rtPlugin, "b")}, disabledBy: &us},
			},
		},
		{
			name: "highest-ranked permitted overlay is recorded whatever the input order",
			docs: []definition.Document{
				resolveTestDoc(us.Tier, us.Origin, `{"mcpServers":{"s":{"command":"c"}},"disabledMcpServers":["s"]}`),
				resolveTestDoc(pr.Tier, pr.Origin, `{"disabledMcpServers":["s"]}`),
				resolveTestDoc(lo.Tier, lo.Origin, `{"disabledMcpServers":["s"]}`),
				resolveTestDoc(mA.Tier, mA.Origin, `{"disabledMcpServers":["s"]}`),
			},
			want: map[string]resolveTestWant{
				"s": {state: definition.StateDisabled, reason: definition.ReasonDisabled, winner: us, disabledBy: &mA, def: "c"},
			},
		},
		{
			name: "an unpermitted higher overlay does not hide a permitted lower one",
			docs: []definition.Document{
				resolveTestDoc(rtPlugin, "p", `{"mcpServers":{"s":{"command":"c"}}}`),
				resolveTestDoc(pr.Tier, pr.Origin, `{"disabledMcpServers":["s"]}`),
				resolveTestDoc(us.Tier, us.Origin, `{"disabledMcpServers":["s"]}`),
			},
			want: map[string]resolveTestWant{
				"s": {state: definition.StateDisabled, reason: definition.ReasonDisabled, winner: resolveTestProv(rtPlugin, "p"), disabledBy: &us, def: "c"},
			},
		},
		{
			name: "disable of a shadowed tier's server disables the name only when permitted for the winner",
			docs: []definition.Document{
				resolveTestDoc(pr.Tier, pr.Origin, `{"mcpServers":{"s":{"command":"p"}}}`),
				resolveTestDoc(us.Tier, us.Origin, `{"mcpServers":{"s":{"command":"u"}}}`),
				resolveTestDoc(rtPlugin, "pl", `{"mcpServers":{"s":{"command":"x"}},"disabledMcpServers":["s"]}`),
			},
			want: map[string]resolveTestWant{
				"s": {state: definition.StateResolved, winner: pr, shadowed: []definition.Provenance{us, resolveTestProv(rtPlugin, "pl")}, def: "p"},
			},
		},
		{
			name: "disable of a name nobody defines is ignored",
			docs: []definition.Document{
				resolveTestDoc(mA.Tier, mA.Origin, `{"disabledMcpServers":["ghost"]}`),
				resolveTestDoc(us.Tier, us.Origin, `{"mcpServers":{"s":{"command":"c"}},"disabledMcpServers":["ghost2"]}`),
			},
			want: map[string]resolveTestWant{
				"s": {state: definition.StateResolved, winner: us, def: "c"},
			},
		},
		{
			name: "a disable names exactly, never by case",
			docs: []definition.Document{
				resolveTestDoc(us.Tier, us.Origin, `{"mcpServers":{"GitHub":{"command":"c"}},"disabledMcpServers":["github"]}`),
			},
			want: map[string]resolveTestWant{
				"GitHub": {state: definition.StateResolved, winner: us, def: "c"},
			},
		},
		{
			name: "an invalid name can be disabled in its kept form",
			docs: []definition.Document{
				resolveTestDoc(us.Tier, us.Origin, `{"mcpServers":{"a b":{"command":"c"}},"disabledMcpServers":["a b"]}`),
			},
			want: map[string]resolveTestWant{
				`"a b"`: {state: definition.StateUnresolved, reason: definition.EntryInvalidName, winner: us, disabledBy: &us},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resolveTestCheck(t, definition.Resolve(tt.docs), tt.want)
		})
	}
}

// TestResolveHandBuiltDocuments covers Documents that Decode never
// produces: Resolve must still fail closed on them.
func TestResolveHandBuiltDocuments(t *testing.T) {
	def := &definition.Definition{Name: "s", Tier: rtUser, Origin: "u", Kind: definition.KindStdio, Command: "c"}
	t.Run("entries of a wholly unusable document are ignored", func(t *testing.T) {
		res := definition.Resolve([]definition.Document{{
			Tier: rtUser, Origin: "u",
			Problem:  &definition.SourceProblem{Tier: rtUser, Origin: "u", Kind: definition.ProblemMalformedServers},
			Entries:  []definition.Entry{{Name: "s", Def: def}},
			Disabled: []string{"s"},
		}})
		assert.Empty(t, res.Servers)
		assert.Len(t, res.Problems, 1)
	})
	t.Run("the overlay of a document with a malformed overlay is ignored", func(t *testing.T) {
		res := definition.Resolve([]definition.Document{{
			Tier: rtUser, Origin: "u",
			Problem:  &definition.SourceProblem{Tier: rtUser, Origin: "u", Kind: definition.ProblemMalformedOverlay},
			Entries:  []definition.Entry{{Name: "s", Def: def}},
			Disabled: []string{"s"},
		}})
		resolveTestCheck(t, res, map[string]resolveTestWant{
			"s": {state: definition.StateResolved, winner: resolveTestProv(rtUser, "u"), def: "c"},
		})
	})
	t.Run("an entry with neither Def nor Problem is malformed", func(t *testing.T) {
		res := definition.Resolve([]definition.Document{{Tier: rtUser, Origin: "u", Entries: []definition.Entry{{Name: "s"}}}})
		resolveTestCheck(t, res, map[string]resolveTestWant{
			"s": {state: definition.StateUnresolved, reason: definition.ReasonMalformedEntry, winner: resolveTestProv(rtUser, "u")},
		})
	})
	t.Run("a problem's provenance is the document's", func(t *testing.T) {
		res := definition.Resolve([]definition.Document{{Tier: rtUser, Origin: "u",
			Problem: &definition.SourceProblem{Tier: rtManaged, Origin: "lie", Kind: definition.ProblemUnreadable}}})
		assert.Equal(t, []definition.SourceProblem{{Tier: rtUser, Origin: "u", Kind: definition.ProblemUnreadable}}, res.Problems)
	})
}

func TestResolveUnknownTier(t *testing.T) {
	docs := []definition.Document{
		resolveTestDoc(rtUser, "u1", `{"mcpServers":{`),
		resolveTestDoc("enterprise", "/etc/e.json", `{"mcpServers":{"s":{"command":"e"},"e":{"command":"e"}},"disabledMcpServers":["u"]}`),
		resolveTestDoc("", "nowhere", `{"mcpServers":[]}`),
		resolveTestDoc("Managed", "/etc/m.json", `{"mcpServers":1}`),
		resolveTestDoc(rtUser, "u2", `{"mcpServers":{"s":{"command":"u"},"u":{"command":"u"}}}`),
	}
	res := definition.Resolve(docs)
	resolveTestCheck(t, res, map[string]resolveTestWant{
		"s": {state: definition.StateResolved, winner: resolveTestProv(rtUser, "u2"), def: "u"},
		"u": {state: definition.StateResolved, winner: resolveTestProv(rtUser, "u2"), def: "u"},
	})
	assert.Equal(t, []definition.SourceProblem{
		{Tier: rtUser, Origin: "u1", Kind: definition.ProblemMalformedDocument},
		{Tier: "enterprise", Origin: "/etc/e.json", Kind: definition.ProblemUnknownTier},
		{Tier: "", Origin: "nowhere", Kind: definition.ProblemUnknownTier},
		{Tier: "Managed", Origin: "/etc/m.json", Kind: definition.ProblemUnknownTier},
	}, res.Problems, "an unknown tier is never taken for managed, even when broken")
}

func TestResolveServerLookup(t *testing.T) {
	res := definition.Resolve([]definition.Document{
		resolveTestDoc(rtUser, "u", `{"mcpServers":{"b":{"command":"b"},"a":{"command":"a"},"c":{"command":"c"}}}`),
	})
	for _, n := range []string{"a", "b", "c"} {
		s, ok := res.Server(n)
		assert.True(t, ok, n)
		assert.Equal(t, n, s.Name)
	}
	for _, n := range []string{"", "A", "bb", "d", "0"} {
		s, ok := res.Server(n)
		assert.False(t, ok, n)
		assert.Equal(t, definition.Server{}, s)
	}
	_, ok := definition.Resolution{}.Server("a")
	assert.False(t, ok)
}

// TestResolveOrderIndependent checks that every permutation of the input
// yields the same Servers (only Problems follow the input order).
func TestResolveOrderIndependent(t *testing.T) {
	docs := resolveTestScenario(t, false)
	want := definition.Resolve(docs).Servers
	perm := make([]definition.Document, len(docs))
	for rot := range docs {
		for i := range docs {
			perm[i] = docs[(i+rot)%len(docs)]
		}
		assert.Equal(t, want, definition.Resolve(perm).Servers, "rotation %d", rot)
		for i, j := 0, len(perm)-1; i < j; i, j = i+1, j-1 {
			perm[i], perm[j] = perm[j], perm[i]
		}
		assert.Equal(t, want, definition.Resolve(perm).Servers, "reversed rotation %d", rot)
	}
}

// resolveTestScenario loads the realistic five-tier scenario of
// testdata/resolve_five_tiers; with managedBroken the managed file is
// replaced by an unreadable source.
func resolveTestScenario(t *testing.T, managedBroken bool) []definition.Document {
	t.Helper()
	sources := []struct {
		tier   ports.Tier
		origin string
		file   string
	}{
		{rtManaged, "/etc/claude-code/managed-mcp.json", "managed.json"},
		{rtLocal, "~/.claude.json#/projects/acme-web", "local.json"},
		{rtProject, "acme-web/.mcp.json", "project.json"},
		{rtUser, "~/.mcp.json", "user.json"},
		{rtUser, "~/.config/mcp/extra.json", "user_extra.json"},
		{rtPlugin, "plugin:weather@1.2.0", "plugin_weather.json"},
		{rtPlugin, "plugin:maps@0.3.1", "plugin_maps.json"},
		{"enterprise", "/opt/enterprise.json", "managed.json"},
	}
	var docs []definition.Document
	for _, s := range sources {
		src := definition.Source{Tier: s.tier, Origin: s.origin}
		if managedBroken && s.tier == rtManaged {
			src.ReadErr = errors.New("open: permission denied")
		} else {
			data, err := os.ReadFile(filepath.Join("testdata", "resolve_five_tiers", s.file))
			require.NoError(t, err)
			src.Data = data
		}
		docs = append(docs, definition.Decode(src))
	}
	return docs
}

func TestResolveGolden(t *testing.T) {
	for _, tt := range []struct {
		name          string
		managedBroken bool
	}{
		{"resolve_five_tiers", false},
		{"resolve_five_tiers_managed_unreadable", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := resolveTestRender(definition.Resolve(resolveTestScenario(t, tt.managedBroken)))
			assert.NotContains(t, got, "CANARY", "a document value reached the rendering")
			resolveTestGolden(t, filepath.Join("testdata", tt.name+".golden"), got)
		})
	}
}

// resolveTestRender renders a Resolution without any document value: names,
// states, reasons, provenance, kinds and field names only.
func resolveTestRender(res definition.Resolution) string {
	prov := func(p definition.Provenance) string { return fmt.Sprintf("%s:%s", p.Tier, p.Origin) }
	var b strings.Builder
	for _, s := range res.Servers {
		fmt.Fprintf(&b, "server %s\n  state=%s reason=%q winner=%s", s.Name, s.State, s.Reason, prov(s.Winner))
		if s.Def != nil {
			fmt.Fprintf(&b, " kind=%s", s.Def.Kind)
		}
		if s.Field != "" {
			fmt.Fprintf(&b, " field=%s", s.Field)
		}
		b.WriteByte('\n')
		for _, p := range s.Contenders {
			fmt.Fprintf(&b, "  contender %s\n", prov(p))
		}
		for _, p := range s.Shadowed {
			fmt.Fprintf(&b, "  shadows %s\n", prov(p))
		}
		if s.DisabledBy != nil {
			fmt.Fprintf(&b, "  disabled by %s\n", prov(*s.DisabledBy))
		}
	}
	for _, p := range res.Problems {
		fmt.Fprintf(&b, "problem %s %s:%s\n", p.Kind, p.Tier, p.Origin)
	}
	return b.String()
}
